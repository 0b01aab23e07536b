"""The kernel's TCP state over time: `ss -tin` in the data sender's namespace about every 10 ms
while a testbed run goes (the kernel's `tcp_info`, read through inet_diag), and the namespace's
HyStart counters from /proc/net/netstat (TCPHystartTrainDetect, TCPHystartTrainCwnd, ...).

One shell loop runs inside the namespace for the whole run (one `ip netns exec`, not one a
sample), stamping each sample with the wall clock (`date +%s.%N`), the clock tcpdump stamps the
captures with, so a sample can be placed against the first data packet of the capture.
"""

from __future__ import annotations

import os
import re
import subprocess
import threading
import time
from typing import Callable, Optional

#: Seconds between the end of one `ss` and the start of the next (a sample then comes about every
#: 10 ms: `ss` and `date` take 2–4 ms on the machines here, more when they are busy).
PERIOD_S = 0.007
#: Read /proc/net/netstat every this many samples (its counters change once, at HyStart's exit).
NETSTAT_EVERY = 10
#: How long to wait for the sender's namespace to appear, and the longest a sampler runs.
FIND_NS_S = 30.0
MAX_RUN_S = 900.0

_MARK = "@@t "
_NETSTAT = "@@netstat"


def cwnd_ssthresh_rtt(text: str):
    """(cwnd, ssthresh or None, rtt ms or None) of the first connection in `ss -tin` output, or
    None when none is listed. ss omits ssthresh while it is infinite (slow start, no loss yet)."""
    m = re.search(r"\bcwnd:(\d+)", text)
    if not m:
        return None
    ss = re.search(r"(?<![\w])ssthresh:(\d+)", text)  # not rcv_ssthresh
    rtt = re.search(r"\brtt:([\d.]+)/", text)
    return int(m.group(1)), int(ss.group(1)) if ss else None, float(rtt.group(1)) if rtt else None


def parse_netstat(text: str) -> dict:
    """The HyStart counters of /proc/net/netstat (pairs of a names line and a values line)."""
    out = {}
    lines = [ln for ln in text.splitlines() if ln.strip()]
    for names, values in zip(lines[::2], lines[1::2]):
        for k, v in zip(names.split(), values.split()):
            if "Hystart" in k:
                try:
                    out[k] = int(v)
                except ValueError:
                    pass
    return out


class Sampler:
    """Samples the sender's connection to `port` in the namespace of this process's testbed run
    whose name ends in `-<host>`. `rows`: (wall-clock seconds, *parse(ss text)); `hystart`: the
    last counters read; `error`: why sampling did not start, if it did not."""

    def __init__(self, parse: Callable = cwnd_ssthresh_rtt, host: str = "sender", port: int = 5001,
                 period_s: float = PERIOD_S, on_row: Optional[Callable] = None):
        self.parse, self.host, self.port, self.period_s, self.on_row = parse, host, port, period_s, on_row
        self.rows: list = []
        self.hystart: dict = {}
        self.ns: Optional[str] = None
        self.error: Optional[str] = None
        self._stop = threading.Event()
        self._proc: Optional[subprocess.Popen] = None
        self._th = threading.Thread(target=self._run, daemon=True)

    def start(self) -> "Sampler":
        self._th.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        p = self._proc
        if p is not None and p.poll() is None:
            p.terminate()
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        self._th.join(timeout=10)

    def _find_ns(self) -> Optional[str]:
        pid, deadline = str(os.getpid()), time.monotonic() + FIND_NS_S
        while not self._stop.is_set() and time.monotonic() < deadline:
            names = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.split()
            ns = next((n for n in names if n.startswith(f"tcplabtb{pid}-") and n.endswith(f"-{self.host}")), None)
            if ns:
                return ns
            time.sleep(0.005)
        return None

    def _run(self) -> None:
        ns = self._find_ns()
        if ns is None:
            self.error = f"no namespace of host {self.host!r} appeared within {FIND_NS_S:g} s"
            return
        self.ns = ns
        # Every connection to the sink's port, whatever its state: the client shuts its write
        # side down as soon as the kernel holds the whole transfer, so the sender spends most of
        # the transfer in FIN-WAIT-1, not ESTABLISHED.
        loop = (f"i=0; while :; do echo '{_MARK}'$(date +%s.%N); ss -tinH dport = :{self.port}; "
                f"i=$((i+1)); if [ $((i % {NETSTAT_EVERY})) -eq 1 ]; then echo '{_NETSTAT}'; cat /proc/net/netstat; echo '{_NETSTAT}'; fi; "
                f"sleep {self.period_s}; done")
        self._proc = subprocess.Popen(["ip", "netns", "exec", ns, "sh", "-c", loop], stdout=subprocess.PIPE,
                                      stderr=subprocess.DEVNULL, text=True, start_new_session=True)
        t, buf, netstat, in_netstat = None, [], [], False
        deadline = time.monotonic() + MAX_RUN_S

        def flush():
            if t is None:
                return
            row = self.parse("\n".join(buf))
            if row is not None:
                self.rows.append((t, *row))
                if self.on_row is not None:
                    self.on_row(ns, self.rows)

        for line in self._proc.stdout:
            if time.monotonic() > deadline:
                break
            if line.startswith(_NETSTAT):
                if in_netstat:
                    got = parse_netstat("".join(netstat))
                    if got:
                        self.hystart = got
                    netstat = []
                in_netstat = not in_netstat
                continue
            if in_netstat:
                netstat.append(line)
                continue
            if line.startswith(_MARK):
                flush()
                try:
                    t = float(line[len(_MARK):].strip())
                except ValueError:
                    t = None
                buf = []
            else:
                buf.append(line)
        flush()
        # The loop ends when the namespace goes (the run's clean-up kills what runs in it).


def write_rows(path, rows) -> None:
    """Sampled rows as tab-separated text, one a line, a missing value (None) as an empty field:
    the experiments' ss.tsv."""
    with open(path, "w") as f:
        for r in rows:
            f.write("\t".join("" if v is None else str(v) for v in r) + "\n")


def write_run(d, rows, scenario: dict, **meta) -> None:
    """A sampled testbed run's own files beside its captures: the samples (`ss.tsv`) and the
    scenario with what the experiment needs to analyse it again (`scenario.json`)."""
    import json

    write_rows(os.path.join(d, "ss.tsv"), rows)
    with open(os.path.join(d, "scenario.json"), "w") as f:
        f.write(json.dumps({"scenario": scenario, **meta}))


def sample_during(scenario, out, parse: Callable = cwnd_ssthresh_rtt, congctl=None, extra=None, **run_kw) -> list:
    """Run `scenario` on the testbed (its results in `out`) while sampling `ss -tin` of the
    sender's connection to port 5001; each row is (seconds since the first sample, *parse(text)).
    `extra(ns, rows)`, if given, is called after each row. The sampler of
    experiments/testbed/ss_sample.py."""
    rows, _ = sample_run(scenario, out, parse=parse, congctl=congctl, on_row=extra, **run_kw)
    t0 = rows[0][0] if rows else 0.0
    return [(round(r[0] - t0, 4), *r[1:]) for r in rows]


def sample_run(scenario, out, parse: Callable = cwnd_ssthresh_rtt, congctl=None, on_row=None, **run_kw):
    """`testbed.run(scenario, out, ...)` with a `Sampler` going: (rows with wall-clock times, the
    sampler, which holds the HyStart counters and the run's record as `record`)."""
    from . import run

    s = Sampler(parse, on_row=on_row).start()
    try:
        s.record = run(scenario, out, **({"congctl": congctl} if congctl else {}), **run_kw)
    finally:
        s.stop()
    return s.rows, s
