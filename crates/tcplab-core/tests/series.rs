//! The time-series recorder (`[[series]]`, src/series.rs): its rows agree with the run's own
//! instruments (bytes acknowledged, the time-averaged cwnd, the time-averaged queue, drops,
//! segments and retransmissions sent), record the TCP rules at the exact packets that trigger them
//! (a fast retransmit's window, a timeout's window and backed-off RTO), sample on an exact grid,
//! stop at their row cap, change nothing in the run, and are refused by key when malformed.

use tcplab_core::series::{Series, TcpState, EVENT_RX, EVENT_TX};
use tcplab_core::{run, RunResult, Scenario};

const MSS: u64 = 1000;

fn run_toml(text: &str) -> RunResult {
    let s = Scenario::from_toml(text, &[]).unwrap_or_else(|e| panic!("{e}"));
    run(&s, 1).unwrap()
}

/// A single link of 100 ms RTT; `link` adds keys to the topology, `tcp` to `[tcp]`, `flow` to the
/// flow, `series` is appended.
fn scenario(link: &str, tcp: &str, flow: &str, series: &str) -> String {
    let link = if link.contains("rate") { link.to_string() } else { format!("rate = \"1Gbps\"\n{link}") };
    format!(
        "[topology]\nkind = \"single_link\"\ndelay = \"50ms\"\n{link}\n[tcp]\nmss = {MSS}\ndelayed_ack = false\n{tcp}\n[[flows]]\n{flow}\n{series}"
    )
}

const ALL: &str = "[[series]]\nkind = \"tcp\"\n[[series]]\nkind = \"segments\"\n[[series]]\nkind = \"queue\"\n[[series]]\nkind = \"drops\"\n";

fn series(r: &RunResult) -> &Series {
    r.series.as_deref().expect("series recorded")
}

/// The rows of the tcp table of (conn, dir) as (time ns, state, cwnd, ssthresh, srtt, rto).
fn tcp_rows(s: &Series, conn: u32, dir: u8) -> Vec<(i64, u8, u64, u64, i64, i64)> {
    let c = s.tcp.as_ref().unwrap();
    (0..c.time_ns.len())
        .filter(|&i| c.conn[i] == conn && c.dir[i] == dir)
        .map(|i| (c.time_ns[i], c.state[i], c.cwnd[i], c.ssthresh[i], c.srtt_ns[i], c.rto_ns[i]))
        .collect()
}

/// ∫ cwnd dt over the tcp rows of (conn, dir) from the first row until the connection closes
/// (or `end`), and the time that covers.
fn cwnd_integral(s: &Series, conn: u32, dir: u8, end: i64) -> (u128, u128) {
    let rows = tcp_rows(s, conn, dir);
    let (mut area, mut open) = (0u128, 0u128);
    for (i, r) in rows.iter().enumerate() {
        if r.1 == TcpState::Closed as u8 || r.1 == TcpState::Failed as u8 {
            break;
        }
        let until = rows.get(i + 1).map_or(end, |n| n.0);
        area += r.2 as u128 * (until - r.0) as u128;
        open += (until - r.0) as u128;
    }
    (area, open)
}

#[test]
fn series_agree_with_the_run_totals() {
    // A bottleneck that overflows: slow start into a 10-packet queue loses packets, NewReno
    // recovers, and the link, the queue and the connection all have something to show.
    let text = scenario("rate = \"8Mbps\"\nqueue = 10", "variant = \"newreno\"", "bytes = 400000", ALL);
    let r = run_toml(&text);
    let s = series(&r);
    let c = &r.connections[0];
    assert!(c.retransmits > 0 && r.links[0].dropped_queue > 0, "the scenario must lose packets");
    assert_eq!(s.conns.len(), 1);
    assert_eq!((s.conns[0].a.as_str(), s.conns[0].b.as_str(), s.conns[0].transfer), ("sender", "receiver", 1));

    let seg = s.segments.as_ref().unwrap();
    // The data sent (dir 0, at the sender) is every segment the instruments count, and the
    // retransmissions are those with a transmission number above 1.
    let data_tx: Vec<usize> = (0..seg.seq.len()).filter(|&i| seg.dir[i] == 0 && seg.event[i] == EVENT_TX && seg.len[i] > 0).collect();
    assert_eq!(data_tx.len() as u64, c.segs_sent);
    assert_eq!(data_tx.iter().map(|&i| seg.len[i] as u64).sum::<u64>(), c.bytes_sent);
    assert_eq!(data_tx.iter().filter(|&&i| seg.tx[i] > 1).count() as u64, c.retransmits);
    // The last ACKed sequence number the sender received is the bytes delivered, after the SYN
    // (sequence 0) and with the FIN's one.
    let fin_sent = (0..seg.seq.len()).any(|i| seg.dir[i] == 0 && seg.flags[i] & 0x01 != 0);
    let last_ack = (0..seg.seq.len()).filter(|&i| seg.dir[i] == 1 && seg.event[i] == EVENT_RX).map(|i| seg.ack[i]).max().unwrap();
    assert_eq!(last_ack as u64, 1 + c.bytes_delivered + fin_sent as u64);
    assert_eq!(c.bytes_delivered, 400_000);

    // The time-averaged cwnd from the series is the instrument's, to the nanosecond·byte.
    let end = (r.meta.sim_time_s * 1e9).round() as i64;
    let (area, open) = cwnd_integral(s, 0, 0, end);
    let avg = area as f64 / open as f64;
    let inst = c.cwnd_avg_bytes.unwrap();
    assert!((avg - inst).abs() <= 1e-9 * inst, "series {avg} vs instrument {inst}");
    assert_eq!(tcp_rows(s, 0, 0).iter().map(|r| r.2).max().unwrap(), c.cwnd_max_bytes);

    // The time-averaged queue from the series is the link row's.
    let q = s.queue.as_ref().unwrap();
    for (l, row) in r.links.iter().enumerate() {
        let idx: Vec<usize> = (0..q.time_ns.len()).filter(|&i| q.link[i] as usize == l).collect();
        assert_eq!(q.time_ns[idx[0]], 0, "each queue starts at time 0");
        let mut area = 0u128;
        for (k, &i) in idx.iter().enumerate() {
            let until = idx.get(k + 1).map_or(end, |&j| q.time_ns[j]);
            area += q.pkts[i] as u128 * (until - q.time_ns[i]) as u128;
        }
        let avg = area as f64 / end as f64;
        assert!((avg - row.avg_queue_pkts).abs() <= 1e-9 * row.avg_queue_pkts.max(1.0), "link {l}: {avg} vs {}", row.avg_queue_pkts);
        assert_eq!(idx.iter().map(|&i| q.pkts[i] as u64).max().unwrap(), row.max_queue_pkts);
        // Its drops are the link row's, each a queue overflow here.
        let d = s.drops.as_ref().unwrap();
        assert_eq!(d.link.iter().filter(|&&x| x as usize == l).count() as u64, row.dropped_pkts);
    }
    // Every dropped data segment was sent again.
    let d = s.drops.as_ref().unwrap();
    for i in (0..d.seq.len()).filter(|&i| d.dir[i] == 0 && d.len[i] > 0) {
        assert!(data_tx.iter().any(|&j| seg.seq[j] == d.seq[i] && seg.tx[j] == d.tx[i] + 1), "dropped segment {} resent", d.seq[i]);
    }
}

#[test]
fn fast_retransmit_row_has_the_rfc5681_window() {
    // IW 10 segments; data segment 5 lost once. The third duplicate ACK (from segments 6, 7, 8)
    // triggers the fast retransmit: ssthresh = max(FlightSize/2, 2·SMSS) and cwnd = ssthresh +
    // 3·SMSS (RFC 5681 §3.2 steps 2–3), in a row of state "recovery" at that ACK's arrival.
    let text = scenario("", "variant = \"newreno\"\ninitial_window = 10\nfin = false", "bytes = 10000\ndrops = [{ kind = \"data\", segment = 5 }]", "[[series]]\nkind = \"tcp\"\n[[series]]\nkind = \"segments\"\n");
    let r = run_toml(&text);
    let s = series(&r);
    let rows = tcp_rows(s, 0, 0);
    let k = rows.iter().position(|r| r.1 == TcpState::Recovery as u8).expect("a recovery row");
    let before = rows[k - 1];
    // The first ACK grows the IW by one segment (slow start); the next ones do not, the window
    // being no longer the limit once all 10 segments are out (RFC 7661 §4.3).
    assert_eq!(before.2, 11 * MSS);
    // FlightSize at the third duplicate ACK: all 10 segments sent, 4 acknowledged.
    let ssthresh = (6 * MSS / 2).max(2 * MSS);
    assert_eq!((rows[k].2, rows[k].3), (ssthresh + 3 * MSS, ssthresh));
    // It is the arrival time of the third duplicate ACK (the ACK number of segment 5's start).
    let seg = s.segments.as_ref().unwrap();
    let dups: Vec<i64> = (0..seg.seq.len()).filter(|&i| seg.dir[i] == 1 && seg.event[i] == EVENT_RX && seg.ack[i] == (1 + 4 * MSS) as i64).map(|i| seg.time_ns[i]).collect();
    assert_eq!(rows[k].0, dups[3], "the fourth ACK of 4001 is the third duplicate");
    // The retransmission of segment 5 leaves at that instant.
    let retx = (0..seg.seq.len()).find(|&i| seg.dir[i] == 0 && seg.event[i] == EVENT_TX && seg.tx[i] == 2).unwrap();
    assert_eq!((seg.seq[retx], seg.time_ns[retx]), (1 + 4 * MSS, rows[k].0));
    // Recovery ends with the ACK of everything sent before it (RFC 6582 §3.2 step 6, option 1):
    // cwnd = min(ssthresh, max(FlightSize, SMSS) + SMSS), nothing being outstanding then.
    let after = rows[k + 1..].iter().find(|r| r.1 != TcpState::Recovery as u8).unwrap();
    assert_eq!(after.2, (2 * MSS).min(ssthresh));
    assert_eq!(rows.last().unwrap().1, TcpState::Closed as u8);
}

#[test]
fn timeout_row_has_one_segment_and_a_backed_off_rto() {
    // A lone segment lost: nothing comes back, the RTO (1 s initial, RFC 6298 §2.1, no sample
    // yet) expires and the row shows state "loss", cwnd = 1 SMSS (RFC 5681 §3.1) and the RTO
    // doubled (RFC 6298 §5.5), at exactly one RTO after the segment was sent.
    let text = scenario("", "handshake = false\ninitial_window = 1\nfin = false", "bytes = 1000\ndrops = [{ kind = \"data\", segment = 1 }]", "[[series]]\nkind = \"tcp\"\n");
    let r = run_toml(&text);
    let rows = tcp_rows(series(&r), 0, 0);
    let k = rows.iter().position(|r| r.1 == TcpState::Loss as u8).expect("a loss row");
    assert_eq!(rows[0].0, 0);
    assert_eq!(rows[0].5, 1_000_000_000);
    assert_eq!(rows[k].0, 1_000_000_000);
    assert_eq!((rows[k].2, rows[k].5), (MSS, 2_000_000_000));
    assert_eq!(rows[k].4, -1, "no RTT sample yet");
    // The retransmission's ACK gives no sample (Karn), the connection closes.
    assert_eq!(rows.last().unwrap().1, TcpState::Closed as u8);
}

#[test]
fn sampled_rows_are_the_values_in_force_on_the_grid() {
    let flow = "bytes = 300000";
    let link = "rate = \"8Mbps\"\nqueue = 10";
    let every = run_toml(&scenario(link, "", flow, "[[series]]\nkind = \"tcp\"\n[[series]]\nkind = \"queue\"\n"));
    let sampled = run_toml(&scenario(link, "", flow, "[[series]]\nkind = \"tcp\"\ninterval = \"10ms\"\n[[series]]\nkind = \"queue\"\ninterval = \"5ms\"\n"));
    let (e, s) = (series(&every), series(&sampled));
    let ch = tcp_rows(e, 0, 0);
    let sm = tcp_rows(s, 0, 0);
    let closed = ch.last().unwrap().0;
    // Grid rows, then the row where the connection closes.
    for (i, r) in sm.iter().enumerate() {
        if i + 1 == sm.len() {
            assert_eq!((r.0, r.1), (closed, TcpState::Closed as u8));
            break;
        }
        assert_eq!(r.0 % 10_000_000, 0, "row at {} ns is off the grid", r.0);
        // The value in force: the last change at or before the grid point.
        let held = ch.iter().rev().find(|c| c.0 <= r.0).unwrap();
        assert_eq!(r, &(r.0, held.1, held.2, held.3, held.4, held.5));
    }
    assert_eq!(sm.len() as i64 - 1, (closed - sm[0].0 - 1) / 10_000_000 + 1, "every grid point while open");
    let q = s.queue.as_ref().unwrap();
    let end = (sampled.meta.sim_time_s * 1e9).round() as i64;
    assert_eq!(q.time_ns.len() as i64, 2 * (end / 5_000_000 + 1), "two link directions, grid 0..=end");
    assert!(q.time_ns.iter().all(|t| t % 5_000_000 == 0));
    // Sampling changes nothing in the run.
    assert_eq!(serde_json::to_string(&every).unwrap(), serde_json::to_string(&sampled).unwrap().replace("\"interval\":\"10ms\",", "").replace("\"interval\":\"5ms\",", ""));
}

#[test]
fn a_table_stops_at_its_cap_and_says_so() {
    let text = scenario("", "", "bytes = 100000", "[[series]]\nkind = \"segments\"\nmax_rows = 25\n[[series]]\nkind = \"tcp\"\n");
    let r = run_toml(&text);
    let s = series(&r);
    let seg = s.segments.as_ref().unwrap();
    assert_eq!(seg.time_ns.len(), 25);
    assert!(seg.cap.truncated);
    assert!(!s.tcp.as_ref().unwrap().cap.truncated);
    assert_eq!(s.info()["truncated"]["segments"], true);
    // The rows kept are the first ones.
    assert_eq!(seg.time_ns[0], 0);
    assert!(seg.time_ns.windows(2).all(|w| w[0] <= w[1]));
}

#[test]
fn series_change_nothing_in_the_run() {
    let base = scenario("rate = \"8Mbps\"\nqueue = 10", "variant = \"sack\"\nsack = true", "bytes = 300000", "");
    let off = run_toml(&base);
    let on = run_toml(&format!("{base}{ALL}"));
    assert!(off.series.is_none());
    let strip = |r: &RunResult| {
        let mut v = serde_json::to_value(r).unwrap();
        v["scenario"].as_object_mut().unwrap().remove("series");
        // A run with instruments moves every packet by events (net/vfifo.rs): the same run in
        // more events.
        v["meta"]["events"] = 0.into();
        v.to_string()
    };
    assert_eq!(strip(&off), strip(&on));
    assert!(on.meta.events > off.meta.events);
    // With SACK, the ACKs the sender receives carry blocks, and the tcp rows see them.
    let s = series(&on);
    let seg = s.segments.as_ref().unwrap();
    assert!(seg.n_sack.iter().any(|&n| n > 0));
    assert_eq!(seg.n_sack.iter().map(|&n| n as usize).sum::<usize>(), seg.sack_left.len());
    assert!(s.tcp.as_ref().unwrap().sacked.iter().any(|&b| b > 0));
    // Same scenario and seed: the same series.
    let again = run_toml(&format!("{base}{ALL}"));
    assert_eq!(format!("{:?}", series(&again).columns()), format!("{:?}", s.columns()));
}

#[test]
fn malformed_series_are_refused_by_key() {
    let bad = |series: &str| Scenario::from_toml(&scenario("", "", "bytes = 1000", series), &[]).unwrap_err();
    let e = bad("[[series]]\nkind = \"tcp\"\n[[series]]\nkind = \"tcp\"\n");
    assert_eq!(e.path, "series[1].kind");
    let e = bad("[[series]]\nkind = \"segments\"\ninterval = \"1ms\"\n");
    assert_eq!(e.path, "series[0].interval");
    let e = bad("[[series]]\nkind = \"tcp\"\ninterval = \"0s\"\n");
    assert_eq!(e.path, "series[0].interval");
    let e = bad("[[series]]\nkind = \"queue\"\nmax_rows = 0\n");
    assert_eq!(e.path, "series[0].max_rows");
    let e = bad("[[series]]\nkind = \"queue\"\nmax_rows = 100000001\n");
    assert_eq!(e.path, "series[0].max_rows");
    let e = bad("[[series]]\nkind = \"cwnd\"\n");
    assert!(e.path.starts_with("series[0]"), "{e}");
    let e = bad("[[series]]\nkind = \"tcp\"\nevery = \"1ms\"\n");
    assert!(e.path.starts_with("series[0]"), "{e}");
    let e = bad("[[series]]\ninterval = \"1ms\"\n");
    assert!(e.path.starts_with("series[0]"), "{e}");
}

#[test]
fn repeated_transfers_are_connections_of_their_own() {
    // Three transfers of one flow, one connection each, with a think time between: the series
    // number them, and the cwnd integral over each one's open time adds up to the flow's
    // instrument (which adds the transfers up).
    let text = scenario("rate = \"8Mbps\"\nqueue = 10", "", "bytes = 60000\nrepeat = 3\nthink = \"500ms\"", "[[series]]\nkind = \"tcp\"\n");
    let r = run_toml(&text);
    let s = series(&r);
    assert_eq!(s.conns.iter().map(|c| c.transfer).collect::<Vec<_>>(), vec![1, 2, 3]);
    let end = (r.meta.sim_time_s * 1e9).round() as i64;
    let (mut area, mut open) = (0u128, 0u128);
    for c in 0..3 {
        let rows = tcp_rows(s, c, 0);
        assert_eq!(rows.last().unwrap().1, TcpState::Closed as u8, "transfer {} closes", c + 1);
        let (a, o) = cwnd_integral(s, c, 0, end);
        area += a;
        open += o;
    }
    let inst = r.connections[0].cwnd_avg_bytes.unwrap();
    assert!((area as f64 / open as f64 - inst).abs() <= 1e-9 * inst);
    // The receiving ends send no data: they have no rows.
    assert!(s.tcp.as_ref().unwrap().dir.iter().all(|&d| d == 0));
}

#[test]
fn request_response_has_rows_for_both_send_halves() {
    // A request/response exchange: the client sends the request (a2b), the server the response
    // (b2a); both send halves have rows, and each side's segments are those it sent.
    let text = format!(
        "[topology]\nkind = \"single_link\"\nrate = \"10Mbps\"\ndelay = \"10ms\"\n[[apps]]\nkind = \"reqresp\"\nrequest = \"300B\"\nresponse = \"20KB\"\n{ALL}"
    );
    let r = run_toml(&text);
    let s = series(&r);
    assert_eq!(s.conns.len(), 1);
    let dirs: std::collections::BTreeSet<u8> = s.tcp.as_ref().unwrap().dir.iter().copied().collect();
    assert_eq!(dirs.into_iter().collect::<Vec<_>>(), vec![0, 1]);
    let seg = s.segments.as_ref().unwrap();
    let bytes = |d: u8| (0..seg.seq.len()).filter(|&i| seg.dir[i] == d && seg.event[i] == EVENT_TX && seg.tx[i] == 1).map(|i| seg.len[i] as u64).sum::<u64>();
    assert_eq!((bytes(0), bytes(1)), (300, 20 * 1024));
}

#[test]
fn a_fine_grid_stops_at_the_cap_without_walking_it() {
    // 1 ns samples over a 100 s run would be 10¹¹ rows per key: each table stops at its cap, and
    // the recorder then skips the rest of the grid instead of walking it row by row (this test
    // would not finish otherwise).
    let series = "[[series]]\nkind = \"tcp\"\ninterval = \"1ns\"\nmax_rows = 1000\n[[series]]\nkind = \"queue\"\ninterval = \"1ns\"\nmax_rows = 1000\n";
    let text = format!("duration = \"100s\"\n{}", scenario("rate = \"8Mbps\"\nqueue = 10", "", "bytes = \"unlimited\"", series));
    let r = run_toml(&text);
    let s = self::series(&r);
    let (t, q) = (s.tcp.as_ref().unwrap(), s.queue.as_ref().unwrap());
    assert_eq!((t.time_ns.len(), q.time_ns.len()), (1000, 1000));
    assert!(t.cap.truncated && q.cap.truncated);
    assert_eq!(r.meta.sim_time_s, 100.0);
}

#[test]
fn filters_keep_the_flows_and_links_named() {
    // Two flows over a dumbbell; the tcp and segments series keep flow "b" only, the queue and
    // drops the bottleneck's forward direction only.
    let text = "[topology]\nkind = \"dumbbell\"\npairs = 2\naccess_rate = \"100Mbps\"\naccess_delay = \"1ms\"\nbottleneck_rate = \"4Mbps\"\nbottleneck_delay = \"20ms\"\nqueue = 8\n\
        [[flows]]\nname = \"a\"\nfrom = \"s1\"\nto = \"r1\"\nbytes = 200000\n[[flows]]\nname = \"b\"\nfrom = \"s2\"\nto = \"r2\"\nbytes = 200000\n\
        [[series]]\nkind = \"tcp\"\nflows = [\"b\"]\n[[series]]\nkind = \"segments\"\nflows = [\"b\"]\n\
        [[series]]\nkind = \"queue\"\nlinks = [\"bottleneck:left->right\"]\n[[series]]\nkind = \"drops\"\nlinks = [\"bottleneck\"]\n";
    let r = run_toml(text);
    let s = series(&r);
    // (The drops of both flows are kept, so both connections are numbered.)
    let name = |c: u32| s.conns[c as usize].name.as_str();
    let seg = s.segments.as_ref().unwrap();
    assert!(s.tcp.as_ref().unwrap().conn.iter().chain(&seg.conn).all(|&c| name(c) == "b"));
    assert!(!seg.conn.is_empty());
    let sent = (0..seg.seq.len()).filter(|&i| seg.dir[i] == 0 && seg.event[i] == EVENT_TX && seg.len[i] > 0).count() as u64;
    assert_eq!(sent, r.connections[1].segs_sent);
    let fwd = s.links.iter().position(|l| l == "bottleneck:left->right").unwrap();
    let q = s.queue.as_ref().unwrap();
    assert!(q.link.iter().all(|&l| l as usize == fwd) && !q.link.is_empty());
    let d = s.drops.as_ref().unwrap();
    let link_drops: u64 = r.links.iter().filter(|l| l.link.starts_with("bottleneck:")).map(|l| l.dropped_pkts).sum();
    assert!(link_drops > 0);
    assert_eq!(d.link.len() as u64, link_drops);
    // Unknown names and filters on the wrong kind are refused by key.
    let bad = |series: &str| Scenario::from_toml(&text.replace("[[series]]\nkind = \"tcp\"\nflows = [\"b\"]\n", series), &[]).unwrap_err();
    assert_eq!(bad("[[series]]\nkind = \"tcp\"\nflows = [\"b\", \"c\"]\n").path, "series[0].flows[1]");
    assert_eq!(bad("[[series]]\nkind = \"tcp\"\nflows = []\n").path, "series[0].flows");
    assert_eq!(bad("[[series]]\nkind = \"tcp\"\nlinks = [\"bottleneck\"]\n").path, "series[0].links");
    assert_eq!(bad("[[series]]\nkind = \"tcp\"\n[[series]]\nkind = \"queue\"\nflows = [\"a\"]\n").path, "series[1].flows");
    let e = bad("[[series]]\nkind = \"tcp\"\n[[series]]\nkind = \"drops\"\nlinks = [\"nope\"]\n");
    assert_eq!(e.path, "series[1].links[0]");
    assert!(e.message.contains("bottleneck:left->right"), "{e}");
}
