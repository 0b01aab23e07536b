//! The `[[apps]]` entries of a scenario: their serde schema (unknown keys refused) and their
//! resolution against the network (node names bound, TCP configuration complete, drops checked),
//! with every error naming its key path (`apps[0].request: ...`).
//!
//! ```toml
//! [[apps]]
//! kind = "reqresp"          # request/response exchanges, one connection each
//! name = "web1"             # default app{index}
//! client = "r1"             # default "receiver" on a single link
//! server = "s1"             # default "sender" on a single link
//! request = "300B"          # an HTTP GET; or a random size ({ exponential = "300B" }, ...)
//! response = "10KB"
//! count = 10                # exchanges, one after another (default 1; or "unlimited")
//! think = "1s"              # after one exchange ends, before the next (or a random duration)
//! start = "0s"
//! tcp = { profile = "linux22" }
//! drops = [{ kind = "request", object = 2 }]   # the GET of the second exchange
//! ```
//!
//! `mode = "oneway"` runs `reqresp` and `http10` over ns-2's one-way TCP (Seddigh et al.'s HTTP
//! models, TARGETS.md §4.5); `server = ["w1", "w2"]` picks the server per page (per exchange).

use crate::rv::{RandomCount, RandomDuration, RandomSize};
use crate::scenario::Count;
use crate::tcp::TcpSpec;
use crate::units::Duration;
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AppKind {
    /// Request/response exchanges (`app/reqresp.rs`).
    Reqresp,
    /// An HTTP/1.0 web client as RFC 2415 models it (`app/web.rs`): pages of a primary object
    /// and embedded objects fetched on parallel connections.
    Http10,
    /// An HTTP/1.1 web client (`app/web.rs`): a page's objects in turn on one persistent
    /// connection.
    Http11,
    /// An FTP client (`app/reqresp.rs`): files fetched (or sent) one after another, each on a
    /// data connection of its own.
    Ftp,
    /// A UDP ON/OFF source (`app/traffic.rs`): bursts at `rate` and silences, their lengths drawn
    /// from `on` and `off` (ns-2's Pareto and Exponential ON/OFF traffic generators).
    Onoff,
    /// A UDP constant-bit-rate source (`app/traffic.rs`; ns-2's CBR traffic generator).
    Cbr,
}

impl AppKind {
    /// A UDP traffic source (no connection, no congestion control).
    pub fn is_udp(self) -> bool {
        matches!(self, AppKind::Onoff | AppKind::Cbr)
    }
}

/// Which way an FTP client's files go.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// Server → client (RETR), the usual one (RFC 2415's FTP clients).
    #[default]
    Download,
    /// Client → server (STOR).
    Upload,
}

impl Direction {
    pub(crate) fn is_download(&self) -> bool {
        *self == Direction::Download
    }
}

/// An FTP command on the wire ("RETR name" or "STOR name" with CRLF; RFC 959 §4.1.3).
pub const FTP_COMMAND_BYTES: u64 = 24;
/// The server's reply after an upload ("226 Transfer complete." with CRLF; RFC 959 §4.2.2),
/// which tells the client the file is in.
pub const FTP_REPLY_BYTES: u64 = 24;

/// How an application's messages travel.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Both messages on one connection (a handshake when `tcp.handshake`, the request, the
    /// response, the FINs).
    #[default]
    Twoway,
    /// ns-2's one-way web model (`PagePool/WebTraf` over `Agent/TCP` and `TCPSink`, as Seddigh
    /// et al. use it): no handshake and no FIN; the request on a connection of its own, client →
    /// server; the response, on a new connection server → client, starts when the request's ACK
    /// reaches the client.
    Oneway,
}

/// What one HTTP/1.1 connection carries for a page (`transfer`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Http11Transfer {
    /// The page's objects in turn: one request/response exchange per object, each request
    /// written once the previous response is complete (no pipelining).
    #[default]
    Objects,
    /// RFC 2415 §2's HTTP/1.1 model: the connection's "transfer size is now made up of four web
    /// files": one request (the primary object's), answered by one response of all the page's
    /// objects' bytes.
    Page,
}

impl Http11Transfer {
    pub(crate) fn is_objects(&self) -> bool {
        *self == Http11Transfer::Objects
    }
}

impl Mode {
    pub(crate) fn is_twoway(&self) -> bool {
        *self == Mode::Twoway
    }
}

/// Where a web client's `think` (the inter-page time) is measured from. ns-2's `PagePool/WebTraf`
/// has both (ns-2.35 `webcache/webtraf.cc`: `WebTrafSession::handle` schedules the next page at
/// each page's start when `interPageOption_` is 0, `WebTrafSession::donePage` at each page's end
/// when it is 1, the default since it was added in late 2001; `tcl/ex/web-traffic.tcl` documents
/// "0 for time between the start of 2 pages, 1 for time between the end of a page and the start
/// of the next"). Before the option existed WebTraf spaced page starts only, which is what
/// Seddigh et al.'s model 1 ran (Table 4's "inter-page generation time").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PageSpacing {
    /// Closed loop: the next page starts `think` after the previous page is over (every object
    /// delivered, or given up); one page at a time (`interPageOption_` 1).
    #[default]
    EndToStart,
    /// Open loop: the next page starts `think` after the previous page *started*, whether or not
    /// it is over, so pages may overlap; each page is over when its own objects are, and the
    /// client when all its pages are (`interPageOption_` 0).
    StartToStart,
}

/// How an `http10` page's `objects` draw becomes a whole number of objects.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Rounding {
    /// To the nearest whole number, halves up, as every count is drawn (docs/scenarios.md,
    /// "Random variables"), then at least 1.
    #[default]
    Nearest,
    /// Up, as ns-2 sizes a WebTraf page (ns-2.35 `webcache/webtraf.cc`,
    /// `WebTrafSession::expire`: the page's object count is the ceiling of the page-size draw),
    /// then at least 1. Exp(mean 2) objects then average 1/(1 − e^(−1/2)) ≈ 2.54, not ≈ 2.20.
    Up,
}

impl Rounding {
    pub(crate) fn is_nearest(&self) -> bool {
        *self == Rounding::Nearest
    }
}

impl PageSpacing {
    pub(crate) fn is_end_to_start(&self) -> bool {
        *self == PageSpacing::EndToStart
    }
}

/// The server of an application: one node (`server = "s1"`), or a list (`server = ["w1", "w2"]`)
/// from which each page (each exchange, each file) picks one uniformly at random, from the
/// application's own stream (ns-2's `PagePool/WebTraf pickdst`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Servers(pub Vec<String>);

impl Servers {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl Serialize for Servers {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match &self.0[..] {
            [one] => s.serialize_str(one),
            many => many.serialize(s),
        }
    }
}

/// One node name of a list, refused when empty (at its index).
struct NodeName;

impl<'de> serde::de::DeserializeSeed<'de> for NodeName {
    type Value = String;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<String, D::Error> {
        de_node(d)
    }
}

impl<'de> Deserialize<'de> for Servers {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Servers;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a node name or a non-empty list of node names")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Servers, E> {
                if v.is_empty() {
                    return Err(E::custom("expected a node name, got an empty one (leave the key out for the default node)"));
                }
                Ok(Servers(vec![v.to_string()]))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Servers, A::Error> {
                let mut out = Vec::new();
                while let Some(n) = seq.next_element_seed(NodeName)? {
                    out.push(n);
                }
                if out.is_empty() {
                    return Err(serde::de::Error::custom("expected a non-empty list of node names"));
                }
                Ok(Servers(out))
            }
        }
        d.deserialize_any(V)
    }
}

/// A node name as a key gives it (`client`, `server`, `from`, `to`): never empty, since an
/// empty name would read as the key left out (the default node).
pub fn de_node<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    let name = String::deserialize(d)?;
    if name.is_empty() {
        return Err(serde::de::Error::custom("expected a node name, got an empty one (leave the key out for the default node)"));
    }
    Ok(name)
}

/// RFC 2415 §2.3 (TARGETS.md §2.3): every page has exactly 3 embedded objects.
pub const DEFAULT_EMBEDDED: u64 = 3;

pub(crate) fn default_embedded() -> RandomCount {
    RandomCount::constant(DEFAULT_EMBEDDED)
}

pub(crate) fn default_request() -> RandomSize {
    RandomSize::constant(DEFAULT_REQUEST_BYTES)
}

/// A typical HTTP/1.0 GET with its headers (RFC 2415's clients send "URLs" of a few hundred
/// bytes; Mah 1997 reports request medians near 300 bytes).
pub const DEFAULT_REQUEST_BYTES: u64 = 300;

/// An `[[apps]]` entry: one table per kind, tagged by `kind`, each taking its own keys only, so
/// that a key of another kind is refused by the schema with its key path, whatever its value
/// (`keep_alive = false` on `ftp` too), and the entry as run (`Result.scenario`) writes out the
/// keys of its kind only.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum AppSpec {
    Reqresp(ReqrespSpec),
    Http10(Http10Spec),
    Http11(Http11Spec),
    Ftp(FtpSpec),
    Onoff(OnoffSpec),
    Cbr(CbrSpec),
}

/// The keys of `kind = "reqresp"`: request/response exchanges (docs/scenarios.md lists each key).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReqrespSpec {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty", deserialize_with = "de_node")]
    pub client: String,
    #[serde(default, skip_serializing_if = "Servers::is_empty")]
    pub server: Servers,
    #[serde(default, skip_serializing_if = "Mode::is_twoway")]
    pub mode: Mode,
    #[serde(default)]
    pub start: RandomDuration,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_spacing: Option<RandomDuration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<RandomSize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<RandomSize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<Count>,
    #[serde(default)]
    pub think: RandomDuration,
    #[serde(default)]
    pub tcp: TcpSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_tcp: Option<TcpSpec>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub drops: Vec<AppDropSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instances: Option<u32>,
}

/// The keys of `kind = "http10"`: an HTTP/1.0 web client (docs/scenarios.md lists each key).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Http10Spec {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty", deserialize_with = "de_node")]
    pub client: String,
    #[serde(default, skip_serializing_if = "Servers::is_empty")]
    pub server: Servers,
    #[serde(default, skip_serializing_if = "Mode::is_twoway")]
    pub mode: Mode,
    #[serde(default)]
    pub start: RandomDuration,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_spacing: Option<RandomDuration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<RandomSize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<RandomSize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pages: Option<Count>,
    #[serde(default = "default_embedded")]
    pub embedded: RandomCount,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub objects: Option<RandomCount>,
    #[serde(default, skip_serializing_if = "Rounding::is_nearest")]
    pub objects_rounding: Rounding,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interobject: Option<RandomDuration>,
    #[serde(default)]
    pub think: RandomDuration,
    #[serde(default, skip_serializing_if = "PageSpacing::is_end_to_start")]
    pub page_spacing: PageSpacing,
    #[serde(default)]
    pub tcp: TcpSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_tcp: Option<TcpSpec>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub drops: Vec<AppDropSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instances: Option<u32>,
}

/// The keys of `kind = "http11"`: an HTTP/1.1 web client (docs/scenarios.md lists each key).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Http11Spec {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty", deserialize_with = "de_node")]
    pub client: String,
    #[serde(default, skip_serializing_if = "Servers::is_empty")]
    pub server: Servers,
    #[serde(default)]
    pub start: RandomDuration,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_spacing: Option<RandomDuration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<RandomSize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<RandomSize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pages: Option<Count>,
    #[serde(default = "default_embedded")]
    pub embedded: RandomCount,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub keep_alive: bool,
    #[serde(default, skip_serializing_if = "Http11Transfer::is_objects")]
    pub transfer: Http11Transfer,
    #[serde(default)]
    pub think: RandomDuration,
    #[serde(default, skip_serializing_if = "PageSpacing::is_end_to_start")]
    pub page_spacing: PageSpacing,
    #[serde(default)]
    pub tcp: TcpSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_tcp: Option<TcpSpec>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub drops: Vec<AppDropSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instances: Option<u32>,
}

/// The keys of `kind = "ftp"`: an FTP client (docs/scenarios.md lists each key).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FtpSpec {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty", deserialize_with = "de_node")]
    pub client: String,
    #[serde(default, skip_serializing_if = "Servers::is_empty")]
    pub server: Servers,
    #[serde(default)]
    pub start: RandomDuration,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_spacing: Option<RandomDuration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<RandomSize>,
    #[serde(default, skip_serializing_if = "Direction::is_download")]
    pub direction: Direction,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<Count>,
    #[serde(default)]
    pub think: RandomDuration,
    #[serde(default)]
    pub tcp: TcpSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_tcp: Option<TcpSpec>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub drops: Vec<AppDropSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instances: Option<u32>,
}

/// The keys of `kind = "onoff"`: a UDP ON/OFF source (docs/scenarios.md lists each key).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OnoffSpec {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    #[serde(default)]
    pub start: RandomDuration,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_spacing: Option<RandomDuration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<Count>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instances: Option<u32>,
    #[serde(default, skip_serializing_if = "String::is_empty", deserialize_with = "de_node")]
    pub from: String,
    #[serde(default, skip_serializing_if = "String::is_empty", deserialize_with = "de_node")]
    pub to: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<crate::units::Rate>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_rate: Option<crate::units::Load>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aggregate_rate: Option<crate::units::Load>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on: Option<RandomDuration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub off: Option<RandomDuration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub packet: Option<RandomSize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<Duration>,
}

/// The keys of `kind = "cbr"`: a UDP constant-bit-rate source (docs/scenarios.md lists each key).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CbrSpec {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    #[serde(default)]
    pub start: RandomDuration,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_spacing: Option<RandomDuration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<Count>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instances: Option<u32>,
    #[serde(default, skip_serializing_if = "String::is_empty", deserialize_with = "de_node")]
    pub from: String,
    #[serde(default, skip_serializing_if = "String::is_empty", deserialize_with = "de_node")]
    pub to: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<crate::units::Rate>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_rate: Option<crate::units::Load>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aggregate_rate: Option<crate::units::Load>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub packet: Option<RandomSize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<Duration>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub jitter: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<Duration>,
}

impl<'de> Deserialize<'de> for AppSpec {
    /// Read `kind` first, then the table as that kind's keys (`deny_unknown_fields`): a key of
    /// another kind is refused at its path (`apps[0].embedded`) by the schema, whatever its value.
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<AppSpec, D::Error> {
        use serde::de::Error;
        let tree = toml::Value::deserialize(d)?;
        let toml::Value::Table(mut table) = tree else {
            return Err(D::Error::custom("expected a table (an application entry)"));
        };
        let Some(kind) = table.remove("kind") else {
            return Err(D::Error::custom("missing field `kind`"));
        };
        let kind: AppKind = serde_path_to_error::deserialize(kind).map_err(|e| D::Error::custom(crate::error::nested("kind", &e.inner().to_string())))?;
        fn read<T: serde::de::DeserializeOwned, E: Error>(kind: AppKind, table: toml::Table) -> Result<T, E> {
            serde_path_to_error::deserialize(toml::Value::Table(table)).map_err(|e| {
                let path = e.path().to_string();
                let message = e.into_inner().to_string();
                E::custom(crate::error::nested(&path, &foreign_key(kind, &message).unwrap_or(message)))
            })
        }
        Ok(match kind {
            AppKind::Reqresp => AppSpec::Reqresp(read(kind, table)?),
            AppKind::Http10 => AppSpec::Http10(read(kind, table)?),
            AppKind::Http11 => AppSpec::Http11(read(kind, table)?),
            AppKind::Ftp => AppSpec::Ftp(read(kind, table)?),
            AppKind::Onoff => AppSpec::Onoff(read(kind, table)?),
            AppKind::Cbr => AppSpec::Cbr(read(kind, table)?),
        })
    }
}

/// Every kind, in the order of the docs.
const KINDS: [AppKind; 6] = [AppKind::Reqresp, AppKind::Http10, AppKind::Http11, AppKind::Ftp, AppKind::Onoff, AppKind::Cbr];

/// The keys a kind takes (its table's fields, as serde reads them; `kind` aside).
pub fn keys_of(kind: AppKind) -> &'static [&'static str] {
    fn fields<'de, T: Deserialize<'de>>() -> &'static [&'static str] {
        /// A deserialiser that only records the field names a struct asks for.
        struct Names(&'static [&'static str]);
        impl<'de> serde::Deserializer<'de> for &mut Names {
            type Error = serde::de::value::Error;
            fn deserialize_any<V: serde::de::Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
                Err(serde::de::Error::custom("field names only"))
            }
            fn deserialize_struct<V: serde::de::Visitor<'de>>(self, _: &'static str, fields: &'static [&'static str], _: V) -> Result<V::Value, Self::Error> {
                self.0 = fields;
                Err(serde::de::Error::custom("field names only"))
            }
            serde::forward_to_deserialize_any! {
                bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier ignored_any
            }
        }
        let mut n = Names(&[]);
        let _ = T::deserialize(&mut n);
        n.0
    }
    match kind {
        AppKind::Reqresp => fields::<ReqrespSpec>(),
        AppKind::Http10 => fields::<Http10Spec>(),
        AppKind::Http11 => fields::<Http11Spec>(),
        AppKind::Ftp => fields::<FtpSpec>(),
        AppKind::Onoff => fields::<OnoffSpec>(),
        AppKind::Cbr => fields::<CbrSpec>(),
    }
}

/// serde's "unknown field" for a key that another kind takes, in the words of the schema: which
/// kinds take it, and this kind's keys. None for any other message (a key no kind takes keeps
/// serde's words, which `input::refusal` gives a did-you-mean).
fn foreign_key(kind: AppKind, message: &str) -> Option<String> {
    let key = message.strip_prefix("unknown field `")?.split('`').next()?;
    let takers: Vec<String> = KINDS.iter().filter(|k| keys_of(**k).contains(&key)).map(|k| kind_name(*k)).collect();
    if takers.is_empty() {
        return None;
    }
    let hint = match key {
        "client" | "server" if kind.is_udp() => "; a UDP source's nodes are `from` and `to`",
        "from" | "to" if !kind.is_udp() => "; its nodes are `client` and `server`",
        "count" if matches!(kind, AppKind::Http10 | AppKind::Http11) => "; use `pages`",
        "pages" if matches!(kind, AppKind::Reqresp | AppKind::Ftp) => "; use `count`",
        _ => "",
    };
    Some(format!(
        "does not apply to kind = {} (a key of kind {}){hint}; the keys of kind {} are: {}",
        kind_name(kind),
        takers.join(", "),
        kind_name(kind),
        keys_of(kind).join(", ")
    ))
}

/// A kind as the scenario writes it, quoted: `"reqresp"`.
pub fn kind_name(k: AppKind) -> String {
    serde_json::to_string(&k).expect("serialisable")
}

impl AppSpec {
    /// The kind of this entry.
    pub fn kind(&self) -> AppKind {
        match self {
            AppSpec::Reqresp(_) => AppKind::Reqresp,
            AppSpec::Http10(_) => AppKind::Http10,
            AppSpec::Http11(_) => AppKind::Http11,
            AppSpec::Ftp(_) => AppKind::Ftp,
            AppSpec::Onoff(_) => AppKind::Onoff,
            AppSpec::Cbr(_) => AppKind::Cbr,
        }
    }

    /// The entry's TCP knobs (`tcp`; empty for a UDP source).
    pub fn tcp(&self) -> Option<&TcpSpec> {
        match self {
            AppSpec::Reqresp(a) => Some(&a.tcp),
            AppSpec::Http10(a) => Some(&a.tcp),
            AppSpec::Http11(a) => Some(&a.tcp),
            AppSpec::Ftp(a) => Some(&a.tcp),
            AppSpec::Onoff(_) => None,
            AppSpec::Cbr(_) => None,
        }
    }

    /// The server end's TCP knobs (`server_tcp`), if given.
    pub fn server_tcp(&self) -> Option<&TcpSpec> {
        match self {
            AppSpec::Reqresp(a) => a.server_tcp.as_ref(),
            AppSpec::Http10(a) => a.server_tcp.as_ref(),
            AppSpec::Http11(a) => a.server_tcp.as_ref(),
            AppSpec::Ftp(a) => a.server_tcp.as_ref(),
            AppSpec::Onoff(_) => None,
            AppSpec::Cbr(_) => None,
        }
    }

    /// The flat view of every key (`AppFields`), with the defaults of the keys this kind does
    /// not take. The entry is written out as its kind's table and read back as the flat view, so
    /// a new key needs no line here: its field in each kind's struct and in `AppFields` carry it.
    pub fn fields(&self) -> AppFields {
        let table = serde_json::to_value(self).expect("an application entry serialises");
        let mut f: AppFields = serde_json::from_value(table).expect("an application entry reads back as the flat view (AppFields has every key of every kind)");
        f.kind = self.kind();
        f
    }
}

/// Every key of an application entry, of whichever kind, in one flat view with the defaults of
/// the keys its kind does not take (`AppSpec::fields`): what the resolution reads. Only the
/// schema (`AppSpec`) decides which keys a kind takes; each key's default is the one written
/// here (`#[serde(default)]`: the type's own, or the function named), read when the kind's table
/// leaves the key out.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct AppFields {
    #[serde(skip_deserializing, default = "unset_kind")]
    pub kind: AppKind,
    /// Name of the application in the records (default `app{index}`).
    #[serde(default)]
    pub name: String,
    /// The node that opens the connections and sends the requests.
    #[serde(default)]
    pub client: String,
    /// The node that listens and answers, or a list of nodes: each page (exchange, file) picks
    /// one at random.
    #[serde(default)]
    pub server: Servers,
    /// `reqresp`, `http10`: `"twoway"` (default) or `"oneway"` (ns-2's one-way web model).
    #[serde(default)]
    pub mode: Mode,
    /// When the first exchange starts; a random duration is drawn per instance.
    #[serde(default)]
    pub start: RandomDuration,
    /// With `instances`: member k starts `start_spacing` after member k − 1 (drawn per member:
    /// `{ uniform = ["0s", "2s"] }` is Seddigh et al.'s inter-session time).
    #[serde(default)]
    pub start_spacing: Option<RandomDuration>,
    /// Bytes of each request (drawn per exchange when random; default 300B; not for `ftp`).
    #[serde(default)]
    pub request: Option<RandomSize>,
    /// Bytes of each response (drawn per exchange when random; required; not for `ftp`).
    #[serde(default)]
    pub response: Option<RandomSize>,
    /// `ftp`: bytes of each file (required).
    #[serde(default)]
    pub file: Option<RandomSize>,
    /// `ftp`: `"download"` (server → client, default) or `"upload"`.
    #[serde(default)]
    pub direction: Direction,
    /// `reqresp`: exchanges made one after another (default 1; `"unlimited"` needs a `duration`).
    #[serde(default)]
    pub count: Option<Count>,
    /// Web clients: pages fetched one after another (default 1; `"unlimited"` needs a `duration`).
    #[serde(default)]
    pub pages: Option<Count>,
    /// Web clients: embedded objects per page, drawn per page (default 3, RFC 2415).
    #[serde(default = "default_embedded")]
    pub embedded: RandomCount,
    /// `http10`: a page is this many objects (drawn per page, at least 1), none of them primary,
    /// started `interobject` apart: ns-2's `PagePool/WebTraf` page (Seddigh et al.'s model 1).
    #[serde(default)]
    pub objects: Option<RandomCount>,
    /// `http10` with `objects`: `"nearest"` (default) or `"up"` (ns-2's page size). See `Rounding`.
    #[serde(default)]
    pub objects_rounding: Rounding,
    /// `http10` with `objects`: from one object's start to the next one's, within a page
    /// (default 0s: all at once).
    #[serde(default)]
    pub interobject: Option<RandomDuration>,
    /// `http11`: keep the persistent connection open from page to page (default false: one
    /// connection per page, as RFC 2415's model).
    #[serde(default)]
    pub keep_alive: bool,
    /// `http11`: `"objects"` (default: the page's objects in turn, one exchange each) or
    /// `"page"` (RFC 2415's model: one request, one response of the whole page's bytes).
    #[serde(default)]
    pub transfer: Http11Transfer,
    /// Pause after one exchange (a web client: one page) ends before the next starts; with
    /// `page_spacing = "start_to_start"`, from one page's start to the next one's.
    #[serde(default)]
    pub think: RandomDuration,
    /// Web clients: `"end_to_start"` (default: `think` runs from the end of a page, closed loop)
    /// or, `http10` only, `"start_to_start"` (from the start of a page, open loop; ns-2's
    /// `interPageOption_` 0). See `PageSpacing`.
    #[serde(default)]
    pub page_spacing: PageSpacing,
    /// TCP knobs of this application's connections, over the scenario's `[tcp]`.
    #[serde(default)]
    pub tcp: TcpSpec,
    /// TCP knobs of the server's end only, over `tcp`: a client and a server of different stacks
    /// (Seddigh §3: a Linux 2.2 client fetching from a VxWorks server).
    #[serde(default)]
    pub server_tcp: Option<TcpSpec>,
    /// Deterministic drops of this application's packets.
    #[serde(default)]
    pub drops: Vec<AppDropSpec>,
    /// Copies of this entry (default 1): member k (from 1) takes the entry's names with `{i}`
    /// replaced by k (`template.rs`: `"web{i}"`, `"c{i%4}"`, `"x{i/8+2}"`) and draws its random
    /// variables from streams of its own name.
    #[serde(default)]
    pub instances: Option<u32>,
    /// UDP sources: the sending node and the receiving node (its sink counts what arrives).
    #[serde(default)]
    pub from: String,
    #[serde(default)]
    pub to: String,
    /// UDP sources: the sending rate while ON (`onoff`) or always (`cbr`), counting whole IP
    /// packets.
    #[serde(default)]
    pub rate: Option<crate::units::Rate>,
    /// UDP sources: the long-run mean rate each source should have; tcplab derives its `rate`
    /// (`traffic::on_rate_for`). Zero makes the source silent.
    #[serde(default)]
    pub mean_rate: Option<crate::units::Load>,
    /// UDP sources: the mean rate of all the entry's `instances` together, shared equally.
    #[serde(default)]
    pub aggregate_rate: Option<crate::units::Load>,
    /// `onoff`: length of a burst (default ns-2's: Pareto, shape 1.5, mean 500 ms).
    #[serde(default)]
    pub on: Option<RandomDuration>,
    /// `onoff`: length of a silence (default ns-2's: Pareto, shape 1.5, mean 500 ms).
    #[serde(default)]
    pub off: Option<RandomDuration>,
    /// UDP sources: size of each IP packet, headers included (default 210 B, ns-2's; at least
    /// 28 B, the IPv4 and UDP headers), drawn per packet when random.
    #[serde(default)]
    pub packet: Option<RandomSize>,
    /// `cbr`: time between packets, instead of `rate`.
    #[serde(default)]
    pub interval: Option<Duration>,
    /// `cbr`: dither each interval by a uniform ±50 % (ns-2's `random_`).
    #[serde(default)]
    pub jitter: bool,
    /// UDP sources: when the source falls silent for good (default: the end of the run).
    #[serde(default)]
    pub stop: Option<Duration>,
}

/// `AppFields::kind` before `AppSpec::fields` sets it from the entry.
fn unset_kind() -> AppKind {
    AppKind::Reqresp
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AppDropKind {
    /// Data segment `segment` of the request (default 1: the GET), where it leaves the client.
    Request,
    /// Data segment `segment` of the response (default 1), where it leaves the server.
    Response,
    /// The client's SYN.
    Syn,
    /// The server's SYN-ACK.
    Synack,
}

/// Drop chosen packets of an application's exchanges: `{ kind = "request", object = 2 }` (the
/// second exchange's GET), `{ kind = "syn", transmissions = [1, 2] }` (every exchange's first two
/// SYNs), `{ kind = "response", segment = 3, object = 1 }`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AppDropSpec {
    pub kind: AppDropKind,
    /// Only this exchange (object, 1-based); default every one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object: Option<u32>,
    /// Data segment of the request or the response (1-based, by sequence).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub segment: Option<u64>,
    /// Which transmissions to drop (default `[1]`, the first).
    #[serde(default = "first_tx")]
    pub transmissions: Vec<u32>,
}

fn first_tx() -> Vec<u32> {
    vec![1]
}

