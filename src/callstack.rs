//! Call stacks: one per thread, and a fresh isolated one per signal handler.
//!
//! Inclusive costs of immediate events use Callgrind's difference method:
//! each context sums every cost charged while it runs; a frame remembers
//! that sum when it is entered and adds the difference to its arc when it
//! returns. Recursion thus counts once per active frame, as in Callgrind.
//!
//! Calls and returns take effect at the next instruction of the context, so
//! that every access the call or return instruction makes (pushing or
//! popping the return address) stays with that instruction's frame. What a
//! return pops depends on what the trace says:
//!
//! - With the stack pointer (recorded traces give it at every block), the
//!   rules are Callgrind's: each frame remembers the stack pointer at its
//!   callee's entry; any block whose stack pointer is above a frame's
//!   leaves that frame (a longjmp or an exception unwinding several frames);
//!   a `ret` that does not leave the innermost frame is a jump.
//! - Without it, the next instruction's address is matched against the
//!   return addresses of the open calls: that frame and every frame above it
//!   return; with no match the innermost frame returns. A `ret` with no
//!   frame pops nothing.
//!
//! Where the outermost code returns (a signal handler into the C library's
//! trampoline), the code returned to becomes the outermost code.
//!
//! With inlined functions shown, code inlined into a frame runs in frames of
//! its own on top of it, one per level of inlining; they are entered and
//! left as the instructions' inline chains change, and never match a
//! return address.
//!
//! Two kinds of frame have no arc of their own. A *skipped* function's frame
//! (`--fn-skip`, PLT stubs) charges its code to the call site in the nearest
//! shown caller, which also makes the calls it contains. A *tail* frame,
//! entered by a jump to another function's entry, replaced the frame below
//! it: the two return together.

use rustc_hash::FxHashMap;

use crate::arcs::{ArcId, Arcs};
use crate::attribution::backdate::Backdate;
use crate::cost::ImmediateCost;
use crate::program::{FnId, InlineCall, InstrId};

mod threads;

pub use threads::{MAX_CONTEXTS, NoHandler, Threads, TooMany};

/// A call about to take effect.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Call {
    /// The call site it is counted from: the call instruction, or for a
    /// call made inside a skipped function, the nearest shown caller's.
    pub site: InstrId,
    /// The instruction that made the call or the jump, which a jump back
    /// into its function returns to (`site` is another function's when it
    /// ran in a skipped one).
    pub from: InstrId,
    /// The arc called along; `None` when the callee is skipped.
    pub arc: Option<ArcId>,
    /// Address of the instruction after the call site.
    pub return_addr: u64,
    /// Address the call jumps to.
    pub entry: u64,
    /// For a skipped callee: where the costs of its code go.
    pub charge_to: Option<InstrId>,
}

impl Call {
    /// Takes back the count of the call, which entered nothing (Callgrind
    /// counts a call as it enters the callee).
    #[cold]
    #[inline(never)]
    pub fn uncount(&self, arcs: &mut Arcs) {
        if let Some(arc) = self.arc {
            arcs.get_mut(arc).calls -= 1;
        }
    }
}

/// The call of the outermost frame that a return, or the stack pointer,
/// left.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Left {
    /// The instruction that made the call.
    pub from: InstrId,
    /// The arc it was counted on; `None` when its callee is skipped.
    pub arc: Option<ArcId>,
    /// Its return address; 0 for a call made by a jump.
    return_addr: u64,
}

impl Left {
    /// The call's return address; 0 for a call made by a jump.
    pub fn return_addr(&self) -> u64 {
        self.return_addr
    }

    /// Whether leaving the frame for `addr` returns where the call was
    /// made: to its return address, or for a call made by a jump, which has
    /// none, anywhere.
    fn returns_to(&self, addr: u64) -> bool {
        self.return_addr == addr || self.return_addr == 0
    }
}

/// What [`Context::plain_transfer`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transfer {
    /// Nothing: the arrival takes `Simulator::arrive`.
    NotPlain,
    /// The call or the return, which is all the arrival does.
    Applied,
    /// The return, after which the code runs as if the instruction that
    /// made the call of `left`, the outermost frame left, had jumped to it
    /// ([`Context::strayed`]), at stack pointer `sp`.
    Strayed { left: Left, sp: u64 },
}

/// What the most recent instruction did to the stack, applied when the
/// next instruction of the context runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pending {
    None,
    Call(Call),
    Return,
}

/// One active call.
#[derive(Clone, Debug)]
struct Frame {
    call: Call,
    /// The stack pointer at the callee's entry, when the trace gives it.
    sp: Option<u64>,
    /// Entered by a jump: returns together with the frame below.
    tail: bool,
    /// For a frame of inlined code: the inlined function.
    inlined: Option<FnId>,
    /// The context's cost when the call was made.
    enter: ImmediateCost,
}

impl Frame {
    /// The frame's call, once left.
    fn left(&self) -> Left {
        Left {
            from: self.call.from,
            arc: self.call.arc,
            return_addr: self.call.return_addr,
        }
    }
}

/// A thread's stack, or a signal handler's.
pub struct Context<C> {
    frames: Vec<Frame>,
    /// Sum of the immediate costs charged while this context ran.
    pub cost: ImmediateCost,
    /// The most recent instruction, which data accesses and calls belong to.
    pub last_instr: Option<InstrId>,
    /// The address after the most recent instruction: where sequential
    /// code continues.
    pub last_end: Option<u64>,
    /// When the most recent instruction ran (the instructions of every
    /// thread before it), which its data accesses are timed at.
    pub last_at: u64,
    /// The most recent instruction's function, when a known block's run
    /// left it at hand; else it is looked up.
    pub last_func: Option<FnId>,
    pending: Pending,
    /// The stack pointer at the next instruction, given at block starts.
    sp: Option<u64>,
    /// The entry of the outermost code: the address of the first
    /// instruction, or where the outermost code last returned to
    /// ([`Context::returned`]).
    root_entry: Option<u64>,
    /// The innermost frame's `charge_to`, kept at hand for every event.
    charge_to: Option<InstrId>,
    /// The stack pointer above which a block leaves a frame or the signal
    /// handler: the innermost frame's, or without frames, the handler's
    /// `handler_top`; kept at hand for every block start
    /// ([`Context::keeps_frames`]).
    leave_above: Option<u64>,
    /// Frames of inlined code on top of the innermost call.
    inline_depth: usize,
    /// In a signal handler's context, the stack pointer above which a
    /// block has left the handler: jumped out of it (`siglongjmp`) into the
    /// code it interrupted. See [`Threads::leave_jumped_handlers`].
    handler_top: Option<u64>,
    /// In a signal handler's context whose first block ran above every
    /// frame of the thread it interrupted (on an alternate stack mapped
    /// above the thread's stack), the stack pointer at or below which a
    /// block has left the handler: the outermost of those frames', which
    /// the handler's own code stays above, if `has_floor`; 0 otherwise,
    /// so that only a block at 0 has to ask `has_floor`. Until the first
    /// block, the outermost frame's stack pointer, or the floor of the
    /// handler it interrupted.
    handler_floor: u64,
    /// Whether `handler_floor` is one.
    has_floor: bool,
    /// How many frames entered without a stack pointer return to each
    /// address, so that a `ret` to none of them pops the innermost frame
    /// without a search of the whole stack...
    return_addrs: FxHashMap<u64, u32>,
    /// ...unless frames entered with one are open too (a trace that gives
    /// stack pointers at some blocks only), whose return addresses are
    /// not counted.
    frames_with_sp: usize,
    /// Position in the back-dating tree.
    pub cursor: C,
}

impl<C> Context<C> {
    fn new(cursor: C) -> Context<C> {
        Context {
            frames: Vec::new(),
            cost: ImmediateCost::default(),
            last_instr: None,
            last_end: None,
            last_at: 0,
            last_func: None,
            pending: Pending::None,
            sp: None,
            root_entry: None,
            charge_to: None,
            leave_above: None,
            inline_depth: 0,
            handler_top: None,
            handler_floor: 0,
            has_floor: false,
            return_addrs: FxHashMap::default(),
            frames_with_sp: 0,
            cursor,
        }
    }

    /// Starts the context's code at its first instruction, `addr`: the
    /// entry of its outermost code, whichever way the instruction was
    /// looked up. In a signal handler's context, the first block's stack
    /// pointer is `sp`: the handler's code runs below `sp + 8`, where the
    /// signal return trampoline runs once it returned; a block above both
    /// that and the innermost frame of the context it interrupted has left
    /// the handler, since the interrupted code's frames lie above the
    /// signal's frame. A handler that starts above all of the thread's
    /// frames runs on an alternate stack above the thread's stack: a block
    /// above the handler's first leaves it, and so does one back down
    /// among those frames, at or below the outermost's stack pointer (a
    /// jump out of the handler lands in one of them); so does a handler
    /// that interrupted such a handler, on the same stack. Without `sp`
    /// the handler's stack is unknown, and no block leaves it.
    pub fn start(&mut self, addr: u64, sp: Option<u64>) {
        self.root_entry = Some(addr);
        if let Some(top) = self.handler_top {
            self.handler_top = sp.map(|sp| top.max(sp.saturating_add(8)));
            self.leave_above = self.top_sp().or(self.handler_top);
        }
        if sp.is_none_or(|sp| self.below_floor(sp)) {
            self.handler_floor = 0;
            self.has_floor = false;
        }
    }

    /// Whether a block at stack pointer `sp` has left this signal handler.
    pub fn left_handler(&self, sp: u64) -> bool {
        self.handler_top.is_some_and(|top| sp > top) || self.below_floor(sp)
    }

    /// Whether a block at stack pointer `sp` is back at or below this signal
    /// handler's floor.
    fn below_floor(&self, sp: u64) -> bool {
        sp <= self.handler_floor && self.has_floor
    }

    /// Number of active calls.
    #[cfg(test)]
    pub fn depth(&self) -> usize {
        self.frames.len()
    }

    /// The call or return the most recent instruction made, not yet applied.
    pub fn pending(&self) -> Pending {
        self.pending
    }

    /// Records that the most recent instruction makes `call`.
    pub fn mark_call(&mut self, call: Call) {
        self.pending = Pending::Call(call);
    }

    /// Records that the most recent instruction returns.
    pub fn mark_return(&mut self) {
        self.pending = Pending::Return;
    }

    /// In a skipped function's frame, the call site of the nearest shown
    /// caller, which every cost of the frame is charged to.
    #[inline]
    pub fn charge_to(&self) -> Option<InstrId> {
        self.charge_to
    }

    /// The instruction that costs of `instr` are charged to: itself, or in
    /// a skipped function's frame, the call site of the nearest shown caller.
    #[inline]
    pub fn charged(&self, instr: InstrId) -> InstrId {
        self.charge_to.unwrap_or(instr)
    }

    /// Takes the call or return the most recent instruction made.
    #[inline]
    pub fn take_pending(&mut self) -> Pending {
        std::mem::replace(&mut self.pending, Pending::None)
    }

    /// Records the stack pointer at the next instruction, which starts a
    /// block.
    pub fn set_sp(&mut self, sp: u64) {
        self.sp = Some(sp);
    }

    /// Whether the next instruction, starting a block, is reached with no
    /// call or return pending and a stack pointer that leaves no frame (none
    /// entered below it) and no signal handler: then only a jump into
    /// another function could change the stack.
    #[inline]
    pub fn keeps_frames(&self) -> bool {
        let Some(sp) = self.sp else {
            return false;
        };
        matches!(self.pending, Pending::None) && self.leaves_nothing_at(sp)
    }

    /// Whether a block at stack pointer `sp` leaves no frame and no signal
    /// handler by it: none was entered below `sp`, and it is not back below
    /// a handler's alternate stack. Without a floor, a block at 0 is
    /// taken to leave something, which the arrival then finds it does not.
    #[inline]
    fn leaves_nothing_at(&self, sp: u64) -> bool {
        self.leave_above.is_none_or(|top| top >= sp) && sp > self.handler_floor
    }

    /// Applies the call or return the most recent instruction made, when
    /// the next one, at `addr`, starts a block the way most calls and
    /// returns reach one: a call that lands on its target and leaves no
    /// frame, or a return that `return_pops` takes for one, both with a
    /// stack pointer that leaves no signal handler. If it did not, nothing
    /// changed. It does what `Simulator::arrive` does in those cases, which
    /// the known runs' tests check: block runs, which take it, against the
    /// same runs as events, which arrive.
    #[inline]
    pub fn plain_transfer<B: Backdate<Cursor = C>>(
        &mut self,
        addr: u64,
        arcs: &mut Arcs,
        backdate: &mut B,
        now: u64,
    ) -> Transfer {
        let Some(sp) = self.sp else {
            return Transfer::NotPlain;
        };
        if self.last_instr.is_none() || self.left_handler(sp) {
            return Transfer::NotPlain;
        }
        match self.pending {
            Pending::Call(call) if call.entry == addr && self.leaves_nothing_at(sp) => {
                (self.pending, self.sp) = (Pending::None, None);
                self.push(call, Some(sp), false, backdate, now);
                Transfer::Applied
            }
            Pending::Return => match self.return_pops(addr, sp) {
                Some(pops) => {
                    (self.pending, self.sp) = (Pending::None, None);
                    let left = self.return_by_sp(addr, sp, pops, arcs, backdate, now);
                    match self.strayed(left, addr) {
                        None => Transfer::Applied,
                        Some(left) => Transfer::Strayed { left, sp },
                    }
                }
                None => Transfer::NotPlain,
            },
            _ => Transfer::NotPlain,
        }
    }

    /// Takes the stack pointer given for this instruction, if it starts a
    /// block.
    #[inline]
    pub fn take_sp(&mut self) -> Option<u64> {
        self.sp.take()
    }

    /// The entry address of the code about to run at `addr`: the target of
    /// the innermost call, or the entry of the outermost code.
    #[inline]
    pub fn entry(&self, addr: u64) -> u64 {
        match self.frames.last() {
            Some(frame) => frame.call.entry,
            // Set at the context's first instruction, and where the
            // outermost code returned.
            None => self.root_entry.unwrap_or(addr),
        }
    }

    /// Enters a call. A call entered by a jump (`tail`, only without stack
    /// pointers) returns together with the frame below it, whose return
    /// address it takes.
    pub fn push<B: Backdate<Cursor = C>>(
        &mut self,
        mut call: Call,
        sp: Option<u64>,
        tail: bool,
        backdate: &mut B,
        now: u64,
    ) {
        if tail {
            call.return_addr = self.frames.last().map_or(0, |f| f.call.return_addr);
        }
        self.push_frame(call, sp, tail, None, backdate, now);
    }

    /// The stack pointer of the innermost frame, when the trace gives it.
    pub fn top_sp(&self) -> Option<u64> {
        self.frames.last().and_then(|frame| frame.sp)
    }

    /// Leaves the innermost frame, as Callgrind does when the runtime
    /// linker's resolver jumps to the function it resolved: the jump is
    /// then a call from the resolver's own call site, with its stack
    /// pointer, which this returns.
    pub fn pop_for_jump<B: Backdate<Cursor = C>>(
        &mut self,
        arcs: &mut Arcs,
        backdate: &mut B,
        now: u64,
    ) -> Option<(InstrId, Option<u64>)> {
        let frame = self.frames.last()?;
        let popped = (frame.call.site, frame.sp);
        self.pop(arcs, backdate, now);
        Some(popped)
    }

    /// Leaves the innermost frames entered by jumps (with no return address
    /// of their own), down to and with the innermost of them whose jumping
    /// instruction (`Call::from`) `returns_to` accepts, and the frames of
    /// inlined code above them: a jump back into the function whose jump
    /// entered the frame (a function's `.cold` part jumping back into it)
    /// returns there. Whether there was such a frame.
    pub fn return_by_jump<B: Backdate<Cursor = C>>(
        &mut self,
        returns_to: impl Fn(InstrId) -> bool,
        arcs: &mut Arcs,
        backdate: &mut B,
        now: u64,
    ) -> bool {
        let mut found = None;
        for (index, frame) in self.frames.iter().enumerate().rev() {
            if frame.inlined.is_some() {
                continue;
            }
            if !frame.tail && frame.call.return_addr != 0 {
                break;
            }
            if returns_to(frame.call.from) {
                found = Some(index);
                break;
            }
        }
        let Some(keep) = found else {
            return false;
        };
        while self.frames.len() > keep {
            self.pop(arcs, backdate, now);
        }
        true
    }

    /// Whether the innermost frame, if any, was entered with a stack
    /// pointer, which its return is then tested against.
    #[inline]
    pub fn innermost_has_sp(&self) -> bool {
        self.frames.last().is_none_or(|frame| frame.sp.is_some())
    }

    /// Callgrind's test whether a `ret` arriving at `addr` with stack
    /// pointer `sp` is a real return: it is when it leaves the innermost
    /// frame, or keeps its stack pointer and lands on the return address of
    /// one of the frames that share it. Returns how many frames with that
    /// stack pointer it leaves, or `None` for a return that is a jump.
    pub fn return_pops(&self, addr: u64, sp: u64) -> Option<usize> {
        let Some(top) = self.frames.last() else {
            return Some(0);
        };
        match top.sp {
            Some(top_sp) if sp > top_sp => Some(1),
            Some(top_sp) if sp == top_sp => self
                .frames
                .iter()
                .rev()
                .take_while(|f| f.sp == Some(sp))
                .position(|f| f.call.return_addr == addr)
                .map(|index| index + 1),
            _ => None,
        }
    }

    /// Callgrind's unwinding: leaves every frame entered with a stack
    /// pointer below `sp`, and then up to `pops` more entered at `sp`.
    /// Returns the call of the outermost frame left, if any.
    #[inline(always)]
    pub fn unwind_to_sp<B: Backdate<Cursor = C>>(
        &mut self,
        sp: u64,
        mut pops: usize,
        arcs: &mut Arcs,
        backdate: &mut B,
        now: u64,
    ) -> Option<Left> {
        let mut left = None;
        while let Some(top) = self.frames.last() {
            let Some(top_sp) = top.sp else { break };
            if top_sp < sp || (top_sp == sp && pops > 0) {
                pops = pops.saturating_sub(1);
                left = Some(top.left());
                self.pop(arcs, backdate, now);
            } else {
                break;
            }
        }
        left
    }

    /// Whether a `ret` that leaves every open frame is the outermost code's
    /// own return: with no frame open, or with the outermost entered by a
    /// jump from the outermost code (a tail call), which has no return
    /// address of its own.
    fn outermost_returns(&self) -> bool {
        self.frames
            .first()
            .is_none_or(|frame| frame.tail || frame.call.return_addr == 0)
    }

    /// After a `ret` to `addr`: where the outermost code returned
    /// (`outermost`, from [`Context::outermost_returns`] before the `ret`,
    /// and no frame left), the code at `addr` is outermost code entered
    /// there, as Callgrind names code without a symbol after the block
    /// returned to: a signal handler's return into the C library's
    /// trampoline is no more of the handler.
    fn returned(&mut self, addr: u64, outermost: bool) {
        if outermost && self.frames.is_empty() {
            self.root_entry = Some(addr);
        }
    }

    /// Completes a `ret` to `addr` at stack pointer `sp` that
    /// [`Context::return_pops`] takes for a return from `pops` frames (none
    /// when none is open). Returns the call of the outermost frame left.
    #[inline(always)]
    pub fn return_by_sp<B: Backdate<Cursor = C>>(
        &mut self,
        addr: u64,
        sp: u64,
        pops: usize,
        arcs: &mut Arcs,
        backdate: &mut B,
        now: u64,
    ) -> Option<Left> {
        let outermost = self.outermost_returns();
        let left = self.unwind_to_sp(sp, pops, arcs, backdate, now);
        self.returned(addr, outermost);
        left
    }

    /// Completes a `ret` without stack pointers: the frame whose return
    /// address is `addr` and all above it return, or else the innermost
    /// (none when none is open). Returns the call of the outermost frame
    /// left.
    pub fn return_to<B: Backdate<Cursor = C>>(
        &mut self,
        addr: u64,
        arcs: &mut Arcs,
        backdate: &mut B,
        now: u64,
    ) -> Option<Left> {
        let outermost = self.outermost_returns();
        let open = self.frames_with_sp > 0 || self.return_addrs.contains_key(&addr);
        let matched = || self.frames.iter().rposition(|f| f.call.return_addr == addr);
        let keep = match open.then(matched).flatten() {
            Some(index) => index,
            None => self.frames.len().saturating_sub(1),
        };
        let mut tail = false;
        let mut left = None;
        while self.frames.len() > keep {
            left = self.frames.last().map(Frame::left);
            tail = self.pop(arcs, backdate, now);
        }
        // A frame entered by a jump returns together with the one it replaced.
        while tail && !self.frames.is_empty() {
            left = self.frames.last().map(Frame::left);
            tail = self.pop(arcs, backdate, now);
        }
        self.returned(addr, outermost);
        left
    }

    /// `left`, the outermost frame a return or the stack pointer left for
    /// `addr`, if its call was made elsewhere than where the context goes
    /// on in a frame below: there the code runs as if the call's
    /// instruction had jumped to it.
    pub fn strayed(&self, left: Option<Left>, addr: u64) -> Option<Left> {
        left.filter(|left| !left.returns_to(addr) && !self.frames.is_empty())
    }

    /// How many of the inlined calls of `chain` (outermost first) the
    /// frames of inlined code on top already are.
    #[inline]
    pub fn inlined_prefix(&self, chain: &[InlineCall]) -> usize {
        let top = &self.frames[self.frames.len() - self.inline_depth..];
        top.iter()
            .zip(chain)
            .take_while(|(frame, call)| frame.inlined == Some(call.func))
            .count()
    }

    /// Leaves frames of inlined code until `keep` remain on top.
    pub fn leave_inlined<B: Backdate<Cursor = C>>(
        &mut self,
        keep: usize,
        arcs: &mut Arcs,
        backdate: &mut B,
        now: u64,
    ) {
        while self.inline_depth > keep {
            self.pop(arcs, backdate, now);
        }
    }

    /// Enters the inlined function `func` at `entry`, along `arc` (`None`
    /// for a skipped function, charged to `charge_to`).
    pub fn enter_inlined<B: Backdate<Cursor = C>>(
        &mut self,
        func: FnId,
        site: InstrId,
        (arc, charge_to): (Option<ArcId>, Option<InstrId>),
        entry: u64,
        backdate: &mut B,
        now: u64,
    ) {
        let call = Call {
            site,
            from: site,
            arc,
            return_addr: u64::MAX,
            entry,
            charge_to,
        };
        // The frame of inlined code shares its function's stack pointer.
        self.push_frame(call, self.top_sp(), false, Some(func), backdate, now);
    }

    fn push_frame<B: Backdate<Cursor = C>>(
        &mut self,
        call: Call,
        sp: Option<u64>,
        tail: bool,
        inlined: Option<FnId>,
        backdate: &mut B,
        now: u64,
    ) {
        if let Some(arc) = call.arc {
            backdate.enter(&mut self.cursor, arc, now);
        }
        self.charge_to = call.charge_to;
        self.leave_above = sp.or(self.handler_top);
        match sp {
            Some(_) => self.frames_with_sp += 1,
            None => *self.return_addrs.entry(call.return_addr).or_default() += 1,
        }
        self.inline_depth = match inlined {
            Some(_) => self.inline_depth + 1,
            None => 0,
        };
        self.frames.push(Frame {
            call,
            sp,
            tail,
            inlined,
            enter: self.cost,
        });
    }

    /// Ends the context: returns from every active call, innermost first,
    /// and closes its cursor. A call not yet entered is dropped, and not
    /// counted.
    pub fn end<B: Backdate<Cursor = C>>(mut self, arcs: &mut Arcs, backdate: &mut B, now: u64) {
        if let Pending::Call(call) = self.pending {
            call.uncount(arcs);
        }
        while !self.frames.is_empty() {
            self.pop(arcs, backdate, now);
        }
        backdate.close(self.cursor, now);
    }

    /// Returns from the innermost call; true if it had been entered by a jump.
    fn pop<B: Backdate<Cursor = C>>(
        &mut self,
        arcs: &mut Arcs,
        backdate: &mut B,
        now: u64,
    ) -> bool {
        let Some(frame) = self.frames.pop() else {
            return false;
        };
        if frame.sp.is_some() {
            self.frames_with_sp -= 1;
        } else if let Some(count) = self.return_addrs.get_mut(&frame.call.return_addr) {
            *count -= 1;
            if *count == 0 {
                self.return_addrs.remove(&frame.call.return_addr);
            }
        }
        if let Some(arc) = frame.call.arc {
            arcs.get_mut(arc).inclusive += &(&self.cost - &frame.enter);
            backdate.leave(&mut self.cursor, now);
        }
        self.charge_to = self.frames.last().and_then(|f| f.call.charge_to);
        self.leave_above = self.top_sp().or(self.handler_top);
        self.inline_depth = match frame.inlined {
            Some(_) => self.inline_depth - 1,
            // Back in the caller: its frames of inlined code are on top.
            None => self
                .frames
                .iter()
                .rev()
                .take_while(|f| f.inlined.is_some())
                .count(),
        };
        frame.tail
    }
}

#[cfg(test)]
mod tests;
