//! Static shortest-path routing: fewest hops, ties to the link declared first. The next hop a
//! packet takes at node `at` towards `dst` is the first link of the path a breadth-first search
//! from `at` finds to `dst` (neighbours visited in link order, a node reached through the node
//! discovered first).
//!
//! Set-up and memory are O(nodes + links), not O(nodes²): no table of every pair is built.
//! - A *stub* is a node with a single link (one direction out, one in, both to the same
//!   neighbour, which is not itself a stub of that link): a host on an access link. Every path
//!   from a stub leaves through its link, and every path to it arrives from its neighbour, so a
//!   stub needs no table: at a stub the next hop is its link; towards a stub it is the next hop
//!   towards its neighbour (and, at the neighbour, the link down to it).
//! - The other nodes form the *core* (the routers, and hosts with more than one link). Paths
//!   between core nodes never pass through a stub (a stub is a dead end), so a breadth-first
//!   search over the core alone finds the same paths, in the same order, as one over the whole
//!   graph. A core node's row of next hops (one entry per core node) is computed the first time a
//!   packet is forwarded at it, so only the routers that forward build a row: a dumbbell with 10⁵
//!   host pairs has two rows of two entries.
//!
//! The answers are exactly those of a breadth-first search from every node over the whole graph
//! (the test `same_as_all_pairs_bfs` checks this on random graphs).

use super::link::LinkDirId;
use super::packet::NodeId;
use std::collections::{HashMap, VecDeque};

const NONE: u32 = u32::MAX;

#[derive(Clone, Copy, Debug)]
enum Role {
    /// A node with a single link: `up` is the link direction out of it, `down` the one into it,
    /// `via` the neighbour.
    Stub { up: u32, down: u32, via: u32 },
    /// A core node: its index among the core nodes.
    Core(u32),
}

pub struct Routes {
    role: Vec<Role>,
    /// The core nodes' ids, by core index.
    core: Vec<u32>,
    /// The core's adjacency, by core index: (neighbour's core index, link direction), link order.
    adj: Vec<Vec<(u32, u32)>>,
    /// Connected component of each core node (reachability without a search).
    comp: Vec<u32>,
    /// Next-hop rows of the core nodes, by core index, computed on first use: the link direction
    /// to take towards each core node (`NONE`: itself or unreachable).
    rows: Vec<Option<Box<[u32]>>>,
}

impl Routes {
    /// `dirs` lists every link direction as (from, to), indexed by LinkDirId.
    pub fn compute(n_nodes: usize, dirs: &[(NodeId, NodeId)]) -> Routes {
        let mut out: Vec<Vec<(u32, u32)>> = vec![Vec::new(); n_nodes];
        let mut in_deg = vec![0u32; n_nodes];
        let mut in_from = vec![(NONE, NONE); n_nodes];
        for (i, &(a, b)) in dirs.iter().enumerate() {
            out[a.0 as usize].push((b.0, i as u32));
            in_deg[b.0 as usize] += 1;
            in_from[b.0 as usize] = (a.0, i as u32);
        }
        // A candidate stub: one link out and one in, to and from the same neighbour.
        let single = |v: usize| out[v].len() == 1 && in_deg[v] == 1 && in_from[v].0 == out[v][0].0;
        let mut role = Vec::with_capacity(n_nodes);
        let mut core = Vec::new();
        for v in 0..n_nodes {
            // Two nodes joined only to each other are both core (neither is a dead end hanging
            // off the other's side).
            if single(v) && !single(out[v][0].0 as usize) {
                role.push(Role::Stub { up: out[v][0].1, down: in_from[v].1, via: out[v][0].0 });
            } else {
                role.push(Role::Core(core.len() as u32));
                core.push(v as u32);
            }
        }
        let adj: Vec<Vec<(u32, u32)>> = core
            .iter()
            .map(|&v| {
                out[v as usize]
                    .iter()
                    .filter_map(|&(nb, l)| match role[nb as usize] {
                        Role::Core(c) => Some((c, l)),
                        Role::Stub { .. } => None,
                    })
                    .collect()
            })
            .collect();
        // Components over the core links taken both ways; with full-duplex links (as the world
        // builds them) that is reachability. A one-way link can make two nodes of one component
        // unreachable in one direction: the row, not the component, answers then.
        let mut comp = vec![NONE; core.len()];
        let mut und: Vec<Vec<u32>> = vec![Vec::new(); core.len()];
        for (c, nbs) in adj.iter().enumerate() {
            for &(nb, _) in nbs {
                und[c].push(nb);
                und[nb as usize].push(c as u32);
            }
        }
        let mut stack = Vec::new();
        for s in 0..core.len() {
            if comp[s] != NONE {
                continue;
            }
            comp[s] = s as u32;
            stack.push(s as u32);
            while let Some(u) = stack.pop() {
                for &nb in &und[u as usize] {
                    if comp[nb as usize] == NONE {
                        comp[nb as usize] = s as u32;
                        stack.push(nb);
                    }
                }
            }
        }
        let rows = vec![None; core.len()];
        Routes { role, core, adj, comp, rows }
    }

    /// The breadth-first search from core node `src` over the core.
    fn row(&self, src: u32) -> Box<[u32]> {
        let n = self.core.len();
        let mut first = vec![NONE; n].into_boxed_slice();
        let mut seen = vec![false; n];
        seen[src as usize] = true;
        let mut q = VecDeque::new();
        for &(nb, l) in &self.adj[src as usize] {
            if !seen[nb as usize] {
                seen[nb as usize] = true;
                first[nb as usize] = l;
                q.push_back(nb);
            }
        }
        while let Some(u) = q.pop_front() {
            for &(nb, _) in &self.adj[u as usize] {
                if !seen[nb as usize] {
                    seen[nb as usize] = true;
                    first[nb as usize] = first[u as usize];
                    q.push_back(nb);
                }
            }
        }
        first
    }

    /// The next hop between two core nodes (by core index), computing `at`'s row if needed.
    #[inline]
    fn core_hop(&mut self, at: u32, dst: u32) -> u32 {
        if at == dst || self.comp[at as usize] != self.comp[dst as usize] {
            return NONE;
        }
        if self.rows[at as usize].is_none() {
            let r = self.row(at);
            self.rows[at as usize] = Some(r);
        }
        self.rows[at as usize].as_ref().expect("computed")[dst as usize]
    }

    /// The link direction a packet at `at` takes towards `dst` (None: it is there, or there is no
    /// path).
    #[inline]
    pub fn next_hop(&mut self, at: NodeId, dst: NodeId) -> Option<LinkDirId> {
        if at == dst {
            return None;
        }
        // Where the path must reach in the core: the destination, or the router above it.
        let (target, down) = match self.role[dst.0 as usize] {
            Role::Core(c) => (c, NONE),
            Role::Stub { down, via, .. } => match self.role[via as usize] {
                Role::Core(c) => (c, down),
                Role::Stub { .. } => unreachable!("a stub's neighbour is core"),
            },
        };
        let hop = match self.role[at.0 as usize] {
            Role::Stub { up, via, .. } => {
                // Out through the only link, if the destination can be reached from there.
                let Role::Core(v) = self.role[via as usize] else { unreachable!("a stub's neighbour is core") };
                if v == target || self.core_hop(v, target) != NONE {
                    up
                } else {
                    NONE
                }
            }
            Role::Core(c) if c == target => down,
            Role::Core(c) => self.core_hop(c, target),
        };
        (hop != NONE).then_some(LinkDirId(hop))
    }

    /// Next-hop rows computed so far (one per core node that forwarded a packet).
    pub fn rows_built(&self) -> usize {
        self.rows.iter().filter(|r| r.is_some()).count()
    }
}

/// Whole routes, for packets to follow hop by hop without a lookup at each: the link directions
/// from a source to a destination, as `Routes::next_hop` gives them node after node, stored once
/// per (source, destination) pair in one table and ended by a mark (`hop` gives None there: the
/// destination, or a node with no way on). A packet carries the index of its next hop in the
/// table (`Packet::hop`) and advances it as it is forwarded.
#[derive(Default)]
pub struct Paths {
    hops: Vec<u32>,
    start: HashMap<(u32, u32), u32>,
}

impl Paths {
    /// Where the route from `src` to `dst` starts in the table, walking it the first time the
    /// pair is asked for; `to` is the node a link direction leads to.
    pub fn start(&mut self, routes: &mut Routes, to: impl Fn(LinkDirId) -> NodeId, src: NodeId, dst: NodeId) -> u32 {
        if let Some(&i) = self.start.get(&(src.0, dst.0)) {
            return i;
        }
        let i = self.hops.len() as u32;
        let mut at = src;
        // A route visits each node at most once: the bound only guards against a cycle.
        for _ in 0..=routes.role.len() {
            match routes.next_hop(at, dst) {
                Some(l) => {
                    self.hops.push(l.0);
                    at = to(l);
                }
                None => break,
            }
        }
        self.hops.push(NONE);
        self.start.insert((src.0, dst.0), i);
        i
    }

    /// The link direction at index `i` of the table (None: the end of a route).
    #[inline]
    pub fn hop(&self, i: u32) -> Option<LinkDirId> {
        let l = self.hops[i as usize];
        (l != NONE).then_some(LinkDirId(l))
    }

    /// Entries in the table (link directions and end marks).
    pub fn len(&self) -> usize {
        self.hops.len()
    }

    pub fn is_empty(&self) -> bool {
        self.hops.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    #[test]
    fn paths_follow_next_hop_and_are_stored_once_a_pair() {
        // 0=s, 1=left, 2=right, 3=r; each link both ways.
        let dirs = [(0, 1), (1, 0), (1, 2), (2, 1), (2, 3), (3, 2)].map(|(a, b)| (NodeId(a), NodeId(b)));
        let mut r = Routes::compute(4, &dirs);
        let mut p = Paths::default();
        let to = |l: LinkDirId| dirs[l.0 as usize].1;
        let a = p.start(&mut r, to, NodeId(0), NodeId(3));
        let hops: Vec<_> = (a..).map_while(|i| p.hop(i)).map(|l| l.0).collect();
        assert_eq!(hops, [0, 2, 4]);
        let b = p.start(&mut r, to, NodeId(3), NodeId(0));
        let hops: Vec<_> = (b..).map_while(|i| p.hop(i)).map(|l| l.0).collect();
        assert_eq!(hops, [5, 3, 1]);
        // Asked again: the same entry, nothing added.
        let n = p.len();
        assert_eq!(p.start(&mut r, to, NodeId(0), NodeId(3)), a);
        assert_eq!(p.len(), n);
        // From a router, and to oneself (an empty route).
        let c = p.start(&mut r, to, NodeId(1), NodeId(3));
        assert_eq!((c..).map_while(|i| p.hop(i)).map(|l| l.0).collect::<Vec<_>>(), [2, 4]);
        let d = p.start(&mut r, to, NodeId(2), NodeId(2));
        assert_eq!(p.hop(d), None);
    }

    #[test]
    fn a_path_ends_where_there_is_no_way_on() {
        // Two components: 0-1 and 2-3.
        let dirs = [(0, 1), (1, 0), (2, 3), (3, 2)].map(|(a, b)| (NodeId(a), NodeId(b)));
        let mut r = Routes::compute(4, &dirs);
        let mut p = Paths::default();
        let to = |l: LinkDirId| dirs[l.0 as usize].1;
        let a = p.start(&mut r, to, NodeId(0), NodeId(3));
        assert_eq!(p.hop(a), None);
    }

    #[test]
    fn dumbbell_routes() {
        // 0=s, 1=left, 2=right, 3=r; each link both ways.
        let dirs = [(0, 1), (1, 0), (1, 2), (2, 1), (2, 3), (3, 2)].map(|(a, b)| (NodeId(a), NodeId(b)));
        let mut r = Routes::compute(4, &dirs);
        assert_eq!(r.next_hop(NodeId(0), NodeId(3)), Some(LinkDirId(0)));
        assert_eq!(r.next_hop(NodeId(1), NodeId(3)), Some(LinkDirId(2)));
        assert_eq!(r.next_hop(NodeId(3), NodeId(0)), Some(LinkDirId(5)));
        assert_eq!(r.next_hop(NodeId(2), NodeId(3)), Some(LinkDirId(4)));
        assert_eq!(r.next_hop(NodeId(0), NodeId(0)), None);
        assert_eq!(r.rows_built(), 2, "a row for each router, of two entries");
    }

    #[test]
    fn unreachable() {
        let mut r = Routes::compute(3, &[(NodeId(0), NodeId(1))]);
        assert_eq!(r.next_hop(NodeId(1), NodeId(0)), None);
        assert_eq!(r.next_hop(NodeId(0), NodeId(2)), None);
        assert_eq!(r.next_hop(NodeId(0), NodeId(1)), Some(LinkDirId(0)));
    }

    #[test]
    fn two_nodes_and_a_second_island() {
        // 0-1 joined only to each other; 2-3 likewise: no path between the pairs.
        let dirs = [(0, 1), (1, 0), (2, 3), (3, 2)].map(|(a, b)| (NodeId(a), NodeId(b)));
        let mut r = Routes::compute(4, &dirs);
        assert_eq!(r.next_hop(NodeId(0), NodeId(1)), Some(LinkDirId(0)));
        assert_eq!(r.next_hop(NodeId(1), NodeId(0)), Some(LinkDirId(1)));
        assert_eq!(r.next_hop(NodeId(3), NodeId(2)), Some(LinkDirId(3)));
        assert_eq!(r.next_hop(NodeId(0), NodeId(2)), None);
        assert_eq!(r.next_hop(NodeId(3), NodeId(1)), None);
    }

    /// The previous definition: a breadth-first search from every node over the whole graph.
    fn all_pairs(n: usize, dirs: &[(NodeId, NodeId)]) -> Vec<Option<LinkDirId>> {
        let mut adj: Vec<Vec<(usize, LinkDirId)>> = vec![Vec::new(); n];
        for (i, &(a, b)) in dirs.iter().enumerate() {
            adj[a.0 as usize].push((b.0 as usize, LinkDirId(i as u32)));
        }
        let mut table = vec![None; n * n];
        for src in 0..n {
            let mut first: Vec<Option<LinkDirId>> = vec![None; n];
            let mut seen = vec![false; n];
            seen[src] = true;
            let mut q = VecDeque::new();
            for &(nb, l) in &adj[src] {
                if !seen[nb] {
                    seen[nb] = true;
                    first[nb] = Some(l);
                    q.push_back(nb);
                }
            }
            while let Some(u) = q.pop_front() {
                for &(nb, _) in &adj[u] {
                    if !seen[nb] {
                        seen[nb] = true;
                        first[nb] = first[u];
                        q.push_back(nb);
                    }
                }
            }
            table[src * n..(src + 1) * n].copy_from_slice(&first);
        }
        table
    }

    #[test]
    fn same_as_all_pairs_bfs() {
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(7);
        for case in 0..300 {
            let n = rng.gen_range(1..14usize);
            let mut dirs = Vec::new();
            // Random full-duplex links (parallel links and islands allowed), a few one-way ones.
            for _ in 0..rng.gen_range(0..2 * n) {
                let (a, b) = (rng.gen_range(0..n) as u32, rng.gen_range(0..n) as u32);
                if a == b {
                    continue;
                }
                dirs.push((NodeId(a), NodeId(b)));
                if case % 5 != 0 || rng.gen_bool(0.8) {
                    dirs.push((NodeId(b), NodeId(a)));
                }
            }
            let want = all_pairs(n, &dirs);
            let mut r = Routes::compute(n, &dirs);
            for a in 0..n {
                for b in 0..n {
                    assert_eq!(r.next_hop(NodeId(a as u32), NodeId(b as u32)), want[a * n + b], "case {case}: {a} -> {b} in {dirs:?}");
                }
            }
        }
    }
}
