//! The result of a simulation: everything the writers need.

use std::rc::Rc;

use crate::arcs::Arc;
use crate::attribution::backdate::TreeStats;
use crate::config::SimConfig;
use crate::cost::{Cost, EventSet};
use crate::program::{FnId, InstrId, Program};
use crate::stack_samples::StackSamples;

/// The profiles of one walk of a trace, one per configuration, as the
/// simulating thread hands them over; they share their program once they
/// are profiles.
pub struct Walked {
    /// The program every run of the walk saw.
    pub program: Program,
    /// One per configuration of the walk.
    pub runs: Vec<ConfigCosts>,
}

impl Walked {
    /// The profiles, in the order of the runs.
    pub fn into_profiles(self) -> Vec<Profile> {
        let program = Rc::new(self.program);
        self.runs
            .into_iter()
            .map(|run| Profile::new(Rc::clone(&program), run))
            .collect()
    }
}

/// One configuration's costs from a walk: what a profile holds but its
/// program and totals (see [`Profile`]).
pub struct ConfigCosts {
    pub config: SimConfig,
    pub events: EventSet,
    pub self_cost: Vec<Cost>,
    pub arcs: Vec<Arc>,
    pub tree: Option<TreeStats>,
    pub threads: u64,
    /// See [`Profile::late_sigreturns`].
    pub late_sigreturns: u64,
    pub samples: Option<StackSamples>,
}

/// Self costs per instruction, call arcs with inclusive costs, and totals.
pub struct Profile {
    pub config: SimConfig,
    pub events: EventSet,
    /// Shared by the profiles of one walk ([`crate::attribution::lanes`]).
    pub program: Rc<Program>,
    /// Self cost of every instruction, indexed by [`InstrId`].
    pub self_cost: Vec<Cost>,
    /// Every call arc, indexed by [`crate::arcs::ArcId`]; outputs take
    /// [`Profile::called_arcs`].
    pub arcs: Vec<Arc>,
    /// Back-dating tree statistics, when back-dating was on.
    pub tree: Option<TreeStats>,
    /// Number of threads the trace ran.
    pub threads: u64,
    /// `sigreturn`s of signal handlers that a block had left, which came
    /// all the same (a handler that switched to another coroutine's stack
    /// and was switched back to): what such a handler ran after it was
    /// left runs as a call within the code it came back to, not as a
    /// signal handler.
    pub late_sigreturns: u64,
    /// Sum of all self costs.
    pub totals: Cost,
    /// Bytes per loading stack over time, when they were collected.
    pub samples: Option<StackSamples>,
}

impl Profile {
    /// Collects a finished simulation of `run` and sums its totals.
    pub fn new(program: Rc<Program>, run: ConfigCosts) -> Profile {
        let mut totals = Cost::ZERO;
        for cost in &run.self_cost {
            totals += cost;
        }
        Profile {
            config: run.config,
            events: run.events,
            program,
            self_cost: run.self_cost,
            arcs: run.arcs,
            tree: run.tree,
            threads: run.threads,
            late_sigreturns: run.late_sigreturns,
            totals,
            samples: run.samples,
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

    /// How many functions the run entered: those it ran an instruction of
    /// (inlined ones included), skipped ones too, whose instructions are
    /// charged to their callers. Functions a trace only declares are left
    /// out.
    pub fn entered_functions(&self) -> usize {
        let program = &self.program;
        let mut entered = vec![false; program.functions().len()];
        for (id, instr) in program.instrs().iter().enumerate() {
            entered[instr.func.0 as usize] = true;
            for call in program.inlined(InstrId(id as u32)) {
                entered[call.func.0 as usize] = true;
            }
        }
        entered.iter().filter(|&&entered| entered).count()
    }

    /// The arcs called along, with their indices. An arc can count no call:
    /// a hand-written trace's `call` whose next instruction is not at its
    /// target counts on the arc of the code that runs instead.
    pub fn called_arcs(&self) -> impl Iterator<Item = (usize, &Arc)> {
        self.arcs
            .iter()
            .enumerate()
            .filter(|(_, arc)| arc.calls > 0)
    }

    /// The function an arc is called from.
    pub fn caller(&self, arc: &Arc) -> FnId {
        self.program.instr(arc.call_site).func
    }
}
