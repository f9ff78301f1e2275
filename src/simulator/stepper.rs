//! One instruction fetch or data access: through the caches, its misses
//! counted in the executing instruction's self cost and its context's cost
//! (and its Ir, Dr or Dw too, unless the caller counts those per run).
//!
//! A [`Stepper`] borrows everything a step touches once. A run of a known
//! block walks all its instructions and accesses with one stepper over the
//! hierarchy picked once; single events build one per step.

use crate::attribution::backdate::Backdate;
use crate::cache::{ByteMask, CacheAccess, Hierarchy, L1Kind, Outcome, Slot};
use crate::cost::{EventKind, ImmediateCost};
use crate::program::InstrId;
use crate::trace::Access;

use super::charges::{Charger, Sink};
use super::lanes::lane_cost;

pub(super) struct Stepper<'a, B: Backdate, C> {
    caches: &'a mut C,
    sink: Sink<'a, B>,
    context_cost: &'a mut ImmediateCost,
}

impl<'a, B: Backdate, C: CacheAccess<B::Line>> Stepper<'a, B, C> {
    /// A stepper charging lines loaded to `instr` until told otherwise.
    #[inline(always)]
    pub fn new(
        caches: &'a mut C,
        charger: Charger<'a, B>,
        cursor: &'a mut B::Cursor,
        context_cost: &'a mut ImmediateCost,
        instr: InstrId,
    ) -> Self {
        Stepper {
            caches,
            sink: Sink {
                charger,
                instr,
                cursor,
            },
            context_cost,
        }
    }

    /// Counts `count` events of `kind` for `instr` and the context.
    #[inline(always)]
    pub fn count(&mut self, instr: InstrId, kind: EventKind, count: u64) {
        self.count_self(instr, kind, count);
        self.count_in_context(kind, count);
    }

    /// Counts `count` events of `kind` for `instr` only; the caller adds
    /// them to the context.
    #[inline(always)]
    pub fn count_self(&mut self, instr: InstrId, kind: EventKind, count: u64) {
        self.sink.charger.charges.self_cost[instr.0 as usize][kind] += count;
    }

    /// Counts `count` events of `kind` in the context only; the caller adds
    /// them to self costs later.
    #[inline(always)]
    pub fn count_in_context(&mut self, kind: EventKind, count: u64) {
        self.context_cost[kind] += count;
    }

    /// Fetches an instruction whose costs go to `instr`, executed at time
    /// `now` (its count is the caller's); its data accesses follow.
    #[inline(always)]
    pub fn fetch(&mut self, instr: InstrId, addr: u64, len: u32, now: u64) {
        self.sink.instr = instr;
        self.sink.charger.now = now;
        let outcome = self.caches.access(L1Kind::Instr, addr, len, &mut self.sink);
        self.count_misses(instr, outcome, EventKind::I1mr, EventKind::ILmr);
    }

    /// A data access of instruction `instr` at time `now`, counted.
    #[inline(always)]
    pub fn data(&mut self, instr: InstrId, access: Access, addr: u64, size: u32, now: u64) {
        self.access(instr, access, addr, size, now);
        self.count(instr, count_kind(access), 1);
    }

    /// A data access of instruction `instr` at time `now`; only its misses
    /// are counted here, its Dr or Dw is the caller's.
    #[inline(always)]
    pub fn access(&mut self, instr: InstrId, access: Access, addr: u64, size: u32, now: u64) {
        self.sink.instr = instr;
        self.sink.charger.now = now;
        let outcome = self.caches.access(L1Kind::Data, addr, size, &mut self.sink);
        // Checked here as well as in `count_misses`, so that a hit does not
        // pick the miss kinds: without it, 3 to 4% more host instructions.
        if outcome.l1_miss {
            let (l1, ll) = match access {
                Access::Read => (EventKind::D1mr, EventKind::DLmr),
                Access::Write | Access::Modify => (EventKind::D1mw, EventKind::DLmw),
            };
            self.count_misses(instr, outcome, l1, ll);
        }
    }

    /// Counts what `outcome` missed, as `l1` and `ll`, for `instr` and the
    /// context.
    #[inline(always)]
    fn count_misses(&mut self, instr: InstrId, outcome: Outcome, l1: EventKind, ll: EventKind) {
        if outcome.l1_miss {
            let self_cost = &mut self.sink.charger.charges.self_cost[instr.0 as usize];
            self_cost[l1] += 1;
            self_cost[ll] += u64::from(outcome.ll_miss);
            self.context_cost[l1] += 1;
            self.context_cost[ll] += u64::from(outcome.ll_miss);
            if outcome.lane_misses != 0 {
                self.count_lane_misses(instr, outcome.lane_misses, ll);
            }
        }
    }

    /// Counts the LL misses of the lanes in `lanes`, one bit each, as `ll`
    /// for `instr` and the context.
    #[cold]
    fn count_lane_misses(&mut self, instr: InstrId, mut lanes: u32, ll: EventKind) {
        while lanes != 0 {
            let lane = lanes.trailing_zeros() as usize;
            lanes &= lanes - 1;
            let charges = &mut *self.sink.charger.charges;
            lane_cost(&mut charges.lane_costs, lane, instr)[ll] += 1;
            charges.backdate.miss(lane, self.sink.cursor, ll);
        }
    }
}

impl<B: Backdate, M: ByteMask> Stepper<'_, B, Hierarchy<B::Line, M>> {
    /// Fetches an instruction within one I1 line, bytes `offset .. offset +
    /// len` of line `line`, whose costs go to `instr`, executed at time
    /// `now` (its count is the caller's).
    #[inline(always)]
    pub fn fetch_line(&mut self, instr: InstrId, line: u64, offset: u32, len: u32, now: u64) {
        self.sink.instr = instr;
        self.sink.charger.now = now;
        let outcome = self.caches.fetch_line(line, offset, len, &mut self.sink);
        self.count_misses(instr, outcome, EventKind::I1mr, EventKind::ILmr);
    }

    /// Fetches an instruction from byte `offset` of I1 line `line` into the
    /// first `second` bytes of the next, whose costs go to `instr`,
    /// executed at time `now` (its count is the caller's).
    #[inline(always)]
    pub fn fetch_two_lines(
        &mut self,
        instr: InstrId,
        line: u64,
        offset: u32,
        second: u32,
        now: u64,
    ) {
        self.sink.instr = instr;
        self.sink.charger.now = now;
        let outcome = self
            .caches
            .fetch_two_lines(line, offset, second, &mut self.sink);
        self.count_misses(instr, outcome, EventKind::I1mr, EventKind::ILmr);
    }

    /// Adds `fetches` fetches of bytes `offset .. offset + len` of the I1
    /// line in `slot`, which they hit (see [`Hierarchy::fetch_resident`]).
    #[inline(always)]
    pub fn fetch_resident(&mut self, slot: Slot, fetches: u64, offset: u32, len: u32) {
        self.caches.fetch_resident(slot, fetches, offset, len);
    }

    /// Fetches `count` instructions, each continuing the I1 line the
    /// previous fetch used (see [`Hierarchy::fetch_again`]): they hit.
    #[inline(always)]
    pub fn fetch_again(&mut self, line_end: u16, count: u16) {
        self.caches.fetch_again(line_end, count);
    }
}

/// The counter of a data access in self costs: Dr or Dw.
#[inline(always)]
pub fn count_kind(access: Access) -> EventKind {
    match access {
        Access::Read => EventKind::Dr,
        Access::Write | Access::Modify => EventKind::Dw,
    }
}
