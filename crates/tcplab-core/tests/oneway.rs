//! ns-2's one-way web model (`mode = "oneway"`, Seddigh et al.'s HTTP models 1 and 2, TARGETS.md
//! §4.5) through the whole world: no handshake and no FIN, the GET alone on a connection client →
//! server, the response on a new connection server → client that starts when the GET's ACK reaches
//! the client; pages of `objects` started `interobject` apart from a server drawn per page.

mod common;

use common::{capture_segments, scenario_with, tmp};
use tcplab_core::net::{FLAG_FIN, FLAG_SYN};
use tcplab_core::{run, Scenario, World};

const NET: &str = r#"
[topology]
kind = "single_link"
rate = "1Gbps"
delay = "10ms"
[tcp]
mss = 1000
delayed_ack = false
"#;

#[test]
fn the_response_starts_when_the_gets_ack_reaches_the_client() {
    // Captures at both ends: the server's node sees the GET arrive and its ACK leave one way
    // later; the response's first segment leaves the server when that ACK reaches the client.
    let (at_client, at_server) = (tmp("oneway", "client.pcap"), tmp("oneway", "server.pcap"));
    let s = scenario_with(
        NET,
        &format!(
            "[[capture]]\npath = {:?}\nnode = \"receiver\"\n[[capture]]\npath = {:?}\nnode = \"sender\"\n\
             [[apps]]\nkind = \"reqresp\"\nmode = \"oneway\"\nrequest = \"300B\"\nresponse = \"2500B\"\n",
            at_client.to_string_lossy(),
            at_server.to_string_lossy()
        ),
    );
    let r = run(&s, 1).unwrap();
    let client_ip = |segs: &[tcplab_core::trace::reader::TcpSeg]| segs[0].src; // the GET is first
    let c = capture_segments(&at_client);
    let sv = capture_segments(&at_server);
    let cip = client_ip(&c);
    let show = |segs: &[tcplab_core::trace::reader::TcpSeg]| -> Vec<String> {
        segs.iter().map(|s| format!("{:>3}ms {} len={}", s.ts_ns / 1_000_000, if s.src == cip { "c>s" } else { "s>c" }, s.payload)).collect()
    };
    // No SYN and no FIN anywhere: ns-2's one-way agents.
    assert!(c.iter().chain(&sv).all(|s| s.flags & (FLAG_SYN | FLAG_FIN) == 0));
    let want_client = [
        "  0ms c>s len=300",  // the GET, at once (no handshake)
        " 20ms s>c len=0",    // its ACK reaches the client: the response starts at the server now
        " 30ms s>c len=1000", // the response's initial window (RFC 3390: all of it), one way later
        " 30ms c>s len=0",    //   each segment acknowledged (no delayed ACKs here)
        " 30ms s>c len=1000",
        " 30ms c>s len=0",
        " 30ms s>c len=500",
        " 30ms c>s len=0",
    ];
    let want_server = [
        " 10ms c>s len=300",  // the GET arrives
        " 10ms s>c len=0",    // and is acknowledged at once
        " 20ms s>c len=1000", // the response leaves when the ACK reaches the client
        " 20ms s>c len=1000",
        " 20ms s>c len=500",
        " 40ms c>s len=0", // T_LAST_ACK with the third
        " 40ms c>s len=0",
        " 40ms c>s len=0",
    ];
    assert_eq!(show(&c), want_client, "\n{}", show(&c).join("\n"));
    assert_eq!(show(&sv), want_server, "\n{}", show(&sv).join("\n"));
    // Two connections: the response's has ports of its own direction (server → client).
    let get = &c[0];
    let resp = c.iter().find(|s| s.payload == 1000).unwrap();
    assert_eq!((resp.src, resp.dst), (get.dst, get.src));
    // The exact instants: the GET's ACK arrives at the client when the response leaves the server.
    let ack_at_client = c[1].ts_ns;
    let first_resp_at_server = sv.iter().find(|s| s.src != cip && s.payload > 0).unwrap().ts_ns;
    assert_eq!(ack_at_client, first_resp_at_server);
    // The record: T_GET at 0, T_LAST_ACK when the last ACK reaches the server (40 ms).
    let o = &r.objects[0];
    assert_eq!((o.request_bytes, o.response_bytes, o.bytes_delivered), (300, 2500, 2500));
    assert_eq!(o.request_s, Some(0.0));
    assert_eq!(o.acked_s.map(|t| (t * 1e3).floor() as u64), Some(40));
    assert_eq!(o.first_byte_s.map(|t| (t * 1e3).floor() as u64), Some(30));
    assert!((o.transfer_time_s.unwrap() - o.acked_s.unwrap()).abs() < 1e-12);
    assert!(!o.handshake_retransmitted && !o.request_retransmitted && !o.aborted && o.retransmits == 0);
    assert!(r.meta.completed);
    let _ = (std::fs::remove_file(&at_client), std::fs::remove_file(&at_server));
}

#[test]
fn a_lost_get_waits_for_the_initial_rto_before_any_response() {
    // Seddigh et al.'s point: with no handshake, a lost GET is recovered only by the initial RTO.
    let s = scenario_with(
        NET,
        "[[apps]]\nkind = \"reqresp\"\nmode = \"oneway\"\nresponse = \"8KB\"\ncount = 2\ntcp = { rto_initial = \"3s\" }\ndrops = [{ kind = \"request\", object = 2 }]\n",
    );
    let r = run(&s, 1).unwrap();
    let [a, b] = &r.objects[..] else { panic!("{:?}", r.objects) };
    assert!(a.timeouts == 0 && !a.request_retransmitted, "{a:?}");
    assert!(b.timeouts == 1 && b.request_retransmitted && !b.handshake_retransmitted, "{b:?}");
    let wait = b.first_byte_s.unwrap() - b.request_s.unwrap();
    assert!((3.03..3.05).contains(&wait), "{wait}");
    // A lost first response segment: the response's own connection has no RTT sample either.
    // (Two segments: one duplicate ACK, too few for a fast retransmit.)
    let s = scenario_with(NET, "[[apps]]\nkind = \"reqresp\"\nmode = \"oneway\"\nresponse = \"2000B\"\ntcp = { rto_initial = \"3s\" }\ndrops = [{ kind = \"response\", segment = 1 }]\n");
    let r = run(&s, 1).unwrap();
    let o = &r.objects[0];
    assert!(o.timeouts == 1 && !o.request_retransmitted && o.bytes_delivered == 2000, "{o:?}");
    assert!(o.transfer_time_s.unwrap() > 3.0);
}

/// Seddigh et al.'s model 1 in small: pages of Exp(2) objects of 8 packets, Exp(10 ms) apart,
/// each page from one of three servers drawn per page.
fn model1(seed: u64, pages: u32) -> (tcplab_core::RunResult, usize) {
    let text = format!(
        "duration = \"600s\"\n[topology]\nkind = \"dumbbell\"\npairs = 3\naccess_rate = \"10Mbps\"\naccess_delay = \"5ms\"\nbottleneck_rate = \"10Mbps\"\nbottleneck_delay = \"10ms\"\nqueue = 20\nloss = 0.02\n\
         [tcp]\nprofile = \"ns2\"\n\
         [[apps]]\nkind = \"http10\"\nmode = \"oneway\"\nclient = \"r1\"\nserver = [\"s1\", \"s2\", \"s3\"]\nrequest = \"1000B\"\nresponse = \"8000B\"\n\
         objects = {{ exponential = 2 }}\ninterobject = {{ exponential = \"10ms\" }}\nthink = {{ exponential = \"2s\" }}\npages = {pages}\n"
    );
    let s = Scenario::from_toml(&text, &[]).unwrap();
    let mut w = World::build(&s, seed).unwrap();
    let mut peak = 0;
    while w.step() {
        peak = peak.max(w.live_connections());
    }
    assert_eq!(w.live_connections(), 0, "every endpoint freed");
    (w.finish_run().unwrap(), peak)
}

#[test]
fn model1_pages_of_objects_from_a_server_drawn_per_page() {
    let (r, peak) = model1(3, 30);
    assert_eq!(r.pages.len(), 30);
    assert!(peak >= 4, "objects of a page overlap: {peak}");
    for p in &r.pages {
        let objs: Vec<_> = r.objects.iter().filter(|o| o.page == Some(p.page)).collect();
        assert!(!objs.is_empty(), "at least one object per page");
        assert_eq!(p.objects as usize, objs.len());
        assert_eq!(p.bytes, 8000 * objs.len() as u64);
        for o in &objs {
            assert_eq!(o.bytes_delivered, 8000, "{o:?}");
            let t = o.transfer_time_s.unwrap();
            assert!((t - (o.acked_s.unwrap() - o.request_s.unwrap())).abs() < 1e-12);
            assert!(o.delivered_s.unwrap() <= o.acked_s.unwrap());
            assert!(!o.handshake_retransmitted);
        }
        // The objects start apart (open loop), the first with the page.
        assert_eq!(objs[0].start_s, p.start_s);
        assert!(objs.windows(2).all(|w| w[0].start_s <= w[1].start_s));
        let last = objs.iter().map(|o| o.delivered_s.unwrap()).fold(0.0, f64::max);
        assert_eq!(p.complete_s, Some(last));
        // ns-2's inter-page time runs from the end of a page.
        if p.page > 1 {
            let prev = &r.pages[p.page as usize - 2];
            assert!(p.start_s > prev.complete_s.unwrap());
        }
    }
    let n_objects: usize = r.pages.iter().map(|p| p.objects as usize).sum();
    assert_eq!(n_objects, r.objects.len());
    // Same seed, same records; another seed, other pages.
    let (again, _) = model1(3, 30);
    assert_eq!(format!("{:?}", again.objects), format!("{:?}", r.objects));
    let (other, _) = model1(4, 30);
    assert_ne!(format!("{:?}", other.objects), format!("{:?}", r.objects));
}

#[test]
fn every_server_of_the_list_serves_pages() {
    // The server is drawn per page: with three servers and 30 pages each one serves some, and
    // all the objects of a page come from one server (the bottleneck's reverse carries GETs to
    // s1..s3 on their own access links: count the data packets each access link carries).
    let (r, _) = model1(5, 30);
    let per_server: Vec<u64> = ["s1", "s2", "s3"]
        .iter()
        .map(|s| r.links.iter().filter(|l| l.src == *s).map(|l| l.sent_pkts).sum::<u64>())
        .collect();
    assert!(per_server.iter().all(|&n| n > 0), "{per_server:?}");
}

#[test]
fn model2_objects_back_to_back_with_a_uniform_gap() {
    let s = scenario_with(
        NET,
        "[[apps]]\nkind = \"reqresp\"\nmode = \"oneway\"\nrequest = \"1000B\"\nresponse = \"8000B\"\ncount = 20\nthink = { uniform = [\"0s\", \"1s\"] }\n",
    );
    let mut w = World::build(&s, 7).unwrap();
    let mut peak = 0;
    while w.step() {
        peak = peak.max(w.live_connections());
    }
    assert_eq!(w.live_connections(), 0);
    assert_eq!(peak, 4, "one object at a time: its request's two ends and its response's two");
    let r = w.finish_run().unwrap();
    assert_eq!(r.objects.len(), 20);
    for k in 1..r.objects.len() {
        // The next object starts a gap in [0, 1) s after the previous one is over.
        let gap = r.objects[k].start_s - r.objects[k - 1].acked_s.unwrap();
        assert!((0.0..1.0).contains(&gap), "{gap}");
    }
}

#[test]
fn oneway_keys_are_checked() {
    let bad = |apps: &str, path: &str| {
        let e = Scenario::from_toml(&format!("{NET}{apps}"), &[]).unwrap_err().to_string();
        assert!(e.contains(path), "{e}");
    };
    bad("[[apps]]\nkind = \"http11\"\nmode = \"oneway\"\nresponse = \"1KB\"\n", "apps[0].mode");
    bad("[[apps]]\nkind = \"reqresp\"\nmode = \"both\"\nresponse = \"1KB\"\n", "apps[0].mode");
    bad("[[apps]]\nkind = \"reqresp\"\nmode = \"oneway\"\nresponse = \"1KB\"\ntcp = { handshake = true }\n", "apps[0].tcp.handshake");
    bad("[[apps]]\nkind = \"reqresp\"\nmode = \"oneway\"\nresponse = \"1KB\"\ndrops = [{ kind = \"syn\" }]\n", "apps[0].drops[0].kind");
    bad("[[apps]]\nkind = \"reqresp\"\nobjects = 2\nresponse = \"1KB\"\n", "apps[0].objects");
    bad("[[apps]]\nkind = \"http10\"\nobjects = 2\nembedded = 1\nresponse = \"1KB\"\n", "apps[0].embedded");
    bad("[[apps]]\nkind = \"http10\"\ninterobject = \"1s\"\nresponse = \"1KB\"\n", "apps[0].interobject");
    bad("[[apps]]\nkind = \"http10\"\nserver = [\"sender\", \"nowhere\"]\nresponse = \"1KB\"\n", "apps[0].server[1]");
    bad("[[apps]]\nkind = \"http10\"\nserver = []\nresponse = \"1KB\"\n", "apps[0].server");
    bad("[[apps]]\nkind = \"http10\"\nserver = [\"sender\", \"receiver\"]\nresponse = \"1KB\"\n", "apps[0].server[1]");
    bad("[[apps]]\nkind = \"http11\"\nkeep_alive = true\nserver = [\"sender\", \"sender\"]\nresponse = \"1KB\"\n", "apps[0].server");
    bad("[[apps]]\nkind = \"http10\"\nobjects = { exponential = -2 }\nresponse = \"1KB\"\n", "apps[0].objects");
}

#[test]
fn a_page_too_large_for_memory_is_refused_at_its_key() {
    for (key, apps) in [
        ("apps[0].objects", "[[apps]]\nkind = \"http10\"\nmode = \"oneway\"\nresponse = \"1KB\"\nobjects = 1000000000000\n"),
        ("apps[0].embedded", "[[apps]]\nkind = \"http10\"\nresponse = \"1KB\"\nembedded = 1000000000000\n"),
    ] {
        let e = Scenario::from_toml(&format!("{NET}{apps}"), &[]).unwrap_err();
        assert_eq!(e.path, key, "{e}");
        assert!(e.message.contains("memory"), "{e}");
    }
}
