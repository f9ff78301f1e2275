//! The short text summary `sim` prints: totals with miss rates, cache-use
//! figures, back-dating statistics and the top functions.

use std::io::{self, Write};

use super::labels::function_labels;
use super::number::{grouped, percent};
use crate::cost::{Cost, EventKind};
use crate::profile::Profile;
use crate::program::FnId;

/// Totals and miss rates, then the top `top` functions by self Ir and by
/// self D1 misses.
pub fn write_summary(out: &mut dyn Write, profile: &Profile, top: usize) -> io::Result<()> {
    let totals = &profile.totals;
    let config = &profile.config;
    writeln!(
        out,
        "caches: I1 {}  D1 {}  LL {}",
        config.i1(),
        config.d1(),
        config.ll()
    )?;
    writeln!(
        out,
        "{}, {}, {}, {}",
        counted(totals[EventKind::Ir], "instruction"),
        counted(profile.threads, "thread"),
        counted(profile.entered_functions() as u64, "function"),
        counted(profile.called_arcs().count() as u64, "call arc")
    )?;
    writeln!(out)?;
    use EventKind::*;
    let rows = [
        (Ir, None),
        (I1mr, Some(Ir)),
        (ILmr, Some(Ir)),
        (Dr, None),
        (D1mr, Some(Dr)),
        (DLmr, Some(Dr)),
        (Dw, None),
        (D1mw, Some(Dw)),
        (DLmw, Some(Dw)),
    ];
    let width = grouped(totals.0.iter().copied().max().unwrap_or(0)).len();
    for (kind, of) in rows {
        write!(out, "  {:<8}{:>width$}", kind.name(), grouped(totals[kind]))?;
        match of {
            Some(of) => writeln!(
                out,
                "  {:>7} of {}",
                percent(totals[kind], totals[of]),
                of.name()
            )?,
            None => writeln!(out)?,
        }
    }
    if profile.events.has_cache_use() {
        writeln!(out)?;
        let l1_line = u64::from(config.d1().line_size());
        let ll_line = u64::from(config.ll().line_size());
        cache_use_rows(
            out,
            totals,
            width,
            "L1",
            [Loaded1, Used1, SpLoss1, AcCost1],
            l1_line,
        )?;
        cache_use_rows(
            out,
            totals,
            width,
            "LL",
            [Loaded2, Used2, SpLoss2, AcCost2],
            ll_line,
        )?;
    }
    if let Some(tree) = &profile.tree {
        // The mean is over instructions: a trace of data accesses alone
        // has none to average over.
        let mean = match tree.mean_nodes {
            Some(mean) => format!("mean {mean:.1} nodes"),
            None => "no mean (no instructions)".to_string(),
        };
        writeln!(
            out,
            "\nback-dating tree: {mean}, max {}, {} created",
            grouped(tree.max_nodes),
            grouped(tree.created_nodes)
        )?;
    }
    let self_costs = profile.function_self_costs();
    top_functions(out, profile, &self_costs, top, "Ir", |cost| cost[Ir])?;
    top_functions(
        out,
        profile,
        &self_costs,
        top,
        "D1 misses (D1mr + D1mw)",
        |cost| cost[D1mr] + cost[D1mw],
    )
}

/// `1 thread`, `2 threads`, `1,024 functions`.
fn counted(n: u64, noun: &str) -> String {
    let plural = if n == 1 { "" } else { "s" };
    format!("{} {noun}{plural}", grouped(n))
}

fn cache_use_rows(
    out: &mut dyn Write,
    totals: &Cost,
    width: usize,
    level: &str,
    [loaded, used, wasted, temporal]: [EventKind; 4],
    line_size: u64,
) -> io::Result<()> {
    let lines = totals[loaded] / line_size;
    writeln!(
        out,
        "  {:<8}{:>width$}  bytes loaded into {level} ({} lines)",
        loaded.name(),
        grouped(totals[loaded]),
        grouped(lines)
    )?;
    writeln!(
        out,
        "  {:<8}{:>width$}  {:>7} of the bytes loaded were used",
        used.name(),
        grouped(totals[used]),
        percent(totals[used], totals[loaded])
    )?;
    writeln!(
        out,
        "  {:<8}{:>width$}  {:>7} of the bytes loaded were wasted",
        wasted.name(),
        grouped(totals[wasted]),
        percent(totals[wasted], totals[loaded])
    )?;
    let per_line = if lines == 0 {
        "-".to_string()
    } else {
        format!("{:.1}", totals[temporal] as f64 / lines as f64)
    };
    writeln!(
        out,
        "  {:<8}{:>width$}  {per_line} per line (1000 = used once)",
        temporal.name(),
        grouped(totals[temporal])
    )
}

fn top_functions(
    out: &mut dyn Write,
    profile: &Profile,
    self_costs: &[Cost],
    top: usize,
    title: &str,
    key: impl Fn(&Cost) -> u64,
) -> io::Result<()> {
    let total: u64 = self_costs.iter().map(&key).sum();
    let mut ranked: Vec<(u64, usize)> = self_costs
        .iter()
        .enumerate()
        .map(|(func, cost)| (key(cost), func))
        .filter(|&(value, _)| value > 0)
        .collect();
    if ranked.is_empty() || top == 0 {
        return Ok(());
    }
    ranked.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    ranked.truncate(top);
    let labels = function_labels(
        &profile.program,
        ranked.iter().map(|&(_, func)| FnId(func as u32)),
    );
    writeln!(out, "\ntop functions by self {title}:")?;
    let width = grouped(ranked[0].0).len();
    for (value, func) in ranked {
        writeln!(
            out,
            "  {:>width$}  {:>7}  {}",
            grouped(value),
            percent(value, total),
            labels[&FnId(func as u32)]
        )?;
    }
    Ok(())
}
