//! SACK-based loss recovery, four flavours behind the `Recovery` trait:
//!
//! * `Rfc6675`: RFC 6675's conservative algorithm (scoreboard, IsLost, SetPipe, NextSeg with its
//!   four rules, RecoveryPoint, the rescue retransmission) — the "SACK" of the Ladha study.
//! * `Sack1`: the ns "Sack1" sender of Fall & Floyd 1996 used by the Mathis study — Reno's
//!   window halving, a *counted* pipe (−1 per duplicate ACK, −2 per partial ACK, +1 per
//!   transmission after the fast retransmission), and retransmission of every hole below the
//!   highest SACKed byte in order.
//! * `FackRh`: FACK with Rate-Halving (Mathis & Mahdavi 1996; Mathis et al. 1997 Appendix A).
//! * `FackNs2`: ns-2's `Agent/TCP/Fack` (tcp/tcp-fack.cc) with `rampdown_` false: loss detected
//!   when more than DupThresh segments lie between snd_una and the forward-most SACK, then
//!   ssthresh = window/2 and a cwnd restart from one segment, slow start inside the recovery,
//!   and FACK's send rule awnd = snd.nxt − snd.fack + retran_data < cwnd.
//!
//! How `Rfc6675` and `Sack1` differ (the reason both are kept): duplicate ACKs (new SACK
//! information vs RFC 5681's same-ACK rule), loss detection per hole (IsLost with DupThresh vs
//! any hole below the highest SACK), the pipe (computed from the scoreboard vs counted), the
//! new ssthresh (FlightSize/2 vs cwnd/2), and RFC 6675's rescue retransmission.

use super::cc::CongestionControl;
use super::recovery::Recovery;
use super::state::{OutSeg, SenderCore};

/// The forward-most SACKed byte + 1 (FACK's snd.fack), at least snd_una.
fn fack(s: &SenderCore) -> u64 {
    s.sb.highest().unwrap_or(s.snd_una).max(s.snd_una)
}

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
}

enum Next {
    Retx(u64),
    New,
    Rescue(u64),
}

impl Rfc6675 {
    /// RFC 6675 §4 SetPipe(): for every byte between HighACK and HighData that is not SACKed,
    /// +1 if not IsLost, +1 more if at or below HighRxt. IsLost is the same for every byte of a
    /// hole (all SACKed bytes lie above it), so the sum goes hole by hole.
    fn pipe(&self, s: &SenderCore) -> u64 {
        let (dt, mss) = (s.cfg.dupthresh, s.mss);
        let mut pipe = 0;
        let top = fack(s);
        let mut count = |a: u64, b: u64, lost: bool| {
            if !lost {
                pipe += b - a;
            }
            pipe += self.high_rxt.min(b).saturating_sub(a);
        };
        for (a, b) in s.sb.holes(s.snd_una) {
            count(a, b, s.sb.is_lost(a, dt, mss));
        }
        if top < s.snd_max {
            count(top, s.snd_max, false);
        }
        pipe
    }

    /// RFC 6675 §4 NextSeg().
    fn next_seg(&mut self, s: &SenderCore) -> Option<Next> {
        let top = fack(s);
        let s2 = s.sb.next_unsacked(self.high_rxt.max(s.snd_una));
        // (1) the first unSACKed byte above HighRxt, below the highest SACKed byte, if IsLost.
        if s2 < top && s.sb.is_lost(s2, s.cfg.dupthresh, s.mss) {
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
        while s.cwnd >= pipe + s.mss {
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
            pipe += sent.max(1);
        }
    }
}

impl Recovery for Rfc6675 {
    fn name(&self) -> &'static str {
        "sack"
    }

    fn sack_dupacks(&self) -> bool {
        true
    }

    fn own_limited_transmit(&self) -> bool {
        true
    }

    fn on_dupack(&mut self, s: &mut SenderCore, cc: &mut dyn CongestionControl, out: &mut Vec<OutSeg>) {
        if s.in_recovery {
            return;
        }
        // RFC 6675 §5 steps (1)–(2): DupAcks ≥ DupThresh, or IsLost(HighACK + 1); §5.1: not
        // again until HighACK ≥ RecoveryPoint after a timeout.
        let lost = s.sb.is_lost(s.snd_una, s.cfg.dupthresh, s.mss);
        if (s.dupacks >= s.dupthresh() || lost) && s.snd_una >= s.recover {
            s.count_fast_retransmit();
            // (4.1) RecoveryPoint = HighData.
            s.recover = s.snd_max;
            // (4.2) ssthresh = cwnd = FlightSize / 2 (with RFC 5681 eq. 4's 2·SMSS floor, and
            // Limited Transmit's data left out of FlightSize as RFC 5681 §3.2 asks).
            s.ssthresh = cc.ssthresh_after_loss(s);
            s.set_cwnd(s.ssthresh);
            s.loss_reduction(false, true);
            s.in_recovery = true;
            s.restart_rto();
            // (4.3) retransmit HighACK + 1; HighRxt = RescueRxt = its last byte.
            let una = s.snd_una;
            let len = s.retransmit_hole(una, out);
            self.high_rxt = una + len;
            self.rescue_rxt = Some(una + len);
            // (4.4)–(4.5): the send step (C) follows in `send`.
        } else if s.cfg.limited_transmit && s.dupacks < s.cfg.dupthresh {
            // (3) Limited Transmit governed by pipe: HighRxt = HighACK, then send new data while
            // cwnd − pipe ≥ 1 SMSS.
            self.high_rxt = s.snd_una;
            while s.can_send_new() && s.snd_max < s.data_end && s.cwnd >= self.pipe(s) + s.mss {
                s.stats.limited_transmits += 1;
                let len = s.send_new(out);
                s.limited_transmit_bytes += len;
            }
        }
    }

    fn on_ack_in_recovery(&mut self, s: &mut SenderCore, _cc: &mut dyn CongestionControl, _acked: u64, _out: &mut Vec<OutSeg>) -> bool {
        // (A) a cumulative ACK at or beyond RecoveryPoint ends recovery; the scoreboard above it
        // is kept.
        if s.snd_una >= s.recover {
            s.in_recovery = false;
            s.dupacks = 0;
        }
        true
    }

    fn on_timeout(&mut self, _s: &mut SenderCore) {
        self.high_rxt = 0;
        self.rescue_rxt = None;
    }

    fn send(&mut self, s: &mut SenderCore, out: &mut Vec<OutSeg>) {
        if s.in_recovery {
            // (B)–(C): the scoreboard is up to date; SetPipe and send.
            self.send_loop(s, out);
        } else {
            s.send_available(out);
        }
    }
}

// -------------------------------------------------------------------------------------------
// ns Sack1

#[derive(Default)]
pub struct Sack1 {
    /// The counted pipe, bytes (ns-2's pipe_, in segments there).
    pipe: i64,
    /// Holes below this have been retransmitted in the current recovery.
    rtx_next: u64,
}

impl Recovery for Sack1 {
    fn name(&self) -> &'static str {
        "sack1"
    }

    fn on_dupack(&mut self, s: &mut SenderCore, _cc: &mut dyn CongestionControl, out: &mut Vec<OutSeg>) {
        let mss = s.mss as i64;
        if !s.in_recovery {
            // tcp/tcp-sack1.cc: `++dupacks_ == numdupacks(cwnd_)`, with `numdupacksFrac_`
            // max(numdupacks_, ⌊⌊cwnd_⌋/numdupacksFrac_⌋) (tcp/tcp.cc).
            let frac = s.cfg.dupthresh_frac as u64;
            let thresh = if frac > 0 { (s.dupthresh() as u64).max(s.cwnd / s.mss / frac) } else { s.dupthresh() as u64 };
            if s.dupacks as u64 == thresh && s.snd_una > s.recover {
                s.count_fast_retransmit();
                s.recover = s.snd_max;
                // ns-2 slowdown(CLOSE_SSTHRESH_HALF | CLOSE_CWND_HALF): half the window, not
                // of FlightSize; at least 2 segments.
                s.ssthresh = s.half_window();
                s.set_cwnd(s.ssthresh);
                s.loss_reduction(false, true);
                s.in_recovery = true;
                s.restart_rto();
                // tcp/tcp-sack1.cc dupack_action(): pipe_ = maxseq_ − highest_ack_ − numdupacks,
                // the packets outstanding less the duplicate ACKs. The fast retransmission is
                // sent by output(), outside send_much(), so it is not counted in pipe_.
                self.pipe = s.flight_size() as i64 - s.dupacks as i64 * mss;
                let una = s.snd_una;
                let len = s.retransmit_hole(una, out);
                self.rtx_next = una + len;
            }
        } else {
            self.pipe -= mss;
        }
    }

    fn on_ack_in_recovery(&mut self, s: &mut SenderCore, _cc: &mut dyn CongestionControl, _acked: u64, _out: &mut Vec<OutSeg>) -> bool {
        if s.snd_una >= s.recover {
            s.in_recovery = false;
            s.dupacks = 0;
            let ss = s.ssthresh;
            s.set_cwnd(ss);
        } else {
            // A partial ACK: the retransmission and the original have both left the network.
            self.pipe -= 2 * s.mss as i64;
        }
        true
    }

    fn on_timeout(&mut self, s: &mut SenderCore) {
        self.rtx_next = 0;
        self.pipe = 0;
        // tcp/tcp-sack1.cc timeout(): the scoreboard is cleared and `timeout_` set; until a new
        // cumulative ACK clears it, duplicate ACKs leave the scoreboard alone.
        s.sack_ignored = true;
    }

    fn gbn_skips_sacked(&self) -> bool {
        // ns-2's Sack1 goes back N over everything after a timeout (`t_seqno_ = highest_ack_ + 1`
        // in reset_rtx_timer(), tcp/tcp.cc, with an empty scoreboard).
        false
    }

    fn send(&mut self, s: &mut SenderCore, out: &mut Vec<OutSeg>) {
        if !s.in_recovery {
            s.send_available(out);
            return;
        }
        let mut burst = 0;
        while self.pipe < s.cwnd as i64 && !s.burst_done(burst) {
            burst += 1;
            let top = fack(s);
            let hole = s.sb.next_unsacked(self.rtx_next.max(s.snd_una));
            let len = if hole < top {
                let len = s.retransmit_hole(hole, out);
                self.rtx_next = hole + len;
                len
            } else if s.can_send_new() {
                s.send_new(out)
            } else {
                break;
            };
            self.pipe += len.max(1) as i64;
        }
    }
}

// -------------------------------------------------------------------------------------------
// FACK with Rate-Halving

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

/// A retransmission in flight in the current recovery.
#[derive(Clone, Copy, Debug)]
struct Rtx {
    seq: u64,
    end: u64,
    /// snd.nxt when it was sent (Lost Retransmission Detection).
    sent_at_nxt: u64,
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
        let top = fack(s);
        let retran: u64 = self.rtx.iter().filter(|r| r.seq >= s.snd_una && r.end <= top && !s.sb.is_sacked(r.seq)).map(|r| r.end - r.seq).sum();
        s.snd_max.saturating_sub(top) + retran
    }

    /// Thresholded Retransmission: the first hole byte not already retransmitted (or whose
    /// retransmission was found lost) with more than DupThresh segments of data SACKed or
    /// acknowledged above it (snd.fack − seq > DupThresh·MSS). With Early Retransmit the
    /// threshold is RFC 5827 §3.2's lowered one (`dupthresh()`: outstanding segments − 1).
    fn next_hole(&self, s: &SenderCore) -> Option<u64> {
        let top = fack(s);
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
    fn on_recovery_ack(&mut self, s: &mut SenderCore, cc: &mut dyn CongestionControl) {
        let top = fack(s);
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
            let _ = cc;
            s.ssthresh = (prior / 2).max(2 * s.mss);
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
                    s.set_cwnd(w);
                    s.ssthresh = w.max(2 * s.mss);
                } else {
                    s.set_cwnd(rh.prior_cwnd);
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

    fn own_limited_transmit(&self) -> bool {
        true
    }

    fn on_dupack(&mut self, s: &mut SenderCore, cc: &mut dyn CongestionControl, _out: &mut Vec<OutSeg>) {
        if !s.in_recovery {
            // The first duplicate ACK starts a Rate-Halving round (and FACK's recovery state);
            // the round's first ACK lets one new segment out before any retransmission.
            s.in_recovery = true;
            self.loss = false;
            self.rtx.clear();
            self.credit = 0;
            self.rh = Some(RateHalving { end: s.snd_max, prior_cwnd: s.cwnd, acks: 0 });
        }
        self.on_recovery_ack(s, cc);
    }

    fn on_ack_in_recovery(&mut self, s: &mut SenderCore, cc: &mut dyn CongestionControl, _acked: u64, _out: &mut Vec<OutSeg>) -> bool {
        if self.loss && s.snd_una >= s.recover {
            // Recovery over; if the round is still open, close it the same way.
            if let Some(rh) = self.rh.take() {
                let w = self.awnd(s).min(rh.prior_cwnd / 2).max(s.mss);
                s.set_cwnd(w);
                s.ssthresh = w.max(2 * s.mss);
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
                s.set_cwnd(rh.prior_cwnd);
            }
            s.in_recovery = false;
            s.dupacks = 0;
            self.credit = 0;
            return true;
        }
        self.on_recovery_ack(s, cc);
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
            while self.credit > 0 {
                self.credit -= 1;
                if !self.send_one(s, out) {
                    self.credit = 0;
                }
            }
        } else {
            // After the round: FACK's conservation rule, send while awnd < cwnd.
            while self.awnd(s) + s.mss <= s.cwnd {
                if !self.send_one(s, out) {
                    break;
                }
            }
        }
    }
}

// -------------------------------------------------------------------------------------------
// ns-2 Agent/TCP/Fack (tcp/tcp-fack.cc), rampdown_ false

#[derive(Default)]
pub struct FackNs2 {
    /// Retransmissions of the current recovery (ns-2's scoreboard `retran_` marks).
    rtx: Vec<Rtx>,
    /// A retransmission was lost again (ns-2 `CheckSndNxt()` sets `timeout_`): nothing more is
    /// sent until the timer expires.
    stalled: bool,
}

impl FackNs2 {
    /// ns-2 `retran_data_`: retransmitted bytes neither SACKed nor acknowledged since.
    fn retran_data(&self, s: &SenderCore) -> u64 {
        self.rtx.iter().filter(|r| r.end > s.snd_una && !s.sb.is_sacked(r.seq)).map(|r| r.end - r.seq.max(s.snd_una)).sum()
    }

    /// ns-2 `GetNextRetran()`: the first hole byte below snd.fack not yet retransmitted.
    fn next_hole(&self, s: &SenderCore) -> Option<u64> {
        let top = fack(s);
        for (a, b) in s.sb.holes(s.snd_una) {
            let mut p = a;
            while p < b.min(top) {
                match self.rtx.iter().find(|r| r.seq <= p && p < r.end) {
                    Some(r) => p = r.end,
                    None => return Some(p),
                }
            }
        }
        None
    }

    /// The recovery's every ACK: drop retransmissions now held by the receiver; ns-2's
    /// `CheckSndNxt()`: a retransmission still missing when data sent after it (snd.nxt at its
    /// retransmission) has been SACKed was lost again, and sending stops until the timeout.
    fn on_recovery_ack(&mut self, s: &mut SenderCore, cc: &mut dyn CongestionControl, acked: u64) {
        let top = fack(s);
        let mut lost_again = false;
        self.rtx.retain(|r| {
            let held = r.end <= s.snd_una || s.sb.is_sacked(r.seq);
            if !held && r.sent_at_nxt < top {
                lost_again = true;
                return false;
            }
            !held
        });
        self.stalled |= lost_again;
        // opencwnd() on every ACK of the recovery after the one that began it (which is handled
        // before the recovery starts): slow start back up to ssthresh from the restart window,
        // then congestion avoidance.
        cc.on_ack(s, acked);
    }
}

impl Recovery for FackNs2 {
    fn name(&self) -> &'static str {
        "fack"
    }

    fn on_dupack(&mut self, s: &mut SenderCore, cc: &mut dyn CongestionControl, _out: &mut Vec<OutSeg>) {
        if s.in_recovery {
            self.on_recovery_ack(s, cc, 0);
        }
    }

    fn on_ack_in_recovery(&mut self, s: &mut SenderCore, cc: &mut dyn CongestionControl, acked: u64, _out: &mut Vec<OutSeg>) -> bool {
        self.on_recovery_ack(s, cc, acked);
        // "No SACK blocks indicates fast recovery is over" once the ACK reaches `recover`: the
        // receiver holds nothing above snd_una. cwnd is left as the recovery grew it.
        if s.snd_una >= s.recover && s.sb.is_empty() {
            s.in_recovery = false;
            s.dupacks = 0;
            self.rtx.clear();
            self.stalled = false;
        }
        true
    }

    fn on_timeout(&mut self, _s: &mut SenderCore) {
        self.rtx.clear();
        self.stalled = false;
    }

    fn send(&mut self, s: &mut SenderCore, out: &mut Vec<OutSeg>) {
        if !s.in_recovery {
            // ns-2 recv(): dupacks_ = fack_ − last_ack_ − 1, the segments between the cumulative
            // ACK and the forward-most SACK; at numdupacks_ of them, fast retransmit with
            // slowdown(CLOSE_SSTHRESH_HALF|CLOSE_CWND_RESTART) and recover_ = t_seqno_.
            let between = (fack(s) - s.snd_una).div_ceil(s.mss).saturating_sub(1);
            // numdupacks_, lowered by Early Retransmit when configured (RFC 5827 §3.2).
            if s.sack_ok && between >= s.dupthresh() as u64 && s.snd_una >= s.recover && s.snd_nxt == s.snd_max {
                s.count_fast_retransmit();
                s.recover = s.snd_max;
                s.ssthresh = s.half_window();
                let mss = s.mss;
                s.set_cwnd(mss);
                s.loss_reduction(false, true);
                s.in_recovery = true;
                s.restart_rto();
                self.rtx.clear();
                self.stalled = false;
                let (una, nxt) = (s.snd_una, s.snd_max);
                let len = s.retransmit_hole(una, out);
                self.rtx.push(Rtx { seq: una, end: una + len, sent_at_nxt: nxt });
            } else {
                s.send_available(out);
                return;
            }
        }
        // send_much(): while t_seqno_ ≤ fack_ + win − retran_data_, the next hole below snd.fack,
        // else new data; nothing once a retransmission is known lost (`timeout_`).
        let mut burst = 0;
        while !self.stalled && !s.burst_done(burst) {
            burst += 1;
            let win = s.cwnd.min(s.peer_wnd);
            let awnd = s.snd_max.saturating_sub(fack(s)) + self.retran_data(s);
            if awnd + s.mss > win {
                break;
            }
            if let Some(p) = self.next_hole(s) {
                let nxt = s.snd_max;
                let len = s.retransmit_hole(p, out);
                self.rtx.push(Rtx { seq: p, end: p + len, sent_at_nxt: nxt });
            } else if s.can_send_new() {
                s.send_new(out);
            } else {
                break;
            }
        }
    }
}
