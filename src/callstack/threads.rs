//! Every thread's call stacks: its own context and one per signal handler
//! it runs, which thread runs, and the handlers a block leaves.

use rustc_hash::FxHashMap;

use super::Context;
use crate::arcs::Arcs;
use crate::attribution::backdate::Backdate;
use crate::trace::ThreadCount;

/// Every thread's contexts, and which thread runs. The running thread's
/// contexts are at hand, so that every event reaches the running one with
/// a single check; the other threads' wait in `parked` until they run.
pub struct Threads<C> {
    /// The running thread's own context first, then its nested signal
    /// handlers: the last one runs.
    running: Vec<Context<C>>,
    /// Per thread, in order of first sight: its contexts while it does not
    /// run (the running thread's entry is empty).
    parked: Vec<Vec<Context<C>>>,
    by_tid: FxHashMap<u32, usize>,
    /// The threads that ran.
    count: ThreadCount,
    /// The running thread's index in `parked`.
    current: usize,
    /// Per thread, like `parked`: how many of its signal handlers ended
    /// when a block left them ([`Threads::leave_jumped_handlers`]) and may
    /// still come to their `sigreturn`, as one does that switched to
    /// another stack (`swapcontext`) and was switched back to later.
    left_handlers: Vec<u32>,
    /// `sigreturn`s that came after their handler was left.
    late_sigreturns: u64,
    /// Every thread's contexts, counted.
    contexts: usize,
}

/// `sigreturn` in a thread that is not running a signal handler, nor has
/// left one whose `sigreturn` has not come.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NoHandler;

/// Contexts at most, every thread's own and one per signal handler
/// running, together. A recording has at most 500 threads (Valgrind's
/// default limit), whose ids it reuses, and a signal frame holds the
/// interrupted code's registers, over a kilobyte of stack on x86-64: a
/// trace with more is made up, and would take memory without bound (a
/// few hundred bytes a context).
pub const MAX_CONTEXTS: usize = 100_000;

/// A thread or a signal handler that would make more than
/// [`MAX_CONTEXTS`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TooMany;

impl<C> Threads<C> {
    /// Thread 1 running, with an empty stack.
    pub fn new<B: Backdate<Cursor = C>>(backdate: &mut B) -> Threads<C> {
        let mut by_tid = FxHashMap::default();
        by_tid.insert(1, 0);
        Threads {
            running: vec![Context::new(backdate.root(0))],
            parked: vec![Vec::new()],
            by_tid,
            count: ThreadCount::default(),
            current: 0,
            left_handlers: vec![0],
            late_sigreturns: 0,
            contexts: 1,
        }
    }

    /// Number of threads that ran, as `info` counts them: a thread id
    /// reused after its thread ended counts again.
    pub fn count(&self) -> u64 {
        self.count.started()
    }

    /// The running context: the current thread's innermost signal handler,
    /// or the thread itself.
    #[inline]
    pub fn current(&mut self) -> &mut Context<C> {
        match self.running.last_mut() {
            Some(context) => context,
            None => unreachable!("the running thread has a context"),
        }
    }

    /// Makes `tid` the running thread, creating it on first sight.
    // Out of line, as `enter_handler`: rare beside the batch loop that
    // calls it, whose code it would otherwise grow (traces/sort.lgt's
    // simulating thread: 417.3 M host instructions inline, 414.2 M not).
    #[inline(never)]
    pub fn switch<B: Backdate<Cursor = C>>(
        &mut self,
        tid: u32,
        backdate: &mut B,
        now: u64,
    ) -> Result<(), TooMany> {
        let index = match self.by_tid.get(&tid) {
            Some(&index) => index,
            None => {
                self.add_context()?;
                self.parked.push(vec![Context::new(backdate.root(now))]);
                self.left_handlers.push(0);
                self.by_tid.insert(tid, self.parked.len() - 1);
                self.parked.len() - 1
            }
        };
        self.count.run(tid);
        if index != self.current {
            std::mem::swap(&mut self.running, &mut self.parked[self.current]);
            std::mem::swap(&mut self.running, &mut self.parked[index]);
            self.current = index;
        }
        Ok(())
    }

    /// Counts one more context, if there may be one.
    fn add_context(&mut self) -> Result<(), TooMany> {
        if self.contexts >= MAX_CONTEXTS {
            return Err(TooMany);
        }
        self.contexts += 1;
        Ok(())
    }

    /// Thread `tid` has ended: every call it left open returns and its
    /// contexts close, innermost first, as at the end of the run. A thread
    /// given the same id later (Valgrind reuses the ids of ended threads)
    /// starts with an empty stack. Which thread runs does not change.
    pub fn exit<B: Backdate<Cursor = C>>(
        &mut self,
        tid: u32,
        arcs: &mut Arcs,
        backdate: &mut B,
        now: u64,
    ) {
        let Some(&index) = self.by_tid.get(&tid) else {
            return;
        };
        let contexts = if index == self.current {
            &mut self.running
        } else {
            &mut self.parked[index]
        };
        self.contexts -= contexts.len() - 1;
        start_afresh(contexts, 1, arcs, backdate, now);
        self.left_handlers[index] = 0;
        self.count.end(tid);
    }

    /// Recording starts again after a part of the run it left out: in
    /// every thread, each call left open returns and each context closes,
    /// innermost first, as Callgrind unwinds every thread whenever
    /// instrumentation is switched on or off. Each context starts again
    /// empty, with no instruction before its next one: a signal handler
    /// still runs, and its `sigreturn` is still to come (the recorder
    /// records signals while recording is off). Which thread runs does not
    /// change.
    pub fn restart<B: Backdate<Cursor = C>>(
        &mut self,
        arcs: &mut Arcs,
        backdate: &mut B,
        now: u64,
    ) {
        // The running thread's entry in `parked` is empty.
        for contexts in std::iter::once(&mut self.running).chain(&mut self.parked) {
            // A recording restarts at its start, before anything ran: its
            // contexts would close with no cost, and the back-dating tree
            // would count new roots.
            if contexts.iter().all(|context| context.last_instr.is_none()) {
                continue;
            }
            let depth = contexts.len();
            start_afresh(contexts, depth, arcs, backdate, now);
        }
    }

    /// A signal handler starts in the running thread. Until its first
    /// block, the innermost frame of the code it interrupts bounds it.
    #[inline(never)]
    pub fn enter_handler<B: Backdate<Cursor = C>>(
        &mut self,
        backdate: &mut B,
        now: u64,
    ) -> Result<(), TooMany> {
        self.add_context()?;
        // The thread's own frames, not a handler's, which may lie on the
        // same alternate stack: a handler that interrupts another takes
        // over its floor.
        let in_handler = self.running.len() > 1;
        let interrupted = self.current();
        // A stack pointer given for the thread's next instruction is the
        // handler's, which runs it.
        let sp = interrupted.sp.take();
        let interrupted_top = interrupted.leave_above;
        let floor = match in_handler {
            true => interrupted.has_floor.then_some(interrupted.handler_floor),
            false => interrupted.frames.first().and_then(|frame| frame.sp),
        };
        let mut context = Context::new(backdate.root(now));
        context.sp = sp;
        context.handler_top = interrupted_top;
        context.leave_above = interrupted_top;
        context.handler_floor = floor.unwrap_or(0);
        context.has_floor = floor.is_some();
        self.running.push(context);
        Ok(())
    }

    /// The running thread's innermost signal handler returns; calls it left
    /// open return with it. Without one running, the `sigreturn` is that
    /// of a handler a block left earlier, which has ended already: it
    /// changes nothing.
    pub fn leave_handler<B: Backdate<Cursor = C>>(
        &mut self,
        arcs: &mut Arcs,
        backdate: &mut B,
        now: u64,
    ) -> Result<(), NoHandler> {
        if self.end_handler(arcs, backdate, now) {
            return Ok(());
        }
        let left = &mut self.left_handlers[self.current];
        *left = left.checked_sub(1).ok_or(NoHandler)?;
        self.late_sigreturns += 1;
        Ok(())
    }

    /// How many `sigreturn`s came after a block had left their handler.
    pub fn late_sigreturns(&self) -> u64 {
        self.late_sigreturns
    }

    /// Leaves every signal handler that a block at stack pointer `sp` has
    /// left by jumping out of it (`siglongjmp`, or an exception thrown
    /// through it) into the code it interrupted, as at its `sigreturn`,
    /// which does not come (or comes later, `Threads::left_handlers`
    /// says when). Callgrind does the same when its unwinding
    /// reaches below a handler's first frame. The block then leaves the
    /// interrupted code's frames by the usual rule.
    pub fn leave_jumped_handlers<B: Backdate<Cursor = C>>(
        &mut self,
        sp: u64,
        arcs: &mut Arcs,
        backdate: &mut B,
        now: u64,
    ) {
        while self.current().left_handler(sp) && self.end_handler(arcs, backdate, now) {
            self.left_handlers[self.current] += 1;
        }
    }

    /// Ends the running thread's innermost signal handler, if one runs.
    fn end_handler<B: Backdate<Cursor = C>>(
        &mut self,
        arcs: &mut Arcs,
        backdate: &mut B,
        now: u64,
    ) -> bool {
        if self.running.len() < 2 {
            return false;
        }
        if let Some(handler) = self.running.pop() {
            // A stack pointer given for the thread's next instruction is
            // the interrupted code's now (whose own went to the handler).
            self.current().sp = handler.sp;
            handler.end(arcs, backdate, now);
            self.contexts -= 1;
        }
        true
    }

    /// Ends the run: every open call returns and every context closes,
    /// thread by thread in order of first sight, innermost first; no
    /// thread is left, so nothing may run after.
    pub fn finish<B: Backdate<Cursor = C>>(&mut self, arcs: &mut Arcs, backdate: &mut B, now: u64) {
        std::mem::swap(&mut self.running, &mut self.parked[self.current]);
        for contexts in self.parked.drain(..) {
            for context in contexts.into_iter().rev() {
                context.end(arcs, backdate, now);
            }
        }
    }
}

/// Closes a thread's contexts, innermost first, as at the end of the run,
/// and leaves it `depth` empty ones: its own, and a handler's for each
/// signal handler still running.
fn start_afresh<C, B: Backdate<Cursor = C>>(
    contexts: &mut Vec<Context<C>>,
    depth: usize,
    arcs: &mut Arcs,
    backdate: &mut B,
    now: u64,
) {
    for context in contexts.drain(..).rev() {
        context.end(arcs, backdate, now);
    }
    contexts.extend((0..depth).map(|_| Context::new(backdate.root(now))));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attribution::backdate::NoBackdate;
    use crate::callstack::Call;
    use crate::callstack::tests::call_to;
    use crate::program::InstrId;

    /// The running context enters a call at stack pointer `sp`.
    fn enter_call(threads: &mut Threads<()>, sp: u64) {
        let call = Call {
            return_addr: 0x1005,
            ..call_to(0x2000)
        };
        threads
            .current()
            .push(call, Some(sp), false, &mut NoBackdate, 0);
    }

    /// Thread `tid` runs, in a call entered at stack pointer 0x7000, and a
    /// signal handler starts in it and is left for a block above that.
    fn leave_a_handler(threads: &mut Threads<()>, tid: u32, arcs: &mut Arcs) {
        let backdate = &mut NoBackdate;
        threads.switch(tid, backdate, 0).unwrap();
        enter_call(threads, 0x7000);
        threads.enter_handler(backdate, 0).unwrap();
        threads.leave_jumped_handlers(0x8000, arcs, backdate, 0);
        assert_eq!(threads.running.len(), 1, "the handler is left");
    }

    /// A handler a block left lets one late `sigreturn` through in its own
    /// thread, not in another, and not once the thread has ended.
    #[test]
    fn a_left_handlers_sigreturn_passes_once_in_its_thread() {
        let (mut arcs, mut backdate) = (Arcs::new(), NoBackdate);
        let mut threads = Threads::new(&mut backdate);
        leave_a_handler(&mut threads, 1, &mut arcs);
        threads.switch(2, &mut backdate, 0).unwrap();
        assert_eq!(
            threads.leave_handler(&mut arcs, &mut backdate, 0),
            Err(NoHandler)
        );
        assert_eq!(threads.late_sigreturns(), 0);
        threads.switch(1, &mut backdate, 0).unwrap();
        assert_eq!(threads.leave_handler(&mut arcs, &mut backdate, 0), Ok(()));
        assert_eq!(threads.late_sigreturns(), 1);
        assert_eq!(
            threads.leave_handler(&mut arcs, &mut backdate, 0),
            Err(NoHandler)
        );
        leave_a_handler(&mut threads, 2, &mut arcs);
        threads.exit(2, &mut arcs, &mut backdate, 0);
        assert_eq!(
            threads.leave_handler(&mut arcs, &mut backdate, 0),
            Err(NoHandler)
        );
    }

    /// A handler on an alternate stack above the thread's frames is left by
    /// a block above where its trampoline runs (its first block's stack
    /// pointer and 8) or back at or below the thread's outermost frame,
    /// and not by a block at either edge's other side; one on the thread's
    /// own stack has no floor, and is left only above the innermost frame
    /// of the code it interrupted.
    #[test]
    fn a_handler_is_left_past_its_stacks_edges_and_not_at_them() {
        let mut backdate = NoBackdate;
        let mut threads = Threads::new(&mut backdate);
        enter_call(&mut threads, 0x7400);
        enter_call(&mut threads, 0x7000);
        threads.enter_handler(&mut backdate, 0).unwrap();
        threads.current().start(0x3000, Some(0x9000));
        let handler = threads.current();
        let left = [0x7300, 0x7400, 0x7408, 0x9008, 0x9010].map(|sp| handler.left_handler(sp));
        assert_eq!(left, [true, true, false, false, true]);
        let keeps = [0x7400, 0x7408, 0x9008, 0x9010].map(|sp| {
            let handler = threads.current();
            handler.set_sp(sp);
            let keeps = handler.keeps_frames();
            handler.take_sp();
            keeps
        });
        assert_eq!(
            keeps,
            [false, true, true, false],
            "a block there leaves nothing"
        );
        threads.enter_handler(&mut backdate, 0).unwrap();
        threads.current().start(0x3000, Some(0x8f00));
        let nested = threads.current();
        let left = [0x7400, 0x7408, 0x9008, 0x9010].map(|sp| nested.left_handler(sp));
        assert_eq!(left, [true, false, false, true], "the floor carries over");

        let mut threads = Threads::new(&mut backdate);
        enter_call(&mut threads, 0x7000);
        threads.enter_handler(&mut backdate, 0).unwrap();
        threads.current().start(0x3000, Some(0x6000));
        let handler = threads.current();
        let left = [0x10, 0x6008, 0x7000, 0x7008].map(|sp| handler.left_handler(sp));
        assert_eq!(left, [false, false, false, true]);
    }

    /// Contexts count together up to [`MAX_CONTEXTS`], every thread's own
    /// and its signal handlers'; a handler that returns gives its context
    /// back, and a thread that ends gives back its handlers' and keeps its
    /// own, for the next thread with its id.
    #[test]
    fn an_ended_thread_gives_back_its_handlers_contexts() {
        let (mut arcs, mut backdate) = (Arcs::new(), NoBackdate);
        let mut threads = Threads::new(&mut backdate);
        let handlers = |threads: &mut Threads<()>| {
            std::iter::repeat_with(|| threads.enter_handler(&mut NoBackdate, 0))
                .take_while(Result::is_ok)
                .count()
        };
        assert_eq!(handlers(&mut threads), MAX_CONTEXTS - 1);
        assert_eq!(threads.leave_handler(&mut arcs, &mut backdate, 0), Ok(()));
        assert_eq!(handlers(&mut threads), 1);
        threads.exit(1, &mut arcs, &mut backdate, 0);
        assert_eq!(threads.running.len(), 1);
        assert_eq!(handlers(&mut threads), MAX_CONTEXTS - 1);
        assert_eq!(threads.switch(2, &mut backdate, 0), Err(TooMany));
    }

    /// A restart closes every thread's calls and keeps its contexts (a
    /// signal handler still runs), each starting again with no instruction
    /// before its next; a thread with no instruction yet is left as it is.
    #[test]
    fn a_restart_empties_every_stack_and_keeps_the_handlers() {
        let (mut arcs, mut backdate) = (Arcs::new(), NoBackdate);
        let mut threads = Threads::new(&mut backdate);
        enter_call(&mut threads, 0x7000);
        threads.current().last_instr = Some(InstrId(0));
        threads.enter_handler(&mut backdate, 0).unwrap();
        threads.switch(2, &mut backdate, 0).unwrap();
        enter_call(&mut threads, 0x7000);
        threads.current().last_instr = Some(InstrId(1));
        threads.switch(3, &mut backdate, 0).unwrap();
        enter_call(&mut threads, 0x7000);
        threads.restart(&mut arcs, &mut backdate, 0);
        let shape = |contexts: &[Context<()>]| {
            contexts
                .iter()
                .map(|context| (context.frames.len(), context.last_instr))
                .collect::<Vec<_>>()
        };
        assert_eq!(shape(&threads.parked[0]), [(0, None), (0, None)]);
        assert_eq!(shape(&threads.parked[1]), [(0, None)]);
        assert_eq!(shape(&threads.running), [(1, None)]);
    }

    /// Threads are counted as they start, not by id: an id reused after
    /// its thread ended starts another thread when it runs, and switching
    /// back to a thread that still runs starts none.
    #[test]
    fn a_reused_thread_id_counts_as_another_thread() {
        let (mut arcs, mut backdate) = (Arcs::new(), NoBackdate);
        let mut threads = Threads::new(&mut backdate);
        assert_eq!(threads.count(), 1);
        threads.switch(2, &mut backdate, 0).unwrap();
        threads.switch(1, &mut backdate, 0).unwrap();
        threads.switch(2, &mut backdate, 0).unwrap();
        assert_eq!(threads.count(), 2);
        threads.exit(2, &mut arcs, &mut backdate, 0);
        assert_eq!(threads.count(), 2);
        threads.switch(1, &mut backdate, 0).unwrap();
        threads.switch(2, &mut backdate, 0).unwrap();
        threads.switch(2, &mut backdate, 0).unwrap();
        assert_eq!(threads.count(), 3);
    }
}
