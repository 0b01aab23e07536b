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
//! Readers are one thread per port (blocking reads); each frame's time of arrival is the
//! kernel's receive timestamp (`SO_TIMESTAMPNS`), not the read's return, so a reader woken late
//! (a loaded machine) does not delay the frame's schedule. The main thread waits for the next
//! event or frame and writes each frame when its time comes, waking early by its own measured
//! lateness, so the writes are centred on their scheduled times. How late the
//! writes are and how long the frames waited to be read are counted and, with a stats path,
//! written out about once a quarter of a second (JSON, by a thread of its own: the file's write
//! never holds a frame), so that the box's accuracy can be measured (docs/testbed.md).

use serde::Deserialize;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::fs::File;
use std::io::Write;
use std::os::fd::{AsRawFd, FromRawFd};
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

/// A socket's receive timestamp (`SCM_TIMESTAMPNS`) as an `Instant`, with how long ago it was.
///
/// The stamp is the skb's `tstamp`: wall-clock time (CLOCK_REALTIME) taken as the frame entered
/// the box's veth (`netif_rx`), except for a TCP skb that crossed from a host's namespace with its
/// departure time still set (`skb_set_delivery_time(.., SKB_CLOCK_MONOTONIC)` in
/// `__tcp_transmit_skb`; `skb_clear_tstamp` keeps a monotonic delivery time across namespaces and
/// `__sock_recv_timestamp` reports it as it is). The two clocks are decades apart, so the nearer
/// one is the stamp's. A stamp in the future (a paced departure) counts as now; one neither clock
/// explains is ignored (the read's return is used).
fn stamp_instant(ts: Option<libc::timespec>) -> (Instant, Duration) {
    let now = Instant::now();
    let Some(ts) = ts else { return (now, Duration::ZERO) };
    let ns = |t: &libc::timespec| t.tv_sec as i128 * 1_000_000_000 + t.tv_nsec as i128;
    let clock = |id| {
        let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: a valid clock id and a valid out pointer.
        unsafe { libc::clock_gettime(id, &mut t) };
        ns(&t)
    };
    let stamp = ns(&ts);
    const PLAUSIBLE: i128 = 10_000_000_000;
    let age = [libc::CLOCK_REALTIME, libc::CLOCK_MONOTONIC].into_iter().map(|id| clock(id) - stamp).find(|a| a.abs() < PLAUSIBLE);
    match age {
        Some(a) if a > 0 => {
            let d = Duration::from_nanos(a as u64);
            (now.checked_sub(d).unwrap_or(now), d)
        }
        _ => (now, Duration::ZERO),
    }
}

/// Read frames from an AF_PACKET socket with their kernel receive timestamps, sending each to
/// the main thread, until the socket fails or the main thread is gone.
fn read_port(fd: i32, port: usize, tx: mpsc::Sender<(Instant, usize, Vec<u8>, Duration)>) {
    let on: libc::c_int = 1;
    // SAFETY: setsockopt on a descriptor this thread reads, with a c_int option value.
    let stamped = unsafe { libc::setsockopt(fd, libc::SOL_SOCKET, libc::SO_TIMESTAMPNS, &on as *const _ as *const libc::c_void, std::mem::size_of::<libc::c_int>() as u32) } == 0;
    let mut buf = vec![0u8; 65536];
    let mut ctl = [0u64; 16]; // 128 bytes, aligned for cmsghdr
    loop {
        let mut iov = libc::iovec { iov_base: buf.as_mut_ptr() as *mut libc::c_void, iov_len: buf.len() };
        // SAFETY: msghdr is plain data; every pointer set below outlives the call.
        let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = ctl.as_mut_ptr() as *mut libc::c_void;
        msg.msg_controllen = std::mem::size_of_val(&ctl);
        // SAFETY: fd is an open socket; msg points at live buffers.
        let k = unsafe { libc::recvmsg(fd, &mut msg, 0) };
        if k < 0 {
            if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return;
        }
        let mut ts = None;
        if stamped {
            // SAFETY: the CMSG macros walk the control buffer the kernel filled (msg_controllen).
            unsafe {
                let mut c = libc::CMSG_FIRSTHDR(&msg);
                while !c.is_null() {
                    if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SCM_TIMESTAMPNS {
                        ts = Some(std::ptr::read_unaligned(libc::CMSG_DATA(c) as *const libc::timespec));
                    }
                    c = libc::CMSG_NXTHDR(&msg, c);
                }
            }
        }
        let (t, age) = stamp_instant(ts);
        if tx.send((t, port, buf[..k as usize].to_vec(), age)).is_err() {
            return;
        }
    }
}

/// The most the main thread wakes before a write's time (its measured lateness is usually
/// 20–40 µs; a burst of load must not make it send frames far too early).
const MAX_LEAD: Duration = Duration::from_micros(200);

/// After this long without a write the box's thread has slept and its CPU idled, and waking
/// from that takes longer than the running lead (`lead`) allows: the first write after a silence
/// (a handshake's SYN and SYN-ACK, a flight after an idle round trip) left 0.1-0.2 ms late where
/// the next ones kept to their time. Before such a write the main thread wakes `COLD_LEAD` early
/// and polls its channel until the write is due.
const COLD_AFTER: Duration = Duration::from_millis(2);
const COLD_LEAD: Duration = Duration::from_micros(1000);

/// The event is a write (its route's last hop done) that follows `COLD_AFTER` or more without one.
fn is_cold(e: &Ev, routes: &[RouteSpec], last_write: Instant) -> bool {
    e.hop == routes[e.route].path.len() && e.t.saturating_duration_since(last_write) >= COLD_AFTER
}

/// Lateness of the writes against their scheduled times, in microseconds.
#[derive(Default)]
struct Late {
    n: u64,
    sum_us: f64,
    max_us: f64,
    /// When the largest came (wall clock, seconds since the Unix epoch, as the captures' stamps;
    /// 0 while none was above 0), so that a stall can be placed in the run.
    max_at: f64,
    hist: Vec<u64>, // 10 µs buckets up to 10 ms, the last one everything above
}
impl Late {
    fn add(&mut self, us: f64) {
        if self.hist.is_empty() {
            self.hist = vec![0; 1001];
        }
        self.n += 1;
        self.sum_us += us;
        if us > self.max_us {
            self.max_us = us;
            self.max_at = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64());
        }
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
    let (tx, rx) = mpsc::channel::<(Instant, usize, Vec<u8>, Duration)>();
    let mut outs = Vec::with_capacity(n);
    for (p, &fd) in spec.ports.iter().enumerate() {
        // SAFETY: the caller hands over open AF_PACKET sockets it no longer uses.
        let f = unsafe { File::from_raw_fd(fd) };
        let rd = f.try_clone().map_err(|e| format!("port {p}: {e}"))?;
        outs.push(f);
        let tx = tx.clone();
        std::thread::spawn(move || {
            // The reader keeps its File (the descriptor stays open while it reads).
            read_port(rd.as_raw_fd(), p, tx);
            drop(rd);
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
    // The writes after a silence (`COLD_AFTER`), counted in `late` too.
    let mut cold_late = Late::default();
    // How long frames waited between the kernel's stamp and the reader's return.
    let mut read_lag = Late::default();
    // The main thread's own lateness (wake-up and write), a running mean it wakes early by.
    let mut lead = Duration::ZERO;
    let mut unrouted = 0u64;
    let mut last_stats = Instant::now();
    // The statistics file is written by a thread of its own: a write and a rename took 0.17 ms
    // in the median and up to 4.5 ms on the testbed's disk, and done on this thread they held
    // every frame due meanwhile (a frame 0.5 ms late at 10 Mb/s broke the kernel's HyStart ACK
    // train, whose ACKs must come within 2 ms of each other). This thread only formats the
    // text and hands it over; while the writer is still at the last one, the new one is skipped
    // (the next comes a quarter of a second later).
    let stats_tx = spec.stats.clone().map(|path| {
        let (tx, rx) = mpsc::sync_channel::<String>(1);
        std::thread::spawn(move || {
            // The box runs at a real-time priority (`chrt -f`), which a thread inherits: the
            // writer leaves it, so that its file work never comes before a reader's frame.
            // (Linux: pid 0 is the calling thread; a failure leaves the priority as it was.)
            let normal = libc::sched_param { sched_priority: 0 };
            unsafe { libc::sched_setscheduler(0, libc::SCHED_OTHER, &normal) };
            let tmp = format!("{path}.tmp");
            for text in rx {
                if std::fs::write(&tmp, text).is_ok() {
                    let _ = std::fs::rename(&tmp, &path);
                }
            }
        });
        tx
    });
    let mut last_write = now.checked_sub(COLD_AFTER).unwrap_or(now);
    loop {
        let got = match heap.peek() {
            // Idle: wake up now and then to write the statistics.
            None => match rx.recv_timeout(Duration::from_millis(500)) {
                Ok(x) => Some(x),
                Err(mpsc::RecvTimeoutError::Timeout) => None,
                Err(mpsc::RecvTimeoutError::Disconnected) => return Err("every port closed".into()),
            },
            Some(e) => {
                // A write after a silence: wake COLD_LEAD early, then poll (a zero wait) until it
                // is due.
                let early = if is_cold(e, &spec.routes, last_write) { lead.max(COLD_LEAD) } else { lead };
                let wait = e.t.checked_sub(early).unwrap_or(e.t).saturating_duration_since(Instant::now());
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
        if let Some((_, _, _, age)) = &got {
            read_lag.add(age.as_secs_f64() * 1e6);
        }
        if let Some((t, p, frame, _)) = got.filter(|(_, _, f, _)| !seq_drops.drop(f)) {
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
        // A write after a silence was polled for (see `COLD_AFTER`): it leaves at its time, not
        // `lead` early.
        while heap.peek().map_or(false, |e| e.t <= Instant::now() + if is_cold(e, &spec.routes, last_write) { Duration::ZERO } else { lead }) {
            let mut e = heap.pop().expect("peeked");
            let cold = is_cold(&e, &spec.routes, last_write);
            let r = &spec.routes[e.route];
            if e.hop == r.path.len() {
                let now = Instant::now();
                // Signed: a write may now leave a little before its time.
                let late_us = if now >= e.t { now.duration_since(e.t).as_secs_f64() } else { -e.t.duration_since(now).as_secs_f64() } * 1e6;
                late.add(late_us);
                if cold {
                    cold_late.add(late_us);
                } else {
                    // Each write's lateness moves the lead by a sixteenth of it (within
                    // 0..MAX_LEAD), so the writes' mean lateness settles at zero.
                    let next = lead.as_nanos() as f64 + late_us * 1e3 / 16.0;
                    lead = Duration::from_nanos(next.clamp(0.0, MAX_LEAD.as_nanos() as f64) as u64);
                }
                // A failed write (a full device queue) is a drop, as on a real wire.
                let _ = outs[r.out].write(&e.frame);
                last_write = Instant::now();
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
        if let Some(tx) = &stats_tx {
            if last_stats.elapsed() >= Duration::from_millis(250) {
                last_stats = Instant::now();
                let links: Vec<_> = dirs.iter().map(|d| serde_json::json!({"sent": d.sent, "dropped": d.dropped, "marked": d.marked})).collect();
                let mean = if late.n > 0 { late.sum_us / late.n as f64 } else { 0.0 };
                let v = serde_json::json!({
                    "frames": late.n, "unrouted": unrouted, "links": links, "dropped_by_seq": seq_drops.dropped,
                    "late_us": {"mean": mean, "p50": late.quantile(0.5), "p99": late.quantile(0.99), "max": late.max_us, "max_at": late.max_at},
                    "lead_us": lead.as_secs_f64() * 1e6,
                    "cold_late_us": {"n": cold_late.n, "mean": if cold_late.n > 0 { cold_late.sum_us / cold_late.n as f64 } else { 0.0 }, "max": cold_late.max_us},
                    "read_lag_us": {"mean": if read_lag.n > 0 { read_lag.sum_us / read_lag.n as f64 } else { 0.0 }, "p50": read_lag.quantile(0.5), "p99": read_lag.quantile(0.99), "max": read_lag.max_us, "max_at": read_lag.max_at},
                });
                let _ = tx.try_send(v.to_string());
            }
        }
    }
}

