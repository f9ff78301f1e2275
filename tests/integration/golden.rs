//! Golden files: every trace in `traces/` simulated with the default
//! configuration must give exactly the stored callgrind file. After an
//! intended change, re-bless with `LINEGRIND_BLESS=1 cargo test golden`,
//! then review the diff; never edit the files by hand.

use std::fs;

use linegrind::config::SimConfig;
use linegrind::output::{Positions, Source, write_callgrind};
use linegrind::simulator::simulate;
use linegrind::trace::AnyReader;

use crate::support::{example_traces, golden_bytes, linegrind, root};

/// The callgrind file for `trace` (a path relative to the repository root),
/// as `sim` writes it.
fn render(trace: &str) -> Vec<u8> {
    let file = fs::File::open(root().join(trace)).unwrap();
    let mut reader = AnyReader::new(file, false).unwrap();
    let profile = simulate(&mut reader, SimConfig::default()).unwrap();
    let source = Source {
        trace,
        command: reader.command(),
    };
    let mut out = Vec::new();
    write_callgrind(&mut out, &profile, &source, Positions::default()).unwrap();
    out
}

#[test]
fn example_traces_match_their_golden_callgrind_files() {
    for path in example_traces() {
        let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
        let trace = format!("traces/{stem}.lgt");
        let golden = root().join(format!("tests/golden/{stem}.callgrind"));
        let actual = render(&trace);
        let Some(expected) = golden_bytes(&golden, &actual) else {
            continue;
        };
        assert!(
            actual == expected,
            "{trace} no longer gives {}; if the change is intended, re-bless with \
             LINEGRIND_BLESS=1 and review the diff",
            golden.display()
        );
    }
}

/// The `sim` command, whose pipeline (batches, known blocks, loops replayed
/// from plans) the library's plain `simulate` above does not take, writes
/// the golden files too, byte for byte.
#[test]
fn the_sim_command_writes_the_golden_files() {
    let dir = tempfile::tempdir().unwrap();
    for path in example_traces() {
        let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
        let out = dir.path().join(format!("{stem}.out"));
        let trace = format!("traces/{stem}.lgt");
        let output = linegrind(&root(), &["sim", &trace, "-q", "-o", out.to_str().unwrap()]);
        assert!(output.status.success(), "{output:?}");
        let golden = root().join(format!("tests/golden/{stem}.callgrind"));
        assert!(
            fs::read(&out).unwrap() == fs::read(&golden).unwrap(),
            "`linegrind sim {trace}` no longer writes {}",
            golden.display()
        );
    }
}

/// The summary `sim` prints, but for the line naming the file it wrote
/// (`tests/golden/summary/`): counts, miss rates, cache use per level with
/// its lines and its mean cost per line, the top functions by self Ir and
/// by D1 misses (those with none left out). Once with 128-byte lines, so
/// that each level counts its lines by its own line size.
#[test]
fn the_sim_summary_matches_its_golden_files() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let lines_128 = ["--I1=32768,8,128", "--D1=32768,8,128", "--LL=1M,16,128"];
    for (name, options) in [
        ("call_chain.txt", &[][..]),
        ("call_chain_128.txt", &lines_128),
    ] {
        let mut args = vec!["sim", "traces/call_chain.lgt", "-o", out.to_str().unwrap()];
        args.extend(options);
        let output = linegrind(&root(), &args);
        assert!(output.status.success(), "{output:?}");
        let summary: String = String::from_utf8(output.stdout)
            .unwrap()
            .lines()
            .filter(|line| !line.starts_with("wrote "))
            .map(|line| format!("{line}\n"))
            .collect();
        let golden = root().join("tests/golden/summary").join(name);
        let Some(expected) = golden_bytes(&golden, summary.as_bytes()) else {
            continue;
        };
        let expected = String::from_utf8(expected).unwrap();
        assert_eq!(summary, expected, "{args:?} against {}", golden.display());
    }
}

/// The binary, whose decoding and simulating threads hand batches over as
/// the host schedules them, writes the same bytes every run: the profile
/// JSON summary and Firefox profile of one hierarchy, and the profile and
/// summary of each of a sweep's, whose walks run on threads of their own.
#[test]
fn output_is_byte_identical_across_runs() {
    let runs = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
    for path in example_traces() {
        let trace = path.to_str().unwrap();
        let name = path.file_stem().unwrap().to_string_lossy();
        for dir in &runs {
            let firefox = format!("{name}.firefox.json");
            for (suffix, extra) in [
                ("one", &["--profile", &firefox][..]),
                ("sweep", &["--sweep", "LL=1M..8M"][..]),
            ] {
                let (out, json) = (
                    format!("{name}.{suffix}.out"),
                    format!("{name}.{suffix}.json"),
                );
                let args = [
                    &["sim", trace, "-q", "-o", &out, "--json", &json][..],
                    extra,
                ]
                .concat();
                let output = linegrind(dir.path(), &args);
                assert!(output.status.success(), "{output:?}");
            }
        }
    }
    let files = |dir: &tempfile::TempDir| {
        let mut files: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .collect();
        files.sort();
        files
    };
    let (first, second) = (files(&runs[0]), files(&runs[1]));
    // Each trace: one profile, summary and Firefox profile, and four
    // profiles and summaries for the sweep.
    assert_eq!(first.len(), example_traces().len() * 11);
    assert_eq!(second.len(), first.len());
    for (a, b) in first.iter().zip(&second) {
        assert_eq!(a.file_name(), b.file_name());
        assert!(
            fs::read(a).unwrap() == fs::read(b).unwrap(),
            "{} differs",
            a.display()
        );
    }
}

/// The README from just after its first `marker` on.
fn readme_after(marker: &str) -> String {
    let readme = fs::read_to_string(root().join("README.md")).unwrap();
    let (_, after) = readme
        .split_once(marker)
        .unwrap_or_else(|| panic!("no `{marker}` in the README"));
    after.to_string()
}

/// `sim traces/hydro.lgt` run in a new folder, which holds its profile,
/// and what it printed.
fn sim_hydro() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let trace = root().join("traces/hydro.lgt");
    let output = linegrind(dir.path(), &["sim", trace.to_str().unwrap()]);
    assert!(output.status.success());
    (dir, String::from_utf8(output.stdout).unwrap())
}

/// The README's worked example prints what `sim` prints today: its
/// summary lines of `traces/hydro.lgt` appear verbatim in `sim`'s output.
#[test]
fn the_readme_hydro_example_matches_sim() {
    let example = readme_after("$ cargo run --release -- sim traces/hydro.lgt\n");
    let quoted: Vec<&str> = example
        .lines()
        .take_while(|line| !line.starts_with('$'))
        .filter(|line| line.trim_start().starts_with(['L', 'U', 'S']))
        .collect();
    assert_eq!(quoted.len(), 3, "{quoted:?}");
    let (_dir, printed) = sim_hydro();
    for line in quoted {
        assert!(
            printed.lines().any(|l| l == line),
            "README: {line}\nsim:\n{printed}"
        );
    }
}

/// The README's worked example's `callgrind_annotate` table is what
/// `callgrind_annotate`, run with the README's options, prints of the
/// profile `sim` writes today: every quoted row appears, an object
/// shortened to `[.../name]` matching the full path that ends so.
#[test]
fn the_readme_hydro_annotation_matches_callgrind_annotate() {
    let example = readme_after("$ callgrind_annotate ");
    let (command, table) = example.split_once("callgrind.out.hydro\n").unwrap();
    let options: Vec<&str> = command.split_whitespace().filter(|&w| w != "\\").collect();
    let quoted: Vec<&str> = table
        .lines()
        .take_while(|line| !line.starts_with("```"))
        .filter(|line| line.trim_start().starts_with(|c: char| c.is_ascii_digit()))
        .collect();
    assert_eq!(quoted.len(), 6, "{quoted:?}");

    let (dir, _) = sim_hydro();
    let annotated = match std::process::Command::new("callgrind_annotate")
        .args(&options)
        .arg("callgrind.out.hydro")
        .current_dir(dir.path())
        .output()
    {
        Ok(output) => output,
        Err(_) => {
            return crate::support::skip!("callgrind_annotate is not installed (install valgrind)");
        }
    };
    assert!(annotated.status.success());
    let printed = String::from_utf8(annotated.stdout).unwrap();
    for line in quoted {
        let found = match line.split_once("[.../") {
            Some((start, end)) => printed
                .lines()
                .any(|l| l.starts_with(start) && l.ends_with(&format!("/{end}"))),
            None => printed.lines().any(|l| l == line),
        };
        assert!(found, "README: {line}\ncallgrind_annotate:\n{printed}");
    }
}
