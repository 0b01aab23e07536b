//! Every example scenario in experiments/examples validates and runs to a sensible end.

use tcplab_core::{run, Scenario};

#[test]
fn every_example_runs() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../experiments/examples");
    let mut n = 0;
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().and_then(|x| x.to_str()) != Some("toml") {
            continue;
        }
        let text = std::fs::read_to_string(&p).unwrap();
        let s = Scenario::from_toml(&text, &[]).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        let r = run(&s, 1).unwrap();
        let (created, delivered, dropped, in_flight) = (r.meta.packets_created, r.meta.packets_delivered, r.meta.packets_dropped, r.meta.packets_in_flight);
        assert_eq!(created, delivered + dropped + in_flight, "{}: packets not conserved", p.display());
        for c in &r.connections {
            assert!(c.bytes_delivered > 0, "{}: flow {} delivered nothing", p.display(), c.name);
        }
        if s.duration.is_none() {
            assert!(r.meta.completed, "{}: finite transfers must complete", p.display());
        }
        n += 1;
    }
    assert!(n >= 5, "only {n} examples found");
}

#[test]
fn demo_delivers_one_megabyte() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../experiments/examples/demo.toml")).unwrap();
    let r = run(&Scenario::from_toml(&text, &[]).unwrap(), 1).unwrap();
    assert_eq!(r.connections[0].bytes_delivered, 1 << 20);
    assert_eq!(r.transfers[0].bytes_delivered, 1 << 20);
    assert!(r.transfers[0].transfer_time_s.unwrap() > 0.07 * 8.0, "1 MB cannot cross 10 Mb/s in under 0.84 s");
}

#[test]
fn repeated_transfers_start_after_think_time() {
    let text = r#"
[topology]
kind = "single_link"
rate = "10Mbps"
delay = "10ms"
[tcp]
delayed_ack = false
[[flows]]
start = "2s"
bytes = "20KB"
repeat = 3
think = "500ms"
"#;
    let r = run(&Scenario::from_toml(text, &[]).unwrap(), 1).unwrap();
    assert_eq!(r.transfers.len(), 3);
    assert_eq!(r.transfers[0].start_s, 2.0);
    for w in r.transfers.windows(2) {
        let gap = w[1].start_s - w[0].acked_s.unwrap();
        assert!((gap - 0.5).abs() < 1e-9, "think time {gap}");
    }
    assert_eq!(r.connections[0].bytes_delivered, 3 * 20 * 1024);
    assert_eq!(r.connections[0].transfers_completed, 3);
}
