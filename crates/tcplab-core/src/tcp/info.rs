//! A snapshot of a connection in the shape of Linux's `struct tcp_info` (`getsockopt(TCP_INFO)`,
//! include/uapi/linux/tcp.h): what applications, time series and scripted tests read instead of
//! reaching into the send and receive halves. Taken on demand (`TcpConn::info`), never on the
//! per-packet path.
//!
//! Units: sequence numbers and amounts of data are in **bytes** (the model's sequence space: the
//! SYN takes 0, data starts at 1). Linux's `tcp_info` counts most of these in **packets**
//! (`tcpi_unacked`, `tcpi_sacked`, `tcpi_lost`, `tcpi_total_retrans`, `tcpi_snd_cwnd`,
//! `tcpi_delivered`); the `*_segs` methods give segment counts (bytes ÷ MSS, rounded up) where a
//! comparison with Linux wants them, and the segment-counted instruments (`retrans`, `timeouts`)
//! are counts of segments already. Times are in nanoseconds of virtual time (Linux: µs).

use super::conn::TcpConn;
use super::receiver::ReceiverPhase;
use super::state::SenderPhase;
use crate::units::Time;

/// The connection's state in the words of RFC 793 §3.2 (Linux's `TCP_*` states), as far as the
/// model has them. The model keeps no TIME-WAIT (no 2·MSL timer) and does not remember which FIN
/// came first, so CLOSING is reported as `LastAck`, and TIME-WAIT as `Closed`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TcpState {
    /// Passive open, waiting for a SYN.
    Listen,
    /// Active open, our SYN sent, waiting for the SYN-ACK.
    SynSent,
    /// Passive open, SYN received and SYN-ACK sent, waiting for its ACK.
    SynReceived,
    /// Data flows both ways.
    Established,
    /// We closed and our FIN is unacknowledged; the peer has not closed.
    FinWait1,
    /// We closed and our FIN is acknowledged; waiting for the peer's FIN.
    FinWait2,
    /// The peer closed (its FIN arrived); we have not sent our FIN yet.
    CloseWait,
    /// Both FINs sent or received, ours not yet acknowledged (also RFC 793's CLOSING).
    LastAck,
    /// Finished: both sides closed and acknowledged (or, without FINs, everything written after
    /// the application closed is acknowledged), or abandoned (`TcpInfo::failed`).
    Closed,
}

/// The congestion-avoidance state in Linux's terms (`tcpi_ca_state`, `enum tcp_ca_state`),
/// mapped from the model's recovery state. Linux's CWR (an ECN-triggered reduction) has no
/// counterpart: the model has no ECN in its TCP.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CaState {
    /// Nothing suspicious: no duplicate ACK, no SACKed data, no recovery.
    Open,
    /// Duplicate ACKs or SACK blocks seen, below the threshold of a fast retransmit.
    Disorder,
    /// Fast recovery after a fast retransmit (RFC 5681 §3.2, RFC 6582, RFC 6675).
    Recovery,
    /// After a retransmission timeout, until the data outstanding then is acknowledged
    /// (RFC 6298 §5, RFC 5681 §3.1's loss window).
    Loss,
}

/// A snapshot of one connection. Sequence numbers and data in bytes, times in ns.
#[derive(Clone, Debug, PartialEq)]
pub struct TcpInfo {
    /// RFC 793 state (`tcpi_state`).
    pub state: TcpState,
    /// Congestion-avoidance state (`tcpi_ca_state`).
    pub ca_state: CaState,
    /// The send half's maximum segment size, bytes (`tcpi_snd_mss`).
    pub mss: u64,
    /// Congestion window, bytes (Linux `tcpi_snd_cwnd` counts packets: `cwnd_segs()`).
    pub cwnd: u64,
    /// Slow-start threshold, bytes (`tcpi_snd_ssthresh` counts packets). Before any loss it is
    /// the configured initial value, "arbitrarily high" (`u64::MAX / 4`) unless set.
    pub ssthresh: u64,
    /// The peer's advertised receive window, bytes (`tcpi_snd_wnd`); an unlimited window reads
    /// as `u64::MAX / 4`.
    pub peer_wnd: u64,
    /// Smoothed RTT (RFC 6298 SRTT), ns; None before the first sample (`tcpi_rtt`, µs).
    pub srtt: Option<Time>,
    /// RTT variation (RFC 6298 RTTVAR), ns (`tcpi_rttvar`, µs).
    pub rttvar: Time,
    /// Current retransmission timeout, backoff included, ns (`tcpi_rto`, µs).
    pub rto: Time,
    /// Smallest RTT sample taken, the exact round trip (not rounded to the timer tick), ns;
    /// None before the first sample (`tcpi_min_rtt`, µs).
    pub min_rtt: Option<Time>,
    /// Consecutive duplicate ACKs received (no Linux field; `tp->sacked_out` plays the part with
    /// SACK).
    pub dupacks: u32,
    /// The reordering degree seen, segments (Linux `tp->reordering`, `tcpi_reordering`): the
    /// `dupthresh` knob at first, raised by `tcp_check_sack_reordering`. None when the loss
    /// detector does not track reordering (only RACK over the transmit record does).
    pub reordering: Option<u32>,
    /// Deliveries found reordered (Linux `tp->reord_seen`, `tcpi_reord_seen`); None where
    /// `reordering` is.
    pub reord_seen: Option<u32>,
    /// Retransmitted segments neither delivered nor deemed lost again (Linux `tp->retrans_out`,
    /// `tcpi_retrans`); None without the transmit record's marks (RACK with SACK).
    pub retrans_out: Option<u64>,
    /// Oldest unacknowledged sequence number (RFC 793 SND.UNA).
    pub snd_una: u64,
    /// Next sequence number to send (SND.NXT); pulled back to SND.UNA by a timeout (go-back-N).
    pub snd_nxt: u64,
    /// One past the highest sequence number sent (RFC 6675 HighData + 1).
    pub snd_max: u64,
    /// Next sequence number expected from the peer (RFC 793 RCV.NXT); 0 before the peer's SYN
    /// (or first data, without a handshake) is seen.
    pub rcv_nxt: u64,
    /// Bytes sent and not cumulatively acknowledged: RFC 5681 FlightSize, SND.MAX − SND.UNA
    /// (Linux `tcpi_unacked` counts packets). Unlike Linux's in-flight estimate it does not
    /// subtract SACKed or lost data: `pipe()` does (RFC 6675).
    pub bytes_in_flight: u64,
    /// Bytes above SND.UNA the peer has SACKed (the scoreboard; `tcpi_sacked` counts packets).
    pub sacked: u64,
    /// Unacknowledged, unSACKed bytes below the highest SACKed byte that RFC 6675 §4 `IsLost`
    /// deems lost (`tcpi_lost` counts packets). None without SACK: then the model does not know
    /// which segments are lost until it retransmits them.
    pub lost: Option<u64>,
    /// Data segments retransmitted in total, by any mechanism (`tcpi_total_retrans`).
    pub retrans: u64,
    /// Payload bytes retransmitted in total (`tcpi_bytes_retrans`).
    pub retrans_bytes: u64,
    /// Retransmission-timer expiries with data (or the FIN) outstanding.
    pub timeouts: u64,
    /// Fast retransmits (entries into loss recovery on duplicate ACKs or SACK information).
    pub fast_retransmits: u64,
    /// SYN retransmissions of the active opener.
    pub syn_retrans: u64,
    /// SYN-ACK retransmissions of the passive opener.
    pub synack_retrans: u64,
    /// Data bytes delivered to the peer as far as we know: cumulatively acknowledged plus SACKed
    /// now (Linux `tcpi_delivered` counts packets, `tcpi_bytes_acked` only the cumulative part).
    pub delivered: u64,
    /// Data bytes cumulatively acknowledged (`tcpi_bytes_acked`).
    pub bytes_acked: u64,
    /// Payload bytes sent, retransmissions included (`tcpi_bytes_sent`).
    pub bytes_sent: u64,
    /// Bytes received in order and delivered to the application (`tcpi_bytes_received`).
    pub bytes_received: u64,
    /// When the first data byte from the peer arrived.
    pub first_byte_at: Option<Time>,
    /// The connection gave up after too many retransmissions (RFC 1122 §4.2.3.5 R2).
    pub failed: bool,
    /// The pacing rate, bytes per second (`tcpi_pacing_rate`): the controller's own (BBR's), or
    /// Linux's `tcp_update_pacing_rate` (200 % of cwnd/SRTT in slow start, 120 % after), which
    /// Linux computes whether or not it paces. None before an RTT sample (Linux: unlimited).
    pub pacing_rate: Option<u64>,
    /// The connection's sends are paced: by itself (BBR, or the `pacing` knob) or, its first hop
    /// being the fq qdisc, by fq (`paced_by_fq`).
    pub paced: bool,
    /// An fq qdisc paces the connection (`sk_pacing_status` = `SK_PACING_FQ`).
    pub paced_by_fq: bool,
    /// A model-based controller's state (BBR's mode, bandwidth, min_rtt, gains: Linux's
    /// `tcp_bbr_info`, `ss -ti`'s `bbr:(bw,mrtt,pacing_gain,cwnd_gain)`).
    pub cc_model: Option<crate::tcp::cc::CcModel>,
    /// ECN is in use (RFC 3168 §6.1.1; Linux `tcpi_options & TCPI_OPT_ECN`).
    pub ecn: bool,
    /// Window reductions for ECN-Echo (RFC 3168 §6.1.2).
    pub ecn_reductions: u64,
    /// Data segments received marked CE (Linux `TCP_MIB_...`-like, `tcpi_delivered_ce` counts
    /// the sender's side).
    pub ce_received: u64,
    /// Our ACKs carry ECE now (Linux `TCP_ECN_DEMAND_CWR`).
    pub ece_pending: bool,
    /// DCTCP's α in 1/1024 (Linux `dctcp_get_info`); None for the other controllers.
    pub dctcp_alpha: Option<u32>,
}

impl TcpInfo {
    /// Segments of `bytes` at this connection's MSS, rounded up (Linux's packet counts).
    pub fn segs(&self, bytes: u64) -> u64 {
        bytes.div_ceil(self.mss)
    }
    /// cwnd in segments (`tcpi_snd_cwnd`).
    pub fn cwnd_segs(&self) -> u64 {
        self.cwnd / self.mss
    }
    /// FlightSize in segments (`tcpi_unacked`).
    pub fn unacked_segs(&self) -> u64 {
        self.segs(self.bytes_in_flight)
    }
    /// SACKed segments (`tcpi_sacked`).
    pub fn sacked_segs(&self) -> u64 {
        self.segs(self.sacked)
    }
    /// RFC 6675 `pipe` estimated without per-segment retransmission marks: FlightSize minus
    /// what is SACKed and what is deemed lost, bytes (Linux's `tcp_packets_in_flight` in bytes,
    /// without its `retrans_out` term).
    pub fn pipe(&self) -> u64 {
        self.bytes_in_flight.saturating_sub(self.sacked + self.lost.unwrap_or(0))
    }
}

impl TcpConn {
    /// A `tcp_info`-like snapshot of the connection (see `TcpInfo`). Builds a fresh value and
    /// walks the SACK scoreboard: for applications, series and tests, not per packet.
    pub fn info(&self) -> TcpInfo {
        let s = &self.snd.core;
        let r = &self.rcv;
        let st = &s.stats;
        let lost = s.sack_ok.then(|| s.sb.holes(s.snd_una).filter(|&(a, _)| s.is_lost(a)).map(|(a, b)| b - a).sum());
        let ca_state = if self.snd.rec.recovering(s) {
            CaState::Recovery
        } else if s.slow_start_after_rto && s.snd_una < s.recover {
            CaState::Loss
        } else if s.dupacks > 0 || !s.sb.is_empty() {
            CaState::Disorder
        } else {
            CaState::Open
        };
        TcpInfo {
            state: self.state(),
            ca_state,
            mss: s.mss,
            cwnd: s.cwnd,
            ssthresh: s.ssthresh,
            peer_wnd: s.peer_wnd,
            srtt: s.rtt.srtt(),
            rttvar: s.rtt.rttvar(),
            rto: s.rtt.rto(),
            // Linux's windowed minimum (tcp_update_rtt_min()) with its estimator; else the
            // smallest sample.
            min_rtt: s.rtt.min_rtt().or((st.rtt_samples > 0).then_some(st.rtt_min_ns)),
            dupacks: s.dupacks,
            reordering: (s.loss_marks && s.sack_ok).then_some(s.reordering),
            reord_seen: (s.loss_marks && s.sack_ok).then_some(s.reord_seen),
            retrans_out: (s.loss_marks && s.sack_ok).then(|| s.txq.records().filter(|r| r.retrans).map(|r| (r.end - r.start).div_ceil(s.mss.max(1))).sum()),
            snd_una: s.snd_una,
            snd_nxt: s.snd_nxt,
            snd_max: s.snd_max,
            rcv_nxt: r.ack_value(),
            bytes_in_flight: s.flight_size(),
            sacked: s.sb.sacked_bytes(),
            lost,
            retrans: st.retransmits,
            retrans_bytes: st.retransmitted_bytes,
            timeouts: st.timeouts,
            fast_retransmits: st.fast_retransmits,
            syn_retrans: st.syn_retransmits,
            synack_retrans: r.stats.synack_retransmits,
            delivered: st.bytes_acked + s.sb.sacked_bytes(),
            bytes_acked: st.bytes_acked,
            bytes_sent: st.bytes_sent,
            bytes_received: r.stats.bytes_delivered,
            first_byte_at: r.first_byte_at,
            failed: s.phase == SenderPhase::Aborted,
            pacing_rate: s.pacing_rate(),
            paced: s.pacing_on() || s.pacing_fq(),
            paced_by_fq: s.pacing_fq(),
            cc_model: s.cc.model(),
            ecn: s.ecn_ok || r.ecn_on,
            ecn_reductions: st.ecn_reductions,
            ce_received: r.stats.ce_received,
            ece_pending: r.ece_pending,
            dctcp_alpha: s.cc.dctcp_alpha(),
        }
    }

    /// Bytes received in order and delivered to the application (`TcpInfo::bytes_received`),
    /// without building the whole snapshot.
    pub fn bytes_delivered(&self) -> u64 {
        self.rcv.stats.bytes_delivered
    }

    /// The oldest unacknowledged sequence number (`TcpInfo::snd_una`), without building the
    /// whole snapshot.
    pub fn snd_una(&self) -> u64 {
        self.snd.core.snd_una
    }

    /// The RFC 793 state (`TcpInfo::state`).
    pub fn state(&self) -> TcpState {
        let s = &self.snd.core;
        match (s.phase, self.rcv.phase) {
            (SenderPhase::Idle, ReceiverPhase::Listen) => return TcpState::Listen,
            (SenderPhase::Idle, ReceiverPhase::SynReceived) => return TcpState::SynReceived,
            (SenderPhase::SynSent, _) => return TcpState::SynSent,
            (SenderPhase::Done | SenderPhase::Aborted, _) if !s.cfg.fin || self.rcv.fin_received || s.phase == SenderPhase::Aborted => return TcpState::Closed,
            _ => {}
        }
        let fin_sent = s.fin_pending() && s.snd_max > s.data_end;
        let fin_acked = fin_sent && s.snd_una > s.data_end;
        match (fin_sent, fin_acked, self.rcv.fin_received) {
            (false, _, false) => TcpState::Established,
            (false, _, true) => TcpState::CloseWait,
            (true, false, false) => TcpState::FinWait1,
            (true, true, false) => TcpState::FinWait2,
            (true, false, true) => TcpState::LastAck,
            (true, true, true) => TcpState::Closed,
        }
    }
}
