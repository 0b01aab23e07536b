//! Per-connection instruments, counted by the code that causes each event (DESIGN.md:
//! "Instruments are first-class"). Definitions follow Mathis et al. 1997 §5.2 (TARGETS.md §5.2).

use crate::units::Time;
use serde::Serialize;

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ConnStats {
    /// Data segments transmitted, first transmissions and retransmissions.
    pub segs_sent: u64,
    /// Payload bytes transmitted, retransmissions included.
    pub bytes_sent: u64,
    /// Data segments retransmitted (by any mechanism).
    pub retransmits: u64,
    pub retransmitted_bytes: u64,
    /// Retransmission-timer expiries while data (or the FIN) was outstanding.
    pub timeouts: u64,
    /// Fast retransmits (entries into fast retransmit on the duplicate-ACK threshold).
    pub fast_retransmits: u64,
    /// Segments sent by Limited Transmit (RFC 3042).
    pub limited_transmits: u64,
    /// Fast retransmits made below the standard threshold by Early Retransmit (RFC 5827).
    pub early_retransmits: u64,
    /// Loss-recovery phases entered on duplicate ACKs or SACK information (one per fast
    /// retransmit; a SACK or FACK recovery repairing several holes is one).
    pub recoveries: u64,
    /// Time spent in recoveries: from each fast retransmit until the data outstanding then is
    /// acknowledged (or the retransmission timer expires), ns.
    pub recovery_ns: u128,
    /// Retransmissions of holes chosen from the SACK scoreboard.
    pub sack_retransmits: u64,
    /// Connections (transfers) that used SACK.
    pub sack_transfers: u64,
    /// Loss episodes repaired by one successful, clock-preserving window halving.
    pub ca_events: u64,
    /// Loss episodes with any other window reduction (a timeout, or more than one reduction).
    pub non_ca_events: u64,
    /// Retransmissions inside a loss episode that caused no window change of their own.
    pub other_losses: u64,
    /// RACK-TLP (`loss = "rack"`, `tlp`): segments RACK marked lost (RFC 8985 §6.2, Linux
    /// `tcp_rack_mark_lost`), reordering-timer expiries (`tcp_rack_reo_timeout`), tail loss
    /// probes sent (`LINUX_MIB_TCPLOSSPROBES`) and probes that revealed a repaired loss
    /// (`LINUX_MIB_TCPLOSSPROBERECOVERY`).
    pub rack_marked: u64,
    pub reo_timeouts: u64,
    pub tlp_probes: u64,
    pub tlp_recoveries: u64,
    /// D-SACK (`dsack`): D-SACK blocks the sender accepted (Linux `TCPDSACKRecv` +
    /// `TCPDSACKOfoRecv`, less the dubious ones), D-SACK blocks the receiver sent
    /// (`TCPDSACKOldSent` + `TCPDSACKOfoSent`), and window reductions undone (`undo`:
    /// `TCPFullUndo`, `TCPPartialUndo`, `TCPDSACKUndo`, `TCPLossUndo`).
    pub dsacks_received: u64,
    pub dsacks_sent: u64,
    pub undos: u64,
    /// SYN retransmissions (handshake).
    pub syn_retransmits: u64,
    /// SYN-ACK retransmissions (by the receiver).
    pub synack_retransmits: u64,
    /// Data bytes acknowledged cumulatively (the sender's view).
    pub bytes_acked: u64,
    /// RTT samples taken (RTTM), their sum, minimum and maximum.
    pub rtt_samples: u64,
    pub rtt_sum_ns: u128,
    pub rtt_min_ns: Time,
    pub rtt_max_ns: Time,
    /// Largest congestion window, bytes.
    pub cwnd_max: u64,
    /// ∫ cwnd dt, byte·ns, over the time the connection was open.
    pub cwnd_integral: u128,
    /// Time the connection was open (from its start to completion or the end of the run), ns.
    pub open_ns: u128,
    /// Receiver: bytes delivered in order to the application.
    pub bytes_delivered: u64,
    /// Receiver: ACK segments sent (pure ACKs, SYN-ACKs excluded).
    pub acks_sent: u64,
    /// Receiver: ACKs sent by the delayed-ACK timer.
    pub delack_timeouts: u64,
    /// Receiver: data segments that arrived out of order (above a hole).
    pub ooo_segments: u64,
    /// Receiver: data segments that carried only already-received bytes.
    pub dup_segments: u64,
    /// Window reductions made for ECN-Echo (RFC 3168 §6.1.2; DCTCP's cwnd·(1 − α/2)).
    pub ecn_reductions: u64,
    /// Receiver: data segments that arrived marked CE.
    pub ce_received: u64,
}

impl ConnStats {
    /// What was counted since `base` (a snapshot of the same counters): counters, sums and time
    /// integrals are differences; maxima and RTT extremes stay those of the whole run.
    pub fn since(&self, base: &ConnStats) -> ConnStats {
        let mut d = self.clone();
        macro_rules! sub {
            ($($f:ident),*) => { $( d.$f = self.$f.saturating_sub(base.$f); )* };
        }
        sub!(segs_sent, bytes_sent, retransmits, retransmitted_bytes, timeouts, fast_retransmits, limited_transmits, early_retransmits, recoveries, recovery_ns, sack_retransmits, sack_transfers, ca_events, non_ca_events, other_losses, rack_marked, reo_timeouts, tlp_probes, tlp_recoveries, dsacks_received, dsacks_sent, undos, syn_retransmits, synack_retransmits, bytes_acked, rtt_samples, rtt_sum_ns, cwnd_integral, open_ns, bytes_delivered, acks_sent, delack_timeouts, ooo_segments, dup_segments, ecn_reductions, ce_received);
        d
    }

    /// Add another connection's counters (a flow's successive transfers).
    pub fn add(&mut self, o: &ConnStats) {
        let mins = if self.rtt_samples == 0 { o.rtt_min_ns } else if o.rtt_samples == 0 { self.rtt_min_ns } else { self.rtt_min_ns.min(o.rtt_min_ns) };
        self.segs_sent += o.segs_sent;
        self.bytes_sent += o.bytes_sent;
        self.retransmits += o.retransmits;
        self.retransmitted_bytes += o.retransmitted_bytes;
        self.timeouts += o.timeouts;
        self.fast_retransmits += o.fast_retransmits;
        self.limited_transmits += o.limited_transmits;
        self.early_retransmits += o.early_retransmits;
        self.recoveries += o.recoveries;
        self.sack_retransmits += o.sack_retransmits;
        self.recovery_ns += o.recovery_ns;
        self.sack_transfers += o.sack_transfers;
        self.ca_events += o.ca_events;
        self.non_ca_events += o.non_ca_events;
        self.other_losses += o.other_losses;
        self.rack_marked += o.rack_marked;
        self.reo_timeouts += o.reo_timeouts;
        self.tlp_probes += o.tlp_probes;
        self.tlp_recoveries += o.tlp_recoveries;
        self.dsacks_received += o.dsacks_received;
        self.dsacks_sent += o.dsacks_sent;
        self.undos += o.undos;
        self.syn_retransmits += o.syn_retransmits;
        self.synack_retransmits += o.synack_retransmits;
        self.bytes_acked += o.bytes_acked;
        self.rtt_samples += o.rtt_samples;
        self.rtt_sum_ns += o.rtt_sum_ns;
        self.rtt_min_ns = mins;
        self.rtt_max_ns = self.rtt_max_ns.max(o.rtt_max_ns);
        self.cwnd_max = self.cwnd_max.max(o.cwnd_max);
        self.cwnd_integral += o.cwnd_integral;
        self.open_ns += o.open_ns;
        self.bytes_delivered += o.bytes_delivered;
        self.acks_sent += o.acks_sent;
        self.delack_timeouts += o.delack_timeouts;
        self.ooo_segments += o.ooo_segments;
        self.dup_segments += o.dup_segments;
        self.ecn_reductions += o.ecn_reductions;
        self.ce_received += o.ce_received;
    }
}
