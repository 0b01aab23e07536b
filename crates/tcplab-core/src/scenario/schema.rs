//! The scenario's schema: the root table, the topology, the flows, their drops and queues, with
//! their defaults. Types only (and the checks of one value); the expansion is in `topology.rs`,
//! `flows.rs` and `expand.rs`.

use super::count::Count;
use super::link::{LinkSpec, QueueSpec, QueueTable};
use super::plan::{DropKind, Expanded};
use std::sync::Arc;
use crate::error::{err, ScenarioError};
use crate::net::FilterKind;
use crate::tcp::TcpSpec;
use crate::units::{Duration, Probability, Rate};
use serde::{Deserialize, Serialize};
use std::fmt;

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



#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowSpec {
    /// Name of the flow; `{i}` is replaced by 1..count. Default `flow{index}`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// Sending node (default: `sender` on a single link). `{i}` is replaced by 1..count.
    #[serde(default, skip_serializing_if = "String::is_empty", deserialize_with = "crate::app::spec::de_node")]
    pub from: String,
    /// Receiving node (default: `receiver` on a single link).
    #[serde(default, skip_serializing_if = "String::is_empty", deserialize_with = "crate::app::spec::de_node")]
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
    pub(crate) fn checked_filter(&self, dpath: &str, repeat: Option<u32>) -> Result<FilterKind, ScenarioError> {
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


/// The most data the finite transfers of a scenario may add up to, 2^62 bytes: every byte
/// counter of a run (per connection, per link direction, with headers) stays far from 2^64.
pub const MAX_TOTAL_BYTES: u64 = 1 << 62;

/// The expansion `from_tree` made while validating a scenario, kept with it so that a run does
/// not expand the network and the flows again (for 10^5 flows that was most of the set-up). It
/// is used only while the scenario still equals the one it was made from (`Scenario::expanded`
/// compares them: the fields are public and may have changed since), and it is no part of the
/// scenario's identity: two scenarios that differ only here are equal.
#[derive(Clone, Default)]
pub struct Expansion(pub(crate) Option<(Arc<Scenario>, Arc<Expanded>)>);

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
