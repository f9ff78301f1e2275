//! The reader of callgrind-format text: name compression, positions
//! written relative to the line before, calls and their inclusive costs,
//! and the sums it checks as it goes.

use std::collections::HashMap;
use std::io::BufRead;

use super::whole::{check_complete, check_totals};
use super::{
    CallEntry, CostValue, FileLines, FunctionEntry, FunctionIndex, FunctionKey, ParseError,
    ProfileFile,
};
use crate::byte_order_mark::without_bom;
use crate::output::json::Summary;
use crate::printable::{printable, shown};
use crate::trace::binary::is_binary;
use crate::trace::imported_format;
use crate::trace::lines::{LineRead, read_line, too_long};

/// Parses a profile, with the self costs of its source lines where
/// `keep_lines`.
pub(super) fn parse<C: CostValue>(
    input: impl BufRead,
    keep_lines: bool,
) -> Result<ProfileFile<C>, ParseError> {
    Parser {
        keep_lines,
        ..Parser::default()
    }
    .run(input)
}

/// Name compression tables: one for objects, one for files, one for functions.
#[derive(Default)]
struct Names {
    tables: [HashMap<u64, String>; 3],
}

impl Names {
    /// Resolves `spec=(id) name`, `spec=(id)` or `spec=name`. As in
    /// callgrind_annotate, only digits in parentheses make an id: a name
    /// such as `(below main)` written uncompressed is a name.
    fn resolve(&mut self, table: usize, value: &str, line: u64) -> Result<String, ParseError> {
        let value = printable(value.trim());
        let Some((digits, name)) = value
            .strip_prefix('(')
            .and_then(|rest| rest.split_once(')'))
            .filter(|(digits, _)| !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
        else {
            return Ok(value.to_string());
        };
        let id: u64 = digits.parse().map_err(|_| ParseError {
            line,
            what: format!("name id ({digits}) is too large"),
        })?;
        let name = name.trim();
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

/// What a file starting with `start` is when it is one of linegrind's
/// other files rather than a profile: the mistakes worth naming.
fn not_a_profile(start: &[u8]) -> Option<String> {
    // A text trace may open with comments, as a profile does.
    let first_line = without_bom(start)
        .split(|&b| b == b'\n')
        .map(<[u8]>::trim_ascii)
        .find(|line| !line.is_empty() && !line.starts_with(b"#"))
        .unwrap_or_default();
    if is_binary(start) || first_line.starts_with(b"linegrind-trace") {
        Some(
            "this is a linegrind trace (simulate it with `linegrind sim` and read the file it writes)"
                .into(),
        )
    } else if Summary::is_json(start) {
        Some(
            "this is JSON (a `sim --json` summary, which `linegrind check` and `diff` read)".into(),
        )
    } else if let Some(format) = imported_format(start) {
        Some(format!(
            "this is a {} trace (simulate it with `linegrind sim` and read the file it writes)",
            format.describe()
        ))
    } else if start.starts_with(&[0x1f, 0x8b]) {
        Some(
            "this is compressed with gzip (read it through `<(zcat FILE)`, or unpack it first)"
                .into(),
        )
    } else if is_valgrind_message(first_line) {
        Some(
            "this is Valgrind's log, its messages (Callgrind writes its profile to \
             callgrind.out.PID)"
                .into(),
        )
    } else {
        None
    }
}

/// Whether `line` is one of Valgrind's messages: `==PID==` first.
fn is_valgrind_message(line: &[u8]) -> bool {
    line.strip_prefix(b"==")
        .and_then(|rest| {
            let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
            rest[digits..].strip_prefix(b"==").filter(|_| digits > 0)
        })
        .is_some()
}

/// Adds `costs` to `into`, which grows to their length; `None`, with
/// `into` partly added to, when a sum leaves `C`'s range.
fn checked_add<C: CostValue>(into: &mut Vec<C>, costs: &[C]) -> Option<()> {
    if into.len() < costs.len() {
        into.resize(costs.len(), C::default());
    }
    for (into, &cost) in into.iter_mut().zip(costs) {
        *into = into.checked_add(cost)?;
    }
    Some(())
}

/// Sums that went out of range.
enum Sums {
    Costs,
    Counts,
}

#[derive(Default)]
struct Parser<C> {
    file: ProfileFile<C>,
    names: Names,
    index: HashMap<FunctionKey, FunctionIndex>,
    call_index: HashMap<(FunctionIndex, FunctionIndex), usize>,
    object: String,
    fn_file: String,
    line_file: String,
    /// Whether the self costs of lines are kept, in
    /// [`ProfileFile::lines`], where each file's index is in `line_files`,
    /// and `line_file`'s, once a cost line looked it up, in `line_file_at`.
    keep_lines: bool,
    line_files: HashMap<String, usize>,
    line_file_at: Option<usize>,
    function: Option<FunctionIndex>,
    /// `cob=` and `cfi=` given for the next `cfn=`.
    callee_object: Option<String>,
    callee_file: Option<String>,
    /// The function the next `calls=` goes to: its name, and the object
    /// and file given before it.
    callee: Option<(String, Option<String>, Option<String>)>,
    /// A `calls=` line waits for its cost line: (callee, count).
    pending_call: Option<(FunctionIndex, u64)>,
    last: Vec<u64>,
    summary: Option<Vec<C>>,
    /// The `totals:` line's costs, and its line number.
    totals: Option<(Vec<C>, u64)>,
    /// The sum of every self cost so far.
    self_total: Vec<C>,
    /// Whether a cost line was read.
    costs_read: bool,
    /// Whether a `desc:` line gave back-dating tree statistics, which
    /// linegrind writes when it back-dated cache use.
    tree_described: bool,
    /// Each function's inclusive cost so far, summed only to check that
    /// [`ProfileFile::inclusive`] fits in `C`.
    inclusive: Vec<Vec<C>>,
}

impl<C: CostValue> Parser<C> {
    fn run(mut self, mut input: impl BufRead) -> Result<ProfileFile<C>, ParseError> {
        if let Ok(start) = input.fill_buf()
            && let Some(what) = not_a_profile(start)
        {
            return Err(ParseError {
                line: 1,
                what: format!("{what}, not a callgrind-format profile"),
            });
        }
        let mut buf = Vec::new();
        let mut number = 0u64;
        self.file.positions = vec!["line".to_string()];
        self.last = vec![0];
        loop {
            let error = |what: String| ParseError {
                line: number + 1,
                what,
            };
            match read_line(&mut input, &mut buf) {
                Err(err) => return Err(error(format!("read error: {err}"))),
                Ok(LineRead::End) => break,
                Ok(LineRead::TooLong) => {
                    return Err(error(too_long(": not a callgrind-format profile")));
                }
                Ok(LineRead::Line) => {}
            }
            number += 1;
            // Names in other encodings than UTF-8 are read as well as they
            // go, as callgrind_annotate reads them.
            // A byte-order mark, as some editors save text, opens no line.
            let line = match number {
                1 => without_bom(&buf),
                _ => &buf,
            };
            let text = String::from_utf8_lossy(line);
            self.line(text.trim_end(), number)?;
        }
        if self.pending_call.is_some() {
            return Err(ParseError {
                line: number,
                what: "the file ends after `calls=` without its cost line".into(),
            });
        }
        if number == 0 {
            return Err(ParseError {
                line: 0,
                what: "the file is empty: not a callgrind-format profile".into(),
            });
        }
        if self.totals.is_none() && !self.costs_read {
            return Err(ParseError {
                line: number,
                what: "the file ends without a cost line or a `totals:` line: \
                       it looks cut short, or is not a profile"
                    .into(),
            });
        }
        // Callgrind, Cachegrind and linegrind, whose files name the
        // command run (`cmd:`), state the totals (Cachegrind's `summary:`
        // comes last); other writers need not.
        if self.totals.is_none() && self.summary.is_none() && self.file.cmd.is_some() {
            return Err(ParseError {
                line: number,
                what: "the file ends without a `summary:` or `totals:` line, which the \
                       Valgrind tools and linegrind write (their files have a `cmd:` line, \
                       as this one): it looks cut short"
                    .into(),
            });
        }
        let mut file = self.file;
        // A simulated run's file that gives no tree statistics was not
        // back-dated (Callgrind's never is).
        file.setup.backdate = file.setup.simulated().then_some(self.tree_described);
        match (&self.totals, &self.summary) {
            (Some((totals, line)), _) => check_totals(&file, &self.self_total, totals, *line)?,
            (None, Some(summary)) => check_complete(&file, &self.self_total, summary, number)?,
            (None, None) => {}
        }
        file.totals = match (self.totals, self.summary) {
            (Some((totals, _)), _) => totals,
            (None, Some(summary)) => summary,
            (None, None) => self.self_total,
        };
        // Every cost vector has one value per event (lines leave out
        // trailing zeros).
        let events = file.events.len();
        let zero = C::default();
        file.totals.resize(events, zero);
        for function in &mut file.functions {
            function.self_cost.resize(events, zero);
        }
        for call in &mut file.calls {
            call.inclusive.resize(events, zero);
        }
        for cost in file
            .lines
            .iter_mut()
            .flat_map(|file| file.lines.values_mut())
        {
            cost.resize(events, zero);
        }
        Ok(file)
    }

    fn line(&mut self, text: &str, number: u64) -> Result<(), ParseError> {
        let error = |what: String| ParseError { line: number, what };
        if text.is_empty() || text.starts_with('#') {
            return Ok(());
        }
        if let Some((key, value)) = text.split_once('=')
            && !key.contains(' ')
            && !key.contains(':')
        {
            return self.spec(key, value, number);
        }
        if let Some((key, value)) = text.split_once(':')
            && !key.contains(' ')
            && !key.starts_with(['+', '-', '*'])
        {
            return self.header(key, value.trim(), number);
        }
        // A cost line: positions, then costs.
        let quoted = || shown(text.as_bytes());
        if self.file.events.is_empty() {
            return Err(error(format!(
                "`{}` before any `events:` line: not a callgrind-format profile",
                quoted()
            )));
        }
        let mut tokens = text.split_ascii_whitespace();
        let mut line = 0;
        for slot in 0..self.file.positions.len() {
            let token = tokens.next().ok_or_else(|| {
                error(format!("a cost line without its positions: `{}`", quoted()))
            })?;
            let value = relative(token, self.last[slot]).ok_or_else(|| {
                error(format!(
                    "bad position `{}` in `{}`",
                    shown(token.as_bytes()),
                    quoted()
                ))
            })?;
            self.last[slot] = value;
            if self.file.positions[slot] == "line" {
                line = value;
            }
        }
        let mut costs = Vec::with_capacity(self.file.events.len());
        for token in tokens {
            costs.push(
                parse_cost(token).map_err(|what| error(format!("{what} in `{}`", quoted())))?,
            );
        }
        if costs.len() > self.file.events.len() {
            return Err(error(format!(
                "{} costs for {} events in `{}`",
                costs.len(),
                self.file.events.len(),
                quoted()
            )));
        }
        let Some(function) = self.function else {
            return Err(error("a cost line before any `fn=`".into()));
        };
        self.costs_read = true;
        let added = match self.pending_call.take() {
            Some((callee, count)) => self.add_call(function, callee, count, &costs),
            None => self.add_self(function, line, &costs),
        };
        added.map_err(|sums| {
            let beyond = match sums {
                Sums::Costs => format!("the costs add up outside {}", C::RANGE),
                Sums::Counts => "the call counts add up beyond 2^64 - 1".to_string(),
            };
            error(format!("{beyond} at `{}`", quoted()))
        })
    }

    /// Adds a call's count and cost to its arc and to its caller's
    /// inclusive cost; which sums went out of range, if any did.
    fn add_call(
        &mut self,
        caller: FunctionIndex,
        callee: FunctionIndex,
        count: u64,
        costs: &[C],
    ) -> Result<(), Sums> {
        let key = (caller, callee);
        let at = match self.call_index.get(&key) {
            Some(&at) => at,
            None => {
                self.file.calls.push(CallEntry {
                    caller,
                    callee,
                    count: 0,
                    inclusive: Vec::new(),
                });
                self.call_index.insert(key, self.file.calls.len() - 1);
                self.file.calls.len() - 1
            }
        };
        let call = &mut self.file.calls[at];
        call.count = call.count.checked_add(count).ok_or(Sums::Counts)?;
        checked_add(&mut call.inclusive, costs).ok_or(Sums::Costs)?;
        if caller != callee {
            checked_add(&mut self.inclusive[caller], costs).ok_or(Sums::Costs)?;
        }
        Ok(())
    }

    /// Adds a self cost to its function, its line, the total and the
    /// function's inclusive cost; which sums went out of range, if any did.
    fn add_self(&mut self, function: FunctionIndex, line: u64, costs: &[C]) -> Result<(), Sums> {
        let line_cost = match self.keep_lines {
            true => {
                let at = self.line_file_index();
                Some(self.file.lines[at].lines.entry(line).or_default())
            }
            false => None,
        };
        [
            &mut self.file.functions[function].self_cost,
            &mut self.self_total,
            &mut self.inclusive[function],
        ]
        .into_iter()
        .chain(line_cost)
        .try_for_each(|sum| checked_add(sum, costs))
        .ok_or(Sums::Costs)
    }

    /// The index in [`ProfileFile::lines`] of the file the cost lines are
    /// in now, looked up once after it changes.
    fn line_file_index(&mut self) -> usize {
        if let Some(at) = self.line_file_at {
            return at;
        }
        let lines = &mut self.file.lines;
        let at = *self
            .line_files
            .entry(self.line_file.clone())
            .or_insert_with_key(|file| {
                lines.push(FileLines {
                    file: file.clone(),
                    lines: Default::default(),
                });
                lines.len() - 1
            });
        self.line_file_at = Some(at);
        at
    }

    /// Makes `file` the one the cost lines are in.
    fn set_line_file(&mut self, file: String) {
        if file != self.line_file {
            self.line_file = file;
            self.line_file_at = None;
        }
    }

    /// `key=value` lines: names of objects, files and functions, and calls.
    fn spec(&mut self, key: &str, value: &str, number: u64) -> Result<(), ParseError> {
        let error = |what: String| ParseError { line: number, what };
        match key {
            "ob" => self.object = self.names.resolve(OBJECTS, value, number)?,
            "fl" => {
                self.fn_file = self.names.resolve(FILES, value, number)?;
                self.set_line_file(self.fn_file.clone());
            }
            "fi" | "fe" => {
                let file = self.names.resolve(FILES, value, number)?;
                self.set_line_file(file);
            }
            "fn" => {
                let name = self.names.resolve(FUNCTIONS, value, number)?;
                let key = FunctionKey {
                    object: self.object.clone(),
                    file: self.fn_file.clone(),
                    name,
                };
                self.function = Some(self.function_index(key));
                self.set_line_file(self.fn_file.clone());
                // A callee left without its call ends with the function.
                self.callee_object = None;
                self.callee_file = None;
                self.callee = None;
            }
            "cob" => self.callee_object = Some(self.names.resolve(OBJECTS, value, number)?),
            "cfi" | "cfl" => self.callee_file = Some(self.names.resolve(FILES, value, number)?),
            "cfn" => {
                // The object and file given before a callee's name are its
                // own, as callgrind_annotate reads them, not the next
                // callee's too when no `calls=` follows.
                let name = self.names.resolve(FUNCTIONS, value, number)?;
                let (object, file) = (self.callee_object.take(), self.callee_file.take());
                self.callee = Some((name, object, file));
            }
            "calls" => {
                let count = value
                    .split_ascii_whitespace()
                    .next()
                    .and_then(parse_number)
                    .ok_or_else(|| {
                        error(format!(
                            "bad call count in `calls={}`",
                            shown(value.as_bytes())
                        ))
                    })?;
                let (name, object, file) = self
                    .callee
                    .take()
                    .ok_or_else(|| error("`calls=` without a `cfn=` before it".into()))?;
                let key = FunctionKey {
                    object: object.unwrap_or_else(|| self.object.clone()),
                    // Without `cfi=`, the file the cost lines are in now
                    // (`fi=` and `fe=` included), as KCachegrind and
                    // callgrind_annotate read it.
                    file: file.unwrap_or_else(|| self.line_file.clone()),
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
            other => {
                let other = shown(other.as_bytes());
                return Err(error(format!("unknown specification `{other}=`")));
            }
        }
        Ok(())
    }

    /// `key: value` lines of the header (and `totals:` at the end).
    fn header(&mut self, key: &str, value: &str, number: u64) -> Result<(), ParseError> {
        let error = |what: String| ParseError { line: number, what };
        let events = self.file.events.len();
        let costs = |value: &str| -> Result<Vec<C>, ParseError> {
            let costs: Vec<C> = value
                .split_ascii_whitespace()
                .map(|token| parse_cost(token).map_err(error))
                .collect::<Result<_, _>>()?;
            if events == 0 {
                return Err(error(format!("`{key}:` before any `events:` line")));
            }
            if costs.len() > events {
                return Err(error(format!(
                    "{} costs for {events} events in `{key}:`",
                    costs.len()
                )));
            }
            Ok(costs)
        };
        match key {
            "events" => {
                if !self.file.events.is_empty() {
                    return Err(ParseError {
                        line: number,
                        what: "a second `events:` line".into(),
                    });
                }
                self.file.events = value
                    .split_ascii_whitespace()
                    .map(|event| printable(event).into_owned())
                    .collect();
                let events = &self.file.events;
                if events.is_empty() {
                    return Err(ParseError {
                        line: number,
                        what: "an `events:` line that names no event".into(),
                    });
                }
                let mut seen = std::collections::HashSet::with_capacity(events.len());
                if let Some(twice) = events.iter().position(|event| !seen.insert(event)) {
                    return Err(ParseError {
                        line: number,
                        what: format!("event `{}` is listed twice", events[twice]),
                    });
                }
            }
            "positions" => {
                self.file.positions = value.split_ascii_whitespace().map(str::to_string).collect();
                let positions = &self.file.positions;
                if let Some(unknown) = positions.iter().find(|p| *p != "instr" && *p != "line") {
                    return Err(error(format!(
                        "unknown position `{}`: a profile's positions are `instr` and `line`",
                        shown(unknown.as_bytes())
                    )));
                }
                self.last = vec![0; self.file.positions.len()];
            }
            "cmd" => self.file.cmd = Some(value.to_string()),
            "part" => {
                if self.file.setup.part.is_some() {
                    return Err(error(format!(
                        "a second profile in the file (`part: {}`): a file of several dumps \
                         or threads (Callgrind's --combine-dumps=yes) is not read; without \
                         that option Callgrind writes each to a file of its own",
                        shown(value.as_bytes())
                    )));
                }
                self.file.setup.part = Some(value.trim().parse().map_err(|_| {
                    error(format!("bad part number `{}`", shown(value.as_bytes())))
                })?);
            }
            "desc" => {
                // Shown by `diff` and `check`: escaped as names are.
                self.file.setup.read_desc(&printable(value));
                self.tree_described |= value.starts_with("Back-dating tree");
            }
            "summary" => self.summary = Some(costs(value)?),
            "totals" => self.totals = Some((costs(value)?, number)),
            // Headers with nothing this reader uses: version, creator, pid,
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
        self.inclusive.push(Vec::new());
        self.index.insert(key, self.file.functions.len() - 1);
        self.file.functions.len() - 1
    }
}

/// A subposition: absolute, or `+N`, `-N`, `*` relative to `last`; `None`
/// for no number, or one that leaves 0 to 2^64 - 1.
fn relative(token: &str, last: u64) -> Option<u64> {
    if token == "*" {
        Some(last)
    } else if let Some(delta) = token.strip_prefix('+') {
        parse_number(delta).and_then(|d| last.checked_add(d))
    } else if let Some(delta) = token.strip_prefix('-') {
        parse_number(delta).and_then(|d| last.checked_sub(d))
    } else {
        parse_number(token)
    }
}

/// A cost: decimal, with a sign where `C` has one, or hexadecimal; the
/// error says whether the token is no number or one out of `C`'s range.
fn parse_cost<C: CostValue>(token: &str) -> Result<C, String> {
    let hex = token
        .strip_prefix("0x")
        .or_else(|| token.strip_prefix("0X"));
    let value = match hex {
        Some(hex) => u64::from_str_radix(hex, 16)
            .ok()
            .and_then(|value| C::try_from(value).ok()),
        None => token.parse().ok(),
    };
    let integer = match hex {
        Some(hex) => !hex.is_empty() && hex.bytes().all(|b| b.is_ascii_hexdigit()),
        None => {
            let digits = token.strip_prefix(['-', '+']).unwrap_or(token);
            !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
        }
    };
    match value {
        Some(value) => Ok(value),
        None if integer => Err(format!("cost `{}` out of range", shown(token.as_bytes()))),
        None => Err(format!("bad cost `{}`", shown(token.as_bytes()))),
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
pub(super) mod tests;
