//! The Lackey reader's throughput in lines per second, beside a whole
//! simulation of the same trace: parsing must stay a small part of a
//! Lackey run.

use std::fmt::Write;
use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use linegrind::config::SimConfig;
use linegrind::simulator::simulate;
use linegrind::trace::{Access, Event, LackeyReader, TraceRead};

#[path = "common/workload.rs"]
mod workload;

/// The benchmark workload's instructions and accesses as Lackey prints
/// them, with the number of lines.
fn lackey_text(iterations: u64) -> (String, u64) {
    let mut text = String::new();
    let mut lines = 0;
    for event in workload::events(iterations) {
        let line = match event {
            Event::Instr { addr, len } => format!("I  {addr:08x},{len}"),
            Event::Data { access, addr, size } => {
                let kind = match access {
                    Access::Read => 'L',
                    Access::Write => 'S',
                    Access::Modify => 'M',
                };
                format!(" {kind} {addr:08x},{size}")
            }
            _ => continue,
        };
        writeln!(text, "{line}").unwrap();
        lines += 1;
    }
    (text, lines)
}

fn lackey(c: &mut Criterion) {
    let (text, lines) = lackey_text(40_000);
    let mut group = c.benchmark_group("lackey");
    group.throughput(Throughput::Elements(lines));
    group.sample_size(20);
    group.bench_function("read", |b| {
        b.iter(|| {
            let mut reader = LackeyReader::new(black_box(text.as_bytes()));
            std::iter::from_fn(|| reader.next_event().unwrap()).count()
        })
    });
    group.bench_function("read+simulate", |b| {
        b.iter(|| {
            let mut reader = LackeyReader::new(black_box(text.as_bytes()));
            simulate(&mut reader, SimConfig::default())
                .unwrap()
                .totals
                .0[0]
        })
    });
    group.finish();
}

criterion_group!(benches, lackey);
criterion_main!(benches);
