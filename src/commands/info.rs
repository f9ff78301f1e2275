//! `linegrind info`: what a trace holds.

use std::io::Write;
use std::sync::Arc;

use super::convert::CONVERTED_FROM;
use super::failure::{Failure, InputContext};
use super::trace_input::TraceInput;
use crate::output::{bytes_per_event, grouped};
use crate::printable::printable;
use crate::trace::batch::{Replayed, Run, RunArrays};
use crate::trace::block::{BlockDef, JumpKind};
use crate::trace::{AnyReader, Event, Feed, Format, ModuleMapping, ThreadCount, TraceRead};

/// What `info` counts of a trace: its events as `next_event` would give
/// them, a block run standing for its calls, stack pointer, instructions,
/// accesses and return.
struct Counts {
    instrs: u64,
    accesses: u64,
    calls: u64,
    returns: u64,
    others: u64,
    functions: u64,
    /// A data access came before any instruction (as an imported
    /// data-only trace may have), which the written formats cannot hold.
    data_first: bool,
    threads: ThreadCount,
    modules: Vec<ModuleMapping>,
    /// Per block number: its description, and how many instructions a run
    /// walks when it leaves by each side exit ([`BlockDef::exit_instrs`]).
    blocks: Vec<(Arc<BlockDef>, Vec<u64>)>,
}

impl Counts {
    fn new() -> Counts {
        Counts {
            instrs: 0,
            accesses: 0,
            calls: 0,
            returns: 0,
            others: 0,
            functions: 0,
            data_first: false,
            threads: ThreadCount::default(),
            modules: Vec::new(),
            blocks: Vec::new(),
        }
    }

    fn event(&mut self, event: &Event) {
        match event {
            Event::Instr { .. } => self.instrs += 1,
            Event::Data { .. } => {
                self.accesses += 1;
                self.data_first |= self.instrs == 0;
            }
            Event::Call { .. } => self.calls += 1,
            Event::Return => self.returns += 1,
            Event::Thread { tid } => self.threads.run(*tid),
            Event::ThreadExit { tid } => self.threads.end(*tid),
            Event::Module(module) => self.modules.push((**module).clone()),
            Event::Function(_) => self.functions += 1,
            _ => self.others += 1,
        }
    }

    fn define(&mut self, id: u32, def: &Arc<BlockDef>) {
        let id = id as usize;
        if self.blocks.len() <= id {
            self.blocks.resize(id + 1, Default::default());
        }
        self.blocks[id] = (Arc::clone(def), def.exit_instrs());
    }

    /// Counts `run` `times` over (its call once).
    fn run(&mut self, run: &Run, arrays: RunArrays, times: u64) {
        let (def, exit_instrs) = &self.blocks[run.id as usize];
        let run = run.view(def, arrays);
        // No exit, or one past the last, runs the whole block.
        let exit = run.run.exit.and_then(|exit| exit_instrs.get(exit as usize));
        self.instrs += times * exit.copied().unwrap_or(def.instrs.len() as u64);
        self.accesses += times * run.run.addrs.len() as u64;
        self.calls += u64::from(run.call.is_some());
        self.returns += times * u64::from(run.leaving == JumpKind::Return);
        self.others += times * u64::from(run.run.sp.is_some());
    }
}

/// Reads the trace `input` through and describes it on `out`. Block runs
/// are counted as they come in batches, without making their events.
pub fn info(input: &TraceInput, out: &mut dyn Write) -> Result<(), Failure> {
    let name = input.path.display();
    let mut reader = input.open()?;
    // A pipe or a device has no size to tell.
    let file_len = std::fs::metadata(&input.path)
        .ok()
        .filter(|meta| meta.is_file())
        .map(|meta| meta.len());
    let mut counts = Counts::new();
    let mut feed = Feed::default();
    loop {
        let more = reader.fill(&mut feed).input(&name)?;
        for (item, index) in feed.batch.replay() {
            match item {
                Replayed::Event(event) => counts.event(event),
                Replayed::Define(id, def) => counts.define(id, def),
                Replayed::Run(run, arrays) => {
                    counts.run(run, arrays, 1);
                    // The cycle it ends, repeated.
                    let times = u64::from(run.repeats);
                    if times > 0 {
                        for (run, arrays) in feed.batch.cycle_arrays(index, arrays) {
                            counts.run(run, arrays, times);
                        }
                    }
                }
            }
        }
        feed.batch.clear();
        if !more {
            break;
        }
    }
    let Counts {
        instrs,
        accesses,
        calls,
        returns,
        others,
        functions,
        data_first,
        threads,
        modules,
        ..
    } = counts;
    let write = |out: &mut dyn Write| -> std::io::Result<()> {
        writeln!(out, "format:         {}", reader.format().describe())?;
        if let AnyReader::Binary(binary) = &reader {
            // Where a recording's command line comes, first.
            if reader.command().is_none() {
                writeln!(
                    out,
                    "cmd:            none (not recorded: converted from a format without one)"
                )?;
            }
            for (key, value) in binary.meta() {
                let key = format!("{}:", printable(key));
                writeln!(out, "{key:<15} {}", printable(value))?;
            }
            // Only a recording has a command line; a trace converted from
            // another format has neither it nor an exit code, and one
            // converted from a recording cut short has no exit code.
            let converted = binary.meta().iter().any(|(key, _)| key == CONVERTED_FROM);
            let why_none = match (reader.command().is_some(), converted) {
                (true, false) => "a signal ended the program, or execve replaced it",
                (true, true) => {
                    "a signal ended the program, execve replaced it, or the trace it was \
                     converted from was cut short"
                }
                (false, _) => "not recorded: converted from a format without one",
            };
            match binary.summary().map(|s| s.exit_code) {
                Some(Some(code)) => writeln!(out, "exit code:      {code}")?,
                Some(None) => writeln!(out, "exit code:      none ({why_none})")?,
                None => writeln!(out, "exit code:      unknown (the trace is cut short)")?,
            }
        } else {
            let none = "none (the format has no place for it)";
            writeln!(out, "cmd:            {none}")?;
            writeln!(out, "exit code:      {none}")?;
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
        match (threads.ids(), threads.started()) {
            (ids, started) if ids == started => writeln!(out, "threads:        {ids}")?,
            (ids, started) => writeln!(
                out,
                "threads:        {} (under {ids} ids)",
                grouped(started)
            )?,
        }
        writeln!(out, "instructions:   {}", grouped(instrs))?;
        writeln!(out, "data accesses:  {}", grouped(accesses))?;
        writeln!(out, "calls:          {}", grouped(calls))?;
        writeln!(out, "returns:        {}", grouped(returns))?;
        writeln!(out, "other events:   {}", grouped(others))?;
        match file_len {
            Some(len) => writeln!(
                out,
                "size:           {} bytes, {} bytes per instruction or access",
                grouped(len),
                bytes_per_event(len, instrs + accesses)
            )?,
            None => writeln!(out, "size:           unknown (not a file)")?,
        }
        if reader.format() != Format::Binary && !data_first {
            writeln!(
                out,
                "(convert it to binary with `linegrind convert` for a compact trace)"
            )?;
        }
        Ok(())
    };
    write(out).other("cannot write the description")
}
