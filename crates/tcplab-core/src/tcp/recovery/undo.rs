//! Linux's undo of a spurious window reduction and its reading of D-SACKs (net/ipv4/tcp_input.c,
//! Linux 6.x), for the recovery state machine of `linux.rs`:
//!
//! - **The episode's record.** `tcp_init_undo` (at `tcp_enter_recovery` and, for a new
//!   reduction, `tcp_enter_loss`): `undo_marker` = snd_una, `undo_retrans` = the retransmissions
//!   in flight (−1 when none: 0 means "can undo now"); every retransmission after it adds one
//!   (`tcp_retransmit_skb`; a tail loss probe does not), and the first stamps `retrans_stamp`
//!   with its TSval. `prior_ssthresh` (`tcp_current_ssthresh`: ssthresh, or ¾ of cwnd if more,
//!   none on an ECE ACK) and `prior_cwnd` are what the undo restores.
//! - **D-SACK** (RFC 2883; `tcp_check_dsack`, `tcp_dsack_seen`): a D-SACK of a range no longer
//!   than the largest window offered, when the peer has not reported more duplicates than were
//!   retransmitted (`dsack_dups` ≤ `total_retrans`), proves that many retransmissions spurious
//!   (`undo_retrans` −= its segments, for a range above `undo_marker` and below the ACK before
//!   this one; inside the window, for each retransmitted segment it covers, `tcp_sacktag_one`).
//!   One of at most a segment ending at the probe's `tlp_high_seq` says the probe repaired nothing
//!   (`FLAG_DSACK_TLP`, `tcp_process_tlp_ack`).
//! - **When to undo** (`tcp_may_undo`): an `undo_marker`, and no retransmission left unproven or
//!   an echoed timestamp older than the first retransmission (`tcp_packet_delayed`,
//!   `tcp_tsopt_ecr_before`: the original was delivered; Eifel, RFC 3522). The undo
//!   (`tcp_undo_cwnd_reduction`): cwnd from the controller's `undo_cwnd` (max(cwnd, prior_cwnd)),
//!   ssthresh back to `prior_ssthresh` if larger, the CWR of ECN withdrawn, `undo_marker`
//!   cleared, and for a partial or RTO undo the lost marks cleared.
//!
//! `linux.rs` calls these where `tcp_fastretrans_alert` and `tcp_process_loss` do: at the end of
//! Recovery (`tcp_try_undo_recovery`, `TCPFullUndo`), in Recovery and below it on a D-SACK
//! (`tcp_try_undo_dsack`, `TCPDSACKUndo`), on a partial ACK (`tcp_try_undo_partial`,
//! `TCPPartialUndo`), in Loss (`tcp_try_undo_loss`, `TCPLossUndo`).
//! F-RTO's proof (RFC 5682 §3.1 step 3.b) is `linux.rs`'s (`process_loss`); BBR's undo keeps its
//! window (`bbr_undo_cwnd`), as the kernel's does.

use crate::tcp::state::SenderCore;
use crate::tcp::tsopt::ts_clock;

/// The undo record of one connection (Linux `tp->undo_marker`, `undo_retrans`, `retrans_stamp`,
/// `prior_ssthresh`, `prior_cwnd`, `dsack_dups`).
#[derive(Clone, Debug, Default)]
pub struct Undo {
    /// The `undo` knob: the window goes back when a reduction proves spurious.
    pub enabled: bool,
    /// `undo_marker`: snd_una when the episode began; None: nothing to undo.
    pub marker: Option<u64>,
    /// `undo_retrans`: retransmissions of the episode not yet proven spurious; −1 before any.
    pub retrans: i64,
    /// `retrans_stamp`: the TSval clock (ms) of the first retransmission since it was cleared.
    pub stamp: Option<u32>,
    /// `prior_ssthresh` (bytes; 0: none, the undo leaves the window alone) and `prior_cwnd`.
    pub prior_ssthresh: u64,
    pub prior_cwnd: u64,
    /// `dsack_dups`: segments D-SACKed over the connection.
    dsack_dups: u64,
    /// `undo_retx` of the sender when last read.
    seen_retx: u64,
}

/// What one ACK's D-SACK told (`tcp_check_dsack`'s flags).
#[derive(Clone, Copy, Debug, Default)]
pub struct DsackRead {
    /// `FLAG_DSACKING_ACK`: a D-SACK was accepted.
    pub dsacking: bool,
    /// `FLAG_DSACK_TLP`: it covers the tail loss probe (at most one segment ending at
    /// `tlp_high_seq`).
    pub tlp: bool,
    /// Segments it reports delivered (`state->sack_delivered`).
    pub segs: u64,
}

impl Undo {
    pub fn new(enabled: bool) -> Undo {
        Undo { enabled, ..Undo::default() }
    }

    /// Take the retransmissions sent since the last call (`tcp_retransmit_skb`: "if
    /// (tp->undo_retrans < 0) tp->undo_retrans = 0; tp->undo_retrans += pcount", and "Save stamp
    /// of the first (attempted) retransmit": retrans_stamp when 0).
    pub fn count_retransmits(&mut self, s: &mut SenderCore) {
        let n = s.undo_retx - self.seen_retx;
        self.seen_retx = s.undo_retx;
        if let Some(at) = s.undo_retx_at.take() {
            if self.stamp.is_none() {
                self.stamp = Some(ts_clock(at, s.cfg.ts_offset.0));
            }
        }
        if n > 0 {
            self.retrans = self.retrans.max(0) + n as i64;
        }
    }

    /// `tcp_init_undo`: a new episode. `retrans_out`: retransmissions in flight, counting an
    /// outstanding retransmitted probe ("account for TLP retransmits in flight").
    pub fn init(&mut self, s: &SenderCore, retrans_out: u64) {
        self.marker = Some(s.snd_una);
        self.retrans = if retrans_out == 0 { -1 } else { retrans_out as i64 };
    }

    /// `tcp_current_ssthresh`: outside a reduction the larger of ssthresh and ¾ of cwnd (in
    /// whole packets: `(cwnd >> 1) + (cwnd >> 2)`).
    pub fn current_ssthresh(s: &SenderCore, in_reduction: bool) -> u64 {
        if in_reduction {
            return s.ssthresh;
        }
        let p = s.cwnd / s.mss;
        s.ssthresh.max(((p >> 1) + (p >> 2)) * s.mss)
    }

    /// `tcp_check_dsack` with `tcp_dsack_seen`, on the ACK being processed (`prior_una`: snd_una
    /// before it; `tlp_high_seq`: the outstanding probe's end). The D-SACKed retransmissions
    /// inside the window (`tcp_sacktag_one` with `dup_sack`) are counted here too.
    pub fn read_dsack(&mut self, s: &SenderCore, prior_una: u64, tlp_high_seq: Option<u64>, max_window: u64) -> DsackRead {
        let Some((l, r)) = s.ack_dsack else { return DsackRead::default() };
        // tcp_dsack_seen: "if (!before(start_seq, end_seq)) return 0"; "Dubious DSACK: DSACKed
        // range greater than maximum advertised rwnd".
        if l >= r || r - l > max_window {
            return DsackRead::default();
        }
        let len = r - l;
        let mut read = DsackRead { segs: 1, ..DsackRead::default() };
        if len > s.mss {
            read.segs = len.div_ceil(s.mss);
        } else if tlp_high_seq == Some(r) {
            read.tlp = true;
        }
        self.dsack_dups += read.segs;
        // "Skip the DSACK if dup segs weren't retransmitted by sender".
        if self.dsack_dups > s.stats.retransmits {
            return DsackRead::default();
        }
        read.dsacking = true;
        if let Some(m) = self.marker {
            if self.retrans > 0 {
                if r <= prior_una && r > m {
                    // "D-SACK for already forgotten data... Do dumb counting."
                    self.retrans = (self.retrans - read.segs as i64).max(0);
                } else if r > prior_una {
                    // tcp_sacktag_one(dup_sack): "Account D-SACK for retransmitted packet", each
                    // retransmitted segment of the block above undo_marker.
                    let n = s.txq.records().filter(|x| x.tx > 1 && x.start >= l.max(m) && x.end <= r && x.end > m).count() as i64;
                    self.retrans = (self.retrans - n).max(0);
                }
            }
        }
        read
    }

    /// `tcp_packet_delayed`: the ACK echoes a timestamp from before the first retransmission
    /// (`tcp_tsopt_ecr_before`: saw_tstamp, a non-zero TSecr, before retrans_stamp); with no
    /// retransmission stamped, "apparently a packet was merely delayed, not lost".
    pub fn packet_delayed(&self, s: &SenderCore) -> bool {
        match self.stamp {
            Some(st) => s.ack_tsecr.is_some_and(|e| (e.wrapping_sub(st) as i32) < 0),
            None => true,
        }
    }

    /// `tcp_may_undo`.
    pub fn may_undo(&self, s: &SenderCore) -> bool {
        self.enabled && self.marker.is_some() && (self.retrans == 0 || self.packet_delayed(s))
    }

    /// `tcp_undo_cwnd_reduction(sk, unmark_loss)`: the lost marks cleared if asked, the window
    /// restored when a prior ssthresh was kept (with ECN's CWR withdrawn when ssthresh goes
    /// back up: `tcp_ecn_withdraw_cwr`), the marker cleared.
    pub fn undo(&mut self, s: &mut SenderCore, unmark_loss: bool) {
        if unmark_loss {
            s.txq.clear_lost();
        }
        if self.prior_ssthresh > 0 {
            if self.prior_ssthresh > s.ssthresh {
                s.ecn_cwr_pending = false;
            }
            s.undo_window(self.prior_cwnd, self.prior_ssthresh);
        }
        s.cc_cwnd_stamp();
        self.marker = None;
        s.stats.undos += 1;
    }

    /// Linux's `tcp_any_retrans_done`: a retransmission in flight, or the oldest outstanding
    /// segment was retransmitted once.
    pub fn any_retrans_done(s: &SenderCore) -> bool {
        s.txq.any_retrans() || s.txq.head().is_some_and(|r| r.tx > 1)
    }

    /// `retrans_stamp = 0` where `tcp_fastretrans_alert` clears it in CA_Open, and
    /// `tcp_try_to_open` when no retransmission is done.
    pub fn clear_stamp(&mut self, s: &SenderCore) {
        if !Self::any_retrans_done(s) {
            self.stamp = None;
        }
    }
}
