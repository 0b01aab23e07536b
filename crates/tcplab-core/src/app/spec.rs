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

use crate::net::FilterKind;
use crate::rv::{RandomCount, RandomDuration, RandomSize};
use crate::scenario::{err, Count, Network, Scenario, ScenarioError, TopologyKind};
use crate::tcp::{TcpConfig, TcpSpec};
use crate::units::{Duration, Time};
use serde::{Deserialize, Serialize};
use std::collections::HashSet;

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
    fn is_download(&self) -> bool {
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
    fn is_objects(&self) -> bool {
        *self == Http11Transfer::Objects
    }
}

impl Mode {
    fn is_twoway(&self) -> bool {
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
    fn is_nearest(&self) -> bool {
        *self == Rounding::Nearest
    }
}

impl PageSpacing {
    fn is_end_to_start(&self) -> bool {
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

impl<'de> Deserialize<'de> for Servers {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Servers;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a node name or a non-empty list of node names")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Servers, E> {
                Ok(Servers(vec![v.to_string()]))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Servers, A::Error> {
                let mut out = Vec::new();
                while let Some(n) = seq.next_element::<String>()? {
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

/// RFC 2415 §2.3 (TARGETS.md §2.3): every page has exactly 3 embedded objects.
pub const DEFAULT_EMBEDDED: u64 = 3;

fn default_embedded() -> RandomCount {
    RandomCount::constant(DEFAULT_EMBEDDED)
}

fn default_request() -> RandomSize {
    RandomSize::constant(DEFAULT_REQUEST_BYTES)
}

/// A typical HTTP/1.0 GET with its headers (RFC 2415's clients send "URLs" of a few hundred
/// bytes; Mah 1997 reports request medians near 300 bytes).
pub const DEFAULT_REQUEST_BYTES: u64 = 300;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AppSpec {
    pub kind: AppKind,
    /// Name of the application in the records (default `app{index}`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// The node that opens the connections and sends the requests.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub client: String,
    /// The node that listens and answers, or a list of nodes: each page (exchange, file) picks
    /// one at random.
    #[serde(default, skip_serializing_if = "Servers::is_empty")]
    pub server: Servers,
    /// `reqresp`, `http10`: `"twoway"` (default) or `"oneway"` (ns-2's one-way web model).
    #[serde(default, skip_serializing_if = "Mode::is_twoway")]
    pub mode: Mode,
    /// When the first exchange starts; a random duration is drawn per instance.
    #[serde(default)]
    pub start: RandomDuration,
    /// With `instances`: member k starts `start_spacing` after member k − 1 (drawn per member:
    /// `{ uniform = ["0s", "2s"] }` is Seddigh et al.'s inter-session time).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_spacing: Option<RandomDuration>,
    /// Bytes of each request (drawn per exchange when random; default 300B; not for `ftp`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<RandomSize>,
    /// Bytes of each response (drawn per exchange when random; required; not for `ftp`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<RandomSize>,
    /// `ftp`: bytes of each file (required).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<RandomSize>,
    /// `ftp`: `"download"` (server → client, default) or `"upload"`.
    #[serde(default, skip_serializing_if = "Direction::is_download")]
    pub direction: Direction,
    /// `reqresp`: exchanges made one after another (default 1; `"unlimited"` needs a `duration`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<Count>,
    /// Web clients: pages fetched one after another (default 1; `"unlimited"` needs a `duration`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pages: Option<Count>,
    /// Web clients: embedded objects per page, drawn per page (default 3, RFC 2415).
    #[serde(default = "default_embedded")]
    pub embedded: RandomCount,
    /// `http10`: a page is this many objects (drawn per page, at least 1), none of them primary,
    /// started `interobject` apart: ns-2's `PagePool/WebTraf` page (Seddigh et al.'s model 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub objects: Option<RandomCount>,
    /// `http10` with `objects`: `"nearest"` (default) or `"up"` (ns-2's page size). See `Rounding`.
    #[serde(default, skip_serializing_if = "Rounding::is_nearest")]
    pub objects_rounding: Rounding,
    /// `http10` with `objects`: from one object's start to the next one's, within a page
    /// (default 0s: all at once).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interobject: Option<RandomDuration>,
    /// `http11`: keep the persistent connection open from page to page (default false: one
    /// connection per page, as RFC 2415's model).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub keep_alive: bool,
    /// `http11`: `"objects"` (default: the page's objects in turn, one exchange each) or
    /// `"page"` (RFC 2415's model: one request, one response of the whole page's bytes).
    #[serde(default, skip_serializing_if = "Http11Transfer::is_objects")]
    pub transfer: Http11Transfer,
    /// Pause after one exchange (a web client: one page) ends before the next starts; with
    /// `page_spacing = "start_to_start"`, from one page's start to the next one's.
    #[serde(default)]
    pub think: RandomDuration,
    /// Web clients: `"end_to_start"` (default: `think` runs from the end of a page, closed loop)
    /// or, `http10` only, `"start_to_start"` (from the start of a page, open loop; ns-2's
    /// `interPageOption_` 0). See `PageSpacing`.
    #[serde(default, skip_serializing_if = "PageSpacing::is_end_to_start")]
    pub page_spacing: PageSpacing,
    /// TCP knobs of this application's connections, over the scenario's `[tcp]`.
    #[serde(default)]
    pub tcp: TcpSpec,
    /// TCP knobs of the server's end only, over `tcp`: a client and a server of different stacks
    /// (Seddigh §3: a Linux 2.2 client fetching from a VxWorks server).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_tcp: Option<TcpSpec>,
    /// Deterministic drops of this application's packets.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub drops: Vec<AppDropSpec>,
    /// Copies of this entry (default 1): member k (from 1) takes the entry's names with `{i}`
    /// replaced by k (`template.rs`: `"web{i}"`, `"c{i%4}"`, `"x{i/8+2}"`) and draws its random
    /// variables from streams of its own name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instances: Option<u32>,
    /// UDP sources: the sending node and the receiving node (its sink counts what arrives).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub from: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub to: String,
    /// UDP sources: the sending rate while ON (`onoff`) or always (`cbr`), counting whole IP
    /// packets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<crate::units::Rate>,
    /// UDP sources: the long-run mean rate each source should have; tcplab derives its `rate`
    /// (`traffic::on_rate_for`). Zero makes the source silent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_rate: Option<crate::units::Load>,
    /// UDP sources: the mean rate of all the entry's `instances` together, shared equally.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aggregate_rate: Option<crate::units::Load>,
    /// `onoff`: length of a burst (default ns-2's: Pareto, shape 1.5, mean 500 ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on: Option<RandomDuration>,
    /// `onoff`: length of a silence (default ns-2's: Pareto, shape 1.5, mean 500 ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub off: Option<RandomDuration>,
    /// UDP sources: size of each IP packet, headers included (default 210 B, ns-2's; at least
    /// 28 B, the IPv4 and UDP headers), drawn per packet when random.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub packet: Option<RandomSize>,
    /// `cbr`: time between packets, instead of `rate`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<Duration>,
    /// `cbr`: dither each interval by a uniform ±50 % (ns-2's `random_`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub jitter: bool,
    /// UDP sources: when the source falls silent for good (default: the end of the run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<Duration>,
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

/// A drop filter of an application, ready for the world: what it matches, the transmissions,
/// the exchange (label epoch), and whether it sits where the client's packets leave (else the
/// server's).
#[derive(Clone, Debug, PartialEq)]
pub struct AppDrop {
    pub kind: FilterKind,
    pub transmissions: Vec<u32>,
    pub object: Option<u32>,
    pub at_client: bool,
}

/// An application entry bound to the network.
#[derive(Clone, Debug)]
pub struct ResolvedApp {
    pub kind: AppKind,
    pub name: String,
    pub client: usize,
    /// The server (the first of `servers`).
    pub server: usize,
    /// Every server the application picks from (one: always `server`).
    pub servers: Vec<usize>,
    pub mode: Mode,
    pub start: Time,
    pub request: RandomSize,
    pub response: RandomSize,
    /// Exchanges (`reqresp`) or pages (web clients); None = unlimited.
    pub count: Option<u32>,
    pub embedded: RandomCount,
    /// Objects per page of an ns-2 style page (no primary), and the time between their starts.
    pub objects: Option<RandomCount>,
    pub objects_rounding: Rounding,
    pub interobject: RandomDuration,
    pub keep_alive: bool,
    pub transfer: Http11Transfer,
    pub think: RandomDuration,
    /// Web clients: where `think` runs from (a page's end, or its start).
    pub page_spacing: PageSpacing,
    pub tcp: TcpConfig,
    /// The server's end: `tcp` with `server_tcp` over it (the same as `tcp` without it).
    pub server_tcp: TcpConfig,
    pub drops: Vec<AppDrop>,
    /// A UDP source's pattern and rates (`kind = "onoff"` or `"cbr"`); `client` is the sending
    /// node and `server` the sink.
    pub traffic: Option<super::traffic::TrafficSpec>,
}

fn kind_name(k: AppKind) -> String {
    serde_json::to_string(&k).expect("serialisable")
}

/// Resolve every `[[apps]]` entry of `s` against its network, one `ResolvedApp` per instance;
/// random start times are drawn with `seed` (member by member, from the streams
/// `app:<name>:start` and `app:<name>:start_spacing` of the entry's `name` as written).
pub fn resolve(s: &Scenario, net: &Network, seed: u64) -> Result<Vec<ResolvedApp>, ScenarioError> {
    if s.apps.is_empty() {
        return Ok(Vec::new()); // no index of the nodes to build
    }
    let single = s.topology.kind == TopologyKind::SingleLink;
    let index = crate::scenario::name_index(&net.nodes);
    let mut names: HashSet<String> = HashSet::new();
    let mut out = Vec::with_capacity(s.apps.len());
    for (i, a) in s.apps.iter().enumerate() {
        let path = format!("apps[{i}]");
        let instances = a.instances.unwrap_or(1);
        if instances == 0 {
            return err(format!("{path}.instances"), "expected at least 1");
        }
        let udp = a.kind.is_udp();
        let kind = kind_name(a.kind);
        // Which node keys this kind reads: a TCP application's client and server, a UDP source's
        // from and to.
        let (ck, sk) = if udp { ("from", "to") } else { ("client", "server") };
        let cg = if udp { &a.from } else { &a.client };
        // The sink of a UDP source, or the server(s) of a TCP application.
        let sgs: Vec<String> = if udp { vec![a.to.clone()] } else if a.server.0.is_empty() { vec![String::new()] } else { a.server.0.clone() };
        for (key, given) in [("from", !a.from.is_empty()), ("to", !a.to.is_empty()), ("client", !a.client.is_empty()), ("server", !a.server.is_empty())] {
            if given && key != ck && key != sk {
                let use_ = if udp { "from/to" } else { "client/server" };
                return err(format!("{path}.{key}"), format!("does not apply to kind = {kind}; use {use_}"));
            }
        }
        let proto = if udp { entry_udp(a, &path, &kind, s, instances)? } else { entry_tcp(a, &path, &kind, s)? };
        let base = if a.name.is_empty() { format!("app{i}") } else { a.name.clone() };
        let mut start_rng = crate::engine::RngStream::new(seed, &format!("app:{base}:start"));
        let mut spacing_rng = crate::engine::RngStream::new(seed, &format!("app:{base}:start_spacing"));
        if a.start_spacing.is_some() && instances == 1 {
            return err(format!("{path}.start_spacing"), "applies to an entry with `instances` > 1");
        }
        let mut offset: u128 = 0;
        for k in 1..=instances as u64 {
            if k > 1 {
                offset += a.start_spacing.as_ref().map_or(0, |r| r.sample(&mut spacing_rng)) as u128;
            }
            let start = a.start.sample(&mut start_rng) as u128 + offset;
            if start > crate::units::MAX_TIME as u128 {
                return err(format!("{path}.start"), format!("instance {k} would start after the largest simulated time (2^62 ns)"));
            }
            let start = start as Time;
            if let Some(stop) = proto.traffic.as_ref().and_then(|t| t.stop) {
                if stop < start {
                    return err(format!("{path}.stop"), format!("the source stops before it starts (instance {k} starts at {}s)", crate::units::to_secs(start)));
                }
            }
            let member = |key: &str, t: &str| -> Result<String, ScenarioError> {
                crate::template::expand(t, k).map_err(|e| ScenarioError { path: format!("{path}.{key}"), message: e })
            };
            let of = if instances > 1 { format!(" (instance {k})") } else { String::new() };
            let node = |given: &str, single_default: &str, key: &str| -> Result<usize, ScenarioError> {
                let n = match (given.is_empty(), single) {
                    (false, _) => member(key, given)?,
                    (true, true) => single_default.to_string(),
                    (true, false) => return err(format!("{path}.{key}"), "required (the node name) for this topology"),
                };
                index.get(n.as_str()).copied().ok_or_else(|| ScenarioError {
                    path: format!("{path}.{key}"),
                    message: format!("unknown node {n:?}{of}; nodes are: {}", net.nodes.join(", ")),
                })
            };
            // On a single link the response (or the UDP traffic) crosses the forward direction,
            // where `loss` applies.
            let client = node(cg, if udp { "sender" } else { "receiver" }, ck)?;
            let servers = sgs
                .iter()
                .enumerate()
                .map(|(j, g)| node(g, if udp { "receiver" } else { "sender" }, &if sgs.len() > 1 { format!("{sk}[{j}]") } else { sk.to_string() }))
                .collect::<Result<Vec<_>, _>>()?;
            if let Some(j) = servers.iter().position(|&x| x == client) {
                let key = if servers.len() > 1 { format!("{path}.{sk}[{j}]") } else { path.clone() };
                return err(key, format!("{ck} and {sk} must be two different nodes, got {:?} twice{of}", net.nodes[client]));
            }
            let server = servers[0];
            let name = match (crate::template::is_template(&base), instances) {
                (true, _) => member("name", &base)?,
                (false, 1) => base.clone(),
                (false, _) => format!("{base}.{k}"),
            };
            if !names.insert(name.clone()) {
                return err(format!("{path}.name"), format!("application name {name:?} is used twice{of}"));
            }
            out.push(ResolvedApp { name, client, server, servers, start, ..proto.clone() });
        }
    }
    Ok(out)
}

/// The server's end of an application: `[tcp]`, the entry's `tcp`, then its `server_tcp`; an
/// error names `server_tcp` when that is where the offending knob is set.
fn server_config(s: &Scenario, a: &AppSpec, st: &TcpSpec, path: &str) -> Result<TcpConfig, ScenarioError> {
    s.tcp_config(&a.tcp.merged_with(st), path).map_err(|mut e| {
        let sets = serde_json::to_value(st).ok().and_then(|v| v.as_object().cloned()).unwrap_or_default();
        if let Some(knob) = e.path.rsplit('.').next().map(str::to_string) {
            if sets.contains_key(&knob) {
                e.path = format!("{path}.server_tcp.{knob}");
            }
        }
        e
    })
}

/// The checks and resolution of a UDP source entry, shared by its instances.
fn entry_udp(a: &AppSpec, path: &str, kind: &str, s: &Scenario, instances: u32) -> Result<ResolvedApp, ScenarioError> {
    let given = [
        ("request", a.request.is_some()),
        ("response", a.response.is_some()),
        ("file", a.file.is_some()),
        ("direction", !a.direction.is_download()),
        ("pages", a.pages.is_some()),
        ("embedded", a.embedded != default_embedded()),
        ("keep_alive", a.keep_alive),
        ("transfer", !a.transfer.is_objects()),
        ("think", a.think != RandomDuration::default()),
        ("page_spacing", !a.page_spacing.is_end_to_start()),
        ("tcp", a.tcp != TcpSpec::default()),
        ("server_tcp", a.server_tcp.is_some()),
        ("drops", !a.drops.is_empty()),
        ("mode", a.mode != Mode::default()),
        ("objects", a.objects.is_some()),
        ("objects_rounding", !a.objects_rounding.is_nearest()),
        ("interobject", a.interobject.is_some()),
    ];
    for (key, g) in given {
        if g {
            return err(format!("{path}.{key}"), format!("does not apply to kind = {kind} (a UDP source)"));
        }
    }
    let traffic = super::traffic::TrafficSpec::resolve(a, path, instances)?;
    let count = match a.count {
        None | Some(Count::Unlimited(_)) => None,
        Some(Count::N(n)) => Some(n),
    };
    if count.is_none() && a.stop.is_none() && s.duration.is_none() && s.flows.is_empty() && s.apps.iter().all(|x| x.kind.is_udp()) {
        return err(format!("{path}.count"), "a run of UDP sources alone needs an end: a `duration`, or the sources' `count` or `stop`");
    }
    Ok(ResolvedApp {
        kind: a.kind,
        name: String::new(),
        client: 0,
        server: 0,
        servers: Vec::new(),
        mode: Mode::default(),
        start: 0,
        request: RandomSize::constant(0),
        response: RandomSize::constant(0),
        count,
        embedded: RandomCount::constant(0),
        objects: None,
        objects_rounding: Rounding::default(),
        interobject: RandomDuration::default(),
        keep_alive: false,
        transfer: Http11Transfer::default(),
        think: RandomDuration::default(),
        page_spacing: PageSpacing::default(),
        // A UDP source has no TCP; the field is unused (and the scenario's [tcp] is not judged here).
        tcp: TcpConfig::profile("rfc").expect("the rfc profile"),
        server_tcp: TcpConfig::profile("rfc").expect("the rfc profile"),
        drops: Vec::new(),
        traffic: Some(traffic),
    })
}

/// The checks and resolution of a TCP application entry, shared by its instances.
fn entry_tcp(a: &AppSpec, path: &str, kind: &str, s: &Scenario) -> Result<ResolvedApp, ScenarioError> {
    let path = path.to_string();
    let udp_keys = [
        ("rate", a.rate.is_some()),
        ("mean_rate", a.mean_rate.is_some()),
        ("aggregate_rate", a.aggregate_rate.is_some()),
        ("on", a.on.is_some()),
        ("off", a.off.is_some()),
        ("packet", a.packet.is_some()),
        ("interval", a.interval.is_some()),
        ("jitter", a.jitter),
        ("stop", a.stop.is_some()),
    ];
    for (key, g) in udp_keys {
        if g {
            return err(format!("{path}.{key}"), format!("applies to UDP sources only (kind = \"onoff\" or \"cbr\"), not to kind = {kind}"));
        }
    }
    // What each exchange sends: an FTP file is a response (download) or a request (upload)
    // on a data connection of its own, with the command or the reply as the other message.
    let ftp = a.kind == AppKind::Ftp;
    for (key, given, wanted) in [("request", a.request.is_some(), !ftp), ("response", a.response.is_some(), !ftp), ("file", a.file.is_some(), ftp), ("direction", !a.direction.is_download(), ftp)] {
        if given && !wanted {
            return err(format!("{path}.{key}"), format!("does not apply to kind = {kind}"));
        }
    }
    let required = |v: &Option<RandomSize>, key: &str| v.clone().ok_or_else(|| ScenarioError { path: format!("{path}.{key}"), message: format!("required for kind = {kind}") });
    let (request, response) = match (ftp, a.direction) {
        (false, _) => (a.request.clone().unwrap_or_else(default_request), required(&a.response, "response")?),
        (true, Direction::Download) => (RandomSize::constant(FTP_COMMAND_BYTES), required(&a.file, "file")?),
        (true, Direction::Upload) => (required(&a.file, "file")?, RandomSize::constant(FTP_REPLY_BYTES)),
    };
    if request.as_constant() == Some(0) {
        let key = if ftp { "file" } else { "request" };
        return err(format!("{path}.{key}"), "needs at least one byte (the server answers once it is delivered)");
    }
    let web = matches!(a.kind, AppKind::Http10 | AppKind::Http11);
    let (key, given, refused) = if web { ("pages", a.pages, a.count.map(|_| "count")) } else { ("count", a.count, a.pages.map(|_| "pages")) };
    if let Some(k) = refused {
        return err(format!("{path}.{k}"), format!("does not apply to kind = {}; use `{key}`", kind_name(a.kind)));
    }
    if !web && a.embedded != default_embedded() {
        return err(format!("{path}.embedded"), "applies to web clients only (kind = \"http10\" or \"http11\")");
    }
    if a.keep_alive && a.kind != AppKind::Http11 {
        return err(format!("{path}.keep_alive"), "applies to kind = \"http11\" only");
    }
    if !a.transfer.is_objects() && a.kind != AppKind::Http11 {
        return err(format!("{path}.transfer"), "applies to kind = \"http11\" only");
    }
    if a.keep_alive && a.server.0.len() > 1 {
        return err(format!("{path}.server"), "one server only with keep_alive (a kept-alive connection stays with its server)");
    }
    if a.mode == Mode::Oneway && !matches!(a.kind, AppKind::Reqresp | AppKind::Http10) {
        return err(format!("{path}.mode"), "\"oneway\" applies to kind = \"reqresp\" or \"http10\" only");
    }
    if a.objects.is_some() && a.kind != AppKind::Http10 {
        return err(format!("{path}.objects"), "applies to kind = \"http10\" only");
    }
    if a.objects.is_some() && a.embedded != default_embedded() {
        return err(format!("{path}.embedded"), "a page of `objects` has no primary object to embed in; give `objects` or `embedded`, not both");
    }
    if a.interobject.is_some() && a.objects.is_none() {
        return err(format!("{path}.interobject"), "applies to pages of `objects` only");
    }
    if !a.objects_rounding.is_nearest() && a.objects.is_none() {
        return err(format!("{path}.objects_rounding"), "applies to pages of `objects` only");
    }
    let open_loop = a.page_spacing == PageSpacing::StartToStart;
    if open_loop && a.kind != AppKind::Http10 {
        let why = if a.kind == AppKind::Http11 { " (an http11 page's objects take turns on one connection, so its pages cannot overlap)" } else { "" };
        return err(format!("{path}.page_spacing"), format!("\"start_to_start\" applies to kind = \"http10\" only{why}"));
    }
    let count = match given.unwrap_or(Count::N(1)) {
        Count::N(n) => Some(n),
        Count::Unlimited(_) => None,
    };
    // Open loop, no page limit and pages that start at one instant would never let the clock move.
    if open_loop && count.is_none() && a.think.mean().is_some_and(|m| m < 1.0) {
        return err(format!("{path}.think"), "page_spacing = \"start_to_start\" with unlimited pages needs a think time above zero (pages would start forever at one instant)");
    }
    if count.is_none() && s.duration.is_none() {
        return err(format!("{path}.{key}"), format!("unlimited {key} need a `duration` for the run"));
    }
    let mut tcp = s.tcp_config(&a.tcp, &path)?;
    let mut server_tcp = match &a.server_tcp {
        None => tcp.clone(),
        Some(st) => server_config(s, a, st, &path)?,
    };
    // Both ends take part in one handshake (or in none).
    for (key, c, ours) in [("handshake", server_tcp.handshake, tcp.handshake), ("fin", server_tcp.fin, tcp.fin)] {
        if c != ours && a.mode != Mode::Oneway {
            // Name the key that made them differ: the knob itself, else the server's profile.
            let st = a.server_tcp.as_ref().expect("only server_tcp can make the ends differ");
            let own = if key == "handshake" { st.handshake } else { st.fin };
            let at = if own.is_some() { key } else if st.profile.is_some() { "profile" } else { "preset" };
            return err(format!("{path}.server_tcp.{at}"), format!("gives the server's end {key} = {c} and the client's end has {key} = {ours}; both ends of a connection must agree"));
        }
    }
    if a.mode == Mode::Oneway {
        // ns-2's Agent/TCP and TCPSink: open at once, nothing after the last byte.
        let server_sets = |k: &str| a.server_tcp.as_ref().and_then(|t| if k == "handshake" { t.handshake } else { t.fin });
        for (key, set) in [("handshake", a.tcp.handshake), ("fin", a.tcp.fin)] {
            if set == Some(true) {
                return err(format!("{path}.tcp.{key}"), "mode = \"oneway\" has neither handshakes nor FINs (ns-2's one-way TCP)");
            }
            if server_sets(key) == Some(true) {
                return err(format!("{path}.server_tcp.{key}"), "mode = \"oneway\" has neither handshakes nor FINs (ns-2's one-way TCP)");
            }
        }
        tcp.handshake = false;
        tcp.fin = false;
        server_tcp.handshake = false;
        server_tcp.fin = false;
    }
    let mut drops = Vec::with_capacity(a.drops.len());
    for (di, d) in a.drops.iter().enumerate() {
        let dpath = format!("{path}.drops[{di}]");
        if d.transmissions.is_empty() {
            return err(format!("{dpath}.transmissions"), "expected transmission numbers from 1");
        }
        if let Some(k) = d.transmissions.iter().position(|&t| t == 0) {
            return err(format!("{dpath}.transmissions[{k}]"), "expected a transmission number from 1");
        }
        if d.object == Some(0) {
            return err(format!("{dpath}.object"), "expected an object (exchange) number from 1");
        }
        if !matches!(d.kind, AppDropKind::Request | AppDropKind::Response) && d.segment.is_some() {
            return err(format!("{dpath}.segment"), "applies to kind = \"request\" and \"response\" only");
        }
        if d.segment == Some(0) {
            return err(format!("{dpath}.segment"), "expected a segment number from 1");
        }
        // Each exchange has a connection of its own, whose data starts at segment 1 in each
        // direction: the request is the client's data from segment 1 (the GET, or an upload's
        // first segment), the response the server's.
        let seg = d.segment.unwrap_or(1);
        let (kind, at_client) = match d.kind {
            AppDropKind::Request => (FilterKind::Data { seg }, true),
            AppDropKind::Syn => (FilterKind::Syn, true),
            AppDropKind::Synack => (FilterKind::SynAck, false),
            AppDropKind::Response => (FilterKind::Data { seg }, false),
        };
        // On a persistent connection only its first object's messages start at segment 1.
        if a.kind == AppKind::Http11 && matches!(d.kind, AppDropKind::Request | AppDropKind::Response) {
            return err(format!("{dpath}.kind"), "kind = \"http11\" takes drops of kind \"syn\" and \"synack\" only (its objects share one connection)");
        }
        if !tcp.handshake && matches!(d.kind, AppDropKind::Syn | AppDropKind::Synack) {
            return err(format!("{dpath}.kind"), "there is no handshake to drop from (tcp.handshake = false)");
        }
        drops.push(AppDrop { kind, transmissions: d.transmissions.clone(), object: d.object, at_client });
    }
    Ok(ResolvedApp {
        kind: a.kind,
        name: String::new(),
        client: 0,
        server: 0,
        servers: Vec::new(),
        mode: a.mode,
        start: 0,
        request,
        response,
        count,
        embedded: a.embedded.clone(),
        objects: a.objects.clone(),
        objects_rounding: a.objects_rounding,
        interobject: a.interobject.clone().unwrap_or_default(),
        keep_alive: a.keep_alive,
        transfer: a.transfer,
        think: a.think.clone(),
        page_spacing: a.page_spacing,
        tcp,
        server_tcp,
        drops,
        traffic: None,
    })
}
