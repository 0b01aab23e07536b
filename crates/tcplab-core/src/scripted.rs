//! The simulated stack of scripted tests (`tcplab script`, in packetdrill's language): one
//! `TcpConn` of any profile or preset behind a socket-like face (listen, connect, write, read,
//! close), fed the script's inbound segments at their times and reporting what it sends, in
//! virtual time over a zero-delay path (packetdrill's tun device is local to the stack under test).
//! The script language, the matching of packets and the tolerance live once, in Python
//! (`tcplab.script`); this module only moves segments and answers socket calls.
//!
//! Sequence numbers are relative on both sides, as packetdrill writes them: a SYN takes 0, data
//! starts at 1. `info()` reads `TcpConn::info()` in the units of Linux's `struct tcp_info`
//! (include/uapi/linux/tcp.h; `tcp_get_info()` in net/ipv4/tcp.c): packets, microseconds.

use crate::net::{Segment, FLAG_ACK, FLAG_RST};
use crate::tcp::chrono::{Chrono, SendQueues};
use crate::tcp::info::{CaState, TcpState};
use crate::tcp::user_timeout::UserTimeout;
use crate::tcp::{ConnEvent, OutSeg, TcpConfig, TcpConn, TimerKind};
use crate::units::{Size, Time};

/// Most timer events one `advance` may handle: a bound against a runaway loop, far above what
/// any script's connection needs.
const MAX_STEPS: u64 = 1_000_000;

/// Linux's `TCP_INFINITE_SSTHRESH` (include/net/tcp.h): what `tcpi_snd_ssthresh` reads before
/// any reduction.
const INFINITE_SSTHRESH: u64 = 0x7fff_ffff;

/// `seg` carrying the timestamps option (TSval, TSecr) when `ts` is given (RFC 7323 §3): the
/// script's inbound segments state it explicitly, with the option bytes counted.
pub fn with_ts(mut seg: Segment, ts: Option<(u32, u32)>) -> Segment {
    if let Some((val, ecr)) = ts {
        seg.ts = true;
        seg.tsval = val;
        seg.tsecr = ecr;
        seg.opt_len += crate::net::TS_OPTION_BYTES as u16;
    }
    seg
}

pub struct ScriptedConn {
    cfg: TcpConfig,
    now: Time,
    conn: Option<TcpConn>,
    listening: bool,
    timers: Vec<(Time, TimerKind)>,
    out: Vec<OutSeg>,
    sent: Vec<(Time, Segment)>,
    established: bool,
    /// Bytes delivered in order and not yet read by the script.
    readable: u64,
    peer_closed: bool,
    /// The socket is gone (closed in SYN-SENT, or aborted with unread data): segments reaching
    /// it are answered as in the CLOSED state.
    gone: bool,
    /// The application closed after the peer's FIN (CLOSE-WAIT → LAST-ACK): once our FIN is
    /// acknowledged the socket is gone (no TIME-WAIT for the passive closer, RFC 9293 §3.6).
    closed_after_peer: bool,
    steps: u64,
    /// The MSS this end advertises in its SYN or SYN-ACK before any `TCP_MAXSEG`: the route's
    /// (Linux `dst_metric_advmss()`), the profile's `mss` unless the runner says otherwise.
    route_advmss: u64,
    /// `setsockopt(TCP_MAXSEG)`'s value (Linux `tp->rx_opt.user_mss`), 0 when unset.
    user_mss: u64,
    /// When data was last received (Linux `icsk->icsk_ack.lrcvtime`): set when the connection
    /// is established and by every in-order data arrival (`tcp_event_data_recv()`).
    lrcvtime: Option<Time>,
    /// The send chronographs (`tcpi_busy_time`, `tcpi_rwnd_limited`), updated after every event.
    chrono: Chrono,
    /// Linux `sk->sk_shutdown & RCV_SHUTDOWN`: set by `shutdown(SHUT_RD)` and by `close()`.
    rcv_shutdown: bool,
    /// `TCP_USER_TIMEOUT` (`crate::tcp::user_timeout`).
    uto: UserTimeout,
    /// `sk->sk_err`: the error the next call reports once (`sock_error()`), e.g. ETIMEDOUT.
    error: Option<&'static str>,
}

/// Linux `TCP_MSS_DEFAULT` (include/net/tcp.h): `tp->mss_cache` of a socket not yet connected
/// (`tcp_init_sock()`), what `getsockopt(TCP_MAXSEG)` reads there without a `user_mss`.
pub const TCP_MSS_DEFAULT: u64 = 536;
/// Linux `TCP_MIN_MSS` and `MAX_TCP_WINDOW`: the range `setsockopt(TCP_MAXSEG)` accepts.
pub const TCP_MIN_MSS: u64 = 88;
pub const MAX_TCP_WINDOW: u64 = 32767;

impl ScriptedConn {
    pub fn new(cfg: TcpConfig) -> ScriptedConn {
        let route_advmss = cfg.mss.0;
        ScriptedConn { cfg, now: 0, conn: None, listening: false, timers: Vec::new(), out: Vec::new(), sent: Vec::new(), established: false, readable: 0, peer_closed: false, gone: false, closed_after_peer: false, steps: 0, route_advmss, user_mss: 0, lrcvtime: None, chrono: Chrono::default(), rcv_shutdown: false, uto: UserTimeout::default(), error: None }
    }

    pub fn config(&self) -> &TcpConfig {
        &self.cfg
    }

    pub fn now(&self) -> Time {
        self.now
    }

    /// The route's advertised MSS (`dst_metric_advmss()`), when it is not the configuration's
    /// `mss` (the runner caps an active opener's `mss` with the SYN-ACK it reads ahead).
    pub fn set_route_advmss(&mut self, mss: u64) {
        self.route_advmss = mss;
    }

    /// `setsockopt(TCP_MAXSEG, val)`, Linux `do_tcp_setsockopt()`: 0 or TCP_MIN_MSS..=
    /// MAX_TCP_WINDOW (else EINVAL) becomes `tp->rx_opt.user_mss`. It clamps the MSS this end
    /// advertises (`tcp_mss_clamp()` in `tcp_connect_init()` and `tcp_make_synack()`) and the
    /// peer's (`tcp_parse_options()`: `if (user_mss && user_mss < in_mss) in_mss = user_mss`),
    /// for the connection made after it; an open connection keeps its MSS.
    pub fn set_user_mss(&mut self, val: u64) -> Result<(), &'static str> {
        if val != 0 && !(TCP_MIN_MSS..=MAX_TCP_WINDOW).contains(&val) {
            return Err("EINVAL");
        }
        self.user_mss = val;
        Ok(())
    }

    /// `tcp_mss_clamp()`: `mss` capped by `user_mss` when one is set.
    fn mss_clamp(&self, mss: u64) -> u64 {
        if self.user_mss != 0 && self.user_mss < mss {
            self.user_mss
        } else {
            mss
        }
    }

    /// The MSS option of this end's SYN or SYN-ACK: `tcp_mss_clamp(tp, dst_metric_advmss(dst))`.
    pub fn advertised_mss(&self) -> u64 {
        self.mss_clamp(self.route_advmss)
    }

    /// `getsockopt(TCP_MAXSEG)`, Linux `do_tcp_getsockopt()`: `tp->mss_cache` (the sending MSS;
    /// TCP_MSS_DEFAULT before a connection), or `user_mss` when set and the socket is in CLOSE
    /// or LISTEN.
    pub fn maxseg(&self) -> u64 {
        let closed = self.conn.as_ref().is_none_or(|c| c.state() == TcpState::Closed);
        match self.conn.as_ref() {
            _ if closed && self.user_mss != 0 => self.user_mss,
            Some(c) => c.info().mss,
            None => TCP_MSS_DEFAULT,
        }
    }

    /// `listen()`: the next SYN opens a connection (passive open).
    pub fn listen(&mut self) {
        self.listening = true;
    }

    /// `connect()`: the SYN goes out now (active open).
    pub fn connect(&mut self) {
        let mut out = std::mem::take(&mut self.out);
        let mut cfg = self.cfg.clone();
        cfg.mss = Size(self.mss_clamp(cfg.mss.0));
        self.conn = Some(TcpConn::connect(cfg, self.now, &mut out));
        self.out = out;
        self.flush();
    }

    /// The script's segment arrives now; `mss` is its MSS option (on a SYN). False when nothing
    /// takes it (no listener and no connection): then it is answered with a RST, as a segment to
    /// a CLOSED port is (RFC 9293 §3.10.7.1; Linux `tcp_v4_send_reset()`).
    pub fn inject(&mut self, seg: Segment, mss: Option<u64>) -> bool {
        if self.closed_after_peer && self.conn.as_ref().is_some_and(|c| c.state() == TcpState::Closed) {
            // LAST-ACK ended: the kernel no longer has any record of the socket.
            self.conn = None;
            self.gone = true;
            self.timers.clear();
        }
        if self.conn.is_none() {
            if self.gone || !(self.listening && seg.syn() && !seg.has_ack()) {
                self.reset_closed(&seg);
                return false;
            }
            let mut cfg = self.cfg.clone();
            if let Some(m) = mss {
                // RFC 9293 §3.7.1: the sender's MSS is at most what the peer's SYN allows.
                cfg.mss = Size(cfg.mss.0.min(m).max(1));
            }
            cfg.mss = Size(self.mss_clamp(cfg.mss.0));
            let mut out = std::mem::take(&mut self.out);
            self.conn = Some(TcpConn::listen(cfg, self.now, &mut out));
            self.out = out;
        } else if seg.syn() && !seg.has_ack() && !self.cfg.handshake {
            return true;
        } else if self.abort_on_data(&seg) {
            return true;
        }
        let mut out = std::mem::take(&mut self.out);
        let conn = self.conn.as_mut().expect("open");
        conn.on_segment(self.now, &seg, &mut out);
        self.out = out;
        self.flush();
        true
    }

    /// `setsockopt(TCP_USER_TIMEOUT, ms)` (`crate::tcp::user_timeout`).
    pub fn set_user_timeout(&mut self, ms: i64) -> Result<(), &'static str> {
        self.uto.set(ms)
    }

    /// The socket's pending error, taken (Linux `sock_error()`: `xchg(&sk->sk_err, 0)`).
    pub fn take_error(&mut self) -> Option<&'static str> {
        self.error.take()
    }

    /// When the user timeout aborts the connection, if it is pending.
    fn user_timeout_at(&self) -> Option<Time> {
        let conn = self.conn.as_ref()?;
        self.uto.deadline(conn.snd.core.stats.timeouts)
    }

    /// `tcp_write_err()`: the connection is dropped without a segment, ETIMEDOUT reported.
    fn abort_timed_out(&mut self) {
        self.conn = None;
        self.gone = true;
        self.timers.clear();
        self.error = Some("ETIMEDOUT");
    }

    /// `shutdown(SHUT_RD)`: Linux only marks RCV_SHUTDOWN (`inet_shutdown()`); data still
    /// arrives and is ACKed in ESTABLISHED, but not once the FIN is sent (`inject`).
    pub fn shutdown_read(&mut self) {
        self.rcv_shutdown = true;
    }

    /// Linux `tcp_rcv_state_process()` in FIN-WAIT-1 and FIN-WAIT-2: "RFC 793 says to queue data
    /// in these states, RFC 1122 says we MUST send a reset. BSD 4.4 also does reset": with
    /// RCV_SHUTDOWN, a segment carrying data beyond RCV.NXT resets the connection
    /// (`tcp_reset()`, LINUX_MIB_TCPABORTONDATA) and is answered with a RST as from a closed
    /// port (`tcp_v4_send_reset()`); the socket is gone (`tcp_done()`).
    fn abort_on_data(&mut self, seg: &Segment) -> bool {
        let Some(conn) = self.conn.as_ref() else { return false };
        if !self.rcv_shutdown || !matches!(conn.state(), TcpState::FinWait1 | TcpState::FinWait2) {
            return false;
        }
        let rcv_nxt = conn.info().rcv_nxt;
        if seg.len == 0 || seg.seq + u64::from(seg.len) <= rcv_nxt {
            return false;
        }
        self.reset_closed(seg);
        self.conn = None;
        self.gone = true;
        self.timers.clear();
        true
    }

    /// The application writes `bytes` more.
    pub fn write(&mut self, bytes: u64) -> bool {
        let Some(conn) = self.conn.as_mut() else { return false };
        let mut out = std::mem::take(&mut self.out);
        conn.write(self.now, bytes, &mut out);
        self.out = out;
        self.flush();
        true
    }

    /// The application reads up to `max` bytes: how many it got.
    pub fn read(&mut self, max: u64) -> u64 {
        let n = self.readable.min(max);
        self.readable -= n;
        n
    }

    /// `shutdown(SHUT_WR)`, Linux `tcp_shutdown()`: the FIN follows the data written
    /// (`tcp_close_state()` → `tcp_send_fin()`); unread data stays (no reset, unlike `close`)
    /// and the read side is untouched.
    pub fn shutdown_write(&mut self) -> bool {
        let Some(conn) = self.conn.as_mut() else { return false };
        self.closed_after_peer = self.peer_closed;
        let mut out = std::mem::take(&mut self.out);
        conn.close(self.now, &mut out);
        self.out = out;
        self.flush();
        true
    }

    /// The application closes: a FIN follows the data written. As Linux's `tcp_close()`: in
    /// SYN-SENT the socket just goes (no segment), and with received data unread it is aborted
    /// with a RST (RFC 9293 §3.10.4 and RFC 2525 §2.17, "Failure to RST on close with data
    /// pending"; `data_was_unread` → `tcp_send_active_reset()`).
    pub fn close(&mut self) -> bool {
        let Some(conn) = self.conn.as_mut() else { return false };
        if conn.state() == TcpState::SynSent || self.readable > 0 {
            if self.readable > 0 {
                let rst = conn.reset_segment(self.now);
                self.sent.push((self.now, rst));
            }
            self.conn = None;
            self.gone = true;
            self.timers.clear();
            self.readable = 0;
            return true;
        }
        self.rcv_shutdown = true; // tcp_close(): sk->sk_shutdown = SHUTDOWN_MASK
        self.shutdown_write()
    }

    pub fn established(&self) -> bool {
        self.established
    }

    pub fn readable(&self) -> u64 {
        self.readable
    }

    pub fn peer_closed(&self) -> bool {
        self.peer_closed
    }

    /// Run the connection's timers due up to `until` (inclusive) and move the clock there; the
    /// segments sent since the last call, with their send times, oldest first.
    pub fn advance(&mut self, until: Time) -> Vec<(Time, Segment)> {
        while self.steps < MAX_STEPS {
            let next = self.timers.iter().enumerate().min_by_key(|(_, x)| x.0).map(|(i, x)| (i, *x));
            if let Some(at) = self.user_timeout_at() {
                if at <= until && next.is_none_or(|(_, (t, _))| at <= t) {
                    self.now = self.now.max(at);
                    self.abort_timed_out();
                    break;
                }
            }
            let Some((i, (t, kind))) = next else { break };
            if t > until {
                break;
            }
            self.steps += 1;
            self.timers.swap_remove(i);
            self.now = self.now.max(t);
            if let Some(conn) = self.conn.as_mut() {
                let mut out = std::mem::take(&mut self.out);
                if let Some(again) = conn.on_timer(self.now, kind, &mut out) {
                    self.timers.push((again, kind));
                }
                self.out = out;
            }
            self.flush();
        }
        self.now = self.now.max(until);
        std::mem::take(&mut self.sent)
    }

    /// RFC 9293 §3.10.7.1, a segment reaching no connection: "If the ACK bit is off, sequence
    /// number zero is used, <SEQ=0><ACK=SEG.SEQ+SEG.LEN><CTL=RST,ACK>. If the ACK bit is on,
    /// <SEQ=SEG.ACK><CTL=RST>"; a RST is discarded. SEG.LEN counts SYN and FIN.
    fn reset_closed(&mut self, seg: &Segment) {
        if seg.flags & FLAG_RST != 0 {
            return;
        }
        let rst = if seg.has_ack() {
            Segment { seq: seg.ack, flags: FLAG_RST, ..Default::default() }
        } else {
            let len = u64::from(seg.len) + u64::from(seg.syn()) + u64::from(seg.fin());
            Segment { seq: 0, ack: seg.seq + len, flags: FLAG_RST | FLAG_ACK, ..Default::default() }
        };
        self.sent.push((self.now, rst));
    }

    /// The earliest pending timer, if any.
    pub fn next_timer(&self) -> Option<Time> {
        self.timers.iter().map(|t| t.0).min()
    }

    fn flush(&mut self) {
        if let Some(conn) = self.conn.as_mut() {
            let timers = &mut self.timers;
            conn.take_timers(|k, t| timers.push((t, k)));
            for e in conn.take_events() {
                match e {
                    ConnEvent::Established => {
                        self.established = true;
                        self.lrcvtime = Some(self.now);
                    }
                    ConnEvent::Delivered(n) => {
                        self.readable += n;
                        self.lrcvtime = Some(self.now);
                    }
                    ConnEvent::PeerClosed => self.peer_closed = true,
                    _ => {}
                }
            }
        }
        for o in self.out.drain(..) {
            if self.uto.is_set() {
                let s = &o.seg;
                self.uto.on_sent(self.now, s.seq, s.seq + u64::from(s.len) + u64::from(s.syn()) + u64::from(s.fin()));
            }
            self.sent.push((self.now, o.seg));
        }
        if let Some(conn) = self.conn.as_ref() {
            self.uto.on_progress(conn.snd.core.snd_una, conn.snd.core.stats.timeouts);
            if self.established {
                // From the handshake on: the SYN-ACK belongs to no socket's queue, and
                // packetdrill's tcp-info-sndbuf-limited reads a busy time that leaves the SYN out.
                self.chrono.observe(self.now, send_queues(conn));
            }
        }
    }

    /// The connection's `tcp_info` in Linux's units (`tcp_get_info()`): counts in packets, times
    /// in microseconds, states by Linux's numbers. Fields the model does not keep are left out,
    /// so that an assertion on one of them is reported as not supported rather than passing.
    pub fn info(&self) -> serde_json::Value {
        let Some(conn) = self.conn.as_ref() else {
            return serde_json::json!({ "tcpi_state": if self.listening && !self.gone { 10 } else { 7 } });
        };
        let i = conn.info();
        let us = |t: Time| t / 1_000;
        // include/net/tcp_states.h
        let state = match i.state {
            TcpState::Established => 1,
            TcpState::SynSent => 2,
            TcpState::SynReceived => 3,
            TcpState::FinWait1 => 4,
            TcpState::FinWait2 => 5,
            TcpState::Closed => 7,
            TcpState::CloseWait => 8,
            TcpState::LastAck => 9,
            TcpState::Listen => 10,
        };
        // enum tcp_ca_state (include/uapi/linux/tcp.h)
        let ca = match i.ca_state {
            CaState::Open => 0,
            CaState::Disorder => 1,
            CaState::Recovery => 3,
            CaState::Loss => 4,
        };
        let ssthresh = if i.ssthresh >= u64::MAX / 8 { INFINITE_SSTHRESH } else { i.ssthresh / i.mss.max(1) };
        let mut v = serde_json::json!({
            "tcpi_state": state,
            "tcpi_ca_state": ca,
            "tcpi_snd_mss": i.mss,
            "tcpi_snd_cwnd": i.cwnd_segs(),
            "tcpi_snd_ssthresh": ssthresh,
            "tcpi_rto": us(i.rto),
            "tcpi_rttvar": us(i.rttvar),
            "tcpi_unacked": i.unacked_segs(),
            "tcpi_sacked": i.sacked_segs(),
            "tcpi_total_retrans": i.retrans,
            "tcpi_bytes_acked": i.bytes_acked,
            "tcpi_bytes_received": i.bytes_received,
            "tcpi_bytes_sent": i.bytes_sent,
            "tcpi_bytes_retrans": i.retrans_bytes,
            "tcpi_delivered": i.segs(i.delivered) + u64::from(i.snd_una > 0 || i.snd_max > 0),
            "tcpi_snd_wnd": i.peer_wnd.min(u32::MAX as u64),
            // tp->advmss: the advertised MSS less the timestamps option once it is agreed, at
            // either end (tcp_rcv_synsent_state_process: `tp->advmss -= TCPOLEN_TSTAMP_ALIGNED`;
            // the passive opener's reads the same on Linux 6.18).
            "tcpi_advmss": self.advertised_mss() - if conn.timestamps_on() { u64::from(crate::net::TS_OPTION_BYTES) } else { 0 },
        });
        let m = v.as_object_mut().expect("an object");
        if i.state != TcpState::SynSent && i.state != TcpState::SynReceived {
            let (busy, rwnd, _) = self.chrono.stats(self.now);
            m.insert("tcpi_busy_time".into(), us(busy).into());
            m.insert("tcpi_rwnd_limited".into(), us(rwnd).into());
        }
        if let Some(t) = self.lrcvtime {
            // jiffies_to_msecs(now - icsk->icsk_ack.lrcvtime)
            m.insert("tcpi_last_data_recv".into(), ((self.now - t) / 1_000_000).into());
        }
        if let Some(s) = i.srtt {
            m.insert("tcpi_rtt".into(), us(s).into());
        }
        if let Some(r) = i.min_rtt {
            m.insert("tcpi_min_rtt".into(), us(r).into());
        }
        if let Some(r) = i.reordering {
            m.insert("tcpi_reordering".into(), r.into());
        }
        if let Some(r) = i.reord_seen {
            m.insert("tcpi_reord_seen".into(), r.into());
        }
        if let Some(r) = i.retrans_out {
            m.insert("tcpi_retrans".into(), r.into());
        }
        if let Some(l) = i.lost {
            m.insert("tcpi_lost".into(), i.segs(l).into());
        }
        v
    }
}

/// The send queues as the chronographs read them (`crate::tcp::chrono`): anything unacknowledged
/// or unsent (`tcp_rtx_and_write_queues_empty()`), and whether the next segment to send is held
/// by the peer's window, Linux `tcp_snd_wnd_test()`: its end, at most one MSS on, beyond
/// SND.UNA + SND.WND (`tcp_wnd_end()`).
fn send_queues(conn: &TcpConn) -> SendQueues {
    let c = &conn.snd.core;
    let unsent = c.data_end.saturating_sub(c.snd_nxt);
    let rwnd_limited = unsent > 0 && c.snd_nxt + unsent.min(c.mss) > c.snd_una + c.peer_wnd;
    SendQueues { queued: c.snd_max > c.snd_una || unsent > 0, rwnd_limited, sndbuf_limited: false }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::{FLAG_ACK, FLAG_SYN};
    use crate::tbit::resolve;
    use crate::units::MS;

    fn seg(flags: u8, seq: u64, ack: u64, len: u32) -> Segment {
        Segment { seq, ack, len, flags, wnd: 65535, sack_permitted: true, ..Default::default() }
    }

    /// Passive open, a write of 10 segments with IW10 (RFC 6928 §2), and the info in packets.
    #[test]
    fn listen_accept_write_iw10() {
        let mut c = ScriptedConn::new(resolve(r#"{"profile": "linux"}"#).unwrap());
        c.listen();
        assert!(c.inject(seg(FLAG_SYN, 0, 0, 0), Some(1000)));
        let synack = c.advance(0);
        assert_eq!(synack.len(), 1);
        assert!(synack[0].1.syn() && synack[0].1.has_ack() && synack[0].1.ack == 1);
        c.advance(100 * MS);
        assert!(c.inject(seg(FLAG_ACK, 1, 1, 0), None));
        assert!(c.established());
        assert!(c.write(20_000));
        let data = c.advance(100 * MS);
        assert_eq!(data.iter().map(|x| x.1.len).collect::<Vec<_>>(), vec![1000; 10]);
        assert_eq!(data[0].1.seq, 1);
        let info = c.info();
        assert_eq!(info["tcpi_snd_cwnd"], 10);
        assert_eq!(info["tcpi_unacked"], 10);
        assert_eq!(info["tcpi_state"], 1);
        assert_eq!(info["tcpi_snd_ssthresh"], INFINITE_SSTHRESH);
    }

    /// Nothing listens: the segment is refused with a RST|ACK (RFC 9293 §3.10.7.1); an RTO
    /// retransmits after the initial 1 s (exactly: `rfc6675-iw10` keeps no jiffies).
    #[test]
    fn refused_and_timer() {
        let mut c = ScriptedConn::new(resolve(r#"{"profile": "rfc6675-iw10"}"#).unwrap());
        assert!(!c.inject(seg(FLAG_SYN, 0, 0, 0), None));
        let rst = c.advance(0);
        assert_eq!((rst[0].1.flags, rst[0].1.seq, rst[0].1.ack), (FLAG_RST | FLAG_ACK, 0, 1));
        c.connect();
        let syn = c.advance(0);
        assert_eq!(syn.len(), 1);
        let again = c.advance(1500 * MS);
        assert_eq!(again.len(), 1, "one SYN retransmission by 1.5 s");
        assert_eq!(again[0].0, crate::units::SEC);
    }

    /// The linux6 profile (timestamps on) opened passively by `syn`, data of 10 segments of
    /// 1000 bytes written at 100 ms.
    fn linux6_sending(syn: Segment) -> ScriptedConn {
        let mut c = ScriptedConn::new(resolve(r#"{"profile": "linux6"}"#).unwrap());
        c.listen();
        assert!(c.inject(syn, Some(1000)));
        c.advance(100 * MS);
        c
    }

    /// RFC 7323 §3.2 and §4.3 through the scripted face: the SYN's TSval is echoed on the SYN-ACK,
    /// the ACK's TSval becomes TS.Recent and is echoed on data; TSval is the 1 ms clock.
    #[test]
    fn timestamps_are_carried_in_and_out() {
        let mut c = linux6_sending(with_ts(seg(FLAG_SYN, 0, 0, 0), Some((100, 0))));
        let mut c0 = ScriptedConn::new(resolve(r#"{"profile": "linux6"}"#).unwrap());
        c0.listen();
        c0.inject(with_ts(seg(FLAG_SYN, 0, 0, 0), Some((100, 0))), Some(1000));
        let synack = c0.advance(0);
        assert!(synack[0].1.ts && synack[0].1.tsecr == 100 && synack[0].1.tsval == 0);
        assert!(c.inject(with_ts(seg(FLAG_ACK, 1, 1, 0), Some((200, 0))), None));
        c.write(1976);
        let data = c.advance(100 * MS);
        assert_eq!(data.len(), 2);
        assert!(data.iter().all(|(_, s)| s.ts && s.tsecr == 200 && s.tsval == 100));
        // The timestamps option takes 12 of the 1000 bytes the peer's MSS allows (Linux
        // tcp_current_mss(): the header options are subtracted).
        assert_eq!(data[0].1.len, 988);
        // A SYN without the option turns it off for the connection (RFC 7323 §3.2).
        let mut c = linux6_sending(seg(FLAG_SYN, 0, 0, 0));
        c.inject(seg(FLAG_ACK, 1, 1, 0), None);
        c.write(1000);
        assert!(c.advance(100 * MS).iter().all(|(_, s)| !s.ts));
    }

    /// Linux `tcp_check_sack_reordering()`: segment 5 SACKed first, then a cumulative ACK
    /// delivers the never-retransmitted 1..4001 below it: tp->reordering rises from 3 to
    /// ceil((fack − low_seq) / mss) = ceil((5001 − 1) / 1000) = 5, and tcpi_reordering says so.
    #[test]
    fn reordering_is_raised_by_a_delivery_below_the_highest_sack() {
        let mut c = linux6_sending(seg(FLAG_SYN, 0, 0, 0));
        c.inject(seg(FLAG_ACK, 1, 1, 0), None);
        assert_eq!(c.info()["tcpi_reordering"], 3);
        c.write(10_000);
        assert_eq!(c.advance(100 * MS).len(), 10);
        // 100 ms later (RTT 100 ms): a SACK of segment 5 alone, within RACK's reordering window.
        c.advance(200 * MS);
        let mut sack = seg(FLAG_ACK, 1, 1, 0);
        sack.set_sack_blocks(&[crate::net::SackBlock { left: 4001, right: 5001 }]);
        c.inject(sack, None);
        assert_eq!(c.info()["tcpi_reordering"], 3, "no delivery below the SACK yet");
        c.inject(seg(FLAG_ACK, 1, 5001, 0), None);
        assert_eq!(c.info()["tcpi_reordering"], 5);
        assert_eq!(c.info()["tcpi_reord_seen"], 1);
        assert_eq!(c.info()["tcpi_total_retrans"], 0, "nothing was marked lost");
        assert_eq!(c.info()["tcpi_retrans"], 0);
        // An in-order cumulative ACK changes nothing.
        c.inject(seg(FLAG_ACK, 1, 6001, 0), None);
        assert_eq!(c.info()["tcpi_reordering"], 5);
    }

    /// Linux `tcp_close()` with received data unread: a RST|ACK at snd_nxt acknowledging what
    /// arrived, stamped with TSval now and TS.Recent (`tcp_send_active_reset()`), and the socket
    /// is gone: a later segment is answered as in CLOSED, <SEQ=SEG.ACK><CTL=RST>.
    #[test]
    fn close_with_unread_data_resets() {
        let mut c = linux6_sending(with_ts(seg(FLAG_SYN, 0, 0, 0), Some((100, 0))));
        c.inject(with_ts(seg(FLAG_ACK, 1, 1, 0), Some((200, 0))), None);
        c.inject(with_ts(seg(FLAG_ACK, 1, 1, 1000), Some((201, 0))), None);
        c.advance(1100 * MS);
        assert_eq!(c.readable(), 1000);
        assert!(c.close());
        let rst = c.advance(1100 * MS);
        assert_eq!(rst.len(), 1);
        let r = &rst[0].1;
        assert_eq!((r.flags, r.seq, r.ack), (FLAG_RST | FLAG_ACK, 1, 1001));
        assert!(r.ts && r.tsval == 1100 && r.tsecr == 201);
        assert_eq!(c.info()["tcpi_state"], 7);
        c.inject(seg(FLAG_ACK, 1001, 1, 0), None);
        let again = c.advance(1200 * MS);
        assert_eq!((again[0].1.flags, again[0].1.seq), (FLAG_RST, 1));
        assert!(c.advance(10_000 * MS).is_empty(), "no timer outlives the socket");
    }

    /// Linux `tcp_close()` in SYN-SENT sends nothing; the SYN-ACK that comes later reaches no
    /// socket and draws <SEQ=SEG.ACK><CTL=RST> (RFC 9293 §3.10.7.1).
    #[test]
    fn close_in_syn_sent_sends_nothing() {
        let mut c = ScriptedConn::new(resolve(r#"{"profile": "linux6"}"#).unwrap());
        c.connect();
        assert_eq!(c.advance(0).len(), 1);
        assert!(c.close());
        assert!(c.advance(5000 * MS).is_empty(), "no SYN retransmission, no FIN");
        assert!(!c.inject(seg(FLAG_SYN | FLAG_ACK, 0, 1, 0), Some(1460)));
        let rst = c.advance(5000 * MS);
        assert_eq!((rst[0].1.flags, rst[0].1.seq, rst[0].1.ts), (FLAG_RST, 1, false));
    }

    /// `tcpi_retrans` is Linux's `retrans_out`: a retransmission in flight counts until it is
    /// delivered. Three SACKs above segment 1 let RACK mark it lost (reo_wnd 0 once 3 segments
    /// are SACKed) and the recovery retransmits it.
    #[test]
    fn retrans_out_counts_retransmissions_in_flight() {
        let mut c = linux6_sending(seg(FLAG_SYN, 0, 0, 0));
        c.inject(seg(FLAG_ACK, 1, 1, 0), None);
        c.write(10_000);
        assert_eq!(c.advance(100 * MS).len(), 10);
        c.advance(200 * MS);
        for right in [3001, 4001, 5001] {
            let mut s = seg(FLAG_ACK, 1, 1, 0);
            s.set_sack_blocks(&[crate::net::SackBlock { left: 1001, right }]);
            c.inject(s, None);
        }
        let sent = c.advance(200 * MS);
        assert_eq!(sent.first().map(|x| (x.1.seq, x.1.len)), Some((1, 1000)), "the retransmission of segment 1");
        assert_eq!(c.info()["tcpi_retrans"], 1);
        c.inject(seg(FLAG_ACK, 1, 5001, 0), None);
        assert_eq!(c.info()["tcpi_retrans"], 0);
        assert_eq!(c.info()["tcpi_reord_seen"], 0, "a retransmitted segment's delivery is no reordering");
    }

    /// `TCP_MAXSEG` (Linux `do_tcp_setsockopt()` / `do_tcp_getsockopt()`): the range check, the
    /// listener's reading, the SYN-ACK's MSS option and the connection's MSS, clamped.
    #[test]
    fn user_mss_clamps_both_directions() {
        let mut c = ScriptedConn::new(resolve(r#"{"profile": "linux6"}"#).unwrap());
        assert_eq!(c.maxseg(), TCP_MSS_DEFAULT);
        assert_eq!(c.set_user_mss(50), Err("EINVAL"));
        assert_eq!(c.set_user_mss(40_000), Err("EINVAL"));
        c.set_user_mss(1100).unwrap();
        c.listen();
        assert_eq!((c.maxseg(), c.advertised_mss()), (1100, 1100));
        c.inject(seg(FLAG_SYN, 0, 0, 0), Some(1300));
        c.advance(100 * MS);
        c.inject(seg(FLAG_ACK, 1, 1, 0), None);
        assert_eq!(c.maxseg(), 1100);
        assert_eq!((c.info()["tcpi_snd_mss"].as_u64(), c.info()["tcpi_advmss"].as_u64()), (Some(1100), Some(1100)));
        c.write(3300);
        assert_eq!(c.advance(100 * MS).iter().map(|x| x.1.len).collect::<Vec<_>>(), vec![1100; 3]);
    }

    /// RFC 9293 §3.10.7.3: the active opener takes SND.WND from the SYN-ACK; a zero window holds
    /// the data back, and the time counts as receive-window limited (`tcp_chrono_start()`).
    #[test]
    fn zero_window_syn_ack_holds_data_and_counts_rwnd_limited() {
        let mut c = ScriptedConn::new(resolve(r#"{"profile": "linux6"}"#).unwrap());
        c.connect();
        c.advance(10 * MS);
        let mut synack = seg(FLAG_SYN | FLAG_ACK, 0, 1, 0);
        synack.wnd = 0;
        c.inject(synack, Some(1000));
        assert_eq!(c.info()["tcpi_snd_wnd"], 0);
        c.advance(10 * MS);
        c.write(1000);
        assert!(c.advance(110 * MS).iter().all(|x| x.1.len == 0), "nothing into a zero window");
        assert_eq!(c.info()["tcpi_rwnd_limited"], 100_000);
        let mut open = seg(FLAG_ACK, 1, 1, 0);
        open.wnd = 2000;
        c.inject(open, None);
        assert_eq!(c.advance(110 * MS).iter().map(|x| x.1.len).sum::<u32>(), 1000);
        c.advance(130 * MS);
        let mut ack = seg(FLAG_ACK, 1, 1001, 0);
        ack.wnd = 2000;
        c.inject(ack, None);
        c.advance(200 * MS);
        assert_eq!((c.info()["tcpi_busy_time"].as_u64(), c.info()["tcpi_rwnd_limited"].as_u64()), (Some(120_000), Some(100_000)));
    }

    /// Linux `tcp_rcv_state_process()`: data reaching a closed socket in FIN-WAIT-1 resets it,
    /// <SEQ=SEG.ACK><CTL=RST>, and the socket is gone; after shutdown(SHUT_WR) alone (no
    /// RCV_SHUTDOWN) the same data is taken.
    #[test]
    fn data_after_close_in_fin_wait_resets() {
        for close in [true, false] {
            let mut c = linux6_sending(seg(FLAG_SYN, 0, 0, 0));
            c.inject(seg(FLAG_ACK, 1, 1, 0), None);
            if close {
                c.close();
            } else {
                c.shutdown_write();
            }
            assert!(c.advance(100 * MS).iter().any(|x| x.1.fin()));
            c.inject(seg(FLAG_ACK, 1, 1, 100), None);
            let out = c.advance(100 * MS);
            if close {
                assert_eq!(out.iter().map(|x| (x.1.flags, x.1.seq)).collect::<Vec<_>>(), vec![(FLAG_RST, 1)]);
                assert_eq!(c.info()["tcpi_state"], 7);
            } else {
                assert!(out.iter().all(|x| x.1.flags & FLAG_RST == 0));
                assert_eq!(c.readable(), 100);
            }
        }
    }

    /// `TCP_USER_TIMEOUT` 1000 ms: the data sent at 100 ms is never acknowledged; after the
    /// RTO's retransmissions the connection is dropped at 1100 ms without a segment, and the
    /// error is ETIMEDOUT, reported once.
    #[test]
    fn user_timeout_aborts_retransmissions() {
        let mut c = linux6_sending(seg(FLAG_SYN, 0, 0, 0));
        c.inject(seg(FLAG_ACK, 1, 1, 0), None);
        assert_eq!(c.set_user_timeout(-1), Err("EINVAL"));
        c.set_user_timeout(1000).unwrap();
        c.write(1000);
        let out = c.advance(1099 * MS);
        assert!(out.len() >= 3, "the data and its retransmissions");
        assert!(c.take_error().is_none());
        assert!(c.advance(1100 * MS).is_empty(), "tcp_write_err() sends nothing");
        assert_eq!(c.info()["tcpi_state"], 7);
        assert_eq!(c.take_error(), Some("ETIMEDOUT"));
        assert_eq!(c.take_error(), None);
        assert!(c.advance(10_000 * MS).is_empty());
    }

    /// The passive closer: the peer's FIN, our close and FIN, the peer's ACK of it (LAST-ACK →
    /// CLOSED); a later segment reaches no socket and draws <SEQ=SEG.ACK><CTL=RST>.
    #[test]
    fn segment_after_last_ack_draws_a_reset() {
        let mut c = linux6_sending(seg(FLAG_SYN, 0, 0, 0));
        c.inject(seg(FLAG_ACK, 1, 1, 0), None);
        c.inject(seg(FLAG_ACK | crate::net::FLAG_FIN, 1, 1, 0), None);
        assert!(c.peer_closed());
        c.advance(110 * MS);
        c.close();
        let fin = c.advance(110 * MS);
        assert!(fin.iter().any(|x| x.1.fin() && x.1.seq == 1 && x.1.ack == 2));
        c.inject(seg(FLAG_ACK, 2, 2, 0), None);
        assert_eq!(c.info()["tcpi_state"], 7);
        assert!(c.advance(120 * MS).is_empty());
        c.inject(seg(FLAG_ACK, 2, 2, 0), None);
        let rst = c.advance(130 * MS);
        assert_eq!((rst[0].1.flags, rst[0].1.seq), (FLAG_RST, 2));
    }
}
