//! Errors reading or simulating a trace, with the place they happened.

use std::fmt;
use std::io;
use std::sync::Arc;

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
#[derive(Clone, Debug)]
pub enum TraceErrorKind {
    /// The input could not be read. Shared, so that the error of a walk
    /// can stand for each configuration the walk simulated.
    Io(Arc<io::Error>),
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

impl TraceError {
    /// A read error at `location`.
    pub fn io(location: Location, err: io::Error) -> TraceError {
        TraceError {
            location,
            kind: TraceErrorKind::Io(Arc::new(err)),
        }
    }

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
    /// What the read error came from, if anything: the read error itself is
    /// already in the message, which a chain of causes would repeat.
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            TraceErrorKind::Io(err) => err.source(),
            _ => None,
        }
    }
}

/// Why a file whose lines end in a carriage return alone is refused: it
/// reads as one line.
pub(super) const CR_LINES: &str = "a carriage return (`\\r`) inside the line: lines that end in `\\r` alone \
     are not read as lines (linegrind reads lines that end in `\\n` or `\\r\\n`)";

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error;

    /// What the operating system might have said, as its own type.
    #[derive(Debug)]
    struct DeviceGone;

    impl fmt::Display for DeviceGone {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("device gone")
        }
    }

    impl Error for DeviceGone {}

    #[test]
    fn a_copied_read_error_keeps_its_cause() {
        let err = TraceError::io(Location::Offset(7), io::Error::other(DeviceGone));
        let copy = err.clone();
        assert_eq!(copy.to_string(), "byte offset 7: read error: device gone");
        let TraceErrorKind::Io(io) = &copy.kind else {
            panic!("a read error");
        };
        assert!(io.get_ref().is_some_and(|inner| inner.is::<DeviceGone>()));
        // Said once, not again as a cause.
        let chain = format!("{:#}", anyhow::Error::new(copy).context("trace"));
        assert_eq!(chain, "trace: byte offset 7: read error: device gone");
    }
}
