//! A FIFO link direction without transmission events: the *computed* FIFO.
//!
//! A direction with nothing but a DropTail queue (no loss element, drop or delay filter, RED, CE
//! marking or fq) and a transmitter of fixed rate decides everything about a packet when the
//! packet is offered: whether it is dropped (the packets still waiting then, against the limit),
//! when its transmission starts (the end of the one before it, or now), when it ends and when it
//! reaches the far end. No event is needed for the transmission's start or end; the packet goes
//! straight into the direction's in-flight FIFO with its arrival time (`Fabric::offer_computed`).
//!
//! What the direction *counts* (offered, sent and dropped packets, the queue's time integrals, the
//! queueing delay, the busy time) is counted whole when the decision is made: the queue's
//! integrals as the sum of each packet's wait, which is what the event-driven path's piecewise
//! account sums to. A decision with a part still to come (an offer later in the order of events
//! than the event that computed it, a transmission that starts later) leaves a record (`Rec`)
//! until all of it has happened, and a snapshot (the warmup's end, the run's end) takes out of
//! the counters what the records say had not happened by then (`LinkDir::counted_until`): what an
//! event-driven direction would have counted by then.
//!
//! The order of events: an offer takes its place as the event that offered it (an arrival's or a
//! send's), and a transmission's end takes the insertion number it is given when its packet is
//! offered (the event-driven path gives it when the transmission starts; the two differ only when
//! two things happen in the same nanosecond, docs/determinism.md).
//!
//! A *chained* direction (`Fabric::arm`) is one whose every packet comes from one other direction:
//! its offers are computed when that direction computes the packet's arrival, without the arrival
//! event, in the order the feeding direction sends them, which is the order of their arrival times.

use super::link::{LinkDir, LinkDirStats};
pub use super::link::{COMPUTED, EVENTS};
use crate::units::Time;
use std::collections::VecDeque;

/// A decision with a part still to come: an offer later in the order of events than the event
/// that computed it (a chained direction's), or a transmission that starts later (a packet that
/// waits). Kept until all of it has happened, to take out of the counters what has not happened
/// yet at a snapshot (`LinkDir::counted_until`).
#[derive(Clone, Copy, Debug)]
struct Rec {
    at: Time,
    seq: u64,
    start: Time,
    sseq: u64,
    ser: Time,
    bytes: u32,
    /// Packets waiting once it joined them (0: it did not wait).
    qlen: u32,
    udp: bool,
    dropped: bool,
}

impl Rec {
    /// Its last part's place in the order of events: the transmission's start, or the offer of
    /// a dropped packet (whose record has its offer as its start).
    #[inline]
    fn done(&self) -> (Time, u64) {
        (self.start, self.sseq)
    }
}

/// Memory a computed direction holds for one packet at most: a waiting entry and a record
/// (`fabric::PACKET_BYTES` counts it in what a held packet costs).
pub const HELD_BYTES: usize = std::mem::size_of::<Rec>() + std::mem::size_of::<(Time, u64, u32)>();

/// The state of a computed direction (`Fabric` keeps one a direction, beside it): the packets
/// waiting as the latest offer found them
/// (transmission start, its place in the order of events, bytes), and the decisions with a part
/// still to come.
#[derive(Default, Debug)]
pub struct VFifo {
    waiting: VecDeque<(Time, u64, u32)>,
    wait_bytes: u64,
    recs: VecDeque<Rec>,
}

impl LinkDir {
    /// Offer a packet of `bytes` at (`at`, `seq`) in the order of events to a computed direction:
    /// `None` if the queue drops it, else the time it reaches the far end. `now` is the event
    /// being processed (`at`, `seq` is it for an offer made by that event, later for a chained
    /// one); `reserve` gives the insertion number of the transmission's end. The counters count
    /// the whole decision at once, as the event-driven path counts it in parts when each happens
    /// (`admit`, `push`, `pop`, `start_tx`; the queue's integrals as the sum of each packet's
    /// wait); what is still to come is kept (`Rec`).
    #[inline]
    pub(in crate::net) fn offer_computed(&mut self, v: &mut VFifo, now: (Time, u64), at: Time, seq: u64, bytes: u32, udp: bool, reserve: impl FnOnce() -> u64) -> Option<Time> {
        // Forget the decisions that have happened in full.
        while let Some(r) = v.recs.front() {
            if r.done() > now {
                break;
            }
            self.stats.max_queue_pkts = self.stats.max_queue_pkts.max(r.qlen as u64);
            v.recs.pop_front();
        }
        // The waiting packets whose transmission started before this offer.
        while let Some(&(start, sseq, b)) = v.waiting.front() {
            if (start, sseq) >= (at, seq) {
                break;
            }
            v.wait_bytes -= b as u64;
            v.waiting.pop_front();
        }
        let present = (at, seq) <= now;
        let b64 = bytes as u64;
        self.stats.offered_pkts += 1;
        self.stats.offered_bytes += b64;
        let busy = self.busy_until > at || (self.busy_until == at && self.done_seq > seq);
        if busy {
            let waiting = v.waiting.len() as u64;
            if self.limit.packets.is_some_and(|l| waiting + 1 > l) || self.limit.bytes.is_some_and(|l| v.wait_bytes + b64 > l) {
                self.stats.dropped_queue += 1;
                self.stats.dropped_bytes += b64;
                if !present {
                    v.recs.push_back(Rec { at, seq, start: at, sseq: seq, ser: 0, bytes, qlen: 0, udp, dropped: true });
                }
                return None;
            }
        }
        let ser = self.ser_time(bytes);
        let (start, sseq, qlen) = if busy {
            v.waiting.push_back((self.busy_until, self.done_seq, bytes));
            v.wait_bytes += b64;
            (self.busy_until, self.done_seq, v.waiting.len() as u32)
        } else {
            (at, seq, 0)
        };
        let wait = start - at;
        if qlen > 0 || !present {
            v.recs.push_back(Rec { at, seq, start, sseq, ser, bytes, qlen, udp, dropped: false });
            if present {
                self.stats.max_queue_pkts = self.stats.max_queue_pkts.max(qlen as u64);
            }
        }
        self.count_sent(bytes, udp, ser, wait);
        self.stats.queue_pkt_ns += wait as u128;
        self.stats.queue_byte_ns += b64 as u128 * wait as u128;
        self.busy_until = start + ser;
        self.done_seq = reserve();
        Some(self.busy_until + self.delay)
    }

    /// A computed direction's counters as they stood at `until` (time, insertion number) in the
    /// order of events, with the drops counted after it: what the decisions kept say had not
    /// happened yet is taken out (an offer, a transmission's start, the rest of a wait). `close`
    /// (at least `until.0`): where the queue's integrals are closed, the packets waiting at
    /// `until` counted as waiting until then, as the event-driven path's `finish` counts them.
    pub(in crate::net) fn counted_until(&self, v: &VFifo, until: (Time, u64), close: Time) -> (LinkDirStats, u64) {
        let mut s = self.stats.clone();
        let mut later_drops = 0;
        for r in &v.recs {
            let (b64, wait) = (r.bytes as u64, r.start - r.at);
            let offered = (r.at, r.seq) <= until;
            if !offered {
                s.offered_pkts -= 1;
                s.offered_bytes -= b64;
                if r.dropped {
                    s.dropped_queue -= 1;
                    s.dropped_bytes -= b64;
                    later_drops += 1;
                    continue;
                }
            } else {
                s.max_queue_pkts = s.max_queue_pkts.max(r.qlen as u64);
                if (r.start, r.sseq) <= until {
                    continue;
                }
            }
            // Not started by then: neither sent nor done waiting (a packet offered by then waits
            // until `close`).
            s.sent_pkts -= 1;
            s.sent_bytes -= b64;
            if r.udp {
                s.udp_pkts -= 1;
                s.udp_bytes -= b64;
            }
            s.busy_ns -= r.ser as u128;
            s.queue_delay_sum -= wait as u128;
            let kept = if offered { close - r.at } else { 0 };
            s.queue_pkt_ns = s.queue_pkt_ns - wait as u128 + kept as u128;
            s.queue_byte_ns = s.queue_byte_ns - b64 as u128 * wait as u128 + b64 as u128 * kept as u128;
        }
        (s, later_drops)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::RngStream;
    use crate::net::link::QueueLimit;
    use crate::net::packet::{NodeId, Packet, Segment};
    use crate::net::Payload;

    fn dir(limit: Option<u64>) -> LinkDir {
        let limit = QueueLimit { packets: limit, bytes: None };
        let mut l = LinkDir::new("l".into(), NodeId(0), NodeId(1), 1_000_000, 5, limit, 0.0, RngStream::new(1, "l"));
        l.mode = COMPUTED;
        l
    }

    fn pkt(len: u32) -> Packet {
        Packet { body: Payload::Tcp(Segment { len, ..Default::default() }), ..Default::default() }
    }

    /// The event-driven path's counting (`admit`, `push`, `pop`, `start_tx`, `finish`) of 1000-B
    /// packets (8 ms at 1 Mb/s) offered at `offers` to a direction with a limit of 2 waiting,
    /// up to `end`, by hand.
    fn by_events(offers: &[Time], end: Time) -> LinkDirStats {
        let mut e = dir(Some(2));
        e.mode = EVENTS;
        let mut free_at = 0;
        let mut waiting: Vec<(Time, Time)> = Vec::new(); // (offered, starts)
        for &at in offers {
            // Transmissions that start by then.
            while let Some(&(offered, start)) = waiting.first() {
                if start > at {
                    break;
                }
                e.pop(start, |_| 1000);
                let mut q = pkt(960);
                q.enqueued_at = offered;
                e.start_tx(start, &q);
                waiting.remove(0);
            }
            let busy = free_at > at;
            let mut p = pkt(960);
            p.enqueued_at = at;
            if e.admit(&mut p, busy).is_err() {
                continue;
            }
            if busy {
                e.push(at, 0, 1000);
                waiting.push((at, free_at));
                free_at += 8_000_000;
            } else {
                e.start_tx(at, &p);
                free_at = at + 8_000_000;
            }
        }
        for (offered, start) in waiting {
            if start <= end {
                e.pop(start, |_| 1000);
                let mut q = pkt(960);
                q.enqueued_at = offered;
                e.start_tx(start, &q);
            }
        }
        e.finish(end);
        e.stats
    }

    /// Offers at 0, 1, 2, 3 ms (the fourth finds two waiting and the limit 2: dropped) and 30
    /// ms, each made by the event at its time: counted whole when decided, they stand at each
    /// cut as the event-driven path's counters stand then.
    #[test]
    fn counts_as_the_event_driven_path_counts() {
        let offers = [0, 1_000_000, 2_000_000, 3_000_000, 30_000_000];
        let mut c = dir(Some(2));
        let mut v = VFifo::default();
        let mut n = 100;
        let mut arrivals = Vec::new();
        for (i, &at) in offers.iter().enumerate() {
            let now = (at, i as u64 + 1);
            arrivals.push(c.offer_computed(&mut v, now, at, now.1, 1000, false, || {
                n += 1;
                n
            }));
            // A cut after each offer, and one while the next packet waits.
            for end in [at, at + 500_000] {
                if offers.get(i + 1).is_none_or(|&next| end < next) {
                    assert_eq!(c.counted_until(&v, (end, u64::MAX), end).0, by_events(&offers[..=i], end), "cut at {end} ns");
                }
            }
        }
        assert_eq!(arrivals, vec![Some(8_000_005), Some(16_000_005), Some(24_000_005), None, Some(38_000_005)]);
        let (s, later) = c.counted_until(&v, (40_000_000, u64::MAX), 40_000_000);
        assert_eq!(later, 0);
        assert_eq!(s.queue_delay_sum, 7_000_000 + 14_000_000);
        assert_eq!((s.offered_pkts, s.sent_pkts, s.dropped_queue, s.max_queue_pkts), (5, 4, 1, 2));
    }

    /// A run that stops between events (every application done, no duration) closes its
    /// integrals later than its last event: the packets waiting then count as waiting until the
    /// close, none of them sent, as the event-driven path's `finish` counts them.
    #[test]
    fn a_close_after_the_last_event_keeps_the_waiting_packets_waiting() {
        let offers = [0, 1_000_000, 2_000_000];
        let mut c = dir(None);
        let mut v = VFifo::default();
        let mut n = 100;
        for (i, &at) in offers.iter().enumerate() {
            let now = (at, i as u64 + 1);
            assert!(c
                .offer_computed(&mut v, now, at, now.1, 1000, false, || {
                    n += 1;
                    n
                })
                .is_some());
        }
        let (s, _) = c.counted_until(&v, (5_000_000, u64::MAX), 9_000_000);
        let mut e = dir(None);
        e.mode = EVENTS;
        let mut p = pkt(960);
        assert!(e.admit(&mut p, false).is_ok());
        e.start_tx(0, &p);
        for at in [1_000_000, 2_000_000] {
            assert!(e.admit(&mut p, true).is_ok());
            e.push(at, 0, 1000);
        }
        e.finish(9_000_000);
        assert_eq!(s, e.stats);
        assert_eq!((s.sent_pkts, s.queue_pkt_ns), (1, 15_000_000));
    }

    /// A chained direction's offers are decided before their time (all at the event 0 here):
    /// at any cut, what comes later is not counted yet, a drop after it included.
    #[test]
    fn a_chained_direction_counts_nothing_before_its_time() {
        let offers = [1_000_000, 2_000_000, 3_000_000, 4_000_000, 30_000_000];
        let mut c = dir(Some(2));
        let mut v = VFifo::default();
        let mut n = 100;
        for (i, &at) in offers.iter().enumerate() {
            assert!((c.offer_computed(&mut v, (0, 0), at, 10 + i as u64, 1000, false, || {
                n += 1;
                n
            }))
            .is_some() == (i != 3));
        }
        for end in [0, 1_000_000, 2_500_000, 3_500_000, 4_000_000, 9_000_000, 17_000_000, 29_000_000, 40_000_000] {
            let upto: Vec<Time> = offers.iter().copied().filter(|&t| t <= end).collect();
            let (s, later) = c.counted_until(&v, (end, u64::MAX), end);
            assert_eq!(s, by_events(&upto, end), "cut at {end} ns");
            assert_eq!(later, u64::from(end < 4_000_000), "cut at {end} ns");
        }
    }

    /// At the nanosecond a transmission ends, the order of events decides: an offer before the
    /// end's place finds the transmitter busy (and the queue full), one after it finds it free.
    #[test]
    fn a_tie_with_the_end_of_a_transmission_follows_the_order_of_events() {
        for (offer_seq, dropped) in [(5, true), (50, false)] {
            let mut c = dir(Some(1));
            let mut v = VFifo::default();
            let mut n = 10;
            let mut reserve = || {
                n += 1;
                n
            };
            assert!(c.offer_computed(&mut v, (0, 1), 0, 1, 1000, false, &mut reserve).is_some()); // ends at 8 ms, end's place 11
            assert!(c.offer_computed(&mut v, (0, 2), 0, 2, 1000, false, &mut reserve).is_some()); // waits; its start is (8 ms, 11)
            let r = c.offer_computed(&mut v, (8_000_000, offer_seq), 8_000_000, offer_seq, 1000, false, &mut reserve);
            assert_eq!(r.is_none(), dropped, "offer at insertion number {offer_seq}");
        }
    }
}
