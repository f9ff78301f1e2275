//! Calls, returns and jumps into functions: how control reaches an
//! instruction, applied when the instruction runs (see
//! [`crate::callstack`] for why calls and returns wait for it).

use crate::arcs::{ArcId, Arcs};
use crate::attribution::backdate::Backdate;
use crate::callstack::{Call, Context, Left, Pending};
use crate::program::{FnId, InstrId, Program};

use super::call_sites::SiteCall;
use super::{SimError, Simulator};

impl<B: Backdate> Simulator<B> {
    /// What control did to reach the instruction at `addr`: calls, returns,
    /// jumps into functions; its id. `known` is its id when a block run
    /// already looked it up.
    pub(super) fn arrive(&mut self, addr: u64, len: u32, mut known: Option<InstrId>) -> InstrId {
        let now = self.instructions;
        let mut context = self.threads.current();
        let sp = context.take_sp();
        if context.last_instr.is_none() {
            context.start(addr, sp);
        } else if let Some(sp) = sp.filter(|&sp| context.left_handler(sp)) {
            self.leave_jumped_handlers(sp);
            context = self.threads.current();
        }
        // A jump, or a return that is not one, may enter a function: see
        // `entered_by_jump`.
        let mut jumped = false;
        let mut forced = false;
        // The call of the outermost frame a return or the stack pointer left.
        let mut left = None;
        match context.take_pending() {
            Pending::Call(mut call) => {
                // Callgrind leaves the frames the stack pointer has left
                // first, and a call that left any is taken for a return.
                left = sp.and_then(|sp| {
                    context.unwind_to_sp(sp, 0, &mut self.arcs, &mut self.charges.backdate, now)
                });
                if left.is_some() {
                    // Not a call, so not counted (Callgrind counts a call
                    // as it enters it).
                    call.uncount(&mut self.arcs);
                } else {
                    if call.entry != addr {
                        call = retarget(&mut self.program, &mut self.arcs, call, addr);
                    }
                    context.push(call, sp, false, &mut self.charges.backdate, now);
                }
            }
            // A frame entered without a stack pointer (a trace that gives
            // them at some blocks only) is left by its return address.
            Pending::Return => match sp.filter(|_| context.innermost_has_sp()) {
                Some(sp) => match context.return_pops(addr, sp) {
                    Some(pops) => {
                        let backdate = &mut self.charges.backdate;
                        left = context.return_by_sp(addr, sp, pops, &mut self.arcs, backdate, now);
                    }
                    None => (jumped, forced) = (true, true),
                },
                None => {
                    let backdate = &mut self.charges.backdate;
                    left = context.return_to(addr, &mut self.arcs, backdate, now);
                }
            },
            // Flow that runs on into another function's code is a jump
            // there too (`__memcpy_chk` runs on into `memcpy`). Interned
            // before any transfer, as it is named code if it is another
            // function's, which needs no frame.
            Pending::None => {
                jumped = context.last_instr.is_some_and(|last| {
                    sp.is_some() || context.last_end != Some(addr) || {
                        let program = &mut self.program;
                        let instr = *known
                            .get_or_insert_with(|| program.intern(addr, len, context.entry(addr)));
                        !program.is_framed(instr)
                            && program.outer_function(instr) != program.outer_function(last)
                    }
                });
            }
        }
        if let (true, Some(last)) = (jumped, context.last_instr) {
            left = self.jump(last, addr, known, sp, forced, None);
        }
        // Back in a frame elsewhere than where the call it left was made
        // (a stack switched, by `swapcontext` or a split stack's
        // `__morestack`), the code runs as if the call's instruction had
        // jumped there, so that a function's inclusive cost stays its self
        // cost and its calls'.
        if let Some(left) = self.threads.current().strayed(left, addr) {
            self.stray(left, addr, known, sp);
        }
        let context = self.threads.current();
        let instr = match known {
            Some(instr) => instr,
            None => {
                let entry = context.entry(addr);
                self.program.intern(addr, len, entry)
            }
        };
        // New instructions, and with inlined functions shown, made-up call
        // sites of inlined calls.
        self.charges.cover(self.program.instrs().len());
        if self.program.shows_inlined() {
            let chain = self.program.inlined(instr);
            let keep = context.inlined_prefix(chain);
            context.leave_inlined(keep, &mut self.arcs, &mut self.charges.backdate, now);
            for call in &chain[keep..] {
                let site = context.charged(call.site);
                let arc = enter(&self.program, &mut self.arcs, site, call.func, addr);
                context.enter_inlined(call.func, site, arc, addr, &mut self.charges.backdate, now);
            }
        }
        instr
    }

    /// Code that a return or the stack pointer brought to `addr` after
    /// leaving frames down to `left`, whose call was made elsewhere
    /// ([`crate::callstack::Context::strayed`]): it runs as if the call's
    /// instruction had jumped there. Code that goes on in the function that
    /// ran last, where that is the callee of the call left (`vfork`, which
    /// pops its return address before its system call, so leaving its
    /// frame, and goes on), is that call going on, not counted again, and
    /// returning where it was made. The call of a skipped function (a PLT
    /// stub) has the callees its call site reached through it: one counted
    /// already goes on.
    pub(super) fn stray(&mut self, left: Left, addr: u64, known: Option<InstrId>, sp: Option<u64>) {
        let context = self.threads.current();
        let (last, site) = (context.last_instr, context.charged(left.from));
        let arcs = &self.arcs;
        let going_on = last
            .map(|last| self.program.outer_function(last))
            .filter(|&func| match left.arc {
                Some(arc) => arcs.get(arc).callee == func,
                None => arcs.counted(site, func),
            })
            .map(|callee| GoingOn {
                callee,
                return_addr: left.return_addr(),
            });
        self.jump(left.from, addr, known, sp, false, going_on);
    }

    /// A jump from instruction `from` to `addr`, which the next
    /// instruction's stack pointer `sp` gives: the callee it enters as a
    /// call (see [`entered_by_jump`]; any function where `forced`, for a
    /// return that is a jump), if any, is worked out first; then the frames
    /// the stack pointer leaves are left, and where it left none, the call
    /// is entered, counted unless it is the call `going_on`. Returns the
    /// call of the outermost frame left.
    pub(super) fn jump(
        &mut self,
        from: InstrId,
        addr: u64,
        known: Option<InstrId>,
        sp: Option<u64>,
        forced: bool,
        going_on: Option<GoingOn>,
    ) -> Option<Left> {
        let now = self.instructions;
        let context = self.threads.current();
        let with_sp = sp.is_some();
        let callee = match entered_by_jump(&mut self.program, from, addr, known, with_sp, forced) {
            Entered::Nothing => None,
            Entered::Call(callee) => Some(callee),
            // Back into the function whose jump entered the frame, a
            // return; else into it as a call.
            Entered::Middle(func) => {
                let program = &self.program;
                let returns_to = |from| program.outer_function(from) == func;
                let arcs = &mut self.arcs;
                let backdate = &mut self.charges.backdate;
                (!context.return_by_jump(returns_to, arcs, backdate, now)).then_some(func)
            }
        };
        let mut site = context.charged(from);
        if callee.is_some()
            && with_sp
            && self
                .program
                .function(self.program.instr(from).func)
                .pop_on_jump
            && let Some((popped, _)) =
                context.pop_for_jump(&mut self.arcs, &mut self.charges.backdate, now)
        {
            site = popped;
        }
        let left = sp.and_then(|sp| {
            context.unwind_to_sp(sp, 0, &mut self.arcs, &mut self.charges.backdate, now)
        });
        if let (None, Some(callee)) = (left, callee) {
            let going_on = going_on.filter(|call| call.callee == callee);
            let enter = match going_on {
                Some(_) => enter_uncounted,
                None => enter,
            };
            let (arc, charge_to) = enter(&self.program, &mut self.arcs, site, callee, addr);
            // Callgrind gives calls made by jumps no return address, and
            // the stack pointer of the frame they run in, so that they
            // return with it. A call going on keeps its return address, and
            // its frame starts at the stack pointer it goes on at, so that
            // its `ret` (`vfork`'s, after pushing back the address it
            // popped) returns from it rather than calling its caller's code.
            let return_addr = going_on.map_or(0, |call| call.return_addr);
            let call = Call {
                site,
                from,
                arc,
                return_addr,
                entry: addr,
                charge_to,
            };
            // Without a stack pointer of its own (flow that runs on inside
            // a block, or a trace without them), it returns with the frame
            // below it.
            let frame_sp = match return_addr {
                0 => context.top_sp().or(sp),
                _ => sp.or(context.top_sp()),
            };
            let tail = frame_sp.is_none();
            context.push(call, frame_sp, tail, &mut self.charges.backdate, now);
        }
        left
    }

    /// Ends the signal handlers a block at stack pointer `sp` left by
    /// jumping out of them.
    #[cold]
    #[inline(never)]
    fn leave_jumped_handlers(&mut self, sp: u64) {
        let backdate = &mut self.charges.backdate;
        let now = self.instructions;
        self.threads
            .leave_jumped_handlers(sp, &mut self.arcs, backdate, now);
    }

    pub(super) fn call(&mut self, target: u64) -> Result<(), SimError> {
        let context = self.threads.current();
        let (instr, return_addr) = check_can_transfer(context, "`call`")?;
        let site = context.charged(instr);
        let (arc, charge_to) = match self.call_sites.get(site, target) {
            Some(call) => {
                if let Some(arc) = call.arc {
                    self.arcs.get_mut(arc).calls += 1;
                }
                (call.arc, call.charge_to)
            }
            None => {
                let callee = self.program.callee(target);
                let (arc, charge_to) = enter(&self.program, &mut self.arcs, site, callee, target);
                self.call_sites.set(
                    site,
                    SiteCall {
                        target,
                        arc,
                        charge_to,
                    },
                );
                (arc, charge_to)
            }
        };
        // The return address is where the call instruction ended as it ran
        // (the same address may have run with another length before).
        context.mark_call(Call {
            site,
            from: instr,
            arc,
            return_addr,
            entry: target,
            charge_to,
        });
        Ok(())
    }
}

/// A call whose frame a return or the stack pointer left, going on in its
/// callee's code ([`Simulator::stray`]).
#[derive(Clone, Copy)]
pub(super) struct GoingOn {
    callee: FnId,
    /// Where the call was made to return; 0 for a call made by a jump.
    return_addr: u64,
}

/// What a jump does between functions.
enum Entered {
    /// It stays in the function.
    Nothing,
    /// It enters this function as a call.
    Call(FnId),
    /// It lands inside this other function of the same region, not at its
    /// entry: the code there is that function's, so that the jump returns
    /// to it or enters it as a call (see [`Simulator::arrive`]), and
    /// inclusive costs add up.
    Middle(FnId),
}

/// Whether a jump from instruction `last` to `addr` enters a function, as
/// Callgrind decides: always for a return that was not one (`forced`), and
/// for a jump into another [`Region`](crate::program::Region) (another
/// object, or between PLT stubs and other code); with stack pointers, also
/// a jump to a symbol's first byte; without them (text traces), to the
/// first byte of another function's symbol. Code without a symbol has no
/// first byte to jump to, and a jump that enters it enters the function
/// named after where it jumped, as a call there does, whichever frames ran
/// the code before. A jump into the middle of another named function
/// (Callgrind would charge that code to the frame's function) lands there.
fn entered_by_jump(
    program: &mut Program,
    last: InstrId,
    addr: u64,
    known: Option<InstrId>,
    with_sp: bool,
    forced: bool,
) -> Entered {
    let from = program.instr(last).func;
    let (func, region, outer) = match known.or_else(|| program.instr_at(addr)) {
        Some(instr) => {
            // Code without a symbol runs as its frame's function's.
            let named = !program.is_framed(instr);
            let outer = program.outer_function(instr);
            (
                named.then_some(program.instr(instr).func),
                program.region(instr),
                Some(outer),
            )
        }
        None => {
            let (func, region) = program.symbol_function(addr);
            (func, region, func)
        }
    };
    let crosses = region != program.region(last);
    let Some(func) = func else {
        return if forced || crosses {
            Entered::Call(program.callee(addr))
        } else {
            Entered::Nothing
        };
    };
    let at_entry = program.function(func).starts_at(addr) && (with_sp || func != from);
    if forced || crosses || at_entry {
        return Entered::Call(func);
    }
    match outer.filter(|&outer| outer != program.outer_function(last)) {
        Some(outer) => Entered::Middle(outer),
        None => Entered::Nothing,
    }
}

/// A call whose callee's first instruction is not at its target (a
/// hand-written trace may say so) enters the code that runs there instead,
/// as Callgrind names a callee by the code a call reaches: its count moves
/// to that arc, leaving the target's arc one call fewer (an arc left with
/// none is no call, see [`Profile::called_arcs`]).
///
/// [`Profile::called_arcs`]: crate::profile::Profile::called_arcs
fn retarget(program: &mut Program, arcs: &mut Arcs, call: Call, addr: u64) -> Call {
    call.uncount(arcs);
    let callee = program.callee(addr);
    let (arc, charge_to) = enter(program, arcs, call.site, callee, addr);
    Call {
        arc,
        charge_to,
        entry: addr,
        ..call
    }
}

/// Counts a call from `site` into `callee` at `target`: its arc, or for a
/// skipped callee no arc and the call site its code is charged to.
pub(super) fn enter(
    program: &Program,
    arcs: &mut Arcs,
    site: InstrId,
    callee: FnId,
    target: u64,
) -> (Option<ArcId>, Option<InstrId>) {
    let entered = enter_uncounted(program, arcs, site, callee, target);
    if let (Some(arc), _) = entered {
        arcs.get_mut(arc).calls += 1;
    }
    entered
}

/// What [`enter`] enters, for a call that goes on rather than starts.
fn enter_uncounted(
    program: &Program,
    arcs: &mut Arcs,
    site: InstrId,
    callee: FnId,
    target: u64,
) -> (Option<ArcId>, Option<InstrId>) {
    match program.function(callee).skip {
        true => (None, Some(site)),
        false => (Some(arcs.arc(site, callee, target)), None),
    }
}

/// The instruction a `call` or `ret` belongs to, and where it ended, if it
/// has made neither yet.
pub(super) fn check_can_transfer<C>(
    context: &Context<C>,
    what: &'static str,
) -> Result<(InstrId, u64), SimError> {
    let Some(last) = context.last_instr.zip(context.last_end) else {
        return Err(SimError::NoInstruction(what));
    };
    match context.pending() {
        Pending::None => Ok(last),
        Pending::Call(_) => Err(SimError::Twice(what, "`call`")),
        Pending::Return => Err(SimError::Twice(what, "`ret`")),
    }
}
