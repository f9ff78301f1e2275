//! The binary trace format (see `docs/binary-format.md`): what `record`
//! writes and `sim` reads fastest.

mod format;
mod reader;
mod round_bytes;
mod runs;
mod varint;
mod writer;

pub use format::{
    Control, MAGIC, MAX_BLOCK_ACCESSES, MAX_BLOCK_INSTRS, MAX_CHUNK, MAX_INSTR_ACCESSES, Summary,
};
pub use reader::{BinaryReader, is_binary};
pub use writer::TraceWriter;
