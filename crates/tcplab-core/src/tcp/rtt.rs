//! RTT estimation and the retransmission timeout, RFC 6298 (RFC 2988 with a 3 s initial RTO).
//!
//! RTTM as the connection samples it: one segment is timed at a time (the classic BSD scheme,
//! permitted by RFC 6298 §3: "at least one RTT measurement per RTT"), and under Karn's rule no
//! sample is taken from a retransmitted segment. The average RTT reported is the mean of these
//! samples (the "TCP RTT" of Mathis et al. §5.2).
//!
//! With a coarse `timer_tick` (BSD's 500 ms slow timer) a sample is the number of tick boundaries
//! crossed between the send and the ACK (at least one tick), and the RTO is a whole number of ticks.

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
            n_samples: 0,
            sum: 0,
            min_sample: Time::MAX,
            max_sample: 0,
        }
    }

    pub fn srtt(&self) -> Option<Time> {
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
        let r = (self.rto as f64 * self.backoff).round();
        self.rto = if r >= self.max as f64 { self.max.max(self.rto) } else { r as Time };
    }

    /// When a timer set now for the current RTO expires.
    pub fn deadline(&self, now: Time) -> Time {
        timer_deadline(now, self.rto, self.tick)
    }

    pub fn mean(&self) -> Option<f64> {
        (self.n_samples > 0).then(|| self.sum as f64 / self.n_samples as f64 / SEC as f64)
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
