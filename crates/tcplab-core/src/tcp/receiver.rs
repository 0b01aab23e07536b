//! The data receiver of a connection, sans I/O: answers the SYN, reassembles data in order,
//! delivers it to the application, and acknowledges it — delayed (RFC 1122 §4.2.3.2, RFC 5681
//! §4.2) or every segment — or as Linux 6.x does (`delack_model = "linux"`, `linux_ack.rs`). The
//! window it advertises is `rwnd`, or Linux's receive buffer (`rcv_buffer = "linux"`, `rcvbuf.rs`).

use super::config::{Cc, DelackModel, RcvBuffer, TcpConfig};
use super::jiffies::Jiffies;
use super::linux_ack::{AckNow, LinuxAck, TimerOutcome, ECN_QUICKACKS, FLAG_PSH, MAX_QUICKACKS};
use super::rcvbuf::RcvBuf;
use super::rtt::timer_deadline;
use super::state::OutSeg;
use super::stats::ConnStats;
use crate::engine::Timer;
use crate::net::{PacketTag, SackBlock, Segment, ECN_ECT0, FLAG_ACK, FLAG_ECE, FLAG_SYN};
use crate::units::Time;

/// The receiver's two timers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RxTimer {
    DelAck,
    SynAck,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReceiverPhase {
    Listen,
    SynReceived,
    Established,
}

pub struct TcpReceiver {
    /// The configuration, one copy shared by the connections configured alike.
    cfg: std::sync::Arc<TcpConfig>,
    pub phase: ReceiverPhase,
    pub now: Time,
    /// Next sequence number expected (RFC 793 RCV.NXT).
    pub rcv_nxt: u64,
    /// Received ranges above rcv_nxt, sorted and disjoint: [left, right).
    pub ooo: Vec<(u64, u64)>,
    /// For each range of `ooo`, when it last received a segment (a counter): RFC 2018 §4 orders
    /// SACK blocks by how recently they changed.
    ooo_touched: Vec<u64>,
    touch_clock: u64,
    /// SACK blocks are sent (RFC 2018: the SYN offered SACK-permitted and we agreed, or the
    /// option is configured for a flow without a handshake).
    pub sack_on: bool,
    /// The D-SACK block the next ACK reports first (RFC 2883 §4; Linux `tp->duplicate_sack[0]`
    /// with `rx_opt.dsack`, sent once: `tcp_options_write` clears it): a duplicate segment's range.
    dsack: Option<(u64, u64)>,
    /// In-order data segments received since the last ACK, and their bytes.
    unacked_segs: u32,
    unacked_bytes: u64,
    pub delack_timer: Timer,
    /// SYN-ACK retransmission timer: initial RTO, backed off (RFC 6298 §5.5, RFC 1122 §4.2.3.1).
    pub synack_timer: Timer,
    synack_rto: Time,
    synack_tx: u32,
    timer_events: Vec<(RxTimer, Time)>,
    pub fin_received: bool,
    /// Where the FIN sits (the sequence number after the last data byte), once one has arrived;
    /// an out-of-order FIN is held until the data before it is complete.
    fin_seq: Option<u64>,
    /// When the first data byte arrived.
    pub first_byte_at: Option<Time>,
    /// The peer's initial sequence number is known (its SYN or SYN-ACK, or, without a handshake,
    /// its first data): our segments then acknowledge RCV.NXT.
    pub synced: bool,
    /// The sequence number our pure ACKs carry (the send half's SND.MAX, kept current by the
    /// connection; 1 for a receiver that sends no data).
    pub seq_no: u64,
    /// When the SYN-ACK was last sent.
    pub synack_sent_at: Time,
    pub stats: ConnStats,
    /// Linux's ACK policy (`delack_model = "linux"` with delayed ACKs).
    pub linux: Option<Box<LinuxAck>>,
    /// Linux's receive buffer and window (`rcv_buffer = "linux"`), and whether
    /// `tcp_init_buffer_space` has run (at the handshake's end).
    pub rcvbuf: Option<Box<RcvBuf>>,
    rcvbuf_ready: bool,
    /// ECN is in use (RFC 3168 §6.1.1: the peer's SYN asked and our SYN-ACK agreed, or the
    /// other way round; without a handshake, when this end accepts ECN).
    pub ecn_on: bool,
    /// Our ACKs carry ECE (Linux `TCP_ECN_DEMAND_CWR`): from a CE-marked data segment until a
    /// CWR arrives (RFC 3168 §6.1.3); with DCTCP, exactly while the last data segment was CE.
    pub ece_pending: bool,
    /// DCTCP's receiver (RFC 8257 §3.2, Linux `dctcp_ece_ack_update`): the CE state of the last
    /// data segment, and RCV.NXT after it (`prior_rcv_nxt`).
    dctcp: bool,
    ce_state: bool,
    /// Linux `TCP_ECN_SEEN` (`delack_model = "linux"`): new data has arrived ECT or CE.
    ecn_seen: bool,
    /// `tp->last_oow_ack_time`, jiffies: when the last challenge ACK went (Linux's per-socket
    /// limit, `__tcp_oow_rate_limited`).
    last_oow_ack: Option<u64>,
}

impl TcpReceiver {
    pub fn new(cfg: impl Into<std::sync::Arc<TcpConfig>>) -> Self {
        let cfg: std::sync::Arc<TcpConfig> = cfg.into();
        let synack_rto = cfg.rto_initial.0;
        let mut r = TcpReceiver {
            phase: if cfg.handshake { ReceiverPhase::Listen } else { ReceiverPhase::Established },
            now: 0,
            rcv_nxt: 1,
            ooo: Vec::new(),
            ooo_touched: Vec::new(),
            touch_clock: 0,
            sack_on: cfg.sack && !cfg.handshake,
            dsack: None,
            unacked_segs: 0,
            unacked_bytes: 0,
            delack_timer: Timer::default(),
            synack_timer: Timer::default(),
            synack_rto,
            synack_tx: 0,
            timer_events: Vec::new(),
            fin_received: false,
            fin_seq: None,
            first_byte_at: None,
            synced: false,
            seq_no: 1,
            synack_sent_at: 0,
            stats: ConnStats::default(),
            ecn_on: cfg.ecn_accepts() && !cfg.handshake,
            ece_pending: false,
            dctcp: cfg.cc == Cc::Dctcp,
            ce_state: false,
            ecn_seen: false,
            last_oow_ack: None,
            linux: None,
            rcvbuf: None,
            rcvbuf_ready: false,
            cfg,
        };
        // The payload of a full segment: the MSS less the timestamps option (Linux's tp->advmss
        // and mss_cache once timestamps are agreed, `tcp_rcv_synsent_state_process`,
        // `tcp_create_openreq_child`).
        let ts_opt = if r.cfg.timestamps { crate::net::TS_OPTION_BYTES as u64 } else { 0 };
        let seg_mss = r.cfg.mss.0 - ts_opt;
        if r.cfg.rcv_buffer == RcvBuffer::Linux {
            // tcp_select_initial_window() on the payload MSS.
            r.rcvbuf = Some(Box::new(RcvBuf::new(seg_mss, r.cfg.rwnd.get())));
        }
        if r.cfg.delack_model == DelackModel::Linux {
            let wnd = r.rcvbuf.as_ref().map_or(r.cfg.rwnd.get(), |b| Some(b.rcv_wnd));
            // tcp_initialize_rcv_mss(): min(advmss, mss_cache, rcv_wnd/2, TCP_MSS_DEFAULT), both
            // the payload MSS.
            let mut l = LinuxAck::new(Jiffies::of(&r.cfg), seg_mss, wnd, r.cfg.comp_sack_nr, r.cfg.rto_initial.0);
            l.hdr_opt = ts_opt;
            // Without delayed ACKs, Linux's receiver with the route's `quickack 1`.
            l.dst_quick_ack = !r.cfg.delayed_ack;
            r.linux = Some(Box::new(l));
        }
        if !r.cfg.handshake {
            r.init_rcvbuf(0);
        }
        r
    }

    /// tcp_init_buffer_space() once the connection is established.
    fn init_rcvbuf(&mut self, now: Time) {
        if self.rcvbuf_ready {
            return;
        }
        self.rcvbuf_ready = true;
        if let Some(b) = &mut self.rcvbuf {
            b.init_buffer_space(now, self.rcv_nxt);
        }
    }

    /// The receive half of the active opener: no SYN to answer; synchronised by the SYN-ACK
    /// (the connection marks it) or, without a handshake, by the peer's first data.
    pub fn new_active(cfg: impl Into<std::sync::Arc<TcpConfig>>) -> Self {
        let mut r = TcpReceiver::new(cfg);
        r.phase = ReceiverPhase::Established;
        r
    }

    /// The acknowledgment number of a segment we send: RCV.NXT once synchronised, else 0.
    pub fn ack_value(&self) -> u64 {
        if self.synced {
            self.rcv_nxt
        } else {
            0
        }
    }

    /// The SYN-ACK was sent once (its round trip is a valid RTT sample, RFC 6298 §3 / Karn).
    /// SYN-ACKs sent beyond the first.
    pub fn synack_retransmits(&self) -> u32 {
        self.synack_tx.saturating_sub(1)
    }

    pub fn synack_sent_once(&self) -> bool {
        self.synack_tx == 1
    }

    /// An ACK is owed (in-order data not yet acknowledged, the delayed-ACK timer running).
    pub fn owes_ack(&self) -> bool {
        self.unacked_segs > 0 || self.linux.as_ref().is_some_and(|l| l.scheduled)
    }

    /// This end's SRTT and RTO (from its send half), which bound Linux's ACK timeout
    /// (`tcp_send_delayed_ack`, `tcp_event_data_recv`).
    #[inline]
    pub fn set_rtt(&mut self, srtt: Option<Time>, rto: Time) {
        if let Some(l) = &mut self.linux {
            l.srtt = srtt;
            l.rto = rto;
        }
    }

    /// A data segment of the send half carried our acknowledgment: a delayed ACK is no longer
    /// owed (RFC 1122 §4.2.3.2: the ACK rides on the data).
    pub fn piggybacked(&mut self) {
        if let Some(l) = &mut self.linux {
            l.on_ack_sent(self.rcv_nxt);
        }
        if self.unacked_segs > 0 {
            self.unacked_segs = 0;
            self.unacked_bytes = 0;
            self.delack_timer.cancel();
        }
    }

    /// Timer events the world must schedule (drained).
    pub fn has_timer_events(&self) -> bool {
        !self.timer_events.is_empty()
    }

    pub fn take_timer_events(&mut self) -> std::vec::Drain<'_, (RxTimer, Time)> {
        self.timer_events.drain(..)
    }

    fn wnd(&self) -> u32 {
        if let Some(b) = &self.rcvbuf {
            // tcp_select_window(): tp->rcv_wnd keeps the window chosen, the header carries at
            // most 65535 << rcv_wscale ("Make sure we do not exceed the maximum possible scaled
            // window"), which binds with a small route window (wscale 0 below 64 KB).
            return b.rcv_wnd.min(65_535 << b.wscale).min(u32::MAX as u64 - 1) as u32;
        }
        self.cfg.rwnd.get().map_or(u32::MAX, |w| w.min(u32::MAX as u64 - 1) as u32)
    }

    /// tcp_select_window() for the ACK about to leave (before tcp_event_ack_sent).
    fn select_window(&mut self) {
        if let Some(b) = &mut self.rcvbuf {
            let (wup, rcv_mss) = self.linux.as_ref().map_or((self.rcv_nxt, self.cfg.mss.0), |l| (l.rcv_wup, l.rcv_mss));
            let (_, quick_off) = b.select_window(self.rcv_nxt, wup, rcv_mss);
            if let Some(l) = &mut self.linux {
                if quick_off {
                    // __tcp_select_window(): "free_space < (full_space >> 1)": icsk_ack.quick = 0.
                    l.quick = 0;
                }
                l.rcv_wnd = b.rcv_wnd;
            }
        }
    }

    fn send_ack(&mut self, out: &mut Vec<OutSeg>) {
        self.select_window();
        if let Some(l) = &mut self.linux {
            l.on_ack_sent(self.rcv_nxt);
        }
        self.stats.acks_sent += 1;
        self.unacked_segs = 0;
        self.unacked_bytes = 0;
        self.delack_timer.cancel();
        let mut seg = Segment { seq: self.seq_no, ack: self.rcv_nxt, flags: FLAG_ACK, wnd: self.wnd(), ..Default::default() };
        if self.ecn_on {
            // RFC 3168 §6.1.3: ECE on every ACK while a CE is unanswered; pure ACKs are not
            // ECN-capable (§6.1.4), except from a controller that needs ECN (Linux
            // `tcp_ecn_send` with `tcp_ca_needs_ecn`).
            if self.ece_pending {
                seg.flags |= FLAG_ECE;
            }
            if self.dctcp {
                seg.ip_ecn = ECN_ECT0;
            }
        }
        if self.sack_on {
            self.fill_sack(&mut seg);
        }
        out.push(OutSeg { seg, tag: PacketTag::Ack { k: self.stats.acks_sent }, edt: 0 });
    }

    /// Linux's `tcp_send_challenge_ack` (RFC 5961 §7, ACK throttling): a pure ACK of RCV.NXT,
    /// unless the last one went less than `tcp_invalid_ratelimit` (500 ms, HZ/2) ago
    /// (`__tcp_oow_rate_limited`, in jiffies). The host-wide budget is off
    /// (`tcp_challenge_ack_limit` = INT_MAX, the 6.x default). Returns whether it was sent.
    pub fn challenge_ack(&mut self, now: Time, out: &mut Vec<OutSeg>) -> bool {
        self.now = now;
        let j = Jiffies::of(&self.cfg);
        let at = j.at(now);
        if self.last_oow_ack.is_some_and(|last| at - last < j.hz_div(2)) {
            return false;
        }
        self.last_oow_ack = Some(at);
        self.send_ack(out);
        true
    }

    /// RFC 2018 §4: the first block holds the segment that triggered this ACK (the most recently
    /// changed range), the others repeat the most recently reported ones, most recent first; as
    /// many as fit (`sack_blocks`). Ranges keep the recency of their last change, so a range
    /// that grows moves to the front and merged ranges keep the newer mark.
    /// With D-SACK (`dsack`, RFC 2883 §4) a pending duplicate's range goes first and the ordinary
    /// blocks follow, as many as still fit (Linux `tcp_established_options`: `num_sacks +
    /// rx_opt.dsack` blocks within the option space; `tcp_options_write` writes
    /// `duplicate_sack` then `selective_acks`). It is reported once.
    fn fill_sack(&mut self, seg: &mut Segment) {
        let mut idx: Vec<usize> = (0..self.ooo.len()).collect();
        idx.sort_unstable_by_key(|&i| std::cmp::Reverse(self.ooo_touched[i]));
        let room = (self.cfg.sack_blocks as usize).min(crate::net::MAX_SACK_BLOCKS);
        let mut blocks = [SackBlock::default(); crate::net::MAX_SACK_BLOCKS];
        let d = match self.dsack.take() {
            Some((l, r)) => {
                blocks[0] = SackBlock { left: l, right: r };
                self.stats.dsacks_sent += 1;
                1
            }
            None => 0,
        };
        let n = idx.len().min(room - d);
        // Linux's out-of-order skb ends at end_seq, which counts a FIN (`tcp_data_queue_ofo` →
        // `tcp_sack_new_ofo_skb(sk, seq, end_seq)`): a block ending where a held FIN sits covers
        // the FIN's sequence number too, and the sender counts that segment SACKed whole.
        let held_fin = if self.linux.is_some() && !self.fin_received { self.fin_seq } else { None };
        for (k, &i) in idx[..n].iter().enumerate() {
            let (l, r) = self.ooo[i];
            let r = if held_fin == Some(r) { r + 1 } else { r };
            blocks[d + k] = SackBlock { left: l, right: r };
        }
        seg.set_sack_blocks(&blocks[..d + n]);
        seg.sack_trim = if !self.cfg.sack_option_header {
            4
        } else if !self.cfg.sack_option_padding {
            2
        } else {
            0
        };
    }

    fn send_synack(&mut self, out: &mut Vec<OutSeg>) {
        self.synack_tx += 1;
        self.synack_sent_at = self.now;
        let mut seg = Segment { seq: 0, ack: 1, flags: FLAG_SYN | FLAG_ACK, wnd: self.wnd(), opt_len: self.cfg.syn_options as u16, sack_permitted: self.sack_on, ..Default::default() };
        if self.ecn_on {
            // RFC 3168 §6.1.1: an ECN-setup SYN-ACK has ECE set and CWR clear.
            seg.flags |= FLAG_ECE;
        }
        out.push(OutSeg { seg, tag: PacketTag::SynAck { tx: self.synack_tx }, edt: 0 });
        if let Some(t) = self.synack_timer.set(timer_deadline(self.now, self.synack_rto, self.cfg.timer_tick.0)) {
            self.timer_events.push((RxTimer::SynAck, t));
        }
    }

    /// A segment from the sender.
    pub fn on_segment(&mut self, now: Time, seg: &Segment, out: &mut Vec<OutSeg>) {
        self.now = now;
        if seg.syn() {
            match self.phase {
                // 4.4BSD (`synack_on_dup_syn` off): a retransmitted SYN in SYN-RECEIVED is
                // trimmed to nothing and, carrying no ACK, dropped; the SYN-ACK timer alone
                // repairs a lost SYN-ACK.
                ReceiverPhase::SynReceived if !self.cfg.synack_on_dup_syn => {}
                ReceiverPhase::Listen | ReceiverPhase::SynReceived => {
                    let first = self.phase == ReceiverPhase::Listen;
                    if !first && self.synack_tx > 0 {
                        self.stats.synack_retransmits += 1;
                    }
                    self.phase = ReceiverPhase::SynReceived;
                    self.synced = true;
                    // RFC 2018 §2: SACK only if the SYN offered it and we are willing.
                    self.sack_on = self.cfg.sack && seg.sack_permitted;
                    // RFC 3168 §6.1.1: an ECN-setup SYN carries ECE and CWR; we agree if willing
                    // (Linux `tcp_ecn_create_request`: `tcp_ecn` 1 or 2).
                    self.ecn_on = self.cfg.ecn_accepts() && seg.ece() && seg.cwr();
                    if first && self.cfg.delack_synack && self.cfg.delayed_ack && self.linux.is_none() {
                        // ns-2's DelAck sink with SYN_immediate_ack_ false (DelAckSink::recv(),
                        // tcp/tcp-sink.cc): the SYN waits for the delayed-ACK timer like any
                        // in-order packet; the SYN-ACK timer sends it (`on_synack_timer`). A
                        // copy of the SYN arriving meanwhile is answered at once (the sink
                        // cancels its timer and acknowledges).
                        let t = delack_deadline(now, self.cfg.delack_timeout.0, self.cfg.delack_tick.0);
                        if let Some(t) = self.synack_timer.set(t) {
                            self.timer_events.push((RxTimer::SynAck, t));
                        }
                    } else {
                        self.send_synack(out);
                    }
                }
                // A SYN retransmitted after our SYN-ACK crossed it: acknowledge again.
                ReceiverPhase::Established => self.send_ack(out),
            }
            return;
        }
        if self.phase == ReceiverPhase::Listen {
            return; // no connection: a real stack would answer with a RST
        }
        if self.phase == ReceiverPhase::SynReceived && seg.has_ack() {
            self.phase = ReceiverPhase::Established;
            self.synack_timer.cancel();
            self.init_rcvbuf(now);
        }
        if seg.len == 0 && !seg.fin() {
            return; // the pure ACK completing the handshake
        }
        self.on_data(seg, out);
    }

    /// The ECN part of a data segment (before it is queued): CWR ends the echo, CE starts it
    /// (RFC 3168 §6.1.3; Linux `tcp_ecn_accept_cwr`, `__tcp_ecn_check_ce`), or with DCTCP the echo
    /// follows the segment's CE exactly (RFC 8257 §3.2). Returns what it asks of the ACK.
    ///
    /// With `delack_model = "linux"` a CE mark while not demanding CWR (`ece_pending`) enters
    /// quick-ACK mode for two ACKs instead of acknowledging the segment alone at once, and so
    /// does a Not-ECT segment after ECT ones (`TCP_ECN_SEEN`). Followed: Linux 6.x's
    /// `__tcp_ecn_check_ce` (net/ipv4/tcp_input.c), called from `tcp_event_data_recv` for
    /// in-order data and from `tcp_data_queue_ofo` for data above a hole, not for a wholly old
    /// duplicate; checked against the Accurate ECN patches, which rename it `tcp_data_ecn_check`
    /// ("No functional changes") and keep these rules for RFC 3168 ECN (the testbed's 6.18).
    fn ecn_on_data(&mut self, seg: &Segment, out: &mut Vec<OutSeg>) -> EcnAck {
        let mut a = EcnAck::default();
        if seg.cwr() {
            // tcp_ecn_accept_cwr: "If the sender is telling us it has entered CWR, then its
            // cwnd may be very low (even just 1 packet), so we should ACK immediately."
            self.ece_pending = false;
            a.now = true;
        }
        let ce = seg.ce();
        self.stats.ce_received += ce as u64;
        // Linux runs the check on new data only (tcp_event_data_recv, tcp_data_queue_ofo).
        let linux_check = self.linux.is_some() && seg.seq + seg.len as u64 > self.rcv_nxt;
        if linux_check && !seg.ect() && self.ecn_seen {
            // INET_ECN_NOT_ECT: "Funny extension: if ECT is not set on a segment, and we already
            // seen ECT on a previous segment, it is probably a retransmit."
            // tcp_enter_quickack_mode(sk, 2).
            a.quick = true;
        }
        if self.dctcp {
            // dctcp_ece_ack_update: "CE state has changed, force an immediate ACK to reflect
            // the new CE state. If an ACK was delayed, send that first to reflect the prior CE
            // state" (RFC 8257 §3.2's two-state machine). The delayed ACK covers RCV.NXT before
            // this segment, `prior_rcv_nxt`. Its dctcp_ece_ack_cwr() sets TCP_ECN_DEMAND_CWR on
            // a CE (CA_EVENT_ECN_IS_CE comes first in __tcp_ecn_check_ce), so with DCTCP a CE
            // never enters quick-ACK mode.
            if ce != self.ce_state {
                if self.owes_ack() {
                    self.ece_pending = self.ce_state;
                    self.send_ack(out);
                }
                a.now = true;
            }
            self.ce_state = ce;
            self.ece_pending = ce;
        } else if ce && !self.ece_pending {
            // __tcp_ecn_check_ce, INET_ECN_CE without TCP_ECN_DEMAND_CWR: "Better not delay
            // acks, sender can have a very low cwnd": tcp_enter_quickack_mode(sk, 2) with the
            // Linux receiver (the other ACK models acknowledge this segment at once), and
            // TCP_ECN_DEMAND_CWR until the CWR.
            self.ece_pending = true;
            if self.linux.is_some() {
                a.quick = true;
            } else {
                a.now = true;
            }
        }
        if linux_check && seg.ect() {
            // INET_ECN_CE and ECT: TCP_ECN_SEEN.
            self.ecn_seen = true;
        }
        a
    }

    fn on_data(&mut self, seg: &Segment, out: &mut Vec<OutSeg>) {
        let start = seg.seq;
        let end = seg.seq + seg.len as u64;
        if seg.len > 0 {
            // tcp_data_queue: "tp->rx_opt.dsack = 0" for every data segment: a D-SACK an ACK
            // has not carried yet is forgotten.
            self.dsack = None;
        }
        let ecn = if self.ecn_on && seg.len > 0 { self.ecn_on_data(seg, out) } else { EcnAck::default() };
        if seg.len > 0 && self.first_byte_at.is_none() {
            self.first_byte_at = Some(self.now);
        }
        self.synced = true;
        if seg.fin() {
            self.fin_seq = Some(end);
            if end == self.rcv_nxt && self.ooo.is_empty() {
                // The FIN in order takes one sequence number; acknowledge at once.
                self.take_fin();
                self.send_ack(out);
                return;
            }
            if seg.len == 0 && end > self.rcv_nxt {
                // A FIN above a hole: held; the duplicate ACK tells the sender about the hole.
                self.stats.ooo_segments += 1;
                self.send_ack(out);
                return;
            }
        }
        if end <= self.rcv_nxt || (seg.fin() && self.fin_received) || self.holds(start, end) {
            // Nothing new: a duplicate. Acknowledge at once so the sender learns rcv_nxt.
            self.stats.dup_segments += 1;
            if seg.len > 0 {
                // RFC 2883 §4: the duplicate's range, at most up to RCV.NXT (Linux
                // `tcp_send_dupack` and `tcp_data_queue`: tcp_dsack_set(seq, end_seq), the end
                // cut at rcv_nxt; `tcp_data_queue_ofo`, "All the bits are present":
                // tcp_dsack_set(seq, end_seq)).
                self.set_dsack(start, if start < self.rcv_nxt { end.min(self.rcv_nxt) } else { end });
            }
            if self.linux.is_some() && start > self.rcv_nxt {
                // tcp_data_queue_ofo(): tcp_measure_rcv_mss(), "All the bits are present. Drop.",
                // then the ACK decision of any out-of-order segment (SACK compression may hold it).
                self.rcvbuf_measure(seg.len as u64);
                let l = self.linux.as_mut().expect("linux receiver");
                if ecn.quick {
                    // tcp_data_queue_ofo() checks ECN first (__tcp_ecn_check_ce).
                    l.enter_quickack_mode(ECN_QUICKACKS);
                }
                l.measure_rcv_mss(seg.len as u64, seg.flags & FLAG_PSH != 0);
                l.schedule();
                let d = l.ack_snd_check(self.now, self.rcv_nxt, true, self.sack_on, true);
                return self.linux_apply(d, out);
            }
            if let Some(l) = &mut self.linux {
                // tcp_data_queue() ("A retransmit ... Force an immediate ack") and
                // tcp_send_dupack(): tcp_enter_quickack_mode(sk, TCP_MAX_QUICKACKS).
                l.enter_quickack_mode(MAX_QUICKACKS);
                l.schedule();
                self.send_ack(out);
                return;
            }
            // ns-2's DelAckSink::recv() (tcp/tcp-sink.cc): with no delayed-ACK timer pending, a
            // packet whose seqno is the highest in order (`acker_->Seqno()`, a copy of the last
            // in-order packet) is taken for an in-order arrival and its ACK delayed (unless
            // `RFC2581_immediate_ack_` and data is held above a hole, `Maxseen()`).
            let ns2_delayed = !self.cfg.delack_dup_immediate
                && self.cfg.delayed_ack
                && !seg.fin()
                && seg.len > 0
                && end == self.rcv_nxt
                && !self.delack_timer.is_set()
                && !(self.cfg.delack_fill_immediate && !self.ooo.is_empty());
            if ns2_delayed {
                self.unacked_segs += 1;
                let d = delack_deadline(self.now, self.cfg.delack_timeout.0, self.cfg.delack_tick.0);
                if let Some(t) = self.delack_timer.set(d) {
                    self.timer_events.push((RxTimer::DelAck, t));
                }
                return;
            }
            self.send_ack(out);
            return;
        }
        if start > self.rcv_nxt {
            // RFC 5681 §4.2: an out-of-order segment is acknowledged immediately (a duplicate
            // ACK, the signal of fast retransmit).
            self.stats.ooo_segments += 1;
            if self.cfg.dsack {
                // tcp_data_queue_ofo: the part already held is D-SACKed ("Partial overlap":
                // tcp_dsack_set(seq, skb1's end_seq); the skbs it covers: tcp_dsack_extend).
                let (mut l, mut r) = (u64::MAX, 0);
                for &(a, b) in self.ooo.iter().filter(|&&(a, b)| a < end && start < b) {
                    l = l.min(a.max(start));
                    r = r.max(b.min(end));
                }
                if l < r {
                    self.set_dsack(l, r);
                }
            }
            self.insert_ooo(start, end);
            if ecn.quick {
                // tcp_data_queue_ofo() checks ECN (__tcp_ecn_check_ce) before it measures the
                // segment: quick-ACK mode counts with the receive MSS known so far.
                self.linux.as_mut().expect("linux receiver").enter_quickack_mode(ECN_QUICKACKS);
            }
            if self.rcvbuf.is_some() {
                self.rcvbuf_ofo(seg);
            }
            if let Some(l) = &mut self.linux {
                // tcp_data_queue_ofo(): tcp_measure_rcv_mss() (with the receive buffer, done in
                // rcvbuf_ofo), inet_csk_schedule_ack(), then __tcp_ack_snd_check(): at once,
                // unless SACK compression holds it.
                if self.rcvbuf.is_none() {
                    l.measure_rcv_mss(seg.len as u64, seg.flags & FLAG_PSH != 0);
                }
                l.schedule();
                let window_ok = self.rcvbuf.as_ref().is_none_or(|b| b.select_window_raw(l.rcv_mss).0 >= b.rcv_wnd);
                let d = l.ack_snd_check(self.now, self.rcv_nxt, true, self.sack_on, window_ok);
                return self.linux_apply(d, out);
            }
            self.send_ack(out);
            return;
        }
        // In order (possibly overlapping old data).
        let had_hole = !self.ooo.is_empty();
        let before = self.rcv_nxt;
        if start < before {
            // tcp_data_queue, "Partial packet, seq < rcv_next < end_seq": tcp_dsack_set(seq,
            // rcv_nxt), then queued.
            self.set_dsack(start, before);
        }
        if self.rcvbuf.is_some() {
            self.rcvbuf_ts(seg);
        }
        self.deliver(end);
        while let Some(&(l, r)) = self.ooo.first() {
            if l > self.rcv_nxt {
                break;
            }
            self.ooo.remove(0);
            self.ooo_touched.remove(0);
            self.deliver(r);
        }
        if self.fin_seq == Some(self.rcv_nxt) && !self.fin_received {
            // The data before a held FIN is complete: take the FIN and acknowledge at once.
            self.take_fin();
            self.send_ack(out);
            return;
        }
        if self.linux.is_some() {
            let len = seg.len as u64;
            if self.rcvbuf.is_some() {
                self.rcvbuf_in_order(len);
            }
            let l = self.linux.as_mut().expect("linux receiver");
            // tcp_data_queue(): tcp_event_data_recv(); "RFC5681. 4.2. SHOULD send immediate ACK,
            // when gap in queue is filled" (ICSK_ACK_NOW); then __tcp_ack_snd_check().
            l.event_data_recv(self.now, len, seg.flags & FLAG_PSH != 0);
            if ecn.quick {
                // tcp_event_data_recv() checks ECN after the ATO update and before
                // tcp_grow_window(): tcp_enter_quickack_mode(sk, 2) restarts the ATO at
                // TCP_ATO_MIN, and a growth adds one more quick ACK (quick |= 1).
                l.enter_quickack_mode(ECN_QUICKACKS);
            }
            if let Some(b) = &mut self.rcvbuf {
                // tcp_event_data_recv(): tcp_rcv_rtt_measure(), and "if (skb->len >= 128)
                // tcp_grow_window(sk, skb, true)", whose growth is a quick ACK.
                b.rtt_measure(self.now, self.rcv_nxt);
                if len >= GROW_MIN_LEN && b.grow_window(len, true) {
                    l.grow_credit();
                }
            }
            if (had_hole && self.ooo.is_empty()) || ecn.now {
                l.ack_now = true;
            }
            let window_ok = self.rcvbuf.as_ref().is_none_or(|b| b.select_window_raw(l.rcv_mss).0 >= b.rcv_wnd);
            let mut d = l.ack_snd_check(self.now, self.rcv_nxt, !self.ooo.is_empty(), self.sack_on, window_ok);
            if matches!(d, AckNow::Later(_)) && self.ooo.is_empty() && l.read_sends_ack(self.rcv_nxt) {
                // __tcp_cleanup_rbuf(): the application reads at once and drains the queue, which
                // sends the ACK of a second full segment that __tcp_ack_snd_check() held because
                // the window would not advance, or of pushed data.
                d = AckNow::Now;
            }
            self.linux_apply(d, out);
            if self.rcvbuf.is_some() {
                // The application reads what is in order (tcp_recvmsg), then
                // tcp_rcv_space_adjust().
                let span = self.ooo.last().map_or(0, |&(_, r)| r - self.rcv_nxt);
                let held = self.ooo_mem();
                let first_end = end.clamp(before, self.rcv_nxt);
                let b = self.rcvbuf.as_mut().expect("receive buffer");
                b.ooo_mem = held;
                b.read(self.now, first_end, self.rcv_nxt, span);
                if self.window_update_due() {
                    self.send_ack(out);
                }
            }
            return;
        }
        // ns-2's DelAck sink with `RFC2581_immediate_ack_` false (tcp/tcp-sink.cc) delays the ACK
        // of a gap-filling segment that leaves the in-order data ending at itself, as any
        // in-order segment; one that joins data held above it is still acknowledged at once.
        let delayed_fill = !self.cfg.delack_fill_immediate && self.ooo.first().is_some_and(|&(l, _)| l > self.rcv_nxt);
        if had_hole && !delayed_fill {
            // RFC 5681 §4.2: a segment that fills (part of) a hole is acknowledged immediately.
            self.send_ack(out);
            return;
        }
        self.unacked_segs += 1;
        self.unacked_bytes += self.rcv_nxt - before;
        // ns-2 FullTcp `need_send()` (tcp/tcp-full.cc): at once when segsperack_ × maxseg bytes
        // are unacknowledged; otherwise, RFC 5681 §4.2, by segments.
        let due = if self.cfg.delack_bytes { self.unacked_bytes >= self.cfg.delack_segments as u64 * self.cfg.mss.0 } else { self.unacked_segs >= self.cfg.delack_segments };
        if !self.cfg.delayed_ack || due || ecn.now {
            // RFC 5681 §4.2 / RFC 1122: ACK at least every second full-sized segment.
            self.send_ack(out);
        } else if !self.delack_timer.is_set() {
            let d = delack_deadline(self.now, self.cfg.delack_timeout.0, self.cfg.delack_tick.0);
            if let Some(t) = self.delack_timer.set(d) {
                self.timer_events.push((RxTimer::DelAck, t));
            }
        }
    }

    /// __tcp_cleanup_rbuf() after the application's read, its second test: "We send an ACK if
    /// we can now advertise a non-zero window which has been raised "significantly"" — the
    /// window left of the last one advertised (`tcp_receive_window`: rcv_wup + rcv_wnd −
    /// rcv_nxt) at most half the clamp, and the window the freed memory allows
    /// (`__tcp_select_window`) at least twice it. The ACK of a filled hole is sized with the
    /// whole released queue still unread; the read that follows frees it, and this window
    /// update goes out at once. Not after the peer's FIN (RCV_SHUTDOWN).
    fn window_update_due(&self) -> bool {
        let (Some(b), Some(l)) = (&self.rcvbuf, &self.linux) else {
            return false;
        };
        if self.fin_received {
            return false;
        }
        let now_wnd = (l.rcv_wup + b.rcv_wnd).saturating_sub(self.rcv_nxt);
        if 2 * now_wnd > b.window_clamp {
            return false;
        }
        let (new, _) = b.select_window_raw(l.rcv_mss);
        new > 0 && new >= 2 * now_wnd
    }

    /// The receive-buffer part of a data segment before it is queued: tcp_rcv_rtt_measure_ts()
    /// (tcp_rcv_established, before tcp_data_queue).
    fn rcvbuf_ts(&mut self, seg: &Segment) {
        self.init_rcvbuf(self.now);
        let rcv_mss = self.linux.as_ref().map_or(self.cfg.mss.0, |l| l.rcv_mss);
        if let Some(b) = &mut self.rcvbuf {
            // tp->rx_opt.saw_tstamp: the option is in use (offered here, carried by the peer).
            if self.cfg.timestamps && seg.ts {
                b.rtt_measure_ts(super::tsopt::ts_clock(self.now, self.cfg.ts_offset.0), seg.tsecr, seg.len as u64, rcv_mss, true);
            }
        }
    }

    /// In-order data of `len` bytes was queued: its memory is charged (the out-of-order data it
    /// joined stays charged until the application reads it), and tcp_measure_rcv_mss() updates
    /// scaling_ratio for a segment of a new size at least the receive MSS.
    fn rcvbuf_in_order(&mut self, len: u64) {
        self.rcvbuf.as_mut().expect("receive buffer").charge(len);
        self.rcvbuf_measure(len);
    }

    /// The receive-buffer part of tcp_measure_rcv_mss() for a segment of `len` bytes, before
    /// icsk_ack.rcv_mss takes it: "only adjust scaling_ratio when we update icsk_ack.rcv_mss"
    /// (a segment at least the receive MSS and not equal to it), the window clamp following.
    fn rcvbuf_measure(&mut self, len: u64) {
        let rcv_mss = self.linux.as_ref().map_or(self.cfg.mss.0, |l| l.rcv_mss);
        if let Some(b) = &mut self.rcvbuf {
            if len >= rcv_mss && len != rcv_mss {
                b.measure(len);
            }
        }
    }

    /// An out-of-order segment: tcp_rcv_rtt_measure_ts(), then tcp_data_queue_ofo():
    /// tcp_measure_rcv_mss() first (since "tcp: call tcp_measure_rcv_mss() for ooo packets",
    /// Linux 6.17: a connection whose first data segment is lost learns its scaling_ratio, and so
    /// its window clamp, from the out-of-order ones), with SACK tcp_grow_window(sk, skb, false)
    /// (a quick ACK if it grew), the segment's memory, and tcp_rcvbuf_grow() for the
    /// out-of-order span.
    fn rcvbuf_ofo(&mut self, seg: &Segment) {
        self.rcvbuf_ts(seg);
        self.rcvbuf_measure(seg.len as u64);
        // Then icsk_ack.rcv_mss, before the segment's memory is counted (`ooo_mem` counts in
        // segments of it: a first segment out of order is one skb, not several of the 536-byte
        // initial guess).
        if let Some(l) = &mut self.linux {
            l.measure_rcv_mss(seg.len as u64, seg.flags & FLAG_PSH != 0);
        }
        let held = self.ooo_mem();
        let span = self.ooo.last().map_or(0, |&(_, r)| r - self.rcv_nxt);
        let len = seg.len as u64;
        let sack = self.sack_on;
        let b = self.rcvbuf.as_mut().expect("receive buffer");
        if sack && b.grow_window(len, false) {
            if let Some(l) = &mut self.linux {
                l.grow_credit();
            }
        }
        b.ooo_mem = held;
        b.ofo_grow(span);
    }

    /// The memory of the out-of-order queue: each range as full segments of the receive MSS.
    fn ooo_mem(&self) -> u64 {
        let mss = self.linux.as_ref().map_or(self.cfg.mss.0, |l| l.rcv_mss).max(1);
        self.ooo.iter().map(|&(l, r)| (r - l) + (r - l).div_ceil(mss) * super::rcvbuf::TRUESIZE_OVERHEAD).sum()
    }

    fn take_fin(&mut self) {
        if !self.fin_received {
            self.fin_received = true;
            self.rcv_nxt += 1;
        }
    }

    fn deliver(&mut self, end: u64) {
        if end > self.rcv_nxt {
            self.stats.bytes_delivered += end - self.rcv_nxt;
            self.rcv_nxt = end;
        }
    }

    /// Remember [l, r) as the D-SACK block of the next ACK (Linux `tcp_dsack_set`: with SACK
    /// agreed and `tcp_dsack`; a newer duplicate replaces one not yet reported).
    fn set_dsack(&mut self, l: u64, r: u64) {
        if self.cfg.dsack && self.sack_on && l < r {
            self.dsack = Some((l, r));
        }
    }

    /// Every byte of [l, r) is already held above a hole (a duplicate of out-of-order data).
    fn holds(&self, l: u64, r: u64) -> bool {
        l < r && self.ooo.iter().any(|&(a, b)| a <= l && r <= b)
    }

    fn insert_ooo(&mut self, mut l: u64, mut r: u64) {
        // Merge with every overlapping or adjacent range; the result is the most recent.
        self.touch_clock += 1;
        let mut i = 0;
        while i < self.ooo.len() {
            let (a, b) = self.ooo[i];
            if b < l {
                i += 1;
            } else if a > r {
                break;
            } else {
                l = l.min(a);
                r = r.max(b);
                self.ooo.remove(i);
                self.ooo_touched.remove(i);
            }
        }
        self.ooo.insert(i, (l, r));
        self.ooo_touched.insert(i, self.touch_clock);
    }

    /// Carry out Linux's ACK decision.
    fn linux_apply(&mut self, d: AckNow, out: &mut Vec<OutSeg>) {
        match d {
            AckNow::Now => self.send_ack(out),
            AckNow::Later(t) => {
                if let Some(t) = self.delack_timer.set(t) {
                    self.timer_events.push((RxTimer::DelAck, t));
                }
            }
            AckNow::Wait => {}
        }
    }

    /// The delayed-ACK timer expired.
    pub fn on_delack_timer(&mut self, now: Time, out: &mut Vec<OutSeg>) {
        self.now = now;
        if let Some(l) = &mut self.linux {
            match l.on_timer(now) {
                TimerOutcome::SendDelayed => {
                    self.stats.delack_timeouts += 1;
                    self.send_ack(out);
                }
                TimerOutcome::SendCompressed => self.send_ack(out),
                TimerOutcome::Rearm(t) => {
                    if let Some(t) = self.delack_timer.set(t) {
                        self.timer_events.push((RxTimer::DelAck, t));
                    }
                }
                TimerOutcome::Nothing => {}
            }
            return;
        }
        if self.unacked_segs > 0 {
            self.stats.delack_timeouts += 1;
            self.send_ack(out);
        }
    }

    /// The SYN-ACK retransmission timer expired.
    pub fn on_synack_timer(&mut self, now: Time, out: &mut Vec<OutSeg>) {
        self.now = now;
        if self.phase == ReceiverPhase::SynReceived {
            if self.synack_tx == 0 {
                // The SYN's delayed answer (`delack_synack`): its first transmission.
                self.stats.delack_timeouts += 1;
                return self.send_synack(out);
            }
            self.stats.synack_retransmits += 1;
            let r = (self.synack_rto as f64 * self.cfg.rto_backoff).round() as Time;
            self.synack_rto = r.min(self.cfg.rto_max.0.max(self.synack_rto));
            self.send_synack(out);
        }
    }
}

/// What the ECN part of a data segment asks of its ACK (`TcpReceiver::ecn_on_data`).
#[derive(Clone, Copy, Debug, Default)]
struct EcnAck {
    /// Acknowledge this segment at once: a data segment with CWR (Linux ICSK_ACK_NOW), a change
    /// of DCTCP's CE state, or with the ACK models other than `linux` a CE mark.
    now: bool,
    /// With `delack_model = "linux"`: tcp_enter_quickack_mode(sk, 2) (`__tcp_ecn_check_ce`).
    quick: bool,
}

/// tcp_event_data_recv(): "if (skb->len >= 128) tcp_grow_window(sk, skb, true)".
const GROW_MIN_LEN: u64 = 128;

/// When a delayed ACK is due: `timeout` after the segment, or with a coarse tick (BSD's 200 ms
/// fast timer) on the first tick boundary at or after that, strictly after now.
pub fn delack_deadline(now: Time, timeout: Time, tick: Time) -> Time {
    let t = now + timeout;
    if tick == 0 {
        return t;
    }
    let b = t.div_ceil(tick) * tick;
    if b > now {
        b
    } else {
        b + tick
    }
}
