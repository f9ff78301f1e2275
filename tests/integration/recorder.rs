//! `linegrind record` on small programs: what it records and what it leaves
//! out, what it forwards, and how it fails.

use std::path::{Path, PathBuf};
use std::process::Command;

use linegrind::config::SimConfig;
use linegrind::cost::EventKind;
use linegrind::trace::{AnyReader, Event, MarkEdge, TraceRead};

use linegrind::output::grouped;
use linegrind::profile::Profile;

use crate::support::{arc, linegrind, recorder_tool, root, self_cost, setting, simulate_file};

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
    // malloc and three of another size; placement new none.
    assert_eq!(
        sizes,
        [4004, 8, 3000, 2002, 50005, 100, 5000, 5000, 5000],
        "{heap:?}"
    );
    // realloc frees the old block; then b, a, c and the reallocated d; a
    // reallocation to nothing; each block the other threads freed, though
    // the same block every time.
    assert_eq!(
        freed,
        [
            blocks[3], blocks[1], blocks[0], blocks[2], blocks[4], blocks[5], blocks[6], blocks[7],
            blocks[8]
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
    let from_main: u64 = profile
        .arcs
        .iter()
        .filter(|arc| {
            profile.program.function(profile.caller(arc)).name == "main"
                && profile.program.function(arc.callee).name == "work"
        })
        .map(|arc| arc.calls)
        .sum();
    assert_eq!(from_main, 2);
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
    let name = |id| profile.program.function(id).name.as_str();
    let handler_calls = profile
        .arcs
        .iter()
        .filter(|arc| (name(profile.caller(arc)), name(arc.callee)) == ("on_signal", "work"))
        .map(|arc| arc.calls)
        .sum::<u64>();
    assert_eq!(handler_calls, calls);
    // Each of the 100 handlers, but the last, goes on after its switch, as
    // a call of `on_signal` in the coroutine switched back to: call stacks
    // are per thread, not per stack (README, Differences from Callgrind).
    let resumed: u64 = profile
        .arcs
        .iter()
        .filter(|arc| name(arc.callee) == "on_signal")
        .map(|arc| arc.calls)
        .sum();
    assert_eq!(resumed, calls - 100);
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

/// A trace that cannot be written (`/dev/full`): `record` fails, saying
/// why, but the program runs to its end, as the recorder's stream is read
/// on and dropped rather than closed under it (a SIGPIPE would end it).
#[test]
fn a_trace_that_cannot_be_written_leaves_the_program_running_to_its_end() {
    let dir = tempfile::tempdir().unwrap();
    let Some(program) = compile("scattered.c", dir.path()) else {
        return;
    };
    let output = linegrind(
        dir.path(),
        &[
            "record",
            "-q",
            "-o",
            "/dev/full",
            "--",
            program.to_str().unwrap(),
        ],
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("cannot write /dev/full: No space left on device"),
        "{stderr}"
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.starts_with("finished "), "{stdout}{stderr}");
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

#[test]
fn without_valgrind_record_says_how_to_get_it() {
    let dir = tempfile::tempdir().unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_linegrind"))
        .current_dir(dir.path())
        .env("PATH", dir.path())
        .args(["record", "--", "/bin/true"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("install Valgrind") || stderr.contains("install it"),
        "{stderr}"
    );
}

/// A home folder the tool's folder cannot be made in (here a file, as a
/// missing or read-only home is for a user who is not root) leaves the
/// temporary folder, as no home folder does.
#[test]
fn the_tool_is_set_up_in_the_temporary_folder_when_home_cannot_hold_it() {
    if recorder_tool().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::write(&home, b"not a folder").unwrap();
    let printed = Command::new(env!("CARGO_BIN_EXE_linegrind"))
        .env("HOME", &home)
        .env_remove("XDG_CACHE_HOME")
        .env("TMPDIR", dir.path())
        .args(["record", "--print-valgrind-lib"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&printed.stderr);
    assert_eq!(printed.status.code(), Some(0), "{stderr}");
    let folder = PathBuf::from(String::from_utf8(printed.stdout).unwrap().trim_end());
    // SAFETY: geteuid cannot fail and touches no memory.
    let user = unsafe { libc::geteuid() };
    assert_eq!(
        folder.parent(),
        Some(&*dir.path().join(format!("linegrind-{user}")))
    );
    assert!(folder.join("linegrind-amd64-linux").is_file());
}

#[test]
fn callgrind_run_with_the_printed_valgrind_lib_starts_like_a_recording() {
    let dir = tempfile::tempdir().unwrap();
    let Some(program) = compile("stack_address.c", dir.path()) else {
        return;
    };
    let linegrind_path = env!("CARGO_BIN_EXE_linegrind");
    let printed = linegrind(dir.path(), &["record", "--print-valgrind-lib"]);
    assert_eq!(printed.status.code(), Some(0));
    let folder = String::from_utf8(printed.stdout).unwrap();
    let folder = folder.strip_suffix('\n').unwrap();
    assert!(
        Path::new(folder).join("linegrind-amd64-linux").exists(),
        "{folder}"
    );
    // As a shell runs either command: `_` is the command's path.
    let recorded = Command::new(linegrind_path)
        .current_dir(dir.path())
        .env("_", linegrind_path)
        .args(["record", "-q", "-o", "t.lgt", "--"])
        .arg(&program)
        .output()
        .unwrap();
    let callgrind = Command::new("valgrind")
        .current_dir(dir.path())
        .env("_", linegrind_path)
        .env("VALGRIND_LIB", folder)
        .args(["-q", "--tool=callgrind", "--callgrind-out-file=/dev/null"])
        .arg(&program)
        .output()
        .unwrap();
    assert!(recorded.status.success() && callgrind.status.success());
    assert_eq!(
        String::from_utf8_lossy(&recorded.stdout),
        String::from_utf8_lossy(&callgrind.stdout),
        "the program's stack"
    );
}

/// The program's environment comes in the order linegrind was given it,
/// with `VALGRIND_LIB` set as `env` sets it, so that a Callgrind run the
/// README's way (`env VALGRIND_LIB=... valgrind ...`) gives the program
/// the same one: where its variables lie is what `getenv` costs. Debian's
/// `valgrind` is a `dash` script, which passes on the variables by their
/// hash, and those of one hash in the reverse of their order: two names
/// with the same first letter and the same letters, given unsorted, come
/// out in the other order when a command passes them sorted by name (as a
/// command given any variable does).
#[test]
fn a_recording_keeps_the_order_of_the_environment_as_env_does() {
    let Some(folder) = recorder_tool() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    // What finds the programs and the tool's folder, and the two names.
    let mut given: Vec<std::ffi::OsString> = vec!["-i".into()];
    for name in ["PATH", "HOME", "XDG_CACHE_HOME"] {
        if let Some(value) = std::env::var_os(name) {
            given.push(setting(name, &value));
        }
    }
    given.extend(["LG_ORDER_YX=1".into(), "LG_ORDER_XY=2".into()]);
    let recorded = Command::new("env")
        .current_dir(dir.path())
        .args(&given)
        .arg(env!("CARGO_BIN_EXE_linegrind"))
        .args(["record", "-q", "-o", "t.lgt", "--", "env"])
        .output()
        .unwrap();
    let callgrind = Command::new("env")
        .current_dir(dir.path())
        .args(&given)
        .arg(setting("VALGRIND_LIB", folder.as_os_str()))
        .args([
            "valgrind",
            "-q",
            "--tool=callgrind",
            "--callgrind-out-file=/dev/null",
        ])
        .arg("env")
        .output()
        .unwrap();
    assert!(recorded.status.success() && callgrind.status.success());
    let seen = String::from_utf8_lossy(&recorded.stdout);
    assert!(seen.contains("LG_ORDER_YX=1") && seen.contains("LG_ORDER_XY=2"));
    assert_eq!(seen, String::from_utf8_lossy(&callgrind.stdout));
}

/// `linegrind record -q -o t.lgt -- sh -c SCRIPT` in `dir`, to run.
fn shell_recording(dir: &Path, script: &str) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_linegrind"));
    command
        .current_dir(dir)
        .args(["record", "-q", "-o", "t.lgt", "--", "/bin/sh", "-c", script]);
    command
}

/// `linegrind record -o t.lgt -- sh -c SCRIPT` in `dir`, with its
/// temporary files in `tmp`, in a process group of its own, so that a
/// signal the script sends to its group spares the test; `None` where
/// Valgrind is missing. SIGINT takes its default action in linegrind, as
/// from a terminal, even where the tests run in the background of a
/// script, which ignores it and would have linegrind and the program
/// ignore it too.
fn record_shell(dir: &Path, tmp: &Path, script: &str) -> Option<std::process::Output> {
    use std::os::unix::process::CommandExt;
    recorder_tool()?;
    let mut command = shell_recording(dir, script);
    command.env("TMPDIR", tmp).process_group(0);
    // SAFETY: between fork and exec, `signal` is async-signal-safe and
    // touches nothing of the parent's.
    unsafe {
        command.pre_exec(|| {
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            libc::signal(libc::SIGQUIT, libc::SIG_DFL);
            // A program that SIGQUIT ends leaves no core (nor Valgrind's).
            let none = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            libc::setrlimit(libc::RLIMIT_CORE, &none);
            Ok(())
        });
    }
    Some(command.output().unwrap())
}

/// Files in `dir`, by name.
fn files_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// A report `record` cannot write (standard error full) leaves the
/// program's exit code, and the trace is kept.
#[test]
fn a_report_that_cannot_be_written_leaves_the_programs_exit_code() {
    if recorder_tool().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let status = Command::new(env!("CARGO_BIN_EXE_linegrind"))
        .current_dir(dir.path())
        .args(["record", "-o", "t.lgt", "--", "/bin/sh", "-c", "exit 7"])
        .stderr(std::fs::File::create("/dev/full").unwrap())
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(7));
    assert!(events(&dir.path().join("t.lgt")).len() > 1000);
}

#[test]
fn ctrl_c_stops_the_program_and_the_trace_of_what_ran_is_kept() {
    use std::os::unix::process::ExitStatusExt;
    // SIGINT to the whole group, as a terminal's Ctrl-C sends it, and
    // SIGQUIT, as Ctrl-\ does.
    for (signal, name) in [(libc::SIGINT, "INT"), (libc::SIGQUIT, "QUIT")] {
        let (dir, tmp) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let script = format!("kill -{name} 0; sleep 10");
        let Some(output) = record_shell(dir.path(), tmp.path(), &script) else {
            return;
        };
        assert_eq!(
            output.status.signal(),
            None,
            "linegrind itself was not interrupted by SIG{name}"
        );
        assert_eq!(output.status.code(), Some(128 + signal));
        assert_eq!(files_in(dir.path()), ["t.lgt"]);
        assert_eq!(files_in(tmp.path()), Vec::<String>::new());
        assert!(events(&dir.path().join("t.lgt")).len() > 1000);
    }
}

/// SIGTERM, or any other signal that ends a process (SIGUSR1, SIGALRM),
/// sent to linegrind alone.
#[test]
fn a_terminated_recording_leaves_no_file() {
    use std::os::unix::process::ExitStatusExt;
    for (signal, name) in [
        (libc::SIGTERM, "TERM"),
        (libc::SIGUSR1, "USR1"),
        (libc::SIGALRM, "ALRM"),
    ] {
        let (dir, tmp) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        // Under Valgrind the shell's parent is linegrind itself, which
        // passes the signal on to the program: the shell does not live to
        // leave a file.
        let script = format!("kill -{name} $PPID; sleep 2; touch survived");
        let Some(output) = record_shell(dir.path(), tmp.path(), &script) else {
            return;
        };
        // (Output is collected until every process holding linegrind's
        // standard output has ended: the shell, if it survived, has
        // touched its file by now.)
        assert_eq!(output.status.signal(), Some(signal), "SIG{name}");
        assert_eq!(files_in(dir.path()), Vec::<String>::new(), "SIG{name}");
        // Nor the scratch folder of the FIFO the tool writes into.
        assert_eq!(files_in(tmp.path()), Vec::<String>::new(), "SIG{name}");
    }
}

/// `record` itself killed outright (`kill -9`): its program is ended with
/// it (SIGTERM), not left to run on unwatched; only the temporary trace,
/// which nothing could remove, is left.
#[test]
fn the_program_ends_with_a_record_killed_outright() {
    use std::os::unix::process::ExitStatusExt;
    let (dir, tmp) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let script = "kill -KILL $PPID; sleep 2; touch survived";
    let Some(output) = record_shell(dir.path(), tmp.path(), script) else {
        return;
    };
    assert_eq!(output.status.signal(), Some(libc::SIGKILL));
    let left = files_in(dir.path());
    assert!(
        left.len() == 1 && left[0].starts_with(".linegrind-"),
        "{left:?}"
    );
}

/// Valgrind's process killed outright (`kill -9`, as the OOM killer does)
/// by another process, here a child of the program's shell: `record`
/// exits as the kill ended it, and keeps the trace of what the tool had
/// written, without an exit code, whether the kill came inside one of
/// the tool's writes or between two.
#[test]
fn a_recording_killed_outright_keeps_what_was_written() {
    let (dir, tmp) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let script = "(sleep 2; kill -KILL $$) & while :; do :; done";
    let Some(output) = record_shell(dir.path(), tmp.path(), script) else {
        return;
    };
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(128 + libc::SIGKILL), "{stderr}");
    assert_eq!(files_in(dir.path()), ["t.lgt"]);
    let info = linegrind(dir.path(), &["info", "t.lgt"]);
    let info = String::from_utf8_lossy(&info.stdout);
    assert!(info.contains("exit code:      none"), "{info}");
    sim_succeeds(dir.path(), "t.lgt");
}

/// What Rust's runtime changes in linegrind before `main` reaches the
/// program as the caller set it: SIGPIPE and SIGXFSZ ignored, standard
/// output closed.
#[test]
fn the_program_inherits_ignored_signals_and_closed_descriptors() {
    use std::os::unix::process::CommandExt;
    if recorder_tool().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // Ignored signals stay ignored in a shell, which then goes on to its
    // exit; its `[` is its own, and asks about its own descriptor.
    let script = "kill -PIPE $$; kill -XFSZ $$; if [ -e /proc/self/fd/1 ]; then exit 4; fi; exit 5";
    let mut command = shell_recording(dir.path(), script);
    // SAFETY: between fork and exec, `signal` and `close` are
    // async-signal-safe and touch nothing of the parent's.
    unsafe {
        command.pre_exec(|| {
            libc::signal(libc::SIGPIPE, libc::SIG_IGN);
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            libc::close(1);
            Ok(())
        });
    }
    let output = command.output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(5), "{stderr}");
}

/// `--trace-children=yes` in `VALGRIND_OPTS` (or a `.valgrindrc`) would
/// have what the program starts write a second stream into the tool's
/// FIFO: `record` runs Valgrind without it.
#[test]
fn children_run_unrecorded_whatever_valgrind_opts_says() {
    if recorder_tool().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let output = shell_recording(dir.path(), "/bin/true; exit 6")
        .env("VALGRIND_OPTS", "--trace-children=yes")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(6), "{stderr}");
    sim_succeeds(dir.path(), "t.lgt");
}

#[test]
fn the_tool_without_a_writable_output_stops_before_the_program_runs() {
    let Some(lib) = recorder_tool() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no/such/folder/raw");
    let out = format!("--lg-out={}", missing.display());
    for options in [vec![], vec![out.as_str()]] {
        let output = Command::new("valgrind")
            .env("VALGRIND_LIB", &lib)
            .current_dir(dir.path())
            .args(["--tool=linegrind", "-q"])
            .args(&options)
            .args(["--", "/bin/sh", "-c", "touch ran"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{options:?}: {stderr}");
        assert!(
            stderr.contains("--lg-out") || stderr.contains("cannot open"),
            "{stderr}"
        );
        assert!(
            !dir.path().join("ran").exists(),
            "{options:?}: the program ran"
        );
    }
    // A file that does not exist yet is made.
    let raw = dir.path().join("raw");
    let output = Command::new("valgrind")
        .env("VALGRIND_LIB", &lib)
        .args(["--tool=linegrind", "-q"])
        .arg(format!("--lg-out={}", raw.display()))
        .arg("/bin/true")
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    assert!(std::fs::read(&raw).unwrap().starts_with(b"LGR1"));
}

/// A program for another machine is refused before Valgrind starts, with
/// what it is: here the headers of such programs (Valgrind would only say
/// that it failed to start its tool). A script
/// is left to Valgrind, which runs its interpreter.
#[test]
fn record_refuses_a_program_for_another_machine() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    for (class, machine, what) in [
        (1, 3, "a 32-bit x86 program"),
        (2, 183, "an AArch64 program"),
        (1, 62, "an x32 program (32-bit pointers)"),
        (2, 21, "a 64-bit ELF program for machine 21"),
    ] {
        let mut header = vec![0x7f, b'E', b'L', b'F', class, 1, 1];
        header.resize(18, 0);
        header.extend(u16::to_le_bytes(machine));
        header.resize(64, 0);
        let program = dir.path().join("prog");
        std::fs::write(&program, header).unwrap();
        std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
        let output = linegrind(dir.path(), &["record", "-q", "--", "./prog"]);
        assert_eq!(output.status.code(), Some(2));
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains(&format!(
                "./prog is {what}: linegrind records x86-64 programs only"
            )),
            "{stderr}"
        );
        assert!(!dir.path().join("prog.lgt").exists());
    }
}

#[test]
fn record_refuses_an_output_over_its_program_or_a_folder_before_running_it() {
    let dir = tempfile::tempdir().unwrap();
    let program = dir.path().join("prog");
    std::fs::copy("/bin/true", &program).unwrap();
    let output = linegrind(dir.path(), &["record", "-q", "-o", "prog", "--", "./prog"]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("the trace prog would replace the program it records"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read(&program).unwrap(),
        std::fs::read("/bin/true").unwrap()
    );

    std::fs::create_dir(dir.path().join("folder")).unwrap();
    let args = [
        "record",
        "-q",
        "-o",
        "folder",
        "--",
        "/bin/sh",
        "-c",
        "touch ran",
    ];
    let output = linegrind(dir.path(), &args);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("cannot write folder: it names a folder"),
        "{stderr}"
    );
    assert!(!dir.path().join("ran").exists(), "the program ran");

    // Where the program's output goes (here pipes to this test), the
    // trace would mix with it; the null device takes anything.
    for (output, stream) in [("/dev/stdout", "output"), ("/dev/stderr", "error")] {
        let args = [
            "record",
            "-q",
            "-o",
            output,
            "--",
            "/bin/sh",
            "-c",
            "touch ran",
        ];
        let run = linegrind(dir.path(), &args);
        assert_eq!(run.status.code(), Some(2));
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert!(
            stderr.contains(&format!(
                "the trace {output} is where the program's standard {stream} goes"
            )),
            "{stderr}"
        );
        assert!(!dir.path().join("ran").exists(), "the program ran");
    }
    // Where standard output is the null device, a trace there is refused
    // nothing.
    if recorder_tool().is_none() {
        return;
    }
    let run = Command::new(env!("CARGO_BIN_EXE_linegrind"))
        .current_dir(dir.path())
        .args([
            "record",
            "-q",
            "-o",
            "/dev/stdout",
            "--",
            "/bin/sh",
            "-c",
            "touch ran",
        ])
        .stdout(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(run.status.success(), "{run:?}");
    assert!(dir.path().join("ran").exists(), "the program did not run");
}
