//! Linux's TSO deferral: `tcp_tso_should_defer` (net/ipv4/tcp_output.c), the rule by which
//! `tcp_write_xmit` holds the head skb of the write queue back for the next ACK instead of
//! sending the little the window lets out now. Linux builds every TCP skb for GSO
//! (`sk_setup_caps` sets `NETIF_F_GSO` on every TCP socket), so the rule applies with TSO and GSO
//! off on the device too; the segments are cut only below TCP. The `tso_defer` knob (`linux6`).
//!
//! The write queue is modelled as Linux's `tcp_sendmsg_locked` fills it from one write: skbs of
//! `size_goal` bytes (`tcp_xmit_size_goal`: the GSO limit, at most half the largest window the
//! peer has offered, `tcp_bound_to_half_wnd`), laid out as the write, run against its own pushes,
//! leaves them (`WriteQueue`); a send may take bytes of the next skb (`tcp_grow_skb`); PSH goes
//! where the kernel puts it (`psh_at`, `WriteQueue`). Not modelled: TSQ
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

/// Why `tcp_tso_should_defer` held the head skb: "Three cases are tracked: 1) We are
/// cwnd-limited 2) We are rwnd-limited 3) We are application limited." The first sets
/// `tcp_write_xmit`'s `is_cwnd_limited`, which `tcp_cwnd_validate` records for the window's growth
/// (`tcp_is_cwnd_limited`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Deferred {
    Cwnd,
    Rwnd,
    App,
}

/// Linux `tcp_tso_should_defer`: true when the head skb waits for the next ACK. Called only for a
/// skb of more than one segment (`tso_segs > 1`) and with room for at least one in cwnd.
pub fn should_defer(v: &DeferView) -> bool {
    defer(v).is_some()
}

/// `should_defer` with the reason: None when the skb goes now.
pub fn defer(v: &DeferView) -> Option<Deferred> {
    if v.recovering {
        return None;
    }
    // "allowing defer only if the last write was recent (1 ms)".
    if v.now > v.last_xmit + RECENT_WRITE {
        return None;
    }
    let cong_win = v.cwnd_room;
    let limit = v.send_win.min(cong_win);
    // "If a full-sized TSO skb can be sent, do it."
    if limit >= v.max_segs * v.mss {
        return None;
    }
    // "Middle in queue won't get any more data, full sendable already?"
    if !v.skb_is_tail && limit >= v.skb_len {
        return None;
    }
    // "If at least some fraction of a window is available, just use it."
    let chunk = v.snd_wnd.min(v.cwnd) / TSO_WIN_DIVISOR;
    if limit >= chunk {
        return None;
    }
    let Some(head_sent) = v.head_sent else { return None };
    // "When is the ACK expected?" head->tstamp + srtt; "If next ACK is likely to come too late,
    // ie in more than min(1ms, half srtt), do not defer."
    let expected_ack = head_sent + v.srtt;
    let threshold = (v.srtt / 2).min(ACK_SOON);
    if expected_ack > v.now + threshold {
        return None;
    }
    // "Ok, it looks like it is advisable to defer": cwnd-limited, rwnd-limited, or the
    // application may add to the skb.
    if cong_win < v.send_win {
        if cong_win <= v.skb_len {
            return Some(Deferred::Cwnd);
        }
    } else if v.send_win <= v.skb_len {
        return Some(Deferred::Rwnd);
    }
    // "If this packet won't get more data, do not wait."
    (!v.skb_fin).then_some(Deferred::App)
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

/// Where the kernel's sender sets PSH on new data, for the segment ending at `at`, with the
/// write queue of `head_skb` (one write of skbs of `goal` bytes from `first` to `end`), the
/// largest window the peer had offered when the write was made (`max_window`), and the end of
/// the skb `tcp_write_xmit` is transmitting (`xmit_end`, None for a skb of one segment):
///
/// - `__tcp_transmit_skb`: "Force a PSH flag on all (GSO) packets to expedite GRO flush at
///   receiver" (`tcp_skb_pcount(skb) > 1`), and `tcp_gso_segment` keeps PSH (and FIN) on the
///   last segment only: a transmitted skb of two segments or more ends with PSH. A skb of one
///   segment is not forced ("they might be sent under high congestion events").
/// - `tcp_mark_push` on the write queue by `tcp_sendmsg_locked`: at the write's end (`tcp_push`,
///   no MSG_MORE), and as each full skb is queued when `forced_push` holds
///   (`after(write_seq, pushed_seq + (max_window >> 1))`, `pushed_seq` starting at the first data
///   byte, `tcp_connect`): every `max_window / 2 / goal + 1` skbs. `tcp_fragment` and
///   `tso_fragment` keep PSH on the second part ("PSH and FIN should only be set in the second
///   packet"), so the mark stays on the skb's last segment whatever sends it.
///
/// This is the rule for skbs of `goal` from the first byte; `WriteQueue` places them as the
/// write's own pushes leave them. Checked on the testbed's captures (docs/testbed.md): PSH on
/// every second segment while each ACK lets out two, none on single sends.
pub fn psh_at(at: u64, first: u64, end: u64, goal: u64, max_window: u64, xmit_end: Option<u64>) -> bool {
    if xmit_end == Some(at) || at == end {
        return true;
    }
    let goal = goal.max(1);
    if at <= first || at > end || (at - first) % goal != 0 {
        return false;
    }
    let every = (max_window / 2) / goal + 1;
    ((at - first) / goal) % every == 0
}

/// One skb of the write queue as `tcp_sendmsg_locked` left it: its first and end byte, and
/// whether `tcp_mark_push` marked it (PSH on its last segment, whatever sends it: `tcp_fragment`
/// and `tso_fragment` keep PSH on the second part).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueuedSkb {
    pub start: u64,
    pub end: u64,
    pub psh: bool,
}

/// The write queue one write left behind, from Linux `tcp_sendmsg_locked` run against
/// `tcp_write_xmit`: the write appends to the tail skb until it holds `size_goal`
/// (`tcp_xmit_size_goal`); each full skb is pushed, with PSH when `forced_push`
/// (`after(write_seq, pushed_seq + (max_window >> 1))`, `tcp_mark_push`, then
/// `__tcp_push_pending_frames`: as much as the window takes) or alone when it is the send head
/// (`tcp_push_one`: one skb's worth). What those pushes send in skbs of `tcp_tso_autosize`'s
/// segments (`tcp_mss_split_point`, `tcp_cwnd_test`'s quota) leaves the head skb's remainder
/// in the queue, and the write goes on filling that remainder: so with an initial window of 10
/// and skbs of 22 segments, the queue after the write starts at segment 10 and its skbs end at
/// segments 32, 54, 76, ... (the testbed's kernel captures: PSH alone on segments 31, 53, 97,
/// 141, ..., 0-based). `tcp_push` at the write's end marks the last skb.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WriteQueue {
    /// The write's first and end byte.
    pub start: u64,
    pub end: u64,
    /// The skbs still queued while the pushes could send, in order (the bytes before the first
    /// were sent during the write).
    skbs: Vec<QueuedSkb>,
    /// From here to `end`, skbs of `goal` bytes, made when the window had no room left.
    periodic: u64,
    goal: u64,
    /// Of the skbs from `periodic`: the first `forced_push` marks, and the period of the marks.
    first_mark: u64,
    every: u64,
}

impl WriteQueue {
    /// Run one write of `bytes` from `start` with `cwnd` and `in_flight` segments, skbs of
    /// `goal` bytes, the peer's largest window `max_window` and `max_segs` segments a skb
    /// (`tcp_tso_autosize`).
    pub fn write(start: u64, bytes: u64, mss: u64, goal: u64, max_window: u64, cwnd: u64, in_flight: u64, max_segs: u64) -> WriteQueue {
        let mss = mss.max(1);
        let goal = goal.max(mss);
        let end = start + bytes;
        let half = max_window / 2;
        let mut q: Vec<QueuedSkb> = Vec::new();
        let mut head = 0usize; // the send head: the first skb not wholly sent
        let mut in_flight = in_flight;
        let mut write_seq = start;
        let mut pushed = start;
        // tcp_write_xmit from the send head: skbs of at most the quota (`tcp_cwnd_test`: the room
        // in cwnd, at most half of it) and `max_segs`; `one` for `tcp_push_one`.
        let send = |q: &mut Vec<QueuedSkb>, head: &mut usize, in_flight: &mut u64, one: bool| {
            while *head < q.len() && *in_flight < cwnd {
                let s = &mut q[*head];
                let n = skb_segments(cwnd, cwnd - *in_flight, max_segs, (s.end - s.start).div_ceil(mss));
                *in_flight += n;
                s.start = (s.start + n * mss).min(s.end);
                if s.start >= s.end {
                    *head += 1;
                }
                if one {
                    break;
                }
            }
        };
        let mut periodic = None;
        while write_seq < end {
            // Once the window is full and the tail skb is full, nothing more leaves during the
            // write: the rest is skbs of `goal`.
            if in_flight >= cwnd && q.last().map_or(true, |t| t.end - t.start >= goal) {
                periodic = Some(write_seq);
                break;
            }
            let tail_room = if head < q.len() { q.last().map_or(0, |t| goal.saturating_sub(t.end - t.start)) } else { 0 };
            let copy = if tail_room == 0 {
                q.push(QueuedSkb { start: write_seq, end: write_seq, psh: false });
                goal
            } else {
                tail_room
            }
            .min(end - write_seq);
            let t = q.last_mut().expect("a tail skb");
            t.end += copy;
            write_seq += copy;
            if write_seq >= end || t.end - t.start < goal {
                continue;
            }
            if write_seq - pushed > half {
                t.psh = true;
                pushed = write_seq;
                send(&mut q, &mut head, &mut in_flight, false);
            } else if head + 1 == q.len() {
                send(&mut q, &mut head, &mut in_flight, true);
            }
        }
        let periodic = periodic.unwrap_or(end);
        let skbs: Vec<QueuedSkb> = q.split_off(head.min(q.len()));
        // The marks from `periodic`: the j-th skb ends at periodic + (j + 1)·goal, marked when
        // that passes pushed + half; then every `every` skbs.
        let gap = half.saturating_sub(periodic - pushed);
        let first_mark = if periodic - pushed > half { 0 } else { gap / goal };
        let mut wq = WriteQueue { start, end, skbs, periodic, goal, first_mark, every: half / goal + 1 };
        // tcp_push at the end of the write: the last skb.
        if periodic >= end {
            if let Some(t) = wq.skbs.last_mut() {
                t.psh = true;
            }
        }
        wq
    }

    /// The queued skb holding byte `seq`: its end and its mark. None for a byte sent during the
    /// write or outside it.
    pub fn skb_at(&self, seq: u64) -> Option<(u64, bool)> {
        if seq < self.start || seq >= self.end {
            return None;
        }
        if seq >= self.periodic {
            let j = (seq - self.periodic) / self.goal;
            let e = (self.periodic + (j + 1) * self.goal).min(self.end);
            let forced = j >= self.first_mark && (j - self.first_mark) % self.every == 0 && e - (self.periodic + j * self.goal) == self.goal;
            return Some((e, forced || e == self.end));
        }
        self.skbs.iter().find(|s| s.start <= seq && seq < s.end).map(|s| (s.end, s.psh))
    }

    /// The first byte still queued after the write (the sends during it took those before).
    pub fn first_queued(&self) -> u64 {
        self.skbs.first().map_or(self.periodic, |s| s.start)
    }
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
    fn the_reason_of_a_deferral_is_the_window_that_limits() {
        // "1) We are cwnd-limited": cwnd's room (1 segment) below the receiver's window, and no
        // more than the skb: tcp_write_xmit's is_cwnd_limited, which lets the window grow.
        assert_eq!(defer(&view()), Some(Deferred::Cwnd));
        // "2) We are rwnd-limited": the receiver's window from the skb on is the smaller.
        assert_eq!(defer(&DeferView { send_win: MSS / 2, ..view() }), Some(Deferred::Rwnd));
        // "3) We are application limited": cwnd's room below the receiver's window but more than
        // the (tail) skb, which the application may still fill.
        assert_eq!(defer(&DeferView { skb_len: MSS / 2, skb_is_tail: true, ..view() }), Some(Deferred::App));
        assert_eq!(defer(&DeferView { recovering: true, ..view() }), None);
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

    #[test]
    fn the_write_fills_the_remainder_the_initial_window_leaves() {
        // The testbed's case: 500 segments in one write, the SYN-ACK's 65,160 B window (skbs of
        // 22), cwnd 10, skbs of 2 (tcp_tso_autosize). The kernel's capture: PSH alone on 0-based
        // segments 31, 53, 97, 141, ..., 493, and on the last.
        let seg = |k: u64| 1 + k * MSS;
        let wq = WriteQueue::write(1, 500 * MSS, MSS, 22 * MSS, 65_160, 10, 0, 2);
        assert_eq!(wq.first_queued(), seg(10));
        assert_eq!(wq.skb_at(seg(10)), Some((seg(32), true)));
        assert_eq!(wq.skb_at(seg(31)), Some((seg(32), true)));
        assert_eq!(wq.skb_at(seg(32)), Some((seg(54), true)));
        assert_eq!(wq.skb_at(seg(54)), Some((seg(76), false)));
        assert_eq!(wq.skb_at(seg(97)), Some((seg(98), true)));
        assert_eq!(wq.skb_at(seg(120)), Some((seg(142), true)));
        assert_eq!(wq.skb_at(seg(490)), Some((seg(494), true)));
        assert_eq!(wq.skb_at(seg(494)), Some((seg(500), true)));
        assert_eq!(wq.skb_at(seg(5)), None);
        let marked: Vec<u64> = (10..500).filter(|&k| wq.skb_at(seg(k)) == Some((seg(k + 1), true))).collect();
        assert_eq!(marked, vec![31, 53, 97, 141, 185, 229, 273, 317, 361, 405, 449, 493, 499]);
        // A write smaller than the window: all of it leaves during the write but the last piece.
        let small = WriteQueue::write(1, 5 * MSS, MSS, 22 * MSS, 65_160, 10, 0, 2);
        assert_eq!(small.skb_at(seg(4)), Some((seg(5), true)));
        // No room at all (cwnd full): skbs of 22 from the write's first byte.
        let full = WriteQueue::write(1, 100 * MSS, MSS, 22 * MSS, 65_160, 10, 10, 2);
        assert_eq!(full.first_queued(), 1);
        assert_eq!(full.skb_at(1), Some((seg(22), false)));
        assert_eq!(full.skb_at(seg(22)), Some((seg(44), true)));
        // An unlimited write ends its emulation as soon as the window is full.
        let big = WriteQueue::write(1, 1 << 60, MSS, 22 * MSS, 65_160, 10, 0, 2);
        assert_eq!(big.skb_at(seg(32)), Some((seg(54), true)));
    }

    #[test]
    fn psh_ends_each_gso_skb_and_every_second_write_skb_of_a_half_window() {
        let (first, end, goal, wnd) = (1, 1 + 500 * MSS, 22 * MSS, 65_160);
        let psh = |seg: u64, x: Option<u64>| psh_at(first + (seg + 1) * MSS, first, end, goal, wnd, x);
        // A transmitted skb of two segments: PSH on its last; one segment alone: none.
        assert!(psh(1, Some(first + 2 * MSS)));
        assert!(!psh(2, None));
        // forced_push: 22 segments (31,856 B) do not pass half of 65,160 B; 44 do.
        assert!(!psh(21, None));
        assert!(psh(43, None));
        assert!(!psh(65, None));
        assert!(psh(87, None));
        // The write's end (tcp_push): the last segment.
        assert!(psh(499, None));
        // A window of 40 segments: skbs of 20, the first exactly half of it (not "after"), the
        // second past it.
        assert!(!psh_at(first + 20 * MSS, first, end, 20 * MSS, 40 * MSS, None));
        assert!(psh_at(first + 40 * MSS, first, end, 20 * MSS, 40 * MSS, None));
    }
}
