//! Bulk transfers, the first application (the `[[flows]]` of a scenario): a flow makes `repeat`
//! one-way transfers of `bytes` from `from` to `to`, each on a fresh connection, `think` apart.
//! The active opener writes everything and closes; the passive end only receives. One row per
//! flow (its transfers' counters added up) and one per transfer.

use super::{App, Ctx, Records};
use crate::net::{ConnId, Label, NodeId};
use crate::result::{ConnRow, TransferRow};
use crate::scenario::ResolvedFlow;
use crate::tcp::sender::UNLIMITED;
use crate::tcp::{ConnEvent, ConnStats, SenderPhase, TcpReceiver, TcpSender};
use crate::units::to_secs;
use std::sync::Arc;

pub struct Bulk {
    index: u32,
    /// The scenario's flows (shared, not copied per flow); this one is `flows[index]`.
    flows: Arc<Vec<ResolvedFlow>>,
    /// Transfers started so far (the live one's ordinal).
    epoch: u32,
    /// The live transfer's (sending, receiving) ends.
    live: Option<(ConnId, ConnId)>,
    /// Counters of finished transfers (the live connection's are added at the end).
    /// (Boxed, and made at the first transfer's end: a flow's state stays small until it runs.)
    total: Option<Box<ConnStats>>,
    transfers: Vec<TransferRow>,
    /// The flow's counters when the warmup ended, and the bytes its receiver then held out of
    /// order.
    base: Option<Box<(ConnStats, u64)>>,
}

impl Bulk {
    /// The bulk application of flow `index` of `flows`.
    pub fn new(index: usize, flows: Arc<Vec<ResolvedFlow>>) -> Bulk {
        assert!(index < flows.len(), "flow {index} of {}", flows.len());
        Bulk { index: index as u32, flows, epoch: 0, live: None, total: None, transfers: Vec::new(), base: None }
    }

    /// The live transfer's send half (at the active end) and receive half (at the passive end).
    fn halves<'a>(cx: &'a mut Ctx, (a, b): (ConnId, ConnId)) -> Option<(&'a mut TcpSender, &'a TcpReceiver)> {
        let (ea, eb) = cx.conns.pair_mut(a, b)?;
        Some((&mut ea.tcp_mut()?.snd, &eb.tcp()?.rcv))
    }
}

/// One transfer's counters: the sender's with the receiver's added.
fn merge(s: &TcpSender, r: &TcpReceiver) -> ConnStats {
    let mut c = s.core.stats.clone();
    let rs = &r.stats;
    c.bytes_delivered += rs.bytes_delivered;
    c.acks_sent += rs.acks_sent;
    c.delack_timeouts += rs.delack_timeouts;
    c.ooo_segments += rs.ooo_segments;
    c.dup_segments += rs.dup_segments;
    c.ce_received += rs.ce_received;
    c.synack_retransmits += rs.synack_retransmits;
    c
}

impl App for Bulk {
    fn start(&mut self, cx: &mut Ctx) {
        cx.schedule(self.flows[self.index as usize].start, 0);
    }

    /// Start the next transfer.
    fn on_timer(&mut self, cx: &mut Ctx, _token: u32) {
        self.epoch += 1;
        let f = &self.flows[self.index as usize];
        let (a, b) = cx.connect(NodeId(f.from as u32), NodeId(f.to as u32), &f.tcp, &f.tcp, Label { flow: self.index, epoch: self.epoch });
        cx.write(a, f.bytes.unwrap_or(UNLIMITED));
        cx.close(a);
        // Woken once, when the whole transfer is delivered (never for an unlimited one).
        cx.set_rcv_lowat(b, f.bytes.unwrap_or(u64::MAX));
        self.live = Some((a, b));
        if self.transfers.is_empty() {
            // Most flows make one transfer: room for one row, not the four a first push makes
            // (10^5 flows: some 60 MB).
            self.transfers.reserve_exact(1);
        }
        self.transfers.push(TransferRow::new(self.index as usize, &f.name, self.epoch, f.bytes, cx.now));
    }

    fn on_event(&mut self, cx: &mut Ctx, id: ConnId, ev: ConnEvent) {
        let Some((a, b)) = self.live else { return };
        match ev {
            ConnEvent::Delivered(_) if id == b => {
                // The first byte's time is read from the receiver when the row is filled.
                let now = cx.now;
                let Some(r) = cx.endpoint(b).and_then(|e| e.tcp()).map(|c| &c.rcv) else { return };
                let tr = self.transfers.last_mut().expect("a transfer is running");
                if let Some(bytes) = self.flows[self.index as usize].bytes {
                    if tr.delivered_s.is_none() && r.stats.bytes_delivered >= bytes {
                        tr.delivered_s = Some(to_secs(now));
                    }
                }
            }
            ConnEvent::Closed | ConnEvent::Failed if id == a => {
                let now = cx.now;
                if let Some((s, r)) = Bulk::halves(cx, (a, b)) {
                    let tr = self.transfers.last_mut().expect("a transfer is running");
                    tr.fill(s, r, (s.phase() == SenderPhase::Done).then_some(now));
                    self.total.get_or_insert_with(Box::default).add(&merge(s, r));
                }
                cx.free(a);
                cx.free(b);
                self.live = None;
                if self.flows[self.index as usize].repeat.is_none_or(|n| self.epoch < n) {
                    cx.schedule(now + self.flows[self.index as usize].think, 0);
                } else {
                    cx.finished();
                }
            }
            _ => {}
        }
    }

    fn warmup(&mut self, cx: &mut Ctx) {
        let now = cx.now;
        let mut total = self.total.as_deref().cloned().unwrap_or_default();
        let mut held = 0;
        if let Some((s, r)) = self.live.and_then(|l| Bulk::halves(cx, l)) {
            s.finish(now);
            total.add(&merge(s, r));
            held = r.ooo.iter().map(|&(l, h)| h - l).sum::<u64>();
        }
        self.base = Some(Box::new((total, held)));
    }

    fn finish(&mut self, cx: &mut Ctx, rec: &mut Records) {
        let mut total = self.total.as_deref().cloned().unwrap_or_default();
        if let Some((s, r)) = self.live.and_then(|l| Bulk::halves(cx, l)) {
            s.finish(rec.end);
            let tr = self.transfers.last_mut().expect("a transfer is running");
            tr.fill(s, r, None);
            total.add(&merge(s, r));
        }
        let (counted, held) = match self.base.as_deref() {
            Some((b, held)) => (total.since(b), *held),
            None => (total, 0),
        };
        let mut row = ConnRow::measured(self.index as usize, &self.flows[self.index as usize], rec.nodes, &counted, &self.transfers, rec.from, rec.end);
        if held > 0 && counted.bytes_delivered > 0 {
            // Data held out of order at the receiver when the warmup ended had crossed the path
            // before it: `bytes_delivered` counts it when the hole fills (so that the counters
            // of a run with warmup W are those of the whole run less those of its prefix up to
            // W), but goodput is the bytes that arrived after the warmup; else a hole filled just
            // after it counted a whole held window in the measured interval, above the link's
            // rate.
            let share = counted.bytes_delivered.saturating_sub(held) as f64 / counted.bytes_delivered as f64;
            row.goodput_bps *= share;
        }
        rec.connections.push(row);
        // Moved out with their buffer (`append` would keep each flow's room allocated while the
        // link rows are built).
        rec.transfers.extend(std::mem::take(&mut self.transfers));
    }
}
