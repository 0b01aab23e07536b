//! The Linux receiver's ACK on the application's read (`__tcp_cleanup_rbuf`, net/ipv4/tcp.c:
//! "Once-per-two-segments ACK was not sent by tcp_input.c"), on a whole connection: once the
//! receive buffer's autotuning has put rcv_ssthresh at window_clamp (win_from_space of sk_rcvbuf,
//! nothing held), the segment just queued makes `__tcp_select_window` one 1024-byte step smaller
//! than the rcv_wnd last advertised, so `__tcp_ack_snd_check` holds the ACK of every second full
//! segment ("... and right edge of window advances far enough. (tcp_recvmsg() will send ACK
//! otherwise)"); the read that follows sends it. The kernel's captures on the testbed show an ACK
//! every two segments throughout such a transfer; without the read's rule the model answered
//! with the delayed-ACK timer, one ACK per round trip after 2 s of this transfer.

mod common;

use tcplab_core::trace::reader::{TH_ACK, TH_SYN};

/// 10 Mb/s, 50 ms each way, the `linux` profile (receive buffer `linux`, timestamps: 1448-byte
/// segments), 400 segments with data segments 5 and 211 dropped once: after the second
/// recovery (about 2.2 s) the buffer sits at its clamp.
const NET: &str = "[topology]\nkind = \"single_link\"\nrate = \"10Mbps\"\ndelay = \"50ms\"\nqueue = 5000\n[tcp]\nprofile = \"linux\"\n";

#[test]
fn the_read_acknowledges_every_second_full_segment_when_the_window_would_not_advance() {
    let pcap = common::tmp("readack", "receiver.pcap");
    let apps = format!(
        "[[flows]]\nbytes = {}\ndrops = [{{kind = \"data\", segment = 5}}, {{kind = \"data\", segment = 211}}]\n[[capture]]\npath = {:?}\nnode = \"receiver\"\n",
        400 * 1448,
        pcap.to_str().unwrap()
    );
    let r = common::run_with(NET, &apps, 1);
    assert!(r.transfers.iter().all(|t| t.bytes_delivered == 400 * 1448 && !t.aborted), "the transfer completes");
    let segs = common::capture_segments(&pcap);
    // The receiver's view: data arriving (sport 10000), ACKs leaving (dport 10000).
    let isn = segs.iter().find(|s| s.sport == 10000 && s.flags & TH_SYN != 0).expect("SYN").seq;
    let (mut rcv_nxt, mut acked, mut unacked_full, mut worst, mut checked) = (0u64, 0u64, 0u32, 0u32, 0u32);
    let mut held: Vec<(u64, u64)> = Vec::new();
    for s in &segs {
        if s.sport == 10000 && s.payload > 0 {
            let off = s.seq.wrapping_sub(isn).wrapping_sub(1) as u64;
            let end = off + s.payload as u64;
            if off == rcv_nxt && held.is_empty() {
                // In order with nothing held above: the case of "more than one full frame".
                rcv_nxt = end;
                if s.payload == 1448 {
                    unacked_full += 1;
                    worst = worst.max(unacked_full);
                    checked += 1;
                }
            } else if end > rcv_nxt {
                // Out of order, or filling a hole (both acknowledged at once): track rcv_nxt.
                held.push((off.max(rcv_nxt), end));
                held.sort();
                while let Some(&(l, r)) = held.first() {
                    if l > rcv_nxt {
                        break;
                    }
                    rcv_nxt = rcv_nxt.max(r);
                    held.remove(0);
                }
            }
        } else if s.dport == 10000 && s.flags & TH_ACK != 0 && s.payload == 0 && s.flags & TH_SYN == 0 {
            let a = s.ack.wrapping_sub(isn).wrapping_sub(1) as u64;
            if a > acked {
                acked = a;
                unacked_full = 0;
            }
        }
    }
    assert!(checked >= 300, "in-order full segments seen: {checked}");
    // At most two full in-order segments are ever waiting for their ACK at an arrival: the
    // second is acknowledged at once (by __tcp_ack_snd_check or by the read).
    assert!(worst <= 2, "up to {worst} full segments arrived in order without an ACK");
}
