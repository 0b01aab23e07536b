//! The size of a world before it is built: nodes, link directions, connections and the memory
//! they take, counted from the scenario's keys alone (nothing sized by input is allocated first),
//! and refused above a limit with the estimate and the keys that drive it. Without this a
//! dumbbell of 2^31 pairs aborted the process on a failed allocation.

use crate::net::link::LinkDir;
use crate::result::TransferRow;
use crate::error::{err, ScenarioError};
use crate::scenario::{Count, ResolvedFlow, Scenario, TopologyKind};
use crate::units::parse_size;

/// Memory of a link direction beyond its struct: its name twice (results, routing), the queue's
/// initial buffer, the RED state and the counters' columns. A generous round figure.
const LINK_DIR_EXTRA: u64 = 1024;
/// Heap memory of one flow at run time beyond its resolved form, its application and its two
/// connection endpoints (counted by their sizes): the boxed congestion-control and recovery
/// strategies, the SACK scoreboard and reassembly queue, timer and event vectors.
const FLOW_EXTRA: u64 = 8 * 1024;
/// A node: its name and its slot in the vectors that index nodes.
const NODE_BYTES: u64 = 64;
/// An entry of a router's row of next hops (`net/routing.rs`): one per core node (the nodes
/// with more than one link), in the row of each core node that forwards.
const ROUTE_ENTRY: u64 = 4;
/// The default limit when the machine's memory cannot be read.
const FALLBACK_LIMIT: u64 = 8 << 30;
/// Indices are 32-bit (`NodeId`, `LinkDirId`, `ConnId`).
const MAX_INDEX: u128 = u32::MAX as u128;

/// What a scenario will build, counted before anything is allocated.
#[derive(Clone, Debug, PartialEq)]
pub struct Footprint {
    pub nodes: u128,
    /// Link directions (two per link).
    pub link_dirs: u128,
    /// Flows after `count` expansion: one connection each at a time.
    pub flows: u128,
    /// Finite transfers (count × repeat), one result row each.
    pub transfers: u128,
    /// Estimated memory at build time, bytes.
    pub bytes: u128,
    /// The keys that drive the size, largest first (`topology.pairs = 2147483648`).
    pub drivers: Vec<String>,
    /// Nodes with routing rows at worst (not hosts on a single link).
    pub core: u128,
}

fn routing_bytes(core: u128) -> u128 {
    core * core * ROUTE_ENTRY as u128
}

/// Core nodes of a custom topology: those with other than exactly one link, and both ends of a
/// link whose ends have no other link (a generous count: parallel links are counted as links).
fn custom_core(links: &[crate::scenario::LinkSpec]) -> u128 {
    let mut degree: std::collections::HashMap<&str, u32> = std::collections::HashMap::new();
    for l in links {
        *degree.entry(l.a.as_str()).or_default() += 1;
        *degree.entry(l.b.as_str()).or_default() += 1;
    }
    let pairs = links.iter().filter(|l| degree[l.a.as_str()] == 1 && degree[l.b.as_str()] == 1).count() as u128;
    degree.values().filter(|&&d| d != 1).count() as u128 + 2 * pairs
}

impl Footprint {
    /// Count the world of `s` from its keys (a missing key counts as zero here; the topology
    /// checks that follow refuse it).
    pub fn of(s: &Scenario) -> Result<Footprint, ScenarioError> {
        let t = &s.topology;
        // `core`: the nodes that are not hosts on a single link, the only ones with routing rows.
        let (mut nodes, mut links, core, mut drivers): (u128, u128, u128, Vec<(u128, String)>) = match t.kind {
            TopologyKind::SingleLink => (2, 1, 2, vec![]),
            TopologyKind::Dumbbell => {
                let p = t.pairs.unwrap_or(0) as u128;
                (2 + 2 * p, 1 + 2 * p, 2, vec![(p, format!("topology.pairs = {p}"))])
            }
            TopologyKind::Custom => {
                let (n, l) = (t.nodes.as_ref().map_or(0, |v| v.len()) as u128, t.links.as_ref().map_or(0, |v| v.len()) as u128);
                (n, l, custom_core(t.links.as_deref().unwrap_or(&[])).min(n), vec![(n, format!("topology.nodes ({n} names)")), (l, format!("topology.links ({l} links)"))])
            }
        };
        for (i, g) in t.groups.iter().flatten().enumerate() {
            nodes += g.count as u128;
            links += g.count as u128;
            drivers.push((g.count as u128, format!("topology.groups[{i}].count = {}", g.count)));
        }
        let (mut flows, mut transfers): (u128, u128) = (0, 0);
        // An application instance costs about what a flow does (its state, its endpoints).
        for (i, a) in s.apps.iter().enumerate() {
            let a = &a.fields();
            let n = a.instances.unwrap_or(1) as u128;
            flows += n;
            drivers.push((n, format!("apps[{i}].instances = {n}")));
        }
        for (i, f) in s.flows.iter().enumerate() {
            flows += f.count as u128;
            drivers.push((f.count as u128, format!("flows[{i}].count = {}", f.count)));
            // Each finite transfer leaves a row in the results; unlimited repeats are bounded by
            // the run's duration instead, which no estimate made before the run can foresee.
            if let Count::N(n) = f.repeat {
                transfers += f.count as u128 * n as u128;
                drivers.push((n as u128, format!("flows[{i}].repeat = {n}")));
            }
        }
        // Applications: the endpoints a page (an exchange) keeps open at once — all of a page's
        // objects at worst, each on one connection (two with `mode = "oneway"`) — and a result
        // row per finite object. Only constant counts drive the estimate (a random count's draws
        // have no bound to count with).
        let (mut app_endpoints, mut object_rows): (u128, u128) = (0, 0);
        for (i, a) in s.apps.iter().enumerate() {
            use crate::app::spec::{AppKind, Mode};
            let a = &a.fields();
            let web = matches!(a.kind, AppKind::Http10 | AppKind::Http11);
            let per_page: u128 = match &a.objects {
                Some(o) => {
                    let n = o.as_constant().unwrap_or(1).max(1) as u128;
                    drivers.push((n, format!("apps[{i}].objects = {n}")));
                    n
                }
                None if web => {
                    let n = a.embedded.as_constant().unwrap_or(0) as u128;
                    drivers.push((n, format!("apps[{i}].embedded = {n}")));
                    1 + n
                }
                None => 1,
            };
            let ends = if a.mode == Mode::Oneway { 4 } else { 2 };
            app_endpoints += ends * if a.kind == AppKind::Http11 { 1 } else { per_page };
            let rows = match if web { a.pages } else { a.count } {
                None => 1,
                Some(Count::N(n)) => n as u128,
                Some(Count::Unlimited(_)) => 0,
            };
            object_rows += rows * per_page;
        }
        let link_dirs = 2 * links;
        let per_dir = std::mem::size_of::<LinkDir>() as u64 + LINK_DIR_EXTRA;
        // The resolved flow (one copy, shared by the world and the application), its
        // application, and the two endpoints of its live connection.
        let per_flow = std::mem::size_of::<ResolvedFlow>() as u64
            + std::mem::size_of::<crate::app::bulk::Bulk>() as u64
            + 2 * std::mem::size_of::<crate::conns::Endpoint>() as u64
            + FLOW_EXTRA;
        // Routing: at most a row of `core` entries per core node (host groups add hosts on one
        // link each, never core nodes); the per-node part is in NODE_BYTES.
        let routes = routing_bytes(core);
        let per_transfer = std::mem::size_of::<TransferRow>() as u128;
        let per_endpoint = (std::mem::size_of::<crate::conns::Endpoint>() as u64 + FLOW_EXTRA / 2) as u128;
        let per_object = std::mem::size_of::<crate::result::ObjectRow>() as u128;
        let bytes = routes + nodes * NODE_BYTES as u128 + link_dirs * per_dir as u128 + flows * per_flow as u128 + transfers * per_transfer + app_endpoints * per_endpoint + object_rows * per_object;
        drivers.sort_by(|a, b| b.0.cmp(&a.0));
        let drivers = drivers.into_iter().filter(|d| d.0 > 1).map(|d| d.1).collect();
        let fp = Footprint { nodes, link_dirs, flows, transfers, bytes, drivers, core };
        for (what, n, key) in [("nodes", fp.nodes, "topology"), ("link directions", fp.link_dirs, "topology"), ("flows", fp.flows, "flows")] {
            if n > MAX_INDEX {
                return err(fp.driver_path(key), format!("{n} {what} is more than a world can index ({MAX_INDEX}); {}", fp.summary()));
            }
        }
        Ok(fp)
    }

    /// Refuse a world above `limit` bytes.
    pub fn check(&self, limit: u64) -> Result<(), ScenarioError> {
        self.check_within(&MemoryLimit { bytes: limit, source: "TCPLAB_MAX_MEMORY".into() })
    }

    /// Refuse a world above `limit`, naming where the limit comes from.
    pub fn check_within(&self, limit: &MemoryLimit) -> Result<(), ScenarioError> {
        if self.bytes > limit.bytes as u128 {
            return err(
                self.driver_path(""),
                format!(
                    "the world would take about {} of memory, above the limit of {} ({}); {}",
                    show_bytes(self.bytes),
                    show_bytes(limit.bytes as u128),
                    limit.source,
                    self.summary()
                ),
            );
        }
        Ok(())
    }

    /// The key path of the largest driver (the part before ` = ` / ` (`), else `fallback`.
    fn driver_path(&self, fallback: &str) -> String {
        self.drivers.first().map_or(fallback.to_string(), |d| d.split([' ', '(']).next().unwrap_or(fallback).to_string())
    }

    fn summary(&self) -> String {
        let driven = if self.drivers.is_empty() { String::new() } else { format!("; driven by {}", self.drivers.join(", ")) };
        format!(
            "estimate: {} nodes, {} link directions, {} flows, {} transfers, routing {}{driven}",
            self.nodes,
            self.link_dirs,
            self.flows,
            self.transfers,
            show_bytes(routing_bytes(self.core))
        )
    }
}

fn show_bytes(b: u128) -> String {
    const UNITS: [&str; 7] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let mut v = b as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{b} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

/// Count the world of `s` and refuse it above the memory limit: what every entry point calls
/// before anything sized by the scenario is allocated.
pub fn check(s: &Scenario) -> Result<Footprint, ScenarioError> {
    Ok(check_limit(s)?.0)
}

/// `check`, also giving the limit that applied: the run bounds what grows while it runs (queued
/// packets) by what the limit leaves above the built world (`World::bound_growth`).
pub fn check_limit(s: &Scenario) -> Result<(Footprint, MemoryLimit), ScenarioError> {
    let fp = Footprint::of(s)?;
    let limit = memory_limit_with_source()?;
    fp.check_within(&limit)?;
    Ok((fp, limit))
}

/// A memory limit in bytes and where it comes from (for the message that refuses a world).
#[derive(Clone, Debug, PartialEq)]
pub struct MemoryLimit {
    pub bytes: u64,
    pub source: String,
}

/// Of a limit that applies to the whole process (an address space or a container), the share a
/// world may take of the room left: the rest is for the interpreter, the result's records and
/// the allocator's slack.
const HEADROOM_SHARE: (u64, u64) = (3, 4);

/// The memory a world may take: `TCPLAB_MAX_MEMORY` (a size: `"4GB"`, bytes) if set; else the
/// smallest of half of the machine's memory (`MemTotal` of /proc/meminfo), three quarters of the
/// address space left under `RLIMIT_AS` (`ulimit -v`; /proc/self/limits less VmSize), and three
/// quarters of the room left in the cgroup (v2 `memory.max` less `memory.current`); else 8 GiB.
pub fn memory_limit() -> Result<u64, ScenarioError> {
    Ok(memory_limit_with_source()?.bytes)
}

pub fn memory_limit_with_source() -> Result<MemoryLimit, ScenarioError> {
    if let Ok(v) = std::env::var("TCPLAB_MAX_MEMORY") {
        let bytes = parse_size(&v).map_err(|m| ScenarioError { path: "TCPLAB_MAX_MEMORY".into(), message: m })?;
        return Ok(MemoryLimit { bytes, source: "TCPLAB_MAX_MEMORY".into() });
    }
    let share = |room: u64| room / HEADROOM_SHARE.1 * HEADROOM_SHARE.0;
    let mut best = match machine_memory() {
        Some(m) => MemoryLimit { bytes: m / 2, source: "half of the machine's memory; TCPLAB_MAX_MEMORY sets another".into() },
        None => MemoryLimit { bytes: FALLBACK_LIMIT, source: "the default when the machine's memory is unknown; TCPLAB_MAX_MEMORY sets another".into() },
    };
    let procs = |f: &str| std::fs::read_to_string(f).ok();
    let address_room = procs("/proc/self/limits").and_then(|l| rlimit_as(&l)).map(|lim| lim.saturating_sub(procs("/proc/self/status").and_then(|s| vm_size(&s)).unwrap_or(0)));
    if let Some(room) = address_room {
        if share(room) < best.bytes {
            best = MemoryLimit { bytes: share(room), source: "3/4 of the address space left under RLIMIT_AS (ulimit -v)".into() };
        }
    }
    if let Some(room) = cgroup_room() {
        if share(room) < best.bytes {
            best = MemoryLimit { bytes: share(room), source: "3/4 of the room left in the cgroup's memory.max".into() };
        }
    }
    Ok(best)
}

fn machine_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// The soft `Max address space` of /proc/self/limits, bytes; None when unlimited or unreadable.
fn rlimit_as(limits: &str) -> Option<u64> {
    let line = limits.lines().find(|l| l.starts_with("Max address space"))?;
    line["Max address space".len()..].split_whitespace().next()?.parse().ok()
}

/// `VmSize` of /proc/self/status, bytes.
fn vm_size(status: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with("VmSize:"))?;
    line.split_whitespace().nth(1)?.parse::<u64>().ok()?.checked_mul(1024)
}

/// Room left under the cgroup v2 `memory.max` of this process (None: no cgroup v2, or `max`).
fn cgroup_room() -> Option<u64> {
    let rel = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let path = rel.lines().find_map(|l| l.strip_prefix("0::"))?.trim().to_string();
    let dir = format!("/sys/fs/cgroup{path}");
    let max: u64 = std::fs::read_to_string(format!("{dir}/memory.max")).ok()?.trim().parse().ok()?;
    let current: u64 = std::fs::read_to_string(format!("{dir}/memory.current")).ok().and_then(|c| c.trim().parse().ok()).unwrap_or(0);
    Some(max.saturating_sub(current))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    fn dumbbell(pairs: u64) -> String {
        format!(
            "[topology]\nkind = \"dumbbell\"\npairs = {pairs}\naccess_rate = \"100Mbps\"\naccess_delay = \"1ms\"\nbottleneck_rate = \"10Mbps\"\nbottleneck_delay = \"10ms\"\n[[flows]]\nfrom = \"s1\"\nto = \"r1\"\nbytes = 1000\n"
        )
    }

    #[test]
    fn address_space_and_status_lines_are_read() {
        let limits = "Limit                     Soft Limit           Hard Limit           Units     \n\
                      Max stack size            8388608              unlimited            bytes     \n\
                      Max address space         4294967296           unlimited            bytes     \n";
        assert_eq!(rlimit_as(limits), Some(4 << 30));
        assert_eq!(rlimit_as("Max address space         unlimited            unlimited            bytes\n"), None);
        assert_eq!(vm_size("Name:\tpython3\nVmPeak:\t  20000 kB\nVmSize:\t   10240 kB\n"), Some(10240 * 1024));
    }

    #[test]
    fn two_billion_pairs_refused_quickly_with_the_key() {
        let t0 = Instant::now();
        let e = Scenario::from_toml(&dumbbell(2147483648), &[]).unwrap_err();
        assert!(t0.elapsed().as_secs_f64() < 1.0);
        assert_eq!(e.path, "topology.pairs");
        assert!(e.message.contains("4294967298 nodes") && e.message.contains("topology.pairs = 2147483648"), "{e}");
    }

    #[test]
    fn limit_scales_linearly_with_the_pairs() {
        let s = Scenario::from_toml(&dumbbell(10), &[]).unwrap();
        let f = Footprint::of(&s).unwrap();
        assert_eq!((f.nodes, f.link_dirs, f.flows), (22, 42, 1));
        assert!(f.check(1 << 30).is_ok());
        let e = f.check(1000).unwrap_err();
        assert_eq!(e.path, "topology.pairs");
        assert!(e.message.contains("above the limit of 1000 B"), "{e}");
        // 100 000 pairs: 200 002 nodes, but routing rows only for the two routers, so the world
        // is linear in the pairs (about 1 KiB a link direction and 64 B a node).
        let big = Footprint::of(&Scenario { topology: crate::scenario::Topology { pairs: Some(100_000), ..s.topology.clone() }, ..s.clone() }).unwrap();
        assert_eq!(big.core, 2);
        assert!(big.bytes > 400_000 * 1024 && big.bytes < 2 << 30, "{}", big.bytes);
    }

    #[test]
    fn many_transfers_name_their_repeat() {
        let e = Scenario::from_toml(&dumbbell(1), &["flows.0.repeat=4000000000".into(), "flows.0.count=1000".into()]).unwrap_err();
        assert_eq!(e.path, "flows[0].repeat");
        assert!(e.message.contains("4000000000000 transfers"), "{e}");
    }

    #[test]
    fn many_flows_name_their_count() {
        let s = Scenario::from_toml(&dumbbell(1), &["flows.0.count=4000000000".into(), "flows.0.from=s1".into()]);
        // Four billion flows between the same two hosts: refused by size, not by names.
        let e = s.unwrap_err();
        assert_eq!(e.path, "flows[0].count");
        assert!(e.message.contains("4000000000 flows"), "{e}");
    }
}
