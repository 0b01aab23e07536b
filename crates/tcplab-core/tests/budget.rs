//! Run limits (engine/budget.rs): a run within its budget gives the same result as an unlimited
//! one; a run over its event or wall-time budget stops, with where it had got to, and never panics.

use std::time::Duration;
use tcplab_core::{run, run_limited, Budget, Limit, RunError, Scenario};

fn scenario(bytes: &str) -> Scenario {
    let text = format!("[topology]\nkind = \"single_link\"\nrate = \"10Mbps\"\ndelay = \"10ms\"\n[[flows]]\nbytes = \"{bytes}\"\n");
    Scenario::from_toml(&text, &[]).unwrap()
}

fn json(r: &tcplab_core::RunResult) -> String {
    serde_json::to_string(r).unwrap()
}

#[test]
fn a_run_within_its_budget_is_the_run_without_one() {
    let s = scenario("1MB");
    let free = run(&s, 7).unwrap();
    let events = free.meta.events;
    // Exactly the events the run needs is enough; a generous wall budget changes nothing.
    let limited = run_limited(&s, 7, &Budget::new(Some(Duration::from_secs(600)), Some(events))).unwrap();
    assert_eq!(json(&free), json(&limited));
    assert_eq!(json(&free), json(&run_limited(&s, 7, &Budget::default()).unwrap()));
}

#[test]
fn one_event_too_few_stops_the_run_with_where_it_got_to() {
    let s = scenario("1MB");
    let events = run(&s, 7).unwrap().meta.events;
    match run_limited(&s, 7, &Budget::new(None, Some(events - 1))) {
        Err(RunError::Limit(hit)) => {
            assert_eq!(hit.limit, Limit::MaxEvents);
            assert_eq!(hit.events, events, "stops on the first event past the allowance");
            assert!(hit.sim_time_s > 0.0);
            assert!(hit.to_string().contains(&format!("its limit of {} events", events - 1)), "{hit}");
        }
        other => panic!("expected a limit, got {:?}", other.map(|r| r.meta.events)),
    }
    // A small allowance stops within the first slice.
    match run_limited(&s, 7, &Budget::new(None, Some(10))) {
        Err(RunError::Limit(hit)) => assert_eq!(hit.events, 11),
        other => panic!("expected a limit, got {:?}", other.map(|r| r.meta.events)),
    }
}

#[test]
fn a_run_of_hours_stops_at_its_wall_deadline() {
    // An unlimited transfer for a simulated year at 10 Gb/s: hours of wall time without a limit.
    let text = "duration = \"8760h\"\n[topology]\nkind = \"single_link\"\nrate = \"10Gbps\"\ndelay = \"10ms\"\n[[flows]]\nbytes = \"unlimited\"\n";
    let s = Scenario::from_toml(text, &[]).unwrap();
    let t0 = std::time::Instant::now();
    match run_limited(&s, 1, &Budget::new(Some(Duration::from_millis(200)), None)) {
        Err(RunError::Limit(hit)) => {
            assert_eq!(hit.limit, Limit::MaxWall);
            assert!(hit.wall_time_s >= 0.2 && hit.events > 0 && hit.sim_time_s > 0.0, "{hit:?}");
            assert!(hit.to_string().starts_with("run stopped at its wall-time limit of 0.2 s"), "{hit}");
        }
        other => panic!("expected a limit, got {:?}", other.map(|r| r.meta.events)),
    }
    // Bounded by the deadline plus one slice of events, not by the simulated year.
    assert!(t0.elapsed() < Duration::from_secs(30));
}

/// Issue reproducer: a CBR source with `interval = "1ns"` feeding a slow link whose queue has no
/// limit grows without bound while it runs. With what the memory limit leaves above the world
/// bounded (`World::bound_growth`), the run stops with `Limit::Memory` and says what grew,
/// instead of a failed allocation aborting the process.
#[test]
fn run_time_growth_past_the_memory_limit_stops_the_run_with_its_cause() {
    let text = "duration = \"10s\"\n[topology]\nkind = \"single_link\"\nrate = \"1Mbps\"\ndelay = \"10ms\"\n\
                [[apps]]\nkind = \"cbr\"\nname = \"flood\"\ninterval = \"1ns\"\npacket = \"1000B\"\n";
    let s = Scenario::from_toml(text, &[]).unwrap();
    let mut w = tcplab_core::World::build(&s, 1).unwrap();
    w.bound_growth(8 << 20);
    let hit = w.run_with(&Budget::default()).unwrap_err();
    assert_eq!(hit.limit, Limit::Memory);
    assert_eq!(hit.limit.name(), "memory");
    let msg = hit.to_string();
    assert!(msg.contains("memory limit") && msg.contains("queue"), "{msg}");
    assert!(hit.sim_time_s < 0.01, "{hit}");
    // The same source with a queue limit runs to its end within the same bound.
    let bounded = text.replace("delay = \"10ms\"\n", "delay = \"10ms\"\nqueue = 100\n").replace("10s", "50ms");
    let mut w = tcplab_core::World::build(&Scenario::from_toml(&bounded, &[]).unwrap(), 1).unwrap();
    w.bound_growth(8 << 20);
    assert!(w.run_with(&Budget::default()).is_ok());
}
