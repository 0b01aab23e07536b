//! Packet reordering by delay filters (`flows[i].delays`): a chosen packet is held back for a
//! while before it enters its first link, so the packets sent after it overtake it. This is how
//! ns-2's validation suites make reordering: an `ErrorModel` with `delay_pkt_` true hands the
//! chosen packet on `delay_` later instead of dropping it (`queue/errmodel.cc`; the suites
//! `newreno5` and `sack5` of `tcl/test/test-suite-newreno.tcl` delay one packet by 50 ms). The
//! receiver and sender rules it exercises are RFC 5681 §4.2 (an out-of-order segment is
//! acknowledged at once with a duplicate ACK) and §3.2 (three duplicate ACKs trigger fast
//! retransmit, even when the segment was only late).
//!
//! The path: 10 Mb/s, 10 ms each way; the `ns2` profile (no handshake, an ACK for every packet,
//! MSS 1000: a 1040-byte packet is serialised in 0.832 ms). Segment 5 goes out in the second
//! round of slow start right before segment 6.

mod common;

use tcplab_core::net::FLAG_ACK;
use tcplab_core::{RunResult, Scenario};

const NET: &str = r#"
[topology]
kind = "single_link"
rate = "10Mbps"
delay = "10ms"
"#;

/// A 30-segment transfer with `extra` in its flow table, captured at the receiver.
fn transfer(extra: &str, name: &str) -> (RunResult, Vec<tcplab_core::trace::reader::TcpSeg>) {
    let pcap = common::tmp("reorder", name);
    let flows = format!(
        "[[capture]]\nnode = \"receiver\"\npath = {:?}\n[[flows]]\nbytes = \"30000B\"\ntcp = {{ profile = \"ns2\", variant = \"newreno\" }}\n{extra}",
        pcap.to_str().unwrap()
    );
    let r = common::run_with(NET, &flows, 1);
    (r, common::capture_segments(&pcap))
}

/// Data segment numbers in the order they reach the receiver (its capture: what arrives).
fn arrivals(segs: &[tcplab_core::trace::reader::TcpSeg]) -> Vec<u32> {
    let isn = segs.iter().filter(|s| s.payload > 0).map(|s| s.seq).min().unwrap();
    segs.iter().filter(|s| s.payload > 0).map(|s| (s.seq - isn) / 1000 + 1).collect()
}

/// The duplicate ACKs the receiver sent: pure ACKs whose number repeats the previous one.
fn dup_acks(segs: &[tcplab_core::trace::reader::TcpSeg]) -> usize {
    let acks: Vec<u32> = segs.iter().filter(|s| s.payload == 0 && s.flags & FLAG_ACK != 0).map(|s| s.ack).collect();
    acks.windows(2).filter(|w| w[0] == w[1]).count()
}

#[test]
fn without_a_delay_segments_arrive_in_order() {
    let (r, segs) = transfer("", "none.pcap");
    assert_eq!(arrivals(&segs), (1..=30).collect::<Vec<_>>());
    assert_eq!(dup_acks(&segs), 0);
    assert_eq!(r.connections[0].retransmits, 0);
    assert_eq!(r.links.iter().map(|l| l.delayed_filter).sum::<u64>(), 0);
}

#[test]
fn a_short_delay_reorders_one_segment_without_a_retransmission() {
    // Held 1.5 ms: segment 6, sent 0.832 ms after it, overtakes it; segment 7 does not (it
    // leaves in the third round). One duplicate ACK (RFC 5681 §4.2), below the threshold.
    let (r, segs) = transfer("delays = [{ kind = \"data\", segment = 5, by = \"1.5ms\" }]", "short.pcap");
    let a = arrivals(&segs);
    assert_eq!(&a[..6], &[1, 2, 3, 4, 6, 5], "{a:?}");
    assert_eq!(a.len(), 30, "no segment arrives twice: {a:?}");
    assert_eq!(dup_acks(&segs), 1);
    let c = &r.connections[0];
    assert_eq!((c.retransmits, c.fast_retransmits, c.timeouts), (0, 0, 0));
    assert_eq!(c.ooo_segments, 1);
    assert_eq!(c.bytes_delivered, 30000);
    let fwd = r.links.iter().find(|l| l.delayed_filter > 0).expect("the sender's link held one packet");
    assert_eq!((fwd.delayed_filter, fwd.dropped_filter, fwd.dropped_pkts), (1, 0, 0));
}

#[test]
fn a_long_delay_brings_a_spurious_fast_retransmit() {
    // Held 30 ms, more than a round trip: the segments of the next round overtake it, three
    // duplicate ACKs reach the sender first, and it fast retransmits segment 5 (RFC 5681 §3.2),
    // which then reaches the receiver twice: once late, once retransmitted.
    let (r, segs) = transfer("delays = [{ kind = \"data\", segment = 5, by = \"30ms\" }]", "long.pcap");
    let a = arrivals(&segs);
    assert_eq!(a.iter().filter(|&&k| k == 5).count(), 2, "{a:?}");
    let first5 = a.iter().position(|&k| k == 5).unwrap();
    assert!(a[..first5].iter().filter(|&&k| k > 5).count() >= 3, "{a:?}");
    assert!(dup_acks(&segs) >= 3);
    let c = &r.connections[0];
    assert_eq!((c.retransmits, c.fast_retransmits, c.timeouts), (1, 1, 0));
    assert_eq!(c.dup_segments, 1);
    assert_eq!(c.bytes_delivered, 30000);
}

#[test]
fn only_the_chosen_transmission_is_held() {
    // `transmissions = [2]` selects the retransmission of segment 5, which a drop of its first
    // transmission brings about; the first transmission passes untouched by the delay filter.
    let (r, segs) = transfer(
        "drops = [{ kind = \"data\", segment = 5 }]\ndelays = [{ kind = \"data\", segment = 5, transmissions = [2], by = \"5ms\" }]",
        "second.pcap",
    );
    let c = &r.connections[0];
    assert_eq!(c.retransmits, 1);
    assert_eq!(c.bytes_delivered, 30000);
    let l = r.links.iter().find(|l| l.dropped_filter > 0).unwrap();
    assert_eq!((l.dropped_filter, l.delayed_filter), (1, 1));
    assert_eq!(arrivals(&segs).iter().filter(|&&k| k == 5).count(), 1);
}

#[test]
fn delays_are_refused_with_their_key_path() {
    let e = |flow: &str| Scenario::from_toml(&format!("{NET}[[flows]]\nbytes = \"30000B\"\n{flow}"), &[]).unwrap_err();
    let x = e("delays = [{ kind = \"data\", segment = 5 }]");
    assert_eq!(x.path, "flows[0].delays[0]");
    assert!(x.message.contains("`by`"), "{}", x.message);
    let x = e("delays = [{ kind = \"data\", segment = 5, by = \"0s\" }]");
    assert_eq!(x.path, "flows[0].delays[0].by");
    let x = e("delays = [{ kind = \"data\", segment = 5, by = \"-1ms\" }]");
    assert!(x.path.starts_with("flows[0].delays[0].by"), "{x}");
    let x = e("delays = [{ kind = \"data\", by = \"1ms\" }]");
    assert_eq!(x.path, "flows[0].delays[0]");
    let x = e("delays = [{ kind = \"data\", segment = 5, by = \"1ms\", transfer = 2 }]");
    assert_eq!(x.path, "flows[0].delays[0].transfer");
    let x = e("drops = [{ kind = \"data\", segment = 5, by = \"1ms\" }]");
    assert_eq!(x.path, "flows[0].drops[0].by");
    let x = e("delays = [{ kind = \"data\", segment = 5, by = \"nanms\" }]");
    assert!(x.path.starts_with("flows[0].delays[0].by"), "{x}");
}
