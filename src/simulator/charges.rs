//! Where the end of a residency goes: its loading instruction's self cost
//! and, back-dated, the call context it was loaded in; a sweep's other
//! lanes and the stack samples keep theirs apart.

use crate::attribution::backdate::Backdate;
use crate::cache::{ByteMask, Level, LineUse, Loader, Release, UseSink};
use crate::cost::{Cost, ResidencyCost};
use crate::program::InstrId;
use crate::stack_samples::StackSamples;

use super::lanes::lane_cost;

/// Where a walk's costs go: each instruction's self cost, the back-dating
/// of its call contexts, and what lanes and stack samples keep apart.
pub(super) struct Charges<B> {
    /// Self cost of every instruction, indexed by [`InstrId`].
    pub(super) self_cost: Vec<Cost>,
    pub(super) backdate: B,
    /// Per lane from 1 on: the LL kinds of the self costs, indexed by
    /// [`InstrId`] (shorter where the instructions after got none).
    pub(super) lane_costs: Vec<Vec<Cost>>,
    /// Bytes per loading stack over time, when asked for.
    pub(super) samples: Option<StackSamples>,
}

impl<B> Charges<B> {
    /// Gives the instructions of ids below `instrs` a self cost, new ones
    /// zero.
    #[inline]
    pub(super) fn cover(&mut self, instrs: usize) {
        if self.self_cost.len() < instrs {
            self.self_cost.resize(instrs, Cost::ZERO);
        }
    }

    /// A charger of residencies that end at instruction `now`.
    #[inline(always)]
    pub(super) fn charger(&mut self, now: u64) -> Charger<'_, B> {
        Charger { charges: self, now }
    }
}

/// Charges ended residencies to their loading instruction and, back-dated,
/// to its call context. It holds the charges whole, not a borrow of each
/// of their parts: every block run builds a stepper around a charger, and
/// one pointer instead of six words of borrows took 2.7% fewer host
/// instructions of the simulating thread on `traces/mandelbrot.lgt`.
pub(super) struct Charger<'a, B> {
    pub(super) charges: &'a mut Charges<B>,
    pub(super) now: u64,
}

impl<B: Backdate> Charger<'_, B> {
    /// Adds a residency of lane 0 that ended with `cost` to the stack
    /// samples, before the charge lets go of the line's stack.
    #[inline(never)]
    fn sample(&mut self, level: Level, loader: &Loader<B::Line>, cost: &ResidencyCost) {
        let Charges {
            backdate, samples, ..
        } = &mut *self.charges;
        if let Some(samples) = samples {
            let path = backdate.stack(&loader.handle, &mut samples.paths);
            samples.add(level, path, loader.instr, cost, self.now);
        }
    }

    /// Charges the end of an LL residency of lane `lane`, not 0.
    #[inline(never)]
    fn release_lane_ll<M: ByteMask>(
        &mut self,
        lane: usize,
        loader: Loader<B::Line>,
        used: &LineUse<M>,
        line_size: u32,
    ) {
        let cost = use_cost(Level::LL, used, line_size);
        *lane_cost(&mut self.charges.lane_costs, lane, loader.instr) += &cost;
        self.charges
            .backdate
            .charge(lane, loader.handle, &cost, self.now);
    }
}

impl<B: Backdate> Release<B::Line> for Charger<'_, B> {
    /// Lane 0's charge inlined where residencies end, the rest out of line:
    /// called out of line as a whole, the charge took 31 more host
    /// instructions per ended residency on a big pointer_chase trace with
    /// back-dating (13.45 against 12.94 G on the simulating thread).
    #[inline(always)]
    fn release<M: ByteMask>(
        &mut self,
        lane: usize,
        level: Level,
        loader: Loader<B::Line>,
        used: &LineUse<M>,
        line_size: u32,
    ) {
        if lane == 0 {
            let cost = use_cost(level, used, line_size);
            self.charges.self_cost[loader.instr.0 as usize] += &cost;
            if self.charges.samples.is_some() {
                self.sample(level, &loader, &cost);
            }
            self.charges
                .backdate
                .charge(lane, loader.handle, &cost, self.now);
        } else if level == Level::LL {
            self.release_lane_ll(lane, loader, used, line_size);
        } else {
            self.release_shared_l1(lane, loader, used, line_size);
        }
    }

    #[inline(always)]
    fn release_shared_l1<M: ByteMask>(
        &mut self,
        lane: usize,
        loader: Loader<B::Line>,
        _: &LineUse<M>,
        _: u32,
    ) {
        // Lane 0's L1 costs are every lane's, back-dated ones included (see
        // `finish_lanes`): the lane's tree only lets go of the line, so that
        // its nodes live as long as in a run of its own.
        self.charges.backdate.let_go(lane, loader.handle, self.now);
    }
}

/// A [`Charger`] that also knows who loads lines during one access.
pub(super) struct Sink<'a, B: Backdate> {
    pub(super) charger: Charger<'a, B>,
    pub(super) instr: InstrId,
    pub(super) cursor: &'a mut B::Cursor,
}

impl<B: Backdate> Release<B::Line> for Sink<'_, B> {
    #[inline(always)]
    fn release<M: ByteMask>(
        &mut self,
        lane: usize,
        level: Level,
        loader: Loader<B::Line>,
        used: &LineUse<M>,
        line_size: u32,
    ) {
        self.charger.release(lane, level, loader, used, line_size);
    }
}

impl<B: Backdate> UseSink<B::Line> for Sink<'_, B> {
    #[inline]
    fn hold(&mut self, lane: usize) -> Loader<B::Line> {
        Loader {
            instr: self.instr,
            handle: self
                .charger
                .charges
                .backdate
                .hold(lane, self.cursor, self.charger.now),
        }
    }
}

/// `1000 / uses` for every count of uses up to 1000 (above, it is 0), 0
/// uses taken as 1, so that the end of a residency needs no division.
const TEMPORAL_LOSS: [u16; 1001] = {
    let mut table = [0; 1001];
    let mut uses = 1;
    while uses <= 1000 {
        table[uses] = (1000 / uses) as u16;
        uses += 1;
    }
    table[0] = 1000;
    table
};

/// Temporal loss of a residency with `uses` accesses: `1000 / uses`, as
/// an integer (a residency has at least one).
#[inline]
fn temporal_loss(uses: u64) -> u64 {
    usize::try_from(uses)
        .ok()
        .and_then(|uses| TEMPORAL_LOSS.get(uses))
        .map_or(0, |&loss| u64::from(loss))
}

/// The cache-use cost of one ended residency, as the README defines it:
/// temporal loss `1000 / uses`, spatial loss (bytes wasted), bytes loaded
/// and bytes used.
fn use_cost<M: ByteMask>(level: Level, used: &LineUse<M>, line_size: u32) -> ResidencyCost {
    debug_assert!(used.count > 0, "a residency without accesses");
    let bytes = u64::from(used.bytes());
    let line_size = u64::from(line_size);
    let counts = [
        temporal_loss(used.count),
        line_size - bytes,
        line_size,
        bytes,
    ];
    match level {
        Level::L1 => ResidencyCost::l1(counts),
        Level::LL => ResidencyCost::ll(counts),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temporal_loss_is_a_thousand_over_the_uses() {
        for uses in (0..3000).chain([u64::from(u32::MAX) + 7, u64::MAX]) {
            assert_eq!(temporal_loss(uses), 1000 / uses.max(1), "{uses} uses");
        }
    }
}
