//! Short connections: wall time, connections per wall second and peak memory of a long run of
//! request/response objects, each on a connection of its own (bench/README.md, "Short
//! connections"): `cargo run --release --example short_conns -- [scenario] [--set key=value ...]`,
//! by default `bench/scenarios/short_conns.toml` (10^5 objects). Add `--set
//! 'apps.0.mode="oneway"'` style overrides to time other modes.

use std::time::Instant;
use tcplab_core::{Scenario, World};

/// The process's peak resident set (VmHWM), in KiB, from /proc (Linux); None elsewhere.
fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let default = concat!(env!("CARGO_MANIFEST_DIR"), "/../../bench/scenarios/short_conns.toml").to_string();
    let path = args.first().filter(|a| !a.starts_with("--")).cloned().unwrap_or(default);
    let sets: Vec<String> = args.windows(2).filter(|w| w[0] == "--set").map(|w| w[1].clone()).collect();
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let s = Scenario::from_toml(&text, &sets).unwrap_or_else(|e| panic!("{e}"));
    let rss_before = peak_rss_kib();
    let t0 = Instant::now();
    let mut w = World::build(&s, 1).expect("builds");
    let mut peak_live = 0;
    let mut steps = 0u64;
    while w.step() {
        steps += 1;
        if steps % 1024 == 0 {
            peak_live = peak_live.max(w.live_connections());
        }
    }
    let live_at_end = w.live_connections();
    let r = w.finish_run().expect("finishes");
    let wall = t0.elapsed().as_secs_f64();
    let objects = r.objects.len();
    let complete = r.objects.iter().filter(|o| o.delivered_s.is_some()).count();
    println!("scenario {path}");
    println!("objects {objects} (complete {complete}), simulated {:.0} s, events {}", r.meta.sim_time_s, r.meta.events);
    println!("wall {wall:.2} s, {:.0} connections per wall second, {:.2} M events/s", objects as f64 / wall, r.meta.events as f64 / wall / 1e6);
    println!("live endpoints: peak (sampled) {peak_live}, at the end {live_at_end}");
    match (rss_before, peak_rss_kib()) {
        (Some(b), Some(p)) => println!("peak RSS {:.1} MiB (before the run {:.1} MiB)", p as f64 / 1024.0, b as f64 / 1024.0),
        _ => println!("peak RSS: not available on this system"),
    }
}
