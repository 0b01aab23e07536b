//! What a capture of the `linux` profile's handshake and windows shows, against the kernel's own
//! captures on the testbed (docs/testbed.md; a 50 Mb/s, 100 ms run of the `cwnd` experiment):
//!
//! - the SYN and the SYN-ACK are 60 bytes, their options MSS, SACK-permitted, timestamps, NOP and
//!   window scale 10 (`tcp_syn_options`, `tcp_synack_options`; `tcp_select_initial_window` over
//!   tcp_rmem[2] = 32 MB: ilog2(32 MB) − 15);
//! - the window field of a SYN is never scaled (RFC 7323 §2.2): 65,160 on the SYN-ACK;
//! - the client acknowledges the SYN-ACK with a pure ACK of 52 bytes before its first data
//!   segment (`tcp_rcv_synsent_state_process` → `tcp_send_ack`, no write pending);
//! - every later window field is the window in bytes shifted right by 10: the receiver's first
//!   ACKs carry 67, 70, 73, 75 and 78, rcv_ssthresh growing by 2·1448 bytes a segment from 65,160
//!   (`tcp_grow_window`) and the window aligned up to 1024 bytes (`__tcp_select_window`), the
//!   kernel's sequence.
//!
//! A profile without Linux's receive buffer writes no window scale option; neither does one with
//! it whose SYNs do not count the option's bytes (`syn_options` 8 with SACK), whose SYN stays the
//! simulated packet, byte for byte.

mod common;

use tcplab_core::trace::reader::{TcpSeg, TH_ACK, TH_SYN};

const NET: &str = "[topology]\nkind = \"single_link\"\nrate = \"50Mbps\"\ndelay = \"50ms\"\nqueue = 5000\n[tcp]\nprofile = \"PROFILE\"\n";

fn capture(profile: &str, name: &str) -> Vec<TcpSeg> {
    capture_with(profile, "", name)
}

fn capture_with(profile: &str, tcp: &str, name: &str) -> Vec<TcpSeg> {
    let pcap = common::tmp("wscale", name);
    let apps = format!("[[flows]]\nbytes = {}\n[[capture]]\npath = {:?}\nnode = \"sender\"\n", 40 * 1448, pcap.to_str().unwrap());
    let r = common::run_with(&(NET.replace("PROFILE", profile) + tcp), &apps, 1);
    assert_eq!(r.transfers[0].bytes_delivered, 40 * 1448);
    common::capture_segments(&pcap)
}

#[test]
fn linux_handshake_options_pure_ack_and_scaled_windows_as_the_kernel_writes_them() {
    let segs = capture("linux", "linux.pcap");
    let syn = segs[0];
    let synack = segs[1];
    assert_eq!((syn.flags & (TH_SYN | TH_ACK), synack.flags & (TH_SYN | TH_ACK)), (TH_SYN, TH_SYN | TH_ACK));
    for s in [syn, synack] {
        assert_eq!((s.ip_len, s.mss, s.wscale, s.sack_permitted, s.timestamps), (60, Some(1460), Some(10), true, true), "{s:?}");
    }
    assert_eq!(synack.window, 65_160, "tcp_select_initial_window: 45 · 1448, unscaled on the SYN-ACK");
    // The client's next segment: the pure ACK of the SYN-ACK, then its data.
    let (ack, data) = (segs[2], segs[3]);
    assert_eq!((ack.sport, ack.payload, ack.ip_len, ack.flags & TH_ACK), (10000, 0, 52, TH_ACK));
    assert_eq!((data.sport, data.payload, data.ip_len), (10000, 1448, 1500));
    assert!(ack.ts_ns <= data.ts_ns);
    // The receiver's first five ACKs of data: the kernel's window fields.
    let windows: Vec<u16> = segs.iter().skip(2).filter(|s| s.dport == 10000 && s.flags & TH_SYN == 0).take(5).map(|s| s.window).collect();
    assert_eq!(windows, [67, 70, 73, 75, 78]);
}

#[test]
fn without_linuxs_receive_buffer_no_window_scale() {
    let segs = capture("rfc", "rfc.pcap");
    assert!(segs.iter().all(|s| s.wscale.is_none()));
    assert_eq!(segs[0].ip_len, 48, "MSS and SACK-permitted: 8 option bytes");
}

#[test]
fn linuxs_receive_buffer_without_room_for_the_option_writes_none() {
    // rfc6675-iw10 (no timestamps, SYN options 8) with Linux's receiver and receive buffer: the
    // window is Linux's, but the SYN has no room for the option: 48 bytes, as simulated.
    let segs = capture_with("rfc6675-iw10", "delack_model = \"linux\"\nrcv_buffer = \"linux\"\n", "room.pcap");
    assert!(segs.iter().all(|s| s.wscale.is_none()));
    assert_eq!((segs[0].ip_len, segs[1].ip_len), (48, 48));
    // Unscaled, the receiver's windows are written clamped to 65,535.
    assert!(segs.iter().filter(|s| s.dport == 10000 && s.flags & TH_SYN == 0).all(|s| s.window == 65_535));
}
