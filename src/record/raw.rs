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
mod tests;
