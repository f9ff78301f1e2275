//! The cache lookup alone: one set-associative LRU cache, and the whole
//! I1/D1/LL hierarchy with use tracking, on a stream of data accesses that
//! mixes a hot table (hits, most-recently-used and deeper in the set) with
//! a stream (misses and evictions). Throughput in accesses.

use std::hint::black_box;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use linegrind::cache::{
    ByteMask, CacheAccess, CacheGeometry, Hierarchy, L1Kind, Level, LineUse, Loader, NarrowMask,
    Release, SetAssocCache, UseSink,
};

/// Addresses: 3 of every 4 into a 16 KiB table, the rest a 64 MiB stream.
fn addresses(count: usize) -> Vec<u64> {
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut stream = 0x1000_0000u64;
    (0..count)
        .map(|i| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            if i % 4 == 3 {
                stream += 8;
                stream
            } else {
                0x4000_0000 + (state % (16 << 10)) / 8 * 8
            }
        })
        .collect()
}

/// Counts releases; holds nothing.
struct Counter(u64);

impl Release<()> for Counter {
    fn release<M: ByteMask>(
        &mut self,
        _: usize,
        _: Level,
        _: Loader<()>,
        used: &LineUse<M>,
        _: u32,
    ) {
        self.0 += used.count;
    }
}

impl UseSink<()> for Counter {
    fn hold(&mut self, _: usize) -> Loader<()> {
        Loader::default()
    }
}

fn cache(c: &mut Criterion) {
    let addrs = addresses(1 << 20);
    let mut group = c.benchmark_group("cache");
    group.throughput(Throughput::Elements(addrs.len() as u64));
    let d1: CacheGeometry = "32768,8,64".parse().unwrap();
    let ll: CacheGeometry = "8388608,16,64".parse().unwrap();
    group.bench_function("lookup D1 32K 8-way", |b| {
        b.iter_batched_ref(
            || SetAssocCache::new(d1).unwrap(),
            |cache| {
                let mut hits = 0u64;
                for &addr in black_box(&addrs) {
                    hits += u64::from(matches!(
                        cache.access(addr >> 6),
                        linegrind::cache::Lookup::Hit(_)
                    ));
                }
                hits
            },
            BatchSize::LargeInput,
        )
    });
    group.bench_function("hierarchy with use", |b| {
        b.iter_batched_ref(
            || Hierarchy::<(), NarrowMask>::new(d1, d1, &[ll], true).unwrap(),
            |caches| {
                let mut sink = Counter(0);
                let mut misses = 0u64;
                for &addr in black_box(&addrs) {
                    misses += u64::from(caches.access(L1Kind::Data, addr, 8, &mut sink).l1_miss);
                }
                misses + sink.0
            },
            BatchSize::LargeInput,
        )
    });
    group.finish();
}

criterion_group!(benches, cache);
criterion_main!(benches);
