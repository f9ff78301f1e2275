//! The instructions a trace executed and the functions, objects and source
//! positions they belong to.
//!
//! Every distinct instruction address gets an [`InstrId`] the first time it
//! runs, and is symbolized then, once per address, never per event: from
//! the trace's own symbols (`fn` and `line`) if they cover it, else from the
//! ELF object mapped there, else it joins a function named by address.
//! Costs elsewhere are plain arrays indexed by these ids.

use std::collections::BTreeSet;
use std::fmt;

use rustc_hash::FxHashMap;

use crate::printable::printable;
use crate::symbols::{FnRanges, InlineFrame, ModuleId, OverlapError, SkipRules, Symbolizer};
use crate::trace::ModuleMapping;

/// Index into [`Program::instrs`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct InstrId(pub u32);

/// Index into [`Program::functions`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FnId(pub u32);

/// A source file of the program; [`Program::file`] names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FileId(pub u32);

/// One distinct executed instruction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Instr {
    /// Runtime address.
    pub addr: u64,
    pub len: u32,
    pub func: FnId,
    /// Source file, when known.
    pub file: Option<FileId>,
    /// Source line, 0 when unknown.
    pub line: u32,
    /// The chain of inlined calls it runs in (see [`Program::inlined`]); 0
    /// when it is not inlined code or inlined functions are not shown.
    pub inline: u32,
}

/// A call into inlined code: the inlined function, and a call site made up
/// in the function it was inlined into, at the position of the call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct InlineCall {
    pub func: FnId,
    pub site: InstrId,
}

/// A function: named by symbols, or after its entry address.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Function {
    pub name: String,
    /// The ELF object it belongs to.
    pub object: Option<ModuleId>,
    pub file: Option<FileId>,
    /// Line of the function's code, 0 when unknown.
    pub line: u32,
    /// Runtime address of its symbol's first byte, where a jump enters it;
    /// none for a function known by a DWARF name only or named after an
    /// address, which only a jump from another [`Region`] enters.
    pub entry: Option<u64>,
    /// A PLT stub, which calls pass through (see `--skip-plt`).
    pub plt: bool,
    /// Skipped: its cost and calls are its caller's (`--fn-skip`).
    pub skip: bool,
    /// The runtime linker's lazy-binding resolver: its jump to the function
    /// it resolved is a call from its own caller, as Callgrind sees it.
    pub pop_on_jump: bool,
}

impl Function {
    /// Where its code lies.
    #[inline]
    pub fn region(&self) -> Region {
        Region::new(self.object, self.plt)
    }

    /// Whether `addr` is its symbol's first byte.
    #[inline]
    pub fn starts_at(&self, addr: u64) -> bool {
        self.entry == Some(addr)
    }
}

/// Where code lies, as Callgrind tells a jump that enters a function: its
/// object, and whether it is PLT stubs (Callgrind's section kinds), in one
/// word. A jump into another region is a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Region(u64);

impl Region {
    #[inline]
    pub fn new(object: Option<ModuleId>, plt: bool) -> Region {
        let object = object.map_or(0, |ModuleId(id)| u64::from(id) + 1);
        Region(object << 1 | u64::from(plt))
    }
}

/// A source file (unknown for code without one) and line.
type SourcePos = (Option<FileId>, u32);

/// What the symbols say of the code at an address.
struct Resolved {
    func: FnId,
    source: Option<SourcePos>,
    inlined: Vec<InlineFrame>,
    /// No symbol covers the code: `func` is the function of its frame, and
    /// this is the region of the code itself.
    framed: Option<Region>,
}

/// Names of glibc's lazy-binding resolvers (`_dl_runtime_resolve_xsavec`
/// and its kin), matched by prefix as Callgrind matches them.
const RESOLVER: &str = "_dl_runtime_resolve";

/// What makes two addresses belong to the same function.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum FnKey {
    /// An ELF symbol, by object and start address.
    Symbol(Option<ModuleId>, u64),
    /// The function data accesses without an instruction are charged to.
    Unknown,
    /// An inlined function, by object, name and the file of its code.
    Inlined(Option<ModuleId>, String, Option<FileId>),
    /// Code without symbols, by object and entry address.
    Unnamed(Option<ModuleId>, u64),
}

/// Symbols given by the trace that cannot be added.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SymbolError {
    /// The range overlaps another function's range.
    Overlap { name: String, other: OverlapError },
    /// The symbol covers code the trace already reached without it.
    TooLate { what: String, addr: u64 },
}

impl fmt::Display for SymbolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SymbolError::Overlap { name, other } => write!(f, "function `{name}` {other}"),
            SymbolError::TooLate { what, addr } => write!(
                f,
                "{what} covers {addr:#x}, which the trace already reached without it; \
                 put symbols before the code they describe"
            ),
        }
    }
}

impl std::error::Error for SymbolError {}

/// Instruction, function and file tables, and the symbols that fill them.
#[derive(Default)]
pub struct Program {
    instrs: Vec<Instr>,
    functions: Vec<Function>,
    files: Vec<String>,
    /// The instruction at each address; for code no symbol covers, the
    /// one of the function whose frame ran it first.
    by_addr: FxHashMap<u64, InstrId>,
    /// Every instruction of code no symbol covers, by address and the
    /// function of the frames that run it.
    framed: FxHashMap<(u64, FnId), InstrId>,
    /// The instructions of code no symbol covers, each with the region of
    /// its code (its function's is the frame's).
    framed_ids: FxHashMap<InstrId, Region>,
    /// The function that code no symbol covers joins, by the entry of the
    /// frame that runs it.
    frame_functions: FxHashMap<u64, FnId>,
    file_ids: FxHashMap<String, FileId>,
    fn_ids: FxHashMap<FnKey, FnId>,
    /// The callee function of each call target seen.
    callees: FxHashMap<u64, FnId>,
    /// Function ranges given by the trace.
    ranges: FnRanges<FnId>,
    /// PLT ranges given by the trace.
    plt: FnRanges<()>,
    /// Source positions given by the trace, by runtime address.
    lines: FxHashMap<u64, (Option<FileId>, u32)>,
    symbolizer: Symbolizer,
    skip: SkipRules,
    /// Show inlined functions as functions of their own.
    inline: bool,
    /// Inlined functions are asked for, and a module mapped so far is read
    /// from its file, whose DWARF can give them (embedded symbols cannot):
    /// one flag for the block runs, which test it.
    inline_shown: bool,
    /// Chains of inlined calls, outermost first; chain `n` is `chains[n - 1]`.
    chains: Vec<Vec<InlineCall>>,
    chain_ids: FxHashMap<Vec<InlineCall>, u32>,
    /// The made-up call site of each inlined call, by caller and position.
    inline_sites: FxHashMap<(FnId, Option<FileId>, u32), InstrId>,
    /// Addresses resolved without a trace symbol; one must not cover them.
    unresolved: BTreeSet<u64>,
    /// The `(unknown)` instruction, once data-only traces need it.
    unknown: Option<InstrId>,
}

impl Program {
    /// Empty tables; functions matching `skip` will be skipped, and with
    /// `inline`, inlined functions are functions of their own.
    pub fn with_options(skip: SkipRules, inline: bool) -> Program {
        Program {
            skip,
            inline,
            ..Program::default()
        }
    }

    /// The instruction data accesses are charged to when the trace gives
    /// them without one (data-only traces): address 0, in a function called
    /// `(unknown)`, never fetched.
    pub fn unknown(&mut self) -> InstrId {
        if let Some(id) = self.unknown {
            return id;
        }
        let name = "(unknown)".to_string();
        let func = self.function_id(FnKey::Unknown, |_| name, None, false);
        let id = InstrId(self.instrs.len() as u32);
        self.instrs.push(Instr {
            addr: 0,
            len: 0,
            func,
            file: None,
            line: 0,
            inline: 0,
        });
        self.unknown = Some(id);
        id
    }

    /// The inlined calls instruction `id` runs in, outermost first.
    #[inline]
    pub fn inlined(&self, id: InstrId) -> &[InlineCall] {
        match self.instrs[id.0 as usize].inline {
            0 => &[],
            chain => &self.chains[chain as usize - 1],
        }
    }

    /// The function instruction `id` lies in, not an inlined one: the
    /// function its outermost inlined call was inlined into.
    pub fn outer_function(&self, id: InstrId) -> FnId {
        match self.inlined(id).first() {
            Some(call) => self.instr(call.site).func,
            None => self.instr(id).func,
        }
    }

    /// Whether inlined functions are shown as functions of their own: asked
    /// for, and a module mapped so far can give them.
    pub fn shows_inlined(&self) -> bool {
        self.inline_shown
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

    /// The name of file `id`.
    pub fn file(&self, id: FileId) -> &str {
        &self.files[id.0 as usize]
    }

    /// The modules and the warnings symbolization gave.
    pub fn symbolizer(&self) -> &Symbolizer {
        &self.symbolizer
    }

    /// The ELF address of runtime address `addr`: minus the bias of the
    /// module mapped there.
    pub fn svma(&self, addr: u64) -> u64 {
        match self.symbolizer.module_at(addr) {
            Some(id) => self.symbolizer.modules().get(id).svma(addr),
            None => addr,
        }
    }

    /// Maps an ELF object (see [`Symbolizer::add_module`]).
    pub fn add_module(&mut self, mapping: &ModuleMapping) {
        if self.inline && mapping.embedded {
            self.symbolizer.warn(format!(
                "{}: the trace carries its symbols without inlining, so its inlined \
                 functions are not shown",
                mapping.path
            ));
        }
        self.inline_shown |= self.inline && !mapping.embedded;
        self.symbolizer.add_module(mapping);
    }

    /// Adds the function `[start, end)` given by the trace. It must come
    /// before any of its code runs or is called, so that every instruction
    /// keeps the function it first got.
    pub fn add_function(
        &mut self,
        start: u64,
        end: u64,
        name: String,
        file: Option<String>,
        line: u32,
    ) -> Result<FnId, SymbolError> {
        let name = printable(&name).into_owned();
        if let Some(&addr) = self.unresolved.range(start..end).next() {
            return Err(SymbolError::TooLate {
                what: format!("function `{name}`"),
                addr,
            });
        }
        let id = FnId(self.functions.len() as u32);
        if let Err(other) = self.ranges.insert(start, end, id) {
            return Err(SymbolError::Overlap { name, other });
        }
        let file = file.map(|file| self.file_id(file));
        self.functions.push(Function {
            skip: self.skip.skips(&name, false),
            pop_on_jump: name.starts_with(RESOLVER),
            name,
            object: self.symbolizer.module_at(start),
            file,
            line,
            entry: Some(start),
            plt: false,
        });
        Ok(id)
    }

    /// Marks `[start, end)` as PLT stubs, as the trace says; ranges that
    /// overlap an earlier one are ignored.
    pub fn add_plt(&mut self, start: u64, end: u64) {
        let _ = self.plt.insert(start, end, ());
    }

    /// Records the source position of the instruction at `addr`, given by
    /// the trace; without a file, the function's file is meant.
    pub fn add_line(
        &mut self,
        addr: u64,
        line: u32,
        file: Option<String>,
    ) -> Result<(), SymbolError> {
        if self.by_addr.contains_key(&addr) {
            return Err(SymbolError::TooLate {
                what: format!("the source line of {addr:#x}"),
                addr,
            });
        }
        let file = file.map(|file| self.file_id(file));
        self.lines.insert(addr, (file, line));
        Ok(())
    }

    /// The id of the instruction at `addr`, added and symbolized on first
    /// sight. `entry` is the address the current frame was entered at; it
    /// names the function of code that no symbol covers, which has an
    /// instruction for each function whose frames run it, as Callgrind
    /// charges such code to the function of the frame that runs it (a
    /// helper that two functions of a stripped library jump to is each
    /// one's in turn).
    #[inline]
    pub fn intern(&mut self, addr: u64, len: u32, entry: u64) -> InstrId {
        match self.by_addr.get(&addr) {
            Some(&id) if !self.framed_ids.contains_key(&id) => id,
            Some(_) => self.framed_instr(addr, len, entry),
            None => {
                let id = self.add_instr(addr, len, entry);
                self.by_addr.insert(addr, id);
                id
            }
        }
    }

    /// The instruction of code at `addr`, which no symbol covers, run in
    /// the frame entered at `entry`.
    fn framed_instr(&mut self, addr: u64, len: u32, entry: u64) -> InstrId {
        let func = match self.frame_function(entry) {
            Some(func) => func,
            None => self.resolve(addr, entry).func,
        };
        match self.framed.get(&(addr, func)) {
            Some(&id) => id,
            None => self.add_instr(addr, len, entry),
        }
    }

    /// Whether instruction `id` is code no symbol covers, charged to the
    /// function of the frame that runs it (see [`Program::intern`]).
    pub fn is_framed(&self, id: InstrId) -> bool {
        self.framed_ids.contains_key(&id)
    }

    /// Where the code of instruction `id` lies: its function's region, or
    /// for code no symbol covers, which its frame's function is charged
    /// with, the region of the code itself, as a jump into it or out of it
    /// crosses Callgrind's sections wherever it runs.
    pub fn region(&self, id: InstrId) -> Region {
        match self.framed_ids.get(&id) {
            Some(&region) => region,
            None => self.function(self.instr(id).func).region(),
        }
    }

    /// The function that code no symbol covers joins when the frame that
    /// runs it was entered at `entry`, once such code ran in one.
    #[inline]
    pub fn frame_function(&self, entry: u64) -> Option<FnId> {
        self.frame_functions.get(&entry).copied()
    }

    fn add_instr(&mut self, addr: u64, len: u32, entry: u64) -> InstrId {
        let Resolved {
            func: frame_function,
            source,
            inlined,
            framed,
        } = self.resolve(addr, entry);
        let mut func = frame_function;
        let mut inline = 0;
        if !inlined.is_empty() {
            (func, inline) = self.inline_chain(func, addr, inlined);
        }
        let function = &self.functions[func.0 as usize];
        let (file, line) = match self.lines.get(&addr) {
            Some(&(file, line)) => (file.or(function.file), line),
            None => source.unwrap_or((function.file, function.line)),
        };
        if function.file.is_none() && file.is_some() {
            // A function known only by name takes the file of its first code.
            self.functions[func.0 as usize].file = file;
        }
        let id = InstrId(self.instrs.len() as u32);
        self.instrs.push(Instr {
            addr,
            len,
            func,
            file,
            line,
            inline,
        });
        if let Some(region) = framed {
            self.framed_ids.insert(id, region);
            self.framed.insert((addr, frame_function), id);
        }
        id
    }

    /// The inlined calls from `outer` down to the code at `addr`: the
    /// innermost inlined function and the chain's number.
    fn inline_chain(&mut self, outer: FnId, addr: u64, frames: Vec<InlineFrame>) -> (FnId, u32) {
        let object = self.functions[outer.0 as usize].object;
        let mut caller = outer;
        let mut chain = Vec::with_capacity(frames.len());
        for frame in frames {
            let (file, line) = match frame.call {
                Some(call) => (Some(self.file_id(call.file)), call.line),
                None => (None, 0),
            };
            let site = match self.inline_sites.get(&(caller, file, line)) {
                Some(&site) => site,
                None => {
                    let site = InstrId(self.instrs.len() as u32);
                    self.instrs.push(Instr {
                        addr,
                        len: 0,
                        func: caller,
                        file,
                        line,
                        inline: 0,
                    });
                    self.inline_sites.insert((caller, file, line), site);
                    site
                }
            };
            let own_file = frame.file.map(|file| self.file_id(file));
            let key = FnKey::Inlined(object, frame.name.clone(), own_file);
            let func = self.function_id(key, |_| frame.name, object, false);
            chain.push(InlineCall { func, site });
            caller = func;
        }
        if let Some(&id) = self.chain_ids.get(&chain) {
            return (caller, id);
        }
        self.chains.push(chain.clone());
        let id = self.chains.len() as u32;
        self.chain_ids.insert(chain, id);
        (caller, id)
    }

    /// The instruction at `addr` that ran first, if any ran there.
    pub fn instr_at(&self, addr: u64) -> Option<InstrId> {
        self.by_addr.get(&addr).copied()
    }

    /// The function whose symbol covers `addr`, if any, and the region of
    /// the code there.
    pub fn symbol_function(&mut self, addr: u64) -> (Option<FnId>, Region) {
        if let Some(func) = self.ranges.find(addr) {
            return (Some(func), self.functions[func.0 as usize].region());
        }
        let mut found = self.symbolizer.resolve(addr, false);
        found.plt |= self.plt.find(addr).is_some();
        let func = found.function.map(|(start, name)| {
            let key = FnKey::Symbol(found.module, start);
            self.function_id(key, |_| name, found.module, found.plt)
        });
        (func, Region::new(found.module, found.plt))
    }

    /// The function a call to `target` enters.
    pub fn callee(&mut self, target: u64) -> FnId {
        if let Some(&func) = self.callees.get(&target) {
            return func;
        }
        let func = self.resolve(target, target).func;
        self.callees.insert(target, func);
        func
    }

    /// The function of `addr` and, from the object's debug information, its
    /// source position and (when shown) the functions inlined there.
    fn resolve(&mut self, addr: u64, entry: u64) -> Resolved {
        if let Some(func) = self.ranges.find(addr) {
            return Resolved {
                func,
                source: None,
                inlined: Vec::new(),
                framed: None,
            };
        }
        self.unresolved.insert(addr);
        let mut found = self.symbolizer.resolve(addr, self.inline);
        found.plt |= self.plt.find(addr).is_some();
        let source = found
            .source
            .map(|source| (Some(self.file_id(source.file)), source.line));
        let module = found.module;
        let (func, framed) = match found.function {
            Some((start, name)) => (
                self.function_id(FnKey::Symbol(module, start), |_| name, module, found.plt),
                None,
            ),
            // The frame's function is the one its first code without a
            // symbol joined, whatever object later code lies in.
            None => {
                let func = match self.frame_function(entry) {
                    Some(func) => func,
                    None => {
                        let func = self.unnamed_code_function(addr, entry, module, found.plt);
                        self.frame_functions.insert(entry, func);
                        func
                    }
                };
                (func, Some(Region::new(module, found.plt)))
            }
        };
        Resolved {
            func,
            source,
            inlined: found.inlined,
            framed,
        }
    }

    /// The function that code at `addr`, which no symbol covers, joins in
    /// the frame entered at `entry`: as Callgrind charges a block to its
    /// frame's function, a named function's (the `.cold` part or a static
    /// function it jumps to, in a stripped object), or the unnamed function
    /// of the frame's entry. `module` and `plt` are the code's.
    fn unnamed_code_function(
        &mut self,
        addr: u64,
        entry: u64,
        module: Option<ModuleId>,
        plt: bool,
    ) -> FnId {
        if entry != addr
            && let (Some(func), _) = self.symbol_function(entry)
        {
            return func;
        }
        self.unresolved.insert(entry);
        let module = self.symbolizer.module_at(entry).or(module);
        // Callgrind's name: the address (in an object, its ELF address), 16
        // digits.
        let name = |program: &Program| match module {
            Some(id) => format!(
                "0x{:016x}",
                program.symbolizer.modules().get(id).svma(entry)
            ),
            None => format!("0x{entry:016x}"),
        };
        self.function_id(FnKey::Unnamed(module, entry), name, module, plt)
    }

    /// The function for `key`, created with its entry, file, line and
    /// `name`, which is made only then.
    fn function_id(
        &mut self,
        key: FnKey,
        name: impl FnOnce(&Program) -> String,
        object: Option<ModuleId>,
        plt: bool,
    ) -> FnId {
        if let Some(&id) = self.fn_ids.get(&key) {
            return id;
        }
        let name = name(self);
        let (entry, source) = match (&key, object) {
            (FnKey::Symbol(_, start), Some(module)) => {
                let bias = self.symbolizer.modules().get(module).bias;
                (
                    Some(start.wrapping_add(bias)),
                    self.symbolizer.source(module, *start),
                )
            }
            _ => (None, None),
        };
        let (file, line) = match source {
            Some(source) => (Some(self.file_id(source.file)), source.line),
            None => (None, 0),
        };
        let name = printable(&name).into_owned();
        let id = FnId(self.functions.len() as u32);
        self.functions.push(Function {
            skip: self.skip.skips(&name, plt),
            pop_on_jump: name.starts_with(RESOLVER),
            name,
            object,
            file,
            line,
            entry,
            plt,
        });
        self.fn_ids.insert(key, id);
        id
    }

    fn file_id(&mut self, name: String) -> FileId {
        if let Some(&id) = self.file_ids.get(&name) {
            return id;
        }
        let id = FileId(self.files.len() as u32);
        self.files.push(printable(&name).into_owned());
        self.file_ids.insert(name, id);
        id
    }
}

#[cfg(test)]
mod tests;
