"""TBIT against the real Linux stack: kernel configurations that change TBIT's answers, what
each should give, and a runner that probes them in a `real.Lab` (docs/tbit.md, "Real Linux").

    tcplab tbit --lab [--quick] [--json]       (root; or python -m tcplab.tbit.linux)
    tcplab tbit --lab --initcwnd 6 [--tests icw]  (one configuration: the route's initcwnd 6)

What each configuration should give is read from the kernel's documentation of the knob
(Documentation/networking/ip-sysctl.rst; ip-route(8) for initcwnd and congctl) and from how the
kernel's TCP treats a peer without SACK (its duplicate ACKs count as "sacked_out", which frees
one segment of window each: Limited Transmit's effect, RFC 3042).
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass, field

from .probe import run_suite


@dataclass(frozen=True)
class Config:
    name: str
    initcwnd: int | None = None
    congctl: str | None = None
    sysctls: dict = field(default_factory=dict)
    #: test -> what the configuration should give (a timer test: the intervals, formatted).
    expect: dict = field(default_factory=dict)
    tests: tuple = ()
    #: Timeouts the timer tests read.
    timer_intervals: int = 3
    #: The page requested (the lab's server: `/paced/N` caps the pacing rate at N bytes/s).
    path: str = "/"


# The kernel's defaults here: initcwnd 10 (RFC 6928), cubic, tcp_sack 1, tcp_early_retrans 3
# (TLP on), tcp_recovery 1 (RACK), tcp_syn_linear_timeouts 4, tcp_rto_min 200 ms.
# LT, ABC and L have no knob: what TBIT reads for them is a finding (docs/tbit.md), not a check.
DEFAULT_EXPECT = {
    "sack_advertised": "yes", "icw": "10", "rto_data": "0.21 0.42 0.83", "sack_used": "yes", "lt": None, "abc": None,
    "abc_l": None, "er": "yes", "cc": "SACK", "rto_syn": "1 1 1", "tlp": "yes", "rack": "RACK", "cc_beta": None, "ecn": "yes, data ECT(0)",
}  # fmt: skip

CONFIGS = [
    Config("defaults", expect=DEFAULT_EXPECT, tests=tuple(DEFAULT_EXPECT)),
    Config("initcwnd 1", initcwnd=1, expect={"icw": "1"}, tests=("icw", "lt", "abc", "abc_l")),
    Config("initcwnd 2", initcwnd=2, expect={"icw": "2"}, tests=("icw", "lt", "abc", "abc_l")),
    Config("initcwnd 3", initcwnd=3, expect={"icw": "3"}, tests=("icw",)),
    Config("initcwnd 4", initcwnd=4, expect={"icw": "4"}, tests=("icw", "lt", "abc", "abc_l")),
    Config("initcwnd 10", initcwnd=10, expect={"icw": "10"}, tests=("icw",)),
    # Without SACK: no TLP (it needs SACK, `tcp_schedule_loss_probe`), no RACK (the kernel counts
    # duplicate ACKs of a non-SACK peer, `tcp_newreno_mark_lost`).
    Config("tcp_sack 0", sysctls={"tcp_sack": 0},
           expect={"sack_advertised": "no", "sack_used": "n/a: SACK not advertised", "er": "no", "cc": "NewReno", "tlp": "no", "rack": "dupthresh"},
           tests=("sack_advertised", "sack_used", "er", "cc", "tlp", "rack")),  # fmt: skip
    # tcp_early_retrans: 0 turns the tail-loss probe off (3 and 4: on); RACK, not TLP, makes
    # the early retransmission, so ER stays.
    Config("tcp_early_retrans 0", sysctls={"tcp_early_retrans": 0}, expect={"er": "yes", "tlp": "no", "rack": "RACK"}, tests=("er", "tlp", "rack")),
    # tcp_recovery's bit 0x1 selected RACK over RFC 6675 until the RFC 3517/6675 code was removed
    # (net-next, June 2025: "tcp: remove obsolete and unused RFC3517/RFC6675 loss recovery
    # code"); since then ip-sysctl.rst says "setting this bit to 0 has no effect, since RACK is
    # the only supported loss detection algorithm". So RACK, and with it ER, stays.
    Config("tcp_recovery 0", sysctls={"tcp_recovery": 0}, expect={"er": "yes", "sack_used": "yes", "tlp": "yes", "rack": "RACK"},
           tests=("sack_used", "er", "tlp", "rack")),  # fmt: skip
    Config("tcp_recovery 0, tcp_early_retrans 0", sysctls={"tcp_recovery": 0, "tcp_early_retrans": 0}, expect={"er": "yes", "tlp": "no", "rack": "RACK"},
           tests=("er", "tlp", "rack")),  # fmt: skip
    # The slow start and the loss recovery the 2004 tests read are the same code for reno and
    # cubic; HyStart (cubic's `hystart_update`, on by default) and the window after a loss are not: reno halves it (`tcp_reno_ssthresh`), cubic keeps
    # 717/1024 (`cubictcp_recalc_ssthresh`), BBR v1 restores it after recovery
    # (`bbr_set_cwnd_to_recover_or_restore`). TLP and RACK do not depend on the congestion control.
    Config("congctl reno", congctl="reno", expect={"icw": "10", "sack_used": "yes", "cc": "SACK", "cc_beta": "Reno", "tlp": "yes", "rack": "RACK", "pacing": "no",
                                                   "hystart": "no"},
           tests=("icw", "abc", "abc_l", "cc", "cc_beta", "tlp", "rack", "pacing", "hystart")),  # fmt: skip
    Config("congctl cubic", congctl="cubic", expect={"icw": "10", "sack_used": "yes", "cc": "SACK", "cc_beta": "CUBIC", "tlp": "yes", "rack": "RACK", "pacing": "no",
                                                     "hystart": "yes"},
           tests=("icw", "abc", "abc_l", "cc", "cc_beta", "tlp", "rack", "pacing", "hystart")),  # fmt: skip
    # Pacing: this kernel has no fq qdisc; only BBR paces, in TCP itself (SK_PACING_NEEDED).
    # BBR sets its pacing rate from the delivery rate it measures (`bbr_update_bw`), which the
    # prober's bursts of ACKs make far above what the veth carries: no gaps show (docs/tbit.md).
    Config("congctl bbr", congctl="bbr", expect={"cc_beta": "no reduction", "tlp": "yes", "rack": "RACK"},
           tests=("cc_beta", "tlp", "rack", "pacing", "hystart")),  # fmt: skip
    # The server application caps its pacing rate (SO_MAX_PACING_RATE, 400 kB/s: about one
    # 180-byte frame every 0.45 ms): TCP paces itself (`tcp_needs_internal_pacing`).
    Config("SO_MAX_PACING_RATE 400 kB/s", congctl="cubic", expect={"pacing": "yes"}, tests=("pacing",), path="/paced/400000"),
    # tcp_ecn (ip-sysctl.rst): 0 never ECN, 1 asks for it and accepts it, 2 (default) accepts it
    # when asked; after negotiation data goes out ECT(0) (`INET_ECN_xmit`, RFC 3168 §6.1.1).
    Config("tcp_ecn 0", sysctls={"tcp_ecn": 0}, expect={"ecn": "no"}, tests=("ecn",)),
    Config("tcp_ecn 1", sysctls={"tcp_ecn": 1}, expect={"ecn": "yes, data ECT(0)"}, tests=("ecn",)),
    Config("tcp_ecn 2", sysctls={"tcp_ecn": 2}, expect={"ecn": "yes, data ECT(0)"}, tests=("ecn",)),
    # tcp_syn_linear_timeouts: that many SYN retransmissions at the initial RTO (1 s), then
    # exponential backoff; 0: exponential from the start (RFC 6298 §5.5). The first interval
    # is the initial RTO itself, then come the linear ones.
    Config("tcp_syn_linear_timeouts 0", sysctls={"tcp_syn_linear_timeouts": 0}, expect={"rto_syn": "1 2 4"}, tests=("rto_syn",)),
    Config("tcp_syn_linear_timeouts 2", sysctls={"tcp_syn_linear_timeouts": 2}, expect={"rto_syn": "1 1 1 2"}, tests=("rto_syn",), timer_intervals=4),
    # tcp_syn_retries: "number of times initial SYNs for an active TCP connection attempt will
    # be retransmitted"; the search stops at 5 timeouts.
    Config("tcp_syn_retries 2, linear 0", sysctls={"tcp_syn_retries": 2, "tcp_syn_linear_timeouts": 0}, expect={"rto_syn": "1 2"}, tests=("rto_syn",), timer_intervals=5),
    Config("tcp_syn_retries 2", sysctls={"tcp_syn_retries": 2}, expect={"rto_syn": "1 1"}, tests=("rto_syn",), timer_intervals=5),
]

#: The sysctls any configuration may change, with the defaults restored between configurations.
RESET = {"tcp_sack": 1, "tcp_early_retrans": 3, "tcp_recovery": 1, "tcp_syn_linear_timeouts": 4, "tcp_syn_retries": 6, "tcp_ecn": 2}


def probe_config(lab, c: Config, runs: int = 5, syn_runs: int = 2, tests=None) -> list[dict]:
    """Configure the lab's server kernel as `c` says and run its tests; rows with `configured`
    (what the configuration should give) and `match`."""
    lab.configure(initcwnd=c.initcwnd, congctl=c.congctl, sysctls={**RESET, **c.sysctls})
    rows = run_suite(lab.tr, list(tests or c.tests), runs, c.path, runs_for={"rto_syn": syn_runs}, timer_intervals=c.timer_intervals)
    for r in rows:
        r["config"] = c.name
        exp = c.expect.get(r["test"])
        r["configured"] = exp if exp is not None else ""
        if exp is None:
            r["match"] = None
        elif r["test"] in ("rto_data", "rto_syn") and r.get("intervals"):
            want = [float(x) for x in exp.split()]
            got = r["intervals"]
            r["match"] = len(got) == len(want) and all(abs(g - w) <= max(0.1 * w, 0.03) for g, w in zip(got, want))
        else:
            r["match"] = r["verdict"] == exp
    return rows


#: What `initcwnd_config` runs unless told: the tests an initial window changes.
INITCWND_TESTS = ("icw", "lt", "abc", "abc_l")


def initcwnd_config(n: int, tests=None) -> Config:
    """The configuration "initcwnd N": the server's route gets `initcwnd N`, and ICW should
    read N (the kernel takes the route's value as the initial window, in segments; ip-route(8))."""
    if not 1 <= n <= 100:
        raise ValueError(f"initcwnd must be 1..100 segments, got {n}")
    return Config(f"initcwnd {n}", initcwnd=n, expect={"icw": str(n)}, tests=tuple(tests or INITCWND_TESTS))


def main(argv=None) -> int:
    import argparse

    from .real import Lab, missing

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="initcwnd 2 and 4, SACK off, two SYN timeouts without linear ones, one SYN run")
    ap.add_argument("--runs", type=int, default=5, choices=range(1, 51), metavar="1..50")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--initcwnd", type=int, default=None, metavar="N",
                    help="only the configuration 'initcwnd N' (the server route's initial window, 1..100)")
    ap.add_argument("--tests", default=None, metavar="a,b", help="with --initcwnd: these tests (default: icw, lt, abc, abc_l)")
    a = ap.parse_args(argv)
    if a.initcwnd is not None and not 1 <= a.initcwnd <= 100:
        ap.error(f"--initcwnd must be 1..100, got {a.initcwnd}")
    if a.initcwnd is not None and a.quick:
        ap.error("--initcwnd and --quick are alternatives")
    why = missing()
    if why:
        print(f"cannot run: {why}", file=sys.stderr)
        return 2
    configs = CONFIGS
    if a.quick:
        # Two SYN timeouts instead of three: 3 s instead of 7.
        syn = Config("tcp_syn_linear_timeouts 0", sysctls={"tcp_syn_linear_timeouts": 0}, expect={"rto_syn": "1 2"}, tests=("rto_syn",), timer_intervals=2)
        configs = [c for c in CONFIGS if c.name in ("initcwnd 2", "initcwnd 4", "tcp_sack 0")] + [syn]
    if a.initcwnd is not None:
        sel = [t.strip() for t in a.tests.split(",") if t.strip()] if a.tests else None
        configs = [initcwnd_config(a.initcwnd, sel)]
    out = []
    t0 = time.time()
    with Lab() as lab:
        for c in configs:
            out += probe_config(lab, c, runs=a.runs, syn_runs=1 if a.quick else 2)
    if a.json:
        print(json.dumps(out, indent=2))
    else:
        from .report import linux_table

        print(linux_table(out))
        print(f"({time.time() - t0:.0f} s)")
    return 0 if all(r["match"] is not False for r in out) else 1


if __name__ == "__main__":
    sys.exit(main())
