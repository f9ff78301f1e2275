//! Text tables with aligned columns, coloured only when asked (on a
//! terminal).

use std::io::{self, Write};

use unicode_width::UnicodeWidthStr;

/// Columns a cell is padded to at most: one long name (a C++ template's)
/// would push every row's later columns that far; a wider cell pushes its
/// own row's only.
const MAX_PADDED: usize = 100;

/// How a column lines up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
}

/// How a cell looks on a terminal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    Plain,
    Bold,
    Dim,
    /// Worse: a cost went up, a limit was exceeded.
    Red,
    /// Better: a cost went down.
    Green,
}

impl Style {
    fn ansi(self) -> Option<&'static str> {
        match self {
            Style::Plain => None,
            Style::Bold => Some("\x1b[1m"),
            Style::Dim => Some("\x1b[2m"),
            Style::Red => Some("\x1b[31m"),
            Style::Green => Some("\x1b[32m"),
        }
    }
}

/// One cell: its text and style.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cell {
    pub text: String,
    pub style: Style,
}

impl Cell {
    pub fn plain(text: impl Into<String>) -> Cell {
        Cell {
            text: text.into(),
            style: Style::Plain,
        }
    }

    pub fn styled(text: impl Into<String>, style: Style) -> Cell {
        Cell {
            text: text.into(),
            style,
        }
    }
}

/// Rows of cells, written with every column as wide as its widest cell (in
/// the columns a terminal shows it in, up to 100) and two spaces
/// between columns; the last column is not padded.
#[derive(Clone, Debug)]
pub struct Table {
    align: Vec<Align>,
    rows: Vec<Vec<Cell>>,
}

impl Table {
    /// An empty table whose columns line up as `align` says.
    pub fn new(align: &[Align]) -> Table {
        Table {
            align: align.to_vec(),
            rows: Vec::new(),
        }
    }

    /// Adds a header row, in bold.
    pub fn header(&mut self, cells: &[&str]) {
        let row = cells
            .iter()
            .map(|text| Cell::styled(*text, Style::Bold))
            .collect();
        self.rows.push(row);
    }

    /// Adds a row; missing cells are empty.
    pub fn row(&mut self, cells: Vec<Cell>) {
        self.rows.push(cells);
    }

    /// Writes the table; with `color`, styles as ANSI escapes.
    pub fn write(&self, out: &mut dyn Write, color: bool) -> io::Result<()> {
        let columns = self.align.len();
        let mut widths = vec![0; columns];
        for row in &self.rows {
            for (width, cell) in widths.iter_mut().zip(row) {
                *width = (*width).max(cell.text.width().min(MAX_PADDED));
            }
        }
        for row in &self.rows {
            let mut line = String::new();
            for (column, &align) in self.align.iter().enumerate() {
                let text = row.get(column).map_or("", |cell| cell.text.as_str());
                let style = row.get(column).map_or(Style::Plain, |cell| cell.style);
                let pad = widths[column].saturating_sub(text.width());
                let last = column + 1 == columns;
                if column > 0 {
                    line.push_str("  ");
                }
                if align == Align::Right {
                    line.extend(std::iter::repeat_n(' ', pad));
                }
                match style.ansi().filter(|_| color && !text.is_empty()) {
                    Some(code) => {
                        line.push_str(code);
                        line.push_str(text);
                        line.push_str("\x1b[0m");
                    }
                    None => line.push_str(text),
                }
                if align == Align::Left && !last {
                    line.extend(std::iter::repeat_n(' ', pad));
                }
            }
            writeln!(out, "{}", line.trim_end())?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_line_up_and_colour_is_optional() {
        let mut table = Table::new(&[Align::Right, Align::Left, Align::Right]);
        table.header(&["cost", "name", "n"]);
        table.row(vec![
            Cell::plain("1,234"),
            Cell::styled("main", Style::Red),
            Cell::plain("7"),
        ]);
        table.row(vec![Cell::plain("5"), Cell::plain("a_longer_name")]);
        let mut plain = Vec::new();
        table.write(&mut plain, false).unwrap();
        assert_eq!(
            String::from_utf8(plain).unwrap(),
            " cost  name           n\n\
             1,234  main           7\n    \
             5  a_longer_name\n"
        );
        let mut coloured = Vec::new();
        table.write(&mut coloured, true).unwrap();
        let coloured = String::from_utf8(coloured).unwrap();
        assert!(coloured.contains("\x1b[31mmain\x1b[0m           7"));
        assert!(coloured.starts_with(" \x1b[1mcost\x1b[0m"));
    }

    /// Wide characters take two columns, and a name wider than
    /// [`MAX_PADDED`] pushes only its own row's later columns.
    #[test]
    fn cells_are_padded_by_the_columns_they_take_and_not_past_the_cap() {
        let write = |names: &[&str]| {
            let mut table = Table::new(&[Align::Left, Align::Right]);
            for name in names {
                table.row(vec![Cell::plain(*name), Cell::plain("1")]);
            }
            let mut out = Vec::new();
            table.write(&mut out, false).unwrap();
            String::from_utf8(out).unwrap()
        };
        assert_eq!(
            write(&["函数", "abcd", "ab"]),
            "函数  1\nabcd  1\nab    1\n"
        );
        let long = "x".repeat(MAX_PADDED + 50);
        let text = write(&[&long, "f"]);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], format!("{long}  1"));
        assert_eq!(lines[1], format!("f{}  1", " ".repeat(MAX_PADDED - 1)));
    }
}
