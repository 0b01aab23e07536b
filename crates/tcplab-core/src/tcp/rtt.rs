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
//!
//! `LinuxRtt` is Linux 6.x's (`tcp_rtt_estimator`, `tcp_set_rto`, `tcp_bound_rto` in
//! net/ipv4/tcp_input.c and include/net/tcp.h): samples in microseconds, SRTT ×8 and the mean
//! deviation ×4 in fixed point, `rttvar` following the per-RTT maximum of the deviation but never
//! below `rto_min`, the RTO in jiffies and its timer on the kernel's timer wheel (`jiffies.rs`).

use super::jiffies::Jiffies;
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
    /// Linux's estimator and jiffies timer instead of RFC 6298's (`rto_model = "linux"`).
    linux: Option<LinuxRtt>,
    pub n_samples: u64,
    pub sum: u128,
    pub min_sample: Time,
    pub max_sample: Time,
    /// Linux's windowed minimum RTT (`tcp_update_rtt_min()`: `tp->rtt_min`), fed by
    /// `update_min_rtt`.
    min_rtt: WinMinMax,
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
            linux: None,
            n_samples: 0,
            sum: 0,
            min_sample: Time::MAX,
            max_sample: 0,
            min_rtt: WinMinMax::default(),
        }
    }

    /// Linux `tcp_update_rtt_min()`: the running minimum of the RTT samples over the last
    /// `sysctl_tcp_min_rtt_wlen` (300 s), a zero sample counted as one jiffy
    /// (`rtt_us ? : jiffies_to_usecs(1)`). RACK's and BBR's min_rtt.
    pub fn update_min_rtt(&mut self, now: Time, rtt: Time) {
        let floor = self.linux.as_ref().map_or(1000, |l| l.j.ns());
        self.min_rtt.running_min(MIN_RTT_WLEN, now, if rtt == 0 { floor } else { rtt });
    }

    /// The windowed minimum RTT (`tcp_min_rtt()`), None before the first sample.
    pub fn min_rtt(&self) -> Option<Time> {
        self.min_rtt.get()
    }

    /// Use ns-2's estimator and timer (`rto_model = "ns2"`); needs a positive tick.
    pub fn ns2_model(mut self) -> Self {
        assert!(self.tick > 0, "ns-2's estimator counts in ticks");
        self.ns2 = Some(Ns2Rtt { srtt8: 0, rttvar4: 0, rtxcur: self.rto, backoff: 1, rfc2988: true });
        self
    }

    /// With ns-2's estimator: its older timeout rule, `rfc2988_` false (`ns2_rfc2988` off):
    /// `rtt_timeout()` floors t_rtxcur_ · t_backoff_ at `minrto_` after the backoff, and
    /// `rtt_backoff()` doubles only while t_backoff_ < 64 (tcp/tcp.cc).
    pub fn ns2_before_rfc2988(mut self) -> Self {
        self.ns2.as_mut().expect("ns2_model first").rfc2988 = false;
        self
    }

    /// Use Linux's estimator and timer (`rto_model = "linux"`) on a clock of `hz` jiffies a second.
    /// The initial RTO (TCP_TIMEOUT_INIT, 1 s) is a whole number of jiffies.
    pub fn linux_model(mut self, j: Jiffies) -> Self {
        self.rto = j.to_ns(j.usecs_to_jiffies(self.rto / 1000));
        self.linux = Some(LinuxRtt { j, srtt_us8: 0, mdev_us: 0, mdev_max_us: 0, rttvar_us: 0, rtt_seq: 0, rto_min_us: self.min / 1000 });
        self
    }

    /// Linux's estimator state in the kernel's units: (srtt_us, mdev_us, mdev_max_us,
    /// rttvar_us), srtt_us being 8·SRTT (`LinuxRtt`).
    pub fn linux_state(&self) -> Option<(u64, u64, u64, u64)> {
        self.linux.as_ref().map(|l| (l.srtt_us8, l.mdev_us, l.mdev_max_us, l.rttvar_us))
    }

    pub fn srtt(&self) -> Option<Time> {
        if let Some(l) = &self.linux {
            return (l.srtt_us8 > 0).then(|| (l.srtt_us8 >> 3) * 1000);
        }
        if let Some(n) = &self.ns2 {
            return (n.srtt8 > 0).then(|| (n.srtt8 >> NS2_SRTT_BITS) as Time * self.tick);
        }
        self.srtt
    }
    pub fn rttvar(&self) -> Time {
        if let Some(l) = &self.linux {
            // tcp_get_info(): tcpi_rttvar = mdev_us >> 2, the smoothed mean deviation (what the
            // RTO adds, rttvar_us, is at least rto_min: RTO − SRTT).
            return (l.mdev_us >> 2) * 1000;
        }
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
        if self.linux.is_some() {
            // tcp_stamp_us_delta() of two tcp_clock_us() readings: whole microseconds.
            return (now / 1000 - sent / 1000) * 1000;
        }
        if self.tick > 0 {
            ((now / self.tick) - (sent / self.tick)).max(1) * self.tick
        } else {
            now - sent
        }
    }

    /// Take an RTT measurement taken by an ACK that moved snd_una to `snd_una` while the highest
    /// sequence sent was `snd_nxt` (Linux's estimator needs both to find the end of an RTT; the
    /// others ignore them).
    pub fn sample_acked(&mut self, r: Time, snd_una: u64, snd_nxt: u64) {
        if self.linux.is_none() {
            return self.sample(r);
        }
        self.n_samples += 1;
        self.sum += r as u128;
        self.min_sample = self.min_sample.min(r);
        self.max_sample = self.max_sample.max(r);
        let l = self.linux.as_mut().expect("linux estimator");
        l.estimate(r / 1000, snd_una, snd_nxt);
        // tcp_ack_update_rtt(): tcp_set_rto(), then icsk_backoff = 0.
        self.rto = l.rto(self.max);
    }

    /// Take an RTT measurement R (RFC 6298 §2.2–2.4) and recompute the RTO, which clears any
    /// backoff (§5.7 note: the backed-off RTO is kept until a new sample is taken).
    pub fn sample(&mut self, r: Time) {
        if self.linux.is_some() {
            // No sequence context: every sample ends an RTT.
            return self.sample_acked(r, u64::MAX, 0);
        }
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
            // rtt_backoff(): double t_backoff_ while it is below 64, or, with rfc2988_, while
            // the RTO is below maxrto_; beyond 8, SRTT is folded into RTTVAR and cleared.
            let below_max = self.ns2.as_ref().is_some_and(|n| n.rfc2988) && self.ns2_timeout() < self.max;
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
        if let Some(l) = &self.linux {
            // inet_csk_reset_xmit_timer(): jiffies + icsk_rto on the timer wheel.
            return l.j.timer_expiry(now, self.rto / l.j.ns());
        }
        if self.ns2.is_some() {
            // set_rtx_timer(): rtx_timer_.resched(rtt_timeout()), exact.
            return now + self.rto;
        }
        timer_deadline(now, self.rto, self.tick)
    }

    /// rtt_timeout(): with rfc2988_, max(t_rtxcur_, minrto_) · t_backoff_ (minrto_ bounds the
    /// base before the backoff); without, max(t_rtxcur_ · t_backoff_, minrto_) (after it). Then
    /// at most maxrto_, at least two ticks (tcp/tcp.cc).
    fn ns2_timeout(&self) -> Time {
        let n = self.ns2.as_ref().expect("ns-2 estimator");
        let base = if n.rfc2988 {
            n.rtxcur.max(self.min) as u128 * n.backoff as u128
        } else {
            (n.rtxcur as u128 * n.backoff as u128).max(self.min as u128)
        };
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
    /// `rfc2988_` (true: ns-2.35's default; `ns2_rfc2988`).
    rfc2988: bool,
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

/// Linux 6.x's estimator state (struct tcp_sock): `srtt_us` (8·SRTT), `mdev_us` (4·mean
/// deviation), `mdev_max_us` (the largest `mdev_us` of the current RTT), `rttvar_us` (what the RTO
/// adds to SRTT) and `rtt_seq` (the snd_nxt that ends the current RTT), all in microseconds.
#[derive(Clone, Debug)]
struct LinuxRtt {
    j: Jiffies,
    srtt_us8: u64,
    mdev_us: u64,
    mdev_max_us: u64,
    rttvar_us: u64,
    rtt_seq: u64,
    /// tcp_rto_min_us(): TCP_RTO_MIN (200 ms) unless the route or sysctl says otherwise.
    rto_min_us: u64,
}

impl LinuxRtt {
    /// tcp_rtt_estimator() with a sample of `m_us` microseconds (net/ipv4/tcp_input.c).
    fn estimate(&mut self, m_us: u64, snd_una: u64, snd_nxt: u64) {
        let m = m_us as i64;
        if self.srtt_us8 != 0 {
            let mut srtt = self.srtt_us8 as i64;
            // "m is now error in rtt est"; srtt = 7/8 srtt + 1/8 new.
            let mut err = m - (srtt >> 3);
            srtt += err;
            let mdev = self.mdev_us as i64;
            if err < 0 {
                // The RTT fell: the deviation moves with gain 1/4 · 1/8 = 1/32 when the error
                // exceeds it (the kernel's Eifel-like damping), so the RTO neither grows nor
                // falls fast on a falling RTT.
                err = -err - (mdev >> 2);
                if err > 0 {
                    err >>= 3;
                }
            } else {
                err -= mdev >> 2;
            }
            // mdev = 3/4 mdev + 1/4 |err|.
            self.mdev_us = (mdev + err).max(0) as u64;
            if self.mdev_us > self.mdev_max_us {
                self.mdev_max_us = self.mdev_us;
                if self.mdev_max_us > self.rttvar_us {
                    self.rttvar_us = self.mdev_max_us;
                }
            }
            // Once per RTT (snd_una past rtt_seq): rttvar decays by a quarter toward the RTT's
            // largest deviation, and a new RTT starts with mdev_max at rto_min.
            if snd_una > self.rtt_seq {
                if self.mdev_max_us < self.rttvar_us {
                    self.rttvar_us -= (self.rttvar_us - self.mdev_max_us) >> 2;
                }
                self.rtt_seq = snd_nxt;
                self.mdev_max_us = self.rto_min_us;
            }
            self.srtt_us8 = (srtt.max(1)) as u64;
        } else {
            // No previous measure: srtt = m, mdev = 2m ("make sure rto = 3*rtt"), rttvar at
            // least rto_min.
            self.srtt_us8 = (m_us << 3).max(1);
            self.mdev_us = m_us << 1;
            self.rttvar_us = self.mdev_us.max(self.rto_min_us);
            self.mdev_max_us = self.rttvar_us;
            self.rtt_seq = snd_nxt;
        }
    }

    /// tcp_set_rto(): __tcp_set_rto() = usecs_to_jiffies((srtt_us >> 3) + rttvar_us), then
    /// tcp_bound_rto(): at most rto_max. No lower bound besides rttvar's rto_min.
    fn rto(&self, rto_max: Time) -> Time {
        let jiffies = self.j.usecs_to_jiffies((self.srtt_us8 >> 3) + self.rttvar_us);
        self.j.to_ns(jiffies).min(rto_max)
    }
}

/// net.ipv4.tcp_min_rtt_wlen: the window of the minimum-RTT filter, 300 s.
pub const MIN_RTT_WLEN: Time = 300 * SEC;

/// Kathleen Nichols' windowed min filter as Linux keeps it (lib/win_minmax.c, `struct minmax`):
/// the best, second-best and third-best samples of the window, each with its time, so that the
/// minimum of the last `win` is known at O(1) per sample.
#[derive(Clone, Copy, Debug, Default)]
struct WinMinMax {
    /// (time, value); value 0 = no sample yet.
    s: [(Time, Time); 3],
}

impl WinMinMax {
    fn get(&self) -> Option<Time> {
        (self.s[0].1 > 0).then_some(self.s[0].1)
    }

    fn reset(&mut self, t: Time, v: Time) -> Time {
        self.s = [(t, v); 3];
        v
    }

    /// `minmax_running_min()`.
    fn running_min(&mut self, win: Time, t: Time, v: Time) -> Time {
        // "Reset if new sample is the minimum or nothing is in the window."
        if self.s[0].1 == 0 || v <= self.s[0].1 || t - self.s[2].0 > win {
            return self.reset(t, v);
        }
        if v <= self.s[1].1 {
            self.s[1] = (t, v);
            self.s[2] = (t, v);
        } else if v <= self.s[2].1 {
            self.s[2] = (t, v);
        }
        self.subwin_update(win, t, v)
    }

    /// `minmax_subwin_update()`: age the best samples through quarters of the window.
    fn subwin_update(&mut self, win: Time, t: Time, v: Time) -> Time {
        let dt = t - self.s[0].0;
        if dt > win {
            // The best expired: the second and third move up, the new sample becomes third.
            self.s[0] = self.s[1];
            self.s[1] = self.s[2];
            self.s[2] = (t, v);
            if t - self.s[0].0 > win {
                self.s[0] = self.s[1];
                self.s[1] = self.s[2];
                self.s[2] = (t, v);
            }
        } else if self.s[1].0 == self.s[0].0 && dt > win / 4 {
            // A quarter of the window passed with no new second best: take one.
            self.s[1] = (t, v);
            self.s[2] = (t, v);
        } else if self.s[2].0 == self.s[1].0 && dt > win / 2 {
            // Half the window passed with no new third best: take one.
            self.s[2] = (t, v);
        }
        self.s[0].1
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
    use crate::units::{ms, MS};

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

    /// ns-2's rfc2988_ false (tcp/tcp.cc): rtt_timeout() is t_rtxcur_ · t_backoff_ floored at
    /// minrto_ after the backoff. A 300 ms RTO with minrto_ 1 s: 1 s; backed off, 600 ms floored
    /// at 1 s (with rfc2988_: 2 s), then 1.2 s, 2.4 s ...; and rtt_backoff() stops at
    /// t_backoff_ 64 even below maxrto_ (with rfc2988_ it goes on while below maxrto_).
    #[test]
    fn ns2_before_rfc2988_floors_after_the_backoff() {
        let tick = ms(10);
        let mut old = RttEstimator::new(3 * SEC, SEC, 600 * SEC, tick, tick, 2.0).ns2_model().ns2_before_rfc2988();
        let mut new = RttEstimator::new(3 * SEC, SEC, 600 * SEC, tick, tick, 2.0).ns2_model();
        assert_eq!(old.rto(), 3 * SEC, "rtxcur_init_ before any sample either way");
        old.sample(ms(100));
        new.sample(ms(100));
        assert_eq!((old.rto(), new.rto()), (SEC, SEC), "300 ms floored at minrto_ 1 s");
        let (mut a, mut b) = (vec![], vec![]);
        for _ in 0..8 {
            old.back_off();
            new.back_off();
            a.push(old.rto() / MS);
            b.push(new.rto() / MS);
        }
        // Beyond a backoff of 8 SRTT is folded into RTTVAR, which leaves t_rtxcur_ as it was
        // (rtt_update() alone recomputes it): 300 ms · 16, · 32, · 64, and no further.
        assert_eq!(a, [1000, 1200, 2400, 4800, 9600, 19200, 19200, 19200]);
        assert_eq!(b, [2000, 4000, 8000, 16000, 32000, 64000, 128000, 256000]);
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
    /// tcp_rtt_estimator() + tcp_set_rto() at HZ 250, rto_min 200 ms: the kernel's fixed-point
    /// numbers (srtt_us = 8·SRTT, mdev_us, mdev_max_us, rttvar_us), worked out by hand from
    /// net/ipv4/tcp_input.c.
    #[test]
    fn linux_estimator_kernel_numbers() {
        let mut e = RttEstimator::new(SEC, ms(200), 120 * SEC, ms(200), 0, 2.0).linux_model(Jiffies::new(250));
        assert_eq!(e.rto(), SEC, "TCP_TIMEOUT_INIT");
        // First sample 100 ms: srtt 100, mdev 2m = 200 ms, rttvar = max(mdev, rto_min);
        // RTO = usecs_to_jiffies(100 000 + 200 000) = 75 jiffies.
        e.sample_acked(ms(100), 0, 10);
        assert_eq!(e.linux_state(), Some((800_000, 200_000, 200_000, 200_000)));
        assert_eq!(e.rto(), ms(300));
        assert_eq!(e.srtt(), Some(ms(100)));
        // A falling sample (20 ms), snd_una past rtt_seq: error −80 000, |err| − mdev/4 = 30 000,
        // gain 1/8 more ("m < 0" branch): mdev 203 750, which raises mdev_max and rttvar; the RTT
        // ends, mdev_max restarts at rto_min. RTO = ⌈(90 000 + 203 750) / 4000⌉ = 74 jiffies.
        e.sample_acked(ms(20), 11, 20);
        assert_eq!(e.linux_state(), Some((720_000, 203_750, 200_000, 203_750)));
        assert_eq!(e.rto(), ms(296));
        // A rising sample (300 ms) inside the RTT: gain 1/4, rttvar follows mdev up at once.
        e.sample_acked(ms(300), 15, 25);
        assert_eq!(e.linux_state(), Some((930_000, 362_813, 362_813, 362_813)));
        assert_eq!(e.rto(), ms(480));
        // Steady samples: rttvar decays a quarter of the way to the RTT's mdev_max per RTT.
        e.sample_acked(116_250_000, 26, 30);
        assert_eq!(e.linux_state(), Some((930_000, 272_110, 200_000, 362_813)));
        e.sample_acked(116_250_000, 31, 40);
        assert_eq!(e.linux_state(), Some((930_000, 204_083, 200_000, 323_131)));
        assert_eq!(e.rto(), ms(440));
        // No 1 s floor: a 2 ms path gets srtt + rto_min, ⌈202 ms⌉ = 51 jiffies = 204 ms.
        let mut e = RttEstimator::new(SEC, ms(200), 120 * SEC, ms(200), 0, 2.0).linux_model(Jiffies::new(250));
        e.sample_acked(ms(2), 0, 1);
        assert_eq!(e.rto(), ms(204));
        // The timer: 51 jiffies set at jiffy 0 is a level-0 timer, run at jiffy 52.
        assert_eq!(e.deadline(0), ms(208));
        assert_eq!(e.deadline(ms(1)), ms(208));
        // Backoff doubles, bounded by rto_max (tcp_retransmit_timer()).
        e.back_off();
        assert_eq!(e.rto(), ms(408));
        // Samples are whole microseconds.
        assert_eq!(e.measure(1_999, 102_000_500), 102_000_000 - 1_000);
    }

    /// lib/win_minmax.c: the minimum of the last window; an expired best gives way to the
    /// second best.
    #[test]
    fn windowed_min_rtt() {
        let mut e = RttEstimator::new(SEC, ms(200), 120 * SEC, ms(200), 0, 2.0).linux_model(Jiffies::new(250));
        assert_eq!(e.min_rtt(), None);
        e.update_min_rtt(0, ms(50));
        e.update_min_rtt(SEC, ms(60));
        e.update_min_rtt(2 * SEC, ms(40));
        assert_eq!(e.min_rtt(), Some(ms(40)));
        e.update_min_rtt(3 * SEC, ms(70));
        assert_eq!(e.min_rtt(), Some(ms(40)));
        // A zero sample counts as one jiffy (4 ms at HZ 250).
        e.update_min_rtt(4 * SEC, 0);
        assert_eq!(e.min_rtt(), Some(ms(4)));
        // 300 s on, larger samples only: the 4 ms one has expired.
        e.update_min_rtt(100 * SEC, ms(80));
        e.update_min_rtt(200 * SEC, ms(90));
        e.update_min_rtt(305 * SEC, ms(100));
        assert_eq!(e.min_rtt(), Some(ms(80)), "the 4 ms sample expired; 80 ms was the second best");
    }

    /// tcp_bound_rto(): the RTO never exceeds rto_max.
    #[test]
    fn linux_rto_bounded_by_rto_max() {
        let mut e = RttEstimator::new(SEC, ms(200), 2 * SEC, ms(200), 0, 2.0).linux_model(Jiffies::new(1000));
        e.sample_acked(3 * SEC, 0, 1);
        assert_eq!(e.rto(), 2 * SEC);
        // HZ 1000: jiffies of 1 ms; a 10 ms path: 10 + 200 = 210 ms.
        let mut e = RttEstimator::new(SEC, ms(200), 120 * SEC, ms(200), 0, 2.0).linux_model(Jiffies::new(1000));
        e.sample_acked(ms(10), 0, 1);
        assert_eq!(e.rto(), ms(210));
    }
}
