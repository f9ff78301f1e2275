//! The trace's chunks as they lie in the file: one read, checked and
//! decompressed; the metadata at the start; the end (trailer, END chunk and
//! symbol table), read before the stream; and what a trace without its end
//! still gives.

use std::io::{self, Read, Seek, SeekFrom};

use super::{BinaryReader, corrupted, io_error, syntax};
use crate::trace::binary::format::{
    self, CHUNK_HEADER_LEN, CONTROL, ChunkHeader, ChunkKind, Control, Corrupt, FLAG_ZSTD,
    HEADER_LEN, MAX_CHUNK, Summary, TRAILER_LEN,
};
use crate::trace::binary::varint::Cursor;
use crate::trace::{Event, TraceError};

/// Why a binary trace cannot be read to its end.
const NO_END: &str =
    "the trace has no end record: the recording did not finish or the file was cut";
const ALLOW: &str = "(--allow-truncated reads what is there)";
/// What reading a trace without its end loses besides the rest of its events.
pub(super) const SYMBOLS_LOST: &str = "symbols the trace kept at its end, if any, are lost with it";

impl<R: Read + Seek> BinaryReader<R> {
    /// Reads the trailer, the END chunk it points at, and the symbol
    /// table's first chunk; a file without them is cut (or has something
    /// appended), an error unless truncation is allowed.
    pub(super) fn read_end(&mut self) -> Result<(), TraceError> {
        if self.len < (HEADER_LEN + TRAILER_LEN) as u64 {
            return self.truncation();
        }
        let mut trailer = [0u8; TRAILER_LEN];
        let at = self.len - TRAILER_LEN as u64;
        self.seek(at)?;
        read_exact_or(
            &mut self.input,
            &mut trailer,
            at,
            &format!("{NO_END} {ALLOW}"),
        )?;
        let end_at = u64::from_le_bytes(trailer);
        if end_at < HEADER_LEN as u64 || end_at >= at {
            return self.no_end();
        }
        let (kind, payload) = match self.read_chunk_at(end_at) {
            Ok(chunk) => chunk,
            // The trailer and the END chunk's header agree: the file is
            // whole, and the chunk damaged.
            Err(err) if self.end_header_reaches(end_at, at) => return Err(err),
            Err(_) => return self.no_end(),
        };
        // The end chunk ends where the trailer starts.
        if kind != ChunkKind::End || self.next != at {
            return self.no_end();
        }
        let mut cursor = Cursor::new(&payload);
        let (symbols_at, summary) =
            Summary::get_end(&mut cursor).map_err(|err| corrupted(end_at, err))?;
        decoded_whole(&cursor, end_at, "end record")?;
        self.summary = Some(summary);
        self.end_at = end_at;
        self.symbols_at = symbols_at;
        if symbols_at != 0 {
            // An offset outside the chunks is the end record's fault, told
            // at the end record: an error where it points would send the
            // reader into the header, or past the file's end.
            if symbols_at < HEADER_LEN as u64 || symbols_at >= end_at {
                return Err(syntax(
                    end_at,
                    format!(
                        "the end record points at byte offset {symbols_at} for the symbol \
                         table, outside the trace's chunks ({HEADER_LEN} to {end_at})"
                    ),
                ));
            }
            self.load_symbols(symbols_at)?;
            self.symbols_loaded = true;
        }
        Ok(())
    }

    /// Queues the events of the SYMBOLS chunk at `at`, which come before
    /// the stream and are told at that chunk, and notes the next one: the
    /// table's chunks run up to the END chunk.
    pub(super) fn load_symbols(&mut self, at: u64) -> Result<(), TraceError> {
        let (kind, payload) = self.read_chunk_at(at)?;
        if kind != ChunkKind::Symbols {
            let what = if at == self.symbols_at {
                "the end record points at a chunk that is not the symbol table"
            } else {
                "a chunk of another kind between the symbol table's first chunk and the end record"
            };
            return Err(syntax(at, what));
        }
        if self.next > self.end_at {
            return Err(syntax(at, "the symbol table runs past the end record"));
        }
        let mut cursor = Cursor::new(&payload);
        while !cursor.at_end() {
            let record = cursor.pos();
            let tag = cursor.varint().map_err(|e| corrupted(at, e.into()))?;
            if tag & 3 != CONTROL {
                return Err(corrupted(
                    at,
                    Corrupt {
                        pos: cursor.pos(),
                        what: "a block run in the symbol table".into(),
                    },
                ));
            }
            // Recording switched off or on, and resumes, say where the
            // stream is, which a table read before it is not; what happens
            // in the stream (a thread switch, an instruction) has no place
            // there.
            match format::get_control(&mut cursor, tag >> 2).map_err(|e| corrupted(at, e))? {
                Control::Event(
                    event @ (Event::Module(_)
                    | Event::Function(_)
                    | Event::Line(_)
                    | Event::Plt { .. }),
                ) => self.queue.push_back(event),
                Control::Event(Event::Restart) | Control::RecordingOff | Control::Resume { .. } => {
                }
                Control::Event(_) => {
                    return Err(corrupted(
                        at,
                        Corrupt {
                            pos: record,
                            what: "a record of the stream in the symbol table".into(),
                        },
                    ));
                }
            }
        }
        self.chunk_at = at;
        self.symbols_next = (self.next < self.end_at).then_some(self.next);
        Ok(())
    }

    /// Whether the chunk header at `chunk_at` is an END chunk's that ends
    /// at `trailer_at`.
    fn end_header_reaches(&mut self, chunk_at: u64, trailer_at: u64) -> bool {
        let mut header = [0u8; CHUNK_HEADER_LEN];
        if self.seek(chunk_at).is_err() || self.input.read_exact(&mut header).is_err() {
            return false;
        }
        let header = ChunkHeader::decode(&header);
        let end = chunk_at + (CHUNK_HEADER_LEN as u64) + u64::from(header.stored_len);
        ChunkKind::from_code(header.kind) == Some(ChunkKind::End) && end == trailer_at
    }

    /// The file does not end in a trailer that points at an END chunk: the
    /// trace is cut, or something follows its end.
    fn no_end(&mut self) -> Result<(), TraceError> {
        match self.end_inside() {
            Some(end) => Err(syntax(
                end,
                format!(
                    "{} bytes follow the trace's end: something was appended to it \
                     (`truncate -s {end}` on the file gives the trace back)",
                    self.len - end
                ),
            )),
            None => self.truncation(),
        }
    }

    /// Where the trace ends, when that is before the file does (another
    /// trace or anything else appended): its chunks, walked by their
    /// headers from the first, reach an END chunk followed by the trailer
    /// that points at it.
    fn end_inside(&mut self) -> Option<u64> {
        let mut at = HEADER_LEN as u64;
        loop {
            let mut header = [0u8; CHUNK_HEADER_LEN];
            self.seek(at).ok()?;
            self.input.read_exact(&mut header).ok()?;
            let header = ChunkHeader::decode(&header);
            if header.stored_len > MAX_CHUNK {
                return None;
            }
            let next = at + (CHUNK_HEADER_LEN as u64) + u64::from(header.stored_len);
            if ChunkKind::from_code(header.kind) == Some(ChunkKind::End) {
                let mut trailer = [0u8; TRAILER_LEN];
                self.seek(next).ok()?;
                self.input.read_exact(&mut trailer).ok()?;
                let end = next + TRAILER_LEN as u64;
                return (u64::from_le_bytes(trailer) == at && end < self.len).then_some(end);
            }
            at = next;
        }
    }

    fn truncation(&mut self) -> Result<(), TraceError> {
        if self.allow_truncated {
            self.truncated = Some(format!("{NO_END}; {SYMBOLS_LOST}"));
            Ok(())
        } else {
            Err(syntax(self.len, format!("{NO_END} {ALLOW}")))
        }
    }

    pub(super) fn read_meta(&mut self) -> Result<(), TraceError> {
        let (kind, payload) = self.read_chunk_at(HEADER_LEN as u64)?;
        if kind != ChunkKind::Meta {
            return Err(syntax(
                HEADER_LEN as u64,
                "the first chunk is not the metadata",
            ));
        }
        let at = HEADER_LEN as u64;
        let mut cursor = Cursor::new(&payload);
        let count = cursor.varint().map_err(|e| corrupted(at, e.into()))?;
        for _ in 0..count {
            let mut text = || {
                format::get_text(&mut cursor, "a metadata key or value")
                    .map_err(|e| corrupted(at, e))
            };
            let key = text()?;
            let value = text()?;
            self.meta.push((key, value));
        }
        decoded_whole(&cursor, at, "metadata")
    }

    fn seek(&mut self, at: u64) -> Result<(), TraceError> {
        self.input
            .seek(SeekFrom::Start(at))
            .map(|_| ())
            .map_err(|err| io_error(at, err))
    }

    /// Reads, checks and decompresses the chunk at `at`, and moves `next`
    /// past it.
    pub(super) fn read_chunk_at(&mut self, at: u64) -> Result<(ChunkKind, Vec<u8>), TraceError> {
        self.seek(at)?;
        let mut header = [0u8; CHUNK_HEADER_LEN];
        read_exact_or(
            &mut self.input,
            &mut header,
            at,
            "the trace ends inside a chunk header",
        )?;
        // Flags or reserved bits this version does not define would change
        // the meaning of what follows.
        if header[1] & !FLAG_ZSTD != 0 || header[2..4] != [0, 0] {
            return Err(syntax(
                at,
                "a chunk has flags or reserved bits this linegrind does not know",
            ));
        }
        let header = ChunkHeader::decode(&header);
        let kind = ChunkKind::from_code(header.kind)
            .ok_or_else(|| syntax(at, format!("unknown chunk kind {}", header.kind)))?;
        if header.stored_len > MAX_CHUNK || header.raw_len > MAX_CHUNK {
            return Err(syntax(
                at,
                "a chunk claims to be larger than any linegrind writes",
            ));
        }
        let body = at + CHUNK_HEADER_LEN as u64;
        let no_room = |len: u32| {
            syntax(
                at,
                format!("a chunk of {len} bytes is more than this host's memory holds"),
            )
        };
        let mut stored = room_for(header.stored_len).ok_or_else(|| no_room(header.stored_len))?;
        stored.resize(header.stored_len as usize, 0);
        read_exact_or(
            &mut self.input,
            &mut stored,
            body,
            "the trace ends inside a chunk",
        )?;
        if crc32fast::hash(&stored) != header.crc {
            return Err(syntax(
                at,
                "a chunk's checksum does not match: the trace is corrupt",
            ));
        }
        let payload = if header.flags & FLAG_ZSTD != 0 {
            let mut data = room_for(header.raw_len).ok_or_else(|| no_room(header.raw_len))?;
            self.decompressor
                .decompress_to_buffer(&stored, &mut data)
                .map_err(|err| syntax(at, format!("a chunk does not decompress: {err}")))?;
            if data.len() != header.raw_len as usize {
                return Err(syntax(at, "a chunk decompresses to the wrong size"));
            }
            data
        } else if header.raw_len != header.stored_len {
            return Err(syntax(
                at,
                "an uncompressed chunk's stored and raw lengths differ: the trace is corrupt",
            ));
        } else {
            stored
        };
        self.next = body + u64::from(header.stored_len);
        Ok((kind, payload))
    }

    /// The stream reached an END chunk at `at`: with the trace's end read,
    /// that chunk must be the one the trailer points at, and the stream
    /// must have held the block runs it counts. (A trace read without its
    /// end stops at any END chunk.)
    pub(super) fn check_end(&self, at: u64) -> Result<(), TraceError> {
        let Some(summary) = self.summary else {
            return Ok(());
        };
        if at != self.end_at {
            return Err(syntax(
                at,
                "an end record before the trace's end: the trace is corrupt",
            ));
        }
        if summary.block_runs == self.runs_seen {
            return Ok(());
        }
        Err(syntax(
            at,
            format!(
                "the end record counts {} block runs, the trace's chunks hold {}: \
                 chunks are missing or repeated",
                summary.block_runs, self.runs_seen
            ),
        ))
    }
}

pub(super) fn read_exact_or(
    input: &mut impl Read,
    buf: &mut [u8],
    at: u64,
    why: &str,
) -> Result<(), TraceError> {
    input.read_exact(buf).map_err(|err| match err.kind() {
        io::ErrorKind::UnexpectedEof => syntax(at, why),
        _ => io_error(at, err),
    })
}

/// An empty buffer with room for `len` bytes, or `None` where the host
/// refuses them: a chunk may hold 64 MiB, which a host short of memory
/// would otherwise answer with an abort.
fn room_for(len: u32) -> Option<Vec<u8>> {
    let mut buffer = Vec::new();
    buffer.try_reserve_exact(len as usize).ok()?;
    Some(buffer)
}

/// An error unless `cursor` decoded its chunk's payload (the `what` of
/// the chunk at `chunk`) to its last byte.
fn decoded_whole(cursor: &Cursor, chunk: u64, what: &str) -> Result<(), TraceError> {
    if cursor.at_end() {
        return Ok(());
    }
    Err(corrupted(
        chunk,
        Corrupt {
            pos: cursor.pos(),
            what: format!("bytes after the {what}'s last field"),
        },
    ))
}
