//! The binary trace format's framing and shared encodings (see
//! `docs/binary-format.md`): the file header, chunks with checksums, block
//! descriptions and control records.

use rustc_hash::FxHashMap;

use super::varint::{self, Cursor, Malformed};
use crate::trace::block::{BlockDef, BlockInstr, Item, JumpKind};
use crate::trace::valid::within;
use crate::trace::{Access, Event, FunctionSymbol, LineSymbol, MarkEdge, ModuleMapping};

/// The first bytes of every binary trace.
pub const MAGIC: &[u8; 8] = b"LGTRACE\0";
/// The format version this linegrind writes and reads.
pub const VERSION: u16 = 1;
/// Magic, version, reserved.
pub const HEADER_LEN: usize = 12;
/// Kind, flags, reserved, stored length, raw length, CRC-32.
pub const CHUNK_HEADER_LEN: usize = 16;
/// The file ends with the offset of its END chunk.
pub const TRAILER_LEN: usize = 8;
/// Chunk flag: the payload is zstd-compressed.
pub const FLAG_ZSTD: u8 = 1;
/// Largest payload accepted, compressed or not, so that a corrupt length
/// cannot ask for an absurd allocation.
pub const MAX_CHUNK: u32 = 64 << 20;
/// Most instructions in one block description.
pub const MAX_BLOCK_INSTRS: usize = 1 << 16;
/// Most accesses of one instruction of a block description.
pub const MAX_INSTR_ACCESSES: usize = 1 << 16;
/// Most accesses of one block description: its description (a few bytes
/// each) and a run's addresses (at most ten bytes each) stay far below a
/// chunk's 64 MiB, and a run's addresses in a batch at 8 MiB.
pub const MAX_BLOCK_ACCESSES: usize = 1 << 20;

/// What a chunk holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChunkKind {
    /// Key/value metadata: the command line and who recorded it.
    Meta = 1,
    /// Block descriptions, numbered on from the previous chunk's.
    Blocks = 3,
    /// The dynamic stream: block runs and control records.
    Events = 4,
    /// The symbol table carried by the trace: control records for modules,
    /// functions, lines and PLT ranges.
    Symbols = 5,
    /// Totals and where the symbols are; marks a complete file.
    End = 6,
}

impl ChunkKind {
    pub fn from_code(code: u8) -> Option<ChunkKind> {
        Some(match code {
            1 => ChunkKind::Meta,
            3 => ChunkKind::Blocks,
            4 => ChunkKind::Events,
            5 => ChunkKind::Symbols,
            6 => ChunkKind::End,
            _ => return None,
        })
    }
}

/// What the END chunk says of the stream before it: its totals, and the
/// recorded program's exit code (`None`: unknown, as when a signal killed
/// it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    pub block_runs: u64,
    pub instructions: u64,
    pub accesses: u64,
    /// The recorded program's exit code: an exit status's 8 bits.
    pub exit_code: Option<u8>,
}

impl Summary {
    /// Appends the END chunk's payload: where the symbol table starts
    /// (`symbols_at`, 0 for none), then this summary.
    pub fn put_end(&self, symbols_at: u64, out: &mut Vec<u8>) {
        varint::put(out, symbols_at);
        varint::put(out, self.block_runs);
        varint::put(out, self.instructions);
        varint::put(out, self.accesses);
        let code = self.exit_code.map_or(0, |code| u64::from(code) + 1);
        varint::put(out, code);
    }

    /// Reads an END chunk's payload: where the symbol table starts, and
    /// the summary.
    pub fn get_end(cursor: &mut Cursor) -> Result<(u64, Summary), Corrupt> {
        let symbols_at = cursor.varint()?;
        let mut summary = Summary {
            block_runs: cursor.varint()?,
            instructions: cursor.varint()?,
            accesses: cursor.varint()?,
            exit_code: None,
        };
        let at = cursor.pos();
        let code = cursor.varint()?;
        summary.exit_code = match code.checked_sub(1).map(u8::try_from) {
            None => None,
            Some(Ok(code)) => Some(code),
            Some(Err(_)) => {
                return Err(Corrupt {
                    pos: at,
                    what: format!(
                        "the end record's exit code {} is past 255, the largest an exit \
                         status holds",
                        code - 1
                    ),
                });
            }
        };
        Ok((symbols_at, summary))
    }
}

/// The header of one chunk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChunkHeader {
    pub kind: u8,
    pub flags: u8,
    pub stored_len: u32,
    pub raw_len: u32,
    pub crc: u32,
}

impl ChunkHeader {
    pub fn encode(&self) -> [u8; CHUNK_HEADER_LEN] {
        let mut out = [0u8; CHUNK_HEADER_LEN];
        out[0] = self.kind;
        out[1] = self.flags;
        out[4..8].copy_from_slice(&self.stored_len.to_le_bytes());
        out[8..12].copy_from_slice(&self.raw_len.to_le_bytes());
        out[12..16].copy_from_slice(&self.crc.to_le_bytes());
        out
    }

    pub fn decode(bytes: &[u8; CHUNK_HEADER_LEN]) -> ChunkHeader {
        let word = |at: usize| {
            u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]])
        };
        ChunkHeader {
            kind: bytes[0],
            flags: bytes[1],
            stored_len: word(4),
            raw_len: word(8),
            crc: word(12),
        }
    }
}

/// Record tags of the dynamic stream: the low two bits of a record's first
/// varint. A block run's id is the rest; a control record's subtype too.
pub const RUN_NO_SP: u64 = 0;
pub const RUN_SP_DELTA: u64 = 1;
pub const CONTROL: u64 = 2;
pub const RUN_SP_SAME: u64 = 3;

/// The base of each thread's stack-pointer deltas: its previous stack
/// pointer in the chunk, 0 at the chunk's start. The running thread's is at
/// hand; the others wait in a map until they run again.
#[derive(Default)]
pub struct SpBases {
    thread: u32,
    current: u64,
    others: FxHashMap<u32, u64>,
}

impl SpBases {
    /// Every base 0, in the running thread.
    pub fn reset(&mut self) {
        self.current = 0;
        self.others.clear();
    }

    /// Thread `tid` runs next.
    pub fn switch(&mut self, tid: u32) {
        if tid != self.thread {
            self.others.insert(self.thread, self.current);
            self.current = self.others.remove(&tid).unwrap_or(0);
            self.thread = tid;
        }
    }

    /// The running thread's base.
    #[inline]
    pub fn get(&self) -> u64 {
        self.current
    }

    /// Sets the running thread's base.
    #[inline]
    pub fn set(&mut self, sp: u64) {
        self.current = sp;
    }
}

/// Control record subtypes.
pub(super) mod control {
    pub const THREAD: u64 = 0;
    pub const SIGNAL: u64 = 1;
    pub const SIGRETURN: u64 = 2;
    pub const MARK_BEGIN: u64 = 3;
    pub const MARK_END: u64 = 4;
    pub const ALLOC: u64 = 5;
    pub const FREE: u64 = 6;
    pub const RECORDING: u64 = 7;
    pub const CALL: u64 = 8;
    pub const RETURN: u64 = 9;
    pub const MODULE: u64 = 10;
    pub const FUNCTION: u64 = 11;
    pub const LINE: u64 = 12;
    pub const PLT: u64 = 13;
    pub const STACK_POINTER: u64 = 14;
    pub const INSTR: u64 = 15;
    pub const DATA: u64 = 16;
    pub const RESUME: u64 = 17;
    pub const FLUSH: u64 = 18;
    pub const THREAD_EXIT: u64 = 19;
}

/// A record of the dynamic stream that is not a block run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Control {
    /// An event with its own record.
    Event(Event),
    /// Recording was switched off (a client request): the instructions and
    /// accesses until the next [`Event::Restart`] are not in the trace
    /// (signals, thread switches and ends, and marks are).
    RecordingOff,
    /// A chunk of the stream starts in this thread (not an event: it only
    /// lets the chunk decode on its own).
    Resume { thread: u32 },
}

/// Appends control record `control`.
pub fn put_control(out: &mut Vec<u8>, control: &Control) {
    let tag = |out: &mut Vec<u8>, subtype: u64| varint::put(out, subtype << 2 | CONTROL);
    let text = |out: &mut Vec<u8>, text: &str| varint::put_bytes(out, text.as_bytes());
    let optional = |out: &mut Vec<u8>, value: &Option<String>| match value {
        Some(value) => {
            out.push(1);
            varint::put_bytes(out, value.as_bytes());
        }
        None => out.push(0),
    };
    let event = match control {
        Control::RecordingOff => {
            tag(out, control::RECORDING);
            out.push(0);
            return;
        }
        Control::Resume { thread } => {
            tag(out, control::RESUME);
            varint::put(out, u64::from(*thread));
            return;
        }
        Control::Event(event) => event,
    };
    match event {
        Event::Thread { tid } => {
            tag(out, control::THREAD);
            varint::put(out, u64::from(*tid));
        }
        Event::Signal { signo } => {
            tag(out, control::SIGNAL);
            varint::put(out, u64::from(*signo));
        }
        Event::SigReturn => tag(out, control::SIGRETURN),
        Event::ThreadExit { tid } => {
            tag(out, control::THREAD_EXIT);
            varint::put(out, u64::from(*tid));
        }
        Event::Mark { edge, name } => {
            let subtype = match edge {
                MarkEdge::Begin => control::MARK_BEGIN,
                MarkEdge::End => control::MARK_END,
            };
            tag(out, subtype);
            text(out, name);
        }
        Event::Alloc { addr, size } => {
            tag(out, control::ALLOC);
            varint::put(out, *addr);
            varint::put(out, *size);
        }
        Event::Free { addr } => {
            tag(out, control::FREE);
            varint::put(out, *addr);
        }
        Event::Call { target } => {
            tag(out, control::CALL);
            varint::put(out, *target);
        }
        Event::Return => tag(out, control::RETURN),
        Event::Flush => tag(out, control::FLUSH),
        Event::Restart => {
            tag(out, control::RECORDING);
            out.push(1);
        }
        Event::StackPointer { sp } => {
            tag(out, control::STACK_POINTER);
            varint::put(out, *sp);
        }
        Event::Instr { addr, len } => {
            tag(out, control::INSTR);
            varint::put(out, *addr);
            varint::put(out, u64::from(*len));
        }
        Event::Data { access, addr, size } => {
            tag(out, control::DATA);
            out.push(access_code(*access));
            varint::put(out, *addr);
            varint::put(out, u64::from(*size));
        }
        Event::Module(module) => {
            tag(out, control::MODULE);
            text(out, &module.path);
            varint::put(out, module.bias);
            match module.range {
                Some((start, end)) => {
                    out.push(1);
                    varint::put(out, start);
                    varint::put(out, end);
                }
                None => out.push(0),
            }
            match &module.build_id {
                Some(id) => {
                    out.push(1);
                    varint::put_bytes(out, id);
                }
                None => out.push(0),
            }
            out.push(u8::from(module.embedded));
        }
        Event::Function(function) => {
            tag(out, control::FUNCTION);
            varint::put(out, function.start);
            varint::put(out, function.end);
            text(out, &function.name);
            optional(out, &function.file);
            varint::put(out, u64::from(function.line));
        }
        Event::Line(line) => {
            tag(out, control::LINE);
            varint::put(out, line.addr);
            varint::put(out, u64::from(line.line));
            optional(out, &line.file);
        }
        Event::Plt { start, end } => {
            tag(out, control::PLT);
            varint::put(out, *start);
            varint::put(out, *end);
        }
    }
}

/// Why a chunk's content cannot be decoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Corrupt {
    /// Position in the decoded payload.
    pub pos: usize,
    pub what: String,
}

impl From<Malformed> for Corrupt {
    fn from(err: Malformed) -> Corrupt {
        Corrupt {
            pos: err.pos,
            what: "a record runs past the end of its chunk, or holds a number over 64 bits".into(),
        }
    }
}

/// Why a block description was not read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BlockError {
    Corrupt(Corrupt),
    /// The host did not give the memory for its instructions and accesses
    /// (a block may hold 65,536 instructions and a million accesses).
    NoRoom,
}

impl From<Corrupt> for BlockError {
    fn from(err: Corrupt) -> BlockError {
        BlockError::Corrupt(err)
    }
}

impl From<Malformed> for BlockError {
    fn from(err: Malformed) -> BlockError {
        BlockError::Corrupt(err.into())
    }
}

fn corrupt(cursor: &Cursor, what: impl Into<String>) -> Corrupt {
    Corrupt {
        pos: cursor.pos(),
        what: what.into(),
    }
}

/// Reads a text: its bytes, which must be UTF-8 (`what` names it in the
/// error).
pub fn get_text(cursor: &mut Cursor, what: &str) -> Result<String, Corrupt> {
    let bytes = cursor.bytes()?;
    String::from_utf8(bytes.to_vec()).map_err(|_| corrupt(cursor, format!("{what} is not UTF-8")))
}

/// Reads the control record of `subtype` (its tag already read).
pub fn get_control(cursor: &mut Cursor, subtype: u64) -> Result<Control, Corrupt> {
    let text = |cursor: &mut Cursor| get_text(cursor, "a name");
    let flag = |cursor: &mut Cursor| -> Result<bool, Corrupt> {
        match cursor.byte()? {
            0 => Ok(false),
            1 => Ok(true),
            other => Err(corrupt(cursor, format!("flag byte {other}, not 0 or 1"))),
        }
    };
    let optional = |cursor: &mut Cursor| -> Result<Option<String>, Corrupt> {
        match flag(cursor)? {
            false => Ok(None),
            true => text(cursor).map(Some),
        }
    };
    let small = |cursor: &mut Cursor, what: &str| -> Result<u32, Corrupt> {
        let value = cursor.varint()?;
        u32::try_from(value).map_err(|_| corrupt(cursor, format!("{what} {value} is out of range")))
    };
    let event = match subtype {
        control::RECORDING => match flag(cursor)? {
            true => Event::Restart,
            false => return Ok(Control::RecordingOff),
        },
        control::RESUME => {
            return Ok(Control::Resume {
                thread: small(cursor, "thread id")?,
            });
        }
        control::THREAD => Event::Thread {
            tid: small(cursor, "thread id")?,
        },
        control::SIGNAL => Event::Signal {
            signo: small(cursor, "signal number")?,
        },
        control::SIGRETURN => Event::SigReturn,
        control::THREAD_EXIT => Event::ThreadExit {
            tid: small(cursor, "thread id")?,
        },
        control::MARK_BEGIN | control::MARK_END => Event::Mark {
            edge: if subtype == control::MARK_BEGIN {
                MarkEdge::Begin
            } else {
                MarkEdge::End
            },
            name: text(cursor)?,
        },
        control::ALLOC => Event::Alloc {
            addr: cursor.varint()?,
            size: cursor.varint()?,
        },
        control::FREE => Event::Free {
            addr: cursor.varint()?,
        },
        control::CALL => Event::Call {
            target: cursor.varint()?,
        },
        control::RETURN => Event::Return,
        control::FLUSH => Event::Flush,
        control::STACK_POINTER => Event::StackPointer {
            sp: cursor.varint()?,
        },
        control::INSTR => Event::Instr {
            addr: cursor.varint()?,
            len: small(cursor, "instruction length")?,
        },
        control::DATA => {
            let code = cursor.byte()?;
            let access = access_from(code)
                .filter(|_| code <= 3)
                .ok_or_else(|| corrupt(cursor, format!("access kind {code}")))?;
            Event::Data {
                access,
                addr: cursor.varint()?,
                size: small(cursor, "access size")?,
            }
        }
        control::MODULE => {
            let path = text(cursor)?;
            let bias = cursor.varint()?;
            let range = match flag(cursor)? {
                false => None,
                true => Some((cursor.varint()?, cursor.varint()?)),
            };
            // An empty build-id (an ELF note of none) is none, as the text
            // format can write.
            let build_id = match flag(cursor)? {
                false => None,
                true => Some(cursor.bytes()?.to_vec()).filter(|id| !id.is_empty()),
            };
            let embedded = flag(cursor)?;
            Event::Module(Box::new(ModuleMapping {
                path,
                bias,
                range,
                build_id,
                embedded,
            }))
        }
        control::FUNCTION => Event::Function(Box::new(FunctionSymbol {
            start: cursor.varint()?,
            end: cursor.varint()?,
            name: text(cursor)?,
            file: optional(cursor)?,
            line: small(cursor, "line number")?,
        })),
        control::LINE => Event::Line(Box::new(LineSymbol {
            addr: cursor.varint()?,
            line: small(cursor, "line number")?,
            file: optional(cursor)?,
        })),
        control::PLT => Event::Plt {
            start: cursor.varint()?,
            end: cursor.varint()?,
        },
        other => return Err(corrupt(cursor, format!("unknown record type {other}"))),
    };
    event.check().map_err(|why| corrupt(cursor, why))?;
    Ok(Control::Event(event))
}

pub fn access_code(access: Access) -> u8 {
    match access {
        Access::Read => 1,
        Access::Write => 2,
        Access::Modify => 3,
    }
}

pub fn access_from(code: u8) -> Option<Access> {
    match code & 3 {
        1 => Some(Access::Read),
        2 => Some(Access::Write),
        3 => Some(Access::Modify),
        _ => None,
    }
}

/// Item byte: low two bits the access kind (0 for an exit), bit 2 guarded,
/// bits 4-5 an exit's jump kind.
const ITEM_GUARDED: u8 = 4;
/// Item byte bits of a side exit's jump kind: 4 and 5.
const ITEM_EXIT_KIND: u8 = 0b0011_0000;
/// Item byte bits that mean nothing: 3, 6 and 7.
const ITEM_RESERVED: u8 = 0b1100_1000;

/// Fails on an item byte with a bit that means nothing for its item: a
/// reserved bit, a guarded side exit, an access with a jump kind.
fn check_item(cursor: &Cursor, byte: u8) -> Result<(), Corrupt> {
    let exit = byte & 3 == 0;
    let meaningless = ITEM_RESERVED | if exit { ITEM_GUARDED } else { ITEM_EXIT_KIND };
    if byte & meaningless != 0 {
        return Err(corrupt(cursor, format!("item byte {byte:#04x}")));
    }
    Ok(())
}

/// The jump kind `code` stands for: 0 to 3.
fn jump_kind(cursor: &Cursor, code: u8) -> Result<JumpKind, Corrupt> {
    if code > 3 {
        return Err(corrupt(cursor, format!("jump kind {code}")));
    }
    Ok(JumpKind::from_code(code))
}

/// Appends the description of `def`.
pub fn put_block(out: &mut Vec<u8>, def: &BlockDef) {
    varint::put(out, def.instrs.len() as u64);
    varint::put(out, def.addr());
    out.push(def.end.code());
    let mut next = def.addr();
    for instr in &def.instrs {
        varint::put_delta(out, instr.addr, next);
        out.push(instr.len);
        next = instr.addr.wrapping_add(u64::from(instr.len));
        varint::put(out, instr.items.len() as u64);
        for item in &def.items[instr.items.clone()] {
            match *item {
                Item::Access {
                    access,
                    size,
                    guarded,
                } => {
                    out.push(access_code(access) | if guarded { ITEM_GUARDED } else { 0 });
                    varint::put(out, u64::from(size));
                }
                Item::Exit { kind } => out.push(kind.code() << 4),
            }
        }
    }
}

/// Reads one block description.
pub fn get_block(cursor: &mut Cursor) -> Result<BlockDef, BlockError> {
    let count = cursor.varint()?;
    if count == 0 || count > MAX_BLOCK_INSTRS as u64 {
        return Err(corrupt(cursor, format!("a block of {count} instructions")).into());
    }
    let mut next = cursor.varint()?;
    let end = cursor.byte()?;
    let end = jump_kind(cursor, end)?;
    // Reserved as it is read, so that a host that runs out refuses the
    // block instead of aborting.
    let mut def = BlockDef {
        instrs: Vec::new(),
        items: Vec::new(),
        end,
    };
    def.instrs
        .try_reserve_exact(count as usize)
        .map_err(|_| BlockError::NoRoom)?;
    let mut accesses = 0;
    for _ in 0..count {
        let addr = cursor.delta(next)?;
        let len = cursor.byte()?;
        if len == 0 {
            return Err(corrupt(cursor, "an instruction of 0 bytes").into());
        }
        within(addr, u64::from(len)).map_err(|why| corrupt(cursor, why))?;
        next = addr.wrapping_add(u64::from(len));
        let items = cursor.varint()?;
        if items > MAX_INSTR_ACCESSES as u64 {
            return Err(corrupt(cursor, format!("an instruction of {items} accesses")).into());
        }
        def.items
            .try_reserve(items as usize)
            .map_err(|_| BlockError::NoRoom)?;
        let first = def.items.len();
        for _ in 0..items {
            let byte = cursor.byte()?;
            check_item(cursor, byte)?;
            let item = match access_from(byte) {
                Some(access) => {
                    accesses += 1;
                    if accesses > MAX_BLOCK_ACCESSES {
                        return Err(corrupt(
                            cursor,
                            format!("a block of more than {MAX_BLOCK_ACCESSES} accesses"),
                        )
                        .into());
                    }
                    let size = cursor.varint()?;
                    let size = u16::try_from(size)
                        .ok()
                        .filter(|&size| size > 0)
                        .ok_or_else(|| corrupt(cursor, format!("an access of {size} bytes")))?;
                    Item::Access {
                        access,
                        size,
                        guarded: byte & ITEM_GUARDED != 0,
                    }
                }
                None => Item::Exit {
                    kind: JumpKind::from_code(byte >> 4),
                },
            };
            def.items.push(item);
        }
        def.instrs.push(BlockInstr {
            addr,
            len,
            items: first..def.items.len(),
        });
    }
    Ok(def)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(len: u8) -> BlockDef {
        BlockDef {
            instrs: vec![BlockInstr {
                addr: 0x1000,
                len,
                items: 0..0,
            }],
            items: Vec::new(),
            end: JumpKind::Boring,
        }
    }

    #[test]
    fn blocks_round_trip_and_instructions_have_bytes() {
        let mut bytes = Vec::new();
        put_block(&mut bytes, &block(3));
        assert_eq!(get_block(&mut Cursor::new(&bytes)).unwrap(), block(3));

        let mut bytes = Vec::new();
        put_block(&mut bytes, &block(0));
        let BlockError::Corrupt(err) = get_block(&mut Cursor::new(&bytes)).unwrap_err() else {
            panic!("not corrupt")
        };
        assert_eq!(err.what, "an instruction of 0 bytes");
        // Just past the length byte, as the other errors point.
        assert_eq!(err.pos, 6);
    }

    #[test]
    fn a_block_of_more_accesses_than_a_writer_makes_is_corruption() {
        let read = Item::Access {
            access: Access::Read,
            size: 8,
            guarded: false,
        };
        let per_instr = MAX_INSTR_ACCESSES;
        let instrs = MAX_BLOCK_ACCESSES / per_instr + 1;
        let big = BlockDef {
            instrs: (0..instrs)
                .map(|at| BlockInstr {
                    addr: 0x1000 + at as u64,
                    len: 1,
                    items: at * per_instr..(at + 1) * per_instr,
                })
                .collect(),
            items: vec![read; instrs * per_instr],
            end: JumpKind::Boring,
        };
        let mut bytes = Vec::new();
        put_block(&mut bytes, &big);
        let BlockError::Corrupt(err) = get_block(&mut Cursor::new(&bytes)).unwrap_err() else {
            panic!("not corrupt")
        };
        assert_eq!(err.what, "a block of more than 1048576 accesses");
    }

    /// An exit status's code, 0 to 255, or none; 256 no exit status holds.
    #[test]
    fn end_summaries_round_trip_with_every_exit_code() {
        for exit_code in [None, Some(0), Some(1), Some(255)] {
            let summary = Summary {
                block_runs: 7,
                instructions: 30,
                accesses: 12,
                exit_code,
            };
            let mut bytes = Vec::new();
            summary.put_end(99, &mut bytes);
            let read = Summary::get_end(&mut Cursor::new(&bytes)).unwrap();
            assert_eq!(read, (99, summary));
            if exit_code.is_none() {
                // The last field, 0, made 256 + 1 (a varint of two bytes).
                bytes.pop();
                bytes.extend([0x81, 0x02]);
                let err = Summary::get_end(&mut Cursor::new(&bytes)).unwrap_err();
                assert!(
                    err.what.contains("exit code 256 is past 255"),
                    "{}",
                    err.what
                );
            }
        }
    }

    #[test]
    fn an_empty_build_id_is_none() {
        let module = |build_id| {
            Control::Event(Event::Module(Box::new(ModuleMapping {
                path: "/app".to_string(),
                bias: 0,
                range: None,
                build_id,
                embedded: false,
            })))
        };
        let mut bytes = Vec::new();
        put_control(&mut bytes, &module(Some(Vec::new())));
        let mut cursor = Cursor::new(&bytes);
        let subtype = cursor.varint().unwrap() >> 2;
        assert_eq!(get_control(&mut cursor, subtype).unwrap(), module(None));
    }

    #[test]
    fn bits_that_mean_nothing_are_corruption() {
        let mut with_items = block(3);
        with_items.instrs[0].items = 0..2;
        with_items.items = vec![
            Item::Access {
                access: Access::Write,
                size: 8,
                guarded: true,
            },
            Item::Exit {
                kind: JumpKind::Call,
            },
        ];
        let mut bytes = Vec::new();
        put_block(&mut bytes, &with_items);
        assert_eq!(get_block(&mut Cursor::new(&bytes)).unwrap(), with_items);
        // The end kind, the access item and the exit item.
        let (end, access, exit) = (3, 7, 9);
        assert_eq!((bytes[end], bytes[access], bytes[exit]), (0, 0x06, 0x10));
        for (at, byte, what) in [
            (end, 9, "jump kind 9"),
            (access, 0x0e, "item byte 0x0e"),
            (access, 0x46, "item byte 0x46"),
            (access, 0x16, "item byte 0x16"),
            (exit, 0x14, "item byte 0x14"),
            (exit, 0x90, "item byte 0x90"),
        ] {
            let mut bad = bytes.clone();
            bad[at] = byte;
            let BlockError::Corrupt(err) = get_block(&mut Cursor::new(&bad)).unwrap_err() else {
                panic!("not corrupt")
            };
            assert_eq!(err.what, what);
        }
        let control = |bytes: &[u8], subtype| get_control(&mut Cursor::new(bytes), subtype);
        assert_eq!(
            control(&[1], control::RECORDING).unwrap(),
            Control::Event(Event::Restart)
        );
        assert_eq!(
            control(&[0], control::RECORDING).unwrap(),
            Control::RecordingOff
        );
        assert_eq!(
            control(&[2], control::RECORDING).unwrap_err().what,
            "flag byte 2, not 0 or 1"
        );
        assert_eq!(
            control(&[7, 0x10, 8], control::DATA).unwrap_err().what,
            "access kind 7"
        );
    }
}
