//! The data sender of a connection, sans I/O: segments in (`on_segment`), timer expiries in
//! (`on_rto`), segments out (pushed on `out`) and timer deadlines out (`take_timer_events`). The
//! world moves packets and time; tests drive it directly in virtual time.
//!
//! Sequence space: the SYN takes sequence 0 and data starts at 1 (also without a handshake, so
//! that data segment k always covers bytes ((k−1)·MSS, k·MSS] of the transfer). The FIN takes the
//! sequence number after the last data byte.

use super::cc::{CaPhase, CongestionEvent};
use super::config::{LossModel, TcpConfig, Variant};
use super::legacy::{FackNs2, FackRh, Sack1, SackRh};
use super::recovery::{Delivered, LinuxRecovery, NewReno, Recovery, Reno, Rfc6675, Tahoe};
pub use super::state::{OutSeg, SenderCore, SenderPhase, SYN_OPTION_BYTES, UNLIMITED};
use super::persist;
use super::state::{sample_rtt, XmitTimer};
use crate::net::{PacketTag, Segment, FLAG_ACK};
use crate::units::{Time, SEC};

pub struct TcpSender {
    pub core: SenderCore,
    pub rec: Box<dyn Recovery>,
    /// Zero-window probing (`persist.rs`, with `rto_model = "linux"`).
    persist: persist::Persist,
}

/// The recovery of a SACK variant whose peer does not SACK: Linux's own machine on duplicate
/// ACKs (`tcp_is_reno`) where the variant runs Linux's (`loss = "rack"`), else NewReno (RFC
/// 6582), as RFC 6675 §1 leaves it to a sender without SACK information.
fn without_sack(cfg: &TcpConfig) -> Box<dyn Recovery> {
    if cfg.variant == Variant::Sack && cfg.loss == super::config::LossModel::Rack {
        Box::new(LinuxRecovery::without_sack(cfg))
    } else {
        Box::new(NewReno::default())
    }
}

impl TcpSender {
    pub fn new(cfg: impl Into<std::sync::Arc<TcpConfig>>, bytes: Option<u64>) -> Self {
        let cfg: std::sync::Arc<TcpConfig> = cfg.into();
        let rec: Box<dyn Recovery> = match cfg.variant {
            Variant::Tahoe => Box::new(Tahoe),
            Variant::Reno => Box::new(Reno::default()),
            Variant::Newreno => Box::new(NewReno::default()),
            // With RACK, Linux's own state machine (recovery/linux.rs) replaces RFC 6675's.
            Variant::Sack if cfg.loss == super::config::LossModel::Rack => Box::new(LinuxRecovery::new(&cfg)),
            Variant::Sack => Box::new(Rfc6675::new(&cfg)),
            Variant::Sack1 => Box::new(Sack1::default()),
            Variant::FackRh => Box::new(FackRh::default()),
            Variant::Fack => Box::new(FackNs2::default()),
            Variant::SackRh => Box::new(SackRh::default()),
        };
        // Without a handshake SACK is in use exactly when configured; a SACK variant without it
        // recovers as NewReno (as after a SYN-ACK that does not agree to SACK).
        let rec: Box<dyn Recovery> = if cfg.variant.needs_sack() && !cfg.sack && !cfg.handshake { without_sack(&cfg) } else { rec };
        let mut core = SenderCore::new(cfg, bytes);
        core.gbn_skips_sacked = rec.caps().gbn_skips_sacked;
        TcpSender { core, rec, persist: persist::Persist::default() }
    }

    /// The send half of a new connection: nothing written yet, not closed (the application
    /// writes and closes through `write` and `close`).
    pub fn open(cfg: impl Into<std::sync::Arc<TcpConfig>>) -> Self {
        let mut s = TcpSender::new(cfg, Some(0));
        s.core.closed = false;
        s.core.ack_no = 0;
        s
    }

    pub fn phase(&self) -> SenderPhase {
        self.core.phase
    }

    /// The application gives `bytes` more to send.
    pub fn write(&mut self, now: Time, bytes: u64, out: &mut Vec<OutSeg>) {
        self.core.write(now, bytes, out);
        self.rec.after_app_send(&mut self.core);
        persist::check(&self.persist, &mut self.core);
    }

    /// The application will write no more: the FIN follows the last byte (with `cfg.fin`).
    pub fn close(&mut self, now: Time, out: &mut Vec<OutSeg>) {
        let c = &mut self.core;
        c.now = now;
        if !c.closed {
            c.closed = true;
            c.send_available(out);
            self.rec.after_app_send(&mut self.core);
            self.check_done();
        }
    }

    /// The passive opener's send half starts when the handshake completes (the ACK of our
    /// SYN-ACK, RFC 793 §3.4): our SYN-ACK took sequence 0, data starts at 1. `peer_sack`: the
    /// SYN offered SACK-permitted (RFC 2018 §2); `synack_sent`: when the SYN-ACK was sent, if it
    /// was sent once (Karn): its round trip seeds the RTT estimator when the profile takes
    /// handshake samples (RFC 6298 §2.2 allows it; Linux does).
    /// `timestamps`: the SYN carried the timestamps option and this end agreed (RFC 7323 §3.2).
    pub fn open_passive(&mut self, now: Time, peer_sack: bool, timestamps: bool, synack_sent: Option<Time>, synack_retransmits: u32, out: &mut Vec<OutSeg>) {
        let c = &mut self.core;
        c.now = now;
        c.started_at = Some(now);
        if c.cfg.handshake {
            if timestamps {
                c.use_timestamps();
            }
            // RFC 5681 §3.1: a lost SYN-ACK makes the passive end's IW one segment too.
            if iw_one_segment(&c.cfg, synack_retransmits) {
                c.cc_event(CongestionEvent::HandshakeLoss);
            }
            c.sack_ok = c.cfg.sack && peer_sack;
            if !c.sack_ok && c.cfg.variant.needs_sack() {
                self.rec = without_sack(&c.cfg);
            }
            if let Some(sent) = synack_sent.filter(|_| c.cfg.handshake_rtt_sample) {
                let una = c.snd_una;
                sample_rtt(c, sent, now, una);
            }
        }
        c.cc_established();
        let c = &mut self.core;
        c.begin_data(out);
        self.rec.after_app_send(&mut self.core);
        self.check_done();
    }

    /// Timer events the world must schedule (drained).
    pub fn has_timer_events(&self) -> bool {
        !self.core.timer_events.is_empty()
    }

    pub fn take_timer_events(&mut self) -> std::vec::Drain<'_, Time> {
        self.core.timer_events.drain(..)
    }

    /// Open the connection and start sending.
    pub fn start(&mut self, now: Time, out: &mut Vec<OutSeg>) {
        let c = &mut self.core;
        c.now = now;
        c.started_at = Some(now);
        if c.cfg.handshake {
            c.phase = SenderPhase::SynSent;
            c.transmit_syn(out);
        } else {
            c.begin_data(out);
            self.rec.after_app_send(&mut self.core);
        }
        self.check_done();
    }

    /// A segment from the receiver.
    pub fn on_segment(&mut self, now: Time, seg: &Segment, out: &mut Vec<OutSeg>) {
        self.core.now = now;
        match self.core.phase {
            SenderPhase::SynSent => {
                if seg.syn() && seg.has_ack() && seg.ack == 1 {
                    // RFC 2018 §2: SACK is used only if both ends agreed in the handshake. The
                    // SACK variants fall back to NewReno without it (RFC 6675 §1 needs SACK).
                    self.core.sack_ok = self.core.cfg.sack && seg.sack_permitted;
                    // RFC 3168 §6.1.1: ECN is used when our SYN asked (ECE and CWR) and the
                    // SYN-ACK agrees: "ECE flag set and CWR flag not set" (an ECE+CWR SYN-ACK is
                    // not an ECN-setup SYN-ACK).
                    self.core.ecn_ok = self.core.cfg.ecn_asks() && seg.ece() && !seg.cwr();
                    // RFC 7323 §3.2: the option is used when both SYNs carry it.
                    if self.core.cfg.timestamps && seg.ts {
                        self.core.use_timestamps();
                        self.core.ack_tsecr = (seg.tsecr != 0).then_some(seg.tsecr);
                    }
                    if !self.core.sack_ok && self.core.cfg.variant.needs_sack() {
                        self.rec = without_sack(&self.core.cfg);
                    }
                    // RFC 9293 §3.10.7.3 (SYN-SENT, our SYN acknowledged): "SND.WND <- SEG.WND";
                    // Linux tcp_rcv_synsent_state_process(): `tp->snd_wnd = ntohs(th->window)`
                    // (unscaled on a SYN). A zero window holds the first data back.
                    self.core.peer_wnd = if seg.wnd == u32::MAX { u64::MAX / 4 } else { u64::from(seg.wnd) };
                    self.established(out);
                }
            }
            SenderPhase::Established => {
                if seg.syn() || !seg.has_ack() {
                    return; // a retransmitted SYN-ACK: our next segment acknowledges it
                }
                self.on_ack(seg, out);
            }
            SenderPhase::Idle | SenderPhase::Done | SenderPhase::Aborted => {}
        }
    }

    fn established(&mut self, out: &mut Vec<OutSeg>) {
        let c = &mut self.core;
        let now = c.now;
        c.rto_timer.cancel();
        if c.syn_tx == 1 && c.cfg.handshake_rtt_sample {
            let sent = c.syn_sent_at;
            let una = c.snd_una;
            sample_rtt(c, sent, now, una);
        } else if c.syn_tx > 1 && c.cfg.handshake_rtt_sample && c.per_ack_rtt {
            // The SYN was retransmitted (Karn: FLAG_RETRANS_DATA_ACKED), but the SYN-ACK's
            // TSecr still measures it (tcp_ack_update_rtt() with FLAG_SYN_ACKED).
            let una = c.snd_una;
            c.linux_ack_rtt(una, true, 0);
        }
        if c.syn_tx > 1 {
            // RFC 6298 §5.7: after a SYN timeout, the RTO is re-initialised to 3 s when data
            // transmission begins (it is not left at its backed-off value).
            if c.cfg.syn_timeout_rto_3s && c.cfg.rto_initial.0 < 3 * SEC {
                c.rtt.set_rto((3 * SEC).min(c.cfg.rto_max.0));
            }
        }
        // RFC 5681 §3.1 / RFC 3390 §2: if the SYN or SYN-ACK was lost, the IW is one segment
        // (after `iw_one_after` retransmissions of our SYN: Linux waits for the second).
        if iw_one_segment(&c.cfg, c.syn_tx.saturating_sub(1)) {
            c.cc_event(CongestionEvent::HandshakeLoss);
        }
        c.cc_established();
        // ns-2's Fack and SackRH: data starts at cwnd 2 after the SYN (tcp/legacy/).
        super::legacy::syn_ack_opens_cwnd(c);
        let ack_alone = c.cfg.handshake_ack_alone;
        if ack_alone {
            // ns-2 FullTcpAgent::recv(), TCPS_SYN_SENT: a SYN-ACK without data sets TF_ACKNOW and
            // the ACK leaves as a packet of its own before the first data segment (tcp/tcp-full.cc).
            out.push(OutSeg { seg: Segment { seq: 1, ack: c.ack_no, flags: FLAG_ACK, wnd: u32::MAX, ..Default::default() }, tag: PacketTag::Other, edt: 0 });
        }
        c.begin_data(out);
        self.rec.after_app_send(&mut self.core);
        let c = &mut self.core;
        if c.snd_max == 1 && !c.fin_pending() && !ack_alone {
            // Nothing to send: acknowledge the SYN-ACK with a pure ACK.
            out.push(OutSeg { seg: Segment { seq: 1, ack: c.ack_no, flags: FLAG_ACK, wnd: u32::MAX, ..Default::default() }, tag: PacketTag::Other, edt: 0 });
        }
        self.check_done();
    }

    fn on_ack(&mut self, seg: &Segment, out: &mut Vec<OutSeg>) {
        let c = &mut self.core;
        if seg.ack > c.snd_max {
            return; // acknowledges something never sent
        }
        let wnd = if seg.wnd == u32::MAX { u64::MAX / 4 } else { seg.wnd as u64 };
        // RFC 5681 §2 (e): a duplicate ACK advertises the same window as the previous ACK.
        let same_wnd = wnd == c.peer_wnd;
        c.peer_wnd = wnd;
        // tcp_ack → tcp_ack_probe: the window the zero-window probe waited for.
        if c.xmit_timer == XmitTimer::Probe0 || self.persist.probes_out > 0 {
            persist::on_ack(&mut self.persist, c);
        }
        let advanced = seg.ack > c.snd_una;
        // Linux's sender reads D-SACK blocks whatever its own `tcp_dsack` (the Linux recovery,
        // `loss = "rack"`, uses them: recovery/undo.rs).
        c.ack_dsack = if seg.n_sack > 0 && c.sack_ok && c.cfg.loss == LossModel::Rack { dsack_block(seg) } else { None };
        // RFC 6675 §3 Update(): record the SACK blocks first.
        // RFC 6937's DeliveredData needs the change in SACKed bytes, not only the new ones.
        let (blocks, n_blocks) = if seg.n_sack > 0 { c.sacktag_blocks(seg) } else { Default::default() };
        let blocks = &blocks[..n_blocks];
        let (newly_sacked, sacked_change) = if c.sack_ok && !c.sack_ignored {
            let before = if c.sb.is_empty() { 0 } else { c.sb.sacked_bytes() };
            let n = c.sb.update(seg.ack.max(c.snd_una), c.snd_max, blocks);
            (n, c.sb.sacked_bytes() as i64 - before as i64)
        } else {
            (0, 0)
        };
        c.ack_sacked = newly_sacked;
        c.ack_rtt = None;
        c.ack_maybe_delayed = false;
        if c.cc_owns {
            // tcp_ack's prior_in_flight: before this ACK's SACKs and loss marks (the transmit
            // record has not taken them yet; the scoreboard has, so they are added back).
            c.ack_prior_pipe = if c.linux_marks() {
                c.txq.in_flight(c.snd_una)
            } else {
                c.flight_size().saturating_sub(c.sb.sacked_bytes().saturating_sub(newly_sacked))
            };
        }
        c.ack_ece = c.ecn_ok && seg.ece();
        c.ack_tsecr = if c.ts_on && seg.ts && seg.tsecr != 0 { Some(seg.tsecr) } else { None };
        // The transmit record (tcp/txq.rs): records the ACK delivers, SACKed or cumulatively.
        if c.txq_on {
            c.txq_ack(seg, blocks, advanced, newly_sacked);
        }
        if advanced {
            c.sack_ignored = false;
        }
        // RFC 5681 §2 duplicate ACK: no data, no SYN/FIN, the ACK number equal to the greatest
        // received (an older, reordered ACK is none), data outstanding, same advertised window.
        let classic_dup = !advanced && seg.ack == c.snd_una && seg.len == 0 && !seg.fin() && c.snd_max > c.snd_una && same_wnd;
        let acked = if advanced { seg.ack - c.snd_una } else { 0 };
        let data = (acked as i64 + sacked_change).max(0) as u64;
        self.rec.on_delivered(c, Delivered { acked, sacked: newly_sacked, data });
        if advanced {
            self.on_new_ack(seg.ack, data, out);
        }
        let c = &mut self.core;
        // RFC 6675 §2: with SACK, a duplicate ACK is one whose SACK blocks report new data
        // (cumulative or not); the older SACK senders count RFC 5681 duplicates.
        let dup = if c.sack_ok && self.rec.caps().sack_dupacks { newly_sacked > 0 && c.snd_max > c.snd_una } else { classic_dup };
        if dup {
            c.dupacks += 1;
            // RFC 3042 §2 as the loss detector applies it (tcp/loss/), unless the recovery
            // strategy sends its own segments on these duplicate ACKs.
            if !self.rec.caps().own_limited_transmit {
                c.limited_transmit(newly_sacked, out);
            }
            self.rec.on_dupack(c, out);
        }
        // RFC 3168 §6.1.2 after the loss processing (a reduction for a loss this ACK detected
        // makes the ECE one of the same window), before the sends, so that CWR rides on the
        // next new data.
        if c.ecn_ok {
            let ece = c.ack_ece;
            // Linux's recovery machine enters CWR itself (`tcp_try_to_open` → `tcp_enter_cwr`),
            // except for a controller that owns the window (BBR's `cong_control` ignores the
            // CWR state's reduction).
            let react = !(self.rec.caps().ecn_cwr && !c.cc_owns);
            c.ecn_ack(acked + newly_sacked, ece, react);
        }
        // Linux `tcp_ack` → `tcp_cong_control`: a controller with `cong_control` (BBR) sees
        // every ACK, after loss detection and before the recovery's sends (`tcp_xmit_recovery`).
        if c.cc_owns && !self.rec.caps().own_cc_control {
            let ca = if self.rec.recovering(c) {
                CaPhase::Recovery
            } else if c.slow_start_after_rto && c.snd_una < c.recover {
                CaPhase::Loss
            } else {
                CaPhase::Open
            };
            c.cc_control(acked, ca);
        }
        // ns-2 `recv()`: send_much() after a valid ACK (at or above snd_una), or after any with
        // `aggressive_maxburst_` (tcp/tcp.cc).
        if self.core.cfg.aggressive_maxburst || seg.ack >= self.core.snd_una {
            self.rec.send(&mut self.core, out);
        }
        persist::check(&self.persist, &mut self.core);
        self.check_done();
    }

    /// An ACK of new data: `ack`, the new snd_una; `delivered`, the bytes it newly delivers
    /// (cumulatively acknowledged and not SACKed before, plus newly SACKed).
    fn on_new_ack(&mut self, ack: u64, delivered: u64, out: &mut Vec<OutSeg>) {
        let c = &mut self.core;
        let acked = ack - c.snd_una;
        // Was the window the limit when this ACK came (could not another full segment be sent)?
        // If the receiver window or the application held the sender back, cwnd does not grow
        // (RFC 7661 §4.3, as RFC 2861 and Linux): an unused window is not a validated one.
        // With Linux's window validation the controller answers from the send rounds it saw
        // (`tcp_is_cwnd_limited`: in slow start, cwnd < 2·max_packets_out also lets it grow).
        let linux_gate = c.cc_cwnd_limited();
        let cwnd_limited = linux_gate.unwrap_or_else(|| c.flight_size() + c.mss > c.cwnd);
        c.ack_app_limited = !cwnd_limited;
        // Linux `tcp_ack` → `tcp_cong_control(sk, ack, delivered, ...)`: the window grows by what
        // the ACK newly delivered (`tcp_newly_delivered`), so a segment SACKed earlier is not
        // counted again when the cumulative ACK passes it. Elsewhere by the bytes cumulatively
        // acknowledged (RFC 5681 §3.1, RFC 3465).
        let grow_by = match linux_gate {
            None => acked,
            // Without SACK, Linux counts each duplicate ACK as one segment delivered
            // (`tcp_add_reno_sack`: sacked_out += 1, at most packets_out − 1 by
            // `tcp_limit_reno_sacked`), and the cumulative ACK after them as delivering
            // max(acked − sacked_out, 1) (`tcp_remove_reno_sacks`: "One ACK acked hole. The
            // rest eat duplicate ACKs.").
            Some(_) if !c.sack_ok && c.dupacks > 0 => {
                let sacked_out = (c.dupacks as u64 * c.mss).min(c.flight_size().saturating_sub(c.mss));
                acked.saturating_sub(sacked_out).max(acked.min(c.mss))
            }
            Some(_) => delivered,
        };
        if c.per_ack_rtt {
            c.linux_ack_rtt(ack, true, acked);
        } else if let Some((end, sent)) = c.timed {
            if ack >= end {
                let now = c.now;
                sample_rtt(c, sent, now, ack);
                c.ack_rtt = Some(now - sent);
                c.timed = None;
            }
        }
        // After the RTT sample, so that a rate sample is checked against the smallest RTT.
        if c.txq_on {
            c.take_ack_samples();
        }
        let data_acked = ack.min(c.data_end) - c.snd_una.min(c.data_end);
        c.stats.bytes_acked += data_acked;
        c.prev_una = c.snd_una;
        c.snd_una = ack;
        if c.snd_nxt < c.snd_una {
            c.snd_nxt = c.snd_una;
        }
        c.consecutive_timeouts = 0;
        c.limited_transmit_bytes = 0;
        if c.cwnd >= c.ssthresh {
            c.slow_start_after_rto = false;
        }
        if ack < c.data_end {
            // Only when something lies below (split_off of a map with nothing to prune is the
            // same map, and allocating it per ACK was a measurable cost).
            let first = c.segment_number(ack);
            if c.tx_count.first_key_value().is_some_and(|(&k, _)| k < first) {
                c.tx_count = c.tx_count.split_off(&first);
            }
        }
        if c.episode.is_some_and(|e| c.snd_una >= e.end) {
            c.close_episode();
        }
        if let Some(t0) = c.recovery_since {
            if c.snd_una >= c.recover {
                c.stats.recovery_ns += (c.now - t0) as u128;
                c.recovery_since = None;
            }
        }
        let restart = if c.in_recovery {
            self.rec.on_ack_in_recovery(c, acked, out)
        } else {
            c.dupacks = 0;
            self.rec.on_new_ack_outside_recovery(c);
            // RFC 3168 §6.1.2: "The sending TCP SHOULD NOT increase the congestion window in
            // response to the receipt of an ECN-Echo ACK packet."
            // `grow_when_not_cwnd_limited`: ns-2's recv_newack_helper() → opencwnd() whatever
            // the window's use (tcp/tcp.cc).
            if !c.ack_ece && self.rec.grows_on_new_ack(c) {
                c.cc_cwnd_stamp();
                if cwnd_limited || c.cfg.grow_when_not_cwnd_limited {
                    c.cc_on_ack(grow_by);
                }
            }
            true
        };
        // RFC 6298 §5.2–5.3: stop the timer when all data is acknowledged, else restart it.
        if c.snd_una >= c.snd_max {
            c.rto_timer.cancel();
        } else if restart {
            c.rto_timer.cancel();
            c.arm_rto();
        }
    }

    fn check_done(&mut self) {
        let c = &mut self.core;
        if c.phase == SenderPhase::Established && c.closed && c.snd_una >= c.final_seq() {
            c.close(SenderPhase::Done);
        }
    }

    /// The pacing timer expired (Linux's `tcp_pace_kick` → `tcp_tsq_handler`): send what the
    /// pacer held back.
    pub fn on_pacing_timer(&mut self, now: Time, out: &mut Vec<OutSeg>) {
        self.core.now = now;
        if self.core.phase == SenderPhase::Established {
            self.rec.send(&mut self.core, out);
            self.check_done();
        }
    }

    /// The retransmission timer expired (the world has checked it is not stale).
    pub fn on_rto(&mut self, now: Time, out: &mut Vec<OutSeg>) {
        let c = &mut self.core;
        c.now = now;
        // The one timer armed for RACK's reordering timer or the tail loss probe (Linux
        // `icsk_pending`): the recovery strategy that armed it handles it.
        if c.xmit_timer == XmitTimer::Probe0 {
            persist::on_timer(&mut self.persist, c, out);
            return;
        }
        if c.xmit_timer != XmitTimer::Retrans && c.phase == SenderPhase::Established {
            let kind = c.xmit_timer;
            self.rec.on_xmit_timer(c, kind, out);
            self.check_done();
            return;
        }
        match c.phase {
            SenderPhase::SynSent if syn_gives_up(c) => self.abort(),
            SenderPhase::Established if c.snd_una < c.snd_max && c.consecutive_timeouts >= c.cfg.data_retries => self.abort(),
            SenderPhase::SynSent => {
                // RFC 6298 §5.5 backoff applies to the SYN too (RFC 1122 §4.2.3.1); Linux keeps
                // the RTO for the first `tcp_syn_linear_timeouts` expiries (`tcp_retransmit_timer`:
                // "Use normal (exponential) backoff unless linear timeouts are activated").
                c.stats.syn_retransmits += 1;
                c.cc_event(CongestionEvent::SynTimeout);
                if c.stats.syn_retransmits > c.cfg.syn_linear_timeouts as u64 {
                    c.rtt.back_off();
                }
                c.transmit_syn(out);
            }
            SenderPhase::Established if c.snd_una < c.snd_max => {
                c.stats.timeouts += 1;
                if let Some(t0) = c.recovery_since.take() {
                    c.stats.recovery_ns += (now - t0) as u128;
                }
                // RFC 5681 §3.1: a new ssthresh (held on a repeated expiry) and the loss window
                // of one segment; the controller decides (cc/reno.rs).
                self.rec.before_timeout(c);
                let reduced_in_window = c.episode.is_some_and(|e| e.reductions > 0);
                let inflation = self.rec.window_inflation(c);
                c.cc_event(CongestionEvent::Timeout { ctx: c.loss_context(), first: c.consecutive_timeouts == 0, reduced_in_window, inflation });
                c.consecutive_timeouts += 1;
                // RFC 8985 §6.3 / Linux `tcp_timeout_mark_lost()`: everything outstanding and not
                // SACKed is lost.
                c.txq.mark_lost(c.snd_una, c.snd_max);
                c.loss_reduction(true, c.consecutive_timeouts == 1);
                c.slow_start_after_rto = true;
                c.limited_transmit_bytes = 0;
                c.in_recovery = false;
                c.dupacks = 0;
                // RFC 6582 §3.2 step 4 (and RFC 6675 §5.1): after a timeout, recover = HighData.
                c.recover = c.snd_max;
                // RFC 2018 §8, RFC 6675 §5.1: the receiver may have reneged; the scoreboard is
                // expunged and rebuilt from the ACKs that follow (ns-2's SackRH keeps it).
                if !self.rec.caps().keeps_scoreboard_on_timeout {
                    c.sb.clear();
                }
                self.rec.on_timeout(c);
                // RFC 6298 §5.5–5.6: back off, retransmit the earliest unacknowledged segment,
                // restart the timer. Everything after it is resent as the window opens (go-back-N).
                c.rtt.back_off();
                c.timed = None;
                c.snd_nxt = c.snd_una;
                c.send_available(out);
            }
            _ => {}
        }
    }
}

impl TcpSender {
    /// RFC 1122 §4.2.3.5: after R2 retransmissions the connection is closed.
    fn abort(&mut self) {
        self.core.close(SenderPhase::Aborted);
    }
}


impl TcpSender {
    /// Close the time integrals at the end of the run.
    pub fn finish(&mut self, now: Time) {
        self.core.now = now;
        self.core.integrate_cwnd();
    }
}

/// RFC 2883 §4 as Linux's `tcp_check_dsack` reads it: the first SACK block is a D-SACK when it
/// starts below the ACK number ("before(start_seq_0, ack_seq)"), or when it lies inside the
/// second block.
fn dsack_block(seg: &Segment) -> Option<(u64, u64)> {
    let b = seg.sack_blocks();
    let b0 = b.first()?;
    let inside_second = b.get(1).is_some_and(|b1| b0.right <= b1.right && b0.left >= b1.left);
    (b0.left < seg.ack || inside_second).then_some((b0.left, b0.right))
}

/// Whether the SYN's timer expiring now ends the attempt: after `syn_retries` retransmissions
/// (RFC 1122 §4.2.3.5), or, with Linux's linear SYN timeouts, once the time the doubling schedule
/// of `syn_retries` retransmissions would take has passed since the first SYN (`tcp_write_timeout`
/// → `retransmits_timed_out(sk, tcp_syn_retries, 0)` → `tcp_model_timeout`: (2^(n+1) − 1)·RTO₀,
/// then RTO_MAX a retry beyond its cap). With the linear ones the kernel sends more SYNs within
/// that time: 10 for 6 retries (127 s), 5 for 2 (7 s), as measured on it (docs/tbit.md).
fn syn_gives_up(c: &super::state::SenderCore) -> bool {
    if c.cfg.syn_linear_timeouts == 0 {
        return c.syn_tx > c.cfg.syn_retries;
    }
    let base = c.cfg.rto_initial.0.max(1);
    let thresh = (c.cfg.rto_max.0 / base).max(1).ilog2();
    let n = c.cfg.syn_retries;
    let budget = if n <= thresh { ((2u64 << n) - 1) * base } else { ((2u64 << thresh) - 1) * base + (n - thresh) as u64 * c.cfg.rto_max.0 };
    c.syn_tx > 1 && c.started_at.is_some_and(|t0| c.now.saturating_sub(t0) >= budget)
}

/// RFC 5681 §3.1: the initial window is one segment once this end retransmitted its SYN or
/// SYN-ACK `tcp.iw_one_after` times (0: never).
fn iw_one_segment(cfg: &crate::tcp::TcpConfig, handshake_retransmits: u32) -> bool {
    cfg.iw_one_after > 0 && handshake_retransmits >= cfg.iw_one_after
}
