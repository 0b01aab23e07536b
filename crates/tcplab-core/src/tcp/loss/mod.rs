//! Loss detection: which segments the sender deems lost, and when a duplicate ACK lets it send
//! early. The seam: a detector implements [`LossDetection`], one file per detector; the sender
//! (`SenderCore::dupthresh`, `is_lost`, `limited_transmit` in `state.rs`) asks it. `dupthresh.rs`
//! holds the rules of RFC 5681 §3.2 (DupThresh duplicate ACKs), RFC 5827 (Early Retransmit's
//! lowered threshold), RFC 6675 §4 `IsLost` and RFC 3042 (Limited Transmit); `rack.rs` is the
//! time-based detector (RACK, RFC 8985 §6, as Linux's `tcp_recovery.c`), which marks segments
//! lost in the transmit record (`txq.rs`) on each ACK and when its reordering timer expires.
//!
//! What a recovery strategy does once a loss is detected is the recovery seam (`tcp/recovery/`),
//! and how the window changes is the controller's (`tcp/cc/`). This module imports nothing of
//! the sender (it sees a [`LossView`] of plain values and the scoreboard), so no import circle.

pub mod dupthresh;
pub mod rack;

pub use dupthresh::DupThresh;
pub use rack::Rack;

use super::cc::RackSample;
use super::sack::Scoreboard;
use super::txq::TxQueue;
use crate::units::Time;

/// What a time-based detector sees on an ACK or at its timer (built by
/// `SenderCore::detect_losses`): plain values, no sender.
#[derive(Clone, Copy, Debug)]
pub struct RackInput {
    pub now: Time,
    /// SRTT, and the smallest RTT measured (Linux `tcp_min_rtt`); None before a sample.
    pub srtt: Option<Time>,
    pub min_rtt: Option<Time>,
    /// In Recovery or Loss (Linux `icsk_ca_state >= TCP_CA_Recovery`).
    pub recovering: bool,
    /// Segments SACKed above snd_una (Linux `sacked_out`), and the duplicate-ACK threshold
    /// (`tp->reordering`, `net.ipv4.tcp_reordering` = 3).
    pub sacked_segs: u64,
    pub reordering: u32,
    /// The most recently sent segment this ACK delivered (RFC 8985 §6.1 step 2); None at the
    /// timer.
    pub sample: Option<RackSample>,
    /// The lowest start of a never-retransmitted segment this ACK delivered (`u64::MAX`: none),
    /// and the highest SACKed sequence before the ACK (Linux `prior_fack`): below it, the
    /// delivery was reordered (`tcp_check_sack_reordering`).
    pub reord_low: u64,
    pub prior_fack: u64,
}

/// What a pass of the time-based detector found.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RackVerdict {
    /// Segments newly marked lost, or whose retransmission was declared lost.
    pub marked: u32,
    /// The next segment would be deemed lost this long from now (the reordering timer,
    /// RFC 8985 §6.2 step 5; before the kernel's 2 ms slack and jiffies).
    pub reo_timeout: Option<Time>,
}

/// What a detector sees of the sender when asked (built by `SenderCore::loss_view`).
#[derive(Clone, Copy, Debug)]
pub struct LossView<'a> {
    pub mss: u64,
    /// SND.UNA, SND.NXT, one past the highest sequence sent, one past the last data byte.
    pub snd_una: u64,
    pub snd_nxt: u64,
    pub snd_max: u64,
    pub data_end: u64,
    /// The receiver's advertised window.
    pub peer_wnd: u64,
    /// The congestion window (ns-2 Sack1's `numdupacks(cwnd_)`).
    pub cwnd: u64,
    /// Consecutive duplicate ACKs, this one included.
    pub dupacks: u32,
    pub in_recovery: bool,
    /// SACK is in use on the connection.
    pub sack_ok: bool,
    /// Bytes newly SACKed by the ACK being processed.
    pub newly_sacked: u64,
    pub sb: &'a Scoreboard,
}

impl LossView<'_> {
    /// RFC 5681 FlightSize.
    pub fn flight(&self) -> u64 {
        self.snd_max - self.snd_una
    }
}

/// A segment Limited Transmit may send on this duplicate ACK, and the window it may use: it goes
/// out if `used` + `len` ≤ min(cwnd + `allowance`, the receiver's window), which the send gate
/// decides (`gate::Limit::Allowance`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EarlySend {
    pub seq: u64,
    pub len: u64,
    /// What the sender holds to be in the network, measured the detector's way.
    pub used: u64,
    /// How far beyond cwnd it may go (RFC 3042 §2: 2·SMSS).
    pub allowance: u64,
    /// Previously unsent data (its bytes are kept out of the next ssthresh, RFC 5681 §3.2 step 2).
    pub new_data: bool,
}

/// What Linux's D-SACK handling tells RACK's reordering window (`tcp_rack_update_reo_wnd`,
/// net/ipv4/tcp_recovery.c; `rack.dsack_seen`, `reo_wnd_steps`, `reo_wnd_persist`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReoWndEvent {
    /// A D-SACK was accepted (`tcp_dsack_seen`: "if (tp->reord_seen && !(state->flag &
    /// FLAG_DSACK_TLP)) tp->rack.dsack_seen = 1"); `tlp`: it was the probe's.
    Dsack { tlp: bool },
    /// The ACK's delivery was counted (`tcp_rack_update_reo_wnd(sk, rs)` after
    /// `tcp_clean_rtx_queue`): `prior_delivered` of its rate sample (0: nothing delivered) and
    /// `delivered` now.
    Update { prior_delivered: u64, delivered: u64 },
    /// A D-SACK undo (`tcp_try_undo_dsack`: reo_wnd_persist + 1, at most 16).
    UndoDsack,
    /// A recovery ended without an undo (`tcp_try_undo_recovery`: reo_wnd_persist − 1).
    RecoveryKept,
}

pub trait LossDetection: Send {
    fn name(&self) -> &'static str;
    /// The number of duplicate ACKs that signals a loss now (RFC 5681 §3.2's DupThresh, or
    /// fewer).
    fn dupthresh(&self, v: &LossView) -> u32;
    /// RFC 6675 §4 `IsLost(seq)` for an unSACKed byte below the highest SACKed one.
    fn is_lost(&self, v: &LossView, seq: u64) -> bool;
    /// On a duplicate ACK below the threshold: the segment to send at once, if any (RFC 3042).
    fn early_send(&self, _v: &LossView) -> Option<EarlySend> {
        None
    }
    /// The detector reads the transmit record (`SenderCore::txq`; RACK's send times): the sender
    /// then keeps it. The duplicate-ACK detector does not.
    fn uses_transmit_record(&self) -> bool {
        false
    }
    /// A time-based detector's pass on an ACK (RFC 8985 §6.2; Linux `tcp_rack_advance`,
    /// `tcp_rack_mark_lost`): marks lost segments in the transmit record. The others do nothing.
    fn on_ack(&mut self, _i: &RackInput, _txq: &mut TxQueue) -> RackVerdict {
        RackVerdict::default()
    }
    /// RACK's reordering window follows the D-SACKs (RFC 8985 §6.2 step 4); the others ignore it.
    fn on_reo_wnd_event(&mut self, _ev: ReoWndEvent) {}
    /// The reordering timer expired (RFC 8985 §6.2 `RACK_detect_loss_and_arm_timer`; Linux
    /// `tcp_rack_reo_timeout`).
    fn on_reo_timeout(&mut self, _i: &RackInput, _txq: &mut TxQueue) -> RackVerdict {
        RackVerdict::default()
    }
}
