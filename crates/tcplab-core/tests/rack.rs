//! RACK-TLP and Linux's recovery state machine (`loss = "rack"`, `tlp`, `variant = "sack"`):
//! packet-level tests on the connection harness, each citing the kernel function (Linux 6.x,
//! net/ipv4/tcp_recovery.c, tcp_input.c, tcp_output.c) and the RFC 8985 section it checks; and a
//! whole run of the `linux6` profile with a tail drop.

#[macro_use]
mod harness;

use harness::{ack, blk, data, Harness, MSS, SYNACK};
use tcplab_core::tcp::config::LossModel;
use tcplab_core::tcp::{CaState, TcpConfig, TimerKind, Variant};
use tcplab_core::units::{Time, MS};
use tcplab_core::{run, Scenario};

fn ms(x: u64) -> Time {
    x * MS
}

/// A RACK connection after a handshake with a 100 ms round trip (the SYN-ACK's sample seeds
/// SRTT = min_rtt = 100 ms; RTO = 1 s, the `rfc` profile's minimum), with `iw` segments sent at
/// 100 ms. SACK on, Reno's window arithmetic, no delayed ACKs involved (the peer is scripted).
fn rack(iw: u32, bytes: u64, knobs: impl FnOnce(&mut TcpConfig)) -> Harness {
    rack_with_peer(iw, bytes, true, knobs)
}

/// `rack` with a peer that agrees to SACK or not (`peer_sack`).
fn rack_with_peer(iw: u32, bytes: u64, peer_sack: bool, knobs: impl FnOnce(&mut TcpConfig)) -> Harness {
    Harness::rack_client(iw, bytes, peer_sack, knobs)
}

fn stats(h: &Harness) -> tcplab_core::tcp::ConnStats {
    h.conn.snd.core.stats.clone()
}

#[test]
fn rack_marks_lost_once_a_later_segment_is_sacked_and_rtt_plus_reo_wnd_has_passed() {
    let mut h = rack(10, 1 << 30, |_| {});
    // Segment 2 SACKed at 200 ms, segment 1 not: RACK.xmit_ts = 100 ms, RACK.rtt = 100 ms
    // (tcp_rack_advance, RFC 8985 §6.2 step 2). One segment SACKed, no reordering seen:
    // reo_wnd = min_rtt/4 = 25 ms (tcp_rack_reo_wnd, §6.2 step 4). Segment 1 is lost only at
    // 100 + 100 + 25 = 225 ms (tcp_rack_detect_loss, §6.2 step 5): not yet.
    h.send(ms(200), ack(1, &[blk(2, 2)]));
    assert_eq!(h.info().lost, Some(0), "not lost before RACK.rtt + reo_wnd");
    assert_eq!(h.info().ca_state, CaState::Disorder);
    // In Disorder, in_flight = packets_out − sacked_out (tcp_packets_in_flight) leaves room for
    // one new segment in cwnd 10.
    h.recv(ms(200), [data(11)]);
    // tcp_rack_mark_lost: the reordering timer at usecs_to_jiffies(remaining + TCP_TIMEOUT_MIN_US)
    // = 25 + 2 ms (no jiffies in this profile: exact), on the one retransmission timer
    // (ICSK_TIME_REO_TIMEOUT).
    assert_eq!(h.deadline(TimerKind::Rto), Some(ms(227)));
    h.advance_to(ms(226));
    h.recv_nothing();
    // tcp_rack_reo_timeout: segment 1 is lost now; tcp_enter_recovery, and
    // tcp_xmit_retransmit_queue resends it (the first retransmission of a recovery goes whatever
    // the cut window: tcp_cwnd_reduction's sndcnt ≥ 1 while prr_out is 0).
    h.recv(ms(227), [data(1)]);
    let i = h.info();
    assert_eq!(i.ca_state, CaState::Recovery);
    assert_eq!(i.lost, Some(MSS));
    let st = stats(&h);
    assert_eq!((st.reo_timeouts, st.rack_marked, st.fast_retransmits, st.timeouts), (1, 1, 1, 0));
    // RFC 5681 eq. 4 (Reno's ssthresh, FlightSize 11 segments) and cwnd = ssthresh after this
    // first retransmission (the Reduction's first implementation: no PRR).
    assert_eq!(i.ssthresh, 5500);
    // The retransmission is SACKed at 327 ms and the rest acknowledged: recovery ends at
    // high_seq (snd_nxt at entry, segment 12's start) with cwnd = ssthresh
    // (tcp_end_cwnd_reduction), and the same ACK, now outside the reduction, grows it by what it
    // newly delivered (tcp_ack: tcp_fastretrans_alert, then tcp_cong_control), here by this
    // configuration's Reno: 5500 + 1000²/5500 = 5681 (RFC 5681 eq. 3).
    h.send(ms(327), ack(12, &[]));
    let i = h.info();
    assert_eq!(i.ca_state, CaState::Open);
    assert_eq!(i.ssthresh, 5500);
    assert_eq!(i.cwnd, 5681);
}

#[test]
fn rack_marks_lost_on_the_ack_itself_when_rtt_plus_reo_wnd_has_already_passed() {
    let mut h = rack(10, 1 << 30, |_| {});
    // The SACK of segment 2 arrives at 230 ms: RACK.rtt = 130 ms and segment 1, sent with it at
    // 100 ms, waited 130 ms ≥ RACK.rtt + reo_wnd − 0? No: remaining = 130 + 25 − 130 > 0. The
    // rule compares with the newest delivered segment's RTT, so a segment sent at the same time
    // is lost only after reo_wnd more: 255 ms.
    h.send(ms(230), ack(1, &[blk(2, 2)]));
    h.recv(ms(230), [data(11)]);
    assert_eq!(h.info().lost, Some(0));
    assert_eq!(h.deadline(TimerKind::Rto), Some(ms(257)));
    // Three segments SACKed: reo_wnd = 0 (tcp_rack_reo_wnd: "be aggressive ... starting the
    // recovery by DUPACK threshold"), so segment 1 is lost on this ACK, no timer.
    h.send(ms(240), ack(1, &[blk(2, 4)]));
    h.recv(ms(240), [data(1)]);
    assert_eq!(h.info().ca_state, CaState::Recovery);
    assert_eq!(stats(&h).reo_timeouts, 0);
}

#[test]
fn reo_wnd_is_zero_at_three_sacks_until_reordering_is_seen() {
    // Without reordering: three segments SACKed, RACK.rtt 100 ms, segment 1 sent 100 ms ago is
    // lost at once (reo_wnd 0).
    let mut a = rack(10, 1 << 30, |_| {});
    a.send(ms(200), ack(1, &[blk(2, 4)]));
    a.recv(ms(200), [data(1)]);
    assert_eq!(a.info().ca_state, CaState::Recovery);

    // With reordering: segment 3 arrives before segment 2 (SACKed at 200 ms), then segments 1 and
    // 2 (cumulatively at 201 ms): segment 2 was never retransmitted and lies below the highest
    // SACKed sequence, so reordering is seen (tcp_check_sack_reordering, tp->reord_seen) and
    // reo_wnd = min_rtt/4 = 25 ms however many segments are SACKed (RFC 8985 §6.2 step 4).
    let mut b = rack(10, 1 << 30, |_| {});
    b.send(ms(200), ack(1, &[blk(3, 3)]));
    b.send(ms(201), ack(4, &[]));
    assert_eq!(b.info().ca_state, CaState::Open);
    b.take_sent();
    // Segments 5..7 SACKed at 300 ms, segment 4 missing: RACK.rtt = 200 ms (segment 7, sent at
    // 100 ms); segment 4 is lost at 100 + 200 + 25 = 325 ms, not now.
    b.send(ms(300), ack(4, &[blk(5, 7)]));
    assert_eq!(b.info().lost, Some(0), "reo_wnd grew after reordering");
    assert_eq!(b.info().ca_state, CaState::Disorder);
    assert_eq!(b.deadline(TimerKind::Rto), Some(ms(327)));
    b.take_sent();
    b.advance_to(ms(327));
    let sent = b.take_sent();
    assert_eq!(sent.first().map(|s| s.1), Some(data(4)), "the reordering timer resends segment 4: {sent:?}");
    assert_eq!(b.info().ca_state, CaState::Recovery);
}

#[test]
fn a_retransmission_sacked_sooner_than_min_rtt_does_not_advance_rack() {
    // RFC 8985 §6.2 step 2 / tcp_rack_advance: "If the sacked packet was retransmitted, it's
    // ambiguous": delivered less than min_rtt after the retransmission, it is taken for the
    // original and RACK does not move.
    let mut h = rack(10, 1 << 30, |_| {});
    h.send(ms(200), ack(1, &[blk(2, 4)]));
    h.recv(ms(200), [data(1)]);
    // Segment 1's original arrives 10 ms after its retransmission left: the cumulative ACK does
    // not advance RACK (xmit_ts stays 100 ms), so segment 5, sent at 100 ms and unSACKed, is
    // not judged against a 10 ms RTT.
    h.send(ms(210), ack(5, &[]));
    assert_eq!(h.info().lost, Some(0));
    assert_eq!(stats(&h).rack_marked, 1);
}

#[test]
fn tlp_sends_new_data_two_srtt_after_the_last_send_and_only_once() {
    let mut h = rack(2, 1 << 30, |c| c.tlp = true);
    // tcp_schedule_loss_probe (RFC 8985 §7.2): PTO = 2·SRTT + TCP_TIMEOUT_MIN (2 ms) with more
    // than one packet out, capped by the RTO (1 s away): 100 + 202 ms.
    assert_eq!(h.deadline(TimerKind::Rto), Some(ms(302)));
    h.advance_to(ms(301));
    h.recv_nothing();
    // tcp_send_loss_probe (§7.3): new data when the receive window allows, whatever cwnd.
    h.recv(ms(302), [data(3)]);
    assert_eq!(stats(&h).tlp_probes, 1);
    // "Reset s.t. tcp_rearm_rto will restart timer from now": the RTO 1 s after the probe; no
    // second probe while the first is outstanding (tlp_high_seq).
    assert_eq!(h.deadline(TimerKind::Rto), Some(ms(1302)));
    h.advance_to(ms(1301));
    h.recv_nothing();
    h.recv(ms(1302), [data(1)]);
    assert_eq!(stats(&h).timeouts, 1);
    assert_eq!(stats(&h).tlp_probes, 1);
}

#[test]
fn tlp_resends_the_last_segment_without_new_data_and_a_repaired_loss_reduces_cwnd() {
    let mut h = rack(10, 2 * MSS, |c| c.tlp = true);
    assert_eq!(h.deadline(TimerKind::Rto), Some(ms(302)));
    // No new data: the highest segment again (tcp_send_loss_probe: skb_rb_last of the
    // retransmission queue).
    h.recv(ms(302), [data(2)]);
    assert_eq!(stats(&h).tlp_probes, 1);
    // Segment 1 and the probe arrive: the ACK reaches tlp_high_seq but not beyond it, so the
    // episode stays open (tcp_process_tlp_ack: "after(ack, tp->tlp_high_seq)").
    h.send(ms(402), ack(3, &[]));
    let before = h.info();
    // More data; its ACK goes beyond the probe's TLP.end_seq without a DSACK (none in this
    // model): a loss was repaired, the window reduced as in CWR (tcp_init_cwnd_reduction,
    // tcp_end_cwnd_reduction: cwnd = ssthresh at once). RFC 8985 §7.4.2.
    h.write(ms(402), MSS);
    h.recv(ms(402), [data(3)]);
    h.send(ms(502), ack(4, &[]));
    let after = h.info();
    assert_eq!(stats(&h).tlp_recoveries, 1);
    assert!(after.cwnd < before.cwnd, "{} then {}", before.cwnd, after.cwnd);
    assert_eq!(after.cwnd, after.ssthresh);
    assert_eq!(after.ssthresh, 2 * MSS, "RFC 5681 eq. 4 floor (nothing outstanding)");
}

#[test]
fn rto_enters_ca_loss_and_retransmits_every_unsacked_segment_in_order() {
    let mut h = rack(6, 1 << 30, |_| {});
    // No ACK at all: the RTO (1 s after the first send) — tcp_enter_loss: every segment lost,
    // cwnd 1, the first resent (tcp_retransmit_timer).
    h.advance_to(ms(1099));
    h.recv_nothing();
    h.recv(ms(1100), [data(1)]);
    assert_eq!(h.info().ca_state, CaState::Loss);
    assert_eq!(h.info().cwnd, MSS);
    // Segment 1's retransmission acknowledged, segment 4's original SACKed: cwnd 2 (slow start);
    // in_flight = packets_out − (sacked_out + lost_out) + retrans_out = 0, so the lost segments
    // go in order, skipping the SACKed one (tcp_xmit_retransmit_queue).
    h.send(ms(1200), ack(2, &[blk(4, 4)]));
    h.recv(ms(1200), [data(2), data(3)]);
    h.send(ms(1300), ack(4, &[blk(4, 4)]));
    // cwnd 3, nothing in flight: 5 and 6 again, then new data (tcp_write_xmit).
    h.recv(ms(1300), [data(5), data(6), data(7)]);
    assert_eq!(h.info().ca_state, CaState::Loss, "until snd_una reaches high_seq");
    h.send(ms(1400), ack(7, &[]));
    assert_eq!(h.info().ca_state, CaState::Open);
    assert_eq!(stats(&h).timeouts, 1);
}

#[test]
fn with_loss_dupthresh_the_sack_recovery_is_rfc_6675_as_before() {
    let mut h = rack(10, 1 << 30, |c| c.loss = LossModel::Dupthresh);
    assert_eq!(h.conn.snd.rec.name(), "sack");
    // The same SACK as in the first test: no reordering timer (the `rfc` profile has no Limited
    // Transmit), nothing is resent until DupThresh.
    h.send(ms(200), ack(1, &[blk(2, 2)]));
    h.recv_nothing();
    assert_eq!(h.deadline(TimerKind::Rto), Some(ms(1100)));
    h.advance_to(ms(300));
    h.recv_nothing();
    let mut r = rack(10, 1 << 30, |_| {});
    assert_eq!(r.conn.snd.rec.name(), "linux");
    r.take_sent();
}

#[test]
fn tlp_requires_rack_and_rack_runs_under_the_sack_variant_only() {
    let mut c = TcpConfig::rfc();
    c.tlp = true;
    assert_eq!(c.validate().unwrap_err().0, "tlp");
    // Another variant (a preset over the linux6 profile) keeps its own recovery and the
    // duplicate-ACK rules.
    let mut c = harness::cfg();
    c.loss = LossModel::Rack;
    c.variant = Variant::Reno;
    c.validate().unwrap();
    assert_eq!(Harness::client(c).conn.snd.rec.name(), "reno");
    let spec: tcplab_core::tcp::TcpSpec = toml::from_str("loss = \"rack\"\ntlp = true").unwrap();
    assert_eq!((spec.loss, spec.tlp), (Some(LossModel::Rack), Some(true)));
    assert!(toml::from_str::<tcplab_core::tcp::TcpSpec>("loss = \"fack\"").is_err());
}

// ---------------------------------------------------------------------------------------------
// A whole run.

fn tail_drop(extra: &str) -> tcplab_core::RunResult {
    let text = format!(
        "[topology]\nkind = \"single_link\"\nrate = \"100Mbps\"\ndelay = \"25ms\"\n[tcp]\nprofile = \"linux6\"\nfin = false\n{extra}\n[[flows]]\nbytes = {}\ndrops = [{{ kind = \"data\", segment = 29 }}, {{ kind = \"data\", segment = 30 }}]\n",
        30 * 1448
    );
    let s = Scenario::from_toml(&text, &[]).unwrap_or_else(|e| panic!("{e}"));
    run(&s, 1).unwrap()
}

#[test]
fn linux6_repairs_a_tail_drop_by_a_loss_probe_not_the_rto() {
    // The last two of 30 segments are dropped. linux6 (RACK-TLP): with two packets out after the
    // last ACK, the probe goes 2·SRTT + 2 ms later and resends segment 30; its SACK lets RACK
    // mark segment 29 lost (fast recovery). Without TLP the RTO (SRTT + ≥ 200 ms) repairs both.
    // (With a single packet out the PTO adds rto_min and meets the RTO: the probe then only
    // saves the window, not time.)
    let with = tail_drop("");
    let without = tail_drop("tlp = false");
    let (w, o) = (&with.connections[0], &without.connections[0]);
    assert_eq!((w.timeouts, w.retransmits, w.fast_retransmits), (0, 2, 1), "{w:?}");
    assert_eq!((o.timeouts, o.retransmits), (1, 2), "{o:?}");
    assert_eq!(w.bytes_delivered, 30 * 1448);
    let end = |r: &tcplab_core::RunResult| r.transfers[0].delivered_s.expect("completed");
    eprintln!("tail drop: TLP {} s, RTO {} s", end(&with), end(&without));
    assert!(end(&with) + 0.05 < end(&without), "TLP {} s, RTO {} s", end(&with), end(&without));
}

/// RACK.rtt is the RTT of the last segment `tcp_rack_advance` is called for (the SACKed ones in
/// sequence order, then the cumulatively acknowledged ones), not the most recently sent one's:
/// an ACK that covers a retransmission (sent late, a short RTT) and an original below the
/// highest SACK (sent early) leaves RACK.xmit_ts at the retransmission and RACK.rtt at the
/// original's. Linux 6.x `tcp_clean_rtx_queue` → `tcp_rack_advance` (net/ipv4/tcp_recovery.c);
/// the case of packetdrill's `prr-ss-ack-below-snd_una`, at a 100 ms round trip.
#[test]
fn rack_rtt_is_the_last_delivered_segments_not_the_newest_ones() {
    let mut h = rack(10, 10 * MSS, |c| c.reduction = tcplab_core::tcp::config::Reduction::Prr);
    // Segments 2, 3 and 9 SACKed at 200 ms: three SACKed, no reordering seen, reo_wnd = 0
    // (tcp_rack_reo_wnd): 1 and 4..8 are lost; Recovery resends segment 1 (PRR's forced first
    // retransmission).
    h.send(ms(200), ack(1, &[blk(2, 2)]));
    h.send(ms(200), ack(1, &[blk(2, 3)]));
    h.send(ms(200), ack(1, &[blk(2, 3), blk(9, 9)]));
    h.recv(ms(200), [data(1)]);
    assert_eq!(h.info().ca_state, CaState::Recovery);
    assert_eq!(h.info().lost, Some(6 * MSS));
    // At 320 ms the ACK of 1..4 (the retransmission of 1, RTT 120 ms; 2 and 3 SACKed before; 4
    // never retransmitted, RTT 220 ms). Segment 4 below the SACKed 9 is reordering
    // (tcp_check_sack_reordering): reo_wnd = min_rtt/4 = 25 ms even in Recovery. RACK.rtt =
    // 220 ms (segment 4's call comes last), RACK.xmit_ts = 200 ms: segment 10 (sent at 100 ms)
    // has 220 + 25 − 220 = 25 ms left and is not lost. Taking the newest segment's RTT
    // (120 ms) would mark it lost on this ACK and take PRR's SafeACK allowance away.
    h.send(ms(320), ack(5, &[blk(9, 9)]));
    assert_eq!(h.info().lost, Some(4 * MSS), "segments 5..8 only");
    // tcp_cwnd_reduction: in_flight = 6 − 1 SACKed − 4 lost = 1 ≤ ssthresh 5; sndcnt =
    // min(5 − 1, max(prr_delivered 3 − prr_out 1, delivered 2) + 1 on a SafeACK) = 3.
    h.recv(ms(320), [data(5), data(6), data(7)]);
}

/// Linux `tcp_cong_control` outside a cwnd reduction: `tcp_may_raise_cwnd` lets a SACK-only ACK
/// grow cwnd only once `tp->reordering` is above `tcp_reordering` (3), and `tcp_cong_avoid` is
/// given what the ACK newly delivered (`tcp_newly_delivered`): a cumulative ACK over segments
/// SACKed before counts only the others. CUBIC's slow start (`tcp_slow_start`: cwnd += acked).
/// The case of packetdrill's `cubic-rack-reo-timeout-retrans-failed-incoming-data` (line 27),
/// at a 100 ms round trip.
#[test]
fn cwnd_grows_by_what_an_ack_newly_delivers() {
    // With Linux's cwnd-limited gate (`cwnd_validation = "linux"`, `tcp_is_cwnd_limited`), whose
    // growth rules these are.
    let mut h = rack(10, 1 << 30, |c| {
        c.cc = tcplab_core::tcp::config::Cc::Cubic;
        c.cwnd_validation = tcplab_core::tcp::config::CwndValidation::Linux;
    });
    let cwnd = |h: &Harness| h.info().cwnd / MSS;
    // Segment 10 SACKed: no reordering seen, a SACK-only ACK (no FLAG_DATA_ACKED): cwnd stays 10;
    // one new segment fits (in_flight 9).
    h.send(ms(200), ack(1, &[blk(10, 10)]));
    assert_eq!(cwnd(&h), 10);
    h.recv(ms(200), [data(11)]);
    // Segment 4 SACKed below 10: reordering 7 (tcp_check_sack_reordering) > 3, so this SACK-only
    // ACK grows cwnd by the one segment it delivered.
    h.send(ms(200), ack(1, &[blk(4, 4), blk(10, 10)]));
    assert_eq!(h.info().reordering, Some(7));
    assert_eq!(cwnd(&h), 11);
    h.recv(ms(200), [data(12), data(13)]);
    // The cumulative ACK of 1..10: 10 segments acknowledged, 8 newly delivered (4 and 10 were
    // SACKed): 11 + 8 = 19, where counting the acknowledged bytes would give 21.
    h.send(ms(200), ack(11, &[]));
    assert_eq!(cwnd(&h), 19);
}

/// The Linux machine (`loss = "rack"`, PRR, `ssthresh_from_cwnd`) with a peer that does not
/// agree to SACK: `iw` segments of `bytes` sent at 100 ms, the handshake's sample SRTT 100 ms.
fn linux_no_sack(iw: u32, bytes: u64) -> Harness {
    rack_with_peer(iw, bytes, false, |c| {
        c.tlp = true;
        c.reduction = tcplab_core::tcp::config::Reduction::Prr;
        c.ssthresh_from_cwnd = true;
        c.fin = true;
        c.fin_with_data = true;
    })
}

#[test]
fn without_sack_linux_counts_duplicates_as_sacked_and_retransmits_the_head_at_the_third() {
    let mut h = linux_no_sack(10, 10 * MSS);
    // tcp_add_reno_sack: each duplicate ACK is a segment SACKed (sacked_out), so in Disorder
    // in_flight = packets_out − sacked_out; with nothing more to send, nothing goes out.
    h.send(ms(200), ack(1, &[]));
    h.send(ms(200), ack(1, &[]));
    assert_eq!(h.info().ca_state, CaState::Disorder);
    h.recv(ms(200), []);
    // The third: tcp_newreno_mark_lost (sacked_out ≥ tp->reordering = 3) marks the head lost,
    // tcp_time_to_recover, tcp_enter_recovery: ssthresh = tcp_reno_ssthresh = 10/2 = 5.
    h.send(ms(200), ack(1, &[]));
    h.recv(ms(200), [data(1)]);
    assert_eq!((h.info().ca_state, h.info().ssthresh), (CaState::Recovery, 5 * MSS));
    // PRR (tcp_cwnd_reduction): in_flight = 10 − 3 − 1 = 6 above ssthresh; sndcnt =
    // ⌈5·1/10⌉ − 0 = 1: cwnd 7, and the retransmission filled it.
    assert_eq!(h.info().cwnd, 7 * MSS);
    // The ACK of everything up to high_seq: tcp_try_undo_recovery holds Recovery for Reno
    // ("until something *above* high_seq is ACKed", RFC 6582's guard), and PRR with nothing in
    // flight gives cwnd = min(ssthresh − 0, ...) = 5 = ssthresh (RFC 9937 §3).
    h.send(ms(300), ack(11, &[]));
    assert_eq!((h.info().ca_state, h.info().cwnd, h.info().ssthresh), (CaState::Recovery, 5 * MSS, 5 * MSS));
    assert_eq!(stats(&h).fast_retransmits, 1);
}

#[test]
fn without_sack_a_partial_ack_in_linux_recovery_marks_the_next_head_lost() {
    // Segments 1 and 5 lost: the other eight each draw a duplicate ACK.
    let mut h = linux_no_sack(10, 10 * MSS);
    for _ in 0..3 {
        h.send(ms(200), ack(1, &[]));
    }
    h.recv(ms(200), [data(1)]);
    for _ in 0..5 {
        h.send(ms(201), ack(1, &[]));
    }
    h.recv(ms(201), []);
    // The retransmission's partial ACK (segments 1-4 acknowledged, 5 still missing): three of
    // the eight duplicates are taken back (tcp_remove_reno_sacks: sacked_out 8 − 3 = 5), and
    // tcp_newreno_mark_lost with FLAG_SND_UNA_ADVANCED in Recovery marks the new head lost:
    // in_flight = 6 − 5 − 1 = 0 under ssthresh 5, so PRR resends it at once.
    h.send(ms(300), ack(5, &[]));
    h.recv(ms(300), [data(5)]);
    assert_eq!(h.info().ca_state, CaState::Recovery);
    // An ACK above high_seq (snd_nxt at entry, 10 001) would end it; everything acknowledged
    // at high_seq holds it (Reno).
    h.send(ms(400), ack(11, &[]));
    assert_eq!(h.info().ca_state, CaState::Recovery);
    assert_eq!(stats(&h).fast_retransmits, 1);
}

#[test]
fn linux_ssthresh_after_a_timeout_halves_cwnd_not_the_flight() {
    // One segment outstanding, cwnd 10: RFC 5681 eq. 4 gives max(FlightSize/2, 2) = 2 segments,
    // Linux's tcp_enter_loss → tcp_reno_ssthresh max(cwnd/2, 2) = 5.
    let mut h = linux_no_sack(10, MSS);
    h.advance_to(ms(2000));
    let sent = h.take_sent();
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!((h.info().ssthresh, h.info().cwnd), (5 * MSS, MSS));
}

#[test]
fn linux_6_sends_a_bare_fin_only_within_cwnd() {
    // Linux ≥ 6.10 `tcp_cwnd_test` has no exemption for the final FIN: with cwnd (10) full of data,
    // a close queues the FIN until an ACK makes room (`fin_with_data`). Older kernels and BSD
    // sent it at once.
    // The harness's connections send no FIN by default: `linux_no_sack` turns it on, gated as
    // Linux 6.10+ gates it (`fin_with_data`, the linux profile's).
    let mut h = linux_no_sack(10, 10 * MSS);
    h.close(ms(110));
    h.recv(ms(110), []);
    h.send(ms(200), ack(2, &[]));
    let sent = h.take_sent();
    assert!(sent.iter().any(|(_, s)| s.flags & tcplab_core::net::FLAG_FIN != 0 && s.seq == 1 + 10 * MSS), "{sent:?}");
    // Without `fin_with_data` (BSD's tcp_output, the RFC profiles) the FIN leaves at the close.
    let mut c = h.conn.snd.core.cfg.as_ref().clone();
    c.fin_with_data = false;
    let mut h = Harness::client(c);
    h.take_sent();
    h.send(ms(100), seg!(ack = 1, sack_permitted = false, ..SYNACK));
    h.write(ms(100), 10 * MSS);
    h.take_sent();
    h.close(ms(110));
    h.recv(ms(110), [seg!(seq = 1 + 10 * MSS, ack = 1, ..harness::FIN)]);
}

/// The ACK that ends Recovery also grows the window by what it newly delivered. Linux `tcp_ack`
/// runs `tcp_fastretrans_alert` first (snd_una ≥ high_seq: `tcp_end_cwnd_reduction` sets cwnd =
/// ssthresh, `tcp_try_undo_recovery` CA_Open), then `tcp_cong_control(sk, ack, delivered, ...)`,
/// which is no longer in a reduction and calls `tcp_cong_avoid` (`tcp_may_raise_cwnd`:
/// FLAG_DATA_ACKED). CUBIC (`bictcp_cong_avoid`) starts its epoch there and counts the ACK's
/// delivered packets in `snd_cwnd_cnt` (`tcp_cong_avoid_ai`).
///
/// Ten segments out at 100 ms; segment 1 acknowledged at 200 ms (slow start: cwnd 11, delay_min
/// 100 ms); segment 2 is lost and everything else sent is SACKed: Recovery with ssthresh
/// ⌊11·717/1024⌋ = 7 and W_max 11 (`cubictcp_recalc_ssthresh`). The ACK of everything delivers
/// the retransmission: 1 packet. CUBIC's epoch: K = cubic_root(2^40/410·(11 − 7)) ≈ 2206
/// (2^-10 s), t = 25 jiffies of delay_min = 102, target = 11 − ⌊410·(2206 − 102)³ / 2^40⌋ =
/// 11 − 3 = 8 > 7, so cnt = 7 / (8 − 7) = 7 (kept while cwnd and the jiffy stay put: the next
/// ACKs come 1 ms apart, and their RTT samples are ignored within a second of the epoch's
/// start). cwnd 8 once 7 packets are counted: the exit ACK's one and six more, where leaving the
/// exit ACK out would take seven.
#[test]
fn the_ack_that_ends_recovery_counts_toward_cubic_growth() {
    let mut h = rack(10, 1 << 30, |c| {
        c.cc = tcplab_core::tcp::config::Cc::Cubic;
        c.cwnd_validation = tcplab_core::tcp::config::CwndValidation::Linux;
        c.reduction = tcplab_core::tcp::config::Reduction::Prr;
    });
    let cwnd = |h: &Harness| h.info().cwnd / MSS;
    let seg_no = |seq: u64| (seq - 1) / MSS + 1;
    h.send(ms(200), ack(2, &[]));
    assert_eq!(cwnd(&h), 11);
    h.recv(ms(200), [data(11), data(12)]);
    // SACKs of everything sent but segment 2, 10 µs apart, until the recovery's retransmission.
    let mut top = 12;
    let mut t = ms(300);
    let mut retransmitted = false;
    for _ in 0..20 {
        h.send(t, ack(2, &[blk(3, top)]));
        for (_, s) in h.take_sent() {
            retransmitted |= s.seq == data(2).seq;
            top = top.max(seg_no(s.seq));
        }
        t += 10_000;
        if retransmitted && h.info().ca_state == CaState::Recovery {
            break;
        }
    }
    assert!(retransmitted);
    assert_eq!(h.info().ssthresh, 7 * MSS);
    // SACK the rest until nothing more goes out.
    loop {
        h.send(t, ack(2, &[blk(3, top)]));
        let before = top;
        for (_, s) in h.take_sent() {
            top = top.max(seg_no(s.seq));
        }
        t += 10_000;
        if top == before {
            break;
        }
    }
    assert_eq!(h.info().ca_state, CaState::Recovery);
    // The retransmission's ACK: everything up to `top`; only segment 2 is newly delivered.
    let t_exit = ms(400);
    h.send(t_exit, ack(top + 1, &[]));
    assert_eq!(h.info().ca_state, CaState::Open);
    assert_eq!(cwnd(&h), 7, "tcp_end_cwnd_reduction: cwnd = ssthresh (cnt 7 > the 1 delivered)");
    let sent = h.take_sent();
    assert_eq!(sent.len(), 7, "a window of new data: {sent:?}");
    // The new segments acknowledged one at a time, 1 ms apart: cwnd 8 on the sixth.
    for i in 1..=6u64 {
        h.send(t_exit + i * ms(1), ack(top + 1 + i, &[]));
        assert_eq!(cwnd(&h), if i < 6 { 7 } else { 8 }, "after ACK {i} past the recovery");
        h.take_sent();
    }
}
