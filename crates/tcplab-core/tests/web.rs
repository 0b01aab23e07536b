//! Web clients (`[[apps]] kind = "http10"`, RFC 2415's model, TARGETS.md §2.3–2.4) through the
//! whole world: the embedded objects' connections open at once when the primary is complete,
//! pages follow each other after the think time, every object's bytes arrive once, the page
//! records add up, and connection state is freed.

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
    let text = format!("{NET}{apps}");
    Scenario::from_toml(&text, &[]).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

fn run_apps(apps: &str, seed: u64) -> RunResult {
    run(&scenario(apps), seed).unwrap()
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
