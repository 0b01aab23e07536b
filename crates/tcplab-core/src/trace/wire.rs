//! Header encoding for captures: Ethernet II, IPv4 (RFC 791), TCP (RFC 793, 9293) with its options
//! (MSS, SACK-permitted and SACK blocks, RFC 2018), and UDP (RFC 768), with correct Internet
//! checksums (RFC 1071). Payload bytes are zeros; when the payload is not captured the checksum is
//! still that of the whole segment (zeros add nothing to the one's-complement sum, only their count
//! in the pseudo-header).

/// Ethernet II header bytes.
pub const ETH_LEN: usize = 14;
/// IPv4 header bytes without options.
pub const IPV4_LEN: usize = 20;
/// TCP header bytes without options.
pub const TCP_LEN: usize = 20;
/// UDP header bytes.
pub const UDP_LEN: usize = 8;
/// Most TCP option bytes a header can carry (data offset 15 words).
pub const TCP_MAX_OPTIONS: usize = 40;
/// The longest frame header a capture writes (Ethernet + IPv4 + TCP with full options): the
/// snaplen of a header-only capture.
pub const MAX_HEADERS: usize = ETH_LEN + IPV4_LEN + TCP_LEN + TCP_MAX_OPTIONS;

pub const ETHERTYPE_IPV4: u16 = 0x0800;
pub const ETHERTYPE_IPV6: u16 = 0x86DD;
pub const PROTO_TCP: u8 = 6;
pub const PROTO_UDP: u8 = 17;

const OPT_EOL: u8 = 0;
const OPT_NOP: u8 = 1;
pub const OPT_MSS: u8 = 2;
pub const OPT_WSCALE: u8 = 3;
pub const OPT_SACK_PERMITTED: u8 = 4;
pub const OPT_SACK: u8 = 5;
pub const OPT_TIMESTAMP: u8 = 8;

/// The simulator's node `i` on the wire: IPv4 address 10.0.0.0 + i + 1 (node 0 is 10.0.0.1) and
/// the locally administered MAC address 02:00:00:00:hi:lo of i + 1.
pub fn node_ipv4(i: u32) -> [u8; 4] {
    (0x0A00_0000u32.wrapping_add(i).wrapping_add(1)).to_be_bytes()
}

pub fn node_mac(i: u32) -> [u8; 6] {
    let b = i.wrapping_add(1).to_be_bytes();
    [0x02, 0x00, b[0], b[1], b[2], b[3]]
}

/// The one's-complement sum of `data` as 16-bit big-endian words, not yet folded.
fn sum16(data: &[u8]) -> u32 {
    let mut s: u32 = 0;
    let mut chunks = data.chunks_exact(2);
    for c in &mut chunks {
        s += u16::from_be_bytes([c[0], c[1]]) as u32;
    }
    if let [b] = chunks.remainder() {
        s += (*b as u32) << 8;
    }
    s
}

fn fold(mut s: u64) -> u16 {
    while s > 0xffff {
        s = (s & 0xffff) + (s >> 16);
    }
    !(s as u16)
}

/// The Internet checksum of `data` (RFC 1071).
pub fn checksum(data: &[u8]) -> u16 {
    fold(sum16(data) as u64)
}

/// Set CE in the ECN field of an ECN-capable IPv4 packet in an Ethernet frame (RFC 3168 §5:
/// ECT(0) or ECT(1) becomes CE) and recompute its header checksum: the testbed's delay box marks
/// with it as the simulator's `mark_threshold` does. False, the frame unchanged, for anything
/// else (not IPv4, a Not-ECT packet); a CE packet stays CE and counts as marked.
pub fn mark_ce(f: &mut [u8]) -> bool {
    const ETH: usize = 14;
    if f.len() < ETH + IPV4_LEN || f[12..14] != ETHERTYPE_IPV4.to_be_bytes() || f[ETH] >> 4 != 4 {
        return false;
    }
    let ihl = (f[ETH] & 0x0f) as usize * 4;
    if ihl < IPV4_LEN || f.len() < ETH + ihl || f[ETH + 1] & 0b11 == 0 {
        return false;
    }
    f[ETH + 1] |= 0b11;
    f[ETH + 10..ETH + 12].copy_from_slice(&[0, 0]);
    let c = checksum(&f[ETH..ETH + ihl]);
    f[ETH + 10..ETH + 12].copy_from_slice(&c.to_be_bytes());
    true
}

/// Addresses of one packet on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Addrs {
    pub src_mac: [u8; 6],
    pub dst_mac: [u8; 6],
    pub src_ip: [u8; 4],
    pub dst_ip: [u8; 4],
    pub src_port: u16,
    pub dst_port: u16,
}

/// The TCP header fields, with 32-bit (wrapped) sequence numbers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TcpFields {
    pub seq: u32,
    pub ack: u32,
    pub flags: u8,
    pub window: u16,
    /// Payload bytes of the segment (on the wire; captured only if asked).
    pub payload: u32,
    /// The IP header's ECN field (RFC 3168 §5), the low two bits of the TOS byte.
    pub ecn: u8,
}

/// TCP options built in a fixed buffer (no allocation per packet).
#[derive(Clone, Copy, Debug)]
pub struct TcpOptions {
    buf: [u8; TCP_MAX_OPTIONS],
    len: usize,
}

impl Default for TcpOptions {
    fn default() -> Self {
        TcpOptions { buf: [0; TCP_MAX_OPTIONS], len: 0 }
    }
}

impl TcpOptions {
    pub fn as_bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }
    fn room(&self) -> usize {
        TCP_MAX_OPTIONS - self.len
    }
    fn push(&mut self, b: &[u8]) -> bool {
        if b.len() > self.room() {
            return false;
        }
        self.buf[self.len..self.len + b.len()].copy_from_slice(b);
        self.len += b.len();
        true
    }
    /// MSS option (kind 2, length 4).
    pub fn mss(&mut self, mss: u16) -> &mut Self {
        let m = mss.to_be_bytes();
        self.push(&[OPT_MSS, 4, m[0], m[1]]);
        self
    }
    /// SACK-permitted (kind 4, length 2) after two NOPs, as Linux and BSD align it.
    pub fn sack_permitted(&mut self) -> &mut Self {
        self.push(&[OPT_NOP, OPT_NOP, OPT_SACK_PERMITTED, 2]);
        self
    }
    /// Timestamps (kind 8, length 10: TSval, TSecr; RFC 7323 §3.2) after two NOPs, as Linux's
    /// `tcp_options_write()` aligns it.
    pub fn timestamps(&mut self, tsval: u32, tsecr: u32) -> &mut Self {
        self.push(&[OPT_NOP, OPT_NOP, OPT_TIMESTAMP, 10]);
        self.push(&tsval.to_be_bytes());
        self.push(&tsecr.to_be_bytes());
        self
    }
    /// SACK-permitted and timestamps in one 12-byte word group, as Linux writes them on a SYN
    /// (`tcp_options_write()`: OPTION_SACK_ADVERTISE with OPTION_TS).
    pub fn sack_permitted_timestamps(&mut self, tsval: u32, tsecr: u32) -> &mut Self {
        self.push(&[OPT_SACK_PERMITTED, 2, OPT_TIMESTAMP, 10]);
        self.push(&tsval.to_be_bytes());
        self.push(&tsecr.to_be_bytes());
        self
    }
    /// SACK blocks (kind 5, length 2 + 8n) after two NOPs; at most 4 blocks fit.
    pub fn sack(&mut self, blocks: &[(u32, u32)]) -> &mut Self {
        let n = blocks.len().min((self.room().saturating_sub(4)) / 8);
        if n == 0 {
            return self;
        }
        self.push(&[OPT_NOP, OPT_NOP, OPT_SACK, 2 + 8 * n as u8]);
        for &(l, r) in &blocks[..n] {
            self.push(&l.to_be_bytes());
            self.push(&r.to_be_bytes());
        }
        self
    }
    /// Pad with NOPs to at least `len` bytes (option bytes the simulator counts but does not
    /// name), then with EOL to a multiple of four.
    pub fn pad_to(&mut self, len: usize) -> &mut Self {
        while self.len < len.min(TCP_MAX_OPTIONS) {
            self.push(&[OPT_NOP]);
        }
        while self.len % 4 != 0 {
            self.push(&[OPT_EOL]);
        }
        self
    }
}

fn put_eth(out: &mut Vec<u8>, a: &Addrs) {
    out.extend_from_slice(&a.dst_mac);
    out.extend_from_slice(&a.src_mac);
    out.extend_from_slice(&ETHERTYPE_IPV4.to_be_bytes());
}

fn put_ipv4(out: &mut Vec<u8>, a: &Addrs, proto: u8, total_len: u16, ecn: u8) {
    let start = out.len();
    // Version 4, IHL 5; DSCP 0 and the ECN field (RFC 3168 §5); DF set and ID 0 (RFC 6864 allows
    // it for atomic datagrams); TTL 64.
    out.extend_from_slice(&[0x45, ecn & 0b11]);
    out.extend_from_slice(&total_len.to_be_bytes());
    out.extend_from_slice(&[0, 0, 0x40, 0, 64, proto, 0, 0]);
    out.extend_from_slice(&a.src_ip);
    out.extend_from_slice(&a.dst_ip);
    let c = checksum(&out[start..start + IPV4_LEN]);
    out[start + 10..start + 12].copy_from_slice(&c.to_be_bytes());
}

fn pseudo_sum(a: &Addrs, proto: u8, len: u32) -> u64 {
    sum16(&a.src_ip) as u64 + sum16(&a.dst_ip) as u64 + proto as u64 + (len >> 16) as u64 + (len & 0xffff) as u64
}

/// Append an Ethernet/IPv4/TCP frame to `out`; the payload (zeros) only if `with_payload`.
/// Returns the frame's length on the wire (what a capture records as the original length).
pub fn encode_tcp(out: &mut Vec<u8>, a: &Addrs, t: &TcpFields, opts: &TcpOptions, with_payload: bool) -> u32 {
    let opt = opts.as_bytes();
    debug_assert!(opt.len() % 4 == 0);
    let tcp_hdr = TCP_LEN + opt.len();
    let seg_len = tcp_hdr as u32 + t.payload;
    // An IPv4 datagram is at most 65535 bytes; a larger simulated segment is clipped.
    let ip_len = (IPV4_LEN as u32 + seg_len).min(u16::MAX as u32);
    put_eth(out, a);
    put_ipv4(out, a, PROTO_TCP, ip_len as u16, t.ecn);
    let start = out.len();
    out.extend_from_slice(&a.src_port.to_be_bytes());
    out.extend_from_slice(&a.dst_port.to_be_bytes());
    out.extend_from_slice(&t.seq.to_be_bytes());
    out.extend_from_slice(&t.ack.to_be_bytes());
    out.push(((tcp_hdr / 4) as u8) << 4);
    out.push(t.flags);
    out.extend_from_slice(&t.window.to_be_bytes());
    out.extend_from_slice(&[0, 0, 0, 0]); // checksum, urgent pointer
    out.extend_from_slice(opt);
    let tcp_len = ip_len - IPV4_LEN as u32;
    let c = fold(pseudo_sum(a, PROTO_TCP, tcp_len) + sum16(&out[start..start + tcp_hdr]) as u64);
    out[start + 16..start + 18].copy_from_slice(&c.to_be_bytes());
    if with_payload {
        out.resize(out.len() + (tcp_len as usize - tcp_hdr), 0);
    }
    ETH_LEN as u32 + ip_len
}

/// Append an Ethernet/IPv4/UDP frame (cross traffic) of `payload` zero bytes.
pub fn encode_udp(out: &mut Vec<u8>, a: &Addrs, payload: u32, with_payload: bool) -> u32 {
    let ip_len = (IPV4_LEN as u32 + UDP_LEN as u32 + payload).min(u16::MAX as u32);
    let udp_len = ip_len - IPV4_LEN as u32;
    put_eth(out, a);
    put_ipv4(out, a, PROTO_UDP, ip_len as u16, 0);
    let start = out.len();
    out.extend_from_slice(&a.src_port.to_be_bytes());
    out.extend_from_slice(&a.dst_port.to_be_bytes());
    out.extend_from_slice(&(udp_len as u16).to_be_bytes());
    out.extend_from_slice(&[0, 0]);
    let mut c = fold(pseudo_sum(a, PROTO_UDP, udp_len) + sum16(&out[start..start + UDP_LEN]) as u64);
    if c == 0 {
        c = 0xffff; // RFC 768: a computed zero is sent as all ones
    }
    out[start + 6..start + 8].copy_from_slice(&c.to_be_bytes());
    if with_payload {
        out.resize(out.len() + payload as usize, 0);
    }
    ETH_LEN as u32 + ip_len
}

#[cfg(test)]
mod tests {
    #[test]
    fn mark_ce_sets_the_ecn_field_and_keeps_the_checksum_valid() {
        let a = Addrs { src_mac: node_mac(0), dst_mac: node_mac(1), src_ip: [10, 0, 0, 1], dst_ip: [10, 0, 0, 2], src_port: 1, dst_port: 2 };
        for ecn in [0b10u8, 0b01, 0b11] {
            let mut f = Vec::new();
            encode_tcp(&mut f, &a, &TcpFields { seq: 1, ack: 1, flags: 0x10, window: 100, payload: 0, ecn }, &TcpOptions::default(), false);
            assert!(mark_ce(&mut f), "{ecn:#b}");
            assert_eq!(f[15] & 0b11, 0b11);
            // RFC 1071: the sum over a header with a valid checksum folds to 0.
            assert_eq!(checksum(&f[14..34]), 0);
            // A frame written CE directly is the same frame.
            let mut g = Vec::new();
            encode_tcp(&mut g, &a, &TcpFields { seq: 1, ack: 1, flags: 0x10, window: 100, payload: 0, ecn: 0b11 }, &TcpOptions::default(), false);
            assert_eq!(f, g);
        }
        // Not-ECT (RFC 3168 §5: only ECN-capable packets are marked) and non-IPv4: unchanged.
        let mut f = Vec::new();
        encode_tcp(&mut f, &a, &TcpFields { seq: 1, ack: 1, flags: 0x10, window: 100, payload: 0, ecn: 0 }, &TcpOptions::default(), false);
        let before = f.clone();
        assert!(!mark_ce(&mut f));
        assert_eq!(f, before);
        f[12] = 0x08;
        f[13] = 0x06;
        f[15] = 0b10;
        assert!(!mark_ce(&mut f));
    }

    use super::*;

    fn addrs() -> Addrs {
        Addrs { src_mac: node_mac(0), dst_mac: node_mac(1), src_ip: node_ipv4(0), dst_ip: node_ipv4(1), src_port: 10000, dst_port: 5001 }
    }

    /// Verify a checksum the way a receiver does: the sum over the covered bytes is all ones.
    fn verify_tcp(frame: &[u8]) -> bool {
        let ip = &frame[ETH_LEN..];
        let ip_len = u16::from_be_bytes([ip[2], ip[3]]) as usize;
        let mut pseudo = Vec::new();
        pseudo.extend_from_slice(&ip[12..20]);
        pseudo.extend_from_slice(&[0, ip[9]]);
        pseudo.extend_from_slice(&((ip_len - 20) as u16).to_be_bytes());
        pseudo.extend_from_slice(&ip[20..ip_len]);
        checksum(&pseudo) == 0
    }

    #[test]
    fn rfc1071_example() {
        // RFC 1071 §3: the bytes 00 01 f2 03 f4 f5 f6 f7 sum to ddf2, checksum 220d.
        assert_eq!(checksum(&[0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7]), !0xddf2);
    }

    #[test]
    fn addresses_from_node_index() {
        assert_eq!(node_ipv4(0), [10, 0, 0, 1]);
        assert_eq!(node_ipv4(255), [10, 0, 1, 0]);
        assert_eq!(node_mac(0), [2, 0, 0, 0, 0, 1]);
    }

    #[test]
    fn tcp_checksums_are_correct_with_and_without_payload() {
        let mut o = TcpOptions::default();
        o.mss(1460).sack_permitted();
        let t = TcpFields { seq: 0xfffffff0, ack: 7, flags: 0x12, window: 65535, payload: 0, ecn: 0 };
        let mut f = Vec::new();
        let wire = encode_tcp(&mut f, &addrs(), &t, &o, true);
        assert_eq!(wire as usize, f.len());
        assert_eq!(f.len(), 14 + 20 + 28);
        assert_eq!(checksum(&f[14..34]), 0, "IPv4 header checksum");
        assert!(verify_tcp(&f));
        // A data segment: the header-only frame carries the checksum of the full segment.
        let t = TcpFields { seq: 1, ack: 1, flags: 0x10, window: 1000, payload: 1460, ecn: 0 };
        let mut full = Vec::new();
        let wire = encode_tcp(&mut full, &addrs(), &t, &TcpOptions::default(), true);
        let mut hdr = Vec::new();
        assert_eq!(encode_tcp(&mut hdr, &addrs(), &t, &TcpOptions::default(), false), wire);
        assert_eq!(wire, 14 + 40 + 1460);
        assert_eq!(hdr.len(), 54);
        assert_eq!(&full[..54], &hdr[..]);
        assert!(verify_tcp(&full));
    }

    #[test]
    fn timestamps_option_layout() {
        let mut o = TcpOptions::default();
        o.mss(1460).sack_permitted_timestamps(0x01020304, 0);
        assert_eq!(o.as_bytes(), &[2, 4, 0x05, 0xb4, 4, 2, 8, 10, 1, 2, 3, 4, 0, 0, 0, 0]);
        let mut o = TcpOptions::default();
        o.timestamps(7, 9).sack(&[(1, 2), (3, 4), (5, 6), (7, 8)]);
        // 12 bytes of timestamps leave room for 3 SACK blocks (RFC 2018 §3).
        assert_eq!(o.as_bytes().len(), 12 + 4 + 3 * 8);
        assert_eq!(&o.as_bytes()[..12], &[1, 1, 8, 10, 0, 0, 0, 7, 0, 0, 0, 9]);
    }

    #[test]
    fn sack_option_layout() {
        let mut o = TcpOptions::default();
        o.sack(&[(1, 2), (3, 4), (5, 6), (7, 8), (9, 10)]);
        // 4 blocks fit in 40 bytes: 2 NOPs + kind + length + 32.
        assert_eq!(o.as_bytes().len(), 36);
        assert_eq!(&o.as_bytes()[..4], &[1, 1, 5, 34]);
        let mut o = TcpOptions::default();
        o.mss(536).pad_to(10);
        assert_eq!(o.as_bytes(), &[2, 4, 2, 24, 1, 1, 1, 1, 1, 1, 0, 0]);
    }

    #[test]
    fn udp_checksum() {
        let mut f = Vec::new();
        encode_udp(&mut f, &addrs(), 100, true);
        let ip = &f[ETH_LEN..];
        let mut pseudo = Vec::new();
        pseudo.extend_from_slice(&ip[12..20]);
        pseudo.extend_from_slice(&[0, 17, 0, 108]);
        pseudo.extend_from_slice(&ip[20..]);
        assert_eq!(checksum(&pseudo), 0);
    }
}
