//! Simulator throughput in events per second, with back-dating on and off
//! (its cost should stay around 10%), and without cache-use tracking; and
//! the text reader's throughput on a shipped trace.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use linegrind::attribution::backdate::{Backdate, NoBackdate};
use linegrind::attribution::calltree::CallTree;
use linegrind::config::SimConfig;
use linegrind::simulator::Simulator;
use linegrind::trace::{Event, TextReader, TraceRead};

#[path = "common/workload.rs"]
mod workload;

fn run<B: Backdate>(events: &[Event], config: SimConfig, backdate: B) -> u64 {
    let mut simulator = Simulator::new(config, backdate).unwrap();
    for event in events {
        simulator.apply(event.clone()).unwrap();
    }
    simulator.finish().totals.0[0]
}

fn simulate(c: &mut Criterion) {
    let events = workload::events(40_000);
    let (i1, d1, ll) = SimConfig::default_caches();
    let with_use = SimConfig::new(i1, d1, ll, true, true).unwrap();
    let misses_only = SimConfig::new(i1, d1, ll, false, false).unwrap();
    let mut group = c.benchmark_group("simulate");
    group.throughput(Throughput::Elements(events.len() as u64));
    group.sample_size(20);
    group.bench_function("cacheuse+backdate", |b| {
        b.iter(|| run(black_box(&events), with_use.clone(), CallTree::new()))
    });
    group.bench_function("cacheuse, backdate=no", |b| {
        b.iter(|| run(black_box(&events), with_use.clone(), NoBackdate))
    });
    group.bench_function("cacheuse=no", |b| {
        b.iter(|| run(black_box(&events), misses_only.clone(), NoBackdate))
    });
    group.finish();
}

fn read_text(c: &mut Criterion) {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/traces/stream_hot_table.lgt");
    let text = std::fs::read(path).unwrap();
    let count = {
        let mut reader = TextReader::new(&text[..]);
        std::iter::from_fn(|| reader.next_event().unwrap()).count()
    };
    let mut group = c.benchmark_group("text_reader");
    group.throughput(Throughput::Elements(count as u64));
    group.bench_function("stream_hot_table.lgt", |b| {
        b.iter(|| {
            let mut reader = TextReader::new(black_box(&text[..]));
            std::iter::from_fn(|| reader.next_event().unwrap()).count()
        })
    });
    group.finish();
}

criterion_group!(benches, simulate, read_text);
criterion_main!(benches);
