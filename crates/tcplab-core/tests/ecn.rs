//! ECN (RFC 3168) and DCTCP (RFC 8257; Linux `net/ipv4/tcp_dctcp.c`) at the packet level: the
//! negotiation, ECT on new data only, CE marking by RED and by a step threshold, the receiver's
//! ECE until CWR, the sender's one reduction per window without a retransmission, DCTCP's α and
//! its receiver's exact echo; Linux's receiver's quick-ACK mode on CE and on a Not-ECT segment
//! after ECT ones (`delack_model = "linux"`); and whole runs that mark instead of dropping.

#[macro_use]
mod harness;

use harness::{Harness, Seg, DATA, MSS, SEG, SYNACK};
use tcplab_core::engine::RngStream;
use tcplab_core::net::link::DropReason;
use tcplab_core::net::{
    LinkDir, MarkThreshold, NodeId, Packet, Payload, QueueLimit, RedSpec, Segment, ECN_CE, ECN_ECT0, ECN_NOT_ECT, FLAG_ACK, FLAG_CWR, FLAG_ECE, FLAG_SYN,
};
use tcplab_core::tcp::cc::{AckEvent, CongestionControl, Dctcp, Window};
use tcplab_core::tcp::config::{Cc, DelackModel, Ecn, RtoModel};
use tcplab_core::tcp::TcpConfig;
use tcplab_core::units::{ms, us, Size};
use tcplab_core::{run, Scenario};

const SYN_OPTS: u16 = 8;

fn handshake_cfg(ecn: Ecn) -> TcpConfig {
    let mut c = harness::cfg();
    c.handshake = true;
    c.ecn = ecn;
    c
}

/// A client with `ecn`: its SYN, then what it sends once a SYN-ACK with `synack_flags` answers
/// (its first data segment: IW 1).
fn client_after_synack(ecn: Ecn, synack_flags: u8) -> (Harness, Vec<(u64, Seg)>) {
    let mut h = Harness::client(handshake_cfg(ecn));
    let syn = h.take_sent();
    h.write(ms(1), 10 * MSS);
    h.send(ms(100), seg!(flags = synack_flags, ..SYNACK));
    let sent = h.take_sent();
    (h, std::iter::once(syn[0]).chain(sent).collect())
}

#[test]
fn negotiation_client_asks_and_server_agrees() {
    let (h, sent) = client_after_synack(Ecn::On, FLAG_SYN | FLAG_ACK | FLAG_ECE);
    // RFC 3168 §6.1.1: "Host A sends an ECN-setup SYN packet" — ECE and CWR set; the SYN
    // itself is not ECN-capable (§6.1.1.1: "MUST NOT set ECT on ... SYN").
    assert_eq!(sent[0].1, seg!(seq = 0, flags = FLAG_SYN | FLAG_ECE | FLAG_CWR, opt_len = SYN_OPTS));
    // "... Host B sends an ECN-setup SYN-ACK packet" (ECE set, CWR clear): ECN is in use and new
    // data goes out ECT(0) (§6.1.2 "... ECT codepoint in the IP header of data packets").
    assert!(h.info().ecn);
    assert_eq!(sent[1].1, seg!(seq = 1, ack = 1, ecn = ECN_ECT0, ..DATA));
}

#[test]
fn negotiation_refused_by_the_server() {
    // RFC 3168 §6.1.1: a SYN-ACK without ECE refuses; data is then not ECN-capable.
    let (h, sent) = client_after_synack(Ecn::On, FLAG_SYN | FLAG_ACK);
    assert!(!h.info().ecn);
    assert_eq!(sent[1].1, seg!(seq = 1, ack = 1, ..DATA));
    // §6.1.1: "a host MUST NOT set ECT on data packets unless it has sent at least one ECN-setup
    // SYN or ECN-setup SYN-ACK packet, and has received at least one ECN-setup SYN or ECN-setup
    // SYN-ACK packet": a SYN-ACK with both ECE and CWR is not an ECN-setup SYN-ACK.
    let (h, sent) = client_after_synack(Ecn::On, FLAG_SYN | FLAG_ACK | FLAG_ECE | FLAG_CWR);
    assert!(!h.info().ecn);
    assert_eq!(sent[1].1.ecn, ECN_NOT_ECT);
}

#[test]
fn negotiation_client_that_only_accepts_never_asks() {
    // Linux tcp_ecn = 2 (`ecn = "accept"`, the linux6 profile): the SYN carries no ECE/CWR, so
    // an ECE in a (broken) SYN-ACK does not turn ECN on.
    let (h, sent) = client_after_synack(Ecn::Accept, FLAG_SYN | FLAG_ACK | FLAG_ECE);
    assert_eq!(sent[0].1, seg!(seq = 0, flags = FLAG_SYN, opt_len = SYN_OPTS));
    assert!(!h.info().ecn);
    assert_eq!(TcpConfig::profile("linux6").unwrap().ecn, Ecn::Accept);
    assert_eq!(TcpConfig::profile("rfc").unwrap().ecn, Ecn::Off);
}

fn server_synack(ecn: Ecn, syn_flags: u8) -> (Harness, Seg) {
    let mut h = Harness::server(handshake_cfg(ecn));
    h.send(0, seg!(seq = 0, ack = 0, flags = syn_flags, opt_len = SYN_OPTS));
    let sent = h.take_sent();
    assert_eq!(sent.len(), 1, "{sent:?}");
    (h, sent[0].1)
}

#[test]
fn negotiation_server_side() {
    let ecn_syn = FLAG_SYN | FLAG_ECE | FLAG_CWR;
    // RFC 3168 §6.1.1: an ECN-setup SYN-ACK (ECE, no CWR) answers an ECN-setup SYN when the
    // server is willing: `ecn = "on"` or `"accept"` (Linux tcp_ecn 1 or 2).
    for ecn in [Ecn::On, Ecn::Accept] {
        let (h, synack) = server_synack(ecn, ecn_syn);
        assert_eq!(synack, seg!(seq = 0, ack = 1, flags = FLAG_SYN | FLAG_ACK | FLAG_ECE, opt_len = SYN_OPTS), "{ecn:?}");
        assert!(h.info().ecn);
    }
    // Unwilling (tcp_ecn 0): a plain SYN-ACK.
    let (h, synack) = server_synack(Ecn::Off, ecn_syn);
    assert_eq!(synack.flags, FLAG_SYN | FLAG_ACK);
    assert!(!h.info().ecn);
    // A SYN that does not ask gets no ECE, whatever the server's setting.
    let (h, synack) = server_synack(Ecn::On, FLAG_SYN);
    assert_eq!(synack.flags, FLAG_SYN | FLAG_ACK);
    assert!(!h.info().ecn);
}

#[test]
fn passive_opener_sends_ect_data_after_agreeing() {
    // The server agreed; after the handshake's ACK its own data is ECN-capable (RFC 3168 §6.1.1:
    // one negotiation serves both directions).
    let (mut h, _) = server_synack(Ecn::Accept, FLAG_SYN | FLAG_ECE | FLAG_CWR);
    h.send(ms(50), seg!(ack = 1));
    h.write(ms(60), MSS);
    h.recv(ms(60), [seg!(seq = 1, ack = 1, ecn = ECN_ECT0, ..DATA)]);
}

#[test]
fn ect_on_new_data_only_not_on_retransmissions_or_pure_acks() {
    let mut h = Harness::sending(2, |c| c.ecn = Ecn::On);
    // (the two first segments were ECT(0): checked on a fresh connection below)
    // RFC 3168 §6.1.5: "the TCP data sender MUST NOT set either an ECT codepoint or the CWR bit
    // on retransmitted data packets" — the timeout's retransmission goes out Not-ECT.
    h.advance_to(ms(1000));
    let sent = h.take_sent();
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(sent[0].1, seg!(seq = 1, ..DATA));
    assert_eq!(h.info().retrans, 1);

    let mut h = Harness::established(|c| c.ecn = Ecn::On);
    h.write(0, 2 * MSS);
    h.recv(0, [seg!(seq = 1, ecn = ECN_ECT0, ..DATA)]);
    // §6.1.4: "the TCP data receiver MUST NOT set ECT on pure ACKs": the receive half's ACK of
    // the peer's data is Not-ECT.
    let mut r = Harness::established(|c| {
        c.ecn = Ecn::On;
        c.delayed_ack = false;
    });
    r.send(ms(5), seg!(seq = 1, ecn = ECN_ECT0, ..DATA));
    r.recv(ms(5), [seg!(seq = 1, ack = 1001)]);
}

#[test]
fn receiver_echoes_ece_until_cwr() {
    // Delayed ACKs on: the CE segment is acknowledged at once all the same.
    let mut r = Harness::established(|c| c.ecn = Ecn::On);
    r.send(ms(1), seg!(seq = 1, ecn = ECN_ECT0, ..DATA));
    r.recv_nothing(); // an ACK delayed (RFC 5681 §4.2)
    // RFC 3168 §6.1.3: "the TCP receiver sets the ECN-Echo flag in the TCP header of the
    // subsequent ACK packet" on a CE packet; Linux `__tcp_ecn_check_ce`: "Better not delay acks"
    // (quick ACK).
    r.send(ms(2), seg!(seq = 1001, ecn = ECN_CE, ..DATA));
    r.recv(ms(2), [seg!(ack = 2001, flags = FLAG_ACK | FLAG_ECE)]);
    assert_eq!(r.info().ce_received, 1);
    // "... continues to set the ECN-Echo flag in ACK packets until it receives a CWR packet":
    // unmarked data is still acknowledged with ECE.
    r.send(ms(3), seg!(seq = 2001, ecn = ECN_ECT0, ..DATA));
    r.send(ms(4), seg!(seq = 3001, ecn = ECN_ECT0, ..DATA));
    r.recv(ms(4), [seg!(ack = 4001, flags = FLAG_ACK | FLAG_ECE)]);
    assert!(r.info().ece_pending);
    // The CWR ends it; Linux `tcp_ecn_accept_cwr` acknowledges a data segment with CWR at once.
    r.send(ms(5), seg!(seq = 4001, flags = FLAG_ACK | FLAG_CWR, ecn = ECN_ECT0, ..DATA));
    r.recv(ms(5), [seg!(ack = 5001)]);
    assert!(!r.info().ece_pending);
    // A CE on the CWR segment itself starts a new echo (the CWR is taken first).
    r.send(ms(6), seg!(seq = 5001, flags = FLAG_ACK | FLAG_CWR, ecn = ECN_CE, ..DATA));
    r.recv(ms(6), [seg!(ack = 6001, flags = FLAG_ACK | FLAG_ECE)]);
}

#[test]
fn receiver_without_ecn_ignores_ce() {
    // ECN not in use: a CE mark (from a misbehaving path) is not echoed (RFC 3168 §6.1.1).
    let mut r = Harness::established(|c| c.delayed_ack = false);
    r.send(ms(1), seg!(seq = 1, ecn = ECN_CE, ..DATA));
    r.recv(ms(1), [seg!(ack = 1001)]);
}

fn ece_ack(ack: u64) -> Seg {
    seg!(ack = ack, flags = FLAG_ACK | FLAG_ECE)
}

#[test]
fn sender_reduces_once_per_window_without_retransmitting() {
    let mut h = Harness::sending(10, |c| c.ecn = Ecn::On); // 1..=10 out, cwnd 10
    // RFC 3168 §6.1.2: on ECE "the TCP source halves the congestion window 'cwnd' and reduces
    // the slow start threshold 'ssthresh'" — here as RFC 5681 eq. 4: max(FlightSize/2, 2·SMSS),
    // FlightSize 9 segments after this ACK.
    h.send(ms(100), ece_ack(1 + MSS));
    assert_eq!((h.info().ssthresh, h.info().cwnd), (4500, 4500));
    assert_eq!(h.info().ecn_reductions, 1);
    // No retransmission (it is not a loss), and with 9 outstanding nothing new may go.
    h.recv_nothing();
    // "TCP should not react to congestion indications more than once every window of data":
    // later ECEs of the same window change nothing (and do not grow cwnd, "SHOULD NOT increase
    // the congestion window in response to the receipt of an ECN-Echo ACK").
    for k in 2..=5 {
        h.send(ms(100 + k), ece_ack(1 + k * MSS));
    }
    h.recv_nothing();
    assert_eq!((h.info().cwnd, h.info().ecn_reductions), (4500, 1));
    // With 4 outstanding nothing fits under 4.5 segments; with 3, one: the first new data after
    // the reduction carries CWR (§6.1.2: "MUST set the CWR flag in the TCP header of the first
    // new data packet sent after the window reduction") and is ECT(0); the next one has no CWR.
    h.send(ms(106), ece_ack(1 + 6 * MSS));
    h.recv_nothing();
    h.send(ms(107), ece_ack(1 + 7 * MSS));
    h.recv(ms(107), [seg!(seq = 1 + 10 * MSS, flags = FLAG_ACK | FLAG_CWR, ecn = ECN_ECT0, ..DATA)]);
    h.send(ms(108), ece_ack(1 + 8 * MSS));
    h.recv(ms(108), [seg!(seq = 1 + 11 * MSS, ecn = ECN_ECT0, ..DATA)]);
    assert_eq!(h.info().ecn_reductions, 1);
    // An ACK of exactly the data outstanding at the reduction (up to 10 segments) echoes the
    // window's own last segment, sent before the reduction: still the same window (Linux holds
    // CWR until "something *above* high_seq is ACKed", tcp_fastretrans_alert; ns-2's ecn()
    // needs seqno > recover_).
    h.send(ms(110), ece_ack(1 + 10 * MSS));
    assert_eq!(h.info().ecn_reductions, 1);
    // The ACK of the first segment sent after the reduction (it carried CWR) with ECE is a new
    // window's signal: a second reduction.
    h.send(ms(111), ece_ack(1 + 11 * MSS));
    assert_eq!(h.info().ecn_reductions, 2);
    assert_eq!(h.info().retrans, 0);
    assert_eq!(h.info().fast_retransmits, 0);
}

#[test]
fn no_ecn_reaction_inside_a_loss_recovery() {
    // RFC 3168 §6.1.2: the window is "reduced only once in response to a series of dropped and/or
    // CE packets from a single window of data": an ECE during fast recovery changes nothing.
    let mut h = Harness::sending(6, |c| c.ecn = Ecn::On);
    for t in 1..=3 {
        h.send(ms(100 + t), seg!(ack = 1));
    }
    h.recv(ms(103), [seg!(seq = 1, ..DATA)]); // the fast retransmission, Not-ECT
    let w = (h.info().cwnd, h.info().ssthresh);
    h.send(ms(104), ece_ack(1));
    assert_eq!((h.info().cwnd, h.info().ssthresh), (w.0 + MSS, w.1)); // only Reno's inflation
    assert_eq!(h.info().ecn_reductions, 0);
}

#[test]
fn ecn_off_ignores_ece() {
    let mut h = Harness::sending(4, |_| {});
    h.send(ms(100), ece_ack(1 + MSS));
    assert_eq!(h.info().ecn_reductions, 0);
    assert_eq!(h.info().cwnd, 5 * MSS); // slow start as usual
}

/// Linux's machine (`variant = "sack"`, `loss = "rack"`, PRR, `tcp_reno_ssthresh`) asking for
/// ECN, `n` segments out (cwnd n), no tail loss probe to keep the timers out of the way.
fn linux_ecn_sending(n: u64) -> Harness {
    Harness::sending(n, |c| {
        c.ecn = Ecn::On;
        c.variant = tcplab_core::tcp::Variant::Sack;
        c.sack = true;
        c.loss = tcplab_core::tcp::config::LossModel::Rack;
        c.reduction = tcplab_core::tcp::config::Reduction::Prr;
        c.ssthresh_from_cwnd = true;
        c.tlp = false;
    })
}

/// Data segment k (from byte 1), ECT(0), with `flags` besides ACK.
fn ect_data(k: u64, flags: u8) -> Seg {
    seg!(seq = 1 + (k - 1) * MSS, flags = FLAG_ACK | flags, ecn = ECN_ECT0, ..DATA)
}

#[test]
fn linux_reduces_for_ece_through_cwr_with_prr() {
    // Linux `tcp_try_to_open` → `tcp_enter_cwr` → `tcp_init_cwnd_reduction`: on the first ACK
    // with ECE, high_seq = snd_nxt (the end of segment 10), prior_cwnd = 10, ssthresh =
    // `tcp_reno_ssthresh` = 10 / 2 = 5; cwnd is not cut at once but set on each ACK by
    // `tcp_cwnd_reduction` to in_flight + sndcnt, PRR's proportional part while in_flight >
    // ssthresh: sndcnt = ⌈ssthresh · prr_delivered / prior_cwnd⌉ − prr_out. The numbers below are
    // that formula written out by hand, one ACK per delivered segment.
    let mut h = linux_ecn_sending(10);
    let cwnd = |h: &Harness| h.info().cwnd / MSS;
    // ACK 1: prr_delivered 1, in_flight 9: ⌈5·1/10⌉ − 0 = 1 → cwnd 10; the first new segment
    // carries CWR (RFC 3168 §6.1.2; Linux `tcp_ecn_send` on TCP_ECN_QUEUE_CWR).
    h.send(ms(100), ece_ack(1 + MSS));
    h.recv(ms(100), [ect_data(11, FLAG_CWR)]);
    assert_eq!((cwnd(&h), h.info().ssthresh / MSS, h.info().ecn_reductions), (10, 5, 1));
    // Then, with ECE on every ACK until the receiver sees CWR (`tcp_enter_cwr` acts only below
    // CA_CWR: one reduction), (prr_delivered, in_flight after the ACK) → cwnd, sends:
    let steps: [(u64, u64, bool); 8] = [
        (2, 10 - 1, false), // ⌈10/10⌉ − 1 = 0: cwnd 9 (in_flight 9: 3..=11)
        (3, 9, true),       // ⌈15/10⌉ − 1 = 1: in_flight 8 → 9, segment 12
        (4, 8, false),      // ⌈20/10⌉ − 2 = 0
        (5, 8, true),       // ⌈25/10⌉ − 2 = 1: in_flight 7 → 8, segment 13
        (6, 7, false),      // ⌈30/10⌉ − 3 = 0
        (7, 7, true),       // ⌈35/10⌉ − 3 = 1: in_flight 6 → 7, segment 14
        (8, 6, false),      // ⌈40/10⌉ − 4 = 0
        (9, 5, false),      // in_flight 5 = ssthresh: PRR-SSRB, min(ssthresh − in_flight = 0, ...) = 0
    ];
    let mut next = 12;
    for (k, want, sends) in steps {
        h.send(ms(100 + k), ece_ack(1 + k * MSS));
        if sends {
            h.recv(ms(100 + k), [ect_data(next, 0)]);
            next += 1;
        } else {
            h.recv_nothing();
        }
        assert_eq!(cwnd(&h), want, "after the ACK of segment {k}");
    }
    // ACK 10: snd_una = high_seq, not above it: still CWR ("CWR is to be held something *above*
    // high_seq is ACKed"). in_flight 4 < ssthresh: min(5 − 4, max(10 − 4, 1) + 1) = 1 → cwnd 5.
    h.send(ms(110), ece_ack(1 + 10 * MSS));
    h.recv(ms(110), [ect_data(15, 0)]);
    assert_eq!(cwnd(&h), 5);
    assert_eq!(h.info().ecn_reductions, 1);
    // ACK 11 (the CWR segment; the receiver stopped echoing): above high_seq, so
    // `tcp_end_cwr_cwnd_reduction` sets cwnd = ssthresh = 5 and CA_Open's `tcp_cong_avoid`
    // grows it by this ACK (Reno's avoidance: less than a segment), in_flight 4: one segment.
    h.send(ms(111), seg!(ack = 1 + 11 * MSS));
    h.recv(ms(111), [ect_data(16, 0)]);
    assert_eq!(cwnd(&h), 5);
    assert!(h.info().cwnd > 5 * MSS, "the ACK that ends CWR grows the window");
    // Nothing was retransmitted: an ECN reduction is not a loss.
    assert_eq!((h.info().retrans, h.info().fast_retransmits), (0, 0));
    // A new ECE after CWR ended is a new window's signal: a second reduction, CWR again on the
    // next new segment.
    h.send(ms(112), ece_ack(1 + 12 * MSS));
    assert_eq!(h.info().ecn_reductions, 2);
    assert_eq!(h.info().ssthresh / MSS, 2);
    let sent = h.take_sent();
    assert!(sent.iter().all(|(_, s)| s.flags & FLAG_CWR == 0 || s.seq == 1 + 16 * MSS), "{sent:?}");
}

#[test]
fn linux_cwr_then_a_loss_keeps_the_reduction_under_way() {
    // `tcp_enter_recovery` from CA_CWR: "if (!tcp_in_cwnd_reduction(sk)) ...
    // tcp_init_cwnd_reduction(sk)" — a loss found during CWR takes no second ssthresh from the
    // controller. 20 out: the ECE gives ssthresh 10; twelve ECE ACKs later PRR has brought cwnd
    // to 14, where a fresh reduction would give 7.
    let mut h = linux_ecn_sending(20);
    for k in 1..=12 {
        h.send(ms(100 + k), ece_ack(1 + k * MSS));
    }
    let sent = h.take_sent();
    assert_eq!(sent.iter().filter(|(_, s)| s.flags & FLAG_CWR != 0).count(), 1, "{sent:?}");
    assert_eq!((h.info().cwnd / MSS, h.info().ssthresh / MSS, h.info().ecn_reductions), (14, 10, 1));
    // Segment 13 missing, 14..=16 SACKed: RACK marks 13 lost (no reordering seen) and the
    // sender enters Recovery — with ssthresh still 10.
    let blocks: &'static [(u64, u64)] = &[(1 + 13 * MSS, 1 + 16 * MSS)];
    h.send(ms(113), seg!(ack = 1 + 12 * MSS, flags = FLAG_ACK | FLAG_ECE, sack = blocks));
    assert_eq!(h.info().ca_state, tcplab_core::tcp::CaState::Recovery);
    assert_eq!(h.info().fast_retransmits, 1);
    assert_eq!((h.info().ssthresh / MSS, h.info().ecn_reductions), (10, 1));
    // The same PRR episode goes on: prr_out is 6 (sent in CWR), so no forced first send, and
    // in_flight = 14 − 3 SACKed − 1 lost = 10 = ssthresh: sndcnt 0, nothing yet.
    h.recv_nothing();
    // Segment 17 SACKed: in_flight 9, ssthresh − in_flight = 1: the retransmission of 13, Not-ECT
    // (RFC 3168 §6.1.5).
    let blocks: &'static [(u64, u64)] = &[(1 + 13 * MSS, 1 + 17 * MSS)];
    h.send(ms(114), seg!(ack = 1 + 12 * MSS, flags = FLAG_ACK | FLAG_ECE, sack = blocks));
    h.recv(ms(114), [seg!(seq = 1 + 12 * MSS, ..DATA)]);
    assert_eq!((h.info().ssthresh / MSS, h.info().ecn_reductions, h.info().fast_retransmits), (10, 1, 1));
}

// ---- DCTCP ----

/// A window of `n` one-segment ACKs, `marked` of them with ECE, fed to the controller's
/// every-ACK hook, with `next` segments outstanding after each (snd_nxt = snd_una + next): the
/// window that begins at its last ACK is `next` packets long.
fn dctcp_window(cc: &mut Dctcp, una: &mut u64, n: u64, marked: u64, next: u64) {
    let w = Window { cwnd: n * MSS, ssthresh: u64::MAX / 4 };
    for i in 0..n {
        *una += MSS;
        cc.on_ack_event(&w, &AckEvent { delivered: MSS, ece: i < marked, snd_una: *una, snd_nxt: *una + next * MSS });
    }
}

fn dctcp_cfg() -> TcpConfig {
    let mut c = harness::cfg();
    c.cc = Cc::Dctcp;
    c.mss = Size(MSS);
    c
}

#[test]
fn dctcp_alpha_follows_the_marked_fraction_per_window() {
    let mut cc = Dctcp::new(&dctcp_cfg());
    // RFC 8257 §3.3 / `dctcp_alpha_on_init`: α starts at 1 (1024/1024).
    assert_eq!(cc.alpha(), 1024);
    let mut una = 1;
    // `dctcp_reset` at init took snd_nxt = 1: the first ACK ends a window of one unmarked
    // packet: α ← α − α>>4 = 960.
    dctcp_window(&mut cc, &mut una, 1, 0, 10);
    assert_eq!(cc.alpha(), 960);
    // A window of 10 packets, 3 on ACKs with ECE (F = 0.3): `dctcp_update_alpha`,
    // α ← α − (α >> 4) + ((3 << 6) / 10) = 960 − 60 + 19 = 919, the integer form of RFC 8257
    // §3.3's α = (1 − g)·α + g·F = 0.9375 · 0.9375 + 0.0625 · 0.3 = 0.8977 (919.2/1024).
    dctcp_window(&mut cc, &mut una, 10, 3, 10);
    assert_eq!(cc.alpha(), 919);
    // The ACKs inside a window leave α alone until snd_una passes its end.
    let w = Window { cwnd: 10 * MSS, ssthresh: u64::MAX / 4 };
    una += MSS;
    cc.on_ack_event(&w, &AckEvent { delivered: MSS, ece: true, snd_una: una, snd_nxt: una + 10 * MSS });
    assert_eq!(cc.alpha(), 919);
    dctcp_window(&mut cc, &mut una, 9, 9, 16); // ends that window: 10 packets, 10 marked
    assert_eq!(cc.alpha(), 919 - (919 >> 4) + 64);
    // A steady F = 1/4: the EWMA converges to F; the kernel's truncated α >> 4 leaves it at the
    // top of the band where α >> 4 = 16 (α − 16 + 16 = α), 256..=271, coming from above.
    for _ in 0..300 {
        dctcp_window(&mut cc, &mut una, 16, 4, 16);
    }
    assert_eq!(cc.alpha(), 271);
    // No marks at all: α decays geometrically and, below 16, drops to 0 (min_not_zero(α, α>>4)).
    for _ in 0..200 {
        dctcp_window(&mut cc, &mut una, 16, 0, 16);
    }
    assert_eq!(cc.alpha(), 0);
}

#[test]
fn dctcp_cuts_cwnd_by_alpha_over_two() {
    // `dctcp_ssthresh`: cwnd − (cwnd·α >> 11), at least 2 packets (RFC 8257 §3.3: cwnd ←
    // cwnd·(1 − α/2)); α = 1 at the start: a halving.
    let mut h = Harness::sending(10, |c| c.cc = Cc::Dctcp);
    assert!(h.info().ecn, "cc = \"dctcp\" turns ECN on (TCP_CONG_NEEDS_ECN)");
    // The first ACK ends DCTCP's first window (one packet, with ECE): α = 960 + (1 << 6) = 1024.
    h.send(ms(100), ece_ack(1 + MSS));
    assert_eq!(h.info().dctcp_alpha, Some(1024));
    assert_eq!(h.info().cwnd, 5 * MSS);
    assert_eq!(h.info().ecn_reductions, 1);
    // A window later, with F small, α is small and the cut gentle: feed ACKs 2..=11 (the window
    // that began at snd_nxt 11 segments), only the last with ECE.
    for k in 2..=10 {
        h.send(ms(100 + k), seg!(ack = 1 + k * MSS));
    }
    let _ = h.take_sent();
    let before = h.info().cwnd / MSS;
    h.send(ms(120), ece_ack(1 + 11 * MSS));
    let alpha = h.info().dctcp_alpha.unwrap() as u64;
    assert!(alpha < 1024 && alpha > 900, "alpha {alpha}");
    let want = (before - ((before * alpha) >> 11)).max(2);
    assert_eq!(h.info().cwnd, want * MSS);
    assert_eq!(h.info().ecn_reductions, 2);
    assert_eq!(h.info().retrans, 0);
}

#[test]
fn dctcp_marks_every_packet_ect() {
    // Linux `tcp_ecn_send` with `tcp_ca_needs_ecn`: pure ACKs and retransmissions are ECT too,
    // and the SYN (`tcp_ecn_send_syn`).
    let mut c = dctcp_cfg();
    c.handshake = true;
    let mut h = Harness::client(c);
    let syn = h.take_sent();
    assert_eq!(syn[0].1, seg!(seq = 0, flags = FLAG_SYN | FLAG_ECE | FLAG_CWR, opt_len = SYN_OPTS, ecn = ECN_ECT0));
    let mut h = Harness::sending(1, |c| c.cc = Cc::Dctcp);
    h.advance_to(ms(1000));
    assert_eq!(h.take_sent()[0].1, seg!(seq = 1, ecn = ECN_ECT0, ..DATA));
}

#[test]
fn dctcp_receiver_echoes_ce_exactly_and_acks_on_a_change() {
    // RFC 8257 §3.2 with delayed ACKs (one ACK per 2 segments): the ACK reflects the CE state of
    // the segments it covers; on a change of CE state an ACK for what came before goes at once
    // with the old state, then one with the new (Linux `dctcp_ece_ack_update`).
    let mut r = Harness::established(|c| c.cc = Cc::Dctcp);
    let ack = |a: u64, ece: bool| seg!(ack = a, flags = if ece { FLAG_ACK | FLAG_ECE } else { FLAG_ACK }, ecn = ECN_ECT0);
    r.send(ms(1), seg!(seq = 1, ecn = ECN_ECT0, ..DATA));
    r.recv_nothing();
    // CE arrives while an ACK is delayed: "If an ACK was delayed, send that first to reflect
    // the prior CE state", then "force an immediate ACK to reflect the new CE state".
    r.send(ms(2), seg!(seq = 1001, ecn = ECN_CE, ..DATA));
    r.recv(ms(2), [ack(1001, false), ack(2001, true)]);
    // CE state unchanged: delayed ACKs as usual, ECE on them.
    r.send(ms(3), seg!(seq = 2001, ecn = ECN_CE, ..DATA));
    r.recv_nothing();
    r.send(ms(4), seg!(seq = 3001, ecn = ECN_CE, ..DATA));
    r.recv(ms(4), [ack(4001, true)]);
    // Back to unmarked with nothing owed: one immediate ACK without ECE (no CWR needed: the
    // echo is exact, not RFC 3168's sticky one).
    r.send(ms(5), seg!(seq = 4001, ecn = ECN_ECT0, ..DATA));
    r.recv(ms(5), [ack(5001, false)]);
    assert_eq!(r.info().ce_received, 3);
}

// ---- Linux's receiver: quick-ACK mode on ECN (`delack_model = "linux"`) ----

/// Linux's receiver (`delack_model = "linux"`, HZ 250, its timers) with ECN on.
fn linux_ecn_rx(c: &mut TcpConfig) {
    c.ecn = Ecn::On;
    c.rto_model = RtoModel::Linux;
    c.hz = 250;
    c.delack_model = DelackModel::Linux;
}

/// The peer's data segment `k` (1-based) with the ECN field `ecn` and `flags` besides ACK.
fn data_k(k: u64, ecn: u8, flags: u8) -> Seg {
    seg!(seq = 1 + (k - 1) * MSS, flags = FLAG_ACK | flags, ecn = ecn, ..DATA)
}

/// Our ACK of segments 1..=k, with ECE if `ece`.
fn ack_k(k: u64, ece: bool) -> Seg {
    seg!(ack = 1 + k * MSS, flags = if ece { FLAG_ACK | FLAG_ECE } else { FLAG_ACK })
}

/// Past the start-up quick-ACK period: segments 1..=16 with `ecn`, 1 ms apart, each ACKed at
/// once (tcp_event_data_recv's first segment: quick = min(rcv_wnd / (2·rcv_mss), 16)); then 17
/// is held and 18 ACKs both (__tcp_ack_snd_check: more than one receive MSS unacknowledged).
fn linux_rx_past_quickack(h: &mut Harness, ecn: u8) {
    for k in 1..=16 {
        h.send(ms(k), data_k(k, ecn, 0));
        h.recv(ms(k), [ack_k(k, false)]);
    }
    assert_eq!(h.conn.rcv.linux.as_ref().unwrap().quick, 0);
    h.send(ms(17), data_k(17, ecn, 0));
    h.recv_nothing();
    h.send(ms(18), data_k(18, ecn, 0));
    h.recv(ms(18), [ack_k(18, false)]);
}

fn quick(h: &Harness) -> u32 {
    h.conn.rcv.linux.as_ref().unwrap().quick
}

/// __tcp_ecn_check_ce (Linux 6.18 `tcp_data_ecn_check`), INET_ECN_CE without
/// TCP_ECN_DEMAND_CWR: "Better not delay acks, sender can have a very low cwnd":
/// tcp_enter_quickack_mode(sk, 2). The CE segment and the next one are ACKed at once
/// (tcp_dec_quickack_mode spends one per ACK), then delayed ACKs resume: one per two segments.
#[test]
fn linux_ce_enters_quickack_mode_for_two_acks() {
    let mut h = Harness::established(linux_ecn_rx);
    linux_rx_past_quickack(&mut h, ECN_ECT0);
    h.send(ms(19), data_k(19, ECN_CE, 0));
    h.recv(ms(19), [ack_k(19, true)]);
    // tcp_enter_quickack_mode: quick = 2 (one spent by that ACK), ato = TCP_ATO_MIN (10 jiffies).
    assert_eq!((quick(&h), h.conn.rcv.linux.as_ref().unwrap().ato), (1, 10));
    // The next segment, one receive MSS only, is ACKed at once too (quick-ACK mode) ...
    h.send(ms(20), data_k(20, ECN_ECT0, 0));
    h.recv(ms(20), [ack_k(20, true)]);
    assert_eq!(quick(&h), 0);
    // ... and then the delayed ACK is back: 21 held, 22 ACKs both, ECE on until the CWR.
    h.send(ms(21), data_k(21, ECN_ECT0, 0));
    h.recv_nothing();
    h.send(ms(22), data_k(22, ECN_ECT0, 0));
    h.recv(ms(22), [ack_k(22, true)]);
    assert_eq!(h.info().ce_received, 1);
}

/// __tcp_ecn_check_ce enters quick-ACK mode only when TCP_ECN_DEMAND_CWR is not set: a second CE
/// before the sender's CWR is echoed (ECE) but its ACK is delayed as usual. The CWR clears
/// TCP_ECN_DEMAND_CWR (tcp_ecn_accept_cwr; its data segment is ACKed at once, ICSK_ACK_NOW), and
/// the next CE enters quick-ACK mode again.
#[test]
fn linux_a_second_ce_before_the_cwr_does_not_reenter_quickack_mode() {
    let mut h = Harness::established(linux_ecn_rx);
    linux_rx_past_quickack(&mut h, ECN_ECT0);
    h.send(ms(19), data_k(19, ECN_CE, 0));
    h.recv(ms(19), [ack_k(19, true)]);
    h.send(ms(20), data_k(20, ECN_ECT0, 0));
    h.recv(ms(20), [ack_k(20, true)]);
    // A second CE, no CWR yet: no quick ACK; the delayed ACK of two segments carries ECE.
    h.send(ms(21), data_k(21, ECN_CE, 0));
    h.recv_nothing();
    assert_eq!(quick(&h), 0);
    h.send(ms(22), data_k(22, ECN_CE, 0));
    h.recv(ms(22), [ack_k(22, true)]);
    // The CWR: ACKed at once, without ECE.
    h.send(ms(23), data_k(23, ECN_ECT0, FLAG_CWR));
    h.recv(ms(23), [ack_k(23, false)]);
    // A CE now starts a new echo and a new quick-ACK mode: two ACKs at once.
    h.send(ms(24), data_k(24, ECN_CE, 0));
    h.recv(ms(24), [ack_k(24, true)]);
    h.send(ms(25), data_k(25, ECN_ECT0, 0));
    h.recv(ms(25), [ack_k(25, true)]);
    h.send(ms(26), data_k(26, ECN_ECT0, 0));
    h.recv_nothing();
    assert_eq!(h.info().ce_received, 4);
}

/// __tcp_ecn_check_ce, INET_ECN_NOT_ECT: "Funny extension: if ECT is not set on a segment, and we
/// already seen ECT on a previous segment, it is probably a retransmit" (RFC 3168 §6.1.5: a
/// retransmission is not ECN-capable): tcp_enter_quickack_mode(sk, 2). TCP_ECN_SEEN is set by
/// new data that arrived ECT or CE; before any, a Not-ECT segment changes nothing.
#[test]
fn linux_a_not_ect_segment_after_ect_ones_enters_quickack_mode() {
    let mut h = Harness::established(linux_ecn_rx);
    linux_rx_past_quickack(&mut h, ECN_ECT0);
    // A Not-ECT segment in order (a retransmission that filled nothing): ACKed at once, and the
    // next one too.
    h.send(ms(19), data_k(19, ECN_NOT_ECT, 0));
    h.recv(ms(19), [ack_k(19, false)]);
    assert_eq!(quick(&h), 1);
    h.send(ms(20), data_k(20, ECN_ECT0, 0));
    h.recv(ms(20), [ack_k(20, false)]);
    h.send(ms(21), data_k(21, ECN_ECT0, 0));
    h.recv_nothing();
    h.send(ms(22), data_k(22, ECN_ECT0, 0));
    h.recv(ms(22), [ack_k(22, false)]);
    // Above a hole (tcp_data_queue_ofo checks ECN too): with SACK compression (after the third
    // duplicate ACK) an ECT segment's duplicate ACK is held, a Not-ECT one goes at once.
    let mut h = Harness::established(|c| {
        linux_ecn_rx(c);
        c.sack = true;
        c.comp_sack_nr = 44;
    });
    linux_rx_past_quickack(&mut h, ECN_ECT0);
    // Segment 19 lost: 20, 21, 22 give three duplicate ACKs at once, 23 is compressed (no RTT
    // sample here: held for the hrtimer's slack, 100 µs).
    for k in 20..=23 {
        h.send(ms(k), data_k(k, ECN_ECT0, 0));
    }
    let sent = h.take_sent();
    assert_eq!(sent.len(), 3, "three duplicate ACKs, the fourth held: {sent:?}");
    h.send(ms(23) + us(50), data_k(24, ECN_NOT_ECT, 0));
    let sent = h.take_sent();
    assert_eq!(sent.len(), 1, "the Not-ECT segment above the hole is ACKed at once: {sent:?}");
    assert_eq!(sent[0].1.ack, 1 + 18 * MSS);
    assert_eq!(sent[0].1.sack, &[(1 + 19 * MSS, 1 + 24 * MSS)]);
    // Without ECT seen first, a Not-ECT segment changes nothing: held, then one ACK per two.
    let mut h = Harness::established(linux_ecn_rx);
    linux_rx_past_quickack(&mut h, ECN_NOT_ECT);
    h.send(ms(19), data_k(19, ECN_NOT_ECT, 0));
    h.recv_nothing();
    h.send(ms(20), data_k(20, ECN_NOT_ECT, 0));
    h.recv(ms(20), [ack_k(20, false)]);
}

/// With DCTCP the congestion-control event comes first in __tcp_ecn_check_ce:
/// CA_EVENT_ECN_IS_CE → dctcp_ece_ack_update() → dctcp_ece_ack_cwr() sets TCP_ECN_DEMAND_CWR, so
/// the test that follows never enters quick-ACK mode on CE; the ACK at a change of CE state is
/// DCTCP's own (ICSK_ACK_NOW), and the next CE segment's ACK is delayed.
#[test]
fn linux_dctcp_ce_gives_no_quickack_mode() {
    let mut h = Harness::established(|c| {
        linux_ecn_rx(c);
        c.cc = Cc::Dctcp;
    });
    let ack = |k: u64, ece: bool| seg!(ecn = ECN_ECT0, ..ack_k(k, ece));
    for k in 1..=16 {
        h.send(ms(k), data_k(k, ECN_ECT0, 0));
        h.recv(ms(k), [ack(k, false)]);
    }
    h.send(ms(17), data_k(17, ECN_ECT0, 0));
    h.recv_nothing();
    h.send(ms(18), data_k(18, ECN_ECT0, 0));
    h.recv(ms(18), [ack(18, false)]);
    h.send(ms(19), data_k(19, ECN_CE, 0));
    h.recv(ms(19), [ack(19, true)]);
    assert_eq!(quick(&h), 0);
    h.send(ms(20), data_k(20, ECN_CE, 0));
    h.recv_nothing();
    h.send(ms(21), data_k(21, ECN_CE, 0));
    h.recv(ms(21), [ack(21, true)]);
}

/// The other ACK models keep RFC 3168's receiver: the CE segment alone is ACKed at once (RFC
/// 5681 §4.2 delayed ACKs otherwise), and a Not-ECT segment after ECT ones is an ordinary one.
#[test]
fn rfc_delack_model_acks_only_the_ce_segment_at_once() {
    let mut h = Harness::established(|c| c.ecn = Ecn::On);
    h.send(ms(1), data_k(1, ECN_ECT0, 0));
    h.recv_nothing();
    h.send(ms(2), data_k(2, ECN_ECT0, 0));
    h.recv(ms(2), [ack_k(2, false)]);
    h.send(ms(3), data_k(3, ECN_CE, 0));
    h.recv(ms(3), [ack_k(3, true)]);
    // No second quick ACK.
    h.send(ms(4), data_k(4, ECN_ECT0, 0));
    h.recv_nothing();
    h.send(ms(5), data_k(5, ECN_ECT0, 0));
    h.recv(ms(5), [ack_k(5, true)]);
    h.send(ms(6), data_k(6, ECN_ECT0, FLAG_CWR));
    h.recv(ms(6), [ack_k(6, false)]);
    // Not-ECT after ECT: delayed as any other segment.
    h.send(ms(7), data_k(7, ECN_NOT_ECT, 0));
    h.recv_nothing();
    h.send(ms(8), data_k(8, ECN_ECT0, 0));
    h.recv(ms(8), [ack_k(8, false)]);
}

// ---- marking queues ----

fn pkt(ecn: u8) -> Packet {
    Packet { body: Payload::Tcp(Segment { len: 1000, flags: FLAG_ACK, ip_ecn: ecn, ..Default::default() }), ..Default::default() }
}

fn link(limit: QueueLimit) -> LinkDir {
    LinkDir::new("l".into(), NodeId(0), NodeId(1), 1_000_000, 0, limit, 0.0, RngStream::new(1, "link:l"))
}

/// A link with `n` packets waiting (1040 bytes each).
fn link_with_queue(n: u32) -> LinkDir {
    let mut l = link(QueueLimit::default());
    for i in 0..n {
        l.push(0, i, 1040);
    }
    l
}

#[test]
fn step_threshold_marks_ect_arrivals_at_k_and_above() {
    // RFC 8257 §3.1 / Alizadeh et al. §3.1: mark CE when the queue an arrival finds is at K.
    for (waiting, marked) in [(0, false), (2, false), (3, true), (10, true)] {
        let mut l = link_with_queue(waiting);
        l.mark_threshold = Some(MarkThreshold::Packets(3));
        let mut p = pkt(ECN_ECT0);
        assert!(l.admit(&mut p, true).is_ok());
        assert_eq!(p.body.tcp().unwrap().ip_ecn == ECN_CE, marked, "{waiting} waiting");
        assert_eq!(l.stats.ce_marks, marked as u64);
        // A packet that is not ECN-capable is neither marked nor dropped by the threshold
        // (RFC 3168 §5: CE only on ECT packets).
        let mut p = pkt(ECN_NOT_ECT);
        assert!(l.admit(&mut p, true).is_ok());
        assert_eq!(p.body.tcp().unwrap().ip_ecn, ECN_NOT_ECT);
    }
    // In bytes: 2 packets (2080 B) waiting are below 3000 B, 3 (3120 B) at or above.
    for (waiting, marked) in [(2, false), (3, true)] {
        let mut l = link_with_queue(waiting);
        l.mark_threshold = Some(MarkThreshold::Bytes(3000));
        let mut p = pkt(ECN_ECT0);
        assert!(l.admit(&mut p, true).is_ok());
        assert_eq!(p.body.tcp().unwrap().ce(), marked);
    }
    // The physical limit still drops, marked or not.
    let mut l = link(QueueLimit { packets: Some(3), bytes: None });
    for i in 0..3 {
        l.push(0, i, 1040);
    }
    l.mark_threshold = Some(MarkThreshold::Packets(1));
    assert_eq!(l.admit(&mut pkt(ECN_ECT0), true), Err(DropReason::Queue));
}

#[test]
fn red_with_ecn_marks_instead_of_early_drops() {
    // avg = the instantaneous queue (w_q = 1) between min_th and max_th: RED's early decision.
    let spec = RedSpec { min_th: 1.0, max_th: 50.0, max_p: 1.0, w_q: 1.0, wait: false, ecn: true, ..Default::default() };
    let mut l = link_with_queue(25);
    l.set_red(Some(spec), RngStream::new(1, "red:l"));
    // RFC 3168 §5 (ns-2 `setbit_`): an ECT packet RED would drop early is marked CE instead.
    let mut marked = 0;
    for _ in 0..200 {
        let mut p = pkt(ECN_ECT0);
        assert!(l.admit(&mut p, true).is_ok(), "ECT packets are not dropped early");
        marked += p.body.tcp().unwrap().ce() as u64;
    }
    assert_eq!(l.stats.dropped_red_early, 0);
    assert_eq!(l.stats.ce_marks, marked);
    assert!(marked > 50, "p_b ≈ 0.49: about half marked, got {marked}");
    // A packet that is not ECN-capable is dropped as before.
    let drops = (0..200).filter(|_| l.admit(&mut pkt(ECN_NOT_ECT), true) == Err(DropReason::RedEarly)).count() as u64;
    assert!(drops > 50 && l.stats.dropped_red_early == drops);
    assert_eq!(l.stats.ce_marks, marked);
    // Above max_th RED drops every arrival, ECT or not (ns-2: forced drops are drops).
    let mut l = link_with_queue(60);
    l.set_red(Some(spec), RngStream::new(1, "red:l"));
    assert_eq!(l.admit(&mut pkt(ECN_ECT0), true), Err(DropReason::RedForced));
    // RED without `ecn` drops ECT packets early as any other.
    let mut l = link_with_queue(25);
    l.set_red(Some(RedSpec { ecn: false, ..spec }), RngStream::new(1, "red:l"));
    let drops = (0..200).filter(|_| l.admit(&mut pkt(ECN_ECT0), true) == Err(DropReason::RedEarly)).count();
    assert!(drops > 50);
    assert_eq!(l.stats.ce_marks, 0);
}

// ---- whole runs ----

fn scenario(tcp: &str, queue: &str) -> Scenario {
    let text = format!(
        "duration = \"10s\"\n[topology]\nkind = \"single_link\"\nrate = \"10Mbps\"\ndelay = \"10ms\"\nqueue = {queue}\n[tcp]\n{tcp}\n[[flows]]\nbytes = \"unlimited\"\n"
    );
    Scenario::from_toml(&text, &[]).unwrap()
}

fn field(v: &serde_json::Value, k: &str) -> u64 {
    v.get(k).and_then(|x| x.as_u64()).unwrap_or(0)
}

#[test]
fn a_run_with_a_step_marking_queue_reacts_to_marks_and_loses_nothing() {
    let s = scenario("ecn = true", "{ packets = 100, mark_threshold = 20 }");
    let r = run(&s, 1).unwrap();
    let j = serde_json::to_value(&r).unwrap();
    let (c, l) = (&j["connections"][0], &j["links"][0]);
    assert!(field(l, "ce_marks") > 0, "{l}");
    // One reduction per sawtooth (RFC 3168 §6.1.2, once per window of data): Reno halves at
    // W = C·RTT + K ≈ 17 + 20 segments and regrows half of it at one segment per two round trips
    // (delayed ACKs) of about 32 ms, a period of about 1.2 s: 8 in 10 s. Reacting to the ECE on
    // the ACK of the window's own last segment made it two per sawtooth (16).
    assert!((6..=10).contains(&field(c, "ecn_reductions")), "{c}");
    assert!(field(c, "ce_received") >= field(c, "ecn_reductions"));
    // Marks keep the queue below the limit: no loss, no retransmission (RFC 3168 §1: "avoid
    // packet loss"); the queue stays near K.
    assert_eq!(field(l, "dropped_pkts"), 0);
    assert_eq!(field(c, "retransmits"), 0);
    assert!(field(l, "max_queue_pkts") < 100);
    // Deterministic: the same scenario and seed give the same bytes.
    assert_eq!(serde_json::to_string(&r).unwrap(), serde_json::to_string(&run(&s, 1).unwrap()).unwrap());
    // Without ECN the same queue marks nothing and the transfer loses packets at the limit.
    let r = run(&scenario("ecn = false", "{ packets = 100, mark_threshold = 20 }"), 1).unwrap();
    let j = serde_json::to_value(&r).unwrap();
    assert_eq!(field(&j["links"][0], "ce_marks"), 0);
    assert!(j["links"][0].get("ce_marks").is_none(), "results without marks keep their form");
    assert!(field(&j["links"][0], "dropped_pkts") > 0);
}

#[test]
fn a_run_with_red_ecn_marks_and_dctcp_keeps_the_queue_at_k() {
    let s = scenario("ecn = true", "{ packets = 200, red = { min_th = 5, max_th = 60, w_q = 0.02, ecn = true } }");
    let j = serde_json::to_value(run(&s, 1).unwrap()).unwrap();
    let (c, l) = (&j["connections"][0], &j["links"][0]);
    assert!(field(l, "ce_marks") > 0 && field(c, "ecn_reductions") > 0, "{l} {c}");
    assert_eq!(field(l, "dropped_red_early"), 0, "ECT data is marked, not dropped early");
    // DCTCP on a step queue: the queue oscillates just above K, no loss.
    let s = scenario("cc = \"dctcp\"", "{ packets = 200, mark_threshold = 20 }");
    let j = serde_json::to_value(run(&s, 1).unwrap()).unwrap();
    let (c, l) = (&j["connections"][0], &j["links"][0]);
    assert!(field(c, "ecn_reductions") > 10);
    assert_eq!(field(l, "dropped_pkts"), 0);
    assert!(field(l, "max_queue_pkts") < 60, "{l}");
    assert!(l["utilization"].as_f64().unwrap() > 0.95, "{l}");
}

#[test]
fn scenario_errors_name_the_key() {
    let bad = |tcp: &str, queue: &str| {
        let text = format!("[topology]\nkind = \"single_link\"\nrate = \"10Mbps\"\ndelay = \"10ms\"\nqueue = {queue}\n[tcp]\n{tcp}\n[[flows]]\nbytes = \"1MB\"\n");
        Scenario::from_toml(&text, &[]).unwrap_err().to_string()
    };
    let e = bad("ecn = \"maybe\"", "10");
    assert!(e.contains("ecn") && e.contains("accept"), "{e}");
    let e = bad("", "{ packets = 10, mark_threshold = -1 }");
    assert!(e.contains("mark_threshold") || e.contains("non-negative"), "{e}");
    let e = bad("", "{ packets = 10, mark_threshold = \"lots\" }");
    assert!(e.contains("queue"), "{e}");
    // The ECN knob's three forms, and the overrides' form.
    for (v, want) in [("true", Ecn::On), ("false", Ecn::Off), ("\"on\"", Ecn::On), ("\"off\"", Ecn::Off), ("\"accept\"", Ecn::Accept)] {
        let text = format!("[topology]\nkind = \"single_link\"\nrate = \"10Mbps\"\ndelay = \"10ms\"\n[tcp]\necn = {v}\n[[flows]]\nbytes = \"1MB\"\n");
        let s = Scenario::from_toml(&text, &[]).unwrap();
        assert_eq!(s.tcp.ecn, Some(want), "{v}");
    }
    let _ = SEG;
}
