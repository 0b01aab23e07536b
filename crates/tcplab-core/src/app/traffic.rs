//! UDP traffic sources without congestion control: ON/OFF sources (`kind = "onoff"`) and
//! constant-bit-rate sources (`kind = "cbr"`), each sending from its node to a sink at another
//! that counts what arrives. Their packets cross the same queues, drop filters and captures as
//! TCP's; they are the cross traffic of Ladha et al. (TARGETS.md §3.3) and the ns-2 traffic
//! generators the studies used.
//!
//! **ON/OFF** follows ns-2's `POO_Traffic` and `EXPOO_Traffic` (`tools/pareto.cc`,
//! `tools/expoo.cc`; TARGETS.md §6.10). With `interval = packet·8/rate` (the time to send one
//! packet at the ON rate), each burst's length in packets is the ON draw over the mean interval,
//! rounded to the nearest whole number and at least one, and the gap before a burst's first
//! packet is one interval plus the OFF draw; packets within a burst go one interval apart. ns-2
//! draws the burst length from a Pareto (or exponential) of mean `burst_time/interval` packets:
//! scaling a Pareto (an exponential) by 1/interval gives exactly that, so `on = { pareto = {
//! shape = 1.5, mean = "500ms" } }` with the same `off` is `Application/Traffic/Pareto` with its
//! defaults, and `exponential` ON and OFF times are `Application/Traffic/Exponential`. Any other
//! distribution works the same way. With random packet sizes each packet is followed by its own
//! interval, and the burst length uses the mean one.
//!
//! **CBR** follows ns-2's `CBR_Traffic` (`tools/cbr_traffic.cc`): the first packet at `start`,
//! then one every `interval` (or `packet·8/rate`), each interval dithered by a uniform ±50 % with
//! `jitter`, at most `count` packets.
//!
//! **Mean rate.** A source's long-run mean rate is `rate·B/(B + OFF)` where B is the mean burst
//! duration, E[max(1, round(ON/interval))]·interval; when bursts are many packets long this is the
//! familiar `rate·ON/(ON + OFF)`, but when the ON time is shorter than one packet's interval every
//! burst is still one packet and the mean rate is well above it (Ladha et al.'s 1 ms ON time at
//! rates of a few hundred kb/s). `mean_rate` and `aggregate_rate` therefore solve this relation
//! for the ON rate ([`on_rate_for`]) instead of inverting the familiar form, and the `udp` record
//! shows the rate asked for, the ON rate derived and the rate measured.
//!
//! Streams: member `name` draws its ON times from `"app:{name}:on"`, OFF times from
//! `"app:{name}:off"`, packet sizes from `"app:{name}:packet"` and CBR dither from
//! `"app:{name}:jitter"`, so no change to TCP, to another source or to the network moves them.

pub use super::resolved::{Pattern, TrafficSpec};
use super::resolved::ResolvedApp;
use super::spec::{AppFields, AppKind};
use super::{App, Ctx, Records};
use crate::engine::RngStream;
use crate::net::{ConnId, Datagram, Label, NodeId, UDP_HEADER_BYTES};
use crate::result::UdpRow;
use crate::rv::{RandomDuration, RandomSize};
use crate::error::{err, ScenarioError};
use crate::tcp::ConnEvent;
use crate::units::{to_secs, Time};

/// ns-2's `Application/Traffic/Pareto` defaults (`tcl/lib/ns-default.tcl`): 500 ms ON and OFF,
/// shape 1.5, 210-byte packets, 64 kb/s.
pub const NS2_ON_OFF_MEAN_NS: u64 = 500_000_000;
pub const NS2_SHAPE: f64 = 1.5;
pub const NS2_PACKET_BYTES: u64 = 210;

/// The largest IPv4 packet (its total-length field); larger draws of a random size are cut to it.
pub const MAX_PACKET: u64 = 65_535;

/// Draws used to compute a mean burst length (a control variate makes them accurate to about
/// 0.1 %; see `mean_burst_packets`).
const CALIBRATION_DRAWS: usize = 20_000;

fn pareto_default() -> RandomDuration {
    RandomDuration::pareto_with_mean(NS2_SHAPE, NS2_ON_OFF_MEAN_NS as f64)
}

impl TrafficSpec {
    /// Check a UDP source entry's keys and derive its ON rate.
    pub fn resolve(a: &AppFields, path: &str, instances: u32) -> Result<TrafficSpec, ScenarioError> {
        let kind = if a.kind == AppKind::Onoff { "\"onoff\"" } else { "\"cbr\"" };
        let packet = a.packet.clone().unwrap_or_else(|| RandomSize::constant(NS2_PACKET_BYTES));
        let packet_mean = packet.mean().ok_or_else(|| ScenarioError { path: format!("{path}.packet"), message: "the packet size has no finite mean".into() })?;
        // Every packet must hold its headers: check the smallest value the variable can draw.
        if packet.lower_bound() + 0.5 < UDP_HEADER_BYTES as f64 {
            return err(format!("{path}.packet"), format!("an IP packet holds at least its {UDP_HEADER_BYTES} bytes of IPv4 and UDP headers; this size can be smaller"));
        }
        if packet.lower_bound() > MAX_PACKET as f64 {
            return err(format!("{path}.packet"), format!("an IPv4 packet has at most {MAX_PACKET} bytes"));
        }
        let set: Vec<&str> = [("rate", a.rate.is_some()), ("mean_rate", a.mean_rate.is_some()), ("aggregate_rate", a.aggregate_rate.is_some()), ("interval", a.interval.is_some())]
            .iter()
            .filter(|(_, g)| *g)
            .map(|(k, _)| *k)
            .collect();
        if set.len() > 1 {
            return err(format!("{path}.{}", set[1]), format!("give one of rate, mean_rate, aggregate_rate{}, not both {} and {}", if a.kind == AppKind::Cbr { ", interval" } else { "" }, set[0], set[1]));
        }
        let target = match (a.mean_rate, a.aggregate_rate) {
            (Some(m), _) => Some(m.0 as f64),
            (_, Some(g)) => Some(g.0 as f64 / instances as f64),
            _ => None,
        };
        let stop = a.stop.map(|d| d.0);
        match a.kind {
            AppKind::Onoff => {
                let on = a.on.clone().unwrap_or_else(pareto_default);
                let off = a.off.clone().unwrap_or_else(pareto_default);
                let means = (on.mean(), off.mean());
                let rate = match (a.rate, target) {
                    (Some(r), _) => r.0,
                    (None, Some(t)) => {
                        let (Some(_), Some(_)) = means else {
                            let key = if means.0.is_none() { "on" } else { "off" };
                            return err(format!("{path}.{key}"), "a mean rate needs ON and OFF times of finite mean (a Pareto shape above 1)");
                        };
                        on_rate_for(t, &on, &off, packet_mean).ok_or_else(|| ScenarioError {
                            path: format!("{path}.{}", set[0]),
                            message: format!("no ON rate up to 10^15 bit/s gives a mean of {t} bit/s with these ON and OFF times"),
                        })?
                    }
                    (None, None) => return err(format!("{path}.rate"), format!("kind = {kind} needs rate, mean_rate or aggregate_rate")),
                };
                if rate > 0 && off.as_constant() == Some(0) && on.as_constant() == Some(0) {
                    return err(format!("{path}.on"), "ON and OFF both always zero: the source would send one packet per interval (use kind = \"cbr\")");
                }
                let expected_bps = match means {
                    (Some(_), Some(m_off)) if rate > 0 => mean_rate_of(rate as f64, &on, m_off, packet_mean),
                    _ => if rate == 0 { 0.0 } else { f64::NAN },
                };
                Ok(TrafficSpec { pattern: Pattern::OnOff { on, off }, rate, packet, stop, target_bps: target, expected_bps })
            }
            _ => {
                if a.interval.is_some_and(|d| d.0 == 0) {
                    return err(format!("{path}.interval"), "expected a duration above zero");
                }
                let (rate, interval) = match (a.rate, target, a.interval) {
                    (Some(r), _, _) => (r.0, None),
                    (None, Some(t), _) => (t.round() as u64, None),
                    (None, None, Some(i)) => (((packet_mean * 8.0 * 1e9 / i.0 as f64).round() as u64).max(1), Some(i.0)),
                    (None, None, None) => return err(format!("{path}.rate"), format!("kind = {kind} needs rate, interval, mean_rate or aggregate_rate")),
                };
                let expected_bps = match interval {
                    Some(i) => packet_mean * 8.0 * 1e9 / i as f64,
                    None => rate as f64,
                };
                Ok(TrafficSpec { pattern: Pattern::Cbr { interval, jitter: a.jitter }, rate, packet, stop, target_bps: target, expected_bps })
            }
        }
    }
}

/// Time to send `bytes` at `rate` bit/s, in ns (rounded to the nearest).
fn tx_ns(bytes: u64, rate: u64) -> Time {
    ((bytes as u128 * 8 * 1_000_000_000 + rate as u128 / 2) / rate as u128) as Time
}

/// Mean packets per burst, E[max(1, round(ON/c))], for a mean interval of `c` ns. The rounding
/// and the floor of one are what matter when bursts are short: E[ON]/c is exact, and only the
/// difference max(1, round(Y)) − Y, bounded in [−½, 1], is averaged over draws (a control
/// variate), from a fixed stream, so the answer is deterministic and accurate to about 0.1 %
/// even for heavy tails.
fn mean_burst_packets(on: &RandomDuration, c: f64, draws: &[f64]) -> f64 {
    let Some(m) = on.mean() else { return f64::INFINITY };
    if let Some(x) = on.as_constant() {
        return ((x as f64 / c + 0.5).floor()).max(1.0);
    }
    let corr: f64 = draws.iter().map(|&x| (x / c + 0.5).floor().max(1.0) - x / c).sum::<f64>() / draws.len() as f64;
    m / c + corr
}

fn calibration_draws(on: &RandomDuration) -> Vec<f64> {
    let mut rng = RngStream::new(0, "onoff-mean-rate");
    (0..CALIBRATION_DRAWS).map(|_| on.sample_f64(&mut rng)).collect()
}

/// The long-run mean rate (bit/s) of an ON/OFF source sending at `rate` while ON: bits of a burst
/// over the time of a burst and a silence.
pub fn mean_rate_of(rate: f64, on: &RandomDuration, off_mean_ns: f64, packet_mean: f64) -> f64 {
    let draws = calibration_draws(on);
    mean_rate_with(rate, on, off_mean_ns, packet_mean, &draws)
}

fn mean_rate_with(rate: f64, on: &RandomDuration, off_mean_ns: f64, packet_mean: f64, draws: &[f64]) -> f64 {
    let c = packet_mean * 8.0 * 1e9 / rate; // ns per packet
    let n = mean_burst_packets(on, c, draws);
    let burst_ns = n * c;
    rate * burst_ns / (burst_ns + off_mean_ns)
}

/// The ON rate (bit/s, whole) that gives an ON/OFF source the long-run mean rate `target`, found
/// by bisection on the (increasing) relation of [`mean_rate_of`]; 0 for a target of 0; None when
/// even 10^15 bit/s is not enough.
pub fn on_rate_for(target: f64, on: &RandomDuration, off: &RandomDuration, packet_mean: f64) -> Option<u64> {
    if target <= 0.0 {
        return Some(0);
    }
    let off_mean = off.mean()?;
    let draws = calibration_draws(on);
    let f = |r: f64| mean_rate_with(r, on, off_mean, packet_mean, &draws);
    let (mut lo, mut hi) = (target, target * 2.0);
    while f(hi) < target {
        lo = hi;
        hi *= 2.0;
        if hi > crate::units::MAX_RATE as f64 {
            return None;
        }
    }
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        if f(mid) < target {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo < 0.5 {
            break;
        }
    }
    Some(hi.round() as u64)
}

/// A UDP source and its sink.
pub struct Source {
    index: u32,
    spec: ResolvedApp,
    t: TrafficSpec,
    /// The source's socket and the sink's.
    src: Option<ConnId>,
    sink: ConnId,
    on_rng: RngStream,
    off_rng: RngStream,
    size_rng: RngStream,
    jitter_rng: RngStream,
    /// Packets left in the current burst.
    rem: u64,
    /// The size of the next packet (drawn when it is scheduled).
    next_size: u64,
    sent: u64,
    /// Mean interval (ns) used for burst lengths.
    mean_interval: f64,
    /// Counters at the end of the warmup: sent packets and bytes, received, lost.
    base: [u64; 6],
    from: Time,
    done_sending: bool,
    /// The source keeps the run going (it has an end of its own and has not reached it).
    holds: bool,
}

const SEND: u32 = 0;
const START: u32 = 1;
const DRAIN: u32 = 2;
const DRAIN_CHECK: Time = 10_000_000;

impl Source {
    pub fn new(index: usize, spec: ResolvedApp, seed: u64) -> Source {
        let t = spec.traffic.clone().expect("a UDP source");
        let stream = |v: &str| RngStream::new(seed, &format!("app:{}:{v}", spec.name));
        let mean_interval = if t.rate > 0 { t.packet.mean().unwrap_or(0.0) * 8.0 * 1e9 / t.rate as f64 } else { 0.0 };
        Source {
            index: index as u32,
            on_rng: stream("on"),
            off_rng: stream("off"),
            size_rng: stream("packet"),
            jitter_rng: stream("jitter"),
            spec,
            t,
            src: None,
            sink: ConnId::default(),
            rem: 0,
            next_size: 0,
            sent: 0,
            mean_interval,
            base: [0; 6],
            from: 0,
            done_sending: false,
            holds: false,
        }
    }

    fn interval_after(&mut self, size: u64) -> Time {
        match &self.t.pattern {
            Pattern::Cbr { interval, jitter } => {
                let i = interval.unwrap_or_else(|| tx_ns(size, self.t.rate));
                if *jitter {
                    // ns-2 `CBR_Traffic::next_interval`: interval + interval·U(−0.5, 0.5).
                    let u = self.jitter_rng.uniform() - 0.5;
                    (i as f64 * (1.0 + u)).round() as Time
                } else {
                    i
                }
            }
            Pattern::OnOff { .. } => tx_ns(size, self.t.rate),
        }
    }

    /// The gap before the next packet, whose size is drawn now; `prev` is the size of the packet
    /// just sent (None before the first).
    fn schedule_next(&mut self, cx: &mut Ctx, prev: Option<u64>) {
        if self.spec.count.is_some_and(|n| self.sent >= n as u64) {
            self.last_sent(cx);
            return;
        }
        self.next_size = self.t.packet.sample(&mut self.size_rng).min(MAX_PACKET);
        let mut gap = match (&self.t.pattern, prev) {
            // ns-2's CBR sends its first packet at once.
            (Pattern::Cbr { .. }, None) => 0,
            // ns-2's ON/OFF sources wait one interval first (`TrafficGenerator::start`).
            (Pattern::OnOff { .. }, None) => tx_ns(self.next_size, self.t.rate),
            (_, Some(p)) => self.interval_after(p),
        };
        if let Pattern::OnOff { on, off } = &self.t.pattern {
            if self.rem == 0 {
                // A new burst: its length in packets, and the silence before it.
                let x = on.sample_f64(&mut self.on_rng);
                self.rem = ((x / self.mean_interval + 0.5).floor() as u64).max(1);
                gap += off.sample(&mut self.off_rng);
            }
            self.rem -= 1;
        }
        let at = cx.now.saturating_add(gap);
        if self.t.stop.is_some_and(|s| at > s) || at > crate::units::MAX_TIME {
            self.last_sent(cx);
            return;
        }
        cx.schedule(at, SEND);
    }

    /// The source has sent its last packet. One with an end of its own (a count, a stop) holds
    /// the run until that packet has arrived (or the network has nothing left to carry).
    fn last_sent(&mut self, cx: &mut Ctx) {
        self.done_sending = true;
        if !self.check_drained(cx) {
            cx.schedule(cx.now + DRAIN_CHECK, DRAIN);
        }
    }

    /// Whether the source is done with the run: it has sent its last packet and each packet
    /// has arrived or been dropped. The sink's arrivals check at once; drops are seen by a
    /// check every `DRAIN_CHECK`.
    fn check_drained(&mut self, cx: &mut Ctx) -> bool {
        if !self.holds {
            return true;
        }
        if !self.done_sending {
            return false;
        }
        let c = self.counters(cx);
        if c[2] + c[4] >= c[0] {
            self.holds = false;
            cx.finished();
            return true;
        }
        false
    }

    /// Packets and bytes (whole IP packets) sent, received by the sink and lost on the way.
    fn counters(&self, cx: &Ctx) -> [u64; 6] {
        const H: u64 = UDP_HEADER_BYTES as u64;
        let mut c = [0; 6];
        if let Some(crate::conns::Endpoint { kind: crate::conns::EndpointKind::Udp(u), .. }) = self.src.and_then(|s| cx.endpoint(s)) {
            c[0] = u.sent_pkts;
            c[1] = u.sent_bytes + H * u.sent_pkts;
        }
        if let Some(crate::conns::Endpoint { kind: crate::conns::EndpointKind::Udp(u), .. }) = cx.endpoint(self.sink) {
            c[2] = u.rcvd_pkts;
            c[3] = u.rcvd_bytes + H * u.rcvd_pkts;
            c[4] = u.lost_pkts;
            c[5] = u.lost_bytes + H * u.lost_pkts;
        }
        c
    }
}

impl App for Source {
    fn start(&mut self, cx: &mut Ctx) {
        let (a, b) = cx.open_udp(NodeId(self.spec.client as u32), NodeId(self.spec.server as u32), Label { flow: self.index, epoch: 1 });
        self.src = Some(a);
        self.sink = b;
        // A source without an end of its own never holds the run open: it is background.
        let endless = self.spec.count.is_none() && self.t.stop.is_none();
        if self.t.rate == 0 || endless {
            cx.finished();
            if self.t.rate == 0 {
                return;
            }
        } else {
            self.holds = true;
        }
        cx.schedule(self.spec.start, START);
    }

    fn on_timer(&mut self, cx: &mut Ctx, token: u32) {
        let Some(src) = self.src else { return };
        match token {
            START => return self.schedule_next(cx, None),
            DRAIN => {
                if !self.check_drained(cx) {
                    cx.schedule(cx.now + DRAIN_CHECK, DRAIN);
                }
                return;
            }
            _ => {}
        }
        let size = self.next_size;
        cx.send_datagram(src, (size - UDP_HEADER_BYTES as u64) as u32);
        self.sent += 1;
        self.schedule_next(cx, Some(size));
    }

    fn on_event(&mut self, _cx: &mut Ctx, _id: ConnId, _ev: ConnEvent) {}

    fn on_datagram(&mut self, cx: &mut Ctx, _id: ConnId, _d: &Datagram) {
        if self.done_sending {
            self.check_drained(cx);
        }
    }

    fn warmup(&mut self, cx: &mut Ctx) {
        self.base = self.counters(cx);
        self.from = cx.now;
    }

    fn finish(&mut self, cx: &mut Ctx, rec: &mut Records) {
        let now = self.counters(cx);
        let d: Vec<u64> = now.iter().zip(self.base).map(|(n, b)| n - b).collect();
        let (sent_pkts, sent_bytes, delivered_pkts, delivered_bytes, lost_pkts, lost_bytes) = (d[0], d[1], d[2], d[3], d[4], d[5]);
        // Measured over the time the source could send: from its start (or the warmup) to its
        // stop (or the end of the run).
        let begin = self.spec.start.max(self.from).max(rec.from);
        let end = self.t.stop.map_or(rec.end, |s| s.min(rec.end));
        let active_s = to_secs(end.saturating_sub(begin));
        rec.udp.push(UdpRow {
            app: self.index as usize,
            name: self.spec.name.clone(),
            kind: if self.spec.kind == AppKind::Onoff { "onoff".into() } else { "cbr".into() },
            src: rec.nodes[self.spec.client].clone(),
            dst: rec.nodes[self.spec.server].clone(),
            rate_bps: self.t.rate,
            target_mean_bps: self.t.target_bps,
            expected_mean_bps: if self.t.expected_bps.is_finite() { Some(self.t.expected_bps) } else { None },
            mean_bps: if active_s > 0.0 { Some(sent_bytes as f64 * 8.0 / active_s) } else { None },
            sent_pkts,
            sent_bytes,
            delivered_pkts,
            delivered_bytes,
            dropped_pkts: lost_pkts,
            dropped_bytes: lost_bytes,
            in_flight_pkts: sent_pkts.saturating_sub(delivered_pkts + lost_pkts),
        });
    }
}
