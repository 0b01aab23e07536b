//! A binary min-heap of events keyed by (time, insertion number) packed in one `u128`, made for
//! the way a simulation uses its queue: nearly every event popped is followed by one scheduled
//! (a packet's arrival by the start of its next hop, a transmission's end by the next one's).
//! `pop` leaves the popped root where it is, as a hole; the next `push` fills the hole and sifts
//! down once, instead of the sift to the bottom and back up of a pop plus the sift up of a push.
//! A `pop` that finds a hole removes it the ordinary way first. The order of events is exactly
//! that of any min-heap: keys are unique (the insertion number is), so there are no ties to
//! break differently.

#[derive(Clone, Copy)]
struct Entry<E> {
    key: u128,
    ev: E,
}

pub struct Heap<E> {
    data: Vec<Entry<E>>,
    /// `data[0]` was popped: it is no longer an event, only a place to fill.
    hole: bool,
}

impl<E: Copy> Heap<E> {
    pub fn with_capacity(n: usize) -> Self {
        Heap { data: Vec::with_capacity(n), hole: false }
    }

    /// Events held.
    #[inline]
    pub fn len(&self) -> usize {
        self.data.len() - self.hole as usize
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The smallest key, if any.
    #[inline]
    pub fn peek_key(&self) -> Option<u128> {
        if !self.hole {
            return self.data.first().map(|e| e.key);
        }
        // Under a hole the smallest is one of the root's children.
        match (self.data.get(1), self.data.get(2)) {
            (Some(a), Some(b)) => Some(a.key.min(b.key)),
            (Some(a), None) => Some(a.key),
            _ => None,
        }
    }

    #[inline]
    pub fn push(&mut self, key: u128, ev: E) {
        let e = Entry { key, ev };
        if self.hole {
            self.hole = false;
            self.sift_down(0, e);
        } else {
            // A placeholder slot, overwritten by the sift (the entry itself is kept in registers:
            // writing it and reading it straight back would stall on store forwarding).
            let n = self.data.len();
            self.data.push(e);
            self.sift_up(n, e);
        }
    }

    /// Take the event with the smallest key.
    #[inline]
    pub fn pop(&mut self) -> Option<(u128, E)> {
        if self.hole {
            self.hole = false;
            self.remove_root();
        }
        let e = *self.data.first()?;
        self.hole = true;
        Some((e.key, e.ev))
    }

    /// Remove `data[0]` (a hole) the ordinary way: the last entry takes its place and sinks.
    fn remove_root(&mut self) {
        let last = self.data.pop().expect("a hole is an entry");
        if !self.data.is_empty() {
            self.sift_down(0, last);
        }
    }

    /// Put `e` at `pos` or above it, moving larger parents down.
    #[inline]
    fn sift_up(&mut self, mut pos: usize, e: Entry<E>) {
        while pos > 0 {
            let parent = (pos - 1) / 2;
            if self.data[parent].key <= e.key {
                break;
            }
            self.data[pos] = self.data[parent];
            pos = parent;
        }
        self.data[pos] = e;
    }

    /// Put `e` at `pos` (a slot to fill) or below it, moving smaller children up.
    #[inline]
    fn sift_down(&mut self, mut pos: usize, e: Entry<E>) {
        let n = self.data.len();
        loop {
            let mut child = 2 * pos + 1;
            if child >= n {
                break;
            }
            if child + 1 < n && self.data[child + 1].key < self.data[child].key {
                child += 1;
            }
            if self.data[child].key >= e.key {
                break;
            }
            self.data[pos] = self.data[child];
            pos = child;
        }
        self.data[pos] = e;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_in_key_order_with_pushes_between() {
        // Against a sorted reference: random keys pushed between pops, so holes are filled by
        // pushes and removed by pops in every combination.
        let mut rng = crate::engine::RngStream::new(7, "heap-test");
        let mut rand = move |n: u64| rng.next_u64() % n;
        let mut h = Heap::with_capacity(4);
        let mut reference: Vec<u128> = Vec::new();
        let mut next = 0u128;
        for _ in 0..5000 {
            for _ in 0..rand(3) {
                next += 1;
                let key = (rand(100) as u128) << 64 | next;
                h.push(key, next as u32);
                reference.push(key);
            }
            assert_eq!(h.len(), reference.len());
            reference.sort_unstable_by(|a, b| b.cmp(a));
            assert_eq!(h.peek_key(), reference.last().copied());
            match h.pop() {
                Some((k, ev)) => {
                    assert_eq!(Some(k), reference.pop());
                    assert_eq!(ev as u128, k & u64::MAX as u128);
                }
                None => assert!(reference.is_empty()),
            }
        }
        while let Some((k, _)) = h.pop() {
            reference.sort_unstable_by(|a, b| b.cmp(a));
            assert_eq!(Some(k), reference.pop());
        }
        assert!(reference.is_empty() && h.is_empty() && h.peek_key().is_none());
    }
}
