use super::*;
use crate::trace::TextReader;

/// A run whose addresses do not fit its block is an error naming the
/// block, whether the block is walked for the first time or known.
#[test]
fn runs_with_addresses_their_block_lacks_or_leaves_fail() {
    use crate::trace::block::{BlockDef, BlockRun};
    let def = BlockDef::one_read(0x1000, JumpKind::Boring);
    let run = |addrs: &[u64]| BlockRun {
        sp: None,
        exit: None,
        guards: Vec::new(),
        addrs: addrs.to_vec(),
    };
    let block = |simulator: &mut Simulator<CallTree>, run: &BlockRun| {
        let item = BlockItem {
            id: 0,
            def: &def,
            run: run.view(),
            call: None,
            leaving: JumpKind::Boring,
        };
        simulator.block(&item).map_err(|err| err.to_string())
    };
    for known in [false, true] {
        let mut simulator = Simulator::new(SimConfig::default(), CallTree::new()).unwrap();
        if known {
            block(&mut simulator, &run(&[0x8000])).unwrap();
            assert!(simulator.known.get(0).is_some(), "the block is known");
        }
        let few = block(&mut simulator, &run(&[])).unwrap_err();
        assert!(
            few.contains("block at 0x1000 has too few addresses"),
            "{few}"
        );
        let many = block(&mut simulator, &run(&[0x8000, 0x8040])).unwrap_err();
        assert!(
            many.contains("block at 0x1000 has more addresses"),
            "{many}"
        );
    }
}

fn error(body: &str) -> String {
    let text = format!("linegrind-trace text 1\n{body}");
    match simulate(&mut TextReader::new(text.as_bytes()), SimConfig::default()) {
        Ok(_) => panic!("the trace simulated without an error"),
        Err(err) => err.to_string(),
    }
}

#[test]
fn accesses_calls_and_returns_need_a_preceding_instruction_in_their_thread() {
    assert_eq!(
        error("r 1000 4\n"),
        "line 2: data access with no preceding instruction in its thread or signal handler \
         (expected an `i` line first)"
    );
    assert!(error("i 10 1\nthread 2\nw 1000 4\n").starts_with("line 4: data access"));
    assert!(error("i 10 1\nsignal 10\nm 1000 4\n").starts_with("line 4: data access"));
    assert!(error("call 40\n").starts_with("line 2: `call` with no preceding"));
    assert!(error("ret\n").starts_with("line 2: `ret` with no preceding"));
    assert!(error("i 10 1\nret\nret\n").starts_with("line 4: `ret` right after `ret`"));
    assert!(error("i 10 1\nret\ncall 40\n").starts_with("line 4: `call` right after `ret`"));
    assert!(error("i 10 1\ncall 40\nret\n").starts_with("line 4: `ret` right after `call`"));
}

/// A run that does not fit its block fails the same way whether the
/// block is still unknown (its description walked) or known (its step
/// list replayed).
#[test]
fn a_run_that_does_not_fit_fails_alike_on_both_walks() {
    use crate::trace::Access;
    use crate::trace::block::{BlockDef, BlockInstr, Item, RunRef};
    let def = BlockDef {
        instrs: vec![
            BlockInstr {
                addr: 0x1000,
                len: 4,
                items: 0..1,
            },
            BlockInstr {
                addr: 0x1004,
                len: 4,
                items: 1..2,
            },
        ],
        items: vec![
            Item::Access {
                access: Access::Read,
                size: 8,
                guarded: false,
            },
            Item::Access {
                access: Access::Write,
                size: 4,
                guarded: false,
            },
        ],
        end: JumpKind::Boring,
    };
    let run = |addrs: &'static [u64]| BlockItem {
        id: 0,
        def: &def,
        run: RunRef {
            sp: None,
            exit: None,
            guards: &[],
            addrs,
        },
        call: None,
        leaving: JumpKind::Boring,
    };
    for addrs in [&[0x9000][..], &[0x9000, 0x9008, 0x9010]] {
        let mut unknown = Simulator::new(SimConfig::default(), CallTree::new()).unwrap();
        let on_description = unknown.block(&run(addrs)).unwrap_err().to_string();
        let mut known = Simulator::new(SimConfig::default(), CallTree::new()).unwrap();
        known.block(&run(&[0x9000, 0x9008])).unwrap();
        assert!(
            known.known.get(0).is_some(),
            "a full run makes the block known"
        );
        let on_steps = known.block(&run(addrs)).unwrap_err().to_string();
        assert!(
            on_steps.contains("the run of the block at 0x1000"),
            "{on_steps}"
        );
        assert_eq!(on_steps, on_description);
    }
}

#[test]
fn sigreturn_needs_a_running_handler_in_its_thread() {
    assert_eq!(
        error("i 10 1\nsigreturn\n"),
        "line 3: `sigreturn` without a `signal` handler running in this thread"
    );
    assert!(error("signal 1\ni 10 1\nthread 2\ni 20 1\nsigreturn\n").starts_with("line 6:"));
    // A handler that a block above the interrupted frame left, switched
    // back to later, returns once.
    let left = "sp 100\ni 10 5\ncall 20\nsp f8\ni 20 1\nsignal 1\nsp 80\ni 30 1\n\
                sp 200\ni 40 1\nsp 80\ni 31 1\nsigreturn\nsp f8\ni 21 1\nsigreturn\n";
    assert!(error(left).starts_with("line 17:"), "{}", error(left));
}

#[test]
fn a_symbol_for_code_that_ran_or_an_overlapping_one_is_an_error() {
    assert!(
        error("i 1010 1\nfn 1000 1040 late\n")
            .starts_with("line 3: function `late` covers 0x1010, which the trace already reached")
    );
    assert_eq!(
        error("fn 1000 1040 a\nfn 1020 1060 b\n"),
        "line 3: function `b` overlaps the range 1000..1040"
    );
}
