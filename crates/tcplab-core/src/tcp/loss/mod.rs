//! Loss detection: which segments the sender deems lost, and when a duplicate ACK lets it send
//! early. The seam: a detector implements [`LossDetection`], one file per detector; the sender
//! (`SenderCore::dupthresh`, `is_lost`, `limited_transmit` in `state.rs`) asks it. `dupthresh.rs`
//! holds the rules of RFC 5681 §3.2 (DupThresh duplicate ACKs), RFC 5827 (Early Retransmit's
//! lowered threshold), RFC 6675 §4 `IsLost` and RFC 3042 (Limited Transmit); a time-based
//! detector (RACK, RFC 8985) is to be a second file reading the transmit record (`txq.rs`).
//!
//! What a recovery strategy does once a loss is detected is the recovery seam (`tcp/recovery/`),
//! and how the window changes is the controller's (`tcp/cc/`). This module imports nothing of
//! the sender (it sees a [`LossView`] of plain values and the scoreboard), so no import circle.

pub mod dupthresh;

pub use dupthresh::DupThresh;

use super::sack::Scoreboard;

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
}
