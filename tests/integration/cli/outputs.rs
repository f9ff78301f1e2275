//! Output files: written whole or not at all, never over the trace, another
//! output or another user's file, and standard output only to themselves.

use super::*;

#[test]
fn a_failed_output_leaves_every_file_of_the_run_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let trace = root().join("traces/call_chain.lgt");
    let trace = trace.to_str().unwrap();
    fs::write(dir.path().join("c.out"), "an earlier run's profile\n").unwrap();
    // The JSON summary fails as it is written (the device is full), after
    // the callgrind file was written whole.
    let args = ["sim", "-q", trace, "-o", "c.out", "--json", "/dev/full"];
    let output = linegrind(dir.path(), &args);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).starts_with("linegrind: cannot write /dev/full: "),
        "{}",
        stderr(&output)
    );
    let kept = fs::read_to_string(dir.path().join("c.out")).unwrap();
    assert_eq!(kept, "an earlier run's profile\n");
    assert_eq!(
        fs::read_dir(dir.path()).unwrap().count(),
        1,
        "no temporary file"
    );
}

/// In a folder where only a file's owner may replace it (sticky, as
/// `/tmp`), another user's file is refused before the run, which writes
/// none of its outputs. It takes two users: the tests run as root (as in
/// CI), and `sim` as nobody.
#[test]
fn another_users_file_in_a_sticky_folder_is_refused_before_the_run() {
    use std::os::unix::fs::PermissionsExt;
    // SAFETY: geteuid takes nothing and cannot fail.
    if unsafe { libc::geteuid() } != 0 || which("setpriv").is_err() {
        skip!("needs root and setpriv, to run sim as another user");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o1777)).unwrap();
    fs::copy(
        root().join("traces/call_chain.lgt"),
        dir.path().join("t.lgt"),
    )
    .unwrap();
    fs::write(dir.path().join("root.json"), "root's\n").unwrap();
    let output = std::process::Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(env!("CARGO_BIN_EXE_linegrind"))
        .args(["sim", "t.lgt", "-o", "t.out", "--json", "root.json"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let message = stderr(&output);
    assert!(
        message.starts_with("linegrind: cannot write root.json: another user's file"),
        "{message}"
    );
    assert_eq!(stdout(&output), "", "refused before the run");
    assert_eq!(
        fs::read_to_string(dir.path().join("root.json")).unwrap(),
        "root's\n"
    );
    assert_eq!(
        fs::read_dir(dir.path()).unwrap().count(),
        2,
        "no other file"
    );
}

#[test]
fn an_unwritable_output_exits_1_and_leaves_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let trace = root().join("traces/call_chain.lgt");
    let target = dir.path().join("no/such/dir/out");
    let output = linegrind(
        dir.path(),
        &[
            "sim",
            trace.to_str().unwrap(),
            "-o",
            target.to_str().unwrap(),
        ],
    );
    assert_eq!(output.status.code(), Some(1));
    let message = stderr(&output);
    assert!(message.starts_with("linegrind: cannot write "), "{message}");
    // The folder is named, not the temporary file linegrind would make.
    assert!(message.contains("cannot create a file in "), "{message}");
    assert!(!message.contains(".linegrind-"), "{message}");
    // Checked before the simulation: no summary was printed.
    assert_eq!(stdout(&output), "");
    assert!(!target.exists());
}

#[test]
fn an_output_that_would_overwrite_the_trace_or_another_output_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("chain.lgt");
    fs::copy(root().join("traces/call_chain.lgt"), &trace).unwrap();
    let original = fs::read(&trace).unwrap();
    // `args` exit with 2, saying `expected`.
    let refused = |args: &[&str], expected: &str| {
        let output = linegrind(dir.path(), args);
        let message = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{message}");
        assert!(message.contains(expected), "{message}");
    };
    refused(
        &["sim", "chain.lgt", "-o", "./chain.lgt"],
        "is the trace chain.lgt",
    );
    assert_eq!(fs::read(&trace).unwrap(), original);

    refused(
        &["sim", "chain.lgt", "-o", "out", "--json", "out"],
        "out is named for two outputs",
    );
    assert!(!dir.path().join("out").exists());
    // Also through another path to a file not made yet.
    fs::create_dir(dir.path().join("sub")).unwrap();
    refused(
        &["sim", "chain.lgt", "-o", "out", "--json", "sub/../out"],
        "out is named for two outputs",
    );
    assert!(!dir.path().join("out").exists());
    // A device is not overwritten: outputs may share one.
    let args = ["sim", "chain.lgt", "-o", "/dev/null", "--json", "/dev/null"];
    let output = linegrind(dir.path(), &args);
    assert!(output.status.success(), "{}", stderr(&output));

    // An output that names a folder, in every command that writes one.
    refused(
        &["sim", "chain.lgt", "--json", "sub"],
        "cannot write sub: it names a folder",
    );
    refused(
        &["convert", "chain.lgt", "sub/"],
        "cannot write sub/: it names a folder",
    );
    refused(
        &["diff", "chain.lgt", "chain.lgt", "--out", "sub"],
        "cannot write sub: it names a folder",
    );
    assert_eq!(fs::read_dir(dir.path().join("sub")).unwrap().count(), 0);

    // The program a Lackey trace is read with is an input too.
    fs::copy(
        root().join("tests/importers/program.lackey"),
        dir.path().join("p.lackey"),
    )
    .unwrap();
    fs::write(dir.path().join("prog"), b"the program").unwrap();
    refused(
        &["sim", "p.lackey", "--binary", "prog:0", "-o", "prog"],
        "is the binary prog (--binary)",
    );
    assert_eq!(fs::read(dir.path().join("prog")).unwrap(), b"the program");

    // So is the list of hierarchies: `-o c` writes `c.a` for hierarchy `a`.
    fs::write(dir.path().join("c.a"), "a LL=1M,16,64\n").unwrap();
    refused(
        &["sim", "chain.lgt", "--config", "c.a", "-o", "c"],
        "the output c.a is the hierarchies' file c.a (--config)",
    );
    assert_eq!(
        fs::read_to_string(dir.path().join("c.a")).unwrap(),
        "a LL=1M,16,64\n"
    );
}

#[test]
fn convert_refuses_to_overwrite_the_trace_it_reads() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("chain.lgt");
    fs::copy(root().join("traces/call_chain.lgt"), &trace).unwrap();
    let original = fs::read(&trace).unwrap();
    let output = linegrind(dir.path(), &["convert", "chain.lgt", "./chain.lgt"]);
    assert_eq!(output.status.code(), Some(2));
    let message = stderr(&output);
    assert!(
        message.contains("the output ./chain.lgt is the trace chain.lgt"),
        "{message}"
    );
    assert_eq!(fs::read(&trace).unwrap(), original);
}

#[test]
fn a_dash_or_nothing_is_refused_as_an_output_name() {
    let dir = tempfile::tempdir().unwrap();
    let trace = root().join("traces/call_chain.lgt");
    let trace = trace.to_str().unwrap();
    for args in [
        &["sim", trace, "-o", "-"][..],
        &["sim", trace, "--json", "-"],
        &["convert", trace, "-"],
        &["record", "-o", "-", "--", "/bin/true"],
    ] {
        let output = linegrind(dir.path(), args);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert!(
            stderr(&output).contains("`-` is not standard output here"),
            "{}",
            stderr(&output)
        );
    }
    // An empty name is a usage error too, not a failed write.
    let output = linegrind(dir.path(), &["sim", trace, "-o", ""]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("an empty name"),
        "{}",
        stderr(&output)
    );
    assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);
}

/// Past the file size limit a write fails: linegrind says so and removes
/// its temporary file, rather than being killed by SIGXFSZ with the file
/// left behind.
#[test]
fn a_write_past_the_file_size_limit_is_an_error_that_leaves_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let script = format!(
        "ulimit -f 4 && exec '{}' sim -q '{}' -o h.cg",
        env!("CARGO_BIN_EXE_linegrind"),
        root().join("traces/hydro.lgt").display()
    );
    let output = std::process::Command::new("sh")
        .args(["-c", &script])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let message = stderr(&output);
    assert!(
        message.starts_with("linegrind: cannot write h.cg: File too large"),
        "{message}"
    );
    let left: Vec<_> = fs::read_dir(dir.path()).unwrap().collect();
    assert!(left.is_empty(), "{left:?}");
}

/// A profile or a difference written to standard output has it to itself:
/// the summary and the comparison go to standard error, whether standard
/// output is a pipe or a file it was redirected to (which an append of the
/// output and a write at its start would garble).
#[test]
fn an_output_sent_to_standard_output_has_it_to_itself() {
    use std::process::{Command, Stdio};
    let dir = tempfile::tempdir().unwrap();
    let trace = root().join("traces/call_chain.lgt");
    let trace = trace.to_str().unwrap();
    let output = linegrind(dir.path(), &["sim", trace, "-q", "-o", "plain.out"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let plain = fs::read(dir.path().join("plain.out")).unwrap();
    let run = |args: &[&str], redirected: bool| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_linegrind"));
        command.current_dir(dir.path()).args(args);
        let file = dir.path().join("redirected");
        if redirected {
            command.stdout(fs::File::create(&file).unwrap());
        } else {
            command.stdout(Stdio::piped());
        }
        let output = command.output().unwrap();
        assert!(output.status.success(), "{}", stderr(&output));
        let written = match redirected {
            true => fs::read(&file).unwrap(),
            false => output.stdout.clone(),
        };
        (written, stderr(&output))
    };
    // Named by its own name, the file standard output was redirected to,
    // which the output replaces.
    let (written, told) = run(&["sim", trace, "-o", "redirected"], true);
    assert!(written == plain, "the profile differs");
    assert!(told.ends_with("wrote redirected\n"), "{told}");
    for redirected in [false, true] {
        let (written, told) = run(&["sim", trace, "-o", "/dev/stdout"], redirected);
        assert!(written == plain, "the profile on standard output differs");
        assert!(
            told.contains("call arcs") && told.ends_with("wrote /dev/stdout\n"),
            "{told}"
        );
        let args = ["diff", "plain.out", "plain.out", "--out", "/dev/stdout"];
        let (written, told) = run(&args, redirected);
        assert!(written.starts_with(b"# callgrind format\n"));
        assert!(told.starts_with("A: plain.out\n"), "{told}");
    }
}
