//! I1, D1 and LL together: Callgrind's cache model with exact cache-use
//! tracking.
//!
//! An access goes to I1 (instruction fetch) or D1 (data; writes allocate
//! like reads). An access spanning two lines looks both up and misses if
//! either misses; one longer than the shortest line is clamped to that
//! line's size from its address first, as Callgrind clamps. LL is
//! looked up for each line that missed L1, and nothing is invalidated in L1
//! when LL evicts.
//!
//! With use tracking on, every resident line keeps a [`LineUse`]. L1 lines
//! report it when they are evicted. An LL residency must count every access
//! to its line, including the many that hit L1 and never reach LL, so each L1
//! line also keeps the use not yet handed to LL (`pending`). Pending use moves
//! into the LL line when the L1 line is evicted and when the LL line is
//! evicted while still in L1; when LL loads a line afresh, a copy held by the
//! other L1 drops its pending use, which happened while no LL residency
//! existed. This is Callgrind's merge, made exact: no access is lost or
//! charged to the wrong residency. (The hand-over at an L1 eviction waits a
//! few evictions in [`DeferredUse`](super::deferred_use::DeferredUse), so
//! that the LL state it goes to is prefetched meanwhile.)
//!
//! A sweep's LLs can share one walk when its configurations differ in LL
//! only: the first LL is this hierarchy's own, the others are *lanes* with
//! their own LL state and their own view of the L1 lines' pending use
//! ([`lanes`]).

use super::caches::CacheAccess;
use super::geometry::{CacheGeometry, LineSpan, longest_access};
use super::huge_table::{HugeTable, NoMemory};
use super::line_use::{ByteMask, LineUse};
use super::set_assoc::{Lookup, SetAssocCache, Slot};
use crate::program::InstrId;
use lanes::LaneCaches;
use levels::{FirstLevel, L1Held, L1Line, LastLevel, LlLine};

mod lanes;
mod levels;
#[cfg(test)]
mod naive;

/// The two first-level caches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum L1Kind {
    Instr = 0,
    Data = 1,
}

/// The level whose residency ended: an L1 cache or LL.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    L1,
    LL,
}

/// The instruction that loaded a line, and the back-dating handle the line
/// holds for as long as it is resident.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Loader<H> {
    pub instr: InstrId,
    pub handle: H,
}

/// Receives the end of every residency when use tracking is on. Lane 0 is
/// the hierarchy's own LL and the L1 lines as it sees them; each other LL
/// of a sweep is a lane of its own.
pub trait Release<H> {
    /// A residency at `level` of `lane` ended with `line_use` on lines of
    /// `line_size` bytes; the line gives up `loader.handle`.
    fn release<M: ByteMask>(
        &mut self,
        lane: usize,
        level: Level,
        loader: Loader<H>,
        line_use: &LineUse<M>,
        line_size: u32,
    );

    /// An L1 residency ended in `lane`, not 0, as it did in lane 0 (lanes
    /// share L1): what [`Release::release`] says, for a sink that may
    /// take lane 0's L1 costs for every lane's.
    #[inline(always)]
    fn release_shared_l1<M: ByteMask>(
        &mut self,
        lane: usize,
        loader: Loader<H>,
        line_use: &LineUse<M>,
        line_size: u32,
    ) {
        self.release(lane, Level::L1, loader, line_use, line_size);
    }
}

/// Receives the start and end of every residency when use tracking is on.
pub trait UseSink<H>: Release<H> {
    /// The access being simulated loads a line into a cache of `lane`;
    /// returns who loaded it.
    fn hold(&mut self, lane: usize) -> Loader<H>;
}

/// Most LLs one hierarchy holds, the first and its lanes: a lane's miss is
/// a bit of [`Outcome::lane_misses`].
pub const MAX_LANES: usize = 32;

/// Which levels one access missed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    pub l1_miss: bool,
    pub ll_miss: bool,
    /// The lanes after the first whose LL missed, lane `n` as bit `n`.
    pub lane_misses: u32,
}

/// Fetches that continued the I1 line looked up last, byte for byte, and
/// are not yet in its use: bytes `from .. to` of the line, fetched `count`
/// times. They are added in one step before anything else looks at I1's
/// use (see [`Hierarchy::fetch_again`]).
#[derive(Clone, Copy, Default)]
struct FetchTail {
    from: u32,
    to: u32,
    count: u64,
}

/// The simulated I1, D1 and LL caches, with use masks of type `M` (which
/// must cover the line size).
pub struct Hierarchy<H, M> {
    l1: [FirstLevel<H, M>; 2],
    ll: LastLevel<H, M>,
    /// The LLs of lanes 1 and on.
    lanes: LaneCaches<H, M>,
    tail: FetchTail,
    track_use: bool,
    /// The longest access taken whole ([`longest_access`]).
    longest: u32,
}

impl<H: Copy + Default, M: ByteMask> Hierarchy<H, M> {
    /// Empty caches, with an LL of geometry `lls[0]` and a lane for each
    /// further one. With `track_use`, all line sizes must be equal (the
    /// configuration checks this), as L1 use merges into LL lines byte for
    /// byte. Fails if the host refuses the memory of a table.
    pub fn new(
        i1: CacheGeometry,
        d1: CacheGeometry,
        lls: &[CacheGeometry],
        track_use: bool,
    ) -> Result<Self, NoMemory> {
        let ll = lls[0];
        let slots = |g: &CacheGeometry| if track_use { g.lines() as usize } else { 0 };
        let first = |g: CacheGeometry| {
            Ok(FirstLevel {
                cache: SetAssocCache::new(g)?,
                lines: HugeTable::filled(L1Line::default(), slots(&g))?,
                held: HugeTable::filled(L1Held::default(), slots(&g))?,
                line_bits: g.line_bits(),
            })
        };
        debug_assert!(!track_use || lls.iter().all(|ll| i1.line_size() == ll.line_size()));
        debug_assert!(!track_use || d1.line_size() == i1.line_size());
        debug_assert!(!track_use || ll.line_size() <= M::LINE_LIMIT);
        assert!(lls.len() <= MAX_LANES, "at most {MAX_LANES} LLs a walk");
        let lanes = LaneCaches::new(&lls[1..], [i1, d1].map(|g| slots(&g)), track_use)?;
        Ok(Hierarchy {
            l1: [first(i1)?, first(d1)?],
            ll: LastLevel::new(ll, track_use)?,
            lanes,
            tail: FetchTail::default(),
            track_use,
            longest: longest_access(i1, d1),
        })
    }

    /// Fetches `count` instructions, each right after the previous fetch,
    /// the last ending at `line_end` in the last I1 line the previous
    /// fetch touched (its only line, or the second of two): that line is
    /// still resident and most recently used (only fetches touch I1's
    /// order), so they hit and change no order; only the line's use grows.
    /// The growth waits in the fetch tail: a run of such fetches covers one
    /// range of the line, added with its count in one step.
    #[inline(always)]
    pub fn fetch_again(&mut self, line_end: u16, count: u16) {
        if self.track_use {
            debug_assert!(
                u32::from(line_end)
                    > if self.tail.count == 0 {
                        self.tail.from
                    } else {
                        self.tail.to
                    },
                "fetches continue the last"
            );
            self.tail.to = u32::from(line_end);
            self.tail.count += u64::from(count);
        }
    }

    /// Adds `fetches` fetches of bytes already used to the use of I1 line
    /// `line`, which is resident and stays where it is: the fetches of runs
    /// that repeat one that hit (see `Simulator::repeat`).
    pub fn fetch_more(&mut self, line: u64, fetches: u64) {
        if self.track_use {
            let first = &mut self.l1[L1Kind::Instr as usize];
            let slot = first
                .cache
                .probe(line)
                .expect("a line the run before hit is resident");
            let state = &mut first.lines[slot];
            state.used.count += fetches;
            state.pending.count += fetches;
        }
    }

    /// Where I1 holds `line`, if it does; its order unchanged.
    pub fn fetch_slot(&self, line: u64) -> Option<Slot> {
        self.l1[L1Kind::Instr as usize].cache.probe(line)
    }

    /// Adds `fetches` fetches of bytes `offset .. offset + len` to the use
    /// of the I1 line in `slot`, which they hit and leave where it is in
    /// its set: the fetches of a round of a loop that repeats one whose
    /// lines I1 still holds, in order with the round's data accesses, since
    /// a miss of those in LL can take an I1 line's use (see
    /// `Simulator::repeat`).
    #[inline(always)]
    pub fn fetch_resident(&mut self, slot: Slot, fetches: u64, offset: u32, len: u32) {
        if self.track_use {
            let fetched = LineUse {
                count: fetches,
                mask: M::range(offset, len),
            };
            self.add_fetched(slot, &fetched);
        }
    }

    /// Adds `fetched` to the use of the I1 line in `slot`: what the line
    /// has served, and what it has yet to charge.
    #[inline(always)]
    fn add_fetched(&mut self, slot: Slot, fetched: &LineUse<M>) {
        let state = &mut self.l1[L1Kind::Instr as usize].lines[slot];
        state.used.absorb(fetched);
        state.pending.absorb(fetched);
    }

    /// Fetches bytes `offset .. offset + len` of I1 line `line`: an
    /// instruction within one line, whose line and bytes are known.
    #[inline(always)]
    pub fn fetch_line(
        &mut self,
        line: u64,
        offset: u32,
        len: u32,
        sink: &mut impl UseSink<H>,
    ) -> Outcome {
        let k = L1Kind::Instr as usize;
        let bytes = if self.track_use {
            self.settle_fetches();
            M::range(offset, len)
        } else {
            M::default()
        };
        let mut outcome = Outcome::default();
        self.access_line(k, line, &bytes, sink, &mut outcome);
        // Where fetches that continue this one start.
        self.tail.from = offset + len;
        outcome
    }

    /// Fetches an instruction that starts at byte `offset` of I1 line
    /// `line` and ends in the next line, of which it takes the first
    /// `second` bytes (its [`LineSpan`]): what [`CacheAccess::access`] does
    /// with such a fetch, with the lines and bytes known. Fetches that
    /// continue it in the second line start after those bytes, as after
    /// [`Hierarchy::fetch_line`].
    #[inline(never)]
    pub fn fetch_two_lines(
        &mut self,
        line: u64,
        offset: u32,
        second: u32,
        sink: &mut impl UseSink<H>,
    ) -> Outcome {
        let k = L1Kind::Instr as usize;
        let (first_bytes, second_bytes) = if self.track_use {
            self.settle_fetches();
            let line_size = 1 << self.l1[k].line_bits;
            (M::range(offset, line_size - offset), M::range(0, second))
        } else {
            (M::default(), M::default())
        };
        let mut outcome = Outcome::default();
        self.access_line(k, line, &first_bytes, sink, &mut outcome);
        self.access_line(k, line + 1, &second_bytes, sink, &mut outcome);
        self.tail.from = second;
        outcome
    }

    /// Adds the fetch tail to the use of I1's most recent line; later
    /// fetches continue where it ended.
    #[inline]
    fn settle_fetches(&mut self) {
        let tail = self.tail;
        if tail.count > 0 {
            self.tail = FetchTail {
                from: tail.to,
                to: tail.to,
                count: 0,
            };
            let fetched = LineUse {
                count: tail.count,
                mask: M::range(tail.from, tail.to - tail.from),
            };
            let slot = self.l1[L1Kind::Instr as usize].cache.last_slot();
            self.add_fetched(slot, &fetched);
        }
    }

    /// An access over two lines (or more, clamped to the shortest line's
    /// worth, which leaves one or two): the first line, then the rest in
    /// the next.
    #[inline(never)]
    fn access_straddling(
        &mut self,
        k: usize,
        addr: u64,
        size: u32,
        sink: &mut impl UseSink<H>,
    ) -> Outcome {
        let span = LineSpan::new(addr, size.min(self.longest), self.l1[k].line_bits);
        let track_use = self.track_use;
        let bytes = |offset: u32, len: u32| {
            if track_use {
                M::range(offset, len)
            } else {
                M::default()
            }
        };
        let mut outcome = Outcome::default();
        let first = bytes(span.offset, span.first);
        self.access_line(k, span.line, &first, sink, &mut outcome);
        if span.second > 0 {
            let second = bytes(0, span.second);
            self.access_line(k, span.line + 1, &second, sink, &mut outcome);
        }
        outcome
    }

    /// One line's lookup in L1 `k`: a hit is counted here, a miss handled
    /// out of line.
    #[inline(always)]
    fn access_line(
        &mut self,
        k: usize,
        line: u64,
        bytes: &M,
        sink: &mut impl UseSink<H>,
        outcome: &mut Outcome,
    ) {
        match self.l1[k].cache.access(line) {
            Lookup::Hit(slot) => {
                if self.track_use {
                    let state = &mut self.l1[k].lines[slot];
                    state.used.touch(bytes);
                    state.pending.touch(bytes);
                }
            }
            Lookup::Miss { slot, victim } => {
                outcome.l1_miss = true;
                outcome.ll_miss |= self.l1_miss(k, (line, slot, victim), bytes, sink);
                if !self.lanes.is_empty() {
                    outcome.lane_misses |= self.lanes_load(k, line, slot, sink);
                }
            }
        }
    }

    /// `line` missed L1 `k` and was loaded into `slot`, evicting `victim`;
    /// whether it missed LL too.
    #[inline(never)]
    fn l1_miss(
        &mut self,
        k: usize,
        (line, slot, victim): (u64, Slot, Option<u64>),
        bytes: &M,
        sink: &mut impl UseSink<H>,
    ) -> bool {
        // Both of LL's lines are likely out of the host's nearer caches: have
        // the new line's LL set on its way while the victim's residency is
        // charged, and the victim's LL state for when its deferred use is
        // due.
        if victim.is_none() {
            self.l1[k].cache.filled(line);
        }
        let addr = line << self.l1[k].line_bits;
        self.ll
            .cache
            .prefetch(addr >> self.ll.cache.geometry().line_bits());
        if !self.lanes.is_empty() {
            self.lanes_prefetch(k, addr, slot, victim.is_some());
        }
        if self.track_use {
            // LL may end the residency of I1's line, which takes its use.
            self.settle_fetches();
            if let Some(victim) = victim {
                if let Some(ll_slot) = self.l1[k].held[slot].ll_slot {
                    self.ll.lines.prefetch(ll_slot as usize);
                }
                self.end_l1_residency(k, victim, slot, sink);
            }
            self.l1[k].lines[slot] = L1Line {
                used: LineUse::first(*bytes),
                pending: LineUse::first(*bytes),
            };
            self.l1[k].held[slot] = L1Held {
                loader: sink.hold(0),
                ll_slot: None,
            };
        }
        let (ll_miss, ll_slot) = self.ll_access(k, line, sink);
        if self.track_use {
            self.l1[k].held[slot].ll_slot = Some(ll_slot as u32);
        }
        ll_miss
    }

    /// Looks up in LL the line `l1_line` of L1 cache `k`: whether it
    /// missed, and where LL now holds it.
    fn ll_access(&mut self, k: usize, l1_line: u64, sink: &mut impl UseSink<H>) -> (bool, Slot) {
        let addr = l1_line << self.l1[k].line_bits;
        let line = addr >> self.ll.cache.geometry().line_bits();
        let (slot, victim) = match self.ll.cache.access(line) {
            Lookup::Hit(slot) => return (false, slot),
            Lookup::Miss { slot, victim } => (slot, victim),
        };
        if victim.is_none() {
            self.ll.cache.filled(line);
        }
        if self.track_use {
            if let Some(victim) = victim {
                self.end_ll_residency(victim, slot, sink);
            }
            self.ll.lines[slot] = LlLine {
                loader: sink.hold(0),
                used: LineUse::default(),
            };
            // Whatever the other L1 saw of this line happened while it was
            // not in LL; the new residency starts empty.
            let other = &mut self.l1[1 - k];
            if let Some(copy) = other.cache.probe(line) {
                other.lines[copy].pending = LineUse::default();
                other.held[copy].ll_slot = Some(slot as u32);
            }
        }
        (true, slot)
    }

    fn end_l1_residency(&mut self, k: usize, line: u64, slot: Slot, sink: &mut impl Release<H>) {
        let state = self.l1[k].lines[slot];
        let held = self.l1[k].held[slot];
        let line_size = self.l1[k].cache.geometry().line_size();
        let used = if self.lanes.is_empty() {
            state.used
        } else {
            self.lanes.residency_use(k, slot, &state.used)
        };
        sink.release(0, Level::L1, held.loader, &used, line_size);
        debug_assert_eq!(
            held.ll_slot.map(|slot| slot as Slot),
            self.ll.cache.probe(line),
            "an L1 line knows where LL holds it"
        );
        if let Some(ll_slot) = held.ll_slot {
            self.ll.hand_over(ll_slot, state.pending);
        }
        if !self.lanes.is_empty() {
            self.lanes_end_l1_residency(k, line, slot, &used, sink);
        }
    }

    fn end_ll_residency(&mut self, line: u64, slot: Slot, sink: &mut impl Release<H>) {
        let mut used = self.ll.ending_use(slot);
        for first in &mut self.l1 {
            if let Some(copy) = first.cache.probe(line) {
                used.absorb(&first.lines[copy].pending);
                first.lines[copy].pending = LineUse::default();
                first.held[copy].ll_slot = None;
            }
        }
        let line_size = self.ll.cache.geometry().line_size();
        sink.release(0, Level::LL, self.ll.lines[slot].loader, &used, line_size);
    }

    /// Ends every residency as if evicted, L1 first and then LL, so that all
    /// use reaches the sink, and empties the caches: a cache flush, and the
    /// end of the run.
    pub fn flush(&mut self, sink: &mut impl Release<H>) {
        if self.track_use {
            self.settle_fetches();
            for k in 0..2 {
                let resident: Vec<(u64, Slot)> = self.l1[k].cache.resident().collect();
                for (line, slot) in resident {
                    self.end_l1_residency(k, line, slot, sink);
                }
            }
            self.ll.release_all(0, sink);
        }
        self.lanes_flush(sink);
        for first in &mut self.l1 {
            first.cache.clear();
        }
        self.ll.cache.clear();
    }
}

impl<H: Copy + Default, M: ByteMask> CacheAccess<H> for Hierarchy<H, M> {
    /// Simulates one access of `size` bytes at `addr` through `kind`'s L1.
    /// Inlined into the simulator: an access within one line that hits
    /// runs no call at all.
    #[inline(always)]
    fn access(
        &mut self,
        kind: L1Kind,
        addr: u64,
        size: u32,
        sink: &mut impl UseSink<H>,
    ) -> Outcome {
        let k = kind as usize;
        let bits = self.l1[k].line_bits;
        let line_size = 1u64 << bits;
        let offset = addr & (line_size - 1);
        if offset + u64::from(size) > line_size {
            if kind == L1Kind::Instr && self.track_use {
                self.settle_fetches();
            }
            return self.access_straddling(k, addr, size, sink);
        }
        // Within one line: the common case.
        if kind == L1Kind::Instr {
            return self.fetch_line(addr >> bits, offset as u32, size, sink);
        }
        let bytes = if self.track_use {
            M::range(offset as u32, size)
        } else {
            M::default()
        };
        let mut outcome = Outcome::default();
        self.access_line(k, addr >> bits, &bytes, sink, &mut outcome);
        outcome
    }
}

#[cfg(test)]
mod tests;
