//! The ns-2 agents kept whole: their loss detection, recovery and window arithmetic are their
//! own (ns-2's source files are cited in each), so they write cwnd and ssthresh themselves
//! (`SenderCore::legacy_set_cwnd`, `legacy_set_ssthresh`, the only callers). Results of the `ns2`
//! profile depend on every line of them.
//!
//! * `Sack1`: ns-2 `Agent/TCP/Sack1` (tcp/tcp-sack1.cc), Fall & Floyd 1996.
//! * `FackRh`: FACK with Rate-Halving (Mathis & Mahdavi 1996).
//! * `FackNs2`: ns-2 `Agent/TCP/Fack` (tcp/tcp-fack.cc).
//! * `SackRh`: ns-2 `Agent/TCP/SackRH` (tcp/tcp-sack-rh.cc, tcp/scoreboard-rh.cc).

pub mod fack_ns2;
pub mod fack_rh;
pub mod sack1;
pub mod sackrh;

pub use fack_ns2::FackNs2;
pub use fack_rh::FackRh;
pub use sack1::Sack1;
pub use sackrh::SackRh;

/// `syn_ack_opens_cwnd`: ns-2's FackTcpAgent::recv() (tcp/tcp-fack.cc) and SackRHTcpAgent::recv()
/// (tcp/tcp-sack-rh.cc) take the SYN's ACK as a new ACK: opencwnd() from the SYN's cwnd_ 1 (slow
/// start, ssthresh_ at least 2), without TcpAgent::recv()'s reset to windowInit_ when
/// last_ack_ == 0. Data starts at 2 segments. Called by the active opener once established.
pub fn syn_ack_opens_cwnd(s: &mut crate::tcp::state::SenderCore) {
    if s.cfg.syn_ack_opens_cwnd && matches!(s.cfg.variant, crate::tcp::config::Variant::Fack | crate::tcp::config::Variant::SackRh) {
        let two = 2 * s.mss;
        s.legacy_set_cwnd(two);
    }
}

/// A retransmission in flight in the current recovery (FACK's scoreboard marks).
#[derive(Clone, Copy, Debug)]
struct Rtx {
    seq: u64,
    end: u64,
    /// snd.nxt when it was sent (Lost Retransmission Detection).
    sent_at_nxt: u64,
}
