//! Wall time, events and peak memory of the simulator core alone (no Python) on the benchmark
//! dumbbell with many flows:
//! `cargo run --release --example scale -- N [KEY=VALUE ...]`, e.g.
//! `cargo run --release --example scale -- 4096 topology.bottleneck_rate=1Gbps duration=100s`.
//! Sets `topology.pairs = N` and `flows.0.count = N`, then any further `--set`-style overrides.
//! Prints one line: the set-up time (parse, validate, check the footprint, build the world), the
//! run time, events, packets through the bottleneck (left->right), ns of wall time per bottleneck
//! packet, events per second, the peak resident set (VmHWM from /proc/self/status), and how many connections
//! have reacted to a loss (a timeout or a fast retransmit), i.e. left slow start.

use std::time::Instant;
use tcplab_core::{Scenario, World};

fn vm_hwm_kib() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: u64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(64);
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../bench/scenarios/dumbbell.toml");
    let text = std::fs::read_to_string(path).expect("bench/scenarios/dumbbell.toml");
    let mut sets = vec![format!("topology.pairs={n}"), format!("flows.0.count={n}")];
    sets.extend(args.iter().skip(2).cloned());
    let t0 = Instant::now();
    let s = Scenario::from_toml(&text, &sets).expect("valid scenario");
    let tp = Instant::now();
    // As `tcplab_core::run` does: the footprint check again (for a Scenario built in Rust), then
    // the world.
    tcplab_core::footprint::check(&s).expect("within the memory limit");
    let mut w = World::build(&s, 1).expect("builds");
    let t1 = Instant::now();
    w.run();
    let t2 = Instant::now();
    let r = w.finish();
    let t3 = Instant::now();
    let bottleneck = r.links.iter().find(|l| l.link.starts_with("bottleneck:left->")).map_or(0, |l| l.sent_pkts);
    let run_s = (t2 - t1).as_secs_f64();
    // A flow has left slow start once it has reacted to a loss (a timeout or a fast retransmit).
    let left_ss = r.connections.iter().filter(|c| c.timeouts + c.fast_retransmits > 0).count();
    println!(
        "N={n} setup {:.3} s (parse {:.3} s) run {:.4} s finish {:.3} s events {} bottleneck_pkts {} ns/bottleneck_pkt {:.0} events/s {:.2} M peak_rss {:.1} MiB flows_after_a_loss {}/{}",
        (t1 - t0).as_secs_f64(),
        (tp - t0).as_secs_f64(),
        run_s,
        (t3 - t2).as_secs_f64(),
        r.meta.events,
        bottleneck,
        (t3 - t0).as_secs_f64() * 1e9 / bottleneck.max(1) as f64,
        r.meta.events as f64 / run_s / 1e6,
        vm_hwm_kib().unwrap_or(0) as f64 / 1024.0,
        left_ss,
        r.connections.len()
    );
}
