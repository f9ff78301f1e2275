//! One ELF object's symbols: function names from the symbol table (or the
//! dynamic one when the object is stripped), source lines from DWARF, PLT
//! sections and the build-id. An object is parsed once and then answers
//! lookups by ELF address (`svma`).

use std::borrow::Cow;
use std::fs::File;
use std::path::Path;

use object::{Object, ObjectSection, ObjectSegment, ObjectSymbol, SymbolKind};

/// A function symbol: `[start, end)` in ELF addresses, demangled name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ElfFunction {
    pub start: u64,
    pub end: u64,
    pub name: String,
}

/// A source position from the DWARF line table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceLine {
    pub file: String,
    pub line: u32,
}

/// One level of inlining at an address: the inlined function and where its
/// caller called it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InlineFrame {
    pub name: String,
    pub call: Option<SourceLine>,
}

/// A parsed ELF object.
pub struct ElfObject {
    build_id: Option<Vec<u8>>,
    /// Sorted by start, one symbol per start address.
    functions: Vec<ElfFunction>,
    plt: Vec<(u64, u64)>,
    load_range: Option<(u64, u64)>,
    dwarf: addr2line::Loader,
}

/// Sections holding PLT stubs, which Callgrind skips by default.
const PLT_SECTIONS: [&str; 4] = [".plt", ".plt.sec", ".plt.got", ".iplt"];

impl ElfObject {
    /// Reads and parses the object at `path`.
    pub fn open(path: &Path) -> Result<ElfObject, String> {
        let file = File::open(path).map_err(|err| err.to_string())?;
        // SAFETY: the map is read-only and private; if another process
        // truncates the file meanwhile, reads may fault, as with any reader
        // of a changing file.
        let data = unsafe { memmap2::Mmap::map(&file) }.map_err(|err| err.to_string())?;
        let elf = object::File::parse(&*data).map_err(|err| err.to_string())?;
        let build_id = elf.build_id().ok().flatten().map(<[u8]>::to_vec);
        let load_range = elf.segments().fold(None, |range, segment| {
            let (start, end) = (segment.address(), segment.address() + segment.size());
            Some(match range {
                None => (start, end),
                Some((lo, hi)) => (start.min(lo), end.max(hi)),
            })
        });
        let plt = elf
            .sections()
            .filter(|section| {
                section
                    .name()
                    .is_ok_and(|name| PLT_SECTIONS.contains(&name))
            })
            .map(|section| (section.address(), section.address() + section.size()))
            .collect();
        let functions = function_symbols(&elf);
        let dwarf = addr2line::Loader::new(path).map_err(|err| err.to_string())?;
        Ok(ElfObject {
            build_id,
            functions,
            plt,
            load_range,
            dwarf,
        })
    }

    /// The GNU build-id note, if the object has one.
    pub fn build_id(&self) -> Option<&[u8]> {
        self.build_id.as_deref()
    }

    /// ELF addresses covered by the loadable segments.
    pub fn load_range(&self) -> Option<(u64, u64)> {
        self.load_range
    }

    /// The function symbol containing `svma`.
    pub fn function(&self, svma: u64) -> Option<&ElfFunction> {
        let after = self.functions.partition_point(|f| f.start <= svma);
        let function = self.functions[..after].last()?;
        (svma < function.end).then_some(function)
    }

    /// The outermost function DWARF names at `svma`, for objects whose
    /// symbol table lacks it.
    pub fn dwarf_function(&self, svma: u64) -> Option<String> {
        let mut frames = self.dwarf.find_frames(svma).ok()?;
        let mut outermost = None;
        while let Ok(Some(frame)) = frames.next() {
            if let Some(name) = frame.function {
                outermost = name.demangle().ok().map(Cow::into_owned);
            }
        }
        outermost
    }

    /// The functions inlined at `svma`, outermost first: for each, its name
    /// and the position of the call in the function it was inlined into.
    pub fn inlined(&self, svma: u64) -> Vec<InlineFrame> {
        let Ok(mut frames) = self.dwarf.find_frames(svma) else {
            return Vec::new();
        };
        // Innermost first; each frame's location is the call of the frame
        // inside it (the innermost's, the instruction itself).
        let mut levels: Vec<(Option<String>, Option<SourceLine>)> = Vec::new();
        while let Ok(Some(frame)) = frames.next() {
            let name = frame
                .function
                .and_then(|name| name.demangle().ok().map(Cow::into_owned));
            let location = frame.location.and_then(|location| {
                Some(SourceLine {
                    file: location.file?.to_string(),
                    line: location.line.unwrap_or(0),
                })
            });
            levels.push((name, location));
        }
        (0..levels.len().saturating_sub(1))
            .rev()
            .map(|k| InlineFrame {
                name: levels[k]
                    .0
                    .clone()
                    .unwrap_or_else(|| "(inlined)".to_string()),
                call: levels[k + 1].1.clone(),
            })
            .collect()
    }

    /// The source file and line of the code at `svma`, from the line table:
    /// for inlined code, the inlined function's own position.
    pub fn source(&self, svma: u64) -> Option<SourceLine> {
        let location = self.dwarf.find_location(svma).ok()??;
        Some(SourceLine {
            file: location.file?.to_string(),
            line: location.line.unwrap_or(0),
        })
    }

    /// True for addresses in a PLT section.
    pub fn is_plt(&self, svma: u64) -> bool {
        self.plt
            .iter()
            .any(|&(start, end)| start <= svma && svma < end)
    }
}

/// The text symbols of `elf` as functions, demangled, sorted, one per start
/// address; a symbol without a size reaches to the next one, or to the end
/// of its section.
fn function_symbols(elf: &object::File) -> Vec<ElfFunction> {
    let symbols = if elf.symbols().next().is_some() {
        elf.symbols()
    } else {
        elf.dynamic_symbols()
    };
    let section_end = |s: &object::Symbol| {
        let index = s.section_index()?;
        let section = elf.section_by_index(index).ok()?;
        Some(section.address() + section.size())
    };
    let mut candidates: Vec<(u64, u64, u8, String)> = symbols
        .filter(|s| s.kind() == SymbolKind::Text && s.is_definition() && s.address() != 0)
        .filter_map(|s| {
            let name = s.name().ok()?;
            let rank = if s.is_weak() {
                1
            } else if s.is_global() {
                0
            } else {
                2
            };
            let size = match s.size() {
                0 => section_end(&s)?.saturating_sub(s.address()),
                size => size,
            };
            Some((s.address(), size, rank, name.to_string()))
        })
        .collect();
    // Among aliases at one address prefer a global, then fewer leading
    // underscores, then the shorter name: `qsort` over `__qsort`.
    candidates.sort_by(|a, b| {
        let underscores = |name: &str| name.len() - name.trim_start_matches('_').len();
        (a.0, a.2, underscores(&a.3), a.3.len(), &a.3).cmp(&(
            b.0,
            b.2,
            underscores(&b.3),
            b.3.len(),
            &b.3,
        ))
    });
    candidates.dedup_by_key(|c| c.0);
    let mut functions: Vec<ElfFunction> = Vec::with_capacity(candidates.len());
    for (i, (start, size, _, name)) in candidates.iter().enumerate() {
        let next = candidates.get(i + 1).map_or(u64::MAX, |c| c.0);
        functions.push(ElfFunction {
            start: *start,
            end: (start + size).min(next),
            name: addr2line::demangle_auto(Cow::Borrowed(name), None).into_owned(),
        });
    }
    functions
}
