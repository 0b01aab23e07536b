//! The one validation boundary of a scenario (`from_tree`: overrides, the typed schema, the size
//! of the world, the cross-key rules) and the expansion of a scenario into what a run needs,
//! kept with the scenario so that a run does not expand it again.

use super::plan::Expanded;
use super::schema::{Expansion, Scenario};
use crate::error::ScenarioError;
use crate::input::apply_override;
use std::sync::Arc;


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
        super::tcp::check_written(&s.tcp, "tcp")?;
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
        let apps = super::apps::resolve_apps(self, &net, seed)?;
        self.check_fq_hosts(&net, &flows, &apps)?;
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
        let apps = super::apps::resolve_apps(self, &net, seed)?;
        Ok(Arc::new(Expanded { seed, net, flows: e.flows.clone(), apps }))
    }

    /// Expand the topology into nodes and links, with the random delays of host groups drawn

    /// The scenario as run, with every default written out.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).expect("a scenario always serialises")
    }
}

impl Scenario {
    /// The resolved plan of a run with `seed`, as JSON: for the front ends that do not run the
    /// simulator (the testbed, an ns-2 export) to translate instead of the raw scenario, so that
    /// units, templates, counts, host groups, profiles and presets are read once, here.
    /// Times are integer ns and rates bit/s; each connection carries the TCP configuration of
    /// each of its ends with every knob written out.
    pub fn plan(&self, seed: u64) -> Result<serde_json::Value, ScenarioError> {
        use serde_json::{json, Value};
        let e = self.expanded(seed)?;
        let net = &e.net;
        let node = |i: usize| Value::from(net.nodes[i].clone());
        let js = |v: &dyn erased::Ser| v.value();
        let links: Vec<Value> = net
            .links
            .iter()
            .map(|l| {
                json!({
                    "name": l.name, "a": l.a, "b": l.b,
                    "rate_bps": l.rate.0, "delay_ns": l.delay.0,
                    "queue": js(&l.queue), "reverse_queue": js(&l.reverse_queue.unwrap_or(l.queue)),
                    "loss": l.loss, "reverse_loss": l.reverse_loss,
                })
            })
            .collect();
        let filter = |k: &crate::net::FilterKind| match *k {
            crate::net::FilterKind::Data { seg } => json!({ "segment": seg }),
            crate::net::FilterKind::Ack { k } => json!({ "number": k }),
            _ => json!({}),
        };
        let flows: Vec<Value> = e
            .flows
            .iter()
            .map(|f| {
                let drops: Vec<Value> = f
                    .drops
                    .iter()
                    .map(|(k, tx, transfer, kind)| {
                        let mut d = filter(k);
                        d["kind"] = js(kind);
                        d["transmissions"] = json!(tx);
                        d["transfer"] = json!(transfer);
                        d
                    })
                    .collect();
                let delays: Vec<Value> = f
                    .delays
                    .iter()
                    .map(|(k, tx, transfer, kind, by)| {
                        let mut d = filter(k);
                        d["kind"] = js(kind);
                        d["transmissions"] = json!(tx);
                        d["transfer"] = json!(transfer);
                        d["by_ns"] = json!(by);
                        d
                    })
                    .collect();
                let tcp = f.tcp.to_json_full();
                json!({
                    "name": f.name, "from": node(f.from), "to": node(f.to),
                    "start_ns": f.start, "bytes": f.bytes, "repeat": f.repeat, "think_ns": f.think,
                    "tcp": { "sender": tcp, "receiver": tcp },
                    "drops": drops, "delays": delays,
                })
            })
            .collect();
        let apps: Vec<Value> = e
            .apps
            .iter()
            .map(|a| {
                let drops: Vec<Value> = a
                    .drops
                    .iter()
                    .map(|d| {
                        let mut x = filter(&d.kind);
                        x["kind"] = json!(match d.kind {
                            crate::net::FilterKind::Syn => "syn",
                            crate::net::FilterKind::SynAck => "synack",
                            _ if d.at_client => "request",
                            _ => "response",
                        });
                        x["transmissions"] = json!(d.transmissions);
                        x["object"] = json!(d.object);
                        x["at"] = json!(if d.at_client { "client" } else { "server" });
                        x
                    })
                    .collect();
                let mut x = json!({
                    "name": a.name, "kind": js(&a.kind),
                    "client": node(a.client), "server": node(a.server),
                    "servers": a.servers.iter().map(|&s| node(s)).collect::<Vec<_>>(),
                    "start_ns": a.start, "count": a.count,
                });
                match &a.traffic {
                    Some(t) => {
                        x["traffic"] = json!({
                            "rate_bps": t.rate, "packet": js(&t.packet), "stop_ns": t.stop,
                            "target_bps": t.target_bps,
                            "pattern": match &t.pattern {
                                crate::app::traffic::Pattern::OnOff { on, off } => json!({ "on": js(on), "off": js(off) }),
                                crate::app::traffic::Pattern::Cbr { interval, jitter } => json!({ "interval_ns": interval, "jitter": jitter }),
                            },
                        });
                    }
                    None => {
                        for (k, v) in [
                            ("mode", js(&a.mode)),
                            ("request", js(&a.request)),
                            ("response", js(&a.response)),
                            ("embedded", js(&a.embedded)),
                            ("objects", js(&a.objects)),
                            ("objects_rounding", js(&a.objects_rounding)),
                            ("interobject", js(&a.interobject)),
                            ("keep_alive", json!(a.keep_alive)),
                            ("transfer", js(&a.transfer)),
                            ("think", js(&a.think)),
                            ("page_spacing", js(&a.page_spacing)),
                        ] {
                            x[k] = v;
                        }
                        x["tcp"] = json!({ "client": a.tcp.to_json_full(), "server": a.server_tcp.to_json_full() });
                        x["drops"] = json!(drops);
                    }
                }
                x
            })
            .collect();
        Ok(json!({
            "name": self.name, "seed": seed,
            "duration_ns": self.duration.map(|d| d.0), "warmup_ns": self.warmup.map(|d| d.0),
            "loss_pattern": js(&self.topology.loss_pattern),
            "nodes": net.nodes, "links": links, "flows": flows, "apps": apps,
            "captures": js(&self.capture), "series": js(&self.series),
        }))
    }
}

/// `serde_json::to_value` behind a trait object, so that one closure serialises values of
/// several types (a closure cannot be generic).
mod erased {
    pub trait Ser {
        fn value(&self) -> serde_json::Value;
    }
    impl<T: serde::Serialize> Ser for T {
        fn value(&self) -> serde_json::Value {
            serde_json::to_value(self).expect("a plan's values serialise")
        }
    }
}

impl Scenario {
    /// fq paces the packets of a host's own sockets (sch_fq.c: "Meant to be mostly used for
    /// locally generated traffic"): a direction whose queue is fq must leave a node that runs a
    /// flow's or an application's endpoint. The error names the queue's key path.
    fn check_fq_hosts(&self, net: &super::Network, flows: &[super::ResolvedFlow], apps: &[crate::app::resolved::ResolvedApp]) -> Result<(), ScenarioError> {
        let fq_somewhere = net.links.iter().any(|l| l.queue.fq.is_some() || l.reverse_queue.is_some_and(|q| q.fq.is_some()));
        if !fq_somewhere {
            return Ok(());
        }
        let mut host = vec![false; net.nodes.len()];
        for f in flows {
            host[f.from] = true;
            host[f.to] = true;
        }
        for a in apps {
            host[a.client] = true;
            for &s in &a.servers {
                host[s] = true;
            }
        }
        for (i, l) in net.links.iter().enumerate() {
            let (a, b) = (net.ends[i].0 as usize, net.ends[i].1 as usize);
            let rq = l.reverse_queue.unwrap_or(l.queue);
            for (reverse, q, from, to) in [(false, &l.queue, a, b), (true, &rq, b, a)] {
                if q.fq.is_none() || host[from] {
                    continue;
                }
                let (path, hint) = self.queue_path(i, reverse, l.reverse_queue.is_some());
                return Err(ScenarioError {
                    path,
                    message: format!(
                        "kind = \"fq\" is a host's queue discipline (it paces the packets of the host's own sockets), but link {:?} direction {}->{} leaves {:?}, which runs no flow or application{hint}",
                        l.name, net.nodes[from], net.nodes[to], net.nodes[from]
                    ),
                });
            }
        }
        Ok(())
    }

    /// The key path of link `i`'s queue in direction a → b (`reverse`: b → a), and a hint on how
    /// to give that direction a queue of its own.
    fn queue_path(&self, i: usize, reverse: bool, has_reverse: bool) -> (String, &'static str) {
        use super::TopologyKind;
        let t = &self.topology;
        let both = "; `queue` applies to both directions: write the other one's as `reverse_queue`";
        let base = match t.kind {
            TopologyKind::SingleLink => 1,
            TopologyKind::Dumbbell => 1 + 2 * t.pairs.unwrap_or(0) as usize,
            TopologyKind::Custom => t.links.as_ref().map_or(0, |l| l.len()),
        };
        let side = |prefix: String| {
            if reverse && has_reverse {
                (format!("{prefix}.reverse_queue"), "")
            } else {
                (format!("{prefix}.queue"), if has_reverse { "" } else { both })
            }
        };
        if i < base {
            return match t.kind {
                TopologyKind::Custom => side(format!("topology.links[{i}]")),
                TopologyKind::Dumbbell if i > 0 => ("topology.access_queue".into(), "; a dumbbell's access_queue applies to both directions of every access link: use kind = \"custom\" or host groups to give each direction its own queue"),
                _ => ("topology.queue".into(), ""),
            };
        }
        let mut k = base;
        for (gi, g) in t.groups.iter().flatten().enumerate() {
            k += g.count as usize;
            if i < k {
                return side(format!("topology.groups[{gi}]"));
            }
        }
        ("topology".into(), "")
    }
}
