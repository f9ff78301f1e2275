//! Use state of one resident cache line: how often it was accessed and
//! exactly which of its bytes.

use super::geometry::MAX_USE_LINE_SIZE;

const MASK_WORDS: usize = (MAX_USE_LINE_SIZE / 64) as usize;

/// One bit per byte of a line of up to [`MAX_USE_LINE_SIZE`] bytes; bit `b`
/// of word `w` stands for byte `64 * w + b`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ByteMask([u64; MASK_WORDS]);

impl ByteMask {
    /// The bytes `offset .. offset + len` of a line.
    ///
    /// Requires `len >= 1` and `offset + len <= MAX_USE_LINE_SIZE`.
    #[inline]
    pub fn range(offset: u32, len: u32) -> ByteMask {
        debug_assert!(len >= 1 && offset + len <= MAX_USE_LINE_SIZE);
        let mut words = [0u64; MASK_WORDS];
        let end = offset + len;
        let mut word = offset / 64;
        while word * 64 < end {
            let lo = offset.max(word * 64) - word * 64;
            let hi = end.min(word * 64 + 64) - word * 64;
            let upper = if hi == 64 { u64::MAX } else { (1u64 << hi) - 1 };
            words[word as usize] = upper & !((1u64 << lo) - 1);
            word += 1;
        }
        ByteMask(words)
    }

    /// Adds the bytes of `other`.
    #[inline]
    pub fn merge(&mut self, other: &ByteMask) {
        for (mine, theirs) in self.0.iter_mut().zip(&other.0) {
            *mine |= theirs;
        }
    }

    /// Number of bytes set.
    #[inline]
    pub fn count(&self) -> u32 {
        self.0.iter().map(|word| word.count_ones()).sum()
    }
}

/// Accesses to one line during one residency: a count and the bytes used.
///
/// The access that loads a line starts the count at 1 with its bytes; every
/// later access adds 1 and its bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LineUse {
    pub count: u64,
    pub mask: ByteMask,
}

impl LineUse {
    /// The use of a line just loaded by an access to `mask`.
    #[inline]
    pub fn first(mask: ByteMask) -> LineUse {
        LineUse { count: 1, mask }
    }

    /// Records one more access to `mask`.
    #[inline]
    pub fn touch(&mut self, mask: &ByteMask) {
        self.count += 1;
        self.mask.merge(mask);
    }

    /// Adds the accesses recorded in `other`.
    #[inline]
    pub fn absorb(&mut self, other: &LineUse) {
        self.count += other.count;
        self.mask.merge(&other.mask);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn range_sets_exactly_the_accessed_bytes() {
        assert_eq!(ByteMask::range(0, 1).0, [1, 0, 0, 0]);
        assert_eq!(ByteMask::range(60, 4).0, [0xF << 60, 0, 0, 0]);
        assert_eq!(ByteMask::range(0, 64).0, [u64::MAX, 0, 0, 0]);
        assert_eq!(ByteMask::range(62, 4).0, [0b11 << 62, 0b11, 0, 0]);
        assert_eq!(ByteMask::range(0, 256).count(), 256);
        assert_eq!(ByteMask::range(255, 1).0, [0, 0, 0, 1 << 63]);
        for offset in 0..256 {
            for len in 1..=(256 - offset).min(70) {
                assert_eq!(ByteMask::range(offset, len).count(), len);
            }
        }
    }

    #[test]
    fn use_counts_accesses_and_unions_bytes() {
        let mut line = LineUse::first(ByteMask::range(0, 8));
        line.touch(&ByteMask::range(4, 8));
        assert_eq!(line.count, 2);
        assert_eq!(line.mask.count(), 12);
        let mut other = LineUse::first(ByteMask::range(32, 4));
        other.absorb(&line);
        assert_eq!(other.count, 3);
        assert_eq!(other.mask.count(), 16);
    }
}
