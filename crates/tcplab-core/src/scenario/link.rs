//! A link of the generic form and its queues, the one shape every topology's links take (a
//! `single_link`, a dumbbell's bottleneck and access links, a host group's access links, a
//! custom link), and the queue forms a scenario may write.

use crate::error::ScenarioError;
use crate::net::{FqSpec, MarkThreshold, QueueLimit, RedSpec};
use crate::units::{Duration, Rate, Size};
use serde::{Deserialize, Serialize};
use std::fmt;

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

impl LinkSpec {
    /// The one builder every topology's links go through: a link `a` → `b` with an unlimited
    /// queue each way and no loss; `queues` and `lossy` set the rest.
    pub fn new(name: impl Into<String>, a: impl Into<String>, b: impl Into<String>, rate: Rate, delay: Duration) -> LinkSpec {
        LinkSpec {
            name: name.into(),
            a: a.into(),
            b: b.into(),
            rate,
            delay,
            queue: QueueSpec::default(),
            reverse_queue: None,
            loss: 0.0,
            reverse_loss: 0.0,
        }
    }

    /// The queue of both directions, and of b → a if `reverse` is given.
    pub fn queues(mut self, queue: QueueSpec, reverse: Option<QueueSpec>) -> LinkSpec {
        self.queue = queue;
        self.reverse_queue = reverse;
        self
    }

    /// Bernoulli loss a → b and b → a.
    pub fn lossy(mut self, loss: f64, reverse_loss: f64) -> LinkSpec {
        self.loss = loss;
        self.reverse_loss = reverse_loss;
        self
    }
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
    /// Step CE marking (DCTCP's K, RFC 8257 §3.1): `mark_threshold = 20` (packets waiting) or
    /// `"30KB"` (bytes waiting); ECN-capable arrivals that find at least that much are marked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mark_threshold: Option<MarkAt>,
    /// The fq qdisc (`net/fq.rs`) in place of the FIFO: `{ kind = "fq" }` (tc-fq's defaults) or
    /// `{ fq = { flow_limit = 50, maxrate = "5Mbps" } }`; only on a direction leaving a host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fq: Option<FqSpec>,
}

/// A marking threshold as written: packets (a number) or bytes (a size such as `"30KB"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum MarkAt {
    Packets(u64),
    Bytes(Size),
}

impl MarkAt {
    pub fn threshold(&self) -> MarkThreshold {
        match *self {
            MarkAt::Packets(n) => MarkThreshold::Packets(n),
            MarkAt::Bytes(b) => MarkThreshold::Bytes(b.0),
        }
    }
}

impl<'de> Deserialize<'de> for MarkAt {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<MarkAt, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = MarkAt;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a marking threshold: a packet count such as 20, or a size such as \"30KB\"")
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<MarkAt, E> {
                Ok(MarkAt::Packets(v))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<MarkAt, E> {
                if v < 0 {
                    return Err(E::custom(format!("expected a non-negative packet count or a size, got {v}")));
                }
                Ok(MarkAt::Packets(v as u64))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<MarkAt, E> {
                crate::units::parse_size(v).map(|b| MarkAt::Bytes(Size(b))).map_err(E::custom)
            }
        }
        d.deserialize_any(V)
    }
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
            #[serde(default)]
            mark_threshold: Option<MarkAt>,
            #[serde(default)]
            fq: Option<FqSpec>,
        }
        let t = T::deserialize(serde::de::value::MapAccessDeserializer::new(map))?;
        let fq = match (t.kind, t.fq) {
            (Some(QueueKind::Fq), fq) => Some(fq.unwrap_or_default()),
            (None, Some(fq)) => Some(fq),
            (Some(k), Some(_)) => {
                return Err(serde::de::Error::custom(format!("an `fq` table needs kind = \"fq\" (or no `kind`), not {:?}", k.name())));
            }
            (_, None) => None,
        };
        if fq.is_some() {
            // fq is the whole queue discipline: its own limits, no RED, no step marking.
            let other = [("packets", t.packets.is_some()), ("bytes", t.bytes.is_some()), ("red", t.red.is_some()), ("mark_threshold", t.mark_threshold.is_some())];
            if let Some((k, _)) = other.iter().find(|(_, set)| *set) {
                return Err(serde::de::Error::custom(format!(
                    "`{k}` does not apply to kind = \"fq\" (fq holds at most `limit` packets in all and `flow_limit` per flow: write them in an `fq` table, e.g. {{ kind = \"fq\", fq = {{ limit = 1000 }} }})"
                )));
            }
            return Ok(QueueTable { kind: QueueKind::Fq, fq, ..Default::default() });
        }
        let red = match (t.kind, t.red) {
            (Some(QueueKind::Droptail), Some(_)) => {
                return Err(serde::de::Error::custom("a `red` table needs kind = \"red\" (or no `kind`)"));
            }
            (Some(QueueKind::Red), None) => Some(RedSpec::default()),
            (_, red) => red,
        };
        let kind = if red.is_some() { QueueKind::Red } else { QueueKind::Droptail };
        Ok(QueueTable { kind, packets: t.packets, bytes: t.bytes, red, mark_threshold: t.mark_threshold, fq: None })
    }
}

impl QueueTable {
    pub(crate) fn de<'de, D: serde::Deserializer<'de>>(d: D) -> Result<QueueTable, D::Error> {
        d.deserialize_any(QueueVisitor)
    }
    pub(crate) fn de_opt<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<QueueTable>, D::Error> {
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
    /// Linux's fq qdisc (sch_fq.c) on a host's link; see `net/fq.rs`.
    Fq,
}

impl QueueKind {
    pub fn name(self) -> &'static str {
        match self {
            QueueKind::Droptail => "droptail",
            QueueKind::Red => "red",
            QueueKind::Fq => "fq",
        }
    }
}

impl QueueSpec {
    pub fn limit(&self) -> QueueLimit {
        QueueLimit { packets: self.packets, bytes: self.bytes.map(|s| s.0) }
    }

    /// Check the RED parameters; `path` is the queue's key path.
    pub fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        if let Some(f) = &self.fq {
            f.validate().map_err(|(k, m)| ScenarioError { path: format!("{path}.fq.{k}"), message: m })?;
        }
        match &self.red {
            Some(r) => r.validate().map_err(|(k, m)| ScenarioError { path: format!("{path}.red.{k}"), message: m }),
            None => Ok(()),
        }
    }
}
