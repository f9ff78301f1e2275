//! A recorded trace's block runs simulate exactly as the events they expand
//! to: the fast walk of known blocks (one stepper per run, fetches that
//! continue the previous instruction in its line added to the line's use in
//! one step without a lookup, instruction and data access counts added per
//! run) against the event-by-event path its text conversion takes.

use std::fs;

use crate::support::{example_traces, is_recorded, linegrind, without_source};

#[test]
fn block_runs_simulate_as_their_events() {
    let dir = tempfile::tempdir().unwrap();
    // The default caches, and caches so small that LL evicts lines I1
    // still holds in the middle of blocks.
    let small = ["--I1=1024,2,64", "--D1=1024,2,64", "--LL=4096,4,64"];
    // Lines of 128 bytes, whose use masks are wide.
    let wide = [
        "--I1=32768,8,128",
        "--D1=32768,8,128",
        "--LL=8388608,16,128",
    ];
    let options: [&[&str]; 4] = [&[], &small, &wide, &["--fn-skip=*alloc*", "--fn-skip=mem*"]];
    let recorded: Vec<_> = example_traces()
        .into_iter()
        .filter(|p| is_recorded(p))
        .collect();
    assert!(recorded.len() >= 3, "recorded example traces");
    for trace in recorded {
        let text = dir.path().join("events.txt");
        let converted = linegrind(
            dir.path(),
            &["convert", trace.to_str().unwrap(), text.to_str().unwrap()],
        );
        assert!(converted.status.success());
        for extra in options {
            let profile = |input: &str| {
                let mut args = vec!["sim", input, "-o", "out", "--quiet"];
                args.extend(extra);
                let output = linegrind(dir.path(), &args);
                assert!(output.status.success(), "{:?}", output);
                without_source(&fs::read_to_string(dir.path().join("out")).unwrap())
            };
            let blocks = profile(trace.to_str().unwrap());
            let events = profile("events.txt");
            assert!(
                blocks == events,
                "{} with {extra:?}: block runs and events differ",
                trace.display()
            );
        }
    }
}
