//! The shape of `src/tcp/` that the compiler does not check: cwnd and ssthresh are written only
//! by the congestion controller (`tcp/cc/`) and the ns-2 agents (`tcp/legacy/`); the modules of
//! `tcp/` import each other without a circle (the seams `cc/`, `loss/` and `txq.rs` import
//! nothing of the sender); loss detection lives in `tcp/loss/`; every send asks the one gate.

use std::path::{Path, PathBuf};

fn tcp_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src/tcp")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).expect("src/tcp is readable") {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// An assignment to cwnd or ssthresh on this line (`x.cwnd = …`, `x.cwnd += …`), or a call of
/// the legacy agents' setters.
fn writes_window(line: &str) -> bool {
    let code = line.split("//").next().unwrap_or("");
    if code.contains("legacy_set_cwnd(") || code.contains("legacy_set_ssthresh(") {
        return !code.trim_start().starts_with("pub fn");
    }
    for field in [".cwnd", ".ssthresh"] {
        let mut rest = code;
        while let Some(i) = rest.find(field) {
            let after = &rest[i + field.len()..];
            let next = after.chars().next();
            if next.is_none_or(|c| !(c.is_alphanumeric() || c == '_')) {
                let t = after.trim_start();
                let op = ["+=", "-=", "*=", "/=", "="].iter().any(|o| t.starts_with(o)) && !t.starts_with("==");
                if op {
                    return true;
                }
            }
            rest = after;
        }
    }
    false
}

#[test]
fn cwnd_and_ssthresh_are_written_only_by_the_controller_and_the_legacy_agents() {
    let root = tcp_dir();
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    assert!(files.len() > 10, "found the tcp sources");
    let mut bad = Vec::new();
    let mut commits = 0;
    for f in &files {
        let rel = f.strip_prefix(&root).unwrap().to_string_lossy().replace('\\', "/");
        if rel.starts_with("cc/") || rel.starts_with("legacy/") {
            continue;
        }
        let text = std::fs::read_to_string(f).unwrap();
        for (n, line) in text.lines().enumerate() {
            if !writes_window(line) {
                continue;
            }
            // The connection commits the window a controller hook returned, in one function.
            if rel == "state.rs" && line.ends_with("// the controller's window, committed") {
                commits += 1;
                continue;
            }
            bad.push(format!("src/tcp/{rel}:{}: {}", n + 1, line.trim()));
        }
    }
    assert_eq!(commits, 2, "state.rs commit_window() assigns cwnd and ssthresh once each");
    assert!(bad.is_empty(), "cwnd/ssthresh written outside tcp/cc/ and tcp/legacy/:\n{}", bad.join("\n"));
}

#[test]
fn the_window_check_sees_assignments_and_not_reads() {
    assert!(writes_window("        s.cwnd = 3;"));
    assert!(writes_window("c.ssthresh += 1;"));
    assert!(writes_window("s.legacy_set_cwnd(w);"));
    assert!(!writes_window("if s.cwnd == s.ssthresh {"));
    assert!(!writes_window("let w = s.cwnd_max;"));
    assert!(!writes_window("let x = s.cwnd; // s.cwnd = 1"));
}

#[test]
fn congestion_control_imports_nothing_of_the_sender() {
    let mut files = Vec::new();
    rust_files(&tcp_dir().join("cc"), &mut files);
    assert!(!files.is_empty());
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        for line in text.lines().filter(|l| l.trim_start().starts_with("use ")) {
            for m in ["state", "sender", "recovery", "loss", "legacy", "conn", "receiver", "sack::"] {
                assert!(!line.contains(&format!("tcp::{m}")) && !line.contains(&format!("super::super::{m}")), "{}: {line}", f.display());
            }
        }
    }
}

#[test]
fn every_send_loop_asks_the_one_send_gate() {
    let root = tcp_dir();
    // send_available; RFC 6675 (C); ns-2 Sack1, FACK-RH, ns-2 Fack, SackRH send_much().
    for f in ["state.rs", "recovery/rfc6675.rs", "legacy/sack1.rs", "legacy/fack_rh.rs", "legacy/fack_ns2.rs", "legacy/sackrh.rs"] {
        let text = std::fs::read_to_string(root.join(f)).unwrap();
        assert!(text.contains(".send_gate("), "src/tcp/{f} sends without the gate");
    }
    // The burst limit and the window comparison of the send loops live in the gate alone.
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    for f in files.iter().filter(|f| !f.ends_with("gate.rs")) {
        let text = std::fs::read_to_string(f).unwrap();
        assert!(!text.contains("cfg.max_burst") && !text.contains("burst_done("), "{}: max_burst outside the gate", f.display());
    }
}

/// The module of `src/tcp/` a file belongs to (a file, or a directory as one module).
fn module_of(rel: &str) -> String {
    let first = rel.split('/').next().unwrap();
    first.trim_end_matches(".rs").to_string()
}

/// The modules of `src/tcp/` a file names (`use super::x`, `super::x::…` in code, `crate::tcp::x`,
/// `super::super::x` from a subdirectory), comments left out.
fn imports(rel: &str, text: &str) -> Vec<String> {
    let nested = rel.contains('/');
    let in_mod_rs = rel.ends_with("/mod.rs");
    let mut out = Vec::new();
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or("");
        let mut prefixes = vec!["crate::tcp::"];
        if !nested || in_mod_rs {
            prefixes.push("super::");
        } else {
            prefixes.push("super::super::");
        }
        for p in prefixes {
            let mut rest = code;
            while let Some(i) = rest.find(p) {
                let after = &rest[i + p.len()..];
                // `super::super::x` seen by the `super::` prefix of a nested mod.rs is its parent's.
                let name: String = after.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                if !name.is_empty() && name != "super" && !(nested && !in_mod_rs && p == "super::super::" && code[..code.len() - rest.len() + i].ends_with("super::")) {
                    out.push(name);
                }
                rest = after;
            }
        }
    }
    out
}

#[test]
fn the_modules_of_tcp_import_each_other_without_a_circle() {
    use std::collections::{BTreeMap, BTreeSet};
    let root = tcp_dir();
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in &files {
        let rel = f.strip_prefix(&root).unwrap().to_string_lossy().replace('\\', "/");
        if rel == "mod.rs" {
            continue; // the parent declares and re-exports every module
        }
        let m = module_of(&rel);
        let text = std::fs::read_to_string(f).unwrap();
        let deps = graph.entry(m.clone()).or_default();
        for d in imports(&rel, &text) {
            if d != m {
                deps.insert(d);
            }
        }
    }
    let known: BTreeSet<String> = graph.keys().cloned().collect();
    for deps in graph.values_mut() {
        deps.retain(|d| known.contains(d));
    }
    // The seams stay leaves of the sender: they see plain values, not `SenderCore`.
    for seam in ["cc", "loss", "txq", "gate"] {
        for m in ["state", "sender", "recovery", "legacy", "conn", "info"] {
            assert!(!graph[seam].contains(m), "tcp/{seam} imports tcp/{m}");
        }
    }
    // Depth-first search for a circle.
    fn visit(m: &str, g: &BTreeMap<String, BTreeSet<String>>, state: &mut BTreeMap<String, u8>, path: &mut Vec<String>) {
        match state.get(m) {
            Some(2) => return,
            Some(1) => panic!("import circle in src/tcp: {} -> {m}", path.join(" -> ")),
            _ => {}
        }
        state.insert(m.to_string(), 1);
        path.push(m.to_string());
        for d in &g[m] {
            visit(d, g, state, path);
        }
        path.pop();
        state.insert(m.to_string(), 2);
    }
    let mut state = BTreeMap::new();
    for m in graph.keys() {
        visit(m, &graph, &mut state, &mut Vec::new());
    }
    assert!(graph["state"].contains("loss") && graph["recovery"].contains("state"), "the graph was read: {graph:?}");
}

#[test]
fn the_import_reader_sees_each_form() {
    assert_eq!(imports("state.rs", "use super::cc::{self, Window};\nlet x = super::config::RtoModel::Ns2; // super::sender"), ["cc", "config"]);
    assert_eq!(imports("recovery/reno.rs", "use super::{grow_on_exit, Recovery};\nuse crate::tcp::state::OutSeg;"), ["state"]);
    assert_eq!(imports("loss/mod.rs", "use super::sack::Scoreboard;"), ["sack"]);
    assert_eq!(imports("cc/reno.rs", "use super::super::config::TcpConfig;"), ["config"]);
}

#[test]
fn loss_detection_lives_in_tcp_loss() {
    let root = tcp_dir();
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    let mut bad = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(&root).unwrap().to_string_lossy().replace('\\', "/");
        // The ns-2 agents keep their own detection whole (FACK's trigger, SackRH's holes).
        if rel.starts_with("loss/") || rel.starts_with("legacy/") || rel == "config.rs" {
            continue;
        }
        let text = std::fs::read_to_string(f).unwrap();
        let mut in_tests = false;
        for (n, line) in text.lines().enumerate() {
            in_tests |= line.starts_with("#[cfg(test)]");
            let code = line.split("//").next().unwrap_or("");
            // RFC 6675 IsLost's input, RFC 5827's and RFC 3042's knobs: only the detector reads them.
            let reads_rule = code.contains(".above(") && !in_tests
                || code.contains("cfg.early_retransmit")
                || code.contains("cfg.limited_transmit_send_one")
                // RFC 6675 §5 step (3) is the SACK recovery's own Limited Transmit, by pipe.
                || code.contains("cfg.limited_transmit") && rel != "recovery/rfc6675.rs";
            if reads_rule {
                bad.push(format!("src/tcp/{rel}:{}: {}", n + 1, line.trim()));
            }
        }
    }
    assert!(bad.is_empty(), "loss detection outside tcp/loss/:\n{}", bad.join("\n"));
    // The sender's questions go to the detector.
    let state = std::fs::read_to_string(root.join("state.rs")).unwrap();
    for q in ["self.loss.dupthresh(", "self.loss.is_lost(", "self.loss.early_send("] {
        assert!(state.contains(q), "state.rs does not ask the detector: {q}");
    }
}

#[test]
fn single_sends_ask_the_gate_too() {
    let root = tcp_dir();
    // The fast retransmission (RFC 5681 §3.2, RFC 6675 (4.3), ns-2 Sack1 and Fack), NewReno's
    // partial-ACK retransmission (RFC 6582 §3.2), Limited Transmit (RFC 3042).
    for (f, what) in [
        ("state.rs", "SendKind::FastRetransmit"),
        ("recovery/rfc6675.rs", "SendKind::FastRetransmit"),
        ("legacy/sack1.rs", "SendKind::FastRetransmit"),
        ("legacy/fack_ns2.rs", "SendKind::FastRetransmit"),
        ("recovery/newreno.rs", "SendKind::PartialAck"),
        ("state.rs", "SendKind::LimitedTransmit"),
    ] {
        let text = std::fs::read_to_string(root.join(f)).unwrap();
        assert!(text.contains(what), "src/tcp/{f} does not ask the gate for {what}");
    }
    // In the standard strategies, every retransmission of snd_una is asked for on its line or
    // the line before.
    for f in ["state.rs", "recovery/tahoe.rs", "recovery/reno.rs", "recovery/newreno.rs", "recovery/rfc6675.rs"] {
        let text = std::fs::read_to_string(root.join(f)).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        for (i, l) in lines.iter().enumerate() {
            if l.contains("retransmit_una(out)") && !l.contains("pub fn") {
                let asked = l.contains("may_send_single(") || i > 0 && lines[i - 1].contains("may_send_single(");
                assert!(asked, "src/tcp/{f}:{}: a retransmission without the gate", i + 1);
            }
        }
    }
}
