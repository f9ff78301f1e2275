//! The trace decoder and the whole `sim` pipeline on a recorded trace
//! (`traces/hydro.lgt`, 11.7 M instructions and 4.8 M accesses), in events
//! (instructions plus accesses) per second: decoding alone, into batches as
//! `sim`'s decoding thread does; simulation with
//! cache use and back-dating (the default), without back-dating, and eight
//! LL sizes from one decoding.

use std::fs::File;
use std::hint::black_box;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use linegrind::cache::CacheGeometry;
use linegrind::config::SimConfig;
use linegrind::pipeline::simulate_each;
use linegrind::trace::{AnyReader, Feed, TraceRead};

const TRACE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/traces/hydro.lgt");

fn open() -> AnyReader {
    AnyReader::new(File::open(TRACE).unwrap(), false).unwrap()
}

/// Decodes the whole trace into batches, as `sim`'s decoding thread does;
/// the number of items decoded.
fn decode(reader: &mut AnyReader) -> usize {
    let mut feed = Feed::default();
    let mut items = 0;
    loop {
        let more = reader.fill(&mut feed).unwrap();
        items += feed.batch.len();
        feed.batch.clear();
        if !more {
            return items;
        }
    }
}

fn config(ll: u64, backdate: bool) -> SimConfig {
    let (i1, d1, _) = SimConfig::default_caches();
    let ll = CacheGeometry::new(ll, 16, 64).unwrap();
    SimConfig::new(i1, d1, ll, true, backdate).unwrap()
}

fn pipeline(c: &mut Criterion) {
    let events = open().events().unwrap();
    let mut group = c.benchmark_group("pipeline");
    group.throughput(Throughput::Elements(events));
    group.sample_size(10);
    // The decoder alone, the trace opened (its end and symbols read) before
    // the clock starts.
    group.bench_function("decode", |b| {
        b.iter_batched(
            open,
            |mut reader| decode(black_box(&mut reader)),
            BatchSize::LargeInput,
        )
    });
    let run = |configs: &[SimConfig]| {
        let (_, profiles) = simulate_each(open(), configs, &|_| {}).unwrap();
        profiles.len()
    };
    let default = [config(8 << 20, true)];
    group.bench_function("sim", |b| b.iter(|| run(black_box(&default))));
    let no_backdate = [config(8 << 20, false)];
    group.bench_function("sim, backdate=no", |b| {
        b.iter(|| run(black_box(&no_backdate)))
    });
    let sweep: Vec<SimConfig> = (0..8).map(|i| config((256 << 10) << i, true)).collect();
    group.bench_function("sim, sweep of 8 LL sizes", |b| {
        b.iter(|| run(black_box(&sweep)))
    });
    group.finish();
}

criterion_group!(benches, pipeline);
criterion_main!(benches);
