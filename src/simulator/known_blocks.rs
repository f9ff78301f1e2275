//! Blocks whose instructions are known, compiled once, and the walk of their
//! runs.
//!
//! Once a run went through all of a block's instructions, their ids are
//! kept, and the block becomes one flat list of steps to replay, with what
//! the I1 geometry says about its fetches: the I1 line (or two) and bytes
//! of each instruction that starts a line's fetches are worked out once, and an
//! instruction that continues the previous one in its line needs no lookup,
//! as that line is then resident and most recently used; a run of them adds
//! to the line's use in one step (see [`Hierarchy::fetch_again`]). What
//! arriving at the block's first instruction depends on is kept too (see
//! [`Arrival`]), so that a run reached by a plain jump looks nothing up;
//! and so is what the next run's arrival depends on (where the last
//! instruction, or a side exit's, ends; all the instructions lie in the
//! first one's function), so that a run ends without reading the
//! block's description or the program's tables, which a program of much
//! code has long evicted from the host's caches.
//!
//! Counts that every run reaching a step adds alike are not added per
//! step: the instruction counts (Ir) and the unguarded data accesses (Dr,
//! Dw). Each run counts once, at the side exit it took or else in the
//! block, and [`KnownBlocks::add_counts`] turns those counts into every
//! instruction's Ir, Dr and Dw at the end; guarded accesses count in the
//! self costs as they happen. A run charged to a call site (a skipped
//! function's) adds all its counts to that instruction at once instead.

use rustc_hash::FxHashMap;

use crate::attribution::backdate::Backdate;
use crate::cache::{ByteMask, Hierarchy, LineSpan, Slot};
use crate::cost::{Cost, EventKind};
use crate::program::{FnId, InstrId};
use crate::trace::Access;
use crate::trace::block::{BlockDef, Item, RunCursor, RunMismatch, RunRef};

use super::round_plan::RoundPlan;
use super::stepper::{Stepper, count_kind};

/// One step of a known block, in program order.
#[derive(Clone, Copy, Debug)]
enum KnownStep {
    /// Fetches instruction `id`, bytes `offset .. offset + len` of I1 line
    /// `line`.
    Fetch {
        id: InstrId,
        offset: u8,
        len: u8,
        line: u64,
    },
    /// Fetches instruction `id`, which starts at byte `offset` of I1 line
    /// `line` and takes the first `second` bytes of the next (lines of up
    /// to 256 bytes, as with use tracking: without it, the bytes are not
    /// looked at).
    FetchTwo {
        id: InstrId,
        offset: u8,
        second: u8,
        line: u64,
    },
    /// Fetches the `count` instructions up to `id`, each right after the
    /// previous one of the block in the same I1 line and within that line:
    /// the last ends at `line_end` in the line.
    FetchAgain {
        id: InstrId,
        count: u16,
        line_end: u16,
    },
    /// A data access of the last instruction fetched, which every run
    /// reaching it makes.
    Data { access: Access, size: u16 },
    /// A data access of the last instruction fetched that happens only when
    /// the run's guard for it says so.
    Guarded { access: Access, size: u16 },
    /// A side exit of the last instruction fetched, which ends at `end`.
    /// Always followed by its `Left`.
    Exit { end: u64 },
    /// Runs that left the block at the side exit just before and are not
    /// yet in the self costs: kept next to the exit, in memory the run has
    /// read already. Not a step: the walk passes over it.
    Left { runs: u64 },
}

impl KnownStep {
    /// The step of a block's data access or side exit, of an instruction
    /// that ends at `end`.
    fn of_item(item: &Item, end: u64) -> KnownStep {
        match *item {
            Item::Access {
                access,
                size,
                guarded: false,
            } => KnownStep::Data { access, size },
            Item::Access {
                access,
                size,
                guarded: true,
            } => KnownStep::Guarded { access, size },
            Item::Exit { .. } => KnownStep::Exit { end },
        }
    }

    /// The steps of an instruction's data accesses and side exits, `items`,
    /// the instruction ending at `end`: each exit followed by its count.
    fn of_items(items: &[Item], end: u64) -> impl Iterator<Item = KnownStep> + '_ {
        items.iter().flat_map(move |item| {
            let step = KnownStep::of_item(item, end);
            let left =
                matches!(step, KnownStep::Exit { .. }).then_some(KnownStep::Left { runs: 0 });
            std::iter::once(step).chain(left)
        })
    }
}

/// What decides whether a jump to a known block's first instruction enters
/// a function (see `entered_by_jump`): fixed once the instruction is known,
/// as its function is.
#[derive(Clone, Copy, Debug)]
pub(super) struct Arrival {
    /// Whether the first instruction is its function symbol's first byte.
    pub enters: bool,
    /// The first instruction's function: a jump from another one's code
    /// enters it as a call, or lands inside it (see `entered_by_jump`).
    pub func: FnId,
    /// Whether it is code without a symbol, whose instructions are those of
    /// the function of the frame that runs it (see [`Program::intern`]):
    /// [`KnownBlocks::frame`] tells the frame they were known in.
    ///
    /// [`Program::intern`]: crate::program::Program::intern
    pub framed: bool,
}

/// A known block: where its instruction ids and steps are in
/// [`KnownBlocks`], and its first instruction.
#[derive(Clone, Copy, Debug)]
pub(super) struct KnownBlock {
    start: u32,
    len: u32,
    steps_start: u32,
    steps_len: u32,
    /// Id, address and length of the first instruction.
    pub first: InstrId,
    pub addr: u64,
    pub first_len: u8,
    pub arrival: Arrival,
    /// Where the last instruction ends.
    end: u64,
    /// Every instruction's function (`arrival.func`), as the run's end
    /// hands it on; none for code without a symbol. Derivable, but the
    /// block without it made the batch loop compile differently: 3.4% more
    /// host instructions on `traces/sort.lgt` and 2.2% on
    /// `traces/mandelbrot.lgt`.
    pub func: Option<FnId>,
}

pub(super) struct KnownBlocks {
    /// The bits of an I1 line's offset.
    line_bits: u32,
    /// The longest fetch taken whole ([`longest_access`](crate::cache::longest_access)).
    longest: u32,
    /// By block number, once known.
    blocks: Vec<Option<KnownBlock>>,
    /// Blocks of code without a symbol known again for frames of other
    /// functions than in `blocks`, by block number and the function of the
    /// frame.
    other_frames: FxHashMap<(usize, FnId), KnownBlock>,
    /// The frame (its entry and function) the instructions of a block in
    /// `blocks` of code without a symbol were known in, by block number
    /// (as `blocks`).
    frames: Vec<Option<(u64, FnId)>>,
    /// The instruction ids of the known blocks, block after block.
    instrs: Vec<InstrId>,
    /// The steps of the known blocks, block after block.
    steps: Vec<KnownStep>,
}

/// Which runs the instructions a block is known with are for.
pub(super) enum KnownFor {
    /// Every run: code with symbols.
    Every,
    /// Code without a symbol, first known: runs in frames of function
    /// `.1`, as the one entered at `.0` it ran in.
    FirstFrame(u64, FnId),
    /// Code without a symbol known already: runs in frames of another
    /// function.
    OtherFrame(FnId),
}

/// Where a walk of a known run ended: the last instruction it ran (the
/// first, at least), and that instruction's end address.
pub(super) struct RunEnd {
    pub last: InstrId,
    pub last_end: u64,
}

impl KnownBlocks {
    /// No block known yet, with I1 lines of `line_bits` bits and accesses
    /// clamped to `longest` bytes.
    pub fn new(line_bits: u32, longest: u32) -> KnownBlocks {
        KnownBlocks {
            line_bits,
            longest,
            blocks: Vec::new(),
            other_frames: FxHashMap::default(),
            frames: Vec::new(),
            instrs: Vec::new(),
            steps: Vec::new(),
        }
    }

    /// Block `id`, if known.
    #[inline]
    pub fn get(&self, id: usize) -> Option<KnownBlock> {
        self.blocks.get(id).copied().flatten()
    }

    /// The frame, its entry and function, block `id` of code without a
    /// symbol was first known in.
    pub fn frame(&self, id: usize) -> Option<(u64, FnId)> {
        self.frames.get(id).copied().flatten()
    }

    /// Block `id` known for frames of `func`, other than the frames it was
    /// first known in.
    pub fn get_for_frame(&self, id: usize, func: FnId) -> Option<KnownBlock> {
        self.other_frames.get(&(id, func)).copied()
    }

    /// Makes block `id`, `def` with instructions `ids` whose first is
    /// reached as `arrival` says, all in its first instruction's function,
    /// known for the runs `known_for` says.
    pub fn learn(
        &mut self,
        id: usize,
        known_for: KnownFor,
        def: &BlockDef,
        ids: &[InstrId],
        arrival: Arrival,
    ) {
        let (line_bits, longest) = (self.line_bits, self.longest);
        debug_assert_eq!(def.instrs.len(), ids.len());
        let (Some(first), Some(last), Some(&first_id)) =
            (def.instrs.first(), def.instrs.last(), ids.first())
        else {
            return;
        };
        let start = self.instrs.len() as u32;
        let steps_start = self.steps.len() as u32;
        // The last line the previous instruction's fetch took, and its end.
        let mut previous = None;
        for (instr, &instr_id) in def.instrs.iter().zip(ids) {
            let fetched = u32::from(instr.len).min(longest);
            let span = LineSpan::new(instr.addr, fetched, line_bits);
            let end = instr.addr.wrapping_add(u64::from(instr.len));
            self.instrs.push(instr_id);
            // Lengths and offsets fit a byte with lines of up to 256 bytes,
            // as with use tracking; without it, they are not looked at.
            let step = if span.second > 0 {
                KnownStep::FetchTwo {
                    id: instr_id,
                    offset: span.offset as u8,
                    second: span.second as u8,
                    line: span.line,
                }
            } else if previous == Some((span.line, instr.addr)) {
                KnownStep::FetchAgain {
                    id: instr_id,
                    count: 1,
                    line_end: (span.offset + span.first) as u16,
                }
            } else {
                KnownStep::Fetch {
                    id: instr_id,
                    offset: span.offset as u8,
                    len: span.first as u8,
                    line: span.line,
                }
            };
            // A fetch that follows one with nothing between joins its run.
            match (self.steps[steps_start as usize..].last_mut(), step) {
                (
                    Some(KnownStep::FetchAgain {
                        id,
                        count,
                        line_end,
                    }),
                    KnownStep::FetchAgain {
                        line_end: next_end, ..
                    },
                ) if *count < u16::MAX => {
                    *id = instr_id;
                    *count += 1;
                    *line_end = next_end;
                }
                _ => self.steps.push(step),
            }
            let items = &def.items[instr.items.clone()];
            self.steps.extend(KnownStep::of_items(items, end));
            // The last line the fetch took is I1's last, which the next
            // instruction can continue where the fetch ended (never after
            // a clamped fetch, which ends before the instruction does).
            let last_line = span.line + u64::from(span.second > 0);
            previous = Some((last_line, instr.addr.wrapping_add(u64::from(fetched))));
        }
        let block = KnownBlock {
            start,
            len: ids.len() as u32,
            steps_start,
            steps_len: self.steps.len() as u32 - steps_start,
            first: first_id,
            addr: first.addr,
            first_len: first.len,
            arrival,
            // Past a clamped fetch's end.
            end: last.addr.wrapping_add(u64::from(last.len)),
            // Code without a symbol may lie in another region than its
            // function: the next arrival looks it up.
            func: (!arrival.framed).then_some(arrival.func),
        };
        // Runs that went through the whole block and are not yet in the
        // self costs, counted right after its steps.
        self.steps.push(KnownStep::Left { runs: 0 });
        if let KnownFor::OtherFrame(func) = known_for {
            self.other_frames.insert((id, func), block);
            return;
        }
        if self.blocks.len() <= id {
            self.blocks.resize(id + 1, None);
            self.frames.resize(id + 1, None);
        }
        self.blocks[id] = Some(block);
        if let KnownFor::FirstFrame(entry, func) = known_for {
            self.frames[id] = Some((entry, func));
        }
    }

    /// Steps through `run` of `block`, charging to
    /// `charge_to` where set and else to each instruction; `now` counts the
    /// instructions. Returns where the run ended; its instructions and data
    /// accesses are counted here in the context's cost, and in `charge_to`'s
    /// self cost or else where the run left the block (guarded accesses: in
    /// the self costs, as they happen).
    #[inline(always)]
    pub fn walk<B: Backdate, M: ByteMask>(
        &mut self,
        block: &KnownBlock,
        run: RunRef,
        mut stepper: Stepper<B, Hierarchy<B::Line, M>>,
        charge_to: Option<InstrId>,
        now: &mut u64,
    ) -> Result<RunEnd, RunMismatch> {
        let start = block.steps_start as usize;
        let steps = &self.steps[start..start + block.steps_len as usize];
        let mut cursor = RunCursor::new(run);
        let began = *now;
        // The instructions fetched so far: a step happens at the index of
        // its instruction, a fetch at `time` before it counts, a data
        // access at `time - 1` (steps begin with a fetch).
        let mut time = began;
        // Kept as the walk goes, though the instruction count says it at
        // the end: looked up there, it took 10% more host instructions on
        // `traces/sort.lgt`, as the walk compiled differently.
        let mut last = block.first;
        let mut charged = charge_to.unwrap_or(last);
        let (mut accesses, mut writes) = (0u64, 0u64);
        let mut rest = steps.iter();
        // The side exit taken, if any: where its count (`Left`) is, and
        // where its instruction ends.
        let exited = loop {
            let Some(step) = rest.next() else {
                break None;
            };
            match *step {
                KnownStep::Fetch {
                    id,
                    offset,
                    len,
                    line,
                } => {
                    last = id;
                    charged = charge_to.unwrap_or(id);
                    stepper.fetch_line(charged, line, u32::from(offset), u32::from(len), time);
                    time += 1;
                }
                KnownStep::FetchAgain {
                    id,
                    count,
                    line_end,
                } => {
                    last = id;
                    charged = charge_to.unwrap_or(id);
                    stepper.fetch_again(line_end, count);
                    time += u64::from(count);
                }
                KnownStep::Data { access, size } => {
                    let Some(addr) = cursor.address() else {
                        return Err(RunMismatch::too_few_addresses(block.addr));
                    };
                    stepper.access(charged, access, addr, u32::from(size), time - 1);
                    accesses += 1;
                    writes += u64::from(access != Access::Read);
                }
                // Apart from `Data`, so that unguarded accesses, the most
                // common step, test no guard: one arm for both took 7% more
                // host instructions on `traces/sort.lgt`.
                KnownStep::Guarded { access, size } => {
                    if !cursor.guard() {
                        continue;
                    }
                    let Some(addr) = cursor.address() else {
                        return Err(RunMismatch::too_few_addresses(block.addr));
                    };
                    stepper.access(charged, access, addr, u32::from(size), time - 1);
                    accesses += 1;
                    writes += u64::from(access != Access::Read);
                    if charge_to.is_none() {
                        // Not every run that stops later made it.
                        stepper.count_self(charged, count_kind(access), 1);
                    }
                }
                KnownStep::FetchTwo {
                    id,
                    offset,
                    second,
                    line,
                } => {
                    last = id;
                    charged = charge_to.unwrap_or(id);
                    stepper.fetch_two_lines(
                        charged,
                        line,
                        u32::from(offset),
                        u32::from(second),
                        time,
                    );
                    time += 1;
                }
                KnownStep::Exit { end } => {
                    if cursor.exits_here() {
                        break Some((steps.len() - rest.len(), end));
                    }
                    rest.next();
                }
                KnownStep::Left { .. } => {}
            }
        };
        cursor.finish(block.addr)?;
        *now = time;
        let ran = time - began;
        let reads = accesses - writes;
        match charge_to {
            Some(to) => {
                stepper.count(to, EventKind::Ir, ran);
                stepper.count(to, EventKind::Dr, reads);
                stepper.count(to, EventKind::Dw, writes);
            }
            None => {
                stepper.count_in_context(EventKind::Ir, ran);
                stepper.count_in_context(EventKind::Dr, reads);
                stepper.count_in_context(EventKind::Dw, writes);
                match exited {
                    Some((left, _)) => {
                        if let KnownStep::Left { runs } = &mut self.steps[start + left] {
                            *runs += 1;
                        }
                    }
                    None => {
                        let after = start + block.steps_len as usize;
                        if let Some(KnownStep::Left { runs }) = self.steps.get_mut(after) {
                            *runs += 1;
                        }
                    }
                }
            }
        }
        Ok(RunEnd {
            last,
            last_end: exited.map_or(block.end, |(_, end)| end),
        })
    }

    /// Counts `times` more runs like `run` of `block` (which makes no data
    /// access), each after one that hit I1 all through: where they left,
    /// if `counted` (else the caller counted them), and calls `fetched`
    /// with each I1 line they fetch from and how many fetches they make
    /// there in all.
    pub fn repeat(
        &mut self,
        block: &KnownBlock,
        run: RunRef,
        times: u64,
        counted: bool,
        mut fetched: impl FnMut(u64, u64),
    ) {
        let start = block.steps_start as usize;
        let steps = &self.steps[start..start + block.steps_len as usize];
        let mut cursor = RunCursor::new(run);
        // The I1 line fetched last, which a `FetchAgain` continues.
        let mut line = 0;
        let mut left = steps.len();
        for (at, step) in steps.iter().enumerate() {
            match *step {
                KnownStep::Fetch { line: first, .. } => {
                    line = first;
                    fetched(line, times);
                }
                KnownStep::FetchTwo { line: first, .. } => {
                    fetched(first, times);
                    line = first + 1;
                    fetched(line, times);
                }
                KnownStep::FetchAgain { count, .. } => fetched(line, u64::from(count) * times),
                KnownStep::Exit { .. } => {
                    if cursor.exits_here() {
                        left = at + 1;
                        break;
                    }
                }
                // Not made: a run without addresses that reaches an
                // unguarded access fails there, and every run of a block
                // with guarded accesses gives guards.
                KnownStep::Data { .. } | KnownStep::Guarded { .. } | KnownStep::Left { .. } => {}
            }
        }
        if counted && let KnownStep::Left { runs } = &mut self.steps[start + left] {
            *runs += times;
        }
    }

    /// Adds to `plan` the steps of `run` of `block`, its data accesses
    /// charged to `charge_to` where set and else to each instruction, its
    /// fetches to the slots `slot_of` tells for their I1 lines. False if
    /// it cannot be planned: a line `slot_of` does not know, a guarded
    /// access, or more instructions than a plan counts.
    pub fn plan_run(
        &self,
        block: &KnownBlock,
        run: RunRef,
        charge_to: Option<InstrId>,
        slot_of: impl Fn(u64) -> Option<Slot>,
        plan: &mut RoundPlan,
    ) -> bool {
        let start = block.steps_start as usize;
        let steps = &self.steps[start..start + block.steps_len as usize];
        let line_size = 1 << self.line_bits;
        let mut cursor = RunCursor::new(run);
        let mut charged = charge_to.unwrap_or(block.first);
        // The slot of the I1 line fetched last and where that fetch ended,
        // which a `FetchAgain` continues.
        let mut previous = None;
        let mut left = steps.len();
        let mut rest = steps.iter().enumerate();
        while let Some((at, step)) = rest.next() {
            let planned = match *step {
                KnownStep::Fetch {
                    id,
                    offset,
                    len,
                    line,
                } => {
                    charged = charge_to.unwrap_or(id);
                    let Some(slot) = slot_of(line) else {
                        return false;
                    };
                    let (offset, len) = (u32::from(offset), u32::from(len));
                    previous = Some((slot, offset + len));
                    plan.fetch(slot, 1, offset, len);
                    plan.instructions(1)
                }
                KnownStep::FetchTwo {
                    id,
                    offset,
                    second,
                    line,
                } => {
                    charged = charge_to.unwrap_or(id);
                    let (Some(first), Some(next)) = (slot_of(line), slot_of(line + 1)) else {
                        return false;
                    };
                    let (offset, second) = (u32::from(offset), u32::from(second));
                    previous = Some((next, second));
                    plan.fetch(first, 1, offset, line_size - offset);
                    plan.fetch(next, 1, 0, second);
                    plan.instructions(1)
                }
                KnownStep::FetchAgain {
                    id,
                    count,
                    line_end,
                } => {
                    charged = charge_to.unwrap_or(id);
                    let Some((slot, from)) = previous else {
                        return false;
                    };
                    let end = u32::from(line_end);
                    previous = Some((slot, end));
                    // In lines of more than 256 bytes, simulated without
                    // use, offsets are kept only in part and the bytes are
                    // not looked at: the length may wrap.
                    plan.fetch(slot, u32::from(count), from, end.wrapping_sub(from));
                    plan.instructions(u32::from(count))
                }
                KnownStep::Data { access, size } => {
                    plan.access(charged, access, size);
                    true
                }
                KnownStep::Guarded { .. } => false,
                KnownStep::Exit { .. } => {
                    if cursor.exits_here() {
                        left = at + 1;
                        break;
                    }
                    rest.next();
                    true
                }
                KnownStep::Left { .. } => true,
            };
            if !planned {
                return false;
            }
        }
        plan.end_run(start + left);
        true
    }

    /// Counts `times` more runs that stopped where the count at `left` in
    /// the steps is kept (see [`RoundPlan::lefts`]).
    pub fn add_left(&mut self, left: usize, times: u64) {
        let step = self.steps.get_mut(left);
        debug_assert!(
            matches!(step, Some(KnownStep::Left { .. })),
            "no count at {left}"
        );
        if let Some(KnownStep::Left { runs }) = step {
            *runs += times;
        }
    }

    /// Adds the Ir, Dr and Dw of the runs counted by where they stopped to
    /// `self_cost`: a step ran once in every run that stopped at it or
    /// after it; guarded accesses were counted as they happened.
    pub fn add_counts(&mut self, self_cost: &mut [Cost]) {
        let blocks = self.blocks.iter().flatten();
        for block in blocks.chain(self.other_frames.values()) {
            let range = block.steps_start as usize..(block.steps_start + block.steps_len) as usize;
            let mut next_instr = (block.start + block.len) as usize;
            let mut runs = match &mut self.steps[range.end] {
                KnownStep::Left { runs } => std::mem::take(runs),
                _ => 0,
            };
            // Unguarded accesses of the instruction fetched before them.
            let (mut reads, mut writes) = (0, 0);
            for step in self.steps[range].iter_mut().rev() {
                let (last, fetched) = match *step {
                    KnownStep::Fetch { id, .. } | KnownStep::FetchTwo { id, .. } => (id, 1),
                    KnownStep::FetchAgain { id, count, .. } => (id, usize::from(count)),
                    KnownStep::Data {
                        access: Access::Read,
                        ..
                    } => {
                        reads += runs;
                        continue;
                    }
                    KnownStep::Data { .. } => {
                        writes += runs;
                        continue;
                    }
                    KnownStep::Left { runs: ref mut left } => {
                        runs += std::mem::take(left);
                        continue;
                    }
                    KnownStep::Guarded { .. } | KnownStep::Exit { .. } => continue,
                };
                next_instr -= fetched;
                for instr in &self.instrs[next_instr..next_instr + fetched] {
                    self_cost[instr.0 as usize][EventKind::Ir] += runs;
                }
                let last = &mut self_cost[last.0 as usize];
                last[EventKind::Dr] += std::mem::take(&mut reads);
                last[EventKind::Dw] += std::mem::take(&mut writes);
            }
        }
    }
}
