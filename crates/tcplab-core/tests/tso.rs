//! Linux's TSO deferral (`tso_defer`, tcp/tso.rs): net/ipv4/tcp_output.c `tcp_tso_should_defer`
//! as `tcp_write_xmit` asks it, on the connection harness. Linux builds every TCP skb for GSO,
//! so with TSO and GSO off on the device a one-segment opening of the window after a send less
//! than 1 ms old waits for the next ACK when that ACK is due; in Recovery nothing waits.

#[macro_use]
mod harness;

use harness::{ack, blk, data, Harness, Seg, MSS, SYNACK};
use tcplab_core::net::FLAG_PSH;
use tcplab_core::tcp::config::LossModel;
use tcplab_core::tcp::{CaState, InitialWindow, TcpConfig, Variant};
use tcplab_core::units::{Time, MS, US};

fn ms(x: u64) -> Time {
    x * MS
}

/// A RACK connection (the `rack.rs` set-up: a 100 ms handshake, SRTT = min_rtt = 100 ms) with
/// TSO deferral on or off, its initial window of 10 sent at 100 ms.
fn conn(defer: bool) -> Harness {
    let mut c: TcpConfig = harness::cfg();
    c.handshake = true;
    c.variant = Variant::Sack;
    c.sack = true;
    c.loss = LossModel::Rack;
    c.initial_window = InitialWindow::Segments(10);
    c.tso_defer = defer;
    c.validate().unwrap();
    let mut h = Harness::client(c);
    assert_eq!(h.take_sent().len(), 1, "the SYN");
    h.send(ms(100), seg!(ack = 1, sack_permitted = true, ..SYNACK));
    h.recv(ms(100), [seg!(ack = 1)]);
    h.write(ms(100), 1 << 30);
    assert_eq!(h.take_sent().len(), 10, "the initial window");
    h
}

/// Segment 1 of the initial window lost; the SACKs of segments 2, 3, 4 come 0.58 ms apart (one
/// 1448-byte segment at 20 Mb/s), as the testbed's kernel sender saw them.
#[test]
fn with_segment_1_lost_the_second_sack_sends_nothing_and_the_third_the_retransmission() {
    let mut h = conn(true);
    // First SACK: Disorder; cwnd 10, 9 in flight. The last send was 100 ms ago, more than 1 ms
    // ("allowing defer only if the last write was recent"): segment 11 goes.
    h.send(ms(200), ack(1, &[blk(2, 2)]));
    assert_eq!(h.info().ca_state, CaState::Disorder);
    h.recv(ms(200), [data(11)]);
    // Second SACK, 0.58 ms later: one segment of room (limit 1448 B < max_segs 2 · MSS; not a
    // third of cwnd), the last send 0.58 ms ago, segment 1's ACK due at 100 + 100 ms = now: the
    // head skb (22 segments) waits for the next ACK (`*is_cwnd_limited = true; return true`).
    h.send(ms(200) + 580 * US, ack(1, &[blk(2, 3)]));
    h.recv_nothing();
    // Third SACK: RACK's reo_wnd is 0 at three SACKed (tcp_rack_reo_wnd), segment 1 is lost,
    // Recovery: "if (icsk->icsk_ca_state >= TCP_CA_Recovery) goto send_now"; the retransmission
    // first (tcp_xmit_retransmit_queue), as the kernel sent it.
    h.send(ms(200) + 1160 * US, ack(1, &[blk(2, 4)]));
    assert_eq!(h.info().ca_state, CaState::Recovery);
    let sent = h.take_sent();
    assert_eq!(sent.first().map(|(_, s)| s.seq), Some(1), "{sent:?}");
}

#[test]
fn without_deferral_the_second_sack_sends_a_new_segment() {
    let mut h = conn(false);
    h.send(ms(200), ack(1, &[blk(2, 2)]));
    h.recv(ms(200), [data(11)]);
    h.send(ms(200) + 580 * US, ack(1, &[blk(2, 3)]));
    h.recv(ms(200) + 580 * US, [data(12)]);
}

/// At 5 Mb/s the SACKs come 2.3 ms apart: the last send is more than 1 ms old and the segment
/// leaves (the kernel sent segments 11 and 12 before the retransmission there).
#[test]
fn a_sack_more_than_1ms_after_the_last_send_is_not_deferred() {
    let mut h = conn(true);
    h.send(ms(200), ack(1, &[blk(2, 2)]));
    h.recv(ms(200), [data(11)]);
    h.send(ms(200) + 2300 * US, ack(1, &[blk(2, 3)]));
    h.recv(ms(200) + 2300 * US, [data(12)]);
}

/// The deferred segment goes with the next ACK that opens room for a skb's worth (two segments
/// at this pacing rate): the ACK of segment 1 (its retransmission not needed: it was reordered)
/// covers 1..4 and leaves the window room for more than two.
#[test]
fn a_deferred_segment_leaves_with_the_next_ack_that_opens_room() {
    let mut h = conn(true);
    h.send(ms(200), ack(1, &[blk(2, 2)]));
    h.recv(ms(200), [data(11)]);
    h.send(ms(200) + 580 * US, ack(1, &[blk(2, 3)]));
    h.recv_nothing();
    h.send(ms(200) + 800 * US, ack(4, &[]));
    let sent: Vec<u64> = h.take_sent().iter().map(|(_, s)| s.seq).collect();
    assert!(sent.len() >= 2 && sent[0] == 1 + 11 * MSS, "segment 12 first, then more: {sent:?}");
}

/// The data segments (1-based) among `sent` that carry PSH.
fn psh_segments(sent: &[(Time, Seg)]) -> Vec<u64> {
    sent.iter().filter(|(_, s)| s.len > 0 && s.flags & FLAG_PSH != 0).map(|(_, s)| (s.seq - 1) / MSS + 1).collect()
}

/// The `conn` set-up with a write of `bytes`, returning what it sent after the handshake.
fn conn_writing(defer: bool, bytes: u64) -> (Harness, Vec<(Time, Seg)>) {
    let mut c: TcpConfig = harness::cfg();
    c.handshake = true;
    c.variant = Variant::Sack;
    c.sack = true;
    c.loss = LossModel::Rack;
    c.initial_window = InitialWindow::Segments(10);
    c.tso_defer = defer;
    c.validate().unwrap();
    let mut h = Harness::client(c);
    h.take_sent();
    h.send(ms(100), seg!(ack = 1, sack_permitted = true, ..SYNACK));
    h.recv(ms(100), [seg!(ack = 1)]);
    h.write(ms(100), bytes);
    let sent = h.take_sent();
    (h, sent)
}

/// PSH where the kernel sets it (tcp/tso.rs `psh_at`): `__tcp_transmit_skb` forces PSH on a skb of
/// more than one segment and `tcp_gso_segment` leaves it on the last, so an initial window sent
/// in skbs of `tcp_tso_autosize`'s two segments has PSH on every second segment (the testbed's
/// kernel capture: 2, 4, 6, 8, 10); a segment sent alone has none.
#[test]
fn psh_ends_every_skb_of_two_segments_and_no_single_segment() {
    let (mut h, sent) = conn_writing(true, 1 << 30);
    assert_eq!(sent.len(), 10);
    assert_eq!(psh_segments(&sent), vec![2, 4, 6, 8, 10]);
    // The ACK of segment 1 in slow start: cwnd 11, 9 in flight, room for one skb of two.
    h.send(ms(200), ack(2, &[]));
    let sent = h.take_sent();
    assert_eq!(sent.iter().map(|(_, s)| (s.seq - 1) / MSS + 1).collect::<Vec<_>>(), vec![11, 12]);
    assert_eq!(psh_segments(&sent), vec![12]);
    // A SACK 2 ms later that opens room for one segment: it leaves alone, without PSH.
    h.send(ms(202), ack(2, &[blk(3, 3)]));
    let sent = h.take_sent();
    assert_eq!(sent.len(), 1);
    assert_eq!(psh_segments(&sent), Vec::<u64>::new());
}

/// `tcp_push` at the end of the write marks its last segment, sent alone here (skbs 1–2, 3–4, 5).
#[test]
fn the_last_segment_of_a_write_carries_psh() {
    let (_, sent) = conn_writing(true, 5 * MSS);
    assert_eq!(psh_segments(&sent), vec![2, 4, 5]);
}

/// Without `tso_defer` (every profile but `linux`) no segment carries PSH.
#[test]
fn without_the_tso_model_no_psh() {
    let (_, sent) = conn_writing(false, 1 << 30);
    assert_eq!(sent.len(), 10);
    assert!(psh_segments(&sent).is_empty());
}

/// `tcp_grow_skb` (Linux 6.10+): a head skb shorter than the send's quota takes the missing
/// segments from the next skb, so a send of two segments crosses a write-queue skb's end, and its
/// PSH is on its last segment only (`tcp_gso_segment`), not on the marked end inside it. A
/// 20,000-byte window gives skbs of 10 segments; the write leaves segments 11–20 and 21–30 in
/// marked skbs (tcp/tso.rs `WriteQueue`); one segment sent alone (room for one after a SACK)
/// shifts the pairs, so that segments 20 and 21 leave together.
#[test]
fn a_send_crosses_a_write_queue_skb_and_ends_with_psh() {
    let mut c: TcpConfig = harness::cfg();
    c.handshake = true;
    c.variant = Variant::Sack;
    c.sack = true;
    c.loss = LossModel::Rack;
    c.initial_window = InitialWindow::Segments(10);
    c.tso_defer = true;
    c.validate().unwrap();
    let mut h = Harness::client(c);
    h.take_sent();
    h.send(ms(100), seg!(ack = 1, sack_permitted = true, wnd = 20_000, ..SYNACK));
    h.recv(ms(100), [seg!(ack = 1)]);
    h.write(ms(100), 1 << 20);
    assert_eq!(psh_segments(&h.take_sent()), vec![2, 4, 6, 8, 10]);
    let mut sent = Vec::new();
    // Segment 1 acknowledged: 11 and 12 together; a SACK of 3 two milliseconds later: 13 alone.
    h.send(ms(200), Seg { wnd: 20_000, ..ack(2, &[]) });
    sent.extend(h.take_sent());
    h.send(ms(202), Seg { wnd: 20_000, ..ack(2, &[blk(3, 3)]) });
    sent.extend(h.take_sent());
    // Then every segment acknowledged in order, 2 ms apart: each ACK lets out two.
    for k in 3..=12 {
        h.send(ms(200 + 2 * k), Seg { wnd: 20_000, ..ack(k + 1, &[]) });
        sent.extend(h.take_sent());
    }
    let at = |n: u64| sent.iter().find(|(_, s)| s.len > 0 && s.seq == 1 + (n - 1) * MSS).map(|(t, s)| (*t, s.flags & FLAG_PSH != 0));
    let (t20, p20) = at(20).expect("segment 20 sent");
    let (t21, p21) = at(21).expect("segment 21 sent");
    assert_eq!(t20, t21, "20 and 21 in one send: {sent:?}");
    assert!(!p20 && p21, "PSH on 21 only: {sent:?}");
    assert_eq!(at(13).map(|x| x.1), Some(false), "13 alone, unmarked");
}
