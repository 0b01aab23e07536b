//! Packet-level tests of SACK (RFC 2018), the three SACK-based recoveries (RFC 6675, ns Sack1,
//! FACK-RH), the initial-window forms and the restart window, plus the TBIT procedures of
//! Ladha et al. §3 run as scripted receivers against the presets.

use tcplab_core::net::{SackBlock, Segment, FLAG_ACK, FLAG_SYN, MAX_SACK_BLOCKS};
use tcplab_core::tcp::config::{preset, InitialWindow, IwRule, Limit, Unlimited};
use tcplab_core::tcp::{OutSeg, TcpConfig, TcpReceiver, TcpSender};
use tcplab_core::units::{ms, Size, Time, SEC};
use tcplab_core::{run, RunResult, Scenario};

const MSS: u64 = 1000;

fn cfg(name: &str) -> TcpConfig {
    let mut c = TcpConfig::rfc();
    (preset(name).unwrap().apply)(&mut c);
    c.mss = Size(MSS);
    c.handshake = false;
    c.fin = false;
    c.rwnd = Limit::Named(Unlimited::Unlimited);
    c
}

/// Bytes of data segments lo..=hi as a SACK block.
fn blk(lo: u64, hi: u64) -> SackBlock {
    SackBlock {
        left: 1 + (lo - 1) * MSS,
        right: 1 + hi * MSS,
    }
}

struct Snd {
    s: TcpSender,
    out: Vec<OutSeg>,
}

impl Snd {
    fn new(c: TcpConfig, bytes: Option<u64>) -> Snd {
        let mut h = Snd {
            s: TcpSender::new(c, bytes),
            out: Vec::new(),
        };
        h.s.start(0, &mut h.out);
        h.s.take_timer_events().for_each(drop);
        h
    }
    fn sent(&mut self) -> Vec<OutSeg> {
        std::mem::take(&mut self.out)
    }
    fn sent_segs(&mut self) -> Vec<u64> {
        self.sent()
            .iter()
            .filter(|o| o.seg.len > 0)
            .map(|o| (o.seg.seq - 1) / MSS + 1)
            .collect()
    }
    /// An ACK of segments 1..=k with SACK blocks (given as segment ranges).
    fn ack(&mut self, t: Time, k: u64, sacks: &[(u64, u64)]) {
        let mut seg = Segment {
            seq: 1,
            ack: 1 + k * MSS,
            flags: FLAG_ACK,
            wnd: u32::MAX,
            ..Default::default()
        };
        let blocks: Vec<SackBlock> = sacks.iter().map(|&(lo, hi)| blk(lo, hi)).collect();
        seg.set_sack_blocks(&blocks);
        self.s.on_segment(t, &seg, &mut self.out);
        self.s.take_timer_events().for_each(drop);
    }
    fn rto(&mut self) -> Time {
        let d = self
            .s
            .core
            .rto_timer
            .deadline()
            .expect("the RTO timer is running");
        self.s.core.rto_timer.cancel();
        self.s.on_rto(d, &mut self.out);
        self.s.take_timer_events().for_each(drop);
        d
    }
    fn cwnd_segs(&self) -> f64 {
        self.s.core.cwnd as f64 / MSS as f64
    }
}

/// A sender of `name` with a window of `w` segments in flight (segments 1..=w sent, none
/// acknowledged), in congestion avoidance.
fn in_flight(name: &str, w: u32) -> Snd {
    let mut c = cfg(name);
    c.initial_window = InitialWindow::Segments(w);
    c.initial_ssthresh = Limit::Bytes(Size(w as u64 * MSS));
    let mut h = Snd::new(c, None);
    assert_eq!(h.sent_segs(), (1..=w as u64).collect::<Vec<_>>());
    h
}

// ---------------------------------------------------------------------------------------------
// SACK receiver (RFC 2018 §4) and negotiation (§2)

fn data(k: u64) -> Segment {
    Segment {
        seq: 1 + (k - 1) * MSS,
        ack: 0,
        len: MSS as u32,
        flags: FLAG_ACK,
        ..Default::default()
    }
}

fn blocks(o: &OutSeg) -> Vec<(u64, u64)> {
    o.seg
        .sack_blocks()
        .iter()
        .map(|b| ((b.left - 1) / MSS + 1, (b.right - 1) / MSS))
        .collect()
}

#[test]
fn receiver_first_sack_block_holds_the_latest_segment() {
    let mut c = cfg("sack");
    c.delayed_ack = false;
    let mut r = TcpReceiver::new(c);
    let mut out = Vec::new();
    let mut feed = |k: u64, out: &mut Vec<OutSeg>| {
        out.clear();
        r.on_segment(ms(k), &data(k), out);
        assert_eq!(out.len(), 1, "one ACK per segment");
        (out[0].seg.ack, blocks(&out[0]))
    };
    assert_eq!(
        feed(1, &mut out),
        (1 + MSS, vec![]),
        "in order: no SACK block"
    );
    assert_eq!(feed(3, &mut out).1, [(3, 3)]);
    assert_eq!(
        feed(5, &mut out).1,
        [(5, 5), (3, 3)],
        "the newest first, then the most recently reported"
    );
    assert_eq!(feed(7, &mut out).1, [(7, 7), (5, 5), (3, 3)]);
    // Segment 4 joins blocks 3 and 5: the merged block is the newest.
    assert_eq!(feed(4, &mut out).1, [(3, 5), (7, 7)]);
    assert_eq!(feed(9, &mut out).1, [(9, 9), (3, 5), (7, 7)]);
    assert_eq!(feed(11, &mut out).1, [(11, 11), (9, 9), (3, 5), (7, 7)]);
    // More ranges than fit: the least recently changed one is left out (4 blocks at most).
    let (_, b) = feed(13, &mut out);
    assert_eq!(b, [(13, 13), (11, 11), (9, 9), (3, 5)]);
    assert_eq!(b.len(), MAX_SACK_BLOCKS);
    // Segment 2 fills the first hole: the cumulative ACK moves to 6 and blocks below it go.
    let (ack, b) = feed(2, &mut out);
    assert_eq!(ack, 1 + 5 * MSS);
    assert_eq!(b, [(13, 13), (11, 11), (9, 9), (7, 7)]);
}

#[test]
fn receiver_sack_block_limit_is_configurable() {
    let mut c = cfg("sack1");
    c.delayed_ack = false;
    assert_eq!(c.sack_blocks, 3, "ns-2's Sack1 sink reports 3 blocks");
    let mut r = TcpReceiver::new(c);
    let mut out = Vec::new();
    for k in [1, 3, 5, 7, 9] {
        out.clear();
        r.on_segment(ms(k), &data(k), &mut out);
    }
    assert_eq!(blocks(&out[0]), [(9, 9), (7, 7), (5, 5)]);
}

#[test]
fn sack_permitted_is_negotiated_in_the_handshake() {
    // RFC 2018 §2: the SYN offers SACK-permitted; the receiver agrees only if it was offered
    // and it is willing.
    let mut c = cfg("sack");
    c.handshake = true;
    let mut out = Vec::new();
    let mut snd = TcpSender::new(c.clone(), None);
    snd.start(0, &mut out);
    assert!(
        out[0].seg.syn() && out[0].seg.sack_permitted,
        "the SYN offers SACK"
    );
    let mut r = TcpReceiver::new(c.clone());
    let mut rout = Vec::new();
    r.on_segment(ms(50), &out[0].seg, &mut rout);
    assert!(
        rout[0].seg.syn() && rout[0].seg.sack_permitted,
        "the SYN-ACK agrees"
    );
    // A SYN without the option gets a SYN-ACK without it, and no SACK blocks later.
    let mut plain = out[0].seg.clone();
    plain.sack_permitted = false;
    let mut r2 = TcpReceiver::new(c.clone());
    rout.clear();
    r2.on_segment(ms(50), &plain, &mut rout);
    assert!(!rout[0].seg.sack_permitted);
    r2.on_segment(
        ms(60),
        &Segment {
            seq: 1,
            ack: 1,
            flags: FLAG_ACK,
            ..Default::default()
        },
        &mut rout,
    );
    rout.clear();
    r2.on_segment(ms(70), &data(2), &mut rout);
    assert_eq!(rout[0].seg.n_sack, 0, "no SACK blocks without agreement");
    // The sender: a SYN-ACK without SACK-permitted makes a SACK variant fall back to NewReno.
    out.clear();
    let mut snd2 = TcpSender::new(c, None);
    snd2.start(0, &mut out);
    let synack = Segment {
        seq: 0,
        ack: 1,
        flags: FLAG_SYN | FLAG_ACK,
        wnd: u32::MAX,
        ..Default::default()
    };
    snd2.on_segment(ms(100), &synack, &mut out);
    assert!(!snd2.core.sack_ok);
    assert_eq!(snd2.rec.name(), "newreno");
    assert_eq!(snd.rec.name(), "sack");
}

// ---------------------------------------------------------------------------------------------
// RFC 6675

#[test]
fn rfc6675_duplicate_acks_are_acks_with_new_sack_information() {
    let mut h = in_flight("sack", 10);
    h.ack(ms(100), 0, &[(2, 2)]);
    h.ack(ms(101), 0, &[(2, 3)]);
    assert_eq!(h.s.core.dupacks, 2);
    // The same SACK information again is not a duplicate ACK (RFC 6675 §2).
    h.ack(ms(102), 0, &[(2, 3)]);
    assert_eq!(h.s.core.dupacks, 2);
    assert!(!h.s.core.in_recovery);
    assert_eq!(h.sent_segs(), Vec::<u64>::new());
    h.ack(ms(103), 0, &[(2, 4)]);
    assert!(
        h.s.core.in_recovery,
        "the third duplicate ACK with new SACK information"
    );
    assert_eq!(h.sent_segs()[0], 1, "retransmit HighACK + 1");
}

#[test]
fn rfc6675_enters_recovery_when_is_lost_before_three_duplicate_acks() {
    // One ACK SACKing three segments (the ACKs between were lost): IsLost(HighACK + 1) holds
    // with one duplicate ACK (RFC 6675 §5 step 2).
    let mut h = in_flight("sack", 10);
    h.ack(ms(100), 0, &[(2, 4)]);
    assert_eq!(h.s.core.dupacks, 1);
    assert!(h.s.core.in_recovery);
    assert_eq!(h.s.core.stats.fast_retransmits, 1);
    assert_eq!(
        h.s.core.stats.early_retransmits, 0,
        "not an Early Retransmit"
    );
    assert_eq!(h.sent_segs()[0], 1);
}

#[test]
fn rfc6675_recovery_halves_and_follows_next_seg() {
    // Ten segments out, 1 and 4 lost. SACKs for 2, 3, 5 (3 duplicate ACKs): enter recovery,
    // ssthresh = cwnd = FlightSize/2 = 5, retransmit 1, HighRxt = end of 1.
    let mut h = in_flight("sack", 10);
    h.ack(ms(100), 0, &[(2, 2)]);
    h.ack(ms(101), 0, &[(2, 3)]);
    assert_eq!(
        h.sent_segs(),
        Vec::<u64>::new(),
        "no Limited Transmit in the `sack` preset"
    );
    h.ack(ms(102), 0, &[(5, 5), (2, 3)]);
    assert!(h.s.core.in_recovery);
    assert_eq!(h.s.core.ssthresh, 5 * MSS);
    assert_eq!(h.cwnd_segs(), 5.0);
    // pipe: holes 1 (lost, retransmitted: 1) and 4 (not lost: 1), 6..10 (5) = 7 > cwnd 5.
    assert_eq!(h.sent_segs(), [1]);
    // More SACKs: 6, 7 — segment 4 now has 3 segments SACKed above it (5, 6, 7): IsLost.
    h.ack(ms(103), 0, &[(5, 6), (2, 3)]);
    assert_eq!(h.sent_segs(), Vec::<u64>::new(), "pipe 6 ≥ cwnd 5");
    h.ack(ms(104), 0, &[(5, 7), (2, 3)]);
    // pipe: 1 (retransmitted, lost: 1) + 4 (lost: 0) + 8..10 (3) = 4: one segment: rule (1), 4.
    assert_eq!(h.sent_segs(), [4]);
    assert_eq!(h.s.core.stats.sack_retransmits, 2);
    h.ack(ms(105), 0, &[(5, 8), (2, 3)]);
    // pipe: 1 + 4 (retransmitted) + 9..10 = 4: rule (2), new data 11.
    assert_eq!(h.sent_segs(), [11]);
    // The retransmission of 1 arrives: cumulative ACK to 3, still below RecoveryPoint (11).
    h.ack(ms(200), 3, &[(5, 8)]);
    assert!(h.s.core.in_recovery);
    assert_eq!(h.s.core.stats.ca_events, 0, "the loss episode is open");
    h.ack(ms(201), 10, &[]);
    assert!(
        !h.s.core.in_recovery,
        "HighACK ≥ RecoveryPoint ends recovery"
    );
    assert_eq!(
        h.s.core.stats.retransmits, 2,
        "only the two lost segments were resent"
    );
    assert_eq!(
        h.s.core.stats.ca_events, 1,
        "one window reduction, no timeout: one CA event"
    );
    assert_eq!(h.s.core.stats.recoveries, 1);
}

#[test]
fn rfc6675_rescue_retransmission() {
    // Rule (4): when nothing is lost by IsLost, no new data may be sent and HighACK has passed
    // RescueRxt, one segment holding the highest unSACKed byte goes out, once per recovery.
    let mut c = cfg("sack");
    c.initial_window = InitialWindow::Segments(6);
    let mut h = Snd::new(c, Some(6 * MSS));
    assert_eq!(h.sent_segs(), [1, 2, 3, 4, 5, 6]);
    // 1 and 6 lost; 2..5 SACKed: enter recovery, retransmit 1; cwnd = 3.
    h.ack(ms(100), 0, &[(2, 2)]);
    h.ack(ms(101), 0, &[(2, 3)]);
    h.ack(ms(102), 0, &[(2, 4)]);
    assert_eq!(h.sent_segs(), [1]);
    h.ack(ms(103), 0, &[(2, 5)]);
    // RescueRxt is the end of the first retransmission: HighACK has not passed it yet.
    assert_eq!(h.sent_segs(), Vec::<u64>::new());
    // The retransmission of 1 is acknowledged (with 2..5): now the rescue sends 6, the segment
    // holding the highest outstanding unSACKed byte, before any timeout.
    h.ack(ms(200), 5, &[]);
    assert_eq!(h.sent_segs(), [6]);
    assert!(h.s.core.in_recovery);
    h.ack(ms(201), 5, &[]);
    assert_eq!(h.sent_segs(), Vec::<u64>::new(), "one rescue per recovery");
    h.ack(ms(300), 6, &[]);
    assert!(!h.s.core.in_recovery);
    assert_eq!(h.s.core.stats.timeouts, 0);
}

#[test]
fn rfc6675_after_a_timeout_the_scoreboard_is_rebuilt_and_sacked_data_skipped() {
    let mut h = in_flight("sack", 6);
    h.ack(ms(100), 0, &[(3, 3)]);
    let t = h.rto();
    assert_eq!(h.sent_segs(), [1], "the timeout resends the first segment");
    assert!(
        h.s.core.sb.is_empty(),
        "RFC 6675 §5.1: the scoreboard is expunged"
    );
    // The next ACK SACKs 3..6 again: go-back-N sends 2 and skips what is SACKed.
    h.ack(t + ms(100), 1, &[(3, 6)]);
    assert_eq!(
        h.sent_segs(),
        [2],
        "3..6 are SACKed: not resent (cwnd 2 after the ACK)"
    );
    assert_eq!(h.s.core.stats.retransmits, 2);
    assert!(
        !h.s.core.in_recovery,
        "no fast recovery before HighACK reaches RecoveryPoint"
    );
}

#[test]
fn rfc6675_limited_transmit_is_governed_by_pipe() {
    // RFC 6675 §5 step (3) with Limited Transmit: on each duplicate ACK below DupThresh, send
    // new data while cwnd − pipe ≥ 1 SMSS.
    let mut h = in_flight("sack-iw-lt", 4);
    h.ack(ms(100), 0, &[(2, 2)]);
    assert_eq!(h.sent_segs(), [5]);
    h.ack(ms(101), 0, &[(2, 3)]);
    assert_eq!(h.sent_segs(), [6]);
    assert_eq!(h.s.core.stats.limited_transmits, 2);
    h.ack(ms(102), 0, &[(2, 4)]);
    assert!(h.s.core.in_recovery);
    // FlightSize for ssthresh leaves out the two Limited Transmit segments: (6 − 2)/2 = 2.
    assert_eq!(h.s.core.ssthresh, 2 * MSS);
}

// ---------------------------------------------------------------------------------------------
// ns Sack1

#[test]
fn sack1_retransmits_every_hole_below_the_highest_sack_as_pipe_allows() {
    // Ten out; 1, 3 and 5 lost. Duplicate ACKs per RFC 5681 (with SACK blocks).
    let mut h = in_flight("sack1", 10);
    h.ack(ms(100), 0, &[(2, 2)]);
    h.ack(ms(101), 0, &[(4, 4), (2, 2)]);
    assert_eq!(
        h.sent_segs(),
        Vec::<u64>::new(),
        "no Limited Transmit in the preset"
    );
    h.ack(ms(102), 0, &[(6, 6), (4, 4), (2, 2)]);
    assert!(h.s.core.in_recovery);
    // ns slowdown(): ssthresh = cwnd = window/2 = 5.
    assert_eq!(h.s.core.ssthresh, 5 * MSS);
    assert_eq!(h.cwnd_segs(), 5.0);
    // tcp/tcp-sack1.cc dupack_action(): pipe_ = maxseq_ − highest_ack_ − numdupacks = 10 − 3
    // = 7; the fast retransmission of 1 goes out through output(), not send_much(), and is not
    // counted in pipe_.
    assert_eq!(h.sent_segs(), [1]);
    // Each further duplicate ACK takes one from pipe (7 → 6, 5, 4); below cwnd (5) the next hole
    // goes out, without waiting for three SACKs above it (unlike RFC 6675's IsLost).
    for (t, hi) in [(103, 7), (104, 8)] {
        h.ack(ms(t), 0, &[(6, hi), (4, 4), (2, 2)]);
        assert_eq!(h.sent_segs(), Vec::<u64>::new());
    }
    h.ack(ms(105), 0, &[(6, 9), (4, 4), (2, 2)]);
    assert_eq!(h.sent_segs(), [3], "pipe 4 < cwnd 5: the second hole, one ACK after the third dupACK");
    h.ack(ms(106), 0, &[(6, 10), (4, 4), (2, 2)]);
    assert_eq!(h.sent_segs(), [5], "pipe 5 − 1 = 4: the third hole");
    assert_eq!(h.s.core.stats.sack_retransmits, 3);
    // A partial ACK takes two from pipe (5 → 3): two new segments.
    h.ack(ms(200), 2, &[(6, 10), (4, 4)]);
    assert_eq!(h.sent_segs(), [11, 12]);
    h.ack(ms(201), 4, &[(6, 10)]);
    assert_eq!(h.sent_segs(), [13, 14]);
    h.ack(ms(202), 10, &[]);
    assert!(!h.s.core.in_recovery);
    assert_eq!(h.cwnd_segs(), 5.0, "leaves recovery with cwnd = ssthresh");
    assert_eq!(h.s.core.stats.retransmits, 3);
    assert_eq!(h.s.core.stats.recoveries, 1);
}

#[test]
fn sack1_sends_only_the_fast_retransmission_on_the_ack_that_starts_recovery() {
    // Four out, the first lost. tcp/tcp-sack1.cc recv() picks its branch before
    // dupack_action() sets fastrecov_; outside fast recovery send_much() runs only when
    // `dupacks_ == 0`, so the third duplicate ACK sends the retransmission alone, although
    // pipe_ = maxseq_ − highest_ack_ − numdupacks = 4 − 3 = 1 is below cwnd_ = 2 (RFC 6675 would
    // send a new segment beside it).
    let mut h = in_flight("sack1", 4);
    h.ack(ms(100), 0, &[(2, 2)]);
    h.ack(ms(101), 0, &[(2, 3)]);
    assert_eq!(h.sent_segs(), Vec::<u64>::new());
    h.ack(ms(102), 0, &[(2, 4)]);
    assert!(h.s.core.in_recovery);
    assert_eq!(h.cwnd_segs(), 2.0);
    assert_eq!(h.sent_segs(), [1], "the fast retransmission and no new segment");
    // The ACK of the retransmission ends the recovery (recover_ = maxseq_): cwnd 2, two new.
    h.ack(ms(200), 4, &[]);
    assert!(!h.s.core.in_recovery);
    assert_eq!(h.sent_segs(), [5, 6]);
}

#[test]
fn sack1_fast_retransmits_again_once_the_recovery_is_over() {
    // tcp/tcp-sack1.cc recv(): the ACK that ends fast recovery sets recover_ = 0, so three
    // duplicates of that very ACK start a new recovery (dupack_action(): highest_ack_ >
    // recover_), though the lost segment was sent inside the one just repaired. RFC 6582's guard
    // (the ACK must cover more than `recover`) would refuse it; ns-2's Sack1 does not.
    let mut h = in_flight("sack1", 10);
    for hi in 2..=10 {
        h.ack(ms(100 + hi), 0, &[(2, hi)]);
    }
    assert!(h.s.core.in_recovery);
    let sent: Vec<u64> = h.sent_segs();
    assert_eq!(sent[0], 1, "the fast retransmission");
    assert_eq!(sent[1..], [11, 12, 13, 14], "new segments as pipe falls below cwnd 5");
    h.ack(ms(200), 10, &[]);
    assert!(!h.s.core.in_recovery);
    assert_eq!(h.sent_segs(), [15]);
    // Segment 11 lost: three duplicates of the ACK that ended the recovery.
    h.ack(ms(300), 10, &[(12, 12)]);
    h.ack(ms(301), 10, &[(12, 13)]);
    assert_eq!(h.sent_segs(), Vec::<u64>::new());
    h.ack(ms(302), 10, &[(12, 14)]);
    assert!(h.s.core.in_recovery, "a new recovery");
    assert_eq!(h.sent_segs(), [11]);
    assert_eq!(h.s.core.stats.recoveries, 2);
}

#[test]
fn sack1_after_a_timeout_ignores_sacks_and_goes_back_n_over_everything() {
    // tcp/tcp-sack1.cc timeout(): the scoreboard is cleared and `timeout_` set; duplicate ACKs
    // are then not recorded until a new cumulative ACK (which clears the scoreboard again), and
    // send_much() goes back N from highest_ack_ + 1 with an empty scoreboard: SACKed segments
    // are resent. RFC 6675 skips them (`rfc6675_after_a_timeout_...`).
    let mut h = in_flight("sack1", 6);
    h.ack(ms(100), 0, &[(3, 3)]);
    let t = h.rto();
    assert_eq!(h.sent_segs(), [1]);
    assert!(h.s.core.sb.is_empty());
    // A duplicate ACK SACKing 3..6: ignored.
    h.ack(t + ms(50), 0, &[(3, 6)]);
    assert!(h.s.core.sb.is_empty(), "SACK blocks ignored after the timeout");
    assert_eq!(h.sent_segs(), Vec::<u64>::new());
    // The retransmitted 1 is acknowledged (with 3..6 SACKed): cwnd 2, go-back-N resends 2 and 3.
    h.ack(t + ms(100), 1, &[(3, 6)]);
    assert_eq!(h.sent_segs(), [2, 3], "3 is SACKed but resent: ns-2 goes back N over everything");
    // After the new cumulative ACK, SACK blocks count again.
    h.ack(t + ms(101), 1, &[(3, 6)]);
    assert!(!h.s.core.sb.is_empty(), "SACK blocks recorded again after a new cumulative ACK");
    // Go-back-N goes on over the SACKed segments: the ACK of 2 (cwnd 3) resends 4 and 5.
    h.ack(t + ms(200), 2, &[(3, 6)]);
    assert_eq!(h.sent_segs(), [4, 5]);
    assert_eq!(h.s.core.stats.timeouts, 1);
    assert_eq!(h.s.core.stats.fast_retransmits, 0);
}

// ---------------------------------------------------------------------------------------------
// FACK-RH

#[test]
fn fack_rh_sends_new_data_on_the_first_duplicate_ack() {
    // Mathis et al. §3.4 / App. A: Rate-Halving starts with the first duplicate ACK and sends
    // one segment per two ACKs from the first; the thresholded retransmission follows when
    // more than DupThresh segments above the hole are held.
    let mut h = in_flight("fack-rh", 8);
    h.ack(ms(100), 0, &[(2, 2)]);
    assert_eq!(
        h.sent_segs(),
        [9],
        "one new segment after the first duplicate ACK"
    );
    h.ack(ms(101), 0, &[(2, 3)]);
    assert_eq!(h.sent_segs(), Vec::<u64>::new(), "one segment per two ACKs");
    h.ack(ms(102), 0, &[(2, 4)]);
    assert_eq!(
        h.sent_segs(),
        [1],
        "snd.fack − snd.una = 4 segments > 3: retransmit the hole"
    );
    assert_eq!(h.s.core.stats.fast_retransmits, 1);
    h.ack(ms(103), 0, &[(2, 5)]);
    assert_eq!(h.sent_segs(), Vec::<u64>::new());
    h.ack(ms(104), 0, &[(2, 6)]);
    assert_eq!(h.sent_segs(), [10]);
}

#[test]
fn fack_rh_halves_what_was_in_the_network() {
    // Twenty out, 3 lost (5, 9, 13). Segments 1..4 are acknowledged (21..24 go out), then one
    // duplicate ACK for each segment that arrives: Rate-Halving sends one segment per two ACKs
    // for one round trip (until 24 is SACKed), every hole is retransmitted once, in order, and
    // the window becomes what the round put in the network: (W − loss)/2 (eq. 15).
    let mut h = in_flight("fack-rh", 20);
    let lost = [5u64, 9, 13];
    h.ack(ms(99), 4, &[]);
    assert_eq!(h.sent_segs(), [21, 22, 23, 24]);
    let prior = h.cwnd_segs();
    let mut t = 100;
    let mut sent_in_round = Vec::new();
    for highest in 6..=25u64 {
        if lost.contains(&highest) {
            continue;
        }
        // The receiver SACKs everything above 5 that arrived, newest block first.
        let mut sacks: Vec<(u64, u64)> = Vec::new();
        let mut lo = 6;
        for &l in &lost[1..] {
            if l <= highest {
                sacks.push((lo, l - 1));
                lo = l + 1;
            }
        }
        if lo <= highest {
            sacks.push((lo, highest));
        }
        sacks.reverse();
        h.ack(ms(t), 4, &sacks);
        t += 1;
        sent_in_round.extend(h.sent_segs());
    }
    let retx: Vec<u64> = sent_in_round.iter().copied().filter(|k| *k <= 24).collect();
    assert_eq!(
        retx, lost,
        "each hole once, in order, within the round: {sent_in_round:?}"
    );
    // 18 ACKs; the last (for 25, the first segment the round sent) closes it: 9 segments sent
    // in the round, one per two ACKs, 3 of them retransmissions; then the new window (the 9
    // segments the round put in the network) lets one more go as 25 leaves.
    assert_eq!(sent_in_round.len(), 10, "{sent_in_round:?}");
    assert_eq!(
        sent_in_round[0], 25,
        "new data first, on the first duplicate ACK"
    );
    assert_eq!(h.s.core.stats.timeouts, 0);
    assert_eq!(
        h.s.core.stats.fast_retransmits, 1,
        "one recovery for three holes"
    );
    let w = h.cwnd_segs();
    let eq15 = (20.0 - 3.0) / 2.0;
    assert!(
        (eq15 - 1.0..=eq15 + 0.5).contains(&w),
        "cwnd {w} segments after the round, eq. 15 gives {eq15}"
    );
    assert!(w <= prior / 2.0, "bounded by half the old window");
}

#[test]
fn fack_rh_detects_a_lost_retransmission() {
    let mut h = in_flight("fack-rh", 12);
    for (t, hi) in [(100, 2), (101, 3), (102, 4)] {
        h.ack(ms(t), 0, &[(2, hi)]);
    }
    let first: Vec<u64> = h.sent_segs();
    assert!(first.contains(&1), "{first:?}");
    // The retransmission of 1 was sent when snd.nxt was 14 or so; once three segments sent
    // after it are SACKed with 1 still missing, it is retransmitted again.
    let mut again = Vec::new();
    for (i, t) in (103..130).enumerate() {
        h.ack(ms(t), 0, &[(2, 5 + i as u64)]);
        again.extend(h.sent_segs());
        if again.contains(&1) {
            break;
        }
    }
    assert!(
        again.contains(&1),
        "lost retransmission detected: {again:?}"
    );
    assert_eq!(h.s.core.stats.timeouts, 0);
}

#[test]
fn fack_rh_restores_the_window_after_reordering() {
    let mut h = in_flight("fack-rh", 8);
    h.ack(ms(100), 0, &[(2, 2)]);
    assert_eq!(h.sent_segs(), [9]);
    // Segment 1 was only late: the cumulative ACK covers everything SACKed.
    h.ack(ms(101), 2, &[]);
    assert!(!h.s.core.in_recovery);
    assert!(h.cwnd_segs() >= 8.0, "window restored, {}", h.cwnd_segs());
    assert_eq!(h.s.core.stats.retransmits, 0);
}

// ---------------------------------------------------------------------------------------------
// Three losses in one window of 20 segments, through the network.

fn run_toml(text: &str) -> RunResult {
    let s = Scenario::from_toml(text, &[]).unwrap_or_else(|e| panic!("{e}"));
    run(&s, 1).unwrap()
}

fn three_losses(preset: &str, drops: bool, slow_start: bool) -> RunResult {
    // 100 ms RTT, negligible serialisation; IW 20 so that the first window holds 20 segments
    // (in congestion avoidance unless `slow_start`); segments 5, 9 and 13 are dropped on their
    // first transmission.
    let d = if drops {
        "drops = [{ kind = \"data\", segment = 5 }, { kind = \"data\", segment = 9 }, { kind = \"data\", segment = 13 }]"
    } else {
        ""
    };
    let ss = if slow_start {
        ""
    } else {
        "initial_ssthresh = 20000\n"
    };
    run_toml(&format!(
        "[topology]\nkind = \"single_link\"\nrate = \"1Gbps\"\ndelay = \"50ms\"\n[tcp]\npreset = \"{preset}\"\nmss = {MSS}\ninitial_window = 20\n{ss}delayed_ack = false\n[[flows]]\nbytes = {}\n{d}\n",
        40 * MSS
    ))
}

/// (recovery time in RTTs: from the fast retransmit until the data outstanding then is
/// acknowledged, timeouts, retransmits, SACK-directed retransmits, transfers with SACK)
fn three_loss_cost(p: &str, slow_start: bool) -> (f64, u64, u64, u64, u64) {
    let r = three_losses(p, true, slow_start);
    let c = &r.connections[0];
    (
        c.recovery_time_s / 0.1,
        c.timeouts,
        c.retransmits,
        c.sack_retransmits,
        c.sack_transfers,
    )
}

#[test]
fn three_losses_in_one_window() {
    let extra: std::collections::BTreeMap<&str, _> =
        ["sack", "sack1", "fack-rh", "newreno", "reno"]
            .into_iter()
            .map(|p| (p, three_loss_cost(p, false)))
            .collect();
    for p in ["sack", "sack1", "fack-rh"] {
        let (rtts, timeouts, retx, sack_retx, sack_used) = extra[p];
        assert_eq!(sack_used, 1, "{p}: SACK negotiated");
        assert_eq!(timeouts, 0, "{p}: {extra:?}");
        assert_eq!(retx, 3, "{p}: only the lost segments are resent: {extra:?}");
        assert_eq!(sack_retx, 3, "{p}");
        assert!(
            rtts < 1.3,
            "{p}: repaired in about one round trip, took {rtts:.2} RTT: {extra:?}"
        );
    }
    // NewReno: one hole per round trip (each partial ACK reveals the next): two more than SACK.
    let (rtts, timeouts, retx, _, _) = extra["newreno"];
    assert_eq!((timeouts, retx), (0, 3), "{extra:?}");
    assert!(
        rtts > 2.8,
        "NewReno needs a round trip per loss: {rtts:.2} RTT"
    );
    // Reno leaves fast recovery on the first partial ACK with cwnd = ssthresh and the window
    // full of unacknowledged data; the next holes then wait for the retransmission timer
    // (RFC 5681 §3.2 has no partial-ACK rule) — the behaviour Fall & Floyd 1996 showed.
    let (rtts, timeouts, _, _, _) = extra["reno"];
    assert!(
        timeouts >= 1,
        "Reno times out with three losses in a window: {extra:?}"
    );
    assert!(rtts > 5.0, "{rtts}: the recovery ends with the timeout");
}

#[test]
fn sack1_counted_pipe_is_slower_when_the_window_was_growing() {
    // ns Sack1's pipe counts the lost segments as still in flight. In slow start the window at
    // the loss is larger than the one that was full a round trip earlier, so after halving
    // pipe stays above cwnd for the rest of the round and the later holes wait a round trip;
    // RFC 6675's pipe (IsLost) and FACK's awnd do not count them.
    let (sack1, t1, r1, _, _) = three_loss_cost("sack1", true);
    let (rfc, t2, r2, _, _) = three_loss_cost("sack", true);
    let (fack, t3, r3, _, _) = three_loss_cost("fack-rh", true);
    assert_eq!((t1, t2, t3, r1, r2, r3), (0, 0, 0, 3, 3, 3));
    assert!(
        rfc < 1.3 && fack < 1.3,
        "sack {rfc:.2}, fack-rh {fack:.2} RTT"
    );
    assert!(sack1 > 1.8, "sack1 {sack1:.2} RTT");
}

// ---------------------------------------------------------------------------------------------
// Initial window forms and the restart window

#[test]
fn initial_window_forms_set_the_first_flight() {
    let first = |iw: InitialWindow, mss: u64| {
        let mut c = cfg("newreno");
        c.mss = Size(mss);
        c.initial_window = iw;
        let mut out = Vec::new();
        let mut s = TcpSender::new(c, None);
        s.start(0, &mut out);
        (out.len(), out.iter().map(|o| o.seg.len as u64).sum::<u64>())
    };
    // Allman et al. Appendix A's examples, as the sender sends them.
    assert_eq!(
        first(
            InitialWindow::Allman {
                segments: 4,
                bytes: 4096
            },
            512
        ),
        (4, 2048)
    );
    assert_eq!(
        first(
            InitialWindow::Allman {
                segments: 5,
                bytes: 4096
            },
            1024
        ),
        (4, 4096)
    );
    assert_eq!(
        first(
            InitialWindow::Allman {
                segments: 5,
                bytes: 0
            },
            1460
        ),
        (5, 5 * 1460)
    );
    assert_eq!(first(InitialWindow::Rule(IwRule::Rfc3390), 1460), (3, 4380));
    assert_eq!(first(InitialWindow::Rule(IwRule::Rfc3390), 512), (4, 2048));
    assert_eq!(
        first(InitialWindow::Rule(IwRule::Rfc6928), 1460),
        (10, 14600)
    );
}

#[test]
fn loss_window_after_a_timeout_is_one_segment_whatever_the_iw() {
    let mut c = cfg("sack-iw");
    c.initial_window = InitialWindow::Rule(IwRule::Rfc6928);
    let mut h = Snd::new(c, None);
    assert_eq!(h.sent_segs().len(), 10);
    h.rto();
    assert_eq!(h.sent_segs(), [1]);
    assert_eq!(h.cwnd_segs(), 1.0, "RFC 5681 §3.1: LW = 1 segment");
}

#[test]
fn restart_window_after_an_idle_period() {
    // RFC 5681 §4.1: idle for longer than the RTO → cwnd = min(IW, cwnd) before sending.
    for (restart, idle, expect) in [
        (true, 5 * SEC, 2usize),
        (true, ms(500), 4),
        (false, 5 * SEC, 4),
    ] {
        let mut c = cfg("newreno");
        c.initial_window = InitialWindow::Segments(2);
        c.restart_after_idle = restart;
        let mut h = Snd::new(c, Some(6 * MSS));
        assert_eq!(h.sent_segs(), [1, 2]);
        h.ack(ms(100), 2, &[]);
        assert_eq!(h.sent_segs(), [3, 4, 5], "one ACK, one SMSS more");
        h.ack(ms(200), 5, &[]);
        assert_eq!(h.sent_segs(), [6]);
        h.ack(ms(300), 6, &[]);
        assert_eq!(
            h.cwnd_segs(),
            4.0,
            "the last ACK found the window not limiting: no growth"
        );
        let t = ms(300) + idle;
        let mut out = Vec::new();
        h.s.core.write(t, 20 * MSS, &mut out);
        assert_eq!(out.len(), expect, "restart {restart}, idle {idle} ns");
    }
}

// ---------------------------------------------------------------------------------------------
// TBIT procedures (Ladha et al. 2004 §3, TARGETS.md §3.1) as scripted receivers.

/// A TBIT session: the server under test is a `TcpSender` with a preset; the scripted client
/// completes the handshake (offering SACK or not) and then ACKs exactly what the procedure says.
struct Tbit {
    s: TcpSender,
    out: Vec<OutSeg>,
    now: Time,
    mss: u64,
    /// Data segments the server has sent, in order: (packet number, retransmission?).
    log: Vec<(u64, bool)>,
    max_end: u64,
}

const WND: u32 = 65_535;

impl Tbit {
    fn connect(name: &str, mss: u64, bytes: u64, sack: bool) -> Tbit {
        let mut c = TcpConfig::rfc();
        (preset(name).unwrap().apply)(&mut c);
        c.mss = Size(mss);
        let mut t = Tbit {
            s: TcpSender::new(c, Some(bytes)),
            out: Vec::new(),
            now: 0,
            mss,
            log: Vec::new(),
            max_end: 1,
        };
        t.s.start(0, &mut t.out);
        let synack = Segment {
            seq: 0,
            ack: 1,
            flags: FLAG_SYN | FLAG_ACK,
            wnd: WND,
            sack_permitted: sack,
            ..Default::default()
        };
        t.now = ms(100);
        t.s.on_segment(t.now, &synack, &mut t.out);
        t.drain();
        t
    }
    fn drain(&mut self) {
        self.s.take_timer_events().for_each(drop);
        for o in self.out.drain(..) {
            if o.seg.len > 0 {
                let k = (o.seg.seq - 1) / self.mss + 1;
                self.log.push((k, o.seg.seq < self.max_end));
                self.max_end = self.max_end.max(o.seg.seq + o.seg.len as u64);
            }
        }
    }
    /// The client ACKs byte `ack` (optionally SACKing packets lo..=hi), 10 ms later.
    fn ack(&mut self, ack: u64, sack: Option<(u64, u64)>) {
        self.now += ms(10);
        let mut seg = Segment {
            seq: 1,
            ack,
            flags: FLAG_ACK,
            wnd: WND,
            ..Default::default()
        };
        if let Some((lo, hi)) = sack {
            seg.set_sack_blocks(&[SackBlock {
                left: 1 + (lo - 1) * self.mss,
                right: 1 + hi * self.mss,
            }]);
        }
        self.s.on_segment(self.now, &seg, &mut self.out);
        self.drain();
    }
    fn ack_packet(&mut self, k: u64) {
        self.ack(1 + k * self.mss, None);
    }
    /// ACK nothing further: let the retransmission timer fire.
    fn wait_for_retransmission(&mut self) -> Time {
        let d = self.s.core.rto_timer.deadline().expect("timer running");
        self.s.core.rto_timer.cancel();
        self.now = d;
        self.s.on_rto(d, &mut self.out);
        self.drain();
        d
    }
    /// Highest packet received before the first retransmission.
    fn highest_before_retransmission(&self) -> u64 {
        self.log
            .iter()
            .take_while(|(_, r)| !r)
            .map(|(k, _)| *k)
            .max()
            .unwrap_or(0)
    }
    fn first_retransmission(&self) -> Option<u64> {
        self.log.iter().find(|(_, r)| *r).map(|(k, _)| *k)
    }
}

/// TBIT's ICW test: ACK nothing; the packets before the first retransmission are the ICW.
fn icw(name: &str) -> u64 {
    let mut t = Tbit::connect(name, 128, 20_000, false);
    t.wait_for_retransmission();
    t.highest_before_retransmission()
}

#[test]
fn tbit_initial_window() {
    // MSS 128: RFC 3390 allows min(4·128, max(256, 4380)) = 512 bytes = 4 packets.
    assert_eq!(icw("newreno"), 1);
    assert_eq!(icw("sack"), 1);
    assert_eq!(icw("sack-iw"), 4);
    assert_eq!(icw("sack-iw-lt-abc1-er"), 4);
}

/// TBIT's Limited Transmit test: ACK packet 1, drop packet 2, one duplicate ACK on packet 3,
/// then nothing. LT: highest = ICW + 3; without LT, less.
fn tbit_lt(name: &str, sack: bool) -> u64 {
    let mut t = Tbit::connect(name, 128, 20_000, sack);
    t.ack_packet(1);
    let sack_of_3 = sack.then_some((3, 3));
    t.ack(1 + 128, sack_of_3);
    t.wait_for_retransmission();
    assert_eq!(t.first_retransmission(), Some(2));
    t.highest_before_retransmission()
}

#[test]
fn tbit_limited_transmit() {
    for sack in [false, true] {
        for p in ["sack-iw-lt", "sack-iw-lt-abc1", "sack-iw-lt-abc1-er"] {
            assert_eq!(
                tbit_lt(p, sack),
                icw(p) + 3,
                "{p} (SACK {sack}) has Limited Transmit"
            );
        }
        for p in ["newreno", "sack", "sack-iw"] {
            assert!(
                tbit_lt(p, sack) < icw(p) + 3,
                "{p} (SACK {sack}) has no Limited Transmit"
            );
            assert_eq!(tbit_lt(p, sack), icw(p) + 2);
        }
    }
    // FACK-RH sends one new segment on the first duplicate ACK as well.
    assert_eq!(tbit_lt("fack-rh", true), icw("fack-rh") + 3);
}

/// TBIT's ABC test: two split ACKs for packet 1 (each half of it), then nothing.
fn tbit_abc(name: &str) -> u64 {
    let mut t = Tbit::connect(name, 128, 20_000, false);
    t.ack(1 + 64, None);
    t.ack(1 + 128, None);
    t.wait_for_retransmission();
    let r = t.first_retransmission().unwrap();
    assert!(r >= 2, "split ACKs honoured");
    t.highest_before_retransmission()
}

#[test]
fn tbit_appropriate_byte_counting() {
    for p in ["sack-iw-lt-abc1", "sack-iw-lt-abc1-er"] {
        assert!(
            tbit_abc(p) <= icw(p) + 2,
            "{p}: ABC counts bytes: {}",
            tbit_abc(p)
        );
    }
    for p in ["newreno", "sack", "sack-iw", "sack-iw-lt"] {
        assert_eq!(tbit_abc(p), icw(p) + 3, "{p}: per-ACK counting");
    }
}

/// TBIT's ABC-limit test: ACK packet 1, then one ACK covering packets 2 and 3, then nothing.
fn run_tbit_abc_limit(mut c: TcpConfig) -> u64 {
    c.mss = Size(128);
    let mut t = Tbit {
        s: TcpSender::new(c, Some(20_000)),
        out: Vec::new(),
        now: 0,
        mss: 128,
        log: Vec::new(),
        max_end: 1,
    };
    t.s.start(0, &mut t.out);
    t.now = ms(100);
    let synack = Segment {
        seq: 0,
        ack: 1,
        flags: FLAG_SYN | FLAG_ACK,
        wnd: WND,
        ..Default::default()
    };
    t.s.on_segment(t.now, &synack, &mut t.out);
    t.drain();
    t.ack_packet(1);
    t.ack_packet(3);
    t.wait_for_retransmission();
    assert!(t.first_retransmission().unwrap() >= 4);
    t.highest_before_retransmission()
}

#[test]
fn tbit_abc_limit() {
    let with = |l: u32| {
        let mut c = TcpConfig::rfc();
        (preset("sack-iw-lt-abc1").unwrap().apply)(&mut c);
        c.abc = l;
        c
    };
    let icw = icw("sack-iw-lt-abc1");
    assert_eq!(run_tbit_abc_limit(with(1)), icw + 5, "L = 1");
    assert_eq!(run_tbit_abc_limit(with(2)), icw + 6, "L = 2");
    assert_eq!(
        run_tbit_abc_limit(with(0)),
        icw + 5,
        "per-ACK counting looks like L = 1 (why T4 follows T3)"
    );
}

/// TBIT's Early Retransmit test: 2·MSS of data plus a header (3 packets, MSS 1000); ACK packet
/// 1, drop packet 2, one duplicate ACK on packet 3. Returns when packet 2 came back (after the
/// duplicate ACK), or None.
fn tbit_er(name: &str, sack: bool) -> (Option<Time>, Time) {
    let mut t = Tbit::connect(name, 1000, 2 * 1000 + 200, sack);
    assert_eq!(t.log.len(), 3, "the whole response fits the IW");
    t.ack_packet(1);
    let dup_at = t.now + ms(10);
    t.ack(1 + 1000, sack.then_some((3, 3)));
    let quick = t
        .log
        .iter()
        .skip(3)
        .find(|(k, r)| *k == 2 && *r)
        .map(|_| t.now - dup_at);
    let rto = t.s.core.rto_timer.deadline().map_or(0, |d| d - dup_at);
    (quick, rto)
}

#[test]
fn tbit_early_retransmit() {
    for sack in [false, true] {
        let (er, _) = tbit_er("sack-iw-lt-abc1-er", sack);
        assert_eq!(
            er,
            Some(0),
            "ER: packet 2 resent at once on one duplicate ACK (SACK {sack})"
        );
        for p in ["sack-iw-lt-abc1", "sack-iw"] {
            let (er, rto) = tbit_er(p, sack);
            assert_eq!(er, None, "{p}: no retransmission before the timer");
            assert!(rto >= SEC / 2, "{p}: the timer is still {rto} ns away");
        }
    }
}
