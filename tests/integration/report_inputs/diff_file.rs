//! The calls a difference file (`diff --out`) writes: each changed call
//! with the count of the run that made it, and its callee's object and file
//! where they are not its caller's; and runs that cannot be compared.

use super::*;

/// `main` in `prog`'s a.c calls `f` (a.c), `g` (b.c of `liba.so`) and `k`.
const BEFORE: &str = "events: Ir
ob=prog
fl=a.c
fn=main
0 10
cfn=f
calls=2 0
0 20
cob=liba.so
cfi=b.c
cfn=g
calls=1 0
0 5
cfn=k
calls=4 0
0 8
fn=f
0 20
fn=k
0 8
ob=liba.so
fl=b.c
fn=g
0 5
";

/// After a change: `f` called once more, `g` dearer, `k` no longer called
/// and `h` called instead.
const AFTER: &str = "events: Ir
ob=prog
fl=a.c
fn=main
0 10
cfn=f
calls=3 0
0 30
cob=liba.so
cfi=b.c
cfn=g
calls=1 0
0 7
cfn=h
calls=5 0
0 100
fn=f
0 30
fn=h
0 100
ob=liba.so
fl=b.c
fn=g
0 7
";

/// The difference file after its `summary:`: `main` costs the same itself
/// but its calls changed, the one to `f` with the after run's count, the
/// one only the before run made with that run's; `cob=` and `cfi=` only
/// where the callee's object and file are not the caller's.
const EXPECTED: &str = " 104

ob=(1) prog
fl=(1) a.c
fn=(1) main
0 0
cfn=(2) f
calls=3 0
0 10
cob=(2) liba.so
cfi=(2) b.c
cfn=(3) g
calls=1 0
0 2
cfn=(4) k
calls=4 0
0 -8
cfn=(5) h
calls=5 0
0 100

ob=(1)
fl=(1)
fn=(2)
0 10

ob=(2)
fl=(2)
fn=(3)
0 2

ob=(1)
fl=(1)
fn=(4)
0 -8

ob=(1)
fl=(1)
fn=(5)
0 100

totals: 104
";

#[test]
fn a_diff_file_writes_each_changed_call_as_callgrind_would() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.out", BEFORE);
    write(dir.path(), "b.out", AFTER);
    success(linegrind(
        dir.path(),
        &["diff", "a.out", "b.out", "--out", "d.out"],
    ));
    let text = fs::read_to_string(dir.path().join("d.out")).unwrap();
    let body = text.split_once("\nsummary:").unwrap().1;
    assert_eq!(body, EXPECTED, "{text}");
}

#[test]
fn runs_without_an_event_in_common_are_not_compared() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "ir.out", "events: Ir\nfl=a.c\nfn=f\n1 5\n");
    write(dir.path(), "dr.out", "events: Dr\nfl=a.c\nfn=f\n1 5\n");
    expect_input_error(
        dir.path(),
        &["diff", "ir.out", "dr.out"],
        "the two runs have no event in common",
    );
}
