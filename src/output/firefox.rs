//! The Firefox Profiler's processed profile format (`sim --profile`): the
//! bytes each loading call stack brought into L1 and LL, used and wasted,
//! as weighted samples on one track per figure, and the trace's marks as
//! markers. Open it at <https://profiler.firefox.com> ("Load a profile from
//! file"); the call tree and flame graph then show bytes, as the
//! used/wasted-bytes profiles of Gecko's patched-Cachegrind cache-usage
//! tool did.
//!
//! Time is the instruction count: one nanosecond per simulated
//! instruction, from 0 to the run's end. A sample adds up the residencies
//! one stack's lines ended within one time bucket, and sits at the latest
//! of their ends.

use std::io::{self, Write};

use fxprof_processed_profile::{
    CategoryHandle, CpuDelta, Frame, FrameFlags, FrameHandle, FrameInfo, MarkerLocations,
    MarkerTiming, Profile as FxProfile, ReferenceTimestamp, SamplingInterval, StackHandle,
    StaticSchemaMarker, StaticSchemaMarkerField, StringHandle, ThreadHandle, Timestamp, WeightType,
};
use rustc_hash::FxHashMap;

use super::labels::function_labels;
use crate::cost::EventKind;
use crate::profile::Profile;
use crate::program::FnId;
use crate::stack_samples::{FIGURES, PathId, PrefixTree, StackSamples};

/// A `mark begin`/`mark end` section of the trace.
struct Section {
    name: StringHandle,
}

impl StaticSchemaMarker for Section {
    const UNIQUE_MARKER_TYPE_NAME: &'static str = "LinegrindSection";
    const DESCRIPTION: Option<&'static str> = Some("A section marked in the trace");
    const LOCATIONS: MarkerLocations = MarkerLocations::MARKER_CHART
        .union(MarkerLocations::MARKER_TABLE)
        .union(MarkerLocations::TIMELINE_OVERVIEW);
    const CHART_LABEL: Option<&'static str> = Some("{marker.name}");
    const FIELDS: &'static [StaticSchemaMarkerField] = &[];

    fn name(&self, _: &mut FxProfile) -> StringHandle {
        self.name
    }

    fn category(&self, _: &mut FxProfile) -> CategoryHandle {
        CategoryHandle::OTHER
    }

    fn string_field_value(&self, _: u32) -> StringHandle {
        unreachable!("sections have no fields")
    }

    fn number_field_value(&self, _: u32) -> f64 {
        unreachable!("sections have no fields")
    }
}

fn at(instructions: u64) -> Timestamp {
    Timestamp::from_nanos_since_reference(instructions)
}

/// Every sampled stack's functions as a path in one tree, each node a
/// function called from its parent's: the caller of the stack's first call,
/// each callee, and the loading instruction's function when the code it
/// runs in is not the last callee's. Stacks that share a prefix share its
/// nodes, and each call path of the samples is mapped to a node once, so
/// deep call chains cost their depth, not its square.
struct StackTree {
    functions: PrefixTree<FnId>,
    /// Per stack of the samples: its innermost node.
    leaves: Vec<PathId>,
}

impl StackTree {
    fn new(profile: &Profile, samples: &StackSamples) -> StackTree {
        let mut functions = PrefixTree::default();
        // Per call path, the node of its last callee; a path's parent comes
        // before it.
        let mut callees: Vec<PathId> = Vec::with_capacity(samples.paths.len());
        for path in 0..samples.paths.len() {
            let (parent, arc) = samples.paths.get(PathId(path as u32));
            let arc = &profile.arcs[arc.0 as usize];
            let above = match parent {
                Some(parent) => callees[parent.0 as usize],
                None => functions.child(None, profile.caller(arc)),
            };
            callees.push(functions.child(Some(above), arc.callee));
        }
        let leaves = samples
            .stacks
            .iter()
            .map(|stack| {
                let leaf = profile.program.instr(stack.instr).func;
                match stack.path.map(|path| callees[path.0 as usize]) {
                    Some(callee) if functions.get(callee).1 == leaf => callee,
                    above => functions.child(above, leaf),
                }
            })
            .collect();
        StackTree { functions, leaves }
    }
}

/// One track's stacks and frames, interned as samples need them.
struct Interned<'a> {
    tree: &'a StackTree,
    labels: &'a FxHashMap<FnId, String>,
    stacks: Vec<Option<StackHandle>>,
    frames: FxHashMap<FnId, FrameHandle>,
}

impl<'a> Interned<'a> {
    fn new(tree: &'a StackTree, labels: &'a FxHashMap<FnId, String>) -> Interned<'a> {
        Interned {
            tree,
            labels,
            stacks: vec![None; tree.functions.len()],
            frames: FxHashMap::default(),
        }
    }

    /// The stack of tree node `node` on `track`, outermost frame first.
    fn stack(&mut self, fx: &mut FxProfile, track: ThreadHandle, node: PathId) -> StackHandle {
        // The nodes from `node` up to the first one interned, then down.
        let mut missing = Vec::new();
        let mut at = Some(node);
        let mut parent = None;
        while let Some(id) = at {
            if let Some(handle) = self.stacks[id.0 as usize] {
                parent = Some(handle);
                break;
            }
            let (above, func) = self.tree.functions.get(id);
            missing.push((id, func));
            at = above;
        }
        for &(id, func) in missing.iter().rev() {
            let frame = *self.frames.entry(func).or_insert_with(|| {
                let name = fx.intern_string(&self.labels[&func]);
                fx.intern_frame(
                    track,
                    FrameInfo {
                        frame: Frame::Label(name),
                        category_pair: CategoryHandle::OTHER.into(),
                        flags: FrameFlags::empty(),
                    },
                )
            });
            let handle = fx.intern_stack(track, parent, frame);
            self.stacks[id.0 as usize] = Some(handle);
            parent = Some(handle);
        }
        parent.expect("a node's stack was interned")
    }
}

/// Writes the profile of `samples`, collected for `profile` of the trace
/// `name`.
pub fn write_firefox_profile(
    out: &mut dyn Write,
    profile: &Profile,
    samples: &StackSamples,
    name: &str,
) -> io::Result<()> {
    let mut fx = FxProfile::new(
        &format!("linegrind {name}"),
        ReferenceTimestamp::from_millis_since_unix_epoch(0.0),
        SamplingInterval::from_nanos(samples.bucket_width),
    );
    // Frames are function names already.
    fx.set_symbolicated(true);
    let process = fx.add_process(&format!("linegrind {name}"), 1, at(0));
    let tree = StackTree::new(profile, samples);
    let functions = (0..tree.functions.len()).map(|node| tree.functions.get(PathId(node as u32)).1);
    let labels = function_labels(&profile.program, functions);
    let mut tracks = Vec::new();
    for (figure, (_, _, title)) in FIGURES.iter().enumerate() {
        let track = fx.add_thread(process, figure as u32 + 1, at(0), false);
        fx.set_thread_name(track, title);
        fx.set_thread_samples_weight_type(track, WeightType::Bytes);
        fx.set_thread_show_markers_in_timeline(track, true);
        let mut interned = Interned::new(&tree, &labels);
        let mut previous = 0;
        for (time, stack, bytes) in samples.samples(figure) {
            let handle = interned.stack(&mut fx, track, tree.leaves[stack as usize]);
            // Busy since the sample before: the profiler hides a track
            // whose samples took no CPU time, and draws its graph empty.
            // In whole microseconds, as the crate keeps them, rounded so
            // that they add up to the time of the last sample.
            let mut busy = CpuDelta::from_micros(time / 1000 - previous / 1000);
            previous = time;
            // Sample weights are 32-bit.
            let mut left = bytes;
            while left > 0 {
                let weight = left.min(i32::MAX as u64);
                fx.add_sample(track, at(time), Some(handle), busy, weight as i32);
                busy = CpuDelta::ZERO;
                left -= weight;
            }
        }
        tracks.push(track);
    }
    // The run ends after its last instruction: every instruction counts
    // once in `Ir`.
    let end = profile.totals[EventKind::Ir];
    add_sections(&mut fx, &tracks, samples, end);
    let mut out = WithTimeRange {
        out,
        opening: Some(Vec::new()),
        range: format!(
            "\"profilingStartTime\":0.0,\"profilingEndTime\":{},",
            serde_json::to_string(&millis(end))?
        ),
    };
    // Streamed: a tree of the whole profile's JSON values took 5.8 KB per
    // mark of the trace (six markers), its file about 280 bytes.
    serde_json::to_writer(&mut out, &fx)?;
    writeln!(out)
}

/// What the crate's JSON opens with: its `meta` object's first member
/// follows.
const OPENING: &[u8] = b"{\"meta\":{";

/// Passes the crate's JSON on with the run's time range added to its
/// `meta` object. The profiler takes its time range from the samples
/// unless the profile gives one, which the crate does not write: without
/// it, a section before the first line's end would lie outside it.
struct WithTimeRange<'a> {
    out: &'a mut dyn Write,
    /// The JSON's first bytes, until as many as [`OPENING`] holds have come;
    /// `None` once the range is written after them.
    opening: Option<Vec<u8>>,
    /// The range's members, each followed by a comma.
    range: String,
}

impl Write for WithTimeRange<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let Some(opening) = &mut self.opening else {
            return self.out.write(buf);
        };
        let take = (OPENING.len() - opening.len()).min(buf.len());
        opening.extend_from_slice(&buf[..take]);
        if opening.len() == OPENING.len() {
            if opening != OPENING {
                return Err(io::Error::other(
                    "the profiler crate's JSON does not open with its meta object",
                ));
            }
            self.out.write_all(OPENING)?;
            self.out.write_all(self.range.as_bytes())?;
            self.opening = None;
        }
        Ok(take)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// Instruction count `instructions` in milliseconds, one nanosecond each.
fn millis(instructions: u64) -> f64 {
    instructions as f64 / 1e6
}

/// The trace's marks as interval markers on every track: a begin and the
/// next end of the same name in the same thread make one interval; a begin
/// without an end runs to the run's end, `end`, an end without a begin
/// from 0.
fn add_sections(
    fx: &mut FxProfile,
    tracks: &[fxprof_processed_profile::ThreadHandle],
    samples: &StackSamples,
    end: u64,
) {
    // Per thread and name, the begins not yet ended: each mark's index
    // and time.
    let mut open: FxHashMap<(u32, &str), Vec<(usize, u64)>> = FxHashMap::default();
    let mut sections: Vec<(&str, MarkerTiming)> = Vec::new();
    for (index, mark) in samples.marks.iter().enumerate() {
        let begun = open.entry((mark.thread, &mark.name)).or_default();
        if mark.begin {
            begun.push((index, mark.time));
            continue;
        }
        let start = begun.pop().map_or(0, |(_, start)| start);
        sections.push((&mark.name, MarkerTiming::Interval(at(start), at(mark.time))));
    }
    // Those never ended, in the order they began.
    let mut unended: Vec<(usize, &str, u64)> = (open.into_iter())
        .flat_map(|((_, name), begun)| begun.into_iter().map(move |(i, start)| (i, name, start)))
        .collect();
    unended.sort_unstable_by_key(|&(index, ..)| index);
    for (_, name, start) in unended {
        sections.push((name, MarkerTiming::Interval(at(start), at(end))));
    }
    for (name, timing) in sections {
        let name = fx.intern_string(name);
        for &track in tracks {
            fx.add_marker(track, timing.clone(), Section { name });
        }
    }
}
