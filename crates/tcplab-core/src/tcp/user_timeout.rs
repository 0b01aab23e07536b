//! `TCP_USER_TIMEOUT` (RFC 5482; RFC 9293 §3.8.3's USER TIMEOUT) as Linux applies it to
//! retransmissions: `tcp_write_timeout()` aborts the connection once
//! `retransmits_timed_out(sk, .., icsk_user_timeout)` holds — at least one RTO expiry since
//! the last forward progress (`icsk_retransmits`), and `user_timeout` elapsed since
//! `tp->retrans_stamp`, the first transmission of the data retransmitted first — and
//! `tcp_clamp_rto_to_user_timeout()` makes the retransmission timer fire at that instant
//! rather than later. The abort is `tcp_write_err()`: no segment, `sk_err = ETIMEDOUT`.
//!
//! It watches the segments a connection sends and its progress from outside, so the
//! per-packet path carries nothing; only the scripted face (`crate::scripted`) keeps one. Not
//! modelled: the zero-window probe timer's user timeout (`tcp_probe_timer()`).

use crate::units::{Time, MS};

/// Retransmission bookkeeping for the user timeout.
#[derive(Clone, Debug, Default)]
pub struct UserTimeout {
    /// `icsk->icsk_user_timeout`, ns; 0: off.
    timeout: Time,
    /// Original transmissions still unacknowledged: (seq, end, sent at).
    orig: Vec<(u64, u64, Time)>,
    /// One past the highest sequence number sent (SYN and FIN count).
    high_tx: u64,
    /// One past the highest sequence number retransmitted.
    high_rtx: u64,
    /// `tp->retrans_stamp`: set by the first retransmission (`__tcp_retransmit_skb()`),
    /// cleared once nothing retransmitted is outstanding (`tcp_any_retrans_done()`).
    retrans_stamp: Option<Time>,
    /// The connection's RTO-expiry count at its last forward progress: more than that means
    /// `icsk_retransmits > 0` (tcp_ack() zeroes it when SND.UNA advances).
    timeouts_at_progress: u64,
    snd_una: u64,
}

impl UserTimeout {
    /// `setsockopt(TCP_USER_TIMEOUT, ms)`, Linux `do_tcp_setsockopt()`: negative is EINVAL.
    pub fn set(&mut self, ms: i64) -> Result<(), &'static str> {
        if ms < 0 {
            return Err("EINVAL");
        }
        self.timeout = ms as u64 * MS;
        Ok(())
    }

    pub fn is_set(&self) -> bool {
        self.timeout > 0
    }

    /// A segment sent at `now` occupying sequence numbers `seq..end` (empty: a pure ACK).
    pub fn on_sent(&mut self, now: Time, seq: u64, end: u64) {
        if end <= seq {
            return;
        }
        if seq >= self.high_tx {
            self.orig.push((seq, end, now));
            self.high_tx = end;
            return;
        }
        if self.retrans_stamp.is_none() {
            // "if (!tp->retrans_stamp) tp->retrans_stamp = tcp_skb_timestamp_ts(..., skb)":
            // the skb's first transmission.
            let first = self.orig.iter().find(|&&(a, b, _)| a <= seq && seq < b).map_or(now, |x| x.2);
            self.retrans_stamp = Some(first);
        }
        self.high_rtx = self.high_rtx.max(end);
    }

    /// The connection after an event: SND.UNA and its count of RTO expiries.
    pub fn on_progress(&mut self, snd_una: u64, timeouts: u64) {
        if snd_una > self.snd_una {
            self.snd_una = snd_una;
            self.timeouts_at_progress = timeouts;
            self.orig.retain(|&(_, end, _)| end > snd_una);
        }
        if self.snd_una >= self.high_rtx {
            self.retrans_stamp = None;
        }
    }

    /// When the connection is aborted, if nothing changes before: `retrans_stamp +
    /// user_timeout`, once an RTO has expired without progress.
    pub fn deadline(&self, timeouts: u64) -> Option<Time> {
        if self.timeout == 0 || timeouts <= self.timeouts_at_progress {
            return None;
        }
        self.retrans_stamp.map(|t| t + self.timeout)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A FIN sent at 2.1 s, retransmitted (a probe) at 2.4 s, then by the RTO: the deadline is
    /// 3 s after the FIN's first transmission, and an ACK of it clears it.
    #[test]
    fn deadline_counts_from_the_first_transmission() {
        let mut u = UserTimeout::default();
        u.set(3000).unwrap();
        u.on_sent(0, 0, 1);
        u.on_progress(1, 0);
        u.on_sent(2100 * MS, 1, 2);
        u.on_sent(2400 * MS, 1, 2);
        u.on_progress(1, 0);
        assert_eq!(u.deadline(0), None, "no RTO expiry yet (icsk_retransmits == 0)");
        u.on_sent(2700 * MS, 1, 2);
        assert_eq!(u.deadline(1), Some(5100 * MS));
        u.on_progress(2, 1);
        assert_eq!(u.deadline(1), None);
        assert_eq!(u.set(-1), Err("EINVAL"));
    }
}
