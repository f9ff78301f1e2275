//! A billion events through the whole pipeline in constant memory: the
//! benchmark program of `common/workload.rs` replayed over and over, its
//! streamed arrays moved to fresh addresses each round, so the trace never
//! repeats a data line while the distinct instructions stay the same.
//! Prints the peak resident memory as the run goes; it must level off, not
//! grow with the trace.
//!
//!   cargo bench --bench billion                # 1,000,000,000 events
//!   cargo bench --bench billion -- 100000000   # fewer

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use linegrind::config::SimConfig;
use linegrind::pipeline::simulate_each;
use linegrind::trace::{Event, Location, TraceError, TraceRead};

#[path = "common/workload.rs"]
mod workload;

/// The workload's events again and again, up to `left` events.
struct Rounds {
    symbols: Vec<Event>,
    round: Vec<Event>,
    at: usize,
    shift: u64,
    left: u64,
}

impl TraceRead for Rounds {
    fn next_event(&mut self) -> Result<Option<Event>, TraceError> {
        if let Some(symbol) = self.symbols.pop() {
            return Ok(Some(symbol));
        }
        if self.left == 0 {
            return Ok(None);
        }
        self.left -= 1;
        if self.at == self.round.len() {
            self.at = 0;
            self.shift += 1 << 32;
        }
        let mut event = self.round[self.at].clone();
        self.at += 1;
        if let Event::Data { addr, .. } = &mut event {
            // The streamed and strided arrays; not the table or the stack.
            if (0x1000_0000..0x7000_0000).contains(addr) {
                *addr += self.shift;
            }
        }
        Ok(Some(event))
    }

    fn location(&self) -> Location {
        Location::Offset(0)
    }
}

/// Peak resident set size so far, in MiB (Linux).
fn peak_rss_mib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|kb| kb.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb / 1024)
}

fn main() {
    let total: u64 = std::env::args()
        .skip(1)
        .find_map(|arg| arg.parse().ok())
        .unwrap_or(1_000_000_000);
    let (symbols, round): (Vec<Event>, Vec<Event>) = workload::events(4_000)
        .into_iter()
        .partition(|event| matches!(event, Event::Function(_)));
    let reader = Rounds {
        symbols,
        round,
        at: 0,
        shift: 0,
        left: total,
    };
    let start = Instant::now();
    // Reports at 10 M events and at every doubling.
    let next = AtomicU64::new(10_000_000);
    let report = |events: u64| {
        if events >= next.load(Ordering::Relaxed) {
            next.store(events * 2, Ordering::Relaxed);
            let seconds = start.elapsed().as_secs_f64();
            println!(
                "{events:>13} events  {:6.1} s  {:5.1} M events/s  peak memory {:4} MiB",
                seconds,
                events as f64 / seconds / 1e6,
                peak_rss_mib()
            );
        }
    };
    let (_, profiles) = simulate_each(reader, &[SimConfig::default()], &report).unwrap();
    let profile = profiles.into_iter().next().unwrap().unwrap();
    println!(
        "done: {} events in {:.1} s, peak memory {} MiB, {} instructions simulated",
        total,
        start.elapsed().as_secs_f64(),
        peak_rss_mib(),
        profile.totals.0[0]
    );
}
