//! The callgrind profile format, version 1, as KCachegrind and
//! callgrind_annotate read it.
//!
//! Positions are `instr line`. Names are compressed (`fn=(3) name` once,
//! then `fn=(3)`), positions relative to the previous cost line within a
//! function, and trailing zero costs left out. Each call arc is written
//! after its call site's cost line as `cfi=`/`cfn=`, `calls=COUNT TARGET`
//! and a cost line with the call-site position and the arc's inclusive
//! cost: for cache-use events that is the back-dated cost.

use std::collections::HashMap;
use std::io::{self, Write};

use crate::cost::{Cost, EventKind};
use crate::profile::Profile;
use crate::program::{FnId, InstrId};

/// What Callgrind writes for a function without a known source file.
const UNKNOWN_FILE: &str = "???";

/// Writes `profile` in callgrind format; `cmd` names the trace.
pub fn write_callgrind(out: &mut dyn Write, profile: &Profile, cmd: &str) -> io::Result<()> {
    let mut writer = Writer {
        out,
        profile,
        kinds: profile.events.kinds(),
        file_ids: HashMap::new(),
        fn_ids: vec![0; profile.program.functions().len()],
        fns_written: 0,
        last: None,
    };
    writer.header(cmd)?;
    writer.body()?;
    write!(writer.out, "\ntotals:")?;
    writer.all_costs(&profile.totals)
}

struct Writer<'a> {
    out: &'a mut dyn Write,
    profile: &'a Profile,
    kinds: &'static [EventKind],
    file_ids: HashMap<&'a str, usize>,
    /// Compressed id of each function, indexed by [`FnId`]; 0 until written.
    fn_ids: Vec<usize>,
    fns_written: usize,
    /// The previous cost line's position, for relative positions.
    last: Option<(u64, u32)>,
}

impl<'a> Writer<'a> {
    fn header(&mut self, cmd: &str) -> io::Result<()> {
        let profile = self.profile;
        let config = &profile.config;
        writeln!(self.out, "# callgrind format")?;
        writeln!(self.out, "version: 1")?;
        writeln!(self.out, "creator: linegrind-{}", env!("CARGO_PKG_VERSION"))?;
        writeln!(self.out, "cmd: {cmd}")?;
        writeln!(self.out)?;
        writeln!(self.out, "desc: I1 cache: {}", config.i1().describe())?;
        writeln!(self.out, "desc: D1 cache: {}", config.d1().describe())?;
        writeln!(self.out, "desc: LL cache: {}", config.ll().describe())?;
        if let Some(tree) = &profile.tree {
            writeln!(
                self.out,
                "desc: Back-dating tree mean nodes: {:.1}",
                tree.mean_nodes
            )?;
            writeln!(
                self.out,
                "desc: Back-dating tree max nodes: {}",
                tree.max_nodes
            )?;
            writeln!(
                self.out,
                "desc: Back-dating tree nodes created: {}",
                tree.created_nodes
            )?;
        }
        writeln!(self.out, "desc: Call arcs: {}", profile.arcs.len())?;
        writeln!(self.out)?;
        for kind in self.kinds {
            writeln!(self.out, "event: {} : {}", kind.name(), kind.long_name())?;
        }
        writeln!(self.out, "positions: instr line")?;
        let names: Vec<&str> = self.kinds.iter().map(|kind| kind.name()).collect();
        writeln!(self.out, "events: {}", names.join(" "))?;
        write!(self.out, "summary:")?;
        self.all_costs(&profile.totals)
    }

    fn body(&mut self) -> io::Result<()> {
        let program = &self.profile.program;
        let mut instrs_of: Vec<Vec<InstrId>> = vec![Vec::new(); program.functions().len()];
        for (index, instr) in program.instrs().iter().enumerate() {
            instrs_of[instr.func.0 as usize].push(InstrId(index as u32));
        }
        let mut arcs_from: Vec<Vec<usize>> = vec![Vec::new(); program.instrs().len()];
        for (index, arc) in self.profile.arcs.iter().enumerate() {
            arcs_from[arc.call_site.0 as usize].push(index);
        }
        for (func, instrs) in instrs_of.iter_mut().enumerate() {
            if instrs.is_empty() {
                continue;
            }
            instrs.sort_by_key(|&id| program.instr(id).addr);
            writeln!(self.out)?;
            self.function_spec("fl", "fn", FnId(func as u32))?;
            self.last = None;
            for &id in instrs.iter() {
                let instr = program.instr(id);
                self.cost_line(instr.addr, instr.line, self.profile.instr_cost(id))?;
                let arcs = &mut arcs_from[id.0 as usize];
                arcs.sort_by_key(|&arc| self.profile.arcs[arc].callee);
                for &arc in arcs.iter() {
                    self.call(id, arc)?;
                }
            }
        }
        Ok(())
    }

    fn call(&mut self, site: InstrId, arc: usize) -> io::Result<()> {
        let profile = self.profile;
        let arc = &profile.arcs[arc];
        self.function_spec("cfi", "cfn", arc.callee)?;
        let callee = profile.program.function(arc.callee);
        writeln!(
            self.out,
            "calls={} {:#x} {}",
            arc.calls, arc.target, callee.line
        )?;
        let instr = profile.program.instr(site);
        self.cost_line(instr.addr, instr.line, &arc.inclusive)
    }

    /// Writes `file_key=` and `fn_key=` for `func`, compressed after first use.
    fn function_spec(&mut self, file_key: &str, fn_key: &str, func: FnId) -> io::Result<()> {
        let function = self.profile.program.function(func);
        let file = function.file.as_deref().unwrap_or(UNKNOWN_FILE);
        let next = self.file_ids.len() + 1;
        match self.file_ids.get(file) {
            Some(id) => writeln!(self.out, "{file_key}=({id})")?,
            None => {
                self.file_ids.insert(file, next);
                writeln!(self.out, "{file_key}=({next}) {file}")?;
            }
        }
        let id = &mut self.fn_ids[func.0 as usize];
        if *id != 0 {
            return writeln!(self.out, "{fn_key}=({id})");
        }
        self.fns_written += 1;
        *id = self.fns_written;
        writeln!(self.out, "{fn_key}=({id}) {}", function.name)
    }

    fn cost_line(&mut self, addr: u64, line: u32, cost: &Cost) -> io::Result<()> {
        match self.last {
            None => write!(self.out, "{addr:#x} {line}")?,
            Some((last_addr, last_line)) => {
                write_relative(self.out, addr, last_addr)?;
                write!(self.out, " ")?;
                write_relative(self.out, u64::from(line), u64::from(last_line))?;
            }
        }
        self.last = Some((addr, line));
        let used = self
            .kinds
            .iter()
            .rposition(|&kind| cost[kind] != 0)
            .map_or(0, |last| last + 1);
        for &kind in &self.kinds[..used] {
            write!(self.out, " {}", cost[kind])?;
        }
        writeln!(self.out)
    }

    fn all_costs(&mut self, cost: &Cost) -> io::Result<()> {
        for &kind in self.kinds {
            write!(self.out, " {}", cost[kind])?;
        }
        writeln!(self.out)
    }
}

fn write_relative(out: &mut dyn Write, value: u64, last: u64) -> io::Result<()> {
    if value == last {
        write!(out, "*")
    } else if value > last {
        write!(out, "+{}", value - last)
    } else {
        write!(out, "-{}", last - value)
    }
}
