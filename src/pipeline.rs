//! Decoding and simulating on different threads. One thread reads the
//! trace (decompression, varints, block lookup, text parsing) into batches
//! of owned items; each simulator replays every batch on a thread of its
//! own. The queues are bounded, so memory stays a few batches per
//! simulator whatever the trace's length, and a trace decoded once feeds
//! any number of configurations. Configurations that differ in LL only
//! share simulators, one per core, each LL a lane of a walk
//! ([`crate::lanes`]).

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread;

use crate::backdate::{Backdate, NoBackdate};
use crate::cache::MAX_LANES;
use crate::calltree::CallTree;
use crate::config::SimConfig;
use crate::profile::{Profile, Walked};
use crate::simulator::Simulator;
use crate::trace::block::{BlockDef, JumpKind, RunRef};
use crate::trace::{BlockItem, Event, Location, TraceError, TraceItem, TraceRead};

/// Items in a batch: big enough that handing a batch over costs little
/// per item, small enough that the queues stay a few megabytes.
const BATCH_ITEMS: usize = 4096;

/// Batches queued per simulator before the decoder waits.
const QUEUE: usize = 4;

/// What the decoder hands the simulators: items in trace order, with the
/// variable parts of block runs packed in shared arrays, each run's after
/// the previous one's. Every item is read by another core, from memory the
/// decoder wrote, so items are kept small.
struct Batch {
    items: Vec<Item>,
    /// Where each item is in the trace, for errors.
    locations: Vec<PackedLocation>,
    guards: Vec<bool>,
    addrs: Vec<u64>,
}

impl Batch {
    /// An empty batch with room for a full one's items.
    fn new() -> Batch {
        Batch {
            items: Vec::with_capacity(BATCH_ITEMS),
            locations: Vec::with_capacity(BATCH_ITEMS),
            guards: Vec::new(),
            addrs: Vec::new(),
        }
    }

    /// Empties the batch, keeping its memory.
    fn clear(&mut self) {
        self.items.clear();
        self.locations.clear();
        self.guards.clear();
        self.addrs.clear();
    }
}

enum Item {
    Event(Event),
    /// A block seen for the first time: its description, shared.
    Define(u32, Arc<BlockDef>),
    Run(Run),
}

/// One run of a block; its guards and addresses are the next
/// `guards_len` and `addrs_len` of the batch's arrays. The call, stack
/// pointer and side exit are kept where `present` says so.
struct Run {
    call: u64,
    sp: u64,
    id: u32,
    exit: u32,
    guards_len: u32,
    addrs_len: u32,
    leaving: JumpKind,
    present: u8,
}

// Half of what a run took with its options and ranges.
const _: () = assert!(std::mem::size_of::<Item>() <= 40);

impl Run {
    const CALL: u8 = 1;
    const SP: u8 = 2;
    const EXIT: u8 = 4;

    fn new(block: &BlockItem) -> Run {
        let flag = |set: bool, bit: u8| if set { bit } else { 0 };
        Run {
            call: block.call.unwrap_or(0),
            sp: block.run.sp.unwrap_or(0),
            id: block.id,
            exit: block.run.exit.unwrap_or(0),
            guards_len: block.run.guards.len() as u32,
            addrs_len: block.run.addrs.len() as u32,
            leaving: block.leaving,
            present: flag(block.call.is_some(), Run::CALL)
                | flag(block.run.sp.is_some(), Run::SP)
                | flag(block.run.exit.is_some(), Run::EXIT),
        }
    }

    fn call(&self) -> Option<u64> {
        (self.present & Run::CALL != 0).then_some(self.call)
    }

    fn sp(&self) -> Option<u64> {
        (self.present & Run::SP != 0).then_some(self.sp)
    }

    fn exit(&self) -> Option<u32> {
        (self.present & Run::EXIT != 0).then_some(self.exit)
    }
}

/// A [`Location`] in one word: lines of text traces with the top bit set,
/// offsets into binary ones without.
#[derive(Clone, Copy)]
struct PackedLocation(u64);

impl PackedLocation {
    const LINE: u64 = 1 << 63;

    fn new(location: Location) -> PackedLocation {
        let (Location::Line(value) | Location::Offset(value)) = location;
        debug_assert!(value < PackedLocation::LINE, "a location below 2^63");
        match location {
            Location::Line(line) => PackedLocation(line | PackedLocation::LINE),
            Location::Offset(offset) => PackedLocation(offset),
        }
    }

    fn get(self) -> Location {
        if self.0 & PackedLocation::LINE != 0 {
            Location::Line(self.0 & !PackedLocation::LINE)
        } else {
            Location::Offset(self.0)
        }
    }
}

/// The decoder's end of the queues.
struct Feeder {
    senders: Vec<SyncSender<Arc<Batch>>>,
    batch: Batch,
    /// The batches handed over, oldest first, to be refilled once no
    /// simulator holds them: the queues bound how many there are, and the
    /// batches' arrays are not allocated and freed again every time.
    sent: VecDeque<Arc<Batch>>,
    /// Which blocks the simulators have been told about.
    defined: Vec<bool>,
}

impl Feeder {
    /// Reads all of `reader` into batches; stops early, with no error, when
    /// every simulator has stopped (they failed: their errors tell).
    fn feed(&mut self, reader: &mut impl TraceRead) -> Result<(), TraceError> {
        while let Some(next) = reader.next_item()? {
            let item = match next {
                TraceItem::Event(event) => Item::Event(event),
                TraceItem::Block(block) => {
                    let id = block.id as usize;
                    if self.defined.len() <= id {
                        self.defined.resize(id + 1, false);
                    }
                    if !self.defined[id] {
                        self.defined[id] = true;
                        let def = Arc::new(block.def.clone());
                        self.batch.items.push(Item::Define(block.id, def));
                        // A definition cannot fail; its location is unused.
                        self.batch.locations.push(PackedLocation(0));
                    }
                    self.batch.guards.extend_from_slice(block.run.guards);
                    self.batch.addrs.extend_from_slice(block.run.addrs);
                    Item::Run(Run::new(&block))
                }
            };
            self.batch.items.push(item);
            self.batch
                .locations
                .push(PackedLocation::new(reader.location()));
            if self.batch.items.len() >= BATCH_ITEMS && !self.send() {
                return Ok(());
            }
        }
        self.send();
        Ok(())
    }

    /// Hands the batch to every simulator still running; false when none
    /// is.
    fn send(&mut self) -> bool {
        let next = self.reusable().unwrap_or_else(Batch::new);
        let batch = Arc::new(std::mem::replace(&mut self.batch, next));
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

    fn batch(&mut self, batch: &Batch) -> Result<u64, TraceError> {
        let mut accesses = 0;
        let (mut guards, mut addrs) = (&batch.guards[..], &batch.addrs[..]);
        for (item, &at) in batch.items.iter().zip(&batch.locations) {
            match item {
                Item::Event(event) => {
                    accesses += u64::from(matches!(event, Event::Data { .. }));
                    self.simulator
                        .apply(event.clone())
                        .map_err(|err| TraceError::semantic(at.get(), err))?;
                }
                Item::Define(id, def) => {
                    let id = *id as usize;
                    if self.defs.len() <= id {
                        self.defs.resize(id + 1, None);
                    }
                    self.defs[id] = Some(Arc::clone(def));
                }
                Item::Run(run) => {
                    let def = self.defs[run.id as usize]
                        .as_deref()
                        .expect("a block is defined before its first run");
                    accesses += u64::from(run.addrs_len);
                    let (run_guards, rest) = guards.split_at(run.guards_len as usize);
                    guards = rest;
                    let (run_addrs, rest) = addrs.split_at(run.addrs_len as usize);
                    addrs = rest;
                    let item = BlockItem {
                        id: run.id,
                        def,
                        run: RunRef {
                            sp: run.sp(),
                            exit: run.exit(),
                            guards: run_guards,
                            addrs: run_addrs,
                        },
                        call: run.call(),
                        leaving: run.leaving,
                    };
                    self.simulator
                        .block(&item)
                        .map_err(|err| TraceError::semantic(at.get(), err))?;
                }
            }
        }
        debug_assert!(
            guards.is_empty() && addrs.is_empty(),
            "every run's arrays replayed"
        );
        Ok(accesses)
    }

    fn run(
        mut self,
        batches: Receiver<Arc<Batch>>,
        progress: &(dyn Fn(u64) + Sync),
    ) -> Result<Walked, TraceError> {
        let mut accesses = 0;
        for batch in batches {
            accesses += self.batch(&batch)?;
            progress(self.simulator.instructions() + accesses);
        }
        Ok((self.finish)(self.simulator))
    }
}

/// Simulates `configs`, which differ in LL only, in one walk of the
/// batches.
fn simulate_batches(
    configs: Vec<SimConfig>,
    detached: bool,
    batches: Receiver<Arc<Batch>>,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Walked, TraceError> {
    if configs[0].backdate() {
        walk(configs, CallTree::new, detached, batches, progress)
    } else {
        walk(configs, || NoBackdate, detached, batches, progress)
    }
}

/// [`simulate_batches`] with back-datings made by `backdate`: lanes for
/// several configurations, a plain simulator for one.
fn walk<B: Backdate>(
    mut configs: Vec<SimConfig>,
    backdate: impl Fn() -> B,
    detached: bool,
    batches: Receiver<Arc<Batch>>,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Walked, TraceError> {
    if configs.len() > 1 {
        let simulator = Simulator::lanes(configs, backdate);
        Replay::new(simulator, detached, Simulator::finish_lanes).run(batches, progress)
    } else {
        let simulator = Simulator::new(configs.swap_remove(0), backdate());
        Replay::new(simulator, detached, Simulator::walked).run(batches, progress)
    }
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
/// walk (see [`walks`]) simulated on a thread of its own. `progress` hears
/// the events the first configuration has simulated, once per batch. Gives
/// the reader back (for what it noticed on the way) with one profile or
/// error per configuration; a decoding error stops them all.
pub fn simulate_each<R: TraceRead + Send>(
    reader: R,
    configs: &[SimConfig],
    progress: &(dyn Fn(u64) + Sync),
) -> Result<(R, Vec<Result<Profile, TraceError>>), TraceError> {
    let walks = walks(configs, lanes_per_walk(configs.len()));
    simulate_walks(reader, configs, &walks, progress)
}

/// [`simulate_each`] with the configurations in `walks`.
fn simulate_walks<R: TraceRead + Send>(
    mut reader: R,
    configs: &[SimConfig],
    walks: &[Vec<usize>],
    progress: &(dyn Fn(u64) + Sync),
) -> Result<(R, Vec<Result<Profile, TraceError>>), TraceError> {
    let detached = reader.detached_data();
    let (senders, receivers): (Vec<_>, Vec<_>) = walks.iter().map(|_| sync_channel(QUEUE)).unzip();
    let quiet = |_: u64| {};
    let walked = thread::scope(|scope| {
        let workers: Vec<_> = walks
            .iter()
            .zip(receivers)
            .enumerate()
            .map(|(index, (walk, batches))| {
                let progress: &(dyn Fn(u64) + Sync) = if index == 0 { progress } else { &quiet };
                let configs = walk.iter().map(|&at| configs[at].clone()).collect();
                thread::Builder::new()
                    .name(format!("simulate-{index}"))
                    .spawn_scoped(scope, move || {
                        simulate_batches(configs, detached, batches, progress)
                    })
                    .expect("a simulator thread starts")
            })
            .collect();
        let mut feeder = Feeder {
            senders,
            batch: Batch::new(),
            sent: VecDeque::new(),
            defined: Vec::new(),
        };
        let fed = feeder.feed(&mut reader);
        drop(feeder);
        let walked: Vec<_> = workers
            .into_iter()
            .map(|worker| worker.join().expect("a simulator thread does not panic"))
            .collect();
        fed.map(|()| walked)
    })?;
    let mut profiles: Vec<Option<Result<Profile, TraceError>>> =
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
    use crate::trace::TextReader;

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
    fn packed_locations_keep_lines_and_offsets_apart() {
        for location in [
            Location::Line(1),
            Location::Line((1 << 63) - 1),
            Location::Offset(0),
            Location::Offset((1 << 63) - 1),
        ] {
            assert_eq!(PackedLocation::new(location).get(), location);
        }
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
            let Err(err) = profile else {
                panic!("an access before any instruction is an error");
            };
            assert_eq!(err.location, Location::Line(2));
            assert!(
                err.to_string().contains("no preceding instruction"),
                "{err}"
            );
        }
    }
}
