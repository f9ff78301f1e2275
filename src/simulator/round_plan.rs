//! The steady rounds of a loop over memory, walked from a plan.
//!
//! Once a round of a cycle (see `Simulator::repeat`) arrived at every run
//! by a plain jump, the later rounds do too, and fetch the same I1 lines
//! in the same order. If I1 still holds every line the round fetched, the
//! next round hits each of them, evicts none, and leaves them in their
//! slots and at the top of their sets in the order of their last fetch,
//! as it found them (only fetches touch I1): so does every round after.
//! A plan made from that round's known blocks walks the rest: a round adds
//! its fetches' use to their lines' slots, without a lookup, in order with
//! its data accesses (a miss of those in LL can take the use of a line I1
//! holds), and makes the data accesses through the caches as the walk of
//! a run does. The counts of all the rounds are added at the end.

use crate::attribution::backdate::Backdate;
use crate::cache::{ByteMask, Hierarchy, Slot};
use crate::cost::EventKind;
use crate::program::InstrId;
use crate::trace::Access;
use crate::trace::batch::MAX_PERIOD;

use super::stepper::Stepper;

/// One step of a planned round.
#[derive(Clone, Copy, Debug)]
enum PlanStep {
    /// `fetches` fetches of bytes `offset .. offset + len` of the I1 line
    /// in `slot`.
    Fetched {
        slot: u32,
        fetches: u32,
        offset: u16,
        len: u16,
    },
    /// A data access charged to `instr`, made by the round's instruction
    /// `at` (from 0).
    Access {
        instr: InstrId,
        access: Access,
        size: u16,
        at: u32,
    },
}

/// A round of a cycle's runs, planned; kept for the next cycle's plan so
/// that its steps need no allocation.
#[derive(Default)]
pub(super) struct RoundPlan {
    steps: Vec<PlanStep>,
    /// A round's instructions and unguarded reads and writes.
    instrs: u64,
    reads: u64,
    writes: u64,
    /// Where each run's count is kept in its block's steps (see
    /// `KnownBlocks::add_left`), run by run.
    lefts: [usize; MAX_PERIOD],
    runs: usize,
}

impl RoundPlan {
    /// Starts a plan afresh.
    pub fn clear(&mut self) {
        self.steps.clear();
        (self.instrs, self.reads, self.writes, self.runs) = (0, 0, 0, 0);
    }

    /// Adds `fetches` fetches of bytes `offset .. offset + len` of the I1
    /// line in `slot`: joined to the step before if that fetched the bytes
    /// just before in the same line.
    pub fn fetch(&mut self, slot: Slot, fetches: u32, offset: u32, len: u32) {
        if let Some(PlanStep::Fetched {
            slot: last_slot,
            fetches: last_fetches,
            offset: last_offset,
            len: last_len,
        }) = self.steps.last_mut()
            && *last_slot as Slot == slot
            && u32::from(*last_offset) + u32::from(*last_len) == offset
        {
            *last_fetches += fetches;
            // Wraps only in lines of more than 256 bytes, whose bytes are
            // not looked at (see `KnownBlocks::plan_run`).
            *last_len = last_len.wrapping_add(len as u16);
        } else {
            self.steps.push(PlanStep::Fetched {
                slot: slot as u32,
                fetches,
                offset: offset as u16,
                len: len as u16,
            });
        }
    }

    /// Counts `count` more instructions of a round, fetched by the steps
    /// so far. False once a round runs more than a plan counts.
    pub fn instructions(&mut self, count: u32) -> bool {
        self.instrs += u64::from(count);
        self.instrs <= u64::from(u32::MAX)
    }

    /// Adds an unguarded data access charged to `instr`.
    pub fn access(&mut self, instr: InstrId, access: Access, size: u16) {
        self.steps.push(PlanStep::Access {
            instr,
            access,
            size,
            // Planned after its instruction's fetch.
            at: self.instrs as u32 - 1,
        });
        match access {
            Access::Read => self.reads += 1,
            Access::Write | Access::Modify => self.writes += 1,
        }
    }

    /// Ends the plan of a run, whose count is kept at `left` in its
    /// block's steps.
    pub fn end_run(&mut self, left: usize) {
        self.lefts[self.runs] = left;
        self.runs += 1;
    }

    /// The data accesses of a round.
    pub fn accesses(&self) -> u64 {
        self.reads + self.writes
    }

    /// Where the runs' counts are kept, run by run.
    pub fn lefts(&self) -> &[usize] {
        &self.lefts[..self.runs]
    }

    /// Walks the rounds whose addresses are `rounds`, as many a round as
    /// the plan has accesses (at least one), with `stepper`, charging to
    /// `charge_to` where set; `now` counts the instructions. Their
    /// instructions and data accesses are counted in the context's cost,
    /// and in `charge_to`'s self cost if set (else the caller counts them
    /// where the runs left, at [`RoundPlan::lefts`]).
    #[inline(never)]
    pub fn walk<B: Backdate, M: ByteMask>(
        &self,
        rounds: &[u64],
        mut stepper: Stepper<'_, B, Hierarchy<B::Line, M>>,
        charge_to: Option<InstrId>,
        now: &mut u64,
    ) {
        debug_assert!(self.accesses() > 0, "a planned round makes data accesses");
        let rounds = rounds.chunks_exact(self.accesses() as usize);
        let times = rounds.len() as u64;
        for addrs in rounds {
            let mut addrs = addrs.iter();
            for step in &self.steps {
                match *step {
                    PlanStep::Fetched {
                        slot,
                        fetches,
                        offset,
                        len,
                    } => stepper.fetch_resident(
                        slot as Slot,
                        u64::from(fetches),
                        u32::from(offset),
                        u32::from(len),
                    ),
                    PlanStep::Access {
                        instr,
                        access,
                        size,
                        at,
                    } => {
                        // As many as the plan's accesses.
                        let Some(&addr) = addrs.next() else { break };
                        stepper.access(instr, access, addr, u32::from(size), *now + u64::from(at));
                    }
                }
            }
            *now += self.instrs;
        }
        let counts = [
            (EventKind::Ir, self.instrs),
            (EventKind::Dr, self.reads),
            (EventKind::Dw, self.writes),
        ];
        for (kind, per_round) in counts {
            match charge_to {
                Some(to) => stepper.count(to, kind, per_round * times),
                None => stepper.count_in_context(kind, per_round * times),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fetch steps of `plan`: slot, fetches, offset and length.
    fn fetched(plan: &RoundPlan) -> Vec<(u32, u32, u16, u16)> {
        plan.steps
            .iter()
            .filter_map(|step| match *step {
                PlanStep::Fetched {
                    slot,
                    fetches,
                    offset,
                    len,
                } => Some((slot, fetches, offset, len)),
                PlanStep::Access { .. } => None,
            })
            .collect()
    }

    #[test]
    fn fetches_join_the_step_before_only_where_they_continue_its_bytes() {
        let mut plan = RoundPlan::default();
        plan.fetch(3, 1, 4, 4);
        // The next bytes of the same line: one step.
        plan.fetch(3, 2, 8, 6);
        // Back to the line's start, then the same bytes in another line.
        plan.fetch(3, 1, 0, 4);
        plan.fetch(5, 1, 4, 4);
        assert_eq!(fetched(&plan), [(3, 3, 4, 10), (3, 1, 0, 4), (5, 1, 4, 4)]);
        plan.clear();
        assert!(fetched(&plan).is_empty());
    }
}
