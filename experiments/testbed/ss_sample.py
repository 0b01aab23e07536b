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


def main(scenario: str, out: str) -> None:
    samples, stop, hystart = [], threading.Event(), {}

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
            if m:
                t0 = now if t0 is None else t0
                ss = re.search(r"ssthresh:(\d+)", r.stdout)
                rtt = re.search(r"rtt:([\d.]+)/", r.stdout)
                samples.append((round(now - t0, 4), int(m.group(1)), int(ss.group(1)) if ss else "", float(rtt.group(1)) if rtt else ""))
                if len(samples) % 10 == 1:
                    lines = subprocess.run(["ip", "netns", "exec", ns, "cat", "/proc/net/netstat"], capture_output=True, text=True).stdout.splitlines()
                    for names_, values in zip(lines[::2], lines[1::2]):
                        hystart.update({k: int(v) for k, v in zip(names_.split(), values.split()) if "Hystart" in k})
            time.sleep(PERIOD_S)

    th = threading.Thread(target=sampler, daemon=True)
    th.start()
    try:
        testbed.run(scenario, out)
    finally:
        stop.set()
        th.join()
    with open(os.path.join(out, "ss.tsv"), "w") as f:
        for s in samples:
            f.write("\t".join(map(str, s)) + "\n")
    print(len(samples), "samples;", hystart)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
