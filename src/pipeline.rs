//! Decoding and simulating on different threads. One thread reads the
//! trace (decompression, varints, block lookup, text parsing) into batches
//! of owned items; each simulator replays every batch on a thread of its
//! own. The queues are bounded, so memory stays a few batches per
//! simulator whatever the trace's length, and a trace decoded once feeds
//! any number of configurations. Configurations that differ in LL only
//! share simulators, one per core, each LL a lane of a walk
//! ([`crate::attribution::lanes`]).

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread;

use crate::attribution::backdate::{Backdate, NoBackdate};
use crate::attribution::calltree::CallTree;
use crate::cache::{MAX_LANES, NoMemory};
use crate::config::SimConfig;
use crate::profile::{Profile, Walked};
use crate::simulator::{RunError, SimError, Simulator};
use crate::trace::batch::{Batch, MAX_PERIOD, Replayed, Run, RunArrays};
use crate::trace::block::BlockDef;
use crate::trace::{Event, Feed, TraceError, TraceRead};

/// Batches queued per simulator before the decoder waits.
const QUEUE: usize = 4;

/// The decoder's end of the queues.
struct Feeder {
    senders: Vec<SyncSender<Arc<Batch>>>,
    feed: Feed,
    /// The batches handed over, oldest first, to be refilled once no
    /// simulator holds them: the queues bound how many there are, and the
    /// batches' arrays are not allocated and freed again every time.
    sent: VecDeque<Arc<Batch>>,
}

impl Feeder {
    /// Reads all of `reader` into batches; stops early, with no error, when
    /// every simulator has stopped (they failed: their errors tell). What
    /// was read before the trace's end, or before an error, is handed over
    /// too, so that the simulators meet every item an event-by-event reader
    /// gives first.
    fn feed(&mut self, reader: &mut impl TraceRead) -> Result<(), TraceError> {
        loop {
            let filled = reader.fill(&mut self.feed);
            let running = self.feed.batch.is_empty() || self.send();
            if !filled? || !running {
                return Ok(());
            }
        }
    }

    /// Hands the batch to every simulator still running; false when none
    /// is.
    fn send(&mut self) -> bool {
        let next = self.reusable().unwrap_or_default();
        let batch = Arc::new(std::mem::replace(&mut self.feed.batch, next));
        self.senders
            .retain(|sender| sender.send(Arc::clone(&batch)).is_ok());
        self.sent.push_back(batch);
        !self.senders.is_empty()
    }

    /// The oldest batch handed over, emptied, if every simulator is done
    /// with it (only this thread makes new references to a batch).
    fn reusable(&mut self) -> Option<Batch> {
        if Arc::strong_count(self.sent.front()?) > 1 {
            return None;
        }
        let mut batch = Arc::try_unwrap(self.sent.pop_front()?).ok()?;
        batch.clear();
        Some(batch)
    }
}

/// The stack of a simulating thread, which symbolizes what it runs:
/// addr2line reads nested inlined functions recursively, and 2 MiB (the
/// default) took a reviewer's 5,000 levels past its end. Only the pages a
/// thread touches take memory.
const SIMULATOR_STACK: usize = 64 << 20;

/// Replays batches into a simulator.
struct Replay<B: Backdate> {
    simulator: Simulator<B>,
    defs: Vec<Option<Arc<BlockDef>>>,
    /// Ends the simulation.
    finish: fn(Simulator<B>) -> Walked,
}

impl<B: Backdate> Replay<B> {
    /// Replays into `simulator`, ended by `finish`; data accesses may come
    /// without an instruction if `detached`.
    fn new(
        mut simulator: Simulator<B>,
        detached: bool,
        finish: fn(Simulator<B>) -> Walked,
    ) -> Replay<B> {
        simulator.set_detached_data(detached);
        Replay {
            simulator,
            defs: Vec::new(),
            finish,
        }
    }

    /// Goes `times` more times round the cycle of runs that `batch`'s
    /// item `index`, replayed with `arrays`, ends.
    #[inline(never)]
    fn repeat<'a>(
        &mut self,
        batch: &'a Batch,
        index: usize,
        arrays: RunArrays<'a>,
        times: u32,
    ) -> Result<(), SimError> {
        let defs = &self.defs;
        let view = |(run, arrays): (&Run, RunArrays<'a>)| run.view(defined(defs, run.id), arrays);
        let mut runs = batch.cycle_arrays(index, arrays);
        let first = view(runs.next().expect("a cycle has a run"));
        let mut cycle = [first; MAX_PERIOD];
        let mut period = 1;
        for (slot, run) in cycle[1..].iter_mut().zip(runs) {
            *slot = view(run);
            period += 1;
        }
        self.simulator
            .repeat(&cycle[..period], times, arrays.repeats())
    }

    fn batch(&mut self, batch: &Batch) -> Result<u64, TraceError> {
        let mut accesses = 0;
        for (item, index) in batch.replay() {
            let at = || batch.location(index);
            match item {
                Replayed::Event(event) => {
                    accesses += u64::from(matches!(event, Event::Data { .. }));
                    self.simulator
                        .apply(event.clone())
                        .map_err(|err| TraceError::semantic(at(), err))?;
                }
                Replayed::Define(id, def) => {
                    let id = id as usize;
                    if self.defs.len() <= id {
                        self.defs.resize(id + 1, None);
                    }
                    self.defs[id] = Some(Arc::clone(def));
                }
                Replayed::Run(run, arrays) => {
                    let def = defined(&self.defs, run.id);
                    accesses += u64::from(run.addrs_len);
                    let item = run.view(def, arrays);
                    self.simulator
                        .block(&item)
                        .map_err(|err| TraceError::semantic(at(), err))?;
                    if run.repeats > 0 {
                        accesses += arrays.repeats().len() as u64;
                        self.repeat(batch, index, arrays, run.repeats)
                            .map_err(|err| TraceError::semantic(at(), err))?;
                    }
                }
            }
        }
        Ok(accesses)
    }

    fn run(
        mut self,
        batches: Receiver<Arc<Batch>>,
        progress: &(dyn Fn(u64) + Sync),
    ) -> Result<Walked, RunError> {
        let mut accesses = 0;
        for batch in batches {
            accesses += self.batch(&batch)?;
            progress(self.simulator.instructions() + accesses);
        }
        Ok((self.finish)(self.simulator))
    }
}

/// The description of block `id` in `defs`, which a batch gave before its
/// first run.
fn defined(defs: &[Option<Arc<BlockDef>>], id: u32) -> &BlockDef {
    defs[id as usize]
        .as_deref()
        .expect("a block is defined before its first run")
}

/// The first of `walked`'s errors in reading or simulating the trace.
fn first_trace_error(walked: Vec<Result<Walked, RunError>>) -> Option<TraceError> {
    walked.into_iter().find_map(|walk| match walk {
        Err(RunError::Trace(err)) => Some(err),
        Ok(_) | Err(RunError::Memory(_) | RunError::NoThread(_)) => None,
    })
}

/// Simulates `configs`, which differ in LL only, in one walk of the
/// batches, once `started` has heard whether its caches could be made.
fn simulate_batches(
    configs: Vec<SimConfig>,
    detached: bool,
    started: SyncSender<Option<NoMemory>>,
    batches: Receiver<Arc<Batch>>,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Walked, RunError> {
    let walk = Walk {
        detached,
        started,
        batches,
        progress,
    };
    if configs[0].backdate() {
        walk.run(configs, CallTree::new)
    } else {
        walk.run(configs, || NoBackdate)
    }
}

/// What a walk's thread is given besides its configurations.
struct Walk<'a> {
    detached: bool,
    /// Hears `None` once the walk's caches are made, or the memory the host
    /// refused for them.
    started: SyncSender<Option<NoMemory>>,
    batches: Receiver<Arc<Batch>>,
    progress: &'a (dyn Fn(u64) + Sync),
}

impl Walk<'_> {
    /// Simulates `configs` with back-datings made by `backdate`: lanes for
    /// several configurations, a plain simulator for one.
    fn run<B: Backdate>(
        self,
        mut configs: Vec<SimConfig>,
        backdate: impl Fn() -> B,
    ) -> Result<Walked, RunError> {
        let Walk {
            detached,
            started,
            batches,
            progress,
        } = self;
        if configs.len() > 1 {
            let simulator = tell(started, Simulator::lanes(configs, backdate))?;
            Replay::new(simulator, detached, Simulator::finish_lanes).run(batches, progress)
        } else {
            let simulator = tell(started, Simulator::new(configs.swap_remove(0), backdate()))?;
            Replay::new(simulator, detached, Simulator::walked).run(batches, progress)
        }
    }
}

/// Tells the decoder, through `started`, whether the simulator could be
/// made. The sender goes with it, so that the decoder, which waits for
/// every walk's word, also sees a walk that never gave one.
fn tell<S>(
    started: SyncSender<Option<NoMemory>>,
    made: Result<S, NoMemory>,
) -> Result<S, NoMemory> {
    // The decoder is there to hear it: it reads no trace before every
    // walk has spoken.
    let _ = started.send(made.as_ref().err().copied());
    made
}

/// The configurations in walks: those that differ in LL only share one,
/// up to `per_walk` of them (at most [`MAX_LANES`]); one collecting stack
/// samples walks alone. A group too large for one walk is dealt out in
/// turn, so that each walk gets small and large LLs alike (the small ones
/// miss more, and cost more). Each walk lists its configurations' indices;
/// the first walk holds the first configuration.
fn walks(configs: &[SimConfig], per_walk: usize) -> Vec<Vec<usize>> {
    let per_walk = per_walk.clamp(1, MAX_LANES);
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for (index, config) in configs.iter().enumerate() {
        let shares = |group: &&mut Vec<usize>| {
            let first = &configs[group[0]];
            first.same_but_ll(config) && !first.stack_samples() && !config.stack_samples()
        };
        match groups.iter_mut().find(shares) {
            Some(group) => group.push(index),
            None => groups.push(vec![index]),
        }
    }
    let mut walks = Vec::new();
    for group in groups {
        let count = group.len().div_ceil(per_walk);
        let mut dealt = vec![Vec::new(); count];
        for (turn, index) in group.into_iter().enumerate() {
            dealt[turn % count].push(index);
        }
        walks.extend(dealt);
    }
    walks
}

/// How many configurations share a walk: enough for one walk per core.
/// Lanes save the work their configurations share, but an LL-heavy trace
/// spends most of its time in each lane's own LL, which only more cores
/// run faster.
fn lanes_per_walk(configs: usize) -> usize {
    let cores = thread::available_parallelism().map_or(1, usize::from);
    configs.div_ceil(cores)
}

/// Simulates `reader` once per configuration: decoded on one thread, each
/// walk (configurations that differ in LL only share one, up to one walk
/// per core) simulated on a thread of its own. `progress` hears
/// the events the first configuration has simulated, once per batch. Gives
/// the reader back (for what it noticed on the way) with one profile or
/// error per configuration; a decoding error stops them all.
pub fn simulate_each<R: TraceRead + Send>(
    reader: R,
    configs: &[SimConfig],
    progress: &(dyn Fn(u64) + Sync),
) -> Result<(R, Vec<Result<Profile, RunError>>), TraceError> {
    let walks = walks(configs, lanes_per_walk(configs.len()));
    simulate_walks(reader, configs, &walks, progress)
}

/// [`simulate_each`] with the configurations in `walks`.
fn simulate_walks<R: TraceRead + Send>(
    mut reader: R,
    configs: &[SimConfig],
    walks: &[Vec<usize>],
    progress: &(dyn Fn(u64) + Sync),
) -> Result<(R, Vec<Result<Profile, RunError>>), TraceError> {
    let detached = reader.detached_data();
    let (senders, receivers): (Vec<_>, Vec<_>) = walks.iter().map(|_| sync_channel(QUEUE)).unzip();
    let (started, starts) = sync_channel(walks.len());
    let quiet = |_: u64| {};
    let (walked, refused) = thread::scope(|scope| {
        let spawned: std::io::Result<Vec<_>> = walks
            .iter()
            .zip(receivers)
            .enumerate()
            .map(|(index, (walk, batches))| {
                let progress: &(dyn Fn(u64) + Sync) = if index == 0 { progress } else { &quiet };
                let configs = walk.iter().map(|&at| configs[at].clone()).collect();
                let started = started.clone();
                thread::Builder::new()
                    .name(format!("simulate-{index}"))
                    .stack_size(SIMULATOR_STACK)
                    .spawn_scoped(scope, move || {
                        simulate_batches(configs, detached, started, batches, progress)
                    })
            })
            .collect();
        drop(started);
        let workers = match spawned {
            Ok(workers) => workers,
            // The walks that started end when their queues close, as the
            // senders go with this closure.
            Err(err) => return Ok((Vec::new(), Some(RunError::NoThread(err.to_string())))),
        };
        // Every walk's caches are made before the trace is read: if the
        // host refuses the memory of one, the run fails at once, not once
        // the others have simulated the whole trace.
        let refused = starts.iter().flatten().next().map(RunError::Memory);
        let mut feeder = Feeder {
            senders,
            feed: Feed::default(),
            sent: VecDeque::new(),
        };
        let fed = match refused {
            None => feeder.feed(&mut reader),
            Some(_) => Ok(()),
        };
        drop(feeder);
        let walked: Vec<Result<Walked, RunError>> = workers
            .into_iter()
            .map(|worker| worker.join().expect("a simulator thread does not panic"))
            .collect();
        match fed {
            Ok(()) => Ok((walked, refused)),
            // The simulators met everything read before the reading error:
            // a problem they found there comes first in the trace, and is
            // the one told whichever thread got there first.
            Err(err) => Err(first_trace_error(walked).unwrap_or(err)),
        }
    })?;
    if let Some(refused) = refused {
        let profiles = configs.iter().map(|_| Err(refused.clone())).collect();
        return Ok((reader, profiles));
    }
    let mut profiles: Vec<Option<Result<Profile, RunError>>> =
        configs.iter().map(|_| None).collect();
    for (walk, walked) in walks.iter().zip(walked) {
        match walked {
            Ok(walked) => {
                for (&at, profile) in walk.iter().zip(walked.into_profiles()) {
                    profiles[at] = Some(Ok(profile));
                }
            }
            Err(err) => {
                for &at in walk {
                    profiles[at] = Some(Err(err.clone()));
                }
            }
        }
    }
    let profiles = profiles
        .into_iter()
        .map(|profile| profile.expect("every configuration walked"))
        .collect();
    Ok((reader, profiles))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cost::EventKind;
    use crate::simulator::simulate;
    use crate::trace::{Location, TextReader};

    /// A loop over a 16 KiB array, long enough for several batches, with a
    /// call in every round.
    fn trace() -> String {
        let mut text = String::from(
            "linegrind-trace text 1\nfn 1000 1100 main t.c 1\nfn 2000 2100 leaf t.c 9\n",
        );
        for i in 0..6000u64 {
            text += &format!(
                "i 1000 4\nr {:x} 8\ni 1004 4\nw {:x} 4\ni 1008 5\ncall 2000\n\
                 i 2000 4\nr {:x} 8\ni 2004 1\nret\n",
                0x10000 + i * 8 % 16384,
                0x90000 + i * 64,
                0x200000 + i * 4096 % 1048576,
            );
        }
        text
    }

    fn config(l1: &str, ll: &str, backdate: bool) -> SimConfig {
        let l1 = l1.parse().unwrap();
        SimConfig::new(l1, l1, ll.parse().unwrap(), true, backdate).unwrap()
    }

    #[test]
    fn each_configuration_simulates_as_alone() {
        let text = trace();
        for backdate in [true, false] {
            let configs = [
                config("32768,8,64", "8388608,16,64", backdate),
                config("4096,2,64", "65536,4,64", backdate),
                config("32768,8,64", "65536,2,64", backdate),
                config("32768,8,64", "262144,4,64", backdate),
            ];
            let walks = walks(&configs, MAX_LANES);
            assert_eq!(walks, [vec![0, 2, 3], vec![1]]);
            let (_, profiles) =
                simulate_walks(TextReader::new(text.as_bytes()), &configs, &walks, &|_| {})
                    .unwrap();
            for (config, profile) in configs.iter().zip(profiles) {
                let alone =
                    simulate(&mut TextReader::new(text.as_bytes()), config.clone()).unwrap();
                let profile = profile.unwrap();
                assert_eq!(profile.config, alone.config);
                assert_eq!(profile.self_cost, alone.self_cost);
                assert_eq!(profile.arcs, alone.arcs);
                assert_eq!(profile.tree, alone.tree);
                assert!(profile.totals[EventKind::DLmr] > 0);
            }
        }
    }

    #[test]
    fn walks_share_by_ll_up_to_their_size_and_keep_stack_samples_alone() {
        let configs = [
            config("32768,8,64", "8388608,16,64", true),
            config("4096,2,64", "65536,4,64", true),
            config("32768,8,64", "65536,2,64", true),
            config("32768,8,64", "262144,4,64", true),
        ];
        assert_eq!(walks(&configs, 2), [vec![0, 3], vec![2], vec![1]]);
        assert_eq!(walks(&configs, 1), [vec![0], vec![2], vec![3], vec![1]]);
        let mut sampled = configs.to_vec();
        sampled[0] = sampled[0].clone().with_stack_samples(true).unwrap();
        assert_eq!(walks(&sampled, 4), [vec![0], vec![1], vec![2, 3]]);
    }

    #[test]
    fn errors_carry_their_line_and_stop_every_simulator() {
        let mut text = trace();
        text += "r 10 8 8\n";
        let lines = text.lines().count() as u64;
        let configs = [SimConfig::default(), SimConfig::default()];
        let together = walks(&configs, MAX_LANES);
        let Err(err) = simulate_walks(
            TextReader::new(text.as_bytes()),
            &configs,
            &together,
            &|_| {},
        ) else {
            panic!("a syntax error is an error");
        };
        assert_eq!(err.location, Location::Line(lines));

        let text = "linegrind-trace text 1\nr 10 8\n";
        let (_, profiles) = simulate_walks(
            TextReader::new(text.as_bytes()),
            &configs,
            &together,
            &|_| {},
        )
        .unwrap();
        for profile in profiles {
            let Err(RunError::Trace(err)) = profile else {
                panic!("an access before any instruction is an error of the trace");
            };
            assert_eq!(err.location, Location::Line(2));
            assert!(
                err.to_string().contains("no preceding instruction"),
                "{err}"
            );
        }
    }

    /// The decoder reads ahead of the simulators, within a batch and by
    /// whole batches: an error it meets there must not hide an earlier one
    /// that only simulating finds.
    #[test]
    fn an_error_simulating_is_told_before_a_later_error_reading() {
        let text = "linegrind-trace text 1\nr 10 8\ni 1000 4\nnot an event\n";
        let Err(alone) = simulate(&mut TextReader::new(text.as_bytes()), SimConfig::default())
        else {
            panic!("an access before any instruction is an error of the trace");
        };
        let configs = [
            SimConfig::default(),
            config("4096,2,64", "65536,4,64", true),
        ];
        for walks in [walks(&configs, MAX_LANES), walks(&configs, 1)] {
            let Err(err) =
                simulate_walks(TextReader::new(text.as_bytes()), &configs, &walks, &|_| {})
            else {
                panic!("the trace has errors");
            };
            assert_eq!(err.location, Location::Line(2));
            assert_eq!(err.to_string(), alone.to_string());
        }
    }
}
