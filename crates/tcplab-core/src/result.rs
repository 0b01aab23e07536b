//! What a run returns: one row per connection (flow), per link direction and per transfer, plus
//! the scenario as run. Times are in seconds, rates in bit/s, sizes in bytes. Rows serialise to
//! JSON records, or (the Python bindings) column by column through the same `Serialize`, so a
//! row holds scalars only: numbers, booleans, strings and options of them.

use crate::net::link::{LinkDir, LinkDirStats};
use crate::scenario::ResolvedFlow;
use crate::tcp::{ConnStats, TcpReceiver, TcpSender};
use crate::units::{to_secs, Time, SEC};
use serde::Serialize;
use std::sync::Arc;

#[derive(Clone, Debug, Serialize)]
pub struct RunResult {
    /// The scenario as run, every default written out.
    pub scenario: serde_json::Value,
    /// The resolved TCP configuration of each flow (flows that share one are given the same
    /// `Arc`; it serialises as the value itself).
    pub flows_tcp: Vec<Arc<serde_json::Value>>,
    pub meta: Meta,
    pub connections: Vec<ConnRow>,
    pub links: Vec<LinkRow>,
    pub transfers: Vec<TransferRow>,
    /// One row per object fetched by an application (`[[apps]]`); absent without applications.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub objects: Vec<ObjectRow>,
    /// One row per page fetched by a web client; absent without them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub pages: Vec<PageRow>,
    /// One row per UDP source (`kind = "onoff"` or `"cbr"`) and its sink; absent without them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub udp: Vec<UdpRow>,
    /// The time series (`[[series]]`), as columns; not in the JSON (see `series::Series::columns`).
    #[serde(skip)]
    pub series: Option<Box<crate::series::Series>>,
}

/// A UDP source and its sink: what was sent, delivered and dropped (whole IP packets, counted
/// after the warmup), and its rates.
#[derive(Clone, Debug, Serialize)]
pub struct UdpRow {
    /// The application's index (its label: after the flows) and the instance's name.
    pub app: usize,
    pub name: String,
    /// `"onoff"` or `"cbr"`.
    pub kind: String,
    pub src: String,
    pub dst: String,
    /// Sending rate while ON (CBR: always), bit/s.
    pub rate_bps: u64,
    /// The mean rate asked for (`mean_rate`, or this instance's share of `aggregate_rate`).
    pub target_mean_bps: Option<f64>,
    /// The long-run mean rate of the pattern at `rate_bps` (app/traffic.rs).
    pub expected_mean_bps: Option<f64>,
    /// Bits sent over the time the source was on (start or warmup, to stop or end).
    pub mean_bps: Option<f64>,
    pub sent_pkts: u64,
    pub sent_bytes: u64,
    pub delivered_pkts: u64,
    pub delivered_bytes: u64,
    pub dropped_pkts: u64,
    pub dropped_bytes: u64,
    /// Sent but neither delivered nor dropped when the run ended.
    pub in_flight_pkts: u64,
}

#[derive(Clone, Debug, Serialize)]
pub struct Meta {
    pub seed: u64,
    pub version: String,
    /// Simulated time at the end of the run.
    pub sim_time_s: f64,
    /// Events processed.
    pub events: u64,
    pub packets_created: u64,
    pub packets_delivered: u64,
    pub packets_dropped: u64,
    /// Packets that reached a flow after it had moved on to its next transfer.
    pub packets_stale: u64,
    pub packets_in_flight: u64,
    /// Every flow finished its transfers (false when the time limit ended the run).
    pub completed: bool,
}

/// One row per flow: its transfers' counters added up.
#[derive(Clone, Debug, Serialize)]
pub struct ConnRow {
    pub flow: usize,
    pub name: String,
    pub src: String,
    pub dst: String,
    pub variant: String,
    pub mss: u64,
    pub delayed_ack: bool,
    pub transfers: usize,
    pub transfers_completed: usize,
    pub segs_sent: u64,
    pub bytes_sent: u64,
    pub retransmits: u64,
    pub retransmitted_bytes: u64,
    pub bytes_delivered: u64,
    pub bytes_acked: u64,
    /// Segments acknowledged (bytes_acked / MSS).
    pub segs_acked: f64,
    pub timeouts: u64,
    pub fast_retransmits: u64,
    pub limited_transmits: u64,
    pub early_retransmits: u64,
    pub recoveries: u64,
    /// Time in recoveries (fast retransmit until the data outstanding then is acknowledged,
    /// or a timeout), seconds.
    pub recovery_time_s: f64,
    pub sack_retransmits: u64,
    /// Transfers that used SACK (negotiated in the handshake, or configured without one).
    pub sack_transfers: u64,
    pub ca_events: u64,
    pub non_ca_events: u64,
    pub other_losses: u64,
    pub syn_retransmits: u64,
    pub synack_retransmits: u64,
    pub acks_sent: u64,
    pub delack_timeouts: u64,
    pub ooo_segments: u64,
    pub dup_segments: u64,
    /// Window reductions for ECN-Echo (RFC 3168 §6.1.2) and data segments that arrived marked
    /// CE; written only when there are some, so that results without ECN keep their form.
    #[serde(skip_serializing_if = "is_zero")]
    pub ecn_reductions: u64,
    #[serde(skip_serializing_if = "is_zero")]
    pub ce_received: u64,
    /// Mathis et al. p: CA events per acknowledged segment.
    pub p_ca: Option<f64>,
    /// RTTM: mean, minimum and maximum of the connection's RTT samples (one timed segment at a
    /// time, Karn's rule), seconds.
    pub rtt_samples: u64,
    pub rtt_avg_s: Option<f64>,
    pub rtt_min_s: Option<f64>,
    pub rtt_max_s: Option<f64>,
    pub cwnd_max_bytes: u64,
    /// Time-averaged cwnd over the time the connections were open.
    pub cwnd_avg_bytes: Option<f64>,
    pub start_s: f64,
    pub first_byte_s: Option<f64>,
    /// When the last transfer completed (all data delivered in order), if it did.
    pub complete_s: Option<f64>,
    /// Bytes delivered in order, per second from the flow's start to its completion (or the end
    /// of the run), bit/s.
    pub goodput_bps: f64,
}

impl ConnRow {
    pub fn new(flow: usize, spec: &ResolvedFlow, nodes: &[String], s: &ConnStats, transfers: &[TransferRow], end: Time) -> ConnRow {
        ConnRow::measured(flow, spec, nodes, s, transfers, 0, end)
    }

    /// A row whose counters `s` cover [from, end] (a warmup excluded): goodput is over the part
    /// of that interval the flow was running.
    pub fn measured(flow: usize, spec: &ResolvedFlow, nodes: &[String], s: &ConnStats, transfers: &[TransferRow], from: Time, end: Time) -> ConnRow {
        let mss = spec.tcp.mss.0;
        let done: Vec<&TransferRow> = transfers.iter().filter(|t| t.delivered_s.is_some()).collect();
        let all_done = !transfers.is_empty() && done.len() == transfers.len() && spec.repeat.is_some_and(|n| transfers.len() as u32 >= n);
        let complete_s = if all_done { transfers.last().and_then(|t| t.delivered_s) } else { None };
        let start_s = to_secs(spec.start);
        let until = complete_s.unwrap_or(to_secs(end));
        let segs_acked = s.bytes_acked as f64 / mss as f64;
        ConnRow {
            flow,
            name: spec.name.clone(),
            src: nodes[spec.from].clone(),
            dst: nodes[spec.to].clone(),
            variant: serde_json::to_value(spec.tcp.variant).unwrap().as_str().unwrap_or("").to_string(),
            mss,
            delayed_ack: spec.tcp.delayed_ack,
            transfers: transfers.len(),
            transfers_completed: done.len(),
            segs_sent: s.segs_sent,
            bytes_sent: s.bytes_sent,
            retransmits: s.retransmits,
            retransmitted_bytes: s.retransmitted_bytes,
            bytes_delivered: s.bytes_delivered,
            bytes_acked: s.bytes_acked,
            segs_acked,
            timeouts: s.timeouts,
            fast_retransmits: s.fast_retransmits,
            limited_transmits: s.limited_transmits,
            early_retransmits: s.early_retransmits,
            recoveries: s.recoveries,
            recovery_time_s: s.recovery_ns as f64 / 1e9,
            sack_retransmits: s.sack_retransmits,
            sack_transfers: s.sack_transfers,
            ca_events: s.ca_events,
            non_ca_events: s.non_ca_events,
            other_losses: s.other_losses,
            syn_retransmits: s.syn_retransmits,
            synack_retransmits: s.synack_retransmits,
            acks_sent: s.acks_sent,
            delack_timeouts: s.delack_timeouts,
            ooo_segments: s.ooo_segments,
            dup_segments: s.dup_segments,
            ecn_reductions: s.ecn_reductions,
            ce_received: s.ce_received,
            p_ca: (segs_acked > 0.0).then(|| s.ca_events as f64 / segs_acked),
            rtt_samples: s.rtt_samples,
            rtt_avg_s: (s.rtt_samples > 0).then(|| s.rtt_sum_ns as f64 / s.rtt_samples as f64 / SEC as f64),
            rtt_min_s: (s.rtt_samples > 0).then(|| to_secs(s.rtt_min_ns)),
            rtt_max_s: (s.rtt_samples > 0).then(|| to_secs(s.rtt_max_ns)),
            cwnd_max_bytes: s.cwnd_max,
            cwnd_avg_bytes: (s.open_ns > 0).then(|| s.cwnd_integral as f64 / s.open_ns as f64),
            start_s,
            first_byte_s: transfers.iter().find_map(|t| t.first_byte_s),
            complete_s,
            goodput_bps: {
                let since = start_s.max(to_secs(from));
                if until > since { s.bytes_delivered as f64 * 8.0 / (until - since) } else { 0.0 }
            },
        }
    }
}

/// One row per transfer (a fresh connection each).
#[derive(Clone, Debug, Serialize)]
pub struct TransferRow {
    pub flow: usize,
    pub name: String,
    /// 1-based index of the transfer within its flow.
    pub transfer: u32,
    /// Bytes to transfer (None: unlimited).
    pub bytes: Option<u64>,
    pub bytes_delivered: u64,
    pub start_s: f64,
    /// Handshake complete at the sender (equals start without a handshake).
    pub established_s: Option<f64>,
    /// First data byte at the receiver.
    pub first_byte_s: Option<f64>,
    /// Last byte delivered in order at the receiver.
    pub delivered_s: Option<f64>,
    /// Everything (data and FIN) acknowledged at the sender.
    pub acked_s: Option<f64>,
    /// delivered_s − start_s: from the first packet of the connection to the last byte delivered.
    pub transfer_time_s: Option<f64>,
    /// The sender gave up after too many retransmissions (`syn_retries`, `data_retries`).
    pub aborted: bool,
    pub segs_sent: u64,
    pub retransmits: u64,
    pub timeouts: u64,
    pub fast_retransmits: u64,
    pub syn_retransmits: u64,
    pub synack_retransmits: u64,
    pub delack_timeouts: u64,
}

impl TransferRow {
    pub fn new(flow: usize, name: &str, transfer: u32, bytes: Option<u64>, start: Time) -> TransferRow {
        TransferRow {
            flow,
            name: name.to_string(),
            transfer,
            bytes,
            bytes_delivered: 0,
            start_s: to_secs(start),
            established_s: None,
            first_byte_s: None,
            delivered_s: None,
            acked_s: None,
            transfer_time_s: None,
            aborted: false,
            segs_sent: 0,
            retransmits: 0,
            timeouts: 0,
            fast_retransmits: 0,
            syn_retransmits: 0,
            synack_retransmits: 0,
            delack_timeouts: 0,
        }
    }

    pub fn fill(&mut self, s: &TcpSender, r: &TcpReceiver, acked: Option<Time>) {
        let c = &s.core.stats;
        self.bytes_delivered = r.stats.bytes_delivered;
        self.established_s = s.core.established_at.map(to_secs);
        self.first_byte_s = r.first_byte_at.map(to_secs);
        self.acked_s = acked.map(to_secs);
        self.transfer_time_s = self.delivered_s.map(|d| d - self.start_s);
        self.aborted = s.core.phase == crate::tcp::SenderPhase::Aborted;
        self.segs_sent = c.segs_sent;
        self.retransmits = c.retransmits;
        self.timeouts = c.timeouts;
        self.fast_retransmits = c.fast_retransmits;
        self.syn_retransmits = c.syn_retransmits;
        self.synack_retransmits = r.stats.synack_retransmits;
        self.delack_timeouts = r.stats.delack_timeouts;
    }
}

/// One row per link direction.
#[derive(Clone, Debug, Serialize)]
pub struct LinkRow {
    pub link: String,
    pub src: String,
    pub dst: String,
    pub rate_bps: u64,
    pub delay_s: f64,
    pub offered_pkts: u64,
    pub offered_bytes: u64,
    pub sent_pkts: u64,
    pub sent_bytes: u64,
    pub dropped_pkts: u64,
    pub dropped_bytes: u64,
    pub dropped_queue: u64,
    pub dropped_loss: u64,
    pub dropped_filter: u64,
    /// RED's probabilistic drops with min_th ≤ avg < max_th.
    pub dropped_red_early: u64,
    /// RED's drops with avg ≥ max_th (with `gentle`, the probabilistic ones above max_th too).
    pub dropped_red_forced: u64,
    /// Dropped / offered packets.
    pub drop_rate: Option<f64>,
    /// Time-averaged number of waiting packets (the one being sent excluded).
    pub avg_queue_pkts: f64,
    pub avg_queue_bytes: f64,
    pub max_queue_pkts: u64,
    /// Time average of RED's average queue (packets, or bytes with `queue_in_bytes`); None
    /// without RED.
    pub red_avg_mean: Option<f64>,
    /// Mean time from arrival to start of transmission of the packets sent.
    pub avg_queue_delay_s: Option<f64>,
    /// The time-averaged queue expressed as delay at the link rate (Mathis et al.'s "link delay").
    pub queue_delay_equiv_s: f64,
    /// Fraction of the run the transmitter was busy.
    pub utilization: f64,
    /// The UDP packets and bytes among those sent (the rest is TCP); written only when there are
    /// some, so that results of TCP-only runs keep their form (Python shows zeros and the
    /// shares in every case).
    #[serde(skip_serializing_if = "is_zero")]
    pub udp_pkts: u64,
    #[serde(skip_serializing_if = "is_zero")]
    pub udp_bytes: u64,
    /// Packets a `delays` filter held back before offering them here (written only when there
    /// are some, as the UDP counters).
    #[serde(skip_serializing_if = "is_zero")]
    pub delayed_filter: u64,
    /// ECN-capable packets marked CE instead of dropped (RED with `ecn`, or a `mark_threshold`;
    /// RFC 3168 §5), written only when there are some.
    #[serde(skip_serializing_if = "is_zero")]
    pub ce_marks: u64,
    /// An fq direction's counters over the whole run (warmup included), written only for fq
    /// (`net/fq.rs`): flows it created, times it throttled a flow, and its drops by cause
    /// (all counted in `dropped_queue` too).
    #[serde(skip_serializing_if = "is_zero")]
    pub fq_flows: u64,
    #[serde(skip_serializing_if = "is_zero")]
    pub fq_throttled: u64,
    #[serde(skip_serializing_if = "is_zero")]
    pub fq_dropped_limit: u64,
    #[serde(skip_serializing_if = "is_zero")]
    pub fq_dropped_flow_limit: u64,
    #[serde(skip_serializing_if = "is_zero")]
    pub fq_dropped_horizon: u64,
}

fn is_zero(x: &u64) -> bool {
    *x == 0
}

impl LinkRow {
    pub fn new(l: &LinkDir, nodes: &[String], end: Time) -> LinkRow {
        LinkRow::measured(l, &l.stats, nodes, 0, end)
    }

    /// A row whose counters `s` cover [from, end] (a warmup excluded).
    pub fn measured(l: &LinkDir, s: &LinkDirStats, nodes: &[String], from: Time, end: Time) -> LinkRow {
        let t = end.saturating_sub(from).max(1) as f64;
        let avg_q_bytes = s.queue_byte_ns as f64 / t;
        LinkRow {
            link: l.name.clone(),
            src: nodes[l.from.0 as usize].clone(),
            dst: nodes[l.to.0 as usize].clone(),
            rate_bps: l.rate_bps,
            delay_s: to_secs(l.delay),
            offered_pkts: s.offered_pkts,
            offered_bytes: s.offered_bytes,
            sent_pkts: s.sent_pkts,
            sent_bytes: s.sent_bytes,
            udp_pkts: s.udp_pkts,
            udp_bytes: s.udp_bytes,
            dropped_pkts: s.dropped(),
            dropped_bytes: s.dropped_bytes,
            dropped_queue: s.dropped_queue,
            dropped_loss: s.dropped_loss,
            dropped_filter: s.dropped_filter,
            delayed_filter: s.delayed_filter,
            ce_marks: s.ce_marks,
            fq_flows: l.fq.as_ref().map_or(0, |f| f.stats.flows),
            fq_throttled: l.fq.as_ref().map_or(0, |f| f.stats.throttled),
            fq_dropped_limit: l.fq.as_ref().map_or(0, |f| f.stats.dropped_limit),
            fq_dropped_flow_limit: l.fq.as_ref().map_or(0, |f| f.stats.dropped_flow_limit),
            fq_dropped_horizon: l.fq.as_ref().map_or(0, |f| f.stats.dropped_horizon),
            dropped_red_early: s.dropped_red_early,
            dropped_red_forced: s.dropped_red_forced,
            drop_rate: (s.offered_pkts > 0).then(|| s.dropped() as f64 / s.offered_pkts as f64),
            avg_queue_pkts: s.queue_pkt_ns as f64 / t,
            avg_queue_bytes: avg_q_bytes,
            max_queue_pkts: s.max_queue_pkts,
            red_avg_mean: l.red.as_ref().map(|r| r.avg_mean(end)),
            avg_queue_delay_s: (s.sent_pkts > 0).then(|| s.queue_delay_sum as f64 / s.sent_pkts as f64 / SEC as f64),
            queue_delay_equiv_s: avg_q_bytes * 8.0 / l.rate_bps as f64,
            utilization: (s.busy_ns as f64 / t).min(1.0),
        }
    }
}

/// One row per object an application fetched: a request and its response. Times are seconds from
/// the start of the run (None: it did not happen before the run ended).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ObjectRow {
    /// The application's index (its label: after the flows) and name.
    pub app: usize,
    /// The application's name (kept under this name for existing readers; `app_name` is the same).
    pub client: String,
    /// The application's name.
    pub app_name: String,
    /// The node the application's client runs on (its `client`, or a UDP source's `from`).
    pub client_node: String,
    /// 1-based number of the object among the application's.
    pub object: u32,
    /// A web client's page the object belongs to (1-based); None for plain exchanges.
    pub page: Option<u32>,
    pub request_bytes: u64,
    pub response_bytes: u64,
    /// The exchange began (the client opened its connection).
    pub start_s: f64,
    /// The request's first transmission left the client (T_GET of Seddigh et al.; after the
    /// handshake when there is one).
    pub request_s: Option<f64>,
    /// The response's first byte arrived at the client.
    pub first_byte_s: Option<f64>,
    /// The response's last byte was delivered in order at the client.
    pub delivered_s: Option<f64>,
    /// The response's last byte was acknowledged at the server (T_LAST_ACK).
    pub acked_s: Option<f64>,
    /// Seddigh et al.'s transfer time T_i = T_LAST_ACK − T_GET.
    pub transfer_time_s: Option<f64>,
    /// Response bytes delivered to the client.
    pub bytes_delivered: u64,
    /// Request bytes delivered to the server (an upload's file).
    pub request_delivered: u64,
    /// Data retransmissions and retransmission timeouts of the object's connection, both ends.
    pub retransmits: u64,
    pub timeouts: u64,
    /// The SYN or the SYN-ACK was retransmitted.
    pub handshake_retransmitted: bool,
    /// The request (data from the client) was retransmitted.
    pub request_retransmitted: bool,
    /// The connection gave up (R2 of RFC 1122 §4.2.3.5) before the exchange completed.
    pub aborted: bool,
}

/// One row per page a web client fetched: its primary object and its embedded objects.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct PageRow {
    pub app: usize,
    /// The application's name (as `app_name`; see `ObjectRow::client`).
    pub client: String,
    pub app_name: String,
    /// The node the web client runs on.
    pub client_node: String,
    /// 1-based number of the page among the client's.
    pub page: u32,
    /// The primary object's connection was opened.
    pub start_s: f64,
    /// The last object's response was delivered in full at the client (None: not before the
    /// end of the run).
    pub complete_s: Option<f64>,
    /// RFC 2415's web page delay: complete_s − start_s.
    pub delay_s: Option<f64>,
    /// Objects of the page (the primary and the embedded ones) delivered in full, and their
    /// response bytes.
    pub objects: u32,
    pub bytes: u64,
    /// Objects of the page started (their rows are in `objects`), and the response bytes that
    /// reached the client, a partial object's included: what a page cut short by the end of
    /// the run, or given up, did get.
    pub started: u32,
    pub bytes_delivered: u64,
    /// Every object of the page arrived (`complete_s` is set).
    pub complete: bool,
}
