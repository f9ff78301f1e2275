//! LEB128 varints and zigzag signed deltas, the binary format's numbers.

/// Appends `value` as an unsigned LEB128 varint.
#[inline]
pub fn put(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push(value as u8 | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// The seven low bits of each byte of `word` (whose high bits are clear),
/// joined into one number, the first byte's lowest.
#[inline]
fn join_septets(word: u64) -> u64 {
    let pairs = (word & 0x007f_007f_007f_007f) | ((word & 0x7f00_7f00_7f00_7f00) >> 1);
    let quads = (pairs & 0x0000_3fff_0000_3fff) | ((pairs & 0x3fff_0000_3fff_0000) >> 2);
    (quads & 0x0000_0000_0fff_ffff) | ((quads & 0x0fff_ffff_0000_0000) >> 4)
}

/// Appends the signed difference `value - base` as a zigzag varint.
#[inline]
pub fn put_delta(out: &mut Vec<u8>, value: u64, base: u64) {
    let delta = value.wrapping_sub(base) as i64;
    put(out, ((delta << 1) ^ (delta >> 63)) as u64);
}

/// Reads numbers and bytes from a decoded chunk, reporting where it ran out.
pub struct Cursor<'a> {
    data: &'a [u8],
    pos: usize,
}

/// The chunk ended, or a number did not fit 64 bits, at `pos`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Malformed {
    pub pos: usize,
}

/// Whether `a` and `b`, as long as each other, hold the same bytes: their
/// first eight compared at once, as most runs of different rounds differ
/// there (in their first address), before a call to compare them all.
#[inline]
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    match (a.first_chunk::<8>(), b.first_chunk::<8>()) {
        (Some(a_word), Some(b_word)) if a_word != b_word => false,
        _ => a == b,
    }
}

impl<'a> Cursor<'a> {
    pub fn new(data: &'a [u8]) -> Cursor<'a> {
        Cursor { data, pos: 0 }
    }

    /// Bytes read so far.
    pub fn pos(&self) -> usize {
        self.pos
    }

    /// How many times, up to `most`, the `len` bytes just read come again
    /// right after them, one time after another.
    #[inline]
    pub fn repeats(&self, len: usize, most: usize) -> usize {
        let Some(start) = self.pos.checked_sub(len).filter(|_| len > 0) else {
            return 0;
        };
        let times = most.min((self.data.len() - self.pos) / len);
        // The round comes again as far as each byte from `pos` on is the
        // byte `len` before it.
        let before = &self.data[start..start + times * len];
        let after = &self.data[self.pos..self.pos + times * len];
        let words = before.chunks_exact(8).zip(after.chunks_exact(8));
        let same_words = words
            .take_while(|(a, b)| a.first_chunk::<8>() == b.first_chunk::<8>())
            .count()
            * 8;
        let same = same_words
            + before[same_words..]
                .iter()
                .zip(&after[same_words..])
                .take_while(|(a, b)| a == b)
                .count();
        same / len
    }

    /// Whether the `len` bytes just read are the `len` bytes before them
    /// again.
    #[inline]
    pub fn repeated(&self, len: usize) -> bool {
        match self.pos.checked_sub(2 * len) {
            Some(start) => same_bytes(
                &self.data[start..start + len],
                &self.data[start + len..self.pos],
            ),
            None => false,
        }
    }

    /// Moves on past `len` bytes that [`Cursor::repeats`] found.
    #[inline]
    pub fn skip(&mut self, len: usize) {
        self.pos += len;
    }

    /// True when every byte was read.
    pub fn at_end(&self) -> bool {
        self.pos == self.data.len()
    }

    #[inline]
    pub fn varint(&mut self) -> Result<u64, Malformed> {
        if let Some(word) = self.word() {
            // Most numbers are small deltas, of one byte, and most run tags
            // take two.
            if word & 0x80 == 0 {
                self.pos += 1;
                return Ok(word & 0x7f);
            }
            if word & 0x8000 == 0 {
                self.pos += 2;
                return Ok(word & 0x7f | (word >> 1 & 0x3f80));
            }
            // Up to eight bytes at once: the first byte without its high bit
            // ends the number; eight such bytes hold 56 bits, which always fit.
            let stops = !word & 0x8080_8080_8080_8080;
            if stops != 0 {
                let len = stops.trailing_zeros() / 8 + 1;
                let kept = word & (u64::MAX >> (64 - 8 * len));
                self.pos += len as usize;
                return Ok(join_septets(kept & 0x7f7f_7f7f_7f7f_7f7f));
            }
        }
        self.varint_bytewise()
    }

    /// The next eight bytes as a little-endian word, if there are eight.
    #[inline]
    fn word(&self) -> Option<u64> {
        let bytes = self.data.get(self.pos..self.pos.checked_add(8)?)?;
        Some(u64::from_le_bytes(bytes.try_into().ok()?))
    }

    /// [`Cursor::varint`] a byte at a time: numbers of nine or ten bytes,
    /// and those near the end of the data.
    fn varint_bytewise(&mut self) -> Result<u64, Malformed> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let Some(&byte) = self.data.get(self.pos) else {
                return Err(Malformed { pos: self.pos });
            };
            self.pos += 1;
            if shift == 63 && byte > 1 {
                return Err(Malformed { pos: self.pos - 1 });
            }
            value |= u64::from(byte & 0x7f) << shift;
            if byte < 0x80 {
                return Ok(value);
            }
        }
        Err(Malformed { pos: self.pos })
    }

    /// A zigzag delta added to `base`.
    #[inline]
    pub fn delta(&mut self, base: u64) -> Result<u64, Malformed> {
        let zigzag = self.varint()?;
        let delta = (zigzag >> 1) as i64 ^ -((zigzag & 1) as i64);
        Ok(base.wrapping_add(delta as u64))
    }

    pub fn byte(&mut self) -> Result<u8, Malformed> {
        let byte = *self.data.get(self.pos).ok_or(Malformed { pos: self.pos })?;
        self.pos += 1;
        Ok(byte)
    }

    /// A varint length and that many bytes.
    pub fn bytes(&mut self) -> Result<&'a [u8], Malformed> {
        let len = self.varint()?;
        let end = usize::try_from(len)
            .ok()
            .and_then(|len| self.pos.checked_add(len))
            .filter(|&end| end <= self.data.len())
            .ok_or(Malformed { pos: self.pos })?;
        let bytes = &self.data[self.pos..end];
        self.pos = end;
        Ok(bytes)
    }
}

/// Appends a varint length and the bytes.
pub fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    put(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_round_trip() {
        let values = [0, 1, 127, 128, 300, u32::MAX as u64, u64::MAX - 1, u64::MAX];
        let mut out = Vec::new();
        for &v in &values {
            put(&mut out, v);
            put_delta(&mut out, v, 1000);
        }
        put_bytes(&mut out, b"name");
        let mut cursor = Cursor::new(&out);
        for &v in &values {
            assert_eq!(cursor.varint(), Ok(v));
            assert_eq!(cursor.delta(1000), Ok(v));
        }
        assert_eq!(cursor.bytes(), Ok(&b"name"[..]));
        assert!(cursor.at_end());
        assert_eq!(cursor.varint(), Err(Malformed { pos: out.len() }));
    }

    #[test]
    fn small_deltas_take_one_byte() {
        let mut out = Vec::new();
        put_delta(&mut out, 0x7fff_0008, 0x7fff_0000);
        put_delta(&mut out, 0x7fff_0000, 0x7fff_0008);
        assert_eq!(out, [16, 15]);
    }

    #[test]
    fn overlong_and_truncated_input_is_malformed() {
        assert!(Cursor::new(&[0xff; 11]).varint().is_err());
        assert!(Cursor::new(&[0x80]).varint().is_err());
        assert!(Cursor::new(&[5, 1, 2]).bytes().is_err());
    }

    /// A round's bytes are found again after it, as many times as they
    /// come one after another, and before it; whether they differ from the
    /// other round's in their first eight bytes, later, or are shorter than
    /// eight; never past either end of the data.
    #[test]
    fn rounds_in_the_same_bytes_are_found_on_both_sides() {
        let round: Vec<u8> = (1..=12).collect();
        let data = round.repeat(4);
        let mut cursor = Cursor::new(&data);
        cursor.skip(12);
        assert_eq!(cursor.repeats(12, 10), 3);
        assert_eq!(cursor.repeats(12, 2), 2, "no more than asked");
        assert_eq!(cursor.repeats(5, 10), 0);
        assert!(!cursor.repeated(12), "only one round before the cursor");
        cursor.skip(12);
        assert!(cursor.repeated(12));
        assert!(
            !cursor.repeated(3),
            "its last six bytes are not three twice"
        );
        cursor.skip(24);
        assert_eq!(cursor.repeats(12, 10), 0, "past the end");
        for at in [0, 7, 11] {
            for (round, found) in [(1, 0), (2, 1), (3, 2)] {
                let mut other = data.clone();
                other[12 * round + at] ^= 0x40;
                let mut cursor = Cursor::new(&other);
                cursor.skip(12);
                assert_eq!(
                    cursor.repeats(12, 10),
                    found,
                    "byte {at} of round {round} differs"
                );
                if round == 1 {
                    cursor.skip(12);
                    assert!(!cursor.repeated(12), "byte {at} differs");
                }
            }
        }
        let short = [7, 9, 7, 9, 7, 9, 7];
        let mut cursor = Cursor::new(&short);
        assert_eq!(cursor.repeats(2, 10), 0, "nothing read");
        cursor.skip(2);
        assert_eq!(cursor.repeats(2, 10), 2, "a part of a round is not one");
        cursor.skip(2);
        assert!(cursor.repeated(2));
        assert!(!cursor.repeated(3), "more than was read");
    }

    /// The word-at-a-time decoder and the byte loop agree on numbers of
    /// every length, at every distance from the end of the data, and on
    /// malformed input.
    #[test]
    fn words_decode_as_bytes_do() {
        let mut values = vec![
            0,
            1,
            127,
            128,
            u64::MAX,
            u64::MAX >> 8,
            1 << 55,
            (1 << 56) - 1,
        ];
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        for bits in 0..64 {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            values.push(state >> bits);
        }
        for value in values {
            let mut one = Vec::new();
            put(&mut one, value);
            for padding in 0..10 {
                let mut data = one.clone();
                data.extend(std::iter::repeat_n(0x81, padding));
                let mut fast = Cursor::new(&data);
                let mut slow = Cursor::new(&data);
                assert_eq!(fast.varint(), slow.varint_bytewise(), "{value:#x}");
                assert_eq!(fast.pos(), one.len());
                assert_eq!(fast.varint(), slow.varint_bytewise(), "after {value:#x}");
                assert_eq!(fast.pos(), slow.pos());
            }
        }
    }
}
