//! Traces: the event model and the readers that stream events from files:
//! linegrind's text and binary formats, Valgrind Lackey's and Dinero's.
//!
//! A trace is a sequence of [`Event`]s in execution order; each belongs to
//! the current thread. Readers never hold the whole trace: they yield one
//! event at a time and can say where in the input the last one came from.

pub mod batch;
pub mod binary;
pub mod block;
mod call_inference;
mod code_objects;
mod convert;
mod din;
mod error;
mod hex;
mod lackey;
pub(crate) mod lines;
mod open;
mod text;
mod thread_count;
mod valid;

pub use batch::Feed;
pub use call_inference::CallInference;
pub use code_objects::{Binary, BinaryError, CodeObjects, Transfer, VALGRIND_PIE_BIAS};
pub use convert::{Blocker, TextWriter};
pub use din::{DinForm, DinReader};
pub use error::{Location, TraceError, TraceErrorKind};
pub use lackey::LackeyReader;
pub use open::{AnyReader, Format, ReadOptions, detect, imported_format};
pub use text::TextReader;
pub use thread_count::ThreadCount;

/// A data access kind. A modify reads and writes the same bytes in one
/// instruction and counts as one write, as in Callgrind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Access {
    Read,
    Write,
    Modify,
}

/// Start or end of a named section of the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MarkEdge {
    Begin,
    End,
}

/// A function's address range and source position, carried in the trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FunctionSymbol {
    /// First address.
    pub start: u64,
    /// One past the last address.
    pub end: u64,
    pub name: String,
    pub file: Option<String>,
    /// Source line, 0 when not given.
    pub line: u32,
}

/// An ELF object mapped into the traced process.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModuleMapping {
    pub path: String,
    /// Runtime address minus ELF address.
    pub bias: u64,
    /// Runtime `[start, end)`; when absent, the object's loadable segments
    /// plus the bias.
    pub range: Option<(u64, u64)>,
    /// The object's GNU build-id, to check the file against.
    pub build_id: Option<Vec<u8>>,
    /// Whether the trace carries this object's symbols for all the code
    /// that ran, so the object itself is never read.
    pub embedded: bool,
}

/// The source position of one instruction, carried in the trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineSymbol {
    pub addr: u64,
    pub line: u32,
    /// The file, when it is not the function's own (inlined code).
    pub file: Option<String>,
}

/// One trace event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// One instruction of `len` bytes ran at `addr`.
    Instr { addr: u64, len: u32 },
    /// The most recent instruction of this thread accessed `size` bytes.
    Data {
        access: Access,
        addr: u64,
        size: u32,
    },
    /// The most recent instruction called `target`.
    Call { target: u64 },
    /// The most recent instruction returned.
    Return,
    /// The next instruction of this thread starts a block and runs with
    /// stack pointer `sp`: calls and returns then follow Callgrind's
    /// stack-pointer rules.
    StackPointer { sp: u64 },
    /// Following events belong to thread `tid`.
    Thread { tid: u32 },
    /// Thread `tid` has ended: its calls and signal handlers close, and a
    /// later thread given the same id (Valgrind reuses them) starts afresh.
    ThreadExit { tid: u32 },
    /// A signal handler starts in this thread, on a new isolated stack.
    Signal { signo: u32 },
    /// The innermost signal handler of this thread returns.
    SigReturn,
    /// A named section begins or ends.
    Mark { edge: MarkEdge, name: String },
    /// A heap block was allocated.
    Alloc { addr: u64, size: u64 },
    /// A heap block was freed.
    Free { addr: u64 },
    /// Every cache is flushed: each resident line's residency ends, as at
    /// the end of the run (Dinero's flush record).
    Flush,
    /// Recording starts again after a part of the run it left out
    /// (`CALLGRIND_START_INSTRUMENTATION`): every thread's open calls
    /// return, each of its contexts (its own, and the signal handlers it
    /// still runs) starts again with an empty stack, and every cache is
    /// flushed, as Callgrind resets its call stacks and caches whenever
    /// instrumentation is switched on or off.
    Restart,
    /// Symbol information for the code in a range.
    Function(Box<FunctionSymbol>),
    /// The source position of one instruction.
    Line(Box<LineSymbol>),
    /// An ELF object mapped into the process.
    Module(Box<ModuleMapping>),
    /// The code in `[start, end)` is PLT stubs.
    Plt { start: u64, end: u64 },
}

/// One run of a block, as a block-structured trace gives it.
#[derive(Clone, Copy)]
pub struct BlockItem<'a> {
    /// The block's number in its trace.
    pub id: u32,
    pub def: &'a block::BlockDef,
    pub run: block::RunRef<'a>,
    /// The target of the call that enters this block, if the thread's
    /// previous block ended in a call: the event before the block.
    pub call: Option<u64>,
    /// How the run leaves the block.
    pub leaving: block::JumpKind,
}

/// What a trace gives next: an event, or a whole block run.
pub enum TraceItem<'a> {
    Event(Event),
    Block(BlockItem<'a>),
}

/// A streaming source of events.
pub trait TraceRead {
    /// The next event, or `None` at the end of the trace.
    fn next_event(&mut self) -> Result<Option<Event>, TraceError>;

    /// Where the last event returned came from.
    fn location(&self) -> Location;

    /// The next event or block run. Block-structured traces give runs whole,
    /// which the simulator takes much faster than their events one by one.
    /// A reader is read either by events or by items, not both.
    fn next_item(&mut self) -> Result<Option<TraceItem<'_>>, TraceError> {
        Ok(self.next_event()?.map(TraceItem::Event))
    }

    /// Adds items to `feed`'s batch until it is full; false once the trace
    /// has ended. Readers of block-structured traces may decode straight
    /// into the batch.
    fn fill(&mut self, feed: &mut Feed) -> Result<bool, TraceError> {
        while !feed.batch.is_full() {
            match self.next_item()? {
                Some(item) => feed.push_item(item),
                None => return Ok(false),
            }
            feed.locate(self.location());
        }
        Ok(true)
    }

    /// Whether data accesses may come without an instruction (data-only
    /// traces such as the CS:APP cache-lab ones): they are then charged to
    /// the `(unknown)` instruction instead of being an error.
    fn detached_data(&self) -> bool {
        false
    }
}
