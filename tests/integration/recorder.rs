//! `linegrind record` on small programs: what it records and what it leaves
//! out; how it runs the program and how it fails in `running`.

use std::path::{Path, PathBuf};
use std::process::Command;

use linegrind::config::SimConfig;
use linegrind::cost::EventKind;
use linegrind::trace::{AnyReader, Event, MarkEdge, TraceRead};

use linegrind::output::grouped;
use linegrind::profile::Profile;

use crate::support::{arc, linegrind, recorder_tool, root, self_cost, setting, simulate_file};

mod running;

/// Compiles tests/programs/recorder/`source` into a program in `dir`, or
/// says why the recorder tests cannot run here.
fn compile(source: &str, dir: &Path) -> Option<PathBuf> {
    build(source, dir, false)
}

/// Compiles tests/programs/recorder/`source` into a shared library in
/// `dir` (`<stem>.so`), or says why the recorder tests cannot run here.
fn compile_library(source: &str, dir: &Path) -> Option<PathBuf> {
    build(source, dir, true)
}

fn build(source: &str, dir: &Path, library: bool) -> Option<PathBuf> {
    recorder_tool()?;
    let (stem, compiler) = match source.strip_suffix(".cpp") {
        Some(stem) => (stem, "c++"),
        None => (source.trim_end_matches(".c"), "cc"),
    };
    let (out, kind) = match library {
        true => (dir.join(format!("{stem}.so")), &["-shared", "-fPIC"][..]),
        false => (dir.join(stem), &[][..]),
    };
    let status = Command::new(compiler)
        .args(["-g", "-O1"])
        .args(kind)
        .arg("-o")
        .arg(&out)
        .arg(root().join("tests/programs/recorder").join(source))
        .arg("-I")
        .arg(root().join("src/record/valgrind"))
        .status();
    match status {
        Ok(status) if status.success() => Some(out),
        Ok(status) => panic!("{compiler} {source} failed: {status}"),
        Err(_) => {
            crate::support::skip!("no {compiler} compiler");
            None
        }
    }
}

/// Compiles tests/programs/recorder/`source` in `dir` and records it with
/// `record`'s defaults (the trace named after the program), which must
/// succeed; what the program printed, or None where the recorder tests
/// cannot run.
fn record_as_it_is(source: &str, dir: &Path) -> Option<Vec<u8>> {
    let program = compile(source, dir)?;
    let output = linegrind(dir, &["record", "--", program.to_str().unwrap()]);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    Some(output.stdout)
}

/// Runs `sim` on `trace` in `dir`, which must succeed; what it printed on
/// stderr.
fn sim_succeeds(dir: &Path, trace: &str) -> String {
    let sim = linegrind(dir, &["sim", "-q", trace]);
    let stderr = String::from_utf8_lossy(&sim.stderr).into_owned();
    assert!(sim.status.success(), "{stderr}");
    stderr
}

fn events(trace: &Path) -> Vec<Event> {
    let file = std::fs::File::open(trace).unwrap();
    let mut reader = AnyReader::new(file, false).unwrap();
    std::iter::from_fn(|| reader.next_event().unwrap()).collect()
}

/// Instructions executed in function `name` (by the trace's symbols).
fn instructions_in(events: &[Event], name: &str) -> usize {
    let Some((start, end)) = events.iter().find_map(|event| match event {
        Event::Function(f) if f.name == name => Some((f.start, f.end)),
        _ => None,
    }) else {
        return 0;
    };
    events
        .iter()
        .filter(|event| matches!(event, Event::Instr { addr, .. } if (start..end).contains(addr)))
        .count()
}

#[test]
fn records_only_between_start_and_stop_with_markers_and_heap_events() {
    let dir = tempfile::tempdir().unwrap();
    let Some(program) = compile("markers.c", dir.path()) else {
        return;
    };
    let trace = dir.path().join("m.lgt");
    let output = linegrind(
        dir.path(),
        &[
            "record",
            "-o",
            trace.to_str().unwrap(),
            "--instr-atstart=no",
            "--",
            program.to_str().unwrap(),
        ],
    );
    // The program's exit code and output are forwarded.
    assert_eq!(output.status.code(), Some(3));
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "hello from the program\n"
    );
    let events = events(&trace);
    assert_eq!(instructions_in(&events, "unrecorded"), 0);
    assert!(instructions_in(&events, "recorded") > 1000 * 3);
    // Recording switched on empties the stacks and caches, once.
    let restarts = events.iter().filter(|event| **event == Event::Restart);
    assert_eq!(restarts.count(), 1);
    let marks: Vec<(MarkEdge, &str)> = events
        .iter()
        .filter_map(|event| match event {
            Event::Mark { edge, name } => Some((*edge, name.as_str())),
            _ => None,
        })
        .collect();
    assert_eq!(
        marks,
        [(MarkEdge::Begin, "paint"), (MarkEdge::End, "paint")]
    );
    // Marks named by pointers to nothing leave empty names, left out.
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("4 record(s) the trace format cannot hold were left out"),
        "{stderr}"
    );
    let allocated = events.iter().find_map(|event| match event {
        Event::Alloc { addr, size: 4000 } => Some(*addr),
        _ => None,
    });
    let allocated = allocated.expect("malloc(4000) was observed");
    assert!(events.contains(&Event::Free { addr: allocated }));
}

#[test]
fn each_heap_block_is_seen_once_however_the_allocators_nest() {
    let dir = tempfile::tempdir().unwrap();
    let Some(program) = compile("heap.cpp", dir.path()) else {
        return;
    };
    let trace = dir.path().join("heap.lgt");
    let output = linegrind(
        dir.path(),
        &[
            "record",
            "-o",
            trace.to_str().unwrap(),
            "--",
            program.to_str().unwrap(),
        ],
    );
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let events = events(&trace);
    let marked = events
        .iter()
        .skip_while(|event| !matches!(event, Event::Mark { .. }))
        .skip(1)
        .take_while(|event| !matches!(event, Event::Mark { .. }));
    let heap: Vec<&Event> = marked
        .filter(|event| matches!(event, Event::Alloc { .. } | Event::Free { .. }))
        .collect();
    let (mut blocks, mut sizes, mut freed) = (Vec::new(), Vec::new(), Vec::new());
    for event in &heap {
        match **event {
            Event::Alloc { addr, size } => {
                blocks.push(addr);
                sizes.push(size);
            }
            Event::Free { addr } => freed.push(addr),
            _ => unreachable!(),
        }
    }
    // new[], new, calloc, malloc, realloc: once each, with the sizes asked;
    // malloc and three of another size; placement new none; memalign,
    // aligned_alloc, valloc, pvalloc and the posix_memalign that succeeds.
    assert_eq!(
        sizes,
        [
            4004, 8, 3000, 2002, 50005, 100, 5000, 5000, 5000, 300, 640, 1200, 1300, 900
        ],
        "{heap:?}"
    );
    // realloc frees the old block; then b, a, c and the reallocated d; a
    // reallocation to nothing; each block the other threads freed, though
    // the same block every time.
    // The aligned blocks, in the order they are kept.
    assert_eq!(
        freed,
        [
            blocks[3], blocks[1], blocks[0], blocks[2], blocks[4], blocks[5], blocks[6], blocks[7],
            blocks[8], blocks[9], blocks[10], blocks[13], blocks[11], blocks[12]
        ],
        "{heap:?}"
    );
}

#[test]
fn a_forked_child_is_not_recorded() {
    let dir = tempfile::tempdir().unwrap();
    if record_as_it_is("fork.c", dir.path()).is_none() {
        return;
    }
    // The default name: the program's file stem.
    let events = events(&dir.path().join("fork.lgt"));
    assert!(instructions_in(&events, "parent_work") > 1000 * 3);
    assert_eq!(instructions_in(&events, "child_work"), 0);
}

/// The size of a trace written to a file is told; one written to a device
/// keeps no size, and none is told.
#[test]
fn the_size_of_a_trace_is_told_where_it_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let Some(program) = compile("fork.c", dir.path()) else {
        return;
    };
    let told = |out: &str| {
        let output = linegrind(
            dir.path(),
            &["record", "-o", out, "--", program.to_str().unwrap()],
        );
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        assert!(output.status.success(), "{stderr}");
        let line = stderr
            .lines()
            .find(|line| line.starts_with("linegrind: recorded "));
        line.unwrap().to_string()
    };
    let to_file = told("fork.lgt");
    let size = std::fs::metadata(dir.path().join("fork.lgt"))
        .unwrap()
        .len();
    let sized = format!("into fork.lgt ({} bytes, ", grouped(size));
    assert!(to_file.contains(&sized), "{to_file}");
    assert!(told("/dev/null").ends_with(" into /dev/null"));
}

/// A program that a fault kills mid-block is recorded up to where the
/// thread would resume, as Callgrind counts it: the start of the faulting
/// block, where Valgrind last set the instruction pointer (the run was
/// refused before, and the recording lost); `record` exits as the program
/// did.
#[test]
fn a_program_a_fault_kills_is_recorded_up_to_the_fault() {
    let dir = tempfile::tempdir().unwrap();
    let Some(program) = compile("crash.c", dir.path()) else {
        return;
    };
    let output = linegrind(dir.path(), &["record", "--", program.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(128 + 11));
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(
        said.contains("; the program was ended by signal 11 (SIGSEGV)\n"),
        "{said}"
    );
    let events = events(&dir.path().join("crash.lgt"));
    let (start, end) = events
        .iter()
        .find_map(|event| match event {
            Event::Function(f) if f.name == "work" => Some((f.start, f.end)),
            _ => None,
        })
        .expect("work has a symbol");
    let last = events.iter().rev().find_map(|event| match event {
        Event::Instr { addr, .. } => Some(*addr),
        _ => None,
    });
    assert!(last.is_some_and(|addr| (start..end).contains(&addr)));
    // 1,000 iterations: the last one's store, through the null pointer,
    // faulted and is not in the trace (nor what follows it).
    let null_stores = events
        .iter()
        .filter(|event| matches!(event, Event::Data { addr: 0..=15, .. }))
        .count();
    assert_eq!(null_stores, 0);
    assert!(instructions_in(&events, "work") > 999 * 8);
    sim_succeeds(dir.path(), "crash.lgt");
    let info = linegrind(dir.path(), &["info", "crash.lgt"]);
    let info = String::from_utf8(info.stdout).unwrap();
    assert!(
        info.contains("exit code:      none (a signal ended the program"),
        "{info}"
    );
}

/// A `SIGSEGV` that another process sends arrives between two runs of the
/// loop's one block, at its start, where a fault of the block's last access
/// leaves the thread too: every run is whole, the loop runs as many
/// instructions as without signals.
#[test]
fn a_fault_signal_sent_between_runs_of_a_loop_leaves_every_run_whole() {
    let dir = tempfile::tempdir().unwrap();
    let Some(program) = compile("killed_loop.c", dir.path()) else {
        return;
    };
    let spun = |signals: &str| {
        let trace = format!("t{signals}.lgt");
        let output = linegrind(
            dir.path(),
            &[
                "record",
                "-q",
                "-o",
                &trace,
                "--",
                program.to_str().unwrap(),
                signals,
            ],
        );
        assert!(output.status.code().is_some());
        let events = events(&dir.path().join(&trace));
        let handled = instructions_in(&events, "on_signal");
        (instructions_in(&events, "spin"), handled)
    };
    let (quiet, none_handled) = spun("0");
    let (interrupted, handled) = spun("300");
    assert_eq!(none_handled, 0);
    assert!(handled > 0, "no signal arrived while the loop ran");
    assert_eq!(interrupted, quiet);
}

/// Recording switched off, and on again inside a signal handler that
/// started while it was off: the restart leaves the handler running, so
/// that its `sigreturn` ends it, and the code after it is `main`'s.
#[test]
fn recording_switched_on_inside_a_signal_handler_simulates() {
    let dir = tempfile::tempdir().unwrap();
    let Some(program) = compile("start_in_handler.c", dir.path()) else {
        return;
    };
    let output = linegrind(
        dir.path(),
        &["record", "-o", "h.lgt", "--", program.to_str().unwrap()],
    );
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let profile = simulate_file(&dir.path().join("h.lgt"), SimConfig::default());
    assert_eq!(arc(&profile, "on_usr1", "work").calls, 1);
    // One call before the stop, one after the handler.
    assert_eq!(calls_into(&profile, Some("main"), "work"), 2);
    sim_succeeds(dir.path(), "h.lgt");
}

/// A coroutine on a stack in `main`'s frame, switched to and from by
/// `swapcontext`, whose `ret` lands in the other function's code: `main`
/// calls the coroutine (once, where it first starts), and every function's
/// inclusive cost, over all the calls into it, is its self cost and its
/// calls', as a walk down from `main` in KCachegrind adds them.
#[test]
fn a_coroutine_switched_to_by_a_return_is_called_from_the_switch() {
    let dir = tempfile::tempdir().unwrap();
    if record_as_it_is("coroutine.c", dir.path()).is_none() {
        return;
    }
    let profile = simulate_file(&dir.path().join("coroutine.lgt"), SimConfig::default());
    assert_eq!(arc(&profile, "main", "co").calls, 1);
    assert_eq!(arc(&profile, "co", "work").calls, 100);
    for function in ["main", "co"] {
        assert_inclusive_adds_up(&profile, function);
    }
}

/// `vfork`, whose stack pointer leaves its frame before it returns, goes on
/// in its call and returns from it: `main` calls it three times and is
/// itself called once, by no call of `vfork`'s (in Callgrind each `vfork`
/// calls `main` one level deeper).
#[test]
fn vfork_returns_to_its_caller() {
    let dir = tempfile::tempdir().unwrap();
    if record_as_it_is("vfork.c", dir.path()).is_none() {
        return;
    }
    let profile = simulate_file(&dir.path().join("vfork.lgt"), SimConfig::default());
    let name = |id| profile.program.function(id).name.as_str();
    assert_eq!(calls_into(&profile, Some("main"), "vfork"), 3);
    assert_eq!(calls_into(&profile, None, "main"), 1);
    assert!(
        !(profile.arcs.iter()).any(|arc| name(profile.caller(arc)) == "vfork"),
        "vfork calls nothing"
    );
    assert_inclusive_adds_up(&profile, "main");
}

/// Coroutines switched from inside a signal handler, as a preemptive
/// scheduler switches: a handler left for a block on the other coroutine's
/// stack, above it, comes to its `sigreturn` when switched back to, which
/// then changes nothing (Callgrind fails an assertion on this program). The
/// handler calls `work` as often as the program counted, and the inclusive
/// costs of `main` and the coroutines add up.
#[test]
fn a_handler_switched_away_from_and_back_to_returns() {
    let dir = tempfile::tempdir().unwrap();
    let Some(stdout) = record_as_it_is("preempt.c", dir.path()) else {
        return;
    };
    let calls: u64 = String::from_utf8(stdout).unwrap().trim().parse().unwrap();
    let profile = simulate_file(&dir.path().join("preempt.lgt"), SimConfig::default());
    assert_eq!(calls_into(&profile, Some("on_signal"), "work"), calls);
    // Each of the 100 handlers, but the last, goes on after its switch, as
    // a call of `on_signal` in the coroutine switched back to: call stacks
    // are per thread, not per stack (README, Differences from Callgrind).
    assert_eq!(calls_into(&profile, None, "on_signal"), calls - 100);
    for function in ["main", "co"] {
        assert_inclusive_adds_up(&profile, function);
    }
    // The 49 that come back with no handler running, of the 50 left for
    // the stack above, as `sim` warns.
    assert_eq!(profile.late_sigreturns, 49);
    let stderr = sim_succeeds(dir.path(), "preempt.lgt");
    assert!(
        stderr.contains("warning: 49 `sigreturn`(s) came after a block had left"),
        "{stderr}"
    );
}

/// The calls into `callee` over all its arcs from `caller`, or from any
/// function where that is `None`.
fn calls_into(profile: &Profile, caller: Option<&str>, callee: &str) -> u64 {
    let name = |id| profile.program.function(id).name.as_str();
    (profile.arcs.iter())
        .filter(|arc| caller.is_none_or(|caller| name(profile.caller(arc)) == caller))
        .filter(|arc| name(arc.callee) == callee)
        .map(|arc| arc.calls)
        .sum()
}

/// Over all the calls into `function`, its inclusive cost is its self cost
/// and its calls', as a walk down from `main` in KCachegrind adds them.
fn assert_inclusive_adds_up(profile: &Profile, function: &str) {
    let named = |id| profile.program.function(id).name == function;
    let (mut into, mut out) = (0, 0);
    for arc in &profile.arcs {
        if named(arc.callee) {
            into += arc.inclusive[EventKind::Ir];
        }
        if named(profile.caller(arc)) {
            out += arc.inclusive[EventKind::Ir];
        }
    }
    assert_eq!(
        into,
        self_cost(profile, function)[EventKind::Ir] + out,
        "{function}"
    );
}

/// Timer signals arrive between blocks, also between a block that ends in
/// a call and the callee's first block (in some of the 50, nearly surely:
/// about a third of the loop's blocks end in the call): the call waits for
/// the handler to return, so that the recording simulates with every call
/// `main` made to `leaf`. (A test in `binary_format.rs` builds the case for
/// certain.)
#[test]
fn calls_interrupted_by_timer_signals_reach_their_callees() {
    let dir = tempfile::tempdir().unwrap();
    let Some(stdout) = record_as_it_is("timer_signals.c", dir.path()) else {
        return;
    };
    let calls: u64 = String::from_utf8(stdout).unwrap().trim().parse().unwrap();
    let profile = simulate_file(&dir.path().join("timer_signals.lgt"), SimConfig::default());
    assert_eq!(arc(&profile, "main", "leaf").calls, calls);
    assert!(arc(&profile, "on_alarm", "handler_work").calls >= 50);
    // `sim` itself, which decodes on a thread of its own.
    sim_succeeds(dir.path(), "timer_signals.lgt");
}

/// Threads created and joined in rounds, each round's under the ids the
/// last round's had: every thread starts with a stack of its own, so no
/// thread's cost is inside another's calls.
#[test]
fn a_thread_given_an_ended_threads_id_starts_afresh() {
    let dir = tempfile::tempdir().unwrap();
    let Some(stdout) = record_as_it_is("thread_rounds.c", dir.path()) else {
        return;
    };
    let threads: u64 = String::from_utf8(stdout).unwrap().trim().parse().unwrap();
    let trace = dir.path().join("thread_rounds.lgt");
    let events = events(&trace);
    let ended = |event: &Event| matches!(event, Event::ThreadExit { tid } if *tid > 1);
    assert_eq!(
        events.iter().filter(|event| ended(event)).count() as u64,
        threads
    );
    let profile = simulate_file(&trace, SimConfig::default());
    // `sim` counts threads as `info` does (below): the main one and each
    // worker, whatever id it had.
    assert_eq!(profile.threads, threads + 1);
    assert_eq!(arc(&profile, "worker", "work").calls, threads);
    // Each thread's start_thread frame holds that thread's work alone:
    // together, less than the whole run.
    let (calls, inclusive) = profile
        .arcs
        .iter()
        .filter(|arc| profile.program.function(arc.callee).name == "start_thread")
        .fold((0, 0), |(calls, ir), arc| {
            (calls + arc.calls, ir + arc.inclusive[EventKind::Ir])
        });
    assert_eq!(calls, threads);
    let total = profile.totals[EventKind::Ir];
    assert!(inclusive < total, "{inclusive} of {total} instructions");
    sim_succeeds(dir.path(), "thread_rounds.lgt");
    let info = linegrind(dir.path(), &["info", "thread_rounds.lgt"]);
    let info = String::from_utf8(info.stdout).unwrap();
    let started = format!("threads:        {} (under ", threads + 1);
    assert!(info.contains(&started), "{info}");
}

/// An instruction Valgrind cannot decode raises SIGILL under it; the
/// recording goes on, the instruction counted as one byte long, as
/// Callgrind counts it.
#[test]
fn an_instruction_valgrind_cannot_decode_is_recorded_as_callgrind_counts_it() {
    let dir = tempfile::tempdir().unwrap();
    let Some(stdout) = record_as_it_is("undecodable.c", dir.path()) else {
        return;
    };
    assert_eq!(String::from_utf8_lossy(&stdout), "avx512: 0\n");
    let trace = dir.path().join("undecodable.lgt");
    // The probe: the instruction that SIGILL (4) stopped at.
    let events = events(&trace);
    let signal = events
        .iter()
        .position(|event| matches!(event, Event::Signal { signo: 4 }))
        .expect("a SIGILL");
    let probe = events[..signal]
        .iter()
        .rev()
        .find(|event| matches!(event, Event::Instr { .. }));
    assert!(
        matches!(probe, Some(Event::Instr { len: 1, .. })),
        "the undecodable instruction, one byte long: {probe:?}"
    );
    sim_succeeds(dir.path(), "undecodable.lgt");
}

/// A source file named with a line break (by `#line`) is embedded with the
/// break written as `\n`, as the callgrind writer shows such a name read
/// from the program at simulation time: a name the trace refuses would
/// make the whole recording unreadable.
#[test]
fn a_source_file_named_with_a_line_break_is_embedded_on_one_line() {
    let dir = tempfile::tempdir().unwrap();
    if record_as_it_is("odd_names.c", dir.path()).is_none() {
        return;
    }
    let trace = dir.path().join("odd_names.lgt");
    let events = events(&trace);
    let work = events.iter().find_map(|event| match event {
        Event::Function(f) if f.name == "work" => Some(f),
        _ => None,
    });
    let file = work.and_then(|f| f.file.as_deref());
    assert!(
        file.is_some_and(|file| file.ends_with("odd\\nname.c")),
        "{file:?}"
    );
    sim_succeeds(dir.path(), "odd_names.lgt");
}

/// An SSE load that is not aligned faults by a side exit VEX makes for the
/// check, before the load: the run stops before it, and the handler that
/// leaves by `siglongjmp` resumes elsewhere, so the store before it counts
/// and the load and the return after it do not.
#[test]
fn a_fault_raised_by_a_side_exit_stops_the_run_before_its_instruction() {
    let dir = tempfile::tempdir().unwrap();
    if record_as_it_is("misaligned.c", dir.path()).is_none() {
        return;
    }
    let trace = dir.path().join("misaligned.lgt");
    assert_eq!(instructions_in(&events(&trace), "misaligned"), 3);
    sim_succeeds(dir.path(), "misaligned.lgt");
}

/// A program whose path is as long as Linux allows (4,095 bytes) is
/// recorded under its whole path, so that its symbols are read and
/// embedded: a cut path names no file.
#[test]
fn a_program_at_the_longest_path_is_recorded_with_its_symbols() {
    let dir = tempfile::tempdir().unwrap();
    let Some(program) = compile("odd_names.c", dir.path()) else {
        return;
    };
    // Folders of 200 bytes, then a file name of at most 255.
    let left = 4095 - dir.path().as_os_str().len();
    let folders = (left - 1 - 255).div_ceil(201);
    let mut deep = dir.path().to_path_buf();
    for _ in 0..folders {
        deep.push("d".repeat(200));
        std::fs::create_dir(&deep).unwrap();
    }
    let name = "p".repeat(left - 201 * folders - 1);
    std::fs::copy(&program, deep.join(&name)).unwrap();
    let path = deep.join(&name).into_os_string().into_string().unwrap();
    assert_eq!(path.len(), 4095);
    let (trace, code) = crate::support::record_command(&[&format!("./{name}")], &deep);
    assert_eq!(code, Some(0));
    let events = events(&trace);
    let recorded = events.iter().any(|event| match event {
        Event::Module(module) => module.path == path,
        _ => false,
    });
    assert!(recorded, "no module of the whole path");
    assert!(instructions_in(&events, "work") > 100);
}

/// A program that replaces itself by `execve` (Valgrind then runs the new
/// one natively, unseen): what ran before is recorded and simulates, and
/// `record` warns. A failed `execve` returns, and recording goes on.
#[test]
fn a_program_replaced_by_execve_is_recorded_up_to_the_call() {
    let dir = tempfile::tempdir().unwrap();
    let Some(program) = compile("exec.c", dir.path()) else {
        return;
    };
    let program = program.to_str().unwrap();
    for (args, replaced) in [(&[program][..], true), (&[program, "stay"][..], false)] {
        let mut record = vec!["record", "-o", "exec.lgt", "--"];
        record.extend(args);
        let output = linegrind(dir.path(), &record);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(0), "{stderr}");
        let warned = stderr.contains("replaced itself by execve");
        assert_eq!(warned, replaced, "{stderr}");
        let events = events(&dir.path().join("exec.lgt"));
        assert!(instructions_in(&events, "before_exec") > 1000 * 3);
        assert!(instructions_in(&events, "after_failed_exec") > 2000 * 3);
        sim_succeeds(dir.path(), "exec.lgt");
    }
}

/// Two plugins loaded one after the other at the same addresses: both are
/// in the trace (Valgrind reuses an unloaded object's record for the next
/// one, which must not pass for it), and `sim`, which keeps one object per
/// address, says whose functions their code is charged to.
#[test]
fn objects_mapped_where_unloaded_ones_were_are_recorded_and_named_in_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    for plugin in ["plugin_a.c", "plugin_b.c"] {
        if compile_library(plugin, dir.path()).is_none() {
            return;
        }
    }
    if record_as_it_is("plugins.c", dir.path()).is_none() {
        return;
    }
    let events = events(&dir.path().join("plugins.lgt"));
    let ranges: Vec<(String, Option<(u64, u64)>)> = events
        .iter()
        .filter_map(|event| match event {
            Event::Module(module) if module.path.ends_with(".so") => {
                let name = module.path.rsplit('/').next().unwrap_or_default();
                name.starts_with("plugin_")
                    .then(|| (name.to_string(), module.range))
            }
            _ => None,
        })
        .collect();
    assert_eq!(ranges.len(), 2, "{ranges:?}");
    assert_eq!(ranges[0].0, "plugin_a.so");
    assert_eq!(ranges[1].0, "plugin_b.so");
    assert_eq!(ranges[0].1, ranges[1].1, "mapped at the same addresses");
    let stderr = sim_succeeds(dir.path(), "plugins.lgt");
    assert!(
        stderr.contains("plugin_b.so was mapped at addresses")
            && stderr.contains("plugin_a.so had before")
            && stderr.contains("charged to"),
        "{stderr}"
    );
}
