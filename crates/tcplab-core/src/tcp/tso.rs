//! Linux's TSO deferral: `tcp_tso_should_defer` (net/ipv4/tcp_output.c), the rule by which
//! `tcp_write_xmit` holds the head skb of the write queue back for the next ACK instead of
//! sending the little the window lets out now. Linux builds every TCP skb for GSO
//! (`sk_setup_caps` sets `NETIF_F_GSO` on every TCP socket), so the rule applies with TSO and GSO
//! off on the device too; the segments are cut only below TCP. The `tso_defer` knob (`linux6`).
//!
//! The write queue is modelled as Linux's `tcp_sendmsg_locked` fills it from one write: skbs of
//! `size_goal` bytes (`tcp_xmit_size_goal`: the GSO limit, at most half the largest window the
//! peer has offered, `tcp_bound_to_half_wnd`) from the first byte of data. Not modelled: TSQ
//! (`tcp_small_queue_check`), whose limit of two skbs in the host's queues a veth or a link
//! empties within microseconds.
//!
//! This module imports nothing of the sender, so no circle.

use crate::units::Time;

/// `sysctl_tcp_tso_win_divisor`: a third of the window is worth sending at once.
pub const TSO_WIN_DIVISOR: u64 = 3;
/// "Avoid bursty behavior by allowing defer only if the last write was recent (1 ms)".
pub const RECENT_WRITE: Time = 1_000_000;
/// "If next ACK is likely to come too late, ie in more than min(1ms, half srtt), do not defer."
pub const ACK_SOON: Time = 1_000_000;
/// `TCP_MSS_DEFAULT`: below this largest window, `tcp_bound_to_half_wnd` does not halve it.
pub const TCP_MSS_DEFAULT: u64 = 536;

/// What `tcp_tso_should_defer` reads, in bytes and nanoseconds.
#[derive(Clone, Copy, Debug)]
pub struct DeferView {
    pub now: Time,
    /// `tp->tcp_wstamp_ns`: when the last segment left.
    pub last_xmit: Time,
    /// `icsk_ca_state >= TCP_CA_Recovery` (Recovery or Loss): never deferred there.
    pub recovering: bool,
    pub mss: u64,
    /// cwnd − `tcp_packets_in_flight` (the caller has checked it holds at least one segment).
    pub cwnd_room: u64,
    pub cwnd: u64,
    /// `tcp_wnd_end(tp) - TCP_SKB_CB(skb)->seq`: the receiver's window from the skb on.
    pub send_win: u64,
    /// `tp->snd_wnd`.
    pub snd_wnd: u64,
    /// The head skb: its bytes, whether it is the write queue's last, whether it carries the FIN.
    pub skb_len: u64,
    pub skb_is_tail: bool,
    pub skb_fin: bool,
    /// `tcp_tso_segs` (`tcp_tso_autosize`): the segments one skb may carry now.
    pub max_segs: u64,
    /// The first skb of the retransmit queue (the oldest unacknowledged): when it last left.
    pub head_sent: Option<Time>,
    /// SRTT, 0 before a sample.
    pub srtt: Time,
}

/// Linux `tcp_tso_should_defer`: true when the head skb waits for the next ACK. Called only for a
/// skb of more than one segment (`tso_segs > 1`) and with room for at least one in cwnd.
pub fn should_defer(v: &DeferView) -> bool {
    if v.recovering {
        return false;
    }
    // "allowing defer only if the last write was recent (1 ms)".
    if v.now > v.last_xmit + RECENT_WRITE {
        return false;
    }
    let cong_win = v.cwnd_room;
    let limit = v.send_win.min(cong_win);
    // "If a full-sized TSO skb can be sent, do it."
    if limit >= v.max_segs * v.mss {
        return false;
    }
    // "Middle in queue won't get any more data, full sendable already?"
    if !v.skb_is_tail && limit >= v.skb_len {
        return false;
    }
    // "If at least some fraction of a window is available, just use it."
    let chunk = v.snd_wnd.min(v.cwnd) / TSO_WIN_DIVISOR;
    if limit >= chunk {
        return false;
    }
    let Some(head_sent) = v.head_sent else { return false };
    // "When is the ACK expected?" head->tstamp + srtt; "If next ACK is likely to come too late,
    // ie in more than min(1ms, half srtt), do not defer."
    let expected_ack = head_sent + v.srtt;
    let threshold = (v.srtt / 2).min(ACK_SOON);
    if expected_ack > v.now + threshold {
        return false;
    }
    // "Ok, it looks like it is advisable to defer": cwnd-limited, rwnd-limited, or the
    // application may add to the skb.
    if cong_win < v.send_win {
        if cong_win <= v.skb_len {
            return true;
        }
    } else if v.send_win <= v.skb_len {
        return true;
    }
    // "If this packet won't get more data, do not wait."
    !v.skb_fin
}

/// Whether a deferral `should_defer` decided is the window's doing: "1) We are cwnd-limited"
/// (`cong_win < send_win && cong_win <= skb->len`), where `tcp_tso_should_defer` sets
/// `*is_cwnd_limited = true` for `tcp_write_xmit` to hand `tcp_cwnd_validate`: a sender that
/// keeps one segment of its window back for the next ACK is still limited by cwnd, and its
/// controller keeps growing it (`tcp_is_cwnd_limited`).
pub fn deferral_is_cwnd_limited(v: &DeferView) -> bool {
    v.cwnd_room < v.send_win && v.cwnd_room <= v.skb_len
}

/// Linux `tcp_xmit_size_goal` for a write: the GSO limit (`sk_gso_max_size`) bounded to half the
/// largest window the peer has offered (`tcp_bound_to_half_wnd`), in whole segments.
pub fn size_goal(mss: u64, max_window: u64, gso_max_size: u64) -> u64 {
    let mss = mss.max(1);
    let cutoff = if max_window > TCP_MSS_DEFAULT { max_window / 2 } else { max_window };
    let bytes = if cutoff > 0 && gso_max_size > cutoff { cutoff } else { gso_max_size };
    (bytes / mss).max(1) * mss
}

/// The head skb of the write queue at `seq` when one write filled it with skbs of `goal` bytes
/// from `first` up to `end`: its bytes from `seq` and whether it is the last.
pub fn head_skb(seq: u64, first: u64, end: u64, goal: u64) -> (u64, bool) {
    let goal = goal.max(1);
    let off = seq.saturating_sub(first);
    let skb_end = (first + (off / goal + 1) * goal).min(end);
    (skb_end.saturating_sub(seq), skb_end >= end)
}

/// The segments the next skb may carry (`tcp_write_xmit`): `tcp_cwnd_test`'s quota (the room in
/// cwnd, at most half of cwnd, at least one), at most `max_segs` (`tcp_mss_split_point`), and
/// never beyond the head skb.
pub fn skb_segments(cwnd_segs: u64, room_segs: u64, max_segs: u64, skb_segs: u64) -> u64 {
    let quota = room_segs.min((cwnd_segs / 2).max(1));
    quota.min(max_segs).min(skb_segs).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1448;
    const MS: Time = 1_000_000;

    fn view() -> DeferView {
        // 10 segments of cwnd, 9 in flight, the last send 0.5 ms ago, the oldest segment sent one
        // SRTT ago (its ACK due now), a 22-segment skb at the head of the queue.
        DeferView {
            now: 121 * MS,
            last_xmit: 121 * MS - MS / 2,
            recovering: false,
            mss: MSS,
            cwnd_room: MSS,
            cwnd: 10 * MSS,
            send_win: 40 * MSS,
            snd_wnd: 45 * MSS,
            skb_len: 22 * MSS,
            skb_is_tail: false,
            skb_fin: false,
            max_segs: 2,
            head_sent: Some(61 * MS),
            srtt: 60 * MS,
        }
    }

    #[test]
    fn one_segment_of_room_after_a_recent_send_waits_for_the_next_ack() {
        assert!(should_defer(&view()));
        // Each way out of tcp_tso_should_defer, in its order.
        assert!(!should_defer(&DeferView { recovering: true, ..view() }));
        assert!(!should_defer(&DeferView { last_xmit: 121 * MS - MS - 1, ..view() }));
        assert!(!should_defer(&DeferView { cwnd_room: 2 * MSS, ..view() }));
        assert!(!should_defer(&DeferView { skb_len: MSS, ..view() }));
        assert!(!should_defer(&DeferView { cwnd: 3 * MSS, ..view() }));
        assert!(!should_defer(&DeferView { head_sent: None, ..view() }));
        // The oldest segment's ACK is more than 1 ms away: no reason to wait.
        assert!(!should_defer(&DeferView { head_sent: Some(62 * MS + 1), ..view() }));
        assert!(should_defer(&DeferView { head_sent: Some(62 * MS), ..view() }));
        assert!(should_defer(&DeferView { head_sent: Some(61 * MS + MS / 2), ..view() }));
        // The tail skb with the FIN still waits when the window cannot take it whole.
        assert!(should_defer(&DeferView { skb_is_tail: true, skb_fin: true, ..view() }));
        // ... and goes when it can.
        assert!(!should_defer(&DeferView { skb_is_tail: true, skb_fin: true, skb_len: MSS / 2 + MSS / 4, cwnd_room: MSS, ..view() }));
    }

    #[test]
    fn write_queue_skbs_are_half_the_offered_window() {
        // A 16-bit SYN-ACK window: half of 65535 holds 22 segments of 1448 B.
        assert_eq!(size_goal(MSS, 65_535, 65_536), 22 * MSS);
        assert_eq!(size_goal(MSS, 1 << 30, 65_536), 45 * MSS);
        assert_eq!(head_skb(1, 1, 1 + 500 * MSS, 22 * MSS), (22 * MSS, false));
        assert_eq!(head_skb(1 + 21 * MSS, 1, 1 + 500 * MSS, 22 * MSS), (MSS, false));
        assert_eq!(head_skb(1 + 495 * MSS, 1, 1 + 500 * MSS, 22 * MSS), (5 * MSS, true));
        assert_eq!(skb_segments(10, 3, 2, 22), 2);
        assert_eq!(skb_segments(10, 9, 45, 22), 5);
        assert_eq!(skb_segments(10, 1, 2, 22), 1);
    }
}
