//! D-SACK (RFC 2883, the `dsack` knob) and Linux's undo of a spurious window reduction (the
//! `undo` knob, net/ipv4/tcp_input.c `tcp_try_undo_*`): packet-level tests on the connection
//! harness, each naming the kernel function or RFC section it checks. The receiver's D-SACK
//! blocks first, then the sender: the undo when every retransmission is D-SACKed (after the
//! recovery and during it), after a timeout, and a probe whose D-SACK says it repaired nothing.

#[macro_use]
mod harness;

use harness::{ack, blk, data, Harness, MSS};
use tcplab_core::tcp::{CaState, TcpConfig, TimerKind};
use tcplab_core::units::{Time, MS};

fn ms(x: u64) -> Time {
    x * MS
}

/// A receiver with SACK and D-SACK on (no handshake: SACK in use at once).
fn receiver(dsack: bool) -> Harness {
    Harness::established(|c| {
        c.sack = true;
        c.dsack = dsack;
        c.delayed_ack = false;
    })
}

/// The peer's data segment k (1-based).
fn peer(k: u64) -> harness::Seg {
    seg!(seq = 1 + (k - 1) * MSS, ..harness::DATA)
}

/// RFC 2883 §4 (Linux `tcp_send_dupack` / `tcp_data_queue`: tcp_dsack_set(seq, end_seq)): a
/// segment wholly below RCV.NXT is reported in the first SACK block of the ACK it triggers, once.
#[test]
fn a_duplicate_segment_is_dsacked_in_the_first_block_once() {
    let mut h = receiver(true);
    h.send(ms(1), peer(1));
    h.recv(ms(1), [seg!(ack = 1 + MSS)]);
    h.send(ms(2), peer(1));
    h.recv(ms(2), [seg!(ack = 1 + MSS, sack = [(1, 1 + MSS)])]);
    h.send(ms(3), peer(2));
    h.recv(ms(3), [seg!(ack = 1 + 2 * MSS)]);
    assert_eq!((h.conn.rcv.stats.dsacks_sent, h.conn.rcv.stats.dup_segments), (1, 1));
    // Off (`tcp_dsack = 0`): the duplicate's ACK carries no block.
    let mut h = receiver(false);
    h.send(ms(1), peer(1));
    h.recv(ms(1), [seg!(ack = 1 + MSS)]);
    h.send(ms(2), peer(1));
    h.recv(ms(2), [seg!(ack = 1 + MSS)]);
}

/// RFC 2883 §4.2 (Linux `tcp_data_queue_ofo`, "All the bits are present": tcp_dsack_set(seq,
/// end_seq)): a duplicate of data held above a hole is D-SACKed first, the held range after it;
/// a segment that overlaps RCV.NXT ("Partial packet, seq < rcv_next < end_seq") D-SACKs the
/// part already received.
#[test]
fn an_out_of_order_duplicate_and_a_partial_overlap_are_dsacked() {
    let mut h = receiver(true);
    h.send(ms(1), peer(1));
    h.recv(ms(1), [seg!(ack = 1 + MSS)]);
    h.send(ms(2), peer(3));
    h.recv(ms(2), [ack(2, &[blk(3, 3)])]);
    h.send(ms(3), peer(3));
    h.recv(ms(3), [ack(2, &[blk(3, 3), blk(3, 3)])]);
    // The hole filled by a segment that starts 500 bytes early.
    h.send(ms(4), seg!(seq = 501, len = 1500, ..harness::DATA));
    h.recv(ms(4), [seg!(ack = 1 + 3 * MSS, sack = [(501, 1 + MSS)])]);
}

/// A RACK connection (Linux's recovery state machine) after a handshake with a 100 ms round trip,
/// `iw` segments sent at 100 ms, D-SACK and the undo as `knobs` leave them.
fn rack(iw: u32, bytes: u64, knobs: impl FnOnce(&mut TcpConfig)) -> Harness {
    Harness::rack_client(iw, bytes, true, knobs)
}

fn on(c: &mut TcpConfig) {
    c.dsack = true;
    c.undo = true;
}

fn stats(h: &Harness) -> tcplab_core::tcp::ConnStats {
    h.conn.snd.core.stats.clone()
}

/// Segment 1 only reordered: three SACKs start a recovery (RACK: reo_wnd 0 at three SACKed),
/// its fast retransmission goes, then the original arrives and everything is acknowledged.
fn spurious_fast_retransmit(h: &mut Harness) {
    h.send(ms(200), ack(1, &[blk(2, 4)]));
    h.recv(ms(200), [data(1)]);
    assert_eq!(h.info().ca_state, CaState::Recovery);
    assert_eq!(h.info().ssthresh, 5 * MSS, "RFC 5681 eq. 4: FlightSize 10 segments");
    h.send(ms(210), ack(11, &[]));
}

/// `tcp_try_undo_recovery` cannot undo at the end of the recovery without timestamps
/// (`tcp_packet_delayed`: a retransmission stamped, no TSecr to compare) while the
/// retransmission is unproven: cwnd = ssthresh (`tcp_end_cwnd_reduction`, undo_marker still
/// set). The D-SACK of the retransmission that follows (`tcp_check_dsack`: below the ACK,
/// above undo_marker: undo_retrans 1 → 0) undoes it in Open (`tcp_try_undo_dsack`,
/// `tcp_undo_cwnd_reduction`): cwnd = max(cwnd, prior_cwnd) (`tcp_reno_undo_cwnd`), ssthresh
/// back to `prior_ssthresh` (`tcp_current_ssthresh` at entry: the initial, unbounded one).
#[test]
fn a_dsack_of_the_only_retransmission_undoes_the_reduction_after_the_recovery() {
    let mut h = rack(10, 1 << 30, on);
    let ssthresh0 = h.info().ssthresh;
    spurious_fast_retransmit(&mut h);
    let i = h.info();
    assert_eq!(i.ca_state, CaState::Open);
    assert_eq!(i.ssthresh, 5 * MSS);
    assert!(i.cwnd < 6 * MSS, "cut to ssthresh, grown by one ACK: {}", i.cwnd);
    h.take_sent();
    h.send(ms(220), ack(11, &[blk(1, 1)]));
    let i = h.info();
    assert_eq!((i.cwnd, i.ssthresh), (10 * MSS, ssthresh0));
    assert_eq!((stats(&h).undos, stats(&h).dsacks_received), (1, 1));
    // Without the undo the D-SACK is read (and counted) but the window stays cut.
    let mut h = rack(10, 1 << 30, |c| c.dsack = true);
    spurious_fast_retransmit(&mut h);
    h.send(ms(220), ack(11, &[blk(1, 1)]));
    assert_eq!((h.info().ssthresh, stats(&h).undos, stats(&h).dsacks_received), (5 * MSS, 0, 1));
}

/// The D-SACK arrives before the recovery ends (the ACK of the retransmission's duplicate with
/// the rest still SACKed): `tcp_try_undo_dsack` in Recovery, then `tcp_try_to_open`: the window
/// restored and the state Open, nothing left lost.
#[test]
fn a_dsack_during_the_recovery_undoes_it_and_opens() {
    let mut h = rack(10, 1 << 30, on);
    h.send(ms(200), ack(1, &[blk(2, 4)]));
    h.recv(ms(200), [data(1)]);
    // Segment 1's original reached the receiver: the ACK covers 1..=4, segments 5..=10 are
    // still out; the retransmission's duplicate then D-SACKs segment 1.
    h.send(ms(205), ack(5, &[]));
    assert_eq!(h.info().ca_state, CaState::Recovery);
    h.send(ms(206), ack(5, &[blk(1, 1)]));
    let i = h.info();
    assert_eq!(i.ca_state, CaState::Open);
    assert_eq!(i.cwnd, 10 * MSS);
    assert_eq!(stats(&h).undos, 1);
}

/// A D-SACK of more than the sender retransmitted is ignored (`tcp_dsack_seen`: "Skip the
/// DSACK if dup segs weren't retransmitted by sender", dsack_dups > total_retrans), and so is one
/// larger than the largest window offered ("Dubious DSACK").
#[test]
fn a_dsack_of_data_never_retransmitted_is_ignored() {
    let mut h = rack(10, 1 << 30, on);
    h.send(ms(200), ack(3, &[blk(1, 1)]));
    assert_eq!(stats(&h).dsacks_received, 0);
    h.send(ms(201), ack(3, &[(1, 1 + (1u64 << 40))]));
    assert_eq!(stats(&h).dsacks_received, 0);
}

/// `tcp_process_tlp_ack`: a D-SACK of at most one segment ending at tlp_high_seq
/// (`FLAG_DSACK_TLP`) means "original and TLP probe arrived; no loss": the episode ends and a
/// later ACK beyond the probe reduces nothing. Without the D-SACK block (a receiver that sends
/// none) that ACK reads as a repaired loss. The sender reads D-SACKs whatever its own `dsack`.
#[test]
fn a_dsack_of_the_probe_ends_the_episode_without_a_reduction() {
    for dsack in [true, false] {
        let mut h = rack(10, 2 * MSS, |c| c.tlp = true);
        assert_eq!(h.deadline(TimerKind::Rto), Some(ms(302)));
        h.recv(ms(302), [data(2)]);
        let blocks = if dsack { vec![blk(2, 2)] } else { vec![] };
        h.send(ms(402), ack(3, &blocks));
        let before = h.info().cwnd;
        h.write(ms(402), MSS);
        h.recv(ms(402), [data(3)]);
        h.send(ms(502), ack(4, &[]));
        let i = h.info();
        if dsack {
            assert_eq!(stats(&h).tlp_recoveries, 0);
            assert!(i.cwnd >= before, "{} {}", i.cwnd, before);
        } else {
            assert_eq!(stats(&h).tlp_recoveries, 1);
            assert!(i.cwnd < before, "{} {}", i.cwnd, before);
        }
    }
}

/// A spurious timeout (`tcp_enter_loss`: prior_ssthresh, prior_cwnd, `tcp_init_undo`): the RTO
/// resends segment 1 with cwnd 1; the ACK of the original then covers the whole flight, which
/// ends CA_Loss (no undo without proof: the retransmission is unproven, no timestamps); the
/// D-SACK of the retransmission restores the window (`tcp_try_undo_dsack` in Open).
#[test]
fn a_dsack_undoes_a_spurious_timeout() {
    let mut h = rack(4, 1 << 30, on);
    let ssthresh0 = h.info().ssthresh;
    let rto = h.deadline(TimerKind::Rto).unwrap();
    h.advance_to(rto);
    let sent = h.take_sent();
    assert_eq!(sent.first().map(|(_, s)| s.seq), Some(1), "{sent:?}");
    assert_eq!((stats(&h).timeouts, h.info().ca_state), (1, CaState::Loss));
    h.send(rto + ms(10), ack(5, &[]));
    assert_eq!(h.info().ca_state, CaState::Open);
    assert!(h.info().cwnd < 4 * MSS);
    h.send(rto + ms(20), ack(5, &[blk(1, 1)]));
    let i = h.info();
    assert_eq!((i.cwnd, i.ssthresh, stats(&h).undos), (4 * MSS, ssthresh0, 1));
}

/// F-RTO (RFC 5682 §3.1, SACK-enhanced; Linux `tcp_process_loss` with `tcp_frto` = 2), without
/// timestamps: after the timeout resends segment 1 (cwnd 1, every other segment marked lost), the
/// ACK of that retransmission alone lets two new segments out (step 2.b: `REXMIT_NEW`, cwnd 2
/// after slow start, nothing counted in flight) instead of segments 2 and 3 again. Then either
/// the ACK of never-retransmitted segments 2..=4 shows the timeout spurious (step 3.b,
/// `FLAG_ORIG_SACK_ACKED`: `tcp_try_undo_loss(sk, true)`, cwnd back to its 4 segments before
/// the slow-start growth of that ACK), or a SACK of the new data alone shows the loss real (step
/// 3.a) and the retransmissions go on in order.
#[test]
fn frto_sends_new_data_after_a_timeout_and_undoes_it_when_the_originals_arrive() {
    let after_rto = |frto: bool| {
        let mut h = rack(4, 1 << 30, |c| {
            on(c);
            c.frto = frto;
        });
        let rto = h.deadline(TimerKind::Rto).unwrap();
        h.recv(rto, [data(1)]);
        assert_eq!(h.info().ca_state, CaState::Loss);
        h.send(rto + ms(100), ack(2, &[]));
        (h, rto + ms(100))
    };
    // Without F-RTO: the next lost segments, in order.
    let (mut h, t) = after_rto(false);
    h.recv(t, [data(2), data(3)]);
    // Step 2.b: new data.
    let (mut h, t) = after_rto(true);
    h.recv(t, [data(5), data(6)]);
    h.send(t + ms(100), ack(5, &[]));
    let i = h.info();
    assert_eq!((i.ca_state, stats(&h).undos), (CaState::Open, 1));
    assert!(i.cwnd >= 4 * MSS, "{}", i.cwnd);
    assert!(h.take_sent().iter().all(|(_, s)| s.seq >= 1 + 6 * MSS), "no retransmission after the undo");
    // Step 3.a: the new data SACKed, the hole still there: segment 2 and 3 resent.
    let (mut h, t) = after_rto(true);
    h.recv(t, [data(5), data(6)]);
    h.send(t + ms(100), ack(2, &[blk(5, 6)]));
    assert_eq!((h.info().ca_state, stats(&h).undos), (CaState::Loss, 0));
    h.recv(t + ms(100), [data(2), data(3)]);
}

/// RACK's reordering window follows the D-SACKs (RFC 8985 §6.2 step 4; Linux
/// `tcp_rack_update_reo_wnd`): once reordering has been seen, a D-SACK (of a retransmission RACK
/// made too early) adds a min_rtt/4 step to reo_wnd on the next ACK that delivers data, so the
/// next hole waits twice as long before RACK's timer marks it lost.
#[test]
fn a_dsack_after_reordering_doubles_racks_reordering_window() {
    let mut h = rack(10, 1 << 30, on);
    // Segment 2 SACKed, then segment 1 delivered below it: reordering seen
    // (tcp_check_sack_reordering); reo_wnd = min_rtt/4 = 25 ms from now on.
    h.send(ms(200), ack(1, &[blk(2, 2)]));
    h.take_sent();
    h.send(ms(205), ack(3, &[]));
    h.take_sent();
    // Segment 3 held up: segments 4..=6 SACKed at 210 ms; RACK waits RACK.rtt + 25 ms − 110 ms =
    // 25 ms (+ 2 ms), then resends it: a recovery.
    h.send(ms(210), ack(3, &[blk(4, 6)]));
    h.take_sent();
    assert_eq!(h.deadline(TimerKind::Rto), Some(ms(237)));
    h.advance_to(ms(237));
    assert_eq!(h.info().ca_state, CaState::Recovery);
    h.take_sent();
    // Its original arrives, then the duplicate: everything acknowledged, the retransmission
    // D-SACKed (the undo takes the recovery back).
    h.send(ms(240), ack(11, &[]));
    h.send(ms(241), ack(11, &[blk(3, 3)]));
    assert_eq!(stats(&h).undos, 1);
    h.take_sent();
    // New data went out at 240–241 ms (segments 11..=20). The next ACK that delivers data
    // raises reo_wnd_steps to 2 (its segments were sent after the D-SACK's round began). A
    // later hole: segment 11 held up, 12 SACKed at 345 ms; RACK waits RACK.rtt + reo_wnd −
    // (now − segment 11's send time).
    h.send(ms(345), ack(11, &[blk(12, 12)]));
    // With one step the timer would run in 22 ms (reo_wnd 25 ms, + 2 ms, less the 5 ms segment 11
    // left before RACK's segment); with two, 25 ms later.
    let wait = h.deadline(TimerKind::Rto).unwrap() - ms(345);
    assert_eq!(wait, ms(47), "the timer in {} µs", wait / 1000);
}

/// F-RTO without SACK (the peer refused it; Linux's `tcp_is_reno` branch of `tcp_process_loss`):
/// the ACK of the retransmission alone sends new data; the next ACK of never-retransmitted
/// originals undoes the timeout, as with SACK.
#[test]
fn frto_without_sack_undoes_a_spurious_timeout_on_the_originals_ack() {
    let mut h = Harness::rack_client(4, 1 << 30, false, |c| {
        on(c);
        c.frto = true;
    });
    let rto = h.deadline(TimerKind::Rto).unwrap();
    h.recv(rto, [data(1)]);
    h.send(rto + ms(100), ack(2, &[]));
    h.recv(rto + ms(100), [data(5), data(6)]);
    h.send(rto + ms(200), ack(5, &[]));
    assert_eq!((h.info().ca_state, stats(&h).undos), (CaState::Open, 1));
}
