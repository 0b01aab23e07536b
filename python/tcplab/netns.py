"""Network namespaces for the labs that run the real Linux stack (`tcplab.testbed`, TBIT's real
transport, the kernel stack of scripted tests): one helper for all of them. `Namespaces` makes a
lab's namespaces, veth pairs (offloads off), addresses, sysctls and processes and removes exactly
what it made; `interrupts` turns SIGINT/SIGTERM into KeyboardInterrupt so that the caller's clean-up
runs; `missing` says why a lab cannot run here. Also: running a command in a namespace, listing a
lab's namespaces by name, removing them with whatever runs in them, and finding those a killed run
left behind.

A lab names its namespaces `<prefix><pid>...`, the pid of the process that made them, so that
`cleanup_stale` can tell a live lab's namespaces from a dead one's. Every command is bounded in
time.
"""

from __future__ import annotations

import ctypes
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from typing import Callable, Dict, List, Optional, Sequence

__all__ = ["sh", "namespaces", "kill", "cleanup_stale", "missing", "interrupts", "Namespaces", "die_with_parent"]


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


def missing(tools: Sequence[str], apt: str, probe: str) -> Optional[str]:
    """Why a lab needing `tools` (installed by `apt-get install -y <apt>`) cannot run here, or
    None: not Linux, not root, a tool missing, or no namespace can be made (tried as `probe`)."""
    if not sys.platform.startswith("linux"):
        return "network namespaces need Linux"
    if os.geteuid() != 0:
        return "network namespaces need root"
    for tool in tools:
        if shutil.which(tool) is None:
            return f"{tool} is not installed (apt-get install -y {apt})"
    r = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True, timeout=15)
    if r.returncode != 0:
        return f"cannot create a network namespace here: {r.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", probe], capture_output=True, timeout=15)
    return None


PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """`preexec_fn` of a lab's helper processes: SIGKILL when the process that started them dies
    (prctl PR_SET_PDEATHSIG, Linux), so that a killed lab leaves no process behind."""
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


class interrupts:
    """While entered (in the main thread; elsewhere it does nothing), SIGINT and SIGTERM raise
    KeyboardInterrupt, so that the `finally` or `__exit__` that takes a lab down runs; the
    previous handlers come back on exit."""

    def __enter__(self) -> "interrupts":
        self.old: Dict[int, object] = {}
        if threading.current_thread() is threading.main_thread():
            def handler(sig, frame):
                raise KeyboardInterrupt(f"signal {sig}")

            for sig in (signal.SIGINT, signal.SIGTERM):
                self.old[sig] = signal.signal(sig, handler)
        return self

    def __exit__(self, *exc) -> bool:
        for sig, h in self.old.items():
            signal.signal(sig, h)
        self.old = {}
        return False


# Offloads off: frames of at most one MSS on the wire (no TSO/GSO super-segments, no GRO
# merging) and checksums filled in, so that captures and raw sockets see what the peer sees.
OFFLOADS_OFF = ("tso", "off", "gso", "off", "gro", "off", "tx", "off", "rx", "off")


class Namespaces:
    """What one lab makes, to be removed together by `close()`: namespaces (loopback up), veth
    pairs between them, addresses, sysctls, and processes started in them. Everything is recorded
    before the next step, so `close` removes exactly what exists, after a failure half-way too.
    Commands that fail raise `error`."""

    def __init__(self, error: Callable[[str], Exception] = RuntimeError):
        self.error = error
        self.made: List[str] = []
        self.procs: List[subprocess.Popen] = []

    def sh(self, *args: str, ns: Optional[str] = None, check: bool = True, timeout: float = 20, input: Optional[str] = None) -> subprocess.CompletedProcess:
        return sh(*args, ns=ns, check=check, timeout=timeout, input=input, error=self.error)

    def add(self, *names: str) -> None:
        """Make namespaces `names`, each with its loopback up."""
        for ns in names:
            self.sh("ip", "netns", "add", ns)
            self.made.append(ns)
            self.sh("ip", "-n", ns, "link", "set", "lo", "up")

    def veth(self, ns_a: str, dev_a: str, ns_b: str, dev_b: str, mac_a: Optional[str] = None) -> None:
        """A veth pair `dev_a` (in `ns_a`, with address `mac_a` if given) — `dev_b` (in `ns_b`),
        both up with offloads off (`OFFLOADS_OFF`)."""
        mac = ["address", mac_a] if mac_a else []
        self.sh("ip", "link", "add", dev_a, "netns", ns_a, *mac, "type", "veth", "peer", "name", dev_b, "netns", ns_b)
        for ns, dev in ((ns_a, dev_a), (ns_b, dev_b)):
            self.sh("ip", "-n", ns, "link", "set", dev, "up")
            self.sh("ethtool", "-K", dev, *OFFLOADS_OFF, ns=ns, check=False)

    def addr(self, ns: str, dev: str, cidr: str) -> None:
        self.sh("ip", "-n", ns, "addr", "add", cidr, "dev", dev)

    def mac(self, ns: str, dev: str) -> str:
        import json

        return json.loads(self.sh("ip", "-n", ns, "-j", "link", "show", dev).stdout)[0]["address"]

    def sysctls(self, ns: str, values: Dict[str, object], prefix: str = "", check: bool = True) -> subprocess.CompletedProcess:
        """Set `values` ({key: value}, each key after `prefix`, e.g. "net.ipv4.") in `ns`, in one
        `sysctl -w` call."""
        return self.sh("sysctl", "-qw", *[f"{prefix}{k}={v}" for k, v in values.items()], ns=ns, check=check)

    def spawn(self, cmd: Sequence[str], **popen) -> subprocess.Popen:
        """Start `cmd` (a list; `ip netns exec NS ...` to run it in a namespace) as a process of
        this lab, in a session of its own (so `close` ends it with its children); pass
        `preexec_fn=die_with_parent` to have it killed when the thread that started it dies."""
        popen.setdefault("start_new_session", True)
        p = subprocess.Popen(list(cmd), **popen)
        self.procs.append(p)
        return p

    @staticmethod
    def _signal(p: subprocess.Popen, sig: int) -> None:
        """Send `sig` to `p`'s session (its process group), or to `p` alone if that is gone."""
        if p.poll() is None:
            try:
                os.killpg(p.pid, sig)
            except (ProcessLookupError, PermissionError):
                p.send_signal(sig)

    @classmethod
    def stop(cls, p: subprocess.Popen, grace: float = 3.0) -> None:
        """End process `p` and its session: SIGTERM, then SIGKILL after `grace` seconds."""
        cls._signal(p, signal.SIGTERM)
        for sig in (signal.SIGKILL, None):
            try:
                p.wait(timeout=grace)
                break
            except subprocess.TimeoutExpired:
                if sig is not None:
                    cls._signal(p, sig)
        for stream in (p.stdin, p.stdout, p.stderr):
            if stream:
                stream.close()

    def close(self) -> None:
        """Remove everything made: the processes, then whatever else runs in the namespaces, then
        the namespaces (their veths and nftables tables go with them). A SIGINT or SIGTERM
        meanwhile is held off, not obeyed half-way; calling it again does nothing."""
        held = {}
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                held[sig] = signal.signal(sig, signal.SIG_IGN)
        try:
            for p in self.procs:  # all asked to end first, then each waited for
                self._signal(p, signal.SIGTERM)
            for p in self.procs:
                self.stop(p)
            self.procs = []
            for ns in reversed(self.made):
                kill(ns)
            self.made = []
        finally:
            for sig, h in held.items():
                signal.signal(sig, h)
