//! The hierarchy against a naive model of it: caches as lists of lines,
//! and each residency's use counted when its access happens, straight from
//! the definitions: an L1 residency counts the accesses to its line in that
//! L1 while it lasts, an LL residency every access to its line, in either
//! L1 or in LL, while LL holds the line. Nothing is deferred or handed
//! over, so the hierarchy's pending use, splits and hand-over queue are
//! checked against a model that has none of them. Its caches are the
//! set-associative cache's reference model.

use std::collections::HashMap;

use proptest::prelude::*;

use super::super::caches::CacheAccess;
use super::super::geometry::CacheGeometry;
use super::super::line_use::{ByteMask, LineUse, NarrowMask};
use super::super::set_assoc::tests::ReferenceCache;
use super::tests::{Ended, Recorder};
use super::{Hierarchy, L1Kind, Level, Outcome};

/// Lines resident in one cache: who loaded each, and its use so far.
type Residencies = HashMap<u64, (u32, LineUse<NarrowMask>)>;

/// I1, D1 and LL (the set-associative cache's reference model) with the
/// use of every residency.
struct NaiveHierarchy {
    geometries: [CacheGeometry; 2],
    l1: [ReferenceCache; 2],
    ll: ReferenceCache,
    l1_use: [Residencies; 2],
    ll_use: Residencies,
    ended: Vec<Ended>,
}

impl NaiveHierarchy {
    fn new(l1: CacheGeometry, ll: CacheGeometry) -> NaiveHierarchy {
        NaiveHierarchy {
            geometries: [l1, ll],
            l1: [ReferenceCache::new(&l1), ReferenceCache::new(&l1)],
            ll: ReferenceCache::new(&ll),
            l1_use: [HashMap::new(), HashMap::new()],
            ll_use: HashMap::new(),
            ended: Vec::new(),
        }
    }

    fn end(&mut self, level: Level, (loader, used): (u32, LineUse<NarrowMask>)) {
        self.ended.push((level, loader, used.count, used.bytes()));
    }

    /// An access of `size` bytes at `addr` by instruction `instr`: each
    /// line it touches, after one longer than a line is clamped to a line's
    /// size.
    fn access(&mut self, k: usize, addr: u64, size: u32, instr: u32) -> Outcome {
        let bits = self.geometries[0].line_bits();
        let line_size = 1u64 << bits;
        // The last byte: the end of an access that reaches the top of the
        // address space is past 2^64 - 1.
        let last = addr + (u64::from(size).clamp(1, line_size) - 1);
        let mut outcome = Outcome::default();
        let mut from = addr;
        loop {
            let line = from >> bits;
            let to = last.min(from | (line_size - 1));
            let offset = (from & (line_size - 1)) as u32;
            let bytes = NarrowMask::range(offset, (to - from + 1) as u32);
            self.access_line(k, line, bytes, instr, &mut outcome);
            if to == last {
                return outcome;
            }
            from = to + 1;
        }
    }

    fn access_line(&mut self, k: usize, line: u64, bytes: u64, instr: u32, outcome: &mut Outcome) {
        let (hit, victim) = self.l1[k].access(line);
        if hit {
            self.l1_use[k].get_mut(&line).unwrap().1.touch(&bytes);
        } else {
            outcome.l1_miss = true;
            if let Some(victim) = victim {
                let residency = self.l1_use[k].remove(&victim).unwrap();
                self.end(Level::L1, residency);
            }
            self.l1_use[k].insert(line, (instr, LineUse::first(bytes)));
            let (ll_hit, ll_victim) = self.ll.access(line);
            if !ll_hit {
                outcome.ll_miss = true;
                if let Some(victim) = ll_victim {
                    let residency = self.ll_use.remove(&victim).unwrap();
                    self.end(Level::LL, residency);
                }
                self.ll_use.insert(line, (instr, LineUse::default()));
            }
        }
        if self.ll.holds(line) {
            self.ll_use.get_mut(&line).unwrap().1.touch(&bytes);
        }
    }

    /// Ends every residency, L1 first, and empties the caches.
    fn flush(&mut self) {
        let [l1, ll] = self.geometries;
        for k in 0..2 {
            for residency in std::mem::take(&mut self.l1_use[k]).into_values() {
                self.end(Level::L1, residency);
            }
            self.l1[k] = ReferenceCache::new(&l1);
        }
        for residency in std::mem::take(&mut self.ll_use).into_values() {
            self.end(Level::LL, residency);
        }
        self.ll = ReferenceCache::new(&ll);
    }
}

proptest! {
    /// Small caches with I1 and D1 sharing lines, so that LL evicts lines
    /// still in L1 and reloads lines the other L1 holds; flushes on the
    /// way. An access is a fetch for an odd `op`, a data access for an even
    /// one, a flush for a multiple of 32. Residencies end in the same order
    /// but for flushes, whose order is the caches'; all are compared
    /// sorted. With `top`, the addresses are the last 1 KiB of the address
    /// space, and accesses reach up to its last byte.
    #[test]
    fn the_hierarchy_counts_use_as_the_naive_model(
        accesses in prop::collection::vec((any::<u8>(), 0u64..1024, 1u32..24), 1..400),
        ll in prop::sample::select(vec!["64,1,16", "128,2,16", "256,2,16", "512,4,16"]),
        top in any::<bool>(),
    ) {
        let l1: CacheGeometry = "128,2,16".parse().unwrap();
        let ll: CacheGeometry = ll.parse().unwrap();
        let mut caches: Hierarchy<(), NarrowMask> = Hierarchy::new(l1, l1, &[ll], true).unwrap();
        let mut naive = NaiveHierarchy::new(l1, ll);
        let mut sink = Recorder::default();
        for (index, &(op, addr, size)) in accesses.iter().enumerate() {
            sink.current = index as u32;
            let (addr, size) = if top {
                (u64::MAX - 1023 + addr, size.min(1024 - addr as u32))
            } else {
                (addr, size)
            };
            if op % 32 == 0 {
                caches.flush(&mut sink);
                naive.flush();
                continue;
            }
            let kind = if op % 2 == 1 { L1Kind::Instr } else { L1Kind::Data };
            let outcome = caches.access(kind, addr, size, &mut sink);
            prop_assert_eq!(outcome, naive.access(kind as usize, addr, size, index as u32));
        }
        caches.flush(&mut sink);
        naive.flush();
        let sorted = |mut ended: Vec<Ended>| {
            ended.sort_by_key(|&(level, loader, uses, bytes)| (level as u8, loader, uses, bytes));
            ended
        };
        prop_assert_eq!(sorted(sink.ended), sorted(naive.ended));
    }
}
