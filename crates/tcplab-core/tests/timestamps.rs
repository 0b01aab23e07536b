//! The timestamps option (RFC 7323) and Linux's per-ACK RTT samples (`rto_model = "linux"`) on
//! the whole-connection harness: negotiation, the option's bytes and the smaller payload, the
//! TSecr echo rules, an RTT sample from every ACK (sequence, SACK and TSecr samples, Karn), the
//! windowed min_rtt, and the FIN on the last data segment. Each assertion names the RFC clause
//! or the kernel function (net/ipv4/tcp_input.c, tcp_output.c) it checks.

#[macro_use]
mod harness;

use harness::{Harness, Seg, DATA, FIN, MSS, SYNACK};
use tcplab_core::net::{FLAG_ACK, FLAG_FIN, FLAG_SYN, HEADER_BYTES, TS_OPTION_BYTES};
use tcplab_core::tcp::config::{InitialWindow, Limit, RtoModel, Unlimited, Variant};
use tcplab_core::tcp::rtt::RttEstimator;
use tcplab_core::tcp::{TcpConfig, TimerKind};
use tcplab_core::units::{ms, Duration, Time, SEC};

/// Option bytes of a SYN without timestamps (the `syn_options` default: MSS, SACK-permitted).
const SYN_OPT: u16 = 8;
const TS: u16 = TS_OPTION_BYTES as u16;
/// The payload with timestamps on: MSS − 12 (Linux `tcp_sync_mss()`: mss_cache = advmss − 12).
const TS_MSS: u64 = MSS - TS_OPTION_BYTES as u64;

fn handshake(c: &mut TcpConfig) {
    c.handshake = true;
    c.timestamps = true;
}

fn linux_rtt(c: &mut TcpConfig) {
    c.rto_model = RtoModel::Linux;
    c.hz = 250;
    c.rto_min = Duration(ms(200));
    c.clock_granularity = Duration(ms(200));
    c.rto_max = Duration(120 * SEC);
}

/// The estimator the kernel would have, for feeding it the same samples by hand.
fn kernel_estimator(c: &TcpConfig) -> RttEstimator {
    RttEstimator::new(c.rto_initial.0, c.rto_min.0, c.rto_max.0, c.clock_granularity.0, 0, 2.0).linux_model(tcplab_core::tcp::jiffies::Jiffies::of(c))
}

fn ack_ts(a: u64, tsval: u32, tsecr: u32) -> Seg {
    seg!(ack = a, ts = Some((tsval, tsecr)))
}

fn sack_ack(a: u64, l: u64, r: u64) -> Seg {
    let blocks: &'static [(u64, u64)] = Box::leak(vec![(l, r)].into_boxed_slice());
    Seg { ack: a, sack: blocks, ..harness::SEG }
}

// ---- Negotiation -----------------------------------------------------------------------------

/// RFC 7323 §3.2: the SYN offers TSopt with TSecr 0; a SYN-ACK with it turns it on, and "every
/// non-<RST> segment" then carries it, the payload 12 bytes smaller.
#[test]
fn both_sides_agree_then_every_segment_carries_it() {
    let mut c = harness::cfg();
    handshake(&mut c);
    let mut h = Harness::client(c);
    h.write(0, 3 * MSS);
    // tcp_syn_options(): MSS, SACK-permitted (off here) and TS val 0 (the 1 ms clock at 0) ecr 0.
    h.recv(0, [Seg { seq: 0, ack: 0, flags: FLAG_SYN, opt_len: SYN_OPT + TS, ts: Some((0, 0)), ..harness::SEG }]);
    h.send(ms(100), seg!(ts = Some((7000, 0)), ..SYNACK));
    // The first segment after the SYN-ACK: TSval now (100 ms), TSecr the SYN-ACK's TSval
    // (RFC 7323 §4.3 (1): TS.Recent from the SYN-ACK); IW 1 segment of MSS − 12 bytes.
    h.recv(ms(100), [seg!(seq = 1, ack = 1, len = TS_MSS as u32, opt_len = TS, ts = Some((100, 7000)))]);
    assert_eq!(h.info().mss, TS_MSS, "tcp_sync_mss(): mss_cache = MSS − TCPOLEN_TSTAMP_ALIGNED");
    assert_eq!(h.info().cwnd, TS_MSS, "IW 1 segment of the smaller size");
}

/// RFC 7323 §3.2: "If a TSopt is received in a <SYN,ACK> ... [only] when the <SYN> contained
/// one": a SYN-ACK without it leaves it off, the full MSS in use, no option bytes.
#[test]
fn peer_without_timestamps_turns_it_off() {
    let mut c = harness::cfg();
    handshake(&mut c);
    let mut h = Harness::client(c);
    h.write(0, 3 * MSS);
    h.recv(0, [Seg { seq: 0, ack: 0, flags: FLAG_SYN, opt_len: SYN_OPT + TS, ts: Some((0, 0)), ..harness::SEG }]);
    h.send(ms(100), SYNACK);
    h.recv(ms(100), [seg!(seq = 1, ack = 1, ..DATA)]);
    assert_eq!(h.info().mss, MSS);
}

/// The passive end: a SYN with TSopt gets a SYN-ACK with it, echoing the SYN's TSval (RFC 7323
/// §3.2, Linux `tcp_synack_options()`); a SYN without gets none; a passive end with the knob off
/// never sends it.
#[test]
fn server_answers_in_kind() {
    let syn = |ts| Seg { seq: 0, ack: 0, flags: FLAG_SYN, opt_len: SYN_OPT + TS, ts, ..harness::SEG };
    let mut c = harness::cfg();
    handshake(&mut c);
    let mut h = Harness::server(c.clone());
    h.send(ms(5), syn(Some((4242, 0))));
    h.recv(ms(5), [Seg { seq: 0, ack: 1, flags: FLAG_SYN | FLAG_ACK, opt_len: SYN_OPT + TS, ts: Some((5, 4242)), ..harness::SEG }]);
    let mut h2 = Harness::server(c.clone());
    h2.send(ms(5), syn(None));
    h2.recv(ms(5), [Seg { seq: 0, ack: 1, flags: FLAG_SYN | FLAG_ACK, opt_len: SYN_OPT, ..harness::SEG }]);
    let mut off = c;
    off.timestamps = false;
    let mut h3 = Harness::server(off);
    h3.send(ms(5), syn(Some((4242, 0))));
    h3.recv(ms(5), [Seg { seq: 0, ack: 1, flags: FLAG_SYN | FLAG_ACK, opt_len: SYN_OPT, ..harness::SEG }]);
}

/// The passive end's data after the handshake: MSS − 12 bytes with TSecr the ACK's TSval.
#[test]
fn server_sends_smaller_segments() {
    let mut c = harness::cfg();
    handshake(&mut c);
    c.initial_window = InitialWindow::Segments(2);
    let mut h = Harness::server(c);
    h.send(0, Seg { seq: 0, ack: 0, flags: FLAG_SYN, ts: Some((900, 0)), ..harness::SEG });
    h.take_sent();
    h.send(ms(50), seg!(ack = 1, ts = Some((950, 0))));
    h.write(ms(50), 4 * MSS);
    h.recv(
        ms(50),
        [seg!(seq = 1, ack = 1, len = TS_MSS as u32, opt_len = TS, ts = Some((50, 950))), seg!(seq = 1 + TS_MSS, ack = 1, len = TS_MSS as u32, opt_len = TS, ts = Some((50, 950)))],
    );
}

/// linux6: a 1500-byte path (MSS 1460) carries 1448 payload bytes, 12 option bytes and 40 of
/// headers: 1500 on the wire (Linux `tcp_current_mss()`; the testbed's captures show 1448).
/// With SACK-permitted the SYN's timestamps take 8 more bytes, not 12 (tcp_options_write() puts
/// SACK-permitted where the NOPs would be), after MSS (4) and before NOP and window scale (4):
/// 20 option bytes, the kernel's 60-byte SYN. The SYN-ACK is acknowledged by a pure ACK before
/// the data (tcp_rcv_synsent_state_process → tcp_send_ack).
#[test]
fn linux6_payload_is_1448() {
    let mut c = TcpConfig::profile("linux6").unwrap();
    c.rwnd = Limit::Named(Unlimited::Unlimited);
    let mut h = Harness::client(c);
    h.write(0, 100_000);
    let syn = h.take_sent();
    assert_eq!(syn.len(), 1);
    assert_eq!((syn[0].1.opt_len, syn[0].1.sack_permitted, syn[0].1.ts), (SYN_OPT + 4 + 8, true, Some((0, 0))));
    assert_eq!(syn[0].1.to_segment().wire_bytes(), 60);
    h.send(ms(20), Seg { opt_len: SYN_OPT + 4 + 8, sack_permitted: true, ts: Some((1, 0)), ..SYNACK });
    let sent = h.take_sent();
    assert_eq!(sent.len(), 11, "the pure ACK, then TCP_INIT_CWND segments");
    let (_, ack) = &sent[0];
    assert_eq!((ack.seq, ack.len, ack.opt_len, ack.ts), (1, 0, TS, Some((20, 1))));
    assert_eq!(ack.to_segment().wire_bytes(), 52);
    for (k, (_, s)) in sent[1..].iter().enumerate() {
        assert_eq!((s.seq, s.len, s.opt_len, s.ts), (1 + 1448 * k as u64, 1448, TS, Some((20, 1))));
        assert_eq!(s.to_segment().wire_bytes(), 1500);
        assert_eq!(s.len + HEADER_BYTES + s.opt_len as u32, 1500);
    }
}

// ---- TSecr echo rules --------------------------------------------------------------------------

/// RFC 7323 §4.3 (2): "If SEG.TSval >= TS.Recent and SEG.SEQ <= Last.ACK.sent then SEG.TSval is
/// copied to TS.Recent". Cases (A) delayed ACKs echo the earliest unacknowledged segment,
/// (B) an out-of-order segment's TSval is not taken, (C) the segment that fills the hole is
/// echoed (Linux `tcp_replace_ts_recent()`).
#[test]
fn tsecr_echo_rules() {
    let mut h = Harness::established(|c| c.timestamps = true);
    let d = |k: u64, tsval: u32| seg!(seq = 1 + (k - 1) * MSS, ts = Some((tsval, 0)), ..DATA);
    h.send(ms(10), d(1, 10));
    h.recv_nothing();
    // (A) The second segment triggers the ACK (every second segment, RFC 5681 §4.2): its TSecr
    // is the first segment's TSval, the earliest one this ACK acknowledges.
    h.send(ms(20), d(2, 20));
    h.recv(ms(20), [seg!(ack = 2001, opt_len = TS, ts = Some((20, 10)))]);
    // The next in-order segment starts at Last.ACK.sent: taken; its delayed ACK echoes it.
    h.send(ms(30), d(3, 30));
    h.recv_nothing();
    h.advance_to(ms(230));
    h.recv(ms(230), [seg!(ack = 3001, opt_len = TS, ts = Some((230, 30)))]);
    // (B) Segment 5 above a hole: the duplicate ACK echoes TS.Recent (30), not 40.
    h.send(ms(300), d(5, 40));
    h.recv(ms(300), [seg!(ack = 3001, opt_len = TS, ts = Some((300, 30)))]);
    // (C) Segment 4 fills the hole: SEG.SEQ = Last.ACK.sent, so its TSval (50) is echoed.
    h.send(ms(310), d(4, 50));
    h.recv(ms(310), [seg!(ack = 5001, opt_len = TS, ts = Some((310, 50)))]);
    // An older TSval (SEG.TSval < TS.Recent) is not taken, even in sequence.
    h.send(ms(320), d(6, 45));
    h.send(ms(321), d(7, 60));
    h.recv(ms(321), [seg!(ack = 7001, opt_len = TS, ts = Some((321, 50)))]);
}

/// RFC 2018 §3 / Linux `tcp_established_options()`: with timestamps at most 3 SACK blocks fit
/// in the 40 option bytes (12 + 4 + 3·8).
#[test]
fn three_sack_blocks_with_timestamps() {
    let mut h = Harness::established(|c| {
        c.timestamps = true;
        c.sack = true;
        c.variant = Variant::Sack;
        c.sack_blocks = 4;
    });
    let d = |k: u64| seg!(seq = 1 + (k - 1) * MSS, ts = Some((1, 0)), ..DATA);
    for (i, k) in [2u64, 4, 6, 8].into_iter().enumerate() {
        h.send(ms(10 + i as u64), d(k));
    }
    let sent = h.take_sent();
    let last = &sent.last().unwrap().1;
    assert_eq!(last.sack.len(), 3, "{last:?}");
    assert_eq!(last.sack[0], (7001, 8001), "RFC 2018 §4: the newest block first");
    assert_eq!(last.to_segment().wire_bytes(), HEADER_BYTES + TS_OPTION_BYTES + 4 + 3 * 8);
}

// ---- Per-ACK RTT samples (rto_model = "linux") ------------------------------------------------

/// Linux `tcp_clean_rtx_queue()` → `tcp_ack_update_rtt()`: every ACK that newly acknowledges
/// never-retransmitted data gives a sample (seq_rtt: from the oldest such segment's send time),
/// and `tcp_rtt_estimator()` takes each; srtt, mdev, rttvar and the RTO equal the kernel's
/// arithmetic applied sample by sample, with snd_nxt (rtt_seq) as it was at each ACK.
#[test]
fn every_ack_gives_a_sample() {
    let mut h = Harness::sending(4, linux_rtt);
    let cfg = h.conn.snd.core.cfg.clone();
    let mut k = kernel_estimator(&cfg);
    // Segments 1..4 sent at 0; ACKs of each come after rising and falling RTTs. Each ACK opens
    // the window (slow start) so new segments are sent; their samples come from their own send
    // times.
    let acks: [(Time, u64); 6] = [(ms(100), 1001), (ms(110), 2001), (ms(150), 3001), (ms(152), 4001), (ms(230), 5001), (ms(260), 7001)];
    let mut sent_at = std::collections::BTreeMap::new();
    for s in 1..=4u64 {
        sent_at.insert(1 + (s - 1) * MSS, 0);
    }
    let mut prev = 1;
    for (t, a) in acks {
        let snd_nxt = h.conn.snd.core.snd_max;
        h.send(t, seg!(ack = a));
        // The oldest newly acknowledged segment is the one at the previous snd_una.
        let m = t - sent_at[&prev];
        k.sample_acked(m, a, snd_nxt);
        for (at, s) in h.take_sent() {
            sent_at.entry(s.seq).or_insert(at);
        }
        assert_eq!(h.conn.snd.core.rtt.linux_state(), k.linux_state(), "after the ACK of {a} at {t}");
        assert_eq!(h.info().srtt, k.srtt());
        assert_eq!(h.info().rto, k.rto());
        prev = a;
    }
    assert_eq!(h.conn.snd.core.rtt.n_samples, 6, "one sample per ACK");
    // The RFC model times one segment per RTT (RFC 6298 §3): fewer samples from the same ACKs.
    let mut r = Harness::sending(4, |_| {});
    for (t, a) in acks {
        r.send(t, seg!(ack = a));
    }
    assert!(r.conn.snd.core.rtt.n_samples < 6, "{}", r.conn.snd.core.rtt.n_samples);
}

/// `tcp_update_rtt_min()`: min_rtt in `info()` is the windowed minimum of ca_rtt (the newest
/// acknowledged segment's RTT), which RACK and BBR read.
#[test]
fn min_rtt_is_the_windowed_minimum() {
    let mut h = Harness::sending(3, linux_rtt);
    h.send(ms(90), seg!(ack = 2001));
    // ca_rtt from the newest acknowledged segment (sent at 0): 90 ms.
    assert_eq!(h.info().min_rtt, Some(ms(90)));
    h.send(ms(95), seg!(ack = 3001));
    assert_eq!(h.info().min_rtt, Some(ms(90)));
    assert_eq!(h.info().srtt, Some(ms(90) + (ms(95) - ms(90)) / 8), "srtt = 7/8·90 + 1/8·95");
}

/// `tcp_sacktag_one()`: a newly SACKed segment never retransmitted gives sack_rtt
/// (`first_sackt`, the lowest one) on an ACK that moves nothing cumulatively;
/// `tcp_ack_update_rtt()` takes it when there is no seq_rtt.
#[test]
fn sack_gives_samples() {
    let mut h = Harness::sending(4, |c| {
        linux_rtt(c);
        c.sack = true;
        c.variant = Variant::Sack;
    });
    let cfg = h.conn.snd.core.cfg.clone();
    let mut k = kernel_estimator(&cfg);
    let snd_nxt = h.conn.snd.core.snd_max;
    h.send(ms(100), sack_ack(1, 1001, 2001));
    k.sample_acked(ms(100), 1, snd_nxt);
    assert_eq!(h.conn.snd.core.rtt.n_samples, 1);
    assert_eq!(h.conn.snd.core.rtt.linux_state(), k.linux_state());
    // Segments 3 and 4 SACKed at 130 ms: sample from segment 3 (first_sackt), sent at 0.
    h.send(ms(130), sack_ack(1, 1001, 4001));
    k.sample_acked(ms(130), 1, snd_nxt);
    assert_eq!(h.conn.snd.core.rtt.n_samples, 2);
    assert_eq!(h.conn.snd.core.rtt.linux_state(), k.linux_state());
    assert_eq!(h.info().srtt, k.srtt());
}

/// Karn (RFC 6298 §3; FLAG_RETRANS_DATA_ACKED in `tcp_clean_rtx_queue()`): the ACK of a
/// retransmitted segment gives no sample without timestamps.
#[test]
fn no_sample_from_a_retransmission_without_timestamps() {
    let mut h = Harness::sending(1, linux_rtt);
    let rto = h.deadline(TimerKind::Rto).unwrap();
    h.advance_to(rto);
    h.recv(rto, [seg!(seq = 1, ..DATA)]);
    h.send(rto + ms(100), seg!(ack = 1001));
    assert_eq!(h.conn.snd.core.rtt.n_samples, 0);
    assert_eq!(h.info().srtt, None);
}

/// RFC 7323 §4.1 "RTTM Rule" with Karn's exception (§4.2: the retransmission carries its own
/// TSval): `tcp_ack_update_rtt()` falls back to TSecr when no seq/SACK sample exists and the ACK
/// acknowledges new data (`tcp_rtt_tsopt_us()`, whole milliseconds).
#[test]
fn tsecr_measures_a_retransmission() {
    let mut h = Harness::sending(1, |c| {
        linux_rtt(c);
        c.timestamps = true;
    });
    let rto = h.deadline(TimerKind::Rto).unwrap();
    h.advance_to(rto);
    let sent = h.take_sent();
    assert_eq!(sent.len(), 1);
    let (tsval, _) = sent[0].1.ts.unwrap();
    assert_eq!(tsval as Time, rto / ms(1), "TSval: the 1 ms clock when it was resent");
    // The ACK echoes the retransmission's TSval: a 100 ms sample.
    h.send(rto + ms(100), ack_ts(1 + TS_MSS, 9, tsval));
    assert_eq!(h.conn.snd.core.rtt.n_samples, 1);
    assert_eq!(h.info().srtt, Some(ms(100)));
    // TSecr 0 is no echo (the kernel tests rcv_tsecr): no sample from it.
    let mut z = Harness::sending(1, |c| {
        linux_rtt(c);
        c.timestamps = true;
    });
    let rto = z.deadline(TimerKind::Rto).unwrap();
    z.advance_to(rto);
    z.send(rto + ms(100), ack_ts(1 + TS_MSS, 9, 0));
    assert_eq!(z.conn.snd.core.rtt.n_samples, 0);
}

/// `tcp_ack_update_rtt()` prefers seq_rtt to TSecr ("broken middle-boxes or peers may corrupt
/// TS-ECR"): a wrong echo on a fresh segment's ACK changes nothing.
#[test]
fn seq_sample_wins_over_tsecr() {
    let mut h = Harness::sending(1, |c| {
        linux_rtt(c);
        c.timestamps = true;
    });
    h.send(ms(80), ack_ts(1 + TS_MSS, 9, 0xdead));
    assert_eq!(h.info().srtt, Some(ms(80)));
}

// ---- FIN on the last data segment --------------------------------------------------------------

/// Linux `tcp_send_fin()`: a close with data still queued sets FIN on the tail skb, so the last
/// data segment carries the FIN (`fin_with_data`); without the knob the FIN is a segment of its
/// own (the RFC and ns-2 profiles).
#[test]
fn fin_rides_on_the_last_data_segment() {
    let knobs = |merge: bool| {
        move |c: &mut TcpConfig| {
            c.fin = true;
            c.fin_with_data = merge;
        }
    };
    let mut h = Harness::established(knobs(true));
    h.write(0, 2500);
    h.recv(0, [seg!(seq = 1, ..DATA)]);
    h.close(0);
    h.recv_nothing();
    h.send(ms(100), seg!(ack = 1001));
    h.recv(ms(100), [seg!(seq = 1001, ..DATA), seg!(seq = 2001, len = 500, flags = FLAG_ACK | FLAG_FIN)]);
    // A retransmission of that segment carries the FIN again (the skb keeps its flag).
    let rto = h.deadline(TimerKind::Rto).unwrap();
    h.send(ms(200), seg!(ack = 2001));
    h.take_sent();
    let rto2 = h.deadline(TimerKind::Rto).unwrap();
    assert!(rto2 > rto);
    h.advance_to(rto2);
    h.recv(rto2, [seg!(seq = 2001, len = 500, flags = FLAG_ACK | FLAG_FIN)]);
    h.send(rto2 + ms(100), seg!(ack = 2502));
    assert_eq!(h.info().snd_una, 2502);

    let mut h = Harness::established(knobs(false));
    h.write(0, 2500);
    h.recv(0, [seg!(seq = 1, ..DATA)]);
    h.close(0);
    h.send(ms(100), seg!(ack = 1001));
    h.recv(ms(100), [seg!(seq = 1001, ..DATA), seg!(seq = 2001, len = 500), seg!(seq = 2501, ..FIN)]);
}

/// `tcp_send_fin()` with nothing queued: all data already sent, the FIN goes alone.
#[test]
fn fin_alone_when_the_data_left_before_the_close() {
    let mut h = Harness::established(|c| {
        c.fin = true;
        c.fin_with_data = true;
    });
    h.write(0, 500);
    h.recv(0, [seg!(seq = 1, len = 500)]);
    h.close(ms(10));
    h.recv(ms(10), [seg!(seq = 501, ..FIN)]);
}

/// The receiver takes data and FIN from one segment: delivers the data, acknowledges the FIN at
/// once (RFC 793 §3.7 / RFC 9293 §3.10.7.4: "advance RCV.NXT over the FIN").
#[test]
fn receiver_takes_data_and_fin_together() {
    let mut h = Harness::established(|c| c.fin = true);
    h.send(ms(10), seg!(seq = 1, len = 700, flags = FLAG_ACK | FLAG_FIN));
    h.recv(ms(10), [seg!(ack = 702)]);
    assert!(h.conn.rcv.fin_received);
}

// ---- The clock's phase -------------------------------------------------------------------------

/// `ts_offset`: the 1 ms clock's ticks fall that long before whole milliseconds of the simulated
/// time (a host's monotonic clock has its own phase; Linux `tcp_time_stamp_ts`). TSval moves with
/// it (and so the RTT a TSecr measures, in whole milliseconds: `tests/test_tsphase.py`).
#[test]
fn the_clock_phase_moves_tsval() {
    let run = |offset: Time| {
        let mut c = harness::cfg();
        handshake(&mut c);
        linux_rtt(&mut c);
        c.ts_offset = Duration(offset);
        let mut h = Harness::client(c);
        let syn = h.take_sent();
        // The SYN at 0: TSval ⌊(0 + offset)/1 ms⌋ = 0 either way.
        assert_eq!(syn[0].1.ts, Some((0, 0)));
        h.send(ms(40) + 300_000, Seg { ack: 1, ts: Some((7, 0)), ..SYNACK });
        h.write(ms(41) + 500_000, MSS);
        let sent = h.take_sent();
        let data = sent.iter().find(|(_, s)| s.len > 0).expect("data");
        data.1.ts.expect("timestamps on").0
    };
    // Data at 41.5 ms: TSval 41 without an offset and with 0.4 ms (41.9), 42 with 0.6 ms (42.1).
    assert_eq!(run(0), 41);
    assert_eq!(run(400_000), 41);
    assert_eq!(run(600_000), 42);
}
