//! Who gets charged: skipped functions, tail calls, and the positions the
//! callgrind file gives costs at; under signal handlers in `handlers`.

use linegrind::config::SimConfig;
use linegrind::cost::EventKind::*;
use linegrind::output::Positions;
use linegrind::profile::Profile;
use linegrind::report::ProfileFile;
use linegrind::simulator::simulate;
use linegrind::symbols::SkipRules;
use linegrind::trace::binary::{BinaryReader, TraceWriter};
use linegrind::trace::{Blocker, TextReader, TraceRead};

use crate::support::{
    arc, callgrind_text, example_traces, root, self_cost, simulate_text, with_and_without_sp,
};

mod handlers;

const WRAPPED: &str = "linegrind-trace text 1
    fn 1000 1040 main m.c 1
    fn 1040 1080 wrapper m.c 10
    fn 1080 10c0 leaf m.c 20
    i 1000 5     # main: call wrapper
    call 1040
    i 1040 4     # wrapper
    r 8000 8
    i 1044 5     # wrapper: call leaf
    call 1080
    i 1080 1     # leaf: ret
    ret
    i 1049 1     # wrapper: ret
    ret
    i 1005 1     # main";

#[test]
fn a_skipped_function_is_charged_to_its_caller_which_makes_its_calls() {
    let skip = SkipRules {
        patterns: vec!["wrap*".into()],
        plt: true,
    };
    let profile = simulate_text(WRAPPED, SimConfig::default().with_skip(skip));
    // wrapper's three instructions and its read are main's own cost, at the
    // call site; main calls leaf from there.
    assert_eq!(profile.arcs.len(), 1);
    let call = arc(&profile, "main", "leaf");
    assert_eq!((call.calls, call.inclusive[Ir]), (1, 1));
    let main = self_cost(&profile, "main");
    assert_eq!((main[Ir], main[Dr], main[D1mr]), (5, 1, 1));
    assert_eq!(self_cost(&profile, "wrapper")[Ir], 0);
    assert_eq!(self_cost(&profile, "leaf")[Ir], 1);
    // Lines loaded by wrapper's code are loaded at main's call site.
    assert_eq!(main[Loaded1], 3 * 64, "lines 0x1000, 0x1040 and 0x8000");

    let plain = simulate_text(WRAPPED, SimConfig::default());
    assert_eq!(arc(&plain, "main", "wrapper").inclusive[Ir], 4);
    assert_eq!(arc(&plain, "wrapper", "leaf").inclusive[Ir], 1);
    assert_eq!(plain.totals, profile.totals);
}

#[test]
fn a_jump_to_another_functions_entry_is_a_tail_call() {
    let profile = simulate_text(
        "linegrind-trace text 1
         fn 1000 1040 main
         fn 1040 1080 a
         fn 1080 10c0 b
         i 1000 5     # main: call a
         call 1040
         i 1040 4     # a
         i 1044 2     # a: jmp b
         i 1080 4     # b, reached by a jump: a tail call from a
         i 1084 1     # b: ret, to main: b and a return together
         ret
         i 1005 1     # main",
        SimConfig::default(),
    );
    let main_a = arc(&profile, "main", "a");
    assert_eq!((main_a.calls, main_a.inclusive[Ir]), (1, 4));
    let a_b = arc(&profile, "a", "b");
    assert_eq!((a_b.calls, a_b.inclusive[Ir]), (1, 2));
    assert_eq!(self_cost(&profile, "main")[Ir], 2);
}

/// Every arc as its caller's and callee's names, in order of first call,
/// with its calls and their inclusive `Ir`.
fn named_arcs(profile: &Profile) -> Vec<((&str, &str), u64, u64)> {
    let name = |func| profile.program.function(func).name.as_str();
    profile
        .arcs
        .iter()
        .map(|arc| {
            let ends = (name(profile.caller(arc)), name(arc.callee));
            (ends, arc.calls, arc.inclusive[Ir])
        })
        .collect()
}

/// The calls along the one arc from `caller` to `callee`, and their
/// inclusive `Ir`.
fn calls_and_ir(profile: &Profile, caller: &str, callee: &str) -> (u64, u64) {
    let arc = arc(profile, caller, callee);
    (arc.calls, arc.inclusive[Ir])
}

/// A jump into the middle of another function of the same object lands in
/// that function's code: as a call from the jumping function (`mempcpy`
/// jumping into `memcpy`), or, back into the function whose jump entered
/// the frame (`work.cold` into `work`), as a return there; so a function's
/// inclusive cost is its self cost and its calls', with stack pointers
/// (recorded traces) or without.
#[test]
fn a_jump_into_another_functions_middle_keeps_inclusive_costs_whole() {
    let trace = "linegrind-trace text 1
         fn 1000 1040 main
         fn 2000 2040 work
         fn 3000 3040 work.cold
         fn 4000 4040 mempcpy
         fn 5000 5040 memcpy
         sp 7000
         i 1000 5     # main: call work
         call 2000
         sp 6ff8
         i 2000 4     # work: jmp work.cold, a tail call
         sp 6ff8
         i 3000 4     # work.cold: jmp back into work, a return there
         sp 6ff8
         i 2010 4     # work: call mempcpy
         call 4000
         sp 6ff0
         i 4000 4     # mempcpy: jmp into memcpy, a call from mempcpy
         sp 6ff0
         i 5010 4     # memcpy
         i 5014 1     # memcpy: ret, with mempcpy
         ret
         sp 6ff8
         i 2014 1     # work: ret
         ret
         sp 7000
         i 1005 1     # main";
    for trace in with_and_without_sp(trace) {
        let profile = simulate_text(&trace, SimConfig::default());
        let ir = |caller, callee| calls_and_ir(&profile, caller, callee);
        assert_eq!(ir("main", "work"), (1, 7), "{trace}");
        assert_eq!(ir("work", "work.cold"), (1, 1), "{trace}");
        assert_eq!(ir("work", "mempcpy"), (1, 3), "{trace}");
        assert_eq!(ir("mempcpy", "memcpy"), (1, 2), "{trace}");
        assert_eq!(self_cost(&profile, "work")[Ir], 3, "{trace}");
        assert_eq!(self_cost(&profile, "memcpy")[Ir], 2, "{trace}");
        assert_eq!(profile.arcs.len(), 4, "{trace}");
    }
}

/// A skipped function's jump back from its `.cold` part returns there, so
/// its code after that is its caller's again, not the `.cold` part's.
#[test]
fn a_skipped_functions_jump_back_from_its_cold_part_returns() {
    let trace = "linegrind-trace text 1
         fn 1000 1040 main
         fn 2000 2040 work
         fn 3000 3040 work.cold
         sp 7000
         i 1000 5     # main: call work
         call 2000
         sp 6ff8
         i 2000 4     # work: jmp into work.cold
         sp 6ff8
         i 3010 4     # work.cold: jmp back into work
         sp 6ff8
         i 2010 4     # work
         i 2014 1     # work: ret
         ret
         sp 7000
         i 1005 1     # main";
    let skip = SkipRules {
        patterns: vec!["work".into()],
        plt: true,
    };
    for trace in with_and_without_sp(trace) {
        let profile = simulate_text(&trace, SimConfig::default().with_skip(skip.clone()));
        // work's four instructions are main's, at the call; work.cold's
        // one is its own, called from there.
        assert_eq!(self_cost(&profile, "main")[Ir], 5, "{trace}");
        assert_eq!(self_cost(&profile, "work.cold")[Ir], 1, "{trace}");
        assert_eq!(
            calls_and_ir(&profile, "main", "work.cold"),
            (1, 1),
            "{trace}"
        );
        assert_eq!(profile.arcs.len(), 1, "{trace}");
    }
}

/// A call whose callee's first block runs with a stack pointer above its
/// caller's frame leaves that frame: Callgrind takes it for a return, and
/// neither enters nor counts the call.
#[test]
fn a_call_that_leaves_frames_is_not_counted() {
    let trace = "linegrind-trace text 1
         fn 1000 1040 main
         fn 2000 2040 f
         fn 3000 3040 g
         sp 7000
         i 1000 5     # main: call f
         call 2000
         sp 6ff8
         i 2000 5     # f: call g, landing above f's frame
         call 3000
         sp 7000
         i 3000 1     # g, in main's frame
         i 3001 1";
    let profile = simulate_text(trace, SimConfig::default());
    assert_eq!(calls_and_ir(&profile, "main", "f"), (1, 1));
    let called: Vec<_> = profile.called_arcs().collect();
    assert_eq!(called.len(), 1, "{called:?}");
}

/// Code that runs on, without a jump, into another function's code
/// (`__memcpy_chk` into `memcpy`, inside one block) calls it, as a jump
/// there would, and returns with the frame it ran in.
#[test]
fn flow_that_runs_on_into_another_function_calls_it() {
    let trace = "linegrind-trace text 1
         fn 1000 1040 main
         fn 2000 2010 memcpy_chk
         fn 2010 2040 memcpy
         sp 7000
         i 1000 5     # main: call memcpy_chk
         call 2000
         sp 6ff8
         i 2000 4     # memcpy_chk
         i 2004 12    # memcpy_chk, running on into memcpy
         i 2010 4     # memcpy
         i 2014 1     # memcpy: ret, with memcpy_chk
         ret
         sp 7000
         i 1005 1     # main";
    for trace in with_and_without_sp(trace) {
        let profile = simulate_text(&trace, SimConfig::default());
        let ir = |caller, callee| calls_and_ir(&profile, caller, callee);
        assert_eq!(ir("main", "memcpy_chk"), (1, 4), "{trace}");
        assert_eq!(ir("memcpy_chk", "memcpy"), (1, 2), "{trace}");
        assert_eq!(profile.arcs.len(), 2, "{trace}");
    }
}

/// In every example's profile, what the calls into a function cost is its
/// self cost and its own calls', event by event: no code is charged to a
/// function outside its calls (none of them enters one otherwise, as a
/// thread or a signal handler would).
#[test]
fn every_called_function_costs_its_self_cost_and_its_calls() {
    for trace in example_traces() {
        let name = trace.file_stem().unwrap().to_str().unwrap();
        let golden = root().join(format!("tests/golden/{name}.callgrind"));
        let file = ProfileFile::parse(
            std::fs::File::open(&golden)
                .map(std::io::BufReader::new)
                .unwrap(),
        )
        .unwrap();
        let events = file.events.len();
        let mut into = vec![vec![0u64; events]; file.functions.len()];
        let mut whole: Vec<Vec<u64>> = file.functions.iter().map(|f| f.self_cost.clone()).collect();
        let mut called = vec![false; file.functions.len()];
        for call in &file.calls {
            called[call.callee] = true;
            for event in 0..events {
                into[call.callee][event] += call.inclusive[event];
                whole[call.caller][event] += call.inclusive[event];
            }
        }
        for (index, function) in file.functions.iter().enumerate() {
            if called[index] {
                assert_eq!(into[index], whole[index], "{name}: {}", function.key.name);
            }
        }
    }
}

/// A `call` whose next instruction is not at its target enters the code
/// that runs, as Callgrind names a callee by the code a call reaches; a
/// `call` that nothing follows is not counted, as Callgrind counts a call
/// as it enters the callee (and as a binary trace drops it).
#[test]
fn a_call_enters_the_function_its_next_instruction_runs_in() {
    let profile = simulate_text(
        "linegrind-trace text 1
         fn 1000 1040 main
         fn 1040 1080 gather
         fn 1080 10c0 other
         i 1000 5     # main: call gather...
         call 1040
         i 1080 4     # ...yet other runs
         i 1084 1     # other: ret
         ret
         i 1005 5     # main: call gather
         call 1040
         i 1040 1     # gather: ret
         ret
         i 100a 5     # main: call gather, and the trace ends
         call 1040",
        SimConfig::default(),
    );
    let main_other = arc(&profile, "main", "other");
    assert_eq!(
        (
            main_other.calls,
            main_other.target,
            main_other.inclusive[Ir]
        ),
        (1, 0x1080, 2)
    );
    let called: Vec<(u64, u64)> = profile
        .called_arcs()
        .map(|(_, arc)| (profile.program.instr(arc.call_site).addr, arc.calls))
        .collect();
    assert_eq!(called, [(0x1000, 1), (0x1005, 1)]);
    let positions = Positions {
        instr: true,
        line: true,
    };
    let file = callgrind_text(&profile, positions);
    assert!(file.contains("desc: Call arcs: 2\n"), "{file}");
    assert!(!file.contains("calls=0"), "{file}");
}

/// A call whose next instruction is elsewhere than its target enters the
/// code there as a call there would: code without a symbol is a function
/// named after where the call went, and a skipped function's code is
/// charged to the call site.
#[test]
fn a_call_elsewhere_than_its_target_enters_unnamed_or_skipped_code_as_a_call_there() {
    let trace = "linegrind-trace text 1
         fn 1000 1040 main
         fn 1040 1080 gather
         fn 1080 10c0 wrapper
         i 1000 5     # main: call gather, yet code without a symbol runs
         call 1040
         i 3000 1
         i 3001 1     # ret
         ret
         i 1005 5     # main: call gather, yet wrapper runs
         call 1040
         i 1080 1     # wrapper: ret
         ret
         i 100a 1";
    let skip = SkipRules {
        patterns: vec!["wrap*".into()],
        plt: false,
    };
    let profile = simulate_text(trace, SimConfig::default().with_skip(skip));
    let unnamed = arc(&profile, "main", "0x0000000000003000");
    assert_eq!((unnamed.calls, unnamed.inclusive[Ir]), (1, 2));
    assert_eq!(self_cost(&profile, "0x0000000000003000")[Ir], 2);
    assert_eq!(self_cost(&profile, "wrapper")[Ir], 0);
    assert_eq!(self_cost(&profile, "main")[Ir], 4);
    assert_eq!(profile.called_arcs().count(), 1);
}

/// Code no symbol covers is charged to the function of the frame that
/// runs it, as Callgrind charges it: a helper that two functions end by
/// jumping to (as `sqlite3_result_blob` and `sqlite3_result_text` do in a
/// stripped libsqlite3) is each one's in turn, whichever ran it first, and
/// in later runs too, whose blocks are known.
#[test]
fn unnamed_code_that_two_functions_jump_to_is_each_ones_in_its_frames() {
    let round = "i 1000 5     # main: call blob
         call 1100
         i 1100 2     # blob: jmp helper
         i 1300 4     # helper
         r 9000 8
         i 1304 1     # helper: ret
         ret
         i 1005 5     # main: call text
         call 1110
         i 1110 3     # text: jmp helper
         i 1300 4
         r 9040 8
         i 1304 1
         ret
         i 100a 2     # main: jmp back
    ";
    let text = format!(
        "linegrind-trace text 1
         object /x/a bias=0 start=1000 end=2000 symbols=embedded
         fn 1000 1100 main
         fn 1100 1110 blob
         fn 1110 1120 text
         {round}{round}{round}i 1000 1"
    );
    let profile = simulate_text(&text, SimConfig::default());
    for name in ["blob", "text"] {
        let cost = self_cost(&profile, name);
        // Its jump and the helper's two instructions and read, three times;
        // its line missed once.
        assert_eq!((cost[Ir], cost[Dr], cost[D1mr]), (9, 3, 1), "{name}");
        let call = arc(&profile, "main", name);
        assert_eq!((call.calls, call.inclusive[Ir]), (3, 9), "{name}");
    }
    assert_eq!(self_cost(&profile, "main")[Ir], 10);
    let names: Vec<&str> = profile
        .program
        .functions()
        .iter()
        .map(|f| f.name.as_str())
        .collect();
    assert_eq!(names, ["main", "blob", "text"]);
}

/// Callgrind makes a jump into another object, or between PLT stubs and
/// other code, a call, with stack pointers or without. Code without
/// symbols has no entry to tell a jump by, so the first jump into it must
/// decide as the later ones do, though only they find its instructions
/// known.
#[test]
fn every_jump_into_a_plt_stub_or_another_objects_unnamed_code_is_a_call() {
    // f tail-jumps through a PLT stub to memcpy, then into code of another
    // object that no symbol covers; main calls f twice.
    let run = "sp 8000
         i 1001 5     # main: call f
         call 1100
         sp 7ff8
         i 1100 2     # f: jmp memcpy@plt
         sp 7ff8
         i 1200 6     # the stub: jmp *GOT
         r 9000 8
         sp 7ff8
         i 5100 3     # memcpy
         i 5103 1     # memcpy: jmp to the other object
         sp 7ff8
         i 6000 4     # unnamed code of /x/c
         i 6004 1     # ret, to main
         ret
         sp 8000
         i 1006 2     # main: jmp back to the call
    ";
    let text = format!(
        "linegrind-trace text 1
         object /x/a bias=0 start=1000 end=2000 symbols=embedded
         object /x/b bias=0 start=5000 end=6000 symbols=embedded
         object /x/c bias=0 start=6000 end=7000 symbols=embedded
         fn 1000 1100 main
         fn 1100 1200 f
         fn 5100 5200 memcpy
         plt 1200 1300
         sp 8000
         i 1000 1     # main
         {run}{run}i 1008 1"
    );
    for text in with_and_without_sp(&text) {
        let profile = simulate_text(&text, SimConfig::default());
        // The stub is skipped: its instruction and read are f's, at the jump.
        let f = self_cost(&profile, "f");
        assert_eq!((f[Ir], f[Dr]), (4, 2));
        let f_memcpy = arc(&profile, "f", "memcpy");
        assert_eq!((f_memcpy.calls, f_memcpy.inclusive[Ir]), (2, 2 * 4));
        // The unnamed code is one function, entered where memcpy jumped to.
        let unnamed = arc(&profile, "memcpy", "0x0000000000006000");
        assert_eq!((unnamed.calls, unnamed.inclusive[Ir]), (2, 2 * 2));
        assert_eq!(self_cost(&profile, "0x0000000000006000")[Ir], 4);
        let main_f = arc(&profile, "main", "f");
        assert_eq!((main_f.calls, main_f.inclusive[Ir]), (2, 2 * 6));
        // Nothing but main is left without a caller.
        assert_eq!(profile.arcs.len(), 3);
        assert_eq!(profile.program.functions().len(), 5);
    }
}

#[test]
fn without_instr_positions_costs_are_given_per_source_line() {
    let text =
        std::fs::read_to_string(crate::support::root().join("traces/call_chain.lgt")).unwrap();
    let profile = simulate_text(&text, SimConfig::default());
    let render = |positions| callgrind_text(&profile, positions);
    let lines = render(Positions {
        instr: false,
        line: true,
    });
    assert!(lines.contains("positions: line\n"));
    // inner's 19 instructions all sit on line 4: one cost line.
    let inner = lines.split("fn=(4)\n").nth(1).unwrap();
    assert!(
        inner.starts_with("4 19 4 0 0 1 0 0 1 0 250 0 250 0 64 64 64 64\n"),
        "{inner}"
    );
    assert!(
        lines.contains("calls=1 16\n"),
        "call targets carry only a line"
    );
    let instrs = render(Positions {
        instr: true,
        line: false,
    });
    assert!(instrs.contains("positions: instr\n"));
    assert!(instrs.contains("calls=1 0x401020\n"));
    assert!(instrs.contains("fn=(1) main\n0x401000 1 0 1"));
}

/// A return into another function than the one that made the call it
/// leaves: a retpoline (`call` to a label that overwrites its return
/// address and returns) returns into the target of the indirect call it
/// stands for, and a stack switch (`swapcontext`) returns into another
/// coroutine. That code runs as called from the instruction that made the
/// call left, so that every function's inclusive cost is its self cost and
/// its calls'; as events and as block runs, whose second round arrives at
/// the target's known block by the return, with stack pointers or without
/// (returns matched by address).
#[test]
fn a_return_into_another_function_enters_it_as_a_call() {
    let round = "sp 8ff0
                 i 1200 5     # the thunk: call its label
                 call 1210
                 sp 8fe8
                 i 1210 4     # the label: the target over the return address
                 i 1214 1     # ret, to the target
                 ret
                 sp 8ff0
                 i 1300 1     # the target
                 i 1301 1     # ret, to main
                 ret";
    let trace = format!(
        "linegrind-trace text 1
         fn 1000 1100 start
         fn 1100 1200 main
         fn 1200 1300 thunk
         fn 1300 1400 target
         sp 9000
         i 1000 5     # start: call main
         call 1100
         sp 8ff8
         i 1100 5     # main: call the thunk
         call 1200
         {round}
         sp 8ff8
         i 1105 5     # main: call the thunk again
         call 1200
         {round}
         sp 8ff8
         i 110a 1     # main: ret
         ret
         sp 9000
         i 1005 1     # start"
    );
    for trace in with_and_without_sp(&trace) {
        for profile in &as_events_and_block_runs(&trace) {
            let thunk_target = arc(profile, "thunk", "target");
            assert_eq!((thunk_target.calls, thunk_target.inclusive[Ir]), (2, 4));
            assert_eq!(arc(profile, "thunk", "thunk").inclusive[Ir], 4);
            assert_eq!(arc(profile, "start", "main").inclusive[Ir], 13);
            assert_eq!(self_cost(profile, "thunk")[Ir], 6);
        }
    }
}

/// A return elsewhere into the function that ran last goes on in the call
/// it left only where that function is the call's callee (`vfork`): here
/// `helper`'s frame is left for code of `main`, which `helper` had called
/// by a jump into its middle, so the code is called from `lib`'s call
/// instruction, and counted, and `lib`'s inclusive cost is its self cost
/// and its calls'.
#[test]
fn a_return_elsewhere_into_another_callee_than_the_calls_is_counted() {
    let profile = simulate_text(
        "linegrind-trace text 1
         fn 401000 401040 main
         fn 402000 402040 helper
         fn 500000 500040 lib
         i 401004 4   # main: a jump to lib's first byte, a tail call
         i 500000 2   # lib: call helper
         call 402000
         i 402000 4   # helper: a jump into main's middle, a call of main
         i 40102d 1   # main: ret, leaving main's frame and helper's
         ret
         i 401000 4   # main, not where lib's call returns",
        SimConfig::default(),
    );
    let ir = |caller, callee| calls_and_ir(&profile, caller, callee);
    assert_eq!(ir("main", "lib"), (1, 4));
    assert_eq!(ir("lib", "helper"), (1, 2));
    assert_eq!(ir("helper", "main"), (1, 1));
    assert_eq!(ir("lib", "main"), (1, 1));
    assert_eq!(self_cost(&profile, "lib")[Ir], 1);
    assert_eq!(profile.arcs.len(), 4);
}

/// The same through a skipped function: `helper`, skipped, jumps into
/// `x`'s middle (a call of `x` from `lib`'s call site) and `x` into
/// `main`'s; the return elsewhere lands in `main`, which `lib`'s call site
/// had not called, so that is a counted call, and `lib`'s inclusive cost
/// is its self cost and its calls'.
#[test]
fn a_return_elsewhere_through_a_skipped_callee_counts_a_call_it_did_not_make() {
    let skip = SkipRules {
        patterns: vec!["helper".into()],
        plt: true,
    };
    let profile = simulate_text(
        "linegrind-trace text 1
         fn 401000 401040 main
         fn 402000 402040 helper
         fn 403000 403040 x
         fn 500000 500040 lib
         i 401004 4   # main: a jump to lib's first byte, a tail call
         i 500000 2   # lib: call helper
         call 402000
         i 402000 4   # helper, skipped: lib's own cost
         i 403010 4   # x: called by lib through helper
         i 40102d 1   # main: called by x; ret, leaving every frame but lib's
         ret
         i 401000 4   # main, not where lib's call returns",
        SimConfig::default().with_skip(skip),
    );
    let ir = |caller, callee| calls_and_ir(&profile, caller, callee);
    assert_eq!(ir("main", "lib"), (1, 5));
    assert_eq!(ir("lib", "x"), (1, 2));
    assert_eq!(ir("x", "main"), (1, 1));
    assert_eq!(ir("lib", "main"), (1, 1));
    assert_eq!(self_cost(&profile, "lib")[Ir], 2);
}

/// A function that pops its return address before a system call and
/// pushes it back after (glibc's `vfork`): the stack pointer's rise leaves
/// its frame, and the code after it, back in the function that ran last,
/// is its call going on, counted once; its `ret` returns from it to the
/// caller, so that calls of it in turn do not nest (in Callgrind the `ret`
/// calls the caller's code: `main` calling `main`).
#[test]
fn a_call_whose_frame_the_stack_pointer_left_goes_on_in_its_callee() {
    let vfork = "sp 8fe8
         i 2000 1     # vfork: pop its return address
         i 2001 2     # the system call
         sp 8ff0
         i 2003 1     # vfork, its frame left: push the return address back
         i 2004 1     # ret, to main
         ret";
    let trace = format!(
        "linegrind-trace text 1
         fn 1000 1100 start
         fn 1100 1200 main
         fn 2000 2100 vfork
         sp 9000
         i 1000 5     # start: call main
         call 1100
         sp 8ff8
         i 1100 1     # main: push
         i 1101 5     # call vfork
         call 2000
         {vfork}
         sp 8ff0
         i 1106 5     # main: call vfork again
         call 2000
         {vfork}
         sp 8ff0
         i 110b 1     # main: pop
         i 110c 1     # ret
         ret
         sp 9000
         i 1005 1     # start"
    );
    for profile in &as_events_and_block_runs(&trace) {
        let arcs = named_arcs(profile);
        let vfork = (("main", "vfork"), 1, 4);
        assert_eq!(arcs, [(("start", "main"), 1, 13), vfork, vfork]);
        assert_eq!(self_cost(profile, "main")[Ir], 5);
    }
}

/// A call that a jump makes runs in the frame of the code that jumped, as
/// in Callgrind: its stack pointer is that frame's, not the jump's, so
/// that code it jumps on to from the stack pointer its frame had before
/// the jump is a call from it, not one from the function it replaced.
#[test]
fn a_call_made_by_a_jump_takes_the_stack_pointer_of_its_frame() {
    let trace = "linegrind-trace text 1
         object /x/a bias=0 start=1000 end=2000 symbols=embedded
         object /x/b bias=0 start=5000 end=6000 symbols=embedded
         object /x/c bias=0 start=6000 end=7000 symbols=embedded
         fn 1000 1100 main
         fn 1100 1200 f
         fn 5000 5100 x
         fn 6000 6100 y
         sp 8000
         i 1000 5     # main: call f
         call 1100
         sp 7ff8
         i 1100 4     # f: sub rsp, 16
         sp 7fe8
         i 1104 2     # f: jmp x, in another object: a call from f
         sp 7fe8
         i 5000 4     # x: add rsp, 8 (one block, as recorded)
         i 5004 2     # x: jmp y, in another object: a call from x
         sp 7ff0
         i 6000 1     # y";
    for profile in &as_events_and_block_runs(trace) {
        let calls: Vec<_> = named_arcs(profile)
            .into_iter()
            .map(|(ends, calls, _)| (ends, calls))
            .collect();
        assert_eq!(
            calls,
            [(("main", "f"), 1), (("f", "x"), 1), (("x", "y"), 1)]
        );
    }
}

/// A `ret` that is not a return (its stack pointer leaves no frame, and
/// the address is no open call's return address: `push; ret` as a jump)
/// calls the code it reaches, as Callgrind makes every return without a
/// call a call, even into the middle of the function that called, or
/// jumped to, the code that returns.
#[test]
fn a_return_that_returns_from_no_call_calls_the_code_it_reaches() {
    // How f enters g, and the stack pointer of g's frame.
    let f_enters_g = [
        ("i 1100 5     # f: call g\n call 1200", "7ff0"),
        ("i 1100 2     # f: jmp g, a call from f", "7ff8"),
    ];
    for (enter, sp) in f_enters_g {
        let trace = format!(
            "linegrind-trace text 1
             fn 1000 1100 main
             fn 1100 1200 f
             fn 1200 1300 g
             sp 8000
             i 1000 5     # main: call f
             call 1100
             sp 7ff8
             {enter}
             sp {sp}
             i 1200 1     # g: push 1150
             i 1201 1     # g: ret, back to the stack pointer of g's frame
             ret
             sp {sp}
             i 1150 1     # f's code, called from g"
        );
        for profile in &as_events_and_block_runs(&trace) {
            let calls: Vec<_> = named_arcs(profile)
                .into_iter()
                .map(|(ends, calls, _)| (ends, calls))
                .collect();
            assert_eq!(
                calls,
                [(("main", "f"), 1), (("f", "g"), 1), (("g", "f"), 1)],
                "{enter}"
            );
        }
    }
}

/// `trace` simulated as events and as the block runs of a binary trace,
/// whose known blocks take their own way of arriving: the same profile.
fn as_events_and_block_runs(trace: &str) -> [Profile; 2] {
    let events = simulate_text(trace, SimConfig::default());
    let runs = simulate_as_block_runs(trace);
    let positions = Positions {
        instr: true,
        line: false,
    };
    assert_eq!(
        callgrind_text(&runs, positions),
        callgrind_text(&events, positions)
    );
    [events, runs]
}

/// `text` as the block runs of a binary trace, simulated: known blocks
/// take their own way of arriving.
fn simulate_as_block_runs(text: &str) -> Profile {
    let mut blocker = Blocker::new(TraceWriter::new(Vec::new(), false, &[]).unwrap());
    let mut reader = TextReader::new(text.as_bytes());
    while let Some(event) = reader.next_event().unwrap() {
        blocker.event(event).unwrap();
    }
    let binary = blocker.finish().unwrap().finish(&[], None).unwrap();
    let mut reader = BinaryReader::new(std::io::Cursor::new(binary), false).unwrap();
    let Ok(profile) = simulate(&mut reader, SimConfig::default()) else {
        panic!("the binary trace did not simulate");
    };
    profile
}

/// A trace that gives stack pointers at some blocks only: a frame entered
/// without one is left by its return address when a `ret` lands on a block
/// with one, as if the trace had given one at its entry too, instead of
/// the return being taken for a jump and the rest of the caller charged to
/// a call back into it.
#[test]
fn a_frame_entered_without_a_stack_pointer_returns_by_its_address() {
    let trace = |entry_sp: &str| {
        format!(
            "linegrind-trace text 1
            fn 1000 1100 main
            fn 2000 2100 f
            sp 7ff000
            i 1000 5
            call 2000
            {entry_sp}
            i 2000 1
            r 600000 8
            ret
            sp 7ff000
            i 1005 1
            r 600040 8
            i 1006 1"
        )
    };
    let render = |profile: &Profile| {
        let positions = Positions {
            instr: true,
            line: true,
        };
        callgrind_text(profile, positions)
    };
    let profile = simulate_text(&trace(""), SimConfig::default());
    let whole = render(&simulate_text(&trace("sp 7feff8"), SimConfig::default()));
    assert_eq!(render(&profile), whole);
    // As events, and as the block runs of a binary trace, which take the
    // known blocks' way of arriving.
    assert_eq!(render(&simulate_as_block_runs(&trace(""))), whole);
    assert_eq!(calls_and_ir(&profile, "main", "f"), (1, 1));
    assert_eq!(profile.arcs.len(), 1);
}
