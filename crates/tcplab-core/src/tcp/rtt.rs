//! RTT estimation and the retransmission timeout, RFC 6298 (RFC 2988 with a 3 s initial RTO).
//!
//! RTTM as the connection samples it: one segment is timed at a time (the classic BSD scheme,
//! permitted by RFC 6298 §3: "at least one RTT measurement per RTT"), and under Karn's rule no
//! sample is taken from a retransmitted segment. The average RTT reported is the mean of these
//! samples (the "TCP RTT" of Mathis et al. §5.2).
//!
//! With a coarse `timer_tick` (BSD's 500 ms slow timer) a sample is the number of tick boundaries
//! crossed between the send and the ACK (at least one tick), and the RTO is a whole number of ticks.
//!
//! `Ns2Rtt` is ns-2's estimator (`rtt_update()`, `rtt_timeout()`, `rtt_backoff()` in tcp/tcp.cc):
//! samples in ticks of `tcpTick_`, SRTT and RTTVAR kept in fixed point (×8 and ×4), the RTO a whole
//! number of ticks, and the timer scheduled at exactly now + RTO rather than on a tick boundary.

use crate::units::{Time, SEC};

#[derive(Clone, Debug)]
pub struct RttEstimator {
    srtt: Option<Time>,
    rttvar: Time,
    /// Current RTO, including any backoff.
    rto: Time,
    granularity: Time,
    tick: Time,
    min: Time,
    max: Time,
    backoff: f64,
    /// ns-2's fixed-point estimator instead of RFC 6298's (`rto_model = "ns2"`).
    ns2: Option<Ns2Rtt>,
    pub n_samples: u64,
    pub sum: u128,
    pub min_sample: Time,
    pub max_sample: Time,
}

impl RttEstimator {
    pub fn new(initial: Time, min: Time, max: Time, granularity: Time, tick: Time, backoff: f64) -> Self {
        RttEstimator {
            srtt: None,
            rttvar: 0,
            // RFC 6298 §2.1: until a measurement is made, RTO = the initial RTO.
            rto: initial,
            granularity,
            tick,
            min,
            max,
            backoff,
            ns2: None,
            n_samples: 0,
            sum: 0,
            min_sample: Time::MAX,
            max_sample: 0,
        }
    }

    /// Use ns-2's estimator and timer (`rto_model = "ns2"`); needs a positive tick.
    pub fn ns2_model(mut self) -> Self {
        assert!(self.tick > 0, "ns-2's estimator counts in ticks");
        self.ns2 = Some(Ns2Rtt { srtt8: 0, rttvar4: 0, rtxcur: self.rto, backoff: 1 });
        self
    }

    pub fn srtt(&self) -> Option<Time> {
        if let Some(n) = &self.ns2 {
            return (n.srtt8 > 0).then(|| (n.srtt8 >> NS2_SRTT_BITS) as Time * self.tick);
        }
        self.srtt
    }
    pub fn rttvar(&self) -> Time {
        self.rttvar
    }
    pub fn rto(&self) -> Time {
        self.rto
    }

    /// Force the RTO (RFC 6298 §5.7's 3 s after a SYN timeout).
    pub fn set_rto(&mut self, rto: Time) {
        self.rto = rto;
    }

    /// The measured value of a segment sent at `sent` and acknowledged at `now`.
    pub fn measure(&self, sent: Time, now: Time) -> Time {
        if self.tick > 0 {
            ((now / self.tick) - (sent / self.tick)).max(1) * self.tick
        } else {
            now - sent
        }
    }

    /// Take an RTT measurement R (RFC 6298 §2.2–2.4) and recompute the RTO, which clears any
    /// backoff (§5.7 note: the backed-off RTO is kept until a new sample is taken).
    pub fn sample(&mut self, r: Time) {
        self.n_samples += 1;
        self.sum += r as u128;
        self.min_sample = self.min_sample.min(r);
        self.max_sample = self.max_sample.max(r);
        if self.ns2.is_some() {
            let ticks = (r / self.tick).max(1) as i64;
            let n = self.ns2.as_mut().unwrap();
            n.update(ticks, self.tick);
            // newack(): the ACK of the timed segment ends the backoff (t_backoff_ = 1).
            n.backoff = 1;
            self.rto = self.ns2_timeout();
            return;
        }
        match self.srtt {
            None => {
                // §2.2: SRTT <- R, RTTVAR <- R/2.
                self.srtt = Some(r);
                self.rttvar = r / 2;
            }
            Some(srtt) => {
                // §2.3: RTTVAR <- 3/4 RTTVAR + 1/4 |SRTT - R'|, then SRTT <- 7/8 SRTT + 1/8 R'.
                let diff = srtt.abs_diff(r);
                self.rttvar = (3 * self.rttvar + diff) / 4;
                self.srtt = Some((7 * srtt + r) / 8);
            }
        }
        self.rto = self.base_rto();
    }

    /// RTO = SRTT + max(G, K·RTTVAR), K = 4, clamped to [min, max] (§2.2–2.5), and rounded up to
    /// whole ticks when the timer is coarse.
    fn base_rto(&self) -> Time {
        let srtt = self.srtt.unwrap_or(0);
        let mut rto = srtt + self.granularity.max(4 * self.rttvar);
        if self.tick > 0 {
            rto = rto.div_ceil(self.tick) * self.tick;
        }
        rto.clamp(self.min, self.max)
    }

    /// Timer expiry: RTO <- RTO · backoff, at most the maximum (§5.5).
    pub fn back_off(&mut self) {
        if self.ns2.is_some() {
            // rtt_backoff() with rfc2988_: double t_backoff_ while the RTO is below maxrto_ (or
            // t_backoff_ < 64); beyond 8, SRTT is folded into RTTVAR and cleared.
            let below_max = self.ns2_timeout() < self.max;
            let n = self.ns2.as_mut().unwrap();
            if n.backoff < 64 || below_max {
                n.backoff = n.backoff.saturating_mul(2);
            }
            if n.backoff > 8 {
                n.rttvar4 += n.srtt8 >> NS2_SRTT_BITS;
                n.srtt8 = 0;
            }
            self.rto = self.ns2_timeout();
            return;
        }
        let r = (self.rto as f64 * self.backoff).round();
        self.rto = if r >= self.max as f64 { self.max.max(self.rto) } else { r as Time };
    }

    /// When a timer set now for the current RTO expires.
    pub fn deadline(&self, now: Time) -> Time {
        if self.ns2.is_some() {
            // set_rtx_timer(): rtx_timer_.resched(rtt_timeout()), exact.
            return now + self.rto;
        }
        timer_deadline(now, self.rto, self.tick)
    }

    /// rtt_timeout() with rfc2988_: max(t_rtxcur_, minrto_) · t_backoff_, at most maxrto_, at
    /// least two ticks.
    fn ns2_timeout(&self) -> Time {
        let n = self.ns2.as_ref().expect("ns-2 estimator");
        let base = n.rtxcur.max(self.min) as u128 * n.backoff as u128;
        (base.min(self.max as u128) as Time).max(2 * self.tick)
    }

    pub fn mean(&self) -> Option<f64> {
        (self.n_samples > 0).then(|| self.sum as f64 / self.n_samples as f64 / SEC as f64)
    }
}

/// Bits of fraction in ns-2's fixed-point SRTT and RTTVAR (`T_SRTT_BITS` 3, `T_RTTVAR_BITS` 2)
/// and its `rttvar_exp_` (2: RTO = SRTT + 4·RTTVAR).
const NS2_SRTT_BITS: u32 = 3;
const NS2_RTTVAR_BITS: u32 = 2;
const NS2_RTTVAR_EXP: u32 = 2;

/// ns-2's estimator state (tcp/tcp.cc): `t_srtt_` (8·SRTT in ticks), `t_rttvar_` (4·RTTVAR in
/// ticks), `t_rtxcur_` and `t_backoff_`.
#[derive(Clone, Debug)]
struct Ns2Rtt {
    srtt8: i64,
    rttvar4: i64,
    rtxcur: Time,
    backoff: u32,
}

impl Ns2Rtt {
    /// rtt_update() with a sample of `m` ticks.
    fn update(&mut self, m: i64, tick: Time) {
        if self.srtt8 != 0 {
            let mut delta = m - (self.srtt8 >> NS2_SRTT_BITS);
            self.srtt8 += delta;
            if self.srtt8 <= 0 {
                self.srtt8 = 1;
            }
            delta = delta.abs() - (self.rttvar4 >> NS2_RTTVAR_BITS);
            self.rttvar4 += delta;
            if self.rttvar4 <= 0 {
                self.rttvar4 = 1;
            }
        } else {
            self.srtt8 = m << NS2_SRTT_BITS;
            self.rttvar4 = m << (NS2_RTTVAR_BITS - 1);
        }
        let ticks = ((self.rttvar4 << (NS2_RTTVAR_EXP + NS2_SRTT_BITS - NS2_RTTVAR_BITS)) + self.srtt8) >> NS2_SRTT_BITS;
        self.rtxcur = ticks as Time * tick;
    }
}

/// The expiry of a timer of `duration` set at `now`. With a coarse tick the timer is a counter of
/// n = ⌈duration/tick⌉ ticks decremented on every tick boundary, so it fires on the n-th boundary
/// after `now` (BSD's slow timer: after between n−1 and n ticks).
pub fn timer_deadline(now: Time, duration: Time, tick: Time) -> Time {
    if tick == 0 {
        return now + duration;
    }
    let n = duration.div_ceil(tick).max(1);
    (now / tick + 1) * tick + (n - 1) * tick
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::ms;

    fn est() -> RttEstimator {
        RttEstimator::new(SEC, SEC, 60 * SEC, ms(1), 0, 2.0)
    }

    #[test]
    fn initial_rto_before_any_sample() {
        assert_eq!(est().rto(), SEC); // RFC 6298 §2.1
        let e = RttEstimator::new(3 * SEC, SEC, 60 * SEC, ms(1), 0, 2.0);
        assert_eq!(e.rto(), 3 * SEC); // RFC 2988
    }

    #[test]
    fn first_and_later_samples_rfc6298_2_2_and_2_3() {
        let mut e = RttEstimator::new(SEC, 0, 60 * SEC, ms(1), 0, 2.0);
        e.sample(ms(100));
        assert_eq!(e.srtt(), Some(ms(100)));
        assert_eq!(e.rttvar(), ms(50));
        assert_eq!(e.rto(), ms(100) + 4 * ms(50)); // 300 ms, no minimum here
        e.sample(ms(200));
        // RTTVAR = 3/4·50 + 1/4·|100-200| = 62.5 ms; SRTT = 7/8·100 + 1/8·200 = 112.5 ms.
        assert_eq!(e.rttvar(), 62_500_000);
        assert_eq!(e.srtt(), Some(112_500_000));
        assert_eq!(e.rto(), 112_500_000 + 4 * 62_500_000);
    }

    #[test]
    fn granularity_term_and_minimum_rfc6298_2_4() {
        // Constant RTT: RTTVAR decays, G then dominates the variance term.
        let mut e = RttEstimator::new(SEC, 0, 60 * SEC, ms(500), 0, 2.0);
        for _ in 0..50 {
            e.sample(ms(100));
        }
        assert_eq!(e.rto(), ms(100) + ms(500));
        // With the 1 s minimum (SHOULD in §2.4) a 100 ms path gets 1 s.
        let mut e = est();
        e.sample(ms(100));
        assert_eq!(e.rto(), SEC);
    }

    #[test]
    fn backoff_and_maximum_rfc6298_5_5() {
        let mut e = RttEstimator::new(SEC, SEC, 60 * SEC, ms(1), 0, 2.0);
        let mut seen = vec![e.rto()];
        for _ in 0..8 {
            e.back_off();
            seen.push(e.rto());
        }
        assert_eq!(seen, [1, 2, 4, 8, 16, 32, 60, 60, 60].map(|s| s * SEC));
        // A new sample clears the backoff.
        e.sample(ms(100));
        assert_eq!(e.rto(), SEC);
        let mut e = RttEstimator::new(SEC, SEC, 60 * SEC, ms(1), 0, 3.0);
        e.back_off();
        assert_eq!(e.rto(), 3 * SEC);
    }

    /// ns-2's rtt_update()/rtt_timeout() (tcp/tcp.cc) with tcpTick_ 10 ms: one-tick samples give
    /// SRTT 1 tick, RTTVAR 1/2 tick, RTO ((2 << 3) + 8) >> 3 = 3 ticks, and it stays there; the
    /// timer expires at exactly now + RTO.
    #[test]
    fn ns2_fixed_point_estimator() {
        let tick = ms(10);
        let mut e = RttEstimator::new(3 * SEC, 0, 60 * SEC, tick, tick, 2.0).ns2_model();
        assert_eq!(e.rto(), 3 * SEC, "rtxcur_init_ before any sample");
        for _ in 0..20 {
            e.sample(tick);
            assert_eq!(e.rto(), ms(30));
        }
        assert_eq!(e.deadline(ms(1234)), ms(1264), "not on a tick boundary");
        // A 100 ms path (10 ticks): SRTT 80/8, RTTVAR 20/4 → RTO 10 + 4·5 = 30 ticks; a second
        // sample of 14 ticks: delta 4 → srtt8 84; |4| − 5 = −1 → rttvar4 19; RTO (19·8 + 84) >> 3
        // = 29 ticks.
        let mut e = RttEstimator::new(3 * SEC, 0, 60 * SEC, tick, tick, 2.0).ns2_model();
        e.sample(ms(100));
        assert_eq!(e.rto(), ms(300));
        assert_eq!(e.srtt(), Some(ms(100)));
        e.sample(ms(140));
        assert_eq!(e.rto(), ms(290));
        // minrto_ bounds the base before the backoff: max(290 ms, 1 s) · 2, · 4 ...
        let mut e = RttEstimator::new(3 * SEC, SEC, 60 * SEC, tick, tick, 2.0).ns2_model();
        e.sample(ms(100));
        assert_eq!(e.rto(), SEC);
        let mut seen = vec![];
        for _ in 0..8 {
            e.back_off();
            seen.push(e.rto() / SEC);
        }
        // Beyond a backoff of 8 SRTT is folded into RTTVAR (30 ticks → 4·RTTVAR 20 + 80 → 100·...)
        // but minrto_ still dominates here; the maximum caps the rest.
        assert_eq!(seen, [2, 4, 8, 16, 32, 60, 60, 60]);
        e.sample(ms(100));
        assert_eq!(e.rto(), SEC, "a new sample ends the backoff");
    }

    #[test]
    fn coarse_ticks_bsd_500ms() {
        let tick = ms(500);
        let mut e = RttEstimator::new(6 * SEC, SEC, 64 * SEC, tick, tick, 2.0);
        // A 100 ms RTT that crosses one tick boundary measures as one tick; one that crosses none
        // still counts as one tick.
        assert_eq!(e.measure(ms(450), ms(550)), tick);
        assert_eq!(e.measure(ms(100), ms(200)), tick);
        assert_eq!(e.measure(ms(100), ms(1100)), 2 * tick);
        e.sample(tick);
        // 500 + max(500, 4·250) = 1500 ms = 3 ticks.
        assert_eq!(e.rto(), ms(1500));
        // Set at 1.2 s for 3 ticks: fires on the third boundary after, at 2.5 s (1.3 s later).
        assert_eq!(e.deadline(ms(1200)), ms(2500));
        assert_eq!(timer_deadline(ms(1000), ms(1500), tick), ms(2500));
        assert_eq!(timer_deadline(ms(1200), ms(1500), 0), ms(2700));
    }
}
