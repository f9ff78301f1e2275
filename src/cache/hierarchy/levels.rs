//! The state of each level's resident lines, apart from its cache's tags
//! and order: an L1's use and loader per line, an LL's, and the use of
//! evicted L1 lines still on its way to LL.

use super::super::deferred_use::DeferredUse;
use super::super::geometry::CacheGeometry;
use super::super::huge_table::{HugeTable, NoMemory};
use super::super::line_use::{ByteMask, LineUse};
use super::super::set_assoc::{SetAssocCache, Slot};
use super::{Level, Loader, Release};

/// The use of a resident L1 line, which every hit adds to: apart from
/// [`L1Held`], and aligned so that with narrow masks (32 bytes) it lies in
/// one host cache line.
#[derive(Clone, Copy, Default)]
#[repr(align(32))]
pub(super) struct L1Line<M> {
    /// Use during this L1 residency (with lanes, since the residency's
    /// last split: see [`super::lanes`]).
    pub(super) used: LineUse<M>,
    /// Use not yet handed to the LL residency of the same line.
    pub(super) pending: LineUse<M>,
}

/// What a resident L1 line holds that only loads and evictions touch.
#[derive(Clone, Copy, Default)]
pub(super) struct L1Held<H> {
    pub(super) loader: Loader<H>,
    /// Where LL holds the same line, while it does: L1 evictions hand
    /// their pending use there without searching LL's set.
    pub(super) ll_slot: Option<u32>,
}

/// A resident LL line: who loaded it and its use in this residency.
#[derive(Clone, Copy, Default)]
pub(super) struct LlLine<H, M> {
    pub(super) loader: Loader<H>,
    pub(super) used: LineUse<M>,
}

/// An L1: I1 or D1.
pub(super) struct FirstLevel<H, M> {
    pub(super) cache: SetAssocCache,
    pub(super) lines: HugeTable<L1Line<M>>,
    pub(super) held: HugeTable<L1Held<H>>,
    pub(super) line_bits: u32,
}

/// An LL: the hierarchy's own, or a lane's.
pub(super) struct LastLevel<H, M> {
    pub(super) cache: SetAssocCache,
    pub(super) lines: HugeTable<LlLine<H, M>>,
    /// Pending use of evicted L1 lines not yet added to `lines`.
    pub(super) deferred: DeferredUse<M>,
}

impl<H: Copy + Default, M: ByteMask> LastLevel<H, M> {
    /// An empty LL of geometry `ll`, tracking the use of its lines if
    /// `track_use`.
    pub(super) fn new(ll: CacheGeometry, track_use: bool) -> Result<LastLevel<H, M>, NoMemory> {
        let tracked = if track_use { ll.lines() as usize } else { 0 };
        Ok(LastLevel {
            cache: SetAssocCache::new(ll)?,
            lines: HugeTable::filled(LlLine::default(), tracked)?,
            deferred: DeferredUse::new(),
        })
    }

    /// Hands `pending`, the use of an evicted L1 line, to the residency in
    /// `slot`, once a few more evictions have let its state be prefetched.
    pub(super) fn hand_over(&mut self, slot: u32, pending: LineUse<M>) {
        if let Some((due, pending)) = self.deferred.push(slot, pending) {
            self.lines[due].used.absorb(&pending);
        }
    }

    /// The use of the residency in `slot`, including hand-overs still due.
    pub(super) fn ending_use(&mut self, slot: Slot) -> LineUse<M> {
        let mut used = self.lines[slot].used;
        self.deferred.take_for(slot, &mut used);
        used
    }

    /// Ends the residency of every line, as lane `lane`, after the L1
    /// residencies ended; the cache stays as it is.
    pub(super) fn release_all(&mut self, lane: usize, sink: &mut impl Release<H>) {
        for (slot, pending) in self.deferred.drain() {
            self.lines[slot].used.absorb(&pending);
        }
        let line_size = self.cache.geometry().line_size();
        for (_, slot) in self.cache.resident() {
            let state = &self.lines[slot];
            sink.release(lane, Level::LL, state.loader, &state.used, line_size);
        }
    }
}
