//! FACK with Rate-Halving (Mathis & Mahdavi 1996; Mathis et al. 1997 Appendix A): the
//! thresholded retransmission of FACK, Rate-Halving's one segment per two ACKs for a round trip,
//! Lost Retransmission Detection, the bounding parameters.

use super::Rtx;
use crate::tcp::gate::{Ask, Limit, SendKind};
use crate::tcp::recovery::{Caps, Recovery};
use crate::tcp::state::{OutSeg, SenderCore};

#[derive(Clone, Copy, Debug)]
struct RateHalving {
    /// snd.nxt when the round began: the round trip is over once an ACK's forward-most SACK
    /// block (or the cumulative ACK) reaches it.
    end: u64,
    /// cwnd before the round.
    prior_cwnd: u64,
    /// ACKs received in the round.
    acks: u32,
}


#[derive(Default)]
pub struct FackRh {
    rh: Option<RateHalving>,
    /// A loss has been detected (thresholded) in the current recovery.
    loss: bool,
    rtx: Vec<Rtx>,
    /// Segments Rate-Halving allows now (one per two ACKs).
    credit: u32,
}

impl FackRh {
    /// awnd = snd.nxt − snd.fack + retran_data: what FACK holds to be in the network.
    fn awnd(&self, s: &SenderCore) -> u64 {
        let top = s.fack();
        let retran: u64 = self.rtx.iter().filter(|r| r.seq >= s.snd_una && r.end <= top && !s.sb.is_sacked(r.seq)).map(|r| r.end - r.seq).sum();
        s.snd_max.saturating_sub(top) + retran
    }

    /// Thresholded Retransmission: the first hole byte not already retransmitted (or whose
    /// retransmission was found lost) with more than DupThresh segments of data SACKed or
    /// acknowledged above it (snd.fack − seq > DupThresh·MSS). With Early Retransmit the
    /// threshold is RFC 5827 §3.2's lowered one (`dupthresh()`: outstanding segments − 1).
    fn next_hole(&self, s: &SenderCore) -> Option<u64> {
        let top = s.fack();
        let thresh = s.dupthresh() as u64 * s.mss;
        for (a, b) in s.sb.holes(s.snd_una) {
            let mut p = a;
            while p < b {
                if let Some(r) = self.rtx.iter().find(|r| r.seq <= p && p < r.end) {
                    p = r.end;
                    continue;
                }
                return (top - p > thresh).then_some(p);
            }
        }
        None
    }

    fn send_one(&mut self, s: &mut SenderCore, out: &mut Vec<OutSeg>) -> bool {
        if let Some(p) = self.next_hole(s) {
            let nxt = s.snd_max;
            let len = s.retransmit_hole(p, out);
            self.rtx.push(Rtx { seq: p, end: p + len, sent_at_nxt: nxt });
            true
        } else if s.can_send_new() {
            s.send_new(out);
            true
        } else {
            false
        }
    }

    /// Every ACK in a recovery (duplicate or partial).
    fn on_recovery_ack(&mut self, s: &mut SenderCore) {
        let top = s.fack();
        let thresh = s.cfg.dupthresh as u64 * s.mss;
        // Lost Retransmission Detection: a retransmission still missing although DupThresh
        // segments sent after it have been SACKed was lost again; its hole is eligible again.
        self.rtx.retain(|r| r.end > s.snd_una && (s.sb.is_sacked(r.seq) || top < r.sent_at_nxt + thresh));
        // The thresholded trigger: more than DupThresh segments above snd_una held by the
        // receiver, or DupThresh duplicate ACKs (fewer with Early Retransmit).
        if !self.loss && (top - s.snd_una > thresh || s.dupacks >= s.dupthresh()) && s.snd_una >= s.recover {
            self.loss = true;
            s.count_fast_retransmit();
            s.recover = s.snd_max;
            if self.rh.is_none() {
                self.rh = Some(RateHalving { end: s.snd_max, prior_cwnd: s.cwnd, acks: 0 });
            }
            let prior = self.rh.map_or(s.cwnd, |r| r.prior_cwnd);
            s.legacy_set_ssthresh((prior / 2).max(2 * s.mss));
            s.loss_reduction(false, true);
            s.restart_rto();
        }
        if let Some(mut rh) = self.rh {
            rh.acks += 1;
            // The round trip is over once data sent after the round began is SACKed or
            // acknowledged (the forward-most SACK block passes the saved snd.nxt).
            if top > rh.end || s.snd_una > rh.end {
                // One round trip is over: the window is what the round put in the network,
                // (cwnd − loss)/2 (eq. 15), bounded by half the old window (Bounding
                // Parameters: superfluous ACKs must not inflate it). No loss: restore.
                self.rh = None;
                if self.loss {
                    // awnd no longer counts the segment whose ACK closed the round; it was sent
                    // in the round and belongs to the new window.
                    let w = (self.awnd(s) + s.mss).min(rh.prior_cwnd / 2).max(s.mss);
                    s.legacy_set_cwnd(w);
                    s.legacy_set_ssthresh(w.max(2 * s.mss));
                } else {
                    s.legacy_set_cwnd(rh.prior_cwnd);
                    s.in_recovery = false;
                    s.dupacks = 0;
                }
            } else {
                // Rate-Halving: one segment per two ACKs, starting with the first.
                if rh.acks % 2 == 1 {
                    self.credit += 1;
                }
                self.rh = Some(rh);
            }
        }
    }
}

impl Recovery for FackRh {
    fn name(&self) -> &'static str {
        "fack-rh"
    }

    fn caps(&self) -> Caps {
        // FACK-RH's send rule sends on the first duplicate ACKs itself.
        Caps { own_limited_transmit: true, ..Caps::STANDARD }
    }

    fn on_dupack(&mut self, s: &mut SenderCore, _out: &mut Vec<OutSeg>) {
        if !s.in_recovery {
            // The first duplicate ACK starts a Rate-Halving round (and FACK's recovery state);
            // the round's first ACK lets one new segment out before any retransmission.
            s.in_recovery = true;
            self.loss = false;
            self.rtx.clear();
            self.credit = 0;
            self.rh = Some(RateHalving { end: s.snd_max, prior_cwnd: s.cwnd, acks: 0 });
        }
        self.on_recovery_ack(s);
    }

    fn on_ack_in_recovery(&mut self, s: &mut SenderCore, _acked: u64, _out: &mut Vec<OutSeg>) -> bool {
        if self.loss && s.snd_una >= s.recover {
            // Recovery over; if the round is still open, close it the same way.
            if let Some(rh) = self.rh.take() {
                let w = self.awnd(s).min(rh.prior_cwnd / 2).max(s.mss);
                s.legacy_set_cwnd(w);
                s.legacy_set_ssthresh(w.max(2 * s.mss));
            }
            s.in_recovery = false;
            s.dupacks = 0;
            self.rtx.clear();
            self.credit = 0;
            return true;
        }
        if !self.loss && s.sb.is_empty() {
            // The hole filled without a retransmission (reordering): restore the window.
            if let Some(rh) = self.rh.take() {
                s.legacy_set_cwnd(rh.prior_cwnd);
            }
            s.in_recovery = false;
            s.dupacks = 0;
            self.credit = 0;
            return true;
        }
        self.on_recovery_ack(s);
        true
    }

    fn on_timeout(&mut self, _s: &mut SenderCore) {
        self.rh = None;
        self.loss = false;
        self.rtx.clear();
        self.credit = 0;
    }

    fn send(&mut self, s: &mut SenderCore, out: &mut Vec<OutSeg>) {
        if !s.in_recovery {
            self.credit = 0;
            s.send_available(out);
            return;
        }
        if self.rh.is_some() {
            // Rate-Halving's clock: one segment per credit, the window aside.
            while self.credit > 0 && s.send_gate(0, Ask { used: 0, need: 0, limit: Limit::Clocked, burst: false, what: SendKind::Window }) {
                self.credit -= 1;
                if !self.send_one(s, out) {
                    self.credit = 0;
                }
            }
        } else {
            // After the round: FACK's conservation rule, send while awnd < cwnd.
            while s.send_gate(0, Ask { used: self.awnd(s), need: s.mss, limit: Limit::Cwnd, burst: false, what: SendKind::Window }) {
                if !self.send_one(s, out) {
                    break;
                }
            }
        }
    }
}
