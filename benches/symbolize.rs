//! Symbolization cost: a trace of ten million events calling into 500
//! functions of a real binary with DWARF (this benchmark's own executable),
//! a few thousand distinct instructions, simulated with and without its
//! object mapped. The difference is the whole cost of symbolization, paid
//! once per address.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use linegrind::attribution::calltree::CallTree;
use linegrind::config::SimConfig;
use linegrind::simulator::Simulator;
use linegrind::trace::{Event, ModuleMapping};
use object::{Object, ObjectSymbol, SymbolKind};

const EVENTS: usize = 10_000_000;
const FUNCTIONS: usize = 500;
const PER_FUNCTION: u64 = 5;

/// Start addresses of text functions of `path` long enough to run
/// `PER_FUNCTION` 4-byte instructions.
fn functions(path: &str) -> Vec<u64> {
    let data = std::fs::read(path).unwrap();
    let elf = object::File::parse(&*data).unwrap();
    let mut starts: Vec<u64> = elf
        .symbols()
        .filter(|s| s.kind() == SymbolKind::Text && s.size() >= 4 * PER_FUNCTION + 8)
        .map(|s| s.address())
        .collect();
    starts.sort_unstable();
    starts.dedup();
    starts.truncate(FUNCTIONS + 1);
    starts
}

/// A driver (the first function) calling the others in turn; each runs
/// `PER_FUNCTION` instructions and returns.
fn trace(starts: &[u64], bias: u64) -> Vec<Event> {
    let (driver, callees) = (starts[0] + bias, &starts[1..]);
    let mut events = Vec::with_capacity(EVENTS + 16);
    let mut next = 0;
    while events.len() < EVENTS {
        let callee = callees[next % callees.len()] + bias;
        next += 1;
        events.push(Event::Instr {
            addr: driver,
            len: 4,
        });
        events.push(Event::Call { target: callee });
        for i in 0..PER_FUNCTION {
            events.push(Event::Instr {
                addr: callee + 4 * i,
                len: 4,
            });
        }
        events.push(Event::Return);
        events.push(Event::Instr {
            addr: driver + 4,
            len: 4,
        });
    }
    events
}

fn run(events: &[Event]) -> u64 {
    let mut simulator = Simulator::new(SimConfig::default(), CallTree::new()).unwrap();
    for event in events {
        simulator.apply(event.clone()).unwrap();
    }
    simulator.finish().program.instrs().len() as u64
}

fn symbolize(c: &mut Criterion) {
    let exe = std::env::current_exe().unwrap();
    let exe = exe.to_str().unwrap();
    let bias = 0x5555_0000_0000u64;
    let instructions = trace(&functions(exe), bias);
    let mut mapped = vec![Event::Module(Box::new(ModuleMapping {
        path: exe.to_string(),
        bias,
        range: None,
        build_id: None,
        embedded: false,
    }))];
    mapped.extend(instructions.iter().cloned());
    eprintln!(
        "{} events, {} distinct instructions of {exe}",
        instructions.len(),
        run(&instructions)
    );
    let mut group = c.benchmark_group("symbolize");
    group.sample_size(10);
    group.throughput(Throughput::Elements(instructions.len() as u64));
    group.bench_function("10M events, no symbols", |b| {
        b.iter(|| run(black_box(&instructions)))
    });
    group.bench_function("10M events, ELF + DWARF symbols", |b| {
        b.iter(|| run(black_box(&mapped)))
    });
    group.finish();
}

criterion_group!(benches, symbolize);
criterion_main!(benches);
