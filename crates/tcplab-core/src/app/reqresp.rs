//! Request/response exchanges (`kind = "reqresp"`): a client opens a connection to a server, sends
//! a request (an HTTP GET), the server answers with the response on the same connection once the
//! whole request is delivered, then both close; `count` times, `think` apart. This is the object
//! fetch of RFC 2415's web clients and of Seddigh et al.'s HTTP model 2 (TARGETS.md §2.3, §4.5),
//! recorded per object with Seddigh's transfer time T_i = T_LAST_ACK − T_GET. FTP clients
//! (`kind = "ftp"`) are the same application with a command and a file (`spec.rs`). `Exchange` is
//! one such fetch on a connection of its own; the HTTP/1.0 client (`web.rs`) runs several at once.
//!
//! With `mode = "oneway"` an exchange is ns-2's one-way web object (`PagePool/WebTraf`, Seddigh et
//! al.'s HTTP models 1 and 2, TARGETS.md §4.5): no handshake, no FIN; the request on a connection
//! client → server of its own; when the request's ACK reaches the client the server starts the
//! response on a new connection server → client (ns-2 launches it from the request agent's
//! `done`, with no message to the server: a model, not a protocol).

use super::resolved::ResolvedApp;
use super::spec::Mode;
use super::{App, Ctx, Records};
use crate::engine::RngStream;
use crate::net::{ConnId, Label, NodeId};
use crate::result::ObjectRow;
use crate::tcp::{ConnEvent, TcpConfig, TcpConn};
use crate::units::to_secs;

/// One object fetched on a connection of its own (one-way: two connections, one per message): its
/// ends, what has happened to it, and its record.
pub struct Exchange {
    /// The request's connection: the client's end and the server's.
    client: ConnId,
    server: ConnId,
    request: u64,
    response: u64,
    /// One-way: how to open the response's connection, and its ends once open.
    oneway: Option<OneWay>,
    /// Ends whose send half is finished (Closed).
    closed: u8,
    /// The client closes on the whole response when FINs are off (nothing else tells it).
    fin: bool,
    /// The client has written the request.
    asked: bool,
    /// The server has written the response (and closed).
    answered: bool,
    /// The client has closed its side.
    client_closed: bool,
    pub row: ObjectRow,
}

/// The response's connection of a one-way exchange.
struct OneWay {
    client: NodeId,
    server: NodeId,
    tcp: TcpConfig,
    server_tcp: TcpConfig,
    label: Label,
    /// (the server's end, which sends the response; the client's end, which receives it).
    reply: Option<(ConnId, ConnId)>,
}

/// What an event meant for an exchange.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Progress {
    /// Still going.
    Going,
    /// The whole response has just been delivered to the client (the connection still closes).
    Delivered,
    /// Both ends closed, or one gave up: record it and free it (`Exchange::end`).
    Over,
}

impl Exchange {
    /// Open the connection for object `label.epoch` of application `label.flow`; the request
    /// follows once it is established. `row` carries the application's part of the record.
    #[allow(clippy::too_many_arguments)]
    pub fn open(cx: &mut Ctx, mode: Mode, client: NodeId, server: NodeId, tcp: &TcpConfig, server_tcp: &TcpConfig, label: Label, request: u64, response: u64, mut row: ObjectRow) -> Exchange {
        let (c, s) = cx.connect(client, server, tcp, server_tcp, label);
        // Each end is woken once for its whole message (SO_RCVLOWAT), not per segment.
        cx.set_rcv_lowat(s, request);
        cx.set_rcv_lowat(c, response);
        row.object = label.epoch;
        row.request_bytes = request;
        row.response_bytes = response;
        row.start_s = to_secs(cx.now);
        let oneway = (mode == Mode::Oneway).then(|| OneWay { client, server, tcp: tcp.clone(), server_tcp: server_tcp.clone(), label, reply: None });
        Exchange { client: c, server: s, request, response, oneway, closed: 0, fin: tcp.fin, asked: false, answered: false, client_closed: false, row }
    }

    /// Is `id` one of this exchange's ends?
    pub fn owns(&self, id: ConnId) -> bool {
        id == self.client || id == self.server || self.reply().is_some_and(|(s, c)| id == s || id == c)
    }

    /// A one-way exchange's response connection, once open.
    fn reply(&self) -> Option<(ConnId, ConnId)> {
        self.oneway.as_ref().and_then(|o| o.reply)
    }

    /// Count an end's Closed: the exchange is over when every end is.
    fn end_closed(&mut self) -> Progress {
        self.closed += 1;
        let ends = if self.oneway.is_some() { 4 } else { 2 };
        if self.closed >= ends {
            Progress::Over
        } else {
            Progress::Going
        }
    }

    pub fn on_event(&mut self, cx: &mut Ctx, id: ConnId, ev: ConnEvent) -> Progress {
        if self.oneway.is_some() {
            return self.on_event_oneway(cx, id, ev);
        }
        let at_client = id == self.client;
        let now = cx.now;
        match ev {
            // As a client's connect() returns: the handshake's last ACK has gone on its own, and
            // the GET follows in a segment of its own (so a lost GET does not also leave the
            // server's SYN-ACK unacknowledged, as with the clients Seddigh et al. measured).
            ConnEvent::Established if at_client && !self.asked => {
                self.asked = true;
                self.row.request_s = Some(to_secs(now));
                cx.write(id, self.request);
            }
            ConnEvent::Delivered(_) if !at_client && !self.answered => {
                if delivered(cx, id) >= self.request {
                    self.answered = true;
                    cx.write(id, self.response);
                    cx.close(id);
                }
            }
            ConnEvent::Delivered(_) if at_client => {
                if delivered(cx, id) >= self.response && self.row.delivered_s.is_none() {
                    self.row.delivered_s = Some(to_secs(now));
                    // Without FINs the whole response is the only sign that the server is done.
                    if !self.fin && !self.client_closed {
                        self.client_closed = true;
                        cx.close(id);
                    }
                    return Progress::Delivered;
                }
            }
            ConnEvent::AllAcked if !at_client && self.answered => {
                self.row.acked_s.get_or_insert(to_secs(now));
            }
            // The server closed after its response: the client closes in turn (HTTP/1.0 reads to
            // the end of the connection).
            ConnEvent::PeerClosed if at_client && !self.client_closed => {
                self.client_closed = true;
                cx.close(id);
            }
            ConnEvent::Closed => return self.end_closed(),
            // One end gave up (RFC 1122 §4.2.3.5): the other cannot finish the exchange either.
            ConnEvent::Failed => return Progress::Over,
            _ => {}
        }
        Progress::Going
    }

    /// ns-2's one-way object: the request alone on the first connection, the response on a
    /// second one opened when the request is acknowledged at the client.
    fn on_event_oneway(&mut self, cx: &mut Ctx, id: ConnId, ev: ConnEvent) -> Progress {
        let now = cx.now;
        let reply = self.reply();
        match ev {
            // Open at once (no handshake): the GET goes now, and nothing follows it.
            ConnEvent::Established if id == self.client && !self.asked => {
                self.asked = true;
                self.row.request_s = Some(to_secs(now));
                cx.write(id, self.request);
                cx.close(id);
            }
            // The request's ACK reached the client (ns-2's `done` of the request's agent): the
            // server starts the response on a new connection, and the request's sink is closed.
            ConnEvent::AllAcked if id == self.client && reply.is_none() => {
                let o = self.oneway.as_mut().expect("one-way");
                let (s, c) = cx.connect(o.server, o.client, &o.server_tcp, &o.tcp, o.label);
                o.reply = Some((s, c));
                self.answered = true;
                cx.set_rcv_lowat(c, self.response);
                cx.write(s, self.response);
                cx.close(s);
                cx.close(self.server);
            }
            ConnEvent::Delivered(_) if reply.is_some_and(|(_, c)| c == id) => {
                if delivered(cx, id) >= self.response && self.row.delivered_s.is_none() {
                    self.row.delivered_s = Some(to_secs(now));
                    // The sink has nothing to send: its end is done at once.
                    cx.close(id);
                    return Progress::Delivered;
                }
            }
            // T_LAST_ACK: the response's last byte is acknowledged at the server.
            ConnEvent::AllAcked if reply.is_some_and(|(s, _)| s == id) => {
                self.row.acked_s.get_or_insert(to_secs(now));
            }
            ConnEvent::Closed => return self.end_closed(),
            ConnEvent::Failed => return Progress::Over,
            _ => {}
        }
        Progress::Going
    }

    /// Fill the record from the ends (as far as they got).
    pub fn fill(&mut self, cx: &Ctx) {
        let tcp = |id| cx.endpoint(id).and_then(|e| e.tcp());
        let (Some(c), Some(s)) = (tcp(self.client), tcp(self.server)) else { return };
        match self.reply() {
            // One-way: the response travels on its own connection (server's end, client's end).
            Some((rs, rc)) => {
                let (Some(rs), Some(rc)) = (tcp(rs), tcp(rc)) else { return };
                fill_row(&mut self.row, [c, s, rs, rc]);
            }
            // Both messages on one connection (or a one-way response not yet begun: the request's
            // sink sends no data and its client receives none).
            None => fill_row(&mut self.row, [c, s, s, c]),
        }
    }

    /// The exchange is over: its record, complete; every end is freed.
    pub fn end(mut self, cx: &mut Ctx) -> ObjectRow {
        self.fill(cx);
        cx.free(self.client);
        cx.free(self.server);
        if let Some((s, c)) = self.reply() {
            cx.free(s);
            cx.free(c);
        }
        self.row
    }
}

fn delivered(cx: &Ctx, id: ConnId) -> u64 {
    cx.endpoint(id).and_then(|e| e.tcp()).map_or(0, |t| t.bytes_delivered())
}

/// What the ends of an object's connections tell about it: `[c, s, rs, rc]` are the request's
/// client and server ends and the response's server and client ends (the same two ends, twice,
/// when both messages share one connection). Data retransmissions and timeouts are those of the
/// request's sender and the response's sender.
fn fill_row(row: &mut ObjectRow, [c, s, rs, rc]: [&TcpConn; 4]) {
    let [c, s, rs, rc] = [c, s, rs, rc].map(TcpConn::info);
    row.first_byte_s = rc.first_byte_at.map(to_secs);
    row.bytes_delivered = rc.bytes_received;
    row.request_delivered = s.bytes_received;
    row.retransmits = c.retrans + rs.retrans;
    row.timeouts = c.timeouts + rs.timeouts;
    row.handshake_retransmitted = c.syn_retrans > 0 || s.synack_retrans > 0;
    row.request_retransmitted = c.retrans > 0;
    row.aborted = [c, s, rs, rc].iter().any(|e| e.failed);
    row.transfer_time_s = match (row.acked_s, row.request_s) {
        (Some(a), Some(r)) => Some(a - r),
        _ => None,
    };
}

/// The random variables of an application, one stream each (rv.rs): changing the response sizes
/// leaves the think times as they were.
pub struct Draws {
    request: RngStream,
    response: RngStream,
    pub think: RngStream,
    server: RngStream,
}

impl Draws {
    pub fn new(seed: u64, app: &str) -> Draws {
        let stream = |var: &str| RngStream::new(seed, &format!("app:{app}:{var}"));
        Draws { request: stream("request"), response: stream("response"), think: stream("think"), server: stream("server") }
    }

    /// The server of the next page (exchange): one of `spec.servers`, uniformly (ns-2's
    /// `pickdst`, `floor(uniform(0, n))`); no draw with a single server.
    pub fn server(&mut self, spec: &ResolvedApp) -> NodeId {
        let n = spec.servers.len();
        let k = if n > 1 { ((self.server.uniform() * n as f64) as usize).min(n - 1) } else { 0 };
        NodeId(spec.servers[k] as u32)
    }

    /// The sizes of the next exchange. Both messages have at least one byte: the server answers
    /// a delivered request, and the client knows the exchange is over by the response.
    pub fn sizes(&mut self, spec: &ResolvedApp) -> (u64, u64) {
        (spec.request.sample(&mut self.request).max(1), spec.response.sample(&mut self.response).max(1))
    }
}

pub struct ReqResp {
    index: u32,
    spec: ResolvedApp,
    draws: Draws,
    /// Exchanges started so far (the live one's object number and label epoch).
    started: u32,
    live: Option<Exchange>,
    rows: Vec<ObjectRow>,
}

impl ReqResp {
    pub fn new(index: usize, spec: ResolvedApp, seed: u64) -> ReqResp {
        ReqResp { index: index as u32, draws: Draws::new(seed, &spec.name), spec, started: 0, live: None, rows: Vec::new() }
    }
}

impl App for ReqResp {
    fn start(&mut self, cx: &mut Ctx) {
        cx.schedule(self.spec.start, 0);
    }

    /// Start the next exchange.
    fn on_timer(&mut self, cx: &mut Ctx, _token: u32) {
        self.started += 1;
        let (request, response) = self.draws.sizes(&self.spec);
        let row = ObjectRow { app: self.index as usize, client: self.spec.name.clone(), ..Default::default() };
        let label = Label { flow: self.index, epoch: self.started };
        let server = self.draws.server(&self.spec);
        self.live = Some(Exchange::open(cx, self.spec.mode, NodeId(self.spec.client as u32), server, &self.spec.tcp, &self.spec.server_tcp, label, request, response, row));
    }

    fn on_event(&mut self, cx: &mut Ctx, id: ConnId, ev: ConnEvent) {
        let Some(x) = self.live.as_mut() else { return };
        if x.on_event(cx, id, ev) != Progress::Over {
            return;
        }
        let x = self.live.take().expect("live");
        self.rows.push(x.end(cx));
        if self.spec.count.is_none_or(|n| self.started < n) {
            let think = self.spec.think.sample(&mut self.draws.think);
            cx.schedule(cx.now.saturating_add(think), 0);
        } else {
            cx.finished();
        }
    }

    fn finish(&mut self, cx: &mut Ctx, rec: &mut Records) {
        // An exchange cut short by the end of the run keeps what it got.
        if let Some(mut x) = self.live.take() {
            x.fill(cx);
            self.rows.push(x.row);
        }
        rec.objects.append(&mut self.rows);
    }
}
