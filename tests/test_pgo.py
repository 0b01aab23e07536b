"""scripts/build_pgo.sh's training set and check (scripts/pgo_train.py): the build that trained
passes its own check, a changed or missing result fails it by name, and bad invocations are
named. (The two builds themselves take minutes and an LLVM tool: bench/README.md, "Seventh
pass".)"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "pgo_train.py"


def train(*args, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True, timeout=600, cwd=cwd)


def test_the_check_passes_its_own_build_and_names_a_changed_or_missing_result(tmp_path):
    digests = tmp_path / "digests.json"
    t = train(ROOT, digests, "train", cwd=tmp_path)
    assert t.returncode == 0, t.stderr
    want = json.loads(digests.read_text())
    # Every run of the set ran: the dumbbell six ways and every example.
    assert len(want) == 6 + len(list((ROOT / "experiments" / "examples").glob("*.toml"))), sorted(want)
    ok = train(ROOT, digests, "check", cwd=tmp_path)
    assert ok.returncode == 0 and f"{len(want)} runs, the same results in both builds" in ok.stderr, ok.stderr
    changed, gone = sorted(want)[:2]
    digests.write_text(json.dumps({**{k: v for k, v in want.items() if k != gone}, changed: "0" * 64}))
    bad = train(ROOT, digests, "check", cwd=tmp_path)
    assert bad.returncode == 1 and "differ from the instrumented build's" in bad.stderr, bad.stderr
    assert changed in bad.stderr and gone in bad.stderr


def test_bad_invocations_are_named(tmp_path):
    usage = train(ROOT, tmp_path / "d.json", cwd=tmp_path)
    assert usage.returncode == 1 and "usage: pgo_train.py ROOT DIGESTS train|check" in usage.stderr
    not_root = train(tmp_path, tmp_path / "d.json", "train", cwd=tmp_path)
    assert not_root.returncode == 1 and "dumbbell.toml does not exist (ROOT is the repository)" in not_root.stderr, not_root.stderr
    no_digests = train(ROOT, tmp_path / "none.json", "check", cwd=tmp_path)
    assert no_digests.returncode == 1 and "none.json does not exist (the training run writes it)" in no_digests.stderr, no_digests.stderr
