//! Event queue ordered by (time, insertion sequence). Two events due at the same nanosecond run in
//! the order they were scheduled, so a run is a pure function of (scenario, seed). An event may
//! take its insertion number when it becomes known and enter the heap later (`reserve`,
//! `schedule_reserved`): the world keeps only the first packet in flight on each link direction
//! in the heap, the others waiting in the link's FIFO with their numbers, and the order of every
//! event is the same as if all had been in the heap (docs/determinism.md). Timers (connections'
//! and applications') wait in a heap of their own (`schedule_timer`), merged in the same order.

use super::heap::Heap;
use crate::units::Time;

/// An event's place in the order: (time, insertion number) packed into one integer, the time in
/// the high half, so that one comparison orders two events.
#[inline]
fn key(at: Time, seq: u64) -> u128 {
    ((at as u128) << 64) | seq as u128
}

/// Two heaps, one order. `schedule` and `schedule_reserved` put an event in the heap of the
/// network (a link's transmission end and first arrival: at most two a link direction), and
/// `schedule_timer` in the heap of the timers (connections' and applications' timers: one or
/// more a connection). `pop` takes the earlier of the two heads by (time, insertion number), so
/// the order of events is exactly that of one heap holding them all; what the split changes is
/// that the events of the network, nearly all of them, are sifted through a heap the size of
/// the links in use rather than of the connections open (docs/determinism.md).
pub struct EventQueue<E> {
    heap: Heap<E>,
    timers: Heap<E>,
    /// The key of the earliest timer (`u128::MAX`: none), kept so that taking the next event
    /// looks into one heap only: timers change far less often than the network's events.
    timers_min: u128,
    seq: u64,
    now: Time,
    /// The insertion number of the event most recently popped (0 before the first).
    current: u64,
    processed: u64,
}

impl<E: Copy> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: Copy> EventQueue<E> {
    pub fn new() -> Self {
        EventQueue { heap: Heap::with_capacity(1024), timers: Heap::with_capacity(1024), timers_min: u128::MAX, seq: 0, now: 0, current: 0, processed: 0 }
    }

    /// Current simulated time: the time of the event most recently popped.
    pub fn now(&self) -> Time {
        self.now
    }

    /// The insertion number of the event most recently popped: with `now`, that event's place in
    /// the order of events (0 before the first). An event kept outside the queue with the number
    /// `seq` at time `at` (`reserve`) has already happened iff `(at, seq) < (now, current)`.
    #[inline]
    pub fn current_seq(&self) -> u64 {
        self.current
    }

    /// Events popped so far.
    pub fn processed(&self) -> u64 {
        self.processed
    }

    /// Events pending (both heaps).
    pub fn len(&self) -> usize {
        self.heap.len() + self.timers.len()
    }

    /// Timer events pending.
    pub fn timers_len(&self) -> usize {
        self.timers.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty() && self.timers.is_empty()
    }

    /// Schedule `ev` at absolute time `at`; scheduling in the past is a logic error.
    pub fn schedule(&mut self, at: Time, ev: E) {
        let seq = self.reserve();
        self.schedule_reserved(at, seq, ev);
    }

    /// Schedule a timer event `ev` at `at`: in the order of events exactly as `schedule` would
    /// put it, but kept in the heap of timers.
    pub fn schedule_timer(&mut self, at: Time, ev: E) {
        debug_assert!(at >= self.now, "timer scheduled in the past: {at} < {}", self.now);
        let seq = self.reserve();
        let k = key(at.max(self.now), seq);
        self.timers_min = self.timers_min.min(k);
        self.timers.push(k, ev);
    }

    /// Take the next insertion number without scheduling anything yet: an event kept outside the
    /// queue (a packet in flight behind another on the same link) holds its place in the order
    /// of ties, and enters the queue later with `schedule_reserved`.
    #[inline]
    pub fn reserve(&mut self) -> u64 {
        self.seq += 1;
        self.seq
    }

    /// Schedule `ev` at `at` with an insertion number from `reserve`: it runs exactly where it
    /// would have run had it been scheduled when the number was taken.
    #[inline]
    pub fn schedule_reserved(&mut self, at: Time, seq: u64, ev: E) {
        debug_assert!(at >= self.now, "event scheduled in the past: {at} < {}", self.now);
        let at = at.max(self.now);
        self.heap.push(key(at, seq), ev);
    }

    /// The key of the next event and whether it is a timer.
    #[inline]
    fn next_key(&self) -> Option<(u128, bool)> {
        let net = self.heap.peek_key().unwrap_or(u128::MAX);
        let (k, timer) = if self.timers_min < net { (self.timers_min, true) } else { (net, false) };
        // No key is u128::MAX: insertion numbers never reach u64::MAX.
        (k != u128::MAX).then_some((k, timer))
    }

    pub fn peek_time(&self) -> Option<Time> {
        self.next_key().map(|(k, _)| (k >> 64) as Time)
    }

    /// Pop the next event and advance the clock to its time.
    #[inline]
    pub fn pop(&mut self) -> Option<(Time, E)> {
        self.pop_until(Time::MAX)
    }

    /// Pop the next event if it is due at or before `limit` (advancing the clock to its time);
    /// None, with the clock where it was, if there is none or it is later.
    #[inline]
    pub fn pop_until(&mut self, limit: Time) -> Option<(Time, E)> {
        let (k, timer) = self.next_key()?;
        let at = (k >> 64) as Time;
        if at > limit {
            return None;
        }
        let ev = if timer {
            let (_, ev) = self.timers.pop().expect("the earliest timer");
            self.timers_min = self.timers.peek_key().unwrap_or(u128::MAX);
            ev
        } else {
            self.heap.pop().expect("the earliest event").1
        };
        self.now = at;
        self.current = k as u64;
        self.processed += 1;
        Some((at, ev))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ties_break_by_insertion_order() {
        let mut q = EventQueue::new();
        q.schedule(10, 'a');
        q.schedule(5, 'b');
        q.schedule(10, 'c');
        q.schedule(5, 'd');
        let order: Vec<char> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, vec!['b', 'd', 'a', 'c']);
        assert_eq!(q.now(), 10);
        assert_eq!(q.processed(), 4);
    }

    #[test]
    fn a_reserved_event_keeps_its_place_among_ties() {
        let mut q = EventQueue::new();
        q.schedule(10, 'a');
        let r = q.reserve(); // taken before 'c', scheduled after it
        q.schedule(10, 'c');
        q.schedule_reserved(10, r, 'b');
        let order: Vec<char> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, vec!['a', 'b', 'c']);
    }

    #[test]
    fn timers_and_network_events_pop_in_one_order() {
        // The same events, some in the heap of timers: the order is that of a single heap,
        // ties by insertion number across the two heaps.
        let mut q = EventQueue::new();
        q.schedule(10, 'a');
        q.schedule_timer(10, 'b');
        q.schedule_timer(5, 'c');
        let r = q.reserve();
        q.schedule(5, 'd');
        q.schedule_timer(10, 'e');
        q.schedule_reserved(10, r, 'f');
        q.schedule(u64::MAX, 'z');
        assert_eq!(q.len(), 7);
        assert_eq!(q.timers_len(), 3);
        assert_eq!(q.peek_time(), Some(5));
        let order: Vec<char> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, vec!['c', 'd', 'a', 'b', 'f', 'e', 'z']);
        assert_eq!(q.now(), u64::MAX);
        assert!(q.is_empty());
    }

    #[test]
    fn split_queue_matches_one_heap_on_random_schedules() {
        // A reference of one sorted list against the split queue, events scheduled while the
        // queue runs (never in the past), a third of them timers.
        let mut state = 0x1234_5678_u64;
        let mut rand = move |n: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % n
        };
        let mut q = EventQueue::new();
        let mut reference: Vec<(Time, u64, u32)> = Vec::new();
        let mut seq = 0u64;
        let mut id = 0u32;
        let mut popped = Vec::new();
        let mut expected = Vec::new();
        for _ in 0..2000 {
            for _ in 0..rand(4) {
                let at = q.now() + rand(50);
                seq += 1;
                id += 1;
                reference.push((at, seq, id));
                if rand(3) == 0 {
                    q.schedule_timer(at, id);
                } else {
                    q.schedule(at, id);
                }
            }
            if let Some((t, e)) = q.pop() {
                popped.push((t, e));
                reference.sort_unstable();
                let (rt, _, re) = reference.remove(0);
                expected.push((rt, re));
            }
        }
        assert!(popped.len() > 1000);
        assert_eq!(popped, expected);
    }
}
