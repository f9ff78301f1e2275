//! Binary block runs decoded straight into batches, loops counted from
//! the bytes of the round before included: the runs read one by one.

use super::*;

#[test]
fn binary_runs_decoded_into_batches_are_the_runs_read_one_by_one() {
    let everything = {
        let mut reader = TextReader::new(EVERYTHING.as_bytes());
        to_binary(&events(&mut reader), true, &[])
    };
    let mut traces = vec![everything];
    for path in example_traces()
        .into_iter()
        .filter(|path| is_recorded(path))
    {
        traces.push(std::fs::read(path).unwrap());
    }
    for trace in traces {
        let open = || BinaryReader::new(Cursor::new(trace.clone()), false).unwrap();
        let direct = batched(&mut open());
        assert!(direct.iter().any(|(item, _)| item.starts_with("Run")));
        assert_same_items(&direct, &batched(&mut ItemByItem(open())));
    }
}

/// A block of one or two instructions with `accesses` (their sizes) and a
/// side exit after the first if `exit`.
fn loop_block(addr: u64, accesses: &[u16], exit: bool) -> BlockDef {
    let mut items: Vec<Item> = accesses
        .iter()
        .map(|&size| Item::Access {
            access: Access::Read,
            size,
            guarded: false,
        })
        .collect();
    let split = accesses.len() / 2;
    if exit {
        items.insert(
            split,
            Item::Exit {
                kind: JumpKind::Boring,
            },
        );
    }
    let first_items = split + usize::from(exit);
    BlockDef {
        instrs: vec![
            BlockInstr {
                addr,
                len: 4,
                items: 0..first_items,
            },
            BlockInstr {
                addr: addr + 4,
                len: 4,
                items: first_items..items.len(),
            },
        ],
        items,
        end: JumpKind::Boring,
    }
}

proptest! {
    /// Loops over memory as a recorder writes them: cycles of one to four
    /// runs of blocks with accesses and side exits (a block may come twice
    /// in a cycle), each access moving by a stride of its site's for a
    /// stretch of rounds, then by others; with sites near the top of the
    /// address space, some run past its end. Decoded into batches, which
    /// count the rounds encoded in the bytes of the round before without
    /// decoding them, they are the runs read one by one, or meet the same
    /// error.
    #[test]
    fn loops_decoded_into_batches_are_the_runs_read_one_by_one(
        blocks in prop::collection::vec(
            (prop::collection::vec(prop::sample::select(vec![1u16, 4, 8]), 0..4), any::<bool>()),
            1..4,
        ),
        cycle in prop::collection::vec((any::<prop::sample::Index>(), any::<bool>()), 1..=4),
        stretches in prop::collection::vec(
            (1u64..40, prop::collection::vec(prop_oneof![Just(0u64), Just(8), Just(u64::MAX - 7), 1u64..0x200], 12)),
            1..4,
        ),
        top in any::<bool>(),
    ) {
        let mut writer = TraceWriter::new(Vec::new(), false, &[("cmd", "test".into())]).unwrap();
        let defs: Vec<BlockDef> = blocks
            .iter()
            .enumerate()
            .map(|(at, (accesses, exit))| loop_block(0x1000 + 0x40 * at as u64, accesses, *exit))
            .collect();
        let ids: Vec<u32> = defs.iter().map(|def| writer.define_block(def)).collect();
        // Each run of the cycle, its block and whether it leaves by its
        // side exit; its accesses' places in a round, each with a site of
        // its own.
        let runs: Vec<(usize, bool)> = cycle
            .iter()
            .map(|(index, exits)| (index.index(defs.len()), *exits))
            .collect();
        // Whether a run leaves by its block's side exit, and how many
        // accesses it makes.
        let leaves = |&(block, exits): &(usize, bool)| exits && blocks[block].1;
        let reached = |run: &(usize, bool)| {
            let accesses = blocks[run.0].0.len();
            if leaves(run) { accesses / 2 } else { accesses }
        };
        let base = if top { u64::MAX - 0x40 } else { 0x10_0000 };
        let mut addrs: Vec<u64> = (0..12).map(|place| base.wrapping_add(0x100 * place)).collect();
        for (rounds, strides) in &stretches {
            for _ in 0..*rounds {
                let mut place = 0;
                for run in &runs {
                    let count = reached(run);
                    let run_addrs = (place..place + count)
                        .map(|place| {
                            let place = place % addrs.len();
                            addrs[place] = addrs[place].wrapping_add(strides[place]);
                            addrs[place]
                        })
                        .collect();
                    place += count;
                    let written = BlockRun {
                        sp: Some(0x7000),
                        exit: leaves(run).then_some(0),
                        guards: Vec::new(),
                        addrs: run_addrs,
                    };
                    writer.block_run(ids[run.0], &written).unwrap();
                }
            }
        }
        let trace = writer.finish(&[], Some(0)).unwrap();
        let open = || BinaryReader::new(Cursor::new(trace.clone()), false).unwrap();
        let direct = batched_or_error(&mut open());
        let one_by_one = batched_or_error(&mut ItemByItem(open()));
        match (direct, one_by_one) {
            (Ok(direct), Ok(one_by_one)) => assert_same_items(&direct, &one_by_one),
            (direct, one_by_one) => prop_assert_eq!(direct.err(), one_by_one.err()),
        }
    }
}

/// Loops of many rounds in the same bytes, striding through memory and in
/// registers, span batches and chunks: decoded into batches, which count
/// such rounds many at a time, they are the runs read one by one, and a
/// batch ends once it holds as many addresses as a batch does.
#[test]
fn long_loops_in_the_same_bytes_fill_batches_as_runs_read_one_by_one() {
    let mut writer = TraceWriter::new(Vec::new(), false, &[("cmd", "test".into())]).unwrap();
    let striding = writer.define_block(&loop_block(0x1000, &[8, 8], false));
    let in_registers = writer.define_block(&loop_block(0x2000, &[], false));
    let run = |addrs| BlockRun {
        sp: Some(0x7000),
        exit: None,
        guards: Vec::new(),
        addrs,
    };
    for round in 0..250_000u64 {
        let addrs = vec![0x10_0000 + 8 * round, 0x80_0000 + 64 * round];
        writer.block_run(striding, &run(addrs)).unwrap();
    }
    for _ in 0..50_000 {
        writer.block_run(in_registers, &run(Vec::new())).unwrap();
    }
    for round in 0..1_000u64 {
        let addrs = vec![0x10_0000 + 8 * round * round, 0x80_0000];
        writer.block_run(striding, &run(addrs)).unwrap();
    }
    let trace = writer.finish(&[], Some(0)).unwrap();
    assert!(trace.len() > 1 << 20, "more than a chunk of events");
    let open = || BinaryReader::new(Cursor::new(trace.clone()), false).unwrap();
    let direct = batched(&mut open());
    assert_same_items(&direct, &batched(&mut ItemByItem(open())));
    assert_eq!(direct.len(), 301_000 + 2, "every run, and two descriptions");
    // Two addresses a round: every batch but the last takes rounds until
    // it is full, and no further.
    let batches = batch_addrs(&mut open());
    let (last, full) = batches.split_last().unwrap();
    assert!(
        full.iter().all(|&addrs| addrs == BATCH_ADDRS),
        "{batches:?}"
    );
    assert_eq!(full.len() * BATCH_ADDRS + last, 502_000);
}

/// How many addresses each batch `reader` fills holds.
fn batch_addrs(reader: &mut impl TraceRead) -> Vec<usize> {
    let mut feed = Feed::default();
    let mut batches = Vec::new();
    loop {
        let more = reader.fill(&mut feed).unwrap();
        let addrs = feed
            .batch
            .replay()
            .map(|(item, _)| match item {
                Replayed::Run(run, arrays) => run.addrs_len as usize + arrays.repeats().len(),
                _ => 0,
            })
            .sum();
        batches.push(addrs);
        feed.batch.clear();
        if !more {
            return batches;
        }
    }
}

/// A loop of two runs of one block, the first leaving by its side exit
/// after one read, the second reading there and once more: the site of the
/// first read is read twice a round, its address encoded against the other
/// read's. The second read of it is 16 bytes past the first for four
/// rounds, 24 in the fifth and 32 after; the first moves by 8 up to the
/// fifth round, by 16 to the sixth and by 24 after. The fifth round and the
/// sixth are each encoded in other bytes than the round before, as many,
/// and the rounds after the sixth in its bytes again; but the first read
/// moved by 16 from the fifth round to the sixth, and by 24 from the sixth
/// to the seventh. Only rounds after two in the same bytes are counted
/// without being decoded.
#[test]
fn a_round_in_the_bytes_of_one_unlike_the_round_before_it_is_decoded() {
    let mut writer = TraceWriter::new(Vec::new(), false, &[("cmd", "test".into())]).unwrap();
    let block = writer.define_block(&loop_block(0x1000, &[8, 8], true));
    let mut first = 0x8000;
    for round in 0..12 {
        first += match round {
            0..5 => 8,
            5 => 16,
            _ => 24,
        };
        let apart = match round {
            0..4 => 16,
            4 => 24,
            _ => 32,
        };
        let run = |exit, addrs| BlockRun {
            sp: Some(0x7000),
            exit,
            guards: Vec::new(),
            addrs,
        };
        writer.block_run(block, &run(Some(0), vec![first])).unwrap();
        let second = run(None, vec![first + apart, 0x9000]);
        writer.block_run(block, &second).unwrap();
    }
    let trace = writer.finish(&[], Some(0)).unwrap();
    let open = || BinaryReader::new(Cursor::new(trace.clone()), false).unwrap();
    assert_same_items(&batched(&mut open()), &batched(&mut ItemByItem(open())));
}
