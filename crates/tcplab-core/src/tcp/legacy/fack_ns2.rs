//! ns-2's `Agent/TCP/Fack` (tcp/tcp-fack.cc) with `rampdown_` false: loss detected when more
//! than DupThresh segments lie between snd_una and the forward-most SACK, then ssthresh =
//! window/2 and a cwnd restart from one segment, slow start inside the recovery, and FACK's send
//! rule awnd = snd.nxt − snd.fack + retran_data < cwnd.

use super::Rtx;
use crate::tcp::gate::{Ask, Limit, SendKind};
use crate::tcp::recovery::Recovery;
use crate::tcp::state::{OutSeg, SenderCore};

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
        let top = s.fack();
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
    fn on_recovery_ack(&mut self, s: &mut SenderCore, acked: u64) {
        let top = s.fack();
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
        s.cc_on_ack(acked);
    }
}

impl Recovery for FackNs2 {
    fn name(&self) -> &'static str {
        "fack"
    }

    fn on_dupack(&mut self, s: &mut SenderCore, _out: &mut Vec<OutSeg>) {
        if s.in_recovery {
            self.on_recovery_ack(s, 0);
        }
        // ns-2 recv() takes every duplicate through oldack(), whose newtimer() restarts the
        // retransmission timer (tcp/tcp-fack.cc): in and out of fast recovery.
        if s.snd_una < s.snd_max {
            s.restart_rto();
        }
    }

    fn on_ack_in_recovery(&mut self, s: &mut SenderCore, acked: u64, _out: &mut Vec<OutSeg>) -> bool {
        self.on_recovery_ack(s, acked);
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

    fn grows_on_new_ack(&self, s: &SenderCore) -> bool {
        // ns-2 recv() outside fast recovery: only an ACK above last_ack_ with no SACK blocks is
        // a "regular ACK" (recv_newack_helper() → opencwnd()); one with SACK blocks goes through
        // oldack(), which does not open cwnd. The scoreboard holds blocks above snd_una exactly
        // when the ACK reported some.
        !(s.sack_ok && !s.sb.is_empty())
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
            let between = (s.fack() - s.snd_una).div_ceil(s.mss).saturating_sub(1);
            // numdupacks_, lowered by Early Retransmit when configured (RFC 5827 §3.2).
            if s.sack_ok && between >= s.dupthresh() as u64 && s.snd_una >= s.recover && s.snd_nxt == s.snd_max {
                s.count_fast_retransmit();
                s.recover = s.snd_max;
                let half = s.half_window();
                s.legacy_set_ssthresh(half);
                let mss = s.mss;
                s.legacy_set_cwnd(mss);
                s.loss_reduction(false, true);
                s.in_recovery = true;
                s.restart_rto();
                self.rtx.clear();
                self.stalled = false;
                let (una, nxt) = (s.snd_una, s.snd_max);
                let len = if s.may_send_single(SendKind::FastRetransmit) { s.retransmit_hole(una, out) } else { 0 };
                self.rtx.push(Rtx { seq: una, end: una + len, sent_at_nxt: nxt });
            } else {
                // `if (dupacks_ == 0) send_much(...)`: a new ACK without SACK blocks (newack()
                // zeroes dupacks_) sends; one with a hole below the forward-most SACK does not.
                if between == 0 {
                    s.send_available(out);
                }
                return;
            }
        }
        // send_much(): while t_seqno_ ≤ fack_ + win − retran_data_, the next hole below snd.fack,
        // else new data; nothing once a retransmission is known lost (`timeout_`).
        let mut burst = 0;
        while !self.stalled {
            let awnd = s.snd_max.saturating_sub(s.fack()) + self.retran_data(s);
            if !s.send_gate(burst, Ask { used: awnd, need: s.mss, limit: Limit::CwndRwnd, burst: true, what: SendKind::Window }) {
                break;
            }
            burst += 1;
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
