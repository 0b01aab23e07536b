//! Topology expansion: a named topology (`single_link`, `dumbbell`) or the generic form
//! (`custom`) into nodes and links, then host groups added with their random delays.

use super::plan::{name_index, NameHash, Network};
use super::link::{LinkSpec, QueueSpec};
use super::schema::{HostGroup, OneOrMany, Scenario, TopologyKind};
use crate::error::{err, ScenarioError};
use crate::units::{Duration, Rate};

impl Scenario {
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
                links: vec![LinkSpec::new("link", "sender", "receiver", req(t.rate, "rate")?, reqd(t.delay, "delay")?)
                    .queues(t.queue.unwrap_or_default(), None)
                    .lossy(t.loss.map_or(0.0, |p| p.0), t.reverse_loss.map_or(0.0, |p| p.0))],
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
                links.push(
                    LinkSpec::new("bottleneck", "left", "right", req(t.bottleneck_rate, "bottleneck_rate")?, reqd(t.bottleneck_delay, "bottleneck_delay")?)
                        .queues(t.queue.unwrap_or_default(), None)
                        .lossy(t.loss.map_or(0.0, |p| p.0), t.reverse_loss.map_or(0.0, |p| p.0)),
                );
                // Pair i: s{i} -> left and right -> r{i}, links named access_s{i}, access_r{i}.
                let access = |name: String, a: String, b: String, i: usize| LinkSpec::new(name, a, b, access_rate, delay(i)).queues(access_queue, None);
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
}

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
        links.push(LinkSpec::new(name, m.clone(), router, g.rate, Duration(delay)).queues(g.queue, g.reverse_queue).lossy(g.loss, g.reverse_loss));
        ends.push(((base + k) as u32, at as u32));
    }
    drop((known, link_names, seen));
    net.links.extend(links);
    net.ends.extend(ends);
    net.nodes.extend(members);
    Ok(())
}

