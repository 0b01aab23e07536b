//! ns-2's `Agent/TCP/SackRH`: SACK with Rate-Halving as contributed to ns-2 by Mathis, Semke,
//! Mahdavi and Lahey (tcp/tcp-sack-rh.cc with its scoreboard, tcp/scoreboard-rh.cc; the section
//! numbers below are the source's, from the Rate-Halving draft it implements).
//!
//! One procedure handles every ACK (`recv()`), in this order:
//!
//! 1. The scoreboard is updated (`UpdateScoreBoard()`): entries from snd_una up to the highest
//!    SACKed segment; each hole counts the ACKs that SACKed data above it (`sack_cnt`); a
//!    retransmission that is SACKed or acknowledged leaves `retran_data`, and one still missing
//!    once data sent after it is SACKed was lost again (`CheckSndNxt()`): it becomes a new hole.
//!    A duplicate ACK without SACK blocks counts in `num_dupacks` (the estimation states).
//! 2. Exits: without a retransmission in the adjustment, an ACK without SACK blocks in RH_EXACT
//!    or a new cumulative ACK in RH_EST was reordering: cwnd goes back to its value before (7.8).
//!    RH_EXACT ends when FACK reaches the snd.nxt of its start or a retransmission of it is
//!    SACKed (7.10), RH_EST* when the cumulative ACK does (7.11, with `estadjust()`); both bound
//!    the result (`boundparms()`, 7.14): cwnd ≤ prior/2, ssthresh = ⌊cwnd⌋, at least ⌊prior/4⌋.
//! 3. Entries: a new hole (a hole with one SACK above it) starts RH_EXACT (7.4), a duplicate
//!    ACK without SACK RH_EST (7.5); prior_cwnd and prior_max_seq (snd.nxt) are saved.
//! 4. The window: RH_INCR opens cwnd as ns-2's `opencwnd()` when snd.nxt − fack + retran_data
//!    + 1 ≥ cwnd before the ACK (7.2); RH_EXACT takes off half of what left the network
//!    ((Δfack + new holes)/2, 7.6); RH_EST half a segment per ACK (7.7); RH_EST_REPAIR, entered
//!    once cwnd ≤ prior/2 (7.12), nothing.
//! 5. `send_much()` (7.3): while ⌊cwnd⌋ ≥ t_seqno − fack + retran_data: the first hole with at
//!    least `dupthresh` SACKs above it not yet retransmitted, else (estimating) snd_una once
//!    `dupthresh` duplicate ACKs show a new hole, else the next segment at snd.nxt.
//!
//! The retransmission timer restarts on every ACK, duplicates too (ns-2's `newack()` runs for
//! each). A timeout in the middle of an adjustment restores cwnd to prior_cwnd before halving
//! (4.6, 7.15); the scoreboard is kept, every hole below snd.nxt is made eligible
//! (`TimeoutScoreBoard()`), and snd.nxt is pulled back to fack + 1 — which leaves it where it is
//! when there is a scoreboard (its right edge is snd.nxt then) and goes back N from snd_una when
//! there is none.
//!
//! In tcplab's units: ns-2's `fack_ + 1` (the first segment above the forward-most SACK) is
//! `fack` in bytes, `t_seqno_` is snd.nxt, counts are in segments. ns-2's cwnd is a fraction of
//! segments; here bytes, so half a segment is SMSS/2 bytes. Whether an ACK carried SACK blocks
//! is read from the scoreboard (the receiver reports a block whenever it holds data above
//! snd_una, RFC 2018 §4), and the highest block from the scoreboard's top. ECN is not modelled.

use crate::tcp::gate::{Ask, Limit, SendKind};
use crate::tcp::recovery::{Caps, Recovery};
use crate::tcp::state::{OutSeg, SenderCore, SenderPhase};
use std::collections::BTreeMap;

/// Rate-Halving's state (`rh_state_`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RhState {
    /// RH_INCR: no adjustment; the window grows.
    #[default]
    Incr,
    /// RH_EXACT: adjusting from SACK information.
    Exact,
    /// RH_EST: adjusting from duplicate ACKs without SACK.
    Est,
    /// RH_EST_REPAIR: estimated, the window halved, repairing.
    EstRepair,
}

/// `rh_est_hole_state_`: how far the estimation states are with the hole at snd_una.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum HoleState {
    #[default]
    None,
    Counting,
    NewHole,
    RetransOccurred,
}

/// A scoreboard entry that is neither SACKed nor acknowledged.
#[derive(Clone, Copy, Debug, Default)]
struct Hole {
    /// ACKs that SACKed data above the hole (`sack_cnt_`).
    sack_cnt: u32,
    /// Retransmitted in flight: snd.nxt when it was sent (`retran_`, `snd_nxt_`).
    retran: Option<u64>,
}

#[derive(Default)]
pub struct SackRh {
    state: RhState,
    /// The holes of ns-2's scoreboard, by segment start.
    holes: BTreeMap<u64, Hole>,
    /// One past the scoreboard's right-most entry; at or below snd_una there is no scoreboard.
    top: u64,
    /// ns-2's `fack_ + 1`, bytes (signed: the estimate can lie anywhere).
    fack: i64,
    /// Retransmitted segments in the network (`retran_data_`).
    retran_data: i64,
    /// Duplicate ACKs without SACK blocks in this adjustment (`num_dupacks_`).
    num_dupacks: i64,
    prior_cwnd: u64,
    prior_max_seq: u64,
    rh_id: u32,
    rh_max: u32,
    hole_state: HoleState,
    num_retrans: i64,
    /// A retransmission was sent in this adjustment (`rh_retran_flag_`).
    retran_flag: bool,
    /// `rh_id_` when a retransmission was last SACKed or acknowledged (`retran_sacked_`).
    retran_sacked: u32,
    /// snd_una after the previous ACK.
    last_una: u64,
    /// The ACK being processed is a duplicate (set by `on_dupack`).
    dup: bool,
    /// Congestion avoidance: the remainder of SMSS²/cwnd carried between ACKs.
    ca_remainder: u64,
    /// ns-2 keeps t_seqno_ at a timeout when there is a scoreboard; the core has gone back to
    /// snd_una for the one segment it retransmits, so snd.nxt is put back on the next ACK.
    restore_nxt: Option<u64>,
}

impl SackRh {
    /// The adjustment state (for tests and instruments).
    pub fn state(&self) -> RhState {
        self.state
    }

    fn segs(d: i64, mss: u64) -> i64 {
        let m = mss as i64;
        if d >= 0 {
            (d + m - 1) / m
        } else {
            -((-d + m - 1) / m)
        }
    }

    fn next_seg(s: &SenderCore, p: u64) -> u64 {
        (p + s.mss).min(s.data_end.max(p + 1))
    }

    /// `rhclear()`.
    fn rhclear(&mut self) {
        self.rh_id = 0;
        self.prior_max_seq = 0;
        self.num_dupacks = 0;
        self.hole_state = HoleState::None;
        self.num_retrans = 0;
        self.retran_flag = false;
        self.prior_cwnd = 0;
    }

    /// `computefack()`: the scoreboard's right edge (or snd_una) when exact, snd_una plus the
    /// duplicate ACKs when estimating.
    fn compute_fack(&mut self, s: &SenderCore) {
        self.fack = match self.state {
            RhState::Incr | RhState::Exact => self.top.max(s.snd_una) as i64,
            RhState::Est | RhState::EstRepair => s.snd_una as i64 + (self.num_dupacks + 1) * s.mss as i64,
        };
    }

    /// `UpdateScoreBoard()` with `CheckSndNxt()`; returns the retransmissions that left the
    /// network (SACKed, acknowledged, or lost again).
    fn update(&mut self, s: &SenderCore, sack_present: bool, old_una: u64) -> i64 {
        let existed = self.top > old_una;
        if !sack_present && !existed {
            self.holes.clear();
            return 0;
        }
        let una = s.snd_una;
        if !existed {
            self.holes.clear();
            self.top = una;
        }
        let mut decr = 0;
        let rh_id = self.rh_id;
        // Advance the left edge: entries now acknowledged.
        while let Some((&p, &h)) = self.holes.first_key_value() {
            if p >= una {
                break;
            }
            self.holes.remove(&p);
            if h.retran.is_some() {
                decr += 1;
                self.retran_sacked = rh_id;
            }
        }
        if !sack_present {
            return decr;
        }
        let sack_max = s.sb.highest().unwrap_or(una);
        // New entries off the right side, up to the highest SACKed segment.
        let mut p = self.top.max(una);
        while p < sack_max {
            if !s.sb.is_sacked(p) {
                self.holes.insert(p, Hole::default());
            }
            p = Self::next_seg(s, p);
        }
        self.top = self.top.max(sack_max);
        // Entries now SACKed leave the scoreboard; the holes below the highest SACK count it.
        let mut sacked_retx = 0;
        self.holes.retain(|&p, h| {
            if s.sb.is_sacked(p) {
                sacked_retx += h.retran.is_some() as i64;
                return false;
            }
            true
        });
        if sacked_retx > 0 {
            decr += sacked_retx;
            self.retran_sacked = rh_id;
        }
        for (_, h) in self.holes.range_mut(..sack_max) {
            h.sack_cnt += 1;
        }
        // CheckSndNxt(): a retransmission below data sent after it and since SACKed was lost.
        for (_, h) in self.holes.range_mut(..sack_max) {
            if h.retran.is_some_and(|nxt| nxt < sack_max) {
                h.retran = None;
                h.sack_cnt = 1;
                decr += 1;
            }
        }
        decr
    }

    /// `GetNewHoles()`: holes with exactly one SACK above them.
    fn new_holes(&self) -> i64 {
        self.holes.values().filter(|h| h.sack_cnt == 1).count() as i64
    }

    /// `GetNextRetran()`: the first hole not retransmitted with `dupthresh` SACKs above it.
    fn next_retran(&self, s: &SenderCore) -> Option<u64> {
        let dt = s.cfg.dupthresh;
        self.holes.iter().find(|(_, h)| h.retran.is_none() && h.sack_cnt >= dt).map(|(&p, _)| p)
    }

    /// 7.14 `boundparms()`: cwnd at most half the prior window; ssthresh the window in whole
    /// segments (ns-2's ssthresh_ is an integer), at least a quarter of the prior window.
    fn bound_parms(&self, s: &mut SenderCore) {
        let half = self.prior_cwnd / 2;
        if s.cwnd > half {
            s.legacy_set_cwnd(half);
        }
        let mss = s.mss;
        let mut ssthresh = s.cwnd / mss * mss;
        if 4 * ssthresh < self.prior_cwnd {
            ssthresh = self.prior_cwnd / (4 * mss) * mss;
        }
        s.legacy_set_ssthresh(ssthresh);
    }

    /// 7.13 `estadjust()`: cwnd = (prior_cwnd − retransmissions)/2.
    fn est_adjust(&self, s: &mut SenderCore) {
        let w = (self.prior_cwnd as i64 - self.num_retrans * s.mss as i64).max(0) as u64 / 2;
        s.legacy_set_cwnd(w);
    }

    /// ns-2 `opencwnd()` (tcp/tcp.cc, `wnd_option_` 1): one segment per ACK below ssthresh,
    /// else 1/cwnd of a segment (the division's remainder carried, as `cc::Aimd` does).
    fn open_cwnd(&mut self, s: &mut SenderCore) {
        let mss = s.mss;
        if s.cwnd < s.ssthresh {
            s.legacy_set_cwnd(s.cwnd + mss);
        } else {
            let num = mss * mss + self.ca_remainder;
            let w = s.cwnd.max(1);
            self.ca_remainder = num % w;
            s.legacy_set_cwnd(s.cwnd + num / w);
        }
    }

    /// An adjustment begins (7.4, 7.5).
    fn begin(&mut self, s: &SenderCore, state: RhState) {
        self.state = state;
        self.prior_cwnd = s.cwnd;
        self.prior_max_seq = s.snd_nxt;
        self.rh_max += 1;
        self.rh_id = self.rh_max;
    }

    /// A retransmission of the adjustment: the first is the loss detection (for the instruments).
    fn retransmitting(&mut self, s: &mut SenderCore) {
        if self.state != RhState::Incr && !self.retran_flag {
            s.count_fast_retransmit();
            s.recover = s.snd_max;
            s.loss_reduction(false, true);
        }
        self.retran_flag = true;
        self.retran_data += 1;
    }

    /// 7.3 `send_much()`.
    fn send_much(&mut self, s: &mut SenderCore, out: &mut Vec<OutSeg>) {
        let mss = s.mss;
        let mut n = 0;
        loop {
            // ⌊cwnd⌋ ≥ need (segments) ⇔ cwnd ≥ need·SMSS bytes.
            let need = Self::segs(s.snd_nxt as i64 - self.fack, mss) + 1 + self.retran_data;
            if !s.send_gate(n, Ask { used: need.max(0) as u64 * mss, need: 0, limit: Limit::Cwnd, burst: true, what: SendKind::Window }) {
                break;
            }
            let una = s.snd_una;
            let in_wnd = |p: u64| p + mss.min(s.data_end.saturating_sub(p)).max(1) <= una + s.peer_wnd;
            if let Some(p) = self.next_retran(s) {
                if !in_wnd(p) {
                    break;
                }
                let nxt = s.snd_nxt;
                if let Some(h) = self.holes.get_mut(&p) {
                    h.retran = Some(nxt);
                }
                self.retransmitting(s);
                let len = s.retransmit_hole(p, out);
                s.snd_nxt = s.snd_nxt.max(p + len);
            } else if matches!(self.state, RhState::Est | RhState::EstRepair) && self.hole_state == HoleState::NewHole {
                self.hole_state = HoleState::RetransOccurred;
                self.num_retrans += 1;
                self.retransmitting(s);
                s.retransmit_una(out);
            } else if s.snd_nxt < s.data_end && in_wnd(s.snd_nxt) {
                let nxt = s.snd_nxt;
                s.transmit(nxt, out);
            } else if s.fin_pending() && s.snd_nxt == s.data_end {
                let nxt = s.snd_nxt;
                s.transmit(nxt, out);
            } else {
                break;
            }
            n += 1;
        }
    }

    /// ns-2's `recv()` after the core has taken the ACK in.
    fn on_each_ack(&mut self, s: &mut SenderCore, core_grew: bool, out: &mut Vec<OutSeg>) {
        let mss = s.mss as i64;
        if let Some(n) = self.restore_nxt.take() {
            s.snd_nxt = s.snd_nxt.max(n);
        }
        let (old_una, una) = (self.last_una, s.snd_una);
        self.last_una = una;
        let advanced = una > old_una;
        let dup = std::mem::take(&mut self.dup) && !advanced;
        let sack_present = s.sack_ok && !s.sb.is_empty();
        let (old_fack, old_retran) = (self.fack, self.retran_data);
        self.retran_data -= self.update(s, sack_present, old_una);
        let dt = s.cfg.dupthresh as i64;
        if !sack_present && dup {
            self.num_dupacks += 1;
            if self.hole_state == HoleState::Counting && self.num_dupacks == dt {
                self.hole_state = HoleState::NewHole;
            }
        }
        self.compute_fack(s);
        // 7.8 Reordering exits.
        if !self.retran_flag && ((self.state == RhState::Exact && !sack_present) || (self.state == RhState::Est && advanced)) {
            self.state = RhState::Incr;
            let prior = self.prior_cwnd;
            s.legacy_set_cwnd(prior);
            self.rhclear();
            self.compute_fack(s);
        }
        // 7.10 Completion of RH_EXACT.
        if self.state == RhState::Exact && (self.fack > self.prior_max_seq as i64 || self.retran_sacked == self.rh_id) {
            self.bound_parms(s);
            self.state = RhState::Incr;
            self.rhclear();
        }
        // 7.11 Completion of RH_EST and RH_EST_REPAIR.
        if matches!(self.state, RhState::Est | RhState::EstRepair) && una > self.prior_max_seq {
            self.retran_data = 0;
            self.est_adjust(s);
            self.bound_parms(s);
            self.state = RhState::Incr;
            self.rhclear();
            self.compute_fack(s);
        }
        // 7.12 The NewReno case: the window is halved, repair without reducing it further.
        if self.state == RhState::Est && 2 * s.cwnd <= self.prior_cwnd {
            self.state = RhState::EstRepair;
        }
        // 7.9 Partial ACKs while estimating.
        if matches!(self.state, RhState::Est | RhState::EstRepair) && advanced {
            self.retran_data = 0;
            self.num_dupacks -= Self::segs((una - old_una) as i64, s.mss) - 1;
            self.hole_state = if self.num_dupacks >= dt { HoleState::NewHole } else { HoleState::Counting };
            self.compute_fack(s);
        }
        // 7.4 Entering RH_EXACT; 7.5 entering RH_EST.
        let new_holes = self.new_holes();
        if self.state == RhState::Incr && new_holes != 0 {
            self.begin(s, RhState::Exact);
        }
        if self.state == RhState::Incr && self.num_dupacks > 0 {
            self.begin(s, RhState::Est);
            self.hole_state = HoleState::Counting;
        }
        if self.state == RhState::Exact && self.num_dupacks > 0 {
            self.state = RhState::Est;
            self.hole_state = HoleState::Counting;
            self.rh_max += 1;
            self.rh_id = self.rh_max;
        }
        // The window.
        match self.state {
            RhState::Incr => {
                // 7.2: open the window when it was the limit before this ACK.
                let used = s.snd_nxt as i64 - old_fack + (2 + old_retran) * mss;
                if !core_grew && used >= s.cwnd as i64 {
                    self.open_cwnd(s);
                }
            }
            RhState::Exact => {
                // 7.6: half of what left the network (the forward ACK's advance and new holes).
                let d = Self::segs(self.fack - old_fack, s.mss).max(0) + new_holes;
                let w = s.cwnd.saturating_sub(d as u64 * s.mss / 2);
                s.legacy_set_cwnd(w);
            }
            RhState::Est => {
                // 7.7: half a segment per ACK.
                let w = s.cwnd.saturating_sub(s.mss / 2);
                s.legacy_set_cwnd(w);
            }
            RhState::EstRepair => {}
        }
        self.send_much(s, out);
    }
}

impl Recovery for SackRh {
    fn name(&self) -> &'static str {
        "sack-rh"
    }

    fn caps(&self) -> Caps {
        // Rate-Halving sends on the first duplicate ACKs itself; `TimeoutScoreBoard()`
        // (tcp/scoreboard-rh.cc) keeps the scoreboard after a timeout.
        Caps { own_limited_transmit: true, keeps_scoreboard_on_timeout: true, ..Caps::STANDARD }
    }

    fn on_dupack(&mut self, s: &mut SenderCore, _out: &mut Vec<OutSeg>) {
        self.dup = true;
        // ns-2's newack() runs on every ACK: newtimer() restarts the timer.
        if s.snd_una < s.snd_max {
            s.restart_rto();
        }
    }

    fn on_ack_in_recovery(&mut self, s: &mut SenderCore, acked: u64, _out: &mut Vec<OutSeg>) -> bool {
        let _ = acked;
        s.dupacks = 0;
        true
    }

    fn on_timeout(&mut self, s: &mut SenderCore) {
        // 4.6 / 7.15: a timeout in the middle of Rate-Halving: pretend it never started; the
        // halving is then of the window before it (ns-2 `slowdown()` after cwnd_ = prior_cwnd_).
        if self.state != RhState::Incr {
            if s.cfg.timeout_halves_window {
                let half = s.half_window_of(self.prior_cwnd);
                s.legacy_set_ssthresh(half);
            }
            self.rhclear();
            self.state = RhState::Incr;
        }
        self.retran_data = 0;
        let una = s.snd_una;
        let dt = s.cfg.dupthresh;
        let board = self.top > una;
        if board {
            // TimeoutScoreBoard(t_seqno_): entries up to snd.nxt; every hole eligible again.
            let mut p = self.top;
            while p < s.snd_nxt {
                if !s.sb.is_sacked(p) {
                    self.holes.insert(p, Hole::default());
                }
                p = Self::next_seg(s, p);
            }
            self.top = self.top.max(s.snd_nxt);
            for h in self.holes.values_mut() {
                *h = Hole { sack_cnt: dt, retran: None };
            }
        }
        self.compute_fack(s);
        if s.snd_nxt as i64 > self.fack {
            s.snd_nxt = self.fack.max(una as i64) as u64;
        }
        if board {
            // The core now retransmits snd_una with its one-segment window: ns-2's send_much()
            // sends the same segment as GetNextRetran()'s first hole, marked retransmitted.
            let nxt = s.snd_nxt;
            self.restore_nxt = Some(nxt);
            if let Some(h) = self.holes.get_mut(&una) {
                h.retran = Some(nxt);
                self.retran_data = 1;
                self.retran_flag = true;
            }
        }
        self.dup = false;
        s.in_recovery = true;
    }

    /// The core's flag is held for the whole connection (every ACK goes through `recv()`); the
    /// sender is repairing while Rate-Halving adjusts (RH_EXACT, RH_EST, RH_EST_REPAIR) or a
    /// retransmission is outstanding.
    fn recovering(&self, _s: &SenderCore) -> bool {
        self.state != RhState::Incr || self.retran_data > 0
    }

    fn send(&mut self, s: &mut SenderCore, out: &mut Vec<OutSeg>) {
        if s.phase != SenderPhase::Established {
            return;
        }
        // Every ACK goes through ns-2's one procedure: the core hands new ACKs to
        // `on_ack_in_recovery` (not to its own window growth) while this flag is held.
        let core_grew = !s.in_recovery;
        s.in_recovery = true;
        self.on_each_ack(s, core_grew, out);
    }
}
