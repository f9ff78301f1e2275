//! Batches: trace items decoded on one thread for simulators on others.
//!
//! Every item is read by another core, from memory the decoding core
//! wrote, so items are small: a block run is 40 bytes (its block, and the
//! call, stack pointer and side exit where present), and its guards and
//! addresses follow the previous run's in two arrays shared by the batch.
//! A reader fills batches through a [`Feed`], item by item
//! ([`Feed::push_item`]), or, for binary traces, straight from the trace's
//! encoding ([`crate::trace::binary::BinaryReader`]). Runs that go round a
//! cycle of runs again, a loop, are counted as repeats of the cycle rather
//! than kept (`batch/rounds.rs`).

use std::sync::Arc;

use super::block::{BlockDef, JumpKind, RunRef};
use super::{BlockItem, Event, Location, TraceItem};

mod rounds;

pub use rounds::MAX_PERIOD;
use rounds::Rounds;

/// Items in a batch: big enough that handing a batch over, which wakes
/// the thread waiting for it, costs little per item (4,096 took `sort` 8%
/// longer on two cores), small enough that the queues stay a few
/// megabytes.
pub const BATCH_ITEMS: usize = 16_384;

/// Addresses in a batch, past which it is full whatever its items: a loop
/// that touches memory folds into few items (see [`Feed::push_run`]) but
/// keeps every address. A batch of this many (256 KiB) is still in the
/// host's L2 when the simulator reads it on the same core; four times
/// as many took hydro 2.5% longer pinned to one CPU.
pub const BATCH_ADDRS: usize = 32_768;

/// Items in trace order, with the variable parts of block runs packed in
/// shared arrays, each run's after the previous one's, and the events and
/// block descriptions, which own memory, apart: items are plain data, and
/// a batch empties without going through them.
pub struct Batch {
    items: Vec<Item>,
    events: Vec<Event>,
    defines: Vec<(u32, Arc<BlockDef>)>,
    /// Where the items are in the trace, for errors: spans of items read
    /// at one location (a binary trace's chunk, a text trace's line), each
    /// the index of its first item and the location; an item is in the
    /// last span that starts at or before it.
    locations: Vec<(u32, PackedLocation)>,
    guards: Vec<bool>,
    addrs: Vec<u64>,
    /// The cycle of runs the last items go round again, and which blocks
    /// the last runs ran (see [`rounds`]).
    rounds: Rounds,
}

/// One item of a batch.
#[derive(Clone, Copy)]
enum Item {
    /// The next of the batch's events.
    Event,
    /// A block seen for the first time: the next of the batch's
    /// descriptions.
    Define,
    Run(Run),
}

/// An item as it is replayed, with what the batch keeps of it apart.
#[derive(Debug)]
pub enum Replayed<'a> {
    Event(&'a Event),
    /// A block seen for the first time: its number and description.
    Define(u32, &'a Arc<BlockDef>),
    Run(&'a Run, RunArrays<'a>),
}

/// One run of a block; its guards and addresses are the next
/// `guards_len` and `addrs_len` of the batch's arrays. The call, stack
/// pointer and side exit are kept where `present` says so. The `period`
/// runs that end with it (items of the batch, this one the last) repeat
/// `repeats` more times right after it, without calls, each making as many
/// data accesses as in the first round, whose addresses follow this run's
/// in the array, round after round (see [`Feed::push_run`]).
#[derive(Clone, Copy, Debug)]
pub struct Run {
    call: u64,
    sp: u64,
    pub id: u32,
    exit: u32,
    guards_len: u32,
    pub addrs_len: u32,
    pub repeats: u32,
    leaving: JumpKind,
    present: u8,
    period: u8,
}

// Half of what a run took with its options and ranges.
const _: () = assert!(std::mem::size_of::<Item>() <= 40);

impl Run {
    const CALL: u8 = 1;
    const SP: u8 = 2;
    const EXIT: u8 = 4;

    /// The run `head`, whose guards and addresses were added to `batch`'s
    /// arrays since `start`.
    #[inline]
    fn new(head: RunHead, start: RunMark, batch: &Batch) -> Run {
        let flag = |set: bool, bit: u8| if set { bit } else { 0 };
        Run {
            call: head.call.unwrap_or(0),
            sp: head.sp.unwrap_or(0),
            id: head.id,
            exit: head.exit.unwrap_or(0),
            guards_len: (batch.guards.len() - start.guards) as u32,
            addrs_len: (batch.addrs.len() - start.addrs) as u32,
            repeats: 0,
            period: 1,
            leaving: head.leaving,
            present: flag(head.call.is_some(), Run::CALL)
                | flag(head.sp.is_some(), Run::SP)
                | flag(head.exit.is_some(), Run::EXIT),
        }
    }

    /// The call that enters the run, if any.
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
#[derive(Clone, Copy, PartialEq, Eq)]
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

impl Batch {
    /// An empty batch with room for a full one's items.
    pub fn new() -> Batch {
        Batch {
            items: Vec::with_capacity(BATCH_ITEMS),
            events: Vec::new(),
            defines: Vec::new(),
            locations: Vec::new(),
            guards: Vec::new(),
            addrs: Vec::new(),
            rounds: Rounds::default(),
        }
    }

    /// Empties the batch, keeping its memory.
    pub fn clear(&mut self) {
        self.items.clear();
        self.events.clear();
        self.defines.clear();
        self.locations.clear();
        self.guards.clear();
        self.addrs.clear();
        self.rounds = Rounds::default();
    }

    /// Number of items.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether the batch holds no item.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Whether the batch is full: the reader hands it over.
    #[inline]
    pub fn is_full(&self) -> bool {
        self.items.len() >= BATCH_ITEMS || self.addrs.len() >= BATCH_ADDRS
    }

    /// The items in order, each with its index for [`Batch::location`].
    pub fn replay(&self) -> impl Iterator<Item = (Replayed<'_>, usize)> {
        let (mut guards, mut addrs) = (&self.guards[..], &self.addrs[..]);
        let (mut events, mut defines) = (self.events.iter(), self.defines.iter());
        // Inlined into the simulating thread's batch loop: left out of line
        // once it split off a cycle's repeats, it took 11% more of that
        // thread's host instructions on `traces/sort.lgt`.
        self.items.iter().enumerate().map(
            #[inline(always)]
            move |(index, item)| {
                let replayed = match item {
                    Item::Run(run) => {
                        let (run_guards, rest) = guards.split_at(run.guards_len as usize);
                        guards = rest;
                        let (run_addrs, rest) = addrs.split_at(run.addrs_len as usize);
                        addrs = rest;
                        let mut repeats: &[u64] = &[];
                        if run.repeats > 0 {
                            (repeats, addrs) = self.split_repeats(index, addrs);
                        }
                        let arrays = RunArrays {
                            guards: run_guards,
                            addrs: run_addrs,
                            repeats,
                        };
                        Replayed::Run(run, arrays)
                    }
                    Item::Event => Replayed::Event(events.next().expect("an event per item")),
                    Item::Define => {
                        let (id, def) = defines.next().expect("a description per item");
                        Replayed::Define(*id, def)
                    }
                };
                (replayed, index)
            },
        )
    }

    /// Splits `addrs`, the addresses after those of run item `index`,
    /// which repeats the cycle it ends, into its repeats' and the rest. Out
    /// of line, so that the replay of the other items, inlined into the
    /// batch loop, stays small.
    #[inline(never)]
    fn split_repeats<'a>(&self, index: usize, addrs: &'a [u64]) -> (&'a [u64], &'a [u64]) {
        let round: usize = self.cycle(index).map(|run| run.addrs_len as usize).sum();
        let repeats = match &self.items[index] {
            Item::Run(run) => run.repeats as usize,
            _ => 0,
        };
        addrs.split_at(round * repeats)
    }

    /// The runs of the cycle that run item `index` ends and repeats (see
    /// [`Run`]), in order: it alone unless it repeats more than itself.
    /// They have no guards. None for an item not a run.
    pub fn cycle(&self, index: usize) -> impl Iterator<Item = &Run> {
        let period = match &self.items[index] {
            Item::Run(run) => usize::from(run.period),
            _ => 1,
        };
        self.items[index + 1 - period..=index]
            .iter()
            .filter_map(|item| match item {
                Item::Run(run) => Some(run),
                _ => None,
            })
    }

    /// The runs of the cycle that run item `index`, replayed with `arrays`,
    /// ends and repeats, each with the addresses it makes in the first
    /// repeat: the cycle's runs as [`Batch::cycle`] gives them.
    pub fn cycle_arrays<'a>(
        &'a self,
        index: usize,
        arrays: RunArrays<'a>,
    ) -> impl Iterator<Item = (&'a Run, RunArrays<'a>)> {
        let mut rest = arrays.repeats;
        self.cycle(index).map(move |run| {
            let (addrs, after) = rest.split_at(run.addrs_len as usize);
            rest = after;
            let arrays = RunArrays {
                guards: &[],
                addrs,
                repeats: &[],
            };
            (run, arrays)
        })
    }

    /// Where item `index` was read: the location of its span. A block's
    /// description, which cannot fail, may lie before the first span.
    pub fn location(&self, index: usize) -> Location {
        let after = self
            .locations
            .partition_point(|&(first, _)| first as usize <= index);
        match after.checked_sub(1) {
            Some(span) => self.locations[span].1.get(),
            None => Location::Offset(0),
        }
    }
}

impl Default for Batch {
    fn default() -> Batch {
        Batch::new()
    }
}

/// A run's guards and addresses, in its batch's arrays.
#[derive(Clone, Copy, Debug, Default)]
pub struct RunArrays<'a> {
    guards: &'a [bool],
    addrs: &'a [u64],
    /// For a run that ends a cycle and repeats it, the addresses of the
    /// repeats, round after round and run by run; else none.
    repeats: &'a [u64],
}

impl<'a> RunArrays<'a> {
    /// The addresses of the repeats of the cycle the run ends (see
    /// [`Run`]), round after round and run by run; none unless the run
    /// repeats.
    pub fn repeats(&self) -> &'a [u64] {
        self.repeats
    }
}

impl Run {
    /// The run as the simulator takes it, with its arrays.
    pub fn view<'a>(&self, def: &'a BlockDef, arrays: RunArrays<'a>) -> BlockItem<'a> {
        BlockItem {
            id: self.id,
            def,
            run: RunRef {
                sp: self.sp(),
                exit: self.exit(),
                guards: arrays.guards,
                addrs: arrays.addrs,
            },
            call: self.call(),
            leaving: self.leaving,
        }
    }
}

/// Where a reader puts what it decodes: the batch being filled, and which
/// blocks the simulators have been told about.
#[derive(Default)]
pub struct Feed {
    pub batch: Batch,
    defined: Vec<bool>,
}

impl Feed {
    /// Adds `item`, whose location follows with [`Feed::locate`].
    pub fn push_item(&mut self, item: TraceItem) {
        match item {
            TraceItem::Event(event) => self.add_event(event),
            TraceItem::Block(block) => {
                self.define(block.id, || Arc::new(block.def.clone()));
                let start = self.mark();
                self.batch.guards.extend_from_slice(block.run.guards);
                self.batch.addrs.extend_from_slice(block.run.addrs);
                let head = RunHead {
                    id: block.id,
                    call: block.call,
                    sp: block.run.sp,
                    exit: block.run.exit,
                    leaving: block.leaving,
                };
                // Each its own item, which `locate` gives its location.
                let run = Run::new(head, start, &self.batch);
                self.batch.push_other(Item::Run(run));
            }
        }
    }

    /// Gives the item pushed last the `location` it was read at.
    pub fn locate(&mut self, location: Location) {
        self.locate_from(self.batch.items.len() - 1, location);
    }

    /// Gives the items pushed from now on, until the next location is
    /// given, the `location` they are read at.
    #[inline]
    pub fn locate_next(&mut self, location: Location) {
        self.locate_from(self.batch.items.len(), location);
    }

    /// Starts a span of items read at `location` at item `first`, unless
    /// the last span is at the same location.
    fn locate_from(&mut self, first: usize, location: Location) {
        let packed = PackedLocation::new(location);
        let locations = &mut self.batch.locations;
        if locations.last().is_none_or(|&(_, last)| last != packed) {
            locations.push((first as u32, packed));
        }
    }

    /// Adds `event`, read at `location`.
    pub fn push_event(&mut self, event: Event, location: Location) {
        self.add_event(event);
        self.locate(location);
    }

    fn add_event(&mut self, event: Event) {
        self.batch.push_other(Item::Event);
        self.batch.events.push(event);
    }

    /// Tells the simulators about block `id`, made by `def`, unless they
    /// know it already.
    #[inline]
    pub fn define(&mut self, id: u32, def: impl FnOnce() -> Arc<BlockDef>) {
        let index = id as usize;
        if self.defined.get(index).copied().unwrap_or(false) {
            return;
        }
        if self.defined.len() <= index {
            self.defined.resize(index + 1, false);
        }
        self.defined[index] = true;
        // A definition cannot fail: it needs no location.
        self.batch.push_other(Item::Define);
        self.batch.defines.push((id, def()));
    }

    /// Where the next run's guards and addresses will start in the
    /// batch's arrays.
    #[inline]
    pub fn mark(&self) -> RunMark {
        RunMark {
            guards: self.batch.guards.len(),
            addrs: self.batch.addrs.len(),
        }
    }

    /// The arrays the guards and addresses of the run about to be pushed
    /// go to, after those of the runs before it.
    #[inline]
    pub fn run_arrays(&mut self) -> (&mut Vec<bool>, &mut Vec<u64>) {
        (&mut self.batch.guards, &mut self.batch.addrs)
    }

    /// Adds the run `head` of a block already defined, whose guards and
    /// addresses were added to the arrays since `start`, read at the
    /// location given last ([`Feed::locate_next`]).
    ///
    /// Runs can form a cycle: a loop of a block or a few, run over and
    /// over with nothing between. When the runs pushed last repeat the up
    /// to [`MAX_PERIOD`] runs before them just so, without calls or
    /// guards, with as many addresses each, they are not kept but counted
    /// as one more repeat of those, in the last of them, and their
    /// addresses stay in the array: the simulator then goes round the
    /// cycle without looking at each run's arrival once a round showed it
    /// plain, and for a cycle without data accesses, adds at once what the
    /// rest changed (see `Simulator::repeat`). Any error such a run could
    /// meet, the first of its cycle meets first.
    ///
    /// Returns the cycle's length when the run completed a round of a
    /// cycle, folded.
    #[inline]
    pub fn push_run(&mut self, head: RunHead, start: RunMark) -> Option<usize> {
        let batch = &mut self.batch;
        let run = Run::new(head, start, batch);
        if run.could_repeat() {
            batch.push_repeating(run)
        } else {
            batch.items.push(Item::Run(run));
            batch.rounds = Rounds::default();
            None
        }
    }

    /// Counts up to `most` more rounds of the cycle whose round the last
    /// run pushed completed, if that run is still the last item, as many
    /// as the cycle can count: the runs of a reader that knows them to be
    /// that round again without decoding them (its encoding again). Such a
    /// reader adds their addresses, if any, to the batch's before this, and
    /// takes back those of the rounds this did not count. Returns how many
    /// it counted.
    #[inline]
    pub fn repeat_rounds(&mut self, most: usize) -> usize {
        self.batch.repeat_rounds(most)
    }

    /// How many more addresses the batch holds before it is full (see
    /// [`Batch::is_full`]): while it holds fewer than a full batch, it
    /// takes one more run, or round, with all its addresses.
    #[inline]
    pub fn room_for_addrs(&self) -> usize {
        BATCH_ADDRS.saturating_sub(self.batch.addrs.len())
    }
}

impl Batch {
    /// Adds `item`, an event, a description or a run that repeats nothing.
    fn push_other(&mut self, item: Item) {
        self.items.push(item);
        self.rounds = Rounds::default();
    }
}

/// The lengths of a batch's run arrays before a run's were added.
#[derive(Clone, Copy)]
pub struct RunMark {
    guards: usize,
    addrs: usize,
}

/// What a block run is besides its guards and addresses.
#[derive(Clone, Copy, Debug)]
pub struct RunHead {
    pub id: u32,
    /// The call that enters the run.
    pub call: Option<u64>,
    pub sp: Option<u64>,
    pub exit: Option<u32>,
    pub leaving: JumpKind,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_take_the_location_of_their_span() {
        let head = RunHead {
            id: 0,
            call: None,
            sp: None,
            exit: None,
            leaving: JumpKind::Boring,
        };
        let block = || {
            Arc::new(BlockDef {
                instrs: Vec::new(),
                items: Vec::new(),
                end: JumpKind::Boring,
            })
        };
        let instr = Event::Instr { addr: 0x10, len: 1 };
        let mut feed = Feed::default();
        // A description before any location: it cannot fail.
        feed.define(1, block);
        // A binary trace's chunk: the items to come, a description among
        // them, then the same chunk again and another. Runs of four
        // blocks, each an item.
        let run = |id| RunHead { id, ..head };
        feed.locate_next(Location::Offset(12));
        feed.define(0, block);
        feed.push_run(run(0), feed.mark());
        feed.push_run(run(1), feed.mark());
        feed.locate_next(Location::Offset(12));
        feed.push_run(run(2), feed.mark());
        feed.locate_next(Location::Offset(40));
        feed.push_run(run(3), feed.mark());
        // A text trace's lines, each given after its item.
        feed.push_event(instr.clone(), Location::Line(7));
        feed.push_event(instr.clone(), Location::Line(7));
        feed.push_event(instr, Location::Line(9));
        let at: Vec<_> = (0..feed.batch.len())
            .map(|item| feed.batch.location(item))
            .collect();
        let offset = Location::Offset;
        let line = Location::Line;
        assert_eq!(
            at,
            [
                offset(0),
                offset(12),
                offset(12),
                offset(12),
                offset(12),
                offset(40),
                line(7),
                line(7),
                line(9)
            ]
        );
        assert_eq!(feed.batch.locations.len(), 4, "one span per location");
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
}
