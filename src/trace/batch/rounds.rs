//! Cycles of block runs that a batch gives as repeats: a loop of a block
//! or a few that computes in registers, run over and over with nothing
//! between. The runs pushed last are followed round the cycle the runs
//! before them make, and each complete round is folded into one more
//! repeat of the cycle's last run (see [`Feed::push_run`]).
//!
//! [`Feed::push_run`]: super::Feed::push_run

use super::{Batch, Item, JumpKind, Run};

/// Most runs of a cycle that a batch gives as repeats (see
/// [`Feed::push_run`](super::Feed::push_run)).
pub const MAX_PERIOD: usize = 4;

/// A cycle of runs that the runs at the end of a batch go round again:
/// the last `matched` runs repeat, run by run, the runs `period` items
/// before them.
#[derive(Clone, Copy)]
struct Round {
    period: usize,
    matched: usize,
}

/// What a batch knows of the cycles its last items go round: the round
/// followed, if any, and the blocks of the last runs pushed that could go
/// round a cycle, each its number plus one (0: none), the latest last.
/// A run whose block is not among them starts no round, which spares most
/// runs the search of the items before them.
#[derive(Clone, Copy, Default)]
pub(super) struct Rounds {
    round: Option<Round>,
    recent: [u32; MAX_PERIOD],
}

impl Run {
    /// Whether this run could go round a cycle of runs: entered and left
    /// by jumps, without guards or addresses.
    #[inline]
    pub(super) fn could_repeat(&self) -> bool {
        self.present & Run::CALL == 0
            && self.leaving == JumpKind::Boring
            && self.guards_len == 0
            && self.addrs_len == 0
    }

    /// Whether `later`, a run that could repeat, repeats this one: of the
    /// same block, leaving by the same side exit with the same stack
    /// pointer, and this one entered and left by jumps, without guards or
    /// addresses too.
    #[inline]
    fn repeated_by(&self, later: &Run) -> bool {
        self.id == later.id
            && self.exit == later.exit
            && self.sp == later.sp
            && self.present == later.present
            && self.leaving == later.leaving
            && self.guards_len == 0
            && self.addrs_len == 0
    }
}

impl Batch {
    /// Follows `run`, just pushed, round the cycle the runs before it go
    /// round again, or else finds the shortest cycle it goes round again;
    /// once a round is complete, folds it into the last run before it.
    /// Returns the cycle's length when `run` completed a round of it.
    #[inline]
    pub(super) fn follow_round(&mut self, run: &Run) -> Option<usize> {
        let last = self.items.len() - 1;
        let key = run.id.wrapping_add(1);
        let Rounds { round, recent } = self.rounds;
        self.rounds.recent.rotate_left(1);
        self.rounds.recent[MAX_PERIOD - 1] = key;
        let round = match round {
            Some(Round { period, matched }) if self.repeats_item(last - period, run) => {
                Some(Round {
                    period,
                    matched: matched + 1,
                })
            }
            _ if recent.contains(&key) => self.find_round(run),
            _ => None,
        };
        self.rounds.round = round;
        match round {
            Some(Round { period, matched }) if matched == period => {
                let folded = self.fold(period);
                self.rounds.round = folded.then_some(Round { period, matched: 0 });
                folded.then_some(period)
            }
            _ => None,
        }
    }

    /// Whether `run` repeats item `at`, a run.
    #[inline]
    fn repeats_item(&self, at: usize, run: &Run) -> bool {
        matches!(&self.items[at], Item::Run(earlier) if earlier.repeated_by(run))
    }

    /// The shortest cycle, of up to [`MAX_PERIOD`] runs, that `run`, the
    /// last, goes round again, with how many runs before it went round it
    /// too; a cycle of runs whose last can count its repeats and the others
    /// none.
    #[inline(never)]
    fn find_round(&self, run: &Run) -> Option<Round> {
        let last = self.items.len() - 1;
        let items = &self.items;
        let period =
            (1..=MAX_PERIOD.min(last)).find(|&period| self.repeats_item(last - period, run))?;
        let matched = 1
            + (1..period)
                .take_while(|&back| {
                    back + period <= last
                        && alike(&items[last - back - period], &items[last - back])
                })
                .count();
        let end = last + 1 - matched;
        let counts = |at: usize| match &items[at] {
            Item::Run(run) if at + 1 < end => run.repeats == 0,
            Item::Run(run) => run.repeats == 0 || usize::from(run.period) == period,
            _ => false,
        };
        (end - period..end)
            .all(counts)
            .then_some(Round { period, matched })
    }

    /// Folds the last `period` items, runs that repeat the `period` runs
    /// before them (see [`Batch::follow_round`]), into one more repeat of
    /// those, which the last of those counts, unless it counts as many as
    /// it can already.
    fn fold(&mut self, period: usize) -> bool {
        let len = self.items.len();
        let counted = self.count_round(len - period - 1, period);
        if counted {
            let kept = len - period;
            self.items.truncate(kept);
            // Spans that started at items folded start at the next item,
            // read where they were or later.
            for span in self.locations.iter_mut().rev() {
                if span.0 as usize <= kept {
                    break;
                }
                span.0 = kept as u32;
            }
        }
        counted
    }

    /// Counts one more round of the cycle whose round the last run
    /// completed, if it is still the last item and the cycle can count one
    /// more.
    pub(super) fn repeat_round(&mut self) -> bool {
        match self.rounds.round {
            Some(Round { period, matched: 0 }) => self.count_round(self.items.len() - 1, period),
            _ => false,
        }
    }

    /// Counts one more repeat of the cycle of `period` runs that item
    /// `end` ends, unless it counts as many as it can already.
    fn count_round(&mut self, end: usize, period: usize) -> bool {
        match &mut self.items[end] {
            Item::Run(run) if run.repeats < u32::MAX => {
                run.repeats += 1;
                run.period = period as u8;
                true
            }
            _ => false,
        }
    }
}

/// Whether `later` is a run that repeats `earlier`, a run, and counts no
/// repeats of its own.
#[inline]
fn alike(earlier: &Item, later: &Item) -> bool {
    match (earlier, later) {
        (Item::Run(earlier), Item::Run(later)) => {
            later.repeats == 0 && later.could_repeat() && earlier.repeated_by(later)
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Feed, Location, Replayed, RunHead};
    use super::*;
    use crate::trace::Event;

    /// The repeats of the runs in `feed`'s batch, item by item (events and
    /// descriptions as `None`).
    fn repeats(feed: &Feed) -> Vec<Option<u32>> {
        feed.batch
            .replay()
            .map(|(item, _)| match item {
                Replayed::Run(run, _) => Some(run.repeats),
                _ => None,
            })
            .collect()
    }

    /// A run of block `id` with the stack pointer at 0x7000 that leaves
    /// by its second side exit.
    fn bare(id: u32) -> RunHead {
        RunHead {
            id,
            call: None,
            sp: Some(0x7000),
            exit: Some(1),
            leaving: JumpKind::Boring,
        }
    }

    /// The batch of `runs` pushed in turn.
    fn fed(runs: &[RunHead]) -> Feed {
        let mut feed = Feed::default();
        for &run in runs {
            feed.push_run(run, feed.mark());
        }
        feed
    }

    #[test]
    fn a_run_without_guards_or_addresses_like_the_one_before_repeats_it() {
        let (a, called) = (
            bare(3),
            RunHead {
                call: Some(0x40),
                ..bare(3)
            },
        );
        assert_eq!(repeats(&fed(&[a, a, a, a])), [Some(3)]);
        // The first entered by a call: the runs after it repeat one another.
        assert_eq!(repeats(&fed(&[called, a, a, a])), [Some(0), Some(2)]);
        // Each of these is an item of its own after `a`: entered by a call,
        // with another stack pointer or side exit, leaving by a call or a
        // return.
        for unlike in [
            called,
            RunHead {
                sp: Some(0x6ff8),
                ..a
            },
            RunHead { exit: None, ..a },
            RunHead {
                leaving: JumpKind::Call,
                ..a
            },
            RunHead {
                leaving: JumpKind::Return,
                ..a
            },
        ] {
            assert_eq!(repeats(&fed(&[a, unlike])), [Some(0); 2]);
        }
        // Nor is a run like one that leaves by a call or a return.
        for leaving in [JumpKind::Call, JumpKind::Return] {
            let run = RunHead { leaving, ..a };
            assert_eq!(repeats(&fed(&[run, run])), [Some(0); 2]);
        }
        // A run with an address, one like it without, and one after an
        // event, which the next repeats.
        let mut feed = Feed::default();
        let start = feed.mark();
        feed.run_arrays().1.push(0x8000);
        feed.push_run(a, start);
        feed.push_run(a, feed.mark());
        feed.add_event(Event::Instr { addr: 0x10, len: 1 });
        feed.push_run(a, feed.mark());
        feed.push_run(a, feed.mark());
        assert_eq!(repeats(&feed), [Some(0), Some(0), None, Some(1)]);
    }

    #[test]
    fn runs_that_repeat_a_cycle_of_runs_before_them_count_as_its_repeats() {
        let [a, b, c, d, e] = [1, 2, 3, 4, 5].map(bare);
        // A loop of two blocks, three times round and into the first again.
        let feed = fed(&[a, b, a, b, a, b, a]);
        assert_eq!(repeats(&feed), [Some(0), Some(2), Some(0)]);
        let cycle: Vec<u32> = feed.batch.cycle(1).map(|run| run.id).collect();
        assert_eq!(cycle, [1, 2]);
        // Of four blocks, of five (longer than a batch gives as repeats),
        // and not a cycle.
        let four = fed(&[a, b, c, d, a, b, c, d]);
        assert_eq!(repeats(&four), [Some(0), Some(0), Some(0), Some(1)]);
        assert_eq!(
            repeats(&fed(&[a, b, c, d, e, a, b, c, d, e])),
            [Some(0); 10]
        );
        assert_eq!(repeats(&fed(&[a, b, a, c])), [Some(0); 4]);
        // A run that repeats on its own ends no cycle: here the cycle
        // found starts with `b`.
        let feed = fed(&[a, a, b, a, b, a, b]);
        assert_eq!(repeats(&feed), [Some(1), Some(0), Some(1), Some(0)]);
        // The shortest cycle is taken.
        assert_eq!(repeats(&fed(&[a, b, a, b, a, b, a, b])), [Some(0), Some(3)]);
        // Runs read at other locations, folded into an item before them,
        // leave the item's location; the next item has its own.
        let mut feed = Feed::default();
        feed.locate_next(Location::Offset(12));
        feed.push_run(a, feed.mark());
        feed.push_run(b, feed.mark());
        feed.push_run(a, feed.mark());
        feed.locate_next(Location::Offset(40));
        feed.push_run(b, feed.mark());
        feed.locate_next(Location::Offset(60));
        feed.push_run(a, feed.mark());
        feed.push_run(b, feed.mark());
        feed.push_run(c, feed.mark());
        assert_eq!(repeats(&feed), [Some(0), Some(2), Some(0)]);
        let at = [0, 1, 2].map(|item| feed.batch.location(item));
        let offset = Location::Offset;
        assert_eq!(at, [offset(12), offset(12), offset(60)]);
    }

    proptest::proptest! {
        /// Random runs of three blocks, with a stack pointer or none and
        /// an address or none, with random cycles of the last runs
        /// repeated after them: the batch's items, each run followed by the
        /// repeats of the cycle it ends, give them back in order.
        #[test]
        fn a_batch_gives_back_the_runs_it_was_given(
            pushes in proptest::collection::vec(
                (0u32..3, proptest::bool::ANY, proptest::bool::weighted(0.2), 1usize..6, 0usize..4),
                0..60,
            ),
        ) {
            let mut runs: Vec<(u32, bool, bool)> = Vec::new();
            for &(id, sp, addr, period, repeats) in &pushes {
                runs.push((id, sp, addr));
                let cycle = runs[runs.len().saturating_sub(period)..].to_vec();
                for _ in 0..repeats {
                    runs.extend_from_slice(&cycle);
                }
            }
            let mut feed = Feed::default();
            for &(id, sp, addr) in &runs {
                let start = feed.mark();
                if addr {
                    feed.run_arrays().1.push(0x8000);
                }
                let head = RunHead {
                    sp: sp.then_some(0x7000),
                    ..bare(id)
                };
                feed.push_run(head, start);
            }
            let mut given = Vec::new();
            for (item, index) in feed.batch.replay() {
                let Replayed::Run(run, arrays) = item else {
                    continue;
                };
                given.push((run.id, run.sp().is_some(), !arrays.addrs.is_empty()));
                for _ in 0..run.repeats {
                    let cycle = feed.batch.cycle(index);
                    given.extend(cycle.map(|run| (run.id, run.sp().is_some(), false)));
                }
            }
            proptest::prop_assert_eq!(given, runs);
        }
    }
}
