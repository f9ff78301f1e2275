//! Between formats: events written as text, and events grouped into blocks
//! for the binary format.

use std::fmt::Write as _;
use std::io::{self, Write};

use rustc_hash::FxHashMap;

use super::binary::{
    Control, MAX_BLOCK_ACCESSES, MAX_BLOCK_INSTRS, MAX_INSTR_ACCESSES, TraceWriter,
};
use super::block::{BlockDef, BlockInstr, BlockRun, Item, JumpKind};
use super::{Access, Event, MarkEdge};

/// Writes events as a text trace, version 1, that reads back as the same
/// events.
pub struct TextWriter<W: Write> {
    out: W,
}

impl<W: Write> TextWriter<W> {
    /// Writes the header.
    pub fn new(mut out: W) -> io::Result<TextWriter<W>> {
        writeln!(out, "linegrind-trace text 1")?;
        Ok(TextWriter { out })
    }

    /// Writes one event as one line.
    pub fn event(&mut self, event: &Event) -> io::Result<()> {
        let out = &mut self.out;
        match event {
            Event::Instr { addr, len } => writeln!(out, "i {addr:x} {len}"),
            Event::Data { access, addr, size } => {
                let kind = match access {
                    Access::Read => 'r',
                    Access::Write => 'w',
                    Access::Modify => 'm',
                };
                writeln!(out, "{kind} {addr:x} {size}")
            }
            Event::Call { target } => writeln!(out, "call {target:x}"),
            Event::Return => writeln!(out, "ret"),
            Event::StackPointer { sp } => writeln!(out, "sp {sp:x}"),
            Event::Thread { tid } => writeln!(out, "thread {tid}"),
            Event::ThreadExit { tid } => writeln!(out, "thread-exit {tid}"),
            Event::Signal { signo } => writeln!(out, "signal {signo}"),
            Event::SigReturn => writeln!(out, "sigreturn"),
            Event::Mark { edge, name } => {
                let edge = match edge {
                    MarkEdge::Begin => "begin",
                    MarkEdge::End => "end",
                };
                writeln!(out, "mark {edge} {}", escape(name))
            }
            Event::Alloc { addr, size } => writeln!(out, "alloc {addr:x} {size}"),
            Event::Free { addr } => writeln!(out, "free {addr:x}"),
            Event::Flush => writeln!(out, "flush"),
            Event::Restart => writeln!(out, "restart"),
            Event::Function(f) => {
                write!(out, "fn {:x} {:x} {}", f.start, f.end, escape(&f.name))?;
                if let Some(file) = &f.file {
                    write!(out, " {} {}", escape(file), f.line)?;
                }
                writeln!(out)
            }
            Event::Line(l) => match &l.file {
                Some(file) => writeln!(out, "line {:x} {} {}", l.addr, l.line, escape(file)),
                None => writeln!(out, "line {:x} {}", l.addr, l.line),
            },
            Event::Plt { start, end } => writeln!(out, "plt {start:x} {end:x}"),
            Event::Module(m) => {
                write!(out, "object {} bias={:x}", escape(&m.path), m.bias)?;
                if let Some((start, end)) = m.range {
                    write!(out, " start={start:x} end={end:x}")?;
                }
                if let Some(id) = &m.build_id {
                    write!(out, " build-id={}", crate::symbols::hex(id))?;
                }
                if m.embedded {
                    write!(out, " symbols=embedded")?;
                }
                writeln!(out)
            }
        }
    }

    /// Flushes and returns the output.
    pub fn finish(mut self) -> io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}

/// `text` with `#`, `%`, whitespace and control characters written as
/// `%XX`, byte by byte (`%C2%A0`), so that a tool that splits lines on any
/// whitespace finds the same tokens as linegrind.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c == '#' || c == '%' || c.is_whitespace() || c.is_control() {
            let mut bytes = [0; 4];
            for byte in c.encode_utf8(&mut bytes).bytes() {
                // Writing into a String cannot fail.
                let _ = write!(out, "%{byte:02X}");
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Groups a stream of events into blocks for the binary format: runs of
/// sequential instructions with their data accesses. A block ends at a
/// jump, a call or return, a stack pointer, or any other event. Calls and
/// returns are written as records of their own, with their targets, so
/// that every event comes back exactly.
pub struct Blocker<W: Write> {
    writer: TraceWriter<W>,
    shapes: FxHashMap<BlockDef, u32>,
    def: BlockDef,
    run: BlockRun,
    /// The instructions of the open block may still take data accesses.
    open: bool,
}

impl<W: Write> Blocker<W> {
    pub fn new(writer: TraceWriter<W>) -> Blocker<W> {
        Blocker {
            writer,
            shapes: FxHashMap::default(),
            def: BlockDef::default(),
            run: BlockRun::default(),
            open: false,
        }
    }

    /// Adds one event.
    pub fn event(&mut self, event: Event) -> io::Result<()> {
        match event {
            Event::Instr { addr, len } => {
                let sequential = self
                    .def
                    .instrs
                    .last()
                    .is_some_and(|last| last.addr.wrapping_add(u64::from(last.len)) == addr);
                let full = self.def.instrs.len() == MAX_BLOCK_INSTRS;
                if !self.def.instrs.is_empty() && !sequential || full || len > u32::from(u8::MAX) {
                    self.flush()?;
                }
                if len > u32::from(u8::MAX) {
                    // Too long for a block description: a record of its own.
                    return self.writer.control(&Control::Event(event));
                }
                let at = self.def.items.len();
                self.def.instrs.push(BlockInstr {
                    addr,
                    len: len as u8,
                    items: at..at,
                });
                self.open = true;
            }
            Event::Data { access, addr, size } if self.takes_access(size) => {
                self.def.items.push(Item::Access {
                    access,
                    size: size as u16,
                    guarded: false,
                });
                if let Some(last) = self.def.instrs.last_mut() {
                    last.items.end = self.def.items.len();
                }
                self.run.addrs.push(addr);
            }
            Event::StackPointer { sp } => {
                self.flush()?;
                self.run.sp = Some(sp);
            }
            other => {
                self.flush()?;
                self.writer.control(&Control::Event(other))?;
            }
        }
        Ok(())
    }

    /// Whether an access of `size` bytes goes into the open block's last
    /// instruction, rather than into a record of its own: a description
    /// holds sizes of up to 16 bits and a bounded number of accesses, per
    /// instruction and per block.
    fn takes_access(&self, size: u32) -> bool {
        let taken = |last: &BlockInstr| last.items.len() < MAX_INSTR_ACCESSES;
        self.open
            && size <= u32::from(u16::MAX)
            && self.def.items.len() < MAX_BLOCK_ACCESSES
            && self.def.instrs.last().is_some_and(taken)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.open = false;
        if self.def.instrs.is_empty() {
            if let Some(sp) = self.run.sp.take() {
                self.writer
                    .control(&Control::Event(Event::StackPointer { sp }))?;
            }
            return Ok(());
        }
        self.def.end = JumpKind::Boring;
        let id = match self.shapes.get(&self.def) {
            Some(&id) => id,
            None => {
                let id = self.writer.define_block(&self.def);
                self.shapes.insert(self.def.clone(), id);
                id
            }
        };
        self.writer.block_run(id, &self.run)?;
        self.def.instrs.clear();
        self.def.items.clear();
        self.run.clear();
        Ok(())
    }

    /// Ends the trace and returns the writer.
    pub fn finish(mut self) -> io::Result<TraceWriter<W>> {
        self.flush()?;
        Ok(self.writer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::TextReader;
    use crate::trace::TraceRead;
    use crate::trace::binary::BinaryReader;

    /// Names keep their whitespace and control characters as escapes, so
    /// that a line splits on any whitespace into the tokens linegrind reads,
    /// and read back as they were.
    #[test]
    fn names_are_written_with_whitespace_and_control_characters_escaped() {
        let name = "f\u{b}g\u{c}h\u{7f}i\u{85}j\u{a0}k\u{2028}l m\tn#o%p\u{e9}";
        let escaped = escape(name);
        assert_eq!(
            escaped,
            "f%0Bg%0Ch%7Fi%C2%85j%C2%A0k%E2%80%A8l%20m%09n%23o%25p\u{e9}"
        );
        let text = format!("linegrind-trace text 1\nmark begin {escaped}\n");
        assert_eq!(text.lines().nth(1).unwrap().split_whitespace().count(), 3);
        let read = TextReader::new(text.as_bytes()).next_event().unwrap();
        let Some(Event::Mark { name: read, .. }) = read else {
            panic!("{read:?}");
        };
        assert_eq!(read, name);
    }

    /// Straight-line instructions of 65,536 accesses each, more than a
    /// block takes in all: the block closes at its bound, the accesses
    /// past it go as records of their own, and every event reads back.
    #[test]
    fn a_block_closes_at_its_bound_of_accesses() {
        let mut events = Vec::new();
        for k in 0..17u64 {
            events.push(Event::Instr {
                addr: 0x1000 + 4 * k,
                len: 4,
            });
            events.extend((0..MAX_INSTR_ACCESSES as u64).map(|i| Event::Data {
                access: Access::Read,
                addr: 0x100_0000 + 8 * i,
                size: 8,
            }));
        }
        let mut blocker = Blocker::new(TraceWriter::new(Vec::new(), true, &[]).unwrap());
        let mut largest = 0;
        for event in &events {
            blocker.event(event.clone()).unwrap();
            largest = largest.max(blocker.def.items.len());
        }
        assert_eq!(largest, MAX_BLOCK_ACCESSES);
        let binary = blocker.finish().unwrap().finish(&[], None).unwrap();
        let mut reader = BinaryReader::new(io::Cursor::new(binary), false).unwrap();
        let mut read = Vec::new();
        while let Some(event) = reader.next_event().unwrap() {
            read.push(event);
        }
        assert!(read == events, "the events read back differ");
    }
}
