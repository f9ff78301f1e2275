//! Names that tell functions apart where they share a name.

use rustc_hash::FxHashMap;

use crate::program::{FnId, Program};

/// The label of every function of `functions`: its name, and where
/// another of them has the same name, its object's file name too (`bcmp
/// [libc.so.6]`), and then its source file's where that is not enough.
pub fn function_labels(
    program: &Program,
    functions: impl IntoIterator<Item = FnId>,
) -> FxHashMap<FnId, String> {
    let object = |func: FnId| match program.function(func).object {
        Some(id) => {
            let path = &program.symbolizer().modules().get(id).path;
            path.rsplit('/').next().unwrap_or(path).to_string()
        }
        None => "???".to_string(),
    };
    let mut labels: FxHashMap<FnId, String> = functions
        .into_iter()
        .map(|func| (func, program.function(func).name.clone()))
        .collect();
    let widenings: [&dyn Fn(FnId) -> String; 2] = [
        &|func| format!("{} [{}]", program.function(func).name, object(func)),
        &|func| {
            let function = program.function(func);
            let file = function.file.map_or("???", |id| program.file(id));
            format!("{} ({file}) [{}]", function.name, object(func))
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
