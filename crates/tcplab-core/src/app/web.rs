//! Web clients as RFC 2415 models them (TARGETS.md §2.3–2.4). HTTP/1.0 (`kind = "http10"`): a
//! page is one primary object, then `embedded` objects whose connections all open at once when
//! the primary's response is complete, one request/response exchange each (`reqresp::Exchange`);
//! the page is complete when the last object's response is delivered, and the next page follows
//! after `think`. Records every object (`objects`) and every page (`pages`, with the page delay).
//! The same client runs ns-2's `PagePool/WebTraf` pages (`objects`, `interobject`: Seddigh et
//! al.'s model 1, TARGETS.md §4.5), each object over one-way TCP with `mode = "oneway"`; both
//! clients draw each page's server among `server = [...]`.
//!
//! `page_spacing` says where `think` runs from: a page's end (closed loop, the default) or, for
//! `http10`, a page's start (open loop: ns-2's `interPageOption_` 0, the only behaviour of
//! WebTraf when Seddigh et al. used it), in which case pages may overlap (`spec::PageSpacing`).

use super::reqresp::{Draws, Exchange, Progress};
use super::resolved::ResolvedApp;
use super::spec::{Http11Transfer, PageSpacing, Rounding};
use super::{App, Ctx, Records};
use crate::engine::RngStream;
use crate::net::{ConnId, Label, NodeId};
use crate::result::{ObjectRow, PageRow};
use crate::tcp::ConnEvent;
use crate::units::{to_secs, Time};

/// Timer tokens of the web clients: the next page; `http11` uses only this one, and `http10`
/// times the next object of page k (from 1) with token k.
const NEXT_PAGE: u32 = 0;

/// What both web clients keep about their pages: the random variables, the page under way, and
/// the records.
struct Pages {
    index: u32,
    spec: ResolvedApp,
    draws: Draws,
    /// Objects per page (`embedded`, or `objects`), and the time between a page's object starts.
    rng_count: RngStream,
    rng_interobject: RngStream,
    /// Objects started so far (the latest one's number and label epoch).
    objects: u32,
    /// The page under way (1-based) and when it started; 0 before the first.
    page: u32,
    page_start: Time,
    /// The page's server (drawn per page among `server = [...]`).
    server: NodeId,
    rows: Vec<ObjectRow>,
    pages: Vec<PageRow>,
}

impl Pages {
    fn new(index: usize, spec: ResolvedApp, seed: u64) -> Pages {
        let stream = |var: &str| RngStream::new(seed, &format!("app:{}:{var}", spec.name));
        Pages {
            index: index as u32,
            draws: Draws::new(seed, &spec.name),
            rng_count: stream(if spec.objects.is_some() { "objects" } else { "embedded" }),
            rng_interobject: stream("interobject"),
            server: NodeId(spec.server as u32),
            spec,
            objects: 0,
            page: 0,
            page_start: 0,
            rows: Vec::new(),
            pages: Vec::new(),
        }
    }

    fn more_pages(&self) -> bool {
        self.spec.count.is_none_or(|n| self.page < n)
    }

    /// A new page begins now: its record, and its server.
    fn begin(&mut self, cx: &Ctx) {
        self.page += 1;
        self.page_start = cx.now;
        self.server = self.draws.server(&self.spec);
        self.pages.push(PageRow { app: self.index as usize, client: self.spec.name.clone(), page: self.page, start_s: to_secs(cx.now), ..Default::default() });
    }

    /// The page under way is complete now.
    fn complete(&mut self, cx: &Ctx) {
        self.complete_page(cx, self.page, self.page_start);
    }

    /// Page `page` (1-based), started at `start`, is complete now. Page records stay here, in
    /// page order, until the run ends.
    fn complete_page(&mut self, cx: &Ctx, page: u32, start: Time) {
        let p = &mut self.pages[page as usize - 1];
        p.complete_s = Some(to_secs(cx.now));
        p.delay_s = Some(to_secs(cx.now - start));
    }

    /// Open loop (`page_spacing = "start_to_start"`).
    fn open_loop(&self) -> bool {
        self.spec.page_spacing == PageSpacing::StartToStart
    }

    /// The next page after the think time: called when a page is over (complete, or given up:
    /// ns-2's `WebTrafSession::donePage` with `interPageOption_` 1), or, open loop, when a page
    /// starts (`WebTrafSession::handle` with `interPageOption_` 0).
    fn next_page(&mut self, cx: &mut Ctx) {
        if self.more_pages() {
            let think = self.spec.think.sample(&mut self.draws.think);
            cx.schedule(cx.now.saturating_add(think), NEXT_PAGE);
        }
    }

    /// The application's part of an object's record.
    fn row(&self) -> ObjectRow {
        self.row_of(self.page)
    }

    fn row_of(&self, page: u32) -> ObjectRow {
        ObjectRow { app: self.index as usize, client: self.spec.name.clone(), page: Some(page), ..Default::default() }
    }

    /// Hand the records over at the end of the run. A page's `started` and `bytes` are counted
    /// from its objects' rows, so a page cut short by the end of the run (or given up) still
    /// shows the objects it started and the response bytes that arrived (issue: pages cut by the
    /// end of a run read 0 objects and 0 bytes although their objects are in `objects`).
    fn records(&mut self, rec: &mut Records) {
        for r in &self.rows {
            if let Some(p) = r.page.and_then(|k| self.pages.get_mut(k as usize - 1)) {
                p.started += 1;
                p.bytes_delivered += r.bytes_delivered;
            }
        }
        for p in &mut self.pages {
            p.complete = p.complete_s.is_some();
        }
        rec.objects.append(&mut self.rows);
        rec.pages.append(&mut self.pages);
    }
}

/// An HTTP/1.0 web client; with `objects`, ns-2's `PagePool/WebTraf` page instead: `objects`
/// objects (at least one: ns-2 rounds the page size up) started `interobject` apart, none waiting
/// for another; with `mode = "oneway"` each object is ns-2's one-way exchange (`reqresp.rs`).
pub struct Http10 {
    core: Pages,
    /// The pages under way, oldest first: one at most, unless open loop.
    open: Vec<OpenPage>,
    live: Vec<Exchange>,
}

/// What an `http10` client keeps about a page under way.
struct OpenPage {
    page: u32,
    start: Time,
    server: NodeId,
    /// The page's embedded objects have been opened (its primary is complete).
    embedded_open: bool,
    /// Objects of the page started and not yet complete, and not yet started.
    waiting: u32,
    to_start: u64,
}

impl OpenPage {
    /// Nothing of the page is left to wait for.
    fn done(&self) -> bool {
        self.waiting == 0 && self.to_start == 0
    }
}

impl Http10 {
    pub fn new(index: usize, spec: ResolvedApp, seed: u64) -> Http10 {
        Http10 { core: Pages::new(index, spec, seed), open: Vec::new(), live: Vec::new() }
    }

    /// The page under way numbered `page`, if any.
    fn find(&self, page: Option<u32>) -> Option<usize> {
        self.open.iter().position(|p| Some(p.page) == page)
    }

    /// Open one object's exchange of the page under way `k` (index into `open`).
    fn fetch(&mut self, cx: &mut Ctx, k: usize) {
        let c = &mut self.core;
        let p = &mut self.open[k];
        c.objects += 1;
        p.waiting += 1;
        let (request, response) = c.draws.sizes(&c.spec);
        let label = Label { flow: c.index, epoch: c.objects };
        let row = c.row_of(p.page);
        self.live.push(Exchange::open(cx, c.spec.mode, NodeId(c.spec.client as u32), p.server, &c.spec.tcp, &c.spec.server_tcp, label, request, response, row));
    }

    /// Start the next of an ns-2 page's objects, and time the one after it (ns-2's
    /// `WebPage::handle`: object starts are spaced whether or not earlier objects are complete).
    fn start_object(&mut self, cx: &mut Ctx, k: usize) {
        self.open[k].to_start -= 1;
        self.fetch(cx, k);
        if self.open[k].to_start > 0 {
            let gap = self.core.spec.interobject.sample(&mut self.core.rng_interobject);
            cx.schedule(cx.now.saturating_add(gap), self.open[k].page);
        }
    }

    /// Page `k` of `open` is over (complete when `complete`, else given up): its record, and in
    /// the closed loop the next page.
    fn page_over(&mut self, cx: &mut Ctx, k: usize, complete: bool) {
        let p = self.open.remove(k);
        if complete {
            self.core.complete_page(cx, p.page, p.start);
        }
        if !self.core.open_loop() {
            self.core.next_page(cx);
        }
    }
}

impl App for Http10 {
    fn start(&mut self, cx: &mut Ctx) {
        cx.schedule(self.core.spec.start, NEXT_PAGE);
    }

    /// The next page (its primary object, or the first of its objects), or a page's next object.
    fn on_timer(&mut self, cx: &mut Ctx, token: u32) {
        if token != NEXT_PAGE {
            let k = self.find(Some(token)).expect("a page with objects still to start is under way");
            self.start_object(cx, k);
            return;
        }
        self.core.begin(cx);
        if self.core.open_loop() {
            // ns-2's `WebTrafSession::handle` (interPageOption_ 0): the next page's start is
            // timed from this one's, whatever becomes of this one.
            self.core.next_page(cx);
        }
        let c = &self.core;
        self.open.push(OpenPage { page: c.page, start: c.page_start, server: c.server, embedded_open: false, waiting: 0, to_start: 0 });
        let k = self.open.len() - 1;
        match &self.core.spec.objects {
            Some(n) => {
                self.open[k].embedded_open = true;
                let rng = &mut self.core.rng_count;
                let n = match self.core.spec.objects_rounding {
                    Rounding::Nearest => n.sample(rng),
                    // ns-2's `WebTrafSession::expire`: the ceiling of the page-size draw.
                    Rounding::Up => n.sample_f64(rng).ceil() as u64,
                };
                self.open[k].to_start = n.max(1);
                self.start_object(cx, k);
            }
            None => self.fetch(cx, k),
        }
    }

    fn on_event(&mut self, cx: &mut Ctx, id: ConnId, ev: ConnEvent) {
        let Some(i) = self.live.iter().position(|x| x.owns(id)) else { return };
        match self.live[i].on_event(cx, id, ev) {
            Progress::Going => {}
            Progress::Delivered => {
                let Some(k) = self.find(self.live[i].row.page) else { return };
                let page = &mut self.core.pages[self.open[k].page as usize - 1];
                page.objects += 1;
                page.bytes += self.live[i].row.response_bytes;
                self.open[k].waiting -= 1;
                if !self.open[k].embedded_open {
                    // RFC 2415: the embedded objects' connections open simultaneously once the
                    // primary object is in.
                    self.open[k].embedded_open = true;
                    let n = self.core.spec.embedded.sample(&mut self.core.rng_count);
                    for _ in 0..n {
                        self.fetch(cx, k);
                    }
                }
                if self.open[k].done() {
                    self.page_over(cx, k, true);
                }
            }
            Progress::Over => {
                let x = self.live.swap_remove(i);
                let open = if x.row.delivered_s.is_none() { self.find(x.row.page) } else { None };
                self.core.rows.push(x.end(cx));
                if let Some(k) = open {
                    // An object that never arrived (its connection gave up) ends the wait for it
                    // (a primary that never arrived leaves the page without embedded objects);
                    // the page then keeps no completion time.
                    self.open[k].waiting -= 1;
                    self.open[k].embedded_open = true;
                    if self.open[k].done() {
                        self.page_over(cx, k, false);
                    }
                }
                if self.live.is_empty() && self.open.is_empty() && !self.core.more_pages() {
                    cx.finished();
                }
            }
        }
    }

    fn finish(&mut self, cx: &mut Ctx, rec: &mut Records) {
        for mut x in self.live.drain(..) {
            x.fill(cx);
            self.core.rows.push(x.row);
        }
        // Objects in the order they were started.
        self.core.rows.sort_by_key(|r| r.object);
        self.core.records(rec);
    }
}

/// An HTTP/1.1 web client (`kind = "http11"`, RFC 2415 Tables 4–5): the primary object and the
/// embedded objects of a page are fetched in turn on one persistent connection, each request
/// written once the previous response is complete, with no FIN between objects. With
/// `keep_alive` the connection also carries the following pages, so it sits idle for the think
/// time, and the server's send half starts the next page from the restart window (RFC 5681
/// §4.1) when that was longer than an RTO; without it each page has a connection of its own.
/// With `transfer = "page"` (RFC 2415 §2: the connection's "transfer size is now made up of four
/// web files") a page is one request, the primary object's, answered by one response of all its
/// objects' bytes, recorded as one object row; every object's sizes are still drawn, in the same
/// order as with `"objects"`, so both transfers see the same pages.
pub struct Http11 {
    core: Pages,
    /// Objects of the page not yet requested.
    to_request: u64,
    conn: Option<Persistent>,
    /// Connections the client has closed after their last page, until both ends are done.
    closing: Vec<Persistent>,
    finished: bool,
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
    /// The page's objects the current response carries (1, or all of them with `"page"`).
    carried: u32,
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
    let stats = |id| cx.endpoint(id).and_then(|e| e.tcp()).map(|t| { let i = t.info(); (i.retrans, i.timeouts) }).unwrap_or_default();
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
        Http11 { core: Pages::new(index, spec, seed), to_request: 0, conn: None, closing: Vec::new(), finished: false }
    }

    /// Finish once the last page is over and every connection is freed.
    fn maybe_finish(&mut self, cx: &mut Ctx) {
        if !self.finished && !self.core.more_pages() && self.conn.is_none() && self.closing.is_empty() {
            self.finished = true;
            cx.finished();
        }
    }

    /// Write the next object's request on the connection. The connection keeps the label of its
    /// first object (a capture names a connection by its label), so `object = k` in a drop picks
    /// the connection whose first object is k.
    fn request_next(&mut self, cx: &mut Ctx) {
        let Some(p) = self.conn.as_mut() else { return };
        self.core.objects += 1;
        let (request, mut response) = self.core.draws.sizes(&self.core.spec);
        p.carried = 1;
        self.to_request -= 1;
        if self.core.spec.transfer == Http11Transfer::Page {
            // RFC 2415 §2: one transfer of the page's files; the embedded objects' requests are
            // drawn (to keep the draws aligned with "objects") but not sent.
            while self.to_request > 0 {
                response += self.core.draws.sizes(&self.core.spec).1;
                self.to_request -= 1;
                p.carried += 1;
            }
        }
        p.base = counters(cx, p);
        p.response = response;
        p.owed = true;
        let now = to_secs(cx.now);
        let row = ObjectRow { object: self.core.objects, request_bytes: request, response_bytes: response, start_s: now, request_s: Some(now), ..self.core.row() };
        self.core.rows.push(row);
        p.current = Some(self.core.rows.len() - 1);
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
        let row = &mut self.core.rows[i];
        row.delivered_s = Some(now);
        row.bytes_delivered = row.response_bytes;
        count_object(row, counters(cx, p), p.base);
        let page = self.core.pages.last_mut().expect("a page is under way");
        page.objects += p.carried;
        page.bytes += row.response_bytes;
        if self.to_request > 0 {
            self.request_next(cx);
            return;
        }
        self.core.complete(cx);
        if !self.core.more_pages() || !self.core.spec.keep_alive {
            // The client ends the persistent connection; the server closes in turn (on the
            // client's FIN; without FINs nothing would tell it, so it closes now: it has answered
            // every request).
            let p = self.conn.take().expect("open");
            cx.close(p.client);
            if !self.core.spec.tcp.fin {
                cx.close(p.server);
            }
            self.closing.push(p);
        }
        self.core.next_page(cx);
    }

    /// Server-side bookkeeping on any of its events: T_LAST_ACK of the responses now acknowledged.
    fn server_acks(cx: &Ctx, p: &mut Persistent, rows: &mut [ObjectRow], server: ConnId) {
        let una = cx.endpoint(server).and_then(|e| e.tcp()).map_or(0, |t| t.snd_una());
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
        cx.schedule(self.core.spec.start, NEXT_PAGE);
    }

    /// The next page: request on the kept-alive connection, or open the page's connection (to
    /// the page's server).
    fn on_timer(&mut self, cx: &mut Ctx, _token: u32) {
        self.core.begin(cx);
        self.to_request = 1 + self.core.spec.embedded.sample(&mut self.core.rng_count);
        if self.conn.is_some() {
            self.request_next(cx);
            return;
        }
        let c = &self.core;
        let label = Label { flow: c.index, epoch: c.objects + 1 };
        let (c, s) = cx.connect(NodeId(c.spec.client as u32), c.server, &c.spec.tcp, &c.spec.server_tcp, label);
        self.conn = Some(Persistent {
            client: c,
            server: s,
            established: false,
            requested: 0,
            answered: 0,
            response: 0,
            carried: 0,
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
                Http11::server_acks(cx, p, &mut self.core.rows, id);
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
            Http11::server_acks(cx, p, &mut self.core.rows, id);
        }
        match ev {
            ConnEvent::Established if at_client && !p.established => {
                p.established = true;
                let first = self.core.rows.len();
                self.request_next(cx);
                // The connection's handshake belongs to its first object.
                let p = self.conn.as_ref().expect("open");
                let syn = cx.endpoint(p.client).and_then(|e| e.tcp()).is_some_and(|t| t.info().syn_retrans > 0);
                let synack = cx.endpoint(p.server).and_then(|e| e.tcp()).is_some_and(|t| t.info().synack_retrans > 0);
                self.core.rows[first].handshake_retransmitted = syn || synack;
                self.core.rows[first].start_s = to_secs(self.core.page_start);
            }
            ConnEvent::Delivered(_) if !at_client && p.owed => {
                let got = cx.endpoint(id).and_then(|e| e.tcp()).map_or(0, |t| t.bytes_delivered());
                if got >= p.requested {
                    p.owed = false;
                    let i = p.current.expect("a request is under way");
                    self.core.rows[i].request_delivered = got - (p.requested - self.core.rows[i].request_bytes);
                    p.unacked.push((1 + p.answered + p.response, i));
                    cx.write(id, p.response);
                }
            }
            ConnEvent::Delivered(_) if at_client => {
                let got = cx.endpoint(id).and_then(|e| e.tcp()).map_or(0, |t| t.bytes_delivered());
                if let Some(i) = p.current {
                    let row = &mut self.core.rows[i];
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
                    let row = &mut self.core.rows[i];
                    count_object(row, counters(cx, &p), p.base);
                    row.aborted = true;
                    let got = cx.endpoint(p.client).and_then(|e| e.tcp()).map_or(0, |t| t.bytes_delivered());
                    row.bytes_delivered = got.saturating_sub(p.answered);
                    let asked = cx.endpoint(p.server).and_then(|e| e.tcp()).map_or(0, |t| t.bytes_delivered());
                    row.request_delivered = asked.saturating_sub(p.requested - row.request_bytes);
                }
                self.to_request = 0;
                cx.free(p.client);
                cx.free(p.server);
                self.core.next_page(cx);
                self.maybe_finish(cx);
            }
            _ => {}
        }
    }

    fn finish(&mut self, cx: &mut Ctx, rec: &mut Records) {
        if let Some(p) = self.conn.take() {
            if let Some(i) = p.current {
                let row = &mut self.core.rows[i];
                count_object(row, counters(cx, &p), p.base);
                let asked = cx.endpoint(p.server).and_then(|e| e.tcp()).map_or(0, |t| t.bytes_delivered());
                row.request_delivered = asked.saturating_sub(p.requested - row.request_bytes);
            }
        }
        self.core.records(rec);
    }
}
