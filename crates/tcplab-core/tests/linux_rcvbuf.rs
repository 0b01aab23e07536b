//! Linux 6.x's receive buffer (`rcv_buffer = "linux"`, tcp/rcvbuf.rs) on the whole-connection
//! harness: the window each ACK advertises and the quick ACK each growth of the window gives,
//! checked against hand-worked kernel numbers (net/ipv4/tcp_input.c, tcp_output.c). MSS 1000, no
//! timestamps, no route window, HZ 250; the application reads every byte at once.
//!
//! The numbers: tcp_select_initial_window(tcp_full_space = 131072·128/256 = 65536, 1000) offers
//! 65·1000 = 65000 B with window scale ilog2(32 MB) − 15 = 10; tcp_init_buffer_space() sets
//! window_clamp = 65536 − 1000 = 64536 (tcp_app_win reserves a segment), rcv_ssthresh 64536,
//! rcvq_space 10·1000. The first full segment sets scaling_ratio = 1000·256/(1000 + 856) = 137
//! (tcp_measure_rcv_mss), window_clamp = 131072·137/256 = 70144 and rcv_ssthresh back to
//! min(rcv_wnd, clamp) = 65000 (tcp_set_window_clamp). tcp_space() with one segment held:
//! (131072 − 1856)·137/256 = 69150.

#[macro_use]
mod harness;

use harness::{Harness, Seg, DATA, MSS};
use tcplab_core::tcp::config::{DelackModel, RcvBuffer, RtoModel};
use tcplab_core::tcp::TcpConfig;
use tcplab_core::units::{ms, us};

fn linux(c: &mut TcpConfig) {
    c.rto_model = RtoModel::Linux;
    c.hz = 250;
    c.delack_model = DelackModel::Linux;
    c.comp_sack_nr = 44;
    c.rcv_buffer = RcvBuffer::Linux;
}

fn peer_data(k: u64) -> Seg {
    seg!(seq = 1 + (k - 1) * MSS, ..DATA)
}

/// The ACK of `a` advertising `wnd` bytes (the kernel's field times 2^10).
fn ack_w(a: u64, wnd: u32) -> Seg {
    seg!(ack = a, wnd = wnd)
}

fn rcv_ssthresh(h: &Harness) -> u64 {
    h.conn.rcv.rcvbuf.as_ref().unwrap().rcv_ssthresh
}

/// Segments 1..=19 one per ms: tcp_grow_window() raises rcv_ssthresh by max(2·advmss, 2·len) =
/// 2000 on segments 1 and 2 and by the last 150 (room = min(window_clamp, tcp_space) −
/// rcv_ssthresh) on segment 3, each time with `icsk_ack.quick |= 1` on top of the 16 quick ACKs
/// of the first segment (tcp_incr_quickack: min(65000 / 2000, TCP_MAX_QUICKACKS)). So 19 ACKs go
/// at once (16 without the growth), each advertising ALIGN(min(tcp_space, rcv_ssthresh), 1024)
/// (__tcp_select_window with rcv_wscale 10).
fn grow_then_quick(h: &mut Harness) {
    let wnd = [67584, 69632, 69632];
    for k in 1..=19u64 {
        h.send(ms(k), peer_data(k));
        let w = wnd.get(k as usize - 1).copied().unwrap_or(69632);
        h.recv(ms(k), [ack_w(1 + k * MSS, w)]);
    }
    assert_eq!(rcv_ssthresh(h), 69150);
    assert_eq!(h.conn.rcv.linux.as_ref().unwrap().quick, 0);
}

/// tcp_grow_window() and tcp_event_data_recv(): three growths give three quick ACKs beyond the
/// 16, then __tcp_ack_snd_check() acknowledges every second full segment ("more than one full
/// frame ... and __tcp_select_window(sk) >= tp->rcv_wnd").
#[test]
fn each_growth_of_rcv_ssthresh_is_a_quick_ack_then_every_second_segment() {
    let mut h = Harness::established(linux);
    let b = h.conn.rcv.rcvbuf.as_ref().unwrap();
    // tcp_select_initial_window() and tcp_init_buffer_space().
    assert_eq!((b.rcv_wnd, b.wscale, b.window_clamp, b.rcv_ssthresh, b.space), (65000, 10, 64536, 64536, 10000));
    grow_then_quick(&mut h);
    let b = h.conn.rcv.rcvbuf.as_ref().unwrap();
    // tcp_measure_rcv_mss(): scaling_ratio 137, window_clamp 70144 (tcp_set_window_clamp).
    assert_eq!((b.scaling_ratio, b.window_clamp), (137, 70144));
    h.send(ms(20), peer_data(20));
    h.recv_nothing();
    h.send(ms(21), peer_data(21));
    h.recv(ms(21), [ack_w(1 + 21 * MSS, 69632)]);
    h.send(ms(22), peer_data(22));
    h.recv_nothing();
}

/// Without the receive-buffer model (`rcv_buffer = "fixed"`) the same segments get the 16 quick
/// ACKs only: the 17th waits (the kernel's 30 missing ACKs of docs/testbed.md).
#[test]
fn a_fixed_window_gives_only_the_first_sixteen_quick_acks() {
    let mut h = Harness::established(|c| {
        linux(c);
        c.rcv_buffer = RcvBuffer::Fixed;
    });
    for k in 1..=16u64 {
        h.send(ms(k), peer_data(k));
        h.recv(ms(k), [seg!(ack = 1 + k * MSS)]);
    }
    h.send(ms(17), peer_data(17));
    h.recv_nothing();
}

/// tcp_rcv_rtt_measure() (no timestamps: Dynamic Right-Sizing): the first segment starts a
/// measure that ends when rcv_nxt passes 1 + 1000 + 65000 (segment 66, 65 ms later: rtt_us =
/// 65 ms). tcp_rcv_space_adjust() on the read of segment 66 (66 ms ≥ 65 ms since
/// tcp_init_buffer_space) finds 66000 B copied > rcvq_space 10000: tcp_rcvbuf_grow(66000):
/// rcvwin = 2·66000 + 4·66000·(66000 − 10000)/10000 = 1610400, sk_rcvbuf = 1610400·256/137 =
/// 3009214, window_clamp = 3009214·137/256 = 1610399. From segment 67 rcv_ssthresh grows again by
/// 2000 a segment, and each segment is ACKed at once.
#[test]
fn autotuning_once_per_receiver_rtt_reopens_room_and_quick_acks() {
    let mut h = Harness::established(linux);
    grow_then_quick(&mut h);
    // Segments 20..=66: every second one is ACKed (the odd ones).
    for k in 20..=66u64 {
        h.send(ms(k), peer_data(k));
        if k % 2 == 1 {
            h.recv(ms(k), [ack_w(1 + k * MSS, 69632)]);
        } else {
            h.recv_nothing();
        }
    }
    let b = h.conn.rcv.rcvbuf.as_ref().unwrap();
    assert_eq!((b.rtt_us8 >> 3, b.grows, b.rcvbuf, b.window_clamp, b.space), (65_000, 1, 3_009_214, 1_610_399, 66_000));
    // Segment 67: rcv_ssthresh 69150 + 2000 = 71150, advertised ALIGN(71150, 1024) = 71680;
    // then 73150 → 73728, 75150 → 75776.
    for (k, w) in [(67u64, 71680u32), (68, 73728), (69, 75776)] {
        h.send(ms(k), peer_data(k));
        h.recv(ms(k), [ack_w(1 + k * MSS, w)]);
    }
    assert_eq!(rcv_ssthresh(&h), 75150);
}

/// tcp_data_queue_ofo(): with SACK, an out-of-order segment runs tcp_grow_window(sk, skb, false)
/// too (truesize unadjusted: 1856·137/256 = 993 ≤ 1000, so 2·advmss), and its quick-ACK credit
/// sends each SACK at once where SACK compression (__tcp_ack_snd_check, after the third
/// duplicate) would hold it; the out-of-order memory counts in tcp_space().
#[test]
fn out_of_order_growth_sends_every_sack_at_once() {
    let mut h = Harness::established(|c| {
        linux(c);
        c.sack = true;
    });
    grow_then_quick(&mut h);
    for k in 20..=66u64 {
        h.send(ms(k), peer_data(k));
        if k % 2 == 1 {
            h.recv(ms(k), [ack_w(1 + k * MSS, 69632)]);
        } else {
            h.recv_nothing();
        }
    }
    // Segment 67 lost; 68..=73 arrive 10 µs apart: six SACKs, each at once, the window (the
    // rcv_ssthresh grown by 2000 each) advertised on each.
    let top = 1 + 66 * MSS;
    let t = ms(68);
    for (i, k) in (68..=73u64).enumerate() {
        let at = t + us(10 * i as u64);
        h.send(at, peer_data(k));
        let blocks: &'static [(u64, u64)] = Box::leak(vec![(top + MSS, 1 + k * MSS)].into_boxed_slice());
        let w = (69150 + 2000 * (i as u32 + 1)).div_ceil(1024) * 1024;
        h.recv(at, [Seg { ack: top, sack: blocks, wnd: w, ..harness::SEG }]);
    }
    assert_eq!(h.conn.rcv.rcvbuf.as_ref().unwrap().ooo_mem, 6 * 1856);
}

/// tcp_data_queue_ofo() calls tcp_measure_rcv_mss() (since "tcp: call tcp_measure_rcv_mss() for
/// ooo packets", Linux 6.17): when the first data segment is lost, the first out-of-order one
/// sets scaling_ratio 137 and window_clamp 70144 (tcp_set_window_clamp: rcv_ssthresh =
/// max(64536, min(rcv_wnd 65000, 70144)) = 65000), so tcp_grow_window(sk, skb, false) finds room
/// (min(70144, tcp_space 131072·137/256 = 70144) − 65000) and gives 2·advmss: 67000, its quick
/// ACK advertising ALIGN(min((131072 − 1856)·137/256, 67000), 1024) = 67584. The second: room
/// min(70144, 69150) − 67000 = 2150, +2000 = 69000, ALIGN(min(68161, 69000)) = 68608. Then no
/// room: three duplicates at once (TCP_FASTRETRANS_THRESH, the window never shrinking below
/// 68608), and the sixth out-of-order segment waits for SACK compression. Without the measure
/// the clamp stays 64536: no growth, and the fourth already waits.
#[test]
fn out_of_order_segments_measure_the_scaling_ratio_when_the_first_is_lost() {
    let mut h = Harness::established(|c| {
        linux(c);
        c.sack = true;
    });
    for k in 2..=7u64 {
        h.send(ms(k), peer_data(k));
        let blocks: &'static [(u64, u64)] = Box::leak(vec![(1 + MSS, 1 + k * MSS)].into_boxed_slice());
        let w = match k {
            2 => 67584,
            _ => 68608,
        };
        if k <= 6 {
            h.recv(ms(k), [Seg { ack: 1, sack: blocks, wnd: w, ..harness::SEG }]);
        } else {
            h.recv_nothing();
        }
        if k == 2 {
            let b = h.conn.rcv.rcvbuf.as_ref().unwrap();
            assert_eq!((b.scaling_ratio, b.window_clamp, b.rcv_ssthresh), (137, 70144, 67000));
        }
    }
    assert_eq!(rcv_ssthresh(&h), 69000);
}

/// `delayed_ack = false` under `delack_model = "linux"` is the route's `quickack 1` (what the
/// testbed sets for it): `sk_setup_caps` caches RTAX_QUICKACK in icsk_ack.dst_quick_ack, which
/// keeps `tcp_in_quickack_mode()` true, so `__tcp_ack_snd_check()` acknowledges every data
/// segment at once — past the 16 quick ACKs, and out-of-order ones where SACK compression would
/// hold them — while the buffer grows and autotunes as it does with delayed ACKs: the same
/// windows as `autotuning_once_per_receiver_rtt_reopens_room_and_quick_acks`, an ACK for each
/// segment. (Before, the receiver took the generic path without Linux's buffer: the window
/// stayed at 65000 B for the whole connection.)
#[test]
fn route_quickack_acks_every_segment_and_the_window_still_autotunes() {
    let mut h = Harness::established(|c| {
        linux(c);
        c.sack = true;
        c.delayed_ack = false;
    });
    grow_then_quick(&mut h);
    for k in 20..=66u64 {
        h.send(ms(k), peer_data(k));
        h.recv(ms(k), [ack_w(1 + k * MSS, 69632)]);
    }
    let b = h.conn.rcv.rcvbuf.as_ref().unwrap();
    assert_eq!((b.rtt_us8 >> 3, b.grows, b.rcvbuf, b.window_clamp, b.space), (65_000, 1, 3_009_214, 1_610_399, 66_000));
    for (k, w) in [(67u64, 71680u32), (68, 73728), (69, 75776)] {
        h.send(ms(k), peer_data(k));
        h.recv(ms(k), [ack_w(1 + k * MSS, w)]);
    }
    // Segment 70 lost; 71..=76 arrive: every SACK at once, with no compression after the third
    // duplicate (the window grows by 2000 on each, tcp_grow_window(sk, skb, false)).
    let top = 1 + 69 * MSS;
    let mut last_wnd = 75776;
    for (i, k) in (71..=76u64).enumerate() {
        let at = ms(71) + us(10 * i as u64);
        h.send(at, peer_data(k));
        let sent = h.take_sent();
        assert_eq!(sent.len(), 1, "segment {k}: one ACK at once");
        let (t, a) = &sent[0];
        assert_eq!((*t, a.ack, a.sack), (at, top, &[(top + MSS, 1 + k * MSS)][..]), "segment {k}");
        assert!(a.wnd >= last_wnd, "segment {k}: the window never shrinks");
        last_wnd = a.wnd;
    }
    assert!(last_wnd > 75776, "the out-of-order segments grew the window");
    assert_eq!(h.conn.rcv.linux.as_ref().unwrap().quick, 0, "no quick ACKs left: the route's flag acknowledges");
}

/// __tcp_cleanup_rbuf()'s window update: the ACK of a filled hole is sized with the whole
/// released queue still unread (tcp_space less its memory: a window under half the clamp), the
/// application's read frees it, and "if we can now advertise a non-zero window which has been
/// raised "significantly"" (at least twice `tcp_receive_window`) a second ACK goes at once with
/// the larger window. The kernel's capture of a 3 MB transfer at 50 Mb/s, 40 ms with segment 30
/// dropped shows the pair 0.135 ms apart (28 and 80 × 1024 B).
#[test]
fn a_read_that_frees_the_filled_hole_sends_a_window_update() {
    let mut h = Harness::established(|c| {
        linux(c);
        c.sack = true;
    });
    grow_then_quick(&mut h);
    // Segment 20 lost; 21..=58 arrive out of order (38 segments, 38·1856 B of memory).
    for k in 21..=58u64 {
        h.send(ms(k), peer_data(k));
    }
    h.advance_to(ms(59));
    h.take_sent();
    let clamp = h.conn.rcv.rcvbuf.as_ref().unwrap().window_clamp;
    h.send(ms(60), peer_data(20));
    let sent = h.take_sent();
    let top = 1 + 58 * MSS;
    assert_eq!(sent.len(), 2, "the ACK of the filled hole, then the window update: {sent:?}");
    let ((t1, a1), (t2, a2)) = (&sent[0], &sent[1]);
    assert_eq!((*t1, *t2, a1.ack, a2.ack), (ms(60), ms(60), top, top));
    assert!(2 * a1.wnd as u64 <= clamp, "the filled hole's ACK: {} B against the clamp {clamp}", a1.wnd);
    assert!(a2.wnd >= 2 * a1.wnd, "the update at least doubles the window: {} then {}", a1.wnd, a2.wnd);
    // In order, with the queue read at once, no update follows: each ACK acknowledges new
    // data, and the window's right edge never recedes.
    let mut edge = top + a2.wnd as u64;
    let mut last_ack = top;
    for k in 59..=64u64 {
        h.send(ms(k + 2), peer_data(k));
        for (_, a) in h.take_sent() {
            assert!(a.ack > last_ack && a.ack + a.wnd as u64 >= edge, "segment {k}: {a:?}");
            (last_ack, edge) = (a.ack, a.ack + a.wnd as u64);
        }
    }
}

/// tcp_select_window(): tp->rcv_wnd keeps the window chosen, but the header carries at most
/// 65535 << rcv_wscale ("Make sure we do not exceed the maximum possible scaled window"). A route
/// window of 16 KB (the testbed's `rwnd`) gives wscale 0 (`tcp_select_initial_window`: ilog2 of
/// the window less 15, at least 0), and once autotuning has raised the clamp past it the window
/// stops at 65535 B — the kernel's capture of 500 KB at 20 Mb/s, 40 ms shows 65535 from the 19th
/// ACK on. Advertising tp->rcv_wnd itself let the simulated sender run 19 % faster.
#[test]
fn a_small_route_window_caps_the_advertised_window_at_its_scale() {
    let mut h = Harness::established(|c| {
        linux(c);
        c.rwnd = tcplab_core::tcp::config::Limit::Bytes(tcplab_core::units::Size(16384));
    });
    assert_eq!(h.conn.rcv.rcvbuf.as_ref().unwrap().wscale, 0);
    let mut largest = 0;
    for k in 1..=200u64 {
        h.send(ms(k), peer_data(k));
        for (_, a) in h.take_sent() {
            largest = largest.max(a.wnd);
        }
    }
    let b = h.conn.rcv.rcvbuf.as_ref().unwrap();
    assert!(b.rcv_wnd > 65_535, "autotuning took tp->rcv_wnd past the field: {}", b.rcv_wnd);
    assert_eq!(largest, 65_535);
}
