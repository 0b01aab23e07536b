//! RFC 6675's conservative SACK-based loss recovery: the scoreboard (`sack.rs`), IsLost (the loss
//! detector's, `tcp/loss/`), SetPipe, NextSeg with its four rules, RecoveryPoint and the rescue
//! retransmission — the "SACK" of the Ladha study. ns-2's SACK agents (`Sack1`, `Fack`,
//! FACK-RH, `SackRH`) are kept whole in `tcp/legacy/`; how RFC 6675 and `Sack1` differ:
//! duplicate ACKs (new SACK information vs RFC 5681's same-ACK rule), loss detection per hole
//! (IsLost with DupThresh vs any hole below the highest SACK), the pipe (computed from the
//! scoreboard vs counted), the new ssthresh (FlightSize/2 vs cwnd/2), and RFC 6675's rescue
//! retransmission. With `reduction = "prr"` the window comes down by Proportional Rate Reduction
//! (`prr.rs`, RFC 9937 as Linux's `tcp_cwnd_reduction` computes it) instead of at once.

use super::prr::{Prr, PrrAck};
use super::{Caps, Delivered, Recovery};
use crate::tcp::cc::CongestionEvent;
use crate::tcp::config::{Reduction, TcpConfig};
use crate::tcp::gate::{Ask, Limit, SendKind};
use crate::tcp::state::{OutSeg, SenderCore};

/// Data segment start containing byte `x` (segments cover ((k−1)·MSS, k·MSS] from byte 1).
fn segment_start(s: &SenderCore, x: u64) -> u64 {
    s.data_start + (x - s.data_start) / s.mss * s.mss
}

// -------------------------------------------------------------------------------------------
// RFC 6675

#[derive(Default)]
pub struct Rfc6675 {
    /// One past the highest byte retransmitted in this recovery (HighRxt + 1).
    high_rxt: u64,
    /// RescueRxt + 1, if a rescue retransmission is not allowed until HighACK passes it.
    rescue_rxt: Option<u64>,
    /// Proportional Rate Reduction, with `reduction = "prr"`.
    prr: Option<Prr>,
    /// What the ACK being processed delivered, until PRR has taken it (once per ACK).
    ack: Option<Delivered>,
    /// One past the highest byte IsLost held lost at the previous ACK of this recovery: an ACK
    /// that raises it marks new losses (Linux's `newly_lost`, RFC 9937's "further loss").
    lost_upto: u64,
}

enum Next {
    Retx(u64),
    New,
    Rescue(u64),
}

impl Rfc6675 {
    /// The strategy as `cfg` asks: its window reduction (`reduction`).
    pub fn new(cfg: &TcpConfig) -> Rfc6675 {
        let prr = (cfg.reduction == Reduction::Prr).then(|| Prr::new(cfg.mss.0));
        Rfc6675 { prr, ..Rfc6675::default() }
    }

    /// One past the highest byte of the highest hole IsLost holds lost (holes are lost from the
    /// bottom up: the lower a hole, the more SACKed data lies above it).
    fn lost_upto(s: &SenderCore) -> u64 {
        s.sb.holes(s.snd_una).filter(|&(a, _)| s.is_lost(a)).map(|(_, b)| b).last().unwrap_or(0)
    }

    /// PRR's step for the ACK being processed (once, before anything is sent in reply to it):
    /// cwnd = pipe + sndcnt (Linux `tcp_cwnd_reduction`, called from `tcp_cong_control` after
    /// `tcp_fastretrans_alert` has marked the ACK's losses; RFC 9937's per-ACK step with
    /// pipe from RFC 6675's SetPipe).
    fn prr_step(&mut self, s: &mut SenderCore) {
        let Some(d) = self.ack.take() else { return };
        if !self.prr.is_some_and(|p| p.active()) {
            return;
        }
        let lost = Self::lost_upto(s);
        let newly_lost = lost > self.lost_upto;
        self.lost_upto = self.lost_upto.max(lost);
        let in_flight = self.pipe(s);
        let a = PrrAck { delivered: d.data, in_flight, snd_una_advanced: d.acked > 0, newly_lost };
        if let Some(cwnd) = self.prr.as_mut().and_then(|p| p.on_ack(a)) {
            s.set_recovery_window(cwnd);
        }
    }

    /// RFC 6675 §4 SetPipe(): for every byte between HighACK and HighData that is not SACKed,
    /// +1 if not IsLost, +1 more if at or below HighRxt. IsLost is the same for every byte of a
    /// hole (all SACKed bytes lie above it), so the sum goes hole by hole.
    fn pipe(&self, s: &SenderCore) -> u64 {
        let mut pipe = 0;
        let top = s.fack();
        let mut count = |a: u64, b: u64, lost: bool| {
            if !lost {
                pipe += b - a;
            }
            pipe += self.high_rxt.min(b).saturating_sub(a);
        };
        for (a, b) in s.sb.holes(s.snd_una) {
            count(a, b, s.is_lost(a));
        }
        if top < s.snd_max {
            count(top, s.snd_max, false);
        }
        pipe
    }

    /// RFC 6675 §4 NextSeg().
    fn next_seg(&mut self, s: &SenderCore) -> Option<Next> {
        let top = s.fack();
        let s2 = s.sb.next_unsacked(self.high_rxt.max(s.snd_una));
        // (1) the first unSACKed byte above HighRxt, below the highest SACKed byte, if IsLost.
        if s2 < top && s.is_lost(s2) {
            return Some(Next::Retx(s2));
        }
        // (2) new data, if there is some and the receiver's window allows it.
        if s.can_send_new() {
            return Some(Next::New);
        }
        // (3) the first unSACKed byte above HighRxt below the highest SACK, lost or not.
        if s2 < top {
            return Some(Next::Retx(s2));
        }
        // (4) one rescue retransmission per recovery: the segment holding the highest
        // outstanding unSACKed byte, once HighACK has passed RescueRxt.
        if self.rescue_rxt.is_none_or(|r| s.snd_una > r) {
            let highest = if top < s.snd_max { Some(s.snd_max - 1) } else { s.sb.holes(s.snd_una).last().map(|(_, b)| b - 1) };
            if let Some(x) = highest {
                let x = x.min(s.data_end.saturating_sub(1)).max(s.snd_una);
                return Some(Next::Rescue(segment_start(s, x).max(s.snd_una)));
            }
        }
        None
    }

    /// RFC 6675 §5 step (C): while cwnd − pipe ≥ 1 SMSS, send what NextSeg() gives.
    fn send_loop(&mut self, s: &mut SenderCore, out: &mut Vec<OutSeg>) {
        let mut pipe = self.pipe(s);
        while s.send_gate(0, Ask { used: pipe, need: s.mss, limit: Limit::Cwnd, burst: false, what: SendKind::Window }) {
            let sent = match self.next_seg(s) {
                None => break,
                Some(Next::Retx(seq)) => {
                    let len = s.retransmit_hole(seq, out);
                    // (C.2) HighRxt follows every retransmission except the rescue.
                    self.high_rxt = self.high_rxt.max(seq + len);
                    len
                }
                Some(Next::New) => s.send_new(out),
                Some(Next::Rescue(seq)) => {
                    self.rescue_rxt = Some(s.recover);
                    s.retransmit_hole(seq, out)
                }
            };
            if let Some(p) = self.prr.as_mut() {
                p.on_sent(sent);
            }
            pipe += sent.max(1);
        }
    }
}

impl Recovery for Rfc6675 {
    fn name(&self) -> &'static str {
        "sack"
    }

    fn caps(&self) -> Caps {
        Caps { sack_dupacks: true, own_limited_transmit: true, ..Caps::STANDARD }
    }

    fn on_delivered(&mut self, _s: &SenderCore, d: Delivered) {
        self.ack = Some(d);
    }

    fn on_dupack(&mut self, s: &mut SenderCore, out: &mut Vec<OutSeg>) {
        if s.in_recovery {
            return;
        }
        // RFC 6675 §5 steps (1)–(2): DupAcks ≥ DupThresh, or IsLost(HighACK + 1); §5.1: not
        // again until HighACK ≥ RecoveryPoint after a timeout.
        let lost = s.is_lost(s.snd_una);
        if (s.dupacks >= s.dupthresh() || lost) && s.snd_una >= s.recover {
            s.count_fast_retransmit();
            // (4.1) RecoveryPoint = HighData.
            s.recover = s.snd_max;
            // (4.2) ssthresh = cwnd = FlightSize / 2 (with RFC 5681 eq. 4's 2·SMSS floor, and
            // Limited Transmit's data left out of FlightSize as RFC 5681 §3.2 asks).
            let prior_cwnd = s.cwnd;
            s.cc_event(CongestionEvent::FastRetransmit(s.loss_context()));
            if self.prr.is_none() {
                s.set_recovery_window(s.ssthresh);
            }
            s.loss_reduction(false, true);
            s.in_recovery = true;
            s.restart_rto();
            if let Some(p) = self.prr.as_mut() {
                // With PRR cwnd is not cut here: `tcp_init_cwnd_reduction` takes prior_cwnd
                // (RecoverFS) and the controller's ssthresh, and this ACK's step sets cwnd =
                // pipe + sndcnt (at least one segment: the fast retransmission) before it goes.
                p.set_mss(s.mss);
                p.enter(prior_cwnd, s.ssthresh, s.flight_size());
                self.high_rxt = s.snd_una;
                self.lost_upto = 0;
                self.prr_step(s);
            }
            // (4.3) retransmit HighACK + 1; HighRxt = RescueRxt = its last byte.
            let una = s.snd_una;
            let len = if s.may_send_single(SendKind::FastRetransmit) { s.retransmit_hole(una, out) } else { 0 };
            if let Some(p) = self.prr.as_mut() {
                p.on_sent(len);
            }
            self.high_rxt = una + len;
            self.rescue_rxt = Some(una + len);
            // (4.4)–(4.5): the send step (C) follows in `send`.
        } else if s.cfg.limited_transmit && s.dupacks < s.cfg.dupthresh {
            // (3) Limited Transmit governed by pipe: HighRxt = HighACK, then send new data while
            // cwnd − pipe ≥ 1 SMSS.
            self.high_rxt = s.snd_una;
            while s.can_send_new() && s.snd_max < s.data_end && s.send_gate(0, Ask { used: self.pipe(s), need: s.mss, limit: Limit::Cwnd, burst: false, what: SendKind::LimitedTransmit }) {
                s.stats.limited_transmits += 1;
                let len = s.send_new(out);
                s.limited_transmit_bytes += len;
            }
        }
    }

    fn on_ack_in_recovery(&mut self, s: &mut SenderCore, _acked: u64, _out: &mut Vec<OutSeg>) -> bool {
        // (A) a cumulative ACK at or beyond RecoveryPoint ends recovery; the scoreboard above it
        // is kept.
        if s.snd_una >= s.recover {
            s.in_recovery = false;
            s.dupacks = 0;
            // PRR: cwnd = ssthresh at the end of recovery (Linux `tcp_end_cwnd_reduction`,
            // "Reset cwnd to ssthresh in CWR or Recovery (unless it's undone)"; RFC 9937).
            if let Some(c) = self.prr.as_mut().filter(|p| p.active()).map(|p| p.exit()) {
                s.set_recovery_window(c);
            }
        }
        true
    }

    fn on_timeout(&mut self, _s: &mut SenderCore) {
        self.high_rxt = 0;
        self.rescue_rxt = None;
        // The timeout takes over the window (`tcp_enter_loss`): the PRR episode ends unfinished.
        if let Some(p) = self.prr.as_mut() {
            p.abandon();
        }
    }

    fn send(&mut self, s: &mut SenderCore, out: &mut Vec<OutSeg>) {
        if s.in_recovery {
            // PRR's step for this ACK (unless the ACK that began recovery took it already).
            self.prr_step(s);
            // (B)–(C): the scoreboard is up to date; SetPipe and send.
            self.send_loop(s, out);
        } else {
            s.send_available(out);
        }
    }
}

