//! Zero-window probing (the persist timer, RFC 9293 §3.8.6.1) as Linux 6.x does it, with
//! `rto_model = "linux"`: when the peer's window stops new data with nothing in flight, a
//! probe timer is armed at max(RTO, `TCP_RTO_MIN`) (`tcp_check_probe_timer`,
//! `tcp_probe0_base`); each expiry sends a zero-length segment at SND.UNA − 1, which the peer
//! must acknowledge with its window (`tcp_send_probe0` → `tcp_write_wakeup` →
//! `tcp_xmit_probe_skb`), and doubles the next wait, at most `TCP_RTO_MAX` (`tcp_probe0_when`).
//! An ACK that opens the window clears the timer and the backoff; one that leaves it closed
//! restarts the timer from now (`tcp_ack_probe`). The probe is not data: it leaves no record,
//! is not counted as sent data and does not end an idle period (`lsndtime`).
//!
//! Not modelled: the abort after `tcp_retries2` unanswered probes (`tcp_probe_timer`), and a
//! window that admits part of the next segment (`tcp_write_wakeup` then sends that part).

use super::jiffies::Jiffies;
use super::state::{OutSeg, SenderCore, SenderPhase, XmitTimer};
use crate::net::{PacketTag, Segment, FLAG_ACK};
use crate::units::Time;

/// ilog2(TCP_RTO_MAX / TCP_RTO_MIN) + 1 = ilog2(120 s / 200 ms) + 1: the most doublings
/// `tcp_probe0_when` applies.
const MAX_PROBE_BACKOFF: u32 = 10;

/// The persist state (`icsk_backoff` and `icsk_probes_out` while probing), kept by the sender
/// beside its `SenderCore` (so that `state.rs` does not import this module).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Persist {
    backoff: u32,
    pub probes_out: u32,
}

/// Probing applies: Linux's timers (`rto_model = "linux"`), an open connection, nothing in
/// flight and data waiting (what makes `tcp_write_xmit` return true and
/// `__tcp_push_pending_frames` call `tcp_check_probe_timer`).
fn window_stalls(s: &SenderCore) -> bool {
    s.cfg.rto_model == super::config::RtoModel::Linux && s.phase == SenderPhase::Established && s.snd_una == s.snd_max && s.snd_max < s.data_end && !s.can_send_new()
}

/// `tcp_probe0_when`: max(RTO, TCP_RTO_MIN) doubled `backoff` times, at most TCP_RTO_MAX; the
/// timer runs on the jiffies wheel.
fn probe_at(s: &SenderCore, backoff: u32) -> Time {
    let base = s.rtt.rto().max(s.cfg.rto_min.0);
    let when = (base << backoff.min(MAX_PROBE_BACKOFF)).min(s.cfg.rto_max.0);
    let j = Jiffies::of(&s.cfg);
    j.timer_expiry(s.now, when.div_ceil(j.ns()))
}

/// `tcp_check_probe_timer`, after a send attempt: arm the probe if the window stalls the sender
/// and no timer is pending.
pub fn check(p: &Persist, s: &mut SenderCore) {
    if window_stalls(s) && !s.rto_timer.is_set() {
        let at = probe_at(s, p.backoff);
        s.reset_xmit_timer(XmitTimer::Probe0, at);
    }
}

/// `tcp_ack_probe` (from `tcp_ack`, nothing in flight): the window opened: the timer and the
/// backoff are cleared so that the sends this ACK allows arm the RTO; still closed: the probe
/// timer restarts from now. Every ACK resets `icsk_probes_out`.
pub fn on_ack(p: &mut Persist, s: &mut SenderCore) {
    p.probes_out = 0;
    if s.xmit_timer != XmitTimer::Probe0 {
        return;
    }
    if window_stalls(s) {
        let at = probe_at(s, p.backoff);
        s.reset_xmit_timer(XmitTimer::Probe0, at);
    } else {
        p.backoff = 0;
        s.rto_timer.cancel();
        s.xmit_timer = XmitTimer::Retrans;
    }
}

/// `tcp_probe_timer` → `tcp_send_probe0`: the zero-window probe (`tcp_xmit_probe_skb(sk, 0)`:
/// "Use a previous sequence. This should cause the other end to send an ack."), then the next
/// one a doubled wait later; nothing when the window no longer stalls the sender.
pub fn on_timer(p: &mut Persist, s: &mut SenderCore, out: &mut Vec<OutSeg>) {
    s.xmit_timer = XmitTimer::Retrans;
    if !window_stalls(s) {
        *p = Persist::default();
        return;
    }
    let seg = Segment { seq: s.snd_una - 1, ack: s.ack_no, flags: FLAG_ACK, wnd: u32::MAX, ..Default::default() };
    out.push(OutSeg { seg, tag: PacketTag::Other, edt: 0 });
    p.probes_out += 1;
    p.backoff = (p.backoff + 1).min(s.cfg.data_retries);
    let at = probe_at(s, p.backoff);
    s.reset_xmit_timer(XmitTimer::Probe0, at);
}
