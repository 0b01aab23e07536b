//! Reno's congestion control, RFC 5681: slow start and congestion avoidance (classic per-ACK
//! counting, or Appropriate Byte Counting, RFC 3465, when `abc` = L > 0), ssthresh =
//! max(FlightSize/2, 2·SMSS) on a loss, the loss window of one segment after a timeout; and the
//! ns-2 `slowdown()` variants the `ns2` profile selects.

use super::hystartpp::HystartPP;
use super::{half_window, linux_cwnd_restart, AckSample, AppLimited, CongestionControl, CongestionEvent, LossContext, Window};
use crate::tcp::config::{CwndValidation, SlowStart, TcpConfig};

pub struct Reno {
    mss: u64,
    /// RFC 3465's L (0: per-ACK counting).
    abc: u64,
    /// The initial window, bytes (RFC 5681 §4.1's restart window is min(IW, cwnd)).
    iw: u64,
    /// ns-2 keeps ssthresh in whole segments, half of `window()` (`slowdown()`).
    ssthresh_whole_segments: bool,
    /// Linux `tcp_reno_ssthresh`: half of cwnd in packets, at least 2 (`ssthresh_from_cwnd`).
    ssthresh_from_cwnd: bool,
    /// ns-2 `timeout()`: ssthresh = half the window on every expiry.
    timeout_halves_window: bool,
    /// ns-2 `timeout()` with the SYN outstanding: ssthresh = 2 segments.
    syn_timeout_ssthresh: bool,
    /// The idle restart: RFC 5681 §4.1's or Linux's `tcp_cwnd_restart`.
    cwnd_validation: CwndValidation,
    /// Linux's application-limited decay (`cwnd_validation = "linux"`).
    app_limited: AppLimited,
    /// RFC 3465 §2.1 bytes_acked: bytes acknowledged in congestion avoidance not yet turned
    /// into a window increase.
    bytes_acked: u64,
    /// Congestion avoidance without ABC: the remainder of SMSS²/cwnd carried between ACKs.
    ca_remainder: u64,
    /// The cwnd congestion avoidance last left, bytes: a window set since (a reduction, a
    /// timeout, slow start, a recovery's inflation) starts the remainder again from zero.
    ca_bytes: u64,
    /// HyStart++ (`slow_start = "hystart++"`, RFC 9406).
    hpp: Option<HystartPP>,
}

impl Reno {
    pub fn new(cfg: &TcpConfig) -> Self {
        let mss = cfg.mss.0;
        Reno {
            mss,
            abc: cfg.abc as u64,
            iw: cfg.initial_window.bytes(mss as u32),
            ssthresh_whole_segments: cfg.ssthresh_whole_segments,
            ssthresh_from_cwnd: cfg.ssthresh_from_cwnd,
            timeout_halves_window: cfg.timeout_halves_window,
            syn_timeout_ssthresh: cfg.syn_timeout_ssthresh,
            cwnd_validation: cfg.cwnd_validation,
            app_limited: AppLimited::default(),
            bytes_acked: 0,
            ca_remainder: 0,
            ca_bytes: u64::MAX,
            hpp: (cfg.slow_start == SlowStart::HystartPP).then(|| HystartPP::new(cfg.pacing)),
        }
    }

    /// A congestion event ends the initial slow start: HyStart++ is no longer used (RFC 9406
    /// §4.3: "only for the initial slow start").
    pub(super) fn end_hystart_pp(&mut self) {
        if let Some(h) = self.hpp.as_mut() {
            h.stop();
        }
    }

    /// HyStart++'s slow start (RFC 9406 §4.2) on one ACK, while it is in use: true when it
    /// set the window (slow start or CSS growth); false when it ended in congestion avoidance
    /// (ssthresh = cwnd, this ACK grows as avoidance) or is not in use.
    fn hystart_pp(&mut self, w: &mut Window, a: &AckSample) -> bool {
        let Some(h) = self.hpp.as_mut().filter(|h| h.active()) else { return false };
        match h.grow(a, a.acked, self.mss) {
            Some(inc) => {
                w.cwnd += inc;
                true
            }
            None => {
                w.ssthresh = w.cwnd;
                false
            }
        }
    }

    /// ssthresh after a loss.
    fn ssthresh_after_loss(&self, w: &Window, c: &LossContext) -> u64 {
        if self.ssthresh_whole_segments {
            return half_window(w.cwnd, c.rwnd, self.mss, true);
        }
        if self.ssthresh_from_cwnd {
            // Linux `tcp_reno_ssthresh`: max(tcp_snd_cwnd(tp) >> 1, 2), cwnd in packets.
            return (w.cwnd / self.mss / 2).max(2) * self.mss;
        }
        // RFC 5681 §3.1 eq. 4: ssthresh = max(FlightSize / 2, 2·SMSS); §3.2 step 2: data sent
        // by Limited Transmit is not included in FlightSize here.
        ((c.flight - c.limited_transmit) / 2).max(2 * self.mss)
    }
}

impl CongestionControl for Reno {
    fn name(&self) -> &'static str {
        "reno"
    }

    fn on_ack(&mut self, w: &mut Window, a: &AckSample) {
        let mss = self.mss;
        let abc = self.abc;
        if w.cwnd < w.ssthresh && self.hystart_pp(w, a) {
            self.bytes_acked = 0;
        } else if w.cwnd < w.ssthresh {
            self.bytes_acked = 0;
            if abc > 0 {
                // RFC 3465 §2.2: cwnd += min(N, L·SMSS); L = 1·SMSS in slow start after an RTO.
                let l = if a.after_rto { 1 } else { abc };
                w.cwnd += a.acked.min(l * mss);
            } else {
                // Classic per-ACK counting (4.3BSD, ns-2): one SMSS for every ACK of new data,
                // however little it acknowledges — what TBIT's ABC test (Ladha et al. §3) tells
                // apart from byte counting. (RFC 5681 eq. 2's min(N, SMSS) differs only for ACKs
                // of less than one SMSS; abc = 1 gives it.)
                w.cwnd += mss;
            }
        } else if abc > 0 {
            // RFC 3465 §2.1: one SMSS per cwnd bytes acknowledged.
            self.bytes_acked += a.acked;
            if self.bytes_acked >= w.cwnd {
                self.bytes_acked -= w.cwnd;
                w.cwnd += mss;
            }
        } else {
            // RFC 5681 §3.1 eq. 3: congestion avoidance, cwnd += SMSS·SMSS/cwnd per ACK. The
            // division's remainder is carried to the next ACK, so the growth is exact (whole
            // bytes would lose up to one byte an ACK: 3 % of the growth at a window of 50
            // segments), and never stalls (the RFC's note on integer arithmetic).
            // The remainder belongs to the window it grew: after a reduction it starts again, as
            // ns-2's cwnd_ (packets, a double: `cwnd_ += 1/cwnd_`, TcpAgent::opencwnd(),
            // tcp/tcp.cc) starts from the window slowdown() set; carried across a loss it made
            // the new window reach a whole segment an ACK early (mathis97's M3, docs/ns2.md).
            if w.cwnd != self.ca_bytes {
                self.ca_remainder = 0;
            }
            let num = mss * mss + self.ca_remainder;
            self.ca_remainder = num % w.cwnd;
            w.cwnd += num / w.cwnd;
            self.ca_bytes = w.cwnd;
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
        // HyStart++ reads an RTT on every ACK: from the transmit record where the RTT estimator
        // times one segment a round trip.
        self.hpp.is_some()
    }

    fn on_congestion_event(&mut self, w: &mut Window, ev: CongestionEvent) {
        // A reduction starts congestion avoidance's remainder again (the notices of a send,
        // `TxStart` and `Sent`, and an idle restart that changes nothing keep it).
        if matches!(ev, CongestionEvent::FastRetransmit(_) | CongestionEvent::Ecn(_) | CongestionEvent::Timeout { .. } | CongestionEvent::SynTimeout | CongestionEvent::HandshakeLoss) {
            self.ca_bytes = u64::MAX;
        }
        if matches!(ev, CongestionEvent::FastRetransmit(_) | CongestionEvent::Ecn(_) | CongestionEvent::Timeout { .. }) {
            // RFC 9406 §4.3: HyStart++ for the initial slow start only.
            self.end_hystart_pp();
        }
        match ev {
            CongestionEvent::FastRetransmit(c) => w.ssthresh = self.ssthresh_after_loss(w, &c),
            // RFC 3168 §6.1.2: "the TCP source halves the congestion window 'cwnd' and reduces
            // the slow start threshold 'ssthresh'": ssthresh as after a loss, cwnd = ssthresh,
            // nothing retransmitted (RFC 5681 §3.1 eq. 4 with FlightSize).
            CongestionEvent::Ecn(c) => {
                w.ssthresh = self.ssthresh_after_loss(w, &c);
                w.cwnd = w.ssthresh;
                self.bytes_acked = 0;
                self.ca_remainder = 0;
            }
            CongestionEvent::Timeout { ctx, first, reduced_in_window, inflation } => {
                // RFC 5681 §3.1: ssthresh = max(FlightSize/2, 2·SMSS), but held constant when the
                // segment has already been retransmitted by the timer. If the window was already
                // reduced inside this window of data (a timeout during fast recovery), ssthresh is
                // not raised again: FlightSize then counts everything the window inflation sent,
                // much of it already held by the receiver. The result stays within eq. 4's bound
                // ("no more than"); Linux's tcp_enter_loss makes the same choice.
                if self.timeout_halves_window {
                    // ns-2 timeout(): slowdown(CLOSE_SSTHRESH_HALF|CLOSE_CWND_RESTART) on every
                    // expiry, from the window now (tcp/tcp.cc). RenoTcpAgent::timeout()
                    // (tcp/tcp-reno.cc, inherited by NewReno) zeroes dupwnd_ first, so in fast
                    // recovery it is the window without the recovery's inflation that is halved.
                    let uninflated = w.cwnd.saturating_sub(inflation).max(self.mss);
                    w.ssthresh = half_window(uninflated, ctx.rwnd, self.mss, self.ssthresh_whole_segments);
                } else if self.ssthresh_from_cwnd {
                    // Linux `tcp_enter_loss`: a new ssthresh from the controller unless a
                    // reduction of this window is already under way (Recovery, or Loss again).
                    if first && !reduced_in_window {
                        w.ssthresh = self.ssthresh_after_loss(w, &ctx);
                    }
                } else if first {
                    let eq4 = self.ssthresh_after_loss(w, &ctx);
                    w.ssthresh = if reduced_in_window { w.ssthresh.min(eq4) } else { eq4 };
                }
                // RFC 5681 §3.1: the loss window is one segment.
                w.cwnd = self.mss;
                self.bytes_acked = 0;
            }
            CongestionEvent::SynTimeout => {
                if self.syn_timeout_ssthresh {
                    // ns-2 timeout() with the SYN outstanding: slowdown(CLOSE_SSTHRESH_HALF) of a
                    // one-segment window, floored at 2 segments (tcp/tcp.cc).
                    w.ssthresh = 2 * self.mss;
                }
            }
            // RFC 5681 §3.1 / RFC 3390 §2: if the SYN or SYN-ACK was lost, the IW is one segment.
            CongestionEvent::HandshakeLoss => w.cwnd = self.mss,
            // RFC 5681 §4.1: after an idle period longer than the RTO, start again from the
            // restart window RW = min(IW, cwnd).
            CongestionEvent::IdleRestart { now, idle, rto } => match self.cwnd_validation {
                CwndValidation::Rfc5681 => w.cwnd = self.iw.min(w.cwnd),
                CwndValidation::Linux => {
                    linux_cwnd_restart(w, self.iw, self.mss, idle, rto);
                    self.app_limited.on_restart(now);
                }
            },
            // Reno has no epoch to shift (Linux's tcp_reno has no cwnd_event hook).
            CongestionEvent::TxStart { .. } => {}
            // Linux's tcp_cwnd_validate (fired with cwnd_validation = "linux" only).
            CongestionEvent::Sent(r) => self.app_limited.on_send(w, &r, self.iw, self.mss),
        }
    }
}
