//! The reader of callgrind-format text: name compression, positions
//! written relative to the line before, calls and their inclusive costs,
//! and the sums it checks as it goes.

use std::collections::HashMap;
use std::io::BufRead;

use super::whole::{check_complete, check_totals};
use super::{
    CallEntry, CostValue, FunctionEntry, FunctionIndex, FunctionKey, ParseError, ProfileFile,
};
use crate::byte_order_mark::without_bom;
use crate::output::json::Summary;
use crate::printable::{printable, shown};
use crate::trace::binary::is_binary;
use crate::trace::imported_format;
use crate::trace::lines::{LineRead, read_line, too_long};

/// Parses a whole profile.
pub(super) fn parse<C: CostValue>(input: impl BufRead) -> Result<ProfileFile<C>, ParseError> {
    Parser::default().run(input)
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
        for cost in file.lines.values_mut() {
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
        let key = (self.line_file.clone(), line);
        [
            &mut self.file.functions[function].self_cost,
            self.file.lines.entry(key).or_default(),
            &mut self.self_total,
            &mut self.inclusive[function],
        ]
        .into_iter()
        .try_for_each(|sum| checked_add(sum, costs))
        .ok_or(Sums::Costs)
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
            "desc" => {
                // Shown by `diff` and `check`: escaped as names are.
                self.file.setup.read_desc(&printable(value));
                self.tree_described |= value.starts_with("Back-dating tree");
            }
            "summary" => self.summary = Some(costs(value)?),
            "totals" => self.totals = Some((costs(value)?, number)),
            // Headers with nothing this reader uses: version, creator, pid,
            // part, thread, event (long names), and any a writer adds.
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
pub(super) mod tests {
    use super::*;
    use crate::report::Setup;

    pub(in crate::report::callgrind_file) const EXAMPLE: &str = "# callgrind format
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
totals: 39 10
";

    /// The error of `text` read with signed costs.
    pub(in crate::report::callgrind_file) fn signed_error(text: &str) -> String {
        ProfileFile::<i64>::parse(text.as_bytes())
            .unwrap_err()
            .to_string()
    }

    /// A call without `cfi=` is to a function of the file the cost lines
    /// are in: after `fi=`, the inlined file's, not the function's.
    #[test]
    fn a_call_without_its_file_is_to_the_current_file() {
        let text = "events: Ir
fl=(1) a.c
fn=(1) main
1 1
fi=(2) h.h
cfn=(2) helper
calls=1 0
5 3
fl=(2)
fn=(2)
0 3
";
        let file = ProfileFile::<u64>::parse(text.as_bytes()).unwrap();
        let names: Vec<(&str, &str)> = file
            .functions
            .iter()
            .map(|f| (f.key.name.as_str(), f.key.file.as_str()))
            .collect();
        assert_eq!(names, [("main", "a.c"), ("helper", "h.h")]);
        assert_eq!((file.calls[0].caller, file.calls[0].callee), (0, 1));
    }

    /// The caches are read from `desc:` lines; a simulated run is taken
    /// as back-dated when linegrind gave its tree's statistics.
    #[test]
    fn desc_lines_tell_the_caches_and_back_dating() {
        let setup = |descs: &str| {
            let text = format!("{descs}events: Ir\nfn=main\n1 1\n");
            ProfileFile::<u64>::parse(text.as_bytes()).unwrap().setup
        };
        let ll = "desc: LL cache: 8388608 B, 64 B, 16-way associative\n";
        let plain = setup(ll);
        assert_eq!(
            plain.caches[2].as_deref(),
            Some("8388608 B, 64 B, 16-way associative")
        );
        assert_eq!(
            (&plain.caches[..2], plain.backdate),
            (&[None, None][..], Some(false))
        );
        let tree = "desc: Back-dating tree max nodes: 3\n";
        assert_eq!(setup(&format!("{ll}{tree}")).backdate, Some(true));
        // No cache described: nothing known of back-dating either.
        assert_eq!(setup(tree), Setup::default());
        // Shown as names are, a terminal's escapes escaped.
        let odd = setup("desc: D1 cache: \u{1b}[31m\n");
        assert_eq!(odd.caches[1].as_deref(), Some("\\u{1b}[31m"));
    }

    /// A callee's object and file go with its name: a `cfn=` not followed
    /// by `calls=` does not hand them to the next callee, and a callee
    /// left without its call ends with its function.
    #[test]
    fn a_callee_named_without_its_call_keeps_its_object_and_file() {
        let text = "events: Ir
ob=(1) /bin/x
fl=(1) a.c
fn=(1) main
1 10
cob=(2) /lib/libc.so
cfi=(2) libc.c
cfn=(2) memcpy
cfn=(3) helper
calls=1 5
2 7
cob=(2)
cfn=(2)
fn=(3)
5 7
calls=1 5
";
        let err = signed_error(text);
        assert_eq!(err, "line 16: `calls=` without a `cfn=` before it");
        let file = ProfileFile::<u64>::parse(text.rsplit_once("calls").unwrap().0.as_bytes());
        let file = file.unwrap();
        let callee = &file.functions[file.calls[0].callee].key;
        assert_eq!(
            (
                callee.object.as_str(),
                callee.file.as_str(),
                callee.name.as_str()
            ),
            ("/bin/x", "a.c", "helper")
        );
    }

    #[test]
    fn header_lines_must_fit_the_events_and_name_known_positions() {
        let err = signed_error(&EXAMPLE.replace("positions: instr line", "positions: instr foo"));
        assert_eq!(
            err,
            "line 5: unknown position `foo`: a profile's positions are `instr` and `line`"
        );
        let totals = EXAMPLE.lines().find(|l| l.starts_with("totals:")).unwrap();
        let err = signed_error(&EXAMPLE.replace(totals, &format!("{totals} 1")));
        assert!(
            err.ends_with(": 3 costs for 2 events in `totals:`"),
            "{err}"
        );
    }

    #[test]
    fn a_file_cut_short_in_its_header_or_given_a_second_events_line_is_refused() {
        let cut = EXAMPLE.find("fl=").unwrap();
        for end in [EXAMPLE.find("events:").unwrap() + 10, cut] {
            let err = signed_error(&EXAMPLE[..end]);
            assert!(
                err.contains("ends without a cost line or a `totals:` line"),
                "{err}"
            );
        }
        let err = signed_error(&format!("{EXAMPLE}events: Bogus\n"));
        assert!(err.contains("a second `events:` line"), "{err}");
        let err = signed_error(&EXAMPLE.replace("events: Ir Dr", "events: "));
        assert_eq!(err, "line 6: an `events:` line that names no event");
    }

    #[test]
    fn names_in_other_encodings_are_read_and_bad_lines_shown_escaped() {
        let latin1 = EXAMPLE.replace("fl=(1) app.c", "fl=(1) caf\u{e9}.c");
        let mut bytes = latin1.into_bytes();
        let at = bytes
            .windows(2)
            .position(|w| w == "\u{e9}".as_bytes())
            .unwrap();
        bytes.splice(at..at + 2, [0xe9]);
        let file = ProfileFile::<i64>::parse(&bytes[..]).unwrap();
        assert_eq!(file.functions[0].key.file, "caf\u{fffd}.c");
        let err = signed_error(&EXAMPLE.replace("+2 * 4", "+2 * 4\0\x1b[31m"));
        assert!(err.contains("bad cost `4\\u{0}\\u{1b}[31m`"), "{err}");
    }

    #[test]
    fn names_the_other_linegrind_files_it_is_given() {
        let json = signed_error("{\n  \"events\": [\"Ir\"]\n}\n");
        assert!(json.contains("line 1: this is JSON"), "{json}");
        for text in [
            "linegrind-trace text 1\n",
            "# a trace\n\n  linegrind-trace text 1\n",
        ] {
            let text_trace = signed_error(text);
            assert!(
                text_trace.contains("this is a linegrind trace"),
                "{text_trace}"
            );
        }
        let binary = ProfileFile::<i64>::parse(&b"LGTRACE\0\x01\0\0\0"[..]).unwrap_err();
        assert!(
            binary.to_string().contains("this is a linegrind trace"),
            "{binary}"
        );
        for (text, format) in [
            ("==12== Lackey\nI  0400,3\n", "a Valgrind Lackey trace"),
            ("2 400\n0 7ff0\n", "a Dinero din (LABEL ADDRESS) trace"),
            ("i 400 3\nr 7ff0 8\n", "a Dinero extended din"),
            (
                "\u{feff}2 400\n0 7ff0\n",
                "a Dinero din (LABEL ADDRESS) trace",
            ),
        ] {
            let imported = signed_error(text);
            assert!(
                imported.contains(&format!("this is {format}")),
                "{imported}"
            );
        }
        // Valgrind's messages alone, or a file that opens with dashes, are
        // no trace.
        for text in [
            "==1== Callgrind, a call-graph generating cache profiler\n",
            "\u{feff}==1== Memcheck\n",
        ] {
            let log = signed_error(text);
            assert!(log.contains("line 1: this is Valgrind's log"), "{log}");
        }
        for text in [
            "--------\nProfile data file 'callgrind.out.1'\n",
            "--- a/x.c\n+++ b/x.c\n",
        ] {
            let error = signed_error(text);
            assert!(!error.contains("trace"), "{error}");
        }
    }

    #[test]
    fn costs_before_the_events_line_are_not_a_profile() {
        for (text, expected) in [
            ("hello\n", "line 1: `hello` before any `events:` line"),
            ("[1,2]\n", "line 1: `[1,2]` before any `events:` line"),
            (
                "fn=main\n1 2\nevents: Ir\n",
                "line 2: `1 2` before any `events:` line",
            ),
            (
                "totals: 100 7 9\nevents: Ir\n",
                "line 1: `totals:` before any `events:` line",
            ),
            (
                "summary: 10\nevents: Ir\n",
                "line 1: `summary:` before any `events:` line",
            ),
        ] {
            let err = signed_error(text);
            assert!(err.starts_with(expected), "{text:?}: {err}");
        }
    }

    #[test]
    fn a_byte_order_mark_opens_no_line() {
        let plain = ProfileFile::<i64>::parse(EXAMPLE.as_bytes()).unwrap();
        let marked = format!("\u{feff}{EXAMPLE}");
        assert!(ProfileFile::<i64>::parse(marked.as_bytes()).unwrap() == plain);
    }

    #[test]
    fn reads_functions_calls_lines_and_compressed_names() {
        let file = ProfileFile::<i64>::parse(EXAMPLE.as_bytes()).unwrap();
        assert_eq!(file.events, ["Ir", "Dr"]);
        assert_eq!(file.totals, [39, 10]);
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
            signed_error(bad),
            "line 2: name id (1) used before it was given a name"
        );
        let bad = "events: Ir\nfn=main\n1 2 3\n";
        assert!(signed_error(bad).starts_with("line 3: 2 costs"));
        let bad = "events: Ir\n5 5\n";
        assert!(signed_error(bad).contains("before any `fn=`"));
    }

    #[test]
    fn an_event_listed_twice_is_an_error() {
        let bad = "version: 1\nevents: Ir Dr Ir\nfn=main\n1 10 5 2\n";
        assert_eq!(signed_error(bad), "line 2: event `Ir` is listed twice");
    }

    #[test]
    fn only_digits_in_parentheses_make_a_name_id() {
        // `(below main)` written uncompressed, as other tools may.
        let text = "events: Ir\nfl=(1) a.c\nfn=(below main)\n0 3\ncfn=(2) (x\ncalls=1 0\n0 2\n\
                    fn=(2)\n0 2\nfn=(3\n0 1\n";
        let file = ProfileFile::<i64>::parse(text.as_bytes()).unwrap();
        let names: Vec<&str> = file.functions.iter().map(|f| f.key.name.as_str()).collect();
        assert_eq!(names, ["(below main)", "(x", "(3"]);
        assert_eq!(file.inclusive()[0], [5]);
        let bad = "events: Ir\nfn=(99999999999999999999) main\n";
        assert_eq!(
            signed_error(bad),
            "line 2: name id (99999999999999999999) is too large"
        );
    }

    #[test]
    fn names_given_in_jump_lines_are_known_later() {
        // As Callgrind writes with --collect-jumps=yes.
        let text = "events: Ir\nfl=(1) a.c\nfn=(1) main\njfi=(2) b.c\njfn=(2) helper\n\
                    jump=3 0x20 4\n1 5\nfl=(2)\nfn=(2)\n2 7\n";
        let file = ProfileFile::<i64>::parse(text.as_bytes()).unwrap();
        let names: Vec<(&str, &str)> = file
            .functions
            .iter()
            .map(|f| (f.key.file.as_str(), f.key.name.as_str()))
            .collect();
        assert_eq!(names, [("a.c", "main"), ("b.c", "helper")]);
        assert_eq!(file.totals, [12]);
    }

    #[test]
    fn negative_costs_are_read_where_costs_are_signed() {
        let diff = "events: Ir Dr\nfn=main\n0 -5 2\ncfn=work\ncalls=1 0\n0 -7 -1\n\
                    fn=work\n0 -7 -1\ntotals: -12 1\n";
        let file = ProfileFile::<i64>::parse(diff.as_bytes()).unwrap();
        assert_eq!(file.totals, [-12, 1]);
        assert_eq!(file.functions[0].self_cost, [-5, 2]);
        assert_eq!(file.inclusive(), [vec![-12, 1], vec![-7, -1]]);
        assert_eq!(
            ProfileFile::<u64>::parse(diff.as_bytes())
                .unwrap_err()
                .to_string(),
            "line 3: cost `-5` out of range in `0 -5 2`"
        );
        let bad = "events: Ir\nfn=main\n0 -x\n";
        assert_eq!(signed_error(bad), "line 3: bad cost `-x` in `0 -x`");
    }

    #[test]
    fn sums_out_of_range_are_errors_naming_the_line() {
        let max = i64::MAX;
        // One function's self cost.
        assert_eq!(
            signed_error(&format!("events: Ir\nfn=f\n1 {max}\n2 1\n")),
            "line 4: the costs add up outside -2^63 to 2^63 - 1 at `2 1`"
        );
        // The total of two functions.
        assert!(
            signed_error(&format!("events: Ir\nfn=f\n1 {max}\nfn=g\n2 1\n"))
                .starts_with("line 5: the costs add up outside -2^63 to 2^63 - 1")
        );
        // A caller's inclusive cost: its self cost plus its calls'.
        assert!(
            signed_error(&format!(
                "events: Ir\nfn=f\n1 {max}\ncfn=g\ncalls=1 0\n2 1\nfn=g\n3 1\n"
            ))
            .starts_with("line 6: the costs add up outside -2^63 to 2^63 - 1")
        );
        // Call counts.
        let count = u64::MAX;
        assert!(
            signed_error(&format!(
                "events: Ir\nfn=f\ncfn=g\ncalls={count} 0\n2 0\ncfn=g\ncalls=1 0\n3 0\n"
            ))
            .starts_with("line 8: the call counts add up beyond 2^64 - 1")
        );
        // The least signed cost adds up too.
        let min = i64::MIN;
        assert!(
            signed_error(&format!("events: Ir\nfn=f\n1 {min}\n2 -1\n"))
                .starts_with("line 4: the costs add up outside -2^63 to 2^63 - 1")
        );
        // Unsigned: the same rule at 2^64.
        let unsigned = format!("events: Ir\nfn=f\n1 {count}\n2 1\n");
        assert!(
            ProfileFile::<u64>::parse(unsigned.as_bytes())
                .unwrap_err()
                .to_string()
                .starts_with("line 4: the costs add up outside 0 to 2^64 - 1")
        );
    }
}
