use super::*;

fn read_all(text: &str) -> Result<Vec<Event>, TraceError> {
    let mut reader = TextReader::new(text.as_bytes());
    let mut events = Vec::new();
    while let Some(event) = reader.next_event()? {
        events.push(event);
    }
    Ok(events)
}

fn error(text: &str) -> String {
    read_all(text).unwrap_err().to_string()
}

#[test]
fn reads_every_directive() {
    let events = read_all(
        "# a comment before the header\n\
         linegrind-trace text 1\n\
         fn 401000 0x401040 main transpose.c 12  # trailing comment\n\
         fn 401040 4010a0 gather\n\
         \n\
         thread 2\n\
         i 401000 4\n\
         w 7FF000 8\n\
         r 0x600000 4\n\
         m 600008 2\n\
         call 401040\n\
         sp 7ffff000\n\
         ret\n\
         signal 10\n\
         sigreturn\n\
         thread-exit 2\n\
         mark begin paint\n\
         mark end paint\n\
         alloc 10000000 4096\n\
         free 10000000\n\
         flush\n\
         restart\n\
         object /usr/lib/libc.so.6 bias=7f0000000000 build-id=0aFF\n\
         object ./app start=1000 end=2000 symbols=embedded\n\
         line 401004 13\n\
         line 401008 7 vector.h\n\
         plt 401020 401040\n",
    )
    .unwrap();
    assert_eq!(
        events,
        [
            Event::Function(Box::new(FunctionSymbol {
                start: 0x401000,
                end: 0x401040,
                name: "main".into(),
                file: Some("transpose.c".into()),
                line: 12
            })),
            Event::Function(Box::new(FunctionSymbol {
                start: 0x401040,
                end: 0x4010a0,
                name: "gather".into(),
                file: None,
                line: 0
            })),
            Event::Thread { tid: 2 },
            Event::Instr {
                addr: 0x401000,
                len: 4
            },
            Event::Data {
                access: Access::Write,
                addr: 0x7ff000,
                size: 8
            },
            Event::Data {
                access: Access::Read,
                addr: 0x600000,
                size: 4
            },
            Event::Data {
                access: Access::Modify,
                addr: 0x600008,
                size: 2
            },
            Event::Call { target: 0x401040 },
            Event::StackPointer { sp: 0x7ffff000 },
            Event::Return,
            Event::Signal { signo: 10 },
            Event::SigReturn,
            Event::ThreadExit { tid: 2 },
            Event::Mark {
                edge: MarkEdge::Begin,
                name: "paint".into()
            },
            Event::Mark {
                edge: MarkEdge::End,
                name: "paint".into()
            },
            Event::Alloc {
                addr: 0x10000000,
                size: 4096
            },
            Event::Free { addr: 0x10000000 },
            Event::Flush,
            Event::Restart,
            Event::Module(Box::new(ModuleMapping {
                path: "/usr/lib/libc.so.6".into(),
                bias: 0x7f0000000000,
                range: None,
                build_id: Some(vec![0x0a, 0xff]),
                embedded: false,
            })),
            Event::Module(Box::new(ModuleMapping {
                path: "./app".into(),
                bias: 0,
                range: Some((0x1000, 0x2000)),
                build_id: None,
                embedded: true,
            })),
            Event::Line(Box::new(LineSymbol {
                addr: 0x401004,
                line: 13,
                file: None
            })),
            Event::Line(Box::new(LineSymbol {
                addr: 0x401008,
                line: 7,
                file: Some("vector.h".into())
            })),
            Event::Plt {
                start: 0x401020,
                end: 0x401040
            },
        ]
    );
}

#[test]
fn names_may_escape_blanks_hashes_and_percents() {
    let events =
        read_all("linegrind-trace text 1\nfn 10 20 f(int,%20char)%23x%25 a%20b.c 3\n").unwrap();
    let Event::Function(function) = &events[0] else {
        panic!("not a function: {events:?}");
    };
    assert_eq!(function.name, "f(int, char)#x%");
    assert_eq!(function.file.as_deref(), Some("a b.c"));
    // A `%` that escapes nothing is itself.
    let events =
        read_all("linegrind-trace text 1\nfn 10 20 operator%\nfn 20 30 f%2\nfn 30 40 g%zz%41\n")
            .unwrap();
    let names: Vec<&str> = events
        .iter()
        .filter_map(|event| match event {
            Event::Function(symbol) => Some(symbol.name.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(names, ["operator%", "f%2", "g%zzA"]);
}

#[test]
fn object_options_are_checked() {
    let head = "linegrind-trace text 1\n";
    assert!(error(&format!("{head}object app bias\n")).contains("expected KEY=VALUE"));
    assert!(error(&format!("{head}object app bias=zz\n")).contains("bad bias `zz`"));
    assert!(error(&format!("{head}object app start=10\n")).contains("needs both start and end"));
    for id in ["abc", "zz", "0x1234", ""] {
        let error = error(&format!("{head}object app build-id={id}\n"));
        assert!(
            error.contains(&format!("bad build-id `{id}`"))
                && error.ends_with("expected hex digits, two per byte, without `0x`"),
            "{error}"
        );
    }
    assert!(error(&format!("{head}object app size=1\n")).contains("unknown option `size`"));
    assert!(error(&format!("{head}object app symbols=dwarf\n")).contains("bad symbols `dwarf`"));
    assert!(error(&format!("{head}object\n")).contains("missing PATH"));
}

#[test]
fn a_missing_or_wrong_header_is_an_error_on_its_line() {
    assert_eq!(
        error(""),
        "line 1: the trace is empty: expected the header `linegrind-trace text 1`"
    );
    assert_eq!(
        error("\n# a comment\n"),
        "line 2: the trace has only blank lines and comments: expected the header \
         `linegrind-trace text 1`"
    );
    assert_eq!(
        error("# only a comment\n\ni 1000 4\n"),
        "line 3: expected the header `linegrind-trace text 1` as the first line, found \
         `i 1000 4` (linegrind reads text, binary, Lackey and Dinero traces: --format chooses)"
    );
    // The line as it is, its blanks kept, its comment left out.
    assert!(
        error(" I  0400,3\t # an instruction\n").contains("as the first line, found `I  0400,3` (")
    );
    assert_eq!(
        error("linegrind-trace text 2\n"),
        "line 1: unsupported text trace version 2; this linegrind reads version 1"
    );
}

#[test]
fn lines_that_end_in_a_carriage_return_alone_are_named_as_the_cause() {
    let expected = format!("line 1: {CR_LINES}");
    assert_eq!(error("linegrind-trace text 1\ri 1000 4\r"), expected);
    assert_eq!(error("# a comment\rlinegrind-trace text 1\r"), expected);
    // A form feed is no blank: the error shows it.
    assert!(error("\u{c}\nlinegrind-trace text 1\n").contains("found `\\u{c}`"));
    // Nor is the header's `\r` a blank between its words.
    assert_eq!(error("linegrind-trace text\r1\ni 1000 4\n"), expected);
    // After the header, a comment would hide the lines after it, and
    // a record would run on into the next.
    assert_eq!(
        error("linegrind-trace text 1\n# a comment\ri 1000 4\r\n"),
        format!("line 2: {CR_LINES}")
    );
    for line in ["i 1000 4\ri 1004 4\n", "fn 1000 1010 main\rmain.c\n"] {
        assert_eq!(
            error(&format!("linegrind-trace text 1\n{line}")),
            format!("line 2: {CR_LINES}")
        );
    }
    // Lines that end in `\r\n`, or in more carriage returns, are lines.
    for text in [
        &b"linegrind-trace text 1\r\ni 1000 4\r\n"[..],
        b"linegrind-trace text 1\r\r\ni 1000 4\r\n",
    ] {
        let event = TextReader::new(text).next_event();
        assert!(matches!(event, Ok(Some(Event::Instr { .. }))), "{event:?}");
    }
    // What is not text with such lines is told what it is not.
    assert!(error("junk\u{2}\r\u{1}x\n").contains("--format chooses"));
    assert!(error("\u{7f}ELF\u{2}\r\u{1}x\n").contains("an ELF file, not a trace"));
}

#[test]
fn a_byte_order_mark_before_the_first_line_is_passed_over() {
    let plain = read_all("linegrind-trace text 1\ni 1000 4\n").unwrap();
    for text in [
        "\u{feff}linegrind-trace text 1\ni 1000 4\n",
        "\u{feff}# saved by an editor\nlinegrind-trace text 1\ni 1000 4\n",
    ] {
        assert_eq!(read_all(text).unwrap(), plain);
    }
    // Anywhere else it is an unknown word.
    assert!(error("linegrind-trace text 1\n\u{feff}i 1000 4\n").starts_with("line 2:"));
}

#[test]
fn an_unknown_directive_names_the_line_and_the_choices() {
    assert_eq!(
        error("linegrind-trace text 1\ni 1000 4\nload 1000 4\n"),
        format!("line 3: unknown directive `load`; expected one of {DIRECTIVES}")
    );
}

#[test]
fn bad_numbers_say_what_was_expected() {
    let head = "linegrind-trace text 1\n";
    assert_eq!(
        error(&format!("{head}i 40g000 4\n")),
        "line 2: bad ADDR `40g000` in `i ADDR LEN`: expected a hex number of at most 64 bits"
    );
    assert_eq!(
        error(&format!("{head}i 401000 0x4\n")),
        "line 2: bad LEN `0x4` in `i ADDR LEN`: expected a decimal number in range"
    );
    assert_eq!(
        error(&format!("{head}r 1 99999999999\n")),
        "line 2: bad SIZE `99999999999` in `r|w|m ADDR SIZE`: expected a decimal number in range"
    );
    assert!(error(&format!("{head}i 11112222333344445 1\n")).contains("at most 64 bits"));
    // Leading zeros add no bits.
    let events = read_all(&format!("{head}i 0x00000000000401000 4\n")).unwrap();
    assert_eq!(
        events[0],
        Event::Instr {
            addr: 0x401000,
            len: 4
        }
    );
    assert!(error(&format!("{head}call 0x\n")).contains("bad TARGET `0x`"));
    assert_eq!(
        error(&format!("{head}w 1000\n")),
        "line 2: missing SIZE in `r|w|m ADDR SIZE`"
    );
    assert_eq!(
        error(&format!("{head}ret now\n")),
        "line 2: unexpected `now` at the end of `ret`"
    );
    assert!(error(&format!("{head}mark start x\n")).contains("expected `begin` or `end`"));
    assert!(
        error(&format!("{head}fn 20 10 f\n"))
            .contains("empty function range 20..10: its end must be above its start")
    );
    assert!(error(&format!("{head}fn 10 20 f f.c twelve\n")).contains("bad LINE `twelve`"));
}

#[test]
fn size_zero_and_wrapping_ranges_are_errors() {
    let head = "linegrind-trace text 1\n";
    assert_eq!(
        error(&format!("{head}i 1000 4\nr 2000 0\n")),
        "line 3: SIZE is 0 in `r|w|m ADDR SIZE`: an access covers at least one byte"
    );
    assert!(error(&format!("{head}i 1000 0\n")).contains("LEN is 0"));
    assert!(
        error(&format!("{head}i 1000 1\nw ffffffffffffffff 2\n"))
            .contains("run past the end of the address space")
    );
}

/// A control character in a token is shown, not printed as it is.
#[test]
fn errors_show_control_characters_escaped() {
    let head = "linegrind-trace text 1\n";
    assert_eq!(
        error(&format!("{head}i 1000\0 4\n")),
        "line 2: bad ADDR `1000\\u{0}` in `i ADDR LEN`: expected a hex number of at most 64 bits"
    );
    assert!(error(&format!("{head}i\x1b[31m 10 1\n")).contains("`i\\u{1b}[31m`"));
}

/// An escaped line break would end the name early in a callgrind file.
#[test]
fn a_name_with_a_line_break_is_an_error() {
    let head = "linegrind-trace text 1\n";
    assert_eq!(
        error(&format!("{head}fn 10 20 f%0A0x0%200%209\n")),
        "line 2: function name `f\\n0x0 0 9` holds a line break"
    );
    assert!(error(&format!("{head}mark begin a%0Db\n")).contains("mark name"));
}

#[test]
fn location_is_the_line_of_the_last_event() {
    let mut reader = TextReader::new("linegrind-trace text 1\n\n# x\ni 10 1\n".as_bytes());
    reader.next_event().unwrap();
    assert_eq!(reader.location(), Location::Line(4));
    assert_eq!(reader.next_event().unwrap(), None);
}
