//! Linux 6.x's ACK processing as the `linux6` profile models it, on the connection harness:
//! the window grows while `tcp_is_cwnd_limited` holds, by what an ACK newly delivers
//! (`tcp_cong_control` with `tcp_newly_delivered`); a SACK block tags only whole segments
//! (`tcp_match_skb_to_sack`); an ACK of data never sent is dropped with a challenge ACK
//! (`tcp_ack` → `tcp_send_challenge_ack`). Kernel functions are net/ipv4/tcp_input.c and
//! tcp_output.c, include/net/tcp.h (6.x).

#[macro_use]
mod harness;

use harness::{Harness, Seg, DATA, FIN, MSS, SYNACK};
use tcplab_core::net::{FLAG_ACK, FLAG_PSH};
use tcplab_core::tcp::{ConnEvent, TimerKind};
use tcplab_core::tcp::config::{CwndValidation, DelackModel, Limit, RcvBuffer, Unlimited};
use tcplab_core::tcp::TcpConfig;
use tcplab_core::units::{Size, Time, MS};

fn ms(x: u64) -> Time {
    x * MS
}

/// The `linux6` profile with MSS 1000, no FIN, an unlimited receive window.
fn linux6_cfg(knobs: impl FnOnce(&mut TcpConfig)) -> TcpConfig {
    let mut c = TcpConfig::profile("linux6").unwrap();
    c.mss = Size(MSS);
    c.fin = false;
    c.rwnd = Limit::Named(Unlimited::Unlimited);
    knobs(&mut c);
    c.validate().unwrap();
    c
}

/// An active opener of `c` after its SYN was answered by `synack` at 100 ms (SRTT 100 ms),
/// nothing written yet.
fn opened(c: TcpConfig, synack: Seg) -> Harness {
    let mut h = Harness::client(c);
    assert_eq!(h.take_sent().len(), 1, "the SYN");
    h.send(ms(100), synack);
    let ack = h.take_sent();
    assert_eq!(ack.len(), 1, "the handshake's ACK: {ack:?}");
    assert_eq!(h.info().srtt, Some(ms(100)));
    h
}

/// `linux6` after a handshake with SACK and without timestamps.
fn linux6(knobs: impl FnOnce(&mut TcpConfig)) -> Harness {
    opened(linux6_cfg(knobs), seg!(ack = 1, sack_permitted = true, ..SYNACK))
}

/// cwnd in segments.
fn cwnd(h: &Harness) -> u64 {
    h.info().cwnd / MSS
}

/// Data segment `k` (1-based) as this end sends it.
fn data(k: u64) -> Seg {
    Seg { seq: 1 + (k - 1) * MSS, ack: 1, ..DATA }
}

/// `Harness::recv` with PSH left out of the comparison: `linux6` sets PSH as Linux does
/// (`tso_defer`; tested in `tso.rs`), these tests are about other rules.
#[track_caller]
fn recv(h: &mut Harness, t: Time, segs: impl IntoIterator<Item = Seg>) {
    h.advance_to(t);
    let aside = |s: Seg| Seg { flags: s.flags & !FLAG_PSH, ..s };
    let got: Vec<(Time, Seg)> = h.take_sent().into_iter().map(|(at, s)| (at, aside(s))).collect();
    let want: Vec<(Time, Seg)> = segs.into_iter().map(|s| (t, aside(s))).collect();
    assert_eq!(got, want, "segments sent (time, segment; PSH aside)");
}

/// `n` data segments from segment `k` on.
fn datas(k: u64, n: u64) -> Vec<Seg> {
    (k..k + n).map(data).collect()
}

/// `include/net/tcp.h` `tcp_is_cwnd_limited`: in slow start "ensure cwnd grows to twice what was
/// ACKed". Nine segments out under cwnd 10 (application-limited): each ACK of two grows cwnd by
/// two while cwnd < 2·max_packets_out = 18, then it stays (google/packetdrill's
/// slow-start-app-limited-9-packets-out, in our own words).
#[test]
fn slow_start_grows_to_twice_the_flight_when_application_limited() {
    let mut h = linux6(|_| {});
    h.write(ms(100), 9 * MSS);
    recv(&mut h, ms(100), datas(1, 9));
    assert_eq!(cwnd(&h), 10);
    let mut want = vec![];
    for (k, ack) in [3u64, 5, 7, 9, 10].into_iter().enumerate() {
        h.send(ms(205 + 5 * k as u64), seg!(ack = 1 + (ack - 1) * MSS));
        want.push(cwnd(&h));
    }
    h.recv_nothing();
    assert_eq!(want, [12, 14, 16, 18, 18]);
}

/// Six segments out under cwnd 10: cwnd < 12 lets the first ACK (of two) grow it to 12, and
/// no further (slow-start-ack-per-2pkt-send-6pkt). The sender's own test (`cwnd_validation =
/// "rfc5681"`: the window full when the ACK came) grows it on no ACK at all here.
#[test]
fn the_cwnd_limited_gate_is_twice_max_packets_out_only_with_linux_validation() {
    for (validation, want) in [(CwndValidation::Linux, [12, 12, 12]), (CwndValidation::Rfc5681, [10, 10, 10])] {
        let mut h = linux6(|c| c.cwnd_validation = validation);
        h.write(ms(100), 6 * MSS);
        recv(&mut h, ms(100), datas(1, 6));
        let mut got = vec![];
        for (k, ack) in [3u64, 5, 7].into_iter().enumerate() {
            h.send(ms(200 + k as u64), seg!(ack = 1 + (ack - 1) * MSS));
            got.push(cwnd(&h));
        }
        assert_eq!(got, want, "{validation:?}");
    }
}

/// Limited Transmit, then the cumulative ACK over the SACKed segments 2 and 3: Linux counts
/// each segment delivered once (`tcp_newly_delivered`), when it is SACKed, and grows cwnd on
/// the cumulative ACK by what it newly delivers (`tcp_cong_control(sk, ack, delivered, ..)`):
/// one segment, cwnd 11, with 9 in flight: two new segments (limited-transmit-sack).
#[test]
fn a_cumulative_ack_over_sacked_segments_counts_only_the_newly_delivered_one() {
    let mut h = linux6(|_| {});
    h.write(ms(100), 15 * MSS);
    recv(&mut h, ms(100), datas(1, 10));
    h.send(ms(210), seg!(ack = 1, sack = [(1001, 2001)]));
    recv(&mut h, ms(210), [data(11)]);
    h.send(ms(220), seg!(ack = 1, sack = [(1001, 3001)]));
    recv(&mut h, ms(220), [data(12)]);
    assert_eq!(cwnd(&h), 10, "no growth on SACK-only ACKs while tp->reordering is tcp_reordering");
    h.send(ms(230), seg!(ack = 3001));
    assert_eq!(cwnd(&h), 11);
    recv(&mut h, ms(230), [data(13), data(14)]);
}

/// The same without SACK: each duplicate ACK counted one segment delivered
/// (`tcp_add_reno_sack`), so the ACK of 3001 delivers max(3 − 2, 1) = 1 segment
/// (`tcp_remove_reno_sacks`): cwnd 11, two segments (limited-transmit-no-sack).
#[test]
fn without_sack_the_ack_after_duplicate_acks_counts_one_segment() {
    let mut h = opened(linux6_cfg(|_| {}), seg!(ack = 1, ..SYNACK));
    h.write(ms(100), 15 * MSS);
    recv(&mut h, ms(100), datas(1, 10));
    h.send(ms(210), seg!(ack = 1));
    recv(&mut h, ms(210), [data(11)]);
    h.send(ms(220), seg!(ack = 1));
    recv(&mut h, ms(220), [data(12)]);
    h.send(ms(230), seg!(ack = 3001));
    assert_eq!(cwnd(&h), 11);
    recv(&mut h, ms(230), [data(13), data(14)]);
}

/// `tcp_may_raise_cwnd`: once SACKs have shown reordering beyond `tcp_reordering` (3), a SACK-only
/// ACK grows cwnd too. Segment 10 SACKed, then segment 4: a reordering of 7 segments
/// (`tcp_check_sack_reordering`: from segment 4 to the highest SACKed), so this ACK grows cwnd
/// to 11; the cumulative ACK of all ten newly delivers 8: 19
/// (cubic-rack-reo-timeout-retrans-failed-incoming-data's first lines).
#[test]
fn with_high_reordering_a_sack_only_ack_grows_cwnd() {
    let mut h = linux6(|_| {});
    h.write(ms(100), 10 * MSS);
    recv(&mut h, ms(100), datas(1, 10));
    h.send(ms(120), seg!(ack = 1, sack = [(9001, 10001)]));
    assert_eq!(cwnd(&h), 10);
    h.send(ms(120), seg!(ack = 1, sack = [(3001, 4001), (9001, 10001)]));
    assert_eq!(h.info().reordering, Some(7));
    assert_eq!(cwnd(&h), 11);
    h.send(ms(120), seg!(ack = 10001));
    assert_eq!(cwnd(&h), 19);
}

/// `tcp_match_skb_to_sack`: a SACK block holding only the last byte of segment 4 tags nothing
/// (a segment is SACKed only whole), so the tail loss probe at 2·SRTT + 2 ms (in jiffies:
/// 208 ms) resends all of segment 4 (fr-4pkt-fack-last-byte), and the ACK re-arms nothing: the
/// probe is timed from the send.
#[test]
fn a_sack_of_part_of_a_segment_does_not_sack_it() {
    let mut h = linux6(|_| {});
    h.write(ms(100), 4 * MSS);
    recv(&mut h, ms(100), datas(1, 4));
    h.send(ms(200), seg!(ack = 1, sack = [(4000, 4001)]));
    assert_eq!(h.info().sacked, 0);
    h.recv_nothing();
    recv(&mut h, ms(308), [data(4)]);
    // And a block covering segment 3 and the first byte of segment 4 tags segment 3 alone.
    h.send(ms(310), seg!(ack = 1, sack = [(2001, 3002)]));
    assert_eq!(h.info().sacked, MSS);
}

/// RFC 9293 §3.10.7.4: "If the ACK acks something not yet sent (SEG.ACK > SND.NXT), then send an
/// ACK, drop the segment, and return." Linux 6.x `tcp_ack`: `tcp_send_challenge_ack`, then the
/// drop, before TS.Recent is updated: the ACK echoes the TSval of before, the FIN is not taken;
/// the next good segment is. A second bad ACK within `tcp_invalid_ratelimit` (500 ms) gets no
/// answer (`__tcp_oow_rate_limited`); one after it does (ts_recent/invalid_ack).
#[test]
fn an_ack_of_unsent_data_is_dropped_with_a_challenge_ack() {
    let mut h = opened(linux6_cfg(|_| {}), seg!(ack = 1, sack_permitted = true, ts = Some((100, 1)), ..SYNACK));
    let ecr = |s: &Seg| s.ts.map(|t| t.1);
    // A FIN whose ACK is above SND.NXT (1), with a TSval far ahead.
    h.send(ms(200), seg!(ack = 9999, ts = Some((200_000, 1)), ..FIN));
    let sent = h.take_sent();
    assert_eq!(sent.len(), 1, "{sent:?}");
    let (at, a) = sent[0];
    assert_eq!((at, a.seq, a.ack, a.len, a.flags), (ms(200), 1, 1, 0, FLAG_ACK), "{a:?}");
    assert_eq!(ecr(&a), Some(100), "TS.Recent is the SYN-ACK's TSval still");
    assert!(!h.events().contains(&ConnEvent::PeerClosed), "the FIN was dropped");
    assert_eq!(h.info().rcv_nxt, 1);
    // The next acceptable segment is taken, and its TSval echoed.
    h.send(ms(200), seg!(ack = 1, ts = Some((201, 1)), ..DATA));
    h.advance_to(ms(300));
    let sent = h.take_sent();
    assert!(sent.iter().any(|(_, s)| s.ack == 1001 && ecr(s) == Some(201)), "{sent:?}");
    // Another ACK of unsent data 100 ms after the challenge ACK: dropped without an answer.
    h.send(ms(300), seg!(seq = 1001, ack = 5000, ts = Some((202, 1))));
    h.recv_nothing();
    assert_eq!(h.info().rcv_nxt, 1001);
    // 500 ms after it, answered again.
    h.send(ms(700), seg!(seq = 1001, ack = 5000, ts = Some((203, 1))));
    let sent = h.take_sent();
    assert_eq!(sent.iter().map(|(t, s)| (*t, s.ack, ecr(s))).collect::<Vec<_>>(), [(ms(700), 1001, Some(201))]);
}

/// Other receive models take the segment (the send half ignores the ACK of unsent data).
#[test]
fn without_the_linux_receiver_the_segment_is_taken() {
    let mut h = opened(linux6_cfg(|c| {
        c.delack_model = DelackModel::Rfc;
        c.comp_sack_nr = 0;
        c.rcv_buffer = RcvBuffer::Fixed; // Linux's receive buffer needs the Linux receiver
    }), seg!(ack = 1, sack_permitted = true, ..SYNACK));
    h.send(ms(200), seg!(ack = 9999, ..FIN));
    assert!(h.events().contains(&ConnEvent::PeerClosed));
}

/// The persist timer (RFC 9293 §3.8.6.1) as Linux runs it (`tcp_check_probe_timer`,
/// `tcp_probe_timer` → `tcp_send_probe0` → `tcp_xmit_probe_skb`, `tcp_probe0_when`,
/// `tcp_ack_probe`): the peer closes its window with nothing in flight and data waiting; a
/// zero-length probe at SND.UNA − 1 goes one RTO later, the next ones after 2 and 4 RTOs; an ACK
/// that leaves the window closed restarts the wait; the ACK that opens it lets the data go, with
/// the RTO armed (slow-start-after-win-update).
#[test]
fn a_closed_window_is_probed_with_backoff_until_it_opens() {
    let mut h = linux6(|_| {});
    h.write(ms(100), 4 * MSS);
    recv(&mut h, ms(100), datas(1, 4));
    h.send(ms(200), seg!(ack = 4001, wnd = 0));
    h.write(ms(200), 4 * MSS);
    h.recv_nothing();
    let rto = h.info().rto;
    let jiffy = ms(4);
    // On the timer wheel: a wait of n jiffies runs on the next multiple of 8 jiffies past it
    // (level 1, n ≥ 63), of 64 past it from n ≥ 504.
    let wheel = |from: Time, wait: Time| {
        let n = wait / jiffy;
        let g = if n >= 504 { 64 } else if n >= 63 { 8 } else { 1 };
        ((from / jiffy + n) / g + 1) * g * jiffy
    };
    let probe = seg!(seq = 4000, ack = 1);
    let t1 = wheel(ms(200), rto);
    assert_eq!(h.deadline(TimerKind::Rto), Some(t1));
    recv(&mut h, t1, [probe]);
    let t2 = wheel(t1, 2 * rto);
    recv(&mut h, t2, [probe]);
    // A window update that leaves it closed: the wait (4 RTOs now) restarts from it.
    let t = t2 + ms(100);
    h.send(t, seg!(ack = 4001, wnd = 0));
    h.recv_nothing();
    let t3 = wheel(t, 4 * rto);
    assert_eq!(h.deadline(TimerKind::Rto), Some(t3));
    recv(&mut h, t3, [probe]);
    // The window opens: the data goes, the RTO is armed for it, no more probes.
    let t = t3 + ms(50);
    h.send(t, seg!(ack = 4001, wnd = 100 * MSS as u32));
    let sent = h.take_sent();
    assert!(!sent.is_empty() && sent.iter().all(|(at, s)| *at == t && s.len > 0), "{sent:?}");
    assert_eq!(sent[0].1.seq, 4001);
    let rto_at = h.deadline(TimerKind::Rto).unwrap();
    assert!(rto_at > t && rto_at <= t + h.info().rto + 8 * jiffy, "{rto_at}");
}
