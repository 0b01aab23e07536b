//! The world: the network built from a scenario (handed to the fabric, `net::fabric`, which moves
//! packets over it), the event queue, and the loop that dispatches events between the fabric,
//! the connection endpoints (`conns`) and the applications (`app`) that open, drive and free
//! them; instruments observe through one list (`observe`). Everything refers to everything else
//! by index; nothing in the per-packet path allocates.

use crate::app::bulk::Bulk;
use crate::app::reqresp::ReqResp;
use crate::app::spec::AppKind;
use crate::app::traffic::Source;
use crate::app::web::{Http10, Http11};
use crate::app::{App, Ctx, Outgoing, Records};
use crate::conns::{ConnTable, EndpointKind};
use crate::engine::{Budget, EventQueue, Limit, LimitHit, RngStream, RunError};
use crate::net::fabric::PACKET_BYTES;
use crate::net::link::{LinkDir, LinkDirStats};
use crate::net::routing::Routes;
use crate::net::{ConnId, DelayFilter, DropFilter, Fabric, NetEv, NodeId, Packet, PacketTag, Payload};
use crate::observe::Observers;
use crate::result::{LinkRow, Meta, RunResult};
use crate::scenario::{DropKind, LossPattern, Network, ResolvedFlow, Scenario, ScenarioError};
use crate::tcp::{ConnEvent, OutSeg, TimerKind};
use crate::series::Series;
use crate::trace::Capture;
use crate::units::{to_secs, Time};
use std::collections::VecDeque;
use std::sync::Arc;

#[derive(Clone, Copy, Debug)]
enum Ev {
    /// An application's timer: (application, token).
    App(u32, u32),
    /// A link direction finished serialising a packet.
    TxDone(u32),
    /// The first packet in flight on a link direction reached its far end.
    Arrive(u32),
    /// A connection's timer: (slot, generation, which).
    Conn(u32, u32, TimerKind),
    /// The warmup is over: instruments count from now on.
    Warmup,
    /// A packet a delay filter held back is offered to its link: (link direction, packet).
    Release(u32, u32),
    /// An fq direction's own events (its transmission ends, its watchdog).
    Fq(NetEv),
}

impl From<NetEv> for Ev {
    #[inline]
    fn from(e: NetEv) -> Ev {
        match e {
            NetEv::TxDone(l) => Ev::TxDone(l),
            NetEv::Arrive(l) => Ev::Arrive(l),
            NetEv::Release(l, p) => Ev::Release(l, p),
            e @ (NetEv::FqTxDone(_) | NetEv::FqWatchdog(_)) => Ev::Fq(e),
        }
    }
}

/// The names of the nodes, shared with the scenario's kept expansion (read as a slice).
struct NodeNames(Arc<Network>);

impl std::ops::Deref for NodeNames {
    type Target = [String];
    fn deref(&self) -> &[String] {
        &self.0.nodes
    }
}

pub struct World {
    q: EventQueue<Ev>,
    node_names: NodeNames,
    /// The links, the packets on them and their routes; and the instruments (time series,
    /// captures), which only record, never change the run (`fabric.observer()`).
    fabric: Fabric<Observers>,
    conns: ConnTable,
    apps: Vec<Box<dyn App>>,
    /// The flows of the scenario (their TCP configurations are reported with the results),
    /// shared with their applications and with the scenario's kept expansion.
    flows: Arc<Vec<ResolvedFlow>>,
    /// Per application label (flows first, empty for them): the node its client runs on, for the
    /// `client_node` of its `objects` and `pages` rows.
    app_clients: Vec<String>,
    /// The segments a connection sent during one call (a segment, a timer), or the endpoints
    /// during an application's callback (in the order sent; `outgoing` says whose).
    out: Vec<OutSeg>,
    /// What applications did to endpoints during a callback, in order.
    outgoing: Vec<Outgoing>,
    app_timers: Vec<(Time, u32, u32)>,
    /// Connection events not yet told to their applications, oldest first.
    events: VecDeque<(u32, ConnId, ConnEvent)>,
    limit: Option<Time>,
    /// End of the warmup, and the link counters then.
    warmup: Option<Time>,
    link_base: Vec<LinkDirStats>,
    /// Applications not yet finished.
    active: usize,
    stopped_at: Option<Time>,
    seed: u64,
    scenario: Scenario,
    /// Packets delivered to an endpoint that is gone, or of the wrong protocol for it.
    pkts_stale: u64,
    /// Print every packet delivery and drop to stderr (debugging aid).
    pub trace: bool,
    /// Every (source, destination) pair of nodes that will open connections, with whether any
    /// sends datagrams, for the fabric to compute what it can (`Fabric::arm`) when the run
    /// starts; None once armed, or when an application was added whose pairs are not known.
    pairs: Option<(Vec<(NodeId, NodeId)>, bool)>,
    /// The events left ran out before the time limit (not a budget's stop).
    drained: bool,
}

impl World {
    pub fn build(scenario: &Scenario, seed: u64) -> Result<World, ScenarioError> {
        // The expansion kept from validation (expanded again only if the scenario has changed).
        let e = scenario.expanded(seed)?;
        let (net, flows, app_specs) = (&*e.net, &e.flows, &e.apps);
        let mut links = Vec::with_capacity(net.links.len() * 2);
        // A direction is named "{link}:{from}->{to}"; its random streams "link:{name}" (losses)
        // and "red:{name}" (RED, drawn only by a RED queue) are named in one scratch buffer.
        let mut stream_name = String::new();
        let mut stream = |prefix: &str, dir: &str| {
            stream_name.clear();
            stream_name.push_str(prefix);
            stream_name.push_str(dir);
            RngStream::new(seed, &stream_name)
        };
        for (i, l) in net.links.iter().enumerate() {
            let unnamed;
            let name = if l.name.is_empty() {
                unnamed = format!("link{i}");
                &unnamed
            } else {
                &l.name
            };
            let (a, b) = (NodeId(net.ends[i].0), NodeId(net.ends[i].1));
            let dir_name = |x: &str, y: &str| [name.as_str(), ":", x, "->", y].concat();
            let (fwd, rev) = (dir_name(&l.a, &l.b), dir_name(&l.b, &l.a));
            let rq = l.reverse_queue.unwrap_or(l.queue);
            let (fwd_loss, rev_loss) = (stream("link:", &fwd), stream("link:", &rev));
            let (fwd_red, rev_red) = (l.queue.red.map(|r| (r, stream("red:", &fwd))), rq.red.map(|r| (r, stream("red:", &rev))));
            let mut f = LinkDir::new(fwd, a, b, l.rate.0, l.delay.0, l.queue.limit(), l.loss, fwd_loss);
            let mut r = LinkDir::new(rev, b, a, l.rate.0, l.delay.0, rq.limit(), l.reverse_loss, rev_loss);
            if let Some((spec, rng)) = fwd_red {
                f.set_red(Some(spec), rng);
            }
            if let Some((spec, rng)) = rev_red {
                r.set_red(Some(spec), rng);
            }
            f.mark_threshold = l.queue.mark_threshold.map(|m| m.threshold());
            r.mark_threshold = rq.mark_threshold.map(|m| m.threshold());
            f.fq = l.queue.fq.map(|spec| Box::new(crate::net::fq::Fq::new(spec)));
            r.fq = rq.fq.map(|spec| Box::new(crate::net::fq::Fq::new(spec)));
            links.push(f);
            links.push(r);
        }
        if scenario.topology.loss_pattern == LossPattern::Periodic {
            for l in &mut links {
                l.periodic = Some(0.0);
            }
        }
        let dirs: Vec<(NodeId, NodeId)> = links.iter().map(|l| (l.from, l.to)).collect();
        let mut routes = Routes::compute(net.nodes.len(), &dirs);
        let mut apps: Vec<Box<dyn App>> = Vec::with_capacity(flows.len());
        for (fi, f) in flows.iter().enumerate() {
            let (a, b) = (NodeId(f.from as u32), NodeId(f.to as u32));
            let (fwd, rev) = match (routes.next_hop(a, b), routes.next_hop(b, a)) {
                (Some(x), Some(y)) => (x, y),
                _ => {
                    return Err(ScenarioError {
                        path: "flows".into(),
                        message: format!("flow {:?}: no path between {:?} and {:?} in both directions", f.name, net.nodes[f.from], net.nodes[f.to]),
                    })
                }
            };
            // Drop filters sit where the packet leaves its host.
            for (kind, tx, transfer, dk) in &f.drops {
                let at = match dk {
                    DropKind::Syn | DropKind::Data | DropKind::Fin => fwd,
                    DropKind::Synack | DropKind::Ack => rev,
                };
                links[at.0 as usize].filters.push(DropFilter { flow: fi as u32, kind: *kind, transmissions: tx.clone(), epoch: *transfer, dropped: 0 });
            }
            // Delay filters too: the held packet enters that first link late.
            for (kind, tx, transfer, dk, by) in &f.delays {
                let at = match dk {
                    DropKind::Syn | DropKind::Data | DropKind::Fin => fwd,
                    DropKind::Synack | DropKind::Ack => rev,
                };
                let filter = DropFilter { flow: fi as u32, kind: *kind, transmissions: tx.clone(), epoch: *transfer, dropped: 0 };
                links[at.0 as usize].delays.push(DelayFilter { filter, by: *by });
            }
            apps.push(Box::new(Bulk::new(fi, flows.clone())));
        }
        // Applications come after the flows: application i's label (its connections' flow on the
        // wire, in the drop filters and in the captures) is flows + i, so labels never collide.
        for (ai, a) in app_specs.iter().enumerate() {
            let index = flows.len() + ai;
            for &server in &a.servers {
                let (c, s) = (NodeId(a.client as u32), NodeId(server as u32));
                let (fwd, rev) = match (routes.next_hop(c, s), routes.next_hop(s, c)) {
                    (Some(x), Some(y)) => (x, y),
                    _ => {
                        return Err(ScenarioError {
                            path: format!("apps[{ai}]"),
                            message: format!("application {:?}: no path between {:?} and {:?} in both directions", a.name, net.nodes[a.client], net.nodes[server]),
                        })
                    }
                };
                // Drop filters sit where the packet leaves its host (the client's or the server's),
                // once per link: the client's first hop is shared by its servers.
                for d in &a.drops {
                    let at = if d.at_client { fwd } else { rev };
                    let f = DropFilter { flow: index as u32, kind: d.kind, transmissions: d.transmissions.clone(), epoch: d.object, dropped: 0 };
                    if !links[at.0 as usize].filters.contains(&f) {
                        links[at.0 as usize].filters.push(f);
                    }
                }
            }
            apps.push(match a.kind {
                AppKind::Reqresp | AppKind::Ftp => Box::new(ReqResp::new(index, a.clone(), seed)),
                AppKind::Http10 => Box::new(Http10::new(index, a.clone(), seed)),
                AppKind::Http11 => Box::new(Http11::new(index, a.clone(), seed)),
                AppKind::Onoff | AppKind::Cbr => Box::new(Source::new(index, a.clone(), seed)),
            });
        }
        let mut capture = Capture::build(&scenario.capture, seed, net, &links, flows.iter())?;
        if let Some(cap) = capture.as_mut() {
            for (ai, a) in app_specs.iter().enumerate() {
                cap.describe((flows.len() + ai) as u32, a.tcp.mss.0, crate::trace::capture::announced_wscale(&a.tcp));
            }
        }
        // The flows' and applications' names, for the series only (none without series).
        let names = if scenario.series.is_empty() { Vec::new() } else { flows.iter().map(|f| f.name.clone()).chain(app_specs.iter().map(|a| a.name.clone())).collect() };
        let series = Series::build(&scenario.series, names, &net.nodes, &links);
        let mut obs = Observers::default();
        if let Some(s) = series {
            obs.push(s);
        }
        if let Some(c) = capture {
            obs.push(c);
        }
        let trace = std::env::var_os("TCPLAB_TRACE").is_some();
        let mut w = World {
            q: EventQueue::new(),
            node_names: NodeNames(e.net.clone()),
            fabric: Fabric::new(links, routes, trace, obs),
            conns: ConnTable::default(),
            active: apps.len(),
            apps,
            flows: e.flows.clone(),
            app_clients: flows.iter().map(|_| String::new()).chain(app_specs.iter().map(|a| net.nodes[a.client].clone())).collect(),
            out: Vec::with_capacity(64),
            outgoing: Vec::new(),
            app_timers: Vec::new(),
            events: VecDeque::new(),
            limit: scenario.duration.map(|d| d.0),
            warmup: scenario.warmup.map(|d| d.0),
            link_base: Vec::new(),
            stopped_at: None,
            seed,
            scenario: scenario.clone(),
            pkts_stale: 0,
            trace,
            pairs: Some((
                flows
                    .iter()
                    .map(|f| (NodeId(f.from as u32), NodeId(f.to as u32)))
                    .chain(app_specs.iter().flat_map(|a| a.servers.iter().map(|&s| (NodeId(a.client as u32), NodeId(s as u32)))))
                    .collect(),
                app_specs.iter().any(|a| a.kind.is_udp()),
            )),
            drained: false,
        };
        for a in 0..w.apps.len() {
            w.with_app(a as u32, |app, cx| app.start(cx));
        }
        if let Some(t) = w.warmup {
            w.q.schedule_timer(t, Ev::Warmup);
        }
        Ok(w)
    }

    /// Add an application to a world that has not run yet (tests and programs that drive the
    /// world with applications of their own); it starts now. Returns its index, the label flow
    /// of the connections it opens.
    pub fn add_app(&mut self, app: Box<dyn App>) -> u32 {
        // Its connections' routes are not known in advance: nothing is computed (`Fabric::arm`),
        // which is decided at the first step.
        assert!(self.q.processed() == 0, "add_app: an application is added before the world runs");
        self.pairs = None;
        let a = self.apps.len() as u32;
        self.apps.push(app);
        self.active += 1;
        self.with_app(a, |app, cx| app.start(cx));
        a
    }

    /// Queue the end of every transmission, also those with nothing waiting behind them, which
    /// the engine otherwise leaves out (docs/determinism.md): a reference for tests, which must
    /// give the same results but for a larger `meta.events`.
    #[doc(hidden)]
    pub fn queue_every_transmission_end(&mut self) {
        self.fabric.queue_every_transmission_end();
    }

    pub fn now(&self) -> Time {
        self.q.now()
    }

    /// Run until every application is finished or the time limit is reached.
    pub fn run(&mut self) {
        while self.step() {}
    }

    /// `run` within a budget: the limits are checked once per slice of events (engine/budget.rs),
    /// so the per-event path is the same loop as `run`'s. A run that would need more than
    /// `max_events` events, or is still going at the deadline, stops where it is.
    pub fn run_with(&mut self, budget: &Budget) -> Result<(), LimitHit> {
        if budget.is_unlimited() && !self.fabric.bounded() {
            self.run();
            return Ok(());
        }
        let mut done = 0u64;
        loop {
            let slice = budget.slice(done);
            if slice == 0 {
                // The event allowance is spent: over if there is nothing left to do.
                if !self.step() {
                    return Ok(());
                }
                return Err(budget.hit(Limit::MaxEvents, done + 1, to_secs(self.now())));
            }
            for _ in 0..slice {
                if !self.step() {
                    return Ok(());
                }
            }
            done += slice;
            if self.fabric.overgrown() {
                let mut hit = budget.hit(Limit::Memory, done, to_secs(self.now()));
                hit.allowed = (self.fabric.max_pool() * PACKET_BYTES) as f64;
                return Err(hit);
            }
            if budget.wall_exceeded() {
                return Err(budget.hit(Limit::MaxWall, done, to_secs(self.now())));
            }
        }
    }

    /// Bound what the run may hold at once to `bytes` (what the memory limit leaves above the
    /// built world): past it, `run_with` stops the run with `Limit::Memory` instead of letting
    /// an unlimited queue fed faster than it drains take the process down.
    pub fn bound_growth(&mut self, bytes: u64) {
        self.fabric.bound_growth((bytes / PACKET_BYTES as u64).max(1024).try_into().unwrap_or(usize::MAX));
    }

    /// Process one event; false when the run is over.
    /// With a `duration` the run always lasts that long (so that runs compared in pairs are
    /// measured over the same window); without one it ends when every transfer is done.
    pub fn step(&mut self) -> bool {
        if self.active == 0 && self.limit.is_none() {
            return false;
        }
        if self.pairs.is_some() {
            self.arm();
        }
        let Some((_, ev)) = self.q.pop_until(self.limit.unwrap_or(Time::MAX)) else {
            self.drained = true;
            return false;
        };
        match ev {
            Ev::App(a, token) => self.with_app(a, |app, cx| app.on_timer(cx, token)),
            Ev::TxDone(l) => {
                self.fabric.tx_done(&mut self.q, l);
                self.udp_losses();
            }
            Ev::Arrive(l) => {
                match self.fabric.arrive(&mut self.q, l) {
                    Some(idx) => self.deliver(idx),
                    // Forwarded: dropped further on, perhaps.
                    None => self.udp_losses(),
                }
            }
            Ev::Conn(i, gen, which) => self.conn_timer(ConnId { idx: i, gen }, which),
            Ev::Warmup => self.end_warmup(),
            Ev::Release(l, idx) => {
                self.fabric.release(&mut self.q, l, idx);
                self.udp_losses();
            }
            Ev::Fq(e) => self.fq_event(e),
        }
        true
    }

    /// The run starts: the fabric computes what it can (`Fabric::arm`).
    #[cold]
    #[inline(never)]
    fn arm(&mut self) {
        if let Some((pairs, udp)) = self.pairs.take() {
            self.fabric.arm(&pairs, udp);
        }
    }

    /// How each link direction moves packets, by index (`net::vfifo::EVENTS` or `COMPUTED`, and
    /// whether it is chained): what `Fabric::arm` chose (all by events before the first step).
    #[doc(hidden)]
    pub fn link_modes(&self) -> Vec<(String, u8, bool)> {
        self.fabric.links().iter().zip(self.fabric.modes()).map(|(l, (m, c))| (l.name.clone(), m, c)).collect()
    }

    /// An fq direction's event, out of line: the step's hot arms stay as they were.
    #[inline(never)]
    fn fq_event(&mut self, e: NetEv) {
        self.fabric.on_event(&mut self.q, e);
        self.udp_losses();
    }

    /// Run an application callback, then put out what it did and tell the applications what
    /// happened to their connections (`settle`).
    fn with_app(&mut self, a: u32, f: impl FnOnce(&mut dyn App, &mut Ctx)) {
        self.call(a, f);
        self.settle();
    }

    /// Run an application callback with its context; count the application out if it finished.
    fn call(&mut self, a: u32, f: impl FnOnce(&mut dyn App, &mut Ctx)) {
        let mut finished = false;
        {
            let mut cx = Ctx {
                now: self.q.now(),
                app: a,
                conns: &mut self.conns,
                outgoing: &mut self.outgoing,
                timers: &mut self.app_timers,
                finished: &mut finished,
                seg_buf: &mut self.out,
                seed: self.seed,
            };
            f(&mut *self.apps[a as usize], &mut cx);
        }
        if finished {
            self.active -= 1;
            if self.active == 0 {
                self.stopped_at = Some(self.q.now());
            }
        }
    }

    /// Until nothing is left: put out what the applications' callbacks did (`put_out`), then tell
    /// the oldest untold connection event to its application. Each event's consequences go out
    /// before the next event is told, whichever path (an application's callback, a segment, a
    /// timer) queued it.
    fn settle(&mut self) {
        loop {
            if !self.outgoing.is_empty() || !self.app_timers.is_empty() {
                self.put_out();
            }
            let Some((a, id, ev)) = self.events.pop_front() else { return };
            self.call(a, |app, cx| app.on_event(cx, id, ev));
        }
    }

    /// What the applications did during their callbacks, in the order they did it: every TCP
    /// endpoint they acted on is drained (`drain_conn`) in turn, so segments go on the wire in
    /// the order they were sent (A, then B, then A again: A1, B1, A2), and datagrams among them;
    /// then the applications' timers are scheduled.
    fn put_out(&mut self) {
        let mut outgoing = std::mem::take(&mut self.outgoing);
        for o in outgoing.drain(..) {
            match o {
                Outgoing::Tcp(id, n) => self.drain_conn(id, n as usize),
                Outgoing::Udp(id, d) => self.send(id, Payload::Udp(d), PacketTag::Other),
            }
        }
        self.outgoing = outgoing;
        for (t, a, token) in self.app_timers.drain(..) {
            self.q.schedule_timer(t, Ev::App(a, token));
        }
    }

    /// The one way out of a TCP endpoint, whatever made it act (a segment, a timer, its
    /// application): tell the instruments its state, put the first `n` segments of `out` (the
    /// ones it sent) on the network towards its peer, schedule the timers it set, and queue its
    /// events for its application (told by `settle`).
    #[inline]
    fn drain_conn(&mut self, id: ConnId, n: usize) {
        let Some(ep) = self.conns.get(id) else {
            // Freed by its application before it was drained: what it sent goes nowhere.
            self.out.drain(..n);
            return;
        };
        let (app, conn, label, dir, src, dst) = (ep.app, ep.peer, ep.label, ep.dir, ep.node, ep.peer_node);
        // `use_headers` off (ns-2's `useHeaders_` false): data segments leave without their
        // header bytes counted (`Packet::bare`); read once per drain, not per packet.
        let headerless = ep.tcp().is_some_and(|c| !c.snd.core.cfg.use_headers);
        if let Some(c) = ep.tcp() {
            self.fabric.observer().on_conn(self.q.now(), label, dir, src.0, dst.0, c);
        }
        if n > 0 {
            let mut out = std::mem::take(&mut self.out);
            let hop = self.fabric.path_of(id, src, dst);
            if self.fabric.has_fq() && self.fabric.fq_first_hop(hop) {
                self.drain_fq(id, &mut out, n, Packet { conn, label, dir, src, dst, hop, ..Default::default() }, headerless);
            } else {
                for o in out.drain(..n) {
                    let bare = headerless && o.seg.len > 0;
                    self.send_packet(Packet { conn, label, dir, src, dst, body: Payload::Tcp(o.seg), enqueued_at: 0, tag: o.tag, hop, bare });
                }
            }
            self.out = out;
        }
        let Some(c) = self.conns.get_mut(id).and_then(|e| e.tcp_mut()) else { return };
        let q = &mut self.q;
        c.take_timers(|which, t| q.schedule_timer(t, Ev::Conn(id.idx, id.gen, which)));
        if c.has_events() {
            for e in c.take_events() {
                self.events.push_back((app, id, e));
            }
        }
    }

    /// `drain_conn` for a connection whose first hop is the fq qdisc: `fq_classify` sets its
    /// socket's `sk_pacing_status` to `SK_PACING_FQ` (no internal pacing from now on), and each
    /// segment goes with its departure time (`skb->tstamp`: a data segment's own,
    /// `max(tcp_wstamp_ns, now)` for the rest, `__tcp_transmit_skb`) and the socket's
    /// `sk_pacing_rate`. `head`: the packets' common fields.
    #[inline(never)]
    fn drain_fq(&mut self, id: ConnId, out: &mut Vec<OutSeg>, n: usize, head: Packet, headerless: bool) {
        let (wstamp, rate) = match self.conns.get_mut(id).and_then(|e| e.tcp_mut()) {
            Some(c) => {
                c.snd.core.set_pacing_fq();
                (c.snd.core.wstamp(), c.snd.core.pacing_rate())
            }
            None => (0, None),
        };
        for o in out.drain(..n) {
            let tstamp = if o.edt != 0 { o.edt } else { wstamp };
            let bare = headerless && o.seg.len > 0;
            let p = Packet { body: Payload::Tcp(o.seg), tag: o.tag, bare, ..head.clone() };
            self.fabric.send_stamped(&mut self.q, p, tstamp, rate);
            self.udp_losses();
        }
    }

    /// Snapshot every counter at the end of the warmup; the results report what came after.
    fn end_warmup(&mut self) {
        self.fabric.finish_links(self.q.now());
        self.link_base = self.fabric.link_stats((self.q.now(), self.q.current_seq()));
        for a in 0..self.apps.len() {
            self.with_app(a as u32, |app, cx| app.warmup(cx));
        }
    }

    /// Tell UDP sinks what the fabric dropped of theirs (TCP counts its own losses).
    #[inline]
    fn udp_losses(&mut self) {
        if let Some(lost) = self.fabric.take_udp_losses() {
            for (conn, len) in lost {
                if let Some(crate::conns::Endpoint { kind: EndpointKind::Udp(u), .. }) = self.conns.get_mut(conn) {
                    u.lost_pkts += 1;
                    u.lost_bytes += len as u64;
                }
            }
        }
    }

    /// A packet reached its endpoint's node: hand it to the endpoint. The packet is read where
    /// it lies in the fabric's pool (no copy): its slot is free but not reused until the next
    /// packet is sent, which nothing here does before the segment has been handled (what the
    /// connection sends goes to `out` first).
    #[inline(always)]
    fn deliver(&mut self, idx: u32) {
        let now = self.q.now();
        let p = self.fabric.packet(idx);
        let conn = p.conn;
        let Some(ep) = self.conns.get_mut(conn) else {
            // Its connection is gone (closed and freed).
            self.pkts_stale += 1;
            return;
        };
        if self.trace {
            eprintln!("{:>12.6} recv flow{} {:?} {:?} {:?}", crate::units::to_secs(now), p.label.flow, p.dir, p.tag, p.body);
        }
        match (&mut ep.kind, &p.body) {
            (EndpointKind::Tcp(c), Payload::Tcp(seg)) => {
                c.on_segment(now, seg, &mut self.out);
                self.drain_conn(conn, self.out.len());
                if !self.events.is_empty() {
                    self.settle();
                }
            }
            (EndpointKind::Udp(u), Payload::Udp(d)) => {
                u.rcvd_pkts += 1;
                u.rcvd_bytes += d.len as u64;
                let (a, d) = (ep.app, *d);
                self.with_app(a, |app, cx| app.on_datagram(cx, conn, &d));
            }
            // A datagram to a TCP endpoint or a segment to a UDP one: no such port.
            _ => self.pkts_stale += 1,
        }
    }

    fn conn_timer(&mut self, id: ConnId, which: TimerKind) {
        let now = self.q.now();
        let Some(c) = self.conns.get_mut(id).and_then(|e| e.tcp_mut()) else { return };
        if let Some(t) = c.on_timer(now, which, &mut self.out) {
            self.q.schedule_timer(t, Ev::Conn(id.idx, id.gen, which));
            return;
        }
        self.drain_conn(id, self.out.len());
        if !self.events.is_empty() {
            self.settle();
        }
    }

    /// Put a packet from endpoint `id` on the network, towards its peer.
    fn send(&mut self, id: ConnId, body: Payload, tag: PacketTag) {
        let Some(ep) = self.conns.get(id) else { return };
        let (conn, label, dir, src, dst) = (ep.peer, ep.label, ep.dir, ep.node, ep.peer_node);
        let hop = self.fabric.path_of(id, src, dst);
        self.send_packet(Packet { conn, label, dir, src, dst, body, enqueued_at: 0, tag, hop, bare: false });
    }

    /// Put a packet on the network at its source (`p.hop`: the start of its route).
    #[inline]
    fn send_packet(&mut self, p: Packet) {
        self.fabric.send(&mut self.q, p);
        self.udp_losses();
    }

    /// End the run and collect the instruments.
    pub fn finish(mut self) -> RunResult {
        let end = self.limit.or(self.stopped_at).unwrap_or(self.q.now());
        // What happened by then: every event up to the end if the run went to its end, else
        // those up to the last one processed (a budget's stop, every application done).
        let until = if self.drained { (end, u64::MAX) } else { (self.q.now(), self.q.current_seq()) };
        self.fabric.end_links(end.max(self.q.now()).min(end), until);
        // One connection row a flow; one transfer row a transfer, and most flows make one
        // (repeats grow it).
        let mut conns = Vec::with_capacity(self.flows.len());
        let mut transfers = Vec::with_capacity(self.flows.len());
        let mut objects = Vec::new();
        let mut pages = Vec::new();
        let mut udp = Vec::new();
        let from = self.warmup.unwrap_or(0);
        for a in 0..self.apps.len() {
            let mut finished = false;
            let mut cx = Ctx {
                now: end,
                app: a as u32,
                conns: &mut self.conns,
                outgoing: &mut self.outgoing,
                timers: &mut self.app_timers,
                finished: &mut finished,
                seg_buf: &mut self.out,
                seed: self.seed,
            };
            let mut rec = Records { nodes: &self.node_names, from, end, connections: &mut conns, transfers: &mut transfers, objects: &mut objects, pages: &mut pages, udp: &mut udp };
            self.apps[a].finish(&mut cx, &mut rec);
        }
        // Every endpoint has been read: freed now, so that the rows below take the memory it held
        // (10^5 flows: half a gigabyte of endpoints) rather than more.
        self.conns = ConnTable::default();
        // The applications' names and client nodes (the rows are made with the name in `client`).
        for o in &mut objects {
            o.app_name = o.client.clone();
            o.client_node = self.app_clients.get(o.app).cloned().unwrap_or_default();
        }
        for p in &mut pages {
            p.app_name = p.client.clone();
            p.client_node = self.app_clients.get(p.app).cloned().unwrap_or_default();
        }
        // The objects and pages of the warmup are left out (they started before instruments count).
        if self.warmup.is_some() {
            let from = to_secs(from);
            objects.retain(|o| o.start_s >= from);
            pages.retain(|p| p.start_s >= from);
        }
        let links = self
            .fabric
            .links()
            .iter()
            .enumerate()
            .map(|(i, l)| match self.link_base.get(i) {
                Some(b) => LinkRow::measured(l, &l.stats.since(b), &self.node_names, self.warmup.unwrap_or(0), end),
                None => LinkRow::new(l, &self.node_names, end),
            })
            .collect();
        let in_flight = self.fabric.in_flight();
        let counts = self.fabric.counts();
        let series = self.fabric.observer().take::<Series>().map(|mut s| {
            s.finish(end);
            s
        });
        RunResult {
            scenario: {
                // The scenario as run carries the seed it ran with, so running it again reproduces it.
                let mut sc = self.scenario.clone();
                sc.seed = self.seed;
                sc.to_json()
            },
            flows_tcp: {
                // The flows of one `[[flows]]` entry share their configuration (one `Arc`): it is
                // written out once and shared, not once a flow (10^5 flows, one configuration).
                let mut last: Option<(*const crate::tcp::TcpConfig, Arc<serde_json::Value>)> = None;
                self.flows
                    .iter()
                    .map(|f| match &last {
                        Some((p, v)) if *p == Arc::as_ptr(&f.tcp) => v.clone(),
                        _ => {
                            let v = Arc::new(serde_json::to_value(&*f.tcp).expect("serialisable"));
                            last = Some((Arc::as_ptr(&f.tcp), v.clone()));
                            v
                        }
                    })
                    .collect()
            },
            meta: Meta {
                seed: self.seed,
                version: crate::VERSION.into(),
                sim_time_s: to_secs(end),
                events: self.q.processed(),
                packets_created: counts.created,
                packets_delivered: counts.delivered,
                packets_dropped: counts.dropped,
                packets_stale: self.pkts_stale,
                packets_in_flight: in_flight,
                completed: self.active == 0,
            },
            connections: conns,
            links,
            transfers,
            objects,
            pages,
            udp,
            series,
        }
    }

    /// Packet conservation: created = delivered + dropped + in flight.
    pub fn packet_balance(&self) -> (u64, u64, u64, u64) {
        let c = self.fabric.counts();
        (c.created, c.delivered, c.dropped, self.fabric.in_flight())
    }

    /// Connection endpoints alive now (state that has not been freed).
    pub fn live_connections(&self) -> usize {
        self.conns.live()
    }
}

impl World {
    /// End the run: close the captures, then collect the instruments.
    pub fn finish_run(mut self) -> Result<RunResult, ScenarioError> {
        let capture = self.fabric.observer().take::<Capture>();
        let r = self.finish();
        if let Some(c) = capture {
            c.close()?;
        }
        Ok(r)
    }
}

/// Run a scenario with a seed.
pub fn run(scenario: &Scenario, seed: u64) -> Result<RunResult, ScenarioError> {
    crate::footprint::check(scenario)?; // also for a Scenario built in Rust, not read from text
    let mut w = World::build(scenario, seed)?;
    w.run();
    let capture = w.fabric.observer().take::<Capture>();
    let r = w.finish();
    if let Some(c) = capture {
        c.close()?;
    }
    Ok(r)
}

/// Run a scenario with a seed within `budget`; a run that hits a limit gives `RunError::Limit`
/// with where it had got to (its capture, if any, keeps the packets seen until then).
pub fn run_limited(scenario: &Scenario, seed: u64, budget: &Budget) -> Result<RunResult, RunError> {
    let (fp, limit) = crate::footprint::check_limit(scenario)?;
    let mut w = World::build(scenario, seed)?;
    w.bound_growth(limit.bytes.saturating_sub(fp.bytes.min(u64::MAX as u128) as u64));
    let outcome = w.run_with(budget);
    let capture = w.fabric.observer().take::<Capture>();
    let r = outcome.map(|()| w.finish());
    if let Some(c) = capture {
        c.close()?;
    }
    r.map_err(RunError::Limit)
}
