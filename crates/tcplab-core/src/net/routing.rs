//! Static shortest-path routing (fewest hops; ties go to the link declared first), computed once
//! when the world is built. `next_hop[src][dst]` is the link direction a packet takes at `src`.

use super::link::LinkDirId;
use super::packet::NodeId;
use std::collections::VecDeque;

pub struct Routes {
    n: usize,
    next_hop: Vec<Option<LinkDirId>>,
}

impl Routes {
    /// `dirs` lists every link direction as (from, to), indexed by LinkDirId.
    pub fn compute(n_nodes: usize, dirs: &[(NodeId, NodeId)]) -> Routes {
        let mut adj: Vec<Vec<(usize, LinkDirId)>> = vec![Vec::new(); n_nodes];
        for (i, &(a, b)) in dirs.iter().enumerate() {
            adj[a.0 as usize].push((b.0 as usize, LinkDirId(i as u32)));
        }
        let mut next_hop = vec![None; n_nodes * n_nodes];
        for src in 0..n_nodes {
            // BFS from src remembering the first hop used to reach each node.
            let mut first: Vec<Option<LinkDirId>> = vec![None; n_nodes];
            let mut seen = vec![false; n_nodes];
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
            next_hop[src * n_nodes..(src + 1) * n_nodes].copy_from_slice(&first);
        }
        Routes { n: n_nodes, next_hop }
    }

    pub fn next_hop(&self, at: NodeId, dst: NodeId) -> Option<LinkDirId> {
        self.next_hop[at.0 as usize * self.n + dst.0 as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dumbbell_routes() {
        // 0=s, 1=left, 2=right, 3=r; each link both ways.
        let dirs = [(0, 1), (1, 0), (1, 2), (2, 1), (2, 3), (3, 2)].map(|(a, b)| (NodeId(a), NodeId(b)));
        let r = Routes::compute(4, &dirs);
        assert_eq!(r.next_hop(NodeId(0), NodeId(3)), Some(LinkDirId(0)));
        assert_eq!(r.next_hop(NodeId(1), NodeId(3)), Some(LinkDirId(2)));
        assert_eq!(r.next_hop(NodeId(3), NodeId(0)), Some(LinkDirId(5)));
        assert_eq!(r.next_hop(NodeId(0), NodeId(0)), None);
    }

    #[test]
    fn unreachable() {
        let r = Routes::compute(3, &[(NodeId(0), NodeId(1))]);
        assert_eq!(r.next_hop(NodeId(1), NodeId(0)), None);
        assert_eq!(r.next_hop(NodeId(0), NodeId(2)), None);
    }
}
