//! `linegrind record`: runs a program under the linegrind Valgrind tool and
//! writes its binary trace.
//!
//! The tool (src/record/valgrind) observes and writes a raw stream into a
//! FIFO; this side reads it as it comes, encodes it into the binary format
//! (compact, compressed, checksummed), and when the program has exited
//! embeds the symbols of the code that ran, read from the binaries on this
//! machine. The trace is written to a temporary file and renamed into
//! place. Forked children are not recorded: the tool stops writing in them.

mod fault;
mod inherited;
mod raw;
mod symbols;
mod tool;

use std::ffi::{CString, OsStr, OsString};
use std::fmt;
use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};
use std::thread;

pub use inherited::note_at_start;
pub use raw::RawError;
pub use tool::ToolError;

/// The private `VALGRIND_LIB` folder the recorder runs Valgrind with, set
/// up on first use; running Callgrind with it gives it the very same
/// environment, for side-by-side comparisons.
pub fn valgrind_lib() -> Result<PathBuf, ToolError> {
    tool::install()
}

use crate::interrupt::{remove_on_interrupt, run_program};
use crate::output::OutputFile;
use crate::trace::binary::{Summary, TraceWriter};

/// A validated `record` invocation.
#[derive(Clone, Debug)]
pub struct RecordJob {
    /// The trace to write.
    pub output: PathBuf,
    /// The program and its arguments.
    pub program: Vec<OsString>,
    /// Record from the start, or only once the program asks
    /// (CALLGRIND_START_INSTRUMENTATION).
    pub instr_atstart: bool,
    /// No report line.
    pub quiet: bool,
}

impl RecordJob {
    /// `<program file stem>.lgt` in the current directory, in the stem's
    /// own bytes.
    pub fn default_output(program: &Path) -> PathBuf {
        let mut name = program
            .file_stem()
            .map_or_else(|| OsString::from("trace"), OsStr::to_os_string);
        name.push(".lgt");
        PathBuf::from(name)
    }
}

/// What a recording produced.
#[derive(Debug)]
pub struct Recording {
    /// How the program (under Valgrind) ended.
    pub status: ExitStatus,
    /// The trace's totals (the exit code is the status's).
    pub totals: Summary,
    /// Size of the trace file; `None` for a device or a pipe.
    pub bytes: Option<u64>,
    /// The program replaced itself by `execve`; the program it started ran
    /// unrecorded, as with Callgrind's `--trace-children=no`.
    pub replaced: bool,
    /// Records the trace format cannot hold, left out: how many, and the
    /// first, with why.
    pub left_out: Option<(u64, String)>,
    /// Where the tool's stream ended inside a record (Valgrind killed as
    /// the tool wrote), the last events left out.
    pub cut_at: Option<u64>,
}

/// Why a recording failed.
#[derive(Debug)]
pub enum RecordError {
    /// The recorder cannot run here.
    Tool(ToolError),
    /// Valgrind did not start the program; it said why on stderr.
    NotStarted(ExitStatus),
    Raw(RawError),
    Io(String, io::Error),
}

impl fmt::Display for RecordError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RecordError::Tool(err) => err.fmt(f),
            RecordError::NotStarted(status) => match status.signal() {
                Some(signal) => write!(
                    f,
                    "Valgrind was ended by signal {signal}{} before the recorder wrote \
                     anything: no trace was written",
                    signal_name(signal)
                ),
                None => write!(
                    f,
                    "Valgrind stopped before the recorder wrote anything ({status}); \
                     see its message above"
                ),
            },
            RecordError::Raw(err) => err.fmt(f),
            RecordError::Io(what, err) => write!(f, "{what}: {err}"),
        }
    }
}

impl std::error::Error for RecordError {}

/// The file that running `name` runs, as Valgrind finds the program: the
/// path itself if it has a folder part (`./app`), else the first
/// executable file of that name on `PATH` (none without `PATH`).
pub fn program_file(name: &OsStr) -> Option<PathBuf> {
    let path = Path::new(name);
    if path.components().count() > 1 {
        return Some(path.to_path_buf());
    }
    on_path(path, &std::env::var_os("PATH")?)
}

/// Whether `env` finds Valgrind: on `PATH`, or without `PATH` where the C
/// library's execvp looks then.
fn valgrind_installed() -> bool {
    let dirs = std::env::var_os("PATH").unwrap_or_else(|| "/bin:/usr/bin".into());
    on_path(Path::new("valgrind"), &dirs).is_some()
}

/// The first executable file `name` in the folders of `dirs`, a `PATH`.
fn on_path(name: &Path, dirs: &OsStr) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let executable = |candidate: &PathBuf| {
        std::fs::metadata(candidate)
            .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
    };
    std::env::split_paths(dirs)
        .map(|dir| dir.join(name))
        .find(executable)
}

/// What `path` is, when it is an ELF program for another machine than
/// x86-64 (a 32-bit x86 one, an AArch64 one), which the recorder cannot
/// run: Valgrind only says that it failed to start its tool for the
/// platform. `None` for an x86-64 program, a script, or what cannot be read.
pub fn foreign_program(path: &Path) -> Option<String> {
    use std::io::Read;
    let mut header = [0; 20];
    File::open(path).ok()?.read_exact(&mut header).ok()?;
    if header[..4] != *b"\x7fELF" {
        return None;
    }
    let machine = [header[18], header[19]];
    let machine = match header[5] {
        2 => u16::from_be_bytes(machine),
        _ => u16::from_le_bytes(machine),
    };
    let bits = if header[4] == 1 { 32 } else { 64 };
    Some(match (machine, bits) {
        (62, 64) => return None,
        (62, _) => "an x32 program (32-bit pointers)".to_string(),
        (3, _) => "a 32-bit x86 program".to_string(),
        (40, _) => "a 32-bit ARM program".to_string(),
        (183, _) => "an AArch64 program".to_string(),
        _ => format!("a {bits}-bit ELF program for machine {machine}"),
    })
}

/// ` (SIGKILL)`: the name of a common `signal`, or nothing.
pub fn signal_name(signal: i32) -> &'static str {
    match signal {
        libc::SIGHUP => " (SIGHUP)",
        libc::SIGINT => " (SIGINT)",
        libc::SIGQUIT => " (SIGQUIT)",
        libc::SIGILL => " (SIGILL)",
        libc::SIGTRAP => " (SIGTRAP)",
        libc::SIGABRT => " (SIGABRT)",
        libc::SIGBUS => " (SIGBUS)",
        libc::SIGFPE => " (SIGFPE)",
        libc::SIGKILL => " (SIGKILL)",
        libc::SIGUSR1 => " (SIGUSR1)",
        libc::SIGSEGV => " (SIGSEGV)",
        libc::SIGUSR2 => " (SIGUSR2)",
        libc::SIGPIPE => " (SIGPIPE)",
        libc::SIGALRM => " (SIGALRM)",
        libc::SIGTERM => " (SIGTERM)",
        libc::SIGXCPU => " (SIGXCPU)",
        libc::SIGXFSZ => " (SIGXFSZ)",
        _ => "",
    }
}

fn io_error(what: impl Into<String>) -> impl FnOnce(io::Error) -> RecordError {
    let what = what.into();
    move |err| RecordError::Io(what, err)
}

/// Runs `job`: the program's stdin, stdout and stderr are its own, and so
/// is its environment, in its order, with `VALGRIND_LIB` set to the tool's
/// folder.
pub fn record(job: &RecordJob) -> Result<Recording, RecordError> {
    let valgrind_lib = tool::install().map_err(RecordError::Tool)?;
    if !valgrind_installed() {
        return Err(RecordError::Tool(ToolError::NoValgrind));
    }
    let scratch = tempfile::tempdir().map_err(io_error("cannot make a temporary folder"))?;
    let fifo = scratch.path().join("events");
    let _remove_scratch = remove_on_interrupt(scratch.path());
    make_fifo(&fifo).map_err(io_error("cannot make a FIFO for the tool"))?;
    let _remove_fifo = remove_on_interrupt(&fifo);
    // The read end is opened first, without waiting for a writer; a write
    // end kept open here makes reads wait for the tool instead of seeing an
    // end of file before it starts.
    let reader = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(&fifo)
        .map_err(io_error("cannot open the FIFO"))?;
    set_blocking(&reader).map_err(io_error("cannot set up the FIFO"))?;
    let keep_open = OpenOptions::new()
        .write(true)
        .open(&fifo)
        .map_err(io_error("cannot open the FIFO"))?;

    let cannot_write = format!("cannot write {}", job.output.display());
    let output = OutputFile::create(&job.output).map_err(io_error(&cannot_write))?;
    let file = output.file().try_clone().map_err(io_error(&cannot_write))?;
    let cmd: Vec<String> = job
        .program
        .iter()
        .map(|arg| arg.to_string_lossy().into_owned())
        .collect();
    let meta = [
        ("cmd", cmd.join(" ")),
        (
            "creator",
            format!("linegrind-{}", env!("CARGO_PKG_VERSION")),
        ),
    ];
    let writer_cannot_write = cannot_write.clone();
    let convert = thread::spawn(move || {
        let mut reader = reader;
        let converted = TraceWriter::new(BufWriter::with_capacity(1 << 20, file), true, &meta)
            .map_err(io_error(&writer_cannot_write))
            .and_then(|mut writer| {
                let recorded = raw::convert(&mut reader, &mut writer).map_err(|err| match err {
                    RawError::Write(err) => RecordError::Io(writer_cannot_write, err),
                    err => RecordError::Raw(err),
                })?;
                Ok((writer, recorded))
            });
        if converted.is_err() {
            // The program runs on to its end, unrecorded: what the tool
            // still writes is read and dropped, so that no write of its
            // finds the FIFO closed and SIGPIPE ends the program.
            let _ = io::copy(&mut reader, &mut io::sink());
        }
        converted
    });

    // `VALGRIND_LIB` is set by `env`, as the README's Callgrind runs set
    // it (in place, or last), not on the command: a command given any
    // variable passes the whole environment sorted by name, and where the
    // program's variables lie moves its stack and what `getenv` costs.
    let mut setting = OsString::from("VALGRIND_LIB=");
    setting.push(valgrind_lib.as_os_str());
    let mut valgrind = Command::new("env");
    valgrind
        .arg(setting)
        .arg("valgrind")
        .arg("--tool=linegrind")
        .arg("-q")
        // A program the recorded one starts runs unrecorded, whatever
        // `VALGRIND_OPTS` or a `.valgrindrc` say: under the tool it would
        // write a second stream into the FIFO.
        .arg("--trace-children=no")
        .arg(format!("--lg-out={}", fifo.display()));
    if !job.instr_atstart {
        valgrind.arg("--instr-atstart=no");
    }
    valgrind.arg("--").args(&job.program);
    inherited::hand_on(&mut valgrind);
    // Ctrl-C is the program's: linegrind writes the trace of what ran.
    let status = run_program(&mut valgrind)
        .map_err(|err| RecordError::Io("cannot run env to start valgrind".into(), err));
    drop(keep_open);
    let converted = convert.join().unwrap_or_else(|_| {
        Err(RecordError::Io(
            "the trace writer failed".into(),
            io::Error::other("panic"),
        ))
    });
    let status = status?;
    let (writer, recorded) = match converted {
        Err(RecordError::Raw(RawError::Empty)) => {
            return Err(RecordError::NotStarted(status));
        }
        other => other?,
    };
    let totals = writer.totals();
    let replaced = !recorded.finished && recorded.exec_at == Some(totals.block_runs);
    let mut left_out = recorded.left_out;
    let symbols = symbols::embed(&recorded.modules, recorded.instr_addrs, &mut left_out);
    // An exit status's code: 0 to 255.
    let exit_code = match recorded.finished {
        true => status.code().and_then(|code| u8::try_from(code).ok()),
        false => None,
    };
    let file = writer
        .finish(&symbols, exit_code)
        .map_err(io_error(&cannot_write))?;
    file.into_inner()
        .map_err(|err| RecordError::Io(cannot_write, err.into_error()))?;
    let bytes = output.written();
    output
        .commit()
        .map_err(io_error(format!("cannot write {}", job.output.display())))?;
    Ok(Recording {
        status,
        totals,
        bytes,
        replaced,
        left_out,
        cut_at: recorded.cut_at,
    })
}

fn make_fifo(path: &Path) -> io::Result<()> {
    let name = CString::new(path.as_os_str().as_bytes()).map_err(io::Error::other)?;
    // SAFETY: `name` is a valid NUL-terminated path.
    if unsafe { libc::mkfifo(name.as_ptr(), 0o600) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

fn set_blocking(file: &File) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let fd = file.as_raw_fd();
    // SAFETY: `fd` is an open descriptor owned by `file`.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    // SAFETY: as above; clearing O_NONBLOCK on our own descriptor.
    if flags < 0 || unsafe { libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_trace_is_named_after_the_program_in_its_own_bytes() {
        let odd = OsStr::from_bytes(b"./\xffbad");
        assert_eq!(
            RecordJob::default_output(Path::new(odd))
                .as_os_str()
                .as_bytes(),
            b"\xffbad.lgt"
        );
        assert_eq!(
            RecordJob::default_output(Path::new("/usr/bin/app.sh")),
            Path::new("app.lgt")
        );
    }
}
