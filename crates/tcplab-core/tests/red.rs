//! RED (Floyd & Jacobson 1993) in whole runs: long-lived TCP flows through a RED bottleneck keep
//! the average queue between the thresholds where DropTail with the same buffer keeps it full;
//! RED that never acts changes nothing; the physical limit still drops; runs are reproducible.
//! The algorithm itself (EWMA, idle correction, thresholds, gentle, count spreading, byte mode) is
//! tested packet by packet in `src/net/red.rs`.
//!
//! Run with `cargo test --release -p tcplab-core --test red -- --nocapture` to see the numbers.

use tcplab_core::result::LinkRow;
use tcplab_core::{run, RunResult, Scenario};

/// A dumbbell of `pairs` bulk NewReno flows (1000-byte packets, as in Seddigh et al. and
/// Mathis et al.) through a 10 Mb/s, 20 ms bottleneck with the given queue, for `seconds`.
fn dumbbell(queue: &str, pairs: u32, seconds: u32, seed: u64) -> RunResult {
    // Access delays 2, 4, 6, ... ms: unequal RTTs, so the flows do not synchronise by construction.
    let access_delay = (1..=pairs).map(|i| format!("\"{}ms\"", 2 * i)).collect::<Vec<_>>().join(", ");
    let text = format!(
        r#"
name = "red-dumbbell"
duration = "{seconds}s"
[topology]
kind = "dumbbell"
pairs = {pairs}
access_rate = "100Mbps"
access_delay = [{access_delay}]
bottleneck_rate = "10Mbps"
bottleneck_delay = "20ms"
queue = {queue}
[tcp]
variant = "newreno"
mss = 960
[[flows]]
from = "s{{i}}"
to = "r{{i}}"
count = {pairs}
start_spacing = "137ms"
bytes = "unlimited"
"#
    );
    let s = Scenario::from_toml(&text, &[]).unwrap_or_else(|e| panic!("{e}\n{text}"));
    run(&s, seed).unwrap()
}

fn bottleneck(r: &RunResult) -> &LinkRow {
    let l = &r.links[0];
    assert_eq!(l.link, "bottleneck:left->right");
    l
}

fn show(what: &str, l: &LinkRow) {
    eprintln!(
        "{what}: avg queue {:.1} pkts (max {}), RED avg {:?}, drops queue {} early {} forced {}, utilisation {:.3}",
        l.avg_queue_pkts, l.max_queue_pkts, l.red_avg_mean, l.dropped_queue, l.dropped_red_early, l.dropped_red_forced, l.utilization
    );
}

/// FJ93 §1, §11: RED keeps the average queue low (near or between min_th and max_th) while the
/// link stays busy; DropTail with the same buffer lets the queue sit much fuller. Seddigh et al.'s
/// RED (min_th 40, max_th 80, max_p 0.1, w_q 0.002) and buffer (100 packets).
///
/// Measured (seed 1, 60 s): RED avg 37.9 (time average of RED's average), queue 38.6, 217 early
/// drops, and 215 buffer-overflow drops, every one in the first seconds (the staggered slow
/// starts overrun the buffer before the average has moved); DropTail queue 67.7. Eight flows need
/// only p ≈ 0.003, far below max_p, so the average hovers about min_th (with `wait` the drops
/// come at most one per 1/p_b arrivals, and it dips below min_th between them).
#[test]
fn red_holds_the_average_queue_between_the_thresholds_where_droptail_fills_it() {
    let red = dumbbell("{ packets = 100, red = { min_th = 40, max_th = 80, max_p = 0.1, w_q = 0.002 } }", 8, 60, 1);
    let dt = dumbbell("100", 8, 60, 1);
    let (r, d) = (bottleneck(&red), bottleneck(&dt));
    show("RED     ", r);
    show("DropTail", d);
    let avg = r.red_avg_mean.expect("a RED queue reports its average");
    assert!((30.0..80.0).contains(&avg), "RED's average queue {avg} is not near or between the thresholds");
    assert!(r.avg_queue_pkts > 20.0 && r.avg_queue_pkts < 80.0, "RED queue {}", r.avg_queue_pkts);
    assert!(r.dropped_red_early > 0, "RED made no early drops");
    assert!(d.avg_queue_pkts > r.avg_queue_pkts + 10.0, "DropTail queue {} not fuller than RED's {}", d.avg_queue_pkts, r.avg_queue_pkts);
    assert_eq!(d.dropped_red_early + d.dropped_red_forced, 0);
    assert_eq!(d.red_avg_mean, None);
    assert!(r.utilization > 0.95 && d.utilization > 0.95, "utilisation RED {} DropTail {}", r.utilization, d.utilization);
    for res in [&red, &dt] {
        for l in &res.links {
            assert_eq!(l.dropped_pkts, l.dropped_queue + l.dropped_loss + l.dropped_filter + l.dropped_red_early + l.dropped_red_forced);
            assert!(l.offered_pkts >= l.sent_pkts + l.dropped_pkts);
            assert!(l.offered_pkts - l.sent_pkts - l.dropped_pkts <= l.max_queue_pkts);
        }
        let dropped: u64 = res.links.iter().map(|l| l.dropped_pkts).sum();
        assert_eq!(dropped, res.meta.packets_dropped);
    }
}

/// The same with ns-2's default RED (min_th 5, max_th 15) on a 50-packet buffer. Thresholds this
/// small against a bandwidth-delay product of ~60 packets cost some utilisation (FJ93 §11 asks
/// for min_th large enough to keep the link busy): measured (seed 2) RED avg 4.2, queue 5.1,
/// utilisation 0.886; DropTail queue 28.9, utilisation 0.987.
#[test]
fn ns_default_red_keeps_a_short_queue() {
    let red = dumbbell("{ kind = \"red\", packets = 50 }", 4, 60, 2);
    let dt = dumbbell("50", 4, 60, 2);
    let (r, d) = (bottleneck(&red), bottleneck(&dt));
    show("RED     ", r);
    show("DropTail", d);
    let avg = r.red_avg_mean.unwrap();
    assert!((3.75..15.0).contains(&avg), "RED's average queue {avg}");
    assert!(d.avg_queue_pkts > 3.0 * r.avg_queue_pkts, "DropTail {} vs RED {}", d.avg_queue_pkts, r.avg_queue_pkts);
    assert!(r.utilization > 0.85, "utilisation {}", r.utilization);
}

/// RED whose thresholds are never reached makes no draws and drops nothing, so the run is the
/// DropTail run with the same limit, counter for counter (its random stream is its own).
#[test]
fn red_that_never_acts_is_droptail() {
    let red = dumbbell("{ packets = 30, red = { min_th = 1000, max_th = 2000 } }", 3, 20, 5);
    let dt = dumbbell("30", 3, 20, 5);
    assert!(bottleneck(&dt).dropped_queue > 0, "the case is not trivial");
    let strip = |r: &RunResult| {
        let mut v = serde_json::to_value(r).unwrap();
        v.as_object_mut().unwrap().remove("scenario");
        for l in v["links"].as_array_mut().unwrap() {
            l.as_object_mut().unwrap().remove("red_avg_mean");
        }
        // A RED bottleneck moves its packets by events, a DropTail one is computed
        // (net/vfifo.rs): the same run in another number of events.
        v["meta"]["events"] = 0.into();
        v
    };
    assert_eq!(strip(&red), strip(&dt));
    assert!(bottleneck(&red).red_avg_mean.unwrap() > 0.0);
}

/// The physical limit drops when the buffer is full whatever RED decided (`dropped_queue`).
#[test]
fn physical_limit_still_applies_under_red() {
    let red = dumbbell("{ packets = 8, red = { min_th = 20, max_th = 40 } }", 4, 20, 3);
    let l = bottleneck(&red);
    show("RED, 8-packet buffer", l);
    assert!(l.dropped_queue > 0);
    assert!(l.max_queue_pkts <= 8);
    assert_eq!(l.dropped_red_early + l.dropped_red_forced, 0, "avg cannot reach min_th with 8 packets");
}

/// A (scenario, seed) pair gives the same result; another seed gives other RED drops.
#[test]
fn red_runs_are_deterministic() {
    let q = "{ packets = 60, red = { min_th = 5, max_th = 15, w_q = 0.01, wait = false, gentle = true } }";
    let a = dumbbell(q, 4, 20, 7);
    let b = dumbbell(q, 4, 20, 7);
    assert_eq!(serde_json::to_string(&a).unwrap(), serde_json::to_string(&b).unwrap());
    let c = dumbbell(q, 4, 20, 8);
    let (x, y) = (bottleneck(&a), bottleneck(&c));
    assert!(x.dropped_red_early + x.dropped_red_forced > 0);
    assert_ne!((x.dropped_red_early, x.dropped_red_forced, x.sent_pkts), (y.dropped_red_early, y.dropped_red_forced, y.sent_pkts));
}

