//! Applications: what opens connections, writes to them, closes them and keeps the records. An
//! application drives connections through a narrow context (`Ctx`: connect, write, close, send a
//! datagram, free, schedule a timer) and is told what happens to them (`ConnEvent`). The TCP code
//! knows nothing of applications, and the world knows nothing of what an application is for.

pub mod bulk;
pub mod reqresp;
pub mod resolved;
pub mod spec;
pub mod traffic;
pub mod web;

use crate::conns::{ConnTable, Endpoint, EndpointKind, UdpSocket};
use crate::net::{ConnId, Datagram, Dir, Label, NodeId};
use crate::result::{ConnRow, ObjectRow, PageRow, TransferRow, UdpRow};
use crate::tcp::{ConnEvent, OutSeg, TcpConfig, TcpConn};
use crate::units::Time;

/// What an application did to an endpoint during a callback, waiting for the world, in order.
pub enum Outgoing {
    /// A TCP endpoint acted (connect, listen, write, close): the world drains it (its segments,
    /// the next this many of the context's `seg_buf`, then its timers and events) the one way
    /// a connection's output leaves it (`World::drain_conn`).
    Tcp(ConnId, u32),
    /// A datagram from a UDP socket to its peer.
    Udp(ConnId, Datagram),
}

/// What an application can do, and see, while it handles a callback. Everything it sends is put
/// on the network by the world when the callback returns, in the order it was sent.
pub struct Ctx<'a> {
    pub now: Time,
    pub(crate) app: u32,
    pub(crate) conns: &'a mut ConnTable,
    pub(crate) outgoing: &'a mut Vec<Outgoing>,
    pub(crate) timers: &'a mut Vec<(Time, u32, u32)>,
    pub(crate) finished: &'a mut bool,
    /// The segments the endpoints sent during the callback, in order; `outgoing` says whose.
    pub(crate) seg_buf: &'a mut Vec<OutSeg>,
    /// The run's seed: a connection's controller draws from its own stream of it (BBR).
    pub(crate) seed: u64,
}

impl Ctx<'_> {
    /// Endpoint `id` acted: the segments from `from` on in `seg_buf` are the ones it sent.
    fn acted(&mut self, id: ConnId, from: usize) {
        self.outgoing.push(Outgoing::Tcp(id, (self.seg_buf.len() - from) as u32));
    }

    /// Open a TCP connection from `from` to `to`: the passive end listens at `to`, the active end
    /// sends its SYN now (or, without a handshake, both are open at once). Returns (active end,
    /// passive end); both report to this application and carry `label` on the wire and in the
    /// drop filters.
    /// Open a TCP connection from `from` (the active end, configured by `cfg`) to `to` (the
    /// passive end, configured by `peer_cfg`).
    pub fn connect(&mut self, from: NodeId, to: NodeId, cfg: &TcpConfig, peer_cfg: &TcpConfig, label: Label) -> (ConnId, ConnId) {
        let (a, b) = self.conns.next_ids();
        let now = self.now;
        let app = self.app;
        let (cfg, peer_cfg) = (self.conns.share_config(cfg), self.conns.share_config(peer_cfg));
        let sent = self.seg_buf.len();
        let mut active = TcpConn::connect(cfg, now, self.seg_buf);
        // A controller that draws (BBR's PROBE_BW start phase) gets the connection's stream of
        // the run's seed before it first draws (DESIGN.md, "Randomness").
        if active.snd.core.cfg.cc == crate::tcp::config::Cc::Bbr {
            active.snd.core.cc.seed(self.seed, &format!("conn:{}", a.idx));
        }
        let ia = self.conns.insert(Endpoint { node: from, peer: b, peer_node: to, app, label, dir: Dir::Forward, kind: EndpointKind::Tcp(active) });
        self.acted(a, sent);
        let sent = self.seg_buf.len();
        let mut passive = TcpConn::listen(peer_cfg, now, self.seg_buf);
        if passive.snd.core.cfg.cc == crate::tcp::config::Cc::Bbr {
            passive.snd.core.cc.seed(self.seed, &format!("conn:{}", b.idx));
        }
        let ib = self.conns.insert(Endpoint { node: to, peer: a, peer_node: from, app, label, dir: Dir::Reverse, kind: EndpointKind::Tcp(passive) });
        self.acted(b, sent);
        debug_assert_eq!((ia, ib), (a, b));
        (a, b)
    }

    /// Give `bytes` more to send on a TCP connection.
    pub fn write(&mut self, id: ConnId, bytes: u64) {
        let now = self.now;
        if let Some(c) = self.conns.get_mut(id).and_then(Endpoint::tcp_mut) {
            let from = self.seg_buf.len();
            c.write(now, bytes, self.seg_buf);
            self.acted(id, from);
        }
    }

    /// Nothing more will be written on a TCP connection (a FIN follows the last byte).
    pub fn close(&mut self, id: ConnId) {
        let now = self.now;
        if let Some(c) = self.conns.get_mut(id).and_then(Endpoint::tcp_mut) {
            let from = self.seg_buf.len();
            c.close(now, self.seg_buf);
            self.acted(id, from);
        }
    }

    /// Be told of delivered bytes only once at least `bytes` are untold (SO_RCVLOWAT).
    pub fn set_rcv_lowat(&mut self, id: ConnId, bytes: u64) {
        if let Some(c) = self.conns.get_mut(id).and_then(Endpoint::tcp_mut) {
            c.set_rcv_lowat(bytes);
        }
    }

    /// Open a UDP "connection": two sockets that send datagrams to each other.
    pub fn open_udp(&mut self, from: NodeId, to: NodeId, label: Label) -> (ConnId, ConnId) {
        let (a, b) = self.conns.next_ids();
        let app = self.app;
        let ia = self.conns.insert(Endpoint { node: from, peer: b, peer_node: to, app, label, dir: Dir::Forward, kind: EndpointKind::Udp(UdpSocket::default()) });
        let ib = self.conns.insert(Endpoint { node: to, peer: a, peer_node: from, app, label, dir: Dir::Reverse, kind: EndpointKind::Udp(UdpSocket::default()) });
        debug_assert_eq!((ia, ib), (a, b));
        (a, b)
    }

    /// Send a datagram of `len` payload bytes from a UDP socket to its peer.
    pub fn send_datagram(&mut self, id: ConnId, len: u32) {
        if let Some(Endpoint { kind: EndpointKind::Udp(u), .. }) = self.conns.get_mut(id) {
            u.sent_pkts += 1;
            u.sent_bytes += len as u64;
            let d = Datagram { len, seq: u.sent_pkts };
            self.outgoing.push(Outgoing::Udp(id, d));
        }
    }

    /// Free an endpoint: its state is gone, and packets still in flight to it are discarded.
    pub fn free(&mut self, id: ConnId) -> Option<Endpoint> {
        self.conns.remove(id)
    }

    pub fn endpoint(&self, id: ConnId) -> Option<&Endpoint> {
        self.conns.get(id)
    }

    pub fn endpoint_mut(&mut self, id: ConnId) -> Option<&mut Endpoint> {
        self.conns.get_mut(id)
    }

    /// Call this application's `on_timer(token)` at `at`.
    pub fn schedule(&mut self, at: Time, token: u32) {
        self.timers.push((at, self.app, token));
    }

    /// This application has nothing more to do (a run without a `duration` ends when every
    /// application has finished).
    pub fn finished(&mut self) {
        *self.finished = true;
    }
}

/// Where an application's records go at the end of the run.
pub struct Records<'a> {
    pub nodes: &'a [String],
    /// Instruments count from here (the end of the warmup, or 0).
    pub from: Time,
    pub end: Time,
    pub connections: &'a mut Vec<ConnRow>,
    pub transfers: &'a mut Vec<TransferRow>,
    pub objects: &'a mut Vec<ObjectRow>,
    pub pages: &'a mut Vec<PageRow>,
    pub udp: &'a mut Vec<UdpRow>,
}

/// An application of the world.
pub trait App {
    /// The run begins.
    fn start(&mut self, cx: &mut Ctx);
    /// A timer the application scheduled is due.
    fn on_timer(&mut self, cx: &mut Ctx, token: u32);
    /// Something happened to one of the application's endpoints.
    fn on_event(&mut self, cx: &mut Ctx, id: ConnId, ev: ConnEvent);
    /// A datagram arrived at one of its UDP sockets (already counted there).
    fn on_datagram(&mut self, _cx: &mut Ctx, _id: ConnId, _d: &Datagram) {}
    /// The warmup ends: instruments count from now on.
    fn warmup(&mut self, _cx: &mut Ctx) {}
    /// The run ends: write the records.
    fn finish(&mut self, cx: &mut Ctx, rec: &mut Records);
}
