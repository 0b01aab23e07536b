//! Run a scenario file (with its captures) and print the analysis of a capture: a debugging aid.
//! `cargo run --release --example trace_run -- SCENARIO.toml [CAPTURE]`
fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(sc) = args.get(1).filter(|s| s.ends_with(".toml")) {
        let text = std::fs::read_to_string(sc).expect("readable scenario");
        let s = tcplab_core::Scenario::from_toml(&text, &[]).unwrap_or_else(|e| panic!("{e}"));
        let r = tcplab_core::run(&s, s.seed).unwrap_or_else(|e| panic!("{e}"));
        println!("{}", serde_json::to_string_pretty(&r.connections).unwrap());
    }
    if let Some(p) = args.iter().skip(1).find(|s| !s.ends_with(".toml")) {
        match tcplab_core::trace::analyze_path(p) {
            Ok(v) => println!("{}", serde_json::to_string_pretty(&v).unwrap()),
            Err(e) => println!("error: {e}"),
        }
    }
}
