//! Reading profiles back: callgrind-format files, ours or Callgrind's.

mod callgrind_file;

pub use callgrind_file::{
    CallEntry, FunctionEntry, FunctionIndex, FunctionKey, ParseError, ProfileFile,
};
