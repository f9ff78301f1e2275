//! Sources that `report --auto=yes` annotates: lines at the end of the
//! number range, inlined files, Latin-1, and text that must be escaped or
//! read only in part.

use super::*;

/// Source lines at the top of the number range: annotating them shows the
/// cost, with no context past the last line (the arithmetic once
/// overflowed there, and lines before them the file does not have were
/// shown empty).
#[test]
fn a_source_line_at_the_end_of_the_number_range_is_annotated() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "src.c", "int main(void)\n{\n}\n");
    let profile = format!(
        "events: Ir\nfl=src.c\nfn=main\n2 3\n{} 5\n{} 7\n",
        u64::MAX - 1,
        u64::MAX
    );
    write(dir.path(), "p.out", &profile);
    let report = success(linegrind(
        dir.path(),
        &["report", "p.out", "--auto=yes", "--no-color"],
    ));
    assert!(
        report.contains("2 lines with costs lie beyond the end of the file"),
        "{report}"
    );
    let shown: Vec<&str> = report
        .lines()
        .skip_while(|line| !line.starts_with("-- source:"))
        .skip(2)
        .take_while(|line| !line.starts_with('('))
        .map(str::trim)
        .collect();
    let (high, top) = (u64::MAX - 1, u64::MAX);
    assert_eq!(
        shown,
        [
            "1  int main(void)".to_string(),
            "3      2  {".to_string(),
            "3  }".to_string(),
            format!("-- line {high} --"),
            format!("5  {high}"),
            format!("7  {top}"),
        ],
        "{report}"
    );
}

/// `--auto=yes` annotates the files of code inlined into the ranked
/// functions (`fi=`) too, as callgrind_annotate does, and a source that is
/// not UTF-8 (a Latin-1 comment) with its odd bytes replaced.
#[test]
fn inlined_files_and_latin_1_sources_are_annotated() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("hot.c"),
        b"int work(void)\n{ /* caf\xe9 */\n}\n",
    )
    .unwrap();
    write(
        dir.path(),
        "hdr.h",
        "static inline int mix(int x)\n{ return x * 3; }\n",
    );
    let profile = "events: Ir\nfl=hot.c\nfn=work\n2 5\nfi=hdr.h\n2 6\nfe=hot.c\n3 1\n";
    write(dir.path(), "p.out", profile);
    let report = success(linegrind(
        dir.path(),
        &["report", "p.out", "--auto=yes", "--no-color"],
    ));
    assert!(report.contains("-- source: hdr.h"), "{report}");
    assert!(report.contains("{ return x * 3; }"), "{report}");
    assert!(report.contains("{ /* caf\u{fffd} */"), "{report}");
    assert!(!report.contains("not found"), "{report}");
}

/// Annotated source reaches the terminal as names do: control and
/// invisible characters escaped (an escape sequence, a carriage return, a
/// right-to-left override), tabs expanded to their stops, and a line of
/// megabytes cut; a file is read no further than the lines shown, and at
/// most 64 MiB of it (a profile may name a disk image); a binary file is
/// not shown.
#[test]
fn annotated_source_is_escaped_and_read_only_as_far_as_needed() {
    let dir = tempfile::tempdir().unwrap();
    let mut source =
        b"int f(void)\n\x1b]0;title\x07\rX\n\xe2\x80\xaeabc\n\tint x;\t// y\n".to_vec();
    source.extend(vec![b'z'; 10_000]);
    source.push(b'\n');
    // Cut inside a character, which is left out whole.
    source.extend(vec![b'a'; 4_095]);
    source.extend("é".repeat(10).as_bytes());
    source.extend("\n\u{1}\tX\n日本\t|\n".as_bytes());
    fs::write(dir.path().join("odd.c"), &source).unwrap();
    // Sparse files of 4,000 lines of text, then NUL bytes, which past the
    // first 8,000 bytes do not make a file binary, and no line's end.
    let text_then_nul = |name: &str, len: u64| {
        fs::write(dir.path().join(name), b"x\n".repeat(4000)).unwrap();
        let file = fs::OpenOptions::new()
            .write(true)
            .open(dir.path().join(name));
        file.unwrap().set_len(len).unwrap();
    };
    text_then_nul("huge.c", 3 << 30);
    // Exactly as long as what is read: its end is no cut.
    text_then_nul("exact.c", 64 << 20);
    // A NUL byte as the 8,000th makes a file binary.
    let mut binary = b"x\n".repeat(3999);
    binary.extend(b"x\0");
    fs::write(dir.path().join("binary.c"), binary).unwrap();
    let profile = "events: Ir\nfl=odd.c\nfn=f\n4 7\n7 1\nfl=huge.c\nfn=g\n4002 2\n\
                   fl=exact.c\nfn=h\n4002 1\nfl=binary.c\nfn=b\n1 1\n";
    write(dir.path(), "p.out", profile);
    let report = success(linegrind(
        dir.path(),
        &["report", "p.out", "--auto=yes", "--no-color"],
    ));
    assert!(
        !report.contains(['\u{1b}', '\u{7}', '\r', '\u{202e}', '\t', '\u{fffd}']),
        "{report:?}"
    );
    assert!(report.contains("\\u{1b}]0;title\\u{7}\\rX"), "{report}");
    assert!(report.contains("\\u{202e}abc"), "{report}");
    assert!(report.contains("        int x;  // y"), "{report}");
    let long = format!("{}…", "z".repeat(4096));
    assert!(report.lines().any(|line| line.ends_with(&long)), "{report}");
    assert!(!report.contains(&"z".repeat(4097)), "{report}");
    let split = format!("{}…", "a".repeat(4095));
    assert!(
        report.lines().any(|line| line.ends_with(&split)),
        "{report}"
    );
    // Tab stops by the columns shown: an escape's five, two wide
    // characters' four.
    assert!(report.contains("  \\u{1}   X"), "{report}");
    assert!(report.contains("  日本    |"), "{report}");
    assert!(
        report.contains("1 line with costs lies past the first 64 MiB of the file"),
        "{report}"
    );
    assert!(
        report.contains("1 line with costs lies beyond the end of the file"),
        "{report}"
    );
    assert!(
        report.contains("  binary.c (a binary file, not source text)"),
        "{report}"
    );
}

/// Costs at no line (a profile of Callgrind's `--dump-line=no`, code
/// without line information) are shown as such at the head of their
/// file's table, as callgrind_annotate's unidentified lines, not left out.
#[test]
fn costs_at_no_line_are_annotated_as_such() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "src.c", "int main(void)\n{\n}\n");
    write(
        dir.path(),
        "p.out",
        "positions: instr\nevents: Ir\nfl=src.c\nfn=main\n0x10 3\n0x14 4\n",
    );
    write(
        dir.path(),
        "mixed.out",
        "events: Ir\nfl=src.c\nfn=main\n0 3\n2 4\n",
    );
    for (profile, expected) in [
        ("p.out", &["7      ?  (costs at no line of the file)"][..]),
        (
            "mixed.out",
            &[
                "3      ?  (costs at no line of the file)",
                "1  int main(void)",
                "4      2  {",
                "3  }",
            ],
        ),
    ] {
        let report = success(linegrind(
            dir.path(),
            &["report", profile, "--auto=yes", "--no-color"],
        ));
        let shown: Vec<&str> = report
            .lines()
            .skip_while(|line| !line.starts_with("-- source:"))
            .skip(2)
            .take_while(|line| !line.is_empty())
            .map(str::trim)
            .collect();
        assert_eq!(shown, expected, "{report}");
    }
}

/// Files are annotated in the order of their functions' ranks (a.c's `f`
/// first, by its inclusive cost), then the files of inlined code by their
/// lines' costs, not all by their lines' costs (b.c's 100 above a.c's 1).
#[test]
fn files_are_annotated_in_the_order_their_functions_rank() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.c", "int f;\n");
    write(dir.path(), "b.c", "int g;\n");
    write(dir.path(), "c.h", "int h;\nint i;\n");
    let profile = "events: Ir\nfl=a.c\nfn=f\n1 1\ncfl=b.c\ncfn=g\ncalls=1 1\n1 150\n\
                   fl=b.c\nfn=g\n1 100\nfi=c.h\n2 50\n";
    write(dir.path(), "p.out", profile);
    let report = success(linegrind(dir.path(), &["report", "p.out", "--auto=yes"]));
    let sources: Vec<&str> = (report.lines())
        .filter_map(|line| line.strip_prefix("-- source: "))
        .collect();
    assert_eq!(sources, ["a.c", "b.c", "c.h"], "{report}");
}

/// A line with costs past the file's end follows the context the file has
/// before it, down to its last line.
#[test]
fn a_line_past_the_end_follows_the_files_last_lines() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "d.c", "one\ntwo\nthree\n");
    write(dir.path(), "q.out", "events: Ir\nfl=d.c\nfn=f\n4 7\n");
    let report = success(linegrind(dir.path(), &["report", "q.out", "--auto=yes"]));
    let annotated = report.split_once("-- source: d.c\n").unwrap().1;
    let expected = "\
Ir  line  source
    -- line 2 --
        2  two
        3  three
 7      4
(1 line with costs lies beyond the end of the file: has it changed since the run?)
";
    assert_eq!(annotated, expected);
}
