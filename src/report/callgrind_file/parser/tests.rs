use super::*;
use crate::report::Setup;
use crate::trace::lines::MAX_LINE;

pub(in crate::report::callgrind_file) const EXAMPLE: &str = "# callgrind format
version: 1
creator: test
cmd: ./app
positions: instr line
events: Ir Dr

ob=(1) /bin/app
fl=(1) app.c
fn=(1) main
0x10 3 5 1
+4 * 2
cfi=(2) lib.c
cfn=(2) work
calls=3 0x40 10
* +1 30 9
fi=(3) inline.h
+2 7 1

fl=(2)
fn=(2)
0x40 10 30 9
cob=(2) /lib/libc.so
cfn=(3) memcpy
calls=1 0x900 0
+2 * 4

fl=(2)
fn=(2)
0x44 11 1
totals: 39 10
";

/// The error of `text` read with signed costs.
pub(in crate::report::callgrind_file) fn signed_error(text: &str) -> String {
    ProfileFile::<i64>::parse(text.as_bytes())
        .unwrap_err()
        .to_string()
}

/// A call without `cfi=` is to a function of the file the cost lines
/// are in: after `fi=`, the inlined file's, not the function's.
#[test]
fn a_call_without_its_file_is_to_the_current_file() {
    let text = "events: Ir
fl=(1) a.c
fn=(1) main
1 1
fi=(2) h.h
cfn=(2) helper
calls=1 0
5 3
fl=(2)
fn=(2)
0 3
";
    let file = ProfileFile::<u64>::parse(text.as_bytes()).unwrap();
    let names: Vec<(&str, &str)> = file
        .functions
        .iter()
        .map(|f| (f.key.name.as_str(), f.key.file.as_str()))
        .collect();
    assert_eq!(names, [("main", "a.c"), ("helper", "h.h")]);
    assert_eq!((file.calls[0].caller, file.calls[0].callee), (0, 1));
}

/// The caches are read from `desc:` lines; a simulated run is taken
/// as back-dated when linegrind gave its tree's statistics.
#[test]
fn desc_lines_tell_the_caches_and_back_dating() {
    let setup = |descs: &str| {
        let text = format!("{descs}events: Ir\nfn=main\n1 1\n");
        ProfileFile::<u64>::parse(text.as_bytes()).unwrap().setup
    };
    let ll = "desc: LL cache: 8388608 B, 64 B, 16-way associative\n";
    let plain = setup(ll);
    assert_eq!(
        plain.caches[2].as_deref(),
        Some("8388608 B, 64 B, 16-way associative")
    );
    assert_eq!(
        (&plain.caches[..2], plain.backdate),
        (&[None, None][..], Some(false))
    );
    let tree = "desc: Back-dating tree max nodes: 3\n";
    assert_eq!(setup(&format!("{ll}{tree}")).backdate, Some(true));
    // No cache described: nothing known of back-dating either.
    assert_eq!(setup(tree), Setup::default());
    // Shown as names are, a terminal's escapes escaped.
    let odd = setup("desc: D1 cache: \u{1b}[31m\n");
    assert_eq!(odd.caches[1].as_deref(), Some("\\u{1b}[31m"));
}

/// A callee's object and file go with its name: a `cfn=` not followed
/// by `calls=` does not hand them to the next callee, and a callee
/// left without its call ends with its function.
#[test]
fn a_callee_named_without_its_call_keeps_its_object_and_file() {
    let text = "events: Ir
ob=(1) /bin/x
fl=(1) a.c
fn=(1) main
1 10
cob=(2) /lib/libc.so
cfi=(2) libc.c
cfn=(2) memcpy
cfn=(3) helper
calls=1 5
2 7
cob=(2)
cfn=(2)
fn=(3)
5 7
calls=1 5
";
    let err = signed_error(text);
    assert_eq!(err, "line 16: `calls=` without a `cfn=` before it");
    let file = ProfileFile::<u64>::parse(text.rsplit_once("calls").unwrap().0.as_bytes());
    let file = file.unwrap();
    let callee = &file.functions[file.calls[0].callee].key;
    assert_eq!(
        (
            callee.object.as_str(),
            callee.file.as_str(),
            callee.name.as_str()
        ),
        ("/bin/x", "a.c", "helper")
    );
}

#[test]
fn header_lines_must_fit_the_events_and_name_known_positions() {
    let err = signed_error(&EXAMPLE.replace("positions: instr line", "positions: instr foo"));
    assert_eq!(
        err,
        "line 5: unknown position `foo`: a profile's positions are `instr` and `line`"
    );
    let totals = EXAMPLE.lines().find(|l| l.starts_with("totals:")).unwrap();
    let err = signed_error(&EXAMPLE.replace(totals, &format!("{totals} 1")));
    assert!(
        err.ends_with(": 3 costs for 2 events in `totals:`"),
        "{err}"
    );
}

#[test]
fn a_file_cut_short_in_its_header_or_given_a_second_events_line_is_refused() {
    let cut = EXAMPLE.find("fl=").unwrap();
    for end in [EXAMPLE.find("events:").unwrap() + 10, cut] {
        let err = signed_error(&EXAMPLE[..end]);
        assert!(
            err.contains("ends without a cost line or a `totals:` line"),
            "{err}"
        );
    }
    let err = signed_error(&format!("{EXAMPLE}events: Bogus\n"));
    assert!(err.contains("a second `events:` line"), "{err}");
    let err = signed_error(&EXAMPLE.replace("events: Ir Dr", "events: "));
    assert_eq!(err, "line 6: an `events:` line that names no event");
}

/// Cachegrind writes its `summary:` last and no `totals:`: cut before it,
/// its file would pass for a run of what is left. A file of another
/// writer, which names no command, may state no totals.
#[test]
fn a_valgrind_tools_file_without_summary_or_totals_is_cut_short() {
    let cachegrind = "desc: I1 cache: 32768 B, 64 B, 8-way associative\n\
                      cmd: ./app\n\
                      events: Ir Dr\n\
                      fl=app.c\n\
                      fn=main\n\
                      3 5 1\n\
                      4 2 0\n\
                      summary: 7 1\n";
    let whole = ProfileFile::<i64>::parse(cachegrind.as_bytes()).unwrap();
    assert_eq!(whole.totals, [7, 1]);
    let cut = &cachegrind[..cachegrind.find("summary:").unwrap()];
    let err = signed_error(cut);
    assert!(
        err.starts_with("line 7: the file ends without a `summary:` or `totals:` line"),
        "{err}"
    );
    let other = cut.replace("cmd: ./app\n", "");
    let read = ProfileFile::<i64>::parse(other.as_bytes()).unwrap();
    assert_eq!(read.totals, [7, 1]);
}

/// Callgrind numbers the dumps of a run (`part:`); a file of several
/// (`--combine-dumps=yes`) is refused at its second.
#[test]
fn a_later_part_is_noted_and_a_file_of_several_parts_refused() {
    let part = |n: &str| EXAMPLE.replace("cmd: ./app\n", &format!("cmd: ./app\npart: {n}\n"));
    let later = ProfileFile::<i64>::parse(part("2").as_bytes()).unwrap();
    assert_eq!(later.setup.later_part(), Some(2));
    let first = ProfileFile::<i64>::parse(part("1").as_bytes()).unwrap();
    assert_eq!(first.setup.later_part(), None);
    let err = signed_error(&format!("{}part: 3\nevents: Ir\n", part("2")));
    assert!(
        err.starts_with("line 33: a second profile in the file (`part: 3`)"),
        "{err}"
    );
    assert_eq!(signed_error(&part("x")), "line 5: bad part number `x`");
}

#[test]
fn names_in_other_encodings_are_read_and_bad_lines_shown_escaped() {
    let latin1 = EXAMPLE.replace("fl=(1) app.c", "fl=(1) caf\u{e9}.c");
    let mut bytes = latin1.into_bytes();
    let at = bytes
        .windows(2)
        .position(|w| w == "\u{e9}".as_bytes())
        .unwrap();
    bytes.splice(at..at + 2, [0xe9]);
    let file = ProfileFile::<i64>::parse(&bytes[..]).unwrap();
    assert_eq!(file.functions[0].key.file, "caf\u{fffd}.c");
    let err = signed_error(&EXAMPLE.replace("+2 * 4", "+2 * 4\0\x1b[31m"));
    assert!(err.contains("bad cost `4\\u{0}\\u{1b}[31m`"), "{err}");
}

#[test]
fn names_the_other_linegrind_files_it_is_given() {
    let json = signed_error("{\n  \"events\": [\"Ir\"]\n}\n");
    assert!(json.contains("line 1: this is JSON"), "{json}");
    for text in [
        "linegrind-trace text 1\n",
        "# a trace\n\n  linegrind-trace text 1\n",
    ] {
        let text_trace = signed_error(text);
        assert!(
            text_trace.contains("this is a linegrind trace"),
            "{text_trace}"
        );
    }
    let gzip = ProfileFile::<i64>::parse(&b"\x1f\x8b\x08\0\0\0\0\0\0\x03"[..]).unwrap_err();
    assert!(
        gzip.to_string().contains("this is compressed with gzip"),
        "{gzip}"
    );
    let binary = ProfileFile::<i64>::parse(&b"LGTRACE\0\x01\0\0\0"[..]).unwrap_err();
    assert!(
        binary.to_string().contains("this is a linegrind trace"),
        "{binary}"
    );
    for (text, format) in [
        ("==12== Lackey\nI  0400,3\n", "a Valgrind Lackey trace"),
        ("2 400\n0 7ff0\n", "a Dinero din (LABEL ADDRESS) trace"),
        ("i 400 3\nr 7ff0 8\n", "a Dinero extended din"),
        (
            "\u{feff}2 400\n0 7ff0\n",
            "a Dinero din (LABEL ADDRESS) trace",
        ),
    ] {
        let imported = signed_error(text);
        assert!(
            imported.contains(&format!("this is {format}")),
            "{imported}"
        );
    }
    // Valgrind's messages alone, or a file that opens with dashes, are
    // no trace.
    for text in [
        "==1== Callgrind, a call-graph generating cache profiler\n",
        "\u{feff}==1== Memcheck\n",
    ] {
        let log = signed_error(text);
        assert!(log.contains("line 1: this is Valgrind's log"), "{log}");
    }
    for text in [
        "--------\nProfile data file 'callgrind.out.1'\n",
        "--- a/x.c\n+++ b/x.c\n",
    ] {
        let error = signed_error(text);
        assert!(!error.contains("trace"), "{error}");
    }
}

#[test]
fn costs_before_the_events_line_are_not_a_profile() {
    for (text, expected) in [
        ("hello\n", "line 1: `hello` before any `events:` line"),
        ("[1,2]\n", "line 1: `[1,2]` before any `events:` line"),
        (
            "fn=main\n1 2\nevents: Ir\n",
            "line 2: `1 2` before any `events:` line",
        ),
        (
            "totals: 100 7 9\nevents: Ir\n",
            "line 1: `totals:` before any `events:` line",
        ),
        (
            "summary: 10\nevents: Ir\n",
            "line 1: `summary:` before any `events:` line",
        ),
    ] {
        let err = signed_error(text);
        assert!(err.starts_with(expected), "{text:?}: {err}");
    }
}

#[test]
fn a_byte_order_mark_opens_no_line() {
    let plain = ProfileFile::<i64>::parse(EXAMPLE.as_bytes()).unwrap();
    let marked = format!("\u{feff}{EXAMPLE}");
    assert!(ProfileFile::<i64>::parse(marked.as_bytes()).unwrap() == plain);
}

#[test]
fn reads_functions_calls_lines_and_compressed_names() {
    let file = ProfileFile::<i64>::parse(EXAMPLE.as_bytes()).unwrap();
    assert_eq!(file.events, ["Ir", "Dr"]);
    assert_eq!(file.totals, [39, 10]);
    assert_eq!(file.cmd.as_deref(), Some("./app"));
    let names: Vec<&str> = file.functions.iter().map(|f| f.key.name.as_str()).collect();
    assert_eq!(names, ["main", "work", "memcpy"]);
    assert_eq!(file.functions[0].self_cost, [8, 1]);
    assert_eq!(file.functions[1].self_cost, [31, 9]);
    assert_eq!(file.functions[2].self_cost, [0, 0]);
    assert_eq!(file.functions[1].key.file, "lib.c");
    assert_eq!(file.functions[2].key.object, "/lib/libc.so");
    assert_eq!(file.calls.len(), 2);
    assert_eq!(
        (file.calls[0].count, file.calls[0].inclusive.clone()),
        (3, vec![30, 9])
    );
    assert_eq!(file.inclusive()[0], [38, 10]);
    // Line costs follow fi=: main's last line is inline.h:7. A file
    // named again (lib.c) goes on with its lines.
    let mut lines: Vec<(&str, u64, &[i64])> = (file.lines.iter())
        .flat_map(|file| {
            let name = file.file.as_str();
            file.lines
                .iter()
                .map(move |(&line, cost)| (name, line, &cost[..]))
        })
        .collect();
    lines.sort();
    let expected: [(&str, u64, &[i64]); 4] = [
        ("app.c", 3, &[7, 1]),
        ("inline.h", 7, &[1, 0]),
        ("lib.c", 10, &[30, 9]),
        ("lib.c", 11, &[1, 0]),
    ];
    assert_eq!(lines, expected);
    assert_eq!(file.lines.len(), 3);
}

#[test]
fn a_profile_read_without_lines_is_the_same_but_for_them() {
    let mut whole = ProfileFile::<i64>::parse(EXAMPLE.as_bytes()).unwrap();
    whole.lines.clear();
    let without = ProfileFile::<i64>::parse_without_lines(EXAMPLE.as_bytes()).unwrap();
    assert!(without == whole);
}

#[test]
fn errors_name_the_line() {
    let bad = "events: Ir\nfn=(1)\n";
    assert_eq!(
        signed_error(bad),
        "line 2: name id (1) used before it was given a name"
    );
    let bad = "events: Ir\nfn=main\n1 2 3\n";
    assert!(signed_error(bad).starts_with("line 3: 2 costs"));
    let bad = "events: Ir\n5 5\n";
    assert!(signed_error(bad).contains("before any `fn=`"));
    // `==` with no process id between is no Valgrind message.
    assert!(signed_error("====\n").starts_with("line 1: unknown specification"));
    // Hexadecimal that is no number, not a number out of range.
    let bad = "events: Ir\nfn=f\n0 0xZZ\n";
    assert_eq!(signed_error(bad), "line 3: bad cost `0xZZ` in `0 0xZZ`");
    let bad = "events: Ir\nfn=f\n0 0x\n";
    assert_eq!(signed_error(bad), "line 3: bad cost `0x` in `0 0x`");
}

#[test]
fn a_line_too_long_is_named_by_its_number() {
    let long = "x".repeat(MAX_LINE + 1);
    let expected = "a line longer than 16 MiB: not a callgrind-format profile";
    assert_eq!(signed_error(&long), format!("line 1: {expected}"));
    let second = format!("events: Ir\n{long}\n");
    assert_eq!(signed_error(&second), format!("line 2: {expected}"));
}

#[test]
fn an_event_listed_twice_is_an_error() {
    let bad = "version: 1\nevents: Ir Dr Ir\nfn=main\n1 10 5 2\n";
    assert_eq!(signed_error(bad), "line 2: event `Ir` is listed twice");
}

#[test]
fn only_digits_in_parentheses_make_a_name_id() {
    // `(below main)` written uncompressed, as other tools may.
    let text = "events: Ir\nfl=(1) a.c\nfn=(below main)\n0 3\ncfn=(2) (x\ncalls=1 0\n0 2\n\
                fn=(2)\n0 2\nfn=(3\n0 1\n";
    let file = ProfileFile::<i64>::parse(text.as_bytes()).unwrap();
    let names: Vec<&str> = file.functions.iter().map(|f| f.key.name.as_str()).collect();
    assert_eq!(names, ["(below main)", "(x", "(3"]);
    assert_eq!(file.inclusive()[0], [5]);
    let bad = "events: Ir\nfn=(99999999999999999999) main\n";
    assert_eq!(
        signed_error(bad),
        "line 2: name id (99999999999999999999) is too large"
    );
}

#[test]
fn names_given_in_jump_lines_are_known_later() {
    // As Callgrind writes with --collect-jumps=yes.
    let text = "events: Ir\nfl=(1) a.c\nfn=(1) main\njfi=(2) b.c\njfn=(2) helper\n\
                jump=3 0x20 4\n1 5\nfl=(2)\nfn=(2)\n2 7\n";
    let file = ProfileFile::<i64>::parse(text.as_bytes()).unwrap();
    let names: Vec<(&str, &str)> = file
        .functions
        .iter()
        .map(|f| (f.key.file.as_str(), f.key.name.as_str()))
        .collect();
    assert_eq!(names, [("a.c", "main"), ("b.c", "helper")]);
    assert_eq!(file.totals, [12]);
}

#[test]
fn negative_costs_are_read_where_costs_are_signed() {
    let diff = "events: Ir Dr\nfn=main\n0 -5 2\ncfn=work\ncalls=1 0\n0 -7 -1\n\
                fn=work\n0 -7 -1\ntotals: -12 1\n";
    let file = ProfileFile::<i64>::parse(diff.as_bytes()).unwrap();
    assert_eq!(file.totals, [-12, 1]);
    assert_eq!(file.functions[0].self_cost, [-5, 2]);
    assert_eq!(file.inclusive(), [vec![-12, 1], vec![-7, -1]]);
    assert_eq!(
        ProfileFile::<u64>::parse(diff.as_bytes())
            .unwrap_err()
            .to_string(),
        "line 3: cost `-5` out of range in `0 -5 2`"
    );
    let bad = "events: Ir\nfn=main\n0 -x\n";
    assert_eq!(signed_error(bad), "line 3: bad cost `-x` in `0 -x`");
}

/// A relative position that leaves 0 to 2^64 - 1 is no position: it does
/// not wrap around to another.
#[test]
fn a_relative_position_out_of_range_is_an_error() {
    let file = ProfileFile::<i64>::parse(&b"events: Ir\nfn=f\n3 1\n-3 1\n+7 1\n"[..]).unwrap();
    let mut lines: Vec<_> = file.lines[0].lines.keys().copied().collect();
    lines.sort();
    assert_eq!(lines, [0, 3, 7]);
    let bad = "events: Ir\nfn=f\n3 1\n-4 1\n";
    assert_eq!(signed_error(bad), "line 4: bad position `-4` in `-4 1`");
    let max = u64::MAX;
    let bad = format!("events: Ir\nfn=f\n{max} 1\n+1 1\n");
    assert_eq!(signed_error(&bad), "line 4: bad position `+1` in `+1 1`");
}

#[test]
fn sums_out_of_range_are_errors_naming_the_line() {
    let max = i64::MAX;
    // One function's self cost.
    assert_eq!(
        signed_error(&format!("events: Ir\nfn=f\n1 {max}\n2 1\n")),
        "line 4: the costs add up outside -2^63 to 2^63 - 1 at `2 1`"
    );
    // The total of two functions.
    assert!(
        signed_error(&format!("events: Ir\nfn=f\n1 {max}\nfn=g\n2 1\n"))
            .starts_with("line 5: the costs add up outside -2^63 to 2^63 - 1")
    );
    // A caller's inclusive cost: its self cost plus its calls'.
    assert!(
        signed_error(&format!(
            "events: Ir\nfn=f\n1 {max}\ncfn=g\ncalls=1 0\n2 1\nfn=g\n3 1\n"
        ))
        .starts_with("line 6: the costs add up outside -2^63 to 2^63 - 1")
    );
    // Call counts.
    let count = u64::MAX;
    assert!(
        signed_error(&format!(
            "events: Ir\nfn=f\ncfn=g\ncalls={count} 0\n2 0\ncfn=g\ncalls=1 0\n3 0\n"
        ))
        .starts_with("line 8: the call counts add up beyond 2^64 - 1")
    );
    // The least signed cost adds up too.
    let min = i64::MIN;
    assert!(
        signed_error(&format!("events: Ir\nfn=f\n1 {min}\n2 -1\n"))
            .starts_with("line 4: the costs add up outside -2^63 to 2^63 - 1")
    );
    // Unsigned: the same rule at 2^64.
    let unsigned = format!("events: Ir\nfn=f\n1 {count}\n2 1\n");
    assert!(
        ProfileFile::<u64>::parse(unsigned.as_bytes())
            .unwrap_err()
            .to_string()
            .starts_with("line 4: the costs add up outside 0 to 2^64 - 1")
    );
}
