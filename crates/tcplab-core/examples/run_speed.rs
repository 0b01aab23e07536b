//! Wall time of the simulator core alone (no Python) on the benchmark dumbbell:
//! `cargo run --release --example run_speed -- [N flows] [repetitions]`. Prints the median and
//! best wall time, events and events per second; used to compare two builds in one session.

use std::time::Instant;
use tcplab_core::{run, Scenario};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: u32 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(16);
    let reps: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(7);
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../bench/scenarios/dumbbell.toml");
    let text = std::fs::read_to_string(path).expect("bench/scenarios/dumbbell.toml");
    let s = Scenario::from_toml(&text, &[format!("topology.pairs={n}"), format!("flows.0.count={n}")]).expect("valid");
    let mut times = Vec::new();
    let mut events = 0;
    for _ in 0..reps {
        let t0 = Instant::now();
        let r = run(&s, 1).expect("runs");
        times.push(t0.elapsed().as_secs_f64());
        events = r.meta.events;
    }
    times.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let med = times[times.len() / 2];
    println!("N={n} median {:.4} s best {:.4} s events {events} ({:.1} M events/s at the median)", med, times[0], events as f64 / med / 1e6);
}
