//! Blocks whose instructions are known, and the fast walk of their runs.
//!
//! Once a run went through all of a block's instructions, their ids are
//! kept, and the block becomes one flat list of steps to replay, with what
//! the I1 geometry says about its fetches: an instruction that continues
//! the previous one in its line needs no lookup, as that line is then
//! resident and most recently used, and a run of them adds to the line's
//! use in one step (see [`Hierarchy::fetch_again`]).
//!
//! Counts that every run reaching a step adds alike are not added per
//! step: the instruction counts (Ir) and the unguarded data accesses (Dr,
//! Dw). Each run counts once, at the step it stopped at, and
//! [`KnownBlocks::add_counts`] turns those counts into every instruction's
//! Ir, Dr and Dw at the end; guarded accesses count in the self costs as
//! they happen. A run charged to a call site (a skipped function's) adds
//! all its counts to that instruction at once instead.

use std::convert::Infallible;

use crate::backdate::Backdate;
use crate::cache::{ByteMask, Hierarchy};
use crate::cost::{Cost, EventKind};
use crate::program::InstrId;
use crate::trace::Access;
use crate::trace::block::{BlockDef, Item, RunCursor, RunRef, WalkError};

use super::stepper::{Stepper, count_kind};

/// One step of a known block, in program order.
#[derive(Clone, Copy, Debug)]
enum KnownStep {
    /// Fetches instruction `id`, looked up in I1.
    Fetch { id: InstrId, addr: u64, len: u8 },
    /// Fetches the `count` instructions up to `id`, each right after the
    /// previous one of the block in the same I1 line and within that line:
    /// the last ends at `line_end` in the line.
    FetchAgain {
        id: InstrId,
        count: u16,
        line_end: u16,
    },
    /// A data access of the last instruction fetched; a guarded one may not
    /// happen.
    Data {
        access: Access,
        size: u16,
        guarded: bool,
    },
    /// A side exit.
    Exit,
}

impl KnownStep {
    /// The step of a block's data access or side exit.
    fn of_item(item: &Item) -> KnownStep {
        match *item {
            Item::Access {
                access,
                size,
                guarded,
            } => KnownStep::Data {
                access,
                size,
                guarded,
            },
            Item::Exit { .. } => KnownStep::Exit,
        }
    }
}

/// Where a known block's instructions and steps are in [`KnownBlocks`].
#[derive(Clone, Copy, Debug)]
pub(super) struct KnownBlock {
    start: u32,
    len: u32,
    steps_start: u32,
    steps_len: u32,
}

#[derive(Default)]
pub(super) struct KnownBlocks {
    /// By block number, once known.
    blocks: Vec<Option<KnownBlock>>,
    /// The instruction ids of the known blocks, block after block.
    instrs: Vec<InstrId>,
    /// The steps of the known blocks, block after block.
    steps: Vec<KnownStep>,
    /// Per step in `steps`: runs of its block that stopped there and are
    /// not yet in the self costs.
    stopped: Vec<u64>,
}

impl KnownBlocks {
    /// Block `id`, if known.
    #[inline]
    pub fn get(&mut self, id: usize) -> Option<KnownBlock> {
        if self.blocks.len() <= id {
            self.blocks.resize(id + 1, None);
        }
        self.blocks[id]
    }

    /// Id of the first instruction of `block`.
    #[inline]
    pub fn first(&self, block: KnownBlock) -> InstrId {
        self.instrs[block.start as usize]
    }

    /// Id of instruction `index` of `block`.
    #[inline]
    pub fn id(&self, block: KnownBlock, index: usize) -> InstrId {
        self.instrs[block.start as usize + index]
    }

    /// Makes block `id`, `def` with instructions `ids`, known; I1 lines
    /// have `line_bits` bits.
    pub fn learn(&mut self, id: usize, def: &BlockDef, ids: &[InstrId], line_bits: u32) {
        debug_assert_eq!(def.instrs.len(), ids.len());
        let start = self.instrs.len() as u32;
        let steps_start = self.steps.len() as u32;
        // The line of each instruction within one line, or None.
        let line_of = |addr: u64, len: u8| {
            let last = addr + u64::from(len.max(1)) - 1;
            (addr >> line_bits == last >> line_bits).then_some(addr >> line_bits)
        };
        let mut previous = None;
        for (instr, &instr_id) in def.instrs.iter().zip(ids) {
            let line = line_of(instr.addr, instr.len);
            let follows = line.is_some()
                && previous.is_some_and(|(line_before, end)| {
                    line == Some(line_before) && end == instr.addr
                });
            let end = instr.addr + u64::from(instr.len);
            self.instrs.push(instr_id);
            let line_end = (end - (instr.addr >> line_bits << line_bits)) as u16;
            let step = if follows {
                KnownStep::FetchAgain {
                    id: instr_id,
                    count: 1,
                    line_end,
                }
            } else {
                KnownStep::Fetch {
                    id: instr_id,
                    addr: instr.addr,
                    len: instr.len,
                }
            };
            // A fetch that follows one with nothing between joins its run.
            match (self.steps[steps_start as usize..].last_mut(), step) {
                (
                    Some(KnownStep::FetchAgain {
                        id,
                        count,
                        line_end: last_end,
                    }),
                    KnownStep::FetchAgain { .. },
                ) if *count < u16::MAX => {
                    *id = instr_id;
                    *count += 1;
                    *last_end = line_end;
                }
                _ => self.steps.push(step),
            }
            let items = &def.items[instr.items.clone()];
            self.steps.extend(items.iter().map(KnownStep::of_item));
            previous = line.map(|line| (line, end));
        }
        self.stopped.resize(self.steps.len(), 0);
        self.blocks[id] = Some(KnownBlock {
            start,
            len: ids.len() as u32,
            steps_start,
            steps_len: self.steps.len() as u32 - steps_start,
        });
    }

    /// Steps through `run` of `block` (whose description `def` names it in
    /// errors), charging to `charge_to` where set and else to each
    /// instruction; `now` counts the instructions. Returns how many ran;
    /// they and their data accesses are counted here in `context_cost`, and
    /// in `charge_to`'s self cost or else this block's stops (guarded
    /// accesses: in the self costs, as they happen).
    #[inline(always)]
    pub fn walk<B: Backdate, M: ByteMask>(
        &mut self,
        block: KnownBlock,
        def: &BlockDef,
        run: RunRef,
        mut stepper: Stepper<B, Hierarchy<B::Line, M>>,
        charge_to: Option<InstrId>,
        now: &mut u64,
    ) -> Result<usize, WalkError<Infallible>> {
        let start = block.steps_start as usize;
        let steps = &self.steps[start..start + block.steps_len as usize];
        let mut cursor = RunCursor::new(def, run);
        let began = *now;
        let mut charged = charge_to.unwrap_or(self.instrs[block.start as usize]);
        // Data accesses made, indexed by `Access`.
        let mut accesses = [0u64; 3];
        let mut stopped = steps.len();
        for (index, step) in steps.iter().enumerate() {
            match *step {
                KnownStep::Fetch { id, addr, len } => {
                    charged = charge_to.unwrap_or(id);
                    stepper.fetch(charged, addr, u32::from(len), *now);
                    *now += 1;
                }
                KnownStep::FetchAgain {
                    id,
                    count,
                    line_end,
                } => {
                    charged = charge_to.unwrap_or(id);
                    stepper.fetch_again(line_end, count);
                    *now += u64::from(count);
                }
                KnownStep::Data {
                    access,
                    size,
                    guarded,
                } => {
                    let Some(addr) = cursor.access(guarded)? else {
                        continue;
                    };
                    stepper.access(charged, access, addr, u32::from(size), *now);
                    accesses[access as usize] += 1;
                    if guarded && charge_to.is_none() {
                        // Not every run that stops later made it.
                        stepper.count_self(charged, count_kind(access), 1);
                    }
                }
                KnownStep::Exit => {
                    if cursor.exits_here() {
                        stopped = index;
                        break;
                    }
                }
            }
        }
        cursor.finish()?;
        // Each fetch is one instruction of the run.
        let ran = *now - began;
        let (reads, writes) = reads_and_writes(&accesses);
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
                if ran > 0 {
                    self.stopped[start + stopped.min(steps.len() - 1)] += 1;
                }
            }
        }
        Ok(ran as usize)
    }

    /// Adds the Ir, Dr and Dw of the runs counted by where they stopped to
    /// `self_cost`: a step ran once in every run that stopped at it or
    /// after it; guarded accesses were counted as they happened.
    pub fn add_counts(&mut self, self_cost: &mut [Cost]) {
        for block in self.blocks.iter().flatten() {
            let range = block.steps_start as usize..(block.steps_start + block.steps_len) as usize;
            let mut next_instr = (block.start + block.len) as usize;
            let mut runs = 0;
            // Unguarded accesses of the instruction fetched before them.
            let mut accesses = [0u64; 3];
            for (step, stopped) in self.steps[range.clone()]
                .iter()
                .zip(&mut self.stopped[range])
                .rev()
            {
                runs += std::mem::take(stopped);
                let (last, fetched) = match *step {
                    KnownStep::Fetch { id, .. } => (id, 1),
                    KnownStep::FetchAgain { id, count, .. } => (id, usize::from(count)),
                    KnownStep::Data {
                        access,
                        guarded: false,
                        ..
                    } => {
                        accesses[access as usize] += runs;
                        continue;
                    }
                    KnownStep::Data { .. } | KnownStep::Exit => continue,
                };
                next_instr -= fetched;
                for instr in &self.instrs[next_instr..next_instr + fetched] {
                    self_cost[instr.0 as usize][EventKind::Ir] += runs;
                }
                let (reads, writes) = reads_and_writes(&accesses);
                let last = &mut self_cost[last.0 as usize];
                last[EventKind::Dr] += reads;
                last[EventKind::Dw] += writes;
                accesses = [0; 3];
            }
        }
    }
}

/// Counts of data accesses indexed by [`Access`] as Dr and Dw: a modify
/// counts as a write (see [`count_kind`]).
#[inline(always)]
fn reads_and_writes(accesses: &[u64; 3]) -> (u64, u64) {
    let reads = accesses[Access::Read as usize];
    (reads, accesses.iter().sum::<u64>() - reads)
}
