//! Reads binary traces as a stream of events.
//!
//! The file's end is read first: its trailer points at the END chunk, which
//! says where the symbol table is. The symbols are given first, then the
//! chunks are streamed in order; a block description is decoded once, and
//! each run of it is expanded into events.

use std::collections::VecDeque;
use std::io::{self, Read, Seek, SeekFrom};
use std::sync::Arc;

use super::format::{
    self, BlockError, CONTROL, ChunkKind, Control, Corrupt, HEADER_LEN, MAGIC, SpBases, Summary,
    TRAILER_LEN, VERSION,
};
use super::round_bytes::{LastRuns, RoundBytes};
use super::runs::{Def, decode_run};
use super::varint::Cursor;
use crate::trace::batch::RunHead;
use crate::trace::block::{BlockRun, Expander};
use crate::trace::{BlockItem, Event, Feed, Location, TraceError, TraceItem, TraceRead};

mod chunks;

use chunks::{SYMBOLS_LOST, read_exact_or};

/// A binary trace read as events.
pub struct BinaryReader<R> {
    input: R,
    len: u64,
    /// File offset of the next chunk.
    next: u64,
    /// File offset of the chunk being decoded.
    chunk_at: u64,
    meta: Vec<(String, String)>,
    summary: Option<Summary>,
    /// Where the END chunk and the symbol table (0 for none) are, as the
    /// trailer and the END chunk say.
    end_at: u64,
    symbols_at: u64,
    /// The symbol table's next chunk, while some are left to read.
    symbols_next: Option<u64>,
    /// The stream's block runs so far, to check against the summary at the
    /// end.
    runs_seen: u64,
    /// Why the stream ended early, when truncation is allowed.
    truncated: Option<String>,
    allow_truncated: bool,
    symbols_loaded: bool,
    done: bool,
    defs: Vec<Def>,
    /// Heap bytes the blocks described so far take, and past how many the
    /// host is asked again for room.
    described: usize,
    room_checked: usize,
    /// Last address of each access site in the current chunk.
    site_last: Vec<u64>,
    sp_bases: SpBases,
    payload: Vec<u8>,
    /// Decompresses every chunk, its context made once.
    decompressor: zstd::bulk::Decompressor<'static>,
    pos: usize,
    run: BlockRun,
    expander: Expander,
    queue: VecDeque<Event>,
    scratch: Vec<Event>,
    /// Rounds counted from the bytes of the round before, for the tests to
    /// tell that they were.
    #[cfg(test)]
    rounds_again: u64,
}

impl<R: Read + Seek> BinaryReader<R> {
    /// Opens a trace: checks the header, reads the metadata and, from the
    /// end of the file, the summary and symbol table. A trace without its
    /// end (a recording that did not finish) is an error unless
    /// `allow_truncated`, which then reads as much as can be read.
    pub fn new(mut input: R, allow_truncated: bool) -> Result<BinaryReader<R>, TraceError> {
        let len = input.seek(SeekFrom::End(0)).map_err(|err| {
            if err.kind() == io::ErrorKind::NotSeekable {
                syntax(
                    0,
                    "a binary trace is read from its end as well: give a file, not a pipe",
                )
            } else {
                io_error(0, err)
            }
        })?;
        let mut header = [0u8; HEADER_LEN];
        input
            .seek(SeekFrom::Start(0))
            .map_err(|err| io_error(0, err))?;
        read_exact_or(
            &mut input,
            &mut header,
            0,
            "the file is shorter than the trace header",
        )?;
        if &header[..8] != MAGIC {
            return Err(syntax(0, "not a linegrind binary trace (bad magic)"));
        }
        let version = u16::from_le_bytes([header[8], header[9]]);
        if version != VERSION {
            return Err(syntax(
                8,
                format!(
                    "unsupported binary trace version {version}; this linegrind reads version {VERSION}"
                ),
            ));
        }
        if header[10..12] != [0, 0] {
            return Err(syntax(10, "the header's reserved bytes are not 0"));
        }
        let mut reader = BinaryReader {
            input,
            len,
            next: HEADER_LEN as u64,
            chunk_at: HEADER_LEN as u64,
            meta: Vec::new(),
            summary: None,
            end_at: 0,
            symbols_at: 0,
            symbols_next: None,
            runs_seen: 0,
            #[cfg(test)]
            rounds_again: 0,
            truncated: None,
            allow_truncated,
            symbols_loaded: false,
            done: false,
            defs: Vec::new(),
            described: 0,
            room_checked: 0,
            site_last: Vec::new(),
            sp_bases: SpBases::default(),
            payload: Vec::new(),
            decompressor: zstd::bulk::Decompressor::new().map_err(|err| io_error(0, err))?,
            pos: 0,
            run: BlockRun::default(),
            expander: Expander::new(),
            queue: VecDeque::new(),
            scratch: Vec::new(),
        };
        reader.read_end()?;
        reader.read_meta()?;
        Ok(reader)
    }

    /// The metadata recorded with the trace.
    pub fn meta(&self) -> &[(String, String)] {
        &self.meta
    }

    /// The recorded totals; `None` for a trace without its end.
    pub fn summary(&self) -> Option<Summary> {
        self.summary
    }

    /// Why reading stopped before the end, when truncation was allowed.
    pub fn truncated(&self) -> Option<&str> {
        self.truncated.as_deref()
    }

    /// Moves to the next chunk of the stream; false at the end.
    fn next_chunk(&mut self) -> Result<bool, TraceError> {
        if let Some(at) = self.symbols_next {
            let resume = self.next;
            self.load_symbols(at)?;
            self.next = resume;
            return Ok(true);
        }
        loop {
            if self.next + TRAILER_LEN as u64 >= self.len && self.truncated.is_none() {
                return Ok(false);
            }
            let at = self.next;
            let (kind, payload) = match self.read_chunk_at(at) {
                Ok(chunk) => chunk,
                Err(err) if self.truncated.is_some() => {
                    self.truncated = Some(format!("reading stopped at {err}; {SYMBOLS_LOST}"));
                    return Ok(false);
                }
                Err(err) => return Err(err),
            };
            self.chunk_at = at;
            match kind {
                ChunkKind::Blocks if payload.is_empty() => {
                    return Err(syntax(at, "an empty BLOCKS chunk"));
                }
                ChunkKind::Blocks => self.add_blocks(&payload, at)?,
                ChunkKind::Events => {
                    let resume = CONTROL | format::control::RESUME << 2;
                    if Cursor::new(&payload).varint().ok() != Some(resume) {
                        return Err(syntax(
                            at,
                            "an EVENTS chunk that does not start with a resume record",
                        ));
                    }
                    self.payload = payload;
                    self.pos = 0;
                    self.site_last.fill(0);
                    self.sp_bases.reset();
                    return Ok(true);
                }
                // Read without its end, a trace may hold its symbol table,
                // whose place was to be given there.
                ChunkKind::Symbols
                    if self.summary.is_none()
                        || self.symbols_at != 0 && (self.symbols_at..self.end_at).contains(&at) => {
                }
                ChunkKind::Symbols => {
                    return Err(syntax(
                        at,
                        "a symbol table where the end record does not put one",
                    ));
                }
                ChunkKind::End => {
                    self.check_end(at)?;
                    return Ok(false);
                }
                ChunkKind::Meta => return Err(syntax(at, "a second metadata chunk")),
            }
        }
    }

    /// Fails as soon as the stream has held more block runs than the end
    /// record counts, rather than at the end, which a few kilobytes of
    /// long runs can take hours to reach.
    #[inline]
    fn check_runs(&self) -> Result<(), TraceError> {
        match self.summary {
            Some(summary) if self.runs_seen > summary.block_runs => Err(syntax(
                self.chunk_at,
                format!(
                    "the end record counts {} block runs, the trace's chunks hold more: \
                     chunks are repeated or the end record is wrong",
                    summary.block_runs
                ),
            )),
            _ => Ok(()),
        }
    }

    fn add_blocks(&mut self, payload: &[u8], at: u64) -> Result<(), TraceError> {
        let mut cursor = Cursor::new(payload);
        while !cursor.at_end() {
            let no_room = |defs: usize| {
                syntax(
                    at,
                    format!(
                        "the trace describes more code blocks than this host's memory holds \
                         (refused at block {defs})"
                    ),
                )
            };
            let block = match format::get_block(&mut cursor) {
                Ok(block) => block,
                Err(BlockError::Corrupt(err)) => return Err(corrupted(at, err)),
                Err(BlockError::NoRoom) => return Err(no_room(self.defs.len())),
            };
            let first_site = self.site_last.len();
            let def = Def::new(block, first_site).ok_or_else(|| no_room(self.defs.len()))?;
            if !self.room_for_block(&def) {
                return Err(no_room(self.defs.len()));
            }
            self.site_last.resize(first_site + def.sites.len(), 0);
            self.defs.push(def);
        }
        Ok(())
    }

    /// Whether the host gives the memory for one more block, `def`. A few
    /// kilobytes of compressed descriptions can stand for millions of
    /// blocks, or for blocks of thousands of instructions: when the table
    /// of blocks is full, the room for as many again is asked for, and
    /// whenever the descriptions have grown by half since the host was last
    /// asked, the room for as many again of theirs (tried, then given
    /// back), so that a host that runs out says so here rather than in some
    /// small allocation, which would abort.
    fn room_for_block(&mut self, def: &Def) -> bool {
        if self.defs.len() == self.defs.capacity() {
            let more = self.defs.len().max(1024);
            if self.defs.try_reserve(more).is_err() {
                return false;
            }
        }
        self.described = self.described.saturating_add(def.heap());
        if self.described > self.room_checked {
            if Vec::<u8>::new().try_reserve_exact(self.described).is_err() {
                return false;
            }
            self.room_checked = self.described.saturating_add(self.described / 2);
        }
        self.site_last.try_reserve(def.sites.len()).is_ok()
    }

    /// Decodes the next record of the current chunk: a control record goes
    /// to the queue; a block run is decoded into `self.run` and its block's
    /// number returned.
    fn decode_record(&mut self) -> Result<Option<usize>, TraceError> {
        let at = self.chunk_at;
        let mut cursor = Cursor::new(&self.payload[self.pos..]);
        let base = self.pos;
        let relocate = |mut err: Corrupt| {
            err.pos += base;
            corrupted(at, err)
        };
        let tag = cursor.varint().map_err(|e| relocate(e.into()))?;
        if tag & 3 == CONTROL {
            let control = format::get_control(&mut cursor, tag >> 2).map_err(relocate)?;
            self.pos = base + cursor.pos();
            match control {
                Control::Event(Event::Thread { tid }) => {
                    self.sp_bases.switch(tid);
                    self.expander.switch(tid);
                    self.queue.push_back(Event::Thread { tid });
                }
                Control::Event(Event::ThreadExit { tid }) => {
                    self.expander.exit(tid);
                    self.queue.push_back(Event::ThreadExit { tid });
                }
                Control::Event(Event::Module(_)) if self.symbols_loaded => {}
                Control::Event(Event::Signal { signo }) => {
                    self.expander.signal();
                    self.queue.push_back(Event::Signal { signo });
                }
                Control::Event(Event::Instr { addr, len }) => {
                    if let Some(target) = self.expander.enter_instr(addr) {
                        self.queue.push_back(Event::Call { target });
                    }
                    self.queue.push_back(Event::Instr { addr, len });
                }
                Control::Event(Event::SigReturn) => {
                    self.expander.sigreturn();
                    self.queue.push_back(Event::SigReturn);
                }
                Control::Event(Event::Restart) => {
                    self.expander.interrupt();
                    self.queue.push_back(Event::Restart);
                }
                Control::Event(event) => self.queue.push_back(event),
                Control::RecordingOff => {}
                Control::Resume { thread } => {
                    // A writer restates the running thread; another one is
                    // switched to, as by a `thread` record, so that a chunk
                    // runs in the thread it says whatever came before it.
                    if thread != self.expander.thread() {
                        self.queue.push_back(Event::Thread { tid: thread });
                    }
                    self.sp_bases.switch(thread);
                    self.expander.switch(thread);
                }
            }
            return Ok(None);
        }
        let id = (tag >> 2) as usize;
        let Some(def) = self.defs.get(id) else {
            return Err(relocate(Corrupt {
                pos: 0,
                what: format!("a run of block {id}, which is not described"),
            }));
        };
        let run = &mut self.run;
        run.clear();
        (run.sp, run.exit) = decode_run(
            &mut cursor,
            tag,
            def,
            &mut self.site_last,
            &mut self.sp_bases,
            &mut run.guards,
            &mut run.addrs,
        )
        .map_err(relocate)?;
        self.runs_seen += 1;
        self.pos = base + cursor.pos();
        Ok(Some(id))
    }

    /// Moves on until an event is queued or a block run decoded; `None` at
    /// the end of the trace.
    fn advance(&mut self) -> Result<Option<Option<usize>>, TraceError> {
        loop {
            if !self.queue.is_empty() {
                return Ok(Some(None));
            }
            if self.done {
                return Ok(None);
            }
            if self.pos < self.payload.len() {
                if let Some(id) = self.decode_record()? {
                    self.check_runs()?;
                    return Ok(Some(Some(id)));
                }
            } else if !self.next_chunk()? {
                self.done = true;
            }
        }
    }

    /// Decodes the block runs of the current chunk straight into `feed`
    /// until its batch is full, the chunk ends or a control record comes;
    /// true when it stopped at a control record, which is left for
    /// [`BinaryReader::decode_record`]. What [`BinaryReader::decode_record`]
    /// and [`TraceRead::next_item`] do for one run, without the run's own
    /// arrays.
    fn decode_runs(&mut self, feed: &mut Feed) -> Result<bool, TraceError> {
        let BinaryReader {
            payload,
            pos,
            defs,
            site_last,
            sp_bases,
            expander,
            chunk_at,
            runs_seen,
            #[cfg(test)]
            rounds_again,
            ..
        } = self;
        let (at, base) = (*chunk_at, *pos);
        feed.locate_next(Location::Offset(at));
        let relocate = |mut err: Corrupt| {
            err.pos += base;
            corrupted(at, err)
        };
        let mut cursor = Cursor::new(&payload[base..]);
        // The runs decoded last, and once a run completed a round of a cycle
        // of runs in the batch, that round, which the next bytes may give
        // again (see `round_bytes`).
        let mut last = LastRuns::new();
        let mut round: Option<RoundBytes> = None;
        while !feed.batch.is_full() && !cursor.at_end() {
            if let Some(again) = &round {
                let rounds = again.count_again(&mut cursor, feed, site_last);
                if rounds > 0 {
                    *runs_seen += again.runs() * rounds as u64;
                    #[cfg(test)]
                    {
                        *rounds_again += rounds as u64;
                    }
                    continue;
                }
                round = None;
            }
            let record = cursor.pos();
            let tag = cursor.varint().map_err(|e| relocate(e.into()))?;
            if tag & 3 == CONTROL {
                *pos = base + record;
                return Ok(true);
            }
            let id = (tag >> 2) as usize;
            let Some(def) = defs.get(id) else {
                return Err(relocate(Corrupt {
                    pos: record,
                    what: format!("a run of block {id}, which is not described"),
                }));
            };
            feed.define(id as u32, || Arc::clone(&def.block));
            let start = feed.mark();
            let (guards, addrs) = feed.run_arrays();
            let first_addr = addrs.len();
            let (sp, exit) = decode_run(&mut cursor, tag, def, site_last, sp_bases, guards, addrs)
                .map_err(relocate)?;
            last.push(record, id, addrs.len() - first_addr);
            *runs_seen += 1;
            let call = expander.enter(&def.block);
            let leaving = def.leaving(exit);
            expander.leave(leaving);
            let head = RunHead {
                id: id as u32,
                call,
                sp,
                exit,
                leaving,
            };
            if let Some(period) = feed.push_run(head, start) {
                round = RoundBytes::after(&cursor, &mut last, defs, period);
            }
        }
        *pos = base + cursor.pos();
        Ok(false)
    }
}

impl<R: Read + Seek> TraceRead for BinaryReader<R> {
    /// Block runs go straight from the chunk's encoding into the batch.
    fn fill(&mut self, feed: &mut Feed) -> Result<bool, TraceError> {
        loop {
            while !feed.batch.is_full() {
                let Some(event) = self.queue.pop_front() else {
                    break;
                };
                feed.push_event(event, self.location());
            }
            if feed.batch.is_full() {
                return Ok(true);
            }
            if self.done {
                return Ok(false);
            }
            if self.pos < self.payload.len() {
                let control = self.decode_runs(feed)?;
                self.check_runs()?;
                if control {
                    let run = self.decode_record()?;
                    debug_assert!(run.is_none(), "a control record");
                }
            } else if !self.next_chunk()? {
                self.done = true;
            }
        }
    }

    fn next_event(&mut self) -> Result<Option<Event>, TraceError> {
        loop {
            match self.advance()? {
                None => return Ok(None),
                Some(None) => return Ok(self.queue.pop_front()),
                Some(Some(id)) => {
                    self.scratch.clear();
                    let def = &self.defs[id].block;
                    self.expander
                        .expand(def, &self.run, &mut self.scratch)
                        .map_err(|err| syntax(self.chunk_at, err.0))?;
                    self.queue.extend(self.scratch.drain(..));
                }
            }
        }
    }

    fn next_item(&mut self) -> Result<Option<TraceItem<'_>>, TraceError> {
        match self.advance()? {
            None => Ok(None),
            Some(None) => Ok(self.queue.pop_front().map(TraceItem::Event)),
            Some(Some(id)) => {
                let def = &self.defs[id];
                let call = self.expander.enter(&def.block);
                let leaving = def.leaving(self.run.exit);
                self.expander.leave(leaving);
                Ok(Some(TraceItem::Block(BlockItem {
                    id: id as u32,
                    def: &def.block,
                    run: self.run.view(),
                    call,
                    leaving,
                })))
            }
        }
    }

    fn location(&self) -> Location {
        Location::Offset(self.chunk_at)
    }
}

/// Whether `data`, a file's first bytes, starts like a binary trace: with
/// its magic, or, for a file cut short within the magic, with a part of it
/// (so that the reader says the file is too short; no other format starts
/// with the magic's capital `L`).
pub fn is_binary(data: &[u8]) -> bool {
    data.starts_with(MAGIC) || (!data.is_empty() && MAGIC.starts_with(data))
}

fn syntax(at: u64, message: impl Into<String>) -> TraceError {
    TraceError::syntax(Location::Offset(at), message)
}

fn io_error(at: u64, err: io::Error) -> TraceError {
    TraceError::io(Location::Offset(at), err)
}

fn corrupted(chunk: u64, err: Corrupt) -> TraceError {
    syntax(
        chunk,
        format!(
            "corrupt chunk: {} (at byte {} of its data)",
            err.what, err.pos
        ),
    )
}

#[cfg(test)]
mod tests {
    use std::io::Cursor;

    use super::*;
    use crate::trace::binary::TraceWriter;
    use crate::trace::block::{BlockDef, BlockRun, JumpKind};

    /// A trace of `rounds` runs of a block of one read, at the addresses
    /// `addr` gives for each round.
    fn loop_trace(rounds: u64, addr: impl Fn(u64) -> u64) -> Vec<u8> {
        let mut writer = TraceWriter::new(Vec::new(), false, &[]).unwrap();
        let block = writer.define_block(&BlockDef::one_read(0x1000, JumpKind::Boring));
        for round in 0..rounds {
            let run = BlockRun {
                sp: Some(0x7000),
                exit: None,
                guards: Vec::new(),
                addrs: vec![addr(round)],
            };
            writer.block_run(block, &run).unwrap();
        }
        writer.finish(&[], Some(0)).unwrap()
    }

    /// How many rounds reading `trace` counted from the bytes of the round
    /// before, and how many block runs it read.
    fn rounds_again(trace: Vec<u8>) -> (u64, u64) {
        let mut reader = BinaryReader::new(Cursor::new(trace), false).unwrap();
        let mut feed = Feed::default();
        while reader.fill(&mut feed).unwrap() {
            feed.batch.clear();
        }
        (reader.rounds_again, reader.runs_seen)
    }

    /// Rounds that stride through memory are encoded alike and counted
    /// from the bytes of the round before, all but the first few; rounds
    /// whose addresses move by varying amounts are each decoded.
    #[test]
    fn striding_rounds_are_counted_from_the_bytes_before_them() {
        let (again, runs) = rounds_again(loop_trace(1000, |round| 0x10_0000 + 64 * round));
        assert_eq!(runs, 1000);
        assert!(again > 900, "{again} rounds counted again");
        let scattered = |round: u64| 0x10_0000 + 64 * (round * round % 1009);
        assert_eq!(rounds_again(loop_trace(1000, scattered)), (0, 1000));
    }
}
