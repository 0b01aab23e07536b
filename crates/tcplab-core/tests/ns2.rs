//! Packet-level tests of the `ns2` profile's knobs: each states what ns-2.35's one-way TCP agents
//! do, cites the source file that shows it, and checks the same exchange under the RFC default.

use tcplab_core::net::{PacketTag, Segment, FLAG_ACK, FLAG_SYN};
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
/// expiry: ssthresh = half the window at the time (for Reno the inflated window, `window()` adds
/// `dupwnd_`, tcp/tcp-reno.cc), and a repeated timeout halves a one-segment window (floor 2).
/// RFC 5681 here: min(ssthresh, FlightSize/2) inside a reduced window, held on a repeat.
#[test]
fn timeout_after_fast_retransmit_halves_the_window_again() {
    for ns2 in [false, true] {
        let mut h = in_flight(Variant::Reno, ns2, 10);
        for t in 0..3 {
            h.ack_seg(ms(100 + t), 0);
        }
        assert_eq!(h.sent_segs(), [1]);
        assert_eq!(h.ssthresh_segs(), 5.0);
        // Seven more duplicate ACKs inflate the window to 5 + 3 + 7 = 15 segments.
        for t in 0..7 {
            h.ack_seg(ms(110 + t), 0);
        }
        assert_eq!(h.cwnd_segs(), 15.0);
        assert_eq!(h.sent_segs(), [11, 12, 13, 14, 15]);
        h.rto();
        assert_eq!(h.sent_segs(), [1], "go-back-N from the hole");
        assert_eq!(h.cwnd_segs(), 1.0);
        assert_eq!(h.ssthresh_segs(), if ns2 { 7.0 } else { 5.0 }, "first timeout, ns2 = {ns2}");
        h.rto();
        assert_eq!(h.ssthresh_segs(), if ns2 { 2.0 } else { 5.0 }, "repeated timeout, ns2 = {ns2}");
    }
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
