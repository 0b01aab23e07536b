//! Linux's send chronographs (`tcp_chrono_start()` / `tcp_chrono_stop()` in
//! net/ipv4/tcp_output.c, read by `tcp_get_info_chrono_stats()` in net/ipv4/tcp.c): how long the
//! connection has been busy sending, and of that how long it was limited by the receiver's window
//! or by the send buffer (`tcpi_busy_time`, `tcpi_rwnd_limited`, `tcpi_sndbuf_limited`).
//!
//! One chronograph runs at a time, the highest-priority condition that holds (UNSPEC < BUSY <
//! RWND_LIMITED < SNDBUF_LIMITED, `enum tcp_chrono`). The caller reports the send queues after
//! each event the connection takes (a write, a segment, a timer), the points where Linux's
//! `tcp_write_xmit()` and `tcp_clean_rtx_queue()` start and stop them. Outside the per-packet
//! path: only the scripted face (`crate::scripted`) keeps one.

use crate::units::Time;

/// `enum tcp_chrono` (include/linux/tcp.h), in priority order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum ChronoKind {
    Unspec,
    Busy,
    RwndLimited,
    SndbufLimited,
}

/// What the chronographs read of the send side after an event.
#[derive(Clone, Copy, Debug)]
pub struct SendQueues {
    /// Bytes sent and not acknowledged, or still to send (the FIN counts): Linux's
    /// `tcp_rtx_and_write_queues_empty()` is `!queued`.
    pub queued: bool,
    /// `tcp_write_xmit()` stopped because the next segment does not fit the peer's window
    /// (`!tcp_snd_wnd_test()`: `is_rwnd_limited`).
    pub rwnd_limited: bool,
    /// The application is waiting for room in the send buffer (`sk_stream_wait_memory()` /
    /// `SOCK_NOSPACE`, where `tcp_sendmsg_locked()` starts TCP_CHRONO_SNDBUF_LIMITED).
    pub sndbuf_limited: bool,
}

#[derive(Clone, Debug)]
pub struct Chrono {
    kind: ChronoKind,
    start: Time,
    /// `tp->chrono_stat[]`: the time spent in BUSY, RWND_LIMITED, SNDBUF_LIMITED.
    stat: [Time; 3],
}

impl Default for Chrono {
    fn default() -> Self {
        Chrono { kind: ChronoKind::Unspec, start: 0, stat: [0; 3] }
    }
}

impl Chrono {
    /// `tcp_chrono_set()`: close the running chronograph's account and start `kind`'s.
    fn set(&mut self, now: Time, kind: ChronoKind) {
        if self.kind != ChronoKind::Unspec {
            self.stat[self.kind as usize - 1] += now.saturating_sub(self.start);
        }
        self.start = now;
        self.kind = kind;
    }

    /// `tcp_chrono_start()`: "If there are multiple conditions worthy of tracking in a
    /// chronograph then the highest priority enum takes precedence".
    fn begin(&mut self, now: Time, kind: ChronoKind) {
        if kind > self.kind {
            self.set(now, kind);
        }
    }

    /// `tcp_chrono_stop()`: with both queues empty nothing runs; else if `kind` was the one
    /// running, BUSY runs instead.
    fn end(&mut self, now: Time, kind: ChronoKind, q: &SendQueues) {
        if !q.queued {
            if self.kind != ChronoKind::Unspec {
                self.set(now, ChronoKind::Unspec);
            }
        } else if kind == self.kind {
            self.set(now, ChronoKind::Busy);
        }
    }

    /// The send side after an event at `now`: data queued starts BUSY
    /// (`tcp_add_write_queue_tail()`), empty queues stop it (`tcp_clean_rtx_queue()`), and
    /// `tcp_write_xmit()` starts or stops RWND_LIMITED; the send buffer's wait starts
    /// SNDBUF_LIMITED and room in it stops it (`tcp_check_space()` → `tcp_new_space()`).
    pub fn observe(&mut self, now: Time, q: SendQueues) {
        if q.queued {
            self.begin(now, ChronoKind::Busy);
        } else {
            self.end(now, ChronoKind::Busy, &q);
        }
        if q.rwnd_limited {
            self.begin(now, ChronoKind::RwndLimited);
        } else {
            self.end(now, ChronoKind::RwndLimited, &q);
        }
        if q.sndbuf_limited {
            self.begin(now, ChronoKind::SndbufLimited);
        } else {
            self.end(now, ChronoKind::SndbufLimited, &q);
        }
    }

    /// (busy, rwnd_limited, sndbuf_limited) at `now`, ns: `tcp_get_info_chrono_stats()`, where
    /// `tcpi_busy_time` is the sum of all three. Exact time here; Linux counts jiffies.
    pub fn stats(&self, now: Time) -> (Time, Time, Time) {
        let mut s = self.stat;
        if self.kind != ChronoKind::Unspec {
            s[self.kind as usize - 1] += now.saturating_sub(self.start);
        }
        (s[0] + s[1] + s[2], s[1], s[2])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::MS;

    fn q(queued: bool, rwnd_limited: bool) -> SendQueues {
        SendQueues { queued, rwnd_limited, sndbuf_limited: false }
    }

    /// google/packetdrill tcp_info/tcp-info-rwnd-limited.pkt's timeline: a write into a zero
    /// window (rwnd-limited 100 ms + 100 ms), the window opens (busy 30 ms), all ACKed (idle),
    /// a write into a too-small window (100 ms), sent and ACKed 20 ms later.
    #[test]
    fn busy_time_includes_the_limited_time() {
        let mut c = Chrono::default();
        c.observe(10 * MS, q(true, true));
        assert_eq!(c.stats(110 * MS), (100 * MS, 100 * MS, 0));
        c.observe(210 * MS, q(true, false));
        c.observe(240 * MS, q(false, false));
        assert_eq!(c.stats(300 * MS), (230 * MS, 200 * MS, 0), "nothing counts while idle");
        c.observe(300 * MS, q(true, true));
        c.observe(400 * MS, q(true, false));
        c.observe(420 * MS, q(false, false));
        assert_eq!(c.stats(500 * MS), (350 * MS, 300 * MS, 0));
    }

    /// The higher-priority chronograph wins, and stopping a lower one does not end it.
    #[test]
    fn priorities() {
        let mut c = Chrono::default();
        c.observe(0, SendQueues { queued: true, rwnd_limited: true, sndbuf_limited: true });
        c.observe(10 * MS, SendQueues { queued: true, rwnd_limited: false, sndbuf_limited: true });
        assert_eq!(c.stats(20 * MS), (20 * MS, 0, 20 * MS));
        c.observe(20 * MS, q(true, false));
        assert_eq!(c.stats(30 * MS), (30 * MS, 0, 20 * MS));
    }
}
