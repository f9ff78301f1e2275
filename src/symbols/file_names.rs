//! Source file names as Valgrind makes them from a DWARF line table, where
//! they differ from the names addr2line makes.
//!
//! Both join a file's name to its directory and a relative directory to the
//! unit's compilation directory (`DW_AT_comp_dir`), but they read directory
//! 0 of a DWARF 5 table differently. addr2line takes it for the compilation
//! directory, as the standard says it is. Valgrind takes it as any other
//! entry: a relative one is joined to the compilation directory. A compiler
//! run with `-ffile-prefix-map=/build/x=.` (as Debian builds its packages)
//! writes a relative compilation directory, `./elf`, and the same as
//! directory 0, so glibc's `rtld.c` is `./elf/rtld.c` to addr2line and
//! `./elf/./elf/rtld.c` in Callgrind's profiles; one run with
//! `-fdebug-prefix-map=$PWD=/` may write `/` as the compilation directory
//! and the real one as directory 0, which Valgrind names the file after.
//! Valgrind also always joins with one `/`, where addr2line adds none after
//! a directory ending in `/`, and names a file of a unit without a
//! compilation directory `./file`, where addr2line names it `file`.

use std::borrow::Cow;

use addr2line::gimli;
use gimli::{AttributeValue, EndianSlice, RunTimeEndian};
use object::{Object, ObjectSection};
use rustc_hash::FxHashMap;

/// For the files of one object whose names Valgrind makes differently:
/// addr2line's name to Valgrind's.
#[derive(Default)]
pub struct FileNames(FxHashMap<String, String>);

type Slice<'a> = EndianSlice<'a, RunTimeEndian>;

impl FileNames {
    /// Reads the line table of every unit of `elf`, with the unit's
    /// compilation directory from its first entry in `.debug_info` (the
    /// rest of the unit is not read), and strings that `dwz` moved into
    /// the supplementary file `sup`. Files whose names cannot be read keep
    /// addr2line's names.
    pub fn read(elf: &object::File, sup: Option<&object::File>) -> FileNames {
        let sections = unit_sections(elf);
        let sup_sections = sup.map(unit_sections);
        let endian = |elf: &object::File| match elf.is_little_endian() {
            true => RunTimeEndian::Little,
            false => RunTimeEndian::Big,
        };
        let mut dwarf = sections.borrow(|section| EndianSlice::new(section, endian(elf)));
        if let (Some(sup), Some(sections)) = (sup, &sup_sections) {
            dwarf.set_sup(sections.borrow(|section| EndianSlice::new(section, endian(sup))));
        }
        // Units may share one table of abbreviations (`dwz` makes them
        // share): parsed once, not once per unit.
        dwarf.populate_abbreviations_cache(gimli::AbbreviationsCacheStrategy::Duplicates);
        let mut names = FxHashMap::default();
        let mut headers = dwarf.units();
        while let Ok(Some(header)) = headers.next() {
            let Ok(unit) = dwarf.unit(header) else {
                continue;
            };
            let Some(program) = &unit.line_program else {
                continue;
            };
            let text = |value| {
                let text = dwarf.attr_string(&unit, value).ok()?;
                Some(text.to_string_lossy().into_owned())
            };
            let comp_dir = unit.comp_dir.map(|dir| dir.to_string_lossy().into_owned());
            add_table(program.header(), comp_dir.as_deref(), text, &mut names);
        }
        FileNames(names)
    }

    /// The name Valgrind gives the file addr2line names `file`.
    pub fn valgrind(&self, file: &str) -> String {
        match self.0.get(file) {
            Some(name) => name.clone(),
            None => file.to_string(),
        }
    }
}

/// The sections of `elf` that a unit's first entry and its line table are
/// read from, decompressed; the others (locations, ranges, the types...),
/// which can be far larger, are left empty.
fn unit_sections<'a>(elf: &object::File<'a>) -> gimli::DwarfSections<Cow<'a, [u8]>> {
    use gimli::SectionId::*;
    let sections = gimli::DwarfSections::load(|id| {
        let needed = matches!(
            id,
            DebugAbbrev
                | DebugInfo
                | DebugLine
                | DebugLineStr
                | DebugStr
                | DebugStrOffsets
                | DebugAddr
        );
        let data = needed
            .then(|| elf.section_by_name(id.name()))
            .flatten()
            .and_then(|section| section.uncompressed_data().ok());
        Ok::<_, std::convert::Infallible>(data.unwrap_or(Cow::Borrowed(&[])))
    });
    let Ok(sections) = sections;
    sections
}

/// Adds the files of one unit's line table that the two name differently,
/// given the unit's compilation directory and how to read a name. A name
/// made by another table first keeps that table's meaning.
fn add_table<'a>(
    header: &gimli::LineProgramHeader<Slice<'a>>,
    comp_dir: Option<&str>,
    text: impl Fn(AttributeValue<Slice<'a>>) -> Option<String>,
    names: &mut FxHashMap<String, String>,
) {
    let version = header.version();
    for file in header.file_names() {
        let Some(name) = text(file.path_name()) else {
            continue;
        };
        let index = file.directory_index();
        let dir = match file.directory(header) {
            Some(dir) => match text(dir) {
                Some(dir) => Some(dir),
                None => continue,
            },
            None => None,
        };
        let ours = addr2line_name(comp_dir, index, dir.as_deref(), &name);
        let theirs = valgrind_name(version, comp_dir, index, dir.as_deref(), &name);
        if ours != theirs {
            names.entry(ours).or_insert(theirs);
        }
    }
}

/// addr2line's name: the compilation directory, the directory unless it
/// is number 0, the file, each absolute one replacing what came before.
fn addr2line_name(comp_dir: Option<&str>, index: u64, dir: Option<&str>, file: &str) -> String {
    let mut path = comp_dir.unwrap_or_default().to_string();
    if index != 0
        && let Some(dir) = dir
    {
        push(&mut path, dir);
    }
    push(&mut path, file);
    path
}

/// Appends `part` to `path` as addr2line does.
fn push(path: &mut String, part: &str) {
    if part.starts_with('/') {
        *path = part.to_string();
    } else {
        if !path.is_empty() && !path.ends_with('/') {
            path.push('/');
        }
        path.push_str(part);
    }
}

/// Valgrind's name: a listed directory joined to a non-empty compilation
/// directory unless it is absolute (before DWARF 5, directory 0 is the
/// compilation directory itself, or `.`), then the file joined to a
/// non-empty directory.
fn valgrind_name(
    version: u16,
    comp_dir: Option<&str>,
    index: u64,
    dir: Option<&str>,
    file: &str,
) -> String {
    let dir = match (version < 5 && index == 0, dir) {
        (true, _) => Some(comp_dir.unwrap_or(".").to_string()),
        (false, Some(dir)) => Some(match comp_dir {
            Some(comp_dir) if !comp_dir.is_empty() && !dir.starts_with('/') => {
                format!("{comp_dir}/{dir}")
            }
            _ => dir.to_string(),
        }),
        (false, None) => None,
    };
    match dir {
        Some(dir) if !dir.is_empty() => format!("{dir}/{file}"),
        _ => file.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_relative_directory_0_of_dwarf_5_is_joined_to_the_compilation_directory() {
        let (comp_dir, dir0) = (Some("./elf"), Some("./elf"));
        assert_eq!(addr2line_name(comp_dir, 0, dir0, "rtld.c"), "./elf/rtld.c");
        assert_eq!(
            valgrind_name(5, comp_dir, 0, dir0, "rtld.c"),
            "./elf/./elf/rtld.c"
        );
        // Other relative directories are joined alike by both.
        let other = Some("../sysdeps/nptl");
        assert_eq!(
            addr2line_name(Some("./csu"), 3, other, "x.h"),
            valgrind_name(5, Some("./csu"), 3, other, "x.h"),
        );
    }

    #[test]
    fn absolute_directories_name_alike() {
        let dir0 = Some("/src/app");
        assert_eq!(addr2line_name(dir0, 0, dir0, "main.c"), "/src/app/main.c");
        assert_eq!(valgrind_name(5, dir0, 0, dir0, "main.c"), "/src/app/main.c");
        assert_eq!(
            valgrind_name(5, dir0, 1, Some("/usr/include"), "stdio.h"),
            "/usr/include/stdio.h"
        );
        assert_eq!(
            addr2line_name(dir0, 1, Some("/usr/include"), "stdio.h"),
            "/usr/include/stdio.h"
        );
    }

    #[test]
    fn before_dwarf_5_directory_0_is_the_compilation_directory_or_dot() {
        assert_eq!(valgrind_name(4, Some("/src"), 0, None, "a.c"), "/src/a.c");
        assert_eq!(valgrind_name(4, None, 0, None, "a.c"), "./a.c");
        assert_eq!(addr2line_name(None, 0, None, "a.c"), "a.c");
        assert_eq!(valgrind_name(4, Some(""), 0, None, "a.c"), "a.c");
        assert_eq!(
            valgrind_name(4, Some("/src"), 2, Some("inc"), "b.h"),
            "/src/inc/b.h"
        );
    }

    #[test]
    fn valgrind_joins_with_one_slash_whatever_the_parts() {
        assert_eq!(
            valgrind_name(5, Some("/src/"), 1, Some("inc"), "b.h"),
            "/src//inc/b.h"
        );
        assert_eq!(
            addr2line_name(Some("/src/"), 1, Some("inc"), "b.h"),
            "/src/inc/b.h"
        );
        assert_eq!(
            valgrind_name(5, Some("/src"), 1, Some("inc"), "/abs/b.h"),
            "/src/inc//abs/b.h"
        );
    }
}
