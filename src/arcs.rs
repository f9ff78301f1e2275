//! Call arcs: (caller function, call-site instruction, callee function).
//!
//! The caller is the function of the call-site instruction, so an arc is
//! keyed by the call site and the callee. Each arc counts its calls and
//! sums its inclusive cost.

use rustc_hash::FxHashMap;

use crate::cost::Cost;
use crate::program::{FnId, InstrId};

/// Index of an arc in [`Arcs`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ArcId(pub u32);

/// One call arc and its totals.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Arc {
    pub call_site: InstrId,
    pub callee: FnId,
    /// The address the first call along this arc jumped to.
    pub target: u64,
    pub calls: u64,
    /// Everything charged while a call along this arc was on the stack,
    /// once per active frame.
    pub inclusive: Cost,
}

/// All arcs of a run.
#[derive(Debug, Default)]
pub struct Arcs {
    arcs: Vec<Arc>,
    index: FxHashMap<(InstrId, FnId), ArcId>,
}

impl Arcs {
    /// No arcs.
    pub fn new() -> Arcs {
        Arcs::default()
    }

    /// The arc from `call_site` to `callee`, created on first use.
    pub fn arc(&mut self, call_site: InstrId, callee: FnId, target: u64) -> ArcId {
        let arcs = &mut self.arcs;
        *self.index.entry((call_site, callee)).or_insert_with(|| {
            arcs.push(Arc {
                call_site,
                callee,
                target,
                calls: 0,
                inclusive: Cost::ZERO,
            });
            ArcId(arcs.len() as u32 - 1)
        })
    }

    /// Whether a call from `call_site` to `callee` was counted.
    pub fn counted(&self, call_site: InstrId, callee: FnId) -> bool {
        self.index
            .get(&(call_site, callee))
            .is_some_and(|&arc| self.get(arc).calls > 0)
    }

    /// The arc with this id.
    pub fn get(&self, id: ArcId) -> &Arc {
        &self.arcs[id.0 as usize]
    }

    /// The arc `id`, to count on.
    pub fn get_mut(&mut self, id: ArcId) -> &mut Arc {
        &mut self.arcs[id.0 as usize]
    }

    /// Every arc, indexed by [`ArcId`].
    #[cfg(test)]
    pub fn all(&self) -> &[Arc] {
        &self.arcs
    }

    /// Takes the arcs out, indexed by [`ArcId`].
    pub fn into_vec(self) -> Vec<Arc> {
        self.arcs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_arc_per_call_site_and_callee() {
        let mut arcs = Arcs::new();
        let a = arcs.arc(InstrId(1), FnId(2), 0x40);
        assert_eq!(arcs.arc(InstrId(1), FnId(2), 0x44), a);
        let b = arcs.arc(InstrId(1), FnId(3), 0x80);
        let c = arcs.arc(InstrId(5), FnId(2), 0x40);
        assert_eq!([a.0, b.0, c.0], [0, 1, 2]);
        assert_eq!(arcs.all()[0].target, 0x40);
        arcs.get_mut(b).calls += 1;
        assert_eq!(arcs.all()[1].calls, 1);
    }
}
