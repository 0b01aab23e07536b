//! Seddigh & Devetsikiotis 2001 §3 (TARGETS.md §4.1): a 10 KB fetch by a Linux 2.2 client from a
//! VxWorks server across a LAN, with the SYN, the SYN-ACK or the GET dropped. Each drop costs one
//! initial RTO of the end that repairs it: the client's 3 s for the SYN and the GET, the server's
//! 6 s for the SYN-ACK, because a 4.4BSD-derived server drops the client's retransmitted SYN in
//! SYN-RECEIVED (`tcp.synack_on_dup_syn = false`) where Linux answers it with the SYN-ACK again.
//! Also the `server_tcp` key that gives the two ends different stacks, and its errors.

mod common;

use tcplab_core::net::{FLAG_ACK, FLAG_SYN};
use tcplab_core::{run, RunResult, Scenario};

const NET: &str = r#"
[topology]
kind = "single_link"
rate = "10Mbps"
delay = "1ms"
"#;

fn fetch(server_profile: &str, drop: &str, pcap: Option<&std::path::Path>) -> RunResult {
    let drops = if drop.is_empty() { String::new() } else { format!("drops = [{{ kind = \"{drop}\" }}]\n") };
    let capture = pcap.map_or(String::new(), |p| format!("[[capture]]\nnode = \"receiver\"\npath = {:?}\n", p.to_str().unwrap()));
    let apps = format!(
        "{capture}[[apps]]\nkind = \"reqresp\"\nrequest = \"300B\"\nresponse = \"10KB\"\ntcp = {{ profile = \"linux22\" }}\nserver_tcp = {{ profile = \"{server_profile}\" }}\n{drops}"
    );
    common::run_with(NET, &apps, 1)
}

/// The fetch time: from the client's SYN to the whole response delivered.
fn fetch_s(r: &RunResult) -> f64 {
    let o = &r.objects[0];
    assert_eq!(o.bytes_delivered, 10 * 1024, "{o:?}");
    o.delivered_s.unwrap() - o.start_s
}

#[test]
fn each_drop_costs_the_initial_rto_of_the_end_that_repairs_it() {
    let base = fetch_s(&fetch("vxworks54", "", None));
    assert!(base < 0.5, "a LAN fetch without loss: {base}");
    // SYN lost: the Linux 2.2 client retransmits it after its initial RTO of 3 s (§3 obs. 1).
    let syn = fetch_s(&fetch("vxworks54", "syn", None)) - base;
    assert!((syn - 3.0).abs() < 0.01, "SYN drop adds {syn}");
    // GET lost: Linux 2.2 takes no RTT sample from the handshake, so the GET waits 3 s (obs. 3).
    let get = fetch_s(&fetch("vxworks54", "request", None)) - base;
    assert!((get - 3.0).abs() < 0.01, "GET drop adds {get}");
    // SYN-ACK lost: the client's SYN goes again at 3 s, the VxWorks server ignores it, and its
    // own SYN-ACK timer (6 s on the 500 ms tick, from time 0) repairs the loss (obs. 2).
    let synack = fetch_s(&fetch("vxworks54", "synack", None)) - base;
    assert!((synack - 6.0).abs() < 0.01, "SYN-ACK drop adds {synack}");
    // A Linux server answers the retransmitted SYN at once: the loss costs the client's 3 s, and
    // the server, whose SYN-ACK went again, starts from one segment (RFC 5681 §3.1): a few round
    // trips and a delayed ACK more, well under the 6 s of the BSD server.
    let linux = fetch_s(&fetch("linux22", "synack", None)) - fetch_s(&fetch("linux22", "", None));
    assert!((3.0..3.5).contains(&linux), "SYN-ACK drop, Linux server: {linux}");
}

#[test]
fn a_bsd_server_drops_the_retransmitted_syn_on_the_wire() {
    let pcap = common::tmp("seddigh", "synack.pcap");
    fetch("vxworks54", "synack", Some(&pcap));
    let segs = common::capture_segments(&pcap);
    let t = |f: &dyn Fn(u8) -> bool| segs.iter().filter(|s| f(s.flags)).map(|s| s.ts_ns as f64 / 1e9).collect::<Vec<f64>>();
    let syns = t(&|f| f & FLAG_SYN != 0 && f & FLAG_ACK == 0);
    let synacks = t(&|f| f & FLAG_SYN != 0 && f & FLAG_ACK != 0);
    // At the client: its SYN at 0 and 3 s; the only SYN-ACK to arrive is the server's
    // retransmission at 6 s (the first was dropped as it left the server).
    assert_eq!(syns.len(), 2, "{syns:?}");
    assert!((syns[1] - syns[0] - 3.0).abs() < 0.001, "{syns:?}");
    assert_eq!(synacks.len(), 1, "{synacks:?}");
    assert!((synacks[0] - 6.0).abs() < 0.01, "{synacks:?}");
}

#[test]
fn server_tcp_errors_name_the_key() {
    let bad = [
        ("server_tcp = { rto_initial = \"0s\" }\n", "apps[0].server_tcp.rto_initial"),
        ("server_tcp = { profile = \"os2\" }\n", "apps[0].server_tcp.profile"),
        ("server_tcp = { handshake = false }\n", "apps[0].server_tcp.handshake"),
        ("server_tcp = { mss = 0 }\n", "apps[0].server_tcp.mss"),
    ];
    for (extra, path) in bad {
        let text = format!("{NET}[[apps]]\nkind = \"reqresp\"\nresponse = \"1KB\"\n{extra}");
        let e = Scenario::from_toml(&text, &[]).and_then(|s| run(&s, 1).map(|_| ())).unwrap_err().to_string();
        assert!(e.contains(path), "{extra}: {e}");
    }
    let udp = format!("duration = \"1s\"\n{NET}[[apps]]\nkind = \"cbr\"\nrate = \"1Mbps\"\nserver_tcp = {{ mss = 500 }}\n");
    let e = Scenario::from_toml(&udp, &[]).and_then(|s| run(&s, 1).map(|_| ())).unwrap_err().to_string();
    assert!(e.contains("apps[0].server_tcp"), "{e}");
}

/// The data segments a node sends in its first flight: those within 2 ms of its first one.
fn first_flight(pcap: &std::path::Path, from_port_range: std::ops::RangeInclusive<u16>) -> usize {
    let segs = common::capture_segments(pcap);
    let data: Vec<f64> = segs.iter().filter(|s| s.payload > 0 && from_port_range.contains(&s.sport)).map(|s| s.ts_ns as f64 / 1e9).collect();
    data.iter().filter(|&&t| t - data[0] < 0.002).count()
}

fn sent_by(net_node: &str, body: &str, name: &str) -> std::path::PathBuf {
    let pcap = common::tmp("seddigh-iw", name);
    let text = format!(
        "[topology]\nkind = \"single_link\"\nrate = \"1Gbps\"\ndelay = \"10ms\"\n[[capture]]\nnode = \"{net_node}\"\npath = {:?}\n{body}",
        pcap.to_str().unwrap()
    );
    tcplab_core::run(&Scenario::from_toml(&text, &[]).unwrap(), 1).unwrap();
    pcap
}

/// RFC 5681 §3.1: after a lost SYN the sender's initial window is one segment; Linux
/// (`tcp_init_transfer()`, the `linux` profile's `iw_one_after = 2`) only after a second one.
#[test]
fn a_lost_syn_makes_the_iw_one_segment_after_iw_one_after_retransmissions() {
    let flow = |tcp: &str, tx: &str| format!("[[flows]]\nbytes = \"40KB\"\ntcp = {{ {tcp} }}\ndrops = [{{ kind = \"syn\", transmissions = {tx} }}]\n");
    let all = 0..=u16::MAX;
    assert_eq!(first_flight(&sent_by("sender", &flow("profile = \"rfc\", mss = 1000", "[1]"), "rfc1.pcap"), all.clone()), 1);
    assert_eq!(first_flight(&sent_by("sender", &flow("profile = \"linux\", mss = 1000", "[1]"), "linux1.pcap"), all.clone()), 10);
    assert_eq!(first_flight(&sent_by("sender", &flow("profile = \"linux\", mss = 1000", "[1, 2]"), "linux2.pcap"), all.clone()), 1);
    assert_eq!(first_flight(&sent_by("sender", &flow("profile = \"rfc\", mss = 1000, iw_one_after = 0", "[1, 2]"), "never.pcap"), all), 4);
}

/// RFC 5681 §3.1 for the passive end: a server whose SYN-ACK was lost answers with one segment.
#[test]
fn a_lost_synack_makes_the_servers_iw_one_segment() {
    let app = |drop: &str| format!("[[apps]]\nkind = \"reqresp\"\nresponse = \"40KB\"\ntcp = {{ profile = \"rfc\", mss = 1000 }}\n{drop}");
    // The server ("sender") answers from its listening port, below the clients' 40000 range.
    let server = 0..=39_999u16;
    assert_eq!(first_flight(&sent_by("sender", &app(""), "clean.pcap"), server.clone()), 4);
    assert_eq!(first_flight(&sent_by("sender", &app("drops = [{ kind = \"synack\" }]\n"), "synack.pcap"), server), 1);
}
