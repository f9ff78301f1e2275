//! Random blocks, runs and loops over memory, simulated as block runs and
//! as the events they expand to, which must cost the same.

use proptest::prelude::*;

use super::*;

/// How a random block or side exit leaves: mostly by a jump.
fn jump() -> impl Strategy<Value = JumpKind> {
    prop_oneof![
        4 => Just(JumpKind::Boring),
        1 => Just(JumpKind::Call),
        1 => Just(JumpKind::Return),
    ]
}

/// An item of a random block: an access, mostly of a usual size, maybe
/// guarded; or a side exit.
fn item() -> impl Strategy<Value = Item> {
    let access = prop_oneof![
        Just(Access::Read),
        Just(Access::Write),
        Just(Access::Modify)
    ];
    let size = prop_oneof![
        4 => prop::sample::select(vec![1u16, 2, 4, 8, 16]),
        1 => 1u16..300,
    ];
    prop_oneof![
        4 => (access, size, prop::bool::weighted(0.2)).prop_map(|(access, size, guarded)| {
            Item::Access {
                access,
                size,
                guarded,
            }
        }),
        1 => jump().prop_map(|kind| Item::Exit { kind }),
    ]
}

/// An instruction of a random block: the gap from the previous one's end
/// (mostly none), its length (mostly short) and its items.
fn instr() -> impl Strategy<Value = (u8, u8, Vec<Item>)> {
    let gap = prop_oneof![6 => Just(0u8), 1 => any::<u8>()];
    let len = prop_oneof![8 => 1u8..16, 1 => 1u8..=255];
    (gap, len, prop::collection::vec(item(), 0..3))
}

/// What a random run of `def` chooses: which side exit it takes (an index
/// into its exits, None or past the last to run to the end), the outcome
/// of each guard, and data addresses, drawn from `choices` in turn.
fn run_of(def: &BlockDef, exit: Option<u32>, choices: &[(bool, u16)]) -> BlockRun {
    let exit = exit.filter(|&exit| (exit as usize) < def.exit_instrs().len());
    let mut run = BlockRun {
        exit,
        ..full_run(&[])
    };
    let mut choices = choices.iter().cycle();
    let mut exits_left = exit.unwrap_or(u32::MAX);
    for item in &def.items {
        match *item {
            Item::Exit { .. } => {
                if exits_left == 0 {
                    break;
                }
                exits_left -= 1;
            }
            Item::Access { guarded, .. } => {
                let &(happened, offset) = choices.next().unwrap();
                if guarded {
                    run.guards.push(happened);
                    if !happened {
                        continue;
                    }
                }
                run.addrs.push(0x8000 + u64::from(offset % 0x1000));
            }
        }
    }
    run
}

proptest! {
    // Cases are cheap (4,096 of both tests take about 3 s): 256, the
    // default, had not found a block whose clamped last fetch moved its
    // end.
    #![proptest_config(ProptestConfig::with_cases(4096))]

    /// Random blocks (near the bottom or up to the top of the address
    /// space) that leave by jumps, calls and returns run in random order,
    /// with random exits, guards, data addresses and stack pointers, and
    /// cycles of runs repeated, their addresses moved by each repeat,
    /// through caches of one line size from 16 to 256 bytes, with I1 and D1
    /// of 64 lines, or of two, which evict lines between the runs of a
    /// block and within them, and an LL of 1024 lines or of four, whose
    /// data misses evict lines of code that I1 holds.
    #[test]
    fn random_known_runs_count_as_their_events(
        blocks in prop::collection::vec(
            (
                any::<bool>(),
                0u64..0x400,
                prop::collection::vec(instr(), 1..10),
                jump(),
                prop::bool::weighted(0.3),
            ),
            1..4,
        ),
        order in prop::collection::vec(
            (
                any::<prop::sample::Index>(),
                prop::option::of(0u32..4),
                prop::option::of(0u64..64),
                // A cycle of the last runs, repeated: its length, repeats,
                // and how far each repeat moves the addresses.
                (
                    1usize..=5,
                    prop_oneof![3 => Just(0usize), 1 => 1usize..40],
                    prop_oneof![Just(0u64), 1u64..0x100],
                ),
            ),
            1..12,
        ),
        choices in prop::collection::vec((prop::bool::weighted(0.7), any::<u16>()), 1..32),
        line_bits in 4u32..=8,
        small_l1 in any::<bool>(),
        small_ll in any::<bool>(),
        cache_use in any::<bool>(),
        symbols in 0u8..3,
    ) {
        let defs: Vec<BlockDef> = blocks
            .into_iter()
            .map(|(top, addr, mut instrs, end, registers_only)| {
                // Some blocks compute in registers: runs of them that
                // repeat one another are a batch's repeats.
                if registers_only {
                    for (_, _, items) in &mut instrs {
                        items.retain(|item| matches!(item, Item::Exit { .. }));
                    }
                }
                block(top, addr, instrs, end)
            })
            .collect();
        let mut runs: Vec<(usize, BlockRun)> = Vec::new();
        for (index, exit, sp, (period, repeats, stride)) in &order {
            let id = index.index(defs.len());
            let run = BlockRun {
                sp: sp.map(|sp| 0x7000 - 8 * sp),
                ..run_of(&defs[id], *exit, &choices)
            };
            runs.push((id, run));
            let cycle = runs[runs.len().saturating_sub(*period)..].to_vec();
            for repeat in 1..=*repeats as u64 {
                runs.extend(cycle.iter().map(|(id, run)| {
                    let mut run = run.clone();
                    for addr in &mut run.addrs {
                        *addr += repeat * stride;
                    }
                    (*id, run)
                }));
            }
        }
        runs.extend(defs.iter().enumerate().map(|(id, def)| (id, run_of(def, None, &choices))));
        let line = 1u32 << line_bits;
        let l1_size = if small_l1 { 2 * u64::from(line) } else { 64 * u64::from(line) };
        let l1 = CacheGeometry::new(l1_size, 2, line).unwrap();
        let ll_size = if small_ll { 4 * u64::from(line) } else { 1024 * u64::from(line) };
        let ll = CacheGeometry::new(ll_size, 4, line).unwrap();
        let config = SimConfig::new(l1, l1, ll, cache_use, true).unwrap();
        // Code near the bottom of the address space: named, or not at
        // all, or partly named with PLT stubs between, which a jump to or
        // from enters a function.
        let code: &[Code] = match symbols {
            0 => &[],
            1 => &[Function(0x1000, 0x4000, "body")],
            _ => &[
                Function(0x1000, 0x1100, "body"),
                Plt(0x1100, 0x1180),
                Function(0x1200, 0x1280, "other"),
            ],
        };
        let (blocks, events) = runs_and_their_events(&defs, &runs, config, code);
        prop_assert_eq!(blocks.totals, events.totals);
        prop_assert!(blocks.self_cost == events.self_cost, "self costs differ");
        prop_assert_eq!(blocks.arcs, events.arcs);
        prop_assert_eq!(blocks.tree, events.tree);
    }

    /// Loops over memory: a cycle of up to four runs of random named blocks
    /// that leave by jumps, with unguarded accesses and side exits, entered
    /// by a call and repeated many times, each repeat's addresses moved by
    /// a random stride, through caches of one line size from 16 to 256
    /// bytes, small enough that the data evict the loop's code from LL, or
    /// from I1 and LL, with the loop's function shown or skipped: most
    /// rounds are walked without their arrivals, and those after a round
    /// whose lines I1 still holds from a plan.
    #[test]
    fn random_loops_over_memory_count_as_their_events(
        blocks in prop::collection::vec(prop::collection::vec(instr(), 1..8), 1..4),
        cycle in prop::collection::vec((any::<prop::sample::Index>(), prop::option::of(0u32..3)), 1..=4),
        repeats in 1usize..80,
        stride in prop_oneof![Just(0u64), 1u64..0x200],
        choices in prop::collection::vec((any::<bool>(), any::<u16>()), 1..16),
        line_bits in 4u32..=8,
        small_l1 in any::<bool>(),
        cache_use in any::<bool>(),
        skip in any::<bool>(),
    ) {
        let mut defs: Vec<BlockDef> = blocks
            .into_iter()
            .enumerate()
            .map(|(at, mut instrs)| {
                for (_, _, items) in &mut instrs {
                    for item in items.iter_mut() {
                        *item = match *item {
                            Item::Access { access, size, .. } => Item::Access {
                                access,
                                size,
                                guarded: false,
                            },
                            Item::Exit { .. } => Item::Exit {
                                kind: JumpKind::Boring,
                            },
                        };
                    }
                }
                block(false, 0x100 * at as u64, instrs, JumpKind::Boring)
            })
            .collect();
        // Called from a block of its own, which the loop returns to.
        let caller = defs.len();
        defs.push(block(false, 0xf000, vec![(0, 4, Vec::new())], JumpKind::Call));
        let exit = defs.len();
        defs.push(block(false, 0x6000, vec![(0, 1, Vec::new())], JumpKind::Return));
        let at = |sp| BlockRun {
            sp: Some(sp),
            ..full_run(&[])
        };
        let mut runs = vec![(caller, at(0x7000))];
        for repeat in 0..=repeats as u64 {
            for (index, exit) in &cycle {
                let id = index.index(caller);
                let mut run = BlockRun {
                    sp: Some(0x6ff8),
                    ..run_of(&defs[id], *exit, &choices)
                };
                for addr in &mut run.addrs {
                    *addr += repeat * stride;
                }
                runs.push((id, run));
            }
        }
        // Every block run through once, so that every block is known.
        runs.extend((0..caller).map(|id| {
            let run = BlockRun {
                sp: Some(0x6ff8),
                ..run_of(&defs[id], None, &choices)
            };
            (id, run)
        }));
        runs.push((exit, at(0x6ff8)));
        let line = 1u32 << line_bits;
        let l1_lines = if small_l1 { 2 } else { 64 };
        let l1 = CacheGeometry::new(l1_lines * u64::from(line), 2, line).unwrap();
        let ll = CacheGeometry::new(8 * u64::from(line), 2, line).unwrap();
        let config = SimConfig::new(l1, l1, ll, cache_use, true).unwrap();
        let config = skipping(config, skip.then_some("walk"));
        let functions = [Function(0x1000, 0x8000, "walk"), Function(0x10000, 0x11000, "main")];
        let (blocks, events) = runs_and_their_events(&defs, &runs, config, &functions);
        prop_assert_eq!(blocks.totals, events.totals);
        prop_assert!(blocks.self_cost == events.self_cost, "self costs differ");
        prop_assert_eq!(blocks.arcs, events.arcs);
        prop_assert_eq!(blocks.tree, events.tree);
    }
}
