//! The send gate: the one place that decides whether a segment may leave now. Every sender's
//! send loop asks it once per segment (`SenderCore::send_gate`, which hands its window to `may_send`
//! here; `grep -rn "send_gate(\|may_send_single(" src/tcp` lists them): the connection's own
//! (`send_available`), RFC 6675's (C) loop (`recovery/rfc6675.rs`) and the ns-2 agents'
//! `send_much()`s (`legacy/`); so do the single transmissions of loss recovery (the fast
//! retransmission, NewReno's partial-ACK retransmission: `SenderCore::may_send_single`, no
//! window) and Limited Transmit (its allowance beyond cwnd), each saying what it is (`SendKind`).
//!
//! A sender measures what it holds to be in the network its own way (RFC 6675's pipe, ns-2
//! Sack1's counted pipe, FACK's awnd, SND.NXT − SND.UNA) and says what the next segment needs;
//! the gate compares that with the window it names and counts the burst (ns-2 `maxburst_`). A
//! pacer (a controller's `pacing_rate()`) will be one more condition here, for every sender at
//! once.

use super::config::TcpConfig;

/// Which window bounds a sender.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    /// cwnd alone (the receiver's window is checked where new data is chosen).
    Cwnd,
    /// min(cwnd, the receiver's advertised window).
    CwndRwnd,
    /// No window: the sender's own clock decides (Rate-Halving's one segment per two ACKs; the
    /// FIN, which takes no window here, as in ns-2).
    Clocked,
    /// min(cwnd + the allowance, the receiver's window): RFC 3042 Limited Transmit's "congestion
    /// window plus 2 segments" (ns-2 `send_one()`: plus one segment per duplicate ACK).
    Allowance(u64),
    /// A single transmission the standards send whatever the window: the fast retransmission
    /// (RFC 5681 §3.2 step 2, RFC 6675 (4.3)), NewReno's partial-ACK retransmission (RFC 6582
    /// §3.2 step 3). A pacer may still hold it.
    Unbounded,
}

/// What the segment asked about is, so that a condition of the gate (a pacer) can tell a send
/// loop's next segment from the single transmissions loss recovery makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendKind {
    /// The next segment of a send loop (new data, go-back-N, a hole, the FIN).
    Window,
    /// RFC 3042 Limited Transmit (or RFC 6675 §5 step 3).
    LimitedTransmit,
    /// The retransmission that starts loss recovery.
    FastRetransmit,
    /// NewReno's retransmission on a partial ACK.
    PartialAck,
    /// A tail loss probe (RFC 8985 §7.3; Linux `tcp_send_loss_probe` sends it whatever cwnd).
    LossProbe,
}

/// One question to the gate: may a segment needing `need` bytes of window go out when `used`
/// are taken?
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ask {
    pub used: u64,
    pub need: u64,
    pub limit: Limit,
    /// `max_burst` applies (ns-2 `send_much()`; RFC 6675's loop has no burst limit).
    pub burst: bool,
    pub what: SendKind,
}

/// What the gate weighs a question against: the sender's windows. Plain values (and the
/// configuration's burst limit), so that the gate depends on nothing of the sender's (no import
/// circle with `state`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SendWindow {
    pub cwnd: u64,
    pub peer_wnd: u64,
}

/// May the next segment leave now? `sent`: segments this send loop has already sent in reply to
/// the present event.
#[inline]
pub fn may_send(cfg: &TcpConfig, w: SendWindow, sent: u32, a: Ask) -> bool {
    // ns-2 `maxburst_`: `if (maxburst && npackets == maxburst) break;` in send_much()
    // (tcp/tcp.cc).
    if a.burst && cfg.max_burst > 0 && sent >= cfg.max_burst {
        return false;
    }
    match a.limit {
        Limit::Cwnd => a.used + a.need <= w.cwnd,
        Limit::CwndRwnd => a.used + a.need <= w.cwnd.min(w.peer_wnd),
        Limit::Clocked | Limit::Unbounded => true,
        Limit::Allowance(x) => a.used + a.need <= (w.cwnd + x).min(w.peer_wnd),
    }
}
