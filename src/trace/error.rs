//! Errors reading or simulating a trace, with the place they happened.

use std::fmt;
use std::io;

/// A place in a trace file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Location {
    /// A line of a text trace, counting from 1.
    Line(u64),
    /// A byte offset into a binary trace.
    Offset(u64),
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Line(line) => write!(f, "line {line}"),
            Location::Offset(offset) => write!(f, "byte offset {offset}"),
        }
    }
}

/// What went wrong.
#[derive(Debug)]
pub enum TraceErrorKind {
    /// The input could not be read.
    Io(io::Error),
    /// The input is not in the expected form; the text says what was
    /// expected.
    Syntax(String),
    /// The events are well formed but impossible in their order.
    Semantic(String),
}

/// An error at a place in a trace.
#[derive(Clone, Debug)]
pub struct TraceError {
    pub location: Location,
    pub kind: TraceErrorKind,
}

impl Clone for TraceErrorKind {
    /// The same error; an I/O error keeps its kind and message.
    fn clone(&self) -> TraceErrorKind {
        match self {
            TraceErrorKind::Io(err) => {
                TraceErrorKind::Io(io::Error::new(err.kind(), err.to_string()))
            }
            TraceErrorKind::Syntax(message) => TraceErrorKind::Syntax(message.clone()),
            TraceErrorKind::Semantic(message) => TraceErrorKind::Semantic(message.clone()),
        }
    }
}

impl TraceError {
    /// A syntax error at `location`.
    pub fn syntax(location: Location, message: impl Into<String>) -> TraceError {
        TraceError {
            location,
            kind: TraceErrorKind::Syntax(message.into()),
        }
    }

    /// An error in the order or meaning of events at `location`.
    pub fn semantic(location: Location, message: impl fmt::Display) -> TraceError {
        TraceError {
            location,
            kind: TraceErrorKind::Semantic(message.to_string()),
        }
    }
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            TraceErrorKind::Io(err) => write!(f, "{}: read error: {err}", self.location),
            TraceErrorKind::Syntax(message) | TraceErrorKind::Semantic(message) => {
                write!(f, "{}: {message}", self.location)
            }
        }
    }
}

impl std::error::Error for TraceError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            TraceErrorKind::Io(err) => Some(err),
            _ => None,
        }
    }
}
