//! Text tables with aligned columns, coloured only when asked (on a
//! terminal).

use std::io::{self, Write};

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

/// Rows of cells, written with every column as wide as its widest cell and
/// two spaces between columns; the last column is not padded.
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
                *width = (*width).max(cell.text.chars().count());
            }
        }
        for row in &self.rows {
            let mut line = String::new();
            for (column, &align) in self.align.iter().enumerate() {
                let text = row.get(column).map_or("", |cell| cell.text.as_str());
                let style = row.get(column).map_or(Style::Plain, |cell| cell.style);
                let pad = widths[column] - text.chars().count();
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
}
