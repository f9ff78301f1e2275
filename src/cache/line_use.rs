//! Use state of one resident cache line: how often it was accessed and
//! exactly which of its bytes.
//!
//! Byte masks come in two widths: one word for lines of up to 64 bytes (the
//! common case, kept small because every L1 hit updates two of them) and
//! four words for lines of up to [`MAX_USE_LINE_SIZE`] bytes.

use std::fmt::Debug;

use super::geometry::MAX_USE_LINE_SIZE;

/// A set of bytes of one line: bit `b` stands for byte `b`.
pub trait ByteMask: Copy + Default + Debug + PartialEq {
    /// The longest line the mask covers.
    const LINE_LIMIT: u32;

    /// The bytes `offset .. offset + len`; requires `len >= 1` and
    /// `offset + len <= LINE_LIMIT`.
    fn range(offset: u32, len: u32) -> Self;

    /// Adds the bytes of `other`.
    fn merge(&mut self, other: &Self);

    /// Number of bytes set.
    fn count(&self) -> u32;
}

/// The mask of a line of up to 64 bytes.
pub type NarrowMask = u64;

impl ByteMask for u64 {
    const LINE_LIMIT: u32 = 64;

    #[inline]
    fn range(offset: u32, len: u32) -> u64 {
        debug_assert!(len >= 1 && offset + len <= 64);
        // `len` ones, without a branch: a shift by 0 to 63.
        (u64::MAX >> (64 - len)) << offset
    }

    #[inline]
    fn merge(&mut self, other: &u64) {
        *self |= other;
    }

    #[inline]
    fn count(&self) -> u32 {
        self.count_ones()
    }
}

const WIDE_WORDS: usize = (MAX_USE_LINE_SIZE / 64) as usize;
const _: () = assert!(WIDE_WORDS == 4, "WideMask::range builds four words");

/// The mask of a line of up to [`MAX_USE_LINE_SIZE`] bytes; bit `b` of word
/// `w` stands for byte `64 * w + b`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WideMask([u64; WIDE_WORDS]);

impl ByteMask for WideMask {
    const LINE_LIMIT: u32 = MAX_USE_LINE_SIZE;

    #[inline]
    fn range(offset: u32, len: u32) -> WideMask {
        debug_assert!(len >= 1 && offset + len <= MAX_USE_LINE_SIZE);
        let end = offset + len;
        // Each word computed on its own, without loops or stores, so that the
        // mask stays in registers on the hot path.
        let below = |n: u32| if n >= 64 { u64::MAX } else { (1u64 << n) - 1 };
        let word = |w: u32| {
            let lo = offset.clamp(w * 64, w * 64 + 64) - w * 64;
            let hi = end.clamp(w * 64, w * 64 + 64) - w * 64;
            below(hi) & !below(lo)
        };
        WideMask([word(0), word(1), word(2), word(3)])
    }

    #[inline]
    fn merge(&mut self, other: &WideMask) {
        for (mine, theirs) in self.0.iter_mut().zip(&other.0) {
            *mine |= theirs;
        }
    }

    #[inline]
    fn count(&self) -> u32 {
        self.0.iter().map(|word| word.count_ones()).sum()
    }
}

/// Accesses to one line during one residency: a count and the bytes used.
///
/// The access that loads a line starts the count at 1 with its bytes; every
/// later access adds 1 and its bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LineUse<M> {
    pub count: u64,
    pub mask: M,
}

impl<M: ByteMask> LineUse<M> {
    /// The use of a line just loaded by an access to `mask`.
    #[inline]
    pub fn first(mask: M) -> LineUse<M> {
        LineUse { count: 1, mask }
    }

    /// Records one more access to `mask`.
    #[inline]
    pub fn touch(&mut self, mask: &M) {
        self.count += 1;
        self.mask.merge(mask);
    }

    /// Adds the accesses recorded in `other`.
    #[inline]
    pub fn absorb(&mut self, other: &LineUse<M>) {
        self.count += other.count;
        self.mask.merge(&other.mask);
    }

    /// Number of bytes used.
    #[inline]
    pub fn bytes(&self) -> u32 {
        self.mask.count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn range_sets_exactly_the_accessed_bytes() {
        assert_eq!(WideMask::range(0, 1).0, [1, 0, 0, 0]);
        assert_eq!(WideMask::range(60, 4).0, [0xF << 60, 0, 0, 0]);
        assert_eq!(WideMask::range(0, 64).0, [u64::MAX, 0, 0, 0]);
        assert_eq!(WideMask::range(62, 4).0, [0b11 << 62, 0b11, 0, 0]);
        assert_eq!(WideMask::range(0, 256).count(), 256);
        assert_eq!(WideMask::range(255, 1).0, [0, 0, 0, 1 << 63]);
        for offset in 0..256 {
            for len in 1..=(256 - offset).min(70) {
                assert_eq!(WideMask::range(offset, len).count(), len);
            }
        }
        for offset in 0..64 {
            for len in 1..=64 - offset {
                let narrow = <u64 as ByteMask>::range(offset, len);
                assert_eq!(narrow, WideMask::range(offset, len).0[0]);
            }
        }
    }

    #[test]
    fn use_counts_accesses_and_unions_bytes() {
        let mut line = LineUse::first(WideMask::range(0, 8));
        line.touch(&WideMask::range(4, 8));
        assert_eq!(line.count, 2);
        assert_eq!(line.bytes(), 12);
        let mut other = LineUse::first(WideMask::range(32, 4));
        other.absorb(&line);
        assert_eq!(other.count, 3);
        assert_eq!(other.bytes(), 16);
    }
}
