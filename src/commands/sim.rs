//! `linegrind sim`: simulate a trace, write the callgrind file, print the
//! summary.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::failure::{Failure, InputContext, writable};
use super::same_path::same_path;
use super::trace_input::TraceInput;
use crate::config::SimConfig;
use crate::cost::EventKind;
use crate::interrupt::holding_interrupts;
use crate::output::json::Summary;
use crate::output::table::{Align, Cell, Table};
use crate::output::{
    Positions, Progress, Source, grouped, is_char_device, is_stdout, names_folder, percent,
    write_callgrind, write_firefox_profile, write_summary, write_uncommitted, written_in_place,
};
use crate::pipeline::simulate_each;
use crate::printable::printable;
use crate::profile::Profile;
use crate::simulator::RunError;

/// A validated `sim` invocation.
#[derive(Clone, Debug)]
pub struct SimJob {
    pub input: TraceInput,
    /// The callgrind file to write; with several hierarchies, each writes
    /// its own, with the hierarchy's name in it
    /// (`callgrind.out.LL=1M.hydro`).
    pub output: PathBuf,
    /// The hierarchies to simulate, all from one decoding of the trace.
    pub runs: Vec<SimRun>,
    /// The file that listed them (`--config`), which no output may
    /// overwrite.
    pub hierarchies_file: Option<PathBuf>,
    /// Subpositions of the callgrind file's cost lines.
    pub positions: Positions,
    /// Functions listed in each top list of the summary.
    pub top: usize,
    /// Where to write the JSON summary, if anywhere (one per hierarchy,
    /// named as the callgrind files are, with several).
    pub json: Option<PathBuf>,
    /// Where to write the Firefox Profiler profile, if anywhere (the
    /// configuration then collects stack samples; one hierarchy only).
    pub firefox: Option<PathBuf>,
    /// No progress display and no summary on standard output.
    pub quiet: bool,
}

/// One hierarchy of a `sim` run.
#[derive(Clone, Debug)]
pub struct SimRun {
    /// Its name, with several hierarchies (`LL=1M`, or a configuration
    /// file's); `None` for a run of one.
    pub name: Option<String>,
    pub config: SimConfig,
}

impl SimJob {
    /// Callgrind's naming, so viewers find the file: `callgrind.out.<stem>`
    /// in the current directory.
    pub fn default_output(trace: &Path) -> PathBuf {
        let stem = trace
            .file_stem()
            .map(|stem| stem.to_string_lossy().into_owned())
            .unwrap_or_else(|| "trace".to_string());
        PathBuf::from(format!("callgrind.out.{stem}"))
    }

    /// Whether each hierarchy's outputs carry its name (`--sweep`,
    /// `--config`), even a list of one.
    fn named_runs(&self) -> bool {
        self.runs.iter().any(|run| run.name.is_some())
    }

    /// Which of the files the run reads `path` is, if it is one: the trace,
    /// a `--binary` or the `--config` file.
    fn input_named(&self, path: &Path) -> Option<String> {
        self.input.named(path).or_else(|| {
            let config = self.hierarchies_file.as_ref()?;
            same_path(config, path)
                .then(|| format!("the hierarchies' file {} (--config)", config.display()))
        })
    }
}

/// `path`, or for a named hierarchy `path` with the name in it: after
/// `callgrind.out.` in a name that starts so, which KCachegrind's file
/// dialog lists (`callgrind.out.LL=1M.hydro`), else before the extension
/// (`summary.LL=1M.json`), else at the end (`prof.LL=1M`, from `prof` and
/// `prof.` alike). KCachegrind, given one file, loads every file whose
/// name starts with that one's as a part of the same run and adds them
/// up: the run alone's
/// `callgrind.out.hydro` must not start the names of a sweep's files
/// beside it, nor `LL=48` those of `LL=48K`, which holds but for names
/// that take the hierarchy's at their end.
fn named(path: &Path, run: &SimRun) -> PathBuf {
    const CALLGRIND: &str = "callgrind.out";
    let Some(name) = &run.name else {
        return path.to_path_buf();
    };
    let file = path.file_name().unwrap_or_default();
    if file.as_encoded_bytes().ends_with(b".") {
        let mut named = file.to_owned();
        named.push(name);
        return path.with_file_name(named);
    }
    let callgrind = file
        .to_str()
        .and_then(|file| file.strip_prefix(CALLGRIND))
        .filter(|rest| rest.is_empty() || rest.starts_with('.'));
    let named = match (callgrind, path.file_stem(), path.extension()) {
        (Some(rest), _, _) => format!("{CALLGRIND}.{name}{rest}").into(),
        (None, Some(stem), Some(extension)) if !extension.is_empty() => {
            let mut named = stem.to_owned();
            named.push(format!(".{name}."));
            named.push(extension);
            named
        }
        _ => {
            let mut named = file.to_owned();
            named.push(format!(".{name}"));
            named
        }
    };
    path.with_file_name(named)
}

/// What `runs` simulate, for an error that is not the trace's: the
/// hierarchy of a run of one, the names of several, which fail together
/// (the caches of all are made before the trace is read).
fn caches_of(runs: &[SimRun]) -> String {
    match runs {
        [SimRun { name: None, config }] => {
            format!("I1 {}, D1 {}, LL {}", config.i1(), config.d1(), config.ll())
        }
        _ => {
            let names: Vec<_> = runs.iter().filter_map(|run| run.name.as_deref()).collect();
            format!("{} in one run", names.join(", "))
        }
    }
}

/// Runs `job`, printing the summary to `stdout` (to `stderr` when an
/// output is standard output) and warnings to `stderr`.
pub fn sim(job: &SimJob, stdout: &mut dyn Write, stderr: &mut dyn Write) -> Result<(), Failure> {
    check_outputs(job)?;
    let name = job.input.path.display();
    let reader = job.input.open()?;
    let progress = Progress::new("simulating", reader.events(), !job.quiet);
    let configs: Vec<SimConfig> = job.runs.iter().map(|run| run.config.clone()).collect();
    let simulated = simulate_each(reader, &configs, &|events| progress.set(events));
    progress.finish();
    let (reader, profiles) = simulated.input(&name)?;
    let profiles = profiles
        .into_iter()
        .map(|profile| match profile {
            Ok(profile) => Ok(profile),
            Err(RunError::Trace(err)) => Err(err).input(&name),
            Err(err @ (RunError::Memory(_) | RunError::NoThread(_))) => {
                Err(err).other(format!("cannot simulate {}", caches_of(&job.runs)))
            }
        })
        .collect::<Result<Vec<Profile>, Failure>>()?;
    let format = reader.format();
    let read_warnings = reader.warnings(&name.to_string());
    let symbol_warnings = profiles[0].program.symbolizer().warnings();
    let late = profiles[0].late_sigreturns;
    let late_warning = (late > 0).then(|| {
        format!(
            "{} `sigreturn`(s) came after a block had left their signal handler (a handler \
             that switched to another stack, as to another coroutine, and was switched back \
             to): what such a handler ran after it was left runs as a call within the \
             code it came back to, not as a signal handler",
            grouped(late)
        )
    });
    let warnings = symbol_warnings
        .iter()
        .chain(&read_warnings)
        .chain(&late_warning);
    for warning in warnings {
        writeln!(stderr, "linegrind: warning: {}", printable(warning))
            .other("cannot write a warning")?;
    }
    let trace = job.input.path.to_string_lossy();
    let source = Source {
        trace: &trace,
        command: reader.command(),
    };
    // Every output is written whole before any replaces its file, so that
    // a failure (a full disk) leaves the files of an earlier run as they
    // were, all of them.
    let mut outputs = Vec::new();
    let mut write = |path: PathBuf, contents: &dyn Fn(&mut dyn Write) -> std::io::Result<()>| {
        let file = write_uncommitted(&path, contents);
        outputs.push((
            file.other(format!("cannot write {}", path.display()))?,
            path,
        ));
        Ok::<(), Failure>(())
    };
    for (run, profile) in job.runs.iter().zip(&profiles) {
        write(named(&job.output, run), &|out| {
            write_callgrind(out, profile, &source, job.positions)
        })?;
        if let Some(path) = &job.json {
            let summary = Summary::new(profile, &source);
            write(named(path, run), &|out| summary.write(out))?;
        }
        if let (Some(path), Some(samples)) = (&job.firefox, &profile.samples) {
            write(path.clone(), &|out| {
                write_firefox_profile(out, profile, samples, &trace)
            })?;
        }
    }
    // An output sent where standard output goes has it to itself; asked
    // before the outputs replace their files (`-o out > out`).
    let to_stderr = outputs.iter().any(|(_, path)| is_stdout(path));
    let written = holding_interrupts(|| {
        let mut written = Vec::new();
        for (file, path) in outputs {
            file.commit()
                .other(format!("cannot write {}", path.display()))?;
            written.push(path);
        }
        Ok(written)
    })?;
    if job.quiet {
        return Ok(());
    }
    let report = |out: &mut dyn Write| -> std::io::Result<()> {
        writeln!(out, "linegrind sim {name}")?;
        if let Some(read_as) = job.input.read_as(format) {
            writeln!(out, "{read_as}")?;
        }
        if job.named_runs() {
            write_comparison(out, &job.runs, &profiles)?;
        } else {
            write_summary(out, &profiles[0], job.top)?;
        }
        writeln!(out)?;
        for path in &written {
            writeln!(out, "wrote {}", path.display())?;
        }
        Ok(())
    };
    report(if to_stderr { stderr } else { stdout }).other("cannot write the summary")
}

/// Every file `job` will write, in the order it writes them, with the
/// option that names it.
fn outputs(job: &SimJob) -> Vec<(PathBuf, &'static str)> {
    let mut paths = Vec::new();
    for run in &job.runs {
        paths.push((named(&job.output, run), "-o"));
        paths.extend(job.json.as_ref().map(|path| (named(path, run), "--json")));
    }
    paths.extend(job.firefox.clone().map(|path| (path, "--profile")));
    paths
}

/// Refuses, before the simulation, outputs that would overwrite the trace
/// or one another (usage errors), and outputs whose folder cannot take a
/// file, so that a long run does not end in a write that fails.
fn check_outputs(job: &SimJob) -> Result<(), Failure> {
    if job.named_runs() {
        let bases = [
            Some((&job.output, "-o")),
            job.json.as_ref().map(|j| (j, "--json")),
        ];
        for (base, option) in bases.into_iter().flatten() {
            check_base(base, option)?;
        }
    }
    let paths = outputs(job);
    for (i, (path, option)) in paths.iter().enumerate() {
        if let Some(input) = job.input_named(path) {
            return Err(Failure::Input(anyhow::anyhow!(
                "the output {} is {input}: pick another output name ({option})",
                path.display(),
            )));
        }
        // A device that takes what is written (`/dev/null`) is not
        // overwritten: outputs may share it.
        if paths[..i]
            .iter()
            .any(|(earlier, _)| same_path(earlier, path))
            && !is_char_device(path)
        {
            return Err(Failure::Input(anyhow::anyhow!(
                "{} is named for two outputs (-o, --json, --profile): give each its own",
                path.display()
            )));
        }
        writable(path)?;
    }
    Ok(())
}

/// Refuses as the name each named hierarchy's outputs are made from a
/// folder, which would take hidden files (`od/.LL=1M`), and a device, a pipe
/// or a file this process has open (`/dev/stdout`), next to which the files
/// would be made. (A name that does not exist fails as the outputs' writes
/// do, as for a run of one.)
fn check_base(base: &Path, option: &str) -> Result<(), Failure> {
    let what = if names_folder(base) {
        Some("a folder")
    } else if written_in_place(base) && base.exists() {
        Some("a device, a pipe or a file linegrind has open")
    } else {
        None
    };
    match what {
        Some(what) => Err(Failure::Input(anyhow::anyhow!(
            "{option} {} is {what}: with --sweep or --config, each output is named \
             after {option}'s name and the hierarchy's (callgrind.out.LL=1M.hydro); \
             give a file name",
            base.display()
        ))),
        None => Ok(()),
    }
}

/// One row per hierarchy: its caches, misses and wasted bytes.
fn write_comparison(
    out: &mut dyn Write,
    runs: &[SimRun],
    profiles: &[Profile],
) -> std::io::Result<()> {
    use EventKind::*;
    let mut table = Table::new(&[
        Align::Left,
        Align::Right,
        Align::Right,
        Align::Right,
        Align::Right,
        Align::Right,
        Align::Right,
        Align::Right,
    ]);
    table.header(&[
        "hierarchy",
        "D1 misses",
        "D1 miss%",
        "LL misses",
        "LL miss%",
        "I1 misses",
        "SpLoss1",
        "SpLoss2",
    ]);
    for (run, profile) in runs.iter().zip(profiles) {
        let t = &profile.totals;
        let data = t[Dr] + t[Dw];
        let d1 = t[D1mr] + t[D1mw];
        let ll = t[ILmr] + t[DLmr] + t[DLmw];
        let uses = profile.config.cache_use();
        let cells = [
            run.name.clone().unwrap_or_default(),
            grouped(d1),
            percent(d1, data),
            grouped(ll),
            percent(ll, t[Ir] + data),
            grouped(t[I1mr]),
            if uses {
                grouped(t[SpLoss1])
            } else {
                "-".into()
            },
            if uses {
                grouped(t[SpLoss2])
            } else {
                "-".into()
            },
        ];
        table.row(cells.into_iter().map(Cell::plain).collect());
    }
    let first = &profiles[0].totals;
    writeln!(
        out,
        "{} instructions, {} data accesses, {} {}:\n",
        grouped(first[Ir]),
        grouped(first[Dr] + first[Dw]),
        runs.len(),
        if runs.len() == 1 {
            "hierarchy"
        } else {
            "hierarchies"
        }
    )?;
    table.write(out, false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hierarchys_outputs_carry_its_name_where_no_other_name_starts_them() {
        let run = SimRun {
            name: Some("LL=1M".into()),
            config: SimConfig::default(),
        };
        for (output, expected) in [
            ("callgrind.out.hydro", "callgrind.out.LL=1M.hydro"),
            ("callgrind.out.app.v2", "callgrind.out.LL=1M.app.v2"),
            ("callgrind.out", "callgrind.out.LL=1M"),
            ("callgrind.outer", "callgrind.LL=1M.outer"),
            ("runs.d/summary.json", "runs.d/summary.LL=1M.json"),
            ("prof", "prof.LL=1M"),
            ("prof.", "prof.LL=1M"),
            ("callgrind.out.", "callgrind.out.LL=1M"),
            (".prof", ".prof.LL=1M"),
        ] {
            assert_eq!(named(Path::new(output), &run), Path::new(expected));
        }
        let alone = SimRun {
            name: None,
            config: SimConfig::default(),
        };
        assert_eq!(named(Path::new("prof"), &alone), Path::new("prof"));
    }
}
