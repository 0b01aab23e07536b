//! RACK, time-based loss detection (RFC 8985 §6) as Linux 6.x runs it (net/ipv4/tcp_recovery.c,
//! `net.ipv4.tcp_recovery = 1`): a segment is lost once a segment sent after it has been
//! delivered and more than RACK.rtt + reo_wnd has passed since it was sent. The detector keeps
//! RACK's state (the newest delivered segment's send time, end and RTT; whether reordering was
//! seen) and marks segments lost in the transmit record (`txq.rs`, Linux's `TCPCB_LOST`).
//!
//! RACK runs under Linux's recovery (`recovery/linux.rs`, `variant = "sack"`). Without SACK the
//! kernel falls back to duplicate ACKs (`tcp_newreno_mark_lost`: DupThresh
//! duplicate ACKs, NewReno recovery): `dupthresh`, `is_lost` and `early_send` are then those of
//! `dupthresh.rs`. D-SACKs widen reo_wnd (`tcp_rack_update_reo_wnd`: one more min_rtt/4 step per
//! round with a D-SACK once reordering was seen, kept for 16 recoveries). Not modelled: the
//! microsecond clock (times are the simulator's nanoseconds).

use super::{DupThresh, EarlySend, LossDetection, LossView, RackInput, RackVerdict, ReoWndEvent};
use crate::tcp::config::TcpConfig;
use crate::tcp::txq::{mark_record_lost, TxQueue};
use std::ops::ControlFlow;
use crate::units::Time;

/// RFC 8985 §6.1 `RACK_sent_after(t1, seq1, t2, seq2)`: sent later, or at the same time with a
/// higher end (Linux `tcp_skb_sent_after`).
#[inline]
fn sent_after(t1: Time, seq1: u64, t2: Time, seq2: u64) -> bool {
    t1 > t2 || (t1 == t2 && seq1 > seq2)
}

#[derive(Clone, Debug)]
pub struct Rack {
    /// RACK.xmit_ts, RACK.end_seq: the most recently sent segment delivered so far (Linux
    /// `rack.mstamp`, `rack.end_seq`); RACK.rtt (`rack.rtt_us`).
    xmit_ts: Time,
    end_seq: u64,
    rtt: Time,
    /// A delivery advanced RACK since the last detection (`rack.advanced`).
    advanced: bool,
    /// Reordering was observed (Linux `tp->reord_seen`).
    reord_seen: bool,
    /// reo_wnd multiplier (`rack.reo_wnd_steps`, 1 to 255), raised by D-SACKs; a D-SACK is pending
    /// (`rack.dsack_seen`); `tp->delivered` at the last raise (`rack.last_delivered`); the
    /// recoveries left before the steps go back to 1 (`rack.reo_wnd_persist`, at most 16).
    reo_wnd_steps: u64,
    dsack_seen: bool,
    last_delivered: u64,
    reo_wnd_persist: u32,
    /// The smallest RTT of a never-retransmitted delivered segment seen by RACK.
    min_rtt: Option<Time>,
    /// The duplicate-ACK rules of a connection without SACK.
    fallback: DupThresh,
}

impl Rack {
    pub fn new(cfg: &TcpConfig) -> Self {
        Rack { xmit_ts: 0, end_seq: 0, rtt: 0, advanced: false, reord_seen: false, reo_wnd_steps: 1, dsack_seen: false, last_delivered: 0, reo_wnd_persist: 0, min_rtt: None, fallback: DupThresh::new(cfg) }
    }

    /// `reo_wnd_steps`.
    pub fn reo_wnd_steps(&self) -> u64 {
        self.reo_wnd_steps
    }

    /// Reordering has been seen (Linux `tp->reord_seen > 0`).
    pub fn reordering_seen(&self) -> bool {
        self.reord_seen
    }

    fn min_rtt(&self, i: &RackInput) -> Option<Time> {
        match (self.min_rtt, i.min_rtt) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Linux `tcp_rack_reo_wnd()` (RFC 8985 §6.2 step 4): "If reordering has not been observed,
    /// be aggressive during the recovery or starting the recovery by DUPACK threshold" (0);
    /// otherwise "allow min_rtt/4 settling delay", times the DSACK steps, at most SRTT.
    pub fn reo_wnd(&self, i: &RackInput) -> Time {
        if !self.reord_seen && (i.recovering || i.sacked_segs >= i.reordering as u64) {
            return 0;
        }
        let srtt = i.srtt.unwrap_or(0);
        match self.min_rtt(i) {
            // tcp_min_rtt() is ~0U before a sample: min(huge, srtt).
            None => srtt,
            Some(m) => (m / 4 * self.reo_wnd_steps).min(srtt),
        }
    }

    /// Linux `tcp_rack_advance()` (RFC 8985 §6.2 step 2) as the ACK's calls leave RACK: the
    /// transmit record (`txq.rs`) has already left out the retransmissions delivered sooner than
    /// min_rtt and taken RACK.rtt from the last call, which is not always the most recently sent
    /// segment's (a cumulative ACK of an old segment after a retransmission: the old one's).
    fn advance(&mut self, i: &RackInput) {
        let Some(s) = i.sample else { return };
        if !s.retransmitted {
            let rtt = i.now.saturating_sub(s.xmit_ts);
            self.min_rtt = Some(self.min_rtt.map_or(rtt, |m| m.min(rtt)));
        }
        self.advanced = true;
        self.rtt = s.rtt;
        if sent_after(s.xmit_ts, s.end_seq, self.xmit_ts, self.end_seq) {
            self.xmit_ts = s.xmit_ts;
            self.end_seq = s.end_seq;
        }
    }

    /// Linux `tcp_rack_detect_loss()` (RFC 8985 §6.2 step 5, `RACK_detect_loss`): every segment
    /// sent before RACK's, not SACKed and not lost-awaiting-retransmission, is lost once
    /// RACK.rtt + reo_wnd has passed since it was sent; otherwise the longest wait is the timer.
    fn detect(&mut self, i: &RackInput, txq: &mut TxQueue) -> RackVerdict {
        let reo_wnd = self.reo_wnd(i);
        let mut v = RackVerdict::default();
        let mut wait: Time = 0;
        let mut lost_bytes = 0;
        txq.for_each_mut(|r| {
            // The record and every later one were first sent after the RACK'ed segment (records
            // are in sequence order, first sent in that order, and a retransmission is later
            // still): none can be older, so stop, as Linux's walk of its time-sorted list stops
            // at the first skb "sent after the RACK'ed skb".
            if !sent_after(self.xmit_ts, self.end_seq, r.first_sent, r.end) {
                return ControlFlow::Break(());
            }
            // "Skip ones marked lost but not yet retransmitted" (and SACKed ones, which Linux
            // takes off its time-sorted list).
            if r.sacked || (r.lost && !r.retrans) {
                return ControlFlow::Continue(());
            }
            if !sent_after(self.xmit_ts, self.end_seq, r.last_sent, r.end) {
                return ControlFlow::Continue(());
            }
            // tcp_rack_skb_timeout(): rack.rtt_us + reo_wnd − (now − xmit time).
            let deadline = r.last_sent + self.rtt + reo_wnd;
            if deadline <= i.now {
                let was_retrans = r.lost && r.retrans;
                if mark_record_lost(r) {
                    lost_bytes += r.end - r.start;
                    v.marked += 1;
                } else if was_retrans {
                    v.marked += 1;
                }
            } else {
                wait = wait.max(deadline - i.now);
            }
            ControlFlow::Continue(())
        });
        txq.add_lost(lost_bytes);
        v.reo_timeout = (wait > 0).then_some(wait);
        v
    }
}

impl LossDetection for Rack {
    /// `tcp_rack_update_reo_wnd` and its inputs (`tcp_dsack_seen`, `tcp_try_undo_dsack`,
    /// `tcp_try_undo_recovery`), `TCP_RACK_RECOVERY_THRESH` 16.
    fn on_reo_wnd_event(&mut self, ev: ReoWndEvent) {
        const RECOVERY_THRESH: u32 = 16;
        match ev {
            ReoWndEvent::Dsack { tlp } => {
                if self.reord_seen && !tlp {
                    self.dsack_seen = true;
                }
            }
            ReoWndEvent::Update { prior_delivered, delivered } => {
                if prior_delivered == 0 {
                    return;
                }
                // "Disregard DSACK if a rtt has not passed since we adjusted reo_wnd".
                if prior_delivered < self.last_delivered {
                    self.dsack_seen = false;
                }
                if self.dsack_seen {
                    self.reo_wnd_steps = (self.reo_wnd_steps + 1).min(0xFF);
                    self.dsack_seen = false;
                    self.last_delivered = delivered;
                    self.reo_wnd_persist = RECOVERY_THRESH;
                } else if self.reo_wnd_persist == 0 {
                    self.reo_wnd_steps = 1;
                }
            }
            ReoWndEvent::UndoDsack => self.reo_wnd_persist = (self.reo_wnd_persist + 1).min(RECOVERY_THRESH),
            ReoWndEvent::RecoveryKept => self.reo_wnd_persist = self.reo_wnd_persist.saturating_sub(1),
        }
    }

    fn name(&self) -> &'static str {
        "rack"
    }

    /// Without SACK (the only case the sender asks): the kernel's `tcp_newreno_mark_lost`,
    /// "three or more DUPACKs to start the fast recovery" (`tp->reordering`).
    fn dupthresh(&self, v: &LossView) -> u32 {
        self.fallback.dupthresh(v)
    }

    /// Under Linux's recovery (`variant = "sack"` with SACK) the sender reads RACK's marks in
    /// the transmit record (`SenderCore::is_lost`) and sends its own segments in Disorder; any
    /// other recovery (no SACK: the kernel's fallback; another variant) gets the duplicate-ACK
    /// rules.
    fn is_lost(&self, v: &LossView, seq: u64) -> bool {
        self.fallback.is_lost(v, seq)
    }

    fn early_send(&self, v: &LossView) -> Option<EarlySend> {
        self.fallback.early_send(v)
    }

    fn uses_transmit_record(&self) -> bool {
        true
    }

    /// Linux `tcp_ack()` → `tcp_sacktag_write_queue` / `tcp_clean_rtx_queue` (reordering,
    /// `tcp_rack_advance`) → `tcp_rack_mark_lost` ("if (!tp->rack.advanced) return false").
    fn on_ack(&mut self, i: &RackInput, txq: &mut TxQueue) -> RackVerdict {
        // tcp_check_sack_reordering(): a never-retransmitted segment delivered below the highest
        // SACKed sequence arrived out of order.
        if i.reord_low < i.prior_fack {
            self.reord_seen = true;
        }
        self.advance(i);
        if !self.advanced {
            return RackVerdict::default();
        }
        self.advanced = false;
        self.detect(i, txq)
    }

    /// Linux `tcp_rack_reo_timeout()`: detect again, with RACK as it stands.
    fn on_reo_timeout(&mut self, i: &RackInput, txq: &mut TxQueue) -> RackVerdict {
        self.detect(i, txq)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::cc::RackSample;

    const MS: Time = 1_000_000;

    fn input(now: Time, sample: Option<RackSample>) -> RackInput {
        RackInput { now, srtt: Some(100 * MS), min_rtt: Some(100 * MS), recovering: false, sacked_segs: 1, reordering: 3, sample, reord_low: u64::MAX, prior_fack: 0 }
    }

    /// RFC 8985 §6.2 step 4 / Linux `tcp_rack_reo_wnd`: 0 once DupThresh segments are SACKed
    /// or in recovery (no reordering seen); min_rtt/4 otherwise, at most SRTT.
    #[test]
    fn reo_wnd_rules() {
        let mut r = Rack::new(&TcpConfig::rfc());
        let i = input(0, None);
        assert_eq!(r.reo_wnd(&i), 25 * MS);
        assert_eq!(r.reo_wnd(&RackInput { sacked_segs: 3, ..i }), 0);
        assert_eq!(r.reo_wnd(&RackInput { recovering: true, ..i }), 0);
        assert_eq!(r.reo_wnd(&RackInput { srtt: Some(10 * MS), ..i }), 10 * MS, "bounded by SRTT");
        r.reord_seen = true;
        assert_eq!(r.reo_wnd(&RackInput { sacked_segs: 3, recovering: true, ..i }), 25 * MS);
    }

    /// `tcp_rack_advance`: RACK.rtt is the sample's (the last call's), RACK.xmit_ts only moves
    /// forward.
    #[test]
    fn advance_takes_the_samples_rtt_and_keeps_the_newest_send_time() {
        let mut r = Rack::new(&TcpConfig::rfc());
        r.advance(&input(150 * MS, Some(RackSample { xmit_ts: 120 * MS, end_seq: 1001, retransmitted: true, rtt: 30 * MS })));
        assert!(r.advanced);
        assert_eq!((r.xmit_ts, r.end_seq, r.rtt), (120 * MS, 1001, 30 * MS));
        r.advance(&input(160 * MS, Some(RackSample { xmit_ts: 100 * MS, end_seq: 4001, retransmitted: false, rtt: 60 * MS })));
        assert_eq!((r.xmit_ts, r.end_seq, r.rtt), (120 * MS, 1001, 60 * MS));
    }
}
