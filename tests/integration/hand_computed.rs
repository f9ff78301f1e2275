//! Small traces whose every number is worked out by hand in the comments.
//!
//! Unless a test says otherwise the caches are the defaults (32 KiB L1s, 8 MiB
//! LL, 64-byte lines) and nothing is evicted before the end, where every
//! resident line is charged as if evicted.

use linegrind::config::SimConfig;
use linegrind::cost::EventKind::{self, *};

use crate::support::{arc, config, cost, only, self_cost, simulate_text, with_and_without_sp};

const IMMEDIATE: [EventKind; 9] = [Ir, Dr, Dw, I1mr, D1mr, D1mw, ILmr, DLmr, DLmw];
const L1_USE: [EventKind; 4] = [AcCost1, SpLoss1, Loaded1, Used1];

#[test]
fn threads_share_caches_but_not_stacks() {
    let profile = simulate_text(
        "linegrind-trace text 1
         fn 1000 1040 main t.c 1
         fn 1040 1080 work t.c 5
         i 1000 4     # T1 main: I1 miss, line 0x1000
         r 8000 8     # T1: D1 miss, line 0x8000
         i 1004 4
         call 1040
         i 1040 4     # T1 work: I1 miss, line 0x1040
         thread 2
         i 1000 4     # T2 main: hit, the caches are shared
         r 8008 8     # T2: hit in the line T1 loaded
         i 1004 4
         call 1040
         i 1040 4     # T2 work: hit
         w 9000 4     # T2 work: D1 miss, line 0x9000
         thread 1
         r 9000 4     # T1 work (its last instruction is 1040): hit
         i 1044 1     # T1 work: ret
         ret
         i 1008 1
         thread 2
         i 1044 1     # T2 work: ret
         ret
         i 1008 1",
        SimConfig::default(),
    );
    assert_eq!(profile.threads, 2);
    // main ran 1000, 1004 and 1008 in each thread; its reads are 8000 (T1,
    // miss) and 8008 (T2, hit); its I1 line 0x1000 missed once.
    assert_eq!(
        only(&self_cost(&profile, "main"), &IMMEDIATE),
        cost(&[(Ir, 6), (Dr, 2), (I1mr, 1), (D1mr, 1), (ILmr, 1), (DLmr, 1)])
    );
    // work ran 1040 and 1044 in each thread: T2's write missed, T1's read hit.
    assert_eq!(
        only(&self_cost(&profile, "work"), &IMMEDIATE),
        cost(&[
            (Ir, 4),
            (Dr, 1),
            (Dw, 1),
            (I1mr, 1),
            (D1mw, 1),
            (ILmr, 1),
            (DLmw, 1)
        ])
    );
    let call = arc(&profile, "main", "work");
    assert_eq!(call.calls, 2);
    // Each thread's frame sees only its own thread's events: T1 (1040 miss,
    // r 9000 hit, 1044) plus T2 (1040 hit, w 9000 miss, 1044).
    assert_eq!(
        only(&call.inclusive, &IMMEDIATE),
        cost(&[
            (Ir, 4),
            (Dr, 1),
            (Dw, 1),
            (I1mr, 1),
            (D1mw, 1),
            (ILmr, 1),
            (DLmw, 1)
        ])
    );
    // Lines loaded under the call: I1 0x1040 (accesses 1040 x2, 1044 x2: 4
    // uses, bytes 0..5: 1000/4 = 250, 64 - 5 = 59) and D1 0x9000 (w and r of
    // the same 4 bytes: 500, 60).
    assert_eq!(
        only(&call.inclusive, &L1_USE),
        cost(&[(AcCost1, 750), (SpLoss1, 119), (Loaded1, 128), (Used1, 9)])
    );
    // Lines loaded at the root: I1 0x1000 (6 uses of bytes 0..9: 166, 55) and
    // D1 0x8000 (2 uses of bytes 0..16: 500, 48). Self cost is per loader.
    assert_eq!(
        only(&self_cost(&profile, "main"), &L1_USE),
        cost(&[(AcCost1, 666), (SpLoss1, 103), (Loaded1, 128), (Used1, 25)])
    );
    assert_eq!(
        only(&self_cost(&profile, "work"), &L1_USE),
        only(&call.inclusive, &L1_USE)
    );
}

#[test]
fn a_thread_that_ends_closes_its_calls_and_its_id_starts_afresh() {
    let profile = simulate_text(
        "linegrind-trace text 1
         fn 1000 1040 main
         fn 1040 1080 start
         thread 2
         i 1000 4     # main: call start
         call 1040
         i 1040 4     # start: I1 miss, line 0x1040
         i 1044 4     # start: the thread ends here
         thread-exit 2
         i 1000 4     # a new thread 2, in main: call start
         r 8000 8     #   D1 miss, line 0x8000: 8 of 64 bytes used
         call 1040
         i 1040 4     # start: ret
         ret
         i 1004 4",
        SimConfig::default(),
    );
    let call = arc(&profile, "main", "start");
    assert_eq!(call.calls, 2);
    // 1040 and 1044 of the first call, 1040 of the second: the new
    // thread's main is not inside the first call.
    assert_eq!(
        only(&call.inclusive, &IMMEDIATE),
        cost(&[(Ir, 3), (I1mr, 1), (ILmr, 1)])
    );
    // Loaded under the first call: line 0x1040, bytes 0..8 used. Line
    // 0x8000 was loaded in main's frame, under no call.
    assert_eq!(
        only(&call.inclusive, &[SpLoss1, SpLoss2]),
        cost(&[(SpLoss1, 56), (SpLoss2, 56)])
    );
    assert_eq!(
        only(&self_cost(&profile, "main"), &[Ir, Dr, D1mr, SpLoss1]),
        cost(&[(Ir, 3), (Dr, 1), (D1mr, 1), (SpLoss1, 56 + 56)])
    );
}

#[test]
fn a_restart_closes_every_threads_calls_and_empties_the_caches() {
    let profile = simulate_text(
        "linegrind-trace text 1
         fn 1000 1040 main
         fn 1040 1080 f
         fn 1080 10c0 g
         fn 10c0 1100 handler
         i 1000 4     # main: call f
         call 1040
         i 1040 4     # f: call g
         call 1080
         i 1080 4     # g: a signal arrives
         signal 10
         i 10c0 4     # handler
         thread 2
         i 1000 4     # main: call f
         call 1040
         i 1040 4     # f
         restart      # recording was off for a while
         i 1004 4     # thread 2 in main, entered by no call from f
         thread 1
         i 10c4 4     # thread 1's handler, afresh, not in g
         sigreturn
         i 1008 4     # thread 1 in main, left by neither g nor the handler",
        SimConfig::default(),
    );
    // No arc into main from f, g or the handler.
    assert_eq!(profile.arcs.len(), 2);
    let main_f = arc(&profile, "main", "f");
    assert_eq!(main_f.calls, 2);
    // f and g in thread 1, f in thread 2.
    assert_eq!(only(&main_f.inclusive, &[Ir]), cost(&[(Ir, 3)]));
    assert_eq!(arc(&profile, "f", "g").calls, 1);
    // Line 0x1000 missed again after the restart.
    assert_eq!(
        only(&self_cost(&profile, "main"), &[Ir, I1mr]),
        cost(&[(Ir, 4), (I1mr, 2)])
    );
}

#[test]
fn a_signal_handler_is_a_new_root_not_a_callee_of_the_interrupted_code() {
    let profile = simulate_text(
        "linegrind-trace text 1
         fn 1000 1040 main
         fn 1040 1080 f
         fn 1080 10c0 handler
         fn 10c0 1100 g
         i 1000 4     # main: call f
         call 1040
         i 1040 4     # f
         signal 10    # a handler starts while f runs
         i 1080 4     # handler: call g
         call 10c0
         i 10c0 4     # g
         r 8000 4     #   D1 miss
         i 10c4 1     # g: ret
         ret
         i 1084 1     # handler returns
         sigreturn
         i 1044 1     # f: ret
         ret
         i 1004 1",
        SimConfig::default(),
    );
    let main_f = arc(&profile, "main", "f");
    assert_eq!(main_f.calls, 1);
    // Only f's own 1040 and 1044: the handler's four instructions are not
    // part of the call to f.
    assert_eq!(
        only(&main_f.inclusive, &IMMEDIATE),
        cost(&[(Ir, 2), (I1mr, 1), (ILmr, 1)])
    );
    // f's I1 line 0x1040: 2 uses of bytes 0..5.
    assert_eq!(
        only(&main_f.inclusive, &[AcCost1, SpLoss1]),
        cost(&[(AcCost1, 500), (SpLoss1, 59)])
    );
    let handler_g = arc(&profile, "handler", "g");
    assert_eq!(handler_g.calls, 1);
    assert_eq!(
        only(&handler_g.inclusive, &IMMEDIATE),
        cost(&[(Ir, 2), (Dr, 1), (I1mr, 1), (D1mr, 1), (ILmr, 1), (DLmr, 1)])
    );
    // g's I1 line 0x10c0 (2 uses, 5 bytes: 500, 59) and the data line (1
    // use of 4 bytes: 1000, 60).
    assert_eq!(
        only(&handler_g.inclusive, &[AcCost1, SpLoss1]),
        cost(&[(AcCost1, 1500), (SpLoss1, 119)])
    );
    // The handler's own line 0x1080 is its root's self cost, nobody's arc.
    assert_eq!(
        only(&self_cost(&profile, "handler"), &[Ir, AcCost1, SpLoss1]),
        cost(&[(Ir, 2), (AcCost1, 500), (SpLoss1, 59)])
    );
    assert_eq!(profile.arcs.len(), 2);
}

/// A handler's `ret` returns from no call: the code it returns to (the C
/// library's signal return trampoline, which has no symbol) is not the
/// handler's but a function named after its own address, as Callgrind
/// names code without a symbol after the block it starts; also where the
/// handler ended by a jump into another function (a tail call), whose
/// `ret` is the handler's own.
#[test]
fn a_handler_returns_into_code_that_is_not_the_handlers() {
    let returns = [
        "i 1080 4     # handler: ret
         ret",
        "i 1080 4     # handler: jmp tail
         sp 6000
         i 10c0 4     # tail: ret
         ret",
    ];
    for handler_return in returns {
        let trace = format!(
            "linegrind-trace text 1
             fn 1000 1040 main
             fn 1080 10c0 handler
             fn 10c0 1100 tail
             sp 7000
             i 1000 4     # main
             signal 10
             sp 6000
             {handler_return}
             sp 6008
             i 2000 4     # the trampoline
             i 2004 2
             sigreturn
             sp 7000
             i 1004 4     # main"
        );
        for trace in with_and_without_sp(&trace) {
            let profile = simulate_text(&trace, SimConfig::default());
            assert_eq!(
                only(&self_cost(&profile, "0x0000000000002000"), &[Ir]),
                cost(&[(Ir, 2)]),
                "{trace}"
            );
            assert_eq!(self_cost(&profile, "handler")[Ir], 1, "{trace}");
        }
    }
}

/// A handler that runs when recording stops still runs when it starts
/// again: the restart closes its calls and starts it afresh, and its
/// `sigreturn` (recorded while recording was off, or after) ends it. A
/// call made just before the restart enters nothing and is not counted.
#[test]
fn a_handler_open_across_a_restart_still_returns() {
    let profile = simulate_text(
        "linegrind-trace text 1
         fn 1000 1040 main
         fn 1040 1080 f
         fn 1080 10c0 handler
         i 1000 4     # main
         signal 10
         i 1080 4     # handler: call f
         call 1040
         thread 2
         signal 12    # a handler starts before thread 2 ran anything
         restart
         i 1084 4     # thread 2's handler, afresh
         sigreturn
         i 1000 4     # thread 2's main
         thread 1
         i 1084 4     # thread 1's handler, afresh
         sigreturn
         i 1004 4     # main",
        SimConfig::default(),
    );
    assert!(profile.called_arcs().next().is_none());
    assert_eq!(self_cost(&profile, "handler")[Ir], 3);
    assert_eq!(self_cost(&profile, "main")[Ir], 3);
}

#[test]
fn recursion_and_frames_still_open_at_the_end() {
    let profile = simulate_text(
        "linegrind-trace text 1
         fn 1000 1040 main
         fn 1040 1080 rec
         i 1000 5     # main: call rec
         call 1040
         i 1040 4     # rec, depth 1: I1 miss (line 0x1040)
         r 8000 8     #   D1 miss, line 0x8000
         i 1044 5     # rec: call rec
         call 1040
         i 1040 4     # rec, depth 2
         r 8040 8     #   D1 miss, line 0x8040
         i 1044 5     # rec: call rec
         call 1040
         i 1040 4     # rec, depth 3
         r 8000 8     #   hit
         # the trace ends with three frames open",
        SimConfig::default(),
    );
    let outer = arc(&profile, "main", "rec");
    assert_eq!(outer.calls, 1);
    // Everything after main's call: five instructions, three reads (two
    // misses), and the I1 miss of line 0x1040.
    assert_eq!(
        only(&outer.inclusive, &IMMEDIATE),
        cost(&[(Ir, 5), (Dr, 3), (I1mr, 1), (D1mr, 2), (ILmr, 1), (DLmr, 2)])
    );
    let recursive = arc(&profile, "rec", "rec");
    assert_eq!(recursive.calls, 2);
    // Once per active frame: depth 2 saw 1040, r 8040 (miss), 1044, 1040,
    // r 8000; depth 3 saw 1040, r 8000. Together: Ir 4, Dr 3, one miss.
    assert_eq!(
        only(&recursive.inclusive, &IMMEDIATE),
        cost(&[(Ir, 4), (Dr, 3), (D1mr, 1), (DLmr, 1)])
    );
    // Loaded at depth 1 (stack: main->rec): I1 0x1040 (5 uses of bytes 0..9:
    // 200, 55) and D1 0x8000 (2 uses of bytes 0..8: 500, 56). Loaded at depth
    // 2 (main->rec, rec->rec): D1 0x8040 (1000, 56).
    assert_eq!(
        only(&outer.inclusive, &[AcCost1, SpLoss1]),
        cost(&[(AcCost1, 1700), (SpLoss1, 167)])
    );
    assert_eq!(
        only(&recursive.inclusive, &[AcCost1, SpLoss1]),
        cost(&[(AcCost1, 1000), (SpLoss1, 56)])
    );
}

#[test]
fn a_return_without_a_frame_pops_nothing() {
    let profile = simulate_text(
        "linegrind-trace text 1
         fn 1000 1040 main
         fn 1040 1080 f
         i 1000 1
         ret          # nothing to return from: ignored
         i 1001 4
         call 1040
         i 1040 1
         ret
         i 1005 1",
        SimConfig::default(),
    );
    let call = arc(&profile, "main", "f");
    assert_eq!(call.calls, 1);
    assert_eq!(call.inclusive[Ir], 1);
    assert_eq!(self_cost(&profile, "main")[Ir], 3);
}

#[test]
fn a_longjmp_returns_from_every_frame_it_skips() {
    let profile = simulate_text(
        "linegrind-trace text 1
         fn 1000 1040 main
         fn 1040 1080 a
         fn 1080 10c0 b
         fn 10c0 1100 c
         i 1000 5     # main: call a, returns to 1005
         call 1040
         i 1040 5     # a: call b, returns to 1045
         call 1080
         i 1080 5     # b: call c, returns to 1085
         call 10c0
         i 10c0 1     # c: longjmp back into main
         ret
         i 1005 1     # main again: 1005 is a's return address
         i 1000 5     # main: call a once more
         call 1040
         i 1040 1
         ret
         i 1005 1",
        SimConfig::default(),
    );
    let main_a = arc(&profile, "main", "a");
    assert_eq!(main_a.calls, 2);
    // First call: a, b and c ran one instruction each; second: one.
    assert_eq!(main_a.inclusive[Ir], 4);
    assert_eq!(arc(&profile, "a", "b").inclusive[Ir], 2);
    assert_eq!(arc(&profile, "b", "c").inclusive[Ir], 1);
    assert_eq!(self_cost(&profile, "main")[Ir], 4);
}

#[test]
fn an_ll_eviction_of_a_line_still_in_l1_keeps_its_use() {
    // LL holds a single line, so the data line evicts the code line from LL
    // while I1 still holds it.
    let profile = simulate_text(
        "linegrind-trace text 1
         fn 1000 1100 main
         i 1000 4     # I1 miss, LL miss: LL holds line 0x1000
         r 8000 8     # D1 miss, LL miss: LL evicts 0x1000, still in I1
         i 1004 4     # I1 hit: counts for the I1 residency only
         r 8008 8     # D1 hit",
        config("128,2,64", "128,2,64", "64,1,64"),
    );
    // L1, charged at the end: I1 line 0x1000, 2 uses of bytes 0..8 (500, 56);
    // D1 line 0x8000, 2 uses of bytes 0..16 (500, 48).
    // LL: line 0x1000 was evicted with the one use it had while resident in
    // LL (4 bytes: 1000, 60), merged from I1 at the eviction; line 0x8000
    // ends with both reads (500, 48).
    assert_eq!(
        only(
            &profile.totals,
            &[I1mr, D1mr, ILmr, DLmr, AcCost1, SpLoss1, AcCost2, SpLoss2]
        ),
        cost(&[
            (I1mr, 1),
            (D1mr, 1),
            (ILmr, 1),
            (DLmr, 1),
            (AcCost1, 1000),
            (SpLoss1, 104),
            (AcCost2, 1500),
            (SpLoss2, 108)
        ])
    );
}

#[test]
fn a_straddling_access_takes_its_lines_in_order_through_l1_and_ll() {
    // LL holds a single line. A modify over two data lines, one resident in
    // D1 and LL: the first line goes through D1 and, missing, LL before the
    // second is looked up.
    let trace = |read: &str| {
        format!(
            "linegrind-trace text 1
             fn 401000 401040 main
             i 401000 4   # I1 and LL miss: LL holds the code line
             r {read} 4   # D1 and LL miss: LL evicts the code line
             i 401004 4   # I1 hit: the code line is no longer in LL
             m 60003c 8   # line 0x600000 bytes 60..64, then 0x600040 bytes 0..4"
        )
    };
    let caches = || config("128,2,64", "128,2,64", "64,1,64");
    let ll_use = [AcCost2, SpLoss2, Used2];
    // The read's line is the modify's second: the first line misses D1 and
    // LL, whose eviction ends the second line's LL residency with the read's
    // use alone (1000, 60, 4); the second line's D1 hit that follows counts
    // for D1 only. With the code line's LL residency (1000, 60, 4) and the
    // first line's, charged at the end (1000, 60, 4):
    let second = simulate_text(&trace("600044"), caches());
    assert_eq!(
        only(&second.totals, &ll_use),
        cost(&[(AcCost2, 3000), (SpLoss2, 180), (Used2, 12)])
    );
    // The read's line is the modify's first: it hits D1 and adds to its LL
    // residency, which the second line's LL miss then ends with two uses of
    // 8 bytes (500, 56, 8); the second line is charged at the end (1000, 60,
    // 4).
    let first = simulate_text(&trace("600038"), caches());
    assert_eq!(
        only(&first.totals, &ll_use),
        cost(&[(AcCost2, 2500), (SpLoss2, 176), (Used2, 16)])
    );
    // L1 is the same either way: the read's line twice, 8 bytes (500, 56),
    // the other line once, 4 bytes (1000, 60), the code line twice, 8 bytes
    // (500, 56).
    for profile in [&second, &first] {
        assert_eq!(
            only(&profile.totals, &[AcCost1, SpLoss1]),
            cost(&[(AcCost1, 2000), (SpLoss1, 172)])
        );
    }
}

#[test]
fn evicted_lines_are_charged_when_they_leave() {
    // D1 is direct-mapped with two lines; lines 0x8000 and 0x8080 share set 0.
    let profile = simulate_text(
        "linegrind-trace text 1
         fn 1000 1040 main
         fn 1040 1080 stream
         i 1000 5     # main: call stream
         call 1040
         i 1040 4     # stream: 8 bytes of line 0x8000
         r 8000 8
         i 1044 1
         ret
         i 1005 4     # main: line 0x8080 evicts line 0x8000 from D1
         r 8080 64
         i 1009 4
         r 8080 64    # hit: the whole line, used twice",
        config("32768,8,64", "128,1,64", "8388608,16,64"),
    );
    // Line 0x8000 left D1 with one use of 8 bytes: AcCost1 1000, SpLoss1 56,
    // charged to stream and back-dated to main->stream although the call had
    // returned. Line 0x8080: 2 uses, all 64 bytes: 500, 0, charged to main.
    let call = arc(&profile, "main", "stream");
    let stream = self_cost(&profile, "stream");
    assert_eq!(stream[D1mr], 1);
    assert_eq!(stream[AcCost1] - 500, 1000, "the I1 line 0x1040 adds 500");
    assert_eq!(call.inclusive[AcCost1], stream[AcCost1]);
    assert_eq!(call.inclusive[SpLoss1], stream[SpLoss1]);
    // I1 line 0x1040: 2 uses of bytes 0..5 (500, 59); D1 line 0x8000: 56.
    assert_eq!(stream[SpLoss1], 59 + 56);
    let main = self_cost(&profile, "main");
    // I1 line 0x1000: 3 uses of bytes 0..13 (333, 51); D1 0x8080: (500, 0).
    assert_eq!((main[AcCost1], main[SpLoss1]), (833, 51));
}

/// Every number of `traces/call_chain.lgt`, worked out from its listing.
#[test]
fn the_call_chain_example_in_full() {
    let text =
        std::fs::read_to_string(crate::support::root().join("traces/call_chain.lgt")).unwrap();
    let profile = simulate_text(&text, SimConfig::default());
    // Two code lines: 0x401000 holds main and outer, 0x401040 middle and
    // inner. main loads the first and its stack line; middle loads the
    // second; inner loads the data line.
    //
    // Line 0x401000: main's 4 instructions (bytes 0..14) and outer's 3
    // (bytes 32..41): 7 uses, 23 bytes: AcCost 1000/7 = 142, SpLoss 41.
    // Stack line: 1 use of 8 bytes: 1000, 56.
    let both = |l1: &[(EventKind, u64)]| {
        let mut all = l1.to_vec();
        for &(kind, n) in l1 {
            let ll = match kind {
                AcCost1 => AcCost2,
                SpLoss1 => SpLoss2,
                Loaded1 => Loaded2,
                _ => Used2,
            };
            all.push((ll, n));
        }
        all
    };
    let main_use = both(&[(AcCost1, 1142), (SpLoss1, 97), (Loaded1, 128), (Used1, 31)]);
    let mut main = vec![(Ir, 4), (Dw, 1), (I1mr, 1), (D1mw, 1), (ILmr, 1), (DLmw, 1)];
    main.extend(main_use);
    assert_eq!(self_cost(&profile, "main"), cost(&main));
    assert_eq!(self_cost(&profile, "outer"), cost(&[(Ir, 3)]));
    // Line 0x401040: middle's 2 instructions (bytes 64..70) and inner's 19
    // (bytes 96..113): 21 uses, 23 bytes: 47, 41.
    let mut middle = vec![(Ir, 2), (I1mr, 1), (ILmr, 1)];
    middle.extend(both(&[
        (AcCost1, 47),
        (SpLoss1, 41),
        (Loaded1, 64),
        (Used1, 23),
    ]));
    assert_eq!(self_cost(&profile, "middle"), cost(&middle));
    // inner: 2 + 4 x 4 + 1 instructions; four 16-byte reads fill the data
    // line exactly: 4 uses, 64 bytes: 250, 0.
    let data_line = both(&[(AcCost1, 250), (Loaded1, 64), (Used1, 64)]);
    let mut inner = vec![(Ir, 19), (Dr, 4), (D1mr, 1), (DLmr, 1)];
    inner.extend(data_line.clone());
    assert_eq!(self_cost(&profile, "inner"), cost(&inner));

    // Inclusive: each arc holds its callee's subtree; back-dated use is that
    // of the lines loaded below it (middle's code line and the data line).
    let below_outer = both(&[(AcCost1, 297), (SpLoss1, 41), (Loaded1, 128), (Used1, 87)]);
    let mut main_outer = vec![
        (Ir, 24),
        (Dr, 4),
        (I1mr, 1),
        (D1mr, 1),
        (ILmr, 1),
        (DLmr, 1),
    ];
    main_outer.extend(below_outer.clone());
    let mut outer_middle = vec![
        (Ir, 21),
        (Dr, 4),
        (I1mr, 1),
        (D1mr, 1),
        (ILmr, 1),
        (DLmr, 1),
    ];
    outer_middle.extend(below_outer);
    let mut middle_inner = vec![(Ir, 19), (Dr, 4), (D1mr, 1), (DLmr, 1)];
    middle_inner.extend(data_line);
    for (caller, callee, expected) in [
        ("main", "outer", main_outer),
        ("outer", "middle", outer_middle),
        ("middle", "inner", middle_inner),
    ] {
        let call = arc(&profile, caller, callee);
        assert_eq!(call.calls, 1);
        assert_eq!(call.inclusive, cost(&expected), "{caller} -> {callee}");
    }
    assert_eq!(profile.arcs.len(), 3);
}

/// Every number of `traces/straddle_modify.lgt`, as its comments explain.
#[test]
fn the_straddle_example_in_full() {
    let text =
        std::fs::read_to_string(crate::support::root().join("traces/straddle_modify.lgt")).unwrap();
    let profile = simulate_text(&text, SimConfig::default());
    assert_eq!(
        only(&profile.totals, &IMMEDIATE),
        cost(&[
            (Ir, 9),
            (Dr, 2),
            (Dw, 3),
            (I1mr, 3),
            (D1mr, 1),
            (D1mw, 2),
            (ILmr, 3),
            (DLmr, 1),
            (DLmw, 2)
        ])
    );
    // main loaded code line 0x401000 (5 uses, bytes 0..26: 200, 38), data
    // line 0x602000 (read 60..64, modify 56..60: 500, 56), 0x602040 (3 uses,
    // bytes 0..4 and 60..64: 333, 56) and 0x6020c0 (1 byte: 1000, 63).
    assert_eq!(
        only(&self_cost(&profile, "main"), &L1_USE),
        cost(&[(AcCost1, 2033), (SpLoss1, 213), (Loaded1, 256), (Used1, 43)])
    );
    // bump loaded code lines 0x401040 (3 uses, 12 bytes: 333, 52) and
    // 0x401080 (2 uses, 3 bytes: 500, 61) and data line 0x602080 (bytes 0..4
    // and 63: 500, 59): its self cost and the arc's back-dated cost.
    let bump = cost(&[(AcCost1, 1333), (SpLoss1, 172), (Loaded1, 192), (Used1, 20)]);
    assert_eq!(only(&self_cost(&profile, "bump"), &L1_USE), bump);
    let call = arc(&profile, "main", "bump");
    assert_eq!(only(&call.inclusive, &L1_USE), bump);
    assert_eq!(
        only(&call.inclusive, &IMMEDIATE),
        cost(&[(Ir, 4), (Dw, 2), (I1mr, 2), (D1mw, 1), (ILmr, 2), (DLmw, 1)])
    );
}

#[test]
fn accesses_at_the_top_of_the_address_space_are_clamped_and_end_there() {
    let profile = simulate_text(
        "linegrind-trace text 1
         i 1000 1                 # I1 miss, LL miss
         r ffffffffffffffbc 68    # clamped to 64: lines ..ff80 (4 bytes), ..ffc0 (60): D1 and LL miss
         r fffffffffffffffc 4     # the last 4 bytes, ending at the top: D1 hit
         i ffffffffffffffbe 66    # clamped to 64: lines ..ff80 (2 bytes), ..ffc0 (62): I1 miss, LL hits",
        SimConfig::default(),
    );
    // I1: line 0x1000, 1 byte once (1000, 63); line ..ff80, bytes 3e..40
    // once (1000, 62); line ..ffc0, bytes 0..3e once (1000, 2). D1: line
    // ..ff80, bytes 3c..40 once (1000, 60); line ..ffc0, bytes 0..3c and
    // then 3c..40, 64 bytes in two uses (500, 0).
    assert_eq!(
        only(
            &profile.totals,
            &[I1mr, D1mr, ILmr, DLmr, AcCost1, SpLoss1, Used1]
        ),
        cost(&[
            (I1mr, 2),
            (D1mr, 1),
            (ILmr, 1),
            (DLmr, 1),
            (AcCost1, 4500),
            (SpLoss1, 187),
            (Used1, 133)
        ])
    );
}

#[test]
fn a_call_returns_to_the_end_of_the_call_instruction_as_it_ran() {
    // The call at 0x1004 ran earlier as a 1-byte instruction; as the call it
    // is 5 bytes long, so both calls return to 0x1009.
    let profile = simulate_text(
        "linegrind-trace text 1
         fn 1000 1040 main
         fn 1040 1080 a
         fn 1080 10c0 b
         i 1004 1
         i 1004 5
         call 1040
         i 1040 5
         call 1080
         i 1080 1
         ret
         i 1009 1     # back in main: a and b both returned",
        SimConfig::default(),
    );
    assert_eq!(arc(&profile, "main", "a").inclusive[Ir], 2);
    assert_eq!(arc(&profile, "a", "b").inclusive[Ir], 1);
    assert_eq!(self_cost(&profile, "main")[Ir], 3);
}

#[test]
fn running_on_into_the_next_function_calls_it() {
    let trace = |sp: &str| {
        format!(
            "linegrind-trace text 1
             fn 1000 1040 main
             fn 1040 1080 next
             {sp}
             i 103c 4
             {sp}
             i 1040 4"
        )
    };
    // Without stack pointers the second instruction runs on from the first;
    // with them it starts a block at `next`'s first byte, as Callgrind sees
    // a tail call. Either way the code is `next`'s, called from `main`, so
    // that `main`'s inclusive cost holds it (Callgrind charges code that
    // runs on inside a block to the block's function).
    for sp in ["", "sp 8000"] {
        let profile = simulate_text(&trace(sp), SimConfig::default());
        assert_eq!(arc(&profile, "main", "next").calls, 1);
        assert_eq!(arc(&profile, "main", "next").inclusive[Ir], 1);
        assert_eq!(self_cost(&profile, "next")[Ir], 1);
    }
}
