//! Several hierarchies from one decoding: each output must be exactly the
//! file a run of that hierarchy alone writes.

use crate::support::{linegrind, root};

fn trace() -> String {
    root()
        .join("traces/pointer_chase.lgt")
        .display()
        .to_string()
}

#[test]
fn a_sweep_writes_what_separate_runs_write() {
    let dir = tempfile::tempdir().unwrap();
    let output = linegrind(
        dir.path(),
        &[
            "sim",
            &trace(),
            "--sweep",
            "LL=512K..2M",
            "-o",
            "sweep.out",
            "--json",
            "sweep.json",
        ],
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains("3 hierarchies"), "{stdout}");
    for (name, size) in [("512K", "524288"), ("1M", "1048576"), ("2M", "2097152")] {
        assert!(
            stdout
                .lines()
                .any(|line| line.starts_with(&format!("LL={name} "))),
            "{stdout}"
        );
        let alone = linegrind(
            dir.path(),
            &[
                "sim",
                &trace(),
                "--quiet",
                &format!("--LL={size},16,64"),
                "-o",
                "alone.out",
                "--json",
                "alone.json",
            ],
        );
        assert!(alone.status.success());
        let read = |file: &str| std::fs::read(dir.path().join(file)).unwrap();
        assert!(
            read(&format!("sweep.LL={name}.out")) == read("alone.out"),
            "LL={name}"
        );
        assert!(
            read(&format!("sweep.LL={name}.json")) == read("alone.json"),
            "LL={name}"
        );
    }
}

/// A sweep of one size is still a sweep: its output is named after its
/// hierarchy, and the summary is the table of hierarchies.
#[test]
fn a_sweep_of_one_size_summarises_its_hierarchy_in_the_table() {
    let dir = tempfile::tempdir().unwrap();
    let args = ["sim", &trace(), "--sweep", "LL=1M..1M", "-o", "one.out"];
    let output = linegrind(dir.path(), &args);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}");
    assert!(stdout.contains("data accesses, 1 hierarchy:"), "{stdout}");
    assert!(
        stdout.lines().any(|line| line.starts_with("LL=1M ")),
        "{stdout}"
    );
    assert!(dir.path().join("one.LL=1M.out").exists());
}

#[test]
fn a_configuration_file_names_its_hierarchies() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("caches.conf"),
        "# name   levels\nsmall D1=16K,4,64 LL=1M,16,64\ndefault\n",
    )
    .unwrap();
    let output = linegrind(
        dir.path(),
        &["sim", &trace(), "--config", "caches.conf", "-o", "c.out"],
    );
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let small = std::fs::read_to_string(dir.path().join("c.small.out")).unwrap();
    assert!(
        small.contains("desc: D1 cache: 16384 B, 64 B, 4-way associative"),
        "{small}"
    );
    let default = std::fs::read_to_string(dir.path().join("c.default.out")).unwrap();
    assert!(default.contains("desc: D1 cache: 32768 B, 64 B, 8-way associative"));

    std::fs::write(dir.path().join("bad.conf"), "small\nbig LL=3M,16,64\n").unwrap();
    let output = linegrind(dir.path(), &["sim", &trace(), "--config", "bad.conf"]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("bad.conf: line 2:"), "{stderr}");
    // Levels each well formed, the hierarchy they make refused.
    std::fs::write(dir.path().join("bad.conf"), "small\n\nodd LL=1M,16,32\n").unwrap();
    let output = linegrind(dir.path(), &["sim", &trace(), "--config", "bad.conf"]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.starts_with("linegrind: bad.conf: line 3: hierarchy `odd`: with --cacheuse=yes"),
        "{stderr}"
    );
    // A level from the command line may be the one at fault.
    std::fs::write(dir.path().join("bad.conf"), "plain\n").unwrap();
    let args = ["sim", &trace(), "--config", "bad.conf", "--LL=1M,16,128"];
    let output = linegrind(dir.path(), &args);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.starts_with("linegrind: bad.conf: line 1: hierarchy `plain`: with --cacheuse=yes")
            && stderr.contains("(--I1, --D1, --LL from the command line or its defaults)"),
        "{stderr}"
    );
    // A hierarchy that gives every level is at fault by itself.
    let odd = "odd I1=32K,8,64 D1=32K,8,64 LL=1M,16,128\n";
    std::fs::write(dir.path().join("bad.conf"), odd).unwrap();
    let output = linegrind(dir.path(), &["sim", &trace(), "--config", "bad.conf"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("(got 64, 64 and 128)") && !stderr.contains("command line"),
        "{stderr}"
    );
    // A sweep keeps the levels it does not sweep.
    let args = ["sim", &trace(), "--sweep", "D1=16K..32K", "--LL=1M,16,128"];
    let output = linegrind(dir.path(), &args);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.starts_with("linegrind: --sweep D1=16K..32K: D1=16K: ")
            && stderr.ends_with(" (--I1, --LL from the command line or its defaults)\n"),
        "{stderr}"
    );
    let output = linegrind(
        dir.path(),
        &[
            "sim",
            &trace(),
            "--sweep",
            "LL=1M..2M",
            "--profile",
            "p.json",
        ],
    );
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.starts_with("linegrind: --profile writes one Firefox profile")
            && stderr.contains("not --sweep"),
        "{stderr}"
    );
}

/// Hierarchies named by `--sweep` or `--config`, even a list of one, need
/// a file name to name their outputs after.
#[test]
fn named_hierarchies_need_a_file_name_to_name_their_outputs_after() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("od")).unwrap();
    let trace = trace();
    let open = "a device, a pipe or a file";
    for (option, base, what, sweep) in [
        ("-o", "od", "a folder", "LL=1M..2M"),
        ("-o", "new/", "a folder", "LL=1M..2M"),
        ("-o", "/dev/null", open, "LL=1M..2M"),
        ("--json", "/dev/stdout", open, "LL=1M..2M"),
        ("--json", "od", "a folder", "LL=1M..2M"),
        ("-o", "od", "a folder", "LL=1M..1M"),
        ("-o", "/dev/null", open, "LL=1M..1M"),
    ] {
        let args = ["sim", "-q", "--sweep", sweep, &trace, option, base];
        let output = linegrind(dir.path(), &args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{base}: {stderr}");
        assert!(
            stderr.contains(&format!("{option} {base} is {what}")),
            "{stderr}"
        );
    }
    assert_eq!(std::fs::read_dir(dir.path().join("od")).unwrap().count(), 0);
    // A name that does not exist is no device: its outputs fail as a run
    // of one's output does.
    for sweep in [None, Some("LL=1M..2M")] {
        let mut args = vec!["sim", "-q", &trace, "-o", "/proc/linegrind-none"];
        args.extend(sweep.iter().flat_map(|sweep| ["--sweep", sweep]));
        let output = linegrind(dir.path(), &args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{stderr}");
        assert!(stderr.contains("No such file or directory"), "{stderr}");
    }
}

/// KCachegrind, given one file, loads every file whose name starts with
/// that one's as parts of the same run and adds them up: no output of a
/// sweep or a configuration file may start with the name of another, or
/// with the name a run alone writes beside them.
#[test]
fn no_output_name_starts_another() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("caches.conf"),
        "big LL=1M,16,64\nbig-ll LL=2M,16,64\nb\n",
    )
    .unwrap();
    let trace = trace();
    let hierarchies: [&[&str]; 3] = [&[], &["--sweep", "LL=1M..4M"], &["--config", "caches.conf"]];
    for hierarchies in hierarchies {
        let mut args = vec!["sim", "-q", &trace, "--json", "s.json"];
        args.extend(hierarchies);
        let output = linegrind(dir.path(), &args);
        assert!(output.status.success(), "{output:?}");
    }
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .filter(|name| name != "caches.conf")
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "callgrind.out.LL=1M.pointer_chase",
            "callgrind.out.LL=2M.pointer_chase",
            "callgrind.out.LL=4M.pointer_chase",
            "callgrind.out.b.pointer_chase",
            "callgrind.out.big-ll.pointer_chase",
            "callgrind.out.big.pointer_chase",
            "callgrind.out.pointer_chase",
            "s.LL=1M.json",
            "s.LL=2M.json",
            "s.LL=4M.json",
            "s.b.json",
            "s.big-ll.json",
            "s.big.json",
            "s.json",
        ]
    );
    for name in &names {
        let started = names.iter().filter(|other| other.starts_with(&**name));
        assert_eq!(started.count(), 1, "{name} starts another output's name");
    }
}

#[test]
fn a_geometry_given_twice_is_the_last_as_in_callgrind() {
    let dir = tempfile::tempdir().unwrap();
    let run = |extra: &[&str]| {
        let mut args = vec!["sim", "-q", "-o", "out"];
        let trace = trace();
        args.push(&trace);
        args.extend(extra);
        let output = linegrind(dir.path(), &args);
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        std::fs::read(dir.path().join("out")).unwrap()
    };
    let twice = run(&["--LL=1M,16,64", "--LL=2M,8,64"]);
    assert_eq!(twice, run(&["--LL=2M,8,64"]));
    assert_ne!(twice, run(&["--LL=1M,16,64"]));
}
