//! Deterministic drop filters: drop exactly the chosen packets of a flow — its n-th SYN, the
//! first transmission of data segment k, the k-th ACK. These are the router filters of the
//! Seddigh study (§3: drop the SYN, the SYN-ACK, the GET) and the induced drops of TBIT.
//! A delay filter selects packets the same way and holds them back for a while instead, so that
//! later packets overtake them (the reordering of ns-2's validation suites, which delay one
//! segment on its way).

use super::packet::{Packet, PacketTag};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FilterKind {
    Syn,
    SynAck,
    /// Data segment number `seg` (1-based, by sequence).
    Data { seg: u64 },
    /// The k-th pure ACK of the receiver.
    Ack { k: u64 },
    Fin,
}

#[derive(Clone, Debug, PartialEq)]
pub struct DropFilter {
    /// The flow whose packets are dropped.
    pub flow: u32,
    pub kind: FilterKind,
    /// Which transmissions of the matching packet to drop (1 = the first; [1, 2] = the first two).
    /// Ignored for ACKs, each of which is sent once.
    pub transmissions: Vec<u32>,
    /// Only this transfer of a repeating flow (1-based), or every transfer.
    pub epoch: Option<u32>,
    pub dropped: u64,
}

/// Hold the packets `filter` selects for `by` before they are offered to the link.
#[derive(Clone, Debug, PartialEq)]
pub struct DelayFilter {
    /// The selection; its `dropped` counts the packets held.
    pub filter: DropFilter,
    pub by: crate::units::Time,
}

impl DropFilter {
    pub fn matches(&self, p: &Packet) -> bool {
        if p.label.flow != self.flow || self.epoch.is_some_and(|e| e != p.label.epoch) {
            return false;
        }
        let tx_hit = |tx: u32| self.transmissions.contains(&tx);
        match (self.kind, p.tag) {
            (FilterKind::Syn, PacketTag::Syn { tx }) => tx_hit(tx),
            (FilterKind::SynAck, PacketTag::SynAck { tx }) => tx_hit(tx),
            (FilterKind::Fin, PacketTag::Fin { tx }) => tx_hit(tx),
            (FilterKind::Data { seg }, PacketTag::Data { seg: s, tx }) => seg == s && tx_hit(tx),
            (FilterKind::Ack { k }, PacketTag::Ack { k: n }) => k == n,
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::Label;

    #[test]
    fn matches_only_the_chosen_transmission() {
        let f = DropFilter { flow: 1, kind: FilterKind::Data { seg: 3 }, transmissions: vec![1], epoch: None, dropped: 0 };
        let mut p = Packet { label: Label { flow: 1, epoch: 1 }, tag: PacketTag::Data { seg: 3, tx: 1 }, ..Default::default() };
        assert!(f.matches(&p));
        p.tag = PacketTag::Data { seg: 3, tx: 2 };
        assert!(!f.matches(&p));
        p.tag = PacketTag::Data { seg: 4, tx: 1 };
        assert!(!f.matches(&p));
        p.label.flow = 0;
        p.tag = PacketTag::Data { seg: 3, tx: 1 };
        assert!(!f.matches(&p));
        let a = DropFilter { flow: 0, kind: FilterKind::Ack { k: 2 }, transmissions: vec![1], epoch: None, dropped: 0 };
        p.tag = PacketTag::Ack { k: 2 };
        assert!(a.matches(&p));
    }
}
