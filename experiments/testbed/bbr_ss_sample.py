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
import sys

import tcplab
from tcplab import units
from ss_sample import sample_during, write_tsv  # the shared sampler, beside this file

UNITS = {"": 1, "K": 1e3, "M": 1e6, "G": 1e9}


def rate(text: str, key: str):
    """`ss` prints rates in bits per second with a unit suffix: `pacing_rate 24.9Mbps`."""
    m = re.search(key + r"[ :]([\d.]+)([KMG]?)bps", text)
    return round(float(m.group(1)) * UNITS[m.group(2)] / 8) if m else ""


def sample_kernel(scenario: str, out: str, congctl=None) -> list:
    def bbr_model(text: str):
        m = re.search(r"cwnd:(\d+)", text)
        b = re.search(r"bbr:\(bw:([\d.]+)([KMG]?)bps,mrtt:([\d.]+)(?:,pacing_gain:([\d.]+))?(?:,cwnd_gain:([\d.]+))?", text)
        if not (m and b):
            return None
        bw = round(float(b.group(1)) * UNITS[b.group(2)] / 8)
        return int(m.group(1)), bw, float(b.group(3)), b.group(4) or "", b.group(5) or "", rate(text, "pacing_rate"), rate(text, "delivery_rate")

    samples = sample_during(scenario, out, bbr_model, congctl=congctl)
    write_tsv(os.path.join(out, "ss_bbr.tsv"), samples)
    return samples


def sample_sim(scenario: str, out: str) -> list:
    r = tcplab.run(scenario, series=True)
    t = r.series.tcp
    t = t[t["dir"] == "a2b"]
    t0 = t["time_s"].iloc[0]
    # cwnd in segments of the sender's payload (the MSS less the timestamps option, as `ss` counts).
    snd = tcplab.resolve(scenario)["flows"][0]["tcp"]["sender"]
    seg = int(units.size_bytes(snd["mss"])) - (12 if snd.get("timestamps") else 0)
    rows = [(round(x.time_s - t0, 4), int(x.cwnd) // seg, int(x.bbr_bw), str(x.bbr_mode), int(x.pacing_rate) if x.pacing_rate is not None and str(x.pacing_rate) != "<NA>" else "")
            for x in t.itertuples()]
    write_tsv(os.path.join(out, "sim_bbr.tsv"), rows)
    return rows


def main(scenario: str, out: str, only: str = "both") -> None:
    os.makedirs(out, exist_ok=True)
    if only in ("both", "kernel"):
        print(len(sample_kernel(scenario, out, congctl="bbr")), "kernel samples")
    if only in ("both", "sim"):
        print(len(sample_sim(scenario, out)), "simulator rows")


if __name__ == "__main__":
    main(*sys.argv[1:4])
