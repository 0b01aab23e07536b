//! HyStart++ (RFC 9406), the slow start of Windows and FreeBSD, for any loss-based controller
//! (`slow_start = "hystart++"` with `cc = "reno"`, `"cubic"` or `"dctcp"`). Linux does not have
//! it: its CUBIC runs the classic HyStart of `cubic.rs`.
//!
//! Slow start is watched in rounds (§4.2: a round ends when `windowEnd`, SND.NXT at its start,
//! is acknowledged). Once a round has `N_RTT_SAMPLE` RTT samples and the previous one had any,
//! a round minimum at least `RttThresh` = clamp(lastRoundMinRTT / 8, 4 ms, 16 ms) above the
//! last round's ends slow start and begins Conservative Slow Start (CSS): growth divided by
//! `CSS_GROWTH_DIVISOR`. A CSS round whose minimum falls back below the RTT that started CSS
//! shows the exit spurious, and slow start resumes; after `CSS_ROUNDS` rounds of CSS (the round
//! in which it began counting as one) ssthresh = cwnd and congestion avoidance begins. Every
//! ACK's growth is min(N, L·SMSS), L = 8 unpaced and unbounded paced (§4.3).
//!
//! Only the initial slow start uses it (§4.3: "SHOULD use HyStart++ only for the initial slow
//! start ... and fall back to using standard slow start for the remainder of the connection
//! lifetime"): the controller stops it at the first congestion event.
//!
//! This module holds the state machine and the growth it allows (`grow`, in the controller's
//! units: bytes for Reno, packets for CUBIC); the controller adds it to its own window.

use super::AckSample;
use crate::units::{Time, MS};

/// §4.3 constants.
pub const MIN_RTT_THRESH: Time = 4 * MS;
pub const MAX_RTT_THRESH: Time = 16 * MS;
pub const MIN_RTT_DIVISOR: u64 = 8;
pub const N_RTT_SAMPLE: u32 = 8;
pub const CSS_GROWTH_DIVISOR: u64 = 4;
pub const CSS_ROUNDS: u32 = 5;
/// L for a sender that does not pace (§4.3: "L = 8 if non-paced"; a paced one: infinity).
pub const L_UNPACED: u64 = 8;

/// Where HyStart++ is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Standard slow start, watched for a delay increase.
    SlowStart,
    /// Conservative Slow Start.
    Css,
    /// No longer in use: CSS ended in congestion avoidance, or a congestion event came.
    Done,
}

/// How one ACK grows the window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Growth {
    /// cwnd += min(N, L·SMSS).
    SlowStart,
    /// cwnd += min(N, L·SMSS) / CSS_GROWTH_DIVISOR.
    Css,
    /// CSS_ROUNDS rounds of CSS are complete: ssthresh = cwnd, congestion avoidance from this ACK.
    EnterAvoidance,
}

#[derive(Clone, Debug)]
pub struct HystartPP {
    phase: Phase,
    /// `windowEnd`, in the controller's count of delivered bytes: the round ends when the
    /// cumulative ACK reaches it. 0 at the start, so the first ACK starts the first round.
    window_end: u64,
    /// `lastRoundMinRTT`, `currentRoundMinRTT` (None: infinity), `rttSampleCount`.
    last_round_min: Option<Time>,
    current_round_min: Option<Time>,
    samples: u32,
    /// `cssBaselineMinRtt` while in CSS.
    css_baseline: Option<Time>,
    /// Rounds of CSS ended so far.
    css_rounds: u32,
    /// L, segments; None: infinity (the sender paces).
    limit: Option<u64>,
    /// CSS's growth short of a whole unit, carried between ACKs (in the controller's units
    /// times CSS_GROWTH_DIVISOR).
    css_rem: u64,
}

impl HystartPP {
    pub fn new(paced: bool) -> Self {
        HystartPP {
            phase: Phase::SlowStart,
            window_end: 0,
            last_round_min: None,
            current_round_min: None,
            samples: 0,
            css_baseline: None,
            css_rounds: 0,
            limit: (!paced).then_some(L_UNPACED),
            css_rem: 0,
        }
    }

    /// One ACK in slow start, for a controller counting its window in units of which a segment
    /// is `smss` (bytes: the MSS; packets: 1) and the ACK acknowledged `n`: the growth this ACK
    /// allows, min(N, L·SMSS) or a quarter of it in CSS (the remainder carried), or None when
    /// CSS has ended: the controller sets ssthresh = cwnd and grows this ACK in avoidance.
    pub fn grow(&mut self, a: &AckSample, n: u64, smss: u64) -> Option<u64> {
        let n = self.limited(n, smss);
        match self.on_ack(a.delivered, a.delivered + a.in_flight, ack_rtt(a)) {
            Growth::SlowStart => Some(n),
            Growth::Css => {
                let t = n + self.css_rem;
                self.css_rem = t % CSS_GROWTH_DIVISOR;
                Some(t / CSS_GROWTH_DIVISOR)
            }
            Growth::EnterAvoidance => None,
        }
    }

    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// Still in use: the initial slow start (or its CSS) has not ended.
    #[inline]
    pub fn active(&self) -> bool {
        self.phase != Phase::Done
    }

    /// A congestion event (a loss, ECN, a timeout) ends the initial slow start: standard slow
    /// start from now on (§4.2: "If loss or ECN-marking is observed at any time during standard
    /// slow start or CSS, enter congestion avoidance"; the controller's reduction sets ssthresh).
    pub fn stop(&mut self) {
        self.phase = Phase::Done;
    }

    /// The growth an ACK of `n` units (bytes or packets) allows, of segments of `smss` units:
    /// min(N, L·SMSS), before CSS's division.
    #[inline]
    pub fn limited(&self, n: u64, smss: u64) -> u64 {
        match self.limit {
            Some(l) => n.min(l * smss),
            None => n,
        }
    }

    /// One ACK in slow start (cwnd < ssthresh) while `active`: `delivered`, the cumulative
    /// acknowledgement point after it; `snd_nxt`, SND.NXT in the same count; `rtt`, its RTT
    /// sample if it has one. Returns how this ACK grows the window; its RTT then decides the
    /// next ACKs' phase (§4.2's order: the round's start, the growth, the sample, the checks).
    pub fn on_ack(&mut self, delivered: u64, snd_nxt: u64, rtt: Option<Time>) -> Growth {
        debug_assert!(self.active());
        if delivered >= self.window_end {
            // §4.2: "At the start of each round ... lastRoundMinRTT = currentRoundMinRTT,
            // currentRoundMinRTT = infinity, rttSampleCount = 0"; windowEnd = SND.NXT.
            self.window_end = snd_nxt.max(delivered + 1);
            self.last_round_min = self.current_round_min;
            self.current_round_min = None;
            self.samples = 0;
            if self.phase == Phase::Css {
                // "CSS lasts at most CSS_ROUNDS rounds. If the transition into CSS happens in the
                // middle of a round, that partial round counts towards the limit."
                self.css_rounds += 1;
                if self.css_rounds >= CSS_ROUNDS {
                    self.phase = Phase::Done;
                    return Growth::EnterAvoidance;
                }
            }
        }
        let growth = if self.phase == Phase::Css { Growth::Css } else { Growth::SlowStart };
        if let Some(r) = rtt {
            self.current_round_min = Some(self.current_round_min.map_or(r, |m| m.min(r)));
            self.samples += 1;
        }
        if self.samples >= N_RTT_SAMPLE {
            let cur = self.current_round_min.expect("a sample was counted");
            match self.phase {
                Phase::SlowStart => {
                    if let Some(last) = self.last_round_min {
                        let thresh = (last / MIN_RTT_DIVISOR).clamp(MIN_RTT_THRESH, MAX_RTT_THRESH);
                        if cur >= last + thresh {
                            self.css_baseline = Some(cur);
                            self.css_rounds = 0;
                            self.phase = Phase::Css;
                        }
                    }
                }
                Phase::Css => {
                    if self.css_baseline.is_some_and(|b| cur < b) {
                        // "indicating that slow start exit was spurious": resume slow start.
                        self.css_baseline = None;
                        self.phase = Phase::SlowStart;
                    }
                }
                Phase::Done => {}
            }
        }
        growth
    }
}

/// currRTT of an ACK: the RTT estimator's sample when it took one (every ACK with Linux's
/// estimator, `rto_model = "linux"`), else the transmit record's RTT of the newest segment the ACK
/// delivered, unless that was retransmitted (Karn). A controller running HyStart++ asks for the
/// transmit record (`wants_delivery_samples`).
pub fn ack_rtt(a: &AckSample) -> Option<Time> {
    a.rtt.or_else(|| a.rack.filter(|r| !r.retransmitted).map(|r| r.rtt))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One round of `n` ACKs, each with an RTT sample `rtt`, the round ending at `end`.
    fn round(h: &mut HystartPP, start: u64, n: u64, rtt: Time) -> Vec<Growth> {
        (0..n).map(|i| h.on_ack(start + i + 1, start + 100, Some(rtt))).collect()
    }

    #[test]
    fn the_threshold_is_an_eighth_of_the_last_round_clamped_to_4_and_16_ms() {
        for (last, thresh) in [(10 * MS, 4 * MS), (80 * MS, 10 * MS), (400 * MS, 16 * MS)] {
            for (rise, enters) in [(thresh - 1, false), (thresh, true)] {
                let mut h = HystartPP::new(false);
                h.on_ack(1, 100, Some(last)); // round 1 starts
                for k in 2..100 {
                    h.on_ack(k, 100, Some(last));
                }
                // Round 2 starts at the ACK of 100; 7 samples do not decide, the 8th does.
                for k in 0..7 {
                    h.on_ack(100 + k, 200, Some(last + rise));
                    assert_eq!(h.phase(), Phase::SlowStart, "{last} {rise} sample {k}");
                }
                h.on_ack(107, 200, Some(last + rise));
                assert_eq!(h.phase() == Phase::Css, enters, "last {last} rise {rise}");
            }
        }
    }

    #[test]
    fn css_lasts_five_rounds_counting_the_one_it_began_in() {
        let mut h = HystartPP::new(false);
        assert_eq!(round(&mut h, 0, 99, 100 * MS), vec![Growth::SlowStart; 99]);
        // Round 2 (from the ACK of 100): the 8th sample at 113 ms enters CSS; that ACK still
        // grew as slow start, the next as CSS.
        let g: Vec<Growth> = (0..10).map(|k| h.on_ack(100 + k, 200, Some(113 * MS))).collect();
        assert_eq!(&g[..8], &[Growth::SlowStart; 8]);
        assert_eq!(&g[8..], &[Growth::Css; 2]);
        // The partial round ends at 200 (1 of 5); four more rounds at the same RTT.
        for r in 0..4 {
            let start = 200 + r * 100;
            let g = h.on_ack(start, start + 100, Some(113 * MS));
            assert_eq!(g, Growth::Css, "round {r}");
        }
        assert_eq!(h.on_ack(600, 700, Some(113 * MS)), Growth::EnterAvoidance);
        assert!(!h.active());
    }

    #[test]
    fn a_lower_rtt_in_css_resumes_slow_start() {
        let mut h = HystartPP::new(false);
        round(&mut h, 0, 99, 100 * MS);
        for k in 0..8 {
            h.on_ack(100 + k, 200, Some(113 * MS));
        }
        assert_eq!(h.phase(), Phase::Css);
        // The next round: seven samples at 105 ms do not decide; the eighth resumes slow start
        // (105 < the CSS baseline 113), and HyStart++ goes on watching.
        for k in 0..7 {
            h.on_ack(200 + k, 300, Some(105 * MS));
            assert_eq!(h.phase(), Phase::Css);
        }
        h.on_ack(207, 300, Some(105 * MS));
        assert_eq!(h.phase(), Phase::SlowStart);
        assert!(h.active());
    }

    #[test]
    fn acks_without_a_sample_count_for_nothing_and_l_bounds_the_growth() {
        let mut h = HystartPP::new(false);
        round(&mut h, 0, 99, 100 * MS);
        for k in 0..20 {
            h.on_ack(100 + k, 200, if k % 3 == 0 { Some(150 * MS) } else { None });
        }
        // 7 samples (k = 0, 3, ..., 18): no decision yet.
        assert_eq!(h.phase(), Phase::SlowStart);
        assert_eq!(h.limited(20_000, 1000), 8000);
        assert_eq!(HystartPP::new(true).limited(20_000, 1000), 20_000);
    }
}
