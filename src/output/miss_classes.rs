//! What `classify` writes: each cache's misses by cause, as a text table
//! and as JSON (schema `linegrind-miss-classes`, version 1).

use std::io::{self, Write};

use serde::Serialize;

use super::json::Geometry;
use super::number::{grouped, percent};
use super::table::{Align, Cell, Table};
use crate::cache::{CacheGeometry, ClassCounts};

/// The schema name of the JSON file.
pub const CLASSES_SCHEMA: &str = "linegrind-miss-classes";

/// The caches' names, in the order of [`ClassReport`]'s arrays.
const CACHES: [&str; 3] = ["I1", "D1", "LL"];

/// A trace's misses by cause in I1, D1 and LL.
pub struct ClassReport<'a> {
    /// The trace, as given.
    pub trace: &'a str,
    pub caches: [CacheGeometry; 3],
    pub counts: [ClassCounts; 3],
}

#[derive(Serialize)]
struct Json<'a> {
    schema: &'static str,
    version: u32,
    creator: String,
    trace: &'a str,
    caches: Levels<Geometry>,
    misses: Levels<Classes>,
}

#[derive(Serialize)]
struct Levels<T> {
    #[serde(rename = "I1")]
    i1: T,
    #[serde(rename = "D1")]
    d1: T,
    #[serde(rename = "LL")]
    ll: T,
}

impl<T> Levels<T> {
    fn new([i1, d1, ll]: [T; 3]) -> Levels<T> {
        Levels { i1, d1, ll }
    }
}

#[derive(Serialize)]
struct Classes {
    accesses: u64,
    misses: u64,
    compulsory: u64,
    capacity: u64,
    conflict: u64,
}

impl From<ClassCounts> for Classes {
    fn from(counts: ClassCounts) -> Classes {
        Classes {
            accesses: counts.accesses,
            misses: counts.misses(),
            compulsory: counts.compulsory,
            capacity: counts.capacity,
            conflict: counts.conflict,
        }
    }
}

impl ClassReport<'_> {
    /// The caches, then a row per cache: its accesses, its misses (and
    /// their share of the accesses) and each class (and its share of the
    /// misses).
    pub fn write_table(&self, out: &mut dyn Write) -> io::Result<()> {
        let [i1, d1, ll] = self.caches;
        writeln!(out, "caches: I1 {i1}  D1 {d1}  LL {ll}")?;
        writeln!(out)?;
        // The cache's name, then nine numbers.
        let mut align = [Align::Right; 10];
        align[0] = Align::Left;
        let mut table = Table::new(&align);
        table.header(&[
            "cache",
            "accesses",
            "misses",
            "of accesses",
            "compulsory",
            "of misses",
            "capacity",
            "of misses",
            "conflict",
            "of misses",
        ]);
        for (name, counts) in CACHES.into_iter().zip(&self.counts) {
            let misses = counts.misses();
            let mut cells = vec![
                name.to_string(),
                grouped(counts.accesses),
                grouped(misses),
                percent(misses, counts.accesses),
            ];
            for class in [counts.compulsory, counts.capacity, counts.conflict] {
                cells.extend([grouped(class), percent(class, misses)]);
            }
            table.row(cells.into_iter().map(Cell::plain).collect());
        }
        table.write(out, false)
    }

    /// The JSON form, byte for byte the same for the same trace and caches.
    pub fn write_json(&self, out: &mut dyn Write) -> io::Result<()> {
        let json = Json {
            schema: CLASSES_SCHEMA,
            version: 1,
            creator: format!("linegrind-{}", env!("CARGO_PKG_VERSION")),
            trace: self.trace,
            caches: Levels::new(self.caches.map(Geometry::from)),
            misses: Levels::new(self.counts.map(Classes::from)),
        };
        serde_json::to_writer_pretty(&mut *out, &json)?;
        writeln!(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report() -> ClassReport<'static> {
        let geometry: CacheGeometry = "32768,8,64".parse().unwrap();
        let counts = |accesses, compulsory, capacity, conflict| ClassCounts {
            accesses,
            compulsory,
            capacity,
            conflict,
        };
        ClassReport {
            trace: "app.lgt",
            caches: [geometry, geometry, "8388608,16,64".parse().unwrap()],
            counts: [
                counts(1_000_000, 300, 0, 20),
                counts(400_000, 1_000, 39_000, 0),
                counts(40_320, 1_300, 0, 0),
            ],
        }
    }

    #[test]
    fn the_table_gives_each_class_and_its_share_of_the_misses() {
        let mut out = Vec::new();
        report().write_table(&mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            "caches: I1 32768,8,64  D1 32768,8,64  LL 8388608,16,64"
        );
        let cells: Vec<Vec<&str>> = lines[3..]
            .iter()
            .map(|line| line.split_whitespace().collect())
            .collect();
        assert_eq!(
            cells[0],
            [
                "I1",
                "1,000,000",
                "320",
                "0.03%",
                "300",
                "93.75%",
                "0",
                "0.00%",
                "20",
                "6.25%"
            ]
        );
        assert_eq!(
            cells[1],
            [
                "D1", "400,000", "40,000", "10.00%", "1,000", "2.50%", "39,000", "97.50%", "0",
                "0.00%"
            ]
        );
        assert_eq!(cells[2][..4], ["LL", "40,320", "1,300", "3.22%"]);
    }

    #[test]
    fn the_json_names_the_caches_and_every_count() {
        let mut out = Vec::new();
        report().write_json(&mut out).unwrap();
        let json: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(json["schema"], CLASSES_SCHEMA);
        assert_eq!(json["version"], 1);
        assert_eq!(json["trace"], "app.lgt");
        assert_eq!(json["caches"]["LL"]["size"], 8_388_608);
        assert_eq!(json["caches"]["D1"]["assoc"], 8);
        let d1 = &json["misses"]["D1"];
        assert_eq!(
            [
                &d1["accesses"],
                &d1["misses"],
                &d1["compulsory"],
                &d1["capacity"],
                &d1["conflict"]
            ],
            [400_000, 40_000, 1_000, 39_000, 0]
        );
        assert_eq!(json["misses"]["I1"]["conflict"], 20);
    }
}
