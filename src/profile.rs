//! The result of a simulation: everything the writers need.

use crate::arcs::Arc;
use crate::backdate::TreeStats;
use crate::config::SimConfig;
use crate::cost::{Cost, EventSet};
use crate::program::{FnId, InstrId, Program};
use crate::stack_samples::StackSamples;

/// Self costs per instruction, call arcs with inclusive costs, and totals.
pub struct Profile {
    pub config: SimConfig,
    pub events: EventSet,
    pub program: Program,
    /// Self cost of every instruction, indexed by [`InstrId`].
    pub self_cost: Vec<Cost>,
    /// Every call arc, indexed by [`crate::arcs::ArcId`].
    pub arcs: Vec<Arc>,
    /// Back-dating tree statistics, when back-dating was on.
    pub tree: Option<TreeStats>,
    /// Number of threads the trace ran.
    pub threads: usize,
    /// Sum of all self costs.
    pub totals: Cost,
    /// Bytes per loading stack over time, when they were collected.
    pub samples: Option<StackSamples>,
}

impl Profile {
    /// Collects a finished simulation and sums its totals.
    pub fn new(
        events: EventSet,
        config: SimConfig,
        program: Program,
        self_cost: Vec<Cost>,
        arcs: Vec<Arc>,
        tree: Option<TreeStats>,
        threads: usize,
    ) -> Profile {
        let mut totals = Cost::ZERO;
        for cost in &self_cost {
            totals += cost;
        }
        Profile {
            config,
            events,
            program,
            self_cost,
            arcs,
            tree,
            threads,
            totals,
            samples: None,
        }
    }

    /// The self cost of `instr`.
    pub fn instr_cost(&self, instr: InstrId) -> &Cost {
        &self.self_cost[instr.0 as usize]
    }

    /// Self cost of every function, indexed by [`FnId`].
    pub fn function_self_costs(&self) -> Vec<Cost> {
        let mut costs = vec![Cost::ZERO; self.program.functions().len()];
        for (instr, cost) in self.program.instrs().iter().zip(&self.self_cost) {
            costs[instr.func.0 as usize] += cost;
        }
        costs
    }

    /// The function an arc is called from.
    pub fn caller(&self, arc: &Arc) -> FnId {
        self.program.instr(arc.call_site).func
    }
}
