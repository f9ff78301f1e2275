//! Reading a text-based trace line by line, with the line number errors
//! give.

use std::io::BufRead;

use super::error::{Location, TraceError};

/// Reads the next line into `buf` (newline included) and counts it in
/// `line`; false at the end of the input.
pub fn next_line(
    input: &mut impl BufRead,
    buf: &mut Vec<u8>,
    line: &mut u64,
) -> Result<bool, TraceError> {
    buf.clear();
    match input.read_until(b'\n', buf) {
        Err(err) => Err(TraceError::io(Location::Line(*line + 1), err)),
        Ok(0) => Ok(false),
        Ok(_) => {
            *line += 1;
            Ok(true)
        }
    }
}
