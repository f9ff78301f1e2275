//! Call stacks: one per thread, and a fresh isolated one per signal handler.
//!
//! Inclusive costs of immediate events use Callgrind's difference method:
//! each context sums every cost charged while it runs; a frame remembers
//! that sum when it is entered and adds the difference to its arc when it
//! returns. Recursion thus counts once per active frame, as in Callgrind.
//!
//! A `ret` pops nothing at once: the next instruction of the context shows
//! where control went. If that address is the return address of some frame,
//! that frame and every frame above it return (a longjmp or an unwinding
//! exception skips frames this way); otherwise the innermost frame returns.
//! A `ret` with no frame pops nothing.

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

/// A thread's stack, or a signal handler's.
pub struct Context<C> {
    frames: Vec<Frame>,
    /// Sum of the immediate costs charged while this context ran.
    pub cost: Cost,
    /// The most recent instruction, which data accesses and calls belong to.
    pub last_instr: Option<InstrId>,
    return_pending: bool,
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
            return_pending: false,
            root_entry: None,
            cursor,
        }
    }

    /// Number of active calls.
    pub fn depth(&self) -> usize {
        self.frames.len()
    }

    /// True after a `ret`, until the next instruction of this context.
    pub fn return_pending(&self) -> bool {
        self.return_pending
    }

    /// Marks the most recent instruction as a return.
    pub fn mark_return(&mut self) {
        self.return_pending = true;
    }

    /// The entry address of the code about to run at `addr`: the target of
    /// the innermost call, or the context's first instruction.
    pub fn entry(&mut self, addr: u64) -> u64 {
        match self.frames.last() {
            Some(frame) => frame.entry,
            None => *self.root_entry.get_or_insert(addr),
        }
    }

    /// Enters a call along `arc`.
    pub fn push<B: Backdate<Cursor = C>>(
        &mut self,
        arc: ArcId,
        return_addr: u64,
        entry: u64,
        backdate: &mut B,
        now: u64,
    ) {
        backdate.enter(&mut self.cursor, arc, now);
        self.frames.push(Frame {
            arc,
            return_addr,
            entry,
            enter: self.cost,
        });
    }

    /// Completes a pending return now that the next instruction is at `addr`.
    pub fn complete_return<B: Backdate<Cursor = C>>(
        &mut self,
        addr: u64,
        arcs: &mut Arcs,
        backdate: &mut B,
        now: u64,
    ) {
        self.return_pending = false;
        let keep = match self.frames.iter().rposition(|f| f.return_addr == addr) {
            Some(index) => index,
            None => self.frames.len().saturating_sub(1),
        };
        while self.frames.len() > keep {
            self.pop(arcs, backdate, now);
        }
    }

    /// Returns from every active call, innermost first.
    pub fn unwind<B: Backdate<Cursor = C>>(&mut self, arcs: &mut Arcs, backdate: &mut B, now: u64) {
        self.return_pending = false;
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
