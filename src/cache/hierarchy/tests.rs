use super::*;

/// An ended residency: level, loading instruction, uses, bytes used.
pub(super) type Ended = (Level, u32, u64, u32);

/// Records residencies, lane 0's in `ended` and lane `n`'s in
/// `lanes[n - 1]`; every line is loaded by instruction `current`.
#[derive(Default)]
pub(super) struct Recorder {
    pub(super) current: u32,
    pub(super) ended: Vec<Ended>,
    pub(super) lanes: Vec<Vec<Ended>>,
}

impl UseSink<()> for Recorder {
    fn hold(&mut self, _: usize) -> Loader<()> {
        Loader {
            instr: InstrId(self.current),
            handle: (),
        }
    }
}

impl Release<()> for Recorder {
    fn release<M: ByteMask>(
        &mut self,
        lane: usize,
        level: Level,
        loader: Loader<()>,
        used: &LineUse<M>,
        _: u32,
    ) {
        let ended = (level, loader.instr.0, used.count, used.bytes());
        match lane.checked_sub(1) {
            None => self.ended.push(ended),
            Some(index) => self.lanes[index].push(ended),
        }
    }
}

fn caches(l1: &str, ll: &str) -> Hierarchy<(), WideMask> {
    Hierarchy::new(
        l1.parse().unwrap(),
        l1.parse().unwrap(),
        &[ll.parse().unwrap()],
        true,
    )
    .unwrap()
}

use crate::cache::line_use::WideMask;

#[test]
fn straddling_access_misses_once_and_touches_both_lines() {
    let mut h = caches("1024,2,64", "8192,4,64");
    let mut sink = Recorder::default();
    let out = h.access(L1Kind::Data, 60, 8, &mut sink);
    assert_eq!(
        out,
        Outcome {
            l1_miss: true,
            ll_miss: true,
            lane_misses: 0
        }
    );
    // Both lines now hit; a second straddle is a hit.
    assert_eq!(h.access(L1Kind::Data, 62, 4, &mut sink), Outcome::default());
    h.flush(&mut sink);
    // Line 0 used bytes 60..64, line 1 bytes 0..4: two accesses each.
    assert_eq!(
        sink.ended,
        [
            (Level::L1, 0, 2, 4),
            (Level::L1, 0, 2, 4),
            (Level::LL, 0, 2, 4),
            (Level::LL, 0, 2, 4)
        ]
    );
}

#[test]
fn oversized_access_is_clamped_to_one_line_size() {
    let mut h = caches("1024,2,16", "8192,4,16");
    let mut sink = Recorder::default();
    // 64 bytes at 8 span five 16-byte lines; clamped to 8..24.
    h.access(L1Kind::Data, 8, 64, &mut sink);
    h.flush(&mut sink);
    let l1: Vec<_> = sink.ended.iter().filter(|e| e.0 == Level::L1).collect();
    assert_eq!(l1, [&(Level::L1, 0, 1, 8), &(Level::L1, 0, 1, 8)]);

    // At a line start, the clamped access is that one whole line.
    let mut sink = Recorder::default();
    let outcome = h.access(L1Kind::Data, 32, 40, &mut sink);
    assert!(outcome.l1_miss);
    h.flush(&mut sink);
    let l1: Vec<_> = sink.ended.iter().filter(|e| e.0 == Level::L1).collect();
    assert_eq!(l1, [&(Level::L1, 0, 1, 16)]);

    // Longer than a line over only two: clamped too, 72..88 of 72..92.
    let mut sink = Recorder::default();
    h.access(L1Kind::Data, 72, 20, &mut sink);
    h.flush(&mut sink);
    let l1: Vec<_> = sink.ended.iter().filter(|e| e.0 == Level::L1).collect();
    assert_eq!(l1, [&(Level::L1, 0, 1, 8), &(Level::L1, 0, 1, 8)]);
}

#[test]
fn a_flush_ends_every_residency_and_empties_the_caches() {
    let mut h = caches("1024,2,64", "8192,4,64");
    let mut sink = Recorder::default();
    h.access(L1Kind::Data, 0, 8, &mut sink);
    h.access(L1Kind::Instr, 64, 4, &mut sink);
    h.flush(&mut sink);
    // D1 and I1 first, then LL: each line charged with its one use.
    assert_eq!(
        sink.ended,
        [
            (Level::L1, 0, 1, 4),
            (Level::L1, 0, 1, 8),
            (Level::LL, 0, 1, 8),
            (Level::LL, 0, 1, 4)
        ]
    );
    // Empty again: the same accesses miss both levels.
    let again = h.access(L1Kind::Data, 0, 8, &mut sink);
    assert!(again.l1_miss && again.ll_miss);
}

#[test]
fn ll_residency_counts_accesses_that_hit_l1() {
    // One-line L1s: every new line evicts the previous one.
    let mut h = caches("64,1,64", "8192,4,64");
    let mut sink = Recorder::default();
    h.access(L1Kind::Data, 0, 4, &mut sink); // load line 0 (L1 + LL)
    h.access(L1Kind::Data, 8, 4, &mut sink); // L1 hit
    sink.current = 1;
    h.access(L1Kind::Data, 64, 4, &mut sink); // evicts line 0 from L1
    assert_eq!(sink.ended, [(Level::L1, 0, 2, 8)]);
    sink.current = 2;
    h.access(L1Kind::Data, 16, 4, &mut sink); // L1 miss, LL hit on line 0
    h.flush(&mut sink);
    // LL line 0: loaded by instruction 0, three accesses, 12 bytes.
    assert!(sink.ended.contains(&(Level::LL, 0, 3, 12)));
    assert!(sink.ended.contains(&(Level::L1, 2, 1, 4)));
}

#[test]
fn ll_eviction_of_a_line_still_in_l1_keeps_every_use_in_its_residency() {
    // LL holds one line; L1 holds two lines in different sets.
    let mut h = caches("128,1,64", "64,1,64");
    let mut sink = Recorder::default();
    h.access(L1Kind::Data, 0, 4, &mut sink); // line 0 into L1 and LL
    h.access(L1Kind::Data, 4, 4, &mut sink); // L1 hit
    sink.current = 1;
    h.access(L1Kind::Data, 64, 8, &mut sink); // line 1: LL evicts line 0
    assert_eq!(sink.ended, [(Level::LL, 0, 2, 8)]);
    // Line 0 is still in L1: this hit happens while it is in no LL
    // residency, so it must not reach line 0's next LL residency.
    h.access(L1Kind::Data, 8, 4, &mut sink);
    sink.ended.clear();
    h.flush(&mut sink);
    assert_eq!(
        sink.ended,
        [
            (Level::L1, 0, 3, 12),
            (Level::L1, 1, 1, 8),
            (Level::LL, 1, 1, 8)
        ]
    );
}

#[test]
fn use_handed_over_at_an_l1_eviction_reaches_an_ll_residency_ending_soon_after() {
    // One-line L1; LL of two lines in two sets.
    let mut h = caches("64,1,64", "128,1,64");
    let mut sink = Recorder::default();
    h.access(L1Kind::Data, 0, 4, &mut sink); // line 0 into L1 and LL
    h.access(L1Kind::Data, 4, 4, &mut sink); // L1 hit
    h.access(L1Kind::Data, 64, 4, &mut sink); // line 1: L1 evicts line 0
    h.access(L1Kind::Data, 128, 4, &mut sink); // line 2: LL evicts line 0
    assert_eq!(
        sink.ended,
        [
            (Level::L1, 0, 2, 8),
            (Level::L1, 0, 1, 4),
            (Level::LL, 0, 2, 8)
        ]
    );
}

#[test]
fn a_line_in_both_l1s_feeds_the_ll_residency_from_both() {
    let mut h = caches("1024,2,64", "8192,4,64");
    let mut sink = Recorder::default();
    h.access(L1Kind::Instr, 0, 4, &mut sink); // I1 + LL miss
    sink.current = 1;
    h.access(L1Kind::Data, 32, 8, &mut sink); // D1 miss, LL hit
    h.access(L1Kind::Instr, 4, 4, &mut sink); // I1 hit
    h.flush(&mut sink);
    assert_eq!(
        sink.ended,
        [
            (Level::L1, 0, 2, 8),
            (Level::L1, 1, 1, 8),
            (Level::LL, 0, 3, 16)
        ]
    );
}

#[test]
fn without_use_tracking_the_sink_is_never_called() {
    let g: CacheGeometry = "64,1,64".parse().unwrap();
    let mut h: Hierarchy<(), u64> =
        Hierarchy::new(g, g, &["64,1,16".parse().unwrap()], false).unwrap();
    struct Never;
    impl UseSink<()> for Never {
        fn hold(&mut self, _: usize) -> Loader<()> {
            panic!("hold called")
        }
    }
    impl Release<()> for Never {
        fn release<M: ByteMask>(
            &mut self,
            _: usize,
            _: Level,
            _: Loader<()>,
            _: &LineUse<M>,
            _: u32,
        ) {
            panic!("release called")
        }
    }
    assert_eq!(
        h.access(L1Kind::Data, 0, 4, &mut Never),
        Outcome {
            l1_miss: true,
            ll_miss: true,
            lane_misses: 0
        }
    );
    assert!(h.access(L1Kind::Data, 64, 4, &mut Never).l1_miss);
    // LL has 16-byte lines in four sets: line 4 (address 64) evicted
    // line 0, so this misses both levels again.
    assert_eq!(
        h.access(L1Kind::Data, 0, 4, &mut Never),
        Outcome {
            l1_miss: true,
            ll_miss: true,
            lane_misses: 0
        }
    );
    h.flush(&mut Never);
}
