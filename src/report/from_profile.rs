//! A simulation's profile as its callgrind file states it, without writing
//! the file: the same functions under the same names, self costs and calls
//! (not the costs of source lines, which only source annotation reads).

use std::collections::HashMap;

use super::callgrind_file::{CallEntry, FunctionEntry, FunctionKey, ProfileFile};
use crate::output::{file_name, object_of};
use crate::profile::Profile;
use crate::program::FnId;

impl ProfileFile {
    /// What the callgrind file of `profile` says, read back.
    pub fn from_profile(profile: &Profile, cmd: &str) -> ProfileFile {
        let kinds = profile.events.kinds();
        let program = &profile.program;
        let costs = |cost: &crate::cost::Cost| -> Vec<u64> {
            kinds.iter().map(|&kind| cost[kind]).collect()
        };
        let mut file = ProfileFile {
            cmd: Some(cmd.to_string()),
            events: kinds.iter().map(|kind| kind.name().to_string()).collect(),
            totals: costs(&profile.totals),
            ..ProfileFile::default()
        };
        // A function is in the file when it has cost or calls. Functions of
        // one name, file and object (static functions of one name in two
        // compilation units) are one, as in the callgrind file.
        let mut index: Vec<Option<usize>> = vec![None; program.functions().len()];
        let mut by_key: HashMap<FunctionKey, usize> = HashMap::new();
        let mut entry = |file: &mut ProfileFile, func: FnId| -> usize {
            if let Some(at) = index[func.0 as usize] {
                return at;
            }
            let function = program.function(func);
            let key = FunctionKey {
                object: object_of(profile, func).unwrap_or_default(),
                file: file_name(profile, function.file),
                name: function.name.clone(),
            };
            let at = *by_key.entry(key.clone()).or_insert_with(|| {
                file.functions.push(FunctionEntry {
                    key,
                    self_cost: vec![0; kinds.len()],
                });
                file.functions.len() - 1
            });
            index[func.0 as usize] = Some(at);
            at
        };
        for (instr, cost) in program.instrs().iter().zip(&profile.self_cost) {
            if cost.is_zero() {
                continue;
            }
            let at = entry(&mut file, instr.func);
            for (sum, value) in file.functions[at].self_cost.iter_mut().zip(costs(cost)) {
                *sum += value;
            }
        }
        let mut calls: HashMap<(usize, usize), usize> = HashMap::new();
        for (_, arc) in profile.called_arcs() {
            let caller = entry(&mut file, profile.caller(arc));
            let callee = entry(&mut file, arc.callee);
            let at = *calls.entry((caller, callee)).or_insert_with(|| {
                file.calls.push(CallEntry {
                    caller,
                    callee,
                    count: 0,
                    inclusive: vec![0; kinds.len()],
                });
                file.calls.len() - 1
            });
            let call = &mut file.calls[at];
            call.count += arc.calls;
            for (sum, value) in call.inclusive.iter_mut().zip(costs(&arc.inclusive)) {
                *sum += value;
            }
        }
        file
    }
}
