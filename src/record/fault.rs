//! Block runs that a fault stopped part-way.
//!
//! The tool writes a run's data addresses as the accesses happen, each just
//! before its access. When an access faults (a `SIGSEGV` that a handler
//! fixes by mapping the page, as garbage collectors and user-space paging
//! do), the run stops there: its addresses may fall short of what its block
//! makes, and the signal's record comes next, with the address the thread
//! resumes at when the handler returns. Valgrind keeps only the stack
//! pointer exact at each access, as under Callgrind, so that address is
//! where the instruction pointer was last set: usually the block's start,
//! or an instruction of the block that needed it exact. The instructions
//! from there on run again, as the start of a new block; so the run is
//! written as what completed, the instructions before that address with
//! their accesses. (Callgrind counts the same unless the fault comes
//! after a side exit of the block or its first 16 events; see the README.)

use std::io::{self, Write};

use crate::trace::Event;
use crate::trace::binary::{Control, TraceWriter};
use crate::trace::block::{BlockDef, BlockRun, Item, JumpKind, Step, WalkError};

/// Whether signal `signo` is one that a data access or an arithmetic fault
/// raises in the middle of a block: `SIGFPE`, `SIGBUS`, `SIGSEGV`. (An
/// instruction that traps, `ud2` or `int3`, ends its block: its run is
/// whole.)
pub fn is_fault(signo: u32) -> bool {
    matches!(signo, 7 | 8 | 11)
}

/// For a run of `def` that had not gone through its block's end when the
/// thread stopped at `ip`, by a fault if `fault` allows one (a fault
/// signal, or the end of a program a fault may have killed): how many of
/// its instructions completed. `None` when the run is whole: it took a
/// side exit, or it stopped outside its block.
///
/// A run cut short completed the instructions before the one at `ip`,
/// where the thread resumes, if the run's addresses reach it. A run with
/// all its addresses was cut short only by a fault that left the thread at
/// one of its instructions: a fault of its last access, or of an
/// instruction that makes none (an `idiv` by zero). A run short of
/// addresses whose `ip` tells nothing (the stream ended) stopped at the
/// instruction whose access came last, or, with no access made, at the one
/// that would have made the first. A run that took a side exit is whole,
/// unless the exit raised the fault (then the thread resumes at the exit's
/// instruction, which did not run).
pub fn completed(def: &BlockDef, run: &BlockRun, fault: bool, ip: u64) -> Option<usize> {
    let at_ip = def.instrs.iter().position(|instr| instr.addr == ip);
    if let Some(exit) = run.exit {
        // A side exit that raises the fault itself (VEX's check that an SSE
        // access is aligned) leaves the thread at its own instruction, which
        // did not run; any other ended the run whole. A run that takes the
        // exit runs up to its instruction.
        let exit_instr = def
            .exit_instrs()
            .get(exit as usize)
            .map(|&ran| ran as usize - 1);
        let raised = fault && def.leaving(run.view()) == JumpKind::Other;
        return at_ip.filter(|&k| raised && exit_instr == Some(k));
    }
    // made[k]: the addresses that the instructions before k make.
    let mut made = Vec::with_capacity(def.instrs.len() + 1);
    let mut count = 0;
    let mut guarded = 0;
    made.push(0);
    for instr in &def.instrs {
        for item in &def.items[instr.items.clone()] {
            if let Item::Access { guarded: g, .. } = *item {
                let happened = !g || run.guards.get(guarded).copied().unwrap_or(false);
                guarded += usize::from(g);
                count += usize::from(happened);
            }
        }
        made.push(count);
    }
    let addrs = run.addrs.len();
    if addrs >= count {
        return at_ip.filter(|_| fault);
    }
    if let Some(k) = at_ip.filter(|&k| made[k] <= addrs) {
        return Some(k);
    }
    // The last instruction whose accesses start before the run's last
    // address (with none, the first that makes one).
    Some(
        (0..def.instrs.len())
            .rev()
            .find(|&k| made[k] < addrs.max(1))
            .unwrap_or(0),
    )
}

/// Writes the first `ran` instructions of a run of `def`, with their
/// accesses, as events of their own: the trace's reader makes the first
/// one the callee of a call that the thread's previous block ended in.
/// `ran` is what [`completed`] gave, whose addresses the run has.
pub fn write_completed<W: Write>(
    writer: &mut TraceWriter<W>,
    def: &BlockDef,
    run: &BlockRun,
    ran: usize,
) -> io::Result<()> {
    if ran == 0 {
        return Ok(());
    }
    if let Some(sp) = run.sp {
        writer.control(&Control::Event(Event::StackPointer { sp }))?;
    }
    // The walk stops at instruction `ran`, before the addresses run out.
    let mut instrs = 0;
    let walked = def.walk(run.view(), |step| {
        let event = match step {
            Step::Instr { addr, len } => {
                if instrs == ran {
                    return Err(None);
                }
                instrs += 1;
                Event::Instr { addr, len }
            }
            Step::Data { access, addr, size } => Event::Data { access, addr, size },
        };
        writer.control(&Control::Event(event)).map_err(Some)
    });
    match walked {
        Err(WalkError::Step(Some(err))) => Err(err),
        Err(WalkError::Mismatch(mismatch)) => {
            Err(io::Error::new(io::ErrorKind::InvalidData, mismatch.0))
        }
        Ok(()) | Err(WalkError::Step(None)) => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::Access;
    use crate::trace::block::BlockInstr;

    /// `i 100 (read)`, `i 104 (guarded write)`, `i 108`, `i 10c (write)`.
    fn block() -> BlockDef {
        let access = |access, guarded| Item::Access {
            access,
            size: 8,
            guarded,
        };
        let instr = |addr, items| BlockInstr {
            addr,
            len: 4,
            items,
        };
        BlockDef {
            instrs: vec![
                instr(0x100, 0..1),
                instr(0x104, 1..2),
                instr(0x108, 2..2),
                instr(0x10c, 2..3),
            ],
            items: vec![
                access(Access::Read, false),
                access(Access::Write, true),
                access(Access::Write, false),
            ],
            end: JumpKind::Boring,
        }
    }

    fn run(guard: bool, addrs: &[u64]) -> BlockRun {
        BlockRun {
            sp: Some(0x7000),
            exit: None,
            guards: vec![guard],
            addrs: addrs.to_vec(),
        }
    }

    #[test]
    fn a_run_left_by_a_side_exit_or_between_blocks_is_whole() {
        let def = block();
        let left = BlockRun {
            exit: Some(0),
            ..run(false, &[1])
        };
        assert_eq!(completed(&def, &left, true, 0x104), None);
        // The thread stopped outside the block.
        assert_eq!(completed(&def, &run(false, &[1, 2]), true, 0x500), None);
        assert_eq!(completed(&def, &run(true, &[1, 2, 3]), false, 0x10c), None);
        // A signal that is not a fault, at the start of the block.
        assert_eq!(completed(&def, &run(false, &[1, 2]), false, 0x100), None);
    }

    /// `i 100 (read)`, `i 104 (side exit of `kind`, read)`.
    fn exiting_block(kind: JumpKind) -> BlockDef {
        let read = Item::Access {
            access: Access::Read,
            size: 16,
            guarded: false,
        };
        BlockDef {
            instrs: vec![
                BlockInstr {
                    addr: 0x100,
                    len: 4,
                    items: 0..1,
                },
                BlockInstr {
                    addr: 0x104,
                    len: 4,
                    items: 1..3,
                },
            ],
            items: vec![read, Item::Exit { kind }, read],
            end: JumpKind::Boring,
        }
    }

    #[test]
    fn a_side_exit_that_raises_a_fault_stops_the_run_before_its_instruction() {
        let left = BlockRun {
            exit: Some(0),
            guards: Vec::new(),
            ..run(false, &[1])
        };
        let raising = exiting_block(JumpKind::Other);
        assert_eq!(completed(&raising, &left, true, 0x104), Some(1));
        // A signal that is no fault, or a fault that left the thread
        // elsewhere, came after the exit.
        assert_eq!(completed(&raising, &left, false, 0x104), None);
        assert_eq!(completed(&raising, &left, true, 0x100), None);
        assert_eq!(completed(&raising, &left, true, 0x500), None);
        // A jump is no fault of its own.
        let jumping = exiting_block(JumpKind::Boring);
        assert_eq!(completed(&jumping, &left, true, 0x104), None);
        // The exit's instruction is found among the block's exits.
        let mut second = exiting_block(JumpKind::Other);
        second.items.insert(
            0,
            Item::Exit {
                kind: JumpKind::Boring,
            },
        );
        second.instrs[0].items = 0..2;
        second.instrs[1].items = 2..4;
        assert_eq!(completed(&second, &left, true, 0x104), None);
        let second_exit = BlockRun {
            exit: Some(1),
            ..left.clone()
        };
        assert_eq!(completed(&second, &second_exit, true, 0x104), Some(1));
    }

    #[test]
    fn a_fault_stops_the_run_before_the_instruction_that_faulted() {
        assert!([7, 8, 11].into_iter().all(is_fault));
        assert!(![4, 5, 14, 15].into_iter().any(is_fault));
        let def = block();
        // The read faulted: nothing completed.
        assert_eq!(completed(&def, &run(false, &[1]), true, 0x100), Some(0));
        // The guarded write faulted.
        assert_eq!(completed(&def, &run(true, &[1, 2]), true, 0x104), Some(1));
        // The last write faulted: every address was made.
        assert_eq!(
            completed(&def, &run(true, &[1, 2, 3]), true, 0x10c),
            Some(3)
        );
        // The last write faulted, and the thread resumes at the block's
        // start, where Valgrind last set the instruction pointer: the run
        // starts again, nothing completed.
        assert_eq!(
            completed(&def, &run(true, &[1, 2, 3]), true, 0x100),
            Some(0)
        );
        assert_eq!(completed(&def, &run(false, &[1, 2]), true, 0x100), Some(0));
        // Not an access: the instruction at the address given stopped.
        assert_eq!(completed(&def, &run(false, &[1]), true, 0x108), Some(2));
        assert_eq!(completed(&def, &run(false, &[1]), true, 0x10c), Some(3));
        // A block that makes no access (a division that faults, then
        // arithmetic): its first instruction stopped.
        let arithmetic = BlockDef {
            instrs: block()
                .instrs
                .iter()
                .map(|instr| BlockInstr {
                    items: 0..0,
                    ..instr.clone()
                })
                .collect(),
            items: Vec::new(),
            end: JumpKind::Boring,
        };
        let none = BlockRun {
            guards: Vec::new(),
            ..run(false, &[])
        };
        assert_eq!(completed(&arithmetic, &none, true, 0x100), Some(0));
        assert_eq!(completed(&arithmetic, &none, true, 0x108), Some(2));
    }

    #[test]
    fn an_address_the_accesses_disagree_with_falls_back_to_the_last_access() {
        let def = block();
        // The instructions before 0x10c make two addresses; the run made one.
        assert_eq!(completed(&def, &run(true, &[1]), true, 0x10c), Some(0));
        // Resuming before the access that faulted: the rest runs again.
        assert_eq!(completed(&def, &run(true, &[1, 2]), true, 0x100), Some(0));
        assert_eq!(completed(&def, &run(true, &[1, 2]), true, 0x999), Some(1));
        // No address at all: the first instruction making one stopped.
        assert_eq!(completed(&def, &run(false, &[]), true, 0x999), Some(0));
    }

    #[test]
    fn what_completed_is_written_as_events_of_its_own() {
        let def = block();
        let mut writer = TraceWriter::new(Vec::new(), false, &[]).unwrap();
        write_completed(&mut writer, &def, &run(false, &[0x2000, 0x3000]), 3).unwrap();
        let totals = writer.totals();
        assert_eq!((totals.instructions, totals.accesses), (3, 1));
    }
}
