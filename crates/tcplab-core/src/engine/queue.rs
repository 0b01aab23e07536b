//! Event queue ordered by (time, insertion sequence). Two events due at the same nanosecond run in
//! the order they were scheduled, so a run is a pure function of (scenario, seed). An event may
//! take its insertion number when it becomes known and enter the heap later (`reserve`,
//! `schedule_reserved`): the world keeps only the first packet in flight on each link direction
//! in the heap, the others waiting in the link's FIFO with their numbers, and the order of every
//! event is the same as if all had been in the heap (docs/determinism.md).

use crate::units::Time;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

struct Entry<E> {
    at: Time,
    seq: u64,
    ev: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, o: &Self) -> bool {
        self.at == o.at && self.seq == o.seq
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl<E> Ord for Entry<E> {
    // BinaryHeap is a max-heap: reverse so that the earliest (then first-scheduled) pops first.
    fn cmp(&self, o: &Self) -> Ordering {
        o.at.cmp(&self.at).then(o.seq.cmp(&self.seq))
    }
}

pub struct EventQueue<E> {
    heap: BinaryHeap<Entry<E>>,
    seq: u64,
    now: Time,
    processed: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> EventQueue<E> {
    pub fn new() -> Self {
        EventQueue { heap: BinaryHeap::with_capacity(1024), seq: 0, now: 0, processed: 0 }
    }

    /// Current simulated time: the time of the event most recently popped.
    pub fn now(&self) -> Time {
        self.now
    }

    /// Events popped so far.
    pub fn processed(&self) -> u64 {
        self.processed
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// Schedule `ev` at absolute time `at`; scheduling in the past is a logic error.
    pub fn schedule(&mut self, at: Time, ev: E) {
        let seq = self.reserve();
        self.schedule_reserved(at, seq, ev);
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
        self.heap.push(Entry { at, seq, ev });
    }

    pub fn peek_time(&self) -> Option<Time> {
        self.heap.peek().map(|e| e.at)
    }

    /// Pop the next event and advance the clock to its time.
    pub fn pop(&mut self) -> Option<(Time, E)> {
        let e = self.heap.pop()?;
        self.now = e.at;
        self.processed += 1;
        Some((e.at, e.ev))
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
}
