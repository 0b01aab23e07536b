//! Pacing as Linux does it inside TCP (`tcp/pacing.rs`): the rate of `tcp_update_pacing_rate`
//! (net/ipv4/tcp_input.c) shown in `info().pacing_rate` whether or not the connection paces, and,
//! with `pacing = true`, departures spaced by len/rate (`tcp_update_skb_after_send`,
//! net/ipv4/tcp_output.c) in skbs of `tcp_tso_autosize` segments, a held send waiting for the
//! pacing timer (`tcp_pacing_check`).

#[macro_use]
mod harness;

use harness::{Harness, Seg, DATA, MSS};
use tcplab_core::tcp::TimerKind;
use tcplab_core::units::{ms, Time};

fn ack(ack: u64) -> Seg {
    seg!(ack = ack)
}

fn data(k: u64) -> Seg {
    seg!(seq = 1 + (k - 1) * MSS, ..DATA)
}

/// `tcp_update_pacing_rate`: mss · max(cwnd, packets_out) · ratio% / srtt, bytes per second.
fn linux_rate(cwnd: u64, packets_out: u64, ratio: u64, srtt: Time) -> u64 {
    (MSS as u128 * ratio as u128 * cwnd.max(packets_out) as u128 * 10_000_000 / srtt as u128) as u64
}

/// len/rate in ns.
/// The pacing time of a skb of `segs` full segments (`tcp_update_skb_after_send` divides the
/// skb's whole length by the rate once).
fn skb_ns(segs: u64, rate: u64) -> Time {
    segs * MSS * 1_000_000_000 / rate
}

#[test]
fn the_pacing_rate_is_200_percent_in_slow_start_and_120_in_avoidance() {
    // An unpaced Reno connection: Linux computes the rate all the same (tcp_cong_control →
    // tcp_update_pacing_rate); no RTT sample yet, no rate (sk_pacing_rate stays unlimited).
    let mut h = Harness::sending(4, |c| c.initial_ssthresh = tcplab_core::tcp::config::Limit::Bytes(tcplab_core::units::Size(20 * MSS)));
    assert_eq!(h.info().pacing_rate, None);
    assert!(!h.info().paced);
    // The ACK of segment 1 after 100 ms: SRTT = 100 ms, cwnd 5 (slow start), 5 outstanding
    // (segments 2..=4 and the two sent now, 2..6 → packets_out 5).
    h.send(ms(100), ack(1 + MSS));
    h.recv(ms(100), [data(5), data(6)]);
    let i = h.info();
    assert_eq!((i.cwnd / MSS, i.srtt), (5, Some(ms(100))));
    // cwnd 5 < ssthresh/2 = 10: tcp_pacing_ss_ratio = 200 %.
    assert_eq!(i.pacing_rate, Some(linux_rate(5, 5, 200, ms(100))));
    assert_eq!(i.pacing_rate, Some(100_000));
    // Grow to cwnd ≥ ssthresh/2 = 10: tcp_pacing_ca_ratio = 120 %.
    let mut t = ms(100);
    for k in 2..=6 {
        t += ms(1);
        h.send(t, ack(1 + k * MSS));
    }
    let i = h.info();
    assert_eq!(i.cwnd / MSS, 10);
    let srtt = i.srtt.unwrap();
    let out = i.bytes_in_flight.div_ceil(MSS);
    assert_eq!(i.pacing_rate, Some(linux_rate(10, out, 120, srtt)));
}

#[test]
fn paced_segments_leave_len_over_rate_apart_in_two_segment_skbs() {
    // IW 20: the first flight leaves at once (no RTT, no rate; and tcp_update_skb_after_send
    // paces only from the 10th data segment on).
    let mut h = Harness::sending(20, |c| c.pacing = true);
    assert!(h.info().paced);
    // ACK of segment 1 at 100 ms: SRTT 100 ms, cwnd 21, two segments may go. The rate at the
    // first send is 200 % · 21 · 1000 B / 100 ms = 420 kB/s (max(cwnd, packets_out) = 21):
    // tcp_tso_autosize gives max(420000 >> 10 = 410 B / 1000 B, tcp_min_tso_segs = 2) = 2, so
    // both leave now as one skb.
    h.send(ms(100), ack(1 + MSS));
    h.recv(ms(100), [data(21), data(22)]);
    let rate = linux_rate(21, 21, 200, ms(100));
    assert_eq!(h.info().pacing_rate, Some(rate));
    // tcp_update_skb_after_send, once for the skb: its len/rate less the credit of a late send
    // (at most half of it: the departure time was long past), so one segment's time.
    let next = ms(100) + (skb_ns(2, rate) - skb_ns(2, rate) / 2);
    assert_eq!(h.conn.snd.core.pacer.next, next);
    assert_eq!(h.deadline(TimerKind::Pacing), Some(next));
    // The ACK of segment 2 at 101 ms opens the window by two; tcp_pacing_check holds them.
    h.send(ms(101), ack(1 + 2 * MSS));
    h.recv_nothing();
    // The pacing timer sends them at the departure time, again as one skb of two.
    h.recv(next, [data(23), data(24)]);
    let rate2 = linux_rate(22, 22, 200, h.info().srtt.unwrap());
    let next2 = next + skb_ns(2, rate2);
    assert_eq!(h.conn.snd.core.pacer.next, next2);
    // Nothing leaves before the next departure time, even with the window open.
    h.send(next + 1, ack(1 + 4 * MSS));
    h.recv_nothing();
    h.recv(next2, [data(25), data(26)]);
}

#[test]
fn without_the_knob_nothing_is_paced() {
    // The same ACKs without `pacing`: the window's segments leave at once (golden digests of the
    // unpaced presets do not move).
    let mut h = Harness::sending(20, |_| {});
    h.send(ms(100), ack(1 + MSS));
    h.recv(ms(100), [data(21), data(22)]);
    h.send(ms(101), ack(1 + 2 * MSS));
    h.recv(ms(101), [data(23), data(24)]);
    assert_eq!(h.deadline(TimerKind::Pacing), None);
}
