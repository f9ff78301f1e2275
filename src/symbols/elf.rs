//! One ELF object's symbols: function names from the symbol table (or the
//! dynamic one when the object is stripped), source lines from DWARF, PLT
//! sections and the build-id. An object is parsed once and then answers
//! lookups by ELF address (`svma`).

use std::collections::BTreeMap;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock, PoisonError};

use object::{Object, ObjectSection, ObjectSegment, ObjectSymbol, SectionFlags, SymbolKind, elf};

use super::compressed::check_compressed_sections;
use super::demangle;
use super::file_names::FileNames;
use crate::regular_file::open_regular;

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
    /// The file of its own code there: two inlined functions of one name
    /// in two files (C's `static inline` helpers) are two functions.
    pub file: Option<String>,
}

/// A parsed ELF object.
pub struct ElfObject {
    build_id: Option<Vec<u8>>,
    /// Sorted by start, one symbol per start address.
    functions: Vec<ElfFunction>,
    plt: Vec<(u64, u64)>,
    load_range: Option<(u64, u64)>,
    /// Its DWARF, or why it could not be read.
    dwarf: Result<addr2line::Loader, String>,
    /// Its separate debug file, where that was found and its DWARF could
    /// not be read, and why (the object's own DWARF is read instead).
    debug_error: Option<(PathBuf, String)>,
    /// The object `dwarf` reads.
    dwarf_data: memmap2::Mmap,
    /// The supplementary file `dwarf` reads, if it has one.
    sup_data: Option<memmap2::Mmap>,
    /// The files addr2line names otherwise than Valgrind, read from
    /// `dwarf_data` at the first source position asked for.
    file_names: OnceLock<FileNames>,
}

/// Sections holding PLT stubs, which Callgrind skips by default.
const PLT_SECTIONS: [&str; 4] = [".plt", ".plt.sec", ".plt.got", ".iplt"];

/// The address ranges of `elf`'s PLT stubs (its `.plt`, `.plt.sec`,
/// `.plt.got` and `.iplt` sections), as the object gives them.
pub fn plt_ranges(elf: &object::File) -> Vec<(u64, u64)> {
    elf.sections()
        .filter(|section| {
            section
                .name()
                .is_ok_and(|name| PLT_SECTIONS.contains(&name))
        })
        .map(|section| {
            let start = section.address();
            (start, start.saturating_add(section.size()))
        })
        .filter(|&(start, end)| start < end)
        .collect()
}

/// Where separate debug files live, as gdb and Valgrind look for them.
const DEBUG_DIR: &str = "/usr/lib/debug";

/// The object file at `path`, mapped read-only; only a regular file is
/// opened ([`open_regular`]).
pub fn map_file(path: &Path) -> Result<memmap2::Mmap, String> {
    let file = open_regular(path).map_err(|err| err.to_string())?;
    // SAFETY: the map is read-only and private; if another process truncates
    // the file meanwhile, reads may fault, as with any reader of a changing
    // file.
    unsafe { memmap2::Mmap::map(&file) }.map_err(|err| err.to_string())
}

/// The separate debug file of an object, mapped, if one is installed: by build-id
/// (`/usr/lib/debug/.build-id/ab/cdef….debug`), else by its debug link
/// (next to it, in `.debug/`, or under `/usr/lib/debug`) whose checksum
/// matches the link's, as Valgrind takes it: a debug file of another build
/// would name the code wrongly.
fn debug_file(path: &Path, elf: &object::File) -> Option<(PathBuf, memmap2::Mmap)> {
    if let Some(id) = elf.build_id().ok().flatten()
        && let Some(candidate) = by_build_id(id)
        && let Some(data) = mapped_with_build_id(&candidate, id)
    {
        return Some((candidate, data));
    }
    let (name, crc) = elf.gnu_debuglink().ok()??;
    let name = std::str::from_utf8(name).ok()?;
    let dir = path.parent()?;
    let under_debug = Path::new(DEBUG_DIR).join(dir.strip_prefix("/").unwrap_or(dir));
    [
        dir.join(name),
        dir.join(".debug").join(name),
        under_debug.join(name),
    ]
    .into_iter()
    .find_map(|candidate| {
        (candidate != path && checksum(&candidate) == Some(crc)).then_some(())?;
        let data = map_file(&candidate).ok()?;
        Some((candidate, data))
    })
}

/// The file at `path`, mapped, if it is an ELF object of build-id `id`: a
/// debug file installed under another build's id, or not readable, is not
/// taken.
fn mapped_with_build_id(path: &Path, id: &[u8]) -> Option<memmap2::Mmap> {
    let data = map_file(path).ok()?;
    let elf = object::File::parse(&*data).ok()?;
    (elf.build_id().ok()?? == id).then_some(())?;
    Some(data)
}

/// Where a debug file of build-id `id` is installed:
/// `/usr/lib/debug/.build-id/ab/cdef….debug` (none for an id of one byte).
fn by_build_id(id: &[u8]) -> Option<PathBuf> {
    let hex = super::hex(id);
    (hex.len() > 2).then(|| {
        Path::new(DEBUG_DIR)
            .join(".build-id")
            .join(&hex[..2])
            .join(format!("{}.debug", &hex[2..]))
    })
}

/// The CRC-32 of the file at `path`, as a debug link gives it, computed
/// once per version of the file (its size and time of change) however many
/// times objects linking to it are opened: a debug file may be hundreds of
/// megabytes.
fn checksum(path: &Path) -> Option<u32> {
    type Version = (PathBuf, u64, std::time::SystemTime);
    static CHECKSUMS: Mutex<BTreeMap<Version, u32>> = Mutex::new(BTreeMap::new());
    let meta = std::fs::metadata(path).ok()?;
    let version = (path.to_path_buf(), meta.len(), meta.modified().ok()?);
    let mut checksums = CHECKSUMS.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(&crc) = checksums.get(&version) {
        return Some(crc);
    }
    let crc = crc32fast::hash(&map_file(path).ok()?);
    checksums.insert(version, crc);
    Some(crc)
}

/// The supplementary file whose DWARF the object at `path` shares with
/// others (`dwz -m`, as Debian's and Fedora's debug packages are built),
/// mapped, as Valgrind finds it: by the build-id its debug alt link gives,
/// under `/usr/lib/debug`, else at the path the link names (relative to the
/// object's folder), either only with that build-id, since a file that
/// `dwz` wrote again for other objects would be read at the wrong offsets.
/// Without it, every function inlined from shared DWARF has no name.
fn supplementary_file(path: &Path, elf: &object::File) -> Option<(PathBuf, memmap2::Mmap)> {
    let (name, build_id) = elf.gnu_debugaltlink().ok()??;
    let named = path.parent()?.join(std::ffi::OsStr::from_bytes(name));
    let mut candidates = by_build_id(build_id).into_iter().chain([named]);
    candidates.find_map(|candidate| {
        let data = mapped_with_build_id(&candidate, build_id)?;
        check_compressed_sections(&object::File::parse(&*data).ok()?).ok()?;
        Some((candidate, data))
    })
}

/// Where addr2line looks for the DWARF package of the object at `path`:
/// `.dwp` added to its extension, or as its extension.
fn dwarf_package(path: &Path) -> PathBuf {
    let extension = match path.extension() {
        Some(extension) => {
            let mut extension = extension.to_os_string();
            extension.push(".dwp");
            extension
        }
        None => "dwp".into(),
    };
    path.with_extension(extension)
}

/// The DWARF of the object at `path`, with its supplementary file when it
/// has one that can be read (else without: the object's own DWARF still
/// names most of its code).
fn dwarf_of(
    path: &Path,
    elf: &object::File,
) -> Result<(addr2line::Loader, Option<memmap2::Mmap>), String> {
    check_compressed_sections(elf)?;
    // addr2line reads `app.dwp` beside `app` if it can open it, and would
    // wait forever on a pipe of that name (a folder it passes over).
    let package = dwarf_package(path);
    if std::fs::metadata(&package).is_ok_and(|meta| {
        let kind = meta.file_type();
        kind.is_fifo() || kind.is_char_device() || kind.is_block_device() || kind.is_socket()
    }) {
        return Err(format!(
            "its DWARF package {} is a pipe or a device",
            package.display()
        ));
    }
    if let Ok(data) = map_file(&package)
        && let Ok(elf) = object::File::parse(&*data)
    {
        check_compressed_sections(&elf)
            .map_err(|why| format!("its DWARF package {}: {why}", package.display()))?;
    }
    if let Some((sup, sup_data)) = supplementary_file(path, elf)
        && let Ok(dwarf) = addr2line::Loader::new_with_sup(path, Some(sup))
    {
        return Ok((dwarf, Some(sup_data)));
    }
    let dwarf = addr2line::Loader::new(path).map_err(|err| err.to_string())?;
    Ok((dwarf, None))
}

impl ElfObject {
    /// Reads and parses the object at `path`, with its separate debug file
    /// when one is installed.
    pub fn open(path: &Path) -> Result<ElfObject, String> {
        let data = map_file(path)?;
        let elf = object::File::parse(&*data).map_err(|err| err.to_string())?;
        // A note of no bytes identifies nothing; traces hold none then.
        let build_id = elf
            .build_id()
            .ok()
            .flatten()
            .filter(|id| !id.is_empty())
            .map(<[u8]>::to_vec);
        let debug = debug_file(path, &elf);
        let load_range = elf.segments().fold(None, |range, segment| {
            let start = segment.address();
            let end = start.saturating_add(segment.size());
            Some(match range {
                None => (start, end),
                Some((lo, hi)) => (start.min(lo), end.max(hi)),
            })
        });
        let plt = plt_ranges(&elf);
        let mut functions = function_symbols(&elf);
        let (mut dwarf, mut debug_error) = (None, None);
        if let Some((debug, debug_data)) = debug
            && let Ok(debug_elf) = object::File::parse(&*debug_data)
        {
            let more = function_symbols(&debug_elf);
            if more.len() > functions.len() {
                functions = more;
            }
            match dwarf_of(&debug, &debug_elf) {
                Ok((loader, sup_data)) => dwarf = Some((loader, debug_data, sup_data)),
                Err(why) => debug_error = Some((debug, why)),
            }
        }
        // DWARF that cannot be read (of a version or form too new, or
        // damaged) leaves the functions to the symbol table, as Valgrind
        // keeps an object's symbols when it gives up on its debug info.
        let (dwarf, dwarf_data, sup_data) = match dwarf {
            Some((dwarf, dwarf_data, sup_data)) => (Ok(dwarf), dwarf_data, sup_data),
            None => match dwarf_of(path, &elf) {
                Ok((dwarf, sup_data)) => (Ok(dwarf), data, sup_data),
                Err(why) => (Err(why), data, None),
            },
        };
        Ok(ElfObject {
            build_id,
            functions,
            plt,
            load_range,
            dwarf,
            debug_error,
            dwarf_data,
            sup_data,
            file_names: OnceLock::new(),
        })
    }

    /// The GNU build-id note, if the object has one that is not empty.
    pub fn build_id(&self) -> Option<&[u8]> {
        self.build_id.as_deref()
    }

    /// Why its DWARF could not be read, if it could not: it then gives no
    /// source lines and no inlined functions.
    pub fn dwarf_error(&self) -> Option<&str> {
        self.dwarf.as_ref().err().map(String::as_str)
    }

    /// Its separate debug file, if its DWARF could not be read, and why.
    pub fn debug_file_error(&self) -> Option<(&Path, &str)> {
        let (path, why) = self.debug_error.as_ref()?;
        Some((path, why))
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

    /// The functions inlined at `svma`, outermost first: for each, its name
    /// and the position of the call in the function it was inlined into.
    pub fn inlined(&self, svma: u64) -> Vec<InlineFrame> {
        let Ok(dwarf) = &self.dwarf else {
            return Vec::new();
        };
        let Ok(mut frames) = dwarf.find_frames(svma) else {
            return Vec::new();
        };
        // Innermost first; each frame's location is the call of the frame
        // inside it (the innermost's, the instruction itself).
        let mut levels: Vec<(Option<String>, Option<SourceLine>)> = Vec::new();
        while let Ok(Some(frame)) = frames.next() {
            let name = frame
                .function
                .and_then(|name| name.raw_name().ok().map(|name| demangle(&name)));
            let location = frame.location.and_then(|location| {
                Some(SourceLine {
                    file: self.file_name(location.file?),
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
                file: levels[k].1.as_ref().map(|own| own.file.clone()),
            })
            .collect()
    }

    /// The source file and line of the code at `svma`, from the line table:
    /// for inlined code, the inlined function's own position.
    pub fn source(&self, svma: u64) -> Option<SourceLine> {
        let location = self.dwarf.as_ref().ok()?.find_location(svma).ok()??;
        Some(SourceLine {
            file: self.file_name(location.file?),
            line: location.line.unwrap_or(0),
        })
    }

    /// The name Valgrind gives the file addr2line names `file`.
    fn file_name(&self, file: &str) -> String {
        let names = self
            .file_names
            .get_or_init(|| match object::File::parse(&*self.dwarf_data) {
                Ok(elf) => {
                    let sup =
                        (self.sup_data.as_deref()).and_then(|sup| object::File::parse(sup).ok());
                    FileNames::read(&elf, sup.as_ref())
                }
                Err(_) => FileNames::default(),
            });
        names.valgrind(file)
    }

    /// The PLT sections' ELF address ranges.
    pub fn plt_sections(&self) -> &[(u64, u64)] {
        &self.plt
    }

    /// True for addresses in a PLT section.
    pub fn is_plt(&self, svma: u64) -> bool {
        self.plt
            .iter()
            .any(|&(start, end)| start <= svma && svma < end)
    }
}

/// Whether Valgrind shows `a` rather than `b` for a function named both
/// (its `preferName`): `PMPI_f` over `MPI_f`; then a name that is not
/// empty or blank; then the shorter name, counting a versioned one up to
/// its `@`; then a versioned name; then the first in byte order. So `qsort`
/// over `__qsort`, `bcmp` over `memcmp`, `__acos_finite@GLIBC_2.15` over
/// `__ieee754_acos`, `____strtoul_l_internal` over
/// `__GI_____strtoul_l_internal`, `__libc_start_main@@GLIBC_2.34` over
/// `__libc_start_main@GLIBC_2.2.5`, `_Exit` over `_exit`.
fn prefer(a: &str, b: &str) -> bool {
    let profiles = |p: &str, of: &str| of.starts_with("MPI_") && p.strip_prefix('P') == Some(of);
    if profiles(b, a) {
        return false;
    }
    if profiles(a, b) {
        return true;
    }
    let unversioned = |name: &str| name.find('@').unwrap_or(name.len());
    let blank = |name: &str| name.chars().all(|c| c.is_ascii_whitespace());
    let versioned = |name: &str| name.contains('@');
    let (length_a, length_b) = (unversioned(a), unversioned(b));
    ((length_a == 0).cmp(&(length_b == 0)))
        .then(blank(a).cmp(&blank(b)))
        .then(length_a.cmp(&length_b))
        .then(versioned(b).cmp(&versioned(a)))
        .then(a.cmp(b))
        .is_le()
}

/// Makes `(start, size, name)` symbols one per start address, sorted, as
/// Valgrind does: of aliases over the same range, the name it shows; of
/// symbols that start together but end apart, the shorter keeps the start
/// and the longer is left what lies past it (a hand-written function and
/// a label of its first part, each with its own size), until no two start
/// together.
fn canonicalise(symbols: &mut Vec<(u64, u64, String)>) {
    loop {
        symbols.sort_by(|a, b| (a.0, a.1, &a.2).cmp(&(b.0, b.1, &b.2)));
        symbols.dedup_by(|later, kept| {
            if (later.0, later.1) != (kept.0, kept.1) {
                return false;
            }
            if !prefer(&kept.2, &later.2) {
                std::mem::swap(kept, later);
            }
            true
        });
        let mut moved = false;
        let mut shortest: Option<(u64, u64)> = None;
        for symbol in symbols.iter_mut() {
            match shortest {
                Some((start, size)) if symbol.0 == start => {
                    // Past the end of the address space: nothing is left.
                    symbol.0 = start.checked_add(size).unwrap_or(start);
                    symbol.1 = if symbol.0 == start {
                        0
                    } else {
                        symbol.1 - size
                    };
                    moved = true;
                }
                _ => shortest = Some((symbol.0, symbol.1)),
            }
        }
        if !moved {
            return;
        }
        symbols.retain(|symbol| symbol.1 > 0);
    }
}

/// The text symbols of `elf` as functions, demangled, sorted, one per start
/// address, each ending where the next begins at the latest.
fn function_symbols(elf: &object::File) -> Vec<ElfFunction> {
    let symbols = if elf.symbols().next().is_some() {
        elf.symbols()
    } else {
        elf.dynamic_symbols()
    };
    // `is_definition` leaves out GNU indirect functions (strlen and the like
    // in glibc), which are code all the same. Symbols without a size are
    // left out, as Valgrind leaves them out (crt's frame_dummy and such).
    // Valgrind takes a data object in a code section (an assembler's table
    // in `.text`) for a function too. Code sections are told by their
    // flags: a separate debug file holds them without their bytes.
    let in_code = |s: &object::Symbol| {
        s.section_index()
            .and_then(|index| elf.section_by_index(index).ok())
            .is_some_and(|section| match section.flags() {
                SectionFlags::Elf { sh_flags } => sh_flags & u64::from(elf::SHF_EXECINSTR) != 0,
                _ => false,
            })
    };
    let mut candidates: Vec<(u64, u64, String)> = symbols
        .filter(|s| match s.kind() {
            SymbolKind::Text => true,
            SymbolKind::Data => in_code(s),
            _ => false,
        })
        .filter(|s| !s.is_undefined() && s.address() != 0)
        .filter(|s| s.size() > 0)
        // A name that is not UTF-8 (Latin-1 in an assembler label) is
        // kept, its odd bytes replaced.
        .filter_map(|s| {
            let name = String::from_utf8_lossy(s.name_bytes().ok()?).into_owned();
            Some((s.address(), s.size(), name))
        })
        .collect();
    canonicalise(&mut candidates);
    let mut functions: Vec<ElfFunction> = Vec::with_capacity(candidates.len());
    for (i, (start, size, name)) in candidates.iter().enumerate() {
        let next = candidates.get(i + 1).map_or(u64::MAX, |c| c.0);
        let name = match name.as_str() {
            // The C library's code below main, named as Valgrind names it.
            "__libc_start_main" | "__libc_start_call_main" | "generic_start_main" | "_start" => {
                "(below main)".to_string()
            }
            name => demangle(name),
        };
        functions.push(ElfFunction {
            start: *start,
            end: start.saturating_add(*size).min(next),
            name,
        });
    }
    functions
}

#[cfg(test)]
mod tests {
    use super::{canonicalise, mapped_with_build_id, prefer};

    #[test]
    fn a_debug_file_is_taken_only_with_the_objects_build_id() {
        use object::Object;
        let exe = std::env::current_exe().unwrap();
        let data = std::fs::read(&exe).unwrap();
        let elf = object::File::parse(&*data).unwrap();
        let Some(id) = elf.build_id().unwrap() else {
            return; // linked without a build-id: nothing to tell apart
        };
        assert!(mapped_with_build_id(&exe, id).is_some_and(|mapped| *mapped == *data));
        let mut other = id.to_vec();
        other[0] ^= 1;
        assert!(mapped_with_build_id(&exe, &other).is_none());
        assert!(mapped_with_build_id(exe.parent().unwrap(), id).is_none());
        assert!(mapped_with_build_id(std::path::Path::new("/nonexistent"), id).is_none());
    }

    #[test]
    fn symbols_that_start_together_but_end_apart_split_their_range() {
        let symbol = |start, size, name: &str| (start, size, name.to_string());
        let mut symbols = vec![
            symbol(0x100, 0x20, "whole"),
            symbol(0x100, 0x8, "first_part"),
            symbol(0x100, 0x8, "__first_part"),
            symbol(0x100, 0x10, "middle"),
            symbol(0x90, 0x10, "before"),
            symbol(0x108, 0x4, "inside"),
        ];
        canonicalise(&mut symbols);
        assert_eq!(
            symbols,
            [
                symbol(0x90, 0x10, "before"),
                symbol(0x100, 0x8, "first_part"),
                symbol(0x108, 0x4, "inside"),
                symbol(0x10c, 0x4, "middle"),
                symbol(0x110, 0x10, "whole"),
            ]
        );
        // At the top of the address space, what lies past the end is none.
        let mut top = vec![symbol(u64::MAX, 1, "last"), symbol(u64::MAX, 4, "wider")];
        canonicalise(&mut top);
        assert_eq!(top, [symbol(u64::MAX, 1, "last")]);
        let mut near_top = vec![symbol(u64::MAX - 3, 2, "a"), symbol(u64::MAX - 3, 8, "b")];
        canonicalise(&mut near_top);
        assert_eq!(
            near_top,
            [symbol(u64::MAX - 3, 2, "a"), symbol(u64::MAX - 1, 6, "b")]
        );
    }

    #[test]
    fn aliases_are_named_as_valgrind_names_them() {
        let pairs = [
            ("qsort", "__qsort"),
            ("bcmp", "memcmp"),
            ("__acos_finite@GLIBC_2.15", "__ieee754_acos"),
            ("____strtoul_l_internal", "__GI_____strtoul_l_internal"),
            (
                "__libc_start_main@@GLIBC_2.34",
                "__libc_start_main@GLIBC_2.2.5",
            ),
            ("memcpy@@GLIBC_2.14", "memcpy"),
            ("_Exit", "_exit"),
            ("PMPI_Send", "MPI_Send"),
            ("f", ""),
            ("f", "  "),
            ("f", "@GLIBC_2.2.5"),
        ];
        for (preferred, other) in pairs {
            assert!(prefer(preferred, other), "{preferred} over {other}");
            assert!(
                !prefer(other, preferred),
                "{preferred} over {other}, either way"
            );
        }
        assert!(prefer("same", "same"));
    }
}
