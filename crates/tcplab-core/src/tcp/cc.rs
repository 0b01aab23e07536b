//! Congestion control: how cwnd grows on new ACKs and what ssthresh becomes after a loss.
//! The connection calls this trait; recovery strategies (recovery.rs) decide what to retransmit.

use super::state::SenderCore;

pub trait CongestionControl: Send {
    fn name(&self) -> &'static str;
    /// New data acknowledged outside loss recovery: grow cwnd.
    fn on_ack(&mut self, s: &mut SenderCore, acked: u64);
    /// ssthresh after a loss is detected.
    fn ssthresh_after_loss(&self, s: &SenderCore) -> u64;
    /// The retransmission timer expired.
    fn on_timeout(&mut self) {}
}

/// RFC 5681 AIMD: classic per-ACK counting, or Appropriate Byte Counting (RFC 3465) when
/// `abc` = L > 0.
#[derive(Default)]
pub struct Aimd {
    /// RFC 3465 §2.1 bytes_acked: bytes acknowledged in congestion avoidance not yet turned
    /// into a window increase.
    bytes_acked: u64,
    /// Congestion avoidance without ABC: the remainder of SMSS²/cwnd carried between ACKs.
    ca_remainder: u64,
}

impl CongestionControl for Aimd {
    fn name(&self) -> &'static str {
        "aimd"
    }

    fn on_ack(&mut self, s: &mut SenderCore, acked: u64) {
        let mss = s.mss;
        let abc = s.cfg.abc as u64;
        if s.cwnd < s.ssthresh {
            self.bytes_acked = 0;
            if abc > 0 {
                // RFC 3465 §2.2: cwnd += min(N, L·SMSS); L = 1·SMSS in slow start after an RTO.
                let l = if s.slow_start_after_rto { 1 } else { abc };
                s.set_cwnd(s.cwnd + acked.min(l * mss));
            } else {
                // Classic per-ACK counting (4.3BSD, ns-2): one SMSS for every ACK of new data,
                // however little it acknowledges — what TBIT's ABC test (Ladha et al. §3) tells
                // apart from byte counting. (RFC 5681 eq. 2's min(N, SMSS) differs only for ACKs
                // of less than one SMSS; abc = 1 gives it.)
                s.set_cwnd(s.cwnd + mss);
            }
        } else if abc > 0 {
            // RFC 3465 §2.1: one SMSS per cwnd bytes acknowledged.
            self.bytes_acked += acked;
            if self.bytes_acked >= s.cwnd {
                self.bytes_acked -= s.cwnd;
                s.set_cwnd(s.cwnd + mss);
            }
        } else {
            // RFC 5681 §3.1 eq. 3: congestion avoidance, cwnd += SMSS·SMSS/cwnd per ACK. The
            // division's remainder is carried to the next ACK, so the growth is exact (whole
            // bytes would lose up to one byte an ACK: 3 % of the growth at a window of 50
            // segments), and never stalls (the RFC's note on integer arithmetic).
            let num = mss * mss + self.ca_remainder;
            self.ca_remainder = num % s.cwnd;
            s.set_cwnd(s.cwnd + num / s.cwnd);
        }
    }

    fn ssthresh_after_loss(&self, s: &SenderCore) -> u64 {
        if s.cfg.ssthresh_whole_segments {
            return s.half_window();
        }
        // RFC 5681 §3.1 eq. 4: ssthresh = max(FlightSize / 2, 2·SMSS); §3.2 step 2: data sent
        // by Limited Transmit is not included in FlightSize here.
        ((s.flight_size() - s.limited_transmit_bytes) / 2).max(2 * s.mss)
    }

    fn on_timeout(&mut self) {
        self.bytes_acked = 0;
    }
}
