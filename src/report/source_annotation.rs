//! Source files annotated with their lines' self costs, as
//! callgrind_annotate's `--auto=yes`: the files of the top functions, each
//! line with a cost shown with a few lines of context.

use std::collections::BTreeMap;
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use super::signed_number::grouped_signed;
use super::text_report::Report;
use crate::output::table::{Align, Cell, Style, Table};

/// Lines shown around each line with a cost.
const CONTEXT: u64 = 2;

/// Annotates the files of the ranked functions that can be found, then
/// every other file whose lines' costs together pass the threshold (a
/// header's inlined code, which callgrind_annotate ranks as a function of
/// that file); lists the ones that cannot be found.
pub fn write_annotated_sources(out: &mut dyn Write, report: &Report) -> io::Result<()> {
    let mut files: Vec<&str> = Vec::new();
    for f in report.ranked() {
        let file = report.file.functions[f].key.file.as_str();
        if !files.contains(&file) {
            files.push(file);
        }
    }
    let mut by_file: BTreeMap<&str, i64> = BTreeMap::new();
    for ((file, _), cost) in &report.file.lines {
        let total = by_file.entry(file.as_str()).or_default();
        *total = total.saturating_add(cost[report.options.sort]);
    }
    let mut inlined: Vec<(&str, i64)> = by_file
        .into_iter()
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
            // A file that is not UTF-8 (a comment in Latin-1) is shown with
            // its odd bytes replaced.
            Some(path) => match fs::read(&path) {
                Ok(bytes) => annotate(out, report, name, &path, &String::from_utf8_lossy(&bytes))?,
                Err(err) => missing.push(format!("{name} ({err})")),
            },
            None => missing.push(name.to_string()),
        }
    }
    if !missing.is_empty() {
        writeln!(
            out,
            "\nsource files not found (--include DIR to look elsewhere):"
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

fn annotate(
    out: &mut dyn Write,
    report: &Report,
    name: &str,
    path: &Path,
    text: &str,
) -> io::Result<()> {
    let show = &report.options.show;
    let costs: BTreeMap<u64, &Vec<i64>> = report
        .file
        .lines
        .iter()
        .filter(|((file, line), cost)| {
            file == name && *line > 0 && show.iter().any(|&e| cost[e] != 0)
        })
        .map(|((_, line), cost)| (*line, cost))
        .collect();
    let source: Vec<&str> = text.lines().collect();
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
    for (&line, cost) in &costs {
        // Context lines before it that the file has (a line with costs
        // past its end has none).
        let before = line.saturating_sub(CONTEXT).max(next)..line.min(source.len() as u64 + 1);
        let from = if before.is_empty() {
            line
        } else {
            before.start
        };
        if from > next {
            table.row(gap(show.len(), from));
        }
        for shown in before {
            table.row(source_row(show.len(), &source, shown, None, report));
        }
        table.row(source_row(show.len(), &source, line, Some(cost), report));
        next = line.saturating_add(1);
        let until = line.saturating_add(CONTEXT).min(source.len() as u64);
        let following = costs.range(next..).next().map_or(u64::MAX, |(&l, _)| l);
        while next <= until && next < following {
            table.row(source_row(show.len(), &source, next, None, report));
            next += 1;
        }
    }
    table.write(out, report.options.color)?;
    let beyond = costs
        .keys()
        .filter(|&&line| line > source.len() as u64)
        .count();
    if beyond > 0 {
        writeln!(
            out,
            "({beyond} lines with costs lie beyond the end of the file: has it changed since the run?)"
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
    source: &[&str],
    line: u64,
    cost: Option<&Vec<i64>>,
    report: &Report,
) -> Vec<Cell> {
    let mut row: Vec<Cell> = match cost {
        Some(cost) => report
            .options
            .show
            .iter()
            .map(|&e| match cost[e] {
                0 => Cell::styled(".", Style::Dim),
                value => Cell::plain(grouped_signed(value.into())),
            })
            .collect(),
        None => vec![Cell::plain(""); columns],
    };
    let text = source.get(line as usize - 1).copied().unwrap_or("");
    row.push(Cell::plain(format!("{line:>5}  {text}")));
    row
}
