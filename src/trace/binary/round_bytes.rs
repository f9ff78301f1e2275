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

use super::runs::Def;
use super::varint::Cursor;
use crate::trace::Feed;
use crate::trace::batch::MAX_PERIOD;

/// The runs decoded last by one reading of a chunk, as a ring: where each
/// record starts, its block and the number of addresses it gave, the run
/// decoded `n`th at `n % RING`. Two rounds of the longest cycle.
pub(super) struct LastRuns {
    starts: [usize; RING],
    shapes: [(usize, usize); RING],
    decoded: usize,
}

const RING: usize = 2 * MAX_PERIOD;

impl LastRuns {
    pub fn new() -> LastRuns {
        LastRuns {
            starts: [0; RING],
            shapes: [(0, 0); RING],
            decoded: 0,
        }
    }

    /// Notes a run of block `id` whose record starts at `start` and that
    /// gave `addrs` addresses.
    #[inline]
    pub fn push(&mut self, start: usize, id: usize, addrs: usize) {
        self.starts[self.decoded % RING] = start;
        self.shapes[self.decoded % RING] = (id, addrs);
        self.decoded += 1;
    }

    /// Where the record of the run decoded `back` runs before the next
    /// starts, if it was decoded.
    fn start(&self, back: usize) -> Option<usize> {
        (back <= self.decoded && back <= RING).then(|| self.starts[(self.decoded - back) % RING])
    }
}

/// A round of `period` runs just decoded and folded, which the bytes after
/// it may give again.
pub(super) struct RoundBytes {
    /// The round's encoding's length in bytes.
    len: usize,
    /// Its runs, each its block and its number of addresses.
    shapes: [(usize, usize); MAX_PERIOD],
    period: usize,
    /// The round's addresses.
    addrs: usize,
}

impl RoundBytes {
    /// The round of the last `period` runs of `last`, which a batch just
    /// folded, `cursor` right after it: if the bytes after it can give it
    /// again (a round with data accesses, only if the round before it was
    /// encoded in the same bytes).
    pub fn after(cursor: &Cursor, last: &LastRuns, period: usize) -> Option<RoundBytes> {
        let start = last.start(period)?;
        let len = cursor.pos() - start;
        let mut shapes = [(0, 0); MAX_PERIOD];
        for (back, shape) in (1..=period).rev().zip(&mut shapes) {
            *shape = last.shapes[(last.decoded - back) % RING];
        }
        let addrs = shapes.iter().map(|&(_, addrs)| addrs).sum();
        if addrs > 0 {
            let before = last.start(2 * period)?;
            if start - before != len || !cursor.repeated(len) {
                return None;
            }
        }
        Some(RoundBytes {
            len,
            shapes,
            period,
            addrs,
        })
    }

    /// The round's runs.
    pub fn runs(&self) -> u64 {
        self.period as u64
    }

    /// Counts the round once more in `feed`'s batch and moves `cursor` past
    /// it if the bytes at `cursor` give it again, its addresses added to
    /// the batch's and the access sites' last addresses (`site_last`, by
    /// the blocks `defs`) moved on; false, with nothing changed, if they
    /// do not, or the batch cannot count it.
    pub fn again(
        &self,
        cursor: &mut Cursor,
        feed: &mut Feed,
        defs: &[Def],
        site_last: &mut [u64],
    ) -> bool {
        if !cursor.again(self.len) {
            return false;
        }
        if self.addrs == 0 {
            if !feed.repeat_round() {
                return false;
            }
            cursor.skip(self.len);
            return true;
        }
        let addrs = feed.run_arrays().1;
        let end = addrs.len();
        // The last two rounds' addresses end the batch's (`after` saw both
        // rounds decoded).
        for at in end - self.addrs..end {
            let moved = addrs[at].wrapping_sub(addrs[at - self.addrs]);
            addrs.push(addrs[at].wrapping_add(moved));
        }
        let shapes = &self.shapes[..self.period];
        let mut at = end;
        for &(id, count) in shapes {
            let wraps = addrs[at..at + count]
                .iter()
                .any(|&addr| defs[id].may_wrap(addr));
            // Decoded, the run will say where.
            if wraps {
                addrs.truncate(end);
                return false;
            }
            at += count;
        }
        if !feed.repeat_round() {
            feed.run_arrays().1.truncate(end);
            return false;
        }
        let mut round = &feed.run_arrays().1[end..];
        for &(id, count) in shapes {
            let first = defs[id].first_site;
            let run;
            (run, round) = round.split_at(count);
            site_last[first..first + count].copy_from_slice(run);
        }
        cursor.skip(self.len);
        true
    }
}
