//! Back-dated inclusive costs: charging a metric known only at eviction to
//! every call that was on the loading instruction's stack at load time.
//!
//! The simulator drives an implementation of [`Backdate`] with the call
//! structure of every context (a thread, or a signal handler running in it)
//! and with the life of every resident line. [`crate::attribution::calltree::CallTree`]
//! is the real one; [`NoBackdate`] switches the feature off at no cost; the
//! tests hold a brute-force one that remembers whole stacks.
//!
//! A sweep simulates several LLs in one walk ([`crate::attribution::lanes`]); each is a
//! *lane* with residencies of its own. Lines name their lane, 0 being the
//! first configuration's; an implementation for one configuration has lane
//! 0 only.

use crate::arcs::ArcId;
use crate::cost::{EventKind, ResidencyCost, UseCost};
use crate::stack_samples::{PathId, Paths};

/// Receives call structure and line residencies; yields per-arc costs.
///
/// `now` is the number of instructions simulated so far, for statistics.
pub trait Backdate {
    /// Where a context currently is in its call structure.
    type Cursor;
    /// What a resident line holds to remember its loading context.
    type Line: Copy + Default;

    /// A new context with an empty stack (a thread, or a signal handler).
    fn root(&mut self, now: u64) -> Self::Cursor;
    /// The context calls along `arc`.
    fn enter(&mut self, cursor: &mut Self::Cursor, arc: ArcId, now: u64);
    /// The context returns from its innermost call.
    fn leave(&mut self, cursor: &mut Self::Cursor, now: u64);
    /// The context ends; its stack is already empty.
    fn close(&mut self, cursor: Self::Cursor, now: u64);
    /// A line is loaded into a cache of `lane` in the context at `cursor`.
    fn hold(&mut self, lane: usize, cursor: &mut Self::Cursor, now: u64) -> Self::Line;
    /// The line's residency in `lane` ended with `cost`; it lets go of
    /// `line`.
    fn charge(&mut self, lane: usize, line: Self::Line, cost: &ResidencyCost, now: u64);
    /// The line's residency in `lane` ended with a cost that is accounted
    /// for elsewhere (a sweep's lanes share lane 0's L1 costs); it lets go
    /// of `line`, charging nothing.
    fn let_go(&mut self, lane: usize, line: Self::Line, now: u64);
    /// The LL of `lane`, not 0, missed as `kind` in the context at `cursor`
    /// (lane 0's misses are in the context's own cost).
    fn miss(&mut self, lane: usize, cursor: &mut Self::Cursor, kind: EventKind);
    /// The call path of the stack where `line` was loaded, interned in
    /// `paths`; none at the bottom of a context, or where the stacks are not
    /// kept.
    fn stack(&mut self, line: &Self::Line, paths: &mut Paths) -> Option<PathId>;
    /// After every context closed and every line was charged: the back-dated
    /// cost of each arc, indexed by [`ArcId`] (shorter if trailing arcs got
    /// nothing), and the statistics.
    fn finish(self, now: u64) -> (Vec<UseCost>, Option<TreeStats>);
}

/// Size of the back-dating tree over a run, as the paper reports it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TreeStats {
    /// Live nodes averaged over the run, weighted by instructions executed;
    /// none for a run without instructions.
    pub mean_nodes: Option<f64>,
    /// Most live nodes at any time.
    pub max_nodes: u64,
    /// Nodes created over the run.
    pub created_nodes: u64,
}

/// Back-dating switched off: arcs get no cache-use cost, as in Callgrind.
pub struct NoBackdate;

impl Backdate for NoBackdate {
    type Cursor = ();
    type Line = ();

    fn root(&mut self, _: u64) {}
    fn enter(&mut self, _: &mut (), _: ArcId, _: u64) {}
    fn leave(&mut self, _: &mut (), _: u64) {}
    fn close(&mut self, _: (), _: u64) {}
    fn hold(&mut self, lane: usize, _: &mut (), _: u64) {
        debug_assert_eq!(lane, 0, "one lane");
    }
    fn charge(&mut self, lane: usize, _: (), _: &ResidencyCost, _: u64) {
        debug_assert_eq!(lane, 0, "one lane");
    }
    fn let_go(&mut self, lane: usize, _: (), _: u64) {
        debug_assert_eq!(lane, 0, "one lane");
    }
    fn miss(&mut self, lane: usize, _: &mut (), _: EventKind) {
        debug_assert!(false, "a miss in lane {lane} of one");
    }
    fn stack(&mut self, _: &(), _: &mut Paths) -> Option<PathId> {
        None
    }
    fn finish(self, _: u64) -> (Vec<UseCost>, Option<TreeStats>) {
        (Vec::new(), None)
    }
}
