//! The connection table: every endpoint of the world (a TCP connection's end, a UDP socket) in a
//! slot, named by a generation-checked `ConnId`. A freed slot is reused with its generation
//! advanced, so a packet or a timer of a connection that no longer exists is recognised as stale,
//! and the table's memory stays flat over a long run of short connections.

use crate::net::{ConnId, Dir, Label, NodeId};
use crate::tcp::config::TcpConfig;
use crate::tcp::TcpConn;
use std::sync::Arc;

/// How many distinct TCP configurations the table remembers to share (`share_config`).
const SHARED_CONFIGS: usize = 8;

/// A UDP endpoint: no state machine, only counters (payload bytes).
#[derive(Clone, Debug, Default)]
pub struct UdpSocket {
    pub sent_pkts: u64,
    pub sent_bytes: u64,
    pub rcvd_pkts: u64,
    pub rcvd_bytes: u64,
    /// Datagrams to this socket dropped on the way (by a queue, a loss, a filter).
    pub lost_pkts: u64,
    pub lost_bytes: u64,
}

pub enum EndpointKind {
    Tcp(TcpConn),
    Udp(UdpSocket),
}

/// One end of a connection and where it sits.
pub struct Endpoint {
    pub node: NodeId,
    pub peer: ConnId,
    pub peer_node: NodeId,
    /// The application told of this endpoint's events.
    pub app: u32,
    pub label: Label,
    /// Direction of the packets this endpoint sends.
    pub dir: Dir,
    pub kind: EndpointKind,
}

impl Endpoint {
    pub fn tcp(&self) -> Option<&TcpConn> {
        match &self.kind {
            EndpointKind::Tcp(c) => Some(c),
            EndpointKind::Udp(_) => None,
        }
    }

    pub fn tcp_mut(&mut self) -> Option<&mut TcpConn> {
        match &mut self.kind {
            EndpointKind::Tcp(c) => Some(c),
            EndpointKind::Udp(_) => None,
        }
    }
}

struct Slot {
    gen: u32,
    ep: Option<Endpoint>,
}

#[derive(Default)]
pub struct ConnTable {
    slots: Vec<Slot>,
    free: Vec<u32>,
    live: usize,
    /// The last distinct TCP configurations handed out, most recent last.
    cfgs: Vec<Arc<TcpConfig>>,
}

impl ConnTable {
    /// The id the next `insert` will return (so that two ends can name each other).
    pub fn next_ids(&self) -> (ConnId, ConnId) {
        let mut ids = self.free.iter().rev().copied().map(|i| ConnId { idx: i, gen: self.slots[i as usize].gen });
        let a = ids.next().unwrap_or(ConnId { idx: self.slots.len() as u32, gen: 0 });
        let b = ids.next().unwrap_or(ConnId { idx: self.slots.len() as u32 + (a.idx >= self.slots.len() as u32) as u32, gen: 0 });
        (a, b)
    }

    pub fn insert(&mut self, ep: Endpoint) -> ConnId {
        self.live += 1;
        match self.free.pop() {
            Some(i) => {
                let s = &mut self.slots[i as usize];
                s.ep = Some(ep);
                ConnId { idx: i, gen: s.gen }
            }
            None => {
                self.slots.push(Slot { gen: 0, ep: Some(ep) });
                ConnId { idx: self.slots.len() as u32 - 1, gen: 0 }
            }
        }
    }

    pub fn get(&self, id: ConnId) -> Option<&Endpoint> {
        self.slots.get(id.idx as usize).filter(|s| s.gen == id.gen).and_then(|s| s.ep.as_ref())
    }

    pub fn get_mut(&mut self, id: ConnId) -> Option<&mut Endpoint> {
        self.slots.get_mut(id.idx as usize).filter(|s| s.gen == id.gen).and_then(|s| s.ep.as_mut())
    }

    /// Two distinct endpoints at once (a connection's two ends).
    pub fn pair_mut(&mut self, a: ConnId, b: ConnId) -> Option<(&mut Endpoint, &mut Endpoint)> {
        let (i, j) = (a.idx as usize, b.idx as usize);
        if i == j || i >= self.slots.len() || j >= self.slots.len() {
            return None;
        }
        let (lo, hi) = self.slots.split_at_mut(i.max(j));
        let (si, sj) = if i < j { (&mut lo[i], &mut hi[0]) } else { (&mut hi[0], &mut lo[j]) };
        if si.gen != a.gen || sj.gen != b.gen {
            return None;
        }
        Some((si.ep.as_mut()?, sj.ep.as_mut()?))
    }

    /// Free an endpoint; its id (and every packet and timer naming it) becomes stale.
    pub fn remove(&mut self, id: ConnId) -> Option<Endpoint> {
        let s = self.slots.get_mut(id.idx as usize).filter(|s| s.gen == id.gen)?;
        let ep = s.ep.take()?;
        s.gen = s.gen.wrapping_add(1);
        self.free.push(id.idx);
        self.live -= 1;
        Some(ep)
    }

    /// Endpoints alive now.
    pub fn live(&self) -> usize {
        self.live
    }

    /// One copy of a TCP configuration for every connection configured alike: the copy handed
    /// out before for an equal configuration (among the last `SHARED_CONFIGS` distinct ones),
    /// else a new one. A connection never changes its configuration, so sharing changes nothing
    /// but memory (4,096 flows of one configuration hold one copy, not 16,384).
    pub fn share_config(&mut self, cfg: &TcpConfig) -> Arc<TcpConfig> {
        if let Some(i) = self.cfgs.iter().rposition(|c| **c == *cfg) {
            return self.cfgs[i].clone();
        }
        if self.cfgs.len() == SHARED_CONFIGS {
            self.cfgs.remove(0);
        }
        let c = Arc::new(cfg.clone());
        self.cfgs.push(c.clone());
        c
    }

    /// Slots ever allocated (the table's high-water mark).
    pub fn capacity(&self) -> usize {
        self.slots.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn udp(node: u32) -> Endpoint {
        Endpoint { node: NodeId(node), peer: ConnId::default(), peer_node: NodeId(0), app: 0, label: Label::default(), dir: Dir::Forward, kind: EndpointKind::Udp(UdpSocket::default()) }
    }

    #[test]
    fn freed_ids_are_stale_and_slots_are_reused() {
        let mut t = ConnTable::default();
        let (pa, pb) = t.next_ids();
        let a = t.insert(udp(1));
        let b = t.insert(udp(2));
        assert_eq!((pa, pb), (a, b));
        assert!(t.remove(a).is_some());
        assert!(t.get(a).is_none(), "a freed id is stale");
        assert!(t.remove(a).is_none());
        let (pc, pd) = t.next_ids();
        let c = t.insert(udp(3));
        let d = t.insert(udp(4));
        assert_eq!((pc, pd), (c, d));
        assert_eq!(c.idx, a.idx, "the slot is reused");
        assert_ne!(c.gen, a.gen, "with a new generation");
        assert_eq!(t.get(c).unwrap().node, NodeId(3));
        assert_eq!((t.live(), t.capacity()), (3, 3));
        for id in [b, c, d] {
            t.remove(id);
        }
        assert_eq!(t.live(), 0);
    }

    #[test]
    fn connections_configured_alike_share_one_configuration() {
        let mut t = ConnTable::default();
        let rfc = TcpConfig::rfc();
        let mut other = TcpConfig::rfc();
        other.mss = crate::units::Size(536);
        let a = t.share_config(&rfc);
        let b = t.share_config(&other);
        let c = t.share_config(&rfc.clone());
        assert!(Arc::ptr_eq(&a, &c), "an equal configuration gets the copy handed out before");
        assert!(!Arc::ptr_eq(&a, &b));
        assert!(*a == rfc && *b == other);
        // Only the last SHARED_CONFIGS distinct ones are remembered.
        for k in 0..SHARED_CONFIGS {
            let mut x = TcpConfig::rfc();
            x.mss = crate::units::Size(1000 + k as u64);
            t.share_config(&x);
        }
        assert!(t.cfgs.len() <= SHARED_CONFIGS);
        assert!(!Arc::ptr_eq(&a, &t.share_config(&rfc)), "forgotten, so copied anew");
    }
}
