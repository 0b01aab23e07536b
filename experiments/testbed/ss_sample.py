"""Run a scenario on the testbed (`tcplab.testbed.run`) while sampling the sender's kernel TCP state:
`ss -tin` (cwnd, ssthresh, rtt) in the sender's namespace about every 10 ms, and the namespace's
HyStart counters (/proc/net/netstat: TCPHystartTrainDetect, ...). Writes OUT/ss.tsv (seconds since the
first sample, cwnd, ssthresh, rtt in ms) and prints the counters. Root, like the testbed. The sampler
itself is `tcplab.testbed.sssample` (also used by `tcplab testbed experiments --only cwnd`).

    sudo python3 experiments/testbed/ss_sample.py experiments/testbed/cubic_hystart.toml out/
"""

import os
import sys

from tcplab.testbed.sssample import cwnd_ssthresh_rtt, sample_during, sample_run  # noqa: F401


def write_tsv(path: str, rows: list) -> None:
    with open(path, "w") as f:
        for s in rows:
            f.write("\t".join("" if v is None else str(v) for v in s) + "\n")


def main(scenario: str, out: str) -> None:
    rows, sampler = sample_run(scenario, out, cwnd_ssthresh_rtt)
    t0 = rows[0][0] if rows else 0.0
    write_tsv(os.path.join(out, "ss.tsv"), [(round(r[0] - t0, 4), *r[1:]) for r in rows])
    print(len(rows), "samples;", sampler.hystart)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
