//! TCP rules on one whole connection (`TcpConn`), in the harness of `harness/mod.rs`: exact
//! segments in at exact virtual times, exact segments out, and the connection's `info()`. Each
//! assertion cites the clause it checks.

#[macro_use]
mod harness;

use harness::{Harness, Seg, DATA, MSS};
use tcplab_core::tcp::config::{InitialWindow, Limit};
use tcplab_core::tcp::{CaState, TcpState, TimerKind, Variant};
use tcplab_core::units::{ms, Size, SEC};

/// The peer's ACK of everything below `ack`.
fn ack(ack: u64) -> Seg {
    seg!(ack = ack)
}

/// Data segment `k` (1-based) of our transfer, as we send it.
fn data(k: u64) -> Seg {
    seg!(seq = 1 + (k - 1) * MSS, ..DATA)
}

fn datas(ks: impl IntoIterator<Item = u64>) -> Vec<Seg> {
    ks.into_iter().map(data).collect()
}

// ---------------------------------------------------------------------------------------------
// Slow start (RFC 5681 §3.1)

#[test]
fn slow_start_grows_cwnd_by_one_smss_per_ack_until_ssthresh() {
    let mut h = Harness::established(|c| c.initial_ssthresh = Limit::Bytes(Size(4 * MSS)));
    h.write(0, 100 * MSS);
    h.recv(0, [data(1)]);
    assert_eq!(h.info().state, TcpState::Established);
    assert_eq!(h.info().cwnd, MSS);
    // RFC 5681 §3.1 eq. 2: "During slow start, TCP increments cwnd by at most SMSS bytes for
    // each ACK received that cumulatively acknowledges new data": 1 → 2 → 3 → 4 segments.
    h.send(ms(100), ack(1 + MSS));
    assert_eq!(h.info().cwnd, 2 * MSS);
    h.recv(ms(100), datas([2, 3]));
    h.send(ms(200), ack(1 + 2 * MSS));
    assert_eq!(h.info().cwnd, 3 * MSS);
    h.recv(ms(200), datas([4, 5]));
    h.send(ms(201), ack(1 + 3 * MSS));
    assert_eq!(h.info().cwnd, 4 * MSS);
    h.recv(ms(201), datas([6, 7]));
    // RFC 5681 §3.1: "The slow start algorithm is used when cwnd < ssthresh, while the
    // congestion avoidance algorithm is used when cwnd > ssthresh": at cwnd = ssthresh = 4 the
    // next ACK adds SMSS·SMSS/cwnd (eq. 3), a quarter segment, and frees one segment only.
    h.send(ms(300), ack(1 + 4 * MSS));
    assert_eq!(h.info().cwnd, 4 * MSS + MSS * MSS / (4 * MSS));
    h.recv(ms(300), datas([8]));
    assert_eq!(h.info().ca_state, CaState::Open);
    assert_eq!(h.info().delivered, 4 * MSS);
}

// ---------------------------------------------------------------------------------------------
// Fast retransmit (RFC 5681 §3.2)

#[test]
fn fast_retransmit_goes_out_on_the_third_duplicate_ack() {
    let mut h = Harness::sending(6, |_| {});
    // Segment 1 is lost; 2..=6 arrive and each draws a duplicate ACK of 1.
    h.send(ms(100), ack(1));
    assert_eq!(h.info().ca_state, CaState::Disorder);
    h.send(ms(101), ack(1));
    // RFC 5681 §3.2 (without Limited Transmit): the first two duplicate ACKs send nothing.
    h.recv_nothing();
    assert_eq!(h.info().dupacks, 2);
    // RFC 5681 §3.2 step 2: "When the third duplicate ACK is received, a TCP MUST set ssthresh
    // to no more than ... max (FlightSize / 2, 2*SMSS)"; step 3: "The lost segment starting at
    // SND.UNA MUST be retransmitted and cwnd set to ssthresh plus 3*SMSS."
    h.send(ms(102), ack(1));
    h.recv(ms(102), [data(1)]);
    let i = h.info();
    assert_eq!(i.ssthresh, 3 * MSS, "FlightSize 6 segments / 2");
    assert_eq!(i.cwnd, 3 * MSS + 3 * MSS);
    assert_eq!(i.ca_state, CaState::Recovery);
    assert_eq!((i.retrans, i.fast_retransmits), (1, 1));
    // RFC 5681 §3.2 step 4: each further duplicate ACK inflates cwnd by SMSS; one new segment
    // goes out once cwnd exceeds the 6 outstanding.
    h.send(ms(103), ack(1));
    assert_eq!(h.info().cwnd, 7 * MSS);
    h.recv(ms(103), [data(7)]);
}

// ---------------------------------------------------------------------------------------------
// NewReno's partial ACK (RFC 6582 §3.2)

#[test]
fn newreno_partial_ack_deflates_and_retransmits_the_next_hole() {
    // Segments 1 and 3 of 8 are lost.
    let mut h = Harness::sending(8, |_| {});
    for t in 0..3 {
        h.send(ms(100 + t), ack(1));
    }
    h.recv(ms(102), [data(1)]);
    let before = h.info();
    assert_eq!(before.ssthresh, 4 * MSS);
    assert_eq!(before.cwnd, 4 * MSS + 3 * MSS);
    // The retransmitted segment 1 arrives: the ACK covers 1..=2, below recover (9001).
    // RFC 6582 §3.2 step 5: "If this ACK does *not* acknowledge all of the data up to and
    // including recover, then this is a partial ACK. In this case, retransmit the first
    // unacknowledged segment. Deflate the congestion window by the amount of new data
    // acknowledged by the Cumulative Acknowledgment field. If the partial ACK acknowledges at
    // least one SMSS of new data, then add back SMSS bytes to the congestion window. ... Do not
    // exit the fast recovery procedure."
    h.send(ms(200), ack(1 + 2 * MSS));
    h.recv(ms(200), [data(3)]);
    let i = h.info();
    assert_eq!(i.cwnd, before.cwnd - 2 * MSS + MSS);
    assert_eq!(i.ca_state, CaState::Recovery);
    assert_eq!(i.snd_una, 1 + 2 * MSS);
    // RFC 6582 §3.2 step 5 also: "reset the retransmit timer ... only for the first partial
    // ACK" (the Impatient variant, RFC 6582 §4): the timer restarts one RTO from now.
    assert_eq!(h.deadline(TimerKind::Rto), Some(ms(200) + SEC));
    // RFC 6582 §3.2 step 3 (full acknowledgment): ACK of everything up to recover ends recovery
    // with cwnd = min(ssthresh, max(FlightSize, SMSS) + SMSS).
    h.send(ms(300), ack(1 + 8 * MSS));
    let i = h.info();
    assert_eq!(i.ca_state, CaState::Open);
    assert_eq!(i.cwnd, 2 * MSS);
    h.recv(ms(300), datas([9, 10]));
}

// ---------------------------------------------------------------------------------------------
// Retransmission timeout (RFC 6298 §5, RFC 5681 §3.1)

#[test]
fn retransmission_timeout_sets_cwnd_to_one_segment() {
    let mut h = Harness::sending(4, |_| {});
    // RFC 6298 §2.1 / §5.1: the timer runs with the initial RTO (1 s) from the first send.
    assert_eq!(h.info().rto, SEC);
    assert_eq!(h.deadline(TimerKind::Rto), Some(SEC));
    h.advance_to(SEC - 1);
    h.recv_nothing();
    // RFC 6298 §5.4: "Retransmit the earliest segment that has not been acknowledged".
    h.recv(SEC, [data(1)]);
    let i = h.info();
    // RFC 5681 §3.1: "upon a timeout cwnd MUST be set to no more than the loss window, LW,
    // which equals 1 full-sized segment"; eq. 4: ssthresh = max(FlightSize / 2, 2*SMSS).
    assert_eq!(i.cwnd, MSS);
    assert_eq!(i.cwnd_segs(), 1);
    assert_eq!(i.ssthresh, 2 * MSS);
    assert_eq!(i.ca_state, CaState::Loss);
    assert_eq!((i.timeouts, i.retrans), (1, 1));
    // RFC 6298 §5.5: "back off the timer": the RTO doubles, §5.6: restarted from now.
    assert_eq!(i.rto, 2 * SEC);
    assert_eq!(h.deadline(TimerKind::Rto), Some(3 * SEC));
    // RFC 6298 §5.7 is about a lost SYN; here, the ACK of the retransmission leaves the loss
    // window in slow start: cwnd 2, go-back-N resends 2 and 3.
    h.send(SEC + ms(100), ack(1 + MSS));
    assert_eq!(h.info().cwnd, 2 * MSS);
    h.recv(SEC + ms(100), datas([2, 3]));
}

// ---------------------------------------------------------------------------------------------
// Delayed ACKs (RFC 1122 §4.2.3.2, RFC 5681 §4.2)

#[test]
fn delayed_ack_timer_acknowledges_a_lone_segment() {
    let mut h = Harness::established(|_| {});
    // The peer's first data segment.
    h.send(ms(50), seg!(seq = 1, len = 1000));
    assert_eq!(h.info().rcv_nxt, 1 + MSS);
    assert_eq!(h.info().bytes_received, MSS);
    // RFC 1122 §4.2.3.2: "A TCP SHOULD implement a delayed ACK, but an ACK should not be
    // excessively delayed; in particular, the delay MUST be less than 0.5 seconds."
    h.recv_nothing();
    assert_eq!(h.deadline(TimerKind::DelAck), Some(ms(250)));
    h.advance_to(ms(249));
    h.recv_nothing();
    h.recv(ms(250), [seg!(ack = 1 + MSS)]);
    assert_eq!(h.deadline(TimerKind::DelAck), None);
    // RFC 1122 §4.2.3.2: "in a stream of full-sized segments there SHOULD be an ACK for at
    // least every second segment" (RFC 5681 §4.2): the second segment is acknowledged at once.
    h.send(ms(300), seg!(seq = 1 + MSS, len = 1000));
    h.recv_nothing();
    h.send(ms(310), seg!(seq = 1 + 2 * MSS, len = 1000));
    h.recv(ms(310), [seg!(ack = 1 + 3 * MSS)]);
    assert_eq!(h.deadline(TimerKind::DelAck), None);
}

// ---------------------------------------------------------------------------------------------
// info() through a connection's life

#[test]
fn info_reports_the_rfc_793_states_of_a_handshake_and_close() {
    let mut c = harness::cfg();
    c.handshake = true;
    c.fin = true;
    let mut h = Harness::client(c);
    assert_eq!(h.info().state, TcpState::SynSent);
    let syn = h.take_sent();
    assert_eq!(syn.len(), 1);
    h.send(ms(100), seg!(ack = 1, ..harness::SYNACK));
    assert_eq!(h.info().state, TcpState::Established);
    // Nothing written: the handshake's third segment is a pure ACK of the SYN-ACK.
    h.recv(ms(100), [seg!(ack = 1)]);
    h.write(ms(100), MSS);
    h.close(ms(100));
    h.recv(ms(100), [seg!(ack = 1, ..DATA), seg!(seq = 1 + MSS, ack = 1, ..harness::FIN)]);
    assert_eq!(h.info().state, TcpState::FinWait1);
    h.send(ms(200), seg!(ack = 2 + MSS, seq = 1));
    assert_eq!(h.info().state, TcpState::FinWait2);
    h.send(ms(210), seg!(ack = 2 + MSS, seq = 1, ..harness::FIN));
    assert_eq!(h.info().state, TcpState::Closed);
    assert_eq!(h.info().min_rtt, Some(ms(100)));
}

// ---------------------------------------------------------------------------------------------
// Moved from tcp_packet.rs, where they drove a bare sender or receiver: the same assertions on a
// whole connection.

/// The peer's data segment `k` (1-based).
fn peer_data(k: u64) -> Seg {
    seg!(seq = 1 + (k - 1) * MSS, ..DATA)
}

#[test]
fn slow_start_adds_one_mss_per_ack() {
    let mut h = Harness::established(|_| {});
    h.write(0, 1 << 40);
    h.recv(0, [data(1)]); // IW = 1 segment
    // RFC 5681 §3.1 eq. 2: each ACK of one segment adds SMSS, so two new segments go out.
    h.send(ms(100), ack(1 + MSS));
    assert_eq!(h.info().cwnd, 2 * MSS);
    h.recv(ms(100), datas([2, 3]));
    h.send(ms(200), ack(1 + 2 * MSS));
    h.recv(ms(200), datas([4, 5]));
    h.send(ms(200), ack(1 + 3 * MSS));
    h.recv(ms(200), datas([6, 7]));
    assert_eq!(h.info().cwnd, 4 * MSS);
    // A cumulative ACK of two segments still adds one SMSS (one ACK, one SMSS: RFC 5681 §3.1).
    h.send(ms(300), ack(1 + 5 * MSS));
    assert_eq!(h.info().cwnd, 5 * MSS);
    h.recv(ms(300), datas([8, 9, 10]));
}

#[test]
fn reno_inflates_per_dupack_and_deflates_on_new_ack() {
    let mut h = Harness::sending(10, |c| c.variant = Variant::Reno);
    // Segment 1 lost: duplicate ACKs of 1. RFC 5681 §3.2 step 2–3: the third one retransmits
    // segment 1, and that is all that goes out.
    for t in 0..3 {
        h.send(ms(100 + t), ack(1));
    }
    h.recv(ms(102), [data(1)]);
    h.send(ms(103), ack(1));
    h.recv_nothing();
    let base = h.info().cwnd;
    assert_eq!(base, 5000 + 3 * MSS + MSS, "ssthresh 5 + 3 + one more duplicate");
    // RFC 5681 §3.2 step 4: each further duplicate adds one SMSS; new data goes out once cwnd
    // exceeds the 10 segments outstanding.
    h.send(ms(110), ack(1));
    h.send(ms(111), ack(1));
    assert_eq!(h.info().cwnd, base + 2 * MSS);
    h.recv(ms(111), [data(11)]); // cwnd 11 > 10 outstanding: one new segment
    // RFC 5681 §3.2 step 6: the ACK of the retransmission (covering everything) deflates cwnd
    // to ssthresh.
    h.send(ms(200), ack(1 + 11 * MSS));
    assert_eq!(h.info().cwnd, 5000);
    assert_ne!(h.info().ca_state, CaState::Recovery);
}

#[test]
fn reno_partial_ack_leaves_recovery() {
    let mut h = Harness::sending(10, |c| c.variant = Variant::Reno);
    for t in 0..3 {
        h.send(ms(100 + t), ack(1));
    }
    h.recv(ms(102), [data(1)]);
    // RFC 5681 §3.2 step 6 (Reno, no RFC 6582): any ACK of new data, partial or not, ends fast
    // recovery with cwnd = ssthresh.
    h.send(ms(200), ack(1 + 3 * MSS));
    assert_ne!(h.info().ca_state, CaState::Recovery);
    assert_eq!(h.info().cwnd, 5000);
    assert!(h.take_sent().iter().all(|(_, s)| s.seq != data(4).seq), "Reno does not retransmit segment 4 on the partial ACK");
}

#[test]
fn tahoe_returns_to_one_segment_and_slow_starts() {
    let mut h = Harness::sending(8, |c| c.variant = Variant::Tahoe);
    for t in 0..3 {
        h.send(ms(100 + t), ack(1));
    }
    // Tahoe (RFC 5681 §3.2's fast retransmit without fast recovery): cwnd = 1 segment, and
    // one segment goes out: the hole.
    assert_eq!(h.info().cwnd, MSS);
    h.recv(ms(102), [data(1)]);
    assert_ne!(h.info().ca_state, CaState::Recovery, "Tahoe has no fast recovery");
    // More duplicates change nothing.
    h.send(ms(104), ack(1));
    assert_eq!(h.info().cwnd, MSS);
    h.recv_nothing();
    // The ACK of the retransmission: slow start (cwnd 2) from the hole, going back N.
    h.send(ms(200), ack(1 + MSS));
    assert_eq!(h.info().cwnd, 2 * MSS);
    h.recv(ms(200), datas([2, 3])); // go-back-N resends 2 and 3
    assert_eq!(h.info().ssthresh, 4000, "FlightSize 8 / 2");
}

#[test]
fn rto_restarts_on_new_ack_and_stops_when_all_acked() {
    let mut h = Harness::established(|c| c.initial_window = InitialWindow::Segments(2));
    h.write(0, 2 * MSS);
    h.recv(0, datas([1, 2]));
    h.send(ms(100), ack(1 + MSS));
    // RFC 6298 §2.2: first sample 100 ms gives RTO = max(1 s, 100 + 4·50 ms) = 1 s (§2.4's
    // minimum), restarted at the ACK (§5.3).
    assert_eq!(h.info().rto, SEC);
    assert_eq!(h.deadline(TimerKind::Rto), Some(ms(100) + SEC));
    h.send(ms(150), ack(1 + 2 * MSS));
    assert_eq!(h.deadline(TimerKind::Rto), None, "RFC 6298 §5.2: all data acknowledged, timer off");
}

#[test]
fn delayed_ack_every_second_segment() {
    let mut h = Harness::established(|_| {});
    // RFC 1122 §4.2.3.2 / RFC 5681 §4.2: the first segment's ACK is delayed (200 ms here) ...
    h.send(0, peer_data(1));
    h.recv_nothing();
    assert_eq!(h.deadline(TimerKind::DelAck), Some(ms(200)));
    // ... and the second full-sized segment is acknowledged now, covering both.
    h.send(ms(10), peer_data(2));
    h.recv(ms(10), [ack(1 + 2 * MSS)]);
    assert_eq!(h.deadline(TimerKind::DelAck), None);
    h.send(ms(20), peer_data(3));
    h.recv_nothing();
    h.send(ms(30), peer_data(4));
    h.recv(ms(30), [ack(1 + 4 * MSS)]);
}

#[test]
fn out_of_order_and_hole_filling_segments_are_acked_at_once() {
    let mut h = Harness::established(|_| {});
    h.send(0, peer_data(1));
    h.recv_nothing();
    // RFC 5681 §4.2: "an immediate ACK SHOULD be generated when an out-of-order segment arrives"
    // (a duplicate ACK of 1) ...
    h.send(ms(1), peer_data(3));
    h.recv(ms(1), [ack(1 + MSS)]);
    h.send(ms(2), peer_data(4));
    h.recv(ms(2), [ack(1 + MSS)]);
    // ... "and when a segment fills in all or part of a gap".
    h.send(ms(3), peer_data(2));
    h.recv(ms(3), [ack(1 + 4 * MSS)]);
    assert_eq!(h.info().bytes_received, 4 * MSS);
    // A duplicate is acknowledged at once.
    h.send(ms(4), peer_data(2));
    h.recv(ms(4), [ack(1 + 4 * MSS)]);
}

#[test]
fn without_delayed_acks_every_segment_is_acked() {
    let mut h = Harness::established(|c| c.delayed_ack = false);
    for k in 1..=5 {
        h.send(ms(k), peer_data(k));
        h.recv(ms(k), [ack(1 + k * MSS)]);
    }
}

// ---------------------------------------------------------------------------------------------
// Loss detection (tcp/loss/dupthresh.rs): RFC 3042, RFC 5827, RFC 6675 §4

#[test]
fn limited_transmit_sends_one_new_segment_on_each_of_the_first_two_duplicate_acks() {
    let mut h = Harness::sending(8, |c| c.limited_transmit = true);
    // RFC 3042 §2: "a TCP SHOULD send a segment of previously unsent data in response to each of
    // the first two duplicate acknowledgments ... The congestion window (cwnd) MUST NOT be
    // changed when these new segments are transmitted."
    h.send(ms(100), ack(1));
    h.recv(ms(100), [data(9)]);
    assert_eq!(h.info().cwnd, 8 * MSS);
    h.send(ms(101), ack(1));
    h.recv(ms(101), [data(10)]);
    assert_eq!(h.info().cwnd, 8 * MSS);
    // The third duplicate ACK is the fast retransmit, not a third Limited Transmit. RFC 5681
    // §3.2 step 2: "additional data sent in limited transmit MUST NOT be included in this
    // calculation": ssthresh = (10 − 2) segments / 2.
    h.send(ms(102), ack(1));
    h.recv(ms(102), [data(1)]);
    assert_eq!(h.info().ssthresh, 4 * MSS);
    assert_eq!(h.info().ca_state, CaState::Recovery);
}

#[test]
fn limited_transmit_stays_within_the_receivers_window() {
    let mut h = Harness::sending(8, |c| {
        c.limited_transmit = true;
        c.rwnd = Limit::Bytes(Size(8 * MSS));
    });
    // RFC 3042 §2: only "if the receiver's advertised window allows the transmission": eight
    // segments fill the advertised window, so the duplicate ACKs send nothing.
    let wnd = (8 * MSS) as u32;
    h.send(ms(100), seg!(ack = 1, wnd = wnd));
    h.send(ms(101), seg!(ack = 1, wnd = wnd));
    h.recv_nothing();
    h.send(ms(102), seg!(ack = 1, wnd = wnd));
    h.recv(ms(102), [data(1)]);
}

#[test]
fn early_retransmit_lowers_the_threshold_when_no_new_data_can_be_sent() {
    let mut h = Harness::established(|c| {
        c.early_retransmit = true;
        c.initial_window = InitialWindow::Segments(3);
    });
    h.write(0, 3 * MSS);
    h.recv(0, datas([1, 2, 3]));
    // RFC 5827 §3.2: "if the connection cannot send new data ... and oseg < 4, then ER_thresh
    // = oseg − 1": three segments outstanding, so the second duplicate ACK is the signal.
    h.send(ms(100), ack(1));
    h.recv_nothing();
    h.send(ms(101), ack(1));
    h.recv(ms(101), [data(1)]);
    assert_eq!(h.info().ca_state, CaState::Recovery);
    // RFC 5681 eq. 4 is unchanged: max(FlightSize / 2, 2·SMSS).
    assert_eq!(h.info().ssthresh, 2 * MSS);
}

#[test]
fn sack_is_lost_starts_recovery_on_one_ack_reporting_three_segments() {
    let mut h = Harness::sending(6, |c| {
        c.variant = Variant::Sack;
        c.sack = true;
    });
    // RFC 6675 §4 IsLost(1): "more than (DupThresh − 1) * SMSS bytes with sequence numbers
    // greater than SeqNum have been SACKed" — segments 2–4, reported by one ACK; §5 step (2)
    // enters recovery on it, and (4.3) retransmits the first segment.
    h.send(ms(100), seg!(ack = 1, sack = [(1 + MSS, 1 + 4 * MSS)]));
    h.recv(ms(100), [data(1)]);
    assert_eq!(h.info().ca_state, CaState::Recovery);
    assert_eq!(h.info().lost, Some(MSS));
    // (4.2): cwnd = ssthresh = FlightSize / 2 = 3 segments; the pipe (segments 5, 6 and the
    // retransmission) fills it.
    assert_eq!(h.info().cwnd, 3 * MSS);
}

// ---------------------------------------------------------------------------------------------
// The transmit record (tcp/txq.rs)

#[test]
fn the_transmit_record_follows_sends_sacks_acks_and_retransmissions() {
    // Reno reads no delivery samples, so the record is kept on request (a RACK detector or a
    // BBR controller turns it on by itself).
    let mut h = Harness::established(|c| {
        c.variant = Variant::Sack;
        c.sack = true;
        c.initial_window = InitialWindow::Segments(4);
    });
    assert!(h.conn.snd.core.txq.is_empty());
    h.conn.snd.core.keep_transmit_record();
    h.write(0, 1 << 40);
    assert_eq!(h.take_sent().len(), 4);
    let recs = |h: &Harness| h.conn.snd.core.txq.records().map(|r| (r.start, r.end, r.tx, r.sacked, r.lost)).collect::<Vec<_>>();
    assert_eq!(recs(&h), (0..4).map(|k| (1 + k * MSS, 1 + (k + 1) * MSS, 1, false, false)).collect::<Vec<_>>());
    // A SACK of segment 2 marks its record (RFC 8985 §6.1 needs it, the rate sample counts it).
    h.send(ms(100), seg!(ack = 1, sack = [(1 + MSS, 1 + 2 * MSS)]));
    assert!(recs(&h)[1].3 && !recs(&h)[0].3);
    assert_eq!(h.conn.snd.core.txq.delivered(), MSS);
    // The cumulative ACK of 1–2 prunes both records; segment 2 is not delivered twice.
    h.send(ms(101), ack(1 + 2 * MSS));
    let _ = h.take_sent();
    assert_eq!(recs(&h)[0].0, 1 + 2 * MSS);
    assert_eq!(h.conn.snd.core.txq.delivered(), 2 * MSS);
    // The timeout (RFC 6298 §5.4) resends segment 3: its record counts the transmission and is
    // marked lost (RFC 8985 §6.3 / Linux tcp_timeout_mark_lost).
    let rto = h.deadline(TimerKind::Rto).unwrap();
    h.advance_to(rto);
    assert_eq!(h.take_sent()[0].1, data(3));
    let r = h.conn.snd.core.txq.records().next().copied().unwrap();
    assert_eq!((r.start, r.tx, r.lost, r.first_sent, r.last_sent), (1 + 2 * MSS, 2, true, 0, rto));
}
