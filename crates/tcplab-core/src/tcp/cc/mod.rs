//! Congestion control: how the window grows on ACKs and what a congestion event does to it.
//!
//! The seam: a controller implements [`CongestionControl`]; the connection hands it the window
//! ([`Window`]: cwnd and ssthresh) at every hook and commits what it returns, so cwnd and
//! ssthresh are written only here (and, for the ns-2 agents' own arithmetic, in `tcp/legacy/`).
//! The hooks see an [`AckSample`] (what every algorithm needs from an ACK) or a
//! [`CongestionEvent`] (a loss detection, a timeout, an idle restart); a controller keeps its
//! own state across them (CUBIC's W_max and epoch, BBR's model). One file per algorithm:
//! `reno.rs` is RFC 5681 AIMD with RFC 3465 ABC.
//!
//! This module imports nothing from the rest of `tcp/` (the sender imports it), so no circle.

pub mod reno;

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
    /// It was retransmitted (RFC 8985 §6.1 step 2 then ignores it if its RTT is ambiguous).
    pub retransmitted: bool,
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

/// A congestion signal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CongestionEvent {
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
    /// Sending restarts after an idle period longer than the RTO (RFC 5681 §4.1).
    IdleRestart,
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
    /// The window the sender may have in flight.
    fn window(&self, w: &Window) -> u64 {
        w.cwnd
    }
    fn ssthresh(&self, w: &Window) -> u64 {
        w.ssthresh
    }
    /// Bytes per second to pace at; `None`: not paced (every controller so far).
    fn pacing_rate(&self, _w: &Window) -> Option<u64> {
        None
    }
    /// The controller reads `AckSample::rate` or `rack` (a BBR model): the sender then keeps the
    /// transmit record (`tcp/txq.rs`), which costs instructions on every packet, so a controller
    /// that does not read them (Reno) leaves it off and sees `None` there.
    fn wants_delivery_samples(&self) -> bool {
        false
    }
}

/// Half the window, min(cwnd, rwnd) / 2, at least 2·SMSS: ns-2's `slowdown(CLOSE_SSTHRESH_HALF)`
/// (tcp/tcp.cc), which halves `window()`; with `whole_segments` in whole segments as ns-2 does,
/// ⌊⌊W⌋/2⌋ (a window of 15.6 segments gives 7).
pub fn half_window(cwnd: u64, rwnd: u64, mss: u64, whole_segments: bool) -> u64 {
    let w = cwnd.min(rwnd);
    if whole_segments {
        (w / mss / 2).max(2) * mss
    } else {
        (w / 2).max(2 * mss)
    }
}
