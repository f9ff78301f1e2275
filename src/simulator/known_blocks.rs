//! Blocks whose instructions are known, and the fast walk of their runs.
//!
//! Once a run went through all of a block's instructions, their ids are
//! kept, and the block becomes one flat list of steps to replay, with what
//! the I1 geometry says about its fetches: an instruction that continues
//! the previous one in its line needs no lookup, as that line is then
//! resident and most recently used, and a run of them adds to the line's
//! use in one step (see [`Hierarchy::fetch_again`]). Instruction
//! counts (Ir) are not added per instruction: each run counts once, at the
//! instruction it ended with, and [`KnownBlocks::add_instruction_counts`]
//! turns those counts into every instruction's Ir at the end.

use std::convert::Infallible;

use crate::backdate::Backdate;
use crate::cache::{ByteMask, Hierarchy};
use crate::cost::{Cost, EventKind};
use crate::program::InstrId;
use crate::trace::Access;
use crate::trace::block::{BlockDef, Item, RunCursor, RunRef, WalkError};

use super::stepper::Stepper;

/// One step of a known block, in program order.
#[derive(Clone, Copy, Debug)]
enum KnownStep {
    /// Fetches instruction `id`, looked up in I1.
    Fetch { id: InstrId, addr: u64, len: u8 },
    /// Fetches instruction `id`, right after the previous one of the block
    /// in the same I1 line, both within that line: it ends at `line_end`
    /// in the line.
    FetchAgain { id: InstrId, line_end: u16 },
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
    /// Per instruction in `instrs`: runs of its block that ended with it
    /// and are not yet in the self costs.
    ended: Vec<u64>,
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
            self.steps.push(if follows {
                KnownStep::FetchAgain {
                    id: instr_id,
                    line_end: (end - (instr.addr >> line_bits << line_bits)) as u16,
                }
            } else {
                KnownStep::Fetch {
                    id: instr_id,
                    addr: instr.addr,
                    len: instr.len,
                }
            });
            let items = &def.items[instr.items.clone()];
            self.steps.extend(items.iter().map(KnownStep::of_item));
            previous = line.map(|line| (line, end));
        }
        self.ended.resize(self.instrs.len(), 0);
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
    /// their Ir is counted here, in `context_cost` and in `charge_to`'s or
    /// this block's counts.
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
        for step in steps {
            match *step {
                KnownStep::Fetch { id, addr, len } => {
                    charged = charge_to.unwrap_or(id);
                    stepper.fetch(charged, addr, u32::from(len), *now);
                    *now += 1;
                }
                KnownStep::FetchAgain { id, line_end } => {
                    charged = charge_to.unwrap_or(id);
                    stepper.fetch_again(line_end);
                    *now += 1;
                }
                KnownStep::Data {
                    access,
                    size,
                    guarded,
                } => {
                    let Some(addr) = cursor.access(guarded)? else {
                        continue;
                    };
                    stepper.data(charged, access, addr, u32::from(size), *now);
                }
                KnownStep::Exit => {
                    if cursor.exits_here() {
                        break;
                    }
                }
            }
        }
        cursor.finish()?;
        // Each fetch is one instruction of the run.
        let ran = (*now - began) as usize;
        if ran > 0 {
            match charge_to {
                Some(to) => stepper.count_instructions(to, ran as u64),
                None => {
                    stepper.count_context_instructions(ran as u64);
                    self.ended[block.start as usize + ran - 1] += 1;
                }
            }
        }
        Ok(ran)
    }

    /// Adds the Ir of the runs counted per block to `self_cost`: an
    /// instruction ran once in every run that ended with it or after it.
    pub fn add_instruction_counts(&mut self, self_cost: &mut [Cost]) {
        for block in self.blocks.iter().flatten() {
            let range = block.start as usize..(block.start + block.len) as usize;
            let mut runs = 0;
            for (instr, ended) in self.instrs[range.clone()]
                .iter()
                .zip(&mut self.ended[range])
                .rev()
            {
                runs += std::mem::take(ended);
                self_cost[instr.0 as usize][EventKind::Ir] += runs;
            }
        }
    }
}
