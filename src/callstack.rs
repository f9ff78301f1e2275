//! Call stacks: one per thread, and a fresh isolated one per signal handler.
//!
//! Inclusive costs of immediate events use Callgrind's difference method:
//! each context sums every cost charged while it runs; a frame remembers
//! that sum when it is entered and adds the difference to its arc when it
//! returns. Recursion thus counts once per active frame, as in Callgrind.
//!
//! Calls and returns take effect at the next instruction of the context, so
//! that every access the call or return instruction makes (pushing or
//! popping the return address) stays with that instruction's frame. A `ret`
//! then lets the next instruction show where control went: if its address
//! is the return address of some frame, that frame and every frame above it
//! return (a longjmp or an unwinding exception skips frames this way);
//! otherwise the innermost frame returns. A `ret` with no frame pops
//! nothing.

use rustc_hash::FxHashMap;

use crate::arcs::{ArcId, Arcs};
use crate::backdate::Backdate;
use crate::cost::Cost;
use crate::program::InstrId;

/// One active call.
#[derive(Clone, Debug)]
struct Frame {
    arc: ArcId,
    /// Address of the instruction after the call site.
    return_addr: u64,
    /// Address the call jumped to.
    entry: u64,
    /// The context's cost when the call was made.
    enter: Cost,
}

/// What the most recent instruction did to the stack, applied when the
/// next instruction of the context runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pending {
    None,
    Call {
        arc: ArcId,
        return_addr: u64,
        entry: u64,
    },
    Return,
}

/// A thread's stack, or a signal handler's.
pub struct Context<C> {
    frames: Vec<Frame>,
    /// Sum of the immediate costs charged while this context ran.
    pub cost: Cost,
    /// The most recent instruction, which data accesses and calls belong to.
    pub last_instr: Option<InstrId>,
    pending: Pending,
    /// Address of the first instruction, the entry of the outermost code.
    root_entry: Option<u64>,
    /// Position in the back-dating tree.
    pub cursor: C,
}

impl<C> Context<C> {
    fn new(cursor: C) -> Context<C> {
        Context {
            frames: Vec::new(),
            cost: Cost::ZERO,
            last_instr: None,
            pending: Pending::None,
            root_entry: None,
            cursor,
        }
    }

    /// Number of active calls.
    pub fn depth(&self) -> usize {
        self.frames.len()
    }

    /// The call or return the most recent instruction made, not yet applied.
    pub fn pending(&self) -> Pending {
        self.pending
    }

    /// Records that the most recent instruction calls along `arc`.
    pub fn mark_call(&mut self, arc: ArcId, return_addr: u64, entry: u64) {
        self.pending = Pending::Call {
            arc,
            return_addr,
            entry,
        };
    }

    /// Records that the most recent instruction returns.
    pub fn mark_return(&mut self) {
        self.pending = Pending::Return;
    }

    /// Applies the pending call or return now that the next instruction runs
    /// at `addr`; returns the entry address of the code it runs in: the
    /// target of the innermost call, or the context's first instruction.
    #[inline]
    pub fn begin_instruction<B: Backdate<Cursor = C>>(
        &mut self,
        addr: u64,
        arcs: &mut Arcs,
        backdate: &mut B,
        now: u64,
    ) -> u64 {
        match std::mem::replace(&mut self.pending, Pending::None) {
            Pending::None => {}
            Pending::Call {
                arc,
                return_addr,
                entry,
            } => {
                backdate.enter(&mut self.cursor, arc, now);
                self.frames.push(Frame {
                    arc,
                    return_addr,
                    entry,
                    enter: self.cost,
                });
            }
            Pending::Return => self.complete_return(addr, arcs, backdate, now),
        }
        match self.frames.last() {
            Some(frame) => frame.entry,
            None => *self.root_entry.get_or_insert(addr),
        }
    }

    fn complete_return<B: Backdate<Cursor = C>>(
        &mut self,
        addr: u64,
        arcs: &mut Arcs,
        backdate: &mut B,
        now: u64,
    ) {
        let keep = match self.frames.iter().rposition(|f| f.return_addr == addr) {
            Some(index) => index,
            None => self.frames.len().saturating_sub(1),
        };
        while self.frames.len() > keep {
            self.pop(arcs, backdate, now);
        }
    }

    /// Returns from every active call, innermost first. A call not yet
    /// entered is dropped: its frame would have no cost.
    pub fn unwind<B: Backdate<Cursor = C>>(&mut self, arcs: &mut Arcs, backdate: &mut B, now: u64) {
        self.pending = Pending::None;
        while !self.frames.is_empty() {
            self.pop(arcs, backdate, now);
        }
    }

    fn pop<B: Backdate<Cursor = C>>(&mut self, arcs: &mut Arcs, backdate: &mut B, now: u64) {
        if let Some(frame) = self.frames.pop() {
            arcs.get_mut(frame.arc).inclusive += &(&self.cost - &frame.enter);
            backdate.leave(&mut self.cursor, now);
        }
    }
}

struct Thread<C> {
    /// The thread's own context first, then nested signal handlers.
    contexts: Vec<Context<C>>,
}

/// Every thread's contexts, and which thread runs.
pub struct Threads<C> {
    threads: Vec<Thread<C>>,
    by_tid: FxHashMap<u32, usize>,
    current: usize,
}

/// `sigreturn` in a thread that is not running a signal handler.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NoHandler;

impl<C> Threads<C> {
    /// Thread 1 running, with an empty stack.
    pub fn new<B: Backdate<Cursor = C>>(backdate: &mut B) -> Threads<C> {
        let mut threads = Threads {
            threads: Vec::new(),
            by_tid: FxHashMap::default(),
            current: 0,
        };
        threads.switch(1, backdate, 0);
        threads
    }

    /// Number of threads seen.
    pub fn count(&self) -> usize {
        self.threads.len()
    }

    /// The running context: the current thread's innermost signal handler,
    /// or the thread itself.
    #[inline]
    pub fn current(&mut self) -> &mut Context<C> {
        let contexts = &mut self.threads[self.current].contexts;
        let last = contexts.len() - 1;
        &mut contexts[last]
    }

    /// Makes `tid` the running thread, creating it on first sight.
    pub fn switch<B: Backdate<Cursor = C>>(&mut self, tid: u32, backdate: &mut B, now: u64) {
        let threads = &mut self.threads;
        self.current = *self.by_tid.entry(tid).or_insert_with(|| {
            threads.push(Thread {
                contexts: vec![Context::new(backdate.root(now))],
            });
            threads.len() - 1
        });
    }

    /// A signal handler starts in the running thread.
    pub fn enter_handler<B: Backdate<Cursor = C>>(&mut self, backdate: &mut B, now: u64) {
        let context = Context::new(backdate.root(now));
        self.threads[self.current].contexts.push(context);
    }

    /// The running thread's innermost signal handler returns; calls it left
    /// open return with it.
    pub fn leave_handler<B: Backdate<Cursor = C>>(
        &mut self,
        arcs: &mut Arcs,
        backdate: &mut B,
        now: u64,
    ) -> Result<(), NoHandler> {
        let contexts = &mut self.threads[self.current].contexts;
        if contexts.len() < 2 {
            return Err(NoHandler);
        }
        if let Some(mut handler) = contexts.pop() {
            handler.unwind(arcs, backdate, now);
            backdate.close(handler.cursor, now);
        }
        Ok(())
    }

    /// Ends the run: every open call returns and every context closes.
    pub fn finish<B: Backdate<Cursor = C>>(self, arcs: &mut Arcs, backdate: &mut B, now: u64) {
        for thread in self.threads {
            for mut context in thread.contexts.into_iter().rev() {
                context.unwind(arcs, backdate, now);
                backdate.close(context.cursor, now);
            }
        }
    }
}
