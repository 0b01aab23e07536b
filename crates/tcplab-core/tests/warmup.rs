//! `warmup`: instruments count from the end of the warmup. A run is deterministic, so the run
//! of length W is an exact prefix of the run of length T with the same seed: every counter of
//! the run with warmup W and duration T must equal (counter at T) − (counter at W).

use tcplab_core::{run, RunResult, Scenario};

fn bulk(duration: u32, warmup: Option<u32>) -> RunResult {
    let w = warmup.map(|w| format!("warmup = \"{w}s\"\n")).unwrap_or_default();
    let text = format!(
        "duration = \"{duration}s\"\n{w}[topology]\nkind = \"single_link\"\nrate = \"10Mbps\"\ndelay = \"20ms\"\nqueue = 20\nloss = 0.005\n[tcp]\npreset = \"fack-rh\"\n[[flows]]\nbytes = \"unlimited\"\n"
    );
    run(&Scenario::from_toml(&text, &[]).unwrap(), 7).unwrap()
}

#[test]
fn warmup_counts_only_what_follows_it() {
    let (full, prefix, measured) = (bulk(60, None), bulk(10, None), bulk(60, Some(10)));
    let (f, p, m) = (&full.connections[0], &prefix.connections[0], &measured.connections[0]);
    assert!(p.bytes_delivered > 0 && p.ca_events > 0, "the prefix saw slow start and losses");
    assert_eq!(m.bytes_delivered, f.bytes_delivered - p.bytes_delivered);
    assert_eq!(m.segs_sent, f.segs_sent - p.segs_sent);
    assert_eq!(m.retransmits, f.retransmits - p.retransmits);
    assert_eq!(m.ca_events, f.ca_events - p.ca_events);
    assert_eq!(m.non_ca_events, f.non_ca_events - p.non_ca_events);
    assert_eq!(m.timeouts, f.timeouts - p.timeouts);
    assert_eq!(m.rtt_samples, f.rtt_samples - p.rtt_samples);
    let expect = m.bytes_delivered as f64 * 8.0 / 50.0;
    assert!((m.goodput_bps - expect).abs() < 1e-6 * expect, "goodput over the 50 s after the warmup");
    let (fl, pl, ml) = (&full.links[0], &prefix.links[0], &measured.links[0]);
    assert_eq!(ml.sent_pkts, fl.sent_pkts - pl.sent_pkts);
    assert_eq!(ml.dropped_pkts, fl.dropped_pkts - pl.dropped_pkts);
    // Time averages are over the 50 s: the integrals split exactly at the warmup.
    let integral = |r: &tcplab_core::result::LinkRow, secs: f64| r.avg_queue_pkts * secs;
    let diff = integral(fl, 60.0) - integral(pl, 10.0);
    assert!((integral(ml, 50.0) - diff).abs() < 1e-6 * diff.max(1.0));
    // The transfers table still covers the whole run.
    assert_eq!(measured.transfers.len(), full.transfers.len());
}

#[test]
fn warmup_needs_a_longer_duration() {
    let e = Scenario::from_toml("duration = \"5s\"\nwarmup = \"5s\"\n[topology]\nkind = \"single_link\"\nrate = \"1Mbps\"\ndelay = \"1ms\"\n[[flows]]\nbytes = 1000\n", &[])
        .and_then(|s| run(&s, 1).map(|_| s))
        .err()
        .expect("refused");
    assert_eq!(e.path, "warmup");
}

#[test]
fn objects_and_pages_of_the_warmup_are_left_out() {
    let text = |warmup: &str| {
        format!(
            "duration = \"60s\"\n{warmup}[topology]\nkind = \"single_link\"\nrate = \"10Mbps\"\ndelay = \"10ms\"\n\
             [[apps]]\nkind = \"http10\"\nresponse = \"4KB\"\nembedded = 2\npages = \"unlimited\"\nthink = \"1s\"\n"
        )
    };
    let all = tcplab_core::run(&Scenario::from_toml(&text(""), &[]).unwrap(), 1).unwrap();
    let after = tcplab_core::run(&Scenario::from_toml(&text("warmup = \"20s\"\n"), &[]).unwrap(), 1).unwrap();
    // The same run: the rows kept are exactly those that started at or after 20 s.
    let kept: Vec<_> = all.objects.iter().filter(|o| o.start_s >= 20.0).cloned().collect();
    assert!(!kept.is_empty() && kept.len() < all.objects.len());
    assert_eq!(after.objects, kept);
    let pages: Vec<_> = all.pages.iter().filter(|p| p.start_s >= 20.0).cloned().collect();
    assert_eq!(after.pages, pages);
    assert!(after.pages.iter().all(|p| p.start_s >= 20.0));
}

/// Issue reproducer: a flow whose first segment is held back 100 ms (both transmissions) with a
/// 100 ms warmup on a 1 Mb/s link reported 5.5 Mb/s of goodput: the data held out of order at
/// the warmup's end was counted in the measured interval when the hole filled. Goodput after a
/// warmup is the bytes that arrived after it, never above the link's rate.
#[test]
fn goodput_after_a_warmup_leaves_out_what_the_receiver_held() {
    let text = "duration = \"2s\"\nwarmup = \"100ms\"\n[topology]\nkind = \"single_link\"\nrate = \"1Mbps\"\ndelay = \"0s\"\n\
                [tcp]\ninitial_window = 10\nhandshake = false\n\
                [[flows]]\nbytes = \"8KB\"\ndelays = [{ kind = \"data\", segment = 1, by = \"100ms\", transmissions = [1, 2] }]\n";
    let r = run(&Scenario::from_toml(text, &[]).unwrap(), 1).unwrap();
    let c = &r.connections[0];
    assert!(c.goodput_bps > 0.0 && c.goodput_bps <= 1e6, "goodput {} above the 1 Mb/s link", c.goodput_bps);
    // The case bites: counting every byte delivered after the warmup (the held ones too) over
    // the same interval is above the link's rate.
    let counted_all = c.bytes_delivered as f64 * 8.0 / (c.complete_s.unwrap() - 0.1);
    assert!(counted_all > 1e6, "{counted_all}");
    // bytes_delivered keeps the prefix identity: everything delivered after the warmup.
    let whole = run(&Scenario::from_toml(&text.replace("warmup = \"100ms\"\n", ""), &[]).unwrap(), 1).unwrap();
    assert!(c.bytes_delivered <= whole.connections[0].bytes_delivered);
}
