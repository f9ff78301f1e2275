//! A block described in a binary trace, and the decoding of its runs: a
//! run's stack pointer, side exit, guards and addresses, checked against
//! what the block can do.

use std::sync::Arc;

use super::format::{Corrupt, RUN_NO_SP, RUN_SP_DELTA, RUN_SP_SAME, SpBases};
use super::varint::Cursor;
use crate::trace::block::{BlockDef, Item, JumpKind};
use crate::trace::valid::within;

/// A block described in the trace, with what decoding its runs needs at
/// hand.
pub(super) struct Def {
    /// Shared with the simulators, which a batch tells about it.
    pub(super) block: Arc<BlockDef>,
    /// Where the block's access sites start in `site_last`.
    pub(super) first_site: usize,
    /// Per access site in item order: whether it is guarded.
    pub(super) sites: Vec<bool>,
    /// Number of guarded sites, whose bits each run gives.
    pub(super) guarded: usize,
    /// Per side exit: how many access sites come before it, and its kind.
    pub(super) exits: Vec<(usize, JumpKind)>,
    /// Above this address, the block's largest access would run past the
    /// end of the address space: a run's address there is checked.
    pub(super) wraps_above: u64,
}

impl Def {
    /// The block with what decoding its runs needs; `None` where the host
    /// refuses the memory for its access sites (a block may have a million).
    pub(super) fn new(block: BlockDef, first_site: usize) -> Option<Def> {
        let mut sites = Vec::new();
        sites.try_reserve_exact(block.items.len()).ok()?;
        let mut exits = Vec::new();
        for item in &block.items {
            match *item {
                Item::Access { guarded, .. } => sites.push(guarded),
                Item::Exit { kind } => exits.push((sites.len(), kind)),
            }
        }
        let largest = site_sizes(&block).max().unwrap_or(1);
        Some(Def {
            guarded: block.guarded(),
            sites,
            exits,
            first_site,
            wraps_above: u64::MAX - (u64::from(largest) - 1),
            block: Arc::new(block),
        })
    }

    /// Heap bytes the block takes besides its `Def`: its shared
    /// description with its instructions and items, its sites and its side
    /// exits, each with the allocator's overhead (16 bytes a piece, about).
    pub(super) fn heap(&self) -> usize {
        use std::mem::size_of_val;
        let block = &*self.block;
        let pieces = [
            size_of_val(block) + 16,
            size_of_val(&block.instrs[..]),
            size_of_val(&block.items[..]),
            size_of_val(&self.sites[..]),
            size_of_val(&self.exits[..]),
        ];
        pieces.iter().map(|bytes| bytes + 16).sum()
    }

    /// Fails if access site `site` of a run, at `addr`, runs past the end
    /// of the address space; called for addresses above `wraps_above` only.
    #[cold]
    fn check_wrap(&self, site: usize, addr: u64, cursor: &Cursor) -> Result<(), Corrupt> {
        let size = site_sizes(&self.block).nth(site).unwrap_or(1);
        within(addr, u64::from(size)).map_err(|what| Corrupt {
            pos: cursor.pos(),
            what,
        })
    }

    /// The side exit a run took, if any ([`decode_run`] refuses one past
    /// the last).
    fn exit_taken(&self, exit: Option<u32>) -> Option<(usize, JumpKind)> {
        exit.and_then(|exit| self.exits.get(exit as usize)).copied()
    }

    /// How many access sites a run that took side exit `exit` reached.
    fn sites_reached(&self, exit: Option<u32>) -> usize {
        self.exit_taken(exit)
            .map_or(self.sites.len(), |(before, _)| before)
    }

    /// How a run that took side exit `exit` leaves the block
    /// ([`BlockDef::leaving`], without going through the items).
    pub(super) fn leaving(&self, exit: Option<u32>) -> JumpKind {
        self.exit_taken(exit)
            .map_or(self.block.end, |(_, kind)| kind)
    }
}

/// The size of each of `block`'s accesses, in item order.
fn site_sizes(block: &BlockDef) -> impl Iterator<Item = u16> + '_ {
    block.items.iter().filter_map(|item| match *item {
        Item::Access { size, .. } => Some(size),
        Item::Exit { .. } => None,
    })
}

/// Decodes what follows the tag of a run of `def`: its stack pointer
/// (as the tag's low bits say) and side exit, returned, and its guards and
/// the addresses of the accesses that happened, appended to `guards` and
/// `addrs`. The stack pointer's and the access sites' bases move on.
#[inline(always)]
pub(super) fn decode_run(
    cursor: &mut Cursor,
    tag: u64,
    def: &Def,
    site_last: &mut [u64],
    sp_bases: &mut SpBases,
    guards: &mut Vec<bool>,
    addrs: &mut Vec<u64>,
) -> Result<(Option<u64>, Option<u32>), Corrupt> {
    let sp = match tag & 3 {
        RUN_NO_SP => None,
        RUN_SP_SAME => Some(sp_bases.get()),
        RUN_SP_DELTA => {
            let sp = cursor.delta(sp_bases.get())?;
            sp_bases.set(sp);
            Some(sp)
        }
        _ => unreachable!("the callers take control records apart"),
    };
    let exit = if def.exits.is_empty() {
        None
    } else {
        let exit = cursor.varint()?;
        if exit > def.exits.len() as u64 {
            return Err(no_such_exit(cursor, exit, def.exits.len()));
        }
        exit.checked_sub(1).map(|exit| exit as u32)
    };
    // The sites before the exit taken, each with an address unless its
    // guard said it did not happen.
    let reached = def.sites_reached(exit);
    let last = &mut site_last[def.first_site..def.first_site + reached];
    if def.guarded == 0 {
        for (site, last) in last.iter_mut().enumerate() {
            *last = cursor.delta(*last)?;
            if *last > def.wraps_above {
                def.check_wrap(site, *last, cursor)?;
            }
            addrs.push(*last);
        }
        return Ok((sp, exit));
    }
    let first_guard = guards.len();
    for word in 0..def.guarded.div_ceil(64) {
        let mask = cursor.varint()?;
        let bits = (def.guarded - word * 64).min(64);
        if bits < 64 && mask >> bits != 0 {
            return Err(too_many_guards(cursor, mask, bits));
        }
        guards.extend((0..bits).map(|bit| mask >> bit & 1 != 0));
    }
    let mut run_guards = guards[first_guard..].iter();
    for (site, (last, &guarded)) in last.iter_mut().zip(&def.sites).enumerate() {
        if guarded && !run_guards.next().copied().unwrap_or(false) {
            continue;
        }
        *last = cursor.delta(*last)?;
        if *last > def.wraps_above {
            def.check_wrap(site, *last, cursor)?;
        }
        addrs.push(*last);
    }
    Ok((sp, exit))
}

/// A run that leaves by side exit number `exit` (from 1) of a block with
/// `exits`.
#[cold]
fn no_such_exit(cursor: &Cursor, exit: u64, exits: usize) -> Corrupt {
    Corrupt {
        pos: cursor.pos(),
        what: format!(
            "a run leaves by side exit number {exit} of a block that has {}",
            counted(exits, "side exit", "side exits")
        ),
    }
}

/// `count` `one` or `many`.
fn counted(count: usize, one: &str, many: &str) -> String {
    match count {
        1 => format!("1 {one}"),
        _ => format!("{count} {many}"),
    }
}

/// A guard mask with bits set beyond the `bits` guarded accesses it is for.
#[cold]
fn too_many_guards(cursor: &Cursor, mask: u64, bits: usize) -> Corrupt {
    Corrupt {
        pos: cursor.pos(),
        what: format!(
            "a guard mask {mask:#x} with bits beyond its block's {}",
            counted(bits, "guarded access", "guarded accesses")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::super::varint;
    use super::*;
    use crate::trace::Access;
    use crate::trace::block::BlockInstr;

    /// A one-instruction block: a guarded read, then a side exit.
    fn guarded_then_exit() -> Def {
        let block = BlockDef {
            instrs: vec![BlockInstr {
                addr: 0x1000,
                len: 4,
                items: 0..2,
            }],
            items: vec![
                Item::Access {
                    access: Access::Read,
                    size: 8,
                    guarded: true,
                },
                Item::Exit {
                    kind: JumpKind::Boring,
                },
            ],
            end: JumpKind::Boring,
        };
        Def::new(block, 0).expect("room for a block of two items")
    }

    /// Decodes a run of [`guarded_then_exit`] from `exit`, `mask` and the
    /// read's address (as a delta from 0): the exit taken and the addresses.
    fn run(exit: u64, mask: u64) -> Result<(Option<u32>, Vec<u64>), String> {
        let mut bytes = Vec::new();
        for value in [exit, mask] {
            varint::put(&mut bytes, value);
        }
        varint::put_delta(&mut bytes, 0x2000, 0);
        let (mut guards, mut addrs) = (Vec::new(), Vec::new());
        let (_, exit) = decode_run(
            &mut Cursor::new(&bytes),
            RUN_NO_SP,
            &guarded_then_exit(),
            &mut [0],
            &mut SpBases::default(),
            &mut guards,
            &mut addrs,
        )
        .map_err(|err| err.what)?;
        Ok((exit, addrs))
    }

    #[test]
    fn a_run_is_refused_an_exit_or_a_guard_its_block_does_not_have() {
        assert_eq!(run(0, 1), Ok((None, vec![0x2000])));
        assert_eq!(run(1, 1), Ok((Some(0), vec![0x2000])));
        assert_eq!(run(0, 0), Ok((None, vec![])));
        assert_eq!(
            run(2, 1),
            Err("a run leaves by side exit number 2 of a block that has 1 side exit".to_string())
        );
        assert_eq!(
            run(0, 0b11),
            Err("a guard mask 0x3 with bits beyond its block's 1 guarded access".to_string())
        );
    }
}
