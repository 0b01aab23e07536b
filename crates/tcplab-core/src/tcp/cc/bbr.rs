//! BBR v1 as Linux 6.x computes it (net/ipv4/tcp_bbr.c): a model of the path's bottleneck
//! bandwidth (a windowed max of delivery-rate samples over 10 rounds, `minmax_running_max`) and
//! its round-trip propagation time (a 10 s windowed min_rtt), driving a pacing rate
//! (`bbr_set_pacing_rate`) and a window (`bbr_set_cwnd`) through the modes STARTUP, DRAIN,
//! PROBE_BW (the 8-phase gain cycle) and PROBE_RTT, with the long-term bandwidth estimate for
//! token-bucket policers (`bbr_lt_bw_sampling`) and packet conservation in loss recovery
//! (`bbr_set_cwnd_to_recover_or_restore`).
//!
//! The kernel's integer arithmetic is kept: windows in packets, bandwidth in packets per µs
//! scaled by 2^24 (`BW_SCALE`), gains in 1/256 (`BBR_UNIT`), times in µs. It owns the window
//! (`owns_window`, the kernel's `cong_control` hook) and needs pacing (`SK_PACING_NEEDED`).
//! The min_rtt window and PROBE_RTT's 200 ms are stamped in the connection's jiffies
//! (`tcp_jiffies32`: the configuration's `hz` and `jiffy_offset`; exact nanoseconds with `hz = 0`).
//! Differences, all documented in docs/tcp.md: `rs->rtt_us` and `rs->is_ack_delayed` are the
//! kernel's (ca_rtt, timestamps included, and `FLAG_ACK_MAYBE_DELAYED`) with `rto_model =
//! "linux"`; otherwise the RTT of the newest delivered segment when it was not retransmitted,
//! and never delayed.

use super::{AckSample, CaPhase, CcModel, CongestionControl, CongestionEvent, Window};
use crate::engine::RngStream;
use crate::tcp::config::TcpConfig;
use crate::tcp::jiffies::Jiffies;
use crate::units::Time;

/// Scale of gains (`BBR_SCALE`, `BBR_UNIT`).
const BBR_SCALE: u32 = 8;
pub const BBR_UNIT: u32 = 1 << BBR_SCALE;
/// Scale of bandwidth, packets per µs (`BW_SCALE`, `BW_UNIT`).
const BW_SCALE: u32 = 24;
const BW_UNIT: u64 = 1 << BW_SCALE;
/// `CYCLE_LEN`: phases of the PROBE_BW gain cycle.
pub const CYCLE_LEN: u32 = 8;
/// `bbr_bw_rtts`: the bandwidth filter's window, in rounds.
const BW_RTTS: u32 = CYCLE_LEN + 2;
/// `bbr_min_rtt_win_sec`.
pub const MIN_RTT_WIN: Time = 10_000_000_000;
/// `bbr_probe_rtt_mode_ms`.
pub const PROBE_RTT_MODE: Time = 200_000_000;
/// `bbr_min_tso_rate`, bits per second.
const MIN_TSO_RATE: u64 = 1_200_000;
/// `bbr_pacing_margin_percent`.
const PACING_MARGIN_PERCENT: u64 = 1;
/// `bbr_high_gain` = 2/ln 2 ≈ 2.885 (739/256).
pub const HIGH_GAIN: u32 = BBR_UNIT * 2885 / 1000 + 1;
/// `bbr_drain_gain` = 1/high_gain (88/256).
pub const DRAIN_GAIN: u32 = BBR_UNIT * 1000 / 2885;
/// `bbr_cwnd_gain`.
pub const CWND_GAIN: u32 = BBR_UNIT * 2;
/// `bbr_pacing_gain[]`: probe, drain, then cruise for six phases.
pub const PACING_GAIN: [u32; 8] = [BBR_UNIT * 5 / 4, BBR_UNIT * 3 / 4, BBR_UNIT, BBR_UNIT, BBR_UNIT, BBR_UNIT, BBR_UNIT, BBR_UNIT];
/// `bbr_cycle_rand`: the random start phase is drawn from 7.
const CYCLE_RAND: u64 = 7;
/// `bbr_cwnd_min_target`, packets.
pub const CWND_MIN_TARGET: u64 = 4;
/// `bbr_full_bw_thresh` (1.25) and `bbr_full_bw_cnt`.
const FULL_BW_THRESH: u64 = BBR_UNIT as u64 * 5 / 4;
const FULL_BW_CNT: u32 = 3;
/// Long-term (policer) sampling: `bbr_lt_intvl_min_rtts`, `bbr_lt_loss_thresh` (50/256 ≈ 20 %),
/// `bbr_lt_bw_ratio` (1/8), `bbr_lt_bw_diff` (4 kbit/s in bytes), `bbr_lt_bw_max_rtts`.
const LT_INTVL_MIN_RTTS: u32 = 4;
const LT_LOSS_THRESH: u64 = 50;
const LT_BW_RATIO: u64 = BBR_UNIT as u64 / 8;
const LT_BW_DIFF: u64 = 4000 / 8;
const LT_BW_MAX_RTTS: u32 = 48;
/// ACK aggregation: `bbr_extra_acked_gain`, `bbr_extra_acked_win_rtts`,
/// `bbr_ack_epoch_acked_reset_thresh`, `bbr_extra_acked_max_us`.
const EXTRA_ACKED_GAIN: u64 = BBR_UNIT as u64;
const EXTRA_ACKED_WIN_RTTS: u32 = 5;
const ACK_EPOCH_ACKED_RESET_THRESH: u64 = 1 << 20;
const EXTRA_ACKED_MAX_US: u64 = 100 * 1000;
/// `TCP_INIT_CWND`.
const TCP_INIT_CWND: u64 = 10;
/// `GSO_LEGACY_MAX_SIZE - 1 - MAX_TCP_HEADER` (bbr_tso_segs_goal's cap; MAX_TCP_HEADER ≈ 320 on x86-64).
const TSO_GOAL_MAX_BYTES: u64 = 65536 - 1 - 320;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Ramp up sending rate rapidly to fill pipe.
    Startup,
    /// Drain any queue created during startup.
    Drain,
    /// Discover, share bandwidth: pace around estimated bandwidth.
    ProbeBw,
    /// Cut inflight to the minimum to probe min_rtt.
    ProbeRtt,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::Startup => "startup",
            Mode::Drain => "drain",
            Mode::ProbeBw => "probe_bw",
            Mode::ProbeRtt => "probe_rtt",
        }
    }
}

/// Kathleen Nichols' windowed max filter as Linux has it (lib/minmax.c): the best, second-best
/// and third-best samples of a window of `win` (here: rounds).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MinMax {
    s: [(u32, u64); 3],
}

impl MinMax {
    pub fn get(&self) -> u64 {
        self.s[0].1
    }

    /// `minmax_reset`.
    fn reset(&mut self, t: u32, v: u64) -> u64 {
        self.s = [(t, v); 3];
        v
    }

    /// `minmax_running_max`.
    pub fn running_max(&mut self, win: u32, t: u32, v: u64) -> u64 {
        let val = (t, v);
        if v >= self.s[0].1 || t.wrapping_sub(self.s[2].0) > win {
            return self.reset(t, v); // new max, or nothing left in the window
        }
        if v >= self.s[1].1 {
            self.s[2] = val;
            self.s[1] = val;
        } else if v >= self.s[2].1 {
            self.s[2] = val;
        }
        self.subwin_update(win, val)
    }

    /// `minmax_subwin_update`: age the best samples out of the window, keeping a second and
    /// third choice from the later quarters of it.
    fn subwin_update(&mut self, win: u32, val: (u32, u64)) -> u64 {
        let dt = val.0.wrapping_sub(self.s[0].0);
        if dt > win {
            self.s[0] = self.s[1];
            self.s[1] = self.s[2];
            self.s[2] = val;
            if val.0.wrapping_sub(self.s[0].0) > win {
                self.s[0] = self.s[1];
                self.s[1] = self.s[2];
                self.s[2] = val;
            }
        } else if self.s[1].0 == self.s[0].0 && dt > win / 4 {
            self.s[2] = val;
            self.s[1] = val;
        } else if self.s[2].0 == self.s[1].0 && dt > win / 2 {
            self.s[2] = val;
        }
        self.s[0].1
    }
}

/// The kernel's `struct rate_sample` as BBR reads it, in packets and µs.
#[derive(Clone, Copy, Debug, Default)]
struct Rs {
    /// Packets delivered over the interval; < 0: no valid sample.
    delivered: i64,
    interval_us: i64,
    /// `tp->delivered` (bytes here) when the sampled segment was sent.
    prior_delivered: u64,
    is_app_limited: bool,
    /// < 0: no RTT sample.
    rtt_us: i64,
    /// `rs->is_ack_delayed` (`FLAG_ACK_MAYBE_DELAYED`).
    is_ack_delayed: bool,
    losses: u64,
    acked_sacked: u64,
    prior_in_flight: u64,
}

/// BBR v1 (net/ipv4/tcp_bbr.c), `struct bbr`.
pub struct Bbr {
    mss: u64,
    rng: RngStream,
    pub mode: Mode,
    /// Max recent delivery rate, packets/µs << 24.
    bw: MinMax,
    /// Count of packet-timed rounds elapsed.
    pub rtt_cnt: u32,
    /// `tp->delivered` (bytes) at the end of the present round.
    next_rtt_delivered: u64,
    /// Time of this cycle phase start.
    cycle_mstamp: Time,
    /// Min RTT in the min_rtt window, µs (u32::MAX: none yet).
    min_rtt_us: u32,
    /// When min_rtt was last refreshed, in `clock`'s jiffies.
    min_rtt_stamp: u64,
    /// The jiffy after which PROBE_RTT's 200 ms are over (None: not yet at 4 packets).
    probe_rtt_done_stamp: Option<u64>,
    /// `tcp_jiffies32`, the clock of the two stamps above (`Jiffies::of` the configuration), its
    /// reading at `now`, and the min_rtt window and PROBE_RTT's 200 ms in its jiffies.
    clock: Jiffies,
    now_j: u64,
    min_rtt_win_j: u64,
    probe_rtt_j: u64,
    prev_ca_state: CaPhase,
    packet_conservation: bool,
    round_start: bool,
    idle_restart: bool,
    probe_rtt_round_done: bool,
    lt_is_sampling: bool,
    lt_rtt_cnt: u32,
    lt_use_bw: bool,
    lt_bw: u64,
    /// `tp->delivered`, `tp->lost` (packets) and `delivered_mstamp` (ms) at the interval's start.
    lt_last_delivered: u64,
    lt_last_stamp: u64,
    lt_last_lost: u64,
    pub pacing_gain: u32,
    pub cwnd_gain: u32,
    pub full_bw_reached: bool,
    full_bw_cnt: u32,
    pub cycle_idx: u32,
    has_seen_rtt: bool,
    /// Prior cwnd upon entering loss recovery or PROBE_RTT, packets.
    prior_cwnd: u64,
    /// Recent bw, to estimate whether the pipe is full.
    full_bw: u64,
    ack_epoch_mstamp: Time,
    extra_acked: [u64; 2],
    ack_epoch_acked: u64,
    extra_acked_win_rtts: u32,
    extra_acked_win_idx: usize,
    /// `sk_pacing_rate`, bytes per second.
    pacing_rate: u64,
    /// The sender's state at the last ACK: `tp->delivered` (packets and bytes), `tp->lost`
    /// (bytes), `tp->delivered_mstamp`, the window, in-flight packets and the departure time.
    delivered: u64,
    delivered_seq: u64,
    lost_seq: u64,
    delivered_mstamp: Time,
    cwnd: u64,
    inflight: u64,
    now: Time,
    wstamp: Time,
    app_limited_request: bool,
    /// The sender takes Linux's RTT sample on every ACK (`rto_model = "linux"`): `rs->rtt_us`
    /// is then its ca_rtt; otherwise the newest delivered segment's round trip.
    kernel_rtt: bool,
}

impl Bbr {
    /// `bbr_init`: STARTUP, an empty bandwidth filter, and `bbr_init_pacing_rate_from_rtt` with
    /// the nominal 1 ms RTT (no sample yet).
    pub fn new(cfg: &TcpConfig) -> Self {
        let mss = cfg.mss.0.max(1);
        let iw = (cfg.initial_window.bytes(mss as u32) / mss).max(1);
        let clock = Jiffies::of(cfg);
        let mut b = Bbr {
            mss,
            rng: RngStream::new(0, "tcp:bbr"),
            mode: Mode::Startup,
            bw: MinMax::default(),
            rtt_cnt: 0,
            next_rtt_delivered: 0,
            cycle_mstamp: 0,
            min_rtt_us: u32::MAX,
            min_rtt_stamp: 0,
            probe_rtt_done_stamp: None,
            clock,
            now_j: 0,
            // bbr_min_rtt_win_sec * HZ; msecs_to_jiffies(bbr_probe_rtt_mode_ms).
            min_rtt_win_j: clock.usecs_to_jiffies(MIN_RTT_WIN / 1000),
            probe_rtt_j: clock.usecs_to_jiffies(PROBE_RTT_MODE / 1000),
            prev_ca_state: CaPhase::Open,
            packet_conservation: false,
            round_start: false,
            idle_restart: false,
            probe_rtt_round_done: false,
            lt_is_sampling: false,
            lt_rtt_cnt: 0,
            lt_use_bw: false,
            lt_bw: 0,
            lt_last_delivered: 0,
            lt_last_stamp: 0,
            lt_last_lost: 0,
            pacing_gain: HIGH_GAIN,
            cwnd_gain: HIGH_GAIN,
            full_bw_reached: false,
            full_bw_cnt: 0,
            cycle_idx: 0,
            has_seen_rtt: false,
            prior_cwnd: 0,
            full_bw: 0,
            ack_epoch_mstamp: 0,
            extra_acked: [0; 2],
            ack_epoch_acked: 0,
            extra_acked_win_rtts: 0,
            extra_acked_win_idx: 0,
            pacing_rate: 0,
            delivered: 0,
            delivered_seq: 0,
            lost_seq: 0,
            delivered_mstamp: 0,
            cwnd: iw,
            inflight: 0,
            now: 0,
            wstamp: 0,
            app_limited_request: false,
            kernel_rtt: cfg.rto_model == crate::tcp::config::RtoModel::Linux,
        };
        b.init_pacing_rate_from_rtt(None);
        b
    }

    fn pkts(&self, bytes: u64) -> u64 {
        bytes.div_ceil(self.mss)
    }

    /// `bbr_max_bw`.
    pub fn max_bw(&self) -> u64 {
        self.bw.get()
    }

    /// `bbr_bw`: the long-term rate when policed, else the windowed max.
    pub fn bw(&self) -> u64 {
        if self.lt_use_bw {
            self.lt_bw
        } else {
            self.max_bw()
        }
    }

    /// min_rtt in µs, if sampled.
    pub fn min_rtt_us(&self) -> Option<u32> {
        (self.min_rtt_us != u32::MAX).then_some(self.min_rtt_us)
    }

    /// `bbr_extra_acked`.
    fn extra_acked(&self) -> u64 {
        self.extra_acked[0].max(self.extra_acked[1])
    }

    /// `bbr_rate_bytes_per_sec`: packets/µs << 24 with a gain, to bytes per second, 1 % below.
    pub fn rate_bytes_per_sec(&self, rate: u64, gain: u32) -> u64 {
        let r = rate as u128 * self.mss as u128 * gain as u128 >> BBR_SCALE;
        let r = r * (1_000_000 / 100 * (100 - PACING_MARGIN_PERCENT)) as u128;
        (r >> BW_SCALE) as u64
    }

    /// `bbr_init_pacing_rate_from_rtt`: high_gain · cwnd / srtt (1 ms before any sample).
    fn init_pacing_rate_from_rtt(&mut self, srtt: Option<Time>) {
        let rtt_us = match srtt {
            Some(s) => {
                self.has_seen_rtt = true;
                (s / 1000).max(1)
            }
            None => 1000,
        };
        let bw = self.cwnd * BW_UNIT / rtt_us;
        self.pacing_rate = self.rate_bytes_per_sec(bw, HIGH_GAIN);
    }

    /// `bbr_set_pacing_rate`: raise it freely, lower it only once the pipe is full.
    fn set_pacing_rate(&mut self, bw: u64, gain: u32, srtt: Option<Time>) {
        let rate = self.rate_bytes_per_sec(bw, gain);
        if !self.has_seen_rtt && srtt.is_some() {
            self.init_pacing_rate_from_rtt(srtt);
        }
        if self.full_bw_reached || rate > self.pacing_rate {
            self.pacing_rate = rate;
        }
    }

    /// `bbr_min_tso_segs`.
    fn min_tso(&self) -> u64 {
        if self.pacing_rate < MIN_TSO_RATE >> 3 {
            1
        } else {
            2
        }
    }

    /// `bbr_tso_segs_goal`: ~1 ms of data at the pacing rate, at least `bbr_min_tso_segs`.
    pub fn tso_segs_goal(&self) -> u64 {
        let bytes = (self.pacing_rate >> crate::tcp::pacing::PACING_SHIFT).min(TSO_GOAL_MAX_BYTES);
        (bytes / self.mss).max(self.min_tso()).min(0x7F)
    }

    /// `bbr_save_cwnd`: the last known good cwnd, to restore after loss recovery or PROBE_RTT.
    fn save_cwnd(&mut self) {
        if self.prev_ca_state < CaPhase::Recovery && self.mode != Mode::ProbeRtt {
            self.prior_cwnd = self.cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(self.cwnd);
        }
    }

    /// `bbr_bdp`: ⌈bw · min_rtt · gain⌉ packets (TCP_INIT_CWND before an RTT sample).
    pub fn bdp(&self, bw: u64, gain: u32) -> u64 {
        if self.min_rtt_us == u32::MAX {
            return TCP_INIT_CWND;
        }
        let w = bw as u128 * self.min_rtt_us as u128;
        (((w * gain as u128) >> BBR_SCALE) as u64 + BW_UNIT - 1) / BW_UNIT
    }

    /// `bbr_quantization_budget`: three skbs more, rounded up to even, and 2 more in the probing
    /// phase of PROBE_BW.
    pub fn quantization_budget(&self, cwnd: u64) -> u64 {
        let mut cwnd = cwnd + 3 * self.tso_segs_goal();
        cwnd = (cwnd + 1) & !1;
        if self.mode == Mode::ProbeBw && self.cycle_idx == 0 {
            cwnd += 2;
        }
        cwnd
    }

    /// `bbr_inflight`.
    pub fn inflight(&self, bw: u64, gain: u32) -> u64 {
        self.quantization_budget(self.bdp(bw, gain))
    }

    /// `bbr_packets_in_net_at_edt`: in-flight packets less what the path delivers before the next
    /// departure, plus that departing skb when the gain is increasing in-flight.
    fn packets_in_net_at_edt(&self, inflight_now: u64) -> u64 {
        let edt = self.wstamp.max(self.now);
        let interval_us = (edt - self.now) / 1000;
        let interval_delivered = (self.bw() as u128 * interval_us as u128 >> BW_SCALE) as u64;
        let mut at_edt = inflight_now;
        if self.pacing_gain > BBR_UNIT {
            at_edt += self.tso_segs_goal();
        }
        at_edt.saturating_sub(interval_delivered)
    }

    /// `bbr_ack_aggregation_cwnd`.
    fn ack_aggregation_cwnd(&self) -> u64 {
        if EXTRA_ACKED_GAIN > 0 && self.full_bw_reached {
            let max_aggr = self.bw() * EXTRA_ACKED_MAX_US / BW_UNIT;
            ((EXTRA_ACKED_GAIN * self.extra_acked()) >> BBR_SCALE).min(max_aggr)
        } else {
            0
        }
    }

    /// `bbr_set_cwnd_to_recover_or_restore`: deduct losses; on entering recovery, packet
    /// conservation for a round (cwnd = in flight + acked); on leaving it, restore the prior cwnd.
    fn set_cwnd_to_recover_or_restore(&mut self, rs: &Rs, acked: u64, state: CaPhase, cwnd_in: u64) -> (bool, u64) {
        let prev = self.prev_ca_state;
        let mut cwnd = cwnd_in;
        if rs.losses > 0 {
            cwnd = cwnd.saturating_sub(rs.losses).max(1);
        }
        if state == CaPhase::Recovery && prev != CaPhase::Recovery {
            self.packet_conservation = true;
            self.next_rtt_delivered = self.delivered_seq; // start round now
            cwnd = self.inflight + acked;
        } else if prev >= CaPhase::Recovery && state < CaPhase::Recovery {
            cwnd = cwnd.max(self.prior_cwnd);
            self.packet_conservation = false;
        }
        self.prev_ca_state = state;
        if self.packet_conservation {
            return (true, cwnd.max(self.inflight + acked));
        }
        (false, cwnd)
    }

    /// `bbr_set_cwnd`: slow-start toward gain·BDP + aggregation + quantization budget (only
    /// cut once the pipe is full), at least 4 packets, and 4 in PROBE_RTT.
    fn set_cwnd(&mut self, rs: &Rs, acked: u64, bw: u64, gain: u32, state: CaPhase) {
        let mut cwnd = self.cwnd;
        if acked > 0 {
            let (conserving, c) = self.set_cwnd_to_recover_or_restore(rs, acked, state, cwnd);
            cwnd = c;
            if !conserving {
                let mut target = self.bdp(bw, gain);
                target += self.ack_aggregation_cwnd();
                target = self.quantization_budget(target);
                if self.full_bw_reached {
                    cwnd = (cwnd + acked).min(target);
                } else if cwnd < target || self.delivered < TCP_INIT_CWND {
                    cwnd += acked;
                }
                cwnd = cwnd.max(CWND_MIN_TARGET);
            }
        }
        self.cwnd = cwnd;
        if self.mode == Mode::ProbeRtt {
            self.cwnd = self.cwnd.min(CWND_MIN_TARGET);
        }
    }

    /// `bbr_is_next_cycle_phase`.
    fn is_next_cycle_phase(&self, rs: &Rs) -> bool {
        let is_full_length = self.delivered_mstamp.saturating_sub(self.cycle_mstamp) / 1000 > self.min_rtt_us as u64;
        if self.pacing_gain == BBR_UNIT {
            return is_full_length;
        }
        let inflight = self.packets_in_net_at_edt(rs.prior_in_flight);
        let bw = self.max_bw();
        if self.pacing_gain > BBR_UNIT {
            return is_full_length && (rs.losses > 0 || inflight >= self.inflight(bw, self.pacing_gain));
        }
        is_full_length || inflight <= self.inflight(bw, BBR_UNIT)
    }

    /// `bbr_advance_cycle_phase`.
    fn advance_cycle_phase(&mut self) {
        self.cycle_idx = (self.cycle_idx + 1) & (CYCLE_LEN - 1);
        self.cycle_mstamp = self.delivered_mstamp;
    }

    /// `bbr_update_cycle_phase`.
    fn update_cycle_phase(&mut self, rs: &Rs) {
        if self.mode == Mode::ProbeBw && self.is_next_cycle_phase(rs) {
            self.advance_cycle_phase();
        }
    }

    /// `bbr_reset_probe_bw_mode`: a random start phase other than the draining one,
    /// `CYCLE_LEN - 1 - get_random_u32_below(bbr_cycle_rand)`, then advanced.
    fn reset_probe_bw_mode(&mut self) {
        self.mode = Mode::ProbeBw;
        let r = (self.rng.next_u64() % CYCLE_RAND) as u32;
        self.cycle_idx = CYCLE_LEN - 1 - r;
        self.advance_cycle_phase();
    }

    /// `bbr_reset_mode`.
    fn reset_mode(&mut self) {
        if !self.full_bw_reached {
            self.mode = Mode::Startup;
        } else {
            self.reset_probe_bw_mode();
        }
    }

    /// `bbr_reset_lt_bw_sampling_interval`.
    fn reset_lt_bw_sampling_interval(&mut self) {
        self.lt_last_stamp = self.delivered_mstamp / 1_000_000;
        self.lt_last_delivered = self.delivered;
        self.lt_last_lost = self.pkts(self.lost_seq);
        self.lt_rtt_cnt = 0;
    }

    /// `bbr_reset_lt_bw_sampling`.
    fn reset_lt_bw_sampling(&mut self) {
        self.lt_bw = 0;
        self.lt_use_bw = false;
        self.lt_is_sampling = false;
        self.reset_lt_bw_sampling_interval();
    }

    /// `bbr_lt_bw_interval_done`: two consistent lossy intervals mean a policer: use their mean.
    fn lt_bw_interval_done(&mut self, bw: u64) {
        if self.lt_bw > 0 {
            let diff = bw.abs_diff(self.lt_bw);
            if diff * BBR_UNIT as u64 <= LT_BW_RATIO * self.lt_bw || self.rate_bytes_per_sec(diff, BBR_UNIT) <= LT_BW_DIFF {
                self.lt_bw = (bw + self.lt_bw) >> 1;
                self.lt_use_bw = true;
                self.pacing_gain = BBR_UNIT;
                self.lt_rtt_cnt = 0;
                return;
            }
        }
        self.lt_bw = bw;
        self.reset_lt_bw_sampling_interval();
    }

    /// `bbr_lt_bw_sampling`: token-bucket policer detection.
    fn lt_bw_sampling(&mut self, rs: &Rs) {
        if self.lt_use_bw {
            if self.mode == Mode::ProbeBw && self.round_start {
                self.lt_rtt_cnt += 1;
                if self.lt_rtt_cnt >= LT_BW_MAX_RTTS {
                    self.reset_lt_bw_sampling();
                    self.reset_probe_bw_mode();
                }
            }
            return;
        }
        // Wait for the first loss before sampling, to let the policer exhaust its tokens.
        if !self.lt_is_sampling {
            if rs.losses == 0 {
                return;
            }
            self.reset_lt_bw_sampling_interval();
            self.lt_is_sampling = true;
        }
        if rs.is_app_limited {
            self.reset_lt_bw_sampling();
            return;
        }
        if self.round_start {
            self.lt_rtt_cnt += 1;
        }
        if self.lt_rtt_cnt < LT_INTVL_MIN_RTTS {
            return;
        }
        if self.lt_rtt_cnt > 4 * LT_INTVL_MIN_RTTS {
            self.reset_lt_bw_sampling();
            return;
        }
        if rs.losses == 0 {
            return;
        }
        let lost = self.pkts(self.lost_seq).saturating_sub(self.lt_last_lost);
        let delivered = self.delivered.saturating_sub(self.lt_last_delivered);
        if delivered == 0 || (lost << BBR_SCALE) < LT_LOSS_THRESH * delivered {
            return;
        }
        let t = (self.delivered_mstamp / 1_000_000) as i64 - self.lt_last_stamp as i64;
        if t < 1 {
            return;
        }
        let t = t as u64 * 1000;
        let bw = delivered * BW_UNIT / t;
        self.lt_bw_interval_done(bw);
    }

    /// `bbr_update_bw`: count rounds by `delivered`, sample the delivery rate into the max filter
    /// (an application-limited sample only if it does not lower it).
    fn update_bw(&mut self, rs: &Rs) {
        self.round_start = false;
        if rs.delivered < 0 || rs.interval_us <= 0 {
            return;
        }
        if rs.prior_delivered >= self.next_rtt_delivered {
            self.next_rtt_delivered = self.delivered_seq;
            self.rtt_cnt += 1;
            self.round_start = true;
            self.packet_conservation = false;
        }
        self.lt_bw_sampling(rs);
        let bw = rs.delivered as u64 * BW_UNIT / rs.interval_us as u64;
        if !rs.is_app_limited || bw >= self.max_bw() {
            self.bw.running_max(BW_RTTS, self.rtt_cnt, bw);
        }
    }

    /// `bbr_update_ack_aggregation`.
    fn update_ack_aggregation(&mut self, rs: &Rs) {
        if EXTRA_ACKED_GAIN == 0 || rs.acked_sacked == 0 || rs.delivered < 0 || rs.interval_us <= 0 {
            return;
        }
        if self.round_start {
            self.extra_acked_win_rtts = (self.extra_acked_win_rtts + 1).min(0x1F);
            if self.extra_acked_win_rtts >= EXTRA_ACKED_WIN_RTTS {
                self.extra_acked_win_rtts = 0;
                self.extra_acked_win_idx ^= 1;
                self.extra_acked[self.extra_acked_win_idx] = 0;
            }
        }
        let epoch_us = self.delivered_mstamp.saturating_sub(self.ack_epoch_mstamp) / 1000;
        let mut expected = self.bw() * epoch_us / BW_UNIT;
        if self.ack_epoch_acked <= expected || self.ack_epoch_acked + rs.acked_sacked >= ACK_EPOCH_ACKED_RESET_THRESH {
            self.ack_epoch_acked = 0;
            self.ack_epoch_mstamp = self.delivered_mstamp;
            expected = 0;
        }
        self.ack_epoch_acked = (self.ack_epoch_acked + rs.acked_sacked).min(0xFFFFF);
        let extra = (self.ack_epoch_acked - expected).min(self.cwnd);
        if extra > self.extra_acked[self.extra_acked_win_idx] {
            self.extra_acked[self.extra_acked_win_idx] = extra;
        }
    }

    /// `bbr_check_full_bw_reached`: three rounds without 25 % growth of the max bandwidth.
    fn check_full_bw_reached(&mut self, rs: &Rs) {
        if self.full_bw_reached || !self.round_start || rs.is_app_limited {
            return;
        }
        let thresh = self.full_bw * FULL_BW_THRESH >> BBR_SCALE;
        if self.max_bw() >= thresh {
            self.full_bw = self.max_bw();
            self.full_bw_cnt = 0;
            return;
        }
        self.full_bw_cnt += 1;
        self.full_bw_reached = self.full_bw_cnt >= FULL_BW_CNT;
    }

    /// `bbr_check_drain`: STARTUP → DRAIN once the pipe is full (ssthresh = BDP-based inflight);
    /// DRAIN → PROBE_BW once the packets in the network at the next departure fit one BDP.
    fn check_drain(&mut self, w: &mut Window) {
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
            w.ssthresh = self.inflight(self.max_bw(), BBR_UNIT) * self.mss;
        }
        if self.mode == Mode::Drain && self.packets_in_net_at_edt(self.inflight) <= self.inflight(self.max_bw(), BBR_UNIT) {
            self.reset_probe_bw_mode();
        }
    }

    /// `bbr_check_probe_rtt_done`: after 200 ms (and a round) at 4 packets, restore the cwnd.
    fn check_probe_rtt_done(&mut self) {
        let now = self.now_j;
        if !self.probe_rtt_done_stamp.is_some_and(|d| now > d) {
            return;
        }
        self.min_rtt_stamp = now; // wait a while until PROBE_RTT
        self.cwnd = self.cwnd.max(self.prior_cwnd);
        self.reset_mode();
    }

    /// `bbr_update_min_rtt`: the 10 s min_rtt window, and PROBE_RTT when it expires.
    fn update_min_rtt(&mut self, rs: &Rs) {
        // after(tcp_jiffies32, min_rtt_stamp + bbr_min_rtt_win_sec * HZ)
        let now = self.now_j;
        let filter_expired = now > self.min_rtt_stamp + self.min_rtt_win_j;
        // An expired window takes the next sample unless it may include a delayed ACK.
        if rs.rtt_us >= 0 && ((rs.rtt_us as u64) < self.min_rtt_us as u64 || (filter_expired && !rs.is_ack_delayed)) {
            self.min_rtt_us = rs.rtt_us.min(u32::MAX as i64 - 1) as u32;
            self.min_rtt_stamp = now;
        }
        if filter_expired && !self.idle_restart && self.mode != Mode::ProbeRtt {
            self.mode = Mode::ProbeRtt; // dip, drain queue
            self.save_cwnd();
            self.probe_rtt_done_stamp = None;
        }
        if self.mode == Mode::ProbeRtt {
            // Ignore low-rate samples during this mode.
            self.app_limited_request = true;
            if self.probe_rtt_done_stamp.is_none() && self.inflight <= CWND_MIN_TARGET {
                // tcp_jiffies32 + msecs_to_jiffies(bbr_probe_rtt_mode_ms)
                self.probe_rtt_done_stamp = Some(now + self.probe_rtt_j);
                self.probe_rtt_round_done = false;
                self.next_rtt_delivered = self.delivered_seq;
            } else if self.probe_rtt_done_stamp.is_some() {
                if self.round_start {
                    self.probe_rtt_round_done = true;
                }
                if self.probe_rtt_round_done {
                    self.check_probe_rtt_done();
                }
            }
        }
        if rs.delivered > 0 {
            self.idle_restart = false;
        }
    }

    /// `bbr_update_gains`.
    fn update_gains(&mut self) {
        (self.pacing_gain, self.cwnd_gain) = match self.mode {
            Mode::Startup => (HIGH_GAIN, HIGH_GAIN),
            Mode::Drain => (DRAIN_GAIN, HIGH_GAIN),
            Mode::ProbeBw => (if self.lt_use_bw { BBR_UNIT } else { PACING_GAIN[self.cycle_idx as usize] }, CWND_GAIN),
            Mode::ProbeRtt => (BBR_UNIT, BBR_UNIT),
        };
    }

    /// The kernel's rate sample from the ACK.
    fn rate_sample(&mut self, a: &AckSample) -> Rs {
        let mut rs = Rs { delivered: -1, interval_us: -1, rtt_us: -1, ..Default::default() };
        if let Some(r) = a.rate {
            rs.delivered = self.pkts(r.delivered) as i64;
            rs.interval_us = (r.interval / 1000) as i64;
            rs.prior_delivered = r.prior_delivered;
            rs.is_app_limited = r.app_limited;
        }
        if self.kernel_rtt {
            // `tcp_ack_update_rtt`: rs->rtt_us = ca_rtt_us, the newest (S)ACKed record never
            // retransmitted, or the TSecr's whole milliseconds when only the timestamp measures
            // (`tcp_rtt_tsopt_us`, which can read below the path's true round trip); -1 without
            // a sample (`SenderCore::linux_ack_rtt`).
            if let Some(r) = a.rtt {
                rs.rtt_us = (r / 1000) as i64;
            }
            rs.is_ack_delayed = a.ack_maybe_delayed;
        } else if let Some(k) = a.rack.filter(|k| !k.retransmitted) {
            rs.rtt_us = (a.now.saturating_sub(k.xmit_ts) / 1000) as i64;
        }
        rs.losses = self.pkts(a.lost.saturating_sub(self.lost_seq));
        // `tcp_rate_gen`: "freshly ACKed or SACKed", the change of tp->delivered: a cumulative
        // ACK over data SACKed earlier delivers none of it again.
        rs.acked_sacked = self.pkts(a.delivered_seq.saturating_sub(self.delivered_seq));
        rs.prior_in_flight = self.pkts(a.prior_pipe);
        rs
    }
}

impl CongestionControl for Bbr {
    fn name(&self) -> &'static str {
        "bbr"
    }

    /// `bbr_undo_cwnd`: "full_bw = 0; full_bw_cnt = 0; bbr_reset_lt_bw_sampling(sk); return
    /// tcp_snd_cwnd(tp)": the window stays (BBR sets it itself), the full-pipe test and the
    /// policer detector start over.
    fn undo_cwnd(&mut self, w: &Window, _prior_cwnd: u64) -> u64 {
        self.full_bw = 0;
        self.full_bw_cnt = 0;
        self.reset_lt_bw_sampling();
        w.cwnd
    }

    /// `bbr_main`: update the model (`bbr_update_model`), then the pacing rate and the window.
    fn on_ack(&mut self, w: &mut Window, a: &AckSample) {
        self.now = a.now;
        self.now_j = self.clock.at(a.now);
        self.wstamp = a.wstamp;
        self.cwnd = (w.cwnd / self.mss).max(1);
        let rs = self.rate_sample(a);
        self.lost_seq = a.lost;
        if a.delivered_seq > self.delivered_seq {
            self.delivered_mstamp = a.now;
        }
        self.delivered_seq = a.delivered_seq;
        self.delivered = self.pkts(a.delivered_seq);
        self.inflight = self.pkts(a.pipe);
        // bbr_update_model
        self.update_bw(&rs);
        self.update_ack_aggregation(&rs);
        self.update_cycle_phase(&rs);
        self.check_full_bw_reached(&rs);
        self.check_drain(w);
        self.update_min_rtt(&rs);
        self.update_gains();
        let bw = self.bw();
        self.set_pacing_rate(bw, self.pacing_gain, a.srtt);
        self.set_cwnd(&rs, rs.acked_sacked, bw, self.cwnd_gain, a.ca);
        w.cwnd = self.cwnd * self.mss;
    }

    /// `bbr_init` at `tcp_init_transfer`: min_rtt from the handshake's sample
    /// (`tcp_min_rtt(tp)`), stamped now, so the first PROBE_RTT comes 10 s after the connection
    /// opened (not after the first data ACK); the pacing rate from the handshake's srtt
    /// (`bbr_init_pacing_rate_from_rtt`: high_gain · cwnd / srtt) rather than the nominal 1 ms
    /// (the initial window itself leaves unpaced: `tcp_update_skb_after_send` paces from the
    /// 10th data segment on).
    fn on_established(&mut self, w: &mut Window, now: Time, srtt: Option<Time>, min_rtt: Option<Time>) {
        self.now = now;
        self.now_j = self.clock.at(now);
        self.cwnd = (w.cwnd / self.mss).max(1);
        self.min_rtt_us = min_rtt.map_or(u32::MAX, |m| (m / 1000).min(u32::MAX as u64 - 1) as u32);
        self.min_rtt_stamp = self.now_j;
        self.has_seen_rtt = false;
        self.init_pacing_rate_from_rtt(srtt);
    }

    fn on_congestion_event(&mut self, w: &mut Window, ev: CongestionEvent) {
        self.cwnd = (w.cwnd / self.mss).max(1);
        match ev {
            // `bbr_ssthresh` on entering recovery: save cwnd, ssthresh unchanged; the window is
            // set on this ACK by packet conservation (`bbr_set_cwnd_to_recover_or_restore`).
            CongestionEvent::FastRetransmit(_) => self.save_cwnd(),
            // ECN-Echo: `tcp_enter_cwr` → `tcp_init_cwnd_reduction` asks `bbr_ssthresh`, which
            // only saves cwnd; BBR v1 does not react to CE (its window is its model's).
            CongestionEvent::Ecn(_) => self.save_cwnd(),
            // `tcp_enter_loss`: ssthresh (`bbr_ssthresh`, first expiry), cwnd = in flight + 1 = 1
            // packet; `bbr_set_state(TCP_CA_Loss)`: a round ends, full_bw is forgotten and the
            // policer sampler sees a loss.
            CongestionEvent::Timeout { first, .. } => {
                if first {
                    self.save_cwnd();
                }
                self.cwnd = 1;
                w.cwnd = self.mss;
                self.prev_ca_state = CaPhase::Loss;
                self.full_bw = 0;
                self.round_start = true;
                let rs = Rs { losses: 1, ..Default::default() };
                self.lt_bw_sampling(&rs);
            }
            // `tcp_init_transfer`: a retransmitted SYN leaves one packet of window.
            CongestionEvent::HandshakeLoss => w.cwnd = self.mss,
            // `bbr_cwnd_event(CA_EVENT_TX_START)` while application-limited.
            CongestionEvent::TxStart { now, app_limited: true, .. } => {
                self.idle_restart = true;
                self.ack_epoch_mstamp = now;
                self.ack_epoch_acked = 0;
                self.now = now;
                self.now_j = self.clock.at(now);
                if self.mode == Mode::ProbeBw {
                    self.set_pacing_rate(self.bw(), BBR_UNIT, None);
                } else if self.mode == Mode::ProbeRtt {
                    self.check_probe_rtt_done();
                    w.cwnd = self.cwnd * self.mss;
                }
            }
            // `tcp_slow_start_after_idle_check` returns early for a `cong_control` controller;
            // a SYN timeout, an idle send and `tcp_cwnd_validate` change nothing of BBR's.
            CongestionEvent::TxStart { .. } | CongestionEvent::IdleRestart { .. } | CongestionEvent::SynTimeout | CongestionEvent::Sent(_) => {}
        }
    }

    /// BBR decides the window in recovery itself (packet conservation): the recovery strategy's
    /// window is not taken.
    fn set_recovery_window(&mut self, _w: &mut Window, _cwnd: u64) {}

    fn pacing_rate(&self, _w: &Window) -> Option<u64> {
        Some(self.pacing_rate)
    }

    fn needs_pacing(&self) -> bool {
        true
    }

    fn owns_window(&self) -> bool {
        true
    }

    fn wants_delivery_samples(&self) -> bool {
        true
    }

    fn take_app_limited_request(&mut self) -> bool {
        std::mem::take(&mut self.app_limited_request)
    }

    fn seed(&mut self, seed: u64, name: &str) {
        self.rng = RngStream::new(seed, &format!("{name}:bbr"));
    }

    fn min_tso_segs(&self, _rate: u64) -> u32 {
        self.min_tso() as u32
    }

    fn model(&self) -> Option<CcModel> {
        Some(CcModel {
            mode: self.mode.name(),
            // bbr_get_info: bw · mss · USEC_PER_SEC >> BW_SCALE.
            bw: (self.bw() as u128 * self.mss as u128 * 1_000_000 >> BW_SCALE) as u64,
            min_rtt: self.min_rtt_us().map(|u| u as Time * 1000),
            pacing_gain: self.pacing_gain,
            cwnd_gain: self.cwnd_gain,
            cycle_idx: self.cycle_idx,
            round: self.rtt_cnt,
            inflight_target: self.inflight(self.max_bw(), BBR_UNIT),
            lt_use_bw: self.lt_use_bw,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gains_are_the_kernels() {
        assert_eq!((HIGH_GAIN, DRAIN_GAIN, CWND_GAIN), (739, 88, 512));
        assert_eq!(PACING_GAIN, [320, 192, 256, 256, 256, 256, 256, 256]);
    }

    /// `tcp_rate_gen`: `rs->acked_sacked` is the change of `tp->delivered`, so a cumulative ACK
    /// over data SACKed before counts only what it newly delivers; entering recovery on it,
    /// `bbr_set_cwnd_to_recover_or_restore` sets cwnd = packets in flight + that.
    #[test]
    fn a_cumulative_ack_over_sacked_data_adds_only_what_it_newly_delivers() {
        let mut cfg = TcpConfig::rfc();
        cfg.mss = crate::units::Size(1000);
        let mut b = Bbr::new(&cfg);
        let mut w = Window { cwnd: 100_000, ssthresh: u64::MAX };
        // 50 packets SACKed above a hole (still open).
        b.on_ack(&mut w, &AckSample { now: 1_000_000, sacked: 50_000, delivered_seq: 50_000, pipe: 40_000, prior_pipe: 90_000, ..Default::default() });
        // The hole's retransmission arrives: the cumulative ACK covers it and the 50 SACKed
        // packets (51 packets acknowledged, 1 newly delivered), and recovery starts on this ACK.
        let a = AckSample { now: 2_000_000, acked: 51_000, delivered_seq: 51_000, pipe: 30_000, prior_pipe: 31_000, ca: CaPhase::Recovery, ..Default::default() };
        b.on_ack(&mut w, &a);
        assert_eq!(w.cwnd, 31 * 1000, "in flight (30) + newly delivered (1), not + 51");
    }

    /// `bbr_cwnd_event(CA_EVENT_TX_START)` while application-limited, in PROBE_BW: idle_restart,
    /// and the pacing rate at gain 1 (`bbr_set_pacing_rate(sk, bbr_bw(sk), BBR_UNIT)`), whatever
    /// the cycle's phase (here 5/4).
    #[test]
    fn a_restart_from_idle_in_probe_bw_paces_at_gain_1() {
        let mut cfg = TcpConfig::rfc();
        cfg.mss = crate::units::Size(1000);
        let mut b = Bbr::new(&cfg);
        (b.mode, b.full_bw_reached, b.cycle_idx, b.pacing_gain) = (Mode::ProbeBw, true, 0, PACING_GAIN[0]);
        b.bw.reset(1, 20_971); // 1.25 packets/ms in packets/µs << 24: 10 Mb/s of 1000-byte packets
        b.pacing_rate = b.rate_bytes_per_sec(b.bw(), b.pacing_gain);
        let probing = b.pacing_rate;
        let mut w = Window { cwnd: 50_000, ssthresh: u64::MAX };
        b.on_congestion_event(&mut w, CongestionEvent::TxStart { now: 5_000_000_000, since: 1_000_000_000, app_limited: true });
        assert!(b.idle_restart);
        assert_eq!(b.pacing_rate, b.rate_bytes_per_sec(b.bw(), BBR_UNIT));
        assert!(b.pacing_rate * 5 / 4 <= probing + 1, "{} then {probing}", b.pacing_rate);
    }

    /// `bbr_update_min_rtt`: once the 10 s window has expired, the next sample replaces min_rtt
    /// even when higher, unless it may include a delayed ACK (`rs->is_ack_delayed`); PROBE_RTT
    /// is entered either way.
    #[test]
    fn an_expired_min_rtt_skips_a_sample_that_may_include_a_delayed_ack() {
        let mut cfg = TcpConfig::rfc();
        cfg.mss = crate::units::Size(1000);
        cfg.rto_model = crate::tcp::config::RtoModel::Linux;
        for delayed in [true, false] {
            let mut b = Bbr::new(&cfg);
            (b.mode, b.full_bw_reached, b.min_rtt_us, b.min_rtt_stamp) = (Mode::ProbeBw, true, 40_000, 0);
            let mut w = Window { cwnd: 50_000, ssthresh: u64::MAX };
            let a = AckSample { now: MIN_RTT_WIN + 1_000_000, acked: 500, delivered_seq: 500, rtt: Some(80_000_000), ack_maybe_delayed: delayed, ..Default::default() };
            b.on_ack(&mut w, &a);
            assert_eq!(b.min_rtt_us, if delayed { 40_000 } else { 80_000 }, "delayed {delayed}");
            assert_eq!(b.mode, Mode::ProbeRtt);
        }
    }

    #[test]
    fn running_max_forgets_samples_older_than_the_window() {
        let mut m = MinMax::default();
        m.running_max(10, 0, 100);
        m.running_max(10, 3, 80);
        m.running_max(10, 6, 60);
        assert_eq!(m.get(), 100);
        // Round 11: the max from round 0 is out of the 10-round window; 80 (round 3) is next.
        assert_eq!(m.running_max(10, 11, 50), 80);
        assert_eq!(m.running_max(10, 30, 10), 10, "nothing left in the window: reset");
    }
}
