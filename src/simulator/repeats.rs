//! Cycles of block runs that repeat with nothing between: a loop of a
//! block or a few, which a reader's batch gives as the cycle's runs, their
//! number of repeats and every round's addresses (see
//! [`Feed::push_run`]).
//!
//! Once the cycle goes round with every run arriving by a plain jump, the
//! next rounds do too: each run finds the stack and the context as in the
//! round before, so its arrival would change nothing (see
//! `Simulator::plain_arrival`), and the rest of the rounds are walked
//! without it: from a plan of the round, whose fetches need no I1 lookup,
//! when I1 holds every line it fetched (see [`round_plan`]).
//!
//! A cycle without data accesses, a loop that computes in registers, needs
//! not even that once such a round also fetches without an I1 miss: the
//! rest are counted at once. Why that is exact: such a round fetches the
//! same lines in the same order as the round before. If every fetch hits,
//! each line it fetches is resident and ends up at the top of its set in
//! the order of its last fetch, as after the round before, and the other
//! lines keep their order below them. So the caches' tags and order are
//! the same after the round as before it, and so is everything else but
//! the lines' use and the counts: every later round is the same round
//! again, which adds the same use to the same lines (of bytes already
//! used) and counts the same. (With data accesses, a miss in LL can end
//! the residency of a line I1 holds, which takes the I1 line's use at that
//! moment: their fetches are added in order with the accesses.)
//!
//! [`Feed::push_run`]: crate::trace::batch::Feed::push_run
//! [`round_plan`]: super::round_plan

use crate::attribution::backdate::Backdate;
use crate::cache::Caches;
use crate::cost::EventKind;
use crate::trace::BlockItem;
use crate::trace::batch::MAX_PERIOD;

use super::known_blocks::KnownBlock;
use super::stepper::Stepper;
use super::{SimError, Simulator};

impl<B: Backdate> Simulator<B> {
    /// Runs the runs of `cycle` in turn `times` more times, right after
    /// they ran: runs with no call and no return, at most [`MAX_PERIOD`] of
    /// them, each with the addresses it makes in the first repeat.
    /// `repeats` holds every repeat's addresses, round after round and run
    /// by run.
    #[inline(never)]
    pub fn repeat(
        &mut self,
        cycle: &[BlockItem],
        times: u32,
        repeats: &[u64],
    ) -> Result<(), SimError> {
        debug_assert!(cycle.len() <= MAX_PERIOD);
        let round: usize = cycle.iter().map(|item| item.run.addrs.len()).sum();
        if round == 0 {
            return self.repeat_in_registers(cycle, times);
        }
        debug_assert_eq!(repeats.len(), round * times as usize);
        let mut walked = [*cycle.first().expect("a cycle has a run"); MAX_PERIOD];
        let walked = &mut walked[..cycle.len()];
        let mut known = [None; MAX_PERIOD];
        let mut rounds = repeats.chunks_exact(round);
        while let Some(addrs) = rounds.next() {
            let mut rest = addrs;
            for (at, item) in cycle.iter().enumerate() {
                walked[at] = *item;
                (walked[at].run.addrs, rest) = rest.split_at(item.run.addrs.len());
                known[at] = self.run_again(&walked[at])?;
            }
            // A round's runs all arrived by a plain jump: so will the
            // rest's.
            if rounds.len() > 0
                && known[..cycle.len()].iter().all(Option::is_some)
                && let Some(first) = known[0]
            {
                // Past the cycle's end, the first run's block, unused.
                let blocks = known.map(|block| block.unwrap_or(first));
                let done = times as usize - rounds.len();
                let rest = &repeats[done * round..];
                return self.walk_planned(walked, &blocks[..cycle.len()], rest, round);
            }
        }
        Ok(())
    }

    /// Walks the rounds of the runs `walked` (of blocks `blocks`) whose
    /// addresses are `rest`, `round` a round, right after a round of them
    /// that arrived at every run by a plain jump: from a plan if I1 holds
    /// every line that round fetched (see [`round_plan`]), else run by
    /// run.
    ///
    /// [`round_plan`]: super::round_plan
    fn walk_planned<'a>(
        &mut self,
        walked: &mut [BlockItem<'a>],
        blocks: &[KnownBlock],
        rest: &'a [u64],
        round: usize,
    ) -> Result<(), SimError> {
        let charge_to = self.threads.current().charge_to();
        self.plan.clear();
        let caches = &self.caches;
        let planned = walked.iter().zip(blocks).all(|(item, block)| {
            self.known.plan_run(
                block,
                item.run,
                charge_to,
                |line| caches.fetch_slot(line),
                &mut self.plan,
            )
        });
        if !planned || self.plan.accesses() != round as u64 {
            for addrs in rest.chunks_exact(round) {
                let mut rest = addrs;
                for (item, block) in walked.iter_mut().zip(blocks) {
                    (item.run.addrs, rest) = rest.split_at(item.run.addrs.len());
                    self.known_walk(block, item)
                        .map_err(|mismatch| SimError::Run(mismatch.0))?;
                }
            }
            return Ok(());
        }
        let times = (rest.len() / round) as u64;
        #[cfg(test)]
        {
            self.planned_rounds += times;
        }
        let context = self.threads.current();
        let charger = self.charges.charger(self.instructions);
        let (cursor, cost) = (&mut context.cursor, &mut context.cost);
        let first = charge_to.unwrap_or(blocks[0].first);
        let now = &mut self.instructions;
        match &mut self.caches {
            Caches::Narrow(caches) => {
                let stepper = Stepper::new(caches, charger, cursor, cost, first);
                self.plan.walk(rest, stepper, charge_to, now);
            }
            Caches::Wide(caches) => {
                let stepper = Stepper::new(caches, charger, cursor, cost, first);
                self.plan.walk(rest, stepper, charge_to, now);
            }
        }
        if charge_to.is_none() {
            for &left in self.plan.lefts() {
                self.known.add_left(left, times);
            }
        }
        Ok(())
    }

    /// Runs the runs of `cycle`, which make no data access, in turn `times`
    /// more times, right after they ran (see [`Simulator::repeat`]).
    fn repeat_in_registers(&mut self, cycle: &[BlockItem], times: u32) -> Result<(), SimError> {
        let mut known = [None; MAX_PERIOD];
        let mut ran = [0; MAX_PERIOD];
        for done in 1..=times {
            let misses = self.threads.current().cost[EventKind::I1mr];
            let mut steady = true;
            for (at, item) in cycle.iter().enumerate() {
                let began = self.instructions;
                known[at] = self.run_again(item)?;
                steady &= known[at].is_some();
                ran[at] = self.instructions - began;
            }
            if steady && self.threads.current().cost[EventKind::I1mr] == misses {
                for (at, item) in cycle.iter().enumerate() {
                    if let Some(block) = &known[at] {
                        self.count_repeats(block, item, times - done, ran[at]);
                    }
                }
                break;
            }
        }
        Ok(())
    }

    /// Runs `item` again; its known block if it is one, of code with a
    /// symbol, and it arrived by a plain jump.
    fn run_again(&mut self, item: &BlockItem) -> Result<Option<KnownBlock>, SimError> {
        debug_assert!(item.call.is_none());
        if let Some(sp) = item.run.sp {
            self.threads.current().set_sp(sp);
        }
        let id = item.id as usize;
        let block = match self.known.get(id) {
            Some(block) if !block.arrival.framed => block,
            known => {
                self.unusual_run(id, known, *item)?;
                return Ok(None);
            }
        };
        // `known_run` as it is, keeping whether the arrival was plain:
        // `known_run` returning it took 1.5 to 2.1% more host instructions
        // of the simulating thread on hydro, `sort` and pointer_chase (6.5%
        // on `sort` when no longer inlined), where most runs are not
        // repeats.
        let plain = self.plain_arrival(&block);
        if !plain {
            self.arrive(block.addr, u32::from(block.first_len), Some(block.first));
        }
        self.known_walk(&block, item)
            .map_err(|mismatch| SimError::Run(mismatch.0))?;
        Ok(plain.then_some(block))
    }

    /// Counts `times` more runs of `block` like `item`'s, each of `ran`
    /// instructions, after one that arrived by a plain jump and hit I1 all
    /// through.
    fn count_repeats(&mut self, block: &KnownBlock, item: &BlockItem, times: u32, ran: u64) {
        let times = u64::from(times);
        let instrs = ran * times;
        self.instructions += instrs;
        let context = self.threads.current();
        context.cost[EventKind::Ir] += instrs;
        let charge_to = context.charge_to();
        if let Some(to) = charge_to {
            self.charges.self_cost[to.0 as usize][EventKind::Ir] += instrs;
        }
        let counted = charge_to.is_none();
        let run = item.run;
        match &mut self.caches {
            Caches::Narrow(caches) => self.known.repeat(block, run, times, counted, |line, n| {
                caches.fetch_more(line, n)
            }),
            Caches::Wide(caches) => self.known.repeat(block, run, times, counted, |line, n| {
                caches.fetch_more(line, n)
            }),
        }
    }
}
