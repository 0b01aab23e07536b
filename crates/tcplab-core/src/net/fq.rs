//! The fq queue discipline (Linux `net/sched/sch_fq.c`, 6.x; tc-fq(8)) on a link direction that
//! leaves a host: per-flow queues served round robin with a byte credit (`quantum`, new flows
//! first with `initial_quantum`), a per-flow and a total packet limit, and per-flow pacing. As in
//! 6.x, TCP stamps every packet with its earliest departure time (EDT, `tcp_wstamp_ns`, advanced
//! by `tcp_update_skb_after_send` at the socket's `sk_pacing_rate`) and fq holds the packet until
//! then; fq paces by its own clock only packets without a stamp (here UDP and forwarded packets)
//! at the socket's rate capped by `maxrate`, and any packet when `maxrate` is set.
//!
//! A flow is a connection's direction (the socket) or, for a packet without a local socket (one
//! forwarded by this node, a SYN-ACK of a listener), an "orphan" flow of its own.
//!
//! Not modelled (docs/tcp.md): the hash buckets (orphans of different connections never share a
//! flow; flows are never garbage-collected, `fq_gc`), the three priority bands (every packet is
//! in band 1, `TC_PRIO_BESTEFFORT`), `ce_threshold`, the watchdog's timer slack (it fires at the
//! exact time), `offload_horizon`, and the jiffies granularity of `flow_refill_delay`.

use crate::units::{Duration, Rate, Size, Time, SEC};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeSet, HashMap, VecDeque};

/// `psched_mtu` of a 1500-byte Ethernet device (MTU + the 14-byte hard header): fq's defaults
/// are multiples of it (`fq_init`).
pub const PSCHED_MTU: u64 = 1514;

/// fq's knobs as tc-fq(8) names them; defaults of `fq_init` (sch_fq.c).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FqSpec {
    /// `limit`: packets held in all (`sch->limit`, 10000); an arrival beyond it is dropped.
    pub limit: u64,
    /// `flow_limit`: packets held per flow (`flow_plimit`, 100).
    pub flow_limit: u64,
    /// `quantum`: the credit a flow gets each round (2 · psched_mtu = 3028 bytes).
    pub quantum: Size,
    /// `initial_quantum`: a new flow's first credit (10 · psched_mtu = 15140 bytes).
    pub initial_quantum: Size,
    /// `maxrate`: the cap on every flow's rate (none by default).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub maxrate: Option<Rate>,
    /// `low_rate_threshold` (550 kbit/s): a flow paced below it gets no credit burst.
    pub low_rate_threshold: Rate,
    /// `pacing` (true; tc's `nopacing` is false): fq paces at all (`rate_enable`).
    pub pacing: bool,
    /// `refill_delay` (40 ms): a flow idle longer gets at least a quantum of credit back.
    pub refill_delay: Duration,
    /// `horizon` (10 s): a packet stamped to leave further in the future is dropped
    /// (`horizon_drop`, the default) or held only that long (`horizon_drop = false`).
    pub horizon: Duration,
    pub horizon_drop: bool,
}

impl Default for FqSpec {
    fn default() -> Self {
        FqSpec {
            limit: 10_000,
            flow_limit: 100,
            quantum: Size(2 * PSCHED_MTU),
            initial_quantum: Size(10 * PSCHED_MTU),
            maxrate: None,
            low_rate_threshold: Rate(550_000),
            pacing: true,
            refill_delay: Duration(40_000_000),
            horizon: Duration(10 * SEC),
            horizon_drop: true,
        }
    }
}

impl FqSpec {
    /// Check the parameters; on error the key (under `fq`) and what is wrong.
    pub fn validate(&self) -> Result<(), (String, String)> {
        let err = |k: &str, m: &str| Err((k.to_string(), m.to_string()));
        if self.limit == 0 {
            return err("limit", "expected at least 1 packet");
        }
        if self.flow_limit == 0 {
            return err("flow_limit", "expected at least 1 packet");
        }
        // fq_change: "quantum > 0 && quantum <= (1 << 20)", else "invalid quantum".
        if self.quantum.0 == 0 || self.quantum.0 > 1 << 20 {
            return err("quantum", "expected a size above 0 and at most 1MiB (1048576 bytes)");
        }
        if self.initial_quantum.0 > i32::MAX as u64 {
            return err("initial_quantum", "expected at most 2147483647 bytes");
        }
        if self.maxrate.is_some_and(|r| r.0 == 0) {
            return err("maxrate", "expected a rate above 0 (leave it out for no cap)");
        }
        Ok(())
    }
}

/// Why fq refused a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FqDrop {
    /// `limit` reached (`FQDR(BAND_LIMIT)`).
    Limit,
    /// The flow's `flow_limit` reached (`FQDR(FLOW_LIMIT)`).
    FlowLimit,
    /// Stamped beyond the horizon (`FQDR(HORIZON_LIMIT)`).
    Horizon,
}

/// What fq counts (tc -s qdisc show's fq lines).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FqStats {
    /// Flows created.
    pub flows: u64,
    /// Times a flow was throttled (`throttled`).
    pub throttled: u64,
    /// Packets that took the fast path (`fastpath_packets`).
    pub fastpath_packets: u64,
    /// Drops at `limit`, at `flow_limit` (`flows_plimit`), beyond the horizon.
    pub dropped_limit: u64,
    pub dropped_flow_limit: u64,
    pub dropped_horizon: u64,
    /// Packets whose pacing delay was clamped to one second (`pkts_too_long`).
    pub pkts_too_long: u64,
}

/// Who a packet belongs to for fq: a connection's direction, and whether a local socket sent it
/// (`skb->sk` set and a full socket) or it is an orphan (forwarded, or a listener's SYN-ACK).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FlowKey {
    pub flow: u32,
    pub epoch: u32,
    pub dir: u8,
    pub orphan: bool,
}

/// A packet as fq sees it on arrival.
#[derive(Clone, Copy, Debug)]
pub struct FqPacket {
    pub idx: u32,
    pub bytes: u32,
    pub key: FlowKey,
    /// `skb->tstamp`: the departure time its socket stamped (TCP's EDT); 0 = none.
    pub tstamp: Time,
    /// The socket's `sk_pacing_rate`, bytes per second (None: `~0UL`, unlimited; and for an
    /// orphan, which has no socket).
    pub sk_rate: Option<u64>,
}

#[derive(Clone, Copy, Debug)]
struct Queued {
    idx: u32,
    bytes: u32,
    time_to_send: Time,
    tstamp: Time,
    sk_rate: Option<u64>,
    orphan: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Where {
    /// On no list (`fq_flow_set_detached`), since this time.
    Detached(Time),
    New,
    Old,
    Throttled,
}

#[derive(Debug)]
struct Flow {
    q: VecDeque<Queued>,
    credit: i64,
    time_next_packet: Time,
    at: Where,
}

/// What `dequeue` gives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Deq {
    /// This packet (pool index) leaves now.
    Packet(u32),
    /// Nothing may leave before this time (the watchdog's, `qdisc_watchdog_schedule_range_ns`).
    Wait(Time),
    /// Nothing held.
    Empty,
}

/// The state of one fq qdisc.
#[derive(Debug)]
pub struct Fq {
    pub spec: FqSpec,
    flows: Vec<Flow>,
    index: HashMap<FlowKey, u32>,
    new_flows: VecDeque<u32>,
    old_flows: VecDeque<u32>,
    /// Throttled flows by the time their next packet may leave (`q->delayed`).
    delayed: BTreeSet<(Time, u32)>,
    /// The fast-path queue (`q->internal`).
    internal: VecDeque<(u32, u32)>,
    /// Packets held (`sch->q.qlen`), bytes held, and those in flow queues (`band_pkt_count`).
    pub qlen: usize,
    pub backlog: u64,
    band_pkts: u64,
    inactive_flows: usize,
    pub stats: FqStats,
    /// The watchdog's pending expiry, if armed (later events at other times are stale).
    pub watchdog: Option<Time>,
    quantum: i64,
}

impl Fq {
    pub fn new(spec: FqSpec) -> Fq {
        Fq {
            quantum: spec.quantum.0 as i64,
            spec,
            flows: Vec::new(),
            index: HashMap::new(),
            new_flows: VecDeque::new(),
            old_flows: VecDeque::new(),
            delayed: BTreeSet::new(),
            internal: VecDeque::new(),
            qlen: 0,
            backlog: 0,
            band_pkts: 0,
            inactive_flows: 0,
            stats: FqStats::default(),
            watchdog: None,
        }
    }

    /// `q->time_next_delayed_flow`: when the first throttled flow may send again.
    fn next_delayed(&self) -> Option<Time> {
        self.delayed.first().map(|&(t, _)| t)
    }

    /// `fq_fastpath_check`: the packet may bypass the flows (6.7+): it may leave now, and the
    /// qdisc is empty or no flow is eligible (all idle or throttled, fewer than 8 packets in the
    /// fast queue, no throttled flow due), and no `maxrate`.
    fn fastpath(&self, time_to_send: Time, now: Time) -> bool {
        if time_to_send > now {
            return false;
        }
        if self.qlen != 0 {
            if self.flows.len() != self.inactive_flows + self.delayed.len() {
                return false;
            }
            if self.internal.len() >= 8 {
                return false;
            }
            if self.next_delayed().is_some_and(|t| t <= now) {
                return false;
            }
        }
        self.spec.maxrate.is_none()
    }

    /// `fq_enqueue` (with `fq_classify` and `flow_queue_add`).
    pub fn enqueue(&mut self, now: Time, p: FqPacket) -> Result<(), FqDrop> {
        if self.band_pkts >= self.spec.limit {
            self.stats.dropped_limit += 1;
            return Err(FqDrop::Limit);
        }
        // `fq_packet_beyond_horizon`.
        let time_to_send = if p.tstamp == 0 {
            now
        } else if p.tstamp > now.saturating_add(self.spec.horizon.0) {
            if self.spec.horizon_drop {
                self.stats.dropped_horizon += 1;
                return Err(FqDrop::Horizon);
            }
            now + self.spec.horizon.0
        } else {
            p.tstamp
        };
        let q = Queued { idx: p.idx, bytes: p.bytes, time_to_send, tstamp: p.tstamp, sk_rate: p.sk_rate, orphan: p.key.orphan };
        if self.fastpath(time_to_send, now) {
            self.stats.fastpath_packets += 1;
            self.internal.push_back((p.idx, p.bytes));
            self.qlen += 1;
            self.backlog += p.bytes as u64;
            return Ok(());
        }
        let f = match self.index.get(&p.key) {
            Some(&f) => f,
            None => {
                // A new flow: detached, with `initial_quantum` of credit (`fq_classify`).
                let f = self.flows.len() as u32;
                self.flows.push(Flow { q: VecDeque::new(), credit: self.spec.initial_quantum.0 as i64, time_next_packet: 0, at: Where::Detached(now) });
                self.index.insert(p.key, f);
                self.inactive_flows += 1;
                self.stats.flows += 1;
                f
            }
        };
        let flow = &mut self.flows[f as usize];
        if flow.q.len() as u64 >= self.spec.flow_limit {
            self.stats.dropped_flow_limit += 1;
            return Err(FqDrop::FlowLimit);
        }
        if let Where::Detached(since) = flow.at {
            // `fq_enqueue`: a detached flow joins the new flows; idle past `flow_refill_delay`
            // it gets at least a quantum back.
            flow.at = Where::New;
            self.new_flows.push_back(f);
            if now > since + self.spec.refill_delay.0 {
                flow.credit = flow.credit.max(self.quantum);
            }
        }
        if flow.q.is_empty() {
            self.inactive_flows -= 1;
        }
        // `flow_queue_add`: in time_to_send order, FIFO among equals.
        let pos = flow.q.iter().rposition(|x| x.time_to_send <= time_to_send).map_or(0, |i| i + 1);
        flow.q.insert(pos, q);
        self.band_pkts += 1;
        self.qlen += 1;
        self.backlog += p.bytes as u64;
        Ok(())
    }

    /// `fq_check_throttled`: throttled flows now due go to the tail of the old flows.
    fn check_throttled(&mut self, now: Time) {
        while let Some(&(t, f)) = self.delayed.first() {
            if t > now {
                break;
            }
            self.delayed.pop_first();
            self.flows[f as usize].at = Where::Old;
            self.old_flows.push_back(f);
        }
    }

    /// `fq_dequeue`: the next packet that may leave at `now`, or when one may.
    pub fn dequeue(&mut self, now: Time) -> Deq {
        if self.qlen == 0 {
            return Deq::Empty;
        }
        if let Some((idx, bytes)) = self.internal.pop_front() {
            self.qlen -= 1;
            self.backlog -= bytes as u64;
            return Deq::Packet(idx);
        }
        self.check_throttled(now);
        loop {
            // `fq_pband_head_select`: new flows before old ones.
            let new = !self.new_flows.is_empty();
            let Some(&f) = (if new { self.new_flows.front() } else { self.old_flows.front() }) else {
                return self.next_delayed().map_or(Deq::Empty, Deq::Wait);
            };
            let quantum = self.quantum;
            let flow = &mut self.flows[f as usize];
            if flow.credit <= 0 {
                // Out of credit: a quantum more, and to the tail of the old flows.
                flow.credit += quantum;
                flow.at = Where::Old;
                self.pop_head(new);
                self.old_flows.push_back(f);
                continue;
            }
            let Some(&first) = flow.q.front() else {
                // Empty: a new flow passes through the old ones once ("force a pass through
                // old_flows to prevent starvation"), an old one is detached.
                flow.at = if new { Where::Old } else { Where::Detached(now) };
                self.pop_head(new);
                if new {
                    self.old_flows.push_back(f);
                }
                continue;
            };
            let time_next_packet = first.time_to_send.max(flow.time_next_packet);
            if now < time_next_packet {
                // `fq_flow_set_throttled`.
                flow.time_next_packet = time_next_packet;
                flow.at = Where::Throttled;
                self.pop_head(new);
                self.delayed.insert((time_next_packet, f));
                self.stats.throttled += 1;
                continue;
            }
            let flow = &mut self.flows[f as usize];
            flow.q.pop_front();
            if flow.q.is_empty() {
                self.inactive_flows += 1;
            }
            self.band_pkts -= 1;
            self.qlen -= 1;
            self.backlog -= first.bytes as u64;
            let mut plen = first.bytes as u64;
            flow.credit -= plen as i64;
            if !self.spec.pacing {
                return Deq::Packet(first.idx);
            }
            // The rate fq paces this flow at: `maxrate`; for a packet without a departure
            // stamp, its socket's `sk_pacing_rate` under that cap (an orphan has no socket).
            let mut rate = self.spec.maxrate.map(|r| r.0 / 8);
            if first.tstamp == 0 {
                if !first.orphan {
                    rate = match (rate, first.sk_rate) {
                        (Some(a), Some(b)) => Some(a.min(b)),
                        (a, b) => a.or(b),
                    };
                }
                // `low_rate_threshold`: a slow flow loses its credit (one packet a round);
                // otherwise fq paces a flow only once its credit is spent, at least a
                // quantum's time apart.
                if rate.is_some_and(|r| r <= self.spec.low_rate_threshold.0 / 8) {
                    flow.credit = 0;
                } else {
                    plen = plen.max(self.quantum as u64);
                    if flow.credit > 0 {
                        return Deq::Packet(first.idx);
                    }
                }
            }
            if let Some(rate) = rate {
                let mut len = if rate > 0 { plen * SEC / rate } else { plen * SEC };
                // "clamp the delay to 1 second".
                if len > SEC {
                    len = SEC;
                    self.stats.pkts_too_long += 1;
                }
                // "Account for schedule/timers drifts": up to half of it for a late send.
                if flow.time_next_packet != 0 {
                    len -= (len / 2).min(now.saturating_sub(flow.time_next_packet));
                }
                flow.time_next_packet = now + len;
            }
            return Deq::Packet(first.idx);
        }
    }

    fn pop_head(&mut self, new: bool) {
        if new {
            self.new_flows.pop_front();
        } else {
            self.old_flows.pop_front();
        }
    }

    /// Flows known (`flows` of tc -s).
    pub fn flow_count(&self) -> usize {
        self.flows.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(flow: u32) -> FlowKey {
        FlowKey { flow, epoch: 1, dir: 0, orphan: false }
    }

    #[test]
    fn validation_names_the_key() {
        assert!(FqSpec::default().validate().is_ok());
        let s = FqSpec { quantum: Size(0), ..Default::default() };
        assert_eq!(s.validate().unwrap_err().0, "quantum");
        let s = FqSpec { flow_limit: 0, ..Default::default() };
        assert_eq!(s.validate().unwrap_err().0, "flow_limit");
    }

    #[test]
    fn an_empty_qdisc_takes_the_fast_path() {
        let mut q = Fq::new(FqSpec::default());
        q.enqueue(0, FqPacket { idx: 7, bytes: 1500, key: key(1), tstamp: 0, sk_rate: None }).unwrap();
        assert_eq!(q.stats.fastpath_packets, 1);
        assert_eq!(q.dequeue(0), Deq::Packet(7));
        assert_eq!(q.dequeue(0), Deq::Empty);
    }
}
