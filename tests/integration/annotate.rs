//! callgrind_annotate, Valgrind's own reader, must parse every file we write
//! and reproduce our totals, and the inclusive cost of the root function
//! must be the whole program; a recursive function's inclusive cost is
//! the one place where its sums and ours differ.

use std::collections::HashMap;
use std::process::Command;

use linegrind::config::SimConfig;
use linegrind::cost::EventKind;
use linegrind::output::Positions;
use linegrind::profile::Profile;
use linegrind::report::ProfileFile;

use crate::support::{
    callgrind_text, config, example_traces, linegrind, simulate_file, simulate_text,
};

/// The numbers and the name of one row of callgrind_annotate's tables,
/// such as `1,234 (50.00%) 0 5 ( 1.00%) .  file.c:main`, where `.` is an
/// event the function never had.
fn parse_row(line: &str) -> (Vec<u64>, String) {
    let mut numbers = Vec::new();
    let mut tokens = line.split_whitespace().peekable();
    while let Some(token) = tokens.peek() {
        if token.starts_with('(') {
            // A percentage, split in two when padded: `( 0.36%)`.
            if !token.ends_with(')') {
                tokens.next();
            }
            tokens.next();
        } else if *token == "." {
            numbers.push(0);
            tokens.next();
        } else if let Ok(n) = token.replace(',', "").parse::<u64>() {
            numbers.push(n);
            tokens.next();
        } else {
            break;
        }
    }
    (numbers, tokens.collect::<Vec<_>>().join(" "))
}

/// callgrind_annotate's report of `file`, run in the file's folder, as a
/// user annotating a profile there would: it drops that folder from the
/// names of the files the profile names.
fn annotate(file: &std::path::Path) -> Option<String> {
    let output = Command::new("callgrind_annotate")
        .args(["--inclusive=yes", "--threshold=100"])
        .arg(file)
        .current_dir(file.parent().unwrap())
        .output();
    match output {
        Ok(output) => {
            assert!(
                output.status.success(),
                "callgrind_annotate failed: {}",
                String::from_utf8_lossy(&output.stderr)
            );
            let stderr = String::from_utf8_lossy(&output.stderr);
            assert!(
                !stderr.contains("WARNING"),
                "callgrind_annotate warned: {stderr}"
            );
            Some(String::from_utf8(output.stdout).unwrap())
        }
        Err(_) => {
            crate::support::skip!("callgrind_annotate is not installed (install valgrind)");
            None
        }
    }
}

fn ours(profile: &Profile) -> Vec<u64> {
    profile
        .events
        .kinds()
        .iter()
        .map(|&kind| profile.totals[kind])
        .collect()
}

/// Writes `profile`, has callgrind_annotate read it, and checks that its
/// totals are ours and, with `root_is_whole`, that the inclusive cost of
/// the root function (`main`, or a recorded program's entry) is
/// everything. (callgrind_annotate splits a function whose code
/// comes from several files, such as inlined code, into one row per file,
/// so there it is not.)
pub fn check_annotate_reads(
    profile: &Profile,
    positions: Positions,
    what: &str,
    root_is_whole: bool,
) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("callgrind.out.test");
    std::fs::write(&file, callgrind_text(profile, positions)).unwrap();
    let Some(report) = annotate(&file) else {
        return;
    };
    let totals = report
        .lines()
        .find(|line| line.ends_with("PROGRAM TOTALS"))
        .map(parse_row)
        .expect("a PROGRAM TOTALS line");
    assert_eq!(totals.0, ours(profile), "{what}");
    if !root_is_whole {
        return;
    }
    let root = root(profile);
    let row = report
        .lines()
        .map(parse_row)
        .find(|(_, name)| {
            // `file:function`, and ` [object]` when the profile has objects.
            let name = name.split(" [").next().unwrap_or(name);
            name.ends_with(&format!(":{root}"))
        })
        .unwrap_or_else(|| panic!("a row for the root {root}, {what}"));
    assert_eq!(row.0, ours(profile), "inclusive {root}, {what}");
    assert!(profile.totals[EventKind::Ir] > 0);
}

/// The function of the first instruction: the program's entry, which
/// runs the whole program.
fn root(profile: &Profile) -> String {
    let first = &profile.program.instrs()[0];
    profile.program.function(first.func).name.clone()
}

/// callgrind_annotate's inclusive cost of every function of `sim`'s
/// output, back-dated costs included, is the one `sim`'s JSON summary
/// gives, event by event: every function but a recursive one and one whose
/// code callgrind_annotate splits by source file (inlined code).
#[test]
fn callgrind_annotate_reads_every_functions_inclusive_cost_as_ours() {
    let dir = tempfile::tempdir().unwrap();
    for trace in ["hydro", "sort", "call_chain"] {
        let trace = crate::support::root().join(format!("traces/{trace}.lgt"));
        let (out, json) = (dir.path().join("p.out"), dir.path().join("p.json"));
        let args = [
            "sim",
            trace.to_str().unwrap(),
            "-q",
            "-o",
            out.to_str().unwrap(),
            "--json",
            json.to_str().unwrap(),
        ];
        assert!(linegrind(dir.path(), &args).status.success());
        let Some(report) = annotate(&out) else {
            return;
        };
        let summary: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
        let events: Vec<&str> = summary["events"]
            .as_array()
            .unwrap()
            .iter()
            .map(|event| event.as_str().unwrap())
            .collect();
        // Per `file:function` (callgrind_annotate adds up functions of the
        // same file and name in different objects): its rows.
        let mut rows: HashMap<(String, String), Vec<Vec<u64>>> = HashMap::new();
        for (numbers, name) in report.lines().map(parse_row) {
            let place = name
                .rsplit_once(" [")
                .map_or(name.as_str(), |(place, _)| place);
            if numbers.len() != events.len() {
                continue;
            }
            if let Some((file, function)) = place.split_once(':') {
                let key = (file.to_string(), function.to_string());
                rows.entry(key).or_default().push(numbers);
            }
        }
        let functions = summary["functions"].as_array().unwrap();
        let calls = summary["calls"].as_array().unwrap();
        let key = |function: &serde_json::Value| {
            let text = |field: &str| function[field].as_str().unwrap().to_string();
            (text("file"), text("name"))
        };
        let mut ours: HashMap<(String, String), usize> = HashMap::new();
        for function in functions {
            *ours.entry(key(function)).or_default() += 1;
        }
        let mut compared = 0;
        for (index, function) in functions.iter().enumerate() {
            let recursive = calls
                .iter()
                .any(|call| call["caller"] == index && call["callee"] == index);
            let key = key(function);
            let Some([row]) = rows.get(&key).map(Vec::as_slice) else {
                continue;
            };
            if recursive || ours[&key] > 1 {
                continue;
            }
            let inclusive: Vec<u64> = events
                .iter()
                .map(|event| function["inclusive"][event].as_u64().unwrap_or(0))
                .collect();
            assert_eq!(*row, inclusive, "{}: {key:?}", trace.display());
            compared += 1;
        }
        // All but 5% (254 of 262 functions on hydro, 244 of 253 on sort).
        assert!(
            compared * 100 >= functions.len() * 95,
            "{}: {compared} of {} functions compared",
            trace.display(),
            functions.len()
        );
    }
}

/// Run in the folder of the sources, callgrind_annotate drops that folder
/// from the files' names: a call within one file must stay in that
/// file's row, which it does where the file is not named again for the
/// call (`cfi=`), as Callgrind writes it.
#[test]
fn calls_within_a_file_stay_in_its_row_when_annotated_in_its_folder() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a.c");
    let file = file.to_str().unwrap();
    std::fs::write(
        dir.path().join("t.txt"),
        format!(
            "linegrind-trace text 1
fn 1000 1100 main {file} 1
fn 1100 1200 f {file} 10
i 1000 4
call 1100
i 1100 4
r 5000 8
i 1104 1
ret
i 1004 1
"
        ),
    )
    .unwrap();
    let output = linegrind(dir.path(), &["sim", "-q", "t.txt", "-o", "t.out"]);
    assert!(output.status.success());
    let profile = std::fs::read_to_string(dir.path().join("t.out")).unwrap();
    assert!(!profile.contains("cfi="), "{profile}");
    let Some(report) = annotate(&dir.path().join("t.out")) else {
        return;
    };
    let rows: Vec<(Vec<u64>, String)> = report
        .lines()
        .map(parse_row)
        .filter(|(numbers, name)| !numbers.is_empty() && name.contains(':'))
        .collect();
    let names: Vec<&str> = rows.iter().map(|(_, name)| name.as_str()).collect();
    assert_eq!(names, ["a.c:main", "a.c:f"], "{report}");
    // f: its two instructions and its read, of the run's 4 and 1.
    assert_eq!(rows[1].0[..2], [2, 1], "{report}");
}

#[test]
fn callgrind_annotate_reproduces_totals_and_root_inclusive_cost() {
    let positions = [
        Positions::default(),
        Positions {
            instr: false,
            line: true,
        },
        Positions {
            instr: true,
            line: false,
        },
    ];
    for trace in example_traces() {
        for cache_use in [true, false] {
            let (i1, d1, ll) = SimConfig::default_caches();
            let config = SimConfig::new(i1, d1, ll, cache_use, true).unwrap();
            let profile = simulate_file(&trace, config);
            for positions in positions {
                let what = format!("{} {positions:?} cacheuse={cache_use}", trace.display());
                check_annotate_reads(&profile, positions, &what, true);
            }
        }
    }
}

/// A function that calls itself: callgrind_annotate adds the cost of its
/// calls to itself to its inclusive cost, and we do not (their cost is in
/// its outermost call already), so the two differ by exactly that arc.
#[test]
fn callgrind_annotate_adds_a_recursive_functions_calls_to_itself() {
    let trace = "linegrind-trace text 1
fn 1000 1100 main m.c 1
fn 2000 2100 f m.c 20
i 1000 5
call 2000
i 2000 4
r 5000 4
i 2004 5
call 2000
i 2000 4
r 5040 4
i 2009 1
ret
i 2009 1
ret
i 1005 4
";
    let profile = simulate_text(trace, config("256,2,16", "32,1,16", "256,2,16"));
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("callgrind.out.recursion");
    let out = callgrind_text(&profile, Positions::default());
    std::fs::write(&file, &out).unwrap();
    let Some(report) = annotate(&file) else {
        return;
    };
    let theirs = report
        .lines()
        .map(parse_row)
        .find(|(_, name)| name == "m.c:f")
        .expect("a row for f")
        .0;

    let parsed = ProfileFile::<u64>::parse(out.as_bytes()).unwrap();
    let f = parsed
        .functions
        .iter()
        .position(|function| function.key.name == "f")
        .unwrap();
    let to_itself = parsed
        .calls
        .iter()
        .find(|call| call.caller == f && call.callee == f)
        .expect("f calls itself");
    let ours = &parsed.inclusive()[f];
    let ours_and_arc: Vec<u64> = ours
        .iter()
        .zip(&to_itself.inclusive)
        .map(|(a, b)| a + b)
        .collect();
    assert!(to_itself.inclusive[0] > 0, "the arc has instructions");
    assert_eq!(theirs, ours_and_arc);
}
