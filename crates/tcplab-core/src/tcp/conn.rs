//! A TCP connection endpoint, sans I/O, in smoltcp's spirit: a send half (`TcpSender`) and a
//! receive half (`TcpReceiver`) behind one interface — `connect` / `listen`, `write`, `close`,
//! `on_segment`, `on_timer`, the next deadline, and events (established, delivered, all acked, peer
//! closed, closed, failed). Who opens (RFC 793 §3.4: active or passive) is independent of who sends
//! data: both ends can write. The timers stay inside; the caller only schedules the deadlines it is
//! handed (`take_timers`) and calls `on_timer` when one is due.

use super::config::TcpConfig;
use super::receiver::{ReceiverPhase, RxTimer, TcpReceiver};
use super::sender::TcpSender;
use super::state::{OutSeg, SenderPhase};
use super::tsopt::Timestamps;
use crate::engine::TimerFire;
use crate::net::{PacketTag, Segment};
use crate::units::Time;
use std::sync::Arc;

/// The connection's timers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimerKind {
    /// Retransmission timer of the send half (RFC 6298), which also retransmits the SYN.
    Rto,
    /// Delayed-ACK timer of the receive half (RFC 1122 §4.2.3.2).
    DelAck,
    /// SYN-ACK retransmission timer of the passive opener.
    SynAck,
    /// The pacing timer of the send half (Linux's `tp->pacing_timer`): a paced send held back
    /// until its departure time (tcp/pacing.rs).
    Pacing,
}

/// What a connection tells its application.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConnEvent {
    /// The handshake is complete (at once without one): data can flow both ways.
    Established,
    /// This many more bytes were delivered in order to the application.
    Delivered(u64),
    /// Everything the application has written so far is acknowledged.
    AllAcked,
    /// The peer's FIN arrived, after all its data.
    PeerClosed,
    /// Our side is finished: the application closed and everything (with the FIN) is acknowledged.
    Closed,
    /// The connection gave up after too many retransmissions (RFC 1122 §4.2.3.5 R2).
    Failed,
}

/// `TcpConn::features`: the optional mechanisms of the configuration that touch every segment
/// the connection sends. The timestamps option (RFC 7323 §3.2: once agreed, on every segment).
const FEAT_TIMESTAMPS: u8 = 1 << 0;
/// ECN (RFC 3168 §6.1.3: ECE on the data segments too while a CE is unanswered).
const FEAT_ECN: u8 = 1 << 1;

pub struct TcpConn {
    pub snd: TcpSender,
    pub rcv: TcpReceiver,
    active: bool,
    events: Vec<ConnEvent>,
    /// Delivered bytes are told once at least this many are untold (the application's
    /// SO_RCVLOWAT), or when the peer closes.
    rcv_lowat: u64,
    /// The timestamps option (RFC 7323, `tsopt.rs`): stamps every segment both halves send.
    ts: Timestamps,
    /// Which of `FEAT_*` the configuration turns on, computed once when the connection is built:
    /// a connection that uses none asks one question per call (`after`), not one per mechanism.
    features: u8,
    // What has been reported already, so each event is told once.
    told_established: bool,
    told_delivered: u64,
    told_acked_to: u64,
    told_peer_closed: bool,
    told_end: bool,
}

impl TcpConn {
    fn new(cfg: Arc<TcpConfig>, active: bool) -> TcpConn {
        let rcv = if active { TcpReceiver::new_active(cfg.clone()) } else { TcpReceiver::new(cfg.clone()) };
        let ts = Timestamps::new(cfg.timestamps, cfg.handshake, cfg.ts_offset.0);
        let features = if cfg.timestamps { FEAT_TIMESTAMPS } else { 0 } | if cfg.ecn_accepts() { FEAT_ECN } else { 0 };
        TcpConn {
            ts,
            features,
            snd: TcpSender::open(cfg),
            rcv,
            active,
            events: Vec::new(),
            rcv_lowat: 1,
            told_established: false,
            told_delivered: 0,
            told_acked_to: 1,
            told_peer_closed: false,
            told_end: false,
        }
    }

    /// Active open: the SYN goes out now (or, without a handshake, the connection is open at once).
    /// `cfg` may be an `Arc` shared with other connections configured alike (it is never changed).
    pub fn connect(cfg: impl Into<Arc<TcpConfig>>, now: Time, out: &mut Vec<OutSeg>) -> TcpConn {
        let n = out.len();
        let mut c = TcpConn::new(cfg.into(), true);
        c.snd.start(now, out);
        c.after(now, &mut out[n..]);
        c
    }

    /// Passive open: wait for the SYN (without a handshake the connection is open at once).
    pub fn listen(cfg: impl Into<Arc<TcpConfig>>, now: Time, out: &mut Vec<OutSeg>) -> TcpConn {
        let cfg: Arc<TcpConfig> = cfg.into();
        let handshake = cfg.handshake;
        let n = out.len();
        let mut c = TcpConn::new(cfg, false);
        if !handshake {
            let sack = c.rcv.sack_on;
            let ts = c.ts.on;
            c.snd.open_passive(now, sack, ts, None, 0, out);
        }
        c.after(now, &mut out[n..]);
        c
    }

    /// The timestamps option is in use on this connection (RFC 7323 §3.2: both SYNs carried it).
    pub fn timestamps_on(&self) -> bool {
        self.ts.on
    }

    pub fn is_active(&self) -> bool {
        self.active
    }

    /// Give `bytes` more to send.
    pub fn write(&mut self, now: Time, bytes: u64, out: &mut Vec<OutSeg>) {
        let n = out.len();
        self.snd.core.ack_no = self.rcv.ack_value();
        self.snd.write(now, bytes, out);
        self.after(now, &mut out[n..]);
    }

    /// Nothing more will be written: a FIN follows the last byte (with `cfg.fin`).
    pub fn close(&mut self, now: Time, out: &mut Vec<OutSeg>) {
        let n = out.len();
        self.snd.core.ack_no = self.rcv.ack_value();
        self.snd.close(now, out);
        self.after(now, &mut out[n..]);
    }

    /// The RST that aborts this connection now (RFC 9293 §3.10.4 ABORT: "a <SEQ=SND.NXT><CTL=RST>
    /// segment"; Linux `tcp_send_active_reset()`: RST|ACK at snd_nxt, ACKing rcv_nxt, with the
    /// timestamps option when in use; the window field is left 0). The caller discards the
    /// connection afterwards.
    pub fn reset_segment(&mut self, now: Time) -> Segment {
        let c = &self.snd.core;
        let mut seg = Segment { seq: c.snd_max.max(c.snd_nxt), ack: self.rcv.ack_value(), flags: crate::net::FLAG_RST | crate::net::FLAG_ACK, ..Default::default() };
        if self.ts.on {
            self.ts.stamp(now, std::iter::once(&mut seg));
        }
        seg
    }

    /// A segment from the peer.
    #[inline]
    pub fn on_segment(&mut self, now: Time, seg: &Segment, out: &mut Vec<OutSeg>) {
        let n = out.len();
        if self.acks_unsent_data(seg) {
            // RFC 9293 §3.10.7.4: "If the ACK acks something not yet sent (SEG.ACK > SND.NXT),
            // then send an ACK, drop the segment, and return." Linux 6.x `tcp_ack()`: a
            // challenge ACK, then -SKB_DROP_REASON_TCP_ACK_UNSENT_DATA, before
            // `tcp_replace_ts_recent` (TS.Recent keeps its value) and before the segment's
            // data or FIN is queued.
            self.rcv.seq_no = self.snd.core.snd_max.max(1);
            self.rcv.challenge_ack(now, out);
            self.after(now, &mut out[n..]);
            return;
        }
        if self.ts.offered() {
            self.ts.on_segment(seg);
        }
        if self.active {
            if seg.syn() {
                // The SYN-ACK: the send half completes the handshake; the peer's SYN took its
                // sequence 0, so the receive half expects 1.
                self.snd.core.ack_no = 1;
                self.snd.on_segment(now, seg, out);
                if self.snd.core.established_at.is_some() {
                    self.rcv.synced = true;
                    // RFC 2018 §2: SACK-permitted in both SYNs lets *either* end send SACK
                    // blocks, so the receive half of the active opener sends them too (the send
                    // half decided the same from this SYN-ACK).
                    self.rcv.sack_on = self.snd.core.sack_ok;
                    // RFC 3168 §6.1.1: ECN, once agreed, serves both directions.
                    self.rcv.ecn_on = self.snd.core.ecn_ok;
                }
                self.after(now, &mut out[n..]);
                return;
            }
            if seg.len > 0 || seg.fin() {
                self.rcv.seq_no = self.snd.core.snd_max.max(1);
                self.rcv.set_rtt(self.snd.core.rtt.srtt(), self.snd.core.rtt.rto());
                self.rcv.on_segment(now, seg, out);
            }
            if seg.has_ack() {
                self.ack_to_send_half(now, seg, out);
            }
        } else {
            let was = self.rcv.phase;
            self.rcv.seq_no = self.snd.core.snd_max.max(1);
            self.rcv.set_rtt(self.snd.core.rtt.srtt(), self.snd.core.rtt.rto());
            self.rcv.on_segment(now, seg, out);
            if was != ReceiverPhase::Established && self.rcv.phase == ReceiverPhase::Established && self.snd.phase() == SenderPhase::Idle {
                let sent = self.rcv.synack_sent_once().then_some(self.rcv.synack_sent_at);
                let sack = self.rcv.sack_on;
                self.snd.core.ack_no = self.rcv.ack_value();
                let retransmits = self.rcv.synack_retransmits();
                self.snd.core.ecn_ok = self.rcv.ecn_on;
                let ts = self.ts.on;
                self.snd.open_passive(now, sack, ts, sent, retransmits, out);
            }
            if !seg.syn() && seg.has_ack() && self.snd.phase() != SenderPhase::Idle {
                self.ack_to_send_half(now, seg, out);
            }
        }
        self.after(now, &mut out[n..]);
    }

    /// A segment whose ACK acknowledges something never sent, on a connection past the
    /// handshake, with Linux's receiver (`delack_model = "linux"`, whose challenge ACK answers
    /// it); the other models take what they can of it (the send half ignores the ACK).
    fn acks_unsent_data(&self, seg: &Segment) -> bool {
        let c = &self.snd.core;
        c.cfg.delack_model == super::config::DelackModel::Linux
            && seg.has_ack()
            && !seg.syn()
            && seg.flags & crate::net::FLAG_RST == 0
            && matches!(c.phase, SenderPhase::Established | SenderPhase::Done)
            && seg.ack > c.snd_max
    }

    /// The acknowledgment part of a segment, for the send half. When the send half has nothing
    /// outstanding and nothing left to send (the receiving end of a one-way transfer), an ACK
    /// that acknowledges nothing new only refreshes the peer's window.
    #[inline]
    fn ack_to_send_half(&mut self, now: Time, seg: &Segment, out: &mut Vec<OutSeg>) {
        let c = &mut self.snd.core;
        let idle = c.phase == SenderPhase::Established && c.snd_una == c.snd_max && c.snd_max == c.data_end && !c.fin_pending() && seg.ack <= c.snd_una && seg.n_sack == 0;
        if idle {
            c.peer_wnd = if seg.wnd == u32::MAX { u64::MAX / 4 } else { seg.wnd as u64 };
            return;
        }
        c.ack_no = self.rcv.ack_value();
        self.snd.on_segment(now, seg, out);
    }

    /// A timer event scheduled for `now`. Returns a later time to schedule it again at when the
    /// deadline moved (a lazily re-armed timer, `engine::timer`).
    pub fn on_timer(&mut self, now: Time, which: TimerKind, out: &mut Vec<OutSeg>) -> Option<Time> {
        let n = out.len();
        let timer = match which {
            TimerKind::Rto => &mut self.snd.core.rto_timer,
            TimerKind::DelAck => &mut self.rcv.delack_timer,
            TimerKind::SynAck => &mut self.rcv.synack_timer,
            TimerKind::Pacing => &mut self.snd.core.pacing_timer,
        };
        match timer.on_event(now) {
            TimerFire::Stale => return None,
            TimerFire::Rearm(t) => return Some(t),
            TimerFire::Fire => {}
        }
        match which {
            TimerKind::Rto => {
                self.snd.core.ack_no = self.rcv.ack_value();
                self.snd.on_rto(now, out);
            }
            TimerKind::DelAck => {
                self.rcv.seq_no = self.snd.core.snd_max.max(1);
                self.rcv.set_rtt(self.snd.core.rtt.srtt(), self.snd.core.rtt.rto());
                self.rcv.on_delack_timer(now, out);
            }
            TimerKind::SynAck => self.rcv.on_synack_timer(now, out),
            TimerKind::Pacing => {
                self.snd.core.ack_no = self.rcv.ack_value();
                self.snd.on_pacing_timer(now, out);
            }
        }
        self.after(now, &mut out[n..]);
        None
    }

    /// The earliest deadline of the connection's timers.
    pub fn poll_at(&self) -> Option<Time> {
        [self.snd.core.rto_timer.deadline(), self.rcv.delack_timer.deadline(), self.rcv.synack_timer.deadline(), self.snd.core.pacing_timer.deadline()].into_iter().flatten().min()
    }

    /// Timer events the caller must schedule, in the order they were set (drained): `f` is
    /// called with each.
    pub fn take_timers(&mut self, mut f: impl FnMut(TimerKind, Time)) {
        if self.snd.has_timer_events() {
            for t in self.snd.take_timer_events() {
                f(TimerKind::Rto, t);
            }
        }
        if self.snd.core.pacing_on() {
            for t in self.snd.core.take_pacing_events() {
                f(TimerKind::Pacing, t);
            }
        }
        if !self.rcv.has_timer_events() {
            return;
        }
        for (k, t) in self.rcv.take_timer_events() {
            f(
                match k {
                    RxTimer::DelAck => TimerKind::DelAck,
                    RxTimer::SynAck => TimerKind::SynAck,
                },
                t,
            );
        }
    }

    /// Tell `Delivered` only once at least `bytes` delivered bytes are untold (or the peer
    /// closed): an application that waits for a whole message is not woken per segment.
    pub fn set_rcv_lowat(&mut self, bytes: u64) {
        self.rcv_lowat = bytes.max(1);
    }

    /// Events for the application, in the order they happened (drained).
    pub fn take_events(&mut self) -> std::vec::Drain<'_, ConnEvent> {
        self.events.drain(..)
    }

    pub fn has_events(&self) -> bool {
        !self.events.is_empty()
    }

    /// The next event for the application, oldest first.
    pub fn next_event(&mut self) -> Option<ConnEvent> {
        if self.events.is_empty() {
            None
        } else {
            Some(self.events.remove(0))
        }
    }

    /// After every call: segments sent by the send half carried our acknowledgment; collect the
    /// timer deadlines set and the events to tell.
    #[inline(always)]
    fn after(&mut self, now: Time, sent: &mut [OutSeg]) {
        // An ECN-Echo is owed only on a connection whose configuration allows ECN.
        debug_assert!(self.features & FEAT_ECN != 0 || !self.rcv.ece_pending);
        if self.features != 0 && !sent.is_empty() {
            self.options_on(now, sent);
        }
        if self.rcv.owes_ack() && sent.iter().any(|o| matches!(o.tag, PacketTag::Data { .. } | PacketTag::Fin { .. })) {
            self.rcv.piggybacked();
        }
        let c = &self.snd.core;
        if !self.told_established && c.established_at.is_some() {
            self.told_established = true;
            self.events.push(ConnEvent::Established);
        }
        let d = self.rcv.stats.bytes_delivered;
        if d >= self.told_delivered + self.rcv_lowat || (d > self.told_delivered && self.rcv.fin_received) {
            self.events.push(ConnEvent::Delivered(d - self.told_delivered));
            self.told_delivered = d;
        }
        if !self.told_peer_closed && self.rcv.fin_received {
            self.told_peer_closed = true;
            self.events.push(ConnEvent::PeerClosed);
        }
        if c.data_end > self.told_acked_to && c.snd_una >= c.data_end && matches!(c.phase, SenderPhase::Established | SenderPhase::Done) {
            self.told_acked_to = c.data_end;
            self.events.push(ConnEvent::AllAcked);
        }
        if !self.told_end {
            match c.phase {
                SenderPhase::Done => {
                    self.told_end = true;
                    self.events.push(ConnEvent::Closed);
                }
                SenderPhase::Aborted => {
                    self.told_end = true;
                    self.events.push(ConnEvent::Failed);
                }
                _ => {}
            }
        }
    }

    /// What the optional mechanisms (`features`) put on the segments just sent, out of line:
    /// a connection without them never runs it.
    #[cold]
    #[inline(never)]
    fn options_on(&mut self, now: Time, sent: &mut [OutSeg]) {
        if self.ts.offered() {
            self.ts.stamp(now, sent.iter_mut().map(|o| &mut o.seg));
        }
        if self.rcv.ece_pending {
            // RFC 3168 §6.1.3: every ACK we send carries ECE until the CWR, the send half's
            // data segments too (the receive half's own ACKs have it already).
            for o in sent.iter_mut().filter(|o| matches!(o.tag, PacketTag::Data { .. } | PacketTag::Fin { .. })) {
                o.seg.flags |= crate::net::FLAG_ECE;
            }
        }
    }
}
