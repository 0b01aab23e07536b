//! The scenario schema: the one source of truth for every knob of an experiment, with its default.
//! Scenarios are TOML files (or the same structure as JSON / a Python dict). Units are written out
//! (`"10Mbps"`, `"35ms"`, `"16KB"`). Unknown keys and bad values are errors that name the key path
//! and what was expected. Named topologies expand into the generic nodes-and-links form.
//!
//! ```toml
//! name = "demo"
//! duration = "30s"                 # simulated time of the run (default: until every transfer is done)
//!
//! [topology]
//! kind = "single_link"             # nodes "sender" and "receiver"
//! rate = "10Mbps"
//! delay = "35ms"                   # one way
//! queue = 50                       # packets; or { packets = 50, bytes = "64KB" }; or "unlimited";
//!                                  # or RED: { packets = 50, red = { min_th = 5, max_th = 15 } }
//! loss = 0.01                      # Bernoulli loss, sender -> receiver
//!
//! [tcp]                            # defaults of every flow: a profile, then knob overrides
//! profile = "rfc"
//! variant = "newreno"
//!
//! [[flows]]
//! bytes = "1MB"                    # or "unlimited"
//! ```

use crate::net::{FilterKind, QueueLimit, RedSpec};
use crate::tcp::{TcpConfig, TcpSpec};
use crate::units::{format_duration, Duration, Probability, Rate, Size, Time, MAX_TIME};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::sync::Arc;

/// A scenario error: where in the scenario (a dotted key path) and what was wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioError {
    pub path: String,
    pub message: String,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        if self.path.is_empty() || self.path == "." {
            write!(f, "{}", self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}

impl std::error::Error for ScenarioError {}

pub fn err<T>(path: impl Into<String>, message: impl Into<String>) -> Result<T, ScenarioError> {
    Err(ScenarioError { path: path.into(), message: message.into() })
}

fn default_seed() -> u64 {
    1
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// A name for the experiment (used in results and file names).
    #[serde(default)]
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// Run seed used when none is given to `run` (default 1).
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Simulated time the run lasts. Default: until every finite transfer is complete (required
    /// when a flow is unlimited).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration: Option<Duration>,
    /// Instruments count from this time on (Mathis et al. exclude the slow-start overshoot):
    /// connection and link counters, averages and goodput cover [warmup, end]; per-transfer
    /// rows, maxima and RTT extremes cover the whole run. Needs a `duration` beyond it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup: Option<Duration>,
    pub topology: Topology,
    /// TCP defaults of every flow: `profile` (default `rfc`) and knob overrides.
    #[serde(default)]
    pub tcp: TcpSpec,
    #[serde(default)]
    pub flows: Vec<FlowSpec>,
    /// Applications (`[[apps]]`: request/response exchanges; see `app/spec.rs`), after the flows.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub apps: Vec<crate::app::spec::AppSpec>,
    /// Packet captures written during the run (`[[capture]]`; see docs/traces.md).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub capture: Vec<crate::trace::CaptureSpec>,
    /// Time series recorded during the run (`[[series]]`; see docs/series.md). Off by default.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub series: Vec<crate::series::SeriesSpec>,
    /// The expansion made while validating (not a key; never written out).
    #[serde(skip)]
    pub expansion: Expansion,
}

/// What a scenario expands to for a run with a seed: the network, the flows after `count`
/// expansion and the applications bound to the network.
#[derive(Debug)]
pub struct Expanded {
    pub seed: u64,
    pub net: Arc<Network>,
    pub flows: Arc<Vec<ResolvedFlow>>,
    pub apps: Vec<crate::app::spec::ResolvedApp>,
}

/// The expansion `from_tree` made while validating a scenario, kept with it so that a run does
/// not expand the network and the flows again (for 10^5 flows that was most of the set-up). It
/// is used only while the scenario still equals the one it was made from (`Scenario::expanded`
/// compares them: the fields are public and may have changed since), and it is no part of the
/// scenario's identity: two scenarios that differ only here are equal.
#[derive(Clone, Default)]
pub struct Expansion(Option<(Arc<Scenario>, Arc<Expanded>)>);

impl PartialEq for Expansion {
    fn eq(&self, _: &Expansion) -> bool {
        true
    }
}

impl fmt::Debug for Expansion {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(if self.0.is_some() { "Expansion(kept)" } else { "Expansion(none)" })
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TopologyKind {
    /// Two nodes, `sender` and `receiver`, and one link.
    SingleLink,
    /// `pairs` senders `s1..sN` and receivers `r1..rN` on access links to routers `left` and
    /// `right`, joined by the bottleneck link.
    Dumbbell,
    /// Nodes and links given explicitly.
    Custom,
}

/// How a link's loss probability is turned into drops.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LossPattern {
    #[default]
    Random,
    Periodic,
}

impl LossPattern {
    pub fn is_random(&self) -> bool {
        *self == LossPattern::Random
    }
}

/// A topology. Which fields apply depends on `kind`; the others are refused.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Topology {
    pub kind: TopologyKind,
    /// How every link's `loss` / `reverse_loss` probability p drops packets: `"random"`
    /// (independent Bernoulli draws, the default) or `"periodic"` (deterministic: every
    /// 1/p-th packet offered, the loss of Mathis et al.'s sawtooth derivation, Table 1).
    #[serde(default, skip_serializing_if = "LossPattern::is_random")]
    pub loss_pattern: LossPattern,
    // single_link
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<Rate>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay: Option<Duration>,
    /// Queue of the single link or of the bottleneck, both directions (default: unlimited).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "QueueTable::de_opt")]
    pub queue: Option<QueueSpec>,
    /// Bernoulli loss probability on the single link or the bottleneck, forward direction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss: Option<Probability>,
    /// Bernoulli loss probability in the reverse (ACK) direction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reverse_loss: Option<Probability>,
    // dumbbell
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pairs: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access_rate: Option<Rate>,
    /// One delay for every access link, or one per pair.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access_delay: Option<OneOrMany<Duration>>,
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "QueueTable::de_opt")]
    pub access_queue: Option<QueueSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bottleneck_rate: Option<Rate>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bottleneck_delay: Option<Duration>,
    // custom
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodes: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub links: Option<Vec<LinkSpec>>,
    /// Host groups (any kind of topology): `count` hosts, each on an access link of its own to a
    /// node of the topology, their names and per-member delays from templates and random
    /// variables (`HostGroup`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub groups: Option<Vec<HostGroup>>,
}

/// A group of hosts, each joined to a node of the topology by an access link of its own:
///
/// ```toml
/// [[topology.groups]]
/// name = "x{i}"                          # members x1, x2, … (template.rs)
/// count = 4
/// attach = "r{i/2}"                      # x1, x2 on r1; x3, x4 on r2 (a node, or a template)
/// rate = "5Mbps"
/// delay = { uniform = ["1ms", "5ms"] }   # drawn once per member and run
/// queue = 50
/// ```
///
/// Member k's access link is named `access_{member}` (or `link`, a template) and runs from the
/// member (a) to its router (b). A random `delay` is drawn per member, in member order, from the
/// stream `"group:{name}:delay"` of the run's seed: the same seed gives the same delays, and no
/// other component's draws move them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostGroup {
    pub name: String,
    pub count: u32,
    pub attach: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub link: String,
    pub rate: Rate,
    pub delay: crate::rv::RandomDuration,
    #[serde(default, deserialize_with = "QueueTable::de")]
    pub queue: QueueSpec,
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "QueueTable::de_opt")]
    pub reverse_queue: Option<QueueSpec>,
    #[serde(default, deserialize_with = "crate::units::de_probability")]
    pub loss: f64,
    #[serde(default, deserialize_with = "crate::units::de_probability")]
    pub reverse_loss: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum OneOrMany<T> {
    One(T),
    Many(Vec<T>),
}

/// A link of the generic form: full duplex between nodes `a` and `b`; "forward" is a → b.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    pub a: String,
    pub b: String,
    pub rate: Rate,
    pub delay: Duration,
    /// Queue of both directions (default unlimited); `reverse_queue` overrides b → a.
    #[serde(default, deserialize_with = "QueueTable::de")]
    pub queue: QueueSpec,
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "QueueTable::de_opt")]
    pub reverse_queue: Option<QueueSpec>,
    /// Bernoulli loss probability a → b (a plain `f64` for the link code; read as a `Probability`).
    #[serde(default, deserialize_with = "crate::units::de_probability")]
    pub loss: f64,
    /// Bernoulli loss probability b → a.
    #[serde(default, deserialize_with = "crate::units::de_probability")]
    pub reverse_loss: f64,
}

/// A queue: `100` (packets), `"unlimited"`, or `{ packets = 100, bytes = "64KB" }` (DropTail);
/// a `red` table (or `kind = "red"`, RED with its defaults) puts RED in front of the limit:
/// `{ packets = 100, red = { min_th = 40, max_th = 80 } }`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QueueTable {
    /// `droptail`, or `red` when `red` is set.
    #[serde(default)]
    pub kind: QueueKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub packets: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<Size>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub red: Option<RedSpec>,
}

pub type QueueSpec = QueueTable;

struct QueueVisitor;

impl<'de> serde::de::Visitor<'de> for QueueVisitor {
    type Value = QueueTable;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a queue: a packet count such as 100, \"unlimited\", or a table such as { packets = 100, bytes = \"64KB\" } or { packets = 100, red = { min_th = 5, max_th = 15 } }")
    }
    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<QueueTable, E> {
        Ok(QueueTable { packets: Some(v), ..Default::default() })
    }
    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<QueueTable, E> {
        if v < 0 {
            return Err(E::custom(format!("expected a non-negative packet count, got {v}")));
        }
        self.visit_u64(v as u64)
    }
    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<QueueTable, E> {
        match v {
            "unlimited" => Ok(QueueTable::default()),
            _ => Err(E::custom(format!("expected a packet count, \"unlimited\" or a table, got {v:?}"))),
        }
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<QueueTable, A::Error> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct T {
            #[serde(default)]
            kind: Option<QueueKind>,
            #[serde(default)]
            packets: Option<u64>,
            #[serde(default)]
            bytes: Option<Size>,
            #[serde(default)]
            red: Option<RedSpec>,
        }
        let t = T::deserialize(serde::de::value::MapAccessDeserializer::new(map))?;
        let red = match (t.kind, t.red) {
            (Some(QueueKind::Droptail), Some(_)) => {
                return Err(serde::de::Error::custom("a `red` table needs kind = \"red\" (or no `kind`)"));
            }
            (Some(QueueKind::Red), None) => Some(RedSpec::default()),
            (_, red) => red,
        };
        let kind = if red.is_some() { QueueKind::Red } else { QueueKind::Droptail };
        Ok(QueueTable { kind, packets: t.packets, bytes: t.bytes, red })
    }
}

impl QueueTable {
    fn de<'de, D: serde::Deserializer<'de>>(d: D) -> Result<QueueTable, D::Error> {
        d.deserialize_any(QueueVisitor)
    }
    fn de_opt<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<QueueTable>, D::Error> {
        Self::de(d).map(Some)
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum QueueKind {
    #[default]
    Droptail,
    /// Random Early Detection (Floyd & Jacobson 1993) in front of the limit; see `net/red.rs`.
    Red,
}

impl QueueSpec {
    pub fn limit(&self) -> QueueLimit {
        QueueLimit { packets: self.packets, bytes: self.bytes.map(|s| s.0) }
    }

    /// Check the RED parameters; `path` is the queue's key path.
    pub fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        match &self.red {
            Some(r) => r.validate().map_err(|(k, m)| ScenarioError { path: format!("{path}.red.{k}"), message: m }),
            None => Ok(()),
        }
    }
}

/// How many transfers a flow makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum Count {
    N(u32),
    Unlimited(crate::tcp::config::Unlimited),
}

impl<'de> Deserialize<'de> for Count {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        crate::tcp::config::number_or_word(
            d,
            "a number of transfers (at least 1) or \"unlimited\"",
            "unlimited",
            Count::Unlimited(crate::tcp::config::Unlimited::Unlimited),
            |n| if n >= 1 && n <= u32::MAX as i64 { Ok(Count::N(n as u32)) } else { Err("out of range".into()) },
            |_| Err(String::new()),
        )
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowSpec {
    /// Name of the flow; `{i}` is replaced by 1..count. Default `flow{index}`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// Sending node (default: `sender` on a single link). `{i}` is replaced by 1..count.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub from: String,
    /// Receiving node (default: `receiver` on a single link).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub to: String,
    /// Number of flows this entry stands for (default 1).
    #[serde(default = "one")]
    pub count: u32,
    /// When the first transfer starts (default 0s); with `count`, `start_spacing` apart.
    #[serde(default)]
    pub start: Duration,
    #[serde(default)]
    pub start_spacing: Duration,
    /// Bytes of each transfer, or `"unlimited"` (bulk until the end of the run).
    pub bytes: crate::tcp::config::Limit,
    /// Transfers made one after another on fresh connections (default 1; `"unlimited"`).
    #[serde(default = "count_one")]
    pub repeat: Count,
    /// Pause between the end of one transfer and the start of the next.
    #[serde(default)]
    pub think: Duration,
    /// TCP knobs of this flow, over the scenario's `[tcp]`.
    #[serde(default)]
    pub tcp: TcpSpec,
    /// Deterministic drops of this flow's packets.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub drops: Vec<DropSpec>,
    /// Chosen packets of this flow held back `by` a duration before they enter their first link
    /// (packet reordering); the same selectors as `drops`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub delays: Vec<DropSpec>,
}

fn one() -> u32 {
    1
}
fn count_one() -> Count {
    Count::N(1)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DropKind {
    Syn,
    Synack,
    Data,
    Ack,
    Fin,
}

/// Drop chosen packets of a flow where they leave their host: `{ kind = "syn" }` (the first SYN),
/// `{ kind = "syn", transmissions = [1, 2] }`, `{ kind = "data", segment = 3 }`,
/// `{ kind = "ack", number = 2 }` (the second ACK).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DropSpec {
    pub kind: DropKind,
    /// Data segment number (1-based, by sequence), for `kind = "data"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub segment: Option<u64>,
    /// ACK number (1-based), for `kind = "ack"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub number: Option<u64>,
    /// Which transmissions to drop (default `[1]`, the first).
    #[serde(default = "first_tx")]
    pub transmissions: Vec<u32>,
    /// Apply to this transfer of a repeating flow only (1-based; default: every transfer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transfer: Option<u32>,
    /// How long a `delays` entry holds the packet (required there, refused in `drops`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by: Option<Duration>,
}

fn first_tx() -> Vec<u32> {
    vec![1]
}

impl DropSpec {
    /// The filter this entry selects, checked at `path` (`flows[i].drops[k]` or `.delays[k]`)
    /// against the flow's number of transfers.
    fn checked_filter(&self, dpath: &str, repeat: Option<u32>) -> Result<FilterKind, ScenarioError> {
        let d = self;
        let kind = d.filter_kind(dpath)?;
        if d.transmissions.is_empty() {
            return err(format!("{dpath}.transmissions"), "expected transmission numbers from 1");
        }
        if let Some(k) = d.transmissions.iter().position(|&t| t == 0) {
            return err(format!("{dpath}.transmissions[{k}]"), "expected a transmission number from 1");
        }
        if d.transfer == Some(0) {
            return err(format!("{dpath}.transfer"), "expected a transfer number from 1 (transfers count from 1)");
        }
        if let (Some(k), Some(n)) = (d.transfer, repeat) {
            if k > n {
                // A filter that can never apply is a mistake in the scenario, not a no-op.
                return err(format!("{dpath}.transfer"), format!("the flow makes {n} transfer{} (repeat = {n}), so transfer {k} never comes", if n == 1 { "" } else { "s" }));
            }
        }
        Ok(kind)
    }

    fn kind_name(&self) -> String {
        serde_json::to_string(&self.kind).expect("serialisable")
    }

    pub fn filter_kind(&self, path: &str) -> Result<FilterKind, ScenarioError> {
        let need = |v: Option<u64>, key: &str| match v {
            Some(n) if n >= 1 => Ok(n),
            Some(_) => err(format!("{path}.{key}"), "expected a number from 1"),
            None => err(path, format!("kind = {} needs `{key}`", self.kind_name())),
        };
        let refuse = |v: Option<u64>, key: &str| match v {
            Some(_) => err(format!("{path}.{key}"), format!("does not apply to kind = {}", self.kind_name())),
            None => Ok(()),
        };
        Ok(match self.kind {
            DropKind::Syn | DropKind::Synack | DropKind::Fin => {
                refuse(self.segment, "segment")?;
                refuse(self.number, "number")?;
                match self.kind {
                    DropKind::Syn => FilterKind::Syn,
                    DropKind::Synack => FilterKind::SynAck,
                    _ => FilterKind::Fin,
                }
            }
            DropKind::Data => {
                refuse(self.number, "number")?;
                FilterKind::Data { seg: need(self.segment, "segment")? }
            }
            DropKind::Ack => {
                refuse(self.segment, "segment")?;
                FilterKind::Ack { k: need(self.number, "number")? }
            }
        })
    }
}

/// A resolved node-and-link network (what every topology expands to).
#[derive(Clone, Debug, PartialEq)]
pub struct Network {
    pub nodes: Vec<String>,
    pub links: Vec<LinkSpec>,
    /// Each link's ends `(a, b)` as positions in `nodes` (so that building the world looks no
    /// name up).
    pub ends: Vec<(u32, u32)>,
}

/// A hasher for the set-up's maps keyed by names (node and flow names): FNV-1a over the bytes,
/// its bits mixed by SplitMix64's finaliser so that the table's bucket and tag bits both vary.
/// Names are short and the scenario is the user's own, so SipHash's defence against chosen keys
/// bought nothing there but time (a tenth of a 10^5-flow set-up).
#[derive(Clone, Copy)]
pub struct NameHasher(u64);

impl Default for NameHasher {
    fn default() -> NameHasher {
        NameHasher(0xcbf2_9ce4_8422_2325)
    }
}

impl std::hash::Hasher for NameHasher {
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0 ^ *b as u64).wrapping_mul(0x0000_0100_0000_01B3);
        }
    }

    fn finish(&self) -> u64 {
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

pub type NameHash = std::hash::BuildHasherDefault<NameHasher>;

/// Node (or any) names to their positions in `names`.
pub fn name_index(names: &[String]) -> std::collections::HashMap<&str, usize, NameHash> {
    let mut m = std::collections::HashMap::with_capacity_and_hasher(names.len(), NameHash::default());
    m.extend(names.iter().enumerate().map(|(i, n)| (n.as_str(), i)));
    m
}

/// `template` with every `{i}` replaced by `i`, into `out` (as `str::replace` would).
fn subst_into(out: &mut String, template: &str, i: &str) {
    out.clear();
    let mut parts = template.split("{i}");
    out.push_str(parts.next().unwrap_or(""));
    for p in parts {
        out.push_str(i);
        out.push_str(p);
    }
}

/// A resolved flow: names bound to nodes, TCP configuration complete.
#[derive(Clone, Debug)]
pub struct ResolvedFlow {
    pub name: String,
    pub from: usize,
    pub to: usize,
    pub start: Time,
    pub bytes: Option<u64>,
    /// None = unlimited.
    pub repeat: Option<u32>,
    pub think: Time,
    /// Shared by the flows of one `[[flows]]` entry.
    pub tcp: Arc<TcpConfig>,
    pub drops: Vec<(FilterKind, Vec<u32>, Option<u32>, crate::scenario::DropKind)>,
    /// Delay filters: as `drops`, with the time each chosen packet is held.
    pub delays: Vec<(FilterKind, Vec<u32>, Option<u32>, crate::scenario::DropKind, Time)>,
}

impl Scenario {
    /// Parse a TOML scenario.
    pub fn from_toml(text: &str, overrides: &[String]) -> Result<Scenario, ScenarioError> {
        Self::from_tree(crate::input::from_toml_text(text)?, overrides)
    }

    /// Parse a JSON scenario (Python's `NaN` / `Infinity` included, so that they are refused by
    /// key like any other bad value; see `input::from_json_text`).
    pub fn from_json(text: &str, overrides: &[String]) -> Result<Scenario, ScenarioError> {
        Self::from_tree(crate::input::from_json_text(text)?, overrides)
    }

    pub fn from_value(v: serde_json::Value, overrides: &[String]) -> Result<Scenario, ScenarioError> {
        Self::from_tree(crate::input::from_json_value(v)?, overrides)
    }

    /// The one validation boundary: overrides applied to the tree, then every value checked by
    /// its type (with its key path), then the size of the world, then the cross-key rules.
    pub fn from_tree(mut v: crate::input::Tree, overrides: &[String]) -> Result<Scenario, ScenarioError> {
        for o in overrides {
            apply_override(&mut v, o)?;
        }
        let s: Scenario = serde_path_to_error::deserialize(v.clone()).map_err(|e| {
            let path = e.path().to_string();
            let path = if path == "." { String::new() } else { path };
            crate::input::refusal(e.into_inner().message(), &v, path)
        })?;
        crate::footprint::check(&s)?;
        let e = s.expand(s.seed)?;
        crate::trace::capture::validate(&s.capture, &e.net, &e.flows)?;
        if !s.series.is_empty() {
            let names: Vec<String> = e.flows.iter().map(|f| f.name.clone()).chain(e.apps.iter().map(|a| a.name.clone())).collect();
            crate::series::validate(&s.series, &names, &crate::series::link_dirs(&e.net))?;
        }
        let mut s = s;
        s.expansion = Expansion(Some((Arc::new(s.clone()), Arc::new(e))));
        Ok(s)
    }

    /// Expand the network, the flows and the applications for a run with `seed`, checking them.
    fn expand(&self, seed: u64) -> Result<Expanded, ScenarioError> {
        let net = self.network_for(seed)?;
        let flows = self.resolve_flows_on(&net)?;
        let apps = crate::app::spec::resolve(self, &net, seed)?;
        Ok(Expanded { seed, net: Arc::new(net), flows: Arc::new(flows), apps })
    }

    /// What this scenario expands to for a run with `seed`: the expansion kept from validation
    /// when the scenario has not changed since, else a new one (checked as `from_tree` does).
    /// For another seed the kept flows still hold (they read only node names and link rates,
    /// which no seed changes); the network is expanded again if it has host groups (their
    /// delays are drawn with the seed), and so are the applications (their start times too).
    pub fn expanded(&self, seed: u64) -> Result<Arc<Expanded>, ScenarioError> {
        let Some((_, e)) = self.expansion.0.as_ref().filter(|(spec, _)| **spec == *self) else {
            return Ok(Arc::new(self.expand(seed)?));
        };
        if e.seed == seed {
            return Ok(e.clone());
        }
        let net = if self.topology.groups.as_ref().is_none_or(|g| g.is_empty()) { e.net.clone() } else { Arc::new(self.network_for(seed)?) };
        let apps = crate::app::spec::resolve(self, &net, seed)?;
        Ok(Arc::new(Expanded { seed, net, flows: e.flows.clone(), apps }))
    }

    /// Expand the topology into nodes and links, with the random delays of host groups drawn
    /// with the scenario's own seed (for checks that need only names and shapes).
    pub fn network(&self) -> Result<Network, ScenarioError> {
        self.network_for(self.seed)
    }

    /// Expand the topology into nodes and links for a run with `seed` (host groups' random
    /// delays are drawn from it).
    pub fn network_for(&self, seed: u64) -> Result<Network, ScenarioError> {
        let mut net = self.base_network()?;
        for (gi, g) in self.topology.groups.iter().flatten().enumerate() {
            add_group(&mut net, g, &format!("topology.groups[{gi}]"), seed)?;
        }
        Ok(net)
    }

    /// Expand the topology's kind into nodes and links (host groups not yet added).
    fn base_network(&self) -> Result<Network, ScenarioError> {
        let t = &self.topology;
        let allowed: &[&str] = match t.kind {
            TopologyKind::SingleLink => &["rate", "delay", "queue", "loss", "reverse_loss"],
            TopologyKind::Dumbbell => &["pairs", "access_rate", "access_delay", "access_queue", "bottleneck_rate", "bottleneck_delay", "queue", "loss", "reverse_loss"],
            TopologyKind::Custom => &["nodes", "links"],
        };
        let present: [(&str, bool); 13] = [
            ("rate", t.rate.is_some()),
            ("delay", t.delay.is_some()),
            ("queue", t.queue.is_some()),
            ("loss", t.loss.is_some()),
            ("reverse_loss", t.reverse_loss.is_some()),
            ("pairs", t.pairs.is_some()),
            ("access_rate", t.access_rate.is_some()),
            ("access_delay", t.access_delay.is_some()),
            ("access_queue", t.access_queue.is_some()),
            ("bottleneck_rate", t.bottleneck_rate.is_some()),
            ("bottleneck_delay", t.bottleneck_delay.is_some()),
            ("nodes", t.nodes.is_some()),
            ("links", t.links.is_some()),
        ];
        let kind = serde_json::to_value(t.kind).unwrap();
        for (k, p) in present {
            if p && !allowed.contains(&k) {
                return err(format!("topology.{k}"), format!("does not apply to kind = {kind}; expected one of: {}", allowed.join(", ")));
            }
        }
        let mut queues: Vec<(String, &QueueSpec)> = Vec::new();
        queues.extend(t.queue.iter().map(|q| ("topology.queue".to_string(), q)));
        queues.extend(t.access_queue.iter().map(|q| ("topology.access_queue".to_string(), q)));
        for (i, l) in t.links.iter().flatten().enumerate() {
            queues.push((format!("topology.links[{i}].queue"), &l.queue));
            queues.extend(l.reverse_queue.iter().map(|q| (format!("topology.links[{i}].reverse_queue"), q)));
        }
        for (i, g) in t.groups.iter().flatten().enumerate() {
            queues.push((format!("topology.groups[{i}].queue"), &g.queue));
            queues.extend(g.reverse_queue.iter().map(|q| (format!("topology.groups[{i}].reverse_queue"), q)));
        }
        for (path, q) in queues {
            q.validate(&path)?;
        }
        let req = |v: Option<Rate>, key: &str| v.ok_or_else(|| ScenarioError { path: format!("topology.{key}"), message: format!("required for kind = {kind}") });
        let reqd = |v: Option<Duration>, key: &str| v.ok_or_else(|| ScenarioError { path: format!("topology.{key}"), message: format!("required for kind = {kind}") });
        let net = match t.kind {
            TopologyKind::SingleLink => Network {
                nodes: vec!["sender".into(), "receiver".into()],
                links: vec![LinkSpec {
                    name: "link".into(),
                    a: "sender".into(),
                    b: "receiver".into(),
                    rate: req(t.rate, "rate")?,
                    delay: reqd(t.delay, "delay")?,
                    queue: t.queue.unwrap_or_default(),
                    reverse_queue: None,
                    loss: t.loss.map_or(0.0, |p| p.0),
                    reverse_loss: t.reverse_loss.map_or(0.0, |p| p.0),
                }],
                ends: vec![(0, 1)],
            },
            TopologyKind::Dumbbell => {
                let n = t.pairs.ok_or_else(|| ScenarioError { path: "topology.pairs".into(), message: "required for kind = \"dumbbell\"".into() })?;
                if n == 0 {
                    return err("topology.pairs", "expected at least 1");
                }
                let delays: &[Duration] = match &t.access_delay {
                    None => return err("topology.access_delay", "required for kind = \"dumbbell\""),
                    Some(OneOrMany::One(d)) => std::slice::from_ref(d),
                    Some(OneOrMany::Many(v)) if v.len() == n as usize => v,
                    Some(OneOrMany::Many(v)) => return err("topology.access_delay", format!("expected one delay or {n} (one per pair), got {}", v.len())),
                };
                // Pair i's delay (one delay for all, or one each).
                let delay = |i: usize| if delays.len() == 1 { delays[0] } else { delays[i - 1] };
                let access_rate = req(t.access_rate, "access_rate")?;
                let access_queue = t.access_queue.unwrap_or_default();
                let mut nodes = Vec::with_capacity(2 + 2 * n as usize);
                nodes.extend(["left".to_string(), "right".to_string()]);
                let mut links = Vec::with_capacity(1 + 2 * n as usize);
                links.push(LinkSpec {
                    name: "bottleneck".into(),
                    a: "left".into(),
                    b: "right".into(),
                    rate: req(t.bottleneck_rate, "bottleneck_rate")?,
                    delay: reqd(t.bottleneck_delay, "bottleneck_delay")?,
                    queue: t.queue.unwrap_or_default(),
                    reverse_queue: None,
                    loss: t.loss.map_or(0.0, |p| p.0),
                    reverse_loss: t.reverse_loss.map_or(0.0, |p| p.0),
                });
                // Pair i: s{i} -> left and right -> r{i}, links named access_s{i}, access_r{i}.
                let access = |name: String, a: String, b: String, i: usize| LinkSpec {
                    name,
                    a,
                    b,
                    rate: access_rate,
                    delay: delay(i),
                    queue: access_queue,
                    reverse_queue: None,
                    loss: 0.0,
                    reverse_loss: 0.0,
                };
                let mut ends = Vec::with_capacity(links.capacity());
                ends.push((0, 1));
                for i in 1..=n as usize {
                    let (s, r) = (format!("s{i}"), format!("r{i}"));
                    links.push(access(["access_", &s].concat(), s.clone(), "left".to_string(), i));
                    links.push(access(["access_", &r].concat(), "right".to_string(), r.clone(), i));
                    ends.extend([(nodes.len() as u32, 0), (1, nodes.len() as u32 + 1)]);
                    nodes.push(s);
                    nodes.push(r);
                }
                Network { nodes, links, ends }
            }
            TopologyKind::Custom => {
                let nodes = t.nodes.clone().ok_or_else(|| ScenarioError { path: "topology.nodes".into(), message: "required for kind = \"custom\"".into() })?;
                let links = t.links.clone().ok_or_else(|| ScenarioError { path: "topology.links".into(), message: "required for kind = \"custom\"".into() })?;
                let mut known: std::collections::HashMap<&str, u32, NameHash> = std::collections::HashMap::with_capacity_and_hasher(nodes.len(), NameHash::default());
                for (i, n) in nodes.iter().enumerate() {
                    if known.insert(n.as_str(), i as u32).is_some() {
                        return err(format!("topology.nodes[{i}]"), format!("node {n:?} is listed twice"));
                    }
                }
                let mut ends = Vec::with_capacity(links.len());
                for (i, l) in links.iter().enumerate() {
                    let mut end = [0u32; 2];
                    for (j, (k, v)) in [("a", &l.a), ("b", &l.b)].into_iter().enumerate() {
                        end[j] = match known.get(v.as_str()) {
                            Some(&x) => x,
                            None => return err(format!("topology.links[{i}].{k}"), format!("unknown node {v:?}; nodes are: {}", nodes.join(", "))),
                        };
                    }
                    ends.push((end[0], end[1]));
                    if l.a == l.b {
                        return err(format!("topology.links[{i}]"), "a link joins two different nodes");
                    }
                    for (k, p) in [("loss", l.loss), ("reverse_loss", l.reverse_loss)] {
                        if !(0.0..=1.0).contains(&p) {
                            return err(format!("topology.links[{i}].{k}"), format!("expected a probability from 0 to 1, got {p}"));
                        }
                    }
                }
                drop(known);
                Network { nodes, links, ends }
            }
        };
        Ok(net)
    }

    /// Bind flows to nodes, expand `count`, and resolve each flow's TCP configuration.
    pub fn resolve_flows(&self) -> Result<Vec<ResolvedFlow>, ScenarioError> {
        self.resolve_flows_on(&self.network()?)
    }

    /// `resolve_flows` on a network already expanded from this scenario (for any seed: only the
    /// node names and the link rates are read).
    pub fn resolve_flows_on(&self, net: &Network) -> Result<Vec<ResolvedFlow>, ScenarioError> {
        if self.flows.is_empty() && self.apps.is_empty() {
            return err("flows", "at least one flow or application is needed ([[flows]] or [[apps]])");
        }
        if let Some(w) = self.warmup {
            if self.duration.is_none_or(|d| d.0 <= w.0) {
                return err("warmup", "a warmup needs a `duration` longer than it");
            }
        }
        self.check_total_bytes()?;
        self.check_run_length(net)?;
        // Room for the flows up front (bounded: the checks below may yet refuse them).
        let total = self.flows.iter().map(|f| f.count as usize).sum::<usize>().min(1 << 20);
        let mut out = Vec::with_capacity(total);
        // The flow names so far, without copies: each name's hash to the first flow in `out` with
        // that hash; names whose hashes collide with another name's are kept in `collided`.
        let mut names: std::collections::HashMap<u64, usize, NameHash> = std::collections::HashMap::with_capacity_and_hasher(total, NameHash::default());
        let mut collided: std::collections::HashSet<String> = std::collections::HashSet::new();
        let mut is_new = |name: &str, out: &[ResolvedFlow]| {
            use std::hash::BuildHasher;
            match names.entry(NameHash::default().hash_one(name)) {
                std::collections::hash_map::Entry::Vacant(v) => {
                    v.insert(out.len());
                    true
                }
                std::collections::hash_map::Entry::Occupied(o) => out[*o.get()].name != name && collided.insert(name.to_string()),
            }
        };
        // Node names resolved through a map (a linear search per flow end made set-up quadratic).
        let index = name_index(&net.nodes);
        // Scratch buffers for a flow's number and its ends' names (only its name is kept).
        let (mut num, mut from_buf, mut to_buf) = (String::new(), String::new(), String::new());
        // Consecutive flows of an entry mostly join nodes a fixed step apart (s{i} to r{i} in a
        // dumbbell): each end's last node and the step to it, to try before looking a name up.
        let mut step = ((usize::MAX, 0), (usize::MAX, 0));
        for (fi, f) in self.flows.iter().enumerate() {
            let path = format!("flows[{fi}]");
            if f.count == 0 {
                return err(format!("{path}.count"), "expected at least 1");
            }
            let tcp = Arc::new(self.tcp_config(&f.tcp, &path)?);
            let bytes = f.bytes.get();
            if bytes.is_none() && self.duration.is_none() {
                return err(format!("{path}.bytes"), "an unlimited flow needs a `duration` for the run");
            }
            let repeat = match f.repeat {
                Count::N(0) => return err(format!("{path}.repeat"), "expected at least 1"),
                Count::N(n) => Some(n),
                Count::Unlimited(_) => None,
            };
            if repeat.is_none() && self.duration.is_none() {
                return err(format!("{path}.repeat"), "unlimited repeats need a `duration` for the run");
            }
            let mut drops = Vec::new();
            for (di, d) in f.drops.iter().enumerate() {
                let dpath = format!("{path}.drops[{di}]");
                let kind = d.checked_filter(&dpath, repeat)?;
                if d.by.is_some() {
                    return err(format!("{dpath}.by"), "a drop removes the packet; to hold it back for a while, list it under `delays`");
                }
                drops.push((kind, d.transmissions.clone(), d.transfer, d.kind));
            }
            let mut delays = Vec::new();
            for (di, d) in f.delays.iter().enumerate() {
                let dpath = format!("{path}.delays[{di}]");
                let kind = d.checked_filter(&dpath, repeat)?;
                let by = match d.by {
                    None => return err(dpath, "a delay needs `by`, how long the packet is held (such as \"30ms\")"),
                    Some(Duration(0)) => return err(format!("{dpath}.by"), "expected a duration above 0"),
                    Some(Duration(t)) => t,
                };
                delays.push((kind, d.transmissions.clone(), d.transfer, d.kind, by));
            }
            let start_of = f.checked_starts(&path, repeat)?;
            let single = self.topology.kind == TopologyKind::SingleLink;
            for i in 1..=f.count {
                num.clear();
                {
                    use std::fmt::Write;
                    write!(num, "{i}").expect("a String takes any text");
                }
                let subst = |s: &str| {
                    let mut o = String::new();
                    subst_into(&mut o, s, &num);
                    o
                };
                let default_end = |single_default: &str, key: &str| -> Result<String, ScenarioError> {
                    if single {
                        Ok(single_default.to_string())
                    } else {
                        err(format!("{path}.{key}"), "required (the node name) for this topology")
                    }
                };
                if f.from.is_empty() {
                    from_buf = default_end("sender", "from")?;
                } else {
                    subst_into(&mut from_buf, &f.from, &num);
                }
                if f.to.is_empty() {
                    to_buf = default_end("receiver", "to")?;
                } else {
                    subst_into(&mut to_buf, &f.to, &num);
                }
                let (from, to) = (&from_buf, &to_buf);
                // The node one step on, if it has the name (node names are unique), else the map's.
                let find = |n: &str, key: &str, g: &mut (usize, usize)| {
                    let next = g.0.wrapping_add(g.1);
                    let x = match net.nodes.get(next) {
                        Some(m) if m == n => next,
                        _ => index.get(n).copied().ok_or_else(|| ScenarioError {
                            path: format!("{path}.{key}"),
                            message: format!("unknown node {n:?}; nodes are: {}", net.nodes.join(", ")),
                        })?,
                    };
                    *g = (x, x.wrapping_sub(g.0));
                    Ok::<usize, ScenarioError>(x)
                };
                let (a, b) = (find(from, "from", &mut step.0)?, find(to, "to", &mut step.1)?);
                if a == b {
                    return err(path.clone(), format!("a flow needs two different nodes, got {from:?} twice"));
                }
                let name = if f.name.is_empty() { format!("flow{}", out.len()) } else if f.count > 1 && !f.name.contains("{i}") { format!("{}{i}", f.name) } else { subst(&f.name) };
                if !is_new(&name, &out) {
                    return err(format!("{path}.name"), format!("flow name {name:?} is used twice"));
                }
                out.push(ResolvedFlow {
                    name,
                    from: a,
                    to: b,
                    start: start_of(i),
                    bytes,
                    repeat,
                    think: f.think.0,
                    tcp: tcp.clone(),
                    drops: drops.clone(),
                    delays: delays.clone(),
                });
            }
        }
        Ok(out)
    }

    /// The scenario as run, with every default written out.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).expect("a scenario always serialises")
    }
}

impl Scenario {
    /// The data of every finite transfer added up (bytes × repeat × count per entry) must stay
    /// within `MAX_TOTAL_BYTES`, so that no byte counter of the run can wrap.
    fn check_total_bytes(&self) -> Result<(), ScenarioError> {
        let mut total: u128 = 0;
        for (fi, f) in self.flows.iter().enumerate() {
            if let (Some(b), Count::N(n)) = (f.bytes.get(), f.repeat) {
                total += b as u128 * n as u128 * f.count as u128;
                if total > MAX_TOTAL_BYTES as u128 {
                    return err(
                        format!("flows[{fi}].bytes"),
                        format!(
                            "the transfers add up to more than {MAX_TOTAL_BYTES} bytes (2^62), the most a run may carry; keys: flows[{fi}].bytes = {b}, flows[{fi}].repeat = {n}, flows[{fi}].count = {} (and the flows before it)",
                            f.count
                        ),
                    );
                }
            }
        }
        Ok(())
    }
}

impl Scenario {
    /// Without a `duration` a run lasts until its transfers are done, so that time must fit the
    /// clock: refuse a flow whose data could not cross even the fastest link before the largest
    /// simulated time. A lower bound (headers, losses and the handshake only add time), so
    /// nothing that can finish is refused; the clock's headroom above `MAX_TIME` (a factor of 4)
    /// covers the rest.
    fn check_run_length(&self, net: &Network) -> Result<(), ScenarioError> {
        if self.duration.is_some() {
            return Ok(());
        }
        let fastest = net.links.iter().map(|l| l.rate.0).max().unwrap_or(1).max(1) as u128;
        for (fi, f) in self.flows.iter().enumerate() {
            if let (Some(b), Count::N(n)) = (f.bytes.get(), f.repeat) {
                let at_least = f.start.0 as u128 + b as u128 * n as u128 * 8 * 1_000_000_000 / fastest;
                if at_least > MAX_TIME as u128 {
                    return err(
                        format!("flows[{fi}].bytes"),
                        format!(
                            "{} transfers of {b} bytes need at least {at_least} ns at {} (the fastest link), beyond the largest simulated time (2^62 ns, about 146 years); set a `duration` or send less",
                            n,
                            crate::units::format_rate(fastest as u64)
                        ),
                    );
                }
            }
        }
        Ok(())
    }
}

/// The most data the finite transfers of a scenario may add up to, 2^62 bytes: every byte
/// counter of a run (per connection, per link direction, with headers) stays far from 2^64.
pub const MAX_TOTAL_BYTES: u64 = 1 << 62;

impl FlowSpec {
    /// The start time of flow i (1-based) of this entry, after checking, with exact arithmetic,
    /// that the last flow's start, and its last transfer's earliest start after `repeat − 1`
    /// thinks, are within the largest simulated time.
    fn checked_starts(&self, path: &str, repeat: Option<u32>) -> Result<impl Fn(u32) -> Time + '_, ScenarioError> {
        let beyond = "is beyond the largest simulated time (2^62 ns, about 146 years)";
        let last = self.start.0 as u128 + (self.count as u128 - 1) * self.start_spacing.0 as u128;
        if last > MAX_TIME as u128 {
            return err(
                format!("{path}.start_spacing"),
                format!(
                    "flow {} of this entry would start at {last} ns, which {beyond}; keys: {path}.start = {}, {path}.count = {}, {path}.start_spacing = {}",
                    self.count,
                    format_duration(self.start.0),
                    self.count,
                    format_duration(self.start_spacing.0)
                ),
            );
        }
        if let Some(n) = repeat {
            let thinks = (n as u128 - 1) * self.think.0 as u128;
            if last + thinks > MAX_TIME as u128 {
                return err(
                    format!("{path}.think"),
                    format!(
                        "the {} thinks between its {n} transfers add up to {thinks} ns, so the last transfer would start after {} ns, which {beyond}; keys: {path}.think = {}, {path}.repeat = {n}, {path}.start = {}",
                        n - 1,
                        last + thinks,
                        format_duration(self.think.0),
                        format_duration(self.start.0)
                    ),
                );
            }
        }
        // Checked above: no product or sum here can exceed MAX_TIME.
        Ok(move |i: u32| self.start.0 + (i as u64 - 1) * self.start_spacing.0)
    }

}

impl Scenario {
    /// Knobs that override a value of a preset, or of a profile asked for by an override
    /// (`--set`, `sets=`) of this run: `before` is the scenario without those overrides. Each is
    /// legal, since knobs apply over the profile and the preset, but it must not pass unseen:
    /// `--set tcp.preset="sack"` over a file that writes `variant = "newreno"` runs NewReno with
    /// SACK merely negotiated. A knob over a profile written in the file itself is the ordinary
    /// way to tune a profile and is not noted. One line per override, naming the flows and
    /// applications it applies to; `tcplab validate`, the `run` header and `--json` show them.
    pub fn tcp_notes(&self, before: Option<&Scenario>) -> Vec<String> {
        use crate::tcp::config::preset;
        let mut found: Vec<(String, Vec<String>)> = Vec::new();
        let mut look = |spec: &TcpSpec, place: String, profile_before: Option<Option<String>>| {
            if spec.profile.is_none() && spec.preset.is_none() {
                return;
            }
            // The profile was asked for by this run's overrides when it differs without them.
            let profile_asked = spec.profile.is_some() && profile_before.is_some_and(|p| p != spec.profile);
            let profile = spec.profile.as_deref().unwrap_or("rfc");
            // An unknown profile or preset is the validation's error, not a note.
            let Some(mut cfg) = TcpConfig::profile(profile) else { return };
            let of_profile = cfg.to_json_full();
            let named = spec.preset.as_deref().and_then(preset);
            if let Some(p) = named {
                (p.apply)(&mut cfg);
            }
            let asked = cfg.to_json_full();
            let bare = TcpSpec { profile: None, preset: None, ..spec.clone() };
            let Ok(serde_json::Value::Object(written)) = serde_json::to_value(&bare) else { return };
            for (knob, value) in written {
                let Some(base) = asked.get(&knob) else { continue };
                if *base == value {
                    continue;
                }
                let by_preset = named.filter(|_| of_profile.get(&knob) != Some(base));
                let source = match (by_preset, &spec.profile) {
                    (Some(p), _) => format!("preset {:?}", p.name),
                    (None, Some(name)) if profile_asked => format!("profile {name:?}"),
                    // A profile tuned in the file, or the default profile: nothing to say.
                    _ => continue,
                };
                let line = format!("tcp.{knob} = {value} overrides {source}, which sets {knob} = {base}");
                match found.iter_mut().find(|(l, _)| *l == line) {
                    Some((_, places)) => places.push(place.clone()),
                    None => found.push((line, vec![place.clone()])),
                }
            }
        };
        // The profile a place had without the overrides (None inside: none written; a place the
        // overrides added counts as asked for).
        let flow_profile = |sc: &Scenario, i: usize| sc.flows.get(i).map(|f| sc.tcp.merged_with(&f.tcp).profile);
        let app_profile = |sc: &Scenario, i: usize, server: bool| {
            sc.apps.get(i).map(|a| {
                let t = sc.tcp.merged_with(&a.tcp);
                match (&a.server_tcp, server) {
                    (Some(st), true) => t.merged_with(st).profile,
                    _ => t.profile,
                }
            })
        };
        let was = |p: Option<Option<String>>| if before.is_some() { Some(p.unwrap_or(Some(String::new()))) } else { None };
        if self.flows.is_empty() && self.apps.is_empty() {
            look(&self.tcp, "tcp".into(), was(before.map(|b| b.tcp.profile.clone())));
        }
        for (i, f) in self.flows.iter().enumerate() {
            look(&self.tcp.merged_with(&f.tcp), format!("flows[{i}]"), was(before.and_then(|b| flow_profile(b, i))));
        }
        for (i, a) in self.apps.iter().enumerate() {
            let t = self.tcp.merged_with(&a.tcp);
            look(&t, format!("apps[{i}]"), was(before.and_then(|b| app_profile(b, i, false))));
            if let Some(st) = &a.server_tcp {
                look(&t.merged_with(st), format!("apps[{i}].server_tcp"), was(before.and_then(|b| app_profile(b, i, true))));
            }
        }
        found
            .into_iter()
            .map(|(line, places)| {
                const SHOWN: usize = 4;
                let more = if places.len() > SHOWN { format!(" and {} more", places.len() - SHOWN) } else { String::new() };
                format!("{line} ({}{more})", places[..places.len().min(SHOWN)].join(", "))
            })
            .collect()
    }

    /// The TCP configuration of a flow or application at `path` whose own knobs are `own`: the
    /// profile, then the preset, then the scenario's `[tcp]` and `own` overrides, validated; an
    /// error names `{path}.tcp.{knob}` when `own` sets the knob, else `tcp.{knob}`.
    pub(crate) fn tcp_config(&self, own: &TcpSpec, path: &str) -> Result<TcpConfig, ScenarioError> {
        let sets = |knob: &str| serde_json::to_value(own).ok().and_then(|v| v.get(knob).cloned()).is_some();
        let spec = self.tcp.merged_with(own);
        let profile = spec.profile.clone().unwrap_or_else(|| "rfc".into());
        let mut tcp = TcpConfig::profile(&profile).ok_or_else(|| ScenarioError {
            path: if own.profile.is_some() { format!("{path}.tcp.profile") } else { "tcp.profile".into() },
            message: format!(
                "unknown profile {profile:?}{}; expected one of: {}",
                crate::input::did_you_mean(&profile, crate::tcp::config::PROFILES).map(|n| format!(" (did you mean {n:?}?)")).unwrap_or_default(),
                crate::tcp::config::PROFILES.join(", ")
            ),
        })?;
        if let Some(name) = &spec.preset {
            let p = crate::tcp::config::preset(name).ok_or_else(|| ScenarioError {
                path: if own.preset.is_some() { format!("{path}.tcp.preset") } else { "tcp.preset".into() },
                message: {
                    let names: Vec<&str> = crate::tcp::config::PRESETS.iter().map(|p| p.name).collect();
                    let hint = crate::input::not_modelled(name)
                        .map(|n| format!(" ({n})"))
                        .or_else(|| crate::input::did_you_mean(name, &names).map(|n| format!(" (did you mean {n:?}?)")))
                        .unwrap_or_default();
                    format!("unknown preset {name:?}{hint}; expected one of: {}", names.join(", "))
                },
            })?;
            (p.apply)(&mut tcp);
        }
        spec.apply_to(&mut tcp);
        tcp.validate().map_err(|(k, m)| ScenarioError {
            path: if sets(&k) { format!("{path}.tcp.{k}") } else { format!("tcp.{k}") },
            message: m,
        })?;
        Ok(tcp)
    }
}

pub use crate::input::{apply_override, set_path};

/// Add a host group's members and their access links to `net`.
fn add_group(net: &mut Network, g: &HostGroup, path: &str, seed: u64) -> Result<(), ScenarioError> {
    if g.count == 0 {
        return err(format!("{path}.count"), "expected at least 1");
    }
    let expand = |key: &str, t: &str, k: u64| crate::template::expand(t, k).map_err(|e| ScenarioError { path: format!("{path}.{key}"), message: e });
    // The nodes and link names so far, by name (the members' nodes and links come after them).
    let known = name_index(&net.nodes);
    let link_names: std::collections::HashSet<&str, NameHash> = net.links.iter().map(|l| l.name.as_str()).collect();
    let mut rng = crate::engine::RngStream::new(seed, &format!("group:{}:delay", g.name));
    let members: Vec<String> = (1..=g.count as u64).map(|k| expand("name", &g.name, k)).collect::<Result<_, _>>()?;
    if g.count > 1 && !crate::template::is_template(&g.name) {
        return err(format!("{path}.name"), format!("{:?} names every member alike; write the member's number in it, such as \"{}{{i}}\"", g.name, g.name));
    }
    let mut seen: std::collections::HashSet<&str, NameHash> = std::collections::HashSet::with_capacity_and_hasher(members.len(), NameHash::default());
    for (k, m) in members.iter().enumerate() {
        if known.contains_key(m.as_str()) || !seen.insert(m.as_str()) {
            return err(format!("{path}.name"), format!("node {m:?} (member {}) is already in the topology", k + 1));
        }
    }
    let base = net.nodes.len();
    let (mut links, mut ends) = (Vec::with_capacity(members.len()), Vec::with_capacity(members.len()));
    let mut fresh: std::collections::HashSet<String, NameHash> = std::collections::HashSet::with_capacity_and_hasher(members.len(), NameHash::default());
    for (k, m) in members.iter().enumerate() {
        let k1 = k as u64 + 1;
        let router = expand("attach", &g.attach, k1)?;
        let Some(&at) = known.get(router.as_str()) else {
            return err(format!("{path}.attach"), format!("unknown node {router:?} (member {k1}); nodes are: {}", net.nodes.join(", ")));
        };
        let name = if g.link.is_empty() { format!("access_{m}") } else { expand("link", &g.link, k1)? };
        if link_names.contains(name.as_str()) || !fresh.insert(name.clone()) {
            return err(format!("{path}.link"), format!("link name {name:?} (member {k1}) is used twice"));
        }
        let delay = g.delay.sample(&mut rng);
        links.push(LinkSpec { name, a: m.clone(), b: router, rate: g.rate, delay: Duration(delay), queue: g.queue, reverse_queue: g.reverse_queue, loss: g.loss, reverse_loss: g.reverse_loss });
        ends.push(((base + k) as u32, at as u32));
    }
    drop((known, link_names, seen));
    net.links.extend(links);
    net.ends.extend(ends);
    net.nodes.extend(members);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASIC: &str = r#"
name = "t"
[topology]
kind = "single_link"
rate = "10Mbps"
delay = "35ms"
queue = { packets = 20 }
[[flows]]
bytes = "16KB"
"#;

    fn e(text: &str) -> ScenarioError {
        Scenario::from_toml(text, &[]).unwrap_err()
    }

    #[test]
    fn knobs_that_override_an_asked_preset_or_profile_are_noted() {
        let notes = |text: &str, sets: &[&str]| {
            let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
            let before = Scenario::from_toml(text, &[]).unwrap();
            Scenario::from_toml(text, &sets).unwrap().tcp_notes(Some(&before))
        };
        // The tutorial's trap: a preset asked for by --set over a file that writes the variant.
        let file = BASIC.replace("[[flows]]", "[tcp]\nvariant = \"newreno\"\n[[flows]]");
        let n = notes(&file, &["tcp.preset=\"sack\""]);
        assert_eq!(n, vec!["tcp.variant = \"newreno\" overrides preset \"sack\", which sets variant = \"sack\" (flows[0])".to_string()]);
        // A preset in the file itself, overridden by a knob of [tcp], is noted too.
        let inner = file.replace("bytes = \"16KB\"", "bytes = \"16KB\"\ntcp = { preset = \"sack\" }");
        assert_eq!(notes(&inner, &[]).len(), 1);
        // A profile asked for by --set over a knob of the file: one line for every flow alike.
        let two = BASIC.replace("[[flows]]\nbytes = \"16KB\"", "[tcp]\ndelayed_ack = false\n[[flows]]\nbytes = \"16KB\"\n[[flows]]\nbytes = \"1KB\"");
        let n = notes(&two, &["tcp.profile=\"linux\""]);
        assert_eq!(n.len(), 1, "{n:?}");
        assert!(n[0].starts_with("tcp.delayed_ack = false overrides profile \"linux\"") && n[0].ends_with("(flows[0], flows[1])"), "{n:?}");
        // A profile tuned in the file itself is the ordinary use of knobs.
        assert!(notes(&two.replace("[tcp]\n", "[tcp]\nprofile = \"linux\"\n"), &[]).is_empty());
        // Nothing to say: no profile or preset asked for, or knobs that agree with them.
        assert!(notes(&file, &[]).is_empty());
        assert!(notes(&file, &["tcp.preset=\"newreno\""]).is_empty());
    }

    #[test]
    fn parses_and_defaults() {
        let s = Scenario::from_toml(BASIC, &[]).unwrap();
        let f = &s.resolve_flows().unwrap()[0];
        assert_eq!((f.from, f.to, f.bytes), (0, 1, Some(16384)));
        assert_eq!(*f.tcp, TcpConfig::rfc());
        assert_eq!(s.network().unwrap().links[0].queue.packets, Some(20));
    }

    #[test]
    fn unknown_key_named_with_path() {
        let x = e(&BASIC.replace("delay = \"35ms\"", "delay = \"35ms\"\nlatency = 1"));
        assert_eq!(x.path, "topology.latency");
        assert!(x.message.contains("unknown field"), "{x}");
        let x = e(&BASIC.replace("bytes = \"16KB\"", "bytes = \"16KB\"\ntcp = { variant = \"vegas\" }"));
        assert_eq!(x.path, "flows[0].tcp.variant");
        assert!(x.message.contains("vegas"), "{x}");
    }

    #[test]
    fn bad_unit_named_with_path() {
        let x = e(&BASIC.replace("\"35ms\"", "35"));
        assert_eq!(x.path, "topology.delay");
        assert!(x.message.contains("write the unit"), "{x}");
        let x = e(&BASIC.replace("\"10Mbps\"", "\"10 parsecs\""));
        assert_eq!(x.path, "topology.rate");
    }

    #[test]
    fn semantic_errors() {
        let x = e(&BASIC.replace("queue = { packets = 20 }", "pairs = 3"));
        assert_eq!(x.path, "topology.pairs");
        let x = e(&BASIC.replace("bytes = \"16KB\"", "bytes = \"unlimited\""));
        assert_eq!(x.path, "flows[0].bytes");
        let x = e(&BASIC.replace("bytes = \"16KB\"", "bytes = 1\nto = \"moon\""));
        assert_eq!(x.path, "flows[0].to");
        let x = e(&BASIC.replace("bytes = \"16KB\"", "bytes = 1\ntcp = { mss = 0 }"));
        assert_eq!(x.path, "flows[0].tcp.mss");
        let x = e(&BASIC.replace("bytes = \"16KB\"", "bytes = 1\ntcp = { profile = \"win95\" }"));
        assert_eq!(x.path, "flows[0].tcp.profile");
        let x = e(&BASIC.replace("bytes = \"16KB\"", "bytes = 1\ndrops = [{ kind = \"data\" }]"));
        assert_eq!(x.path, "flows[0].drops[0]");
        let x = e("[topology]\nkind = \"single_link\"\nrate = \"1Mbps\"\ndelay = \"1ms\"\nloss = 2.0\n[[flows]]\nbytes = 1");
        assert_eq!(x.path, "topology.loss");
    }

    #[test]
    fn overrides() {
        let s = Scenario::from_toml(BASIC, &["topology.delay=\"50ms\"".into(), "tcp.variant=reno".into(), "flows.0.bytes=100".into()]).unwrap();
        assert_eq!(s.topology.delay.unwrap().0, 50_000_000);
        let f = &s.resolve_flows().unwrap()[0];
        assert_eq!(f.tcp.variant, crate::tcp::Variant::Reno);
        assert_eq!(f.bytes, Some(100));
        let x = Scenario::from_toml(BASIC, &["flows.3.bytes=1".into()]).unwrap_err();
        assert_eq!(x.path, "flows.3");
        for (set, path, words) in [
            ("flows.0.bytes=\"lots\"", "flows[0].bytes", "\"unlimited\""),
            ("tcp.initial_window=0", "tcp.initial_window", "rfc3390"),
            ("flows.0.repeat=forever", "flows[0].repeat", "\"unlimited\""),
        ] {
            let x = Scenario::from_toml(BASIC, &[set.into()]).unwrap_err();
            assert_eq!(x.path, path);
            assert!(x.message.contains(words), "{x}");
        }
        let x = Scenario::from_toml(BASIC, &["topology.colour=1".into()]).unwrap_err();
        assert!(x.message.contains("colour"));
    }

    #[test]
    fn dumbbell_expands() {
        let s = Scenario::from_toml(
            r#"
duration = "1s"
[topology]
kind = "dumbbell"
pairs = 2
access_rate = "100Mbps"
access_delay = ["1ms", "2ms"]
bottleneck_rate = "10Mbps"
bottleneck_delay = "20ms"
queue = 100
[[flows]]
from = "s{i}"
to = "r{i}"
count = 2
bytes = "unlimited"
"#,
            &[],
        );
        // `queue = 100` is the packet shorthand.
        let s = match s {
            Ok(s) => s,
            Err(e) => panic!("{e}"),
        };
        let n = s.network().unwrap();
        assert_eq!(n.nodes, ["left", "right", "s1", "r1", "s2", "r2"]);
        assert_eq!(n.links.len(), 5);
        assert_eq!(n.links[0].queue.packets, Some(100));
        let f = s.resolve_flows().unwrap();
        assert_eq!((f[1].name.as_str(), f[1].from, f[1].to), ("flow1", 4, 5));
    }

    #[test]
    fn red_queue_forms() {
        let queue = |q: &str| Scenario::from_toml(&BASIC.replace("queue = { packets = 20 }", &format!("queue = {q}")), &[]);
        let s = queue("{ packets = 20, red = { min_th = 3, max_th = 9 } }").unwrap();
        let q = s.network().unwrap().links[0].queue;
        assert_eq!((q.kind, q.packets), (QueueKind::Red, Some(20)));
        assert_eq!(q.red, Some(RedSpec { min_th: 3.0, max_th: 9.0, ..Default::default() }));
        // `kind = "red"` alone is RED with every default (ns-2's).
        let d = queue("{ kind = \"red\", packets = 20 }").unwrap();
        let r = d.network().unwrap().links[0].queue.red.unwrap();
        assert_eq!((r.min_th, r.max_th, r.max_p, r.w_q, r.wait, r.gentle, r.mean_pktsize.0), (5.0, 15.0, 0.1, 0.002, true, false, 500));
        // The echo writes every RED default out and reads back to the same queue.
        let j = s.to_json();
        assert_eq!(j["topology"]["queue"]["kind"], "red");
        assert_eq!(j["topology"]["queue"]["red"]["mean_pktsize"], "500B");
        assert_eq!(Scenario::from_value(j, &[]).unwrap().topology.queue, Some(q));
        // DropTail forms are unchanged, and their echo has no `red`.
        for form in ["20", "{ packets = 20 }", "{ kind = \"droptail\", packets = 20 }"] {
            let s = queue(form).unwrap();
            assert_eq!(s.topology.queue.unwrap().kind, QueueKind::Droptail);
            assert_eq!(s.to_json()["topology"]["queue"], serde_json::json!({ "kind": "droptail", "packets": 20 }));
        }
        // An override sets one RED key.
        let o = Scenario::from_toml(BASIC, &["topology.queue.red.max_p=0.2".into()]).unwrap();
        assert_eq!(o.topology.queue.unwrap().red.unwrap().max_p, 0.2);
        for (q, path, words) in [
            ("{ red = { max_th = 3 } }", "topology.queue.red.max_th", "must exceed min_th"),
            ("{ red = { min_th = 8, max_th = 8 } }", "topology.queue.red.max_th", "must exceed min_th"),
            ("{ red = { max_p = 0 } }", "topology.queue.red.max_p", "probability"),
            ("{ red = { w_q = 2 } }", "topology.queue.red.w_q", "weight"),
            ("{ red = { colour = 1 } }", "topology.queue.red.colour", "unknown field"),
            ("{ red = { wait = 1 } }", "topology.queue.red.wait", "boolean"),
            ("{ red = { mean_pktsize = \"1s\" } }", "topology.queue.red.mean_pktsize", "size"),
            ("{ kind = \"droptail\", red = {} }", "topology.queue", "kind = \"red\""),
            ("{ kind = \"blue\" }", "topology.queue.kind", "blue"),
        ] {
            let x = queue(q).unwrap_err();
            assert_eq!(x.path, path, "{q}: {x}");
            assert!(x.message.contains(words), "{q}: {x}");
        }
        let custom = r#"
[topology]
kind = "custom"
nodes = ["a", "b"]
links = [{ a = "a", b = "b", rate = "1Mbps", delay = "1ms", reverse_queue = { red = { w_q = 0 } } }]
[[flows]]
from = "a"
to = "b"
bytes = 1
"#;
        assert_eq!(e(custom).path, "topology.links[0].reverse_queue.red.w_q");
    }

    #[test]
    fn toml_syntax_error_has_line() {
        let x = e("name = \n");
        assert!(x.message.contains("line 1"), "{x}");
    }
}
