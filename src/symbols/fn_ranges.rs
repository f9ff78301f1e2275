//! Function address ranges, as given by a trace's `fn` lines.

use std::collections::BTreeMap;
use std::fmt;

/// Half-open address ranges `[start, end)`, each mapped to a value (the
/// function it belongs to). Ranges never overlap.
#[derive(Debug, Default)]
pub struct FnRanges<T> {
    by_start: BTreeMap<u64, (u64, T)>,
}

/// A new range overlaps one already present.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OverlapError {
    pub start: u64,
    pub end: u64,
}

impl fmt::Display for OverlapError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "overlaps the range {:x}..{:x}", self.start, self.end)
    }
}

impl<T: Copy> FnRanges<T> {
    /// No ranges.
    #[cfg(test)]
    pub fn new() -> Self {
        FnRanges {
            by_start: BTreeMap::new(),
        }
    }

    /// Adds `[start, end)`, which must not overlap an existing range.
    pub fn insert(&mut self, start: u64, end: u64, value: T) -> Result<(), OverlapError> {
        debug_assert!(start < end);
        let before = self.by_start.range(..end).next_back();
        if let Some((&s, &(e, _))) = before
            && e > start
        {
            return Err(OverlapError { start: s, end: e });
        }
        self.by_start.insert(start, (end, value));
        Ok(())
    }

    /// The value of the range containing `addr`.
    pub fn find(&self, addr: u64) -> Option<T> {
        let (_, &(end, value)) = self.by_start.range(..=addr).next_back()?;
        (addr < end).then_some(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_containing_range_and_rejects_overlaps() {
        let mut ranges = FnRanges::new();
        ranges.insert(0x1000, 0x1040, 'a').unwrap();
        ranges.insert(0x1040, 0x10a0, 'b').unwrap();
        assert_eq!(ranges.find(0xfff), None);
        assert_eq!(ranges.find(0x1000), Some('a'));
        assert_eq!(ranges.find(0x103f), Some('a'));
        assert_eq!(ranges.find(0x1040), Some('b'));
        assert_eq!(ranges.find(0x10a0), None);
        assert_eq!(
            ranges.insert(0x1030, 0x1050, 'c'),
            Err(OverlapError {
                start: 0x1040,
                end: 0x10a0
            })
        );
        assert_eq!(
            ranges.insert(0x0f00, 0x1001, 'c'),
            Err(OverlapError {
                start: 0x1000,
                end: 0x1040
            })
        );
        ranges.insert(0x0f00, 0x1000, 'c').unwrap();
        assert_eq!(ranges.find(0x0fff), Some('c'));
    }
}
