//! Fidelity against real Callgrind: small C and C++ programs, and the
//! system's stripped `gzip`, are recorded and simulated, and compared with
//! `valgrind --tool=callgrind --cacheuse=yes` on the same cache
//! configuration, run with the same environment (the recorder's Valgrind
//! folder), so the program does the same work under both.
//!
//! Compared: the totals of Callgrind's nine events, equal but for what
//! `allowed_total` explains; per function above 1% of all Ir, the nine
//! self costs, equal but for what the program's run varies by (the
//! instructions Callgrind does not count lie in functions below 1%, or in
//! the signal return trampoline, which Callgrind does not name), and
//! `AcCost1` where the run does not vary;
//! the call arcs between the program's own functions with their call
//! counts; the inclusive Ir of the program's own functions; and, for a
//! state save (`fxsave`), its line's nine costs, `AcCost1` and `SpLoss1`.

use std::collections::HashMap;
use std::path::Path;
use std::process::{Command, Stdio};

use linegrind::config::SimConfig;
use linegrind::output::Positions;
use linegrind::report::ProfileFile;
use linegrind::simulator::simulate;
use linegrind::trace::AnyReader;

use crate::support::{
    callgrind_text, compile_program, missing_tools, record_command, valgrind_as_recorder, which,
};

const CACHES: [&str; 3] = ["--I1=32768,8,64", "--D1=32768,8,64", "--LL=1048576,16,64"];
/// The same caches with 32-byte lines: shorter than the 64 bytes a state
/// save's helper access is recorded with.
const CACHES_32: [&str; 3] = ["--I1=32768,8,32", "--D1=32768,8,32", "--LL=1048576,16,32"];

struct Program {
    source: &'static str,
    /// Extra compiler flags.
    flags: &'static [&'static str],
    /// The program's own functions, whose arcs must match.
    functions: &'static [&'static str],
    /// Instructions Callgrind leaves out that a trace has (see `allowed_total`).
    uncounted: u64,
    /// How much the totals vary from one run of the program to the next.
    varies: u64,
}

const PROGRAMS: &[Program] = &[
    Program {
        source: "recursion.c",
        flags: &["-O1"],
        functions: &["main", "fib", "is_even", "is_odd"],
        uncounted: 0,
        varies: 0,
    },
    Program {
        source: "libc_calls.c",
        flags: &["-O1"],
        functions: &["main", "fill", "compare"],
        uncounted: 0,
        varies: 0,
    },
    Program {
        source: "longjmp.c",
        flags: &["-O1"],
        functions: &["main", "level1", "level2", "level3", "leaf"],
        uncounted: 0,
        varies: 0,
    },
    Program {
        source: "exception.cpp",
        flags: &["-O1"],
        functions: &["main", "outer(int)", "middle(int)", "thrower(int)"],
        uncounted: 0,
        varies: 0,
    },
    Program {
        source: "threads.c",
        flags: &["-O1", "-pthread"],
        functions: &["main", "worker", "sum_array"],
        uncounted: 0,
        // How long pthread_join waits for a worker (futex calls and spins
        // in the C library) depends on when the host wakes the threads: a
        // few hundred instructions and accesses, differing between any two
        // runs, Callgrind's included.
        varies: 1000,
    },
    Program {
        source: "signal.c",
        flags: &["-O1"],
        functions: &["main", "main_work", "on_signal", "handler_work"],
        // The two instructions of the C library's signal return trampoline
        // (`__restore_rt`: `mov $15, %eax; syscall`) run after each of the
        // 300 handlers; Callgrind does not count them, the trace has them.
        uncounted: 2 * 300,
        varies: 0,
    },
    Program {
        source: "fault.c",
        flags: &["-O1"],
        functions: &["main", "touch", "touch_twice", "on_fault"],
        // `__restore_rt` after each of the 3 x 2 x 256 handlers, as for
        // signal.c.
        uncounted: 2 * 3 * 2 * 256,
        varies: 0,
    },
    Program {
        source: "siglongjmp.c",
        flags: &["-O1"],
        functions: &[
            "(below main)",
            "main",
            "level1",
            "level2",
            "level3",
            "on_signal",
        ],
        // Each of the 100 handlers jumps out of the C library's `raise`,
        // whose last block (five instructions up to the `tgkill` system
        // call) Callgrind then never counts: the count of a block's run is
        // taken when the next block of its context starts, and after the
        // jump that is main's.
        uncounted: 5 * 100,
        varies: 0,
    },
    Program {
        source: "dead_load.c",
        flags: &["-O1"],
        functions: &["main", "dead_pops", "dead_frame_pointer_pop"],
        uncounted: 0,
        varies: 0,
    },
    Program {
        source: "fault_longjmp.c",
        flags: &["-O1"],
        functions: &["main", "divide", "read_through", "scale", "on_fault"],
        uncounted: 0,
        varies: 0,
    },
    Program {
        source: "tailcall.c",
        flags: &["-O2"],
        functions: &["main", "dispatch", "step"],
        uncounted: 0,
        varies: 0,
    },
];

/// Our profile of `command`, recorded and simulated, read back, and the
/// program's exit code.
fn ours(command: &[&str], dir: &Path) -> (ProfileFile, Option<i32>) {
    let (trace, exit) = record_command(command, dir);
    (simulated(&trace, CACHES), exit)
}

/// Our profile of `trace` with `caches`, read back.
fn simulated(trace: &Path, caches: [&str; 3]) -> ProfileFile {
    let g = |arg: &str| arg.split_once('=').unwrap().1.parse().unwrap();
    let config = SimConfig::new(g(caches[0]), g(caches[1]), g(caches[2]), true, true).unwrap();
    let file = std::fs::File::open(trace).unwrap();
    let profile = simulate(&mut AnyReader::new(file, false).unwrap(), config).unwrap();
    ProfileFile::parse(callgrind_text(&profile, Positions::default()).as_bytes()).unwrap()
}

/// Callgrind's profile of `command`, run as the recorder runs its tool (so
/// the mutual recursion's stack lines are first touched by the same
/// functions), and the program's exit code.
fn callgrinds(command: &[&str], dir: &Path) -> (ProfileFile, Option<i32>) {
    callgrinds_with(command, dir, CACHES)
}

/// Callgrind's profile of `command` with `caches`, and the program's exit
/// code.
fn callgrinds_with(command: &[&str], dir: &Path, caches: [&str; 3]) -> (ProfileFile, Option<i32>) {
    let out = dir.join("callgrind.out");
    let status = valgrind_as_recorder(dir)
        .args([
            "--tool=callgrind",
            "-q",
            "--cacheuse=yes",
            "--separate-recs=1",
        ])
        .args(caches)
        .arg(format!("--callgrind-out-file={}", out.display()))
        .args(command)
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(status.code().is_some(), "callgrind ran");
    let file = std::fs::File::open(&out).unwrap();
    let profile = ProfileFile::parse(std::io::BufReader::new(file)).unwrap();
    (profile, status.code())
}

/// Self cost per function name (summed over objects and files).
fn by_name(file: &ProfileFile) -> HashMap<String, Vec<u64>> {
    let mut costs: HashMap<String, Vec<u64>> = HashMap::new();
    for function in &file.functions {
        let cost = costs
            .entry(function.key.name.clone())
            .or_insert_with(|| vec![0; file.events.len()]);
        for (sum, value) in cost.iter_mut().zip(&function.self_cost) {
            *sum += value;
        }
    }
    costs
}

fn event(file: &ProfileFile, name: &str) -> usize {
    file.event(name)
        .unwrap_or_else(|| panic!("no event {name}"))
}

/// Calls between `functions` with their counts.
fn arcs(file: &ProfileFile, functions: &[&str]) -> HashMap<(String, String), u64> {
    let mut arcs = HashMap::new();
    for call in &file.calls {
        let caller = &file.functions[call.caller].key.name;
        let callee = &file.functions[call.callee].key.name;
        if functions.contains(&caller.as_str()) && functions.contains(&callee.as_str()) {
            *arcs.entry((caller.clone(), callee.clone())).or_insert(0) += call.count;
        }
    }
    arcs
}

/// Inclusive Ir of each of `functions` (summed over objects and files).
fn inclusive_ir(file: &ProfileFile, functions: &[&str]) -> HashMap<String, u64> {
    let ir = event(file, "Ir");
    let mut inclusive = HashMap::new();
    for (function, cost) in file.functions.iter().zip(file.inclusive()) {
        if functions.contains(&function.key.name.as_str()) {
            *inclusive.entry(function.key.name.clone()).or_insert(0) += cost[ir];
        }
    }
    inclusive
}

/// The functions whose self Ir differs most, for failure messages.
fn differences(ours: &ProfileFile, theirs: &ProfileFile) -> String {
    let (a, b) = (by_name(ours), by_name(theirs));
    let ir = |file: &ProfileFile, map: &HashMap<String, Vec<u64>>, name: &str| {
        map.get(name).map_or(0, |cost| cost[event(file, "Ir")])
    };
    let mut names: Vec<&String> = a.keys().chain(b.keys()).collect();
    names.sort();
    names.dedup();
    let mut rows: Vec<(u64, String)> = names
        .iter()
        .map(|name| {
            let (x, y) = (ir(ours, &a, name), ir(theirs, &b, name));
            (
                x.abs_diff(y),
                format!("  {name}: ours {x}, Callgrind's {y}"),
            )
        })
        .filter(|(diff, _)| *diff > 0)
        .collect();
    rows.sort_by_key(|row| std::cmp::Reverse(row.0));
    rows.into_iter().take(12).map(|row| row.1 + "\n").collect()
}

/// Callgrind's nine events, as both profiles name them.
const CALLGRIND_EVENTS: [&str; 9] = [
    "Ir", "Dr", "Dw", "I1mr", "D1mr", "D1mw", "ILmr", "DLmr", "DLmw",
];

/// How far a total of `event` may differ from Callgrind's: by what the
/// program's runs vary, by the instructions Callgrind leaves out (see
/// `Program::uncounted`), and by the last block of every run, which
/// Callgrind never counts: it takes a block's count when the next block of
/// its context starts, and none starts after `_exit`'s `exit_group` system
/// call (`mov %esi,%eax; syscall`: two instructions, and the I1 and LL miss
/// of their line when it is a new one).
fn allowed_total(program: &Program, event: &str) -> u64 {
    program.varies
        + match event {
            "Ir" => 2 + program.uncounted,
            "I1mr" | "ILmr" => 1,
            _ => 0,
        }
}

fn compare(program: &Program, ours: &ProfileFile, theirs: &ProfileFile) {
    let name = program.source;
    for event_name in CALLGRIND_EVENTS {
        let (a, b) = (
            ours.totals[event(ours, event_name)],
            theirs.totals[event(theirs, event_name)],
        );
        assert!(
            a + program.varies >= b && a.abs_diff(b) <= allowed_total(program, event_name),
            "{name}: total {event_name} {a} against Callgrind's {b}\n{}",
            differences(ours, theirs)
        );
    }
    // Every function above 1% of the instructions costs what it costs in
    // Callgrind, event for event; below that, start-up code that Callgrind
    // names after raw addresses (objects it has not read yet) and symbol
    // aliases it picks differently move a few costs between names.
    let total_ir = theirs.totals[event(theirs, "Ir")] as f64;
    let (ours_by, theirs_by) = (by_name(ours), by_name(theirs));
    for (function, their_cost) in &theirs_by {
        let their_ir = their_cost[event(theirs, "Ir")];
        if (their_ir as f64) < total_ir * 0.01 {
            continue;
        }
        let our_cost = ours_by
            .get(function)
            .unwrap_or_else(|| panic!("{name}: no function {function} in our profile"));
        // L1's temporal loss too, where the program runs the same every
        // time: it is each evicted line's 1000 / uses, whose loader and
        // uses both tools see alike (SpLoss1 differs: Callgrind's use mask
        // resolves 2 bytes).
        let same_every_time = (program.varies == 0).then_some("AcCost1");
        for event_name in CALLGRIND_EVENTS.into_iter().chain(same_every_time) {
            let (a, b) = (
                our_cost[event(ours, event_name)],
                their_cost[event(theirs, event_name)],
            );
            let allowed = program.varies;
            assert!(
                a.abs_diff(b) <= allowed,
                "{name}: {function} self {event_name} {a} against Callgrind's {b}\n{}",
                differences(ours, theirs)
            );
        }
    }
    assert_eq!(
        arcs(ours, program.functions),
        arcs(theirs, program.functions),
        "{name}: calls between the program's functions"
    );
    let ours_inclusive = inclusive_ir(ours, program.functions);
    for (function, their_ir) in inclusive_ir(theirs, program.functions) {
        let our_ir = ours_inclusive.get(&function).copied().unwrap_or(0);
        assert!(
            our_ir.abs_diff(their_ir) <= allowed_total(program, "Ir"),
            "{name}: {function} inclusive Ir {our_ir} against Callgrind's {their_ir}"
        );
    }
}

#[test]
fn recordings_simulate_like_callgrind() {
    if let Some(why) = missing_tools(true) {
        crate::support::skip!("{why}");
        return;
    }
    for program in PROGRAMS {
        let dir = tempfile::tempdir().unwrap();
        let source = format!("fidelity/{}", program.source);
        let binary = compile_program(&source, program.flags, dir.path());
        let command = [binary.to_str().unwrap()];
        let (ours, our_exit) = ours(&command, dir.path());
        let (theirs, their_exit) = callgrinds(&command, dir.path());
        // The program computed under the recorder what it computed under
        // Callgrind (a fault handler's program resumes with the registers
        // Callgrind's gives it).
        assert_eq!(our_exit, their_exit, "{}: exit codes", program.source);
        compare(program, &ours, &theirs);
    }
}

/// A program as users meet it: the system's `gzip`, stripped (its
/// functions are named after their addresses, as Callgrind names them),
/// compressing 256 KiB of made-up text.
#[test]
fn a_stripped_system_program_simulates_like_callgrind() {
    if let Some(why) = missing_tools(true) {
        crate::support::skip!("{why}");
        return;
    }
    let Ok(gzip) = which("gzip") else {
        crate::support::skip!("no gzip");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("input.txt"), made_up_text(256 * 1024)).unwrap();
    let command = [gzip.as_str(), "-9", "-c", "input.txt"];
    let (ours, our_exit) = ours(&command, dir.path());
    let (theirs, their_exit) = callgrinds(&command, dir.path());
    assert_eq!(our_exit, their_exit, "gzip's exit codes");
    let program = Program {
        source: "gzip",
        flags: &[],
        functions: &[],
        uncounted: 0,
        varies: 0,
    };
    compare(&program, &ours, &theirs);
}

/// Recording stopped inside one call and started again inside another:
/// Callgrind unwinds every stack whenever instrumentation is switched off
/// or on, and so does the simulator where recording restarts, so the code
/// after the start runs under none of the calls open at the stop. The arcs between
/// the program's functions and their inclusive costs are Callgrind's, but
/// for the stop's client request, whose instructions Callgrind leaves
/// out. (`main` is not compared: Callgrind makes a return from a call it
/// unwound a call from the function returned to, which linegrind does
/// not; see the README's differences.)
#[test]
fn a_call_open_when_recording_stops_ends_there() {
    if let Some(why) = missing_tools(true) {
        crate::support::skip!("{why}");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let binary = compile_program("fidelity/restart.c", &["-O1"], dir.path());
    let command = [binary.to_str().unwrap()];
    let (ours, _) = ours(&command, dir.path());
    let (theirs, _) = callgrinds(&command, dir.path());
    let functions = ["measured", "sibling", "work"];
    let calls = arcs(&ours, &functions);
    assert_eq!(calls, arcs(&theirs, &functions));
    assert_eq!(calls.len(), 2, "{calls:?}");
    let (ours_inclusive, theirs_inclusive) = (
        inclusive_ir(&ours, &functions),
        inclusive_ir(&theirs, &functions),
    );
    // Up to `CALLGRIND_STOP_INSTRUMENTATION`'s instructions before its
    // client request more.
    let (a, b) = (ours_inclusive["measured"], theirs_inclusive["measured"]);
    assert!(
        (b..b + 16).contains(&a),
        "measured: {a} against Callgrind's {b}"
    );
    for function in ["sibling", "work"] {
        assert_eq!(
            ours_inclusive[function], theirs_inclusive[function],
            "{function}"
        );
    }
}

/// `len` bytes of words drawn from a small vocabulary by a fixed
/// generator: text that compresses like text, the same on every run.
fn made_up_text(len: usize) -> Vec<u8> {
    const WORDS: [&str; 16] = [
        "cache", "line", "miss", "hit", "set", "way", "evict", "load", "store", "byte", "stack",
        "call", "tree", "node", "cost", "use",
    ];
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    let mut text = Vec::with_capacity(len + 16);
    while text.len() < len {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        text.extend_from_slice(WORDS[(state >> 60) as usize].as_bytes());
        text.push(if state >> 56 & 0xf == 0 { b'\n' } else { b' ' });
    }
    text.truncate(len);
    text
}

/// A state save (`fxsave`) writes much of its area by a helper whose
/// access Callgrind clamps to its smallest line size: with 64-byte lines,
/// the recording's accesses must be Callgrind's to the byte, so that the
/// L1 use metrics of the line that saves are equal too (LL's are not
/// compared: Callgrind merges L1 use into LL approximately). With 32-byte
/// lines the simulator clamps the recorded 64 bytes to 32 as Callgrind
/// clamps the helper's 160: from the save's address, whether the 64 bytes
/// span two lines (a save at a line's start) or three.
#[test]
fn state_saves_are_clamped_as_callgrind_clamps_them() {
    if let Some(why) = missing_tools(true) {
        crate::support::skip!("{why}");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let binary = compile_program("fidelity/state_save.c", &["-O1", "-g"], dir.path());
    let command = [binary.to_str().unwrap()];
    let (trace, _) = record_command(&command, dir.path());
    for caches in [CACHES, CACHES_32] {
        let ours = simulated(&trace, caches);
        let (theirs, _) = callgrinds_with(&command, dir.path(), caches);
        a_state_save_costs_as_in_callgrind(&ours, &theirs, caches);
    }
}

/// The costs of the lines of `state_save.c` that save, in `ours` against
/// `theirs`, simulated with `caches`.
fn a_state_save_costs_as_in_callgrind(ours: &ProfileFile, theirs: &ProfileFile, caches: [&str; 3]) {
    let source = include_str!("../programs/fidelity/state_save.c");
    let line_of =
        |code: &str| 1 + source.lines().position(|line| line.contains(code)).unwrap() as u64;
    let at_line = |file: &ProfileFile, line: u64, name: &str| -> u64 {
        (file.lines.iter())
            .filter(|lines| lines.file.ends_with("state_save.c"))
            .filter_map(|lines| lines.lines.get(&line))
            .map(|cost| cost[event(file, name)])
            .sum()
    };
    // FXSAVE, and XSAVE and XRSTOR with a mask that leaves components out.
    for code in ["fxsave (", "xrstor ("] {
        let line = line_of(code);
        for name in CALLGRIND_EVENTS.iter().chain(&["AcCost1", "SpLoss1"]) {
            let (a, b) = (at_line(ours, line, name), at_line(theirs, line, name));
            assert_eq!(
                a, b,
                "{name} of the line of `{code}`, against Callgrind's, {caches:?}"
            );
        }
    }
    let fxsave = line_of("fxsave (");
    if caches == CACHES {
        // 4,096 saves, each into six lines it is the first to touch.
        assert_eq!(at_line(ours, fxsave, "D1mw"), 6 * 4096);
    }
    assert!(at_line(ours, fxsave, "SpLoss1") > 0);
}

/// Source files are named as Callgrind names them, also where the
/// compiler was told to write relative directories (as Debian builds its
/// packages, glibc's among them): Valgrind joins a DWARF 5 table's
/// directory 0 to the compilation directory like any other.
#[test]
fn source_files_are_named_as_callgrind_names_them() {
    if let Some(why) = missing_tools(true) {
        crate::support::skip!("{why}");
        return;
    }
    // Compiled where its source is, by a relative name, the folder mapped
    // to `.`: the unit's directory and the table's directory 0 are `.`.
    let dir = tempfile::tempdir().unwrap();
    let source = crate::support::root().join("tests/programs/fidelity/recursion.c");
    std::fs::copy(source, dir.path().join("recursion.c")).unwrap();
    let status = Command::new("cc")
        .args(["-g", "-O1", "-o", "recursion", "recursion.c"])
        .arg(format!("-ffile-prefix-map={}=.", dir.path().display()))
        .current_dir(dir.path())
        .status()
        .unwrap();
    assert!(status.success());
    let binary = dir.path().join("recursion");
    let command = [binary.to_str().unwrap()];
    let ((ours, _), (theirs, _)) = (ours(&command, dir.path()), callgrinds(&command, dir.path()));
    // The files of each named function, by object and name.
    let files = |profile: &ProfileFile| {
        let mut files: HashMap<(String, String), Vec<String>> = HashMap::new();
        for function in &profile.functions {
            let key = &function.key;
            if !key.name.starts_with("0x") {
                let at = (key.object.clone(), key.name.clone());
                files.entry(at).or_default().push(key.file.clone());
            }
        }
        files.values_mut().for_each(|files| files.sort());
        files
    };
    let (ours, theirs) = (files(&ours), files(&theirs));
    let fib = (binary.to_str().unwrap().to_string(), "fib".to_string());
    assert_eq!(ours[&fib], theirs[&fib]);
    assert_eq!(ours[&fib], ["././recursion.c"]);
    // A function is in the file of its entry; Callgrind makes an entry per
    // file a block of it starts in (see the README's differences), and
    // static functions of the same name are one entry per file in both.
    let mut compared = 0;
    for (function, files) in &ours {
        if let Some(expected) = theirs.get(function) {
            for file in files {
                assert!(expected.contains(file), "{function:?}: {file} {expected:?}");
            }
            compared += 1;
        }
    }
    assert!(compared > 20, "{compared} functions compared");
}
