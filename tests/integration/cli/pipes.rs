//! Pipes: traces read from one, objects and binaries that are one left
//! unopened, and closed pipes on either output.

use super::*;

/// `trace` fed to `linegrind sim /dev/stdin` through a pipe.
fn sim_from_pipe(dir: &std::path::Path, trace: &str) -> std::process::Output {
    from_pipe(dir, &["sim", "/dev/stdin", "-q", "-o", "piped.out"], trace)
}

/// `trace` fed through a pipe to linegrind run with `args`.
fn from_pipe(dir: &std::path::Path, args: &[&str], trace: &str) -> std::process::Output {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_linegrind"))
        .current_dir(dir)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let bytes = fs::read(root().join(trace)).unwrap();
    let mut stdin = child.stdin.take().unwrap();
    // The reader may stop early (a binary trace); a closed pipe is fine.
    let _ = stdin.write_all(&bytes);
    drop(stdin);
    child.wait_with_output().unwrap()
}

#[test]
fn a_text_trace_can_come_from_a_pipe_and_a_binary_one_says_it_cannot() {
    let dir = tempfile::tempdir().unwrap();
    let output = sim_from_pipe(dir.path(), "traces/stream_hot_table.lgt");
    assert!(output.status.success(), "{}", stderr(&output));
    let direct = linegrind(
        dir.path(),
        &[
            "sim",
            "-q",
            "-o",
            "direct.out",
            root().join("traces/stream_hot_table.lgt").to_str().unwrap(),
        ],
    );
    assert!(direct.status.success());
    let body = |name: &str| without_source(&fs::read_to_string(dir.path().join(name)).unwrap());
    assert_eq!(body("piped.out"), body("direct.out"));
    // `info` has no size to tell for a pipe.
    let output = from_pipe(
        dir.path(),
        &["info", "/dev/stdin"],
        "traces/stream_hot_table.lgt",
    );
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stdout(&output).contains("size:           unknown (not a file)\n"),
        "{}",
        stdout(&output)
    );

    let output = sim_from_pipe(dir.path(), "traces/hydro.lgt");
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("give a file, not a pipe"),
        "{}",
        stderr(&output)
    );
}

/// A pipe may give a trace's first line in pieces: the format is told
/// from whole lines.
#[test]
fn a_trace_whose_first_line_comes_in_pieces_is_told_by_the_whole_line() {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_linegrind"))
        .current_dir(dir.path())
        .args(["info", "/dev/stdin"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"2").unwrap();
    stdin.flush().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    stdin.write_all(b" 400000\n0 10000\n").unwrap();
    drop(stdin);
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stdout(&output).contains("format:         Dinero din"),
        "{}",
        stdout(&output)
    );
}

/// A pipe given as an object would block its reader until something wrote
/// to it: it is skipped with a warning, and as `--binary` refused.
#[test]
fn an_object_or_binary_that_is_a_pipe_is_not_opened() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let trace = format!(
        "linegrind-trace text 1\nobject {} bias=0 start=1000 end=2000\ni 1000 4\n",
        fifo.display()
    );
    fs::write(dir.path().join("t.txt"), trace).unwrap();
    let output = linegrind(dir.path(), &["sim", "t.txt"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("not a regular file (a pipe or a device)"),
        "{}",
        stderr(&output)
    );

    fs::copy(
        root().join("tests/importers/program.lackey"),
        dir.path().join("p.lackey"),
    )
    .unwrap();
    let binary = format!("{}:0", fifo.display());
    let output = linegrind(dir.path(), &["sim", "p.lackey", "--binary", &binary]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("not a regular file"),
        "{}",
        stderr(&output)
    );
}

/// The write end of a pipe whose reader is gone.
fn closed_pipe() -> fs::File {
    use std::os::fd::FromRawFd;
    let mut ends = [0; 2];
    // SAFETY: `pipe` fills `ends` with two new descriptors, each owned
    // once: the read end closed at once, the write end by a `File`.
    unsafe {
        assert_eq!(libc::pipe(ends.as_mut_ptr()), 0);
        libc::close(ends[0]);
        fs::File::from_raw_fd(ends[1])
    }
}

/// `linegrind ARGS` with standard output a pipe whose reader is gone.
fn into_closed_pipe(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_linegrind"))
        .current_dir(root())
        .args(args)
        .stdout(closed_pipe())
        .output()
        .unwrap()
}

/// Standard error whose reader is gone: a warning, or an error message,
/// that cannot be said changes no exit code (and panics nowhere).
#[test]
fn a_closed_pipe_on_standard_error_leaves_the_exit_code_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    // A last line without its newline: a warning.
    fs::write(dir.path().join("t.txt"), "linegrind-trace text 1\ni 1000 4").unwrap();
    fs::write(
        dir.path().join("bad.txt"),
        "linegrind-trace text 1\nr 1000 4\n",
    )
    .unwrap();
    let run = |trace: &str| {
        std::process::Command::new(env!("CARGO_BIN_EXE_linegrind"))
            .current_dir(dir.path())
            .args(["sim", trace, "-o", "/dev/null"])
            .stdout(std::process::Stdio::null())
            .stderr(closed_pipe())
            .status()
            .unwrap()
            .code()
    };
    assert_eq!(run("t.txt"), Some(0));
    assert_eq!(run("bad.txt"), Some(2));
}

#[test]
fn a_closed_pipe_ends_a_report_quietly_but_fails_an_output_file_written_into_it() {
    let output = into_closed_pipe(&["info", "traces/hydro.lgt"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(stderr(&output), "");
    let args = ["convert", "traces/hydro.lgt", "/dev/stdout", "--to", "text"];
    let output = into_closed_pipe(&args);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).contains("cannot write /dev/stdout: Broken pipe"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn a_closed_pipe_keeps_the_verdict_of_a_check() {
    let dir = tempfile::tempdir().unwrap();
    let trace = root().join("traces/hydro.lgt");
    let trace = trace.to_str().unwrap();
    let base = dir.path().join("base.json");
    let small = dir.path().join("small.json");
    for (json, d1) in [(&base, "32768,8,64"), (&small, "1024,2,64")] {
        let args = ["sim", trace, "-q", "-o", "/dev/null", "--D1", d1, "--json"];
        let output = linegrind(dir.path(), &[&args[..], &[json.to_str().unwrap()]].concat());
        assert!(output.status.success(), "{}", stderr(&output));
    }
    let check = |current: &std::path::Path| {
        let args = ["check", "--baseline", base.to_str().unwrap()];
        let current = current.to_str().unwrap();
        into_closed_pipe(&[&args[..], &[current, "--limit", "D1mr=+1%"]].concat())
    };
    let output = check(&small);
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    assert_eq!(stderr(&output), "");
    assert_eq!(check(&base).status.code(), Some(0));
}
