//! The call stack's rules, context by context.

use super::*;
use crate::attribution::backdate::NoBackdate;

/// Enters a call without a stack pointer or an arc, returning to
/// `return_addr`.
fn push(context: &mut Context<()>, return_addr: u64) {
    let call = Call {
        return_addr,
        ..call_to(0x1000)
    };
    context.push(call, None, false, &mut NoBackdate, 0);
}

/// A call to `entry` with no arc.
pub(super) fn call_to(entry: u64) -> Call {
    Call {
        site: InstrId(0),
        from: InstrId(0),
        arc: None,
        return_addr: 0,
        entry,
        charge_to: None,
    }
}

/// A plain return that leaves a frame for another address than its
/// call's return address, with a frame below, is applied, and the
/// arrival is told to go on as a jump from the call's instruction.
#[test]
fn a_plain_return_elsewhere_strays_from_the_call() {
    let (mut arcs, mut backdate) = (Arcs::default(), NoBackdate);
    let mut context = Context::new(());
    context.last_instr = Some(InstrId(0));
    for (sp, from) in [(0x7000, InstrId(1)), (0x6ff0, InstrId(2))] {
        let call = Call {
            from,
            return_addr: 0x1005,
            ..call_to(0x2000)
        };
        context.push(call, Some(sp), false, &mut backdate, 0);
    }
    context.mark_return();
    context.set_sp(0x6ff8);
    assert_eq!(
        context.plain_transfer(0x3000, &mut arcs, &mut backdate, 0),
        Transfer::Strayed {
            left: Left {
                from: InstrId(2),
                arc: None,
                return_addr: 0x1005
            },
            sp: 0x6ff8
        }
    );
    assert_eq!(context.depth(), 1);
    // To the return address, or out of every frame: applied.
    let call = Call {
        return_addr: 0x1005,
        ..call_to(0x2000)
    };
    context.push(call, Some(0x6ff0), false, &mut backdate, 0);
    context.mark_return();
    context.set_sp(0x6ff8);
    assert_eq!(
        context.plain_transfer(0x1005, &mut arcs, &mut backdate, 0),
        Transfer::Applied
    );
    assert_eq!(context.depth(), 1);
    context.mark_return();
    context.set_sp(0x7008);
    assert_eq!(
        context.plain_transfer(0x3000, &mut arcs, &mut backdate, 0),
        Transfer::Applied
    );
    assert_eq!(context.depth(), 0);
}

/// The plain transfer applies a call that lands on its target and a
/// return that leaves the innermost frame; anything else is left to
/// the full arrival, untouched.
#[test]
fn a_plain_transfer_applies_calls_on_target_and_returns_that_leave_a_frame() {
    let (mut arcs, mut backdate) = (Arcs::new(), NoBackdate);
    let mut context = Context::new(());
    context.last_instr = Some(InstrId(0));
    context.mark_call(call_to(0x2000));
    context.set_sp(0x7000);
    // Landing elsewhere: not plain, nothing taken.
    assert_eq!(
        context.plain_transfer(0x3000, &mut arcs, &mut backdate, 0),
        Transfer::NotPlain
    );
    assert_eq!((context.depth(), context.sp), (0, Some(0x7000)));
    assert_eq!(
        context.plain_transfer(0x2000, &mut arcs, &mut backdate, 0),
        Transfer::Applied
    );
    assert_eq!((context.depth(), context.top_sp()), (1, Some(0x7000)));
    assert_eq!((context.pending(), context.sp), (Pending::None, None));
    // A return that keeps the frame's stack pointer and lands on no
    // return address is a jump: the full arrival decides.
    context.mark_return();
    context.set_sp(0x7000);
    assert_eq!(
        context.plain_transfer(0x1234, &mut arcs, &mut backdate, 0),
        Transfer::NotPlain
    );
    assert_eq!((context.depth(), context.pending()), (1, Pending::Return));
    context.set_sp(0x7008);
    assert_eq!(
        context.plain_transfer(0x1234, &mut arcs, &mut backdate, 0),
        Transfer::Applied
    );
    assert_eq!((context.depth(), context.pending()), (0, Pending::None));
    // A call made with the stack pointer above the innermost frame's
    // (a `longjmp` out of it first): the full arrival leaves the frame.
    context.mark_call(call_to(0x2000));
    context.set_sp(0x7000);
    assert_eq!(
        context.plain_transfer(0x2000, &mut arcs, &mut backdate, 0),
        Transfer::Applied
    );
    context.mark_call(call_to(0x3000));
    context.set_sp(0x7100);
    assert_eq!(
        context.plain_transfer(0x3000, &mut arcs, &mut backdate, 0),
        Transfer::NotPlain
    );
    assert_eq!((context.depth(), context.top_sp()), (1, Some(0x7000)));
    // Without a stack pointer, or before the first instruction, never.
    let mut fresh = Context::new(());
    fresh.mark_call(call_to(0x2000));
    assert_eq!(
        fresh.plain_transfer(0x2000, &mut arcs, &mut backdate, 0),
        Transfer::NotPlain
    );
    fresh.set_sp(0x7000);
    assert_eq!(
        fresh.plain_transfer(0x2000, &mut arcs, &mut backdate, 0),
        Transfer::NotPlain
    );
    // Nor in a signal handler that a block above its stack has left.
    fresh.last_instr = Some(InstrId(0));
    fresh.handler_top = Some(0x6000);
    assert_eq!(
        fresh.plain_transfer(0x2000, &mut arcs, &mut backdate, 0),
        Transfer::NotPlain
    );
    fresh.set_sp(0x5000);
    assert_eq!(
        fresh.plain_transfer(0x2000, &mut arcs, &mut backdate, 0),
        Transfer::Applied
    );
}

#[test]
fn without_stack_pointers_a_return_matches_an_open_return_address_or_pops_one_call() {
    let (mut arcs, mut backdate) = (Arcs::new(), NoBackdate);
    let mut context = Context::new(());
    // Two calls return to 0x45 (a recursion), one above them to 0x99.
    push(&mut context, 0x05);
    push(&mut context, 0x45);
    push(&mut context, 0x45);
    push(&mut context, 0x99);
    // Reaching no open call's return address: the innermost returns.
    context.return_to(0x77, &mut arcs, &mut backdate, 0);
    assert_eq!(context.depth(), 3);
    // Reaching 0x45: the innermost call that returns there, alone.
    context.return_to(0x45, &mut arcs, &mut backdate, 0);
    assert_eq!(context.depth(), 2);
    // The other call to 0x45 is still open, under one to 0x99.
    push(&mut context, 0x99);
    context.return_to(0x45, &mut arcs, &mut backdate, 0);
    assert_eq!(context.depth(), 1);
    // None is left to 0x45 or 0x99.
    push(&mut context, 0x99);
    push(&mut context, 0x55);
    context.return_to(0x45, &mut arcs, &mut backdate, 0);
    assert_eq!(context.depth(), 2);
    context.return_to(0x05, &mut arcs, &mut backdate, 0);
    assert_eq!(context.depth(), 0);
    assert!(context.return_addrs.is_empty());
    // A frame entered with a stack pointer is matched by its address
    // too, though its address is not counted.
    let call = Call {
        return_addr: 0x33,
        ..call_to(0x1000)
    };
    context.push(call, Some(0x7000), false, &mut backdate, 0);
    push(&mut context, 0x44);
    push(&mut context, 0x55);
    context.return_to(0x33, &mut arcs, &mut backdate, 0);
    assert_eq!((context.depth(), context.frames_with_sp), (0, 0));
}

/// Callgrind's test of a `ret`: with stack pointers, it returns when it
/// rises above the innermost frame, or stays at its stack pointer and
/// lands on the return address of a frame that shares it (leaving that
/// frame and those above it); else it is a jump.
#[test]
fn a_return_leaves_the_innermost_frame_or_lands_where_one_at_its_stack_pointer_returns() {
    let mut context = Context::new(());
    assert_eq!(context.return_pops(0x1005, 0x7000), Some(0));
    for (sp, return_addr) in [(0x7000, 0x1005), (0x6ff0, 0x2005), (0x6ff0, 0x3005)] {
        let call = Call {
            return_addr,
            ..call_to(0x2000)
        };
        context.push(call, Some(sp), false, &mut NoBackdate, 0);
    }
    let pops = [
        (0x9999, 0x6ff8),
        (0x3005, 0x6ff0),
        (0x2005, 0x6ff0),
        (0x1005, 0x6ff0),
        (0x9999, 0x6ff0),
        (0x3005, 0x6fe8),
    ]
    .map(|(addr, sp)| context.return_pops(addr, sp));
    assert_eq!(pops, [Some(1), Some(1), Some(2), None, None, None]);
    // A frame entered without one is not tested against it.
    push(&mut context, 0x4005);
    assert_eq!(context.return_pops(0x4005, 0x6ff8), None);
}

/// Callgrind's unwinding: every frame below the stack pointer is left,
/// then as many at it as asked; the outermost frame left is returned.
#[test]
fn unwinding_leaves_the_frames_below_the_stack_pointer_and_those_asked_for_at_it() {
    let (mut arcs, mut backdate) = (Arcs::new(), NoBackdate);
    let mut context = Context::new(());
    for (sp, from) in [(0x7000, 1), (0x6ff0, 2), (0x6ff0, 3), (0x6fe0, 4)] {
        let call = Call {
            from: InstrId(from),
            ..call_to(0x2000)
        };
        context.push(call, Some(sp), false, &mut backdate, 0);
    }
    let mut left = |context: &mut Context<()>, sp, pops| {
        let left = context.unwind_to_sp(sp, pops, &mut arcs, &mut backdate, 0);
        (left.map(|left| left.from), context.depth())
    };
    assert_eq!(left(&mut context, 0x6ff0, 1), (Some(InstrId(4)), 3));
    assert_eq!(left(&mut context, 0x6ff0, 0), (None, 3));
    assert_eq!(left(&mut context, 0x6ff0, 2), (Some(InstrId(2)), 1));
    assert_eq!(left(&mut context, 0x6ff0, 5), (None, 1));
}

/// Where the outermost code returns (with no frame open, or from a call
/// made by a jump, which has no return address), the code returned to is
/// outermost code entered there; a return from a call is not.
#[test]
fn code_the_outermost_code_returns_to_is_entered_there() {
    let (mut arcs, mut backdate) = (Arcs::new(), NoBackdate);
    let mut context = Context::new(());
    context.start(0x1000, None);
    assert_eq!(context.entry(0x1234), 0x1000);
    context.return_by_sp(0x5000, 0x7000, 0, &mut arcs, &mut backdate, 0);
    assert_eq!(context.entry(0x1234), 0x5000);
    for (return_addr, tail, returned_to, entry) in [
        (0x6005, false, 0x6005, 0x5000),
        (0, false, 0x8000, 0x8000),
        (0x6005, true, 0x9000, 0x9000),
    ] {
        let call = Call {
            return_addr,
            ..call_to(0x2000)
        };
        context.push(call, Some(0x6ff0), tail, &mut backdate, 0);
        assert_eq!(context.entry(0x1234), 0x2000);
        context.return_by_sp(returned_to, 0x6ff8, 1, &mut arcs, &mut backdate, 0);
        assert_eq!(
            context.entry(0x1234),
            entry,
            "after a return to {returned_to:#x}"
        );
    }
}

/// Without stack pointers, a frame entered by a jump to another function
/// (a tail call) takes the return address of the frame it replaced, and
/// returns together with it.
#[test]
fn a_tail_frame_returns_together_with_the_frame_it_replaced() {
    let (mut arcs, mut backdate) = (Arcs::new(), NoBackdate);
    let mut context = Context::new(());
    push(&mut context, 0x05);
    push(&mut context, 0x45);
    let call = Call {
        from: InstrId(7),
        ..call_to(0x3000)
    };
    context.push(call, None, true, &mut backdate, 0);
    let left = context.return_to(0x45, &mut arcs, &mut backdate, 0);
    assert_eq!(context.depth(), 1);
    assert_eq!(left.map(|left| left.return_addr()), Some(0x45));
    // Returning elsewhere, the innermost frame and the one it replaced.
    push(&mut context, 0x45);
    context.push(call, None, true, &mut backdate, 0);
    context.return_to(0x77, &mut arcs, &mut backdate, 0);
    assert_eq!(context.depth(), 1);
    assert!(context.return_addrs.contains_key(&0x05));
}
