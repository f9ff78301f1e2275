//! Bytes loaded, used and wasted per loading call stack over time: the
//! profiles of Gecko's patched-Cachegrind cache-usage tool, collected as
//! lines end their residencies for the Firefox Profiler output (`sim
//! --profile`).
//!
//! Each ended residency adds its line's bytes to the stack that loaded it
//! (the call arcs the back-dating tree kept for the line, and the loading
//! instruction), in a time bucket of the instruction count at the
//! residency's end. Buckets widen as the run grows, so the samples stay a
//! few thousand buckets whatever the trace length.

use std::hash::Hash;

use rustc_hash::FxHashMap;

use crate::arcs::ArcId;
use crate::cache::Level;
use crate::cost::{EventKind, ResidencyCost};
use crate::program::InstrId;

/// The figures sampled, one track each.
pub const FIGURES: [(Level, EventKind, &str); 6] = [
    (Level::L1, EventKind::Loaded1, "L1 bytes loaded"),
    (Level::L1, EventKind::Used1, "L1 bytes used"),
    (Level::L1, EventKind::SpLoss1, "L1 bytes wasted"),
    (Level::LL, EventKind::Loaded2, "LL bytes loaded"),
    (Level::LL, EventKind::Used2, "LL bytes used"),
    (Level::LL, EventKind::SpLoss2, "LL bytes wasted"),
];

/// At most this many time buckets; past it, buckets double in width.
const MAX_BUCKETS: u64 = 2048;

/// A path of a [`PrefixTree`]: its parent's path plus one label.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PathId(pub u32);

/// Paths of labels as a prefix tree: paths that share a beginning share
/// its nodes, so that a path costs one node however long it is. Paths are
/// numbered from 0 as they are made, each after its parent.
#[derive(Clone, Debug)]
pub struct PrefixTree<L> {
    /// Per path: its parent (`None` for a path of one label) and last label.
    nodes: Vec<(Option<PathId>, L)>,
    index: FxHashMap<(Option<PathId>, L), PathId>,
}

/// The call paths of the loading stacks, each label a call arc (stored
/// whole, stacks of recursion thousands of calls deep took memory and time
/// quadratic in the depth).
pub type Paths = PrefixTree<ArcId>;

impl<L> Default for PrefixTree<L> {
    fn default() -> PrefixTree<L> {
        PrefixTree {
            nodes: Vec::new(),
            index: FxHashMap::default(),
        }
    }
}

impl<L: Copy + Eq + Hash> PrefixTree<L> {
    /// The path of `parent` (or of nothing) followed by `label`, made if
    /// new.
    pub fn child(&mut self, parent: Option<PathId>, label: L) -> PathId {
        *self.index.entry((parent, label)).or_insert_with(|| {
            self.nodes.push((parent, label));
            PathId(self.nodes.len() as u32 - 1)
        })
    }

    /// The path `path` leaves off from and its last label.
    pub fn get(&self, path: PathId) -> (Option<PathId>, L) {
        self.nodes[path.0 as usize]
    }

    /// Number of paths, numbered from 0.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// No path yet.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }
}

/// A loading stack: the call path (none at the bottom of a context) and
/// the instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LoadStack {
    pub path: Option<PathId>,
    pub instr: InstrId,
}

/// A `mark begin|end` of the trace, at an instruction count.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MarkAt {
    pub time: u64,
    pub thread: u32,
    pub begin: bool,
    pub name: String,
}

/// The bytes of the residencies one stack's lines ended within one time
/// bucket, and the latest of those ends.
#[derive(Clone, Copy, Debug, Default)]
struct Weight {
    bytes: u64,
    last: u64,
}

impl Weight {
    fn add(&mut self, bytes: u64, last: u64) {
        self.bytes += bytes;
        self.last = self.last.max(last);
    }
}

/// The samples of one run.
#[derive(Clone, Debug, Default)]
pub struct StackSamples {
    /// The call paths of `stacks`.
    pub paths: Paths,
    /// Interned stacks, indexed by the numbers in `weights`.
    pub stacks: Vec<LoadStack>,
    index: FxHashMap<LoadStack, u32>,
    /// Per figure and (time bucket, stack): the bytes and their latest
    /// end.
    weights: [FxHashMap<(u64, u32), Weight>; 6],
    /// Instructions per time bucket.
    pub bucket_width: u64,
    pub marks: Vec<MarkAt>,
}

impl StackSamples {
    /// No samples yet.
    pub fn new() -> StackSamples {
        StackSamples {
            bucket_width: 1024,
            ..StackSamples::default()
        }
    }

    /// A residency at `level` loaded by `instr` on call path `path` (of
    /// [`Self::paths`]) ended at instruction count `now` with `cost`.
    pub fn add(
        &mut self,
        level: Level,
        path: Option<PathId>,
        instr: InstrId,
        cost: &ResidencyCost,
        now: u64,
    ) {
        while now / self.bucket_width >= MAX_BUCKETS {
            self.widen();
        }
        let load = LoadStack { path, instr };
        let stack = *self.index.entry(load).or_insert_with(|| {
            self.stacks.push(load);
            self.stacks.len() as u32 - 1
        });
        let bucket = now / self.bucket_width;
        for (figure, &(of, kind, _)) in FIGURES.iter().enumerate() {
            let bytes = cost.get(kind);
            if of == level && bytes > 0 {
                let weight = self.weights[figure].entry((bucket, stack)).or_default();
                weight.add(bytes, now);
            }
        }
    }

    /// Records a mark of the trace.
    pub fn mark(&mut self, mark: MarkAt) {
        self.marks.push(mark);
    }

    fn widen(&mut self) {
        self.bucket_width *= 2;
        for weights in &mut self.weights {
            let old = std::mem::take(weights);
            for ((bucket, stack), Weight { bytes, last }) in old {
                weights
                    .entry((bucket / 2, stack))
                    .or_default()
                    .add(bytes, last);
            }
        }
    }

    /// The samples of `figure` (an index into [`FIGURES`]), one per stack
    /// and time bucket: (time, stack, bytes), in time then stack order; the
    /// time is the latest end of the residencies the bytes come from, so a
    /// sample lies within the marked sections they ended in when all did.
    pub fn samples(&self, figure: usize) -> Vec<(u64, u32, u64)> {
        let mut samples: Vec<(u64, u32, u64)> = self.weights[figure]
            .iter()
            .map(|(&(_, stack), weight)| (weight.last, stack, weight.bytes))
            .collect();
        samples.sort_unstable();
        samples
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cost(loaded: u64, used: u64) -> ResidencyCost {
        ResidencyCost::l1([0, loaded - used, loaded, used])
    }

    #[test]
    fn paths_share_their_prefixes() {
        let mut paths = Paths::default();
        let mut deepest = None;
        for _ in 0..10_000 {
            deepest = Some(paths.child(deepest, ArcId(1)));
        }
        assert_eq!(paths.len(), 10_000);
        let outer = paths.child(None, ArcId(1));
        assert_eq!(paths.child(Some(outer), ArcId(1)), PathId(1));
        assert_eq!(paths.child(Some(outer), ArcId(2)), PathId(10_000));
        assert_eq!(paths.get(PathId(10_000)), (Some(outer), ArcId(2)));
    }

    #[test]
    fn samples_add_up_per_stack_and_bucket_and_buckets_widen() {
        let mut samples = StackSamples::new();
        let outer = samples.paths.child(None, ArcId(1));
        let path = Some(samples.paths.child(Some(outer), ArcId(2)));
        samples.add(Level::L1, path, InstrId(7), &cost(64, 8), 10);
        samples.add(Level::L1, path, InstrId(7), &cost(64, 64), 20);
        samples.add(Level::L1, None, InstrId(3), &cost(64, 60), 2000);
        assert_eq!(samples.stacks.len(), 2);
        assert_eq!(samples.samples(0), [(20, 0, 128), (2000, 1, 64)]);
        assert_eq!(samples.samples(2), [(10, 0, 56), (2000, 1, 4)]);
        assert!(samples.samples(3).is_empty());
        // Far later: buckets double until the time fits.
        samples.add(
            Level::L1,
            None,
            InstrId(3),
            &cost(64, 0),
            1024 * MAX_BUCKETS * 3,
        );
        assert_eq!(samples.bucket_width, 4096);
        let wasted: u64 = samples.samples(2).iter().map(|s| s.2).sum();
        assert_eq!(wasted, 56 + 4 + 64);
        assert_eq!(samples.samples(2)[0], (10, 0, 56));
    }
}
