//! Pacing as Linux does it inside TCP (no fq qdisc): the pacing rate of `tcp_update_pacing_rate`
//! (net/ipv4/tcp_input.c), the earliest departure time of the next send (`tcp_wstamp_ns`, advanced
//! by `tcp_update_skb_after_send`, net/ipv4/tcp_output.c) and the TSO burst a send may make at once
//! (`tcp_tso_autosize`). The send gate (`SenderCore::send_gate`) asks `Pacer::may_send` when the
//! connection paces (the controller asks for it, Linux's `SK_PACING_NEEDED`, or the `pacing` knob);
//! a held send waits for the pacing timer (`TimerKind::Pacing`, Linux's `tcp_pacing_check` and its
//! hrtimer).
//!
//! Under the fq qdisc (`net/fq.rs`) the socket's `sk_pacing_status` is `SK_PACING_FQ`: the gate
//! no longer holds sends, each segment leaves stamped with its departure time and fq holds it.
//!
//! Not modelled: TSQ (`tcp_small_queue_check`), the timer
//! slack of the hrtimer and `sk_pacing_shift` changes by drivers. A skb of several segments
//! leaves as back-to-back segments at one instant. TSO deferral (`tcp_tso_should_defer`), which
//! reads `tso_autosize`, is `tso.rs`.
//!
//! This module imports nothing of the sender, so no circle.

use crate::units::Time;

/// `sysctl_tcp_pacing_ss_ratio`: 200 % of cwnd/srtt while in slow start (cwnd < ssthresh/2).
pub const PACING_SS_RATIO: u64 = 200;
/// `sysctl_tcp_pacing_ca_ratio`: 120 % otherwise.
pub const PACING_CA_RATIO: u64 = 120;
/// `sk_pacing_shift` (include/net/sock.h, `SK_DEFAULT_PACING_SHIFT`): a skb holds about
/// rate >> 10 bytes, ~1 ms of data.
pub const PACING_SHIFT: u32 = 10;
/// `sysctl_tcp_min_tso_segs`.
pub const MIN_TSO_SEGS: u32 = 2;
/// `sysctl_tcp_tso_rtt_log`: min_rtt (µs) >> 9 adds gso_max_size >> that to the skb on short paths.
pub const TSO_RTT_LOG: u32 = 9;
/// `GSO_LEGACY_MAX_SIZE`, the default `sk_gso_max_size`.
pub const GSO_MAX_SIZE: u64 = 65536;
/// `tcp_update_skb_after_send` paces only once `tp->data_segs_out >= 10`, counting the skb it
/// paces.
pub const UNPACED_SEGS: u64 = 10;

/// Linux's `tcp_update_pacing_rate`: rate = mss · max(cwnd, packets_out) / srtt, times
/// `tcp_pacing_ss_ratio` (200 %) while cwnd < ssthresh / 2 (slow start) and
/// `tcp_pacing_ca_ratio` (120 %) otherwise; bytes per second. `None` without an RTT sample
/// (Linux then leaves `sk_pacing_rate` unlimited: nothing to pace at). Windows in packets.
pub fn linux_pacing_rate(mss: u64, cwnd: u64, ssthresh: u64, packets_out: u64, srtt: Option<Time>) -> Option<u64> {
    let srtt = srtt.filter(|&s| s > 0)?;
    // "current rate is (cwnd * mss) / srtt; In Slow Start [1], set sk_pacing_rate to 200 % the
    // current rate; In Congestion Avoidance phase, set it to 120 % the current rate."
    let ratio = if cwnd < ssthresh / 2 { PACING_SS_RATIO } else { PACING_CA_RATIO };
    let rate = mss as u128 * ratio as u128 * cwnd.max(packets_out) as u128 * 10_000_000 / srtt as u128;
    Some(rate.min(u64::MAX as u128) as u64)
}

/// Linux's `tcp_tso_autosize` (net/ipv4/tcp_output.c): the segments one skb holds at this pacing
/// rate: rate >> `sk_pacing_shift` bytes (~1 ms), plus gso_max_size >> (min_rtt_us >> 9) on short
/// paths, at most gso_max_size, at least `min_tso_segs`.
pub fn tso_autosize(rate: u64, mss: u64, min_rtt: Option<Time>, min_tso_segs: u32) -> u32 {
    let mut bytes = rate >> PACING_SHIFT;
    // tcp_min_rtt() is ~0U before a sample: no bonus then.
    if let Some(r) = min_rtt.map(|m| (m / 1000) >> TSO_RTT_LOG) {
        if r < 32 {
            bytes += GSO_MAX_SIZE >> r;
        }
    }
    let bytes = bytes.min(GSO_MAX_SIZE);
    ((bytes / mss.max(1)) as u32).max(min_tso_segs)
}

/// The departure-time state of a paced connection (Linux's `tcp_wstamp_ns` and the skb being
/// formed).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pacer {
    /// `tcp_wstamp_ns`: the earliest time the next skb may leave.
    pub next: Time,
    /// When the present skb left, and how many of its segments have gone.
    skb_at: Time,
    skb_segs: u32,
    /// The segments the present skb may hold (`tcp_tso_autosize` when it started).
    skb_goal: u32,
    /// `tp->data_segs_out`.
    segs_out: u64,
    /// The present skb's departure time (`skb->tstamp`, set by `__tcp_transmit_skb`).
    skb_edt: Time,
    /// The present skb's payload so far, the credit it started with (`tcp_wstamp_ns` less its
    /// prior value) and what it has added to `next` so far: `tcp_update_skb_after_send` runs once
    /// a skb, on its whole length, and the segments here go one at a time.
    skb_bytes: u64,
    skb_credit: Time,
    skb_paced: Time,
}

impl Pacer {
    /// May a segment leave at `now`? Linux's `tcp_pacing_check`: not before `tcp_wstamp_ns`,
    /// except the further segments of the skb that left now (one TSO burst).
    #[inline]
    pub fn may_send(&self, now: Time) -> bool {
        now >= self.next || (self.skb_at == now && self.skb_segs > 0 && self.skb_segs < self.skb_goal)
    }

    /// A segment of `len` bytes left at `now`. Linux's `tcp_update_skb_after_send` runs once a skb,
    /// after `__tcp_transmit_skb` has counted its segments in `data_segs_out`: once that count is
    /// 10 or more it advances the departure time by the skb's len / rate, less up to half of it
    /// as credit for a late send ("take into account OS jitter": the credit is how far
    /// `tcp_write_xmit` moved `tcp_wstamp_ns` up to now). The segments of a skb go one at a time
    /// here, so each adds what the skb's length so far adds to that sum. `goal`: the skb size in
    /// segments (`tcp_tso_autosize`) should a new skb start here. Returns the segment's earliest
    /// departure time: its skb's, `max(tcp_wstamp_ns, now)` when the skb left
    /// (`__tcp_transmit_skb`'s `skb_set_delivery_time`), which fq honours.
    pub fn on_send(&mut self, now: Time, len: u64, rate: Option<u64>, goal: u32) -> Time {
        let new_skb = !(self.skb_at == now && self.skb_segs > 0 && self.skb_segs < self.skb_goal);
        if new_skb {
            let prior = self.next;
            self.skb_at = now;
            self.skb_segs = 0;
            self.skb_goal = goal.max(1);
            // tcp_write_xmit: `tp->tcp_wstamp_ns = max(tp->tcp_wstamp_ns, tp->tcp_clock_cache)`.
            self.next = self.next.max(now);
            self.skb_edt = self.next;
            self.skb_bytes = 0;
            self.skb_credit = self.next - prior;
            self.skb_paced = 0;
        }
        self.skb_segs += 1;
        self.segs_out += 1;
        self.skb_bytes += len;
        let edt = self.skb_edt;
        let Some(rate) = rate.filter(|&r| r > 0) else { return edt };
        if self.segs_out < UNPACED_SEGS {
            return edt;
        }
        let mut len_ns = (self.skb_bytes as u128 * 1_000_000_000 / rate as u128) as u64;
        len_ns -= (len_ns / 2).min(self.skb_credit);
        self.next += len_ns - self.skb_paced;
        self.skb_paced = len_ns;
        edt
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    const MS: Time = 1_000_000;

    #[test]
    fn pacing_rate_is_200_percent_in_slow_start_and_120_after() {
        // 10 packets of 1000 B per 100 ms = 100 kB/s; ×2 while cwnd < ssthresh/2, ×1.2 after.
        assert_eq!(linux_pacing_rate(1000, 10, 100, 0, Some(100 * MS)), Some(200_000));
        assert_eq!(linux_pacing_rate(1000, 10, 20, 0, Some(100 * MS)), Some(120_000));
        // max(cwnd, packets_out).
        assert_eq!(linux_pacing_rate(1000, 10, 20, 20, Some(100 * MS)), Some(240_000));
        assert_eq!(linux_pacing_rate(1000, 10, 20, 0, None), None);
    }

    #[test]
    fn tso_autosize_is_a_millisecond_of_data_at_least_two_segments() {
        // 1.25 MB/s >> 10 = 1220 B: under one 1448 B segment, so the minimum of 2.
        assert_eq!(tso_autosize(1_250_000, 1448, Some(40 * MS), 2), 2);
        // 100 MB/s >> 10 = 97,656 B, capped at 64 KB: 45 segments.
        assert_eq!(tso_autosize(100_000_000, 1448, Some(40 * MS), 2), 45);
        // A 1 ms path: 1000 µs >> 9 = 1, so gso_max_size >> 1 = 32 KB more.
        assert_eq!(tso_autosize(1_250_000, 1448, Some(MS), 2), (1220 + 32768) / 1448);
    }

    #[test]
    fn departures_are_spaced_by_len_over_rate_after_ten_segments() {
        let mut p = Pacer::default();
        for _ in 0..9 {
            assert!(p.may_send(0));
            p.on_send(0, 1000, Some(1_000_000), 1);
        }
        assert_eq!(p.next, 0, "the first nine segments are not paced");
        // The skb that brings data_segs_out to 10 is paced (the count includes it).
        p.on_send(0, 1000, Some(1_000_000), 1);
        assert_eq!(p.next, MS);
        assert!(!p.may_send(MS - 1));
        assert!(p.may_send(MS));
        p.on_send(MS, 1000, Some(1_000_000), 1);
        assert_eq!(p.next, 2 * MS);
        // Sent 0.4 ms late: up to half of len/rate is credited.
        p.on_send(2 * MS + 400_000, 1000, Some(1_000_000), 1);
        assert_eq!(p.next, 2 * MS + 400_000 + 600_000);
    }

    /// `tcp_update_skb_after_send` runs once a skb, on its whole length: a skb of two segments
    /// sent long after its time is credited half of its 2 ms (1 ms), not half of its first
    /// segment's time.
    #[test]
    fn the_late_credit_is_half_of_the_whole_skbs_time() {
        let mut p = Pacer::default();
        for _ in 0..10 {
            p.on_send(0, 1000, Some(1_000_000), 1);
        }
        assert_eq!(p.next, MS);
        let t = 50 * MS;
        assert_eq!(p.on_send(t, 1000, Some(1_000_000), 2), t);
        assert!(p.may_send(t), "the skb's second segment leaves with it");
        assert_eq!(p.on_send(t, 1000, Some(1_000_000), 2), t);
        assert_eq!(p.next, t + MS, "2 ms less min(1 ms, the 49 ms of credit)");
        // The next skb, on time: no credit, its whole 2 ms.
        p.on_send(t + MS, 1000, Some(1_000_000), 2);
        p.on_send(t + MS, 1000, Some(1_000_000), 2);
        assert_eq!(p.next, t + 3 * MS);
    }
}
