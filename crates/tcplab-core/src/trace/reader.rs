//! Streaming capture reader: classic pcap (microsecond and nanosecond, either byte order) and
//! pcapng (any number of sections and interfaces, `if_tsresol`, `if_tsoffset`; enhanced, simple
//! and obsolete packet blocks), then the link layers Ethernet (with 802.1Q/802.1ad tags), Linux
//! cooked v1 (SLL) and v2 (SLL2), raw IP, BSD loopback; IPv4 and IPv6 (extension headers
//! skipped); TCP with its options.
//!
//! Memory is one buffer the size of the largest record; nothing is kept per packet. A file that
//! cannot be read further (bad magic, a truncated or corrupted record) is an error naming the byte
//! offset; a packet that cannot be decoded (not IP, not TCP, cut short by the snaplen) is skipped
//! and counted. No input makes the reader panic (`fuzz/` checks it).

use super::wire::{ETHERTYPE_IPV4, ETHERTYPE_IPV6, OPT_MSS, OPT_SACK, OPT_SACK_PERMITTED, OPT_TIMESTAMP, OPT_WSCALE, PROTO_TCP};
use super::writer::{PCAPNG_BOM, PCAPNG_EPB, PCAPNG_IDB, PCAPNG_SHB, PCAP_MAGIC_NS, PCAP_MAGIC_US};
use std::fmt;
use std::io::Read;

/// A capture that cannot be read further, and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceError {
    /// Byte offset in the file of the structure that is wrong.
    pub offset: u64,
    pub message: String,
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "byte {}: {}", self.offset, self.message)
    }
}

impl std::error::Error for TraceError {}

fn terr<T>(offset: u64, message: impl Into<String>) -> Result<T, TraceError> {
    Err(TraceError { offset, message: message.into() })
}

/// Largest packet record accepted whatever the snaplen says (libpcap's own bound is 256 KiB).
const MAX_RECORD: usize = 256 * 1024;
/// Largest pcapng block accepted.
const MAX_BLOCK: usize = 16 * 1024 * 1024;
const READ_CHUNK: usize = 1 << 18;
/// Timestamps are kept in [0, i64::MAX / 2] ns (year 2116 and beyond clamp), so that differences
/// between any two never overflow.
const MAX_TS_NS: i64 = i64::MAX / 2;

pub const LINKTYPE_NULL: u32 = 0;
pub const LINKTYPE_ETHERNET: u32 = 1;
pub const LINKTYPE_RAW: u32 = 101;
pub const LINKTYPE_LOOP: u32 = 108;
pub const LINKTYPE_LINUX_SLL: u32 = 113;
pub const LINKTYPE_IPV4: u32 = 228;
pub const LINKTYPE_IPV6: u32 = 229;
pub const LINKTYPE_LINUX_SLL2: u32 = 276;
/// DLT_RAW as some systems number it in files (12 on most BSDs, 14 on OpenBSD).
const LINKTYPE_RAW_ALT: [u32; 2] = [12, 14];

/// One captured packet, borrowed from the reader's buffer.
#[derive(Debug)]
pub struct Frame<'a> {
    /// Nanoseconds since the epoch.
    pub ts_ns: i64,
    pub linktype: u32,
    pub data: &'a [u8],
    pub orig_len: u32,
    /// Byte offset of the packet's record in the file.
    pub offset: u64,
}

#[derive(Clone, Debug)]
struct Iface {
    linktype: u32,
    snaplen: u32,
    /// Timestamp units per second as a (numerator, denominator) of nanoseconds per unit: ns =
    /// ts * mul / div.
    mul: u128,
    div: u128,
    offset_s: i64,
}

enum Kind {
    Pcap { be: bool, nanos: bool, linktype: u32, snaplen: u32 },
    Pcapng { be: bool, ifaces: Vec<Iface> },
}

/// Reads records one at a time from any `Read` (a file, a pipe).
pub struct CaptureReader<R: Read> {
    r: R,
    buf: Vec<u8>,
    start: usize,
    end: usize,
    /// File offset of buf[start].
    pos: u64,
    eof: bool,
    kind: Kind,
    pub format: &'static str,
}

fn u16_at(b: &[u8], i: usize, be: bool) -> u16 {
    let a = [b[i], b[i + 1]];
    if be {
        u16::from_be_bytes(a)
    } else {
        u16::from_le_bytes(a)
    }
}

fn u32_at(b: &[u8], i: usize, be: bool) -> u32 {
    let a = [b[i], b[i + 1], b[i + 2], b[i + 3]];
    if be {
        u32::from_be_bytes(a)
    } else {
        u32::from_le_bytes(a)
    }
}

impl<R: Read> CaptureReader<R> {
    /// Open a capture: reads and checks the file header.
    pub fn new(r: R) -> Result<Self, TraceError> {
        let mut me = CaptureReader { r, buf: vec![0; READ_CHUNK], start: 0, end: 0, pos: 0, eof: false, kind: Kind::Pcap { be: false, nanos: false, linktype: 0, snaplen: 0 }, format: "pcap" };
        let have = me.fill(4)?;
        if have < 4 {
            return terr(0, format!("not a capture file: {have} bytes, too short for a pcap or pcapng header"));
        }
        let m = &me.buf[me.start..me.start + 4];
        let le = u32::from_le_bytes([m[0], m[1], m[2], m[3]]);
        let be = u32::from_be_bytes([m[0], m[1], m[2], m[3]]);
        if le == PCAPNG_SHB {
            me.format = "pcapng";
            me.kind = Kind::Pcapng { be: false, ifaces: Vec::new() };
            return Ok(me);
        }
        let (big, nanos) = match (le, be) {
            (PCAP_MAGIC_US, _) => (false, false),
            (PCAP_MAGIC_NS, _) => (false, true),
            (_, PCAP_MAGIC_US) => (true, false),
            (_, PCAP_MAGIC_NS) => (true, true),
            _ => return terr(0, format!("not a pcap or pcapng file: magic number {be:#010x}")),
        };
        if me.fill(24)? < 24 {
            return terr(0, format!("truncated pcap file header: {} of 24 bytes", me.end - me.start));
        }
        let h = &me.buf[me.start..me.start + 24];
        let (major, minor) = (u16_at(h, 4, big), u16_at(h, 6, big));
        if major != 2 {
            return terr(4, format!("unsupported pcap version {major}.{minor} (expected 2.x)"));
        }
        let snaplen = u32_at(h, 16, big);
        // The upper bits of the link-type field carry FCS information (pcap-linktype(7)).
        let linktype = u32_at(h, 20, big) & 0x0fff_ffff;
        me.kind = Kind::Pcap { be: big, nanos, linktype, snaplen };
        me.consume(24);
        Ok(me)
    }

    /// Make at least `n` bytes available from `start`; returns how many are (fewer only at EOF).
    #[inline]
    fn fill(&mut self, n: usize) -> Result<usize, TraceError> {
        if self.end - self.start >= n {
            return Ok(n);
        }
        self.refill(n)
    }

    #[cold]
    #[inline(never)]
    fn refill(&mut self, n: usize) -> Result<usize, TraceError> {
        while self.end - self.start < n && !self.eof {
            if self.start > 0 && self.buf.len() - self.start < n.max(READ_CHUNK / 2) {
                self.buf.copy_within(self.start..self.end, 0);
                self.end -= self.start;
                self.start = 0;
            }
            if self.buf.len() - self.start < n {
                self.buf.resize(self.start + n.max(READ_CHUNK), 0);
            }
            let end = self.end;
            match self.r.read(&mut self.buf[end..]) {
                Ok(0) => self.eof = true,
                Ok(k) => self.end += k,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return terr(self.pos + (self.end - self.start) as u64, format!("read error: {e}")),
            }
        }
        Ok((self.end - self.start).min(n))
    }

    fn consume(&mut self, n: usize) {
        self.start += n;
        self.pos += n as u64;
    }

    /// The next packet, or None at the end of the file.
    #[inline]
    pub fn next_frame(&mut self) -> Result<Option<Frame<'_>>, TraceError> {
        match self.kind {
            Kind::Pcap { .. } => self.next_pcap(),
            Kind::Pcapng { .. } => self.next_pcapng(),
        }
    }

    #[inline]
    fn next_pcap(&mut self) -> Result<Option<Frame<'_>>, TraceError> {
        let Kind::Pcap { be, nanos, linktype, snaplen } = self.kind else { unreachable!() };
        let at = self.pos;
        let have = self.fill(16)?;
        if have == 0 {
            return Ok(None);
        }
        if have < 16 {
            return terr(at, format!("truncated record header: {have} of 16 bytes at the end of the file"));
        }
        let h = &self.buf[self.start..self.start + 16];
        let sec = u32_at(h, 0, be) as i64;
        let frac = u32_at(h, 4, be) as i64;
        let caplen = u32_at(h, 8, be) as usize;
        let orig_len = u32_at(h, 12, be);
        let limit = MAX_RECORD.max(snaplen.min(MAX_BLOCK as u32) as usize);
        if caplen > limit {
            return terr(at + 8, format!("corrupted record: captured length {caplen} exceeds the snapshot length {snaplen} (and the {MAX_RECORD}-byte limit)"));
        }
        let have = self.fill(16 + caplen)?;
        if have < 16 + caplen {
            return terr(at, format!("truncated record: its header says {caplen} captured bytes, only {} remain in the file", have - 16));
        }
        self.consume(16 + caplen);
        let s = self.start - caplen;
        let ts_ns = sec * 1_000_000_000 + if nanos { frac } else { frac * 1000 };
        Ok(Some(Frame { ts_ns, linktype, data: &self.buf[s..s + caplen], orig_len: orig_len.max(caplen as u32), offset: at }))
    }

    fn next_pcapng(&mut self) -> Result<Option<Frame<'_>>, TraceError> {
        loop {
            let at = self.pos;
            let have = self.fill(12)?;
            if have == 0 {
                return Ok(None);
            }
            if have < 12 {
                return terr(at, format!("truncated block header: {have} of at least 12 bytes at the end of the file"));
            }
            let h = &self.buf[self.start..self.start + 12];
            let le_type = u32::from_le_bytes([h[0], h[1], h[2], h[3]]);
            let mut be = match self.kind {
                Kind::Pcapng { be, .. } => be,
                _ => unreachable!(),
            };
            if le_type == PCAPNG_SHB {
                // The byte-order magic decides how this section (its header included) is read.
                be = match (u32::from_le_bytes([h[8], h[9], h[10], h[11]]), u32::from_be_bytes([h[8], h[9], h[10], h[11]])) {
                    (PCAPNG_BOM, _) => false,
                    (_, PCAPNG_BOM) => true,
                    (x, _) => return terr(at + 8, format!("corrupted section header: byte-order magic {x:#010x}")),
                };
            } else if at == 0 {
                return terr(0, "pcapng file does not start with a section header block");
            }
            let btype = u32_at(h, 0, be);
            let blen = u32_at(h, 4, be) as usize;
            if blen < 12 || blen % 4 != 0 || blen > MAX_BLOCK {
                return terr(at + 4, format!("corrupted block length {blen} (a multiple of 4 from 12 to {MAX_BLOCK})"));
            }
            let have = self.fill(blen)?;
            if have < blen {
                return terr(at, format!("truncated block: its header says {blen} bytes, only {have} remain in the file"));
            }
            let b = &self.buf[self.start..self.start + blen];
            if u32_at(b, blen - 4, be) as usize != blen {
                return terr(at + blen as u64 - 4, format!("corrupted block: trailing length {} differs from the leading {blen}", u32_at(b, blen - 4, be)));
            }
            let body = &b[8..blen - 4];
            let mut frame: Option<(i64, u32, usize, usize, u32)> = None; // ts, linktype, data start, len, orig
            match btype {
                PCAPNG_SHB => {
                    if body.len() < 16 {
                        return terr(at, "corrupted section header: shorter than 28 bytes");
                    }
                    let major = u16_at(body, 4, be);
                    if major != 1 {
                        return terr(at + 12, format!("unsupported pcapng version {major}"));
                    }
                    self.kind = Kind::Pcapng { be, ifaces: Vec::new() };
                }
                PCAPNG_IDB => {
                    if body.len() < 8 {
                        return terr(at, "corrupted interface description block: shorter than 20 bytes");
                    }
                    let mut iface = Iface { linktype: u16_at(body, 0, be) as u32, snaplen: u32_at(body, 4, be), mul: 1000, div: 1, offset_s: 0 };
                    let mut o = 8;
                    while o + 4 <= body.len() {
                        let code = u16_at(body, o, be);
                        let len = u16_at(body, o + 2, be) as usize;
                        if code == 0 || o + 4 + len > body.len() {
                            break;
                        }
                        let v = &body[o + 4..o + 4 + len];
                        if code == 9 && len >= 1 {
                            let r = v[0];
                            let (mul, div) = if r & 0x80 == 0 {
                                let e = (r & 0x7f) as u32;
                                if e > 30 {
                                    return terr(at + 8 + o as u64, format!("unsupported if_tsresol 10^-{e}"));
                                }
                                if e <= 9 {
                                    (10u128.pow(9 - e), 1)
                                } else {
                                    (1, 10u128.pow(e - 9))
                                }
                            } else {
                                let e = (r & 0x7f) as u32;
                                if e > 100 {
                                    return terr(at + 8 + o as u64, format!("unsupported if_tsresol 2^-{e}"));
                                }
                                (1_000_000_000, 1u128 << e)
                            };
                            iface.mul = mul;
                            iface.div = div;
                        } else if code == 14 && len >= 8 {
                            let lo = u32_at(v, 0, be) as u64;
                            let hi = u32_at(v, 4, be) as u64;
                            iface.offset_s = (if be { lo << 32 | hi } else { hi << 32 | lo }) as i64;
                        }
                        o += 4 + len.div_ceil(4) * 4;
                    }
                    if let Kind::Pcapng { ifaces, .. } = &mut self.kind {
                        ifaces.push(iface);
                    }
                }
                PCAPNG_EPB | 2 => {
                    if body.len() < 20 {
                        return terr(at, "corrupted packet block: shorter than 32 bytes");
                    }
                    let id = if btype == 2 { u16_at(body, 0, be) as usize } else { u32_at(body, 0, be) as usize };
                    let ts = (u32_at(body, 4, be) as u64) << 32 | u32_at(body, 8, be) as u64;
                    let caplen = u32_at(body, 12, be) as usize;
                    let orig = u32_at(body, 16, be);
                    if caplen > body.len() - 20 {
                        return terr(at + 20, format!("corrupted packet block: captured length {caplen} exceeds the block's {} bytes of data", body.len() - 20));
                    }
                    let Kind::Pcapng { ifaces, .. } = &self.kind else { unreachable!() };
                    let Some(i) = ifaces.get(id) else {
                        return terr(at + 8, format!("packet of interface {id}, but only {} interface(s) are described", ifaces.len()));
                    };
                    let ns = (ts as u128 * i.mul / i.div).min(MAX_TS_NS as u128) as i64;
                    let ns = ns.saturating_add(i.offset_s.saturating_mul(1_000_000_000)).clamp(0, MAX_TS_NS);
                    frame = Some((ns, i.linktype, 28, caplen, orig));
                }
                3 => {
                    // Simple packet block: interface 0, no timestamp.
                    if body.len() < 4 {
                        return terr(at, "corrupted simple packet block: shorter than 16 bytes");
                    }
                    let orig = u32_at(body, 0, be);
                    let Kind::Pcapng { ifaces, .. } = &self.kind else { unreachable!() };
                    let Some(i) = ifaces.first() else {
                        return terr(at, "simple packet block before any interface description");
                    };
                    let mut caplen = (orig as usize).min(body.len() - 4);
                    if i.snaplen > 0 {
                        caplen = caplen.min(i.snaplen as usize);
                    }
                    frame = Some((0, i.linktype, 12, caplen, orig));
                }
                _ => {} // name resolution, statistics, custom blocks: nothing to read
            }
            self.consume(blen);
            if let Some((ts_ns, linktype, off, len, orig)) = frame {
                let s = self.start - blen + off;
                return Ok(Some(Frame { ts_ns, linktype, data: &self.buf[s..s + len], orig_len: orig.max(len as u32), offset: at }));
            }
        }
    }
}

/// An IP address as 16 bytes (IPv4 as ::ffff:a.b.c.d) and whether it is IPv4.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct IpAddr16(pub [u8; 16]);

impl IpAddr16 {
    pub fn v4(a: [u8; 4]) -> Self {
        let mut b = [0u8; 16];
        b[10] = 0xff;
        b[11] = 0xff;
        b[12..].copy_from_slice(&a);
        IpAddr16(b)
    }
    pub fn is_v4(&self) -> bool {
        self.0[..10].iter().all(|&x| x == 0) && self.0[10] == 0xff && self.0[11] == 0xff
    }
    pub fn to_std(&self) -> std::net::IpAddr {
        if self.is_v4() {
            std::net::IpAddr::from([self.0[12], self.0[13], self.0[14], self.0[15]])
        } else {
            std::net::IpAddr::from(self.0)
        }
    }
}

impl fmt::Display for IpAddr16 {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self.to_std() {
            std::net::IpAddr::V4(a) => write!(f, "{a}"),
            std::net::IpAddr::V6(a) => write!(f, "[{a}]"),
        }
    }
}

/// A decoded TCP segment (sequence numbers as on the wire, 32-bit).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TcpSeg {
    pub ts_ns: i64,
    pub src: IpAddr16,
    pub dst: IpAddr16,
    pub sport: u16,
    pub dport: u16,
    pub seq: u32,
    pub ack: u32,
    pub flags: u8,
    pub window: u16,
    /// Payload bytes on the wire (from the IP length, whatever the snaplen kept).
    pub payload: u32,
    /// IP bytes on the wire (header and payload).
    pub ip_len: u32,
    pub mss: Option<u16>,
    pub wscale: Option<u8>,
    pub sack_permitted: bool,
    pub timestamps: bool,
    /// TSval and TSecr of the timestamps option (RFC 7323 §3.2), when `timestamps`.
    pub tsval: u32,
    pub tsecr: u32,
    pub n_sack: u8,
    pub sack: [(u32, u32); 4],
}

pub const TH_FIN: u8 = 0x01;
pub const TH_SYN: u8 = 0x02;
pub const TH_RST: u8 = 0x04;
pub const TH_ACK: u8 = 0x10;

/// Why a packet was skipped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Skip {
    /// A link type the reader does not decode.
    LinkType,
    /// Not IPv4 or IPv6 (ARP, LLDP, ...).
    NotIp,
    /// IP but not TCP (UDP, ICMP, ...), or a non-first fragment.
    NotTcp,
    /// Captured bytes end before the TCP header does (snaplen too short).
    Truncated,
    /// Inconsistent header fields (bad version, header length, total length).
    Malformed,
}

impl Skip {
    pub const ALL: [Skip; 5] = [Skip::LinkType, Skip::NotIp, Skip::NotTcp, Skip::Truncated, Skip::Malformed];
    pub fn name(self) -> &'static str {
        match self {
            Skip::LinkType => "unsupported_link_type",
            Skip::NotIp => "not_ip",
            Skip::NotTcp => "not_tcp",
            Skip::Truncated => "truncated",
            Skip::Malformed => "malformed",
        }
    }
}

/// Decode a frame down to TCP.
#[inline]
pub fn decode(f: &Frame<'_>) -> Result<TcpSeg, Skip> {
    let mut s = TcpSeg::default();
    decode_into(f, &mut s).map(|()| s)
}

/// Decode a frame down to TCP into `s` (all of it is overwritten), saving a copy of the segment.
#[inline]
pub fn decode_into(f: &Frame<'_>, s: &mut TcpSeg) -> Result<(), Skip> {
    let d = f.data;
    // (network-layer bytes, what is missing from the wire length of the frame before them)
    let (ethertype, l3) = match f.linktype {
        LINKTYPE_ETHERNET => {
            if d.len() < 14 {
                return Err(Skip::Truncated);
            }
            let mut et = u16::from_be_bytes([d[12], d[13]]);
            let mut o = 14;
            // 802.1Q / 802.1ad tags.
            while et == 0x8100 || et == 0x88a8 || et == 0x9100 {
                if d.len() < o + 4 {
                    return Err(Skip::Truncated);
                }
                et = u16::from_be_bytes([d[o + 2], d[o + 3]]);
                o += 4;
            }
            (Some(et), o)
        }
        LINKTYPE_LINUX_SLL => {
            if d.len() < 16 {
                return Err(Skip::Truncated);
            }
            (Some(u16::from_be_bytes([d[14], d[15]])), 16)
        }
        LINKTYPE_LINUX_SLL2 => {
            if d.len() < 20 {
                return Err(Skip::Truncated);
            }
            (Some(u16::from_be_bytes([d[0], d[1]])), 20)
        }
        LINKTYPE_RAW | LINKTYPE_IPV4 | LINKTYPE_IPV6 => (None, 0),
        t if LINKTYPE_RAW_ALT.contains(&t) => (None, 0),
        LINKTYPE_NULL | LINKTYPE_LOOP => {
            if d.len() < 4 {
                return Err(Skip::Truncated);
            }
            // The address family, in the writer's byte order (NULL) or network order (LOOP):
            // 2 is IPv4; 24, 28 and 30 are IPv6 on the BSDs and macOS.
            let le = u32::from_le_bytes([d[0], d[1], d[2], d[3]]);
            let be = u32::from_be_bytes([d[0], d[1], d[2], d[3]]);
            let fam = if le < 256 { le } else { be };
            match fam {
                2 => (Some(ETHERTYPE_IPV4), 4),
                24 | 28 | 30 => (Some(ETHERTYPE_IPV6), 4),
                _ => return Err(Skip::NotIp),
            }
        }
        _ => return Err(Skip::LinkType),
    };
    let ip = &d[l3..];
    let link_len = l3 as u32;
    let version = match ethertype {
        Some(ETHERTYPE_IPV4) => 4,
        Some(ETHERTYPE_IPV6) => 6,
        Some(_) => return Err(Skip::NotIp),
        None => {
            if ip.is_empty() {
                return Err(Skip::Truncated);
            }
            ip[0] >> 4
        }
    };
    *s = TcpSeg { ts_ns: f.ts_ns, ..Default::default() };
    let (tcp_off, ip_payload_len) = match version {
        4 => {
            if ip.len() < 20 {
                return Err(Skip::Truncated);
            }
            if ip[0] >> 4 != 4 {
                return Err(Skip::Malformed);
            }
            let ihl = (ip[0] & 0x0f) as usize * 4;
            if ihl < 20 {
                return Err(Skip::Malformed);
            }
            let mut total = u16::from_be_bytes([ip[2], ip[3]]) as u32;
            if total == 0 {
                // Segmentation offload on the capturing host leaves the length 0: take the frame's.
                total = f.orig_len.saturating_sub(link_len);
            }
            if (total as usize) < ihl {
                return Err(Skip::Malformed);
            }
            let frag = u16::from_be_bytes([ip[6], ip[7]]) & 0x1fff;
            if ip[9] != PROTO_TCP || frag != 0 {
                return Err(Skip::NotTcp);
            }
            s.src = IpAddr16::v4([ip[12], ip[13], ip[14], ip[15]]);
            s.dst = IpAddr16::v4([ip[16], ip[17], ip[18], ip[19]]);
            s.ip_len = total;
            (ihl, total - ihl as u32)
        }
        6 => {
            if ip.len() < 40 {
                return Err(Skip::Truncated);
            }
            if ip[0] >> 4 != 6 {
                return Err(Skip::Malformed);
            }
            let mut plen = u16::from_be_bytes([ip[4], ip[5]]) as u32;
            if plen == 0 {
                plen = f.orig_len.saturating_sub(link_len + 40); // jumbogram or offload
            }
            let mut next = ip[6];
            let mut o = 40usize;
            let mut b = [0u8; 16];
            b.copy_from_slice(&ip[8..24]);
            s.src = IpAddr16(b);
            b.copy_from_slice(&ip[24..40]);
            s.dst = IpAddr16(b);
            s.ip_len = plen + 40;
            // Extension headers: hop-by-hop, routing, fragment, destination options.
            let mut hops = 0;
            loop {
                match next {
                    PROTO_TCP => break,
                    0 | 43 | 60 | 44 => {
                        hops += 1;
                        if ip.len() < o + 8 || hops > 8 {
                            return Err(if hops > 8 { Skip::Malformed } else { Skip::Truncated });
                        }
                        let len = if next == 44 {
                            if u16::from_be_bytes([ip[o + 2], ip[o + 3]]) & 0xfff8 != 0 {
                                return Err(Skip::NotTcp); // a non-first fragment
                            }
                            8
                        } else {
                            (ip[o + 1] as usize + 1) * 8
                        };
                        next = ip[o];
                        o += len;
                    }
                    _ => return Err(Skip::NotTcp),
                }
            }
            let ext = (o - 40) as u32;
            if plen < ext {
                return Err(Skip::Malformed);
            }
            (o, plen - ext)
        }
        _ => return Err(Skip::Malformed),
    };
    let t = match ip.get(tcp_off..) {
        Some(t) if t.len() >= 20 => t,
        _ => return Err(Skip::Truncated),
    };
    let doff = (t[12] >> 4) as usize * 4;
    if doff < 20 || doff as u32 > ip_payload_len {
        return Err(Skip::Malformed);
    }
    if t.len() < doff {
        return Err(Skip::Truncated);
    }
    s.sport = u16::from_be_bytes([t[0], t[1]]);
    s.dport = u16::from_be_bytes([t[2], t[3]]);
    s.seq = u32::from_be_bytes([t[4], t[5], t[6], t[7]]);
    s.ack = u32::from_be_bytes([t[8], t[9], t[10], t[11]]);
    s.flags = t[13];
    s.window = u16::from_be_bytes([t[14], t[15]]);
    s.payload = ip_payload_len - doff as u32;
    parse_options(&t[20..doff], s);
    Ok(())
}

/// TCP options (RFC 9293 §3.1): parsing stops at the end-of-list or at a malformed option.
#[inline]
fn parse_options(mut o: &[u8], s: &mut TcpSeg) {
    while let Some(&kind) = o.first() {
        match kind {
            0 => return,
            1 => {
                o = &o[1..];
                continue;
            }
            _ => {}
        }
        let Some(&len) = o.get(1) else { return };
        let len = len as usize;
        if len < 2 || len > o.len() {
            return;
        }
        let v = &o[2..len];
        match (kind, len) {
            (OPT_MSS, 4) => s.mss = Some(u16::from_be_bytes([v[0], v[1]])),
            (OPT_WSCALE, 3) => s.wscale = Some(v[0]),
            (OPT_SACK_PERMITTED, 2) => s.sack_permitted = true,
            (OPT_TIMESTAMP, 10) => {
                s.timestamps = true;
                s.tsval = u32::from_be_bytes([v[0], v[1], v[2], v[3]]);
                s.tsecr = u32::from_be_bytes([v[4], v[5], v[6], v[7]]);
            }
            (OPT_SACK, _) if (len - 2) % 8 == 0 => {
                for b in v.chunks_exact(8).take(4) {
                    s.sack[s.n_sack as usize] = (u32::from_be_bytes([b[0], b[1], b[2], b[3]]), u32::from_be_bytes([b[4], b[5], b[6], b[7]]));
                    s.n_sack += 1;
                }
            }
            _ => {}
        }
        o = &o[len..];
    }
}
