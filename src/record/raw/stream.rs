//! Reading the tool's stream: records' fields, decoded in place from large
//! slices of it, and the block descriptions they make.

use std::io::{self, Read};

use super::RawError;
use crate::trace::Access;
use crate::trace::binary::MAX_BLOCK_ACCESSES;
use crate::trace::block::{BlockDef, BlockInstr, Item, JumpKind};

/// Tool item kinds (see the tool's README).
const ITEM_ACCESS: u8 = 3;
pub(super) const ITEM_GUARDED: u8 = 4;
const ITEM_EXIT: u8 = 8;

/// A `D` record: a block's description.
pub(super) fn describe<R: Read>(stream: &mut Stream<R>) -> Result<(u32, BlockDef), RawError> {
    let id = stream.u32()?;
    let start = stream.u64()?;
    let count = stream.u16()?;
    let end = JumpKind::from_code(stream.u8()?);
    let mut def = BlockDef {
        instrs: Vec::with_capacity(usize::from(count)),
        items: Vec::new(),
        end,
    };
    for _ in 0..count {
        let offset = stream.u16()?;
        let len = stream.u8()?;
        if len == 0 {
            return Err(stream.malformed("an instruction of 0 bytes"));
        }
        let items = stream.u16()?;
        let first = def.items.len();
        if first + usize::from(items) > MAX_BLOCK_ACCESSES {
            return Err(stream.malformed("a block of more items than a trace's block holds"));
        }
        for _ in 0..items {
            let kind = stream.u8()?;
            let size = stream.u16()?;
            let item = if kind & ITEM_EXIT != 0 {
                Item::Exit {
                    kind: JumpKind::from_code(kind),
                }
            } else {
                let access = match kind & ITEM_ACCESS {
                    1 => Access::Read,
                    2 => Access::Write,
                    3 => Access::Modify,
                    _ => return Err(stream.malformed("an access of no kind")),
                };
                if size == 0 {
                    return Err(stream.malformed("an access of 0 bytes"));
                }
                Item::Access {
                    access,
                    size,
                    guarded: kind & ITEM_GUARDED != 0,
                }
            };
            def.items.push(item);
        }
        def.instrs.push(BlockInstr {
            addr: start.wrapping_add(u64::from(offset)),
            len,
            items: first..def.items.len(),
        });
    }
    Ok((id, def))
}

/// The tool's stream, read in large slices; records are decoded in place.
pub(super) struct Stream<R: Read> {
    input: R,
    buf: Vec<u8>,
    /// Next byte to decode, and end of the bytes read, in `buf`.
    pos: usize,
    end: usize,
    /// Stream offset of `buf[0]`.
    base: u64,
}

impl<R: Read> Stream<R> {
    pub(super) fn new(input: R) -> Stream<R> {
        Stream {
            input,
            buf: vec![0; 4 << 20],
            pos: 0,
            end: 0,
            base: 0,
        }
    }

    /// Stream offset of the next byte to decode.
    pub(super) fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    pub(super) fn malformed(&self, what: impl Into<String>) -> RawError {
        RawError::Malformed {
            offset: self.offset(),
            what: what.into(),
        }
    }

    /// Makes `n` bytes available at `pos`; false when the stream ends
    /// before.
    #[inline]
    pub(super) fn ensure(&mut self, n: usize) -> Result<bool, RawError> {
        if self.end - self.pos >= n {
            return Ok(true);
        }
        self.refill(n)
    }

    #[cold]
    fn refill(&mut self, n: usize) -> Result<bool, RawError> {
        self.buf.copy_within(self.pos..self.end, 0);
        self.base += self.pos as u64;
        self.end -= self.pos;
        self.pos = 0;
        if self.buf.len() < n {
            self.buf.resize(n, 0);
        }
        while self.end < n {
            match self.input.read(&mut self.buf[self.end..]) {
                Ok(0) => return Ok(false),
                Ok(read) => self.end += read,
                Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                Err(err) => return Err(RawError::Io(err)),
            }
        }
        Ok(true)
    }

    #[inline]
    pub(super) fn bytes<const N: usize>(&mut self) -> Result<[u8; N], RawError> {
        if !self.ensure(N)? {
            return Err(RawError::Cut {
                offset: self.offset(),
            });
        }
        let mut out = [0u8; N];
        out.copy_from_slice(&self.buf[self.pos..self.pos + N]);
        self.pos += N;
        Ok(out)
    }

    /// The next record's tag; `None` at the end of the stream.
    #[inline]
    pub(super) fn tag(&mut self) -> Result<Option<u8>, RawError> {
        if !self.ensure(1)? {
            return Ok(None);
        }
        self.pos += 1;
        Ok(Some(self.buf[self.pos - 1]))
    }

    #[inline]
    pub(super) fn u8(&mut self) -> Result<u8, RawError> {
        Ok(self.bytes::<1>()?[0])
    }

    #[inline]
    pub(super) fn u16(&mut self) -> Result<u16, RawError> {
        Ok(u16::from_le_bytes(self.bytes()?))
    }

    #[inline]
    pub(super) fn u32(&mut self) -> Result<u32, RawError> {
        Ok(u32::from_le_bytes(self.bytes()?))
    }

    #[inline]
    pub(super) fn u64(&mut self) -> Result<u64, RawError> {
        Ok(u64::from_le_bytes(self.bytes()?))
    }

    pub(super) fn string(&mut self) -> Result<String, RawError> {
        let len = usize::from(self.u16()?);
        if !self.ensure(len)? {
            return Err(RawError::Cut {
                offset: self.offset(),
            });
        }
        let text = String::from_utf8_lossy(&self.buf[self.pos..self.pos + len]).into_owned();
        self.pos += len;
        Ok(text)
    }
}
