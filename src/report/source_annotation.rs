//! Source files annotated with their lines' self costs, as
//! callgrind_annotate's `--auto=yes`: the files of the top functions, each
//! line with a cost shown with a few lines of context.

use std::collections::{BTreeMap, HashMap};
use std::io::{self, BufRead, BufReader, Read, Seek, Write};
use std::path::{Path, PathBuf};

use unicode_width::UnicodeWidthChar;

use super::callgrind_file::FileLines;
use super::signed_number::grouped_signed;
use super::text_report::Report;
use crate::output::table::{Align, Cell, Style, Table};
use crate::printable::hidden;
use crate::regular_file::open_regular;

/// Lines shown around each line with a cost.
const CONTEXT: u64 = 2;

/// Bytes of a source file read at most: far more than source files hold,
/// so that a profile naming something else (a disk image, a log) reads no
/// more.
const MAX_SOURCE_BYTES: u64 = 64 << 20;

/// Bytes of a source line shown at most, the rest cut off with an
/// ellipsis: a line of megabytes (minified code, a data table) is not
/// source to read in a report.
const MAX_LINE_BYTES: usize = 4096;

/// Bytes at a file's start searched for a NUL byte, which source text
/// does not hold and binary files (an executable, an image) do, as Git and
/// grep tell binary files from text.
const BINARY_PROBE: u64 = 8000;

/// Columns between tab stops, as terminals and callgrind_annotate's
/// output show a tab.
const TAB_WIDTH: usize = 8;

/// Annotates the files of the ranked functions that can be found, then
/// every other file whose lines' costs together pass the threshold (a
/// header's inlined code, which callgrind_annotate ranks as a function of
/// that file); lists the ones that cannot be found or read, and the binary
/// ones.
pub fn write_annotated_sources(out: &mut dyn Write, report: &Report) -> io::Result<()> {
    let mut files: Vec<&str> = Vec::new();
    for f in report.ranked() {
        let file = report.file.functions[f].key.file.as_str();
        if !files.contains(&file) {
            files.push(file);
        }
    }
    let by_name: HashMap<&str, &FileLines<i64>> = (report.file.lines.iter())
        .map(|file| (file.file.as_str(), file))
        .collect();
    let mut inlined: Vec<(&str, i64)> = (report.file.lines.iter())
        .map(|file| {
            let costs = file.lines.values().map(|cost| cost[report.options.sort]);
            (file.file.as_str(), costs.fold(0, i64::saturating_add))
        })
        .filter(|&(file, total)| !files.contains(&file) && report.above_threshold(total))
        .collect();
    inlined.sort_by_key(|&(file, total)| (std::cmp::Reverse(total.unsigned_abs()), file));
    files.extend(inlined.into_iter().map(|(file, _)| file));
    let mut missing = Vec::new();
    for name in files {
        if name == "???" {
            continue;
        }
        match find(name, &report.options.include) {
            Some(path) => {
                let costs = by_name
                    .get(name)
                    .map_or_else(BTreeMap::new, |file| line_costs(report, file));
                let needed = costs
                    .keys()
                    .next_back()
                    .map_or(0, |last| last.saturating_add(CONTEXT));
                match read_lines(&path, needed) {
                    Ok(source) => annotate(out, report, &path, &costs, &source)?,
                    Err(err) => missing.push(format!("{name} ({err})")),
                }
            }
            None => missing.push(name.to_string()),
        }
    }
    if !missing.is_empty() {
        writeln!(
            out,
            "\nsource files not found or not read (--include DIR to look elsewhere):"
        )?;
        for name in missing {
            writeln!(out, "  {name}")?;
        }
    }
    Ok(())
}

/// `name` as given, else under each folder of `include`.
fn find(name: &str, include: &[PathBuf]) -> Option<PathBuf> {
    let path = Path::new(name);
    if path.is_file() {
        return Some(path.to_path_buf());
    }
    if path.is_absolute() {
        return None;
    }
    include
        .iter()
        .map(|dir| dir.join(path))
        .find(|candidate| candidate.is_file())
}

/// The lines of `file` with a cost in an event shown, by number; 0 for
/// costs at no line (a profile of Callgrind's `--dump-line=no`, code
/// without line information).
fn line_costs<'a>(report: &Report, file: &'a FileLines<i64>) -> BTreeMap<u64, &'a Vec<i64>> {
    let show = &report.options.show;
    (file.lines.iter())
        .filter(|(_, cost)| show.iter().any(|&e| cost[e] != 0))
        .map(|(&line, cost)| (line, cost))
        .collect()
}

/// The first lines of a source file, as shown.
struct Source {
    lines: Vec<String>,
    /// Whether reading stopped at [`MAX_SOURCE_BYTES`] before the lines
    /// asked for.
    cut: bool,
}

/// The first `count` lines of the file at `path`, each as
/// [`source_text`] shows it; no more of the file is read but its first
/// [`BINARY_PROBE`] bytes, in which a NUL byte makes it a binary file, an
/// error.
fn read_lines(path: &Path, count: u64) -> io::Result<Source> {
    let mut file = open_regular(path)?;
    let mut head = Vec::new();
    (&file).take(BINARY_PROBE).read_to_end(&mut head)?;
    if head.contains(&0) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "a binary file, not source text",
        ));
    }
    file.rewind()?;
    let mut reader = BufReader::new(file.take(MAX_SOURCE_BYTES));
    let (mut lines, mut buf) = (Vec::new(), Vec::new());
    while (lines.len() as u64) < count {
        buf.clear();
        if reader.read_until(b'\n', &mut buf)? == 0 {
            break;
        }
        let line = buf.strip_suffix(b"\n").unwrap_or(&buf);
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        lines.push(source_text(line));
    }
    // Stopped by the limit, not by the file's end: it has more.
    let cut = (lines.len() as u64) < count && {
        reader.get_mut().set_limit(1);
        !reader.fill_buf()?.is_empty()
    };
    Ok(Source { lines, cut })
}

/// A source line as a terminal may show it: cut after
/// [`MAX_LINE_BYTES`] (at a character's start) with an ellipsis, odd bytes
/// of a file that is not UTF-8 (a comment in Latin-1) replaced, tabs
/// expanded to the next stop of the columns shown, and other control and
/// invisible characters (an escape sequence, a right-to-left override)
/// escaped, as in names.
fn source_text(line: &[u8]) -> String {
    let mut end = line.len().min(MAX_LINE_BYTES);
    // Back over the continuation bytes (three at most) of a character the
    // cut would split.
    let floor = end.saturating_sub(3);
    while end < line.len() && end > floor && line[end] & 0xc0 == 0x80 {
        end -= 1;
    }
    let text = String::from_utf8_lossy(&line[..end]);
    let mut shown = String::with_capacity(text.len());
    let mut column = 0;
    for c in text.chars() {
        if c == '\t' {
            let spaces = TAB_WIDTH - column % TAB_WIDTH;
            shown.extend(std::iter::repeat_n(' ', spaces));
            column += spaces;
        } else if hidden(c) {
            let escaped = c.escape_default();
            column += escaped.len();
            shown.extend(escaped);
        } else {
            shown.push(c);
            column += c.width().unwrap_or(0);
        }
    }
    if end < line.len() {
        shown.push('…');
    }
    shown
}

fn annotate(
    out: &mut dyn Write,
    report: &Report,
    path: &Path,
    costs: &BTreeMap<u64, &Vec<i64>>,
    source: &Source,
) -> io::Result<()> {
    let show = &report.options.show;
    let source_lines = &source.lines;
    writeln!(out, "\n-- source: {}", path.display())?;
    let mut align = vec![Align::Right; show.len()];
    align.push(Align::Left);
    let mut table = Table::new(&align);
    let mut header: Vec<&str> = show
        .iter()
        .map(|&e| report.file.events[e].as_str())
        .collect();
    header.push("line  source");
    table.header(&header);
    let mut next = 1;
    for (&line, &cost) in costs {
        if line == 0 {
            let mut row = cost_cells(report, cost);
            row.push(Cell::styled(
                "    ?  (costs at no line of the file)",
                Style::Dim,
            ));
            table.row(row);
            continue;
        }
        // Context lines before it that the file has (a line with costs
        // past its end has none).
        let before =
            line.saturating_sub(CONTEXT).max(next)..line.min(source_lines.len() as u64 + 1);
        let from = if before.is_empty() {
            line
        } else {
            before.start
        };
        if from > next {
            table.row(gap(show.len(), from));
        }
        for shown in before {
            table.row(source_row(show.len(), source_lines, shown, None, report));
        }
        table.row(source_row(
            show.len(),
            source_lines,
            line,
            Some(cost),
            report,
        ));
        next = line.saturating_add(1);
        let until = line.saturating_add(CONTEXT).min(source_lines.len() as u64);
        let following = costs.range(next..).next().map_or(u64::MAX, |(&l, _)| l);
        while next <= until && next < following {
            table.row(source_row(show.len(), source_lines, next, None, report));
            next += 1;
        }
    }
    table.write(out, report.options.color)?;
    let beyond = costs
        .keys()
        .filter(|&&line| line > source_lines.len() as u64)
        .count();
    let lines = match beyond {
        1 => "1 line with costs lies".to_string(),
        _ => format!("{beyond} lines with costs lie"),
    };
    if beyond > 0 && source.cut {
        let read = MAX_SOURCE_BYTES >> 20;
        writeln!(
            out,
            "({lines} past the first {read} MiB of the file, which are all that is read)"
        )?;
    } else if beyond > 0 {
        writeln!(
            out,
            "({lines} beyond the end of the file: has it changed since the run?)"
        )?;
    }
    Ok(())
}

fn gap(columns: usize, line: u64) -> Vec<Cell> {
    let mut row = vec![Cell::plain(""); columns];
    row.push(Cell::styled(format!("-- line {line} --"), Style::Dim));
    row
}

fn source_row(
    columns: usize,
    source: &[String],
    line: u64,
    cost: Option<&Vec<i64>>,
    report: &Report,
) -> Vec<Cell> {
    let mut row: Vec<Cell> = match cost {
        Some(cost) => cost_cells(report, cost),
        None => vec![Cell::plain(""); columns],
    };
    let text = source.get(line as usize - 1).map_or("", String::as_str);
    row.push(Cell::plain(format!("{line:>5}  {text}")));
    row
}

/// A line's cost in each event shown, `.` for none.
fn cost_cells(report: &Report, cost: &[i64]) -> Vec<Cell> {
    report
        .options
        .show
        .iter()
        .map(|&e| match cost[e] {
            0 => Cell::styled(".", Style::Dim),
            value => Cell::plain(grouped_signed(value.into())),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A NUL byte in a file's first 8,000 bytes makes it binary, however
    /// few lines are read; one after them is shown as any control
    /// character.
    #[test]
    fn a_file_with_a_nul_byte_at_its_start_is_binary() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("file");
        // Short lines up to the last byte searched, where the NUL is.
        let lines = BINARY_PROBE as usize / 2 - 1;
        let text = |before_nul: &[u8]| {
            let mut text = b"a\n".repeat(lines);
            text.extend(before_nul);
            text.extend(b"\0\nb\n");
            std::fs::write(&path, &text).unwrap();
        };
        text(b"c");
        let err = read_lines(&path, 1).err().unwrap();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
        assert_eq!(err.to_string(), "a binary file, not source text");
        text(b"cd");
        let source = read_lines(&path, lines as u64 + 2).unwrap();
        assert_eq!(source.lines[lines], format!("cd{}", source_text(b"\0")));
        assert_eq!(source.lines[lines + 1], "b");
    }

    /// A cut backs over at most the three continuation bytes a character
    /// may have: past that the bytes are no character, and each is shown
    /// as an odd byte. A tab reaches the next stop of the columns shown.
    #[test]
    fn lines_are_cut_at_a_characters_start_and_tabs_expanded_to_stops() {
        let kept = MAX_LINE_BYTES - 4;
        let mut line = vec![b'a'; kept];
        line.extend([0x80; 6]);
        let cut = |shown: &str| shown.strip_prefix(&"a".repeat(kept)).unwrap().to_string();
        assert_eq!(
            cut(&source_text(&line)),
            format!("{}…", source_text(&[0x80]))
        );
        // Tab stops by the columns shown before each tab.
        assert_eq!(source_text(b"a\tb\tc"), "a       b       c");
        // A whole character at the cut is left out whole.
        let mut line = vec![b'a'; MAX_LINE_BYTES - 1];
        line.extend("é".as_bytes());
        assert_eq!(
            source_text(&line),
            format!("{}…", "a".repeat(MAX_LINE_BYTES - 1))
        );
    }
}
