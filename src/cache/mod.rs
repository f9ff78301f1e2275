//! The cache model: geometry, one set-associative cache, the I1/D1/LL
//! hierarchy and the per-line use state.

mod caches;
mod deferred_use;
mod geometry;
mod hierarchy;
mod host_memory;
mod huge_table;
mod line_use;
mod miss_classes;
mod set_assoc;

pub use caches::{CacheAccess, Caches};
pub use geometry::{
    CacheGeometry, GeometryError, LineSpan, MAX_USE_LINE_SIZE, describe_cache, longest_access,
    parse_size,
};
pub use hierarchy::{Hierarchy, L1Kind, Level, Loader, MAX_LANES, Outcome, Release, UseSink};
pub use huge_table::NoMemory;
pub use line_use::{ByteMask, LineUse, NarrowMask};
pub use miss_classes::{ClassCounts, ClassifiedHierarchy, L1Side, MissClass};
pub use set_assoc::{Lookup, SetAssocCache, Slot};
