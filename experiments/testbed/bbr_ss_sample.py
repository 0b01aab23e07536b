"""Run a BBR scenario on the testbed (`tcplab.testbed.run`) while sampling the sender's kernel
TCP state with `ss -tin` in the sender's namespace every ~10 ms: BBR's model
(`bbr:(bw:...,mrtt:...,pacing_gain:...,cwnd_gain:...)`, from `bbr_get_info`), `pacing_rate`,
`delivery_rate` and cwnd. Writes OUT/ss_bbr.tsv (seconds since the first sample, cwnd, bw bytes/s,
mrtt ms, pacing_gain, cwnd_gain, pacing_rate bytes/s, delivery_rate bytes/s) and runs the
simulator on the same scenario, writing OUT/sim_bbr.tsv (seconds since the connection opened,
cwnd packets, bw bytes/s, mode, pacing_rate bytes/s); prints both summaries. Root, like the testbed.

    sudo python3 experiments/testbed/bbr_ss_sample.py experiments/testbed/bbr_bulk.toml out/bbr [kernel|sim]
"""

import os
import re
import subprocess
import sys
import threading
import time

import tcplab
from tcplab import testbed

PERIOD_S = 0.008
UNITS = {"": 1, "K": 1e3, "M": 1e6, "G": 1e9}


def rate(text: str, key: str):
    """`ss` prints rates in bits per second with a unit suffix: `pacing_rate 24.9Mbps`."""
    m = re.search(key + r"[ :]([\d.]+)([KMG]?)bps", text)
    return round(float(m.group(1)) * UNITS[m.group(2)] / 8) if m else ""


def sample_kernel(scenario: str, out: str, congctl=None) -> list:
    samples, stop = [], threading.Event()

    def sampler():
        pid, ns, t0 = str(os.getpid()), None, None
        deadline = time.monotonic() + 600
        while not stop.is_set() and time.monotonic() < deadline:
            if ns is None:
                names = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.split()
                ns = next((n for n in names if pid in n and n.endswith("-sender")), None)
                time.sleep(0.005)
                continue
            r = subprocess.run(["ip", "netns", "exec", ns, "ss", "-tin", "state", "established", "dport", "=", ":5001"],
                               capture_output=True, text=True)
            now = time.monotonic()
            m = re.search(r"cwnd:(\d+)", r.stdout)
            b = re.search(r"bbr:\(bw:([\d.]+)([KMG]?)bps,mrtt:([\d.]+)(?:,pacing_gain:([\d.]+))?(?:,cwnd_gain:([\d.]+))?", r.stdout)
            if m and b:
                t0 = now if t0 is None else t0
                bw = round(float(b.group(1)) * UNITS[b.group(2)] / 8)
                samples.append((round(now - t0, 4), int(m.group(1)), bw, float(b.group(3)), b.group(4) or "", b.group(5) or "",
                                rate(r.stdout, "pacing_rate"), rate(r.stdout, "delivery_rate")))
            time.sleep(PERIOD_S)

    th = threading.Thread(target=sampler, daemon=True)
    th.start()
    try:
        testbed.run(scenario, out, congctl=congctl)
    finally:
        stop.set()
        th.join()
    with open(os.path.join(out, "ss_bbr.tsv"), "w") as f:
        for s in samples:
            f.write("\t".join(map(str, s)) + "\n")
    return samples


def sample_sim(scenario: str, out: str) -> list:
    r = tcplab.run(scenario, series=True)
    t = r.series.tcp
    t = t[t["dir"] == "a2b"]
    t0 = t["time_s"].iloc[0]
    rows = [(round(x.time_s - t0, 4), int(x.cwnd) // 1460, int(x.bbr_bw), str(x.bbr_mode), int(x.pacing_rate) if x.pacing_rate is not None and str(x.pacing_rate) != "<NA>" else "")
            for x in t.itertuples()]
    with open(os.path.join(out, "sim_bbr.tsv"), "w") as f:
        for s in rows:
            f.write("\t".join(map(str, s)) + "\n")
    return rows


def main(scenario: str, out: str, only: str = "both") -> None:
    os.makedirs(out, exist_ok=True)
    if only in ("both", "kernel"):
        print(len(sample_kernel(scenario, out, congctl="bbr")), "kernel samples")
    if only in ("both", "sim"):
        print(len(sample_sim(scenario, out)), "simulator rows")


if __name__ == "__main__":
    main(*sys.argv[1:4])
