//! Binary traces cut, corrupted, garbled or past the reader's limits:
//! each an error at its byte offset, never a panic or an abort.

use super::*;

#[test]
fn a_truncated_trace_is_an_error_unless_allowed() {
    let text = std::fs::read_to_string(&example_traces()[0]).unwrap();
    let original = events(&mut TextReader::new(text.as_bytes()));
    let binary = to_binary(&original, true, &[]);
    let cut = &binary[..binary.len() - 20];
    let Err(err) = BinaryReader::new(Cursor::new(cut), false) else {
        panic!("a cut trace opened");
    };
    assert!(err.to_string().contains("no end record"), "{err}");
    let mut reader = BinaryReader::new(Cursor::new(cut), true).unwrap();
    let read = events(&mut reader);
    let warning = reader.truncated().expect("a warning");
    assert!(
        warning.contains("symbols the trace kept at its end"),
        "{warning}"
    );
    assert!(read.len() <= original.len());
    assert_eq!(read[..], original[..read.len()]);
    // A recording cut in its end keeps its symbol table, read past.
    let recorded = std::fs::read(root().join("traces/sort.lgt")).unwrap();
    let cut = &recorded[..recorded.len() - 20];
    let mut reader = BinaryReader::new(Cursor::new(cut), true).unwrap();
    while reader.next_event().unwrap().is_some() {}
    assert!(reader.truncated().is_some());
}

/// Bytes after a whole trace (anything appended, or a second trace) are
/// told as such, where the trace ends, truncation allowed or not: the
/// trace is whole, and its symbols are still there.
#[test]
fn bytes_after_the_end_of_a_trace_are_told_apart_from_a_cut() {
    let recorded = std::fs::read(root().join("traces/sort.lgt")).unwrap();
    let end = recorded.len();
    for tail in [&b"garbage"[..], &recorded[..], &[0u8; 8][..]] {
        let joined = [&recorded[..], tail].concat();
        for allow_truncated in [false, true] {
            let Err(err) = BinaryReader::new(Cursor::new(&joined), allow_truncated) else {
                panic!("a trace with bytes after it opened");
            };
            let expected = format!(
                "byte offset {end}: {} bytes follow the trace's end: something was appended to it \
                 (`truncate -s {end}` on the file gives the trace back)",
                tail.len()
            );
            assert_eq!(err.to_string(), expected);
        }
    }
}

#[test]
fn a_trace_cut_within_its_header_is_a_short_binary_trace() {
    let recorded = std::fs::read(root().join("traces/sort.lgt")).unwrap();
    for cut in 1..12 {
        let start = &recorded[..cut];
        assert_eq!(detect(start), Format::Binary, "cut at {cut}");
        let err = open_error(start);
        assert!(
            err.contains("shorter than the trace header"),
            "cut at {cut}: {err}"
        );
    }
    // What only starts like the magic is not a binary trace.
    assert_eq!(detect(b"LGX"), Format::Text);
}

/// `binary` with one byte added at the end of the payload of the chunk at
/// `chunk` (its lengths and checksum made to match), the chunks after it
/// and the trailer's pointer moved along.
fn with_byte_added(binary: &[u8], chunk: usize) -> Vec<u8> {
    let stored = u32::from_le_bytes(binary[chunk + 4..chunk + 8].try_into().unwrap()) as usize;
    assert_eq!(binary[chunk + 1], 0, "an uncompressed chunk");
    let end = chunk + 16 + stored;
    let mut out = [&binary[..end], &[0], &binary[end..]].concat();
    let len = (stored as u32 + 1).to_le_bytes();
    out[chunk + 4..chunk + 8].copy_from_slice(&len);
    out[chunk + 8..chunk + 12].copy_from_slice(&len);
    let crc = crc32fast::hash(&out[chunk + 16..end + 1]);
    out[chunk + 12..chunk + 16].copy_from_slice(&crc.to_le_bytes());
    let trailer = out.len() - 8;
    let end_at = u64::from_le_bytes(out[trailer..].try_into().unwrap());
    if end_at as usize > chunk {
        out[trailer..].copy_from_slice(&(end_at + 1).to_le_bytes());
    }
    out
}

#[test]
fn metadata_or_an_end_with_bytes_to_spare_or_an_end_not_at_the_trailer_is_refused() {
    let original = events(&mut TextReader::new(EVERYTHING.as_bytes()));
    let binary = to_binary(&original, false, &[]);
    assert_eq!(binary[12], 1, "the metadata chunk comes first");
    let end_at = u64::from_le_bytes(binary[binary.len() - 8..].try_into().unwrap()) as usize;
    assert_eq!(binary[end_at], 6, "the trailer points at the end chunk");
    let err = open_error(&with_byte_added(&binary, 12));
    assert!(
        err.starts_with("byte offset 12: corrupt chunk: bytes after the metadata's last field"),
        "{err}"
    );
    // A value that is not UTF-8, as every text of the format must be.
    let stored = u32::from_le_bytes(binary[16..20].try_into().unwrap()) as usize;
    let mut meta = binary[28..28 + stored].to_vec();
    assert_eq!(&meta[meta.len() - 4..], b"test");
    *meta.last_mut().unwrap() = 0xff;
    let err = open_error(&with_payload(&binary, 12, &meta));
    assert_eq!(
        err,
        format!(
            "byte offset 12: corrupt chunk: a metadata key or value is not UTF-8 (at byte {} of its data)",
            meta.len()
        )
    );
    let err = open_error(&with_byte_added(&binary, end_at));
    assert!(
        err.starts_with(&format!(
            "byte offset {end_at}: corrupt chunk: bytes after the end record's last field"
        )),
        "{err}"
    );
    // A damaged byte inside the end chunk of a whole file: corruption
    // where that chunk starts, not a file cut short.
    let mut damaged = binary.clone();
    damaged[end_at + 16] ^= 0x40;
    assert_eq!(
        open_error(&damaged),
        format!("byte offset {end_at}: a chunk's checksum does not match: the trace is corrupt")
    );
    // A byte between the end chunk and the trailer: no valid end.
    let trailer = binary.len() - 8;
    let gap = [&binary[..trailer], &[0], &binary[trailer..]].concat();
    let err = open_error(&gap);
    assert!(err.contains("no end record"), "{err}");
    // An exit code (+ 1, its last field: 4 for the 3 written) past what an
    // exit status holds: 256 + 1, varint 0x81 0x02.
    let stored = u32::from_le_bytes(binary[end_at + 4..end_at + 8].try_into().unwrap()) as usize;
    let payload = &binary[end_at + 16..end_at + 16 + stored];
    assert_eq!(payload.last(), Some(&4));
    let past = [&payload[..stored - 1], &[0x81, 0x02]].concat();
    let mut changed = with_payload(&binary, end_at, &past);
    // The end chunk stays where it was.
    let trailer = changed.len() - 8;
    changed[trailer..].copy_from_slice(&(end_at as u64).to_le_bytes());
    let err = open_error(&changed);
    assert!(
        err.ends_with(
            "corrupt chunk: the end record's exit code 256 is past 255, the largest an \
             exit status holds (at byte 4 of its data)"
        ),
        "{err}"
    );
}

/// The end record's pointer to the symbol table is checked against the
/// trace's chunks: an error about where it points would send the reader to
/// the header, or past the file's end. Inside them, what is there is told
/// where it is.
#[test]
fn an_end_record_pointing_outside_the_chunks_is_its_error() {
    let original = events(&mut TextReader::new(EVERYTHING.as_bytes()));
    let symbols: Vec<Control> = original
        .iter()
        .filter(|e| matches!(e, Event::Function(_)))
        .map(|e| Control::Event(e.clone()))
        .collect();
    let binary = to_binary(&original, false, &symbols);
    let end_at = u64::from_le_bytes(binary[binary.len() - 8..].try_into().unwrap()) as usize;
    let stored = u32::from_le_bytes(binary[end_at + 4..end_at + 8].try_into().unwrap()) as usize;
    let payload = &binary[end_at + 16..end_at + 16 + stored];
    // The symbol table's offset, the first field: a varint of two bytes in
    // a trace this short.
    assert!(payload[0] & 0x80 != 0 && payload[1] & 0x80 == 0);
    let outside = |at: u64| {
        format!(
            "byte offset {end_at}: the end record points at byte offset {at} for the symbol \
             table, outside the trace's chunks (12 to {end_at})"
        )
    };
    let inside_metadata = 13;
    for (symbols_at, expected) in [
        (1u64, outside(1)),
        (1 << 32, outside(1 << 32)),
        (inside_metadata, format!("byte offset {inside_metadata}: ")),
    ] {
        let mut pointer = Vec::new();
        let mut rest = symbols_at;
        while rest >= 0x80 {
            pointer.push(rest as u8 | 0x80);
            rest >>= 7;
        }
        pointer.push(rest as u8);
        let changed_payload = [&pointer[..], &payload[2..]].concat();
        let mut changed = with_payload(&binary, end_at, &changed_payload);
        let trailer = changed.len() - 8;
        changed[trailer..].copy_from_slice(&(end_at as u64).to_le_bytes());
        let err = open_error(&changed);
        assert!(err.starts_with(&expected), "{err}");
    }
}

/// An error in the symbol table a trace carries is told at that table's
/// chunk, not at the chunk read before it.
#[test]
fn a_symbol_table_error_is_told_at_its_chunk() {
    let text = "linegrind-trace text 1\nfn 1000 1040 a\nfn 1020 1060 b\ni 1000 4\n";
    let symbols: Vec<Control> = events(&mut TextReader::new(text.as_bytes()))
        .into_iter()
        .filter(|e| matches!(e, Event::Function(_)))
        .map(Control::Event)
        .collect();
    let binary = to_binary(
        &[Event::Instr {
            addr: 0x1000,
            len: 4,
        }],
        false,
        &symbols,
    );
    let (symbols_at, _) = chunks(&binary)
        .into_iter()
        .find(|&(_, kind)| kind == 5)
        .expect("a SYMBOLS chunk");
    let mut reader = BinaryReader::new(Cursor::new(&binary[..]), false).unwrap();
    let Err(err) = simulate(&mut reader, config("1024,2,64", "1024,2,64", "4096,4,64")) else {
        panic!("overlapping functions simulated");
    };
    assert_eq!(
        err.to_string(),
        format!("byte offset {symbols_at}: function `b` overlaps the range 1000..1040")
    );
}

/// A chunk's kind is not under its checksum, and the chunks carry no
/// numbers: an end record or a symbol table in the middle of the stream,
/// a chunk repeated or left out, or lengths that disagree, are caught by
/// where the end record puts things and by what it counts.
#[test]
fn chunks_out_of_place_repeated_or_missing_are_refused() {
    let original = events(&mut TextReader::new(EVERYTHING.as_bytes()));
    let binary = to_binary(&original, false, &[]);
    let (events_at, _) = *chunks(&binary)
        .iter()
        .find(|(_, kind)| *kind == 4)
        .expect("an events chunk");
    for (kind, error) in [
        (6, "an end record before the trace's end"),
        (5, "a symbol table where the end record does not put one"),
    ] {
        let mut changed = binary.clone();
        changed[events_at] = kind;
        let err = read_error(&changed);
        assert!(
            err.starts_with(&format!("byte offset {events_at}: {error}")),
            "{err}"
        );
    }
    // The events chunk twice, then not at all.
    let stored = u32::from_le_bytes(binary[events_at + 4..events_at + 8].try_into().unwrap());
    let next = events_at + 16 + stored as usize;
    let moved = |binary: Vec<u8>, by: i64| {
        let mut binary = binary;
        let trailer = binary.len() - 8;
        let end_at = u64::from_le_bytes(binary[trailer..].try_into().unwrap());
        let end_at = (end_at as i64 + by) as u64;
        binary[trailer..].copy_from_slice(&end_at.to_le_bytes());
        binary
    };
    // A repeat is caught in it, as soon as the runs pass the count.
    let twice = [&binary[..next], &binary[events_at..]].concat();
    let twice = moved(twice, (next - events_at) as i64);
    let err = read_error(&twice);
    assert_eq!(
        err,
        format!(
            "byte offset {next}: the end record counts 5 block runs, the trace's chunks hold \
             more: chunks are repeated or the end record is wrong"
        )
    );
    let without = [&binary[..events_at], &binary[next..]].concat();
    let without = moved(without, -((next - events_at) as i64));
    let err = read_error(&without);
    assert!(
        err.contains("counts 5 block runs, the trace's chunks hold 0"),
        "{err}"
    );
    // An uncompressed chunk whose raw length is not its stored length.
    let mut lengths = binary.clone();
    lengths[events_at + 8] ^= 1;
    let err = read_error(&lengths);
    assert!(
        err.starts_with(&format!(
            "byte offset {events_at}: an uncompressed chunk's stored and raw lengths differ"
        )),
        "{err}"
    );
}

#[test]
fn unknown_flags_and_reserved_bits_are_refused() {
    let original = events(&mut TextReader::new(EVERYTHING.as_bytes()));
    let binary = to_binary(&original, true, &[]);
    let mut header = binary.clone();
    header[11] = 1;
    let err = open_error(&header);
    assert!(
        err.starts_with("byte offset 10: the header's reserved bytes are not 0"),
        "{err}"
    );
    for (at, bits) in [(13, 0x02), (14, 0x01), (15, 0x80)] {
        let mut chunk = binary.clone();
        chunk[at] |= bits;
        let err = open_error(&chunk);
        assert!(
            err.starts_with("byte offset 12: a chunk has flags or reserved bits"),
            "{err}"
        );
    }
}

#[test]
fn corrupted_traces_give_errors_not_panics() {
    let mut state = 0x5eed_u64;
    let mut binaries = Vec::new();
    for trace in text_example_traces() {
        let text = std::fs::read_to_string(&trace).unwrap();
        let original = events(&mut TextReader::new(text.as_bytes()));
        for compress in [false, true] {
            binaries.push((to_binary(&original, compress, &[]), 300));
        }
    }
    // A real recording, with its symbol table.
    binaries.push((
        std::fs::read(root().join("traces/stream_table.lgt")).unwrap(),
        60,
    ));
    for (binary, rounds) in binaries {
        for round in 0..rounds {
            let mut damaged = binary.clone();
            {
                match round % 3 {
                    0 => damaged.truncate((next(&mut state) % binary.len() as u64) as usize),
                    1 => {
                        let at = (next(&mut state) % binary.len() as u64) as usize;
                        damaged[at] ^= 1 << (next(&mut state) % 8);
                    }
                    _ => {
                        for _ in 0..4 {
                            let at = (next(&mut state) % binary.len() as u64) as usize;
                            damaged[at] = next(&mut state) as u8;
                        }
                    }
                }
                for allow in [false, true] {
                    // Reading may succeed (a flipped bit in a number that
                    // still makes sense) or fail with a message; it must
                    // never panic. A cut trace, unless allowed, fails.
                    let failure = match BinaryReader::new(Cursor::new(&damaged), allow) {
                        Ok(mut reader) => loop {
                            match reader.next_event() {
                                Ok(Some(_)) => {}
                                Ok(None) => break None,
                                Err(err) => break Some(err.to_string()),
                            }
                        },
                        Err(err) => Some(err.to_string()),
                    };
                    if round % 3 == 0 && !allow {
                        let failure = failure.expect("a cut trace read to its end");
                        assert!(failure.starts_with("byte offset "), "{failure}");
                    }
                }
            }
        }
    }
}

/// `binary`, an uncompressed trace, with `bytes` bytes of the payload of
/// its chunk at `at` overwritten at random and the chunk's checksum made to
/// match, so that the decoder itself meets garbage.
fn garbled(binary: &[u8], at: usize, bytes: usize, state: &mut u64) -> Vec<u8> {
    let stored = u32::from_le_bytes(binary[at + 4..at + 8].try_into().unwrap()) as usize;
    let payload = at + 16..at + 16 + stored;
    let mut damaged = binary.to_vec();
    for _ in 0..bytes {
        let byte = payload.start + (next(state) % payload.len() as u64) as usize;
        damaged[byte] = next(state) as u8;
    }
    let crc = crc32fast::hash(&damaged[payload]);
    damaged[at + 12..at + 16].copy_from_slice(&crc.to_le_bytes());
    damaged
}

/// Damages the content of block and event chunks behind a valid checksum,
/// so that the decoder itself meets garbage.
#[test]
fn garbage_behind_valid_checksums_gives_errors_not_panics() {
    let mut state = 0xbad_5eed_u64;
    let text = std::fs::read_to_string(&example_traces()[0]).unwrap();
    let original = events(&mut TextReader::new(text.as_bytes()));
    let binary = to_binary(&original, false, &[]);
    let chunks = chunks_of(&binary, &[3, 4]);
    assert!(chunks.len() >= 2, "block and event chunks");
    let mut errors = 0;
    for round in 0..2000 {
        let chunk = chunks[round % chunks.len()];
        let damaged = garbled(&binary, chunk, 1 + round % 3, &mut state);
        let mut reader = BinaryReader::new(Cursor::new(&damaged), false).unwrap();
        loop {
            match reader.next_event() {
                Ok(Some(_)) => {}
                Ok(None) => break,
                Err(err) => {
                    assert!(err.to_string().starts_with("byte offset "), "{err}");
                    errors += 1;
                    break;
                }
            }
        }
    }
    // 1,587 of the 2,000 are noticed (the rest garble bytes into other
    // numbers that still make sense): a reader that checked less would
    // notice fewer.
    assert!(errors > 1500, "most damage is noticed ({errors} of 2000)");
}

/// `sim` decodes ahead of the simulators, into batches: on a trace with
/// garbage behind valid checksums, in any chunk, it must tell the error
/// that reading and simulating event by event meets first, or simulate to
/// the same totals; for the recorded traces too, whose loops are read as
/// rounds in the same bytes.
#[test]
fn damaged_traces_fail_alike_in_sim_and_event_by_event() {
    let mut state = 0xfa11_5eed_u64;
    let configs = [
        config("32768,8,64", "32768,8,64", "8388608,16,64"),
        config("256,2,32", "512,2,32", "4096,4,32"),
    ];
    let (mut opened, mut errors) = (0, 0);
    for trace in example_traces() {
        let mut reader = AnyReader::new(std::fs::File::open(&trace).unwrap(), false).unwrap();
        let original = events(&mut reader);
        let binary = to_binary(&original, false, &[]);
        let chunks = chunks_of(&binary, &[1, 3, 4, 5, 6]);
        let rounds = if original.len() > 1_000_000 { 8 } else { 100 };
        for round in 0..rounds {
            let chunk = chunks[(next(&mut state) % chunks.len() as u64) as usize];
            let damaged = garbled(&binary, chunk, 1 + round % 3, &mut state);
            let config = &configs[round % 2];
            let Ok(mut reader) = BinaryReader::new(Cursor::new(&damaged), false) else {
                continue;
            };
            opened += 1;
            let alone = simulate(&mut reader, config.clone()).map(|profile| profile.totals);
            let reader = BinaryReader::new(Cursor::new(&damaged), false).unwrap();
            let piped = match simulate_each(reader, std::slice::from_ref(config), &|_| {}) {
                Ok((_, mut profiles)) => profiles.remove(0).map(|profile| profile.totals),
                Err(err) => Err(err.into()),
            };
            match (alone, piped) {
                (Ok(alone), Ok(piped)) => assert_eq!(alone, piped, "{}", trace.display()),
                (Err(alone), Err(piped)) => {
                    assert_eq!(alone.to_string(), piped.to_string(), "{}", trace.display());
                    errors += 1;
                }
                (alone, piped) => panic!("{}: {alone:?} against {piped:?}", trace.display()),
            }
        }
    }
    assert!(
        errors * 2 > opened,
        "most damage is noticed ({errors} of {opened})"
    );
}

/// The first error reading `binary` event by event, and the first filling
/// batches, which must agree.
fn read_error(binary: &[u8]) -> String {
    let by_event = {
        let mut reader = BinaryReader::new(Cursor::new(binary), false).unwrap();
        loop {
            match reader.next_event() {
                Ok(Some(_)) => {}
                Ok(None) => panic!("the trace read without an error"),
                Err(err) => break err.to_string(),
            }
        }
    };
    let by_batch = {
        let mut reader = BinaryReader::new(Cursor::new(binary), false).unwrap();
        let mut feed = Feed::default();
        loop {
            match reader.fill(&mut feed) {
                Ok(true) => feed.batch.clear(),
                Ok(false) => panic!("the trace filled batches without an error"),
                Err(err) => break err.to_string(),
            }
        }
    };
    assert_eq!(by_event, by_batch);
    by_event
}

/// The writer takes any event; the reader refuses, with the record's byte
/// offset, what the text format refuses: an access past the end of the
/// address space (in a block's run or on its own), an instruction there, an
/// empty range, a name that would break a callgrind file's lines.
#[test]
fn events_the_text_format_refuses_are_corrupt_in_a_binary_trace() {
    use linegrind::trace::{Access, FunctionSymbol};
    let instr = Event::Instr {
        addr: 0x1000,
        len: 4,
    };
    let read = |addr| Event::Data {
        access: Access::Read,
        addr,
        size: 8,
    };
    let function = |start, end, name: &str| {
        Event::Function(Box::new(FunctionSymbol {
            start,
            end,
            name: name.into(),
            file: None,
            line: 0,
        }))
    };
    let cases = [
        (
            vec![
                instr.clone(),
                read(0x8000),
                instr.clone(),
                read(u64::MAX - 2),
            ],
            "8 bytes at fffffffffffffffd run past the end of the address space",
        ),
        (
            vec![Event::Instr {
                addr: u64::MAX - 1,
                len: 4,
            }],
            "4 bytes at fffffffffffffffe run past the end of the address space",
        ),
        (
            vec![function(0x2000, 0x1000, "f"), instr.clone()],
            "empty function range 2000..1000",
        ),
        (
            vec![function(0x1000, 0x2000, "f\ntotals: 1"), instr.clone()],
            "function name `f\\ntotals: 1` holds a line break",
        ),
    ];
    for (events, why) in cases {
        for compress in [false, true] {
            let err = read_error(&to_binary(&events, compress, &[]));
            assert!(err.contains("byte offset") && err.contains(why), "{err}");
        }
    }
}

/// Kilobytes of compressed block descriptions can stand for millions of
/// blocks, or for long ones: where the host's memory ends, reading says so
/// and stops (exit code 2), rather than aborting in some allocation.
#[test]
fn more_blocks_than_memory_holds_is_an_error_not_an_abort() {
    let available = std::process::Command::new("prlimit")
        .arg("--version")
        .output()
        .is_ok_and(|out| out.status.success());
    if !available {
        crate::support::skip!("no prlimit (util-linux)");
        return;
    }
    // Four million blocks of one instruction, 64 Ki blocks of 256
    // instructions, or as many blocks of 4,096 instructions that read 16
    // times each as a chunk holds (the block's own tables were once
    // allocated before the host was asked): far more than 256 MiB holds.
    let one: String = (0..1)
        .map(|i| format!("i {:x} 1\n", 0x400000 + i))
        .collect();
    let long: String = (0..256)
        .map(|i| format!("i {:x} 1\n", 0x400000 + i))
        .collect();
    let reads = "r 10000 8\n".repeat(16);
    let accessing: String = (0..4096)
        .map(|i| format!("i {:x} 1\n{reads}", 0x400000 + i))
        .collect();
    for (code, blocks) in [
        (one, Some(4 << 20)),
        (long, Some(64 << 10)),
        (accessing, None),
    ] {
        let text = format!("linegrind-trace text 1\n{code}");
        let binary = to_binary(&events(&mut TextReader::new(text.as_bytes())), false, &[]);
        let (at, _) = *chunks(&binary)
            .iter()
            .find(|&&(_, kind)| kind == 3)
            .expect("a BLOCKS chunk");
        let stored = u32::from_le_bytes(binary[at + 4..at + 8].try_into().unwrap()) as usize;
        let block = &binary[at + 16..at + 16 + stored];
        let blocks = blocks.unwrap_or(MAX_CHUNK as usize / block.len());
        let bomb = with_payload(&binary, at, &block.repeat(blocks));
        assert!(bomb.len() < 256 * 1024, "{} bytes", bomb.len());
        refused_where_memory_ends(&bomb);
    }
}

fn refused_where_memory_ends(bomb: &[u8]) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bomb.lgt");
    std::fs::write(&path, bomb).unwrap();
    for command in [&["info"][..], &["sim", "-q"]] {
        let out = std::process::Command::new("prlimit")
            .arg(format!("--as={}", 256 << 20))
            .arg(env!("CARGO_BIN_EXE_linegrind"))
            .args(command)
            .arg(&path)
            .current_dir(dir.path())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{command:?}: {stderr}");
        assert!(
            stderr.contains("the trace describes more code blocks than this host's memory holds"),
            "{command:?}: {stderr}"
        );
    }
}

#[test]
fn an_empty_blocks_chunk_or_events_without_their_resume_record_are_corrupt() {
    let original = events(&mut TextReader::new(EVERYTHING.as_bytes()));
    let binary = to_binary(&original, false, &[]);
    let at = |wanted: u8| {
        chunks(&binary)
            .into_iter()
            .find(|&(_, kind)| kind == wanted)
            .unwrap()
            .0
    };
    let (blocks, events_at) = (at(3), at(4));
    let err = open_error(&with_payload(&binary, blocks, &[]));
    assert_eq!(err, format!("byte offset {blocks}: an empty BLOCKS chunk"));
    let stored =
        u32::from_le_bytes(binary[events_at + 4..events_at + 8].try_into().unwrap()) as usize;
    let payload = &binary[events_at + 16..events_at + 16 + stored];
    // The resume record: its tag (a control record of type 17) and thread.
    assert_eq!(payload[0], (17 << 2) | 2);
    let err = open_error(&with_payload(&binary, events_at, &payload[2..]));
    assert_eq!(
        err,
        format!(
            "byte offset {events_at}: an EVENTS chunk that does not start with a resume record"
        )
    );
}
