//! Congestion control: how the window grows on ACKs and what a congestion event does to it.
//!
//! The seam: a controller implements [`CongestionControl`]; the connection hands it the window
//! ([`Window`]: cwnd and ssthresh) at every hook and commits what it returns, so cwnd and
//! ssthresh are written only here (and, for the ns-2 agents' own arithmetic, in `tcp/legacy/`).
//! The hooks see an [`AckSample`] (what every algorithm needs from an ACK) or a
//! [`CongestionEvent`] (a loss detection, a timeout, an idle restart); a controller keeps its
//! own state across them (CUBIC's W_max and epoch, BBR's model). One file per algorithm:
//! `reno.rs` is RFC 5681 AIMD with RFC 3465 ABC; `cubic.rs` is Linux's CUBIC with HyStart.
//!
//! This module imports nothing from the rest of `tcp/` (the sender imports it), so no circle.

pub mod bbr;
pub mod cubic;
pub mod dctcp;
pub mod hystartpp;
pub mod reno;

pub use bbr::Bbr;
pub use cubic::Cubic;
pub use dctcp::Dctcp;
pub use reno::Reno;

use crate::units::Time;

/// The congestion window and slow-start threshold, bytes: the controller's to change.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    pub cwnd: u64,
    pub ssthresh: u64,
}

/// What an ACK tells a controller (RFC 5681 §3.1's N, RFC 3465's bytes_acked, RFC 8985's and the
/// delivery-rate estimator's inputs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AckSample {
    pub now: Time,
    /// Bytes newly acknowledged cumulatively by this ACK (RFC 5681's N).
    pub acked: u64,
    /// Bytes newly SACKed by this ACK.
    pub sacked: u64,
    /// The round trip measured on this ACK, if one was.
    pub rtt: Option<Time>,
    /// Data outstanding after the ACK (RFC 5681 FlightSize).
    pub in_flight: u64,
    /// Data bytes cumulatively acknowledged so far on the connection.
    pub delivered: u64,
    /// The window was not what held the sender back when the ACK came (RFC 7661 §4.3).
    pub app_limited: bool,
    /// In slow start after a retransmission timeout (RFC 3465 §2.2: L = 1·SMSS).
    pub after_rto: bool,
    /// The delivery-rate sample of this ACK (draft-cheng-iccrg-delivery-rate-estimation §3.3,
    /// Linux `tcp_rate_gen()`), from the transmit record (`tcp/txq.rs`); `None` when the ACK
    /// delivered nothing or the interval is shorter than the smallest RTT.
    pub rate: Option<RateSample>,
    /// RACK's input (RFC 8985 §6.1 step 2): the most recently sent segment this ACK delivered.
    pub rack: Option<RackSample>,
    /// The smoothed RTT (Linux `tp->srtt_us`), if sampled (CUBIC's HyStart reads the pacing
    /// rate it gives).
    pub srtt: Option<Time>,
    /// The fields below are filled only for a controller that owns the window
    /// (`owns_window`, Linux's `cong_control`: BBR), on every ACK.
    /// Sequence space delivered so far, cumulatively or by SACK (Linux `tp->delivered`, in
    /// bytes; the transmit record's C.delivered).
    pub delivered_seq: u64,
    /// Sequence space marked lost so far (Linux `tp->lost`, in bytes).
    pub lost: u64,
    /// Data in the network before and after the ACK: FlightSize less SACKed bytes (Linux
    /// `rs->prior_in_flight` and `tcp_packets_in_flight`, in bytes, without the lost and
    /// retransmitted terms).
    pub prior_pipe: u64,
    pub pipe: u64,
    /// The sender's loss-recovery state (Linux `icsk_ca_state`).
    pub ca: CaPhase,
    /// The earliest departure time of the next send (Linux `tcp_wstamp_ns`); `now` when unpaced.
    pub wstamp: Time,
    /// The ACK's RTT sample may include a delayed ACK (Linux `FLAG_ACK_MAYBE_DELAYED`,
    /// `rs->is_ack_delayed`: one runt segment acknowledged, nothing SACKed before or now).
    pub ack_maybe_delayed: bool,
}

/// The loss-recovery state a controller that owns the window sees (Linux's `TCP_CA_Open`,
/// `TCP_CA_Recovery`, `TCP_CA_Loss`; Disorder counts as Open, as BBR only compares with Recovery).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum CaPhase {
    #[default]
    Open,
    Recovery,
    Loss,
}

/// A delivery-rate sample: `delivered` bytes over `interval` ns (the larger of the send and ACK
/// phases of the newest delivered segment's flight, draft §2.3).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RateSample {
    /// Sequence space delivered (cumulatively acknowledged or SACKed) in the interval.
    pub delivered: u64,
    pub interval: Time,
    /// The segment was sent while the application, not the window, limited the sender: a
    /// bandwidth model should not take a lower rate from it (draft §3.4).
    pub app_limited: bool,
    /// The segment the sample is taken from was retransmitted.
    pub retransmitted: bool,
    /// C.delivered when that segment was sent (`rs->prior_delivered`): BBR counts its rounds
    /// with it.
    pub prior_delivered: u64,
}

impl RateSample {
    /// Bytes per second.
    pub fn rate(&self) -> u64 {
        (self.delivered as u128 * 1_000_000_000 / self.interval.max(1) as u128) as u64
    }
}

/// RFC 8985 §6.1: RACK.xmit_ts and RACK.end_seq candidates from one ACK.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RackSample {
    /// When the segment was last (re)sent.
    pub xmit_ts: Time,
    /// One past its last sequence number.
    pub end_seq: u64,
    /// It was retransmitted.
    pub retransmitted: bool,
    /// RACK.rtt: the RTT of the last delivered record in Linux's order of `tcp_rack_advance`
    /// calls (the highest cumulatively acknowledged one, else the highest newly SACKed one), not
    /// necessarily the most recently sent one's (`txq.rs`).
    pub rtt: Time,
}

/// What the sender knows when it reacts to a congestion signal: the reductions of RFC 5681
/// §3.1 eq. 4 and ns-2's `slowdown()` need FlightSize, the receiver's window and the data
/// Limited Transmit sent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LossContext {
    /// RFC 5681 FlightSize.
    pub flight: u64,
    /// Bytes sent by Limited Transmit since the last new ACK (RFC 5681 §3.2 step 2 leaves them out).
    pub limited_transmit: u64,
    /// The receiver's advertised window.
    pub rwnd: u64,
}

/// Every ACK the sender processes, as Linux's `in_ack_event` hook sees it (`tcp_in_ack_event`
/// in `tcp_ack`), whatever the window and the recovery state: DCTCP counts the data delivered
/// with and without ECE here.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AckEvent {
    /// Bytes the ACK newly delivered (cumulatively acknowledged plus newly SACKed; Linux's
    /// `tp->delivered` counts them in packets).
    pub delivered: u64,
    /// The ACK carried ECN-Echo on an ECN connection (`CA_ACK_ECE`).
    pub ece: bool,
    /// SND.UNA after the ACK and SND.NXT (the highest sent + 1): a window of data ends when
    /// snd_una passes the snd_nxt of its start (`dctcp_update_alpha`).
    pub snd_una: u64,
    pub snd_nxt: u64,
}

/// A congestion signal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CongestionEvent {
    /// An ACK with ECN-Echo (RFC 3168 §6.1.2), at most once per window of data and not inside a
    /// loss recovery: reduce ssthresh and cwnd as for a loss ("just as a congestion loss"),
    /// without retransmitting (Linux `tcp_enter_cwr`: ssthresh from the controller's
    /// `ssthresh`). The controller sets both.
    Ecn(LossContext),
    /// A loss detected by duplicate ACKs or SACK (a fast retransmit): the new ssthresh. The
    /// recovery strategy sets the window it repairs with (`set_recovery_window`).
    FastRetransmit(LossContext),
    /// The retransmission timer expired with data outstanding. `first`: the first expiry of a
    /// run of timeouts (RFC 5681 §3.1: ssthresh held on a repeat); `reduced_in_window`: the
    /// window was already reduced in this window of data; `inflation`: the bytes by which fast
    /// recovery has inflated cwnd at expiry (Reno's and NewReno's duplicate-ACK inflation, ns-2's
    /// `dupwnd_`; 0 outside recovery and for strategies that do not inflate).
    Timeout { ctx: LossContext, first: bool, reduced_in_window: bool, inflation: u64 },
    /// The SYN's retransmission timer expired.
    SynTimeout,
    /// The SYN or SYN-ACK was retransmitted: the initial window is one segment (RFC 5681 §3.1).
    HandshakeLoss,
    /// Sending restarts after an idle period longer than the RTO (RFC 5681 §4.1; Linux's
    /// `tcp_slow_start_after_idle_check`): `idle`, the time since data was last sent; `rto`,
    /// the retransmission timeout now.
    IdleRestart { now: Time, idle: Time, rto: Time },
    /// Data leaves with nothing in flight (Linux's `CA_EVENT_TX_START`, `tcp_event_data_sent`):
    /// `now`, and `since`, when data was last sent; `app_limited`: the delivery-rate estimator
    /// marks the connection application-limited (`tp->app_limited`). Reno ignores it; CUBIC
    /// shifts its epoch; BBR notes an idle restart.
    TxStart { now: Time, since: Time, app_limited: bool },
    /// Data was sent, or the window stopped the sender (Linux `tcp_cwnd_validate` after
    /// `tcp_write_xmit`); with `cwnd_validation = "linux"` only.
    Sent(SendRound),
}

/// A send round as Linux's `tcp_cwnd_validate` sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SendRound {
    pub now: Time,
    /// Bytes sent and not cumulatively acknowledged (Linux `packets_out`, in bytes).
    pub outstanding: u64,
    /// The window was used up (`tcp_packets_in_flight >= snd_cwnd`).
    pub cwnd_limited: bool,
    /// snd_una and snd_nxt (Linux's `cwnd_usage_seq` marks a window of data).
    pub snd_una: u64,
    pub snd_nxt: u64,
    pub rto: Time,
    /// No loss being repaired and no duplicate ACK outstanding (Linux TCP_CA_Open).
    pub open: bool,
}

/// RFC 2861's decay of a window the application does not use, as Linux does it
/// (`tcp_cwnd_validate` and `tcp_cwnd_application_limited`, net/ipv4/tcp_output.c): while the
/// window does not limit the sender (`tcp_is_cwnd_limited`: the last window of data filled it, or
/// in slow start cwnd < 2·`max_packets_out`), the most it had outstanding is remembered
/// (`snd_cwnd_used`); once an RTO has passed since the window last limited it (`snd_cwnd_stamp`),
/// and no loss is being repaired, ssthresh = max(ssthresh, ¾·cwnd) and cwnd = (cwnd + used)/2 with
/// used = max(`snd_cwnd_used`, IW). Counted in packets.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AppLimited {
    is_cwnd_limited: bool,
    max_packets_out: u64,
    cwnd_usage_seq: u64,
    cwnd_used: u64,
    /// `snd_cwnd_stamp`; None until the first send round.
    stamp: Option<Time>,
}

impl AppLimited {
    /// `tcp_cwnd_validate` on one send round.
    pub fn on_send(&mut self, w: &mut Window, r: &SendRound, iw: u64, mss: u64) {
        let stamp = *self.stamp.get_or_insert(r.now);
        let packets_out = r.outstanding.div_ceil(mss);
        if r.snd_una >= self.cwnd_usage_seq || r.cwnd_limited || (!self.is_cwnd_limited && packets_out > self.max_packets_out) {
            self.is_cwnd_limited = r.cwnd_limited;
            self.max_packets_out = packets_out;
            self.cwnd_usage_seq = r.snd_nxt;
        }
        let cwnd = (w.cwnd / mss).max(1);
        if self.is_cwnd_limited(w, mss) {
            self.cwnd_used = 0;
            self.stamp = Some(r.now);
            return;
        }
        self.cwnd_used = self.cwnd_used.max(packets_out);
        if r.now.saturating_sub(stamp) >= r.rto {
            // tcp_cwnd_application_limited: only in TCP_CA_Open.
            if r.open {
                let used = self.cwnd_used.max((iw / mss).max(1));
                if used < cwnd {
                    w.ssthresh = w.ssthresh.max(((cwnd >> 1) + (cwnd >> 2)) * mss);
                    w.cwnd = ((cwnd + used) >> 1) * mss;
                }
                self.cwnd_used = 0;
            }
            self.stamp = Some(r.now);
        }
    }

    /// `tcp_is_cwnd_limited` (include/net/tcp.h), from what the last send rounds recorded: the
    /// window limited them (`is_cwnd_limited`), or, in slow start (`tcp_in_slow_start`: cwnd <
    /// ssthresh), cwnd < 2·`max_packets_out` ("If in slow start, ensure cwnd grows to twice what
    /// was ACKed"). The gate of `cubictcp_cong_avoid` / `tcp_reno_cong_avoid` on every ACK, and
    /// of the decay in `tcp_cwnd_validate`.
    pub fn is_cwnd_limited(&self, w: &Window, mss: u64) -> bool {
        let cwnd = (w.cwnd / mss).max(1);
        self.is_cwnd_limited || (w.cwnd < w.ssthresh && cwnd < 2 * self.max_packets_out)
    }

    /// `tcp_cong_avoid`: "icsk->icsk_ca_ops->cong_avoid(sk, ack, acked); tcp_sk(sk)->snd_cwnd_stamp
    /// = tcp_jiffies32" — every ACK that may raise the window (`tcp_may_raise_cwnd`) outside a
    /// reduction restarts the clock of the decay, whether the window then grows or not.
    pub fn on_cwnd_stamp(&mut self, now: Time) {
        self.stamp = Some(now);
    }

    /// `tcp_cwnd_restart` ends with snd_cwnd_used = 0 and snd_cwnd_stamp = now.
    pub fn on_restart(&mut self, now: Time) {
        self.cwnd_used = 0;
        self.stamp = Some(now);
    }
}


pub trait CongestionControl: Send {
    fn name(&self) -> &'static str;
    /// An ACK of new data while the window may grow (outside loss recovery, or where a recovery
    /// strategy grows it).
    fn on_ack(&mut self, w: &mut Window, a: &AckSample);
    /// A congestion signal.
    fn on_congestion_event(&mut self, w: &mut Window, ev: CongestionEvent);
    /// The window a recovery strategy repairs a loss with (RFC 5681 §3.2's inflation and
    /// deflation, RFC 6582's partial-ACK deflation, RFC 6675 (4.2)). A controller may bound it.
    fn set_recovery_window(&mut self, w: &mut Window, cwnd: u64) {
        w.cwnd = cwnd;
    }
    /// Linux `icsk_ca_ops->undo_cwnd`, called by `tcp_undo_cwnd_reduction` when a reduction
    /// proved spurious: the window to go back to. Reno and CUBIC use `tcp_reno_undo_cwnd`,
    /// max(cwnd, prior_cwnd) (`prior_cwnd`: cwnd when the reduction began); DCTCP's
    /// `dctcp_cwnd_undo` takes the larger of cwnd and the cwnd at its last reduction, the same.
    /// Linux set `snd_cwnd_stamp` (`tcp_cong_avoid` on an ACK of new data outside a reduction,
    /// before the controller's own cwnd-limited test; the end or undo of a reduction; a
    /// timeout): Linux's window validation restarts its clock (`AppLimited::on_cwnd_stamp`).
    fn on_cwnd_stamp(&mut self, _now: Time) {}
    fn undo_cwnd(&mut self, w: &Window, prior_cwnd: u64) -> u64 {
        w.cwnd.max(prior_cwnd)
    }
    /// Whether an ACK may grow the window, where the controller keeps Linux's record of the send
    /// rounds (`cwnd_validation = "linux"`: `tcp_is_cwnd_limited`); None: the sender's own test
    /// (the window was full when the ACK came) applies.
    fn cwnd_limited(&self, _w: &Window) -> Option<bool> {
        None
    }
    /// The window the sender may have in flight.
    fn window(&self, w: &Window) -> u64 {
        w.cwnd
    }
    fn ssthresh(&self, w: &Window) -> u64 {
        w.ssthresh
    }
    /// The controller's own pacing rate, bytes per second (Linux's `sk_pacing_rate` set by the
    /// controller, as BBR does); `None`: the sender's `tcp_update_pacing_rate` applies.
    fn pacing_rate(&self, _w: &Window) -> Option<u64> {
        None
    }
    /// The controller needs pacing (Linux `SK_PACING_NEEDED`, set by BBR): the sender paces
    /// whatever the `pacing` knob says.
    fn needs_pacing(&self) -> bool {
        false
    }
    /// The controller decides the window on every ACK itself (Linux's `cong_control` hook, BBR's
    /// `bbr_main`): `on_ack` is then called for every ACK, in loss recovery and when the window
    /// was not the limit too, with the `AckSample` fields after `rack` filled in; the recovery
    /// strategy's window (`set_recovery_window`) is the controller's to take or leave.
    fn owns_window(&self) -> bool {
        false
    }
    /// After `on_ack` of a controller that owns the window: the controller asks the sender to
    /// mark the connection application-limited (BBR's PROBE_RTT sets `tp->app_limited`).
    fn take_app_limited_request(&mut self) -> bool {
        false
    }
    /// The connection is established: Linux `tcp_init_transfer` sets the initial window (one
    /// packet after a lost SYN or SYN-ACK) and then calls the controller's `init`
    /// (`tcp_init_congestion_control`), after the handshake's RTT sample, so `srtt` and
    /// `min_rtt` (`tcp_min_rtt`) are what the handshake measured (None without a sample).
    fn on_established(&mut self, _w: &mut Window, _now: Time, _srtt: Option<Time>, _min_rtt: Option<Time>) {}
    /// The run's seed and a name for this connection: a controller that draws (BBR's random
    /// PROBE_BW phase) takes its own stream (`engine::rng`). Called before data is sent.
    fn seed(&mut self, _seed: u64, _name: &str) {}
    /// Linux's `min_tso_segs` hook: the fewest segments a skb holds at pacing rate `rate`
    /// (default `sysctl_tcp_min_tso_segs` = 2; BBR: 1 below 1.2 Mbit/s).
    fn min_tso_segs(&self, _rate: u64) -> u32 {
        2
    }
    /// The controller's model for `info()` (BBR's mode, bandwidth and min_rtt).
    fn model(&self) -> Option<CcModel> {
        None
    }
    /// The controller reads `AckSample::rate` or `rack` (a BBR model): the sender then keeps the
    /// transmit record (`tcp/txq.rs`), which costs instructions on every packet, so a controller
    /// that does not read them (Reno) leaves it off and sees `None` there.
    fn wants_delivery_samples(&self) -> bool {
        false
    }
    /// Every ACK (Linux's `in_ack_event`): what it delivered and whether it carried ECE. The
    /// window is not changed here.
    fn on_ack_event(&mut self, _w: &Window, _e: &AckEvent) {}
    /// The controller needs ECN (Linux `TCP_CONG_NEEDS_ECN`): every packet of the connection is
    /// sent ECN-capable, pure ACKs and retransmissions too (`tcp_ecn_send`), and the receiver
    /// echoes CE as DCTCP's state machine does (RFC 8257 §3.2).
    fn needs_ecn(&self) -> bool {
        false
    }
    /// DCTCP's α in 1/1024 (Linux `dctcp_get_info`'s `dctcp_alpha`); `None` for the others.
    fn dctcp_alpha(&self) -> Option<u32> {
        None
    }
}

/// A model-based controller's state, for `info()` and the time series (Linux's
/// `tcp_bbr_info`: `bbr_bw`, `bbr_min_rtt`, `bbr_pacing_gain`, `bbr_cwnd_gain`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CcModel {
    /// BBR's mode: "startup", "drain", "probe_bw", "probe_rtt".
    pub mode: &'static str,
    /// The bandwidth estimate, bytes per second.
    pub bw: u64,
    /// The min_rtt estimate, ns (None before a sample).
    pub min_rtt: Option<Time>,
    /// Gains in units of 1/256 (BBR_UNIT).
    pub pacing_gain: u32,
    pub cwnd_gain: u32,
    /// The PROBE_BW gain-cycle phase (0..8).
    pub cycle_idx: u32,
    /// Packet-timed rounds so far (BBR's `rtt_cnt`).
    pub round: u32,
    /// The in-flight target at gain 1, packets (`bbr_inflight(bw, BBR_UNIT)`: BDP plus the
    /// quantization budget), which DRAIN drains to.
    pub inflight_target: u64,
    /// The long-term (policer) estimate is in use (`lt_use_bw`): `bw` is `lt_bw`.
    pub lt_use_bw: bool,
}

/// Half the window, min(cwnd, rwnd) / 2, at least 2·SMSS: ns-2's `slowdown(CLOSE_SSTHRESH_HALF)`
/// (tcp/tcp.cc), which halves `window()`; with `whole_segments` in whole segments as ns-2 does,
/// ⌊⌊W⌋/2⌋ (a window of 15.6 segments gives 7).
/// The window in segments of `old` bytes recounted in segments of `new` bytes (the timestamps
/// option agreed in the handshake shrinks the MSS before any data is sent: Linux counts cwnd and
/// ssthresh in packets, `tcp_sync_mss()` changes only their size). An unset ssthresh stays so.
pub fn rescale_window(w: &mut Window, old: u64, new: u64) {
    w.cwnd = (w.cwnd / old).max(1) * new;
    if w.ssthresh < u64::MAX / 8 {
        w.ssthresh = (w.ssthresh / old).max(2) * new;
    }
}

pub fn half_window(cwnd: u64, rwnd: u64, mss: u64, whole_segments: bool) -> u64 {
    let w = cwnd.min(rwnd);
    if whole_segments {
        (w / mss / 2).max(2) * mss
    } else {
        (w / 2).max(2 * mss)
    }
}

/// Linux's idle restart, `tcp_cwnd_restart` (net/ipv4/tcp_output.c; RFC 2861 §3's decay):
/// ssthresh = `tcp_current_ssthresh` = max(ssthresh, ¾·cwnd) (`(cwnd >> 1) + (cwnd >> 2)`),
/// then cwnd is halved once for every RTO in the idle time (`while ((delta -= rto) > 0 && cwnd >
/// restart_cwnd) cwnd >>= 1`), and never below the restart window min(IW, cwnd). Counted in
/// packets as Linux counts them (a fractional window is taken in whole segments, at least one).
/// Linux counts `delta` and the RTO in jiffies; here they are the simulator's nanoseconds.
pub fn linux_cwnd_restart(w: &mut Window, iw: u64, mss: u64, idle: Time, rto: Time) {
    let cwnd = (w.cwnd / mss).max(1);
    w.ssthresh = w.ssthresh.max(((cwnd >> 1) + (cwnd >> 2)) * mss);
    let restart = (iw / mss).max(1).min(cwnd);
    let mut c = cwnd;
    let mut delta = idle as i128;
    loop {
        delta -= rto.max(1) as i128;
        if delta <= 0 || c <= restart {
            break;
        }
        c >>= 1;
    }
    w.cwnd = c.max(restart) * mss;
}
