//! The back-dating tree stays small: millions of lines loaded and evicted
//! from thousands of distinct call chains keep it within the resident lines
//! plus the shared upper levels of the call tree, as the paper observes;
//! the stack samples of `--profile` share the prefixes of deep recursion.

use linegrind::attribution::calltree::CallTree;
use linegrind::cost::EventKind::*;
use linegrind::simulator::Simulator;
use linegrind::trace::{Access, Event, FunctionSymbol};

use crate::support::config;

const FANOUT: u64 = 20;
const ITERATIONS: u64 = 1_000_000;

fn function(start: u64, name: String) -> Event {
    Event::Function(Box::new(FunctionSymbol {
        start,
        end: start + 0x100,
        name,
        file: None,
        line: 0,
    }))
}

fn instr(addr: u64, len: u32) -> Event {
    Event::Instr { addr, len }
}

#[test]
fn tree_stays_within_resident_lines_plus_shared_levels() {
    // I1 and D1 hold 512 lines each, LL 4096.
    let config = config("32768,8,64", "32768,8,64", "262144,16,64");
    let resident_lines = 512 + 512 + 4096;
    let mut sim = Simulator::new(config, CallTree::new()).unwrap();
    let phase = |p: u64| 0x10000 + p * 0x100;
    let worker = |w: u64| 0x20000 + w * 0x100;
    let leaf = |l: u64| 0x30000 + l * 0x100;
    let mut apply = |event: Event| sim.apply(event).unwrap();
    apply(function(0x1000, "main".into()));
    for i in 0..FANOUT {
        apply(function(phase(i), format!("phase{i}")));
        apply(function(worker(i), format!("worker{i}")));
        apply(function(leaf(i), format!("leaf{i}")));
    }
    // main -> phase p -> worker w -> leaf l: 8,000 distinct chains, each
    // iteration streaming one new data line.
    let mut state = 12345u64;
    for k in 0..ITERATIONS {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let (p, w, l) = (state >> 33 & 0xff, state >> 41 & 0xff, state >> 49 & 0xff);
        let (p, w, l) = (p % FANOUT, w % FANOUT, l % FANOUT);
        for (site, target) in [
            (0x1000, phase(p)),
            (phase(p), worker(w)),
            (worker(w), leaf(l)),
        ] {
            apply(instr(site, 5));
            apply(Event::Call { target });
        }
        apply(instr(leaf(l), 4));
        apply(Event::Data {
            access: Access::Read,
            addr: 0x1000_0000 + k * 64,
            size: 8,
        });
        for at in [leaf(l) + 4, worker(w) + 5, phase(p) + 5] {
            apply(instr(at, 1));
            apply(Event::Return);
        }
        apply(instr(0x1005, 2));
    }
    let profile = sim.finish();
    let stats = profile.tree.unwrap();
    let mean_nodes = stats.mean_nodes.expect("a run of instructions has a mean");
    eprintln!(
        "{ITERATIONS} lines streamed: tree mean {:.0} nodes, max {}, {} created",
        mean_nodes, stats.max_nodes, stats.created_nodes
    );
    // Live nodes: those resident lines hold, plus the root, the 20 phase and
    // 400 phase/worker nodes above them, plus the active path.
    let bound = resident_lines + 1 + FANOUT + FANOUT * FANOUT + 4;
    assert!(stats.max_nodes <= bound, "{} > {bound}", stats.max_nodes);
    assert!(mean_nodes <= bound as f64);
    // Pruning works: far more nodes were created than ever lived at once.
    assert!(stats.created_nodes > 100 * stats.max_nodes);

    // Every line loaded was charged exactly once (no access straddles).
    let t = &profile.totals;
    assert!(t[DLmr] >= ITERATIONS);
    assert_eq!(t[Loaded1], 64 * (t[I1mr] + t[D1mr] + t[D1mw]));
    assert_eq!(t[Loaded2], 64 * (t[ILmr] + t[DLmr] + t[DLmw]));
    assert_eq!(t[Loaded1], t[Used1] + t[SpLoss1]);
    assert_eq!(t[Loaded2], t[Used2] + t[SpLoss2]);
    // Each streamed line wastes 56 of its 64 bytes, in both levels.
    assert!(t[SpLoss1] >= 56 * ITERATIONS && t[SpLoss2] >= 56 * ITERATIONS);
}

#[test]
fn stack_samples_of_deep_recursion_grow_with_the_depth_not_its_square() {
    const DEPTH: u64 = 5_000;
    let config = config("32768,8,64", "32768,8,64", "262144,16,64")
        .with_stack_samples(true)
        .unwrap();
    let mut sim = Simulator::new(config, CallTree::new()).unwrap();
    let mut apply = |event: Event| sim.apply(event).unwrap();
    apply(function(0x1000, "main".into()));
    apply(function(0x2000, "recurse".into()));
    apply(instr(0x1000, 5));
    apply(Event::Call { target: 0x2000 });
    // Each level loads a line of its own, so every depth has a stack.
    for level in 0..DEPTH {
        apply(instr(0x2000, 4));
        apply(Event::Data {
            access: Access::Read,
            addr: 0x1000_0000 + level * 4096,
            size: 8,
        });
        apply(instr(0x2004, 5));
        apply(Event::Call { target: 0x2000 });
    }
    for _ in 0..=DEPTH {
        apply(instr(0x2009, 1));
        apply(Event::Return);
    }
    apply(instr(0x1005, 1));
    let profile = sim.finish();
    let samples = profile.samples.unwrap();
    // One path per level, each its caller's plus one arc; the stacks are
    // the paths with their loading instructions.
    assert_eq!(samples.paths.len() as u64, DEPTH);
    assert!(samples.stacks.len() as u64 <= 3 * (DEPTH + 2));
    let deepest = samples.stacks.iter().filter_map(|stack| stack.path).max();
    let mut depth = 0;
    let mut at = deepest;
    while let Some(path) = at {
        depth += 1;
        at = samples.paths.get(path).0;
    }
    assert_eq!(depth, DEPTH);
}
