//! Cache geometry in Callgrind's `size,assoc,line` syntax, validated once.

use std::fmt;
use std::str::FromStr;

use crate::printable::shown;

/// Smallest line size accepted, as in Callgrind (an access of up to 16
/// bytes then touches at most two lines).
pub const MIN_LINE_SIZE: u32 = 16;

/// Largest line size for which exact used-byte masks are kept.
pub const MAX_USE_LINE_SIZE: u32 = 256;

/// Largest cache simulated, 4 GiB: far above any real cache, and it keeps
/// a cache's lines (slots) within `u32` and its tables within memory.
const MAX_SIZE: u64 = 1 << 32;

/// Size, associativity and line size of one cache, with the derived shifts.
///
/// Invariant (checked by [`CacheGeometry::new`]): the line size is a power of
/// two of at least `MIN_LINE_SIZE` (16), and the number of sets,
/// `size / (assoc * line)`, is a power of two of at least one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CacheGeometry {
    size: u64,
    assoc: u32,
    line_size: u32,
    line_bits: u32,
    sets: u64,
}

/// Why a geometry was rejected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GeometryError(String);

impl fmt::Display for GeometryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for GeometryError {}

impl CacheGeometry {
    /// Checks the geometry and derives the set count and shifts.
    pub fn new(size: u64, assoc: u32, line_size: u32) -> Result<CacheGeometry, GeometryError> {
        let fail = |why: String| Err(GeometryError(why));
        if size == 0 || assoc == 0 || line_size == 0 {
            return fail(format!(
                "{size},{assoc},{line_size}: size, associativity and line size must all be above zero"
            ));
        }
        if line_size < MIN_LINE_SIZE {
            return fail(format!(
                "line size {line_size} is below the minimum of {MIN_LINE_SIZE} bytes"
            ));
        }
        if !line_size.is_power_of_two() {
            return fail(format!("line size {line_size} is not a power of two"));
        }
        if size > MAX_SIZE {
            return fail(format!(
                "size {size} is above the largest cache simulated, {MAX_SIZE} bytes (4 GiB)"
            ));
        }
        let way_bytes = u64::from(assoc) * u64::from(line_size);
        if size < way_bytes || !size.is_multiple_of(way_bytes) {
            return fail(format!(
                "size {size} is not a whole number of sets of {assoc} x {line_size} bytes"
            ));
        }
        let sets = size / way_bytes;
        if !sets.is_power_of_two() {
            return fail(format!(
                "{size},{assoc},{line_size} gives {sets} sets, which is not a power of two"
            ));
        }
        Ok(CacheGeometry {
            size,
            assoc,
            line_size,
            line_bits: line_size.trailing_zeros(),
            sets,
        })
    }

    /// Total size in bytes.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// Lines per set.
    pub fn assoc(&self) -> u32 {
        self.assoc
    }

    /// Bytes per line.
    pub fn line_size(&self) -> u32 {
        self.line_size
    }

    /// log2 of the line size: `addr >> line_bits` is the line number.
    pub fn line_bits(&self) -> u32 {
        self.line_bits
    }

    /// Number of sets (a power of two).
    pub fn sets(&self) -> u64 {
        self.sets
    }

    /// Number of lines the cache holds.
    pub fn lines(&self) -> u64 {
        self.sets * u64::from(self.assoc)
    }

    /// The description Callgrind writes in its `desc:` lines, for example
    /// `32768 B, 64 B, 8-way associative`.
    pub fn describe(&self) -> String {
        describe_cache(self.size, self.line_size.into(), self.assoc.into())
    }
}

/// Callgrind's description of a cache of `size` bytes in lines of
/// `line_size`, `assoc` ways to a set.
pub fn describe_cache(size: u64, line_size: u64, assoc: u64) -> String {
    let ways = if assoc == 1 {
        "direct-mapped".to_string()
    } else {
        format!("{assoc}-way associative")
    };
    format!("{size} B, {line_size} B, {ways}")
}

impl fmt::Display for CacheGeometry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{},{},{}", self.size, self.assoc, self.line_size)
    }
}

/// A byte count with an optional `K`, `M` or `G` (powers of 1024); the
/// error says why `text` is not one.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let (digits, unit) = match text.as_bytes().last() {
        Some(b'K' | b'k') => (&text[..text.len() - 1], 1 << 10),
        Some(b'M' | b'm') => (&text[..text.len() - 1], 1 << 20),
        Some(b'G' | b'g') => (&text[..text.len() - 1], 1 << 30),
        _ => (text, 1),
    };
    let not_a_size = || {
        format!(
            "`{}` is not a size (bytes, or with K, M or G)",
            shown(text.as_bytes())
        )
    };
    // A plus sign, as Callgrind takes one (and `u64::parse`, for the
    // associativity and line size).
    let digits = digits.strip_prefix('+').unwrap_or(digits);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(not_a_size());
    }
    digits
        .parse::<u64>()
        .ok()
        .and_then(|count| count.checked_mul(unit))
        .ok_or_else(|| {
            format!(
                "`{}` is too large a size (over 2^64 bytes)",
                shown(text.as_bytes())
            )
        })
}

impl FromStr for CacheGeometry {
    type Err = GeometryError;

    /// Parses `size,assoc,line` with decimal numbers, as Callgrind does;
    /// the size may also end in `K`, `M` or `G`.
    fn from_str(text: &str) -> Result<CacheGeometry, GeometryError> {
        let parts: Vec<&str> = text.split(',').collect();
        let whole = shown(text.as_bytes());
        let [size, assoc, line] = parts[..] else {
            return Err(GeometryError(format!(
                "`{whole}` is not of the form size,assoc,line_size (for example 32768,8,64)"
            )));
        };
        let number = |part: &str, what: &str| {
            part.trim().parse::<u64>().map_err(|_| {
                let part = shown(part.as_bytes());
                GeometryError(format!("`{part}` is not a decimal {what} in `{whole}`"))
            })
        };
        let size = parse_size(size).map_err(|why| GeometryError(format!("{why} in `{whole}`")))?;
        let assoc = number(assoc, "associativity")?;
        let line = number(line, "line size")?;
        let assoc = u32::try_from(assoc)
            .map_err(|_| GeometryError(format!("associativity {assoc} is too large")))?;
        let line = u32::try_from(line)
            .map_err(|_| GeometryError(format!("line size {line} is too large")))?;
        CacheGeometry::new(size, assoc, line)
    }
}

/// The longest access the caches take whole: the shortest line (an LL line
/// is no shorter than an L1 line). A longer access is clamped to it from
/// its address, as Callgrind clamps one to its smallest line size.
pub fn longest_access(i1: CacheGeometry, d1: CacheGeometry) -> u32 {
    i1.line_size().min(d1.line_size())
}

/// The bytes of lines an access takes, once an access longer than a line is
/// clamped to a line's worth from its address (the caches' rule, as
/// Callgrind clamps): from byte `offset` of line `line`, `first` bytes
/// there, and the first `second` bytes of the next line (0 when the access
/// stays in one line).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LineSpan {
    pub line: u64,
    pub offset: u32,
    pub first: u32,
    pub second: u32,
}

impl LineSpan {
    /// The span of an access of `size` bytes (at least one) at `addr`, over
    /// lines of `1 << line_bits` bytes. Computed from the offset in the
    /// line, so that an access ending at the top of the address space adds
    /// nothing past it.
    #[inline]
    pub fn new(addr: u64, size: u32, line_bits: u32) -> LineSpan {
        let line_size = 1u64 << line_bits;
        let offset = addr & (line_size - 1);
        let end = offset + u64::from(size).clamp(1, line_size);
        LineSpan {
            line: addr >> line_bits,
            offset: offset as u32,
            first: (end.min(line_size) - offset) as u32,
            second: end.saturating_sub(line_size) as u32,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_callgrind_syntax_and_derives_sets() {
        let g: CacheGeometry = "32768,8,64".parse().unwrap();
        assert_eq!((g.size(), g.assoc(), g.line_size()), (32768, 8, 64));
        assert_eq!(g.sets(), 64);
        assert_eq!(g.line_bits(), 6);
        assert_eq!(g.lines(), 512);
        assert_eq!(g.describe(), "32768 B, 64 B, 8-way associative");
        assert_eq!(g.to_string(), "32768,8,64");
        let direct: CacheGeometry = "1024,1,16".parse().unwrap();
        assert_eq!(direct.describe(), "1024 B, 16 B, direct-mapped");
        let full: CacheGeometry = "1024,16,64".parse().unwrap();
        assert_eq!(full.sets(), 1);
        let units: CacheGeometry = "32K,8,64".parse().unwrap();
        assert_eq!(units, g);
        // Signs as Callgrind takes them, on every number.
        let signed: CacheGeometry = "+32768,+8,+64".parse().unwrap();
        assert_eq!(signed, g);
        assert_eq!(parse_size("+32K"), Ok(32768));
        assert!(parse_size("++32K").is_err());
        assert!("-32768,8,64".parse::<CacheGeometry>().is_err());
    }

    #[test]
    fn an_access_spans_one_or_two_lines_after_the_clamp() {
        let span = |addr, size| {
            let LineSpan {
                line,
                offset,
                first,
                second,
            } = LineSpan::new(addr, size, 6);
            (line, offset, first, second)
        };
        assert_eq!(span(0x1004, 8), (0x40, 4, 8, 0));
        assert_eq!(span(0x1004, 60), (0x40, 4, 60, 0));
        assert_eq!(span(0x103e, 4), (0x40, 62, 2, 2));
        // Longer than a line: a line's worth, from inside a line or its
        // start, whether it spans two lines or more.
        assert_eq!(span(0x103e, 66), (0x40, 62, 2, 62));
        assert_eq!(span(0x1010, 100), (0x40, 16, 48, 16));
        assert_eq!(span(0x1044, 150), (0x41, 4, 60, 4));
        assert_eq!(span(0x1100, 200), (0x44, 0, 64, 0));
        assert_eq!(span(0x1000, 0), (0x40, 0, 1, 0));
        assert_eq!(span(u64::MAX - 71, 64), ((u64::MAX >> 6) - 1, 56, 8, 56));
    }

    #[test]
    fn sizes_take_units_of_1024() {
        assert_eq!(parse_size("256K"), Ok(256 << 10));
        assert_eq!(parse_size("64m"), Ok(64 << 20));
        assert_eq!(parse_size("4G"), Ok(4 << 30));
        assert_eq!(parse_size("4096"), Ok(4096));
        assert!(parse_size("1.5M").unwrap_err().contains("not a size"));
        assert!(parse_size("K").unwrap_err().contains("not a size"));
        assert_eq!(parse_size("+4K"), Ok(4096));
        assert!(parse_size("+K").unwrap_err().contains("not a size"));
        assert!(parse_size("-4K").unwrap_err().contains("not a size"));
        assert!(
            parse_size("99999999999G")
                .unwrap_err()
                .contains("too large")
        );
        assert!(
            parse_size("99999999999999999999")
                .unwrap_err()
                .contains("too large")
        );
    }

    #[test]
    fn rejects_bad_geometries_with_the_reason() {
        let err = |text: &str| text.parse::<CacheGeometry>().unwrap_err().to_string();
        assert!(err("0,8,64").contains("above zero"));
        assert!(err("32768,0,64").contains("above zero"));
        assert!(err("32768,8,8").contains("below the minimum of 16"));
        assert!(err("32768,8,48").contains("not a power of two"));
        assert!(err("49152,8,64").contains("96 sets, which is not a power of two"));
        assert!(err("256,8,64").contains("not a whole number of sets"));
        assert!(err("32768,8").contains("size,assoc,line_size"));
        assert!(err("32x,8,64").contains("`32x` is not a size"));
        assert!(err("32,8x,64").contains("not a decimal associativity"));
        assert!(err("8589934592,16,64").contains("above the largest cache simulated"));
        assert!("4294967296,16,64".parse::<CacheGeometry>().is_ok());
    }
}
