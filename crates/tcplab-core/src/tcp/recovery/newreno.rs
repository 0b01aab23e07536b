//! NewReno's fast recovery (RFC 6582 §3.2): recovery lasts until `recover` is acknowledged; each
//! partial ACK retransmits the next hole.

use super::{grow_on_exit, unfloored_half, uninflated_cwnd, Recovery};
use crate::tcp::gate::{Ask, Limit, SendKind};
use crate::tcp::state::{OutSeg, SenderCore};

/// NewReno, RFC 6582 §3.2: fast recovery lasts until the ACK that covers `recover`; each partial
/// ACK retransmits the next hole at once.
#[derive(Default)]
pub struct NewReno {
    /// A partial ACK has been seen in the current recovery (only the first restarts the timer).
    partial_seen: bool,
    /// The part of cwnd that is the recovery's inflation, bytes: ns-2's `dupwnd_`
    /// (tcp/tcp-reno.cc, tcp/tcp-newreno.cc), kept as ns-2 keeps it through partial deflation.
    dupwnd: u64,
    /// A fast retransmit since the last timeout (ns-2 FullTcp's `last_cwnd_action_` DUPACK).
    fast_retransmitted: bool,
    /// `newreno_inflate_after_quiet_exit`: the last recovery ended with no inflation, and no
    /// timeout or inflated exit since (ns-2's `last_cwnd_action_` still `CWND_ACTION_DUPACK`).
    quiet_exit: bool,
    /// The inflation added outside recovery under `quiet_exit`, bytes (ns-2's `dupwnd_` there).
    inflated_outside: u64,
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
            // `recover_guard_after_timeout_only`: FullTcpAgent::dupack_action() (tcp/tcp-full.cc).
            let unguarded = s.cfg.recover_guard_after_timeout_only && self.fast_retransmitted;
            if s.snd_una > s.recover || !s.cfg.newreno_recover_guard || less_careful || ack_heuristic || unguarded {
                self.fast_retransmitted = true;
                self.partial_seen = false;
                // A new recovery: ns-2's last_cwnd_action_ is CWND_ACTION_DUPACK again (no
                // inflation outside recovery is left: it starts only past the third duplicate).
                self.quiet_exit = false;
                self.inflated_outside = 0;
                let before = s.cwnd;
                s.enter_fast_recovery(out);
                // ns-2 dupack_action(): dupwnd_ = numdupacks_ on top of the halved cwnd_.
                self.dupwnd = s.cwnd.saturating_sub(s.ssthresh);
                // `halve_cwnd_unfloored`: the halved cwnd_ is ⌊window()/2⌋, maybe below
                // ssthresh (slowdown(CLOSE_SSTHRESH_HALF|CLOSE_CWND_HALF), tcp/tcp.cc).
                if let Some(base) = unfloored_half(s, before) {
                    s.set_recovery_window(base + self.dupwnd);
                }
            }
        } else if s.in_recovery {
            // RFC 5681 §3.2 step 4 (kept by RFC 6582): cwnd += SMSS per additional duplicate ACK.
            s.set_recovery_window(s.cwnd + s.mss);
            self.dupwnd += s.mss;
        } else if self.quiet_exit && s.dupacks > s.dupthresh() {
            // ns-2 NewRenoTcpAgent::recv() (tcp/tcp-newreno.cc): `++dupwnd_` on a duplicate past
            // numdupacks_ while last_cwnd_action_ is CWND_ACTION_DUPACK, even with no recovery
            // under way (the recover guard refused the fast retransmit at the third).
            s.set_recovery_window(s.cwnd + s.mss);
            self.inflated_outside += s.mss;
        }
    }

    fn on_new_ack_outside_recovery(&mut self, s: &mut SenderCore) {
        if self.inflated_outside > 0 {
            // ns-2: a new ACK with dupwnd_ > 0 sets dupwnd_ = 0 and last_cwnd_action_ =
            // CWND_ACTION_EXITED before opencwnd() (tcp/tcp-newreno.cc).
            s.set_recovery_window(s.cwnd.saturating_sub(self.inflated_outside).max(s.mss));
            self.inflated_outside = 0;
            self.quiet_exit = false;
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
                // cwnd_ itself, which the unfloored halving may have left below ssthresh (or
                // `precision_reduce` a fraction above it).
                uninflated_cwnd(s, self.dupwnd).unwrap_or_else(|| s.cwnd.min(s.ssthresh))
            };
            s.set_recovery_window(cwnd);
            s.in_recovery = false;
            s.dupacks = 0;
            // ns-2 sets last_cwnd_action_ = CWND_ACTION_EXITED only when dupwnd_ > 0 here.
            self.quiet_exit = s.cfg.newreno_inflate_after_quiet_exit && self.dupwnd == 0;
            grow_on_exit(s, acked);
            true
        } else {
            // RFC 6582 §3.2 step 3, partial acknowledgment: retransmit the first unacknowledged segment,
            // deflate cwnd by the data acknowledged, add back one SMSS if at least one SMSS was
            // acknowledged; reset the timer only on the first partial ACK (the "Impatient" variant).
            let first_partial = !self.partial_seen;
            self.partial_seen = true;
            if s.may_send_single(SendKind::PartialAck) {
                s.retransmit_una(out);
            }
            let cwnd = if s.cfg.partial_window_deflation {
                let add = if acked >= s.mss { s.mss } else { 0 };
                // ns-2 partialnewack() (tcp/tcp-newreno.cc) deflates dupwnd_ first: dupwnd_ -=
                // deflate − 1 if dupwnd_ > deflate, else cwnd_ gives the rest and dupwnd_ = 1.
                self.dupwnd = if self.dupwnd > acked { self.dupwnd - acked + add } else { s.mss };
                s.cwnd.saturating_sub(acked).max(s.mss) + add
            } else {
                // ns-2 `partial_window_deflation_` 0 (tcp/tcp-newreno.cc): dupwnd_ = 0, cwnd_
                // kept (ssthresh, or the unfloored half with `halve_cwnd_unfloored`).
                let base = uninflated_cwnd(s, self.dupwnd).unwrap_or(s.ssthresh);
                self.dupwnd = 0;
                base
            };
            s.set_recovery_window(cwnd);
            // RFC 6582 §4: Slow-but-Steady restarts the timer on every partial ACK (ns-2
            // `newreno_changes1_` 0), Impatient only on the first.
            first_partial || s.cfg.slow_but_steady
        }
    }

    fn on_timeout(&mut self, _s: &mut SenderCore) {
        self.fast_retransmitted = false;
        // ns-2: last_cwnd_action_ = CWND_ACTION_TIMEOUT; the core has reset cwnd.
        self.quiet_exit = false;
        self.inflated_outside = 0;
    }

    fn send(&mut self, s: &mut SenderCore, out: &mut Vec<OutSeg>) {
        let cap = s.cfg.newreno_recovery_burst;
        // `newreno_burst_after_partial`: NewRenoFullTcpAgent::pack_action() sets maxburst_ at
        // the first partial ACK, ack_action() restores it (tcp/tcp-full.cc).
        let held = s.cfg.newreno_burst_after_partial && !self.partial_seen;
        if cap == 0 || held || !s.in_recovery || s.snd_nxt != s.snd_max {
            s.send_available(out);
            return;
        }
        // ns-2 `NewRenoTcpAgent::recv()` (tcp/tcp-newreno.cc), `newreno_changes_` 0: while
        // dupacks_ ≥ numdupacks_ it ends with `send_much(0, 0, 2)`, at most 2 packets an ACK;
        // a partial ACK's retransmission (`output()` in `partialnewack_helper()`) is not counted.
        let mut sent = 0u32;
        while sent < cap && s.can_send_new() {
            let len = s.mss.min(s.data_end.saturating_sub(s.snd_max));
            let ask = Ask { used: s.snd_nxt - s.snd_una, need: len, limit: Limit::CwndRwnd, burst: true, what: SendKind::Window };
            if !s.send_gate(sent, ask) {
                break;
            }
            s.send_new(out);
            sent += 1;
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
