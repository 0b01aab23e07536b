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

impl Mode {
    fn is_twoway(&self) -> bool {
        *self == Mode::Twoway
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
    /// When the first exchange starts.
    #[serde(default)]
    pub start: Duration,
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
    /// `http10` with `objects`: from one object's start to the next one's, within a page
    /// (default 0s: all at once).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interobject: Option<RandomDuration>,
    /// `http11`: keep the persistent connection open from page to page (default false: one
    /// connection per page, as RFC 2415's model).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub keep_alive: bool,
    /// Pause after one exchange (a web client: one page) ends before the next starts.
    #[serde(default)]
    pub think: RandomDuration,
    /// TCP knobs of this application's connections, over the scenario's `[tcp]`.
    #[serde(default)]
    pub tcp: TcpSpec,
    /// Deterministic drops of this application's packets.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub drops: Vec<AppDropSpec>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AppDropKind {
    /// The request's first data segment (the GET), where it leaves the client.
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
    /// Data segment of the response (1-based, by sequence), for `kind = "response"`.
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
    pub interobject: RandomDuration,
    pub keep_alive: bool,
    pub think: RandomDuration,
    pub tcp: TcpConfig,
    pub drops: Vec<AppDrop>,
}

fn kind_name(k: AppKind) -> String {
    serde_json::to_string(&k).expect("serialisable")
}

/// Resolve every `[[apps]]` entry of `s` against its network.
pub fn resolve(s: &Scenario, net: &Network) -> Result<Vec<ResolvedApp>, ScenarioError> {
    let single = s.topology.kind == TopologyKind::SingleLink;
    let mut names: Vec<String> = Vec::new();
    let mut out = Vec::with_capacity(s.apps.len());
    for (i, a) in s.apps.iter().enumerate() {
        let path = format!("apps[{i}]");
        let node = |given: &str, single_default: &str, key: &str| -> Result<usize, ScenarioError> {
            let n = match (given.is_empty(), single) {
                (false, _) => given,
                (true, true) => single_default,
                (true, false) => return err(format!("{path}.{key}"), "required (the node name) for this topology"),
            };
            net.nodes.iter().position(|x| x == n).ok_or_else(|| ScenarioError {
                path: format!("{path}.{key}"),
                message: format!("unknown node {n:?}; nodes are: {}", net.nodes.join(", ")),
            })
        };
        // On a single link the response crosses the forward direction (where `loss` applies).
        let client = node(&a.client, "receiver", "client")?;
        let servers = match &a.server.0[..] {
            [] => vec![node("", "sender", "server")?],
            [one] => vec![node(one, "sender", "server")?],
            many => many.iter().enumerate().map(|(k, n)| node(n, "sender", &format!("server[{k}]"))).collect::<Result<Vec<_>, _>>()?,
        };
        let server = servers[0];
        if let Some(k) = servers.iter().position(|&x| x == client) {
            let key = if servers.len() > 1 { format!("{path}.server[{k}]") } else { path.clone() };
            return err(key, format!("client and server must be two different nodes, got {:?} twice", net.nodes[client]));
        }
        let name = if a.name.is_empty() { format!("app{i}") } else { a.name.clone() };
        if names.contains(&name) {
            return err(format!("{path}.name"), format!("application name {name:?} is used twice"));
        }
        names.push(name.clone());
        // What each exchange sends: an FTP file is a response (download) or a request (upload)
        // on a data connection of its own, with the command or the reply as the other message.
        let ftp = a.kind == AppKind::Ftp;
        let kind = kind_name(a.kind);
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
        if a.keep_alive && servers.len() > 1 {
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
        let count = match given.unwrap_or(Count::N(1)) {
            Count::N(n) => Some(n),
            Count::Unlimited(_) => None,
        };
        if count.is_none() && s.duration.is_none() {
            return err(format!("{path}.{key}"), format!("unlimited {key} need a `duration` for the run"));
        }
        let mut tcp = s.tcp_config(&a.tcp, &path)?;
        if a.mode == Mode::Oneway {
            // ns-2's Agent/TCP and TCPSink: open at once, nothing after the last byte.
            for (key, set) in [("handshake", a.tcp.handshake), ("fin", a.tcp.fin)] {
                if set == Some(true) {
                    return err(format!("{path}.tcp.{key}"), "mode = \"oneway\" has neither handshakes nor FINs (ns-2's one-way TCP)");
                }
            }
            tcp.handshake = false;
            tcp.fin = false;
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
            if d.kind != AppDropKind::Response && d.segment.is_some() {
                return err(format!("{dpath}.segment"), "applies to kind = \"response\" only");
            }
            // Each exchange has a connection of its own, whose data starts at segment 1 in each
            // direction: the request is the client's segment 1.
            let (kind, at_client) = match d.kind {
                AppDropKind::Request => (FilterKind::Data { seg: 1 }, true),
                AppDropKind::Syn => (FilterKind::Syn, true),
                AppDropKind::Synack => (FilterKind::SynAck, false),
                AppDropKind::Response => match d.segment {
                    Some(0) => return err(format!("{dpath}.segment"), "expected a segment number from 1"),
                    seg => (FilterKind::Data { seg: seg.unwrap_or(1) }, false),
                },
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
        out.push(ResolvedApp {
            kind: a.kind,
            name,
            client,
            server,
            servers,
            mode: a.mode,
            start: a.start.0,
            request,
            response,
            count,
            embedded: a.embedded.clone(),
            objects: a.objects.clone(),
            interobject: a.interobject.clone().unwrap_or_default(),
            keep_alive: a.keep_alive,
            think: a.think.clone(),
            tcp,
            drops,
        });
    }
    Ok(out)
}
