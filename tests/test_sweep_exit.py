"""A pool sweep run from the command line leaves no process behind: not when it ends, not when it
is interrupted with Ctrl-C (SIGINT) or stopped with SIGTERM, not when it fails midway (issue 18,
item 6).

Each sweep runs in a subprocess whose environment carries a marker of its own; every process it
starts (the pool's workers, multiprocessing's resource tracker) inherits that environment, so
after the command has exited, a process whose /proc/PID/environ holds the marker is one it left
behind. Every wait is bounded."""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import duckdb
import pytest
from conftest import slow_sweep, tiny_sweep, wait_for_done

pytestmark = pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="finds the sweep's processes through /proc (Linux)")


MARK = "TCPLAB_TEST_SWEEP_MARK"

SLOW_SWEEP = slow_sweep("exit")
# Commits every 0.5 s whatever the machine's load, so that an interruption lands midway.
PINNED = {"TCPLAB_SWEEP_COMMIT_S": "0.5"}

TINY_SWEEP = tiny_sweep("tiny", replicates=4)


def marked(tag: str) -> list:
    """(pid, command line) of every live process whose environment carries MARK=tag."""
    needle = f"{MARK}={tag}".encode()
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as f:
                env = f.read().split(b"\0")
            with open(f"/proc/{name}/stat", "rb") as f:
                state = f.read().rsplit(b")", 1)[1].split()[0]
            with open(f"/proc/{name}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:
            continue  # gone meanwhile, or not ours to read
        if needle in env and state != b"Z":
            out.append((int(name), cmd))
    return out


def start(tmp_path: Path, text: str, *args, env_extra=None) -> tuple:
    """Start `tcplab sweep` on `text` with 2 workers, progress lines on stderr, and a marker of its
    own; threads collect its stdout and queue its stderr lines."""
    f = tmp_path / "sweep.toml"
    f.write_text(text, encoding="utf-8")
    tag = uuid.uuid4().hex
    env = {**os.environ, MARK: tag, **(env_extra or {})}
    cmd = [sys.executable, "-m", "tcplab.cli", "sweep", str(f), "--workers", "2", "--store", str(tmp_path / "s.duckdb"), "--progress-interval", "0", *args]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    lines: queue.Queue = queue.Queue()
    out: list = []
    err: list = []

    def pump(stream, into, q=None):
        for line in stream:
            into.append(line)
            if q is not None:
                q.put(line)
        if q is not None:
            q.put(None)

    threading.Thread(target=pump, args=(p.stdout, out), daemon=True).start()
    threading.Thread(target=pump, args=(p.stderr, err, lines), daemon=True).start()
    return p, tag, lines, out, err


def finish(p: subprocess.Popen, tag: str, timeout: float = 120.0) -> list:
    """Wait for the command itself (not for its output to end: a process it left behind may hold
    its stdout and stderr) and list, at once, the processes carrying its marker."""
    try:
        p.wait(timeout=timeout)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    return marked(tag)


def text_of(lines: list, timeout: float = 10.0) -> str:
    """What the command wrote, once its pipes have closed (bounded)."""
    deadline = time.monotonic() + timeout
    n = -1
    while time.monotonic() < deadline and len(lines) != n:
        n = len(lines)
        time.sleep(0.05)
    return "".join(lines)


def wait_for_workers(p: subprocess.Popen, tag: str, n: int = 2, timeout: float = 60.0) -> list:
    """The sweep's pool workers (processes carrying its marker besides the command itself) once
    there are `n` of them."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and p.poll() is None:
        workers = [(pid, cmd) for pid, cmd in marked(tag) if pid != p.pid and "_worker_entry" in cmd]
        if len(workers) >= n:
            return workers
        time.sleep(0.02)
    pytest.fail(f"the sweep did not start {n} workers within {timeout} s")


def test_a_finished_pool_sweep_leaves_no_process_behind(tmp_path):
    p, tag, _, out, err = start(tmp_path, TINY_SWEEP)
    wait_for_workers(p, tag)
    left = finish(p, tag)  # right away: the command waits for what it started
    assert left == [], f"processes left behind: {left}"
    assert p.returncode == 0, text_of(err)
    assert "8 runs: 8 run now (8 ok, 0 failed)" in text_of(out)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_an_interrupted_sweep_stores_what_finished_and_leaves_no_process_behind(tmp_path, sig):
    """Ctrl-C exits with 130 and says so, SIGTERM with its own status (128 + 15); both store whole
    runs only and stop every process they started."""
    p, tag, lines, _, err = start(tmp_path, SLOW_SWEEP, "--batch-size", "2", env_extra=PINNED)
    try:
        wait_for_workers(p, tag)
        wait_for_done(lines, "exit", at_least=10)
        p.send_signal(sig)
    finally:
        left = finish(p, tag, timeout=60)
    text = text_of(err)
    assert p.returncode == 128 + sig, text
    if sig == signal.SIGINT:
        assert "interrupted: every finished run is stored" in text
    assert "Traceback" not in text
    assert left == [], f"processes left behind: {left}"
    con = duckdb.connect(str(tmp_path / "s.duckdb"), read_only=True)
    try:
        ok = {k for (k,) in con.execute("SELECT key FROM runs WHERE status = 'ok'").fetchall()}
        with_rows = {k for (k,) in con.execute("SELECT DISTINCT key FROM connections").fetchall()}
    finally:
        con.close()
    assert 10 <= len(ok) < 300 and with_rows == ok  # whole runs only, and the sweep was cut short


def test_a_sweep_that_fails_midway_leaves_no_process_behind(tmp_path):
    """Every worker dies on its runs from seed 3 on (a hook in the workers only): the pool gives up
    with an error, and the command exits with it, having stopped everything it started."""
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(
        "import multiprocessing, os\n"
        "import tcplab._core as core\n"
        "_real = core.run_scenario\n"
        "def run_scenario(text, fmt='toml', seed=None, sets=(), **limits):\n"
        "    if seed >= 3 and multiprocessing.current_process().name.startswith('tcplab-sweep-worker'):\n"
        "        os._exit(3)\n"
        "    return _real(text, fmt, seed, sets, **limits)\n"
        "core.run_scenario = run_scenario\n",
        encoding="utf-8",
    )
    pythonpath = os.pathsep.join([str(hook), os.environ.get("PYTHONPATH", "")])
    p, tag, _, _, err = start(tmp_path, SLOW_SWEEP, "--batch-size", "1", env_extra={"PYTHONPATH": pythonpath})
    left = finish(p, tag)
    text = text_of(err)
    assert p.returncode == 2, text
    assert "error: sweep workers keep dying (exit status 3" in text
    assert left == [], f"processes left behind: {left}"
