//! One direction of a full-duplex link: an optional Bernoulli loss element and drop filters at its
//! ingress, a FIFO queue (DropTail, limit in packets and/or bytes, optionally managed by RED, see
//! `red.rs`), a transmitter of fixed rate and a propagation delay. Instruments are counted here,
//! where packets are offered, sent and dropped.
//!
//! Conventions (as in ns-2): the packet being serialised is not counted in the queue, so a limit of
//! L packets holds L waiting packets plus the one on the wire; queueing delay is the time from
//! arrival to the start of transmission.

use super::filter::{DelayFilter, DropFilter};
use super::fq::{Deq, Fq, FqPacket};
use super::packet::{NodeId, Packet};
use super::red::{Red, RedSpec, Verdict};
use crate::engine::RngStream;
use crate::units::{Time, SEC};
use std::collections::VecDeque;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct LinkDirId(pub u32);

/// How a direction moves its packets (`LinkDir::mode`): by events (a transmission's end is an
/// event when a packet waits behind it, an arrival is one).
pub const EVENTS: u8 = 0;
/// Computed (`vfifo.rs`): a packet's fate and times are decided when it is offered. A computed
/// direction that is also `LinkDir::chained` is offered its packets by its only feeding direction
/// when that one computes their arrival.
pub const COMPUTED: u8 = 1;

/// A step marking threshold K (DCTCP's, RFC 8257 §3.1; Alizadeh et al. 2010 §3.1): an
/// ECN-capable packet that arrives to find at least K packets (or bytes) waiting is marked CE.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MarkThreshold {
    Packets(u64),
    Bytes(u64),
}

/// DropTail limits; `None` means unlimited in that dimension.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct QueueLimit {
    pub packets: Option<u64>,
    pub bytes: Option<u64>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropReason {
    /// The Bernoulli loss element.
    Loss,
    /// A deterministic drop filter.
    Filter,
    /// Queue overflow (the physical limit).
    Queue,
    /// RED's probabilistic drop, min_th ≤ avg < max_th.
    RedEarly,
    /// RED's drop with avg ≥ max_th (with `gentle`, probabilistic up to 2·max_th).
    RedForced,
}

/// A direction's counters. The fields are laid out in this order (`repr(C)`): those that change
/// with every packet offered, queued or sent first, so that a packet's passage touches one or two
/// cache lines of them; those of drops and UDP after.
#[derive(Clone, Debug, Default, PartialEq)]
#[repr(C)]
pub struct LinkDirStats {
    /// ∫ queue length (packets) dt, in packet·ns.
    pub queue_pkt_ns: u128,
    /// ∫ queue length (bytes) dt, in byte·ns.
    pub queue_byte_ns: u128,
    /// Sum over sent packets of their queueing delay, ns.
    pub queue_delay_sum: u128,
    /// Time the transmitter was busy, ns.
    pub busy_ns: u128,
    pub offered_pkts: u64,
    pub offered_bytes: u64,
    pub sent_pkts: u64,
    pub sent_bytes: u64,
    pub max_queue_pkts: u64,
    /// The UDP datagrams among the packets sent.
    pub udp_pkts: u64,
    pub udp_bytes: u64,
    pub dropped_queue: u64,
    pub dropped_loss: u64,
    pub dropped_filter: u64,
    /// Packets a delay filter held back before offering them (not drops).
    pub delayed_filter: u64,
    pub dropped_red_early: u64,
    pub dropped_red_forced: u64,
    pub dropped_bytes: u64,
    /// ECN-capable packets marked CE instead of dropped (RED with `ecn`, `mark_threshold`).
    pub ce_marks: u64,
}

impl LinkDirStats {
    /// What was counted since `base`; the maximum queue stays that of the whole run.
    pub fn since(&self, base: &LinkDirStats) -> LinkDirStats {
        LinkDirStats {
            offered_pkts: self.offered_pkts - base.offered_pkts,
            offered_bytes: self.offered_bytes - base.offered_bytes,
            sent_pkts: self.sent_pkts - base.sent_pkts,
            sent_bytes: self.sent_bytes - base.sent_bytes,
            udp_pkts: self.udp_pkts - base.udp_pkts,
            udp_bytes: self.udp_bytes - base.udp_bytes,
            dropped_queue: self.dropped_queue - base.dropped_queue,
            dropped_loss: self.dropped_loss - base.dropped_loss,
            dropped_filter: self.dropped_filter - base.dropped_filter,
            delayed_filter: self.delayed_filter - base.delayed_filter,
            dropped_red_early: self.dropped_red_early - base.dropped_red_early,
            dropped_red_forced: self.dropped_red_forced - base.dropped_red_forced,
            dropped_bytes: self.dropped_bytes - base.dropped_bytes,
            ce_marks: self.ce_marks - base.ce_marks,
            queue_pkt_ns: self.queue_pkt_ns - base.queue_pkt_ns,
            queue_byte_ns: self.queue_byte_ns - base.queue_byte_ns,
            max_queue_pkts: self.max_queue_pkts,
            queue_delay_sum: self.queue_delay_sum - base.queue_delay_sum,
            busy_ns: self.busy_ns - base.busy_ns,
        }
    }

    pub fn dropped(&self) -> u64 {
        self.dropped_queue + self.dropped_loss + self.dropped_filter + self.dropped_red_early + self.dropped_red_forced
    }
}

/// The fields are laid out in this order (`repr(C)`): what every packet's passage reads or
/// writes first (the transmitter, the queue, the ingress checks, the counters), what only set-up,
/// drops, RED and the results read after; with 10⁵ flows the world holds 4·10⁵ directions and a
/// packet's hop is a cache miss on its direction, so the fewer lines it touches the better.
#[repr(C)]
pub struct LinkDir {
    /// When the packet on the wire finishes serialising (the last one's end if the transmitter
    /// is idle: since then it has been idle, RED's idle correction).
    pub(in crate::net) busy_until: Time,
    /// The insertion number of that transmission's end in the order of events. The end is an
    /// event of the model whether or not it is in the event queue: it is queued only when a
    /// packet waits behind it (`done_queued`), since with nothing waiting it changes nothing but
    /// the transmitter's state, which `busy` tells from the time and this number.
    pub(in crate::net) done_seq: u64,
    pub rate_bps: u64,
    pub delay: Time,
    pub queue_bytes: u64,
    last_change: Time,
    pub loss_p: f64,
    /// The last packet size serialised and its time: a direction carries nearly always one size
    /// (full segments one way, ACKs the other), so the division is rarely needed.
    last_tx: (u32, u32),
    /// Nanoseconds a byte takes where the rate divides 8·10⁹ exactly and is 2 b/s or more (10
    /// Mb/s, 100 Mb/s, 1 Gb/s ...; the quotient then fits in 32 bits), else 0: a packet's
    /// serialisation time is then one multiplication, the same as `tx_time`'s rounded-up
    /// division (nothing to round).
    ns_per_byte: u64,
    pub to: NodeId,
    pub(in crate::net) done_queued: bool,
    /// How packets move through this direction: `EVENTS` or `COMPUTED` (set by `Fabric::arm`).
    pub(in crate::net) mode: u8,
    /// Every packet comes from one direction, which sends all its packets on to this one
    /// (`Fabric::arm`): computed, it is offered them when that one computes their arrival; by
    /// events, their places in the order of events were taken when that one was offered them.
    pub(in crate::net) chained: bool,
    /// Waiting packets (indices into the world's packet pool).
    pub(in crate::net) queue: VecDeque<u32>,
    /// Their transmissions' ends' and their arrivals' places in the order of events, taken when
    /// they were offered (`Fabric::offer`).
    pub(in crate::net) queue_seqs: VecDeque<(u64, u64)>,
    pub limit: QueueLimit,
    pub filters: Vec<DropFilter>,
    /// Delay filters, applied before a packet is offered (see `hold`).
    pub delays: Vec<DelayFilter>,
    pub stats: LinkDirStats,
    /// RED active queue management; None = plain DropTail.
    pub red: Option<Box<Red>>,
    /// Step CE marking on enqueue (DCTCP's K); None = no marking.
    pub mark_threshold: Option<MarkThreshold>,
    /// Periodic loss: drop each time the running sum of `loss_p` over offered packets reaches 1.
    pub periodic: Option<f64>,
    pub from: NodeId,
    pub name: String,
    pub rng: RngStream,
    /// The fq qdisc (`fq.rs`) in place of the FIFO, on a direction that leaves a host; None =
    /// the FIFO. Its packets go through `admit_fq` and `dequeue_fq`, never `push` and `pop`.
    pub fq: Option<Box<Fq>>,
}

impl LinkDir {
    pub fn new(name: String, from: NodeId, to: NodeId, rate_bps: u64, delay: Time, limit: QueueLimit, loss_p: f64, rng: RngStream) -> Self {
        LinkDir {
            name,
            from,
            to,
            rate_bps,
            delay,
            limit,
            loss_p,
            periodic: None,
            rng,
            filters: Vec::new(),
            delays: Vec::new(),
            queue: VecDeque::new(),
            queue_seqs: VecDeque::new(),
            queue_bytes: 0,
            busy_until: 0,
            done_seq: 0,
            done_queued: false,
            last_tx: (0, 0),
            ns_per_byte: match rate_bps {
                r if r > 0 && (8 * SEC) % r == 0 && 8 * SEC / r <= u32::MAX as u64 => 8 * SEC / r,
                _ => 0,
            },
            red: None,
            mark_threshold: None,
            last_change: 0,
            stats: LinkDirStats::default(),
            fq: None,
            mode: EVENTS,
            chained: false,
        }
    }

    /// Manage this direction's queue with RED, drawing from its own stream `rng` (not the loss
    /// element's, so that switching DropTail to RED leaves the random losses as they were).
    pub fn set_red(&mut self, spec: Option<RedSpec>, rng: RngStream) {
        self.red = spec.map(|s| Box::new(Red::new(s, self.rate_bps, rng)));
    }

    /// Serialisation time of `bytes` at the link rate, rounded up to a whole nanosecond.
    pub fn tx_time(&self, bytes: u32) -> Time {
        // In 64 bits whenever the product fits (any packet under 2.3 GB); the same result as the
        // 128-bit division, which costs several times more on the per-packet path.
        match (bytes as u64).checked_mul(8 * SEC) {
            Some(bits) => bits.div_ceil(self.rate_bps),
            // Past u64 (a 4 GB packet at a few b/s, over 584 years): the longest time there is.
            None => u64::try_from((bytes as u128 * 8 * SEC as u128).div_ceil(self.rate_bps as u128)).unwrap_or(Time::MAX),
        }
    }

    /// Whether the transmitter is busy while the event (`now`, `seq`) runs: its transmission's
    /// end, `(busy_until, done_seq)`, comes after that event in the order of events.
    #[inline]
    pub fn busy(&self, now: Time, seq: u64) -> bool {
        self.busy_until > now || (self.busy_until == now && self.done_seq > seq)
    }

    fn account(&mut self, now: Time) {
        self.account_n(now, self.queue.len());
    }

    /// The time integrals up to `now`, with `n` packets waiting since the last change.
    pub(in crate::net) fn account_n(&mut self, now: Time, n: usize) {
        let dt = (now - self.last_change) as u128;
        self.stats.queue_pkt_ns += n as u128 * dt;
        self.stats.queue_byte_ns += self.queue_bytes as u128 * dt;
        self.last_change = now;
    }

    /// Before ingress: how long a delay filter holds this packet back, if one selects it. The
    /// caller offers it (`admit`) once that time has passed, without asking again.
    pub fn hold(&mut self, pkt: &Packet) -> Option<Time> {
        let f = self.delays.iter_mut().find(|f| f.filter.matches(pkt))?;
        f.filter.dropped += 1;
        self.stats.delayed_filter += 1;
        Some(f.by)
    }

    /// Ingress: filters, then the loss element, then RED (if any), then the queue limit. `Ok`
    /// means the packet is accepted: the caller either starts its transmission (link idle, not
    /// `busy`) or it is queued via `push`. `pkt.enqueued_at` is the arrival time (the caller sets
    /// it). An accepted ECN-capable packet may leave marked CE (RED with `ecn`, or the step
    /// threshold `mark_threshold`).
    #[inline]
    pub fn admit(&mut self, pkt: &mut Packet, busy: bool) -> Result<(), DropReason> {
        let bytes = pkt.wire_bytes() as u64;
        self.stats.offered_pkts += 1;
        self.stats.offered_bytes += bytes;
        // A plain DropTail direction (no filter, no loss element, no RED, no CE marking: every
        // link of the benchmark dumbbell) asks the queue limit only; the elements, where a
        // direction has any, are out of line, so that their code costs the plain path nothing.
        if !self.filters.is_empty() || self.loss_p > 0.0 || self.red.is_some() || self.mark_threshold.is_some() {
            return self.admit_elements(pkt, busy, bytes);
        }
        if busy && self.over_limit(bytes) {
            self.stats.dropped_queue += 1;
            self.stats.dropped_bytes += bytes;
            return Err(DropReason::Queue);
        }
        Ok(())
    }

    /// The queue limit (waiting packets and bytes, the one being serialised not counted) would
    /// be exceeded by one more packet of `bytes`.
    #[inline]
    fn over_limit(&self, bytes: u64) -> bool {
        self.limit.packets.is_some_and(|l| self.queue.len() as u64 + 1 > l) || self.limit.bytes.is_some_and(|l| self.queue_bytes + bytes > l)
    }

    /// `admit` through the direction's elements, in order: filters, the loss element, RED, the
    /// queue limit, then CE marking of what is accepted.
    #[inline(never)]
    fn admit_elements(&mut self, pkt: &mut Packet, busy: bool, bytes: u64) -> Result<(), DropReason> {
        let reason = if let Some(f) = self.filters.iter_mut().find(|f| f.matches(pkt)) {
            f.dropped += 1;
            self.stats.dropped_filter += 1;
            Some(DropReason::Filter)
        } else if self.loss_p > 0.0 && self.lose() {
            self.stats.dropped_loss += 1;
            Some(DropReason::Loss)
        } else if let Some(v) = self.red_verdict(pkt, busy) {
            Some(v)
        } else if busy && self.over_limit(bytes) {
            self.stats.dropped_queue += 1;
            if let Some(r) = self.red.as_mut() {
                r.on_limit_drop();
            }
            Some(DropReason::Queue)
        } else {
            None
        };
        match reason {
            Some(r) => {
                self.stats.dropped_bytes += bytes;
                Err(r)
            }
            None => {
                if let Some(k) = self.mark_threshold {
                    self.step_mark(pkt, k);
                }
                Ok(())
            }
        }
    }

    /// DCTCP's marking (RFC 8257 §3.1: "the switch ... sets the CE codepoint ... if the queue
    /// occupancy is greater than K"; Alizadeh et al. 2010 §3.1: "an arriving packet is marked
    /// with the CE codepoint if the queue occupancy is greater than K upon its arrival"): the
    /// instantaneous queue this packet finds waiting, it excluded, at least K. A packet that is
    /// not ECN-capable passes unmarked (the limit alone may drop it).
    fn step_mark(&mut self, pkt: &mut Packet, k: MarkThreshold) {
        let over = match k {
            MarkThreshold::Packets(n) => self.queue.len() as u64 >= n,
            MarkThreshold::Bytes(b) => self.queue_bytes >= b,
        };
        if over && pkt.ect() {
            pkt.mark_ce();
            self.stats.ce_marks += 1;
        }
    }

    /// The loss element: an independent draw, or (periodic) every 1/p-th offered packet.
    fn lose(&mut self) -> bool {
        match self.periodic.as_mut() {
            None => self.rng.bernoulli(self.loss_p),
            Some(acc) => {
                *acc += self.loss_p;
                if *acc >= 1.0 - 1e-12 {
                    *acc -= 1.0;
                    true
                } else {
                    false
                }
            }
        }
    }

    /// RED's decision for an arrival (None: RED lets it through, or there is no RED).
    fn red_verdict(&mut self, pkt: &mut Packet, busy: bool) -> Option<DropReason> {
        let r = self.red.as_mut()?;
        let now = pkt.enqueued_at;
        let q = if r.spec.queue_in_bytes { self.queue_bytes as f64 } else { self.queue.len() as f64 };
        let idle = (!busy).then(|| now.saturating_sub(self.busy_until));
        r.update_avg(now, q, idle);
        match r.decide(pkt.wire_bytes()) {
            Verdict::Enqueue => None,
            // RFC 3168 §5 ("instead of dropping the packet, the router sets the CE codepoint")
            // for RED's early decision, as ns-2's `REDQueue::drop_early` with `setbit_`
            // (queue/red.cc): only an ECN-capable packet, and only below max_th.
            Verdict::Early if r.spec.ecn && pkt.ect() => {
                pkt.mark_ce();
                self.stats.ce_marks += 1;
                None
            }
            Verdict::Early => {
                self.stats.dropped_red_early += 1;
                Some(DropReason::RedEarly)
            }
            Verdict::Forced => {
                self.stats.dropped_red_forced += 1;
                Some(DropReason::RedForced)
            }
        }
    }

    /// Queue an admitted packet behind the one being transmitted.
    pub fn push(&mut self, now: Time, idx: u32, bytes: u32) {
        self.account(now);
        self.queue.push_back(idx);
        self.queue_bytes += bytes as u64;
        self.stats.max_queue_pkts = self.stats.max_queue_pkts.max(self.queue.len() as u64);
    }

    /// Packets waiting behind the one being transmitted (in the FIFO, or held by fq).
    #[inline]
    pub fn queue_len(&self) -> usize {
        self.queue.len() + self.fq.as_ref().map_or(0, |f| f.qlen)
    }

    /// Ingress of an fq direction: the filters and the loss element (RED, CE marking and the
    /// FIFO's limits are refused with fq by the scenario), then fq's own enqueue (`limit`,
    /// `flow_limit`, horizon; a refusal counts as a queue drop, fq's counters say which).
    pub fn admit_fq(&mut self, pkt: &mut Packet, fp: FqPacket, now: Time) -> Result<(), DropReason> {
        let bytes = pkt.wire_bytes() as u64;
        self.stats.offered_pkts += 1;
        self.stats.offered_bytes += bytes;
        if !self.filters.is_empty() || self.loss_p > 0.0 {
            self.admit_elements(pkt, false, bytes)?;
        }
        let fq = self.fq.as_mut().expect("an fq direction");
        let held = fq.qlen;
        if fq.enqueue(now, fp).is_err() {
            self.stats.dropped_queue += 1;
            self.stats.dropped_bytes += bytes;
            return Err(DropReason::Queue);
        }
        self.account_n(now, held);
        self.queue_bytes += bytes;
        self.stats.max_queue_pkts = self.stats.max_queue_pkts.max(held as u64 + 1);
        Ok(())
    }

    /// fq's dequeue at `now` (`fq::Fq::dequeue`), with the queue's integrals kept.
    pub fn dequeue_fq(&mut self, now: Time, bytes_of: impl Fn(u32) -> u32) -> Deq {
        let fq = self.fq.as_mut().expect("an fq direction");
        let held = fq.qlen;
        let d = fq.dequeue(now);
        if let Deq::Packet(idx) = d {
            self.account_n(now, held);
            self.queue_bytes -= bytes_of(idx) as u64;
        }
        d
    }

    /// Take the next waiting packet for transmission.
    pub fn pop(&mut self, now: Time, bytes_of: impl Fn(u32) -> u32) -> Option<u32> {
        let idx = *self.queue.front()?;
        self.account(now);
        self.queue.pop_front();
        self.queue_bytes -= bytes_of(idx) as u64;
        Some(idx)
    }

    /// Serialisation time of a packet of `bytes`: `tx_time`, by one multiplication where the rate
    /// allows (`ns_per_byte`), else the last size's time kept.
    #[inline]
    pub(in crate::net) fn ser_time(&mut self, bytes: u32) -> Time {
        if self.ns_per_byte != 0 {
            // Both factors under 2³²: within 64 bits.
            return bytes as Time * self.ns_per_byte;
        }
        if self.last_tx.0 == bytes && bytes != 0 {
            self.last_tx.1 as Time
        } else {
            let t = self.tx_time(bytes);
            // Kept only when it fits (under 4.3 s a packet).
            if let Ok(t32) = u32::try_from(t) {
                self.last_tx = (bytes, t32);
            }
            t
        }
    }

    /// Count a transmission of `t` that starts after `waited` in the queue.
    #[inline]
    pub(in crate::net) fn count_sent(&mut self, bytes: u32, udp: bool, t: Time, waited: Time) {
        self.stats.sent_pkts += 1;
        self.stats.sent_bytes += bytes as u64;
        if udp {
            self.stats.udp_pkts += 1;
            self.stats.udp_bytes += bytes as u64;
        }
        self.stats.queue_delay_sum += waited as u128;
        self.stats.busy_ns += t as u128;
    }

    /// Count the start of a transmission; returns when it ends (`busy_until`).
    pub fn start_tx(&mut self, now: Time, pkt: &Packet) -> Time {
        let bytes = pkt.wire_bytes();
        let t = self.ser_time(bytes);
        self.busy_until = now + t;
        self.count_sent(bytes, matches!(pkt.body, crate::net::Payload::Udp(_)), t, now - pkt.enqueued_at);
        self.busy_until
    }

    /// Close the time integrals at the end of the run.
    pub fn finish(&mut self, now: Time) {
        // A computed direction counts each packet's wait whole (`vfifo.rs`): nothing to close.
        if self.mode != EVENTS {
            return;
        }
        self.account_n(now, self.queue_len());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::packet::Segment;

    fn pkt(len: u32) -> Packet {
        Packet { body: crate::net::Payload::Tcp(Segment { len, ..Default::default() }), ..Default::default() }
    }

    #[test]
    fn tx_time_rounds_up() {
        let l = LinkDir::new("l".into(), NodeId(0), NodeId(1), 10_000_000, 0, QueueLimit::default(), 0.0, RngStream::new(1, "l"));
        // 1500 bytes at 10 Mb/s = 1.2 ms exactly.
        assert_eq!(l.tx_time(1500), 1_200_000);
        let l = LinkDir::new("l".into(), NodeId(0), NodeId(1), 3, 0, QueueLimit::default(), 0.0, RngStream::new(1, "l"));
        assert_eq!(l.tx_time(1), 2_666_666_667);
        // Longer than u64 nanoseconds holds: the longest time there is, not a wrapped one.
        let l = LinkDir::new("l".into(), NodeId(0), NodeId(1), 1, 0, QueueLimit::default(), 0.0, RngStream::new(1, "l"));
        assert_eq!(l.tx_time(u32::MAX), Time::MAX);
        assert_eq!(l.tx_time(2_000_000_000), 16_000_000_000_000_000_000);
    }

    /// The per-packet serialisation time, by one multiplication where the rate divides 8·10⁹
    /// and by the kept last size otherwise, is `tx_time`'s rounded-up division.
    #[test]
    fn ser_time_is_tx_time() {
        for rate in [1, 2, 3, 7, 8, 1_000, 56_000, 1_544_000, 10_000_000, 100_000_000, 1_000_000_000, 8_000_000_000, 10_000_000_000, 40_000_000_000] {
            let mut l = LinkDir::new("l".into(), NodeId(0), NodeId(1), rate, 0, QueueLimit::default(), 0.0, RngStream::new(1, "l"));
            for bytes in [0, 1, 40, 52, 1500, 1500, 65_535, 1 << 20, u32::MAX] {
                assert_eq!(l.ser_time(bytes), l.tx_time(bytes), "{bytes} B at {rate} b/s");
            }
        }
    }

    #[test]
    fn droptail_counts_waiting_packets_only() {
        let limit = QueueLimit { packets: Some(2), bytes: None };
        let mut l = LinkDir::new("l".into(), NodeId(0), NodeId(1), 1_000_000, 0, limit, 0.0, RngStream::new(1, "l"));
        let mut p = pkt(960);
        assert!(!l.busy(0, 1));
        assert!(l.admit(&mut p, false).is_ok()); // link idle: goes straight to the wire
        assert_eq!(l.start_tx(0, &p), 8_000_000);
        l.done_seq = 2;
        assert!(l.busy(0, 1));
        for i in 0..2 {
            assert!(l.admit(&mut p, true).is_ok());
            l.push(0, i, p.wire_bytes());
        }
        assert_eq!(l.admit(&mut p, true), Err(DropReason::Queue));
        // At the transmission's end the order of events decides: an event before the end (a
        // lower insertion number) still finds the transmitter busy, one after it finds it idle.
        assert!(l.busy(8_000_000, 1));
        assert!(!l.busy(8_000_000, 3));
        assert!(!l.busy(8_000_001, 0));
        assert_eq!(l.stats.offered_pkts, 4);
        assert_eq!(l.stats.dropped(), 1);
        assert_eq!(l.stats.dropped_bytes, 1000);
    }

    #[test]
    fn byte_limit() {
        let limit = QueueLimit { packets: None, bytes: Some(1500) };
        let mut l = LinkDir::new("l".into(), NodeId(0), NodeId(1), 1_000_000, 0, limit, 0.0, RngStream::new(1, "l"));
        let mut p = pkt(960);
        assert!(l.admit(&mut p, true).is_ok());
        l.push(0, 0, 1000);
        assert_eq!(l.admit(&mut p, true), Err(DropReason::Queue));
    }

    #[test]
    fn red_sees_the_queue_and_the_idle_time() {
        let mut l = LinkDir::new("l".into(), NodeId(0), NodeId(1), 1_000_000, 0, QueueLimit::default(), 0.0, RngStream::new(1, "l"));
        let spec = RedSpec { w_q: 0.5, min_th: 100.0, max_th: 200.0, ..Default::default() };
        l.set_red(Some(spec), RngStream::new(1, "red:l"));
        let avg = |l: &LinkDir| l.red.as_ref().unwrap().avg;
        let mut p = pkt(960);
        // The first packet finds the link idle and goes to the wire; three more queue behind it,
        // each seeing the queue before it joins: avg 0, 0, 0.5, 1.25.
        assert!(l.admit(&mut p, false).is_ok());
        l.start_tx(0, &p);
        for i in 0..3 {
            assert!(l.admit(&mut p, true).is_ok());
            l.push(0, i, p.wire_bytes());
        }
        assert_eq!(avg(&l), 1.25);
        // The transmitter drains the queue and goes idle at 20 ms; 8 ms later (two 500-byte
        // packet times at 1 Mb/s) an arrival decays avg by (1 − w_q)^2, then by (1 − w_q) for its
        // own update with q = 0.
        for _ in 0..3 {
            assert!(l.pop(10_000_000, |_| 1000).is_some());
        }
        assert!(l.pop(20_000_000, |_| 1000).is_none());
        l.busy_until = 20_000_000;
        p.enqueued_at = 28_000_000;
        assert!(l.admit(&mut p, false).is_ok());
        assert_eq!(avg(&l), 1.25 * 0.125);
        assert_eq!(l.stats.dropped(), 0);
    }

    #[test]
    fn time_average_queue() {
        let mut l = LinkDir::new("l".into(), NodeId(0), NodeId(1), 1_000_000, 0, QueueLimit::default(), 0.0, RngStream::new(1, "l"));
        l.push(10, 0, 100);
        l.push(20, 1, 100);
        l.pop(30, |_| 100);
        l.finish(40);
        // 1 packet for 10 ns, 2 for 10 ns, 1 for 10 ns.
        assert_eq!(l.stats.queue_pkt_ns, 40);
        assert_eq!(l.stats.queue_byte_ns, 4000);
    }
}
