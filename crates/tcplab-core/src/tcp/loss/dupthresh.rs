//! The duplicate-ACK detector: a loss is signalled by DupThresh duplicate ACKs (RFC 5681 §3.2),
//! by fewer when little is outstanding (RFC 5827 Early Retransmit), or, with SACK, by RFC 6675
//! §4's `IsLost`; on the first duplicate ACKs below the threshold, RFC 3042 Limited Transmit
//! sends one previously unsent segment (or ns-2's `send_one()`). The detector of every preset.

use super::{EarlySend, LossDetection, LossView};
use crate::tcp::config::TcpConfig;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DupThresh {
    /// RFC 5681 §3.2 DupThresh (`tcp.dupthresh`, 3).
    dupthresh: u32,
    /// RFC 5827 (`tcp.early_retransmit`).
    early_retransmit: bool,
    /// RFC 3042 (`tcp.limited_transmit`), and ns-2's `send_one()` form of it
    /// (`tcp.limited_transmit_send_one`).
    limited_transmit: bool,
    send_one: bool,
    /// ns-2 Sack1's `numdupacksFrac_` (`tcp.dupthresh_frac`; 0 off): `send_one()` is called
    /// while `dupacks_ < numdupacks(cwnd_)` = max(numdupacks_, ⌊cwnd_⌋/numdupacksFrac_)
    /// (tcp/tcp-sack1.cc); the other agents compare with `numdupacks_` alone.
    send_one_frac: u32,
}

impl DupThresh {
    pub fn new(cfg: &TcpConfig) -> Self {
        let sack1 = cfg.variant == crate::tcp::Variant::Sack1;
        DupThresh {
            dupthresh: cfg.dupthresh,
            early_retransmit: cfg.early_retransmit,
            limited_transmit: cfg.limited_transmit,
            send_one: cfg.limited_transmit_send_one,
            send_one_frac: if sack1 && cfg.limited_transmit_send_one { cfg.dupthresh_frac } else { 0 },
        }
    }
}

impl LossDetection for DupThresh {
    fn name(&self) -> &'static str {
        "dupthresh"
    }

    /// RFC 5827 §3.2 (segment-based Early Retransmit): when fewer than 4 segments are outstanding
    /// and no new segment can be sent (none ready, or the receiver's window forbids it), the
    /// threshold is the outstanding segments − 1.
    fn dupthresh(&self, v: &LossView) -> u32 {
        let std = self.dupthresh;
        if !self.early_retransmit {
            return std;
        }
        let outstanding = v.flight().div_ceil(v.mss);
        let no_new_data = v.snd_max >= v.data_end || v.snd_max + v.mss.min(v.data_end - v.snd_max) > v.snd_una + v.peer_wnd;
        if no_new_data && (2..4).contains(&outstanding) {
            (outstanding as u32 - 1).min(std)
        } else {
            std
        }
    }

    /// RFC 6675 §4 `IsLost(seq)`: DupThresh discontiguous SACKed ranges lie above it, or more
    /// than (DupThresh − 1)·SMSS SACKed bytes do. (The RFC counts discontiguous SACKed
    /// "sequences"; tcplab counts the ranges of the scoreboard, which is the same for full-sized
    /// segments, where the byte rule decides first anyway.)
    fn is_lost(&self, v: &LossView, seq: u64) -> bool {
        let (bytes, n) = v.sb.above(seq);
        n >= self.dupthresh || bytes > (self.dupthresh as u64).saturating_sub(1) * v.mss
    }

    fn early_send(&self, v: &LossView) -> Option<EarlySend> {
        // RFC 3042 §2: on each of the first two duplicate ACKs (below the threshold, outside
        // recovery; with SACK only on an ACK with new SACK information, RFC 6675 §5 step 3).
        // ns-2's send_one() (Sack1 with `numdupacksFrac_`): below max(numdupacks_,
        // ⌊cwnd_⌋/numdupacksFrac_), which may be more than two.
        let below = if self.send_one_frac > 0 {
            v.dupacks < self.dupthresh.max((v.cwnd / v.mss / self.send_one_frac as u64) as u32)
        } else {
            v.dupacks <= 2 && v.dupacks < self.dupthresh
        };
        let eligible = self.limited_transmit && !v.in_recovery && below && (!v.sack_ok || v.newly_sacked > 0);
        if !eligible || v.snd_nxt >= v.data_end {
            return None;
        }
        let len = v.mss.min(v.data_end - v.snd_nxt);
        if self.send_one {
            // ns-2 send_one() (tcp/tcp.cc, `singledup_`): send t_seqno_ if t_seqno_ ≤
            // highest_ack_ + min(wnd_, cwnd_ + dupacks_) — the next segment from snd_nxt, which
            // after a timeout is a go-back-N retransmission, with the window grown by the
            // duplicate ACKs so far.
            return Some(EarlySend { seq: v.snd_nxt, len, used: v.snd_nxt - v.snd_una, allowance: v.dupacks as u64 * v.mss, new_data: v.snd_nxt == v.snd_max });
        }
        if v.snd_nxt != v.snd_max {
            return None; // nothing previously unsent (still resending after a timeout)
        }
        // "if the receiver's advertised window allows ... and the amount of outstanding data
        // would remain less than or equal to the congestion window plus 2 segments" (§2).
        Some(EarlySend { seq: v.snd_nxt, len, used: v.flight(), allowance: 2 * v.mss, new_data: true })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::SackBlock;
    use crate::tcp::sack::Scoreboard;

    fn view(sb: &Scoreboard) -> LossView<'_> {
        LossView { mss: 1000, snd_una: 1, snd_nxt: 100_001, snd_max: 100_001, data_end: 1 << 40, peer_wnd: 1 << 40, cwnd: 1 << 40, dupacks: 0, in_recovery: false, sack_ok: true, newly_sacked: 0, sb }
    }

    fn b(l: u64, r: u64) -> SackBlock {
        SackBlock { left: l, right: r }
    }

    /// RFC 6675 §4 IsLost: with DupThresh 3 and SMSS 1000, a byte is lost once more than 2000
    /// bytes (three full segments) or three discontiguous ranges above it are SACKed.
    #[test]
    fn is_lost_rule() {
        let d = DupThresh { dupthresh: 3, early_retransmit: false, limited_transmit: false, send_one: false, send_one_frac: 0 };
        let mut s = Scoreboard::default();
        s.update(1, 100_001, &[b(1001, 3001)]);
        assert!(!d.is_lost(&view(&s), 1), "two segments SACKed above: not yet");
        s.update(1, 100_001, &[b(3001, 4001)]);
        assert!(d.is_lost(&view(&s), 1), "three segments SACKed above");
        // Three small discontiguous ranges (100 bytes each) also make it lost.
        let mut t = Scoreboard::default();
        t.update(1, 100_001, &[b(201, 301), b(401, 501), b(601, 701)]);
        assert!(d.is_lost(&view(&t), 1));
        assert!(!d.is_lost(&view(&t), 350));
    }

    /// RFC 5827 §3.2: 3 segments outstanding and nothing new to send: the threshold is 2.
    #[test]
    fn early_retransmit_lowers_the_threshold_only_without_new_data() {
        let d = DupThresh { dupthresh: 3, early_retransmit: true, limited_transmit: false, send_one: false, send_one_frac: 0 };
        let sb = Scoreboard::default();
        let v = LossView { snd_max: 3001, snd_nxt: 3001, data_end: 3001, ..view(&sb) };
        assert_eq!(d.dupthresh(&v), 2);
        assert_eq!(d.dupthresh(&LossView { data_end: 10_001, ..v }), 3, "new data can go");
        assert_eq!(d.dupthresh(&LossView { snd_max: 5001, snd_nxt: 5001, data_end: 5001, ..v }), 3, "4 outstanding");
    }
}
