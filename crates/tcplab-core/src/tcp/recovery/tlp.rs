//! Tail Loss Probe (RFC 8985 §7) as Linux 6.x sends it: `tcp_schedule_loss_probe` and
//! `tcp_send_loss_probe` (net/ipv4/tcp_output.c), `tcp_process_tlp_ack` (net/ipv4/tcp_input.c),
//! `net.ipv4.tcp_early_retrans = 3`. A probe goes out when the probe timeout (PTO) expires with
//! nothing else under way: new data if the receive window allows, else the last segment again,
//! so that a tail loss is repaired by the ACK clock (RACK, fast recovery) instead of the RTO.
//! The timer is the connection's one retransmission timer, armed for `XmitTimer::LossProbe`.
//!
//! Without D-SACK (`dsack` off), an ACK beyond the probe of a retransmitted segment always reads
//! as a repaired loss (the cwnd reduction of `tcp_process_tlp_ack`); with it, the receiver's
//! D-SACK of the probe (the original arrived too) ends the episode with cwnd left alone.

use crate::tcp::cc::CongestionEvent;
use crate::tcp::gate::SendKind;
use crate::tcp::jiffies::Jiffies;
use crate::tcp::state::{OutSeg, SenderCore, XmitTimer};
use crate::units::{Time, MS, SEC};

/// `TCP_TIMEOUT_MIN_US` (include/net/tcp.h): 2 ms, added to the PTO and the reordering timer.
pub const TCP_TIMEOUT_MIN: Time = 2 * MS;
/// `TCP_TIMEOUT_INIT`: the PTO before any RTT sample, 1 s.
const TCP_TIMEOUT_INIT: Time = SEC;

/// Nanoseconds to whole microseconds, rounded up (the kernel's timers take µs).
fn us(t: Time) -> u64 {
    t.div_ceil(1000)
}

/// When a timer armed now for a duration of `us` microseconds expires: `usecs_to_jiffies` and the
/// timer wheel with `hz`, exactly without jiffies.
pub fn xmit_timer_at(s: &SenderCore, us: u64) -> Time {
    let j = Jiffies::of(&s.cfg);
    j.timer_expiry(s.now, j.usecs_to_jiffies(us))
}

/// Linux `tcp_rto_delta_us`: how far in the future the RTO of the oldest outstanding segment
/// lies (its last transmission + RTO − now), negative once it has passed.
pub fn rto_delta(s: &SenderCore) -> i64 {
    let head = s.txq.head().map_or(s.now, |r| r.last_sent);
    (head + s.rtt.rto()) as i64 - s.now as i64
}

/// Linux `tcp_rearm_rto`: the timer for the RTO, counted from the oldest outstanding segment's
/// transmission when it was armed for RACK or a probe (`from_head`), else from now; cleared
/// with nothing outstanding.
pub fn rearm_rto(s: &mut SenderCore, from_head: bool) {
    if s.snd_una >= s.snd_max {
        s.rto_timer.cancel();
        s.xmit_timer = XmitTimer::Retrans;
        return;
    }
    if from_head {
        let d = rto_delta(s).max(1000) as u64;
        let at = xmit_timer_at(s, us(d));
        s.reset_xmit_timer(XmitTimer::Retrans, at);
    } else {
        s.restart_rto();
    }
}

#[derive(Clone, Debug, Default)]
pub struct Tlp {
    /// `net.ipv4.tcp_early_retrans` ≥ 3 (the `tlp` knob).
    pub enabled: bool,
    /// TLP.end_seq (Linux `tlp_high_seq`): snd_nxt when the outstanding probe was sent.
    pub high_seq: Option<u64>,
    /// The probe was a retransmission (`tlp_retrans`), not new data.
    retrans: bool,
}

impl Tlp {
    pub fn new(enabled: bool) -> Tlp {
        Tlp { enabled, high_seq: None, retrans: false }
    }

    /// Linux `tcp_schedule_loss_probe(sk, advancing_rto)` (RFC 8985 §7.2): "Schedule a loss
    /// probe in 2*RTT for SACK capable connections not in loss recovery"; `open`: the sender is
    /// in CA_Open (nothing SACKed, lost or retransmitted outstanding). Returns whether the timer
    /// was armed for the probe.
    pub fn schedule(&self, s: &mut SenderCore, open: bool, advancing_rto: bool) -> bool {
        if !self.enabled || !s.sack_ok || !open || s.snd_una >= s.snd_max {
            return false;
        }
        // "Probe timeout is 2*rtt. Add minimum RTO to account for delayed ack when there's one
        // outstanding packet. If no RTT sample is available then probe after TCP_TIMEOUT_INIT."
        let pto_us = match s.rtt.srtt() {
            Some(srtt) => us(2 * srtt) + if s.txq.len() == 1 { us(s.cfg.rto_min.0) } else { us(TCP_TIMEOUT_MIN) },
            None => us(TCP_TIMEOUT_INIT),
        };
        // "If the RTO formula yields an earlier time, then use that time."
        let rto_delta = if advancing_rto { s.rtt.rto() as i64 } else { rto_delta(s) };
        let pto_us = if rto_delta > 0 { pto_us.min(us(rto_delta as u64)) } else { pto_us };
        let at = xmit_timer_at(s, pto_us);
        s.reset_xmit_timer(XmitTimer::LossProbe, at);
        true
    }

    /// Linux `tcp_send_loss_probe` (RFC 8985 §7.3): the PTO expired. "At most one outstanding
    /// TLP"; new data if the window allows (one segment, whatever cwnd: `tcp_write_xmit` with
    /// push_one = 2), else the highest segment again; then the RTO restarts from now.
    pub fn fire(&mut self, s: &mut SenderCore, out: &mut Vec<OutSeg>) {
        if self.high_seq.is_some() || s.snd_una >= s.snd_max {
            rearm_rto(s, true);
            return;
        }
        self.retrans = false;
        if s.snd_nxt < s.snd_max {
            s.snd_nxt = s.snd_max;
        }
        if !s.may_send_single(SendKind::LossProbe) {
            rearm_rto(s, true);
            return;
        }
        if s.can_send_new() {
            s.send_new(out);
        } else {
            let Some(tail) = s.txq.tail().map(|r| r.start.max(s.snd_una)) else {
                rearm_rto(s, true);
                return;
            };
            s.probe_tx = true;
            s.transmit(tail, out);
            s.probe_tx = false;
            self.retrans = true;
        }
        // "Record snd_nxt for loss detection."
        self.high_seq = Some(s.snd_max);
        s.stats.tlp_probes += 1;
        // "Reset s.t. tcp_rearm_rto will restart timer from now".
        rearm_rto(s, false);
    }

    /// A retransmitted probe is outstanding (`tlp_high_seq && tlp_retrans`: `tcp_init_undo`
    /// counts it among the retransmissions a D-SACK may prove spurious).
    pub fn retrans_out(&self) -> bool {
        self.high_seq.is_some() && self.retrans
    }

    /// Linux `tcp_process_tlp_ack` (RFC 8985 §7.4): an ACK at or beyond the probe ends the
    /// episode. A probe of new data needed no repair; an ACK beyond a retransmitted probe's
    /// TLP.end_seq without a DSACK means the probe repaired a loss: the window is reduced as
    /// in CWR (`tcp_init_cwnd_reduction`, then `tcp_end_cwnd_reduction`: cwnd = ssthresh at
    /// once); a pure duplicate ACK means the original and the probe both arrived.
    /// `pure_dup`: the ACK advanced nothing and carried no new SACK information; `dsack_tlp`:
    /// it carried a D-SACK of the probe (`FLAG_DSACK_TLP`: "This DSACK means original and TLP
    /// probe arrived; no loss").
    pub fn on_ack(&mut self, s: &mut SenderCore, pure_dup: bool, dsack_tlp: bool) {
        let Some(h) = self.high_seq else { return };
        if s.snd_una < h {
            return;
        }
        if !self.retrans || dsack_tlp {
            self.high_seq = None;
        } else if s.snd_una > h {
            self.high_seq = None;
            s.cc_event(CongestionEvent::FastRetransmit(s.loss_context()));
            if s.ssthresh < u64::MAX / 4 {
                s.set_recovery_window(s.ssthresh);
                s.cc_cwnd_stamp();
            }
            s.stats.tlp_recoveries += 1;
        } else if pure_dup {
            self.high_seq = None;
        }
    }
}
