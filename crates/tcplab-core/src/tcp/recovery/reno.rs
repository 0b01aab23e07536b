//! Reno's fast recovery (RFC 5681 §3.2): inflate on duplicate ACKs, deflate on the next new ACK.

use super::{grow_on_exit, unfloored_half, Recovery};
use crate::tcp::state::{OutSeg, SenderCore};

/// Reno, RFC 5681 §3.2: fast retransmit on the third duplicate ACK, cwnd = ssthresh + 3·SMSS,
/// inflated by one SMSS per further duplicate ACK, deflated to ssthresh on the next new ACK
/// (even a partial one: further losses in the window then need another fast retransmit or a
/// timeout).
#[derive(Default)]
pub struct Reno {
    /// The recovery's cwnd without its inflation (ns-2's `cwnd_` beside `dupwnd_`) when
    /// `halve_cwnd_unfloored` set it below ssthresh; None: ssthresh.
    base: Option<u64>,
    /// A fast retransmit since the last timeout (ns-2 FullTcp's `last_cwnd_action_` DUPACK).
    fast_retransmitted: bool,
}

impl Recovery for Reno {
    fn name(&self) -> &'static str {
        "reno"
    }

    fn on_dupack(&mut self, s: &mut SenderCore, out: &mut Vec<OutSeg>) {
        if !s.in_recovery && s.dupacks == s.dupthresh() {
            // `recover_guard_after_timeout_only`: FullTcpAgent::dupack_action() (tcp/tcp-full.cc).
            let unguarded = s.cfg.recover_guard_after_timeout_only && self.fast_retransmitted;
            if !s.cfg.recover_guard || s.snd_una > s.recover || unguarded {
                self.fast_retransmitted = true;
                let before = s.cwnd;
                s.enter_fast_recovery(out);
                // ns-2 `RenoTcpAgent::dupack_action()` → `slowdown(CLOSE_SSTHRESH_HALF|
                // CLOSE_CWND_HALF)`, `dupwnd_ = numdupacks_` (tcp/tcp-reno.cc): cwnd_ + dupwnd_.
                self.base = unfloored_half(s, before);
                if let Some(base) = self.base {
                    s.set_recovery_window(base + s.dupacks as u64 * s.mss);
                }
            }
        } else if s.in_recovery {
            // RFC 5681 §3.2 step 4: each further duplicate ACK, cwnd += SMSS (a segment left).
            s.set_recovery_window(s.cwnd + s.mss);
        }
    }

    fn on_ack_in_recovery(&mut self, s: &mut SenderCore, acked: u64, _out: &mut Vec<OutSeg>) -> bool {
        // §3.2 step 6: on the next ACK of new data, cwnd = ssthresh ("deflating" the window);
        // ns-2 `RenoTcpAgent::recv()` zeroes dupwnd_ and keeps cwnd_, the unfloored half.
        s.set_recovery_window(self.base.take().unwrap_or(s.ssthresh));
        s.in_recovery = false;
        s.dupacks = 0;
        grow_on_exit(s, acked);
        true
    }

    fn on_timeout(&mut self, _s: &mut SenderCore) {
        self.fast_retransmitted = false;
    }

    fn window_inflation(&self, s: &SenderCore) -> u64 {
        // cwnd = ssthresh + one SMSS per duplicate ACK from the fast retransmit on (RFC 5681 §3.2
        // steps 2–4; ns-2's cwnd_ halved and dupwnd_ = numdupacks_, then ++dupwnd_).
        if s.in_recovery {
            s.cwnd.saturating_sub(self.base.unwrap_or(s.ssthresh))
        } else {
            0
        }
    }
}
