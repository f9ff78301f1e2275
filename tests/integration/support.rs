//! Helpers shared by the integration tests.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::thread::sleep;
use std::time::{Duration, Instant};

use linegrind::arcs::Arc;
use linegrind::cache::CacheGeometry;
use linegrind::config::SimConfig;
use linegrind::cost::{Cost, EventKind};
use linegrind::output::{Positions, Source, write_callgrind};
use linegrind::profile::Profile;
use linegrind::simulator::simulate;
use linegrind::trace::{AnyReader, Format, TextReader};

/// Says why a test cannot run here, on stderr (`cargo test -- --nocapture`
/// shows it); with `LINEGRIND_REQUIRE_TOOLS` set, as CI sets it, a tool
/// missing fails the test instead, so that nothing passes unchecked.
macro_rules! skip {
    ($($why:tt)*) => {
        $crate::support::skipped(format!($($why)*))
    };
}
pub(crate) use skip;

/// Whether golden files are to be written afresh rather than compared:
/// `LINEGRIND_BLESS=1`, and nothing else, so that a variable left set
/// to another value does not accept every change.
fn blessing() -> bool {
    std::env::var("LINEGRIND_BLESS").is_ok_and(|value| value == "1")
}

/// The golden file at `path`, to compare `actual` with; `None` when
/// blessing, which writes `actual` there instead.
pub fn golden_bytes(path: &Path, actual: &[u8]) -> Option<Vec<u8>> {
    if blessing() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, actual).unwrap();
        return None;
    }
    let expected = std::fs::read(path)
        .unwrap_or_else(|_| panic!("{} is missing; run with LINEGRIND_BLESS=1", path.display()));
    Some(expected)
}

pub fn skipped(why: String) {
    if std::env::var_os("LINEGRIND_REQUIRE_TOOLS").is_some() {
        panic!("LINEGRIND_REQUIRE_TOOLS is set, and this test would be skipped: {why}");
    }
    eprintln!("skipped: {why}");
}

/// A callgrind file without the lines that name where it came from (`cmd:`
/// and `desc: Trace:`), to compare profiles of the same run read from
/// different traces.
pub fn without_source(profile: &str) -> String {
    let lines: Vec<&str> = profile
        .lines()
        .filter(|line| !line.starts_with("cmd:") && !line.starts_with("desc: Trace:"))
        .collect();
    lines.join("\n")
}

/// Simulates a text trace held in a string.
pub fn simulate_text(text: &str, config: SimConfig) -> Profile {
    simulate(&mut TextReader::new(text.as_bytes()), config).expect("trace simulates")
}

/// `profile` as the callgrind file `sim` writes, from a trace named `test`.
pub fn callgrind_text(profile: &Profile, positions: Positions) -> String {
    let mut out = Vec::new();
    write_callgrind(&mut out, profile, &Source::trace("test"), positions).expect("in memory");
    String::from_utf8(out).expect("callgrind files are UTF-8")
}

/// A configuration with cache use and back-dating on.
pub fn config(i1: &str, d1: &str, ll: &str) -> SimConfig {
    let g = |text: &str| text.parse::<CacheGeometry>().unwrap();
    SimConfig::new(g(i1), g(d1), g(ll), true, true).unwrap()
}

/// A cost with the given counters and zero elsewhere.
pub fn cost(counts: &[(EventKind, u64)]) -> Cost {
    let mut cost = Cost::ZERO;
    for &(kind, count) in counts {
        cost[kind] = count;
    }
    cost
}

/// Keeps only the counters of `kinds`, for comparing a subset.
pub fn only(cost: &Cost, kinds: &[EventKind]) -> Cost {
    let mut out = Cost::ZERO;
    for &kind in kinds {
        out[kind] = cost[kind];
    }
    out
}

/// `trace` as it is, with stack pointers as recorded traces have them, and
/// without its `sp` lines.
pub fn with_and_without_sp(trace: &str) -> [String; 2] {
    let without: String = trace
        .lines()
        .filter(|line| !line.trim_start().starts_with("sp "))
        .map(|line| format!("{line}\n"))
        .collect();
    [trace.to_string(), without]
}

/// Self cost of the function named `name`.
pub fn self_cost(profile: &Profile, name: &str) -> Cost {
    let costs = profile.function_self_costs();
    let index = profile
        .program
        .functions()
        .iter()
        .position(|f| f.name == name)
        .unwrap_or_else(|| panic!("no function {name}"));
    costs[index]
}

/// The one arc from `caller` to `callee`.
pub fn arc<'a>(profile: &'a Profile, caller: &str, callee: &str) -> &'a Arc {
    let mut found = profile.arcs.iter().filter(|arc| {
        profile.program.function(profile.caller(arc)).name == caller
            && profile.program.function(arc.callee).name == callee
    });
    let arc = found
        .next()
        .unwrap_or_else(|| panic!("no arc {caller} -> {callee}"));
    assert!(found.next().is_none(), "several arcs {caller} -> {callee}");
    arc
}

/// The repository root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The full path of `program` on `PATH`.
pub fn which(program: &str) -> Result<String, String> {
    let out = Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .output()
        .map_err(|err| err.to_string())?;
    let path = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if out.status.success() && path.starts_with('/') {
        Ok(path)
    } else {
        Err(format!("no {program} on PATH"))
    }
}

/// Runs the `linegrind` binary in `dir` with `args`.
pub fn linegrind(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_linegrind"))
        .current_dir(dir)
        .args(args)
        .output()
        .expect("linegrind runs")
}

/// Valgrind, set up to run a program in `dir` as `linegrind record` runs
/// it there: the same Valgrind folder and working folder, so the same
/// environment. Debian's `valgrind` is a shell script that sets `PWD`,
/// which the program's stack holds: from a working folder of another
/// length the stack moves, and with it which function first touches each
/// new stack line. `VALGRIND_LIB` is set by `env`, as the README has it,
/// not on the command, which would pass the environment sorted by name
/// where `record` keeps its order.
pub fn valgrind_as_recorder(dir: &Path) -> Command {
    let lib = linegrind::record::valgrind_lib().unwrap();
    let mut valgrind = Command::new("env");
    valgrind
        .current_dir(dir)
        .arg(setting("VALGRIND_LIB", lib.as_os_str()))
        .arg("valgrind");
    valgrind
}

/// `name=value`, a variable as `env` takes it.
pub fn setting(name: &str, value: &OsStr) -> OsString {
    let mut setting = OsString::from(format!("{name}="));
    setting.push(value);
    setting
}

/// The recorder's Valgrind folder, or none where the recorder cannot run
/// here (saying why).
pub fn recorder_tool() -> Option<PathBuf> {
    linegrind::record::valgrind_lib()
        .inspect_err(|err| skip!("{err}"))
        .ok()
}

/// Why a test that records programs under Valgrind cannot run here, if it
/// cannot: Valgrind, a C compiler (and a C++ one with `cxx`) and the
/// recorder's tool library are needed.
pub fn missing_tools(cxx: bool) -> Option<String> {
    let works = |tool: &str| {
        Command::new(tool)
            .arg("--version")
            .output()
            .is_ok_and(|out| out.status.success())
    };
    if !works("valgrind") {
        return Some("valgrind is not installed".into());
    }
    if !works("cc") {
        return Some("no C compiler".into());
    }
    if cxx && !works("c++") {
        return Some("no C++ compiler".into());
    }
    if let Err(err) = linegrind::record::valgrind_lib() {
        return Some(err.to_string());
    }
    None
}

/// The JSON summary of `linegrind sim TRACE OPTIONS`, run in `dir`.
pub fn sim_summary(dir: &Path, trace: &str, options: &[&str]) -> serde_json::Value {
    let mut args = vec![
        "sim",
        trace,
        "-o",
        "out",
        "--quiet",
        "--json",
        "summary.json",
    ];
    args.extend(options);
    let run = linegrind(dir, &args);
    assert!(run.status.success(), "{args:?}: {run:?}");
    serde_json::from_slice(&std::fs::read(dir.join("summary.json")).unwrap()).unwrap()
}

/// Simulates the trace file at `path`, text or binary.
pub fn simulate_file(path: &Path, config: SimConfig) -> Profile {
    let file = std::fs::File::open(path).unwrap();
    let mut reader = AnyReader::new(file, false).unwrap();
    simulate(&mut reader, config).unwrap()
}

/// Whether the trace at `path` was recorded from a real program (binary),
/// where `main` is not the root of the call graph.
pub fn is_recorded(path: &Path) -> bool {
    let file = std::fs::File::open(path).unwrap();
    AnyReader::new(file, false).unwrap().format() == Format::Binary
}

/// Every example trace shipped in `traces/`.
pub fn example_traces() -> Vec<PathBuf> {
    let mut traces: Vec<PathBuf> = std::fs::read_dir(root().join("traces"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "lgt"))
        .collect();
    traces.sort();
    assert!(traces.len() >= 3, "traces/ holds the example traces");
    traces
}

/// Compiles `tests/programs/<source>` with debug information and `flags`
/// into `dir` (C++ for `.cpp`), panicking if the compiler fails.
pub fn compile_program(source: &str, flags: &[&str], dir: &Path) -> PathBuf {
    let compiler = if source.ends_with(".cpp") {
        "c++"
    } else {
        "cc"
    };
    let out = dir.join(source.replace(['.', '/'], "_"));
    let status = Command::new(compiler)
        .arg("-g")
        .args(flags)
        .arg("-o")
        .arg(&out)
        .arg(root().join("tests/programs").join(source))
        .status()
        .unwrap();
    assert!(status.success(), "{compiler} {source}");
    out
}

/// Records `binary` with `linegrind record` into `dir/trace.lgt`.
pub fn record(binary: &Path, dir: &Path) -> PathBuf {
    record_command(&[binary.to_str().unwrap()], dir).0
}

/// Records `command` (a program and its arguments) with `linegrind record`,
/// run in `dir`, into `dir/trace.lgt`; returns the trace and the program's
/// exit code, which `record` exits with.
pub fn record_command(command: &[&str], dir: &Path) -> (PathBuf, Option<i32>) {
    let trace = dir.join("trace.lgt");
    let mut args = vec!["record", "-o", trace.to_str().unwrap(), "--"];
    args.extend_from_slice(command);
    let output = linegrind(dir, &args);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("linegrind: recorded "), "{stderr}");
    (trace, output.status.code())
}

/// Runs linegrind with `args` in `dir`, killing it after `limit`: a
/// watchdog for inputs that once made it run for hours (exponentially many
/// paths, a quadratic insert), with a limit far above what it takes, not a
/// speed target. Its output goes to files, which a pipe's reader that
/// waits for the end would not drain.
pub fn run_within(dir: &Path, args: &[&str], limit: Duration) -> Option<Output> {
    let (out_path, err_path) = (dir.join("run_within.stdout"), dir.join("run_within.stderr"));
    let mut child = Command::new(env!("CARGO_BIN_EXE_linegrind"))
        .current_dir(dir)
        .args(args)
        .stdout(std::fs::File::create(&out_path).unwrap())
        .stderr(std::fs::File::create(&err_path).unwrap())
        .spawn()
        .unwrap();
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > limit {
            child.kill().unwrap();
            child.wait().unwrap();
            return None;
        }
        sleep(Duration::from_millis(20));
    };
    Some(Output {
        status,
        stdout: std::fs::read(out_path).unwrap(),
        stderr: std::fs::read(err_path).unwrap(),
    })
}
