"""Shared scenarios for the API and CLI tests: small, fixed, and fast (milliseconds each)."""

from __future__ import annotations

import copy
import queue
import shutil
import subprocess
import time
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "experiments" / "examples"

#: ns-2's `ns` is on PATH. The tests that run it are marked `@needs_ns` (imported from here) and
#: skip with `NS_MISSING` otherwise; CI installs it.
HAVE_NS = shutil.which("ns") is not None
NS_MISSING = "ns-2's `ns` is not installed (apt-get install ns2; scripts/setup.sh --tools)"
needs_ns = pytest.mark.skipif(not HAVE_NS, reason=NS_MISSING)

# A 16 KB transfer over 10 Mb/s with 35 ms one way, no queue limit, no loss.
SMALL_TOML = """\
name = "small"

[topology]
kind = "single_link"
rate = "10Mbps"
delay = "35ms"

[[flows]]
name = "f"
bytes = "16KB"
"""

# The same scenario as a dict (the structure of the TOML above).
SMALL_DICT = {
    "name": "small",
    "topology": {"kind": "single_link", "rate": "10Mbps", "delay": "35ms"},
    "flows": [{"name": "f", "bytes": "16KB"}],
}

# Random loss on the data direction and an unlimited flow: the seed decides which packets are lost.
LOSSY_TOML = """\
name = "lossy"
duration = "20s"

[topology]
kind = "single_link"
rate = "10Mbps"
delay = "20ms"
loss = 0.02

[[flows]]
name = "bulk"
bytes = "unlimited"
"""

ONE_WAY_DELAY_S = 0.035


@pytest.fixture
def small_toml() -> str:
    return SMALL_TOML


@pytest.fixture
def small_dict() -> dict:
    return copy.deepcopy(SMALL_DICT)


@pytest.fixture
def lossy_toml() -> str:
    return LOSSY_TOML


@pytest.fixture
def small_file(tmp_path: Path) -> Path:
    p = tmp_path / "small.toml"
    p.write_text(SMALL_TOML, encoding="utf-8")
    return p


def _run_cli(*args, timeout: float = 30.0) -> subprocess.CompletedProcess:
    """Run `python -m tcplab.cli ARGS` in a fresh interpreter and capture its output."""
    return subprocess.run(
        [sys.executable, "-m", "tcplab.cli", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.fixture
def cli():
    return _run_cli


def tiny_sweep(name: str, replicates: int, axes: str = '"tcp.variant" = ["reno", "newreno"]', flows: str = '[[flows]]\nbytes = "16KB"\n') -> str:
    """A sweep of milliseconds a run: `flows` (TOML; one 16 KB transfer unless given) over a
    10 Mb/s, 10 ms link, `replicates` runs of each point of `axes` (lines of `[sweep.axes]`)."""
    return f"""\
name = "{name}"
[topology]
kind = "single_link"
rate = "10Mbps"
delay = "10ms"
{flows}[sweep]
replicates = {replicates}
[sweep.axes]
{axes}
"""


def slow_sweep(name: str) -> str:
    """A sweep long enough to interrupt midway and short enough to finish in seconds: two
    unlimited flows for 20 s over 100 Mb/s, 10-20 ms a run, 300 runs, named `name` (its progress
    lines read "sweep NAME: ...")."""
    return f"""\
name = "{name}"
duration = "20s"

[topology]
kind = "single_link"
rate = "100Mbps"
delay = "10ms"

[[flows]]
name = "a"
bytes = "unlimited"

[[flows]]
name = "b"
bytes = "unlimited"

[sweep]
replicates = 15

[sweep.axes]
"tcp.variant" = ["reno", "newreno"]
"topology.loss" = {{ logspace = [-4, -2, 10] }}
"""


def wait_for_done(lines: queue.Queue, name: str, at_least: int, timeout: float = 60.0) -> int:
    """Read the progress lines of sweep `name` (stderr lines queued by a reader thread, None at
    the end) until one says at least `at_least` runs are done; return that count."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            line = lines.get(timeout=max(0.01, deadline - time.monotonic()))
        except queue.Empty:
            break
        if line is None:
            pytest.fail("the sweep ended before it could be interrupted")
        if line.startswith(f"sweep {name}: "):
            done = int(line.split(": ", 1)[1].split("/", 1)[0])
            if done >= at_least:
                return done
    pytest.fail(f"no progress line reached {at_least} runs within {timeout} s")


def assert_check_kinds(checks, out: Path) -> None:
    """What every reproduction's report must hold about its kinds of check: every check has a
    known kind; every paper check has a one-line justification and a tolerance that some plausible
    value of ours fails (`report.cannot_fail`); the headline of report.md and the summary count the
    paper checks only; checks.csv carries the kind of each row."""
    import pandas as pd

    from tcplab.report import KINDS, cannot_fail

    assert checks and all(c.kind in KINDS for c in checks)
    bad = cannot_fail(checks)
    assert not bad, [(c.what, c.tolerance, c.plausible_range()) for c in bad]
    paper = [c for c in checks if c.kind == "paper" and c.ok is not None]
    within = sum(1 for c in paper if c.ok)
    text = (out / "report.md").read_text()
    assert f"**{within} of {len(paper)} paper comparisons within tolerance." in text
    csv = pd.read_csv(out / "checks.csv", keep_default_na=False)
    assert list(csv["kind"]) == [c.kind for c in checks]
    for kind in set(c.kind for c in checks) - {"paper"}:
        assert kind.capitalize() in text or kind in text
