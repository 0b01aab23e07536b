//! HyStart++ (RFC 9406, `slow_start = "hystart++"`, `tcp/cc/hystartpp.rs`) on one whole
//! connection: the harness's sender, its segments carried by a model path whose one-way delay
//! the test sets over time (no queue: RFC 9406 resumes slow start on any round minimum below the
//! one that began CSS, so a queue's microseconds would decide; the delay of a segment is the one
//! in force when it is sent;
//! every segment acknowledged, in order), so the round trip steps where the test says; and on
//! simulated dumbbells, where it leaves slow start before a large queue overflows. Each
//! assertion names the RFC's rule.

#[macro_use]
mod harness;

use harness::{Harness, MSS};
use std::collections::VecDeque;
use tcplab_core::tcp::config::{Cc, SlowStart};
use tcplab_core::tcp::{InitialWindow, TcpConfig};
use tcplab_core::units::{ms, Time};
use tcplab_core::{run, Scenario};

/// No transmission time: the round trip is exactly the path's.
const TX: Time = 0;

/// The state after one ACK: when, cwnd and ssthresh (bytes), and the round trip of the segment
/// it acknowledged.
#[derive(Clone, Copy, Debug)]
struct Snap {
    t: Time,
    cwnd: u64,
    ssthresh: u64,
    rtt: Time,
}

struct Path {
    h: Harness,
    link_free: Time,
    last_ack: Time,
    /// The round trip of a segment sent at t.
    rtt: fn(Time) -> Time,
    /// (ACK time, cumulative ACK, when the segment was sent).
    acks: VecDeque<(Time, u64, Time)>,
    log: Vec<Snap>,
}

impl Path {
    fn new(rtt: fn(Time) -> Time, knobs: impl FnOnce(&mut TcpConfig)) -> Path {
        let mut h = Harness::established(|c| {
            c.initial_window = InitialWindow::Segments(10);
            knobs(c);
        });
        h.write(0, 1 << 40);
        let mut p = Path { h, link_free: 0, last_ack: 0, rtt, acks: VecDeque::new(), log: Vec::new() };
        p.carry();
        p
    }

    /// Put what the sender sent on the path.
    fn carry(&mut self) {
        for (t, s) in self.h.take_sent() {
            if s.len > 0 {
                let done = t.max(self.link_free) + TX;
                self.link_free = done;
                // In order: an ACK never overtakes the one before.
                let at = (done + (self.rtt)(t)).max(self.last_ack);
                self.last_ack = at;
                self.acks.push_back((at, s.seq + s.len as u64, t));
            }
        }
    }

    fn run_until(&mut self, end: Time) {
        while let Some(&(t, a, sent)) = self.acks.front() {
            if t > end {
                break;
            }
            self.acks.pop_front();
            self.h.send(t, seg!(ack = a));
            let i = self.h.info();
            self.log.push(Snap { t, cwnd: i.cwnd, ssthresh: i.ssthresh, rtt: t - sent });
            self.carry();
        }
    }
}

fn hystart_pp(c: &mut TcpConfig) {
    c.slow_start = SlowStart::HystartPP;
}

/// The growth of each ACK, bytes.
fn growth(log: &[Snap]) -> Vec<i64> {
    log.windows(2).map(|w| w[1].cwnd as i64 - w[0].cwnd as i64).collect()
}

/// 40 ms, then 46 ms for what is sent from 100 ms on (a queue elsewhere filling).
fn step_up(t: Time) -> Time {
    if t < ms(100) {
        ms(40)
    } else {
        ms(46)
    }
}

/// As `step_up`, and back to 40 ms for what is sent from 190 ms on.
fn step_up_and_down(t: Time) -> Time {
    if (ms(100)..ms(190)).contains(&t) {
        ms(46)
    } else {
        ms(40)
    }
}

const INF: u64 = u64::MAX / 8;

/// Reno with HyStart++ and the `rfc` profile's RTT estimator (one timed segment a round trip):
/// the RTT HyStart++ reads on every ACK comes from the transmit record. Slow start grows one
/// segment an ACK until a round has 8 samples whose minimum is at least RttThresh =
/// clamp(40 ms / 8, 4 ms, 16 ms) = 5 ms above the previous round's (46 ≥ 45); then a quarter
/// segment an ACK (CSS) for five rounds, the partial one it began in included; then ssthresh =
/// cwnd and congestion avoidance (RFC 9406 §4.2).
#[test]
fn reno_leaves_slow_start_through_five_rounds_of_css_when_the_round_trip_grows() {
    let mut p = Path::new(step_up, hystart_pp);
    p.run_until(ms(1000));
    let g = growth(&p.log);
    // Slow start: every ACK of one segment adds one (min(N, L·SMSS), L = 8).
    let css = g.iter().position(|&d| d != MSS as i64).expect("slow start ends") + 1;
    // The ACK that entered CSS is the 8th of a round with the 46 ms round trip; the 7 before it
    // had it too, and the round before had 40 ms.
    assert!(p.log[css - 8..css].iter().all(|s| s.rtt == ms(46)), "{:?}", &p.log[css - 9..css]);
    assert!(p.log[..css - 8].iter().all(|s| s.rtt == ms(40) || s.rtt == ms(46)));
    assert!(p.log[..css - 8].iter().any(|s| s.rtt == ms(40)), "{:?}", &p.log[css - 12..css]);
    // CSS: a quarter segment an ACK, ssthresh still unset.
    let avoid = p.log.iter().position(|s| s.ssthresh < INF).expect("congestion avoidance begins");
    assert!(g[css..avoid - 1].iter().all(|&d| d == (MSS / 4) as i64), "{:?}", &g[css..avoid]);
    // Five rounds: the first ends when what was out at CSS's entry is acknowledged, each of
    // the others a round trip later; at the fifth's end ssthresh = cwnd.
    let span = p.log[avoid].t - p.log[css].t;
    assert!(span > 4 * ms(46) && span <= 5 * ms(46), "CSS lasted {span} ns");
    assert_eq!(p.log[avoid].ssthresh, p.log[avoid - 1].cwnd, "ssthresh = cwnd at the fifth round's end");
    // Then Reno's avoidance: at most one segment a round trip.
    assert!(g[avoid..].iter().all(|&d| (0..=MSS as i64).contains(&d)));
    let end = p.log.last().unwrap();
    let rounds = (end.t - p.log[avoid].t) / ms(46) + 1;
    assert!(end.cwnd <= p.log[avoid].cwnd + rounds * MSS, "{} → {}", p.log[avoid].cwnd, end.cwnd);
}

/// The same path with standard slow start: the window doubles every round trip whatever the
/// round trip does (nothing is lost on this path), far past where HyStart++ stopped.
#[test]
fn standard_slow_start_knows_nothing_of_the_round_trip() {
    let mut std_ss = Path::new(step_up, |_| {});
    std_ss.run_until(ms(500));
    let mut hpp = Path::new(step_up, hystart_pp);
    hpp.run_until(ms(500));
    assert!(growth(&std_ss.log).iter().all(|&d| d == MSS as i64));
    let (a, b) = (std_ss.log.last().unwrap().cwnd, hpp.log.last().unwrap().cwnd);
    assert!(a > 2 * b, "standard {a}, HyStart++ {b}");
}

/// A round in CSS whose minimum falls below the RTT that began CSS shows the exit spurious:
/// slow start resumes, watched again (RFC 9406 §4.2), and with the round trip back at 40 ms it
/// stays slow start.
#[test]
fn a_shorter_round_trip_in_css_resumes_slow_start() {
    let mut p = Path::new(step_up_and_down, hystart_pp);
    p.run_until(ms(700));
    let g = growth(&p.log);
    let css = g.iter().position(|&d| d != MSS as i64).expect("CSS entered") + 1;
    let resumed = css + g[css..].iter().position(|&d| d == MSS as i64).expect("slow start resumed");
    // Resumed on the first ACK at 40 ms in a CSS round that already had its 8 samples (at
    // 46 ms); that ACK still grew as CSS, the next as slow start.
    assert_eq!(p.log[resumed].rtt, ms(40));
    assert!(p.log[resumed - 8..resumed].iter().all(|s| s.rtt == ms(46)), "{:?}", &p.log[resumed - 8..=resumed + 1]);
    assert!(g[resumed..].iter().all(|&d| d == MSS as i64), "slow start to the end");
    assert!(p.log.iter().all(|s| s.ssthresh >= INF), "never in avoidance");
}

/// CUBIC with HyStart++ in place of its classic HyStart (`tcp_cubic`'s own rule, counted in
/// packets): the same exit, CSS growing one packet every fourth ACK (a quarter packet an ACK,
/// the remainder carried), ssthresh = cwnd after five rounds, then CUBIC's avoidance.
#[test]
fn cubic_runs_hystart_pp_in_packets() {
    let mut p = Path::new(step_up, |c| {
        c.cc = Cc::Cubic;
        hystart_pp(c);
    });
    p.run_until(ms(1000));
    let g = growth(&p.log);
    let css = g.iter().position(|&d| d != MSS as i64).expect("slow start ends") + 1;
    assert!(p.log[css - 8..css].iter().all(|s| s.rtt == ms(46)));
    let avoid = p.log.iter().position(|s| s.ssthresh < INF).expect("congestion avoidance begins");
    let in_css = &g[css - 1..avoid - 1];
    assert!(in_css.iter().all(|&d| d == 0 || d == MSS as i64), "{in_css:?}");
    let grown: i64 = in_css.iter().sum();
    assert_eq!(grown / MSS as i64, in_css.len() as i64 / 4, "a packet every fourth ACK");
    assert_eq!(p.log[avoid].ssthresh, p.log[avoid - 1].cwnd);
}

/// On a dumbbell (10 Mb/s, 40 ms: a BDP of 34 packets) HyStart++ leaves slow start when the
/// queue has raised the round trip by 5 ms or more, and its five rounds of CSS (growth ×1.25 a
/// round, ×3 in all) stay inside a 1000-packet queue where standard slow start overflows it;
/// with 150 packets they do not, but it drops a fraction of what standard slow start drops.
/// With Reno and with CUBIC (whose own default is Linux's classic HyStart instead).
#[test]
fn on_a_dumbbell_hystart_pp_leaves_slow_start_before_a_deep_queue_overflows() {
    let run_with = |cc: &str, ss: &str, queue: u32| {
        let text = format!(
            "duration = \"6s\"\n[tcp]\nprofile = \"linux\"\ncc = \"{cc}\"\nslow_start = \"{ss}\"\n[topology]\nkind = \"dumbbell\"\npairs = 1\naccess_rate = \"100Mbps\"\naccess_delay = \"1ms\"\nbottleneck_rate = \"10Mbps\"\nbottleneck_delay = \"18ms\"\nqueue = {queue}\n\
            [[flows]]\nname = \"a\"\nfrom = \"s1\"\nto = \"r1\"\nbytes = \"unlimited\"\n"
        );
        let s = Scenario::from_toml(&text, &[]).unwrap_or_else(|e| panic!("{e}"));
        let r = run(&s, 1).unwrap();
        let l = r.links.iter().find(|l| l.link == "bottleneck:left->right").unwrap();
        (l.dropped_pkts, r.connections[0].retransmits)
    };
    for cc in ["reno", "cubic"] {
        let (drops, retx) = run_with(cc, "standard", 1000);
        assert!(drops > 500 && retx > 0, "{cc} standard, 1000 packets: {drops} drops");
        assert_eq!(run_with(cc, "hystart++", 1000), (0, 0), "{cc} with HyStart++, 1000 packets");
        let (standard, _) = run_with(cc, "standard", 150);
        let (hpp, _) = run_with(cc, "hystart++", 150);
        assert!(hpp > 0 && 3 * hpp < standard, "{cc}, 150 packets: {hpp} drops against {standard}");
    }
}

#[test]
fn slow_start_names_what_each_controller_can_run() {
    let cfg = |cc: Cc, ss: SlowStart| {
        let mut c = harness::cfg();
        c.cc = cc;
        c.slow_start = ss;
        c.validate()
    };
    assert!(cfg(Cc::Reno, SlowStart::HystartPP).is_ok());
    assert!(cfg(Cc::Cubic, SlowStart::HystartPP).is_ok());
    assert!(cfg(Cc::Cubic, SlowStart::Standard).is_ok());
    assert!(cfg(Cc::Dctcp, SlowStart::HystartPP).is_ok());
    let (key, msg) = cfg(Cc::Reno, SlowStart::Hystart).unwrap_err();
    assert_eq!(key, "slow_start");
    assert!(msg.contains("tcp_cubic.c"), "{msg}");
    let (_, msg) = cfg(Cc::Bbr, SlowStart::HystartPP).unwrap_err();
    assert!(msg.contains("bbr_check_full_bw_reached"), "{msg}");
    let e = Scenario::from_toml("[tcp]\nslow_start = \"hystart+\"\n[topology]\nkind = \"dumbbell\"\n[[flows]]\nfrom = \"s1\"\nto = \"r1\"\nbytes = \"1MB\"\n", &[]).unwrap_err().to_string();
    assert!(e.contains("slow_start"), "the error: {e}");
}
