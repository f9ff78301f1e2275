//! The Valgrind tool's raw stream (src/record/valgrind/README.md), turned
//! into a binary trace as it arrives.

use std::fmt;
use std::io::{self, Read, Write};

use super::fault;
use crate::symbols::ElfObject;
use crate::trace::binary::{Control, TraceWriter};
use crate::trace::block::{BlockDef, BlockRun, Item};
use crate::trace::{Event, MarkEdge, ModuleMapping};

mod stream;

use stream::{Stream, describe};

/// What went wrong reading the tool's stream.
#[derive(Debug)]
pub enum RawError {
    /// Reading the stream failed.
    Io(io::Error),
    /// Writing the trace failed.
    Write(io::Error),
    /// Nothing arrived: the tool did not start.
    Empty,
    /// The stream does not follow the format, at this byte.
    Malformed { offset: u64, what: String },
    /// The stream ends inside a record, at this byte.
    Cut { offset: u64 },
}

impl fmt::Display for RawError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RawError::Io(err) => write!(f, "reading the recorder's stream: {err}"),
            RawError::Write(err) => write!(f, "writing the trace: {err}"),
            RawError::Empty => write!(f, "the recorder's tool did not start"),
            RawError::Malformed { offset, what } => {
                write!(
                    f,
                    "the recorder's stream is malformed at byte {offset}: {what}"
                )
            }
            RawError::Cut { offset } => {
                write!(
                    f,
                    "the recorder's stream ends inside a record, at byte {offset}"
                )
            }
        }
    }
}

impl std::error::Error for RawError {}

/// What the recording saw, besides the trace itself.
#[derive(Debug, Default)]
pub struct Recorded {
    /// Every object reported, in order.
    pub modules: Vec<ModuleMapping>,
    /// Every instruction address described (with repeats).
    pub instr_addrs: Vec<u64>,
    /// The tool saw the program end (its last record).
    pub finished: bool,
    /// Where the stream ended inside a record, which was left out.
    pub cut_at: Option<u64>,
    /// Block runs written when the program last called `execve`: if the
    /// stream ends there, the call replaced the program.
    pub exec_at: Option<u64>,
    /// Records the trace format cannot hold (a mark named with a line
    /// break, an object with no path), left out: how many, and the first.
    pub left_out: Option<(u64, String)>,
}

impl Recorded {
    /// Whether `event`, decoded from the record at stream byte `at`, goes
    /// into the trace; one it cannot hold is counted instead.
    fn holds(&mut self, at: u64, event: &Event) -> bool {
        let Err(why) = event.check() else {
            return true;
        };
        left_out(&mut self.left_out, || {
            format!("{why}, in the record at byte {at} of the stream")
        });
        false
    }
}

/// Counts a record left out of the trace in `count`, noting why of the
/// first (`first`).
pub fn left_out(count: &mut Option<(u64, String)>, first: impl FnOnce() -> String) {
    match count {
        Some((count, _)) => *count += 1,
        None => *count = Some((1, first())),
    }
}

/// More superblocks than any run instruments: a larger id is corruption.
const MAX_BLOCKS: usize = 1 << 28;

struct Described {
    id: u32,
    def: BlockDef,
    /// For each item: its ordinal among the guarded accesses.
    guard_of: Vec<Option<u32>>,
    guarded: usize,
    /// Accesses that every run makes.
    unguarded: usize,
}

/// Reads the tool's stream from `input` and writes it to `writer`. A
/// stream that ends inside a record (Valgrind killed while the tool wrote)
/// is written up to that record, which [`Recorded::cut_at`] tells.
pub fn convert<R: Read, W: Write>(
    input: R,
    writer: &mut TraceWriter<W>,
) -> Result<Recorded, RawError> {
    let mut stream = Stream::new(input);
    if !stream.ensure(1)? {
        return Err(RawError::Empty);
    }
    match stream.bytes::<4>() {
        Ok(magic) if magic == *b"LGR1" => {}
        Ok(_) => return Err(stream.malformed("not a linegrind tool stream")),
        Err(RawError::Cut { .. }) => return Err(RawError::Empty),
        Err(err) => return Err(err),
    }
    let mut converter = Converter::new(writer);
    while let Some(tag) = stream.tag()? {
        let at = stream.offset() - 1;
        match converter.record(&mut stream, tag, at) {
            Err(RawError::Cut { .. }) => {
                converter.recorded.cut_at = Some(at);
                break;
            }
            done => done?,
        }
    }
    converter.finish(stream.offset())
}

/// The state of a conversion between records.
struct Converter<'w, W: Write> {
    writer: &'w mut TraceWriter<W>,
    recorded: Recorded,
    /// Indexed by the tool's block id (the tool counts them up from 0).
    blocks: Vec<Option<Described>>,
    run: BlockRun,
    running: Option<usize>,
    /// Threads that ended, written once the run in progress (their last
    /// block's) is.
    ended: Vec<u32>,
    /// The `B` record of the run in progress: what the writer refuses of
    /// the run is told there.
    run_at: u64,
}

impl<'w, W: Write> Converter<'w, W> {
    fn new(writer: &'w mut TraceWriter<W>) -> Self {
        Converter {
            writer,
            recorded: Recorded::default(),
            blocks: Vec::new(),
            run: BlockRun::default(),
            running: None,
            ended: Vec::new(),
            run_at: 0,
        }
    }

    /// Decodes and writes the record tagged `tag` that starts at stream
    /// byte `at`. A record the stream ends inside changes nothing: its
    /// fields are all read before anything is written or kept.
    fn record<R: Read>(
        &mut self,
        stream: &mut Stream<R>,
        tag: u8,
        at: u64,
    ) -> Result<(), RawError> {
        // Records that continue the current block run.
        match tag {
            b'A' => {
                self.run.addrs.push(stream.u64()?);
                return Ok(());
            }
            b'G' | b'X' => {
                let Some(index) = self.running else {
                    return Err(stream.malformed("an access outside any block"));
                };
                let block = self.blocks[index]
                    .as_ref()
                    .expect("a running block is described");
                if tag == b'G' {
                    let item = stream.u16()? as usize;
                    let addr = stream.u64()?;
                    let Some(&Some(ordinal)) = block.guard_of.get(item) else {
                        return Err(malformed(at, "a guarded access that is not guarded"));
                    };
                    self.run.guards.resize(block.guarded, false);
                    self.run.guards[ordinal as usize] = true;
                    self.run.addrs.push(addr);
                } else {
                    self.run.exit = Some(u32::from(stream.u16()?));
                }
                return Ok(());
            }
            b'Q' => {
                self.ended.push(stream.u32()?);
                return Ok(());
            }
            // Heap events come from helpers at the block's start (an
            // allocation function's entry, an allocation's return): they
            // precede the run's instructions and do not end it.
            b'H' => {
                let addr = stream.u64()?;
                let size = stream.u64()?;
                return wrote(at, event(self.writer, Event::Alloc { addr, size }));
            }
            b'F' => {
                let addr = stream.u64()?;
                return wrote(at, event(self.writer, Event::Free { addr }));
            }
            _ => {}
        }
        // Anything else ends the run in progress; a signal, or the end of a
        // program that a fault killed, may have stopped it part-way. The
        // fields of these records are read before the run in progress is
        // written: where the stream ends inside one, that run is written
        // as the stream's last.
        match tag {
            b'S' => {
                let signo = stream.u32()?;
                let stop = Stop::read(stream, Some(signo))?;
                self.end_run(at, Some(&stop))?;
                wrote(at, event(self.writer, Event::Signal { signo }))
            }
            b'E' => {
                let stop = Stop::read(stream, None)?;
                self.end_run(at, Some(&stop))?;
                self.recorded.finished = true;
                Ok(())
            }
            b'B' => {
                let tool_id = stream.u32()?;
                let sp = stream.u64()?;
                if !matches!(self.blocks.get(tool_id as usize), Some(Some(_))) {
                    return Err(malformed(
                        at,
                        format!("a run of undescribed block {tool_id}"),
                    ));
                }
                self.end_run(at, None)?;
                self.run.sp = Some(sp);
                self.running = Some(tool_id as usize);
                self.run_at = at;
                Ok(())
            }
            b'D' => {
                let (tool_id, def) = describe(stream)?;
                if tool_id as usize >= MAX_BLOCKS {
                    return Err(stream.malformed(format!("block id {tool_id} is out of range")));
                }
                self.end_run(at, None)?;
                self.describe(tool_id as usize, def);
                Ok(())
            }
            b'T' => {
                let tid = stream.u32()?;
                self.end_run(at, None)?;
                wrote(at, event(self.writer, Event::Thread { tid }))
            }
            b'R' => {
                stream.u32()?;
                self.end_run(at, None)?;
                wrote(at, event(self.writer, Event::SigReturn))
            }
            b'M' => {
                let edge = match stream.u8()? {
                    0 => MarkEdge::Begin,
                    _ => MarkEdge::End,
                };
                let name = stream.string()?;
                self.end_run(at, None)?;
                let mark = Event::Mark { edge, name };
                if self.recorded.holds(at, &mark) {
                    wrote(at, event(self.writer, mark))?;
                }
                Ok(())
            }
            b'O' => {
                let bias = stream.u64()?;
                let text = stream.u64()?;
                let size = stream.u64()?;
                let path = stream.string()?;
                self.end_run(at, None)?;
                let module = mapping(path, bias, (text, text.wrapping_add(size)));
                let record = Event::Module(Box::new(module.clone()));
                if self.recorded.holds(at, &record) {
                    self.recorded.modules.push(module);
                    wrote(at, event(self.writer, record))?;
                }
                Ok(())
            }
            b'I' => {
                let control = match stream.u8()? {
                    0 => Control::RecordingOff,
                    _ => Control::Event(Event::Restart),
                };
                self.end_run(at, None)?;
                wrote(at, self.writer.control(&control))
            }
            b'P' => {
                self.end_run(at, None)?;
                self.recorded.exec_at = Some(self.writer.totals().block_runs);
                Ok(())
            }
            other => Err(stream.malformed(format!("unknown record `{}`", other.escape_ascii()))),
        }
    }

    /// Writes the run in progress, which the record at stream byte `at`
    /// ends (stopped by `stop` where the record is a signal's or the
    /// end's), then the threads that ended in it.
    fn end_run(&mut self, at: u64, stop: Option<&Stop>) -> Result<(), RawError> {
        if let Some(index) = self.running.take() {
            let block = self.blocks[index]
                .as_ref()
                .expect("a running block is described");
            self.run.guards.resize(block.guarded, false);
            wrote(self.run_at, end_run(self.writer, block, &self.run, stop))?;
            self.run.clear();
        } else if !self.run.addrs.is_empty() {
            return Err(malformed(at, "an access outside any block"));
        }
        for tid in self.ended.drain(..) {
            wrote(at, event(self.writer, Event::ThreadExit { tid }))?;
        }
        Ok(())
    }

    /// Keeps the description of the tool's block `index`, and defines it
    /// in the trace.
    fn describe(&mut self, index: usize, def: BlockDef) {
        self.recorded
            .instr_addrs
            .extend(def.instrs.iter().map(|instr| instr.addr));
        let (mut guarded, mut unguarded) = (0, 0);
        let guard_of = def
            .items
            .iter()
            .map(|item| match item {
                Item::Access { guarded: true, .. } => {
                    guarded += 1;
                    Some(guarded - 1)
                }
                Item::Access { guarded: false, .. } => {
                    unguarded += 1;
                    None
                }
                _ => None,
            })
            .collect();
        let id = self.writer.define_block(&def);
        if self.blocks.len() <= index {
            self.blocks.resize_with(index + 1, || None);
        }
        self.blocks[index] = Some(Described {
            id,
            def,
            guard_of,
            guarded: guarded as usize,
            unguarded,
        });
    }

    /// Writes what the stream left in progress at its end, stream byte
    /// `at` (Valgrind killed): the run, cut short only where it lacks
    /// addresses, and the threads that ended.
    fn finish(mut self, at: u64) -> Result<Recorded, RawError> {
        self.end_run(at, None)?;
        Ok(self.recorded)
    }
}

/// A signal's record or the end's, which stop the thread's run in
/// progress.
struct Stop {
    /// The signal; none for the end of the program.
    signo: Option<u32>,
    /// The address the thread resumes at, or stopped at for good.
    ip: u64,
    /// Whether the run had gone through its block's end.
    ended: bool,
}

impl Stop {
    /// The fields after a signal's number (`signo`) or the end's tag.
    fn read<R: Read>(stream: &mut Stream<R>, signo: Option<u32>) -> Result<Stop, RawError> {
        Ok(Stop {
            signo,
            ip: stream.u64()?,
            ended: stream.u8()? != 0,
        })
    }
}

/// Writes a run that `stop` ended: whole, or what completed of it when a
/// fault cut it short. Without `stop` (the stream ended there, Valgrind
/// killed), only a run short of addresses was cut short.
fn end_run<W: Write>(
    writer: &mut TraceWriter<W>,
    block: &Described,
    run: &BlockRun,
    stop: Option<&Stop>,
) -> io::Result<()> {
    if stop.is_some_and(|stop| stop.ended) {
        return writer.block_run(block.id, run);
    }
    // A fault signal, or the end of a program that a fault may have killed.
    let fault = stop.is_some_and(|stop| stop.signo.is_none_or(fault::is_fault));
    let ip = stop.map_or(0, |stop| stop.ip);
    // Nearly every run: no fault, every address made; told without a walk
    // of the block.
    let made = block.unguarded + run.guards.iter().filter(|&&happened| happened).count();
    if !fault && run.addrs.len() >= made {
        return writer.block_run(block.id, run);
    }
    match fault::completed(&block.def, run, fault, ip) {
        Some(ran) => fault::write_completed(writer, &block.def, run, ran),
        None => writer.block_run(block.id, run),
    }
}

/// What writing what the record at stream byte `at` said came to: the
/// writer refuses what the stream got wrong (told at that record), or the
/// output failed.
fn wrote(at: u64, result: io::Result<()>) -> Result<(), RawError> {
    result.map_err(|err| match err.kind() {
        io::ErrorKind::InvalidInput | io::ErrorKind::InvalidData => RawError::Malformed {
            offset: at,
            what: err.to_string(),
        },
        _ => RawError::Write(err),
    })
}

/// The stream's record at byte `at` breaks the format.
fn malformed(at: u64, what: impl Into<String>) -> RawError {
    RawError::Malformed {
        offset: at,
        what: what.into(),
    }
}

fn event<W: Write>(writer: &mut TraceWriter<W>, event: Event) -> io::Result<()> {
    writer.control(&Control::Event(event))
}

/// An object as mapped: its whole loadable range and build-id from the
/// file when it can be read here, else the text range Valgrind reported.
fn mapping(path: String, bias: u64, text: (u64, u64)) -> ModuleMapping {
    let object = ElfObject::open(std::path::Path::new(&path)).ok();
    let range = object
        .as_ref()
        .and_then(ElfObject::load_range)
        .map(|(start, end)| (start.wrapping_add(bias), end.wrapping_add(bias)))
        .unwrap_or(text);
    ModuleMapping {
        build_id: object
            .as_ref()
            .and_then(|o| o.build_id())
            .map(<[u8]>::to_vec),
        path,
        bias,
        range: Some(range),
        embedded: false,
    }
}

#[cfg(test)]
mod tests {
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
}
