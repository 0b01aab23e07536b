//! Transmission: the link directions, the packets in flight on them, the packet pool and the
//! routes packets follow. The world hands a packet to the fabric at its source (`send`) and the
//! events the fabric scheduled back to it (`on_event`); the fabric moves the packet hop by hop
//! (delay filters, ingress, the queue, the transmitter, the propagation delay) and hands back the
//! pool index of a packet that reached the node it is addressed to. It knows nothing of
//! connections or applications (the layer above), and tells what it does to instruments through
//! one interface (`net::observe::NetObserver`).
//!
//! Nothing in the per-packet path allocates: packets live in a pool and are recycled.

use super::fq::{Deq, FlowKey, FqPacket};
use super::link::LinkDir;
use super::observe::NetObserver;
use super::routing::{Paths, Routes};
use super::vfifo::{VFifo, COMPUTED, EVENTS};
use super::{ConnId, NodeId, Packet, Payload};
use crate::engine::EventQueue;
use crate::units::Time;
use std::collections::VecDeque;

/// The fabric's events, which the world queues as its own (`From<NetEv>`) and hands back to
/// `Fabric::on_event` when they are due.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NetEv {
    /// A link direction finished serialising a packet (queued only when a packet waits).
    TxDone(u32),
    /// The first packet in flight on a link direction reached its far end.
    Arrive(u32),
    /// A packet a delay filter held back is offered to its link: (link direction, packet).
    Release(u32, u32),
    /// An fq direction's transmission ended with a packet held (`fq.rs`).
    FqTxDone(u32),
    /// An fq direction's watchdog: a throttled flow may send (`qdisc_watchdog`).
    FqWatchdog(u32),
}

/// No route yet (`Fabric::path_of`).
const NO_PATH: u32 = u32::MAX;

#[derive(Clone, Copy, Debug)]
struct InFlight {
    at: Time,
    seq: u64,
    pkt: u32,
}

/// Memory of a packet held by a run: its pool slot, its index in a queue or an in-flight FIFO
/// entry (arrival time, insertion number, index), and what a computed direction keeps of it
/// (`vfifo::HELD_BYTES`).
pub const PACKET_BYTES: usize = std::mem::size_of::<Packet>() + 32 + super::vfifo::HELD_BYTES;

/// Packet counters: created = delivered + dropped + in flight (`Fabric::balance`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PacketCounts {
    pub created: u64,
    pub delivered: u64,
    pub dropped: u64,
}

pub struct Fabric<O: NetObserver> {
    links: Vec<LinkDir>,
    /// The packets in flight on each link direction, in the order they arrive (a direction has a
    /// fixed delay, so the order it sent them): (arrival time, insertion number, packet). Only the
    /// first has an event in the queue; the next enters it when the first arrives.
    flight: Vec<VecDeque<InFlight>>,
    /// Each computed direction's state (`vfifo.rs`), by direction.
    vf: Vec<VFifo>,
    routes: Routes,
    /// Whole routes, which packets follow hop by hop (`Packet::hop`).
    paths: Paths,
    /// Where the route of each endpoint's packets starts in `paths`, by endpoint slot:
    /// (generation, start), `NO_PATH` until its first packet.
    conn_path: Vec<(u32, u32)>,
    pool: Vec<Packet>,
    free: Vec<u32>,
    /// The pool may grow to this many packets (`bound_growth`); past it `overgrown` is set.
    max_pool: usize,
    overgrown: bool,
    counts: PacketCounts,
    /// Packets a computed direction dropped after the run's end (`end_links`): decided, their
    /// slots freed, but in flight at the end, as on the event-driven path.
    later_drops: u64,
    /// Datagrams dropped since the world last asked (`take_udp_losses`): (addressee, bytes).
    udp_lost: Vec<(ConnId, u32)>,
    /// Queue every transmission's end (`queue_every_transmission_end`).
    every_tx_end: bool,
    /// Print every hold and drop to stderr (debugging aid, `TCPLAB_TRACE`).
    trace: bool,
    /// The departure stamp and pacing rate of the packet `send_stamped` is putting on the
    /// network (its pool slot, `skb->tstamp`, `sk_pacing_rate`), read by an fq first hop.
    stamp: Option<(u32, Time, Option<u64>)>,
    /// Some direction is fq.
    has_fq: bool,
    /// What observes the fabric (the run's instruments), and whether it records anything: without
    /// an instrument the hooks are not called at all.
    obs: O,
    observed: bool,
}

impl<O: NetObserver> Fabric<O> {
    pub fn new(links: Vec<LinkDir>, routes: Routes, trace: bool, obs: O) -> Fabric<O> {
        let has_fq = links.iter().any(|l| l.fq.is_some());
        Fabric {
            flight: vec![VecDeque::new(); links.len()],
            vf: (0..links.len()).map(|_| VFifo::default()).collect(),
            links,
            routes,
            paths: Paths::default(),
            conn_path: Vec::new(),
            pool: Vec::with_capacity(1024),
            free: Vec::new(),
            max_pool: usize::MAX,
            overgrown: false,
            counts: PacketCounts::default(),
            later_drops: 0,
            udp_lost: Vec::new(),
            every_tx_end: false,
            trace,
            stamp: None,
            has_fq,
            observed: obs.active(),
            obs,
        }
    }

    /// The observer (the world's instruments, which also observe its connections).
    pub fn observer(&mut self) -> &mut O {
        &mut self.obs
    }

    pub fn links(&self) -> &[LinkDir] {
        &self.links
    }

    /// Close every direction's time integrals at `now` (the warmup's end, the run's end).
    pub fn finish_links(&mut self, now: Time) {
        for l in &mut self.links {
            l.finish(now);
        }
    }

    /// Every direction's counters as they stood at `until` (time, insertion number) in the order
    /// of events, the integrals closed (`finish_links`): a computed direction has counted its
    /// decisions whole, so what they say had not happened by then is taken out
    /// (`LinkDir::counted_until`).
    pub fn link_stats(&self, until: (Time, u64)) -> Vec<super::LinkDirStats> {
        self.links.iter().zip(&self.vf).map(|(l, v)| if l.mode == EVENTS { l.stats.clone() } else { l.counted_until(v, until, until.0).0 }).collect()
    }

    /// The run is over: what happened up to `until` (time, insertion number) is what it did.
    /// Every direction's integrals are closed at `now` (at least `until`'s time; packets still
    /// waiting then count as waiting until `now`), every computed direction's counters are those
    /// of `until` (`link_stats`), and its drops after it (counted when decided) are in flight
    /// again.
    pub fn end_links(&mut self, now: Time, until: (Time, u64)) {
        self.finish_links(now);
        for (l, v) in self.links.iter_mut().zip(&self.vf) {
            if l.mode != EVENTS {
                let (stats, later) = l.counted_until(v, until, now);
                l.stats = stats;
                self.counts.dropped -= later;
                self.later_drops += later;
            }
        }
    }

    /// Move packets through every direction that can be computed (`vfifo.rs`) from now on,
    /// knowing every (source, destination) pair of nodes that will send (`pairs`, each both
    /// ways; `udp`: some of them send datagrams). A direction can be computed when it is plain (a
    /// DropTail queue and a transmitter: no loss element, filter, RED, CE marking or fq) and
    /// idle (nothing queued). It is chained when, besides, every route through it arrives from
    /// one and the same such direction with nothing in flight, every route through that one goes
    /// on to it, and (with datagrams) it cannot drop. A run with instruments (which observe every
    /// hop when it happens) or one that queues every transmission's end (the reference) moves
    /// every packet by events, the places in the order of events taken as a computed run takes
    /// them (`offer_seqs`): the same run, event for event.
    pub fn arm(&mut self, pairs: &[(NodeId, NodeId)], udp: bool) {
        const UNSET: u32 = u32::MAX;
        const LOCAL: u32 = u32::MAX - 1;
        const MANY: u32 = u32::MAX - 2;
        // Where each direction's packets come from (LOCAL: sent at its node) and where they go
        // next (LOCAL: delivered at its far end): one direction, or MANY.
        let mut feeder = vec![UNSET; self.links.len()];
        let mut next = vec![UNSET; self.links.len()];
        let join = |f: &mut u32, v: u32| *f = if *f == UNSET || *f == v { v } else { MANY };
        for &(a, b) in pairs {
            for (src, dst) in [(a, b), (b, a)] {
                let links = &self.links;
                let mut i = self.paths.start(&mut self.routes, |l| links[l.0 as usize].to, src, dst);
                let mut prev = LOCAL;
                while let Some(x) = self.paths.hop(i) {
                    join(&mut feeder[x.0 as usize], prev);
                    if prev != LOCAL {
                        join(&mut next[prev as usize], x.0);
                    }
                    prev = x.0;
                    i += 1;
                }
                if prev != LOCAL {
                    join(&mut next[prev as usize], LOCAL);
                }
            }
        }
        let eligible: Vec<bool> = self
            .links
            .iter()
            .map(|l| {
                let plain = l.filters.is_empty() && l.delays.is_empty() && l.loss_p == 0.0 && l.periodic.is_none() && l.red.is_none() && l.mark_threshold.is_none() && l.fq.is_none();
                plain && l.queue.is_empty() && !l.done_queued
            })
            .collect();
        let compute = !self.observed && !self.every_tx_end;
        for x in 0..self.links.len() {
            // Only from a direction whose packets all go on to this one: a direction that fans
            // out to many would spread what it holds in flight over all of them, each with its
            // own arrival in the event queue, where one FIFO of arrivals keeps one.
            let y = feeder[x] as usize;
            let l = &self.links[x];
            let unlimited = l.limit.packets.is_none() && l.limit.bytes.is_none();
            let chained = y < self.links.len() && next[y] == x as u32 && eligible[x] && eligible[y] && self.flight[y].is_empty() && (!udp || unlimited);
            let l = &mut self.links[x];
            l.chained = chained;
            if compute && eligible[x] {
                l.mode = COMPUTED;
            }
        }
    }

    /// How each direction moves packets (`vfifo::EVENTS`, `COMPUTED`) and whether it is
    /// chained, by index.
    pub fn modes(&self) -> Vec<(u8, bool)> {
        self.links.iter().map(|l| (l.mode, l.chained)).collect()
    }

    /// The places in the order of events of the transmission's end and the arrival of a packet
    /// offered to `l` and admitted, taken now (both computed and by events): a chained
    /// direction's were taken when its feeding direction was offered the packet, just after that
    /// one's own (the arrival there is the event now); any other direction takes its own, then
    /// those of the chained directions the packet goes on through, in the order a computed run
    /// takes them as it computes the packet's way through them (`offer_computed`).
    #[inline]
    fn offer_seqs<E: From<NetEv> + Copy>(&self, q: &mut EventQueue<E>, l: usize, idx: u32) -> (u64, u64) {
        if self.links[l].chained {
            let c = q.current_seq();
            return (c + 1, c + 2);
        }
        let seqs = (q.reserve(), q.reserve());
        let mut h = self.pool[idx as usize].hop;
        while let Some(z) = self.paths.hop(h) {
            if !self.links[z.0 as usize].chained {
                break;
            }
            q.reserve();
            q.reserve();
            h += 1;
        }
        seqs
    }

    /// The packet in pool slot `idx` (as handed back by `on_event`).
    #[inline]
    pub fn packet(&self, idx: u32) -> &Packet {
        &self.pool[idx as usize]
    }

    pub fn counts(&self) -> PacketCounts {
        self.counts
    }

    /// Packets held now (queued, in flight, or held by a delay filter).
    pub fn in_flight(&self) -> u64 {
        self.pool.len() as u64 - self.free.len() as u64 + self.later_drops
    }

    /// Bound the packet pool to `max` packets: past it `overgrown` says so (the caller stops).
    pub fn bound_growth(&mut self, max: usize) {
        self.max_pool = max;
    }

    pub fn bounded(&self) -> bool {
        self.max_pool != usize::MAX
    }

    pub fn max_pool(&self) -> usize {
        self.max_pool
    }

    pub fn overgrown(&self) -> bool {
        self.overgrown
    }

    /// Queue the end of every transmission, also those with nothing waiting behind them (a
    /// reference for tests: the same results, more events).
    pub fn queue_every_transmission_end(&mut self) {
        self.every_tx_end = true;
    }

    /// Datagrams dropped since the last call: (addressee, payload bytes). TCP counts its own
    /// losses; a UDP sink is told here.
    #[inline]
    pub fn take_udp_losses(&mut self) -> Option<std::vec::Drain<'_, (ConnId, u32)>> {
        if self.udp_lost.is_empty() {
            None
        } else {
            Some(self.udp_lost.drain(..))
        }
    }

    /// Where the route of endpoint `id`'s packets (from `src` to `dst`) starts (`Packet::hop`):
    /// the connection's cached start on every packet but its first (the lookup kept inline, the
    /// route's computation out of line, so that the per-packet path does not depend on how the
    /// compiler weighs the whole).
    #[inline(always)]
    pub fn path_of(&mut self, id: ConnId, src: NodeId, dst: NodeId) -> u32 {
        if let Some(&(gen, start)) = self.conn_path.get(id.idx as usize) {
            if gen == id.gen && start != NO_PATH {
                return start;
            }
        }
        self.route_of(id, src, dst)
    }

    /// `path_of` for a connection whose route is not cached yet.
    #[cold]
    #[inline(never)]
    fn route_of(&mut self, id: ConnId, src: NodeId, dst: NodeId) -> u32 {
        let links = &self.links;
        let start = self.paths.start(&mut self.routes, |l| links[l.0 as usize].to, src, dst);
        let i = id.idx as usize;
        if self.conn_path.len() <= i {
            self.conn_path.resize(i + 1, (0, NO_PATH));
        }
        self.conn_path[i] = (id.gen, start);
        start
    }

    /// Put a packet on the network at its source (`p.hop`: the start of its route). Inlined
    /// into the caller so that the packet it builds is written straight into its pool slot,
    /// not built on the stack and copied (`launch` does the rest).
    #[inline(always)]
    pub fn send<E: From<NetEv> + Copy>(&mut self, q: &mut EventQueue<E>, p: Packet) {
        let idx = self.alloc(p);
        self.launch(q, idx);
    }

    /// `send` once the packet is in its slot: the instruments see it leave, and it goes to
    /// the first direction of its route.
    #[inline]
    fn launch<E: From<NetEv> + Copy>(&mut self, q: &mut EventQueue<E>, idx: u32) {
        if self.observed {
            let p = &self.pool[idx as usize];
            let hop = self.paths.hop(p.hop).map(|l| &self.links[l.0 as usize]);
            self.obs.on_send(q.now(), p, hop);
        }
        self.forward(q, idx);
    }

    /// Whether any link direction is fq (set at build): a run without fq asks nothing more.
    #[inline]
    pub fn has_fq(&self) -> bool {
        self.has_fq
    }

    /// Whether the route starting at `hop` leaves through an fq direction (its first link).
    pub fn fq_first_hop(&self, hop: u32) -> bool {
        self.paths.hop(hop).is_some_and(|l| self.links[l.0 as usize].fq.is_some())
    }

    /// `send` for a packet of a socket that an fq first hop paces: its earliest departure time
    /// (`skb->tstamp`, 0 for none) and its socket's pacing rate (bytes per second) go with it.
    #[inline(never)]
    pub fn send_stamped<E: From<NetEv> + Copy>(&mut self, q: &mut EventQueue<E>, p: Packet, tstamp: Time, rate: Option<u64>) {
        let idx = self.alloc(p);
        self.stamp = Some((idx, tstamp, rate));
        self.launch(q, idx);
        self.stamp = None;
    }

    /// A fabric event is due (`tx_done`, `arrive`, `release` by kind). Returns the pool slot of
    /// a packet that reached the node it is addressed to: its slot is already free but not reused
    /// until the next packet is sent, so the caller reads it (`packet`) before it sends anything.
    #[inline]
    pub fn on_event<E: From<NetEv> + Copy>(&mut self, q: &mut EventQueue<E>, ev: NetEv) -> Option<u32> {
        match ev {
            NetEv::TxDone(l) => {
                self.tx_done(q, l);
                None
            }
            NetEv::Arrive(l) => self.arrive(q, l),
            NetEv::Release(l, idx) => {
                self.release(q, l, idx);
                None
            }
            NetEv::FqTxDone(l) => {
                self.links[l as usize].done_queued = false;
                self.fq_kick(q, l as usize);
                None
            }
            NetEv::FqWatchdog(l) => {
                let l = l as usize;
                let now = q.now();
                let fq = self.links[l].fq.as_mut().expect("an fq direction");
                // Lazily cancelled: only the armed expiry counts.
                if fq.watchdog == Some(now) {
                    fq.watchdog = None;
                    if !self.links[l].busy(now, q.current_seq()) {
                        self.fq_kick(q, l);
                    }
                }
                None
            }
        }
    }

    /// `NetEv::TxDone(l)`: the transmission on `l` ended with a packet waiting (only such an end
    /// is in the queue); the next one starts.
    #[inline(always)]
    pub fn tx_done<E: From<NetEv> + Copy>(&mut self, q: &mut EventQueue<E>, l: u32) {
        let l = l as usize;
        self.links[l].done_queued = false;
        let pool = &self.pool;
        if let Some(idx) = self.links[l].pop(q.now(), |i| pool[i as usize].wire_bytes()) {
            let seqs = self.links[l].queue_seqs.pop_front().expect("a waiting packet's places");
            if self.observed {
                self.obs.on_queue(q.now(), l, &self.links[l]);
            }
            self.start_tx(q, l, idx, Some(seqs));
        } else if self.links[l].fq.is_some() {
            // Every transmission's end is queued (`queue_every_transmission_end`): fq's turn.
            self.fq_kick(q, l);
        }
    }

    /// An idle fq direction asks fq for a packet (`qdisc_run` → `fq_dequeue`): it starts
    /// transmitting, or the watchdog is armed for the first throttled flow.
    #[inline(never)]
    fn fq_kick<E: From<NetEv> + Copy>(&mut self, q: &mut EventQueue<E>, l: usize) {
        let now = q.now();
        let pool = &self.pool;
        match self.links[l].dequeue_fq(now, |i| pool[i as usize].wire_bytes()) {
            Deq::Packet(idx) => {
                if self.observed {
                    self.obs.on_queue(now, l, &self.links[l]);
                }
                self.start_tx(q, l, idx, None);
                let link = &mut self.links[l];
                if !link.done_queued && link.fq.as_ref().is_some_and(|f| f.qlen > 0) {
                    link.done_queued = true;
                    q.schedule_reserved(link.busy_until, link.done_seq, NetEv::FqTxDone(l as u32).into());
                }
            }
            Deq::Wait(t) => {
                let fq = self.links[l].fq.as_mut().expect("an fq direction");
                if fq.watchdog.is_none_or(|w| w > t || w < now) {
                    fq.watchdog = Some(t);
                    q.schedule(t, NetEv::FqWatchdog(l as u32).into());
                }
            }
            Deq::Empty => {}
        }
    }

    /// Offer a packet to an fq direction: dropped, or held by fq and, the transmitter idle,
    /// asked for at once.
    #[inline(never)]
    fn offer_fq<E: From<NetEv> + Copy>(&mut self, q: &mut EventQueue<E>, l: usize, idx: u32) {
        let now = q.now();
        let link = &mut self.links[l];
        let p = &mut self.pool[idx as usize];
        // A packet of a socket on this node (not forwarded; a listener's SYN-ACK is orphaned,
        // `fq_classify`) is its connection direction's flow.
        let local = p.src == link.from && !matches!(p.tag, super::PacketTag::SynAck { .. });
        let (tstamp, sk_rate) = match self.stamp {
            Some((i, t, r)) if i == idx => (t, r),
            _ => (0, None),
        };
        let key = FlowKey { flow: p.label.flow, epoch: p.label.epoch, dir: p.dir as u8, orphan: !local };
        let fp = FqPacket { idx, bytes: p.wire_bytes(), key, tstamp: if local { tstamp } else { 0 }, sk_rate: if local { sk_rate } else { None } };
        let busy = link.busy(now, q.current_seq());
        match link.admit_fq(p, fp, now) {
            Err(why) => {
                if self.trace {
                    eprintln!("{:>12.6} drop {:?} at {} {:?} {:?} {:?}", crate::units::to_secs(now), why, link.name, p.dir, p.tag, p.body);
                }
                if self.observed {
                    self.obs.on_drop(now, l, p, why);
                }
                self.dropped(idx);
            }
            Ok(()) => {
                if self.observed {
                    self.obs.on_queue(now, l, link);
                }
                if !busy {
                    self.fq_kick(q, l);
                } else if !link.done_queued {
                    link.done_queued = true;
                    q.schedule_reserved(link.busy_until, link.done_seq, NetEv::FqTxDone(l as u32).into());
                }
            }
        }
    }

    /// `NetEv::Arrive(l)`: the first packet in flight on `l` reached its far end: forwarded, or
    /// handed back (see `on_event`).
    #[inline(always)]
    pub fn arrive<E: From<NetEv> + Copy>(&mut self, q: &mut EventQueue<E>, l: u32) -> Option<u32> {
        let l = l as usize;
        let f = &mut self.flight[l];
        let idx = f.pop_front().expect("an arrival has its packet in flight").pkt;
        if let Some(next) = f.front() {
            q.schedule_reserved(next.at, next.seq, NetEv::Arrive(l as u32).into());
        }
        let node = self.links[l].to;
        let p = &self.pool[idx as usize];
        if self.observed {
            self.obs.on_node(q.now(), node.0, p, Some(&self.links[l]));
        }
        if node != p.dst {
            self.forward(q, idx);
            return None;
        }
        self.free.push(idx);
        self.counts.delivered += 1;
        if self.observed {
            self.obs.on_deliver(q.now(), p);
        }
        Some(idx)
    }

    /// `NetEv::Release(l, idx)`: a packet a delay filter held back is offered to `l`.
    pub fn release<E: From<NetEv> + Copy>(&mut self, q: &mut EventQueue<E>, l: u32, idx: u32) {
        self.offer(q, l as usize, idx);
    }

    #[inline(always)]
    fn alloc(&mut self, p: Packet) -> u32 {
        self.counts.created += 1;
        let i = match self.free.pop() {
            Some(i) => i,
            None => self.grow(),
        };
        // One place the packet is written: built in place where the caller built it.
        self.pool[i as usize] = p;
        i
    }

    /// A new pool slot (a placeholder until `alloc` writes it). The pool grows only when every
    /// slot is taken: the one place where what a run holds at once (queued and in-flight
    /// packets) grows, so the one place to bound it.
    #[cold]
    #[inline(never)]
    fn grow(&mut self) -> u32 {
        self.overgrown |= self.pool.len() >= self.max_pool;
        self.pool.push(Packet::default());
        (self.pool.len() - 1) as u32
    }

    /// Start transmitting a packet on `l`. `seqs`: the places in the order of events of its
    /// transmission's end and its arrival (`offer_seqs`), or None to take them now (fq).
    fn start_tx<E: From<NetEv> + Copy>(&mut self, q: &mut EventQueue<E>, l: usize, idx: u32, seqs: Option<(u64, u64)>) {
        let now = q.now();
        if self.observed {
            self.obs.on_egress(now, l, &self.pool[idx as usize], &self.links);
        }
        let link = &mut self.links[l];
        let done = link.start_tx(now, &self.pool[idx as usize]);
        let (done_seq, seq) = seqs.unwrap_or_else(|| (q.reserve(), q.reserve()));
        // The transmission's end takes its place in the order of events; it enters the queue
        // only if a packet waits to follow it (now, or later from `offer`). With nothing waiting
        // it would only mark the transmitter idle, which `LinkDir::busy` tells without it.
        link.done_seq = done_seq;
        link.done_queued = !link.queue.is_empty() || self.every_tx_end;
        if link.done_queued {
            q.schedule_reserved(done, link.done_seq, NetEv::TxDone(l as u32).into());
        }
        let at = done + link.delay;
        self.in_flight_to(q, l, InFlight { at, seq, pkt: idx });
    }

    /// A packet goes in flight on `l`, to reach its far end at (`at`, `seq`): its arrival has
    /// its place in the order of events, and enters the queue now only if nothing is in flight
    /// ahead of it (`arrive` queues the next one's).
    #[inline(always)]
    fn in_flight_to<E: From<NetEv> + Copy>(&mut self, q: &mut EventQueue<E>, l: usize, p: InFlight) {
        let f = &mut self.flight[l];
        if f.is_empty() {
            q.schedule_reserved(p.at, p.seq, NetEv::Arrive(l as u32).into());
        }
        f.push_back(p);
    }

    /// A packet enters a link direction: computed, held back by a delay filter, or offered now
    /// (`offer`, the event path: `release` comes there too, from a direction with a delay filter,
    /// which is never computed).
    #[inline(always)]
    fn enqueue<E: From<NetEv> + Copy>(&mut self, q: &mut EventQueue<E>, l: usize, idx: u32) {
        // A computed direction (no delay filter, no instruments, no fq: `arm`) is offered the
        // packet straight away, as the event that brought it here, without `offer`'s prologue.
        if self.links[l].mode != EVENTS {
            let (now, seq) = (q.now(), q.current_seq());
            return self.offer_computed(q, l, idx, now, seq);
        }
        if !self.links[l].delays.is_empty() {
            if let Some(by) = self.links[l].hold(&self.pool[idx as usize]) {
                let now = q.now();
                if self.trace {
                    let p = &self.pool[idx as usize];
                    eprintln!("{:>12.6} hold {} at {} {:?} {:?}", crate::units::to_secs(now), crate::units::format_duration(by), self.links[l].name, p.dir, p.tag);
                }
                q.schedule(now.saturating_add(by), NetEv::Release(l as u32, idx).into());
                return;
            }
        }
        self.offer(q, l, idx)
    }

    /// Offer a packet to a link direction: dropped, sent at once, or queued.
    fn offer<E: From<NetEv> + Copy>(&mut self, q: &mut EventQueue<E>, l: usize, idx: u32) {
        let now = q.now();
        let p = &mut self.pool[idx as usize];
        p.enqueued_at = now;
        if self.observed {
            self.obs.on_ingress(now, l, p, &self.links);
        }
        let link = &mut self.links[l];
        if link.fq.is_some() {
            return self.offer_fq(q, l, idx);
        }
        let busy = link.busy(now, q.current_seq());
        match link.admit(p, busy) {
            Err(why) => {
                if self.trace {
                    eprintln!("{:>12.6} drop {:?} at {} {:?} {:?} {:?}", crate::units::to_secs(now), why, link.name, p.dir, p.tag, p.body);
                }
                if self.observed {
                    self.obs.on_drop(now, l, p, why);
                }
                self.dropped(idx);
            }
            Ok(()) if !busy => {
                let seqs = self.offer_seqs(q, l, idx);
                self.start_tx(q, l, idx, Some(seqs))
            }
            Ok(()) => {
                let bytes = p.wire_bytes();
                let seqs = self.offer_seqs(q, l, idx);
                let link = &mut self.links[l];
                link.push(now, idx, bytes);
                link.queue_seqs.push_back(seqs);
                if !link.done_queued {
                    // The first packet to wait: the transmission's end now has work to do.
                    link.done_queued = true;
                    q.schedule_reserved(link.busy_until, link.done_seq, NetEv::TxDone(l as u32).into());
                }
                if self.observed {
                    self.obs.on_queue(now, l, link);
                }
            }
        }
    }

    /// Offer a packet to a computed direction at (`at`, `seq`) in the order of events (`vfifo.rs`):
    /// dropped, or in flight to the far end at once; and on through every chained direction of
    /// its route, each offered when the one before computes its arrival.
    #[inline]
    fn offer_computed<E: From<NetEv> + Copy>(&mut self, q: &mut EventQueue<E>, mut l: usize, idx: u32, mut at: Time, mut seq: u64) {
        let now = (q.now(), q.current_seq());
        let p = &self.pool[idx as usize];
        let (bytes, udp) = (p.wire_bytes(), matches!(p.body, Payload::Udp(_)));
        loop {
            // (`enqueued_at` is left as it was: nothing computed reads it, and a direction that
            // moves the packet by events sets it when it is offered the packet.)
            let p = &mut self.pool[idx as usize];
            let link = &mut self.links[l];
            let Some(arrival) = link.offer_computed(&mut self.vf[l], now, at, seq, bytes, udp, || q.reserve()) else {
                if self.trace {
                    eprintln!("{:>12.6} drop Queue at {} {:?} {:?} {:?}", crate::units::to_secs(at), link.name, p.dir, p.tag, p.body);
                }
                self.dropped(idx);
                return;
            };
            let aseq = q.reserve();
            if link.to != p.dst {
                if let Some(next) = self.paths.hop(p.hop) {
                    if self.links[next.0 as usize].chained {
                        p.hop += 1;
                        (l, at, seq) = (next.0 as usize, arrival, aseq);
                        continue;
                    }
                }
            }
            self.in_flight_to(q, l, InFlight { at: arrival, seq: aseq, pkt: idx });
            return;
        }
    }

    /// A packet is dropped: free its slot; a datagram's loss is kept for its sink.
    fn dropped(&mut self, idx: u32) {
        self.counts.dropped += 1;
        self.free.push(idx);
        let p = &self.pool[idx as usize];
        if let Payload::Udp(d) = p.body {
            self.udp_lost.push((p.conn, d.len));
        }
    }

    /// Send a packet on along its route: the next link direction of its path.
    #[inline]
    fn forward<E: From<NetEv> + Copy>(&mut self, q: &mut EventQueue<E>, idx: u32) {
        let p = &mut self.pool[idx as usize];
        let hop = self.paths.hop(p.hop);
        p.hop += 1;
        match hop {
            Some(l) => self.enqueue(q, l.0 as usize, idx),
            None => {
                // Unreachable by construction (paths are checked at build); count it as a drop.
                self.dropped(idx);
            }
        }
    }
}
