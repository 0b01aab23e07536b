//! Proportional Rate Reduction (RFC 9937, which obsoletes RFC 6937) as Linux computes it
//! (`tcp_init_cwnd_reduction`, `tcp_cwnd_reduction`, `tcp_end_cwnd_reduction` in
//! net/ipv4/tcp_input.c): how much a sender may send on each ACK of a fast recovery so that the
//! data in flight falls smoothly from the window before the loss to ssthresh, instead of all at
//! once. A self-contained calculator: a recovery strategy feeds it the ACKs and the sends and sets
//! cwnd to what it returns; it knows nothing of the strategy (RFC 6675's or Linux's).
//!
//! Units: the kernel counts packets, the simulator bytes. [`Prr`] takes and returns bytes and
//! rounds as the kernel does in packets of one MSS: the proportional part is
//! DIV_ROUND_UP(ssthresh · prr_delivered, RecoverFS) whole segments (the kernel's `div_u64` of
//! `ssthresh · prr_delivered + prior_cwnd − 1` by `prior_cwnd`), the SafeACK allowance one MSS,
//! the forced first transmission one MSS. With every quantity a whole number of segments the result
//! is the kernel's, segment for segment; a short segment (the end of a transfer) counts its bytes.

/// What one ACK tells PRR (Linux's `tcp_cwnd_reduction(sk, newly_acked_sacked, newly_lost,
/// flag)`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PrrAck {
    /// RFC 9937 DeliveredData: bytes newly acknowledged cumulatively plus the change in SACKed
    /// bytes (Linux `newly_acked_sacked`, in packets there).
    pub delivered: u64,
    /// RFC 9937 `pipe` after the ACK's losses are marked and before anything is sent in reply
    /// (Linux `tcp_packets_in_flight()`).
    pub in_flight: u64,
    /// The ACK advanced SND.UNA (Linux `FLAG_SND_UNA_ADVANCED`).
    pub snd_una_advanced: bool,
    /// The ACK marked further data lost (Linux `rs->losses` > 0, the `newly_lost` argument).
    pub newly_lost: bool,
}

/// One PRR episode's state: from `enter` (the start of fast recovery) to `exit`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Prr {
    mss: u64,
    /// RecoverFS. RFC 9937 sets it to FlightSize at the start of recovery (the pipe before the
    /// first retransmission, in its words "RecoverFS = snd.nxt − snd.una" adjusted for SACKed
    /// data); Linux uses the congestion window before the reduction, `tp->prior_cwnd =
    /// tcp_snd_cwnd(tp)` in `tcp_init_cwnd_reduction`. This is Linux's choice: `enter`'s
    /// `prior_cwnd`. The RFC's value is kept as `prior_in_flight` for comparison.
    recover_fs: u64,
    /// FlightSize (pipe) when recovery began: the RFC's RecoverFS, not used in the arithmetic.
    prior_in_flight: u64,
    ssthresh: u64,
    /// Bytes delivered to the receiver since recovery began (RFC 9937 `prr_delivered`).
    prr_delivered: u64,
    /// Bytes sent since recovery began, retransmissions and new data (RFC 9937 `prr_out`; Linux
    /// adds the packets of `tcp_xmit_retransmit_queue` and `tcp_write_xmit` while in a cwnd
    /// reduction).
    prr_out: u64,
    active: bool,
}

impl Prr {
    /// A calculator for segments of `mss` bytes, outside any episode.
    pub fn new(mss: u64) -> Prr {
        Prr { mss: mss.max(1), ..Prr::default() }
    }

    /// Fast recovery begins (Linux `tcp_init_cwnd_reduction`; RFC 9937's initialisation):
    /// `prior_cwnd`, the congestion window before the reduction, becomes RecoverFS (Linux's
    /// choice, where RFC 9937 uses FlightSize, `prior_in_flight`); `ssthresh`, the controller's new
    /// threshold; prr_delivered = prr_out = 0.
    pub fn enter(&mut self, prior_cwnd: u64, ssthresh: u64, prior_in_flight: u64) {
        *self = Prr { mss: self.mss, recover_fs: prior_cwnd.max(1), prior_in_flight, ssthresh, prr_delivered: 0, prr_out: 0, active: true };
    }

    /// Segments are `mss` bytes from now on (the timestamps option, negotiated after the
    /// calculator was made, takes 12 bytes of each: `SenderCore::use_timestamps`).
    pub fn set_mss(&mut self, mss: u64) {
        self.mss = mss.max(1);
    }

    /// Whether an episode is under way (between `enter` and `exit`).
    pub fn active(&self) -> bool {
        self.active
    }

    /// The cwnd to use after this ACK: pipe + sndcnt (Linux `tcp_cwnd_reduction`; RFC 9937's
    /// per-ACK step). `None` when the ACK delivered nothing: the kernel returns before changing
    /// anything (`newly_acked_sacked <= 0`), RFC 9937 likewise ("if DeliveredData is 0, return").
    pub fn on_ack(&mut self, a: PrrAck) -> Option<u64> {
        if !self.active || a.delivered == 0 {
            return None;
        }
        let mss = self.mss as i128;
        self.prr_delivered += a.delivered;
        let (ssthresh, delivered, out) = (self.ssthresh as i128, self.prr_delivered as i128, self.prr_out as i128);
        let delta = ssthresh - a.in_flight as i128;
        let mut sndcnt = if delta < 0 {
            // pipe > ssthresh: the proportional part, sndcnt = ⌈ssthresh · prr_delivered /
            // RecoverFS⌉ − prr_out, rounded up to whole segments as the kernel's packets are
            // (`div_u64(ssthresh * prr_delivered + prior_cwnd - 1, prior_cwnd)`).
            let den = self.recover_fs as i128 * mss;
            let segs = (ssthresh * delivered + den - 1) / den;
            segs * mss - out
        } else {
            // pipe ≤ ssthresh: the slow-start reduction bound (PRR-SSRB), at least what this
            // ACK delivered and at most what brings pipe back to ssthresh; one MSS more on a
            // SafeACK, one that advances SND.UNA and marks no new loss (RFC 9937 `safeACK`;
            // Linux `flag & FLAG_SND_UNA_ADVANCED && !newly_lost`).
            let mut n = (delivered - out).max(a.delivered as i128);
            if a.snd_una_advanced && !a.newly_lost {
                n += mss;
            }
            n.min(delta)
        };
        // "Force a fast retransmit upon entering fast recovery": one segment while nothing has
        // been sent in this episode; never negative.
        sndcnt = sndcnt.max(if self.prr_out == 0 { mss } else { 0 });
        // Never below one segment: in packets the kernel's in_flight + sndcnt is at least 1
        // whenever something was delivered; in bytes a short delivery could leave less.
        Some((a.in_flight + sndcnt as u64).max(self.mss))
    }

    /// `bytes` were sent (a retransmission or new data) during the episode: prr_out += bytes.
    pub fn on_sent(&mut self, bytes: u64) {
        if self.active {
            self.prr_out += bytes;
        }
    }

    /// Fast recovery ends (Linux `tcp_end_cwnd_reduction`: "Reset cwnd to ssthresh in CWR or
    /// Recovery (unless it's undone)"; RFC 9937: at the end of recovery cwnd = ssthresh). Returns
    /// the cwnd to use: ssthresh.
    pub fn exit(&mut self) -> u64 {
        self.active = false;
        self.ssthresh
    }

    /// The episode ends without setting cwnd (a timeout takes over).
    pub fn abandon(&mut self) {
        self.active = false;
    }

    /// RecoverFS as used (the window before the reduction, Linux's `prior_cwnd`).
    pub fn recover_fs(&self) -> u64 {
        self.recover_fs
    }

    /// FlightSize when the episode began (RFC 9937's RecoverFS).
    pub fn prior_in_flight(&self) -> u64 {
        self.prior_in_flight
    }

    pub fn ssthresh(&self) -> u64 {
        self.ssthresh
    }

    pub fn prr_delivered(&self) -> u64 {
        self.prr_delivered
    }

    pub fn prr_out(&self) -> u64 {
        self.prr_out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    /// The kernel's `tcp_cwnd_reduction` transcribed in packets (ints, as in net/ipv4/tcp_input.c),
    /// the reference the byte calculator is checked against.
    struct Kernel {
        ssthresh: i64,
        prior_cwnd: i64,
        prr_delivered: i64,
        prr_out: i64,
    }

    impl Kernel {
        fn reduction(&mut self, newly_acked_sacked: i64, in_flight: i64, una_advanced: bool, newly_lost: bool) -> Option<i64> {
            let delta = self.ssthresh - in_flight;
            if newly_acked_sacked <= 0 {
                return None;
            }
            self.prr_delivered += newly_acked_sacked;
            let mut sndcnt = if delta < 0 {
                let dividend = self.ssthresh * self.prr_delivered + self.prior_cwnd - 1;
                dividend / self.prior_cwnd - self.prr_out
            } else {
                let mut s = (self.prr_delivered - self.prr_out).max(newly_acked_sacked);
                if una_advanced && !newly_lost {
                    s += 1;
                }
                delta.min(s)
            };
            sndcnt = sndcnt.max(if self.prr_out > 0 { 0 } else { 1 });
            Some(in_flight + sndcnt)
        }
    }

    /// Drive one episode: each ACK delivers `d` segments (SACKed or cumulatively acknowledged),
    /// the sender sends what cwnd − pipe allows, pipe follows. Returns the segments sent per ACK.
    fn episode(prior_cwnd: u64, ssthresh: u64, pipe0: u64, acks: &[(u64, bool, bool)]) -> Vec<u64> {
        let mut p = Prr::new(MSS);
        p.enter(prior_cwnd * MSS, ssthresh * MSS, pipe0 * MSS);
        let mut k = Kernel { ssthresh: ssthresh as i64, prior_cwnd: prior_cwnd as i64, prr_delivered: 0, prr_out: 0 };
        let mut pipe = pipe0;
        let mut sent = Vec::new();
        for &(d, una, lost) in acks {
            pipe -= d;
            let cwnd = p.on_ack(PrrAck { delivered: d * MSS, in_flight: pipe * MSS, snd_una_advanced: una, newly_lost: lost });
            let kc = k.reduction(d as i64, pipe as i64, una, lost);
            assert_eq!(cwnd.map(|c| c as i64), kc.map(|c| c * MSS as i64), "bytes against the kernel's packets");
            let n = cwnd.map_or(0, |c| c.saturating_sub(pipe * MSS) / MSS);
            p.on_sent(n * MSS);
            k.prr_out += n as i64;
            pipe += n;
            sent.push(n);
        }
        sent
    }

    /// The shape of RFC 6937 §3.1's first example (kept in RFC 9937's examples): one segment
    /// lost out of a window of 20 with ssthresh 10 (Reno's halving), every later segment's ACK
    /// delivering one. While pipe > ssthresh PRR sends one segment on every other ACK, the
    /// first (the fast retransmit) at once, ⌈10·d/20⌉ − prr_out; once pipe has come down to
    /// ssthresh it holds it there (PRR-SSRB) — where RFC 6675 would send nothing for half a
    /// window and then one per ACK. Here RecoverFS = prior cwnd = 20, so Linux and the RFC agree.
    #[test]
    fn one_loss_in_twenty_with_reno_halving_sends_on_every_other_ack() {
        // The ACK that enters recovery SACKs one segment and marks one lost: pipe 17 → 16.
        let mut acks = vec![(1, false, true)];
        acks.extend(std::iter::repeat_n((1, false, false), 15));
        let sent = episode(20, 10, 17, &acks);
        // pipe > ssthresh for the first 12 ACKs: the proportional part.
        let want: Vec<u64> = (1..=12u64).map(|d| (10 * d).div_ceil(20) - (10 * (d - 1)).div_ceil(20)).collect();
        assert_eq!(&sent[..12], &want[..]);
        assert_eq!(&sent[..6], &[1, 0, 1, 0, 1, 0]);
        // ACK 13 brings pipe to 10 = ssthresh: SSRB, min(ssthresh − pipe = 0, ·) = 0; then each
        // ACK takes pipe to 9 and one segment refills it (delta = 1).
        assert_eq!(&sent[12..], &[0, 1, 1, 1]);
    }

    /// CUBIC's β = 0.7 (ssthresh 7 of 10): ⌈7·d/10⌉ segments out after d delivered, about 7 for
    /// every 10 (the outside check's cwnd 10 → 8 → 7 ... comes from this arithmetic).
    #[test]
    fn cubic_beta_sends_seven_for_ten_delivered() {
        let mut p = Prr::new(MSS);
        p.enter(10 * MSS, 7 * MSS, 10 * MSS);
        let mut pipe = 9 * MSS; // one lost, nothing SACKed yet
        let mut total = 0;
        for d in 1..=10u64 {
            pipe -= MSS;
            // Keep pipe above ssthresh: the proportional branch alone.
            let in_flight = pipe.max(8 * MSS);
            let cwnd = p.on_ack(PrrAck { delivered: MSS, in_flight, snd_una_advanced: false, newly_lost: false }).unwrap();
            let n = (cwnd - in_flight) / MSS;
            assert_eq!(total + n, (7 * d).div_ceil(10), "after {d} delivered");
            total += n;
            p.on_sent(n * MSS);
        }
        assert_eq!(total, 7);
    }

    /// PRR-SSRB (RFC 9937, pipe ≤ ssthresh; Linux's `delta >= 0` branch): after many losses pipe
    /// falls below ssthresh; each ACK may send what it delivered, the backlog prr_delivered −
    /// prr_out, plus one MSS on a SafeACK, never past ssthresh.
    #[test]
    fn ssrb_bounds_and_the_safe_ack_allowance() {
        let mut p = Prr::new(MSS);
        p.enter(20 * MSS, 10 * MSS, 20 * MSS);
        // Many losses at once: pipe 4 < ssthresh 10. First ACK: max(1 − 0, 1) = 1, no SafeACK
        // (SND.UNA did not advance): cwnd = 4 + 1.
        assert_eq!(p.on_ack(PrrAck { delivered: MSS, in_flight: 4 * MSS, snd_una_advanced: false, newly_lost: true }), Some(5 * MSS));
        p.on_sent(MSS);
        // A SafeACK delivering 2: max(3 − 1, 2) + 1 = 3 → cwnd = pipe 3 + 3 = 6.
        assert_eq!(p.on_ack(PrrAck { delivered: 2 * MSS, in_flight: 3 * MSS, snd_una_advanced: true, newly_lost: false }), Some(6 * MSS));
        p.on_sent(3 * MSS);
        // SND.UNA advanced but a new loss was marked: no +1 (RFC 9937 safeACK; Linux `!newly_lost`).
        assert_eq!(p.on_ack(PrrAck { delivered: MSS, in_flight: 5 * MSS, snd_una_advanced: true, newly_lost: true }), Some(6 * MSS));
        p.on_sent(MSS);
        // The bound: never more than ssthresh − pipe.
        assert_eq!(p.on_ack(PrrAck { delivered: 4 * MSS, in_flight: 9 * MSS, snd_una_advanced: true, newly_lost: false }), Some(10 * MSS));
        assert_eq!((p.prr_delivered(), p.prr_out()), (8 * MSS, 5 * MSS));
    }

    /// An ACK that delivers nothing changes nothing (`newly_acked_sacked <= 0` returns early), and
    /// the first ACK of an episode always lets one segment out (the forced fast retransmit) even
    /// when the SSRB bound ssthresh − pipe is 0.
    #[test]
    fn nothing_delivered_nothing_changed_and_the_first_ack_sends_one() {
        let mut p = Prr::new(MSS);
        p.enter(10 * MSS, 5 * MSS, 10 * MSS);
        assert_eq!(p.on_ack(PrrAck { delivered: 0, in_flight: 9 * MSS, ..Default::default() }), None);
        // pipe = ssthresh exactly (delta = 0): min(0, ...) = 0, forced to one MSS.
        assert_eq!(p.on_ack(PrrAck { delivered: MSS, in_flight: 5 * MSS, ..Default::default() }), Some(6 * MSS));
        p.on_sent(MSS);
        assert_eq!(p.on_ack(PrrAck { delivered: MSS, in_flight: 5 * MSS, ..Default::default() }), Some(5 * MSS));
        assert_eq!(p.exit(), 5 * MSS);
        assert!(!p.active());
        assert_eq!(p.on_ack(PrrAck { delivered: MSS, in_flight: MSS, ..Default::default() }), None, "outside an episode");
    }

    /// RecoverFS is the window before the loss (Linux), not FlightSize (RFC 9937): with 10
    /// segments of window but only 6 in flight (an application-limited sender), Linux's ratio
    /// 5/10 sends less than the RFC's 5/6 would.
    #[test]
    fn recover_fs_is_the_prior_cwnd_as_linux_does() {
        let mut p = Prr::new(MSS);
        p.enter(10 * MSS, 5 * MSS, 6 * MSS);
        assert_eq!((p.recover_fs(), p.prior_in_flight()), (10 * MSS, 6 * MSS));
        let mut out = 0;
        let mut pipe = 6 * MSS;
        for d in 1..=2u64 {
            pipe -= MSS;
            let in_flight = pipe.max(6 * MSS); // keep the proportional branch
            let cwnd = p.on_ack(PrrAck { delivered: MSS, in_flight, ..Default::default() }).unwrap();
            let n = (cwnd - in_flight) / MSS;
            out += n;
            p.on_sent(n * MSS);
            assert_eq!(out, (5 * d).div_ceil(10), "Linux: ⌈5·{d}/10⌉");
        }
        assert_eq!(out, 1);
        assert_eq!((5 * 2u64).div_ceil(6), 2, "the RFC's RecoverFS = 6 would have let two out");
    }

    /// Bytes that are not whole segments round as the kernel's packets do: the proportional part
    /// is whole segments, so 1 byte delivered still allows one segment.
    #[test]
    fn rounding_is_in_whole_segments() {
        let mut p = Prr::new(MSS);
        p.enter(10 * MSS, 7 * MSS, 10 * MSS);
        assert_eq!(p.on_ack(PrrAck { delivered: 1, in_flight: 9 * MSS, ..Default::default() }), Some(10 * MSS));
        p.on_sent(MSS);
        // ⌈7·1001/10000⌉ = 1 segment, already sent: nothing more.
        assert_eq!(p.on_ack(PrrAck { delivered: MSS, in_flight: 9 * MSS, ..Default::default() }), Some(9 * MSS));
    }

    /// Against the kernel's formula on a long mixed run (losses, SafeACKs, stretch ACKs).
    #[test]
    fn agrees_with_the_kernel_formula_ack_for_ack() {
        let acks = [(1, false, true), (1, false, false), (2, false, false), (1, true, false), (3, true, true), (1, false, false), (2, true, false), (1, true, false), (4, true, false), (1, true, false)];
        let sent = episode(30, 21, 26, &acks);
        assert_eq!(sent.len(), acks.len());
        assert!(sent[0] >= 1, "the first ACK lets the fast retransmit out");
    }
}
