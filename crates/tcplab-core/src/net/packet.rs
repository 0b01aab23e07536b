//! Packets and the TCP header fields the studies need. Sequence numbers are 64-bit and count bytes
//! from the connection's initial sequence number 0 (the SYN occupies sequence 0, data starts at 1
//! when a handshake is made); 32-bit wrap-around belongs to pcap writing and reading only.

use crate::units::Time;

/// An endpoint in the world's connection table: its slot and the slot's generation, so that a
/// packet or timer of a connection whose slot has since been freed and reused is recognised as
/// stale.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct ConnId {
    pub idx: u32,
    pub gen: u32,
}

/// A connection's name on the wire and in the drop filters: the flow (application) that opened
/// it and its ordinal among that flow's connections (1-based; a flow's n-th transfer).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Label {
    pub flow: u32,
    pub epoch: u32,
}

/// Index of a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct NodeId(pub u32);

/// Which way a packet of a connection travels: from the active opener (Forward) or from the
/// passive one (Reverse). For a one-way transfer that is the data direction and back.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Dir {
    #[default]
    Forward,
    Reverse,
}

/// IPv4 (20) + UDP (8) header bytes.
pub const UDP_HEADER_BYTES: u32 = 28;

/// A UDP datagram: its payload size and its number in its source's sequence (1-based).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Datagram {
    pub len: u32,
    pub seq: u64,
}

/// What a packet carries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Payload {
    Tcp(Segment),
    Udp(Datagram),
}

impl Default for Payload {
    fn default() -> Self {
        Payload::Tcp(Segment::default())
    }
}

impl Payload {
    pub fn tcp(&self) -> Option<&Segment> {
        match self {
            Payload::Tcp(s) => Some(s),
            Payload::Udp(_) => None,
        }
    }

    pub fn wire_bytes(&self) -> u32 {
        match self {
            Payload::Tcp(s) => s.wire_bytes(),
            Payload::Udp(d) => d.len + UDP_HEADER_BYTES,
        }
    }
}

pub const FLAG_SYN: u8 = 0x02;
pub const FLAG_FIN: u8 = 0x01;
pub const FLAG_ACK: u8 = 0x10;
/// Reset (RFC 9293 §3.5.2): the connection is aborted, or a segment reached no connection.
pub const FLAG_RST: u8 = 0x04;
/// Push (RFC 9293 §3.9.1 "SEND ... PUSH flag"): the `linux` profile's sender sets it where the
/// kernel does (tcp/tso.rs `psh_at`); Linux's receiver ACKs a full segment with it at the read.
pub const FLAG_PSH: u8 = 0x08;
/// ECN-Echo (RFC 3168 §6.1): on a SYN with CWR, "I can do ECN"; on a SYN-ACK alone, "agreed";
/// on an ACK, "a CE-marked packet arrived" (until the peer's CWR).
pub const FLAG_ECE: u8 = 0x40;
/// Congestion Window Reduced (RFC 3168 §6.1.2): the sender reduced its window after an ECE.
pub const FLAG_CWR: u8 = 0x80;

/// The IP header's ECN field (RFC 3168 §5): not ECN-capable, ECT(1), ECT(0), Congestion
/// Experienced. Carried in `Segment::ip_ecn`; a UDP datagram is never ECN-capable here.
pub const ECN_NOT_ECT: u8 = 0b00;
pub const ECN_ECT1: u8 = 0b01;
pub const ECN_ECT0: u8 = 0b10;
pub const ECN_CE: u8 = 0b11;

/// IPv4 (20) + TCP (20) header bytes without options.
pub const HEADER_BYTES: u32 = 40;
/// SACK option size: kind, length, 8 bytes a block (RFC 2018 §3), plus 2 NOP bytes of padding.
pub const fn sack_option_bytes(blocks: usize) -> u32 {
    if blocks == 0 {
        0
    } else {
        2 + 2 + 8 * blocks as u32
    }
}
/// Maximum SACK blocks carried by one segment without timestamps (RFC 2018 §3).
pub const MAX_SACK_BLOCKS: usize = 4;
/// The timestamps option on the wire: kind 8, length 10 (RFC 7323 §3.2), after two NOPs that
/// align it (RFC 7323 Appendix A; Linux `tcp_options_write()`): 12 bytes on every segment.
pub const TS_OPTION_BYTES: u32 = 12;

/// A SACK block [left, right): the bytes left..right have been received.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct SackBlock {
    pub left: u64,
    pub right: u64,
}

/// The SACK blocks of a segment, out of line: a segment without any (nearly all of them: SACK
/// blocks ride only on ACKs sent while data is missing) carries a null pointer, so the blocks
/// (64 bytes) do not weigh on every packet copied, queued and read. Set with
/// `Segment::set_sack_blocks`, read with `Segment::sack_blocks`.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct SackBlocks(Option<Box<[SackBlock; MAX_SACK_BLOCKS]>>);

/// The TCP part of a packet.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Segment {
    pub seq: u64,
    pub ack: u64,
    /// The SACK blocks (`n_sack` of them are meaningful): `set_sack_blocks`, `sack_blocks`.
    pub sack: SackBlocks,
    /// Payload bytes.
    pub len: u32,
    /// Advertised receive window in bytes (unscaled; u32 covers window scaling).
    pub wnd: u32,
    /// TCP option bytes other than SACK blocks (MSS and SACK-permitted on a SYN).
    pub opt_len: u16,
    pub flags: u8,
    /// How many SACK blocks the segment carries (at most `MAX_SACK_BLOCKS`).
    pub n_sack: u8,
    /// The SACK-permitted option (RFC 2018 §2), meaningful on SYN and SYN-ACK only.
    pub sack_permitted: bool,
    /// Bytes the SACK option counts on the wire below RFC 2018's 4 + 8n (kind, length, two
    /// NOPs): 0; 4 for ns-2's one-way sinks, 8 bytes a block only (`Sacker::append_ack()`,
    /// tcp/tcp-sink.cc; the `sack_option_header` knob off); 2 for ns-2's FullTcp/Sack, kind and
    /// length without padding (`SackFullTcpAgent::hdrsize()`, `sack_option_size_` 2,
    /// tcp/tcp-full.cc; `sack_option_padding` off).
    pub sack_trim: u8,
    /// The IP header's ECN field (RFC 3168 §5: `ECN_NOT_ECT`, `ECN_ECT0`, `ECN_CE`, ...): set by
    /// the sender on the data of an ECN connection, changed to CE by a marking queue. It
    /// belongs to the IP header; it rides here, in the segment's padding, so the packet stays
    /// the size it was.
    pub ip_ecn: u8,
    /// The segment carries the timestamps option (RFC 7323 §3): `tsval` and `tsecr` are
    /// meaningful, and its 10 bytes plus 2 NOPs are counted in `opt_len`.
    pub ts: bool,
    /// TSval: the sender's timestamp clock when the segment was sent (RFC 7323 §3.2).
    pub tsval: u32,
    /// TSecr: the TS.Recent the sender echoes (RFC 7323 §4.3; 0 on a SYN).
    pub tsecr: u32,
}

impl Segment {
    pub fn syn(&self) -> bool {
        self.flags & FLAG_SYN != 0
    }
    pub fn fin(&self) -> bool {
        self.flags & FLAG_FIN != 0
    }
    pub fn has_ack(&self) -> bool {
        self.flags & FLAG_ACK != 0
    }
    pub fn ece(&self) -> bool {
        self.flags & FLAG_ECE != 0
    }
    pub fn cwr(&self) -> bool {
        self.flags & FLAG_CWR != 0
    }
    /// The packet is ECN-capable (ECT(0), ECT(1) or already CE; RFC 3168 §5).
    pub fn ect(&self) -> bool {
        self.ip_ecn != ECN_NOT_ECT
    }
    pub fn ce(&self) -> bool {
        self.ip_ecn == ECN_CE
    }
    /// Sequence space consumed: payload plus one for SYN and one for FIN.
    pub fn seq_len(&self) -> u64 {
        self.len as u64 + self.syn() as u64 + self.fin() as u64
    }
    /// The SACK blocks carried, in the order they are on the wire.
    #[inline]
    pub fn sack_blocks(&self) -> &[SackBlock] {
        match &self.sack.0 {
            Some(b) => &b[..(self.n_sack as usize).min(MAX_SACK_BLOCKS)],
            None => &[],
        }
    }
    /// Carry these SACK blocks (the first `MAX_SACK_BLOCKS` of them); none clears them.
    pub fn set_sack_blocks(&mut self, blocks: &[SackBlock]) {
        let n = blocks.len().min(MAX_SACK_BLOCKS);
        if n == 0 {
            self.sack.0 = None;
        } else {
            let b = self.sack.0.get_or_insert_with(Default::default);
            b[..n].copy_from_slice(&blocks[..n]);
        }
        self.n_sack = n as u8;
    }
    /// Bytes on the wire: payload + 40 header bytes + options.
    pub fn wire_bytes(&self) -> u32 {
        let sack = sack_option_bytes(self.n_sack as usize).saturating_sub(if self.n_sack > 0 { self.sack_trim as u32 } else { 0 });
        self.len + HEADER_BYTES + self.opt_len as u32 + sack
    }
}

/// A packet in the network.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Packet {
    /// The endpoint the packet is addressed to; a packet whose endpoint is gone (its connection
    /// closed and freed) is discarded on arrival as stale.
    pub conn: ConnId,
    pub label: Label,
    pub dir: Dir,
    pub src: NodeId,
    pub dst: NodeId,
    pub body: Payload,
    /// When the packet entered the queue it currently waits in, on a direction that moves packets
    /// by events (RED's idle time, the queueing delay counted at a transmission's start); a
    /// computed direction (`vfifo.rs`) neither reads nor keeps it.
    pub enqueued_at: Time,
    /// What kind of packet it is and its ordinal, for the deterministic drop filters.
    pub tag: PacketTag,
    /// Where its next hop is in the world's table of routes (`routing::Paths`).
    pub hop: u32,
    /// A data segment of a connection with `use_headers` off: it counts its payload alone on
    /// the wire, as ns-2's one-way agents size a packet with `useHeaders_` false
    /// (`TcpAgent::output()` adds `headersize()` only with it, tcp/tcp.cc). Set by the sender
    /// per connection (`World::drain_conn`); it rides in the packet's padding, so the packet
    /// stays the size it was and `Segment` keeps its 48 bytes.
    pub bare: bool,
}

impl Packet {
    #[inline]
    pub fn wire_bytes(&self) -> u32 {
        match &self.body {
            Payload::Tcp(s) if self.bare => s.len,
            b => b.wire_bytes(),
        }
    }

    /// A marking queue's question (RFC 3168 §5): may congestion be signalled by CE instead of a
    /// drop? True for an ECN-capable TCP packet.
    #[inline]
    pub fn ect(&self) -> bool {
        matches!(&self.body, Payload::Tcp(s) if s.ect())
    }

    /// Set CE on an ECN-capable packet (RFC 3168 §5: "a router MAY set the CE codepoint ...
    /// instead of dropping the packet"); a packet already CE stays CE.
    #[inline]
    pub fn mark_ce(&mut self) {
        if let Payload::Tcp(s) = &mut self.body {
            s.ip_ecn = ECN_CE;
        }
    }
}

/// Classification of a packet for drop filters (the router filters of the Seddigh study and the
/// drops of TBIT): set by the sender of the packet, where the ordinal is known.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum PacketTag {
    #[default]
    Other,
    /// The n-th transmission (1-based) of the SYN.
    Syn { tx: u32 },
    /// The n-th transmission of the SYN-ACK.
    SynAck { tx: u32 },
    /// Data segment number `seg` (1-based, by sequence: bytes ((seg-1)·MSS, seg·MSS]), its
    /// `tx`-th transmission.
    Data { seg: u64, tx: u32 },
    /// The k-th pure ACK sent by the receiver (1-based).
    Ack { k: u64 },
    /// The n-th transmission of the FIN (FIN-only segment).
    Fin { tx: u32 },
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(left: u64, right: u64) -> SackBlock {
        SackBlock { left, right }
    }

    #[test]
    fn sack_blocks_are_set_read_and_cleared() {
        let mut s = Segment { ack: 1, flags: FLAG_ACK, ..Default::default() };
        assert!(s.sack_blocks().is_empty());
        assert_eq!(s.wire_bytes(), HEADER_BYTES);
        s.set_sack_blocks(&[b(10, 20), b(30, 40)]);
        assert_eq!(s.sack_blocks(), &[b(10, 20), b(30, 40)]);
        assert_eq!(s.n_sack, 2);
        assert_eq!(s.wire_bytes(), HEADER_BYTES + sack_option_bytes(2));
        // A copy carries its own blocks: changing the original leaves it as it was.
        let c = s.clone();
        s.set_sack_blocks(&[b(50, 60)]);
        assert_eq!(c.sack_blocks(), &[b(10, 20), b(30, 40)]);
        assert_eq!(s.sack_blocks(), &[b(50, 60)]);
        // More than fit are cut to MAX_SACK_BLOCKS; none clears them.
        s.set_sack_blocks(&[b(1, 2), b(3, 4), b(5, 6), b(7, 8), b(9, 10)]);
        assert_eq!(s.sack_blocks().len(), MAX_SACK_BLOCKS);
        assert_eq!(s.sack_blocks()[3], b(7, 8));
        s.set_sack_blocks(&[]);
        assert!(s.sack_blocks().is_empty());
        assert_eq!(s, Segment { ack: 1, flags: FLAG_ACK, ..Default::default() });
    }

    #[test]
    fn the_common_packet_stays_small() {
        // The SACK blocks are out of line: a packet is copied into the pool on every send and
        // read on every hop, and most carry none.
        // The timestamps option (RFC 7323) adds TSval and TSecr: 8 bytes.
        assert!(std::mem::size_of::<Segment>() <= 48, "Segment is {} bytes", std::mem::size_of::<Segment>());
        assert!(std::mem::size_of::<Packet>() <= 104, "Packet is {} bytes", std::mem::size_of::<Packet>());
    }

    #[test]
    fn a_bare_data_packet_counts_its_payload_alone() {
        let seg = Segment { seq: 1, len: 1000, ack: 1, flags: FLAG_ACK, ..Default::default() };
        let mut p = Packet { body: Payload::Tcp(seg), ..Default::default() };
        assert_eq!(p.wire_bytes(), 1000 + HEADER_BYTES);
        p.bare = true;
        assert_eq!(p.wire_bytes(), 1000, "ns-2's useHeaders_ false: packetSize_ bytes");
    }
}
