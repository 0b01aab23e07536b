//! Application resolution: each `[[apps]]` entry checked against its kind and bound to the
//! network, one `ResolvedApp` per instance, with every error naming its key path
//! (`apps[0].request: ...`).

use super::count::Count;
use super::plan::{name_index, Network};
use super::schema::{Scenario, TopologyKind};
use crate::app::resolved::{AppDrop, ResolvedApp};
use crate::app::spec::*;
use crate::app::traffic::TrafficSpec;
use crate::error::{err, ScenarioError};
use crate::net::FilterKind;
use crate::rv::{RandomCount, RandomDuration, RandomSize};
use crate::tcp::{TcpConfig, TcpSpec};
use crate::units::Time;
use std::collections::HashSet;


/// Resolve every `[[apps]]` entry of `s` against its network, one `ResolvedApp` per instance;
/// random start times are drawn with `seed` (member by member, from the streams
/// `app:<name>:start` and `app:<name>:start_spacing` of the entry's `name` as written).
pub fn resolve_apps(s: &Scenario, net: &Network, seed: u64) -> Result<Vec<ResolvedApp>, ScenarioError> {
    if s.apps.is_empty() {
        return Ok(Vec::new()); // no index of the nodes to build
    }
    let single = s.topology.kind == TopologyKind::SingleLink;
    let index = name_index(&net.nodes);
    let mut names: HashSet<String> = HashSet::new();
    let mut out = Vec::with_capacity(s.apps.len());
    for (i, spec) in s.apps.iter().enumerate() {
        let a = &spec.fields();
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
        let proto = if udp { entry_udp(a, &path, s, instances)? } else { entry_tcp(a, &path, &kind, s)? };
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
fn server_config(s: &Scenario, a: &AppFields, st: &TcpSpec, path: &str) -> Result<TcpConfig, ScenarioError> {
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
fn entry_udp(a: &AppFields, path: &str, s: &Scenario, instances: u32) -> Result<ResolvedApp, ScenarioError> {
    let traffic = TrafficSpec::resolve(a, path, instances)?;
    let count = match a.count {
        None | Some(Count::Unlimited(_)) => None,
        Some(Count::N(n)) => Some(n),
    };
    if count.is_none() && a.stop.is_none() && s.duration.is_none() && s.flows.is_empty() && s.apps.iter().all(|x| x.kind().is_udp()) {
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
fn entry_tcp(a: &AppFields, path: &str, kind: &str, s: &Scenario) -> Result<ResolvedApp, ScenarioError> {
    let path = path.to_string();
    // What each exchange sends: an FTP file is a response (download) or a request (upload)
    // on a data connection of its own, with the command or the reply as the other message.
    let ftp = a.kind == AppKind::Ftp;
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
    let (key, given) = if web { ("pages", a.pages) } else { ("count", a.count) };
    if a.keep_alive && a.server.0.len() > 1 {
        return err(format!("{path}.server"), "one server only with keep_alive (a kept-alive connection stays with its server)");
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
