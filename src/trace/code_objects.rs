//! The program's binaries, for traces that list instructions but not calls
//! (Lackey, Dinero): each distinct instruction address is decoded once,
//! with capstone, from the bytes of the binary mapped there, to tell calls
//! and returns from other instructions.

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use capstone::arch::BuildsCapstone;
use capstone::{Capstone, InsnGroupType};
use object::{Object, ObjectKind, ObjectSection, SectionKind};
use rustc_hash::FxHashMap;

use super::{Event, ModuleMapping};

/// Where Valgrind loads a position-independent executable on amd64.
pub const VALGRIND_PIE_BIAS: u64 = 0x108000;

/// A binary and its bias (runtime address minus ELF address), as given
/// with `--binary PATH[:BIAS]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Binary {
    pub path: PathBuf,
    /// Hex; when absent, 0 for a fixed-address executable and
    /// [`VALGRIND_PIE_BIAS`] for a position-independent one.
    pub bias: Option<u64>,
}

impl FromStr for Binary {
    type Err = String;

    fn from_str(text: &str) -> Result<Binary, String> {
        let (path, bias) = match text.rsplit_once(':') {
            Some((path, bias)) => {
                let digits = bias.trim_start_matches("0x");
                let bias = u64::from_str_radix(digits, 16)
                    .map_err(|_| format!("bad bias `{bias}` in `{text}`: expected hex"))?;
                (path, Some(bias))
            }
            None => (text, None),
        };
        Ok(Binary {
            path: PathBuf::from(path),
            bias,
        })
    }
}

/// What an instruction does to the call stack.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transfer {
    Other,
    Call,
    Return,
    /// No binary given has code there.
    Unknown,
}

struct CodeObject {
    path: String,
    bias: u64,
    data: memmap2::Mmap,
    /// Code sections: ELF address, file offset, size.
    sections: Vec<(u64, u64, u64)>,
    /// PLT sections: ELF start and end.
    plt: Vec<(u64, u64)>,
}

impl CodeObject {
    /// Up to 15 bytes of code at runtime address `addr`, if this object
    /// has code there.
    fn code_at(&self, addr: u64) -> Option<&[u8]> {
        let svma = addr.wrapping_sub(self.bias);
        let &(start, offset, size) = self
            .sections
            .iter()
            .find(|&&(start, _, size)| start <= svma && svma - start < size)?;
        // Offsets from a damaged header may overflow: no code there.
        let from = usize::try_from(offset.checked_add(svma - start)?).ok()?;
        let to = usize::try_from(offset.checked_add(size)?).ok()?;
        self.data.get(from..to.min(from.saturating_add(15)))
    }
}

/// The binaries given, and what each instruction decoded so far does.
pub struct CodeObjects {
    objects: Vec<CodeObject>,
    decoder: Capstone,
    transfers: FxHashMap<u64, Transfer>,
}

// SAFETY: a capstone handle has no tie to the thread that opened it; the
// objects move to the decoding thread whole and are never shared.
unsafe impl Send for CodeObjects {}

/// A binary that cannot be used.
#[derive(Debug)]
pub struct BinaryError {
    pub path: PathBuf,
    pub why: String,
}

impl fmt::Display for BinaryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "--binary {}: {}", self.path.display(), self.why)
    }
}

impl std::error::Error for BinaryError {}

fn open(binary: &Binary) -> Result<CodeObject, String> {
    let data = crate::symbols::map_file(&binary.path)?;
    let elf = object::File::parse(&*data).map_err(|err| format!("not an ELF object: {err}"))?;
    let pie = elf.kind() == ObjectKind::Dynamic && elf.section_by_name(".interp").is_some();
    let bias = match (binary.bias, elf.kind()) {
        (Some(bias), _) => bias,
        (None, ObjectKind::Executable) => 0,
        (None, _) if pie => VALGRIND_PIE_BIAS,
        (None, _) => {
            return Err("a shared library: give its load bias as PATH:HEX".to_string());
        }
    };
    let sections: Vec<(u64, u64, u64)> = elf
        .sections()
        .filter(|section| section.kind() == SectionKind::Text)
        .filter_map(|section| {
            let (offset, size) = section.file_range()?;
            Some((section.address(), offset, size))
        })
        .collect();
    let plt = crate::symbols::plt_ranges(&elf);
    // Code the bias moves past the end of the address space would wrap
    // around to addresses below it.
    let ends = sections
        .iter()
        .map(|&(address, _, size)| address.saturating_add(size));
    let last = ends.chain(plt.iter().map(|&(_, end)| end)).max();
    if last.is_some_and(|last| last.checked_add(bias).is_none()) {
        return Err(format!(
            "the bias {bias:x} moves the object's code past the end of the address space"
        ));
    }
    Ok(CodeObject {
        path: absolute(&binary.path),
        bias,
        data,
        sections,
        plt,
    })
}

fn absolute(path: &Path) -> String {
    std::fs::canonicalize(path)
        .unwrap_or_else(|_| path.to_path_buf())
        .display()
        .to_string()
}

impl CodeObjects {
    /// Opens every binary.
    pub fn open(binaries: &[Binary]) -> Result<CodeObjects, BinaryError> {
        let objects = binaries
            .iter()
            .map(|binary| {
                open(binary).map_err(|why| BinaryError {
                    path: binary.path.clone(),
                    why,
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let decoder = Capstone::new()
            .x86()
            .mode(capstone::arch::x86::ArchMode::Mode64)
            .detail(true)
            .build()
            .map_err(|err| BinaryError {
                path: PathBuf::new(),
                why: format!("cannot start the disassembler: {err}"),
            })?;
        Ok(CodeObjects {
            objects,
            decoder,
            transfers: FxHashMap::default(),
        })
    }

    /// The binaries as mapped, for symbols, and their PLT stubs, whose
    /// code is charged to their callers as in recorded traces.
    pub fn mappings(&self) -> Vec<Event> {
        let mut events = Vec::new();
        for object in &self.objects {
            events.push(Event::Module(Box::new(ModuleMapping {
                path: object.path.clone(),
                bias: object.bias,
                range: None,
                build_id: None,
                embedded: false,
            })));
            events.extend(object.plt.iter().map(|&(start, end)| Event::Plt {
                start: start.wrapping_add(object.bias),
                end: end.wrapping_add(object.bias),
            }));
        }
        events
    }

    /// What the instruction at `addr` does; decoded the first time.
    pub fn transfer(&mut self, addr: u64) -> Transfer {
        if let Some(&transfer) = self.transfers.get(&addr) {
            return transfer;
        }
        let transfer = self.decode(addr);
        self.transfers.insert(addr, transfer);
        transfer
    }

    fn decode(&self, addr: u64) -> Transfer {
        let Some(code) = self.objects.iter().find_map(|object| object.code_at(addr)) else {
            return Transfer::Unknown;
        };
        let Ok(instrs) = self.decoder.disasm_count(code, addr, 1) else {
            return Transfer::Other;
        };
        let Some(instr) = instrs.iter().next() else {
            return Transfer::Other;
        };
        let Ok(detail) = self.decoder.insn_detail(instr) else {
            return Transfer::Other;
        };
        let in_group = |group: u32| detail.groups().iter().any(|id| u32::from(id.0) == group);
        if in_group(InsnGroupType::CS_GRP_CALL) {
            Transfer::Call
        } else if in_group(InsnGroupType::CS_GRP_RET) {
            Transfer::Return
        } else {
            Transfer::Other
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binaries_parse_with_an_optional_hex_bias() {
        assert_eq!(
            "./app".parse::<Binary>().unwrap(),
            Binary {
                path: "./app".into(),
                bias: None
            }
        );
        assert_eq!(
            "/lib/libc.so.6:0x4845000".parse::<Binary>().unwrap().bias,
            Some(0x4845000)
        );
        assert!(
            "./app:zz"
                .parse::<Binary>()
                .unwrap_err()
                .contains("bad bias")
        );
    }

    #[test]
    fn calls_and_returns_are_told_from_other_instructions() {
        // This test binary itself: find a function and decode its code.
        let exe = std::env::current_exe().unwrap();
        let data = std::fs::read(&exe).unwrap();
        let elf = object::File::parse(&*data).unwrap();
        let bias = if elf.kind() == ObjectKind::Executable {
            0
        } else {
            0x1000_0000
        };
        let mut objects = CodeObjects::open(&[Binary {
            path: exe.clone(),
            bias: Some(bias),
        }])
        .unwrap();
        // Scan a text section for the first call and the first return.
        let text = elf.section_by_name(".text").unwrap();
        let (start, code) = (text.address(), text.data().unwrap());
        let decoder = &objects.decoder;
        let mut found = (None, None);
        for instr in decoder
            .disasm_count(&code[..4096.min(code.len())], start, 400)
            .unwrap()
            .iter()
        {
            let name = instr.mnemonic().unwrap_or("");
            if name == "call" && found.0.is_none() {
                found.0 = Some(instr.address());
            }
            if name == "ret" && found.1.is_none() {
                found.1 = Some(instr.address());
            }
        }
        let (call, ret) = (found.0.unwrap(), found.1.unwrap());
        assert_eq!(objects.transfer(call + bias), Transfer::Call);
        assert_eq!(objects.transfer(ret + bias), Transfer::Return);
        assert_eq!(
            objects.transfer(start + bias + 0x7fff_0000_0000),
            Transfer::Unknown
        );
        // The PLT stubs are the sections the symbolizer takes for them,
        // `.iplt` (a static binary's) included; a bias that moves code past
        // the address space's end is refused.
        let plt: Vec<(u64, u64)> = elf
            .sections()
            .filter(|section| {
                let name = section.name().unwrap_or_default();
                [".plt", ".plt.sec", ".plt.got", ".iplt"].contains(&name) && section.size() > 0
            })
            .map(|section| (section.address(), section.address() + section.size()))
            .collect();
        assert_eq!(objects.objects[0].plt, plt);
        let wrapping = CodeObjects::open(&[Binary {
            path: exe,
            bias: Some(u64::MAX - 0x1000),
        }]);
        let err = wrapping.err().unwrap().to_string();
        assert!(err.contains("past the end of the address space"), "{err}");
    }
}
