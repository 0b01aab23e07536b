//! Linux's clock for TCP timers: jiffies at `CONFIG_HZ` ticks a second, and the timer wheel that
//! decides when a timer set for `jiffies + n` really runs (kernel/time/timer.c). The `linux` RTO
//! model and the Linux receiver (`delack_model = "linux"`) keep their timers on it; RTT samples
//! stay in microseconds (`tcp_rtt_estimator` works in usec since 4.x).
//!
//! `hz = 0` turns the clock off: a "jiffy" is then one nanosecond and timers expire exactly.

use crate::units::{Time, SEC};

/// Levels of the timer wheel: 64 buckets a level (`LVL_BITS` 6), each level 8 times coarser than
/// the one below (`LVL_CLK_SHIFT` 3); kernel/time/timer.c.
const LVL_BITS: u32 = 6;
const LVL_CLK_SHIFT: u32 = 3;
const LVL_DEPTH: u32 = 9;

/// The jiffies clock of one configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Jiffies {
    /// Nanoseconds a jiffy (SEC / HZ); 0 when the clock is off.
    jiffy: Time,
    hz: u64,
    /// How long before time 0 the last tick came (`jiffy_offset`, less than a jiffy): tick k
    /// falls at k·jiffy − offset.
    offset: Time,
}

impl Jiffies {
    pub fn new(hz: u32) -> Jiffies {
        if hz == 0 {
            Jiffies { jiffy: 0, hz: 0, offset: 0 }
        } else {
            Jiffies { jiffy: SEC / hz as Time, hz: hz as u64, offset: 0 }
        }
    }

    /// The clock of a configuration: `hz`, with its ticks `jiffy_offset` early.
    pub fn of(cfg: &crate::tcp::config::TcpConfig) -> Jiffies {
        Jiffies::new(cfg.hz).with_offset(cfg.jiffy_offset.0)
    }

    /// Ticks `offset` early (the last tick before time 0 came `offset` before it): a real kernel's
    /// ticks have no fixed phase to an experiment's time 0. At most a jiffy less 1 ns.
    pub fn with_offset(mut self, offset: Time) -> Jiffies {
        if self.is_on() {
            self.offset = offset.min(self.jiffy - 1);
        }
        self
    }

    /// Ticks a second (`CONFIG_HZ`; 0 when the clock is off).
    pub fn hz(&self) -> u64 {
        self.hz
    }

    pub fn is_on(&self) -> bool {
        self.jiffy > 0
    }

    /// Nanoseconds a jiffy (1 when the clock is off: every count below is then in nanoseconds).
    pub fn ns(&self) -> Time {
        self.jiffy.max(1)
    }

    /// `jiffies` at simulated time `t` (jiffy 0 began `offset` before time 0).
    pub fn at(&self, t: Time) -> u64 {
        (t + self.offset) / self.ns()
    }

    /// A constant the kernel writes as `HZ / div` (TCP_ATO_MIN = HZ/25, TCP_DELACK_MAX = HZ/5,
    /// TCP_RTO_MIN = HZ/5), in jiffies; with the clock off, `SEC / div` in nanoseconds.
    pub fn hz_div(&self, div: u64) -> u64 {
        if self.is_on() {
            self.hz / div
        } else {
            SEC / div
        }
    }

    /// `usecs_to_jiffies()` (include/linux/jiffies.h): rounds up.
    pub fn usecs_to_jiffies(&self, us: u64) -> u64 {
        (us * 1000).div_ceil(self.ns())
    }

    /// A duration of `n` jiffies in nanoseconds.
    pub fn to_ns(&self, n: u64) -> Time {
        n * self.ns()
    }

    /// When a timer armed at `now` for `jiffies + n` runs (`sk_reset_timer` → `mod_timer`):
    /// `calc_wheel_index()` puts it in the level whose range holds the delta and rounds the
    /// expiry up to that level's granularity, strictly past it (`calc_index()`: "(expires >>
    /// LVL_SHIFT(lvl)) + 1", so that a timer armed at the edge of a tick never fires early);
    /// it runs on the tick at which jiffies reaches that bucket. Level 0 (up to 62 jiffies)
    /// fires one jiffy late; level 1 (up to 503) on the next multiple of 8 jiffies, and so on.
    pub fn timer_expiry(&self, now: Time, n: u64) -> Time {
        if !self.is_on() {
            return now + n;
        }
        let clk = self.at(now);
        let expires = clk + n;
        let mut lvl = 0;
        while lvl + 1 < LVL_DEPTH && n >= lvl_start(lvl + 1) {
            lvl += 1;
        }
        let shift = lvl * LVL_CLK_SHIFT;
        let bucket = ((expires >> shift) + 1) << shift;
        bucket * self.jiffy - self.offset
    }
}

/// `LVL_START(n)`: the smallest delta kept in level n, (LVL_SIZE − 1) << ((n − 1)·LVL_CLK_SHIFT).
fn lvl_start(n: u32) -> u64 {
    ((1u64 << LVL_BITS) - 1) << ((n - 1) * LVL_CLK_SHIFT)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::ms;

    #[test]
    fn hz_250_constants_and_rounding() {
        let j = Jiffies::new(250);
        assert_eq!(j.ns(), ms(4));
        assert_eq!(j.hz_div(25), 10, "TCP_ATO_MIN = HZ/25 = 40 ms");
        assert_eq!(j.hz_div(5), 50, "TCP_DELACK_MAX = TCP_RTO_MIN = HZ/5 = 200 ms");
        // usecs_to_jiffies() rounds up: 200 ms + 1 us is 51 jiffies.
        assert_eq!(j.usecs_to_jiffies(200_000), 50);
        assert_eq!(j.usecs_to_jiffies(200_001), 51);
        assert_eq!(j.usecs_to_jiffies(1), 1);
        assert_eq!(j.at(ms(7)), 1);
        let off = Jiffies::new(0);
        assert_eq!((off.hz_div(25), off.usecs_to_jiffies(3)), (ms(40), 3000));
        assert_eq!(off.timer_expiry(ms(5), ms(40)), ms(45));
    }

    /// calc_wheel_index(): LVL_START(1) = 63, LVL_START(2) = 504.
    #[test]
    fn timer_wheel_levels() {
        let j = Jiffies::new(250);
        assert_eq!((lvl_start(1), lvl_start(2), lvl_start(3)), (63, 504, 4032));
        // Level 0: 10 jiffies set at jiffy 2 (t = 9 ms) run at jiffy 13 = 52 ms.
        assert_eq!(j.timer_expiry(ms(9), 10), ms(52));
        assert_eq!(j.timer_expiry(ms(8), 62), ms(8) + 63 * ms(4));
        // Level 1, granularity 8: 63 jiffies from jiffy 0 → bucket (63 >> 3) + 1 = 8 → jiffy 64.
        assert_eq!(j.timer_expiry(0, 63), 64 * ms(4));
        // 51 jiffies (a 204 ms RTO) from jiffy 0: level 0, jiffy 52 = 208 ms.
        assert_eq!(j.timer_expiry(0, 51), ms(208));
        // 75 jiffies (300 ms) from jiffy 3: expires 78 → (78 >> 3) + 1 = 10 → jiffy 80.
        assert_eq!(j.timer_expiry(ms(12), 75), ms(320));
        // Level 2 (granularity 64): 1 s = 250 jiffies from 0 is level 1: (250 >> 3) + 1 = 32 → 256.
        assert_eq!(j.timer_expiry(0, 250), 256 * ms(4));
        assert_eq!(j.timer_expiry(0, 750), ((750u64 >> 6) + 1) * 64 * ms(4));
    }

    /// `jiffy_offset`: the ticks fall `offset` early, jiffy k at k·4 ms − 2 ms.
    #[test]
    fn ticks_with_an_offset() {
        let j = Jiffies::new(250).with_offset(ms(2));
        assert_eq!((j.at(0), j.at(ms(2) - 1), j.at(ms(2)), j.at(ms(7))), (0, 0, 1, 2));
        // 10 jiffies set at t = 9 ms (jiffy 2) run at jiffy 13, which ticks at 50 ms.
        assert_eq!(j.timer_expiry(ms(9), 10), ms(50));
        // Armed just before a tick, a level-0 timer still runs one jiffy past its expiry.
        assert_eq!(j.timer_expiry(ms(2) - 1, 1), ms(6));
        assert!(j.timer_expiry(ms(2) - 1, 1) > ms(2) - 1);
        // The offset is at most a jiffy less 1 ns, and means nothing without jiffies.
        assert_eq!(Jiffies::new(250).with_offset(ms(9)).at(ms(4) - 1), 1);
        assert_eq!(Jiffies::new(0).with_offset(ms(2)).timer_expiry(ms(5), ms(40)), ms(45));
    }
}
