//! What the caller set up for the program that Rust's runtime undoes in
//! linegrind before `main`: SIGPIPE ignored (the runtime ignores it for
//! linegrind itself and sets it back to its default in the processes it
//! starts) and standard descriptors left closed (the runtime opens
//! `/dev/null` on them). The binary notes both before the runtime starts
//! ([`note_at_start`]), and `record` hands them on to its program, which
//! then runs as it would natively or under Callgrind.

use std::os::unix::process::CommandExt;
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};

/// Whether SIGPIPE was ignored when linegrind started.
static SIGPIPE_IGNORED: AtomicBool = AtomicBool::new(false);

/// Standard descriptors (0, 1, 2: bits 0, 1, 2) that were closed when
/// linegrind started.
static CLOSED_STD: AtomicU8 = AtomicU8::new(0);

/// Notes what the caller set up; for the binary to call before Rust's
/// runtime starts (from `.init_array`), when nothing else runs.
pub fn note_at_start() {
    // SAFETY: sigaction reads the action into a valid structure; fcntl
    // only asks about the descriptor.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        let ignored = libc::sigaction(libc::SIGPIPE, std::ptr::null(), &mut action) == 0
            && action.sa_sigaction == libc::SIG_IGN;
        SIGPIPE_IGNORED.store(ignored, Ordering::Relaxed);
        let closed = (0..3)
            .filter(|&fd| libc::fcntl(fd, libc::F_GETFD) == -1)
            .fold(0u8, |closed, fd| closed | 1 << fd);
        CLOSED_STD.store(closed, Ordering::Relaxed);
    }
}

/// Has `command`'s process start with SIGPIPE ignored and standard
/// descriptors closed where linegrind started so.
pub(super) fn hand_on(command: &mut Command) {
    let ignored = SIGPIPE_IGNORED.load(Ordering::Relaxed);
    let closed = CLOSED_STD.load(Ordering::Relaxed);
    if !ignored && closed == 0 {
        return;
    }
    // SAFETY: between fork and exec the closure makes only
    // async-signal-safe calls, on the child's own state.
    unsafe {
        command.pre_exec(move || {
            if ignored {
                libc::signal(libc::SIGPIPE, libc::SIG_IGN);
            }
            for fd in (0..3).filter(|fd| closed & 1 << fd != 0) {
                libc::close(fd);
            }
            Ok(())
        });
    }
}
