//! The LLs of a sweep, simulated in one walk of the trace.
//!
//! Configurations that differ in LL only see the same I1 and D1 contents at
//! every step, so one walk serves them all: each LL is a *lane* of it. The
//! hierarchy keeps every lane's LL and what each lane knows of the L1 lines
//! ([`crate::cache::Hierarchy`]); the simulator counts each lane's LL misses
//! and use costs per instruction. What lanes add to the call structure is
//! here: [`Lanes`] drives one back-dating per lane with the same calls, as
//! each line's residency belongs to one lane, and keeps the LL misses of
//! every lane but the first per call, by the difference method
//! [`crate::callstack`] uses for the first lane's costs. The lanes' L1
//! residencies are lane 0's, and so are their costs: a lane's back-dating
//! holds and lets go of its L1 lines, so that its tree lives as in a run
//! of its own, but is charged for its LL residencies only.

use crate::arcs::ArcId;
use crate::attribution::backdate::{Backdate, TreeStats};
use crate::cost::{Cost, EventKind, ResidencyCost, UseCost};
use crate::stack_samples::{PathId, Paths};

/// LL misses of one lane, as [`EventKind::LL_MISSES`].
type LlMisses = [u64; 3];

/// The position of an LL miss kind in [`LlMisses`].
fn miss_index(kind: EventKind) -> usize {
    debug_assert!(EventKind::LL_MISSES.contains(&kind));
    kind as usize - EventKind::ILmr as usize
}

/// The back-dating of every lane of a walk, lane 0 first.
pub struct Lanes<B> {
    lanes: Vec<Lane<B>>,
}

/// One lane's back-dating and what it counts per call.
struct Lane<B> {
    /// Receives the calls, and the residencies of this lane's caches.
    backdate: B,
    /// LL misses while a call along each arc was on the stack, by
    /// [`ArcId`]; kept for lanes after the first.
    inclusive: Vec<LlMisses>,
}

/// Where a context is in every lane's back-dating.
pub struct LanesCursor<C> {
    /// Per lane, the position in its back-dating.
    cursors: Vec<C>,
    /// Per lane after the first: LL misses while this context ran.
    missed: Vec<LlMisses>,
    /// The open calls along arcs, innermost last.
    calls: Vec<ArcId>,
    /// `missed` when each open call was made, call after call.
    entered: Vec<LlMisses>,
}

/// What one lane's back-dating found over a run.
pub struct LaneCosts {
    /// Back-dated use cost per arc, by [`ArcId`] (shorter if trailing arcs
    /// got none).
    pub arc_use: Vec<UseCost>,
    /// The lane's tree statistics, when back-dating is on.
    pub stats: Option<TreeStats>,
    /// LL misses while a call along each arc was on the stack, by
    /// [`ArcId`]; empty for lane 0, whose misses the arcs hold.
    pub arc_misses: Vec<Cost>,
}

impl<B: Backdate> Lanes<B> {
    /// Lanes with these back-datings, lane 0 first.
    pub fn new(backdates: Vec<B>) -> Lanes<B> {
        debug_assert!(!backdates.is_empty());
        Lanes {
            lanes: backdates
                .into_iter()
                .map(|backdate| Lane {
                    backdate,
                    inclusive: Vec::new(),
                })
                .collect(),
        }
    }

    /// Finishes every lane's back-dating (see [`Backdate::finish`]).
    pub fn finish_each(self, now: u64) -> Vec<LaneCosts> {
        self.lanes
            .into_iter()
            .enumerate()
            .map(|(index, lane)| {
                let (arc_use, stats) = lane.backdate.finish(now);
                let arc_misses = if index == 0 {
                    Vec::new()
                } else {
                    lane.inclusive
                        .iter()
                        .map(|&misses| cost_of(misses))
                        .collect()
                };
                LaneCosts {
                    arc_use,
                    stats,
                    arc_misses,
                }
            })
            .collect()
    }
}

/// `misses` as a cost.
fn cost_of(misses: LlMisses) -> Cost {
    let mut cost = Cost::ZERO;
    for kind in EventKind::LL_MISSES {
        cost[kind] = misses[miss_index(kind)];
    }
    cost
}

impl<B: Backdate> Backdate for Lanes<B> {
    type Cursor = LanesCursor<B::Cursor>;
    type Line = B::Line;

    fn root(&mut self, now: u64) -> Self::Cursor {
        LanesCursor {
            cursors: self
                .lanes
                .iter_mut()
                .map(|lane| lane.backdate.root(now))
                .collect(),
            missed: vec![LlMisses::default(); self.lanes.len() - 1],
            calls: Vec::new(),
            entered: Vec::new(),
        }
    }

    fn enter(&mut self, cursor: &mut Self::Cursor, arc: ArcId, now: u64) {
        for (lane, at) in self.lanes.iter_mut().zip(&mut cursor.cursors) {
            lane.backdate.enter(at, arc, now);
        }
        cursor.calls.push(arc);
        cursor.entered.extend_from_slice(&cursor.missed);
    }

    fn leave(&mut self, cursor: &mut Self::Cursor, now: u64) {
        for (lane, at) in self.lanes.iter_mut().zip(&mut cursor.cursors) {
            lane.backdate.leave(at, now);
        }
        let Some(arc) = cursor.calls.pop() else {
            debug_assert!(false, "leave without a call");
            return;
        };
        let base = cursor.entered.len() - cursor.missed.len();
        let index = arc.0 as usize;
        for ((lane, missed), entered) in self.lanes[1..]
            .iter_mut()
            .zip(&cursor.missed)
            .zip(&cursor.entered[base..])
        {
            if lane.inclusive.len() <= index {
                lane.inclusive.resize(index + 1, LlMisses::default());
            }
            for (total, (now, then)) in lane.inclusive[index]
                .iter_mut()
                .zip(missed.iter().zip(entered))
            {
                *total += now - then;
            }
        }
        cursor.entered.truncate(base);
    }

    fn close(&mut self, cursor: Self::Cursor, now: u64) {
        debug_assert!(cursor.calls.is_empty(), "close with calls active");
        for (lane, at) in self.lanes.iter_mut().zip(cursor.cursors) {
            lane.backdate.close(at, now);
        }
    }

    fn hold(&mut self, lane: usize, cursor: &mut Self::Cursor, now: u64) -> Self::Line {
        self.lanes[lane]
            .backdate
            .hold(0, &mut cursor.cursors[lane], now)
    }

    fn charge(&mut self, lane: usize, line: Self::Line, cost: &ResidencyCost, now: u64) {
        self.lanes[lane].backdate.charge(0, line, cost, now);
    }

    fn let_go(&mut self, lane: usize, line: Self::Line, now: u64) {
        self.lanes[lane].backdate.let_go(0, line, now);
    }

    fn miss(&mut self, lane: usize, cursor: &mut Self::Cursor, kind: EventKind) {
        cursor.missed[lane - 1][miss_index(kind)] += 1;
    }

    fn stack(&mut self, line: &Self::Line, paths: &mut Paths) -> Option<PathId> {
        self.lanes[0].backdate.stack(line, paths)
    }

    fn finish(self, now: u64) -> (Vec<UseCost>, Option<TreeStats>) {
        let first = self.finish_each(now).swap_remove(0);
        (first.arc_use, first.stats)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attribution::calltree::CallTree;

    #[test]
    fn each_lane_charges_its_own_lines_and_counts_misses_per_call() {
        let mut lanes = Lanes::new(vec![CallTree::new(), CallTree::new()]);
        let mut cursor = lanes.root(0);
        lanes.miss(1, &mut cursor, EventKind::DLmr); // before any call
        lanes.enter(&mut cursor, ArcId(0), 1);
        lanes.enter(&mut cursor, ArcId(1), 2);
        lanes.miss(1, &mut cursor, EventKind::ILmr);
        let first = lanes.hold(0, &mut cursor, 2);
        let second = lanes.hold(1, &mut cursor, 2);
        lanes.leave(&mut cursor, 3);
        lanes.miss(1, &mut cursor, EventKind::DLmw);
        lanes.leave(&mut cursor, 4);
        let wasted = |bytes| ResidencyCost::ll([0, bytes, 0, 0]);
        lanes.charge(1, second, &wasted(8), 5);
        lanes.charge(0, first, &wasted(1), 5);
        lanes.close(cursor, 6);
        let each = lanes.finish_each(6);
        let spatial = |lane: &LaneCosts| -> Vec<u64> {
            lane.arc_use
                .iter()
                .map(|c| c.get(EventKind::SpLoss2))
                .collect()
        };
        assert_eq!(spatial(&each[0]), [1, 1]);
        assert_eq!(spatial(&each[1]), [8, 8]);
        assert!(each[0].arc_misses.is_empty());
        let misses = |arc: usize, kind| each[1].arc_misses[arc][kind];
        assert_eq!(misses(0, EventKind::ILmr), 1);
        assert_eq!(misses(0, EventKind::DLmw), 1);
        assert_eq!(misses(1, EventKind::ILmr), 1);
        assert_eq!(misses(1, EventKind::DLmw), 0);
        assert_eq!(misses(0, EventKind::DLmr), 0);
        assert_eq!(each[1].stats.unwrap().created_nodes, 3);
    }
}
