//! Property tests of the whole simulator (proptest):
//!
//! - reliability: whatever is dropped (deterministic drop filters on SYN, SYN-ACK, data, ACK and
//!   FIN, Bernoulli loss both ways, small DropTail or RED queues), a finite transfer completes and
//!   delivers every byte exactly once and in order;
//! - packet conservation: created = delivered + dropped + in flight after every event, and per link
//!   direction offered = sent + dropped + waiting;
//! - determinism: a (scenario, seed) pair gives byte-identical results, and changing one flow's TCP
//!   settings does not change another flow's results when they share no link (one RNG stream per
//!   component).
//!
//! Determinism of the tests themselves: every property runs a fixed number of cases from a fixed
//! proptest RNG seed (`ChaCha`, `RngSeed::Fixed`), with failure persistence off, so a run of this
//! file always generates the same cases. The config is written out in full, so the
//! PROPTEST_CASES / PROPTEST_RNG_SEED environment variables do not change it; to explore other
//! cases, change `SEED` (or `CASES`) below. A failing case is shrunk and printed as the scenario's
//! TOML text and the run seed, which reproduce it with `tcplab_core::run`.

use proptest::prelude::*;
use proptest::test_runner::{Config as ProptestConfig, RngAlgorithm, RngSeed, TestCaseError};
use tcplab_core::result::{ConnRow, LinkRow};
use tcplab_core::{run, RunResult, Scenario, World};

const CASES: u32 = 64;
const SEED: u64 = 0x7C1A_B5EE_D000_0001;

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        failure_persistence: None,
        rng_algorithm: RngAlgorithm::ChaCha,
        rng_seed: RngSeed::Fixed(SEED),
        max_shrink_iters: 1024,
        ..ProptestConfig::default()
    }
}

fn scenario(text: &str) -> Scenario {
    Scenario::from_toml(text, &[]).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

// ---------------------------------------------------------------------------------------------
// Scenario generators
// ---------------------------------------------------------------------------------------------

/// Every preset (`tcplab variants`): the variants of the Mathis and Ladha studies.
const VARIANTS: [&str; 12] = ["tahoe", "reno", "newreno", "sack1", "fack-rh", "sack", "sack-iw", "sack-iw-lt", "sack-iw-lt-abc1", "sack-iw-lt-abc1-er", "fack", "sack-rh"];
const MSSES: [u64; 3] = [536, 1000, 1460];
const PROFILES: [&str; 5] = ["rfc", "rfc2988", "ns2", "bsd", "linux22"];

/// A deterministic drop of the flow's packets (`transmissions = [1]` or `[1, 2]`), in every
/// transfer of the flow or in transfer `1 + transfer % repeat` only.
#[derive(Clone, Debug)]
struct FlowDrop {
    what: Drop,
    transfer: Option<u32>,
}

#[derive(Clone, Debug)]
enum Drop {
    Syn { twice: bool },
    SynAck { twice: bool },
    /// Data segment `1 + pick % segments` (so it always names a segment of the transfer).
    Data { pick: u32, twice: bool },
    Ack { number: u32 },
    Fin { twice: bool },
}

impl Drop {
    fn tx(twice: bool) -> &'static str {
        if twice {
            "[1, 2]"
        } else {
            "[1]"
        }
    }

    fn segment(pick: u32, segments: u64) -> u64 {
        1 + pick as u64 % segments
    }

    fn toml(&self, segments: u64) -> String {
        match *self {
            Drop::Syn { twice } => format!("{{ kind = \"syn\", transmissions = {} }}", Drop::tx(twice)),
            Drop::SynAck { twice } => format!("{{ kind = \"synack\", transmissions = {} }}", Drop::tx(twice)),
            Drop::Data { pick, twice } => format!("{{ kind = \"data\", segment = {}, transmissions = {} }}", Drop::segment(pick, segments), Drop::tx(twice)),
            Drop::Ack { number } => format!("{{ kind = \"ack\", number = {number} }}"),
            Drop::Fin { twice } => format!("{{ kind = \"fin\", transmissions = {} }}", Drop::tx(twice)),
        }
    }
}

impl FlowDrop {
    fn epoch(&self, repeat: u32) -> Option<u32> {
        self.transfer.map(|t| 1 + t % repeat)
    }

    fn toml(&self, segments: u64, repeat: u32) -> String {
        let s = self.what.toml(segments);
        match self.epoch(repeat) {
            Some(e) => format!("{}, transfer = {e} }}", s.strip_suffix(" }").unwrap()),
            None => s,
        }
    }
}

/// RED in front of a generated queue, with thresholds of a few packets and weights up to 0.5 so
/// that it acts within short runs (`small`: thresholds below a packet or two and large weights,
/// for one flow whose queue seldom builds).
#[derive(Clone, Debug)]
struct RedQ {
    min_th: f64,
    max_th: f64,
    max_p: f64,
    w_q: f64,
    wait: bool,
    gentle: bool,
    byte_mode: bool,
}

fn red_q(small: bool) -> impl Strategy<Value = RedQ> {
    let (min_th, span, w_q) = if small { (0.05..1.0f64, 0.2..4.0f64, (0.1..=0.5f64).boxed()) } else { (0.5..8.0, 1.0..15.0, prop_oneof![Just(0.002), 0.01..=0.3f64].boxed()) };
    (min_th, span, 0.02..=0.5f64, w_q, any::<bool>(), any::<bool>(), any::<bool>())
        .prop_map(|(min_th, span, max_p, w_q, wait, gentle, byte_mode)| RedQ { min_th, max_th: min_th + span, max_p, w_q, wait, gentle, byte_mode })
}

/// A queue's TOML: a packet limit (None: unlimited) with RED or without.
fn queue_toml(limit: Option<u32>, red: &Option<RedQ>) -> String {
    match (limit, red) {
        (Some(n), None) => n.to_string(),
        (None, None) => "\"unlimited\"".into(),
        (limit, Some(r)) => format!(
            "{{ {}red = {{ min_th = {}, max_th = {}, max_p = {}, w_q = {}, wait = {}, gentle = {}, byte_mode = {} }} }}",
            limit.map(|n| format!("packets = {n}, ")).unwrap_or_default(),
            r.min_th,
            r.max_th,
            r.max_p,
            r.w_q,
            r.wait,
            r.gentle,
            r.byte_mode
        ),
    }
}

fn drop_strategy() -> impl Strategy<Value = FlowDrop> {
    (what_strategy(), prop::option::weighted(0.3, 0u32..3)).prop_map(|(what, transfer)| FlowDrop { what, transfer })
}

fn what_strategy() -> impl Strategy<Value = Drop> {
    prop_oneof![
        1 => any::<bool>().prop_map(|twice| Drop::Syn { twice }),
        1 => any::<bool>().prop_map(|twice| Drop::SynAck { twice }),
        4 => (any::<u32>(), any::<bool>()).prop_map(|(pick, twice)| Drop::Data { pick, twice }),
        2 => (1u32..=150).prop_map(|number| Drop::Ack { number }),
        1 => any::<bool>().prop_map(|twice| Drop::Fin { twice }),
    ]
}

/// One finite transfer over a single link with drops and losses.
#[derive(Clone, Debug)]
struct Transfer {
    bytes: u64,
    mss: u64,
    variant: &'static str,
    profile: &'static str,
    delayed_ack: bool,
    handshake: bool,
    fin: bool,
    /// Further TCP knobs (`key = value` lines), possibly none.
    knobs: Vec<String>,
    rate_mbps: u32,
    delay_ms: u32,
    /// Queue limit in packets (None: unlimited).
    queue: Option<u32>,
    /// RED in front of the limit.
    red: Option<RedQ>,
    loss: f64,
    reverse_loss: f64,
    /// Transfers made one after another on fresh connections, `think_ms` apart.
    repeat: u32,
    think_ms: u32,
    drops: Vec<FlowDrop>,
    seed: u64,
}

impl Transfer {
    fn segments(&self) -> u64 {
        self.bytes.div_ceil(self.mss)
    }

    fn toml(&self) -> String {
        let drops: Vec<String> = self.drops.iter().map(|d| d.toml(self.segments(), self.repeat)).collect();
        let queue = queue_toml(self.queue, &self.red);
        format!(
            r#"name = "property"
duration = "3600s"
[topology]
kind = "single_link"
rate = "{}Mbps"
delay = "{}ms"
queue = {queue}
loss = {}
reverse_loss = {}
[tcp]
profile = "{}"
preset = "{}"
mss = {}
delayed_ack = {}
handshake = {}
fin = {}
{}
[[flows]]
bytes = {}
repeat = {}
think = "{}ms"
drops = [{}]
"#,
            self.rate_mbps,
            self.delay_ms,
            self.loss,
            self.reverse_loss,
            self.profile,
            self.variant,
            self.mss,
            self.delayed_ack,
            self.handshake,
            self.fin,
            self.knobs.join("\n"),
            self.bytes,
            self.repeat,
            self.think_ms,
            drops.join(", ")
        )
    }

    /// Bounds on the filter drops of the data direction (SYN, data, FIN) and of the ACK direction
    /// (SYN-ACK, ACK): (forward min, forward max, reverse min, reverse max).
    ///
    /// Each listed transmission of a SYN, SYN-ACK, data segment or FIN is dropped exactly once,
    /// because the packet must eventually get through: the first transmission is always made, and
    /// a dropped transmission n is always followed by a transmission n + 1. A listed ACK number is
    /// dropped at most once (ACK k exists only if the receiver sends k ACKs).
    fn filter_bounds(&self) -> (u64, u64, u64, u64) {
        use std::collections::{BTreeMap, BTreeSet};
        // Per transfer and packet identity (kind, segment): the highest listed transmission.
        let mut fwd: BTreeMap<(u32, u8, u64), u32> = BTreeMap::new();
        let mut rev: BTreeMap<(u32, u8, u64), u32> = BTreeMap::new();
        let mut acks = BTreeSet::new();
        let n = |twice: bool| if twice { 2 } else { 1 };
        let note = |m: &mut BTreeMap<(u32, u8, u64), u32>, key: (u32, u8, u64), twice: bool| {
            let e = m.entry(key).or_default();
            *e = (*e).max(n(twice));
        };
        for d in &self.drops {
            let epochs: Vec<u32> = match d.epoch(self.repeat) {
                Some(e) => vec![e],
                None => (1..=self.repeat).collect(),
            };
            for e in epochs {
                match d.what {
                    Drop::Syn { twice } if self.handshake => note(&mut fwd, (e, 0, 0), twice),
                    Drop::Data { pick, twice } => note(&mut fwd, (e, 1, Drop::segment(pick, self.segments())), twice),
                    Drop::Fin { twice } if self.fin => note(&mut fwd, (e, 2, 0), twice),
                    Drop::SynAck { twice } if self.handshake => note(&mut rev, (e, 0, 0), twice),
                    Drop::Ack { number } => {
                        acks.insert((e, number));
                    }
                    _ => {}
                }
            }
        }
        let f: u64 = fwd.values().map(|&v| v as u64).sum();
        let r: u64 = rev.values().map(|&v| v as u64).sum();
        (f, f, r, r + acks.len() as u64)
    }
}

fn transfer() -> impl Strategy<Value = Transfer> {
    let tcp = (
        1u64..=200 * 1024,
        prop::sample::select(&MSSES[..]),
        prop::sample::select(&VARIANTS[..]),
        prop::sample::select(&PROFILES[..]),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
    );
    let loss = || prop_oneof![2 => Just(0.0), 3 => 0.0..=0.1f64];
    let link = (
        prop::sample::select(&[1u32, 10, 100][..]),
        prop::sample::select(&[1u32, 20, 100][..]),
        prop::option::weighted(0.3, 2u32..=40),
        loss(),
        loss(),
        prop::option::weighted(0.25, red_q(true)),
    );
    let repeat = (prop_oneof![6 => Just(1u32), 1 => 2u32..=3], 0u32..300);
    // Knobs that change when and how much is retransmitted: a small minimum RTO (spurious
    // timeouts), the duplicate-ACK threshold, a receive window, the initial window and ssthresh.
    let knobs = (
        prop::option::weighted(0.3, prop::sample::select(&["\"10ms\"", "\"200ms\""][..])),
        prop::option::weighted(0.3, 1u32..=5),
        prop::option::weighted(0.2, 4u64..=64),
        prop::option::weighted(0.3, 1u32..=10),
        prop::option::weighted(0.2, 2u64..=20),
    )
        .prop_map(|(rto_min, dupthresh, rwnd_kb, iw, ssthresh_segs)| {
            let mut k = Vec::new();
            if let Some(v) = rto_min {
                k.push(format!("rto_min = {v}"));
            }
            if let Some(v) = dupthresh {
                k.push(format!("dupthresh = {v}"));
            }
            if let Some(v) = rwnd_kb {
                k.push(format!("rwnd = \"{v}KB\""));
            }
            if let Some(v) = iw {
                k.push(format!("initial_window = {v}"));
            }
            if let Some(v) = ssthresh_segs {
                k.push(format!("initial_ssthresh = {}", v * 1000));
            }
            k
        });
    (tcp, knobs, link, repeat, prop::collection::vec(drop_strategy(), 0..=6), any::<u64>()).prop_map(
        |((bytes, mss, variant, profile, delayed_ack, handshake, fin), knobs, (rate_mbps, delay_ms, queue, loss, reverse_loss, red), (repeat, think_ms), drops, seed)| Transfer {
            bytes,
            mss,
            variant,
            profile,
            delayed_ack,
            handshake,
            fin,
            knobs,
            rate_mbps,
            delay_ms,
            queue,
            red,
            loss,
            reverse_loss,
            repeat,
            think_ms,
            drops,
            seed,
        },
    )
}

fn assert_conserved(r: &RunResult) {
    let m = &r.meta;
    assert_eq!(m.packets_created, m.packets_delivered + m.packets_dropped + m.packets_in_flight, "packets not conserved: {m:?}");
    let link_drops: u64 = r.links.iter().map(|l| l.dropped_pkts).sum();
    assert_eq!(link_drops, m.packets_dropped, "every drop happens at a link's ingress");
    for l in &r.links {
        assert_link_balance(l);
    }
    let waiting: u64 = r.links.iter().map(|l| l.offered_pkts - l.sent_pkts - l.dropped_pkts).sum();
    assert!(waiting <= m.packets_in_flight, "{waiting} packets waiting in queues but only {} in flight", m.packets_in_flight);
}

/// offered = sent + dropped + waiting, where the packets waiting in the queue number at most the
/// largest queue seen (a packet counts as sent when its transmission starts).
fn assert_link_balance(l: &LinkRow) {
    assert!(l.offered_pkts >= l.sent_pkts + l.dropped_pkts, "{}: offered {} < sent {} + dropped {}", l.link, l.offered_pkts, l.sent_pkts, l.dropped_pkts);
    let waiting = l.offered_pkts - l.sent_pkts - l.dropped_pkts;
    assert!(waiting <= l.max_queue_pkts, "{}: {waiting} packets unaccounted for, but the queue never held more than {}", l.link, l.max_queue_pkts);
    assert_eq!(l.dropped_pkts, l.dropped_queue + l.dropped_loss + l.dropped_filter + l.dropped_red_early + l.dropped_red_forced, "{}", l.link);
    assert_eq!(l.red_avg_mean.is_some(), l.red_avg_mean.is_some_and(|a| a.is_finite() && a >= 0.0), "{}: RED average {:?}", l.link, l.red_avg_mean);
    assert!(l.offered_bytes >= l.sent_bytes + l.dropped_bytes, "{}: bytes", l.link);
}

// ---------------------------------------------------------------------------------------------
// a. Every byte delivered exactly once, in order, whatever is dropped
// ---------------------------------------------------------------------------------------------

fn check_delivery(t: &Transfer) -> Result<(), TestCaseError> {
let text = t.toml();
    let r = run(&scenario(&text), t.seed).unwrap();
    let c: &ConnRow = &r.connections[0];
    let n = t.repeat as u64;
    prop_assert!(r.meta.completed, "run did not complete by {} s (seed {}):\n{text}\n{c:?}", r.meta.sim_time_s, t.seed);
    prop_assert_eq!((c.transfers, c.transfers_completed), (n as usize, n as usize));
    prop_assert_eq!(r.transfers.len(), n as usize);
    // The receiver counts in-order delivery only: exactly `bytes` a transfer, never more.
    prop_assert_eq!(c.bytes_delivered, n * t.bytes, "connection bytes_delivered (seed {}):\n{}", t.seed, text);
    prop_assert_eq!(c.bytes_acked, n * t.bytes, "the sender saw every byte acknowledged (seed {}):\n{}", t.seed, text);
    prop_assert!(c.complete_s.is_some());
    for (i, tr) in r.transfers.iter().enumerate() {
        prop_assert_eq!(tr.transfer as usize, i + 1);
        prop_assert_eq!(tr.bytes_delivered, t.bytes, "transfer {} bytes_delivered (seed {}):\n{}", i + 1, t.seed, text);
        prop_assert!(tr.delivered_s.is_some(), "transfer {}: no delivered_s (seed {}):\n{}", i + 1, t.seed, text);
        prop_assert!(tr.acked_s.is_some(), "transfer {}: no acked_s (seed {}):\n{}", i + 1, t.seed, text);
        prop_assert!(tr.delivered_s.unwrap() <= tr.acked_s.unwrap() + 1e-12, "delivered after acknowledged (seed {}):\n{}", t.seed, text);
        // Every segment was sent at least once.
        prop_assert!(tr.segs_sent >= t.segments(), "transfer {}: {} segments sent for {} (seed {}):\n{}", i + 1, tr.segs_sent, t.segments(), t.seed, text);
    }
    prop_assert!(c.bytes_sent >= n * t.bytes);
    assert_conserved(&r);
    // The drop filters dropped exactly the listed transmissions.
    let (fmin, fmax, rmin, rmax) = t.filter_bounds();
    let (f, rv) = (r.links[0].dropped_filter, r.links[1].dropped_filter);
    prop_assert!((fmin..=fmax).contains(&f), "data-direction filter drops {f}, expected {fmin}..={fmax} (seed {}):\n{}", t.seed, text);
    prop_assert!((rmin..=rmax).contains(&rv), "ACK-direction filter drops {rv}, expected {rmin}..={rmax} (seed {}):\n{}", t.seed, text);
    if let Some(q) = t.queue {
        prop_assert!(r.links.iter().all(|l| l.max_queue_pkts <= q as u64), "a queue exceeded its limit of {q}");
    } else {
        prop_assert!(r.links.iter().all(|l| l.dropped_queue == 0), "an unlimited queue dropped");
    }
    if t.red.is_none() {
        prop_assert!(r.links.iter().all(|l| l.dropped_red_early + l.dropped_red_forced == 0 && l.red_avg_mean.is_none()), "RED drops without RED");
    }
    Ok(())
}

proptest! {
    #![proptest_config(config(CASES))]

    #[test]
    fn any_drop_pattern_delivers_every_byte_once_in_order(t in transfer()) {
        check_delivery(&t)?;
    }
}

proptest! {
    #![proptest_config(config(24))]

    /// The same property for every preset on the same generated case.
    #[test]
    fn every_preset_delivers_every_byte_once_in_order(t in transfer()) {
        for p in VARIANTS {
            let mut t = t.clone();
            t.variant = p;
            check_delivery(&t)?;
        }
    }
}

// ---------------------------------------------------------------------------------------------
// b. Packet conservation at any moment
// ---------------------------------------------------------------------------------------------

/// A dumbbell with `pairs` flows (finite or bulk), small queues and losses: packets are forwarded
/// by the routers, queued and dropped at several places.
#[derive(Clone, Debug)]
struct Dumbbell {
    pairs: u32,
    queue: u32,
    /// RED on the bottleneck (both directions).
    red: Option<RedQ>,
    access_queue: Option<u32>,
    loss: f64,
    reverse_loss: f64,
    bytes: Vec<Option<u64>>,
    variant: &'static str,
    delayed_ack: bool,
    seed: u64,
}

impl Dumbbell {
    fn toml(&self) -> String {
        let mut s = format!(
            r#"name = "property-dumbbell"
duration = "20s"
[topology]
kind = "dumbbell"
pairs = {}
access_rate = "100Mbps"
access_delay = "2ms"
bottleneck_rate = "5Mbps"
bottleneck_delay = "15ms"
queue = {}
{}
loss = {}
reverse_loss = {}
[tcp]
preset = "{}"
delayed_ack = {}
"#,
            self.pairs,
            queue_toml(Some(self.queue), &self.red),
            self.access_queue.map(|q| format!("access_queue = {q}")).unwrap_or_default(),
            self.loss,
            self.reverse_loss,
            self.variant,
            self.delayed_ack
        );
        for (i, b) in self.bytes.iter().enumerate() {
            let bytes = b.map(|b| b.to_string()).unwrap_or_else(|| "\"unlimited\"".into());
            s += &format!("[[flows]]\nfrom = \"s{n}\"\nto = \"r{n}\"\nstart = \"{}ms\"\nbytes = {bytes}\n", 37 * i, n = i + 1);
        }
        s
    }
}

prop_compose! {
    fn dumbbell()(pairs in 1u32..=3)(
        pairs in Just(pairs),
        queue in 2u32..=30,
        red in prop::option::weighted(0.4, red_q(false)),
        access_queue in prop::option::of(2u32..=10),
        loss in prop_oneof![Just(0.0), 0.0..=0.05f64],
        reverse_loss in prop_oneof![Just(0.0), 0.0..=0.05f64],
        bytes in prop::collection::vec(prop::option::of(1u64..=300_000), pairs as usize),
        variant in prop::sample::select(&VARIANTS[..]),
        delayed_ack in any::<bool>(),
        seed in any::<u64>(),
    ) -> Dumbbell {
        Dumbbell { pairs, queue, red, access_queue, loss, reverse_loss, bytes, variant, delayed_ack, seed }
    }
}

/// Step a world event by event, checking created = delivered + dropped + in flight after each.
fn step_checked(w: &mut World, max: u64) -> u64 {
    let mut n = 0;
    let check = |w: &World, n: u64| {
        let (created, delivered, dropped, in_flight) = w.packet_balance();
        assert_eq!(created, delivered + dropped + in_flight, "after {n} events: created {created} != delivered {delivered} + dropped {dropped} + in flight {in_flight}");
    };
    check(w, 0);
    while n < max && w.step() {
        n += 1;
        check(w, n);
    }
    n
}

/// The world after `events` events, finished there: its link rows are a snapshot of that moment.
fn snapshot(s: &Scenario, seed: u64, events: u64) -> RunResult {
    let mut w = World::build(s, seed).unwrap();
    for _ in 0..events {
        if !w.step() {
            break;
        }
    }
    w.finish()
}

proptest! {
    #![proptest_config(config(CASES))]

    /// Single link: every packet is offered to exactly one link direction, so the links' offered
    /// counts add up to the packets created, at any moment.
    #[test]
    fn packets_are_conserved_at_every_event_single_link(t in transfer(), frac in 0.0..1.0f64) {
        let text = t.toml();
        let s = scenario(&text);
        let mut w = World::build(&s, t.seed).unwrap();
        let total = step_checked(&mut w, u64::MAX);
        let end = w.finish();
        assert_conserved(&end);
        // A snapshot in the middle of the run.
        let k = (total as f64 * frac) as u64;
        let mid = snapshot(&s, t.seed, k);
        prop_assert_eq!(mid.meta.events, k);
        assert_conserved(&mid);
        let offered: u64 = mid.links.iter().map(|l| l.offered_pkts).sum();
        prop_assert_eq!(offered, mid.meta.packets_created, "after {} events (seed {}):\n{}", k, t.seed, text);
        let sent: u64 = mid.links.iter().map(|l| l.sent_pkts).sum();
        prop_assert!(sent >= mid.meta.packets_delivered, "delivered {} > sent {sent}", mid.meta.packets_delivered);
        // Also at the end, once every flow is done.
        let offered: u64 = end.links.iter().map(|l| l.offered_pkts).sum();
        prop_assert_eq!(offered, end.meta.packets_created);
    }

    /// Dumbbell: forwarding through the routers, queue overflow at several links.
    #[test]
    fn packets_are_conserved_at_every_event_dumbbell(d in dumbbell(), frac in 0.0..1.0f64) {
        let text = d.toml();
        let s = scenario(&text);
        let mut w = World::build(&s, d.seed).unwrap();
        let total = step_checked(&mut w, 400_000);
        assert_conserved(&w.finish());
        let k = (total as f64 * frac) as u64;
        let mid = snapshot(&s, d.seed, k);
        assert_conserved(&mid);
        let sent: u64 = mid.links.iter().map(|l| l.sent_pkts).sum();
        prop_assert!(sent >= mid.meta.packets_delivered);
        // Rows 0 and 1 are the bottleneck's two directions, the access links follow.
        for l in &mid.links[..2] {
            prop_assert!(l.max_queue_pkts <= d.queue as u64, "{}: queue {} above its limit {}", l.link, l.max_queue_pkts, d.queue);
        }
        if let Some(q) = d.access_queue {
            for l in &mid.links[2..] {
                prop_assert!(l.max_queue_pkts <= q as u64, "{}: queue {} above its limit {q}", l.link, l.max_queue_pkts);
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// c. Determinism
// ---------------------------------------------------------------------------------------------

fn json(r: &RunResult) -> String {
    serde_json::to_string(r).expect("a result serialises")
}

/// Flow B's TCP settings, changed between two runs.
#[derive(Clone, Debug)]
struct TcpB {
    variant: &'static str,
    iw: u32,
    mss: u64,
    delayed_ack: bool,
    handshake: bool,
}

impl TcpB {
    fn toml(&self) -> String {
        format!(
            "{{ preset = \"{}\", initial_window = {}, mss = {}, delayed_ack = {}, handshake = {} }}",
            self.variant, self.iw, self.mss, self.delayed_ack, self.handshake
        )
    }
}

fn tcp_b() -> impl Strategy<Value = TcpB> {
    (prop::sample::select(&VARIANTS[..]), 1u32..=10, prop::sample::select(&MSSES[..]), any::<bool>(), any::<bool>())
        .prop_map(|(variant, iw, mss, delayed_ack, handshake)| TcpB { variant, iw, mss, delayed_ack, handshake })
}

/// Two flows on disjoint links of one custom topology: a1 → r → a2 and b1 → r → b2 through a
/// shared router r, each link with its own random loss in both directions.
#[derive(Clone, Debug)]
struct TwoFlows {
    loss: [f64; 8],
    /// Flow A's bytes (None: bulk until the end of the run).
    bytes_a: Option<u64>,
    bytes_b: Option<u64>,
    variant_a: &'static str,
    b1: TcpB,
    b2: TcpB,
    seed: u64,
}

impl TwoFlows {
    fn toml(&self, b: &TcpB) -> String {
        let bytes = |x: Option<u64>| x.map(|b| b.to_string()).unwrap_or_else(|| "\"unlimited\"".into());
        format!(
            r#"name = "two-flows"
duration = "30s"
[topology]
kind = "custom"
nodes = ["a1", "a2", "b1", "b2", "r"]
links = [
  {{ name = "la1", a = "a1", b = "r", rate = "100Mbps", delay = "5ms", queue = 20, loss = {}, reverse_loss = {} }},
  {{ name = "la2", a = "r", b = "a2", rate = "10Mbps", delay = "15ms", queue = 20, loss = {}, reverse_loss = {} }},
  {{ name = "lb1", a = "b1", b = "r", rate = "100Mbps", delay = "5ms", queue = 20, loss = {}, reverse_loss = {} }},
  {{ name = "lb2", a = "r", b = "b2", rate = "10Mbps", delay = "25ms", queue = 20, loss = {}, reverse_loss = {} }},
]
[[flows]]
name = "A"
from = "a1"
to = "a2"
bytes = {}
tcp = {{ preset = "{}" }}
[[flows]]
name = "B"
from = "b1"
to = "b2"
start = "5ms"
bytes = {}
tcp = {}
"#,
            self.loss[0],
            self.loss[1],
            self.loss[2],
            self.loss[3],
            self.loss[4],
            self.loss[5],
            self.loss[6],
            self.loss[7],
            bytes(self.bytes_a),
            self.variant_a,
            bytes(self.bytes_b),
            b.toml()
        )
    }
}

prop_compose! {
    fn two_flows()(
        loss in prop::array::uniform8(0.0..=0.03f64),
        bytes_a in prop::option::of(1u64..=2_000_000),
        bytes_b in prop::option::of(1u64..=2_000_000),
        variant_a in prop::sample::select(&VARIANTS[..]),
        b1 in tcp_b(),
        b2 in tcp_b(),
        seed in any::<u64>(),
    ) -> TwoFlows {
        TwoFlows { loss, bytes_a, bytes_b, variant_a, b1, b2, seed }
    }
}

/// The counters of a link row fixed once flow A is done, whenever the run ends afterwards: what
/// was offered and dropped at the link's ingress. (Packets still waiting in the queue when A
/// finishes are sent while the other flow runs on, so `sent_pkts` and the time averages depend on
/// when the run stops, which flow B decides.)
fn link_ingress_counts(l: &LinkRow) -> serde_json::Value {
    serde_json::json!({
        "link": l.link,
        "offered_pkts": l.offered_pkts,
        "offered_bytes": l.offered_bytes,
        "dropped_queue": l.dropped_queue,
        "dropped_loss": l.dropped_loss,
        "dropped_filter": l.dropped_filter,
        "dropped_red_early": l.dropped_red_early,
        "dropped_red_forced": l.dropped_red_forced,
        "dropped_bytes": l.dropped_bytes,
    })
}

proptest! {
    #![proptest_config(config(CASES))]

    #[test]
    fn same_scenario_and_seed_give_identical_results(t in transfer(), d in dumbbell()) {
        for (text, seed) in [(t.toml(), t.seed), (d.toml(), d.seed)] {
            let s = scenario(&text);
            let a = json(&run(&s, seed).unwrap());
            let b = json(&run(&s, seed).unwrap());
            prop_assert!(a == b, "two runs differ (seed {seed}):\n{text}");
            // A scenario re-read from its own JSON echo runs the same.
            let echo = Scenario::from_value(s.to_json(), &[]).unwrap();
            let c = json(&run(&echo, seed).unwrap());
            prop_assert!(a == c, "the scenario's JSON echo runs differently (seed {seed}):\n{text}");
        }
    }

    /// Transmission ends with nothing waiting behind them stay out of the event queue
    /// (docs/determinism.md): the results, ties included, are those of a world that queues
    /// every end, but for the count of events processed.
    #[test]
    fn leaving_idle_transmission_ends_out_of_the_queue_changes_nothing_else(t in transfer(), d in dumbbell()) {
        for (text, seed) in [(t.toml(), t.seed), (d.toml(), d.seed)] {
            let s = scenario(&text);
            let lazy = run(&s, seed).unwrap();
            let mut w = World::build(&s, seed).unwrap();
            w.queue_every_transmission_end();
            w.run();
            let eager = w.finish();
            let sent: u64 = lazy.links.iter().map(|l| l.sent_pkts).sum();
            // Each transmission's end is an event of the eager world; the lazy one skips some.
            prop_assert!(eager.meta.events >= lazy.meta.events);
            // ... and the arrival at every chained direction (net/vfifo.rs): at most two events a packet sent.
            prop_assert!(eager.meta.events - lazy.meta.events <= 2 * sent);
            let (mut a, mut b) = (serde_json::to_value(&lazy).unwrap(), serde_json::to_value(&eager).unwrap());
            a["meta"]["events"] = 0.into();
            b["meta"]["events"] = 0.into();
            prop_assert!(a == b, "the results differ from those with every transmission end queued (seed {seed}):\n{text}");
        }
    }

    #[test]
    fn another_flows_tcp_settings_do_not_change_a_flow_on_disjoint_links(x in two_flows()) {
        let (t1, t2) = (x.toml(&x.b1), x.toml(&x.b2));
        let r1 = run(&scenario(&t1), x.seed).unwrap();
        let r2 = run(&scenario(&t2), x.seed).unwrap();
        let ctx = || format!("seed {}\n--- run 1:\n{t1}\n--- run 2:\n{t2}", x.seed);
        prop_assert_eq!(&r1.flows_tcp[0], &r2.flows_tcp[0]);
        let a1 = serde_json::to_value(&r1.connections[0]).unwrap();
        let a2 = serde_json::to_value(&r2.connections[0]).unwrap();
        prop_assert!(a1 == a2, "flow A's connection row changed with flow B's TCP settings:\n{a1}\n{a2}\n{}", ctx());
        let tr = |r: &RunResult| serde_json::to_value(r.transfers.iter().filter(|t| t.flow == 0).collect::<Vec<_>>()).unwrap();
        prop_assert!(tr(&r1) == tr(&r2), "flow A's transfer rows changed:\n{}\n{}\n{}", tr(&r1), tr(&r2), ctx());
        // Links la1 and la2 (rows 0 to 3) carry flow A only.
        for i in 0..4 {
            prop_assert_eq!(link_ingress_counts(&r1.links[i]), link_ingress_counts(&r2.links[i]), "{}", ctx());
        }
        // When both runs end at the same moment (the time limit), the time-averaged link rows match too.
        if r1.meta.sim_time_s == r2.meta.sim_time_s {
            for i in 0..4 {
                let (l1, l2) = (serde_json::to_value(&r1.links[i]).unwrap(), serde_json::to_value(&r2.links[i]).unwrap());
                prop_assert!(l1 == l2, "link row {i}:\n{l1}\n{l2}\n{}", ctx());
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// d. Applications: every request and response delivered once, packets conserved, determinism,
//    state freed
// ---------------------------------------------------------------------------------------------

/// The application kinds and modes: (kind, oneway, extra keys).
const APP_KINDS: [(&str, bool, &str); 7] = [
    ("reqresp", false, ""),
    ("reqresp", true, ""),
    ("http10", false, ""),
    ("http10", true, "objects = { exponential = 2 }\ninterobject = { exponential = \"10ms\" }\n"),
    ("http11", false, "keep_alive = true\n"),
    ("ftp", false, "direction = \"upload\"\n"),
    ("ftp", false, ""),
];

/// One application on a dumbbell of two pairs (so that its server may be drawn per page among two)
/// beside a bulk flow, with random loss, a small bottleneck queue and deterministic drops.
#[derive(Clone, Debug)]
struct AppCase {
    kind: usize,
    request: u64,
    response: u64,
    /// Exchanges (pages for the web clients).
    count: u32,
    two_servers: bool,
    queue: u32,
    loss: f64,
    reverse_loss: f64,
    /// (drop kind 0..4, object 1..=4, response segment pick, twice).
    drops: Vec<(u8, u32, u32, bool)>,
    flow_bytes: Option<u64>,
    profile: &'static str,
    seed: u64,
}

impl AppCase {
    fn toml(&self) -> String {
        let (kind, oneway, extra) = APP_KINDS[self.kind];
        let web = kind.starts_with("http");
        let handshake = !oneway && self.profile != "ns2";
        let mut drops = Vec::new();
        for &(k, object, pick, twice) in &self.drops {
            let tx = if twice { "[1, 2]" } else { "[1]" };
            let segs = (self.response + 535) / 536;
            let d = match k {
                0 if kind != "http11" => format!("{{ kind = \"request\", object = {object}, transmissions = {tx} }}"),
                1 if kind != "http11" => format!("{{ kind = \"response\", segment = {}, object = {object}, transmissions = {tx} }}", 1 + pick as u64 % segs),
                2 if handshake => format!("{{ kind = \"syn\", object = {object}, transmissions = {tx} }}"),
                3 if handshake => format!("{{ kind = \"synack\", object = {object}, transmissions = {tx} }}"),
                _ => continue,
            };
            drops.push(d);
        }
        let sizes = if kind == "ftp" { format!("file = {}\n", self.response) } else { format!("request = {}\nresponse = {}\n", self.request, self.response) };
        let count = if web { format!("pages = {}\n", self.count) } else { format!("count = {}\n", self.count) };
        let server = if self.two_servers && !extra.contains("keep_alive") { "[\"s1\", \"s2\"]" } else { "\"s1\"" };
        let flow = match self.flow_bytes {
            Some(b) => format!("[[flows]]\nfrom = \"s2\"\nto = \"r2\"\nbytes = {b}\n"),
            None => String::new(),
        };
        format!(
            "[topology]\nkind = \"dumbbell\"\npairs = 2\naccess_rate = \"100Mbps\"\naccess_delay = \"2ms\"\nbottleneck_rate = \"5Mbps\"\nbottleneck_delay = \"10ms\"\n\
             queue = {}\nloss = {}\nreverse_loss = {}\n[tcp]\nprofile = \"{}\"\nmss = 536\n{flow}\
             [[apps]]\nkind = \"{kind}\"\nmode = \"{}\"\nclient = \"r1\"\nserver = {server}\n{sizes}{count}embedded = {{ uniform = [0, 3] }}\nthink = {{ exponential = \"100ms\" }}\n{extra}drops = [{}]\n",
            self.queue,
            self.loss,
            self.reverse_loss,
            self.profile,
            if oneway { "oneway" } else { "twoway" },
            drops.join(", ")
        )
        .replace("embedded = { uniform = [0, 3] }\n", if web && !extra.contains("objects") { "embedded = { uniform = [0, 3] }\n" } else { "" })
        // `mode` is a key of reqresp and http10 only (refused on the other kinds at any value).
        .replace("mode = \"twoway\"\n", if matches!(kind, "reqresp" | "http10") { "mode = \"twoway\"\n" } else { "" })
    }
}

prop_compose! {
    fn app_case()(
        kind in 0..APP_KINDS.len(),
        request in 1u64..=3000,
        response in 1u64..=40_000,
        count in 1u32..=4,
        two_servers in any::<bool>(),
        queue in 4u32..=30,
        loss in prop::sample::select(&[0.0, 0.0, 0.01, 0.03, 0.08][..]),
        reverse_loss in prop::sample::select(&[0.0, 0.0, 0.01, 0.05][..]),
        drops in prop::collection::vec((0u8..4, 1u32..=4, any::<u32>(), any::<bool>()), 0..=3),
        flow_bytes in prop::option::of(1u64..=200_000),
        profile in prop::sample::select(&["rfc", "ns2", "linux22", "bsd"][..]),
        seed in any::<u64>(),
    ) -> AppCase {
        AppCase { kind, request, response, count, two_servers, queue, loss, reverse_loss, drops, flow_bytes, profile, seed }
    }
}

/// Run an application case event by event: packets conserved after every event, every endpoint
/// freed at the end.
fn run_app_case(c: &AppCase) -> Result<RunResult, TestCaseError> {
    let text = c.toml();
    let s = scenario(&text);
    let mut w = World::build(&s, c.seed).unwrap();
    step_checked(&mut w, 5_000_000);
    prop_assert_eq!(w.live_connections(), 0, "connection state left after every object completed (seed {}):\n{}", c.seed, text);
    let r = w.finish_run().unwrap();
    assert_conserved(&r);
    Ok(r)
}

proptest! {
    #![proptest_config(config(CASES))]

    /// Whatever is lost (random loss both ways, small queues, dropped GETs, response segments,
    /// SYNs and SYN-ACKs, first transmissions and retransmissions), every object of every kind and
    /// mode completes: its request is delivered to the server and its response to the client,
    /// exactly (the receivers count in-order delivery only, so a byte delivered twice or out of
    /// order would show), the records add up, and no connection state is left.
    #[test]
    fn every_request_and_response_delivered_once_in_order_and_state_freed(c in app_case()) {
        let text = c.toml();
        let r = run_app_case(&c)?;
        prop_assert!(r.meta.completed, "did not complete (seed {}):\n{}", c.seed, text);
        let (kind, _, _) = APP_KINDS[c.kind];
        let web = kind.starts_with("http");
        if web {
            prop_assert_eq!(r.pages.len(), c.count as usize);
            for p in &r.pages {
                let objs: Vec<_> = r.objects.iter().filter(|o| o.page == Some(p.page)).collect();
                prop_assert_eq!(p.objects as usize, objs.len());
                prop_assert!(p.complete_s.is_some(), "page {} incomplete (seed {}):\n{}", p.page, c.seed, text);
                prop_assert_eq!(p.bytes, objs.iter().map(|o| o.response_bytes).sum::<u64>());
            }
        } else {
            prop_assert_eq!(r.objects.len(), c.count as usize);
        }
        for (i, o) in r.objects.iter().enumerate() {
            prop_assert_eq!(o.object as usize, i + 1);
            prop_assert!(!o.aborted, "object {} aborted (seed {}):\n{}", o.object, c.seed, text);
            prop_assert_eq!(o.request_delivered, o.request_bytes, "object {} request (seed {}):\n{}", o.object, c.seed, text);
            prop_assert_eq!(o.bytes_delivered, o.response_bytes, "object {} response (seed {}):\n{}", o.object, c.seed, text);
            let (req, first, done, acked) = (o.request_s.unwrap(), o.first_byte_s.unwrap(), o.delivered_s.unwrap(), o.acked_s.unwrap());
            prop_assert!(o.start_s <= req && req < first && first <= done && done <= acked, "object {} times out of order {:?} (seed {}):\n{}", o.object, o, c.seed, text);
            prop_assert!((o.transfer_time_s.unwrap() - (acked - req)).abs() < 1e-9);
        }
        // The bulk flow beside it completes too.
        if c.flow_bytes.is_some() {
            prop_assert_eq!(r.connections[0].bytes_delivered, c.flow_bytes.unwrap());
        }
    }

    /// Same scenario, same seed: byte-identical results; the application's draws do not depend on
    /// what the network did (its think times and sizes come from streams of its own).
    #[test]
    fn applications_are_deterministic(c in app_case()) {
        let s = scenario(&c.toml());
        let a = json(&run(&s, c.seed).unwrap());
        let b = json(&run(&s, c.seed).unwrap());
        prop_assert!(a == b, "two runs differ (seed {}):\n{}", c.seed, c.toml());
    }
}
