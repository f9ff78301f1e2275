//! Symbolication from real ELF objects: small C and C++ programs compiled
//! during the test run with debug information, and the system's libc.
//!
//! Expectations come from outside linegrind's symbolizer: function names and
//! marker lines from the sources, instruction addresses from binutils
//! (`readelf`'s decoded line table and `nm`'s symbol table).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use linegrind::config::SimConfig;
use linegrind::output::Positions;
use linegrind::profile::Profile;
use linegrind::simulator::simulate;
use linegrind::trace::TextReader;

use crate::annotate::check_annotate_reads;
use crate::support::root;

/// The bias the tests map executables at, as a PIE under a loader.
const BIAS: u64 = 0x5555_5555_4000;

/// Compiles `source` from tests/programs into `dir` (optimised, with
/// `extra` flags), or explains why the test cannot run.
fn compile(source: &str, dir: &Path, extra: &[&str]) -> Option<PathBuf> {
    let compiler = if source.ends_with(".cpp") {
        "c++"
    } else {
        "cc"
    };
    if let Err(why) = crate::support::which(compiler) {
        crate::support::skip!("{why} to compile {source}");
        return None;
    }
    Some(crate::support::compile_program(
        source,
        &[&["-O1"], extra].concat(),
        dir,
    ))
}

/// Runs a binutils tool, or explains why the test cannot run.
fn binutils(tool: &str, args: &[&str], file: &Path) -> Option<String> {
    match Command::new(tool).args(args).arg(file).output() {
        Ok(output) => {
            let stderr = String::from_utf8_lossy(&output.stderr);
            assert!(
                output.status.success(),
                "{tool} failed on {file:?}: {stderr}"
            );
            Some(String::from_utf8(output.stdout).unwrap())
        }
        Err(_) => {
            crate::support::skip!("{tool} (binutils) is not available");
            None
        }
    }
}

/// `(file, line, address)` rows of `readelf --debug-dump=decodedline`.
fn line_table(binary: &Path) -> Option<Vec<(String, u32, u64)>> {
    let text = binutils("readelf", &["--debug-dump=decodedline"], binary)?;
    let rows = text
        .lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let [file, number, addr, ..] = fields[..] else {
                return None;
            };
            let addr = u64::from_str_radix(addr.strip_prefix("0x")?, 16).ok()?;
            Some((file.to_string(), number.parse().ok()?, addr))
        })
        .collect();
    Some(rows)
}

/// An address that the line table maps to `file:line`. Several rows can
/// share an address (views); the last one holds for the code there.
fn address_of(rows: &[(String, u32, u64)], file: &str, line: u32) -> u64 {
    rows.iter()
        .enumerate()
        .filter(|(i, row)| rows.get(i + 1).is_none_or(|next| next.2 != row.2))
        .map(|(_, row)| row)
        .find(|(f, l, _)| f.ends_with(file) && *l == line)
        .map(|row| row.2)
        .unwrap_or_else(|| panic!("no address for {file}:{line}"))
}

/// The 1-based line of `MARK marker` in tests/programs/`source`.
fn marker(source: &str, marker: &str) -> u32 {
    let text = std::fs::read_to_string(root().join("tests/programs").join(source)).unwrap();
    let index = text
        .lines()
        .position(|line| line.contains(&format!("MARK {marker}")))
        .unwrap_or_else(|| panic!("no marker {marker} in {source}"));
    index as u32 + 1
}

/// The address of symbol `name` in `nm` output (`-D` for dynamic symbols);
/// `None` only without binutils.
fn symbol(binary: &Path, name: &str, dynamic: bool) -> Option<u64> {
    let args: &[&str] = if dynamic {
        &["-D", "--defined-only"]
    } else {
        &[]
    };
    let text = binutils("nm", args, binary)?;
    let found = text.lines().find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        match fields[..] {
            [addr, _, sym] if sym == name || sym.starts_with(&format!("{name}@@")) => {
                u64::from_str_radix(addr, 16).ok()
            }
            _ => None,
        }
    });
    // Without binutils a test cannot run; with them, a symbol of a program
    // the test built, or of libc, is there.
    Some(found.unwrap_or_else(|| panic!("nm finds no {name} in {}", binary.display())))
}

fn run(trace: &str) -> Profile {
    simulate(&mut TextReader::new(trace.as_bytes()), SimConfig::default()).unwrap()
}

fn run_showing_inlined(trace: &str) -> Profile {
    let config = SimConfig::default().with_inline_functions(true);
    simulate(&mut TextReader::new(trace.as_bytes()), config).unwrap()
}

/// The one warning the symbols of `profile` gave.
fn the_warning(profile: &Profile) -> String {
    let warnings = profile.program.symbolizer().warnings();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    warnings[0].clone()
}

/// A trace of one instruction at ELF address `addr` of `binary`, mapped at
/// [`BIAS`].
fn one_instruction(binary: &Path, addr: u64) -> String {
    format!(
        "linegrind-trace text 1\nobject {} bias={BIAS:x}\ni {:x} 1\n",
        binary.display(),
        addr + BIAS
    )
}

/// Runs the C compiler in `dir` with `args` (sources named relative to
/// it), or explains why the test cannot run.
fn cc_in(dir: &Path, args: &[&str]) -> Option<()> {
    if let Err(why) = crate::support::which("cc") {
        crate::support::skip!("{why}");
        return None;
    }
    let status = Command::new("cc")
        .current_dir(dir)
        .args(args)
        .status()
        .unwrap();
    assert!(status.success(), "cc {args:?}");
    Some(())
}

/// Moves the DWARF that `programs` share into the supplementary file
/// `common` (`dwz -m`), or explains why the test cannot run.
fn dwz_shared(common: &Path, programs: &[&Path]) -> Option<()> {
    let dwz = Command::new("dwz")
        .arg("-m")
        .arg(common)
        .arg("-M")
        .arg(common)
        .args(programs)
        .status();
    match dwz {
        Ok(status) => assert!(status.success(), "dwz failed"),
        Err(_) => {
            crate::support::skip!("dwz is not available");
            return None;
        }
    }
    Some(())
}

fn callgrind(profile: &Profile) -> String {
    crate::support::callgrind_text(profile, Positions::default())
}

/// Function name, file and line of the instruction at runtime `addr` (not
/// a made-up call site of inlined code, which has no length).
fn position(profile: &Profile, addr: u64) -> (String, String, u32) {
    let program = &profile.program;
    let instr = program
        .instrs()
        .iter()
        .find(|instr| instr.addr == addr && instr.len > 0)
        .unwrap_or_else(|| panic!("no instruction at {addr:#x}"));
    let file = instr.file.map_or("???", |file| program.file(file));
    (
        program.function(instr.func).name.clone(),
        file.to_string(),
        instr.line,
    )
}

/// Two `static inline` functions of one name in two files, each inlined
/// into its file's caller, are two functions, as Callgrind's files of
/// their callers keep them apart.
#[test]
fn inlined_functions_of_one_name_in_two_files_are_two() {
    let dir = tempfile::tempdir().unwrap();
    let other = root().join("tests/programs/inline_other.c");
    let Some(binary) = compile("inline_twice.c", dir.path(), &[other.to_str().unwrap()]) else {
        return;
    };
    let Some(rows) = line_table(&binary) else {
        return;
    };
    let here = address_of(
        &rows,
        "inline_twice.c",
        marker("inline_twice.c", "mix-here"),
    );
    let there = address_of(
        &rows,
        "inline_other.c",
        marker("inline_other.c", "mix-other"),
    );
    let trace = format!(
        "linegrind-trace text 1
         object {} bias={BIAS:x}
         i {:x} 1
         i {:x} 1",
        binary.display(),
        here + BIAS,
        there + BIAS,
    );
    let profile = run_showing_inlined(&trace);
    let program = &profile.program;
    let function_at = |addr: u64| {
        let instr = program
            .instrs()
            .iter()
            .find(|i| i.addr == addr && i.len > 0);
        instr.expect("the instruction ran").func
    };
    let (a, b) = (function_at(here + BIAS), function_at(there + BIAS));
    assert_eq!(program.function(a).name, "mix");
    assert_eq!(program.function(b).name, "mix");
    assert_ne!(a, b);
}

/// Two static functions of one name in two files, linked so that no
/// symbol names them (`--discard-all`), are two functions named by address,
/// as Callgrind names them: DWARF names the code, not the functions'
/// ranges, and its names would make one function of the two.
#[test]
fn functions_only_dwarf_names_are_named_by_address() {
    let dir = tempfile::tempdir().unwrap();
    let other = root().join("tests/programs/unlisted_other.c");
    let flags = [other.to_str().unwrap(), "-Wl,--discard-all"];
    let Some(binary) = compile("unlisted_here.c", dir.path(), &flags) else {
        return;
    };
    let Some(rows) = line_table(&binary) else {
        return;
    };
    // Each function's entry: the first row of its opening line, which
    // shares its address with the rows of the lines after it.
    let entry = |file: &str, mark: &str| {
        let line = marker(file, mark);
        let row = rows
            .iter()
            .find(|(f, l, _)| f.ends_with(file) && *l == line);
        row.unwrap_or_else(|| panic!("no row for {file}:{line}")).2
    };
    let here = entry("unlisted_here.c", "helper-here");
    let there = entry("unlisted_other.c", "helper-other");
    let trace = format!(
        "linegrind-trace text 1
         object {} bias={BIAS:x}
         i {:x} 1
         call {:x}
         i {:x} 1",
        binary.display(),
        here + BIAS,
        there + BIAS,
        there + BIAS,
    );
    let profile = run(&trace);
    let (name, file, _) = position(&profile, here + BIAS);
    assert_eq!(name, format!("0x{here:016x}"));
    assert!(file.ends_with("unlisted_here.c"), "{file}");
    let (name, file, _) = position(&profile, there + BIAS);
    assert_eq!(name, format!("0x{there:016x}"));
    assert!(file.ends_with("unlisted_other.c"), "{file}");
}

/// Units whose compilation directory `-fdebug-prefix-map` rewrote: in
/// DWARF 5, to `/`, while the line table's directory 0 kept the real one,
/// as GCC 12 writes them, the file is named from directory 0, as Callgrind
/// names it, not from the compilation directory, as addr2line does; in
/// DWARF 4, to one ending in `/`, joined with one more `/`, as Callgrind
/// joins it (both checked against Callgrind 3.19 by hand).
#[test]
fn files_are_named_as_callgrind_names_them_whatever_the_compilation_directory() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("x.c"), "int main(void) { return 0; }\n").unwrap();
    let here = dir.path().display();
    for (version, mapped_to, expected) in [
        ("-gdwarf-5", "/", format!("{here}/x.c")),
        ("-gdwarf-4", "/y/", "/y//x.c".to_string()),
    ] {
        let map = format!("-fdebug-prefix-map={here}={mapped_to}");
        if cc_in(dir.path(), &["-g", version, &map, "-o", "x", "x.c"]).is_none() {
            return;
        }
        let binary = dir.path().join("x");
        let Some(main) = symbol(&binary, "main", false) else {
            return;
        };
        let (_, file, _) = position(&run(&one_instruction(&binary, main)), main + BIAS);
        assert_eq!(file, expected, "{version}");
    }
}

/// Two symbols that start together and end apart (hand-written assembly's
/// routine and a label of its first part): the shorter names the start,
/// and the longer only what lies past it, as in Valgrind's symbol table
/// (Callgrind 3.19 names the start `first_part`).
#[test]
fn symbols_that_start_together_split_their_range() {
    let dir = tempfile::tempdir().unwrap();
    let Some(binary) = compile("split_symbols.S", dir.path(), &[]) else {
        return;
    };
    let (Some(start), Some(rows)) = (symbol(&binary, "whole", false), line_table(&binary)) else {
        return;
    };
    let source = "split_symbols.S";
    let tail = address_of(&rows, source, marker(source, "whole-tail"));
    let trace = format!(
        "linegrind-trace text 1\nobject {} bias={BIAS:x}\ni {:x} 2\ni {:x} 3\n",
        binary.display(),
        start + BIAS,
        tail + BIAS
    );
    let profile = run(&trace);
    assert_eq!(position(&profile, start + BIAS).0, "first_part");
    assert_eq!(position(&profile, tail + BIAS).0, "whole");
}

/// Two programs whose shared DWARF `dwz -m` moved into a supplementary
/// file (as Debian's and Fedora's debug packages are built): the inlined
/// functions are named from it, found by the programs' debug alt link.
#[test]
fn inlined_functions_are_named_from_a_supplementary_dwarf_file() {
    let dir = tempfile::tempdir().unwrap();
    let other = root().join("tests/programs/inline_other.c");
    let Some(binary) = compile("inline_twice.c", dir.path(), &[other.to_str().unwrap()]) else {
        return;
    };
    let copy = dir.path().join("copy");
    std::fs::copy(&binary, &copy).unwrap();
    if dwz_shared(&dir.path().join("common.debug"), &[&binary, &copy]).is_none() {
        return;
    }
    let Some(rows) = line_table(&binary) else {
        return;
    };
    let here = address_of(
        &rows,
        "inline_twice.c",
        marker("inline_twice.c", "mix-here"),
    );
    let trace = one_instruction(&binary, here);
    assert_eq!(position(&run_showing_inlined(&trace), here + BIAS).0, "mix");
}

/// DWARF 4 that `dwz -m` shared keeps its compilation directory as a
/// string of the supplementary file: read from there, the file is named
/// as Callgrind names it (one more `/` after a directory ending in one).
/// A supplementary file that cannot be read leaves the object its own
/// symbols and lines.
#[test]
fn a_compilation_directory_is_read_from_a_supplementary_dwarf_file() {
    let dir = tempfile::tempdir().unwrap();
    for source in ["inline_twice.c", "inline_other.c"] {
        let from = root().join("tests/programs").join(source);
        std::fs::copy(from, dir.path().join(source)).unwrap();
    }
    let map = format!(
        "-fdebug-prefix-map={}=/build/package-1.2.3/",
        dir.path().display()
    );
    let sources = ["inline_twice.c", "inline_other.c"];
    let args = [
        &["-g", "-O1", "-gdwarf-4", &map, "-o", "first"],
        &sources[..],
    ]
    .concat();
    if cc_in(dir.path(), &args).is_none() {
        return;
    }
    let (binary, copy) = (dir.path().join("first"), dir.path().join("second"));
    std::fs::copy(&binary, &copy).unwrap();
    let common = dir.path().join("common.debug");
    if dwz_shared(&common, &[&binary, &copy]).is_none() {
        return;
    }
    let Some(main) = symbol(&binary, "main", false) else {
        return;
    };
    let trace = one_instruction(&binary, main);
    let (name, file, _) = position(&run(&trace), main + BIAS);
    assert_eq!(name, "main");
    assert_eq!(file, "/build/package-1.2.3//inline_twice.c");
    std::fs::write(&common, b"").unwrap();
    let (name, file, _) = position(&run(&trace), main + BIAS);
    assert_eq!(name, "main");
    assert!(file.ends_with("inline_twice.c"), "{file}");
}

#[test]
fn functions_files_and_lines_of_a_c_program() {
    let dir = tempfile::tempdir().unwrap();
    let Some(binary) = compile("symbols.c", dir.path(), &[]) else {
        return;
    };
    let Some(rows) = line_table(&binary) else {
        return;
    };
    let work_loop = marker("symbols.c", "work-loop");
    let helper_body = marker("helper.h", "helper-body");
    let loop_addr = address_of(&rows, "symbols.c", work_loop);
    let helper_addr = address_of(&rows, "helper.h", helper_body);
    let main_work = address_of(&rows, "symbols.c", marker("symbols.c", "main-work"));
    let main = symbol(&binary, "main", false).unwrap();
    let work = symbol(&binary, "work", false).unwrap();
    let trace = format!(
        "linegrind-trace text 1
         object {} bias={BIAS:x}
         i {:x} 1
         call {:x}
         i {:x} 1
         i {:x} 1
         ret
         i {helper:x} 1
         i {helper:x} 1
         i {:x} 1
         i {helper:x} 1",
        binary.display(),
        main + BIAS,
        work + BIAS,
        work + BIAS,
        loop_addr + BIAS,
        main_work + BIAS,
        helper = helper_addr + BIAS,
    );
    let profile = run(&trace);
    let inlined = run_showing_inlined(&trace);
    check_inlined_as_functions(&inlined, helper_addr + BIAS);
    for (profile, what) in [
        (&profile, "symbols.c"),
        (&inlined, "symbols.c, inlined shown"),
    ] {
        check_annotate_reads(profile, Positions::default(), what, false);
    }
    let (name, file, line) = position(&profile, loop_addr + BIAS);
    assert_eq!(name, "work");
    assert!(file.ends_with("symbols.c"), "{file}");
    assert_eq!(line, work_loop);
    // Inlined code belongs to its caller but keeps its own file and line.
    let (name, file, line) = position(&profile, helper_addr + BIAS);
    assert_eq!(name, "main");
    assert!(file.ends_with("helper.h"), "{file}");
    assert_eq!(line, helper_body);
    assert!(profile.program.symbolizer().warnings().is_empty());

    let out = callgrind(&profile);
    let binary = binary.display().to_string();
    assert!(out.contains(&format!("ob=(1) {binary}\n")), "{out}");
    // Positions are ELF addresses: the runtime address minus the bias.
    assert!(out.contains("cfn=(2) work\n"), "{out}");
    assert!(out.contains(&format!("fn=(2)\n{work:#x} ")), "{out}");
    assert!(out.contains(&format!("calls=1 {work:#x} ")), "{out}");
    // main switches to helper.h for the inlined line, as Callgrind does.
    let main_block = out.split("fn=(1) main\n").nth(1).unwrap();
    assert!(main_block.contains("fi=(2) "), "{out}");
    assert!(
        main_block
            .lines()
            .any(|l| l.starts_with("fi=(2) ") && l.ends_with("helper.h"))
    );
}

/// With inlined functions shown, `helper` is a function main calls, at the
/// line of the call in main.
fn check_inlined_as_functions(profile: &Profile, helper_addr: u64) {
    let (name, file, line) = position(profile, helper_addr);
    assert_eq!(name, "helper");
    assert!(file.ends_with("helper.h"));
    assert_eq!(line, marker("helper.h", "helper-body"));
    let program = &profile.program;
    let call = profile
        .arcs
        .iter()
        .find(|arc| program.function(arc.callee).name == "helper")
        .expect("an arc into helper");
    assert_eq!(program.function(profile.caller(call)).name, "main");
    // Entered twice: run twice in a row, then again after main's code.
    assert_eq!((call.calls, call.inclusive.0[0]), (2, 3));
    let site = program.instr(call.call_site);
    assert_eq!(site.line, marker("symbols.c", "main-helper"));
    let out = callgrind(profile);
    assert!(out.contains("cfn=(3) helper\n"), "{out}");
}

#[test]
fn cpp_names_are_demangled() {
    let dir = tempfile::tempdir().unwrap();
    let Some(binary) = compile("widget.cpp", dir.path(), &[]) else {
        return;
    };
    let Some(rows) = line_table(&binary) else {
        return;
    };
    let grow_body = marker("widget.cpp", "grow-body");
    let addr = address_of(&rows, "widget.cpp", grow_body);
    let (name, file, line) = position(&run(&one_instruction(&binary, addr)), addr + BIAS);
    assert_eq!(name, "shapes::Widget::grow(int)");
    assert!(file.ends_with("widget.cpp"));
    assert_eq!(line, grow_body);
}

/// Short C names are not demangled, and code typed as a data object is
/// named by its symbol, as Valgrind names both.
#[test]
fn short_c_names_are_not_demangled_as_types() {
    let dir = tempfile::tempdir().unwrap();
    let Some(binary) = compile("short_names.c", dir.path(), &[]) else {
        return;
    };
    let mut trace = format!(
        "linegrind-trace text 1\nobject {} bias={BIAS:x}\n",
        binary.display()
    );
    let names = ["f", "Ss", "v", "obj_in_text"];
    let mut addrs = Vec::new();
    for name in names {
        let Some(addr) = symbol(&binary, name, false) else {
            return;
        };
        trace.push_str(&format!("i {:x} 1\n", addr + BIAS));
        addrs.push(addr + BIAS);
    }
    let profile = run(&trace);
    for (name, addr) in names.into_iter().zip(addrs.iter().copied()) {
        assert_eq!(position(&profile, addr).0, name);
    }
    // Stripped, its symbols in a separate debug file, whose code sections
    // hold no bytes: the data object is named all the same.
    let debug = dir.path().join("short_names.debug");
    let keep_debug = ["--only-keep-debug", binary.to_str().unwrap()];
    if binutils("objcopy", &keep_debug, &debug).is_none() {
        return;
    }
    let link = format!("--add-gnu-debuglink={}", debug.display());
    binutils("objcopy", &["--strip-all", &link], &binary).unwrap();
    let profile = run(&trace);
    let (name, addr) = (names[3], addrs[3]);
    assert_eq!(position(&profile, addr).0, name, "stripped");
    // The debug file of another build, whose checksum is not the link's, is
    // not read (as Valgrind does not): the code is named by address.
    let other_dir = tempfile::tempdir().unwrap();
    let Some(other) = compile("short_names.c", other_dir.path(), &["-O0"]) else {
        return;
    };
    binutils(
        "objcopy",
        &["--only-keep-debug", other.to_str().unwrap()],
        &debug,
    )
    .unwrap();
    let (name, _, _) = position(&run(&trace), addr);
    assert!(name.starts_with("0x"), "{name}");
}

/// The C library the test programs link against.
fn libc() -> Option<PathBuf> {
    let candidates = [
        "/lib/x86_64-linux-gnu/libc.so.6",
        "/usr/lib/x86_64-linux-gnu/libc.so.6",
    ];
    let found = candidates
        .iter()
        .map(PathBuf::from)
        .find(|path| path.exists());
    if found.is_none() {
        crate::support::skip!("no x86-64 glibc found");
    }
    found
}

#[test]
fn a_libc_function_reached_from_user_code_is_named() {
    let Some(libc) = libc() else {
        return;
    };
    let Some(qsort) = symbol(&libc, "qsort", true) else {
        return;
    };
    let libc_bias = 0x7fff_f7d0_0000;
    let trace = format!(
        "linegrind-trace text 1
         fn 1000 1100 main app.c 3
         object {} bias={libc_bias:x}
         i 1000 5
         call {:x}
         i {:x} 1",
        libc.display(),
        qsort + libc_bias,
        qsort + libc_bias,
    );
    let profile = run(&trace);
    let (name, _, _) = position(&profile, qsort + libc_bias);
    assert_eq!(name, "qsort");
    let out = callgrind(&profile);
    assert!(
        out.contains(&format!("cob=(2) {}\n", libc.display())),
        "{out}"
    );
    assert!(out.contains(&format!("calls=1 {qsort:#x} ")), "{out}");
}

#[test]
fn a_call_through_the_plt_is_a_call_of_the_libc_function() {
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("q.c");
    std::fs::write(
        &source,
        "#include <stdlib.h>\n\
         static int cmp(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }\n\
         int main(void) { int v[2] = {1, 0}; qsort(v, 2, sizeof v[0], cmp); return v[0]; }\n",
    )
    .unwrap();
    let binary = dir.path().join("q");
    let compiled = Command::new("cc")
        .args(["-g", "-O1", "-o"])
        .arg(&binary)
        .arg(&source)
        .status();
    if !compiled.is_ok_and(|status| status.success()) {
        crate::support::skip!("no C compiler");
        return;
    }
    let (Some(libc), Some(disassembly)) = (libc(), binutils("objdump", &["-d"], &binary)) else {
        return;
    };
    let Some(qsort) = symbol(&libc, "qsort", true) else {
        return;
    };
    // The call instruction in main and the PLT stub it calls.
    let call_line = disassembly
        .lines()
        .find(|line| line.contains("call") && line.contains("<qsort@plt>"))
        .expect("main calls qsort through the PLT");
    let site = u64::from_str_radix(call_line.trim().split(':').next().unwrap(), 16).unwrap();
    let stub = u64::from_str_radix(
        call_line
            .split("call")
            .nth(1)
            .unwrap()
            .split_whitespace()
            .next()
            .unwrap(),
        16,
    )
    .unwrap();
    let libc_bias = 0x7fff_f7d0_0000;
    let trace = format!(
        "linegrind-trace text 1
         object {} bias={BIAS:x}
         object {} bias={libc_bias:x}
         i {:x} 5       # main: call qsort@plt
         call {:x}
         i {:x} 6       # the stub jumps to qsort
         i {:x} 1       # qsort
         r 7000 8
         ret
         i {:x} 1       # back in main",
        binary.display(),
        libc.display(),
        site + BIAS,
        stub + BIAS,
        stub + BIAS,
        qsort + libc_bias,
        site + 5 + BIAS,
    );
    let profile = run(&trace);
    let arcs: Vec<(String, String, u64)> = profile
        .arcs
        .iter()
        .map(|arc| {
            let program = &profile.program;
            (
                program.function(profile.caller(arc)).name.clone(),
                program.function(arc.callee).name.clone(),
                arc.calls,
            )
        })
        .collect();
    // The PLT stub is skipped: main calls qsort, once. As in Callgrind, the
    // stub's instruction is main's own cost, and the call's inclusive cost
    // starts at qsort.
    assert_eq!(arcs, [("main".to_string(), "qsort".to_string(), 1)]);
    assert_eq!(profile.arcs[0].inclusive.0[0], 1);
    let main_ir: u64 = profile
        .program
        .instrs()
        .iter()
        .zip(&profile.self_cost)
        .filter(|(instr, _)| profile.program.function(instr.func).name == "main")
        .map(|(_, cost)| cost.0[0])
        .sum();
    assert_eq!(
        main_ir, 3,
        "the call, the stub and the instruction after the call"
    );
    let (name, _, _) = position(&profile, qsort + libc_bias);
    assert_eq!(name, "qsort");
}

/// An object file (`.o`), which has no loadable segments to give its
/// range, is not mapped, and says so, as an object that cannot be read.
#[test]
fn an_object_without_loadable_segments_is_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let Some(object) = compile("short_names.c", dir.path(), &["-c"]) else {
        return;
    };
    let trace = format!(
        "linegrind-trace text 1\nobject {} bias=0\ni 0 1\n",
        object.display()
    );
    let profile = run(&trace);
    let warning = the_warning(&profile);
    assert!(
        warning.starts_with(&format!("{} has no loadable segments", object.display())),
        "{warning}"
    );
}

/// DWARF that cannot be read (here a unit of DWARF version 9) leaves the
/// object's functions to its symbol table, with a warning, as a stripped
/// debug section would: the code is still mapped and named.
#[test]
fn an_object_whose_dwarf_cannot_be_read_keeps_its_symbols() {
    use object::{Object, ObjectSection};
    let dir = tempfile::tempdir().unwrap();
    let Some(binary) = compile("symbols.c", dir.path(), &[]) else {
        return;
    };
    let Some(main) = symbol(&binary, "main", false) else {
        return;
    };
    let mut bytes = std::fs::read(&binary).unwrap();
    let info = {
        let elf = object::File::parse(&*bytes).unwrap();
        let section = elf.section_by_name(".debug_info").unwrap();
        section.file_range().unwrap().0 as usize
    };
    // After the first unit's 4-byte length, its version.
    bytes[info + 4..info + 6].copy_from_slice(&9u16.to_le_bytes());
    std::fs::write(&binary, &bytes).unwrap();
    let profile = run(&one_instruction(&binary, main));
    let (name, file, line) = position(&profile, main + BIAS);
    assert_eq!((name.as_str(), file.as_str(), line), ("main", "???", 0));
    let warning = the_warning(&profile);
    assert!(
        warning.starts_with(&format!("cannot read the DWARF of {}", binary.display()))
            && warning.contains("named from its symbol table"),
        "{warning}"
    );
}

/// Debug data that would make reading the DWARF hang or take gigabytes
/// leaves the object's functions to its symbol table, with a warning: a
/// compressed section that claims far more than its bytes can give (a
/// kilobyte claiming a terabyte), and a DWARF package beside the object
/// that is a pipe, which addr2line would wait on forever.
#[test]
fn debug_data_that_would_hang_or_take_gigabytes_is_not_read() {
    use object::{Object, ObjectSection};
    let dir = tempfile::tempdir().unwrap();
    let Some(binary) = compile("symbols.c", dir.path(), &["-g"]) else {
        return;
    };
    let Some(main) = symbol(&binary, "main", false) else {
        return;
    };
    let warning = |run: &std::process::Output| {
        assert!(run.status.success(), "{run:?}");
        String::from_utf8(run.stderr.clone()).unwrap()
    };
    let trace = dir.path().join("t.txt");
    std::fs::write(&trace, one_instruction(&binary, main)).unwrap();
    let sim = ["sim", "t.txt", "-q", "-o", "out"];
    let named_main = || {
        let out = std::fs::read_to_string(dir.path().join("out")).unwrap();
        assert!(out.contains("fn=(1) main\n"), "{out}");
    };

    let compressed = dir.path().join("compressed");
    let status = Command::new("objcopy")
        .arg("--compress-debug-sections=zlib")
        .args([&binary, &compressed])
        .status();
    if !status.is_ok_and(|status| status.success()) {
        crate::support::skip!("objcopy cannot compress debug sections");
        return;
    }
    let mut bytes = std::fs::read(&compressed).unwrap();
    let header = {
        let elf = object::File::parse(&*bytes).unwrap();
        let section = elf.section_by_name(".debug_info").unwrap();
        section.file_range().unwrap().0 as usize
    };
    // The 64-bit compression header: type, reserved, then the size.
    bytes[header + 8..header + 16].copy_from_slice(&(1u64 << 40).to_le_bytes());
    std::fs::write(&compressed, &bytes).unwrap();
    std::fs::write(&trace, one_instruction(&compressed, main)).unwrap();
    let run = crate::support::run_within(dir.path(), &sim, Duration::from_secs(60));
    let err = warning(&run.expect("not a terabyte"));
    assert!(
        err.contains("its section .debug_info claims 1099511627776 bytes"),
        "{err}"
    );
    named_main();

    // The same as the debug file of a stripped copy: said, not silent.
    let stripped = dir.path().join("stripped");
    let status = Command::new("objcopy")
        .arg("--strip-debug")
        .arg("--add-gnu-debuglink=compressed")
        .args([&binary, &stripped])
        .current_dir(dir.path())
        .status()
        .unwrap();
    assert!(status.success());
    std::fs::write(&trace, one_instruction(&stripped, main)).unwrap();
    let run = crate::support::run_within(dir.path(), &sim, Duration::from_secs(60));
    let err = warning(&run.expect("not a terabyte"));
    assert!(
        err.contains(&format!(
            "cannot read the DWARF of {}, the debug file of {}",
            compressed.display(),
            stripped.display()
        )),
        "{err}"
    );
    named_main();

    std::fs::write(&trace, one_instruction(&binary, main)).unwrap();
    let package = dir.path().join(format!(
        "{}.dwp",
        binary.file_name().unwrap().to_str().unwrap()
    ));
    // A DWARF package whose section claims a terabyte: refused too.
    std::fs::copy(&compressed, &package).unwrap();
    let run = crate::support::run_within(dir.path(), &sim, Duration::from_secs(60));
    let err = warning(&run.expect("not a terabyte"));
    assert!(
        err.contains(&format!(
            "its DWARF package {}: its section .debug_info claims",
            package.display()
        )),
        "{err}"
    );
    std::fs::remove_file(&package).unwrap();
    let fifo = std::ffi::CString::new(package.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    let run = crate::support::run_within(dir.path(), &sim, Duration::from_secs(60));
    let err = warning(&run.expect("no wait on the pipe"));
    assert!(
        err.contains(&format!(
            "its DWARF package {} is a pipe or a device",
            package.display()
        )),
        "{err}"
    );
    named_main();
}

/// Inlined functions nested 5,000 deep (`tests/programs/deep_inlines.S`),
/// which addr2line reads recursively on the simulating thread: its stack
/// holds them (the default 2 MiB of a thread overflowed, an abort).
#[test]
fn inlined_functions_nested_thousands_deep_are_read() {
    let dir = tempfile::tempdir().unwrap();
    let source = root().join("tests/programs/deep_inlines.S");
    let Some(()) = cc_in(
        dir.path(),
        &["-no-pie", source.to_str().unwrap(), "-o", "deep"],
    ) else {
        return;
    };
    let binary = dir.path().join("deep");
    let Some(main) = symbol(&binary, "main", false) else {
        return;
    };
    let trace = format!(
        "linegrind-trace text 1\nobject {} bias=0\ni {:x} 1\n",
        binary.display(),
        main + 1
    );
    std::fs::write(dir.path().join("deep.txt"), trace).unwrap();
    let args = ["sim", "deep.txt", "-q", "--show-inlined=yes", "-o", "out"];
    let run = crate::support::linegrind(dir.path(), &args);
    assert!(run.status.success(), "{run:?}");
    let out = std::fs::read_to_string(dir.path().join("out")).unwrap();
    assert!(out.contains("fn=(1) main\n"), "{out}");
}

/// An object whose bias would split its code across the end of the
/// address space is not mapped, with a warning, rather than left out
/// unsaid; a negative bias (two's complement) that keeps it whole maps it.
#[test]
fn an_object_moved_across_the_end_of_the_address_space_is_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let Some(binary) = compile("symbols.c", dir.path(), &["-pie", "-fPIE"]) else {
        return;
    };
    let trace = format!(
        "linegrind-trace text 1\nobject {} bias=fffffffffffff000\ni fffffffffffff010 1\n",
        binary.display()
    );
    let profile = run(&trace);
    let warning = the_warning(&profile);
    assert!(
        warning.starts_with(&format!(
            "{} at bias 0xfffffffffffff000 would lie across the end of the address space",
            binary.display()
        )),
        "{warning}"
    );

    let fixed = dir.path().join("fixed");
    std::fs::create_dir(&fixed).unwrap();
    let Some(binary) = compile("symbols.c", &fixed, &["-no-pie", "-fno-pie"]) else {
        return;
    };
    let Some(main) = symbol(&binary, "main", false) else {
        return;
    };
    let trace = format!(
        "linegrind-trace text 1\nobject {} bias=fffffffffffff000\ni {:x} 1\n",
        binary.display(),
        main - 0x1000
    );
    let profile = run(&trace);
    assert!(profile.program.symbolizer().warnings().is_empty());
    assert_eq!(position(&profile, main - 0x1000).0, "main");
}

#[test]
fn missing_objects_and_build_id_mismatches_are_warnings() {
    let trace = "linegrind-trace text 1
         object /nonexistent/libgone.so bias=10000 start=10000 end=20000
         object /nonexistent/libother.so bias=30000
         i 10010 4
         i 10014 4";
    let profile = run(trace);
    let warnings = profile.program.symbolizer().warnings();
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(warnings[0].starts_with("cannot read /nonexistent/libother.so"));
    assert!(warnings[1].starts_with("cannot read /nonexistent/libgone.so"));
    // The run goes on with address-named functions in the object, named
    // as Callgrind names them: the ELF address, 16 digits.
    let (name, file, _) = position(&profile, 0x10014);
    assert_eq!(
        (name.as_str(), file.as_str()),
        ("0x0000000000000010", "???")
    );
    assert!(callgrind(&profile).contains("ob=(1) /nonexistent/libgone.so\n"));

    let Some(libc) = libc() else {
        return;
    };
    let trace = format!(
        "linegrind-trace text 1\nobject {} bias=7f0000000000 build-id=deadbeef\n",
        libc.display()
    );
    let profile = run(&trace);
    let warning = the_warning(&profile);
    assert!(
        warning.contains("but the trace recorded deadbeef"),
        "{warning}"
    );
}

#[test]
fn a_stripped_executable_falls_back_to_addresses() {
    let dir = tempfile::tempdir().unwrap();
    let Some(binary) = compile("symbols.c", dir.path(), &["-s"]) else {
        return;
    };
    // A stripped executable keeps no symbol for its code, which is named
    // after the (ELF) address its frame was entered at.
    let Some(disassembly) = binutils("objdump", &["-d"], &binary) else {
        return;
    };
    let entry = disassembly
        .lines()
        .find(|line| line.contains("<.text>:") || line.contains("<_start>:"))
        .and_then(|line| u64::from_str_radix(line.split_whitespace().next()?, 16).ok())
        .expect("a text section");
    let trace = format!(
        "linegrind-trace text 1\nobject {} bias={BIAS:x}\ni {:x} 4\ni {:x} 4\n",
        binary.display(),
        entry + BIAS,
        entry + 4 + BIAS
    );
    let profile = run(&trace);
    let (name, file, line) = position(&profile, entry + 4 + BIAS);
    assert_eq!(name, format!("0x{entry:016x}"));
    assert_eq!((file.as_str(), line), ("???", 0));
}

#[test]
fn symbols_carried_in_the_trace_need_no_binary() {
    // What the recorder embeds: the object's mapping, and the functions and
    // source lines of the code that ran. The binary is not on this machine.
    let profile = run("linegrind-trace text 1
         object /build/app bias=555555554000 start=555555555000 end=555555556000
         fn 555555555129 55555555514d work app.c 4
         fn 55555555514d 555555555170 main app.c 12
         line 555555555130 7
         line 55555555515a 4 helper.h
         i 55555555514d 4
         call 555555555129
         i 555555555129 4
         i 555555555130 3
         ret
         i 555555555151 2
         i 55555555515a 3");
    assert!(profile.program.symbolizer().warnings().is_empty());
    assert_eq!(
        position(&profile, 0x5555_5555_5130),
        ("work".into(), "app.c".into(), 7)
    );
    assert_eq!(
        position(&profile, 0x5555_5555_5129),
        ("work".into(), "app.c".into(), 4)
    );
    assert_eq!(
        position(&profile, 0x5555_5555_515a),
        ("main".into(), "helper.h".into(), 4)
    );
    let out = callgrind(&profile);
    assert!(
        out.contains("ob=(1) /build/app\nfl=(1) app.c\nfn=(1) work\n0x1129 4 "),
        "{out}"
    );
    assert!(out.contains("fn=(2) main\n0x114d 12 "), "{out}");
    assert!(out.contains("calls=1 0x1129 4\n"), "{out}");
    assert!(out.contains("fi=(2) helper.h\n"), "{out}");
}

/// Every C++ name of the C++ standard library, and every Rust name of
/// linegrind's own binary (v0 names, `_R...`, and legacy ones, `_ZN...E`,
/// some with a copy's suffix such as `.1035`), demangled as Valgrind shows
/// it: as binutils' `c++filt --no-verbose` (GNU libiberty without
/// implementation details, Valgrind's options) does.
#[test]
fn mangled_names_are_demangled_as_valgrind_demangles_them() {
    use std::io::Write;
    use std::process::Stdio;

    if !cfg!(libiberty) {
        crate::support::skip!("linegrind was built without GNU libiberty (libiberty-dev)");
        return;
    }

    let listings = [
        ("-D", Path::new("/usr/lib/x86_64-linux-gnu/libstdc++.so.6")),
        ("--defined-only", Path::new(env!("CARGO_BIN_EXE_linegrind"))),
    ];
    let mut mangled: Vec<String> = Vec::new();
    for (table, binary) in listings {
        let Some(listing) = binutils("nm", &[table, "--defined-only"], binary) else {
            return;
        };
        let before = mangled.len();
        mangled.extend(
            listing
                .lines()
                .filter_map(|line| line.split_whitespace().nth(2))
                .map(|name| name.split('@').next().unwrap_or(name))
                .filter(|name| name.starts_with("_Z") || name.starts_with("_R"))
                .map(str::to_string),
        );
        assert!(
            mangled.len() - before > 500,
            "{} mangled names in {}",
            mangled.len() - before,
            binary.display()
        );
    }
    let Ok(mut filt) = Command::new("c++filt")
        .arg("--no-verbose")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
    else {
        crate::support::skip!("no c++filt");
        return;
    };
    let mut input = filt.stdin.take().unwrap();
    let names = mangled.join("\n");
    let writer = std::thread::spawn(move || input.write_all(names.as_bytes()));
    let output = filt.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(output.status.success(), "c++filt failed");
    let expected = String::from_utf8(output.stdout).unwrap();
    assert_eq!(expected.lines().count(), mangled.len(), "a line per name");
    let mut differ = 0;
    for (name, expected) in mangled.iter().zip(expected.lines()) {
        let ours = linegrind::symbols::demangle(name);
        if ours != expected {
            eprintln!("{name}: {ours} against {expected}");
            differ += 1;
        }
    }
    assert_eq!(differ, 0, "of {} names", mangled.len());
}
