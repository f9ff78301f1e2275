//! The hierarchy with the narrowest use masks that fit its lines: one word
//! per line for lines of up to 64 bytes, four words for longer ones.

use super::geometry::CacheGeometry;
use super::hierarchy::{Hierarchy, L1Kind, Outcome, Release, UseSink};
use super::line_use::{NarrowMask, WideMask};

/// I1, D1 and LL, with use masks sized for their lines.
pub enum Caches<H> {
    Narrow(Hierarchy<H, NarrowMask>),
    Wide(Hierarchy<H, WideMask>),
}

impl<H: Copy + Default> Caches<H> {
    /// Empty caches (see [`Hierarchy::new`]).
    pub fn new(i1: CacheGeometry, d1: CacheGeometry, ll: CacheGeometry, track_use: bool) -> Self {
        if track_use && ll.line_size() > 64 {
            Caches::Wide(Hierarchy::new(i1, d1, ll, track_use))
        } else {
            Caches::Narrow(Hierarchy::new(i1, d1, ll, track_use))
        }
    }

    /// Simulates one access (see [`Hierarchy::access`]).
    #[inline]
    pub fn access(
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

    /// Ends every residency and empties the caches (see
    /// [`Hierarchy::flush`]).
    pub fn flush(&mut self, sink: &mut impl Release<H>) {
        match self {
            Caches::Narrow(caches) => caches.flush(sink),
            Caches::Wide(caches) => caches.flush(sink),
        }
    }
}
