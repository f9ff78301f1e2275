//! The back-dating tree against a deliberately naive reference that stores
//! the whole call stack of every resident line and charges every arc on it
//! at eviction. On random traces with several threads (ending, and
//! starting again under the same id), signal handlers, recursion, returns
//! without calls, longjmp-like returns, recording restarted (every stack
//! emptied) and frames still open at the end,
//! both must give the same cost for every event of every arc and every
//! instruction.

use linegrind::arcs::ArcId;
use linegrind::attribution::backdate::{Backdate, NoBackdate, TreeStats};
use linegrind::attribution::calltree::CallTree;
use linegrind::config::SimConfig;
use linegrind::cost::{Cost, EventKind, ResidencyCost, UseCost};
use linegrind::profile::Profile;
use linegrind::simulator::Simulator;
use linegrind::stack_samples::{PathId, Paths};
use linegrind::trace::{Access, Event, FunctionSymbol};
use proptest::prelude::*;

use crate::support::config;

/// Remembers the stack of every line at load time, never forgets.
#[derive(Default)]
struct BruteForce {
    stacks: Vec<Vec<ArcId>>,
    arc_costs: Vec<UseCost>,
}

impl Backdate for BruteForce {
    type Cursor = Vec<ArcId>;
    type Line = usize;

    fn root(&mut self, _: u64) -> Vec<ArcId> {
        Vec::new()
    }

    fn enter(&mut self, stack: &mut Vec<ArcId>, arc: ArcId, _: u64) {
        stack.push(arc);
    }

    fn leave(&mut self, stack: &mut Vec<ArcId>, _: u64) {
        stack.pop();
    }

    fn close(&mut self, _: Vec<ArcId>, _: u64) {}

    fn hold(&mut self, _: usize, stack: &mut Vec<ArcId>, _: u64) -> usize {
        self.stacks.push(stack.clone());
        self.stacks.len() - 1
    }

    fn charge(&mut self, _: usize, line: usize, cost: &ResidencyCost, _: u64) {
        for arc in &self.stacks[line] {
            let index = arc.0 as usize;
            if self.arc_costs.len() <= index {
                self.arc_costs.resize(index + 1, UseCost::default());
            }
            self.arc_costs[index] += cost;
        }
    }

    fn let_go(&mut self, lane: usize, _: usize, _: u64) {
        unreachable!("a line of lane {lane} of one let go uncharged");
    }

    fn miss(&mut self, lane: usize, _: &mut Vec<ArcId>, _: EventKind) {
        unreachable!("a miss in lane {lane} of one");
    }

    fn stack(&mut self, line: &usize, paths: &mut Paths) -> Option<PathId> {
        self.stacks[*line]
            .iter()
            .fold(None, |path, &arc| Some(paths.child(path, arc)))
    }

    fn finish(self, _: u64) -> (Vec<UseCost>, Option<TreeStats>) {
        (self.arc_costs, None)
    }
}

/// Every path's arcs, outermost first.
fn arcs_of(paths: &Paths) -> Vec<Vec<ArcId>> {
    (0..paths.len() as u32)
        .map(|path| {
            let mut arcs = Vec::new();
            let mut at = Some(PathId(path));
            while let Some(path) = at {
                let (parent, arc) = paths.get(path);
                arcs.push(arc);
                at = parent;
            }
            arcs.reverse();
            arcs
        })
        .collect()
}

/// One step of a random program; the generator turns it into valid events.
#[derive(Clone, Debug)]
enum Op {
    Instr { offset: u8 },
    Data { write: u8, addr: u16, size: u8 },
    Call { func: u8 },
    Ret { skip: u8 },
    Thread { tid: u8 },
    ThreadExit { tid: u8 },
    Signal,
    SigReturn,
    Restart,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        30 => (0u8..0xe0).prop_map(|offset| Op::Instr { offset }),
        30 => (0u8..3, 0u16..0x600, 1u8..=20)
            .prop_map(|(write, addr, size)| Op::Data { write, addr, size }),
        3 => Just(Op::Data { write: 0, addr: 0x123, size: 64 }),
        12 => (1u8..=4).prop_map(|func| Op::Call { func }),
        10 => (0u8..4).prop_map(|skip| Op::Ret { skip }),
        3 => (1u8..=3).prop_map(|tid| Op::Thread { tid }),
        1 => (1u8..=3).prop_map(|tid| Op::ThreadExit { tid }),
        2 => Just(Op::Signal),
        3 => Just(Op::SigReturn),
        1 => Just(Op::Restart),
    ]
}

/// Function 0 is `main` and 5 the signal handler; neither is ever called,
/// so they run only at the bottom of their stacks.
const FUNCTIONS: u64 = 6;
const HANDLER: u64 = 5;

fn base(func: u64) -> u64 {
    0x1000 + func * 0x100
}

#[derive(Clone, Default)]
struct ContextState {
    /// (function, return address) of each open call.
    stack: Vec<(u64, u64)>,
    func: u64,
    last: Option<(u64, u64)>,
    /// Where the next instruction must run, after a call or a return.
    next: Option<u64>,
    /// The last instruction already called or returned.
    transferred: bool,
}

/// Turns random steps into a valid trace, tracking each context's stack the
/// way the simulator does.
fn events(ops: &[Op]) -> Vec<Event> {
    let mut out: Vec<Event> = (0..FUNCTIONS)
        .map(|func| {
            Event::Function(Box::new(FunctionSymbol {
                start: base(func),
                end: base(func + 1),
                name: ["main", "a", "b", "c", "d", "handler"][func as usize].into(),
                file: None,
                line: 0,
            }))
        })
        .collect();
    let mut threads: Vec<(u8, Vec<ContextState>)> = vec![(1, vec![ContextState::default()])];
    let mut current = 0;
    // The length is a function of the address, as in real code.
    let instr = |ctx: &mut ContextState, offset: u64, out: &mut Vec<Event>| {
        let addr = match ctx.next.take() {
            Some(addr) => addr,
            None => base(ctx.func) + offset,
        };
        let len = 1 + addr % 7;
        ctx.transferred = false;
        ctx.last = Some((addr, len));
        out.push(Event::Instr {
            addr,
            len: len as u32,
        });
    };
    for op in ops {
        let contexts = &mut threads[current].1;
        let ctx = contexts.last_mut().unwrap();
        let needs_fresh = ctx.last.is_none() || ctx.transferred;
        match *op {
            Op::Instr { offset } => instr(ctx, offset.into(), &mut out),
            Op::Data { write, addr, size } => {
                if ctx.last.is_none() {
                    instr(ctx, 0, &mut out);
                }
                let access = [Access::Read, Access::Write, Access::Modify][write as usize];
                out.push(Event::Data {
                    access,
                    addr: 0x10000 + u64::from(addr),
                    size: size.into(),
                });
            }
            Op::Call { func } => {
                if needs_fresh {
                    instr(ctx, 0x10, &mut out);
                }
                // The return address must stay inside the caller (the fresh
                // instruction may have been a return near its end).
                let near_end = ctx
                    .last
                    .is_some_and(|(addr, len)| addr + len >= base(ctx.func) + 0xf0);
                if near_end {
                    instr(ctx, 0x10, &mut out);
                }
                let (addr, len) = ctx.last.unwrap();
                out.push(Event::Call {
                    target: base(func.into()),
                });
                ctx.transferred = true;
                ctx.stack.push((ctx.func, addr + len));
                ctx.func = func.into();
                ctx.next = Some(base(func.into()));
            }
            Op::Ret { skip } => {
                if needs_fresh {
                    instr(ctx, 0x20, &mut out);
                }
                out.push(Event::Return);
                ctx.transferred = true;
                if ctx.stack.is_empty() {
                    continue;
                }
                let depth = ctx.stack.len();
                let wanted = depth - 1 - (skip as usize).min(depth - 1);
                let ra = ctx.stack[wanted].1;
                let index = ctx.stack.iter().rposition(|f| f.1 == ra).unwrap();
                ctx.func = ctx.stack[index].0;
                ctx.stack.truncate(index);
                ctx.next = Some(ra);
            }
            Op::Thread { tid } => {
                current = match threads.iter().position(|t| t.0 == tid) {
                    Some(index) => index,
                    None => {
                        threads.push((tid, vec![ContextState::default()]));
                        threads.len() - 1
                    }
                };
                out.push(Event::Thread { tid: tid.into() });
            }
            Op::ThreadExit { tid } => {
                if let Some(thread) = threads.iter_mut().find(|t| t.0 == tid) {
                    thread.1 = vec![ContextState::default()];
                }
                out.push(Event::ThreadExit { tid: tid.into() });
            }
            Op::Signal => {
                out.push(Event::Signal { signo: 10 });
                contexts.push(ContextState {
                    func: HANDLER,
                    ..ContextState::default()
                });
            }
            Op::SigReturn => {
                if contexts.len() > 1 {
                    out.push(Event::SigReturn);
                    contexts.pop();
                }
            }
            Op::Restart => {
                // Every context starts again at its outermost function.
                for (_, contexts) in &mut threads {
                    for (depth, context) in contexts.iter_mut().enumerate() {
                        let func = if depth == 0 { 0 } else { HANDLER };
                        *context = ContextState {
                            func,
                            ..ContextState::default()
                        };
                    }
                }
                out.push(Event::Restart);
            }
        }
    }
    out
}

fn simulate<B: Backdate>(backdate: B, events: &[Event], config: SimConfig) -> Profile {
    let mut simulator = Simulator::new(config, backdate).unwrap();
    for event in events {
        simulator.apply(event.clone()).unwrap();
    }
    simulator.finish()
}

/// Tiny caches with 16-byte lines, so lines are evicted all the time; the
/// second has an LL smaller than the L1s, so LL evicts lines still in L1.
fn configs() -> [SimConfig; 2] {
    [
        config("128,2,16", "256,2,16", "512,4,16"),
        config("256,4,16", "256,2,16", "128,2,16"),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1500))]

    #[test]
    fn tree_agrees_with_the_brute_force_reference(ops in prop::collection::vec(op(), 0..300)) {
        let events = events(&ops);
        for config in configs() {
            let sampled = config.clone().with_stack_samples(true).unwrap();
            let tree = simulate(CallTree::new(), &events, sampled.clone());
            let reference = simulate(BruteForce::default(), &events, sampled);
            prop_assert_eq!(&tree.arcs, &reference.arcs);
            prop_assert_eq!(&tree.self_cost, &reference.self_cost);
            // The tree gives every line the stack it was loaded on.
            let (ours, theirs) = (tree.samples.as_ref().unwrap(), reference.samples.as_ref().unwrap());
            prop_assert_eq!(&ours.stacks, &theirs.stacks);
            prop_assert_eq!(arcs_of(&ours.paths), arcs_of(&theirs.paths));
            for figure in 0..linegrind::stack_samples::FIGURES.len() {
                prop_assert_eq!(ours.samples(figure), theirs.samples(figure));
            }

            // Without back-dating, self costs are the same and arcs keep only
            // their immediate costs.
            let plain = simulate(NoBackdate, &events, config);
            prop_assert_eq!(&plain.self_cost, &tree.self_cost);
            prop_assert_eq!(plain.arcs.len(), tree.arcs.len());
            for (plain, tree) in plain.arcs.iter().zip(&tree.arcs) {
                for kind in EventKind::ALL {
                    let expected = if kind.is_immediate() { tree.inclusive[kind] } else { 0 };
                    prop_assert_eq!(plain.inclusive[kind], expected);
                }
            }
            check_conservation(&tree);
        }
    }
}

/// Every cost is somebody's self cost, and reaches the roots' inclusive
/// cost exactly once; every loaded byte is used or wasted.
fn check_conservation(profile: &Profile) {
    let roots = ["main", "handler"];
    let is_root = |func: linegrind::program::FnId| {
        roots.contains(&profile.program.function(func).name.as_str())
    };
    let mut root_inclusive = Cost::ZERO;
    for (func, cost) in profile.function_self_costs().iter().enumerate() {
        if is_root(linegrind::program::FnId(func as u32)) {
            root_inclusive += cost;
        }
    }
    for arc in &profile.arcs {
        if is_root(profile.caller(arc)) {
            root_inclusive += &arc.inclusive;
        }
    }
    assert_eq!(root_inclusive, profile.totals, "root inclusive != total");
    use EventKind::*;
    let t = &profile.totals;
    assert_eq!(t[Loaded1], t[Used1] + t[SpLoss1]);
    assert_eq!(t[Loaded2], t[Used2] + t[SpLoss2]);
    // A miss loads one line, or two when the access straddles.
    let l1_misses = t[I1mr] + t[D1mr] + t[D1mw];
    let ll_misses = t[ILmr] + t[DLmr] + t[DLmw];
    assert!(t[Loaded1] / 16 >= l1_misses && t[Loaded1] / 16 <= 2 * l1_misses);
    assert!(t[Loaded2] / 16 >= ll_misses && t[Loaded2] / 16 <= 2 * ll_misses);
}
