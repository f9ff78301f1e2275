//! The Firefox Profiler output: bytes per loading stack, marks as markers,
//! and samples that keep to their thread's instructions and add up.

use super::*;

/// The function names of sample `index`'s stack in a processed profile's
/// thread, outermost first.
fn sample_stack(thread: &serde_json::Value, index: usize) -> Vec<String> {
    let strings = thread["stringArray"].as_array().unwrap();
    let stacks = &thread["stackTable"];
    let mut stack = thread["samples"]["stack"][index].as_u64();
    let mut names = Vec::new();
    while let Some(at) = stack {
        let frame = stacks["frame"][at as usize].as_u64().unwrap() as usize;
        let func = thread["frameTable"]["func"][frame].as_u64().unwrap() as usize;
        let name = thread["funcTable"]["name"][func].as_u64().unwrap() as usize;
        names.push(strings[name].as_str().unwrap().to_string());
        stack = stacks["prefix"][at as usize].as_u64();
    }
    names.reverse();
    names
}

/// `sim`'s Firefox profile of `trace`, run in `dir` with `options`.
fn firefox_profile(dir: &Path, trace: &str, options: &[&str]) -> serde_json::Value {
    let json = dir.join("profile.json");
    let args = [
        &["sim", "-q", trace, "--profile", json.to_str().unwrap()][..],
        options,
    ]
    .concat();
    let output = linegrind(dir, &args);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let text = fs::read_to_string(&json).unwrap();
    // The time range linegrind adds to what the profiler crate writes,
    // once: a JSON reader would take either of two.
    for key in ["\"profilingStartTime\"", "\"profilingEndTime\""] {
        assert_eq!(text.matches(key).count(), 1, "{key}");
    }
    serde_json::from_str(&text).unwrap()
}

#[test]
fn the_firefox_profile_has_bytes_per_loading_stack_and_the_marks() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.lgt");
    fs::write(
        &trace,
        "linegrind-trace text 1
fn 1000 1100 main
fn 1100 1200 load
i 1000 4
mark begin phase
i 1004 5
call 1100
i 1100 4
r 8000 8
ret
i 1009 4
mark end phase
",
    )
    .unwrap();
    let profile = firefox_profile(dir.path(), "t.lgt", &[]);
    let threads = profile["threads"].as_array().unwrap();
    let names: Vec<&str> = threads
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "L1 bytes loaded",
            "L1 bytes used",
            "L1 bytes wasted",
            "LL bytes loaded",
            "LL bytes used",
            "LL bytes wasted"
        ]
    );
    let wasted = &threads[2];
    assert_eq!(wasted["samples"]["weightType"], "bytes");
    // Per stack: main's instruction line used 13 of 64 bytes; under
    // main -> load, load's instruction line used 4 and the data line 8.
    let mut per_stack: Vec<(Vec<String>, u64)> = (0..wasted["samples"]["length"].as_u64().unwrap()
        as usize)
        .map(|i| {
            (
                sample_stack(wasted, i),
                wasted["samples"]["weight"][i].as_u64().unwrap(),
            )
        })
        .collect();
    per_stack.sort();
    assert_eq!(
        per_stack,
        [
            (vec!["main".to_string()], 51),
            (vec!["main".to_string(), "load".to_string()], 60 + 56)
        ]
    );
    // Every line's residency ends with the run, at instruction 4 (1 ns
    // each), inside the section: so do the samples.
    let mut time = 0.0;
    for delta in wasted["samples"]["timeDeltas"].as_array().unwrap() {
        time += delta.as_f64().unwrap();
        assert_eq!(time, 0.000004);
    }
    // The section, on every track, from instruction 1 to 4.
    for thread in threads {
        let markers = &thread["markers"];
        assert_eq!(markers["length"], 1);
        let name = markers["name"][0].as_u64().unwrap() as usize;
        assert_eq!(thread["stringArray"][name], "phase");
        assert_eq!(markers["startTime"][0].as_f64().unwrap(), 0.000001);
        assert_eq!(markers["endTime"][0].as_f64().unwrap(), 0.000004);
    }
    // --profile needs the stacks back-dating keeps.
    let output = linegrind(
        dir.path(),
        &["sim", "t.lgt", "--backdate=no", "--profile", "p.json"],
    );
    assert_eq!(output.status.code(), Some(2));
}

/// The start and end times of marker `index` of a processed profile's
/// thread, in instructions (1 ns each).
fn marker_span(thread: &serde_json::Value, index: usize) -> (String, u64, u64) {
    let markers = &thread["markers"];
    let name = markers["name"][index].as_u64().unwrap() as usize;
    let instructions = |time: &serde_json::Value| (time.as_f64().unwrap() * 1e6).round() as u64;
    (
        thread["stringArray"][name].as_str().unwrap().to_string(),
        instructions(&markers["startTime"][index]),
        instructions(&markers["endTime"][index]),
    )
}

/// Sample times of a processed profile's thread, in instructions.
fn sample_times(thread: &serde_json::Value) -> Vec<u64> {
    let mut time = 0.0;
    let deltas = thread["samples"]["timeDeltas"].as_array().unwrap();
    deltas
        .iter()
        .map(|delta| {
            time += delta.as_f64().unwrap();
            (time * 1e6).round() as u64
        })
        .collect()
}

#[test]
fn firefox_sections_and_samples_keep_to_their_instructions() {
    let dir = tempfile::tempdir().unwrap();
    // D1 of one line: the second read, by the section's last instruction
    // (index 2), evicts the first line. Two functions named `same` in two
    // objects.
    fs::write(
        dir.path().join("t.txt"),
        "linegrind-trace text 1
object /a/liba.so start=1000 end=2000 symbols=embedded
object /b/libb.so start=3000 end=4000 symbols=embedded
fn 1000 1100 same
fn 3000 3100 same
mark end before
i 1000 4
i 1004 4
r 100000 8
mark begin s
i 1008 4
r 100400 8
mark end s
call 3000
i 3000 4
mark begin unclosed
i 3004 4
",
    )
    .unwrap();
    let profile = firefox_profile(dir.path(), "t.txt", &["--D1=64,1,64"]);
    // The run's whole time, 5 instructions, not only the samples'.
    assert_eq!(profile["meta"]["profilingStartTime"], 0.0);
    assert_eq!(profile["meta"]["profilingEndTime"], 0.000005);
    let loaded = &profile["threads"][0];
    assert_eq!(loaded["markers"]["length"], 3);
    let mut sections: Vec<_> = (0..3).map(|i| marker_span(loaded, i)).collect();
    sections.sort();
    assert_eq!(
        sections,
        [
            ("before".to_string(), 0, 0),
            ("s".to_string(), 2, 3),
            ("unclosed".to_string(), 4, 5)
        ]
    );
    // The eviction at instruction 2 lies in `s`; every other residency
    // ends with the run.
    let times = sample_times(loaded);
    let d1_line = (0..times.len()).find(|&i| loaded["samples"]["weight"][i] == 64 && times[i] < 5);
    assert_eq!(d1_line.map(|i| times[i]), Some(2));
    let mut stacks: Vec<Vec<String>> = (0..loaded["samples"]["length"].as_u64().unwrap() as usize)
        .map(|i| sample_stack(loaded, i))
        .collect();
    stacks.sort();
    stacks.dedup();
    assert_eq!(
        stacks,
        [
            vec!["same [liba.so]".to_string()],
            vec!["same [liba.so]".to_string(), "same [libb.so]".to_string()]
        ]
    );
}

/// Sections of one name nest: an end closes the latest begin of its name
/// in its thread; begins never ended run to the run's end, after the
/// ended sections, in the order they began.
#[test]
fn firefox_sections_of_one_name_end_innermost_first() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("t.txt"),
        "linegrind-trace text 1
fn 1000 1100 f
mark begin a
i 1000 4
mark begin b
i 1004 4
mark begin a
i 1008 4
mark end a
i 100c 4
",
    )
    .unwrap();
    let profile = firefox_profile(dir.path(), "t.txt", &[]);
    let thread = &profile["threads"][0];
    assert_eq!(thread["markers"]["length"], 3);
    let sections: Vec<_> = (0..3).map(|i| marker_span(thread, i)).collect();
    assert_eq!(
        sections,
        [
            ("a".to_string(), 2, 3),
            ("a".to_string(), 0, 4),
            ("b".to_string(), 1, 4)
        ]
    );
}

/// A data access that follows another thread's instructions is timed at
/// its own instruction's, before the section those began.
#[test]
fn firefox_samples_of_a_thread_keep_to_its_instructions() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("t.txt"),
        "linegrind-trace text 1
fn 1000 1100 a
fn 2000 2100 b
thread 1
i 1000 4
i 1004 4
r 100000 8
i 1008 4
thread 2
i 2000 4
mark begin s
i 2004 4
i 2008 4
thread 1
r 100400 8
thread 2
i 200c 4
mark end s
",
    )
    .unwrap();
    let profile = firefox_profile(dir.path(), "t.txt", &["--D1=64,1,64"]);
    let loaded = &profile["threads"][0];
    assert_eq!(marker_span(loaded, 0), ("s".to_string(), 4, 7));
    // The read of thread 1's instruction 2 evicted the line its
    // instruction 1 loaded; the rest ended with the run, at 7.
    let evicted: Vec<u64> = sample_times(loaded)
        .into_iter()
        .filter(|&t| t < 7)
        .collect();
    assert_eq!(evicted, [2]);
}

#[test]
fn firefox_tracks_are_busy_from_sample_to_sample() {
    let dir = tempfile::tempdir().unwrap();
    let hydro = root().join("traces/hydro.lgt");
    let profile = firefox_profile(dir.path(), hydro.to_str().unwrap(), &[]);
    for thread in profile["threads"].as_array().unwrap() {
        // CPU time in whole microseconds, adding up to the last sample's.
        let busy: u64 = thread["samples"]["threadCPUDelta"]
            .as_array()
            .unwrap()
            .iter()
            .map(|delta| delta.as_u64().unwrap())
            .sum();
        let last = *sample_times(thread).last().unwrap();
        assert_eq!(busy, last / 1000, "{}", thread["name"]);
        assert!(thread["showMarkersInTimeline"].as_bool().unwrap());
    }
}

#[test]
fn firefox_samples_add_up_to_the_totals() {
    let config = SimConfig::default().with_stack_samples(true).unwrap();
    for trace in ["traces/hydro.lgt", "traces/pointer_chase.lgt"] {
        let profile = simulate_file(&root().join(trace), config.clone());
        let samples = profile.samples.as_ref().unwrap();
        for (figure, (_, kind, title)) in linegrind::stack_samples::FIGURES.iter().enumerate() {
            let sum: u64 = samples.samples(figure).iter().map(|s| s.2).sum();
            assert_eq!(sum, profile.totals[*kind], "{trace}: {title}");
        }
    }
}
