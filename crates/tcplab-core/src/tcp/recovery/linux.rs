//! Linux 6.x's loss-recovery state machine over RACK-TLP (net/ipv4/tcp_input.c
//! `tcp_fastretrans_alert`, `tcp_enter_recovery`, `tcp_xmit_retransmit_queue`, `tcp_enter_loss`;
//! net/ipv4/tcp_recovery.c `tcp_rack_reo_timeout`): the recovery of `variant = "sack"` with
//! `loss = "rack"`. RACK (`loss/rack.rs`) marks segments lost in the transmit record; a marked
//! segment moves the sender into CA_Recovery, which retransmits the marked segments in sequence
//! order and then new data, within cwnd − in_flight where in_flight is Linux's
//! `tcp_packets_in_flight`: packets_out − (sacked_out + lost_out) + retrans_out; recovery ends
//! once snd_una reaches high_seq (snd_nxt at entry). After an RTO (CA_Loss) every unSACKed
//! segment is lost and is resent in order from a one-segment window.
//!
//! The window reduction in recovery is one call (`Reduction`): with `reduction = "prr"` (the
//! `linux6` profile) Proportional Rate Reduction as `tcp_cwnd_reduction` computes it (`prr.rs`,
//! RFC 9937), with `"halve"` cwnd = ssthresh at once.
//! Without SACK (the peer did not agree to it: Linux's `tcp_is_reno`) the same machine runs on
//! duplicate ACKs counted as SACKed segments (`tcp_add_reno_sack`, `tcp_remove_reno_sacks`), the
//! head marked lost by `tcp_newreno_mark_lost` (at `tp->reordering` duplicates, and on each
//! partial ACK in Recovery) instead of RACK, no tail loss probe, and Recovery held until data
//! above high_seq is acknowledged (`tcp_try_undo_recovery`, RFC 6582's guard).
//! An ECN-Echo outside a loss recovery moves the sender into CA_CWR (`tcp_enter_cwr`): ssthresh
//! from the controller, then the same reduction as Recovery's, ACK by ACK, until something above
//! high_seq is acknowledged (`tcp_end_cwr_cwnd_reduction`: cwnd = ssthresh).
//! With `undo`, a reduction that D-SACKs or echoed timestamps prove spurious is taken back
//! (`tcp_try_undo_recovery`, `_dsack`, `_partial`, `_loss`; `undo.rs`).
//! With `frto`, F-RTO after a timeout (`tcp_process_loss`, RFC 5682 §3.1). Not modelled: TSO, the
//! delayed-ACK filter of min_rtt; the tail loss probe is `tlp.rs`.

use super::tlp::{self, Tlp, TCP_TIMEOUT_MIN};
use super::undo::Undo;
use crate::tcp::loss::ReoWndEvent;
use super::prr::{Prr, PrrAck};
use super::{Caps, Delivered, Recovery};
use crate::tcp::config::TcpConfig;
use crate::tcp::cc::{CaPhase, CongestionEvent};
use crate::tcp::gate::{Ask, Limit, SendKind};
use crate::tcp::state::{OutSeg, SenderCore, XmitTimer};

/// The window reduction while in CA_Recovery (Linux `tcp_cwnd_reduction`), behind one call:
/// `enter(prior_cwnd, ssthresh, prior_in_flight)` when recovery starts, `on_ack(delivered,
/// in_flight) -> cwnd` on every ACK in recovery (bytes). This implementation cuts cwnd to
/// ssthresh at once (what `tcp_end_cwnd_reduction` leaves, without PRR's spreading of the
/// reduction over the round trip).
#[derive(Clone, Copy, Debug, Default)]
pub struct CutToSsthresh {
    /// The window to cut to (ssthresh at entry).
    target: u64,
}

impl CutToSsthresh {
    pub fn enter(&mut self, _prior_cwnd: u64, ssthresh: u64, _prior_in_flight: u64) {
        self.target = ssthresh;
    }

    pub fn on_ack(&mut self, _delivered: u64, _in_flight: u64) -> u64 {
        self.target
    }
}

/// The reduction in use (`reduction`): PRR (Linux `tcp_cwnd_reduction`, RFC 9937), or the
/// window cut to ssthresh at once.
#[derive(Clone, Copy, Debug)]
enum Reduction {
    Cut(CutToSsthresh),
    Prr(Prr),
}

impl Reduction {
    fn enter(&mut self, mss: u64, prior_cwnd: u64, ssthresh: u64, prior_in_flight: u64) {
        match self {
            Reduction::Cut(c) => c.enter(prior_cwnd, ssthresh, prior_in_flight),
            Reduction::Prr(p) => {
                p.set_mss(mss);
                p.enter(prior_cwnd, ssthresh, prior_in_flight);
            }
        }
    }

    /// The cwnd for this ACK in recovery; `cwnd` when PRR changes nothing (nothing delivered).
    fn on_ack(&mut self, a: PrrAck, cwnd: u64) -> u64 {
        match self {
            Reduction::Cut(c) => c.on_ack(a.delivered, a.in_flight),
            Reduction::Prr(p) => p.on_ack(a).unwrap_or(cwnd),
        }
    }

    /// Linux adds what `tcp_xmit_retransmit_queue` and `tcp_write_xmit` send to `prr_out`.
    fn on_sent(&mut self, bytes: u64) {
        if let Reduction::Prr(p) = self {
            p.on_sent(bytes);
        }
    }

    fn end(&mut self) {
        if let Reduction::Prr(p) = self {
            p.abandon();
        }
    }
}

/// Linux's `icsk_ca_state` as far as this machine routes on it (Disorder is read from the
/// scoreboard and the transmit record: `open()`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ca {
    Open,
    /// The window is being reduced for an ECN-Echo (TCP_CA_CWR), nothing lost.
    Cwr,
    Recovery,
    Loss,
}

impl Ca {
    /// Linux `tcp_in_cwnd_reduction`: CA_CWR or CA_Recovery, where `tcp_cong_control` calls
    /// `tcp_cwnd_reduction` instead of growing the window.
    fn in_reduction(self) -> bool {
        matches!(self, Ca::Cwr | Ca::Recovery)
    }

    /// Below CA_Recovery (Open, Disorder, CWR): the tail loss probe may be armed
    /// (`tcp_schedule_loss_probe`) and TSO deferral may hold a send (`tcp_tso_should_defer`).
    fn below_recovery(self) -> bool {
        matches!(self, Ca::Open | Ca::Cwr)
    }
}

pub struct LinuxRecovery {
    ca: Ca,
    /// `tp->high_seq`: snd_nxt when CWR, Recovery or Loss began.
    high_seq: u64,
    reduction: Reduction,
    tlp: Tlp,
    /// Of the ACK being processed: RFC 6937's DeliveredData, and whether it newly SACKed.
    delivered: u64,
    newly_sacked: bool,
    /// snd_una, the highest SACKed sequence and in_flight after the previous ACK.
    prior_una: u64,
    prior_fack: u64,
    prior_in_flight: u64,
    /// Something was sent since recovery began (Linux `prr_out` > 0).
    sent_in_recovery: bool,
    /// Bytes marked lost so far (the transmit record's `lost`) after the previous ACK: this ACK
    /// marked more (Linux `newly_lost`, which takes PRR's SafeACK allowance away).
    prior_lost: u64,
    /// The peer does not SACK (Linux `tcp_is_reno`): duplicate ACKs stand for SACKed segments.
    reno: bool,
    /// Without SACK, Linux's `sacked_out`: segments the duplicate ACKs say have left the network.
    reno_sacked: u64,
    /// The undo record (`undo.rs`) and `tp->max_window`, the largest window the peer offered
    /// (a D-SACK beyond it is dubious).
    undo: Undo,
    max_window: u64,
    /// The timeout being processed starts a new reduction (`tcp_enter_loss`'s test).
    loss_new: bool,
    /// This ACK retransmits nothing and marks nothing lost (`tcp_try_undo_partial` returned
    /// with retransmissions in flight).
    no_rexmit: bool,
    /// cwnd before the ACK being processed grew it.
    cwnd_before_ack: u64,
    /// F-RTO (`frto` knob; Linux `tp->frto`): the timeout under way may prove spurious;
    /// `frto_next`: the timeout being processed enables it (`tcp_enter_loss`'s test); `rexmit_new`:
    /// this ACK sends new data rather than retransmissions (`REXMIT_NEW`).
    frto_on: bool,
    frto: bool,
    frto_next: bool,
    rexmit_new: bool,
}

/// What the transmit record says now: Linux's `tcp_packets_in_flight` in bytes, whether any
/// segment is marked lost (`lost_out`), and whether any retransmission is outstanding
/// (`retrans_out`).
struct Scan {
    in_flight: u64,
    lost: bool,
    retrans: bool,
}

fn scan(s: &SenderCore) -> Scan {
    // The transmit record keeps these sums as its marks change (`TxQueue::in_flight`).
    Scan { in_flight: s.txq.in_flight(s.snd_una), lost: s.txq.any_lost(), retrans: s.txq.any_retrans() }
}

impl LinuxRecovery {
    pub fn new(cfg: &TcpConfig) -> Self {
        let reduction = match cfg.reduction {
            crate::tcp::config::Reduction::Prr => Reduction::Prr(Prr::new(cfg.mss.0)),
            crate::tcp::config::Reduction::Halve => Reduction::Cut(CutToSsthresh::default()),
        };
        LinuxRecovery {
            ca: Ca::Open,
            high_seq: 0,
            reduction,
            tlp: Tlp::new(cfg.tlp),
            delivered: 0,
            newly_sacked: false,
            // snd_una once the SYN is acknowledged (data starts at sequence 1): the first ACK
            // that acknowledges nothing new is not taken for one that advanced snd_una.
            prior_una: 1,
            prior_fack: 0,
            prior_in_flight: 0,
            sent_in_recovery: false,
            prior_lost: 0,
            reno: false,
            reno_sacked: 0,
            undo: Undo::new(cfg.undo),
            max_window: 0,
            loss_new: false,
            no_rexmit: false,
            cwnd_before_ack: 0,
            frto_on: cfg.frto,
            frto: false,
            frto_next: false,
            rexmit_new: false,
        }
    }

    /// The machine for a peer that does not SACK (Linux `tcp_is_reno`).
    pub fn without_sack(cfg: &TcpConfig) -> Self {
        LinuxRecovery { reno: true, ..LinuxRecovery::new(cfg) }
    }

    /// `scan`, with the duplicate ACKs' segments out of in_flight when the peer does not SACK
    /// (`tcp_left_out` counts `sacked_out` either way).
    fn scan(&self, s: &SenderCore) -> Scan {
        let mut sc = scan(s);
        sc.in_flight = sc.in_flight.saturating_sub(self.reno_sacked * s.mss);
        sc
    }

    /// Linux `tcp_add_reno_sack` with `tcp_limit_reno_sacked`: one more segment SACKed by a
    /// duplicate ACK, leaving at least the holes (lost_out, at least 1) outstanding. Returns the
    /// segments newly counted (`tcp_count_delivered`).
    fn add_reno_sack(&mut self, s: &SenderCore) -> u64 {
        let packets_out = s.txq.records().filter(|r| r.end > s.snd_una).count() as u64;
        let holes = (s.txq.records().filter(|r| r.end > s.snd_una && r.lost).count() as u64).max(1).min(packets_out);
        let prior = self.reno_sacked;
        self.reno_sacked = (self.reno_sacked + 1).min(packets_out - holes);
        self.reno_sacked.saturating_sub(prior)
    }

    /// Linux `tcp_newreno_mark_lost`: the head segment lost once `tp->reordering` duplicate ACKs
    /// came outside Recovery, or on a partial ACK in Recovery.
    fn newreno_mark_lost(&mut self, s: &mut SenderCore, advanced: bool) {
        if (self.ca != Ca::Recovery && self.ca != Ca::Loss && self.reno_sacked >= s.reordering as u64) || (self.ca == Ca::Recovery && advanced) {
            let una = s.snd_una;
            let head = s.txq.records().find(|r| r.end > una).map(|r| (r.start, r.end));
            if let Some((a, b)) = head {
                s.txq.mark_lost(a, b);
            }
        }
    }

    /// CA_Open (or CWR): nothing SACKed, lost or retransmitted outstanding (else Linux's
    /// `tcp_try_to_open` leaves the sender in Disorder); the tail loss probe is armed only here.
    fn open(&self, s: &SenderCore, sc: &Scan) -> bool {
        self.ca.below_recovery() && s.sb.is_empty() && !sc.lost && !sc.retrans && self.reno_sacked == 0
    }

    /// Linux `tcp_enter_recovery` → `tcp_init_cwnd_reduction`: high_seq = snd_nxt, ssthresh
    /// from the controller, prior_cwnd = cwnd, the tail loss probe forgotten, CWR queued on an
    /// ECN connection (`tcp_ecn_queue_cwr`); CA_Recovery. From CA_CWR the reduction under way
    /// goes on ("if (!tcp_in_cwnd_reduction(sk)) ... tcp_init_cwnd_reduction(sk)"): no new
    /// ssthresh, the same high_seq.
    fn enter_recovery(&mut self, s: &mut SenderCore, ece: bool) {
        s.stats.fast_retransmits += 1;
        s.stats.recoveries += 1;
        s.recovery_since.get_or_insert(s.now);
        // "tp->prior_ssthresh = 0; tcp_init_undo(tp); if (!tcp_in_cwnd_reduction(sk)) { if
        // (!ece_ack) tp->prior_ssthresh = tcp_current_ssthresh(sk); tcp_init_cwnd_reduction(sk); }"
        // tcp_retrans_stamp_cleanup: "Start the clock with our fast retransmit".
        self.undo.clear_stamp(s);
        self.undo.prior_ssthresh = 0;
        self.undo.init(s, s.txq.records().filter(|r| r.retrans).count() as u64);
        if self.ca != Ca::Cwr {
            if !ece {
                self.undo.prior_ssthresh = Undo::current_ssthresh(s, false);
            }
            self.undo.prior_cwnd = s.cwnd;
            let prior_cwnd = s.cwnd;
            s.cc_event(CongestionEvent::FastRetransmit(s.loss_context()));
            self.reduction.enter(s.mss, prior_cwnd, s.ssthresh, self.prior_in_flight);
            self.high_seq = s.snd_max;
            self.sent_in_recovery = false;
            s.ecn_cwr_pending |= s.ecn_ok;
        }
        s.recover = s.snd_max;
        s.in_recovery = true;
        self.ca = Ca::Recovery;
        self.tlp.high_seq = None;
        s.loss_reduction(false, true);
    }

    /// `tcp_try_undo_loss`: the timeout proved spurious (`tcp_may_undo`, or F-RTO's proof): the
    /// lost marks cleared, the window restored, CA_Open. The ACK's growth (slow start after the
    /// timeout) comes after the undo in Linux (`tcp_cong_control` follows
    /// `tcp_fastretrans_alert`): undo from the window before this ACK, then grow.
    fn undo_loss(&mut self, s: &mut SenderCore) {
        s.set_recovery_window(self.cwnd_before_ack);
        self.undo.undo(s, true);
        s.consecutive_timeouts = 0;
        s.slow_start_after_rto = false;
        self.ca = Ca::Open;
        self.frto = false;
        self.grow_on_exit(s);
    }

    /// Linux `tcp_process_loss` after its first undo test: F-RTO (RFC 5682 §3.1, the
    /// SACK-enhanced version), then the end of CA_Loss at high_seq.
    fn process_loss(&mut self, s: &mut SenderCore, advanced: bool, dsacking: bool) {
        let recovered = s.snd_una >= self.high_seq;
        if self.frto {
            // "Step 3.b. A timeout is spurious if not all data are lost, i.e., never-retransmitted
            // data are (s)acked" (FLAG_ORIG_SACK_ACKED: a never-retransmitted segment at or
            // below high_seq delivered by this ACK; without SACK, `tcp_clean_rtx_queue` clears it
            // when the ACK also covers a retransmitted segment: the first one it delivers is
            // then not an original).
            let orig = s.txq.reord();
            if orig < self.high_seq && (!self.reno || orig <= self.prior_una) && self.undo.enabled {
                self.undo_loss(s);
                return;
            }
            if s.snd_max > self.high_seq {
                // "Step 3.a. loss was real": a SACK, or a duplicate ACK, after the new data.
                let dupack = !advanced && !dsacking;
                if self.newly_sacked || dupack {
                    self.frto = false;
                }
            } else if advanced && !recovered {
                // "Step 2.b. Try send new data (but deferred until cwnd is updated in
                // tcp_ack()). Otherwise fall back to the conventional recovery."
                self.high_seq = s.snd_max;
                if s.can_send_new() {
                    self.rexmit_new = true;
                    return;
                }
                self.frto = false;
            }
        }
        if recovered {
            // "F-RTO RFC5682 sec 3.1 step 2.a and 1st part of step 3.a": tcp_try_undo_recovery.
            if self.undo.may_undo(s) {
                self.undo.undo(s, false);
            } else {
                s.loss.on_reo_wnd_event(ReoWndEvent::RecoveryKept);
            }
            self.ca = Ca::Open;
            self.frto = false;
        }
    }

    /// Recovery left by an undo (`tcp_try_undo_partial` → `tcp_try_keep_open`, or
    /// `tcp_try_undo_dsack` → `tcp_try_to_open`): CA_Open or Disorder, high_seq = snd_nxt, the
    /// window as the undo left it; then `tcp_cong_control`, outside the reduction now, grows it by
    /// an ACK of new data (`tcp_may_raise_cwnd`: FLAG_DATA_ACKED).
    fn leave_undone(&mut self, s: &mut SenderCore, advanced: bool) {
        s.in_recovery = false;
        s.dupacks = 0;
        self.ca = Ca::Open;
        self.high_seq = s.snd_max;
        self.reduction.end();
        if advanced {
            self.grow_on_exit(s);
        }
    }

    /// Linux `tcp_try_to_open` → `tcp_enter_cwr` on an ACK with ECE (`FLAG_ECE`) in CA_Open or
    /// Disorder, nothing lost (RFC 3168 §6.1.2: the window reduced once per window of data,
    /// nothing retransmitted): `tcp_init_cwnd_reduction` (high_seq = snd_nxt, prior_cwnd = cwnd,
    /// ssthresh from the controller — CUBIC's `cubictcp_recalc_ssthresh`, Reno's
    /// `tcp_reno_ssthresh`, DCTCP's `dctcp_ssthresh` —, CWR on the next new data segment); cwnd
    /// is left where it is and PRR lowers it ACK by ACK (`tcp_cwnd_reduction`).
    fn enter_cwr(&mut self, s: &mut SenderCore) {
        let prior_cwnd = s.cwnd;
        self.undo.prior_cwnd = prior_cwnd;
        s.cc_event(CongestionEvent::Ecn(s.loss_context()));
        s.set_recovery_window(prior_cwnd);
        self.reduction.enter(s.mss, prior_cwnd, s.ssthresh, self.prior_in_flight);
        self.high_seq = s.snd_max;
        self.ca = Ca::Cwr;
        self.sent_in_recovery = false;
        self.tlp.high_seq = None;
        s.ecn_cwr_pending = true;
        s.ecn_high = s.snd_max;
        s.stats.ecn_reductions += 1;
    }

    /// Linux `tcp_end_cwr_cwnd_reduction` (`tcp_fastretrans_alert`, D: "CWR is to be held
    /// something *above* high_seq is ACKed for CWR bit to reach receiver"): cwnd = ssthresh;
    /// CA_Open.
    fn end_cwr(&mut self, s: &mut SenderCore) {
        if s.ssthresh < u64::MAX / 4 {
            s.set_recovery_window(s.ssthresh);
            s.cc_cwnd_stamp();
        }
        self.ca = Ca::Open;
        self.reduction.end();
    }

    /// Linux `tcp_end_cwnd_reduction` on leaving Recovery: "Reset cwnd to ssthresh in CWR or
    /// Recovery (unless it's undone)" (with `undo`: while `undo_marker` is set); CA_Open.
    fn end_recovery(&mut self, s: &mut SenderCore) {
        if s.ssthresh < u64::MAX / 4 && (!self.undo.enabled || self.undo.marker.is_some()) {
            s.set_recovery_window(s.ssthresh);
            s.cc_cwnd_stamp();
        }
        s.in_recovery = false;
        s.dupacks = 0;
        self.ca = Ca::Open;
        self.reduction.end();
    }

    /// The ACK that ends Recovery grows the window. Linux `tcp_ack` runs `tcp_fastretrans_alert`
    /// (which leaves Recovery: `tcp_end_cwnd_reduction` sets cwnd = ssthresh,
    /// `tcp_try_undo_recovery` sets CA_Open) before `tcp_cong_control(sk, ack, delivered, ...)`;
    /// no longer in a reduction, that calls `tcp_cong_avoid` when `tcp_may_raise_cwnd`
    /// (FLAG_DATA_ACKED: this ACK moved snd_una) with what the ACK newly delivered
    /// (`tcp_newly_delivered`: the retransmission it acknowledges and anything not SACKed before),
    /// and CUBIC counts it (`bictcp_cong_avoid`: the epoch starts here, `tcp_cong_avoid_ai`'s
    /// credit) if `tcp_is_cwnd_limited`. The sender's own growth on new data skipped this ACK:
    /// it was still in recovery when the ACK came.
    fn grow_on_exit(&mut self, s: &mut SenderCore) {
        let limited = s.cc_cwnd_limited().unwrap_or(!s.ack_app_limited);
        if !s.ack_ece && self.delivered > 0 {
            s.cc_cwnd_stamp();
            if limited {
                s.cc_on_ack(self.delivered);
            }
        }
    }

    /// Linux `tcp_xmit_retransmit_queue`: the segments marked lost, not SACKed and not already
    /// retransmitted, in sequence order, while in_flight < cwnd.
    fn retransmit_lost(&mut self, s: &mut SenderCore, in_flight: &mut u64, out: &mut Vec<OutSeg>) {
        let mut from = s.snd_una;
        loop {
            let Some(seq) = s.txq.next_lost(from).map(|r| r.start.max(s.snd_una)) else { break };
            let need = if seq >= s.data_end { 1 } else { s.mss.min(s.data_end - seq) };
            if !s.send_gate(0, Ask { used: *in_flight, need, limit: Limit::Cwnd, burst: false, what: SendKind::Window }) {
                break;
            }
            let len = s.retransmit_hole(seq, out).max(1);
            *in_flight += len;
            from = seq + len;
        }
    }

    /// Linux `tcp_write_xmit` after an ACK: new data within cwnd − in_flight (and the receiver's
    /// window, `can_send_new`).
    fn send_new(&mut self, s: &mut SenderCore, in_flight: &mut u64, out: &mut Vec<OutSeg>) -> bool {
        let mut sent = false;
        let mut skb_left = 0u64;
        while s.can_send_new() {
            let need = if s.snd_max >= s.data_end { 1 } else { s.mss.min(s.data_end - s.snd_max) };
            if !s.send_gate(0, Ask { used: *in_flight, need, limit: Limit::Cwnd, burst: false, what: SendKind::Window }) {
                break;
            }
            // tcp_write_xmit's TSO deferral (`tso_defer`, tcp/tso.rs): in Disorder a skb's worth
            // of window, or the next ACK; never in Recovery or Loss.
            if s.cfg.tso_defer && s.snd_max < s.data_end {
                if skb_left == 0 {
                    match s.tso_next_skb(*in_flight) {
                        Ok(n) => {
                            skb_left = n;
                            s.start_skb(n);
                        }
                        Err(_) => break,
                    }
                }
                skb_left -= 1;
            }
            *in_flight += s.send_new(out);
            sent = true;
        }
        sent
    }

    /// Losses found (on an ACK or at the reordering timer): Open → Recovery (Linux
    /// `tcp_time_to_recover`: "the loss is proven", lost_out > 0), the reduction, and the
    /// retransmissions and new data the window allows. Returns whether anything was sent.
    fn repair(&mut self, s: &mut SenderCore, out: &mut Vec<OutSeg>) -> bool {
        // Recovery is entered by the caller (the ACK's state machine, or the reordering timer).
        let sc = self.scan(s);
        let mut in_flight = sc.in_flight;
        if self.ca.in_reduction() {
            // tcp_cong_control → tcp_cwnd_reduction, once per ACK in CWR or Recovery.
            let a = PrrAck { delivered: self.delivered, in_flight, snd_una_advanced: s.snd_una > self.prior_una, newly_lost: s.txq.lost() > self.prior_lost };
            let mut cwnd = self.reduction.on_ack(a, s.cwnd);
            // "Force a fast retransmit upon entering fast recovery": at least one segment while
            // nothing has been sent in this recovery (tcp_cwnd_reduction: sndcnt ≥ 1 while
            // prr_out is 0).
            if !self.sent_in_recovery {
                cwnd = cwnd.max(in_flight + s.mss);
            }
            s.set_recovery_window(cwnd);
        }
        // tcp_tso_should_defer: "if (icsk->icsk_ca_state >= TCP_CA_Recovery) goto send_now".
        s.tso_may_defer = self.ca.below_recovery();
        let before = s.stats.segs_sent + s.fin_tx as u64;
        let bytes_before = s.stats.bytes_sent;
        let mut new_only = false;
        if std::mem::take(&mut self.rexmit_new) {
            // tcp_xmit_recovery(sk, REXMIT_NEW): "__tcp_push_pending_frames(...); if
            // (after(tp->snd_nxt, tp->high_seq)) return; tp->frto = 0;" then the retransmissions.
            self.send_new(s, &mut in_flight, out);
            if s.snd_max > self.high_seq {
                new_only = true;
            } else {
                self.frto = false;
            }
        }
        if !self.ca.below_recovery() && !self.no_rexmit && !new_only {
            self.retransmit_lost(s, &mut in_flight, out);
        }
        let new = if sc.in_flight == s.flight_size() && self.ca == Ca::Open {
            // Nothing SACKed, lost or retransmitted: the connection's own send loop, with its
            // idle restart and window validation (in_flight is FlightSize).
            let n = s.stats.segs_sent;
            s.send_available(out);
            s.stats.segs_sent > n
        } else {
            self.send_new(s, &mut in_flight, out)
        };
        let sent = new || s.stats.segs_sent + s.fin_tx as u64 > before;
        if self.ca.in_reduction() {
            self.sent_in_recovery |= sent;
            self.reduction.on_sent(s.stats.bytes_sent - bytes_before);
        }
        self.prior_lost = s.txq.lost();
        sent
    }

    fn end_ack(&mut self, s: &SenderCore) {
        self.prior_una = s.snd_una;
        self.prior_fack = s.fack();
        self.prior_in_flight = self.scan(s).in_flight;
    }
}

impl Recovery for LinuxRecovery {
    fn name(&self) -> &'static str {
        "linux"
    }

    /// SACK duplicate ACKs (Disorder); no separate Limited Transmit (in Disorder new data goes
    /// out within cwnd − in_flight, which leaves SACKed segments out); the SACK marks survive an
    /// RTO (`tcp_timeout_mark_lost` keeps `TCPCB_SACKED_ACKED` unless the receiver reneged).
    fn caps(&self) -> Caps {
        Caps { sack_dupacks: !self.reno, own_limited_transmit: true, keeps_scoreboard_on_timeout: true, ecn_cwr: true, own_cc_control: true, ..Caps::STANDARD }
    }

    fn on_delivered(&mut self, s: &SenderCore, d: Delivered) {
        self.cwnd_before_ack = s.cwnd;
        self.delivered = d.data;
        self.newly_sacked = d.sacked > 0;
        if self.reno && d.acked > 0 {
            // tcp_clean_rtx_queue → tcp_remove_reno_sacks: "One ACK acked hole. The rest eat
            // duplicate ACKs": delivered max(acked − sacked_out, 1) segments.
            let acked = d.acked.div_ceil(s.mss);
            self.delivered = acked.saturating_sub(self.reno_sacked).max(1) * s.mss;
            self.reno_sacked = self.reno_sacked.saturating_sub(acked - 1);
        }
    }

    /// Without SACK, a duplicate ACK is a segment SACKed (`tcp_add_reno_sack`), delivered.
    fn on_dupack(&mut self, s: &mut SenderCore, _out: &mut Vec<OutSeg>) {
        if self.reno {
            self.delivered = self.add_reno_sack(s) * s.mss;
        }
    }

    fn on_ack_in_recovery(&mut self, _s: &mut SenderCore, _acked: u64, _out: &mut Vec<OutSeg>) -> bool {
        true
    }

    fn recovering(&self, _s: &SenderCore) -> bool {
        self.ca == Ca::Recovery
    }

    /// tcp_cong_control: "if (tcp_in_cwnd_reduction(sk)) tcp_cwnd_reduction(...) else if
    /// (tcp_may_raise_cwnd(sk, flag)) tcp_cong_avoid(...)": no growth in CWR (the ACK that ends
    /// it grows the window in `send`, `grow_on_exit`).
    fn grows_on_new_ack(&self, _s: &SenderCore) -> bool {
        self.ca != Ca::Cwr
    }

    /// Linux `tcp_enter_loss` before the new window: "Reduce ssthresh if it has not yet been made
    /// inside this window" (from Open or Disorder, once high_seq is acknowledged, or on a first
    /// timeout in Loss): the window it had is kept for the undo (`prior_ssthresh` =
    /// `tcp_current_ssthresh`, `prior_cwnd`).
    fn before_timeout(&mut self, s: &mut SenderCore) {
        self.undo.count_retransmits(s);
        self.loss_new = self.ca == Ca::Open || self.high_seq <= s.snd_una || (self.ca == Ca::Loss && s.consecutive_timeouts == 0);
        // "tp->frto = READ_ONCE(net->ipv4.sysctl_tcp_frto) && (new_recovery ||
        // icsk->icsk_retransmits)": a timeout from below Recovery, or a repeated one.
        self.frto_next = self.frto_on && (self.ca.below_recovery() || s.consecutive_timeouts > 0);
        if self.loss_new {
            self.undo.prior_ssthresh = Undo::current_ssthresh(s, self.ca.in_reduction());
            self.undo.prior_cwnd = s.cwnd;
        }
    }

    /// Linux `tcp_enter_loss` (the sender has already taken ssthresh and cwnd from the controller,
    /// marked every unSACKed segment lost and resends the first): CA_Loss until snd_una reaches
    /// high_seq; the probe forgotten. Retransmissions outstanding at the RTO are deemed lost
    /// with the rest (their marks cleared, so they are resent in order).
    fn on_timeout(&mut self, s: &mut SenderCore) {
        if self.loss_new {
            // tcp_init_undo after tcp_timeout_mark_lost: no retransmission in flight but a
            // retransmitted probe's.
            self.undo.init(s, self.tlp.retrans_out() as u64);
        }
        self.reduction.end();
        s.cc_cwnd_stamp();
        self.frto = self.frto_next;
        self.ca = Ca::Loss;
        // tcp_enter_loss: "if (tcp_is_reno(tp)) tcp_reset_reno_sack(tp)".
        self.reno_sacked = 0;
        s.tso_may_defer = false;
        self.high_seq = s.snd_max;
        self.tlp.high_seq = None;
        s.txq.clear_retrans();
    }

    fn send(&mut self, s: &mut SenderCore, out: &mut Vec<OutSeg>) {
        if s.phase != crate::tcp::state::SenderPhase::Established {
            return;
        }
        // Linux's snd_nxt never goes back: retransmissions come from the queue (the RTO's first
        // one was sent by the connection's go-back-N step).
        if s.snd_nxt < s.snd_max {
            s.snd_nxt = s.snd_max;
        }
        let advanced = s.snd_una > self.prior_una;
        self.max_window = self.max_window.max(s.peer_wnd);
        // tcp_sacktag_write_queue → tcp_check_dsack: what the ACK's D-SACK proves; a spurious
        // retransmission is delivered ("state->sack_delivered += dup_segs").
        self.undo.count_retransmits(s);
        let ds = self.undo.read_dsack(s, self.prior_una, self.tlp.high_seq, self.max_window);
        if ds.dsacking {
            s.stats.dsacks_received += 1;
            self.delivered += ds.segs * s.mss;
            s.loss.on_reo_wnd_event(ReoWndEvent::Dsack { tlp: ds.tlp });
        }
        // tcp_ack → tcp_rack_update_reo_wnd(sk, &rs) after tcp_clean_rtx_queue.
        let prior_delivered = s.ack_rate.map_or(0, |r| r.prior_delivered);
        let delivered = s.txq.delivered();
        s.loss.on_reo_wnd_event(ReoWndEvent::Update { prior_delivered, delivered });
        // tcp_fastretrans_alert, A: "ECE, hence prohibit cwnd undoing, the reduction is required."
        if s.ack_ece {
            self.undo.prior_ssthresh = 0;
        }
        // tcp_process_tlp_ack (its reduction is tcp_init_cwnd_reduction's: prior_cwnd = cwnd).
        let (cwnd, probe_recoveries) = (s.cwnd, s.stats.tlp_recoveries);
        self.tlp.on_ack(s, !advanced && !self.newly_sacked, ds.tlp);
        if s.stats.tlp_recoveries > probe_recoveries {
            self.undo.prior_cwnd = cwnd;
        }
        // tcp_fastretrans_alert, D: "State can be terminated when high_seq is ACKed."
        let mut hold = false;
        match self.ca {
            Ca::Recovery if s.snd_una >= self.high_seq => {
                if self.reno {
                    self.reno_sacked = 0;
                }
                // tcp_try_undo_recovery: "Happy end! We did not retransmit anything or our
                // original transmission succeeded" (`tcp_may_undo`: TCPFullUndo).
                if self.undo.may_undo(s) {
                    self.undo.undo(s, false);
                } else {
                    s.loss.on_reo_wnd_event(ReoWndEvent::RecoveryKept);
                }
                // "Hold old state until something *above* high_seq is ACKed. For Reno it is
                // MUST to prevent false fast retransmits (RFC2582)."
                if self.reno && s.snd_una == self.high_seq {
                    hold = true;
                } else {
                    self.end_recovery(s);
                    self.grow_on_exit(s);
                }
            }
            // tcp_process_loss: an ACK of new data first tries the undo ("if ((flag &
            // FLAG_SND_UNA_ADVANCED) ...) && tcp_try_undo_loss(sk, false)": the lost marks
            // cleared, TCPLossUndo, CA_Open); at high_seq, tcp_try_undo_recovery and CA_Open.
            Ca::Loss if advanced && self.undo.may_undo(s) => self.undo_loss(s),
            Ca::Loss => self.process_loss(s, advanced, ds.dsacking),
            // "CWR is to be held something *above* high_seq is ACKed for CWR bit to reach
            // receiver": tcp_end_cwr_cwnd_reduction, CA_Open; then tcp_cong_control grows the
            // window by this ACK as out of Recovery.
            Ca::Cwr if s.snd_una > self.high_seq => {
                self.end_cwr(s);
                self.grow_on_exit(s);
            }
            _ => {}
        }
        // E, the undos of `tcp_fastretrans_alert`: in Recovery tcp_try_undo_partial on an ACK of
        // new data, then tcp_try_undo_dsack (and tcp_try_to_open); in Open and Disorder
        // tcp_try_undo_dsack alone.
        self.no_rexmit = false;
        if self.undo.enabled && !hold {
            match self.ca {
                Ca::Recovery => {
                    if advanced && self.undo.marker.is_some() && self.undo.packet_delayed(s) {
                        // "Plain luck! Hole if filled with delayed packet, rather than with a
                        // retransmit." With retransmissions in flight: "we clock out new packets
                        // but do not mark more packets lost or retransmit more".
                        if scan(s).retrans {
                            self.no_rexmit = true;
                        } else {
                            self.undo.clear_stamp(s);
                            self.undo.undo(s, true);
                            self.leave_undone(s, advanced);
                        }
                    }
                    if self.ca == Ca::Recovery && !self.no_rexmit && self.undo.marker.is_some() && self.undo.retrans == 0 {
                        s.loss.on_reo_wnd_event(ReoWndEvent::UndoDsack);
                        self.undo.undo(s, false);
                        self.undo.clear_stamp(s);
                        self.leave_undone(s, advanced);
                    }
                }
                Ca::Open if self.undo.marker.is_some() && self.undo.retrans == 0 => {
                    s.loss.on_reo_wnd_event(ReoWndEvent::UndoDsack);
                    self.undo.undo(s, false);
                }
                _ => {}
            }
        }
        // E: tcp_identify_packet_loss → tcp_rack_mark_lost, or without SACK
        // tcp_newreno_mark_lost (an ACK of new data outside Recovery first forgets the
        // duplicates: tcp_reset_reno_sack).
        if self.reno {
            // Without SACK RACK does not run: the ACK's never-retransmitted deliveries (read by
            // F-RTO above) are forgotten here.
            s.txq.take_reord();
        }
        let v = if self.no_rexmit {
            Default::default()
        } else if !self.reno {
            s.detect_losses(!self.ca.below_recovery(), self.prior_fack, false)
        } else {
            if advanced && self.ca.below_recovery() {
                self.reno_sacked = 0;
            }
            if !hold {
                self.newreno_mark_lost(s, advanced);
            }
            Default::default()
        };
        s.stats.rack_marked += v.marked as u64;
        // tcp_cong_control → tcp_may_raise_cwnd: "If reordering is high then always grow cwnd
        // whenever data is delivered regardless of its ordering" (tp->reordering above
        // tcp_reordering: FLAG_FORWARD_PROGRESS), so a SACK-only ACK grows it too, by what it
        // delivered, outside a reduction and while cwnd-limited. (An ACK of new data grew it
        // already.)
        if !advanced && self.newly_sacked && self.ca == Ca::Open && s.reordering > s.cfg.dupthresh && !s.ack_ece && !scan(s).lost {
            s.cc_cwnd_stamp();
            if s.cc_cwnd_limited() == Some(true) {
                s.cc_on_ack(self.delivered);
            }
        }
        // tcp_try_to_open: "if (flag & FLAG_ECE) tcp_enter_cwr(sk)" when no loss is proven (a
        // loss takes the sender into Recovery, a reduction too, in `repair`); in CWR already,
        // nothing more (`tcp_enter_cwr` acts only below CA_CWR). A controller that owns the
        // window (BBR) is left to the core's ECN rule (`tcp_cong_control` returns before any
        // reduction for it).
        if self.ca == Ca::Open && s.ecn_ok && s.ack_ece && !s.cc_owns && !self.scan(s).lost {
            self.enter_cwr(s);
        }
        // tcp_fastretrans_alert: a loss marked below Recovery enters it (tcp_enter_recovery).
        if self.ca.below_recovery() && self.scan(s).lost {
            self.enter_recovery(s, s.ack_ece);
        }
        // tcp_ack → tcp_cong_control, after tcp_fastretrans_alert and before tcp_xmit_recovery:
        // a controller that owns the window (BBR's bbr_main) sees this ACK's state and
        // tcp_packets_in_flight.
        if s.cc_owns {
            let ca = match self.ca {
                Ca::Recovery => CaPhase::Recovery,
                Ca::Loss => CaPhase::Loss,
                _ => CaPhase::Open,
            };
            s.cc_control(s.snd_una.saturating_sub(self.prior_una), ca);
        }
        let sent = self.repair(s, out);
        // tcp_fastretrans_alert, D, in CA_Open ("tp->retrans_stamp = 0"), and tcp_try_to_open
        // ("if (!tcp_any_retrans_done(sk)) tp->retrans_stamp = 0").
        if self.ca.below_recovery() {
            self.undo.clear_stamp(s);
        }
        // Timers, as tcp_ack leaves them: RACK's reordering timer if it set one, else (data
        // acknowledged: FLAG_SET_XMIT_TIMER) the probe or the RTO (`tcp_set_xmit_timer`); then
        // the probe after new sends (`tcp_write_xmit` → `tcp_schedule_loss_probe`).
        let sc = self.scan(s);
        let open = self.open(s, &sc);
        if let Some(wait) = v.reo_timeout {
            // tcp_rack_mark_lost: usecs_to_jiffies(timeout + TCP_TIMEOUT_MIN_US), at most the RTO.
            let wait = (wait + TCP_TIMEOUT_MIN).min(s.rtt.rto());
            let at = tlp::xmit_timer_at(s, wait.div_ceil(1000));
            s.reset_xmit_timer(XmitTimer::ReoTimeout, at);
        } else if advanced {
            self.tlp.schedule(s, open, true);
        }
        if sent {
            if s.xmit_timer == XmitTimer::LossProbe {
                tlp::rearm_rto(s, false);
            }
            self.tlp.schedule(s, open, false);
        }
        self.end_ack(s);
    }

    fn after_app_send(&mut self, s: &mut SenderCore) {
        if s.last_send_at != s.now || s.phase != crate::tcp::state::SenderPhase::Established {
            return;
        }
        let sc = self.scan(s);
        let open = self.open(s, &sc);
        if s.xmit_timer == XmitTimer::LossProbe {
            tlp::rearm_rto(s, false);
        }
        self.tlp.schedule(s, open, false);
        self.prior_in_flight = sc.in_flight;
    }

    /// Linux `tcp_write_timer_handler`: the timer armed for RACK (`tcp_rack_reo_timeout`) or the
    /// probe (`tcp_send_loss_probe`).
    fn on_xmit_timer(&mut self, s: &mut SenderCore, kind: XmitTimer, out: &mut Vec<OutSeg>) {
        match kind {
            XmitTimer::LossProbe => self.tlp.fire(s, out),
            XmitTimer::ReoTimeout => {
                s.stats.reo_timeouts += 1;
                self.undo.count_retransmits(s);
                self.no_rexmit = false;
                if s.snd_nxt < s.snd_max {
                    s.snd_nxt = s.snd_max;
                }
                let v = s.detect_losses(!self.ca.below_recovery(), self.prior_fack, true);
                s.stats.rack_marked += v.marked as u64;
                if v.marked > 0 {
                    // "if (inet_csk(sk)->icsk_ca_state != TCP_CA_Recovery) tcp_enter_recovery";
                    // tcp_cwnd_reduction(sk, 1, ...): one segment delivered.
                    if self.ca != Ca::Recovery {
                        // From CWR the reduction under way goes on (`tcp_enter_recovery`).
                        if self.ca != Ca::Cwr {
                            self.ca = Ca::Open;
                        }
                        let sc = self.scan(s);
                        self.prior_in_flight = sc.in_flight;
                        // tcp_rack_reo_timeout: tcp_enter_recovery(sk, false).
                        self.enter_recovery(s, false);
                    }
                    self.delivered = s.mss;
                    self.repair(s, out);
                }
                // "if (inet_csk(sk)->icsk_pending != ICSK_TIME_RETRANS) tcp_rearm_rto(sk)".
                if s.xmit_timer != XmitTimer::Retrans || !s.rto_timer.is_set() {
                    tlp::rearm_rto(s, true);
                }
                self.end_ack(s);
            }
            // The zero-window probe is the sender's (`persist.rs`), never handed here.
            XmitTimer::Retrans | XmitTimer::Probe0 => s.restart_rto(),
        }
    }
}
