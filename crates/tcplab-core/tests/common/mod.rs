//! Helpers shared by the application tests: a scenario from a network and `[[apps]]` text, a
//! temporary file per test binary, and the TCP segments of a capture.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use tcplab_core::trace::reader::{decode, CaptureReader, TcpSeg};
use tcplab_core::{run, RunResult, Scenario};

/// The scenario `net` followed by `apps` (the error shows the text).
pub fn scenario_with(net: &str, apps: &str) -> Scenario {
    let text = format!("{net}{apps}");
    Scenario::from_toml(&text, &[]).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

pub fn run_with(net: &str, apps: &str, seed: u64) -> RunResult {
    run(&scenario_with(net, apps), seed).unwrap()
}

/// A path in a temporary directory of this test process.
pub fn tmp(prefix: &str, name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("tcplab-{prefix}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

/// Every TCP segment of a capture file, in order.
pub fn capture_segments(path: &Path) -> Vec<TcpSeg> {
    let bytes = std::fs::read(path).unwrap();
    let mut rd = CaptureReader::new(&bytes[..]).unwrap();
    let mut segs = Vec::new();
    while let Some(f) = rd.next_frame().unwrap() {
        segs.push(decode(&f).unwrap());
    }
    segs
}
