//! The hierarchy with the narrowest use masks that fit its lines: one word
//! per line for lines of up to 64 bytes, four words for longer ones.

use super::geometry::CacheGeometry;
use super::hierarchy::{Hierarchy, L1Kind, Outcome, Release, UseSink};
use super::huge_table::NoMemory;
use super::line_use::{NarrowMask, WideMask};
use super::set_assoc::Slot;

/// Simulates accesses through I1 or D1 and LL: the one operation a
/// simulation step needs, whichever masks the caches keep.
pub trait CacheAccess<H> {
    /// Simulates one access of `size` bytes at `addr` through `kind`'s L1
    /// and, where it misses, LL.
    fn access(&mut self, kind: L1Kind, addr: u64, size: u32, sink: &mut impl UseSink<H>)
    -> Outcome;
}

impl<H: Copy + Default> CacheAccess<H> for Caches<H> {
    /// Picks the hierarchy on every access: for single events; block runs
    /// pick it once per run.
    #[inline]
    fn access(
        &mut self,
        kind: L1Kind,
        addr: u64,
        size: u32,
        sink: &mut impl UseSink<H>,
    ) -> Outcome {
        match self {
            Caches::Narrow(caches) => caches.access(kind, addr, size, sink),
            Caches::Wide(caches) => caches.access(kind, addr, size, sink),
        }
    }
}

/// I1, D1 and LL, with use masks sized for their lines.
pub enum Caches<H> {
    Narrow(Hierarchy<H, NarrowMask>),
    Wide(Hierarchy<H, WideMask>),
}

impl<H: Copy + Default> Caches<H> {
    /// Empty caches, with a lane for each LL after the first (see
    /// [`Hierarchy::new`]).
    pub fn new(
        i1: CacheGeometry,
        d1: CacheGeometry,
        lls: &[CacheGeometry],
        track_use: bool,
    ) -> Result<Self, NoMemory> {
        Ok(if track_use && lls[0].line_size() > 64 {
            Caches::Wide(Hierarchy::new(i1, d1, lls, track_use)?)
        } else {
            Caches::Narrow(Hierarchy::new(i1, d1, lls, track_use)?)
        })
    }

    /// Where I1 holds `line`, if it does (see [`Hierarchy::fetch_slot`]).
    pub fn fetch_slot(&self, line: u64) -> Option<Slot> {
        match self {
            Caches::Narrow(caches) => caches.fetch_slot(line),
            Caches::Wide(caches) => caches.fetch_slot(line),
        }
    }

    /// Ends every residency and empties the caches (see
    /// [`Hierarchy::flush`]).
    pub fn flush(&mut self, sink: &mut impl Release<H>) {
        match self {
            Caches::Narrow(caches) => caches.flush(sink),
            Caches::Wide(caches) => caches.flush(sink),
        }
    }
}
