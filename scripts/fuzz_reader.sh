#!/usr/bin/env bash
# Fuzz the capture reader and analyser (fuzz/fuzz_targets/reader.rs), or the scenario reader
# (fuzz/fuzz_targets/scenario.rs), for a fixed budget.
#   scripts/fuzz_reader.sh [SECONDS] [reader|scenario]      (default 300 reader; not run by CI)
# The scenario corpus is seeded with the example scenarios.
# Uses cargo-fuzz when installed (cargo install cargo-fuzz), otherwise builds the same libFuzzer
# target with the nightly toolchain and the coverage flags cargo-fuzz would pass. The corpus is
# seeded with captures written by the simulator; crashes are left in fuzz/artifacts/reader/.
set -euo pipefail
cd "$(dirname "$0")/.."
budget="${1:-300}"
target="${2:-reader}"
corpus="fuzz/corpus/$target"
mkdir -p "$corpus" "fuzz/artifacts/$target"
if [ "$target" = scenario ] && [ -z "$(ls -A "$corpus")" ]; then
    cp experiments/examples/*.toml "$corpus/"
fi
if [ "$target" = reader ] && [ -z "$(ls -A "$corpus")" ]; then
    # Seeds: a lossy run captured as pcap and as pcapng, headers only and with payload.
    for fmt in pcap pcapng; do
        cat > "$corpus/seed.toml" <<TOML
[topology]
kind = "single_link"
rate = "10Mbps"
delay = "5ms"
loss = 0.05
[[flows]]
bytes = "20KB"
[[capture]]
path = "$corpus/seed-$fmt"
node = "sender"
format = "$fmt"
[[capture]]
path = "$corpus/seed-$fmt-payload"
link = "link"
format = "$fmt"
payload = true
TOML
        cargo run -q --release -p tcplab-core --example trace_run -- "$corpus/seed.toml" > /dev/null
    done
    rm -f "$corpus/seed.toml"
fi
if cargo fuzz --help > /dev/null 2>&1; then
    cd fuzz
    exec cargo +nightly fuzz run "$target" "corpus/$target" -- -max_total_time="$budget" -max_len=65536
fi
export RUSTFLAGS="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 -Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table -Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing -Cdebug-assertions -Coverflow-checks"
# An explicit --target keeps the flags off build scripts and proc-macros, as cargo-fuzz does.
host="$(rustc -vV | sed -n 's/^host: //p')"
cargo +nightly build --release --manifest-path fuzz/Cargo.toml --bin "$target" --target "$host"
exec "fuzz/target/$host/release/$target" "$corpus" -artifact_prefix="fuzz/artifacts/$target/" -max_total_time="$budget" -max_len=65536
