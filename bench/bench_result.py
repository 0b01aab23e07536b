#!/usr/bin/env python3
"""What it costs to hand a run's result from the core to Python: the tables as JSON records (the
way results came before) against the tables as columns (`tcplab.run` now), on the bench dumbbell
with many flows (bench/scenarios/dumbbell.toml, 1 Gb/s bottleneck, 1 s simulated).

    python3 bench/bench_result.py                 # 4,096 flows, 5 repetitions
    python3 bench/bench_result.py --flows 64 1024 4096 --reps 3

Both ways run the same simulation in this process, interleaved (JSON, columns, JSON, ...), after
one untimed warm-up of each; the figures are medians over the repetitions. Timed:

- `core call`: the whole `_core.run_scenario(...)` call, simulation included (the same in both):
  its difference between the two ways is what the core spends making the one or the other.
- `to Python`: what Python then does to have the result: `json.loads` of the text (JSON), the
  small JSON part and the TCP configurations (columns); `Result` made.
- `+ DataFrames`: building the `connections`, `links` and `transfers` DataFrames from that.
- `handed over`: the memory Python holds for what the call returned (tracemalloc): the JSON text
  (its length in brackets), or the columns; then the peak while the `Result` and its per-flow TCP
  settings are made, and what stays allocated (most of it, in both ways, those settings: a dict
  of every knob per flow).
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCENARIO = HERE / "scenarios" / "dumbbell.toml"


def sets_for(n: int, duration: str, rate: str) -> list[str]:
    return [f"topology.pairs={n}", f"flows.0.count={n}", f'duration="{duration}"', f'topology.bottleneck_rate="{rate}"']


def one(core, api, text: str, sets: list[str], columns: bool) -> dict:
    gc.collect()
    t0 = time.perf_counter()
    out = core.run_scenario(text, "toml", 1, sets, columns=columns)
    t1 = time.perf_counter()
    r = api.Result.from_columns(out) if columns else api.Result.from_json(out)
    r.tcp  # noqa: B018  (the per-flow settings made in both ways)
    t2 = time.perf_counter()
    r.connections, r.links, r.transfers  # noqa: B018
    t3 = time.perf_counter()
    return {"core_s": t1 - t0, "decode_s": t2 - t1, "frames_s": t3 - t2, "json_bytes": None if columns else len(out), "flows": len(r.connections)}


def memory(core, api, text: str, sets: list[str], columns: bool) -> tuple[int, int, int]:
    """Bytes Python holds: what the core handed over (the JSON text, or the columns), then the
    peak and what stays allocated once the Result and its per-flow TCP settings are made
    (without DataFrames)."""
    gc.collect()
    tracemalloc.start()
    out = core.run_scenario(text, "toml", 1, sets, columns=columns)
    handed, _ = tracemalloc.get_traced_memory()
    r = api.Result.from_columns(out) if columns else api.Result.from_json(out)
    r.tcp  # noqa: B018
    del out
    gc.collect()
    retained, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del r
    return handed, peak, retained


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--flows", type=int, nargs="+", default=[4096], metavar="N")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--duration", default="1s", help="simulated time (default 1s)")
    ap.add_argument("--rate", default="1Gbps", help="bottleneck rate (default 1Gbps)")
    a = ap.parse_args(argv)

    import tcplab
    from tcplab import _core, api

    text = SCENARIO.read_text(encoding="utf-8")
    print(f"tcplab {tcplab.__version__}, {SCENARIO.name}, bottleneck {a.rate}, {a.duration} simulated, medians of {a.reps}")
    print()
    print("| flows | way | core call s | to Python s | + DataFrames s | handed over | Python peak | Python retained |")
    print("|---|---|---|---|---|---|---|---|")
    for n in a.flows:
        sets = sets_for(n, a.duration, a.rate)
        for columns in (False, True):
            one(_core, api, text, sets, columns)  # warm-up
        runs: dict = {False: [], True: []}
        for _ in range(a.reps):
            for columns in (False, True):
                runs[columns].append(one(_core, api, text, sets, columns))
        for columns in (False, True):
            rs = runs[columns]
            med = {k: statistics.median(r[k] for r in rs) for k in ("core_s", "decode_s", "frames_s")}
            handed, peak, kept = memory(_core, api, text, sets, columns)
            size = f" ({rs[0]['json_bytes'] / 1e6:.2f} MB of text)" if rs[0]["json_bytes"] else ""
            print(
                f"| {n:,} | {'columns' if columns else 'JSON'} | {med['core_s']:.4f} | {med['decode_s']:.4f} | {med['frames_s']:.4f} "
                f"| {handed / 2**20:.1f} MiB{size} | {peak / 2**20:.1f} MiB | {kept / 2**20:.1f} MiB |"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
