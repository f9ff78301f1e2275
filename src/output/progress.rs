//! Progress of a long run on a terminal: events done, events per second
//! and, when the total is known, a bar and the time left. Nothing at all
//! when standard error is not a terminal or with `--quiet`.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{HumanDuration, ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};

use crate::interrupt::clear_progress_on_interrupt;

/// A progress display, or nothing. Clones show the same display.
#[derive(Clone)]
pub struct Progress {
    bar: Option<ProgressBar>,
}

impl Progress {
    /// Shows progress of `what` (`simulating`) over `total`
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
        // The time left at the rate shown; none before a rate is known.
        let left = |state: &ProgressState, out: &mut dyn std::fmt::Write| {
            let (rate, to_do) = (
                state.per_sec(),
                state.len().unwrap_or(0).saturating_sub(state.pos()),
            );
            if rate > 0.0 && state.pos() > 0 {
                let left = Duration::from_secs_f64(to_do as f64 / rate);
                let _ = write!(out, "{} left", HumanDuration(left));
            }
        };
        let template = match total {
            Some(_) => "{msg} [{bar:24}] {percent:>3}%  {done}  {rate}  {left}",
            None => "{msg} {spinner}  {done}  {rate}",
        };
        let style = ProgressStyle::with_template(template)
            .expect("the template is valid")
            .with_key("done", done)
            .with_key("rate", rate)
            .with_key("left", left)
            .progress_chars("=> ");
        let bar = match total {
            Some(total) => ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr()),
            None => ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr()),
        };
        bar.set_style(style);
        bar.set_message(what.to_string());
        bar.enable_steady_tick(Duration::from_millis(200));
        clear_progress_on_interrupt();
        Progress { bar: Some(bar) }
    }

    /// `events` are done. The rate and the time left count from the first
    /// events done, not from the display's start: what comes before (a
    /// sweep's caches made, gigabytes of them) says nothing of the rate.
    pub fn set(&self, events: u64) {
        if let Some(bar) = &self.bar {
            if bar.position() == 0 && events > 0 {
                bar.reset_elapsed();
                bar.reset_eta();
            }
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
