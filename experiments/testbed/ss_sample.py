"""Run a scenario on the testbed (`tcplab.testbed.run`) while sampling the sender's kernel TCP state:
`ss -tin` (cwnd, ssthresh, rtt) in the sender's namespace every ~10 ms, and the namespace's HyStart
counters (/proc/net/netstat: TCPHystartTrainDetect, ...). Writes OUT/ss.tsv (seconds since the
first sample, cwnd, ssthresh, rtt in ms) and prints the counters. Root, like the testbed.

    sudo python3 experiments/testbed/ss_sample.py experiments/testbed/cubic_hystart.toml out/
"""

import os
import re
import subprocess
import sys
import threading
import time

from tcplab import testbed

PERIOD_S = 0.008


def sample_during(scenario: str, out: str, parse, congctl=None, extra=None) -> list:
    """Run SCENARIO on the testbed (its results in OUT) while sampling `ss -tin` of the sender's
    connection to port 5001 in the sender's namespace every PERIOD_S: `parse(text)` turns one
    sample into a tuple of values, or None when the connection is not there (yet); each row is
    (seconds since the first sample, *values). `extra(ns, rows)`, if given, is called after each
    row to read something else in the namespace. The sampler used by bbr_ss_sample.py too."""
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
            r = subprocess.run(["ip", "netns", "exec", ns, "ss", "-tin", "state", "connected", "dport", "=", ":5001"],
                               capture_output=True, text=True)
            now = time.monotonic()
            row = parse(r.stdout)
            if row is not None:
                t0 = now if t0 is None else t0
                samples.append((round(now - t0, 4), *row))
                if extra is not None:
                    extra(ns, samples)
            time.sleep(PERIOD_S)

    th = threading.Thread(target=sampler, daemon=True)
    th.start()
    try:
        testbed.run(scenario, out, **({"congctl": congctl} if congctl else {}))
    finally:
        stop.set()
        th.join()
    return samples


def write_tsv(path: str, rows: list) -> None:
    with open(path, "w") as f:
        for s in rows:
            f.write("\t".join(map(str, s)) + "\n")


def main(scenario: str, out: str) -> None:
    hystart = {}

    def cwnd_ssthresh_rtt(text: str):
        m = re.search(r"cwnd:(\d+)", text)
        if not m:
            return None
        ss = re.search(r"(?<![\w])ssthresh:(\d+)", text)  # not rcv_ssthresh: ss omits ssthresh while it is infinite
        rtt = re.search(r"rtt:([\d.]+)/", text)
        return int(m.group(1)), int(ss.group(1)) if ss else "", float(rtt.group(1)) if rtt else ""

    def hystart_counters(ns: str, rows: list) -> None:
        if len(rows) % 10 == 1:
            lines = subprocess.run(["ip", "netns", "exec", ns, "cat", "/proc/net/netstat"], capture_output=True, text=True).stdout.splitlines()
            for names_, values in zip(lines[::2], lines[1::2]):
                hystart.update({k: int(v) for k, v in zip(names_.split(), values.split()) if "Hystart" in k})

    samples = sample_during(scenario, out, cwnd_ssthresh_rtt, extra=hystart_counters)
    write_tsv(os.path.join(out, "ss.tsv"), samples)
    print(len(samples), "samples;", hystart)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
