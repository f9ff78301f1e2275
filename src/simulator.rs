//! The simulation: trace events through the call tracker and the caches
//! into self costs, call arcs and back-dated inclusive costs.

use std::fmt;

use crate::arcs::Arcs;
use crate::attribution::backdate::{Backdate, NoBackdate};
use crate::attribution::calltree::CallTree;
use crate::cache::{Caches, NoMemory, longest_access};
use crate::callstack::{MAX_CONTEXTS, Threads, Transfer};
use crate::config::SimConfig;
use crate::cost::{EventKind, EventSet};
use crate::profile::{ConfigCosts, Profile, Walked};
use crate::program::{InstrId, Program, SymbolError};
use crate::stack_samples::{MarkAt, StackSamples};
use crate::trace::block::{JumpKind, RunMismatch, Step, WalkError};
use crate::trace::{Access, BlockItem, Event, MarkEdge, TraceError, TraceItem, TraceRead};

mod call_sites;
mod charges;
mod known_blocks;
#[cfg(test)]
mod known_runs;
mod lanes;
mod repeats;
mod round_plan;
mod stepper;
mod transfers;

use call_sites::CallSites;
use charges::Charges;
use known_blocks::{Arrival, KnownBlock, KnownBlocks, KnownFor};
use round_plan::RoundPlan;
use stepper::Stepper;
use transfers::check_can_transfer;

/// Events that are well formed but impossible where they stand.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SimError {
    /// A data access, call or return before any instruction of its context.
    NoInstruction(&'static str),
    /// `call` or `ret` right after `call` or `ret`, with no instruction
    /// between.
    Twice(&'static str, &'static str),
    /// `sigreturn` outside a signal handler.
    NoHandler,
    /// A `thread` or `signal` past [`MAX_CONTEXTS`].
    TooMany(&'static str),
    /// A function symbol that cannot be added.
    Symbol(SymbolError),
    /// A block run that does not fit its block.
    Run(String),
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimError::NoInstruction(what) => write!(
                f,
                "{what} with no preceding instruction in its thread or signal handler (expected an `i` line first)"
            ),
            SimError::Twice(what, after) => write!(
                f,
                "{what} right after {after}: an instruction calls or returns only once \
                 (expected an `i` line first)"
            ),
            SimError::NoHandler => {
                write!(
                    f,
                    "`sigreturn` without a `signal` handler running in this thread"
                )
            }
            SimError::TooMany(what) => write!(
                f,
                "{what} past {MAX_CONTEXTS} threads and running signal handlers together: \
                 no recording has that many (Valgrind runs 500 threads at most, and a signal \
                 frame takes over a kilobyte of stack)"
            ),
            SimError::Symbol(err) => err.fmt(f),
            SimError::Run(why) => f.write_str(why),
        }
    }
}

impl std::error::Error for SimError {}

/// Why a simulation gave no profile.
#[derive(Clone, Debug)]
pub enum RunError {
    /// The trace could not be read or simulated.
    Trace(TraceError),
    /// The host refused the memory of the simulated caches.
    Memory(NoMemory),
    /// The host would not start a thread to simulate on (why, as it said).
    NoThread(String),
}

impl From<TraceError> for RunError {
    fn from(err: TraceError) -> RunError {
        RunError::Trace(err)
    }
}

impl From<NoMemory> for RunError {
    fn from(err: NoMemory) -> RunError {
        RunError::Memory(err)
    }
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunError::Trace(err) => err.fmt(f),
            RunError::Memory(err) => err.fmt(f),
            RunError::NoThread(why) => write!(f, "the host would not start a thread: {why}"),
        }
    }
}

impl std::error::Error for RunError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            RunError::Trace(err) => err.source(),
            RunError::Memory(_) | RunError::NoThread(_) => None,
        }
    }
}

/// Simulates a whole trace with `config` on this thread, streaming it
/// event by event (`sim` decodes on another thread: see
/// [`crate::pipeline`]).
pub fn simulate(reader: &mut impl TraceRead, config: SimConfig) -> Result<Profile, RunError> {
    let detached = reader.detached_data();
    if config.backdate() {
        let mut simulator = Simulator::new(config, CallTree::new())?;
        simulator.set_detached_data(detached);
        Ok(run(reader, simulator)?)
    } else {
        let mut simulator = Simulator::new(config, NoBackdate)?;
        simulator.set_detached_data(detached);
        Ok(run(reader, simulator)?)
    }
}

/// Feeds every event of `reader` to `simulator`, then finishes it.
fn run<B: Backdate>(
    reader: &mut impl TraceRead,
    mut simulator: Simulator<B>,
) -> Result<Profile, TraceError> {
    while let Some(item) = reader.next_item()? {
        let done = match item {
            TraceItem::Event(event) => simulator.apply(event),
            TraceItem::Block(block) => simulator.block(&block),
        };
        done.map_err(|err| TraceError::semantic(reader.location(), err))?;
    }
    Ok(simulator.finish())
}

/// The simulation state, generic over the back-dating implementation.
pub struct Simulator<B: Backdate> {
    config: SimConfig,
    program: Program,
    caches: Caches<B::Line>,
    threads: Threads<B::Cursor>,
    arcs: Arcs,
    /// Where the costs go.
    charges: Charges<B>,
    /// The configurations of lanes 1 and on, which differ from `config`
    /// in LL only ([`crate::attribution::lanes`]).
    lane_configs: Vec<SimConfig>,
    instructions: u64,
    /// The blocks of a block-structured trace a run went all through.
    known: KnownBlocks,
    /// The last call of each call site.
    call_sites: CallSites,
    /// Where the steady rounds of a cycle are planned, kept for its
    /// allocation.
    plan: RoundPlan,
    /// How many steady rounds were walked from a plan, for the tests to
    /// tell that they were.
    #[cfg(test)]
    planned_rounds: u64,
    /// Data accesses without an instruction go to `(unknown)`.
    detached_data: bool,
    /// The thread running.
    tid: u32,
}

impl<B: Backdate> Simulator<B> {
    /// Instructions simulated so far.
    pub fn instructions(&self) -> u64 {
        self.instructions
    }

    /// Lets data accesses come without an instruction, as in data-only
    /// traces; they are charged to the `(unknown)` instruction.
    pub fn set_detached_data(&mut self, allowed: bool) {
        self.detached_data = allowed;
    }

    /// A simulation with empty caches and thread 1 running, or the memory
    /// the host refused for the caches.
    pub fn new(config: SimConfig, backdate: B) -> Result<Simulator<B>, NoMemory> {
        Simulator::with_lanes(config, Vec::new(), backdate)
    }

    /// A simulation of `config` with a lane for each of `lanes`, which
    /// differ from it in LL only; `backdate` serves every lane.
    fn with_lanes(
        config: SimConfig,
        lane_configs: Vec<SimConfig>,
        mut backdate: B,
    ) -> Result<Simulator<B>, NoMemory> {
        let threads = Threads::new(&mut backdate);
        let lls: Vec<_> = std::iter::once(&config)
            .chain(&lane_configs)
            .map(SimConfig::ll)
            .collect();
        Ok(Simulator {
            charges: Charges {
                self_cost: Vec::new(),
                backdate,
                lane_costs: vec![Vec::new(); lane_configs.len()],
                samples: config.stack_samples().then(StackSamples::new),
            },
            caches: Caches::new(config.i1(), config.d1(), &lls, config.cache_use())?,
            known: KnownBlocks::new(
                config.i1().line_bits(),
                longest_access(config.i1(), config.d1()),
            ),
            program: Program::with_options(config.skip().clone(), config.inline_functions()),
            config,
            threads,
            arcs: Arcs::new(),
            lane_configs,
            instructions: 0,
            detached_data: false,
            tid: 1,
            call_sites: CallSites::default(),
            plan: RoundPlan::default(),
            #[cfg(test)]
            planned_rounds: 0,
        })
    }

    /// Simulates one event.
    pub fn apply(&mut self, event: Event) -> Result<(), SimError> {
        let now = self.instructions;
        match event {
            Event::Instr { addr, len } => {
                self.instruction(addr, len);
            }
            Event::Data { access, addr, size } => return self.data(access, addr, size),
            Event::Call { target } => return self.call(target),
            Event::Return => {
                let context = self.threads.current();
                check_can_transfer(context, "`ret`")?;
                context.mark_return();
            }
            Event::StackPointer { sp } => self.threads.current().set_sp(sp),
            Event::Thread { tid } => {
                self.tid = tid;
                self.threads
                    .switch(tid, &mut self.charges.backdate, now)
                    .map_err(|_| SimError::TooMany("`thread`"))?
            }
            Event::ThreadExit { tid } => {
                self.threads
                    .exit(tid, &mut self.arcs, &mut self.charges.backdate, now)
            }
            Event::Signal { .. } => self
                .threads
                .enter_handler(&mut self.charges.backdate, now)
                .map_err(|_| SimError::TooMany("`signal`"))?,
            Event::SigReturn => self
                .threads
                .leave_handler(&mut self.arcs, &mut self.charges.backdate, now)
                .map_err(|_| SimError::NoHandler)?,
            Event::Function(symbol) => {
                let symbol = *symbol;
                self.program
                    .add_function(
                        symbol.start,
                        symbol.end,
                        symbol.name,
                        symbol.file,
                        symbol.line,
                    )
                    .map_err(SimError::Symbol)?;
            }
            Event::Line(symbol) => self
                .program
                .add_line(symbol.addr, symbol.line, symbol.file)
                .map_err(SimError::Symbol)?,
            Event::Plt { start, end } => self.program.add_plt(start, end),
            Event::Module(module) => self.program.add_module(&module),
            Event::Mark { edge, name } => {
                if let Some(samples) = &mut self.charges.samples {
                    samples.mark(MarkAt {
                        time: now,
                        thread: self.tid,
                        begin: edge == MarkEdge::Begin,
                        name,
                    });
                }
            }
            Event::Flush => self.caches.flush(&mut self.charges.charger(now)),
            Event::Restart => {
                self.threads
                    .restart(&mut self.arcs, &mut self.charges.backdate, now);
                self.caches.flush(&mut self.charges.charger(now));
            }
            // Heap events do not change the simulation.
            Event::Alloc { .. } | Event::Free { .. } => {}
        }
        Ok(())
    }

    /// One instruction: first what control did to reach it (calls,
    /// returns, jumps into functions), then the instruction itself.
    fn instruction(&mut self, addr: u64, len: u32) -> InstrId {
        let instr = self.arrive(addr, len, None);
        self.execute(instr, addr, len);
        instr
    }

    /// Runs instruction `instr`, reached by sequential flow or after the
    /// control transfers were applied: its fetch and its costs.
    fn execute(&mut self, instr: InstrId, addr: u64, len: u32) {
        let now = self.instructions;
        self.instructions += 1;
        let context = self.threads.current();
        context.last_instr = Some(instr);
        context.last_end = Some(addr.wrapping_add(u64::from(len)));
        context.last_at = now;
        context.last_func = None;
        let id = context.charged(instr);
        let charger = self.charges.charger(now);
        let mut stepper = Stepper::new(
            &mut self.caches,
            charger,
            &mut context.cursor,
            &mut context.cost,
            id,
        );
        stepper.count(id, EventKind::Ir, 1);
        stepper.fetch(id, addr, len, now);
    }

    /// Simulates one run of a block: the call that enters it, its
    /// instructions and accesses, and the return that leaves it.
    pub fn block(&mut self, item: &BlockItem) -> Result<(), SimError> {
        if let Some(target) = item.call {
            self.call(target)?;
        }
        if let Some(sp) = item.run.sp {
            self.threads.current().set_sp(sp);
        }
        let id = item.id as usize;
        match self.known.get(id) {
            Some(block) if !block.arrival.framed => self
                .known_run(&block, item)
                .map_err(|mismatch| SimError::Run(mismatch.0))?,
            // Handed on as a copy without the call, which is made: a copy
            // of the item as it is would be the item itself, which would
            // then have to be in memory on the path most runs take.
            known => self.unusual_run(
                id,
                known,
                BlockItem {
                    call: None,
                    ..*item
                },
            )?,
        }
        if item.leaving == JumpKind::Return {
            let context = self.threads.current();
            check_can_transfer(context, "`ret`")?;
            context.mark_return();
        }
        Ok(())
    }

    /// A run of a block whose instructions are not known yet, or are known
    /// as code without a symbol. With inlined functions shown no block is
    /// made known, as every instruction's inlined calls are looked up.
    #[inline(never)]
    fn unusual_run(
        &mut self,
        id: usize,
        known: Option<KnownBlock>,
        item: BlockItem,
    ) -> Result<(), SimError> {
        match known {
            Some(block) => self.framed_run(id, &block, &item),
            None => {
                let learn = !self.program.shows_inlined();
                self.new_run(id, learn, None, &item).map_err(walk_error)
            }
        }
    }

    /// A run of a block whose instructions are not known yet (or with
    /// inlined functions shown, any run; or the first in a frame of another
    /// function than the block's known runs of code without a symbol): each
    /// is looked up, and if `learn`, once a run went through all of them
    /// they are known, for the frames of that function. `arrived` is the
    /// first instruction when control already arrived there.
    fn new_run(
        &mut self,
        id: usize,
        learn: bool,
        mut arrived: Option<InstrId>,
        item: &BlockItem,
    ) -> Result<(), WalkError<SimError>> {
        let mut seen = Vec::new();
        let walked = item.def.walk(item.run, |step| match step {
            Step::Instr { addr, len } => {
                let instr = match arrived.take() {
                    Some(instr) => {
                        self.execute(instr, addr, len);
                        instr
                    }
                    None => self.instruction(addr, len),
                };
                seen.push(instr);
                Ok(())
            }
            Step::Data { access, addr, size } => self.data(access, addr, size),
        });
        if let (true, Some(&first), Some(instr)) = (
            learn && seen.len() == item.def.instrs.len(),
            seen.first(),
            item.def.instrs.first(),
        ) {
            let func = self.program.instr(first).func;
            let enters = self.program.function(func).starts_at(instr.addr);
            let framed = seen.iter().any(|&instr| self.program.is_framed(instr));
            let entry = self.threads.current().entry(instr.addr);
            let frame = framed.then(|| self.program.frame_function(entry)).flatten();
            // A run that goes on into another function's code enters it
            // there (see `arrive`): such a block is walked instruction by
            // instruction.
            let region = self.program.region(first);
            if seen.iter().any(|&instr| {
                self.program.instr(instr).func != func || self.program.region(instr) != region
            }) {
                return walked;
            }
            let arrival = Arrival {
                enters,
                func,
                framed,
            };
            // Code without a symbol is known with the frame it ran in, once
            // for each function: a copy known again would lose the runs
            // counted in the one it replaced.
            let known_for = match (self.known.get(id), framed, frame) {
                (None, false, _) => KnownFor::Every,
                (None, true, Some(func)) => KnownFor::FirstFrame(entry, func),
                (Some(_), true, Some(func))
                    if self.known.frame(id).is_some_and(|(_, first)| first != func)
                        && self.known.get_for_frame(id, func).is_none() =>
                {
                    KnownFor::OtherFrame(func)
                }
                _ => return walked,
            };
            self.known.learn(id, known_for, item.def, &seen, arrival);
        }
        walked
    }

    /// A run of a block whose instructions are known. Only the first
    /// instruction, where control arrives, needs the full treatment; then
    /// nothing but the caches and the costs change until the block ends, so
    /// the run steps through one hierarchy with one stepper.
    fn known_run(&mut self, block: &KnownBlock, item: &BlockItem) -> Result<(), RunMismatch> {
        if !self.plain_arrival(block) && !self.plain_transfer(block) {
            self.arrive(block.addr, u32::from(block.first_len), Some(block.first));
        }
        self.known_walk(block, item)
    }

    /// A run of a known block of code without a symbol, whose instructions
    /// are those of the function of the frame that runs it (see
    /// [`Program::intern`]): the known ones in frames of the function they
    /// were known in, or of another function they are known for too; else
    /// each is looked up, and they are known for that function from then
    /// on.
    fn framed_run(
        &mut self,
        id: usize,
        block: &KnownBlock,
        item: &BlockItem,
    ) -> Result<(), SimError> {
        let len = u32::from(block.first_len);
        if !self.plain_arrival(block) && !self.plain_transfer(block) {
            self.arrive(block.addr, len, Some(block.first));
        }
        let entry = self.threads.current().entry(block.addr);
        // In a frame of another function than the block was first known in:
        // the block as known for that function, if it is.
        let other = match self.known.frame(id) {
            Some((known_entry, func)) if entry != known_entry => {
                match self.program.frame_function(entry) {
                    Some(frame_function) if frame_function == func => None,
                    frame_function => {
                        Some(frame_function.and_then(|func| self.known.get_for_frame(id, func)))
                    }
                }
            }
            _ => None,
        };
        let walked = match other {
            None => self.known_walk(block, item),
            Some(Some(copy)) => self.known_walk(&copy, item),
            Some(None) => {
                let first = self.program.intern(block.addr, len, entry);
                self.charges.cover(self.program.instrs().len());
                return self
                    .new_run(id, true, Some(first), item)
                    .map_err(walk_error);
            }
        };
        walked.map_err(|mismatch| SimError::Run(mismatch.0))
    }

    /// The walk of a run of `block` once control arrived at its first
    /// instruction.
    #[inline(always)]
    fn known_walk(&mut self, block: &KnownBlock, item: &BlockItem) -> Result<(), RunMismatch> {
        let context = self.threads.current();
        let charge_to = context.charge_to();
        let charger = self.charges.charger(self.instructions);
        let (cursor, cost) = (&mut context.cursor, &mut context.cost);
        let first_charged = charge_to.unwrap_or(block.first);
        let now = &mut self.instructions;
        let end = match &mut self.caches {
            Caches::Narrow(caches) => {
                let stepper = Stepper::new(caches, charger, cursor, cost, first_charged);
                self.known.walk(block, item.run, stepper, charge_to, now)
            }
            Caches::Wide(caches) => {
                let stepper = Stepper::new(caches, charger, cursor, cost, first_charged);
                self.known.walk(block, item.run, stepper, charge_to, now)
            }
        }?;
        context.last_instr = Some(end.last);
        context.last_end = Some(end.last_end);
        context.last_at = self.instructions - 1;
        context.last_func = block.func;
        Ok(())
    }

    /// Whether control reaches the first instruction of `block` the way most
    /// blocks are reached: by a jump within its function and region, not to its entry,
    /// with a stack pointer that leaves no frame. Then [`Simulator::arrive`] would change
    /// nothing but take the stack pointer, which this does.
    #[inline]
    fn plain_arrival(&mut self, block: &KnownBlock) -> bool {
        let context = self.threads.current();
        let Some(last) = context.last_instr else {
            return false;
        };
        if !context.keeps_frames() || block.arrival.enters {
            return false;
        }
        // The last instruction's function is at hand after a known block
        // of named code, whose region is its function's; code without a
        // symbol may lie in another region than its function.
        let same = match context.last_func {
            Some(func) if !block.arrival.framed => func == block.arrival.func,
            _ => same_function_and_region(&self.program, last, block),
        };
        if !same {
            return false;
        }
        context.take_sp();
        true
    }

    /// Whether control reached the first instruction of `block` by a call
    /// or return that [`crate::callstack::Context::plain_transfer`]
    /// applies, which it did, with the jump that a return elsewhere than
    /// its call's code makes: then [`Simulator::arrive`] would do nothing
    /// else, as the block is known and no inlined function is shown (no
    /// block would be known).
    #[inline]
    fn plain_transfer(&mut self, block: &KnownBlock) -> bool {
        let context = self.threads.current();
        let backdate = &mut self.charges.backdate;
        match context.plain_transfer(block.addr, &mut self.arcs, backdate, self.instructions) {
            Transfer::NotPlain => false,
            Transfer::Applied => true,
            Transfer::Strayed { left, sp } => {
                self.stray(left, block.addr, Some(block.first), Some(sp));
                true
            }
        }
    }

    /// A data access outside a block run.
    fn data(&mut self, access: Access, addr: u64, size: u32) -> Result<(), SimError> {
        let context = self.threads.current();
        // When the instruction that made it ran, as its fetch: another
        // thread's may have run since.
        let now = context.last_at;
        let id = match context.last_instr {
            Some(instr) => context.charged(instr),
            None if self.detached_data => {
                let id = self.program.unknown();
                self.charges.cover(id.0 as usize + 1);
                id
            }
            None => return Err(SimError::NoInstruction("data access")),
        };
        let charger = self.charges.charger(now);
        Stepper::new(
            &mut self.caches,
            charger,
            &mut context.cursor,
            &mut context.cost,
            id,
        )
        .data(id, access, addr, size, now);
        Ok(())
    }

    /// Ends the walk: open calls return, and resident lines are charged as
    /// if evicted (L1 first, then LL). How many threads ran, and how many
    /// `sigreturn`s came late ([`Profile::late_sigreturns`]).
    fn end_walk(&mut self) -> (u64, u64) {
        let now = self.instructions;
        let counts = (self.threads.count(), self.threads.late_sigreturns());
        self.threads
            .finish(&mut self.arcs, &mut self.charges.backdate, now);
        self.caches.flush(&mut self.charges.charger(now));
        self.known.add_counts(&mut self.charges.self_cost);
        counts
    }

    /// Ends the run: open calls return, resident lines are charged as if
    /// evicted (L1 first, then LL), and back-dated costs join the arcs.
    pub fn finish(self) -> Profile {
        let mut profiles = self.walked().into_profiles();
        profiles.swap_remove(0)
    }

    /// Ends the run of one configuration, as [`Simulator::finish`] does,
    /// with the profile still to be made.
    pub fn walked(mut self) -> Walked {
        debug_assert!(
            self.lane_configs.is_empty(),
            "lanes finish with finish_lanes"
        );
        let (threads, late_sigreturns) = self.end_walk();
        let (arc_use, tree) = self.charges.backdate.finish(self.instructions);
        let mut arcs = self.arcs.into_vec();
        for (arc, cost) in arcs.iter_mut().zip(&arc_use) {
            arc.inclusive += cost;
        }
        Walked {
            program: self.program,
            runs: vec![ConfigCosts {
                events: EventSet::new(self.config.cache_use()),
                config: self.config,
                self_cost: self.charges.self_cost,
                arcs,
                tree,
                threads,
                late_sigreturns,
                samples: self.charges.samples,
            }],
        }
    }
}

/// Whether `last` is in the function and the region of `block`'s first
/// instruction: a jump from one region to another is a call.
#[cold]
#[inline(never)]
fn same_function_and_region(program: &Program, last: InstrId, block: &KnownBlock) -> bool {
    program.instr(last).func == block.arrival.func
        && program.region(last) == program.region(block.first)
}

/// The error a walk of a block run stopped at.
fn walk_error(err: WalkError<SimError>) -> SimError {
    match err {
        WalkError::Step(err) => err,
        WalkError::Mismatch(mismatch) => SimError::Run(mismatch.0),
    }
}

#[cfg(test)]
mod tests;
