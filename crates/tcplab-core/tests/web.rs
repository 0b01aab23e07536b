//! Web clients (`[[apps]] kind = "http10"`, RFC 2415's model, TARGETS.md §2.3–2.4) through the
//! whole world: the embedded objects' connections open at once when the primary is complete,
//! pages follow each other after the think time, every object's bytes arrive once, the page
//! records add up, and connection state is freed.

mod common;

use common::{run_with, scenario_with};
use tcplab_core::{run, RunResult, Scenario, World};

const NET: &str = r#"
[topology]
kind = "single_link"
rate = "1.5Mbps"
delay = "50ms"
queue = 25
[tcp]
mss = 1460
"#;

fn scenario(apps: &str) -> Scenario {
    scenario_with(NET, apps)
}

fn run_apps(apps: &str, seed: u64) -> RunResult {
    run_with(NET, apps, seed)
}

#[test]
fn http10_opens_the_embedded_connections_at_once_after_the_primary() {
    let s = scenario("[[apps]]\nkind = \"http10\"\nresponse = \"2KB\"\nembedded = 3\npages = 2\nthink = \"2s\"\n");
    let mut w = World::build(&s, 1).unwrap();
    // Live endpoints over time: 2 for the primary, then 2 + 3·2 at once (the primary is still
    // closing when the embedded objects open), never more.
    let mut trace: Vec<(u64, usize)> = Vec::new();
    while w.step() {
        let n = w.live_connections();
        if trace.last().is_none_or(|&(_, m)| m != n) {
            trace.push((w.now(), n));
        }
    }
    assert_eq!(w.live_connections(), 0, "every endpoint freed");
    let peak = trace.iter().map(|&(_, n)| n).max().unwrap();
    assert_eq!(peak, 8, "{trace:?}");
    // The jump from the primary's two ends to all eight happens at one instant.
    let i = trace.iter().position(|&(_, n)| n == 8).unwrap();
    assert_eq!(trace[i - 1].1, 2, "{trace:?}");
    let r = w.finish_run().unwrap();
    assert!(r.meta.completed);
    assert_eq!(r.objects.len(), 8);
    assert_eq!(r.pages.len(), 2);
    for p in &r.pages {
        let objs: Vec<_> = r.objects.iter().filter(|o| o.page == Some(p.page)).collect();
        assert_eq!(objs.len(), 4);
        let primary = objs[0];
        // The three embedded exchanges start together, when the primary's response is in.
        for o in &objs[1..] {
            assert_eq!(o.start_s, primary.delivered_s.unwrap(), "{o:?}");
        }
        let last = objs.iter().map(|o| o.delivered_s.unwrap()).fold(0.0, f64::max);
        assert_eq!(p.complete_s, Some(last));
        assert!((p.delay_s.unwrap() - (last - p.start_s)).abs() < 1e-9);
        assert_eq!((p.objects, p.bytes), (4, 4 * 2048));
        assert_eq!(p.start_s, primary.start_s);
    }
    // Page 2 starts one think time after page 1 is complete.
    assert!((r.pages[1].start_s - r.pages[0].complete_s.unwrap() - 2.0).abs() < 1e-9);
    let objects: Vec<u32> = r.objects.iter().map(|o| o.object).collect();
    assert_eq!(objects, (1..=8).collect::<Vec<_>>());
}

#[test]
fn http10_pages_under_loss_deliver_every_object_once() {
    for seed in 1..=4 {
        let text = format!(
            "duration = \"120s\"\n[topology]\nkind = \"dumbbell\"\npairs = 2\naccess_rate = \"10Mbps\"\naccess_delay = \"5ms\"\nbottleneck_rate = \"1.5Mbps\"\nbottleneck_delay = \"50ms\"\nqueue = 8\nloss = 0.03\n\
             [[flows]]\nfrom = \"s2\"\nto = \"r2\"\nbytes = \"unlimited\"\n\
             [[apps]]\nkind = \"http10\"\nclient = \"r1\"\nserver = \"s1\"\nresponse = {{ exponential = \"6KB\" }}\nembedded = {{ exponential = 2 }}\npages = 6\nthink = {{ uniform = [\"1s\", \"5s\"] }}\n"
        );
        let r = run(&Scenario::from_toml(&text, &[]).unwrap(), seed).unwrap();
        assert_eq!(r.pages.len(), 6, "seed {seed}");
        for p in &r.pages {
            let objs: Vec<_> = r.objects.iter().filter(|o| o.page == Some(p.page)).collect();
            assert_eq!(p.objects as usize, objs.len(), "seed {seed}");
            assert_eq!(p.bytes, objs.iter().map(|o| o.response_bytes).sum::<u64>());
            assert!(p.complete_s.is_some(), "seed {seed}: {p:?}");
        }
        for o in &r.objects {
            assert_eq!(o.bytes_delivered, o.response_bytes, "seed {seed}: {o:?}");
        }
    }
}

#[test]
fn http10_is_deterministic_and_a_dropped_embedded_get_delays_its_page() {
    let apps = "[[apps]]\nkind = \"http10\"\nresponse = \"4KB\"\npages = 2\nthink = \"1s\"\n";
    let a = serde_json::to_string(&run_apps(apps, 5)).unwrap();
    assert_eq!(a, serde_json::to_string(&run_apps(apps, 5)).unwrap());
    // Object 3 is the second embedded object of page 1: its GET waits the initial RTO (1 s).
    let base = run_apps(apps, 5);
    let hit = run_apps(&format!("{apps}drops = [{{ kind = \"request\", object = 3 }}]\n"), 5);
    let o = &hit.objects[2];
    assert!(o.first_byte_s.unwrap() - o.request_s.unwrap() >= 1.0, "{o:?}");
    assert!(o.request_retransmitted && !hit.objects[3].request_retransmitted);
    // The late object is the page's last: it sets the page delay, and no other page changes
    // (the think time runs from the later completion).
    assert_eq!(hit.pages[0].complete_s, o.delivered_s);
    let (d0, d1) = (base.pages[0].delay_s.unwrap(), hit.pages[0].delay_s.unwrap());
    assert!(d1 > d0 + 0.9, "{d0} {d1}");
    assert_eq!(base.pages[1].delay_s, hit.pages[1].delay_s);
}

#[test]
fn web_keys_are_checked() {
    let e = |apps: &str| Scenario::from_toml(&format!("{NET}{apps}"), &[]).unwrap_err();
    let x = e("[[apps]]\nkind = \"http10\"\nresponse = \"1KB\"\ncount = 2\n");
    assert_eq!(x.path, "apps[0].count");
    assert!(x.message.contains("pages"), "{x}");
    let x = e("[[apps]]\nkind = \"reqresp\"\nresponse = \"1KB\"\npages = 2\n");
    assert_eq!(x.path, "apps[0].pages");
    let x = e("[[apps]]\nkind = \"reqresp\"\nresponse = \"1KB\"\nembedded = 2\n");
    assert_eq!(x.path, "apps[0].embedded");
    let x = e("[[apps]]\nkind = \"http10\"\nresponse = \"1KB\"\npages = \"unlimited\"\n");
    assert_eq!(x.path, "apps[0].pages");
    let x = e("[[apps]]\nkind = \"http10\"\nresponse = \"1KB\"\nembedded = \"3 things\"\n");
    assert_eq!(x.path, "apps[0].embedded");
}

/// SYNs and FINs the client sends, read back from a capture at the client's node.
fn syns_and_fins(text: &str, seed: u64) -> (RunResult, usize, usize) {
    use tcplab_core::net::{FLAG_ACK, FLAG_FIN, FLAG_SYN};
    let pcap = std::env::temp_dir().join(format!("tcplab-web-{}-{seed}.pcap", std::process::id()));
    let s = Scenario::from_toml(&format!("[[capture]]\npath = {:?}\nnode = \"receiver\"\n{NET}{text}", pcap.to_string_lossy()), &[]).unwrap();
    let r = run(&s, seed).unwrap();
    let segs = common::capture_segments(&pcap);
    let _ = std::fs::remove_file(&pcap);
    let (mut syn, mut fin) = (0, 0);
    for t in segs {
        if t.dport == 5001 {
            syn += (t.flags & (FLAG_SYN | FLAG_ACK) == FLAG_SYN) as usize;
            fin += (t.flags & FLAG_FIN != 0) as usize;
        }
    }
    (r, syn, fin)
}

#[test]
fn http11_fetches_a_pages_objects_in_turn_on_one_connection() {
    let apps = "[[apps]]\nkind = \"http11\"\nresponse = \"3KB\"\nembedded = 3\npages = 2\nthink = \"2s\"\n";
    let (r, syns, fins) = syns_and_fins(apps, 1);
    assert!(r.meta.completed);
    // One connection per page: one SYN and one FIN from the client each, none between objects.
    assert_eq!((syns, fins), (2, 2));
    assert_eq!(r.objects.len(), 8);
    for p in &r.pages {
        let objs: Vec<_> = r.objects.iter().filter(|o| o.page == Some(p.page)).collect();
        assert_eq!(objs.len(), 4);
        // Each request goes once the previous response is complete.
        for w in objs.windows(2) {
            assert_eq!(w[1].request_s, w[0].delivered_s, "{w:?}");
        }
        assert_eq!(p.complete_s, objs[3].delivered_s);
        assert_eq!((p.objects, p.bytes), (4, 4 * 3072));
        for o in &objs {
            assert_eq!(o.bytes_delivered, 3072);
            let (rq, fb, dl, ak) = (o.request_s.unwrap(), o.first_byte_s.unwrap(), o.delivered_s.unwrap(), o.acked_s.unwrap());
            assert!(rq < fb && fb <= dl && dl < ak, "{o:?}");
        }
    }
    // Kept alive, the pages share one connection.
    let (r, syns, fins) = syns_and_fins(&apps.replace("pages = 2", "pages = 2\nkeep_alive = true"), 1);
    assert_eq!((syns, fins, r.pages.len()), (1, 1, 2));
    let s = scenario(&apps.replace("pages = 2", "pages = 3\nkeep_alive = true"));
    let mut w = World::build(&s, 1).unwrap();
    let mut peak = 0;
    while w.step() {
        peak = peak.max(w.live_connections());
    }
    assert_eq!((peak, w.live_connections()), (2, 0), "one connection, freed at the end");
}

/// RFC 2415 §2's http1.1 model (`transfer = "page"`): one connection whose "transfer size is now
/// made up of four web files": one request, then one response of the page's bytes, recorded as
/// one object carrying the page's 4 objects; the same sizes as `"objects"` draws, one round trip
/// per object fewer.
#[test]
fn http11_page_transfer_is_one_request_and_one_response_of_the_page() {
    let apps = "[[apps]]\nkind = \"http11\"\nresponse = { uniform = [\"1KB\", \"6KB\"] }\nembedded = 3\npages = 2\nthink = \"2s\"\n";
    let (per_object, s1, f1) = syns_and_fins(apps, 3);
    let (page, s2, f2) = syns_and_fins(&apps.replace("pages = 2", "pages = 2\ntransfer = \"page\""), 3);
    assert!(page.meta.completed && per_object.meta.completed);
    assert_eq!((s1, f1, s2, f2), (2, 2, 2, 2), "one connection per page either way");
    assert_eq!((per_object.objects.len(), page.objects.len()), (8, 2));
    for (p, q) in per_object.pages.iter().zip(&page.pages) {
        assert_eq!((q.objects, q.bytes), (4, p.bytes), "the same page's bytes");
        let objs: Vec<_> = per_object.objects.iter().filter(|o| o.page == Some(p.page)).collect();
        let one = page.objects.iter().find(|o| o.page == Some(q.page)).unwrap();
        assert_eq!(one.response_bytes, objs.iter().map(|o| o.response_bytes).sum::<u64>());
        assert_eq!(one.request_bytes, objs[0].request_bytes, "the primary's request only");
        assert!(q.delay_s.unwrap() < p.delay_s.unwrap(), "fewer round trips: {q:?} {p:?}");
    }
    // Refused, by key path, on another kind or with an unknown value.
    let e = |t: &str| Scenario::from_toml(&format!("{NET}{t}"), &[]).unwrap_err();
    assert_eq!(e("[[apps]]\nkind = \"http10\"\nresponse = \"1KB\"\ntransfer = \"page\"\n").path, "apps[0].transfer");
    let x = e("[[apps]]\nkind = \"http11\"\nresponse = \"1KB\"\ntransfer = \"pages\"\n");
    assert!(x.path.starts_with("apps[0].transfer") || x.to_string().contains("transfer"), "{x}");
}

#[test]
fn http11_kept_alive_restarts_from_the_restart_window_after_idle() {
    // RFC 5681 §4.1: after an idle time longer than the RTO, the server's next response starts
    // from the restart window (here IW = 1 segment) instead of the cwnd it had grown.
    let apps = |restart: bool| {
        format!("[[apps]]\nkind = \"http11\"\nresponse = \"40KB\"\nembedded = 1\npages = 2\nthink = \"5s\"\nkeep_alive = true\ntcp = {{ initial_window = 1, restart_after_idle = {restart}, rto_initial = \"1s\" }}\n")
    };
    let took = |r: &RunResult, object: usize| {
        let o = &r.objects[object];
        o.delivered_s.unwrap() - o.request_s.unwrap()
    };
    let (with, without) = (run_apps(&apps(true), 1), run_apps(&apps(false), 1));
    // Page 1 is the same either way; page 2's first object (object 3) came after 5 s of idle.
    assert_eq!(took(&with, 1), took(&without, 1));
    let rtt = 0.1;
    assert!(took(&with, 2) > took(&without, 2) + 2.0 * rtt, "{} {}", took(&with, 2), took(&without, 2));
    // Restarted, it is no faster than page 1's second object, which found the window open.
    assert!(took(&with, 2) >= took(&with, 1), "{} {}", took(&with, 2), took(&with, 1));
}

#[test]
fn http11_under_loss_delivers_every_object_once() {
    for seed in 1..=4 {
        let text = format!(
            "duration = \"120s\"\n[topology]\nkind = \"single_link\"\nrate = \"1.5Mbps\"\ndelay = \"50ms\"\nqueue = 6\nloss = 0.04\nreverse_loss = 0.02\n\
             [[apps]]\nkind = \"http11\"\nresponse = {{ exponential = \"8KB\" }}\nembedded = {{ exponential = 3 }}\npages = 5\nthink = \"1s\"\nkeep_alive = {}\n",
            seed % 2 == 0
        );
        let s = Scenario::from_toml(&text, &[]).unwrap();
        let mut w = World::build(&s, seed).unwrap();
        while w.step() {}
        assert_eq!(w.live_connections(), 0, "seed {seed}");
        let r = w.finish_run().unwrap();
        assert_eq!(r.pages.len(), 5);
        for o in &r.objects {
            assert_eq!(o.bytes_delivered, o.response_bytes, "seed {seed}: {o:?}");
            assert!(o.acked_s.is_some(), "seed {seed}: {o:?}");
        }
        for p in &r.pages {
            assert!(p.complete_s.is_some());
            assert_eq!(p.objects as usize, r.objects.iter().filter(|o| o.page == Some(p.page)).count());
        }
        assert!(r.objects.iter().any(|o| o.retransmits > 0), "seed {seed}: the losses were felt");
    }
    let x = Scenario::from_toml(&format!("{NET}[[apps]]\nkind = \"http11\"\nresponse = \"1KB\"\ndrops = [{{ kind = \"request\" }}]\n"), &[]).unwrap_err();
    assert_eq!(x.path, "apps[0].drops[0].kind");
    let x = Scenario::from_toml(&format!("{NET}[[apps]]\nkind = \"http10\"\nresponse = \"1KB\"\nkeep_alive = true\n"), &[]).unwrap_err();
    assert_eq!(x.path, "apps[0].keep_alive");
}

/// ns-2's `PagePool/WebTraf` pages of `objects` over one-way TCP, on a slow link so that a page
/// takes longer than the time between pages; `spacing` is the `page_spacing` key, if any.
fn webtraf(spacing: &str, rate: &str, think: &str) -> RunResult {
    let net = format!("[topology]\nkind = \"single_link\"\nrate = \"{rate}\"\ndelay = \"20ms\"\nqueue = 50\n[tcp]\nprofile = \"ns2\"\nmss = 1000\n");
    let apps = format!(
        "[[apps]]\nkind = \"http10\"\nmode = \"oneway\"\nname = \"web\"\nstart = \"1s\"\nrequest = \"1000B\"\nresponse = \"8000B\"\n\
         objects = {{ exponential = 2 }}\ninterobject = {{ exponential = \"10ms\" }}\nthink = {think}\npages = 12\n{spacing}\n"
    );
    run(&scenario_with(&net, &apps), 3).unwrap()
}

/// Every page's record adds up to its objects', and every object arrived once.
fn pages_add_up(r: &RunResult) {
    assert!(r.meta.completed);
    let started: u32 = r.pages.iter().map(|p| p.objects).sum();
    assert_eq!(started as usize, r.objects.len());
    for p in &r.pages {
        let objs: Vec<_> = r.objects.iter().filter(|o| o.page == Some(p.page)).collect();
        assert_eq!(p.objects as usize, objs.len(), "{p:?}");
        let last = objs.iter().map(|o| o.delivered_s.unwrap()).fold(0.0, f64::max);
        assert_eq!(p.complete_s, Some(last), "{p:?}");
        assert!(objs.iter().all(|o| o.start_s >= p.start_s && o.bytes_delivered == 8000), "{p:?}");
    }
}

#[test]
fn start_to_start_pages_start_at_the_drawn_spacing_whatever_their_completion() {
    // Open loop (ns-2's interPageOption_ 0): page k starts at `start` plus the first k − 1 think
    // draws of the client's own stream, on a 200 kb/s link (a page of 8 KB objects takes
    // seconds) and on a 100 Mb/s one alike; pages overlap on the slow link.
    let think = "{ exponential = \"500ms\" }";
    let rv: tcplab_core::rv::RandomDuration = serde_json::from_str(r#"{ "exponential": "500ms" }"#).unwrap();
    let mut rng = tcplab_core::engine::RngStream::new(3, "app:web:think");
    let mut at = 1_000_000_000u64;
    let mut want = Vec::new();
    for _ in 0..12 {
        want.push(at as f64 / 1e9);
        at += rv.sample(&mut rng);
    }
    let slow = webtraf("page_spacing = \"start_to_start\"", "200kbps", think);
    let fast = webtraf("page_spacing = \"start_to_start\"", "100Mbps", think);
    for r in [&slow, &fast] {
        let starts: Vec<f64> = r.pages.iter().map(|p| p.start_s).collect();
        assert_eq!(starts.len(), 12);
        for (s, w) in starts.iter().zip(&want) {
            assert!((s - w).abs() < 1e-9, "{starts:?} vs {want:?}");
        }
        pages_add_up(r);
    }
    let overlaps = slow.pages.windows(2).filter(|w| w[1].start_s < w[0].complete_s.unwrap()).count();
    assert!(overlaps >= 6, "pages overlap on the slow link: {:?}", slow.pages);
    assert!(slow.pages.iter().any(|p| p.delay_s.unwrap() > 2.0), "{:?}", slow.pages);
    // The same pages (sizes and servers are drawn per page from streams of their own).
    assert_eq!(slow.objects.len(), fast.objects.len());
    // A long think against slow pages: a constant 3 s spaces page starts exactly, although a
    // page can take longer than that.
    let r = webtraf("page_spacing = \"start_to_start\"", "50kbps", "\"3s\"");
    for (k, p) in r.pages.iter().enumerate() {
        assert!((p.start_s - (1.0 + 3.0 * k as f64)).abs() < 1e-9, "{:?}", r.pages);
    }
    assert!(r.pages.iter().any(|p| p.delay_s.unwrap() > 3.0), "{:?}", r.pages);
    pages_add_up(&r);
}

#[test]
fn end_to_start_pages_wait_for_the_previous_page() {
    // Closed loop (the default, and ns-2's interPageOption_ 1): page k + 1 starts 3 s after page
    // k is complete; one page at a time. Saying so changes nothing.
    let r = webtraf("", "50kbps", "\"3s\"");
    assert_eq!(r.pages.len(), 12);
    for w in r.pages.windows(2) {
        assert!((w[1].start_s - w[0].complete_s.unwrap() - 3.0).abs() < 1e-9, "{:?}", r.pages);
    }
    pages_add_up(&r);
    let said = webtraf("page_spacing = \"end_to_start\"", "50kbps", "\"3s\"");
    assert_eq!(serde_json::to_string(&r).unwrap(), serde_json::to_string(&said).unwrap());
    // The open loop of the same pages finishes its twelve page starts sooner.
    let open = webtraf("page_spacing = \"start_to_start\"", "50kbps", "\"3s\"");
    assert!(open.pages[11].start_s < r.pages[11].start_s - 3.0);
}

#[test]
fn page_spacing_is_checked() {
    let e = |apps: &str| Scenario::from_toml(&format!("{NET}{apps}"), &[]).unwrap_err();
    let x = e("[[apps]]\nkind = \"http10\"\nresponse = \"1KB\"\npage_spacing = \"sometimes\"\n");
    assert_eq!(x.path, "apps[0].page_spacing");
    assert!(x.message.contains("start_to_start") && x.message.contains("end_to_start"), "{x}");
    let x = e("[[apps]]\nkind = \"http11\"\nresponse = \"1KB\"\npage_spacing = \"start_to_start\"\n");
    assert_eq!(x.path, "apps[0].page_spacing");
    assert!(x.message.contains("http10"), "{x}");
    let x = e("[[apps]]\nkind = \"reqresp\"\nresponse = \"1KB\"\npage_spacing = \"start_to_start\"\n");
    assert_eq!(x.path, "apps[0].page_spacing");
    let x = e("[[apps]]\nkind = \"cbr\"\nrate = \"1Mbps\"\nstop = \"1s\"\npage_spacing = \"start_to_start\"\n");
    assert_eq!(x.path, "apps[0].page_spacing");
    let x = Scenario::from_toml(&format!("duration = \"10s\"\n{NET}[[apps]]\nkind = \"http10\"\nresponse = \"1KB\"\npages = \"unlimited\"\npage_spacing = \"start_to_start\"\n"), &[]).unwrap_err();
    assert_eq!(x.path, "apps[0].think");
    // A think above zero, or a page limit, will do.
    for ok in ["pages = \"unlimited\"\nthink = \"1s\"\n", "pages = 3\n"] {
        Scenario::from_toml(&format!("duration = \"10s\"\n{NET}[[apps]]\nkind = \"http10\"\nresponse = \"1KB\"\npage_spacing = \"start_to_start\"\n{ok}"), &[]).unwrap();
    }
}

#[test]
fn objects_rounding_up_is_ns2s_page_size() {
    // ns-2's WebTrafSession::expire: a page is the ceiling of its page-size draw. Page k's
    // objects are the k-th draw of the client's "objects" stream, rounded up (or to the nearest,
    // at least 1, by default).
    let apps = |rounding: &str| {
        format!(
            "[[apps]]\nkind = \"http10\"\nmode = \"oneway\"\nname = \"web\"\nresponse = \"1000B\"\nobjects = {{ exponential = 2 }}\n\
             think = \"100ms\"\npages = 40\npage_spacing = \"start_to_start\"\n{rounding}"
        )
    };
    let rv: tcplab_core::rv::RandomCount = serde_json::from_str(r#"{ "exponential": 2 }"#).unwrap();
    let draws: Vec<f64> = {
        let mut rng = tcplab_core::engine::RngStream::new(4, "app:web:objects");
        (0..40).map(|_| rv.sample_f64(&mut rng)).collect()
    };
    let up = run_apps(&apps("objects_rounding = \"up\"\n"), 4);
    let nearest = run_apps(&apps(""), 4);
    let got = |r: &RunResult| r.pages.iter().map(|p| p.objects as u64).collect::<Vec<_>>();
    assert_eq!(got(&up), draws.iter().map(|x| (x.ceil() as u64).max(1)).collect::<Vec<_>>());
    assert_eq!(got(&nearest), draws.iter().map(|x| ((x + 0.5).floor() as u64).max(1)).collect::<Vec<_>>());
    assert!(got(&up).iter().sum::<u64>() > got(&nearest).iter().sum::<u64>());
    let x = Scenario::from_toml(&format!("{NET}[[apps]]\nkind = \"http10\"\nresponse = \"1KB\"\nobjects_rounding = \"up\"\n"), &[]).unwrap_err();
    assert_eq!(x.path, "apps[0].objects_rounding");
    let x = Scenario::from_toml(&format!("{NET}[[apps]]\nkind = \"http10\"\nresponse = \"1KB\"\nobjects = 2\nobjects_rounding = \"down\"\n"), &[]).unwrap_err();
    assert_eq!(x.path, "apps[0].objects_rounding");
}

/// A page cut by the end of the run still shows what it started and what arrived (`started`,
/// `bytes_delivered`), and says it is not complete; complete pages' counts agree with their
/// objects'. Reproducer: an `http10` page on a slow link with a `duration` shorter than the page.
#[test]
fn a_page_cut_by_the_end_of_the_run_counts_its_started_objects_and_bytes() {
    let net = "duration = \"3s\"\n[topology]\nkind = \"single_link\"\nrate = \"200kbps\"\ndelay = \"20ms\"\nqueue = 100\n[tcp]\nmss = 1000\n";
    let apps = "[[apps]]\nkind = \"http10\"\nresponse = \"20KB\"\nembedded = 4\npages = 3\nthink = \"100ms\"\n";
    let r = run(&scenario_with(net, apps), 1).unwrap();
    let last = r.pages.last().expect("a page began");
    assert!(!last.complete && last.complete_s.is_none(), "{last:?}");
    let objs: Vec<_> = r.objects.iter().filter(|o| o.page == Some(last.page)).collect();
    assert!(!objs.is_empty());
    assert_eq!(last.started as usize, objs.len(), "{last:?}");
    assert_eq!(last.bytes_delivered, objs.iter().map(|o| o.bytes_delivered).sum::<u64>(), "{last:?}");
    assert!(last.bytes_delivered > 0, "{last:?}");
    for p in r.pages.iter().filter(|p| p.complete) {
        assert_eq!((p.started, p.bytes_delivered), (p.objects, p.bytes), "{p:?}");
    }
    assert_eq!(r.pages.iter().map(|p| p.started as usize).sum::<usize>(), r.objects.len());
}
