//! What each call site called last. Most call sites call one target, so a
//! call that repeats the last one of its site finds its arc here, without
//! looking the callee up by address and the arc up by (site, callee).

use crate::arcs::ArcId;
use crate::program::InstrId;

/// Where a call from one site went: its target and, as
/// [`super::transfers::enter`] decided, its arc or, for a skipped callee,
/// the instruction its code is charged to.
#[derive(Clone, Copy, Debug)]
pub(super) struct SiteCall {
    pub target: u64,
    pub arc: Option<ArcId>,
    pub charge_to: Option<InstrId>,
}

/// The last call of each call site, indexed by instruction id.
#[derive(Default)]
pub(super) struct CallSites {
    by_site: Vec<Option<SiteCall>>,
}

impl CallSites {
    /// The call `site` made last, if it went to `target`.
    #[inline]
    pub fn get(&self, site: InstrId, target: u64) -> Option<SiteCall> {
        self.by_site
            .get(site.0 as usize)
            .copied()
            .flatten()
            .filter(|call| call.target == target)
    }

    /// Remembers `call` as the last call of `site`.
    pub fn set(&mut self, site: InstrId, call: SiteCall) {
        let index = site.0 as usize;
        if self.by_site.len() <= index {
            self.by_site.resize(index + 1, None);
        }
        self.by_site[index] = Some(call);
    }
}
