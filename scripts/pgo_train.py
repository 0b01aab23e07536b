"""The training runs of the profile-guided build (scripts/build_pgo.sh), and its check.

    python3 scripts/pgo_train.py ROOT DIGESTS train   # run the set, write each result's digest
    python3 scripts/pgo_train.py ROOT DIGESTS check   # run it again: every digest the same, or exit 1

ROOT is the repository (its bench/ and experiments/examples/). The set: the benchmark dumbbell
(bench/scenarios/dumbbell.toml) at 1, 16 and 64 flows, with the `ns2` profile of bench/vs_ns2.py
and as written, and every scenario of experiments/examples, 20 simulated seconds each. A digest
covers the result's tables, the scenario as run and the count of events (not the wall time). A
run that fails is an error: the set is what the build is trained and checked on. The
instrumented build trains and writes the digests; the optimised build must reproduce them, since
profile-guided optimisation moves code and changes no arithmetic.
"""

import sys
from pathlib import Path

if len(sys.argv) != 4 or sys.argv[3] not in ("train", "check"):
    sys.exit("usage: pgo_train.py ROOT DIGESTS train|check")
root, digests, check = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3] == "check"
bench, examples = root / "bench" / "scenarios" / "dumbbell.toml", root / "experiments" / "examples"
for need in (bench, examples):
    if not need.exists():
        sys.exit(f"pgo_train.py: {need} does not exist (ROOT is the repository)")
if check and not digests.is_file():
    sys.exit(f"pgo_train.py: {digests} does not exist (the training run writes it)")

import hashlib  # noqa: E402
import json  # noqa: E402

import tcplab  # noqa: E402

ns2 = ["tcp.profile=ns2", "tcp.delack_segments=2", "tcp.delack_timeout=200ms"]
runs = [(bench, sets + [f"topology.pairs={n}", f"flows.0.count={n}", "duration=20s"]) for n in (1, 16, 64) for sets in (ns2, [])]
runs += [(path, ["duration=20s"]) for path in sorted(examples.glob("*.toml"))]
got, failed = {}, []
for path, sets in runs:
    key = f"{path.name} {' '.join(sets)}"
    try:
        r = tcplab.run(path, sets=sets)
    except Exception as e:
        failed.append(f"{key}: {e}")
        continue
    d = r.to_dict()
    d["meta"] = {"events": r.meta.get("events")}
    got[key] = hashlib.sha256(json.dumps(d, sort_keys=True, default=str).encode()).hexdigest()
if failed:
    sys.exit("pgo_train.py: runs failed:\n  " + "\n  ".join(failed))
if not check:
    digests.write_text(json.dumps(got))
    print(f"pgo_train.py: {len(got)} runs trained", file=sys.stderr)
else:
    want = json.loads(digests.read_text())
    bad = sorted(k for k in set(want) | set(got) if got.get(k) != want.get(k))
    if bad:
        sys.exit(f"pgo_train.py: the optimised build's results differ from the instrumented build's: {bad}")
    print(f"pgo_train.py: {len(want)} runs, the same results in both builds", file=sys.stderr)
