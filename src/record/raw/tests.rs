use super::stream::ITEM_GUARDED;
use super::*;
use crate::trace::Access;
use crate::trace::TraceRead;
use crate::trace::binary::BinaryReader;
use crate::trace::block::JumpKind;

/// A stream describing block 0: one instruction of `len` bytes.
fn stream(len: u8) -> Vec<u8> {
    let mut bytes = b"LGR1D".to_vec();
    bytes.extend(0u32.to_le_bytes());
    bytes.extend(0x1000u64.to_le_bytes());
    bytes.extend(1u16.to_le_bytes());
    bytes.push(0);
    bytes.extend(0u16.to_le_bytes());
    bytes.push(len);
    bytes.extend(0u16.to_le_bytes());
    bytes
}

fn convert_stream(bytes: &[u8]) -> Result<Recorded, RawError> {
    let mut writer = TraceWriter::new(Vec::new(), false, &[]).unwrap();
    convert(bytes, &mut writer)
}

/// A `D` record: block `id` at `addr`, instructions of 4 bytes with
/// the given items (tool item kinds, size 8), ending by `end`.
fn describe_record(id: u32, addr: u64, instrs: &[&[u8]], end: JumpKind) -> Vec<u8> {
    let mut bytes = vec![b'D'];
    bytes.extend(id.to_le_bytes());
    bytes.extend(addr.to_le_bytes());
    bytes.extend((instrs.len() as u16).to_le_bytes());
    bytes.push(end.code());
    for (k, items) in instrs.iter().enumerate() {
        bytes.extend((4 * k as u16).to_le_bytes());
        bytes.push(4);
        bytes.extend((items.len() as u16).to_le_bytes());
        for &kind in *items {
            bytes.push(kind);
            bytes.extend(8u16.to_le_bytes());
        }
    }
    bytes
}

fn run_record(id: u32, sp: u64, addrs: &[u64]) -> Vec<u8> {
    let mut bytes = vec![b'B'];
    bytes.extend(id.to_le_bytes());
    bytes.extend(sp.to_le_bytes());
    for addr in addrs {
        bytes.push(b'A');
        bytes.extend(addr.to_le_bytes());
    }
    bytes
}

/// An `S` record: signal `signo`, the thread to resume at `ip`, and
/// whether its last run had ended.
fn signal_record(signo: u32, ip: u64, ended: bool) -> Vec<u8> {
    let mut bytes = vec![b'S'];
    bytes.extend(signo.to_le_bytes());
    bytes.extend(ip.to_le_bytes());
    bytes.push(u8::from(ended));
    bytes
}

/// An `E` record: the last thread stopped at `ip`, and whether its last
/// run had ended.
fn end_record(ip: u64, ended: bool) -> Vec<u8> {
    let mut bytes = vec![b'E'];
    bytes.extend(ip.to_le_bytes());
    bytes.push(u8::from(ended));
    bytes
}

/// How many instructions `events` hold.
fn instructions(events: &[Event]) -> usize {
    events
        .iter()
        .filter(|event| matches!(event, Event::Instr { .. }))
        .count()
}

#[test]
fn a_fault_cuts_a_run_short_and_a_pending_call_enters_what_completed() {
    const READ: u8 = 1;
    const WRITE: u8 = 2;
    let mut bytes = b"LGR1".to_vec();
    // Block 0 calls 0x2000, whose block 1 reads, writes (and faults),
    // then writes again.
    bytes.extend(describe_record(0, 0x1000, &[&[]], JumpKind::Call));
    bytes.extend(run_record(0, 0x8000, &[]));
    let callee: &[&[u8]] = &[&[READ], &[WRITE], &[WRITE]];
    bytes.extend(describe_record(1, 0x2000, callee, JumpKind::Return));
    bytes.extend(run_record(1, 0x7ff8, &[0x500, 0x600]));
    bytes.extend(signal_record(11, 0x2004, false));
    bytes.push(b'R');
    bytes.extend(11u32.to_le_bytes());
    // The write runs again, as the first instruction of block 2.
    let rest: &[&[u8]] = &[&[WRITE], &[WRITE]];
    bytes.extend(describe_record(2, 0x2004, rest, JumpKind::Return));
    bytes.extend(run_record(2, 0x7ff8, &[0x600, 0x601]));
    bytes.extend(end_record(0x3000, true));

    let events = converted_events(&bytes);
    let instr = |addr| Event::Instr { addr, len: 4 };
    let data = |access, addr| Event::Data {
        access,
        addr,
        size: 8,
    };
    assert_eq!(
        events,
        [
            Event::StackPointer { sp: 0x8000 },
            instr(0x1000),
            Event::StackPointer { sp: 0x7ff8 },
            Event::Call { target: 0x2000 },
            instr(0x2000),
            data(Access::Read, 0x500),
            Event::Signal { signo: 11 },
            Event::SigReturn,
            Event::StackPointer { sp: 0x7ff8 },
            instr(0x2004),
            data(Access::Write, 0x600),
            instr(0x2008),
            data(Access::Write, 0x601),
            Event::Return,
        ]
    );
}

/// The events of the trace that `stream` converts into.
fn converted_events(stream: &[u8]) -> Vec<Event> {
    let mut writer = TraceWriter::new(Vec::new(), false, &[]).unwrap();
    convert(stream, &mut writer).unwrap();
    let trace = writer.finish(&[], None).unwrap();
    let mut reader =
        crate::trace::binary::BinaryReader::new(io::Cursor::new(trace), false).unwrap();
    let mut events = Vec::new();
    while let Some(event) = crate::trace::TraceRead::next_event(&mut reader).unwrap() {
        events.push(event);
    }
    events
}

#[test]
fn a_program_a_fault_killed_ends_before_the_faulting_instruction() {
    const WRITE: u8 = 2;
    let mut bytes = b"LGR1".to_vec();
    let writes: &[&[u8]] = &[&[WRITE], &[], &[WRITE], &[WRITE]];
    bytes.extend(describe_record(0, 0x1000, writes, JumpKind::Boring));
    bytes.extend(run_record(0, 0x8000, &[0x500, 0x600]));
    let mut killed = bytes.clone();
    killed.extend(end_record(0x1008, false));
    // The write at 0x1008 faulted: two instructions completed.
    assert_eq!(instructions(&converted_events(&killed)), 2);
    // Valgrind was killed: the stream stops after the second address,
    // whose instruction is taken as the last to start.
    assert_eq!(instructions(&converted_events(&bytes)), 2);
    // A program that exited: its last run is whole.
    let mut exited = bytes.clone();
    exited.extend(b"A");
    exited.extend(0x700u64.to_le_bytes());
    exited.extend(end_record(0x1010, true));
    assert_eq!(instructions(&converted_events(&exited)), 4);
}

/// A `SIGSEGV` that another process sent arrives between two runs; at
/// the start of a block that loops on itself, the address is the one a
/// fault of the block's last access leaves, and only the tool's word
/// that the run had ended tells them apart.
#[test]
fn a_fault_signal_between_two_runs_of_one_block_leaves_the_first_whole() {
    const WRITE: u8 = 2;
    let writes: &[&[u8]] = &[&[WRITE], &[], &[WRITE], &[WRITE]];
    let mut bytes = b"LGR1".to_vec();
    bytes.extend(describe_record(0, 0x1000, writes, JumpKind::Boring));
    bytes.extend(run_record(0, 0x8000, &[0x500, 0x600, 0x700]));
    let instrs = |ended: bool| {
        let mut stream = bytes.clone();
        stream.extend(signal_record(11, 0x1000, ended));
        instructions(&converted_events(&stream))
    };
    assert_eq!(instrs(true), 4);
    // The last write faulted: the block runs again from its start.
    assert_eq!(instrs(false), 0);
}

#[test]
fn a_thread_ends_after_its_last_run_even_one_a_fault_cut_short() {
    const WRITE: u8 = 2;
    let writes: &[&[u8]] = &[&[WRITE], &[], &[WRITE], &[WRITE]];
    let mut bytes = b"LGR1".to_vec();
    bytes.extend(describe_record(0, 0x1000, writes, JumpKind::Boring));
    let exit = |bytes: &mut Vec<u8>| {
        bytes.push(b'Q');
        bytes.extend(1u32.to_le_bytes());
    };
    let instrs_before_exit = |events: &[Event]| {
        let at = events
            .iter()
            .position(|event| *event == Event::ThreadExit { tid: 1 })
            .expect("the thread's end is written");
        instructions(&events[..at])
    };
    // The thread's end comes while its last run is in progress: the
    // whole run precedes it, not the next.
    let mut ended = bytes.clone();
    ended.extend(run_record(0, 0x8000, &[0x500, 0x600, 0x700]));
    exit(&mut ended);
    ended.extend(run_record(0, 0x8000, &[0x500, 0x600, 0x700]));
    ended.extend(end_record(0x1010, true));
    assert_eq!(instrs_before_exit(&converted_events(&ended)), 4);
    // A fault that killed the program still cuts that run short.
    let mut killed = bytes;
    killed.extend(run_record(0, 0x8000, &[0x500, 0x600]));
    exit(&mut killed);
    killed.extend(end_record(0x1008, false));
    assert_eq!(instrs_before_exit(&converted_events(&killed)), 2);
}

/// Valgrind killed while the tool wrote: the stream ends inside a
/// record, which is left out, and what came before is written as at
/// the end of a stream, the run in progress with the addresses it got.
#[test]
fn a_stream_that_ends_inside_a_record_is_written_up_to_it() {
    const WRITE: u8 = 2;
    let guarded = WRITE | ITEM_GUARDED;
    let mut whole = b"LGR1".to_vec();
    whole.extend(describe_record(
        0,
        0x1000,
        &[&[WRITE], &[guarded]],
        JumpKind::Boring,
    ));
    whole.extend(run_record(0, 0x8000, &[0x500]));
    let mut guard = vec![b'G'];
    guard.extend(1u16.to_le_bytes());
    guard.extend(0x600u64.to_le_bytes());
    for record in [
        run_record(0, 0x8000, &[]),
        describe_record(1, 0x2000, &[&[WRITE]], JumpKind::Boring),
        mark_record(true, "paint"),
        guard,
        end_record(0x1008, true),
    ] {
        for cut in 1..record.len() {
            let stream = [&whole[..], &record[..cut]].concat();
            let mut writer = TraceWriter::new(Vec::new(), false, &[]).unwrap();
            let recorded = convert(&stream[..], &mut writer).unwrap();
            assert_eq!(recorded.cut_at, Some(whole.len() as u64));
            assert!(!recorded.finished);
            let events = converted_events(&stream);
            assert_eq!(instructions(&events), 2, "{events:?}");
            let writes = events.iter().filter(|e| matches!(e, Event::Data { .. }));
            assert_eq!(writes.count(), 1, "{events:?}");
        }
    }
    // Cut inside the stream's first four bytes, nothing arrived.
    assert!(matches!(convert_stream(b"LG"), Err(RawError::Empty)));
}

/// An `M` record: a mark's edge and name.
fn mark_record(begin: bool, name: &str) -> Vec<u8> {
    let mut bytes = vec![b'M', u8::from(!begin)];
    bytes.extend((name.len() as u16).to_le_bytes());
    bytes.extend(name.as_bytes());
    bytes
}

#[test]
fn records_the_format_cannot_hold_are_left_out_and_counted() {
    let mut bytes = stream(4);
    bytes.extend(mark_record(true, "paint"));
    let first_bad = bytes.len();
    bytes.extend(mark_record(true, ""));
    bytes.extend(mark_record(false, "two\nlines"));
    // An object without a path.
    bytes.push(b'O');
    for word in [0u64, 0x1000, 0x100] {
        bytes.extend(word.to_le_bytes());
    }
    bytes.extend(0u16.to_le_bytes());
    bytes.extend(run_record(0, 0x7000, &[]));
    bytes.extend(mark_record(false, "paint"));
    let mut writer = TraceWriter::new(Vec::new(), false, &[]).unwrap();
    let recorded = convert(&bytes[..], &mut writer).unwrap();
    assert_eq!(
        recorded.left_out,
        Some((
            3,
            format!("an empty mark name, in the record at byte {first_bad} of the stream")
        ))
    );
    assert!(recorded.modules.is_empty());
    let trace = writer.finish(&[], None).unwrap();
    let mut reader = BinaryReader::new(io::Cursor::new(trace), false).unwrap();
    let mut marks = Vec::new();
    while let Some(event) = reader.next_event().unwrap() {
        if let Event::Mark { edge, name } = event {
            marks.push((edge, name));
        }
    }
    let paint = String::from("paint");
    assert_eq!(
        marks,
        [(MarkEdge::Begin, paint.clone()), (MarkEdge::End, paint)]
    );
}

#[test]
fn a_run_the_writer_refuses_is_malformed_at_its_byte() {
    let mut bytes = stream(4);
    let run_at = bytes.len();
    bytes.extend(run_record(0, 0x7000, &[0x5000]));
    // The run ends at the next record, told at its own.
    bytes.extend(mark_record(true, "after"));
    let Err(err) = convert_stream(&bytes) else {
        panic!("a run with an address its block has no access for was accepted");
    };
    assert_eq!(
        err.to_string(),
        format!(
            "the recorder's stream is malformed at byte {run_at}: \
             block 0: a run with 1 addresses for 0 accesses"
        )
    );
}

#[test]
fn block_descriptions_need_instructions_of_some_bytes() {
    assert!(convert_stream(&stream(4)).is_ok());
    let Err(err) = convert_stream(&stream(0)) else {
        panic!("a 0-byte instruction was accepted");
    };
    // The length is byte 22; the offset is just past it, as elsewhere.
    assert_eq!(
        err.to_string(),
        "the recorder's stream is malformed at byte 23: an instruction of 0 bytes"
    );
}
