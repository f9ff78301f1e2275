//! Several cache hierarchies simulated in one run: a sweep of one level's
//! size (`--sweep LL=256K..64M`) or a list read from a file (`--config`).
//!
//! A configuration file names one hierarchy per line; levels a line leaves
//! out keep the command line's geometry:
//!
//! ```text
//! # name    levels (SIZE,ASSOC,LINE; sizes may end in K, M or G)
//! small     D1=16K,4,64   LL=1M,16,64
//! default
//! big-ll    LL=32M,16,64
//! ```

use std::fmt;
use std::fs::File;
use std::path::Path;

use crate::byte_order_mark::BOM;
use crate::cache::{CacheGeometry, GeometryError, parse_size};
use crate::printable::shown;
use crate::trace::lines::read_bounded;

/// The three levels of one hierarchy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Levels {
    pub i1: CacheGeometry,
    pub d1: CacheGeometry,
    pub ll: CacheGeometry,
}

/// A hierarchy with the name its outputs and summary row carry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NamedHierarchy {
    pub name: String,
    pub levels: Levels,
    /// The line of the configuration file that names it, for errors.
    pub line: Option<u64>,
    /// The levels it keeps from the command line (or its defaults), for
    /// errors.
    pub kept: Vec<&'static str>,
}

/// The levels' names, as options and lines give them.
pub const LEVEL_NAMES: [&str; 3] = ["I1", "D1", "LL"];

/// Why a sweep or a configuration file was rejected, with where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HierarchyError(pub String);

impl fmt::Display for HierarchyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for HierarchyError {}

/// Sweeps are at most this long: every configuration keeps its own caches
/// and profile in memory for the whole run, and writes a file of its own.
pub const MAX_HIERARCHIES: usize = 64;

/// A size as a sweep names it: `256K`, `64M`, or bytes.
fn size_name(size: u64) -> String {
    match size {
        s if s >= 1 << 30 && s % (1 << 30) == 0 => format!("{}G", s >> 30),
        s if s >= 1 << 20 && s % (1 << 20) == 0 => format!("{}M", s >> 20),
        s if s >= 1 << 10 && s % (1 << 10) == 0 => format!("{}K", s >> 10),
        s => s.to_string(),
    }
}

/// Which level `name` is, in `levels`.
fn level<'a>(levels: &'a mut Levels, name: &str) -> Option<&'a mut CacheGeometry> {
    match name {
        "I1" => Some(&mut levels.i1),
        "D1" => Some(&mut levels.d1),
        "LL" => Some(&mut levels.ll),
        _ => None,
    }
}

/// `LEVEL=FROM..TO`: the level's size doubled from FROM up to TO, its
/// associativity and line size kept from `base`.
pub fn sweep(spec: &str, base: Levels) -> Result<Vec<NamedHierarchy>, HierarchyError> {
    let bad = |why: String| HierarchyError(format!("--sweep {spec}: {why}"));
    let (name, range) = spec
        .split_once('=')
        .ok_or_else(|| bad("expected LEVEL=FROM..TO, for example LL=256K..64M".into()))?;
    // Blanks around the parts, as a shell script may quote them.
    let (name, range) = (name.trim(), range.trim());
    let (from, to) = range
        .split_once("..")
        .ok_or_else(|| bad(format!("`{range}` is not FROM..TO")))?;
    let size = |text: &str| parse_size(text).map_err(bad);
    let (from, to) = (size(from)?, size(to)?);
    if from == 0 || from > to {
        return Err(bad("FROM must be above zero and at most TO".into()));
    }
    let mut hierarchies = Vec::new();
    let (mut bytes, mut last) = (from, from);
    while bytes <= to {
        if hierarchies.len() == MAX_HIERARCHIES {
            return Err(bad(format!("more than {MAX_HIERARCHIES} sizes")));
        }
        let mut levels = base;
        let geometry = level(&mut levels, name)
            .ok_or_else(|| bad(format!("`{name}` is not a level (I1, D1 or LL)")))?;
        *geometry = CacheGeometry::new(bytes, geometry.assoc(), geometry.line_size())
            .map_err(|err| bad(err.to_string()))?;
        hierarchies.push(NamedHierarchy {
            name: format!("{name}={}", size_name(bytes)),
            levels,
            line: None,
            kept: LEVEL_NAMES
                .into_iter()
                .filter(|&kept| kept != name)
                .collect(),
        });
        last = bytes;
        bytes = bytes.saturating_mul(2);
    }
    if last != to {
        return Err(bad(format!(
            "doubling {} does not reach {}: its sizes end at {}",
            size_name(from),
            size_name(to),
            size_name(last)
        )));
    }
    Ok(hierarchies)
}

/// The hierarchies of the configuration file at `path`. Such a file is
/// small: a larger one (or an endless one) is not one.
pub fn read_file(path: &Path, base: Levels) -> Result<Vec<NamedHierarchy>, HierarchyError> {
    const MAX: u64 = 1 << 20;
    let name = path.display();
    let cannot = |why: String| HierarchyError(format!("cannot read {name}: {why}"));
    let file = File::open(path).map_err(|err| cannot(err.to_string()))?;
    let bytes = read_bounded(file, MAX).map_err(|err| cannot(err.to_string()))?;
    let Some(bytes) = bytes else {
        return Err(HierarchyError(format!(
            "{name}: larger than {} MiB: not a list of hierarchies",
            MAX >> 20
        )));
    };
    let text = String::from_utf8(bytes).map_err(|err| {
        let at = err.utf8_error().valid_up_to();
        HierarchyError(format!("{name}: byte offset {at}: not UTF-8 text"))
    })?;
    // A byte-order mark, as some editors save text, opens no line.
    let text = text.strip_prefix(BOM).unwrap_or(&text);
    parse_file(text, &name.to_string(), base)
}

/// The longest name of a hierarchy.
const MAX_NAME: usize = 64;

/// Whether `name` can name a hierarchy: it becomes part of file names,
/// so it has a letter or digit of its own (`.` and `..` name folders).
fn is_name(name: &str) -> bool {
    name.chars().count() <= MAX_NAME
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.' | '+'))
        && name.chars().any(char::is_alphanumeric)
}

/// The hierarchies of a configuration file's `text` (see the module
/// documentation); `file` names it in errors.
fn parse_file(text: &str, file: &str, base: Levels) -> Result<Vec<NamedHierarchy>, HierarchyError> {
    let mut hierarchies: Vec<NamedHierarchy> = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let bad = |why: String| HierarchyError(format!("{file}: line {}: {why}", number + 1));
        let line = line.split('#').next().unwrap_or("").trim();
        let mut words = line.split_whitespace();
        let Some(name) = words.next() else {
            continue;
        };
        if name.contains('=') {
            return Err(bad(format!(
                "a line starts with the hierarchy's name, not `{}`",
                shown(name.as_bytes())
            )));
        }
        if !is_name(name) {
            return Err(bad(format!(
                "`{}` cannot name a hierarchy: its outputs' file names end in it, so \
                 a name is at most {MAX_NAME} letters, digits, `-`, `_`, `.` and `+`, \
                 a letter or digit among them",
                shown(name.as_bytes())
            )));
        }
        if let Some(other) = hierarchies.iter().find(|other| other.name == name) {
            let first = other.line.unwrap_or_default();
            return Err(bad(format!(
                "`{name}` is named twice (first on line {first})"
            )));
        }
        // Their outputs would be one file where case is not told apart.
        if let Some(other) = hierarchies
            .iter()
            .find(|other| other.name.to_lowercase() == name.to_lowercase())
        {
            return Err(bad(format!(
                "`{name}` and `{}` (line {}) differ only in case: their outputs would be \
                 one file on a file system that does not tell case apart",
                other.name,
                other.line.unwrap_or_default()
            )));
        }
        let mut levels = base;
        let mut given: Vec<&str> = Vec::new();
        for word in words {
            let (key, value) = word.split_once('=').ok_or_else(|| {
                let word = shown(word.as_bytes());
                bad(format!("`{word}` is not LEVEL=SIZE,ASSOC,LINE"))
            })?;
            let geometry = level(&mut levels, key).ok_or_else(|| {
                let key = shown(key.as_bytes());
                bad(format!("`{key}` is not a level (I1, D1 or LL)"))
            })?;
            if given.contains(&key) {
                return Err(bad(format!("`{key}` is given twice")));
            }
            given.push(key);
            *geometry = value
                .parse()
                .map_err(|err: GeometryError| bad(format!("{key}: {err}")))?;
        }
        if hierarchies.len() == MAX_HIERARCHIES {
            return Err(bad(format!("more than {MAX_HIERARCHIES} hierarchies")));
        }
        hierarchies.push(NamedHierarchy {
            name: name.to_string(),
            levels,
            line: Some(number as u64 + 1),
            kept: LEVEL_NAMES
                .into_iter()
                .filter(|kept| !given.contains(kept))
                .collect(),
        });
    }
    if hierarchies.is_empty() {
        return Err(HierarchyError(format!("{file}: no hierarchy in it")));
    }
    Ok(hierarchies)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> Levels {
        let g = |text: &str| text.parse::<CacheGeometry>().unwrap();
        Levels {
            i1: g("32768,8,64"),
            d1: g("32768,8,64"),
            ll: g("8388608,16,64"),
        }
    }

    #[test]
    fn a_file_too_large_or_not_text_is_refused_saying_so() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("hierarchies");
        let refused = |bytes: &[u8]| {
            std::fs::write(&path, bytes).unwrap();
            let err = read_file(&path, base()).unwrap_err().0;
            err.strip_prefix(&format!("{}: ", path.display()))
                .map(str::to_owned)
                .unwrap_or(err)
        };
        let large = "# a comment\n".repeat(100_000);
        assert_eq!(
            refused(large.as_bytes()),
            "larger than 1 MiB: not a list of hierarchies"
        );
        assert_eq!(
            refused(b"small D1=16K,4,64\nbig \xff"),
            "byte offset 22: not UTF-8 text"
        );
        std::fs::write(&path, b"small D1=16K,4,64\n").unwrap();
        assert_eq!(read_file(&path, base()).unwrap().len(), 1);
        // As an editor may save it.
        std::fs::write(&path, b"\xEF\xBB\xBFsmall D1=16K,4,64\r\n").unwrap();
        assert_eq!(read_file(&path, base()).unwrap()[0].name, "small");
        let missing = read_file(&dir.path().join("missing"), base())
            .unwrap_err()
            .0;
        assert!(missing.starts_with("cannot read "), "{missing}");
    }

    #[test]
    fn a_sweep_doubles_one_level_and_keeps_its_ways_and_lines() {
        let sweep = sweep("LL=256K..64M", base()).unwrap();
        let names: Vec<&str> = sweep.iter().map(|h| h.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "LL=256K", "LL=512K", "LL=1M", "LL=2M", "LL=4M", "LL=8M", "LL=16M", "LL=32M",
                "LL=64M"
            ]
        );
        assert!(
            sweep
                .iter()
                .all(|h| h.levels.ll.assoc() == 16 && h.levels.d1 == base().d1)
        );
        assert_eq!(sweep[0].levels.ll.size(), 256 << 10);
        // The levels a sweep keeps from the command line, for its errors.
        assert_eq!(sweep[0].kept, ["I1", "D1"]);
        let i1 = super::sweep("I1=16K..32K", base()).unwrap();
        assert_eq!(i1[1].name, "I1=32K");
        assert_eq!(
            (i1[1].levels.i1.size(), i1[1].levels.ll),
            (32 << 10, base().ll)
        );
        assert_eq!(i1[1].kept, ["D1", "LL"]);
        assert!(
            super::sweep("LL=0..1M", base())
                .unwrap_err()
                .0
                .contains("FROM must be above zero")
        );
        assert!(
            super::sweep("L2=1M..2M", base())
                .unwrap_err()
                .to_string()
                .contains("not a level")
        );
        assert!(super::sweep("LL=2M..1M", base()).is_err());
        assert_eq!(
            super::sweep("LL=1M..48M", base()).unwrap_err().0,
            "--sweep LL=1M..48M: doubling 1M does not reach 48M: its sizes end at 32M"
        );
        assert_eq!(super::sweep("LL=1M..1M", base()).unwrap().len(), 1);
        let blanks = super::sweep(" LL = 1M .. 2M ", base()).unwrap();
        assert_eq!(blanks[1].name, "LL=2M");
        assert!(
            super::sweep("LL=1000..4000", base())
                .unwrap_err()
                .0
                .contains("sets")
        );
    }

    #[test]
    fn sizes_are_named_in_the_largest_unit_they_are_a_whole_number_of() {
        let names: Vec<String> = [
            192,
            512,
            1 << 10,
            1536,
            3 << 10,
            1 << 20,
            (1 << 20) + (1 << 10),
            3 << 20,
            1 << 30,
            (1 << 30) + (1 << 20),
            5 << 30,
        ]
        .into_iter()
        .map(size_name)
        .collect();
        assert_eq!(
            names,
            [
                "192", "512", "1K", "1536", "3K", "1M", "1025K", "3M", "1G", "1025M", "5G"
            ]
        );
    }

    #[test]
    fn a_file_names_hierarchies_and_overrides_levels() {
        let text = "# comment\nsmall D1=16K,4,64 LL=1M,16,64\n\ndefault  # as given\n";
        let list = parse_file(text, "h.conf", base()).unwrap();
        assert_eq!(list.len(), 2);
        assert_eq!(list[0].name, "small");
        assert_eq!(list[0].levels.d1.size(), 16 << 10);
        assert_eq!(list[0].levels.i1, base().i1);
        assert_eq!(list[0].kept, ["I1"]);
        assert_eq!(list[1].kept, ["I1", "D1", "LL"]);
        assert_eq!(list[1].levels, base());
        let error = |text: &str| parse_file(text, "h.conf", base()).unwrap_err().0;
        assert_eq!(
            error("a\nb L3=1M,16,64\n"),
            "h.conf: line 2: `L3` is not a level (I1, D1 or LL)"
        );
        assert!(error("a\na\n").contains("line 2: `a` is named twice (first on line 1)"));
        assert!(error("a\nb\nA\n").contains("line 3: `A` and `a` (line 1) differ only in case"));
        for dots in [".", "..", "..."] {
            let error = error(&format!("{dots} LL=1M,16,64\n"));
            assert!(error.contains("a letter or digit among them"), "{error}");
        }
        assert_eq!(
            error("a D1=16K,4,64 D1=8K,4,64\n"),
            "h.conf: line 1: `D1` is given twice"
        );
        assert!(error("LL=1M,16,64\n").contains("starts with the hierarchy's name"));
        for bad in ["a/b", "a\0b", "a:b", &"x".repeat(MAX_NAME + 1)] {
            let message = error(&format!("ok\n{bad} LL=1M,16,64\n"));
            assert!(message.contains("line 2: `"), "{message}");
            assert!(message.contains("` cannot name a hierarchy"), "{message}");
        }
        let odd = parse_file("big-ll_2.0+\n", "h.conf", base()).unwrap();
        assert_eq!(odd[0].name, "big-ll_2.0+");
        assert!(error("a LL=1M,3,64\n").contains("line 1"));
        assert!(error("a D1=32K,8,48\n").contains("line 1: D1: "));
        assert_eq!(error("# nothing\n"), "h.conf: no hierarchy in it");
        // The file's text escaped and cut, in every message that shows it.
        let long = "9".repeat(1000);
        for (line, shown) in [
            ("\x1b]0;t\x07=1", "`\\u{1b}]0;t\\u{7}` is not a level"),
            ("LL=1M,16,64\x1b[2J", "line size in `1M,16,64\\u{1b}[2J`"),
            (
                "LL=1M,\x1b[2J,64",
                "`\\u{1b}[2J` is not a decimal associativity",
            ),
            (
                &format!("LL={long},16,64"),
                &format!("`{}…` is too large a size", &long[..80]),
            ),
            (
                &format!("D1={long}"),
                &format!("`{}…` is not of the form", &long[..80]),
            ),
        ] {
            let message = error(&format!("a {line}\n"));
            assert!(message.contains(shown), "{message}");
            assert!(message.len() < 400, "{message}");
        }
    }
}
