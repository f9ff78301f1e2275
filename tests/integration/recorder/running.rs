//! How `record` runs: the tool set up, the program's environment, signals
//! and descriptors handed on, what an interrupt, a kill or an unwritable
//! output leaves, and what it refuses before running anything.

use super::*;

/// A trace that cannot be written (`/dev/full`): `record` fails, saying
/// why, but the program runs to its end, as the recorder's stream is read
/// on and dropped rather than closed under it (a SIGPIPE would end it).
#[test]
fn a_trace_that_cannot_be_written_leaves_the_program_running_to_its_end() {
    let dir = tempfile::tempdir().unwrap();
    let Some(program) = compile("scattered.c", dir.path()) else {
        return;
    };
    let output = linegrind(
        dir.path(),
        &[
            "record",
            "-q",
            "-o",
            "/dev/full",
            "--",
            program.to_str().unwrap(),
        ],
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("cannot write /dev/full: No space left on device"),
        "{stderr}"
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.starts_with("finished "), "{stdout}{stderr}");
}

#[test]
fn without_valgrind_record_says_how_to_get_it() {
    let dir = tempfile::tempdir().unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_linegrind"))
        .current_dir(dir.path())
        .env("PATH", dir.path())
        .args(["record", "--", "/bin/true"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("install Valgrind") || stderr.contains("install it"),
        "{stderr}"
    );
}

/// A home folder the tool's folder cannot be made in (here a file, as a
/// missing or read-only home is for a user who is not root) leaves the
/// temporary folder, as no home folder does.
#[test]
fn the_tool_is_set_up_in_the_temporary_folder_when_home_cannot_hold_it() {
    if recorder_tool().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::write(&home, b"not a folder").unwrap();
    let printed = Command::new(env!("CARGO_BIN_EXE_linegrind"))
        .env("HOME", &home)
        .env_remove("XDG_CACHE_HOME")
        .env("TMPDIR", dir.path())
        .args(["record", "--print-valgrind-lib"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&printed.stderr);
    assert_eq!(printed.status.code(), Some(0), "{stderr}");
    let folder = PathBuf::from(String::from_utf8(printed.stdout).unwrap().trim_end());
    // SAFETY: geteuid cannot fail and touches no memory.
    let user = unsafe { libc::geteuid() };
    assert_eq!(
        folder.parent(),
        Some(&*dir.path().join(format!("linegrind-{user}")))
    );
    assert!(folder.join("linegrind-amd64-linux").is_file());
}

#[test]
fn callgrind_run_with_the_printed_valgrind_lib_starts_like_a_recording() {
    let dir = tempfile::tempdir().unwrap();
    let Some(program) = compile("stack_address.c", dir.path()) else {
        return;
    };
    let linegrind_path = env!("CARGO_BIN_EXE_linegrind");
    let printed = linegrind(dir.path(), &["record", "--print-valgrind-lib"]);
    assert_eq!(printed.status.code(), Some(0));
    let folder = String::from_utf8(printed.stdout).unwrap();
    let folder = folder.strip_suffix('\n').unwrap();
    assert!(
        Path::new(folder).join("linegrind-amd64-linux").exists(),
        "{folder}"
    );
    // As a shell runs either command: `_` is the command's path.
    let recorded = Command::new(linegrind_path)
        .current_dir(dir.path())
        .env("_", linegrind_path)
        .args(["record", "-q", "-o", "t.lgt", "--"])
        .arg(&program)
        .output()
        .unwrap();
    let callgrind = Command::new("valgrind")
        .current_dir(dir.path())
        .env("_", linegrind_path)
        .env("VALGRIND_LIB", folder)
        .args(["-q", "--tool=callgrind", "--callgrind-out-file=/dev/null"])
        .arg(&program)
        .output()
        .unwrap();
    assert!(recorded.status.success() && callgrind.status.success());
    assert_eq!(
        String::from_utf8_lossy(&recorded.stdout),
        String::from_utf8_lossy(&callgrind.stdout),
        "the program's stack"
    );
}

/// The program's environment comes in the order linegrind was given it,
/// with `VALGRIND_LIB` set as `env` sets it, so that a Callgrind run the
/// README's way (`env VALGRIND_LIB=... valgrind ...`) gives the program
/// the same one: where its variables lie is what `getenv` costs. Debian's
/// `valgrind` is a `dash` script, which passes on the variables by their
/// hash, and those of one hash in the reverse of their order: two names
/// with the same first letter and the same letters, given unsorted, come
/// out in the other order when a command passes them sorted by name (as a
/// command given any variable does).
#[test]
fn a_recording_keeps_the_order_of_the_environment_as_env_does() {
    let Some(folder) = recorder_tool() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    // What finds the programs and the tool's folder, and the two names.
    let mut given: Vec<std::ffi::OsString> = vec!["-i".into()];
    for name in ["PATH", "HOME", "XDG_CACHE_HOME"] {
        if let Some(value) = std::env::var_os(name) {
            given.push(setting(name, &value));
        }
    }
    given.extend(["LG_ORDER_YX=1".into(), "LG_ORDER_XY=2".into()]);
    let recorded = Command::new("env")
        .current_dir(dir.path())
        .args(&given)
        .arg(env!("CARGO_BIN_EXE_linegrind"))
        .args(["record", "-q", "-o", "t.lgt", "--", "env"])
        .output()
        .unwrap();
    let callgrind = Command::new("env")
        .current_dir(dir.path())
        .args(&given)
        .arg(setting("VALGRIND_LIB", folder.as_os_str()))
        .args([
            "valgrind",
            "-q",
            "--tool=callgrind",
            "--callgrind-out-file=/dev/null",
        ])
        .arg("env")
        .output()
        .unwrap();
    assert!(recorded.status.success() && callgrind.status.success());
    let seen = String::from_utf8_lossy(&recorded.stdout);
    assert!(seen.contains("LG_ORDER_YX=1") && seen.contains("LG_ORDER_XY=2"));
    assert_eq!(seen, String::from_utf8_lossy(&callgrind.stdout));
}

/// `linegrind record -q -o t.lgt -- sh -c SCRIPT` in `dir`, to run.
fn shell_recording(dir: &Path, script: &str) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_linegrind"));
    command
        .current_dir(dir)
        .args(["record", "-q", "-o", "t.lgt", "--", "/bin/sh", "-c", script]);
    command
}

/// `linegrind record -o t.lgt -- sh -c SCRIPT` in `dir`, with its
/// temporary files in `tmp`, in a process group of its own, so that a
/// signal the script sends to its group spares the test; `None` where
/// Valgrind is missing. SIGINT takes its default action in linegrind, as
/// from a terminal, even where the tests run in the background of a
/// script, which ignores it and would have linegrind and the program
/// ignore it too.
fn record_shell(dir: &Path, tmp: &Path, script: &str) -> Option<std::process::Output> {
    use std::os::unix::process::CommandExt;
    recorder_tool()?;
    let mut command = shell_recording(dir, script);
    command.env("TMPDIR", tmp).process_group(0);
    // SAFETY: between fork and exec, `signal` is async-signal-safe and
    // touches nothing of the parent's.
    unsafe {
        command.pre_exec(|| {
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            libc::signal(libc::SIGQUIT, libc::SIG_DFL);
            // A program that SIGQUIT ends leaves no core (nor Valgrind's).
            let none = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            libc::setrlimit(libc::RLIMIT_CORE, &none);
            Ok(())
        });
    }
    Some(command.output().unwrap())
}

/// Files in `dir`, by name.
fn files_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// A report `record` cannot write (standard error full) leaves the
/// program's exit code, and the trace is kept.
#[test]
fn a_report_that_cannot_be_written_leaves_the_programs_exit_code() {
    if recorder_tool().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let status = Command::new(env!("CARGO_BIN_EXE_linegrind"))
        .current_dir(dir.path())
        .args(["record", "-o", "t.lgt", "--", "/bin/sh", "-c", "exit 7"])
        .stderr(std::fs::File::create("/dev/full").unwrap())
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(7));
    assert!(events(&dir.path().join("t.lgt")).len() > 1000);
}

#[test]
fn ctrl_c_stops_the_program_and_the_trace_of_what_ran_is_kept() {
    use std::os::unix::process::ExitStatusExt;
    // SIGINT to the whole group, as a terminal's Ctrl-C sends it, and
    // SIGQUIT, as Ctrl-\ does.
    for (signal, name) in [(libc::SIGINT, "INT"), (libc::SIGQUIT, "QUIT")] {
        let (dir, tmp) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let script = format!("kill -{name} 0; sleep 10");
        let Some(output) = record_shell(dir.path(), tmp.path(), &script) else {
            return;
        };
        assert_eq!(
            output.status.signal(),
            None,
            "linegrind itself was not interrupted by SIG{name}"
        );
        assert_eq!(output.status.code(), Some(128 + signal));
        assert_eq!(files_in(dir.path()), ["t.lgt"]);
        assert_eq!(files_in(tmp.path()), Vec::<String>::new());
        assert!(events(&dir.path().join("t.lgt")).len() > 1000);
    }
}

/// SIGTERM, or any other signal that ends a process (SIGUSR1, SIGALRM),
/// sent to linegrind alone.
#[test]
fn a_terminated_recording_leaves_no_file() {
    use std::os::unix::process::ExitStatusExt;
    for (signal, name) in [
        (libc::SIGTERM, "TERM"),
        (libc::SIGUSR1, "USR1"),
        (libc::SIGALRM, "ALRM"),
    ] {
        let (dir, tmp) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        // Under Valgrind the shell's parent is linegrind itself, which
        // passes the signal on to the program: the shell does not live to
        // leave a file.
        let script = format!("kill -{name} $PPID; sleep 2; touch survived");
        let Some(output) = record_shell(dir.path(), tmp.path(), &script) else {
            return;
        };
        // (Output is collected until every process holding linegrind's
        // standard output has ended: the shell, if it survived, has
        // touched its file by now.)
        assert_eq!(output.status.signal(), Some(signal), "SIG{name}");
        assert_eq!(files_in(dir.path()), Vec::<String>::new(), "SIG{name}");
        // Nor the scratch folder of the FIFO the tool writes into.
        assert_eq!(files_in(tmp.path()), Vec::<String>::new(), "SIG{name}");
    }
}

/// `record` itself killed outright (`kill -9`): its program is ended with
/// it (SIGTERM), not left to run on unwatched; only the temporary trace,
/// which nothing could remove, is left.
#[test]
fn the_program_ends_with_a_record_killed_outright() {
    use std::os::unix::process::ExitStatusExt;
    let (dir, tmp) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let script = "kill -KILL $PPID; sleep 2; touch survived";
    let Some(output) = record_shell(dir.path(), tmp.path(), script) else {
        return;
    };
    assert_eq!(output.status.signal(), Some(libc::SIGKILL));
    let left = files_in(dir.path());
    assert!(
        left.len() == 1 && left[0].starts_with(".linegrind-"),
        "{left:?}"
    );
}

/// Valgrind's process killed outright (`kill -9`, as the OOM killer does)
/// by another process, here a child of the program's shell: `record`
/// exits as the kill ended it, and keeps the trace of what the tool had
/// written, without an exit code, whether the kill came inside one of
/// the tool's writes or between two.
#[test]
fn a_recording_killed_outright_keeps_what_was_written() {
    let (dir, tmp) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let script = "(sleep 2; kill -KILL $$) & while :; do :; done";
    let Some(output) = record_shell(dir.path(), tmp.path(), script) else {
        return;
    };
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(128 + libc::SIGKILL), "{stderr}");
    assert_eq!(files_in(dir.path()), ["t.lgt"]);
    let info = linegrind(dir.path(), &["info", "t.lgt"]);
    let info = String::from_utf8_lossy(&info.stdout);
    assert!(info.contains("exit code:      none"), "{info}");
    sim_succeeds(dir.path(), "t.lgt");
}

/// What Rust's runtime changes in linegrind before `main` reaches the
/// program as the caller set it: SIGPIPE and SIGXFSZ ignored, standard
/// output closed.
#[test]
fn the_program_inherits_ignored_signals_and_closed_descriptors() {
    use std::os::unix::process::CommandExt;
    if recorder_tool().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // Ignored signals stay ignored in a shell, which then goes on to its
    // exit; its `[` is its own, and asks about its own descriptor.
    let script = "kill -PIPE $$; kill -XFSZ $$; if [ -e /proc/self/fd/1 ]; then exit 4; fi; exit 5";
    let mut command = shell_recording(dir.path(), script);
    // SAFETY: between fork and exec, `signal` and `close` are
    // async-signal-safe and touch nothing of the parent's.
    unsafe {
        command.pre_exec(|| {
            libc::signal(libc::SIGPIPE, libc::SIG_IGN);
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            libc::close(1);
            Ok(())
        });
    }
    let output = command.output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(5), "{stderr}");
}

/// `--trace-children=yes` in `VALGRIND_OPTS` (or a `.valgrindrc`) would
/// have what the program starts write a second stream into the tool's
/// FIFO: `record` runs Valgrind without it.
#[test]
fn children_run_unrecorded_whatever_valgrind_opts_says() {
    if recorder_tool().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let output = shell_recording(dir.path(), "/bin/true; exit 6")
        .env("VALGRIND_OPTS", "--trace-children=yes")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(6), "{stderr}");
    sim_succeeds(dir.path(), "t.lgt");
}

/// The tool's reader gone mid-run (a FIFO closed after its first bytes,
/// as when `record` is killed): recording stops, and the program runs to
/// its end, the SIGPIPE the tool's write raised taken back, since the
/// program wrote to no pipe.
#[test]
fn the_tool_whose_reader_is_gone_leaves_the_program_running_to_its_end() {
    use std::io::Read;
    use std::process::Stdio;

    let Some(lib) = recorder_tool() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let Some(program) = compile("scattered.c", dir.path()) else {
        return;
    };
    let fifo = dir.path().join("fifo");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let tool = Command::new("valgrind")
        .env("VALGRIND_LIB", &lib)
        .args(["--tool=linegrind", "-q"])
        .arg(format!("--lg-out={}", fifo.display()))
        .arg(&program)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut start = [0; 1000];
    std::fs::File::open(&fifo)
        .unwrap()
        .read_exact(&mut start)
        .unwrap();
    let output = tool.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("has ended; recording stops"), "{stderr}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.starts_with("finished "), "{stdout}");
}

#[test]
fn the_tool_without_a_writable_output_stops_before_the_program_runs() {
    let Some(lib) = recorder_tool() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no/such/folder/raw");
    let out = format!("--lg-out={}", missing.display());
    for options in [vec![], vec![out.as_str()]] {
        let output = Command::new("valgrind")
            .env("VALGRIND_LIB", &lib)
            .current_dir(dir.path())
            .args(["--tool=linegrind", "-q"])
            .args(&options)
            .args(["--", "/bin/sh", "-c", "touch ran"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{options:?}: {stderr}");
        assert!(
            stderr.contains("--lg-out") || stderr.contains("cannot open"),
            "{stderr}"
        );
        assert!(
            !dir.path().join("ran").exists(),
            "{options:?}: the program ran"
        );
    }
    // A file that does not exist yet is made.
    let raw = dir.path().join("raw");
    let output = Command::new("valgrind")
        .env("VALGRIND_LIB", &lib)
        .args(["--tool=linegrind", "-q"])
        .arg(format!("--lg-out={}", raw.display()))
        .arg("/bin/true")
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    assert!(std::fs::read(&raw).unwrap().starts_with(b"LGR1"));
}

/// A program for another machine is refused before Valgrind starts, with
/// what it is: here the headers of such programs (Valgrind would only say
/// that it failed to start its tool). A script
/// is left to Valgrind, which runs its interpreter.
#[test]
fn record_refuses_a_program_for_another_machine() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    for (class, machine, what) in [
        (1, 3, "a 32-bit x86 program"),
        (2, 183, "an AArch64 program"),
        (1, 62, "an x32 program (32-bit pointers)"),
        (2, 21, "a 64-bit ELF program for machine 21"),
    ] {
        let mut header = vec![0x7f, b'E', b'L', b'F', class, 1, 1];
        header.resize(18, 0);
        header.extend(u16::to_le_bytes(machine));
        header.resize(64, 0);
        let program = dir.path().join("prog");
        std::fs::write(&program, header).unwrap();
        std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
        let output = linegrind(dir.path(), &["record", "-q", "--", "./prog"]);
        assert_eq!(output.status.code(), Some(2));
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains(&format!(
                "./prog is {what}: linegrind records x86-64 programs only"
            )),
            "{stderr}"
        );
        assert!(!dir.path().join("prog.lgt").exists());
    }
}

#[test]
fn record_refuses_an_output_over_its_program_or_a_folder_before_running_it() {
    let dir = tempfile::tempdir().unwrap();
    let program = dir.path().join("prog");
    std::fs::copy("/bin/true", &program).unwrap();
    let output = linegrind(dir.path(), &["record", "-q", "-o", "prog", "--", "./prog"]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("the trace prog would replace the program it records"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read(&program).unwrap(),
        std::fs::read("/bin/true").unwrap()
    );

    std::fs::create_dir(dir.path().join("folder")).unwrap();
    let args = [
        "record",
        "-q",
        "-o",
        "folder",
        "--",
        "/bin/sh",
        "-c",
        "touch ran",
    ];
    let output = linegrind(dir.path(), &args);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("cannot write folder: it names a folder"),
        "{stderr}"
    );
    assert!(!dir.path().join("ran").exists(), "the program ran");

    // Where the program's output goes (here pipes to this test), the
    // trace would mix with it; the null device takes anything.
    for (output, stream) in [("/dev/stdout", "output"), ("/dev/stderr", "error")] {
        let args = [
            "record",
            "-q",
            "-o",
            output,
            "--",
            "/bin/sh",
            "-c",
            "touch ran",
        ];
        let run = linegrind(dir.path(), &args);
        assert_eq!(run.status.code(), Some(2));
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert!(
            stderr.contains(&format!(
                "the trace {output} is where the program's standard {stream} goes"
            )),
            "{stderr}"
        );
        assert!(!dir.path().join("ran").exists(), "the program ran");
    }
    // Where standard output is the null device, a trace there is refused
    // nothing.
    if recorder_tool().is_none() {
        return;
    }
    let run = Command::new(env!("CARGO_BIN_EXE_linegrind"))
        .current_dir(dir.path())
        .args([
            "record",
            "-q",
            "-o",
            "/dev/stdout",
            "--",
            "/bin/sh",
            "-c",
            "touch ran",
        ])
        .stdout(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(run.status.success(), "{run:?}");
    assert!(dir.path().join("ran").exists(), "the program did not run");
}
