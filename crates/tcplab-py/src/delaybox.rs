//! The testbed's delay box: a small network emulator between real hosts (docs/testbed.md).
//!
//! It runs in the middle network namespace of `tcplab testbed run`, one veth port per host,
//! reading Ethernet frames from each port (AF_PACKET sockets opened by the caller, who passes
//! their file descriptors) and writing each to the port of its destination MAC after it has
//! crossed the link directions of its path, each modelled as the simulator models a link
//! direction (crates/tcplab-core/src/net/link.rs): a drop-tail queue (a limit in packets and/or
//! bytes, counting only the packets that wait), a transmitter at the direction's rate (counting
//! IP bytes, the frame less its 14-byte Ethernet header, as the simulator counts `wire_bytes`),
//! then the propagation delay. A rate of 0 means no transmitter (the frame passes at once: the
//! rate is then left to tc's tbf on the output port).
//!
//! Chosen data segments are dropped by their sequence number as they enter the box (`drops`):
//! the box learns each connection's initial sequence number from its SYN (or SYN-ACK) and drops
//! the first transmission of the segment that carries each given byte offset of the data
//! (offset 0: the first data byte; with full-sized segments, the segment that starts there), so
//! a drop stays on the same segment whatever was resent before it, anywhere in the transfer. A
//! retransmission of it passes.
//!
//! The stages are driven by one event queue in time order, so frames from different ports that
//! meet at a shared direction (a dumbbell's bottleneck) are queued in the order they reach it.
//! Readers are one thread per port (blocking reads, stamped on return); the main thread waits
//! for the next event or frame and writes each frame when its time comes. How late the writes
//! are against their scheduled times is counted and, with a stats path, written out about once
//! a quarter of a second (JSON), so that the box's accuracy can be measured (docs/testbed.md).

use serde::Deserialize;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::FromRawFd;
use std::sync::mpsc;
use std::time::{Duration, Instant};

#[derive(Deserialize)]
struct LinkSpec {
    rate_bps: u64,
    delay_ns: u64,
    #[serde(default)]
    limit_pkts: Option<u64>,
    #[serde(default)]
    limit_bytes: Option<u64>,
    /// Step CE marking (the simulator's `mark_threshold`, DCTCP's K): packets, or bytes, waiting.
    #[serde(default)]
    mark_pkts: Option<u64>,
    #[serde(default)]
    mark_bytes: Option<u64>,
}

#[derive(Deserialize)]
struct RouteSpec {
    #[serde(rename = "in")]
    in_port: usize,
    dst: String,
    path: Vec<usize>,
    out: usize,
}

/// Data segments to drop by sequence number: those sent from `src` (an IPv4 address) on a
/// connection whose source port (`port_field` "sport") or destination port ("dport") is one of
/// `ports`, starting at one of `offsets` (bytes after the SYN's sequence number + 1).
#[derive(Deserialize)]
struct SeqDropSpec {
    src: String,
    ports: Vec<u16>,
    port_field: String,
    offsets: Vec<u64>,
}

#[derive(Deserialize)]
pub struct BoxSpec {
    ports: Vec<i32>,
    links: Vec<LinkSpec>,
    routes: Vec<RouteSpec>,
    #[serde(default)]
    drops: Vec<SeqDropSpec>,
    #[serde(default)]
    stats: Option<String>,
}

/// One link direction's state: the transmissions scheduled (start, end, IP bytes) that have not
/// started yet are the waiting packets.
struct Dir {
    spec: LinkSpec,
    busy_until: Instant,
    waiting: VecDeque<(Instant, u64)>,
    waiting_bytes: u64,
    sent: u64,
    dropped: u64,
    marked: u64,
}

struct Ev {
    t: Instant,
    seq: u64,
    route: usize,
    hop: usize,
    frame: Vec<u8>,
}
impl PartialEq for Ev {
    fn eq(&self, o: &Self) -> bool {
        self.t == o.t && self.seq == o.seq
    }
}
impl Eq for Ev {}
impl PartialOrd for Ev {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Ev {
    // A max-heap: the earliest (then the first scheduled) on top.
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        o.t.cmp(&self.t).then(o.seq.cmp(&self.seq))
    }
}

fn parse_mac(s: &str) -> Result<[u8; 6], String> {
    let v: Vec<u8> = s.split(':').map(|x| u8::from_str_radix(x, 16)).collect::<Result<_, _>>().map_err(|_| format!("bad MAC address {s:?}"))?;
    v.try_into().map_err(|_| format!("bad MAC address {s:?}"))
}

/// What the box reads of a TCP/IPv4 frame: addresses, ports, sequence number, SYN, payload bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct TcpView {
    src: [u8; 4],
    sport: u16,
    dport: u16,
    seq: u32,
    syn: bool,
    payload: usize,
}

/// Parse an Ethernet II / IPv4 / TCP frame (no VLAN tags: the testbed's veths carry none).
fn tcp_view(f: &[u8]) -> Option<TcpView> {
    if f.len() < 14 + 20 || f[12..14] != [0x08, 0x00] {
        return None;
    }
    let ip = &f[14..];
    let ihl = ((ip[0] & 0x0f) as usize) * 4;
    if ip[0] >> 4 != 4 || ihl < 20 || ip[9] != 6 {
        return None;
    }
    let total = u16::from_be_bytes([ip[2], ip[3]]) as usize;
    let tcp = ip.get(ihl..total.min(ip.len()))?;
    if tcp.len() < 20 {
        return None;
    }
    let doff = ((tcp[12] >> 4) as usize) * 4;
    Some(TcpView {
        src: [ip[12], ip[13], ip[14], ip[15]],
        sport: u16::from_be_bytes([tcp[0], tcp[1]]),
        dport: u16::from_be_bytes([tcp[2], tcp[3]]),
        seq: u32::from_be_bytes([tcp[4], tcp[5], tcp[6], tcp[7]]),
        syn: tcp[13] & 0x02 != 0,
        payload: total.saturating_sub(ihl + doff),
    })
}

/// The sequence-number drops (`BoxSpec::drops`) and what they have learnt and done.
struct SeqDrops {
    specs: Vec<([u8; 4], Vec<u16>, bool, Vec<u64>)>,
    /// Per connection (src, sport, dport): its ISN, and the offsets already dropped once.
    conns: HashMap<([u8; 4], u16, u16), (u32, Vec<u64>)>,
    dropped: u64,
}

impl SeqDrops {
    fn new(specs: Vec<SeqDropSpec>) -> Result<SeqDrops, String> {
        let mut out = Vec::new();
        for (i, d) in specs.into_iter().enumerate() {
            let ip: std::net::Ipv4Addr = d.src.parse().map_err(|_| format!("drops[{i}].src: not an IPv4 address: {:?}", d.src))?;
            let by_sport = match d.port_field.as_str() {
                "sport" => true,
                "dport" => false,
                o => return Err(format!("drops[{i}].port_field: {o:?} (sport or dport)")),
            };
            out.push((ip.octets(), d.ports, by_sport, d.offsets));
        }
        Ok(SeqDrops { specs: out, conns: HashMap::new(), dropped: 0 })
    }

    /// Whether to drop this frame (the first transmission of a chosen segment).
    fn drop(&mut self, frame: &[u8]) -> bool {
        if self.specs.is_empty() {
            return false;
        }
        let Some(t) = tcp_view(frame) else { return false };
        // Every rule of this connection counts: a flow with several dropped segments has one
        // rule per segment (plan.py), and the first rule's offsets alone would drop only one.
        let rules = |(src, ports, by_sport, _): &&([u8; 4], Vec<u16>, bool, Vec<u64>)| *src == t.src && ports.contains(if *by_sport { &t.sport } else { &t.dport });
        if !self.specs.iter().any(|r| rules(&r)) {
            return false;
        }
        let key = (t.src, t.sport, t.dport);
        if t.syn {
            // A new connection (or its SYN again): data starts at ISN + 1.
            self.conns.insert(key, (t.seq, Vec::new()));
            return false;
        }
        if t.payload == 0 {
            return false;
        }
        let Some((isn, done)) = self.conns.get_mut(&key) else { return false };
        let off = t.seq.wrapping_sub(*isn).wrapping_sub(1) as u64;
        let end = off + t.payload as u64;
        // The chosen offsets this frame carries. A segment normally starts at a chosen offset;
        // when the kernel has cut one short (an skb ended early while the sender waited for
        // memory), the later segments start elsewhere, and the drop goes to the first segment
        // that carries the chosen byte, so the pattern is kept to the end of the transfer.
        let mut hit: Vec<u64> = Vec::new();
        for (_, _, _, offsets) in self.specs.iter().filter(|r| rules(r)) {
            hit.extend(offsets.iter().copied().filter(|&o| off <= o && o < end));
        }
        // A frame carrying a byte already dropped once is its retransmission: it passes.
        if !hit.is_empty() && !hit.iter().any(|o| done.contains(o)) {
            done.extend(hit);
            self.dropped += 1;
            return true;
        }
        false
    }
}

/// Lateness of the writes against their scheduled times, in microseconds.
#[derive(Default)]
struct Late {
    n: u64,
    sum_us: f64,
    max_us: f64,
    hist: Vec<u64>, // 10 µs buckets up to 10 ms, the last one everything above
}
impl Late {
    fn add(&mut self, us: f64) {
        if self.hist.is_empty() {
            self.hist = vec![0; 1001];
        }
        self.n += 1;
        self.sum_us += us;
        self.max_us = self.max_us.max(us);
        self.hist[((us / 10.0) as usize).min(1000)] += 1;
    }
    fn quantile(&self, q: f64) -> f64 {
        let want = (q * self.n as f64).ceil() as u64;
        let mut c = 0;
        for (i, k) in self.hist.iter().enumerate() {
            c += k;
            if c >= want.max(1) {
                return (i as f64 + 1.0) * 10.0;
            }
        }
        f64::NAN
    }
}

/// Run the box until a port fails (the namespace is deleted) — normally until the process is
/// killed. Returns an error message for a bad specification or a failed port.
pub fn run(spec: BoxSpec) -> Result<(), String> {
    let n = spec.ports.len();
    let mut routes: HashMap<(usize, [u8; 6]), usize> = HashMap::new();
    for (i, r) in spec.routes.iter().enumerate() {
        if r.in_port >= n || r.out >= n || r.path.iter().any(|&l| l >= spec.links.len()) {
            return Err(format!("route {i}: a port or link index out of range"));
        }
        routes.insert((r.in_port, parse_mac(&r.dst)?), i);
    }
    let mut seq_drops = SeqDrops::new(spec.drops)?;
    let (tx, rx) = mpsc::channel::<(Instant, usize, Vec<u8>)>();
    let mut outs = Vec::with_capacity(n);
    for (p, &fd) in spec.ports.iter().enumerate() {
        // SAFETY: the caller hands over open AF_PACKET sockets it no longer uses.
        let f = unsafe { File::from_raw_fd(fd) };
        let mut rd = f.try_clone().map_err(|e| format!("port {p}: {e}"))?;
        outs.push(f);
        let tx = tx.clone();
        std::thread::spawn(move || {
            let mut buf = vec![0u8; 65536];
            while let Ok(k) = rd.read(&mut buf) {
                if tx.send((Instant::now(), p, buf[..k].to_vec())).is_err() {
                    break;
                }
            }
        });
    }
    drop(tx);
    let now = Instant::now();
    let mut dirs: Vec<Dir> = spec
        .links
        .into_iter()
        .map(|s| Dir { spec: s, busy_until: now, waiting: VecDeque::new(), waiting_bytes: 0, sent: 0, dropped: 0, marked: 0 })
        .collect();
    let mut heap: BinaryHeap<Ev> = BinaryHeap::new();
    let mut seq = 0u64;
    let mut late = Late::default();
    let mut unrouted = 0u64;
    let mut last_stats = Instant::now();
    loop {
        let got = match heap.peek() {
            // Idle: wake up now and then to write the statistics.
            None => match rx.recv_timeout(Duration::from_millis(500)) {
                Ok(x) => Some(x),
                Err(mpsc::RecvTimeoutError::Timeout) => None,
                Err(mpsc::RecvTimeoutError::Disconnected) => return Err("every port closed".into()),
            },
            Some(e) => {
                let wait = e.t.saturating_duration_since(Instant::now());
                if wait.is_zero() {
                    rx.try_recv().ok()
                } else {
                    match rx.recv_timeout(wait) {
                        Ok(x) => Some(x),
                        Err(mpsc::RecvTimeoutError::Timeout) => None,
                        Err(mpsc::RecvTimeoutError::Disconnected) => return Err("every port closed".into()),
                    }
                }
            }
        };
        if let Some((t, p, frame)) = got.filter(|(_, _, f)| !seq_drops.drop(f)) {
            let dst: Option<[u8; 6]> = frame.get(..6).and_then(|d| d.try_into().ok());
            match dst.and_then(|d| routes.get(&(p, d))) {
                Some(&r) => {
                    seq += 1;
                    heap.push(Ev { t, seq, route: r, hop: 0, frame });
                }
                None => unrouted += 1, // broadcasts (the hosts have static neighbours) and strangers
            }
        }
        // Every event that is due, in time order.
        while heap.peek().map_or(false, |e| e.t <= Instant::now()) {
            let mut e = heap.pop().expect("peeked");
            let r = &spec.routes[e.route];
            if e.hop == r.path.len() {
                let lateness = Instant::now().saturating_duration_since(e.t);
                late.add(lateness.as_secs_f64() * 1e6);
                // A failed write (a full device queue) is a drop, as on a real wire.
                let _ = outs[r.out].write(&e.frame);
                continue;
            }
            let d = &mut dirs[r.path[e.hop]];
            let t = e.t;
            while d.waiting.front().map_or(false, |&(start, _)| start <= t) {
                let (_, b) = d.waiting.pop_front().expect("front");
                d.waiting_bytes -= b;
            }
            let ip_bytes = (e.frame.len() as u64).saturating_sub(14);
            let start = d.busy_until.max(t);
            let delay = Duration::from_nanos(d.spec.delay_ns);
            if d.spec.rate_bps == 0 {
                e.t = t + delay;
            } else {
                // RFC 8257 §3.1, as the simulator's `LinkDir::step_mark`: an ECN-capable arrival
                // that finds at least K waiting (the packet on the wire not counted) is marked.
                let waiting = if start > t { d.waiting.len() as u64 } else { 0 };
                let waiting_bytes = if start > t { d.waiting_bytes } else { 0 };
                let mark = d.spec.mark_pkts.is_some_and(|k| waiting >= k) || d.spec.mark_bytes.is_some_and(|k| waiting_bytes >= k);
                if start > t {
                    // It would wait: the drop-tail limits count the waiting packets only.
                    let over_p = d.spec.limit_pkts.map_or(false, |l| d.waiting.len() as u64 + 1 > l);
                    let over_b = d.spec.limit_bytes.map_or(false, |l| d.waiting_bytes + ip_bytes > l);
                    if over_p || over_b {
                        d.dropped += 1;
                        continue;
                    }
                    d.waiting.push_back((start, ip_bytes));
                    d.waiting_bytes += ip_bytes;
                }
                if mark && tcplab_core::trace::wire::mark_ce(&mut e.frame) {
                    d.marked += 1;
                }
                let tx_ns = (ip_bytes as u128 * 8 * 1_000_000_000 / d.spec.rate_bps as u128) as u64;
                d.busy_until = start + Duration::from_nanos(tx_ns);
                e.t = d.busy_until + delay;
            }
            d.sent += 1;
            e.hop += 1;
            seq += 1;
            e.seq = seq;
            heap.push(e);
        }
        if let Some(path) = &spec.stats {
            if last_stats.elapsed() >= Duration::from_millis(250) {
                last_stats = Instant::now();
                let links: Vec<_> = dirs.iter().map(|d| serde_json::json!({"sent": d.sent, "dropped": d.dropped, "marked": d.marked})).collect();
                let mean = if late.n > 0 { late.sum_us / late.n as f64 } else { 0.0 };
                let v = serde_json::json!({
                    "frames": late.n, "unrouted": unrouted, "links": links, "dropped_by_seq": seq_drops.dropped,
                    "late_us": {"mean": mean, "p50": late.quantile(0.5), "p99": late.quantile(0.99), "max": late.max_us},
                });
                let tmp = format!("{path}.tmp");
                if std::fs::write(&tmp, v.to_string()).is_ok() {
                    let _ = std::fs::rename(&tmp, path);
                }
            }
        }
    }
}

