//! Header encoding for captures: Ethernet II, IPv4 (RFC 791), TCP (RFC 793, 9293) with its options
//! (MSS, SACK-permitted and SACK blocks, RFC 2018), and UDP (RFC 768), with correct Internet
//! checksums (RFC 1071). Payload bytes are zeros; when the payload is not captured the checksum is
//! still that of the whole segment (zeros add nothing to the one's-complement sum, only their count
//! in the pseudo-header).
//!
//! The same codec serves TBIT's raw-socket transport (`tcplab._core.wire`): `encode_tcp_bytes`
//! writes a frame with real payload bytes and an IP identification, `parse_tcp_frame` reads an
//! Ethernet/IPv4/TCP frame back into its fields and options, and reports a malformed one with the
//! byte offset where it goes wrong. Sans-I/O and panic-free: every index is checked.

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
    /// Window scale (kind 3, length 3; RFC 7323 §2.2) after a NOP, as Linux's
    /// `tcp_options_write()` writes OPTION_WSCALE.
    pub fn nop_window_scale(&mut self, shift: u8) -> &mut Self {
        self.push(&[OPT_NOP, OPT_WSCALE, 3, shift]);
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
    /// Append one option exactly as given, without alignment NOPs (a scripted test writes its
    /// options in the order and layout it wants); false, nothing written, when it does not fit in
    /// the 40 bytes or is not one an encoder can write (`Other`, or SACK bytes that are not whole
    /// 8-byte blocks).
    pub fn push_opt(&mut self, o: &TcpOpt<'_>) -> bool {
        let mut b = [0u8; TCP_MAX_OPTIONS];
        let n = match *o {
            TcpOpt::Eol => 1,
            TcpOpt::Nop => {
                b[0] = OPT_NOP;
                1
            }
            TcpOpt::Mss(m) => {
                b[..4].copy_from_slice(&[OPT_MSS, 4, (m >> 8) as u8, m as u8]);
                4
            }
            TcpOpt::WindowScale(w) => {
                b[..3].copy_from_slice(&[OPT_WSCALE, 3, w]);
                3
            }
            TcpOpt::SackPermitted => {
                b[..2].copy_from_slice(&[OPT_SACK_PERMITTED, 2]);
                2
            }
            TcpOpt::Timestamps(v, e) => {
                b[..2].copy_from_slice(&[OPT_TIMESTAMP, 10]);
                b[2..6].copy_from_slice(&v.to_be_bytes());
                b[6..10].copy_from_slice(&e.to_be_bytes());
                10
            }
            TcpOpt::Sack(v) => {
                if v.len() % 8 != 0 || v.len() + 2 > TCP_MAX_OPTIONS {
                    return false;
                }
                b[..2].copy_from_slice(&[OPT_SACK, 2 + v.len() as u8]);
                b[2..2 + v.len()].copy_from_slice(v);
                2 + v.len()
            }
            TcpOpt::Other(..) => return false,
        };
        self.push(&b[..n])
    }
    /// Pad with NOPs to a multiple of four bytes (RFC 9293 §3.1: the header is a whole number of
    /// 32-bit words).
    pub fn align_with_nops(&mut self) -> &mut Self {
        while self.len % 4 != 0 {
            self.push(&[OPT_NOP]);
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

fn put_ipv4(out: &mut Vec<u8>, a: &Addrs, proto: u8, total_len: u16, ecn: u8, id: u16) {
    let start = out.len();
    // Version 4, IHL 5; DSCP 0 and the ECN field (RFC 3168 §5); DF set; the simulator's ID is 0
    // (RFC 6864 §4.1 allows it for atomic datagrams); TTL 64.
    out.extend_from_slice(&[0x45, ecn & 0b11]);
    out.extend_from_slice(&total_len.to_be_bytes());
    out.extend_from_slice(&id.to_be_bytes());
    out.extend_from_slice(&[0x40, 0, 64, proto, 0, 0]);
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
    encode_tcp_with(out, a, t, opts, 0, None, with_payload)
}

/// Append an Ethernet/IPv4/TCP frame carrying `payload` (its bytes, `t.payload` is ignored) with
/// IP identification `ip_id`; TBIT's raw transport sends these. Refused, with `out` unchanged,
/// when the datagram would exceed 65535 bytes (RFC 791 §3.1, Total Length).
pub fn encode_tcp_bytes(out: &mut Vec<u8>, a: &Addrs, t: &TcpFields, opts: &TcpOptions, payload: &[u8], ip_id: u16) -> Result<u32, WireError> {
    let total = IPV4_LEN + TCP_LEN + opts.as_bytes().len() + payload.len();
    if total > u16::MAX as usize {
        return Err(WireError { offset: ETH_LEN + 2, message: format!("an IPv4 datagram of {total} bytes exceeds the 65535 of its total length field") });
    }
    let t = TcpFields { payload: payload.len() as u32, ..*t };
    Ok(encode_tcp_with(out, a, &t, opts, ip_id, Some(payload), true))
}

fn encode_tcp_with(out: &mut Vec<u8>, a: &Addrs, t: &TcpFields, opts: &TcpOptions, ip_id: u16, bytes: Option<&[u8]>, with_payload: bool) -> u32 {
    let opt = opts.as_bytes();
    debug_assert!(opt.len() % 4 == 0);
    let tcp_hdr = TCP_LEN + opt.len();
    let seg_len = tcp_hdr as u32 + t.payload;
    // An IPv4 datagram is at most 65535 bytes; a larger simulated segment is clipped.
    let ip_len = (IPV4_LEN as u32 + seg_len).min(u16::MAX as u32);
    put_eth(out, a);
    put_ipv4(out, a, PROTO_TCP, ip_len as u16, t.ecn, ip_id);
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
    // The header is a whole number of 16-bit words, so the payload's words sum on their own.
    let data_sum = bytes.map_or(0, |b| sum16(b) as u64);
    let c = fold(pseudo_sum(a, PROTO_TCP, tcp_len) + sum16(&out[start..start + tcp_hdr]) as u64 + data_sum);
    out[start + 16..start + 18].copy_from_slice(&c.to_be_bytes());
    match bytes {
        Some(b) => out.extend_from_slice(b),
        None if with_payload => out.resize(out.len() + (tcp_len as usize - tcp_hdr), 0),
        None => {}
    }
    ETH_LEN as u32 + ip_len
}

/// Append an Ethernet/IPv4/UDP frame (cross traffic) of `payload` zero bytes.
pub fn encode_udp(out: &mut Vec<u8>, a: &Addrs, payload: u32, with_payload: bool) -> u32 {
    let ip_len = (IPV4_LEN as u32 + UDP_LEN as u32 + payload).min(u16::MAX as u32);
    let udp_len = ip_len - IPV4_LEN as u32;
    put_eth(out, a);
    put_ipv4(out, a, PROTO_UDP, ip_len as u16, 0, 0);
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

/// A malformed frame: the byte offset (from the frame's first byte) where it goes wrong, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WireError {
    pub offset: usize,
    pub message: String,
}

impl std::fmt::Display for WireError {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "byte {}: {}", self.offset, self.message)
    }
}

impl std::error::Error for WireError {}

fn malformed<T>(offset: usize, message: impl Into<String>) -> Result<T, WireError> {
    Err(WireError { offset, message: message.into() })
}

/// One TCP option as it appears on the wire (RFC 9293 §3.1; MSS §3.7.1, window scale and
/// timestamps RFC 7323 §2.2 and §3.2, SACK-permitted and SACK RFC 2018 §2 and §3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TcpOpt<'a> {
    Eol,
    Nop,
    Mss(u16),
    WindowScale(u8),
    SackPermitted,
    /// The SACK blocks' bytes: a whole number of 8-byte (left, right) edges; see `sack_blocks`.
    Sack(&'a [u8]),
    Timestamps(u32, u32),
    /// Any other option (or a known kind with a length it does not have): kind and value bytes.
    Other(u8, &'a [u8]),
}

/// The (left, right) edges of a SACK option's value.
pub fn sack_blocks(v: &[u8]) -> impl Iterator<Item = (u32, u32)> + '_ {
    v.chunks_exact(8).map(|b| (u32::from_be_bytes([b[0], b[1], b[2], b[3]]), u32::from_be_bytes([b[4], b[5], b[6], b[7]])))
}

/// An Ethernet/IPv4/TCP frame read by `parse_tcp_frame`: header fields as on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParsedTcp<'a> {
    pub addrs: Addrs,
    /// The IP header's TOS byte (DSCP and the ECN field, RFC 3168 §5), identification and TTL.
    pub tos: u8,
    pub ip_id: u16,
    pub ttl: u8,
    pub seq: u32,
    pub ack: u32,
    pub flags: u8,
    pub window: u16,
    /// The option bytes (the TCP header after its first 20 bytes) and where they start.
    pub options: &'a [u8],
    pub options_offset: usize,
    /// The segment's data: the IP datagram after the TCP header (Ethernet padding excluded).
    pub payload: &'a [u8],
}

impl<'a> ParsedTcp<'a> {
    /// The options in wire order, checked: each option other than EOL and NOP has a length octet
    /// of at least 2 that stays within the header (RFC 9293 §3.1); MSS has length 4 and SACK a
    /// length of 2 + 8n (RFC 2018 §3). The list ends after an EOL. The first malformed option is
    /// an error naming its byte offset in the frame.
    pub fn options(&self) -> OptionIter<'a> {
        OptionIter { o: self.options, at: 0, base: self.options_offset, done: false }
    }
}

/// The options of a TCP header in wire order (`ParsedTcp::options`).
pub struct OptionIter<'a> {
    o: &'a [u8],
    at: usize,
    base: usize,
    done: bool,
}

impl<'a> Iterator for OptionIter<'a> {
    type Item = Result<TcpOpt<'a>, WireError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let i = self.at;
        let kind = *self.o.get(i)?;
        let off = self.base + i;
        match kind {
            OPT_EOL => {
                self.done = true;
                return Some(Ok(TcpOpt::Eol));
            }
            OPT_NOP => {
                self.at += 1;
                return Some(Ok(TcpOpt::Nop));
            }
            _ => {}
        }
        self.done = true; // until this option proves well formed
        let Some(&len) = self.o.get(i + 1) else {
            return Some(malformed(off, format!("TCP option kind {kind} has no length octet")));
        };
        let len = len as usize;
        if len < 2 || i + len > self.o.len() {
            return Some(malformed(off + 1, format!("TCP option kind {kind} has length {len}, outside 2..={}", self.o.len() - i)));
        }
        let v = &self.o[i + 2..i + len];
        let opt = match (kind, len) {
            (OPT_MSS, 4) => TcpOpt::Mss(u16::from_be_bytes([v[0], v[1]])),
            (OPT_MSS, _) => return Some(malformed(off + 1, format!("the MSS option has length {len}, not 4"))),
            (OPT_SACK, _) if (len - 2) % 8 != 0 => return Some(malformed(off + 1, format!("the SACK option has length {len}, not 2 + 8n"))),
            (OPT_SACK, _) => TcpOpt::Sack(v),
            (OPT_SACK_PERMITTED, _) => TcpOpt::SackPermitted,
            (OPT_WSCALE, 3) => TcpOpt::WindowScale(v[0]),
            (OPT_TIMESTAMP, 10) => TcpOpt::Timestamps(u32::from_be_bytes([v[0], v[1], v[2], v[3]]), u32::from_be_bytes([v[4], v[5], v[6], v[7]])),
            _ => TcpOpt::Other(kind, v),
        };
        self.at += len;
        self.done = false;
        Some(Ok(opt))
    }
}

/// Read an Ethernet II frame down to TCP. `Ok(None)`: a well-formed frame of something else (not
/// IPv4 by its EtherType, or not TCP by its protocol). A frame that claims IPv4 and TCP but whose
/// lengths do not fit (IHL, total length, data offset; RFC 791 §3.1, RFC 9293 §3.1) is an error
/// naming the byte offset of the field at fault. Ethernet may pad a frame beyond the IP total
/// length, never cut it short. Checksums are not verified, and options are checked only when
/// iterated (`ParsedTcp::options`).
pub fn parse_tcp_frame(f: &[u8]) -> Result<Option<ParsedTcp<'_>>, WireError> {
    if f.len() < ETH_LEN {
        return malformed(f.len(), format!("a frame of {} bytes ends inside the 14-byte Ethernet header", f.len()));
    }
    if f[12..14] != ETHERTYPE_IPV4.to_be_bytes() {
        return Ok(None);
    }
    let ip = &f[ETH_LEN..];
    if ip.len() < IPV4_LEN {
        return malformed(f.len(), format!("the frame ends {} bytes into the 20-byte IPv4 header", ip.len()));
    }
    if ip[0] >> 4 != 4 {
        return malformed(ETH_LEN, format!("IP version {} in an IPv4 frame", ip[0] >> 4));
    }
    let ihl = (ip[0] & 0x0f) as usize * 4;
    if ihl < IPV4_LEN {
        return malformed(ETH_LEN, format!("IPv4 header length {ihl} is less than 20"));
    }
    let total = u16::from_be_bytes([ip[2], ip[3]]) as usize;
    if total < ihl || total > ip.len() {
        return malformed(ETH_LEN + 2, format!("IPv4 total length {total} is outside {ihl}..={} (header length to the frame's IP bytes)", ip.len()));
    }
    if ip[9] != PROTO_TCP {
        return Ok(None);
    }
    let t = &ip[ihl..total];
    let tcp_at = ETH_LEN + ihl;
    if t.len() < TCP_LEN {
        return malformed(tcp_at + t.len(), format!("the IPv4 datagram ends {} bytes into the 20-byte TCP header", t.len()));
    }
    let doff = (t[12] >> 4) as usize * 4;
    if doff < TCP_LEN || doff > t.len() {
        return malformed(tcp_at + 12, format!("TCP data offset {doff} bytes is outside 20..={}", t.len()));
    }
    let mut src_mac = [0u8; 6];
    let mut dst_mac = [0u8; 6];
    dst_mac.copy_from_slice(&f[0..6]);
    src_mac.copy_from_slice(&f[6..12]);
    Ok(Some(ParsedTcp {
        addrs: Addrs {
            src_mac,
            dst_mac,
            src_ip: [ip[12], ip[13], ip[14], ip[15]],
            dst_ip: [ip[16], ip[17], ip[18], ip[19]],
            src_port: u16::from_be_bytes([t[0], t[1]]),
            dst_port: u16::from_be_bytes([t[2], t[3]]),
        },
        tos: ip[1],
        ip_id: u16::from_be_bytes([ip[4], ip[5]]),
        ttl: ip[8],
        seq: u32::from_be_bytes([t[4], t[5], t[6], t[7]]),
        ack: u32::from_be_bytes([t[8], t[9], t[10], t[11]]),
        flags: t[13],
        window: u16::from_be_bytes([t[14], t[15]]),
        options: &t[TCP_LEN..doff],
        options_offset: tcp_at + TCP_LEN,
        payload: &t[doff..],
    }))
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

    #[test]
    fn a_frame_with_payload_bytes_parses_back_to_its_fields() {
        let mut o = TcpOptions::default();
        o.mss(536).sack_permitted().timestamps(5, 6).sack(&[(100, 200)]);
        let t = TcpFields { seq: 0xdead_beef, ack: 42, flags: 0x18, window: 4096, payload: 999, ecn: 0b10 };
        let mut f = Vec::new();
        let wire = encode_tcp_bytes(&mut f, &addrs(), &t, &o, b"GET / HTTP/1.0\r\n\r\n!", 0x1234).unwrap();
        assert_eq!(wire as usize, f.len());
        assert!(verify_tcp(&f), "odd-length payload summed with the header");
        assert_eq!(checksum(&f[14..34]), 0);
        assert_eq!(&f[18..20], &[0x12, 0x34], "IP identification");
        let p = parse_tcp_frame(&f).unwrap().unwrap();
        assert_eq!(p.addrs, addrs());
        assert_eq!((p.seq, p.ack, p.flags, p.window, p.ip_id, p.tos & 3, p.ttl), (0xdead_beef, 42, 0x18, 4096, 0x1234, 0b10, 64));
        assert_eq!(p.payload, b"GET / HTTP/1.0\r\n\r\n!");
        let opts: Vec<_> = p.options().collect::<Result<_, _>>().unwrap();
        use TcpOpt::*;
        assert_eq!(opts[..5], [Mss(536), Nop, Nop, SackPermitted, Nop]);
        assert_eq!(opts[6], Timestamps(5, 6));
        let Sack(v) = opts[9] else { panic!("{opts:?}") };
        assert_eq!(sack_blocks(v).collect::<Vec<_>>(), [(100, 200)]);
        // The simulator's frames stay as they were: ID 0, zeros for data.
        let mut g = Vec::new();
        encode_tcp(&mut g, &addrs(), &t, &o, false);
        assert_eq!(&g[18..20], &[0, 0]);
    }

    #[test]
    fn an_oversized_datagram_is_refused() {
        let mut f = Vec::new();
        let e = encode_tcp_bytes(&mut f, &addrs(), &TcpFields::default(), &TcpOptions::default(), &vec![0; 65_500], 0).unwrap_err();
        assert_eq!(e.offset, 16);
        assert!(f.is_empty());
    }

    #[test]
    fn malformed_frames_name_the_byte_at_fault() {
        let mut f = Vec::new();
        let mut o = TcpOptions::default();
        o.mss(1460);
        encode_tcp_bytes(&mut f, &addrs(), &TcpFields::default(), &o, b"", 0).unwrap();
        assert_eq!(parse_tcp_frame(&f[..10]).unwrap_err().offset, 10);
        assert_eq!(parse_tcp_frame(&f[..30]).unwrap_err().offset, 30);
        // Cut inside the TCP header: the total length (byte 16) no longer fits.
        assert_eq!(parse_tcp_frame(&f[..50]).unwrap_err().offset, 16);
        let mut g = f.clone();
        g[14] = 0x44; // IHL 16 bytes
        assert_eq!(parse_tcp_frame(&g).unwrap_err().offset, 14);
        let mut g = f.clone();
        g[14 + 20 + 12] = 0x40; // data offset 16 bytes
        assert_eq!(parse_tcp_frame(&g).unwrap_err().offset, 46);
        let mut g = f.clone();
        g[55] = 3; // the MSS option's length
        let p = parse_tcp_frame(&g).unwrap().unwrap();
        assert_eq!(p.options().next().unwrap().unwrap_err().offset, 55);
        let mut g = f.clone();
        g[55] = 9; // beyond the header
        let e = parse_tcp_frame(&g).unwrap().unwrap().options().find_map(Result::err).unwrap();
        assert_eq!(e.offset, 55);
        // Not IPv4, not TCP: not malformed, just not ours.
        let mut g = f.clone();
        g[12..14].copy_from_slice(&[0x08, 0x06]);
        assert_eq!(parse_tcp_frame(&g), Ok(None));
        let mut g = f.clone();
        g[14 + 9] = PROTO_UDP;
        assert_eq!(parse_tcp_frame(&g), Ok(None));
        // Ethernet padding after the datagram is not payload.
        let mut g = f.clone();
        g.extend_from_slice(&[0; 6]);
        assert!(parse_tcp_frame(&g).unwrap().unwrap().payload.is_empty());
    }

    #[test]
    fn every_truncation_and_byte_flip_parses_or_errs_without_panicking() {
        let mut o = TcpOptions::default();
        o.mss(1460).sack_permitted().sack(&[(1, 2), (3, 4)]);
        let mut f = Vec::new();
        encode_tcp_bytes(&mut f, &addrs(), &TcpFields::default(), &o, b"abc", 7).unwrap();
        let walk = |g: &[u8]| {
            if let Ok(Some(p)) = parse_tcp_frame(g) {
                for opt in p.options() {
                    if let Err(e) = opt {
                        assert!(e.offset < g.len());
                    }
                }
            }
        };
        for cut in 0..=f.len() {
            walk(&f[..cut]);
        }
        for i in 0..f.len() {
            for v in [0u8, 1, 2, 5, 0x0f, 0x4f, 0xff] {
                let mut g = f.clone();
                g[i] = v;
                walk(&g);
            }
        }
    }

    #[test]
    fn options_pushed_as_given_keep_their_order_and_layout() {
        let mut o = TcpOptions::default();
        let blocks = [0u8, 0, 0, 1, 0, 0, 0, 2];
        for opt in [TcpOpt::Mss(1000), TcpOpt::SackPermitted, TcpOpt::Nop, TcpOpt::WindowScale(7), TcpOpt::Sack(&blocks), TcpOpt::Timestamps(1, 2), TcpOpt::Eol] {
            assert!(o.push_opt(&opt), "{opt:?}");
        }
        o.align_with_nops();
        assert_eq!(o.as_bytes(), &[2, 4, 3, 232, 4, 2, 1, 3, 3, 7, 5, 10, 0, 0, 0, 1, 0, 0, 0, 2, 8, 10, 0, 0, 0, 1, 0, 0, 0, 2, 0, 1]);
        // 40 bytes at most; an option that does not fit is not written at all.
        assert!(!o.push_opt(&TcpOpt::Timestamps(3, 4)));
        assert_eq!(o.as_bytes().len(), 32);
        assert!(!o.push_opt(&TcpOpt::Other(30, &[])));
        assert!(!o.push_opt(&TcpOpt::Sack(&[0; 7])));
    }
}
