//! A whole-connection test harness in the style of smoltcp's `send!` / `recv!`: build a `TcpConn`
//! in a given state, feed it exact segments at exact virtual times, fire its timers as the world
//! would, and assert exactly which segments come out and when.
//!
//! ```ignore
//! let mut h = Harness::established(|c| c.initial_window = InitialWindow::Segments(2));
//! h.write(0, 10 * MSS);
//! h.recv(0, [seg!(seq = 1, ..DATA), seg!(seq = 1001, ..DATA)]);
//! h.send(ms(100), seg!(ack = 1001));
//! assert_eq!(h.info().cwnd, 3 * MSS);
//! ```
//!
//! Segments are written as `Seg` values: `seg!(field = value, ...)` fills the fields given over
//! the template `SEG` (a segment with the ACK flag, sequence 1, the unlimited window), and
//! `seg!(..., ..DATA)` over another template. `sack = [(l, r), ...]` lists SACK blocks.
//! Each file that uses it says `#[macro_use] mod harness;`.
#![allow(dead_code)]

use tcplab_core::net::{SackBlock, Segment, FLAG_ACK, FLAG_CWR, FLAG_ECE, FLAG_FIN, FLAG_PSH, FLAG_SYN};
use tcplab_core::tcp::config::{InitialWindow, Limit, Unlimited};
use tcplab_core::tcp::{ConnEvent, OutSeg, TcpConfig, TcpConn, TcpInfo, TimerKind, Variant};
use tcplab_core::units::{Size, Time};

pub const MSS: u64 = 1000;

/// A segment as the tests write it: every field a wire field (no drop-filter tag).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Seg {
    pub seq: u64,
    pub ack: u64,
    pub len: u32,
    pub flags: u8,
    pub wnd: u32,
    pub sack: &'static [(u64, u64)],
    pub opt_len: u16,
    pub sack_permitted: bool,
    /// The IP ECN field (RFC 3168 §5: 0 not ECT, 2 ECT(0), 3 CE).
    pub ecn: u8,
    /// The timestamps option (RFC 7323): `Some((tsval, tsecr))`.
    pub ts: Option<(u32, u32)>,
}

/// The default template: an ACK-flagged segment at sequence 1 carrying nothing, acknowledging
/// nothing (ack 0: what an end sends before it has heard from its peer), unlimited window.
pub const SEG: Seg = Seg { seq: 1, ack: 0, len: 0, flags: FLAG_ACK, wnd: u32::MAX, sack: &[], opt_len: 0, sack_permitted: false, ecn: 0, ts: None };
/// A full-sized data segment.
pub const DATA: Seg = Seg { len: MSS as u32, ..SEG };
/// A FIN.
pub const FIN: Seg = Seg { flags: FLAG_ACK | FLAG_FIN, ..SEG };
/// A SYN-ACK answering our SYN (its sequence 0, acknowledging our SYN).
pub const SYNACK: Seg = Seg { seq: 0, ack: 1, flags: FLAG_SYN | FLAG_ACK, ..SEG };

/// `seg!(seq = 1001, len = 1000)`, `seg!(ack = 1001, sack = [(2001, 3001)])`,
/// `seg!(seq = 2001, ..DATA)`: a `Seg` from a template (`SEG` unless `..TEMPLATE` ends the list).
macro_rules! seg {
    (@acc [$($done:tt)*] ; .. $tpl:expr) => { $crate::harness::Seg { $($done)* ..$tpl } };
    (@acc [$($done:tt)*] ; sack = [$($b:expr),* $(,)?] $(, $($rest:tt)*)?) => {
        seg!(@acc [$($done)* sack: &[$($b),*],] ; $($($rest)*)?)
    };
    (@acc [$($done:tt)*] ; $f:ident = $v:expr $(, $($rest:tt)*)?) => { seg!(@acc [$($done)* $f: $v,] ; $($($rest)*)?) };
    (@acc [$($done:tt)*] ; ) => { $crate::harness::Seg { $($done)* ..$crate::harness::SEG } };
    ($($t:tt)*) => { seg!(@acc [] ; $($t)*) };
}

/// Data segment k (1-based) as sent: sequence 1 + (k − 1)·MSS, acknowledging the peer's SYN.
pub fn data(k: u64) -> Seg {
    Seg { seq: 1 + (k - 1) * MSS, ack: 1, ..DATA }
}

/// The peer's ACK of everything below data segment k, with SACK blocks.
pub fn ack(k: u64, sack: &[(u64, u64)]) -> Seg {
    let sack: &'static [(u64, u64)] = Box::leak(sack.to_vec().into_boxed_slice());
    Seg { seq: 1, ack: 1 + (k - 1) * MSS, sack, ..SEG }
}

/// SACK block covering data segments a..=b.
pub const fn blk(a: u64, b: u64) -> (u64, u64) {
    (1 + (a - 1) * MSS, 1 + b * MSS)
}

impl Seg {
    pub fn to_segment(self) -> Segment {
        let mut s = Segment { seq: self.seq, ack: self.ack, len: self.len, flags: self.flags, wnd: self.wnd, opt_len: self.opt_len, sack_permitted: self.sack_permitted, ip_ecn: self.ecn, ..Default::default() };
        if let Some((tsval, tsecr)) = self.ts {
            (s.ts, s.tsval, s.tsecr) = (true, tsval, tsecr);
        }
        let blocks: Vec<SackBlock> = self.sack.iter().map(|&(left, right)| SackBlock { left, right }).collect();
        s.set_sack_blocks(&blocks);
        s
    }
}

/// A segment as compared and printed: wire fields only, SACK blocks as pairs.
#[derive(Clone, PartialEq, Eq)]
pub struct Wire {
    pub seq: u64,
    pub ack: u64,
    pub len: u32,
    pub flags: u8,
    pub wnd: u32,
    pub sack: Vec<(u64, u64)>,
    pub opt_len: u16,
    pub sack_permitted: bool,
    pub ecn: u8,
    pub ts: Option<(u32, u32)>,
}

impl From<&Segment> for Wire {
    fn from(s: &Segment) -> Wire {
        let ts = s.ts.then_some((s.tsval, s.tsecr));
        Wire { seq: s.seq, ack: s.ack, len: s.len, flags: s.flags, wnd: s.wnd, sack: s.sack_blocks().iter().map(|b| (b.left, b.right)).collect(), opt_len: s.opt_len, sack_permitted: s.sack_permitted, ecn: s.ip_ecn, ts }
    }
}

impl From<Seg> for Wire {
    fn from(s: Seg) -> Wire {
        Wire::from(&s.to_segment())
    }
}

impl std::fmt::Debug for Wire {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let fl = [(FLAG_SYN, "S"), (FLAG_FIN, "F"), (FLAG_PSH, "P"), (FLAG_ACK, "."), (FLAG_ECE, "E"), (FLAG_CWR, "W")].iter().filter(|(b, _)| self.flags & b != 0).map(|(_, n)| *n).collect::<String>();
        write!(f, "[{fl}] seq={} ack={} len={}", self.seq, self.ack, self.len)?;
        if self.wnd != u32::MAX {
            write!(f, " wnd={}", self.wnd)?;
        }
        if !self.sack.is_empty() {
            write!(f, " sack={:?}", self.sack)?;
        }
        if self.ecn != 0 {
            write!(f, " ecn={}", ["not-ect", "ect1", "ect0", "ce"][self.ecn as usize & 3])?;
        }
        if self.opt_len != 0 || self.sack_permitted {
            write!(f, " opt_len={} sack_permitted={}", self.opt_len, self.sack_permitted)?;
        }
        if let Some((v, e)) = self.ts {
            write!(f, " TS val {v} ecr {e}")?;
        }
        Ok(())
    }
}

impl std::fmt::Debug for Seg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        Wire::from(*self).fmt(f)
    }
}

/// The base configuration of harness connections: the `rfc` profile, MSS 1000 bytes, no
/// handshake and no FIN (data starts at sequence 1 at once), IW 1 segment, unlimited receive
/// window, NewReno.
pub fn cfg() -> TcpConfig {
    let mut c = TcpConfig::rfc();
    c.variant = Variant::Newreno;
    c.mss = Size(MSS);
    c.handshake = false;
    c.fin = false;
    c.initial_window = InitialWindow::Segments(1);
    c.rwnd = Limit::Named(Unlimited::Unlimited);
    c
}

/// One connection in virtual time.
pub struct Harness {
    pub conn: TcpConn,
    now: Time,
    /// Segments sent and not yet asserted, with when they were sent.
    sent: Vec<(Time, Segment)>,
    /// Timer events handed out by the connection and not yet served: (when, which).
    timers: Vec<(Time, TimerKind)>,
    events: Vec<ConnEvent>,
    out: Vec<OutSeg>,
}

impl Harness {
    fn wrap(conn: TcpConn, out: Vec<OutSeg>) -> Harness {
        let mut h = Harness { conn, now: 0, sent: Vec::new(), timers: Vec::new(), events: Vec::new(), out };
        h.collect();
        h
    }

    /// An active opener after `connect` at time 0 (its SYN waits in the output with a
    /// handshake; without one it is established at once).
    /// A client of Linux's recovery over RACK (`loss = "rack"`, `variant = "sack"`, SACK offered)
    /// after a handshake with a 100 ms round trip (the SYN-ACK's sample seeds SRTT = min_rtt =
    /// 100 ms; RTO = 1 s, the `rfc` profile's minimum), with `iw` segments of `bytes` sent at
    /// 100 ms; the peer agrees to SACK or not (`peer_sack`); `knobs` over `cfg()`.
    pub fn rack_client(iw: u32, bytes: u64, peer_sack: bool, knobs: impl FnOnce(&mut TcpConfig)) -> Harness {
        let ms = |x: u64| x * tcplab_core::units::MS;
        let mut c = cfg();
        c.handshake = true;
        c.variant = Variant::Sack;
        c.sack = true;
        c.loss = tcplab_core::tcp::config::LossModel::Rack;
        c.initial_window = InitialWindow::Segments(iw);
        knobs(&mut c);
        c.validate().unwrap();
        let mut h = Harness::client(c);
        assert_eq!(h.take_sent().len(), 1, "the SYN");
        h.send(ms(100), Seg { ack: 1, sack_permitted: peer_sack, ..SYNACK });
        h.recv(ms(100), [Seg { ack: 1, ..SEG }]);
        h.write(ms(100), bytes);
        let sent = h.take_sent();
        assert_eq!(sent.len() as u64, (iw as u64).min(bytes.div_ceil(MSS)), "{sent:?}");
        assert_eq!(h.info().srtt, Some(ms(100)));
        h
    }

    pub fn client(c: TcpConfig) -> Harness {
        let mut out = Vec::new();
        let conn = TcpConn::connect(c, 0, &mut out);
        Harness::wrap(conn, out)
    }

    /// A passive opener after `listen` at time 0.
    pub fn server(c: TcpConfig) -> Harness {
        let mut out = Vec::new();
        let conn = TcpConn::listen(c, 0, &mut out);
        Harness::wrap(conn, out)
    }

    /// An established active opener with nothing written yet: `cfg()` changed by `knobs`,
    /// opened without a handshake (data starts at sequence 1, the RTT estimator is unseeded).
    pub fn established(knobs: impl FnOnce(&mut TcpConfig)) -> Harness {
        let mut c = cfg();
        knobs(&mut c);
        assert!(!c.handshake, "established() opens without a handshake; use client() and SYNACK");
        Harness::client(c)
    }

    /// An established sender with `n` full segments written and sent at time 0 (IW = n, so
    /// cwnd = n segments); the segments are consumed from the output.
    pub fn sending(n: u64, knobs: impl FnOnce(&mut TcpConfig)) -> Harness {
        let mut h = Harness::established(|c| {
            c.initial_window = InitialWindow::Segments(n as u32);
            knobs(c);
        });
        h.write(0, 1 << 40);
        let sent = h.take_sent();
        assert_eq!(sent.len() as u64, n, "the initial window goes out at once: {sent:?}");
        h
    }

    /// Serve segments and timers the connection handed out.
    fn collect(&mut self) {
        let now = self.now;
        for o in self.out.drain(..) {
            self.sent.push((now, o.seg));
        }
        let timers = &mut self.timers;
        self.conn.take_timers(|k, t| timers.push((t, k)));
        self.events.extend(self.conn.take_events());
    }

    /// Move virtual time to `t`, firing every timer due by then in time order, as the world does
    /// (a lazily re-armed timer is scheduled again at its new deadline).
    pub fn advance_to(&mut self, t: Time) {
        assert!(t >= self.now, "time runs forward: {} then {t}", self.now);
        while let Some(i) = (0..self.timers.len()).filter(|&i| self.timers[i].0 <= t).min_by_key(|&i| self.timers[i].0) {
            let (at, kind) = self.timers.remove(i);
            self.now = self.now.max(at);
            if let Some(again) = self.conn.on_timer(self.now, kind, &mut self.out) {
                self.timers.push((again, kind));
            }
            self.collect();
        }
        self.now = t;
    }

    /// The peer's segment arrives at `t` (timers due by then fire first).
    pub fn send(&mut self, t: Time, seg: Seg) {
        self.advance_to(t);
        self.conn.on_segment(t, &seg.to_segment(), &mut self.out);
        self.collect();
    }

    /// The application writes `bytes` at `t`.
    pub fn write(&mut self, t: Time, bytes: u64) {
        self.advance_to(t);
        self.conn.write(t, bytes, &mut self.out);
        self.collect();
    }

    /// The application closes at `t`.
    pub fn close(&mut self, t: Time) {
        self.advance_to(t);
        self.conn.close(t, &mut self.out);
        self.collect();
    }

    /// Exactly these segments went out since the last check, each at time `t` (the harness moves
    /// to `t` first, firing due timers).
    #[track_caller]
    pub fn recv(&mut self, t: Time, segs: impl IntoIterator<Item = Seg>) {
        self.advance_to(t);
        let want: Vec<(Time, Wire)> = segs.into_iter().map(|s| (t, Wire::from(s))).collect();
        let got: Vec<(Time, Wire)> = self.sent.drain(..).map(|(at, s)| (at, Wire::from(&s))).collect();
        assert_eq!(got, want, "segments sent (time, segment)");
    }

    /// Nothing went out since the last check.
    #[track_caller]
    pub fn recv_nothing(&mut self) {
        let got: Vec<(Time, Wire)> = self.sent.drain(..).map(|(at, s)| (at, Wire::from(&s))).collect();
        assert_eq!(got, vec![], "no segment should have been sent");
    }

    /// The segments sent since the last check, drained (for tests that inspect them freely).
    pub fn take_sent(&mut self) -> Vec<(Time, Seg)> {
        let leak = |s: &Segment| -> &'static [(u64, u64)] { Box::leak(s.sack_blocks().iter().map(|b| (b.left, b.right)).collect::<Vec<_>>().into_boxed_slice()) };
        self.sent.drain(..).map(|(t, s)| (t, Seg { seq: s.seq, ack: s.ack, len: s.len, flags: s.flags, wnd: s.wnd, sack: leak(&s), opt_len: s.opt_len, sack_permitted: s.sack_permitted, ecn: s.ip_ecn, ts: s.ts.then_some((s.tsval, s.tsecr)) })).collect()
    }

    /// The connection's snapshot now.
    pub fn info(&self) -> TcpInfo {
        self.conn.info()
    }

    /// The pending deadline of a timer (None when it is not running).
    pub fn deadline(&self, which: TimerKind) -> Option<Time> {
        match which {
            TimerKind::Rto => self.conn.snd.core.rto_timer.deadline(),
            TimerKind::DelAck => self.conn.rcv.delack_timer.deadline(),
            TimerKind::SynAck => self.conn.rcv.synack_timer.deadline(),
            TimerKind::Pacing => self.conn.snd.core.pacing_timer.deadline(),
        }
    }

    /// Events for the application since the last call (drained).
    pub fn events(&mut self) -> Vec<ConnEvent> {
        std::mem::take(&mut self.events)
    }

    pub fn now(&self) -> Time {
        self.now
    }
}
