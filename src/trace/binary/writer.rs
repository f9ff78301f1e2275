//! Writes binary traces: block descriptions once, then block runs and
//! control records, in independently decodable, checksummed, optionally
//! zstd-compressed chunks.

use std::io::{self, Write};

use super::format::{
    self, CHUNK_HEADER_LEN, ChunkHeader, ChunkKind, Control, FLAG_ZSTD, HEADER_LEN, MAGIC,
    MAX_CHUNK, RUN_NO_SP, RUN_SP_DELTA, RUN_SP_SAME, SpBases, Summary, VERSION,
};
use super::varint;
use crate::trace::Event;
use crate::trace::block::{BlockDef, BlockRun, Item};

/// Raw bytes of dynamic stream per chunk; block descriptions and the
/// symbol table are cut into chunks of about as much.
const EVENTS_PER_CHUNK: usize = 1 << 20;

/// A binary trace being written.
pub struct TraceWriter<W: Write> {
    out: W,
    offset: u64,
    compress: bool,
    blocks: Vec<u8>,
    events: Vec<u8>,
    /// Per block id: its first access site, its shape counts.
    defs: Vec<DefInfo>,
    /// Last address of each access site in the current chunk (0 at its
    /// start).
    site_last: Vec<u64>,
    sp_bases: SpBases,
    thread: u32,
    /// The stream's totals so far (no exit code until the end).
    totals: Summary,
}

struct DefInfo {
    first_site: usize,
    accesses: usize,
    items: Vec<Item>,
    guarded: usize,
    instrs: u64,
    /// For each side exit, the instructions that ran when it is taken.
    exit_instrs: Vec<u64>,
}

impl<W: Write> TraceWriter<W> {
    /// Writes the file header and the metadata (`key`, `value` pairs).
    pub fn new(mut out: W, compress: bool, meta: &[(&str, String)]) -> io::Result<TraceWriter<W>> {
        let mut header = [0u8; HEADER_LEN];
        header[..8].copy_from_slice(MAGIC);
        header[8..10].copy_from_slice(&VERSION.to_le_bytes());
        out.write_all(&header)?;
        let mut writer = TraceWriter {
            out,
            offset: HEADER_LEN as u64,
            compress,
            blocks: Vec::new(),
            events: Vec::with_capacity(EVENTS_PER_CHUNK + 4096),
            defs: Vec::new(),
            site_last: Vec::new(),
            sp_bases: SpBases::default(),
            thread: 1,
            totals: Summary::default(),
        };
        let mut payload = Vec::new();
        varint::put(&mut payload, meta.len() as u64);
        for (key, value) in meta {
            varint::put_bytes(&mut payload, key.as_bytes());
            varint::put_bytes(&mut payload, value.as_bytes());
        }
        writer.chunk(ChunkKind::Meta, &payload)?;
        writer.start_events();
        Ok(writer)
    }

    /// Describes a new block; returns its id (ids count up from 0).
    pub fn define_block(&mut self, def: &BlockDef) -> u32 {
        format::put_block(&mut self.blocks, def);
        let first_site = self.site_last.len();
        let accesses = def.accesses();
        self.site_last.resize(first_site + accesses, 0);
        self.defs.push(DefInfo {
            first_site,
            accesses,
            items: def.items.clone(),
            guarded: def.guarded(),
            instrs: def.instrs.len() as u64,
            exit_instrs: def.exit_instrs(),
        });
        self.defs.len() as u32 - 1
    }

    /// Writes one run of block `id`, which must fit its description.
    pub fn block_run(&mut self, id: u32, run: &BlockRun) -> io::Result<()> {
        let Some(def) = self.defs.get(id as usize) else {
            return Err(invalid(format!("a run of undefined block {id}")));
        };
        let tag = match run.sp {
            None => RUN_NO_SP,
            Some(sp) if self.sp_bases.get() == sp => RUN_SP_SAME,
            Some(_) => RUN_SP_DELTA,
        };
        varint::put(&mut self.events, u64::from(id) << 2 | tag);
        if tag == RUN_SP_DELTA {
            let sp = run.sp.unwrap_or(0);
            varint::put_delta(&mut self.events, sp, self.sp_bases.get());
            self.sp_bases.set(sp);
        }
        if !def.exit_instrs.is_empty() {
            varint::put(
                &mut self.events,
                run.exit.map_or(0, |exit| u64::from(exit) + 1),
            );
        }
        for word in 0..def.guarded.div_ceil(64) {
            let bits = run.guards.iter().skip(word * 64).take(64).enumerate();
            let mask = bits.fold(0u64, |mask, (bit, &done)| mask | u64::from(done) << bit);
            varint::put(&mut self.events, mask);
        }
        let sites = &mut self.site_last[def.first_site..def.first_site + def.accesses];
        let (instrs, executed) = if def.guarded == 0 && run.exit.is_none() {
            // Every access happened: one address per site, in order.
            if run.addrs.len() != sites.len() {
                return Err(invalid(format!(
                    "block {id}: a run with {} addresses for {} accesses",
                    run.addrs.len(),
                    sites.len()
                )));
            }
            for (last, &addr) in sites.iter_mut().zip(&run.addrs) {
                varint::put_delta(&mut self.events, addr, *last);
                *last = addr;
            }
            (def.instrs, run.addrs.len() as u64)
        } else {
            partial_run(id, def, run, sites, &mut self.events)?
        };
        self.totals.block_runs += 1;
        self.totals.instructions += instrs;
        self.totals.accesses += executed;
        self.maybe_flush()
    }

    /// Writes a record that is not a block run.
    pub fn control(&mut self, control: &Control) -> io::Result<()> {
        match control {
            Control::Event(Event::Thread { tid }) => {
                self.thread = *tid;
                self.sp_bases.switch(*tid);
            }
            Control::Event(Event::Instr { .. }) => self.totals.instructions += 1,
            Control::Event(Event::Data { .. }) => self.totals.accesses += 1,
            _ => {}
        }
        format::put_control(&mut self.events, control);
        self.maybe_flush()
    }

    /// The stream's totals so far.
    pub fn totals(&self) -> Summary {
        self.totals
    }

    /// Ends the trace with the symbol table `symbols` (control records) and
    /// the END chunk, and returns the output.
    pub fn finish(mut self, symbols: &[Control], exit_code: Option<u8>) -> io::Result<W> {
        self.flush_events()?;
        // The symbol table in chunks of the stream's size, one after the
        // other up to the END chunk, which points at the first.
        let symbols_offset = if symbols.is_empty() { 0 } else { self.offset };
        let mut payload = Vec::new();
        for record in symbols {
            format::put_control(&mut payload, record);
            if payload.len() >= EVENTS_PER_CHUNK {
                self.chunk(ChunkKind::Symbols, &payload)?;
                payload.clear();
            }
        }
        if !payload.is_empty() {
            self.chunk(ChunkKind::Symbols, &payload)?;
        }
        let mut end = Vec::new();
        let summary = Summary {
            exit_code,
            ..self.totals
        };
        summary.put_end(symbols_offset, &mut end);
        let end_offset = self.offset;
        self.chunk(ChunkKind::End, &end)?;
        self.out.write_all(&end_offset.to_le_bytes())?;
        self.out.flush()?;
        Ok(self.out)
    }

    fn maybe_flush(&mut self) -> io::Result<()> {
        if self.events.len() >= EVENTS_PER_CHUNK || self.blocks.len() >= EVENTS_PER_CHUNK {
            self.flush_events()?;
            self.start_events();
        }
        Ok(())
    }

    /// Starts a chunk of the dynamic stream: delta bases reset, and the
    /// running thread is restated, so the chunk decodes on its own.
    fn start_events(&mut self) {
        self.site_last.fill(0);
        self.sp_bases.reset();
        // What the resume record below does to the reader's bases.
        self.sp_bases.switch(self.thread);
        let resume = Control::Resume {
            thread: self.thread,
        };
        format::put_control(&mut self.events, &resume);
    }

    fn flush_events(&mut self) -> io::Result<()> {
        if !self.blocks.is_empty() {
            let blocks = std::mem::take(&mut self.blocks);
            self.chunk(ChunkKind::Blocks, &blocks)?;
        }
        let events = std::mem::take(&mut self.events);
        self.chunk(ChunkKind::Events, &events)?;
        self.events = events;
        self.events.clear();
        Ok(())
    }

    fn chunk(&mut self, kind: ChunkKind, payload: &[u8]) -> io::Result<()> {
        let compressed = if self.compress && payload.len() > 64 {
            Some(zstd::bulk::compress(payload, 3)?)
        } else {
            None
        };
        // Stored as it is where compression does not make it smaller.
        let (stored, flags) = match &compressed {
            Some(smaller) if smaller.len() < payload.len() => (&smaller[..], FLAG_ZSTD),
            _ => (payload, 0),
        };
        // Only a record that large could make one: a name of 64 MiB, or a
        // block of millions of accesses, which neither `convert` nor the
        // recorder describes.
        let too_big = |len: usize| {
            u32::try_from(len)
                .ok()
                .filter(|&len| len <= MAX_CHUNK)
                .ok_or_else(|| {
                    invalid(format!(
                        "a chunk of {len} bytes, over the {} MiB a reader accepts",
                        MAX_CHUNK >> 20
                    ))
                })
        };
        let header = ChunkHeader {
            kind: kind as u8,
            flags,
            stored_len: too_big(stored.len())?,
            raw_len: too_big(payload.len())?,
            crc: crc32fast::hash(stored),
        };
        self.out.write_all(&header.encode())?;
        self.out.write_all(stored)?;
        self.offset += (CHUNK_HEADER_LEN + stored.len()) as u64;
        Ok(())
    }
}

/// Writes the addresses of a run of `def` that skipped guarded accesses or
/// left by a side exit; returns the instructions and accesses it ran.
fn partial_run(
    id: u32,
    def: &DefInfo,
    run: &BlockRun,
    sites: &mut [u64],
    out: &mut Vec<u8>,
) -> io::Result<(u64, u64)> {
    let mut addrs = run.addrs.iter();
    let mut guards = run.guards.iter();
    let (mut site, mut exits) = (0, 0u32);
    let mut executed = 0u64;
    for item in &def.items {
        match *item {
            Item::Access { guarded, .. } => {
                let this = site;
                site += 1;
                if guarded && !guards.next().copied().unwrap_or(false) {
                    continue;
                }
                let Some(&addr) = addrs.next() else {
                    return Err(invalid(format!("block {id}: a run with too few addresses")));
                };
                varint::put_delta(out, addr, sites[this]);
                sites[this] = addr;
                executed += 1;
            }
            Item::Exit { .. } => {
                if run.exit == Some(exits) {
                    break;
                }
                exits += 1;
            }
        }
    }
    if addrs.next().is_some() {
        return Err(invalid(format!(
            "block {id}: a run with too many addresses"
        )));
    }
    let instrs = match run.exit {
        Some(exit) => def.exit_instrs.get(exit as usize).copied().ok_or_else(|| {
            invalid(format!(
                "block {id}: a run leaving by exit {exit} of {}",
                def.exit_instrs.len()
            ))
        })?,
        None => def.instrs,
    };
    Ok((instrs, executed))
}

fn invalid(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, message)
}
