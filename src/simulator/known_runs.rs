//! Known blocks against the events their runs expand to. Known blocks
//! count Ir, Dr and Dw once per run, at the step the run stopped at, and
//! merge fetches that continue one I1 line into one step: runs that leave
//! by a side exit between one instruction's accesses, skip a guarded
//! access, or go through merged fetches must cost what the same runs given
//! event by event cost, instruction by instruction; and so must runs that
//! repeat one another, which are walked without their arrivals once a
//! round of them arrived by plain jumps, and without data accesses, are
//! counted at once once such a round also hit I1 all through.

use super::Simulator;
use crate::attribution::calltree::CallTree;
use crate::cache::CacheGeometry;
use crate::config::SimConfig;
use crate::cost::EventKind;
use crate::profile::Profile;
use crate::symbols::SkipRules;
use crate::trace::batch::{Feed, Replayed, RunHead};
use crate::trace::block::{BlockDef, BlockInstr, BlockRun, Expander, Item, JumpKind};
use crate::trace::{Access, Event, FunctionSymbol};

use Code::{Function, Plt};

mod random;

/// Profiles of `runs` (each a block number, an index into `defs`, and its
/// run), three times over, simulated with `config` as block runs and as
/// the events they expand to; every block of one function's code is known
/// after the first time.
/// Block runs come as the pipeline gives them: told of the call that enters
/// them as a reader tells them, through a batch, which gives cycles of runs
/// that repeat as their repeats. `code` is what the trace tells of the
/// code: the rest has no symbol.
fn runs_and_their_events(
    defs: &[BlockDef],
    runs: &[(usize, BlockRun)],
    config: SimConfig,
    code: &[Code],
) -> (Profile, Profile) {
    let (blocks, events, _) = runs_events_and_plans(defs, runs, config, code);
    (blocks, events)
}

/// [`runs_and_their_events`], and how many of the block runs' steady
/// rounds were walked from a plan.
fn runs_events_and_plans(
    defs: &[BlockDef],
    runs: &[(usize, BlockRun)],
    config: SimConfig,
    code: &[Code],
) -> (Profile, Profile, u64) {
    let mut blocks = Simulator::new(config.clone(), CallTree::new()).unwrap();
    let mut events = Simulator::new(config, CallTree::new()).unwrap();
    for symbol in code {
        let event = match *symbol {
            Function(start, end, name) => Event::Function(Box::new(FunctionSymbol {
                start,
                end,
                name: name.to_string(),
                file: None,
                line: 0,
            })),
            Plt(start, end) => Event::Plt { start, end },
        };
        for simulator in [&mut blocks, &mut events] {
            simulator.apply(event.clone()).unwrap();
        }
    }
    let mut expander = Expander::new();
    let mut calls = Expander::new();
    let mut expanded = Vec::new();
    for round in 0..3 {
        let mut feed = Feed::default();
        for (id, run) in runs {
            let def = &defs[*id];
            let start = feed.mark();
            let (guards, addrs) = feed.run_arrays();
            guards.extend_from_slice(&run.guards);
            addrs.extend_from_slice(&run.addrs);
            let head = RunHead {
                id: *id as u32,
                call: calls.enter(def),
                sp: run.sp,
                exit: run.exit,
                leaving: def.leaving(run.view()),
            };
            calls.leave(head.leaving);
            feed.push_run(head, start);
            expanded.clear();
            expander.expand(def, run, &mut expanded).unwrap();
            for event in expanded.drain(..) {
                events.apply(event).unwrap();
            }
        }
        let batch = &feed.batch;
        for (item, index) in batch.replay() {
            let Replayed::Run(run, arrays) = item else {
                continue;
            };
            blocks
                .block(&run.view(&defs[run.id as usize], arrays))
                .unwrap();
            if run.repeats > 0 {
                let cycle: Vec<_> = batch
                    .cycle_arrays(index, arrays)
                    .map(|(run, arrays)| run.view(&defs[run.id as usize], arrays))
                    .collect();
                blocks
                    .repeat(&cycle, run.repeats, arrays.repeats())
                    .unwrap();
            }
        }
        if round == 0 {
            let function_of = |addr| code.iter().position(|code| code.holds(addr));
            for (id, def) in defs.iter().enumerate() {
                let first = function_of(def.instrs[0].addr);
                let one = def
                    .instrs
                    .iter()
                    .all(|instr| function_of(instr.addr) == first);
                assert!(
                    !one || blocks.known.get(id).is_some(),
                    "block {id} is known"
                );
            }
        }
    }
    let planned = blocks.planned_rounds;
    (blocks.finish(), events.finish(), planned)
}

/// Code a trace tells of.
#[derive(Clone, Copy)]
enum Code {
    /// A function symbol: its start, end and name.
    Function(u64, u64, &'static str),
    /// PLT stubs without symbols, from start to end.
    Plt(u64, u64),
}

impl Code {
    fn holds(&self, addr: u64) -> bool {
        let (Function(start, end, _) | Plt(start, end)) = *self;
        (start..end).contains(&addr)
    }
}

/// A run that goes through the whole of its block.
fn full_run(addrs: &[u64]) -> BlockRun {
    BlockRun {
        sp: None,
        exit: None,
        guards: Vec::new(),
        addrs: addrs.to_vec(),
    }
}

#[test]
fn a_known_fetch_over_the_last_two_lines_of_the_address_space_runs_as_its_event() {
    let def = BlockDef {
        instrs: vec![BlockInstr {
            addr: u64::MAX - 71,
            len: 72,
            items: 0..0,
        }],
        items: Vec::new(),
        end: JumpKind::Boring,
    };
    let runs = [(0, full_run(&[]))];
    let (blocks, events) = runs_and_their_events(&[def], &runs, SimConfig::default(), &[]);
    assert_eq!(blocks.totals[EventKind::Ir], 3);
    assert_eq!(blocks.self_cost, events.self_cost);
}

#[test]
fn known_runs_count_as_their_events() {
    let access = |access, size, guarded| Item::Access {
        access,
        size,
        guarded,
    };
    let exit = Item::Exit {
        kind: JumpKind::Boring,
    };
    let instr = |addr, len, items| BlockInstr { addr, len, items };
    let def = BlockDef {
        instrs: vec![
            // A guarded read, a side exit, a write.
            instr(0x1000, 2, 0..3),
            // Two fetches that continue the first in its line: one step.
            instr(0x1002, 3, 3..3),
            instr(0x1005, 1, 3..3),
            // A modify, then a side exit.
            instr(0x1006, 4, 3..5),
            // Over a line boundary: looked up again; a read.
            instr(0x103e, 4, 5..6),
            // Continues it in the second line.
            instr(0x1042, 2, 6..6),
            // Over three lines: clamped to a line's worth over two.
            instr(0x1044, 150, 6..6),
            instr(0x10da, 1, 6..6),
            // Over four lines from a line's start: clamped to that line.
            instr(0x1100, 200, 6..6),
            // Longer than a line over only two: clamped as well, to end
            // before the next instruction, which does not continue it.
            instr(0x11c8, 66, 6..6),
            instr(0x120a, 1, 6..6),
        ],
        items: vec![
            access(Access::Read, 8, true),
            exit,
            access(Access::Write, 4, false),
            access(Access::Modify, 2, false),
            exit,
            access(Access::Read, 16, false),
        ],
        end: JumpKind::Boring,
    };
    let run = |exit, guards: &[bool], addrs: &[u64]| {
        let run = BlockRun {
            exit,
            guards: guards.to_vec(),
            ..full_run(addrs)
        };
        (0, run)
    };
    let runs = [
        run(None, &[true], &[0x8000, 0x8040, 0x8080, 0x80c0]),
        run(Some(0), &[false], &[]),
        run(Some(0), &[true], &[0x8100]),
        run(Some(1), &[false], &[0x8140, 0x8180]),
        run(None, &[false], &[0x81c0, 0x8200, 0x8240]),
        run(Some(1), &[true], &[0x8280, 0x82c0, 0x8300]),
    ];
    // The default caches, and an I1 of two lines, which every run that
    // goes through the block's four lines empties: then the known runs'
    // fetches alone make the use of a residency.
    let (i1, d1, ll) = SimConfig::default_caches();
    let tiny = CacheGeometry::new(128, 2, 64).unwrap();
    let configs = [i1, tiny].map(|i1| SimConfig::new(i1, d1, ll, true, true).unwrap());
    let defs = [def];
    for config in configs {
        let (blocks, events) = runs_and_their_events(&defs, &runs, config, &[]);
        assert_eq!(blocks.totals[EventKind::Dr], 3 * 5, "reads");
        assert_eq!(blocks.self_cost, events.self_cost);
        assert_eq!(blocks.totals, events.totals);
    }
}

/// A block of the instructions `instrs`, each its address and length,
/// without data accesses or side exits, that leaves by `end`.
fn plain_block(instrs: &[(u64, u8)], end: JumpKind) -> BlockDef {
    BlockDef {
        instrs: instrs
            .iter()
            .map(|&(addr, len)| BlockInstr {
                addr,
                len,
                items: 0..0,
            })
            .collect(),
        items: Vec::new(),
        end,
    }
}

/// Caches `i1`, `d1` and `ll`, tracking use if `cache_use`, and skipping
/// the function `skip` if one is given.
fn loop_config([i1, d1, ll]: [CacheGeometry; 3], cache_use: bool, skip: Option<&str>) -> SimConfig {
    skipping(SimConfig::new(i1, d1, ll, cache_use, true).unwrap(), skip)
}

/// `config`, skipping the function `skip` if one is given.
fn skipping(config: SimConfig, skip: Option<&str>) -> SimConfig {
    match skip {
        Some(skip) => config.with_skip(SkipRules {
            patterns: vec![skip.to_string()],
            plt: true,
        }),
        None => config,
    }
}

/// Asserts that the profiles of block runs and of their events cost the
/// same: totals, self costs, calls and the back-dating tree.
fn assert_alike(blocks: &Profile, events: &Profile) {
    assert_eq!(blocks.totals, events.totals);
    assert!(blocks.self_cost == events.self_cost, "self costs differ");
    assert_eq!(blocks.arcs, events.arcs);
    assert_eq!(blocks.tree, events.tree);
}

/// Loops that compute in registers, of two blocks and of one, in a
/// function that `main` calls and that is shown or skipped: with I1 big
/// enough, their runs after the first rounds are counted at once; with an
/// I1 of two lines, which the loop's lines thrash, each is run.
#[test]
fn loops_in_registers_count_as_their_runs_one_by_one() {
    let defs = [
        plain_block(&[(0x1000, 4)], JumpKind::Call),
        // A fetch, two that continue it, one over two lines and one that
        // continues that.
        plain_block(
            &[
                (0x2010, 3),
                (0x2013, 5),
                (0x2018, 2),
                (0x203e, 4),
                (0x2042, 2),
            ],
            JumpKind::Boring,
        ),
        // A fetch in another line and one that continues it.
        plain_block(&[(0x2080, 6), (0x2086, 2)], JumpKind::Boring),
        plain_block(&[(0x2100, 1)], JumpKind::Return),
        plain_block(&[(0x1004, 2)], JumpKind::Boring),
    ];
    let at = |sp| BlockRun {
        sp: Some(sp),
        ..full_run(&[])
    };
    let mut runs = vec![(0, at(0x7000))];
    for _ in 0..300 {
        runs.extend([(1, at(0x6ff8)), (2, at(0x6ff8))]);
    }
    runs.extend(std::iter::repeat_n((1, at(0x6ff8)), 200));
    runs.extend([(3, at(0x6ff8)), (4, at(0x7000))]);
    let functions = [
        Function(0x1000, 0x2000, "main"),
        Function(0x2000, 0x3000, "spin"),
    ];
    let (i1, d1, ll) = SimConfig::default_caches();
    let tiny = CacheGeometry::new(128, 2, 64).unwrap();
    for (i1, cache_use, skip) in [
        (i1, true, None),
        (i1, true, Some("spin")),
        (i1, false, None),
        (tiny, true, None),
    ] {
        let config = loop_config([i1, d1, ll], cache_use, skip);
        let (blocks, events) = runs_and_their_events(&defs, &runs, config, &functions);
        let per_round = 1 + 300 * (5 + 2) + 200 * 5 + 1 + 1;
        assert_eq!(blocks.totals[EventKind::Ir], 3 * per_round);
        assert_alike(&blocks, &events);
    }
}

/// A loop over memory, of two blocks (the second reading and writing an
/// array), in a function that `main` calls, after a call to a function
/// that writes a few lines and returns, and that is shown or skipped:
/// after the first rounds, its runs are walked without their arrivals,
/// and once I1 holds every line a round fetched, from a plan. With an LL
/// of four lines, its data misses end the LL residencies of the loop's
/// code lines while I1 holds them, which takes the use I1 saw of them
/// until then;
/// with a D1 of four lines as well, they evict the lines the first call
/// wrote, which lets its node of the back-dating tree go at the time the
/// plan says; with an I1 of one line, the loop's two lines thrash, and
/// its rounds are walked run by run.
#[test]
fn loops_over_memory_count_as_their_runs_one_by_one() {
    let access = |access, size| Item::Access {
        access,
        size,
        guarded: false,
    };
    let instr = |addr, len, items| BlockInstr { addr, len, items };
    let defs = [
        plain_block(&[(0x1000, 4)], JumpKind::Call),
        plain_block(&[(0x2010, 3), (0x2013, 5)], JumpKind::Boring),
        // A read, two fetches that continue it, a fetch over two lines
        // and a write.
        BlockDef {
            instrs: vec![
                instr(0x2030, 4, 0..1),
                instr(0x2034, 3, 1..1),
                instr(0x2037, 2, 1..1),
                instr(0x203e, 4, 1..2),
            ],
            items: vec![access(Access::Read, 8), access(Access::Write, 4)],
            end: JumpKind::Boring,
        },
        plain_block(&[(0x2100, 1)], JumpKind::Return),
        plain_block(&[(0x1004, 2)], JumpKind::Boring),
        plain_block(&[(0x0ffc, 4)], JumpKind::Call),
        // Three writes to lines of their own, from the I1 line of the
        // call's, so that only they hold the call's node of the
        // back-dating tree.
        BlockDef {
            instrs: vec![instr(0x0fe0, 4, 0..3)],
            items: vec![access(Access::Write, 8); 3],
            end: JumpKind::Return,
        },
    ];
    let at = |sp, addrs: &[u64]| BlockRun {
        sp: Some(sp),
        ..full_run(addrs)
    };
    let mut runs = vec![
        (5, at(0x7000, &[])),
        (6, at(0x6ff8, &[0x40_0000, 0x40_1040, 0x40_2080])),
        (0, at(0x7000, &[])),
    ];
    for round in 0..300 {
        let addrs = [0x10_0000 + 8 * round, 0x20_0000 + 4 * round];
        runs.extend([(1, at(0x6ff8, &[])), (2, at(0x6ff8, &addrs))]);
    }
    for round in 0..200 {
        runs.push((2, at(0x6ff8, &[0x30_0000 + 64 * round, 0x20_0000])));
    }
    runs.extend([(3, at(0x6ff8, &[])), (4, at(0x7000, &[]))]);
    let functions = [
        Function(0x0fe0, 0x0ffc, "fill"),
        Function(0x0ffc, 0x2000, "main"),
        Function(0x2000, 0x3000, "sweep"),
    ];
    let (i1, d1, ll) = SimConfig::default_caches();
    let tiny_i1 = CacheGeometry::new(64, 1, 64).unwrap();
    let tiny_d1 = CacheGeometry::new(256, 2, 64).unwrap();
    let tiny_ll = CacheGeometry::new(256, 2, 64).unwrap();
    for (caches, cache_use, skip) in [
        ([i1, d1, ll], true, None),
        ([i1, d1, tiny_ll], true, None),
        ([i1, d1, tiny_ll], true, Some("sweep")),
        ([i1, d1, tiny_ll], false, None),
        ([i1, tiny_d1, tiny_ll], true, None),
        ([i1, tiny_d1, tiny_ll], true, Some("sweep")),
        ([tiny_i1, d1, tiny_ll], true, None),
    ] {
        let config = loop_config(caches, cache_use, skip);
        let (blocks, events, planned) = runs_events_and_plans(&defs, &runs, config, &functions);
        let per_round = 2 + 1 + 300 * (2 + 4) + 200 * 4 + 1 + 1;
        assert_eq!(blocks.totals[EventKind::Ir], 3 * per_round);
        assert_eq!(blocks.totals[EventKind::Dr], 3 * 500);
        assert_alike(&blocks, &events);
        // All but the first few rounds of both loops, in each of the
        // three passes, unless I1 thrashes.
        if caches[0] == tiny_i1 {
            assert_eq!(planned, 0, "{caches:?}");
        } else {
            assert!(
                (3 * (500 - 2 * 4)..3 * 500).contains(&planned),
                "{planned} {caches:?}"
            );
        }
    }
}

/// Lines longer than 256 bytes are simulated without cache use, and known
/// blocks keep their fetches' offsets only in part (they are not looked
/// at): a loop planned there, whose fetches continue one another across
/// the middle of a 128 KiB line, counts as its runs do.
#[test]
fn loops_over_memory_in_lines_of_128_kib_count_as_their_runs_one_by_one() {
    let defs = [
        plain_block(&[(0x1000, 4)], JumpKind::Call),
        BlockDef {
            instrs: vec![
                BlockInstr {
                    addr: 0xfffa,
                    len: 4,
                    items: 0..1,
                },
                BlockInstr {
                    addr: 0xfffe,
                    len: 3,
                    items: 1..1,
                },
                BlockInstr {
                    addr: 0x1_0001,
                    len: 2,
                    items: 1..1,
                },
            ],
            items: vec![Item::Access {
                access: Access::Read,
                size: 8,
                guarded: false,
            }],
            end: JumpKind::Boring,
        },
        plain_block(&[(0x2_0000, 1)], JumpKind::Return),
    ];
    let at = |sp, addrs: &[u64]| BlockRun {
        sp: Some(sp),
        ..full_run(addrs)
    };
    let mut runs = vec![(0, at(0x7000, &[]))];
    runs.extend((0..100).map(|round| (1, at(0x6ff8, &[0x100_0000 + 8 * round]))));
    runs.push((2, at(0x6ff8, &[])));
    let functions = [
        Function(0x1000, 0x1100, "main"),
        Function(0xf000, 0x3_0000, "walk"),
    ];
    let l1 = CacheGeometry::new(256 << 10, 2, 128 << 10).unwrap();
    let ll = CacheGeometry::new(1 << 20, 2, 128 << 10).unwrap();
    let config = loop_config([l1, l1, ll], false, None);
    let (blocks, events, planned) = runs_events_and_plans(&defs, &runs, config, &functions);
    assert_eq!(blocks.totals[EventKind::Ir], 3 * (1 + 100 * 3 + 1));
    assert_alike(&blocks, &events);
    // All but the first few rounds of each pass.
    assert!(
        (3 * (100 - 4)..3 * 100).contains(&planned),
        "{planned} planned"
    );
}

/// A loop over memory whose round reads in its first line and then
/// fetches three lines of one I1 set of two ways: the round leaves I1
/// holding its first line but not its second, so a plan of it stops at
/// that line after taking every data access the round makes, and the
/// rounds are walked run by run.
#[test]
fn a_loop_whose_round_thrashes_i1_after_its_last_access_is_walked_run_by_run() {
    let defs = [
        plain_block(&[(0xf000, 4)], JumpKind::Call),
        BlockDef::one_read(0x1000, JumpKind::Boring),
        // Lines 0x1040, 0x10c0 and 0x1140: all in I1's second set.
        plain_block(&[(0x1040, 4), (0x10c0, 4), (0x1140, 4)], JumpKind::Boring),
        plain_block(&[(0x1200, 1)], JumpKind::Return),
        plain_block(&[(0xf004, 2)], JumpKind::Boring),
        // The function's entry, which jumps to the loop.
        plain_block(&[(0x0fc0, 4)], JumpKind::Boring),
    ];
    let at = |sp, addrs: &[u64]| BlockRun {
        sp: Some(sp),
        ..full_run(addrs)
    };
    let mut runs = vec![(0, at(0x7000, &[])), (5, at(0x6ff8, &[]))];
    for round in 0..100 {
        runs.extend([
            (1, at(0x6ff8, &[0x10_0000 + 8 * round])),
            (2, at(0x6ff8, &[])),
        ]);
    }
    runs.extend([(3, at(0x6ff8, &[])), (4, at(0x7000, &[]))]);
    let functions = [
        Function(0x0fc0, 0x2000, "walk"),
        Function(0xf000, 0xf100, "main"),
    ];
    let (_, d1, ll) = SimConfig::default_caches();
    let i1 = CacheGeometry::new(256, 2, 64).unwrap();
    for cache_use in [true, false] {
        let config = loop_config([i1, d1, ll], cache_use, None);
        let (blocks, events, planned) = runs_events_and_plans(&defs, &runs, config, &functions);
        assert_eq!(blocks.totals[EventKind::Ir], 3 * (2 + 100 * 4 + 2));
        // Each round misses the three lines of the second set.
        assert!(blocks.totals[EventKind::I1mr] >= 3 * 100 * 3);
        assert_alike(&blocks, &events);
        assert_eq!(planned, 0, "no round is planned");
    }
}

/// A `ret` to where no frame returns (with stack pointers) is taken for a
/// jump that enters a function. Into code without a symbol, it enters the
/// function named after its target, as a call there would, whether the
/// block there is known (in the frame of another function, where its first
/// instruction first ran) or not.
#[test]
fn a_jump_into_known_code_without_a_symbol_enters_the_function_of_its_target() {
    let exit = Item::Exit {
        kind: JumpKind::Return,
    };
    let defs = [
        // 0x1000: returns at once, or runs on into 0x1001.
        block(
            false,
            0,
            vec![(0, 1, vec![exit]), (0, 1, vec![])],
            JumpKind::Boring,
        ),
        block(false, 1, vec![(0, 1, vec![])], JumpKind::Call),
        block(false, 1, vec![(0, 1, vec![])], JumpKind::Boring),
    ];
    let returning = BlockRun {
        exit: Some(0),
        ..full_run(&[])
    };
    let with_sp = BlockRun {
        sp: Some(0x7000),
        ..full_run(&[])
    };
    // The callee's frame has the stack pointer the `ret` lands with.
    let mut runs = vec![
        (1, full_run(&[])),
        (2, with_sp.clone()),
        (0, returning),
        (0, with_sp),
    ];
    runs.extend((0..defs.len()).map(|id| (id, full_run(&[]))));
    let (blocks, events) = runs_and_their_events(&defs, &runs, SimConfig::default(), &[]);
    assert_eq!(blocks.arcs, events.arcs);
    let program = &blocks.program;
    let callees: Vec<&str> = blocks
        .arcs
        .iter()
        .filter(|arc| arc.target == 0x1000)
        .map(|arc| program.function(arc.callee).name.as_str())
        .collect();
    assert_eq!(callees, ["0x0000000000001000"]);
}

/// Functions `f` and `g`, side by side, of the two blocks below.
const F_AND_G: [Code; 2] = [Function(0x1000, 0x1100, "f"), Function(0x1100, 0x1200, "g")];

/// Runs of `defs`, the block `first` then the other, five times, without
/// stack pointers and with them: the block runs' profiles, which must be
/// the events' too.
fn f_and_g_runs(defs: &[BlockDef; 2], first: usize) -> [Profile; 2] {
    [None, Some(0x7000)].map(|sp| {
        let run = |id| {
            (
                id,
                BlockRun {
                    sp,
                    ..full_run(&[])
                },
            )
        };
        let runs: Vec<_> = (0..5).flat_map(|_| [run(first), run(1 - first)]).collect();
        let config = SimConfig::default();
        let (blocks, events) = runs_and_their_events(defs, &runs, config, &F_AND_G);
        assert_eq!(blocks.arcs, events.arcs, "{sp:?}");
        assert_eq!(blocks.self_cost, events.self_cost, "{sp:?}");
        blocks
    })
}

/// A jump from a known block of one function into the middle of another's
/// calls it, and a jump back into the first returns there (a `.cold` part
/// and its function), as when the runs are events: the arrival at a known
/// block looks at the function, not only at the object.
#[test]
fn a_jump_into_another_functions_middle_calls_it_or_returns_there() {
    let plain = |addr| block(false, addr, vec![(0, 4, vec![])], JumpKind::Boring);
    // f's middle, g's middle.
    for blocks in f_and_g_runs(&[plain(0x20), plain(0x110)], 0) {
        let program = &blocks.program;
        let calls: Vec<(&str, &str, u64)> = blocks
            .arcs
            .iter()
            .map(|arc| {
                let caller = program.function(blocks.caller(arc)).name.as_str();
                (
                    caller,
                    program.function(arc.callee).name.as_str(),
                    arc.calls,
                )
            })
            .collect();
        // Five times a pass, three passes; g's code is g's, in its calls.
        assert_eq!(calls, [("f", "g", 3 * 5)]);
        assert_eq!(blocks.arcs[0].inclusive[EventKind::Ir], 3 * 5);
    }
}

/// A block whose code runs on from one function into the next calls it
/// there, as when the runs are events; it is walked instruction by
/// instruction, not known.
#[test]
fn a_block_that_runs_on_into_another_function_calls_it() {
    // f's last instruction and g's first two, then back to f by a jump.
    let defs = [
        block(
            false,
            0xfc,
            vec![(0, 4, vec![]), (0, 4, vec![]), (0, 1, vec![])],
            JumpKind::Boring,
        ),
        block(false, 0x20, vec![(0, 4, vec![])], JumpKind::Boring),
    ];
    for blocks in f_and_g_runs(&defs, 1) {
        let calls: Vec<(u64, u64)> = blocks
            .arcs
            .iter()
            .map(|arc| (arc.calls, arc.inclusive[EventKind::Ir]))
            .collect();
        assert_eq!(calls, [(3 * 5, 2 * 3 * 5)]);
    }
}

/// A block of PLT stubs and code without a symbol after them, run again
/// after a jump that left frames put the stubs' code in the frame of the
/// other code's function: a jump from the other code to the stubs enters a
/// function, as they lie in another region, whichever frame ran them.
#[test]
fn a_jump_into_plt_stubs_run_in_another_regions_frame_enters_them() {
    let defs = [block(
        false,
        0x106,
        vec![(0, 3, vec![]), (119, 1, vec![])],
        JumpKind::Boring,
    )];
    let runs: Vec<(usize, BlockRun)> = [None, Some(0x6f78), Some(0x7000)]
        .into_iter()
        .map(|sp| {
            (
                0,
                BlockRun {
                    sp,
                    ..full_run(&[])
                },
            )
        })
        .collect();
    let code = [
        Function(0x1000, 0x1100, "body"),
        Plt(0x1100, 0x1180),
        Function(0x1200, 0x1280, "other"),
    ];
    let (blocks, events) = runs_and_their_events(&defs, &runs, SimConfig::default(), &code);
    assert_alike(&blocks, &events);
}

/// A block of `instrs` ending by `end`: starting at `addr` near the
/// bottom of the address space, or, with `top`, ending `addr` bytes below
/// its top.
fn block(top: bool, addr: u64, instrs: Vec<(u8, u8, Vec<Item>)>, end: JumpKind) -> BlockDef {
    let span: u64 = instrs
        .iter()
        .map(|&(gap, len, _)| u64::from(gap) + u64::from(len))
        .sum();
    let mut next = if top {
        u64::MAX - addr - span + 1
    } else {
        0x1000 + addr
    };
    let mut def = BlockDef {
        end,
        ..BlockDef::default()
    };
    for (gap, len, items) in instrs {
        let addr = next + u64::from(gap);
        next = addr.wrapping_add(u64::from(len));
        let first = def.items.len();
        def.items.extend(items);
        def.instrs.push(BlockInstr {
            addr,
            len,
            items: first..def.items.len(),
        });
    }
    def
}

/// A block of code without a symbol whose one instruction, of 33 bytes
/// over three 16-byte lines, is fetched clamped to a line's worth, and
/// whose call returns where the instruction ends, not where its fetch
/// did: the call's arcs, and the jumps from its side exit into a named
/// function, are as its events make them.
#[test]
fn a_block_whose_last_fetch_is_clamped_ends_where_its_instruction_does() {
    let exit = Item::Exit {
        kind: JumpKind::Boring,
    };
    let defs = [
        block(false, 1, vec![(0, 1, vec![])], JumpKind::Boring),
        block(true, 0, vec![(0, 33, vec![exit])], JumpKind::Call),
    ];
    let side = BlockRun {
        exit: Some(0),
        ..full_run(&[])
    };
    let runs = [(1, side), (0, full_run(&[])), (1, full_run(&[]))];
    let l1 = CacheGeometry::new(1024, 2, 16).unwrap();
    let ll = CacheGeometry::new(16384, 4, 16).unwrap();
    let config = SimConfig::new(l1, l1, ll, false, true).unwrap();
    let body = [Function(0x1000, 0x4000, "body")];
    let (blocks, events) = runs_and_their_events(&defs, &runs, config, &body);
    assert_alike(&blocks, &events);
}
