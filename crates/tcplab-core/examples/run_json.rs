//! Run a scenario file and print its whole result as JSON (a debugging aid without Python):
//! `cargo run --release --example run_json -- SCENARIO.toml [SEED] [key=value ...]`
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = args.get(1).expect("usage: run_json SCENARIO.toml [SEED] [key=value ...]");
    let text = std::fs::read_to_string(path).expect("readable scenario");
    let sets: Vec<String> = args.iter().skip(3).cloned().collect();
    let s = tcplab_core::Scenario::from_toml(&text, &sets).unwrap_or_else(|e| panic!("{e}"));
    let seed = args.get(2).and_then(|x| x.parse().ok()).unwrap_or(s.seed);
    let t0 = Instant::now();
    let r = tcplab_core::run(&s, seed).unwrap_or_else(|e| panic!("{e}"));
    let wall = t0.elapsed().as_secs_f64();
    println!("{}", serde_json::to_string_pretty(&r).unwrap());
    eprintln!("wall {wall:.3} s, {} events, {:.2} M events/s", r.meta.events, r.meta.events as f64 / wall / 1e6);
}
