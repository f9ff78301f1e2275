//! Signal handlers: which code a handler's cost is charged under, and where
//! a handler that jumps out, or runs on another stack, ends.

use super::*;

/// A signal handler that jumps out (`siglongjmp`) to the code it
/// interrupted never reaches `sigreturn`: the first block whose stack
/// pointer leaves the interrupted code's innermost frame ends the handler,
/// and that frame returns, as Callgrind unwinds them. A handler that
/// returns runs the trampoline just above its own frame and stays on until
/// `sigreturn`.
#[test]
fn a_handler_that_jumps_out_ends_where_the_code_it_interrupted_goes_on() {
    let profile = simulate_text(
        "linegrind-trace text 1
         fn 1000 1100 start
         fn 1100 1200 main
         fn 1200 1300 f
         fn 1300 1400 handler
         fn 1400 1500 h
         fn 1500 1510 __restore_rt
         sp 9000
         i 1000 5     # start: call main
         call 1100
         sp 8ff8
         i 1100 1     # main; a signal comes
         signal 10
         sp 7000
         i 1300 1     # handler: ret, to the trampoline
         ret
         sp 7008
         i 1500 2     # the trampoline
         sigreturn
         sp 8ff8
         i 1101 5     # main: call f
         call 1200
         sp 8ff0
         i 1200 1     # f
         i 1201 2     # f: a system call, after which a signal comes
         signal 10
         sp 7000
         i 1300 5     # handler: call h
         call 1400
         sp 6ff8
         i 1400 1     # h: ret
         ret
         sp 7000
         i 1305 2     # handler: jmp to main (siglongjmp)
         sp 8ff8
         i 1106 1     # main, after the jump: f and the handler are left
         i 1107 1     # main: ret
         ret
         sp 9000
         i 1005 1     # start",
        SimConfig::default(),
    );
    let main_f = arc(&profile, "main", "f");
    assert_eq!((main_f.calls, main_f.inclusive[Ir]), (1, 2));
    // main's four instructions and f's two: the handlers are roots.
    let start_main = arc(&profile, "start", "main");
    assert_eq!((start_main.calls, start_main.inclusive[Ir]), (1, 6));
    assert_eq!(self_cost(&profile, "main")[Ir], 4);
    assert_eq!(arc(&profile, "handler", "h").inclusive[Ir], 1);
    assert_eq!(self_cost(&profile, "__restore_rt")[Ir], 1);
}

/// A handler on an alternate signal stack above the interrupted code's
/// frames is not taken for one that jumped out, whether its first block
/// gives its stack pointer or not.
#[test]
fn a_handler_on_a_stack_above_the_interrupted_code_runs_until_sigreturn() {
    for first_sp in ["sp 9000", ""] {
        let profile = simulate_text(
            &format!(
                "linegrind-trace text 1
                 fn 1000 1100 main
                 fn 2000 2100 f
                 fn 3000 3100 handler
                 sp 7000
                 i 1000 4     # main: call f
                 call 2000
                 sp 6f00
                 i 2000 4     # f; a signal comes
                 signal 10
                 {first_sp}
                 i 3000 4     # handler, on its own stack
                 sp 9000
                 i 3004 4
                 sigreturn
                 sp 6f00
                 i 2004 1     # f"
            ),
            SimConfig::default(),
        );
        assert_eq!(self_cost(&profile, "handler")[Ir], 2, "{first_sp:?}");
        assert_eq!(arc(&profile, "main", "f").inclusive[Ir], 2, "{first_sp:?}");
    }
}

/// A handler whose blocks run at stack pointer 0 (a made-up trace's) with
/// no floor below it: 0 is a stack pointer like any other, not one that
/// leaves the handler.
#[test]
fn a_handler_at_stack_pointer_zero_runs_until_sigreturn() {
    let profile = simulate_text(
        "linegrind-trace text 1
         fn 1000 1100 main
         fn 2000 2100 handler
         sp 7000
         i 1000 4     # main; a signal comes
         signal 11
         sp 0
         i 2000 4     # handler
         sp 0
         i 2004 4
         sigreturn
         sp 7000
         i 1004 4     # main",
        SimConfig::default(),
    );
    assert_eq!(self_cost(&profile, "handler")[Ir], 2);
    assert_eq!(self_cost(&profile, "main")[Ir], 2);
    assert_eq!(profile.late_sigreturns, 0);
    let called = |arc: &linegrind::arcs::Arc| profile.program.function(arc.callee).name.clone();
    assert!(
        profile.arcs.iter().all(|arc| called(arc) != "handler"),
        "the handler taken for a callee"
    );
}

/// A handler on an alternate stack mapped above the thread's stack (as
/// Valgrind maps a thread's) that jumps out, twice: its own calls stay
/// above the thread's frames, and the first block back among them, at or
/// below the outermost's stack pointer, has left it, also where that block
/// is known and reached by a plain jump (the second time, as block runs).
#[test]
fn a_handler_on_a_stack_above_the_threads_that_jumps_out_ends_there() {
    let round = "sp 8ff0
                 i 1200 2     # f: a system call, after which a signal comes
                 signal 10
                 sp a000
                 i 1300 5     # handler, on its own stack: call h
                 call 1400
                 sp 9ff8
                 i 1400 1     # h: ret
                 ret
                 sp a000
                 i 1305 2     # handler: jmp to main (siglongjmp)
                 sp 8ff8
                 i 1101 5     # main, after the jump, f and the handler left: call f
                 call 1200";
    let trace = format!(
        "linegrind-trace text 1
         fn 1000 1100 start
         fn 1100 1200 main
         fn 1200 1300 f
         fn 1300 1400 handler
         fn 1400 1500 h
         sp 9000
         i 1000 5     # start: call main
         call 1100
         sp 8ff8
         i 1100 1     # main
         i 1101 5     # main: call f
         call 1200
         {round}
         {round}
         sp 8ff0
         i 1200 2     # f: ret
         i 1202 1
         ret
         sp 8ff8
         i 1106 1     # main: ret
         ret
         sp 9000
         i 1005 1     # start"
    );
    for profile in &as_events_and_block_runs(&trace) {
        let main_f = arc(profile, "main", "f");
        assert_eq!((main_f.calls, main_f.inclusive[Ir]), (3, 4));
        assert_eq!(arc(profile, "start", "main").inclusive[Ir], 9);
        assert_eq!(arc(profile, "handler", "h").inclusive[Ir], 2);
        assert_eq!(self_cost(profile, "handler")[Ir], 4);
    }
}

/// A handler that interrupts a handler on the alternate stack, on the
/// same stack, and jumps out of both into the thread's code: both end
/// there.
#[test]
fn a_nested_handler_on_the_alternate_stack_that_jumps_out_ends_both() {
    let profile = simulate_text(
        "linegrind-trace text 1
         fn 1000 1100 start
         fn 1100 1200 main
         fn 1200 1300 f
         fn 1300 1400 handler
         fn 1400 1500 h
         fn 1500 1600 nested
         sp 9000
         i 1000 5     # start: call main
         call 1100
         sp 8ff8
         i 1100 5     # main: call f
         call 1200
         sp 8ff0
         i 1200 2     # f: a signal comes
         signal 10
         sp a000
         i 1300 2     # handler, on its own stack: another signal comes
         signal 12
         sp 9f00
         i 1500 5     # nested, below it on the same stack: call h
         call 1400
         sp 9ef8
         i 1400 1     # h: ret
         ret
         sp 9f00
         i 1505 2     # nested: jmp to main (siglongjmp)
         sp 8ff8
         i 1105 1     # main, after the jump: ret
         ret
         sp 9000
         i 1005 1     # start",
        SimConfig::default(),
    );
    assert_eq!(arc(&profile, "start", "main").inclusive[Ir], 3);
    assert_eq!(arc(&profile, "nested", "h").inclusive[Ir], 1);
    assert_eq!(self_cost(&profile, "nested")[Ir], 2);
}

/// A handler that interrupts code in a frame entered without a stack
/// pointer (a trace that gives them at some blocks only), on a stack below
/// the thread's frames: it runs until its `sigreturn`.
#[test]
fn a_handler_below_a_frame_without_a_stack_pointer_runs_until_sigreturn() {
    let profile = simulate_text(
        "linegrind-trace text 1
         fn 1000 1100 start
         fn 1100 1200 main
         fn 1200 1300 f
         fn 1300 1400 handler
         fn 1400 1500 h
         sp 9000
         i 1000 5     # start: call main
         call 1100
         sp 8ff8
         i 1100 5     # main: call f
         call 1200
         i 1200 2     # f, entered without a stack pointer: a signal comes
         signal 10
         sp 8000
         i 1300 5     # handler: call h
         call 1400
         sp 7ff8
         i 1400 1     # h: ret
         ret
         sp 8000
         i 1305 1     # handler
         i 1306 1
         sigreturn
         i 1202 1     # f: ret
         ret
         sp 8ff8
         i 1105 1     # main: ret
         ret
         sp 9000
         i 1005 1     # start",
        SimConfig::default(),
    );
    assert_eq!(arc(&profile, "handler", "h").inclusive[Ir], 1);
    assert_eq!(self_cost(&profile, "handler")[Ir], 3);
    assert_eq!(arc(&profile, "main", "f").inclusive[Ir], 2);
}

/// The same where the handler's code is the interrupted function's, so
/// that its jump back is one within a function: a known block reached by
/// it leaves the handler too.
#[test]
fn a_jump_within_a_function_out_of_a_handler_above_the_threads_ends_it() {
    let round = "sp 8ff0
                 i 1200 2     # f: a signal comes
                 signal 10
                 sp a000
                 i 1250 2     # the handler, f's own code on its own stack: jmp into f
                 sp 8ff0
                 i 1202 1     # f, after the jump: the handler is left
                 i 1203 1     # f: jmp to its start";
    let trace = format!(
        "linegrind-trace text 1
         fn 1000 1100 start
         fn 1100 1200 main
         fn 1200 1300 f
         sp 9000
         i 1000 5     # start: call main
         call 1100
         sp 8ff8
         i 1100 5     # main: call f
         call 1200
         {round}
         {round}
         sp 8ff0
         i 1200 2
         i 1202 1
         i 1203 1
         i 1204 1     # f: ret
         ret
         sp 8ff8
         i 1105 1     # main: ret
         ret
         sp 9000
         i 1005 1     # start"
    );
    for profile in &as_events_and_block_runs(&trace) {
        // f's 12 instructions but the handlers' 2.
        assert_eq!(self_cost(profile, "f")[Ir], 12);
        assert_eq!(arc(profile, "main", "f").inclusive[Ir], 10);
        assert_eq!(arc(profile, "start", "main").inclusive[Ir], 12);
    }
}
