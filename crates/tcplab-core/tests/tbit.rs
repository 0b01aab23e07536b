//! TBIT's Early Retransmit test at the packet level, through the simulated TBIT server
//! (`tcplab_core::tbit`), for every SACK-based recovery: RFC 5827 §3.2 lowers the duplicate-ACK
//! threshold to (outstanding segments − 1) when fewer than four segments are outstanding and
//! nothing new can be sent, so one duplicate ACK (SACKing packet 3) resends packet 2 at once.
//! FACK (Rate-Halving and ns-2's) used to ignore `early_retransmit`: their thresholds read the
//! configured DupThresh instead of the lowered one.

use tcplab_core::net::FLAG_ACK;
use tcplab_core::tbit::{resolve, segment, SimServer, SYN};
use tcplab_core::units::{Time, MS, SEC};

const MSS: u64 = 1000;

/// Request 2·MSS bytes (3 packets with the header), ACK packet 1, one duplicate ACK SACKing
/// packet 3. Returns how long after the duplicate ACK packet 2 came back, within 0.5 s.
fn er_delay(spec: &str) -> Option<Time> {
    let mut s = SimServer::new(resolve(spec).unwrap(), 5 * MS, 100_000);
    s.send(segment(SYN, 0, 0, 0, 65535, &[], true), Some(MSS), None);
    let synack = s.recv(SEC).unwrap();
    assert!(synack.seg.sack_permitted, "{spec}: SACK agreed");
    let req = "GET / HTTP/1.1\r\nRange: bytes=0-1999\r\n\r\n";
    let n = s.response_size(req);
    s.send(segment(FLAG_ACK, 1, 1, req.len() as u32, 65535, &[], false), None, Some(n));
    let ours = 1 + req.len() as u64;
    let mut seen = Vec::new();
    while let Some(x) = s.recv(50 * MS) {
        if x.seg.len > 0 {
            seen.push((x.seg.seq, x.seg.len));
        }
    }
    assert_eq!(seen, [(1, 1000), (1001, 1000), (2001, 200)], "{spec}: three packets in the first flight");
    s.send(segment(FLAG_ACK, ours, 1001, 0, 65535, &[], false), None, None);
    let dup_at = s.now();
    s.send(segment(FLAG_ACK, ours, 1001, 0, 65535, &[(2001, 2201)], false), None, None);
    while let Some(x) = s.recv(500 * MS) {
        if x.time > dup_at + 500 * MS {
            break;
        }
        if x.seg.len > 0 && x.seg.seq == 1001 {
            return Some(x.time - dup_at);
        }
    }
    None
}

#[test]
fn early_retransmit_with_every_sack_recovery() {
    for preset in ["sack-iw-lt-abc1-er", "sack1", "fack-rh", "fack"] {
        let on = format!(r#"{{"preset": "{preset}", "early_retransmit": true, "initial_window": 3}}"#);
        let off = format!(r#"{{"preset": "{preset}", "early_retransmit": false, "initial_window": 3}}"#);
        assert_eq!(er_delay(&on), Some(10 * MS), "{preset}: ER resends packet 2 one round trip after the duplicate ACK");
        assert_eq!(er_delay(&off), None, "{preset}: without ER one duplicate ACK is not enough");
    }
}
