//! Random Early Detection (Floyd & Jacobson, "Random Early Detection Gateways for Congestion
//! Avoidance", IEEE/ACM ToN 1993; "FJ93" below) as the queue discipline of a link direction, with
//! the options of ns-2's `Queue/RED` (`wait_`, `gentle_`, `bytes_`, `queue_in_bytes_`) that the
//! studies reproduced here ran with (Mathis et al. 1997 on ns-1; Seddigh et al. on ns-2).
//!
//! RED decides before the physical limit: an arrival it accepts can still find the buffer full,
//! and is then dropped by the limit as in DropTail (`dropped_queue`).

use crate::engine::RngStream;
use crate::units::{show_number, Size, Time, SEC};
use serde::{Deserialize, Serialize};

/// RED parameters. Defaults are ns-2's `Queue/RED` defaults (`tcl/lib/ns-default.tcl`), which
/// keep ns-1's values except `gentle_` (see `gentle`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RedSpec {
    /// Minimum threshold of the average queue, packets (ns `thresh_` 5).
    #[serde(deserialize_with = "crate::units::de_non_negative")]
    pub min_th: f64,
    /// Maximum threshold, packets (ns `maxthresh_` 15).
    #[serde(deserialize_with = "crate::units::de_non_negative")]
    pub max_th: f64,
    /// Drop probability reached at `max_th` (ns `linterm_` 10 = 1/max_p).
    #[serde(deserialize_with = "crate::units::de_probability")]
    pub max_p: f64,
    /// Weight of the queue-average EWMA (ns `q_weight_` 0.002; FJ93 §6 uses 0.002).
    #[serde(deserialize_with = "crate::units::de_non_negative")]
    pub w_q: f64,
    /// ns-2 `wait_` (true): spread drops further apart, p_a = p_b/(2 − count·p_b).
    pub wait: bool,
    /// ns-2 `gentle_`: above max_th the drop probability rises linearly from max_p to 1 at
    /// 2·max_th instead of jumping to 1. False in ns-1 and in ns-2 until 2001 (the default here,
    /// as the reproduced studies predate it or ran the ns-1 algorithm); true in later ns-2.
    pub gentle: bool,
    /// Typical packet size, for the idle-time correction and byte mode (ns `mean_pktsize_` 500).
    pub mean_pktsize: Size,
    /// ns-2 `bytes_` (false): byte mode, p_b scaled by size/mean_pktsize (FJ93 §4).
    pub byte_mode: bool,
    /// ns-2 `queue_in_bytes_` (false): average the queue in bytes; the thresholds stay in packets
    /// and are scaled by `mean_pktsize`, as ns-2 does.
    pub queue_in_bytes: bool,
    /// Mark an ECN-capable packet CE instead of an early drop (min_th ≤ avg < max_th; RFC 3168
    /// §5, ns-2's `setbit_`); drops above max_th and of other packets stay drops.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub ecn: bool,
}

impl Default for RedSpec {
    fn default() -> Self {
        RedSpec {
            min_th: 5.0,
            max_th: 15.0,
            max_p: 0.1,
            w_q: 0.002,
            wait: true,
            gentle: false,
            mean_pktsize: Size(500),
            byte_mode: false,
            queue_in_bytes: false,
            ecn: false,
        }
    }
}

impl RedSpec {
    /// Check the parameters; on error the key (under `red`) and what is wrong.
    pub fn validate(&self) -> Result<(), (String, String)> {
        let err = |k: &str, m: String| Err((k.to_string(), m));
        if !(self.min_th.is_finite() && self.min_th >= 0.0) {
            return err("min_th", format!("expected a number of packets ≥ 0, got {}", show_number(self.min_th)));
        }
        if !(self.max_th.is_finite() && self.max_th > self.min_th) {
            return err("max_th", format!("must exceed min_th ({}), got {}", self.min_th, show_number(self.max_th)));
        }
        if !(self.max_p > 0.0 && self.max_p <= 1.0) {
            return err("max_p", format!("expected a probability above 0 and at most 1, got {}", show_number(self.max_p)));
        }
        if !(self.w_q > 0.0 && self.w_q <= 1.0) {
            return err("w_q", format!("expected a weight above 0 and at most 1, got {}", show_number(self.w_q)));
        }
        if self.mean_pktsize.0 == 0 {
            return err("mean_pktsize", "expected at least 1 byte".into());
        }
        Ok(())
    }
}

/// What RED decided for an arrival.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Enqueue,
    /// A probabilistic drop with min_th ≤ avg < max_th.
    Early,
    /// avg ≥ max_th: every arrival dropped, or with `gentle` a probabilistic drop up to 2·max_th.
    Forced,
}

/// The state of one RED queue.
#[derive(Clone, Debug)]
pub struct Red {
    pub spec: RedSpec,
    /// The average queue (packets, or bytes with `queue_in_bytes`).
    pub avg: f64,
    /// Arrivals since the last drop (FJ93 Fig. 2: −1 while avg < min_th).
    pub count: i64,
    rng: RngStream,
    /// Mean-size packets the link sends per second (ns-2's `ptc`), for the idle correction.
    ptc: f64,
    /// Thresholds in the unit of `avg`.
    min_th: f64,
    max_th: f64,
    /// ∫ avg dt over the run so far (avg held between arrivals), in avg-unit·ns.
    avg_integral: f64,
    last_update: Time,
}

impl Red {
    pub fn new(spec: RedSpec, rate_bps: u64, rng: RngStream) -> Red {
        let scale = if spec.queue_in_bytes { spec.mean_pktsize.0 as f64 } else { 1.0 };
        Red {
            spec,
            avg: 0.0,
            count: -1,
            rng,
            ptc: rate_bps as f64 / (8.0 * spec.mean_pktsize.0 as f64),
            min_th: spec.min_th * scale,
            max_th: spec.max_th * scale,
            avg_integral: 0.0,
            last_update: 0,
        }
    }

    /// FJ93 §4 (Fig. 2) "calculate the average queue size", on an arrival that finds `q` waiting
    /// (packets or bytes). `idle`: how long the link has been idle (nothing sent, nothing waiting),
    /// if it is. FJ93 §4: after an idle period avg decays as if m packets of typical size had
    /// arrived to an empty queue, m = idle time / transmission time of `mean_pktsize`. As in
    /// ns-2's estimator the idle decay (1 − w_q)^m is followed by the usual update with q = 0.
    pub fn update_avg(&mut self, now: Time, q: f64, idle: Option<Time>) {
        self.avg_integral += self.avg * now.saturating_sub(self.last_update) as f64;
        self.last_update = now;
        let w = self.spec.w_q;
        if let Some(idle) = idle {
            let m = (self.ptc * idle as f64 / SEC as f64).floor();
            self.avg *= (1.0 - w).powf(m);
        }
        self.avg = (1.0 - w) * self.avg + w * q;
    }

    /// FJ93 Fig. 2, the decision for an arrival of `size` bytes once avg is updated.
    pub fn decide(&mut self, size: u32) -> Verdict {
        let s = &self.spec;
        let (avg, lo, hi) = (self.avg, self.min_th, self.max_th);
        if avg < lo {
            self.count = -1;
            return Verdict::Enqueue;
        }
        if avg >= hi && (!s.gentle || avg >= 2.0 * hi) {
            // "else if max_th ≤ avg: mark the arriving packet, count ← 0".
            self.count = 0;
            return Verdict::Forced;
        }
        self.count += 1;
        let mut p_b = if avg < hi {
            // "p_b ← max_p (avg − min_th)/(max_th − min_th)".
            s.max_p * (avg - lo) / (hi - lo)
        } else {
            // ns-2 gentle_: from max_p at max_th to 1 at 2·max_th.
            s.max_p + (1.0 - s.max_p) * (avg - hi) / hi
        };
        if s.byte_mode {
            // FJ93 §4: "p_b ← p_b · PacketSize/MaximumPacketSize", before the count spreading
            // (ns-2 scales after it, and counts bytes; the difference is second order).
            p_b *= size as f64 / s.mean_pktsize.0 as f64;
        }
        let p_a = spread(p_b, self.count, s.wait);
        if p_a >= 1.0 || (p_a > 0.0 && self.rng.uniform() < p_a) {
            self.count = 0;
            return if avg < hi { Verdict::Early } else { Verdict::Forced };
        }
        Verdict::Enqueue
    }

    /// A drop by the physical limit also restarts the count (ns-2, unless `ns1_compat_`).
    pub fn on_limit_drop(&mut self) {
        self.count = 0;
    }

    /// Time average of avg from 0 to `end` (avg changes only at arrivals).
    pub fn avg_mean(&self, end: Time) -> f64 {
        let total = self.avg_integral + self.avg * end.saturating_sub(self.last_update) as f64;
        if end == 0 {
            self.avg
        } else {
            total / end as f64
        }
    }
}

/// FJ93 §7: spread drops uniformly instead of geometrically. `count` arrivals since the last
/// drop, this one included (Fig. 2 increments count before computing p_a). Without `wait`,
/// p_a = p_b/(1 − count·p_b) (FJ93 Fig. 2); with `wait` (ns-2 `modify_p`), no drop while
/// count·p_b < 1, then p_a = p_b/(2 − count·p_b), certain from count·p_b ≥ 2.
pub fn spread(p_b: f64, count: i64, wait: bool) -> f64 {
    let cp = count as f64 * p_b;
    let p = if wait {
        if cp < 1.0 {
            0.0
        } else if cp < 2.0 {
            p_b / (2.0 - cp)
        } else {
            1.0
        }
    } else if cp < 1.0 {
        p_b / (1.0 - cp)
    } else {
        1.0
    };
    p.clamp(0.0, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::MS;

    fn red(spec: RedSpec) -> Red {
        Red::new(spec, 1_000_000, RngStream::new(1, "red:test"))
    }

    #[test]
    fn ewma_update_matches_hand_computation() {
        let mut r = red(RedSpec { w_q: 0.1, ..Default::default() });
        r.update_avg(0, 10.0, None);
        assert!((r.avg - 1.0).abs() < 1e-12, "{}", r.avg); // 0.9·0 + 0.1·10
        r.update_avg(0, 10.0, None);
        assert!((r.avg - 1.9).abs() < 1e-12, "{}", r.avg); // 0.9·1 + 0.1·10
        r.update_avg(0, 0.0, None);
        assert!((r.avg - 1.71).abs() < 1e-12, "{}", r.avg);
    }

    #[test]
    fn idle_correction_decays_by_m_typical_packets() {
        // 500-byte packets at 1 Mb/s take 4 ms: 10 ms idle is m = 2 (truncated, as ns-2), then
        // the arrival's own update with q = 0: avg·(1 − w_q)^3.
        let mut r = red(RedSpec { w_q: 0.1, ..Default::default() });
        r.avg = 10.0;
        r.update_avg(0, 0.0, Some(10 * MS));
        assert!((r.avg - 10.0 * 0.9f64.powi(3)).abs() < 1e-12, "{}", r.avg);
        // A long idle period empties the average.
        r.avg = 10.0;
        r.update_avg(0, 0.0, Some(3600 * SEC));
        assert!(r.avg < 1e-9);
        // queue_in_bytes: the thresholds scale by mean_pktsize, and m does not depend on the mode.
        let mut r = red(RedSpec { w_q: 0.1, queue_in_bytes: true, ..Default::default() });
        assert_eq!((r.min_th, r.max_th), (2500.0, 7500.0));
        r.avg = 5000.0;
        r.update_avg(0, 1000.0, Some(4 * MS));
        assert!((r.avg - (5000.0 * 0.81 + 100.0)).abs() < 1e-9, "{}", r.avg);
    }

    #[test]
    fn below_min_th_never_drops() {
        let mut r = red(RedSpec { wait: false, ..Default::default() });
        for i in 0..100_000 {
            r.avg = 4.999 * (i % 100) as f64 / 99.0;
            assert_eq!(r.decide(1000), Verdict::Enqueue);
            assert_eq!(r.count, -1);
        }
    }

    #[test]
    fn at_or_above_max_th_always_drops() {
        for wait in [false, true] {
            let mut r = red(RedSpec { wait, ..Default::default() });
            for avg in [15.0, 15.001, 20.0, 29.0, 30.0, 1e6] {
                r.avg = avg;
                assert_eq!(r.decide(1000), Verdict::Forced, "avg {avg}");
                assert_eq!(r.count, 0);
            }
        }
    }

    #[test]
    fn gentle_ramps_from_max_p_to_one() {
        // With wait off and count reset to −1 before each arrival, count = 0 and p_a = p_b.
        let spec = RedSpec { gentle: true, wait: false, max_p: 0.1, ..Default::default() };
        for (avg, p) in [(15.0, 0.1), (22.5, 0.55), (27.0, 0.82)] {
            let mut r = red(spec);
            let n = 40_000;
            let mut drops = 0;
            for _ in 0..n {
                r.avg = avg;
                r.count = -1;
                match r.decide(1000) {
                    Verdict::Forced => drops += 1,
                    Verdict::Enqueue => {}
                    Verdict::Early => panic!("a drop above max_th is not early"),
                }
            }
            let rate = drops as f64 / n as f64;
            let sd = (p * (1.0 - p) / n as f64).sqrt();
            assert!((rate - p).abs() < 5.0 * sd, "avg {avg}: rate {rate}, expected {p}");
        }
        let mut r = red(spec);
        for avg in [30.0, 45.0] {
            r.avg = avg;
            assert_eq!(r.decide(1000), Verdict::Forced);
        }
    }

    #[test]
    fn spread_formulas() {
        // FJ93 Fig. 2.
        assert!((spread(0.05, 0, false) - 0.05).abs() < 1e-15);
        assert!((spread(0.05, 10, false) - 0.1).abs() < 1e-15);
        assert_eq!(spread(0.05, 20, false), 1.0);
        assert_eq!(spread(0.05, 25, false), 1.0);
        // ns-2 wait_.
        assert_eq!(spread(0.05, 19, true), 0.0);
        assert!((spread(0.05, 20, true) - 0.05).abs() < 1e-15);
        assert!((spread(0.05, 30, true) - 0.1).abs() < 1e-15);
        assert_eq!(spread(0.05, 40, true), 1.0);
    }

    /// Gaps between drops with avg held fixed between the thresholds. FJ93 Fig. 2 counts the
    /// arrival itself and sets count ← 0 at a drop, so the n-th arrival after a drop has
    /// count = n and survives the first k arrivals with probability
    /// Π_{i=1..k} (1 − p_b/(1 − i·p_b)) = (1 − (k+1)p_b)/(1 − p_b): with 1/p_b = M an integer,
    /// the gap is uniform on 1..M−1 (mean M/2, FJ93 §7's "uniform" with their off-by-one). With
    /// ns-2's wait_ the same telescoping gives a gap uniform on M..2M−1 (mean (3M − 1)/2).
    fn gaps(wait: bool, p_b: f64, drops: usize) -> Vec<u64> {
        // avg such that p_b = max_p·(avg − min_th)/(max_th − min_th) with max_p = 0.1.
        let spec = RedSpec { wait, max_p: 0.1, ..Default::default() };
        let mut r = red(spec);
        let avg = 5.0 + 10.0 * p_b / 0.1;
        let mut out = Vec::new();
        let mut since = 0;
        while out.len() < drops {
            r.avg = avg;
            since += 1;
            match r.decide(1000) {
                Verdict::Early => {
                    out.push(since);
                    since = 0;
                }
                Verdict::Enqueue => {}
                Verdict::Forced => panic!("avg is below max_th"),
            }
        }
        out.remove(0); // the first gap starts from count = −1
        out
    }

    fn check_uniform(g: &[u64], lo: u64, hi: u64) {
        let n = g.len() as f64;
        assert!(g.iter().all(|&x| (lo..=hi).contains(&x)), "gaps outside {lo}..={hi}");
        let k = (hi - lo + 1) as f64;
        let mean = g.iter().sum::<u64>() as f64 / n;
        let expect = (lo + hi) as f64 / 2.0;
        let sd = ((k * k - 1.0) / 12.0 / n).sqrt();
        assert!((mean - expect).abs() < 4.0 * sd, "mean gap {mean}, expected {expect} ± {sd}");
        // Each value about equally often: a chi-square test with k − 1 degrees of freedom.
        let mut hist = vec![0f64; k as usize];
        for &x in g {
            hist[(x - lo) as usize] += 1.0;
        }
        let e = n / k;
        let chi2: f64 = hist.iter().map(|o| (o - e) * (o - e) / e).sum();
        // 18 or 19 degrees of freedom here: P(chi2 > 43) ≈ 0.001.
        assert!(chi2 < 43.0, "chi-square {chi2} for {hist:?}");
    }

    #[test]
    fn count_spreads_drops_uniformly() {
        check_uniform(&gaps(false, 0.05, 40_001), 1, 19);
    }

    #[test]
    fn wait_spreads_drops_uniformly_one_interval_later() {
        check_uniform(&gaps(true, 0.05, 40_001), 20, 39);
    }

    #[test]
    fn byte_mode_scales_p_b_by_size() {
        // p_b = 0.05 for mean-size packets; a 250-byte packet sees 0.025, a 1000-byte one 0.1.
        // With count reset before each arrival (count = 0) and wait off, p_a = p_b.
        for (size, p) in [(250u32, 0.025), (500, 0.05), (1000, 0.1)] {
            let mut r = red(RedSpec { wait: false, byte_mode: true, ..Default::default() });
            let n = 100_000;
            let mut drops = 0;
            for _ in 0..n {
                r.avg = 10.0;
                r.count = -1;
                if r.decide(size) == Verdict::Early {
                    drops += 1;
                }
            }
            let rate = drops as f64 / n as f64;
            let sd = (p * (1.0 - p) / n as f64).sqrt();
            assert!((rate - p).abs() < 5.0 * sd, "size {size}: rate {rate}, expected {p}");
        }
    }

    #[test]
    fn deterministic_for_a_seed() {
        let run = |seed: u64| {
            let mut r = Red::new(RedSpec { wait: false, ..Default::default() }, 1_000_000, RngStream::new(seed, "red:x"));
            (0..2000)
                .map(|i| {
                    r.update_avg(i * MS, (i % 30) as f64, None);
                    r.decide(1000)
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(run(3), run(3));
        assert_ne!(run(3), run(4));
    }

    #[test]
    fn time_average_of_avg() {
        let mut r = red(RedSpec { w_q: 0.5, ..Default::default() });
        r.update_avg(10, 4.0, None); // avg 0 over [0, 10), then 2
        r.update_avg(20, 4.0, None); // avg 2 over [10, 20), then 3
        assert!((r.avg_mean(40) - (0.0 * 10.0 + 2.0 * 10.0 + 3.0 * 20.0) / 40.0).abs() < 1e-12);
    }

    #[test]
    fn validation_names_the_key() {
        let v = |s: RedSpec| s.validate().unwrap_err().0;
        assert_eq!(v(RedSpec { min_th: 10.0, max_th: 10.0, ..Default::default() }), "max_th");
        assert_eq!(v(RedSpec { min_th: -1.0, ..Default::default() }), "min_th");
        assert_eq!(v(RedSpec { max_p: 0.0, ..Default::default() }), "max_p");
        assert_eq!(v(RedSpec { max_p: 1.5, ..Default::default() }), "max_p");
        assert_eq!(v(RedSpec { w_q: 0.0, ..Default::default() }), "w_q");
        assert_eq!(v(RedSpec { mean_pktsize: Size(0), ..Default::default() }), "mean_pktsize");
        assert!(RedSpec::default().validate().is_ok());
    }
}
