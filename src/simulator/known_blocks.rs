//! Blocks whose instructions are known, and the fast walk of their runs.
//!
//! Once a run went through all of a block's instructions, their ids are
//! kept, with what the I1 geometry says about their fetches: an instruction
//! that continues the previous one in its line needs no lookup, as that
//! line is then resident and most recently used, and a run of them adds to
//! the line's use in one step (see [`Hierarchy::fetch_again`]). Instruction
//! counts (Ir) are not added per instruction: each run counts once, at the
//! instruction it ended with, and [`KnownBlocks::add_instruction_counts`]
//! turns those counts into every instruction's Ir at the end.

use std::convert::Infallible;

use crate::backdate::Backdate;
use crate::cache::{ByteMask, Hierarchy};
use crate::cost::{Cost, EventKind};
use crate::program::InstrId;
use crate::trace::block::{BlockDef, RunRef, Step, WalkError};

use super::stepper::Stepper;

/// An instruction of a known block.
#[derive(Clone, Copy, Debug)]
pub(super) struct KnownInstr {
    pub id: InstrId,
    /// Right after the previous instruction of the block, in the same I1
    /// line, both within that line.
    same_line: bool,
    /// Where the instruction ends within its I1 line, when `same_line`.
    line_end: u16,
}

/// Where a known block's instructions are in [`KnownBlocks`].
#[derive(Clone, Copy, Debug)]
pub(super) struct KnownBlock {
    start: u32,
    len: u32,
}

#[derive(Default)]
pub(super) struct KnownBlocks {
    /// By block number, once known.
    blocks: Vec<Option<KnownBlock>>,
    /// The instructions of the known blocks, block after block.
    instrs: Vec<KnownInstr>,
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
        self.instrs[block.start as usize].id
    }

    /// Id of instruction `index` of `block`.
    #[inline]
    pub fn id(&self, block: KnownBlock, index: usize) -> InstrId {
        self.instrs[block.start as usize + index].id
    }

    /// Makes block `id`, `def` with instructions `ids`, known; I1 lines
    /// have `line_bits` bits.
    pub fn learn(&mut self, id: usize, def: &BlockDef, ids: &[InstrId], line_bits: u32) {
        debug_assert_eq!(def.instrs.len(), ids.len());
        let start = self.instrs.len() as u32;
        // The line of each instruction within one line, or None.
        let line_of = |addr: u64, len: u8| {
            let last = addr + u64::from(len.max(1)) - 1;
            (addr >> line_bits == last >> line_bits).then_some(addr >> line_bits)
        };
        let mut previous = None;
        for (instr, &id) in def.instrs.iter().zip(ids) {
            let line = line_of(instr.addr, instr.len);
            let follows = line.is_some()
                && previous.is_some_and(|(line_before, end)| {
                    line == Some(line_before) && end == instr.addr
                });
            let end = instr.addr + u64::from(instr.len);
            self.instrs.push(KnownInstr {
                id,
                same_line: follows,
                line_end: if follows {
                    (end - (instr.addr >> line_bits << line_bits)) as u16
                } else {
                    0
                },
            });
            previous = line.map(|line| (line, instr.addr + u64::from(instr.len)));
        }
        self.ended.resize(self.instrs.len(), 0);
        self.blocks[id] = Some(KnownBlock {
            start,
            len: ids.len() as u32,
        });
    }

    /// Steps through `run` of `block`, described by `def`, charging to
    /// `charge_to` where set and else to each instruction; `now` counts the
    /// instructions. Returns how many ran; their Ir is counted here, in
    /// `context_cost` and in `charge_to`'s or this block's counts.
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
        let start = block.start as usize;
        let instrs = &self.instrs[start..start + block.len as usize];
        let mut index = 0;
        let mut charged = charge_to.unwrap_or(instrs[0].id);
        def.walk(
            run,
            #[inline(always)]
            |step| {
                match step {
                    Step::Instr { addr, len } => {
                        let instr = instrs[index];
                        index += 1;
                        charged = charge_to.unwrap_or(instr.id);
                        if instr.same_line {
                            stepper.fetch_again(instr.line_end);
                        } else {
                            stepper.fetch(charged, addr, len, *now);
                        }
                        *now += 1;
                    }
                    Step::Data { access, addr, size } => {
                        stepper.data(charged, access, addr, size, *now);
                    }
                }
                Ok(())
            },
        )?;
        if index > 0 {
            let ran = index as u64;
            match charge_to {
                Some(to) => stepper.count_instructions(to, ran),
                None => {
                    stepper.count_context_instructions(ran);
                    self.ended[start + index - 1] += 1;
                }
            }
        }
        Ok(index)
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
                self_cost[instr.id.0 as usize][EventKind::Ir] += runs;
            }
        }
    }
}
