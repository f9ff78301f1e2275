//! Opening a trace file in whichever format it is, told by its content.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Seek};

use super::binary::{BinaryReader, is_binary};
use super::{Event, Location, TextReader, TraceError, TraceItem, TraceRead};

/// The formats linegrind reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Text,
    Binary,
}

/// A trace being read, in its format.
pub enum AnyReader {
    Text(TextReader<BufReader<File>>),
    Binary(Box<BinaryReader<BufReader<File>>>),
}

impl AnyReader {
    /// Reads `file`, telling the format by its first bytes. A binary trace
    /// without its end is an error unless `allow_truncated`.
    pub fn new(file: File, allow_truncated: bool) -> Result<AnyReader, TraceError> {
        let io = |err: io::Error| TraceError {
            location: Location::Offset(0),
            kind: super::TraceErrorKind::Io(err),
        };
        let mut input = BufReader::with_capacity(1 << 20, file);
        let start = input.fill_buf().map_err(io)?;
        if is_binary(start) {
            let reader = BinaryReader::new(input, allow_truncated)?;
            return Ok(AnyReader::Binary(Box::new(reader)));
        }
        input.rewind().map_err(io)?;
        Ok(AnyReader::Text(TextReader::new(input)))
    }

    /// Which format the trace is in.
    pub fn format(&self) -> Format {
        match self {
            AnyReader::Text(_) => Format::Text,
            AnyReader::Binary(_) => Format::Binary,
        }
    }

    /// The instructions and data accesses the trace holds, when it says so
    /// up front (a complete binary trace).
    pub fn events(&self) -> Option<u64> {
        match self {
            AnyReader::Binary(reader) => reader
                .summary()
                .map(|summary| summary.instructions + summary.accesses),
            AnyReader::Text(_) => None,
        }
    }

    /// Why reading stopped before the end of a truncated binary trace.
    pub fn truncated(&self) -> Option<&str> {
        match self {
            AnyReader::Binary(reader) => reader.truncated(),
            AnyReader::Text(_) => None,
        }
    }
}

impl TraceRead for AnyReader {
    #[inline]
    fn next_event(&mut self) -> Result<Option<Event>, TraceError> {
        match self {
            AnyReader::Text(reader) => reader.next_event(),
            AnyReader::Binary(reader) => reader.next_event(),
        }
    }

    #[inline]
    fn next_item(&mut self) -> Result<Option<TraceItem<'_>>, TraceError> {
        match self {
            AnyReader::Text(reader) => reader.next_item(),
            AnyReader::Binary(reader) => reader.next_item(),
        }
    }

    fn location(&self) -> Location {
        match self {
            AnyReader::Text(reader) => reader.location(),
            AnyReader::Binary(reader) => reader.location(),
        }
    }
}
