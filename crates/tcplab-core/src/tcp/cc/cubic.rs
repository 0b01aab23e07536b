//! CUBIC (RFC 9438) as Linux computes it: `net/ipv4/tcp_cubic.c` ("v2.3"), with Linux's classic
//! HyStart (`hystart_update`; off with `slow_start = "standard"`, as `tcp_cubic`'s `hystart = 0`).
//! RFC 9406's HyStart++, which Linux does not have, replaces it with `slow_start = "hystart++"`
//! (`hystartpp.rs`).
//!
//! Linux counts the window in packets and CUBIC's arithmetic is integer: the controller keeps
//! packets (cwnd = the `Window`'s bytes / SMSS, rounded down) and reports packets·SMSS. Where
//! RFC 9438 and Linux differ, Linux is followed:
//! - the Reno-friendly estimate W_est grows by one packet per `(cwnd·beta_scale) >> 3` packets
//!   acknowledged with the kernel's integer `beta_scale` = 8·1741/3/307 = 15 (α ≈ 0.53), and
//!   never switches to α = 1 once W_est passes W_max (RFC 9438 §4.3 asks for that);
//! - the epoch starts at the first ACK in congestion avoidance after a reduction (not at the
//!   loss), and t runs in jiffies plus the minimum RTT (`delay_min`), in 1/1024 s;
//! - K comes from the kernel's `cubic_root` (table lookup and one Newton step, ≈ 0.2 % error);
//! - growth is capped at one packet per two acknowledged (cnt ≥ 2), and at 5 % a round trip
//!   (cnt ≤ 20) while no W_max is known;
//! - a timeout forgets W_max (`cubictcp_state` on TCP_CA_Loss: `bictcp_reset`);
//! - ssthresh = max(cwnd·717/1024, 2) from cwnd, not FlightSize (RFC 9438 §4.6 agrees).
//!
//! An RTT sample on every ACK comes only with `rto_model = "linux"` (`linux6`, Linux's
//! `tcp_ack_update_rtt`); otherwise the sender times one segment per round trip
//! (`AckSample::rtt`), and HyStart's delay detector, which wants 8 samples in a round, in
//! practice never fires — the ACK train detector runs on every ACK the controller sees, as
//! Linux's does. No undo event (DSACK, F-RTO): Linux's `tcp_reno_undo_cwnd` is not reachable.

use super::hystartpp::HystartPP;
use super::{linux_cwnd_restart, AckSample, AppLimited, CongestionControl, CongestionEvent, Window};
use crate::tcp::config::{CwndValidation, SlowStart, TcpConfig};
use crate::tcp::jiffies::Jiffies;
use crate::units::US;

/// `BICTCP_BETA_SCALE`: beta is 717/1024.
pub const BETA_SCALE_DENOM: u32 = 1024;
/// `beta` = 717 (0.7 · 1024).
pub const BETA: u32 = 717;
/// `BICTCP_HZ`: CUBIC's time unit is 2^-10 s.
pub const BICTCP_HZ: u32 = 10;
/// `bic_scale` = 41: C = 410/1024 ≈ 0.4.
pub const BIC_SCALE: u32 = 41;
/// `cube_rtt_scale` = bic_scale·10 = 1024·C/RTT with the kernel's assumed RTT of 100 ms.
pub const CUBE_RTT_SCALE: u64 = BIC_SCALE as u64 * 10;
/// `cube_factor` = 2^(10 + 3·BICTCP_HZ) / (bic_scale·10): K = cbrt(cube_factor·(W_max − cwnd)).
pub const CUBE_FACTOR: u64 = (1u64 << (10 + 3 * BICTCP_HZ)) / (BIC_SCALE as u64 * 10);
/// `beta_scale` = 8·(1024 + beta)/3/(1024 − beta) = 15 (integer division, as the kernel does).
pub const BETA_SCALE: u32 = 8 * (BETA_SCALE_DENOM + BETA) / 3 / (BETA_SCALE_DENOM - BETA);
/// CUBIC's tick where the configuration has no jiffies (`hz = 0`): `CONFIG_HZ` = 250, the testbed
/// kernel's (KERNEL_LAB: 4 ms jiffies). CUBIC's epoch, its once-a-jiffy update and HyStart's
/// one-second guard count jiffies; with `hz` set they count the configuration's own
/// (`tcp::jiffies`, with `jiffy_offset`'s phase).
pub const HZ: u32 = 250;
/// `hystart_low_window`: HyStart runs from a window of 16 packets.
pub const HYSTART_LOW_WINDOW: u32 = 16;
/// `hystart_ack_delta_us`: ACKs at most 2 ms apart form a train.
pub const HYSTART_ACK_DELTA_US: u64 = 2000;
/// `HYSTART_MIN_SAMPLES`: RTT samples in a round before the delay detector decides.
pub const HYSTART_MIN_SAMPLES: u8 = 8;
/// `HYSTART_DELAY_MIN` and `HYSTART_DELAY_MAX`: the delay threshold delay_min/8 clamped to
/// 4..16 ms.
pub const HYSTART_DELAY_MIN_US: u32 = 4000;
pub const HYSTART_DELAY_MAX_US: u32 = 16000;
/// `sk_gso_max_size` of a Linux TCP socket: every TCP socket builds GSO skbs (`sk_setup_caps`
/// sets NETIF_F_GSO for TCP whatever the device's offloads: "tcp: switch to GSO being always
/// on"), of at most the device's 64 KB (`GSO_LEGACY_MAX_SIZE`, a veth's default) less
/// MAX_TCP_HEADER + 1 (`sk_dst_gso_max_size`; MAX_TCP_HEADER is 320 on a distribution x86-64
/// kernel). Only `hystart_ack_delay` reads it here.
pub const SK_GSO_MAX_SIZE: u64 = 65536 - 321;
/// `hystart_ack_delay`'s cap: one millisecond.
pub const HYSTART_ACK_DELAY_MAX_US: u64 = 1000;

/// Linux's `hystart_ack_delay` (tcp_cubic.c): the ACK train's allowance for TSO/GRO
/// aggregation, min(1 ms, sk_gso_max_size · 4 / sk_pacing_rate) in µs; 0 without a pacing rate.
/// Below about 260 MB/s of pacing rate (2 Gb/s) it is the whole millisecond.
pub fn hystart_ack_delay_us(pacing_rate: Option<u64>) -> u64 {
    match pacing_rate {
        Some(r) if r > 0 => (SK_GSO_MAX_SIZE * 4 * 1_000_000 / r).min(HYSTART_ACK_DELAY_MAX_US),
        _ => 0,
    }
}

/// The kernel's `cubic_root`: cbrt(a) by a table of the top bits then one Newton-Raphson step,
/// x' = (2x + a/(x(x−1)))·341/1024, in the kernel's u32/u64 arithmetic (average error ≈ 0.195 %).
pub fn cubic_root(a: u64) -> u32 {
    // v[x] = cbrt(x << 18) − 1 for x in 0..64, refined by hand (the kernel's table).
    const V: [u8; 64] = [
        0, 54, 54, 54, 118, 118, 118, 118, 123, 129, 134, 138, 143, 147, 151, 156, 157, 161, 164, 168, 170, 173, 176, 179, 181, 185, 187, 190, 192, 194, 197, 199, 200, 202, 204, 206, 209, 211, 213, 215, 217, 219, 221, 222, 224, 225, 227, 229, 231, 232, 234, 236, 237, 239, 240, 242, 244, 245, 246, 248, 250, 251, 252, 254,
    ];
    let b = 64 - a.leading_zeros(); // fls64
    if b < 7 {
        return (V[a as usize] as u32 + 35) >> 6;
    }
    let b = ((b * 84) >> 8) - 1;
    let shift = (a >> (b * 3)) as usize;
    let x = ((V[shift] as u32 + 10) << b) >> 6;
    let x = (2 * x).wrapping_add((a / (x as u64 * (x as u64 - 1))) as u32);
    x.wrapping_mul(341) >> 10
}

pub struct Cubic {
    mss: u64,
    /// `tcp_jiffies32`: the configuration's clock (`hz`, `jiffy_offset`), or `HZ` without one.
    clock: Jiffies,
    /// The initial window, packets (the restart window's bound).
    iw: u64,
    cwnd_validation: CwndValidation,
    /// Linux's application-limited decay (`cwnd_validation = "linux"`), not CUBIC's state.
    app_limited: AppLimited,
    // struct bictcp, zeroed by `bictcp_reset`.
    /// `cnt`: increase cwnd by 1 after this many packets acknowledged.
    cnt: u32,
    /// `last_max_cwnd`: W_max, packets (0: unknown).
    last_max_cwnd: u32,
    /// `last_cwnd`, `last_time` (jiffies): when `cnt` was last computed, and for which cwnd.
    last_cwnd: u32,
    last_time: u64,
    /// `bic_origin_point`: the window the cubic curve is centred on, packets.
    bic_origin_point: u32,
    /// `bic_K`: time from the epoch's start to the origin point, 2^-10 s.
    bic_k: u32,
    /// `delay_min`: the least RTT seen, µs (0: none yet).
    delay_min: u32,
    /// `epoch_start` (jiffies); None where the kernel has 0.
    epoch_start: Option<u64>,
    /// `ack_cnt`: packets acknowledged in the epoch, for the Reno-friendly estimate.
    ack_cnt: u32,
    /// `tcp_cwnd`: the Reno-friendly estimate W_est, packets.
    tcp_cwnd: u32,
    // HyStart (`bictcp_hystart_reset`).
    sample_cnt: u8,
    found: bool,
    /// `round_start`, `last_ack` (µs) and `end_seq` (in delivered bytes: a round ends when the
    /// cumulative ACK passes what was sent when it began).
    round_start: u64,
    last_ack: u64,
    end_seq: u64,
    /// `curr_rtt`: the least RTT of the round, µs.
    curr_rtt: u32,
    // struct tcp_sock.
    /// `snd_cwnd_cnt`: `tcp_cong_avoid_ai`'s credit, packets.
    cwnd_cnt: u32,
    /// Acknowledged bytes short of a whole packet, carried to the next ACK.
    acked_rem: u64,
    /// Linux's classic HyStart runs (`slow_start` "auto" or "hystart"; `tcp_cubic`'s module
    /// parameter `hystart`).
    classic: bool,
    /// HyStart++ instead (`slow_start = "hystart++"`, RFC 9406).
    hpp: Option<HystartPP>,
}

impl Cubic {
    pub fn new(cfg: &TcpConfig) -> Self {
        let mss = cfg.mss.0;
        Cubic {
            mss,
            clock: if cfg.hz > 0 { Jiffies::of(cfg) } else { Jiffies::new(HZ) },
            iw: (cfg.initial_window.bytes(mss as u32) / mss).max(1),
            cwnd_validation: cfg.cwnd_validation,
            classic: matches!(cfg.slow_start, SlowStart::Auto | SlowStart::Hystart),
            hpp: (cfg.slow_start == SlowStart::HystartPP).then(|| HystartPP::new(cfg.pacing)),
            ..Cubic::new_zeroed()
        }
    }

    /// `bictcp_reset`: forget W_max, the epoch, delay_min and HyStart's verdict.
    fn reset(&mut self) {
        let keep = Cubic {
            mss: self.mss,
            clock: self.clock,
            iw: self.iw,
            cwnd_validation: self.cwnd_validation,
            app_limited: self.app_limited,
            cwnd_cnt: self.cwnd_cnt,
            acked_rem: self.acked_rem,
            classic: self.classic,
            hpp: self.hpp.take(),
            ..Cubic::new_zeroed()
        };
        *self = keep;
    }

    fn new_zeroed() -> Self {
        Cubic {
            mss: 1,
            clock: Jiffies::new(HZ),
            iw: 1,
            cwnd_validation: CwndValidation::Rfc5681,
            app_limited: AppLimited::default(),
            cnt: 0,
            last_max_cwnd: 0,
            last_cwnd: 0,
            last_time: 0,
            bic_origin_point: 0,
            bic_k: 0,
            delay_min: 0,
            epoch_start: None,
            ack_cnt: 0,
            tcp_cwnd: 0,
            sample_cnt: 0,
            found: false,
            round_start: 0,
            last_ack: 0,
            end_seq: 0,
            curr_rtt: u32::MAX,
            cwnd_cnt: 0,
            acked_rem: 0,
            classic: true,
            hpp: None,
        }
    }

    /// W_max, packets (0 when unknown): for tests and traces.
    pub fn w_max(&self) -> u32 {
        self.last_max_cwnd
    }

    /// K of the current epoch, 2^-10 s.
    pub fn k(&self) -> u32 {
        self.bic_k
    }

    /// The Reno-friendly estimate W_est, packets.
    pub fn w_est(&self) -> u32 {
        self.tcp_cwnd
    }

    /// When the epoch began, in the controller's jiffies (`tcp_jiffies32`); None between a
    /// reduction and the first ACK in avoidance.
    pub fn epoch_start(&self) -> Option<u64> {
        self.epoch_start
    }

    /// The minimum RTT CUBIC has seen, µs.
    pub fn delay_min_us(&self) -> u32 {
        self.delay_min
    }

    /// HyStart has ended slow start (until the next timeout).
    pub fn hystart_found(&self) -> bool {
        self.found
    }

    /// `cubictcp_recalc_ssthresh`: end the epoch, set W_max (fast convergence: a W_max reached
    /// again below the last one is remembered as cwnd·(1 + β)/2 = cwnd·1741/2048), and return
    /// ssthresh = max(cwnd·717/1024, 2) packets.
    fn recalc_ssthresh(&mut self, cwnd: u32) -> u32 {
        self.epoch_start = None;
        if cwnd < self.last_max_cwnd {
            self.last_max_cwnd = ((cwnd as u64 * (BETA_SCALE_DENOM + BETA) as u64) / (2 * BETA_SCALE_DENOM as u64)) as u32;
        } else {
            self.last_max_cwnd = cwnd;
        }
        ((cwnd as u64 * BETA as u64 / BETA_SCALE_DENOM as u64) as u32).max(2)
    }

    /// `bictcp_update`: the packets to acknowledge per cwnd increase (`cnt`) from the cubic
    /// curve W(t) = C·(t − K)³ + W_max and the Reno-friendly estimate.
    fn update(&mut self, cwnd: u32, acked: u32, jiffies: u64) {
        self.ack_cnt = self.ack_cnt.wrapping_add(acked);
        // At most once per HZ/32 jiffies while cwnd stays put.
        if self.last_cwnd == cwnd && jiffies.saturating_sub(self.last_time) <= self.clock.hz_div(32) {
            return;
        }
        // At most once per jiffy (every reduction clears epoch_start, forcing a new cnt).
        if !(self.epoch_start.is_some() && jiffies == self.last_time) {
            self.last_cwnd = cwnd;
            self.last_time = jiffies;
            let epoch_start = match self.epoch_start {
                Some(e) => e,
                None => {
                    // A new epoch at the first ACK in congestion avoidance.
                    self.ack_cnt = acked;
                    self.tcp_cwnd = cwnd;
                    if self.last_max_cwnd <= cwnd {
                        self.bic_k = 0;
                        self.bic_origin_point = cwnd;
                    } else {
                        // K = cbrt((W_max − cwnd)·2^40/410), in 2^-10 s.
                        self.bic_k = cubic_root(CUBE_FACTOR * (self.last_max_cwnd - cwnd) as u64);
                        self.bic_origin_point = self.last_max_cwnd;
                    }
                    self.epoch_start = Some(jiffies);
                    jiffies
                }
            };
            // t = (now − epoch_start + delay_min), in 2^-10 s.
            let t = ((jiffies.saturating_sub(epoch_start) + self.clock.usecs_to_jiffies(self.delay_min as u64)) << BICTCP_HZ) / self.clock.hz();
            let k = self.bic_k as u64;
            let offs = if t < k { k - t } else { t - k };
            // C/rtt·(t − K)³, the kernel's u64 product shifted by 10 + 3·BICTCP_HZ.
            let delta = (CUBE_RTT_SCALE.wrapping_mul(offs).wrapping_mul(offs).wrapping_mul(offs) >> (10 + 3 * BICTCP_HZ)) as u32;
            let target = if t < k { self.bic_origin_point.wrapping_sub(delta) } else { self.bic_origin_point.wrapping_add(delta) };
            self.cnt = if target > cwnd { cwnd / (target - cwnd) } else { cwnd.wrapping_mul(100) };
            // "The initial growth of cubic function may be too conservative": 5 % a round trip.
            if self.last_max_cwnd == 0 && self.cnt > 20 {
                self.cnt = 20;
            }
        }
        // tcp_friendliness: W_est += 1 per (cwnd·beta_scale) >> 3 packets acknowledged; where
        // Reno would be ahead, grow at least as fast as it.
        let d = ((cwnd as u64 * BETA_SCALE as u64) >> 3).max(1) as u32;
        while self.ack_cnt > d {
            self.ack_cnt -= d;
            self.tcp_cwnd = self.tcp_cwnd.saturating_add(1);
        }
        if self.tcp_cwnd > cwnd {
            let max_cnt = cwnd / (self.tcp_cwnd - cwnd);
            self.cnt = self.cnt.min(max_cnt);
        }
        // At most one packet per two acknowledged: 1.5× a round trip.
        self.cnt = self.cnt.max(2);
    }

    /// `tcp_cong_avoid_ai(tp, w, acked)`: one packet per `w` acknowledged, with the credit
    /// `snd_cwnd_cnt` carried between ACKs (and spent gently when `w` has shrunk).
    fn cong_avoid_ai(&mut self, cwnd: &mut u32, w: u32, acked: u32) {
        let w = w.max(1);
        if self.cwnd_cnt >= w {
            self.cwnd_cnt = 0;
            *cwnd = cwnd.saturating_add(1);
        }
        self.cwnd_cnt = self.cwnd_cnt.saturating_add(acked);
        if self.cwnd_cnt >= w {
            let delta = self.cwnd_cnt / w;
            self.cwnd_cnt -= delta * w;
            *cwnd = cwnd.saturating_add(delta);
        }
    }

    /// `bictcp_hystart_reset`: a new round from now, ending when what has been sent is
    /// acknowledged.
    fn hystart_reset(&mut self, now_us: u64, snd_nxt: u64) {
        self.round_start = now_us;
        self.last_ack = now_us;
        self.end_seq = snd_nxt;
        self.curr_rtt = u32::MAX;
        self.sample_cnt = 0;
    }

    /// `hystart_update` on one ACK; returns true when slow start should end (ssthresh = cwnd).
    /// `delay`: this ACK's RTT sample, µs, when it has one.
    fn hystart_update(&mut self, cwnd: u32, ssthresh: u32, a: &AckSample, delay: Option<u32>) -> bool {
        let now_us = a.now / US;
        if a.delivered > self.end_seq {
            self.hystart_reset(now_us, a.delivered + a.in_flight);
        }
        if cwnd < HYSTART_LOW_WINDOW {
            return false;
        }
        let mut found = false;
        // ACK train: ACKs at most 2 ms apart reaching past (delay_min + hystart_ack_delay)/2
        // from the round's start: threshold = delay_min + hystart_ack_delay(sk), halved when
        // unpaced (SK_PACING_NONE, as CUBIC is without fq). The pacing rate is Linux's
        // `tcp_update_pacing_rate` from this cwnd, the data out and SRTT (the kernel reads the
        // one the previous ACK set: the same below 260 MB/s, where the delay is its 1 ms cap).
        if now_us.saturating_sub(self.last_ack) <= HYSTART_ACK_DELTA_US {
            self.last_ack = now_us;
            let mss = self.mss.max(1);
            let rate = crate::tcp::pacing::linux_pacing_rate(mss, cwnd as u64, ssthresh as u64, a.in_flight.div_ceil(mss), a.srtt);
            let threshold = (self.delay_min as u64 + hystart_ack_delay_us(rate)) >> 1;
            if now_us.saturating_sub(self.round_start) > threshold {
                found = true;
            }
        }
        // Delay increase: the round's least RTT, after 8 samples, above delay_min plus
        // clamp(delay_min/8, 4 ms, 16 ms).
        if let Some(d) = delay {
            self.curr_rtt = self.curr_rtt.min(d);
            if self.sample_cnt < HYSTART_MIN_SAMPLES {
                self.sample_cnt += 1;
            } else if self.curr_rtt as u64 > self.delay_min as u64 + (self.delay_min >> 3).clamp(HYSTART_DELAY_MIN_US, HYSTART_DELAY_MAX_US) as u64 {
                found = true;
            }
        }
        if found {
            self.found = true;
        }
        found
    }
}

impl CongestionControl for Cubic {
    fn name(&self) -> &'static str {
        "cubic"
    }

    fn on_ack(&mut self, w: &mut Window, a: &AckSample) {
        let mss = self.mss;
        let cwnd0 = (w.cwnd / mss).max(1).min(u32::MAX as u64) as u32;
        let mut cwnd = cwnd0;
        let mut ssthresh = (w.ssthresh / mss).min(u32::MAX as u64) as u32;
        let jiffies = self.clock.at(a.now);
        // Linux counts acknowledged packets (pcount); partial ones are carried in bytes.
        let bytes = a.acked + self.acked_rem;
        let mut acked = (bytes / mss).min(u32::MAX as u64) as u32;
        self.acked_rem = bytes % mss;

        // cubictcp_acked (pkts_acked): delay_min and HyStart, except within a second of the
        // epoch's start ("Discard delay samples right after fast recovery").
        let fresh_epoch = self.epoch_start.is_some_and(|e| jiffies.saturating_sub(e) < self.clock.hz());
        if !fresh_epoch {
            let delay = a.rtt.map(|r| ((r / US).min(u32::MAX as u64) as u32).max(1));
            if let Some(d) = delay {
                if self.delay_min == 0 || self.delay_min > d {
                    self.delay_min = d;
                }
            }
            // HyStart needs delay_min: Linux always has a sample by the first ACK it sees.
            if self.classic && !self.found && cwnd < ssthresh && self.delay_min > 0 && self.hystart_update(cwnd, ssthresh, a, delay) {
                ssthresh = cwnd;
                w.ssthresh = cwnd as u64 * mss;
            }
        }

        // cubictcp_cong_avoid (the sender calls on_ack only when cwnd-limited).
        if cwnd < ssthresh {
            if let Some(h) = self.hpp.as_mut().filter(|h| h.active()) {
                // HyStart++ (RFC 9406 §4.2) in place of tcp_slow_start: min(N, L) packets, a
                // quarter of them in CSS; what it does not use is not carried (the RFC's rule).
                match h.grow(a, acked as u64, 1) {
                    Some(inc) => {
                        let c = cwnd.saturating_add(inc.min(u32::MAX as u64) as u32).min(ssthresh);
                        acked = if c == ssthresh { acked.saturating_sub(c - cwnd) } else { 0 };
                        cwnd = c;
                    }
                    // CSS_ROUNDS rounds done: ssthresh = cwnd, this ACK grows in avoidance.
                    None => w.ssthresh = cwnd as u64 * mss,
                }
            } else {
                // tcp_slow_start: cwnd = min(cwnd + acked, ssthresh); the rest spills into CA.
                let c = cwnd.saturating_add(acked).min(ssthresh);
                acked -= c - cwnd;
                cwnd = c;
            }
        }
        if acked > 0 {
            self.update(cwnd, acked, jiffies);
            let cnt = self.cnt;
            self.cong_avoid_ai(&mut cwnd, cnt, acked);
        }
        if cwnd != cwnd0 {
            w.cwnd = cwnd as u64 * mss;
        }
    }

    fn on_cwnd_stamp(&mut self, now: crate::units::Time) {
        if self.cwnd_validation == CwndValidation::Linux {
            self.app_limited.on_cwnd_stamp(now);
        }
    }

    fn cwnd_limited(&self, w: &Window) -> Option<bool> {
        (self.cwnd_validation == CwndValidation::Linux).then(|| self.app_limited.is_cwnd_limited(w, self.mss))
    }

    fn wants_delivery_samples(&self) -> bool {
        // HyStart++ reads an RTT on every ACK (`hystartpp::ack_rtt`).
        self.hpp.is_some()
    }

    fn on_congestion_event(&mut self, w: &mut Window, ev: CongestionEvent) {
        let mss = self.mss;
        let cwnd = (w.cwnd / mss).max(1).min(u32::MAX as u64) as u32;
        if matches!(ev, CongestionEvent::FastRetransmit(_) | CongestionEvent::Ecn(_) | CongestionEvent::Timeout { .. }) {
            // RFC 9406 §4.3: HyStart++ for the initial slow start only.
            if let Some(h) = self.hpp.as_mut() {
                h.stop();
            }
        }
        match ev {
            // tcp_init_cwnd_reduction: ssthresh from the controller, snd_cwnd_cnt = 0; the
            // recovery strategy then sets the window it repairs with.
            CongestionEvent::FastRetransmit(_) => {
                w.ssthresh = self.recalc_ssthresh(cwnd) as u64 * mss;
                self.cwnd_cnt = 0;
            }
            // tcp_enter_cwr → tcp_init_cwnd_reduction: ssthresh from `cubictcp_recalc_ssthresh`
            // (W_max updated as for a loss); the window goes to ssthresh at once (RFC 3168
            // §6.1.2), where Linux lowers it over the CWR round with PRR (`tcp_cwnd_reduction`).
            CongestionEvent::Ecn(_) => {
                w.ssthresh = self.recalc_ssthresh(cwnd) as u64 * mss;
                w.cwnd = w.ssthresh;
                self.cwnd_cnt = 0;
            }
            // tcp_enter_loss: a new ssthresh unless already in Recovery or Loss (a timeout
            // during fast recovery or a repeated one keeps it); cwnd = in_flight + 1 = one packet
            // (everything outstanding is marked lost); then TCP_CA_Loss: `bictcp_reset` (W_max,
            // delay_min and HyStart's verdict forgotten) and `bictcp_hystart_reset` (the next
            // round starts at the next ACK here, not at the expiry).
            CongestionEvent::Timeout { first, reduced_in_window, .. } => {
                if first && !reduced_in_window {
                    w.ssthresh = self.recalc_ssthresh(cwnd) as u64 * mss;
                }
                w.cwnd = mss;
                self.cwnd_cnt = 0;
                self.reset();
                self.end_seq = 0;
            }
            // A SYN timeout runs tcp_enter_loss too, but tcp_init_metrics puts ssthresh back to
            // TCP_INFINITE_SSTHRESH when the connection opens ("ssthresh may have been reduced
            // unnecessarily during 3WHS"): no change.
            CongestionEvent::SynTimeout => {}
            // tcp_init_transfer: cwnd 1 after a lost SYN or SYN-ACK (`iw_one_after` decides when).
            CongestionEvent::HandshakeLoss => w.cwnd = mss,
            CongestionEvent::IdleRestart { now, idle, rto } => match self.cwnd_validation {
                // RFC 5681 §4.1: RW = min(IW, cwnd).
                CwndValidation::Rfc5681 => w.cwnd = w.cwnd.min(self.iw * mss),
                // tcp_cwnd_restart (CA_EVENT_CWND_RESTART is ignored by CUBIC).
                CwndValidation::Linux => {
                    linux_cwnd_restart(w, self.iw * mss, mss, idle, rto);
                    self.app_limited.on_restart(now);
                }
            },
            // tcp_cwnd_validate (fired with cwnd_validation = "linux" only).
            CongestionEvent::Sent(r) => self.app_limited.on_send(w, &r, self.iw * mss, mss),
            // cubictcp_cwnd_event(CA_EVENT_TX_START): "We were application limited (idle) for a
            // while. Shift epoch_start to keep cwnd growth to cubic curve."
            CongestionEvent::TxStart { now, since, .. } => {
                let now_j = self.clock.at(now);
                let delta = now_j.saturating_sub(self.clock.at(since));
                if let Some(e) = self.epoch_start.as_mut() {
                    if delta > 0 {
                        *e = (*e + delta).min(now_j);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kernel's constants, from their definitions.
    #[test]
    fn kernel_constants() {
        assert_eq!(BETA_SCALE, 15); // 8·1741 = 13928; /3 = 4642; /307 = 15
        assert_eq!(CUBE_FACTOR, (1u64 << 40) / 410);
        assert_eq!(CUBE_FACTOR, 2_681_735_677);
        assert_eq!(CUBE_RTT_SCALE, 410);
    }

    /// `cubic_root` against exact cube roots: exact on small cubes, within one unit or 1 % on
    /// larger ones, and within the kernel's stated error over the range CUBIC uses.
    #[test]
    fn cubic_root_against_exact_cube_roots() {
        // Small arguments come from the table alone: cbrt(x) = (v[x] + 35) >> 6.
        assert_eq!(cubic_root(0), 0);
        assert_eq!(cubic_root(1), 1);
        assert_eq!(cubic_root(8), 2);
        assert_eq!(cubic_root(27), 3);
        assert_eq!(cubic_root(64), 4);
        for r in [5u64, 10, 50, 100, 500, 1000, 1234, 4096, 10_000, 100_000, 1_000_000, 2_000_000] {
            let got = cubic_root(r * r * r) as i64;
            let err = (got - r as i64).abs();
            assert!(err <= 1.max(r as i64 / 100), "cbrt({r}³) = {got}");
        }
        // K for W_max − cwnd = 29 packets (a loss at W = 100 gives cwnd 71):
        // cbrt(29·2681735677 = 77770334633) = 4268.46 exactly; the kernel's root gives 4271.
        assert_eq!(CUBE_FACTOR * 29, 77_770_334_633);
        assert_eq!(cubic_root(CUBE_FACTOR * 29), 4271);
        // Over the arguments CUBIC gives it (cube_factor·(W_max − cwnd), W_max − cwnd from 1 to
        // a million packets): within 0.2 % of the exact root, 0.03 % on average.
        let mut sum = 0.0;
        let mut n = 0.0;
        for d in (1u64..5000).chain((5000..1_000_000).step_by(997)) {
            let a = CUBE_FACTOR * d;
            let exact = (a as f64).cbrt();
            let e = (cubic_root(a) as f64 - exact).abs() / exact;
            assert!(e < 0.002, "cbrt({a}): {} vs {exact}", cubic_root(a));
            sum += e;
            n += 1.0;
        }
        assert!(sum / n < 0.0005, "mean relative error {}", sum / n);
    }
}
