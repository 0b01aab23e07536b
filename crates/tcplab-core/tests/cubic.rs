//! CUBIC and HyStart as Linux's `net/ipv4/tcp_cubic.c` computes them (`cc = "cubic"`), and the
//! idle restart of `tcp_cwnd_restart` (`cwnd_validation = "linux"`): on one whole connection in
//! the harness of `harness/mod.rs` where the connection can show the rule, and on the controller
//! alone (fed exact `AckSample`s, as quiche's `TestSender` does) where the simulator's connection
//! cannot produce the input (an RTT sample on every ACK, as Linux has with timestamps).
//!
//! The expected windows are the kernel's integer arithmetic, written out next to each assertion:
//! beta = 717/1024, cube_factor = 2^40/410 = 2681735677, cube_rtt_scale = 410, beta_scale = 15,
//! HZ = 250 (4 ms jiffies), t = ((jiffies − epoch_start + usecs_to_jiffies(delay_min)) << 10)/HZ.

#[macro_use]
mod harness;

use harness::{Harness, Seg, DATA, MSS};
use tcplab_core::tcp::cc::cubic::{cubic_root, CUBE_FACTOR};
use tcplab_core::tcp::cc::{AckSample, CongestionControl, CongestionEvent, Cubic, LossContext, Window};
use tcplab_core::tcp::config::{Cc, CwndValidation, Limit};
use tcplab_core::tcp::{CaState, TcpConfig, Variant};
use tcplab_core::units::{ms, Time, MS, US};

const INF: u64 = u64::MAX / 4;

fn ack(ack: u64) -> Seg {
    seg!(ack = ack)
}

fn data(k: u64) -> Seg {
    seg!(seq = 1 + (k - 1) * MSS, ..DATA)
}

fn cubic_cfg(c: &mut TcpConfig) {
    c.cc = Cc::Cubic;
}

/// A CUBIC controller alone, MSS 1000.
fn controller() -> Cubic {
    let mut c = harness::cfg();
    c.cc = Cc::Cubic;
    Cubic::new(&c)
}

fn pkts(n: u64) -> u64 {
    n * MSS
}

/// An ACK of `n` packets at `now`, with an RTT sample or not.
fn acked(now: Time, n: u64, rtt: Option<Time>) -> AckSample {
    AckSample { now, acked: n * MSS, rtt, ..Default::default() }
}

fn fast_retransmit() -> CongestionEvent {
    CongestionEvent::FastRetransmit(LossContext::default())
}

// ---------------------------------------------------------------------------------------------
// The loss response and the cubic epoch

/// A loss at W = 100 packets: ssthresh = max(100·717/1024, 2) = 70 (70.02: the kernel's beta is
/// 717/1024, not 0.717), W_max = 100; after recovery the epoch starts at the first ACK in
/// congestion avoidance, and cwnd follows W(t) = C·(t − K)³ + W_max with K from `cubic_root`.
#[test]
fn loss_at_100_packets_then_the_cubic_epoch_on_a_connection() {
    // Reno's recovery ends with cwnd = ssthresh, as Linux's tcp_end_cwnd_reduction does.
    let mut h = Harness::sending(100, |c| {
        c.cc = Cc::Cubic;
        c.variant = Variant::Reno;
    });
    // Segment 1 is lost; three duplicate ACKs: fast retransmit.
    for t in [100, 101, 102] {
        h.send(ms(t), ack(1));
    }
    h.recv(ms(102), [data(1)]);
    let i = h.info();
    // cubictcp_recalc_ssthresh: max(cwnd·beta/1024, 2) = 71700/1024 = 70.
    assert_eq!(i.ssthresh, pkts(70));
    assert_eq!(i.ca_state, CaState::Recovery);
    // The retransmission fills the hole: the ACK ends recovery (RFC 5681 §3.2 step 6) at
    // cwnd = ssthresh.
    h.send(ms(200), ack(1 + pkts(100)));
    assert_eq!(h.info().cwnd, pkts(70));
    assert_eq!(h.info().ca_state, CaState::Open);
    assert_eq!(h.take_sent().len(), 70, "the window refilled at 200 ms");
    // K for W_max − cwnd = 30: cubic_root(2681735677·30 = 80452070310) = 4316 (exact 4316.97),
    // i.e. 4.215 s (in 2^-10 s).
    assert_eq!(cubic_root(CUBE_FACTOR * 30), 4316);
    // One ACK per segment every 1.5 ms from 300 ms (so every later RTT sample is above the first,
    // 100 ms, and delay_min stays 100 ms). The first, at jiffy 75, starts the epoch:
    //   t = ((75 − 75 + usecs_to_jiffies(100000) = 25) << 10) / 250 = 102,
    //   offs = K − t = 4214, delta = 410·4214³ >> 40 = 30680854461040 >> 40 = 27,
    //   target = W_max − delta = 73, cnt = cwnd/(target − cwnd) = 70/3 = 23;
    //   tcp_cong_avoid_ai: snd_cwnd_cnt = 1 < 23, cwnd stays 70.
    // The windows after every 400 ACKs, the same arithmetic ACK by ACK (cnt recomputed when
    // cwnd changes or after HZ/32 = 7 jiffies, W_est = +1 per (cwnd·15) >> 3 packets, cnt ≥ 2):
    // concave up to W_max = 100 (reached after 2000 ACKs, t ≈ 3.3 s), the plateau (cnt =
    // 100·cwnd while target ≤ cwnd), then convex growth after K.
    let want = [81, 89, 94, 98, 100, 100, 100, 100, 100, 102];
    let mut got = Vec::new();
    for i in 0..4000u64 {
        h.send(300 * MS + i * 1500 * US, ack(1 + pkts(101 + i)));
        if i == 0 {
            assert_eq!(h.info().cwnd, pkts(70));
        }
        if (i + 1) % 400 == 0 {
            got.push(h.info().cwnd / MSS);
        }
        h.take_sent();
    }
    assert_eq!(got, want);
    assert_eq!(h.info().ssthresh, pkts(70));
}

/// The same epoch on the controller alone, with the kernel's first-ACK state visible: K, the
/// origin, and W_est starting at cwnd.
#[test]
fn the_epoch_starts_at_the_first_ack_in_avoidance_with_k_from_w_max() {
    let mut cc = controller();
    let mut w = Window { cwnd: pkts(100), ssthresh: INF };
    cc.on_congestion_event(&mut w, fast_retransmit());
    assert_eq!(w.ssthresh, pkts(70));
    assert_eq!(cc.w_max(), 100);
    // No epoch yet: K is computed at the first ACK in congestion avoidance, not at the loss.
    assert_eq!(cc.k(), 0);
    w.cwnd = pkts(70); // the recovery strategy's exit
    cc.on_ack(&mut w, &acked(ms(1000), 1, Some(ms(100))));
    assert_eq!((cc.k(), cc.w_est(), cc.delay_min_us()), (4316, 70, 100_000));
    assert_eq!(w.cwnd, pkts(70));
}

/// CUBIC's clock is the connection's `tcp_jiffies32`: the configuration's `hz` with the phase
/// `jiffy_offset` (the clock of the RTO and the delayed ACK), and 250 Hz where the configuration
/// keeps no jiffies (`hz = 0`). The epoch begins at the jiffy of the first ACK in avoidance, and
/// the curve is the same in seconds at any HZ: t = ((jiffies − epoch_start) << 10)/HZ.
#[test]
fn the_epoch_counts_the_configurations_jiffies() {
    let run = |hz: u32, offset: Time| {
        let mut c = harness::cfg();
        c.cc = Cc::Cubic;
        c.hz = hz;
        c.jiffy_offset = tcplab_core::units::Duration(offset);
        let mut cc = Cubic::new(&c);
        let mut w = Window { cwnd: pkts(100), ssthresh: INF };
        cc.on_congestion_event(&mut w, fast_retransmit());
        w.cwnd = pkts(70);
        // The first ACK in avoidance at 1000.5 ms, then one every 2 ms for 3 s.
        let mut now = ms(1000) + 500 * US;
        cc.on_ack(&mut w, &acked(now, 1, Some(ms(100))));
        let epoch = cc.epoch_start();
        for _ in 0..1500 {
            now += 2 * MS;
            cc.on_ack(&mut w, &acked(now, 1, None));
        }
        (epoch, w.cwnd / MSS)
    };
    let (e0, w0) = run(0, 0);
    assert_eq!(e0, Some(250), "no jiffies configured: 250 Hz, 1000.5 ms is jiffy 250");
    assert_eq!(run(250, 0), (e0, w0));
    // Ticks 3.6 ms early: 1000.5 ms falls in jiffy (1000.5 + 3.6)/4 = 251.
    let (e1, w1) = run(250, 3600 * US);
    assert_eq!(e1, Some(251));
    let (e2, w2) = run(1000, 0);
    assert_eq!(e2, Some(1000));
    let (e3, w3) = run(100, 0);
    assert_eq!(e3, Some(100));
    // The same curve in seconds: the windows 3 s on agree within a packet (70 → about 91).
    assert!(w0 > 85, "{w0}");
    for w in [w1, w2, w3] {
        assert!(w.abs_diff(w0) <= 1, "{w} against {w0} at 250 Hz");
    }
}

/// Fast convergence: a loss below the previous W_max remembers W_max = cwnd·(1024 + 717)/2048.
#[test]
fn fast_convergence_lowers_w_max_when_the_window_did_not_reach_it() {
    let mut cc = controller();
    let mut w = Window { cwnd: pkts(100), ssthresh: INF };
    cc.on_congestion_event(&mut w, fast_retransmit());
    assert_eq!((cc.w_max(), w.ssthresh), (100, pkts(70)));
    // The next loss at 90 < 100: W_max = 90·1741/2048 = 156690/2048 = 76 (76.5), ssthresh =
    // 90·717/1024 = 64530/1024 = 63.
    w.cwnd = pkts(90);
    cc.on_congestion_event(&mut w, fast_retransmit());
    assert_eq!((cc.w_max(), w.ssthresh), (76, pkts(63)));
    // A loss at or above W_max takes cwnd itself: 80 ≥ 76.
    w.cwnd = pkts(80);
    cc.on_congestion_event(&mut w, fast_retransmit());
    assert_eq!((cc.w_max(), w.ssthresh), (80, pkts(56))); // 57360/1024 = 56
    // ssthresh is at least 2 packets: max(2·717/1024 = 1, 2).
    w.cwnd = pkts(2);
    cc.on_congestion_event(&mut w, fast_retransmit());
    assert_eq!(w.ssthresh, pkts(2));
}

/// The Reno-friendly region: at a short RTT, W_est (+1 packet per (cwnd·15) >> 3 acknowledged,
/// α ≈ 0.53; Linux never switches to α = 1) outgrows the cubic curve and sets cnt =
/// cwnd/(W_est − cwnd).
#[test]
fn the_reno_friendly_estimate_leads_at_a_short_rtt() {
    let mut cc = controller();
    let mut w = Window { cwnd: pkts(20), ssthresh: INF };
    cc.on_congestion_event(&mut w, fast_retransmit());
    // ssthresh = 20·717/1024 = 14, W_max = 20.
    assert_eq!(w.ssthresh, pkts(14));
    w.cwnd = pkts(14);
    // RTT 10 ms; one ACK per packet every 0.7 ms from 1 s (jiffy 250). First ACK:
    //   K = cubic_root(2681735677·6 = 16090414062) = 2523 (exact 2524.6),
    //   t = ((0 + usecs_to_jiffies(10000) = 3) << 10)/250 = 12, offs = 2511,
    //   delta = 410·2511³ >> 40 = 5, target = 15, cnt = 14/(15 − 14) = 14.
    cc.on_ack(&mut w, &acked(ms(1000), 1, Some(ms(10))));
    assert_eq!(cc.k(), 2523);
    let mut got = vec![];
    for i in 1..400u64 {
        cc.on_ack(&mut w, &acked(ms(1000) + i * 700 * US, 1, None));
        if (i + 1) % 50 == 0 {
            got.push((w.cwnd / MSS, cc.w_est()));
        }
    }
    // (cwnd, W_est) after every 50 ACKs, the kernel's arithmetic ACK by ACK: W_est gains one
    // packet per (14·15) >> 3 = 26 ACKs at first, and from 100 ACKs on it is ahead of the
    // cubic target (on the plateau below W_max = 20, target ≤ cwnd gives cnt = 100·cwnd) and
    // sets the pace. The cubic curve alone (tcp_friendliness = 0) gives 15, 15, 15, 16, 16, 16,
    // 16, 16 in the same 400 ACKs.
    assert_eq!(got, vec![(15, 14), (16, 16), (17, 17), (19, 19), (21, 21), (22, 22), (23, 24), (24, 24)]);
}

/// The growth cap: at most one packet per two acknowledged (cnt ≥ 2), and 5 % a round trip
/// (cnt ≤ 20) while W_max is unknown.
#[test]
fn growth_is_capped_at_one_packet_per_two_acked() {
    // Far above W_max the cubic target runs away (cnt would be 0 or 1); cnt = 2.
    let mut cc = controller();
    let mut w = Window { cwnd: pkts(10), ssthresh: INF };
    cc.on_congestion_event(&mut w, fast_retransmit()); // W_max 10, ssthresh 7
    w.cwnd = pkts(7);
    cc.on_ack(&mut w, &acked(ms(1000), 1, Some(ms(100))));
    // 20 s later the curve is far above: 410·(t − K)³ >> 40 with t − K ≈ 20·1024 is 2^44·… packets.
    let c0 = w.cwnd / MSS;
    for i in 0..10 {
        cc.on_ack(&mut w, &acked(ms(21_000) + i * MS, 1, None));
    }
    // cnt = 2: 10 packets acknowledged add 5 (tcp_cong_avoid_ai with the credit carried).
    assert_eq!(w.cwnd / MSS - c0, 5);

    // No W_max (a fresh connection leaving slow start at ssthresh = 20): cnt is capped at 20.
    let mut cc = controller();
    let mut w = Window { cwnd: pkts(20), ssthresh: pkts(20) };
    // t = 25 jiffies of delay_min → 102; K = 0, origin = 20; delta = 410·102³ >> 40 = 0;
    // target = 20 = cwnd: cnt = 100·20 = 2000, capped to 20. 20 ACKs add one packet.
    for i in 0..20 {
        cc.on_ack(&mut w, &acked(ms(1000) + i * MS, 1, Some(ms(100))));
    }
    assert_eq!(w.cwnd, pkts(21));
}

/// CA_EVENT_TX_START: after an idle period the epoch moves by the idle time, so the window goes
/// on along the curve where it left off instead of jumping to where the clock has run.
#[test]
fn idle_time_shifts_the_epoch() {
    // `idle`: a pause after 200 ACKs; `tx_start`: whether the controller hears of it.
    let run = |idle: Time, tx_start: bool| {
        let mut cc = controller();
        let mut w = Window { cwnd: pkts(100), ssthresh: INF };
        cc.on_congestion_event(&mut w, fast_retransmit());
        w.cwnd = pkts(70);
        let mut now = ms(1000);
        let mut trace = vec![];
        for i in 0..400u64 {
            if i == 200 && idle > 0 {
                // Nothing in flight for `idle`; data leaves again: tcp_event_data_sent.
                if tx_start {
                    cc.on_congestion_event(&mut w, CongestionEvent::TxStart { now: now + idle, since: now, app_limited: false });
                }
                now += idle;
            }
            now += 2 * MS;
            cc.on_ack(&mut w, &acked(now, 1, (i == 0).then_some(ms(100))));
            trace.push(w.cwnd / MSS);
        }
        trace
    };
    let busy = run(0, false);
    // Six seconds idle (1500 jiffies: the shift is exact). With the epoch shifted, the window
    // goes on along the curve where it left off: the same windows, give or take the ACK at
    // which `cnt` is next recomputed (once per HZ/32 jiffies while cwnd is unchanged; the pause
    // forces one at once), which moves one increase by one ACK.
    let shifted = run(ms(6000), true);
    assert_eq!(shifted[..201], busy[..201]);
    assert!(shifted.iter().zip(&busy).all(|(a, b)| a.abs_diff(*b) <= 1), "{shifted:?}\n{busy:?}");
    assert_eq!(shifted[399], busy[399]);
    // Without the shift the curve would have run on by 6 s, past K = 4.2 s into its convex part:
    // cnt falls to the floor of 2 and cwnd grows by one packet per two ACKs after the pause.
    let unshifted = run(ms(6000), false);
    assert!(unshifted[399] >= busy[399] + 15, "{unshifted:?}");
}

// ---------------------------------------------------------------------------------------------
// Timeouts

/// tcp_enter_loss: ssthresh from cubictcp_recalc_ssthresh, cwnd one packet, then TCP_CA_Loss:
/// `bictcp_reset` forgets W_max; a repeated expiry keeps ssthresh.
#[test]
fn a_timeout_forgets_w_max() {
    let mut cc = controller();
    let mut w = Window { cwnd: pkts(100), ssthresh: INF };
    cc.on_congestion_event(&mut w, fast_retransmit());
    assert_eq!(cc.w_max(), 100);
    w.cwnd = pkts(80);
    let to = |first| CongestionEvent::Timeout { ctx: LossContext::default(), first, reduced_in_window: false, inflation: 0 };
    cc.on_congestion_event(&mut w, to(true));
    // 80·717/1024 = 57360/1024 = 56.
    assert_eq!((w.cwnd, w.ssthresh, cc.w_max(), cc.delay_min_us()), (pkts(1), pkts(56), 0, 0));
    w.cwnd = pkts(4);
    cc.on_congestion_event(&mut w, to(false));
    assert_eq!((w.cwnd, w.ssthresh), (pkts(1), pkts(56)));
    // In fast recovery (the window already reduced in this window of data) ssthresh is kept:
    // tcp_enter_loss recomputes it only from Open or Disorder.
    let mut cc = controller();
    let mut w = Window { cwnd: pkts(100), ssthresh: INF };
    cc.on_congestion_event(&mut w, fast_retransmit());
    w.cwnd = pkts(73);
    cc.on_congestion_event(&mut w, CongestionEvent::Timeout { ctx: LossContext::default(), first: true, reduced_in_window: true, inflation: 0 });
    assert_eq!((w.cwnd, w.ssthresh), (pkts(1), pkts(70)));
}

/// On a connection: an RTO with 100 packets outstanding gives ssthresh 70 and cwnd 1.
#[test]
fn an_rto_on_a_connection() {
    let mut h = Harness::sending(100, cubic_cfg);
    // The rfc profile's initial RTO: 1 s. Nothing comes back.
    h.advance_to(ms(1000));
    h.recv(ms(1000), [data(1)]);
    let i = h.info();
    assert_eq!((i.cwnd, i.ssthresh, i.ca_state), (pkts(1), pkts(70), CaState::Loss));
}

// ---------------------------------------------------------------------------------------------
// HyStart (hystart_update)

/// The ACK train: ACKs at most 2 ms apart that reach more than (delay_min +
/// hystart_ack_delay)/2 past the round's start end slow start: ssthresh = cwnd. Unpaced, the
/// threshold is halved; hystart_ack_delay is min(1 ms, sk_gso_max_size · 4 / pacing rate), the
/// whole millisecond at this connection's pacing rate (2 · 115 packets / 100 ms = 2.3 MB/s).
#[test]
fn hystart_ack_train_ends_slow_start() {
    let mut h = Harness::sending(64, cubic_cfg);
    // The first ACK at 100 ms carries the RTT of segment 1: delay_min = 100 ms. It starts a
    // round (round_start = last_ack = 100 ms; end_seq = what has been sent, 64 packets).
    h.send(ms(100), ack(1 + MSS));
    assert_eq!(h.info().cwnd, pkts(65));
    // One ACK a millisecond: each is within 2 ms of the last, so the train goes on.
    for k in 2..=51u64 {
        h.send(ms(100 + k - 1), ack(1 + pkts(k)));
    }
    assert_eq!((h.info().cwnd, h.info().ssthresh), (pkts(115), INF));
    // At 150.5 ms, now − round_start = 50.5 ms is not more than (100 + 1)/2 = 50.5 ms: still
    // slow start (without hystart_ack_delay, 50.5 > 50 would have ended it).
    h.send(ms(150) + 500 * US, ack(1 + pkts(52)));
    assert_eq!((h.info().cwnd, h.info().ssthresh), (pkts(116), INF));
    // At 150.501 ms, 50.501 > 50.5: HyStart found the exit; ssthresh = cwnd = 116 packets. The
    // same ACK is then counted in congestion avoidance: W_max unknown, target = origin = 116,
    // cnt = 100·116 capped at 20; snd_cwnd_cnt = 1: no growth.
    h.send(ms(150) + 501 * US, ack(1 + pkts(53)));
    assert_eq!((h.info().cwnd, h.info().ssthresh), (pkts(116), pkts(116)));
    h.send(ms(152), ack(1 + pkts(54)));
    assert_eq!(h.info().cwnd, pkts(116), "congestion avoidance now");
}

/// `hystart_ack_delay` below its 1 ms cap: at a pacing rate of 2 · 1000 packets of 1000 B per
/// 1 ms of SRTT (2·10⁹ B/s) it is sk_gso_max_size · 4 / rate = 65215 · 4 · 10⁶ / (2·10⁹) = 130 µs.
/// In a train of ACKs 1 µs apart from delay_min = 1 ms, cwnd grows one packet an ACK, so at the
/// ACK k µs after the round's start the rate is 2·10⁶ · (1000 + k) B/s, the delay
/// ⌊260,860 / (2 · (1000 + k))⌋ µs and the threshold (1000 + delay) >> 1: 542 µs at k = 542
/// (delay 84) and at k = 543 (delay 84), which is the first beyond it. With no SRTT (no pacing
/// rate) the delay is 0 and the threshold 500 µs.
#[test]
fn hystart_ack_delay_follows_the_pacing_rate_below_its_cap() {
    use tcplab_core::tcp::cc::cubic::hystart_ack_delay_us;
    assert_eq!(hystart_ack_delay_us(Some(2_000_000_000)), 130);
    assert_eq!(hystart_ack_delay_us(Some(2_300_000)), 1000);
    assert_eq!(hystart_ack_delay_us(None), 0);
    // One train on the controller alone: delay_min 1 ms from the first ACK, ACKs 1 µs apart.
    fn train(srtt: Option<Time>, last_us: u64) -> u64 {
        let mut cc = controller();
        let mut w = Window { cwnd: pkts(1000), ssthresh: INF };
        let t0 = ms(10);
        let mut delivered = MSS;
        let first = AckSample { now: t0, acked: MSS, rtt: Some(ms(1)), delivered, in_flight: pkts(1000), srtt, ..Default::default() };
        cc.on_ack(&mut w, &first);
        for us in 1..=last_us {
            delivered += MSS;
            let a = AckSample { now: t0 + us * US, acked: MSS, delivered, in_flight: pkts(1000), srtt, ..Default::default() };
            cc.on_ack(&mut w, &a);
            if w.ssthresh != INF {
                return us;
            }
        }
        0
    }
    assert_eq!(train(Some(ms(1)), 700), 543, "threshold (1000 + 84) >> 1 = 542 µs at k = 543");
    assert_eq!(train(None, 700), 501, "threshold 1000 >> 1 = 500 µs");
}

/// A gap of more than 2 ms breaks the train for the rest of the round (last_ack is not moved).
#[test]
fn hystart_ack_train_needs_close_acks() {
    let mut h = Harness::sending(64, cubic_cfg);
    h.send(ms(100), ack(1 + MSS));
    // ACKs 3 ms apart: none counts as part of a train.
    for k in 2..=40u64 {
        h.send(ms(100 + 3 * (k - 1)), ack(1 + pkts(k)));
    }
    assert_eq!((h.info().cwnd, h.info().ssthresh), (pkts(104), INF));
}

/// The delay detector, which needs an RTT sample on each ACK (Linux with timestamps; tcplab's
/// sender times one segment per round trip, so only the controller shows it): with at least 8
/// samples in a round, a round minimum above delay_min + clamp(delay_min/8, 4 ms, 16 ms) ends
/// slow start. Below HyStart's low window (16 packets) it does not run.
#[test]
fn hystart_delay_increase_ends_slow_start() {
    fn step(cc: &mut Cubic, w: &mut Window, delivered: &mut u64, now: Time, rtt: Time) {
        *delivered += MSS;
        let a = AckSample { now, acked: MSS, rtt: Some(rtt), delivered: *delivered, in_flight: w.cwnd, ..Default::default() };
        cc.on_ack(w, &a);
    }
    let mut cc = controller();
    let mut w = Window { cwnd: pkts(20), ssthresh: INF };
    let mut delivered = 0;
    // Round 1 (ACKs 5 ms apart: no ACK train): RTT 100 ms, delay_min = 100 ms. The first ACK
    // starts the round, which ends when delivered passes 1 + 20 packets.
    for i in 0..21 {
        step(&mut cc, &mut w, &mut delivered, ms(100) + i * 5 * MS, ms(100));
    }
    assert_eq!(w.ssthresh, INF);
    // Round 2: every RTT 113 ms > 100 + clamp(100/8 = 12.5, 4, 16) = 112.5 ms. The first 8
    // samples are collected; the 9th decides: ssthresh = cwnd at that ACK.
    let t0 = ms(100) + 21 * 5 * MS;
    for i in 0..8 {
        step(&mut cc, &mut w, &mut delivered, t0 + i * 5 * MS, ms(113));
        assert_eq!(w.ssthresh, INF, "sample {i}");
    }
    let before = w.cwnd;
    step(&mut cc, &mut w, &mut delivered, t0 + 8 * 5 * MS, ms(113));
    assert_eq!(w.ssthresh, before);
    assert!(cc.hystart_found());

    // 112 ms (not above 112.5) does not fire.
    let mut cc = controller();
    let mut w = Window { cwnd: pkts(20), ssthresh: INF };
    delivered = 0;
    for i in 0..21 {
        step(&mut cc, &mut w, &mut delivered, ms(100) + i * 5 * MS, ms(100));
    }
    for i in 0..30 {
        step(&mut cc, &mut w, &mut delivered, t0 + i * 5 * MS, ms(112));
    }
    assert_eq!(w.ssthresh, INF);
    assert!(!cc.hystart_found());
}

// ---------------------------------------------------------------------------------------------
// Idle restart

/// A connection that grew to 40 packets and then sat idle for 1.5 RTO: RFC 5681 §4.1 restarts
/// from RW = min(IW, cwnd) = 10; Linux's tcp_cwnd_restart halves once per RTO elapsed (one
/// here: 40 → 20, never below 10) and raises ssthresh to ¾·cwnd = 30.
#[test]
fn restart_after_idle_rfc5681_and_linux() {
    let run = |cc: Cc, v: CwndValidation| {
        let mut h = Harness::established(|c| {
            c.cc = cc;
            c.cwnd_validation = v;
            c.initial_window = tcplab_core::tcp::InitialWindow::Segments(10);
            c.initial_ssthresh = Limit::Bytes(tcplab_core::units::Size(pkts(1000)));
        });
        h.write(0, pkts(70));
        assert_eq!(h.take_sent().len(), 10);
        // One ACK per segment, 10 ms apart (no ACK train): slow start from 10 to 40 packets.
        let mut t = ms(100);
        for k in 1..=30u64 {
            h.send(t, ack(1 + pkts(k)));
            t += 10 * MS;
        }
        assert_eq!(h.info().cwnd, pkts(40));
        h.take_sent();
        // The last 40 segments acknowledged by one ACK: Reno (abc = 0) adds one segment for the
        // ACK, 41; CUBIC's tcp_slow_start adds the packets acknowledged, 80.
        h.send(t, ack(1 + pkts(70)));
        let cwnd = h.info().cwnd;
        let rto = h.info().rto;
        // Idle 1.5 RTO, then the application writes again.
        let back = t + rto * 3 / 2;
        h.write(back, pkts(100));
        let sent = h.take_sent().len() as u64;
        (cwnd / MSS, h.info().cwnd / MSS, h.info().ssthresh / MSS, sent)
    };
    // RFC 5681 §4.1: RW = min(IW, cwnd) = 10, for either controller.
    assert_eq!(run(Cc::Reno, CwndValidation::Rfc5681), (41, 10, 1000, 10));
    assert_eq!(run(Cc::Cubic, CwndValidation::Rfc5681), (80, 10, 1000, 10));
    // Linux: idle − RTO = RTO/2 > 0 halves once, idle − 2·RTO < 0 stops: 80 → 40 (41 → 20);
    // ssthresh = max(1000, ¾·80 = 60) = 1000.
    assert_eq!(run(Cc::Cubic, CwndValidation::Linux), (80, 40, 1000, 40));
    assert_eq!(run(Cc::Reno, CwndValidation::Linux), (41, 20, 1000, 20));
}

/// tcp_cwnd_restart's loop: `while ((delta -= rto) > 0 && cwnd > restart) cwnd >>= 1`, then
/// cwnd = max(cwnd, restart); ssthresh = max(ssthresh, (cwnd >> 1) + (cwnd >> 2)).
#[test]
fn linux_restart_halves_once_per_rto() {
    let rto = ms(300);
    let go = |cwnd: u64, ssthresh: u64, idle: Time| {
        let mut w = Window { cwnd: pkts(cwnd), ssthresh: pkts(ssthresh) };
        tcplab_core::tcp::cc::linux_cwnd_restart(&mut w, pkts(10), MSS, idle, rto);
        (w.cwnd / MSS, w.ssthresh / MSS)
    };
    // delta = 301 ms: 301 − 300 = 1 > 0: one halving, 64 → 32; ssthresh max(20, 32 + 16 = 48).
    assert_eq!(go(64, 20, ms(301)), (32, 48));
    // Exactly two RTOs: 600 − 300 = 300 > 0 halves, 300 − 300 = 0 stops: 32.
    assert_eq!(go(64, 20, ms(600)), (32, 48));
    // Ten RTOs: 64 → 32 → 16 → 8, then cwnd = max(8, restart 10) = 10.
    assert_eq!(go(64, 20, ms(3000)), (10, 48));
    // Below the restart window nothing changes: min(IW, cwnd) = 6.
    assert_eq!(go(6, 100, ms(3000)), (6, 100));
}

/// Linux's application-limited decay (`tcp_cwnd_validate` → `tcp_cwnd_application_limited`,
/// RFC 2861 §3), with `cwnd_validation = "linux"`: once an RTO has passed since `snd_cwnd_stamp`
/// while the window does not limit the sender, cwnd = (cwnd + max(used, IW))/2. Every ACK that
/// may raise the window restarts that clock (`tcp_cong_avoid`: "tcp_sk(sk)->snd_cwnd_stamp =
/// tcp_jiffies32", whether the window grows or not), so a sender whose ACKs keep coming keeps
/// its window; one that keeps sending while no ACK of new data comes for an RTO loses half of
/// what it does not use. `rfc5681` keeps the window either way.
#[test]
fn an_unused_window_decays_once_an_rto_passes_without_an_ack_that_may_raise_it() {
    // `acks`: each round's 5 segments are acknowledged 50 ms later; otherwise no ACK comes.
    let run = |cc: Cc, v: CwndValidation, acks: bool| {
        let mut h = Harness::established(|c| {
            c.cc = cc;
            c.cwnd_validation = v;
            c.initial_window = tcplab_core::tcp::InitialWindow::Segments(10);
            c.initial_ssthresh = Limit::Bytes(tcplab_core::units::Size(pkts(1000)));
        });
        // Bulk first: 70 segments, one ACK each 10 ms apart: slow start 10 → 40.
        h.write(0, pkts(70));
        let mut t = ms(100);
        for k in 1..=30u64 {
            h.send(t, ack(1 + pkts(k)));
            t += 10 * MS;
        }
        h.send(t, ack(1 + pkts(70)));
        let grown = h.info().cwnd / MSS;
        h.take_sent();
        // Then a segment every 25 ms from 100 ms on, 38 of them (the last 1,025 ms after that
        // ACK: before the RTO of the first, 1 s after it, would fire without ACKs).
        let mut acked = 70;
        let mut trace = vec![];
        let start = t + 100 * MS;
        for round in 0..38u64 {
            let t0 = start + round * 25 * MS;
            h.write(t0, pkts(1));
            assert_eq!(h.take_sent().len(), 1);
            trace.push(h.info().cwnd / MSS);
            if acks {
                acked += 1;
                h.send(t0 + 20 * MS, ack(1 + pkts(acked)));
            }
        }
        (grown, h.info().rto, h.info().ssthresh / MSS, trace)
    };
    for acks in [true, false] {
        let (grown, rto, ssthresh, rfc) = run(Cc::Cubic, CwndValidation::Rfc5681, acks);
        assert_eq!((grown, rto, ssthresh), (80, tcplab_core::units::SEC, 1000));
        assert!(rfc.iter().all(|&c| c == 80), "{rfc:?}");
    }
    // ACKs every 25 ms: the stamp never falls an RTO (1 s, the rfc profile's minimum) behind.
    let (_, _, _, linux) = run(Cc::Cubic, CwndValidation::Linux, true);
    assert!(linux.iter().all(|&c| c == 80), "{linux:?}");
    // No ACK after the bulk phase's last (its tcp_cong_avoid set the stamp): the send 1 s after
    // it (round 36, 37 segments out) halves the window toward what is used: (80 + 37)/2 = 58;
    // ssthresh stays 1000 (above ¾·cwnd).
    let (_, _, ssthresh, linux) = run(Cc::Cubic, CwndValidation::Linux, false);
    assert!(linux[..36].iter().all(|&c| c == 80), "{linux:?}");
    assert_eq!(linux[36..], [58, 58]);
    assert_eq!(ssthresh, 1000);
    // Reno's window (41 after the bulk phase: one segment per ACK) is still in slow start, where
    // it counts as used while cwnd < 2·max_packets_out (`tcp_is_cwnd_limited`; from 21 segments
    // out): each send from round 20 on restarts the clock, and nothing decays.
    let (grown, _, _, reno) = run(Cc::Reno, CwndValidation::Linux, false);
    assert_eq!(grown, 41);
    assert!(reno.iter().all(|&c| c == 41), "{reno:?}");
}
