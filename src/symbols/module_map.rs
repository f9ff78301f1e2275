//! Which mapped ELF object an address belongs to.
//!
//! A module is an object mapped at runtime so that a runtime address
//! (`Avma`) is the object's own address (`Svma`) plus the module's bias.

/// An ELF object mapped into the traced process.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Module {
    pub path: String,
    /// First runtime address of the mapping.
    pub start: u64,
    /// One past the last runtime address.
    pub end: u64,
    /// Runtime address minus ELF address.
    pub bias: u64,
    /// The GNU build-id recorded with the trace, if any.
    pub build_id: Option<Vec<u8>>,
}

impl Module {
    /// The ELF address of runtime address `avma`.
    pub fn svma(&self, avma: u64) -> u64 {
        avma.wrapping_sub(self.bias)
    }
}

/// Index into [`ModuleMap::modules`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ModuleId(pub u32);

/// The modules of a trace, found by address.
#[derive(Debug, Default)]
pub struct ModuleMap {
    modules: Vec<Module>,
    /// Module ids sorted by start address.
    by_start: Vec<ModuleId>,
    /// Who holds each address: ranges sorted, apart, each with the module
    /// mapped there last, so that a lookup is one binary search however
    /// many modules overlap or lie below the address.
    holders: Vec<Holder>,
}

/// Addresses `start..end`, held by `module`.
#[derive(Clone, Copy, Debug)]
struct Holder {
    start: u64,
    end: u64,
    module: ModuleId,
}

impl ModuleMap {
    /// No modules.
    pub fn new() -> ModuleMap {
        ModuleMap::default()
    }

    /// Adds a module. A module mapped over an earlier one takes its place
    /// for the addresses it covers.
    pub fn add(&mut self, module: Module) -> ModuleId {
        let id = ModuleId(self.modules.len() as u32);
        // After those of equal start: the later mapping sorts last and wins.
        let at = self
            .by_start
            .partition_point(|other| self.modules[other.0 as usize].start <= module.start);
        self.hold(module.start, module.end, id);
        self.modules.push(module);
        self.by_start.insert(at, id);
        id
    }

    /// Gives `start..end` to module `id`, the last mapped, cutting the
    /// ranges of earlier modules it covers.
    fn hold(&mut self, start: u64, end: u64, id: ModuleId) {
        if start >= end {
            return;
        }
        // The ranges it overlaps: `first..last`.
        let first = self.holders.partition_point(|held| held.end <= start);
        let last = self.holders.partition_point(|held| held.start < end);
        let mut kept = Vec::with_capacity(3);
        if let Some(&head) = self.holders[first..last].first()
            && head.start < start
        {
            kept.push(Holder { end: start, ..head });
        }
        kept.push(Holder {
            start,
            end,
            module: id,
        });
        if let Some(&tail) = self.holders[first..last].last()
            && tail.end > end
        {
            kept.push(Holder { start: end, ..tail });
        }
        self.holders.splice(first..last, kept);
    }

    /// Every module, indexed by [`ModuleId`].
    pub fn modules(&self) -> &[Module] {
        &self.modules
    }

    /// Modules mapped where another object was before (a plugin loaded
    /// after one unloaded), each with an earlier one it covers and the
    /// addresses they share, in order of start: every such module once.
    pub fn remapped(&self) -> Vec<(&Module, &Module, (u64, u64))> {
        let mut found = Vec::new();
        // Of the modules sorted so far, the one reaching furthest: any that
        // overlaps an earlier-starting module overlaps this one.
        let mut widest: Option<ModuleId> = None;
        for &id in &self.by_start {
            let module = self.get(id);
            if let Some(other_id) = widest {
                let other = self.get(other_id);
                if module.start < other.end && module.path != other.path {
                    let shared = (module.start, module.end.min(other.end));
                    let (later, earlier) = match id > other_id {
                        true => (module, other),
                        false => (other, module),
                    };
                    found.push((later, earlier, shared));
                }
            }
            if widest.is_none_or(|other| module.end > self.get(other).end) {
                widest = Some(id);
            }
        }
        found
    }

    /// The module with this id.
    pub fn get(&self, id: ModuleId) -> &Module {
        &self.modules[id.0 as usize]
    }

    /// The module mapped at runtime address `avma`; the most recently added
    /// one where mappings overlap.
    pub fn find(&self, avma: u64) -> Option<ModuleId> {
        let after = self.holders.partition_point(|held| held.start <= avma);
        let held = self.holders[..after].last()?;
        (avma < held.end).then_some(held.module)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn module(path: &str, start: u64, end: u64) -> Module {
        Module {
            path: path.into(),
            start,
            end,
            bias: start,
            build_id: None,
        }
    }

    #[test]
    fn finds_the_module_of_an_address() {
        let mut map = ModuleMap::new();
        let libc = map.add(module("libc.so.6", 0x7000, 0x9000));
        let app = map.add(module("app", 0x1000, 0x2000));
        assert_eq!(map.find(0x0fff), None);
        assert_eq!(map.find(0x1000), Some(app));
        assert_eq!(map.find(0x2000), None);
        assert_eq!(map.find(0x8fff), Some(libc));
        assert_eq!(map.get(libc).svma(0x7123), 0x123);
        // A later mapping over part of libc wins there.
        let jit = map.add(module("jit", 0x8000, 0x8100));
        assert_eq!(map.find(0x8010), Some(jit));
        assert_eq!(map.find(0x8100), Some(libc));
    }

    /// The module found is the last mapped of those whose range holds the
    /// address, on random maps of overlapping modules.
    #[test]
    fn the_last_module_mapped_over_an_address_holds_it() {
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = |below: u64| {
            seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (seed >> 33) % below
        };
        for _ in 0..200 {
            let mut map = ModuleMap::new();
            let count = 1 + next(12);
            for _ in 0..count {
                let start = next(64);
                map.add(module("m", start, start + next(24)));
            }
            for avma in 0..96 {
                let last = (map.modules.iter().enumerate())
                    .filter(|(_, m)| (m.start..m.end).contains(&avma))
                    .map(|(id, _)| ModuleId(id as u32))
                    .next_back();
                assert_eq!(map.find(avma), last, "{:?} at {avma}", map.modules);
            }
        }
    }

    #[test]
    fn modules_mapped_where_others_were_are_found_once() {
        let mut map = ModuleMap::new();
        map.add(module("libc.so.6", 0x7000, 0x9000));
        map.add(module("app", 0x1000, 0x2000));
        map.add(module("plugin_a", 0x3000, 0x4000));
        // Not an overlap: the same object again.
        map.add(module("app", 0x1000, 0x2000));
        map.add(module("plugin_b", 0x3000, 0x3800));
        map.add(module("short", 0x7100, 0x7200));
        // Inside libc, and past `short`, the module sorted before it.
        map.add(module("jit", 0x8000, 0x8100));
        let found: Vec<(&str, &str, (u64, u64))> = map
            .remapped()
            .into_iter()
            .map(|(later, earlier, shared)| (later.path.as_str(), earlier.path.as_str(), shared))
            .collect();
        assert_eq!(
            found,
            [
                ("plugin_b", "plugin_a", (0x3000, 0x3800)),
                ("short", "libc.so.6", (0x7100, 0x7200)),
                ("jit", "libc.so.6", (0x8000, 0x8100)),
            ]
        );
    }
}
