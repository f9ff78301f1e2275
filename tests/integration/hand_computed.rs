//! Small traces whose every number is worked out by hand in the comments.
//!
//! Unless a test says otherwise the caches are the defaults (32 KiB L1s, 8 MiB
//! LL, 64-byte lines) and nothing is evicted before the end, where every
//! resident line is charged as if evicted.

use linegrind::config::SimConfig;
use linegrind::cost::EventKind::{self, *};

use crate::support::{arc, config, cost, only, self_cost, simulate_text};

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
