//! The ns "Sack1" sender of Fall & Floyd 1996 (tcp/tcp-sack1.cc) used by the Mathis study:
//! Reno's window halving, a *counted* pipe (−1 per duplicate ACK, −2 per partial ACK, +1 per
//! transmission after the fast retransmission), and retransmission of every hole below the
//! highest SACKed byte in order.

use crate::tcp::gate::{Ask, Limit, SendKind};
use crate::tcp::recovery::{Caps, Recovery};
use crate::tcp::state::{OutSeg, SenderCore};

#[derive(Default)]
pub struct Sack1 {
    /// The counted pipe, bytes (ns-2's pipe_, in segments there).
    pipe: i64,
    /// Holes below this have been retransmitted in the current recovery.
    rtx_next: u64,
    /// The ACK being processed started the recovery: it sends the fast retransmission alone.
    entered: bool,
}

impl Recovery for Sack1 {
    fn name(&self) -> &'static str {
        "sack1"
    }

    fn on_dupack(&mut self, s: &mut SenderCore, out: &mut Vec<OutSeg>) {
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
                let half = s.half_window();
                let before = s.cwnd;
                s.legacy_set_ssthresh(half);
                // `halve_cwnd_unfloored`: slowdown()'s cwnd_ = ⌊window()/2⌋, below ssthresh_
                // from a window of 2 or 3 (tcp/tcp.cc).
                let cwnd = crate::tcp::recovery::unfloored_half(s, before).unwrap_or(half);
                s.legacy_set_cwnd(cwnd);
                s.loss_reduction(false, true);
                s.in_recovery = true;
                s.restart_rto();
                // tcp/tcp-sack1.cc dupack_action(): pipe_ = maxseq_ − highest_ack_ − numdupacks,
                // the packets outstanding less the duplicate ACKs. The fast retransmission is
                // sent by output(), outside send_much(), so it is not counted in pipe_.
                self.pipe = s.flight_size() as i64 - s.dupacks as i64 * mss;
                let una = s.snd_una;
                let len = if s.may_send_single(SendKind::FastRetransmit) { s.retransmit_hole(una, out) } else { 0 };
                self.rtx_next = una + len;
                // recv() chose its branch before dupack_action() set fastrecov_: outside fast
                // recovery it calls send_much() only when `dupacks_ == 0`, so the ACK that starts
                // the recovery sends the fast retransmission and nothing else, whatever room
                // pipe_ leaves below cwnd_ (tcp/tcp-sack1.cc).
                self.entered = true;
            }
        } else {
            self.pipe -= mss;
        }
    }

    fn on_ack_in_recovery(&mut self, s: &mut SenderCore, acked: u64, _out: &mut Vec<OutSeg>) -> bool {
        if s.snd_una >= s.recover {
            s.in_recovery = false;
            s.dupacks = 0;
            // Sack1TcpAgent::recv(): "ACK indicates fast recovery is over": recover_ = 0, so the
            // next third duplicate ACK fast-retransmits again (dupack_action()'s `highest_ack_ >
            // recover_`), even for a loss in the window the recovery repaired (tcp/tcp-sack1.cc).
            // A timeout's recover_ = maxseq_ is kept until then.
            s.recover = 0;
            // ns-2's Sack1 leaves cwnd_ as slowdown() set it (newack() only, tcp/tcp-sack1.cc):
            // ssthresh, or the unfloored half below it with `halve_cwnd_unfloored`.
            // (`precision_reduce`: the unrounded half, which may lie above ssthresh.)
            if !s.cfg.halve_cwnd_unfloored && !s.cfg.precision_reduce {
                let ss = s.ssthresh;
                s.legacy_set_cwnd(ss);
            }
            // `sack1_grow_on_recovery_exit`: ns-2's FullTcp/Sack opens the window on this ACK as
            // on any new ACK (`FullTcpAgent::recv()` → `opencwnd()` after
            // `SackFullTcpAgent::ack_action()`, tcp/tcp-full.cc); the one-way Sack1 does not.
            if s.cfg.sack1_grow_on_recovery_exit {
                s.cc_on_ack(acked);
            }
        } else {
            // A partial ACK: the retransmission and the original have both left the network.
            self.pipe -= 2 * s.mss as i64;
        }
        true
    }

    fn on_timeout(&mut self, s: &mut SenderCore) {
        self.rtx_next = 0;
        self.pipe = 0;
        self.entered = false;
        // tcp/tcp-sack1.cc timeout(): the scoreboard is cleared and `timeout_` set; until a new
        // cumulative ACK clears it, duplicate ACKs leave the scoreboard alone.
        s.sack_ignored = true;
    }

    fn caps(&self) -> Caps {
        // ns-2's Sack1 goes back N over everything after a timeout (`t_seqno_ = highest_ack_ + 1`
        // in reset_rtx_timer(), tcp/tcp.cc, with an empty scoreboard).
        Caps { gbn_skips_sacked: false, ..Caps::STANDARD }
    }

    fn send(&mut self, s: &mut SenderCore, out: &mut Vec<OutSeg>) {
        if std::mem::take(&mut self.entered) {
            return;
        }
        if !s.in_recovery {
            s.send_available(out);
            return;
        }
        let mut burst = 0;
        // ns-2 send_much() while `pipe_ < int(cwnd_)` (tcp/tcp-sack1.cc): pipe in whole segments
        // below the truncated window. A whole-segment cwnd needs one byte of room; the fractional
        // cwnd of `precision_reduce` a whole segment (pipe + SMSS ≤ cwnd ⇔ pipe_ < ⌊cwnd_⌋).
        let need = if s.cfg.precision_reduce { s.mss } else { 1 };
        while s.send_gate(burst, Ask { used: self.pipe.max(0) as u64, need, limit: Limit::Cwnd, burst: true, what: SendKind::Window }) {
            burst += 1;
            let top = s.fack();
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
