//! The callgrind profile format, version 1, as KCachegrind and
//! callgrind_annotate read it.
//!
//! Costs are grouped by object (`ob=`), file (`fl=`) and function (`fn=`).
//! Positions are ELF addresses (runtime address minus the object's bias)
//! and source lines, `instr line` by default; code of another file inside a
//! function (inlined code) switches the file with `fi=` and back with `fe=`,
//! as Callgrind does. Names are compressed (`fn=(3) name` once, then
//! `fn=(3)`), positions relative to the previous cost line within a
//! function, and trailing zero costs left out. Each call arc is written after
//! its call site's cost line as `cob=`/`cfi=`/`cfn=`, `calls=COUNT TARGET`
//! and a cost line with the call-site position and the arc's inclusive
//! cost: for cache-use events that is the back-dated cost.

use std::collections::HashMap;
use std::io::{self, Write};

use crate::cost::{Cost, EventKind};
use crate::profile::Profile;
use crate::program::{FileId, FnId, InstrId};

use super::callgrind_names::{NameIds, UNKNOWN, function_identity, one_line};
use crate::printable::printable;

/// Which subpositions cost lines carry, as Callgrind's `--dump-instr` and
/// `--dump-line`; at least one is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Positions {
    pub instr: bool,
    pub line: bool,
}

impl Default for Positions {
    fn default() -> Positions {
        Positions {
            instr: true,
            line: true,
        }
    }
}

/// Where a profile came from: the trace simulated and, when the trace
/// recorded it, the command line of the program it was recorded from.
#[derive(Clone, Copy, Debug)]
pub struct Source<'a> {
    pub trace: &'a str,
    pub command: Option<&'a str>,
}

impl<'a> Source<'a> {
    /// A trace that names no command.
    pub fn trace(trace: &'a str) -> Source<'a> {
        Source {
            trace,
            command: None,
        }
    }

    /// What Callgrind's `cmd:` line holds: the program's command line, or
    /// the trace where the trace does not say.
    pub fn cmd(&self) -> &'a str {
        self.command.unwrap_or(self.trace)
    }
}

/// Writes `profile`, simulated from `source`, in callgrind format.
pub fn write_callgrind(
    out: &mut dyn Write,
    profile: &Profile,
    source: &Source,
    positions: Positions,
) -> io::Result<()> {
    let mut writer = Writer {
        out,
        profile,
        positions,
        kinds: profile.events.kinds(),
        with_objects: has_objects(profile),
        names: NameIds::default(),
        last: None,
        file: None,
    };
    writer.header(source)?;
    writer.body()?;
    write!(writer.out, "\ntotals:")?;
    writer.all_costs(&profile.totals)
}

/// One cost line of a function: an instruction (or, without `instr`
/// positions, a source line) and the arcs called from it.
struct Row {
    addr: u64,
    file: Option<FileId>,
    line: u32,
    cost: Cost,
    calls: Vec<usize>,
}

struct Writer<'a> {
    out: &'a mut dyn Write,
    profile: &'a Profile,
    positions: Positions,
    kinds: &'static [EventKind],
    with_objects: bool,
    names: NameIds,
    /// The previous cost line's position, for relative positions.
    last: Option<(u64, u32)>,
    /// The file of the previous cost line.
    file: Option<Option<FileId>>,
}

impl Writer<'_> {
    fn header(&mut self, source: &Source) -> io::Result<()> {
        let profile = self.profile;
        let config = &profile.config;
        writeln!(self.out, "# callgrind format")?;
        writeln!(self.out, "version: 1")?;
        writeln!(self.out, "creator: linegrind-{}", env!("CARGO_PKG_VERSION"))?;
        writeln!(self.out, "cmd: {}", one_line(source.cmd()))?;
        writeln!(self.out)?;
        writeln!(self.out, "desc: I1 cache: {}", config.i1().describe())?;
        writeln!(self.out, "desc: D1 cache: {}", config.d1().describe())?;
        writeln!(self.out, "desc: LL cache: {}", config.ll().describe())?;
        writeln!(self.out, "desc: Trace: {}", one_line(source.trace))?;
        if let Some(tree) = &profile.tree {
            match tree.mean_nodes {
                Some(mean) => writeln!(self.out, "desc: Back-dating tree mean nodes: {mean:.1}")?,
                None => writeln!(
                    self.out,
                    "desc: Back-dating tree mean nodes: none (no instructions)"
                )?,
            }
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
        writeln!(
            self.out,
            "desc: Call arcs: {}",
            profile.called_arcs().count()
        )?;
        writeln!(self.out)?;
        for kind in self.kinds {
            writeln!(self.out, "event: {} : {}", kind.name(), kind.long_name())?;
        }
        let positions = match (self.positions.instr, self.positions.line) {
            (true, true) => "instr line",
            (true, false) => "instr",
            _ => "line",
        };
        writeln!(self.out, "positions: {positions}")?;
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
        for (index, arc) in self.profile.called_arcs() {
            arcs_from[arc.call_site.0 as usize].push(index);
        }
        // By object, then in order of first appearance.
        let mut order: Vec<usize> = (0..instrs_of.len())
            .filter(|&func| !instrs_of[func].is_empty())
            .collect();
        order.sort_by_key(|&func| (program.functions()[func].object, func));
        for func in order {
            let rows = self.rows(&mut instrs_of[func], &mut arcs_from);
            if !rows.is_empty() {
                self.function(FnId(func as u32), &rows)?;
            }
        }
        Ok(())
    }

    /// The cost lines of one function, by address; without `instr`
    /// positions, merged per source line.
    fn rows(&self, instrs: &mut [InstrId], arcs_from: &mut [Vec<usize>]) -> Vec<Row> {
        let program = &self.profile.program;
        instrs.sort_by_key(|&id| program.instr(id).addr);
        let mut rows: Vec<Row> = Vec::with_capacity(instrs.len());
        let mut row_of_line: HashMap<(Option<FileId>, u32), usize> = HashMap::new();
        for &id in instrs.iter() {
            let instr = program.instr(id);
            let mut calls = std::mem::take(&mut arcs_from[id.0 as usize]);
            calls.sort_by_key(|&arc| self.profile.arcs[arc].callee);
            let cost = *self.profile.instr_cost(id);
            if cost.is_zero() && calls.is_empty() {
                // Code of a skipped function: its cost is its caller's.
                continue;
            }
            if !self.positions.instr {
                if let Some(&row) = row_of_line.get(&(instr.file, instr.line)) {
                    rows[row].cost += &cost;
                    rows[row].calls.extend(calls);
                    continue;
                }
                row_of_line.insert((instr.file, instr.line), rows.len());
            }
            rows.push(Row {
                addr: program.svma(instr.addr),
                file: instr.file,
                line: instr.line,
                cost,
                calls,
            });
        }
        rows
    }

    fn function(&mut self, func: FnId, rows: &[Row]) -> io::Result<()> {
        let function = self.profile.program.function(func);
        writeln!(self.out)?;
        if self.with_objects {
            self.name("ob", "ob", &self.object_name(func))?;
        }
        self.name("fl", "fl", &self.file_name(function.file))?;
        self.function_name("fn", func)?;
        self.last = None;
        self.file = Some(function.file);
        for row in rows {
            if self.file != Some(row.file) {
                let key = if row.file == function.file {
                    "fe"
                } else {
                    "fi"
                };
                self.name(key, "fl", &self.file_name(row.file))?;
                self.file = Some(row.file);
            }
            self.cost_line(row.addr, row.line, &row.cost)?;
            for &arc in &row.calls {
                self.call(func, row, arc)?;
            }
        }
        Ok(())
    }

    /// A call from the function `caller`, at `row`. As Callgrind writes
    /// it, `cob=` and `cfi=` only where the callee's object or file is not
    /// the caller's object or the file of the cost lines: readers take
    /// those without them, and callgrind_annotate, which drops the working
    /// folder from `fl=` names but not from `cfi=`, would otherwise file
    /// calls within one file under another name.
    fn call(&mut self, caller: FnId, row: &Row, arc: usize) -> io::Result<()> {
        let profile = self.profile;
        let arc = &profile.arcs[arc];
        let callee = profile.program.function(arc.callee);
        if self.with_objects && callee.object != profile.program.function(caller).object {
            self.name("cob", "ob", &self.object_name(arc.callee))?;
        }
        if self.file != Some(callee.file) {
            self.name("cfi", "fl", &self.file_name(callee.file))?;
        }
        self.function_name("cfn", arc.callee)?;
        write!(self.out, "calls={}", arc.calls)?;
        if self.positions.instr {
            write!(self.out, " {:#x}", profile.program.svma(arc.target))?;
        }
        if self.positions.line {
            write!(self.out, " {}", callee.line)?;
        }
        writeln!(self.out)?;
        self.cost_line(row.addr, row.line, &arc.inclusive)
    }

    fn object_name(&self, func: FnId) -> String {
        object_name(self.profile, func)
    }

    fn file_name(&self, file: Option<FileId>) -> String {
        file_name(self.profile, file)
    }

    /// Writes `key=(id) name` the first time a name of `space` is used, and
    /// `key=(id)` after.
    fn name(&mut self, key: &str, space: &'static str, name: &str) -> io::Result<()> {
        self.names
            .write(self.out, key, space, name.to_string(), name)
    }

    /// Writes `key=(id) name` for `func`, whose identity is its name, file
    /// and object.
    fn function_name(&mut self, key: &str, func: FnId) -> io::Result<()> {
        let function = self.profile.program.function(func);
        let identity = function_identity(
            &function.name,
            &self.file_name(function.file),
            &self.object_name(func),
        );
        self.names
            .write(self.out, key, "fn", identity, &function.name)
    }

    fn cost_line(&mut self, addr: u64, line: u32, cost: &Cost) -> io::Result<()> {
        let line = u64::from(line);
        match self.last {
            None => {
                if self.positions.instr {
                    write!(self.out, "{addr:#x}")?;
                }
                if self.positions.line {
                    let space = if self.positions.instr { " " } else { "" };
                    write!(self.out, "{space}{line}")?;
                }
            }
            Some((last_addr, last_line)) => {
                if self.positions.instr {
                    write_relative(self.out, addr, last_addr)?;
                }
                if self.positions.line {
                    if self.positions.instr {
                        write!(self.out, " ")?;
                    }
                    write_relative(self.out, line, u64::from(last_line))?;
                }
            }
        }
        self.last = Some((addr, line as u32));
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

/// The `ob=` name of `func`'s object; `None` when the profile has no
/// objects at all and the file gives none.
pub fn object_of(profile: &Profile, func: FnId) -> Option<String> {
    has_objects(profile).then(|| object_name(profile, func))
}

/// Whether the profile's program has objects, which its file then names.
fn has_objects(profile: &Profile) -> bool {
    !profile.program.symbolizer().modules().modules().is_empty()
}

fn object_name(profile: &Profile, func: FnId) -> String {
    let program = &profile.program;
    match program.function(func).object {
        Some(id) => printable(&program.symbolizer().modules().get(id).path).into_owned(),
        None => UNKNOWN.to_string(),
    }
}

/// The `fl=` name of `file`.
pub fn file_name(profile: &Profile, file: Option<FileId>) -> String {
    match file {
        Some(id) => profile.program.file(id).to_string(),
        None => UNKNOWN.to_string(),
    }
}

/// Writes position `value` against the `last` one: relative when the
/// difference fits in 31 bits, absolute otherwise (KCachegrind reads a
/// difference into a 32-bit number, so a larger one would wrap; a function
/// charged with code far from its own, such as unsymbolized code run in
/// its frame, has such jumps).
fn write_relative(out: &mut dyn Write, value: u64, last: u64) -> io::Result<()> {
    const NEAR: u64 = i32::MAX as u64;
    match value.abs_diff(last) {
        0 => write!(out, "*"),
        far if far > NEAR => write!(out, "{value:#x}"),
        near if value > last => write!(out, "+{near}"),
        near => write!(out, "-{near}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::SimConfig;
    use crate::simulator::simulate;
    use crate::trace::TextReader;

    #[test]
    fn positions_far_apart_are_written_whole() {
        let written = |value, last| {
            let mut out = Vec::new();
            write_relative(&mut out, value, last).unwrap();
            String::from_utf8(out).unwrap()
        };
        assert_eq!(written(0x1000, 0x1000), "*");
        assert_eq!(written(0x1004, 0x1000), "+4");
        assert_eq!(written(0x1000, 0x1004), "-4");
        let near = 0x1000 + u64::from(i32::MAX.unsigned_abs());
        assert_eq!(written(near, 0x1000), format!("+{}", i32::MAX));
        assert_eq!(written(near + 1, 0x1000), "0x80001000");
        assert_eq!(written(0x1000, 0x7fff_f7a0_0000), "0x1000");
    }

    #[test]
    fn functions_of_one_name_in_two_files_get_two_ids() {
        let trace = "linegrind-trace text 1
fn 1000 1010 main a.c
fn 1010 1020 dup a.c
fn 1020 1030 dup b.c
i 1000 4
call 1010
i 1010 4
ret
i 1004 4
call 1020
i 1020 4
ret
i 1008 4
";
        let profile =
            simulate(&mut TextReader::new(trace.as_bytes()), SimConfig::default()).unwrap();
        let mut out = Vec::new();
        write_callgrind(
            &mut out,
            &profile,
            &Source::trace("t"),
            Positions::default(),
        )
        .unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("cfn=(2) dup\n"), "{text}");
        assert!(text.contains("cfn=(3) dup\n"), "{text}");
        assert!(
            text.contains("fn=(2)\n") && text.contains("fn=(3)\n"),
            "{text}"
        );
    }
}
