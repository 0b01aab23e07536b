//! Proportional Rate Reduction (RFC 9937, as Linux's `tcp_cwnd_reduction` computes it) in RFC
//! 6675's SACK recovery (`reduction = "prr"`), on one whole connection in the harness: how many
//! segments go out on each ACK of a recovery, the window on each, and the window at the end. The
//! expected numbers come from RFC 9937's per-ACK step written out below in packets (`Step`), with
//! pipe followed by hand (RFC 6675 §4 SetPipe) — not from the code under test.

#[macro_use]
mod harness;
use harness::{Harness, Seg, MSS, SEG};
use tcplab_core::tcp::config::{Cc, Reduction};
use tcplab_core::tcp::{CaState, Variant};
use tcplab_core::units::ms;

/// A SACK connection with `n` segments out (cwnd n) and the window reduction `reduction`.
fn sending(n: u64, cc: Cc, reduction: Reduction) -> Harness {
    Harness::sending(n, |c| {
        c.variant = Variant::Sack;
        c.sack = true;
        c.cc = cc;
        c.reduction = reduction;
    })
}

/// The receiver's ACK: cumulative `ack`, one SACK block.
fn ack(ack: u64, block: Option<(u64, u64)>) -> Seg {
    let sack: &'static [(u64, u64)] = match block {
        Some(b) => Box::leak(vec![b].into_boxed_slice()),
        None => &[],
    };
    Seg { ack, sack, ..SEG }
}

/// First byte of data segment k (segments cover ((k−1)·MSS, k·MSS] from byte 1).
fn start(k: u64) -> u64 {
    (k - 1) * MSS + 1
}

/// ssthresh after a loss at a window of `n` segments: Reno's FlightSize/2 (RFC 5681 eq. 4),
/// CUBIC's ⌊n·717/1024⌋ (Linux `cubictcp_recalc_ssthresh`, β = 0.7).
fn ssthresh(n: u64, cc: Cc) -> i64 {
    match cc {
        Cc::Reno => (n / 2).max(2) as i64,
        Cc::Cubic => (n * 717 / 1024).max(2) as i64,
        other => panic!("the PRR tests run Reno and CUBIC, not {other:?}"),
    }
}

/// RFC 9937's per-ACK step with Linux's RecoverFS = the window before the reduction
/// (`tcp_init_cwnd_reduction`: prior_cwnd), in packets as the kernel counts them.
struct Step {
    ssthresh: i64,
    recover_fs: i64,
    prr_delivered: i64,
    prr_out: i64,
}

impl Step {
    /// sndcnt for an ACK that delivered `delivered` with `pipe` after it; `safe`: RFC 9937's
    /// safeACK (SND.UNA advanced, no further loss).
    fn sndcnt(&mut self, delivered: i64, pipe: i64, safe: bool) -> i64 {
        self.prr_delivered += delivered;
        let s = if pipe > self.ssthresh {
            // "out = DIV_ROUND_UP(prr_delivered * ssthresh, RecoverFS); sndcnt = out − prr_out"
            (self.prr_delivered * self.ssthresh + self.recover_fs - 1) / self.recover_fs - self.prr_out
        } else {
            // PRR-SSRB: MAX(prr_delivered − prr_out, DeliveredData) (+ SMSS on a safeACK),
            // at most ssthresh − pipe.
            ((self.prr_delivered - self.prr_out).max(delivered) + safe as i64).min(self.ssthresh - pipe)
        };
        // "Force a fast retransmit upon entering fast recovery."
        s.max(if self.prr_out == 0 { 1 } else { 0 })
    }
}

/// Ten (or twenty) segments out, segment 1 lost, every other segment's ACK arriving: the
/// segments sent on each ACK of the recovery follow PRR, cwnd = pipe + sndcnt on each, and the
/// ACK of the retransmission ends recovery with cwnd = ssthresh.
fn one_loss(n: u64, cc: Cc) -> Vec<i64> {
    let mut h = sending(n, cc, Reduction::Prr);
    let ss = ssthresh(n, cc);
    let mut step = Step { ssthresh: ss, recover_fs: n as i64, prr_delivered: 0, prr_out: 0 };
    let mut pipe = n as i64;
    let mut next_new = n + 1;
    let mut per_ack = Vec::new();
    for k in 2..=n {
        h.send(ms(100 + k), ack(1, Some((start(2), start(k + 1)))));
        // RFC 6675 SetPipe: the SACKed segment leaves pipe; on the third duplicate ACK segment 1
        // is IsLost and leaves it too.
        pipe -= 1 + (k == 4) as i64;
        if k < 4 {
            // RFC 6675 §5 (3): no Limited Transmit configured; nothing before the third.
            h.recv_nothing();
            continue;
        }
        // RFC 9937 / Linux `tcp_cwnd_reduction`: cwnd = pipe + sndcnt, sndcnt segments leave.
        let sndcnt = step.sndcnt(1, pipe, false);
        let sent = h.take_sent();
        assert_eq!(sent.len() as i64, sndcnt, "ACK of segment {k}: {sent:?}");
        assert_eq!(h.info().cwnd, (pipe + sndcnt) as u64 * MSS, "ACK of segment {k}: cwnd = pipe + sndcnt");
        for (i, (_, s)) in sent.iter().enumerate() {
            if k == 4 && i == 0 {
                // RFC 6675 (4.3): the fast retransmission first, forced by PRR's first sndcnt.
                assert_eq!(s.seq, 1);
            } else {
                // NextSeg (2): new data (segment 1 is the only hole and already resent).
                assert_eq!(s.seq, start(next_new));
                next_new += 1;
            }
        }
        step.prr_out += sndcnt;
        pipe += sndcnt;
        per_ack.push(sndcnt);
        assert_eq!(h.info().ca_state, CaState::Recovery);
    }
    // The retransmission's ACK covers RecoveryPoint: recovery ends, cwnd = ssthresh (Linux
    // `tcp_end_cwnd_reduction`; RFC 9937: "cwnd = ssthresh" at the end of recovery).
    h.send(ms(300), ack(n * MSS + 1, None));
    assert_ne!(h.info().ca_state, CaState::Recovery);
    assert_eq!(h.info().ssthresh, ss as u64 * MSS);
    assert_eq!(h.info().cwnd, ss as u64 * MSS, "cwnd at the end of recovery = ssthresh");
    per_ack
}

/// Reno's β = 0.5 with 20 segments out: pipe (16 after the third duplicate ACK) is above
/// ssthresh 10, so PRR's proportional part sends ⌈10·d/20⌉ − prr_out: one segment for every
/// two delivered, the fast retransmission first (RFC 9937's algorithm, the shape of RFC 6937
/// §3.1's first example).
#[test]
fn reno_one_loss_in_twenty_sends_one_segment_per_two_delivered() {
    let sent = one_loss(20, Cc::Reno);
    assert_eq!(&sent[..12], &[1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0]);
    // pipe has come down to ssthresh: PRR-SSRB holds it there, one out per one delivered.
    assert_eq!(&sent[12..], &[0, 1, 1, 1, 1]);
}

/// CUBIC's β = 0.7 with 20 segments out: ssthresh 14, ⌈14·d/20⌉ − prr_out, seven segments for
/// every ten delivered while pipe > ssthresh.
#[test]
fn cubic_one_loss_in_twenty_sends_seven_per_ten_delivered() {
    let sent = one_loss(20, Cc::Cubic);
    assert_eq!(&sent[..3], &[1, 1, 1], "⌈14·1/20⌉ = 1, ⌈28/20⌉ = 2, ⌈42/20⌉ = 3");
    assert_eq!(sent[3], 0, "⌈56/20⌉ = 3: nothing on the fourth");
}

/// Ten segments out and one loss (the outside check's flight): after three SACKed and one lost
/// pipe is 6. With Reno's ssthresh 5 the proportional part sends the retransmission, then
/// nothing until pipe is below 5; then one per ACK (SSRB). With CUBIC's 7 pipe is already below
/// ssthresh: one segment per ACK from the start (PRR-SSRB, packet conservation).
#[test]
fn ten_segments_one_loss_reno_and_cubic() {
    assert_eq!(one_loss(10, Cc::Reno), [1, 0, 0, 1, 1, 1, 1]);
    assert_eq!(one_loss(10, Cc::Cubic), [1, 1, 1, 1, 1, 1, 1]);
}

/// The same flight with `reduction = "halve"` (the default): today's RFC 6675 recovery, cwnd =
/// ssthresh at once (RFC 6675 §5 (4.2)): the retransmission, then nothing until pipe falls
/// below ssthresh.
#[test]
fn halve_cuts_the_window_at_once() {
    let mut h = sending(10, Cc::Reno, Reduction::Halve);
    h.send(ms(102), ack(1, Some((start(2), start(3)))));
    h.send(ms(103), ack(1, Some((start(2), start(4)))));
    h.recv_nothing();
    h.send(ms(104), ack(1, Some((start(2), start(5)))));
    h.recv(ms(104), [seg!(seq = 1, ..harness::DATA)]);
    assert_eq!(h.info().cwnd, 5 * MSS, "RFC 6675 (4.2): cwnd = ssthresh = FlightSize / 2");
    // pipe: 10 − 3 SACKed − 1 lost + 1 retransmitted = 7; nothing until it is below 5.
    for k in 5..=6 {
        h.send(ms(100 + k), ack(1, Some((start(2), start(k + 1)))));
        h.recv_nothing();
    }
    h.send(ms(107), ack(1, Some((start(2), start(8)))));
    h.recv(ms(107), [seg!(seq = start(11), ..harness::DATA)]);
    assert_eq!(h.info().cwnd, 5 * MSS);
}

/// PRR-SSRB after many losses (RFC 9937, pipe ≤ ssthresh; Linux's `delta >= 0` branch):
/// segments 1–10 of 20 lost. After the third duplicate ACK pipe is 7, below ssthresh 10: each
/// duplicate ACK lets one retransmission out (packet conservation, no SafeACK while SND.UNA
/// stands still); each partial ACK of a retransmission is a SafeACK (SND.UNA advances, nothing
/// newly lost) and lets one more out, until pipe reaches ssthresh; the ACK of everything ends
/// recovery with cwnd = ssthresh.
#[test]
fn ssrb_after_ten_losses_catches_up_on_safe_acks() {
    let n = 20;
    let mut h = sending(n, Cc::Reno, Reduction::Prr);
    let ss = ssthresh(n, Cc::Reno);
    let mut step = Step { ssthresh: ss, recover_fs: n as i64, prr_delivered: 0, prr_out: 0 };
    let top = start(n + 1);
    // Segments 11.. are SACKed one by one; on the third, segments 1–10 are IsLost.
    let mut pipe = n as i64;
    let mut seqs = Vec::new();
    for k in 11..=n {
        h.send(ms(100 + k), ack(1, Some((start(11), start(k + 1)))));
        pipe -= 1 + if k == 13 { 10 } else { 0 };
        if k < 13 {
            h.recv_nothing();
            continue;
        }
        let sndcnt = step.sndcnt(1, pipe, false);
        let sent = h.take_sent();
        assert_eq!(sent.len() as i64, sndcnt, "duplicate ACK {k}: {sent:?}");
        assert_eq!(h.info().cwnd, (pipe + sndcnt) as u64 * MSS, "duplicate ACK {k}");
        seqs.extend(sent.iter().map(|(_, s)| s.seq));
        step.prr_out += sndcnt;
        pipe += sndcnt;
    }
    // pipe < ssthresh throughout: one per duplicate ACK (the first the fast retransmission).
    assert_eq!(seqs, (1..=8).map(start).collect::<Vec<_>>(), "NextSeg (1): the lost segments in order");
    assert_eq!(pipe, 8);
    // Partial ACKs: the retransmissions of segments 1.. arrive one by one.
    let mut safe_sent = Vec::new();
    for j in 1..=9 {
        h.send(ms(200 + j), ack(start(j + 1), Some((start(11), top))));
        pipe -= 1;
        let sndcnt = step.sndcnt(1, pipe, true);
        let sent = h.take_sent();
        assert_eq!(sent.len() as i64, sndcnt, "partial ACK {j}: {sent:?}");
        assert_eq!(h.info().cwnd, (pipe + sndcnt) as u64 * MSS, "partial ACK {j}");
        assert_eq!(h.info().ca_state, CaState::Recovery);
        seqs.extend(sent.iter().map(|(_, s)| s.seq));
        step.prr_out += sndcnt;
        pipe += sndcnt;
        safe_sent.push(sndcnt);
    }
    // The first SafeACK sends max(prr_delivered − prr_out, 1) + 1 = 2 (segments 9 and 10), the
    // second 2 as well (the first new data), then pipe stays at ssthresh: one per ACK.
    assert_eq!(safe_sent, [2, 2, 1, 1, 1, 1, 1, 1, 1]);
    assert_eq!(&seqs[8..10], &[start(9), start(10)], "the last two lost segments");
    assert_eq!(seqs[10], top, "then new data (NextSeg (2))");
    assert_eq!(pipe, ss);
    // Everything up to RecoveryPoint acknowledged: cwnd = ssthresh (`tcp_end_cwnd_reduction`).
    h.send(ms(300), ack(top, None));
    assert_ne!(h.info().ca_state, CaState::Recovery);
    assert_eq!(h.info().cwnd, ss as u64 * MSS);
}

/// A timeout during a PRR recovery ends the episode: the loss window of one segment (RFC 5681
/// §3.1), and no PRR step afterwards (the next ACKs grow cwnd by slow start).
#[test]
fn a_timeout_ends_the_prr_episode() {
    let mut h = sending(10, Cc::Reno, Reduction::Prr);
    for k in 2..=4 {
        h.send(ms(100 + k), ack(1, Some((start(2), start(k + 1)))));
    }
    assert_eq!(h.take_sent().len(), 1, "the fast retransmission");
    h.advance_to(ms(5000));
    let sent = h.take_sent();
    assert!(!sent.is_empty() && sent[0].1.seq == 1, "RTO retransmission: {sent:?}");
    assert_eq!(h.info().cwnd, MSS);
    assert_ne!(h.info().ca_state, CaState::Recovery);
}
