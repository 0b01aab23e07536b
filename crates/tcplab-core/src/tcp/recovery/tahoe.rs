//! 4.3BSD-Tahoe's recovery as ns-2's `TcpAgent` has it: a fast retransmit restarts slow start
//! from one segment and goes back N.

use super::Recovery;
use crate::tcp::cc::CongestionEvent;
use crate::tcp::state::{OutSeg, SenderCore};

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
