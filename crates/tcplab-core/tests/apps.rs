//! The application interface through the whole world: applications written here (an exchange of
//! a request and a response on each of several connections, a UDP sender) drive connections
//! through `Ctx`, and the world moves their packets through the same links, queues and captures
//! as the scenario's flows. Connection state is freed when an application is done with it.

use tcplab_core::app::{App, Ctx, Records};
use tcplab_core::net::{ConnId, Datagram, Label, NodeId};
use tcplab_core::tcp::{ConnEvent, TcpConfig};
use tcplab_core::{Scenario, World};

const REQUEST: u64 = 300;
const RESPONSE: u64 = 20_000;

/// `n` exchanges, one after another, each on a fresh connection from node 0 to node 1.
struct Exchanges {
    index: u32,
    n: u32,
    done: u32,
    cfg: TcpConfig,
    live: Option<(ConnId, ConnId)>,
    /// (bytes the client received, when) per exchange.
    got: Vec<(u64, u64)>,
    received: u64,
}

impl App for Exchanges {
    fn start(&mut self, cx: &mut Ctx) {
        cx.schedule(0, 0);
    }
    fn on_timer(&mut self, cx: &mut Ctx, _token: u32) {
        let (c, s) = cx.connect(NodeId(0), NodeId(1), &self.cfg, &self.cfg, Label { flow: self.index, epoch: self.done + 1 });
        cx.set_rcv_lowat(s, REQUEST);
        cx.write(c, REQUEST);
        self.live = Some((c, s));
        self.received = 0;
    }
    fn on_event(&mut self, cx: &mut Ctx, id: ConnId, ev: ConnEvent) {
        let (c, s) = self.live.expect("a live exchange");
        match ev {
            ConnEvent::Delivered(n) if id == s => {
                assert_eq!(n, REQUEST, "the server is woken once, for the whole request");
                cx.write(s, RESPONSE);
                cx.close(s);
            }
            ConnEvent::Delivered(n) if id == c => self.received += n,
            ConnEvent::PeerClosed if id == c => cx.close(c),
            // Both ends closed (each told Closed once its FIN is acknowledged): free both.
            ConnEvent::Closed if id == c => {
                let now = cx.now;
                self.got.push((self.received, now));
                cx.free(c);
                cx.free(s);
                self.live = None;
                self.done += 1;
                if self.done < self.n {
                    cx.schedule(now + 1_000_000, 0);
                } else {
                    cx.finished();
                }
            }
            _ => {}
        }
    }
    fn finish(&mut self, _cx: &mut Ctx, _rec: &mut Records) {}
}

/// Sends `n` datagrams of `len` bytes from node 0 to node 1, one every 10 ms (slower than the
/// link drains them, so none is dropped).
struct Udp {
    index: u32,
    n: u32,
    len: u32,
    sock: Option<(ConnId, ConnId)>,
    sent: u32,
    arrived: Vec<u64>,
}

impl App for Udp {
    fn start(&mut self, cx: &mut Ctx) {
        self.sock = Some(cx.open_udp(NodeId(0), NodeId(1), Label { flow: self.index, epoch: 1 }));
        if self.n > 0 {
            cx.schedule(0, 0);
        }
    }
    fn on_timer(&mut self, cx: &mut Ctx, _token: u32) {
        let (a, _) = self.sock.unwrap();
        cx.send_datagram(a, self.len);
        self.sent += 1;
        if self.sent < self.n {
            cx.schedule(cx.now + 10_000_000, 0);
        }
    }
    fn on_event(&mut self, _cx: &mut Ctx, _id: ConnId, _ev: ConnEvent) {}
    fn on_datagram(&mut self, cx: &mut Ctx, id: ConnId, d: &Datagram) {
        assert_eq!(id, self.sock.unwrap().1);
        assert_eq!(d.len, self.len);
        self.arrived.push(d.seq);
        if self.arrived.len() as u32 == self.n {
            let (a, b) = self.sock.take().unwrap();
            let sent = cx.endpoint(a).map(|e| match &e.kind {
                tcplab_core::conns::EndpointKind::Udp(u) => (u.sent_pkts, u.sent_bytes),
                _ => unreachable!(),
            });
            assert_eq!(sent, Some((self.n as u64, self.n as u64 * self.len as u64)));
            cx.free(a);
            cx.free(b);
            cx.finished();
        }
    }
    fn finish(&mut self, _cx: &mut Ctx, _rec: &mut Records) {}
}

const NET: &str = r#"
[topology]
kind = "single_link"
rate = "2Mbps"
delay = "10ms"
queue = 20
[[flows]]
bytes = "1KB"
"#;

fn world(extra: &str) -> World {
    let s = Scenario::from_toml(&format!("{extra}{NET}"), &[]).unwrap();
    World::build(&s, 7).unwrap()
}

#[test]
fn exchanges_deliver_every_byte_once_and_free_their_state() {
    let mut w = world("");
    let cfg = TcpConfig::rfc();
    let a = w.add_app(Box::new(Exchanges { index: 1, n: 5, done: 0, cfg, live: None, got: Vec::new(), received: 0 }));
    assert_eq!(a, 1, "after the scenario's one flow");
    let mut peak = 0;
    while w.step() {
        peak = peak.max(w.live_connections());
        let (c, d, x, f) = w.packet_balance();
        assert_eq!(c, d + x + f, "packets conserved");
    }
    assert_eq!(w.live_connections(), 0, "every connection's state is freed");
    assert_eq!(peak, 4, "one exchange at a time beside the flow (two ends each)");
    let r = w.finish_run().unwrap();
    assert!(r.meta.completed);
}

#[test]
fn same_seed_same_run_and_apps_leave_the_flow_alone_when_idle() {
    let run = |with_app: bool| {
        let mut w = world("duration = \"5s\"\n");
        if with_app {
            w.add_app(Box::new(Udp { index: 1, n: 0, len: 100, sock: None, sent: 0, arrived: Vec::new() }));
        }
        w.run();
        serde_json::to_string(&w.finish_run().unwrap()).unwrap()
    };
    assert_eq!(run(false), run(false));
    // A UDP app that never sends does not change the flow's results.
    let (a, b): (serde_json::Value, serde_json::Value) = (serde_json::from_str(&run(false)).unwrap(), serde_json::from_str(&run(true)).unwrap());
    assert_eq!(a["connections"], b["connections"]);
    assert_eq!(a["links"], b["links"]);
}

#[test]
fn datagrams_cross_the_queues_and_the_captures() {
    let dir = std::env::temp_dir().join(format!("tcplab-apps-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let pcap = dir.join("udp.pcap");
    let mut w = world(&format!("[[capture]]\npath = {:?}\nnode = \"receiver\"\n", pcap.to_string_lossy()));
    w.add_app(Box::new(Udp { index: 1, n: 50, len: 1200, sock: None, sent: 0, arrived: Vec::new() }));
    w.run();
    assert_eq!(w.live_connections(), 0, "every datagram arrived and the sockets were freed");
    let r = w.finish_run().unwrap();
    let link = &r.links[0];
    // 50 datagrams of 1200 + 28 header bytes, and the flow's handful of TCP packets.
    assert!(link.sent_bytes >= 50 * 1228, "{}", link.sent_bytes);
    let bytes = std::fs::read(&pcap).unwrap();
    // pcap records: a 24-byte file header, then 16 bytes + the captured frame each. The node tap
    // sees every packet that arrives at or leaves the receiver: count the UDP ones (IP protocol 17).
    let mut off = 24;
    let mut udp = 0;
    while off + 16 <= bytes.len() {
        let incl = u32::from_le_bytes(bytes[off + 8..off + 12].try_into().unwrap()) as usize;
        let frame = &bytes[off + 16..off + 16 + incl];
        if frame.len() > 23 && frame[23] == 17 {
            udp += 1;
        }
        off += 16 + incl;
    }
    assert_eq!(udp, 50);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Opens two connections from node 0 to node 1 and, once both are open, writes in one callback
/// to the first (`A1` bytes), then the second (`B1`), then the first again (`A2`).
struct Interleave {
    index: u32,
    cfg: TcpConfig,
    conns: Vec<ConnId>,
    open: u32,
}

const A1: u64 = 100;
const B1: u64 = 200;
const A2: u64 = 300;

impl App for Interleave {
    fn start(&mut self, cx: &mut Ctx) {
        cx.schedule(0, 0);
    }
    fn on_timer(&mut self, cx: &mut Ctx, _token: u32) {
        for epoch in 1..=2 {
            let (c, _) = cx.connect(NodeId(0), NodeId(1), &self.cfg, &self.cfg, Label { flow: self.index, epoch });
            self.conns.push(c);
        }
    }
    fn on_event(&mut self, cx: &mut Ctx, id: ConnId, ev: ConnEvent) {
        if ev == ConnEvent::Established && self.conns.contains(&id) {
            self.open += 1;
            if self.open == 2 {
                let (a, b) = (self.conns[0], self.conns[1]);
                cx.write(a, A1);
                cx.write(b, B1);
                cx.write(a, A2);
                cx.finished();
            }
        }
    }
    fn finish(&mut self, _cx: &mut Ctx, _rec: &mut Records) {}
}

#[test]
fn segments_leave_in_the_order_the_application_wrote_them_across_connections() {
    let dir = std::env::temp_dir().join(format!("tcplab-apps-order-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let pcap = dir.join("order.pcap");
    let mut w = world(&format!("duration = \"2s\"\n[[capture]]\npath = {:?}\nnode = \"sender\"\n", pcap.to_string_lossy()));
    w.add_app(Box::new(Interleave { index: 1, cfg: TcpConfig::rfc(), conns: Vec::new(), open: 0 }));
    w.run();
    w.finish_run().unwrap();
    let bytes = std::fs::read(&pcap).unwrap();
    // The TCP payload of every frame the sender's tap saw (Ethernet, IPv4, TCP): IP total
    // length − IP header − TCP header (data offset).
    let (mut off, mut payloads) = (24, Vec::new());
    while off + 16 <= bytes.len() {
        let incl = u32::from_le_bytes(bytes[off + 8..off + 12].try_into().unwrap()) as usize;
        let f = &bytes[off + 16..off + 16 + incl];
        if f.len() >= 14 + 20 + 13 && f[23] == 6 {
            let total = u16::from_be_bytes([f[16], f[17]]) as u64;
            let ihl = (f[14] & 0x0f) as u64 * 4;
            let thl = (f[14 + ihl as usize + 12] >> 4) as u64 * 4;
            payloads.push(total - ihl - thl);
        }
        off += 16 + incl;
    }
    let app: Vec<u64> = payloads.into_iter().filter(|p| [A1, B1, A2].contains(p)).collect();
    assert_eq!(app, vec![A1, B1, A2], "A, then B, then A again leave as written, not grouped by connection");
    let _ = std::fs::remove_dir_all(&dir);
}
