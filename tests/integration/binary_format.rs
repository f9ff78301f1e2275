//! The binary trace format: lossless round trips with the text format,
//! truncation and corruption reported with an offset, never a panic.

use std::io::Cursor;

use proptest::prelude::*;

use linegrind::pipeline::simulate_each;
use linegrind::simulator::simulate;
use linegrind::trace::batch::{BATCH_ADDRS, Replayed, RunArrays};
use linegrind::trace::binary::{BinaryReader, Control, MAX_CHUNK, TraceWriter};
use linegrind::trace::block::{BlockDef, BlockInstr, BlockRun, Item, JumpKind};
use linegrind::trace::{
    Access, AnyReader, Blocker, Event, Feed, Format, Location, TextReader, TextWriter, TraceError,
    TraceItem, TraceRead, detect,
};

use crate::support::{config, example_traces, is_recorded, root};

/// The example traces written as text.
fn text_example_traces() -> Vec<std::path::PathBuf> {
    let traces: Vec<_> = example_traces()
        .into_iter()
        .filter(|path| !is_recorded(path))
        .collect();
    assert!(!traces.is_empty());
    traces
}

fn events(reader: &mut impl TraceRead) -> Vec<Event> {
    let mut out = Vec::new();
    while let Some(event) = reader.next_event().unwrap() {
        out.push(event);
    }
    out
}

fn to_binary(events: &[Event], compress: bool, symbols: &[Control]) -> Vec<u8> {
    let writer = TraceWriter::new(Vec::new(), compress, &[("cmd", "test".into())]).unwrap();
    let mut blocker = Blocker::new(writer);
    for event in events {
        blocker.event(event.clone()).unwrap();
    }
    blocker.finish().unwrap().finish(symbols, Some(3)).unwrap()
}

/// A trace using every kind of event, with things the block grouping must
/// keep exactly: a write after `call`, stack pointers, escapes in names.
const EVERYTHING: &str = "linegrind-trace text 1
object /lib/libx.so bias=7f0000000000 start=7f0000001000 end=7f0000009000 build-id=00ff
fn 401000 401040 main m%20n.c 12
fn 401040 4010a0 gather
line 401004 13
line 401040 7 vector.h
plt 401020 401040
thread 1
sp 7ffff000
i 401000 4
w 7ff000 8
i 401004 5
call 401040
w 7fffeff8 8
sp 7fffeff8
i 401040 4
r 600000 8
m 600008 4
i 401044 1
ret
i 401009 3
i 401100 2
signal 10
i 401060 4
sigreturn
thread 2
i 401000 300
thread-exit 2
mark begin paint
alloc 10000000 4096
free 10000000
flush
restart
mark end paint
";

#[test]
fn text_and_binary_round_trip_exactly() {
    let mut sources: Vec<String> = text_example_traces()
        .iter()
        .map(|path| std::fs::read_to_string(path).unwrap())
        .collect();
    sources.push(EVERYTHING.to_string());
    for text in &sources {
        let original = events(&mut TextReader::new(text.as_bytes()));
        for compress in [false, true] {
            let binary = to_binary(&original, compress, &[]);
            let mut reader = BinaryReader::new(Cursor::new(&binary), false).unwrap();
            assert_eq!(events(&mut reader), original);
            assert_eq!(reader.summary().unwrap().exit_code, Some(3));
        }
        let mut text_out = TextWriter::new(Vec::new()).unwrap();
        for event in &original {
            text_out.event(event).unwrap();
        }
        let written = text_out.finish().unwrap();
        assert_eq!(events(&mut TextReader::new(&written[..])), original);
    }
}

#[test]
fn a_recording_converts_to_text_and_back_exactly() {
    // The smallest recorded example; the others are the same kind, larger.
    let trace = root().join("traces/stream_table.lgt");
    let file = std::fs::File::open(&trace).unwrap();
    let original = events(&mut AnyReader::new(file, false).unwrap());
    let mut text_out = TextWriter::new(Vec::new()).unwrap();
    for event in &original {
        text_out.event(event).unwrap();
    }
    let text = text_out.finish().unwrap();
    let from_text = events(&mut TextReader::new(&text[..]));
    assert!(from_text == original, "text differs");
    let binary = to_binary(&from_text, true, &[]);
    let from_binary = events(&mut BinaryReader::new(Cursor::new(&binary), false).unwrap());
    assert!(from_binary == original, "binary differs");
}

#[test]
fn symbols_come_first_and_replace_module_records_in_the_stream() {
    let original = events(&mut TextReader::new(EVERYTHING.as_bytes()));
    let symbols: Vec<Control> = original
        .iter()
        .filter(|e| matches!(e, Event::Module(_) | Event::Function(_) | Event::Line(_)))
        .map(|e| Control::Event(e.clone()))
        .collect();
    let binary = to_binary(&original, true, &symbols);
    let read = events(&mut BinaryReader::new(Cursor::new(&binary), false).unwrap());
    assert_eq!(read[..symbols.len()], original[..symbols.len()]);
    // The module given in the stream is not given twice.
    let modules = read
        .iter()
        .filter(|e| matches!(e, Event::Module(_)))
        .count();
    assert_eq!(modules, 1);
}

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

/// The error opening and reading `binary`.
fn open_error(binary: &[u8]) -> String {
    match BinaryReader::new(Cursor::new(binary), false) {
        Err(err) => err.to_string(),
        Ok(mut reader) => loop {
            match reader.next_event() {
                Ok(Some(_)) => {}
                Ok(None) => panic!("the trace read without an error"),
                Err(err) => break err.to_string(),
            }
        },
    }
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
    // An exit code (+ 1, its last field: 4 for the 3 written) past 32 bits.
    let stored = u32::from_le_bytes(binary[end_at + 4..end_at + 8].try_into().unwrap()) as usize;
    let payload = &binary[end_at + 16..end_at + 16 + stored];
    assert_eq!(payload.last(), Some(&4));
    let past = [&payload[..stored - 1], &[0x81, 0x80, 0x80, 0x80, 0x10]].concat();
    let mut changed = with_payload(&binary, end_at, &past);
    // The end chunk stays where it was.
    let trailer = changed.len() - 8;
    changed[trailer..].copy_from_slice(&(end_at as u64).to_le_bytes());
    let err = open_error(&changed);
    assert!(
        err.ends_with("the end record's exit code 4294967296 is past 32 bits"),
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

/// A symbol table larger than a chunk is cut into several, read back in
/// order, and an error in one of them is told at that one.
#[test]
fn a_large_symbol_table_spans_chunks() {
    let mut text = String::from("linegrind-trace text 1\n");
    for f in 0..60_000u64 {
        let start = 0x100000 + f * 0x10;
        text += &format!(
            "fn {start:x} {:x} a_function_named_at_some_length_{f}\n",
            start + 0x10
        );
    }
    text += "fn 100004 10000c overlapping\ni 100000 4\n";
    let read = events(&mut TextReader::new(text.as_bytes()));
    let (symbols, stream): (Vec<Event>, Vec<Event>) = read
        .into_iter()
        .partition(|e| matches!(e, Event::Function(_)));
    let controls: Vec<Control> = symbols.iter().cloned().map(Control::Event).collect();
    let binary = to_binary(&stream, true, &controls);
    let tables: Vec<usize> = chunks(&binary)
        .into_iter()
        .filter(|&(_, kind)| kind == 5)
        .map(|(at, _)| at)
        .collect();
    assert!(tables.len() >= 3, "{tables:?}");
    let mut reader = BinaryReader::new(Cursor::new(&binary[..]), false).unwrap();
    assert_eq!(events(&mut reader), [symbols, stream].concat());
    let mut reader = BinaryReader::new(Cursor::new(&binary[..]), false).unwrap();
    let Err(err) = simulate(&mut reader, config("1024,2,64", "1024,2,64", "4096,4,64")) else {
        panic!("overlapping functions simulated");
    };
    let last = tables.last().unwrap();
    assert_eq!(
        err.to_string(),
        format!("byte offset {last}: function `overlapping` overlaps the range 100000..100010")
    );
    // The kind byte is not under the checksum.
    let mut changed = binary.clone();
    changed[tables[1]] = 4;
    assert_eq!(
        open_error(&changed),
        format!(
            "byte offset {}: a chunk of another kind between the symbol table's first chunk \
             and the end record",
            tables[1]
        )
    );
}

/// What a block description cannot hold (more instructions, or more
/// accesses of one instruction, than a reader takes) is written so that
/// it reads back, and block descriptions that outgrow a chunk before the
/// stream does start a chunk of their own.
#[test]
fn blocks_past_the_readers_limits_read_back() {
    let read = |addr| Event::Data {
        access: Access::Read,
        addr,
        size: 8,
    };
    let mut long = Vec::new();
    for i in 0..70_000u64 {
        long.push(Event::Instr {
            addr: 0x400000 + 2 * i,
            len: 2,
        });
    }
    long.push(Event::Instr {
        addr: 0x900000,
        len: 4,
    });
    long.extend((0..70_000u64).map(|i| read(0x10000000 + 8 * i)));
    // Distinct blocks of 100 instructions, run once each: some 1.7 MB of
    // descriptions for a few kilobytes of stream.
    for block in 0..6_000u64 {
        let at = 0x1000000 + block * 0x1000;
        long.extend((0..100).map(|i| Event::Instr {
            addr: at + 3 * i,
            len: 3,
        }));
    }
    for compress in [false, true] {
        let binary = to_binary(&long, compress, &[]);
        let mut reader = BinaryReader::new(Cursor::new(&binary[..]), false).unwrap();
        assert_eq!(events(&mut reader), long);
        let blocks = chunks(&binary)
            .iter()
            .filter(|&&(_, kind)| kind == 3)
            .count();
        assert!(blocks >= 2, "{blocks} BLOCKS chunks");
    }
}

/// The offset and kind of every chunk of `binary`.
fn chunks(binary: &[u8]) -> Vec<(usize, u8)> {
    let mut at = 12;
    let mut chunks = Vec::new();
    while at + 8 < binary.len() {
        let stored = u32::from_le_bytes(binary[at + 4..at + 8].try_into().unwrap()) as usize;
        chunks.push((at, binary[at]));
        at += 16 + stored;
    }
    chunks
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
fn a_payload_that_compression_would_grow_is_stored_as_it_is() {
    // A command line of 200 random characters: its metadata chunk does not
    // compress. The events of EVERYTHING do.
    let mut state = 0x5eed_u64;
    let cmd: String = (0..200)
        .map(|_| char::from(b'!' + (next(&mut state) % 90) as u8))
        .collect();
    let writer = TraceWriter::new(Vec::new(), true, &[("cmd", cmd.clone())]).unwrap();
    let mut blocker = Blocker::new(writer);
    let original = events(&mut TextReader::new(EVERYTHING.as_bytes()));
    for event in &original {
        blocker.event(event.clone()).unwrap();
    }
    let binary = blocker.finish().unwrap().finish(&[], None).unwrap();
    let mut at = 12;
    let mut chunks = Vec::new();
    while at + 16 <= binary.len() - 8 {
        let stored = u32::from_le_bytes(binary[at + 4..at + 8].try_into().unwrap());
        let raw = u32::from_le_bytes(binary[at + 8..at + 12].try_into().unwrap());
        chunks.push((binary[at], binary[at + 1], stored, raw));
        at += 16 + stored as usize;
    }
    assert_eq!(chunks[0].0, 1, "{chunks:?}");
    assert!(chunks[0].3 > 200, "{chunks:?}");
    assert_eq!(
        (chunks[0].1, chunks[0].2),
        (0, chunks[0].3),
        "stored: {chunks:?}"
    );
    assert!(
        chunks
            .iter()
            .any(|&(_, flags, stored, raw)| flags == 1 && stored < raw),
        "{chunks:?}"
    );
    let mut reader = BinaryReader::new(Cursor::new(&binary), false).unwrap();
    assert_eq!(reader.meta()[0], ("cmd".to_string(), cmd));
    assert_eq!(events(&mut reader), original);
}

/// xorshift64*, so that failures reproduce.
fn next(state: &mut u64) -> u64 {
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    state.wrapping_mul(0x2545_F491_4F6C_DD1D)
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

/// The offsets of `binary`'s chunks of the kinds in `kinds`.
fn chunks_of(binary: &[u8], kinds: &[u8]) -> Vec<usize> {
    chunks(binary)
        .into_iter()
        .filter_map(|(at, kind)| kinds.contains(&kind).then_some(at))
        .collect()
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

/// A reader filling batches item by item, with [`TraceRead`]'s own `fill`,
/// whatever the reader inside does.
struct ItemByItem<R>(R);

impl<R: TraceRead> TraceRead for ItemByItem<R> {
    fn next_event(&mut self) -> Result<Option<Event>, TraceError> {
        self.0.next_event()
    }

    fn next_item(&mut self) -> Result<Option<TraceItem<'_>>, TraceError> {
        self.0.next_item()
    }

    fn location(&self) -> Location {
        self.0.location()
    }
}

/// Every item of the batches `reader` fills, with its run's guards and
/// addresses, and its location (a description has none: it cannot fail);
/// after a run that ends a cycle of runs repeated, the cycle's runs as many
/// times over, each with its addresses in that repeat and without a
/// location (they take the run's), and every run as if it repeated
/// nothing.
fn batched(reader: &mut impl TraceRead) -> Vec<(String, Option<Location>)> {
    batched_or_error(reader).unwrap()
}

/// What [`batched`] gives, or the error filling a batch met.
fn batched_or_error(
    reader: &mut impl TraceRead,
) -> Result<Vec<(String, Option<Location>)>, String> {
    let counts = regex::Regex::new(r"repeats: \d+, (.*), period: \d+").unwrap();
    let repeated = regex::Regex::new(r", repeats: \[[^\]]*\]").unwrap();
    let plain = |item: String| {
        let item = counts.replace(&item, "$1");
        repeated.replace(&item, "").into_owned()
    };
    let mut feed = Feed::default();
    let mut items = Vec::new();
    loop {
        let more = reader.fill(&mut feed).map_err(|err| err.to_string())?;
        let batch = &feed.batch;
        for (item, index) in batch.replay() {
            let at = (!matches!(item, Replayed::Define(..))).then(|| batch.location(index));
            items.push((plain(format!("{item:?}")), at));
            if let Replayed::Run(run, arrays) = item {
                let mut addrs = arrays.repeats().iter();
                for _ in 0..run.repeats {
                    for again in batch.cycle(index) {
                        // The cycle's runs have no guards.
                        let again_addrs: Vec<u64> = addrs
                            .by_ref()
                            .take(again.addrs_len as usize)
                            .copied()
                            .collect();
                        let again = format!("{:?}", Replayed::Run(again, RunArrays::default()))
                            .replace("addrs: []", &format!("addrs: {again_addrs:?}"));
                        items.push((plain(again), None));
                    }
                }
                assert!(addrs.next().is_none(), "every repeat's addresses given");
            }
        }
        feed.batch.clear();
        if !more {
            return Ok(items);
        }
    }
}

#[test]
fn binary_runs_decoded_into_batches_are_the_runs_read_one_by_one() {
    let everything = {
        let mut reader = TextReader::new(EVERYTHING.as_bytes());
        to_binary(&events(&mut reader), true, &[])
    };
    let mut traces = vec![everything];
    for path in example_traces()
        .into_iter()
        .filter(|path| is_recorded(path))
    {
        traces.push(std::fs::read(path).unwrap());
    }
    for trace in traces {
        let open = || BinaryReader::new(Cursor::new(trace.clone()), false).unwrap();
        let direct = batched(&mut open());
        assert!(direct.iter().any(|(item, _)| item.starts_with("Run")));
        assert_same_items(&direct, &batched(&mut ItemByItem(open())));
    }
}

/// Asserts that `direct`, what a reader's batches give, is `one_by_one`,
/// what the same reader gives item by item: the same items, each at the
/// same location but the repeats, which have none.
fn assert_same_items(
    direct: &[(String, Option<Location>)],
    one_by_one: &[(String, Option<Location>)],
) {
    assert_eq!(direct.len(), one_by_one.len());
    for ((direct, at), (one, one_at)) in direct.iter().zip(one_by_one) {
        assert_eq!(direct, one);
        assert!(
            at.is_none() || at == one_at,
            "{direct} at {at:?}, not {one_at:?}"
        );
    }
}

/// A block of one or two instructions with `accesses` (their sizes) and a
/// side exit after the first if `exit`.
fn loop_block(addr: u64, accesses: &[u16], exit: bool) -> BlockDef {
    let mut items: Vec<Item> = accesses
        .iter()
        .map(|&size| Item::Access {
            access: Access::Read,
            size,
            guarded: false,
        })
        .collect();
    let split = accesses.len() / 2;
    if exit {
        items.insert(
            split,
            Item::Exit {
                kind: JumpKind::Boring,
            },
        );
    }
    let first_items = split + usize::from(exit);
    BlockDef {
        instrs: vec![
            BlockInstr {
                addr,
                len: 4,
                items: 0..first_items,
            },
            BlockInstr {
                addr: addr + 4,
                len: 4,
                items: first_items..items.len(),
            },
        ],
        items,
        end: JumpKind::Boring,
    }
}

proptest! {
    /// Loops over memory as a recorder writes them: cycles of one to four
    /// runs of blocks with accesses and side exits (a block may come twice
    /// in a cycle), each access moving by a stride of its site's for a
    /// stretch of rounds, then by others; with sites near the top of the
    /// address space, some run past its end. Decoded into batches, which
    /// count the rounds encoded in the bytes of the round before without
    /// decoding them, they are the runs read one by one, or meet the same
    /// error.
    #[test]
    fn loops_decoded_into_batches_are_the_runs_read_one_by_one(
        blocks in prop::collection::vec(
            (prop::collection::vec(prop::sample::select(vec![1u16, 4, 8]), 0..4), any::<bool>()),
            1..4,
        ),
        cycle in prop::collection::vec((any::<prop::sample::Index>(), any::<bool>()), 1..=4),
        stretches in prop::collection::vec(
            (1u64..40, prop::collection::vec(prop_oneof![Just(0u64), Just(8), Just(u64::MAX - 7), 1u64..0x200], 12)),
            1..4,
        ),
        top in any::<bool>(),
    ) {
        let mut writer = TraceWriter::new(Vec::new(), false, &[("cmd", "test".into())]).unwrap();
        let defs: Vec<BlockDef> = blocks
            .iter()
            .enumerate()
            .map(|(at, (accesses, exit))| loop_block(0x1000 + 0x40 * at as u64, accesses, *exit))
            .collect();
        let ids: Vec<u32> = defs.iter().map(|def| writer.define_block(def)).collect();
        // Each run of the cycle, its block and whether it leaves by its
        // side exit; its accesses' places in a round, each with a site of
        // its own.
        let runs: Vec<(usize, bool)> = cycle
            .iter()
            .map(|(index, exits)| (index.index(defs.len()), *exits))
            .collect();
        // Whether a run leaves by its block's side exit, and how many
        // accesses it makes.
        let leaves = |&(block, exits): &(usize, bool)| exits && blocks[block].1;
        let reached = |run: &(usize, bool)| {
            let accesses = blocks[run.0].0.len();
            if leaves(run) { accesses / 2 } else { accesses }
        };
        let base = if top { u64::MAX - 0x40 } else { 0x10_0000 };
        let mut addrs: Vec<u64> = (0..12).map(|place| base.wrapping_add(0x100 * place)).collect();
        for (rounds, strides) in &stretches {
            for _ in 0..*rounds {
                let mut place = 0;
                for run in &runs {
                    let count = reached(run);
                    let run_addrs = (place..place + count)
                        .map(|place| {
                            let place = place % addrs.len();
                            addrs[place] = addrs[place].wrapping_add(strides[place]);
                            addrs[place]
                        })
                        .collect();
                    place += count;
                    let written = BlockRun {
                        sp: Some(0x7000),
                        exit: leaves(run).then_some(0),
                        guards: Vec::new(),
                        addrs: run_addrs,
                    };
                    writer.block_run(ids[run.0], &written).unwrap();
                }
            }
        }
        let trace = writer.finish(&[], Some(0)).unwrap();
        let open = || BinaryReader::new(Cursor::new(trace.clone()), false).unwrap();
        let direct = batched_or_error(&mut open());
        let one_by_one = batched_or_error(&mut ItemByItem(open()));
        match (direct, one_by_one) {
            (Ok(direct), Ok(one_by_one)) => assert_same_items(&direct, &one_by_one),
            (direct, one_by_one) => prop_assert_eq!(direct.err(), one_by_one.err()),
        }
    }
}

/// Loops of many rounds in the same bytes, striding through memory and in
/// registers, span batches and chunks: decoded into batches, which count
/// such rounds many at a time, they are the runs read one by one, and a
/// batch ends once it holds as many addresses as a batch does.
#[test]
fn long_loops_in_the_same_bytes_fill_batches_as_runs_read_one_by_one() {
    let mut writer = TraceWriter::new(Vec::new(), false, &[("cmd", "test".into())]).unwrap();
    let striding = writer.define_block(&loop_block(0x1000, &[8, 8], false));
    let in_registers = writer.define_block(&loop_block(0x2000, &[], false));
    let run = |addrs| BlockRun {
        sp: Some(0x7000),
        exit: None,
        guards: Vec::new(),
        addrs,
    };
    for round in 0..250_000u64 {
        let addrs = vec![0x10_0000 + 8 * round, 0x80_0000 + 64 * round];
        writer.block_run(striding, &run(addrs)).unwrap();
    }
    for _ in 0..50_000 {
        writer.block_run(in_registers, &run(Vec::new())).unwrap();
    }
    for round in 0..1_000u64 {
        let addrs = vec![0x10_0000 + 8 * round * round, 0x80_0000];
        writer.block_run(striding, &run(addrs)).unwrap();
    }
    let trace = writer.finish(&[], Some(0)).unwrap();
    assert!(trace.len() > 1 << 20, "more than a chunk of events");
    let open = || BinaryReader::new(Cursor::new(trace.clone()), false).unwrap();
    let direct = batched(&mut open());
    assert_same_items(&direct, &batched(&mut ItemByItem(open())));
    assert_eq!(direct.len(), 301_000 + 2, "every run, and two descriptions");
    // Two addresses a round: every batch but the last takes rounds until
    // it is full, and no further.
    let batches = batch_addrs(&mut open());
    let (last, full) = batches.split_last().unwrap();
    assert!(
        full.iter().all(|&addrs| addrs == BATCH_ADDRS),
        "{batches:?}"
    );
    assert_eq!(full.len() * BATCH_ADDRS + last, 502_000);
}

/// How many addresses each batch `reader` fills holds.
fn batch_addrs(reader: &mut impl TraceRead) -> Vec<usize> {
    let mut feed = Feed::default();
    let mut batches = Vec::new();
    loop {
        let more = reader.fill(&mut feed).unwrap();
        let addrs = feed
            .batch
            .replay()
            .map(|(item, _)| match item {
                Replayed::Run(run, arrays) => run.addrs_len as usize + arrays.repeats().len(),
                _ => 0,
            })
            .sum();
        batches.push(addrs);
        feed.batch.clear();
        if !more {
            return batches;
        }
    }
}

/// A loop of two runs of one block, the first leaving by its side exit
/// after one read, the second reading there and once more: the site of the
/// first read is read twice a round, its address encoded against the other
/// read's. The second read of it is 16 bytes past the first for four
/// rounds, 24 in the fifth and 32 after; the first moves by 8 up to the
/// fifth round, by 16 to the sixth and by 24 after. The fifth round and the
/// sixth are each encoded in other bytes than the round before, as many,
/// and the rounds after the sixth in its bytes again; but the first read
/// moved by 16 from the fifth round to the sixth, and by 24 from the sixth
/// to the seventh. Only rounds after two in the same bytes are counted
/// without being decoded.
#[test]
fn a_round_in_the_bytes_of_one_unlike_the_round_before_it_is_decoded() {
    let mut writer = TraceWriter::new(Vec::new(), false, &[("cmd", "test".into())]).unwrap();
    let block = writer.define_block(&loop_block(0x1000, &[8, 8], true));
    let mut first = 0x8000;
    for round in 0..12 {
        first += match round {
            0..5 => 8,
            5 => 16,
            _ => 24,
        };
        let apart = match round {
            0..4 => 16,
            4 => 24,
            _ => 32,
        };
        let run = |exit, addrs| BlockRun {
            sp: Some(0x7000),
            exit,
            guards: Vec::new(),
            addrs,
        };
        writer.block_run(block, &run(Some(0), vec![first])).unwrap();
        let second = run(None, vec![first + apart, 0x9000]);
        writer.block_run(block, &second).unwrap();
    }
    let trace = writer.finish(&[], Some(0)).unwrap();
    let open = || BinaryReader::new(Cursor::new(trace.clone()), false).unwrap();
    assert_same_items(&batched(&mut open()), &batched(&mut ItemByItem(open())));
}

/// A recording where signals arrive between a block that ends in a call
/// and the callee's first block: first a handler left by a jump (it never
/// returns), then one that interrupts `main`'s call and itself calls,
/// interrupted by a nested handler. Each call waits for the handlers
/// delivered after it to return, as Callgrind keeps a call with the code
/// it interrupted; given to the handler instead, it would be a call with
/// no instruction before it in the handler, and `sim` would stop.
fn signals_between_calls_and_callees() -> (Vec<u8>, Vec<Event>) {
    let block = |addr, end| BlockDef {
        instrs: vec![BlockInstr {
            addr,
            len: 4,
            items: 0..0,
        }],
        items: Vec::new(),
        end,
    };
    let mut writer = TraceWriter::new(Vec::new(), false, &[("cmd", "test".into())]).unwrap();
    let caller = writer.define_block(&block(0x1000, JumpKind::Call));
    let callee = writer.define_block(&block(0x2000, JumpKind::Return));
    let after = writer.define_block(&block(0x1004, JumpKind::Boring));
    let handler = writer.define_block(&block(0x3000, JumpKind::Call));
    let nested = writer.define_block(&block(0x3100, JumpKind::Boring));
    let handler_callee = writer.define_block(&block(0x4000, JumpKind::Return));
    let signal = Control::Event(Event::Signal { signo: 14 });
    let sigreturn = Control::Event(Event::SigReturn);
    let run = BlockRun::default();
    writer.block_run(after, &run).unwrap();
    writer.control(&signal).unwrap();
    writer.block_run(nested, &run).unwrap();
    writer.block_run(caller, &run).unwrap();
    writer.control(&signal).unwrap();
    writer.block_run(handler, &run).unwrap();
    writer.control(&signal).unwrap();
    writer.block_run(nested, &run).unwrap();
    writer.control(&sigreturn).unwrap();
    writer.block_run(handler_callee, &run).unwrap();
    writer.control(&sigreturn).unwrap();
    writer.block_run(callee, &run).unwrap();
    writer.block_run(after, &run).unwrap();
    let binary = writer.finish(&[], Some(0)).unwrap();
    let instr = |addr| Event::Instr { addr, len: 4 };
    let events = vec![
        instr(0x1004),
        Event::Signal { signo: 14 },
        instr(0x3100),
        instr(0x1000),
        Event::Signal { signo: 14 },
        instr(0x3000),
        Event::Signal { signo: 14 },
        instr(0x3100),
        Event::SigReturn,
        Event::Call { target: 0x4000 },
        instr(0x4000),
        Event::Return,
        Event::SigReturn,
        Event::Call { target: 0x2000 },
        instr(0x2000),
        Event::Return,
        instr(0x1004),
    ];
    (binary, events)
}

#[test]
fn a_call_interrupted_by_a_signal_enters_its_callee_after_the_handler() {
    let (binary, expected) = signals_between_calls_and_callees();
    let open = || BinaryReader::new(Cursor::new(binary.clone()), false).unwrap();
    assert_eq!(events(&mut open()), expected);
    // Block runs, one by one and in batches, as their events.
    assert_same_items(&batched(&mut open()), &batched(&mut ItemByItem(open())));
    let mut text = TextWriter::new(Vec::new()).unwrap();
    for event in &expected {
        text.event(event).unwrap();
    }
    let text = text.finish().unwrap();
    let config = config("32768,8,64", "32768,8,64", "8388608,16,64");
    let from_blocks = simulate(&mut open(), config.clone()).unwrap();
    let from_events = simulate(&mut TextReader::new(&text[..]), config).unwrap();
    assert_eq!(from_blocks.arcs.len(), 2);
    assert_eq!(from_blocks.arcs, from_events.arcs);
    assert_eq!(from_blocks.self_cost, from_events.self_cost);
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

/// `binary` with the payload of its chunk at `chunk` replaced by `payload`,
/// compressed, and the trailer's pointer moved along.
fn with_payload(binary: &[u8], chunk: usize, payload: &[u8]) -> Vec<u8> {
    let stored = u32::from_le_bytes(binary[chunk + 4..chunk + 8].try_into().unwrap()) as usize;
    let packed = zstd::bulk::compress(payload, 3).unwrap();
    let mut out = binary[..chunk].to_vec();
    out.extend_from_slice(&[binary[chunk], 1, 0, 0]);
    out.extend_from_slice(&(packed.len() as u32).to_le_bytes());
    out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    out.extend_from_slice(&crc32fast::hash(&packed).to_le_bytes());
    out.extend_from_slice(&packed);
    out.extend_from_slice(&binary[chunk + 16 + stored..]);
    let trailer = out.len() - 8;
    let end_at = u64::from_le_bytes(out[trailer..].try_into().unwrap());
    let moved = end_at as i64 + out.len() as i64 - binary.len() as i64;
    out[trailer..].copy_from_slice(&(moved as u64).to_le_bytes());
    out
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

/// Where recording comes back on (`CALLGRIND_START_INSTRUMENTATION`), the
/// stacks and caches are emptied, as Callgrind empties its own: the same
/// read before and after misses twice.
#[test]
fn recording_switched_back_on_restarts() {
    let mut writer = TraceWriter::new(Vec::new(), false, &[("cmd", "test".into())]).unwrap();
    let read_once = |writer: &mut TraceWriter<Vec<u8>>| {
        let instr = Event::Instr {
            addr: 0x1000,
            len: 4,
        };
        let read = Event::Data {
            access: Access::Read,
            addr: 0x8000,
            size: 8,
        };
        for event in [instr, read] {
            writer.control(&Control::Event(event)).unwrap();
        }
    };
    read_once(&mut writer);
    writer.control(&Control::RecordingOff).unwrap();
    writer.control(&Control::Event(Event::Restart)).unwrap();
    read_once(&mut writer);
    let bytes = writer.finish(&[], Some(0)).unwrap();
    let read = events(&mut BinaryReader::new(Cursor::new(&bytes), false).unwrap());
    assert_eq!(read.len(), 5, "{read:?}");
    assert_eq!(read[2], Event::Restart, "{read:?}");
    let mut reader = BinaryReader::new(Cursor::new(&bytes), false).unwrap();
    let profile = simulate(&mut reader, linegrind::config::SimConfig::default()).unwrap();
    assert_eq!(profile.totals[linegrind::cost::EventKind::D1mr], 2);
}

/// A stack pointer given for a thread's next instruction belongs to that
/// instruction, in a signal handler that starts before it or in the
/// interrupted code after its handler returns, and no later one: read as
/// text, event by event, and as block runs from a binary trace alike.
#[test]
fn a_stack_pointer_across_a_signal_is_the_next_instructions() {
    let trace = "linegrind-trace text 1
        fn 401000 401010 main
        fn 402000 402010 f
        fn 403000 403010 g
        fn 500000 500010 handler
        i 401000 1
        call 402000
        sp 7fff0f00
        i 402000 1
        call 403000
        sp 7fff0e00
        i 403000 1
        sp 7fff8000  # the handler's first instruction's, overridden
        signal 11
        sp 7fff0e00
        i 500000 1
        sp 7fff0e80  # out of the handler (siglongjmp), leaving g's frame
        i 402001 1
        i 402002 1   # still f's: the stack pointer above came before the handler
        signal 11
        sp 7fff0d00
        i 500000 1
        sp 7fff0f80  # given before sigreturn: the next instruction's
        sigreturn
        i 401001 1   # main's, returned to by that stack pointer";
    let config = config("32768,8,64", "32768,8,64", "8388608,16,64");
    let original = events(&mut TextReader::new(trace.as_bytes()));
    let binary = to_binary(&original, false, &[]);
    let from_blocks = simulate(
        &mut BinaryReader::new(Cursor::new(&binary), false).unwrap(),
        config.clone(),
    )
    .unwrap();
    let from_events = simulate(&mut TextReader::new(trace.as_bytes()), config).unwrap();
    assert_eq!(from_blocks.arcs, from_events.arcs);
    assert_eq!(from_blocks.self_cost, from_events.self_cost);
    let self_ir =
        |name: &str| crate::support::self_cost(&from_events, name)[linegrind::cost::EventKind::Ir];
    // f ran 402000 to 402002: the stack pointer given before the first
    // handler was the handler's, so 402002 still ran in f's frame, and the
    // call of f holds it (and g's 403000; not the handlers').
    assert_eq!(
        [
            self_ir("main"),
            self_ir("f"),
            self_ir("g"),
            self_ir("handler")
        ],
        [2, 3, 1, 2]
    );
    let main_f = crate::support::arc(&from_events, "main", "f");
    assert_eq!(main_f.inclusive[linegrind::cost::EventKind::Ir], 4);
    // 401001 left f's frame by the stack pointer given before sigreturn: a
    // return to main, not a call of main from f.
    let calls =
        |caller: &str, callee: &str| crate::support::arc(&from_events, caller, callee).calls;
    assert_eq!((calls("main", "f"), calls("f", "g")), (1, 1));
    assert_eq!(from_events.arcs.len(), 2);
}
