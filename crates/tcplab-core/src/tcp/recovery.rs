//! Loss recovery on duplicate ACKs: what to retransmit and how the window behaves until the loss
//! is repaired. Tahoe, Reno (RFC 5681 §3.2) and NewReno (RFC 6582); SACK-based strategies plug in
//! behind the same trait.

use super::cc::CongestionEvent;
use super::state::{OutSeg, SenderCore};

pub trait Recovery: Send {
    fn name(&self) -> &'static str;
    /// A duplicate ACK arrived; `s.dupacks` already counts it.
    fn on_dupack(&mut self, s: &mut SenderCore, out: &mut Vec<OutSeg>);
    /// New data was acknowledged while `s.in_recovery` (snd_una already advanced by `acked`).
    /// Returns whether the retransmission timer is restarted (RFC 6298 §5.3).
    fn on_ack_in_recovery(&mut self, s: &mut SenderCore, acked: u64, out: &mut Vec<OutSeg>) -> bool;
    /// The retransmission timer expired (the core has already reset cwnd and recovery state).
    fn on_timeout(&mut self, _s: &mut SenderCore) {}
    /// The bytes by which the strategy has inflated cwnd in the fast recovery now under way
    /// (ns-2's `dupwnd_`, which `RenoTcpAgent::window()` adds to `cwnd_`, tcp/tcp-reno.cc); 0
    /// outside recovery and for strategies that do not inflate. Asked when the timer expires.
    fn window_inflation(&self, _s: &SenderCore) -> u64 {
        0
    }
    /// Duplicate ACKs are RFC 6675's (new SACK information) rather than RFC 5681's.
    fn sack_dupacks(&self) -> bool {
        false
    }
    /// The strategy sends its own segments on the first duplicate ACKs (the core's RFC 3042
    /// Limited Transmit stays out of the way).
    fn own_limited_transmit(&self) -> bool {
        false
    }
    /// After a timeout, go-back-N skips data the receiver has SACKed since (RFC 6675 §5.1 allows
    /// it); ns-2's Sack1 resends everything.
    fn gbn_skips_sacked(&self) -> bool {
        true
    }
    /// A timeout leaves the SACK scoreboard as it is (ns-2's SackRH,
    /// `TimeoutScoreBoard()` in tcp/scoreboard-rh.cc); otherwise it is cleared (RFC 6675 §5.1).
    fn keeps_scoreboard_on_timeout(&self) -> bool {
        false
    }
    /// Whether the sender is repairing a loss, as instruments and time series report it. The
    /// core's `in_recovery` flag, unless the strategy uses that flag for its own routing of ACKs.
    fn recovering(&self, s: &SenderCore) -> bool {
        s.in_recovery
    }
    /// Send what the strategy allows after an ACK has been processed.
    fn send(&mut self, s: &mut SenderCore, _out: &mut Vec<OutSeg>) {
        s.send_available(_out);
    }
}

/// With `grow_on_recovery_exit`, the ACK that ends fast recovery opens the window as any new ACK
/// does: ns-2's Reno and NewReno call `recv_newack_helper()` → `opencwnd()` on it (tcp/tcp.cc,
/// tcp/tcp-reno.cc, tcp/tcp-newreno.cc). RFC 5681 §3.2 step 6 only deflates.
fn grow_on_exit(s: &mut SenderCore, acked: u64) {
    if s.cfg.grow_on_recovery_exit {
        s.cc_on_ack(acked);
    }
}

/// 4.3BSD-Tahoe as modelled by ns (TcpAgent): on the third duplicate ACK, ssthresh =
/// max(FlightSize/2, 2·SMSS), cwnd = 1 segment, and go back N from the lost segment in slow start.
/// As in ns with `bugfix_`, a fast retransmit is not repeated for duplicate ACKs of data sent
/// before the previous one (`recover`).
pub struct Tahoe;

impl Recovery for Tahoe {
    fn name(&self) -> &'static str {
        "tahoe"
    }

    fn on_dupack(&mut self, s: &mut SenderCore, out: &mut Vec<OutSeg>) {
        if s.dupacks != s.dupthresh() || s.snd_una <= s.recover && s.recover > 0 {
            return;
        }
        s.count_fast_retransmit();
        s.cc_event(CongestionEvent::FastRetransmit(s.loss_context()));
        s.recover = s.snd_max;
        s.loss_reduction(false, true);
        s.restart_rto();
        let mss = s.mss;
        s.set_recovery_window(mss);
        s.snd_nxt = s.snd_una;
        s.send_available(out);
    }

    fn on_ack_in_recovery(&mut self, _s: &mut SenderCore, _acked: u64, _out: &mut Vec<OutSeg>) -> bool {
        unreachable!("Tahoe has no fast recovery state")
    }
}

/// Reno, RFC 5681 §3.2: fast retransmit on the third duplicate ACK, cwnd = ssthresh + 3·SMSS,
/// inflated by one SMSS per further duplicate ACK, deflated to ssthresh on the next new ACK
/// (even a partial one: further losses in the window then need another fast retransmit or a
/// timeout).
pub struct Reno;

impl Recovery for Reno {
    fn name(&self) -> &'static str {
        "reno"
    }

    fn on_dupack(&mut self, s: &mut SenderCore, out: &mut Vec<OutSeg>) {
        if !s.in_recovery && s.dupacks == s.dupthresh() {
            if !s.cfg.recover_guard || s.snd_una > s.recover {
                s.enter_fast_recovery(out);
            }
        } else if s.in_recovery {
            // RFC 5681 §3.2 step 4: each further duplicate ACK, cwnd += SMSS (a segment left).
            s.set_recovery_window(s.cwnd + s.mss);
        }
    }

    fn on_ack_in_recovery(&mut self, s: &mut SenderCore, acked: u64, _out: &mut Vec<OutSeg>) -> bool {
        // §3.2 step 6: on the next ACK of new data, cwnd = ssthresh ("deflating" the window).
        s.set_recovery_window(s.ssthresh);
        s.in_recovery = false;
        s.dupacks = 0;
        grow_on_exit(s, acked);
        true
    }

    fn window_inflation(&self, s: &SenderCore) -> u64 {
        // cwnd = ssthresh + one SMSS per duplicate ACK from the fast retransmit on (RFC 5681 §3.2
        // steps 2–4; ns-2's cwnd_ halved and dupwnd_ = numdupacks_, then ++dupwnd_).
        if s.in_recovery {
            s.cwnd.saturating_sub(s.ssthresh)
        } else {
            0
        }
    }
}

/// NewReno, RFC 6582 §3.2: fast recovery lasts until the ACK that covers `recover`; each partial
/// ACK retransmits the next hole at once.
#[derive(Default)]
pub struct NewReno {
    /// A partial ACK has been seen in the current recovery (only the first restarts the timer).
    partial_seen: bool,
    /// The part of cwnd that is the recovery's inflation, bytes: ns-2's `dupwnd_`
    /// (tcp/tcp-reno.cc, tcp/tcp-newreno.cc), kept as ns-2 keeps it through partial deflation.
    dupwnd: u64,
}

impl Recovery for NewReno {
    fn name(&self) -> &'static str {
        "newreno"
    }

    fn on_dupack(&mut self, s: &mut SenderCore, out: &mut Vec<OutSeg>) {
        if !s.in_recovery && s.dupacks == s.dupthresh() {
            // RFC 6582 §3.2 step 2: enter only if the cumulative ACK covers more than `recover`,
            // which avoids a second fast retransmit for losses in a window already being repaired
            // or resent after a timeout (otherwise do nothing).
            // ns-2 `dupack_action()` (tcp/tcp-newreno.cc): `lessCareful_` also allows it at
            // snd_una = recover; `bugFix_ack_` when cwnd > 1 segment and the last new ACK
            // advanced at most numdupacks_ segments.
            let less_careful = s.cfg.newreno_less_careful && s.snd_una == s.recover;
            let ack_heuristic = s.cfg.newreno_ack_heuristic && s.cwnd > s.mss && s.snd_una - s.prev_una <= s.cfg.dupthresh as u64 * s.mss;
            if s.snd_una > s.recover || !s.cfg.newreno_recover_guard || less_careful || ack_heuristic {
                self.partial_seen = false;
                s.enter_fast_recovery(out);
                // ns-2 dupack_action(): dupwnd_ = numdupacks_ on top of the halved cwnd_.
                self.dupwnd = s.cwnd.saturating_sub(s.ssthresh);
            }
        } else if s.in_recovery {
            // RFC 5681 §3.2 step 4 (kept by RFC 6582): cwnd += SMSS per additional duplicate ACK.
            s.set_recovery_window(s.cwnd + s.mss);
            self.dupwnd += s.mss;
        }
    }

    fn on_ack_in_recovery(&mut self, s: &mut SenderCore, acked: u64, out: &mut Vec<OutSeg>) -> bool {
        if s.snd_una >= s.recover {
            // RFC 6582 §3.2 step 3, full acknowledgment: cwnd = min(ssthresh, max(FlightSize, SMSS) + SMSS)
            // (the first of the two options; it avoids a burst when little is in flight).
            let cwnd = if s.cfg.exit_recovery_fix {
                let flight = s.flight_size();
                s.ssthresh.min(flight.max(s.mss) + s.mss)
            } else {
                // ns-2 NewReno with `exit_recovery_fix_` 0 (tcp/tcp-newreno.cc): the inflation
                // (`dupwnd_`) is dropped, cwnd_ (ssthresh, or less after partial deflation) kept.
                s.cwnd.min(s.ssthresh)
            };
            s.set_recovery_window(cwnd);
            s.in_recovery = false;
            s.dupacks = 0;
            grow_on_exit(s, acked);
            true
        } else {
            // RFC 6582 §3.2 step 3, partial acknowledgment: retransmit the first unacknowledged segment,
            // deflate cwnd by the data acknowledged, add back one SMSS if at least one SMSS was
            // acknowledged; reset the timer only on the first partial ACK (the "Impatient" variant).
            let first_partial = !self.partial_seen;
            self.partial_seen = true;
            s.retransmit_una(out);
            let cwnd = if s.cfg.partial_window_deflation {
                let add = if acked >= s.mss { s.mss } else { 0 };
                // ns-2 partialnewack() (tcp/tcp-newreno.cc) deflates dupwnd_ first: dupwnd_ -=
                // deflate − 1 if dupwnd_ > deflate, else cwnd_ gives the rest and dupwnd_ = 1.
                self.dupwnd = if self.dupwnd > acked { self.dupwnd - acked + add } else { s.mss };
                s.cwnd.saturating_sub(acked).max(s.mss) + add
            } else {
                // ns-2 `partial_window_deflation_` 0 (tcp/tcp-newreno.cc): dupwnd_ = 0.
                self.dupwnd = 0;
                s.ssthresh
            };
            s.set_recovery_window(cwnd);
            // RFC 6582 §4: Slow-but-Steady restarts the timer on every partial ACK (ns-2
            // `newreno_changes1_` 0), Impatient only on the first.
            first_partial || s.cfg.slow_but_steady
        }
    }

    fn window_inflation(&self, s: &SenderCore) -> u64 {
        if s.in_recovery {
            self.dupwnd.min(s.cwnd.saturating_sub(s.mss))
        } else {
            0
        }
    }
}

