//! Bytes loaded, used and wasted per loading call stack over time: the
//! profiles of `reference/001`, collected as lines end their residencies
//! for the Firefox Profiler output (`sim --profile`).
//!
//! Each ended residency adds its line's bytes to the stack that loaded it
//! (the call arcs the back-dating tree kept for the line, and the loading
//! instruction), in a time bucket of the instruction count at the
//! residency's end. Buckets widen as the run grows, so the samples stay a
//! few thousand buckets whatever the trace length.

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

/// A loading stack: the call arcs, outermost first, and the instruction.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LoadStack {
    pub arcs: Vec<ArcId>,
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

/// The samples of one run.
#[derive(Clone, Debug, Default)]
pub struct StackSamples {
    /// Interned stacks, indexed by the numbers in `weights`.
    pub stacks: Vec<LoadStack>,
    index: FxHashMap<LoadStack, u32>,
    /// Per figure: bytes per (time bucket, stack).
    weights: [FxHashMap<(u64, u32), u64>; 6],
    /// Instructions per time bucket.
    pub bucket_width: u64,
    pub marks: Vec<MarkAt>,
    /// Reused for looking stacks up.
    scratch: LoadStack,
}

impl Default for LoadStack {
    fn default() -> LoadStack {
        LoadStack {
            arcs: Vec::new(),
            instr: InstrId(0),
        }
    }
}

impl StackSamples {
    /// No samples yet.
    pub fn new() -> StackSamples {
        StackSamples {
            bucket_width: 1024,
            ..StackSamples::default()
        }
    }

    /// The arcs of the next sample's stack, to fill in before [`Self::add`].
    pub fn arcs_mut(&mut self) -> &mut Vec<ArcId> {
        &mut self.scratch.arcs
    }

    /// A residency at `level` loaded by `instr` (on the stack given by
    /// [`Self::arcs_mut`]) ended at instruction count `now` with `cost`.
    pub fn add(&mut self, level: Level, instr: InstrId, cost: &ResidencyCost, now: u64) {
        while now / self.bucket_width >= MAX_BUCKETS {
            self.widen();
        }
        self.scratch.instr = instr;
        let stack = match self.index.get(&self.scratch) {
            Some(&stack) => stack,
            None => {
                let stack = self.stacks.len() as u32;
                self.stacks.push(self.scratch.clone());
                self.index.insert(self.scratch.clone(), stack);
                stack
            }
        };
        let bucket = now / self.bucket_width;
        for (figure, &(of, kind, _)) in FIGURES.iter().enumerate() {
            let bytes = cost.get(kind);
            if of == level && bytes > 0 {
                *self.weights[figure].entry((bucket, stack)).or_insert(0) += bytes;
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
            for ((bucket, stack), bytes) in old {
                *weights.entry((bucket / 2, stack)).or_insert(0) += bytes;
            }
        }
    }

    /// The samples of `figure` (an index into [`FIGURES`]): (time bucket,
    /// stack, bytes), in time then stack order.
    pub fn samples(&self, figure: usize) -> Vec<(u64, u32, u64)> {
        let mut samples: Vec<(u64, u32, u64)> = self.weights[figure]
            .iter()
            .map(|(&(bucket, stack), &bytes)| (bucket, stack, bytes))
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
    fn samples_add_up_per_stack_and_bucket_and_buckets_widen() {
        let mut samples = StackSamples::new();
        samples.arcs_mut().clone_from(&vec![ArcId(1), ArcId(2)]);
        samples.add(Level::L1, InstrId(7), &cost(64, 8), 10);
        samples.add(Level::L1, InstrId(7), &cost(64, 64), 20);
        samples.arcs_mut().clear();
        samples.add(Level::L1, InstrId(3), &cost(64, 60), 2000);
        assert_eq!(samples.stacks.len(), 2);
        assert_eq!(samples.samples(0), [(0, 0, 128), (1, 1, 64)]);
        assert_eq!(samples.samples(2), [(0, 0, 56), (1, 1, 4)]);
        assert!(samples.samples(3).is_empty());
        // Far later: buckets double until the time fits.
        samples.add(Level::L1, InstrId(3), &cost(64, 0), 1024 * MAX_BUCKETS * 3);
        assert_eq!(samples.bucket_width, 4096);
        let wasted: u64 = samples.samples(2).iter().map(|s| s.2).sum();
        assert_eq!(wasted, 56 + 4 + 64);
        assert_eq!(samples.samples(2)[0], (0, 0, 56));
    }
}
