//! Importers against the recorder: small C programs run under Valgrind
//! Lackey (`--trace-mem=yes --vex-guest-chase=no`) and under
//! `linegrind record` simulate to the same totals and misses; with the
//! program given as `--binary`, the Lackey trace gets the same functions,
//! with their self and inclusive costs, and call arcs, with their counts
//! and inclusive costs, for the program's own code.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use linegrind::report::ProfileFile;

use crate::support::{compile_program, linegrind, missing_tools, record, valgrind_as_recorder};

const CACHES: [&str; 3] = ["--I1=32768,8,64", "--D1=32768,8,64", "--LL=1048576,16,64"];

const EVENTS: [&str; 12] = [
    "Ir", "Dr", "Dw", "I1mr", "D1mr", "D1mw", "ILmr", "DLmr", "DLmw", "SpLoss1", "Loaded1", "Used1",
];

struct Program {
    source: &'static str,
    /// The program's own functions, whose arcs must match.
    functions: &'static [&'static str],
    /// How it is compiled.
    flags: &'static [&'static str],
}

const PROGRAMS: &[Program] = &[
    Program {
        source: "fidelity/recursion.c",
        functions: &["main", "fib", "is_even", "is_odd"],
        flags: &["-O1"],
    },
    Program {
        source: "importers/calls.c",
        functions: &["main", "fill", "compare", "sum"],
        flags: &["-O1"],
    },
    // With -O2, gcc branches over the first recursive call to that call's
    // return address: a jump there, not a return.
    Program {
        source: "importers/merge_sort.c",
        functions: &["main", "merge_sort"],
        flags: &["-O2"],
    },
    // The C library's merge sort, run inside itself with no binary for
    // it, branches over a call of its own to the return address of the
    // outer sort's call.
    Program {
        source: "importers/nested_sort.c",
        functions: &["main", "by_value", "smallest", "by_smallest"],
        flags: &["-O2"],
    },
];

/// Runs `binary` under Lackey, as the recorder runs its own tool, so with
/// the same stack addresses and the same work.
fn lackey(binary: &Path, dir: &Path) -> PathBuf {
    let log = dir.join("lackey.log");
    let status = valgrind_as_recorder(dir)
        .args(["--tool=lackey", "--trace-mem=yes", "--vex-guest-chase=no"])
        .arg(format!("--log-file={}", log.display()))
        .arg(binary)
        .status()
        .unwrap();
    assert!(status.code().is_some(), "lackey ran");
    log
}

/// Simulates `trace` with `extra` options, and reads the profile back.
fn simulate(trace: &Path, extra: &[&str], dir: &Path, name: &str) -> (ProfileFile, String) {
    let out = dir.join(name);
    let mut args = vec!["sim", "--quiet", "-o", out.to_str().unwrap()];
    args.extend(CACHES);
    args.extend(extra);
    args.push(trace.to_str().unwrap());
    let output = linegrind(dir, &args);
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "{stderr}");
    let file = std::fs::File::open(&out).unwrap();
    (
        ProfileFile::parse(std::io::BufReader::new(file)).unwrap(),
        stderr,
    )
}

fn totals(file: &ProfileFile) -> BTreeMap<&'static str, u64> {
    EVENTS
        .iter()
        .map(|&name| {
            let index = file
                .event(name)
                .unwrap_or_else(|| panic!("no event {name}"));
            (name, file.totals[index])
        })
        .collect()
}

/// Calls from one function to another, by name: their count and
/// inclusive Ir.
type Arcs = BTreeMap<(String, String), (u64, u64)>;

/// Self and inclusive Ir of the functions named, and the calls between
/// them.
fn user_code(file: &ProfileFile, functions: &[&str]) -> (BTreeMap<String, (u64, u64)>, Arcs) {
    let ir = file.event("Ir").unwrap();
    let inclusive = file.inclusive();
    let mut costs = BTreeMap::new();
    for (function, inclusive) in file.functions.iter().zip(&inclusive) {
        if functions.contains(&function.key.name.as_str()) {
            let cost = costs.entry(function.key.name.clone()).or_insert((0, 0));
            cost.0 += function.self_cost[ir];
            cost.1 += inclusive[ir];
        }
    }
    let mut arcs = BTreeMap::new();
    for call in &file.calls {
        let caller = &file.functions[call.caller].key.name;
        let callee = &file.functions[call.callee].key.name;
        if functions.contains(&caller.as_str()) && functions.contains(&callee.as_str()) {
            let arc = arcs
                .entry((caller.clone(), callee.clone()))
                .or_insert((0, 0));
            arc.0 += call.count;
            arc.1 += call.inclusive[ir];
        }
    }
    (costs, arcs)
}

#[test]
fn lackey_traces_simulate_like_recordings() {
    if let Some(why) = missing_tools(false) {
        crate::support::skip!("{why}");
        return;
    }
    for program in PROGRAMS {
        let dir = tempfile::tempdir().unwrap();
        let dir = dir.path();
        let binary = compile_program(program.source, program.flags, dir);
        let log = lackey(&binary, dir);
        let trace = record(&binary, dir);

        let (recorded, _) = simulate(&trace, &[], dir, "recorded.out");
        let (flat, warning) = simulate(&log, &[], dir, "lackey.out");
        assert!(
            warning.contains("not Lackey trace lines") && warning.contains("skipped"),
            "Valgrind's own lines are counted in a warning: {warning}"
        );
        assert_eq!(totals(&flat), totals(&recorded), "{}", program.source);

        let binary_arg = format!("--binary={}", binary.display());
        let (inferred, _) = simulate(&log, &[&binary_arg], dir, "inferred.out");
        assert_eq!(totals(&inferred), totals(&recorded), "{}", program.source);
        let (costs, arcs) = user_code(&inferred, program.functions);
        let (expected_costs, expected_arcs) = user_code(&recorded, program.functions);
        assert_eq!(
            costs, expected_costs,
            "{}: self and inclusive Ir",
            program.source
        );
        assert_eq!(arcs, expected_arcs, "{}: call arcs", program.source);
        assert!(
            !arcs.is_empty(),
            "{}: the program's calls are found: {arcs:?}",
            program.source
        );
    }
}
