//! The binary trace format: lossless round trips with the text format,
//! symbols, signals and restarts read as the text gives them; damaged
//! traces (`damage`) and batches (`batches`) in their own files.

use std::io::Cursor;

use proptest::prelude::*;

use linegrind::pipeline::simulate_each;
use linegrind::simulator::simulate;
use linegrind::trace::batch::{BATCH_ADDRS, Replayed, RunArrays};
use linegrind::trace::binary::{BinaryReader, Control, MAX_CHUNK, TraceWriter};
use linegrind::trace::block::{BlockDef, BlockInstr, BlockRun, Item, JumpKind};
use linegrind::trace::{
    Access, AnyReader, Blocker, Event, Feed, Format, FunctionSymbol, Location, TextReader,
    TextWriter, TraceError, TraceItem, TraceRead, detect,
};

use crate::support::{config, example_traces, is_recorded, root};

mod batches;
mod damage;

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

/// A symbol table's recording and resume records, which tell where the
/// stream is, are dropped: the table is given before the stream.
#[test]
fn a_symbol_tables_recording_and_resume_records_are_dropped() {
    let instr = Event::Instr {
        addr: 0x1000,
        len: 4,
    };
    let function = Event::Function(Box::new(FunctionSymbol {
        start: 0x1000,
        end: 0x1040,
        name: "f".into(),
        file: None,
        line: 0,
    }));
    let symbols = [
        Control::Resume { thread: 3 },
        Control::Event(Event::Restart),
        Control::Event(function.clone()),
        Control::RecordingOff,
    ];
    let binary = to_binary(std::slice::from_ref(&instr), false, &symbols);
    let read = events(&mut BinaryReader::new(Cursor::new(&binary), false).unwrap());
    assert_eq!(read, [function, instr.clone()]);
    // A record of what happens in the stream has no place there.
    let thread = [Control::Event(Event::Thread { tid: 2 })];
    let binary = to_binary(std::slice::from_ref(&instr), false, &thread);
    let err = open_error(&binary);
    assert!(
        err.ends_with(
            "corrupt chunk: a record of the stream in the symbol table (at byte 0 of its data)"
        ),
        "{err}"
    );
}

/// Every EVENTS chunk starts with a resume record naming the thread it
/// runs in: one that names another thread than the one running switches to
/// it, as a `thread` record would, read event by event or into batches.
#[test]
fn a_chunk_runs_in_the_thread_its_resume_record_names() {
    let instr = Event::Instr {
        addr: 0x1000,
        len: 4,
    };
    let binary = to_binary(std::slice::from_ref(&instr), false, &[]);
    let at = chunks_of(&binary, &[4])[0];
    let stored = u32::from_le_bytes(binary[at + 4..at + 8].try_into().unwrap()) as usize;
    let mut payload = binary[at + 16..at + 16 + stored].to_vec();
    // The resume record's tag (control record 17) and thread.
    assert_eq!(payload[..2], [17 << 2 | 2, 1]);
    payload[1] = 5;
    let resumed = with_payload(&binary, at, &payload);
    let open = || BinaryReader::new(Cursor::new(&resumed), false).unwrap();
    assert_eq!(events(&mut open()), [Event::Thread { tid: 5 }, instr]);
    let items = batched(&mut open());
    assert!(items[0].0.contains("Thread { tid: 5 }"), "{items:?}");
    assert_same_items(&items, &batched(&mut ItemByItem(open())));
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

/// The offsets of `binary`'s chunks of the kinds in `kinds`.
fn chunks_of(binary: &[u8], kinds: &[u8]) -> Vec<usize> {
    chunks(binary)
        .into_iter()
        .filter_map(|(at, kind)| kinds.contains(&kind).then_some(at))
        .collect()
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
