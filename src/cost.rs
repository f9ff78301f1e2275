//! Event kinds and the plain cost vectors every table of the profile holds.
//!
//! A [`Cost`] is a fixed array with one counter per [`EventKind`], so adding
//! costs is a loop over a small array and never allocates. Which of the
//! kinds a run reports is an [`EventSet`]; the array always has room for all
//! of them.

use std::ops::{AddAssign, Index, IndexMut, Sub};

/// One counter of the simulation, in Callgrind's names and order.
///
/// The first nine are *immediate* events, known when the instruction runs;
/// the rest are *cache-use* events, known only when the line an instruction
/// loaded is evicted, and charged back to that loading instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum EventKind {
    Ir,
    Dr,
    Dw,
    I1mr,
    D1mr,
    D1mw,
    ILmr,
    DLmr,
    DLmw,
    AcCost1,
    SpLoss1,
    AcCost2,
    SpLoss2,
    Loaded1,
    Used1,
    Loaded2,
    Used2,
}

/// Number of event kinds, the length of a [`Cost`].
pub const EVENT_COUNT: usize = 17;

impl EventKind {
    /// Every kind in output order.
    pub const ALL: [EventKind; EVENT_COUNT] = [
        EventKind::Ir,
        EventKind::Dr,
        EventKind::Dw,
        EventKind::I1mr,
        EventKind::D1mr,
        EventKind::D1mw,
        EventKind::ILmr,
        EventKind::DLmr,
        EventKind::DLmw,
        EventKind::AcCost1,
        EventKind::SpLoss1,
        EventKind::AcCost2,
        EventKind::SpLoss2,
        EventKind::Loaded1,
        EventKind::Used1,
        EventKind::Loaded2,
        EventKind::Used2,
    ];

    /// The immediate kinds that depend on LL: its misses.
    pub const LL_MISSES: [EventKind; 3] = [EventKind::ILmr, EventKind::DLmr, EventKind::DLmw];

    /// Number of immediate kinds; they come first in [`EventKind::ALL`].
    pub const IMMEDIATE_COUNT: usize = 9;

    /// The short name used in `events:` lines and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            EventKind::Ir => "Ir",
            EventKind::Dr => "Dr",
            EventKind::Dw => "Dw",
            EventKind::I1mr => "I1mr",
            EventKind::D1mr => "D1mr",
            EventKind::D1mw => "D1mw",
            EventKind::ILmr => "ILmr",
            EventKind::DLmr => "DLmr",
            EventKind::DLmw => "DLmw",
            EventKind::AcCost1 => "AcCost1",
            EventKind::SpLoss1 => "SpLoss1",
            EventKind::AcCost2 => "AcCost2",
            EventKind::SpLoss2 => "SpLoss2",
            EventKind::Loaded1 => "Loaded1",
            EventKind::Used1 => "Used1",
            EventKind::Loaded2 => "Loaded2",
            EventKind::Used2 => "Used2",
        }
    }

    /// The long name written as `event: NAME : LONG` so viewers explain it.
    pub fn long_name(self) -> &'static str {
        match self {
            EventKind::Ir => "Instruction Fetch",
            EventKind::Dr => "Data Read Access",
            EventKind::Dw => "Data Write Access",
            EventKind::I1mr => "L1 Instr. Fetch Miss",
            EventKind::D1mr => "L1 Data Read Miss",
            EventKind::D1mw => "L1 Data Write Miss",
            EventKind::ILmr => "LL Instr. Fetch Miss",
            EventKind::DLmr => "LL Data Read Miss",
            EventKind::DLmw => "LL Data Write Miss",
            EventKind::AcCost1 => "L1 Temporal Loss (1000/uses per evicted line)",
            EventKind::SpLoss1 => "L1 Bytes Wasted (spatial loss)",
            EventKind::AcCost2 => "LL Temporal Loss (1000/uses per evicted line)",
            EventKind::SpLoss2 => "LL Bytes Wasted (spatial loss)",
            EventKind::Loaded1 => "L1 Bytes Loaded",
            EventKind::Used1 => "L1 Bytes Used",
            EventKind::Loaded2 => "LL Bytes Loaded",
            EventKind::Used2 => "LL Bytes Used",
        }
    }

    /// True for the kinds known when the instruction runs.
    pub fn is_immediate(self) -> bool {
        (self as usize) < EventKind::IMMEDIATE_COUNT
    }
}

/// The set of kinds a run reports, in output order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EventSet {
    cache_use: bool,
}

impl EventSet {
    /// The immediate kinds, plus the cache-use kinds when `cache_use` is on.
    pub fn new(cache_use: bool) -> EventSet {
        EventSet { cache_use }
    }

    /// The reported kinds, in output order.
    pub fn kinds(self) -> &'static [EventKind] {
        if self.cache_use {
            &EventKind::ALL
        } else {
            &EventKind::ALL[..EventKind::IMMEDIATE_COUNT]
        }
    }

    /// Whether the cache-use kinds are reported.
    pub fn has_cache_use(self) -> bool {
        self.cache_use
    }
}

/// One counter per [`EventKind`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cost(pub [u64; EVENT_COUNT]);

impl Cost {
    /// A cost of zero for every kind.
    pub const ZERO: Cost = Cost([0; EVENT_COUNT]);

    /// True when every counter is zero.
    pub fn is_zero(&self) -> bool {
        self.0.iter().all(|&count| count == 0)
    }
}

impl Index<EventKind> for Cost {
    type Output = u64;

    fn index(&self, kind: EventKind) -> &u64 {
        &self.0[kind as usize]
    }
}

impl IndexMut<EventKind> for Cost {
    fn index_mut(&mut self, kind: EventKind) -> &mut u64 {
        &mut self.0[kind as usize]
    }
}

impl AddAssign<&Cost> for Cost {
    fn add_assign(&mut self, other: &Cost) {
        for (mine, theirs) in self.0.iter_mut().zip(&other.0) {
            *mine += theirs;
        }
    }
}

impl Sub for &Cost {
    type Output = Cost;

    fn sub(self, other: &Cost) -> Cost {
        let mut out = *self;
        for (mine, theirs) in out.0.iter_mut().zip(&other.0) {
            *mine -= theirs;
        }
        out
    }
}

/// The immediate part of a cost: what a context accumulates while it runs
/// and a call's frame remembers at its entry, half the size of a [`Cost`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ImmediateCost(pub [u64; EventKind::IMMEDIATE_COUNT]);

impl Index<EventKind> for ImmediateCost {
    type Output = u64;

    fn index(&self, kind: EventKind) -> &u64 {
        debug_assert!(kind.is_immediate());
        &self.0[kind as usize]
    }
}

impl IndexMut<EventKind> for ImmediateCost {
    fn index_mut(&mut self, kind: EventKind) -> &mut u64 {
        debug_assert!(kind.is_immediate());
        &mut self.0[kind as usize]
    }
}

impl Sub for &ImmediateCost {
    type Output = ImmediateCost;

    fn sub(self, other: &ImmediateCost) -> ImmediateCost {
        let mut out = *self;
        for (mine, theirs) in out.0.iter_mut().zip(&other.0) {
            *mine -= theirs;
        }
        out
    }
}

impl AddAssign<&ImmediateCost> for Cost {
    fn add_assign(&mut self, other: &ImmediateCost) {
        for (mine, theirs) in self.0.iter_mut().zip(&other.0) {
            *mine += theirs;
        }
    }
}

/// Number of cache-use kinds, the length of a [`UseCost`].
pub const USE_COUNT: usize = EVENT_COUNT - EventKind::IMMEDIATE_COUNT;

/// The cache-use part of a cost: the counters of the kinds after the
/// immediate ones, in the same order. Kept apart so that the back-dating
/// tree, which only ever carries cache-use cost, stays small.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UseCost(pub [u64; USE_COUNT]);

impl UseCost {
    /// The counter of cache-use kind `kind`.
    pub fn get(&self, kind: EventKind) -> u64 {
        debug_assert!(!kind.is_immediate());
        self.0[kind as usize - EventKind::IMMEDIATE_COUNT]
    }

    /// The L1 counters alone, the LL ones zero.
    pub fn l1_part(&self) -> UseCost {
        let mut part = UseCost::default();
        for kind in L1_USE {
            let index = kind as usize - EventKind::IMMEDIATE_COUNT;
            part.0[index] = self.0[index];
        }
        part
    }

    /// True when every counter is zero.
    pub fn is_zero(&self) -> bool {
        self.0.iter().all(|&count| count == 0)
    }
}

impl AddAssign<&UseCost> for UseCost {
    fn add_assign(&mut self, other: &UseCost) {
        for (mine, theirs) in self.0.iter_mut().zip(&other.0) {
            *mine += theirs;
        }
    }
}

impl AddAssign<&UseCost> for Cost {
    fn add_assign(&mut self, other: &UseCost) {
        let use_part = &mut self.0[EventKind::IMMEDIATE_COUNT..];
        for (mine, theirs) in use_part.iter_mut().zip(&other.0) {
            *mine += theirs;
        }
    }
}

/// The cache-use kinds of an L1 residency, in [`ResidencyCost`]'s order.
const L1_USE: [EventKind; 4] = [
    EventKind::AcCost1,
    EventKind::SpLoss1,
    EventKind::Loaded1,
    EventKind::Used1,
];

/// How far each LL kind comes after its L1 kind.
const LL_SHIFT: usize = EventKind::AcCost2 as usize - EventKind::AcCost1 as usize;

// Each LL kind is its L1 kind shifted by the same amount, which is all a
// [`ResidencyCost`] keeps of its level.
const _: () = {
    let ll = [
        EventKind::AcCost2,
        EventKind::SpLoss2,
        EventKind::Loaded2,
        EventKind::Used2,
    ];
    let mut i = 0;
    while i < ll.len() {
        assert!(ll[i] as usize == L1_USE[i] as usize + LL_SHIFT);
        i += 1;
    }
};

/// The cache-use cost of one ended residency: four counters of one level
/// (temporal loss, bytes wasted, loaded and used). Adding it touches only
/// those four, one by one, at places fixed but for the level: no whole
/// [`UseCost`] is built and read back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ResidencyCost {
    /// 0 for L1, [`LL_SHIFT`] for LL.
    shift: usize,
    counts: [u64; 4],
}

impl ResidencyCost {
    /// An L1 residency's temporal loss, bytes wasted, loaded and used.
    pub fn l1(counts: [u64; 4]) -> ResidencyCost {
        ResidencyCost { shift: 0, counts }
    }

    /// An LL residency's temporal loss, bytes wasted, loaded and used.
    pub fn ll(counts: [u64; 4]) -> ResidencyCost {
        ResidencyCost {
            shift: LL_SHIFT,
            counts,
        }
    }

    /// The counter of `kind`: 0 for another level's.
    pub fn get(&self, kind: EventKind) -> u64 {
        L1_USE
            .iter()
            .position(|&mine| mine as usize + self.shift == kind as usize)
            .map_or(0, |i| self.counts[i])
    }
}

impl AddAssign<&ResidencyCost> for UseCost {
    #[inline]
    fn add_assign(&mut self, other: &ResidencyCost) {
        for (kind, count) in L1_USE.into_iter().zip(other.counts) {
            let index = kind as usize - EventKind::IMMEDIATE_COUNT + other.shift;
            // Below the length anyway; taken modulo it (a mask), so that no
            // bounds check is made on every eviction's charge.
            self.0[index % USE_COUNT] += count;
        }
    }
}

impl AddAssign<&ResidencyCost> for Cost {
    #[inline]
    fn add_assign(&mut self, other: &ResidencyCost) {
        for (kind, count) in L1_USE.into_iter().zip(other.counts) {
            self.0[kind as usize + other.shift] += count;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_are_in_callgrind_order_and_round_trip_by_name() {
        let names: Vec<&str> = EventKind::ALL.iter().map(|k| k.name()).collect();
        assert_eq!(
            names[..9],
            [
                "Ir", "Dr", "Dw", "I1mr", "D1mr", "D1mw", "ILmr", "DLmr", "DLmw"
            ]
        );
        assert_eq!(names[9..13], ["AcCost1", "SpLoss1", "AcCost2", "SpLoss2"]);
        for kind in EventKind::ALL {
            assert_eq!(EventKind::ALL[kind as usize], kind);
        }
    }

    #[test]
    fn event_set_without_cache_use_stops_after_the_immediate_kinds() {
        assert_eq!(EventSet::new(false).kinds().len(), 9);
        assert_eq!(EventSet::new(true).kinds().len(), EVENT_COUNT);
        assert!(EventKind::DLmw.is_immediate());
        assert!(!EventKind::AcCost1.is_immediate());
    }

    #[test]
    fn add_and_subtract_are_per_counter() {
        let mut a = Cost::ZERO;
        a[EventKind::Ir] = 5;
        a[EventKind::SpLoss2] = 7;
        let mut b = a;
        b += &a;
        assert_eq!(b[EventKind::Ir], 10);
        assert_eq!((&b - &a), a);
        assert!(!a.is_zero());
        assert!(Cost::ZERO.is_zero());
    }

    #[test]
    fn use_cost_adds_into_the_cache_use_kinds() {
        let mut use_cost = UseCost::default();
        use_cost += &ResidencyCost::ll([0, 9, 0, 0]);
        use_cost += &ResidencyCost::l1([2, 0, 0, 0]);
        assert_eq!(use_cost.get(EventKind::SpLoss2), 9);
        let mut cost = Cost::ZERO;
        cost[EventKind::Ir] = 1;
        cost += &use_cost;
        cost += &use_cost;
        assert_eq!(cost[EventKind::SpLoss2], 18);
        assert_eq!(cost[EventKind::AcCost1], 4);
        assert_eq!(cost[EventKind::Ir], 1);
        assert_eq!(cost.0.iter().sum::<u64>(), 23);
    }

    #[test]
    fn a_residency_adds_its_four_counters_only() {
        let residency = ResidencyCost::ll([500, 48, 64, 16]);
        assert_eq!(residency.get(EventKind::AcCost2), 500);
        assert_eq!(residency.get(EventKind::SpLoss2), 48);
        assert_eq!(residency.get(EventKind::Loaded2), 64);
        assert_eq!(residency.get(EventKind::Used2), 16);
        assert_eq!(residency.get(EventKind::SpLoss1), 0);
        let mut use_cost = UseCost::default();
        use_cost += &residency;
        use_cost += &residency;
        let mut cost = Cost::ZERO;
        cost += &residency;
        for kind in EventKind::ALL
            .into_iter()
            .filter(|kind| !kind.is_immediate())
        {
            assert_eq!(use_cost.get(kind), 2 * residency.get(kind), "{kind:?}");
            assert_eq!(cost[kind], residency.get(kind), "{kind:?}");
        }
        assert_eq!(cost.0.iter().sum::<u64>(), 628);
        let mut l1 = UseCost::default();
        l1 += &ResidencyCost::l1([1, 2, 3, 4]);
        assert_eq!(l1.get(EventKind::AcCost1), 1);
        assert_eq!(l1.get(EventKind::SpLoss1), 2);
        assert_eq!(l1.get(EventKind::Loaded1), 3);
        assert_eq!(l1.get(EventKind::Used1), 4);
        assert_eq!(l1.0.iter().sum::<u64>(), 10);
        let mut both = l1;
        both += &residency;
        assert_eq!(both.l1_part(), l1);
    }
}
