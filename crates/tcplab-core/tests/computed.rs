//! Computed directions (`net/vfifo.rs`): a plain DropTail direction decides a packet's fate and
//! times when it is offered, with no event for its transmission, and a chained one is offered
//! its packets by the one direction that feeds it, with no event for their arrival there. The
//! results are those of the world that moves every packet by events and queues every
//! transmission's end (the reference, `World::queue_every_transmission_end`), event counts
//! aside, and those of a run with instruments (which always moves packets by events).
//! tests/properties.rs checks the same on generated transfers and dumbbells.

use tcplab_core::{run, RunResult, Scenario, World};

fn scenario(text: &str, sets: &[&str]) -> Scenario {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    Scenario::from_toml(text, &sets).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

fn bench() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../bench/scenarios/dumbbell.toml")).unwrap()
}

/// The run's JSON without its event count.
fn json(r: &RunResult) -> serde_json::Value {
    let mut v = serde_json::to_value(r).unwrap();
    v["meta"]["events"] = 0.into();
    v
}

fn reference(s: &Scenario, seed: u64) -> RunResult {
    let mut w = World::build(s, seed).unwrap();
    w.queue_every_transmission_end();
    w.run();
    w.finish()
}

fn modes(s: &Scenario) -> Vec<(String, u8, bool)> {
    let mut w = World::build(s, 1).unwrap();
    assert!(w.step(), "the run has a first event");
    w.link_modes()
}

#[test]
fn the_one_flow_dumbbell_is_chained_end_to_end() {
    let s = scenario(&bench(), &["duration=10s"]);
    let m = modes(&s);
    // Every direction is plain; each host's first hop is fed by its host (not chained), every
    // other one by exactly one direction that sends all its packets on to it.
    for (name, mode, chained) in &m {
        assert_eq!(*mode, 1, "{name} is computed");
        let first_hop = name.starts_with("s1-") || name.starts_with("r1-") || name.contains(":s1->") || name.contains(":r1->");
        assert_eq!(*chained, !first_hop, "{name}: {m:?}");
    }
    // One event a packet that reaches its endpoint (its arrival there), a few timers besides.
    let r = run(&s, 1).unwrap();
    assert!(r.meta.events < r.meta.packets_delivered + r.meta.packets_delivered / 10, "{} events for {} packets delivered", r.meta.events, r.meta.packets_delivered);
    assert_eq!(json(&r), json(&reference(&s, 1)));
}

#[test]
fn a_shared_bottleneck_is_computed_and_fans_out_by_events() {
    let s = scenario(&bench(), &["topology.pairs=4", "flows.0.count=4", "duration=10s"]);
    for (name, mode, chained) in modes(&s) {
        assert_eq!(mode, 1, "{name} is computed");
        // The bottleneck has four feeders and sends on to four last hops: nothing is chained.
        assert!(!chained, "{name} is not chained");
    }
    let r = run(&s, 1).unwrap();
    assert_eq!(json(&r), json(&reference(&s, 1)));
}

/// Ties are the test: round numbers (1 Mb/s, 1000-byte packets, whole milliseconds) make
/// arrivals and transmission ends meet in the same nanosecond, where the order of events decides.
const TIES: &str = r#"
duration = "20s"
warmup = "3s"
[topology]
kind = "dumbbell"
pairs = 2
access_rate = "10Mbps"
access_delay = "1ms"
bottleneck_rate = "1Mbps"
bottleneck_delay = "10ms"
queue = 6
[tcp]
mss = 960
delayed_ack = false
[[flows]]
from = "s1"
to = "r1"
bytes = "unlimited"
[[flows]]
from = "s2"
to = "r2"
bytes = "unlimited"
start = "8ms"
"#;

#[test]
fn instruments_see_the_run_that_runs_without_them() {
    let s = scenario(TIES, &[]);
    let plain = run(&s, 3).unwrap();
    assert_eq!(json(&plain), json(&reference(&s, 3)));
    // A time series observes every hop, so that run moves every packet by events.
    let observed = scenario(TIES, &[r#"series=[{ kind = "queue", interval = "10ms" }]"#]);
    assert!(modes(&observed).iter().all(|&(_, m, _)| m == 0));
    let mut with_series = json(&run(&observed, 3).unwrap());
    with_series["series"] = serde_json::Value::Null;
    with_series["scenario"] = plain_json_scenario(&plain);
    let mut a = json(&plain);
    a["series"] = serde_json::Value::Null;
    assert_eq!(a, with_series);
}

fn plain_json_scenario(r: &RunResult) -> serde_json::Value {
    serde_json::to_value(r).unwrap()["scenario"].clone()
}

#[test]
fn a_run_that_ends_with_its_transfers_counts_what_happened_by_then() {
    // No duration: the run ends when both transfers are delivered, with packets (ACKs, the
    // FIN's) still decided on computed directions; a drop-heavy queue of 3.
    let text = TIES.replace("duration = \"20s\"\nwarmup = \"3s\"\n", "").replace("queue = 6", "queue = 3").replace("bytes = \"unlimited\"", "bytes = \"200KB\"");
    let s = scenario(&text, &[]);
    let r = run(&s, 5).unwrap();
    assert!(r.meta.completed);
    assert!(r.links.iter().any(|l| l.dropped_queue > 0), "the queue drops");
    assert_eq!(json(&r), json(&reference(&s, 5)));
    let (created, delivered, dropped, in_flight) = (r.meta.packets_created, r.meta.packets_delivered, r.meta.packets_dropped, r.meta.packets_in_flight);
    assert_eq!(created, delivered + dropped + in_flight);
}
