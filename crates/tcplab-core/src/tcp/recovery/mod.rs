//! Loss recovery: once a loss is detected (`tcp/loss/`), what to retransmit and what to send
//! until it is repaired, and the window a strategy repairs with (through the controller,
//! `SenderCore::set_recovery_window`). The seam: a strategy implements [`Recovery`], one file
//! each — `tahoe.rs`, `reno.rs` (RFC 5681 §3.2), `newreno.rs` (RFC 6582), `rfc6675.rs` (RFC 6675,
//! SACK); the ns-2 agents whose recovery and window arithmetic are their own implement it in
//! `tcp/legacy/`. Every strategy is told what each ACK delivered (`on_delivered`, RFC 6937's
//! DeliveredData); `prr.rs` is Proportional Rate Reduction (RFC 9937, as Linux computes it), a
//! calculator any strategy can call (`rfc6675.rs` does with `reduction = "prr"`).
//!
//! Imports the sender's state (`state.rs`), never `sender.rs`, which owns the strategy.

pub mod linux;
pub mod newreno;
pub mod prr;
pub mod reno;
pub mod rfc6675;
pub mod tahoe;
pub mod tlp;
pub mod undo;

pub use linux::LinuxRecovery;
pub use newreno::NewReno;
pub use prr::{Prr, PrrAck};
pub use reno::Reno;
pub use rfc6675::Rfc6675;
pub use tahoe::Tahoe;

use super::state::SenderCore;
use super::state::{OutSeg, XmitTimer};

/// What the sender asks a strategy about once it is chosen: which of the core's shared rules it
/// takes over or changes. One value (`Recovery::caps`), defaults those of RFC 5681 and RFC 6582.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Caps {
    /// Duplicate ACKs are RFC 6675 §2's (an ACK with new SACK information) rather than RFC
    /// 5681 §2's (the same ACK number, no data, the same window).
    pub sack_dupacks: bool,
    /// The strategy sends its own segments on the first duplicate ACKs (the loss detector's RFC
    /// 3042 Limited Transmit stays out of the way).
    pub own_limited_transmit: bool,
    /// After a timeout, go-back-N skips data the receiver has SACKed since (RFC 6675 §5.1 allows
    /// it); ns-2's Sack1 resends everything.
    pub gbn_skips_sacked: bool,
    /// A timeout leaves the SACK scoreboard as it is (ns-2's SackRH, `TimeoutScoreBoard()` in
    /// tcp/scoreboard-rh.cc); otherwise it is cleared (RFC 2018 §8, RFC 6675 §5.1).
    pub keeps_scoreboard_on_timeout: bool,
    /// The strategy makes ECN's window reduction itself (Linux's CWR state, `tcp_enter_cwr`);
    /// otherwise the core reduces at once on an ECE ACK (RFC 3168 §6.1.2).
    pub ecn_cwr: bool,
    /// The strategy hands each ACK to a controller that owns the window (BBR,
    /// `SenderCore::cc_control`) itself, where Linux's `tcp_ack` calls `tcp_cong_control`: after
    /// its state machine (`tcp_fastretrans_alert`: the state entered or left, the losses marked)
    /// and before its sends (`tcp_xmit_recovery`). Otherwise the core does, before `send`.
    pub own_cc_control: bool,
}

impl Caps {
    pub const STANDARD: Caps = Caps { sack_dupacks: false, own_limited_transmit: false, gbn_skips_sacked: true, keeps_scoreboard_on_timeout: false, ecn_cwr: false, own_cc_control: false };
}

/// What an ACK delivered, for a strategy that paces its repair by it (RFC 6937 / RFC 9937 PRR:
/// "DeliveredData: the total number of bytes that the current ACK indicates have been delivered
/// to the receiver", (change in snd.una) + (change in SACKed bytes)).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Delivered {
    /// Bytes newly acknowledged cumulatively (the change in snd.una).
    pub acked: u64,
    /// Bytes newly SACKed by this ACK.
    pub sacked: u64,
    /// DeliveredData: `acked` plus the change in SACKed bytes (bytes SACKed before and now
    /// cumulatively acknowledged are not counted twice). Without SACK it is `acked`; RFC 6937
    /// §3's estimate for duplicate ACKs without SACK (one SMSS each) is the strategy's to make.
    pub data: u64,
}

pub trait Recovery: Send {
    fn name(&self) -> &'static str;
    /// Which of the core's shared rules the strategy takes over (read when asked, so a strategy
    /// replaced after the handshake answers for itself).
    fn caps(&self) -> Caps {
        Caps::STANDARD
    }
    /// Every ACK, once its SACK blocks are recorded and before the ACK is acted on
    /// (`on_dupack`, `on_ack_in_recovery`, `send`): what it delivered (RFC 6937's DeliveredData).
    fn on_delivered(&mut self, _s: &SenderCore, _d: Delivered) {}
    /// A duplicate ACK arrived; `s.dupacks` already counts it.
    fn on_dupack(&mut self, s: &mut SenderCore, out: &mut Vec<OutSeg>);
    /// New data was acknowledged while `s.in_recovery` (snd_una already advanced by `acked`).
    /// Returns whether the retransmission timer is restarted (RFC 6298 §5.3).
    fn on_ack_in_recovery(&mut self, s: &mut SenderCore, acked: u64, out: &mut Vec<OutSeg>) -> bool;
    /// The retransmission timer expired (the core has already reset cwnd and recovery state).
    fn on_timeout(&mut self, _s: &mut SenderCore) {}
    /// The retransmission timer expired on outstanding data, before the controller takes its
    /// new window (what a strategy keeps of the window to undo the reduction: Linux
    /// `tcp_enter_loss` takes `prior_ssthresh` and `prior_cwnd` first).
    fn before_timeout(&mut self, _s: &mut SenderCore) {}
    /// The bytes by which the strategy has inflated cwnd in the fast recovery now under way
    /// (ns-2's `dupwnd_`, which `RenoTcpAgent::window()` adds to `cwnd_`, tcp/tcp-reno.cc); 0
    /// outside recovery and for strategies that do not inflate. Asked when the timer expires.
    fn window_inflation(&self, _s: &SenderCore) -> u64 {
        0
    }
    /// Whether the sender is repairing a loss, as instruments and time series report it. The
    /// core's `in_recovery` flag, unless the strategy uses that flag for its own routing of ACKs.
    fn recovering(&self, s: &SenderCore) -> bool {
        s.in_recovery
    }
    /// The retransmission timer expired armed for something other than the RTO (RACK's
    /// reordering timer or the tail loss probe: Linux's `icsk_pending`, `tcp_retransmit_timer`'s
    /// siblings in `tcp_write_timer_handler`). Only a strategy that arms them is asked.
    fn on_xmit_timer(&mut self, s: &mut SenderCore, _kind: XmitTimer, _out: &mut Vec<OutSeg>) {
        s.restart_rto();
    }
    /// The application's write (or close, or the opening of the connection) has let segments
    /// go out through `send_available` (Linux `tcp_write_xmit` → `tcp_schedule_loss_probe`).
    fn after_app_send(&mut self, _s: &mut SenderCore) {}
    /// Whether a new ACK outside recovery grows cwnd (the controller's `on_ack`), asked after
    /// the ACK's SACK blocks are recorded. ns-2's Fack takes a new ACK that carries SACK blocks
    /// for a duplicate (`oldack()`, no `opencwnd()`, tcp/tcp-fack.cc).
    fn grows_on_new_ack(&self, _s: &SenderCore) -> bool {
        true
    }
    /// New data was acknowledged outside recovery (snd_una already advanced), before the
    /// controller grows cwnd: a strategy that inflated cwnd on duplicate ACKs outside recovery
    /// takes the inflation back here (ns-2 NewReno's `dupwnd_ = 0` on a new ACK).
    fn on_new_ack_outside_recovery(&mut self, _s: &mut SenderCore) {}
    /// Send what the strategy allows after an ACK has been processed.
    fn send(&mut self, s: &mut SenderCore, _out: &mut Vec<OutSeg>) {
        s.send_available(_out);
    }
}

/// With `grow_on_recovery_exit`, the ACK that ends fast recovery opens the window as any new ACK
/// does: ns-2's Reno and NewReno call `recv_newack_helper()` → `opencwnd()` on it (tcp/tcp.cc,
/// tcp/tcp-reno.cc, tcp/tcp-newreno.cc). RFC 5681 §3.2 step 6 only deflates.
pub(super) fn grow_on_exit(s: &mut SenderCore, acked: u64) {
    if s.cfg.grow_on_recovery_exit {
        s.cc_on_ack(acked);
    }
}

/// With `halve_cwnd_unfloored`, the fast retransmit's cwnd before the duplicate ACKs inflate it:
/// ns-2's `slowdown(CLOSE_SSTHRESH_HALF|CLOSE_CWND_HALF)` with `precisionReduce_` false sets
/// `cwnd_ = halfwin` = ⌊window()/2⌋, window() = ⌊min(cwnd_, wnd_)⌋, and floors only `ssthresh_`
/// at 2 (tcp/tcp.cc): a window of 2 or 3 segments leaves `cwnd_` 1. `before`: cwnd before the
/// reduction. None when the knob is off or the half is not below ssthresh (then cwnd = ssthresh
/// as RFC 5681 §3.2 step 2 has it). At least one segment (ns-2's 0 from a window of 1 cannot
/// meet 3 duplicate ACKs without Limited Transmit, and a zero window would never grow here).
///
/// With `precision_reduce`, ns-2.35's default `precisionReduce_` true: `cwnd_ = windowd()/2`,
/// half of min(cwnd_, wnd_) unrounded, raised to 1 if below (tcp/tcp.cc `slowdown()`): here
/// min(cwnd, rwnd)/2 bytes, at least one segment, whether below ssthresh or above it.
pub(crate) fn unfloored_half(s: &SenderCore, before: u64) -> Option<u64> {
    if s.cfg.precision_reduce {
        return Some((before.min(s.peer_wnd) / 2).max(s.mss));
    }
    if !s.cfg.halve_cwnd_unfloored {
        return None;
    }
    let half = (before.min(s.peer_wnd) / s.mss / 2 * s.mss).max(s.mss);
    (half < s.ssthresh).then_some(half)
}

/// ns-2's `cwnd_` during a recovery whose inflation (`dupwnd_`) is `inflation`: the window
/// without it, at least one segment. Under `halve_cwnd_unfloored` it is never above ssthresh
/// (the whole-segment half is at most ssthresh); under `precision_reduce` it may be, by the
/// half's fraction, and is kept so (tcp/tcp-newreno.cc zeroes `dupwnd_`, keeps `cwnd_`).
/// None: neither knob, the recovery's window is ssthresh.
pub(crate) fn uninflated_cwnd(s: &SenderCore, inflation: u64) -> Option<u64> {
    let base = s.cwnd.saturating_sub(inflation).max(s.mss);
    if s.cfg.precision_reduce {
        Some(base)
    } else if s.cfg.halve_cwnd_unfloored {
        Some(base.min(s.ssthresh))
    } else {
        None
    }
}

