//! `linegrind convert`: a trace in the other format, event for event.

use std::io::{self, Write};
use std::path::PathBuf;

use super::failure::{Failure, InputContext, writable};
use super::trace_input::TraceInput;
use crate::output::write_atomically;
use crate::printable::printable;
use crate::trace::binary::TraceWriter;
use crate::trace::{Blocker, Event, Format, TextWriter, TraceError, TraceRead};

/// The metadata key of the trace a binary trace was converted from.
pub const CONVERTED_FROM: &str = "converted-from";

/// A validated `convert` invocation.
#[derive(Clone, Debug)]
pub struct ConvertJob {
    pub input: TraceInput,
    pub output: PathBuf,
    /// The output format, text or binary; by default text for a binary
    /// trace and binary for any other.
    pub to: Option<Format>,
}

/// Converts `job.input` into `job.output`, with warnings about the input
/// on `stderr`.
pub fn convert(job: &ConvertJob, stderr: &mut dyn Write) -> Result<(), Failure> {
    if let Some(input) = job.input.named(&job.output) {
        return Err(Failure::Input(anyhow::anyhow!(
            "the output {} is {input}: convert into another file",
            job.output.display()
        )));
    }
    writable(&job.output)?;
    let name = job.input.path.display();
    let mut reader = job.input.open()?;
    let to = job.to.unwrap_or(match reader.format() {
        Format::Binary => Format::Text,
        _ => Format::Binary,
    });
    // A binary output keeps the recorded command line and exit code.
    let exit_code = reader.exit_code();
    let mut meta: Vec<(&str, String)> = reader
        .command()
        .map(|cmd| ("cmd", cmd.to_string()))
        .into_iter()
        .collect();
    meta.push((CONVERTED_FROM, job.input.path.display().to_string()));
    // A read error stops the writing and is reported as bad input. So does
    // a data access before any instruction, which an imported data-only
    // trace may make and neither written format can hold.
    let mut read_error: Option<TraceError> = None;
    let detached = reader.detached_data();
    let mut fetched = false;
    let mut next = || {
        let event = match reader.next_event() {
            Ok(Some(Event::Data { .. })) if detached && !fetched => Err(TraceError::syntax(
                reader.location(),
                "a data access before any instruction, which linegrind's formats cannot hold \
                 (each access belongs to an instruction); `linegrind sim` simulates the \
                 trace as it is",
            )),
            read => read,
        };
        match event {
            Ok(event) => {
                fetched |= matches!(event, Some(Event::Instr { .. }));
                Ok(event)
            }
            Err(err) => {
                read_error = Some(err);
                Err(io::Error::other("the input could not be read"))
            }
        }
    };
    let written = write_atomically(&job.output, |out| match to {
        Format::Lackey | Format::Din | Format::ExtendedDin => Err(io::Error::other(format!(
            "linegrind writes text and binary traces, not {}",
            to.name()
        ))),
        Format::Text => {
            let mut writer = TextWriter::new(out)?;
            while let Some(event) = next()? {
                writer.event(&event)?;
            }
            writer.finish().map(|_| ())
        }
        Format::Binary => {
            let mut blocker = Blocker::new(TraceWriter::new(out as &mut dyn Write, true, &meta)?);
            while let Some(event) = next()? {
                blocker.event(event)?;
            }
            blocker.finish()?.finish(&[], exit_code).map(|_| ())
        }
    });
    if let Some(err) = read_error {
        return Err(err).input(&name);
    }
    written.other(format!("cannot write {}", job.output.display()))?;
    for warning in reader.warnings(&name.to_string()) {
        writeln!(stderr, "linegrind: warning: {}", printable(&warning))
            .other("cannot write a warning")?;
    }
    Ok(())
}
