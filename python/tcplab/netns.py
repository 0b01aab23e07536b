"""Network namespaces for the labs that run the real Linux stack (`tcplab.testbed`, TBIT's real
transport): running a command in one, listing a lab's namespaces by name, removing them with
whatever runs in them, and finding those a killed run left behind.

A lab names its namespaces `<prefix><pid>...`, the pid of the process that made them, so that
`cleanup_stale` can tell a live lab's namespaces from a dead one's. Every command is bounded in
time.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from typing import Callable, List, Optional

__all__ = ["sh", "namespaces", "kill", "cleanup_stale"]


def sh(*args: str, ns: Optional[str] = None, check: bool = True, timeout: float = 20, input: Optional[str] = None,
       error: Callable[[str], Exception] = RuntimeError) -> subprocess.CompletedProcess:
    """Run a command (in namespace `ns` if given); with `check`, a non-zero exit raises `error`
    with the command line and what it printed."""
    cmd = (["ip", "netns", "exec", ns] if ns else []) + [str(a) for a in args]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, input=input)
    if check and r.returncode != 0:
        raise error(f"{' '.join(cmd)}: {r.stderr.strip() or r.stdout.strip()}")
    return r


def namespaces(pattern: "re.Pattern[str]") -> List[str]:
    """The namespaces whose whole name matches `pattern` (its group 1 is the maker's pid)."""
    r = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, timeout=15)
    names = [ln.split()[0] for ln in r.stdout.splitlines() if ln.split()]
    return [n for n in names if pattern.fullmatch(n)]


def kill(ns: str) -> None:
    """Kill every process in namespace `ns`, wait (at most 1 s) for them to go, and delete it
    (which takes its veths and nftables tables with it)."""
    pids = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True, timeout=15).stdout.split()
    for p in pids:
        try:
            os.kill(int(p), signal.SIGKILL)
        except (ProcessLookupError, ValueError):
            pass
    for _ in range(50):
        if not subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True, timeout=15).stdout.split():
            break
        time.sleep(0.02)
    subprocess.run(["ip", "netns", "del", ns], capture_output=True, timeout=15)


def cleanup_stale(pattern: "re.Pattern[str]") -> List[str]:
    """Remove the namespaces matching `pattern` whose maker (the pid in group 1) is gone, with
    whatever runs in them; returns their names."""
    gone = []
    for ns in namespaces(pattern):
        pid = int(pattern.fullmatch(ns).group(1))
        if pid != os.getpid() and os.path.exists(f"/proc/{pid}"):
            continue
        kill(ns)
        gone.append(ns)
    return gone
