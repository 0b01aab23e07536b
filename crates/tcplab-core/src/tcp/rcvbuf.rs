//! Linux 6.x's receive buffer and the window it advertises (`rcv_buffer = "linux"`), from
//! net/ipv4/tcp_input.c and tcp_output.c: the first window (`tcp_select_initial_window`,
//! `tcp_init_buffer_space`), the memory-to-window ratio (`scaling_ratio`, `tcp_measure_rcv_mss`,
//! `tcp_win_from_space`), window growth (`tcp_grow_window`, `__tcp_grow_window`: `rcv_ssthresh`,
//! each growth a quick-ACK credit), the advertised window (`__tcp_select_window`,
//! `tcp_select_window`), the receiver's RTT (`tcp_rcv_rtt_measure`, `tcp_rcv_rtt_measure_ts`) and
//! autotuning once per receiver RTT (`tcp_rcv_space_adjust`, `tcp_rcvbuf_grow`).
//!
//! The simulated application reads every in-order byte as soon as it arrives (after the ACK
//! decision, as a process woken by the softirq does), so the memory held is the segment being
//! processed plus the out-of-order queue. Window scaling is not on the wire: the window a segment
//! carries is in bytes, the kernel's 16-bit field times 2^wscale, i.e. already rounded to the
//! scale's granularity (`ALIGN(window, 1 << rcv_wscale)`). Not modelled: memory pressure
//! (`tcp_under_memory_pressure`, `tcp_clamp_window`, `tcp_prune_queue`), the window-update ACK
//! of `tcp_cleanup_rbuf`, `SO_RCVBUF` (`SOCK_RCVBUF_LOCK`), `tcp_shrink_window`.

use crate::units::Time;

/// TCP_RMEM_TO_WIN_SCALE: `scaling_ratio` is a fraction of 256.
const RMEM_TO_WIN_SCALE: u32 = 8;
/// TCP_DEFAULT_SCALING_RATIO: half the memory is payload until a segment is measured.
pub const DEFAULT_SCALING_RATIO: u64 = 1 << (RMEM_TO_WIN_SCALE - 1);
/// net.ipv4.tcp_rmem[1]: the initial `sk_rcvbuf`.
pub const RMEM_DEFAULT: u64 = 131_072;
/// net.ipv4.tcp_rmem[2]: the most autotuning gives; 32 MB since 6.16 ("tcp: increase
/// tcp_rmem[2] to 32 MB"; 6 MB before), the testbed kernel's value.
pub const RMEM_MAX: u64 = 32 << 20;
/// net.core.rmem_max default (212992), which also bounds the window scale.
const CORE_RMEM_MAX: u64 = 212_992;
/// TCP_MAX_WSCALE.
const MAX_WSCALE: u32 = 14;
/// TCP_INIT_CWND: `tcp_init_buffer_space` starts the per-RTT measure at 10 segments.
const INIT_CWND: u64 = 10;
/// SOCK_MIN_RCVBUF / 2: the smallest `window_clamp` (`tcp_set_window_clamp`).
const MIN_WINDOW_CLAMP: u64 = 2304;
/// `skb->truesize` of a data segment as the receiver sees it: the payload plus this much. The
/// driver sets it (a veth passes the sender's skb through); calibrated on the testbed's veths
/// from the kernel receiver's advertised windows (docs/testbed.md): `scaling_ratio` 160 for
/// 1448-byte segments, i.e. a truesize of 2304 B.
pub const TRUESIZE_OVERHEAD: u64 = 856;

/// One connection's receive buffer (the `tcp_sock` fields of the same names).
#[derive(Clone, Debug)]
pub struct RcvBuf {
    /// tp->advmss: the MSS option's value (the `mss` knob).
    advmss: u64,
    /// tp->scaling_ratio (of 256).
    pub scaling_ratio: u64,
    /// sk->sk_rcvbuf.
    pub rcvbuf: u64,
    /// tp->window_clamp, tp->rcv_ssthresh, tp->rcv_wnd (the window last advertised).
    pub window_clamp: u64,
    pub rcv_ssthresh: u64,
    pub rcv_wnd: u64,
    /// tp->rx_opt.rcv_wscale.
    pub wscale: u32,
    /// sk->sk_rmem_alloc: the segment being processed (read after the ACK decision) and the
    /// out-of-order queue.
    unread: u64,
    pub ooo_mem: u64,
    /// tp->rcvq_space: bytes copied in the last measure, and where and when it began.
    pub space: u64,
    space_seq: u64,
    space_time: Time,
    /// tp->rcv_rtt_est (rtt_us << 3, seq, time) and tp->rcv_rtt_last_tsecr.
    pub rtt_us8: u64,
    rtt_seq: u64,
    rtt_time: Option<Time>,
    last_tsecr: Option<u32>,
    /// Times autotuning raised sk_rcvbuf (for tests and traces).
    pub grows: u32,
}

/// `__tcp_win_from_space`: the window `space` bytes of memory hold.
#[inline]
fn win_from_space(ratio: u64, space: i64) -> i64 {
    (space * ratio as i64) >> RMEM_TO_WIN_SCALE
}

/// `__tcp_space_from_win`: the memory a window of `win` bytes takes.
#[inline]
fn space_from_win(ratio: u64, win: u64) -> u64 {
    (win << RMEM_TO_WIN_SCALE) / ratio
}

/// ALIGN(x, 1 << s).
#[inline]
fn align(x: u64, s: u32) -> u64 {
    let a = 1u64 << s;
    x.div_ceil(a) * a
}

impl RcvBuf {
    /// A passive or active opener's buffer when its SYN or SYN-ACK goes: `tcp_openreq_init_rwin`
    /// / `tcp_connect_init` → `tcp_select_initial_window(tcp_full_space(sk), mss − TCPOLEN_TSTAMP_ALIGNED)`.
    /// `seg_mss`: the payload of a full segment (the `mss` knob, less 12 with timestamps), which
    /// is also tp->advmss once timestamps are agreed (the kernel's growth steps of 2·1448 B on
    /// the testbed); `route_window`: the route's `window` metric (RTAX_WINDOW, the `rwnd` knob).
    pub fn new(seg_mss: u64, route_window: Option<u64>) -> RcvBuf {
        let advmss = seg_mss;
        let ratio = DEFAULT_SCALING_RATIO;
        let full = win_from_space(ratio, RMEM_DEFAULT as i64) as u64;
        // "If no clamp set the clamp to the max possible scaled window".
        let clamp0 = route_window.filter(|&w| w > 0).unwrap_or(65_535 << MAX_WSCALE);
        let mut space = clamp0.min(full);
        // "Quantize space offering to a multiple of mss if possible."
        if space > seg_mss {
            space = space / seg_mss * seg_mss;
        }
        let rcv_wnd = space;
        let wscale = Self::wscale_of(space, clamp0);
        let window_clamp = (65_535u64 << wscale).min(clamp0);
        RcvBuf {
            advmss,
            scaling_ratio: ratio,
            rcvbuf: RMEM_DEFAULT,
            window_clamp,
            rcv_ssthresh: rcv_wnd,
            rcv_wnd,
            wscale,
            unread: 0,
            ooo_mem: 0,
            space: 0,
            space_seq: 1,
            space_time: 0,
            rtt_us8: 0,
            rtt_seq: 0,
            rtt_time: None,
            last_tsecr: None,
            grows: 0,
        }
    }

    /// tcp_select_initial_window(): "Set window scaling on max possible window", for an initial
    /// window `space` under the clamp `clamp0`.
    fn wscale_of(space: u64, clamp0: u64) -> u32 {
        let ws_space = space.max(RMEM_MAX).max(CORE_RMEM_MAX).min(clamp0);
        (63 - ws_space.leading_zeros() as i32 - 15).clamp(0, MAX_WSCALE as i32) as u32
    }

    /// The window scale an end with this buffer announces on its SYN (`rcv_wscale`), for the
    /// route window `route_window` (the `rwnd` knob): what a capture writes in the option.
    pub fn syn_wscale(route_window: Option<u64>) -> u8 {
        Self::new(1448, route_window).wscale as u8
    }

    /// The window field of the SYN or SYN-ACK (`tcp_make_synack`: min(rcv_wnd, 65535), never
    /// scaled).
    pub fn syn_window(&self) -> u64 {
        self.rcv_wnd.min(65_535)
    }

    fn full_space(&self) -> i64 {
        win_from_space(self.scaling_ratio, self.rcvbuf as i64)
    }

    /// tcp_space(): the window the free memory holds.
    fn tcp_space(&self) -> i64 {
        win_from_space(self.scaling_ratio, self.rcvbuf as i64 - (self.unread + self.ooo_mem) as i64)
    }

    /// The memory `len` bytes of data take (`skb->truesize`).
    pub fn truesize(len: u64) -> u64 {
        len + TRUESIZE_OVERHEAD
    }

    /// tcp_init_buffer_space() when the connection is established at `now` with rcv_nxt
    /// `rcv_nxt` (tcp_app_win = 31 reserves one segment of the window).
    pub fn init_buffer_space(&mut self, now: Time, rcv_nxt: u64) {
        self.space_time = now;
        self.space_seq = rcv_nxt;
        let maxwin = self.full_space().max(0) as u64;
        if self.window_clamp >= maxwin {
            self.window_clamp = maxwin;
            if maxwin > 4 * self.advmss {
                self.window_clamp = (maxwin - (maxwin >> 31)).max(4 * self.advmss);
            }
        }
        // "Force reservation of one segment."
        if self.window_clamp > 2 * self.advmss && self.window_clamp + self.advmss > maxwin {
            self.window_clamp = (2 * self.advmss).max(maxwin.saturating_sub(self.advmss));
        }
        self.rcv_ssthresh = self.rcv_ssthresh.min(self.window_clamp);
        self.space = self.rcv_ssthresh.min(self.rcv_wnd).min(INIT_CWND * self.advmss);
    }

    /// tcp_measure_rcv_mss(): a segment of `len` bytes at least the receive MSS and not equal to
    /// it sets `scaling_ratio` = len / truesize, and the window clamp follows
    /// (`tcp_set_window_clamp(sk, tcp_win_from_space(sk, sk->sk_rcvbuf))`).
    pub fn measure(&mut self, len: u64) {
        let old = self.scaling_ratio;
        let r = (len << RMEM_TO_WIN_SCALE) / Self::truesize(len);
        self.scaling_ratio = r.max(1);
        if old != self.scaling_ratio {
            let val = win_from_space(self.scaling_ratio, self.rcvbuf as i64).max(0) as u64;
            self.set_window_clamp(val);
            if self.window_clamp < self.rcv_ssthresh {
                self.rcv_ssthresh = self.window_clamp;
            }
        }
    }

    /// tcp_set_window_clamp().
    fn set_window_clamp(&mut self, val: u64) {
        let new = val.max(MIN_WINDOW_CLAMP);
        if new == self.window_clamp {
            return;
        }
        let old = self.window_clamp;
        self.window_clamp = new;
        if new < old {
            // __tcp_adjust_rcv_ssthresh() (no reserved memory).
            self.rcv_ssthresh = self.rcv_ssthresh.min(new);
        } else {
            self.rcv_ssthresh = self.rcv_ssthresh.max(self.rcv_wnd.min(new));
        }
    }

    /// A data segment of `len` bytes is queued in order (tcp_queue_rcv → skb_set_owner_r).
    pub fn charge(&mut self, len: u64) {
        self.unread += Self::truesize(len);
    }

    /// tcp_grow_window(sk, skb, adjust) for a segment of `len` bytes: `adjust` for in-order data
    /// (tcp_event_data_recv, whose `truesize_adjust` leaves the payload of a page-fragment skb),
    /// not for out-of-order data (tcp_data_queue_ofo). True when rcv_ssthresh grew: the caller
    /// gives the quick-ACK credit (`inet_csk(sk)->icsk_ack.quick |= 1`).
    pub fn grow_window(&mut self, len: u64, adjust: bool) -> bool {
        let room = (self.window_clamp as i64).min(self.tcp_space()) - self.rcv_ssthresh as i64;
        if room <= 0 {
            return false;
        }
        let truesize = if adjust { len } else { Self::truesize(len) };
        // Check #2: "Increase window, if skb with such overhead will fit to rcvbuf in future."
        let mut incr = if win_from_space(self.scaling_ratio, truesize as i64) <= len as i64 {
            2 * self.advmss
        } else {
            self.grow_window_slow(len, truesize)
        };
        if incr == 0 {
            return false;
        }
        incr = incr.max(2 * len);
        self.rcv_ssthresh += (room as u64).min(incr);
        true
    }

    /// __tcp_grow_window(): "Slow part of check#2".
    fn grow_window_slow(&self, len: u64, truesize: u64) -> u64 {
        let mut truesize = win_from_space(self.scaling_ratio, truesize as i64) >> 1;
        let mut window = win_from_space(self.scaling_ratio, RMEM_MAX as i64) >> 1;
        while self.rcv_ssthresh as i64 <= window {
            if truesize <= len as i64 {
                // 2 * icsk_ack.rcv_mss: the full segment's payload.
                return 2 * len.max(1);
            }
            truesize >>= 1;
            window >>= 1;
        }
        0
    }

    /// __tcp_select_window() with the receive MSS `rcv_mss`: the window free memory allows,
    /// bounded by rcv_ssthresh, and whether it asks to leave quick-ACK mode ("free_space <
    /// full_space / 2": `icsk_ack.quick = 0`).
    pub fn select_window_raw(&self, rcv_mss: u64) -> (u64, bool) {
        let mut mss = rcv_mss as i64;
        let mut free = self.tcp_space();
        let allowed = self.full_space();
        let full = (self.window_clamp as i64).min(allowed);
        if mss > full {
            mss = full;
            if mss <= 0 {
                return (0, false);
            }
        }
        let mut quick_off = false;
        if free < full >> 1 {
            quick_off = true;
            free = (free.max(0) as u64 >> self.wscale << self.wscale) as i64;
            if free < allowed >> 4 || free < mss {
                return (0, true);
            }
        }
        let free = (free.max(0) as u64).min(self.rcv_ssthresh);
        if self.wscale > 0 {
            // "Advertise enough space so that it won't get scaled away."
            return (align(free, self.wscale), quick_off);
        }
        let mss = mss as u64;
        let mut window = self.rcv_wnd;
        // "Get the largest window that is a nice multiple of mss."
        if window + mss <= free || window > free {
            window = free / mss * mss;
        } else if mss as i64 == full && free > window + (full as u64 >> 1) {
            window = free;
        }
        (window, quick_off)
    }

    /// tcp_select_window() for an ACK sent with rcv_nxt `rcv_nxt` after the last at `rcv_wup`:
    /// the window never shrinks (`tcp_receive_window`), and becomes rcv_wnd. Returns the window
    /// in bytes and whether quick-ACK mode ends.
    pub fn select_window(&mut self, rcv_nxt: u64, rcv_wup: u64, rcv_mss: u64) -> (u64, bool) {
        let cur = (rcv_wup + self.rcv_wnd).saturating_sub(rcv_nxt);
        let (mut new, quick_off) = self.select_window_raw(rcv_mss);
        if new < cur {
            // "Never shrink the offered window".
            new = align(cur, self.wscale);
        }
        self.rcv_wnd = new;
        (new.min(65_535 << self.wscale), quick_off)
    }

    /// tcp_rcv_rtt_measure_ts(): a segment whose TSecr is new and whose payload is at least the
    /// receive MSS gives a sample now − TSecr (ms, `tcp_rtt_tsopt_us`; 0 is no sample).
    pub fn rtt_measure_ts(&mut self, ts_now: u32, tsecr: u32, len: u64, rcv_mss: u64, queue_empty: bool) {
        if self.last_tsecr == Some(tsecr) {
            return;
        }
        self.last_tsecr = Some(tsecr);
        if len >= rcv_mss {
            let delta = ts_now.wrapping_sub(tsecr);
            if delta > 0 && delta < i32::MAX as u32 / 1000 {
                self.rtt_update(delta as u64 * 1000, false, queue_empty);
            }
        }
    }

    /// tcp_rcv_rtt_measure(): without timestamps, the time for rcv_nxt to pass the window
    /// advertised one measure ago (Dynamic Right-Sizing); it only ever lowers the estimate.
    pub fn rtt_measure(&mut self, now: Time, rcv_nxt: u64) {
        if let Some(t) = self.rtt_time {
            if rcv_nxt < self.rtt_seq {
                return;
            }
            let d = ((now - t) / 1000).max(1);
            self.rtt_update(d, true, true);
        }
        self.rtt_seq = rcv_nxt + self.rcv_wnd;
        self.rtt_time = Some(now);
    }

    /// tcp_rcv_rtt_update(): the minimum, or with timestamps a 1/8 moving average.
    fn rtt_update(&mut self, sample_us: u64, win_dep: bool, queue_empty: bool) {
        let m = sample_us << 3;
        let old = self.rtt_us8;
        let new = if old == 0 || m < old {
            m
        } else {
            if win_dep || !queue_empty {
                return;
            }
            old - (old >> 3) + sample_us
        };
        self.rtt_us8 = new;
    }

    /// The application read everything in order up to `rcv_nxt` at `now` (its memory freed), the
    /// first skb ending at `first_end`. tcp_recvmsg_locked() calls tcp_rcv_space_adjust() after
    /// each skb it copies: once per receiver RTT, if more was copied than in the last measure
    /// ("copied -= inq": less what is still queued), tcp_rcvbuf_grow(). Only the call after the
    /// first skb can act (a new measure starts there, and the later calls of the same read find
    /// less than an RTT), so the data a filled hole releases at once is not counted in the
    /// measure that ends there but in the next. `ooo_span`: bytes from rcv_nxt to the end of the
    /// out-of-order queue (0 if none).
    pub fn read(&mut self, now: Time, first_end: u64, rcv_nxt: u64, ooo_span: u64) {
        self.unread = 0;
        if self.rtt_us8 == 0 {
            return;
        }
        let time_us = now.saturating_sub(self.space_time) / 1000;
        if time_us < self.rtt_us8 >> 3 {
            return;
        }
        let inq = rcv_nxt - first_end;
        let copied = (first_end - self.space_seq) as i64 - inq as i64;
        if copied > self.space as i64 {
            self.rcvbuf_grow(copied as u64, ooo_span);
        }
        self.space_seq = first_end;
        self.space_time = now;
    }

    /// tcp_data_queue_ofo() ends with tcp_rcvbuf_grow(sk, tp->rcvq_space.space) ("tcp: adjust
    /// rcvbuf in presence of reorders"): the buffer makes room for the out-of-order span
    /// `ooo_span` (rcv_nxt to the end of the out-of-order queue) on top of twice the last
    /// measure.
    pub fn ofo_grow(&mut self, ooo_span: u64) {
        self.rcvbuf_grow(self.space, ooo_span);
    }

    /// tcp_rcvbuf_grow(): "DRS is always one RTT late": twice what was copied, plus twice its
    /// growth over the last RTT ("slow start: allow the sender to double its rate"), plus the
    /// out-of-order span; sk_rcvbuf and window_clamp follow, up to tcp_rmem[2]. The growth term
    /// is that of "tcp: fix too slow tcp_rcvbuf_grow() action" (without the later
    /// `tcp_rcvbuf_low_rtt` branch), which the testbed kernel's windows follow: with 2·copied
    /// alone its buffer would not have grown in the third round trip of the captures.
    fn rcvbuf_grow(&mut self, newval: u64, ooo_span: u64) {
        let oldval = self.space;
        self.space = newval;
        let mut rcvwin = newval << 1;
        let grow = ((rcvwin << 1) * (newval - oldval)) / oldval.max(1);
        rcvwin += grow + ooo_span;
        let rcvbuf = space_from_win(self.scaling_ratio, rcvwin).min(RMEM_MAX);
        if rcvbuf > self.rcvbuf {
            self.rcvbuf = rcvbuf;
            self.grows += 1;
            // "Make the window clamp follow along."
            self.window_clamp = win_from_space(self.scaling_ratio, rcvbuf as i64) as u64;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::ms;

    /// Hand-worked kernel numbers for 1460-byte MSS, timestamps (1448-byte segments), no route
    /// window: tcp_select_initial_window(65536, 1448) = 45·1448 = 65160, wscale ilog2(32 MB) − 15
    /// = 10; tcp_init_buffer_space(): window_clamp = 65536 − 1448 = 64088 (tcp_app_win's one
    /// segment), rcv_ssthresh 64088, rcvq_space 10·1448 = 14480.
    #[test]
    fn initial_window_and_buffer_space() {
        let mut b = RcvBuf::new(1448, None);
        assert_eq!((b.rcv_wnd, b.wscale, b.window_clamp, b.syn_window()), (65160, 10, 65535 << 10, 65160));
        b.init_buffer_space(0, 1);
        assert_eq!((b.window_clamp, b.rcv_ssthresh, b.space), (64088, 64088, 14480));
        // A route window of 64 KB: wscale ilog2(65536) − 15 = 1, clamp 65536.
        let b = RcvBuf::new(1448, Some(65536));
        assert_eq!((b.rcv_wnd, b.wscale, b.window_clamp), (65160, 1, 65536));
    }

    /// tcp_measure_rcv_mss() then tcp_grow_window(): ratio 1448·256/2304 = 160, window_clamp
    /// 131072·160/256 = 81920, rcv_ssthresh back to min(rcv_wnd, clamp) = 65160; room =
    /// min(81920, (131072 − 2304)·160/256 = 80480) − rcv_ssthresh: +2896 five times, then the
    /// last 840, then nothing (the testbed kernel's windows: 68056, 70952, 73848, 76744, 79640,
    /// 80480).
    #[test]
    fn grow_window_steps() {
        let mut b = RcvBuf::new(1448, None);
        b.init_buffer_space(0, 1);
        b.measure(1448);
        assert_eq!((b.scaling_ratio, b.window_clamp, b.rcv_ssthresh), (160, 81920, 65160));
        let mut seen = vec![];
        for _ in 0..8 {
            b.charge(1448);
            let g = b.grow_window(1448, true);
            seen.push((g, b.rcv_ssthresh));
            b.read(ms(1), 1, 1, 0);
        }
        assert_eq!(seen, [(true, 68056), (true, 70952), (true, 73848), (true, 76744), (true, 79640), (true, 80480), (false, 80480), (false, 80480)]);
    }

    /// tcp_rcv_space_adjust() per skb of a read: a hole filled at 20 ms releases 2001..20001 at
    /// once; after the first skb "copied -= inq" leaves 2000 − 18000 < rcvq_space, so the measure
    /// restarts at 2001 without growth; 11 ms later (RTT 10 ms) 19000 B count: tcp_rcvbuf_grow(19000)
    /// = 2·19000 + 4·19000·9000/10000 = 106400 B of window, 212800 B of buffer at ratio 128.
    #[test]
    fn a_filled_hole_counts_in_the_next_measure() {
        let mut b = RcvBuf::new(1000, None);
        b.init_buffer_space(0, 1);
        b.rtt_us8 = 10_000 << 3;
        b.read(ms(20), 2001, 20001, 0);
        assert_eq!((b.rcvbuf, b.space, b.grows), (RMEM_DEFAULT, 10000, 0));
        b.read(ms(31), 21001, 21001, 0);
        assert_eq!((b.rcvbuf, b.window_clamp, b.space, b.grows), (212_800, 106_400, 19000, 1));
    }
}
