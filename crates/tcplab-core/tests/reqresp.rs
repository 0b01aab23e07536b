//! Request/response applications (`[[apps]] kind = "reqresp"`) through the whole world: the exact
//! segments of an exchange as the client's node sees them, a dropped GET recovered by the initial
//! RTO (Seddigh et al. §3, TARGETS.md §4.1), every object's bytes delivered once, connection state
//! freed after each exchange, determinism, and the schema's errors with their key paths.

mod common;

use common::run_with;
use std::path::PathBuf;
use tcplab_core::net::{FLAG_ACK, FLAG_FIN, FLAG_SYN};
use tcplab_core::result::ObjectRow;
use tcplab_core::{run, RunResult, Scenario, World};

const NET: &str = r#"
[topology]
kind = "single_link"
rate = "1Gbps"
delay = "10ms"
[tcp]
mss = 1000
"#;

fn run_apps(apps: &str, seed: u64) -> RunResult {
    run_with(NET, apps, seed)
}

fn tmp(name: &str) -> PathBuf {
    common::tmp("reqresp", name)
}

/// Seconds to whole milliseconds (the link's serialisation adds microseconds).
fn ms(t: f64) -> u64 {
    (t * 1000.0).floor() as u64
}

#[test]
fn an_exchange_on_the_wire_exact_segments_both_ways() {
    // The client ("receiver") asks for 2500 bytes with a 300-byte GET; the server answers once
    // the GET is delivered, then closes; the client closes when it sees the server's FIN.
    let pcap = tmp("exchange.pcap");
    let r = run_apps(
        &format!(
            "[[capture]]\npath = {:?}\nnode = \"receiver\"\n[[apps]]\nkind = \"reqresp\"\nrequest = \"300B\"\nresponse = \"2500B\"\n",
            pcap.to_string_lossy()
        ),
        1,
    );
    let segs = common::capture_segments(&pcap);
    // Relative sequence numbers from each side's ISN (its SYN or SYN-ACK).
    let from_client = |s: &tcplab_core::trace::reader::TcpSeg| s.dport == 5001;
    let isn_c = segs.iter().find(|s| from_client(s)).unwrap().seq;
    let isn_s = segs.iter().find(|s| !from_client(s)).unwrap().seq;
    let got: Vec<String> = segs
        .iter()
        .map(|s| {
            let c = from_client(s);
            let (own, peer) = if c { (isn_c, isn_s) } else { (isn_s, isn_c) };
            let mut f = String::new();
            for (bit, ch) in [(FLAG_SYN, "S"), (FLAG_FIN, "F"), (FLAG_ACK, ".")] {
                if s.flags & bit != 0 {
                    f += ch;
                }
            }
            let ack = if s.flags & FLAG_ACK != 0 { s.ack.wrapping_sub(peer) } else { 0 };
            format!("{:>3}ms {} {f} seq={} ack={ack} len={}", s.ts_ns / 1_000_000, if c { "c>s" } else { "s>c" }, s.seq.wrapping_sub(own), s.payload)
        })
        .collect();
    let want = [
        "  0ms c>s S seq=0 ack=0 len=0",         // SYN
        " 20ms s>c S. seq=0 ack=1 len=0",        // SYN-ACK
        " 20ms c>s . seq=1 ack=1 len=0",         // the handshake's last ACK, as connect() returns
        " 20ms c>s . seq=1 ack=1 len=300",       // then the GET
        " 40ms s>c . seq=1 ack=301 len=1000",    // the response carries the GET's ACK
        " 40ms s>c . seq=1001 ack=301 len=1000", //   (IW of RFC 3390: the whole response at once)
        " 40ms c>s . seq=301 ack=2001 len=0",    // RFC 5681 §4.2: an ACK every second segment
        " 40ms s>c . seq=2001 ack=301 len=500",  //   (sent as the second arrives, 8 µs before the third)
        " 40ms s>c F. seq=2501 ack=301 len=0",   // the server closes after its response
        " 40ms c>s . seq=301 ack=2502 len=0",    // the FIN is acknowledged at once
        " 40ms c>s F. seq=301 ack=2502 len=0",   // and the client closes in turn
        " 60ms s>c . seq=2502 ack=302 len=0",    // the server acknowledges the client's FIN
    ];
    assert_eq!(got, want, "\n{}", got.join("\n"));
    let o = &r.objects[0];
    assert_eq!((o.object, o.request_bytes, o.response_bytes, o.bytes_delivered), (1, 300, 2500, 2500));
    assert_eq!((ms(o.start_s), ms(o.request_s.unwrap()), ms(o.first_byte_s.unwrap()), ms(o.delivered_s.unwrap())), (0, 20, 40, 40));
    // T_LAST_ACK: the client's ACK of the last byte reaches the server one way later.
    assert_eq!(ms(o.acked_s.unwrap()), 50);
    assert!((o.transfer_time_s.unwrap() - (o.acked_s.unwrap() - o.request_s.unwrap())).abs() < 1e-12);
    assert_eq!((o.retransmits, o.timeouts, o.handshake_retransmitted, o.request_retransmitted, o.aborted), (0, 0, false, false, false));
    assert!(r.meta.completed);
    let _ = std::fs::remove_file(&pcap);
}

#[test]
fn a_dropped_get_is_recovered_by_the_initial_rto() {
    // Seddigh et al. §3 observation 3: the GET is lost before any RTT sample of the data, so its
    // retransmission waits for the initial RTO (here 3 s, as Linux 2.2 and RFC 1122 §4.2.3.1).
    let apps = |drop: &str| {
        format!("[[apps]]\nkind = \"reqresp\"\nresponse = \"8KB\"\ncount = 2\nthink = \"1s\"\ntcp = {{ rto_initial = \"3s\", handshake_rtt_sample = false }}\ndrops = [{drop}]\n")
    };
    let r = run_apps(&apps("{ kind = \"request\", object = 2 }"), 1);
    let [a, b] = &r.objects[..] else { panic!("{:?}", r.objects) };
    assert!(!a.request_retransmitted && a.timeouts == 0, "object 1 is untouched: {a:?}");
    assert!(b.request_retransmitted && b.timeouts == 1 && !b.handshake_retransmitted, "{b:?}");
    let wait = b.first_byte_s.unwrap() - b.request_s.unwrap();
    assert!(wait >= 3.0 && wait < 3.1, "the response's first byte {wait} s after the GET");
    assert_eq!(r.links.iter().map(|l| l.dropped_filter).sum::<u64>(), 1);
    // The retransmitted GET is the request filter's second transmission: dropping both waits the
    // backed-off RTO as well (3 s + 6 s, RFC 6298 §5.5).
    let r = run_apps(&apps("{ kind = \"request\", object = 1, transmissions = [1, 2] }"), 1);
    let a = &r.objects[0];
    let wait = a.first_byte_s.unwrap() - a.request_s.unwrap();
    assert!((9.0..9.1).contains(&wait) && a.timeouts == 2, "{wait} {a:?}");
    // Without the drop the same GET is answered in one round trip.
    let r = run_apps(&apps(""), 1);
    assert!(r.objects.iter().all(|o| o.first_byte_s.unwrap() - o.request_s.unwrap() < 0.05), "{:?}", r.objects);
}

#[test]
fn dropped_syn_and_synack_mark_the_handshake() {
    let r = run_apps(
        "[[apps]]\nkind = \"reqresp\"\nresponse = \"4KB\"\ncount = 3\ndrops = [{ kind = \"syn\", object = 1 }, { kind = \"synack\", object = 2 }, { kind = \"response\", segment = 2, object = 3 }]\n",
        1,
    );
    let flags: Vec<(bool, bool, u64)> = r.objects.iter().map(|o| (o.handshake_retransmitted, o.request_retransmitted, o.retransmits)).collect();
    assert_eq!(flags, [(true, false, 0), (true, false, 0), (false, false, 1)]);
    assert!(r.objects.iter().all(|o| o.bytes_delivered == 4096));
}

/// Every object's response is delivered exactly once and in full, whatever the losses, and each
/// exchange's two endpoints are freed when it ends.
#[test]
fn every_object_delivered_once_and_state_freed() {
    for seed in 1..=6 {
        let text = format!(
            "[topology]\nkind = \"single_link\"\nrate = \"2Mbps\"\ndelay = \"20ms\"\nqueue = 8\nloss = 0.05\nreverse_loss = 0.05\n\
             [[apps]]\nkind = \"reqresp\"\nrequest = {{ uniform = [\"200B\", \"1200B\"] }}\nresponse = {{ exponential = \"12KB\" }}\ncount = 15\nthink = {{ exponential = \"200ms\" }}\n\
             [[apps]]\nkind = \"reqresp\"\nname = \"bulkish\"\nresponse = \"40KB\"\ncount = 4\ntcp = {{ preset = \"sack\" }}\n"
        );
        let s = Scenario::from_toml(&text, &[]).unwrap();
        let mut w = World::build(&s, seed).unwrap();
        let mut peak = 0;
        while w.step() {
            peak = peak.max(w.live_connections());
        }
        assert_eq!(w.live_connections(), 0, "seed {seed}: every endpoint freed");
        assert!(peak <= 4, "seed {seed}: one exchange at a time per app, two ends each ({peak})");
        let (c, d, x, f) = w.packet_balance();
        assert_eq!(c, d + x + f, "packets conserved");
        let r = w.finish_run().unwrap();
        assert!(r.meta.completed, "seed {seed}");
        assert_eq!(r.objects.len(), 19);
        let per_app: Vec<usize> = ["app0", "bulkish"].iter().map(|n| r.objects.iter().filter(|o| o.client == *n).count()).collect();
        assert_eq!(per_app, [15, 4]);
        for o in &r.objects {
            assert_eq!(o.bytes_delivered, o.response_bytes, "seed {seed}: {o:?}");
            assert!(!o.aborted);
            let (rq, fb, dl, ak) = (o.request_s.unwrap(), o.first_byte_s.unwrap(), o.delivered_s.unwrap(), o.acked_s.unwrap());
            assert!(o.start_s <= rq && rq < fb && fb <= dl && dl < ak, "seed {seed}: {o:?}");
        }
        // The exchanges of one app follow each other: the next starts after the previous ended.
        let app0: Vec<&ObjectRow> = r.objects.iter().filter(|o| o.app == 0).collect();
        for w in app0.windows(2) {
            assert!(w[1].start_s > w[0].acked_s.unwrap(), "{:?}", w);
            assert_eq!(w[1].object, w[0].object + 1);
        }
        assert!(r.objects.iter().any(|o| o.retransmits > 0), "seed {seed}: the losses were felt");
    }
}

#[test]
fn same_seed_same_result_and_streams_per_variable() {
    let apps = "[[apps]]\nkind = \"reqresp\"\nresponse = { exponential = \"6KB\" }\ncount = \"unlimited\"\nthink = { exponential = \"500ms\" }\n";
    let run_apps = |apps: &str, seed| run(&Scenario::from_toml(&format!("duration = \"30s\"\n{NET}{apps}"), &[]).unwrap(), seed).unwrap();
    let json = |seed| serde_json::to_string(&run_apps(apps, seed)).unwrap();
    assert_eq!(json(3), json(3));
    assert_ne!(json(3), json(4));
    // Think times come from their own stream: changing the response sizes leaves them alone, so
    // the first exchanges start at the same times (until a longer response shifts the next).
    let other = run_apps(&apps.replace("exponential = \"6KB\"", "exponential = \"1KB\""), 3);
    let base = run_apps(apps, 3);
    assert!(!base.meta.completed, "an unlimited app runs until the duration");
    let gaps = |r: &RunResult| r.objects.windows(2).map(|w| ((w[1].start_s - w[0].start_s) * 1e9) as i64).collect::<Vec<_>>();
    let (gb, go) = (gaps(&base), gaps(&other));
    assert!(gb.len() > 10 && go.len() > 10);
    let sizes = |r: &RunResult| r.objects.iter().map(|o| o.response_bytes).collect::<Vec<_>>();
    assert_ne!(sizes(&base)[..5], sizes(&other)[..5]);
}

#[test]
fn flows_and_apps_side_by_side_and_no_objects_without_apps() {
    let flow = "[[flows]]\nbytes = \"20KB\"\n";
    let r = run_apps(flow, 1);
    let j = serde_json::to_value(&r).unwrap();
    assert!(j.get("objects").is_none(), "a run without applications has no objects column");
    assert!(j["scenario"].get("apps").is_none());
    let r = run_apps(&format!("{flow}[[apps]]\nkind = \"reqresp\"\nresponse = \"5KB\"\n"), 1);
    assert_eq!(r.connections.len(), 1);
    assert_eq!(r.objects.len(), 1);
    assert_eq!(r.objects[0].app, 1, "the application's label comes after the flow's");
    assert_eq!(r.objects[0].client, "app0");
    assert!(r.meta.completed);
}

#[test]
fn without_handshake_or_fins_the_exchange_still_completes() {
    for tcp in ["handshake = false", "fin = false", "handshake = false, fin = false"] {
        let r = run_apps(&format!("[[apps]]\nkind = \"reqresp\"\nresponse = \"3KB\"\ncount = 2\ntcp = {{ {tcp} }}\n"), 1);
        assert!(r.meta.completed, "{tcp}");
        assert!(r.objects.iter().all(|o| o.bytes_delivered == 3072 && o.acked_s.is_some()), "{tcp}: {:?}", r.objects);
        if tcp.starts_with("handshake") {
            // The GET leaves at once: the exchange starts and the request is sent together.
            assert!(r.objects.iter().all(|o| o.request_s == Some(o.start_s)), "{tcp}");
        }
    }
}

#[test]
fn schema_errors_name_the_key_path() {
    let e = |apps: &str| Scenario::from_toml(&format!("{NET}{apps}"), &[]).unwrap_err();
    for (apps, path, words) in [
        ("[[apps]]\nkind = \"reqresp\"\nresponse = \"1KB\"\ncolour = 1\n", "apps[0].colour", "unknown field"),
        ("[[apps]]\nkind = \"gopher\"\nresponse = \"1KB\"\n", "apps[0].kind", "reqresp"),
        ("[[apps]]\nkind = \"reqresp\"\n", "apps[0].response", "required"),
        ("[[apps]]\nkind = \"reqresp\"\nresponse = \"1KB\"\nfile = \"1MB\"\n", "apps[0].file", "does not apply"),
        ("[[apps]]\nkind = \"ftp\"\nresponse = \"1KB\"\n", "apps[0].response", "does not apply"),
        ("[[apps]]\nkind = \"ftp\"\n", "apps[0].file", "required"),
        ("[[apps]]\nkind = \"ftp\"\nfile = \"1MB\"\ndirection = \"sideways\"\n", "apps[0].direction", "upload"),
        ("[[apps]]\nkind = \"reqresp\"\nresponse = \"ten\"\n", "apps[0].response", "ten"),
        ("[[apps]]\nkind = \"reqresp\"\nresponse = \"1KB\"\nrequest = \"0B\"\n", "apps[0].request", "at least one byte"),
        ("[[apps]]\nkind = \"reqresp\"\nresponse = \"1KB\"\nclient = \"moon\"\n", "apps[0].client", "unknown node"),
        ("[[apps]]\nkind = \"reqresp\"\nresponse = \"1KB\"\nclient = \"sender\"\n", "apps[0]", "two different nodes"),
        ("[[apps]]\nkind = \"reqresp\"\nresponse = \"1KB\"\ncount = \"unlimited\"\n", "apps[0].count", "duration"),
        ("[[apps]]\nkind = \"reqresp\"\nresponse = \"1KB\"\ntcp = { mss = 0 }\n", "apps[0].tcp.mss", ""),
        ("[[apps]]\nkind = \"reqresp\"\nresponse = \"1KB\"\nthink = { exponential = \"-1s\" }\n", "apps[0].think.exponential", "non-negative"),
        ("[[apps]]\nkind = \"reqresp\"\nresponse = \"1KB\"\ndrops = [{ kind = \"syn\", segment = 2 }]\n", "apps[0].drops[0].segment", "request"),
        ("[[apps]]\nkind = \"reqresp\"\nresponse = \"1KB\"\ndrops = [{ kind = \"request\", object = 0 }]\n", "apps[0].drops[0].object", "from 1"),
        ("[[apps]]\nkind = \"reqresp\"\nresponse = \"1KB\"\ndrops = [{ kind = \"syn\", transmissions = [1, 0] }]\n", "apps[0].drops[0].transmissions[1]", "from 1"),
        ("[[apps]]\nkind = \"reqresp\"\nresponse = \"1KB\"\ntcp = { handshake = false }\ndrops = [{ kind = \"synack\" }]\n", "apps[0].drops[0].kind", "handshake"),
        ("[[apps]]\nkind = \"reqresp\"\nresponse = \"1KB\"\n[[apps]]\nkind = \"reqresp\"\nresponse = \"1KB\"\nname = \"app0\"\n", "apps[1].name", "twice"),
    ] {
        let x = e(apps);
        assert_eq!(x.path, path, "{apps}: {x}");
        assert!(x.message.contains(words), "{apps}: {x}");
    }
    // Neither flows nor applications: nothing to run.
    let x = e("");
    assert_eq!(x.path, "flows");
    // A dumbbell has no default client or server.
    let x = Scenario::from_toml(
        "[topology]\nkind = \"dumbbell\"\npairs = 1\naccess_rate = \"10Mbps\"\naccess_delay = \"1ms\"\nbottleneck_rate = \"1Mbps\"\nbottleneck_delay = \"10ms\"\n[[apps]]\nkind = \"reqresp\"\nresponse = \"1KB\"\nserver = \"s1\"\n",
        &[],
    )
    .unwrap_err();
    assert_eq!(x.path, "apps[0].client");
}

#[test]
fn ftp_fetches_files_back_to_back_in_either_direction() {
    // RFC 2415's FTP clients fetch 1 MB files one after another; here 5 files of 100 KB, each on
    // a data connection of its own, the next opened as soon as the previous one is closed.
    let r = run_apps("[[apps]]\nkind = \"ftp\"\nfile = \"100KB\"\ncount = 5\n", 1);
    assert!(r.meta.completed);
    assert_eq!(r.objects.len(), 5);
    for o in &r.objects {
        assert_eq!((o.request_bytes, o.response_bytes, o.bytes_delivered), (24, 102_400, 102_400), "{o:?}");
    }
    for w in r.objects.windows(2) {
        // Back to back: the next file's connection opens within the last FIN's round trip.
        assert!(w[1].start_s >= w[0].acked_s.unwrap() && w[1].start_s - w[0].delivered_s.unwrap() < 0.05, "{w:?}");
    }
    // Uploads: the file goes client -> server, the server's reply says it is in.
    let up = run_apps("[[apps]]\nkind = \"ftp\"\nfile = \"100KB\"\ncount = 2\ndirection = \"upload\"\ndrops = [{ kind = \"request\", object = 2 }]\n", 1);
    assert_eq!(up.objects.len(), 2);
    for o in &up.objects {
        assert_eq!((o.request_bytes, o.response_bytes, o.bytes_delivered), (102_400, 24, 24), "{o:?}");
    }
    // The dropped first segment of the second upload is retransmitted by the client.
    assert!(!up.objects[0].request_retransmitted && up.objects[1].request_retransmitted);
    // Unlimited files need a duration, and run until it.
    let s = Scenario::from_toml(&format!("duration = \"20s\"\n{NET}[[apps]]\nkind = \"ftp\"\nfile = \"1MB\"\ncount = \"unlimited\"\n"), &[]).unwrap();
    let r = run(&s, 1).unwrap();
    assert!(!r.meta.completed && r.objects.len() > 10, "{}", r.objects.len());
    assert!(r.objects.iter().rev().skip(1).all(|o| o.bytes_delivered == 1 << 20));
}
