//! One set-associative LRU cache of line numbers, Callgrind's model.
//!
//! The cache only knows which lines are resident and where. Each resident
//! line occupies a *slot*, an index that stays fixed while the line is
//! resident, so callers keep per-line data in a plain array indexed by slot
//! while the LRU order moves only small `(line, slot)` pairs.

use super::geometry::CacheGeometry;
use super::huge_table::{HugeTable, NoMemory};

/// Marks an unused way; no line number reaches it (lines are addresses
/// shifted right by at least four bits).
const EMPTY: u64 = u64::MAX;

/// Index of a resident line's data, `0 .. geometry.lines()`.
pub type Slot = usize;

#[derive(Clone, Copy, Debug)]
struct Way {
    line: u64,
    slot: u32,
}

/// The outcome of one line lookup.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lookup {
    /// The line was resident in `slot`; it is now most recently used.
    Hit(Slot),
    /// The line was loaded into `slot`, evicting `victim` if the slot held
    /// a line.
    Miss { slot: Slot, victim: Option<u64> },
}

/// A set-associative cache with LRU replacement.
pub struct SetAssocCache {
    geometry: CacheGeometry,
    set_mask: u64,
    assoc: usize,
    /// `assoc` ways per set, most recently used first.
    ways: HugeTable<Way>,
    /// The line accessed last and its slot: it is its set's most recently
    /// used, so accessing it again needs no search and changes no order.
    last: Way,
    /// The sets that hold a line, each once, in the order they took their
    /// first since the cache was last empty: a flush visits only these, not
    /// every way of a cache of gigabytes.
    occupied: Vec<u32>,
}

impl SetAssocCache {
    /// An empty cache, or the memory the host refused for it.
    pub fn new(geometry: CacheGeometry) -> Result<SetAssocCache, NoMemory> {
        let lines = geometry.lines() as usize;
        let mut ways = HugeTable::filled(
            Way {
                line: EMPTY,
                slot: 0,
            },
            lines,
        )?;
        for (slot, way) in ways.iter_mut().enumerate() {
            way.slot = slot as u32;
        }
        let sets = geometry.sets() as usize;
        let mut occupied = Vec::new();
        occupied
            .try_reserve_exact(sets)
            .map_err(|_| NoMemory::refused(sets * size_of::<u32>()))?;
        Ok(SetAssocCache {
            geometry,
            set_mask: geometry.sets() - 1,
            assoc: geometry.assoc() as usize,
            ways,
            last: Way {
                line: EMPTY,
                slot: 0,
            },
            occupied,
        })
    }

    /// The geometry this cache was built with.
    pub fn geometry(&self) -> &CacheGeometry {
        &self.geometry
    }

    /// Looks `line` up, making it most recently used and loading it on a miss.
    #[inline]
    pub fn access(&mut self, line: u64) -> Lookup {
        if self.last.line == line {
            return Lookup::Hit(self.last.slot as Slot);
        }
        let start = (line & self.set_mask) as usize * self.assoc;
        let set = &mut self.ways[start..start + self.assoc];
        if set[0].line == line {
            self.last = set[0];
            return Lookup::Hit(set[0].slot as Slot);
        }
        for i in 1..set.len() {
            if set[i].line == line {
                let way = set[i];
                set.copy_within(0..i, 1);
                set[0] = way;
                self.last = way;
                return Lookup::Hit(way.slot as Slot);
            }
        }
        let oldest = set[set.len() - 1];
        set.copy_within(0..set.len() - 1, 1);
        set[0] = Way {
            line,
            slot: oldest.slot,
        };
        self.last = set[0];
        Lookup::Miss {
            slot: oldest.slot as Slot,
            victim: (oldest.line != EMPTY).then_some(oldest.line),
        }
    }

    /// Notes that `line` was just loaded into an empty way (its miss had no
    /// victim), so that a flush finds its set. Every such miss must be
    /// noted; it is left to the callers' miss paths, out of line, because
    /// the lookup itself is inlined into the simulator's hot loop, where
    /// even a rare branch slowed every access.
    #[cold]
    pub fn filled(&mut self, line: u64) {
        // Ways fill from the front and empty ways stay at the back: the set
        // held nothing before if its second way is empty.
        let index = line & self.set_mask;
        let start = index as usize * self.assoc;
        if self.assoc == 1 || self.ways[start + 1].line == EMPTY {
            self.occupied.push(index as u32);
        }
    }

    /// The slot of the line the previous access looked up; accessing it
    /// again would change nothing.
    #[inline]
    pub fn last_slot(&self) -> Slot {
        self.last.slot as Slot
    }

    /// Asks the host to bring `line`'s set into its caches, ahead of a
    /// lookup that other work will come between.
    #[inline]
    pub fn prefetch(&self, line: u64) {
        self.ways
            .prefetch((line & self.set_mask) as usize * self.assoc);
    }

    /// The slot of `line` if it is resident, without touching the LRU order.
    #[inline]
    pub fn probe(&self, line: u64) -> Option<Slot> {
        let start = (line & self.set_mask) as usize * self.assoc;
        self.ways[start..start + self.assoc]
            .iter()
            .find(|way| way.line == line)
            .map(|way| way.slot as Slot)
    }

    /// Empties the cache.
    pub fn clear(&mut self) {
        for &index in &self.occupied {
            let start = index as usize * self.assoc;
            for way in &mut self.ways[start..start + self.assoc] {
                way.line = EMPTY;
            }
        }
        self.occupied.clear();
        self.last.line = EMPTY;
    }

    /// Every resident line with its slot, set by set in the order of their
    /// index, most recent first.
    pub fn resident(&mut self) -> impl Iterator<Item = (u64, Slot)> + '_ {
        self.occupied.sort_unstable();
        self.occupied.iter().flat_map(|&index| {
            let start = index as usize * self.assoc;
            self.ways[start..start + self.assoc]
                .iter()
                .take_while(|way| way.line != EMPTY)
                .map(|way| (way.line, way.slot as Slot))
        })
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// The obviously correct model: per set, a list of lines with the time
    /// of their last use; the oldest goes. The hierarchy's naive model is
    /// made of these too.
    pub(in crate::cache) struct ReferenceCache {
        sets: Vec<Vec<(u64, u64)>>,
        assoc: usize,
        clock: u64,
    }

    impl ReferenceCache {
        pub fn new(geometry: &CacheGeometry) -> ReferenceCache {
            ReferenceCache {
                sets: vec![Vec::new(); geometry.sets() as usize],
                assoc: geometry.assoc() as usize,
                clock: 0,
            }
        }

        fn set(&mut self, line: u64) -> &mut Vec<(u64, u64)> {
            let index = (line % self.sets.len() as u64) as usize;
            &mut self.sets[index]
        }

        /// Returns whether `line` hit, and the line evicted on a miss.
        pub fn access(&mut self, line: u64) -> (bool, Option<u64>) {
            self.clock += 1;
            let (clock, assoc) = (self.clock, self.assoc);
            let set = self.set(line);
            if let Some(entry) = set.iter_mut().find(|(tag, _)| *tag == line) {
                entry.1 = clock;
                return (true, None);
            }
            let mut victim = None;
            if set.len() == assoc {
                let oldest = (0..set.len()).min_by_key(|&i| set[i].1).unwrap();
                victim = Some(set.remove(oldest).0);
            }
            set.push((line, clock));
            (false, victim)
        }

        /// Whether `line` is resident.
        pub fn holds(&mut self, line: u64) -> bool {
            self.set(line).iter().any(|&(tag, _)| tag == line)
        }
    }

    /// xorshift64*: a small seeded generator, so failures reproduce.
    fn next(state: &mut u64) -> u64 {
        *state ^= *state >> 12;
        *state ^= *state << 25;
        *state ^= *state >> 27;
        state.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    #[test]
    fn agrees_with_the_reference_on_every_access() {
        let geometries = [
            "1024,1,16",    // direct-mapped
            "1024,64,16",   // fully associative
            "4096,4,64",    // small set-associative
            "32768,8,64",   // Callgrind's L1
            "65536,16,128", // wide lines
            "2048,2,32",
        ];
        for (round, text) in geometries.iter().enumerate() {
            let geometry: CacheGeometry = text.parse().unwrap();
            let mut fast = SetAssocCache::new(geometry).unwrap();
            let mut reference = ReferenceCache::new(&geometry);
            let mut state = 0x9E37_79B9_7F4A_7C15 ^ round as u64;
            let mut slot_of = std::collections::HashMap::new();
            for step in 0..200_000 {
                // A mix of a hot region, a larger working set and far lines,
                // so hits, misses and evictions all happen often.
                let r = next(&mut state);
                let line = match r % 4 {
                    0 => r >> 40 & 7,
                    1 | 2 => r >> 40 & (geometry.lines() * 2 - 1),
                    _ => r >> 20,
                };
                let (hit, victim) = reference.access(line);
                match fast.access(line) {
                    Lookup::Hit(slot) => {
                        assert!(hit, "{text} step {step}: fast hit, reference missed");
                        assert_eq!(slot_of[&line], slot, "{text}: slot moved");
                    }
                    Lookup::Miss { slot, victim: v } => {
                        if v.is_none() {
                            fast.filled(line);
                        }
                        assert!(!hit, "{text} step {step}: fast missed, reference hit");
                        assert_eq!(v, victim, "{text} step {step}: different victim");
                        if let Some(v) = v {
                            assert_eq!(slot_of.remove(&v), Some(slot));
                        }
                        slot_of.insert(line, slot);
                    }
                }
                assert_eq!(fast.probe(line), Some(slot_of[&line]));
                // Empty the caches now and then: a flush must visit every
                // resident line, in index order, and leave none behind.
                if step % 70_000 == 69_999 {
                    let resident: Vec<(u64, Slot)> = fast.resident().collect();
                    let mut expected: Vec<(u64, Slot)> =
                        slot_of.iter().map(|(&line, &slot)| (line, slot)).collect();
                    expected.sort_unstable_by_key(|&(line, _)| (line & fast.set_mask, line));
                    let mut by_set = resident.clone();
                    by_set.sort_by_key(|&(line, _)| line & fast.set_mask);
                    assert_eq!(by_set, resident, "{text}: sets out of order");
                    by_set.sort_unstable_by_key(|&(line, _)| (line & fast.set_mask, line));
                    assert_eq!(by_set, expected, "{text} step {step}: resident lines");
                    fast.clear();
                    reference = ReferenceCache::new(&geometry);
                    slot_of.clear();
                    assert_eq!(fast.resident().count(), 0);
                    assert!(fast.probe(line).is_none());
                }
            }
        }
    }

    #[test]
    fn probe_does_not_change_the_lru_order() {
        let geometry: CacheGeometry = "32,2,16".parse().unwrap();
        let mut cache = SetAssocCache::new(geometry).unwrap();
        cache.access(1);
        cache.access(2);
        assert!(cache.probe(1).is_some());
        // 1 is still least recently used, so loading 3 evicts it.
        assert!(matches!(
            cache.access(3),
            Lookup::Miss {
                victim: Some(1),
                ..
            }
        ));
    }
}
