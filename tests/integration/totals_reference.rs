//! Every shipped trace's totals, as `sim` prints them in its JSON summary
//! (the whole pipeline: block runs, loops folded, rounds walked from a plan
//! or counted in the same bytes), against a naive model written from the
//! definitions alone: each cache a list of lines per set in LRU order, each
//! line carrying its use, and the events read one by one. Nothing is
//! deferred, merged or handed over: an LL residency counts every access to
//! its line, in L1 or in LL, while LL holds the line.

use std::path::Path;

use crate::support::{example_traces, sim_summary};
use linegrind::trace::{Access, AnyReader, Event, TraceRead};

/// A resident line: its number, its accesses and the bytes they touched.
#[derive(Clone, Copy)]
struct Resident {
    line: u64,
    uses: u64,
    mask: u64,
}

/// One cache: per set, its lines, most recently used first.
struct Cache {
    sets: Vec<Vec<Resident>>,
    assoc: usize,
}

/// What an ended residency adds to the totals: `1000 / uses` and the
/// bytes left unused.
#[derive(Default)]
struct UseTotals {
    ac_cost: u64,
    sp_loss: u64,
    loaded: u64,
    used: u64,
}

impl Cache {
    fn new(size: u64, assoc: u64, line: u64) -> Cache {
        let sets = size / (assoc * line);
        Cache {
            sets: vec![Vec::new(); sets as usize],
            assoc: assoc as usize,
        }
    }

    fn set(&mut self, line: u64) -> &mut Vec<Resident> {
        let count = self.sets.len() as u64;
        &mut self.sets[(line % count) as usize]
    }

    /// Touches `line` with `mask`: whether it hit, and the residency a
    /// miss ended.
    fn access(&mut self, line: u64, mask: u64) -> (bool, Option<Resident>) {
        let assoc = self.assoc;
        let set = self.set(line);
        if let Some(way) = set.iter().position(|r| r.line == line) {
            let mut resident = set.remove(way);
            resident.uses += 1;
            resident.mask |= mask;
            set.insert(0, resident);
            return (true, None);
        }
        let victim = if set.len() == assoc { set.pop() } else { None };
        set.insert(
            0,
            Resident {
                line,
                uses: 1,
                mask,
            },
        );
        (false, victim)
    }

    /// Adds an access to `line`'s residency, if the cache holds it,
    /// without making it more recently used.
    fn touch(&mut self, line: u64, mask: u64) {
        if let Some(resident) = self.set(line).iter_mut().find(|r| r.line == line) {
            resident.uses += 1;
            resident.mask |= mask;
        }
    }

    fn drain(&mut self) -> Vec<Resident> {
        self.sets.iter_mut().flat_map(std::mem::take).collect()
    }
}

impl UseTotals {
    fn end(&mut self, resident: Resident, line_size: u64) {
        let used = u64::from(resident.mask.count_ones());
        self.ac_cost += 1000 / resident.uses;
        self.sp_loss += line_size - used;
        self.loaded += line_size;
        self.used += used;
    }
}

/// I1, D1 and LL with the same line size, and the totals so far.
struct Naive {
    line_bits: u32,
    l1: [Cache; 2],
    ll: Cache,
    /// Ir, Dr, Dw, I1mr, D1mr, D1mw, ILmr, DLmr, DLmw.
    immediate: [u64; 9],
    l1_use: UseTotals,
    ll_use: UseTotals,
}

const INSTR: usize = 0;
const DATA: usize = 1;

impl Naive {
    /// Caches given as (size, associativity); lines of `line` bytes.
    fn new(i1: (u64, u64), d1: (u64, u64), ll: (u64, u64), line: u64) -> Naive {
        assert!(line <= 64, "a mask of 64 bits");
        Naive {
            line_bits: line.trailing_zeros(),
            l1: [Cache::new(i1.0, i1.1, line), Cache::new(d1.0, d1.1, line)],
            ll: Cache::new(ll.0, ll.1, line),
            immediate: [0; 9],
            l1_use: UseTotals::default(),
            ll_use: UseTotals::default(),
        }
    }

    fn line_size(&self) -> u64 {
        1 << self.line_bits
    }

    /// An access of `size` bytes at `addr` to L1 `k`, one longer than a
    /// line clamped to a line: whether any line missed L1, and LL.
    fn access(&mut self, k: usize, addr: u64, size: u32) -> (bool, bool) {
        let line_size = self.line_size();
        let last = addr + (u64::from(size).clamp(1, line_size) - 1);
        let (mut l1_miss, mut ll_miss) = (false, false);
        let mut from = addr;
        loop {
            let to = last.min(from | (line_size - 1));
            let offset = from & (line_size - 1);
            let width = to - from + 1;
            let mask = if width == 64 {
                u64::MAX
            } else {
                ((1 << width) - 1) << offset
            };
            let (l1, ll) = self.access_line(k, from >> self.line_bits, mask);
            l1_miss |= l1;
            ll_miss |= ll;
            if to == last {
                return (l1_miss, ll_miss);
            }
            from = to + 1;
        }
    }

    fn access_line(&mut self, k: usize, line: u64, mask: u64) -> (bool, bool) {
        let line_size = self.line_size();
        let (hit, victim) = self.l1[k].access(line, mask);
        if let Some(victim) = victim {
            self.l1_use.end(victim, line_size);
        }
        if hit {
            self.ll.touch(line, mask);
            return (false, false);
        }
        let (ll_hit, ll_victim) = self.ll.access(line, mask);
        if let Some(victim) = ll_victim {
            self.ll_use.end(victim, line_size);
        }
        (true, !ll_hit)
    }

    /// Ends every residency, L1 first.
    fn flush(&mut self) {
        let line_size = self.line_size();
        for k in [INSTR, DATA] {
            for resident in self.l1[k].drain() {
                self.l1_use.end(resident, line_size);
            }
        }
        for resident in self.ll.drain() {
            self.ll_use.end(resident, line_size);
        }
    }

    fn event(&mut self, event: &Event) {
        let (kind, (l1, ll)) = match *event {
            Event::Instr { addr, len } => (0, self.access(INSTR, addr, len)),
            Event::Data { access, addr, size } => {
                let kind = if access == Access::Read { 1 } else { 2 };
                (kind, self.access(DATA, addr, size))
            }
            Event::Flush | Event::Restart => return self.flush(),
            _ => return,
        };
        self.immediate[kind] += 1;
        self.immediate[3 + kind] += u64::from(l1);
        self.immediate[6 + kind] += u64::from(ll);
    }

    /// Every event's total, by Callgrind's names, once every line left.
    fn totals(mut self) -> Vec<(&'static str, u64)> {
        self.flush();
        let names = [
            "Ir", "Dr", "Dw", "I1mr", "D1mr", "D1mw", "ILmr", "DLmr", "DLmw",
        ];
        let mut totals: Vec<_> = names.into_iter().zip(self.immediate).collect();
        let (l1, ll) = (&self.l1_use, &self.ll_use);
        totals.extend([
            ("AcCost1", l1.ac_cost),
            ("SpLoss1", l1.sp_loss),
            ("AcCost2", ll.ac_cost),
            ("SpLoss2", ll.sp_loss),
            ("Loaded1", l1.loaded),
            ("Used1", l1.used),
            ("Loaded2", ll.loaded),
            ("Used2", ll.used),
        ]);
        totals
    }
}

fn naive_totals(trace: &Path, mut naive: Naive) -> Vec<(&'static str, u64)> {
    let file = std::fs::File::open(trace).unwrap();
    let mut reader = AnyReader::new(file, false).unwrap();
    while let Some(event) = reader.next_event().unwrap() {
        naive.event(&event);
    }
    naive.totals()
}

/// The naive model of the caches `options` give, `sim`'s defaults for
/// those they leave out.
fn naive(options: &[&str]) -> Naive {
    let mut caches = [
        ("--I1=", 32768, 8, 64),
        ("--D1=", 32768, 8, 64),
        ("--LL=", 8 << 20, 16, 64),
    ];
    for option in options {
        let cache = caches.iter_mut().find(|c| option.starts_with(c.0)).unwrap();
        let numbers: Vec<u64> = option[5..].split(',').map(|n| n.parse().unwrap()).collect();
        (cache.1, cache.2, cache.3) = (numbers[0], numbers[1], numbers[2]);
    }
    let [i1, d1, ll] = caches;
    assert!(i1.3 == d1.3 && d1.3 == ll.3, "one line size");
    Naive::new((i1.1, i1.2), (d1.1, d1.2), (ll.1, ll.2), ll.3)
}

#[test]
fn every_shipped_trace_totals_as_the_naive_model() {
    let dir = tempfile::tempdir().unwrap();
    // The default caches; caches so small that LL evicts lines the L1s
    // still hold; lines of 32 bytes.
    let configs: [&[&str]; 3] = [
        &[],
        &["--I1=2048,2,64", "--D1=4096,4,64", "--LL=8192,2,64"],
        &["--I1=8192,4,32", "--D1=16384,2,32", "--LL=262144,8,32"],
    ];
    let traces = example_traces();
    assert!(traces.len() >= 8, "the shipped traces");
    for trace in traces {
        for options in configs {
            let expected = naive_totals(&trace, naive(options));
            let summary = sim_summary(dir.path(), trace.to_str().unwrap(), options);
            let totals = &summary["totals"];
            for (name, value) in expected {
                let of = (&trace, options);
                assert_eq!(totals[name].as_u64(), Some(value), "{name} of {of:?}");
            }
        }
    }
}
