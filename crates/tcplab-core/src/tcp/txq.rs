//! The transmit record: one entry per segment in flight (its sequence range, when it was first
//! and last sent, how often, whether it is SACKed or marked lost, and the delivery-rate snapshot
//! taken when it was last sent). It is what RACK needs (RFC 8985 §6.1: the most recently sent
//! segment among those an ACK delivers, and its transmission time) and what the delivery-rate
//! estimator needs (draft-cheng-iccrg-delivery-rate-estimation; Linux `tcp_rate.c`).
//!
//! The sender keeps it (`SenderCore::transmit` records every transmission, the ACK processing
//! marks SACKed records and prunes cumulatively acknowledged ones) and hands what an ACK yields to
//! the controller in its `AckSample` (`rate`, `rack`). Nothing here changes what is sent: it is
//! bookkeeping. A `VecDeque` of small `Copy` records: no allocation per packet once the queue has
//! grown to the window. Sequence space is counted as sent (the FIN takes one).
//!
//! This module imports nothing of the sender (only the sample types of `cc/`), so no circle.

use super::cc::{RackSample, RateSample};
use crate::units::Time;
use std::collections::VecDeque;

/// The delivery-rate snapshot a segment carries from its (last) transmission
/// (draft-cheng-iccrg-delivery-rate-estimation §3.2 `SendPacket`; Linux `tcp_rate_skb_sent()`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RateSnapshot {
    /// C.delivered when the segment was sent (`tx.delivered`).
    pub delivered: u64,
    /// C.delivered_time when it was sent (`tx.delivered_mstamp`).
    pub delivered_at: Time,
    /// C.first_sent_time when it was sent (`tx.first_tx_mstamp`).
    pub first_tx_at: Time,
}

/// One segment in flight.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TxRecord {
    /// Sequence range [start, end) as first sent.
    pub start: u64,
    pub end: u64,
    /// First and most recent transmission.
    pub first_sent: Time,
    pub last_sent: Time,
    /// Transmissions so far (1: never retransmitted).
    pub tx: u32,
    /// The receiver has SACKed all of it.
    pub sacked: bool,
    /// Loss detection has declared it lost (a fast retransmit of it, a timeout); a later
    /// retransmission does not clear it (Linux keeps `TCPCB_LOST` beside `TCPCB_SACKED_RETRANS`).
    pub lost: bool,
    /// Retransmitted and not yet delivered or declared lost again (Linux `TCPCB_SACKED_RETRANS`,
    /// counted in `retrans_out`): such a copy is in flight on top of the original.
    pub retrans: bool,
    /// The connection was application-limited when it was last sent (`tx.is_app_limited`).
    pub app_limited: bool,
    /// The rest of the rate snapshot taken when it was last sent (64 bytes a record in all).
    pub snap: RateSnapshot,
}

/// The most recently sent record the ACK being processed has delivered so far: the draft's
/// `UpdateRateSample(P)` (§3.3) keeps its snapshot, RFC 8985 §6.1 step 2 its send time and end.
#[derive(Clone, Copy, Debug)]
struct Newest {
    last_sent: Time,
    end: u64,
    retransmitted: bool,
    app_limited: bool,
    snap: RateSnapshot,
}

impl Newest {
    #[inline]
    fn of(r: &TxRecord) -> Newest {
        Newest { last_sent: r.last_sent, end: r.end, retransmitted: r.tx > 1, app_limited: r.app_limited, snap: r.snap }
    }

    /// RFC 8985 `RACK_sent_after`: `r` was sent after this one (later, or at the same time with a
    /// higher end sequence); Linux 6.x `tcp_rate_skb_delivered()` orders the same way.
    #[inline]
    fn older_than(&self, r: &TxRecord) -> bool {
        r.last_sent > self.last_sent || (r.last_sent == self.last_sent && r.end > self.end)
    }
}

/// What the ACK being processed yields for Linux's RTT samples (`tcp_clean_rtx_queue()` and
/// `tcp_sacktag_one()`, net/ipv4/tcp_input.c): first send times of the records it delivers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AckRtt {
    /// `first_ackt` / `last_ackt`: the oldest and the newest cumulatively acknowledged record
    /// that was never retransmitted nor SACKed before (their first and only send time).
    pub first_ackt: Option<Time>,
    pub last_ackt: Option<Time>,
    /// FLAG_RETRANS_DATA_ACKED: a cumulatively acknowledged record had been retransmitted
    /// (Karn: no sequence sample from this ACK).
    pub retrans_acked: bool,
    /// Records cumulatively acknowledged whole (`pkts_acked`).
    pub acked_records: u32,
    /// `first_sackt` / `last_sackt`: the send times of the lowest and the highest newly SACKed
    /// record never retransmitted (the kernel tags SACKed skbs in sequence order), with their
    /// start sequence.
    pub first_sackt: Option<(u64, Time)>,
    pub last_sackt: Option<(u64, Time)>,
}

#[derive(Debug)]
pub struct TxQueue {
    q: VecDeque<TxRecord>,
    /// C.delivered: sequence space delivered (cumulatively acknowledged or SACKed), each byte once.
    delivered: u64,
    /// C.delivered_time: when `delivered` last grew.
    delivered_at: Time,
    /// C.first_sent_time: the send time of the most recently delivered record (start of the
    /// present send interval).
    first_tx_at: Time,
    /// C.app_limited: `delivered` at which the application-limited period ends (0: not limited).
    app_limited: u64,
    /// Sequence space marked lost so far (Linux `tp->lost`), each record once.
    lost: u64,
    /// The cumulative point the queue has been pruned to.
    una: u64,
    /// Of the ACK being processed (reset by `end_ack`).
    newest: Option<Newest>,
    /// Of the ACK being processed: the lowest start of a newly delivered record that was never
    /// retransmitted (Linux's `state->reord` in `tcp_sacktag_one` and `tcp_clean_rtx_queue`);
    /// `u64::MAX` when none (reset by `take_reord`).
    reord: u64,
    /// Of the ACK being processed: its RTT sources (taken by `take_rtt`, reset by `end_ack`).
    rtt: AckRtt,
    /// Of the ACK being processed: RACK's state as Linux's calls of `tcp_rack_advance` leave it
    /// (reset by `end_ack`), with the start of the SACKed record that gave its RTT.
    rack: Option<RackSample>,
    rack_rtt_from: u64,
    /// The smallest RTT measured before this ACK (Linux `tcp_min_rtt`), for RACK's rule on
    /// retransmissions delivered too soon (`set_min_rtt`).
    min_rtt: Option<Time>,
    /// The records' marks summed (`Tally`), kept as the marks change, so that what is in flight
    /// and whether anything is lost or retransmitted are read without a walk of the queue (Linux
    /// keeps `sacked_out`, `lost_out` and `retrans_out` the same way for `tcp_packets_in_flight`).
    tally: Tally,
}

/// What the records' marks add up to: bytes in flight as Linux's `tcp_packets_in_flight()`
/// counts them (`packets_out − (sacked_out + lost_out) + retrans_out`, in whole records' bytes),
/// records lost and not SACKed (`lost_out`), of those the ones not retransmitted (what
/// `tcp_xmit_retransmit_queue` would send), and records with a retransmission in flight
/// (`retrans_out`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Tally {
    in_flight: u64,
    lost: u64,
    lost_unsent: u64,
    retrans: u64,
}

impl Tally {
    #[inline]
    fn of(r: &TxRecord) -> Tally {
        let len = r.end - r.start;
        let open = !r.sacked && !r.lost;
        Tally {
            in_flight: if open { len } else { 0 } + if r.retrans { len } else { 0 },
            lost: (r.lost && !r.sacked) as u64,
            lost_unsent: (r.lost && !r.sacked && !r.retrans) as u64,
            retrans: r.retrans as u64,
        }
    }

    /// Multiplicity of a record's bytes in `in_flight` (0, 1 or 2).
    #[inline]
    fn weight(r: &TxRecord) -> u64 {
        (!r.sacked && !r.lost) as u64 + r.retrans as u64
    }

    #[inline]
    fn add(&mut self, t: Tally) {
        self.in_flight += t.in_flight;
        self.lost += t.lost;
        self.lost_unsent += t.lost_unsent;
        self.retrans += t.retrans;
    }

    #[inline]
    fn sub(&mut self, t: Tally) {
        self.in_flight -= t.in_flight;
        self.lost -= t.lost;
        self.lost_unsent -= t.lost_unsent;
        self.retrans -= t.retrans;
    }

    /// `before` replaced by what `r` is now.
    #[inline]
    fn change(&mut self, before: Tally, r: &TxRecord) {
        let after = Tally::of(r);
        if after != before {
            self.sub(before);
            self.add(after);
        }
    }
}

/// Linux `tcp_rack_advance()` (net/ipv4/tcp_recovery.c; RFC 8985 §6.2 step 2), called for each
/// record an ACK delivers in the kernel's order (`tcp_sacktag_one` for the newly SACKed ones in
/// sequence order, then `tcp_clean_rtx_queue` for the cumulatively acknowledged ones): RACK.rtt is
/// the RTT of the *last* call, RACK.xmit_ts / end_seq the most recently sent record. "If the sacked
/// packet was retransmitted, it's ambiguous whether the retransmission or the original (or the
/// prior retransmission) was sacked": a retransmitted record delivered sooner than min_rtt after
/// it was sent is not a call at all.
/// Returns whether the record counted (was not such a retransmission).
#[inline]
fn rack_advance(rack: &mut Option<RackSample>, min_rtt: Option<Time>, now: Time, r: &TxRecord) -> bool {
    let rtt = now.saturating_sub(r.last_sent);
    // tcp_min_rtt() is ~0U before any sample: every retransmission is then ambiguous.
    if r.tx > 1 && min_rtt.is_none_or(|m| rtt < m) {
        return false;
    }
    let s = rack.get_or_insert(RackSample { xmit_ts: r.last_sent, end_seq: r.end, retransmitted: r.tx > 1, rtt });
    s.rtt = rtt;
    // tcp_skb_sent_after(xmit_time, rack.mstamp, end_seq, rack.end_seq).
    if r.last_sent > s.xmit_ts || (r.last_sent == s.xmit_ts && r.end > s.end_seq) {
        s.xmit_ts = r.last_sent;
        s.end_seq = r.end;
        s.retransmitted = r.tx > 1;
    }
    true
}

impl Default for TxQueue {
    fn default() -> Self {
        TxQueue { q: VecDeque::new(), delivered: 0, delivered_at: 0, first_tx_at: 0, app_limited: 0, una: 0, newest: None, reord: u64::MAX, lost: 0, rtt: AckRtt::default(), rack: None, rack_rtt_from: 0, min_rtt: None, tally: Tally::default() }
    }
}

impl TxQueue {
    pub fn records(&self) -> impl Iterator<Item = &TxRecord> {
        self.q.iter()
    }

    /// Visit the records in sequence order, for a loss detector that marks them (RACK,
    /// `loss/rack.rs`) or the RTO, until `f` breaks; the marks' tally follows what `f` changes.
    pub fn for_each_mut(&mut self, mut f: impl FnMut(&mut TxRecord) -> std::ops::ControlFlow<()>) {
        let mut tally = self.tally;
        for r in self.q.iter_mut() {
            let before = Tally::of(r);
            let flow = f(r);
            tally.change(before, r);
            if flow.is_break() {
                break;
            }
        }
        self.tally = tally;
    }

    /// Bytes in flight as the marks count them (Linux `tcp_packets_in_flight()`, in bytes): not
    /// SACKed and not lost, plus retransmissions outstanding; the head's part below `una` left
    /// out. Equal to walking every record with `r.end − max(r.start, una)` for each mark.
    #[inline]
    pub fn in_flight(&self, una: u64) -> u64 {
        let mut n = self.tally.in_flight;
        if let Some(h) = self.q.front() {
            if h.start < una {
                debug_assert!(self.q.get(1).is_none_or(|r| r.start >= una), "one record at most straddles snd_una");
                n -= (una.min(h.end) - h.start) * Tally::weight(h);
            }
        }
        n
    }

    /// A record is lost and not SACKed (Linux `lost_out > 0`).
    #[inline]
    pub fn any_lost(&self) -> bool {
        self.tally.lost > 0
    }

    /// A record has a retransmission in flight (Linux `retrans_out > 0`).
    #[inline]
    pub fn any_retrans(&self) -> bool {
        self.tally.retrans > 0
    }

    /// The first record ending beyond `seq` (the one holding `seq`, if any holds it).
    #[inline]
    pub fn record_after(&self, seq: u64) -> Option<&TxRecord> {
        self.q.get(self.q.partition_point(|r| r.end <= seq))
    }

    /// The first record ending beyond `from` that is lost, not SACKed and not retransmitted
    /// (Linux `tcp_xmit_retransmit_queue`'s next skb), without a walk when there is none.
    #[inline]
    pub fn next_lost(&self, from: u64) -> Option<&TxRecord> {
        if self.tally.lost_unsent == 0 {
            return None;
        }
        let i = self.q.partition_point(|r| r.end <= from);
        self.q.range(i..).find(|r| r.lost && !r.retrans && !r.sacked)
    }

    /// Every retransmission in flight deemed lost (the RTO, `tcp_enter_loss`).
    pub fn clear_retrans(&mut self) {
        if self.tally.retrans == 0 {
            return;
        }
        self.for_each_mut(|r| {
            r.retrans = false;
            std::ops::ControlFlow::Continue(())
        });
    }

    /// No record lost any more (Linux `tcp_undo_cwnd_reduction(sk, true)`: "sacked &=
    /// ~TCPCB_LOST" on every skb, lost_out = 0). The bytes counted lost so far stay counted.
    pub fn clear_lost(&mut self) {
        if self.tally.lost == 0 {
            return;
        }
        self.for_each_mut(|r| {
            r.lost = false;
            std::ops::ControlFlow::Continue(())
        });
    }

    /// The lowest start of a record newly delivered by the ACK being processed that was never
    /// retransmitted (`u64::MAX`: none), and reset it: a delivery below the highest SACKed
    /// sequence of such a record is reordering (Linux `tcp_check_sack_reordering`).
    pub fn take_reord(&mut self) -> u64 {
        std::mem::replace(&mut self.reord, u64::MAX)
    }

    /// `take_reord` without the reset: the lowest start of a never-retransmitted record the ACK
    /// being processed delivered so far (`u64::MAX`: none).
    pub fn reord(&self) -> u64 {
        self.reord
    }

    /// Linux's `tcp_sacktag_walk` → `tcp_match_skb_to_sack`: a SACK block tags only the segments
    /// it covers whole (a multi-segment skb is split at a block's edge only on an MSS boundary,
    /// rounded so that the block covers whole MSSes; a one-segment skb is tagged only if the
    /// block covers all of it). So [l, r) shrinks to the records lying entirely inside it; None
    /// when it holds no whole record.
    pub fn whole_records(&self, l: u64, r: u64) -> Option<(u64, u64)> {
        let i = self.q.partition_point(|x| x.start < l);
        let j = self.q.partition_point(|x| x.end <= r);
        if i >= j {
            return None;
        }
        let (a, b) = (self.q[i].start, self.q[j - 1].end);
        (a < b).then_some((a, b))
    }

    /// The smallest RTT measured so far (Linux `tcp_min_rtt`), set before an ACK's records are
    /// processed: RACK ignores a retransmission delivered sooner than this (`tcp_rack_advance`).
    pub fn set_min_rtt(&mut self, min_rtt: Option<Time>) {
        self.min_rtt = min_rtt;
    }

    /// The first record in sequence order (the head of Linux's retransmission queue).
    pub fn head(&self) -> Option<&TxRecord> {
        self.q.front()
    }

    /// The last record in sequence order.
    pub fn tail(&self) -> Option<&TxRecord> {
        self.q.back()
    }

    pub fn len(&self) -> usize {
        self.q.len()
    }

    pub fn is_empty(&self) -> bool {
        self.q.is_empty()
    }

    /// C.delivered.
    pub fn delivered(&self) -> u64 {
        self.delivered
    }

    /// Sequence space marked lost so far (Linux `tp->lost`).
    pub fn lost(&self) -> u64 {
        self.lost
    }

    /// Count `bytes` newly marked lost by a detector that walks the records itself (RACK).
    pub fn add_lost(&mut self, bytes: u64) {
        self.lost += bytes;
    }

    /// The application-limited mark (0: the connection is not application-limited).
    pub fn app_limited_until(&self) -> u64 {
        self.app_limited
    }

    #[inline]
    fn snapshot(&self) -> RateSnapshot {
        RateSnapshot { delivered: self.delivered, delivered_at: self.delivered_at, first_tx_at: self.first_tx_at }
    }

    /// A transmission of [seq, end) at `now`. `retx`: below the highest sequence sent (the
    /// records it covers are updated); otherwise a new record. `idle`: nothing was in flight
    /// before it (draft §3.2: "if C.inflight == 0, C.first_sent_time = C.delivered_time = now";
    /// Linux `tcp_rate_skb_sent()` when `packets_out` is 0).
    #[inline]
    pub fn on_send(&mut self, now: Time, seq: u64, end: u64, retx: bool, idle: bool) {
        if idle {
            self.first_tx_at = now;
            self.delivered_at = now;
        }
        let snap = self.snapshot();
        let app_limited = self.app_limited != 0;
        if !retx {
            let r = TxRecord { start: seq, end, first_sent: now, last_sent: now, tx: 1, sacked: false, lost: false, retrans: false, app_limited, snap };
            self.tally.add(Tally::of(&r));
            self.q.push_back(r);
            return;
        }
        let i = self.q.partition_point(|r| r.end <= seq);
        let mut tally = self.tally;
        for r in self.q.range_mut(i..) {
            if r.start >= end {
                break;
            }
            let before = Tally::of(r);
            r.last_sent = now;
            r.tx += 1;
            r.retrans = !r.sacked;
            r.app_limited = app_limited;
            r.snap = snap;
            tally.change(before, r);
        }
        self.tally = tally;
    }

    /// The receiver SACKed [a, b) (a merged scoreboard range): records wholly inside it that were
    /// not SACKed before are delivered.
    pub fn on_sacked(&mut self, now: Time, a: u64, b: u64) {
        let i = self.q.partition_point(|r| r.end <= a);
        let (mut n, mut bytes) = (0u32, 0u64);
        let mut tally = self.tally;
        for r in self.q.range_mut(i..) {
            if r.start >= b {
                break;
            }
            if r.sacked || r.start < a || r.end > b {
                continue;
            }
            let before = Tally::of(r);
            r.sacked = true;
            r.retrans = false;
            tally.change(before, r);
            if r.tx == 1 {
                self.reord = self.reord.min(r.start);
            }
            bytes += r.end - r.start.max(self.una);
            n += 1;
            // tcp_sacktag_one(): "New sack for not retransmitted frame": first_sackt is the
            // first such skb in sequence order, last_sackt the last.
            if r.tx == 1 {
                let t = (r.start, r.first_sent);
                if self.rtt.first_sackt.is_none_or(|f| t.0 < f.0) {
                    self.rtt.first_sackt = Some(t);
                }
                if self.rtt.last_sackt.is_none_or(|l| t.0 > l.0) {
                    self.rtt.last_sackt = Some(t);
                }
            }
            // The draft's `UpdateRateSample(P)`, RFC 8985 §6.1 step 2: keep the newest.
            if self.newest.is_none_or(|k| k.older_than(r)) {
                self.newest = Some(Newest::of(r));
            }
            // tcp_sacktag_write_queue() sorts the blocks, so the kernel's last call is for the
            // highest newly SACKed record whatever the blocks' order in the option: a lower
            // record met after a higher one may move RACK.xmit_ts but keeps RACK.rtt.
            let prior_rtt = self.rack.map(|k| k.rtt);
            if rack_advance(&mut self.rack, self.min_rtt, now, r) {
                if r.start >= self.rack_rtt_from {
                    self.rack_rtt_from = r.start;
                } else if let (Some(k), Some(t)) = (self.rack.as_mut(), prior_rtt) {
                    k.rtt = t;
                }
            }
        }
        self.tally = tally;
        if n > 0 {
            self.delivered += bytes;
            self.delivered_at = now;
            // "C.first_sent_time = P.sent_time": the next send interval starts at the newest.
            self.first_tx_at = self.newest.map_or(self.first_tx_at, |k| k.last_sent);
        }
    }

    /// A cumulative ACK up to `una`: records below it are delivered (those not SACKed before) and
    /// dropped; a record partly below it stays until the rest is acknowledged.
    pub fn on_cum_ack(&mut self, now: Time, una: u64) {
        if una <= self.una {
            return;
        }
        let old = self.una;
        self.una = una;
        let (mut bytes, mut newest) = (0, self.newest);
        while let Some(r) = self.q.front() {
            if r.start >= una {
                break;
            }
            if !r.sacked {
                bytes += r.end.min(una) - r.start.max(old);
                if r.tx == 1 {
                    self.reord = self.reord.min(r.start);
                }
            }
            if r.end > una {
                break;
            }
            // tcp_clean_rtx_queue(): an ever-retransmitted skb sets FLAG_RETRANS_DATA_ACKED;
            // one neither retransmitted nor SACKed gives first_ackt (the first such) and
            // last_ackt (the last).
            self.rtt.acked_records += 1;
            if r.tx > 1 {
                self.rtt.retrans_acked = true;
            } else if !r.sacked {
                self.rtt.first_ackt.get_or_insert(r.first_sent);
                self.rtt.last_ackt = Some(r.first_sent);
            }
            // The draft's `UpdateRateSample(P)`, RFC 8985 §6.1 step 2: keep the newest.
            if !r.sacked && newest.is_none_or(|k| k.older_than(r)) {
                newest = Some(Newest::of(r));
            }
            // tcp_clean_rtx_queue() runs after the SACK tagging: these calls come last.
            if !r.sacked {
                rack_advance(&mut self.rack, self.min_rtt, now, r);
            }
            self.tally.sub(Tally::of(r));
            self.q.pop_front();
        }
        if bytes > 0 {
            self.delivered += bytes;
            self.delivered_at = now;
            // "C.first_sent_time = P.sent_time".
            if let Some(k) = newest {
                self.first_tx_at = k.last_sent;
            }
            self.newest = newest;
        }
    }

    /// The end of an ACK's processing: the draft's `GenerateRateSample` (§3.3; Linux
    /// `tcp_rate_gen()`) and RFC 8985's newest delivered segment. `min_rtt`: the smallest RTT
    /// measured so far; an interval shorter than it is not a valid sample ("rs.interval <
    /// min_rtt: discard", which Linux marks with interval −1).
    pub fn end_ack(&mut self, min_rtt: Option<Time>) -> (Option<RateSample>, Option<RackSample>) {
        let newest = self.newest.take();
        let rack = self.rack.take();
        self.rack_rtt_from = 0;
        self.rtt = AckRtt::default();
        // draft §3.3: "Clear app-limited field if bubble is ACKed and gone."
        if self.app_limited != 0 && self.delivered > self.app_limited {
            self.app_limited = 0;
        }
        let Some(r) = newest else { return (None, rack) };
        let p = r.snap;
        let send_elapsed = r.last_sent.saturating_sub(p.first_tx_at);
        let ack_elapsed = self.delivered_at.saturating_sub(p.delivered_at);
        // "the sample's interval is the larger of the send and ACK phases" (draft §2.3).
        let interval = send_elapsed.max(ack_elapsed);
        let valid = interval > 0 && min_rtt.is_none_or(|m| interval >= m);
        let rate = valid.then_some(RateSample { delivered: self.delivered - p.delivered, interval, app_limited: r.app_limited, retransmitted: r.retransmitted, prior_delivered: p.delivered });
        (rate, rack)
    }

    /// The RTT sources of the ACK being processed so far (before `end_ack`).
    #[inline]
    pub fn take_rtt(&mut self) -> AckRtt {
        std::mem::take(&mut self.rtt)
    }

    /// The draft's `CheckIfApplicationLimited` (§3.4; Linux `tcp_rate_check_app_limited()`): the
    /// sender has less than a segment to send and the window is not full, so the coming samples
    /// measure the application, not the path: they are marked until what is in flight now has
    /// been delivered.
    #[inline]
    pub fn check_app_limited(&mut self, in_flight: u64) {
        self.app_limited = (self.delivered + in_flight).max(1);
    }

    /// Declare the records in [a, b) lost (not those SACKed), as Linux's `tcp_mark_skb_lost`
    /// does: a record already lost whose retransmission was in flight has lost that too (its
    /// `retrans` mark is cleared, so it is retransmitted again).
    pub fn mark_lost(&mut self, a: u64, b: u64) {
        let i = self.q.partition_point(|r| r.end <= a);
        let mut tally = self.tally;
        for r in self.q.range_mut(i..) {
            if r.start >= b {
                break;
            }
            let before = Tally::of(r);
            if mark_record_lost(r) {
                self.lost += r.end - r.start;
            }
            tally.change(before, r);
        }
        self.tally = tally;
    }
}

/// Linux `tcp_mark_skb_lost()` (net/ipv4/tcp_input.c) on one record: nothing if SACKed; if
/// already lost, its retransmission is lost too ("Account for retransmits that are lost again":
/// `TCPCB_SACKED_RETRANS` cleared); otherwise marked lost (`TCPCB_LOST`), a retransmission in
/// flight (a tail loss probe's) staying counted. Returns whether it was newly marked lost.
pub fn mark_record_lost(r: &mut TxRecord) -> bool {
    if r.sacked {
        return false;
    }
    if r.lost {
        r.retrans = false;
        false
    } else {
        r.lost = true;
        true
    }
}


#[cfg(test)]
mod tests {
    use super::*;

    /// What the tally stands for, by a walk of every record (the sums `TxQueue` keeps instead).
    fn walked(t: &TxQueue, una: u64) -> (u64, bool, bool, Option<u64>) {
        let mut in_flight = 0;
        for r in t.records() {
            let len = r.end - r.start.max(una);
            if !r.sacked && !r.lost {
                in_flight += len;
            }
            if r.retrans {
                in_flight += len;
            }
        }
        let lost = t.records().any(|r| r.lost && !r.sacked);
        let retrans = t.records().any(|r| r.retrans);
        let next = t.records().find(|r| r.end > una && r.lost && !r.retrans && !r.sacked).map(|r| r.start);
        (in_flight, lost, retrans, next)
    }

    proptest::proptest! {
        /// The tally kept as the marks change equals a walk of the records after any sequence of
        /// sends, retransmissions, SACKs, cumulative ACKs, loss marks (by range and by RACK's
        /// visit) and an RTO's clearing of retransmissions.
        #[test]
        fn the_tally_equals_a_walk_of_the_records(ops in proptest::collection::vec((0u8..7, 0u64..40, 1u64..6), 1..120)) {
            const MSS: u64 = 10;
            let mut t = TxQueue::default();
            let (mut una, mut nxt, mut now) = (1u64, 1u64, 0u64);
            t.on_cum_ack(0, 1);
            for (op, a, n) in ops {
                now += 1;
                let a = una + a * MSS / 2;
                let b = a + n * MSS;
                match op {
                    0 | 1 => {
                        for _ in 0..n {
                            t.on_send(now, nxt, nxt + MSS, false, false);
                            nxt += MSS;
                        }
                    }
                    2 => if a < nxt { t.on_send(now, a, b.min(nxt), true, false) },
                    3 => t.on_sacked(now, a, b.min(nxt)),
                    4 => {
                        let u = (una + (a - una) / 3).min(nxt);
                        t.on_cum_ack(now, u);
                        una = una.max(u);
                    }
                    5 => t.mark_lost(a, b),
                    _ => {
                        if n == 5 {
                            t.clear_retrans();
                        } else {
                            t.for_each_mut(|r| {
                                if r.start >= a {
                                    mark_record_lost(r);
                                }
                                if r.end >= b { std::ops::ControlFlow::Break(()) } else { std::ops::ControlFlow::Continue(()) }
                            });
                        }
                    }
                }
                let (in_flight, lost, retrans, next) = walked(&t, una);
                proptest::prop_assert_eq!(t.in_flight(una), in_flight);
                proptest::prop_assert_eq!(t.any_lost(), lost);
                proptest::prop_assert_eq!(t.any_retrans(), retrans);
                proptest::prop_assert_eq!(t.next_lost(una).map(|r| r.start), next);
                t.end_ack(None);
            }
        }
    }

    /// Linux `tcp_rack_advance` as `tcp_sacktag_one` then `tcp_clean_rtx_queue` call it: RACK.rtt
    /// is the last call's (the cumulatively acknowledged records come after the SACKed ones, in
    /// sequence order), RACK.xmit_ts the most recently sent record's; a retransmission delivered
    /// sooner than min_rtt does not count.
    #[test]
    fn rack_takes_the_rtt_of_the_kernels_last_call() {
        let mut t = TxQueue::default();
        t.on_cum_ack(0, 1);
        for k in 0..4u64 {
            t.on_send(10, 1 + k * 100, 101 + k * 100, false, k == 0);
        }
        // Segment 1 resent at 20; min_rtt 10.
        t.on_send(20, 1, 101, true, false);
        t.set_min_rtt(Some(10));
        // The ACK at 32 acknowledges segments 1 (the retransmission, RTT 12) and 2 (RTT 22).
        t.on_cum_ack(32, 201);
        let (_, rack) = t.end_ack(Some(10));
        assert_eq!(rack, Some(RackSample { xmit_ts: 20, end_seq: 101, retransmitted: true, rtt: 22 }));
        // SACK blocks in the option's order (higher first): RACK.rtt is still the highest
        // record's, as the kernel sorts them.
        t.on_send(40, 201, 301, true, false);
        t.on_sacked(45, 301, 401);
        t.on_sacked(45, 201, 301);
        let (_, rack) = t.end_ack(Some(10));
        // Segment 3's retransmission (sent at 40, delivered 5 later, < min_rtt) does not count.
        assert_eq!(rack, Some(RackSample { xmit_ts: 10, end_seq: 401, retransmitted: false, rtt: 35 }));
    }

    #[test]
    fn records_follow_sends_sacks_and_cumulative_acks() {
        let mut t = TxQueue::default();
        t.on_cum_ack(0, 1);
        for k in 0..4u64 {
            t.on_send(10 + k, 1 + k * 100, 101 + k * 100, false, k == 0);
        }
        assert_eq!(t.len(), 4);
        // Segment 2 resent at 50: the record keeps its range, counts the transmission.
        t.on_send(50, 101, 201, true, false);
        let r = t.records().nth(1).unwrap();
        assert_eq!((r.first_sent, r.last_sent, r.tx), (11, 50, 2));
        // A SACK of segment 3 delivers it; the newest delivered is segment 3, sent at 12.
        t.on_sacked(60, 201, 301);
        assert_eq!(t.delivered(), 100);
        let (_, rack) = t.end_ack(None);
        assert_eq!(rack, Some(RackSample { xmit_ts: 12, end_seq: 301, retransmitted: false, rtt: 48 }));
        // The cumulative ACK of 1..301: segments 1 and 2 delivered now (3 was already), pruned.
        t.on_cum_ack(70, 301);
        assert_eq!(t.delivered(), 300);
        assert_eq!(t.len(), 1);
        let (rate, rack) = t.end_ack(None);
        // The most recently sent delivered record is segment 2's retransmission (at 50); no
        // min_rtt is known, so the retransmission is ambiguous and only segment 1 counts
        // (tcp_rack_advance).
        assert_eq!(rack, Some(RackSample { xmit_ts: 10, end_seq: 101, retransmitted: false, rtt: 60 }));
        let rate = rate.unwrap();
        // Its snapshot at 50: delivered 0 at 10, first_sent 10; now delivered 300 at 70.
        assert_eq!((rate.delivered, rate.interval, rate.retransmitted), (300, 60, true));
    }

    #[test]
    fn rate_sample_is_delivered_over_the_longer_phase() {
        // draft §2.3: 10 segments of 1000 B sent 1 ms apart from t = 0, each ACKed 100 ms later.
        let mut t = TxQueue::default();
        t.on_cum_ack(0, 1);
        let ms = 1_000_000;
        for k in 0..10u64 {
            t.on_send(k * ms, 1 + k * 1000, 1001 + k * 1000, false, k == 0);
        }
        let mut last = None;
        for k in 0..10u64 {
            t.on_cum_ack(100 * ms + k * ms, 1001 + k * 1000);
            last = t.end_ack(Some(100 * ms)).0;
        }
        // The last ACK: its packet was sent at 9 ms with delivered 0 at 0 and first_sent 0, so the
        // interval is max(9 ms, 109 ms) and 10,000 B were delivered in it.
        let r = last.unwrap();
        assert_eq!((r.delivered, r.interval), (10_000, 109 * ms));
        assert!(!r.app_limited);
    }

    #[test]
    fn app_limited_mark_clears_once_the_bubble_is_delivered() {
        let mut t = TxQueue::default();
        t.on_cum_ack(0, 1);
        t.on_send(0, 1, 1001, false, true);
        t.check_app_limited(1000);
        t.on_send(1, 1001, 2001, false, false);
        t.on_cum_ack(10, 1001);
        t.end_ack(None);
        assert_eq!(t.app_limited_until(), 1000, "not past the bubble yet");
        t.on_cum_ack(11, 2001);
        let (rate, _) = t.end_ack(None);
        assert!(rate.unwrap().app_limited, "sent while application-limited");
        assert_eq!(t.app_limited_until(), 0);
    }

    #[test]
    fn marked_lost_records_skip_sacked_ones() {
        let mut t = TxQueue::default();
        t.on_cum_ack(0, 1);
        for k in 0..3u64 {
            t.on_send(k, 1 + k * 100, 101 + k * 100, false, k == 0);
        }
        t.on_sacked(5, 101, 201);
        t.mark_lost(1, 301);
        let lost: Vec<bool> = t.records().map(|r| r.lost).collect();
        assert_eq!(lost, [true, false, true]);
    }
}
