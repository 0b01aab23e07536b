//! Wall time of the simulator core alone on a scenario, with time series recorded or not
//! (bench/bench_series.py; bench/README.md, "Time series: off and on"):
//! `cargo run --release --example series_speed -- SCENARIO REPS [--set key=value ...]`.
//! Prints one line per repetition: `wall_s events`. Uses only the API every version of the core
//! has (parse, run), so that the same harness times an older build too.

use std::time::Instant;
use tcplab_core::{run, Scenario};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let path = args.first().expect("usage: series_speed SCENARIO REPS [--set key=value ...]");
    let reps: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(1);
    let sets: Vec<String> = args.windows(2).filter(|w| w[0] == "--set").map(|w| w[1].clone()).collect();
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let s = Scenario::from_toml(&text, &sets).unwrap_or_else(|e| panic!("{e}"));
    for _ in 0..reps {
        let t0 = Instant::now();
        let r = run(&s, 1).expect("runs");
        let wall = t0.elapsed().as_secs_f64();
        println!("{wall:.6} {}", r.meta.events);
        drop(r);
    }
}
