//! Integration tests: one binary, one module per concern.

mod annotate;
mod attribution;
mod backdate_reference;
mod binary_format;
mod block_runs;
mod cli;
mod fidelity;
mod golden;
mod gui;
mod hand_computed;
mod importer_answers;
mod importers;
mod miss_classes;
mod recorder;
mod report_inputs;
mod reports;
mod support;
mod sweep;
mod symbols;
mod totals_reference;
mod tree_memory;
