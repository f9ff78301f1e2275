//! Who pays for an ended residency beyond the instruction that loaded the
//! line: the calls on its stack at the load. [`backdate`] is the interface
//! the simulator charges through (the tree, or nothing with
//! `--backdate=no`), [`calltree`] the reference-counted partial call tree
//! that holds those calls while a line loaded under them is resident, and
//! [`lanes`] one tree per LL of a sweep walked together. The charges
//! themselves, to instructions and to the tree, are the simulator's
//! (`simulator/charges.rs`).

pub mod backdate;
pub mod calltree;
pub mod lanes;
