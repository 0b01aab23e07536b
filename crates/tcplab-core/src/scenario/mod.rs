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

mod apps;
mod count;
mod expand;
mod flows;
mod link;
mod plan;
mod schema;
mod tcp;
mod topology;

pub use crate::error::{err, ScenarioError};
pub use crate::input::{apply_override, set_path};
pub use apps::resolve_apps;
pub use count::Count;
pub use link::{LinkSpec, QueueKind, QueueSpec, QueueTable};
pub use plan::{name_index, DropKind, Expanded, NameHash, NameHasher, Network, ResolvedFlow};
pub use schema::{DropSpec, Expansion, FlowSpec, HostGroup, LossPattern, OneOrMany, Scenario, Topology, TopologyKind, MAX_TOTAL_BYTES};
pub use tcp::{resolve_tcp, TcpResolveError};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::RedSpec;
    use crate::tcp::TcpConfig;

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
