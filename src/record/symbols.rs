//! The symbol table a recording carries, so that its trace symbolicates on
//! a machine without the binaries: the objects, the function ranges that
//! contain code that ran, the PLT ranges, and a source line for every
//! instruction that ran.

use std::borrow::Cow;
use std::path::Path;

use crate::output::{UNKNOWN, one_line};

use super::raw;
use crate::symbols::{ElfObject, Module, ModuleMap, SourceLine};
use crate::trace::binary::Control;
use crate::trace::{Event, FunctionSymbol, LineSymbol, ModuleMapping};

/// Symbols for the instructions at `addrs` (any order, repeats allowed) in
/// `modules`, as control records for the trace's symbol table; those the
/// trace cannot hold are counted in `left_out` instead.
pub fn embed(
    modules: &[ModuleMapping],
    mut addrs: Vec<u64>,
    left_out: &mut Option<(u64, String)>,
) -> Vec<Control> {
    addrs.sort_unstable();
    addrs.dedup();
    // Objects that cannot be read here keep their symbols to `sim` time.
    let objects: Vec<Option<ElfObject>> = modules
        .iter()
        .map(|module| ElfObject::open(Path::new(&module.path)).ok())
        .collect();
    let mut out: Vec<Control> = modules
        .iter()
        .zip(&objects)
        .map(|(module, object)| {
            let embedded = object.is_some() && module.range.is_some();
            let module = ModuleMapping {
                embedded,
                ..module.clone()
            };
            Control::Event(Event::Module(Box::new(module)))
        })
        .collect();
    // Later mappings win where objects overlap, as in `sim`'s module map.
    let mut map = ModuleMap::new();
    for module in modules {
        let (start, end) = module.range.unwrap_or((0, 0));
        map.add(Module {
            path: String::new(),
            start,
            end,
            bias: module.bias,
            build_id: None,
        });
    }
    let owner = |addr: u64| map.find(addr).map(|id| id.0 as usize);
    for (index, (module, object)) in modules.iter().zip(&objects).enumerate() {
        let (Some((start, end)), Some(object)) = (module.range, object) else {
            continue;
        };
        let first = addrs.partition_point(|&addr| addr < start);
        let last = addrs.partition_point(|&addr| addr < end);
        let mine: Vec<u64> = addrs[first..last]
            .iter()
            .copied()
            .filter(|&addr| owner(addr) == Some(index))
            .collect();
        embed_object(object, module.bias, &mine, &mut out);
    }
    // What a trace would refuse (a range an odd object wraps past the end
    // of the address space) is left out: its code is then code without a
    // symbol, where a refused record would make the whole trace unreadable.
    out.retain(|control| {
        let Control::Event(event) = control else {
            return true;
        };
        let Err(why) = event.check() else {
            return true;
        };
        raw::left_out(left_out, || format!("{why}, among the program's symbols"));
        false
    });
    out
}

/// The source line at `svma`, its file named as a trace holds it.
fn embeddable_source(object: &ElfObject, svma: u64) -> Option<SourceLine> {
    object.source(svma).map(|source| SourceLine {
        file: embeddable(source.file),
        ..source
    })
}

/// `name` as a trace holds it: on one line, and Callgrind's `???` for a
/// name of nothing but blanks, as the callgrind writer shows the names of
/// an object read at simulation time.
fn embeddable(name: String) -> String {
    if name.trim().is_empty() {
        return UNKNOWN.to_owned();
    }
    match one_line(&name) {
        Cow::Borrowed(_) => name,
        Cow::Owned(one) => one,
    }
}

/// The PLT sections, functions and lines of one object's executed code at
/// `addrs` (sorted).
fn embed_object(object: &ElfObject, bias: u64, addrs: &[u64], out: &mut Vec<Control>) {
    for &(start, end) in object.plt_sections() {
        out.push(Control::Event(Event::Plt {
            start: start.wrapping_add(bias),
            end: end.wrapping_add(bias),
        }));
    }
    let mut functions: Vec<FunctionSymbol> = Vec::new();
    let mut lines = Vec::with_capacity(addrs.len());
    for &addr in addrs {
        let svma = addr.wrapping_sub(bias);
        let source = embeddable_source(object, svma);
        if let Some(f) = object.function(svma) {
            let start = f.start.wrapping_add(bias);
            if functions.last().is_none_or(|last| last.start != start) {
                let entry = embeddable_source(object, f.start);
                functions.push(FunctionSymbol {
                    start,
                    end: f.end.wrapping_add(bias),
                    name: embeddable(f.name.clone()),
                    file: entry.as_ref().map(|s| s.file.clone()),
                    line: entry.map_or(0, |s| s.line),
                });
            }
        }
        lines.push((addr, source));
    }
    let mut current = 0;
    for (addr, source) in lines {
        while current < functions.len() && functions[current].end <= addr {
            current += 1;
        }
        let Some(source) = source else { continue };
        let own = functions
            .get(current)
            .filter(|f| f.start <= addr)
            .and_then(|f| f.file.as_deref());
        let file = (own != Some(source.file.as_str())).then_some(source.file);
        out.push(Control::Event(Event::Line(Box::new(LineSymbol {
            addr,
            line: source.line,
            file,
        }))));
    }
    out.extend(
        functions
            .into_iter()
            .map(|f| Control::Event(Event::Function(Box::new(f)))),
    );
}

#[cfg(test)]
mod tests {
    use object::{Object, ObjectSymbol, SymbolKind};

    use super::*;

    /// A function that an object mapped at the top of the address space
    /// would run past its end, which no trace holds: left out and counted,
    /// not written into a trace `sim` would refuse.
    #[test]
    fn symbols_a_trace_cannot_hold_are_left_out_and_counted() {
        let exe = std::env::current_exe().unwrap();
        let data = std::fs::read(&exe).unwrap();
        let elf = object::File::parse(&*data).unwrap();
        let function = elf
            .symbols()
            .find(|s| s.kind() == SymbolKind::Text && s.size() >= 2 && s.address() != 0)
            .expect("a function in the test binary");
        let start = u64::MAX - 1;
        let module = ModuleMapping {
            path: exe.to_str().unwrap().to_string(),
            bias: start.wrapping_sub(function.address()),
            range: Some((start, u64::MAX)),
            build_id: None,
            embedded: false,
        };
        let mut left_out = None;
        let controls = embed(&[module], vec![start], &mut left_out);
        let (count, first) = left_out.expect("the function left out");
        assert_eq!(count, 1);
        assert!(first.ends_with(", among the program's symbols"), "{first}");
        for control in &controls {
            if let Control::Event(event) = control {
                assert_eq!(event.check(), Ok(()), "{event:?}");
                assert!(!matches!(event, Event::Function(_)), "{event:?}");
            }
        }
    }
}
