//! Set-up (`Scenario::from_tree`, `Scenario::expanded`, `World::build`): the network's link ends
//! as node positions, and the expansion kept from validation, which a run uses only while the
//! scenario is the one it was made from.

use std::sync::Arc;
use tcplab_core::scenario::Network;
use tcplab_core::{run, Scenario};

fn dumbbell(pairs: u32, flows: u32) -> String {
    format!(
        "duration = \"2s\"\n[topology]\nkind = \"dumbbell\"\npairs = {pairs}\naccess_rate = \"100Mbps\"\naccess_delay = \"1ms\"\nbottleneck_rate = \"10Mbps\"\nbottleneck_delay = \"20ms\"\n[[flows]]\nfrom = \"s{{i}}\"\nto = \"r{{i}}\"\ncount = {flows}\nbytes = 30000\nstart_spacing = \"10ms\"\n"
    )
}

const CUSTOM: &str = r#"
duration = "2s"
[topology]
kind = "custom"
nodes = ["c", "b", "a", "d"]
links = [
  { name = "ab", a = "a", b = "b", rate = "10Mbps", delay = "5ms" },
  { name = "bc", a = "b", b = "c", rate = "10Mbps", delay = "5ms" },
  { name = "dc", a = "d", b = "c", rate = "10Mbps", delay = "5ms" },
]
[[topology.groups]]
name = "h{i}"
count = 3
attach = "b"
rate = "100Mbps"
delay = { uniform = ["1ms", "5ms"] }
[[flows]]
name = "x{i}"
from = "h{i}"
to = "d"
count = 3
bytes = 20000
"#;

/// Every link's `ends` are the positions of its `a` and `b` in `nodes`.
fn check_ends(net: &Network) {
    assert_eq!(net.ends.len(), net.links.len());
    for (l, &(a, b)) in net.links.iter().zip(&net.ends) {
        assert_eq!((net.nodes[a as usize].as_str(), net.nodes[b as usize].as_str()), (l.a.as_str(), l.b.as_str()), "link {}", l.name);
    }
}

#[test]
fn link_ends_are_the_positions_of_their_nodes() {
    let single = "duration = \"1s\"\n[topology]\nkind = \"single_link\"\nrate = \"1Mbps\"\ndelay = \"1ms\"\n[[flows]]\nbytes = 1000\n";
    for text in [dumbbell(5, 5), CUSTOM.to_string(), single.to_string()] {
        let s = Scenario::from_toml(&text, &[]).unwrap_or_else(|e| panic!("{e}"));
        check_ends(&s.network_for(1).unwrap());
        check_ends(&s.network_for(7).unwrap());
        check_ends(&s.expanded(s.seed).unwrap().net);
    }
}

/// The run's result as JSON (what the golden digests hash).
fn result_json(s: &Scenario, seed: u64) -> String {
    serde_json::to_string(&run(s, seed).unwrap_or_else(|e| panic!("{e}"))).unwrap()
}

#[test]
fn the_kept_expansion_serves_only_the_scenario_it_was_made_from() {
    let s = Scenario::from_toml(&dumbbell(3, 3), &[]).unwrap();
    // Unchanged: the same expansion each time.
    assert!(Arc::ptr_eq(&s.expanded(s.seed).unwrap(), &s.expanded(s.seed).unwrap()));
    // Changed after parsing: the kept expansion no longer applies, the new one follows the keys.
    let mut t = s.clone();
    t.topology.pairs = Some(4);
    t.flows[0].count = 4;
    let e = t.expanded(t.seed).unwrap();
    assert!(!Arc::ptr_eq(&e, &s.expanded(s.seed).unwrap()));
    assert_eq!((e.net.nodes.len(), e.flows.len()), (10, 4));
    let fresh = Scenario::from_toml(&dumbbell(4, 4), &[]).unwrap();
    assert_eq!(result_json(&t, 1), result_json(&fresh, 1));
    // A change that makes it invalid is refused by key, as parsing it would be.
    let mut bad = s.clone();
    bad.flows[0].from = "s9".into();
    let err = bad.expanded(bad.seed).unwrap_err();
    assert_eq!(err.path, "flows[0].from");
    assert!(run(&bad, 1).is_err());
}

#[test]
fn runs_from_the_kept_expansion_equal_runs_expanded_afresh() {
    // Host groups draw their delays with the run's seed: another seed expands the network again.
    for text in [dumbbell(3, 3), CUSTOM.to_string()] {
        let s = Scenario::from_toml(&text, &[]).unwrap_or_else(|e| panic!("{e}"));
        let mut bare = s.clone();
        bare.expansion = Default::default();
        for seed in [s.seed, s.seed + 1, 99] {
            let (kept, afresh) = (s.expanded(seed).unwrap(), bare.expanded(seed).unwrap());
            assert_eq!(*kept.net, *afresh.net, "seed {seed}");
            assert_eq!(kept.flows.iter().map(|f| (&f.name, f.from, f.to, f.start)).collect::<Vec<_>>(), afresh.flows.iter().map(|f| (&f.name, f.from, f.to, f.start)).collect::<Vec<_>>());
            assert_eq!(result_json(&s, seed), result_json(&bare, seed), "seed {seed}");
        }
    }
}

/// Flow names are checked for repeats without keeping copies of them: still refused by key.
#[test]
fn a_flow_name_used_twice_is_refused_by_key() {
    let two = |a: &str, b: &str| format!("{}[[flows]]\nname = \"{b}\"\nfrom = \"s2\"\nto = \"r2\"\nbytes = 1000\n", dumbbell(3, 3).replace("count = 3", &format!("count = 3\nname = \"{a}\"")));
    let e = Scenario::from_toml(&two("f{i}", "f2"), &[]).unwrap_err();
    assert_eq!((e.path.as_str(), e.message.as_str()), ("flows[1].name", "flow name \"f2\" is used twice"));
    assert!(Scenario::from_toml(&two("f{i}", "f4"), &[]).is_ok());
    // 10^4 distinct names pass; the last one repeated is caught.
    let many = format!("{}[[flows]]\nname = \"f9999\"\nfrom = \"s2\"\nto = \"r2\"\nbytes = 1000\n", dumbbell(10000, 10000).replace("count = 10000", "count = 10000\nname = \"f{i}\""));
    assert_eq!(Scenario::from_toml(&many, &[]).unwrap_err().path, "flows[1].name");
}
