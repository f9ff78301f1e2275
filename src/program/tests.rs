use super::*;

#[test]
fn instructions_are_interned_once_with_their_function() {
    let mut p = Program::default();
    let main = p
        .add_function(0x1000, 0x1040, "main".into(), Some("m.c".into()), 12)
        .unwrap();
    let a = p.intern(0x1000, 4, 0x1000);
    let b = p.intern(0x1004, 5, 0x1000);
    assert_eq!(p.intern(0x1000, 4, 0x1000), a);
    assert_ne!(a, b);
    assert_eq!(p.instr(a).func, main);
    assert_eq!(p.instr(b).line, 12);
    assert_eq!(p.file(p.instr(b).file.unwrap()), "m.c");
    assert_eq!(p.instrs().len(), 2);
}

/// Embedded symbols carry no inlining: asked for, inlined functions are
/// shown (and block runs walked instruction by instruction) only once
/// a module read from its file is mapped.
#[test]
fn inlined_functions_are_shown_once_a_module_can_give_them() {
    let mapping = |path: &str, embedded| ModuleMapping {
        path: path.into(),
        bias: 0,
        range: Some((0x1000, 0x2000)),
        build_id: None,
        embedded,
    };
    let mut p = Program::with_options(SkipRules::default(), true);
    assert!(!p.shows_inlined());
    p.add_module(&mapping("/lib/embedded.so", true));
    assert!(!p.shows_inlined());
    p.add_module(&mapping("/nonexistent/app", false));
    assert!(p.shows_inlined());
    let mut off = Program::with_options(SkipRules::default(), false);
    off.add_module(&mapping("/nonexistent/app", false));
    assert!(!off.shows_inlined());
}

#[test]
fn trace_lines_give_instructions_their_own_position() {
    let mut p = Program::default();
    p.add_function(0x1000, 0x1040, "main".into(), Some("m.c".into()), 12)
        .unwrap();
    p.add_line(0x1004, 14, None).unwrap();
    p.add_line(0x1008, 3, Some("inline.h".into())).unwrap();
    let b = p.intern(0x1004, 4, 0x1000);
    let c = p.intern(0x1008, 4, 0x1000);
    assert_eq!(
        (p.file(p.instr(b).file.unwrap()), p.instr(b).line),
        ("m.c", 14)
    );
    assert_eq!(
        (p.file(p.instr(c).file.unwrap()), p.instr(c).line),
        ("inline.h", 3)
    );
    assert!(matches!(
        p.add_line(0x1004, 15, None),
        Err(SymbolError::TooLate { .. })
    ));
}

#[test]
fn code_without_symbols_is_named_after_its_frame_entry() {
    let mut p = Program::default();
    p.add_function(0x1000, 0x1040, "main".into(), None, 0)
        .unwrap();
    let callee = p.callee(0x2000);
    assert_eq!(p.function(callee).name, "0x0000000000002000");
    let inside = p.intern(0x2010, 2, 0x2000);
    assert_eq!(p.instr(inside).func, callee);
    // Unnamed code in a frame entered at a named function is that
    // function's (its cold part, say), as Callgrind charges it.
    let cold = p.intern(0x3000, 1, 0x1000);
    assert_eq!(p.function(p.instr(cold).func).name, "main");
    // Named after the frame's entry only when that entry is unnamed.
    let stray = p.intern(0x3008, 1, 0x3008);
    assert_eq!(p.function(p.instr(stray).func).name, "0x0000000000003008");
}

/// Code without a symbol joins the function its frame's first such
/// code joined, whatever object it lies in, and keeps the region of
/// its own code: one instruction per address and frame function,
/// however often it runs.
#[test]
fn code_without_symbols_in_another_object_joins_its_frame_once() {
    let mut p = Program::default();
    p.add_module(&ModuleMapping {
        path: "/x/b".into(),
        bias: 0,
        range: Some((0x3000, 0x4000)),
        build_id: None,
        embedded: true,
    });
    let first = p.intern(0x2004, 4, 0x2004);
    let other = p.intern(0x3000, 5, 0x2004);
    assert_eq!(p.instr(other).func, p.instr(first).func);
    assert_ne!(p.region(other), p.region(first));
    assert_eq!(p.region(first), p.function(p.instr(first).func).region());
    assert_eq!(p.intern(0x2004, 4, 0x2004), first);
    assert_eq!(p.intern(0x3000, 5, 0x2004), other);
    assert_eq!(p.instrs().len(), 2);
}

#[test]
fn a_symbol_for_code_that_already_ran_is_refused() {
    let mut p = Program::default();
    p.intern(0x2010, 2, 0x2000);
    let err = p
        .add_function(0x2000, 0x2020, "late".into(), None, 0)
        .unwrap_err();
    assert_eq!(
        err,
        SymbolError::TooLate {
            what: "function `late`".into(),
            addr: 0x2000
        }
    );
    p.add_function(0x1000, 0x1040, "a".into(), None, 0).unwrap();
    assert!(matches!(
        p.add_function(0x1020, 0x1050, "b".into(), None, 0),
        Err(SymbolError::Overlap { .. })
    ));
}
