//! The fq qdisc (`src/net/fq.rs`, Linux `net/sched/sch_fq.c` 6.x as tc-fq(8) documents it),
//! packet by packet through its enqueue and dequeue, then in whole runs: a CUBIC flow leaves at
//! the spacing its own pacing rate gives (`tcp_update_skb_after_send`'s departure stamps, which
//! fq honours), a BBR flow is paced once (by fq, not by fq and its own timer), `flow_limit`
//! drops, and fq keys are checked by key path.
//!
//! Run with `cargo test --release -p tcplab-core --test fq -- --nocapture` to see the numbers.

#[macro_use]
mod harness;

use harness::{Harness, Seg, DATA, MSS};
use tcplab_core::tcp::TimerKind;
use tcplab_core::net::fq::{Deq, FlowKey, Fq, FqPacket, FqSpec, PSCHED_MTU};
use tcplab_core::series::{Series, EVENT_RX, EVENT_TX};
use tcplab_core::units::{Rate, Size, Time, SEC};
use tcplab_core::{run, RunResult, Scenario};

const US: Time = 1_000;
const MS: Time = 1_000_000;

fn key(flow: u32) -> FlowKey {
    FlowKey { flow, epoch: 1, dir: 0, orphan: false }
}

/// A packet of `flow` without a departure stamp (`skb->tstamp` 0) and an unlimited socket rate.
fn pkt(idx: u32, flow: u32, bytes: u32) -> FqPacket {
    FqPacket { idx, bytes, key: key(flow), tstamp: 0, sk_rate: None }
}

/// Dequeue everything, the transmitter taking each packet at once: (time, packet) in order,
/// following the watchdog (`Deq::Wait`) when every flow is throttled.
fn drain(q: &mut Fq, mut now: Time) -> Vec<(Time, u32)> {
    let mut out = Vec::new();
    loop {
        match q.dequeue(now) {
            Deq::Packet(i) => out.push((now, i)),
            Deq::Wait(t) => {
                assert!(t > now, "the watchdog is armed for later");
                now = t;
            }
            Deq::Empty => return out,
        }
    }
}

/// The lengths of the runs of consecutive packets of one flow (packet index / 1000 = flow).
fn runs(order: &[(Time, u32)]) -> Vec<(u32, usize)> {
    let mut r: Vec<(u32, usize)> = Vec::new();
    for &(_, i) in order {
        let f = i / 1000;
        match r.last_mut() {
            Some((g, n)) if *g == f => *n += 1,
            _ => r.push((f, 1)),
        }
    }
    r
}

/// A huge `maxrate` turns off `fq_fastpath_check` ("No @maxrate attribute on this qdisc") while
/// pacing nothing that matters: the flows' round robin shows alone.
fn no_fastpath() -> FqSpec {
    FqSpec { maxrate: Some(Rate(1_000_000_000_000)), ..Default::default() }
}

#[test]
fn defaults_are_tc_fq_s() {
    // fq_init: limit 10000, flow_limit 100, quantum 2·psched_mtu, initial_quantum 10·psched_mtu,
    // low_rate_threshold 550 kbit/s, refill delay 40 ms, horizon 10 s with drop.
    let s = FqSpec::default();
    assert_eq!((s.limit, s.flow_limit), (10_000, 100));
    assert_eq!((s.quantum.0, s.initial_quantum.0), (2 * PSCHED_MTU, 10 * PSCHED_MTU));
    assert_eq!((s.low_rate_threshold.0, s.refill_delay.0, s.horizon.0, s.horizon_drop), (550_000, 40 * MS, 10 * SEC, true));
    assert_eq!((s.maxrate, s.pacing), (None, true));
}

#[test]
fn two_flows_are_served_round_robin_by_quantum_new_flows_first() {
    // fq_dequeue: a flow sends while its credit is positive; spent, it gets a quantum more and
    // goes to the tail of the old flows. New flows (credit initial_quantum = 15140 B) come first.
    let mut q = Fq::new(no_fastpath());
    for i in 0..20 {
        q.enqueue(0, pkt(1000 + i, 1, 1000)).unwrap();
    }
    for i in 0..20 {
        q.enqueue(0, pkt(2000 + i, 2, 1000)).unwrap();
    }
    let order = drain(&mut q, 0);
    // 15140 B of credit: 16 packets of 1000 B (credit 140 > 0 lets the 16th go, −860 after).
    // Then 3028 − 860 = 2168: 3 packets (−832); then 3028 − 832 = 2196: the last one each.
    assert_eq!(runs(&order), vec![(1, 16), (2, 16), (1, 3), (2, 3), (1, 1), (2, 1)]);
    assert!(order.iter().all(|&(t, _)| t < US), "next to no pacing at this maxrate");

    // A flow that arrives while another is old is new: served before it.
    let mut q = Fq::new(no_fastpath());
    for i in 0..20 {
        q.enqueue(0, pkt(1000 + i, 1, 1000)).unwrap();
    }
    for _ in 0..16 {
        assert!(matches!(q.dequeue(0), Deq::Packet(i) if i / 1000 == 1), "flow 1 on its initial quantum");
    }
    // Flow 1's credit is spent (−860) but it heads the new flows still; flow 3 arrives behind
    // it. The next dequeue refills flow 1 and sends it to the old flows: flow 3 goes first.
    q.enqueue(US, pkt(3000, 3, 1000)).unwrap();
    assert_eq!(q.dequeue(US), Deq::Packet(3000), "the new flow first");
    assert!(matches!(q.dequeue(2 * US), Deq::Packet(i) if i / 1000 == 1));
}

#[test]
fn flow_limit_and_limit_drop_and_are_counted() {
    let mut q = Fq::new(FqSpec { flow_limit: 5, limit: 8, ..no_fastpath() });
    let got: Vec<bool> = (0..7).map(|i| q.enqueue(0, pkt(1000 + i, 1, 1000)).is_ok()).collect();
    assert_eq!(got, [true, true, true, true, true, false, false], "flow_limit 5");
    assert_eq!(q.stats.dropped_flow_limit, 2);
    // Another flow still gets in, up to `limit` packets in all.
    let got: Vec<bool> = (0..5).map(|i| q.enqueue(0, pkt(2000 + i, 2, 1000)).is_ok()).collect();
    assert_eq!(got, [true, true, true, false, false], "limit 8");
    assert_eq!((q.stats.dropped_limit, q.qlen), (2, 8));
    assert_eq!(drain(&mut q, 0).len(), 8);
}

#[test]
fn an_idle_qdisc_takes_the_fast_path_for_up_to_eight_packets() {
    // fq_fastpath_check: qdisc empty, or no flow eligible and fewer than 8 in the fast queue.
    let mut q = Fq::new(FqSpec::default());
    for i in 0..10 {
        q.enqueue(0, pkt(1000 + i, 1, 1000)).unwrap();
    }
    assert_eq!(q.stats.fastpath_packets, 8);
    assert_eq!(q.stats.flows, 1, "the 9th and 10th go to the flow");
    let order: Vec<u32> = drain(&mut q, 0).into_iter().map(|(_, i)| i).collect();
    assert_eq!(order, (1000..1010).collect::<Vec<_>>(), "the fast queue first, in order");
    // maxrate off the fast path.
    let mut q = Fq::new(FqSpec { maxrate: Some(Rate(8_000_000)), ..Default::default() });
    q.enqueue(0, pkt(1, 1, 1000)).unwrap();
    assert_eq!(q.stats.fastpath_packets, 0);
}

#[test]
fn maxrate_paces_once_the_credit_is_spent_a_quantum_at_a_time() {
    // fq_dequeue, a packet without a departure stamp: rate = maxrate (8 Mb/s = 1 MB/s), above
    // low_rate_threshold, so plen = max(plen, quantum) and no delay while the flow has credit.
    // The initial quantum goes at once (16 packets); then each refill of a quantum (3 packets
    // of 1000 B) leaves together, quantum/rate = 3028 µs after the last.
    let mut q = Fq::new(FqSpec { maxrate: Some(Rate(8_000_000)), ..Default::default() });
    for i in 0..28 {
        q.enqueue(0, pkt(1000 + i, 1, 1000)).unwrap();
    }
    let times: Vec<Time> = drain(&mut q, 0).into_iter().map(|(t, _)| t).collect();
    let step = 3028 * SEC / 1_000_000;
    let mut want = vec![0; 16];
    for k in 1..=4 {
        want.extend([k * step; 3]);
    }
    assert_eq!(times, want);
    assert!(q.stats.throttled >= 4);
}

#[test]
fn below_low_rate_threshold_a_flow_sends_one_packet_per_len_over_rate() {
    // rate ≤ low_rate_threshold (550 kbit/s): the credit is zeroed after every packet and the
    // packet's own length sets the delay: 1000 B at 400 kb/s (50 kB/s) = 20 ms apart, from the
    // first packet on (no initial-quantum burst).
    let mut q = Fq::new(FqSpec { maxrate: Some(Rate(400_000)), ..Default::default() });
    for i in 0..5 {
        q.enqueue(0, pkt(1000 + i, 1, 1000)).unwrap();
    }
    let times: Vec<Time> = drain(&mut q, 0).into_iter().map(|(t, _)| t).collect();
    assert_eq!(times, vec![0, 20 * MS, 40 * MS, 60 * MS, 80 * MS]);
}

#[test]
fn a_socket_rate_paces_a_packet_without_a_departure_stamp() {
    // `if (skb->sk) rate = min(sk_pacing_rate, rate)`: a socket at 1 MB/s, no maxrate.
    let mut q = Fq::new(FqSpec::default());
    // Keep the fast path out: the first packets go there while fq is idle.
    for i in 0..8 {
        q.enqueue(0, FqPacket { sk_rate: Some(1_000_000), ..pkt(i, 9, 100) }).unwrap();
    }
    for i in 0..22 {
        q.enqueue(0, FqPacket { sk_rate: Some(1_000_000), ..pkt(1000 + i, 1, 1000) }).unwrap();
    }
    let times: Vec<Time> = drain(&mut q, 0).into_iter().filter(|&(_, i)| i >= 1000).map(|(t, _)| t).collect();
    let step = 3028 * SEC / 1_000_000;
    assert_eq!(times[..16], [0; 16]);
    assert_eq!(times[16..19], [step; 3]);
    assert_eq!(times[19..22], [2 * step; 3]);
    // An orphan (forwarded, no socket) is not paced by a socket's rate.
    let mut q = Fq::new(FqSpec::default());
    for i in 0..30 {
        q.enqueue(0, FqPacket { key: FlowKey { orphan: true, ..key(1) }, sk_rate: Some(1_000), ..pkt(i, 1, 1000) }).unwrap();
    }
    assert!(drain(&mut q, 0).iter().all(|&(t, _)| t == 0));
}

#[test]
fn departure_stamps_are_honoured_per_flow_whatever_the_credit() {
    // 6.x: TCP stamps every skb (`skb->tstamp` = tcp_wstamp_ns); fq holds it until then
    // (time_next_packet = max(time_to_send, f->time_next_packet)) and, without maxrate, adds
    // nothing of its own. Two flows: each leaves at its own stamps, interleaved in time.
    let mut q = Fq::new(FqSpec::default());
    for i in 0..4u32 {
        q.enqueue(0, FqPacket { tstamp: (1 + i as Time) * MS, ..pkt(1000 + i, 1, 1500) }).unwrap();
        q.enqueue(0, FqPacket { tstamp: MS / 2 + (1 + i as Time) * MS, ..pkt(2000 + i, 2, 1500) }).unwrap();
    }
    assert_eq!(q.stats.fastpath_packets, 0, "stamped for later: no fast path");
    let got = drain(&mut q, 0);
    let want: Vec<(Time, u32)> = (0..4u32).flat_map(|i| [((1 + i as Time) * MS, 1000 + i), (MS / 2 + (1 + i as Time) * MS, 2000 + i)]).collect();
    assert_eq!(got, want);
    // A stamp beyond the horizon (10 s) is dropped.
    assert!(q.enqueue(0, FqPacket { tstamp: 11 * SEC, ..pkt(5, 1, 100) }).is_err());
    assert_eq!(q.stats.dropped_horizon, 1);
}

#[test]
fn a_stamped_packet_is_paced_by_maxrate_too() {
    // fq_dequeue: "If EDT time was provided for this skb, we need to update f->time_next_packet
    // only if this qdisc enforces a flow max rate": len/maxrate after each (no quantum, no
    // credit burst), and never before the packet's own stamp.
    let t0 = 5 * MS;
    let mut q = Fq::new(FqSpec { maxrate: Some(Rate(8_000_000)), ..Default::default() });
    for i in 0..4u32 {
        q.enqueue(t0, FqPacket { tstamp: t0, ..pkt(1000 + i, 1, 1000) }).unwrap();
    }
    // A later stamp wins over the rate: the fifth may leave only at t0 + 10 ms.
    q.enqueue(t0, FqPacket { tstamp: t0 + 10 * MS, ..pkt(1004, 1, 1000) }).unwrap();
    let times: Vec<Time> = drain(&mut q, t0).into_iter().map(|(t, _)| t - t0).collect();
    assert_eq!(times, vec![0, MS, 2 * MS, 3 * MS, 10 * MS]);
}

#[test]
fn an_idle_flow_gets_a_quantum_back_after_the_refill_delay() {
    // fq_enqueue: a detached flow idle past flow_refill_delay (40 ms) gets max(credit, quantum).
    // No initial quantum; 8 Mb/s maxrate, so the credit decides what leaves at once.
    let at_return = |idle: Time| -> Vec<Time> {
        let mut q = Fq::new(FqSpec { initial_quantum: Size(0), maxrate: Some(Rate(8_000_000)), ..Default::default() });
        // Flow 1 sends one packet on a refilled quantum: credit 3028 − 1000 = 2028 left.
        q.enqueue(0, pkt(1000, 1, 1000)).unwrap();
        assert_eq!(q.dequeue(0), Deq::Packet(1000));
        // Flow 2's packets make the dequeue pass over flow 1, empty on the old list: detached.
        q.enqueue(US, pkt(2000, 2, 1000)).unwrap();
        q.enqueue(US, pkt(2001, 2, 1000)).unwrap();
        drain(&mut q, US);
        let back = US + idle;
        for i in 0..4 {
            q.enqueue(back, pkt(1001 + i, 1, 1000)).unwrap();
        }
        drain(&mut q, back).into_iter().map(|(t, _)| t - back).collect()
    };
    // Back after 10 ms: its 2028 B of credit send three (28 B is still credit), the fourth
    // waits quantum/rate = 3028 µs.
    assert_eq!(at_return(10 * MS), vec![0, 0, 0, 3028 * US]);
    // Back after 50 ms: raised to a quantum (3028 B), all four go at once.
    assert_eq!(at_return(50 * MS), vec![0, 0, 0, 0]);
}

fn tcp_ack(ack: u64) -> Seg {
    seg!(ack = ack)
}

fn tcp_data(k: u64) -> Seg {
    seg!(seq = 1 + (k - 1) * MSS, ..DATA)
}

#[test]
fn under_fq_tcp_stops_pacing_itself_but_keeps_its_departure_times() {
    // A connection that paces itself (the knob, as BBR's SK_PACING_NEEDED), then fq_classify
    // sets SK_PACING_FQ: tcp_needs_internal_pacing is false, so the gate holds nothing and no
    // pacing timer runs, while tcp_update_skb_after_send still advances tcp_wstamp_ns (the
    // stamps fq holds the segments to).
    let mut h = Harness::sending(20, |c| c.pacing = true);
    h.conn.snd.core.set_pacing_fq();
    let i = h.info();
    assert!(i.paced && i.paced_by_fq);
    h.send(100 * MS, tcp_ack(1 + MSS));
    h.recv(100 * MS, [tcp_data(21), tcp_data(22)]);
    let next = h.conn.snd.core.pacer.next;
    assert!(next > 100 * MS, "the departure time advanced");
    assert_eq!(h.deadline(TimerKind::Pacing), None, "no pacing timer under fq");
    // The next ACK's segments leave TCP at once, though their departure time is later: the
    // same ACK held them with internal pacing (tests/pacing.rs).
    h.send(101 * MS, tcp_ack(1 + 2 * MSS));
    h.recv(101 * MS, [tcp_data(23), tcp_data(24)]);
    assert!(h.conn.snd.core.pacer.next > next);
    assert_eq!(h.conn.snd.core.wstamp(), h.conn.snd.core.pacer.next);
}

// --- Whole runs ---------------------------------------------------------------------------

const L: u64 = 1448;

fn run_toml(text: &str) -> RunResult {
    let s = Scenario::from_toml(text, &[]).unwrap_or_else(|e| panic!("{e}\n{text}"));
    run(&s, 1).unwrap()
}

/// One sender over a single 100 Mb/s link of 100 ms one-way delay (so the pacing rate stays
/// under ~2.9 MB/s and `tcp_tso_autosize` gives two-segment skbs), `queue` on it.
fn single(queue: &str, tcp: &str, bytes: &str) -> String {
    format!(
        r#"
[topology]
kind = "single_link"
rate = "100Mbps"
delay = "100ms"
queue = {queue}
[tcp]
profile = "linux"
{tcp}
[[flows]]
bytes = {bytes}
[[series]]
kind = "segments"
[[series]]
kind = "tcp"
"#
    )
}

fn series(r: &RunResult) -> &Series {
    r.series.as_deref().expect("series recorded")
}

/// First transmissions of data from the sender: (TCP send time, departure from the sender's
/// link, its pacing rate then). The departure is the arrival less the delay and the
/// serialisation (the sender's link is the only queue).
fn data_departures(r: &RunResult) -> Vec<(i64, i64, i64)> {
    let s = series(r);
    let seg = s.segments.as_ref().unwrap();
    let tcp = s.tcp.as_ref().unwrap();
    let rate_at = |t: i64| -> i64 {
        let mut v = -1;
        for i in 0..tcp.time_ns.len() {
            if tcp.dir[i] == 0 && tcp.time_ns[i] <= t {
                v = tcp.pacing_rate[i];
            }
        }
        v
    };
    let link = &r.links[0];
    let delay = (link.delay_s * 1e9).round() as i64;
    let mut out = Vec::new();
    for i in 0..seg.seq.len() {
        if seg.dir[i] != 0 || seg.event[i] != EVENT_TX || seg.len[i] == 0 || seg.tx[i] != 1 {
            continue;
        }
        let rx = (0..seg.seq.len()).find(|&j| seg.dir[j] == 0 && seg.event[j] == EVENT_RX && seg.seq[j] == seg.seq[i] && seg.tx[j] == 1);
        let Some(j) = rx else { continue };
        let wire = seg.len[i] as i64 + 40 + 12;
        let tx_time = (wire * 8 * SEC as i64 + link.rate_bps as i64 - 1) / link.rate_bps as i64;
        out.push((seg.time_ns[i], seg.time_ns[j] - delay - tx_time, rate_at(seg.time_ns[i])));
    }
    out
}

#[test]
fn a_cubic_flow_through_fq_leaves_at_len_over_its_pacing_rate() {
    let r = run_toml(&single("{ kind = \"fq\" }", "cc = \"cubic\"", "200000"));
    let d = data_departures(&r);
    assert!(d.len() > 100, "{}", d.len());
    assert!(r.links[0].fq_flows >= 1 && r.links[0].fq_throttled > 0, "fq held the data: {:?}", r.links[0]);
    // Bursts: the segments TCP sent at one instant. After the first 10 data segments
    // (`tcp_update_skb_after_send` paces from the skb holding the 10th on, as the original fq
    // spared the first ten), each two-segment skb leaves 2·len/rate after the one before:
    // segment k of a burst (skb ⌊k/2⌋) leaves 2·⌊k/2⌋·δ (+ one serialisation for the skb's
    // second) after the burst's first, δ the per-segment len/rate at the rate in force when TCP
    // sent them, less up to δ (half of the first skb's 2δ) when the burst's first skb was sent
    // late ("take into account OS jitter": its len/rate shrinks by up to half, by the time since
    // the departure it was due).
    let mut checked = 0;
    let mut i = 10;
    while i < d.len() {
        let t = d[i].0;
        let burst: Vec<(i64, i64, i64)> = d[i..].iter().take_while(|x| x.0 == t).copied().collect();
        let rate = burst[0].2;
        assert!(rate > 0 && rate < 2048 * L as i64, "two-segment skbs need rate >> 10 < 2·mss, rate {rate}");
        let delta = (L as i64 * SEC as i64) / rate;
        let tx = ((L + 52) * 8 * SEC).div_ceil(100_000_000) as i64;
        for (k, x) in burst.iter().enumerate().skip(1) {
            let off = x.1 - burst[0].1;
            let k = k as i64;
            let skb = 2 * (k / 2) * delta;
            let lo = if k < 2 { 0 } else { skb - delta };
            assert!(off >= lo - 2 && off <= skb + (k % 2) * tx + 2, "burst at {t}: segment {k} left {off} ns after the first; δ {delta} ns");
            checked += 1;
        }
        i += burst.len();
    }
    assert!(checked > 50, "{checked} paced segments checked");
    eprintln!("cubic over fq: {checked} segments left at len/rate of their own pacing rate");

    // The same flow over a FIFO leaves each burst back to back at the link rate.
    let r = run_toml(&single("\"unlimited\"", "cc = \"cubic\"", "200000"));
    let d = data_departures(&r);
    let tx = ((L + 52) * 8 * SEC).div_ceil(100_000_000) as i64;
    let mut longest = 0;
    for b in d.chunk_by(|x, y| x.0 == y.0) {
        assert!(b.windows(2).all(|w| w[1].1 - w[0].1 == tx), "unpaced: a burst leaves back to back");
        longest = longest.max(b.len());
    }
    assert!(longest > 2, "bursts of {longest}");
}

/// Departure gaps at skb boundaries (longer than one serialisation) after the first 10 data
/// segments, and the span from the 10th to the last departure.
fn paced_gaps(r: &RunResult) -> (Vec<i64>, i64) {
    let mut d: Vec<i64> = data_departures(r).into_iter().map(|x| x.1).collect();
    d.sort();
    let tx = ((L + 52) * 8 * SEC).div_ceil(100_000_000) as i64;
    let gaps: Vec<i64> = d[10..].windows(2).map(|w| w[1] - w[0]).filter(|&g| g > tx).collect();
    (gaps, d[d.len() - 1] - d[10])
}

#[test]
fn a_bbr_flow_over_fq_is_paced_once() {
    // BBR asks for pacing (SK_PACING_NEEDED). Alone it paces itself (the pacing timer); over fq,
    // fq_classify sets SK_PACING_FQ, tcp_needs_internal_pacing is false and fq alone holds each
    // skb until its departure stamp: the same spacing, not fq's on top of TCP's.
    let internal = run_toml(&single("\"unlimited\"", "cc = \"bbr\"", "300000"));
    let fq = run_toml(&single("{ kind = \"fq\" }", "cc = \"bbr\"", "300000"));
    let (gi, si) = paced_gaps(&internal);
    let (gf, sf) = paced_gaps(&fq);
    let mean = |g: &[i64]| g.iter().sum::<i64>() as f64 / g.len() as f64;
    eprintln!("bbr internal pacing: {} gaps, mean {:.0} ns, span {si} ns; over fq: {} gaps, mean {:.0} ns, span {sf} ns", gi.len(), mean(&gi), gf.len(), mean(&gf));
    let ratio = sf as f64 / si as f64;
    assert!((0.85..1.15).contains(&ratio), "span over fq / span paced internally = {ratio:.3}");
    let ratio = mean(&gf) / mean(&gi);
    assert!((0.85..1.15).contains(&ratio), "mean skb gap over fq / internal = {ratio:.3}");
    // Over fq the sender hands skbs over at once (no pacing timer holds them): more segments
    // leave TCP at one instant than when it paces itself.
    let per_instant = |r: &RunResult| {
        let d = data_departures(r);
        d.len() as f64 / d.chunk_by(|x, y| x.0 == y.0).count() as f64
    };
    assert!(per_instant(&fq) > per_instant(&internal), "{} vs {}", per_instant(&fq), per_instant(&internal));
    assert!(fq.links[0].fq_throttled > 0);
}

#[test]
fn flow_limit_drops_a_burst_in_a_run() {
    // An initial window of 40 segments (under the receiver's first window of 64 KB) into fq
    // with flow_limit 20, at one instant, behind the pure ACK of the SYN-ACK (linux's
    // tcp_send_ack), which goes to the idle link; fq_fastpath_check lets 8 segments into the fast
    // queue (nothing else held, fewer than 8 there); the rest go to the flow, which holds 20:
    // 40 − 8 − 20 = 12 dropped.
    let text = single("{ fq = { flow_limit = 20 } }", "cc = \"cubic\"\ninitial_window = 40", "57920");
    let r = run_toml(&text);
    let l = &r.links[0];
    assert_eq!(l.fq_dropped_flow_limit, 12, "{l:?}");
    assert_eq!((l.dropped_queue, l.max_queue_pkts), (12, 28));
    assert_eq!(r.connections[0].bytes_delivered, 57920, "recovered");
}

#[test]
fn bad_fq_keys_are_refused_by_key_path() {
    let err = |queue: &str| Scenario::from_toml(&single(queue, "", "1000"), &[]).unwrap_err();
    let e = err("{ kind = \"fq\", fq = { quantom = 3000 } }");
    assert_eq!(e.path, "topology.queue.fq.quantom", "{e}");
    assert!(e.message.contains("unknown field"), "{e}");
    let e = err("{ fq = { quantum = 0 } }");
    assert_eq!(e.path, "topology.queue.fq.quantum", "{e}");
    let e = err("{ fq = { maxrate = \"fast\" } }");
    assert_eq!(e.path, "topology.queue.fq.maxrate", "{e}");
    let e = err("{ kind = \"fq\", packets = 100 }");
    assert_eq!(e.path, "topology.queue", "{e}");
    assert!(e.message.contains("`packets` does not apply to kind = \"fq\""), "{e}");
    let e = err("{ kind = \"red\", fq = { limit = 10 } }");
    assert!(e.message.contains("needs kind = \"fq\""), "{e}");

    // fq on a direction that leaves a router: the dumbbell's bottleneck.
    let dumbbell = |key: &str| {
        format!(
            "[topology]\nkind = \"dumbbell\"\npairs = 1\naccess_rate = \"100Mbps\"\naccess_delay = \"1ms\"\nbottleneck_rate = \"10Mbps\"\nbottleneck_delay = \"10ms\"\n{key} = {{ kind = \"fq\" }}\n[[flows]]\nfrom = \"s1\"\nto = \"r1\"\nbytes = 1000\n"
        )
    };
    let e = Scenario::from_toml(&dumbbell("queue"), &[]).unwrap_err();
    assert_eq!(e.path, "topology.queue", "{e}");
    assert!(e.message.contains("leaves \"left\", which runs no flow or application"), "{e}");
    let e = Scenario::from_toml(&dumbbell("access_queue"), &[]).unwrap_err();
    assert_eq!(e.path, "topology.access_queue", "{e}");
    // A custom link: fq where it leaves the host, a FIFO back from the router: accepted; fq on
    // both directions (no reverse_queue) is refused at the reverse direction's key.
    let custom = |queues: &str| {
        format!(
            "[topology]\nkind = \"custom\"\nnodes = [\"h\", \"r\", \"d\"]\nlinks = [\n {{ a = \"h\", b = \"r\", rate = \"10Mbps\", delay = \"1ms\", {queues} }},\n {{ a = \"r\", b = \"d\", rate = \"10Mbps\", delay = \"1ms\" }},\n]\n[[flows]]\nfrom = \"h\"\nto = \"d\"\nbytes = 1000\n"
        )
    };
    assert!(Scenario::from_toml(&custom("queue = { kind = \"fq\" }, reverse_queue = 100"), &[]).is_ok());
    let e = Scenario::from_toml(&custom("queue = { kind = \"fq\" }"), &[]).unwrap_err();
    assert_eq!(e.path, "topology.links[0].queue", "{e}");
    assert!(e.message.contains("r->h") && e.message.contains("reverse_queue"), "{e}");
    let e = Scenario::from_toml(&custom("queue = 100, reverse_queue = { kind = \"fq\" }"), &[]).unwrap_err();
    assert_eq!(e.path, "topology.links[0].reverse_queue", "{e}");
}
