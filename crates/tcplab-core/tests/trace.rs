//! Captures written by simulations, read back by the analyser: its figures must equal the
//! simulator's own instruments (retransmitted segments and bytes, bytes delivered, transfer time,
//! initial window, handshake retransmissions), for every recovery flavour; writing a capture must
//! not change a run, and the same seed must give the same bytes.

use serde_json::Value;
use std::path::PathBuf;
use tcplab_core::trace::analyze_path;
use tcplab_core::{run, RunResult, Scenario};

/// A fresh file name in a directory of this test process (tests run in parallel).
fn tmp(name: &str) -> PathBuf {
    static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let d = std::env::temp_dir().join(format!("tcplab-trace-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d.join(format!("{}-{name}", N.fetch_add(1, std::sync::atomic::Ordering::Relaxed)))
}

fn scenario(variant: &str, extra_flow: &str, caps: &[(&str, &str)], loss: f64) -> Scenario {
    let mut text = format!(
        r#"
name = "t"
[topology]
kind = "single_link"
rate = "10Mbps"
delay = "20ms"
queue = 40
loss = {loss}
[tcp]
variant = "{variant}"
[[flows]]
bytes = "300KB"
{extra_flow}
"#
    );
    for (path, at) in caps {
        text += &format!("[[capture]]\npath = {path:?}\n{at}\n");
    }
    Scenario::from_toml(&text, &[]).unwrap_or_else(|e| panic!("{e}"))
}

fn conn(report: &Value) -> &Value {
    let c = report["connections"].as_array().unwrap();
    assert_eq!(c.len(), 1, "one connection expected");
    &c[0]
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not an integer: {v}"))
}

fn near(a: f64, b: f64) {
    assert!((a - b).abs() < 1e-9, "{a} != {b}");
}

/// Run with captures at both endpoints; return the result and the two analyses.
fn run_both(variant: &str, extra: &str, loss: f64, seed: u64) -> (RunResult, Value, Value) {
    let tx = tmp(&format!("{variant}-{seed}-tx.pcap"));
    let rx = tmp(&format!("{variant}-{seed}-rx.pcap"));
    let s = scenario(variant, extra, &[(tx.to_str().unwrap(), "node = \"sender\""), (rx.to_str().unwrap(), "node = \"receiver\"")], loss);
    let r = run(&s, seed).unwrap();
    let a = analyze_path(tx.to_str().unwrap()).unwrap();
    let b = analyze_path(rx.to_str().unwrap()).unwrap();
    (r, a, b)
}

fn check_consistency(variant: &str, extra: &str, loss: f64, seed: u64) -> (RunResult, Value, Value) {
    let (r, a, b) = run_both(variant, extra, loss, seed);
    let c = &r.connections[0];
    let t = &r.transfers[0];
    let ca = conn(&a);
    let cb = conn(&b);
    assert_eq!(ca["data_dir"], "a2b");
    // Retransmissions, as the sender sent them.
    assert_eq!(u(&ca["rexmt_segs"]), c.retransmits, "{variant}: retransmitted segments");
    assert_eq!(u(&ca["rexmt_bytes"]), c.retransmitted_bytes, "{variant}: retransmitted bytes");
    assert_eq!(u(&ca["a2b_data_segs"]), c.segs_sent, "{variant}: data segments");
    // Bytes delivered: unique bytes at the receiver.
    assert_eq!(u(&cb["unique_bytes"]), c.bytes_delivered, "{variant}: bytes delivered");
    assert_eq!(u(&ca["unique_bytes"]), c.bytes_delivered);
    // Transfer time: SYN sent (sender's capture) to the last byte in order (receiver's).
    let start = f(&ca["first_s"]);
    near(start, t.start_s);
    near(f(&cb["a2b_data_complete_s"]), t.delivered_s.unwrap());
    near(f(&cb["a2b_data_complete_s"]) - start, t.transfer_time_s.unwrap());
    // The sender's view: everything acknowledged.
    near(f(&ca["transfer_time_s"]), t.acked_s.unwrap() - t.start_s);
    // Handshake.
    assert_eq!(u(&ca["syn_retransmits"]), c.syn_retransmits);
    assert_eq!(u(&cb["synack_retransmits"]), c.synack_retransmits);
    // The receiver's view of out-of-order arrivals is the receiver's own count.
    assert_eq!(u(&cb["a2b_above_hole_segs"]), c.ooo_segments, "{variant}: segments above a hole at the receiver");
    (r, a, b)
}

#[test]
fn analyser_equals_instruments_reno_newreno_tahoe() {
    let drops = "drops = [{ kind = \"data\", segment = 30 }, { kind = \"data\", segment = 33 }, { kind = \"data\", segment = 120, transmissions = [1, 2] }]";
    for variant in ["reno", "newreno", "tahoe"] {
        let (r, a, _) = check_consistency(variant, drops, 0.0, 1);
        assert!(r.connections[0].retransmits >= 3, "{variant}: the drops made retransmissions");
        // Initial window: rfc3390 at MSS 1460 is 3 segments.
        assert_eq!(u(&conn(&a)["iw_segs"]), 3);
        assert!(u(&conn(&a)["loss_events"]) >= 3, "{variant}");
        for seed in [2, 3] {
            check_consistency(variant, "", 0.02, seed);
        }
    }
}

#[test]
fn lost_syn_iw_one_and_handshake_intervals() {
    let (r, a, _) = check_consistency("newreno", "drops = [{ kind = \"syn\", transmissions = [1, 2] }]", 0.0, 1);
    let c = conn(&a);
    assert_eq!(r.connections[0].syn_retransmits, 2);
    assert_eq!(u(&c["syn_retransmits"]), 2);
    near(f(&c["syn_rto_s"]), 1.0);
    near(f(&c["syn_backoff"]), 2.0);
    // RFC 5681 §3.1: a lost SYN leaves an initial window of one segment.
    assert_eq!(u(&c["iw_segs"]), 1);
    assert_eq!(u(&c["loss_events"]), 2);
    // A lost SYN-ACK, seen where it is sent: the receiver's timer (1 s) and the sender's
    // retransmitted SYN both bring one.
    let (r, _, b) = check_consistency("reno", "drops = [{ kind = \"synack\" }]", 0.0, 1);
    assert_eq!(u(&conn(&b)["synack_retransmits"]), r.connections[0].synack_retransmits);
    assert!((f(&conn(&b)["synack_rto_s"]) - 1.0).abs() < 1e-6);
}

#[test]
fn initial_window_as_configured() {
    for iw in [1, 2, 4, 10] {
        let (_, a, _) = check_consistency("newreno", &format!("tcp = {{ initial_window = {iw} }}"), 0.0, 1);
        assert_eq!(u(&conn(&a)["iw_segs"]), iw);
    }
}

#[test]
fn capture_does_not_change_the_run_and_is_deterministic() {
    let base = scenario("newreno", "", &[], 0.02);
    let r0 = serde_json::to_value(run(&base, 7).unwrap()).unwrap();
    let p1 = tmp("det1.pcap");
    let p2 = tmp("det2.pcapng");
    let caps = [(p1.to_str().unwrap(), "link = \"link\"\npoint = \"ingress\""), (p2.to_str().unwrap(), "link = \"link:sender->receiver\"\nformat = \"pcapng\"\npayload = true")];
    let with = scenario("newreno", "", &caps, 0.02);
    let mut r1 = serde_json::to_value(run(&with, 7).unwrap()).unwrap();
    // A run with a capture moves every packet by events (net/vfifo.rs): the same run in more
    // events.
    assert!(r1["meta"]["events"].as_u64() > r0["meta"]["events"].as_u64());
    r1["meta"]["events"] = r0["meta"]["events"].clone();
    for k in ["meta", "connections", "links", "transfers"] {
        assert_eq!(r0[k], r1[k], "{k} changed by capturing");
    }
    let b1 = std::fs::read(&p1).unwrap();
    let b2 = std::fs::read(&p2).unwrap();
    run(&with, 7).unwrap();
    assert_eq!(b1, std::fs::read(&p1).unwrap(), "same seed, same pcap bytes");
    assert_eq!(b2, std::fs::read(&p2).unwrap());
    // Ingress of both directions: every packet offered, the dropped ones included.
    let links = &r1["links"];
    let offered: u64 = links.as_array().unwrap().iter().map(|l| l["offered_pkts"].as_u64().unwrap()).sum();
    let a = analyze_path(p1.to_str().unwrap()).unwrap();
    assert_eq!(a["reader"]["packets"].as_u64().unwrap(), offered);
    // Egress with payload, pcapng: the packets sent on the forward direction.
    let a = analyze_path(p2.to_str().unwrap()).unwrap();
    assert_eq!(a["reader"]["format"], "pcapng");
    assert_eq!(a["reader"]["packets"].as_u64().unwrap(), links[0]["sent_pkts"].as_u64().unwrap());
    let wire: u64 = links[0]["sent_bytes"].as_u64().unwrap();
    let c = conn(&a);
    assert_eq!(u(&c["a2b_ip_bytes"]), wire, "IP bytes on the wire equal the simulator's packet bytes");
    run(&with, 8).unwrap();
    assert_ne!(b1, std::fs::read(&p1).unwrap(), "another seed, other ISNs and losses");
}

#[test]
fn capture_errors_name_the_key() {
    let bad = |at: &str| {
        let text = format!("[topology]\nkind = \"single_link\"\nrate = \"1Mbps\"\ndelay = \"1ms\"\n[[flows]]\nbytes = 1000\n[[capture]]\npath = \"x.pcap\"\n{at}\n");
        Scenario::from_toml(&text, &[]).unwrap_err()
    };
    assert_eq!(bad("node = \"moon\"").path, "capture[0].node");
    assert_eq!(bad("link = \"wire\"").path, "capture[0].link");
    assert_eq!(bad("node = \"sender\"\npoint = \"egress\"").path, "capture[0].point");
    assert_eq!(bad("link = \"link\"\npoint = \"middle\"").path, "capture[0].point");
    assert_eq!(bad("node = \"sender\"\nlink = \"link\"").path, "capture[0]");
    assert_eq!(bad("colour = 1").path, "capture[0].colour");
    // A scenario's capture stays inside the working directory (S1): no absolute path, no `..`
    // (the check the front ends make on every scenario they read).
    for path in ["/tmp/x.pcap", "../x.pcap", "a/../../x.pcap", "/etc/passwd"] {
        let text = format!("[topology]\nkind = \"single_link\"\nrate = \"1Mbps\"\ndelay = \"1ms\"\n[[flows]]\nbytes = 1000\n[[capture]]\npath = {path:?}\n");
        let s = Scenario::from_toml(&text, &[]).unwrap();
        let e = tcplab_core::trace::capture::check_paths(&s.capture).unwrap_err();
        assert_eq!(e.path, "capture[0].path", "{path}");
        assert!(e.message.contains("must be relative") && e.message.contains("--pcap"), "{path}: {}", e.message);
    }
}

/// RFC 7323 on the wire: a `linux6` transfer's capture carries the timestamps option on every
/// segment (SACK-permitted and TS packed on the SYN), TSval from the 1 ms clock, 1448-byte
/// payloads, 1500-byte IP packets; read back by the reader (`parse_options`). tshark's decoding of
/// the same file is checked in tests/test_trace.py.
#[test]
fn timestamps_are_written_into_captures() {
    use tcplab_core::trace::reader::{decode, CaptureReader};
    let path = tmp("ts.pcap");
    let text = format!(
        "name = \"ts\"\n[topology]\nkind = \"single_link\"\nrate = \"10Mbps\"\ndelay = \"10ms\"\nqueue = 100\n[tcp]\nprofile = \"linux6\"\n[[flows]]\nbytes = \"30KB\"\n[[capture]]\npath = {:?}\nnode = \"sender\"\n",
        path.to_str().unwrap()
    );
    let s = Scenario::from_toml(&text, &[]).unwrap_or_else(|e| panic!("{e}"));
    run(&s, 1).unwrap();
    let mut r = CaptureReader::new(std::fs::File::open(&path).unwrap()).unwrap();
    let (mut n, mut data, mut last_tsval) = (0, 0, 0u32);
    while let Some(f) = r.next_frame().unwrap() {
        let t = decode(&f).unwrap();
        n += 1;
        assert!(t.timestamps, "frame {n}: no timestamps option");
        let ours = t.payload > 0 || (t.flags & 0x02 != 0 && t.flags & 0x10 == 0);
        if ours {
            // Captured as it leaves the sender: TSval is the 1 ms clock then, and runs forward.
            assert!(t.tsval >= last_tsval, "TSval runs forward");
            last_tsval = t.tsval;
            assert_eq!(t.tsval as i64, t.ts_ns / 1_000_000, "TSval is the 1 ms clock of the sender");
        }
        if t.flags & 0x02 != 0 && t.flags & 0x10 == 0 {
            assert!(t.sack_permitted && t.mss == Some(1460));
            assert_eq!(t.tsecr, 0, "RFC 7323 §3.2: TSecr 0 on a SYN");
        }
        if t.payload == 1448 {
            data += 1;
            assert_eq!(t.ip_len, 1500);
            assert!(t.tsecr > 0, "data echoes the peer's TSval");
        }
    }
    assert!(data >= 20, "30 KB in 1448-byte segments: {data}");
}
