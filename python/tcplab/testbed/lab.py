"""Build a plan on the real Linux stack, run it, capture it, and take everything down again.

One network namespace per end host and one for the delay box, a veth pair from each host to a
box port (`eth0` in the host, `pK` in the box), offloads off, static neighbours (no ARP), the
plan's sysctls and routes, the nftables table, the servers, tcpdump at each data sender, the
clients. Everything is removed afterwards — after a normal run, a failure and SIGINT/SIGTERM —
by `Lab.close()` (the labs' one helper, `netns.Namespaces`): the processes it started, then whatever else runs in its namespaces, then the
namespaces (which takes their veths and nftables tables with them). `cleanup_stale()` removes
what a killed run left behind (`tcplab testbed cleanup`).
"""

from __future__ import annotations

import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Optional

from .. import netns
from . import nft as _nft

PREFIX = "tcplabtb"
PEER = str(Path(__file__).with_name("peer.py"))
#: The kernel counters recorded per host after a run (Tcp: and TcpExt: of /proc/net/snmp, netstat).
KERNEL_COUNTERS = ("RetransSegs", "TCPTimeouts", "TCPFastRetrans", "TCPSlowStartRetrans", "TCPLossProbes", "TCPSynRetrans",
                   "TCPSackRecovery", "TCPRenoRecovery", "DelayedACKs")


class TestbedError(RuntimeError):
    """The real run failed (a tool is missing, a process did not start, a transfer failed or
    did not finish in time). Everything the run made has been removed when it is raised."""


def missing() -> Optional[str]:
    """Why the testbed cannot run here, or None."""
    return netns.missing(("ip", "tcpdump", "nft", "ethtool"), "iproute2 tcpdump nftables ethtool", f"{PREFIX}probe{os.getpid()}")


_RT: Optional[list] = None


def kernel_hz() -> Optional[int]:
    """This kernel's CONFIG_HZ (its timers run on jiffies of 1/HZ s), from /proc/config.gz or
    /boot/config-<release>; None when neither says."""
    import gzip
    import platform

    for path, opener in (("/proc/config.gz", gzip.open), (f"/boot/config-{platform.release()}", open)):
        try:
            with opener(path, "rt") as f:
                for line in f:
                    if line.startswith("CONFIG_HZ="):
                        return int(line.split("=", 1)[1])
        except (OSError, ValueError):
            continue
    return None


#: Real-time priorities (SCHED_FIFO): the delay box above the endpoints, which only must not wait
#: behind other work to write right after the handshake or to read.
RT_BOX, RT_PEER = 50, 40


def rt_prefix(prio: int = RT_BOX) -> list:
    """`chrt -f PRIO` when real-time scheduling is allowed here (it keeps the delay box's reader
    threads, and the endpoints' writes after the handshake, from being woken late on a loaded
    machine), else nothing."""
    global _RT
    if _RT is None:
        ok = shutil.which("chrt") and subprocess.run(["chrt", "-f", "50", "true"], capture_output=True).returncode == 0
        _RT = ["chrt", "-f"] if ok else []
    return _RT + [str(prio)] if _RT else []


def box_timing(stats: Optional[dict], since: Optional[float] = None) -> dict:
    """How far the delay box kept to its schedule in a run, from its statistics (`box-stats.json`,
    the run's `box`): `late_max_ms`, its latest write against the frame's scheduled time, and
    `read_lag_max_ms`, the longest a frame waited to be read. A quiet run stays within about
    0.5 ms and 10 ms; tens of milliseconds are a stall of the whole machine, which moves the real
    side's timing (docs/testbed.md). With `since` (a capture's wall-clock time, e.g. the run's
    first data packet), also when each came relative to it, in seconds (`late_max_at_s`,
    `read_lag_max_at_s`: where in the run the stall fell). None where the statistics lack them."""
    stats = stats or {}

    def ms(key):
        v = (stats.get(key) or {}).get("max")
        return None if v is None else float(v) / 1000.0

    out = {"late_max_ms": ms("late_us"), "read_lag_max_ms": ms("read_lag_us")}
    if since is not None:
        for key, name in (("late_us", "late_max_at_s"), ("read_lag_us", "read_lag_max_at_s")):
            at = (stats.get(key) or {}).get("max_at")
            out[name] = float(at) - since if at else None
    return out


def _sh(*args, check=True, timeout=20, input=None) -> subprocess.CompletedProcess:
    return netns.sh(*args, check=check, timeout=timeout, input=input, error=TestbedError)


#: The testbed's namespace names: tcplabtb<pid>-<stamp>-<host> (and -box).
_NAME = re.compile(PREFIX + r"(\d+)-.+")


def namespaces() -> list:
    """The namespaces of testbed runs (by their names), whatever process made them."""
    return netns.namespaces(_NAME)


def cleanup_stale() -> list:
    """Remove the namespaces (and their processes) of testbed runs whose process is gone."""
    return netns.cleanup_stale(_NAME)


class Lab:
    def __init__(self, plan, workdir: Path):
        self.plan = plan
        self.dir = Path(workdir)
        self.id = f"{PREFIX}{os.getpid()}-{int(time.time() * 1000) % 100000}"
        self.box = f"{self.id}-box"
        self.ns = {h: f"{self.id}-{h}" for h in plan.hosts}
        #: What the run makes (namespaces, veths, processes), removed by `close` (`netns.Namespaces`).
        self.lab = netns.Namespaces(error=TestbedError)
        self.names: dict = {}  # pid -> what the process is ("box", "server h1", "tcpdump h2", ...)

    # -- building --------------------------------------------------------------------------
    def nsx(self, ns, *args, **kw):
        return _sh("ip", "netns", "exec", ns, *args, **kw)

    def build(self) -> None:
        p = self.plan
        self.lab.add(self.box, *self.ns.values())
        self.lab.sysctls(self.box, {"net.ipv6.conf.all.disable_ipv6": 1, "net.ipv6.conf.default.disable_ipv6": 1})
        for k, h in enumerate(p.hosts):
            ns = self.ns[h]
            # Offloads off (in `veth`): frames of at most one MSS, checksums filled in.
            self.lab.veth(ns, "eth0", self.box, f"p{k}", mac_a=p.mac(h))
            for key, v in p.sysctls[h].items():
                self.nsx(ns, "sysctl", "-qw", f"{key}={v}")
            # No cached RTT, ssthresh or reordering from an earlier connection (tcp_metrics of the
            # destination cache, tcp_init_metrics): every run starts from the kernel's defaults.
            self.nsx(ns, "ip", "tcp_metrics", "flush", "all")
            self.lab.addr(ns, "eth0", f"{p.ip(h)}/24")
            for o in p.hosts:
                if o != h:
                    self.nsx(ns, "ip", "neigh", "replace", p.ip(o), "lladdr", p.mac(o), "dev", "eth0", "nud", "permanent")
        for (a, b), opts in p.routes.items():
            args = []
            for key, v in opts.items():
                args += [key, str(v)]
            self.nsx(self.ns[a], "ip", "route", "replace", f"{p.ip(b)}/32", "dev", "eth0", *args)
        if p.shaper == "tbf":
            # The rate and queue of the direction into each host, as a tbf on the box's port to
            # it (tbf counts Ethernet frames, 14 bytes more than the IP packets the simulator
            # counts); burst of one full frame.
            for (a, b), path in p.paths.items():
                l = p.links[path[-1]]
                limit = (l.limit_pkts if l.limit_pkts is not None else 1000) * 1514 + 1514
                if l.limit_bytes is not None:
                    limit = min(limit, l.limit_bytes + 1514)
                self.nsx(self.box, "tc", "qdisc", "replace", "dev", f"p{p.hosts.index(b)}", "root", "tbf", "rate", f"{int(l.rate_bps)}bit",
                         "burst", "1600", "limit", str(limit))
        rules = _nft.ruleset(p)
        if rules:
            (self.dir / "rules.nft").write_text(rules)
            self.nsx(self.box, "nft", "-f", "-", input=rules)

    def start_box(self) -> None:
        p = self.plan
        tbf = p.shaper == "tbf"
        links = [{"rate_bps": 0 if tbf else int(round(l.rate_bps)), "delay_ns": int(round(l.delay_s * 1e9)),
                  "limit_pkts": None if tbf else l.limit_pkts, "limit_bytes": None if tbf else l.limit_bytes,
                  "mark_pkts": l.mark_pkts, "mark_bytes": l.mark_bytes} for l in p.links]
        routes = [{"in": p.hosts.index(a), "dst": p.mac(b), "path": path, "out": p.hosts.index(b)} for (a, b), path in p.paths.items()]
        drops = [{"src": p.ip(d["frm"]), "ports": d["ports"], "port_field": d["port_field"], "offsets": d["offsets"]} for d in p.seq_drops]
        spec = {"devices": [f"p{k}" for k in range(len(p.hosts))], "links": links, "routes": routes, "drops": drops,
                "stats": str(self.dir / "box-stats.json")}
        (self.dir / "box.json").write_text(json.dumps(spec))
        cmd = ["ip", "netns", "exec", self.box] + rt_prefix()
        self._start("box", cmd + [sys.executable, "-m", "tcplab.testbed.boxmain", str(self.dir / "box.json")], ready=b"ready")

    def _start(self, name, cmd, ready: Optional[bytes] = None, stderr_ready: Optional[bytes] = None, timeout=15.0):
        pr = self.lab.spawn(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.names[pr.pid] = name
        want, stream = (ready, pr.stdout) if ready else (stderr_ready, pr.stderr)
        if want is None:
            return pr
        buf, deadline = b"", time.monotonic() + timeout
        while want not in buf:
            left = deadline - time.monotonic()
            if pr.poll() is not None or left <= 0:
                err = pr.stderr.read().decode(errors="replace") if pr.poll() is not None else ""
                raise TestbedError(f"{name} did not start: {(buf.decode(errors='replace') + err).strip() or 'timed out'}")
            r, _, _ = select.select([stream], [], [], min(left, 0.5))
            if r:
                chunk = os.read(stream.fileno(), 4096)
                buf += chunk
        return pr

    def start_servers(self) -> None:
        for h, ports in self.plan.servers.items():
            if ports:
                self._start(f"server {h}", ["ip", "netns", "exec", self.ns[h]] + rt_prefix(RT_PEER) + [sys.executable, PEER, "server"] + [str(x) for x in sorted(ports)], ready=b"ready")

    def start_captures(self) -> dict:
        caps = {}
        for h in self.plan.capture_hosts:
            path = self.dir / f"real-{h}.pcap"
            self._start(f"tcpdump {h}", ["ip", "netns", "exec", self.ns[h], "tcpdump", "-i", "eth0", "-w", str(path), "--immediate-mode", "-U",
                                         "-s", "128", "tcp"], stderr_ready=b"listening on")
            caps[h] = path
        return caps

    def run_clients(self, timeout: float) -> list:
        t0 = time.time() + 0.5
        pending = []
        for h, jobs in self.plan.jobs.items():
            if not jobs:
                continue
            plan_path = self.dir / f"client-{h}.json"
            plan_path.write_text(json.dumps({"t0": t0, "timeout": timeout, "jobs": jobs}))
            out = self.dir / f"client-{h}.out.json"
            pr = self._start(f"client {h}", ["ip", "netns", "exec", self.ns[h]] + rt_prefix(RT_PEER) + [sys.executable, PEER, "client", str(plan_path), str(out)])
            pending.append((h, pr, out))
        deadline = time.monotonic() + self.plan.horizon_s + timeout + 1.0
        results = []
        for h, pr, out in pending:
            try:
                pr.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                raise TestbedError(f"the transfers of host {h} did not finish within {timeout:g} s") from None
            if not out.exists():
                raise TestbedError(f"the client on {h} failed: {pr.stderr.read().decode(errors='replace').strip()}")
            res = json.loads(out.read_text())
            if res["errors"]:
                raise TestbedError(f"a transfer from {h} failed: {'; '.join(res['errors'])}")
            for r in res["conns"]:
                r["host"] = h
                r["t_rel_start"] = r["t_start"] - t0
            results += res["conns"]
        return results

    def stop_captures(self) -> None:
        time.sleep(0.3)  # the last ACKs and FINs
        dumps = [pr for pr in self.lab.procs if self.names.get(pr.pid, "").startswith("tcpdump")]
        for pr in dumps:
            if pr.poll() is None:
                pr.send_signal(signal.SIGINT)
        for pr in dumps:
            try:
                pr.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pr.kill()

    def counters(self) -> dict:
        """The kernel's own TCP counters of each host (its namespace's /proc/net/snmp and
        netstat): retransmissions by kind, as the stack itself counted them."""
        out = {}
        for h, ns in self.ns.items():
            r = self.nsx(ns, "cat", "/proc/net/snmp", "/proc/net/netstat", check=False)
            lines = r.stdout.splitlines()
            vals = {}
            for head, body in zip(lines[::2], lines[1::2]):
                k, v = head.split(), body.split()
                if k and v and k[0] == v[0] and k[0] in ("Tcp:", "TcpExt:"):
                    vals.update({name: int(x) for name, x in zip(k[1:], v[1:]) if x.lstrip("-").isdigit()})
            out[h] = {k: vals.get(k) for k in KERNEL_COUNTERS}
        return out

    # -- taking down -----------------------------------------------------------------------
    def close(self) -> None:
        """Take everything down (`netns.Namespaces.close`); a second Ctrl-C meanwhile is
        ignored, not obeyed half-way."""
        self.lab.close()


def run_real(plan, workdir, timeout: float = 60.0, _fail_after_setup: bool = False) -> dict:
    """Run `plan` on the real stack; captures and client records go to `workdir`. Returns
    {"captures": {host: path}, "conns": [...], "box": {...}}. Everything made is removed before
    it returns or raises, also on SIGINT and SIGTERM."""
    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    why = missing()
    if why:
        raise TestbedError(why)
    cleanup_stale()  # what killed runs left behind
    lab = Lab(plan, workdir)
    with netns.interrupts():
        try:
            lab.build()
            lab.start_box()
            lab.start_servers()
            caps = lab.start_captures()
            if _fail_after_setup:
                raise TestbedError("failure requested after setup (a test of the clean-up)")
            conns = lab.run_clients(timeout)
            lab.stop_captures()
            counters = lab.counters()
            default_cc = lab.nsx(lab.ns[plan.hosts[0]], "sysctl", "-n", "net.ipv4.tcp_congestion_control", check=False).stdout.strip()
            stats = workdir / "box-stats.json"
            time.sleep(0.0)
            return {"captures": {h: str(p) for h, p in caps.items()}, "conns": conns, "namespace_prefix": lab.id, "kernel": counters,
                    "default_congctl": default_cc,
                    "box": json.loads(stats.read_text()) if stats.exists() else None}
        finally:
            lab.close()
