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
