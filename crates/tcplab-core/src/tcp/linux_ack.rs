//! Linux 6.x's receiver ACK policy (`delack_model = "linux"`), the state of `icsk_ack` and the
//! rules of net/ipv4/tcp_input.c and tcp_output.c that decide when an ACK leaves:
//! quick-ACK mode (`tcp_incr_quickack`, `tcp_enter_quickack_mode`, `tcp_dec_quickack_mode`), the
//! adaptive ACK timeout (`tcp_event_data_recv`, `tcp_send_delayed_ack`, `tcp_delack_timer_handler`),
//! the measured receive MSS (`tcp_measure_rcv_mss`), "more than one full frame" and SACK
//! compression (`__tcp_ack_snd_check`). Timers run on jiffies (`jiffies.rs`); the SACK-compression
//! timer is an hrtimer (nanoseconds).
//!
//! With `rcv_buffer = "linux"` (`rcvbuf.rs`) each growth of the window adds a quick ACK
//! (`tcp_grow_window`: `icsk_ack.quick |= 1`), `__tcp_select_window` may end quick-ACK mode, and
//! the receive-window condition of `__tcp_ack_snd_check` is checked.
//!
//! ECN's quick-ACK mode for two ACKs (`__tcp_ecn_check_ce`) is entered from `receiver.rs`
//! (`TcpReceiver::ecn_on_data`) through `enter_quickack_mode(2)`.
//!
//! Not modelled: pingpong (interactive) mode, which a receiver that never sends data does not
//! enter; the receiver's own RTT estimate
//! `rcv_rtt_est` (SACK compression uses this end's SRTT alone).

use super::jiffies::Jiffies;
use crate::units::{Time, MS};

/// TCP_MAX_QUICKACKS (include/net/tcp.h).
pub const MAX_QUICKACKS: u32 = 16;
/// `__tcp_ecn_check_ce`'s `tcp_enter_quickack_mode(sk, 2)`: the quick ACKs of an ECN event.
pub const ECN_QUICKACKS: u32 = 2;
/// TCP_FASTRETRANS_THRESH: duplicate ACKs sent at once before SACK compression starts.
const FASTRETRANS_THRESH: u32 = 3;
/// net.ipv4.tcp_comp_sack_delay_ns default: 1 ms.
pub const COMP_SACK_DELAY: Time = MS;
/// net.ipv4.tcp_comp_sack_slack_ns default: 100 µs. `hrtimer_start_range_ns` takes it as the
/// timer's range: the clock event is programmed at the range's end (the hard expiry), and with
/// no other timer to share the interrupt the compressed SACK leaves there. The testbed kernel's
/// compressed SACKs at 5 Mb/s (one segment per 2.3 ms) leave 1.13–1.18 ms after the segment that
/// armed the timer: 1.1 ms and the softirq's latency (docs/testbed.md).
pub const COMP_SACK_SLACK: Time = 100 * crate::units::US;
/// The PSH bit (TCPHDR_PSH): set by the sender with `tso_defer` (the `linux` profile) where the
/// kernel sets it, and carried by a segment replayed from a capture.
pub use crate::net::FLAG_PSH;
/// TCP_MSS_DEFAULT (536) and TCP_MIN_MSS (88): bounds of the initial receive MSS guess.
const MSS_DEFAULT: u64 = 536;
const MIN_MSS: u64 = 88;

/// What `__tcp_ack_snd_check` decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AckNow {
    /// Send the ACK now.
    Now,
    /// Arm (or keep) the receiver's timer for this deadline; no ACK yet.
    Later(Time),
    /// Nothing to do (the SACK-compression timer already runs).
    Wait,
}

#[derive(Clone, Debug)]
pub struct LinuxAck {
    pub j: Jiffies,
    /// icsk_ack.quick: ACKs still to send at once.
    pub quick: u32,
    /// icsk_ack.ato in jiffies; 0 until the first data segment.
    pub ato: u64,
    /// icsk_ack.lrcvtime: jiffies of the last in-order data.
    lrcvtime: u64,
    /// icsk_ack.rcv_mss and last_seg_size.
    pub rcv_mss: u64,
    last_seg_size: u64,
    advmss: u64,
    /// Receive window for `tcp_incr_quickack` (bytes): `rwnd`, or the window last advertised
    /// with `rcv_buffer = "linux"` (tp->rcv_wnd, `rcvbuf.rs`).
    pub rcv_wnd: u64,
    /// icsk_ack.pending bits: ICSK_ACK_SCHED, ICSK_ACK_TIMER, ICSK_ACK_PUSHED(2), ICSK_ACK_NOW.
    pub scheduled: bool,
    timer_pending: bool,
    pushed: bool,
    pushed2: bool,
    pub ack_now: bool,
    /// icsk_ack.timeout: the delayed ACK's jiffy, and when the timer wheel runs it.
    timeout_j: u64,
    dack_at: Time,
    /// rcv_wup: rcv_nxt when the last ACK went.
    pub rcv_wup: u64,
    /// SACK compression: compressed_ack, compressed_ack_rcv_nxt, dup_ack_counter, and the hrtimer.
    comp_nr: u32,
    compressed_ack: u32,
    compressed_ack_rcv_nxt: u64,
    dup_ack_counter: u32,
    comp_deadline: Option<Time>,
    /// This end's SRTT and RTO (icsk_rto), from its send half.
    pub srtt: Option<Time>,
    pub rto: Time,
    /// icsk_ack.dst_quick_ack: the route's `quickack 1` (`sk_setup_caps` caches
    /// `dst_metric(dst, RTAX_QUICKACK)`), which keeps `tcp_in_quickack_mode()` true: every data segment, in order or not, is acknowledged at
    /// once. What `delayed_ack = false` is under `delack_model = "linux"` (the testbed maps it to
    /// that route attribute); the window, its growth and autotuning go on as without it.
    pub dst_quick_ack: bool,
    /// tp->tcp_header_len − 20: the options every segment of the connection carries (12 B of
    /// timestamps), which `tcp_measure_rcv_mss`'s careful check counts with the payload.
    pub hdr_opt: u64,
}

impl LinuxAck {
    pub fn new(j: Jiffies, mss: u64, rwnd: Option<u64>, comp_nr: u32, rto: Time) -> LinuxAck {
        let rcv_wnd = rwnd.unwrap_or(u64::MAX / 4);
        // tcp_initialize_rcv_mss(): min(advmss, rcv_wnd/2, TCP_MSS_DEFAULT), at least TCP_MIN_MSS.
        let rcv_mss = mss.min(rcv_wnd / 2).min(MSS_DEFAULT).max(MIN_MSS);
        LinuxAck {
            j,
            quick: 0,
            ato: 0,
            lrcvtime: 0,
            rcv_mss,
            last_seg_size: 0,
            advmss: mss,
            rcv_wnd,
            scheduled: false,
            timer_pending: false,
            pushed: false,
            pushed2: false,
            ack_now: false,
            timeout_j: 0,
            dack_at: 0,
            rcv_wup: 1,
            comp_nr,
            compressed_ack: 0,
            compressed_ack_rcv_nxt: 0,
            dup_ack_counter: 0,
            comp_deadline: None,
            srtt: None,
            rto,
            dst_quick_ack: false,
            hdr_opt: 0,
        }
    }

    fn ato_min(&self) -> u64 {
        self.j.hz_div(25) // TCP_ATO_MIN = TCP_DELACK_MIN = HZ/25
    }
    fn delack_max(&self) -> u64 {
        self.j.hz_div(5) // TCP_DELACK_MAX = HZ/5
    }
    fn rto_j(&self) -> u64 {
        self.rto / self.j.ns()
    }

    /// tcp_incr_quickack(): quick = max(quick, min(rcv_wnd / (2·rcv_mss) or 2, max)).
    fn incr_quickack(&mut self, max: u32) {
        let mut q = (self.rcv_wnd / (2 * self.rcv_mss)).min(u32::MAX as u64) as u32;
        if q == 0 {
            q = 2;
        }
        q = q.min(max);
        if q > self.quick {
            self.quick = q;
        }
    }

    /// tcp_enter_quickack_mode(sk, max_quickacks): ACK the next segments at once (at most
    /// `max_quickacks`, see `incr_quickack`) and restart the ATO at its minimum; pingpong mode,
    /// which it also leaves, is not modelled. With TCP_MAX_QUICKACKS for a duplicate or
    /// out-of-window segment (tcp_data_queue, tcp_send_dupack); with 2 for ECN
    /// (`__tcp_ecn_check_ce`: a CE mark while not demanding CWR, a Not-ECT segment after ECT ones).
    pub fn enter_quickack_mode(&mut self, max_quickacks: u32) {
        self.incr_quickack(max_quickacks);
        self.ato = self.ato_min();
    }

    /// tcp_grow_window(): "inet_csk(sk)->icsk_ack.quick |= 1" when rcv_ssthresh grew (a bitwise
    /// OR: an even credit gains one, an odd one stays).
    pub fn grow_credit(&mut self) {
        self.quick |= 1;
    }

    /// inet_csk_schedule_ack(): an ACK is owed.
    pub fn schedule(&mut self) {
        self.scheduled = true;
    }

    /// tcp_measure_rcv_mss() for a segment of `len` payload bytes with the PSH bit `psh`. A
    /// segment shorter than the receive MSS is taken as the end of a write (the PSH a Linux
    /// sender puts there), which sets ICSK_ACK_PUSHED: the application's read then sends the ACK
    /// (tcp_cleanup_rbuf); so does a full segment with PSH ("likely the end of an application
    /// write").
    pub fn measure_rcv_mss(&mut self, len: u64, psh: bool) {
        let lss = self.last_seg_size;
        self.last_seg_size = 0;
        if len >= self.rcv_mss {
            self.rcv_mss = len.min(self.advmss);
            if psh {
                self.pushed = true;
            }
            return;
        }
        // "Otherwise, we make more careful check": with its TCP header (20 B and the fixed
        // options), a segment of at least TCP_MSS_DEFAULT + 20 bytes, or of at least TCP_MIN_MSS
        // + 20 without PSH ("If PSH is not set, packet should be full sized"; TCP_REMNANT's FIN,
        // URG and SYN do not come alone on data here), twice in a row of the same length, is the
        // peer's MSS. With timestamps a 524-byte segment (MSS 536) qualifies: 524 + 32 ≥ 556.
        let with_hdr = len + 20 + self.hdr_opt;
        if with_hdr >= MSS_DEFAULT + 20 || (with_hdr >= MIN_MSS + 20 && !psh) {
            self.last_seg_size = len;
            if len == lss {
                self.rcv_mss = len;
                return;
            }
        }
        if self.pushed {
            self.pushed2 = true;
        }
        self.pushed = true;
    }

    /// tcp_event_data_recv() for in-order data arriving at `now`.
    pub fn event_data_recv(&mut self, now: Time, len: u64, psh: bool) {
        self.schedule();
        self.measure_rcv_mss(len, psh);
        let now_j = self.j.at(now);
        if self.ato == 0 {
            // "The _first_ data packet received, initialize delayed ACK engine."
            self.incr_quickack(MAX_QUICKACKS);
            self.ato = self.ato_min();
        } else {
            let m = now_j - self.lrcvtime;
            let half = self.ato_min() / 2;
            if m <= half {
                // "The fastest case is the first": ato = ato/2 + TCP_ATO_MIN/2.
                self.ato = (self.ato >> 1) + half;
            } else if m < self.ato {
                self.ato = (self.ato >> 1) + m;
                if self.ato > self.rto_j() {
                    self.ato = self.rto_j();
                }
            } else if m > self.rto_j() {
                // "Too long gap. Apparently sender failed to restart window, so that we send
                // ACKs quickly."
                self.incr_quickack(MAX_QUICKACKS);
            }
        }
        self.lrcvtime = now_j;
    }

    /// __tcp_ack_snd_check(sk, ofo_possible = 1) with rcv_nxt `rcv_nxt`, `ofo`: data is held
    /// above a hole, `sack`: SACK is on, `window_ok`: "right edge of window advances far
    /// enough" (`__tcp_select_window(sk) >= tp->rcv_wnd`; always with a fixed window).
    pub fn ack_snd_check(&mut self, now: Time, rcv_nxt: u64, ofo: bool, sack: bool, window_ok: bool) -> AckNow {
        if !self.scheduled {
            return AckNow::Wait;
        }
        // "More than one full frame received ... and right edge of window advances far enough",
        // "we ACK each frame" in quick-ACK mode (`tcp_in_quickack_mode`: the route's
        // dst_quick_ack, or quick ACKs left), or ICSK_ACK_NOW.
        if (rcv_nxt - self.rcv_wup > self.rcv_mss && window_ok) || self.dst_quick_ack || self.quick > 0 || self.ack_now {
            return AckNow::Now;
        }
        if !ofo {
            return self.send_delayed_ack(now);
        }
        if !sack || self.compressed_ack >= self.comp_nr {
            return AckNow::Now;
        }
        if self.compressed_ack_rcv_nxt != rcv_nxt {
            self.compressed_ack_rcv_nxt = rcv_nxt;
            self.dup_ack_counter = 0;
        }
        if self.dup_ack_counter < FASTRETRANS_THRESH {
            self.dup_ack_counter += 1;
            return AckNow::Now;
        }
        self.compressed_ack += 1;
        if self.comp_deadline.is_some() {
            return AckNow::Wait;
        }
        // "compress ack timer: 5 % of rtt, but no more than tcp_comp_sack_delay_ns", started
        // with tcp_comp_sack_slack_ns of range (it fires at the range's end, COMP_SACK_SLACK).
        let rtt = self.srtt.unwrap_or(0);
        let d = now + COMP_SACK_DELAY.min(rtt / 20) + COMP_SACK_SLACK;
        self.comp_deadline = Some(d);
        AckNow::Later(self.deadline().unwrap_or(d))
    }

    /// After in-order data was delayed: the application reads it at once, and __tcp_cleanup_rbuf()
    /// (net/ipv4/tcp.c) sends the ACK when "Once-per-two-segments ACK was not sent by
    /// tcp_input.c" (rcv_nxt − rcv_wup > rcv_mss: __tcp_ack_snd_check() held it because
    /// __tcp_select_window() < rcv_wnd, the unread segment counted against tcp_space while
    /// rcv_ssthresh sits at window_clamp), or when the data was pushed (a short segment) and the
    /// read drained the receive queue.
    pub fn read_sends_ack(&self, rcv_nxt: u64) -> bool {
        self.scheduled && (rcv_nxt - self.rcv_wup > self.rcv_mss || self.pushed2 || self.pushed)
    }

    /// tcp_send_delayed_ack() at `now`.
    fn send_delayed_ack(&mut self, now: Time) -> AckNow {
        let mut ato = self.ato;
        let delack_min = self.ato_min();
        if ato > delack_min {
            let mut max_ato = self.j.hz_div(2);
            if self.pushed {
                max_ato = self.delack_max();
            }
            // "If some rtt estimate is known, use it to bound delayed ack."
            if let Some(srtt) = self.srtt {
                let rtt = self.j.usecs_to_jiffies(srtt / 1000).max(delack_min);
                if rtt < max_ato {
                    max_ato = rtt;
                }
            }
            ato = ato.min(max_ato);
        }
        // icsk_delack_max: TCP_DELACK_MAX.
        ato = ato.min(self.delack_max());
        let now_j = self.j.at(now);
        let mut timeout = now_j + ato;
        if self.timer_pending {
            // "If delack timer is about to expire, send ACK now."
            if self.timeout_j <= now_j + (ato >> 2) {
                return AckNow::Now;
            }
            if timeout >= self.timeout_j {
                timeout = self.timeout_j;
            }
        }
        if !self.timer_pending || timeout != self.timeout_j {
            // sk_reset_timer() → mod_timer(): a new expiry is put in the wheel from now.
            self.dack_at = self.j.timer_expiry(now, timeout - now_j);
        }
        self.timer_pending = true;
        self.timeout_j = timeout;
        AckNow::Later(self.deadline().expect("the delayed-ACK timer was just set"))
    }

    /// The receiver timer's deadline: the delayed ACK (on the timer wheel) or the SACK
    /// compression hrtimer, whichever is first.
    pub fn deadline(&self) -> Option<Time> {
        let dack = self.timer_pending.then_some(self.dack_at);
        match (dack, self.comp_deadline) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The receiver timer fired at `now`: tcp_compressed_ack_kick() or tcp_delack_timer_handler().
    /// True: send an ACK (a delayed-ACK timeout when `self.ato` was inflated).
    pub fn on_timer(&mut self, now: Time) -> TimerOutcome {
        if let Some(d) = self.comp_deadline {
            if d <= now {
                self.comp_deadline = None;
                if self.compressed_ack > 0 {
                    return TimerOutcome::SendCompressed;
                }
            }
        }
        if !self.timer_pending {
            return self.rearm();
        }
        let now_j = self.j.at(now);
        if self.timeout_j > now_j {
            // "sk_reset_timer(sk, &icsk->icsk_delack_timer, icsk->icsk_ack.timeout)".
            self.dack_at = self.j.timer_expiry(now, self.timeout_j - now_j);
            return self.rearm();
        }
        self.timer_pending = false;
        if self.scheduled {
            // "Delayed ACK missed: inflate ATO."
            self.ato = (self.ato << 1).min(self.rto_j());
            return TimerOutcome::SendDelayed;
        }
        self.rearm()
    }

    fn rearm(&self) -> TimerOutcome {
        match self.deadline() {
            Some(d) => TimerOutcome::Rearm(d),
            None => TimerOutcome::Nothing,
        }
    }

    /// tcp_event_ack_sent() → tcp_dec_quickack_mode() and inet_csk_clear_xmit_timer(ICSK_TIME_DACK);
    /// tcp_select_window(): rcv_wup = rcv_nxt. Any ACK, also one riding on data.
    pub fn on_ack_sent(&mut self, rcv_nxt: u64) {
        self.compressed_ack = 0;
        self.comp_deadline = None;
        if self.quick > 0 {
            let pkts = self.scheduled as u32;
            if pkts >= self.quick {
                self.quick = 0;
                // "Leaving quickack mode we deflate ATO."
                self.ato = self.ato_min();
            } else {
                self.quick -= pkts;
            }
        }
        self.scheduled = false;
        self.timer_pending = false;
        self.pushed = false;
        self.pushed2 = false;
        self.ack_now = false;
        self.rcv_wup = rcv_nxt;
    }
}

/// What the receiver's timer does when it fires.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimerOutcome {
    SendDelayed,
    SendCompressed,
    Rearm(Time),
    Nothing,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::ms;

    #[test]
    fn initial_rcv_mss_and_quickacks() {
        // tcp_initialize_rcv_mss(): at most 536 until a full segment is seen.
        let mut a = LinuxAck::new(Jiffies::new(250), 1448, None, 44, crate::units::SEC);
        assert_eq!(a.rcv_mss, 536);
        a.event_data_recv(ms(100), 1448, false);
        assert_eq!((a.rcv_mss, a.quick, a.ato), (1448, MAX_QUICKACKS, 10));
        // A 64 KB window at MSS 1448: 65535 / 2896 = 22, capped at 16; a 4 KB window: 1 → 1;
        // a window below 2·rcv_mss gives 2.
        let mut a = LinuxAck::new(Jiffies::new(250), 1000, Some(4000), 44, crate::units::SEC);
        a.event_data_recv(0, 1000, false);
        assert_eq!(a.quick, 2);
        let mut a = LinuxAck::new(Jiffies::new(250), 1000, Some(1500), 44, crate::units::SEC);
        a.event_data_recv(0, 1000, false);
        assert_eq!(a.quick, 2, "rcv_wnd/(2·rcv_mss) = 0 → 2");
    }

    /// tcp_event_data_recv()'s ATO arithmetic in jiffies at HZ 250 (TCP_ATO_MIN 10).
    #[test]
    fn ato_update() {
        let mut a = LinuxAck::new(Jiffies::new(250), 1000, None, 0, ms(300));
        a.event_data_recv(0, 1000, false); // ato 10, lrcvtime 0
        a.ato = 40;
        a.event_data_recv(ms(8), 1000, false); // m = 2 ≤ 5: 40/2 + 5 = 25
        assert_eq!(a.ato, 25);
        a.event_data_recv(ms(8) + ms(60), 1000, false); // m = 15 < 25: 12 + 15 = 27
        assert_eq!(a.ato, 27);
        a.event_data_recv(ms(68) + ms(200), 1000, false); // m = 50 ≥ ato, < rto 75: unchanged
        assert_eq!((a.ato, a.quick), (27, 16));
        a.quick = 0;
        a.event_data_recv(ms(268) + ms(400), 1000, false); // m = 100 > rto 75: quick-ACK again
        assert_eq!(a.quick, 16);
    }
}
