//! tcptrace-style analysis of TCP connections in a capture, in one pass: per connection and
//! direction, packets and bytes, unique and retransmitted data, out-of-order and duplicate
//! segments, duplicate ACKs, SACK blocks, Karn-safe RTT samples, the initial window, handshake
//! retransmissions with their intervals, and loss events counted as retransmission bursts
//! (Seddigh et al. §4.2). The definitions are in docs/traces.md.
//!
//! Memory: a connection's state is a few hundred bytes plus its unacknowledged segments and the
//! holes in the data it has seen; nothing is kept per packet unless the per-packet table is asked
//! for (`Analyzer::with_packets`, behind `tcplab.trace.packets()`).

use super::reader::{decode_into, CaptureReader, IpAddr16, Skip, TcpSeg, TraceError, TH_ACK, TH_FIN, TH_RST, TH_SYN};
use serde_json::{json, Map, Value};
use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};
use std::io::Read;

/// A hole-filling segment that arrives this long (or half the connection's smallest RTT, if
/// larger) after the highest segment is taken as a retransmission of a packet lost before the
/// capture point rather than as reordering (Wireshark's default threshold is 3 ms too).
pub const REORDER_THRESHOLD_NS: i64 = 3_000_000;
/// Handshake retransmission intervals kept per connection.
const MAX_INTERVALS: usize = 16;
/// Holes tracked per direction; beyond this the lowest two ranges are merged.
const MAX_RANGES: usize = 4096;

/// FxHash (rustc's hasher): the keys are addresses and ports, not attacker-chosen in a way that
/// matters for an offline analyser, and it is several times faster than SipHash here.
#[derive(Default, Clone, Copy)]
struct Fx(u64);

impl Hasher for Fx {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        let mut c = bytes.chunks_exact(8);
        for w in &mut c {
            self.write_u64(u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]));
        }
        for &b in c.remainder() {
            self.write_u64(b as u64);
        }
    }
    fn write_u64(&mut self, i: u64) {
        self.0 = (self.0.rotate_left(5) ^ i).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn write_u16(&mut self, i: u16) {
        self.write_u64(i as u64)
    }
}

/// An address (as one integer, IPv4 mapped) and a port: compared and hashed as integers.
type Endpoint = (u128, u16);

#[derive(Clone, Copy, PartialEq, Eq)]
struct Key(Endpoint, Endpoint);

impl std::hash::Hash for Key {
    fn hash<H: Hasher>(&self, h: &mut H) {
        h.write_u64(self.0 .0 as u64);
        h.write_u64((self.0 .0 >> 64) as u64);
        h.write_u64(self.1 .0 as u64);
        h.write_u64((self.1 .0 >> 64) as u64);
        h.write_u64((self.0 .1 as u64) << 16 | self.1 .1 as u64);
    }
}

/// Slots of the connection cache (a power of 2).
const CACHE_SLOTS: usize = 1024;

/// The cache slot of a segment's endpoints, the same for both directions.
#[inline]
fn cache_slot(e1: Endpoint, e2: Endpoint) -> usize {
    let a = e1.0 ^ e2.0;
    let x = (a as u64) ^ ((a >> 64) as u64).rotate_left(32) ^ ((e1.1 ^ e2.1) as u64) << 48 ^ (e1.1 as u64 + e2.1 as u64);
    (x.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - CACHE_SLOTS.trailing_zeros())) as usize
}

/// A data segment sent and not yet acknowledged, for RTT samples.
#[derive(Clone, Copy, Debug)]
struct Sent {
    start: i64,
    end: i64,
    t: i64,
    retx: bool,
}

/// Counters of one direction of a connection.
#[derive(Clone, Debug, Default)]
pub struct DirStats {
    pub segs: u64,
    pub ip_bytes: u64,
    pub data_segs: u64,
    pub data_bytes: u64,
    pub unique_bytes: u64,
    pub rexmt_segs: u64,
    pub rexmt_bytes: u64,
    pub dup_segs: u64,
    pub ooo_segs: u64,
    pub above_hole_segs: u64,
    pub late_fill_segs: u64,
    pub pure_acks: u64,
    pub dup_acks: u64,
    pub sack_segs: u64,
    pub sack_blocks: u64,
    pub syns: u64,
    pub fins: u64,
    pub rsts: u64,
    pub rtt_samples: u64,
    pub rtt_sum_ns: i128,
    pub rtt_min_ns: i64,
    pub rtt_max_ns: i64,
    pub iw_segs: u64,
    pub iw_bytes: u64,
    pub loss_events: u64,
    pub first_data_ns: Option<i64>,
    pub last_data_ns: Option<i64>,
    pub complete_ns: Option<i64>,
    pub acked_ns: Option<i64>,
    pub mss: Option<u16>,
    pub wscale: Option<u8>,
    pub sack_permitted: bool,
    pub timestamps: bool,
    pub window_max: u16,
    /// When each SYN (SYN-ACK for the passive side) was seen.
    pub syn_times: Vec<i64>,
}

#[derive(Default)]
struct Dir {
    /// Wire sequence number of relative 0 (the ISN).
    base: Option<u32>,
    /// Anchor for unwrapping 32-bit sequence numbers: a wire value and its relative value.
    anchor32: u32,
    anchor: i64,
    syn_seen: bool,
    /// Highest sequence end seen (SYN, data and FIN).
    hi: i64,
    /// Highest data end seen and when.
    hi_data: i64,
    hi_data_t: i64,
    /// Data byte ranges seen, sorted, disjoint, merged.
    ranges: Vec<(i64, i64)>,
    outstanding: VecDeque<Sent>,
    /// Cumulative ACK of this direction's data by the other side (relative).
    acked: i64,
    /// This direction's own last ACK field and window, for duplicate ACKs.
    last_ack: Option<u32>,
    last_win: u16,
    iw_closed: bool,
    burst: Option<i64>,
    s: DirStats,
}

impl Dir {
    fn init(&mut self, seq: u32, syn: bool) {
        // Relative 0 is the ISN: with a SYN its sequence number; without one (a capture that
        // starts mid-connection) the byte before the first one seen, so data starts at 1.
        let base = if syn { seq } else { seq.wrapping_sub(1) };
        self.base = Some(base);
        self.anchor32 = seq;
        self.anchor = seq.wrapping_sub(base) as i64;
        self.hi = self.anchor;
        self.hi_data = 1;
        self.acked = if syn { 0 } else { 1 };
    }

    /// Unwrap a 32-bit sequence number to the relative value nearest the anchor.
    fn rel(&self, seq: u32) -> i64 {
        self.anchor + seq.wrapping_sub(self.anchor32) as i32 as i64
    }

    fn advance_anchor(&mut self, seq: u32) {
        let r = self.rel(seq);
        if r > self.anchor {
            self.anchor = r;
            self.anchor32 = seq;
        }
    }

    /// Bytes of [l, r) already seen.
    fn overlap(&self, l: i64, r: i64) -> i64 {
        // Fast path: new data at or above everything seen.
        if self.ranges.last().is_none_or(|&(_, b)| l >= b) {
            return 0;
        }
        let i = self.ranges.partition_point(|&(_, b)| b <= l);
        let mut n = 0;
        for &(a, b) in &self.ranges[i..] {
            if a >= r {
                break;
            }
            n += b.min(r) - a.max(l);
        }
        n
    }

    fn insert(&mut self, l: i64, r: i64) {
        // Fast path: in-order data extends the highest range.
        if let Some(last) = self.ranges.last_mut() {
            if l == last.1 {
                last.1 = r;
                return;
            }
        }
        let i = self.ranges.partition_point(|&(_, b)| b < l);
        let mut j = i;
        let (mut nl, mut nr) = (l, r);
        while j < self.ranges.len() && self.ranges[j].0 <= r {
            nl = nl.min(self.ranges[j].0);
            nr = nr.max(self.ranges[j].1);
            j += 1;
        }
        self.ranges.splice(i..j, std::iter::once((nl, nr)));
        if self.ranges.len() > MAX_RANGES {
            let (a, _) = self.ranges[0];
            self.ranges.remove(0);
            self.ranges[0].0 = a;
        }
    }

    #[cold]
    #[inline(never)]
    fn syn(&mut self, s: &TcpSeg) {
        self.s.syns += 1;
        self.syn_seen = true;
        if self.s.syn_times.len() <= MAX_INTERVALS {
            self.s.syn_times.push(s.ts_ns);
        }
        if let Some(m) = s.mss {
            self.s.mss = Some(m);
        }
        self.s.wscale = s.wscale.or(self.s.wscale);
        self.s.sack_permitted |= s.sack_permitted;
    }

    /// Karn: the ACK of any byte sent again no longer times its first transmission.
    #[cold]
    #[inline(never)]
    fn mark_resent(&mut self, start: i64, end: i64) {
        let i = self.outstanding.partition_point(|x| x.end <= start);
        for x in self.outstanding.iter_mut().skip(i) {
            if x.start >= end {
                break;
            }
            x.retx = true;
        }
    }

    fn contiguous(&self) -> bool {
        self.ranges.len() == 1 && self.ranges[0].0 <= 1
    }
}

struct Conn {
    /// Creation order, which names the connection in the per-packet table until the report
    /// numbers connections by first appearance.
    serial: u32,
    key: Key,
    /// Whether endpoint `key.0` is side a (the active opener, or the first sender seen).
    a_is_first: bool,
    ipv6: bool,
    first_ns: i64,
    last_ns: i64,
    d: [Dir; 2],
    handshake_rtt_ns: Option<i64>,
    min_rtt_ns: Option<i64>,
}

/// What the reader skipped and why.
#[derive(Clone, Debug, Default)]
pub struct ReaderStats {
    pub format: String,
    pub packets: u64,
    pub tcp_packets: u64,
    pub skipped: [u64; 5],
    /// Byte offset of the first packet skipped for each reason.
    pub first_skip_offset: [Option<u64>; 5],
    pub linktypes: Vec<u32>,
    pub first_ns: Option<i64>,
    pub last_ns: Option<i64>,
    /// Where and why reading stopped before the end of the file (a record cut short or
    /// corrupted): everything before it is analysed.
    pub stopped: Option<TraceError>,
}

/// The per-packet table: one entry per TCP segment, in file order. Sequence numbers are relative
/// to the ISN of their direction (a SYN is 0, the first data byte 1, as Wireshark shows them);
/// ACKs and SACK blocks to the ISN of the other direction, -1 when absent.
#[derive(Default, Debug, Clone)]
pub struct Packets {
    /// Connection (numbered as in the report once `Analyzer::report_with_packets` remaps it).
    pub conn: Vec<u32>,
    /// 0: from side a to side b; 1: from b to a.
    pub dir: Vec<u8>,
    pub time_ns: Vec<i64>,
    pub seq: Vec<i64>,
    /// Payload bytes.
    pub len: Vec<u32>,
    pub ack: Vec<i64>,
    /// The window field as sent (not scaled).
    pub win: Vec<u16>,
    pub flags: Vec<u8>,
    /// The analyser counts this segment as a retransmission (data seen before, a late hole fill,
    /// or a SYN or SYN-ACK sent again).
    pub retx: Vec<bool>,
    /// A duplicate ACK (RFC 5681 §2).
    pub dup_ack: Vec<bool>,
    /// SACK blocks (left, right), up to four per segment; unused slots are (-1, -1).
    pub sack: Vec<[(i64, i64); 4]>,
    /// TSval and TSecr of the timestamps option (RFC 7323 §3.2); -1 without the option.
    pub tsval: Vec<i64>,
    pub tsecr: Vec<i64>,
    /// Key-relative direction, turned into `dir` at the end (side a is known per connection).
    key_dir: Vec<u8>,
}

/// The analysis of a capture: one row per connection, in order of first appearance.
pub struct Analyzer {
    conns: Vec<Conn>,
    index: HashMap<Key, usize, BuildHasherDefault<Fx>>,
    /// Connection indices by `cache_slot` (u32::MAX: empty), in front of `index`.
    cache: Box<[u32; CACHE_SLOTS]>,
    done: Vec<Conn>,
    pub reader: ReaderStats,
    pkts: Option<Box<Packets>>,
}

impl Default for Analyzer {
    fn default() -> Self {
        Self::new()
    }
}

fn secs(ns: i64) -> f64 {
    ns as f64 / 1e9
}

impl Analyzer {
    pub fn new() -> Self {
        Analyzer { conns: Vec::new(), index: HashMap::default(), cache: Box::new([u32::MAX; CACHE_SLOTS]), done: Vec::new(), reader: ReaderStats::default(), pkts: None }
    }

    /// An analyser that also keeps the per-packet table (about 130 bytes a packet).
    pub fn with_packets() -> Self {
        let mut a = Self::new();
        a.pkts = Some(Box::default());
        a
    }

    fn next_serial(&self) -> u32 {
        (self.conns.len() + self.done.len()) as u32
    }

    /// Read a capture as far as it can be read: a record cut short or corrupted stops the reading
    /// and is kept in `reader.stopped`; every packet before it is analysed. Only a file whose
    /// header cannot be read is an error.
    pub fn read_lenient<R: Read>(&mut self, r: R) -> Result<(), TraceError> {
        let rd = CaptureReader::new(r)?;
        if let Err(e) = self.read_from(rd) {
            self.reader.stopped = Some(e);
        }
        Ok(())
    }

    /// Read a whole capture. With more than one core, and more than one batch of packets, the
    /// reading and decoding run on this thread and the bookkeeping on another: the segments reach
    /// it in batches, in file order, so the results are those of one thread.
    pub fn read<R: Read>(&mut self, r: R) -> Result<(), TraceError> {
        self.read_from(CaptureReader::new(r)?)
    }

    fn read_from<R: Read>(&mut self, mut rd: CaptureReader<R>) -> Result<(), TraceError> {
        let mut rs = std::mem::take(&mut self.reader);
        rs.format = rd.format.to_string();
        let mut batch = Vec::with_capacity(BATCH);
        // The first batch on this thread: a small capture is not worth a thread.
        let mut res = next_batch(&mut rd, &mut rs, &mut batch);
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        if res.as_ref().is_ok_and(|&more| more) && threads > 1 {
            std::thread::scope(|sc| {
                let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<TcpSeg>>(4);
                let (back_tx, back_rx) = std::sync::mpsc::channel::<Vec<TcpSeg>>();
                let me = &mut *self;
                let worker = sc.spawn(move || {
                    for mut b in rx {
                        me.segments(&b);
                        b.clear();
                        let _ = back_tx.send(b);
                    }
                });
                loop {
                    let full = std::mem::replace(&mut batch, back_rx.try_recv().unwrap_or_else(|_| Vec::with_capacity(BATCH)));
                    if tx.send(full).is_err() {
                        break; // the worker panicked: joined below
                    }
                    res = next_batch(&mut rd, &mut rs, &mut batch);
                    if !res.as_ref().is_ok_and(|&more| more) {
                        let _ = tx.send(std::mem::take(&mut batch));
                        break;
                    }
                }
                drop(tx);
                if let Err(p) = worker.join() {
                    std::panic::resume_unwind(p);
                }
            });
        } else {
            self.segments(&batch);
            while res.as_ref().is_ok_and(|&more| more) {
                batch.clear();
                res = next_batch(&mut rd, &mut rs, &mut batch);
                self.segments(&batch);
            }
        }
        self.reader = rs;
        res.map(|_| ())
    }

    /// The connection of a segment and the direction it travels (0: from `key.0`).
    #[inline]
    fn lookup(&mut self, s: &TcpSeg) -> (usize, usize) {
        let e1 = (u128::from_be_bytes(s.src.0), s.sport);
        let e2 = (u128::from_be_bytes(s.dst.0), s.dport);
        // A direct-mapped cache indexed by a hash that is the same in both directions, checked
        // against the connection's own key: a hit costs one hash and two comparisons.
        let slot = cache_slot(e1, e2);
        if let Some(c) = self.conns.get(self.cache[slot] as usize) {
            if c.key == Key(e1, e2) {
                return (self.cache[slot] as usize, 0);
            }
            if c.key == Key(e2, e1) {
                return (self.cache[slot] as usize, 1);
            }
        }
        self.lookup_slow(s, e1, e2, slot)
    }

    #[cold]
    #[inline(never)]
    fn lookup_slow(&mut self, s: &TcpSeg, e1: Endpoint, e2: Endpoint, slot: usize) -> (usize, usize) {
        let key = if e1 <= e2 { Key(e1, e2) } else { Key(e2, e1) };
        let n = self.conns.len();
        let i = *self.index.entry(key).or_insert(n);
        if i == n {
            // Side a is the first sender, unless that first packet is a SYN-ACK.
            let first_is_lo = key.0 == e1;
            let synack = s.flags & (TH_SYN | TH_ACK) == TH_SYN | TH_ACK;
            let serial = self.next_serial();
            self.conns.push(Conn {
                serial,
                key,
                a_is_first: first_is_lo != synack,
                ipv6: !s.src.is_v4(),
                first_ns: s.ts_ns,
                last_ns: s.ts_ns,
                d: [Dir::default(), Dir::default()],
                handshake_rtt_ns: None,
                min_rtt_ns: None,
            });
        }
        self.cache[slot] = i as u32;
        (i, if key.0 == e1 { 0 } else { 1 })
    }

    /// Account one TCP segment.
    pub fn segment(&mut self, s: &TcpSeg) {
        self.account(s);
    }

    /// Account a batch of segments in order (`segment` inlined into one loop).
    pub fn segments(&mut self, batch: &[TcpSeg]) {
        for s in batch {
            self.account(s);
        }
    }

    /// A SYN with a new ISN on a connection that has carried data or closed: the 4-tuple is
    /// reused by a new connection, which replaces the old one (kept for the report).
    #[cold]
    #[inline(never)]
    fn check_reuse(&mut self, s: &TcpSeg, ci: usize, di: usize) {
        let c = &self.conns[ci];
        let d = &c.d[di];
        let reused = d.base.is_some_and(|b| b != s.seq) && (d.s.data_segs > 0 || c.d[1 - di].s.data_segs > 0 || d.s.fins > 0 || d.s.rsts > 0 || c.d[1 - di].s.rsts > 0);
        if reused {
            let fresh = Conn { serial: self.next_serial(), key: c.key, a_is_first: di == 0, ipv6: c.ipv6, first_ns: s.ts_ns, last_ns: s.ts_ns, d: [Dir::default(), Dir::default()], handshake_rtt_ns: None, min_rtt_ns: None };
            let old = std::mem::replace(&mut self.conns[ci], fresh);
            self.done.push(old);
        }
    }

    #[inline(always)]
    fn account(&mut self, s: &TcpSeg) {
        let (ci, di) = self.lookup(s);
        let syn = s.flags & TH_SYN != 0;
        if syn && s.flags & TH_ACK == 0 {
            self.check_reuse(s, ci, di);
        }
        let c = &mut self.conns[ci];
        c.last_ns = s.ts_ns;
        let t = s.ts_ns;
        let (lo, hi) = c.d.split_at_mut(1);
        let (d, o) = if di == 0 { (&mut lo[0], &mut hi[0]) } else { (&mut hi[0], &mut lo[0]) };
        d.s.segs += 1;
        d.s.ip_bytes += s.ip_len as u64;
        d.s.window_max = d.s.window_max.max(s.window);
        if s.flags & TH_RST != 0 {
            d.s.rsts += 1;
        }
        if d.base.is_none() {
            d.init(s.seq, syn);
        }
        if syn {
            d.syn(s);
        }
        d.s.timestamps |= s.timestamps;
        let start = d.rel(s.seq) + syn as i64;
        d.advance_anchor(s.seq);
        let end = start + s.payload as i64;
        let mut retx = syn && d.s.syns > 1;
        let mut dup_ack = false;
        if s.payload > 0 {
            d.s.data_segs += 1;
            d.s.data_bytes += s.payload as u64;
            d.s.first_data_ns.get_or_insert(t);
            d.s.last_data_ns = Some(t);
            if !d.iw_closed {
                d.s.iw_segs += 1;
                d.s.iw_bytes += s.payload as u64;
            }
            let seen = d.overlap(start, end);
            let below_hi = start < d.hi_data;
            if seen > 0 {
                retx = true;
                d.s.rexmt_segs += 1;
                d.s.rexmt_bytes += seen as u64;
                if seen == end - start {
                    d.s.dup_segs += 1;
                }
                d.mark_resent(start, end);
            } else if below_hi {
                d.s.ooo_segs += 1;
                let thresh = REORDER_THRESHOLD_NS.max(c.min_rtt_ns.map_or(0, |r| r / 2));
                if t - d.hi_data_t >= thresh {
                    d.s.late_fill_segs += 1;
                    retx = true;
                }
            }
            // Loss events: a burst of retransmissions is one event, so a go-back-N resend after
            // a timeout counts once; new data ends a burst, and a retransmission below the
            // burst's highest point (the same data again) starts another.
            if retx {
                match d.burst {
                    Some(b) if start >= b => d.burst = Some(b.max(end)),
                    _ => {
                        d.s.loss_events += 1;
                        d.burst = Some(end);
                    }
                }
            } else if end > d.hi_data {
                d.burst = None;
            }
            if end > d.hi_data {
                let from = start.max(d.hi_data);
                d.outstanding.push_back(Sent { start: from, end, t, retx: seen > 0 });
                d.hi_data = end;
                d.hi_data_t = t;
            }
            let before = d.s.unique_bytes;
            d.s.unique_bytes += (end - start - seen) as u64;
            if seen < end - start {
                d.insert(start, end);
            }
            if d.s.unique_bytes > before && d.contiguous() {
                d.s.complete_ns = Some(t);
            }
        }
        if s.payload > 0 || s.flags & TH_FIN != 0 {
            // Above a hole: bytes between the first data byte and this segment are missing when
            // it arrives (what a receiver here counts as out of order).
            let in_order_end = match d.ranges.first() {
                Some(&(a, b)) if a <= 1 => b,
                _ => 1,
            };
            if start > in_order_end {
                d.s.above_hole_segs += 1;
            }
        }
        let mut seq_end = end;
        if s.flags & TH_FIN != 0 {
            d.s.fins += 1;
            seq_end += 1;
        }
        if seq_end > d.hi {
            d.hi = seq_end;
            d.s.acked_ns = None;
        }
        // The ACK field acknowledges the other direction's data.
        if s.flags & TH_ACK != 0 && o.base.is_some() {
            let a = o.rel(s.ack);
            if a >= 2 && !o.iw_closed && o.s.data_segs > 0 {
                // The first ACK of data closes the other side's initial window.
                o.iw_closed = true;
            }
            // Handshake RTT: from the SYN to the ACK of the SYN-ACK, about one RTT wherever the
            // capture is taken; only when each was sent once (Karn).
            if a == 1 && o.syn_seen && d.syn_seen && s.flags & TH_SYN == 0 && c.handshake_rtt_ns.is_none() && d.s.syns == 1 && o.s.syns == 1 {
                if let Some(&t0) = d.s.syn_times.first() {
                    c.handshake_rtt_ns = Some(t - t0);
                }
            }
            if a > o.acked {
                let mut karn_ok = true;
                let mut last: Option<Sent> = None;
                while let Some(x) = o.outstanding.front() {
                    if x.end > a {
                        break;
                    }
                    karn_ok &= !x.retx;
                    last = o.outstanding.pop_front();
                }
                if let Some(x) = o.outstanding.front_mut() {
                    if x.start < a {
                        // A partial ACK of a segment: the rest stays outstanding.
                        karn_ok &= !x.retx;
                        x.start = a;
                    }
                }
                if let Some(x) = last {
                    // Timestamps that go backwards (a capture merged from two clocks) give none.
                    if karn_ok && x.end == a && t >= x.t {
                        let r = t - x.t;
                        o.s.rtt_samples += 1;
                        o.s.rtt_sum_ns += r as i128;
                        o.s.rtt_min_ns = if o.s.rtt_samples == 1 { r } else { o.s.rtt_min_ns.min(r) };
                        o.s.rtt_max_ns = o.s.rtt_max_ns.max(r);
                        c.min_rtt_ns = Some(c.min_rtt_ns.map_or(r, |m| m.min(r)));
                    }
                }
                o.acked = a;
            }
            if a >= o.hi && o.s.acked_ns.is_none() && o.hi > 1 {
                o.s.acked_ns = Some(t);
            }
            let pure = s.payload == 0 && s.flags & (TH_SYN | TH_FIN | TH_RST) == 0;
            if pure {
                d.s.pure_acks += 1;
                // RFC 5681 §2: same ACK, same window, no data, data outstanding.
                if d.last_ack == Some(s.ack) && d.last_win == s.window && o.hi > a {
                    d.s.dup_acks += 1;
                    dup_ack = true;
                }
            }
            d.last_ack = Some(s.ack);
            d.last_win = s.window;
        }
        if s.n_sack > 0 {
            d.s.sack_segs += 1;
            d.s.sack_blocks += s.n_sack as u64;
        }
        if let Some(p) = self.pkts.as_deref_mut() {
            let has_ack = s.flags & TH_ACK != 0 && o.base.is_some();
            let mut sack = [(-1, -1); 4];
            if o.base.is_some() {
                for (k, &(l, r)) in s.sack.iter().take(s.n_sack as usize).enumerate() {
                    sack[k] = (o.rel(l), o.rel(r));
                }
            }
            p.conn.push(c.serial);
            p.key_dir.push(di as u8);
            p.time_ns.push(t);
            p.seq.push(start - syn as i64);
            p.len.push(s.payload);
            p.ack.push(if has_ack { o.rel(s.ack) } else { -1 });
            p.win.push(s.window);
            p.flags.push(s.flags);
            p.retx.push(retx);
            p.dup_ack.push(dup_ack);
            p.sack.push(sack);
            p.tsval.push(if s.timestamps { s.tsval as i64 } else { -1 });
            p.tsecr.push(if s.timestamps { s.tsecr as i64 } else { -1 });
        }
    }

    /// The report: one JSON record per connection, and the reader's counters.
    pub fn report(self) -> Value {
        self.report_with_packets().0
    }

    /// The report, and the per-packet table (with `with_packets`) with its connections numbered
    /// as the report's and its directions from side a.
    pub fn report_with_packets(mut self) -> (Value, Option<Packets>) {
        let mut all = std::mem::take(&mut self.done);
        all.append(&mut self.conns);
        all.sort_by_key(|c| c.first_ns);
        let rows: Vec<Value> = all.iter().enumerate().map(|(i, c)| conn_row(i, c)).collect();
        let pkts = self.pkts.take().map(|mut p| {
            // serial -> (report number, whether key side 0 is side a)
            let mut map = vec![(0u32, true); all.len()];
            for (i, c) in all.iter().enumerate() {
                map[c.serial as usize] = (i as u32, c.a_is_first);
            }
            p.dir = p.conn.iter().zip(&p.key_dir).map(|(&s, &kd)| if (kd == 0) == map[s as usize].1 { 0 } else { 1 }).collect();
            for s in p.conn.iter_mut() {
                *s = map[*s as usize].0;
            }
            p.key_dir = Vec::new();
            *p
        });
        let r = &self.reader;
        let mut skipped = Map::new();
        let mut offsets = Map::new();
        for (i, k) in Skip::ALL.iter().enumerate() {
            skipped.insert(k.name().into(), json!(r.skipped[i]));
            if let Some(o) = r.first_skip_offset[i] {
                offsets.insert(k.name().into(), json!(o));
            }
        }
        let v = json!({
            "reader": {
                "format": r.format,
                "packets": r.packets,
                "tcp_packets": r.tcp_packets,
                "skipped": skipped,
                "first_skip_offset": offsets,
                "linktypes": r.linktypes,
                "first_s": r.first_ns.map(secs),
                "last_s": r.last_ns.map(secs),
                "connections": rows.len(),
                "stopped": r.stopped.as_ref().map(|e| json!({"offset": e.offset, "message": e.message})),
            },
            "columns": columns(),
            "connections": rows,
        });
        (v, pkts)
    }
}

/// The names of a report's per-connection columns, in order (also for a capture without any).
pub fn columns() -> Vec<String> {
    let c = Conn { serial: 0, key: Key((0, 0), (0, 0)), a_is_first: true, ipv6: false, first_ns: 0, last_ns: 0, d: [Dir::default(), Dir::default()], handshake_rtt_ns: None, min_rtt_ns: None };
    match conn_row(0, &c) {
        Value::Object(m) => m.keys().cloned().collect(),
        _ => unreachable!("a row is an object"),
    }
}

/// Segments handed from the reading thread to the bookkeeping thread at a time.
const BATCH: usize = 4096;

/// Read and decode packets into `batch` until it is full (returns true) or the capture ends
/// (false), counting what the reader sees in `rs`.
fn next_batch<R: Read>(rd: &mut CaptureReader<R>, rs: &mut ReaderStats, batch: &mut Vec<TcpSeg>) -> Result<bool, TraceError> {
    while batch.len() < BATCH {
        let Some(f) = rd.next_frame()? else { return Ok(false) };
        rs.packets += 1;
        if !rs.linktypes.contains(&f.linktype) {
            rs.linktypes.push(f.linktype);
        }
        rs.first_ns.get_or_insert(f.ts_ns);
        rs.last_ns = Some(f.ts_ns);
        // Decoded in place: the segment is not copied.
        batch.push(TcpSeg::default());
        let last = batch.len() - 1;
        match decode_into(&f, &mut batch[last]) {
            Ok(()) => rs.tcp_packets += 1,
            Err(k) => {
                batch.pop();
                let i = Skip::ALL.iter().position(|x| *x == k).unwrap_or(0);
                rs.skipped[i] += 1;
                rs.first_skip_offset[i].get_or_insert(f.offset);
            }
        }
    }
    Ok(true)
}

fn intervals(times: &[i64]) -> Vec<f64> {
    times.windows(2).map(|w| secs(w[1] - w[0])).collect()
}

fn dir_fields(m: &mut Map<String, Value>, p: &str, d: &Dir) {
    let s = &d.s;
    let mut put = |k: &str, v: Value| {
        m.insert(format!("{p}{k}"), v);
    };
    put("segs", json!(s.segs));
    put("ip_bytes", json!(s.ip_bytes));
    put("data_segs", json!(s.data_segs));
    put("data_bytes", json!(s.data_bytes));
    put("unique_bytes", json!(s.unique_bytes));
    put("rexmt_segs", json!(s.rexmt_segs));
    put("rexmt_bytes", json!(s.rexmt_bytes));
    put("dup_segs", json!(s.dup_segs));
    put("ooo_segs", json!(s.ooo_segs));
    put("above_hole_segs", json!(s.above_hole_segs));
    put("late_fill_segs", json!(s.late_fill_segs));
    put("pure_acks", json!(s.pure_acks));
    put("dup_acks", json!(s.dup_acks));
    put("sack_segs", json!(s.sack_segs));
    put("sack_blocks", json!(s.sack_blocks));
    put("syns", json!(s.syns));
    put("fins", json!(s.fins));
    put("rsts", json!(s.rsts));
    put("mss", json!(s.mss));
    put("window_max", json!(s.window_max));
    put("rtt_samples", json!(s.rtt_samples));
    let n = s.rtt_samples;
    put("rtt_min_s", json!((n > 0).then(|| secs(s.rtt_min_ns))));
    put("rtt_avg_s", json!((n > 0).then(|| s.rtt_sum_ns as f64 / n as f64 / 1e9)));
    put("rtt_max_s", json!((n > 0).then(|| secs(s.rtt_max_ns))));
    let iw = d.syn_seen && s.data_segs > 0;
    put("iw_segs", json!(iw.then_some(s.iw_segs)));
    put("iw_bytes", json!(iw.then_some(s.iw_bytes)));
    put("loss_events", json!(s.loss_events));
    put("first_data_s", json!(s.first_data_ns.map(secs)));
    put("last_data_s", json!(s.last_data_ns.map(secs)));
    put("data_complete_s", json!(if d.contiguous() { s.complete_ns.map(secs) } else { None }));
    put("acked_s", json!(s.acked_ns.map(secs)));
}

/// Loss events of the handshake: retransmitted SYNs and SYN-ACKs grouped into rounds, one loss
/// each. The active opener resends its SYN only on its timer, so its first SYN interval is its
/// initial RTO; retransmissions of either kind that follow a round's first one by less than half
/// that RTO belong to the round (a SYN-ACK answering a retransmitted SYN, a SYN-ACK sent by the
/// passive side's own timer as the SYN crosses it). Without a retransmitted SYN every SYN-ACK
/// retransmission is the passive side's timer: one round each.
fn handshake_losses(a: &DirStats, b: &DirStats) -> u64 {
    let (syn_retx, synack_retx) = (a.syns.saturating_sub(1), b.syns.saturating_sub(1));
    // Beyond the times kept, each retransmission counts as its own event.
    let kept = |d: &DirStats| d.syns.min(d.syn_times.len() as u64).saturating_sub(1);
    let beyond = (syn_retx - kept(a)) + (synack_retx - kept(b));
    let window = match a.syn_times.as_slice() {
        [t0, t1, ..] => (t1 - t0) / 2,
        _ => 0,
    };
    let mut rx: Vec<i64> = a.syn_times.iter().skip(1).chain(b.syn_times.iter().skip(1)).copied().collect();
    rx.sort_unstable();
    let mut events = 0;
    let mut round: Option<i64> = None; // when the current round's first retransmission was seen
    for t in rx {
        match round {
            Some(r) if window > 0 && t - r < window => {}
            _ => {
                events += 1;
                round = Some(t);
            }
        }
    }
    events + beyond
}

/// Where the capture was taken, judged from the handshake: near the data sender when the data
/// sender's SYN (or SYN-ACK) waits about one RTT for its answer while its peer answers at once
/// ("sender"), the other way round ("receiver"), neither ("middle"); None without a handshake
/// seen once each way. At the receiver the data direction's RTT samples are its ACK delay and
/// its initial window is cut at the first ACK, so the report says which it is.
fn vantage(c: &Conn, a: &Dir, b: &Dir, a_sends: bool) -> Option<&'static str> {
    let hs = c.handshake_rtt_ns?;
    let (&t0, &t1) = (a.s.syn_times.first()?, b.s.syn_times.first()?);
    if a.s.syns != 1 || b.s.syns != 1 || t1 < t0 || hs < t1 - t0 {
        return None;
    }
    // a's wait (SYN to SYN-ACK) and b's wait (SYN-ACK to the ACK of it).
    let (wait_a, wait_b) = (t1 - t0, hs - (t1 - t0));
    let near_a = wait_a >= 2 * wait_b;
    let near_b = wait_b >= 2 * wait_a;
    Some(match (near_a, near_b) {
        (true, _) if a_sends => "sender",
        (true, _) => "receiver",
        (_, true) if a_sends => "receiver",
        (_, true) => "sender",
        _ => "middle",
    })
}

fn conn_row(i: usize, c: &Conn) -> Value {
    let (ai, bi) = if c.a_is_first { (0, 1) } else { (1, 0) };
    let (ea, eb) = if c.a_is_first { (c.key.0, c.key.1) } else { (c.key.1, c.key.0) };
    let (a, b) = (&c.d[ai], &c.d[bi]);
    let mut m = Map::new();
    m.insert("conn".into(), json!(i));
    let show = |e: Endpoint| format!("{}:{}", IpAddr16(e.0.to_be_bytes()), e.1);
    m.insert("a".into(), json!(show(ea)));
    m.insert("b".into(), json!(show(eb)));
    m.insert("ip_version".into(), json!(if c.ipv6 { 6 } else { 4 }));
    m.insert("first_s".into(), json!(secs(c.first_ns)));
    m.insert("last_s".into(), json!(secs(c.last_ns)));
    m.insert("duration_s".into(), json!(secs(c.last_ns - c.first_ns)));
    m.insert("syn_seen".into(), json!(a.syn_seen));
    m.insert("fin_seen".into(), json!(a.s.fins > 0 || b.s.fins > 0));
    m.insert("rst_seen".into(), json!(a.s.rsts > 0 || b.s.rsts > 0));
    // Handshake: SYNs from a (pure SYNs), SYN-ACKs from b.
    let syn_iv = intervals(&a.s.syn_times);
    let synack_iv = intervals(&b.s.syn_times);
    m.insert("syn_retransmits".into(), json!(a.s.syns.saturating_sub(1)));
    m.insert("synack_retransmits".into(), json!(b.s.syns.saturating_sub(1)));
    m.insert("syn_rto_s".into(), json!(syn_iv.first()));
    m.insert("syn_backoff".into(), json!((syn_iv.len() >= 2 && syn_iv[0] > 0.0).then(|| syn_iv[1] / syn_iv[0])));
    m.insert("synack_rto_s".into(), json!(synack_iv.first()));
    m.insert("synack_backoff".into(), json!((synack_iv.len() >= 2 && synack_iv[0] > 0.0).then(|| synack_iv[1] / synack_iv[0])));
    m.insert("syn_intervals_s".into(), json!(syn_iv));
    m.insert("synack_intervals_s".into(), json!(synack_iv));
    m.insert("handshake_rtt_s".into(), json!(c.handshake_rtt_ns.map(secs)));
    m.insert("sack_permitted".into(), json!(a.s.sack_permitted && b.s.sack_permitted));
    m.insert("timestamps".into(), json!(a.s.timestamps && b.s.timestamps));
    // The data direction: the one that carried more unique bytes (a on a tie).
    let (dname, d, o) = if b.s.unique_bytes > a.s.unique_bytes { ("b2a", b, a) } else { ("a2b", a, b) };
    m.insert("data_dir".into(), json!(dname));
    let unique = d.s.unique_bytes;
    m.insert("unique_bytes".into(), json!(unique));
    m.insert("rexmt_segs".into(), json!(d.s.rexmt_segs));
    m.insert("rexmt_bytes".into(), json!(d.s.rexmt_bytes));
    m.insert("iw_segs".into(), json!((d.syn_seen && d.s.data_segs > 0).then_some(d.s.iw_segs)));
    m.insert("dup_acks".into(), json!(o.s.dup_acks));
    let loss = a.s.loss_events + b.s.loss_events + handshake_losses(&a.s, &b.s);
    m.insert("loss_events".into(), json!(loss));
    m.insert("vantage".into(), json!(vantage(c, a, b, dname == "a2b")));
    m.insert("rtt_avg_s".into(), json!((d.s.rtt_samples > 0).then(|| d.s.rtt_sum_ns as f64 / d.s.rtt_samples as f64 / 1e9)));
    let transfer = d.s.acked_ns.filter(|_| unique > 0).map(|t| t - c.first_ns);
    m.insert("transfer_time_s".into(), json!(transfer.map(secs)));
    let span = transfer.unwrap_or(c.last_ns - c.first_ns);
    m.insert("throughput_bps".into(), json!((span > 0).then(|| unique as f64 * 8.0 / secs(span))));
    dir_fields(&mut m, "a2b_", a);
    dir_fields(&mut m, "b2a_", b);
    Value::Object(m)
}

/// Analyse a capture from any reader.
pub fn analyze<R: Read>(r: R) -> Result<Value, TraceError> {
    let mut a = Analyzer::new();
    a.read(r)?;
    Ok(a.report())
}

/// Analyse a capture file.
pub fn analyze_path(path: &str) -> Result<Value, TraceError> {
    analyze(open(path)?)
}

fn open(path: &str) -> Result<std::fs::File, TraceError> {
    std::fs::File::open(path).map_err(|e| TraceError { offset: 0, message: format!("cannot open {path}: {e}") })
}

/// Analyse a capture file as far as it can be read (`Analyzer::read_lenient`), with the
/// per-packet table if `packets`.
pub fn analyze_path_lenient(path: &str, packets: bool) -> Result<(Value, Option<Packets>), TraceError> {
    let mut a = if packets { Analyzer::with_packets() } else { Analyzer::new() };
    a.read_lenient(open(path)?)?;
    Ok(a.report_with_packets())
}
