//! L1 use on its way to LL lines.
//!
//! An L1 eviction hands the line's pending use to the line's LL residency,
//! whose state, for an LL of megabytes, is rarely in the host's caches:
//! adding it there at once would wait for host memory on most L1 misses.
//! The hand-over waits here instead, for [`DEPTH`] more evictions, while a
//! prefetch brings the LL state in. Adding use commutes, so the hand-overs
//! stay exact as long as each reaches its residency before that ends: LL
//! takes those of a line it evicts ([`DeferredUse::take_for`]) and all of
//! them before a flush ([`DeferredUse::drain`]).

use super::line_use::{ByteMask, LineUse};
use super::set_assoc::Slot;

const DEPTH: usize = 8;

/// Marks a free entry; LL slots are below `u32::MAX`.
const FREE: u32 = u32::MAX;

/// Hand-overs of pending use to LL slots, oldest replaced first.
pub struct DeferredUse<M> {
    entries: [(u32, LineUse<M>); DEPTH],
    next: usize,
}

impl<M: ByteMask> DeferredUse<M> {
    pub fn new() -> DeferredUse<M> {
        DeferredUse {
            entries: [(FREE, LineUse::default()); DEPTH],
            next: 0,
        }
    }

    /// Queues `pending` for LL slot `slot`. Returns the hand-over it
    /// replaces, now due: its use goes to its slot at once.
    #[inline]
    pub fn push(&mut self, slot: u32, pending: LineUse<M>) -> Option<(Slot, LineUse<M>)> {
        debug_assert_ne!(slot, FREE);
        let (due, used) = std::mem::replace(&mut self.entries[self.next], (slot, pending));
        self.next = (self.next + 1) % DEPTH;
        (due != FREE).then_some((due as Slot, used))
    }

    /// Removes the hand-overs to LL slot `slot`, adding them to `used`.
    #[inline]
    pub fn take_for(&mut self, slot: Slot, used: &mut LineUse<M>) {
        for (due, pending) in &mut self.entries {
            if *due as Slot == slot {
                used.absorb(pending);
                *due = FREE;
            }
        }
    }

    /// Removes every hand-over, with the slot it is for.
    pub fn drain(&mut self) -> impl Iterator<Item = (Slot, LineUse<M>)> + '_ {
        self.entries.iter_mut().filter_map(|(due, pending)| {
            let slot = std::mem::replace(due, FREE);
            (slot != FREE).then_some((slot as Slot, *pending))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn use_of(count: u64, mask: u64) -> LineUse<u64> {
        LineUse { count, mask }
    }

    #[test]
    fn a_hand_over_is_due_after_depth_more() {
        let mut deferred = DeferredUse::new();
        for slot in 0..DEPTH as u32 {
            assert_eq!(deferred.push(slot, use_of(1, 1 << slot)), None);
        }
        assert_eq!(deferred.push(99, use_of(2, 0)), Some((0, use_of(1, 1))));
        assert_eq!(deferred.push(99, use_of(2, 0)), Some((1, use_of(1, 2))));
    }

    #[test]
    fn taking_a_slots_hand_overs_adds_them_all_once() {
        let mut deferred = DeferredUse::new();
        deferred.push(3, use_of(1, 0b01));
        deferred.push(4, use_of(5, 0b1000));
        deferred.push(3, use_of(2, 0b10));
        let mut used = use_of(1, 0b100);
        deferred.take_for(3, &mut used);
        assert_eq!(used, use_of(4, 0b111));
        deferred.take_for(3, &mut used);
        assert_eq!(used, use_of(4, 0b111));
        let rest: Vec<_> = deferred.drain().collect();
        assert_eq!(rest, [(4, use_of(5, 0b1000))]);
        assert_eq!(deferred.drain().count(), 0);
    }
}
