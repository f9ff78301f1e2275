//! The `linegrind` binary: output names, summary, exit codes and messages;
//! output files (`outputs`) and pipes (`pipes`) in their own files.

use std::fs;
use std::time::Duration;

use linegrind::callstack::MAX_CONTEXTS;
use linegrind::trace::batch::BATCH_ITEMS;

use crate::support::{linegrind, root, run_within, skip, which, without_source};

mod outputs;
mod pipes;

fn stderr(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn stdout(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn sim_writes_callgrind_out_named_after_the_trace_and_prints_a_summary() {
    let dir = tempfile::tempdir().unwrap();
    let trace = root().join("traces/call_chain.lgt");
    let output = linegrind(dir.path(), &["sim", trace.to_str().unwrap()]);
    assert!(output.status.success(), "{}", stderr(&output));
    let file = fs::read_to_string(dir.path().join("callgrind.out.call_chain")).unwrap();
    assert!(file.starts_with("# callgrind format\nversion: 1\n"));
    let summary = stdout(&output);
    assert!(summary.contains("Ir         28"), "{summary}");
    assert!(
        summary.contains("I1mr        2    7.14% of Ir"),
        "{summary}"
    );
    assert!(summary.contains("top functions by self Ir:"));
    assert!(summary.contains("wrote callgrind.out.call_chain"));
    // Only the profile is left behind: no temporary files.
    assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
}

#[test]
fn the_profile_names_the_recorded_command_and_the_trace() {
    let dir = tempfile::tempdir().unwrap();
    let recorded = root().join("traces/sort.lgt");
    let recorded = recorded.to_str().unwrap();
    let converted = dir.path().join("sort.txt");
    let converted = converted.to_str().unwrap();
    let output = linegrind(dir.path(), &["convert", recorded, converted]);
    assert!(output.status.success(), "{}", stderr(&output));
    // Converted to binary again, the trace keeps its command line and its
    // exit code.
    let rewritten = dir.path().join("sort.lgt");
    let rewritten = rewritten.to_str().unwrap();
    let args = ["convert", recorded, rewritten, "--to", "binary"];
    assert!(linegrind(dir.path(), &args).status.success());
    let info = stdout(&linegrind(dir.path(), &["info", rewritten]));
    assert!(info.contains("cmd:            ./sort\n"), "{info}");
    assert!(info.contains("exit code:      0\n"), "{info}");
    // From text, which holds neither, it has no exit code and says why.
    let from_text = dir.path().join("from_text.lgt");
    let from_text = from_text.to_str().unwrap();
    let output = linegrind(dir.path(), &["convert", converted, from_text]);
    assert!(output.status.success(), "{}", stderr(&output));
    let info = stdout(&linegrind(dir.path(), &["info", from_text]));
    for line in ["cmd:      ", "exit code:"] {
        assert!(
            info.contains(&format!(
                "{line}      none (not recorded: converted from a format without one)\n"
            )),
            "{info}"
        );
    }
    // A text trace has no place for either.
    let info = stdout(&linegrind(dir.path(), &["info", converted]));
    for line in ["cmd:      ", "exit code:"] {
        let none = format!("{line}      none (the format has no place for it)\n");
        assert!(info.contains(&none), "{info}");
    }
    // From a recording cut short, it has the command but no exit code.
    let recording = fs::read(recorded).unwrap();
    fs::write(
        dir.path().join("cut.lgt"),
        &recording[..recording.len() / 2],
    )
    .unwrap();
    let args = [
        "convert",
        "--allow-truncated",
        "cut.lgt",
        "from_cut.lgt",
        "--to",
        "binary",
    ];
    assert!(linegrind(dir.path(), &args).status.success());
    let info = stdout(&linegrind(dir.path(), &["info", "from_cut.lgt"]));
    assert!(info.contains("cmd:            ./sort\n"), "{info}");
    assert!(
        info.contains("execve replaced it, or the trace it was converted from was cut short)\n"),
        "{info}"
    );
    for (trace, cmd, command) in [
        (recorded, "./sort", "\"./sort\""),
        (rewritten, "./sort", "\"./sort\""),
        (converted, converted, "null"),
    ] {
        let output = linegrind(dir.path(), &["sim", trace, "-o", "out", "--json", "json"]);
        assert!(output.status.success(), "{}", stderr(&output));
        let file = fs::read_to_string(dir.path().join("out")).unwrap();
        assert!(file.contains(&format!("\ncmd: {cmd}\n")), "{file}");
        assert!(
            file.contains(&format!("\ndesc: Trace: {trace}\n")),
            "{file}"
        );
        let json = fs::read_to_string(dir.path().join("json")).unwrap();
        assert!(json.contains(&format!("\"path\": \"{trace}\"")), "{json}");
        assert!(json.contains(&format!("\"command\": {command}")), "{json}");
    }
}

#[test]
fn output_option_and_cache_options_are_honoured() {
    let dir = tempfile::tempdir().unwrap();
    let trace = root().join("traces/stream_hot_table.lgt");
    let output = linegrind(
        dir.path(),
        &[
            "sim",
            trace.to_str().unwrap(),
            "-o",
            "small.out",
            "--D1=1024,2,64",
            "--cacheuse=no",
        ],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let file = fs::read_to_string(dir.path().join("small.out")).unwrap();
    assert!(file.contains("desc: D1 cache: 1024 B, 64 B, 2-way associative"));
    assert!(file.contains("events: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw\n"));
    assert!(
        !file.contains("Back-dating"),
        "no back-dating without cache use"
    );
}

#[test]
fn a_recorded_trace_simulates_without_its_binaries_and_says_what_it_lacks() {
    // The trace's objects moved away: with `symbols=embedded` they are
    // never opened and the profile is the same; without it, each missing
    // object is a warning.
    let dir = tempfile::tempdir().unwrap();
    let trace = root().join("traces/stream_table.lgt");
    let text = dir.path().join("t.txt");
    let converted = linegrind(
        dir.path(),
        &["convert", trace.to_str().unwrap(), text.to_str().unwrap()],
    );
    assert!(converted.status.success(), "{}", stderr(&converted));
    let original = fs::read_to_string(&text).unwrap();
    let moved = original.replace("object /", "object /nowhere/");
    assert!(moved.contains("symbols=embedded"));
    fs::write(dir.path().join("moved.lgt"), &moved).unwrap();
    let unmarked = moved.replace(" symbols=embedded", "");
    fs::write(dir.path().join("unmarked.lgt"), unmarked).unwrap();

    // The warnings, and the profile without the lines naming the trace and
    // with the objects' paths as recorded.
    let sim = |name: &str, extra: &[&str]| {
        let mut args = vec!["sim", name, "-o", "out", "--dump-instr=no"];
        args.extend(extra);
        let output = linegrind(dir.path(), &args);
        assert!(output.status.success(), "{}", stderr(&output));
        let profile = fs::read_to_string(dir.path().join("out")).unwrap();
        (
            stderr(&output),
            without_source(&profile).replace("/nowhere", ""),
        )
    };
    let (warnings, reference) = sim("t.txt", &[]);
    assert_eq!(warnings, "");
    let (warnings, profile) = sim("moved.lgt", &[]);
    assert_eq!(warnings, "");
    assert!(
        profile == reference,
        "the moved objects changed the profile"
    );
    let (warnings, _) = sim("unmarked.lgt", &[]);
    assert!(warnings.contains("cannot read /nowhere/"), "{warnings}");
    let (warnings, _) = sim("moved.lgt", &["--show-inlined=yes"]);
    assert!(
        warnings.contains("stream_table: the trace carries its symbols without inlining"),
        "{warnings}"
    );
}

#[test]
fn bad_input_exits_2_with_one_line_naming_the_place() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.lgt");
    fs::write(&bad, "linegrind-trace text 1\ni 1000 4\nr 2000 zz\n").unwrap();
    let output = linegrind(dir.path(), &["sim", "bad.lgt"]);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        stderr(&output),
        "linegrind: bad.lgt: line 3: bad SIZE `zz` in `r|w|m ADDR SIZE`: \
         expected a decimal number in range\n"
    );
    assert!(!dir.path().join("callgrind.out.bad").exists());

    fs::write(&bad, "linegrind-trace text 1\nr 2000 4\n").unwrap();
    let output = linegrind(dir.path(), &["sim", "bad.lgt"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).starts_with("linegrind: bad.lgt: line 2: data access with no preceding")
    );

    // Deep in the trace, batches after the first.
    let mut deep = String::from("linegrind-trace text 1\n");
    let fetches = 2 * BATCH_ITEMS + 1000;
    for i in 0..fetches {
        deep.push_str(&format!("i {:x} 1\n", 0x1000 + i));
    }
    deep.push_str("ret\nret\n");
    fs::write(&bad, deep).unwrap();
    let output = linegrind(dir.path(), &["sim", "bad.lgt"]);
    assert_eq!(output.status.code(), Some(2));
    let line = fetches + 3;
    assert!(
        stderr(&output).starts_with(&format!(
            "linegrind: bad.lgt: line {line}: `ret` right after `ret`"
        )),
        "{}",
        stderr(&output)
    );

    // More threads and signal handlers than any recording has: an error at
    // the one too many, not memory without bound.
    let sim_bad = |text: String| {
        fs::write(&bad, text).unwrap();
        linegrind(dir.path(), &["sim", "-q", "-o", "many.out", "bad.lgt"])
    };
    let too_many = |output: std::process::Output, line: usize, what: &str| {
        assert_eq!(output.status.code(), Some(2));
        assert_eq!(
            stderr(&output),
            format!(
                "linegrind: bad.lgt: line {line}: {what} past {MAX_CONTEXTS} threads and running \
                 signal handlers together: no recording has that many (Valgrind runs 500 \
                 threads at most, and a signal frame takes over a kilobyte of stack)\n"
            )
        );
    };
    let nested = |depth: usize| {
        let signals = "signal 10\ni 2000 4\n".repeat(depth);
        sim_bad(format!("linegrind-trace text 1\ni 1000 4\n{signals}"))
    };
    assert!(nested(MAX_CONTEXTS - 1).status.success());
    too_many(nested(MAX_CONTEXTS), 2 * MAX_CONTEXTS + 1, "`signal`");
    let threads = |count: usize, then: &str| {
        let threads: String = (2..=count)
            .map(|tid| format!("thread {tid}\ni 1000 4\n"))
            .collect();
        sim_bad(format!("linegrind-trace text 1\ni 1000 4\n{threads}{then}"))
    };
    assert!(threads(MAX_CONTEXTS, "").status.success());
    let line = 2 * MAX_CONTEXTS + 1;
    too_many(threads(MAX_CONTEXTS, "signal 10\n"), line, "`signal`");
    too_many(threads(MAX_CONTEXTS + 1, ""), line, "`thread`");
    // A thread that ends ends its handlers: its count goes down.
    let last = MAX_CONTEXTS - 1;
    let ended = format!("signal 10\ni 2000 4\nthread-exit {last}\nsignal 10\ni 2000 4\n");
    let output = threads(last, &ended);
    assert!(output.status.success(), "{}", stderr(&output));

    let output = linegrind(dir.path(), &["sim", "missing.lgt"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).starts_with("linegrind: cannot open missing.lgt: "));
}

/// `--binary` finds calls in Lackey and extended din traces only: the
/// others carry their own, or (traditional din) round instruction
/// addresses down to 4-byte words.
#[test]
fn binary_is_refused_for_traces_it_cannot_read_calls_into() {
    let dir = tempfile::tempdir().unwrap();
    let program = env!("CARGO_BIN_EXE_linegrind");
    fs::write(dir.path().join("t.din"), "2 400\n0 7ff0\n").unwrap();
    fs::write(dir.path().join("t.xdin"), "i 400 4\nr 7ff0 8\n").unwrap();
    fs::write(
        dir.path().join("t.lgt"),
        "linegrind-trace text 1\ni 400 4\n",
    )
    .unwrap();
    for (trace, expected) in [
        (
            "t.din",
            "t.din is a din trace, whose addresses are 4-byte words",
        ),
        (
            "t.lgt",
            "t.lgt is a text trace, which carries its own calls",
        ),
    ] {
        let output = linegrind(dir.path(), &["sim", trace, "--binary", program]);
        assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
        assert!(stderr(&output).contains(expected), "{}", stderr(&output));
    }
    let output = linegrind(dir.path(), &["sim", "-q", "t.xdin", "--binary", program]);
    assert!(output.status.success(), "{}", stderr(&output));
}

#[test]
fn bad_options_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let trace = root().join("traces/call_chain.lgt");
    let trace = trace.to_str().unwrap();
    let output = linegrind(dir.path(), &["sim", trace, "--LL=3145728,16,64"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("not a power of two"),
        "{}",
        stderr(&output)
    );
    let output = linegrind(dir.path(), &["sim", trace, "--I1=32768,8,128"]);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        stderr(&output),
        "linegrind: with --cacheuse=yes the I1, D1 and LL line sizes must be equal \
         (got 128, 64 and 64); use --cacheuse=no to simulate different line sizes\n"
    );
    let args = ["sim", trace, "--I1=32768,8,128", "--cacheuse=no"];
    let output = linegrind(dir.path(), &args);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).starts_with(
            "linegrind: the LL line size (64) is below the L1 line size (128): linegrind loads"
        ),
        "{}",
        stderr(&output)
    );
    let output = linegrind(dir.path(), &["sim", trace, "--backdate=maybe"]);
    assert_eq!(output.status.code(), Some(2));
    let output = linegrind(dir.path(), &["frobnicate"]);
    assert_eq!(output.status.code(), Some(2));
    let output = linegrind(dir.path(), &["sim", trace, "--fn-skip="]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("an empty pattern"),
        "{}",
        stderr(&output)
    );
    // Counts say what they take, not how the number failed to parse.
    for (top, why) in [
        ("-1", "expected a whole number, 0 or more"),
        ("99999999999999999999", "more than 18446744073709551615"),
    ] {
        let output = linegrind(dir.path(), &["sim", trace, &format!("--top={top}")]);
        assert_eq!(output.status.code(), Some(2));
        assert!(stderr(&output).contains(why), "{}", stderr(&output));
    }
}

#[test]
fn caches_the_host_cannot_hold_exit_1_and_say_so() {
    let dir = tempfile::tempdir().unwrap();
    let trace = root().join("traces/call_chain.lgt");
    // Under a limit of 512 MiB of address space, the ways of an LL of
    // 2 GiB (512 MiB) or 4 GiB (1 GiB) cannot be allocated.
    let limited = |options: &str| {
        let script = format!(
            "ulimit -v 524288 && exec '{}' sim '{}' {options}",
            env!("CARGO_BIN_EXE_linegrind"),
            trace.display()
        );
        let output = std::process::Command::new("sh")
            .current_dir(dir.path())
            .args(["-c", &script])
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0, "no output");
        stderr(&output)
    };
    assert_eq!(
        limited("--LL=4G,16,64"),
        "linegrind: cannot simulate I1 32768,8,64, D1 32768,8,64, LL 4294967296,16,64: \
         the host refused 1073741824 bytes (1024.0 MiB) for a table of the simulated caches\n"
    );
    // A sweep's caches are all made before the trace is read, and fail
    // together: those that fit are not simulated either. (On a host with
    // less than about 400 MiB available, a table granted under the limit
    // is refused first for want of the memory it would take.)
    let message = limited("--sweep LL=256M..2G");
    let together = "linegrind: cannot simulate LL=256M, LL=512M, LL=1G, LL=2G in one run: ";
    let why = message
        .strip_prefix(together)
        .unwrap_or_else(|| panic!("{message}"));
    assert!(
        why.starts_with("the host refused ") || why.contains("and the host has"),
        "{message}"
    );
}

#[test]
fn a_text_trace_whose_last_line_has_no_newline_is_warned_of() {
    let dir = tempfile::tempdir().unwrap();
    let traces = [
        (
            "t.txt",
            "linegrind-trace text 1\nfn 1000 1100 main\ni 1000 4\nr 2000 1",
            4,
        ),
        ("t.lackey", "I  0401000,4\n L 0600000,1", 2),
        ("t.din", "2 1000\n0 2000", 2),
    ];
    for (name, text, last) in traces {
        let warning = format!(
            "linegrind: warning: {name}: line {last}, the last, has no newline after it: \
             if the trace was cut short there, the line may be cut too\n"
        );
        fs::write(dir.path().join(name), text).unwrap();
        let output = linegrind(dir.path(), &["sim", "-q", name, "-o", "/dev/null"]);
        assert!(output.status.success(), "{}", stderr(&output));
        assert_eq!(stderr(&output), warning);
        let output = linegrind(dir.path(), &["convert", name, "t.lgt"]);
        assert!(output.status.success(), "{}", stderr(&output));
        assert_eq!(stderr(&output), warning);
        let output = linegrind(dir.path(), &["info", name]);
        assert!(stdout(&output).contains(&format!("unterminated:   line {last}, the last")));
        fs::write(dir.path().join(name), format!("{text}\n")).unwrap();
        let output = linegrind(dir.path(), &["sim", "-q", name, "-o", "/dev/null"]);
        assert_eq!(stderr(&output), "", "a whole last line");
    }
}

/// The text summary counts the functions that ran, as the JSON summary
/// does (not one only called), and tells apart namesakes in its top lists
/// by their objects; a share that is not zero never prints as 0.00%.
#[test]
fn the_summary_counts_functions_as_the_json_does_and_tells_namesakes_apart() {
    let dir = tempfile::tempdir().unwrap();
    let mut trace = String::from(
        "linegrind-trace text 1
object /a/liba.so start=1000 end=2000 symbols=embedded
object /b/libb.so start=3000 end=4000 symbols=embedded
fn 1000 1100 same
fn 1100 1200 never
fn 3000 3100 same
i 1000 4
call 3000
i 3000 4
ret
",
    );
    // 20,000 instructions more in liba's `same`: libb's one is 0.005%.
    for _ in 0..10_000 {
        trace += "i 1004 4\ni 1008 4\n";
    }
    trace += "call 1100\n";
    fs::write(dir.path().join("t.txt"), trace).unwrap();
    let output = linegrind(dir.path(), &["sim", "t.txt", "--json", "t.json"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let summary = stdout(&output);
    let json: serde_json::Value =
        serde_json::from_slice(&fs::read(dir.path().join("t.json")).unwrap()).unwrap();
    assert_eq!(json["trace"]["functions"], 2);
    assert!(summary.contains(", 2 functions, "), "{summary}");
    assert!(summary.contains("  same [liba.so]\n"), "{summary}");
    assert!(summary.contains("<0.01%  same [libb.so]\n"), "{summary}");
}

/// A recording cut anywhere is refused, with the byte offset where it
/// ends, and nothing is written; `--allow-truncated` simulates what is
/// there, with a warning.
#[test]
fn sim_refuses_a_cut_trace_unless_told_to_read_what_is_there() {
    let dir = tempfile::tempdir().unwrap();
    let whole = fs::read(root().join("traces/sort.lgt")).unwrap();
    for cut in [5, 20, whole.len() / 3, whole.len() - 1] {
        fs::write(dir.path().join("cut.lgt"), &whole[..cut]).unwrap();
        let output = linegrind(dir.path(), &["sim", "cut.lgt", "-q", "-o", "cut.out"]);
        assert_eq!(output.status.code(), Some(2), "cut at {cut}");
        let said = stderr(&output);
        assert!(
            said.starts_with("linegrind: cut.lgt: byte offset "),
            "{said}"
        );
        assert_eq!(said.lines().count(), 1, "{said}");
        assert!(!dir.path().join("cut.out").exists(), "cut at {cut}");
    }
    fs::write(dir.path().join("cut.lgt"), &whole[..whole.len() / 2]).unwrap();
    let args = ["sim", "cut.lgt", "-q", "-o", "cut.out", "--allow-truncated"];
    let output = linegrind(dir.path(), &args);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("cut.lgt is truncated"),
        "{}",
        stderr(&output)
    );
    let totals = |profile: &str| -> u64 {
        let line = profile.lines().find(|l| l.starts_with("totals: ")).unwrap();
        line.split(' ').nth(1).unwrap().parse().unwrap()
    };
    let part = totals(&fs::read_to_string(dir.path().join("cut.out")).unwrap());
    let args = ["sim", "traces/sort.lgt", "-q", "-o"];
    let out = dir.path().join("whole.out");
    assert!(
        linegrind(&root(), &[&args[..], &[out.to_str().unwrap()]].concat())
            .status
            .success()
    );
    let all = totals(&fs::read_to_string(&out).unwrap());
    assert!(0 < part && part < all, "{part} of {all} instructions");
}

#[test]
fn help_explains_every_sim_option_with_an_example() {
    let output = linegrind(&root(), &["sim", "--help"]);
    assert!(output.status.success());
    let help = stdout(&output);
    for option in [
        "--output",
        "--I1",
        "--D1",
        "--LL",
        "--cacheuse",
        "--backdate",
        "--top",
    ] {
        let line = help
            .lines()
            .position(|line| line.contains(option))
            .unwrap_or_else(|| panic!("{option} missing from help"));
        let text: String = help.lines().skip(line).take(4).collect();
        assert!(
            text.contains("example") || text.contains("default"),
            "{option} has no example: {text}"
        );
    }
    assert!(help.contains("Examples:"));
    let output = linegrind(&root(), &["--help"]);
    assert!(stdout(&output).contains("linegrind sim traces/hydro.lgt"));
}

#[test]
fn sim_says_which_format_it_read_an_imported_trace_as() {
    let dir = tempfile::tempdir().unwrap();
    let trace = root().join("tests/importers/sizes.xdin");
    let output = linegrind(dir.path(), &["sim", trace.to_str().unwrap(), "-o", "x.out"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let summary = stdout(&output);
    assert!(
        summary.contains(
            "read as a Dinero extended din (TYPE ADDRESS SIZE) trace, told by its first lines"
        ),
        "{summary}"
    );
    let own = linegrind(
        dir.path(),
        &[
            "sim",
            root().join("traces/call_chain.lgt").to_str().unwrap(),
            "-o",
            "y.out",
        ],
    );
    assert!(!stdout(&own).contains("read as"));
}

#[test]
fn a_data_only_import_does_not_convert_into_a_trace_sim_would_refuse() {
    let dir = tempfile::tempdir().unwrap();
    let trace = root().join("tests/importers/cachelab.trace");
    let output = linegrind(dir.path(), &["convert", trace.to_str().unwrap(), "out.lgt"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("line 2: a data access before any instruction"),
        "{}",
        stderr(&output)
    );
    assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);
    // It simulates, its back-dating tree without a mean over instructions.
    let args = [
        "sim",
        trace.to_str().unwrap(),
        "-o",
        "out",
        "--json",
        "json",
    ];
    let output = linegrind(dir.path(), &args);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stdout(&output).contains("back-dating tree: no mean (no instructions), max 1, 1 created"),
        "{}",
        stdout(&output)
    );
    let out = fs::read_to_string(dir.path().join("out")).unwrap();
    assert!(out.contains("\ndesc: Back-dating tree mean nodes: none (no instructions)\n"));
    let json = fs::read_to_string(dir.path().join("json")).unwrap();
    // A number in schema version 1, which readers of it take.
    assert!(json.contains("\"mean_nodes\": 0.0,"), "{json}");
    for file in ["out", "json"] {
        fs::remove_file(dir.path().join(file)).unwrap();
    }
    // `info` does not suggest the conversion, as it does for a trace that
    // converts.
    let info = stdout(&linegrind(dir.path(), &["info", trace.to_str().unwrap()]));
    assert!(!info.contains("linegrind convert"), "{info}");
    let lackey = root().join("tests/importers/program.lackey");
    let info = stdout(&linegrind(dir.path(), &["info", lackey.to_str().unwrap()]));
    assert!(
        info.contains("(convert it to binary with `linegrind convert`"),
        "{info}"
    );
}

#[test]
fn control_characters_in_names_never_reach_the_terminal_or_the_profile() {
    let dir = tempfile::tempdir().unwrap();
    // A function whose name retitles and clears the terminal, in a file
    // whose name holds a tab, and an object that cannot be read (a
    // warning names it); a namesake in an object whose name holds an
    // escape, which the summary's top list names to tell the two apart.
    let trace = "linegrind-trace text 1\n\
                 object /no/such%1b[31m bias=0\n\
                 object /o/li%1b[31mb.so start=3000 end=4000 symbols=embedded\n\
                 fn 1000 2000 %1b]0;pwned%07%1b[2J x%09y.c 3\n\
                 fn 3000 3100 %1b]0;pwned%07%1b[2J\n\
                 i 1000 4\n\
                 i 3000 4\n";
    fs::write(dir.path().join("esc.txt"), trace).unwrap();
    let sim = linegrind(
        dir.path(),
        &["sim", "esc.txt", "-o", "esc.out", "--json", "esc.json"],
    );
    assert!(sim.status.success(), "{}", stderr(&sim));
    let report = linegrind(dir.path(), &["report", "esc.out", "--no-color"]);
    assert!(report.status.success(), "{}", stderr(&report));
    let profile = fs::read_to_string(dir.path().join("esc.out")).unwrap();
    // A profile whose command line and event name hold escapes.
    let other = "# callgrind format\ncmd: ./a \u{1b}]0;T\u{7}\nevents: I\u{1b}r\nfn=(1) main\n0 5\ntotals: 5\n";
    fs::write(dir.path().join("other.out"), other).unwrap();
    let other = linegrind(dir.path(), &["report", "other.out", "--no-color"]);
    assert!(other.status.success(), "{}", stderr(&other));
    assert!(
        stderr(&sim).contains("/no/such\\u{1b}[31m"),
        "{}",
        stderr(&sim)
    );
    for (what, text) in [
        ("sim", stdout(&sim)),
        ("sim's warning", stderr(&sim)),
        ("report", stdout(&report)),
        ("the profile", profile.clone()),
        ("another profile's report", stdout(&other)),
    ] {
        let controls: Vec<char> = text
            .chars()
            .filter(|&c| c.is_control() && c != '\n')
            .collect();
        assert!(controls.is_empty(), "{what}: {controls:?} in {text}");
    }
    assert!(
        profile.contains("fn=(1) \\u{1b}]0;pwned\\u{7}\\u{1b}[2J\n"),
        "{profile}"
    );
    assert!(
        stdout(&sim).contains("\\u{1b}[2J [li\\u{1b}[31mb.so]\n"),
        "{}",
        stdout(&sim)
    );
    assert!(profile.contains("fl=(1) x\\ty.c\n"), "{profile}");
}

#[test]
fn two_hundred_thousand_objects_are_read_in_moments() {
    let dir = tempfile::tempdir().unwrap();
    let mut trace = String::from("linegrind-trace text 1\n");
    for k in 0..200_000u64 {
        let start = 0x10_0000 + k * 0x1000;
        trace += &format!(
            "object /o/{k} start={start:x} end={:x} symbols=embedded\n",
            start + 0x800
        );
    }
    trace += "i 100000 4\n";
    fs::write(dir.path().join("objects.txt"), trace).unwrap();
    // Each object was once sorted in among the others: about 20 s each;
    // inserted in place, a tenth of a second.
    for args in [
        &["sim", "-q", "objects.txt"][..],
        &["convert", "objects.txt", "objects.lgt"],
    ] {
        let output = run_within(dir.path(), args, Duration::from_secs(10))
            .unwrap_or_else(|| panic!("{args:?} took more than 10 s"));
        assert!(output.status.success(), "{}", stderr(&output));
    }
}
