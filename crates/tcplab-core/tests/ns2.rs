//! Packet-level tests of the `ns2` profile's knobs: each states what ns-2.35's one-way TCP agents
//! do, cites the source file that shows it, and checks the same exchange under the RFC default.

use tcplab_core::net::{PacketTag, SackBlock, Segment, FLAG_ACK, FLAG_SYN};
use tcplab_core::tcp::config::{InitialWindow, Limit, Unlimited};
use tcplab_core::tcp::{OutSeg, TcpConfig, TcpSender, Variant};
use tcplab_core::units::{ms, Size, Time};

const MSS: u64 = 1000;

/// The RFC profile with a hand-driven sender's settings; `ns2` turns on the profile's ns-2 knobs.
fn cfg(variant: Variant, ns2: bool) -> TcpConfig {
    let mut c = TcpConfig::rfc();
    c.variant = variant;
    c.mss = Size(MSS);
    c.handshake = false;
    c.fin = false;
    c.initial_window = InitialWindow::Segments(1);
    c.rwnd = Limit::Named(Unlimited::Unlimited);
    if ns2 {
        let p = TcpConfig::profile("ns2").unwrap();
        c.ssthresh_whole_segments = p.ssthresh_whole_segments;
        c.timeout_halves_window = p.timeout_halves_window;
        c.syn_timeout_ssthresh = p.syn_timeout_ssthresh;
        c.grow_on_recovery_exit = p.grow_on_recovery_exit;
        c.exit_recovery_fix = p.exit_recovery_fix;
    }
    c
}

struct Snd {
    s: TcpSender,
    out: Vec<OutSeg>,
}

impl Snd {
    fn new(c: TcpConfig, bytes: Option<u64>) -> Snd {
        let mut h = Snd { s: TcpSender::new(c, bytes), out: Vec::new() };
        h.s.start(0, &mut h.out);
        h.s.take_timer_events().for_each(drop);
        h
    }
    fn sent_segs(&mut self) -> Vec<u64> {
        self.out.drain(..).filter(|o| o.seg.len > 0).map(|o| (o.seg.seq - 1) / MSS + 1).collect()
    }
    /// The receiver acknowledges segments 1..=k.
    fn ack_seg(&mut self, t: Time, k: u64) {
        let seg = Segment { seq: 1, ack: 1 + k * MSS, flags: FLAG_ACK, wnd: u32::MAX, ..Default::default() };
        self.s.on_segment(t, &seg, &mut self.out);
        self.s.take_timer_events().for_each(drop);
    }
    /// The receiver acknowledges segments 1..=k and SACKs the segment ranges `sacks`.
    fn ack_sack(&mut self, t: Time, k: u64, sacks: &[(u64, u64)]) {
        let mut seg = Segment { seq: 1, ack: 1 + k * MSS, flags: FLAG_ACK, wnd: u32::MAX, ..Default::default() };
        let blocks: Vec<SackBlock> = sacks.iter().map(|&(lo, hi)| SackBlock { left: 1 + (lo - 1) * MSS, right: 1 + hi * MSS }).collect();
        seg.set_sack_blocks(&blocks);
        self.s.on_segment(t, &seg, &mut self.out);
        self.s.take_timer_events().for_each(drop);
    }
    /// Fire the retransmission timer at its deadline; returns when.
    fn rto(&mut self) -> Time {
        let d = self.s.core.rto_timer.deadline().expect("the RTO timer is running");
        self.s.core.rto_timer.cancel();
        self.s.on_rto(d, &mut self.out);
        self.s.take_timer_events().for_each(drop);
        d
    }
    fn cwnd_segs(&self) -> f64 {
        self.s.core.cwnd as f64 / MSS as f64
    }
    fn ssthresh_segs(&self) -> f64 {
        self.s.core.ssthresh as f64 / MSS as f64
    }
}

/// A sender with a window of `n` segments outstanding (1..=n), in congestion avoidance.
fn in_flight(variant: Variant, ns2: bool, n: u64) -> Snd {
    let mut c = cfg(variant, ns2);
    c.initial_window = InitialWindow::Segments(n as u32);
    c.initial_ssthresh = Limit::Bytes(Size(n * MSS));
    let mut h = Snd::new(c, None);
    assert_eq!(h.sent_segs(), (1..=n).collect::<Vec<_>>());
    h
}

#[test]
fn profile_sets_the_ns2_knobs_and_rfc_does_not() {
    let (rfc, ns2) = (TcpConfig::rfc(), TcpConfig::profile("ns2").unwrap());
    for (name, r, n) in [
        ("ssthresh_whole_segments", rfc.ssthresh_whole_segments, ns2.ssthresh_whole_segments),
        ("timeout_halves_window", rfc.timeout_halves_window, ns2.timeout_halves_window),
        ("syn_timeout_ssthresh", rfc.syn_timeout_ssthresh, ns2.syn_timeout_ssthresh),
        ("grow_on_recovery_exit", rfc.grow_on_recovery_exit, ns2.grow_on_recovery_exit),
        ("exit_recovery_fix off", !rfc.exit_recovery_fix, !ns2.exit_recovery_fix),
    ] {
        assert!(!r && n, "{name}: off in rfc, on in ns2");
    }
}

/// ns-2 `slowdown(CLOSE_SSTHRESH_HALF)` (tcp/tcp.cc): ssthresh_ = (int)(window() / 2) with
/// window() = (int)min(cwnd_, wnd_): whole segments of the window. RFC 5681 eq. 4: FlightSize/2
/// in bytes.
#[test]
fn ssthresh_is_half_the_window_in_whole_segments() {
    for (ns2, want) in [(false, 7.5), (true, 7.0)] {
        let mut h = in_flight(Variant::Reno, ns2, 15);
        // The ACK of 1 grows cwnd to 15 + 1/15 and frees one slot: 16 goes out; 2 is lost.
        h.ack_seg(ms(100), 1);
        assert_eq!(h.sent_segs(), [16]);
        assert!(h.cwnd_segs() > 15.0 && h.cwnd_segs() < 15.1);
        for t in 0..3 {
            h.ack_seg(ms(101 + t), 1);
        }
        assert_eq!(h.sent_segs(), [2], "fast retransmit");
        // 15 segments in flight (2..=16), window ⌊15.07⌋ = 15: ns-2 7 segments, RFC 7.5.
        assert_eq!(h.ssthresh_segs(), want, "ns2 = {ns2}");
        assert_eq!(h.cwnd_segs(), want + 3.0, "cwnd = ssthresh + 3 duplicate ACKs");
    }
    // Tahoe takes the same ssthresh (ns-2 Tahoe's dupack action is slowdown() too).
    let mut h = in_flight(Variant::Tahoe, true, 15);
    h.ack_seg(ms(100), 1);
    for t in 0..3 {
        h.ack_seg(ms(101 + t), 1);
    }
    assert_eq!((h.ssthresh_segs(), h.cwnd_segs()), (7.0, 1.0));
    // And at least 2 segments: a window of 3 gives ⌊3/2⌋ = 1 → 2.
    let mut h = in_flight(Variant::Reno, true, 4);
    h.s.core.cwnd = 3 * MSS + 500;
    for t in 0..3 {
        h.ack_seg(ms(100 + t), 0);
    }
    assert_eq!(h.ssthresh_segs(), 2.0);
}

/// ns-2 `timeout()` (tcp/tcp.cc) calls slowdown(CLOSE_SSTHRESH_HALF|CLOSE_CWND_RESTART) on every
/// expiry: ssthresh = half the window at the time, and a repeated timeout halves a one-segment
/// window (floor 2). In fast recovery `RenoTcpAgent::timeout()` (tcp/tcp-reno.cc, NewReno
/// inherits it) zeroes `dupwnd_` first, so the window halved is cwnd_ without the inflation.
/// RFC 5681 here: min(ssthresh, FlightSize/2) inside a reduced window, held on a repeat.
#[test]
fn timeout_in_fast_recovery_halves_the_uninflated_window() {
    for variant in [Variant::Reno, Variant::Newreno] {
        for ns2 in [false, true] {
            let mut h = in_flight(variant, ns2, 20);
            for t in 0..3 {
                h.ack_seg(ms(100 + t), 0);
            }
            assert_eq!(h.sent_segs(), [1]);
            assert_eq!(h.ssthresh_segs(), 10.0);
            // Seven more duplicate ACKs inflate the window to 10 + 3 + 7 = 20 segments.
            for t in 0..7 {
                h.ack_seg(ms(110 + t), 0);
            }
            assert_eq!(h.cwnd_segs(), 20.0);
            assert!(h.sent_segs().is_empty());
            h.rto();
            assert_eq!(h.sent_segs(), [1], "go-back-N from the hole");
            assert_eq!(h.cwnd_segs(), 1.0);
            // ns-2: ⌊10 / 2⌋ = 5 (not ⌊20 / 2⌋ = 10, the inflated window); RFC 5681:
            // min(ssthresh 10, FlightSize 20 / 2).
            assert_eq!(h.ssthresh_segs(), if ns2 { 5.0 } else { 10.0 }, "first timeout, {variant:?} ns2 = {ns2}");
            h.rto();
            assert_eq!(h.ssthresh_segs(), if ns2 { 2.0 } else { 10.0 }, "repeated timeout, {variant:?} ns2 = {ns2}");
        }
    }
}

/// NewReno's partial ACK deflates ns-2's `dupwnd_` before `cwnd_` (`partialnewack()`,
/// tcp/tcp-newreno.cc): a partial ACK of more than the inflation leaves cwnd_ = window − 1
/// segment (dupwnd_ = 1), and a timeout then halves that cwnd_ (`RenoTcpAgent::timeout()`).
#[test]
fn timeout_after_a_deep_partial_ack_halves_ns2_cwnd() {
    let mut h = in_flight(Variant::Newreno, true, 20);
    for t in 0..3 {
        h.ack_seg(ms(100 + t), 0);
    }
    assert_eq!(h.sent_segs(), [1]);
    // window 13 (cwnd_ 10 + dupwnd_ 3). A partial ACK of 8 segments: dupwnd_ 3 ≤ 8, so
    // cwnd_ = 10 − (8 − 3) = 5, dupwnd_ = 1: window 6 = 13 − 8 + 1.
    h.ack_seg(ms(200), 8);
    assert_eq!(h.cwnd_segs(), 6.0);
    h.sent_segs();
    h.rto();
    // ⌊5 / 2⌋ = 2 (the inflated window 6 would give 3).
    assert_eq!(h.ssthresh_segs(), 2.0);
    // A partial ACK of less than the inflation takes it from dupwnd_ alone (cwnd_ stays 10).
    let mut h = in_flight(Variant::Newreno, true, 20);
    for t in 0..10 {
        h.ack_seg(ms(100 + t), 0);
    }
    assert_eq!(h.cwnd_segs(), 20.0);
    // dupwnd_ 10 > 2: dupwnd_ = 10 − 2 + 1 = 9, window 19.
    h.ack_seg(ms(200), 2);
    assert_eq!(h.cwnd_segs(), 19.0);
    h.sent_segs();
    h.rto();
    assert_eq!(h.ssthresh_segs(), 5.0);
}

/// A lost SYN (ns-2 one-way TCP with `syn_` true): timeout() halves the one-segment window,
/// ssthresh_ = 2 (tcp/tcp.cc slowdown(): "if (ssthresh_ < 2) ssthresh_ = 2"); the lost first
/// packet sets the IW to windowInit_, which `bugfix_ss_` (on by default) makes 1. So data starts
/// at one segment, slow start ends at 2 and congestion avoidance follows.
#[test]
fn lost_syn_sets_ssthresh_to_two_segments() {
    for ns2 in [false, true] {
        let mut c = cfg(Variant::Reno, ns2);
        c.handshake = true;
        c.initial_window = InitialWindow::Segments(2);
        let mut h = Snd::new(c, None);
        h.out.clear();
        let t = h.rto();
        assert_eq!(h.out.drain(..).map(|o| o.tag).collect::<Vec<_>>(), [PacketTag::Syn { tx: 2 }]);
        let synack = Segment { seq: 0, ack: 1, flags: FLAG_SYN | FLAG_ACK, wnd: u32::MAX, ..Default::default() };
        h.s.on_segment(t + ms(100), &synack, &mut h.out);
        assert_eq!(h.sent_segs(), [1], "IW 1 after a lost SYN (RFC 5681 §3.1; ns-2 bugfix_ss_)");
        h.ack_seg(t + ms(200), 1);
        assert_eq!(h.cwnd_segs(), 2.0);
        assert_eq!(h.sent_segs(), [2, 3]);
        h.ack_seg(t + ms(300), 2);
        if ns2 {
            assert_eq!(h.ssthresh_segs(), 2.0);
            // cwnd 2 ≥ ssthresh 2: congestion avoidance, +1/2 segment.
            assert_eq!(h.cwnd_segs(), 2.5);
            assert_eq!(h.sent_segs(), [4]);
        } else {
            assert!(h.s.core.ssthresh > 1000 * MSS, "RFC: ssthresh untouched by a SYN loss");
            assert_eq!(h.cwnd_segs(), 3.0);
            assert_eq!(h.sent_segs(), [4, 5]);
        }
    }
}

/// ns-2 Reno (tcp/tcp-reno.cc recv()): a new ACK sets dupwnd_ = 0 and calls recv_newack_helper(),
/// whose opencwnd() grows cwnd_ (= ssthresh_ after the halving) by 1/cwnd_: the ACK that ends
/// recovery opens the window. RFC 5681 §3.2 step 6 only deflates to ssthresh.
#[test]
fn reno_grows_cwnd_on_the_ack_that_ends_recovery() {
    for (ns2, want) in [(false, 5.0), (true, 5.2)] {
        let mut h = in_flight(Variant::Reno, ns2, 10);
        for t in 0..3 {
            h.ack_seg(ms(100 + t), 0);
        }
        assert_eq!(h.sent_segs(), [1]);
        h.ack_seg(ms(200), 10);
        assert!(!h.s.core.in_recovery);
        assert!((h.cwnd_segs() - want).abs() < 1e-9, "ns2 = {ns2}: cwnd {}", h.cwnd_segs());
        // Five new segments either way (5.2 allows no sixth).
        assert_eq!(h.sent_segs(), [11, 12, 13, 14, 15]);
    }
}

/// ns-2 NewReno (tcp/tcp-newreno.cc recv(), `exit_recovery_fix_` 0 by default): the full ACK drops
/// the inflation (dupwnd_ = 0), keeps cwnd_ (ssthresh, less if partial deflation took it below)
/// and opens it in recv_newack_helper(). RFC 6582 §3.2 step 3: min(ssthresh, FlightSize + SMSS).
#[test]
fn newreno_leaves_recovery_at_ssthresh_and_grows() {
    for ns2 in [false, true] {
        let mut h = in_flight(Variant::Newreno, ns2, 10);
        // Segments 1 and 4 lost.
        for t in 0..3 {
            h.ack_seg(ms(100 + t), 0);
        }
        assert_eq!(h.sent_segs(), [1]);
        h.ack_seg(ms(200), 3);
        assert_eq!(h.sent_segs(), [4], "partial ACK: the next hole");
        h.ack_seg(ms(300), 10);
        assert!(!h.s.core.in_recovery);
        if ns2 {
            assert!((h.cwnd_segs() - 5.2).abs() < 1e-9, "cwnd {}", h.cwnd_segs());
            assert_eq!(h.sent_segs(), [11, 12, 13, 14, 15]);
        } else {
            // Nothing in flight: max(FlightSize, SMSS) + SMSS = 2 segments.
            assert_eq!(h.cwnd_segs(), 2.0);
            assert_eq!(h.sent_segs(), [11, 12]);
        }
    }
}

/// ns-2 measures RTT in ticks of `tcpTick_` (10 ms; rtt_update() in tcp/tcp.cc), and so does the
/// estimator with a coarse `timer_tick`; the RTTM instrument (Mathis et al. §5.2's "TCP RTT")
/// records the exact round trip all the same: a 6 ms RTT is one tick to the estimator, 6 ms to
/// the instrument.
#[test]
fn rtt_instrument_records_exact_samples_under_a_coarse_tick() {
    let mut c = cfg(Variant::Reno, true);
    let p = TcpConfig::profile("ns2").unwrap();
    c.timer_tick = p.timer_tick;
    c.clock_granularity = p.clock_granularity;
    let mut h = Snd::new(c, None);
    assert_eq!(h.sent_segs(), [1]);
    h.ack_seg(ms(6), 1);
    let st = &h.s.core.stats;
    assert_eq!((st.rtt_samples, st.rtt_sum_ns, st.rtt_min_ns, st.rtt_max_ns), (1, ms(6) as u128, ms(6), ms(6)));
    assert_eq!(h.s.core.rtt.srtt(), Some(ms(10)), "the estimator's sample is one 10 ms tick");
}

/// ns-2's timer (tcp/tcp.cc): rtt_update() counts the sample in ticks of tcpTick_ and keeps SRTT
/// and RTTVAR in fixed point; set_rtx_timer() schedules the expiry at exactly now + RTO. The BSD
/// timer of `rto_model = "rfc6298"` with a tick fires on a tick boundary instead.
#[test]
fn ns2_timer_expires_exactly_one_rto_after_it_is_set() {
    use tcplab_core::tcp::config::RtoModel;
    use tcplab_core::units::Duration;
    for model in [RtoModel::Rfc6298, RtoModel::Ns2] {
        let mut c = cfg(Variant::Reno, true);
        c.timer_tick = Duration(ms(10));
        c.clock_granularity = Duration(ms(10));
        c.rto_min = Duration(0);
        c.rto_initial = TcpConfig::profile("ns2").unwrap().rto_initial;
        c.rto_model = model;
        let mut h = Snd::new(c, None);
        assert_eq!(h.s.core.rto_timer.deadline(), Some(3 * 1_000_000_000), "rtxcur_init_ 3 s");
        h.sent_segs();
        // Sent at 0, acknowledged at 56 ms: five tick boundaries, a 50 ms sample either way.
        h.ack_seg(ms(56), 1);
        assert_eq!(h.sent_segs(), [2, 3]);
        assert_eq!(h.s.core.rtt.srtt(), Some(ms(50)));
        // RFC 6298: 50 + 4·25 = 150 ms, counted down on tick boundaries from 60 ms: 200 ms.
        // ns-2: ((10 << 3) + 40) >> 3 = 15 ticks = 150 ms after 56 ms: 206 ms.
        let want = if model == RtoModel::Ns2 { ms(206) } else { ms(200) };
        assert_eq!(h.s.core.rto_timer.deadline(), Some(want), "{model:?}");
    }
    assert_eq!(TcpConfig::profile("ns2").unwrap().rto_model, RtoModel::Ns2);
    assert_eq!(TcpConfig::rfc().rto_model, RtoModel::Rfc6298);
}

/// The two-segment loss of `newreno_leaves_recovery_at_ssthresh_and_grows`, up to the partial ACK.
fn newreno_partial(c: TcpConfig) -> Snd {
    let mut c = c;
    c.initial_window = InitialWindow::Segments(10);
    c.initial_ssthresh = Limit::Bytes(Size(10 * MSS));
    let mut h = Snd::new(c, None);
    h.sent_segs();
    for t in 0..3 {
        h.ack_seg(ms(100 + t), 0);
    }
    assert_eq!(h.sent_segs(), [1]);
    assert_eq!(h.cwnd_segs(), 8.0);
    h
}

/// ns-2 NewReno's `exit_recovery_fix_` 1 (tcp/tcp-newreno.cc): on the full ACK cwnd =
/// min(ssthresh, outstanding + 1) before recv_newack_helper() opens it — RFC 6582's first option
/// with ns-2's growth on top.
#[test]
fn newreno_exit_recovery_fix_bounds_the_window_by_what_is_in_flight() {
    let mut c = cfg(Variant::Newreno, true);
    c.exit_recovery_fix = true;
    let mut h = newreno_partial(c);
    h.ack_seg(ms(200), 3);
    assert_eq!(h.sent_segs(), [4]);
    h.ack_seg(ms(300), 10);
    // Nothing in flight: min(ssthresh 5, max(FlightSize, SMSS) + SMSS) = 2 segments, then the
    // growth of recv_newack_helper(), slow start as 2 < ssthresh: 3.
    assert_eq!(h.cwnd_segs(), 3.0);
    assert_eq!(h.sent_segs(), [11, 12, 13]);
}

/// ns-2 NewReno's `partial_window_deflation_` 0 (the default before 2001, tcp/tcp-newreno.cc): a
/// partial ACK drops the whole inflation (dupwnd_ = 0), cwnd = ssthresh. With it (RFC 6582 §3.2
/// step 3) cwnd = cwnd − acked + SMSS.
#[test]
fn newreno_partial_window_deflation_off_deflates_to_ssthresh() {
    for deflation in [true, false] {
        let mut c = cfg(Variant::Newreno, true);
        c.partial_window_deflation = deflation;
        let mut h = newreno_partial(c);
        // Four more duplicate ACKs: cwnd 12, new segments 11 and 12.
        for t in 0..4 {
            h.ack_seg(ms(110 + t), 0);
        }
        assert_eq!(h.sent_segs(), [11, 12]);
        h.ack_seg(ms(200), 3);
        assert_eq!(h.sent_segs()[0], 4, "the next hole at once");
        let want = if deflation { 12.0 - 3.0 + 1.0 } else { 5.0 };
        assert_eq!(h.cwnd_segs(), want, "partial_window_deflation = {deflation}");
    }
}

/// ns-2 NewReno's `newreno_changes1_` (tcp/tcp-newreno.cc partialnewack_helper()): with it (the
/// default) only the first partial ACK calls newtimer(), the "Impatient" variant of RFC 6582 §4;
/// without it every partial ACK restarts the timer ("Slow-but-Steady").
#[test]
fn newreno_slow_but_steady_restarts_the_timer_on_every_partial_ack() {
    for steady in [false, true] {
        let mut c = cfg(Variant::Newreno, true);
        c.slow_but_steady = steady;
        let mut h = newreno_partial(c);
        h.ack_seg(ms(200), 3);
        let first = h.s.core.rto_timer.deadline().unwrap();
        h.ack_seg(ms(300), 5);
        let second = h.s.core.rto_timer.deadline().unwrap();
        assert_eq!(second > first, steady, "slow_but_steady = {steady}: {first} then {second}");
        assert!(h.s.core.in_recovery);
    }
}

/// A `fack` preset sender (ns-2 `Agent/TCP/Fack`) with `n` segments outstanding, in congestion
/// avoidance, with the ns2 profile's whole-segment ssthresh.
fn fack_in_flight(n: u64) -> Snd {
    let mut c = cfg(Variant::Reno, true);
    (tcplab_core::tcp::config::preset("fack").unwrap().apply)(&mut c);
    c.initial_window = InitialWindow::Segments(n as u32);
    c.initial_ssthresh = Limit::Bytes(Size(n * MSS));
    let mut h = Snd::new(c, None);
    assert_eq!(h.sent_segs(), (1..=n).collect::<Vec<_>>());
    h
}

/// ns-2 `Agent/TCP/Fack` (tcp/tcp-fack.cc, `rampdown_` false): recv() sets dupacks_ = fack_ −
/// last_ack_ − 1, so one ACK whose SACK reaches three segments past the hole triggers the fast
/// retransmit; slowdown(CLOSE_SSTHRESH_HALF|CLOSE_CWND_RESTART) halves ssthresh and restarts cwnd
/// at one segment; every later ACK of the recovery opens cwnd (slow start), and send_much() sends
/// while t_seqno_ ≤ fack_ + win − retran_data_; the recovery ends on an ACK past `recover` that
/// carries no SACK block, with cwnd as grown.
#[test]
fn ns2_fack_triggers_on_the_forward_ack_and_restarts_cwnd() {
    let mut h = fack_in_flight(10);
    // Segment 1 lost; the first ACK to arrive already SACKs 2..4 (earlier ACKs lost).
    h.ack_sack(ms(100), 0, &[(2, 4)]);
    assert_eq!(h.sent_segs(), [1], "fack − snd_una = 4 segments: 3 between, fast retransmit");
    assert!(h.s.core.in_recovery);
    assert_eq!((h.ssthresh_segs(), h.cwnd_segs()), (5.0, 1.0));
    // Each ACK: cwnd + 1 (slow start); awnd = (11 − fack) + 1 retransmitted.
    for (t, hi, want) in [(101, 5, vec![]), (102, 6, vec![]), (103, 7, vec![]), (104, 8, vec![11, 12])] {
        h.ack_sack(ms(t), 0, &[(2, hi)]);
        assert_eq!(h.sent_segs(), want, "SACK 2..{hi}, cwnd {}", h.cwnd_segs());
    }
    assert_eq!(h.cwnd_segs(), 5.0);
    // The retransmission arrives: ACK 12 covers recover (11) and carries no SACK: recovery over,
    // cwnd kept (5 + 1/5 after congestion avoidance's growth on this ACK).
    h.ack_sack(ms(200), 12, &[]);
    assert!(!h.s.core.in_recovery);
    assert!((h.cwnd_segs() - 5.2).abs() < 1e-9, "cwnd {}", h.cwnd_segs());
    let st = &h.s.core.stats;
    assert_eq!((st.fast_retransmits, st.retransmits, st.timeouts), (1, 1, 0));
}

/// ns-2 Fack's CheckSndNxt() (tcp/scoreboard.cc): a retransmission still missing when data sent
/// after it has been SACKed was lost again; `timeout_` then shuts off sending until the timer.
#[test]
fn ns2_fack_stops_sending_when_a_retransmission_is_lost_again() {
    let mut h = fack_in_flight(10);
    h.ack_sack(ms(100), 0, &[(2, 4)]);
    assert_eq!(h.sent_segs(), [1]);
    for t in 101..=104 {
        h.ack_sack(ms(t), 0, &[(2, t - 96)]);
    }
    assert_eq!(h.sent_segs(), [11, 12]);
    // 11 (sent after the retransmission of 1) is SACKed, 1 still missing: lost again.
    h.ack_sack(ms(150), 0, &[(11, 11), (2, 10)]);
    assert_eq!(h.sent_segs(), Vec::<u64>::new(), "nothing until the timeout");
    h.ack_sack(ms(151), 0, &[(11, 12), (2, 10)]);
    assert_eq!(h.sent_segs(), Vec::<u64>::new());
    h.rto();
    assert_eq!(h.sent_segs(), [1], "the timer resends the hole");
}

/// ns-2's DelAck sink (tcp/tcp-sink.cc): with `RFC2581_immediate_ack_` true (the default, RFC
/// 5681 §4.2) a segment below the highest seen (filling a gap) is acknowledged at once; with it
/// false, a gap-filling segment after which the in-order data still ends (segment 2 with 4 held)
/// is delayed as an in-order one, while one that joins held data (3, joining 4) is not.
#[test]
fn delayed_ack_of_a_gap_filling_segment_as_ns2_rfc2581_immediate_ack_off() {
    use tcplab_core::tcp::TcpReceiver;
    for immediate in [true, false] {
        let mut c = cfg(Variant::Reno, true);
        c.delayed_ack = true;
        c.delack_fill_immediate = immediate;
        let mut r = TcpReceiver::new(c);
        let mut out = Vec::new();
        let mut data = |t: Time, k: u64, out: &mut Vec<OutSeg>| {
            let seg = Segment { seq: 1 + (k - 1) * MSS, ack: 0, len: MSS as u32, flags: FLAG_ACK, ..Default::default() };
            r.on_segment(t, &seg, out);
            let _ = r.take_timer_events().count();
            out.drain(..).map(|o| (o.seg.ack - 1) / MSS).collect::<Vec<_>>()
        };
        assert_eq!(data(0, 1, &mut out), Vec::<u64>::new(), "1: delayed");
        assert_eq!(data(ms(1), 4, &mut out), [1], "4: out of order, a duplicate ACK at once");
        let fill = data(ms(2), 2, &mut out);
        assert_eq!(fill, if immediate { vec![2] } else { vec![] }, "2 fills a gap, 3 still missing");
        assert_eq!(data(ms(3), 3, &mut out), [4], "3 joins the held 4: ACK at once");
    }
    assert!(TcpConfig::rfc().delack_fill_immediate && TcpConfig::profile("ns2").unwrap().delack_fill_immediate);
}

/// ns-2's Limited Transmit is `send_one()` (tcp/tcp.cc, `singledup_` 1 by default): on the first
/// and second duplicate ACK it sends t_seqno_ if t_seqno_ ≤ highest_ack_ + cwnd_ + dupacks_. After
/// a timeout t_seqno_ has gone back to the hole, so the duplicate ACKs of data sent before it
/// clock out go-back-N retransmissions; RFC 3042 sends only previously unsent data, so nothing.
#[test]
fn limited_transmit_as_ns2_send_one_during_go_back_n() {
    for send_one in [false, true] {
        let mut c = cfg(Variant::Reno, true);
        c.limited_transmit = true;
        c.limited_transmit_send_one = send_one;
        c.initial_window = InitialWindow::Segments(4);
        let mut h = Snd::new(c, None);
        assert_eq!(h.sent_segs(), [1, 2, 3, 4]);
        let t = h.rto();
        assert_eq!(h.sent_segs(), [1]);
        h.ack_seg(t + ms(10), 0);
        h.ack_seg(t + ms(11), 0);
        let want: Vec<u64> = if send_one { vec![2, 3] } else { vec![] };
        assert_eq!(h.sent_segs(), want, "send_one = {send_one}");
    }
    // Before any timeout both rules send the same new segments.
    for send_one in [false, true] {
        let mut c = cfg(Variant::Reno, true);
        c.limited_transmit = true;
        c.limited_transmit_send_one = send_one;
        c.initial_window = InitialWindow::Segments(4);
        let mut h = Snd::new(c, None);
        h.sent_segs();
        h.ack_seg(ms(100), 0);
        h.ack_seg(ms(101), 0);
        assert_eq!(h.sent_segs(), [5, 6], "send_one = {send_one}");
    }
}

/// ns-2's `maxburst_` (tcp/tcp.cc send_much(): `if (maxburst && npackets == maxburst) break;`):
/// at most that many segments leave in reply to one ACK (or at the start), whatever the window
/// allows; the rest wait for the next ACK. 0 (ns-2's default) is no limit.
#[test]
fn max_burst_bounds_the_segments_sent_per_ack() {
    let mut c = cfg(Variant::Reno, true);
    c.initial_window = InitialWindow::Segments(8);
    let mut h = Snd::new(c.clone(), None);
    assert_eq!(h.sent_segs(), (1..=8).collect::<Vec<_>>(), "no limit by default");
    c.max_burst = 3;
    let mut h = Snd::new(c, None);
    assert_eq!(h.sent_segs(), [1, 2, 3]);
    h.ack_seg(ms(100), 1);
    assert_eq!(h.sent_segs(), [4, 5, 6], "cwnd 9 would allow 2..=10");
    h.ack_seg(ms(101), 3);
    assert_eq!(h.sent_segs(), [7, 8, 9]);
    assert_eq!(TcpConfig::rfc().max_burst, 0);
}

/// ns-2 NewReno's `bugFix_` (tcp/tcp-newreno.cc dupack_action(): without it, `goto reno_action`
/// whatever `recover_`): after a timeout, three duplicate ACKs of data sent before it make a
/// second fast retransmit; with it (RFC 6582 §3.2 step 2) they do not.
#[test]
fn newreno_bugfix_off_fast_retransmits_again_after_a_timeout() {
    for guard in [true, false] {
        let mut c = cfg(Variant::Newreno, true);
        c.newreno_recover_guard = guard;
        c.initial_window = InitialWindow::Segments(10);
        let mut h = Snd::new(c, None);
        h.sent_segs();
        let t = h.rto();
        assert_eq!(h.sent_segs(), [1]);
        for i in 0..3 {
            h.ack_seg(t + ms(10 + i), 0);
        }
        assert_eq!(h.s.core.stats.fast_retransmits, if guard { 0 } else { 1 }, "newreno_recover_guard = {guard}");
    }
    assert!(TcpConfig::rfc().newreno_recover_guard && TcpConfig::profile("ns2").unwrap().newreno_recover_guard);
}

/// ns-2's `numdupacksFrac_` (tcp/tcp.cc `numdupacks()`, read by tcp/tcp-sack1.cc: `++dupacks_ ==
/// numdupacks(cwnd_)`): Sack1's duplicate-ACK threshold is max(numdupacks_, ⌊⌊cwnd_⌋/frac⌋). With
/// a window of 20 and frac 4 the fast retransmit waits for the fifth duplicate ACK; off (0, as
/// ns-2.35's −1) it is the third.
#[test]
fn sack1_dupthresh_frac_raises_the_threshold_with_the_window() {
    for (frac, at) in [(0, 3), (4, 5), (10, 3)] {
        let mut c = cfg(Variant::Sack1, true);
        c.sack = true;
        c.sack_blocks = 3;
        c.dupthresh_frac = frac;
        c.initial_window = InitialWindow::Segments(20);
        c.initial_ssthresh = Limit::Bytes(Size(20 * MSS));
        c.validate().unwrap();
        let mut h = Snd::new(c, None);
        assert_eq!(h.sent_segs(), (1..=20).collect::<Vec<_>>());
        // Segment 1 lost: each later segment's ACK SACKs it.
        let mut fr_at = None;
        for k in 2..=7 {
            h.ack_sack(ms(100 + k), 0, &[(2, k)]);
            if fr_at.is_none() && h.s.core.stats.fast_retransmits == 1 {
                fr_at = Some(k - 1);
                assert_eq!(h.sent_segs()[0], 1, "the fast retransmission");
            }
        }
        assert_eq!(fr_at, Some(at), "dupthresh_frac = {frac}");
    }
    assert_eq!(TcpConfig::rfc().dupthresh_frac, 0);
    assert_eq!(TcpConfig::profile("ns2").unwrap().dupthresh_frac, 0);
}

/// ns-2's `aggressive_maxburst_` (tcp/tcp.cc `recv()`: `if (valid_ack || aggressive_maxburst_)
/// send_much(...)`, valid_ack = the ACK is not below last_ack_). With `maxburst_` 3 holding
/// segments back, an old (reordered) ACK lets the next three out when it is on (ns-2's default
/// since 2003, and tcplab's), and nothing when it is off; the next valid ACK sends them. An old
/// ACK is not a duplicate ACK (RFC 5681 §2: its number is below the greatest received).
#[test]
fn aggressive_maxburst_off_sends_nothing_on_an_old_ack() {
    for aggressive in [true, false] {
        let mut c = cfg(Variant::Reno, true);
        c.initial_window = InitialWindow::Segments(8);
        c.max_burst = 3;
        c.aggressive_maxburst = aggressive;
        let mut h = Snd::new(c, None);
        assert_eq!(h.sent_segs(), [1, 2, 3]);
        h.ack_seg(ms(100), 2);
        assert_eq!(h.sent_segs(), [4, 5, 6], "cwnd 8 (not grown: the burst, not cwnd, limited) allows 3..=10");
        // An ACK of segment 1 only, overtaken by the one of segment 2.
        h.ack_seg(ms(101), 1);
        assert_eq!(h.s.core.dupacks, 0, "an old ACK is no duplicate");
        let old: Vec<u64> = h.sent_segs();
        h.ack_seg(ms(102), 3);
        let next = h.sent_segs();
        if aggressive {
            assert_eq!((old, next), (vec![7, 8, 9], vec![10, 11]));
        } else {
            assert_eq!((old, next), (vec![], vec![7, 8, 9]));
        }
    }
    assert!(TcpConfig::rfc().aggressive_maxburst && TcpConfig::profile("ns2").unwrap().aggressive_maxburst);
}

/// A NewReno sender after a timeout of a window of 10: everything to 10 was `recover`.
fn newreno_after_timeout(less_careful: bool, ack_heuristic: bool) -> (Snd, Time) {
    let mut c = cfg(Variant::Newreno, true);
    c.newreno_less_careful = less_careful;
    c.newreno_ack_heuristic = ack_heuristic;
    c.initial_window = InitialWindow::Segments(10);
    let mut h = Snd::new(c, None);
    h.sent_segs();
    let t = h.rto();
    assert_eq!(h.sent_segs(), [1]);
    (h, t)
}

/// ns-2 NewReno's `lessCareful_` (tcp/tcp-newreno.cc `dupack_action()`, RFC 2582 §6's Less
/// Careful variant): with `bugFix_`, three duplicate ACKs whose cumulative ACK equals `recover`
/// (all data outstanding at the timeout acknowledged, nothing after it) start a fast retransmit;
/// the careful check of RFC 6582 §3.2 step 2 needs more than `recover`.
#[test]
fn newreno_less_careful_fast_retransmits_at_recover() {
    for less_careful in [false, true] {
        let (mut h, t) = newreno_after_timeout(less_careful, false);
        h.ack_seg(t + ms(10), 10);
        assert_eq!(h.sent_segs(), [11, 12]);
        for i in 0..3 {
            h.ack_seg(t + ms(20 + i), 10);
        }
        assert_eq!(h.s.core.stats.fast_retransmits, less_careful as u64, "newreno_less_careful = {less_careful}");
    }
    assert!(!TcpConfig::rfc().newreno_less_careful && !TcpConfig::profile("ns2").unwrap().newreno_less_careful);
}

/// ns-2 NewReno's `bugFix_ack_` (tcp/tcp-newreno.cc `dupack_action()`; RFC 6582 §4.2's ACK
/// heuristic): below `recover`, three duplicate ACKs still start a fast retransmit when cwnd > 1
/// segment and the last new ACK advanced at most numdupacks_ segments (`highest_ack_ −
/// prev_highest_ack_`): a go-back-N retransmission's duplicates follow a large advance, a new
/// loss a small one.
#[test]
fn newreno_ack_heuristic_tells_a_new_loss_from_go_back_n_duplicates() {
    for (heuristic, advance_to, fr) in [(false, 2, 0), (true, 2, 1), (true, 6, 0)] {
        let (mut h, t) = newreno_after_timeout(false, heuristic);
        h.ack_seg(t + ms(10), 1);
        assert_eq!(h.sent_segs(), [2, 3]);
        h.ack_seg(t + ms(20), advance_to);
        h.sent_segs();
        for i in 0..3 {
            h.ack_seg(t + ms(30 + i), advance_to);
        }
        assert_eq!(h.s.core.stats.fast_retransmits, fr, "newreno_ack_heuristic = {heuristic}, ACK to {advance_to}");
    }
    assert!(!TcpConfig::rfc().newreno_ack_heuristic && !TcpConfig::profile("ns2").unwrap().newreno_ack_heuristic);
}

/// ns-2's `DelAckSink::recv()` (tcp/tcp-sink.cc): a packet whose seqno equals `acker_->Seqno()`
/// (the highest in-order packet: a copy of the last one received) with no delayed-ACK timer
/// pending is handled as an in-order arrival, its ACK delayed `interval_`; with the timer pending
/// it is acknowledged at once. RFC 5681 (`delack_dup_immediate`, the default): at once.
#[test]
fn delack_sink_delays_the_ack_of_a_copy_of_its_highest_in_order_packet() {
    use tcplab_core::tcp::TcpReceiver;
    for immediate in [true, false] {
        let mut c = cfg(Variant::Reno, true);
        c.delayed_ack = true;
        c.delack_dup_immediate = immediate;
        c.delack_timeout = tcplab_core::units::Duration(ms(100));
        let mut r = TcpReceiver::new(c);
        let mut out = Vec::new();
        let mut timers: Vec<Option<Time>> = Vec::new();
        // The ACKs sent; `timers` gets the delayed-ACK deadline after each segment.
        let mut data = |t: Time, k: u64, out: &mut Vec<OutSeg>, timers: &mut Vec<Option<Time>>| {
            let seg = Segment { seq: 1 + (k - 1) * MSS, ack: 0, len: MSS as u32, flags: FLAG_ACK, ..Default::default() };
            r.on_segment(t, &seg, out);
            let _ = r.take_timer_events().count();
            timers.push(r.delack_timer.deadline());
            out.drain(..).map(|o| (o.seg.ack - 1) / MSS).collect::<Vec<_>>()
        };
        assert_eq!(data(0, 1, &mut out, &mut timers), Vec::<u64>::new(), "1: delayed");
        assert_eq!(data(ms(1), 2, &mut out, &mut timers), [2], "2: the second, ACK at once");
        timers.clear();
        // A copy of 2 (the highest in order), no timer pending.
        let dup = data(ms(50), 2, &mut out, &mut timers);
        if immediate {
            assert_eq!(dup, [2], "RFC: a duplicate at once");
            assert_eq!(timers, [None]);
        } else {
            assert_eq!(dup, Vec::<u64>::new(), "ns-2: delayed as an in-order arrival");
            assert_eq!(timers, [Some(ms(150))], "interval_ 100 ms from the copy");
            // A second copy with the timer pending: ACK at once (and the timer cancelled).
            assert_eq!(data(ms(60), 2, &mut out, &mut timers), [2]);
            assert_eq!(timers[1], None);
        }
        // A copy of 1 (below the highest in order): at once in both.
        assert_eq!(data(ms(70), 1, &mut out, &mut timers), [2]);
    }
    assert!(TcpConfig::rfc().delack_dup_immediate && !TcpConfig::profile("ns2").unwrap().delack_dup_immediate);
    assert!(TcpConfig::profile("ns2-full").unwrap().delack_dup_immediate);
}

/// A SACK receiver (the `ns2` profile's Reno, no delayed ACKs, `set` applied) given data segments
/// 1, 3 and 5: each ACK's (number of SACK blocks, bytes on the wire).
fn sack_ack_sizes(set: impl FnOnce(&mut TcpConfig)) -> [(u8, u32); 3] {
    use tcplab_core::tcp::TcpReceiver;
    let mut c = cfg(Variant::Reno, true);
    c.sack = true;
    c.delayed_ack = false;
    set(&mut c);
    let mut r = TcpReceiver::new(c);
    let mut out: Vec<OutSeg> = Vec::new();
    [1, 3, 5].map(|k: u64| {
        let seg = Segment { seq: 1 + (k - 1) * MSS, ack: 0, len: MSS as u32, flags: FLAG_ACK, ..Default::default() };
        r.on_segment(ms(k), &seg, &mut out);
        let _ = r.take_timer_events().count();
        let got: Vec<_> = out.drain(..).map(|o| (o.seg.n_sack, o.seg.wire_bytes())).collect();
        assert_eq!(got.len(), 1, "one ACK for data segment {k}: {got:?}");
        got[0]
    })
}

/// ns-2's `Sacker::append_ack()` (tcp/tcp-sink.cc) adds 8 bytes per SACK block to the ACK's
/// size, no kind, length or padding: 48 bytes with one block, 56 with two. RFC 2018 §3 (the
/// `sack_option_header` default): kind, length and two NOPs, 4 + 8n bytes (52, 60).
#[test]
fn sack_option_size_on_the_wire_as_ns2_sacker() {
    for header in [true, false] {
        let sizes = sack_ack_sizes(|c| c.sack_option_header = header);
        assert_eq!(sizes, [(0, 40), (1, if header { 52 } else { 48 }), (2, if header { 60 } else { 56 })]);
    }
    assert!(TcpConfig::rfc().sack_option_header && !TcpConfig::profile("ns2").unwrap().sack_option_header);
}

/// The sender's segments after the SYN-ACK of a handshake: (payload length, ACK flag) each.
fn after_synack(c: TcpConfig) -> (Snd, Vec<(u32, bool)>) {
    let mut h = Snd::new(c, None);
    assert_eq!(h.out.drain(..).map(|o| o.tag).collect::<Vec<_>>(), [PacketTag::Syn { tx: 1 }]);
    let synack = Segment { seq: 0, ack: 1, flags: FLAG_SYN | FLAG_ACK, wnd: u32::MAX, ..Default::default() };
    h.s.on_segment(ms(100), &synack, &mut h.out);
    h.s.take_timer_events().for_each(drop);
    let segs = h.out.drain(..).map(|o| (o.seg.len, o.seg.flags & FLAG_ACK != 0)).collect();
    (h, segs)
}

/// ns-2 FullTcp (`FullTcpAgent::recv()` in TCPS_SYN_SENT, tcp/tcp-full.cc): a SYN-ACK without
/// data sets TF_ACKNOW, and the handshake's ACK leaves as a packet of its own before the first
/// data segment (the `ns2-full` profile's `handshake_ack_alone`). Off: the first data segment
/// carries the acknowledgment.
#[test]
fn fulltcp_sends_the_handshake_ack_alone_before_data() {
    for alone in [false, true] {
        let mut c = cfg(Variant::Reno, true);
        c.handshake = true;
        c.initial_window = InitialWindow::Segments(2);
        c.handshake_ack_alone = alone;
        let (_, segs) = after_synack(c);
        let data = (MSS as u32, true);
        if alone {
            assert_eq!(segs, [(0, true), data, data]);
        } else {
            assert_eq!(segs, [data, data]);
        }
    }
    assert!(TcpConfig::profile("ns2-full").unwrap().handshake_ack_alone);
    assert!(!TcpConfig::profile("ns2").unwrap().handshake_ack_alone && !TcpConfig::rfc().handshake_ack_alone);
}

/// ns-2's `Agent/TCP/Fack` and `Agent/TCP/SackRH` with `syn_` (tcp/tcp-fack.cc,
/// tcp/tcp-sack-rh.cc): their recv() takes the SYN's ACK as a new ACK, opencwnd() from the SYN's
/// cwnd_ 1, without TcpAgent::recv()'s reset to windowInit_: data starts at 2 segments whatever
/// the initial window (`syn_ack_opens_cwnd`). Reno, with the knob on, and Fack without it start
/// at the initial window.
#[test]
fn fack_and_sackrh_start_at_cwnd_two_after_the_syn() {
    for preset in ["fack", "sack-rh", "reno"] {
        for iw in [1u32, 4] {
            for opens in [false, true] {
                let mut c = cfg(Variant::Reno, true);
                (tcplab_core::tcp::config::preset(preset).unwrap().apply)(&mut c);
                c.mss = Size(MSS);
                c.handshake = true;
                c.initial_window = InitialWindow::Segments(iw);
                c.syn_ack_opens_cwnd = opens;
                let (h, segs) = after_synack(c);
                let want = if opens && preset != "reno" { 2 } else { iw };
                assert_eq!(segs.iter().filter(|s| s.0 > 0).count() as u32, want, "{preset} IW {iw} syn_ack_opens_cwnd {opens}");
                assert_eq!(h.cwnd_segs(), want as f64);
            }
        }
    }
    assert!(TcpConfig::profile("ns2").unwrap().syn_ack_opens_cwnd && !TcpConfig::rfc().syn_ack_opens_cwnd);
}

/// ns-2 `NewRenoTcpAgent::recv()` (tcp/tcp-newreno.cc, `newreno_changes_` 0): in fast recovery
/// it ends with `send_much(0, 0, 2)`, at most 2 packets an ACK besides a partial ACK's
/// retransmission. Here the receive window holds the inflated window back; a partial ACK then
/// opens it by 7 segments (`partial_window_deflation_` 0: cwnd_ = ssthresh_ 10, 3 in flight):
/// ns-2 sends 2 of them, RFC 6582 all 7.
#[test]
fn newreno_sends_at_most_two_per_ack_in_recovery() {
    // (burst, after_partial): FullTcp/Newreno's recov_maxburst_ holds from the partial ACK on.
    for (burst, after_partial) in [(0u32, false), (2, false), (2, true)] {
        let mut c = cfg(Variant::Newreno, true);
        c.initial_window = InitialWindow::Segments(20);
        c.initial_ssthresh = Limit::Bytes(Size(20 * MSS));
        c.rwnd = Limit::Bytes(Size(20 * MSS));
        c.partial_window_deflation = false;
        c.newreno_recovery_burst = burst;
        c.newreno_burst_after_partial = after_partial;
        let mut h = Snd::new(c, None);
        assert_eq!(h.sent_segs(), (1..=20).collect::<Vec<_>>());
        let ack = |h: &mut Snd, t: Time, k: u64| {
            let seg = Segment { seq: 1, ack: 1 + k * MSS, flags: FLAG_ACK, wnd: (20 * MSS) as u32, ..Default::default() };
            h.s.on_segment(t, &seg, &mut h.out);
            h.s.take_timer_events().for_each(drop);
        };
        // 1 and 18 lost: 18 duplicate ACKs of 0 (2..=17, 19, 20 arrived); the third retransmits 1.
        for i in 0..18 {
            ack(&mut h, ms(100 + i), 0);
        }
        assert_eq!(h.sent_segs(), [1], "the receive window (1..=20) holds the inflated cwnd back");
        assert_eq!(h.ssthresh_segs(), 10.0);
        // The partial ACK of 1..=17: 18 retransmitted, cwnd 10 with 18..=20 in flight.
        ack(&mut h, ms(300), 17);
        let want: Vec<u64> = if burst == 2 { vec![18, 21, 22] } else { vec![18, 21, 22, 23, 24, 25, 26, 27] };
        assert_eq!(h.sent_segs(), want, "newreno_recovery_burst = {burst}");
    }
    assert_eq!(TcpConfig::profile("ns2").unwrap().newreno_recovery_burst, 2);
    let full = TcpConfig::profile("ns2-full").unwrap();
    assert!(full.newreno_recovery_burst == 2 && full.newreno_burst_after_partial && !full.partial_window_deflation);
    assert_eq!(TcpConfig::rfc().newreno_recovery_burst, 0);
}

/// ns-2 `NewRenoTcpAgent::recv()` (tcp/tcp-newreno.cc): a recovery whose last partial ACK zeroed
/// `dupwnd_` (`partial_window_deflation_` 0) ends with `last_cwnd_action_` still
/// `CWND_ACTION_DUPACK`; duplicates past the third whose fast retransmit the recover guard
/// refuses then `++dupwnd_` and send on it, until a new ACK zeroes it. Here 1 and 2 are lost
/// from a window of 10, and 11: 1 fast-retransmitted, 2 on the partial ACK, the ACK of 1..=10 ends the
/// recovery with no inflation left; the duplicates of 10 from 12..=15 cannot fast-retransmit
/// (snd_una = recover) and the fourth sends 16 with the knob (as ns-2 in the newreno suite's
/// `newreno5`), nothing without it (RFC 6582).
#[test]
fn newreno_inflates_after_a_quiet_exit_as_ns2() {
    for inflate in [false, true] {
        let mut c = cfg(Variant::Newreno, true);
        c.initial_window = InitialWindow::Segments(10);
        c.initial_ssthresh = Limit::Bytes(Size(20 * MSS));
        c.limited_transmit = false;
        c.limited_transmit_send_one = false;
        c.newreno_recover_guard = true;
        c.partial_window_deflation = false;
        c.newreno_inflate_after_quiet_exit = inflate;
        let mut h = Snd::new(c, None);
        assert_eq!(h.sent_segs(), (1..=10).collect::<Vec<_>>());
        let ack = |h: &mut Snd, t: Time, k: u64| {
            let seg = Segment { seq: 1, ack: 1 + k * MSS, flags: FLAG_ACK, wnd: (40 * MSS) as u32, ..Default::default() };
            h.s.on_segment(t, &seg, &mut h.out);
            h.s.take_timer_events().for_each(drop);
        };
        // 3..=10 arrive: eight duplicates of 0; the third retransmits 1, the inflation (cwnd 5 + 3,
        // then one segment a duplicate) sends 11 and 12.
        for i in 0..8 {
            ack(&mut h, ms(100 + i), 0);
        }
        assert_eq!(h.sent_segs(), [1, 11, 12]);
        assert_eq!(h.ssthresh_segs(), 5.0);
        // The partial ACK of 1 retransmits 2 and zeroes the inflation (cwnd 5, 11 out).
        ack(&mut h, ms(200), 1);
        assert_eq!(h.sent_segs(), [2]);
        // The ACK of 1..=10 (recover) ends the recovery quietly: cwnd 5 + 1/5, 13..=15 go.
        ack(&mut h, ms(300), 10);
        assert_eq!(h.sent_segs(), [13, 14, 15]);
        assert!(!h.s.core.in_recovery);
        // 12..=15 arrive, 11 lost: four duplicates of 10; no fast retransmit at the third.
        for i in 0..3 {
            ack(&mut h, ms(400 + i), 10);
        }
        assert_eq!(h.sent_segs(), Vec::<u64>::new(), "the recover guard refuses the fast retransmit");
        ack(&mut h, ms(403), 10);
        let cwnd_before = 5.2;
        if inflate {
            assert_eq!(h.sent_segs(), [16], "dupwnd_ 1 on the fourth duplicate");
            assert!((h.cwnd_segs() - (cwnd_before + 1.0)).abs() < 1e-9);
        } else {
            assert_eq!(h.sent_segs(), Vec::<u64>::new());
            assert!((h.cwnd_segs() - cwnd_before).abs() < 1e-9);
        }
        // A new ACK takes the inflation back before the window grows (cwnd_ += 1/cwnd_).
        ack(&mut h, ms(500), 11);
        assert!((h.cwnd_segs() - (cwnd_before + 1.0 / cwnd_before)).abs() < 0.01, "{}", h.cwnd_segs());
    }
    // Off in every profile: the ns2 profile's recorded results stay as they were.
    for p in ["rfc", "ns2", "ns2-full"] {
        assert!(!TcpConfig::profile(p).unwrap().newreno_inflate_after_quiet_exit, "{p}");
    }
}

/// ns-2 `slowdown(CLOSE_SSTHRESH_HALF|CLOSE_CWND_HALF)` with `precisionReduce_` false (tcp/tcp.cc):
/// cwnd_ = ⌊window()/2⌋ and only ssthresh_ is floored at 2. From a window of 3 (with `singledup_`'s
/// two new segments bringing the third duplicate ACK) cwnd_ is 1, Reno's recovery window 1 + 3,
/// and the ACK ending recovery leaves cwnd_ 1, which slow start opens to 2
/// (`halve_cwnd_unfloored`). RFC 5681 §3.2: ssthresh 2 + 3, then 2 and congestion avoidance.
#[test]
fn fast_retransmit_from_a_window_of_three_leaves_cwnd_one() {
    for (variant, unfloored) in [(Variant::Reno, false), (Variant::Reno, true), (Variant::Newreno, false), (Variant::Newreno, true)] {
        let mut c = cfg(variant, true);
        c.initial_window = InitialWindow::Segments(3);
        c.initial_ssthresh = Limit::Bytes(Size(3 * MSS));
        c.limited_transmit = true;
        c.limited_transmit_send_one = true;
        c.halve_cwnd_unfloored = unfloored;
        let mut h = Snd::new(c, None);
        assert_eq!(h.sent_segs(), [1, 2, 3]);
        h.ack_seg(ms(100), 0);
        h.ack_seg(ms(101), 0);
        assert_eq!(h.sent_segs(), [4, 5], "send_one() on the first two duplicate ACKs");
        h.ack_seg(ms(102), 0);
        assert_eq!(h.sent_segs(), [1]);
        assert_eq!(h.ssthresh_segs(), 2.0);
        assert_eq!(h.cwnd_segs(), if unfloored { 4.0 } else { 5.0 }, "{variant:?} unfloored {unfloored}");
        // The fourth duplicate (5 arrived): 1 + 4 = 5 segments, 5 in flight, nothing new; or 6.
        h.ack_seg(ms(103), 0);
        assert_eq!(h.sent_segs(), if unfloored { vec![] } else { vec![6] });
        // The retransmission of 1 arrives: everything up to 5 (or 6, not yet arrived) acknowledged.
        h.ack_seg(ms(200), 5);
        // ns-2: cwnd_ 1, opencwnd() in slow start → 2; RFC: 2, congestion avoidance → 2.5.
        assert_eq!(h.cwnd_segs(), if unfloored { 2.0 } else { 2.5 }, "{variant:?} unfloored {unfloored}");
    }
    assert!(TcpConfig::profile("ns2").unwrap().halve_cwnd_unfloored && !TcpConfig::profile("ns2-full").unwrap().halve_cwnd_unfloored);
}

/// ns-2 FullTcp (`FullTcpAgent::dupack_action()`, tcp/tcp-full.cc): the `recover_` guard is
/// skipped while `last_cwnd_action_` is DUPACK, which only `timeout_action()` replaces: three
/// duplicate ACKs after a Reno recovery that a partial ACK ended fast-retransmit again
/// (`recover_guard_after_timeout_only`); with the guard as the one-way agents have it, they do
/// not.
#[test]
fn fulltcp_fast_retransmits_again_in_the_same_window() {
    for after_timeout_only in [false, true] {
        let mut c = cfg(Variant::Reno, true);
        c.recover_guard = true;
        c.recover_guard_after_timeout_only = after_timeout_only;
        let mut c10 = c;
        c10.initial_window = InitialWindow::Segments(10);
        c10.initial_ssthresh = Limit::Bytes(Size(10 * MSS));
        let mut h = Snd::new(c10, None);
        assert_eq!(h.sent_segs(), (1..=10).collect::<Vec<_>>());
        // 1 and 5 lost: 2, 3, 4 bring three duplicates, the fast retransmit of 1.
        for i in 0..3 {
            h.ack_seg(ms(100 + i), 0);
        }
        assert_eq!(h.sent_segs(), [1]);
        for i in 0..5 {
            h.ack_seg(ms(103 + i), 0); // 6..=10: recovery inflation
        }
        h.sent_segs();
        // The retransmission of 1: the partial ACK of 1..=4 ends Reno's recovery.
        h.ack_seg(ms(200), 4);
        h.sent_segs();
        // Three duplicates of 4 (from what recovery sent): a second fast retransmit of 5 or not.
        for i in 0..3 {
            h.ack_seg(ms(210 + i), 4);
        }
        let want: Vec<u64> = if after_timeout_only { vec![5] } else { vec![] };
        assert_eq!(h.sent_segs().into_iter().filter(|&k| k == 5).collect::<Vec<_>>(), want, "after_timeout_only {after_timeout_only}");
    }
    assert!(TcpConfig::profile("ns2-full").unwrap().recover_guard_after_timeout_only);
    assert!(!TcpConfig::profile("ns2").unwrap().recover_guard_after_timeout_only);
}

/// ns-2's FullTcp/Sack counts its SACK option as `sack_option_size_` 2 + `sack_block_size_` 8
/// a block (`SackFullTcpAgent::hdrsize()`, tcp/tcp-full.cc; tcl/lib/ns-default.tcl): kind and
/// length without the two NOPs (`sack_option_padding` off), 50 bytes with one block.
#[test]
fn sack_option_without_padding_as_ns2_fulltcp_sack() {
    for padding in [true, false] {
        let sizes = sack_ack_sizes(|c| (c.sack_option_header, c.sack_option_padding) = (true, padding));
        assert_eq!(sizes, [(0, 40), (1, if padding { 52 } else { 50 }), (2, if padding { 60 } else { 58 })]);
    }
    assert!(!TcpConfig::profile("ns2-full").unwrap().sack_option_padding && TcpConfig::rfc().sack_option_padding);
}

/// ns-2 `FackTcpAgent::recv()` outside fast recovery (tcp/tcp-fack.cc): only a new ACK without
/// SACK blocks is a regular one (`recv_newack_helper()` → `opencwnd()`, then `send_much()`); a
/// new ACK with SACK blocks goes through `oldack()`, which opens no window, and nothing is sent
/// while `dupacks_ = fack_ − last_ack_ − 1` is above 0. Every duplicate restarts the timer
/// (`oldack()` → `newtimer()`).
#[test]
fn ns2_fack_new_ack_with_sack_is_a_duplicate() {
    // Without SACK blocks: cwnd 10 → 10.1, and 11, 12 leave.
    let mut h = fack_in_flight(10);
    h.ack_sack(ms(100), 2, &[]);
    assert!((h.cwnd_segs() - 10.1).abs() < 1e-9);
    assert_eq!(h.sent_segs(), [11, 12]);
    // Segment 3 lost: the ACK of 1..=2 SACKs 4. cwnd stays 10 and nothing leaves, although 8
    // in flight would let 2 go.
    let mut h = fack_in_flight(10);
    h.ack_sack(ms(100), 2, &[(4, 4)]);
    assert_eq!(h.cwnd_segs(), 10.0);
    assert_eq!(h.sent_segs(), Vec::<u64>::new());
    // A duplicate 50 ms later moves the timer 50 ms on.
    let before = h.s.core.rto_timer.deadline().expect("timer running");
    h.ack_sack(ms(150), 2, &[(4, 5)]);
    assert_eq!(h.s.core.rto_timer.deadline(), Some(before + ms(50)));
    assert_eq!(h.sent_segs(), Vec::<u64>::new());
}

/// ns-2.35's default `precisionReduce_` true (`TcpAgent::slowdown()`, tcp/tcp.cc):
/// `slowdown(CLOSE_SSTHRESH_HALF|CLOSE_CWND_HALF)` sets `ssthresh_ = (int)(windowd()/2)` and
/// `cwnd_ = windowd()/2` unrounded (`precision_reduce`); with it false, `cwnd_ = ⌊window()/2⌋`.
/// Worked by hand in ns-2's doubles for Reno (tcp/tcp-reno.cc: `window()` = ⌊cwnd_ + dupwnd_⌋,
/// the exit zeroes `dupwnd_` and `recv_newack_helper()` opens `cwnd_`): a window of 7 in
/// congestion avoidance, the ACK of 1 → cwnd_ 7 + 1/7 = 7.142857 and 8 leaves; 2 lost. The
/// third duplicate: ssthresh_ ⌊3.571⌋ = 3, cwnd_ 3.571429 (off: 3), dupwnd_ 3: window 6, 7
/// outstanding; the fifth and sixth duplicates send 9 and 10 either way. The ACK of 8 ends the
/// recovery: cwnd_ 3.571429 + 1/3.571429 = 3.851429 (off: 3.333333), window 3, 11 leaves; the
/// ACK of 9: 4.111074 (off: 3.633333): ns-2 sends 12 and 13, without the rule 12 alone.
/// tcplab keeps cwnd in bytes: within a byte (1/1000 of a segment here) of ns-2's double.
#[test]
fn precision_reduce_halves_cwnd_unrounded_reno() {
    for precise in [false, true] {
        let mut h = {
            let mut c = cfg(Variant::Reno, true);
            c.halve_cwnd_unfloored = true;
            c.precision_reduce = precise;
            c.initial_window = InitialWindow::Segments(7);
            c.initial_ssthresh = Limit::Bytes(Size(7 * MSS));
            let mut h = Snd::new(c, None);
            assert_eq!(h.sent_segs(), (1..=7).collect::<Vec<_>>());
            h
        };
        let near = |h: &Snd, want: f64, what: &str| {
            assert!((h.cwnd_segs() - want).abs() < 0.002, "precise {precise}, {what}: cwnd {} segments, ns-2 {want}", h.cwnd_segs());
        };
        let mut ns2 = 7.0f64;
        h.ack_seg(ms(100), 1);
        ns2 += 1.0 / ns2;
        near(&h, ns2, "after the ACK of 1");
        assert_eq!(h.sent_segs(), [8]);
        for t in 0..3 {
            h.ack_seg(ms(101 + t), 1);
        }
        assert_eq!(h.sent_segs(), [2], "fast retransmit");
        assert_eq!(h.ssthresh_segs(), 3.0, "ssthresh_ = (int)(windowd()/2) either way");
        ns2 = if precise { ns2 / 2.0 } else { (ns2 as u64 / 2) as f64 };
        near(&h, ns2 + 3.0, "cwnd_ + dupwnd_ after the fast retransmit");
        h.ack_seg(ms(104), 1);
        assert_eq!(h.sent_segs(), Vec::<u64>::new());
        h.ack_seg(ms(105), 1);
        h.ack_seg(ms(106), 1);
        assert_eq!(h.sent_segs(), [9, 10]);
        h.ack_seg(ms(200), 8);
        ns2 += 1.0 / ns2;
        near(&h, ns2, "the ACK ending recovery");
        assert_eq!(h.sent_segs(), [11]);
        h.ack_seg(ms(210), 9);
        ns2 += 1.0 / ns2;
        near(&h, ns2, "the next ACK");
        assert_eq!(h.sent_segs(), if precise { vec![12, 13] } else { vec![12] }, "precise {precise}");
    }
    assert!(!TcpConfig::rfc().precision_reduce && !TcpConfig::profile("ns2").unwrap().precision_reduce);
}

/// The same loss under Sack1 (tcp/tcp-sack1.cc): `dupack_action()` sets `pipe_ = maxseq_ −
/// highest_ack_ − numdupacks_` = 8 − 1 − 3 = 4, then `slowdown()`; `send_much()` in fast recovery
/// sends while `pipe_ < int(cwnd_)`, so the fractional 3.571 lets out no more than 3 would: each
/// duplicate decrements `pipe_`, and the fourth leaves it at 3 (nothing), the fifth and sixth at 2
/// (9, then 10). The ACK ending recovery calls `newack()` alone: cwnd_ stays 3.571429 (off: 3,
/// ssthresh_), window 3, 11 leaves; the next ACK opens it to 3.851429 (off 3.333333), 12; the
/// one after to 4.111074 (off 3.633333): ns-2 sends 13 and 14, without the rule 13.
#[test]
fn precision_reduce_halves_cwnd_unrounded_sack1() {
    for precise in [false, true] {
        let mut h = {
            let mut c = cfg(Variant::Reno, true);
            (tcplab_core::tcp::config::preset("sack1").unwrap().apply)(&mut c);
            c.mss = Size(MSS);
            c.halve_cwnd_unfloored = true;
            c.precision_reduce = precise;
            c.initial_window = InitialWindow::Segments(7);
            c.initial_ssthresh = Limit::Bytes(Size(7 * MSS));
            let mut h = Snd::new(c, None);
            assert_eq!(h.sent_segs(), (1..=7).collect::<Vec<_>>());
            h
        };
        let near = |h: &Snd, want: f64, what: &str| {
            assert!((h.cwnd_segs() - want).abs() < 0.002, "precise {precise}, {what}: cwnd {} segments, ns-2 {want}", h.cwnd_segs());
        };
        let mut ns2 = 7.0f64;
        h.ack_sack(ms(100), 1, &[]);
        ns2 += 1.0 / ns2;
        assert_eq!(h.sent_segs(), [8]);
        for (t, hi) in [(101, 3), (102, 4), (103, 5)] {
            h.ack_sack(ms(t), 1, &[(3, hi)]);
        }
        assert_eq!(h.sent_segs(), [2], "fast retransmit");
        assert_eq!(h.ssthresh_segs(), 3.0);
        ns2 = if precise { ns2 / 2.0 } else { (ns2 as u64 / 2) as f64 };
        near(&h, ns2, "cwnd_ after the fast retransmit");
        h.ack_sack(ms(104), 1, &[(3, 6)]);
        assert_eq!(h.sent_segs(), Vec::<u64>::new(), "pipe_ 3 < int(cwnd_) 3 is false");
        h.ack_sack(ms(105), 1, &[(3, 7)]);
        assert_eq!(h.sent_segs(), [9]);
        h.ack_sack(ms(106), 1, &[(3, 8)]);
        assert_eq!(h.sent_segs(), [10]);
        h.ack_sack(ms(200), 8, &[]);
        near(&h, ns2, "newack() at the end of recovery leaves cwnd_");
        assert_eq!(h.sent_segs(), [11]);
        h.ack_sack(ms(210), 9, &[]);
        ns2 += 1.0 / ns2;
        near(&h, ns2, "the first ACK after recovery");
        assert_eq!(h.sent_segs(), [12]);
        h.ack_sack(ms(220), 10, &[]);
        ns2 += 1.0 / ns2;
        near(&h, ns2, "the second ACK after recovery");
        assert_eq!(h.sent_segs(), if precise { vec![13, 14] } else { vec![13] }, "precise {precise}");
    }
}

/// ns-2's `recv_newack_helper()` calls `opencwnd()` on every new ACK (tcp/tcp.cc), whether or
/// not the window limited the sender: with `window_` 4 and `windowInit_` 4 in slow start, cwnd_
/// is 5, 6, 7 after three ACKs although never more than 4 packets are out
/// (`grow_when_not_cwnd_limited`). RFC 7661 §4.3: the window that was not used does not grow
/// (5, 5, 5: only the first ACK came with the window full). The segments sent are the same.
#[test]
fn ns2_grows_cwnd_while_the_receive_window_limits() {
    for grow in [false, true] {
        let mut c = cfg(Variant::Reno, true);
        c.initial_window = InitialWindow::Segments(4);
        c.rwnd = Limit::Bytes(Size(4 * MSS));
        c.grow_when_not_cwnd_limited = grow;
        let mut h = Snd::new(c, None);
        assert_eq!(h.sent_segs(), [1, 2, 3, 4]);
        let mut cwnds = Vec::new();
        for k in 1..=3 {
            let seg = Segment { seq: 1, ack: 1 + k * MSS, flags: FLAG_ACK, wnd: (4 * MSS) as u32, ..Default::default() };
            h.s.on_segment(ms(100 + k), &seg, &mut h.out);
            h.s.take_timer_events().for_each(drop);
            assert_eq!(h.sent_segs(), [k + 4], "the receive window lets one segment out an ACK");
            cwnds.push(h.cwnd_segs());
        }
        assert_eq!(cwnds, if grow { [5.0, 6.0, 7.0] } else { [5.0, 5.0, 5.0] }, "grow {grow}");
    }
    assert!(!TcpConfig::rfc().grow_when_not_cwnd_limited && !TcpConfig::profile("ns2").unwrap().grow_when_not_cwnd_limited);
}

/// ns-2 Sack1 with `singledup_` and `numdupacksFrac_` (tcp/tcp-sack1.cc `recv()`): every
/// duplicate ACK below `numdupacks(cwnd_)` = max(numdupacks_, ⌊cwnd_⌋/numdupacksFrac_) calls
/// `send_one()`, which sends `t_seqno_` while it is at most `highest_ack_ + cwnd_ + dupacks_`.
/// A window of 20 with `numdupacksFrac_` 4: the threshold is 5, the first four duplicates send
/// 21–24 and the fifth retransmits 1. Without the fraction: 21, 22 and the fast retransmit on
/// the third (RFC 3042's two segments).
#[test]
fn sack1_send_one_below_the_fractional_threshold() {
    for (frac, lt) in [(4u32, vec![21u64, 22, 23, 24]), (0, vec![21, 22])] {
        let mut c = cfg(Variant::Sack1, true);
        c.sack = true;
        c.sack_blocks = 3;
        c.dupthresh_frac = frac;
        c.limited_transmit = true;
        c.limited_transmit_send_one = true;
        c.initial_window = InitialWindow::Segments(20);
        c.initial_ssthresh = Limit::Bytes(Size(20 * MSS));
        c.validate().unwrap();
        let mut h = Snd::new(c, None);
        assert_eq!(h.sent_segs(), (1..=20).collect::<Vec<_>>());
        let mut sent = Vec::new();
        let thresh = lt.len() as u64 + 1;
        for k in 2..=thresh {
            h.ack_sack(ms(100 + k), 0, &[(2, k)]);
            sent.extend(h.sent_segs());
        }
        assert_eq!(sent, lt, "numdupacksFrac_ {frac}: send_one() below the threshold");
        h.ack_sack(ms(100 + thresh + 1), 0, &[(2, thresh + 1)]);
        assert_eq!(h.sent_segs().first(), Some(&1), "the fast retransmission at duplicate {thresh}");
    }
}

/// The data segments' arrival times (ms, rounded to the µs) and the ACKs' arrivals back at the
/// sender of a two-segment Reno transfer over one 800 kb/s, 100 ms link, with a SYN of 40 bytes
/// (`syn_` true, no options), IW 1, no delayed ACKs (the SYN-ACK's arrival first).
fn headerless_run(use_headers: bool) -> (Vec<f64>, Vec<f64>) {
    one_link_run(&format!("delayed_ack = false\nuse_headers = {use_headers}"))
}

/// `one_link_run`'s two-segment transfer with `tcp` added to its `[tcp]`: the arrivals of the
/// data segments and of the ACKs back at the sender (ms, rounded to the µs; SYN-ACK included).
fn one_link_run(tcp: &str) -> (Vec<f64>, Vec<f64>) {
    use tcplab_core::series::EVENT_RX;
    let text = format!(
        "[topology]\nkind = \"single_link\"\nrate = \"800kbps\"\ndelay = \"100ms\"\n[tcp]\nprofile = \"ns2\"\npreset = \"reno\"\n\
         handshake = true\nsyn_options = 0\nmss = {MSS}\ninitial_window = 1\n{tcp}\n\
         [[flows]]\nbytes = {}\n[[series]]\nkind = \"segments\"\n",
        2 * MSS
    );
    let s = tcplab_core::Scenario::from_toml(&text, &[]).unwrap_or_else(|e| panic!("{e}"));
    let r = tcplab_core::run(&s, 1).unwrap();
    let seg = r.series.as_deref().unwrap().segments.as_ref().unwrap().clone();
    let at = |dir: u8, data: bool| -> Vec<f64> {
        (0..seg.seq.len())
            .filter(|&i| seg.event[i] == EVENT_RX && seg.dir[i] == dir && (seg.len[i] > 0) == data && (dir == 1 || seg.flags[i] & FLAG_SYN == 0))
            .map(|i| (seg.time_ns[i] as f64 / 1e3).round() / 1e3)
            .collect()
    };
    (at(0, true), at(1, false))
}

/// ns-2's `useHeaders_` false (`TcpAgent::output()` adds `headersize()` only with it,
/// tcp/tcp.cc): a data packet is `packetSize_` bytes on the wire, the SYN (packet 0 with `syn_`)
/// `tcpip_base_hdr_size_` 40 and the sink's ACKs 40. ns-2.35's trace of this run (`$tcp set
/// useHeaders_ false`; worked by hand: the SYN takes 0.4 ms at 800 kb/s and arrives at 100.4 ms,
/// its ACK at 200.8 ms; a 1000-byte packet takes 10 ms): packet 1 arrives at 310.8 ms, its ACK
/// at 411.2 ms, packet 2 at 521.2 ms, its ACK at 621.6 ms. With headers (1040 bytes, 10.4 ms):
/// 311.2, 411.6, 522.0 and 622.4 ms.
#[test]
fn headerless_data_packets_as_ns2_use_headers_false() {
    assert_eq!(headerless_run(false), (vec![310.8, 521.2], vec![200.8, 411.2, 621.6]));
    assert_eq!(headerless_run(true), (vec![311.2, 522.0], vec![200.8, 411.6, 622.4]));
    assert!(TcpConfig::rfc().use_headers && TcpConfig::profile("ns2").unwrap().use_headers, "on in every profile");
    for p in tcplab_core::tcp::config::PROFILES {
        assert!(TcpConfig::profile(p).unwrap().use_headers, "{p}");
    }
}

/// ns-2's `rfc2988_` false (`rtt_timeout()`, `rtt_backoff()` in tcp/tcp.cc): the RTO is
/// t_rtxcur_ · t_backoff_, floored at `minrto_` after the backoff. `tcpTick_` 100 ms,
/// `minrto_` 1 s: segment 1 sent at 0 and acknowledged at 256 ms is a sample of 2 ticks
/// (t_srtt_ 16, t_rttvar_ 4, t_rtxcur_ ((4 << 3) + 16) >> 3 = 6 ticks, 600 ms), so the timer of
/// segments 2 and 3, set at 256 ms, runs max(600 ms, 1 s) either way: it fires at 1256 ms. Then
/// the backed-off RTO is max(2 · 600 ms, 1 s) = 1.2 s (fires at 2456 ms) and 2.4 s (4856 ms);
/// with `rfc2988_` true, max(600 ms, 1 s) · 2 = 2 s (3256 ms) and 4 s (7256 ms).
#[test]
fn ns2_rto_before_rfc2988_floors_after_the_backoff() {
    use tcplab_core::tcp::config::RtoModel;
    use tcplab_core::units::{Duration, SEC};
    for (rfc2988, want) in [(false, [ms(1256), ms(2456), ms(4856)]), (true, [ms(1256), ms(3256), ms(7256)])] {
        let mut c = cfg(Variant::Reno, true);
        c.rto_model = RtoModel::Ns2;
        c.timer_tick = Duration(ms(100));
        c.clock_granularity = Duration(ms(100));
        c.rto_min = Duration(SEC);
        c.rto_initial = Duration(6 * SEC);
        c.ns2_rfc2988 = rfc2988;
        c.validate().unwrap();
        let mut h = Snd::new(c, None);
        h.sent_segs();
        h.ack_seg(ms(256), 1);
        assert_eq!(h.sent_segs(), [2, 3]);
        let fired: Vec<Time> = (0..3).map(|_| h.rto()).collect();
        assert_eq!(fired, want, "rfc2988_ {rfc2988}");
    }
    // Off needs ns-2's estimator.
    let mut c = TcpConfig::rfc();
    c.ns2_rfc2988 = false;
    assert_eq!(c.validate().unwrap_err().0, "ns2_rfc2988");
}

/// ns-2's DelAck sink with `SYN_immediate_ack_` false and `syn_` true (`DelAckSink::recv()`,
/// tcp/tcp-sink.cc): the SYN waits for the delayed-ACK timer (`interval_` 100 ms) as any
/// in-order packet. ns-2.35's trace of `one_link_run`'s transfer with delayed ACKs and headerless
/// packets (worked by hand: the SYN arrives at 100.4 ms, its ACK leaves at 200.4 ms and arrives
/// at 300.8 ms; packet 1 arrives at 410.8 ms, its ACK waits 100 ms and arrives at 611.2 ms;
/// packet 2 at 721.2 ms, its ACK at 921.6 ms). With the SYN acknowledged at once (ns-2.35's
/// default, `delack_synack` off) everything is 100 ms earlier.
#[test]
fn delayed_synack_as_ns2_delack_sink_without_syn_immediate_ack() {
    let base = "delayed_ack = true\ndelack_timeout = \"100ms\"\nuse_headers = false";
    assert_eq!(one_link_run(&format!("{base}\ndelack_synack = true")), (vec![410.8, 721.2], vec![300.8, 611.2, 921.6]));
    assert_eq!(one_link_run(&format!("{base}\ndelack_synack = false")), (vec![310.8, 621.2], vec![200.8, 511.2, 821.6]));
    // Without delayed ACKs there is no timer to wait for.
    assert_eq!(one_link_run("delayed_ack = false\nuse_headers = false\ndelack_synack = true").1[0], 200.8);
    assert!(!TcpConfig::rfc().delack_synack && !TcpConfig::profile("ns2").unwrap().delack_synack);
}

/// ns-2's FullTcp/Sack opens the window on the ACK that ends its SACK recovery:
/// `FullTcpAgent::recv()` calls `opencwnd()` after `SackFullTcpAgent::ack_action()`, which
/// leaves `cwnd_` as `slowdown()` set it (`open_cwnd_on_pack_` false only spares partial ACKs;
/// tcp/tcp-full.cc). ns-2.35's trace of tcpVariants' `onedrop_sack_full` shows it: `cwnd_` 7
/// after the fast retransmit, 7.143 on the ACK that ends recovery (2.453206 s), 8.071 on the
/// eighth new ACK (2.659982 s), which sends two segments where a window one increment behind
/// sends one. The one-way Sack1 (`Sack1TcpAgent::recv()`: `newack()` only, tcp/tcp-sack1.cc)
/// does not grow there: `sack1_grow_on_recovery_exit` off.
#[test]
fn sack1_grows_cwnd_on_the_ack_that_ends_recovery_as_ns2_fulltcp_sack() {
    for grow in [false, true] {
        let mut c = cfg(Variant::Sack1, true);
        c.sack = true;
        c.sack1_grow_on_recovery_exit = grow;
        c.initial_window = InitialWindow::Segments(10);
        c.initial_ssthresh = Limit::Bytes(Size(10 * MSS));
        let mut h = Snd::new(c, None);
        assert_eq!(h.sent_segs(), (1..=10).collect::<Vec<_>>());
        // Segment 1 lost: 2..=10 arrive, nine duplicates with SACK blocks.
        for k in 2..=10u64 {
            h.ack_sack(ms(100 + k), 0, &[(2, k)]);
        }
        let sent = h.sent_segs();
        assert_eq!(sent[0], 1, "the fast retransmission of 1");
        assert!(h.s.core.in_recovery);
        assert_eq!(h.ssthresh_segs(), 5.0);
        assert_eq!(h.cwnd_segs(), 5.0);
        let top = *sent.iter().max().unwrap();
        assert!(top > 10, "the pipe let new data go in recovery");
        // The retransmission of 1 arrives: everything sent so far acknowledged, recovery over.
        h.ack_seg(ms(200), top);
        assert!(!h.s.core.in_recovery);
        assert_eq!(h.cwnd_segs(), if grow { 5.2 } else { 5.0 }, "grow {grow}");
        let mut next: Vec<u64> = h.sent_segs();
        assert_eq!(next.len(), 5, "grow {grow}: {next:?}");
        // One ACK per segment: the fifth grows the window past 6 segments with the exit's growth
        // (two segments leave on it), the sixth without.
        let mut per_ack = Vec::new();
        let mut acked = top;
        for i in 0..6 {
            acked = next.remove(0);
            h.ack_seg(ms(300 + i), acked);
            let out = h.sent_segs();
            per_ack.push(out.len());
            next.extend(out);
        }
        assert!(acked > top);
        assert_eq!(per_ack, if grow { [1, 1, 1, 1, 2, 1] } else { [1, 1, 1, 1, 1, 2] }, "grow {grow}");
    }
    assert!(TcpConfig::profile("ns2-full").unwrap().sack1_grow_on_recovery_exit);
    assert!(!TcpConfig::profile("ns2").unwrap().sack1_grow_on_recovery_exit && !TcpConfig::rfc().sack1_grow_on_recovery_exit);
}
