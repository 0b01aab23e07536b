//! Packet-level tests of the `sack-rh` preset: ns-2.35's `Agent/TCP/SackRH` (tcp/tcp-sack-rh.cc,
//! tcp/scoreboard-rh.cc). Each test drives one sender by hand and states, ACK by ACK, what ns-2's
//! `recv()` does: the Rate-Halving state, cwnd, and what `send_much()` lets out under its rule
//! ⌊cwnd⌋ ≥ t_seqno − fack + retran_data. Segment k covers bytes ((k−1)·MSS, k·MSS] + 1.

use tcplab_core::net::{SackBlock, Segment, FLAG_ACK};
use tcplab_core::tcp::config::{preset, InitialWindow, Limit, Unlimited};
use tcplab_core::tcp::{OutSeg, TcpConfig, TcpSender, Variant};
use tcplab_core::units::{ms, Size, Time};

const MSS: u64 = 1000;

/// The `sack-rh` preset over the `ns2` profile's window rules, driven by hand: no handshake, a
/// window of `n` segments (ssthresh `n`: congestion avoidance) outstanding.
fn cfg(sack: bool) -> TcpConfig {
    let mut c = TcpConfig::profile("ns2").unwrap();
    (preset("sack-rh").unwrap().apply)(&mut c);
    c.sack = sack;
    c.mss = Size(MSS);
    c.rwnd = Limit::Named(Unlimited::Unlimited);
    c
}

struct Snd {
    s: TcpSender,
    out: Vec<OutSeg>,
    t: Time,
}

impl Snd {
    fn new(c: TcpConfig, n: u64) -> Snd {
        let mut c = c;
        c.initial_window = InitialWindow::Segments(n as u32);
        c.initial_ssthresh = Limit::Bytes(Size(n * MSS));
        assert_eq!(c.variant, Variant::SackRh);
        c.validate().unwrap();
        let mut h = Snd { s: TcpSender::new(c, None), out: Vec::new(), t: 0 };
        h.s.start(0, &mut h.out);
        h.s.take_timer_events().for_each(drop);
        assert_eq!(h.sent(), (1..=n).collect::<Vec<_>>());
        h
    }
    fn sent(&mut self) -> Vec<u64> {
        self.out.drain(..).filter(|o| o.seg.len > 0).map(|o| (o.seg.seq - 1) / MSS + 1).collect()
    }
    /// The receiver acknowledges segments 1..=k and SACKs the segment ranges `sacks`; returns
    /// the segments sent in reply.
    fn ack(&mut self, k: u64, sacks: &[(u64, u64)]) -> Vec<u64> {
        self.t += ms(1);
        let mut seg = Segment { seq: 1, ack: 1 + k * MSS, flags: FLAG_ACK, wnd: u32::MAX, ..Default::default() };
        let blocks: Vec<SackBlock> = sacks.iter().map(|&(lo, hi)| SackBlock { left: 1 + (lo - 1) * MSS, right: 1 + hi * MSS }).collect();
        seg.set_sack_blocks(&blocks);
        self.s.on_segment(self.t, &seg, &mut self.out);
        self.s.take_timer_events().for_each(drop);
        self.sent()
    }
    fn rto(&mut self) -> Vec<u64> {
        let d = self.s.core.rto_timer.deadline().expect("the RTO timer is running");
        self.s.core.rto_timer.cancel();
        self.t = d;
        self.s.on_rto(d, &mut self.out);
        self.s.take_timer_events().for_each(drop);
        self.sent()
    }
    fn cwnd(&self) -> f64 {
        self.s.core.cwnd as f64 / MSS as f64
    }
    fn ssthresh(&self) -> f64 {
        self.s.core.ssthresh as f64 / MSS as f64
    }
}

/// Segments 1..=10 out, the ACK of 1 in congestion avoidance (cwnd 10.1, segment 11 sent):
/// 2..=11 outstanding, the state every test starts from.
fn ten_out(sack: bool) -> Snd {
    let mut h = Snd::new(cfg(sack), 10);
    assert_eq!(h.ack(1, &[]), [11]);
    assert_eq!(h.cwnd(), 10.1);
    h
}

/// Feed ACKs of segment 1 with one SACK block (3..=k) for each k; returns (sent, cwnd) per ACK.
fn sacks(h: &mut Snd, ks: std::ops::RangeInclusive<u64>) -> Vec<(Vec<u64>, f64)> {
    ks.map(|k| {
        let s = h.ack(1, &[(3, k)]);
        (s, h.cwnd())
    })
    .collect()
}

fn step(sent: &[u64], cwnd: f64) -> (Vec<u64>, f64) {
    (sent.to_vec(), cwnd)
}

/// One loss (segment 2) in a window of 10.1 segments, 2..=11 outstanding.
///
/// tcp-sack-rh.cc `recv()`: the first SACK makes segment 2 a hole with one SACK above it
/// (`GetNewHoles()` = 1, scoreboard-rh.cc), so RH_EXACT begins (7.4) with prior_cwnd 10.1 and
/// prior_max_seq = t_seqno_ = 12; cwnd −= (Δfack + new holes)/2 = (2 + 1)/2 (7.6). Every further
/// SACK takes half a segment off, and `send_much()` sends while ⌊cwnd⌋ ≥ t_seqno − fack +
/// retran_data: one segment per two ACKs. The hole is retransmitted once `sack_cnt` ≥
/// numdupacks_ (3) *and* the rule allows it — on the fourth SACK. RH_EXACT ends when fack passes
/// prior_max_seq (segment 12 SACKed, 7.10): `boundparms()` keeps cwnd ≤ prior/2 and sets
/// ssthresh = ⌊cwnd⌋ = 4 (7.14); RH_INCR then opens cwnd by 1/cwnd per ACK (7.2). No timeout.
#[test]
fn one_loss_halves_the_rate_and_retransmits_on_the_fourth_sack() {
    let mut h = ten_out(true);
    assert!(!h.s.rec.recovering(&h.s.core), "RH_INCR, nothing to repair");
    let steps = sacks(&mut h, 3..=11);
    assert_eq!(
        steps,
        [
            step(&[], 8.6),
            step(&[12], 8.1),
            step(&[], 7.6),
            step(&[2], 7.1),
            step(&[], 6.6),
            step(&[13], 6.1),
            step(&[], 5.6),
            step(&[14], 5.1),
            step(&[], 4.6),
        ]
    );
    assert_eq!(h.ssthresh(), 10.0, "ssthresh is set when the adjustment ends, not at its start");
    // Segment 12 SACKed: fack > prior_max_seq, RH_EXACT ends; cwnd 4.6 ≤ 10.1/2 is kept,
    // ssthresh ⌊4.6⌋ = 4, and RH_INCR's congestion avoidance adds 1/4.6.
    assert!(h.s.rec.recovering(&h.s.core), "RH_EXACT: the time series shows a recovery");
    assert_eq!(h.ack(1, &[(3, 12)]), [15]);
    assert_eq!((h.cwnd(), h.ssthresh()), (4.817, 4.0));
    assert!(h.s.rec.recovering(&h.s.core), "back in RH_INCR with the retransmission outstanding");
    // The retransmission arrives: 2..=12 acknowledged, retran_data back to 0, two segments out.
    assert_eq!(h.ack(12, &[]), [16, 17]);
    assert_eq!(h.cwnd(), 5.024);
    assert!(!h.s.rec.recovering(&h.s.core), "repaired: no longer in recovery");
    let st = &h.s.core.stats;
    assert_eq!((st.retransmits, st.fast_retransmits, st.timeouts), (1, 1, 0));
}

/// Two losses (segments 2 and 5) in one window: one adjustment covers both. The second hole is
/// a new hole (one SACK above it) on the ACK that first SACKs segment 6, and the window comes
/// off by (Δfack + new holes)/2 = (2 + 1)/2 there (7.6); each hole is retransmitted in order once
/// three SACKs lie above it and the rule allows (`GetNextRetran()`), and the adjustment still
/// ends when fack passes prior_max_seq: one halving, ssthresh 4, no timeout.
#[test]
fn two_losses_in_a_window_are_one_adjustment() {
    let mut h = ten_out(true);
    let mut got = Vec::new();
    for k in 3..=4 {
        got.push((h.ack(1, &[(3, k)]), h.cwnd()));
    }
    for k in 6..=11 {
        got.push((h.ack(1, &[(6, k), (3, 4)]), h.cwnd()));
    }
    assert_eq!(got, [step(&[], 8.6), step(&[12], 8.1), step(&[], 6.6), step(&[2], 6.1), step(&[], 5.6), step(&[5], 5.1), step(&[], 4.6), step(&[13], 4.1)]);
    // Segment 12 SACKed: the adjustment ends; ssthresh ⌊4.1⌋ = 4, then 1/cwnd per ACK.
    assert_eq!(h.ack(1, &[(6, 12), (3, 4)]), [14]);
    assert_eq!((h.cwnd(), h.ssthresh()), (4.343, 4.0));
    // The retransmissions arrive in order: 2..=4, then 5..=12.
    assert_eq!(h.ack(4, &[(6, 12)]), [15]);
    assert_eq!(h.ack(12, &[]), [16]);
    assert_eq!(h.cwnd(), 4.792);
    let st = &h.s.core.stats;
    assert_eq!((st.retransmits, st.fast_retransmits, st.timeouts), (2, 1, 0));
}

/// A lost retransmission. scoreboard-rh.cc `CheckSndNxt()`: a retransmission still missing once
/// a segment sent after it (its `snd_nxt_`) is SACKed was lost again; its `sack_cnt` goes back
/// to 1, which makes it a new hole — in RH_INCR a new congestion signal: a second RH_EXACT from
/// the window of then (4.817), taking (1 + 1)/2 off at once (7.4, 7.6). Three SACKs later it is
/// retransmitted again; the timer, restarted by every ACK (`newack()` → `newtimer()`), never
/// expires. The second adjustment ends with ssthresh ⌊2.4⌋ = 2.
#[test]
fn a_lost_retransmission_is_a_new_hole_and_is_resent_without_a_timeout() {
    let mut h = ten_out(true);
    sacks(&mut h, 3..=12); // segment 2 resent on the fourth SACK, segments 12..=15 sent
    assert_eq!((h.cwnd(), h.ssthresh()), (4.817, 4.0));
    let deadline = h.s.core.rto_timer.deadline().unwrap();
    // Segment 13 (sent after the retransmission) SACKed without segment 2: lost again.
    let steps = sacks(&mut h, 13..=16);
    assert_eq!(steps, [step(&[16], 3.817), step(&[17], 3.317), step(&[], 2.817), step(&[2], 2.824)]);
    assert_eq!(h.ssthresh(), 2.0, "boundparms(): ⌊min(2.817, 4.817/2)⌋");
    assert!(h.s.core.rto_timer.deadline().unwrap() > deadline, "every ACK restarts the timer");
    let st = &h.s.core.stats;
    assert_eq!((st.retransmits, st.timeouts), (2, 0));
}

/// A timeout in the middle of Rate-Halving (tcp-sack-rh.cc `timeout()`, 4.6 and 7.15): cwnd
/// goes back to prior_cwnd (10.1) before `slowdown(CLOSE_SSTHRESH_HALF|CLOSE_CWND_RESTART)`, so
/// ssthresh is ⌊10⌋/2 = 5 — not half the reduced window 7.1 — and cwnd 1. The scoreboard stays
/// (`TimeoutScoreBoard()`): every hole below t_seqno_ gets sack_cnt = numdupacks_, so all are
/// retransmitted, in order, skipping SACKed segments; t_seqno_ stays (it is not above fack + 1,
/// the scoreboard's right edge): no go-back-N over SACKed data, and new data resumes at 13.
#[test]
fn a_timeout_in_the_middle_of_rate_halving_halves_the_prior_window() {
    let mut h = ten_out(true);
    sacks(&mut h, 3..=6);
    assert_eq!(h.cwnd(), 7.1);
    assert_eq!(h.rto(), [2]);
    assert_eq!((h.cwnd(), h.ssthresh()), (1.0, 5.0));
    // Slow start; the holes 8..=12 (7 is SACKed now) go out as the window allows.
    assert_eq!(h.ack(1, &[(3, 7)]), [8]);
    assert_eq!(h.ack(1, &[(3, 8)]), [9, 10]);
    assert_eq!(h.ack(1, &[(3, 9)]), [11, 12]);
    assert_eq!(h.cwnd(), 4.0);
    // Everything to 12 acknowledged: new data from 13, the first segment never sent.
    assert_eq!(h.ack(12, &[]), [13, 14, 15, 16, 17]);
    assert_eq!(h.cwnd(), 5.0);
    assert_eq!(h.s.core.stats.timeouts, 1);
}

/// Reordering without loss (7.8): segment 2 arrives late, after two SACKs began RH_EXACT. With
/// no retransmission in the adjustment (`rh_retran_flag_` 0), the ACK without SACK blocks that
/// follows ends it and restores cwnd = prior_cwnd: the window is as before, 10.1, and the rule
/// sends 13 and 14 at once. Nothing is retransmitted; ssthresh is untouched.
#[test]
fn reordering_without_loss_restores_the_window() {
    let mut h = ten_out(true);
    assert_eq!(sacks(&mut h, 3..=4), [step(&[], 8.6), step(&[12], 8.1)]);
    assert_eq!(h.ack(4, &[]), [13, 14]);
    assert_eq!((h.cwnd(), h.ssthresh()), (10.1, 10.0));
    assert!(!h.s.rec.recovering(&h.s.core));
    let st = &h.s.core.stats;
    assert_eq!((st.retransmits, st.fast_retransmits), (0, 0));
}

/// Without SACK (a receiver that does not send it) SackRH estimates (7.5, 7.7): the first
/// duplicate ACK begins RH_EST, fack_ = last_ack_ + num_dupacks_ + 1, cwnd −½ per ACK; at
/// numdupacks_ duplicates the hole is `RHEH_NEW_HOLE` and snd_una is retransmitted when the rule
/// allows. The ACK past prior_max_seq ends it (7.11): `estadjust()` cwnd = (10.1 − 1)/2, then
/// `boundparms()`, ssthresh 4, and 1/cwnd more in RH_INCR. tcplab's other SACK variants fall back to NewReno here.
#[test]
fn without_sack_the_estimation_states_halve_the_window() {
    let mut h = ten_out(false);
    let mut got = Vec::new();
    for _ in 0..8 {
        got.push((h.ack(1, &[]), h.cwnd()));
    }
    assert_eq!(got, [step(&[], 9.6), step(&[12, 13], 9.1), step(&[], 8.6), step(&[2], 8.1), step(&[], 7.6), step(&[14], 7.1), step(&[], 6.6), step(&[15], 6.1)]);
    assert_eq!(h.ack(12, &[]), [16]);
    assert_eq!((h.cwnd(), h.ssthresh()), (4.769, 4.0));
    let st = &h.s.core.stats;
    assert_eq!((st.retransmits, st.fast_retransmits, st.timeouts), (1, 1, 0));
}

/// The preset: ns-2's SackRH over the chosen profile, three SACK blocks (ns-2's sink), and
/// valid without SACK (its estimation states), where the SACK-only variants are refused.
#[test]
fn preset_sets_the_variant_and_sack_rh_may_run_without_sack() {
    let c = cfg(true);
    assert_eq!((c.variant, c.sack, c.sack_blocks), (Variant::SackRh, true, 3));
    assert!(cfg(false).validate().is_ok());
    let mut f = cfg(false);
    f.variant = Variant::FackRh;
    assert_eq!(f.validate().unwrap_err().0, "variant");
    let j = serde_json::to_value(&c).unwrap();
    assert_eq!(j["variant"], "sack-rh");
}
