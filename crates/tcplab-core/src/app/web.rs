//! Web clients as RFC 2415 models them (TARGETS.md §2.3–2.4). HTTP/1.0 (`kind = "http10"`): a
//! page is one primary object, then `embedded` objects whose connections all open at once when
//! the primary's response is complete, one request/response exchange each (`reqresp::Exchange`);
//! the page is complete when the last object's response is delivered, and the next page follows
//! after `think`. Records every object (`objects`) and every page (`pages`, with the page delay).

use super::reqresp::{Draws, Exchange, Progress};
use super::spec::ResolvedApp;
use super::{App, Ctx, Records};
use crate::engine::RngStream;
use crate::net::{ConnId, Label, NodeId};
use crate::result::{ObjectRow, PageRow};
use crate::tcp::ConnEvent;
use crate::units::{to_secs, Time};

pub struct Http10 {
    index: u32,
    spec: ResolvedApp,
    draws: Draws,
    rng_embedded: RngStream,
    /// Objects started so far (the latest one's number and label epoch).
    objects: u32,
    /// The page under way (1-based) and when it started; 0 before the first.
    page: u32,
    page_start: Time,
    /// The page's embedded objects have been opened (its primary is complete).
    embedded_open: bool,
    /// Objects of the page whose responses are not yet complete.
    waiting: u32,
    live: Vec<Exchange>,
    rows: Vec<ObjectRow>,
    pages: Vec<PageRow>,
}

impl Http10 {
    pub fn new(index: usize, spec: ResolvedApp, seed: u64) -> Http10 {
        Http10 {
            index: index as u32,
            draws: Draws::new(seed, &spec.name),
            rng_embedded: RngStream::new(seed, &format!("app:{}:embedded", spec.name)),
            spec,
            objects: 0,
            page: 0,
            page_start: 0,
            embedded_open: false,
            waiting: 0,
            live: Vec::new(),
            rows: Vec::new(),
            pages: Vec::new(),
        }
    }

    /// Open one object's exchange of the current page.
    fn fetch(&mut self, cx: &mut Ctx) {
        self.objects += 1;
        self.waiting += 1;
        let (request, response) = self.draws.sizes(&self.spec);
        let row = ObjectRow { app: self.index as usize, client: self.spec.name.clone(), page: Some(self.page), ..Default::default() };
        let label = Label { flow: self.index, epoch: self.objects };
        self.live.push(Exchange::open(cx, NodeId(self.spec.client as u32), NodeId(self.spec.server as u32), &self.spec.tcp, label, request, response, row));
    }

    /// Every object of the page is delivered: record the page.
    fn page_complete(&mut self, cx: &mut Ctx) {
        let p = self.pages.last_mut().expect("a page is under way");
        p.complete_s = Some(to_secs(cx.now));
        p.delay_s = Some(to_secs(cx.now - self.page_start));
        self.next_page(cx);
    }

    /// After a page (complete, or given up): the next one after the think time. The last one
    /// finishes the client when its connections are closed (`on_event`, `Progress::Over`).
    fn next_page(&mut self, cx: &mut Ctx) {
        if self.more_pages() {
            let think = self.spec.think.sample(&mut self.draws.think);
            cx.schedule(cx.now.saturating_add(think), 0);
        }
    }

    fn more_pages(&self) -> bool {
        self.spec.count.is_none_or(|n| self.page < n)
    }
}

impl App for Http10 {
    fn start(&mut self, cx: &mut Ctx) {
        cx.schedule(self.spec.start, 0);
    }

    /// The next page: its primary object.
    fn on_timer(&mut self, cx: &mut Ctx, _token: u32) {
        self.page += 1;
        self.page_start = cx.now;
        self.embedded_open = false;
        self.pages.push(PageRow { app: self.index as usize, client: self.spec.name.clone(), page: self.page, start_s: to_secs(cx.now), ..Default::default() });
        self.fetch(cx);
    }

    fn on_event(&mut self, cx: &mut Ctx, id: ConnId, ev: ConnEvent) {
        let Some(i) = self.live.iter().position(|x| x.owns(id)) else { return };
        match self.live[i].on_event(cx, id, ev) {
            Progress::Going => {}
            Progress::Delivered => {
                let page = self.live[i].row.page;
                let p = self.pages.last_mut().expect("a page is under way");
                if page != Some(p.page) {
                    return;
                }
                p.objects += 1;
                p.bytes += self.live[i].row.response_bytes;
                self.waiting -= 1;
                if !self.embedded_open {
                    // RFC 2415: the embedded objects' connections open simultaneously once the
                    // primary object is in.
                    self.embedded_open = true;
                    let k = self.spec.embedded.sample(&mut self.rng_embedded);
                    for _ in 0..k {
                        self.fetch(cx);
                    }
                }
                if self.waiting == 0 {
                    self.page_complete(cx);
                }
            }
            Progress::Over => {
                let x = self.live.swap_remove(i);
                let aborted_in_page = x.row.delivered_s.is_none() && x.row.page == Some(self.page);
                self.rows.push(x.end(cx));
                if aborted_in_page {
                    // An object that never arrived (its connection gave up) ends the wait for it
                    // (a primary that never arrived leaves the page without embedded objects);
                    // the page then keeps no completion time.
                    self.waiting -= 1;
                    self.embedded_open = true;
                    if self.waiting == 0 {
                        self.next_page(cx);
                    }
                }
                if self.live.is_empty() && self.waiting == 0 && !self.more_pages() {
                    cx.finished();
                }
            }
        }
    }

    fn finish(&mut self, cx: &mut Ctx, rec: &mut Records) {
        for mut x in self.live.drain(..) {
            x.fill(cx);
            self.rows.push(x.row);
        }
        // Objects in the order they were started.
        self.rows.sort_by_key(|r| r.object);
        rec.objects.append(&mut self.rows);
        rec.pages.append(&mut self.pages);
    }
}

/// An HTTP/1.1 web client (`kind = "http11"`, RFC 2415 Tables 4–5): the primary object and the
/// embedded objects of a page are fetched in turn on one persistent connection, each request
/// written once the previous response is complete, with no FIN between objects. With
/// `keep_alive` the connection also carries the following pages, so it sits idle for the think
/// time, and the server's send half starts the next page from the restart window (RFC 5681
/// §4.1) when that was longer than an RTO; without it each page has a connection of its own.
pub struct Http11 {
    index: u32,
    spec: ResolvedApp,
    draws: Draws,
    rng_embedded: RngStream,
    objects: u32,
    page: u32,
    page_start: Time,
    /// Objects of the page not yet requested.
    to_request: u64,
    conn: Option<Persistent>,
    /// Connections the client has closed after their last page, until both ends are done.
    closing: Vec<Persistent>,
    finished: bool,
    rows: Vec<ObjectRow>,
    pages: Vec<PageRow>,
}

/// A persistent connection and the object under way on it.
struct Persistent {
    client: ConnId,
    server: ConnId,
    established: bool,
    /// Request bytes written and response bytes completed so far on the connection.
    requested: u64,
    answered: u64,
    /// The current object's response size, and whether the server still owes it.
    response: u64,
    owed: bool,
    /// The current object's row (index into `rows`).
    current: Option<usize>,
    /// Responses awaiting their acknowledgment at the server: (sequence one past the response's
    /// last byte, row). Data starts at sequence 1.
    unacked: Vec<(u64, usize)>,
    /// Counters of both ends when the current object began (per-object differences).
    base: Counters,
    client_done: bool,
    server_done: bool,
}

/// Retransmissions of both ends, timeouts of both ends, retransmissions of the client.
#[derive(Clone, Copy, Default)]
struct Counters {
    retransmits: u64,
    timeouts: u64,
    client_retransmits: u64,
}

fn counters(cx: &Ctx, p: &Persistent) -> Counters {
    let stats = |id| cx.endpoint(id).and_then(|e| e.tcp()).map(|t| (t.snd.core.stats.retransmits, t.snd.core.stats.timeouts)).unwrap_or_default();
    let (c, s) = (stats(p.client), stats(p.server));
    Counters { retransmits: c.0 + s.0, timeouts: c.1 + s.1, client_retransmits: c.0 }
}

/// The current object's counters: what its connection counted since it began.
fn count_object(row: &mut ObjectRow, now: Counters, base: Counters) {
    row.retransmits = now.retransmits - base.retransmits;
    row.timeouts = now.timeouts - base.timeouts;
    row.request_retransmitted = now.client_retransmits > base.client_retransmits;
}

impl Http11 {
    pub fn new(index: usize, spec: ResolvedApp, seed: u64) -> Http11 {
        Http11 {
            index: index as u32,
            draws: Draws::new(seed, &spec.name),
            rng_embedded: RngStream::new(seed, &format!("app:{}:embedded", spec.name)),
            spec,
            objects: 0,
            page: 0,
            page_start: 0,
            to_request: 0,
            conn: None,
            closing: Vec::new(),
            finished: false,
            rows: Vec::new(),
            pages: Vec::new(),
        }
    }

    fn more_pages(&self) -> bool {
        self.spec.count.is_none_or(|n| self.page < n)
    }

    fn next_page(&mut self, cx: &mut Ctx) {
        if self.more_pages() {
            let think = self.spec.think.sample(&mut self.draws.think);
            cx.schedule(cx.now.saturating_add(think), 0);
        }
    }

    /// Finish once the last page is over and every connection is freed.
    fn maybe_finish(&mut self, cx: &mut Ctx) {
        if !self.finished && !self.more_pages() && self.conn.is_none() && self.closing.is_empty() {
            self.finished = true;
            cx.finished();
        }
    }

    /// Write the next object's request on the connection. The connection keeps the label of its
    /// first object (a capture names a connection by its label), so `object = k` in a drop picks
    /// the connection whose first object is k.
    fn request_next(&mut self, cx: &mut Ctx) {
        let Some(p) = self.conn.as_mut() else { return };
        self.objects += 1;
        self.to_request -= 1;
        let (request, response) = self.draws.sizes(&self.spec);
        p.base = counters(cx, p);
        p.response = response;
        p.owed = true;
        let now = to_secs(cx.now);
        self.rows.push(ObjectRow {
            app: self.index as usize,
            client: self.spec.name.clone(),
            object: self.objects,
            page: Some(self.page),
            request_bytes: request,
            response_bytes: response,
            start_s: now,
            request_s: Some(now),
            ..Default::default()
        });
        p.current = Some(self.rows.len() - 1);
        // The server is woken once the whole request is in.
        cx.set_rcv_lowat(p.server, request);
        p.requested += request;
        cx.write(p.client, request);
    }

    /// The current object's response is complete at the client: the next request, or the page
    /// is complete.
    fn object_done(&mut self, cx: &mut Ctx) {
        let now = to_secs(cx.now);
        let Some(p) = self.conn.as_mut() else { return };
        let Some(i) = p.current.take() else { return };
        p.answered += p.response;
        let row = &mut self.rows[i];
        row.delivered_s = Some(now);
        row.bytes_delivered = row.response_bytes;
        count_object(row, counters(cx, p), p.base);
        let page = self.pages.last_mut().expect("a page is under way");
        page.objects += 1;
        page.bytes += row.response_bytes;
        if self.to_request > 0 {
            self.request_next(cx);
            return;
        }
        page.complete_s = Some(now);
        page.delay_s = Some(to_secs(cx.now - self.page_start));
        if !self.more_pages() || !self.spec.keep_alive {
            // The client ends the persistent connection; the server closes in turn.
            let p = self.conn.take().expect("open");
            cx.close(p.client);
            self.closing.push(p);
        }
        self.next_page(cx);
    }

    /// Server-side bookkeeping on any of its events: T_LAST_ACK of the responses now acknowledged.
    fn server_acks(cx: &Ctx, p: &mut Persistent, rows: &mut [ObjectRow], server: ConnId) {
        let una = cx.endpoint(server).and_then(|e| e.tcp()).map_or(0, |t| t.snd.core.snd_una);
        let now = to_secs(cx.now);
        while let Some(&(end, i)) = p.unacked.first() {
            if una < end {
                break;
            }
            rows[i].acked_s = Some(now);
            rows[i].transfer_time_s = rows[i].request_s.map(|r| now - r);
            p.unacked.remove(0);
        }
    }
}

impl App for Http11 {
    fn start(&mut self, cx: &mut Ctx) {
        cx.schedule(self.spec.start, 0);
    }

    /// The next page: request on the kept-alive connection, or open the page's connection.
    fn on_timer(&mut self, cx: &mut Ctx, _token: u32) {
        self.page += 1;
        self.page_start = cx.now;
        self.to_request = 1 + self.spec.embedded.sample(&mut self.rng_embedded);
        self.pages.push(PageRow { app: self.index as usize, client: self.spec.name.clone(), page: self.page, start_s: to_secs(cx.now), ..Default::default() });
        if self.conn.is_some() {
            self.request_next(cx);
            return;
        }
        let label = Label { flow: self.index, epoch: self.objects + 1 };
        let (c, s) = cx.connect(NodeId(self.spec.client as u32), NodeId(self.spec.server as u32), &self.spec.tcp, label);
        self.conn = Some(Persistent {
            client: c,
            server: s,
            established: false,
            requested: 0,
            answered: 0,
            response: 0,
            owed: false,
            current: None,
            unacked: Vec::new(),
            base: Counters::default(),
            client_done: false,
            server_done: false,
        });
    }

    fn on_event(&mut self, cx: &mut Ctx, id: ConnId, ev: ConnEvent) {
        // A connection the client has closed: acknowledgments and the close only.
        if let Some(k) = self.closing.iter().position(|p| p.client == id || p.server == id) {
            let p = &mut self.closing[k];
            if id == p.server {
                Http11::server_acks(cx, p, &mut self.rows, id);
            }
            match ev {
                ConnEvent::PeerClosed if id == p.server => cx.close(id),
                ConnEvent::Closed if id == p.client => p.client_done = true,
                ConnEvent::Closed => p.server_done = true,
                _ => {}
            }
            if (p.client_done && p.server_done) || ev == ConnEvent::Failed {
                let p = self.closing.swap_remove(k);
                cx.free(p.client);
                cx.free(p.server);
                self.maybe_finish(cx);
            }
            return;
        }
        let Some(p) = self.conn.as_mut() else { return };
        let at_client = id == p.client;
        if !at_client {
            Http11::server_acks(cx, p, &mut self.rows, id);
        }
        match ev {
            ConnEvent::Established if at_client && !p.established => {
                p.established = true;
                let first = self.rows.len();
                self.request_next(cx);
                // The connection's handshake belongs to its first object.
                let p = self.conn.as_ref().expect("open");
                let syn = cx.endpoint(p.client).and_then(|e| e.tcp()).is_some_and(|t| t.snd.core.stats.syn_retransmits > 0);
                let synack = cx.endpoint(p.server).and_then(|e| e.tcp()).is_some_and(|t| t.rcv.stats.synack_retransmits > 0);
                self.rows[first].handshake_retransmitted = syn || synack;
                self.rows[first].start_s = to_secs(self.page_start);
            }
            ConnEvent::Delivered(_) if !at_client && p.owed => {
                let got = cx.endpoint(id).and_then(|e| e.tcp()).map_or(0, |t| t.rcv.stats.bytes_delivered);
                if got >= p.requested {
                    p.owed = false;
                    let i = p.current.expect("a request is under way");
                    p.unacked.push((1 + p.answered + p.response, i));
                    cx.write(id, p.response);
                }
            }
            ConnEvent::Delivered(_) if at_client => {
                let got = cx.endpoint(id).and_then(|e| e.tcp()).map_or(0, |t| t.rcv.stats.bytes_delivered);
                if let Some(i) = p.current {
                    let row = &mut self.rows[i];
                    if got > p.answered && row.first_byte_s.is_none() {
                        row.first_byte_s = Some(to_secs(cx.now));
                    }
                    if got >= p.answered + p.response {
                        self.object_done(cx);
                    }
                }
            }
            // The connection gave up (RFC 1122 §4.2.3.5) with an object under way: the page gets
            // no completion time, and the next page follows on a new connection.
            ConnEvent::Failed => {
                let p = self.conn.take().expect("open");
                if let Some(i) = p.current {
                    let row = &mut self.rows[i];
                    count_object(row, counters(cx, &p), p.base);
                    row.aborted = true;
                    let got = cx.endpoint(p.client).and_then(|e| e.tcp()).map_or(0, |t| t.rcv.stats.bytes_delivered);
                    row.bytes_delivered = got.saturating_sub(p.answered);
                }
                self.to_request = 0;
                cx.free(p.client);
                cx.free(p.server);
                self.next_page(cx);
                self.maybe_finish(cx);
            }
            _ => {}
        }
    }

    fn finish(&mut self, cx: &mut Ctx, rec: &mut Records) {
        if let Some(p) = self.conn.take() {
            if let Some(i) = p.current {
                count_object(&mut self.rows[i], counters(cx, &p), p.base);
            }
        }
        rec.objects.append(&mut self.rows);
        rec.pages.append(&mut self.pages);
    }
}
