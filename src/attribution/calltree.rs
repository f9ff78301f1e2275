//! The back-dating tree: a reference-counted partial call tree (Weidendorfer
//! and Breitbart's extension of Callgrind, which back-dates cache-use
//! metrics to the calls on the loading stack).
//!
//! A node stands for one call path: its parent's path plus one call arc.
//! Every context (thread, or signal handler in a thread) has its own tree
//! and one *active* node, the path of its current stack. A line loaded while
//! a node is active holds a reference to that node until it is evicted; at
//! eviction its cost is added to the node.
//!
//! A call's node is made only when a line is loaded under it: until then the
//! active node is its caller's path, and [`TreeCursor`] keeps the calls
//! entered since, which a line's load turns into nodes. Most calls load
//! nothing: small functions whose code and data are cached. Their nodes
//! would be made at the call and pruned at the return with no cost, which
//! changes no arc's cost; the tree's statistics count the nodes made.
//!
//! Invariants:
//! - `refs` counts the resident lines holding the node, plus one while the
//!   node is active.
//! - A node with `refs == 0` and no children can never receive cost again:
//!   it is *pruned*. Its cost goes to its arc and to its parent, and the
//!   parent is checked in turn (iteratively, so deep trees never recurse).
//! - Hence every arc on a path receives, once per occurrence on the path, the
//!   cost of every line loaded below it: exactly the back-dated inclusive
//!   cost. The cost reaching a root goes nowhere: it is the self cost of the
//!   context's outermost function, already counted per instruction.
//! - Live nodes never exceed the resident lines plus the nodes on active
//!   paths, which bounds memory by the cache sizes and the stack depths.
//!
//! Nodes live in an arena: a `Vec` of slots addressed by [`NodeId`], with
//! freed slots reused through a free list. A node's children are found
//! through one hash index keyed by (node, arc), so making a call's node
//! costs one lookup however many callees a function has; before it, the
//! child a node made or found last is tried, which is the one wanted when
//! a loop calls the same function over and over.

use std::num::NonZeroU32;

use rustc_hash::FxHashMap;

use crate::arcs::ArcId;
use crate::attribution::backdate::{Backdate, TreeStats};
use crate::cost::{EventKind, ResidencyCost, UseCost};
use crate::stack_samples::{PathId, Paths};

/// A node's slot in [`CallTree`]'s arena, plus one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct NodeId(NonZeroU32);

impl NodeId {
    fn index(self) -> usize {
        self.0.get() as usize - 1
    }
}

#[derive(Clone, Debug)]
struct Node {
    parent: Option<NodeId>,
    /// The call arc this node adds to its parent's path; `None` for a root.
    arc: Option<ArcId>,
    /// Number of live children.
    children: u32,
    /// The child made or found last: still this node's child along its arc
    /// if its `parent` says so, as a pruned node's is cleared.
    last_child: Option<NodeId>,
    refs: u32,
    /// Cost of evicted lines loaded at this path or below, not yet pushed up.
    cost: UseCost,
}

/// Where a context is in the tree: its active node, and the calls entered
/// below it under which no line was loaded yet, outermost first.
pub struct TreeCursor {
    node: NodeId,
    unmade: Vec<ArcId>,
}

/// The back-dating tree of every context of a run.
#[derive(Default)]
pub struct CallTree {
    nodes: Vec<Node>,
    free: Vec<NodeId>,
    /// Live child of a node along an arc: one lookup per call.
    child_of: FxHashMap<(NodeId, ArcId), NodeId>,
    /// Cost pushed into each arc by pruned nodes, indexed by [`ArcId`].
    arc_costs: Vec<UseCost>,
    live: u64,
    max_live: u64,
    created: u64,
    /// Sum of `live` over every instruction, for the mean.
    live_instructions: u128,
    last_change: u64,
    /// Per node, once asked for its stack: its call path in the stack
    /// samples' [`Paths`], so that a stack is looked up once per node, not
    /// once per arc per line. Reset when a slot is reused.
    paths: Vec<Option<PathId>>,
    /// The nodes of a stack whose paths are not known yet, with their arcs,
    /// innermost first.
    unknown: Vec<(NodeId, ArcId)>,
}

impl CallTree {
    /// An empty tree.
    pub fn new() -> CallTree {
        CallTree::default()
    }

    /// Nodes alive now.
    #[cfg(test)]
    pub fn live_nodes(&self) -> u64 {
        self.live
    }

    fn node(&mut self, id: NodeId) -> &mut Node {
        &mut self.nodes[id.index()]
    }

    /// Counts `delta` more nodes alive from `now` on. An access is timed
    /// at its instruction, and a trace may give a call, a thread switch or
    /// another thread's instructions between an instruction and its data:
    /// such an access counts as made when the latest of those was.
    fn count_live(&mut self, now: u64, delta: i64) {
        let now = now.max(self.last_change);
        self.live_instructions += u128::from(self.live) * u128::from(now - self.last_change);
        self.last_change = now;
        self.live = self.live.wrapping_add_signed(delta);
        self.max_live = self.max_live.max(self.live);
    }

    fn alloc(&mut self, parent: Option<NodeId>, arc: Option<ArcId>, now: u64) -> NodeId {
        self.count_live(now, 1);
        self.created += 1;
        let node = Node {
            parent,
            arc,
            children: 0,
            last_child: None,
            refs: 0,
            cost: UseCost::default(),
        };
        if let Some(id) = self.free.pop() {
            *self.node(id) = node;
            if let Some(path) = self.paths.get_mut(id.index()) {
                *path = None;
            }
            return id;
        }
        self.nodes.push(node);
        let slot = u32::try_from(self.nodes.len())
            .ok()
            .and_then(NonZeroU32::new)
            .expect("fewer than 2^32 tree nodes");
        NodeId(slot)
    }

    /// The child of `parent` along `arc`, created if missing.
    #[inline]
    fn child(&mut self, parent: NodeId, arc: ArcId, now: u64) -> NodeId {
        if let Some(last) = self.nodes[parent.index()].last_child {
            let node = &self.nodes[last.index()];
            if node.parent == Some(parent) && node.arc == Some(arc) {
                return last;
            }
        }
        let child = match self.child_of.get(&(parent, arc)) {
            Some(&child) => child,
            None => {
                let child = self.alloc(Some(parent), Some(arc), now);
                self.child_of.insert((parent, arc), child);
                self.node(parent).children += 1;
                child
            }
        };
        self.node(parent).last_child = Some(child);
        child
    }

    /// Makes the nodes of the calls `cursor` entered since its active node,
    /// the deepest becoming active.
    #[inline(never)]
    fn make_unmade(&mut self, cursor: &mut TreeCursor, now: u64) {
        let mut node = cursor.node;
        for &arc in &cursor.unmade {
            node = self.child(node, arc, now);
        }
        cursor.unmade.clear();
        // The active node's reference moves to the deepest; the nodes above
        // it stay alive, as each has a child now.
        self.nodes[node.index()].refs += 1;
        self.nodes[cursor.node.index()].refs -= 1;
        cursor.node = node;
    }

    /// Drops one reference; prunes the node and then its ancestors while
    /// they are unreferenced leaves.
    #[inline]
    fn release(&mut self, id: NodeId, now: u64) {
        let node = self.node(id);
        node.refs -= 1;
        if node.refs == 0 && node.children == 0 {
            self.prune(id, now);
        }
    }

    /// Prunes the unreferenced leaf `id`, and then its ancestors while they
    /// are unreferenced leaves.
    #[inline(never)]
    fn prune(&mut self, id: NodeId, now: u64) {
        let mut current = id;
        loop {
            let node = &mut self.nodes[current.index()];
            if node.refs != 0 || node.children != 0 {
                return;
            }
            let (parent, arc, cost) = (node.parent, node.arc, node.cost);
            // No longer anyone's child, should its parent's `last_child`
            // still name it.
            node.parent = None;
            self.free.push(current);
            self.count_live(now, -1);
            let (Some(parent), Some(arc)) = (parent, arc) else {
                return;
            };
            self.child_of.remove(&(parent, arc));
            if !cost.is_zero() {
                let index = arc.0 as usize;
                if self.arc_costs.len() <= index {
                    self.arc_costs.resize(index + 1, UseCost::default());
                }
                self.arc_costs[index] += &cost;
            }
            let parent_node = self.node(parent);
            parent_node.children -= 1;
            parent_node.cost += &cost;
            current = parent;
        }
    }
}

impl Backdate for CallTree {
    type Cursor = TreeCursor;
    type Line = Option<NodeId>;

    fn root(&mut self, now: u64) -> TreeCursor {
        let node = self.alloc(None, None, now);
        self.node(node).refs = 1;
        TreeCursor {
            node,
            unmade: Vec::new(),
        }
    }

    fn enter(&mut self, cursor: &mut TreeCursor, arc: ArcId, _: u64) {
        cursor.unmade.push(arc);
    }

    fn leave(&mut self, cursor: &mut TreeCursor, now: u64) {
        if cursor.unmade.pop().is_some() {
            return;
        }
        let node = cursor.node;
        let Some(parent) = self.node(node).parent else {
            debug_assert!(false, "leave at a root");
            return;
        };
        self.node(parent).refs += 1;
        cursor.node = parent;
        self.release(node, now);
    }

    fn close(&mut self, cursor: TreeCursor, now: u64) {
        debug_assert!(cursor.unmade.is_empty(), "close with calls active");
        self.release(cursor.node, now);
    }

    fn hold(&mut self, lane: usize, cursor: &mut TreeCursor, now: u64) -> Option<NodeId> {
        debug_assert_eq!(lane, 0, "one lane");
        if !cursor.unmade.is_empty() {
            self.make_unmade(cursor, now);
        }
        self.node(cursor.node).refs += 1;
        Some(cursor.node)
    }

    fn charge(&mut self, lane: usize, line: Option<NodeId>, cost: &ResidencyCost, now: u64) {
        debug_assert_eq!(lane, 0, "one lane");
        if let Some(id) = line {
            self.node(id).cost += cost;
            self.release(id, now);
        }
    }

    fn let_go(&mut self, lane: usize, line: Option<NodeId>, now: u64) {
        debug_assert_eq!(lane, 0, "one lane");
        if let Some(id) = line {
            self.release(id, now);
        }
    }

    fn miss(&mut self, lane: usize, _: &mut TreeCursor, _: EventKind) {
        debug_assert!(false, "a miss in lane {lane} of one");
    }

    fn stack(&mut self, line: &Option<NodeId>, paths: &mut Paths) -> Option<PathId> {
        self.paths.resize(self.nodes.len(), None);
        // Up from the line's node to a root or a node whose path is known,
        // then down, each node's path its parent's plus its arc.
        let mut path = None;
        let mut node = *line;
        while let Some(id) = node {
            let slot = &self.nodes[id.index()];
            // A root's path is empty.
            let Some(arc) = slot.arc else {
                break;
            };
            if let Some(known) = self.paths[id.index()] {
                path = Some(known);
                break;
            }
            self.unknown.push((id, arc));
            node = slot.parent;
        }
        while let Some((id, arc)) = self.unknown.pop() {
            path = Some(paths.child(path, arc));
            self.paths[id.index()] = path;
        }
        path
    }

    fn finish(mut self, now: u64) -> (Vec<UseCost>, Option<TreeStats>) {
        debug_assert_eq!(self.live, 0, "nodes left after every release");
        self.count_live(now, 0);
        let mean_nodes = (now != 0).then(|| self.live_instructions as f64 / now as f64);
        let stats = TreeStats {
            mean_nodes,
            max_nodes: self.max_live,
            created_nodes: self.created,
        };
        (self.arc_costs, Some(stats))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cost(spatial: u64) -> ResidencyCost {
        ResidencyCost::l1([0, spatial, 0, 0])
    }

    /// What an arc holds after `cost(spatial)` reached it once.
    fn arc(spatial: u64) -> UseCost {
        let mut arc = UseCost::default();
        arc += &cost(spatial);
        arc
    }

    #[test]
    fn eviction_after_return_reaches_every_arc_on_the_load_stack() {
        let mut tree = CallTree::new();
        let mut cursor = tree.root(0);
        tree.enter(&mut cursor, ArcId(0), 1); // main -> f
        tree.enter(&mut cursor, ArcId(1), 2); // f -> g
        let line = tree.hold(0, &mut cursor, 2);
        tree.leave(&mut cursor, 3);
        tree.leave(&mut cursor, 4);
        // g and f returned, but their nodes live while the line does.
        assert_eq!(tree.live_nodes(), 3);
        tree.charge(0, line, &cost(48), 5);
        assert_eq!(tree.live_nodes(), 1);
        tree.close(cursor, 6);
        assert_eq!(tree.live_nodes(), 0);
        let (arcs, stats) = tree.finish(6);
        assert_eq!(arcs, [arc(48), arc(48)]);
        let stats = stats.unwrap();
        assert_eq!(stats.max_nodes, 3);
        assert_eq!(stats.created_nodes, 3);
        // f's and g's nodes are made when the line is loaded: 1 node for 2
        // instructions, 3 for 3, 1 for 1: 12 / 6.
        assert!((stats.mean_nodes.unwrap() - 12.0 / 6.0).abs() < 1e-9);
    }

    #[test]
    fn recursion_charges_the_arc_once_per_frame_and_paths_are_shared() {
        let mut tree = CallTree::new();
        let mut cursor = tree.root(0);
        tree.enter(&mut cursor, ArcId(0), 0);
        tree.enter(&mut cursor, ArcId(0), 0); // recursive call
        let deep = tree.hold(0, &mut cursor, 0);
        tree.leave(&mut cursor, 0);
        let shallow = tree.hold(0, &mut cursor, 0);
        tree.enter(&mut cursor, ArcId(0), 0); // same path again
        let again = tree.hold(0, &mut cursor, 0); // the same node
        assert_eq!(tree.live_nodes(), 3);
        tree.leave(&mut cursor, 0);
        tree.leave(&mut cursor, 0);
        tree.charge(0, deep, &cost(10), 0);
        tree.charge(0, again, &cost(100), 0);
        tree.charge(0, shallow, &cost(1), 0);
        tree.close(cursor, 0);
        let (arcs, _) = tree.finish(0);
        assert_eq!(arcs, [arc(221)]);
    }

    #[test]
    fn freed_slots_are_reused() {
        let mut tree = CallTree::new();
        let mut cursor = tree.root(0);
        for arc in 0..1000 {
            tree.enter(&mut cursor, ArcId(arc), 0);
            let line = tree.hold(0, &mut cursor, 0);
            tree.leave(&mut cursor, 0);
            tree.charge(0, line, &cost(1), 0);
        }
        assert_eq!(tree.nodes.len(), 2);
        assert_eq!(tree.created, 1001);
    }

    #[test]
    fn a_pruned_child_reused_elsewhere_is_not_found_again() {
        let mut tree = CallTree::new();
        let mut first = tree.root(0);
        let mut second = tree.root(0);
        // The first context's main -> f: f's node is its root's last child,
        // then pruned.
        tree.enter(&mut first, ArcId(0), 0);
        let line = tree.hold(0, &mut first, 0);
        tree.leave(&mut first, 0);
        tree.charge(0, line, &cost(1), 0);
        // The second context's main -> f takes f's old slot.
        tree.enter(&mut second, ArcId(0), 0);
        let other = tree.hold(0, &mut second, 0);
        tree.leave(&mut second, 0);
        // The first context's main -> f again: a node of its own.
        tree.enter(&mut first, ArcId(0), 0);
        let again = tree.hold(0, &mut first, 0);
        tree.leave(&mut first, 0);
        assert_eq!(tree.live_nodes(), 4);
        assert_ne!(again, other);
        tree.charge(0, again, &cost(10), 0);
        tree.charge(0, other, &cost(100), 0);
        tree.close(first, 0);
        tree.close(second, 0);
        let (arcs, _) = tree.finish(0);
        assert_eq!(arcs, [arc(111)]);
    }

    #[test]
    fn a_stack_is_its_nodes_path_and_a_reused_slot_forgets_the_old_one() {
        let mut tree = CallTree::new();
        let mut paths = Paths::default();
        let mut cursor = tree.root(0);
        let bottom = tree.hold(0, &mut cursor, 0);
        assert_eq!(tree.stack(&bottom, &mut paths), None);
        tree.enter(&mut cursor, ArcId(3), 0);
        tree.enter(&mut cursor, ArcId(4), 0);
        let deep = tree.hold(0, &mut cursor, 0);
        let path = tree.stack(&deep, &mut paths).unwrap();
        assert_eq!(paths.get(path).1, ArcId(4));
        let outer = paths.get(path).0.unwrap();
        assert_eq!(paths.get(outer), (None, ArcId(3)));
        // Asked again, the path is remembered, not made again.
        assert_eq!(tree.stack(&deep, &mut paths), Some(path));
        assert_eq!(paths.len(), 2);
        // Once the node is freed, its slot takes another call's path.
        tree.leave(&mut cursor, 0);
        tree.charge(0, deep, &cost(1), 0);
        tree.enter(&mut cursor, ArcId(5), 0);
        let other = tree.hold(0, &mut cursor, 0);
        assert_eq!(other, deep, "the slot is reused");
        let path = tree.stack(&other, &mut paths).unwrap();
        assert_eq!(paths.get(path), (Some(outer), ArcId(5)));
    }

    #[test]
    fn calls_that_load_no_line_make_no_node() {
        let mut tree = CallTree::new();
        let mut cursor = tree.root(0);
        for arc in 0..1000 {
            tree.enter(&mut cursor, ArcId(arc), 0);
            tree.enter(&mut cursor, ArcId(arc + 1), 0);
            tree.leave(&mut cursor, 0);
            tree.leave(&mut cursor, 0);
        }
        tree.enter(&mut cursor, ArcId(7), 0);
        tree.enter(&mut cursor, ArcId(8), 0);
        let line = tree.hold(0, &mut cursor, 0);
        assert_eq!(tree.live_nodes(), 3);
        tree.leave(&mut cursor, 0);
        tree.leave(&mut cursor, 0);
        tree.charge(0, line, &cost(5), 0);
        tree.close(cursor, 0);
        let (arcs, stats) = tree.finish(0);
        assert_eq!(stats.unwrap().created_nodes, 3);
        assert_eq!(arcs[7..], [arc(5), arc(5)]);
        assert!(arcs[..7].iter().all(UseCost::is_zero));
    }
}
