"""The training runs of the profile-guided build (scripts/build_pgo.sh), and its check.

    python3 scripts/pgo_train.py ROOT DIGESTS train   # run the set, write each result's digest
    python3 scripts/pgo_train.py ROOT DIGESTS check   # run it again: every digest the same, or exit 1

The set: the benchmark dumbbell (bench/scenarios/dumbbell.toml) at 1, 16 and 64 flows, with the
`ns2` profile of bench/vs_ns2.py and as written, and every scenario of experiments/examples, 20
simulated seconds each. A digest covers the result's tables, the scenario as run and the count
of events (not the wall time). The instrumented build trains and writes the digests; the
optimised build must reproduce them, since profile-guided optimisation moves code and changes no
arithmetic.
"""

import hashlib
import json
import sys
from pathlib import Path

import tcplab

if len(sys.argv) != 4 or sys.argv[3] not in ("train", "check"):
    sys.exit("usage: pgo_train.py ROOT DIGESTS train|check")
root, digests, check = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3] == "check"
bench = root / "bench" / "scenarios" / "dumbbell.toml"
ns2 = ["tcp.profile=ns2", "tcp.delack_segments=2", "tcp.delack_timeout=200ms"]
runs = [(bench, sets + [f"topology.pairs={n}", f"flows.0.count={n}", "duration=20s"]) for n in (1, 16, 64) for sets in (ns2, [])]
runs += [(path, ["duration=20s"]) for path in sorted((root / "experiments" / "examples").glob("*.toml"))]
got = {}
for path, sets in runs:
    key = f"{path.name} {' '.join(sets)}"
    try:
        r = tcplab.run(path, sets=sets)
    except Exception as e:  # a scenario this machine cannot run trains nothing
        print(f"build_pgo: {key}: {e}", file=sys.stderr)
        continue
    d = r.to_dict()
    d["meta"] = {"events": r.meta.get("events")}
    got[key] = hashlib.sha256(json.dumps(d, sort_keys=True, default=str).encode()).hexdigest()
if not check:
    digests.write_text(json.dumps(got))
else:
    want = json.loads(digests.read_text())
    bad = [k for k in want if got.get(k) != want[k]]
    if bad:
        sys.exit(f"build_pgo: the optimised build's results differ from the instrumented build's: {bad}")
    print(f"build_pgo: {len(want)} runs, the same results in both builds", file=sys.stderr)