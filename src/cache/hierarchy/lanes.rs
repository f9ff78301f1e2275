//! The lanes of a hierarchy: the further LLs of a sweep, fed by the one
//! pair of L1s.
//!
//! A lane sees every L1 load, eviction and hit the hierarchy's own LL sees,
//! and keeps what differs: its LL's lines, and per L1 line where its LL
//! holds the line and the use not yet handed there. That pending use is the
//! L1 residency's whole use until the lane's LL first evicts or reloads the
//! line during the residency; from then on the lane keeps it apart
//! (`own`).
//!
//! Hits add to the L1 line's `used` alone, never to the lanes, so that a
//! hit costs nothing more for them. Instead, when a lane's LL reloads a line
//! the other L1 holds, from which moment on the lane's pending use must
//! count on its own, the residency is *split*: `used` so far moves to the
//! residency's `before`, and into the pending use of every lane already
//! keeping its own. A residency's whole use is then `before` and `used`
//! together, and an own lane's pending use its `pending` and `used`
//! together. (A lane whose LL evicted the line keeps counting `used` in,
//! wrongly, but then has no LL residency to hand it to until a reload,
//! which splits and starts it afresh.)
//!
//! Each lane's residencies end under its own lane number, so each lane's
//! costs are those of a walk of its own (the simulator charges a lane's
//! L1 residencies, the same as lane 0's, once).
//!
//! An L1 miss touches every lane's LL state, megabytes each: all of it is
//! prefetched before any is used, every lane's view of an L1 line sits
//! beside the others', and hand-overs wait in each lane's
//! [`DeferredUse`](super::super::deferred_use::DeferredUse) as they do for
//! the hierarchy's own LL: each lane is a [`LastLevel`] like it.

use super::super::geometry::CacheGeometry;
use super::super::huge_table::{HugeTable, NoMemory};
use super::super::line_use::{ByteMask, LineUse};
use super::super::set_assoc::{Lookup, Slot};
use super::{Hierarchy, LastLevel, Level, LlLine, Loader, Release, UseSink};

/// What a lane keeps of one L1 line.
#[derive(Clone, Copy, Default)]
struct LaneL1Line<H, M> {
    /// The lane's hold on the line's loading context.
    handle: H,
    /// Where the lane's LL holds the same line, while it does.
    ll_slot: Option<u32>,
    /// With `own`: the use not yet handed to the lane's LL, but for the
    /// residency's `used` since its last split. Without: the L1
    /// residency's whole use is.
    pending: LineUse<M>,
    /// The lane's LL evicted or reloaded the line during this L1
    /// residency: `pending` is the lane's own.
    own: bool,
}

/// The lanes of a hierarchy, lane 1 first, and their views of the L1 lines.
pub(super) struct LaneCaches<H, M> {
    lanes: Vec<LastLevel<H, M>>,
    /// Per L1 cache: each line's view by every lane, lane after lane, line
    /// after line (none without use tracking).
    views: [HugeTable<LaneL1Line<H, M>>; 2],
    /// Per L1 cache and line: the residency's use before its last split.
    before: [HugeTable<LineUse<M>>; 2],
}

impl<H: Copy + Default, M: ByteMask> LaneCaches<H, M> {
    /// Empty LLs of geometries `lls` beside L1s of `l1_slots` tracked lines
    /// each (none without use tracking: `track_use` off).
    pub fn new(
        lls: &[CacheGeometry],
        l1_slots: [usize; 2],
        track_use: bool,
    ) -> Result<LaneCaches<H, M>, NoMemory> {
        let [i1, d1] = l1_slots;
        let views = |slots: usize| HugeTable::filled(LaneL1Line::default(), slots * lls.len());
        let before = |slots: usize| HugeTable::filled(LineUse::default(), slots);
        Ok(LaneCaches {
            lanes: lls
                .iter()
                .map(|&ll| LastLevel::new(ll, track_use))
                .collect::<Result<_, _>>()?,
            views: [views(i1)?, views(d1)?],
            before: [before(i1)?, before(d1)?],
        })
    }

    /// Whether there are no lanes.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.lanes.is_empty()
    }

    /// The whole use of the residency of line `slot` of L1 `k`, whose use
    /// since its last split is `used`.
    #[inline]
    pub fn residency_use(&self, k: usize, slot: Slot, used: &LineUse<M>) -> LineUse<M> {
        let mut whole = self.before[k][slot];
        whole.absorb(used);
        whole
    }

    /// Lane `index`'s view of line `slot` of L1 `k`.
    #[inline]
    fn view(&mut self, k: usize, slot: Slot, index: usize) -> &mut LaneL1Line<H, M> {
        &mut self.views[k][slot * self.lanes.len() + index]
    }
}

impl<H: Copy + Default, M: ByteMask> Hierarchy<H, M> {
    /// Splits the residency of line `slot` of L1 `k` (see the module's
    /// notes): its use so far goes to `before` and to the lanes keeping
    /// their own pending use.
    fn split(&mut self, k: usize, slot: Slot) {
        let used = std::mem::take(&mut self.l1[k].lines[slot].used);
        for index in 0..self.lanes.lanes.len() {
            let view = self.lanes.view(k, slot, index);
            if view.own {
                view.pending.absorb(&used);
            }
        }
        self.lanes.before[k][slot].absorb(&used);
    }

    /// L1 `k` is loading the line at `addr` into `slot`, which held a line
    /// if `evicts`: has each lane's LL set for the new line on its way, and
    /// the LL state the victim's pending use goes to, while the
    /// hierarchy's own LL does its part.
    pub(super) fn lanes_prefetch(&self, k: usize, addr: u64, slot: Slot, evicts: bool) {
        let count = self.lanes.lanes.len();
        let views = &self.lanes.views[k];
        for (index, lane) in self.lanes.lanes.iter().enumerate() {
            lane.cache
                .prefetch(addr >> lane.cache.geometry().line_bits());
            if evicts
                && self.track_use
                && let Some(ll_slot) = views[slot * count + index].ll_slot
            {
                lane.lines.prefetch(ll_slot as usize);
            }
        }
    }

    /// L1 `k` loaded `line` into `slot`, its victim's residency ended: each
    /// lane looks it up in its LL. Returns the lanes that missed, one bit
    /// each.
    #[inline(never)]
    pub(super) fn lanes_load(
        &mut self,
        k: usize,
        line: u64,
        slot: Slot,
        sink: &mut impl UseSink<H>,
    ) -> u32 {
        let addr = line << self.l1[k].line_bits;
        let mut missed = 0;
        for index in 0..self.lanes.lanes.len() {
            let number = index + 1;
            let handle = if self.track_use {
                sink.hold(number).handle
            } else {
                H::default()
            };
            let lane = &mut self.lanes.lanes[index];
            let ll_line = addr >> lane.cache.geometry().line_bits();
            let ll_slot = match lane.cache.access(ll_line) {
                Lookup::Hit(ll_slot) => ll_slot,
                Lookup::Miss {
                    slot: ll_slot,
                    victim,
                } => {
                    missed |= 1 << number;
                    if victim.is_none() {
                        lane.cache.filled(ll_line);
                    }
                    if self.track_use {
                        self.lane_reload(index, k, ll_line, (ll_slot, victim), sink);
                    }
                    ll_slot
                }
            };
            if self.track_use {
                *self.lanes.view(k, slot, index) = LaneL1Line {
                    handle,
                    ll_slot: Some(ll_slot as u32),
                    pending: LineUse::default(),
                    own: false,
                };
            }
        }
        if self.track_use {
            self.lanes.before[k][slot] = LineUse::default();
        }
        missed
    }

    /// The LL of lane `index` loaded `line` into `ll_slot` for L1 `k`,
    /// evicting `victim`.
    fn lane_reload(
        &mut self,
        index: usize,
        k: usize,
        line: u64,
        (ll_slot, victim): (Slot, Option<u64>),
        sink: &mut impl UseSink<H>,
    ) {
        if let Some(victim) = victim {
            self.lane_end_ll_residency(index, victim, ll_slot, sink);
        }
        self.lanes.lanes[index].lines[ll_slot] = LlLine {
            loader: sink.hold(index + 1),
            used: LineUse::default(),
        };
        // What the other L1 saw of the line happened while this lane's LL
        // did not hold it: from now on the lane keeps its own pending use.
        let other = 1 - k;
        if let Some(copy) = self.l1[other].cache.probe(line) {
            self.split(other, copy);
            let view = self.lanes.view(other, copy, index);
            view.pending = LineUse::default();
            view.own = true;
            view.ll_slot = Some(ll_slot as u32);
        }
    }

    /// The LL of lane `index` evicts `line` from `slot`: the pending use of
    /// L1 copies joins its residency, which ends.
    fn lane_end_ll_residency(
        &mut self,
        index: usize,
        line: u64,
        slot: Slot,
        sink: &mut impl Release<H>,
    ) {
        let lanes = &mut self.lanes;
        let count = lanes.lanes.len();
        let lane = &mut lanes.lanes[index];
        let mut used = lane.ending_use(slot);
        for ((first, views), before) in self.l1.iter().zip(&mut lanes.views).zip(&lanes.before) {
            if let Some(copy) = first.cache.probe(line) {
                let view = &mut views[copy * count + index];
                used.absorb(if view.own {
                    &view.pending
                } else {
                    &before[copy]
                });
                used.absorb(&first.lines[copy].used);
                *view = LaneL1Line {
                    own: true,
                    ll_slot: None,
                    pending: LineUse::default(),
                    ..*view
                };
            }
        }
        let line_size = lane.cache.geometry().line_size();
        sink.release(
            index + 1,
            Level::LL,
            lane.lines[slot].loader,
            &used,
            line_size,
        );
    }

    /// L1 `k` ends the residency of `line` in `slot`, whose whole use was
    /// `whole`: in every lane, it is charged, and its pending use goes to
    /// the lane's LL.
    pub(super) fn lanes_end_l1_residency(
        &mut self,
        k: usize,
        line: u64,
        slot: Slot,
        whole: &LineUse<M>,
        sink: &mut impl Release<H>,
    ) {
        let state = &self.l1[k].lines[slot];
        let loading = self.l1[k].held[slot].loader.instr;
        let line_size = self.l1[k].cache.geometry().line_size();
        let count = self.lanes.lanes.len();
        let views = &self.lanes.views[k][slot * count..(slot + 1) * count];
        for (index, (lane, view)) in self.lanes.lanes.iter_mut().zip(views).enumerate() {
            let loader = Loader {
                instr: loading,
                handle: view.handle,
            };
            sink.release_shared_l1(index + 1, loader, whole, line_size);
            debug_assert_eq!(
                view.ll_slot.map(|slot| slot as Slot),
                lane.cache
                    .probe(line << self.l1[k].line_bits >> lane.cache.geometry().line_bits()),
                "a lane knows where its LL holds an L1 line"
            );
            if let Some(ll_slot) = view.ll_slot {
                let pending = if view.own {
                    let mut pending = view.pending;
                    pending.absorb(&state.used);
                    pending
                } else {
                    *whole
                };
                lane.hand_over(ll_slot, pending);
            }
        }
    }

    /// Ends the residency of every line in the lanes' LLs and empties them;
    /// the L1 residencies ended before.
    pub(super) fn lanes_flush(&mut self, sink: &mut impl Release<H>) {
        for (index, lane) in self.lanes.lanes.iter_mut().enumerate() {
            if self.track_use {
                lane.release_all(index + 1, sink);
            }
            lane.cache.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::super::super::caches::CacheAccess;
    use super::super::super::line_use::NarrowMask;
    use super::super::tests::{Ended, Recorder};
    use super::super::{L1Kind, Outcome};
    use super::*;

    fn hierarchy(lls: &[&str], track_use: bool) -> Hierarchy<(), NarrowMask> {
        let l1: CacheGeometry = "128,2,16".parse().unwrap();
        let lls: Vec<CacheGeometry> = lls.iter().map(|ll| ll.parse().unwrap()).collect();
        Hierarchy::new(l1, l1, &lls, track_use).unwrap()
    }

    /// Runs `accesses` through `caches` and flushes; what each access
    /// missed, and what each lane's residencies recorded. An access is a
    /// fetch for an odd `op`, a data access for an even one, and a flush
    /// of the caches for one that is a multiple of 32.
    fn run(
        caches: &mut Hierarchy<(), NarrowMask>,
        lanes: usize,
        accesses: &[(u8, u64, u32)],
    ) -> (Vec<Outcome>, Vec<Vec<Ended>>) {
        let mut sink = Recorder {
            lanes: vec![Vec::new(); lanes - 1],
            ..Recorder::default()
        };
        let mut outcomes = Vec::new();
        for (index, &(op, addr, size)) in accesses.iter().enumerate() {
            sink.current = index as u32;
            if op % 32 == 0 {
                caches.flush(&mut sink);
                continue;
            }
            let kind = if op % 2 == 1 {
                L1Kind::Instr
            } else {
                L1Kind::Data
            };
            outcomes.push(caches.access(kind, addr, size, &mut sink));
        }
        caches.flush(&mut sink);
        let ended = std::iter::once(sink.ended).chain(sink.lanes).collect();
        (outcomes, ended)
    }

    proptest! {
        /// Small LLs evict lines still in L1, and I1 and D1 share lines, so
        /// lanes keep pending use of their own; with flushes on the way,
        /// each lane must still see exactly what a hierarchy with its LL
        /// alone sees. Four LLs: three lanes, which index an L1 slot's
        /// views past what two would reach.
        #[test]
        fn each_lane_simulates_as_its_ll_alone(
            accesses in prop::collection::vec((any::<u8>(), 0u64..1024, 1u32..24), 1..400),
            track_use in any::<bool>(),
        ) {
            let lls = ["64,1,16", "256,2,16", "128,1,16", "512,2,16"];
            let (outcomes, ended) = run(&mut hierarchy(&lls, track_use), lls.len(), &accesses);
            for (lane, ll) in lls.iter().enumerate() {
                let (alone, alone_ended) = run(&mut hierarchy(&[ll], track_use), 1, &accesses);
                for (together, alone) in outcomes.iter().zip(&alone) {
                    prop_assert_eq!(together.l1_miss, alone.l1_miss);
                    let missed = if lane == 0 {
                        together.ll_miss
                    } else {
                        together.lane_misses & 1 << lane != 0
                    };
                    prop_assert_eq!(missed, alone.ll_miss, "lane {}", lane);
                }
                prop_assert_eq!(&ended[lane], &alone_ended[0], "lane {}", lane);
            }
        }
    }
}
