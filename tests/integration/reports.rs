//! `report`, the JSON summary, `diff` and `check`: golden reports, the
//! summary against the callgrind file, exit codes, and a difference file
//! read by callgrind_annotate; the Firefox Profiler output in `firefox`.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use linegrind::config::SimConfig;
use linegrind::output::json::Summary;
use linegrind::output::{Positions, Source, write_callgrind};
use linegrind::report::percent::Percent;
use linegrind::report::{ProfileFile, ReportOptions, RunCosts, TreeDirection, write_report};

use crate::support::{golden_bytes, linegrind, root, simulate_file};

mod firefox;

/// The callgrind file of an example trace, simulated with the defaults.
fn callgrind_of(trace: &str) -> Vec<u8> {
    let profile = simulate_file(&root().join(trace), SimConfig::default());
    let mut out = Vec::new();
    write_callgrind(
        &mut out,
        &profile,
        &Source::trace(trace),
        Positions::default(),
    )
    .unwrap();
    out
}

fn percent(text: &str) -> Percent {
    Percent::parse(text).unwrap()
}

fn options(file: &ProfileFile<i64>, sort: &str, show: &[&str]) -> ReportOptions {
    let sort = file.event(sort).unwrap();
    let mut shown = vec![sort];
    shown.extend(show.iter().map(|event| file.event(event).unwrap()));
    ReportOptions {
        sort,
        by_self: false,
        show: shown,
        threshold: percent("0.1"),
        top: 25,
        tree: None,
        annotate: false,
        include: Vec::new(),
        color: false,
    }
}

/// Compares `actual` with `tests/golden/report/NAME`, or writes it with
/// `LINEGRIND_BLESS=1`.
fn golden(name: &str, actual: &[u8]) {
    let path = root().join(format!("tests/golden/report/{name}"));
    let Some(expected) = golden_bytes(&path, actual) else {
        return;
    };
    assert!(
        actual == expected,
        "the report differs from {}:\n{}",
        path.display(),
        String::from_utf8_lossy(actual)
    );
}

#[test]
fn reports_match_their_golden_files() {
    // The test runs from the repository root, where the profile's source
    // files are (./traces/src/hydro.c).
    let hydro = ProfileFile::parse(&callgrind_of("traces/hydro.lgt")[..]).unwrap();
    let stream = ProfileFile::parse(&callgrind_of("traces/stream_hot_table.lgt")[..]).unwrap();
    let cases: Vec<(&str, &ProfileFile<i64>, ReportOptions)> = vec![
        (
            "stream_hot_table_default",
            &stream,
            options(&stream, "Ir", &[]),
        ),
        (
            "hydro_flat_spLoss1",
            &hydro,
            ReportOptions {
                top: 12,
                ..options(&hydro, "SpLoss1", &["Ir", "D1mr"])
            },
        ),
        (
            "hydro_tree_callee",
            &hydro,
            // `--self` does not change how the top-down tree ranks.
            ReportOptions {
                tree: Some(TreeDirection::Callee),
                by_self: true,
                threshold: percent("1"),
                ..options(&hydro, "SpLoss1", &["D1mr"])
            },
        ),
        (
            "hydro_tree_caller_self_annotated",
            &hydro,
            ReportOptions {
                tree: Some(TreeDirection::Caller),
                by_self: true,
                threshold: percent("5"),
                annotate: true,
                ..options(&hydro, "SpLoss1", &["Ir"])
            },
        ),
    ];
    for (name, file, options) in cases {
        let mut out = Vec::new();
        write_report(&mut out, file, "callgrind.out.example", &options).unwrap();
        golden(&format!("{name}.txt"), &out);
    }
}

#[test]
fn the_report_command_checks_events_and_colours_only_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let profile = dir.path().join("callgrind.out.t");
    fs::write(&profile, callgrind_of("traces/call_chain.lgt")).unwrap();
    let path = profile.to_str().unwrap();
    let output = linegrind(dir.path(), &["report", path, "--sort", "D1mr"]);
    assert!(output.status.success());
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(text.contains("sorted by: D1mr inclusive cost"), "{text}");
    // Not a terminal: no escapes.
    assert!(!text.contains('\x1b'));
    let output = linegrind(dir.path(), &["report", path, "--sort", "Foo"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("has no event `Foo`"));
    let output = linegrind(dir.path(), &["report", "missing.out"]);
    assert_eq!(output.status.code(), Some(2));
}

/// A JSON summary and the callgrind file of the same run say the same.
/// A trace of data accesses alone has no Ir, the default sort event: the
/// report says which events have costs.
#[test]
fn a_report_without_the_sort_event_names_the_events_it_has() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("data.din"), "0 1000\n1 2040\n0 1000\n").unwrap();
    let sim = linegrind(dir.path(), &["sim", "-q", "data.din", "-o", "data.out"]);
    assert!(sim.status.success());
    let report = linegrind(dir.path(), &["report", "data.out"]);
    assert!(report.status.success());
    let text = String::from_utf8(report.stdout).unwrap();
    assert!(
        text.trim_end().ends_with(
            "no function has any Ir; --sort ranks them by an event that has costs: Dr, Dw, \
             D1mr, D1mw, DLmr, DLmw, AcCost1, SpLoss1, AcCost2, SpLoss2, Loaded1, Used1, \
             Loaded2, Used2"
        ),
        "{text}"
    );
}

#[test]
fn the_json_summary_agrees_with_the_callgrind_file() {
    // Names with blanks at their ends, which readers of callgrind files
    // trim, line up with the summary's all the same.
    let dir = tempfile::tempdir().unwrap();
    let blanks = dir.path().join("blank_ends.txt");
    fs::write(
        &blanks,
        "linegrind-trace text 1\n\
         fn 401000 401020 %20main chain.c 20\n\
         fn 401020 401040 outer%20 chain.c%20 16\n\
         i 401000 4\nw 7ffffff8 8\ni 401004 5\ncall 401020\n\
         i 401020 5\nr 600000 8\ni 401025 1\nret\ni 401009 4\n",
    )
    .unwrap();
    let blanks = blanks.to_str().unwrap();
    // Two functions of one name, file and object (a static function of a
    // header kept out of line in two compilation units), which the
    // callgrind file gives as one.
    let twins = dir.path().join("twins.txt");
    fs::write(
        &twins,
        "linegrind-trace text 1\n\
         fn 1000 1100 main m.c 1\nfn 2000 2010 twice h.h 3\nfn 3000 3010 twice h.h 3\n\
         i 1000 5\ncall 2000\ni 2000 1\nret\ni 1005 5\ncall 3000\ni 3000 1\nret\ni 100a 1\n",
    )
    .unwrap();
    let twins = twins.to_str().unwrap();
    for trace in [
        "traces/hydro.lgt",
        "traces/stream_hot_table.lgt",
        blanks,
        twins,
    ] {
        let profile = simulate_file(&root().join(trace), SimConfig::default());
        let summary = Summary::new(&profile, &Source::trace(trace));
        let mut json = Vec::new();
        summary.write(&mut json).unwrap();
        let read = Summary::read(&json).unwrap();
        assert!(read == summary, "{trace}: the summary does not read back");

        let mut callgrind = Vec::new();
        write_callgrind(
            &mut callgrind,
            &profile,
            &Source::trace(trace),
            Positions::default(),
        )
        .unwrap();
        let from_file = RunCosts::from_file(ProfileFile::parse(&callgrind[..]).unwrap());
        let from_json = RunCosts::from_summary(&read);
        assert_eq!(from_json.events, from_file.events);
        assert_eq!(from_json.totals, from_file.totals, "{trace}: totals");
        // Every function with a cost, with the same self and inclusive cost.
        let costly: Vec<_> = from_file
            .functions
            .iter()
            .filter(|f| f.self_cost.iter().chain(&f.inclusive).any(|&v| v != 0))
            .collect();
        assert_eq!(costly.len(), from_json.functions.len(), "{trace}");
        for function in costly {
            let twin = from_json
                .functions
                .iter()
                .find(|f| f.key == function.key)
                .unwrap_or_else(|| panic!("{trace}: {:?} missing", function.key));
            assert_eq!(twin.self_cost, function.self_cost, "{:?}", function.key);
            assert_eq!(twin.inclusive, function.inclusive, "{:?}", function.key);
        }
        // Every call, between the same functions, with the same cost.
        let calls = |run: &RunCosts| {
            let mut calls: Vec<_> = run
                .calls
                .iter()
                .map(|call| {
                    let key = |at: usize| {
                        let key = &run.functions[at].key;
                        (key.object.clone(), key.file.clone(), key.name.clone())
                    };
                    (key(call.caller), key(call.callee), call.inclusive.clone())
                })
                .collect();
            calls.sort();
            calls
        };
        assert!(!from_json.calls.is_empty(), "{trace}");
        assert_eq!(calls(&from_json), calls(&from_file), "{trace}: calls");
    }
}

/// The summary's trace figures count what the run did: a function the
/// trace declares but never enters is not among its functions.
#[test]
fn the_summary_counts_the_functions_and_arcs_the_run_entered() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("declared.txt");
    fs::write(
        &trace,
        "linegrind-trace text 1\n\
         fn 1000 1100 main m.c 1\nfn 2000 2010 helper m.c 9\nfn 3000 3010 unused m.c 20\n\
         i 1000 5\ncall 2000\ni 2000 1\nret\ni 1005 5\ncall 2000\ni 2000 1\nret\ni 100a 1\n",
    )
    .unwrap();
    let trace = trace.to_str().unwrap();
    let profile = simulate_file(Path::new(trace), SimConfig::default());
    let summary = Summary::new(&profile, &Source::trace(trace));
    assert_eq!(summary.trace.threads, 1);
    assert_eq!(summary.trace.functions, 2);
    assert_eq!(summary.trace.call_arcs, 2);

    // Skipped functions (PLT stubs) count too: as many as the callgrind
    // file lists without skipping.
    let hydro = root().join("traces/hydro.lgt");
    let hydro = hydro.to_str().unwrap();
    let dir = dir.path();
    let run = |args: &[&str]| assert!(linegrind(dir, args).status.success());
    run(&["sim", "-q", hydro, "-o", "skipped.out", "--json", "h.json"]);
    run(&["sim", "-q", hydro, "-o", "all.out", "--skip-plt=no"]);
    let read = |name: &str| fs::read(dir.join(name)).unwrap();
    let summary = Summary::read(&read("h.json")).unwrap();
    let all = ProfileFile::<u64>::parse(&read("all.out")[..]).unwrap();
    let skipped = ProfileFile::<u64>::parse(&read("skipped.out")[..]).unwrap();
    assert!(skipped.functions.len() < all.functions.len());
    assert_eq!(summary.trace.functions, all.functions.len() as u64);
}

#[test]
fn the_json_schema_matches_its_golden_file() {
    let trace = "traces/stream_hot_table.lgt";
    let profile = simulate_file(&root().join(trace), SimConfig::default());
    let mut json = Vec::new();
    Summary::new(&profile, &Source::trace(trace))
        .write(&mut json)
        .unwrap();
    golden("stream_hot_table_summary.json", &json);
}

/// Simulates hydro into `dir` with a D1 of `d1` bytes: (callgrind file,
/// JSON summary).
fn hydro_run(dir: &Path, name: &str, d1: &str) -> (PathBuf, PathBuf) {
    let out = dir.join(format!("{name}.out"));
    let json = dir.join(format!("{name}.json"));
    let output = linegrind(
        dir,
        &[
            "sim",
            root().join("traces/hydro.lgt").to_str().unwrap(),
            &format!("--D1={d1},8,64"),
            "-o",
            out.to_str().unwrap(),
            "--json",
            json.to_str().unwrap(),
        ],
    );
    assert!(output.status.success());
    (out, json)
}

#[test]
fn check_exits_0_within_limits_3_past_them_and_2_on_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let (large_file, large) = hydro_run(dir.path(), "large", "65536");
    let (small_file, small) = hydro_run(dir.path(), "small", "32768");
    // The summaries and the callgrind files list functions in different
    // orders; the checks list them alike.
    let rows = |baseline: &Path, current: &Path| {
        let args = ["check", "--baseline", baseline.to_str().unwrap()];
        let limits = ["--limit", "D1mr=+1%", "--function", "*", "--limit", "Ir=+0"];
        let output = linegrind(
            dir.path(),
            &[&args[..], &[current.to_str().unwrap()], &limits].concat(),
        );
        let text = String::from_utf8(output.stdout).unwrap();
        text.lines().skip(2).collect::<Vec<_>>().join("\n")
    };
    assert_eq!(rows(&large, &small), rows(&large_file, &small_file));
    let check = |args: &[&str]| {
        let mut all = vec![
            "check",
            "--baseline",
            large.to_str().unwrap(),
            small.to_str().unwrap(),
        ];
        all.extend(args);
        let output = linegrind(dir.path(), &all);
        (
            output.status.code(),
            String::from_utf8_lossy(&output.stdout).into_owned(),
        )
    };
    // Halving D1 raises D1mr by 6.7% in total ...
    let (code, text) = check(&["--limit", "D1mr=+10%"]);
    assert_eq!(code, Some(0), "{text}");
    assert!(
        text.contains(
            "\nnote: D1 cache differs: 65536 B, 64 B, 8-way associative in the baseline; \
             32768 B, 64 B, 8-way associative in the current run\n"
        ),
        "{text}"
    );
    let (code, text) = check(&["--limit", "D1mr=+5%"]);
    assert_eq!(code, Some(3), "{text}");
    assert!(text.contains("FAIL  D1mr"), "{text}");
    // ... but by 54% in compute_fluxes: only its own limit catches that.
    let (code, text) = check(&["--limit", "D1mr=+10%", "--function", "compute_fluxes*"]);
    assert_eq!(code, Some(3), "{text}");
    assert!(text.contains("1 of 2 checks exceeded"), "{text}");
    assert!(text.contains("compute_fluxes.constprop.0"), "{text}");
    // An absolute limit.
    let (code, _) = check(&["--limit", "D1mr=+80000"]);
    assert_eq!(code, Some(0));
    let (code, _) = check(&["--limit", "D1mr=+70000"]);
    assert_eq!(code, Some(3));
    // Bad input, each told what is wrong.
    for (bad, error) in [
        (
            vec!["--limit", "Nope=+1%"],
            "--limit names the event `Nope`, which the runs do not both have (Ir ",
        ),
        (vec!["--limit", "D1mr=5 percent"], "`D1mr=5 percent`"),
        (
            vec!["--limit", "D1mr=+1%", "--function", "no_such_function"],
            "--function `no_such_function` matches no function of either run",
        ),
    ] {
        let mut all = vec!["check", "--baseline", large.to_str().unwrap()];
        all.extend([small.to_str().unwrap()].iter().chain(&bad));
        let output = linegrind(dir.path(), &all);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{bad:?}: {stderr}");
        assert!(stderr.contains(error), "{bad:?}: {stderr}");
    }
    let output = linegrind(
        dir.path(),
        &[
            "check",
            "--baseline",
            "missing.json",
            large.to_str().unwrap(),
            "--limit",
            "Ir=+1%",
        ],
    );
    assert_eq!(output.status.code(), Some(2));
    // A summary whose totals leave out an event it lists is damaged, not a
    // run that had none of it.
    let mut damaged: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&large).unwrap()).unwrap();
    damaged["totals"].as_object_mut().unwrap().remove("Dw");
    std::fs::write(dir.path().join("damaged.json"), damaged.to_string()).unwrap();
    let output = linegrind(
        dir.path(),
        &[
            "check",
            "--baseline",
            "damaged.json",
            small.to_str().unwrap(),
            "--limit",
            "Dw=+1%",
        ],
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("`totals` has no `Dw`"), "{stderr}");
}

/// Events only one run has are named as left out, not dropped silently.
#[test]
fn diff_names_the_events_only_one_run_has() {
    let dir = tempfile::tempdir().unwrap();
    let trace = root().join("traces/call_chain.lgt");
    for (out, cacheuse) in [("plain.out", "no"), ("use.out", "yes")] {
        let args = ["sim", trace.to_str().unwrap(), "-q", "-o", out];
        let output = linegrind(dir.path(), &[&args[..], &["--cacheuse", cacheuse]].concat());
        assert!(output.status.success());
    }
    let text = |a: &str, b: &str| {
        let output = linegrind(dir.path(), &["diff", a, b]);
        assert!(output.status.success());
        String::from_utf8(output.stdout).unwrap()
    };
    let unshared = "AcCost1 SpLoss1 AcCost2 SpLoss2 Loaded1 Used1 Loaded2 Used2: not compared\n";
    let forward = text("plain.out", "use.out");
    assert!(
        forward.contains(&format!("\nonly B has {unshared}")),
        "{forward}"
    );
    let backward = text("use.out", "plain.out");
    assert!(
        backward.contains(&format!("\nonly A has {unshared}")),
        "{backward}"
    );
    assert!(!text("use.out", "use.out").contains("only "));
    // `--cacheuse=no` back-dates nothing, and the comparison says so.
    assert!(
        forward.contains("\nnote: back-dating differs: off in A; on in B\n"),
        "{forward}"
    );
    assert!(!text("use.out", "use.out").contains("note:"));
}

#[test]
fn diff_of_two_cache_sizes_opens_in_callgrind_annotate_with_the_deltas() {
    let dir = tempfile::tempdir().unwrap();
    let (large, large_json) = hydro_run(dir.path(), "large", "65536");
    let (small, _) = hydro_run(dir.path(), "small", "32768");
    let out = dir.path().join("callgrind.out.diff");
    let output = linegrind(
        dir.path(),
        &[
            "diff",
            small.to_str().unwrap(),
            large.to_str().unwrap(),
            "--sort",
            "D1mr",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(
        text.contains("D1mr       1,211,010    1,135,135      -75,875   -6.27%"),
        "{text}"
    );

    // The same comparison from a JSON summary and a callgrind file.
    let mixed = linegrind(
        dir.path(),
        &[
            "diff",
            small.to_str().unwrap(),
            large_json.to_str().unwrap(),
            "--sort",
            "D1mr",
        ],
    );
    let mixed = String::from_utf8(mixed.stdout).unwrap();
    assert!(mixed.contains("-75,875"), "{mixed}");
    // Either way the comparison names the caches that differ.
    let note = "\nnote: D1 cache differs: 32768 B, 64 B, 8-way associative in A; \
                65536 B, 64 B, 8-way associative in B\n";
    assert!(text.contains(note), "{text}");
    assert!(mixed.contains(note), "{mixed}");
    // No function asked for: their number, and no empty table.
    let args = ["diff", small.to_str().unwrap(), large.to_str().unwrap()];
    let none = linegrind(
        dir.path(),
        &[&args[..], &["--sort", "D1mr", "--top", "0"]].concat(),
    );
    let none = String::from_utf8(none.stdout).unwrap();
    assert!(
        none.trim_end().ends_with(" functions whose D1mr changed"),
        "{none}"
    );
    assert!(!none.contains("incl A"), "{none}");
    // By Ir, the default, which two cache sizes do not change: the events
    // that did change, for --sort.
    let by_ir = String::from_utf8(linegrind(dir.path(), &args).stdout).unwrap();
    assert!(
        by_ir.trim_end().ends_with(
            "no function's Ir changed; --sort ranks them by an event whose total did: \
             D1mr, D1mw, AcCost1, SpLoss1, Loaded1, Used1"
        ),
        "{by_ir}"
    );

    // Expected deltas, from the two files read independently.
    let a = RunCosts::load(&small).unwrap();
    let b = RunCosts::load(&large).unwrap();
    let d1mr = a.event("D1mr").unwrap();
    let self_delta = |name: &str| {
        let cost = |run: &RunCosts| {
            run.functions
                .iter()
                .filter(|f| f.key.name == name)
                .map(|f| f.self_cost[d1mr] as i64)
                .sum::<i64>()
        };
        cost(&b) - cost(&a)
    };
    let Ok(annotated) = Command::new("callgrind_annotate")
        .args(["--sort=D1mr", "--show=D1mr", "--threshold=100"])
        .arg(&out)
        .output()
    else {
        crate::support::skip!("callgrind_annotate is not installed (install valgrind)");
        return;
    };
    assert!(annotated.status.success());
    let report = String::from_utf8(annotated.stdout).unwrap();
    let total = report
        .lines()
        .find(|line| line.contains("PROGRAM TOTALS"))
        .unwrap();
    let expected_total = b.totals[d1mr] as i64 - a.totals[d1mr] as i64;
    assert_eq!(expected_total, -75_875);
    assert!(
        total.trim_start().starts_with(&expected_total.to_string()),
        "{total}"
    );
    for function in ["compute_fluxes.constprop.0", "update_rows.constprop.0"] {
        let expected = self_delta(function);
        assert_ne!(expected, 0);
        let row = report
            .lines()
            .find(|line| line.ends_with(&format!(":{function} [/tmp/linegrind-traces/hydro]")))
            .unwrap_or_else(|| panic!("no row for {function} in\n{report}"));
        assert!(
            row.trim_start().starts_with(&expected.to_string()),
            "{row}: {expected}"
        );
    }
}
