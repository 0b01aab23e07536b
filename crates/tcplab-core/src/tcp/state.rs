//! The state every congestion-control and recovery strategy reads and changes: the send half's
//! sequence space, window, scoreboard, timers and instruments (`SenderCore`), the segments it
//! hands out (`OutSeg`), and the rules shared by every strategy (RFC 5681, RFC 6298); it asks the
//! loss detector (`loss/`: RFC 5681's threshold, RFC 5827, RFC 6675 IsLost, RFC 3042) and keeps the
//! transmit record (`txq.rs`). `recovery/` and `legacy/` import this module, never `sender.rs`;
//! `cc/` imports neither (the controller sees the window and an `AckSample`, not the sender).

use super::cc::{self, AckEvent, AckSample, Bbr, CaPhase, CongestionControl, CongestionEvent, Cubic, Dctcp, LossContext, RackSample, RateSample, Reno, Window};
use super::config::TcpConfig;
use super::gate::{may_send, Ask, Limit, SendKind, SendWindow};
use super::loss::{DupThresh, LossDetection, LossView, Rack, RackInput, RackVerdict};
use super::pacing::{self, Pacer};
use super::rtt::RttEstimator;
use super::sack::Scoreboard;
use super::stats::ConnStats;
use super::tso;
use super::txq::TxQueue;
use crate::engine::Timer;
use crate::net::{PacketTag, SackBlock, Segment, ECN_ECT0, FLAG_ACK, FLAG_CWR, FLAG_ECE, FLAG_FIN, FLAG_PSH, FLAG_SYN, MAX_SACK_BLOCKS};
use crate::units::Time;
use std::collections::BTreeMap;

/// Linux `net.ipv4.tcp_max_reordering` (default 300): the most `tp->reordering` may reach.
const MAX_REORDERING: u32 = 300;

/// A segment to transmit and its drop-filter tag.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutSeg {
    pub seg: Segment,
    pub tag: PacketTag,
    /// A data segment's earliest departure time when an fq qdisc paces the connection
    /// (`skb->tstamp`, `Pacer::on_send`); 0 otherwise.
    pub edt: Time,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SenderPhase {
    Idle,
    SynSent,
    Established,
    /// All data (and the FIN) acknowledged.
    Done,
    /// Given up after too many retransmissions (RFC 1122 §4.2.3.5 R2).
    Aborted,
}

/// Bytes of an "unlimited" transfer: more than any simulation can send.
pub const UNLIMITED: u64 = 1 << 60;
/// MSS and SACK-permitted options on a SYN (4 + 2 bytes, padded to 8): the default of the
/// `syn_options` knob.
pub const SYN_OPTION_BYTES: u16 = super::config::SYN_OPTIONS_DEFAULT as u16;

/// What the retransmission timer is armed for: Linux multiplexes the RTO, RACK's reordering timer
/// and the tail loss probe on one timer (`icsk_pending`: `ICSK_TIME_RETRANS`,
/// `ICSK_TIME_REO_TIMEOUT`, `ICSK_TIME_LOSS_PROBE`; include/net/inet_connection_sock.h), so a
/// connection keeps one timer event for the three. Only `recovery/linux.rs` arms the other two.
/// The zero-window probe (`ICSK_TIME_PROBE0`) shares it too (`persist.rs`, from `sender.rs`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum XmitTimer {
    #[default]
    Retrans,
    ReoTimeout,
    LossProbe,
    Probe0,
}

/// A loss episode (Mathis et al. §5.2): from the first loss detection until everything outstanding
/// at that time (and at any later reduction inside it) is acknowledged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Episode {
    pub(super) end: u64,
    pub(super) reductions: u32,
    pub(super) timeout: bool,
}

/// The state every congestion-control and recovery strategy reads and changes.
pub struct SenderCore {
    /// The configuration, one copy shared by the connections configured alike.
    pub cfg: std::sync::Arc<TcpConfig>,
    pub mss: u64,
    pub phase: SenderPhase,
    pub now: Time,
    /// Oldest unacknowledged sequence number (RFC 793 SND.UNA).
    pub snd_una: u64,
    /// snd_una before the last new ACK (ns-2's `prev_highest_ack_`, for NewReno's ACK heuristic).
    pub prev_una: u64,
    /// Next sequence number to send (SND.NXT); pulled back to snd_una by a timeout (go-back-N).
    pub snd_nxt: u64,
    /// One past the highest sequence number sent (RFC 6675's HighData + 1).
    pub snd_max: u64,
    pub data_start: u64,
    /// One past the last data byte the application has given.
    pub data_end: u64,
    /// The application will write no more: with `cfg.fin` a FIN follows the last byte, and the
    /// send half is done once everything is acknowledged.
    pub closed: bool,
    /// The acknowledgment number our segments carry: the receive half's RCV.NXT once it is
    /// synchronised (the connection keeps it current; 1 after a handshake, 0 before any).
    pub ack_no: u64,
    /// The congestion window and slow-start threshold. Written only by the congestion
    /// controller (`cc`, through `commit_window`) and by the ns-2 agents in `tcp/legacy/`.
    pub cwnd: u64,
    pub ssthresh: u64,
    /// The congestion controller (tcp/cc/).
    pub cc: Box<dyn CongestionControl>,
    /// The loss detector (tcp/loss/).
    pub loss: Box<dyn LossDetection>,
    /// Of the ACK being processed: bytes it newly SACKed, the RTT it measured, whether the
    /// window was not the limit when it came (the controller's `AckSample`).
    pub(super) ack_sacked: u64,
    pub(super) ack_rtt: Option<Time>,
    /// This ACK's RTT sample may include a delayed ACK (`FLAG_ACK_MAYBE_DELAYED`).
    pub(super) ack_maybe_delayed: bool,
    pub(super) ack_app_limited: bool,
    /// Of the ACK being processed: its delivery-rate sample and RACK's newest delivered segment
    /// (from `txq`).
    pub(super) ack_rate: Option<RateSample>,
    pub(super) ack_rack: Option<RackSample>,
    /// Of the ACK being processed: its TSecr when the timestamps option is in use and it echoes
    /// one (RFC 7323 §4.1; Linux reads `rx_opt.rcv_tsecr` only when non-zero).
    pub(super) ack_tsecr: Option<u32>,
    /// Of the ACK being processed: its D-SACK block (RFC 2883 §4, with the `dsack` knob; Linux
    /// `tcp_check_dsack`: the first block below the ACK, or inside the second block).
    pub ack_dsack: Option<(u64, u64)>,
    /// Retransmissions other than tail loss probes (Linux `tcp_retransmit_skb`, which counts
    /// `undo_retrans` and stamps `retrans_stamp`; the probe goes through `__tcp_retransmit_skb`
    /// alone), and when the first one not yet read by the recovery (`recovery/undo.rs`) left.
    pub undo_retx: u64,
    pub undo_retx_at: Option<Time>,
    /// The segment being sent is a tail loss probe (`tlp.rs`).
    pub probe_tx: bool,
    /// The timestamps option is in use (RFC 7323: both SYNs carried it): 12 option bytes on
    /// every segment, the MSS 12 bytes smaller, TSecr RTT samples.
    pub ts_on: bool,
    /// RTT samples on every ACK from the transmit record (Linux `tcp_clean_rtx_queue()` →
    /// `tcp_ack_update_rtt()`, `rto_model = "linux"`), instead of one timed segment per RTT.
    pub(super) per_ack_rtt: bool,
    /// The FIN went out on the last data segment (`fin_with_data`, Linux `tcp_send_fin()`):
    /// a retransmission of that segment carries it again.
    pub(super) fin_on_data: bool,
    /// The transmit record: every segment in flight (tcp/txq.rs), kept while `txq_on`.
    pub txq: TxQueue,
    /// The transmit record is kept: the controller or the loss detector reads it (or a test or
    /// tool asked, `keep_transmit_record`). Off, the per-packet path does none of its work.
    pub(super) txq_on: bool,
    /// The connection paces its sends (the `pacing` knob, or a controller that needs it: Linux's
    /// `tcp_needs_internal_pacing`); the gate then asks `pacer` (tcp/pacing.rs).
    pub(super) pacing_on: bool,
    /// An fq qdisc paces the connection (Linux's `sk_pacing_status` = `SK_PACING_FQ`, set by
    /// `fq_classify` on its first packet): no internal pacing, but the departure time still
    /// advances (`tcp_update_skb_after_send`) and stamps every segment.
    pub(super) pacing_fq: bool,
    /// The controller owns the window (`CongestionControl::owns_window`, asked once).
    pub(super) cc_owns: bool,
    pub pacer: Pacer,
    /// The pacing timer (Linux's `tp->pacing_timer` hrtimer): a send the pacer held back.
    pub pacing_timer: Timer,
    pub(super) pacing_events: Vec<Time>,
    /// Of the ACK being processed: data in the network before it (`rs->prior_in_flight`).
    pub(super) ack_prior_pipe: u64,
    /// The receiver's advertised window.
    pub peer_wnd: u64,
    pub dupacks: u32,
    /// Linux `tp->reordering`: the reordering degree seen, in segments; starts at the
    /// `dupthresh` knob (`net.ipv4.tcp_reordering`, 3) and is raised by
    /// `check_sack_reordering` (`tcpi_reordering`).
    pub reordering: u32,
    /// Linux `tp->reord_seen`: deliveries found reordered by `check_sack_reordering`.
    pub reord_seen: u32,
    /// RFC 6582 `recover`, as an exclusive end (snd_max when it was set).
    pub recover: u64,
    pub in_recovery: bool,
    /// Bytes sent by Limited Transmit since the last new ACK (kept out of ssthresh).
    pub limited_transmit_bytes: u64,
    /// In slow start after a timeout (RFC 3465 §2.2: L = 1).
    pub slow_start_after_rto: bool,
    /// SACK is in use on this connection (RFC 2018 §2: offered in the SYN and agreed in the
    /// SYN-ACK, or configured for a flow without a handshake).
    pub sack_ok: bool,
    /// What the receiver has SACKed above snd_una.
    pub sb: Scoreboard,
    /// SACK blocks are not recorded until the next new cumulative ACK (ns-2 Sack1 after a
    /// timeout: its `timeout_` flag, tcp/tcp-sack1.cc).
    pub sack_ignored: bool,
    /// Go-back-N after a timeout skips SACKed data (RFC 6675 §5.1); off for ns-2's Sack1.
    pub gbn_skips_sacked: bool,
    /// ECN is in use (RFC 3168 §6.1.1: asked for in our SYN and agreed in the SYN-ACK, or the
    /// other way round; without a handshake, when this end asks for it).
    pub ecn_ok: bool,
    /// Every packet goes out ECN-capable, pure ACKs and retransmissions too (the controller
    /// needs ECN: DCTCP, Linux `tcp_ca_needs_ecn`).
    pub(super) ect_all: bool,
    /// A reduction for ECE was made: the next new data segment carries CWR (RFC 3168 §6.1.2,
    /// Linux `TCP_ECN_QUEUE_CWR`).
    pub(super) ecn_cwr_pending: bool,
    /// snd_max at the last ECE reduction: no other until snd_una reaches it (once per window
    /// of data, RFC 3168 §6.1.2; Linux's CWR state until `high_seq`).
    pub(super) ecn_high: u64,
    /// The ACK being processed carried ECE on an ECN connection: the window does not grow on
    /// it (RFC 3168 §6.1.2 "SHOULD NOT increase the congestion window").
    pub(super) ack_ece: bool,
    /// When data was last sent (RFC 5681 §4.1 restart window).
    pub(super) last_send_at: Time,
    /// Linux's `icsk_ca_state` is below Recovery (Open, Disorder, CWR): TSO deferral
    /// (`tso_defer`) may hold a send. The recovery in use keeps it (`recovery/linux.rs`).
    pub tso_may_defer: bool,
    /// With `tso_defer`: the end of the skb of two segments or more that `tcp_write_xmit` is
    /// sending (`start_skb`), whose last segment carries PSH (tcp/tso.rs `psh_at`).
    xmit_skb_end: Option<u64>,
    /// With `tso_defer`: the write queue the last write left (tcp/tso.rs `WriteQueue`).
    write_queue: Option<tso::WriteQueue>,
    /// When the current recovery began (its fast retransmit), until the data outstanding then
    /// is acknowledged or the timer expires.
    pub(super) recovery_since: Option<Time>,
    pub rtt: RttEstimator,
    pub rto_timer: Timer,
    /// What `rto_timer` is armed for (Linux `icsk_pending`); `Retrans` unless RACK-TLP armed it.
    pub xmit_timer: XmitTimer,
    /// The loss detector marks lost segments in the transmit record (RACK): `is_lost` reads
    /// the marks there.
    pub(super) loss_marks: bool,
    pub(super) timer_events: Vec<Time>,
    /// The segment being timed for RTTM: (its end sequence, when it was sent).
    pub(super) timed: Option<(u64, Time)>,
    pub(super) syn_sent_at: Time,
    pub(super) syn_tx: u32,
    pub(super) fin_tx: u32,
    /// Transmissions of retransmitted data segments, by segment number (pruned below snd_una).
    pub(super) tx_count: BTreeMap<u64, u32>,
    pub(super) consecutive_timeouts: u32,
    pub(super) episode: Option<Episode>,
    /// The next retransmission is the one that starts a window reduction (not an "other loss").
    pub(super) reduction_retx: bool,
    pub(super) cwnd_since: Time,
    pub stats: ConnStats,
    pub started_at: Option<Time>,
    pub established_at: Option<Time>,
    pub done_at: Option<Time>,
}

impl SenderCore {
    /// May the next segment leave now? The one send gate (`gate.rs`): every send loop asks it
    /// once per segment. `sent`: segments this send loop has already sent in reply to the
    /// present event.
    #[inline]
    pub fn send_gate(&self, sent: u32, a: Ask) -> bool {
        // Linux `tcp_pacing_check` (tcp_write_xmit, tcp_xmit_retransmit_queue): not before
        // `tcp_wstamp_ns`. The fast retransmission and NewReno's partial-ACK retransmission are
        // let through (they are not retried when held here; see tcp/pacing.rs).
        if self.pacing_on && !self.pacer.may_send(self.now) && !matches!(a.what, SendKind::FastRetransmit | SendKind::PartialAck) {
            return false;
        }
        may_send(&self.cfg, SendWindow { cwnd: self.cwnd, peer_wnd: self.peer_wnd }, sent, a)
    }

    pub(super) fn new(cfg: std::sync::Arc<TcpConfig>, bytes: Option<u64>) -> Self {
        let mss = cfg.mss.0;
        let mut rtt = RttEstimator::new(cfg.rto_initial.0, cfg.rto_min.0, cfg.rto_max.0, cfg.clock_granularity.0, cfg.timer_tick.0, cfg.rto_backoff);
        if cfg.rto_model == super::config::RtoModel::Ns2 && cfg.timer_tick.0 > 0 {
            rtt = rtt.ns2_model();
            if !cfg.ns2_rfc2988 {
                rtt = rtt.ns2_before_rfc2988();
            }
        }
        if cfg.rto_model == super::config::RtoModel::Linux {
            rtt = rtt.linux_model(crate::tcp::jiffies::Jiffies::of(&cfg));
        }
        let mut core = SenderCore {
            mss,
            phase: SenderPhase::Idle,
            now: 0,
            snd_una: 0,
            prev_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            data_start: 1,
            data_end: 1 + bytes.unwrap_or(UNLIMITED),
            closed: true,
            ack_no: cfg.handshake as u64,
            cwnd: cfg.initial_window.bytes(mss as u32),
            ssthresh: cfg.initial_ssthresh.get().unwrap_or(u64::MAX / 4),
            reordering: cfg.dupthresh,
            reord_seen: 0,
            cc: make_cc(&cfg),
            loss: match cfg.loss {
                super::config::LossModel::Dupthresh => Box::new(DupThresh::new(&cfg)) as Box<dyn LossDetection>,
                super::config::LossModel::Rack => Box::new(Rack::new(&cfg)),
            },
            ack_sacked: 0,
            ack_rtt: None,
            ack_maybe_delayed: false,
            ack_app_limited: false,
            ack_rate: None,
            ack_rack: None,
            ack_tsecr: None,
            ack_dsack: None,
            undo_retx: 0,
            undo_retx_at: None,
            probe_tx: false,
            ts_on: false,
            per_ack_rtt: false,
            fin_on_data: false,
            txq: TxQueue::default(),
            txq_on: false,
            pacing_on: false,
            pacing_fq: false,
            cc_owns: false,
            pacer: Pacer::default(),
            pacing_timer: Timer::default(),
            pacing_events: Vec::new(),
            ack_prior_pipe: 0,
            peer_wnd: cfg.rwnd.get().unwrap_or(u64::MAX / 4),
            dupacks: 0,
            recover: 0,
            in_recovery: false,
            limited_transmit_bytes: 0,
            slow_start_after_rto: false,
            sack_ok: cfg.sack && !cfg.handshake,
            sb: Scoreboard::default(),
            sack_ignored: false,
            gbn_skips_sacked: true,
            ecn_ok: cfg.ecn_asks() && !cfg.handshake,
            ect_all: false,
            ecn_cwr_pending: false,
            ecn_high: 0,
            ack_ece: false,
            last_send_at: 0,
            tso_may_defer: true,
            xmit_skb_end: None,
            write_queue: None,
            recovery_since: None,
            rtt,
            rto_timer: Timer::default(),
            xmit_timer: XmitTimer::Retrans,
            loss_marks: false,
            timer_events: Vec::new(),
            timed: None,
            syn_sent_at: 0,
            syn_tx: 0,
            fin_tx: 0,
            tx_count: BTreeMap::new(),
            consecutive_timeouts: 0,
            episode: None,
            reduction_retx: false,
            cwnd_since: 0,
            stats: ConnStats::default(),
            started_at: None,
            established_at: None,
            done_at: None,
            cfg,
        };
        // RACK's marks decide IsLost only under Linux's recovery (variant "sack"); with any other
        // variant the detector answers with the duplicate-ACK rules.
        core.loss_marks = core.loss.uses_transmit_record() && core.cfg.variant == super::config::Variant::Sack;
        // Linux's per-ACK RTT samples read the first send times the transmit record keeps.
        core.per_ack_rtt = core.cfg.rto_model == super::config::RtoModel::Linux;
        core.txq_on = core.cc.wants_delivery_samples() || core.cc.owns_window() || core.loss_marks || core.per_ack_rtt;
        core.pacing_on = core.cfg.pacing || core.cc.needs_pacing();
        core.cc_owns = core.cc.owns_window();
        core.ect_all = core.cc.needs_ecn();
        if core.cfg.timestamps && !core.cfg.handshake {
            core.use_timestamps();
        }
        core
    }

    /// The ECN part of an ACK on an ECN connection (`ece`: it carried ECN-Echo): the
    /// controller's every-ACK hook (Linux `in_ack_event`, DCTCP's α), then RFC 3168 §6.1.2's
    /// reaction: "The indication of congestion should be treated just as a congestion loss ...
    /// the TCP sender's congestion window should be reduced only once in response to a series
    /// of dropped and/or CE packets from a single window of data" — not inside a loss episode
    /// (the window was reduced for it), not again before snd_una passes the data outstanding at
    /// the last reduction: an ACK up to exactly that point acknowledges the window's own last
    /// segment, and its ECE is that window's (Linux holds CWR until "something *above*
    /// high_seq is ACKed", `tcp_fastretrans_alert`; ns-2's `ecn()` reacts to `seqno >
    /// recover_`). No retransmission; CWR on the next new data segment.
    /// `react`: false when the recovery strategy makes the reduction itself (`Caps::ecn_cwr`,
    /// Linux's CWR state): then only the controller's hook runs here.
    pub(super) fn ecn_ack(&mut self, delivered: u64, ece: bool, react: bool) {
        let e = AckEvent { delivered, ece, snd_una: self.snd_una, snd_nxt: self.snd_max };
        let w = self.window();
        self.cc.on_ack_event(&w, &e);
        self.ack_ece = ece;
        if !react || !ece || self.in_recovery || self.episode.is_some() || self.snd_una <= self.ecn_high {
            return;
        }
        self.cc_event(CongestionEvent::Ecn(self.loss_context()));
        self.ecn_high = self.snd_max;
        self.ecn_cwr_pending = true;
        self.stats.ecn_reductions += 1;
    }

    /// The IP ECN field of a segment we send (RFC 3168 §6.1.5: ECT on new data only, "MUST NOT
    /// set either ECT codepoint ... on retransmitted data packets", nor on pure ACKs, §6.1.4;
    /// Linux `tcp_ecn_send`: everything ECN-capable when the controller needs ECN).
    #[inline]
    pub fn ect_for(&self, new_data: bool) -> u8 {
        if self.ecn_ok && (new_data || self.ect_all) {
            ECN_ECT0
        } else {
            0
        }
    }

    /// The timestamps option is in use on this connection (RFC 7323 §3.2: both SYNs carried
    /// it, or configured without a handshake). Its 12 bytes come out of every segment's
    /// payload: Linux's `tcp_sync_mss()` / `tcp_current_mss()` take the MSS as the path's less
    /// `tcp_header_len` beyond 20 (mss_cache = advmss − 12: 1448 for an MSS of 1460). Called
    /// before any data is sent: the window, counted in segments until now, is rescaled to the
    /// smaller segment and the controller rebuilt for it.
    pub(super) fn use_timestamps(&mut self) {
        if self.ts_on {
            return;
        }
        self.ts_on = true;
        let old = self.mss;
        let mss = old - crate::net::TS_OPTION_BYTES as u64;
        let mut cfg = (*self.cfg).clone();
        cfg.mss = crate::units::Size(mss);
        self.cfg = std::sync::Arc::new(cfg);
        self.mss = mss;
        let mut w = self.window();
        cc::rescale_window(&mut w, old, mss);
        self.commit_window(w);
        self.cc = make_cc(&self.cfg);
    }

    /// Keep the transmit record (`txq`) although neither the controller nor the loss detector
    /// reads it (tests, tools). Call it before data is sent: records of earlier segments are
    /// not made up.
    pub fn keep_transmit_record(&mut self) {
        debug_assert!(self.snd_una >= self.snd_max, "keep_transmit_record() with data in flight");
        self.txq_on = true;
    }

    /// The connection is open for data (after the handshake, or at once without one).
    pub(super) fn begin_data(&mut self, out: &mut Vec<OutSeg>) {
        self.phase = SenderPhase::Established;
        self.established_at = Some(self.now);
        self.cwnd_since = self.now;
        self.stats.cwnd_max = self.stats.cwnd_max.max(self.cwnd);
        self.stats.sack_transfers += self.sack_ok as u64;
        self.snd_una = 1;
        self.prev_una = 1;
        self.snd_nxt = 1;
        self.snd_max = 1;
        // Data written before the handshake: Linux's write waits for it (sk_stream_wait_connect).
        self.queue_write(1, self.data_end.saturating_sub(1));
        self.send_available(out);
    }

    /// The connection ends (done or abandoned): close the instruments and the timer.
    pub(super) fn close(&mut self, phase: SenderPhase) {
        self.integrate_cwnd();
        self.close_episode();
        self.phase = phase;
        self.done_at = Some(self.now);
        self.rto_timer.cancel();
        self.pacing_timer.cancel();
    }

    /// The forward-most SACKed byte + 1 (FACK's snd.fack), at least snd_una.
    pub fn fack(&self) -> u64 {
        self.sb.highest().unwrap_or(self.snd_una).max(self.snd_una)
    }

    /// RFC 5681 FlightSize: data sent but not yet cumulatively acknowledged.
    pub fn flight_size(&self) -> u64 {
        self.snd_max - self.snd_una
    }

    /// Half the window, min(cwnd, rwnd) / 2, at least 2·SMSS: ns-2's `slowdown(CLOSE_SSTHRESH_HALF)`
    /// (tcp/tcp.cc), which halves `window()`; with `ssthresh_whole_segments` in whole segments
    /// as ns-2 does, ⌊⌊W⌋/2⌋ (a window of 15.6 segments gives 7).
    pub fn half_window(&self) -> u64 {
        self.half_window_of(self.cwnd)
    }

    /// `half_window()` of a congestion window `cwnd` other than the present one.
    pub fn half_window_of(&self, cwnd: u64) -> u64 {
        cc::half_window(cwnd, self.peer_wnd, self.mss, self.cfg.ssthresh_whole_segments)
    }

    /// The window as the controller sees it.
    fn window(&self) -> Window {
        Window { cwnd: self.cwnd, ssthresh: self.ssthresh }
    }

    /// Take the window a controller hook returned, keeping the instruments (maximum, time
    /// integral) right: the one place outside `tcp/cc/` and `tcp/legacy/` where cwnd and
    /// ssthresh are assigned.
    fn commit_window(&mut self, w: Window) {
        self.ssthresh = w.ssthresh; // the controller's window, committed
        if w.cwnd != self.cwnd {
            self.integrate_cwnd();
            self.cwnd = w.cwnd; // the controller's window, committed
            self.stats.cwnd_max = self.stats.cwnd_max.max(w.cwnd);
        }
    }

    /// What the controller needs to know of a loss.
    pub fn loss_context(&self) -> LossContext {
        LossContext { flight: self.flight_size(), limited_transmit: self.limited_transmit_bytes, rwnd: self.peer_wnd }
    }

    /// The controller's `on_ack` for `acked` bytes newly acknowledged by the ACK being processed.
    pub fn cc_on_ack(&mut self, acked: u64) {
        // A controller that owns the window sees every ACK once, in `cc_control`.
        if self.cc_owns {
            return;
        }
        let a = self.ack_sample(acked);
        let mut w = self.window();
        self.cc.on_ack(&mut w, &a);
        self.commit_window(w);
    }

    /// Linux's `snd_cwnd_stamp = tcp_jiffies32`: `tcp_cong_avoid` (an ACK that may raise the
    /// window, outside a reduction, whether it grows or not), `tcp_end_cwnd_reduction`,
    /// `tcp_undo_cwnd_reduction` and `tcp_enter_loss`: the controller's window validation
    /// restarts its clock.
    #[inline]
    pub fn cc_cwnd_stamp(&mut self) {
        // Only Linux's window validation keeps the stamp (`cwnd_validation = "linux"`).
        if self.cfg.cwnd_validation == super::config::CwndValidation::Linux {
            let now = self.now;
            self.cc.on_cwnd_stamp(now);
        }
    }

    /// Linux's `tcp_is_cwnd_limited` where the controller keeps it (`cwnd_validation =
    /// "linux"`); None: the sender's own test.
    pub(super) fn cc_cwnd_limited(&self) -> Option<bool> {
        self.cc.cwnd_limited(&self.window())
    }

    /// What every controller is told of the ACK being processed (`acked` bytes newly
    /// acknowledged); `cc_control` adds what a window-owning controller reads.
    #[inline]
    fn ack_sample(&self, acked: u64) -> AckSample {
        AckSample {
            now: self.now,
            acked,
            sacked: self.ack_sacked,
            rtt: self.ack_rtt,
            in_flight: self.flight_size(),
            delivered: self.stats.bytes_acked,
            app_limited: self.ack_app_limited,
            after_rto: self.slow_start_after_rto,
            rate: self.ack_rate,
            rack: self.ack_rack,
            srtt: self.rtt.srtt(),
            ..Default::default()
        }
    }

    /// Data in the network: FlightSize less what the receiver has SACKed (Linux
    /// `tcp_packets_in_flight` in bytes, without its lost and retransmitted terms).
    pub fn pipe_estimate(&self) -> u64 {
        let sacked = if self.sb.is_empty() { 0 } else { self.sb.sacked_bytes() };
        self.flight_size().saturating_sub(sacked)
    }

    /// Linux's recovery runs (`loss = "rack"`): the transmit record keeps Linux's per-segment marks
    /// (SACKed, lost, retransmitted) and counts in flight as `tcp_packets_in_flight` does.
    #[inline]
    pub(super) fn linux_marks(&self) -> bool {
        self.txq_on && self.cfg.loss == super::config::LossModel::Rack
    }

    /// What a controller that owns the window (BBR) reads as `tcp_packets_in_flight`: with
    /// Linux's recovery (`loss = "rack"`, whose transmit record keeps the lost marks) Linux's own
    /// count, packets out less SACKed and lost plus retransmissions in flight (`TxQueue::in_flight`);
    /// otherwise the pipe estimate. A recovery that has marked most of the window lost leaves
    /// little in flight, so PROBE_RTT's 4 packets are reached as soon as the kernel reaches them.
    pub(super) fn cc_in_flight(&self) -> u64 {
        if self.linux_marks() {
            self.txq.in_flight(self.snd_una)
        } else {
            self.pipe_estimate()
        }
    }

    /// Linux `tcp_cong_control` with a `cong_control` controller (BBR's `bbr_main`): the
    /// controller sees every ACK, `acked_sacked` bytes newly delivered, in whatever state
    /// (`ca`), and sets the window and its pacing rate.
    pub(super) fn cc_control(&mut self, acked: u64, ca: CaPhase) {
        let a = AckSample {
            delivered_seq: self.txq.delivered(),
            lost: self.txq.lost(),
            prior_pipe: self.ack_prior_pipe,
            pipe: self.cc_in_flight(),
            ca,
            wstamp: self.wstamp(),
            ack_maybe_delayed: self.ack_maybe_delayed,
            ..self.ack_sample(acked)
        };
        let mut w = self.window();
        self.cc.on_ack(&mut w, &a);
        self.commit_window(w);
        // BBR's PROBE_RTT: `tp->app_limited = (tp->delivered + tcp_packets_in_flight(tp)) ? : 1`.
        if self.cc.take_app_limited_request() {
            self.txq.check_app_limited(a.pipe);
        }
    }

    /// The pacing rate, bytes per second: the controller's own (`sk_pacing_rate` set by BBR), or
    /// Linux's `tcp_update_pacing_rate` from cwnd, ssthresh, packets out and SRTT (tcp/pacing.rs).
    /// None: no RTT yet, not paced.
    pub fn pacing_rate(&self) -> Option<u64> {
        let w = self.window();
        self.cc.pacing_rate(&w).or_else(|| {
            let mss = self.mss.max(1);
            pacing::linux_pacing_rate(mss, self.cwnd / mss, self.ssthresh / mss, self.flight_size().div_ceil(mss), self.rtt.srtt())
        })
    }

    /// A paced send of `len` bytes left now: the departure time of the next
    /// (`tcp_update_skb_after_send`) and the pacing timer for a send the gate will hold.
    fn paced(&mut self, len: u64) -> Time {
        let rate = self.pacing_rate();
        let min_rtt = (self.stats.rtt_samples > 0).then_some(self.stats.rtt_min_ns);
        let goal = rate.map_or(pacing::MIN_TSO_SEGS, |r| pacing::tso_autosize(r, self.mss, min_rtt, self.cc.min_tso_segs(r)));
        let edt = self.pacer.on_send(self.now, len.max(1), rate, goal);
        if self.pacing_fq {
            return edt;
        }
        if self.pacer.next > self.now {
            if let Some(t) = self.pacing_timer.set(self.pacer.next) {
                self.pacing_events.push(t);
            }
        }
        edt
    }

    /// The connection paces its sends itself (internal pacing: `tcp_needs_internal_pacing`).
    #[inline]
    pub fn pacing_on(&self) -> bool {
        self.pacing_on
    }

    /// An fq qdisc paces the connection (`SK_PACING_FQ`).
    #[inline]
    pub fn pacing_fq(&self) -> bool {
        self.pacing_fq
    }

    /// `fq_classify` on the connection's first packet through an fq qdisc: `sk_pacing_status` =
    /// `SK_PACING_FQ`, so `tcp_needs_internal_pacing` is false from now on (no pacing timer, no
    /// hold at the gate: a BBR sender is paced once, by fq) while `tcp_update_skb_after_send`
    /// keeps advancing the departure time that stamps each segment.
    pub fn set_pacing_fq(&mut self) {
        self.pacing_fq = true;
        self.pacing_on = false;
    }

    /// `tcp_wstamp_ns` as a segment sent now gets it: `max(tcp_wstamp_ns, now)`; the departure
    /// time advances only while something paces the connection (`sk_pacing_status` not NONE).
    pub fn wstamp(&self) -> Time {
        if self.pacing_on || self.pacing_fq {
            self.pacer.next.max(self.now)
        } else {
            self.now
        }
    }

    /// The pacing timer's events the world must schedule (drained).
    pub fn take_pacing_events(&mut self) -> std::vec::Drain<'_, Time> {
        self.pacing_events.drain(..)
    }

    /// The transmit record's part of an ACK (tcp/txq.rs): the records it delivers, newly SACKed
    /// (`newly_sacked` > 0: the merged scoreboard ranges its blocks fall in) or cumulatively
    /// acknowledged (`advanced`); an ACK that advances nothing ends here, one that does ends in
    /// `on_new_ack` after its RTT sample.
    /// The SACK blocks of `seg` as the scoreboard takes them: as sent, or with Linux's
    /// recovery (`loss = "rack"`) only the whole segments each covers (`tcp_match_skb_to_sack`,
    /// `TxQueue::whole_records`): a block holding part of a segment does not SACK it, and a
    /// retransmission resends it whole.
    pub(super) fn sacktag_blocks(&self, seg: &Segment) -> ([SackBlock; MAX_SACK_BLOCKS], usize) {
        let mut out = [SackBlock::default(); MAX_SACK_BLOCKS];
        let mut n = 0;
        let whole = self.linux_marks();
        for b in seg.sack_blocks() {
            let kept = if whole { self.txq.whole_records(b.left, b.right) } else { Some((b.left, b.right)) };
            if let Some((left, right)) = kept {
                out[n] = SackBlock { left, right };
                n += 1;
            }
        }
        (out, n)
    }

    pub(super) fn txq_ack(&mut self, seg: &Segment, blocks: &[SackBlock], advanced: bool, newly_sacked: u64) {
        self.txq.set_min_rtt((self.stats.rtt_samples > 0).then_some(self.stats.rtt_min_ns));
        if newly_sacked > 0 {
            let una = seg.ack.max(self.snd_una);
            for b in blocks {
                if let Some((l, r)) = self.sb.range_at(b.left.max(una)).filter(|_| b.right > una) {
                    self.txq.on_sacked(self.now, l, r);
                }
            }
        }
        if advanced {
            self.txq.on_cum_ack(self.now, seg.ack);
        } else {
            if self.per_ack_rtt && newly_sacked > 0 {
                // A SACK-only ACK: tcp_clean_rtx_queue() runs on it too, with sack_rtt only.
                self.linux_ack_rtt(self.snd_una, false, 0);
            }
            self.take_ack_samples();
        }
    }

    /// Linux's RTT sample of one ACK (`rto_model = "linux"`): `tcp_clean_rtx_queue()` then
    /// `tcp_ack_update_rtt()` (net/ipv4/tcp_input.c, 6.x). In order of preference:
    /// - seq_rtt: from the oldest record this ACK cumulatively acknowledges that was never
    ///   retransmitted nor SACKed, unless it acknowledges any retransmitted one (Karn, RFC 6298
    ///   §3: FLAG_RETRANS_DATA_ACKED);
    /// - sack_rtt: from the lowest newly SACKed record never retransmitted (`first_sackt`);
    /// - with timestamps, "RTTM Rule: A TSecr value received in a segment is used ... only if
    ///   the segment acknowledges some new data" (RFC 7323 §4.1; `tcp_rtt_tsopt_us()`), which
    ///   Karn does not forbid (RFC 7323 §4.2: a retransmission carries a new TSval).
    /// ca_rtt (the newest such record; the TSecr value when that is the source) feeds the
    /// controller and the windowed min_rtt, seq_rtt the estimator. `una`: snd_una after the
    /// ACK; `advanced`: it acknowledged new data (FLAG_ACKED); `acked`: bytes it did.
    pub(super) fn linux_ack_rtt(&mut self, una: u64, advanced: bool, acked: u64) {
        let r = self.txq.take_rtt();
        let now = self.now;
        let (mut seq_rtt, mut ca_rtt) = match (r.first_ackt, r.last_ackt) {
            (Some(f), Some(l)) if !r.retrans_acked => (Some(self.rtt.measure(f, now)), Some(self.rtt.measure(l, now))),
            _ => (None, None),
        };
        let mut sack_rtt = None;
        if let (Some((_, f)), Some((_, l))) = (r.first_sackt, r.last_sackt) {
            sack_rtt = Some(self.rtt.measure(f, now));
            ca_rtt = Some(self.rtt.measure(l, now));
        }
        if seq_rtt.is_none() {
            seq_rtt = sack_rtt;
        }
        if seq_rtt.is_none() && advanced {
            if let Some(t) = self.ack_tsecr.and_then(|e| super::tsopt::rtt_from_tsecr(now, self.cfg.ts_offset.0, e)) {
                seq_rtt = Some(t);
                ca_rtt = Some(t);
            }
        }
        let Some(m) = seq_rtt else { return };
        let ca = ca_rtt.unwrap_or(m);
        // tcp_update_rtt_min(): skip a suspected delayed ACK (FLAG_ACK_MAYBE_DELAYED: one runt
        // segment acknowledged, nothing SACKed before or now) that would raise the minimum.
        let maybe_delayed = advanced && r.acked_records == 1 && acked < self.mss && self.sb.is_empty() && self.ack_sacked == 0;
        self.ack_maybe_delayed = maybe_delayed;
        if !(maybe_delayed && self.rtt.min_rtt().is_some_and(|mr| ca > mr)) {
            self.rtt.update_min_rtt(now, ca);
        }
        // tcp_rtt_estimator(), tcp_set_rto(), icsk_backoff = 0.
        self.rtt.sample_acked(m, una, self.snd_max);
        self.ack_rtt = Some(ca);
        record_rtt(&mut self.stats, m);
    }

    /// The end of an ACK's transmit-record processing: its delivery-rate sample and RACK's newest
    /// delivered segment, for the controller's `AckSample`.
    pub(super) fn take_ack_samples(&mut self) {
        let min_rtt = (self.stats.rtt_samples > 0).then_some(self.stats.rtt_min_ns);
        (self.ack_rate, self.ack_rack) = self.txq.end_ack(min_rtt);
    }

    /// The controller's `on_congestion_event`.
    pub fn cc_event(&mut self, ev: CongestionEvent) {
        let mut w = self.window();
        self.cc.on_congestion_event(&mut w, ev);
        self.commit_window(w);
    }

    /// The connection is established, the handshake's RTT sample taken and the initial window
    /// set: the controller's `init` (Linux `tcp_init_transfer` → `tcp_init_congestion_control`).
    pub fn cc_established(&mut self) {
        let mut w = self.window();
        let (now, srtt, min_rtt) = (self.now, self.rtt.srtt(), self.rtt.min_rtt());
        self.cc.on_established(&mut w, now, srtt, min_rtt);
        self.commit_window(w);
    }

    /// The window a recovery strategy repairs with (through the controller).
    pub fn set_recovery_window(&mut self, cwnd: u64) {
        let mut w = self.window();
        self.cc.set_recovery_window(&mut w, cwnd);
        self.commit_window(w);
    }

    /// Linux `tcp_undo_cwnd_reduction`'s window: cwnd from the controller (`undo_cwnd`), and
    /// ssthresh back to `prior_ssthresh` when that is larger (0: none kept, the window alone).
    pub fn undo_window(&mut self, prior_cwnd: u64, prior_ssthresh: u64) {
        let w = self.window();
        let cwnd = self.cc.undo_cwnd(&w, prior_cwnd);
        let ssthresh = if prior_ssthresh > w.ssthresh { prior_ssthresh } else { w.ssthresh };
        self.commit_window(Window { cwnd, ssthresh });
    }

    /// The ns-2 agents' own window arithmetic (tcp/legacy/ only): set cwnd.
    pub fn legacy_set_cwnd(&mut self, cwnd: u64) {
        self.commit_window(Window { cwnd, ssthresh: self.ssthresh });
    }

    /// The ns-2 agents' own window arithmetic (tcp/legacy/ only): set ssthresh.
    pub fn legacy_set_ssthresh(&mut self, ssthresh: u64) {
        self.commit_window(Window { cwnd: self.cwnd, ssthresh });
    }

    pub(super) fn integrate_cwnd(&mut self) {
        // cwnd is instrumented from the start of data (after the handshake, whose window may be
        // reset by a lost SYN before any of it is used).
        if self.established_at.is_some() && self.done_at.is_none() {
            let dt = (self.now - self.cwnd_since) as u128;
            self.stats.cwnd_integral += self.cwnd as u128 * dt;
            self.stats.open_ns += dt;
        }
        self.cwnd_since = self.now;
    }

    /// The sequence number after which nothing remains to send (data end, plus the FIN).
    pub fn final_seq(&self) -> u64 {
        self.data_end + self.fin_pending() as u64
    }

    /// A FIN goes after the last data byte (the application closed, and FINs are configured).
    pub fn fin_pending(&self) -> bool {
        self.cfg.fin && self.closed
    }

    /// Restart the retransmission timer from now. RFC 6298 §5: a segment is never retransmitted
    /// less than one RTO after its previous transmission, so a fast retransmit restarts it (as
    /// 4.4BSD and ns-2 do).
    pub fn restart_rto(&mut self) {
        self.rto_timer.cancel();
        self.arm_rto();
    }

    pub(super) fn arm_rto(&mut self) {
        self.xmit_timer = XmitTimer::Retrans;
        let d = self.rtt.deadline(self.now);
        if let Some(t) = self.rto_timer.set(d) {
            self.timer_events.push(t);
        }
    }

    pub(super) fn segment_number(&self, seq: u64) -> u64 {
        (seq - self.data_start) / self.mss + 1
    }

    pub(super) fn transmit_syn(&mut self, out: &mut Vec<OutSeg>) {
        self.syn_tx += 1;
        self.syn_sent_at = self.now;
        let mut seg = Segment { seq: 0, flags: FLAG_SYN, opt_len: self.cfg.syn_options as u16, wnd: u32::MAX, sack_permitted: self.cfg.sack, ..Default::default() };
        if self.cfg.ecn_asks() {
            // RFC 3168 §6.1.1: an ECN-setup SYN carries ECE and CWR; it is not itself
            // ECN-capable (§6.1.1.1), except from a controller that needs ECN (Linux
            // `tcp_ecn_send_syn` with `tcp_ca_needs_ecn`).
            seg.flags |= FLAG_ECE | FLAG_CWR;
            if self.ect_all {
                seg.ip_ecn = ECN_ECT0;
            }
        }
        out.push(OutSeg { seg, tag: PacketTag::Syn { tx: self.syn_tx }, edt: 0 });
        self.snd_nxt = 1;
        self.snd_max = 1;
        self.arm_rto();
    }

    /// Transmit the segment starting at `seq` (data, or the FIN at `data_end`); returns the
    /// sequence space it takes. A retransmission stops short of data the receiver has SACKed.
    pub fn transmit(&mut self, seq: u64, out: &mut Vec<OutSeg>) -> u64 {
        let retx = seq < self.snd_max;
        self.last_send_at = self.now;
        let (len, flags, tag) = if seq >= self.data_end {
            self.fin_tx += 1;
            (0u64, FLAG_ACK | FLAG_FIN, PacketTag::Fin { tx: self.fin_tx })
        } else {
            let mut len = self.mss.min(self.data_end - seq);
            if retx && self.sack_ok {
                // A segment that is itself SACKed is resent whole (ns-2's Sack1 goes back N over
                // SACKed data after a timeout).
                if let Some(n) = self.sb.next_sacked(seq).filter(|&n| n > seq) {
                    len = len.min(n - seq);
                }
            }
            let segno = self.segment_number(seq);
            let tx = if retx {
                let c = self.tx_count.entry(segno).or_insert(1);
                *c += 1;
                *c
            } else {
                1
            };
            self.stats.segs_sent += 1;
            self.stats.bytes_sent += len;
            // Linux `tcp_send_fin()`: a close with data still queued sets FIN on the tail skb,
            // so the FIN leaves with the last data segment (and a retransmission of that
            // segment carries it again); data all sent before the close gets a FIN of its own.
            let fin = self.cfg.fin_with_data && self.fin_pending() && seq + len == self.data_end && (self.fin_on_data || !retx);
            if fin {
                self.fin_on_data = true;
                self.fin_tx += 1;
            }
            // Linux's PSH marks (tcp/tso.rs): the end of a transmitted skb of two segments or
            // more, and the write queue's pushes.
            // A segment inside a skb of two or more gets none (`tcp_gso_segment`), whatever the
            // write queue marked there (`tcp_grow_skb` may have carried a mark's skb past it).
            let psh = self.cfg.tso_defer
                && match self.xmit_skb_end.filter(|_| !retx) {
                    Some(e) => e == seq + len,
                    None => self.write_mark_at(seq + len),
                };
            if !retx && self.xmit_skb_end.is_some_and(|e| seq + len >= e) {
                self.xmit_skb_end = None;
            }
            (len, FLAG_ACK | if fin { FLAG_FIN } else { 0 } | if psh { FLAG_PSH } else { 0 }, PacketTag::Data { seg: segno, tx })
        };
        if retx {
            if len > 0 {
                self.stats.retransmits += 1;
                self.stats.retransmitted_bytes += len;
            }
            if !self.probe_tx {
                self.undo_retx += 1;
                self.undo_retx_at.get_or_insert(self.now);
            }
            if self.episode.is_some() {
                if self.reduction_retx {
                    self.reduction_retx = false;
                } else {
                    self.stats.other_losses += 1;
                }
            }
            // Karn (RFC 6298 §3): a retransmission makes the timed segment's ACK ambiguous; stop
            // timing, as BSD does on both fast retransmit and timeout.
            if self.cfg.karn {
                self.timed = None;
            }
        } else if self.timed.is_none() {
            self.timed = Some((seq + len.max(1), self.now));
        }
        let end = seq + len + (flags & FLAG_FIN != 0) as u64;
        // The transmit record (tcp/txq.rs): a new record, or the records a retransmission covers.
        if self.txq_on {
            self.txq.on_send(self.now, seq, end, retx, self.snd_una >= self.snd_max);
        }
        if seq == self.snd_nxt {
            self.snd_nxt = end;
        }
        self.snd_max = self.snd_max.max(end);
        let edt = if self.pacing_on || self.pacing_fq { self.paced(len) } else { 0 };
        let mut seg = Segment { seq, ack: self.ack_no, len: len as u32, flags, wnd: u32::MAX, ..Default::default() };
        if self.ecn_ok {
            let new_data = !retx && len > 0;
            seg.ip_ecn = self.ect_for(new_data);
            // RFC 3168 §6.1.2: "the TCP sender MUST set the CWR flag in the TCP header of the
            // first new data packet sent after the window reduction" (Linux `tcp_ecn_send`).
            if new_data && self.ecn_cwr_pending {
                self.ecn_cwr_pending = false;
                seg.flags |= FLAG_CWR;
            }
        }
        out.push(OutSeg { seg, tag, edt: if self.pacing_fq { edt } else { 0 } });
        // RFC 6298 §5.1: start the timer when a segment is sent and it is not running.
        if !self.rto_timer.is_set() {
            self.arm_rto();
        }
        end - seq
    }

    /// Retransmit a hole the scoreboard shows (a SACK-directed retransmission); returns its length.
    pub fn retransmit_hole(&mut self, seq: u64, out: &mut Vec<OutSeg>) -> u64 {
        self.stats.sack_retransmits += 1;
        self.transmit(seq, out)
    }

    /// Can a previously unsent segment (or the FIN) go out now as far as the receiver's window
    /// and the application allow (congestion control aside)?
    pub fn can_send_new(&self) -> bool {
        if self.phase != SenderPhase::Established || self.snd_nxt != self.snd_max {
            return false;
        }
        if self.snd_max < self.data_end {
            let len = self.mss.min(self.data_end - self.snd_max);
            self.snd_max + len <= self.snd_una + self.peer_wnd && !self.nagle_holds(self.snd_max, len)
        } else {
            self.fin_pending() && self.snd_max == self.data_end
        }
    }

    /// Linux `tcp_write_xmit` with `tso_defer` (`tcp/tso.rs`), for the new data at snd_nxt when
    /// `in_flight` bytes are in the network: Err(why) if `tcp_tso_should_defer` holds the head skb
    /// for the next ACK, else the segments the next skb carries (`tcp_cwnd_test`,
    /// `tcp_tso_autosize`, the head skb's end), which leave without asking again.
    pub fn tso_next_skb(&self, in_flight: u64) -> Result<u64, tso::Deferred> {
        let mss = self.mss.max(1);
        let room = self.cwnd.saturating_sub(in_flight);
        if !self.cfg.tso_defer || self.snd_nxt >= self.data_end || room < mss {
            return Ok(1);
        }
        let (skb_len, tail) = self.head_skb(self.snd_nxt);
        let rate = self.pacing_rate();
        let min_rtt = (self.stats.rtt_samples > 0).then_some(self.stats.rtt_min_ns);
        let max_segs = rate.map_or(pacing::MIN_TSO_SEGS, |r| pacing::tso_autosize(r, mss, min_rtt, self.cc.min_tso_segs(r))) as u64;
        // tcp_grow_skb (Linux 6.10+, in tcp_write_xmit before the deferral test): a head skb
        // shorter than `min(tcp_cwnd_test, max_segs)` segments takes the missing bytes from the
        // next skb of the write queue, so a send is not cut at a write-queue skb's end.
        let want = tso::skb_segments(self.cwnd / mss, room / mss, max_segs, u64::MAX) * mss;
        let (skb_len, tail) = if skb_len < want && !tail {
            let (next_len, next_tail) = self.head_skb(self.snd_nxt + skb_len);
            let take = (want - skb_len).min(next_len);
            (skb_len + take, next_tail && take == next_len)
        } else {
            (skb_len, tail)
        };
        let skb_segs = skb_len.div_ceil(mss);
        // tcp_write_xmit: `if (tso_segs == 1) { Nagle } else { tcp_tso_should_defer }`.
        if skb_segs > 1 {
            let head_sent = self.txq.records().find(|r| r.end > self.snd_una).map(|r| r.last_sent);
            let v = tso::DeferView {
                now: self.now,
                last_xmit: self.last_send_at,
                recovering: !self.tso_may_defer || self.in_recovery,
                mss,
                cwnd_room: room,
                cwnd: self.cwnd,
                send_win: (self.snd_una + self.peer_wnd).saturating_sub(self.snd_nxt),
                snd_wnd: self.peer_wnd,
                skb_len,
                skb_is_tail: tail,
                skb_fin: tail && self.cfg.fin_with_data && self.fin_pending(),
                max_segs,
                head_sent,
                srtt: self.rtt.srtt().unwrap_or(0),
            };
            if let Some(why) = tso::defer(&v) {
                return Err(why);
            }
        }
        Ok(tso::skb_segments(self.cwnd / mss, room / mss, max_segs, skb_segs))
    }

    /// The write queue as one write made it (`tcp_xmit_size_goal`): its skbs' bytes, and the
    /// largest window the peer had offered then, at most what the SYN-ACK can offer unscaled.
    fn write_queue_goal(&self) -> (u64, u64) {
        let max_window = self.peer_wnd.min(u16::MAX as u64);
        (tso::size_goal(self.mss.max(1), max_window, pacing::GSO_MAX_SIZE), max_window)
    }

    /// The write queue's skb holding `seq` (tcp/tso.rs `WriteQueue`, or skbs of `size_goal` from
    /// the first byte when no write was recorded): its bytes from `seq`, and whether it is the
    /// last. The bytes the write's own pushes sent count as one skb up to the queue's first.
    fn head_skb(&self, seq: u64) -> (u64, bool) {
        if let Some(wq) = self.write_queue.as_ref().filter(|w| w.start <= seq && seq < w.end) {
            let q = wq.first_queued();
            if seq < q {
                return (q - seq, false);
            }
            if let Some((e, _)) = wq.skb_at(seq) {
                return (e - seq, e >= self.data_end);
            }
        }
        let (goal, _) = self.write_queue_goal();
        tso::head_skb(seq, 1, self.data_end, goal)
    }

    /// Whether the segment ending at `at` ends a write-queue skb that `tcp_mark_push` marked.
    fn write_mark_at(&self, at: u64) -> bool {
        if let Some(wq) = self.write_queue.as_ref().filter(|w| w.start < at && at <= w.end) {
            return wq.skb_at(at - 1) == Some((at, true));
        }
        let (goal, max_window) = self.write_queue_goal();
        tso::psh_at(at, 1, self.data_end, goal, max_window, None)
    }

    /// Linux `tcp_sendmsg_locked` for a write of `bytes` from `start` when the connection is
    /// open (tcp/tso.rs `WriteQueue`): where its skbs end and which carry PSH.
    fn queue_write(&mut self, start: u64, bytes: u64) {
        if !self.cfg.tso_defer || bytes == 0 || self.phase != SenderPhase::Established {
            return;
        }
        let mss = self.mss.max(1);
        let (goal, max_window) = self.write_queue_goal();
        let rate = self.pacing_rate();
        let min_rtt = (self.stats.rtt_samples > 0).then_some(self.stats.rtt_min_ns);
        let max_segs = rate.map_or(pacing::MIN_TSO_SEGS, |r| pacing::tso_autosize(r, mss, min_rtt, self.cc.min_tso_segs(r))) as u64;
        let in_flight = self.flight_size().div_ceil(mss);
        self.write_queue = Some(tso::WriteQueue::write(start, bytes, mss, goal, max_window, self.cwnd / mss, in_flight, max_segs));
    }

    /// `tcp_write_xmit` starts a skb of `segs` segments of new data at snd_max (`tso_next_skb`):
    /// one of two or more leaves as a GSO packet, its last segment with PSH.
    pub fn start_skb(&mut self, segs: u64) {
        self.xmit_skb_end = (segs > 1).then(|| (self.snd_max + segs * self.mss).min(self.data_end));
    }

    /// Nagle (RFC 896; RFC 1122 §4.2.3.4; ns-2 FullTcp `foutput()` with `nodelay_` false,
    /// tcp/tcp-full.cc): a new segment of `len` < MSS at `seq` waits while data is outstanding.
    /// A retransmission (below snd_max) and a full segment are never held.
    fn nagle_holds(&self, seq: u64, len: u64) -> bool {
        self.cfg.nagle && len < self.mss && seq >= self.snd_max && self.snd_una < self.snd_max
    }

    /// Send one previously unsent segment (or the FIN); returns the sequence space it takes.
    pub fn send_new(&mut self, out: &mut Vec<OutSeg>) -> u64 {
        let seq = self.snd_max;
        self.transmit(seq, out).max(1)
    }

    /// The application gives `bytes` more to send (a request or response, or data after the idle
    /// gap of RFC 5681 §4.1's restart window). Nothing can follow a FIN: a write after the
    /// application closed a connection that sends FINs is ignored.
    pub fn write(&mut self, now: Time, bytes: u64, out: &mut Vec<OutSeg>) {
        if self.fin_pending() {
            debug_assert!(false, "write() after close() on a connection that sends a FIN");
            return;
        }
        self.now = now;
        let start = self.data_end;
        self.data_end += bytes;
        if self.phase == SenderPhase::Done {
            self.phase = SenderPhase::Established;
            self.done_at = None;
            self.cwnd_since = now;
        }
        self.queue_write(start, bytes);
        self.send_available(out);
    }

    /// Send what the window allows from snd_nxt: new data, go-back-N retransmissions after a
    /// timeout, and the FIN after the last byte.
    pub fn send_available(&mut self, out: &mut Vec<OutSeg>) {
        if self.phase != SenderPhase::Established {
            return;
        }
        // RFC 5681 §4.1: after an idle period longer than the RTO, start again from the restart
        // window RW = min(IW, cwnd) (or Linux's `tcp_cwnd_restart`: the controller decides).
        let idle_since = (self.snd_una == self.snd_max && self.stats.segs_sent > 0).then_some(self.last_send_at);
        if self.cfg.restart_after_idle && self.snd_nxt < self.data_end && idle_since.is_some_and(|t| self.now - t > self.rtt.rto()) {
            self.cc_event(CongestionEvent::IdleRestart { now: self.now, idle: self.now - self.last_send_at, rto: self.rtt.rto() });
        }
        let mut burst = 0u32;
        let mut skb_left = 0u64;
        // tcp_tso_should_defer held the head skb because the window was the limit.
        let mut deferred_by_cwnd = false;
        loop {
            // The burst limit (the window is asked below, once the segment is known).
            if !self.send_gate(burst, Ask { used: 0, need: 0, limit: Limit::Clocked, burst: true, what: SendKind::Window }) {
                break;
            }
            // After a timeout, go-back-N skips what the receiver has SACKed since (RFC 6675 §5.1).
            if self.sack_ok && self.gbn_skips_sacked && self.snd_nxt < self.snd_max {
                let n = self.sb.next_unsacked(self.snd_nxt).min(self.snd_max);
                if n != self.snd_nxt {
                    self.snd_nxt = n;
                    continue;
                }
            }
            if self.snd_nxt < self.data_end {
                let len = self.mss.min(self.data_end - self.snd_nxt);
                let ask = Ask { used: self.snd_nxt - self.snd_una, need: len, limit: Limit::CwndRwnd, burst: false, what: SendKind::Window };
                if !self.send_gate(burst, ask) || self.nagle_holds(self.snd_nxt, len) {
                    break;
                }
                // Linux's TSO deferral: new data leaves a skb at a time, or waits for an ACK.
                if self.cfg.tso_defer && self.snd_nxt == self.snd_max {
                    if skb_left == 0 {
                        match self.tso_next_skb(self.snd_nxt - self.snd_una) {
                            Ok(n) => {
                                skb_left = n;
                                self.start_skb(n);
                            }
                            Err(why) => {
                                deferred_by_cwnd = why == tso::Deferred::Cwnd;
                                break;
                            }
                        }
                    }
                    skb_left -= 1;
                }
                self.transmit(self.snd_nxt, out);
                burst += 1;
            } else if self.fin_pending() && self.snd_nxt == self.data_end {
                // Linux queues a bare FIN as a skb of its own (`tcp_send_fin`) that
                // `tcp_write_xmit` gates like data: since 6.10 `tcp_cwnd_test` no longer exempts
                // "the final FIN" ("tcp: remove dubious FIN exception from tcp_cwnd_test()";
                // older kernels, and BSD's tcp_output, send it whatever the window), and
                // `tcp_snd_wnd_test` wants its one sequence number inside the peer's window.
                if self.cfg.fin_with_data && self.snd_nxt == self.snd_max {
                    let ask = Ask { used: self.snd_nxt - self.snd_una, need: 1, limit: Limit::CwndRwnd, burst: false, what: SendKind::Window };
                    if !self.send_gate(burst, ask) {
                        break;
                    }
                }
                self.transmit(self.snd_nxt, out);
                burst += 1;
            } else {
                break;
            }
        }
        // draft-cheng-iccrg-delivery-rate-estimation §3.4 `CheckIfApplicationLimited`: less than
        // a segment left to send, nothing waiting to be resent, and the window not full.
        if self.txq_on && self.snd_nxt >= self.snd_max && self.data_end.saturating_sub(self.snd_nxt) < self.mss && self.flight_size() < self.cwnd {
            self.txq.check_app_limited(self.flight_size());
        }
        // Linux `tcp_event_data_sent`: data left with nothing in flight (CA_EVENT_TX_START).
        if let Some(t) = idle_since.filter(|_| burst > 0) {
            self.cc_event(CongestionEvent::TxStart { now: self.now, since: t, app_limited: self.txq.app_limited_until() != 0 });
        }
        // Linux `tcp_write_xmit` → `tcp_cwnd_validate` (RFC 2861's application-limited decay),
        // when data was sent or the window stopped the sender: "is_cwnd_limited |=
        // (tcp_packets_in_flight(tp) >= tcp_snd_cwnd(tp))", after `tcp_tso_should_defer` set it
        // when it held a skb for want of cwnd.
        if self.cfg.cwnd_validation == super::config::CwndValidation::Linux {
            let cwnd_limited = self.snd_nxt - self.snd_una >= self.cwnd || deferred_by_cwnd;
            if burst > 0 || cwnd_limited {
                let open = !self.in_recovery && self.dupacks == 0 && self.episode.is_none();
                let r = cc::SendRound { now: self.now, outstanding: self.flight_size(), cwnd_limited, snd_una: self.snd_una, snd_nxt: self.snd_max, rto: self.rtt.rto(), open };
                self.cc_event(CongestionEvent::Sent(r));
            }
        }
    }

    /// What the loss detector sees (tcp/loss/). `newly_sacked`: bytes the ACK being processed
    /// newly SACKed.
    pub fn loss_view(&self, newly_sacked: u64) -> LossView<'_> {
        LossView {
            mss: self.mss,
            snd_una: self.snd_una,
            snd_nxt: self.snd_nxt,
            snd_max: self.snd_max,
            data_end: self.data_end,
            peer_wnd: self.peer_wnd,
            cwnd: self.cwnd,
            dupacks: self.dupacks,
            in_recovery: self.in_recovery,
            sack_ok: self.sack_ok,
            newly_sacked,
            sb: &self.sb,
        }
    }

    /// The loss detector's Limited Transmit on a duplicate ACK (RFC 3042 §2, `loss/dupthresh.rs`),
    /// through the send gate with the allowance beyond cwnd the detector names; cwnd is not
    /// changed.
    pub(super) fn limited_transmit(&mut self, newly_sacked: u64, out: &mut Vec<OutSeg>) {
        let Some(e) = self.loss.early_send(&self.loss_view(newly_sacked)) else { return };
        if !self.send_gate(0, Ask { used: e.used, need: e.len, limit: Limit::Allowance(e.allowance), burst: false, what: SendKind::LimitedTransmit }) {
            return;
        }
        self.stats.limited_transmits += 1;
        if e.new_data {
            self.limited_transmit_bytes += e.len;
        }
        self.transmit(e.seq, out);
    }

    /// Retransmit the first unacknowledged segment (fast retransmit, partial ACKs).
    pub fn retransmit_una(&mut self, out: &mut Vec<OutSeg>) {
        self.transmit(self.snd_una, out);
    }

    /// May a single transmission that the standards send whatever the window (`what`: the fast
    /// retransmission, RFC 5681 §3.2 step 2 and RFC 6675 (4.3); NewReno's partial-ACK
    /// retransmission, RFC 6582 §3.2 step 3) leave now? The send gate answers
    /// (`Limit::Unbounded`: no window applies, so today always yes; a pacer is where it may wait).
    #[inline]
    pub fn may_send_single(&self, what: SendKind) -> bool {
        self.send_gate(0, Ask { used: self.flight_size(), need: self.mss, limit: Limit::Unbounded, burst: false, what })
    }

    /// Count a loss detection in the current loss episode (opening one if needed).
    /// `changes_window`: it reduces the window now (a fast retransmit, a first timeout); its
    /// retransmission is then not an "other loss". A repeated timeout (cwnd already one segment,
    /// ssthresh held) changes nothing, so its retransmission is one.
    pub fn loss_reduction(&mut self, timeout: bool, changes_window: bool) {
        let snd_max = self.snd_max;
        match &mut self.episode {
            None => self.episode = Some(Episode { end: snd_max, reductions: !timeout as u32, timeout }),
            Some(e) => {
                if timeout {
                    e.timeout = true;
                } else {
                    e.reductions += 1;
                }
                e.end = e.end.max(snd_max);
            }
        }
        self.reduction_retx = changes_window;
    }

    pub(super) fn close_episode(&mut self) {
        if let Some(e) = self.episode.take() {
            if e.reductions == 1 && !e.timeout {
                self.stats.ca_events += 1;
            } else {
                self.stats.non_ca_events += 1;
            }
            self.reduction_retx = false;
        }
    }

    /// The duplicate-ACK threshold now (the loss detector's: RFC 5681 §3.2, lowered by RFC 5827
    /// Early Retransmit, `loss/dupthresh.rs`).
    pub fn dupthresh(&self) -> u32 {
        self.loss.dupthresh(&self.loss_view(0))
    }

    /// RFC 6675 §4 `IsLost(seq)`, as the loss detector decides it (RACK: the segment holding
    /// `seq` is marked lost in the transmit record, Linux's `TCPCB_LOST`).
    pub fn is_lost(&self, seq: u64) -> bool {
        if self.loss_marks && self.sack_ok {
            return self.txq.record_after(seq).is_some_and(|r| r.start <= seq && r.lost && !r.sacked);
        }
        self.loss.is_lost(&self.loss_view(0), seq)
    }

    /// Arm the one retransmission timer for `kind` at `at` (Linux `inet_csk_reset_xmit_timer`).
    pub fn reset_xmit_timer(&mut self, kind: XmitTimer, at: Time) {
        self.rto_timer.cancel();
        if let Some(t) = self.rto_timer.set(at) {
            self.timer_events.push(t);
        }
        self.xmit_timer = kind;
    }

    /// The time-based loss detector's pass over the transmit record (RFC 8985 §6.2, Linux
    /// `tcp_rack_mark_lost` on an ACK, `tcp_rack_reo_timeout` when `on_timer`): what it marked
    /// lost and how long until the next segment would be. `recovering`: in Recovery or Loss
    /// (Linux `icsk_ca_state >= TCP_CA_Recovery`); `prior_fack`: the highest SACKed sequence
    /// before this ACK (or snd_una).
    pub fn detect_losses(&mut self, recovering: bool, prior_fack: u64, on_timer: bool) -> RackVerdict {
        let min_rtt = (self.stats.rtt_samples > 0).then_some(self.stats.rtt_min_ns);
        let sacked = if self.sb.is_empty() { 0 } else { self.sb.sacked_bytes().div_ceil(self.mss) };
        let reord_low = if on_timer { u64::MAX } else { self.txq.take_reord() };
        if reord_low < prior_fack {
            self.check_sack_reordering(reord_low);
        }
        let i = RackInput {
            now: self.now,
            srtt: self.rtt.srtt(),
            min_rtt,
            recovering,
            sacked_segs: sacked,
            // tcp_rack_reo_wnd() reads tp->reordering.
            reordering: self.reordering,
            sample: if on_timer { None } else { self.ack_rack.take() },
            reord_low,
            prior_fack,
        };
        if on_timer {
            self.loss.on_reo_timeout(&i, &mut self.txq)
        } else {
            self.loss.on_ack(&i, &mut self.txq)
        }
    }

    /// Linux `tcp_check_sack_reordering()` (net/ipv4/tcp_input.c), called by `tcp_sacktag_write_queue`
    /// and `tcp_clean_rtx_queue` when a never-retransmitted segment starting at `low_seq` was
    /// delivered below the highest SACKed sequence before the ACK (`prior_fack`): "It's
    /// reordering when higher sequence was delivered (i.e. sacked) before some lower
    /// never-retransmitted sequence". The distance is measured to `tcp_highest_sack_seq()` now:
    /// the start of `tp->highest_sack`, which `tcp_advance_highest_sack` points at the segment
    /// after the highest SACKed one (snd_nxt when none follows), i.e. the end of the highest SACKed
    /// data; snd_una when nothing is SACKed. In whole segments rounded up it raises
    /// `tp->reordering` when above it, at most `sysctl_tcp_max_reordering` (300). The kernel's
    /// other writers are not modelled here: `tcp_check_reno_reordering` (no SACK), the partial
    /// undo's call (`tcp_try_undo_partial`) and the clamp back to `tcp_reordering` in
    /// `tcp_enter_loss`.
    fn check_sack_reordering(&mut self, low_seq: u64) {
        let fack = self.sb.highest().unwrap_or(self.snd_una).max(self.snd_una);
        if low_seq >= fack || self.mss == 0 {
            return;
        }
        let metric = fack - low_seq;
        if metric > u64::from(self.reordering) * self.mss {
            self.reordering = metric.div_ceil(self.mss).min(u64::from(MAX_REORDERING)) as u32;
        }
        // "This exciting event is worth to be remembered."
        self.reord_seen += 1;
    }

    /// Count a fast retransmit (and an Early Retransmit when the threshold was lowered); the
    /// segment at snd_una is marked lost in the transmit record.
    pub fn count_fast_retransmit(&mut self) {
        self.txq.mark_lost(self.snd_una, self.snd_una + 1);
        self.stats.fast_retransmits += 1;
        self.stats.recoveries += 1;
        self.recovery_since.get_or_insert(self.now);
        if self.dupacks < self.cfg.dupthresh && self.dupthresh() < self.cfg.dupthresh {
            self.stats.early_retransmits += 1;
        }
    }

    /// Fast retransmit with the window halved: the common entry of Reno and NewReno
    /// (RFC 5681 §3.2 steps 2–3, RFC 6582 §3.2 step 2).
    pub fn enter_fast_recovery(&mut self, out: &mut Vec<OutSeg>) {
        self.count_fast_retransmit();
        self.cc_event(CongestionEvent::FastRetransmit(self.loss_context()));
        self.recover = self.snd_max;
        self.loss_reduction(false, true);
        self.restart_rto();
        if self.may_send_single(SendKind::FastRetransmit) {
            self.retransmit_una(out);
        }
        // RFC 5681 §3.2 step 3: inflate by the segments that have left the network, one per
        // duplicate ACK (three at the standard threshold, fewer after an Early Retransmit).
        self.set_recovery_window(self.ssthresh + self.dupacks as u64 * self.mss);
        self.in_recovery = true;
    }
}

/// The congestion controller a configuration names.
fn make_cc(cfg: &TcpConfig) -> Box<dyn CongestionControl> {
    match cfg.cc {
        super::config::Cc::Reno => Box::new(Reno::new(cfg)),
        super::config::Cc::Cubic => Box::new(Cubic::new(cfg)),
        super::config::Cc::Bbr => Box::new(Bbr::new(cfg)),
        super::config::Cc::Dctcp => Box::new(Dctcp::new(cfg)),
    }
}

/// An RTT measurement of a segment sent at `sent` and acknowledged `now`. The estimator takes it
/// as the stack measures it (whole ticks with a coarse `timer_tick`); the RTTM instrument records
/// the exact round trip, so that the "TCP RTT" of Mathis et al. §5.2 is not inflated by the
/// tick (a 6 ms RTT reads as one 10 ms tick).
/// `una`: snd_una after the ACK that gave the sample (Linux's estimator ends an RTT on it).
pub(super) fn sample_rtt(c: &mut SenderCore, sent: Time, now: Time, una: u64) {
    let measured = c.rtt.measure(sent, now);
    c.rtt.sample_acked(measured, una, c.snd_max);
    if c.per_ack_rtt {
        c.rtt.update_min_rtt(now, measured);
    }
    record_rtt(&mut c.stats, now - sent);
}

/// The RTTM instrument: one RTT sample of `r`.
fn record_rtt(s: &mut ConnStats, r: Time) {
    s.rtt_min_ns = if s.rtt_samples == 0 { r } else { s.rtt_min_ns.min(r) };
    s.rtt_max_ns = s.rtt_max_ns.max(r);
    s.rtt_samples += 1;
    s.rtt_sum_ns += r as u128;
}
