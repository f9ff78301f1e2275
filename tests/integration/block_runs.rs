//! A recorded trace's block runs simulate exactly as the events they expand
//! to: the fast walk of known blocks (one stepper per run, fetches that
//! continue the previous instruction in its line added to the line's use in
//! one step without a lookup, instruction and data access counts added per
//! run, cycles of runs that compute in registers counted at once, rounds
//! of them encoded in the same bytes again counted without decoding them)
//! against the event-by-event path its text conversion takes.

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

/// A signal handler or a thread whose first block ran before, in another
/// context, so that its run is a known block's: code without a symbol that
/// it then jumps to joins the function of the context's first instruction
/// (`f0`), as it does event by event, not a function named after itself.
#[test]
fn a_context_that_starts_in_a_known_block_names_its_code_as_events_do() {
    let dir = tempfile::tempdir().unwrap();
    let header = "linegrind-trace text 1\nfn 401000 401100 f0 f.c 56\n";
    let starts = [
        "i 40102f 1\nsignal 17\ni 40102f 1\ni 401515 2\n",
        "i 401000 5\nthread 3\ni 401000 5\ni 401200 5\n",
    ];
    for start in starts {
        fs::write(dir.path().join("events.txt"), format!("{header}{start}")).unwrap();
        let converted = linegrind(dir.path(), &["convert", "events.txt", "runs.lgt"]);
        assert!(converted.status.success(), "{converted:?}");
        let profile = |input: &str| {
            let output = linegrind(dir.path(), &["sim", input, "-o", "out", "--quiet"]);
            assert!(output.status.success(), "{output:?}");
            without_source(&fs::read_to_string(dir.path().join("out")).unwrap())
        };
        let events = profile("events.txt");
        assert_eq!(profile("runs.lgt"), events, "{start}");
        assert!(!events.contains("fn=(2)"), "one function, f0: {events}");
    }
}
