//! DCTCP (Alizadeh et al., SIGCOMM 2010; RFC 8257) as Linux's `net/ipv4/tcp_dctcp.c` computes
//! it: α, the moving average of the fraction of data delivered with ECN-Echo, updated once per
//! window of data with g = 1/16 (`dctcp_update_alpha`), and on ECE, once per window, cwnd ←
//! cwnd·(1 − α/2) (`dctcp_ssthresh`). Growth, losses and timeouts are Reno's (`tcp_reno_cong_avoid`,
//! `dctcp_react_to_loss`: ssthresh = half the window). The receiver's exact CE echo (RFC 8257
//! §3.2, `dctcp_ece_ack_update`) lives in the receive half (`receiver.rs`), which asks
//! `needs_ecn`.

use super::{AckEvent, AckSample, CongestionControl, CongestionEvent, Reno, Window};
use crate::tcp::config::TcpConfig;

/// `DCTCP_MAX_ALPHA`: α is kept in units of 1/1024.
pub const DCTCP_MAX_ALPHA: u32 = 1024;
/// `dctcp_shift_g` 4: g = 1/2⁴ (RFC 8257 §4.2 recommends 1/16).
pub const DCTCP_SHIFT_G: u32 = 4;
/// `dctcp_alpha_on_init` (1024: α starts at 1, RFC 8257 §3.3 "initialized to 1").
pub const DCTCP_ALPHA_ON_INIT: u32 = DCTCP_MAX_ALPHA;

pub struct Dctcp {
    reno: Reno,
    mss: u64,
    /// α in 1/1024 (`ca->dctcp_alpha`).
    alpha: u32,
    /// The window of data being measured ends when snd_una reaches this (`ca->next_seq`). At
    /// `dctcp_init` (when the connection opens) `dctcp_reset` takes snd_nxt, the first data
    /// sequence number 1, so the first ACK of data ends a window at once.
    next_seq: u64,
    /// Packets delivered, and delivered on ACKs with ECE, since the connection began
    /// (`tp->delivered`, `tp->delivered_ce`), and their values at the window's start.
    delivered: u64,
    delivered_ce: u64,
    old_delivered: u64,
    old_delivered_ce: u64,
}

impl Dctcp {
    pub fn new(cfg: &TcpConfig) -> Self {
        Dctcp {
            reno: Reno::new(cfg),
            mss: cfg.mss.0,
            alpha: DCTCP_ALPHA_ON_INIT.min(DCTCP_MAX_ALPHA),
            next_seq: 1,
            delivered: 0,
            delivered_ce: 0,
            old_delivered: 0,
            old_delivered_ce: 0,
        }
    }

    /// α in 1/1024.
    pub fn alpha(&self) -> u32 {
        self.alpha
    }

    /// `dctcp_reset`: a new window of data starts at snd_nxt.
    fn reset(&mut self, snd_nxt: u64) {
        self.next_seq = snd_nxt;
        self.old_delivered = self.delivered;
        self.old_delivered_ce = self.delivered_ce;
    }
}

impl CongestionControl for Dctcp {
    fn name(&self) -> &'static str {
        "dctcp"
    }

    /// `tcp_reno_cong_avoid`.
    fn on_ack(&mut self, w: &mut Window, a: &AckSample) {
        self.reno.on_ack(w, a);
    }

    fn on_congestion_event(&mut self, w: &mut Window, ev: CongestionEvent) {
        match ev {
            // `dctcp_ssthresh` (through tcp_enter_cwr → tcp_init_cwnd_reduction): RFC 8257 §3.3
            // "cwnd = cwnd × (1 − DCTCP.Alpha / 2)", in packets: cwnd − (cwnd·α >> 11), at least 2.
            // The window goes there at once (Linux lowers it over the round with PRR).
            CongestionEvent::Ecn(_) => {
                let cwnd = (w.cwnd / self.mss).max(1);
                let ssthresh = cwnd.saturating_sub((cwnd * self.alpha as u64) >> 11).max(2);
                w.ssthresh = ssthresh * self.mss;
                w.cwnd = w.ssthresh;
                self.reno.end_hystart_pp();
            }
            // Losses, timeouts and the rest as Reno (`dctcp_react_to_loss` halves the window;
            // RFC 8257 §3.4 "react to loss as a conventional TCP").
            ev => self.reno.on_congestion_event(w, ev),
        }
    }

    /// `dctcp_update_alpha` (the `in_ack_event` hook): count what the ACK delivered, with ECE or
    /// not (`tcp_count_delivered`); when snd_una passes the end of the window of data, α ←
    /// α − α·g + g·F with F = delivered_ce / delivered over the window (RFC 8257 §3.3), in the
    /// kernel's integers: α −= min_not_zero(α, α >> g); α += (ce << (10 − g)) / delivered.
    fn on_ack_event(&mut self, _w: &Window, e: &AckEvent) {
        let pkts = e.delivered.div_ceil(self.mss);
        self.delivered += pkts;
        if e.ece {
            self.delivered_ce += pkts;
        }
        if e.snd_una >= self.next_seq {
            let delivered = self.delivered - self.old_delivered;
            let mut delivered_ce = self.delivered_ce - self.old_delivered_ce;
            let mut alpha = self.alpha;
            let shifted = alpha >> DCTCP_SHIFT_G;
            // min_not_zero(alpha, alpha >> g): below 16, α >> g is 0 and α drops to 0.
            alpha -= if shifted == 0 { alpha } else { alpha.min(shifted) };
            if delivered_ce > 0 {
                delivered_ce <<= 10 - DCTCP_SHIFT_G;
                delivered_ce /= delivered.max(1);
                alpha = (alpha as u64 + delivered_ce).min(DCTCP_MAX_ALPHA as u64) as u32;
            }
            self.alpha = alpha;
            self.reset(e.snd_nxt);
        }
    }

    fn needs_ecn(&self) -> bool {
        true
    }

    fn wants_delivery_samples(&self) -> bool {
        self.reno.wants_delivery_samples()
    }

    fn dctcp_alpha(&self) -> Option<u32> {
        Some(self.alpha)
    }
}
