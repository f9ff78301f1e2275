//! Reading callgrind-format profiles, ours or Callgrind's: per-function self
//! costs, call arcs with counts and inclusive costs, and per-line costs.

use std::collections::HashMap;
use std::fmt;
use std::io::{self, BufRead};

/// Index into [`ProfileFile::functions`].
pub type FunctionIndex = usize;

/// A function: its name, the file `fl=` gave it, and its object.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FunctionKey {
    pub object: String,
    pub file: String,
    pub name: String,
}

/// One function's totals.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FunctionEntry {
    pub key: FunctionKey,
    /// Self cost, per event.
    pub self_cost: Vec<u64>,
}

/// All calls from one function to another, summed over call sites.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallEntry {
    pub caller: FunctionIndex,
    pub callee: FunctionIndex,
    pub count: u64,
    /// Inclusive cost of the calls, per event.
    pub inclusive: Vec<u64>,
}

/// A parsed profile.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProfileFile {
    pub creator: Option<String>,
    pub cmd: Option<String>,
    /// `desc:` lines, without the key.
    pub desc: Vec<String>,
    pub events: Vec<String>,
    pub positions: Vec<String>,
    /// The `totals:` line, or else `summary:`, or else the sum of self costs.
    pub totals: Vec<u64>,
    pub functions: Vec<FunctionEntry>,
    pub calls: Vec<CallEntry>,
    /// Self cost per source file and line.
    pub lines: HashMap<(String, u64), Vec<u64>>,
}

/// A profile that cannot be read, with the line where it went wrong.
#[derive(Debug)]
pub struct ParseError {
    pub line: u64,
    pub what: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.what)
    }
}

impl std::error::Error for ParseError {}

/// Name compression tables: one for objects, one for files, one for functions.
#[derive(Default)]
struct Names {
    tables: [HashMap<u64, String>; 3],
}

impl Names {
    /// Resolves `spec=(id) name`, `spec=(id)` or `spec=name`.
    fn resolve(&mut self, table: usize, value: &str, line: u64) -> Result<String, ParseError> {
        let value = value.trim();
        let Some(rest) = value.strip_prefix('(') else {
            return Ok(value.to_string());
        };
        let close = rest.find(')').ok_or_else(|| ParseError {
            line,
            what: format!("unclosed name id in `{value}`"),
        })?;
        let id: u64 = rest[..close].parse().map_err(|_| ParseError {
            line,
            what: format!("bad name id in `{value}`"),
        })?;
        let name = rest[close + 1..].trim();
        if !name.is_empty() {
            self.tables[table].insert(id, name.to_string());
            return Ok(name.to_string());
        }
        self.tables[table]
            .get(&id)
            .cloned()
            .ok_or_else(|| ParseError {
                line,
                what: format!("name id ({id}) used before it was given a name"),
            })
    }
}

const OBJECTS: usize = 0;
const FILES: usize = 1;
const FUNCTIONS: usize = 2;

impl ProfileFile {
    /// Parses a whole profile.
    pub fn parse(input: impl BufRead) -> Result<ProfileFile, ParseError> {
        Parser::default().run(input)
    }

    /// The index of the event called `name`.
    pub fn event(&self, name: &str) -> Option<usize> {
        self.events.iter().position(|event| event == name)
    }

    /// Inclusive cost of each function: its self cost plus the inclusive
    /// cost of its calls to other functions (recursive calls to itself are
    /// already inside them).
    pub fn inclusive(&self) -> Vec<Vec<u64>> {
        let mut inclusive: Vec<Vec<u64>> =
            self.functions.iter().map(|f| f.self_cost.clone()).collect();
        for call in &self.calls {
            if call.caller != call.callee {
                add(&mut inclusive[call.caller], &call.inclusive);
            }
        }
        inclusive
    }
}

/// A file with a `summary:` but no `totals:` line, which Callgrind and
/// linegrind always write last, may have been cut short: its self costs
/// must then add up to the summary. (Not checked against `totals:`:
/// Callgrind's summary can differ from its totals by a few events.)
/// `lines` is the number of lines read.
fn check_complete(file: &ProfileFile, summary: &[u64], lines: u64) -> Result<(), ParseError> {
    let mut sum = self_total(file);
    let events = file.events.len();
    let mut summary = summary.to_vec();
    sum.resize(events, 0);
    summary.resize(events, 0);
    match (0..events).find(|&at| sum[at] != summary[at]) {
        None => Ok(()),
        Some(at) => Err(ParseError {
            line: lines,
            what: format!(
                "the file ends without a `totals:` line and its costs add up to {} {}, \
                 not the {} of its `summary:` line: it looks cut short",
                sum[at], file.events[at], summary[at]
            ),
        }),
    }
}

/// The sum of every function's self cost.
fn self_total(file: &ProfileFile) -> Vec<u64> {
    let mut sum = Vec::new();
    for function in &file.functions {
        add(&mut sum, &function.self_cost);
    }
    sum
}

fn add(into: &mut Vec<u64>, costs: &[u64]) {
    if into.len() < costs.len() {
        into.resize(costs.len(), 0);
    }
    for (into, cost) in into.iter_mut().zip(costs) {
        *into += cost;
    }
}

#[derive(Default)]
struct Parser {
    file: ProfileFile,
    names: Names,
    index: HashMap<FunctionKey, FunctionIndex>,
    call_index: HashMap<(FunctionIndex, FunctionIndex), usize>,
    object: String,
    fn_file: String,
    line_file: String,
    function: Option<FunctionIndex>,
    callee_object: Option<String>,
    callee_file: Option<String>,
    callee: Option<String>,
    /// A `calls=` line waits for its cost line: (callee, count).
    pending_call: Option<(FunctionIndex, u64)>,
    last: Vec<u64>,
    summary: Option<Vec<u64>>,
    totals: Option<Vec<u64>>,
}

impl Parser {
    fn run(mut self, mut input: impl BufRead) -> Result<ProfileFile, ParseError> {
        let mut text = String::new();
        let mut number = 0u64;
        self.file.positions = vec!["line".to_string()];
        self.last = vec![0];
        loop {
            text.clear();
            let read = input
                .read_line(&mut text)
                .map_err(|err: io::Error| ParseError {
                    line: number + 1,
                    what: format!("read error: {err}"),
                })?;
            if read == 0 {
                break;
            }
            number += 1;
            self.line(text.trim_end(), number)?;
        }
        if self.pending_call.is_some() {
            return Err(ParseError {
                line: number,
                what: "the file ends after `calls=` without its cost line".into(),
            });
        }
        let mut file = self.file;
        if let (None, Some(summary)) = (&self.totals, &self.summary) {
            check_complete(&file, summary, number)?;
        }
        file.totals = match (self.totals, self.summary) {
            (Some(totals), _) => totals,
            (None, Some(summary)) => summary,
            (None, None) => self_total(&file),
        };
        // Every cost vector has one value per event (lines leave out
        // trailing zeros).
        let events = file.events.len();
        file.totals.resize(events, 0);
        for function in &mut file.functions {
            function.self_cost.resize(events, 0);
        }
        for call in &mut file.calls {
            call.inclusive.resize(events, 0);
        }
        for cost in file.lines.values_mut() {
            cost.resize(events, 0);
        }
        Ok(file)
    }

    fn line(&mut self, text: &str, number: u64) -> Result<(), ParseError> {
        let error = |what: String| ParseError { line: number, what };
        if text.is_empty() || text.starts_with('#') {
            return Ok(());
        }
        if let Some((key, value)) = text.split_once('=') {
            if !key.contains(' ') && !key.contains(':') {
                return self.spec(key, value, number);
            }
        }
        if let Some((key, value)) = text.split_once(':') {
            if !key.contains(' ') && !key.starts_with(['+', '-', '*']) {
                return self.header(key, value.trim(), number);
            }
        }
        // A cost line: positions, then costs.
        let mut tokens = text.split_ascii_whitespace();
        let mut line = 0;
        for slot in 0..self.file.positions.len() {
            let token = tokens
                .next()
                .ok_or_else(|| error(format!("a cost line without its positions: `{text}`")))?;
            let value = relative(token, self.last[slot])
                .ok_or_else(|| error(format!("bad position `{token}` in `{text}`")))?;
            self.last[slot] = value;
            if self.file.positions[slot] == "line" {
                line = value;
            }
        }
        let mut costs = Vec::with_capacity(self.file.events.len());
        for token in tokens {
            let value = parse_number(token)
                .ok_or_else(|| error(format!("bad cost `{token}` in `{text}`")))?;
            costs.push(value);
        }
        if costs.len() > self.file.events.len() {
            return Err(error(format!(
                "{} costs for {} events in `{text}`",
                costs.len(),
                self.file.events.len()
            )));
        }
        let Some(function) = self.function else {
            return Err(error("a cost line before any `fn=`".into()));
        };
        match self.pending_call.take() {
            Some((callee, count)) => {
                let key = (function, callee);
                let at = match self.call_index.get(&key) {
                    Some(&at) => at,
                    None => {
                        self.file.calls.push(CallEntry {
                            caller: function,
                            callee,
                            count: 0,
                            inclusive: Vec::new(),
                        });
                        self.call_index.insert(key, self.file.calls.len() - 1);
                        self.file.calls.len() - 1
                    }
                };
                let call = &mut self.file.calls[at];
                call.count += count;
                add(&mut call.inclusive, &costs);
            }
            None => {
                add(&mut self.file.functions[function].self_cost, &costs);
                let key = (self.line_file.clone(), line);
                add(self.file.lines.entry(key).or_default(), &costs);
            }
        }
        Ok(())
    }

    /// `key=value` lines: names of objects, files and functions, and calls.
    fn spec(&mut self, key: &str, value: &str, number: u64) -> Result<(), ParseError> {
        let error = |what: String| ParseError { line: number, what };
        match key {
            "ob" => self.object = self.names.resolve(OBJECTS, value, number)?,
            "fl" => {
                self.fn_file = self.names.resolve(FILES, value, number)?;
                self.line_file = self.fn_file.clone();
            }
            "fi" | "fe" => self.line_file = self.names.resolve(FILES, value, number)?,
            "fn" => {
                let name = self.names.resolve(FUNCTIONS, value, number)?;
                let key = FunctionKey {
                    object: self.object.clone(),
                    file: self.fn_file.clone(),
                    name,
                };
                self.function = Some(self.function_index(key));
                self.line_file = self.fn_file.clone();
            }
            "cob" => self.callee_object = Some(self.names.resolve(OBJECTS, value, number)?),
            "cfi" | "cfl" => self.callee_file = Some(self.names.resolve(FILES, value, number)?),
            "cfn" => self.callee = Some(self.names.resolve(FUNCTIONS, value, number)?),
            "calls" => {
                let count = value
                    .split_ascii_whitespace()
                    .next()
                    .and_then(parse_number)
                    .ok_or_else(|| error(format!("bad call count in `calls={value}`")))?;
                let name = self
                    .callee
                    .take()
                    .ok_or_else(|| error("`calls=` without a `cfn=` before it".into()))?;
                let key = FunctionKey {
                    object: self
                        .callee_object
                        .take()
                        .unwrap_or_else(|| self.object.clone()),
                    file: self
                        .callee_file
                        .take()
                        .unwrap_or_else(|| self.fn_file.clone()),
                    name,
                };
                let callee = self.function_index(key);
                self.pending_call = Some((callee, count));
            }
            // Jumps carry nothing this reader uses, but the file and function
            // a jump goes to may give a compressed name its first use.
            "jfi" => {
                self.names.resolve(FILES, value, number)?;
            }
            "jfn" => {
                self.names.resolve(FUNCTIONS, value, number)?;
            }
            "jump" | "jcnd" => {}
            other => return Err(error(format!("unknown specification `{other}=`"))),
        }
        Ok(())
    }

    /// `key: value` lines of the header (and `totals:` at the end).
    fn header(&mut self, key: &str, value: &str, number: u64) -> Result<(), ParseError> {
        let costs = |value: &str| -> Result<Vec<u64>, ParseError> {
            value
                .split_ascii_whitespace()
                .map(|token| {
                    parse_number(token).ok_or_else(|| ParseError {
                        line: number,
                        what: format!("bad cost `{token}`"),
                    })
                })
                .collect()
        };
        match key {
            "events" => {
                self.file.events = value.split_ascii_whitespace().map(str::to_string).collect();
            }
            "positions" => {
                self.file.positions = value.split_ascii_whitespace().map(str::to_string).collect();
                self.last = vec![0; self.file.positions.len()];
            }
            "creator" => self.file.creator = Some(value.to_string()),
            "cmd" => self.file.cmd = Some(value.to_string()),
            "desc" => self.file.desc.push(value.to_string()),
            "summary" => self.summary = Some(costs(value)?),
            "totals" => self.totals = Some(costs(value)?),
            // Headers with nothing this reader uses: version, pid, part,
            // thread, event (long names), and any a writer adds.
            _ => {}
        }
        Ok(())
    }

    fn function_index(&mut self, key: FunctionKey) -> FunctionIndex {
        if let Some(&index) = self.index.get(&key) {
            return index;
        }
        self.file.functions.push(FunctionEntry {
            key: key.clone(),
            self_cost: Vec::new(),
        });
        self.index.insert(key, self.file.functions.len() - 1);
        self.file.functions.len() - 1
    }
}

/// A subposition: absolute, or `+N`, `-N`, `*` relative to `last`.
fn relative(token: &str, last: u64) -> Option<u64> {
    if token == "*" {
        Some(last)
    } else if let Some(delta) = token.strip_prefix('+') {
        parse_number(delta).map(|d| last.wrapping_add(d))
    } else if let Some(delta) = token.strip_prefix('-') {
        parse_number(delta).map(|d| last.wrapping_sub(d))
    } else {
        parse_number(token)
    }
}

fn parse_number(token: &str) -> Option<u64> {
    match token
        .strip_prefix("0x")
        .or_else(|| token.strip_prefix("0X"))
    {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => token.parse().ok(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const EXAMPLE: &str = "# callgrind format
version: 1
creator: test
cmd: ./app
positions: instr line
events: Ir Dr

ob=(1) /bin/app
fl=(1) app.c
fn=(1) main
0x10 3 5 1
+4 * 2
cfi=(2) lib.c
cfn=(2) work
calls=3 0x40 10
* +1 30 9
fi=(3) inline.h
+2 7 1

fl=(2)
fn=(2)
0x40 10 30 9
cob=(2) /lib/libc.so
cfn=(3) memcpy
calls=1 0x900 0
+2 * 4

fl=(2)
fn=(2)
0x44 11 1
totals: 37 10
";

    #[test]
    fn reads_functions_calls_lines_and_compressed_names() {
        let file = ProfileFile::parse(EXAMPLE.as_bytes()).unwrap();
        assert_eq!(file.events, ["Ir", "Dr"]);
        assert_eq!(file.totals, [37, 10]);
        assert_eq!(file.cmd.as_deref(), Some("./app"));
        let names: Vec<&str> = file.functions.iter().map(|f| f.key.name.as_str()).collect();
        assert_eq!(names, ["main", "work", "memcpy"]);
        assert_eq!(file.functions[0].self_cost, [8, 1]);
        assert_eq!(file.functions[1].self_cost, [31, 9]);
        assert_eq!(file.functions[2].self_cost, [0, 0]);
        assert_eq!(file.functions[1].key.file, "lib.c");
        assert_eq!(file.functions[2].key.object, "/lib/libc.so");
        assert_eq!(file.calls.len(), 2);
        assert_eq!(
            (file.calls[0].count, file.calls[0].inclusive.clone()),
            (3, vec![30, 9])
        );
        assert_eq!(file.inclusive()[0], [38, 10]);
        // Line costs follow fi=: main's last line is inline.h:7.
        assert_eq!(file.lines[&("inline.h".to_string(), 7)], [1, 0]);
        assert_eq!(file.lines[&("app.c".to_string(), 3)], [7, 1]);
    }

    #[test]
    fn errors_name_the_line() {
        let bad = "events: Ir\nfn=(1)\n";
        assert_eq!(
            ProfileFile::parse(bad.as_bytes()).unwrap_err().to_string(),
            "line 2: name id (1) used before it was given a name"
        );
        let bad = "events: Ir\nfn=main\n1 2 3\n";
        assert!(
            ProfileFile::parse(bad.as_bytes())
                .unwrap_err()
                .to_string()
                .starts_with("line 3: 2 costs")
        );
        let bad = "events: Ir\n5 5\n";
        assert!(
            ProfileFile::parse(bad.as_bytes())
                .unwrap_err()
                .to_string()
                .contains("before any `fn=`")
        );
    }

    #[test]
    fn names_given_in_jump_lines_are_known_later() {
        // As Callgrind writes with --collect-jumps=yes.
        let text = "events: Ir\nfl=(1) a.c\nfn=(1) main\njfi=(2) b.c\njfn=(2) helper\n\
                    jump=3 0x20 4\n1 5\nfl=(2)\nfn=(2)\n2 7\n";
        let file = ProfileFile::parse(text.as_bytes()).unwrap();
        let names: Vec<(&str, &str)> = file
            .functions
            .iter()
            .map(|f| (f.key.file.as_str(), f.key.name.as_str()))
            .collect();
        assert_eq!(names, [("a.c", "main"), ("b.c", "helper")]);
        assert_eq!(file.totals, [12]);
    }

    #[test]
    fn a_file_cut_before_its_totals_is_an_error_when_its_summary_disagrees() {
        let whole = "events: Ir Dr\nsummary: 12 3\nfn=main\n1 5 1\nfn=work\n2 7 2\n";
        let file = ProfileFile::parse(whole.as_bytes()).unwrap();
        assert_eq!(file.totals, [12, 3]);
        let cut = "events: Ir Dr\nsummary: 12 3\nfn=main\n1 5 1\nfn=work\n";
        assert_eq!(
            ProfileFile::parse(cut.as_bytes()).unwrap_err().to_string(),
            "line 5: the file ends without a `totals:` line and its costs add up to 5 Ir, \
             not the 12 of its `summary:` line: it looks cut short"
        );
    }
}
