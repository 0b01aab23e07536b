//! Congestion control: how cwnd grows on new ACKs and what ssthresh becomes after a loss.
//! The connection calls this trait; recovery strategies (recovery.rs) decide what to retransmit.

use super::sender::SenderCore;

pub trait CongestionControl: Send {
    fn name(&self) -> &'static str;
    /// New data acknowledged outside loss recovery: grow cwnd.
    fn on_ack(&mut self, s: &mut SenderCore, acked: u64);
    /// ssthresh after a loss is detected.
    fn ssthresh_after_loss(&self, s: &SenderCore) -> u64;
}

/// RFC 5681 AIMD with per-ACK counting.
#[derive(Default)]
pub struct Aimd;

impl CongestionControl for Aimd {
    fn name(&self) -> &'static str {
        "aimd"
    }

    fn on_ack(&mut self, s: &mut SenderCore, acked: u64) {
        let mss = s.mss;
        if s.cwnd < s.ssthresh {
            // RFC 5681 §3.1 eq. 2: slow start, cwnd += min(N, SMSS) per ACK.
            s.set_cwnd(s.cwnd + acked.min(mss));
        } else {
            // RFC 5681 §3.1 eq. 3: congestion avoidance, cwnd += SMSS·SMSS/cwnd per ACK
            // (at least one byte, as the RFC's note on integer arithmetic requires).
            s.set_cwnd(s.cwnd + (mss * mss / s.cwnd).max(1));
        }
    }

    fn ssthresh_after_loss(&self, s: &SenderCore) -> u64 {
        // RFC 5681 §3.1 eq. 4: ssthresh = max(FlightSize / 2, 2·SMSS).
        (s.flight_size() / 2).max(2 * s.mss)
    }
}
