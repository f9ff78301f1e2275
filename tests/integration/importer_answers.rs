//! Hand-written Lackey and Dinero traces in `tests/importers/`, with every
//! number worked out below. Use metrics follow the README: at the end of a
//! line's residency `AcCost = 1000 / uses` and `SpLoss = 64 - bytes used`,
//! charged to the instruction that loaded it; `Loaded` is 64 per residency.

use linegrind::config::SimConfig;
use linegrind::cost::EventKind::{self, *};
use linegrind::profile::Profile;

use crate::support::{self, config, cost, linegrind, only, root, self_cost};

const COUNTS: [EventKind; 17] = [
    Ir, Dr, Dw, I1mr, D1mr, D1mw, ILmr, DLmr, DLmw, AcCost1, SpLoss1, Loaded1, Used1, AcCost2,
    SpLoss2, Loaded2, Used2,
];

fn simulate_file(name: &str, config: SimConfig) -> Profile {
    support::simulate_file(&root().join("tests/importers").join(name), config)
}

#[test]
fn a_data_only_lackey_trace_is_charged_to_the_unknown_instruction() {
    // D1 is 4 direct-mapped lines: lines 0x0 and 0x100 share set 0. LL (32
    // sets of 2) holds both.
    let profile = simulate_file(
        "cachelab.trace",
        config("256,1,64", "256,1,64", "4096,2,64"),
    );
    // L 10,1   line 0x0: D1 and LL miss (Dr, D1mr, DLmr); uses 1, bytes {10}
    // M 20,1   hit: a modify is one Dw; uses 2, bytes +{20}
    // L 22,1   hit (Dr); uses 3, bytes +{22}
    // S 18,1   hit (Dw); uses 4, 4 bytes
    // L 110,1  line 0x100, set 0: D1 and LL miss (Dr, D1mr, DLmr); evicts
    //          line 0x0 from D1: AcCost1 1000/4 = 250, SpLoss1 64-4 = 60
    // M 12,2   line 0x0: D1 miss, LL hit (Dw, D1mw); evicts line 0x100
    //          (1 use, 1 byte): AcCost1 1000, SpLoss1 63; uses 1, bytes {12,13}
    // At the end, D1's line 0x0: AcCost1 1000, SpLoss1 62. In LL, line 0x0
    // had 5 uses and 6 bytes (10, 12, 13, 18, 20, 22): AcCost2 200, SpLoss2
    // 58; line 0x100 1 use, 1 byte: AcCost2 1000, SpLoss2 63.
    let expected = cost(&[
        (Dr, 3),
        (Dw, 3),
        (D1mr, 2),
        (D1mw, 1),
        (DLmr, 2),
        (AcCost1, 250 + 1000 + 1000),
        (SpLoss1, 60 + 63 + 62),
        (Loaded1, 3 * 64),
        (Used1, 4 + 1 + 2),
        (AcCost2, 200 + 1000),
        (SpLoss2, 58 + 63),
        (Loaded2, 2 * 64),
        (Used2, 6 + 1),
    ]);
    assert_eq!(only(&profile.totals, &COUNTS), expected);
    assert_eq!(only(&self_cost(&profile, "(unknown)"), &COUNTS), expected);
}

#[test]
fn a_lackey_trace_with_instructions_clamps_helper_accesses() {
    let profile = simulate_file("program.lackey", SimConfig::default());
    // Nothing is evicted: every line is charged once, at the end.
    // I 401000,4  I1 and LL miss, line 0x401000
    //  L 7ff000010,8  D1 and LL read miss, line 0x7ff000000
    // I 401004,3  hit
    //  S 7ff000038,8  hit (Dw); line 0x7ff000000: 2 uses, 16 bytes
    //  M 601004,4  write miss (Dw, D1mw, DLmw), line 0x601000: 1 use, 4 bytes
    // I 401007,5  hit
    //  S 7ff000040,512  an FXSAVE-sized helper access, clamped to 64 bytes:
    //                   write miss, line 0x7ff000040: 1 use, 64 bytes
    //                   (unclamped, over eight lines)
    // I 40103e,4  straddles 0x401040: line 0x401000 hits (its 4th use, 14
    //             bytes: 4+3+5+2), line 0x401040 misses (1 use, 2 bytes):
    //             one I1mr and one ILmr
    // AcCost: 1000/4 + 1000 (I1 lines) + 1000/2 + 1000 + 1000 (D1 lines).
    // SpLoss: 50 + 62 + 48 + 60 + 0. LL lines see the same uses.
    let (accost, sploss, used) = (250 + 1000 + 500 + 1000 + 1000, 50 + 62 + 48 + 60, 100);
    let expected = cost(&[
        (Ir, 4),
        (Dr, 1),
        (Dw, 3),
        (I1mr, 2),
        (D1mr, 1),
        (D1mw, 2),
        (ILmr, 2),
        (DLmr, 1),
        (DLmw, 2),
        (AcCost1, accost),
        (SpLoss1, sploss),
        (Loaded1, 5 * 64),
        (Used1, used),
        (AcCost2, accost),
        (SpLoss2, sploss),
        (Loaded2, 5 * 64),
        (Used2, used),
    ]);
    assert_eq!(only(&profile.totals, &COUNTS), expected);
    // Without symbols, the code is one function named by its entry.
    assert_eq!(
        only(&self_cost(&profile, "0x0000000000401000"), &COUNTS),
        expected
    );
}

#[test]
fn dinero_traces_follow_dinero() {
    let profile = simulate_file("flush.din", SimConfig::default());
    // Dinero III is word-oriented: 4 bytes at the address rounded down.
    // 2 0     instruction fetch at 0: I1 and LL miss, line 0x0
    // 0 1000  read: D1 and LL miss, line 0x1000
    // 2 4     hit; line 0x0: 2 uses, 8 bytes
    // 1 1002  write of 1000..1003: hit; line 0x1000: 2 uses, 4 bytes
    // 3 1040  escape record of unknown type, a read: miss, line 0x1040
    // 4 0     flush: every residency ends. I1 line 0x0: AcCost 500, SpLoss
    //         56; D1 line 0x1000: 500, 60; line 0x1040: 1000, 60
    // 2 8     I1 and LL miss again: 1 use, 4 bytes
    // 0 1000  D1 and LL miss again: 1 use, 4 bytes
    // At the end both lines: AcCost 1000, SpLoss 60 each. LL the same.
    let (accost, sploss) = (500 + 500 + 1000 + 1000 + 1000, 56 + 60 + 60 + 60 + 60);
    let expected = cost(&[
        (Ir, 3),
        (Dr, 3),
        (Dw, 1),
        (I1mr, 2),
        (D1mr, 3),
        (ILmr, 2),
        (DLmr, 3),
        (AcCost1, accost),
        (SpLoss1, sploss),
        (Loaded1, 5 * 64),
        (Used1, 8 + 4 + 4 + 4 + 4),
        (AcCost2, accost),
        (SpLoss2, sploss),
        (Loaded2, 5 * 64),
        (Used2, 24),
    ]);
    assert_eq!(only(&profile.totals, &COUNTS), expected);

    let profile = simulate_file("sizes.xdin", SimConfig::default());
    // i 400000 3  I1 and LL miss, line 0x400000
    // r 7000 8    D1 and LL miss, line 0x7000
    // w 7004 4    hit (Dw)
    // m 703e 4    miscellaneous, a read; straddles 0x7040: line 0x7000 hits
    //             (3 uses, bytes 7000..7007 and 703e..703f: 10), line
    //             0x7040 misses (1 use, 2 bytes): one D1mr
    // c 7000 40   copyback: nothing to write back in this model
    // i 400003 2  hit; line 0x400000: 2 uses, 5 bytes
    let (accost, sploss) = (500 + 1000 / 3 + 1000, 59 + 54 + 62);
    let expected = cost(&[
        (Ir, 2),
        (Dr, 2),
        (Dw, 1),
        (I1mr, 1),
        (D1mr, 2),
        (ILmr, 1),
        (DLmr, 2),
        (AcCost1, accost),
        (SpLoss1, sploss),
        (Loaded1, 3 * 64),
        (Used1, 5 + 10 + 2),
        (AcCost2, accost),
        (SpLoss2, sploss),
        (Loaded2, 3 * 64),
        (Used2, 17),
    ]);
    assert_eq!(only(&profile.totals, &COUNTS), expected);
}

#[test]
fn formats_are_detected_noise_is_counted_and_bad_records_named() {
    let dir = tempfile::tempdir().unwrap();
    let file = |name: &str| root().join("tests/importers").join(name);
    let run = |args: &[&str]| {
        let output = linegrind(dir.path(), args);
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        (output.status.code(), stdout, stderr)
    };
    for (name, format) in [
        ("cachelab.trace", "Valgrind Lackey"),
        ("program.lackey", "Valgrind Lackey"),
        ("flush.din", "Dinero din"),
        ("sizes.xdin", "Dinero extended din"),
    ] {
        let (code, stdout, stderr) = run(&["info", file(name).to_str().unwrap()]);
        assert_eq!(code, Some(0), "{stderr}");
        assert!(
            stdout.contains(&format!("format:         {format}")),
            "{name}: {stdout}"
        );
    }
    // Valgrind's lines (3 before, 2 after) and the blank line are skipped.
    let (_, _, stderr) = run(&[
        "sim",
        "-o",
        "/dev/null",
        "--quiet",
        file("program.lackey").to_str().unwrap(),
    ]);
    assert!(
        stderr.contains("5 lines that are not Lackey trace lines"),
        "{stderr}"
    );
    assert!(stderr.contains("the first at line 1"), "{stderr}");

    // Invalidating a range is not supported: an error naming the line.
    let bad = dir.path().join("bad.xdin");
    std::fs::write(&bad, "i 400000 3\nv 7000 4\n").unwrap();
    let (code, _, stderr) = run(&["sim", "-o", "/dev/null", bad.to_str().unwrap()]);
    assert_eq!(code, Some(2));
    assert!(
        stderr.contains("bad.xdin: line 2: invalidating a range is not supported"),
        "{stderr}"
    );
    // Forcing a format that does not fit is an error too, not a guess.
    let (code, _, stderr) = run(&[
        "sim",
        "-o",
        "/dev/null",
        "--format",
        "din",
        file("program.lackey").to_str().unwrap(),
    ]);
    assert_eq!(code, Some(2), "{stderr}");
}
