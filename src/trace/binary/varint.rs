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

impl<'a> Cursor<'a> {
    pub fn new(data: &'a [u8]) -> Cursor<'a> {
        Cursor { data, pos: 0 }
    }

    /// Bytes read so far.
    pub fn pos(&self) -> usize {
        self.pos
    }

    /// True when every byte was read.
    pub fn at_end(&self) -> bool {
        self.pos == self.data.len()
    }

    #[inline]
    pub fn varint(&mut self) -> Result<u64, Malformed> {
        // Most numbers are small deltas: one byte.
        if let Some(&byte) = self.data.get(self.pos)
            && byte < 0x80
        {
            self.pos += 1;
            return Ok(u64::from(byte));
        }
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
}
