//! Cycles of block runs that a batch gives as repeats: a loop of a block
//! or a few, run over and over with nothing between. The runs pushed last
//! are followed round the cycle the runs before them make, and each
//! complete round is folded into one more repeat of the cycle's last run
//! (see [`Feed::push_run`]); its addresses stay in the batch's array.
//!
//! [`Feed::push_run`]: super::Feed::push_run

use super::{Batch, Item, JumpKind, Run};

/// Most runs of a cycle that a batch gives as repeats (see
/// [`Feed::push_run`](super::Feed::push_run)).
pub const MAX_PERIOD: usize = 4;

/// A cycle of runs that the runs at the end of a batch go round again:
/// the last `matched` runs repeat, run by run, the runs `period` items
/// before them. In bytes, as the batch loads and stores it at every run
/// that could repeat: in words, the decoding thread took 2.4% more host
/// instructions on `traces/hydro.lgt` and 3.5% on
/// `traces/pointer_chase.lgt`.
#[derive(Clone, Copy)]
struct Round {
    period: u8,
    matched: u8,
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
    /// by jumps, without guards, so that every round makes the same
    /// number of data accesses.
    #[inline]
    pub(super) fn could_repeat(&self) -> bool {
        self.present & Run::CALL == 0 && self.leaving == JumpKind::Boring && self.guards_len == 0
    }

    /// Whether `later`, a run that could repeat, repeats this one: of the
    /// same block, leaving by the same side exit with the same stack
    /// pointer and as many addresses, and this one entered and left by
    /// jumps, without guards too.
    #[inline]
    fn repeated_by(&self, later: &Run) -> bool {
        self.id == later.id
            && self.exit == later.exit
            && self.sp == later.sp
            && self.present == later.present
            && self.leaving == later.leaving
            && self.guards_len == 0
            && self.addrs_len == later.addrs_len
    }
}

impl Batch {
    /// Adds `run`, which could repeat (see [`Run::could_repeat`]), and
    /// follows it round the cycle the runs before it go round again, or
    /// else finds the shortest cycle it goes round again; once a round is
    /// complete, folds it into the last run before it. A run that completes
    /// a round it was followed round is not even pushed. Returns the
    /// cycle's length when `run` completed a round of it that was folded.
    #[inline]
    pub(super) fn push_repeating(&mut self, run: Run) -> Option<usize> {
        let key = run.id.wrapping_add(1);
        let Rounds { round, recent } = self.rounds;
        self.rounds.recent.rotate_left(1);
        self.rounds.recent[MAX_PERIOD - 1] = key;
        if let Some(Round { period, matched }) = round
            && matched + 1 == period
        {
            let period = usize::from(period);
            let len = self.items.len();
            if self.repeats_item(len - period, &run) {
                if self.fold(len - period, period) {
                    return Some(period);
                }
                self.items.push(Item::Run(run));
                return None;
            }
        }
        self.items.push(Item::Run(run));
        let last = self.items.len() - 1;
        let round = match round {
            Some(Round { period, matched })
                if self.repeats_item(last - usize::from(period), &run) =>
            {
                Some(Round {
                    period,
                    matched: matched + 1,
                })
            }
            _ if recent.contains(&key) => self.find_round(&run),
            _ => None,
        };
        self.rounds.round = round;
        match round {
            // A whole round found at once.
            Some(Round { period, matched }) if matched == period => {
                let period = usize::from(period);
                self.fold(last - period, period).then_some(period)
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
        (end - period..end).all(counts).then_some(Round {
            period: period as u8,
            matched: matched as u8,
        })
    }

    /// Folds the round after item `end` of the cycle of `period` runs that
    /// item ends, runs that repeat the cycle's (see
    /// [`Batch::push_repeating`]): the items after `end`, and the last run
    /// if it was not pushed, become one more repeat of the cycle, which
    /// item `end` counts, unless it counts as many as it can already.
    /// Their addresses, the last in the batch's array, stay: the repeat's.
    /// The cycle is followed again from its start if the round was folded,
    /// and no more otherwise.
    fn fold(&mut self, end: usize, period: usize) -> bool {
        let folded = self.count_round(end, period);
        self.rounds.round = folded.then_some(Round {
            period: period as u8,
            matched: 0,
        });
        if folded {
            let kept = end + 1;
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
        folded
    }

    /// Counts up to `most` more rounds of the cycle whose round the last
    /// run completed, if it is still the last item, as many as the cycle
    /// can count; their addresses, if any, are the caller's to add. Returns
    /// how many it counted.
    pub(super) fn repeat_rounds(&mut self, most: usize) -> usize {
        let Some(Round { period, matched: 0 }) = self.rounds.round else {
            return 0;
        };
        match self.items.last_mut() {
            Some(Item::Run(run)) => {
                let counted = most.min((u32::MAX - run.repeats) as usize);
                run.repeats += counted as u32;
                run.period = period;
                counted
            }
            _ => 0,
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
    fn a_run_without_guards_like_the_one_before_repeats_it() {
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
    fn runs_with_as_many_addresses_repeat_and_keep_them_and_runs_with_guards_do_not() {
        let a = bare(3);
        let mut feed = Feed::default();
        let push = |feed: &mut Feed, guards: &[bool], addrs: &[u64]| {
            let start = feed.mark();
            let (run_guards, run_addrs) = feed.run_arrays();
            run_guards.extend_from_slice(guards);
            run_addrs.extend_from_slice(addrs);
            feed.push_run(a, start)
        };
        // Three rounds of a loop over an array: two repeats of the first,
        // whose addresses follow it.
        assert_eq!(push(&mut feed, &[], &[0x8000, 0x9000]), None);
        assert_eq!(push(&mut feed, &[], &[0x8008, 0x9008]), Some(1));
        assert_eq!(push(&mut feed, &[], &[0x8010, 0x9010]), Some(1));
        // Fewer addresses, and guards: items of their own.
        push(&mut feed, &[], &[0x8018]);
        push(&mut feed, &[true], &[0x8018]);
        push(&mut feed, &[true], &[0x8018]);
        assert_eq!(repeats(&feed), [Some(2), Some(0), Some(0), Some(0)]);
        let batch = &feed.batch;
        let (Replayed::Run(_, arrays), index) = batch.replay().next().unwrap() else {
            panic!("a run first");
        };
        assert_eq!(arrays.addrs, [0x8000, 0x9000]);
        assert_eq!(arrays.repeats(), [0x8008, 0x9008, 0x8010, 0x9010]);
        let cycle: Vec<_> = batch
            .cycle_arrays(index, arrays)
            .map(|(run, arrays)| (run.id, arrays.addrs))
            .collect();
        assert_eq!(cycle, [(3, &[0x8008, 0x9008][..])]);
        let rest: Vec<_> = batch
            .replay()
            .skip(1)
            .map(|(item, _)| match item {
                Replayed::Run(_, arrays) => (arrays.guards.to_vec(), arrays.addrs.to_vec()),
                _ => panic!("runs only"),
            })
            .collect();
        assert_eq!(
            rest,
            [
                (vec![], vec![0x8018]),
                (vec![true], vec![0x8018]),
                (vec![true], vec![0x8018])
            ]
        );
    }

    #[test]
    fn each_round_folded_tells_its_length() {
        let [a, b] = [1, 2].map(bare);
        // Loops of two blocks, without addresses, with an address in the
        // first or in the second: each round after the first tells it.
        for with_address in [None, Some(a.id), Some(b.id)] {
            let mut feed = Feed::default();
            let mut told = Vec::new();
            for round in 0..3 {
                for run in [a, b] {
                    let start = feed.mark();
                    if Some(run.id) == with_address {
                        feed.run_arrays().1.push(0x8000 + 8 * round);
                    }
                    told.push(feed.push_run(run, start));
                }
            }
            assert_eq!(told, [None, None, None, Some(2), None, Some(2)]);
            assert_eq!(repeats(&feed), [Some(0), Some(2)]);
        }
    }

    #[test]
    fn a_run_counts_the_repeats_of_its_cycle_up_to_the_most_its_count_holds() {
        let a = bare(1);
        let mut feed = fed(&[a, a]);
        let Some(Item::Run(run)) = feed.batch.items.last_mut() else {
            panic!("a run last");
        };
        run.repeats = u32::MAX - 3;
        // Rounds counted many at a time (see `RoundBytes::count_again`).
        assert_eq!(feed.repeat_rounds(2), 2);
        assert_eq!(feed.repeat_rounds(5), 1);
        assert_eq!(feed.repeat_rounds(5), 0);
        // And one at a time: the next round is an item of its own, which
        // the round after it repeats.
        feed.push_run(a, feed.mark());
        feed.push_run(a, feed.mark());
        assert_eq!(repeats(&feed), [Some(u32::MAX), Some(1)]);
    }

    #[test]
    fn a_batch_of_a_loop_over_memory_is_full_at_its_addresses() {
        let mut feed = Feed::default();
        let mut rounds = 0;
        while !feed.batch.is_full() {
            let start = feed.mark();
            feed.run_arrays().1.push(0x8000 + 8 * rounds);
            feed.push_run(bare(1), start);
            rounds += 1;
        }
        assert_eq!(feed.batch.len(), 1);
        assert_eq!(rounds as usize, super::super::BATCH_ADDRS);
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
        /// repeated after them, each repeat's addresses after the last:
        /// the batch's items, each run followed by the repeats of the cycle
        /// it ends, give them back in order, with their addresses.
        #[test]
        fn a_batch_gives_back_the_runs_it_was_given(
            pushes in proptest::collection::vec(
                (0u32..3, proptest::bool::ANY, proptest::bool::weighted(0.4), 1usize..6, 0usize..4),
                0..60,
            ),
        ) {
            // Each run's block, whether it has a stack pointer, and its
            // address, if any.
            let mut runs: Vec<(u32, bool, Option<u64>)> = Vec::new();
            let mut next_addr = 0x8000;
            let mut addr = |given: bool| {
                next_addr += 8;
                given.then_some(next_addr)
            };
            for &(id, sp, given, period, repeats) in &pushes {
                runs.push((id, sp, addr(given)));
                let cycle = runs[runs.len().saturating_sub(period)..].to_vec();
                for _ in 0..repeats {
                    runs.extend(cycle.iter().map(|&(id, sp, given)| (id, sp, addr(given.is_some()))));
                }
            }
            let mut feed = Feed::default();
            for &(id, sp, addr) in &runs {
                let start = feed.mark();
                feed.run_arrays().1.extend(addr);
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
                given.push((run.id, run.sp().is_some(), arrays.addrs.first().copied()));
                let cycle: Vec<_> = feed.batch.cycle(index).collect();
                let mut repeats = arrays.repeats().iter();
                for _ in 0..run.repeats {
                    for run in &cycle {
                        let addr = (run.addrs_len > 0).then(|| *repeats.next().unwrap());
                        given.push((run.id, run.sp().is_some(), addr));
                    }
                }
                proptest::prop_assert!(repeats.next().is_none(), "every repeat's address given back");
            }
            proptest::prop_assert_eq!(given, runs);
        }
    }
}
