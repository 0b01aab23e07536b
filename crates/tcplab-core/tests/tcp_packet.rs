//! Packet-level tests of the TCP rules tcplab claims, in the style of smoltcp's: build an endpoint
//! in a given state, feed it exact segments at exact virtual times, and assert exactly what it
//! sends back (tests of a whole `TcpConn` in that style live in tcp_rules.rs). Whole-path timing
//! rules (slow start's log2 growth, the delayed-ACK penalty, a lost SYN) run through the world
//! with drop filters on exact packets.

use tcplab_core::net::{PacketTag, Segment, FLAG_ACK, FLAG_FIN, FLAG_SYN};
use tcplab_core::tcp::config::{InitialWindow, Limit, Unlimited};
use tcplab_core::tcp::{OutSeg, TcpConfig, TcpReceiver, TcpSender, Variant};
use tcplab_core::units::{ms, Size, Time, SEC};
use tcplab_core::{run, RunResult, Scenario};

const MSS: u64 = 1000;

fn cfg(variant: Variant) -> TcpConfig {
    let mut c = TcpConfig::rfc();
    c.variant = variant;
    c.mss = Size(MSS);
    c.handshake = false;
    c.fin = false;
    c.initial_window = InitialWindow::Segments(1);
    c.rwnd = Limit::Named(Unlimited::Unlimited);
    c
}

/// A sender driven by hand: no network, virtual time.
struct Snd {
    s: TcpSender,
    out: Vec<OutSeg>,
}

impl Snd {
    fn new(c: TcpConfig, bytes: Option<u64>) -> Snd {
        let mut h = Snd { s: TcpSender::new(c, bytes), out: Vec::new() };
        h.s.start(0, &mut h.out);
        h.collect_timers();
        h
    }
    /// Timer deadlines are read from the sender's timer itself; the world's events are dropped.
    fn collect_timers(&mut self) {
        self.s.take_timer_events().for_each(drop);
    }
    /// Segments sent since the last call.
    fn sent(&mut self) -> Vec<OutSeg> {
        std::mem::take(&mut self.out)
    }
    /// Data segment numbers sent since the last call (1-based, by sequence).
    fn sent_segs(&mut self) -> Vec<u64> {
        self.sent().iter().filter(|o| o.seg.len > 0).map(|o| (o.seg.seq - 1) / MSS + 1).collect()
    }
    /// The receiver acknowledges everything below data segment `k` + 1 (i.e. segments 1..=k).
    fn ack_seg(&mut self, t: Time, k: u64) {
        self.ack_raw(t, 1 + k * MSS);
    }
    fn ack_raw(&mut self, t: Time, ack: u64) {
        let seg = Segment { seq: 1, ack, flags: FLAG_ACK, wnd: u32::MAX, ..Default::default() };
        self.s.on_segment(t, &seg, &mut self.out);
        self.collect_timers();
    }
    fn rto(&mut self, t: Time) {
        let d = self.s.core.rto_timer.deadline().expect("the RTO timer is running");
        assert_eq!(d, t, "the RTO timer is due at {d}, not {t}");
        assert_eq!(self.s.core.rto_timer.on_event_for_test(t), true);
        self.s.on_rto(t, &mut self.out);
        self.collect_timers();
    }
    fn cwnd_segs(&self) -> f64 {
        self.s.core.cwnd as f64 / MSS as f64
    }
}

trait FireForTest {
    fn on_event_for_test(&mut self, t: Time) -> bool;
}
impl FireForTest for tcplab_core::engine::Timer {
    /// Fire the timer at its deadline regardless of which event armed it.
    fn on_event_for_test(&mut self, t: Time) -> bool {
        if self.deadline() == Some(t) {
            self.cancel();
            true
        } else {
            false
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Slow start and congestion avoidance (RFC 5681 §3.1)

/// A NewReno sender with IW 10 and ssthresh 5 segments: in congestion avoidance from the start.
fn newreno_iw10_ssthresh5() -> Snd {
    let mut c = cfg(Variant::Newreno);
    c.initial_window = InitialWindow::Segments(10);
    c.initial_ssthresh = Limit::Bytes(Size(5 * MSS));
    Snd::new(c, None)
}

#[test]
fn congestion_avoidance_adds_about_one_mss_per_rtt() {
    let mut h = newreno_iw10_ssthresh5();
    assert_eq!(h.sent_segs(), (1..=10).collect::<Vec<_>>());
    // cwnd (10) >= ssthresh (5): congestion avoidance from the start. Acknowledge one window of
    // ten segments one by one: cwnd grows by SMSS·SMSS/cwnd per ACK, a little under one SMSS.
    for k in 1..=10 {
        h.ack_seg(ms(100), k);
    }
    let w = h.cwnd_segs();
    assert!(w > 10.9 && w < 11.0, "cwnd after one RTT of CA: {w} segments");
    // Per-ACK sends keep the window full: 10 ACKs freed 10 segments plus the growth of ~1.
    assert_eq!(h.sent_segs().len(), 10);
    // Ten more windows: about ten more segments.
    let mut next = 11;
    for _ in 0..10 {
        let target = (h.cwnd_segs()) as u64;
        for _ in 0..target {
            h.ack_seg(ms(200), next);
            next += 1;
        }
    }
    let w = h.cwnd_segs();
    assert!((19.5..=21.0).contains(&w), "after 11 RTTs of CA cwnd is {w}");
}

#[test]
fn congestion_avoidance_starts_its_remainder_again_after_a_reduction() {
    // RFC 5681 eq. 3 in whole bytes carries SMSS²/cwnd's remainder from ACK to ACK. It belongs to
    // the window that grew: after a loss the next avoidance starts from zero, as ns-2's cwnd_
    // (a double, `cwnd_ += 1/cwnd_`, tcp/tcp.cc) starts from the window slowdown() set.
    let mut h = newreno_iw10_ssthresh5();
    let mut top = *h.sent_segs().last().unwrap();
    // Ten ACKs of avoidance from 10 segments: 10,958 bytes and a remainder of 7,039.
    for k in 1..=10 {
        h.ack_seg(ms(100), k);
    }
    assert_eq!(h.s.core.cwnd, 10_958);
    top = top.max(*h.sent_segs().last().unwrap());
    // Segment 11 lost: three duplicate ACKs, the fast retransmit, then the ACK of everything.
    for t in 101..=103 {
        h.ack_seg(ms(t), 10);
    }
    assert!(h.s.core.in_recovery);
    top = top.max(h.sent_segs().into_iter().max().unwrap_or(0));
    h.ack_seg(ms(200), top);
    assert!(!h.s.core.in_recovery);
    // Slow start back to ssthresh, one ACK a segment, then the first ACK of avoidance.
    let mut next = top + 1;
    let mut t = ms(300);
    loop {
        top = top.max(h.sent_segs().into_iter().max().unwrap_or(0));
        assert!(next <= top, "the sender stalled");
        let before = h.s.core.cwnd;
        let ca = before >= h.s.core.ssthresh;
        h.ack_seg(t, next);
        if ca {
            assert_eq!(h.s.core.cwnd, before + MSS * MSS / before, "no remainder from the window before the loss");
            break;
        }
        next += 1;
        t += ms(1);
    }
}

#[test]
fn cwnd_does_not_grow_when_the_receiver_window_limits() {
    // RFC 7661 §4.3: with a 4-segment receiver window the sender never fills cwnd, so cwnd stops
    // growing once it exceeds what is sent (instead of counting up without bound).
    let mut c = cfg(Variant::Newreno);
    c.rwnd = Limit::Bytes(Size(4 * MSS));
    c.initial_window = InitialWindow::Segments(2);
    let mut h = Snd::new(c, None);
    let mut acked = 0;
    for round in 0..50u64 {
        let sent = h.sent_segs();
        assert!(sent.len() <= 4, "round {round}: {sent:?}");
        for k in sent {
            acked = acked.max(k);
            let seg = Segment { seq: 1, ack: 1 + k * MSS, flags: FLAG_ACK, wnd: 4 * MSS as u32, ..Default::default() };
            h.s.on_segment(ms(100 * (round + 1)), &seg, &mut h.out);
        }
    }
    assert!(acked > 150);
    assert!(h.cwnd_segs() <= 5.0, "cwnd grew to {} segments with a 4-segment window", h.cwnd_segs());
}

// ---------------------------------------------------------------------------------------------
// Fast retransmit and recovery (RFC 5681 §3.2, RFC 6582)

/// A sender with segments 1..=n outstanding and cwnd = n segments, nothing acknowledged.
fn with_window(variant: Variant, n: u32) -> Snd {
    let mut c = cfg(variant);
    c.initial_window = InitialWindow::Segments(n);
    let mut h = Snd::new(c, None);
    assert_eq!(h.sent_segs().len(), n as usize);
    h
}

#[test]
fn fast_retransmit_on_the_third_duplicate_ack() {
    for v in [Variant::Tahoe, Variant::Reno, Variant::Newreno] {
        let mut h = with_window(v, 10);
        h.ack_seg(ms(100), 1); // segment 2 lost; 3.. arrive
        assert_eq!(h.sent_segs(), [11, 12], "{v:?}: slow start on the ACK of segment 1");
        h.ack_seg(ms(101), 1);
        h.ack_seg(ms(102), 1);
        assert_eq!(h.sent_segs(), Vec::<u64>::new(), "{v:?}: two duplicate ACKs send nothing");
        h.ack_seg(ms(103), 1);
        let out = h.sent();
        assert_eq!(out[0].seg.seq, 1 + MSS, "{v:?}: the third duplicate ACK retransmits segment 2");
        assert_eq!(out[0].tag, PacketTag::Data { seg: 2, tx: 2 });
        // FlightSize = 11 segments (2..=12): ssthresh = max(11/2, 2) segments.
        assert_eq!(h.s.core.ssthresh, 5500, "{v:?}");
        assert_eq!(h.s.core.stats.fast_retransmits, 1);
        match v {
            // Tahoe: cwnd = 1 segment, slow start from the hole.
            Variant::Tahoe => assert_eq!(h.cwnd_segs(), 1.0),
            // Reno/NewReno: cwnd = ssthresh + 3·SMSS.
            _ => assert_eq!(h.s.core.cwnd, 5500 + 3 * MSS, "{v:?}"),
        }
    }
}

#[test]
fn newreno_partial_ack_retransmits_next_hole_and_stays_in_recovery() {
    let mut h = with_window(Variant::Newreno, 10);
    // Segments 1 and 4 lost.
    for t in 0..3 {
        h.ack_seg(ms(100 + t), 0);
    }
    assert_eq!(h.sent_segs(), [1]);
    assert!(h.s.core.in_recovery);
    assert_eq!(h.s.core.recover, 1 + 10 * MSS);
    // The retransmitted 1 arrives: ACK covers 1..=3 (partial: recover is past segment 10).
    let cwnd_before = h.s.core.cwnd;
    h.ack_seg(ms(200), 3);
    let out = h.sent();
    assert_eq!(out[0].tag, PacketTag::Data { seg: 4, tx: 2 }, "partial ACK retransmits the next hole at once");
    assert!(h.s.core.in_recovery, "RFC 6582: a partial ACK does not end recovery");
    // Deflate by the 3 segments acknowledged, add back one SMSS.
    assert_eq!(h.s.core.cwnd, cwnd_before - 3 * MSS + MSS);
    // The full ACK ends recovery with cwnd = min(ssthresh, max(FlightSize, SMSS) + SMSS).
    h.ack_seg(ms(300), 10);
    assert!(!h.s.core.in_recovery);
    // Nothing was left in flight, so the window is max(0, SMSS) + SMSS (no burst of ssthresh),
    // and two new segments go out.
    assert_eq!(h.s.core.cwnd, 2 * MSS);
    assert_eq!(h.sent_segs(), [11, 12]);
    assert_eq!(h.s.core.stats.fast_retransmits, 1);
    assert_eq!(h.s.core.stats.retransmits, 2);
}

#[test]
fn reno_recover_guard_as_ns2_bugfix() {
    // After a timeout, duplicate ACKs of data sent before it: RFC 5681 Reno fast-retransmits
    // again; with `recover_guard` (ns-2's bugFix_, on in the ns2 profile) it does not.
    for guard in [false, true] {
        let mut c = cfg(Variant::Reno);
        c.initial_window = InitialWindow::Segments(10);
        c.recover_guard = guard;
        let mut h = Snd::new(c, None);
        let rto = h.s.core.rto_timer.deadline().unwrap();
        h.rto(rto);
        for t in 0..4 {
            h.ack_seg(rto + ms(10 + t), 0);
        }
        assert_eq!(h.s.core.stats.fast_retransmits, if guard { 0 } else { 1 }, "recover_guard = {guard}");
    }
    assert!(TcpConfig::profile("ns2").unwrap().recover_guard);
}

#[test]
fn newreno_does_not_fast_retransmit_twice_for_one_window_after_timeout() {
    // RFC 6582 §3.2 step 1a: after a timeout, duplicate ACKs for data sent before it do not
    // trigger a fast retransmit (recover = HighData at the timeout).
    let mut h = with_window(Variant::Newreno, 10);
    let rto = h.s.core.rto_timer.deadline().unwrap();
    h.rto(rto);
    assert_eq!(h.sent_segs(), [1]);
    assert_eq!(h.s.core.recover, 1 + 10 * MSS);
    for t in 0..4 {
        h.ack_seg(rto + ms(10 + t), 0);
    }
    assert_eq!(h.s.core.stats.fast_retransmits, 0);
}

#[test]
fn timeout_during_fast_recovery_does_not_raise_ssthresh() {
    // Window of 10, segment 1 lost: fast retransmit halves ssthresh to 5 segments; many duplicate
    // ACKs inflate the window and send new data (FlightSize grows to 30 segments); then the
    // retransmission is lost too and the timer expires. FlightSize/2 would be 15 segments — more
    // than before the loss — so ssthresh stays at the value of the reduction already made.
    let mut h = with_window(Variant::Newreno, 10);
    for t in 0..3 {
        h.ack_seg(ms(100 + t), 0);
    }
    assert_eq!(h.s.core.ssthresh, 5000);
    for t in 0..30 {
        h.ack_seg(ms(110 + t), 0);
    }
    assert!(h.s.core.flight_size() >= 30 * MSS, "inflation sent new data: {}", h.s.core.flight_size());
    let rto = h.s.core.rto_timer.deadline().unwrap();
    h.rto(rto);
    assert_eq!(h.s.core.ssthresh, 5000);
    assert_eq!(h.cwnd_segs(), 1.0);
    // Outside recovery the timeout uses FlightSize (RFC 5681 eq. 4).
    let mut h = with_window(Variant::Newreno, 10);
    h.rto(SEC);
    assert_eq!(h.s.core.ssthresh, 5000);
}

// ---------------------------------------------------------------------------------------------
// Retransmission timer (RFC 6298)

#[test]
fn rto_backs_off_and_loss_window_is_one_segment() {
    let mut c = cfg(Variant::Newreno);
    c.initial_window = InitialWindow::Segments(4);
    let mut h = Snd::new(c, None);
    assert_eq!(h.sent_segs(), [1, 2, 3, 4]);
    // §2.1 / §5.1: timer started with the initial RTO (1 s) when the first segment went out.
    h.rto(SEC);
    assert_eq!(h.sent_segs(), [1], "§5.4: retransmit the earliest unacknowledged segment");
    assert_eq!(h.cwnd_segs(), 1.0, "RFC 5681 §3.1: loss window");
    assert_eq!(h.s.core.ssthresh, 2000, "max(FlightSize/2, 2·SMSS)");
    // §5.5: back off (2 s), §5.6: restart.
    h.rto(3 * SEC);
    assert_eq!(h.sent_segs(), [1]);
    assert_eq!(h.s.core.ssthresh, 2000, "ssthresh held on a repeated timeout");
    h.rto(7 * SEC);
    assert_eq!(h.sent_segs(), [1]);
    assert_eq!(h.s.core.stats.timeouts, 3);
    // The ACK of the retransmission: Karn's rule gives no sample, so the backed-off RTO (8 s)
    // stays for the next segment (RFC 6298 §5 note).
    h.ack_seg(7 * SEC + ms(100), 1);
    assert_eq!(h.s.core.stats.rtt_samples, 0);
    assert_eq!(h.s.core.rtt.rto(), 8 * SEC);
    assert_eq!(h.sent_segs(), [2, 3], "slow start from the loss window, go-back-N");
}

#[test]
fn coarse_bsd_timer_fires_on_tick_boundaries() {
    let mut c = cfg(Variant::Reno);
    c.timer_tick = tcplab_core::units::Duration(ms(500));
    c.clock_granularity = tcplab_core::units::Duration(ms(500));
    c.rto_initial = tcplab_core::units::Duration(6 * SEC);
    let mut h = Snd { s: TcpSender::new(c, None), out: Vec::new() };
    h.s.start(ms(1300), &mut h.out);
    // 6 s = 12 ticks, counted from the next 500 ms boundary: fires at 1.5 + 5.5 = 7.0 s.
    assert_eq!(h.s.core.rto_timer.deadline(), Some(7 * SEC));
}

// ---------------------------------------------------------------------------------------------
// Handshake

#[test]
fn lost_syn_is_retransmitted_after_the_initial_rto_with_backoff() {
    let mut c = cfg(Variant::Newreno);
    c.handshake = true;
    let mut h = Snd::new(c, Some(10 * MSS));
    let out = h.sent();
    assert_eq!(out.len(), 1);
    assert!(out[0].seg.flags & FLAG_SYN != 0);
    assert_eq!(out[0].tag, PacketTag::Syn { tx: 1 });
    h.rto(SEC);
    assert_eq!(h.sent()[0].tag, PacketTag::Syn { tx: 2 });
    h.rto(3 * SEC);
    assert_eq!(h.sent()[0].tag, PacketTag::Syn { tx: 3 });
    // The SYN-ACK arrives: established, IW = 1 segment because the SYN was lost (RFC 5681 §3.1),
    // and RFC 6298 §5.7: RTO of 3 s for the data.
    let synack = Segment { seq: 0, ack: 1, flags: FLAG_SYN | FLAG_ACK, wnd: u32::MAX, ..Default::default() };
    h.s.on_segment(3 * SEC + ms(100), &synack, &mut h.out);
    assert_eq!(h.sent_segs(), [1]);
    assert_eq!(h.s.core.rtt.rto(), 3 * SEC);
    assert_eq!(h.s.core.stats.syn_retransmits, 2);
}

/// Linux `tcp_retransmit_timer` with `tcp_syn_linear_timeouts` = 4 (the `linux` profile's
/// `syn_linear_timeouts`): in SYN-SENT the RTO is not doubled while `total_rto` is at most 4, so
/// the first five SYN retransmissions leave 1 s apart, then 2, 4, 8 s; `tcp_write_timeout` gives
/// up once the time of the doubling schedule of `tcp_syn_retries` has passed (127 s for 6: ten
/// retransmissions; 7 s for 2: five, as the kernel did in docs/tbit.md).
#[test]
fn linux_retransmits_the_syn_linearly_five_times_then_backs_off() {
    let mut c = TcpConfig::profile("linux").unwrap();
    c.handshake = true;
    let mut h = Snd::new(c, Some(10 * MSS));
    assert_eq!(h.sent().len(), 1);
    let mut at = vec![];
    for _ in 0..10 {
        let t = h.s.core.rto_timer.deadline().expect("the SYN's timer");
        h.rto(t);
        assert!(h.sent()[0].seg.flags & FLAG_SYN != 0);
        at.push(t / ms(1));
    }
    // Each interval as the timer wheel of HZ 250 runs it (kernel/time/timer.c: a 1 s timer,
    // 250 jiffies, on level 1's 8-jiffy buckets, expires at 256 jiffies = 1,024 ms; the kernel's
    // SYNs were measured 1.02–1.03 s apart): 1, 1, 1, 1, 1, then 2, 4, 8, 16, 32 s, each rounded
    // up to its level's granularity.
    let gaps: Vec<u64> = at.iter().scan(0, |prev, &t| Some(t - std::mem::replace(prev, t))).collect();
    assert_eq!(gaps, [1024, 1024, 1024, 1024, 1024, 2016, 4128, 8192, 16128, 34048]);
    assert_eq!(h.s.core.stats.syn_retransmits, 10);
    // The eleventh expiry gives up (1 + 10 SYNs sent).
    let t = h.s.core.rto_timer.deadline().expect("the last SYN's timer");
    h.rto(t);
    assert!(h.sent().is_empty());
    assert_eq!(h.s.core.phase, tcplab_core::tcp::SenderPhase::Aborted);
    let mut c = TcpConfig::profile("linux").unwrap();
    c.handshake = true;
    c.syn_retries = 2;
    let mut h = Snd::new(c, Some(10 * MSS));
    h.sent();
    let mut n = 0;
    while let Some(t) = h.s.core.rto_timer.deadline() {
        h.rto(t);
        n += h.sent().len();
        if h.s.core.phase == tcplab_core::tcp::SenderPhase::Aborted {
            assert_eq!((n, t / ms(1)), (5, 7136));
            return;
        }
    }
    panic!("never gave up");
}

#[test]
fn handshake_rtt_sample_seeds_the_estimator_unless_disabled() {
    for use_it in [true, false] {
        let mut c = cfg(Variant::Newreno);
        c.handshake = true;
        c.handshake_rtt_sample = use_it;
        c.rto_min = tcplab_core::units::Duration(ms(200));
        let mut h = Snd::new(c, Some(10 * MSS));
        h.sent();
        let synack = Segment { seq: 0, ack: 1, flags: FLAG_SYN | FLAG_ACK, wnd: u32::MAX, ..Default::default() };
        h.s.on_segment(ms(100), &synack, &mut h.out);
        if use_it {
            assert_eq!(h.s.core.rtt.srtt(), Some(ms(100)));
            assert_eq!(h.s.core.rtt.rto(), ms(300));
        } else {
            // Linux 2.2 (Seddigh §3): the first data segment still runs on the initial RTO.
            assert_eq!(h.s.core.rtt.srtt(), None);
            assert_eq!(h.s.core.rtt.rto(), SEC);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Receiver: delayed ACKs (RFC 1122 §4.2.3.2, RFC 5681 §4.2)

struct Rcv {
    r: TcpReceiver,
    out: Vec<OutSeg>,
}

impl Rcv {
    fn new(delayed: bool) -> Rcv {
        let mut c = cfg(Variant::Newreno);
        c.delayed_ack = delayed;
        Rcv { r: TcpReceiver::new(c), out: Vec::new() }
    }
    fn data(&mut self, t: Time, k: u64) -> Vec<u64> {
        let seg = Segment { seq: 1 + (k - 1) * MSS, ack: 0, len: MSS as u32, flags: FLAG_ACK, ..Default::default() };
        self.r.on_segment(t, &seg, &mut self.out);
        let _ = self.r.take_timer_events().count();
        self.out.drain(..).map(|o| (o.seg.ack - 1) / MSS).collect()
    }
}

#[test]
fn delayed_ack_timer_acks_a_lone_segment() {
    // The Allman et al. delayed-ACK penalty: with IW 1 the first segment waits for the timer.
    let mut r = Rcv::new(true);
    r.data(ms(50), 1);
    r.r.delack_timer.on_event_for_test(ms(250));
    r.r.on_delack_timer(ms(250), &mut r.out);
    let acks: Vec<u64> = r.out.drain(..).map(|o| o.seg.ack).collect();
    assert_eq!(acks, [1 + MSS]);
    assert_eq!(r.r.stats.delack_timeouts, 1);
}

#[test]
fn bsd_delack_fires_on_the_200ms_tick() {
    let mut c = cfg(Variant::Reno);
    c.delack_timeout = tcplab_core::units::Duration(0);
    c.delack_tick = tcplab_core::units::Duration(ms(200));
    let mut r = Rcv { r: TcpReceiver::new(c), out: Vec::new() };
    r.data(ms(130), 1);
    assert_eq!(r.r.delack_timer.deadline(), Some(ms(200)));
    let mut r2 = Rcv { r: TcpReceiver::new(r.r_cfg()), out: Vec::new() };
    r2.data(ms(200), 1);
    assert_eq!(r2.r.delack_timer.deadline(), Some(ms(400)), "strictly after the arrival");
}

impl Rcv {
    fn r_cfg(&self) -> TcpConfig {
        let mut c = cfg(Variant::Reno);
        c.delack_timeout = tcplab_core::units::Duration(0);
        c.delack_tick = tcplab_core::units::Duration(ms(200));
        c
    }
}

#[test]
fn fin_is_acknowledged_and_consumes_a_sequence_number() {
    let mut r = Rcv::new(true);
    r.data(0, 1);
    let fin = Segment { seq: 1 + MSS, len: 0, flags: FLAG_ACK | FLAG_FIN, ..Default::default() };
    r.r.on_segment(ms(1), &fin, &mut r.out);
    let acks: Vec<u64> = r.out.drain(..).map(|o| o.seg.ack).collect();
    assert_eq!(acks, [2 + MSS]);
    assert!(r.r.fin_received);
}

// ---------------------------------------------------------------------------------------------
// Whole path: timing rules through the world

fn run_toml(text: &str) -> RunResult {
    let s = Scenario::from_toml(text, &[]).unwrap_or_else(|e| panic!("{e}"));
    run(&s, 1).unwrap()
}

fn path(tcp: &str, flow: &str) -> String {
    // 100 ms RTT, a link fast enough that serialisation is negligible (12 µs a packet).
    let iw = if tcp.contains("initial_window") { "" } else { "initial_window = 1\n" };
    format!("[topology]\nkind = \"single_link\"\nrate = \"1Gbps\"\ndelay = \"50ms\"\n[tcp]\nmss = {MSS}\n{iw}{tcp}\n[[flows]]\n{flow}\n")
}

#[test]
fn slow_start_time_is_rtt_log2_without_delayed_acks() {
    // Allman et al. eq. 1–2: with IW 1 and an ACK per segment, the window doubles every RTT, so
    // 2^k − 1 segments take k RTTs of data after the handshake's RTT; the last arrives half an RTT
    // after it is sent.
    for (segs, rounds) in [(1u64, 1u64), (3, 2), (15, 4), (63, 6)] {
        let r = run_toml(&path("delayed_ack = false", &format!("bytes = {}", segs * MSS)));
        let t = r.transfers[0].transfer_time_s.unwrap();
        let expect = 0.1 * (rounds as f64 + 0.5);
        assert!((t - expect).abs() < 0.005, "{segs} segments: {t} s, expected {expect} s");
    }
}

#[test]
fn slow_start_is_slower_with_delayed_acks() {
    // Allman eq. 5–6: with an ACK per two segments the window grows by 1.5 per RTT, so reaching a
    // window W takes about log1.5(W) RTTs instead of log2(W) — about 1.7 times as long — and
    // with IW 1 the lone first segment waits for the 200 ms delayed-ACK timer.
    let segs = 63;
    let fast = run_toml(&path("delayed_ack = false", &format!("bytes = {}", segs * MSS))).transfers[0].transfer_time_s.unwrap();
    let r = run_toml(&path("delayed_ack = true", &format!("bytes = {}", segs * MSS)));
    let slow = r.transfers[0].transfer_time_s.unwrap();
    assert_eq!(r.transfers[0].delack_timeouts >= 1, true, "the first segment waits for the timer");
    // Without the timer penalty the delayed-ACK run needs more rounds: log1.5(63) ≈ 9.6 vs 6.
    let ratio = (slow - 0.2) / fast;
    assert!(ratio > 1.3 && ratio < 2.3, "delayed/undelayed time ratio {ratio} ({slow} s vs {fast} s)");
}

#[test]
fn delayed_ack_penalty_for_a_lone_first_segment() {
    // One segment, delayed ACKs: the receiver holds its ACK 200 ms (RFC 1122 timer), so the
    // sender learns of the delivery 200 ms later; the transfer itself is delivered on time.
    let r = run_toml(&path("delayed_ack = true\nfin = false", &format!("bytes = {MSS}")));
    let t = &r.transfers[0];
    assert!((t.transfer_time_s.unwrap() - 0.15).abs() < 0.002);
    let acked = t.acked_s.unwrap();
    // SYN RTT (0.1) + data one way (0.05) + 200 ms timer + ACK one way (0.05). (A FIN right
    // behind the data would be acknowledged at once and hide the penalty: this flow sends none.)
    assert!((acked - 0.4).abs() < 0.001, "acked at {acked}");
    assert_eq!(t.delack_timeouts, 1);
}

#[test]
fn lost_syn_delays_the_transfer_by_the_initial_rto() {
    for (profile, rto) in [("rfc", 1.0), ("rfc2988", 3.0), ("bsd", 6.0)] {
        let r = run_toml(&path(&format!("profile = \"{profile}\"\ndelayed_ack = false"), &format!("bytes = {MSS}\ndrops = [{{ kind = \"syn\" }}]")));
        let t = &r.transfers[0];
        assert_eq!(t.syn_retransmits, 1, "{profile}");
        let est = t.established_s.unwrap();
        // The BSD timer runs on 500 ms ticks: it fires on a tick boundary.
        assert!((est - (rto + 0.1)).abs() < 0.001, "{profile}: established at {est}");
    }
}

#[test]
fn lost_synack_is_retransmitted_by_both_ends() {
    let r = run_toml(&path("delayed_ack = false", &format!("bytes = {MSS}\ndrops = [{{ kind = \"synack\" }}]")));
    let t = &r.transfers[0];
    // Both timers (1 s) expire together: the SYN and the SYN-ACK are each sent again.
    assert_eq!(t.syn_retransmits, 1);
    assert!(t.synack_retransmits >= 1);
    assert!((t.established_s.unwrap() - 1.1).abs() < 0.06, "{:?}", t.established_s);
}

#[test]
fn three_losses_in_one_window_reno_newreno_tahoe() {
    // 20-segment window; data segments 5, 9 and 13 lost once. NewReno: one fast retransmit, each
    // partial ACK repairs the next hole, one RTT per loss, no timeout, exactly 3 retransmissions,
    // one CA event. Reno leaves recovery on the first partial ACK; the remaining holes need
    // another fast retransmit (if enough duplicate ACKs come back) or a timeout: never one CA event.
    let flow = "bytes = 60000\ndrops = [{ kind = \"data\", segment = 25 }, { kind = \"data\", segment = 29 }, { kind = \"data\", segment = 33 }]";
    let tcp = |v: &str| format!("variant = \"{v}\"\ndelayed_ack = false\ninitial_window = 20\ninitial_ssthresh = 20000");
    let nr = run_toml(&path(&tcp("newreno"), flow));
    let c = &nr.connections[0];
    assert_eq!((c.fast_retransmits, c.timeouts, c.retransmits), (1, 0, 3), "NewReno: {c:?}");
    assert_eq!((c.ca_events, c.non_ca_events, c.other_losses), (1, 0, 2));
    let reno = run_toml(&path(&tcp("reno"), flow));
    let c = &reno.connections[0];
    assert_eq!(c.bytes_delivered, 60000);
    assert!(c.fast_retransmits + c.timeouts >= 2, "Reno needs more than one reduction: {c:?}");
    assert_eq!(c.ca_events, 0, "Reno: {c:?}");
    assert!(c.non_ca_events >= 1);
    let nr_t = nr.transfers[0].transfer_time_s.unwrap();
    let reno_t = reno.transfers[0].transfer_time_s.unwrap();
    assert!(reno_t > nr_t, "Reno {reno_t} s should be slower than NewReno {nr_t} s");
    let tahoe = run_toml(&path(&tcp("tahoe"), flow));
    let c = &tahoe.connections[0];
    assert_eq!(c.bytes_delivered, 60000);
    assert_eq!(c.fast_retransmits, 1);
}

#[test]
fn connection_is_abandoned_after_syn_retries() {
    // RFC 1122 §4.2.3.5: every SYN dropped; after syn_retries retransmissions the sender gives up
    // (1 + 2 + 4 + 8 s of backoff with 3 retries), and the run ends instead of retrying forever.
    let r = run_toml(&path("syn_retries = 3", &format!("bytes = {MSS}\ndrops = [{{ kind = \"syn\", transmissions = [1, 2, 3, 4, 5, 6, 7, 8] }}]")));
    let t = &r.transfers[0];
    assert!(t.aborted);
    assert_eq!(t.syn_retransmits, 3);
    assert_eq!(t.delivered_s, None);
    assert_eq!(t.acked_s, None);
    assert!((r.meta.sim_time_s - 15.0).abs() < 1e-6, "gave up at {}", r.meta.sim_time_s);
}

#[test]
fn connection_is_abandoned_after_data_retries() {
    let mut c = cfg(Variant::Newreno);
    c.data_retries = 2;
    let mut h = Snd::new(c, Some(MSS));
    assert_eq!(h.sent_segs(), [1]);
    h.rto(SEC);
    h.rto(3 * SEC);
    assert_eq!(h.s.core.stats.timeouts, 2);
    h.rto(7 * SEC);
    assert_eq!(h.s.phase(), tcplab_core::tcp::SenderPhase::Aborted);
    assert_eq!(h.sent_segs(), [1, 1], "two retransmissions, then nothing");
}

// ---------------------------------------------------------------------------------------------
// Rules found by review

#[test]
fn fast_retransmit_restarts_the_retransmission_timer() {
    // RFC 6298 §5: never retransmit a segment less than one RTO after its previous transmission.
    let mut h = with_window(Variant::Reno, 10);
    h.ack_seg(ms(100), 1);
    assert_eq!(h.s.core.rto_timer.deadline(), Some(ms(100) + SEC));
    for t in 0..3 {
        h.ack_seg(ms(1050 + t), 1);
    }
    assert_eq!(h.s.core.stats.fast_retransmits, 1);
    assert_eq!(h.s.core.rto_timer.deadline(), Some(ms(1052) + SEC), "restarted at the fast retransmit");
}

#[test]
fn only_the_first_partial_ack_restarts_the_timer() {
    // RFC 6582 §3.2 step 3 ("Impatient"): segments 1, 4 and 7 lost.
    let mut h = with_window(Variant::Newreno, 10);
    for t in 0..3 {
        h.ack_seg(ms(100 + t), 0);
    }
    h.ack_seg(ms(200), 3); // first partial ACK
    assert_eq!(h.s.core.rto_timer.deadline(), Some(ms(200) + SEC));
    h.ack_seg(ms(300), 6); // second partial ACK
    assert_eq!(h.s.core.rto_timer.deadline(), Some(ms(200) + SEC), "not restarted again");
    assert!(h.s.core.in_recovery);
}

#[test]
fn fast_retransmit_stops_rtt_timing_karn() {
    // RFC 6298 §3: a retransmission makes the timed segment's ACK ambiguous; with `karn` off the
    // sample is taken anyway.
    for karn in [true, false] {
        let mut c = cfg(Variant::Newreno);
        c.initial_window = InitialWindow::Segments(10);
        c.karn = karn;
        let mut h = Snd::new(c, None);
        h.sent();
        for t in 0..3 {
            h.ack_seg(ms(100 + t), 0); // segment 1 (the timed one) lost
        }
        h.ack_seg(ms(300), 10);
        assert_eq!(h.s.core.stats.rtt_samples, if karn { 0 } else { 1 }, "karn = {karn}");
    }
}

#[test]
fn repeated_timeouts_count_as_other_losses() {
    // Mathis et al. §5.2: a timeout is one non-CA event; the retransmissions of the backed-off
    // timeouts change no window of their own, so they are other losses.
    let mut c = cfg(Variant::Newreno);
    c.initial_window = InitialWindow::Segments(4);
    let mut h = Snd::new(c, Some(4 * MSS));
    h.rto(SEC);
    h.rto(3 * SEC);
    h.rto(7 * SEC);
    h.ack_seg(7 * SEC + ms(100), 4);
    let st = &h.s.core.stats;
    assert_eq!((st.retransmits, st.timeouts, st.ca_events, st.non_ca_events, st.other_losses), (3, 3, 0, 1, 2));
}

#[test]
fn lost_syn_resets_a_larger_initial_window_to_one_segment() {
    let mut c = cfg(Variant::Newreno);
    c.handshake = true;
    c.initial_window = InitialWindow::Segments(4);
    let mut h = Snd::new(c, Some(10 * MSS));
    h.sent();
    h.rto(SEC);
    h.sent();
    let synack = Segment { seq: 0, ack: 1, flags: FLAG_SYN | FLAG_ACK, wnd: u32::MAX, ..Default::default() };
    h.s.on_segment(SEC + ms(100), &synack, &mut h.out);
    assert_eq!(h.sent_segs(), [1], "RFC 5681 §3.1: IW 1 after a lost SYN, not 4");
}

#[test]
fn segments_with_data_or_a_new_window_are_not_duplicate_acks() {
    let mut h = with_window(Variant::Newreno, 10);
    for t in 0..3 {
        // RFC 5681 §2 (a): an ACK carrying data is not a duplicate.
        let seg = Segment { seq: 1, ack: 1, len: 100, flags: FLAG_ACK, wnd: u32::MAX, ..Default::default() };
        h.s.on_segment(ms(100 + t), &seg, &mut h.out);
    }
    assert_eq!(h.s.core.dupacks, 0);
    for t in 0..3 {
        // (e): a window update is not a duplicate.
        let seg = Segment { seq: 1, ack: 1, flags: FLAG_ACK, wnd: 50_000 + t as u32, ..Default::default() };
        h.s.on_segment(ms(200 + t), &seg, &mut h.out);
    }
    assert_eq!(h.s.core.stats.fast_retransmits, 0);
}

#[test]
fn empty_transfer_without_handshake_or_fin_completes() {
    let r = run_toml(&path("handshake = false\nfin = false", "bytes = 0\nrepeat = 2"));
    assert!(r.meta.completed);
    assert_eq!(r.transfers.len(), 2);
}

#[test]
fn cwnd_instruments_start_with_data() {
    // A lost SYN resets IW 4 to 1 segment before any data: the instruments never see the 4.
    let r = run_toml(&path("initial_window = 4\ndelayed_ack = false", &format!("bytes = {MSS}\ndrops = [{{ kind = \"syn\" }}]")));
    let c = &r.connections[0];
    // One segment of data: cwnd is 1 MSS until its ACK grows it to 2 (slow start); never 4.
    assert_eq!(c.cwnd_max_bytes, 2 * MSS);
    let avg = c.cwnd_avg_bytes.unwrap();
    assert!(avg >= MSS as f64 && avg < 2.0 * MSS as f64, "{avg}");
}

// ---------------------------------------------------------------------------------------------
// Limited Transmit (RFC 3042) and Appropriate Byte Counting (RFC 3465)

#[test]
fn limited_transmit_sends_one_new_segment_on_each_of_two_dupacks() {
    let mut c = cfg(Variant::Newreno);
    c.initial_window = InitialWindow::Segments(4);
    c.limited_transmit = true;
    let mut h = Snd::new(c, None);
    assert_eq!(h.sent_segs(), [1, 2, 3, 4]);
    // Segment 1 lost: the duplicate ACKs of segments 2, 3 each release one new segment.
    h.ack_seg(ms(100), 0);
    assert_eq!(h.sent_segs(), [5], "RFC 3042: first duplicate ACK");
    h.ack_seg(ms(101), 0);
    assert_eq!(h.sent_segs(), [6], "second duplicate ACK");
    assert_eq!(h.cwnd_segs(), 4.0, "cwnd is not changed");
    h.ack_seg(ms(102), 0);
    let out = h.sent();
    assert_eq!(out[0].tag, PacketTag::Data { seg: 1, tx: 2 }, "third: fast retransmit");
    // RFC 5681 §3.2 step 2: the two limited-transmit segments are not in FlightSize for
    // ssthresh: max(4/2, 2) segments, not 6/2.
    assert_eq!(h.s.core.ssthresh, 2 * MSS);
    assert_eq!(h.s.core.stats.limited_transmits, 2);
    // Without Limited Transmit nothing goes out on the first two duplicates.
    let mut h = with_window(Variant::Newreno, 4);
    h.ack_seg(ms(100), 0);
    h.ack_seg(ms(101), 0);
    assert_eq!(h.sent_segs(), Vec::<u64>::new());
}

#[test]
fn limited_transmit_respects_the_receiver_window() {
    let mut c = cfg(Variant::Newreno);
    c.initial_window = InitialWindow::Segments(4);
    c.limited_transmit = true;
    let mut h = Snd::new(c, None);
    h.sent();
    let dup = Segment { seq: 1, ack: 1, flags: FLAG_ACK, wnd: 4 * MSS as u32, ..Default::default() };
    h.s.on_segment(ms(100), &dup, &mut h.out); // first ACK with this window: a window update
    h.s.on_segment(ms(101), &dup, &mut h.out);
    assert_eq!(h.sent_segs(), Vec::<u64>::new(), "a 4-segment receiver window has no room");
}

#[test]
fn abc_slow_start_counts_bytes_up_to_l_segments() {
    // RFC 3465 §2.2: an ACK covering two segments grows cwnd by min(N, L·SMSS).
    for (abc, expect) in [(0u32, 5.0), (1, 5.0), (2, 6.0)] {
        let mut c = cfg(Variant::Newreno);
        c.initial_window = InitialWindow::Segments(4);
        c.abc = abc;
        let mut h = Snd::new(c, None);
        h.ack_seg(ms(100), 2); // one ACK for segments 1 and 2 (a delayed ACK)
        assert_eq!(h.cwnd_segs(), expect, "abc = {abc}");
    }
}

#[test]
fn abc_uses_l_1_in_slow_start_after_a_timeout() {
    let mut c = cfg(Variant::Newreno);
    c.initial_window = InitialWindow::Segments(4);
    c.abc = 2;
    let mut h = Snd::new(c, None);
    h.rto(SEC);
    h.sent();
    h.ack_seg(SEC + ms(100), 2);
    assert_eq!(h.cwnd_segs(), 2.0, "L = 1 after an RTO: 1 + 1, not 1 + 2");
}

#[test]
fn abc_congestion_avoidance_adds_one_mss_per_window_of_bytes() {
    // RFC 3465 §2.1: with delayed ACKs (two segments per ACK) the window still grows one SMSS per
    // RTT, where per-ACK counting grows it by half of that.
    for (abc, lo, hi) in [(1u32, 10.9, 11.1), (0, 10.4, 10.6)] {
        let mut c = cfg(Variant::Newreno);
        c.initial_window = InitialWindow::Segments(10);
        c.initial_ssthresh = Limit::Bytes(Size(5 * MSS));
        c.abc = abc;
        let mut h = Snd::new(c, None);
        for k in 1..=5 {
            h.ack_seg(ms(100), 2 * k); // five ACKs, two segments each: one window
        }
        let w = h.cwnd_segs();
        assert!(w >= lo && w <= hi, "abc = {abc}: cwnd {w}");
    }
}

#[test]
fn abc_l_above_2_is_refused() {
    let mut c = TcpConfig::rfc();
    c.abc = 3;
    assert_eq!(c.validate().unwrap_err().0, "abc");
}

// ---------------------------------------------------------------------------------------------
// Early Retransmit (RFC 5827)

/// A finite transfer of `n` segments, all sent at once (IW n), with Early Retransmit on or off.
fn short_transfer(n: u64, er: bool) -> Snd {
    let mut c = cfg(Variant::Newreno);
    c.initial_window = InitialWindow::Segments(n as u32);
    c.early_retransmit = er;
    let mut h = Snd::new(c, Some(n * MSS));
    assert_eq!(h.sent_segs().len() as u64, n);
    h
}

#[test]
fn early_retransmit_after_one_dupack_with_two_segments_outstanding() {
    // RFC 5827 §3.2: two outstanding, nothing new to send: ER_thresh = 2 − 1 = 1.
    let mut h = short_transfer(2, true);
    h.ack_seg(ms(100), 0); // segment 1 lost, segment 2 arrived
    let out = h.sent();
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].tag, PacketTag::Data { seg: 1, tx: 2 });
    assert_eq!((h.s.core.stats.fast_retransmits, h.s.core.stats.early_retransmits), (1, 1));
    assert_eq!(h.s.core.stats.timeouts, 0, "at 100 ms, well before the 1 s RTO");
    // Without ER the one duplicate ACK does nothing: the loss waits for the timer.
    let mut h = short_transfer(2, false);
    h.ack_seg(ms(100), 0);
    assert!(h.sent().is_empty());
}

#[test]
fn early_retransmit_thresholds_by_outstanding_segments() {
    // 3 outstanding → 2 duplicate ACKs; 4 outstanding → the standard 3.
    for (n, thresh) in [(3u64, 2u32), (4, 3)] {
        let mut h = short_transfer(n, true);
        for d in 1..=thresh {
            h.ack_seg(ms(100 + d as u64), 0);
            let sent = !h.sent().is_empty();
            assert_eq!(sent, d == thresh, "{n} outstanding, duplicate {d}");
        }
    }
}

#[test]
fn early_retransmit_not_used_while_new_data_can_be_sent() {
    // RFC 5827 §3.1 (2.b): new data ready and the receiver window open: the standard threshold.
    let mut c = cfg(Variant::Newreno);
    c.initial_window = InitialWindow::Segments(2);
    c.early_retransmit = true;
    let mut h = Snd::new(c, None);
    h.sent();
    h.ack_seg(ms(100), 0);
    h.ack_seg(ms(101), 0);
    assert_eq!(h.s.core.stats.fast_retransmits, 0);
}
