//! The simulator's side of a sweep's lanes ([`crate::attribution::lanes`]): their self
//! costs, and one run per lane when the walk ends.

use crate::attribution::backdate::Backdate;
use crate::attribution::lanes::Lanes;
use crate::cache::{MAX_LANES, NoMemory};
use crate::config::SimConfig;
use crate::cost::{Cost, EventKind, EventSet, UseCost};
use crate::profile::{ConfigCosts, Walked};
use crate::program::InstrId;

use super::Simulator;

impl<B: Backdate> Simulator<Lanes<B>> {
    /// One walk simulating every configuration of `configs`, which differ
    /// in LL only, each LL a lane; `backdate` makes each lane's back-dating.
    /// Fails if the host refuses the memory of the caches.
    pub fn lanes(
        mut configs: Vec<SimConfig>,
        backdate: impl Fn() -> B,
    ) -> Result<Simulator<Lanes<B>>, NoMemory> {
        assert!(
            (2..=MAX_LANES).contains(&configs.len()),
            "a walk of 2 to {MAX_LANES} configurations"
        );
        let first = configs.remove(0);
        assert!(
            configs
                .iter()
                .all(|config| first.same_but_ll(config) && !config.stack_samples()),
            "lanes differ in LL only, without stack samples"
        );
        let backdates = (0..=configs.len()).map(|_| backdate()).collect();
        Simulator::with_lanes(first, configs, Lanes::new(backdates))
    }

    /// Ends the run, as [`Simulator::finish`] does: one run per lane, in
    /// the order of the configurations, sharing every cost that does not
    /// depend on LL.
    pub fn finish_lanes(mut self) -> Walked {
        let (threads, late_sigreturns) = self.end_walk();
        let events = EventSet::new(self.config.cache_use());
        let arcs = self.arcs.into_vec();
        let costs = self.charges.backdate.finish_each(self.instructions);
        // The lanes' trees let L1 lines go uncharged: every lane's back-dated
        // L1 use is lane 0's.
        let l1_use: Vec<UseCost> = costs[0].arc_use.iter().map(UseCost::l1_part).collect();
        let configs = std::iter::once(self.config).chain(self.lane_configs);
        let lane_costs = std::iter::once(None).chain(self.charges.lane_costs.iter().map(Some));
        let runs = configs
            .zip(lane_costs)
            .zip(costs)
            .map(|((config, lane_cost), lane)| {
                let mut self_cost = self.charges.self_cost.clone();
                let mut arcs = arcs.clone();
                if let Some(lane_cost) = lane_cost {
                    take_ll_kinds(self_cost.iter_mut(), lane_cost, &LL_KINDS);
                    let inclusive = arcs.iter_mut().map(|arc| &mut arc.inclusive);
                    take_ll_kinds(inclusive, &lane.arc_misses, &EventKind::LL_MISSES);
                    for (arc, cost) in arcs.iter_mut().zip(&l1_use) {
                        arc.inclusive += cost;
                    }
                }
                for (arc, cost) in arcs.iter_mut().zip(&lane.arc_use) {
                    arc.inclusive += cost;
                }
                ConfigCosts {
                    config,
                    events,
                    self_cost,
                    arcs,
                    tree: lane.stats,
                    threads,
                    late_sigreturns,
                    samples: None,
                }
            })
            .collect();
        Walked {
            program: self.program,
            runs,
        }
    }
}

/// Every kind that depends on LL.
const LL_KINDS: [EventKind; 7] = [
    EventKind::ILmr,
    EventKind::DLmr,
    EventKind::DLmw,
    EventKind::AcCost2,
    EventKind::SpLoss2,
    EventKind::Loaded2,
    EventKind::Used2,
];

/// Sets the `kinds` of each cost in `costs` to those of `lane`, the costs
/// of a lane indexed alike (shorter where the rest got none).
fn take_ll_kinds<'a>(
    costs: impl Iterator<Item = &'a mut Cost>,
    lane: &[Cost],
    kinds: &[EventKind],
) {
    let lane = lane.iter().chain(std::iter::repeat(&Cost::ZERO));
    for (cost, lane) in costs.zip(lane) {
        for &kind in kinds {
            cost[kind] = lane[kind];
        }
    }
}

/// The self cost of `instr` in lane `lane` (from 1), in `lane_costs`.
pub(super) fn lane_cost(lane_costs: &mut [Vec<Cost>], lane: usize, instr: InstrId) -> &mut Cost {
    let costs = &mut lane_costs[lane - 1];
    let index = instr.0 as usize;
    if costs.len() <= index {
        costs.resize(index + 1, Cost::ZERO);
    }
    &mut costs[index]
}
