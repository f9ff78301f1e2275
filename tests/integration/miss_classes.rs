//! `classify` against `sim` (the same misses) and against a model of the
//! 3C classes by stack distance (the reference's method): per cache, one
//! LRU stack of every line seen since the last flush; a miss is
//! compulsory when its line is not on the stack, capacity when it is at
//! least as deep as the cache has lines, conflict otherwise.

use std::path::Path;

use serde_json::Value;

use crate::support::{example_traces, linegrind, root, sim_summary};

/// `linegrind classify` of `trace` with `options`: its JSON.
fn classify(dir: &Path, trace: &str, options: &[&str]) -> Value {
    let mut args = vec!["classify", trace, "--quiet", "--json", "classes.json"];
    args.extend(options);
    let run = linegrind(dir, &args);
    assert!(run.status.success(), "{args:?}: {run:?}");
    serde_json::from_slice(&std::fs::read(dir.join("classes.json")).unwrap()).unwrap()
}

#[test]
fn classify_counts_the_misses_sim_counts() {
    let dir = tempfile::tempdir().unwrap();
    let configs: [&[&str]; 2] = [
        &[],
        &["--I1=2048,2,64", "--D1=4096,4,64", "--LL=16384,2,64"],
    ];
    for trace in example_traces() {
        let trace = trace.to_str().unwrap();
        for options in configs {
            let classes = classify(dir.path(), trace, options);
            let summary = sim_summary(dir.path(), trace, options);
            let total = |names: &[&str]| -> u64 {
                names
                    .iter()
                    .map(|name| summary["totals"][name].as_u64().unwrap())
                    .sum()
            };
            let l1_misses = total(&["I1mr", "D1mr", "D1mw"]);
            for (cache, accesses, misses) in [
                ("I1", total(&["Ir"]), total(&["I1mr"])),
                ("D1", total(&["Dr", "Dw"]), total(&["D1mr", "D1mw"])),
                ("LL", l1_misses, total(&["ILmr", "DLmr", "DLmw"])),
            ] {
                let counts = &classes["misses"][cache];
                let count = |field: &str| counts[field].as_u64().unwrap();
                assert_eq!(
                    count("accesses"),
                    accesses,
                    "{cache} of {trace} {options:?}"
                );
                assert_eq!(count("misses"), misses, "{cache} of {trace} {options:?}");
                assert_eq!(
                    count("compulsory") + count("capacity") + count("conflict"),
                    misses
                );
            }
        }
    }
}

/// A cache with its LRU stack of every line seen.
struct StackModel {
    sets: Vec<Vec<u64>>,
    assoc: usize,
    stack: Vec<u64>,
    /// Compulsory, capacity, conflict; and accesses.
    counts: [u64; 4],
}

impl StackModel {
    fn new(size: u64, assoc: u64, line: u64) -> StackModel {
        StackModel {
            sets: vec![Vec::new(); (size / assoc / line) as usize],
            assoc: assoc as usize,
            stack: Vec::new(),
            counts: [0; 4],
        }
    }

    fn lines(&self) -> usize {
        self.sets.len() * self.assoc
    }

    /// Looks `line` up: `None` on a hit, else its class (0 compulsory, 1
    /// capacity, 2 conflict).
    fn line(&mut self, line: u64) -> Option<usize> {
        let count = self.sets.len() as u64;
        let assoc = self.assoc;
        let set = &mut self.sets[(line % count) as usize];
        let hit = set.contains(&line);
        set.retain(|&l| l != line);
        set.insert(0, line);
        set.truncate(assoc);
        let depth = self.stack.iter().position(|&l| l == line);
        if let Some(depth) = depth {
            self.stack.remove(depth);
        }
        self.stack.insert(0, line);
        match (hit, depth) {
            (true, _) => None,
            (false, None) => Some(0),
            (false, Some(depth)) if depth >= self.lines() => Some(1),
            (false, Some(_)) => Some(2),
        }
    }

    /// Counts an access whose lines had `classes`: the first class of its
    /// missed lines.
    fn count(&mut self, classes: impl Iterator<Item = usize>) -> bool {
        self.counts[3] += 1;
        match classes.min() {
            Some(class) => {
                self.counts[class] += 1;
                true
            }
            None => false,
        }
    }

    fn flush(&mut self) {
        self.sets.iter_mut().for_each(Vec::clear);
        self.stack.clear();
    }
}

/// xorshift64*, so that a failure reproduces.
fn next(state: &mut u64) -> u64 {
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    state.wrapping_mul(0x2545_F491_4F6C_DD1D)
}

/// One access of `size` bytes (at most a line) at `addr` to L1 `k` of
/// `models` (I1, D1, LL): each L1 line, then LL for those that missed.
fn access(models: &mut [StackModel; 3], k: usize, addr: u64, size: u64) {
    let (first, last) = (addr >> 4, (addr + size - 1) >> 4);
    let mut missed = Vec::new();
    let mut classes = Vec::new();
    for line in first..=last {
        if let Some(class) = models[k].line(line) {
            classes.push(class);
            missed.push(line);
        }
    }
    if models[k].count(classes.into_iter()) {
        let ll: Vec<usize> = missed
            .into_iter()
            .filter_map(|l| models[2].line(l))
            .collect();
        models[2].count(ll.into_iter());
    }
}

#[test]
fn classes_are_those_of_stack_distance() {
    let dir = tempfile::tempdir().unwrap();
    // 16-byte lines everywhere; small caches, so that every class is
    // common: I1 and D1 of 8 lines (2-way, and direct-mapped), LL of 16.
    let caches = [(128, 2), (128, 1), (256, 4)];
    let options = ["--I1=128,2,16", "--D1=128,1,16", "--LL=256,4,16"];
    for seed in 1..=24u64 {
        let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let mut models = caches.map(|(size, assoc)| StackModel::new(size, assoc, 16));
        let mut trace = String::from("linegrind-trace text 1\ni 1000 1\n");
        access(&mut models, 0, 0x1000, 1);
        for _ in 0..3_000 {
            let r = next(&mut state);
            // Instructions in 512 bytes of code, data in 1 KiB, some
            // accesses over two lines, now and then a flush.
            match r % 100 {
                0 => {
                    trace.push_str("flush\n");
                    models.iter_mut().for_each(StackModel::flush);
                }
                1..=49 => {
                    let (addr, size) = (0x1000 + (r >> 8) % 512, 1 + (r >> 20) % 15);
                    trace.push_str(&format!("i {addr:x} {size}\n"));
                    access(&mut models, 0, addr, size);
                }
                _ => {
                    let (addr, size) = (0x8000 + (r >> 8) % 1024, 1 + (r >> 20) % 16);
                    let kind = ["r", "w", "m"][(r >> 40) as usize % 3];
                    trace.push_str(&format!("{kind} {addr:x} {size}\n"));
                    access(&mut models, 1, addr, size);
                }
            }
        }
        let path = dir.path().join("random.txt");
        std::fs::write(&path, &trace).unwrap();
        let classes = classify(dir.path(), path.to_str().unwrap(), &options);
        for (cache, model) in ["I1", "D1", "LL"].into_iter().zip(&models) {
            let counts = &classes["misses"][cache];
            let found = ["compulsory", "capacity", "conflict", "accesses"]
                .map(|field| counts[field].as_u64().unwrap());
            assert_eq!(found, model.counts, "{cache}, seed {seed}");
        }
        assert!(
            models.iter().all(|m| m.counts[..3].iter().all(|&c| c > 0)),
            "seed {seed}: every class in every cache"
        );
    }
}

#[test]
fn classify_refuses_bad_input_saying_where() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("bad.txt");
    std::fs::write(&trace, "linegrind-trace text 1\ni 1000 4\nr zz 8\n").unwrap();
    let refused = |args: &[&str]| {
        let run = linegrind(dir.path(), args);
        assert_eq!(run.status.code(), Some(2), "{args:?}: {run:?}");
        assert!(run.stdout.is_empty(), "{args:?}");
        String::from_utf8(run.stderr).unwrap()
    };
    let err = refused(&["classify", "bad.txt"]);
    assert!(err.contains("bad.txt") && err.contains("line 3"), "{err}");
    std::fs::write(&trace, "linegrind-trace text 1\ni 1000 4\n").unwrap();
    let err = refused(&["classify", "bad.txt", "--json", "bad.txt"]);
    assert!(err.contains("is the trace bad.txt"), "{err}");
    let err = refused(&["classify", "bad.txt", "--LL=8192,2,32"]);
    assert!(err.contains("LL line size"), "{err}");
    let err = refused(&["classify", "bad.txt", "--D1=3000,2,64"]);
    assert!(err.contains("--D1"), "{err}");
    assert!(!dir.path().join("classes.json").exists());
    // And a good one, whose JSON is written whole.
    let run = linegrind(dir.path(), &["classify", "bad.txt", "--json", "c.json"]);
    assert!(run.status.success());
    let json: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("c.json")).unwrap()).unwrap();
    assert_eq!(json["misses"]["I1"]["compulsory"], 1);
    let text = String::from_utf8(run.stdout).unwrap();
    assert!(text.contains("wrote c.json"), "{text}");
    // An imported trace says how it was read, as `sim` says it.
    std::fs::write(
        dir.path().join("app.lackey"),
        "I  0400d7d4,8\n L 7ff0005b0,8\n",
    )
    .unwrap();
    let run = linegrind(dir.path(), &["classify", "app.lackey"]);
    let text = String::from_utf8(run.stdout).unwrap();
    assert!(
        text.contains("\nread as a Valgrind Lackey trace, told by its first lines"),
        "{text}"
    );
}

/// The README's example prints what `classify` prints today, table and
/// all.
#[test]
fn the_readme_classify_example_matches_classify() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let command = "$ linegrind classify traces/hydro.lgt --D1=32768,2,64\n";
    let (_, after) = readme
        .split_once(command)
        .expect("the example in the README");
    let example: Vec<&str> = after.lines().take_while(|line| *line != "```").collect();
    let trace = root().join("traces/hydro.lgt");
    let dir = tempfile::tempdir().unwrap();
    let run = linegrind(
        dir.path(),
        &["classify", trace.to_str().unwrap(), "--D1=32768,2,64"],
    );
    assert!(run.status.success());
    let printed = String::from_utf8(run.stdout).unwrap();
    let printed: Vec<&str> = printed.lines().skip(1).collect();
    assert_eq!(example[1..], printed[..], "the README's example");
}
