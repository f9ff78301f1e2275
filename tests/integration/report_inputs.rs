//! What `report`, `diff` and `check` read and refuse: a difference file
//! (`diff --out`) read back, costs that add up out of range, call graphs
//! with exponentially many paths, and an `--out` that is one of the runs;
//! the sources `report --auto=yes` annotates in `annotation`; the calls a
//! difference file writes in `diff_file`.

use std::fs;
use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

use crate::support::{linegrind, root, run_within};

mod annotation;
mod diff_file;

/// A run of a small program: `main` calls `work`, `gone` is a root.
const RUN_A: &str = "events: Ir Dr
fl=a.c
fn=main
1 100 10
cfn=work
calls=2 5
1 400 40
fn=work
5 400 40
fn=gone
7 30 3
totals: 530 53
";

/// The same program after a change: `work` is cheaper in Ir but not in Dr,
/// `gone` is gone and `new` is new.
const RUN_B: &str = "events: Ir Dr
fl=a.c
fn=main
1 120 10
cfn=work
calls=2 5
1 250 45
fn=work
5 250 45
fn=new
8 7 0
totals: 377 55
";

/// Writes `text` to `dir/name`.
fn write(dir: &Path, name: &str, text: &str) {
    fs::write(dir.join(name), text).unwrap();
}

/// The top-down tree `report` draws of `profile`, written to `name`.
fn callee_tree(dir: &Path, name: &str, profile: &str) -> String {
    write(dir, name, profile);
    success(linegrind(dir, &["report", name, "--tree", "callee"]))
}

/// The standard output of a successful run.
fn success(output: Output) -> String {
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// The rows of a table whose last two columns are a function and a file,
/// keyed by function: the first `columns` cells, without `+` signs.
fn rows(text: &str, columns: usize) -> Vec<(String, Vec<String>)> {
    text.lines()
        .filter(|line| line.ends_with("a.c"))
        .map(|line| {
            let cells: Vec<&str> = line.split_whitespace().collect();
            let name = cells[cells.len() - 2].to_string();
            let costs = cells[..columns]
                .iter()
                .map(|cell| cell.trim_start_matches('+').to_string())
                .collect();
            (name, costs)
        })
        .collect()
}

#[test]
fn a_diff_file_reads_back_with_the_numbers_diff_printed() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.out", RUN_A);
    write(dir.path(), "b.out", RUN_B);
    let compared = success(linegrind(
        dir.path(),
        &["diff", "a.out", "b.out", "--out", "d.out"],
    ));
    assert!(
        compared.contains("Ir     530  377   -153  -28.87%"),
        "{compared}"
    );
    let reported = success(linegrind(dir.path(), &["report", "d.out", "--show", "Dr"]));
    assert!(reported.contains("totals:    Ir -153  Dr 2"), "{reported}");

    // diff's rows: incl A, incl B, B - A, change, self B - A; report's:
    // Ir incl, %, Ir self, %, Dr incl, %, Dr self, %.
    let mut changes: Vec<(String, Vec<String>)> = rows(&compared, 5)
        .into_iter()
        .map(|(name, cells)| (name, vec![cells[2].clone(), cells[4].clone()]))
        .collect();
    let mut read_back: Vec<(String, Vec<String>)> = rows(&reported, 4)
        .into_iter()
        .map(|(name, cells)| (name, vec![cells[0].clone(), cells[2].clone()]))
        .collect();
    changes.sort();
    read_back.sort();
    assert_eq!(changes.len(), 4, "{compared}");
    assert_eq!(read_back, changes, "{reported}");
    assert!(reported.contains("-130  -84.97%"), "{reported}");

    // The difference file as a run of its own: diff and check take it.
    let again = success(linegrind(dir.path(), &["diff", "d.out", "d.out"]));
    assert!(again.contains("-153  -153      0"), "{again}");
    // From -153 to 530 Ir is a rise past 1% of 153.
    let checked = linegrind(
        dir.path(),
        &["check", "--baseline", "d.out", "a.out", "--limit", "Ir=+1%"],
    );
    let text = String::from_utf8_lossy(&checked.stdout);
    assert_eq!(checked.status.code(), Some(3), "{text}");
    assert!(text.contains("-153      530    +683  +446.41%"), "{text}");
}

#[test]
fn a_diff_file_of_a_recorded_program_reads_back_with_below_main() {
    let dir = tempfile::tempdir().unwrap();
    let trace = root().join("traces/sort.lgt");
    let trace = trace.to_str().unwrap();
    success(linegrind(dir.path(), &["sim", "-q", trace, "-o", "a.out"]));
    let small_ll = ["sim", "-q", trace, "-o", "b.out", "--LL=65536,4,64"];
    success(linegrind(dir.path(), &small_ll));
    success(linegrind(
        dir.path(),
        &["diff", "a.out", "b.out", "--out", "d.out"],
    ));
    // Every name is compressed, as Callgrind writes them: `(below main)`
    // is a name, not a malformed id.
    let written = fs::read_to_string(dir.path().join("d.out")).unwrap();
    assert!(written.contains(") (below main)\n"), "{written}");
    let names = ["ob=", "fl=", "fn=", "cob=", "cfi=", "cfn="];
    for line in written.lines() {
        if names.iter().any(|key| line.starts_with(key)) {
            let value = line.split_once('=').unwrap().1;
            assert!(value.starts_with('(') && value.contains(')'), "{line}");
        }
    }
    let reported = success(linegrind(
        dir.path(),
        &[
            "report",
            "d.out",
            "--sort",
            "DLmr",
            "--threshold",
            "0",
            "--top",
            "500",
        ],
    ));
    assert!(reported.contains("(below main)"), "{reported}");
    success(linegrind(dir.path(), &["diff", "d.out", "a.out"]));
    let checked = linegrind(
        dir.path(),
        &[
            "check",
            "--baseline",
            "d.out",
            "b.out",
            "--limit",
            "DLmr=+1%",
        ],
    );
    assert_eq!(checked.status.code(), Some(3), "{checked:?}");
    let annotated = Command::new("callgrind_annotate")
        .arg(dir.path().join("d.out"))
        .output();
    if let Ok(annotated) = annotated {
        assert!(annotated.status.success(), "{annotated:?}");
    }
}

/// A function's share is compared with the threshold exactly: 33 of 3,000
/// is 1.1% (in binary floating point, 3,000 times 1.1 is more than 3,300),
/// and 2^60 - 1 of 2^61 is less than half (as a double, it is half).
#[test]
fn a_share_at_the_threshold_is_shown_and_an_empty_list_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let profile = |main: u64, f: u64, total: u64| {
        format!("events: Ir\nfl=a.c\nfn=main\n1 {main}\nfn=f\n2 {f}\ntotals: {total}\n")
    };
    write(dir.path(), "at.out", &profile(2_967, 33, 3_000));
    write(
        dir.path(),
        "below.out",
        &profile((1 << 60) + 1, (1 << 60) - 1, 1 << 61),
    );
    let listed = |file: &str, threshold: &str| {
        let text = success(linegrind(
            dir.path(),
            &["report", file, "--threshold", threshold],
        ));
        text.lines()
            .any(|line| line.contains(" f ") && line.ends_with("a.c"))
    };
    assert!(listed("at.out", "1.1"));
    assert!(!listed("at.out", "1.100001"));
    assert!(!listed("below.out", "50"));
    assert!(listed("below.out", "49.999999"));
    // Every function below it, or none asked for: each said so.
    let text = success(linegrind(
        dir.path(),
        &["report", "at.out", "--threshold", "99"],
    ));
    assert!(
        text.ends_with("\nno function reaches the threshold\n"),
        "{text}"
    );
    let text = success(linegrind(dir.path(), &["report", "at.out", "--top", "0"]));
    assert!(text.ends_with("\n--top 0 shows no function\n"), "{text}");
}

/// What a function costs beyond its callers' calls is worked out in 128
/// bits: here 10 brought by `main`'s call against an inclusive cost of
/// -2^63, which leaves -2^63 - 10, past 64 bits.
#[test]
fn a_cost_entered_otherwise_past_64_bits_is_shown_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let min = i64::MIN;
    let profile = format!(
        "events: Ir Dr\nfl=a.c\nfn=main\n1 0 1\ncfn=f\ncalls=1 1\n1 10 2\nfn=f\n1 {min} 3\n"
    );
    write(dir.path(), "odd.out", &profile);
    let args = ["report", "odd.out", "--tree", "callee", "--threshold", "0"];
    let text = success(linegrind(
        dir.path(),
        &[&args[..], &["--show", "Dr"]].concat(),
    ));
    let entered = text
        .lines()
        .find(|line| line.contains("(entered otherwise)"));
    let entered = entered.unwrap_or_else(|| panic!("{text}"));
    assert!(entered.starts_with("-9,223,372,036,854,775,818 "), "{text}");
    // Its Dr: 3 of its own, 2 brought by the call, of 4 in all; the mark
    // on its name.
    let cells: Vec<&str> = entered.split_whitespace().collect();
    assert_eq!(
        cells[2..],
        ["1", "25.00%", "f", "(entered", "otherwise)", "a.c"],
        "{text}"
    );
}

/// A function drawn above is marked where it comes again only if calls
/// would follow it (`c`, not the leaf), the mark on its name whatever the
/// number of events shown.
#[test]
fn a_function_drawn_above_is_marked_only_where_its_calls_are_left_out() {
    let dir = tempfile::tempdir().unwrap();
    let calls = "1 1 0\ncfn=leaf\ncalls=1 1\n1 5 0\ncfn=c\ncalls=1 1\n1 14 2\n";
    let profile = format!(
        "events: Ir Dr\nfl=a.c\nfn=main\n1 1 1\ncfn=a\ncalls=1 1\n1 20 2\n\
         cfn=b\ncalls=1 1\n1 20 2\nfn=a\n{calls}fn=b\n{calls}fn=leaf\n1 10 0\n\
         fn=c\n1 8 2\ncfn=d\ncalls=2 1\n1 20 2\nfn=d\n1 20 2\n"
    );
    write(dir.path(), "dag.out", &profile);
    let args = ["report", "dag.out", "--tree", "callee", "--threshold", "0"];
    let text = success(linegrind(
        dir.path(),
        &[&args[..], &["--show", "Dr"]].concat(),
    ));
    let tree = text.split_once("\n\n").unwrap().1;
    let expected = "\
Ir           Dr           calls (top-down)     file [object]
41  100.00%   5  100.00%  main                 a.c
20   48.78%   2   40.00%  ├─ a                 a.c
14   34.15%   2   40.00%  │  ├─ c              a.c
20   48.78%   2   40.00%  │  │  └─ d           a.c
 5   12.20%   0    0.00%  │  └─ leaf           a.c
20   48.78%   2   40.00%  └─ b                 a.c
14   34.15%   2   40.00%     ├─ c (see above)  a.c
 5   12.20%   0    0.00%     └─ leaf           a.c
";
    assert_eq!(tree, expected);
}

#[test]
fn a_call_tree_deeper_than_it_draws_says_where_it_stops() {
    let dir = tempfile::tempdir().unwrap();
    // f0 -> f1 -> ... -> f60, each costing 1,000 Ir of its own.
    let mut chain = String::from("events: Ir\nfl=a.c\n");
    for f in 0..=60 {
        chain.push_str(&format!("fn=f{f}\n1 1000\n"));
        if f < 60 {
            let inclusive = (60 - f) * 1000;
            chain.push_str(&format!("cfn=f{}\ncalls=1 0\n1 {inclusive}\n", f + 1));
        }
    }
    write(dir.path(), "chain.out", &chain);
    let args = [
        "report",
        "chain.out",
        "--tree",
        "callee",
        "--threshold",
        "0",
    ];
    let text = success(linegrind(dir.path(), &args));
    let last = text.lines().rfind(|line| line.ends_with("a.c")).unwrap();
    assert!(last.contains("f40 (deeper calls not drawn)"), "{text}");
    assert!(!text.contains("f41"), "{text}");
}

#[test]
fn functions_only_a_cycle_of_calls_reaches_are_roots_of_the_top_down_tree() {
    let dir = tempfile::tempdir().unwrap();
    // a calls b and b calls a: no function is called by none.
    let cycle = "events: Ir\nfl=a.c\nfn=a\n1 3\ncfn=b\ncalls=1 0\n1 3\n\
                 fn=b\n1 2\ncfn=a\ncalls=1 0\n1 1\n";
    let text = callee_tree(dir.path(), "cycle.out", cycle);
    let tree: Vec<&str> = text
        .lines()
        .skip_while(|line| !line.contains("top-down"))
        .collect();
    assert!(tree[1].contains(" a "), "{text}");
    assert!(tree[2].contains("└─ b"), "{text}");
    assert!(tree[3].contains("└─ a (recursive)"), "{text}");
}

/// A thread's first function, called once where the thread is made
/// (`clone`, 1 Ir) and entered by the thread with all its cost: the
/// top-down tree starts it again as a root with what the call leaves out,
/// so that the thread's cost is not lost below a call under the threshold.
/// Not for an event the calls carry none of (cache use without
/// back-dating), and alike for a difference's negative costs.
#[test]
fn a_function_entered_otherwise_as_well_starts_a_tree_of_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let thread = "events: Ir SpLoss1\nfl=a.c\nfn=main\n1 5 4\ncfn=spawn\ncalls=1 0\n1 3\n\
                  fn=spawn\n1 2\ncfn=clone\ncalls=1 0\n1 1\n\
                  fn=clone\n1 1 6\ncfn=worker\ncalls=1 0\n1 100\n\
                  fn=worker\n1 100 90\ntotals: 108 100\n";
    write(dir.path(), "thread.out", thread);
    let negated = thread
        .lines()
        .map(|line| match line.split_once(' ') {
            Some((position, costs)) if position == "1" || position == "totals:" => {
                let costs: Vec<String> = costs.split(' ').map(|cost| format!("-{cost}")).collect();
                format!("{position} {}\n", costs.join(" "))
            }
            _ => format!("{line}\n"),
        })
        .collect::<String>();
    write(dir.path(), "difference.out", &negated);
    let tree = |file: &str, threshold: &str, sort: &str| {
        let args = [
            "report",
            file,
            "--tree",
            "callee",
            "--threshold",
            threshold,
            "--sort",
            sort,
        ];
        let text = success(linegrind(dir.path(), &args));
        let rows: Vec<String> = text
            .lines()
            .skip_while(|line| !line.contains("top-down"))
            .skip(1)
            .map(|line| line.split_whitespace().collect::<Vec<_>>().join(" "))
            .collect();
        rows
    };
    // Under 1%, the call from spawn draws clone's calls; its root says so.
    assert_eq!(
        tree("thread.out", "0.5", "Ir"),
        [
            "8 7.41% main a.c",
            "3 2.78% └─ spawn a.c",
            "1 0.93% └─ clone a.c",
            "100 92.59% └─ worker a.c",
            "100 92.59% clone (entered otherwise; calls see above) a.c",
        ]
    );
    // Over it, the call is left out, and the root draws them.
    assert_eq!(
        tree("thread.out", "1", "Ir"),
        [
            "8 7.41% main a.c",
            "3 2.78% └─ spawn a.c",
            "100 92.59% clone (entered otherwise) a.c",
            "100 92.59% └─ worker a.c",
        ]
    );
    assert_eq!(
        tree("difference.out", "1", "Ir"),
        [
            "-8 -7.41% main a.c",
            "-3 -2.78% └─ spawn a.c",
            "-100 -92.59% clone (entered otherwise) a.c",
            "-100 -92.59% └─ worker a.c",
        ]
    );
    // The calls carry no SpLoss1: nothing tells that clone is entered
    // otherwise, and every function with a cost of its own is a root.
    assert_eq!(
        tree("thread.out", "1", "SpLoss1"),
        [
            "4 4.00% main a.c",
            "90 90.00% worker a.c",
            "6 6.00% clone a.c"
        ]
    );
}

/// A file Callgrind dumped as a later part of its run (`--dump-before`,
/// `callgrind_control -d`) holds the costs since the dump before: `report`,
/// `diff` and `check` say so, lest it pass for the whole run.
#[test]
fn a_later_part_of_a_run_is_named_as_such() {
    let dir = tempfile::tempdir().unwrap();
    let profile = |part: u32, ir: u32| {
        format!("cmd: ./app\npart: {part}\nevents: Ir\nfl=a.c\nfn=main\n1 {ir}\ntotals: {ir}\n")
    };
    write(dir.path(), "whole.out", &profile(1, 100));
    write(dir.path(), "later.out", &profile(2, 40));
    let note = "2 of its run: the costs since Callgrind's dump before it";
    let report = success(linegrind(dir.path(), &["report", "later.out"]));
    assert!(report.contains(&format!("part:      {note}")), "{report}");
    let whole = success(linegrind(dir.path(), &["report", "whole.out"]));
    assert!(!whole.contains("part:"), "{whole}");
    let diff = success(linegrind(dir.path(), &["diff", "whole.out", "later.out"]));
    assert!(diff.contains(&format!("note: B is part {note}")), "{diff}");
    let args = [
        "check",
        "--baseline",
        "later.out",
        "whole.out",
        "--limit",
        "Ir=+200%",
    ];
    let check = success(linegrind(dir.path(), &args));
    assert!(
        check.contains(&format!("note: the baseline is part {note}")),
        "{check}"
    );
}

/// Runs `args` in `dir`, expecting exit code 2 and an error that names
/// `place`.
fn expect_input_error(dir: &Path, args: &[&str], place: &str) {
    let output = linegrind(dir, args);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
    assert!(stderr.contains(place), "{args:?}: {stderr}");
}

#[test]
fn costs_adding_up_out_of_range_are_refused_with_the_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let max = i64::MAX;
    let big = format!("events: Ir\nfl=a.c\nfn=f\n1 1\nfn=g\n3 5\ncfn=f\ncalls=1 1\n4 {max}\n");
    write(dir.path(), "big.out", &big);
    write(dir.path(), "a.out", RUN_A);
    let place = "big.out: line 9: the costs add up outside -2^63 to 2^63 - 1";
    expect_input_error(dir.path(), &["report", "big.out"], place);
    expect_input_error(dir.path(), &["diff", "a.out", "big.out"], place);
    expect_input_error(
        dir.path(),
        &[
            "check",
            "--baseline",
            "big.out",
            "a.out",
            "--limit",
            "Ir=+1%",
        ],
        place,
    );
    let counts = format!(
        "events: Ir\nfl=a.c\nfn=f\ncfn=g\ncalls={} 1\n2 1\ncfn=g\ncalls=1 1\n3 1\nfn=g\n1 2\n",
        u64::MAX
    );
    write(dir.path(), "counts.out", &counts);
    expect_input_error(
        dir.path(),
        &["report", "counts.out"],
        "counts.out: line 9: the call counts add up beyond 2^64 - 1",
    );
}

/// A profile of `layers` layers of two functions, each calling both
/// functions of the next layer: 2^layers call paths from the roots.
fn layered_profile(layers: usize) -> String {
    let mut text = String::from("events: Ir\nfl=a.c\n");
    for layer in 0..layers {
        for side in 0..2 {
            text.push_str(&format!("fn=f{layer}_{side}\n1 1\n"));
            if layer + 1 < layers {
                let below = (layers - layer - 1) as u64;
                for next in 0..2 {
                    text.push_str(&format!(
                        "cfn=f{}_{next}\ncalls=1 1\n1 {}\n",
                        layer + 1,
                        (1u64 << below) - 1
                    ));
                }
            }
        }
    }
    text
}

#[test]
fn a_call_tree_draws_each_function_once_whatever_the_number_of_paths() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "dag.out", &layered_profile(40));
    // At most a line per arc (156) in the one top-down tree, and in each
    // of the 25 top functions' bottom-up trees.
    for (tree, most) in [("callee", 2 + 156), ("caller", 25 * (1 + 156))] {
        let args = ["report", "dag.out", "--tree", tree, "--threshold", "0"];
        let output = run_within(dir.path(), &args, Duration::from_secs(20))
            .unwrap_or_else(|| panic!("--tree {tree} took more than 20 s"));
        let text = success(output);
        let lines = text.lines().filter(|line| line.ends_with("a.c")).count();
        assert!(lines <= most, "--tree {tree}: {lines} lines");
    }

    // A diamond: c is drawn under a, and marked under b.
    let diamond = "events: Ir\nfl=a.c\nfn=main\n1 1\ncfn=a\ncalls=1 1\n1 4\ncfn=b\ncalls=1 1\n1 3\n\
                   fn=a\n1 1\ncfn=c\ncalls=1 1\n1 3\nfn=b\n1 1\ncfn=c\ncalls=1 1\n1 2\n\
                   fn=c\n1 3\ncfn=d\ncalls=1 1\n1 2\nfn=d\n1 2\n";
    let text = callee_tree(dir.path(), "diamond.out", diamond);
    let tree: Vec<&str> = text
        .lines()
        .filter(|line| line.ends_with("a.c"))
        .map(|line| {
            line.split("%  ")
                .nth(1)
                .unwrap()
                .trim_end_matches("a.c")
                .trim_end()
        })
        .collect();
    assert_eq!(
        tree,
        [
            "main",
            "├─ a",
            "│  └─ c",
            "│     └─ d",
            "└─ b",
            "   └─ c (see above)"
        ],
        "{text}"
    );
}

#[test]
fn diff_refuses_to_write_over_a_run_it_compares() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.out", RUN_A);
    write(dir.path(), "b.out", RUN_B);
    expect_input_error(
        dir.path(),
        &["diff", "a.out", "b.out", "--out", "./a.out"],
        "--out ./a.out is the first run a.out",
    );
    let b = dir.path().join("b.out");
    expect_input_error(
        dir.path(),
        &["diff", "a.out", "b.out", "--out", b.to_str().unwrap()],
        "is the second run b.out",
    );
    assert_eq!(fs::read_to_string(dir.path().join("a.out")).unwrap(), RUN_A);
    assert_eq!(fs::read_to_string(&b).unwrap(), RUN_B);
}

/// A difference file is made of two callgrind files; a JSON summary in
/// their place is a usage error, named, and no file is written.
#[test]
fn diff_writes_a_difference_file_only_from_callgrind_files() {
    let dir = tempfile::tempdir().unwrap();
    let trace = root().join("traces/call_chain.lgt");
    let args = ["sim", trace.to_str().unwrap(), "-q", "-o", "run.out"];
    success(linegrind(
        dir.path(),
        &[&args[..], &["--json", "run.json"]].concat(),
    ));
    expect_input_error(
        dir.path(),
        &["diff", "run.json", "run.out", "--out", "d.out"],
        "give the runs' callgrind files, not their JSON summaries",
    );
    assert!(!dir.path().join("d.out").exists());
}

#[test]
fn a_diff_file_holds_only_what_readers_take_back() {
    let dir = tempfile::tempdir().unwrap();
    // A function with no file in one run and a file in the other: two
    // functions, the first written as Callgrind's unknown file.
    write(dir.path(), "nofile.out", "events: Ir\nfn=main\n1 5\n");
    write(dir.path(), "file.out", "events: Ir\nfl=m.c\nfn=main\n1 7\n");
    success(linegrind(
        dir.path(),
        &["diff", "nofile.out", "file.out", "--out", "d.out"],
    ));
    let text = fs::read_to_string(dir.path().join("d.out")).unwrap();
    assert!(text.contains("fl=(1) ???\n"), "{text}");
    let report = success(linegrind(dir.path(), &["report", "d.out"]));
    assert!(report.contains("m.c"), "{report}");
    // A difference past the 64-bit signed costs of a callgrind file.
    let max = i64::MAX;
    write(
        dir.path(),
        "max.out",
        &format!("events: Ir\nfl=a.c\nfn=f\n1 {max}\n"),
    );
    write(dir.path(), "low.out", "events: Ir\nfl=a.c\nfn=f\n1 -5\n");
    expect_input_error(
        dir.path(),
        &["diff", "low.out", "max.out", "--out", "big.out"],
        "cannot write big.out: the total Ir differs by 9223372036854775812, beyond the \
         64-bit signed costs a callgrind file holds",
    );
    assert!(!dir.path().join("big.out").exists());
    // The call's difference, not its callee's.
    let call = |inclusive: i64| {
        format!("events: Ir\nfl=a.c\nfn=f\n1 1\ncfn=g\ncalls=1 2\n1 {inclusive}\nfn=g\n2 1\n")
    };
    write(dir.path(), "down.out", &call(-9_000_000_000_000_000_000));
    write(dir.path(), "up.out", &call(9_000_000_000_000_000_000));
    expect_input_error(
        dir.path(),
        &["diff", "down.out", "up.out", "--out", "big.out"],
        "cannot write big.out: Ir of the call f -> g differs by 18000000000000000000",
    );
    // Calls that renames make one, counted past 2^64 - 1 in all.
    let max = u64::MAX;
    let two_callers = format!(
        "events: Ir\nfl=a.c\nfn=a1\n1 1\ncfn=b\ncalls={max} 1\n1 1\n\
         fn=a2\n1 1\ncfn=b\ncalls=5 1\n1 1\nfn=b\n1 2\n"
    );
    write(dir.path(), "callers.out", &two_callers);
    let renamed = ["--mod-funcname", "s/a[0-9]/a/", "--out", "big.out"];
    expect_input_error(
        dir.path(),
        &[&["diff", "callers.out", "callers.out"][..], &renamed].concat(),
        "cannot write big.out: the calls a -> b, made one by the renames, number \
         18446744073709551620, beyond the 64-bit counts a callgrind file holds",
    );
    assert!(!dir.path().join("big.out").exists());
}

#[test]
fn a_call_only_the_first_run_made_keeps_its_count() {
    let dir = tempfile::tempdir().unwrap();
    let called = "events: Ir\nfl=a.c\nfn=f\n1 1\ncfn=g\ncalls=3 2\n1 5\nfn=g\n2 5\n";
    write(dir.path(), "called.out", called);
    write(dir.path(), "inlined.out", "events: Ir\nfl=a.c\nfn=f\n1 1\n");
    success(linegrind(
        dir.path(),
        &["diff", "called.out", "inlined.out", "--out", "d.out"],
    ));
    let text = fs::read_to_string(dir.path().join("d.out")).unwrap();
    assert!(text.contains("calls=3 0\n0 -5\n"), "{text}");
    // After a count of 0, callgrind_annotate would take the call's cost
    // for f's own.
    let Ok(annotated) = Command::new("callgrind_annotate")
        .args(["--inclusive=no", "--auto=no", "d.out"])
        .current_dir(dir.path())
        .output()
    else {
        crate::support::skip!("callgrind_annotate is not installed (install valgrind)");
        return;
    };
    let rows = String::from_utf8(annotated.stdout).unwrap();
    let own = |function: &str| {
        rows.lines()
            .find(|line| line.ends_with(&format!("a.c:{function}")))
            .and_then(|line| line.split_whitespace().next())
            .map(str::to_string)
    };
    assert_eq!(own("f").as_deref(), Some("0"), "{rows}");
    assert_eq!(own("g").as_deref(), Some("-5"), "{rows}");
}

/// Simulates traces/call_chain.lgt in `dir` with its summary in `a.json`;
/// the summary's text.
fn call_chain_summary(dir: &Path) -> String {
    let trace = root().join("traces/call_chain.lgt");
    success(linegrind(
        dir,
        &[
            "sim",
            "-q",
            trace.to_str().unwrap(),
            "-o",
            "a.out",
            "--json",
            "a.json",
        ],
    ));
    fs::read_to_string(dir.join("a.json")).unwrap()
}

#[test]
fn a_summary_that_json_tools_would_read_otherwise_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let summary = call_chain_summary(dir.path());
    let check = |name: &str, text: String, place: &str| {
        write(dir.path(), name, &text);
        expect_input_error(
            dir.path(),
            &["check", "--baseline", name, "a.json", "--limit", "Ir=+1%"],
            place,
        );
    };
    // jq and Python keep the last of two keys; a reader keeping the first
    // would pass a check they fail.
    check(
        "twice.json",
        summary.replacen("\"totals\": {", "\"totals\": {\"Ir\": 1, ", 1),
        "event `Ir` given twice",
    );
    check(
        "unlisted.json",
        summary.replacen("\"inclusive\": {", "\"inclusive\": {\"Bogus\": 5, ", 1),
        "has `Bogus` in `inclusive`, which `events` does not list",
    );
    // A function given twice would have its costs added up unseen.
    let mut value: serde_json::Value = serde_json::from_str(&summary).unwrap();
    let functions = value["functions"].as_array_mut().unwrap();
    functions.push(functions[0].clone());
    let name = functions[0]["name"].as_str().unwrap().to_string();
    check(
        "function_twice.json",
        serde_json::to_string(&value).unwrap(),
        &format!("function `{name}` of file "),
    );
    // Totals that are no object of events.
    let mut value: serde_json::Value = serde_json::from_str(&summary).unwrap();
    value["totals"] = 5.into();
    check(
        "totals_number.json",
        serde_json::to_string(&value).unwrap(),
        "invalid type: integer `5`, expected an object of event names to values",
    );
    // A call between functions the summary does not list.
    let mut value: serde_json::Value = serde_json::from_str(&summary).unwrap();
    value["calls"][0]["callee"] = 99.into();
    check(
        "call_outside.json",
        serde_json::to_string(&value).unwrap(),
        "call 0 is between functions",
    );
    // A long name is cut, with its control characters escaped, in what
    // the summary's checks and serde's say.
    let long = format!("\u{1b}[2J{}", "x".repeat(5000));
    let mut value: serde_json::Value = serde_json::from_str(&summary).unwrap();
    let functions = value["functions"].as_array_mut().unwrap();
    functions[0]["name"] = long.clone().into();
    functions.push(functions[0].clone());
    check(
        "long_twice.json",
        serde_json::to_string(&value).unwrap(),
        "xxxx…` of file ",
    );
    // A name that reads like serde's own tail is cut all the same.
    let named = format!("a, expected {}", "x".repeat(5000));
    let totals = format!("\"totals\": {{\"{named}\": 1, \"{named}\": 2, ");
    write(
        dir.path(),
        "long_event.json",
        &summary.replacen("\"totals\": {", &totals, 1),
    );
    let args = [
        "check",
        "--baseline",
        "long_event.json",
        "a.json",
        "--limit",
        "Ir=+1%",
    ];
    let stderr = String::from_utf8(linegrind(dir.path(), &args).stderr).unwrap();
    assert!(
        stderr.contains("given twice") && stderr.len() < 400,
        "{stderr}"
    );
    let mut value: serde_json::Value = serde_json::from_str(&summary).unwrap();
    value["version"] = long.into();
    write(
        dir.path(),
        "long.json",
        &serde_json::to_string(&value).unwrap(),
    );
    let args = [
        "check",
        "--baseline",
        "long.json",
        "a.json",
        "--limit",
        "Ir=+1%",
    ];
    let output = linegrind(dir.path(), &args);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("invalid type: string \"\\u{1b}[2Jxx"),
        "{stderr}"
    );
    assert!(
        stderr.len() < 400 && stderr.contains("…, expected u32 at line 1 column "),
        "{stderr}"
    );
}

/// A summary an editor saved with a UTF-8 byte-order mark is still JSON:
/// `check` compares it as it was, where it once took it for a callgrind file.
#[test]
fn a_summary_saved_with_a_byte_order_mark_is_read_as_json() {
    let dir = tempfile::tempdir().unwrap();
    let summary = call_chain_summary(dir.path());
    write(dir.path(), "bom.json", &format!("\u{feff}{summary}"));
    let out = success(linegrind(
        dir.path(),
        &[
            "check",
            "--baseline",
            "bom.json",
            "a.json",
            "--limit",
            "Ir=+0%",
        ],
    ));
    assert!(out.contains("Ir") && out.contains("ok"), "{out}");
}

/// The five numbers of `diff`'s row of a function, told by its name and
/// what follows it (`fib`, `(below main) ??? [app]`), blanks between words
/// taken as one.
fn row(compared: &str, function: &str) -> Vec<String> {
    let line = compared
        .lines()
        .find(|line| {
            let named = line
                .split_whitespace()
                .skip(5)
                .collect::<Vec<_>>()
                .join(" ");
            named == function || named.starts_with(&format!("{function} "))
        })
        .unwrap_or_else(|| panic!("no row of {function}"));
    line.split_whitespace()
        .take(5)
        .map(str::to_string)
        .collect()
}

/// A run whose executable and C library each have a `(below main)` in
/// file `???` (no debug information), one under the other; `main` costs
/// `main` Ir.
fn below_main_twice(main: u64) -> String {
    let start = 10 + main;
    format!(
        "events: Ir
ob=/usr/bin/app
fl=???
fn=(below main)
0 5
cob=/lib/libc.so.6
cfi=???
cfn=__libc_start_main
calls=1 0
0 {}
ob=/lib/libc.so.6
fn=__libc_start_main
0 5
cfn=(below main)
calls=1 0
0 {start}
fn=(below main)
0 10
cob=/usr/bin/app
cfi=a.c
cfn=main
calls=1 0
0 {main}
ob=/usr/bin/app
fl=a.c
fn=main
0 {main}
totals: {}
",
        start + 5,
        20 + main
    )
}

/// Functions of one file and name in two objects line up each with its
/// own: merged, the outer one's inclusive cost would hold the inner one's
/// twice.
#[test]
fn functions_of_one_name_in_two_objects_line_up_by_object() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.out", &below_main_twice(100));
    write(dir.path(), "b.out", &below_main_twice(110));
    let compared = success(linegrind(dir.path(), &["diff", "a.out", "b.out"]));
    let app = row(&compared, "(below main) ??? [app]");
    assert_eq!(app, ["120", "130", "+10", "+8.33%", "0"], "{compared}");
    let libc = row(&compared, "(below main) ??? [libc.so.6]");
    assert_eq!(libc, ["110", "120", "+10", "+9.09%", "0"], "{compared}");
    let checked = linegrind(
        dir.path(),
        &[
            "check",
            "--baseline",
            "a.out",
            "b.out",
            "--limit",
            "Ir=+10",
            "--function",
            "(below main)",
        ],
    );
    let text = String::from_utf8_lossy(&checked.stdout);
    assert_eq!(checked.status.code(), Some(0), "{text}");
    assert!(text.contains("???:(below main) [libc.so.6]"), "{text}");
}

/// A run in which `fib` calls `fib'2`, Callgrind's name for its second
/// level of recursion with `--separate-recs=2`.
const RECURSION: &str = "events: Ir
fl=a.c
fn=main
0 5
cfn=fib
calls=1 0
0 30
fn=fib
0 10
cfn=fib'2
calls=1 0
0 20
fn=fib'2
0 20
totals: 35
";

/// Functions that a rewrite makes one count their calls to one another
/// once, from callgrind files and from JSON summaries alike.
#[test]
fn functions_renamed_alike_count_their_calls_to_one_another_once() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.out", RECURSION);
    let deeper = RECURSION
        .replace("0 20\n", "0 25\n")
        .replace("0 30\n", "0 35\n")
        .replace("totals: 35", "totals: 40");
    write(dir.path(), "b.out", &deeper);
    let compared = success(linegrind(
        dir.path(),
        &["diff", "a.out", "b.out", "--mod-funcname", "s/'[0-9]+$//"],
    ));
    assert_eq!(
        row(&compared, "fib"),
        ["30", "35", "+5", "+16.67%", "+5"],
        "{compared}"
    );

    // The same from summaries: `fib` calls `fib_2`, which is renamed.
    let trace = |name: &str, work: u32| {
        let text = format!(
            "linegrind-trace text 1\n\
             fn 1000 1100 main a.c 1\nfn 2000 2100 fib a.c 5\nfn 3000 3100 fib_2 a.c 5\n\
             i 1000 5\ncall 2000\ni 2000 2\ncall 3000\n{}ret\ni 2002 1\nret\ni 1005 1\n",
            "i 3000 1\n".repeat(work as usize)
        );
        write(dir.path(), name, &text);
    };
    trace("a.txt", 3);
    trace("b.txt", 5);
    for run in ["a", "b"] {
        let args = [
            "sim",
            "-q",
            &format!("{run}.txt"),
            "-o",
            &format!("{run}.cg"),
        ];
        success(linegrind(
            dir.path(),
            &[&args[..], &["--json", &format!("{run}.json")]].concat(),
        ));
    }
    let compared = success(linegrind(
        dir.path(),
        &["diff", "a.json", "b.json", "--mod-funcname", "s/_2$//"],
    ));
    assert_eq!(
        row(&compared, "fib"),
        ["5", "7", "+2", "+40.00%", "+2"],
        "{compared}"
    );
}
