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
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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

/// A SACK block [left, right): the bytes left..right have been received.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct SackBlock {
    pub left: u64,
    pub right: u64,
}

/// The TCP part of a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Segment {
    pub seq: u64,
    pub ack: u64,
    /// Payload bytes.
    pub len: u32,
    pub flags: u8,
    /// Advertised receive window in bytes (unscaled; u32 covers window scaling).
    pub wnd: u32,
    pub sack: [SackBlock; MAX_SACK_BLOCKS],
    pub n_sack: u8,
    /// TCP option bytes other than SACK blocks (MSS and SACK-permitted on a SYN).
    pub opt_len: u16,
    /// The SACK-permitted option (RFC 2018 §2), meaningful on SYN and SYN-ACK only.
    pub sack_permitted: bool,
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
    /// Sequence space consumed: payload plus one for SYN and one for FIN.
    pub fn seq_len(&self) -> u64 {
        self.len as u64 + self.syn() as u64 + self.fin() as u64
    }
    pub fn sack_blocks(&self) -> &[SackBlock] {
        &self.sack[..self.n_sack as usize]
    }
    /// Bytes on the wire: payload + 40 header bytes + options.
    pub fn wire_bytes(&self) -> u32 {
        self.len + HEADER_BYTES + self.opt_len as u32 + sack_option_bytes(self.n_sack as usize)
    }
}

/// A packet in the network.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Packet {
    /// The endpoint the packet is addressed to; a packet whose endpoint is gone (its connection
    /// closed and freed) is discarded on arrival as stale.
    pub conn: ConnId,
    pub label: Label,
    pub dir: Dir,
    pub src: NodeId,
    pub dst: NodeId,
    pub body: Payload,
    /// When the packet entered the queue it currently waits in (for queueing-delay instruments).
    pub enqueued_at: Time,
    /// What kind of packet it is and its ordinal, for the deterministic drop filters.
    pub tag: PacketTag,
}

impl Packet {
    pub fn wire_bytes(&self) -> u32 {
        self.body.wire_bytes()
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
