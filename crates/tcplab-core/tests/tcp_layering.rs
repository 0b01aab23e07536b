//! The shape of `src/tcp/` that the compiler does not check: cwnd and ssthresh are written only
//! by the congestion controller (`tcp/cc/`) and the ns-2 agents (`tcp/legacy/`), and the
//! congestion-control seam imports nothing of the sender (no import circle with `state.rs`).

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
            for m in ["state", "sender", "recovery", "sackrec", "legacy", "conn", "receiver", "sack::"] {
                assert!(!line.contains(&format!("tcp::{m}")) && !line.contains(&format!("super::super::{m}")), "{}: {line}", f.display());
            }
        }
    }
}

#[test]
fn every_send_loop_asks_the_one_send_gate() {
    let root = tcp_dir();
    // send_available; RFC 6675 (C); ns-2 Sack1, FACK-RH, ns-2 Fack, SackRH send_much().
    for f in ["state.rs", "sackrec.rs", "legacy/sack1.rs", "legacy/fack_rh.rs", "legacy/fack_ns2.rs", "legacy/sackrh.rs"] {
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
