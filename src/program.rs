//! The instructions a trace executed and the functions they belong to.
//!
//! Every distinct instruction address gets an [`InstrId`] the first time it
//! runs, and its function is resolved then, once per address, never per
//! event. Costs elsewhere are plain arrays indexed by these ids.

use std::collections::BTreeSet;
use std::fmt;

use rustc_hash::FxHashMap;

use crate::symbols::{FnRanges, OverlapError};

/// Index into [`Program::instrs`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct InstrId(pub u32);

/// Index into [`Program::functions`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FnId(pub u32);

/// One distinct executed instruction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Instr {
    pub addr: u64,
    pub len: u32,
    pub func: FnId,
    /// Source line, 0 when unknown.
    pub line: u32,
}

/// A function: named by the trace's symbols, or after its entry address.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Function {
    pub name: String,
    pub file: Option<String>,
    /// Line of the function's code, 0 when unknown.
    pub line: u32,
    /// First address: the start of its range, or the entry it was reached at.
    pub entry: u64,
}

/// A function symbol that cannot be added.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SymbolError {
    /// The range overlaps another function's range.
    Overlap { name: String, other: OverlapError },
    /// The range covers code that already ran under an address-named function.
    TooLate { name: String, addr: u64 },
}

impl fmt::Display for SymbolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SymbolError::Overlap { name, other } => write!(f, "function `{name}` {other}"),
            SymbolError::TooLate { name, addr } => write!(
                f,
                "function `{name}` covers {addr:#x}, which the trace already reached without a symbol; \
                 put `fn` lines before the code they describe"
            ),
        }
    }
}

impl std::error::Error for SymbolError {}

/// Instruction and function tables.
#[derive(Debug, Default)]
pub struct Program {
    instrs: Vec<Instr>,
    functions: Vec<Function>,
    by_addr: FxHashMap<u64, InstrId>,
    ranges: FnRanges<FnId>,
    /// Address-named functions by entry address.
    unnamed: FxHashMap<u64, FnId>,
    /// Addresses resolved without a symbol; a later range must not cover them.
    unresolved: BTreeSet<u64>,
}

impl Program {
    /// Empty tables.
    pub fn new() -> Program {
        Program::default()
    }

    /// Every distinct instruction, indexed by [`InstrId`].
    pub fn instrs(&self) -> &[Instr] {
        &self.instrs
    }

    /// Every function, indexed by [`FnId`].
    pub fn functions(&self) -> &[Function] {
        &self.functions
    }

    /// The instruction with this id.
    pub fn instr(&self, id: InstrId) -> &Instr {
        &self.instrs[id.0 as usize]
    }

    /// The function with this id.
    pub fn function(&self, id: FnId) -> &Function {
        &self.functions[id.0 as usize]
    }

    /// Adds the function `[start, end)`. It must come before any of its code
    /// runs, so that every instruction keeps the function it first got.
    pub fn add_function(
        &mut self,
        start: u64,
        end: u64,
        name: String,
        file: Option<String>,
        line: u32,
    ) -> Result<FnId, SymbolError> {
        if let Some(&addr) = self.unresolved.range(start..end).next() {
            return Err(SymbolError::TooLate { name, addr });
        }
        let id = FnId(self.functions.len() as u32);
        if let Err(other) = self.ranges.insert(start, end, id) {
            return Err(SymbolError::Overlap { name, other });
        }
        self.functions.push(Function {
            name,
            file,
            line,
            entry: start,
        });
        Ok(id)
    }

    /// The id of the instruction at `addr`, added on first sight. `entry` is
    /// the address the current frame was entered at; it names the function
    /// of code that no symbol covers.
    #[inline]
    pub fn intern(&mut self, addr: u64, len: u32, entry: u64) -> InstrId {
        if let Some(&id) = self.by_addr.get(&addr) {
            return id;
        }
        let func = self.resolve(addr, entry);
        let id = InstrId(self.instrs.len() as u32);
        let line = self.functions[func.0 as usize].line;
        self.instrs.push(Instr {
            addr,
            len,
            func,
            line,
        });
        self.by_addr.insert(addr, id);
        id
    }

    /// The function a call to `target` enters.
    pub fn callee(&mut self, target: u64) -> FnId {
        self.resolve(target, target)
    }

    /// The function of `addr`: the symbol covering it, else a function named
    /// after the frame's entry (or after `addr` itself when the entry has a
    /// symbol, so that unnamed code never joins a named function).
    fn resolve(&mut self, addr: u64, entry: u64) -> FnId {
        if let Some(id) = self.ranges.find(addr) {
            return id;
        }
        self.unresolved.insert(addr);
        let entry = if self.ranges.find(entry).is_none() {
            entry
        } else {
            addr
        };
        self.unresolved.insert(entry);
        let functions = &mut self.functions;
        *self.unnamed.entry(entry).or_insert_with(|| {
            functions.push(Function {
                name: format!("0x{entry:x}"),
                file: None,
                line: 0,
                entry,
            });
            FnId(functions.len() as u32 - 1)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instructions_are_interned_once_with_their_function() {
        let mut p = Program::new();
        let main = p
            .add_function(0x1000, 0x1040, "main".into(), Some("m.c".into()), 12)
            .unwrap();
        let a = p.intern(0x1000, 4, 0x1000);
        let b = p.intern(0x1004, 5, 0x1000);
        assert_eq!(p.intern(0x1000, 4, 0x1000), a);
        assert_ne!(a, b);
        assert_eq!(p.instr(a).func, main);
        assert_eq!(p.instr(b).line, 12);
        assert_eq!(p.instrs().len(), 2);
    }

    #[test]
    fn code_without_symbols_is_named_after_its_frame_entry() {
        let mut p = Program::new();
        p.add_function(0x1000, 0x1040, "main".into(), None, 0)
            .unwrap();
        let callee = p.callee(0x2000);
        assert_eq!(p.function(callee).name, "0x2000");
        let inside = p.intern(0x2010, 2, 0x2000);
        assert_eq!(p.instr(inside).func, callee);
        // Unnamed code in a frame entered at a named function is its own.
        let stray = p.intern(0x3000, 1, 0x1000);
        assert_eq!(p.function(p.instr(stray).func).name, "0x3000");
    }

    #[test]
    fn a_symbol_for_code_that_already_ran_is_refused() {
        let mut p = Program::new();
        p.intern(0x2010, 2, 0x2000);
        let err = p
            .add_function(0x2000, 0x2020, "late".into(), None, 0)
            .unwrap_err();
        assert_eq!(
            err,
            SymbolError::TooLate {
                name: "late".into(),
                addr: 0x2000
            }
        );
        p.add_function(0x1000, 0x1040, "a".into(), None, 0).unwrap();
        assert!(matches!(
            p.add_function(0x1020, 0x1050, "b".into(), None, 0),
            Err(SymbolError::Overlap { .. })
        ));
    }
}
