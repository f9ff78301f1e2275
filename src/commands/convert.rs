//! `linegrind convert`: a trace in the other format, event for event.

use std::fs::File;
use std::io::{self, Write};
use std::path::PathBuf;

use super::failure::{Failure, InputContext};
use crate::output::write_atomically;
use crate::trace::binary::TraceWriter;
use crate::trace::{AnyReader, Blocker, Format, TextWriter, TraceError, TraceRead};

/// A validated `convert` invocation.
#[derive(Clone, Debug)]
pub struct ConvertJob {
    pub input: PathBuf,
    pub output: PathBuf,
    /// The output format; by default the other one.
    pub to: Option<Format>,
    pub allow_truncated: bool,
}

/// Converts `job.input` into `job.output`.
pub fn convert(job: &ConvertJob) -> Result<(), Failure> {
    let name = job.input.display();
    let file = File::open(&job.input).input(format!("cannot open {name}"))?;
    let mut reader = AnyReader::new(file, job.allow_truncated).input(&name)?;
    let to = job.to.unwrap_or(match reader.format() {
        Format::Text => Format::Binary,
        Format::Binary => Format::Text,
    });
    // A read error stops the writing and is reported as bad input.
    let mut read_error: Option<TraceError> = None;
    let mut next = || match reader.next_event() {
        Ok(event) => Ok(event),
        Err(err) => {
            read_error = Some(err);
            Err(io::Error::other("the input could not be read"))
        }
    };
    let written = write_atomically(&job.output, |out| match to {
        Format::Text => {
            let mut writer = TextWriter::new(out)?;
            while let Some(event) = next()? {
                writer.event(&event)?;
            }
            writer.finish().map(|_| ())
        }
        Format::Binary => {
            let meta = [("converted-from", job.input.display().to_string())];
            let mut blocker = Blocker::new(TraceWriter::new(out as &mut dyn Write, true, &meta)?);
            while let Some(event) = next()? {
                blocker.event(event)?;
            }
            blocker.finish()?.finish(&[], None).map(|_| ())
        }
    });
    if let Some(err) = read_error {
        return Err(err).input(&name);
    }
    written.other(format!("cannot write {}", job.output.display()))
}
