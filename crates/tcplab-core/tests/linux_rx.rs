//! Linux 6.x's receiver (`delack_model = "linux"`) and timers (`rto_model = "linux"`, `hz`) on the
//! whole-connection harness: exact segments in at exact times, exact ACKs out. Each test names
//! the kernel function it checks (net/ipv4/tcp_input.c, tcp_output.c, tcp_timer.c;
//! kernel/time/timer.c for the timer wheel). HZ is 250: a jiffy is 4 ms, TCP_ATO_MIN 10 jiffies,
//! TCP_DELACK_MAX 50.

#[macro_use]
mod harness;

use harness::{Harness, Seg, DATA, MSS};
use tcplab_core::net::{FLAG_ACK, FLAG_FIN, FLAG_SYN};
use tcplab_core::tcp::linux_ack::FLAG_PSH;
use tcplab_core::tcp::config::{DelackModel, RtoModel};
use tcplab_core::tcp::{TcpConfig, TimerKind};
use tcplab_core::units::{ms, us, SEC};

fn linux(c: &mut TcpConfig) {
    c.rto_model = RtoModel::Linux;
    c.hz = 250;
    c.delack_model = DelackModel::Linux;
    c.comp_sack_nr = 44;
    c.rto_min = tcplab_core::units::Duration(ms(200));
    c.rto_max = tcplab_core::units::Duration(120 * SEC);
}

/// The peer's data segment `k` (1-based).
fn peer_data(k: u64) -> Seg {
    seg!(seq = 1 + (k - 1) * MSS, ..DATA)
}

fn ack(a: u64) -> Seg {
    seg!(ack = a)
}

/// An ACK of `a` with one SACK block [l, r).
fn sack_ack(a: u64, l: u64, r: u64) -> Seg {
    let blocks: &'static [(u64, u64)] = Box::leak(vec![(l, r)].into_boxed_slice());
    Seg { ack: a, sack: blocks, ..harness::SEG }
}

/// A receiver past its quick-ACK phase: segments 1..=16 arrive 1 ms apart and each is
/// acknowledged at once (the first data segment sets quick = min(rcv_wnd / (2·rcv_mss), 16)).
fn past_quickack(h: &mut Harness) {
    for k in 1..=16 {
        h.send(ms(k), peer_data(k));
        h.recv(ms(k), [ack(1 + k * MSS)]);
    }
    assert_eq!(h.conn.rcv.linux.as_ref().unwrap().quick, 0);
}

/// A passive opener whose handshake took `rtt` (its send half's SRTT, which bounds the ATO in
/// tcp_send_delayed_ack() and sets the SACK-compression delay).
fn server_with_rtt(rtt: u64) -> Harness {
    let mut c = harness::cfg();
    linux(&mut c);
    c.sack = true;
    c.handshake = true;
    c.fin = false;
    let mut h = Harness::server(c);
    h.send(0, seg!(seq = 0, flags = FLAG_SYN, sack_permitted = true));
    h.recv(0, [seg!(seq = 0, ack = 1, flags = FLAG_SYN | FLAG_ACK, opt_len = 8, sack_permitted = true)]);
    h.send(rtt, seg!(seq = 1, ack = 1));
    h.recv_nothing();
    assert_eq!(h.conn.snd.core.rtt.srtt(), Some(rtt));
    h
}

/// tcp_event_data_recv(): the first data segment starts quick-ACK mode (tcp_incr_quickack, 16 at
/// most: TCP_MAX_QUICKACKS); tcp_dec_quickack_mode() spends one per ACK. Then __tcp_ack_snd_check
/// ACKs when more than one receive MSS is unacknowledged, i.e. every second full segment.
#[test]
fn quickack_for_the_first_16_segments_then_every_second() {
    let mut h = Harness::established(linux);
    past_quickack(&mut h);
    h.send(ms(17), peer_data(17));
    h.recv_nothing();
    // tcp_send_delayed_ack(): ato = TCP_ATO_MIN (10 jiffies) from jiffy 4 → expires 14, a level-0
    // timer of the wheel, run at jiffy 15 = 60 ms.
    assert_eq!(h.deadline(TimerKind::DelAck), Some(ms(60)));
    h.send(ms(18), peer_data(18));
    h.recv(ms(18), [ack(1 + 18 * MSS)]);
    assert_eq!(h.deadline(TimerKind::DelAck), None);
    h.send(ms(19), peer_data(19));
    h.recv_nothing();
    h.send(ms(19) + us(500), peer_data(20));
    h.recv(ms(19) + us(500), [ack(1 + 20 * MSS)]);
}

/// tcp_delack_timer_handler(): a delayed ACK that times out doubles the ATO ("Delayed ACK missed:
/// inflate ATO", at most the RTO); tcp_event_data_recv() keeps it when segments come further
/// apart than it; tcp_send_delayed_ack() caps it at TCP_DELACK_MAX (icsk_delack_max).
#[test]
fn delayed_ack_timeout_inflates_the_ato() {
    let mut h = Harness::established(linux);
    past_quickack(&mut h);
    h.send(ms(20), peer_data(17));
    // ato: gap 1 jiffy ≤ TCP_ATO_MIN/2: 10/2 + 5 = 10; set at jiffy 5, run at jiffy 16.
    assert_eq!(h.deadline(TimerKind::DelAck), Some(ms(64)));
    h.recv(ms(64), [ack(1 + 17 * MSS)]);
    assert_eq!(h.conn.rcv.stats.delack_timeouts, 1);
    assert_eq!(h.conn.rcv.linux.as_ref().unwrap().ato, 20);
    // 45 jiffies later: m ≥ ato and ≤ RTO (1 s, unseeded): ato stays 20 → expires 70, run at 71.
    h.send(ms(200), peer_data(18));
    assert_eq!(h.deadline(TimerKind::DelAck), Some(71 * ms(4)));
    h.recv(71 * ms(4), [ack(1 + 18 * MSS)]);
    // Doubled again: 40, then 80 → capped at TCP_DELACK_MAX = 50 jiffies when the timer is set.
    assert_eq!(h.conn.rcv.linux.as_ref().unwrap().ato, 40);
    h.send(ms(600), peer_data(19));
    h.recv(ms(600) + 41 * ms(4), [ack(1 + 19 * MSS)]);
    assert_eq!(h.conn.rcv.linux.as_ref().unwrap().ato, 80);
    h.send(ms(1200), peer_data(20));
    assert_eq!(h.deadline(TimerKind::DelAck), Some(ms(1200) + 51 * ms(4)));
}

/// tcp_send_delayed_ack(): "If some rtt estimate is known, use it to bound delayed ack":
/// ato ≤ max(usecs_to_jiffies(srtt), TCP_DELACK_MIN).
#[test]
fn the_ato_is_bounded_by_srtt() {
    let mut h = server_with_rtt(ms(60));
    for k in 1..=16 {
        h.send(ms(100) + ms(k), peer_data(k));
        h.recv(ms(100) + ms(k), [ack(1 + k * MSS)]);
    }
    // RTO = 60 + max(2·60, 200) ms = 260 ms = 65 jiffies. Segments 200 ms apart (more than
    // the ATO, less than the RTO) each wait for the timer, which doubles the ATO: 10 → 20 → 40 →
    // min(80, RTO) = 65 jiffies.
    assert_eq!(h.conn.snd.core.rtt.rto(), ms(260));
    h.send(ms(200), peer_data(17));
    // ato 10 = TCP_DELACK_MIN is not bounded: jiffy 50 + 10, run at 61.
    assert_eq!(h.deadline(TimerKind::DelAck), Some(61 * ms(4)));
    h.recv(61 * ms(4), [ack(1 + 17 * MSS)]);
    for (k, ato_after) in [(18u64, 40u64), (19, 65), (20, 65)] {
        let t = ms(200) * (k - 16);
        h.send(t, peer_data(k));
        // ato > TCP_DELACK_MIN: bounded by max(usecs_to_jiffies(srtt), TCP_DELACK_MIN) = 15
        // jiffies (60 ms): expires at jiffy t/4 ms + 15, run one jiffy later.
        assert_eq!(h.deadline(TimerKind::DelAck), Some(t + 16 * ms(4)), "segment {k}");
        h.recv(t + 16 * ms(4), [ack(1 + k * MSS)]);
        assert_eq!(h.conn.rcv.linux.as_ref().unwrap().ato, ato_after, "segment {k}");
    }
}

/// __tcp_ack_snd_check(): an out-of-order segment finds data above a hole and, with SACK, the
/// first TCP_FASTRETRANS_THRESH duplicate ACKs for one rcv_nxt go at once; later ones are
/// compressed for min(tcp_comp_sack_delay_ns = 1 ms, 5 % of the RTT) into one ACK, sent at the
/// end of the hrtimer's range (`hrtimer_start_range_ns` with tcp_comp_sack_slack_ns = 100 µs).
#[test]
fn sack_compression_after_the_third_duplicate_ack() {
    let mut h = server_with_rtt(ms(10));
    for k in 1..=16 {
        h.send(ms(20) + ms(k), peer_data(k));
        h.recv(ms(20) + ms(k), [ack(1 + k * MSS)]);
    }
    let t = ms(100);
    let top = 1 + 16 * MSS;
    for (i, k) in (18..=20).enumerate() {
        h.send(t + us(i as u64 * 10), peer_data(k));
        h.recv(t + us(i as u64 * 10), [sack_ack(top, top + MSS, 1 + k * MSS)]);
    }
    // The fourth and fifth: compressed; 5 % of 10 ms = 500 µs after the fourth, plus the
    // 100 µs slack.
    h.send(t + us(30), peer_data(21));
    h.send(t + us(40), peer_data(22));
    h.recv_nothing();
    h.recv(t + us(629), []);
    h.recv(t + us(630), [sack_ack(top, top + MSS, 1 + 22 * MSS)]);
    // The hole filled: ICSK_ACK_NOW ("SHOULD send immediate ACK, when gap in queue is filled").
    h.send(t + ms(1), peer_data(17));
    h.recv(t + ms(1), [ack(1 + 22 * MSS)]);
}

/// Without SACK there is nothing to compress: every out-of-order segment is acknowledged at once
/// (`!tcp_is_sack(tp)` → send_now).
#[test]
fn without_sack_every_out_of_order_segment_is_acked() {
    let mut h = Harness::established(|c| {
        linux(c);
        c.sack = false;
        c.comp_sack_nr = 44;
    });
    past_quickack(&mut h);
    for k in 18..=24 {
        h.send(ms(20) + ms(k), peer_data(k));
        h.recv(ms(20) + ms(k), [ack(1 + 16 * MSS)]);
    }
}

/// tcp_data_queue() / tcp_send_dupack(): an old (duplicate) segment is acknowledged at once and
/// re-enters quick-ACK mode (tcp_enter_quickack_mode), so the next segments are ACKed one by one.
#[test]
fn a_duplicate_segment_reenters_quickack_mode() {
    let mut h = Harness::established(linux);
    past_quickack(&mut h);
    h.send(ms(20), peer_data(10));
    h.recv(ms(20), [ack(1 + 16 * MSS)]);
    let l = h.conn.rcv.linux.as_ref().unwrap();
    // The duplicate's own ACK spent one of the 16.
    assert_eq!((l.quick, l.ato), (15, 10));
    h.send(ms(21), peer_data(17));
    h.recv(ms(21), [ack(1 + 17 * MSS)]);
}

/// tcp_event_data_recv(): "Too long gap. Apparently sender failed to restart window, so that we
/// send ACKs quickly": data after a silence longer than the RTO restarts quick-ACK mode.
#[test]
fn data_after_an_idle_longer_than_the_rto_is_quickacked() {
    let mut h = Harness::established(linux);
    past_quickack(&mut h);
    // RTO unseeded: 1 s = 250 jiffies. 1.2 s of silence.
    h.send(ms(1216), peer_data(17));
    h.recv(ms(1216), [ack(1 + 17 * MSS)]);
    assert_eq!(h.conn.rcv.linux.as_ref().unwrap().quick, 15, "16 quick ACKs again, one spent");
    // A silence shorter than the RTO does not (after those 15).
    for k in 18..=32 {
        h.send(ms(1300 + k), peer_data(k));
        h.recv(ms(1300 + k), [ack(1 + k * MSS)]);
    }
    h.send(ms(1333) + ms(900), peer_data(33));
    h.recv_nothing();
}

/// tcp_measure_rcv_mss(): the receive MSS starts at min(advmss, 536) (tcp_initialize_rcv_mss) and
/// follows the largest segment; a shorter segment is the end of a write (ICSK_ACK_PUSHED), and the
/// application's read of it sends the ACK (tcp_cleanup_rbuf).
#[test]
fn receive_mss_is_measured_and_a_short_segment_is_acked_when_read() {
    let mut h = Harness::established(linux);
    assert_eq!(h.conn.rcv.linux.as_ref().unwrap().rcv_mss, 536);
    past_quickack(&mut h);
    assert_eq!(h.conn.rcv.linux.as_ref().unwrap().rcv_mss, MSS);
    h.send(ms(20), seg!(seq = 1 + 16 * MSS, len = 300));
    h.recv(ms(20), [ack(1 + 16 * MSS + 300)]);
    // 6.x: "If the skb has a len of exactly 1*MSS and has the PSH bit set then it is likely the
    // end of an application write": pushed too (a capture's PSH, replayed).
    h.send(ms(21), seg!(seq = 1 + 16 * MSS + 300, len = 1000, flags = FLAG_ACK | FLAG_PSH));
    h.recv(ms(21), [ack(1 + 17 * MSS + 300)]);
    // A full segment without it waits as usual.
    h.send(ms(22), seg!(seq = 1 + 17 * MSS + 300, len = 1000));
    h.recv_nothing();
}

/// tcp_initialize_rcv_mss() and tcp_measure_rcv_mss() at a small MSS with timestamps: the
/// receive MSS starts at min(advmss, mss_cache, TCP_MSS_DEFAULT) with both the payload of a full
/// segment (MSS 536 less the 12 option bytes: 524), so 524-byte segments are full ones: 16 quick
/// ACKs, then one ACK every second segment. Taking 536 (the MSS with the options) made every
/// segment "short", pushed (ICSK_ACK_PUSHED), and acknowledged on its own by the read; the
/// kernel's capture at MSS 536 (50 Mb/s, 40 ms) ACKs every second one after the 16th. The
/// careful check counts the header too: 524 + 20 + 12 ≥ TCP_MSS_DEFAULT + 20, so two such
/// segments in a row set rcv_mss whatever it started at.
#[test]
fn small_mss_with_timestamps_receive_mss_is_the_payload() {
    const SMALL: u64 = 524;
    let mut h = Harness::established(|c| {
        linux(c);
        c.mss = tcplab_core::units::Size(536);
        c.timestamps = true;
    });
    assert_eq!(h.conn.rcv.linux.as_ref().unwrap().rcv_mss, SMALL);
    let data = |k: u64| seg!(seq = 1 + (k - 1) * SMALL, len = SMALL as u32);
    let mut acks = Vec::new();
    for k in 1..=24u64 {
        h.send(ms(k), data(k));
        acks.extend(h.take_sent().into_iter().map(|(_, a)| a.ack));
    }
    let want: Vec<u64> = (1..=16u64).chain([18, 20, 22, 24]).map(|k| 1 + k * SMALL).collect();
    assert_eq!(acks, want);
    assert_eq!(h.conn.rcv.linux.as_ref().unwrap().rcv_mss, SMALL);
}

/// tcp_data_queue_ofo() → tcp_sack_new_ofo_skb(sk, seq, end_seq): an out-of-order skb's end_seq
/// counts its FIN, so the SACK block of a last data segment with FIN above a hole covers the FIN's
/// sequence number. The sender then holds that segment SACKed whole: the kernel's capture of a
/// 200 KB transfer with its third-last segment dropped SACKs up to 204802 (the FIN), its
/// sacked_out reaches 3 and RACK retransmits at once; a block stopping at the data's end left the
/// simulated sender two segments SACKed and waiting for its reordering timer (17 ms later).
#[test]
fn a_sack_block_covers_a_held_fin() {
    let mut h = Harness::established(|c| {
        linux(c);
        c.sack = true;
    });
    past_quickack(&mut h);
    // Segment 17 lost; 18 and then 19 with FIN arrive.
    h.send(ms(20), peer_data(18));
    h.recv(ms(20), [sack_ack(1 + 16 * MSS, 1 + 17 * MSS, 1 + 18 * MSS)]);
    h.send(ms(21), seg!(seq = 1 + 18 * MSS, flags = FLAG_ACK | FLAG_FIN, ..DATA));
    h.recv(ms(21), [sack_ack(1 + 16 * MSS, 1 + 17 * MSS, 1 + 19 * MSS + 1)]);
    // The hole filled: the data and the FIN are acknowledged.
    h.send(ms(22), peer_data(17));
    let sent = h.take_sent();
    assert_eq!(sent.last().map(|(_, a)| a.ack), Some(1 + 19 * MSS + 1), "{sent:?}");
}

/// The RTO timer on jiffies: TCP_TIMEOUT_INIT (250 jiffies) is a level-1 timer of the wheel,
/// rounded up to 8 jiffies (1.024 s); after a 100 ms sample the RTO is srtt + max(2·srtt, rto_min)
/// = 300 ms (75 jiffies), re-armed at jiffy 25 for jiffy 100 → bucket 104.
#[test]
fn rto_timer_runs_on_the_timer_wheel() {
    let mut h = Harness::sending(2, linux);
    assert_eq!(h.deadline(TimerKind::Rto), Some(ms(1024)));
    h.send(ms(100), ack(1 + MSS));
    assert_eq!(h.info().rto, ms(300));
    assert_eq!(h.deadline(TimerKind::Rto), Some(ms(416)));
    assert_eq!(h.info().srtt, Some(ms(100)));
}
