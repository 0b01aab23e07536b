//! Golden-output regression test: a fixed set of scenarios (the shipped examples, the benchmark
//! dumbbell, and a deterministic spread of generated single-link and dumbbell cases covering every
//! variant, profile, drop kind, handshake and FIN setting, repeats, RED, periodic loss, warmups and
//! captures) must give byte-identical results to the ones recorded in `tests/golden/digests.txt`.
//!
//! A digest is a 64-bit FNV-1a hash of the run's JSON result (and of each capture file it writes).
//! A change meant to be invisible (a restructuring, a speed-up) must leave every digest as it was;
//! a change meant to alter behaviour rewrites them deliberately with
//! `TCPLAB_BLESS=1 cargo test --release -p tcplab-core --test golden` and says why in its commit.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use tcplab_core::{run, Scenario};

fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// A small deterministic generator (SplitMix64), so the case list never depends on a crate's
/// version.
struct Gen(u64);
impl Gen {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[(self.next() % xs.len() as u64) as usize]
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

const PRESETS: [&str; 10] = ["tahoe", "reno", "newreno", "sack1", "fack-rh", "sack", "sack-iw", "sack-iw-lt", "sack-iw-lt-abc1", "sack-iw-lt-abc1-er"];
const PROFILES: [&str; 5] = ["rfc", "rfc2988", "ns2", "bsd", "linux22"];

fn drop_spec(g: &mut Gen, repeat: u32) -> String {
    let tx = if g.chance(30) { "[1, 2]" } else { "[1]" };
    let transfer = if repeat > 1 && g.chance(40) { format!(", transfer = {}", 1 + g.below(repeat as u64)) } else { String::new() };
    match g.below(5) {
        0 => format!("{{ kind = \"syn\", transmissions = {tx}{transfer} }}"),
        1 => format!("{{ kind = \"synack\", transmissions = {tx}{transfer} }}"),
        2 => format!("{{ kind = \"data\", segment = {}, transmissions = {tx}{transfer} }}", 1 + g.below(12)),
        3 => format!("{{ kind = \"ack\", number = {}{transfer} }}", 1 + g.below(8)),
        _ => format!("{{ kind = \"fin\", transmissions = {tx}{transfer} }}"),
    }
}

fn tcp_table(g: &mut Gen) -> String {
    let mut t = format!("profile = \"{}\", preset = \"{}\"", g.pick(&PROFILES), g.pick(&PRESETS));
    if g.chance(30) {
        t += &format!(", mss = {}", g.pick(&[536, 1000, 1460]));
    }
    if g.chance(25) {
        t += ", handshake = false";
    }
    if g.chance(20) {
        t += ", fin = false";
    }
    if g.chance(30) {
        t += &format!(", delayed_ack = {}", g.chance(50));
    }
    if g.chance(15) {
        t += ", rwnd = \"8KB\"";
    }
    if g.chance(10) {
        t += ", data_retries = 2, syn_retries = 1";
    }
    t
}

fn single_link_case(g: &mut Gen) -> String {
    let queue = match g.below(4) {
        0 => "\"unlimited\"".to_string(),
        1 => format!("{}", 3 + g.below(20)),
        2 => format!("{{ packets = {}, red = {{ min_th = 2, max_th = 6 }} }}", 10 + g.below(10)),
        _ => format!("{{ packets = {}, bytes = \"{}KB\" }}", 5 + g.below(20), 8 + g.below(32)),
    };
    let loss = if g.chance(40) { format!("loss = {}\n", [0.01, 0.03, 0.1][g.below(3) as usize]) } else { String::new() };
    let rloss = if g.chance(20) { "reverse_loss = 0.02\n".to_string() } else { String::new() };
    let pattern = if g.chance(10) && !loss.is_empty() { "loss_pattern = \"periodic\"\n" } else { "" };
    let repeat = if g.chance(30) { 1 + g.below(3) as u32 } else { 1 };
    let mut drops = Vec::new();
    for _ in 0..g.below(3) {
        drops.push(drop_spec(g, repeat));
    }
    let think = if repeat > 1 { format!("think = \"{}ms\"\n", g.below(500)) } else { String::new() };
    format!(
        "duration = \"60s\"\n[topology]\nkind = \"single_link\"\nrate = \"{}Mbps\"\ndelay = \"{}ms\"\nqueue = {queue}\n{loss}{rloss}{pattern}\
         [tcp]\n{}\n[[flows]]\nbytes = \"{}KB\"\nrepeat = {repeat}\n{think}start = \"{}ms\"\ndrops = [{}]\n",
        [1, 2, 10][g.below(3) as usize],
        1 + g.below(60),
        tcp_table(g).replace(", ", "\n"),
        1 + g.below(64),
        g.below(100),
        drops.join(", "),
    )
}

fn dumbbell_case(g: &mut Gen) -> String {
    let pairs = 2 + g.below(3);
    let mut flows = String::new();
    for i in 1..=pairs {
        let bytes = if g.chance(30) { "\"unlimited\"".to_string() } else { format!("\"{}KB\"", 4 + g.below(200)) };
        let repeat = if g.chance(20) { 2 } else { 1 };
        flows += &format!(
            "[[flows]]\nfrom = \"s{i}\"\nto = \"r{i}\"\nbytes = {bytes}\nrepeat = {repeat}\nthink = \"{}ms\"\nstart = \"{}ms\"\ntcp = {{ {} }}\n",
            g.below(300),
            g.below(2000),
            tcp_table(g)
        );
    }
    let queue = if g.chance(30) { format!("{{ packets = {}, red = {{ min_th = 3, max_th = 9, gentle = true }} }}", 15 + g.below(20)) } else { format!("{}", 4 + g.below(30)) };
    let warmup = if g.chance(30) { "warmup = \"5s\"\n" } else { "" };
    format!(
        "duration = \"30s\"\n{warmup}[topology]\nkind = \"dumbbell\"\npairs = {pairs}\naccess_rate = \"100Mbps\"\naccess_delay = \"{}ms\"\n\
         bottleneck_rate = \"{}Mbps\"\nbottleneck_delay = \"{}ms\"\nqueue = {queue}\nloss = {}\n{flows}",
        1 + g.below(5),
        1 + g.below(5),
        5 + g.below(40),
        [0.0, 0.0, 0.005][g.below(3) as usize],
    )
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// (name, scenario text, seed, overrides).
fn cases() -> Vec<(String, String, u64, Vec<String>)> {
    let mut out = Vec::new();
    let mut files: Vec<PathBuf> = std::fs::read_dir(root().join("experiments/examples")).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        for seed in [1, 2] {
            out.push((format!("examples/{name}#{seed}"), text.clone(), seed, vec!["duration=\"20s\"".to_string()]));
        }
    }
    let bench = std::fs::read_to_string(root().join("bench/scenarios/dumbbell.toml")).unwrap();
    for n in [1, 4] {
        out.push((format!("bench/dumbbell N={n}"), bench.clone(), 1, vec![format!("topology.pairs={n}"), format!("flows.0.count={n}"), "duration=\"10s\"".into()]));
    }
    let mut g = Gen(0x601D_E17);
    for i in 0..160 {
        out.push((format!("single#{i}"), single_link_case(&mut g), 1 + g.below(1000), vec![]));
    }
    for i in 0..40 {
        out.push((format!("dumbbell#{i}"), dumbbell_case(&mut g), 1 + g.below(1000), vec![]));
    }
    out
}

fn digest(name: &str, text: &str, seed: u64, sets: &[String], tmp: &Path) -> String {
    // Two captures (a node and a link's egress) on every fourth generated case and on the examples.
    let with_capture = !name.starts_with("bench") && (name.starts_with("examples") || fnv1a(name.as_bytes()) % 4 == 0);
    let mut sets = sets.to_vec();
    let pcap = tmp.join(format!("{:016x}.pcap", fnv1a(name.as_bytes())));
    if with_capture {
        let s = Scenario::from_toml(text, &sets).unwrap_or_else(|e| panic!("{name}: {e}\n{text}"));
        let node = s.network().unwrap().nodes[0].clone();
        sets.push(format!("capture=[{{ path = {:?}, node = {node:?}, payload = true }}]", pcap.to_string_lossy()));
    }
    let s = Scenario::from_toml(text, &sets).unwrap_or_else(|e| panic!("{name}: {e}\n{text}"));
    let r = run(&s, seed).unwrap_or_else(|e| panic!("{name}: {e}"));
    let mut json = serde_json::to_value(&r).unwrap();
    // The scenario as run names the temporary capture path; the result proper does not depend on it.
    json["scenario"]["capture"] = serde_json::Value::Null;
    if let Some(dir) = std::env::var_os("TCPLAB_GOLDEN_DUMP") {
        // Debugging aid: every case's result, to diff two builds.
        let file = Path::new(&dir).join(name.replace('/', "_"));
        std::fs::write(file, format!("{text}\n{}", serde_json::to_string_pretty(&json).unwrap())).unwrap();
    }
    let mut d = format!("{:016x}", fnv1a(serde_json::to_string(&json).unwrap().as_bytes()));
    if with_capture {
        let bytes = std::fs::read(&pcap).unwrap();
        write!(d, " pcap {:016x}", fnv1a(&bytes)).unwrap();
        let _ = std::fs::remove_file(&pcap);
    }
    d
}

#[test]
fn results_are_byte_identical_to_the_recorded_digests() {
    let tmp = std::env::temp_dir().join(format!("tcplab-golden-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let mut lines = String::new();
    for (name, text, seed, sets) in cases() {
        writeln!(lines, "{name}\t{}", digest(&name, &text, seed, &sets, &tmp)).unwrap();
    }
    let _ = std::fs::remove_dir_all(&tmp);
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/digests.txt");
    if std::env::var_os("TCPLAB_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &lines).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path).expect("tests/golden/digests.txt (write it with TCPLAB_BLESS=1)");
    let differ: Vec<String> = want
        .lines()
        .zip(lines.lines())
        .filter(|(a, b)| a != b)
        .map(|(a, b)| format!("  recorded {a}\n  now      {b}"))
        .collect();
    assert_eq!(want.lines().count(), lines.lines().count(), "the case list changed");
    assert!(differ.is_empty(), "{} of {} cases differ from the recorded results:\n{}", differ.len(), lines.lines().count(), differ.join("\n"));
}
