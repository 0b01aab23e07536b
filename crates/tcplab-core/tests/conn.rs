//! Packet-level tests of the TCP connection (`TcpConn`): two endpoints driven by hand in virtual
//! time, segments handed across with a fixed one-way delay, and the exact segments and events
//! asserted. Who opens is independent of who sends: here the active opener sends a request and
//! the passive one answers on the same connection (RFC 793 §3.4 handshake, RFC 1122 §4.2.3.2
//! piggybacked ACKs, FINs both ways).

use tcplab_core::net::{Segment, FLAG_ACK, FLAG_FIN, FLAG_SYN};
use tcplab_core::tcp::config::{InitialWindow, Limit, Unlimited};
use tcplab_core::tcp::{ConnEvent, OutSeg, TcpConfig, TcpConn, TimerKind};
use tcplab_core::units::{ms, Size, Time};

const MSS: u64 = 1000;
const DELAY: Time = 10_000_000; // 10 ms one way

fn cfg() -> TcpConfig {
    let mut c = TcpConfig::rfc();
    c.mss = Size(MSS);
    c.initial_window = InitialWindow::Segments(4);
    c.rwnd = Limit::Named(Unlimited::Unlimited);
    c.delayed_ack = true;
    c
}

/// What crossed the wire: (time sent, from the client?, segment).
type Wire = Vec<(Time, bool, Segment)>;

/// Two endpoints and a lossless path: every segment arrives `DELAY` after it was sent. Timers
/// are served in time order with the segments.
struct Pair {
    now: Time,
    client: TcpConn,
    server: TcpConn,
    in_flight: Vec<(Time, bool, Segment)>,
    timers: Vec<(Time, bool, TimerKind)>,
    wire: Wire,
    client_events: Vec<ConnEvent>,
    server_events: Vec<ConnEvent>,
}

impl Pair {
    fn new(c: TcpConfig) -> Pair {
        let mut out = Vec::new();
        let server = TcpConn::listen(c.clone(), 0, &mut out);
        assert!(out.is_empty(), "a listener sends nothing");
        let client = TcpConn::connect(c, 0, &mut out);
        let mut server = server;
        let server_events = server.take_events().collect();
        let mut p = Pair { now: 0, client, server, in_flight: Vec::new(), timers: Vec::new(), wire: Vec::new(), client_events: Vec::new(), server_events };
        p.sent(true, out);
        p
    }

    fn sent(&mut self, from_client: bool, out: Vec<OutSeg>) {
        for o in out {
            self.wire.push((self.now, from_client, o.seg.clone()));
            self.in_flight.push((self.now + DELAY, from_client, o.seg));
        }
        let now = self.now;
        let (conn, events) = if from_client { (&mut self.client, &mut self.client_events) } else { (&mut self.server, &mut self.server_events) };
        let timers = &mut self.timers;
        conn.take_timers(|k, t| timers.push((t.max(now), from_client, k)));
        events.extend(conn.take_events());
    }

    /// Run until nothing is in flight and no timer is due before `until`; the application
    /// callback `app(pair, from_client, event)` may write and close.
    fn run(&mut self, until: Time, mut app: impl FnMut(&mut Pair, bool, ConnEvent)) {
        loop {
            let next_pkt = self.in_flight.iter().enumerate().min_by_key(|(_, x)| x.0).map(|(i, x)| (x.0, i));
            let next_tmr = self.timers.iter().enumerate().min_by_key(|(_, x)| x.0).map(|(i, x)| (x.0, i));
            let mut out = Vec::new();
            let from_client = match (next_pkt, next_tmr) {
                (Some((t, i)), tm) if tm.is_none_or(|(u, _)| t <= u) && t <= until => {
                    let (_, from_client, seg) = self.in_flight.remove(i);
                    self.now = t;
                    let to = if from_client { &mut self.server } else { &mut self.client };
                    to.on_segment(t, &seg, &mut out);
                    !from_client
                }
                (_, Some((t, i))) if t <= until => {
                    let (_, at_client, k) = self.timers.remove(i);
                    self.now = t;
                    let c = if at_client { &mut self.client } else { &mut self.server };
                    if let Some(again) = c.on_timer(t, k, &mut out) {
                        self.timers.push((again, at_client, k));
                    }
                    at_client
                }
                _ => return,
            };
            let before = if from_client { self.client_events.len() } else { self.server_events.len() };
            self.sent(from_client, out);
            let new: Vec<ConnEvent> = if from_client { self.client_events[before..].to_vec() } else { self.server_events[before..].to_vec() };
            for e in new {
                app(self, from_client, e);
            }
        }
    }

    fn write(&mut self, client: bool, bytes: u64) {
        let mut out = Vec::new();
        let now = self.now;
        if client { self.client.write(now, bytes, &mut out) } else { self.server.write(now, bytes, &mut out) }
        self.sent(client, out);
    }

    fn close(&mut self, client: bool) {
        let mut out = Vec::new();
        let now = self.now;
        if client { self.client.close(now, &mut out) } else { self.server.close(now, &mut out) }
        self.sent(client, out);
    }
}

fn describe(w: &Wire) -> Vec<String> {
    w.iter()
        .map(|(t, c, s)| {
            let mut f = String::new();
            if s.flags & FLAG_SYN != 0 {
                f += "S";
            }
            if s.flags & FLAG_FIN != 0 {
                f += "F";
            }
            if s.flags & FLAG_ACK != 0 {
                f += ".";
            }
            format!("{:>3}ms {} {f} seq={} ack={} len={}", t / 1_000_000, if *c { "c>s" } else { "s>c" }, s.seq, s.ack, s.len)
        })
        .collect()
}

#[test]
fn request_and_response_on_one_connection_exact_segments() {
    // The client sends a 300-byte request; the server answers with 2500 bytes on the same
    // connection when the request is delivered, then both close.
    let mut p = Pair::new(cfg());
    p.write(true, 300); // written before the handshake completes: sent once it does
    p.run(ms(1000), |p, client, ev| match (client, ev) {
        (false, ConnEvent::Delivered(n)) => {
            assert_eq!(n, 300, "the request arrives whole");
            p.write(false, 2500);
            p.close(false);
        }
        (true, ConnEvent::PeerClosed) => p.close(true),
        _ => {}
    });
    let got = describe(&p.wire);
    let want = [
        "  0ms c>s S seq=0 ack=0 len=0",         // SYN
        " 10ms s>c S. seq=0 ack=1 len=0",        // SYN-ACK
        " 20ms c>s . seq=1 ack=1 len=300",       // the request acknowledges the SYN-ACK
        " 30ms s>c . seq=1 ack=301 len=1000",    // the response carries the request's ACK
        " 30ms s>c . seq=1001 ack=301 len=1000", //   (no separate delayed ACK)
        " 30ms s>c . seq=2001 ack=301 len=500",  // the last bytes
        " 30ms s>c F. seq=2501 ack=301 len=0",   // tcplab's FIN is a segment of its own
        " 40ms c>s . seq=301 ack=2001 len=0",    // RFC 5681 §4.2: an ACK every second segment
        " 40ms c>s . seq=301 ack=2502 len=0",    // the FIN is acknowledged at once
        " 40ms c>s F. seq=301 ack=2502 len=0",   // the client closes in turn
        " 50ms s>c . seq=2502 ack=302 len=0",    // the server acknowledges the client's FIN
    ];
    assert_eq!(got, want, "\n{}", got.join("\n"));
    // The first response segment delivers data and acknowledges the request in one.
    use ConnEvent::*;
    assert_eq!(p.client_events, [Established, Delivered(1000), AllAcked, Delivered(1000), Delivered(500), PeerClosed, Closed]);
    assert_eq!(p.server_events, [Established, Delivered(300), AllAcked, Closed, PeerClosed]);
}

#[test]
fn a_delayed_ack_rides_on_data_written_before_its_timer() {
    // One 500-byte request: the server owes a delayed ACK (RFC 1122 §4.2.3.2); its answer, written
    // 50 ms after the request arrived and before the 100 ms delayed-ACK timeout, carries it.
    let mut c = cfg();
    c.delack_timeout = tcplab_core::units::Duration(ms(100));
    let mut p = Pair::new(c);
    p.write(true, 500);
    p.run(ms(70), |_, _, _| {});
    p.now = ms(70);
    p.write(false, 100);
    p.run(ms(1000), |_, _, _| {});
    let from_server: Vec<&Segment> = p.wire.iter().filter(|(_, c, _)| !c).map(|(_, _, s)| s).collect();
    assert_eq!(from_server.len(), 2, "SYN-ACK and the answer, no pure ACK: {:?}", describe(&p.wire));
    assert_eq!((from_server[1].ack, from_server[1].len), (501, 100));
}

#[test]
fn without_a_handshake_both_ends_are_open_at_once() {
    let mut c = cfg();
    c.handshake = false;
    c.fin = false;
    let mut p = Pair::new(c);
    assert!(p.client_events.contains(&ConnEvent::Established));
    assert!(p.server_events.contains(&ConnEvent::Established));
    p.write(false, 1000); // the passive end sends first
    p.run(ms(1000), |_, _, _| {});
    let got = describe(&p.wire);
    assert_eq!(got[0], "  0ms s>c . seq=1 ack=0 len=1000", "{got:?}");
    assert_eq!(p.client_events.last(), Some(&ConnEvent::Delivered(1000)));
    assert_eq!(p.server_events.last(), Some(&ConnEvent::AllAcked));
}
