//! Misses by cause, in Hill's 3C model: each miss of a cache is
//! *compulsory* when its line was never in that cache before (since the
//! start, or the last flush), *capacity* when a fully associative LRU
//! cache of as many lines, given the same accesses, would have missed it
//! too, and *conflict* otherwise: a miss that only the set mapping caused.
//!
//! Every miss falls in exactly one class, so the three add up to the
//! misses (Dinero IV instead subtracts the fully associative cache's
//! misses from the cache's, which can leave a negative conflict count). An
//! access over two lines that misses is one miss, of the first class in
//! that order that one of its missed lines has.
//!
//! The fully associative twin, which also knows the lines seen, is keyed
//! by line number in a hash table: classifying costs a hash lookup per
//! line (two when the twin loads it), which is why it is a command of its
//! own and not part of `sim`'s loop.

use rustc_hash::FxHashMap;

use super::geometry::{CacheGeometry, LineSpan, longest_access};
use super::huge_table::NoMemory;
use super::set_assoc::{Lookup, SetAssocCache};

/// Why a cache missed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum MissClass {
    Compulsory,
    Capacity,
    Conflict,
}

/// One cache's accesses and misses, by cause.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ClassCounts {
    pub accesses: u64,
    pub compulsory: u64,
    pub capacity: u64,
    pub conflict: u64,
}

impl ClassCounts {
    pub fn misses(&self) -> u64 {
        self.compulsory + self.capacity + self.conflict
    }

    fn count(&mut self, class: Option<MissClass>) {
        self.accesses += 1;
        match class {
            None => {}
            Some(MissClass::Compulsory) => self.compulsory += 1,
            Some(MissClass::Capacity) => self.capacity += 1,
            Some(MissClass::Conflict) => self.conflict += 1,
        }
    }
}

/// No node: the end of the recency list, or a line no longer held.
const NONE: u32 = u32::MAX;

#[derive(Clone, Copy)]
struct Node {
    line: u64,
    newer: u32,
    older: u32,
}

/// What a fully associative cache found of a line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Found {
    Hit,
    /// It held the line once and let it go.
    Evicted,
    /// It never held the line.
    New,
}

/// A fully associative LRU cache: the lines it holds in a doubly linked
/// list from most to least recently used, and for every line it has held
/// since it was last emptied, where it is in the list ([`NONE`] once
/// evicted), so that one lookup tells a hit, a line seen before and a new
/// one apart.
struct FullyAssociative {
    capacity: usize,
    nodes: Vec<Node>,
    index: FxHashMap<u64, u32>,
    newest: u32,
    oldest: u32,
}

impl FullyAssociative {
    fn new(lines: u64) -> FullyAssociative {
        FullyAssociative {
            capacity: usize::try_from(lines).unwrap_or(usize::MAX),
            nodes: Vec::new(),
            index: FxHashMap::default(),
            newest: NONE,
            oldest: NONE,
        }
    }

    /// Looks `line` up, making it most recently used and loading it on a
    /// miss.
    fn access(&mut self, line: u64) -> Result<Found, NoMemory> {
        let found = match self.index.get(&line) {
            Some(&NONE) => Found::Evicted,
            Some(&node) => {
                self.unlink(node);
                self.push_newest(node);
                return Ok(Found::Hit);
            }
            None => {
                self.index
                    .try_reserve(1)
                    .map_err(|_| NoMemory::refused(self.index.len() * 16))?;
                Found::New
            }
        };
        let node = if self.nodes.len() < self.capacity {
            self.nodes
                .try_reserve(1)
                .map_err(|_| NoMemory::refused(self.nodes.len() * size_of::<Node>()))?;
            self.nodes.push(Node {
                line,
                newer: NONE,
                older: NONE,
            });
            (self.nodes.len() - 1) as u32
        } else {
            let node = self.oldest;
            self.unlink(node);
            self.index.insert(self.nodes[node as usize].line, NONE);
            self.nodes[node as usize].line = line;
            node
        };
        self.index.insert(line, node);
        self.push_newest(node);
        Ok(found)
    }

    fn unlink(&mut self, node: u32) {
        let Node { newer, older, .. } = self.nodes[node as usize];
        match newer {
            NONE => self.newest = older,
            newer => self.nodes[newer as usize].older = older,
        }
        match older {
            NONE => self.oldest = newer,
            older => self.nodes[older as usize].newer = newer,
        }
    }

    fn push_newest(&mut self, node: u32) {
        self.nodes[node as usize].newer = NONE;
        self.nodes[node as usize].older = self.newest;
        match self.newest {
            NONE => self.oldest = node,
            newest => self.nodes[newest as usize].newer = node,
        }
        self.newest = node;
    }

    /// Empties it and forgets every line it held.
    fn clear(&mut self) {
        self.nodes.clear();
        self.index.clear();
        self.newest = NONE;
        self.oldest = NONE;
    }
}

/// One cache, its fully associative twin of as many lines (which also
/// knows the lines seen), and its counts.
struct Classified {
    cache: SetAssocCache,
    twin: FullyAssociative,
    counts: ClassCounts,
}

impl Classified {
    fn new(geometry: CacheGeometry) -> Result<Classified, NoMemory> {
        Ok(Classified {
            cache: SetAssocCache::new(geometry)?,
            twin: FullyAssociative::new(geometry.lines()),
            counts: ClassCounts::default(),
        })
    }

    fn line_bits(&self) -> u32 {
        self.cache.geometry().line_bits()
    }

    /// Looks `line` up in the cache and its twin: `None` on a hit, else
    /// why it missed.
    fn line(&mut self, line: u64) -> Result<Option<MissClass>, NoMemory> {
        let hit = match self.cache.access(line) {
            Lookup::Hit(_) => true,
            Lookup::Miss { victim, .. } => {
                if victim.is_none() {
                    self.cache.filled(line);
                }
                false
            }
        };
        Ok(match (hit, self.twin.access(line)?) {
            (true, _) => None,
            (false, Found::New) => Some(MissClass::Compulsory),
            (false, Found::Evicted) => Some(MissClass::Capacity),
            (false, Found::Hit) => Some(MissClass::Conflict),
        })
    }

    fn flush(&mut self) {
        self.cache.clear();
        self.twin.clear();
    }
}

/// I1, D1 and LL, each with its misses classified. As in the simulator, an
/// access is clamped to the shorter L1 line, taken line by line in its L1,
/// and LL is looked up, in its own lines, for each L1 line that missed.
pub struct ClassifiedHierarchy {
    l1: [Classified; 2],
    ll: Classified,
    longest: u32,
}

/// Which L1 an access goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum L1Side {
    Instr = 0,
    Data = 1,
}

impl ClassifiedHierarchy {
    pub fn new(
        i1: CacheGeometry,
        d1: CacheGeometry,
        ll: CacheGeometry,
    ) -> Result<ClassifiedHierarchy, NoMemory> {
        Ok(ClassifiedHierarchy {
            l1: [Classified::new(i1)?, Classified::new(d1)?],
            ll: Classified::new(ll)?,
            longest: longest_access(i1, d1),
        })
    }

    /// An access of `size` bytes at `addr` to one L1.
    pub fn access(&mut self, side: L1Side, addr: u64, size: u32) -> Result<(), NoMemory> {
        let l1 = &mut self.l1[side as usize];
        let bits = l1.line_bits();
        let span = LineSpan::new(addr, size.min(self.longest), bits);
        let lines = [Some(span.line), (span.second > 0).then(|| span.line + 1)];
        let mut l1_class = None;
        let mut missed = [None; 2];
        for (line, missed) in lines.into_iter().flatten().zip(&mut missed) {
            if let Some(class) = l1.line(line)? {
                l1_class = Some(l1_class.map_or(class, |first| class.min(first)));
                *missed = Some(line << bits);
            }
        }
        l1.counts.count(l1_class);
        if l1_class.is_none() {
            return Ok(());
        }
        let ll_bits = self.ll.line_bits();
        let mut ll_class = None;
        for addr in missed.into_iter().flatten() {
            if let Some(class) = self.ll.line(addr >> ll_bits)? {
                ll_class = Some(ll_class.map_or(class, |first| class.min(first)));
            }
        }
        self.ll.counts.count(ll_class);
        Ok(())
    }

    /// Empties every cache: what was in them before counts as new.
    pub fn flush(&mut self) {
        for cache in self.l1.iter_mut().chain([&mut self.ll]) {
            cache.flush();
        }
    }

    /// The counts of I1, D1 and LL.
    pub fn counts(&self) -> [ClassCounts; 3] {
        [self.l1[0].counts, self.l1[1].counts, self.ll.counts]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn geometry(text: &str) -> CacheGeometry {
        text.parse().unwrap()
    }

    /// The fully associative LRU cache against a list of lines in recency
    /// order and a list of the lines seen, on a seeded stream.
    #[test]
    fn the_twin_is_an_lru_list() {
        let mut twin = FullyAssociative::new(5);
        let mut list: Vec<u64> = Vec::new();
        let mut seen: Vec<u64> = Vec::new();
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        for step in 0..20_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let line = state % 9;
            let hit = list.contains(&line);
            let expected = match (hit, seen.contains(&line)) {
                (true, _) => Found::Hit,
                (false, true) => Found::Evicted,
                (false, false) => Found::New,
            };
            list.retain(|&l| l != line);
            list.insert(0, line);
            list.truncate(5);
            seen.push(line);
            let found = twin.access(line).unwrap();
            assert_eq!(found == Found::Hit, hit, "step {step}");
            assert_eq!(found, expected, "step {step}");
            if step == 10_000 {
                twin.clear();
                list.clear();
                seen.clear();
            }
        }
    }

    fn counts(c: u64, p: u64, f: u64, accesses: u64) -> ClassCounts {
        ClassCounts {
            accesses,
            compulsory: c,
            capacity: p,
            conflict: f,
        }
    }

    /// A direct-mapped D1 of two 16-byte lines: lines 0 and 2 share set 0.
    /// Lines 0, 2, 0, 2: two compulsory misses, then two conflicts (a
    /// fully associative cache of two lines holds both). Then lines 1, 3,
    /// 5 and 1 again: three compulsory misses, and a capacity miss (three
    /// lines went through a two-line cache since line 1).
    #[test]
    fn misses_are_compulsory_then_conflict_or_capacity() {
        let small = geometry("32,1,16");
        let mut caches = ClassifiedHierarchy::new(small, small, geometry("1024,2,16")).unwrap();
        for line in [0u64, 2, 0, 2, 1, 3, 5, 1] {
            caches.access(L1Side::Data, line * 16, 4).unwrap();
        }
        let [i1, d1, ll] = caches.counts();
        assert_eq!(i1, ClassCounts::default());
        assert_eq!(d1, counts(5, 1, 2, 8));
        // LL (32 sets of 2) holds every line after its first miss.
        assert_eq!(ll, counts(5, 0, 0, 8));
        assert_eq!(d1.misses(), 8);
    }

    /// An access over two lines is one access, whose class is the first
    /// its missed lines have. A direct-mapped D1 of four 16-byte lines,
    /// where lines 0 and 4 share set 0.
    #[test]
    fn an_access_over_two_lines_takes_the_first_class_of_its_lines() {
        let d1 = geometry("64,1,16");
        let mut caches = ClassifiedHierarchy::new(d1, d1, geometry("1024,4,16")).unwrap();
        // Lines 0 and 4, new; then lines 3 (new) and 4 (resident): the
        // access is compulsory.
        for (addr, size) in [(0, 1), (64, 1), (60, 8)] {
            caches.access(L1Side::Data, addr, size).unwrap();
        }
        assert_eq!(caches.counts()[1], counts(3, 0, 0, 3));
        // Lines 0 (a conflict: the twin of four lines holds it) and 1
        // (new): compulsory.
        caches.access(L1Side::Data, 12, 8).unwrap();
        assert_eq!(caches.counts()[1], counts(4, 0, 0, 4));
        // Lines 3 (resident) and 4 (evicted by line 0, held by the twin):
        // a conflict.
        caches.access(L1Side::Data, 60, 8).unwrap();
        assert_eq!(caches.counts()[1], counts(4, 0, 1, 5));
    }

    /// A flush empties the caches and forgets the lines seen: the next
    /// access to a line is compulsory again. I1 and D1 are apart: a line
    /// fetched is new to D1.
    #[test]
    fn a_flush_makes_every_line_new_again() {
        let l1 = geometry("64,2,16");
        let mut caches = ClassifiedHierarchy::new(l1, l1, geometry("256,4,16")).unwrap();
        caches.access(L1Side::Instr, 0x100, 4).unwrap();
        caches.access(L1Side::Data, 0x100, 4).unwrap();
        caches.flush();
        caches.access(L1Side::Data, 0x100, 4).unwrap();
        let [i1, d1, ll] = caches.counts();
        assert_eq!(i1, counts(1, 0, 0, 1));
        assert_eq!(d1, counts(2, 0, 0, 2));
        // The data access before the flush hit the line I1 brought in.
        assert_eq!(ll, counts(2, 0, 0, 3));
    }

    /// LL lines longer than L1's: two L1 lines that miss in one access
    /// look LL up twice, in one LL line, which is one LL access that
    /// missed once; a later access to another L1 line of that LL line
    /// hits LL.
    #[test]
    fn ll_is_looked_up_in_its_own_lines() {
        let l1 = geometry("64,1,16");
        let mut caches = ClassifiedHierarchy::new(l1, l1, geometry("256,1,64")).unwrap();
        caches.access(L1Side::Data, 12, 8).unwrap();
        let [_, d1, ll] = caches.counts();
        assert_eq!(d1, counts(1, 0, 0, 1));
        assert_eq!(ll, counts(1, 0, 0, 1));
        caches.access(L1Side::Data, 40, 4).unwrap();
        let [_, d1, ll] = caches.counts();
        assert_eq!(d1, counts(2, 0, 0, 2));
        assert_eq!(ll, counts(1, 0, 0, 2));
    }

    /// An access is clamped to the shorter L1 line, as the simulator
    /// clamps it: 30 bytes at 8 take 16 with 16-byte I1 lines, so the
    /// 32-byte D1 loads its first line only, and byte 40 misses.
    #[test]
    fn an_access_is_clamped_to_the_shorter_l1_line() {
        let mut caches = ClassifiedHierarchy::new(
            geometry("64,1,16"),
            geometry("128,1,32"),
            geometry("256,1,64"),
        )
        .unwrap();
        caches.access(L1Side::Data, 8, 30).unwrap();
        caches.access(L1Side::Data, 40, 1).unwrap();
        assert_eq!(caches.counts()[1], counts(2, 0, 0, 2));
    }
}
