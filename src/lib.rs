//! linegrind: a trace-driven, Callgrind-style cache simulator with exact
//! cache-use metrics and back-dated inclusive costs.
//!
//! # Data flow
//!
//! ```text
//! program under Valgrind ─> recorder (record) ─> trace file
//!
//! trace reader ─> batches ─> one simulator thread per walk (pipeline; the
//!   (trace)    (decoding    LLs of a sweep are lanes of one walk:
//!               thread)     attribution::lanes)
//!
//! each walk:
//!   events ─> call tracker ─> cache hierarchy
//!            (callstack)       (cache)  │ evictions with use
//!                 │                     ▼
//!         back-dating tree <──── charges (simulator)
//!   (attribution::calltree)             │
//!                                       ▼
//!                 profile ─> writers: callgrind, JSON, summary (output)
//!
//! callgrind files, JSON summaries ─> report, diff, check (report)
//! ```
//!
//! Readers stream: a trace never has to fit in memory. Every distinct
//! instruction address is interned once ([`program`]) and its function
//! resolved then; costs are plain arrays indexed by ids. The cache model is
//! Callgrind's (LRU, write-allocate, LL looked up per line that missed L1),
//! with an exact used-byte mask and use count per resident line. A line's
//! spatial and temporal loss, known at eviction, is charged to the
//! instruction that loaded it and — through the reference-counted partial
//! call tree in [`attribution::calltree`] — to every call arc on its stack at load time.
//!
//! # Example
//!
//! ```
//! use linegrind::config::SimConfig;
//! use linegrind::cost::EventKind;
//! use linegrind::simulator::simulate;
//! use linegrind::trace::TextReader;
//!
//! let trace = "linegrind-trace text 1\n\
//!              fn 1000 1010 main\n\
//!              i 1000 4\n\
//!              r 8000 8\n";
//! let profile = simulate(&mut TextReader::new(trace.as_bytes()), SimConfig::default())?;
//! assert_eq!(profile.totals[EventKind::Ir], 1);
//! assert_eq!(profile.totals[EventKind::D1mr], 1);
//! // Two 64-byte L1 lines were loaded: the instruction line for 4 bytes
//! // and the data line for 8, so 60 + 56 bytes were wasted.
//! assert_eq!(profile.totals[EventKind::SpLoss1], 116);
//! # Ok::<(), linegrind::simulator::RunError>(())
//! ```

pub mod arcs;
pub mod attribution;
pub mod byte_order_mark;
pub mod cache;
pub mod callstack;
pub mod commands;
pub mod config;
pub mod cost;
pub mod hierarchies;
pub mod interrupt;
pub mod output;
pub mod pattern;
pub mod pipeline;
pub mod printable;
pub mod profile;
pub mod program;
pub mod record;
pub mod regular_file;
pub mod report;
pub mod simulator;
pub mod stack_samples;
pub mod symbols;
pub mod trace;
