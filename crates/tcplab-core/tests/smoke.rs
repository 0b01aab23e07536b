use tcplab_core::{run, Scenario};

#[test]
fn demo_runs() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../experiments/examples/demo.toml")).unwrap();
    let s = Scenario::from_toml(&text, &[]).unwrap();
    let r = run(&s, 1).unwrap();
    println!("{}", serde_json::to_string_pretty(&r.connections).unwrap());
    println!("{}", serde_json::to_string_pretty(&r.transfers).unwrap());
    println!("{}", serde_json::to_string_pretty(&r.links).unwrap());
    println!("{}", serde_json::to_string_pretty(&r.meta).unwrap());
    assert_eq!(r.connections[0].bytes_delivered, 1 << 20);
}
