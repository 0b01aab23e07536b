//! `tcp_tso_should_defer` (net/ipv4/tcp_output.c) "1) We are cwnd-limited": when the head skb
//! waits for the next ACK because the window's room is no more than the skb
//! (`cong_win < send_win && cong_win <= skb->len`), the kernel sets `*is_cwnd_limited = true`,
//! which `tcp_write_xmit` hands `tcp_cwnd_validate`: a sender that keeps the last segment of its
//! window back for the next ACK is limited by cwnd, and CUBIC keeps growing it
//! (`tcp_is_cwnd_limited`). On a whole connection with the `linux` profile (TSO deferral on):
//! 50 Mb/s, 10 ms each way, a drop-tail queue of one BDP (83 packets), 10 s of data. Every ACK
//! acknowledges two segments; once CUBIC has added one, the room is three, one skb of two
//! leaves (`tcp_tso_autosize`'s minimum) and the third waits, so the sender stays one segment
//! short of cwnd. Counted as application-limited, the window froze after its second reduction
//! (145 packets at 6 s, where the kernel on the testbed had grown to 167 and overflowed the
//! queue a third time at 6.0 s and a fourth at 9.5 s).

mod common;

const NET: &str = "[topology]\nkind = \"single_link\"\nrate = \"50Mbps\"\ndelay = \"10ms\"\nqueue = 83\n[tcp]\nprofile = \"linux\"\n";

#[test]
fn a_window_held_back_by_tso_deferral_keeps_growing() {
    let apps = format!("[[flows]]\nbytes = {}\n", 41393 * 1448);
    let r = common::run_with(NET, &apps, 3);
    let t = &r.transfers[0];
    assert_eq!(t.bytes_delivered, 41393 * 1448);
    let queue_drops: u64 = r.links.iter().map(|l| l.dropped_queue).sum();
    eprintln!("fast retransmits {}, retransmits {}, drops {}, time {:?}", t.fast_retransmits, t.retransmits, queue_drops, t.transfer_time_s);
    // Four overflows of the queue in 10 s, as the kernel's (0.4, 2.7, 6.0, 9.5 s).
    assert!(t.fast_retransmits >= 4, "{} fast retransmits", t.fast_retransmits);
}
