//! The sender's SACK scoreboard (RFC 6675 §3 `Update()`, RFC 2018 §5): which bytes above the
//! cumulative acknowledgment the receiver has reported holding. Kept as sorted, disjoint,
//! non-adjacent byte ranges, so every question the recovery strategies ask (IsLost, the holes,
//! the forward-most SACKed byte) is answered by walking a handful of ranges.

use crate::net::SackBlock;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Scoreboard {
    /// SACKed ranges [left, right) above snd_una: sorted, disjoint, not touching.
    ranges: Vec<(u64, u64)>,
}

impl Scoreboard {
    pub fn ranges(&self) -> &[(u64, u64)] {
        &self.ranges
    }

    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    /// Forget everything (after a retransmission timeout: RFC 2018 §8, RFC 6675 §5.1 — the
    /// receiver may have reneged; later ACKs rebuild the scoreboard).
    pub fn clear(&mut self) {
        self.ranges.clear();
    }

    /// RFC 6675 `Update()`: record the blocks of an ACK whose cumulative point is `una`, keeping
    /// only what lies in (una, snd_max]. Returns the number of bytes newly SACKed.
    pub fn update(&mut self, una: u64, snd_max: u64, blocks: &[SackBlock]) -> u64 {
        let mut added = 0;
        for b in blocks {
            let (l, r) = (b.left.max(una), b.right.min(snd_max));
            if l < r {
                added += self.insert(l, r);
            }
        }
        self.prune(una);
        added
    }

    /// Insert [l, r); returns the bytes that were not SACKed before.
    fn insert(&mut self, mut l: u64, mut r: u64) -> u64 {
        let mut covered = 0;
        let i = self.ranges.partition_point(|&(_, b)| b < l);
        let orig = r - l;
        while i < self.ranges.len() && self.ranges[i].0 <= r {
            let (a, b) = self.ranges.remove(i);
            covered += b.min(r).saturating_sub(a.max(l));
            l = l.min(a);
            r = r.max(b);
        }
        self.ranges.insert(i, (l, r));
        orig - covered
    }

    /// Drop what the cumulative ACK now covers.
    pub fn prune(&mut self, una: u64) {
        let k = self.ranges.partition_point(|&(_, b)| b <= una);
        self.ranges.drain(..k);
        if let Some(first) = self.ranges.first_mut() {
            first.0 = first.0.max(una);
        }
    }

    pub fn is_sacked(&self, seq: u64) -> bool {
        let i = self.ranges.partition_point(|&(_, b)| b <= seq);
        i < self.ranges.len() && self.ranges[i].0 <= seq
    }

    /// The SACKed range holding `seq`, if it is SACKed.
    pub fn range_at(&self, seq: u64) -> Option<(u64, u64)> {
        let i = self.ranges.partition_point(|&(_, b)| b <= seq);
        self.ranges.get(i).copied().filter(|&(a, _)| a <= seq)
    }

    /// The first byte at or after `seq` that is not SACKed.
    pub fn next_unsacked(&self, seq: u64) -> u64 {
        let i = self.ranges.partition_point(|&(_, b)| b <= seq);
        match self.ranges.get(i) {
            Some(&(a, b)) if a <= seq => b,
            _ => seq,
        }
    }

    /// The first SACKed byte after `seq` (the end of the hole `seq` is in), if any.
    pub fn next_sacked(&self, seq: u64) -> Option<u64> {
        let i = self.ranges.partition_point(|&(_, b)| b <= seq);
        self.ranges.get(i).map(|&(a, _)| a.max(seq))
    }

    /// One past the forward-most SACKed byte (FACK's snd.fack when above snd_una).
    pub fn highest(&self) -> Option<u64> {
        self.ranges.last().map(|&(_, b)| b)
    }

    /// SACKed bytes in total.
    pub fn sacked_bytes(&self) -> u64 {
        self.ranges.iter().map(|&(a, b)| b - a).sum()
    }

    /// SACKed bytes and discontiguous SACKed ranges strictly above `seq`.
    pub fn above(&self, seq: u64) -> (u64, u32) {
        let mut bytes = 0;
        let mut n = 0;
        for &(a, b) in self.ranges.iter().rev() {
            if b <= seq + 1 {
                break;
            }
            bytes += b - a.max(seq + 1);
            n += 1;
        }
        (bytes, n)
    }

    /// The unSACKed ranges ("holes") in [una, highest SACKed).
    pub fn holes(&self, una: u64) -> impl Iterator<Item = (u64, u64)> + '_ {
        let mut prev = una;
        self.ranges.iter().filter_map(move |&(a, b)| {
            let h = (prev.max(una), a);
            prev = b;
            (h.0 < h.1).then_some(h)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(l: u64, r: u64) -> SackBlock {
        SackBlock { left: l, right: r }
    }

    #[test]
    fn update_merges_and_counts_new_bytes() {
        let mut s = Scoreboard::default();
        assert_eq!(s.update(1, 10_001, &[b(2001, 3001)]), 1000);
        assert_eq!(s.update(1, 10_001, &[b(2001, 4001), b(5001, 6001)]), 2000);
        assert_eq!(s.update(1, 10_001, &[b(2001, 4001)]), 0, "nothing new");
        assert_eq!(s.ranges(), &[(2001, 4001), (5001, 6001)]);
        assert_eq!(s.update(1, 10_001, &[b(4001, 5001)]), 1000);
        assert_eq!(s.ranges(), &[(2001, 6001)], "adjacent ranges merge");
        // Blocks beyond what was sent, or below the cumulative ACK, are clipped.
        assert_eq!(s.update(3001, 7001, &[b(1, 2001), b(6001, 9001)]), 1000);
        assert_eq!(s.ranges(), &[(3001, 7001)]);
        s.prune(8001);
        assert!(s.is_empty());
    }

    #[test]
    fn holes_and_queries() {
        let mut s = Scoreboard::default();
        s.update(1, 100_001, &[b(2001, 3001), b(5001, 8001)]);
        assert_eq!(s.holes(1).collect::<Vec<_>>(), [(1, 2001), (3001, 5001)]);
        assert_eq!(s.next_unsacked(2500), 3001);
        assert_eq!(s.next_unsacked(1), 1);
        assert_eq!(s.next_sacked(3001), Some(5001));
        assert_eq!(s.next_sacked(9000), None);
        assert_eq!(s.highest(), Some(8001));
        assert_eq!(s.above(1), (4000, 2));
        assert_eq!(s.above(3001), (3000, 1));
        assert!(s.is_sacked(2001) && !s.is_sacked(3001) && s.is_sacked(8000) && !s.is_sacked(8001));
    }
}
