//! Time series of a run, opt in (`[[series]]`, docs/series.md): per connection endpoint its send
//! half's state (cwnd, ssthresh, flight size, SACKed bytes, SRTT, RTTVAR, RTO, recovery state),
//! per TCP segment where it was sent and where it arrived (sequence, ACK, SACK blocks, which
//! transmission), per link direction its queue length and its drops.
//!
//! The recorder only reads: the world calls it (one branch on an `Option` at each hook, so a run
//! without `[[series]]` pays one untaken branch) after a connection handled a call, when a
//! segment is sent or delivered, when a queue changes and when a packet is dropped. Rows go into
//! columnar buffers (`Vec` per column) capped at `max_rows` per table: a table that reaches its
//! cap stops growing and says so (`truncated`), so that a long run cannot run out of memory.
//!
//! Rows are recorded where a value changes (the state after every event that changed it; the
//! values inside one event, at one instant, are not told apart) or, with `interval`, sampled:
//! the value in force at every multiple of the interval (the state at the end of that instant).

use crate::net::link::{DropReason, LinkDir};
use crate::net::{Dir, Label, Packet, PacketTag, Payload};
use crate::error::ScenarioError;
use crate::tcp::{SenderPhase, TcpConn};
use crate::units::{Duration, Time};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// Default cap on the rows of one table.
pub const DEFAULT_MAX_ROWS: u64 = 1_000_000;
/// The largest `max_rows` a scenario may ask for (a table of 10⁸ segment rows is ~6 GB).
pub const MAX_ROWS: u64 = 100_000_000;

/// What a `[[series]]` entry records.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SeriesKind {
    /// Per connection endpoint, its send half's state.
    Tcp,
    /// Per TCP segment, when it was sent and when it arrived.
    Segments,
    /// Per link direction, its queue length.
    Queue,
    /// Per dropped packet, where, why and what.
    Drops,
}

impl SeriesKind {
    pub fn name(self) -> &'static str {
        match self {
            SeriesKind::Tcp => "tcp",
            SeriesKind::Segments => "segments",
            SeriesKind::Queue => "queue",
            SeriesKind::Drops => "drops",
        }
    }
}

fn default_max_rows() -> u64 {
    DEFAULT_MAX_ROWS
}

/// One `[[series]]` entry of a scenario.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SeriesSpec {
    pub kind: SeriesKind,
    /// Sample every `interval` instead of recording every change (`tcp` and `queue` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<Duration>,
    /// Rows kept at most; the table stops there and is marked truncated.
    #[serde(default = "default_max_rows")]
    pub max_rows: u64,
    /// Only the connections of these flows and applications, by name (`tcp`, `segments`, `drops`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flows: Option<Vec<String>>,
    /// Only these link directions (`"name:a->b"`, as in the results) or links (both directions,
    /// by name) (`queue`, `drops`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub links: Option<Vec<String>>,
}

/// The names of the link directions of a network, as the world and the results name them, with
/// their link's name: (link, direction) per direction, in the world's order.
pub fn link_dirs(net: &crate::scenario::Network) -> Vec<(String, String)> {
    let mut out = Vec::with_capacity(net.links.len() * 2);
    for (i, l) in net.links.iter().enumerate() {
        let name = if l.name.is_empty() { format!("link{i}") } else { l.name.clone() };
        out.push((name.clone(), format!("{name}:{}->{}", l.a, l.b)));
        out.push((name.clone(), format!("{name}:{}->{}", l.b, l.a)));
    }
    out
}

fn listed(names: &[String], max: usize) -> String {
    let mut s = names.iter().take(max).map(|n| format!("{n:?}")).collect::<Vec<_>>().join(", ");
    if names.len() > max {
        s.push_str(", ...");
    }
    s
}

/// Which flows (by label) a filter keeps; None: all.
fn flow_mask(names: &Option<Vec<String>>, flow_names: &[String]) -> Option<Vec<bool>> {
    names.as_ref().map(|keep| flow_names.iter().map(|n| keep.contains(n)).collect())
}

/// Which link directions a filter keeps; None: all.
fn link_mask(names: &Option<Vec<String>>, dirs: &[(String, String)]) -> Option<Vec<bool>> {
    names.as_ref().map(|keep| dirs.iter().map(|(link, dir)| keep.contains(link) || keep.contains(dir)).collect())
}

#[inline]
fn kept(mask: &Option<Vec<bool>>, i: usize) -> bool {
    match mask {
        None => true,
        Some(m) => m.get(i).copied().unwrap_or(false),
    }
}

fn err<T>(path: String, message: impl Into<String>) -> Result<T, ScenarioError> {
    Err(ScenarioError { path, message: message.into() })
}

/// Check the `[[series]]` entries (the scenario's one validation boundary calls this) against the
/// names of the flows and applications (`flow_names`) and of the link directions (`link_dirs`).
pub fn validate(specs: &[SeriesSpec], flow_names: &[String], dirs: &[(String, String)]) -> Result<(), ScenarioError> {
    for (i, s) in specs.iter().enumerate() {
        let p = format!("series[{i}]");
        if let Some(names) = &s.flows {
            if s.kind == SeriesKind::Queue {
                return err(format!("{p}.flows"), "applies to kind \"tcp\", \"segments\" and \"drops\" (a queue is not a flow's)");
            }
            if names.is_empty() {
                return err(format!("{p}.flows"), "expected at least one flow or application name (leave it out for all)");
            }
            for (j, n) in names.iter().enumerate() {
                if !flow_names.contains(n) {
                    return err(format!("{p}.flows[{j}]"), format!("unknown flow or application {n:?}; they are: {}", listed(flow_names, 12)));
                }
            }
        }
        if let Some(names) = &s.links {
            if matches!(s.kind, SeriesKind::Tcp | SeriesKind::Segments) {
                return err(format!("{p}.links"), format!("applies to kind \"queue\" and \"drops\" ({:?} is per connection: choose with `flows`)", s.kind.name()));
            }
            if names.is_empty() {
                return err(format!("{p}.links"), "expected at least one link or link direction (leave it out for all)");
            }
            for (j, n) in names.iter().enumerate() {
                if !dirs.iter().any(|(l, d)| l == n || d == n) {
                    let all: Vec<String> = dirs.iter().map(|(_, d)| d.clone()).collect();
                    return err(format!("{p}.links[{j}]"), format!("unknown link or link direction {n:?}; the directions are: {}", listed(&all, 12)));
                }
            }
        }
        if let Some(j) = specs[..i].iter().position(|o| o.kind == s.kind) {
            return err(format!("{p}.kind"), format!("{:?} is recorded by series[{j}] already (one entry per kind)", s.kind.name()));
        }
        if let Some(d) = s.interval {
            if !matches!(s.kind, SeriesKind::Tcp | SeriesKind::Queue) {
                return err(format!("{p}.interval"), format!("applies to kind \"tcp\" and \"queue\" only ({:?} records events)", s.kind.name()));
            }
            if d.0 == 0 {
                return err(format!("{p}.interval"), "expected a duration > 0 (leave it out to record every change)");
            }
        }
        if !(1..=MAX_ROWS).contains(&s.max_rows) {
            return err(format!("{p}.max_rows"), format!("expected an integer from 1 to {MAX_ROWS}, got {}", s.max_rows));
        }
    }
    Ok(())
}

/// Recovery state of a send half (the `state` column).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum TcpState {
    /// cwnd < ssthresh.
    SlowStart = 0,
    /// cwnd ≥ ssthresh.
    Avoidance = 1,
    /// Fast recovery (entered on duplicate ACKs or SACK information).
    Recovery = 2,
    /// After a retransmission timeout, until what was outstanding then is acknowledged.
    Loss = 3,
    /// Everything sent is acknowledged and the application closed.
    Closed = 4,
    /// Given up after too many retransmissions.
    Failed = 5,
}

pub const TCP_STATES: [&str; 6] = ["slow_start", "avoidance", "recovery", "loss", "closed", "failed"];
pub const DROP_REASONS: [&str; 5] = ["loss", "filter", "queue", "red_early", "red_forced"];

/// A send half's state at one time (the `tcp` table's values).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TcpRow {
    pub state: TcpState,
    pub cwnd: u64,
    pub ssthresh: u64,
    pub flight: u64,
    pub sacked: u64,
    pub snd_una: u64,
    pub snd_nxt: u64,
    pub snd_max: u64,
    pub srtt: Option<Time>,
    pub rttvar: Time,
    pub rto: Time,
    pub dupacks: u32,
    /// The pacing rate, bytes/s (`TcpInfo::pacing_rate`); None before an RTT sample.
    pub pacing_rate: Option<u64>,
    /// BBR's mode (`BBR_MODES` index + 1; 0: not BBR) and bandwidth estimate, bytes/s.
    pub bbr_mode: u8,
    pub bbr_bw: Option<u64>,
}

/// BBR's modes, as the `bbr_mode` column names them (code − 1).
pub const BBR_MODES: [&str; 4] = ["startup", "drain", "probe_bw", "probe_rtt"];

impl TcpRow {
    /// The send half's state now; None before it is open for data, and while its application
    /// has given it nothing to send (the receiving end of a one-way transfer has no rows).
    pub fn of(c: &TcpConn) -> Option<TcpRow> {
        let s = &c.snd.core;
        if s.data_end <= s.data_start {
            return None;
        }
        let state = match s.phase {
            SenderPhase::Idle | SenderPhase::SynSent => return None,
            SenderPhase::Done => TcpState::Closed,
            SenderPhase::Aborted => TcpState::Failed,
            SenderPhase::Established if c.snd.rec.recovering(s) => TcpState::Recovery,
            SenderPhase::Established if s.slow_start_after_rto && s.snd_una < s.recover => TcpState::Loss,
            SenderPhase::Established if s.cwnd < s.ssthresh => TcpState::SlowStart,
            SenderPhase::Established => TcpState::Avoidance,
        };
        let m = s.cc.model();
        Some(TcpRow {
            state,
            cwnd: s.cwnd,
            ssthresh: s.ssthresh,
            flight: s.flight_size(),
            sacked: s.sb.sacked_bytes(),
            snd_una: s.snd_una,
            snd_nxt: s.snd_nxt,
            snd_max: s.snd_max,
            srtt: s.rtt.srtt(),
            rttvar: s.rtt.rttvar(),
            rto: s.rtt.rto(),
            dupacks: s.dupacks,
            pacing_rate: s.pacing_rate(),
            bbr_mode: m.map_or(0, |m| BBR_MODES.iter().position(|&n| n == m.mode).map_or(0, |i| i as u8 + 1)),
            bbr_bw: m.map(|m| m.bw),
        })
    }
}

/// Rows kept and the cap.
#[derive(Clone, Debug, Default)]
pub struct Cap {
    pub max_rows: u64,
    pub rows: u64,
    pub truncated: bool,
}

impl Cap {
    fn new(max_rows: u64) -> Cap {
        Cap { max_rows, rows: 0, truncated: false }
    }

    /// No room for another row: marks the table truncated (a row was due and is not written).
    #[inline]
    fn full(&mut self) -> bool {
        if self.rows >= self.max_rows {
            self.truncated = true;
            return true;
        }
        false
    }

    /// Room for one more row? Counts it if so; marks the table truncated if not.
    #[inline]
    fn take(&mut self) -> bool {
        if self.rows >= self.max_rows {
            self.truncated = true;
            return false;
        }
        self.rows += 1;
        true
    }
}

#[derive(Clone, Debug, Default)]
pub struct TcpCols {
    pub cap: Cap,
    pub interval: Option<Time>,
    pub time_ns: Vec<i64>,
    pub conn: Vec<u32>,
    /// 0: the active opener's send half (a2b), 1: the passive opener's (b2a).
    pub dir: Vec<u8>,
    pub state: Vec<u8>,
    pub cwnd: Vec<u64>,
    pub ssthresh: Vec<u64>,
    pub flight: Vec<u64>,
    pub sacked: Vec<u64>,
    pub snd_una: Vec<u64>,
    pub snd_nxt: Vec<u64>,
    pub snd_max: Vec<u64>,
    /// -1 before the first RTT sample.
    pub srtt_ns: Vec<i64>,
    pub rttvar_ns: Vec<i64>,
    pub rto_ns: Vec<i64>,
    pub dupacks: Vec<u32>,
    /// -1 before the first RTT sample.
    pub pacing_rate: Vec<i64>,
    pub bbr_mode: Vec<u8>,
    /// -1 when not BBR.
    pub bbr_bw: Vec<i64>,
}

impl TcpCols {
    fn push(&mut self, t: Time, conn: u32, dir: u8, r: &TcpRow) {
        if !self.cap.take() {
            return;
        }
        self.time_ns.push(t as i64);
        self.conn.push(conn);
        self.dir.push(dir);
        self.state.push(r.state as u8);
        self.cwnd.push(r.cwnd);
        self.ssthresh.push(r.ssthresh);
        self.flight.push(r.flight);
        self.sacked.push(r.sacked);
        self.snd_una.push(r.snd_una);
        self.snd_nxt.push(r.snd_nxt);
        self.snd_max.push(r.snd_max);
        self.srtt_ns.push(r.srtt.map_or(-1, |x| x as i64));
        self.rttvar_ns.push(r.rttvar as i64);
        self.rto_ns.push(r.rto as i64);
        self.dupacks.push(r.dupacks);
        self.pacing_rate.push(r.pacing_rate.map_or(-1, |x| x as i64));
        self.bbr_mode.push(r.bbr_mode);
        self.bbr_bw.push(r.bbr_bw.map_or(-1, |x| x as i64));
    }
}

/// Event of a segment row: it left its sender, or it reached its receiver.
pub const EVENT_TX: u8 = 0;
pub const EVENT_RX: u8 = 1;

#[derive(Clone, Debug, Default)]
pub struct SegCols {
    pub cap: Cap,
    pub time_ns: Vec<i64>,
    pub conn: Vec<u32>,
    pub dir: Vec<u8>,
    /// `EVENT_TX` (sent by its endpoint, at the sending host) or `EVENT_RX` (delivered to the
    /// peer endpoint, at the receiving host).
    pub event: Vec<u8>,
    pub seq: Vec<u64>,
    pub len: Vec<u32>,
    /// -1 when the segment carries no ACK.
    pub ack: Vec<i64>,
    pub flags: Vec<u8>,
    /// Which transmission of this segment (1 = the first), for SYN, SYN-ACK, data and FIN; 0 for
    /// pure ACKs.
    pub tx: Vec<u32>,
    /// SACK blocks: how many this segment carries; their edges follow in `sack_left`/`sack_right`
    /// (all segments' blocks in order).
    pub n_sack: Vec<u8>,
    pub sack_left: Vec<u64>,
    pub sack_right: Vec<u64>,
}

#[derive(Clone, Debug, Default)]
pub struct QueueCols {
    pub cap: Cap,
    pub interval: Option<Time>,
    pub time_ns: Vec<i64>,
    pub link: Vec<u32>,
    /// Waiting packets (the one being transmitted is not counted, as in the link rows).
    pub pkts: Vec<u32>,
    pub bytes: Vec<u64>,
}

impl QueueCols {
    fn push(&mut self, t: Time, link: u32, q: (u32, u64)) {
        if !self.cap.take() {
            return;
        }
        self.time_ns.push(t as i64);
        self.link.push(link);
        self.pkts.push(q.0);
        self.bytes.push(q.1);
    }
}

#[derive(Clone, Debug, Default)]
pub struct DropCols {
    pub cap: Cap,
    pub time_ns: Vec<i64>,
    pub link: Vec<u32>,
    /// Index into `DROP_REASONS`.
    pub reason: Vec<u8>,
    /// The TCP connection (-1 for a UDP datagram).
    pub conn: Vec<i64>,
    pub dir: Vec<u8>,
    pub seq: Vec<u64>,
    pub len: Vec<u32>,
    pub flags: Vec<u8>,
    pub tx: Vec<u32>,
    /// Bytes on the wire.
    pub wire_bytes: Vec<u32>,
}

/// A connection as the series number it: the `conn` column's meaning.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ConnInfo {
    pub conn: u32,
    /// The flow (or application, after the flows) that opened it, its index and name.
    pub flow: u32,
    pub name: String,
    /// Its ordinal among the flow's connections (1-based; a flow's n-th transfer).
    pub transfer: u32,
    /// The active opener's node and the passive opener's.
    pub a: String,
    pub b: String,
}

/// Sampling state of one key (a connection endpoint or a link direction).
#[derive(Clone, Copy, Debug)]
struct Sampler<R> {
    last: R,
    /// The next multiple of the interval not yet written.
    next: Time,
    /// Stopped (a closed connection): nothing more until it changes again.
    stopped: bool,
}

/// The recorder and, at the end, the series of a run.
#[derive(Clone, Debug, Default)]
pub struct Series {
    pub conns: Vec<ConnInfo>,
    /// Link direction names, indexed by the `link` column.
    pub links: Vec<String>,
    pub tcp: Option<TcpCols>,
    pub segments: Option<SegCols>,
    pub queue: Option<QueueCols>,
    pub drops: Option<DropCols>,
    /// When the run ended (the last sample time), ns.
    pub end_ns: i64,
    ids: HashMap<(u32, u32), u32>,
    /// Per (conn, dir): the last row written (change mode) or the sampler (interval mode).
    tcp_last: Vec<Option<Sampler<TcpRow>>>,
    queue_last: Vec<Sampler<(u32, u64)>>,
    /// The filters (`flows`, `links`): which labels and link directions each table keeps.
    tcp_flows: Option<Vec<bool>>,
    seg_flows: Option<Vec<bool>>,
    drop_flows: Option<Vec<bool>>,
    queue_links: Option<Vec<bool>>,
    drop_links: Option<Vec<bool>>,
    flow_names: Vec<String>,
    node_names: Vec<String>,
}

/// `link_dirs` of a world's link directions (named "link:a->b"): (link, direction).
fn link_dirs_of(links: &[LinkDir]) -> Vec<(String, String)> {
    links.iter().map(|l| (l.name.split(':').next().unwrap_or("").to_string(), l.name.clone())).collect()
}

fn grid_at_or_after(t: Time, i: Time) -> Time {
    t.div_ceil(i) * i
}

fn dir_code(d: Dir) -> u8 {
    match d {
        Dir::Forward => 0,
        Dir::Reverse => 1,
    }
}

fn tag_tx(tag: PacketTag) -> u32 {
    match tag {
        PacketTag::Syn { tx } | PacketTag::SynAck { tx } | PacketTag::Data { tx, .. } | PacketTag::Fin { tx } => tx,
        PacketTag::Ack { .. } | PacketTag::Other => 0,
    }
}

/// The time series observe the run: segments sent and delivered, queues, drops, and a TCP
/// endpoint's state after it acted.
impl crate::net::NetObserver for Series {
    fn on_send(&mut self, now: Time, p: &Packet, _first: Option<&LinkDir>) {
        self.on_packet(now, p, EVENT_TX);
    }
    fn on_drop(&mut self, now: Time, l: usize, p: &Packet, why: DropReason) {
        Series::on_drop(self, now, l, p, why);
    }
    fn on_queue(&mut self, now: Time, l: usize, link: &LinkDir) {
        Series::on_queue(self, now, l, link);
    }
    fn on_deliver(&mut self, now: Time, p: &Packet) {
        self.on_packet(now, p, EVENT_RX);
    }
}

impl crate::observe::Observer for Series {
    fn on_conn(&mut self, now: Time, label: Label, dir: Dir, node: u32, peer: u32, c: &TcpConn) {
        Series::on_conn(self, now, label, dir, node, peer, c);
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
    fn into_any(self: Box<Self>) -> Box<dyn std::any::Any> {
        self
    }
}

impl Series {
    /// A recorder for `specs` (validated); None without any, so that the world's hooks are one
    /// untaken branch. `flow_names`: the labels' names (the flows, then the applications).
    pub fn build(specs: &[SeriesSpec], flow_names: Vec<String>, node_names: &[String], links: &[LinkDir]) -> Option<Box<Series>> {
        if specs.is_empty() {
            return None;
        }
        let dirs = link_dirs_of(links);
        let mut s = Series { node_names: node_names.to_vec(), links: links.iter().map(|l| l.name.clone()).collect(), ..Default::default() };
        for sp in specs {
            let interval = sp.interval.map(|d| d.0);
            let flows = flow_mask(&sp.flows, &flow_names);
            match sp.kind {
                SeriesKind::Tcp => {
                    s.tcp = Some(TcpCols { cap: Cap::new(sp.max_rows), interval, ..Default::default() });
                    s.tcp_flows = flows;
                }
                SeriesKind::Segments => {
                    s.segments = Some(SegCols { cap: Cap::new(sp.max_rows), ..Default::default() });
                    s.seg_flows = flows;
                }
                SeriesKind::Queue => {
                    s.queue = Some(QueueCols { cap: Cap::new(sp.max_rows), interval, ..Default::default() });
                    s.queue_links = link_mask(&sp.links, &dirs);
                }
                SeriesKind::Drops => {
                    s.drops = Some(DropCols { cap: Cap::new(sp.max_rows), ..Default::default() });
                    s.drop_flows = flows;
                    s.drop_links = link_mask(&sp.links, &dirs);
                }
            }
        }
        s.flow_names = flow_names;
        if let Some(q) = s.queue.as_mut() {
            // Every queue starts empty at time 0.
            s.queue_last = vec![Sampler { last: (0, 0), next: 0, stopped: false }; links.len()];
            if q.interval.is_none() {
                for l in (0..links.len()).filter(|&l| kept(&s.queue_links, l)) {
                    q.push(0, l as u32, (0, 0));
                }
            }
        }
        Some(Box::new(s))
    }

    /// The `conn` number of a connection label, numbered on first sight.
    fn conn_id(&mut self, label: Label, dir: Dir, node: u32, peer: u32) -> u32 {
        if let Some(&c) = self.ids.get(&(label.flow, label.epoch)) {
            return c;
        }
        let c = self.conns.len() as u32;
        let (a, b) = if dir == Dir::Forward { (node, peer) } else { (peer, node) };
        let name = |n: u32| self.node_names.get(n as usize).cloned().unwrap_or_default();
        let info = ConnInfo { conn: c, flow: label.flow, name: self.flow_names.get(label.flow as usize).cloned().unwrap_or_default(), transfer: label.epoch, a: name(a), b: name(b) };
        self.conns.push(info);
        self.ids.insert((label.flow, label.epoch), c);
        c
    }

    /// A connection endpoint handled a call (a segment, a timer, the application): its send
    /// half's state now.
    pub fn on_conn(&mut self, now: Time, label: Label, dir: Dir, node: u32, peer: u32, c: &TcpConn) {
        if self.tcp.is_none() {
            return;
        }
        if !kept(&self.tcp_flows, label.flow as usize) {
            return;
        }
        let Some(row) = TcpRow::of(c) else { return };
        let conn = self.conn_id(label, dir, node, peer);
        let d = dir_code(dir);
        let k = conn as usize * 2 + d as usize;
        if self.tcp_last.len() <= k {
            self.tcp_last.resize(k + 1, None);
        }
        let cols = self.tcp.as_mut().expect("checked");
        let slot = &mut self.tcp_last[k];
        match cols.interval {
            None => {
                if !matches!(slot, Some(s) if s.last == row) {
                    cols.push(now, conn, d, &row);
                    *slot = Some(Sampler { last: row, next: 0, stopped: false });
                }
            }
            Some(i) => {
                let end = matches!(row.state, TcpState::Closed | TcpState::Failed);
                if let Some(s) = slot.as_mut().filter(|s| !s.stopped) {
                    while s.next < now {
                        if cols.cap.full() {
                            s.next = grid_at_or_after(now, i); // a full table: no loop over the grid
                            break;
                        }
                        cols.push(s.next, conn, d, &s.last);
                        s.next += i;
                    }
                    s.last = row;
                    if end {
                        // The row where it closes, then nothing until it opens again.
                        cols.push(now, conn, d, &row);
                        s.stopped = true;
                    }
                } else if !end {
                    *slot = Some(Sampler { last: row, next: grid_at_or_after(now, i), stopped: false });
                }
            }
        }
    }

    /// A TCP segment leaves its endpoint (`EVENT_TX`) or reaches its peer (`EVENT_RX`).
    #[inline]
    pub fn on_packet(&mut self, now: Time, p: &Packet, event: u8) {
        let Some(cols) = self.segments.as_ref() else { return };
        let Payload::Tcp(seg) = &p.body else { return };
        if !kept(&self.seg_flows, p.label.flow as usize) {
            return;
        }
        if cols.cap.rows >= cols.cap.max_rows {
            self.segments.as_mut().expect("checked").cap.truncated = true;
            return;
        }
        let (node, peer) = if event == EVENT_TX { (p.src.0, p.dst.0) } else { (p.dst.0, p.src.0) };
        // The receiving endpoint sends the other way.
        let own_dir = if event == EVENT_TX { p.dir } else if p.dir == Dir::Forward { Dir::Reverse } else { Dir::Forward };
        let conn = self.conn_id(p.label, own_dir, node, peer);
        let cols = self.segments.as_mut().expect("checked");
        cols.cap.take();
        cols.time_ns.push(now as i64);
        cols.conn.push(conn);
        cols.dir.push(dir_code(p.dir));
        cols.event.push(event);
        cols.seq.push(seg.seq);
        cols.len.push(seg.len);
        cols.ack.push(if seg.has_ack() { seg.ack as i64 } else { -1 });
        cols.flags.push(seg.flags);
        cols.tx.push(tag_tx(p.tag));
        let blocks = seg.sack_blocks();
        cols.n_sack.push(blocks.len() as u8);
        for b in blocks {
            cols.sack_left.push(b.left);
            cols.sack_right.push(b.right);
        }
    }

    /// Link direction `l`'s queue changed (a packet joined or left it).
    #[inline]
    pub fn on_queue(&mut self, now: Time, l: usize, link: &LinkDir) {
        let Some(cols) = self.queue.as_mut() else { return };
        if !kept(&self.queue_links, l) {
            return;
        }
        let q = (link.queue_len() as u32, link.queue_bytes);
        let s = &mut self.queue_last[l];
        match cols.interval {
            None => {
                if s.last != q {
                    cols.push(now, l as u32, q);
                }
            }
            Some(i) => {
                while s.next < now {
                    if cols.cap.full() {
                        s.next = grid_at_or_after(now, i);
                        break;
                    }
                    cols.push(s.next, l as u32, s.last);
                    s.next += i;
                }
            }
        }
        s.last = q;
    }

    /// A packet was dropped at link direction `l`'s ingress.
    pub fn on_drop(&mut self, now: Time, l: usize, p: &Packet, why: DropReason) {
        let Some(cols) = self.drops.as_ref() else { return };
        if !kept(&self.drop_links, l) || !kept(&self.drop_flows, p.label.flow as usize) {
            return;
        }
        if cols.cap.rows >= cols.cap.max_rows {
            self.drops.as_mut().expect("checked").cap.truncated = true;
            return;
        }
        let (conn, seq, len, flags) = match &p.body {
            Payload::Tcp(s) => (self.conn_id(p.label, p.dir, p.src.0, p.dst.0) as i64, s.seq, s.len, s.flags),
            Payload::Udp(d) => (-1, d.seq, d.len, 0),
        };
        let cols = self.drops.as_mut().expect("checked");
        cols.cap.take();
        cols.time_ns.push(now as i64);
        cols.link.push(l as u32);
        cols.reason.push(match why {
            DropReason::Loss => 0,
            DropReason::Filter => 1,
            DropReason::Queue => 2,
            DropReason::RedEarly => 3,
            DropReason::RedForced => 4,
        });
        cols.conn.push(conn);
        cols.dir.push(dir_code(p.dir));
        cols.seq.push(seq);
        cols.len.push(len);
        cols.flags.push(flags);
        cols.tx.push(tag_tx(p.tag));
        cols.wire_bytes.push(p.wire_bytes());
    }

    /// The run ended at `end`: write the samples still due (interval mode).
    pub fn finish(&mut self, end: Time) {
        self.end_ns = end as i64;
        if let Some(cols) = self.tcp.as_mut() {
            if let Some(i) = cols.interval {
                for (k, s) in self.tcp_last.iter_mut().enumerate() {
                    let Some(s) = s.as_mut().filter(|s| !s.stopped) else { continue };
                    while s.next <= end && !cols.cap.full() {
                        cols.push(s.next, (k / 2) as u32, (k % 2) as u8, &s.last);
                        s.next += i;
                    }
                }
            }
        }
        if let Some(cols) = self.queue.as_mut() {
            if let Some(i) = cols.interval {
                for (l, s) in self.queue_last.iter_mut().enumerate() {
                    if !kept(&self.queue_links, l) {
                        continue;
                    }
                    while s.next <= end && !cols.cap.full() {
                        cols.push(s.next, l as u32, s.last);
                        s.next += i;
                    }
                }
            }
        }
    }

    /// The tables as columns for a data frame library: name → [(column, numpy dtype,
    /// little-endian bytes)]. Only the tables recorded are present.
    pub fn columns(&self) -> Vec<(&'static str, Vec<(&'static str, &'static str, Vec<u8>)>)> {
        let mut out = Vec::new();
        if let Some(c) = &self.tcp {
            out.push((
                "tcp",
                vec![
                    col_i64("time_ns", &c.time_ns),
                    col_u32("conn", &c.conn),
                    col_u8("dir", &c.dir),
                    col_u8("state", &c.state),
                    col_u64("cwnd", &c.cwnd),
                    col_u64("ssthresh", &c.ssthresh),
                    col_u64("flight", &c.flight),
                    col_u64("sacked", &c.sacked),
                    col_u64("snd_una", &c.snd_una),
                    col_u64("snd_nxt", &c.snd_nxt),
                    col_u64("snd_max", &c.snd_max),
                    col_i64("srtt_ns", &c.srtt_ns),
                    col_i64("rttvar_ns", &c.rttvar_ns),
                    col_i64("rto_ns", &c.rto_ns),
                    col_u32("dupacks", &c.dupacks),
                    col_i64("pacing_rate", &c.pacing_rate),
                    col_u8("bbr_mode", &c.bbr_mode),
                    col_i64("bbr_bw", &c.bbr_bw),
                ],
            ));
        }
        if let Some(c) = &self.segments {
            out.push((
                "segments",
                vec![
                    col_i64("time_ns", &c.time_ns),
                    col_u32("conn", &c.conn),
                    col_u8("dir", &c.dir),
                    col_u8("event", &c.event),
                    col_u64("seq", &c.seq),
                    col_u32("len", &c.len),
                    col_i64("ack", &c.ack),
                    col_u8("flags", &c.flags),
                    col_u32("tx", &c.tx),
                    col_u8("n_sack", &c.n_sack),
                    col_u64("sack_left", &c.sack_left),
                    col_u64("sack_right", &c.sack_right),
                ],
            ));
        }
        if let Some(c) = &self.queue {
            out.push(("queue", vec![col_i64("time_ns", &c.time_ns), col_u32("link", &c.link), col_u32("pkts", &c.pkts), col_u64("bytes", &c.bytes)]));
        }
        if let Some(c) = &self.drops {
            out.push((
                "drops",
                vec![
                    col_i64("time_ns", &c.time_ns),
                    col_u32("link", &c.link),
                    col_u8("reason", &c.reason),
                    col_i64("conn", &c.conn),
                    col_u8("dir", &c.dir),
                    col_u64("seq", &c.seq),
                    col_u32("len", &c.len),
                    col_u8("flags", &c.flags),
                    col_u32("tx", &c.tx),
                    col_u32("wire_bytes", &c.wire_bytes),
                ],
            ));
        }
        out
    }

    /// What the columns need to be read: the connections, links, state and reason names, which
    /// tables were cut at their cap, and each table's sampling interval.
    pub fn info(&self) -> serde_json::Value {
        let mut truncated = serde_json::Map::new();
        let mut interval = serde_json::Map::new();
        let mut rows = serde_json::Map::new();
        let mut put = |name: &str, cap: &Cap, i: Option<Time>| {
            truncated.insert(name.into(), cap.truncated.into());
            rows.insert(name.into(), cap.max_rows.into());
            interval.insert(name.into(), i.map(crate::units::to_secs).into());
        };
        if let Some(c) = &self.tcp {
            put("tcp", &c.cap, c.interval);
        }
        if let Some(c) = &self.segments {
            put("segments", &c.cap, None);
        }
        if let Some(c) = &self.queue {
            put("queue", &c.cap, c.interval);
        }
        if let Some(c) = &self.drops {
            put("drops", &c.cap, None);
        }
        serde_json::json!({
            "connections": self.conns,
            "links": self.links,
            "states": TCP_STATES,
            "drop_reasons": DROP_REASONS,
            "truncated": truncated,
            "max_rows": rows,
            "interval_s": interval,
            "end_s": crate::units::to_secs(self.end_ns.max(0) as Time),
        })
    }
}

fn le<T: Copy, const N: usize>(v: &[T], f: impl Fn(T) -> [u8; N]) -> Vec<u8> {
    let mut out = Vec::with_capacity(v.len() * N);
    for &x in v {
        out.extend_from_slice(&f(x));
    }
    out
}

fn col_i64(n: &'static str, v: &[i64]) -> (&'static str, &'static str, Vec<u8>) {
    (n, "<i8", le(v, i64::to_le_bytes))
}
fn col_u64(n: &'static str, v: &[u64]) -> (&'static str, &'static str, Vec<u8>) {
    (n, "<u8", le(v, u64::to_le_bytes))
}
fn col_u32(n: &'static str, v: &[u32]) -> (&'static str, &'static str, Vec<u8>) {
    (n, "<u4", le(v, u32::to_le_bytes))
}
fn col_u8(n: &'static str, v: &[u8]) -> (&'static str, &'static str, Vec<u8>) {
    (n, "u1", v.to_vec())
}
