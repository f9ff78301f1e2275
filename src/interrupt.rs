//! What an interrupt (SIGINT, SIGQUIT, SIGTERM, SIGHUP, and every other
//! signal that ends a process but for a fault: SIGUSR1, SIGALRM, the
//! real-time signals...) or an abort (SIGABRT, as when memory runs out) does to
//! the files linegrind writes. Outputs are written to a temporary file
//! renamed into place at the end ([`crate::output::OutputFile`]); an
//! interrupted run removes the temporary files of the outputs it was
//! writing, then dies of the signal, so that it leaves no hidden
//! `.linegrind-*.tmp` behind (nor `record`'s scratch folder and the FIFO in
//! it). An interrupt that comes while the outputs are renamed into place
//! waits until all are; an abort does not wait, and ends the program
//! `record` runs, once it has started, with SIGTERM. While `record` runs a
//! program, SIGINT and SIGQUIT (Ctrl-C and Ctrl-\, which the terminal sends
//! to the program as well) are the program's to act on: linegrind goes on,
//! and writes the trace of what ran. The others (SIGTERM, SIGHUP...), which
//! may be sent to linegrind alone, are passed on to the program before
//! linegrind dies, so that it does not run on unwatched. A write past the
//! file size limit (`ulimit -f`) fails as any failed write does, with its
//! error, instead of killing linegrind (SIGXFSZ) before it can remove what
//! it wrote.

use std::ffi::{CString, c_char, c_int};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::process::{Command, ExitStatus};
use std::ptr::null_mut;
use std::sync::Once;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicPtr, Ordering};

/// Temporary files being written at once, at most: a sweep's outputs.
const SLOTS: usize = 256;

/// The paths of the temporary files being written, read by the handler.
/// A path, once stored, is never freed: the handler may be reading it on
/// another thread at any moment.
static TEMP_FILES: [AtomicPtr<c_char>; SLOTS] = [const { AtomicPtr::new(null_mut()) }; SLOTS];

/// Whether SIGINT and SIGQUIT are left to the program `record` runs.
static PROGRAM_RUNS: AtomicBool = AtomicBool::new(false);

/// The process id of the program `record` runs, from its start until it
/// has ended (0 otherwise).
static PROGRAM_PID: AtomicI32 = AtomicI32::new(0);

/// A signal to pass on (SIGTERM, SIGHUP...) that came while the program
/// was being started, to pass on once it has an id (0 for none).
static PENDING: AtomicI32 = AtomicI32::new(0);

/// Whether a progress display may be on the terminal's last line, which
/// an interrupt then clears.
static PROGRESS_SHOWN: AtomicBool = AtomicBool::new(false);

/// Whether outputs are being renamed into place: an interrupt then waits
/// until all of them are.
static COMMITTING: AtomicBool = AtomicBool::new(false);

/// An interrupt that came while outputs were being renamed into place, to
/// die of once they are (0 for none).
static HELD: AtomicI32 = AtomicI32::new(0);

/// A temporary file removed on an interrupt until this is dropped.
pub struct Registered {
    slot: Option<usize>,
}

/// Removes `path`, a file or a folder left empty by the files removed, if
/// linegrind is interrupted before the returned value is dropped.
pub fn remove_on_interrupt(path: &Path) -> Registered {
    install();
    let Ok(path) = CString::new(path.as_os_str().as_bytes()) else {
        return Registered { slot: None };
    };
    let path = path.into_raw();
    for (slot, entry) in TEMP_FILES.iter().enumerate() {
        let stored = entry.compare_exchange(null_mut(), path, Ordering::AcqRel, Ordering::Acquire);
        if stored.is_ok() {
            return Registered { slot: Some(slot) };
        }
    }
    // SAFETY: `path` came from `into_raw` above and was stored nowhere.
    drop(unsafe { CString::from_raw(path) });
    Registered { slot: None }
}

impl Drop for Registered {
    fn drop(&mut self) {
        if let Some(slot) = self.slot {
            TEMP_FILES[slot].store(null_mut(), Ordering::Release);
        }
    }
}

/// Runs `program` to its end, during which SIGINT and SIGQUIT go to it and
/// not to linegrind, and the other signals that end a process (SIGTERM,
/// SIGHUP...) are passed on to it; where linegrind is killed outright,
/// the kernel sends it SIGTERM.
pub fn run_program(program: &mut Command) -> io::Result<ExitStatus> {
    use std::os::unix::process::CommandExt;
    install();
    // SAFETY: getpid cannot fail and touches no memory.
    let linegrind = unsafe { libc::getpid() };
    // SAFETY: between fork and exec the closure makes only
    // async-signal-safe calls, on the child's own state.
    unsafe {
        program.pre_exec(move || {
            // As posix_spawn, which a command without a closure starts
            // with, sets them: none of linegrind's handlers, which would
            // remove its files, runs in the program.
            default_actions();
            // The program ends with linegrind (SIGTERM, as linegrind passes
            // it on) even where linegrind is killed outright (`kill -9`),
            // rather than run on unwatched; one that died before this was
            // set up is not waited for.
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
            if libc::getppid() != linegrind {
                libc::raise(libc::SIGTERM);
            }
            Ok(())
        });
    }
    PROGRAM_RUNS.store(true, Ordering::Release);
    let status = program.spawn().and_then(|mut child| {
        let pid = i32::try_from(child.id()).unwrap_or(0);
        PROGRAM_PID.store(pid, Ordering::Release);
        let pending = PENDING.swap(0, Ordering::AcqRel);
        if pending != 0 {
            // SAFETY: the program is this process's child, not waited for.
            unsafe { libc::kill(pid, passed_on(pending)) };
            die_of(pending);
        }
        wait_for_end(pid);
        PROGRAM_PID.store(0, Ordering::Release);
        child.wait()
    });
    PROGRAM_RUNS.store(false, Ordering::Release);
    let pending = PENDING.swap(0, Ordering::AcqRel);
    if pending != 0 {
        die_of(pending);
    }
    status
}

/// Waits until the child `pid` has ended, leaving it to be waited for: its
/// id stays its own, not another process's, while the handler may use it.
fn wait_for_end(pid: i32) {
    loop {
        // SAFETY: `info` is a valid structure for waitid to fill.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: waits for this process's own child, without reaping it.
        let waited = unsafe {
            libc::waitid(
                libc::P_PID,
                pid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOWAIT,
            )
        };
        if waited == 0 || io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
            return;
        }
    }
}

/// Has an interrupt clear the terminal's line on standard error, where a
/// progress display is drawn, before linegrind dies.
pub fn clear_progress_on_interrupt() {
    install();
    PROGRESS_SHOWN.store(true, Ordering::Release);
}

/// Runs `commit`, which renames a run's outputs into place, with any
/// interrupt held back until it returns, so that either all of the outputs
/// replace their files or, interrupted before, none does.
pub fn holding_interrupts<T>(commit: impl FnOnce() -> T) -> T {
    install();
    COMMITTING.store(true, Ordering::SeqCst);
    let committed = commit();
    COMMITTING.store(false, Ordering::SeqCst);
    // A signal that comes after this finds no commit going on, and dies of
    // itself.
    let held = HELD.swap(0, Ordering::SeqCst);
    if held != 0 {
        die_of(held);
    }
    committed
}

/// The signals whose default action ends a process, but for the faults of
/// its own code and the timers only a process itself arms (SIGPROF,
/// SIGVTALRM): linegrind dies of them only once it has removed its
/// temporary files. The real-time signals follow.
const ENDING: [c_int; 12] = [
    libc::SIGINT,
    libc::SIGQUIT,
    libc::SIGTERM,
    libc::SIGHUP,
    libc::SIGABRT,
    libc::SIGUSR1,
    libc::SIGUSR2,
    libc::SIGALRM,
    libc::SIGIO,
    libc::SIGPWR,
    libc::SIGSTKFLT,
    libc::SIGXCPU,
];

/// Installs the handler, once, for the signals that end a process and
/// still take their default action: one ignored stays ignored (a run
/// started with `nohup`, or in the background of a script, and so the
/// program `record` runs), and one handled by code loaded into linegrind
/// (a profiler's, preloaded) stays handled. And a handler that does
/// nothing for SIGXFSZ where it takes its default action: a handler, unlike
/// ignoring, is not inherited by the program.
fn install() {
    static INSTALLED: Once = Once::new();
    INSTALLED.call_once(install_handlers);
}

fn install_handlers() {
    if by_default(libc::SIGXFSZ) {
        handle(libc::SIGXFSZ, on_file_size_limit);
    }
    for signal in ending() {
        if by_default(signal) {
            handle(signal, on_signal);
        }
    }
}

/// [`ENDING`], then the real-time signals.
fn ending() -> impl Iterator<Item = c_int> {
    ENDING
        .into_iter()
        .chain(libc::SIGRTMIN()..=libc::SIGRTMAX())
}

/// Whether `signal` takes its default action.
fn by_default(signal: c_int) -> bool {
    action(signal) == Some(libc::SIG_DFL)
}

/// The action `signal` takes (async-signal-safe).
fn action(signal: c_int) -> Option<libc::sighandler_t> {
    // SAFETY: sigaction is given valid structures.
    unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        (libc::sigaction(signal, std::ptr::null(), &mut old) == 0).then_some(old.sa_sigaction)
    }
}

/// Gives every signal linegrind handles its default action back; for a
/// process `record` starts, between fork and exec (async-signal-safe), so
/// that a signal there runs none of linegrind's handlers, which would
/// remove the parent's files.
fn default_actions() {
    let ours: [extern "C" fn(c_int); 2] = [on_signal, on_file_size_limit];
    let ours = ours.map(|handler| handler as libc::sighandler_t);
    for signal in ending().chain([libc::SIGXFSZ]) {
        if action(signal).is_some_and(|handler| ours.contains(&handler)) {
            // SAFETY: signal is async-signal-safe.
            unsafe { libc::signal(signal, libc::SIG_DFL) };
        }
    }
}

/// Has `handler`, which makes only calls that are safe in a signal
/// handler, handle `signal`.
fn handle(signal: c_int, handler: extern "C" fn(c_int)) {
    // SAFETY: sigaction is given valid structures, and the handler is safe
    // to run at any point.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = handler as libc::sighandler_t;
        action.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(signal, &action, null_mut());
    }
}

/// The write that went past the limit returns its error (EFBIG).
extern "C" fn on_file_size_limit(_: c_int) {}

extern "C" fn on_signal(signal: c_int) {
    if signal == libc::SIGABRT {
        // Not held back, as `abort` kills on return anyway; the program is
        // ended as on SIGTERM, not made to dump its core.
        let program = PROGRAM_PID.load(Ordering::Acquire);
        if PROGRAM_RUNS.load(Ordering::Acquire) && program != 0 {
            // SAFETY: as below.
            unsafe { libc::kill(program, libc::SIGTERM) };
        }
        die_of(signal);
    }
    if COMMITTING.load(Ordering::SeqCst) {
        // Noted before the second look, so that a commit ending in between
        // finds it (`holding_interrupts`); one that has ended is not
        // waited for.
        HELD.store(signal, Ordering::SeqCst);
        if COMMITTING.load(Ordering::SeqCst) {
            return;
        }
    }
    if PROGRAM_RUNS.load(Ordering::Acquire) {
        if matches!(signal, libc::SIGINT | libc::SIGQUIT) {
            return;
        }
        // Noted first, so that `run_program` passes it on if the program
        // gets its id only after the check below.
        PENDING.store(signal, Ordering::Release);
        let program = PROGRAM_PID.load(Ordering::Acquire);
        if program == 0 {
            return;
        }
        // SAFETY: kill is async-signal-safe. The program is linegrind's
        // child, and its id is cleared before it is reaped.
        unsafe { libc::kill(program, passed_on(signal)) };
    }
    die_of(signal);
}

/// The signal to pass `signal` on as: SIGTERM for the two that Valgrind
/// keeps from the program (SIGRTMAX, its own, and SIGSTKFLT), which would
/// otherwise run on unwatched.
fn passed_on(signal: c_int) -> c_int {
    if signal == libc::SIGSTKFLT || signal == libc::SIGRTMAX() {
        libc::SIGTERM
    } else {
        signal
    }
}

/// Removes the temporary files, then dies of `signal` (async-signal-safe).
fn die_of(signal: c_int) {
    remove_temp_files();
    if PROGRESS_SHOWN.load(Ordering::Acquire) {
        const CLEAR_LINE: &[u8] = b"\r\x1b[2K";
        // SAFETY: write is async-signal-safe, given a valid buffer.
        unsafe {
            libc::write(
                libc::STDERR_FILENO,
                CLEAR_LINE.as_ptr().cast(),
                CLEAR_LINE.len(),
            )
        };
    }
    // SAFETY: signal and raise are async-signal-safe; dying of the signal
    // with its default action tells the parent what happened.
    unsafe {
        libc::signal(signal, libc::SIG_DFL);
        libc::raise(signal);
    }
}

/// Removes every registered file, then every registered folder, which
/// the files emptied (async-signal-safe).
fn remove_temp_files() {
    for remove in [libc::unlink, libc::rmdir] {
        for entry in &TEMP_FILES {
            let path = entry.load(Ordering::Acquire);
            if !path.is_null() {
                // SAFETY: a registered path is a C string that is never
                // freed; unlink fails on a folder and rmdir on a file.
                unsafe { remove(path) };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Forks a child that keeps only `slot` of the registered files, as
    /// no commit or program of other tests, runs `set_up` and aborts; its
    /// wait status.
    fn abort_in_child(slot: Option<usize>, set_up: impl FnOnce()) -> c_int {
        install();
        // SAFETY: the child only stores atomics, sets a limit and aborts,
        // which is safe after a fork of a process with threads.
        let child = unsafe { libc::fork() };
        assert!(child >= 0, "{}", io::Error::last_os_error());
        if child == 0 {
            for (other, entry) in TEMP_FILES.iter().enumerate() {
                if Some(other) != slot {
                    entry.store(null_mut(), Ordering::Release);
                }
            }
            COMMITTING.store(false, Ordering::SeqCst);
            PROGRAM_RUNS.store(false, Ordering::Release);
            set_up();
            let no_core = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            // SAFETY: setrlimit is given a valid limit (no core file of
            // the test); abort raises SIGABRT.
            unsafe {
                libc::setrlimit(libc::RLIMIT_CORE, &no_core);
                libc::abort();
            }
        }
        wait(child)
    }

    /// Waits for the child `pid`; its wait status.
    fn wait(pid: libc::pid_t) -> c_int {
        let mut status = 0;
        // SAFETY: waits for a child this test forked.
        assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
        status
    }

    fn died_of(status: c_int, signal: c_int) -> bool {
        libc::WIFSIGNALED(status) && libc::WTERMSIG(status) == signal
    }

    extern "C" fn someone_elses(_: c_int) {}

    /// Only signals that take their default action get linegrind's
    /// handler: one ignored stays ignored, one another handler took (a
    /// preloaded profiler's) stays its, and a process timer's is left
    /// alone. Checked in a child, which installs them afresh.
    #[test]
    fn handlers_go_only_where_signals_take_their_default_action() {
        // SAFETY: the child only sets and reads signal actions and exits.
        let child = unsafe { libc::fork() };
        assert!(child >= 0, "{}", io::Error::last_os_error());
        if child == 0 {
            let theirs: extern "C" fn(c_int) = someone_elses;
            let ours: extern "C" fn(c_int) = on_signal;
            // SAFETY: as above.
            unsafe {
                libc::signal(libc::SIGUSR1, libc::SIG_DFL);
                libc::signal(libc::SIGUSR2, theirs as libc::sighandler_t);
                libc::signal(libc::SIGHUP, libc::SIG_IGN);
                libc::signal(libc::SIGPROF, libc::SIG_DFL);
            }
            install_handlers();
            let kept = action(libc::SIGUSR1) == Some(ours as libc::sighandler_t)
                && action(libc::SIGUSR2) == Some(theirs as libc::sighandler_t)
                && action(libc::SIGHUP) == Some(libc::SIG_IGN)
                && by_default(libc::SIGPROF);
            // SAFETY: _exit ends the child without running the parent's
            // exit handlers.
            unsafe { libc::_exit(if kept { 0 } else { 1 }) };
        }
        let status = wait(child);
        assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0);
    }

    /// A run that aborts (memory it cannot have: Rust's allocation failure
    /// aborts) removes its temporary files as an interrupted one does, also
    /// while outputs are renamed into place, which an abort cannot wait
    /// for.
    #[test]
    fn an_abort_removes_the_temporary_files() {
        for committing in [false, true] {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join(".linegrind-output.tmp");
            std::fs::write(&path, b"half written").unwrap();
            let registered = remove_on_interrupt(&path);
            let status = abort_in_child(registered.slot, || {
                COMMITTING.store(committing, Ordering::SeqCst);
            });
            assert!(died_of(status, libc::SIGABRT), "{status:#x}");
            assert!(!path.exists(), "committing: {committing}");
        }
    }

    /// An abort while `record` runs a program ends the program with
    /// SIGTERM, not with the SIGABRT that would have it dump its core.
    #[test]
    fn an_abort_ends_the_program_with_sigterm() {
        // SAFETY: sigset_t is plain data, filled by sigemptyset and
        // sigaddset; SIGTERM stays blocked in this thread until the fork
        // has been made, so that the program dies of it only once its
        // handler (this process's, which removes files) is reset.
        let mut term: libc::sigset_t = unsafe { std::mem::zeroed() };
        unsafe {
            libc::sigemptyset(&mut term);
            libc::sigaddset(&mut term, libc::SIGTERM);
            libc::pthread_sigmask(libc::SIG_BLOCK, &term, null_mut());
        }
        // The program says when it is ready, as `record`'s is once it runs
        // (linegrind learns its id only then): a freshly forked child of
        // this process with threads, signalled at once, was found dead of
        // SIGABRT instead, 2 to 5 times in 300 runs of these tests.
        let mut ready = [0; 2];
        // SAFETY: pipe is given room for two descriptors.
        assert_eq!(unsafe { libc::pipe(ready.as_mut_ptr()) }, 0);
        // SAFETY: the child only resets a handler, unblocks a signal, writes
        // a byte and sleeps, which is safe after a fork of a process with
        // threads.
        let program = unsafe { libc::fork() };
        if program == 0 {
            unsafe {
                libc::signal(libc::SIGTERM, libc::SIG_DFL);
                libc::pthread_sigmask(libc::SIG_UNBLOCK, &term, null_mut());
                libc::write(ready[1], [1u8].as_ptr().cast(), 1);
                libc::sleep(10);
                libc::_exit(0);
            }
        }
        // SAFETY: as above; the read waits for the program's byte, into a
        // buffer of one, and the descriptors are this test's.
        unsafe {
            libc::pthread_sigmask(libc::SIG_UNBLOCK, &term, null_mut());
            assert!(program > 0, "{}", io::Error::last_os_error());
            let mut byte = 0u8;
            assert_eq!(libc::read(ready[0], (&raw mut byte).cast(), 1), 1);
            libc::close(ready[0]);
            libc::close(ready[1]);
        }
        let status = abort_in_child(None, || {
            PROGRAM_RUNS.store(true, Ordering::Release);
            PROGRAM_PID.store(program, Ordering::Release);
        });
        assert!(died_of(status, libc::SIGABRT), "{status:#x}");
        let status = wait(program);
        assert!(died_of(status, libc::SIGTERM), "{status:#x}");
    }
}
