//! Progress of a long run on a terminal: events done, events per second
//! and, when the total is known, a bar and the time left. Nothing at all
//! when standard error is not a terminal or with `--quiet`.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};

/// A progress display, or nothing. Clones show the same display.
#[derive(Clone)]
pub struct Progress {
    bar: Option<ProgressBar>,
}

impl Progress {
    /// Shows progress of `what` (`simulating`, `recording`) over `total`
    /// events if known, when `wanted` and standard error is a terminal.
    pub fn new(what: &str, total: Option<u64>, wanted: bool) -> Progress {
        if !wanted || !std::io::stderr().is_terminal() {
            return Progress { bar: None };
        }
        let done = |state: &ProgressState, out: &mut dyn std::fmt::Write| {
            let _ = write!(out, "{:.1}M events", state.pos() as f64 / 1e6);
        };
        let rate = |state: &ProgressState, out: &mut dyn std::fmt::Write| {
            let _ = write!(out, "{:.1}M/s", state.per_sec() / 1e6);
        };
        let template = match total {
            Some(_) => "{msg} [{bar:24}] {percent:>3}%  {done}  {rate}  {eta} left",
            None => "{msg} {spinner}  {done}  {rate}",
        };
        let style = ProgressStyle::with_template(template)
            .expect("the template is valid")
            .with_key("done", done)
            .with_key("rate", rate)
            .progress_chars("=> ");
        let bar = match total {
            Some(total) => ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr()),
            None => ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr()),
        };
        bar.set_style(style);
        bar.set_message(what.to_string());
        bar.enable_steady_tick(Duration::from_millis(200));
        Progress { bar: Some(bar) }
    }

    /// `events` are done.
    pub fn set(&self, events: u64) {
        if let Some(bar) = &self.bar {
            bar.set_position(events);
        }
    }

    /// Removes the display.
    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
