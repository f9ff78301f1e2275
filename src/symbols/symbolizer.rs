//! Resolves runtime addresses through the module map and each module's ELF
//! object. Objects are opened lazily, once, on the first address that needs
//! them; a missing or unreadable object is reported once and its code is
//! left to address-named functions.

use std::fmt::Write as _;
use std::path::Path;

use super::elf::{ElfObject, InlineFrame, SourceLine};
use super::module_map::{Module, ModuleId, ModuleMap};
use crate::trace::ModuleMapping;

/// What symbols say about one runtime address.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Resolution {
    /// The module mapped there.
    pub module: Option<ModuleId>,
    /// The function symbol containing it: its ELF start address and its
    /// name. Code no symbol covers has none, as in Valgrind, even where
    /// DWARF names it (a static function of a program linked with
    /// `--discard-all`): DWARF gives the name of the code, not the
    /// function's range, and one name may be several functions'.
    pub function: Option<(u64, String)>,
    /// Its source position.
    pub source: Option<SourceLine>,
    /// Whether it lies in a PLT section.
    pub plt: bool,
    /// The functions inlined there, outermost first, when asked for.
    pub inlined: Vec<InlineFrame>,
}

enum Loaded {
    NotYet,
    /// The trace carries the symbols; the object is not read.
    Embedded,
    Ok(Box<ElfObject>),
    Failed,
}

/// The modules of a trace and their objects.
pub struct Symbolizer {
    modules: ModuleMap,
    objects: Vec<Loaded>,
    warnings: Vec<String>,
}

impl Default for Symbolizer {
    fn default() -> Self {
        Symbolizer::new()
    }
}

impl Symbolizer {
    /// No modules.
    pub fn new() -> Symbolizer {
        Symbolizer {
            modules: ModuleMap::new(),
            objects: Vec::new(),
            warnings: Vec::new(),
        }
    }

    /// Maps an object. Without a runtime range, the object's loadable
    /// segments give it, and an object that cannot be read, or has none, is
    /// not mapped (with a warning). An object whose symbols the trace
    /// embeds is never read.
    pub fn add_module(&mut self, mapping: &ModuleMapping) -> Option<ModuleId> {
        let path = &mapping.path;
        let bias = mapping.bias;
        let mut loaded = match mapping.embedded {
            true => Loaded::Embedded,
            false => Loaded::NotYet,
        };
        let range = match mapping.range {
            Some(range) => range,
            None => {
                let object = match ElfObject::open(Path::new(path)) {
                    Ok(object) => object,
                    Err(why) => {
                        self.warnings.push(format!(
                            "cannot read {path} ({why}): its code is not mapped and gets \
                             address-named functions"
                        ));
                        return None;
                    }
                };
                let Some((start, end)) = object.load_range() else {
                    self.warnings.push(format!(
                        "{path} has no loadable segments (an object file, not a program \
                         or library?): its code is not mapped and gets address-named \
                         functions; give its range with start= and end="
                    ));
                    return None;
                };
                // A bias may be negative (two's complement): only a range
                // that the bias splits across the top of the address space
                // cannot be mapped. Its last byte may be the top one.
                let last = end.saturating_sub(1).max(start);
                let (first, last) = (start.wrapping_add(bias), last.wrapping_add(bias));
                if last < first {
                    self.warnings.push(format!(
                        "{path} at bias {bias:#x} would lie across the end of the address space \
                         (its addresses {start:#x}-{end:#x} moved by the bias): its code is not \
                         mapped and gets address-named functions"
                    ));
                    return None;
                }
                loaded = Loaded::Ok(Box::new(object));
                (first, last.saturating_add(1))
            }
        };
        let id = self.modules.add(Module {
            path: path.clone(),
            start: range.0,
            end: range.1,
            bias,
            build_id: mapping.build_id.clone(),
        });
        self.objects.push(loaded);
        if let Loaded::Ok(object) = &self.objects[id.0 as usize] {
            let warnings = object_warnings(self.modules.get(id), object);
            self.warnings.extend(warnings);
        }
        Some(id)
    }

    /// The modules, indexed by [`ModuleId`].
    pub fn modules(&self) -> &ModuleMap {
        &self.modules
    }

    /// Warnings so far: objects that could not be read, build-id mismatches,
    /// objects mapped where others were.
    pub fn warnings(&self) -> Vec<String> {
        let mut warnings = self.warnings.clone();
        for (later, earlier, (start, end)) in self.modules.remapped() {
            warnings.push(format!(
                "{} was mapped at addresses {} had before ({start:#x}-{end:#x}), once that \
                 was unloaded: linegrind keeps one object per address, so the code both ran \
                 there is charged to {}'s functions",
                later.path, earlier.path, later.path
            ));
        }
        warnings
    }

    /// Adds a warning about the symbols.
    pub fn warn(&mut self, warning: String) {
        self.warnings.push(warning);
    }

    /// The module mapped at `avma`, without reading its object.
    pub fn module_at(&self, avma: u64) -> Option<ModuleId> {
        self.modules.find(avma)
    }

    /// Everything the symbols say about `avma`; the inlined functions only
    /// with `inlined`.
    pub fn resolve(&mut self, avma: u64, inlined: bool) -> Resolution {
        let Some(id) = self.modules.find(avma) else {
            return Resolution::default();
        };
        let module = self.modules.get(id);
        let svma = module.svma(avma);
        let index = id.0 as usize;
        if let Loaded::NotYet = self.objects[index] {
            self.objects[index] = match ElfObject::open(Path::new(&module.path)) {
                Ok(object) => {
                    self.warnings.extend(object_warnings(module, &object));
                    Loaded::Ok(Box::new(object))
                }
                Err(why) => {
                    self.warnings.push(format!(
                        "cannot read {} ({why}): its functions are named by address",
                        module.path
                    ));
                    Loaded::Failed
                }
            };
        }
        let mut resolution = Resolution {
            module: Some(id),
            ..Resolution::default()
        };
        if let Loaded::Ok(object) = &self.objects[index] {
            resolution.function = object
                .function(svma)
                .map(|function| (function.start, function.name.clone()));
            resolution.source = object.source(svma);
            resolution.plt = object.is_plt(svma);
            if inlined {
                resolution.inlined = object.inlined(svma);
            }
        }
        resolution
    }

    /// The source position of ELF address `svma` in module `id`, if its
    /// object is loaded.
    pub fn source(&self, id: ModuleId, svma: u64) -> Option<SourceLine> {
        match &self.objects[id.0 as usize] {
            Loaded::Ok(object) => object.source(svma),
            _ => None,
        }
    }
}

/// What is wrong with the object `module` maps, as read: a build-id other
/// than the trace's, DWARF that could not be read.
fn object_warnings(module: &Module, object: &ElfObject) -> Vec<String> {
    let path = &module.path;
    let debug = object.debug_file_error().map(|(debug, why)| {
        format!(
            "cannot read the DWARF of {}, the debug file of {path} ({why}): {path}'s own \
             DWARF gives its source lines, if it has any",
            debug.display()
        )
    });
    let dwarf = object.dwarf_error().map(|why| {
        format!(
            "cannot read the DWARF of {path} ({why}): its functions are named from its symbol \
             table, without source lines"
        )
    });
    let build_id = check_build_id(module, object);
    build_id.into_iter().chain(debug).chain(dwarf).collect()
}

fn check_build_id(module: &Module, object: &ElfObject) -> Option<String> {
    let recorded = module.build_id.as_deref()?;
    let found = object.build_id();
    if found == Some(recorded) {
        return None;
    }
    Some(format!(
        "{} has build-id {}, but the trace recorded {}: symbols may not match the code",
        module.path,
        found.map_or_else(|| "none".to_string(), hex),
        hex(recorded)
    ))
}

/// Lower-case hex digits of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().fold(String::new(), |mut out, byte| {
        let _ = write!(out, "{byte:02x}");
        out
    })
}
