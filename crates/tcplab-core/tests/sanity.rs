//! The Mathis et al. (1997) sanity check: a bulk transfer over a path that never queues, with
//! Bernoulli loss p on the data direction only, settles at
//!
//!     BW = (MSS / RTT) · C / √p,   i.e.   C = BW · RTT / MSS · √p,
//!
//! with C ≈ √(3/4) ≈ 0.87 when every second segment is acknowledged (delayed ACKs) and
//! C ≈ √(3/2) ≈ 1.22 when every segment is (an idealised per-round model with Bernoulli loss gives
//! the same, 0.87 and 1.23). Timeouts (RTO ≥ 1 s = 10 RTTs) and the repair rounds of fast recovery
//! pull the measured constant a little below the model's; with delayed ACKs the 200 ms timer, longer
//! than the 100 ms RTT, also holds the odd segment of a round for a whole round, which costs
//! another ~15 % (see `delayed_ack_hold_explains_the_deficit`).
//!
//! Measured with seed 1 over 2000 s (the spread over seeds 1–10 in brackets):
//! NewReno 0.746 [0.70–0.77] and Reno 0.703 [0.68–0.72] with delayed ACKs; NewReno 1.154 and
//! Reno 1.105 acknowledging every segment [1.08–1.18 over seeds 1–5 at 3000 s].
//!
//! BW is the connection's goodput (bytes delivered in order per second of the run), RTT the mean of
//! its RTTM samples (rtt_avg_s), p the link's loss probability; the same constant is also printed
//! with Mathis's own p, CA events per acknowledged segment (p_ca). Run with
//! `cargo test --release -p tcplab-core --test sanity -- --nocapture` to see the numbers.

use tcplab_core::result::ConnRow;
use tcplab_core::{run, RunResult, Scenario};

const P: f64 = 0.01;
const MSS: f64 = 1460.0;

/// A single 100 Mb/s link, 50 ms each way, unlimited queue, loss p on the data direction only,
/// one unlimited bulk flow with the `rfc` profile and the given TCP overrides.
fn bulk(tcp: &str, seconds: u32) -> RunResult {
    let text = format!(
        r#"
name = "mathis"
duration = "{seconds}s"
[topology]
kind = "single_link"
rate = "100Mbps"
delay = "50ms"
queue = "unlimited"
loss = {P}
reverse_loss = 0.0
[tcp]
profile = "rfc"
mss = 1460
{tcp}
[[flows]]
bytes = "unlimited"
"#
    );
    let s = Scenario::from_toml(&text, &[]).unwrap_or_else(|e| panic!("{e}"));
    let t0 = std::time::Instant::now();
    let r = run(&s, 1).unwrap();
    let wall = t0.elapsed().as_secs_f64();
    eprintln!("[{tcp:?}] {seconds} s simulated in {wall:.2} s wall, {} events", r.meta.events);
    r
}

struct Mathis {
    c: f64,
    c_pca: f64,
}

fn mathis(label: &str, r: &RunResult) -> Mathis {
    let c: &ConnRow = &r.connections[0];
    let bw = c.goodput_bps / 8.0; // bytes per second
    let rtt = c.rtt_avg_s.expect("RTT samples");
    let p_ca = c.p_ca.expect("segments acknowledged");
    let k = bw * rtt / MSS;
    let m = Mathis { c: k * P.sqrt(), c_pca: k * p_ca.sqrt() };
    let link = &r.links[0];
    eprintln!(
        "{label}: goodput {:.0} B/s, rtt_avg {:.4} s (min {:.4}, max {:.4}), segs_acked {:.0}, ca_events {}, non_ca_events {}, \
         timeouts {}, fast_retransmits {}, link loss rate {:.5}, p_ca {:.5}, max queue {} pkts, mean queueing delay {:.2e} s\n    C(p=0.01) = {:.3}   C(p_ca) = {:.3}",
        bw,
        rtt,
        c.rtt_min_s.unwrap(),
        c.rtt_max_s.unwrap(),
        c.segs_acked,
        c.ca_events,
        c.non_ca_events,
        c.timeouts,
        c.fast_retransmits,
        link.drop_rate.unwrap_or(0.0),
        p_ca,
        link.max_queue_pkts,
        link.avg_queue_delay_s.unwrap_or(0.0),
        m.c,
        m.c_pca
    );
    // The premises of the check: the link never queues and the loss is the link's, data only.
    // (A burst after a cumulative ACK may wait a few serialisation times of 0.12 ms; that is no
    // queueing on the scale of the RTT.)
    let qd = link.avg_queue_delay_s.unwrap();
    assert!(qd < 0.001, "the 100 Mb/s link queued: mean queueing delay {qd} s");
    assert_eq!(r.links[1].dropped_pkts, 0, "no loss on the ACK direction");
    assert!((link.drop_rate.unwrap() - P).abs() < 0.1 * P, "link loss rate {:?}", link.drop_rate);
    assert!(c.ca_events >= 50, "{label}: only {} congestion-avoidance cycles", c.ca_events);
    m
}

/// Simulated seconds of each run: about 1,200–1,900 CA cycles, some 15–35 ms of wall time each
/// in release mode. Long runs keep the seed-to-seed spread of C to a few per cent.
const SECS: u32 = 2000;

#[test]
fn mathis_newreno_delayed_acks() {
    let r = bulk("variant = \"newreno\"\ndelayed_ack = true", SECS);
    let m = mathis("newreno, delayed ACKs", &r);
    // Measured 0.70–0.77 over seeds 1–10 (0.746 with seed 1): below √(3/4) because the 200 ms
    // delayed-ACK timer is longer than the RTT, so with an odd number of segments per round one
    // segment waits a whole round for its partner (see `delayed_ack_hold_explains_the_deficit`).
    assert!((0.7..=1.1).contains(&m.c), "C = {:.3}, expected 0.7..1.1 (√(3/4) ≈ 0.87)", m.c);
}

#[test]
fn mathis_reno_delayed_acks() {
    let r = bulk("variant = \"reno\"\ndelayed_ack = true", SECS);
    let m = mathis("reno, delayed ACKs", &r);
    // Reno repairs a second loss in one window only by a second halving or a timeout (more non-CA
    // events and timeouts than NewReno), so its constant sits a few per cent below NewReno's:
    // measured 0.68–0.72 over seeds 1–10 (0.703 with seed 1). The lower bound is 0.65 rather
    // than NewReno's 0.7 for that reason.
    assert!((0.65..=1.1).contains(&m.c), "C = {:.3}, expected 0.65..1.1 (√(3/4) ≈ 0.87)", m.c);
}

#[test]
fn mathis_newreno_ack_every_segment() {
    let r = bulk("variant = \"newreno\"\ndelayed_ack = false", SECS);
    let m = mathis("newreno, ACK every segment", &r);
    assert!((1.0..=1.5).contains(&m.c), "C = {:.3}, expected 1.0..1.5 (√(3/2) ≈ 1.22)", m.c);
}

#[test]
fn mathis_reno_ack_every_segment() {
    let r = bulk("variant = \"reno\"\ndelayed_ack = false", SECS);
    let m = mathis("reno, ACK every segment", &r);
    assert!((1.0..=1.5).contains(&m.c), "C = {:.3}, expected 1.0..1.5 (√(3/2) ≈ 1.22)", m.c);
}

/// Acknowledging every segment opens the window twice as fast in congestion avoidance, so the
/// constant is about √2 larger than with delayed ACKs; the odd-segment hold of the 200 ms timer
/// (longer than the 100 ms RTT) costs delayed ACKs another ~10 %, so the ratio comes out ~1.55.
#[test]
fn ack_every_segment_is_about_sqrt2_faster() {
    let d = mathis("newreno, delayed ACKs (ratio)", &bulk("variant = \"newreno\"\ndelayed_ack = true", SECS));
    let e = mathis("newreno, ACK every segment (ratio)", &bulk("variant = \"newreno\"\ndelayed_ack = false", SECS));
    let ratio = e.c / d.c;
    eprintln!("C(every segment) / C(delayed) = {ratio:.3} (√2 ≈ 1.414)");
    assert!((1.2..=1.75).contains(&ratio), "ratio {ratio:.3}");
}

/// Why delayed ACKs fall short of √(3/4) here: with a delayed-ACK timeout well below the RTT the
/// odd segment of a round is acknowledged at once instead of a round later, and the constant
/// comes back to the model's (an idealised round model with Bernoulli loss gives 0.87).
#[test]
fn delayed_ack_hold_explains_the_deficit() {
    let held = mathis("newreno, delayed ACKs, 200 ms timer", &bulk("variant = \"newreno\"\ndelayed_ack = true", SECS));
    let quick = mathis("newreno, delayed ACKs, 1 ms timer", &bulk("variant = \"newreno\"\ndelayed_ack = true\ndelack_timeout = \"1ms\"", SECS));
    assert!((0.8..=1.0).contains(&quick.c), "C = {:.3} with a 1 ms delayed-ACK timer, expected 0.8..1.0", quick.c);
    assert!(quick.c > held.c * 1.1, "C {:.3} (1 ms timer) vs {:.3} (200 ms timer)", quick.c, held.c);
}
