//! Rounds of a loop read again byte for byte, and counted without being
//! decoded.
//!
//! A run's stack pointer is encoded against the previous one's, and each
//! access site's address against the site's previous address. So once a
//! batch folded a round of a cycle of runs (see `Feed::push_run`), the
//! same bytes again right after that round are the same runs again, each
//! site moved on by the deltas it moved by in that round:
//!
//! - A round without data accesses is then that round again, exactly: one
//!   more repeat of the cycle.
//! - A round with data accesses moves each site by the sum of its deltas
//!   in a round. When the round before was encoded in the same bytes too,
//!   every address of the round is the one at its place in the last round
//!   plus what it moved by from the round before to the last (that sum
//!   again): a loop striding through arrays, whose deltas repeat round
//!   after round. The round's addresses are worked out from the last two
//!   rounds' in the batch, checked as decoding checks them, and the sites
//!   moved on.
//!
//! Rounds that the bytes give again one after another are counted in one
//! step, as many as the batch takes: it takes rounds while it has room for
//! addresses, as it takes runs decoded.

use super::runs::Def;
use super::varint::Cursor;
use crate::trace::Feed;
use crate::trace::batch::MAX_PERIOD;

/// The runs decoded last by one reading of a chunk, as a ring: where each
/// record starts, its block, and how many addresses the runs decoded before
/// it gave, the run decoded `n`th at `n % RING`. Two rounds of the longest
/// cycle.
pub(super) struct LastRuns {
    starts: [usize; RING],
    ids: [usize; RING],
    addrs_before: [usize; RING],
    /// Runs decoded, and the addresses they gave.
    decoded: usize,
    addrs: usize,
    /// Rounds with addresses to let fold before the next is compared with
    /// the round before it, and how many were let fold last: doubling, up
    /// to 64, while rounds of the loop whose first block is `passing`
    /// differ from the round before them (its addresses do not stride), so
    /// that such a loop spends little on the comparisons; none once two
    /// are alike, or for another loop.
    pass: u32,
    passed: u32,
    passing: usize,
}

const RING: usize = 2 * MAX_PERIOD;

impl LastRuns {
    pub fn new() -> LastRuns {
        LastRuns {
            starts: [0; RING],
            ids: [0; RING],
            addrs_before: [0; RING],
            decoded: 0,
            addrs: 0,
            pass: 0,
            passed: 0,
            passing: usize::MAX,
        }
    }

    /// Notes a run of block `id` whose record starts at `start` and that
    /// gave `addrs` addresses.
    #[inline]
    pub fn push(&mut self, start: usize, id: usize, addrs: usize) {
        let at = self.decoded % RING;
        self.starts[at] = start;
        self.ids[at] = id;
        self.addrs_before[at] = self.addrs;
        self.decoded += 1;
        self.addrs += addrs;
    }

    /// The block and number of addresses of each of the last `period` runs
    /// decoded, in order.
    fn shapes(&self, period: usize) -> impl Iterator<Item = (usize, usize)> + '_ {
        (self.decoded - period..self.decoded).map(|n| {
            let after = match n + 1 {
                next if next == self.decoded => self.addrs,
                next => self.addrs_before[next % RING],
            };
            (self.ids[n % RING], after - self.addrs_before[n % RING])
        })
    }
}

/// A round of `period` runs just decoded and folded, which the bytes after
/// it may give again.
pub(super) struct RoundBytes {
    /// The round's encoding's length in bytes.
    len: usize,
    period: usize,
    /// The round's addresses, and where each run's sites start in the
    /// sites' last addresses with how many it reaches.
    addrs: usize,
    sites: [(usize, usize); MAX_PERIOD],
    /// Above this, an address of the round could run past the end of the
    /// address space: the least of its blocks' `wraps_above`.
    wraps_above: u64,
}

impl RoundBytes {
    /// The round of the last `period` runs of `last`, of blocks `defs`,
    /// which a batch just folded, `cursor` right after it: if the bytes
    /// after it can give it again (a round with data accesses, only if the
    /// round before it was encoded in the same bytes).
    #[inline(never)]
    pub fn after(
        cursor: &Cursor,
        last: &mut LastRuns,
        defs: &[Def],
        period: usize,
    ) -> Option<RoundBytes> {
        let first = last.decoded.checked_sub(period)?;
        let start = last.starts[first % RING];
        let len = cursor.pos() - start;
        let addrs = last.addrs - last.addrs_before[first % RING];
        let round = |sites, wraps_above| RoundBytes {
            len,
            period,
            addrs,
            sites,
            wraps_above,
        };
        if addrs == 0 {
            return Some(round([(0, 0); MAX_PERIOD], u64::MAX));
        }
        let cycle = last.ids[first % RING];
        if cycle != last.passing {
            (last.passing, last.pass, last.passed) = (cycle, 0, 0);
        }
        if last.pass > 0 {
            last.pass -= 1;
            return None;
        }
        // The round before, its first run `period` runs earlier in the
        // ring, must end where this one starts: rounds counted by
        // `count_again` are not in the ring, so a round there may lie
        // further back.
        let before = first.checked_sub(period)?;
        if start - last.starts[before % RING] != len || !cursor.repeated(len) {
            last.passed = (2 * last.passed).clamp(1, 64);
            last.pass = last.passed;
            return None;
        }
        last.passed = 0;
        let mut sites = [(0, 0); MAX_PERIOD];
        let mut wraps_above = u64::MAX;
        for ((id, count), run_sites) in last.shapes(period).zip(&mut sites) {
            *run_sites = (defs[id].first_site, count);
            wraps_above = wraps_above.min(defs[id].wraps_above);
        }
        Some(round(sites, wraps_above))
    }

    /// The round's runs.
    pub fn runs(&self) -> u64 {
        self.period as u64
    }

    /// Counts the round again in `feed`'s batch as many times as the bytes
    /// at `cursor` give it, one after another, and the batch takes it (it
    /// takes rounds while it has room for addresses, as it takes runs
    /// decoded); moves `cursor` past them, adds their addresses to the
    /// batch's and moves the access sites' last addresses (`site_last`)
    /// on. Returns how many times: none, with nothing changed, if the bytes
    /// do not give the round again or the batch cannot count it.
    #[inline]
    pub fn count_again(
        &self,
        cursor: &mut Cursor,
        feed: &mut Feed,
        site_last: &mut [u64],
    ) -> usize {
        let most = match self.addrs {
            0 => usize::MAX,
            addrs => feed.room_for_addrs().div_ceil(addrs),
        };
        let found = cursor.repeats(self.len, most);
        let counted = match (found, self.addrs) {
            (0, _) => 0,
            (_, 0) => feed.repeat_rounds(found),
            _ => self.addresses_again(found, feed, site_last),
        };
        cursor.skip(counted * self.len);
        counted
    }

    /// Adds the addresses of up to `most` rounds to `feed`'s batch and
    /// counts them there, and moves the sites on (see
    /// [`RoundBytes::count_again`]); how many it counted.
    #[inline(never)]
    fn addresses_again(&self, most: usize, feed: &mut Feed, site_last: &mut [u64]) -> usize {
        let n = self.addrs;
        let addrs = feed.run_arrays().1;
        let end = addrs.len();
        // The last two rounds' addresses end the batch's (`after` saw both
        // rounds decoded): each new round's are the last's moved on by what
        // each moved from the one before.
        addrs.resize(end + most * n, 0);
        let mut made = 0;
        while made < most {
            let at = end + made * n;
            let (before, rounds) = addrs[at - 2 * n..at + n].split_at_mut(n);
            let (last, round) = rounds.split_at_mut(n);
            for ((addr, &last), &before) in round.iter_mut().zip(&*last).zip(&*before) {
                *addr = last.wrapping_add(last.wrapping_sub(before));
            }
            // Decoded, the run will say where and whether it does.
            if round.iter().any(|&addr| addr > self.wraps_above) {
                break;
            }
            made += 1;
        }
        let counted = feed.repeat_rounds(made);
        let addrs = feed.run_arrays().1;
        addrs.truncate(end + counted * n);
        if counted > 0 {
            let mut round = &addrs[addrs.len() - n..];
            for &(first, count) in &self.sites[..self.period] {
                let run;
                (run, round) = round.split_at(count);
                site_last[first..first + count].copy_from_slice(run);
            }
        }
        counted
    }
}
