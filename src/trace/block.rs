//! Blocks: straight-line code described once, and the runs of it that make
//! up a recorded or binary trace.
//!
//! A block is what Valgrind calls a superblock with chasing off: consecutive
//! instructions ending at a branch. Its description lists each instruction
//! and, in program order, the instruction's data accesses and side exits.
//! A run of the block gives only what varies: the stack pointer on entry,
//! the side exit taken (if any), which guarded accesses happened, and the
//! addresses of the accesses that happened. [`Expander`] turns runs back
//! into trace [`Event`]s, deriving calls and returns from how blocks end.

use std::ops::Range;

use rustc_hash::FxHashMap;

use super::{Access, Event};

/// How control leaves a block or side exit, as Valgrind's jump kinds say.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum JumpKind {
    /// A jump or fall-through.
    #[default]
    Boring,
    /// A call: the next block of the thread is the callee.
    Call,
    /// A return.
    Return,
    /// A system call, client request or anything else.
    Other,
}

impl JumpKind {
    /// The code used in the tool's stream and the binary format.
    pub fn code(self) -> u8 {
        match self {
            JumpKind::Boring => 0,
            JumpKind::Call => 1,
            JumpKind::Return => 2,
            JumpKind::Other => 3,
        }
    }

    /// The kind with code `code` (two bits).
    pub fn from_code(code: u8) -> JumpKind {
        match code & 3 {
            0 => JumpKind::Boring,
            1 => JumpKind::Call,
            2 => JumpKind::Return,
            _ => JumpKind::Other,
        }
    }
}

/// One item of an instruction, in program order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Item {
    /// A data access; a guarded one may not happen.
    Access {
        access: Access,
        size: u16,
        guarded: bool,
    },
    /// A side exit: when taken, the rest of the block does not run.
    Exit { kind: JumpKind },
}

/// One instruction of a block.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct BlockInstr {
    pub addr: u64,
    pub len: u8,
    /// Its items, as a range of [`BlockDef::items`].
    pub items: Range<usize>,
}

/// The static description of a block.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct BlockDef {
    pub instrs: Vec<BlockInstr>,
    pub items: Vec<Item>,
    /// How the block ends when it runs to its end.
    pub end: JumpKind,
}

impl BlockDef {
    /// Address of the first instruction.
    pub fn addr(&self) -> u64 {
        self.instrs.first().map_or(0, |instr| instr.addr)
    }

    /// Number of guarded accesses.
    pub fn guarded(&self) -> usize {
        self.items
            .iter()
            .filter(|item| matches!(item, Item::Access { guarded: true, .. }))
            .count()
    }

    /// For each side exit, in order, the instructions a run that takes it
    /// runs: up to the exit's own.
    pub fn exit_instrs(&self) -> Vec<u64> {
        self.instrs
            .iter()
            .enumerate()
            .flat_map(|(index, instr)| {
                let exits = self.items[instr.items.clone()]
                    .iter()
                    .filter(|item| matches!(item, Item::Exit { .. }));
                exits.map(move |_| index as u64 + 1)
            })
            .collect()
    }

    /// Number of access items (each run gives an address for those that
    /// happen).
    pub fn accesses(&self) -> usize {
        self.items
            .iter()
            .filter(|item| matches!(item, Item::Access { .. }))
            .count()
    }
}

/// What varies between runs of a block.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BlockRun {
    /// The stack pointer on entry, when the trace has it.
    pub sp: Option<u64>,
    /// The side exit taken, counting exits in item order.
    pub exit: Option<u32>,
    /// Whether each guarded access happened, in item order.
    pub guards: Vec<bool>,
    /// Addresses of the accesses that happened, in item order.
    pub addrs: Vec<u64>,
}

/// A run borrowed from wherever it is kept: a reader's buffer, or a batch
/// handed between threads.
#[derive(Clone, Copy, Debug)]
pub struct RunRef<'a> {
    pub sp: Option<u64>,
    pub exit: Option<u32>,
    pub guards: &'a [bool],
    pub addrs: &'a [u64],
}

impl BlockRun {
    /// The run, borrowed.
    pub fn view(&self) -> RunRef<'_> {
        RunRef {
            sp: self.sp,
            exit: self.exit,
            guards: &self.guards,
            addrs: &self.addrs,
        }
    }

    /// Empties the run for reuse.
    pub fn clear(&mut self) {
        self.sp = None;
        self.exit = None;
        self.guards.clear();
        self.addrs.clear();
    }
}

/// A run that does not fit its block's description.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunMismatch(pub String);

impl<E> From<RunMismatch> for WalkError<E> {
    fn from(mismatch: RunMismatch) -> Self {
        WalkError::Mismatch(mismatch)
    }
}

/// Where a walk is in a run's guards, addresses and side exits: how a
/// run's arrays fit its block's items, the same for every walk of a run.
/// The walk names the block in its errors.
pub struct RunCursor<'a> {
    guards: std::slice::Iter<'a, bool>,
    addrs: std::slice::Iter<'a, u64>,
    /// Side exits left to pass before the one taken; none is taken when it
    /// is past the last.
    exits_left: u32,
}

impl<'a> RunCursor<'a> {
    /// At the start of `run`.
    #[inline(always)]
    pub fn new(run: RunRef<'a>) -> RunCursor<'a> {
        RunCursor {
            guards: run.guards.iter(),
            addrs: run.addrs.iter(),
            exits_left: run.exit.unwrap_or(u32::MAX),
        }
    }

    /// Whether the block's next guarded access happened.
    #[inline(always)]
    pub fn guard(&mut self) -> bool {
        self.guards.next().copied().unwrap_or(false)
    }

    /// The address of the block's next access that happened; None when the
    /// run has no address left (see [`RunMismatch::too_few_addresses`]).
    #[inline(always)]
    pub fn address(&mut self) -> Option<u64> {
        self.addrs.next().copied()
    }

    /// Whether the run leaves by the block's next side exit.
    #[inline(always)]
    pub fn exits_here(&mut self) -> bool {
        if self.exits_left == 0 {
            return true;
        }
        self.exits_left -= 1;
        false
    }

    /// At the end of the walk of the block at `block`: an error where the
    /// run has addresses left.
    #[inline(always)]
    pub fn finish(mut self, block: u64) -> Result<(), RunMismatch> {
        match self.addrs.next() {
            Some(_) => Err(RunMismatch::too_many_addresses(block)),
            None => Ok(()),
        }
    }
}

impl RunMismatch {
    /// A run of the block at `addr` ran out of addresses.
    #[cold]
    pub fn too_few_addresses(addr: u64) -> RunMismatch {
        RunMismatch(format!(
            "the run of the block at {addr:#x} has too few addresses"
        ))
    }

    /// A run of the block at `addr` has addresses left when its walk ended.
    #[cold]
    fn too_many_addresses(addr: u64) -> RunMismatch {
        RunMismatch(format!(
            "the run of the block at {addr:#x} has more addresses than its accesses"
        ))
    }
}

/// One step of a run: an instruction, or a data access that happened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    Instr {
        addr: u64,
        len: u32,
    },
    Data {
        access: Access,
        addr: u64,
        size: u32,
    },
}

impl BlockDef {
    /// How a run leaves the block: by the side exit it took, or the end.
    pub fn leaving(&self, run: RunRef) -> JumpKind {
        let Some(taken) = run.exit else {
            return self.end;
        };
        let mut exits = self.items.iter().filter_map(|item| match item {
            Item::Exit { kind } => Some(*kind),
            Item::Access { .. } => None,
        });
        exits.nth(taken as usize).unwrap_or(self.end)
    }

    /// Calls `step` for every instruction of `run` and every access that
    /// happened, in order, up to the side exit taken.
    #[inline]
    pub fn walk<E>(
        &self,
        run: RunRef,
        mut step: impl FnMut(Step) -> Result<(), E>,
    ) -> Result<(), WalkError<E>> {
        let mut cursor = RunCursor::new(run);
        'instrs: for instr in &self.instrs {
            step(Step::Instr {
                addr: instr.addr,
                len: u32::from(instr.len),
            })
            .map_err(WalkError::Step)?;
            for item in &self.items[instr.items.clone()] {
                match *item {
                    Item::Access {
                        access,
                        size,
                        guarded,
                    } => {
                        if guarded && !cursor.guard() {
                            continue;
                        }
                        let Some(addr) = cursor.address() else {
                            return Err(RunMismatch::too_few_addresses(self.addr()).into());
                        };
                        step(Step::Data {
                            access,
                            addr,
                            size: u32::from(size),
                        })
                        .map_err(WalkError::Step)?;
                    }
                    Item::Exit { .. } => {
                        if cursor.exits_here() {
                            break 'instrs;
                        }
                    }
                }
            }
        }
        cursor.finish(self.addr())?;
        Ok(())
    }
}

/// Why a walk stopped: the run does not fit, or a step failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WalkError<E> {
    Mismatch(RunMismatch),
    Step(E),
}

/// Derives calls from how blocks end: a block ending in a call makes the
/// next block of the same thread the callee, so the call is given just
/// before that block, when its target is known. A signal handler delivered
/// in between runs first: the call waits until the handler returns, as
/// Callgrind keeps it with the interrupted code.
#[derive(Default)]
pub struct Expander {
    thread: u32,
    /// Whether the running thread's last block ended in a call.
    calling: bool,
    /// The running thread's signal handlers.
    handlers: Handlers,
    /// The same for the other threads.
    others: FxHashMap<u32, (bool, Handlers)>,
}

/// A thread's signal handlers, as far as calls go.
#[derive(Default)]
struct Handlers {
    /// How many run, nested; a handler left by a jump (`siglongjmp`) never
    /// returns and stays counted, which keeps the later ones apart from it.
    running: u32,
    /// The handlers delivered between a call and its callee, by their
    /// count of running handlers; innermost last.
    interrupting: Vec<u32>,
}

impl Expander {
    /// Starting in thread 1.
    pub fn new() -> Expander {
        Expander {
            thread: 1,
            ..Expander::default()
        }
    }

    /// The running thread.
    pub fn thread(&self) -> u32 {
        self.thread
    }

    /// Follows a thread switch given by the trace.
    pub fn switch(&mut self, tid: u32) {
        if tid != self.thread {
            let handlers = std::mem::take(&mut self.handlers);
            self.others.insert(self.thread, (self.calling, handlers));
            (self.calling, self.handlers) = self.others.remove(&tid).unwrap_or_default();
            self.thread = tid;
        }
    }

    /// Forgets what thread `tid` had in flight: it has ended, and a thread
    /// given its id later starts afresh.
    pub fn exit(&mut self, tid: u32) {
        if tid == self.thread {
            self.calling = false;
            self.handlers = Handlers::default();
        } else {
            self.others.remove(&tid);
        }
    }

    /// Forgets calls in flight, after recording was off for a while.
    pub fn interrupt(&mut self) {
        self.calling = false;
        self.handlers = Handlers::default();
        self.others.clear();
    }

    /// A signal handler starts in the running thread; a call whose callee
    /// has not run yet waits for it to return.
    pub fn signal(&mut self) {
        let handlers = &mut self.handlers;
        handlers.running += 1;
        if std::mem::take(&mut self.calling) {
            handlers.interrupting.push(handlers.running);
        }
    }

    /// The running thread's innermost signal handler returns; the call it
    /// interrupted, if any, enters the next block.
    pub fn sigreturn(&mut self) {
        let handlers = &mut self.handlers;
        self.calling = handlers.interrupting.last() == Some(&handlers.running);
        if self.calling {
            handlers.interrupting.pop();
        }
        handlers.running = handlers.running.saturating_sub(1);
    }

    /// A run of `def` starts: the target of the call that enters it, if the
    /// thread's previous block ended in a call.
    #[inline]
    pub fn enter(&mut self, def: &BlockDef) -> Option<u64> {
        std::mem::take(&mut self.calling).then(|| def.addr())
    }

    /// An instruction of a record of its own starts: the target of the call
    /// that enters it, if the thread's previous block ended in a call (a
    /// block whose run a fault stopped part-way is written that way).
    #[inline]
    pub fn enter_instr(&mut self, addr: u64) -> Option<u64> {
        std::mem::take(&mut self.calling).then_some(addr)
    }

    /// The run ended by `leaving`.
    #[inline]
    pub fn leave(&mut self, leaving: JumpKind) {
        self.calling = leaving == JumpKind::Call;
    }

    /// The events of one run of `def`, in order.
    pub fn expand(
        &mut self,
        def: &BlockDef,
        run: &BlockRun,
        out: &mut Vec<Event>,
    ) -> Result<(), RunMismatch> {
        if let Some(target) = self.enter(def) {
            out.push(Event::Call { target });
        }
        if let Some(sp) = run.sp {
            out.push(Event::StackPointer { sp });
        }
        let walked = def.walk(run.view(), |step| {
            out.push(match step {
                Step::Instr { addr, len } => Event::Instr { addr, len },
                Step::Data { access, addr, size } => Event::Data { access, addr, size },
            });
            Ok::<(), ()>(())
        });
        if let Err(WalkError::Mismatch(mismatch)) = walked {
            return Err(mismatch);
        }
        let leaving = def.leaving(run.view());
        if leaving == JumpKind::Return {
            out.push(Event::Return);
        }
        self.leave(leaving);
        Ok(())
    }
}

#[cfg(test)]
impl BlockDef {
    /// A block of one instruction, 4 bytes at `addr`, that reads 8 bytes,
    /// left by a jump of kind `end`: the simplest block that touches memory.
    pub(crate) fn one_read(addr: u64, end: JumpKind) -> BlockDef {
        BlockDef {
            instrs: vec![BlockInstr {
                addr,
                len: 4,
                items: 0..1,
            }],
            items: vec![Item::Access {
                access: Access::Read,
                size: 8,
                guarded: false,
            }],
            end,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `i 100 4 (read 8)`, `i 104 2 (exit: boring)`, `i 106 5 (write 4)`;
    /// the block ends with a call.
    fn block() -> BlockDef {
        BlockDef {
            instrs: vec![
                BlockInstr {
                    addr: 0x100,
                    len: 4,
                    items: 0..1,
                },
                BlockInstr {
                    addr: 0x104,
                    len: 2,
                    items: 1..2,
                },
                BlockInstr {
                    addr: 0x106,
                    len: 5,
                    items: 2..3,
                },
            ],
            items: vec![
                Item::Access {
                    access: Access::Read,
                    size: 8,
                    guarded: false,
                },
                Item::Exit {
                    kind: JumpKind::Boring,
                },
                Item::Access {
                    access: Access::Write,
                    size: 4,
                    guarded: true,
                },
            ],
            end: JumpKind::Call,
        }
    }

    #[test]
    fn a_run_to_the_end_calls_the_next_block_of_its_thread() {
        let def = block();
        let mut expander = Expander::new();
        let mut out = Vec::new();
        let run = BlockRun {
            sp: Some(0x7000),
            exit: None,
            guards: vec![true],
            addrs: vec![0x2000, 0x3000],
        };
        expander.expand(&def, &run, &mut out).unwrap();
        assert_eq!(out.len(), 6);
        assert_eq!(out[0], Event::StackPointer { sp: 0x7000 });
        assert_eq!(
            out[5],
            Event::Data {
                access: Access::Write,
                addr: 0x3000,
                size: 4
            }
        );
        // Another thread runs first: the call belongs to thread 1.
        out.clear();
        expander.switch(2);
        let skipped = BlockRun {
            exit: Some(0),
            addrs: vec![0x2000],
            ..BlockRun::default()
        };
        expander.expand(&def, &skipped, &mut out).unwrap();
        assert!(!out.iter().any(|e| matches!(e, Event::Call { .. })));
        // Thread 2 left by the side exit after 2 instructions: no call.
        assert_eq!(out.len(), 3);
        out.clear();
        expander.switch(1);
        expander.expand(&def, &skipped, &mut out).unwrap();
        assert_eq!(out[0], Event::Call { target: 0x100 });
    }

    #[test]
    fn runs_that_do_not_fit_are_refused() {
        let def = block();
        let mut expander = Expander::new();
        let mut out = Vec::new();
        let short = BlockRun::default();
        assert!(expander.expand(&def, &short, &mut out).is_err());
        let long = BlockRun {
            exit: Some(0),
            addrs: vec![1, 2],
            ..BlockRun::default()
        };
        assert!(expander.expand(&def, &long, &mut out).is_err());
    }
}
