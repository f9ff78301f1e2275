//! `linegrind info`: what a trace holds.

use std::io::Write;

use rustc_hash::FxHashSet;

use super::failure::{Failure, InputContext};
use super::trace_input::TraceInput;
use crate::output::{bytes_per_event, grouped, printable};
use crate::trace::{AnyReader, Event, Format, TraceRead};

/// Reads the trace `input` through and describes it on `out`.
pub fn info(input: &TraceInput, out: &mut dyn Write) -> Result<(), Failure> {
    let name = input.path.display();
    let mut reader = input.open()?;
    let file_len = std::fs::metadata(&input.path).map_or(0, |m| m.len());
    let (mut instrs, mut accesses, mut transfers, mut others) = (0u64, 0u64, 0u64, 0u64);
    let mut threads = FxHashSet::default();
    threads.insert(1);
    let mut modules = Vec::new();
    let mut functions = 0u64;
    while let Some(event) = reader.next_event().input(&name)? {
        match event {
            Event::Instr { .. } => instrs += 1,
            Event::Data { .. } => accesses += 1,
            Event::Call { .. } | Event::Return => transfers += 1,
            Event::Thread { tid } => {
                threads.insert(tid);
            }
            Event::Module(module) => modules.push(module),
            Event::Function(_) => functions += 1,
            _ => others += 1,
        }
    }
    let write = |out: &mut dyn Write| -> std::io::Result<()> {
        writeln!(out, "format:         {}", reader.format().describe())?;
        if let AnyReader::Binary(binary) = &reader {
            for (key, value) in binary.meta() {
                writeln!(out, "{:<15} {}", format!("{key}:"), printable(value))?;
            }
            match binary.summary().and_then(|s| s.exit_code) {
                Some(code) => writeln!(out, "exit code:      {code}")?,
                None => writeln!(out, "exit code:      unknown")?,
            }
        }
        if let Some(why) = reader.truncated() {
            writeln!(out, "truncated:      {why}")?;
        }
        if let Some(what) = reader.skipped() {
            writeln!(out, "skipped:        {what}")?;
        }
        if let Some(what) = reader.unterminated() {
            writeln!(out, "unterminated:   {what}")?;
        }
        writeln!(out, "modules:        {}", modules.len())?;
        for module in &modules {
            write!(
                out,
                "  {}  bias {:#x}",
                printable(&module.path),
                module.bias
            )?;
            if let Some((start, end)) = module.range {
                write!(out, "  {start:#x}-{end:#x}")?;
            }
            if let Some(id) = &module.build_id {
                write!(out, "  build-id {}", crate::symbols::hex(id))?;
            }
            writeln!(out)?;
        }
        writeln!(
            out,
            "functions:      {} (symbols in the trace)",
            grouped(functions)
        )?;
        writeln!(out, "threads:        {}", threads.len())?;
        writeln!(out, "instructions:   {}", grouped(instrs))?;
        writeln!(out, "data accesses:  {}", grouped(accesses))?;
        writeln!(out, "calls, returns: {}", grouped(transfers))?;
        writeln!(out, "other events:   {}", grouped(others))?;
        writeln!(
            out,
            "size:           {} bytes, {} bytes per instruction or access",
            grouped(file_len),
            bytes_per_event(file_len, instrs + accesses)
        )?;
        if reader.format() != Format::Binary {
            writeln!(
                out,
                "(convert it to binary with `linegrind convert` for a compact trace)"
            )?;
        }
        Ok(())
    };
    write(out).other("cannot write the description")
}
