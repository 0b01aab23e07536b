//! The simulated transport of TBIT (`tcplab tbit --sim`): a web server built on a `TcpConn` of
//! any profile and preset, facing a prober that speaks segments. The probe logic itself (which
//! segments to send, how to read the answer) lives once, above both transports, in Python
//! (`tcplab.tbit`); this module only moves the prober's segments to the simulated server and the
//! server's segments back, in virtual time, across a path with a fixed one-way delay.
//!
//! Sequence numbers are relative on both sides, as the real transport reports them: a SYN takes
//! 0, data starts at 1. The server's application is a minimal HTTP responder: a request whose
//! payload names `Range: bytes=A-B` is answered with B−A+1 bytes plus a header, any other request
//! with the page size (Ladha et al. 2004 §3: TBIT's ER test asks for a byte range).

use crate::net::{SackBlock, Segment, FLAG_ACK, FLAG_SYN, MAX_SACK_BLOCKS};
use crate::tcp::{ConnEvent, OutSeg, TcpConfig, TcpConn, TcpSpec, TimerKind};
use crate::units::{Size, Time};
use std::collections::VecDeque;

/// Bytes of the HTTP response header the simulated server puts before the body.
pub const HEADER_BYTES: u64 = 200;

/// Resolve a stack description (`{"profile": .., "preset": .., knob: value, ..}`, as a flow's
/// `tcp` table) into the configuration the server runs with; the error names the bad key.
pub fn resolve(spec_json: &str) -> Result<TcpConfig, String> {
    let spec: TcpSpec = serde_json::from_str(spec_json).map_err(|e| format!("tcp: {e}"))?;
    crate::scenario::resolve_tcp(&spec).map_err(|e| format!("tcp.{}: {}", e.knob, e.message))
}

/// A segment as the prober sees it, with its arrival time.
#[derive(Clone, Debug, PartialEq)]
pub struct Seen {
    pub time: Time,
    pub seg: Segment,
}

pub struct SimServer {
    cfg: TcpConfig,
    delay: Time,
    page: u64,
    now: Time,
    conn: Option<TcpConn>,
    to_server: VecDeque<(Time, Segment, Option<u64>, u64)>,
    to_prober: VecDeque<(Time, Segment)>,
    timers: Vec<(Time, TimerKind)>,
    out: Vec<OutSeg>,
    /// Bytes of the request seen so far, and the response size it asks for.
    request: Option<u64>,
    answered: bool,
    /// Segments handled (a bound against a runaway loop).
    steps: u64,
}

/// Most events one `recv` may process before it gives up (a bound, far above any probe's need).
const MAX_STEPS: u64 = 1_000_000;

impl SimServer {
    /// A server (passive opener) of this configuration, a path of `delay` each way, serving
    /// `page` bytes for a plain GET.
    pub fn new(cfg: TcpConfig, delay: Time, page: u64) -> SimServer {
        SimServer { cfg, delay, page, now: 0, conn: None, to_server: VecDeque::new(), to_prober: VecDeque::new(), timers: Vec::new(), out: Vec::new(), request: None, answered: false, steps: 0 }
    }

    /// The stack opens a connection to the prober (active open, for the SYN timing test).
    pub fn connect(&mut self) {
        let mut out = std::mem::take(&mut self.out);
        let c = TcpConn::connect(self.cfg.clone(), self.now, &mut out);
        self.conn = Some(c);
        self.out = out;
        self.flush();
    }

    pub fn config(&self) -> &TcpConfig {
        &self.cfg
    }

    /// What a prober offering MSS `mss` should meet, in the configuration's own rules: the
    /// segment size, the initial window in segments (`InitialWindow::bytes`), and the timers in
    /// seconds. TBIT's expectations read these rather than re-deriving them.
    pub fn facts(&self, mss: u64) -> serde_json::Value {
        let c = &self.cfg;
        let eff = c.mss.0.min(mss).max(1);
        let s = |d: crate::units::Duration| d.0 as f64 / crate::units::SEC as f64;
        serde_json::json!({
            "mss": eff,
            "iw_segments": c.initial_window.bytes(eff as u32) / eff,
            "rto_initial_s": s(c.rto_initial),
            "rto_min_s": s(c.rto_min),
            "rto_max_s": s(c.rto_max),
            "timer_tick_s": s(c.timer_tick),
            "clock_granularity_s": s(c.clock_granularity),
        })
    }

    pub fn now(&self) -> Time {
        self.now
    }

    /// The prober sends `seg` now (its `payload_range`: the response size its request asks for,
    /// when it carries one; `mss`: the MSS option of a SYN).
    pub fn send(&mut self, seg: Segment, mss: Option<u64>, request: Option<u64>) {
        let resp = request.unwrap_or(0);
        self.to_server.push_back((self.now + self.delay, seg, mss, resp));
    }

    /// The response size for a request payload: a byte range asks for its length plus the
    /// header, anything else for the page plus the header.
    pub fn response_size(&self, payload: &str) -> u64 {
        let lower = payload.to_ascii_lowercase();
        if let Some(i) = lower.find("range: bytes=") {
            let rest = &lower[i + "range: bytes=".len()..];
            let spec: String = rest.chars().take_while(|c| c.is_ascii_digit() || *c == '-').collect();
            if let Some((a, b)) = spec.split_once('-') {
                if let (Ok(a), Ok(b)) = (a.parse::<u64>(), b.parse::<u64>()) {
                    if b >= a && a < self.page {
                        return HEADER_BYTES + (b.min(self.page - 1) - a + 1);
                    }
                }
            }
        }
        HEADER_BYTES + self.page
    }

    /// Advance virtual time until the next segment reaches the prober or `timeout` passes.
    pub fn recv(&mut self, timeout: Time) -> Option<Seen> {
        let until = self.now.saturating_add(timeout);
        loop {
            self.steps += 1;
            if self.steps > MAX_STEPS {
                return None;
            }
            let arrive = self.to_prober.front().map(|x| x.0);
            let deliver = self.to_server.front().map(|x| x.0);
            let timer = self.timers.iter().map(|t| t.0).min();
            let server_next = [deliver, timer].into_iter().flatten().min();
            match (arrive, server_next) {
                (Some(a), s) if a <= until && s.is_none_or(|s| a <= s) => {
                    let (t, seg) = self.to_prober.pop_front().expect("front");
                    self.now = t;
                    return Some(Seen { time: t, seg });
                }
                (_, Some(s)) if s <= until => {
                    self.now = s;
                    if deliver == Some(s) {
                        let (_, seg, mss, resp) = self.to_server.pop_front().expect("front");
                        self.deliver(seg, mss, resp);
                    } else {
                        let i = self.timers.iter().position(|t| t.0 == s).expect("due");
                        let (_, kind) = self.timers.swap_remove(i);
                        if let Some(conn) = self.conn.as_mut() {
                            let mut out = std::mem::take(&mut self.out);
                            if let Some(again) = conn.on_timer(s, kind, &mut out) {
                                self.timers.push((again, kind));
                            }
                            self.out = out;
                        }
                    }
                    self.flush();
                }
                _ => {
                    self.now = until;
                    return None;
                }
            }
        }
    }

    fn deliver(&mut self, seg: Segment, mss: Option<u64>, resp: u64) {
        if self.conn.is_none() || (!self.cfg.handshake && seg.syn()) {
            if !seg.syn() || seg.has_ack() {
                return; // nothing listens for it: a real stack would answer with a RST
            }
            if !self.cfg.handshake {
                // A profile without a handshake (ns-2's one-way agents) opens at once; the prober
                // still needs an answer to its SYN: one says what the stack would agree to.
                let sack = self.cfg.sack && seg.sack_permitted;
                let mut synack = Segment { seq: 0, ack: 1, flags: FLAG_SYN | FLAG_ACK, wnd: u32::MAX, sack_permitted: sack, ..Default::default() };
                if self.cfg.ecn_accepts() && seg.ece() && seg.cwr() {
                    synack.flags |= crate::net::FLAG_ECE; // RFC 3168 §6.1.1
                }
                self.out.push(OutSeg { seg: synack, tag: crate::net::PacketTag::Syn { tx: 1 }, edt: 0 });
                if self.conn.is_some() {
                    return;
                }
            }
            let mut cfg = self.cfg.clone();
            if let Some(m) = mss {
                // RFC 9293 §3.7.1: the sender's MSS is at most what the peer's SYN allows.
                cfg.mss = Size(cfg.mss.0.min(m).max(1));
            }
            if !cfg.handshake {
                // Without a handshake the stack would use SACK whatever the peer said; the
                // prober's SYN stands for the agreement a handshake makes (RFC 2018 §2).
                cfg.sack = cfg.sack && seg.sack_permitted;
                // Likewise ECN (RFC 3168 §6.1.1): in use when the prober's SYN asked and the stack
                // would agree.
                cfg.ecn = if cfg.ecn_accepts() && seg.ece() && seg.cwr() { crate::tcp::config::Ecn::On } else { crate::tcp::config::Ecn::Off };
            }
            let mut out = std::mem::take(&mut self.out);
            self.conn = Some(TcpConn::listen(cfg, self.now, &mut out));
            self.out = out;
        }
        if resp > 0 && self.request.is_none() {
            self.request = Some(resp);
        }
        let mut out = std::mem::take(&mut self.out);
        let conn = self.conn.as_mut().expect("open");
        conn.on_segment(self.now, &seg, &mut out);
        let delivered = conn.take_events().any(|e| matches!(e, ConnEvent::Delivered(_)));
        if delivered && !self.answered {
            if let Some(n) = self.request {
                self.answered = true;
                conn.write(self.now, n, &mut out);
            }
        }
        self.out = out;
    }

    fn flush(&mut self) {
        if let Some(conn) = self.conn.as_mut() {
            let timers = &mut self.timers;
            conn.take_timers(|k, t| timers.push((t, k)));
            conn.take_events().for_each(drop);
        }
        for o in self.out.drain(..) {
            self.to_prober.push_back((self.now + self.delay, o.seg));
        }
    }
}

/// A prober's segment from its parts (relative sequence numbers; SACK blocks as (left, right)).
pub fn segment(flags: u8, seq: u64, ack: u64, len: u32, wnd: u32, sack: &[(u64, u64)], sack_permitted: bool) -> Segment {
    let mut s = Segment { seq, ack, len, flags, wnd, sack_permitted, ..Default::default() };
    let blocks: Vec<SackBlock> = sack.iter().take(MAX_SACK_BLOCKS).map(|&(left, right)| SackBlock { left, right }).collect();
    s.set_sack_blocks(&blocks);
    s
}

pub const SYN: u8 = FLAG_SYN;
pub const ACK: u8 = FLAG_ACK;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::MS;

    fn server(spec: &str) -> SimServer {
        SimServer::new(resolve(spec).unwrap(), 5 * MS, 50_000)
    }

    /// Handshake, request, and the first flight of an IW-4 stack at MSS 128 (RFC 3390 §1).
    #[test]
    fn handshake_request_and_first_flight() {
        let mut s = server(r#"{"preset": "sack-iw"}"#);
        s.send(segment(SYN, 0, 0, 0, 65535, &[], true), Some(128), None);
        let synack = s.recv(SEC_TEST).unwrap();
        assert!(synack.seg.syn() && synack.seg.has_ack() && synack.seg.sack_permitted);
        assert_eq!(synack.time, 10 * MS);
        let req = "GET / HTTP/1.1\r\n\r\n";
        let n = s.response_size(req);
        assert_eq!(n, 50_200);
        s.send(segment(ACK, 1, 1, req.len() as u32, 65535, &[], false), None, Some(n));
        let mut data = Vec::new();
        while let Some(x) = s.recv(100 * MS) {
            if x.seg.len > 0 {
                data.push(x.seg.seq);
            }
        }
        assert_eq!(data, [1, 129, 257, 385], "4 segments of 128 bytes");
    }

    #[test]
    fn byte_range_and_bad_specs() {
        let s = server(r#"{"preset": "sack"}"#);
        assert_eq!(s.response_size("GET / HTTP/1.1\r\nRange: bytes=0-1999\r\n\r\n"), 2200);
        assert_eq!(s.response_size("GET / HTTP/1.1\r\n\r\n"), 50_200);
        assert!(resolve(r#"{"preset": "nope"}"#).unwrap_err().starts_with("tcp.preset"));
        assert!(resolve(r#"{"profile": "nope"}"#).unwrap_err().starts_with("tcp.profile"));
        assert!(resolve(r#"{"abc": 7}"#).unwrap_err().starts_with("tcp.abc"));
        assert!(resolve(r#"{"abcd": 1}"#).unwrap_err().contains("abcd"));
    }

    /// The active open: SYNs at the initial RTO and its backoff (RFC 6298 §5.5, 1 s, 2 s, ...).
    #[test]
    fn syn_retransmissions_are_timed() {
        let mut s = server(r#"{"profile": "rfc"}"#);
        s.connect();
        let mut at = Vec::new();
        while let Some(x) = s.recv(10 * SEC_TEST) {
            if x.seg.syn() {
                at.push(x.time);
            }
            if at.len() == 3 {
                break;
            }
        }
        assert_eq!(at, [5 * MS, 1005 * MS, 3005 * MS]);
    }

    /// A profile without a handshake (ns-2's agents) still answers the prober's SYN, with what
    /// it would agree to, and sends the response at once.
    #[test]
    fn a_stack_without_handshake_answers_the_syn() {
        let mut s = server(r#"{"profile": "ns2"}"#);
        s.send(segment(SYN, 0, 0, 0, 65535, &[], true), Some(128), None);
        let synack = s.recv(SEC_TEST).unwrap();
        assert!(synack.seg.syn() && synack.seg.has_ack() && !synack.seg.sack_permitted, "ns2 has SACK off");
        let n = s.response_size("GET / HTTP/1.1\r\n\r\n");
        s.send(segment(ACK, 1, 1, 18, 65535, &[], false), None, Some(n));
        let mut data = 0;
        while let Some(x) = s.recv(100 * MS) {
            data += (x.seg.len > 0) as u32;
        }
        assert_eq!(data, 2, "ns2's IW of 2 segments");
        let mut c = server(r#"{"profile": "ns2"}"#);
        c.connect();
        assert!(c.recv(10 * SEC_TEST).is_none(), "no SYN without a handshake");
    }

    const SEC_TEST: Time = crate::units::SEC;
}
