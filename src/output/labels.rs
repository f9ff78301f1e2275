//! Names that tell functions apart where they share a name.

use rustc_hash::FxHashMap;

use crate::printable::printable;
use crate::program::{FnId, Program};

/// An object's file name, without its folder: how tables and labels name
/// an object (`libc.so.6`).
pub fn object_file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// The label of every function of `functions`: its name, and where
/// another of them has the same name, its object's file name too (`bcmp
/// [libc.so.6]`), and then its source file's where that is not enough
/// (`f (a.c)`, `f (a.c) [liba.so]`).
pub fn function_labels(
    program: &Program,
    functions: impl IntoIterator<Item = FnId>,
) -> FxHashMap<FnId, String> {
    let object = |func: FnId| {
        program.function(func).object.map(|id| {
            let path = &program.symbolizer().modules().get(id).path;
            format!(" [{}]", printable(object_file_name(path)))
        })
    };
    let mut labels: FxHashMap<FnId, String> = functions
        .into_iter()
        .map(|func| (func, program.function(func).name.clone()))
        .collect();
    let widenings: [&dyn Fn(FnId) -> String; 2] = [
        &|func| {
            let name = &program.function(func).name;
            format!("{name}{}", object(func).unwrap_or_default())
        },
        &|func| {
            let function = program.function(func);
            let file = function.file.map_or("???", |id| program.file(id));
            let object = object(func).unwrap_or_default();
            format!("{} ({}){object}", function.name, printable(file))
        },
    ];
    for widen in widenings {
        let mut uses: FxHashMap<&str, u32> = FxHashMap::default();
        for label in labels.values() {
            *uses.entry(label).or_default() += 1;
        }
        let shared: Vec<FnId> = labels
            .iter()
            .filter(|(_, label)| uses[label.as_str()] > 1)
            .map(|(&func, _)| func)
            .collect();
        for func in shared {
            labels.insert(func, widen(func));
        }
    }
    labels
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn namesakes_without_objects_are_told_apart_by_their_files() {
        let mut program = Program::default();
        let mut add = |start: u64, name: &str, file: &str| {
            program
                .add_function(start, start + 0x10, name.into(), Some(file.into()), 1)
                .unwrap()
        };
        let main = add(0x1000, "main", "m.c");
        let f_a = add(0x2000, "f", "a.c");
        let f_b = add(0x3000, "f", "b.c");
        let labels = function_labels(&program, [main, f_a, f_b]);
        assert_eq!(labels[&main], "main");
        assert_eq!(labels[&f_a], "f (a.c)");
        assert_eq!(labels[&f_b], "f (b.c)");
        // Only among the functions given.
        assert_eq!(function_labels(&program, [f_a])[&f_a], "f");
    }
}
