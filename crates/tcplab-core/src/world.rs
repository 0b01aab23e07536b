//! The world: nodes, links, routes and flows built from a scenario, and the event loop that moves
//! packets and time. Everything refers to everything else by index; nothing in the per-packet path
//! allocates (packets live in a pool and are recycled).

use crate::engine::{EventQueue, RngStream, TimerFire};
use crate::net::link::{LinkDir, LinkDirStats};
use crate::net::routing::Routes;
use crate::net::{ConnId, Dir, DropFilter, NodeId, Packet};
use crate::result::{ConnRow, LinkRow, Meta, RunResult, TransferRow};
use crate::scenario::{DropKind, LossPattern, ResolvedFlow, Scenario, ScenarioError};
use crate::tcp::{ConnStats, OutSeg, RxTimer, SenderPhase, TcpReceiver, TcpSender};
use crate::trace::Capture;
use crate::units::{to_secs, Time};

#[derive(Clone, Copy, Debug)]
enum Ev {
    /// A flow starts its next transfer.
    Start(u32),
    /// A link direction finished serialising a packet.
    TxDone(u32),
    /// A packet reached the far end of a link direction.
    Arrive(u32, u32),
    Rto(u32, u32),
    DelAck(u32, u32),
    SynAck(u32, u32),
    /// The warmup is over: instruments count from now on.
    Warmup,
}

struct FlowRt {
    spec: ResolvedFlow,
    epoch: u32,
    sender: Option<TcpSender>,
    receiver: Option<TcpReceiver>,
    /// Counters of finished transfers (the live connection's are added at the end).
    total: ConnStats,
    transfers: Vec<TransferRow>,
    finished: bool,
    /// The flow's counters when the warmup ended.
    base: Option<ConnStats>,
}

pub struct World {
    q: EventQueue<Ev>,
    node_names: Vec<String>,
    links: Vec<LinkDir>,
    routes: Routes,
    pool: Vec<Packet>,
    free: Vec<u32>,
    flows: Vec<FlowRt>,
    out: Vec<OutSeg>,
    limit: Option<Time>,
    /// End of the warmup, and the link counters then.
    warmup: Option<Time>,
    link_base: Vec<LinkDirStats>,
    active: usize,
    stopped_at: Option<Time>,
    seed: u64,
    scenario: Scenario,
    pkts_created: u64,
    pkts_delivered: u64,
    pkts_dropped: u64,
    pkts_stale: u64,
    /// Print every packet delivery and drop to stderr (debugging aid).
    pub trace: bool,
    /// Packet capture taps (`[[capture]]`); they only record, never change the run.
    capture: Option<Box<Capture>>,
}

impl World {
    pub fn build(scenario: &Scenario, seed: u64) -> Result<World, ScenarioError> {
        let net = scenario.network()?;
        let flows = scenario.resolve_flows()?;
        let node = |n: &str| NodeId(net.nodes.iter().position(|x| x == n).expect("validated") as u32);
        let mut links = Vec::with_capacity(net.links.len() * 2);
        for (i, l) in net.links.iter().enumerate() {
            let name = if l.name.is_empty() { format!("link{i}") } else { l.name.clone() };
            let (a, b) = (node(&l.a), node(&l.b));
            let fwd = format!("{name}:{}->{}", l.a, l.b);
            let rev = format!("{name}:{}->{}", l.b, l.a);
            let rq = l.reverse_queue.unwrap_or(l.queue);
            links.push(LinkDir::new(fwd.clone(), a, b, l.rate.0, l.delay.0, l.queue.limit(), l.loss, RngStream::new(seed, &format!("link:{fwd}"))));
            links.push(LinkDir::new(rev.clone(), b, a, l.rate.0, l.delay.0, rq.limit(), l.reverse_loss, RngStream::new(seed, &format!("link:{rev}"))));
            let n = links.len();
            links[n - 2].set_red(l.queue.red, RngStream::new(seed, &format!("red:{fwd}")));
            links[n - 1].set_red(rq.red, RngStream::new(seed, &format!("red:{rev}")));
        }
        if scenario.topology.loss_pattern == LossPattern::Periodic {
            for l in &mut links {
                l.periodic = Some(0.0);
            }
        }
        let dirs: Vec<(NodeId, NodeId)> = links.iter().map(|l| (l.from, l.to)).collect();
        let routes = Routes::compute(net.nodes.len(), &dirs);
        let mut q = EventQueue::new();
        let mut rt = Vec::with_capacity(flows.len());
        for (fi, f) in flows.into_iter().enumerate() {
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
                links[at.0 as usize].filters.push(DropFilter { conn: ConnId(fi as u32), kind: *kind, transmissions: tx.clone(), epoch: *transfer, dropped: 0 });
            }
            q.schedule(f.start, Ev::Start(fi as u32));
            rt.push(FlowRt { spec: f, epoch: 0, sender: None, receiver: None, total: ConnStats::default(), transfers: Vec::new(), finished: false, base: None });
        }
        if let Some(w) = scenario.warmup {
            q.schedule(w.0, Ev::Warmup);
        }
        let capture = Capture::build(&scenario.capture, seed, &net, &links, rt.iter().map(|f| &f.spec))?;
        Ok(World {
            q,
            node_names: net.nodes,
            links,
            routes,
            pool: Vec::with_capacity(1024),
            free: Vec::new(),
            active: rt.len(),
            flows: rt,
            out: Vec::with_capacity(64),
            limit: scenario.duration.map(|d| d.0),
            warmup: scenario.warmup.map(|d| d.0),
            link_base: Vec::new(),
            stopped_at: None,
            seed,
            scenario: scenario.clone(),
            pkts_created: 0,
            pkts_delivered: 0,
            pkts_dropped: 0,
            pkts_stale: 0,
            trace: std::env::var_os("TCPLAB_TRACE").is_some(),
            capture,
        })
    }

    pub fn now(&self) -> Time {
        self.q.now()
    }

    /// Run until every flow is finished or the time limit is reached.
    pub fn run(&mut self) {
        while self.step() {}
    }

    /// Process one event; false when the run is over.
    /// With a `duration` the run always lasts that long (so that runs compared in pairs are
    /// measured over the same window); without one it ends when every transfer is done.
    pub fn step(&mut self) -> bool {
        if self.active == 0 && self.limit.is_none() {
            return false;
        }
        let Some(t) = self.q.peek_time() else { return false };
        if self.limit.is_some_and(|l| t > l) {
            return false;
        }
        let (_, ev) = self.q.pop().expect("peeked");
        match ev {
            Ev::Start(f) => self.start_transfer(f as usize),
            Ev::TxDone(l) => {
                let l = l as usize;
                self.links[l].busy = false;
                let pool = &self.pool;
                if let Some(idx) = self.links[l].pop(self.q.now(), |i| pool[i as usize].wire_bytes()) {
                    self.start_tx(l, idx);
                }
            }
            Ev::Arrive(l, idx) => self.arrive(l as usize, idx),
            Ev::Rto(f, e) => self.sender_timer(f as usize, e),
            Ev::DelAck(f, e) => self.receiver_timer(f as usize, e, RxTimer::DelAck),
            Ev::SynAck(f, e) => self.receiver_timer(f as usize, e, RxTimer::SynAck),
            Ev::Warmup => self.end_warmup(),
        }
        true
    }

    /// Snapshot every counter at the end of the warmup; the results report what came after.
    fn end_warmup(&mut self) {
        let now = self.q.now();
        for l in &mut self.links {
            l.finish(now);
        }
        self.link_base = self.links.iter().map(|l| l.stats.clone()).collect();
        for fl in &mut self.flows {
            let mut total = fl.total.clone();
            if let (Some(s), Some(r)) = (fl.sender.as_mut(), fl.receiver.as_ref()) {
                s.finish(now);
                total.add(&merge(s, r));
            }
            fl.base = Some(total);
        }
    }

    fn alloc(&mut self, p: Packet) -> u32 {
        self.pkts_created += 1;
        match self.free.pop() {
            Some(i) => {
                self.pool[i as usize] = p;
                i
            }
            None => {
                self.pool.push(p);
                (self.pool.len() - 1) as u32
            }
        }
    }

    fn start_transfer(&mut self, f: usize) {
        let now = self.q.now();
        let fl = &mut self.flows[f];
        fl.epoch += 1;
        let mut s = TcpSender::new(fl.spec.tcp.clone(), fl.spec.bytes);
        fl.receiver = Some(TcpReceiver::new(fl.spec.tcp.clone()));
        s.start(now, &mut self.out);
        fl.sender = Some(s);
        fl.transfers.push(TransferRow::new(f, &fl.spec.name, fl.epoch, fl.spec.bytes, now));
        self.after_sender(f);
    }

    fn start_tx(&mut self, l: usize, idx: u32) {
        let now = self.q.now();
        if let Some(c) = self.capture.as_mut() {
            c.egress(now, l, &self.pool[idx as usize], &self.links);
        }
        let done = self.links[l].start_tx(now, &self.pool[idx as usize]);
        self.q.schedule(done, Ev::TxDone(l as u32));
        self.q.schedule(done + self.links[l].delay, Ev::Arrive(l as u32, idx));
    }

    /// Offer a packet to a link direction: dropped, sent at once, or queued.
    fn enqueue(&mut self, l: usize, idx: u32) {
        let now = self.q.now();
        let p = &mut self.pool[idx as usize];
        p.enqueued_at = now;
        if let Some(c) = self.capture.as_mut() {
            c.ingress(now, l, p, &self.links);
        }
        let link = &mut self.links[l];
        match link.admit(p) {
            Err(why) => {
                if self.trace {
                    eprintln!("{:>12.6} drop {:?} at {} {:?} {:?} seq={} ack={}", crate::units::to_secs(now), why, link.name, p.dir, p.tag, p.seg.seq, p.seg.ack);
                }
                self.pkts_dropped += 1;
                self.free.push(idx);
            }
            Ok(()) if !link.busy => self.start_tx(l, idx),
            Ok(()) => {
                let bytes = p.wire_bytes();
                link.push(now, idx, bytes);
            }
        }
    }

    fn forward(&mut self, at: NodeId, idx: u32) {
        let dst = self.pool[idx as usize].dst;
        match self.routes.next_hop(at, dst) {
            Some(l) => self.enqueue(l.0 as usize, idx),
            None => {
                // Unreachable by construction (paths are checked at build); count it as a drop.
                self.pkts_dropped += 1;
                self.free.push(idx);
            }
        }
    }

    fn arrive(&mut self, l: usize, idx: u32) {
        let node = self.links[l].to;
        let p = self.pool[idx as usize];
        if let Some(c) = self.capture.as_mut() {
            c.node(self.q.now(), node.0, &p, Some(&self.links[l]));
        }
        if node != p.dst {
            self.forward(node, idx);
            return;
        }
        self.free.push(idx);
        self.pkts_delivered += 1;
        let f = p.conn.0 as usize;
        if p.epoch != self.flows[f].epoch {
            self.pkts_stale += 1;
            return;
        }
        let now = self.q.now();
        if self.trace {
            eprintln!("{:>12.6} recv flow{} {:?} {:?} seq={} len={} ack={}", crate::units::to_secs(now), f, p.dir, p.tag, p.seg.seq, p.seg.len, p.seg.ack);
        }
        let fl = &mut self.flows[f];
        match p.dir {
            Dir::Forward => {
                if let Some(r) = fl.receiver.as_mut() {
                    r.on_segment(now, &p.seg, &mut self.out);
                }
                self.after_receiver(f);
            }
            Dir::Reverse => {
                if let Some(s) = fl.sender.as_mut() {
                    s.on_segment(now, &p.seg, &mut self.out);
                }
                self.after_sender(f);
            }
        }
    }

    fn sender_timer(&mut self, f: usize, epoch: u32) {
        let now = self.q.now();
        let fl = &mut self.flows[f];
        if fl.epoch != epoch {
            return;
        }
        let Some(s) = fl.sender.as_mut() else { return };
        match s.core.rto_timer.on_event(now) {
            TimerFire::Stale => return,
            TimerFire::Rearm(t) => {
                self.q.schedule(t, Ev::Rto(f as u32, epoch));
                return;
            }
            TimerFire::Fire => {
                if self.trace {
                    eprintln!("{:>12.6} RTO flow{f} snd_una={} snd_max={} rto={}", crate::units::to_secs(now), s.core.snd_una, s.core.snd_max, s.core.rtt.rto());
                }
                s.on_rto(now, &mut self.out)
            }
        }
        self.after_sender(f);
    }

    fn receiver_timer(&mut self, f: usize, epoch: u32, which: RxTimer) {
        let now = self.q.now();
        let fl = &mut self.flows[f];
        if fl.epoch != epoch {
            return;
        }
        let Some(r) = fl.receiver.as_mut() else { return };
        let timer = match which {
            RxTimer::DelAck => &mut r.delack_timer,
            RxTimer::SynAck => &mut r.synack_timer,
        };
        match timer.on_event(now) {
            TimerFire::Stale => return,
            TimerFire::Rearm(t) => {
                let ev = match which {
                    RxTimer::DelAck => Ev::DelAck(f as u32, epoch),
                    RxTimer::SynAck => Ev::SynAck(f as u32, epoch),
                };
                self.q.schedule(t, ev);
                return;
            }
            TimerFire::Fire => match which {
                RxTimer::DelAck => r.on_delack_timer(now, &mut self.out),
                RxTimer::SynAck => r.on_synack_timer(now, &mut self.out),
            },
        }
        self.after_receiver(f);
    }

    /// Send what an endpoint produced, from `src` towards `dst`.
    fn emit(&mut self, f: usize, dir: Dir) {
        let fl = &self.flows[f];
        let (src, dst) = match dir {
            Dir::Forward => (NodeId(fl.spec.from as u32), NodeId(fl.spec.to as u32)),
            Dir::Reverse => (NodeId(fl.spec.to as u32), NodeId(fl.spec.from as u32)),
        };
        let epoch = fl.epoch;
        let mut out = std::mem::take(&mut self.out);
        for o in out.drain(..) {
            let p = Packet { conn: ConnId(f as u32), epoch, dir, src, dst, seg: o.seg, enqueued_at: 0, tag: o.tag };
            if let Some(c) = self.capture.as_mut() {
                let hop = self.routes.next_hop(src, dst).map(|l| &self.links[l.0 as usize]);
                c.node(self.q.now(), src.0, &p, hop);
            }
            let idx = self.alloc(p);
            self.forward(src, idx);
        }
        self.out = out;
    }

    fn after_sender(&mut self, f: usize) {
        self.emit(f, Dir::Forward);
        let epoch = self.flows[f].epoch;
        if let Some(s) = self.flows[f].sender.as_mut() {
            for t in s.take_timer_events() {
                self.q.schedule(t, Ev::Rto(f as u32, epoch));
            }
            if matches!(s.phase(), SenderPhase::Done | SenderPhase::Aborted) {
                self.finish_transfer(f);
            }
        }
    }

    fn after_receiver(&mut self, f: usize) {
        self.emit(f, Dir::Reverse);
        let now = self.q.now();
        let fl = &mut self.flows[f];
        let epoch = fl.epoch;
        if let Some(r) = fl.receiver.as_mut() {
            for (which, t) in r.take_timer_events() {
                let ev = match which {
                    RxTimer::DelAck => Ev::DelAck(f as u32, epoch),
                    RxTimer::SynAck => Ev::SynAck(f as u32, epoch),
                };
                self.q.schedule(t, ev);
            }
            let tr = fl.transfers.last_mut().expect("a transfer is running");
            if tr.first_byte_s.is_none() {
                tr.first_byte_s = r.first_byte_at.map(to_secs);
            }
            if let Some(b) = fl.spec.bytes {
                if tr.delivered_s.is_none() && r.stats.bytes_delivered >= b {
                    tr.delivered_s = Some(to_secs(now));
                }
            }
        }
    }

    fn finish_transfer(&mut self, f: usize) {
        let now = self.q.now();
        let fl = &mut self.flows[f];
        let (Some(s), Some(r)) = (fl.sender.take(), fl.receiver.take()) else { return };
        let tr = fl.transfers.last_mut().expect("a transfer is running");
        tr.fill(&s, &r, (s.phase() == SenderPhase::Done).then_some(now));
        fl.total.add(&merge(&s, &r));
        let more = fl.spec.repeat.is_none_or(|n| fl.epoch < n);
        if more {
            self.q.schedule(now + fl.spec.think, Ev::Start(f as u32));
        } else {
            fl.finished = true;
            self.active -= 1;
            if self.active == 0 {
                self.stopped_at = Some(now);
            }
        }
    }

    /// End the run and collect the instruments.
    pub fn finish(mut self) -> RunResult {
        let end = self.limit.or(self.stopped_at).unwrap_or(self.q.now());
        for l in &mut self.links {
            l.finish(end.max(self.q.now()).min(end));
        }
        let mut conns = Vec::new();
        let mut transfers = Vec::new();
        for (i, fl) in self.flows.iter_mut().enumerate() {
            let mut total = fl.total.clone();
            if let (Some(s), Some(r)) = (fl.sender.as_mut(), fl.receiver.as_ref()) {
                s.finish(end);
                let tr = fl.transfers.last_mut().expect("a transfer is running");
                tr.fill(s, r, None);
                total.add(&merge(s, r));
            }
            let from = self.warmup.unwrap_or(0);
            let counted = match &fl.base {
                Some(b) => total.since(b),
                None => total,
            };
            conns.push(ConnRow::measured(i, &fl.spec, &self.node_names, &counted, &fl.transfers, from, end));
            transfers.append(&mut fl.transfers);
        }
        let links = self
            .links
            .iter()
            .enumerate()
            .map(|(i, l)| match self.link_base.get(i) {
                Some(b) => LinkRow::measured(l, &l.stats.since(b), &self.node_names, self.warmup.unwrap_or(0), end),
                None => LinkRow::new(l, &self.node_names, end),
            })
            .collect();
        let in_flight = self.pool.len() as u64 - self.free.len() as u64;
        RunResult {
            scenario: {
                // The scenario as run carries the seed it ran with, so running it again reproduces it.
                let mut sc = self.scenario.clone();
                sc.seed = self.seed;
                sc.to_json()
            },
            flows_tcp: self.flows.iter().map(|f| serde_json::to_value(&f.spec.tcp).expect("serialisable")).collect(),
            meta: Meta {
                seed: self.seed,
                version: crate::VERSION.into(),
                sim_time_s: to_secs(end),
                events: self.q.processed(),
                packets_created: self.pkts_created,
                packets_delivered: self.pkts_delivered,
                packets_dropped: self.pkts_dropped,
                packets_stale: self.pkts_stale,
                packets_in_flight: in_flight,
                completed: self.active == 0,
            },
            connections: conns,
            links,
            transfers,
        }
    }

    /// Packet conservation: created = delivered + dropped + in flight.
    pub fn packet_balance(&self) -> (u64, u64, u64, u64) {
        (self.pkts_created, self.pkts_delivered, self.pkts_dropped, self.pool.len() as u64 - self.free.len() as u64)
    }

}

/// One connection's counters: the sender's with the receiver's added.
fn merge(s: &TcpSender, r: &TcpReceiver) -> ConnStats {
    let mut c = s.core.stats.clone();
    let rs = &r.stats;
    c.bytes_delivered += rs.bytes_delivered;
    c.acks_sent += rs.acks_sent;
    c.delack_timeouts += rs.delack_timeouts;
    c.ooo_segments += rs.ooo_segments;
    c.dup_segments += rs.dup_segments;
    c.synack_retransmits += rs.synack_retransmits;
    c
}

/// Run a scenario with a seed.
pub fn run(scenario: &Scenario, seed: u64) -> Result<RunResult, ScenarioError> {
    crate::footprint::check(scenario)?; // also for a Scenario built in Rust, not read from text
    let mut w = World::build(scenario, seed)?;
    w.run();
    let capture = w.capture.take();
    let r = w.finish();
    if let Some(c) = capture {
        c.close()?;
    }
    Ok(r)
}
