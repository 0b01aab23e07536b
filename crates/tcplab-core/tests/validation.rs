//! The validation boundary (issue 20): every reproducer of the issue refused with its key path
//! and the exact words, from TOML text, from an override and from JSON (a Python dict's text).

use tcplab_core::Scenario;

const BASE: &str = "[topology]\nkind = \"single_link\"\nrate = \"10Mbps\"\ndelay = \"10ms\"\n[[flows]]\nbytes = 1000\n";

fn refused(sets: &[&str]) -> String {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    match Scenario::from_toml(BASE, &sets) {
        Ok(_) => panic!("{sets:?} accepted"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn non_finite_numbers_are_refused_by_key() {
    let prob = "expected a probability, a finite number from 0 to 1";
    let whole = "expected a whole number from 0 to 4294967295";
    for (set, want) in [
        ("topology.loss=nan", format!("topology.loss: {prob}, got nan")),
        ("topology.loss=inf", format!("topology.loss: {prob}, got inf")),
        ("topology.reverse_loss=-inf", format!("topology.reverse_loss: {prob}, got -inf")),
        ("tcp.mss=nan", "tcp.mss: expected a size in bytes or with a unit, such as \"16KB\", got nan (not a finite number)".into()),
        ("flows.0.tcp.mss=nan", "flows[0].tcp.mss: expected a size in bytes or with a unit, such as \"16KB\", got nan (not a finite number)".into()),
        (
            "tcp.initial_window=nan",
            "tcp.initial_window: expected a number of segments (at least 1), \"rfc3390\", \"rfc6928\", a size such as \"4KB\", or { segments = n, bytes = \"4KB\" }, got nan".into(),
        ),
        ("tcp.rto_backoff=nan", "tcp.rto_backoff: expected a finite multiplier from 1 to 1000, got nan".into()),
        ("tcp.rto_backoff=inf", "tcp.rto_backoff: expected a finite multiplier from 1 to 1000, got inf".into()),
        ("tcp.abc=nan", format!("tcp.abc: {whole}, got nan")),
        ("tcp.dupthresh=nan", format!("tcp.dupthresh: {whole}, got nan")),
        ("tcp.sack_blocks=nan", format!("tcp.sack_blocks: {whole}, got nan")),
        ("duration=nan", "duration: expected a duration with a unit, such as \"35ms\" or \"1.5s\", got nan (not a finite number)".into()),
        ("topology.queue={packets=nan}", "topology.queue.packets: expected a whole number from 0 to 9223372036854775807, got nan".into()),
        ("tcp.profile=inf", "tcp.profile: expected a string, got inf".into()),
        ("tcp.variant=nan", "tcp.variant: expected a name (a string), got nan".into()),
        ("flows.0.repeat=nan", "flows[0].repeat: expected a number of transfers (at least 1) or \"unlimited\", got nan".into()),
        ("flows.0.bytes=inf", "flows[0].bytes: expected a size such as \"64KB\" or a number of bytes, or \"unlimited\", got inf".into()),
        ("topology.queue.red.min_th=nan", "topology.queue.red.min_th: expected a finite number ≥ 0, got nan".into()),
        ("topology.queue.red.max_p=inf", "topology.queue.red.max_p: expected a probability, a finite number from 0 to 1, got inf".into()),
    ] {
        assert_eq!(refused(&[set]), want, "{set}");
    }
    // Written in the file rather than set.
    let e = Scenario::from_toml(&BASE.replace("delay = \"10ms\"", "delay = \"10ms\"\nloss = nan"), &[]).unwrap_err();
    assert_eq!(e.to_string(), format!("topology.loss: {prob}, got nan"));
    // JSON as Python's json.dumps writes a NaN: the key path, not a syntax error.
    let e = Scenario::from_json(r#"{"topology": {"kind": "single_link", "rate": "1Mbps", "delay": "1ms", "loss": NaN}, "flows": [{"bytes": 1}]}"#, &[]).unwrap_err();
    assert_eq!(e.to_string(), format!("topology.loss: {prob}, got nan"));
    let e = Scenario::from_json(r#"{"topology": {"kind": "single_link", "rate": "1Mbps", "delay": "1ms"}, "flows": [{"bytes": 1, "tcp": {"mss": -Infinity}}]}"#, &[]).unwrap_err();
    assert_eq!(e.to_string(), "flows[0].tcp.mss: expected a size in bytes or with a unit, such as \"16KB\", got -inf (not a finite number)");
    // A custom link's loss keeps its plain f64 field but is read by the same type.
    let custom = "[topology]\nkind = \"custom\"\nnodes = [\"a\", \"b\"]\nlinks = [{ a = \"a\", b = \"b\", rate = \"1Mbps\", delay = \"1ms\", reverse_loss = nan }]\n[[flows]]\nfrom = \"a\"\nto = \"b\"\nbytes = 1\n";
    assert_eq!(Scenario::from_toml(custom, &[]).unwrap_err().to_string(), format!("topology.links[0].reverse_loss: {prob}, got nan"));
}

#[test]
fn derived_times_that_overflow_are_refused_with_their_keys() {
    assert_eq!(
        refused(&["flows.0.count=10", "flows.0.start_spacing=\"4e18ns\""]),
        "flows[0].start_spacing: flow 10 of this entry would start at 36000000000000000000 ns, which is beyond the largest simulated time (2^62 ns, about 146 years); keys: flows[0].start = 0s, flows[0].count = 10, flows[0].start_spacing = 4000000000s"
    );
    assert_eq!(
        refused(&["flows.0.repeat=6", "flows.0.think=\"4.6e18ns\""]),
        "flows[0].think: the 5 thinks between its 6 transfers add up to 23000000000000000000 ns, so the last transfer would start after 23000000000000000000 ns, which is beyond the largest simulated time (2^62 ns, about 146 years); keys: flows[0].think = 4600000000s, flows[0].repeat = 6, flows[0].start = 0s"
    );
    // At the limit exactly: accepted, and the starts are as specified (no wrap).
    let s = Scenario::from_toml(BASE, &["flows.0.count=3".into(), "flows.0.start_spacing=\"2305843009213693952ns\"".into()]).unwrap();
    let starts: Vec<u64> = s.resolve_flows().unwrap().iter().map(|f| f.start).collect();
    assert_eq!(starts, [0, 1 << 61, 1 << 62]);
    assert!(refused(&["duration=\"4611686018427387905ns\""]).starts_with("duration: duration \"4611686018427387905ns\" is beyond the largest simulated time"));
    assert_eq!(
        refused(&["flows.0.bytes=\"1048576GB\"", "flows.0.repeat=4096", "flows.0.count=2"]).split(';').next().unwrap(),
        "flows[0].bytes: the transfers add up to more than 4611686018427387904 bytes (2^62), the most a run may carry"
    );
}

#[test]
fn a_run_that_cannot_end_within_the_clock_is_refused() {
    // 1 GiB at 1 bit/s takes 8.6e18 ns at the very least: beyond 2^62 ns, and a few times that
    // would wrap the clock. With a duration the run simply stops there.
    assert_eq!(
        refused(&["topology.rate=\"1bps\"", "flows.0.bytes=\"1GB\""]),
        "flows[0].bytes: 1 transfers of 1073741824 bytes need at least 8589934592000000000 ns at 1bps (the fastest link), beyond the largest simulated time (2^62 ns, about 146 years); set a `duration` or send less"
    );
    assert!(Scenario::from_toml(BASE, &["topology.rate=\"1bps\"".into(), "flows.0.bytes=\"1GB\"".into(), "duration=\"1s\"".into()]).is_ok());
    assert!(Scenario::from_toml(BASE, &["topology.rate=\"1bps\"".into(), "flows.0.bytes=\"100MB\"".into()]).is_ok());
}

#[test]
fn a_filter_for_transfer_zero_is_refused() {
    assert_eq!(
        refused(&["flows.0.drops=[{kind=\"syn\",transfer=0}]"]),
        "flows[0].drops[0].transfer: expected a transfer number from 1 (transfers count from 1)"
    );
    // A transfer the flow never makes can never be filtered either.
    assert_eq!(
        refused(&["flows.0.repeat=2", "flows.0.drops=[{kind=\"syn\",transfer=3}]"]),
        "flows[0].drops[0].transfer: the flow makes 2 transfers (repeat = 2), so transfer 3 never comes"
    );
    assert!(Scenario::from_toml(BASE, &["flows.0.repeat=3".into(), "flows.0.drops=[{kind=\"syn\",transfer=3}]".into()]).is_ok());
}

#[test]
fn a_huge_dumbbell_is_refused_by_its_size_in_under_a_second() {
    let t0 = std::time::Instant::now();
    let text = "[topology]\nkind = \"dumbbell\"\npairs = 2147483648\naccess_rate = \"100Mbps\"\naccess_delay = \"1ms\"\nbottleneck_rate = \"10Mbps\"\nbottleneck_delay = \"10ms\"\n[[flows]]\nfrom = \"s1\"\nto = \"r1\"\nbytes = 1000\n";
    let e = Scenario::from_toml(text, &[]).unwrap_err();
    assert!(t0.elapsed().as_secs_f64() < 1.0);
    assert_eq!(
        e.to_string(),
        "topology.pairs: 4294967298 nodes is more than a world can index (4294967295); estimate: 4294967298 nodes, 8589934594 link directions, 1 flows, 1 transfers, routing 16 B; driven by topology.pairs = 2147483648"
    );
    // Within the indices but above the memory limit: the estimate, the limit and the key.
    // (The world grows linearly with the pairs: about 6 KiB a pair, so 10^8 pairs.)
    let e = Scenario::from_toml(&text.replace("2147483648", "100000000"), &[]).unwrap_err();
    assert_eq!(e.path, "topology.pairs");
    // (The figure follows the sizes of the world's structures, so it is read within a range.)
    let gib: f64 = e.message.strip_prefix("the world would take about ").and_then(|m| m.split(" GiB").next()).and_then(|g| g.parse().ok()).unwrap_or_else(|| panic!("{e}"));
    assert!((500.0..700.0).contains(&gib), "{e}");
    assert!(e.message.contains(" GiB of memory, above the limit of"), "{e}");
    assert!(e.message.ends_with("driven by topology.pairs = 100000000"), "{e}");
}

/// A knob whose range depends on another is judged alone over a base that allows its widest
/// range, then with the profile's values: `jiffy_offset` in `[tcp]` over the `linux` profile (HZ
/// 250 from the profile) was refused as if HZ were unset.
#[test]
fn a_jiffy_offset_over_a_profile_that_sets_hz_is_judged_with_it() {
    let text = format!("{BASE}[tcp]\nprofile = \"linux\"\n");
    assert!(Scenario::from_toml(&text, &["tcp.jiffy_offset=1ms".into()]).is_ok());
    let e = Scenario::from_toml(&text, &["tcp.jiffy_offset=5ms".into()]).unwrap_err().to_string();
    assert!(e.starts_with("tcp.jiffy_offset: expected less than one jiffy"), "{e}");
    let e = Scenario::from_toml(BASE, &["tcp.jiffy_offset=1ms".into()]).unwrap_err().to_string();
    assert!(e.starts_with("tcp.jiffy_offset:"), "{e}");
}
