"""The experiments of docs/testbed.md, on the real stack and in the simulator:

- `boxacc`: the delay box's accuracy (one-way times of every data packet, captured at both ends,
  against the box's own link model);
- `seddigh`: Seddigh & Devetsikiotis §3: a 10 KB fetch with the SYN, the SYN-ACK or the GET
  dropped, and the timeout each triggers;
- `table2`: their Table 2's method for Linux: the SYN dropped three times, 10 connections, the
  initial SYN RTO and the backoff;
- `allman`: Allman et al.'s modem test: 28.8 kb/s, MSS 512, 16 KB, initcwnd 1…32 against IW 1;
- `loss`: a bulk transfer with 1 % random loss, goodput and retransmissions (CUBIC and BBR on
  both sides, and the host's own congestion control);
- `drops`: deterministic drops by sequence number (segment 1, 2, 5, the last, the last two, three
  of the first 50) over 3 rates × 3 RTTs, the untuned kernel against the `linux` profile,
  segment by segment (testbed/segmatch.py).

Every experiment runs the kernel untuned against the `linux` profile (the Linux 6.x model);
`testbed.json` of each run lists where the two still differ (`divergences`).

`tcplab testbed experiments [-o DIR] [--only NAME] [--quick]` runs them and writes
DIR/experiments.md and DIR/experiments.json.
"""

from __future__ import annotations

import json
import statistics as st
from pathlib import Path
from typing import Optional

from . import TestbedError, compare, run, simulate  # noqa: F401
from .segmatch import DROP_SEGMENTS  # noqa: F401  (each case's transfer, and the segments compared)
from .exp_cwnd import cwnd  # noqa: F401  (its own module: CUBIC's window, 10 seeds)
from .exp_ecn import ecn
from .exp_bbr import bbr  # noqa: F401  (its own module: BBR v1 against tcp_bbr.c)

LINK = {"kind": "single_link", "rate": "10Mbps", "delay": "50ms"}


def _get(c, label, metric, side):
    t = c.table
    v = t[(t.connection == label) & (t.metric == metric)][side]
    return None if v.empty else v.iloc[0]


def _both(scen, d: Path, stock=False, seed=None, congctl=None):
    run(scen, d, stock=stock, timeout=120, congctl=congctl)
    return compare(d, figure="tsg.png", seed=seed)


def _f(v, nd=3):
    if v is None:
        return "–"
    if isinstance(v, list):
        return "[" + ", ".join(f"{x:.{nd}f}" for x in v) + "]" if v else "–"
    return f"{v:.{nd}f}"


def boxacc(out: Path, quick: bool) -> tuple[str, dict]:
    """One-way time of every data packet, sender capture to receiver capture, less what the
    box's model gives for it (a FIFO at the rate, counting IP bytes, then the delay:
    testbed/pathexcess.py), and the box's own write lateness and read lag."""
    from . import pathexcess

    res = {}
    lines = ["| link | rate set by | data packets | error median | p99 | max | box write lateness mean / p99 / max | frames' wait to be read mean / p99 |",
             "|---|---|---|---|---|---|---|---|"]
    for rate, rbps, delay, size, shaper in (("10Mbps", 10e6, 0.050, "2MB", "box"), ("100Mbps", 100e6, 0.010, "10MB" if not quick else "4MB", "box"),
                                            ("10Mbps", 10e6, 0.050, "2MB", "tbf")):
        scen = {"name": "boxacc", "topology": {"kind": "single_link", "rate": rate, "delay": f"{delay * 1000:g}ms"},
                "tcp": {"profile": "linux"}, "flows": [{"bytes": size}]}
        d = out / f"boxacc-{rate}-{shaper}"
        rec = run(scen, d, timeout=60, shaper=shaper)
        # tbf counts Ethernet frames: 14 bytes more than the IP packet the box's model counts.
        ts = bool(int(rec["sysctls"]["sender"].get("net.ipv4.tcp_timestamps", 1)))
        errs = pathexcess.errors_ms(rec["captures"]["sender"], rec["captures"]["receiver"], "a2b", rbps, delay, ts=ts,
                                    extra=14 if shaper == "tbf" else 0)
        errs.sort()
        q = lambda p: errs[min(len(errs) - 1, int(p * len(errs)))]  # noqa: E731
        late = (rec.get("box") or {}).get("late_us", {})
        lag = (rec.get("box") or {}).get("read_lag_us", {})
        res[f"{rate}-{shaper}"] = {"packets": len(errs), "median_ms": q(0.5), "p99_ms": q(0.99), "max_ms": errs[-1], "min_ms": errs[0], "box_late_us": late,
                                   "box_read_lag_us": lag}
        lines.append(f"| {rate}, {delay * 1000:g} ms, {size} | {shaper} | {len(errs)} | {q(0.5):+.3f} ms | {q(0.99):+.3f} ms | {errs[-1]:+.3f} ms | "
                     f"{late.get('mean', float('nan')):.0f} / {late.get('p99', float('nan')):.0f} / {late.get('max', float('nan')):.0f} µs | "
                     f"{lag.get('mean', float('nan')):.0f} / {lag.get('p99', float('nan')):.0f} µs |")
    return "\n".join(lines), res


def seddigh(out: Path, quick: bool) -> tuple[str, dict]:
    scen = {"name": "seddigh-s3", "topology": LINK, "tcp": {"profile": "linux"},
            "apps": [{"kind": "reqresp", "request": "300B", "response": "10KB", "count": 4, "think": "500ms",
                      "drops": [{"kind": "syn", "object": 2}, {"kind": "synack", "object": 3}, {"kind": "request", "object": 4}]}]}
    res, lines = {}, ["| dropped | what is retransmitted | real | simulated | RFC 6298 / RFC 8985, in jiffies |", "|---|---|---|---|---|"]
    for mode in ("untuned",):
        c = _both(scen, out / f"seddigh-{mode}")
        rows = {
            "SYN": ("the SYN (client)", "apps[0] object 2", "syn_times_s", "1 s (initial RTO)"),
            "SYN-ACK": ("the SYN-ACK (server)", "apps[0] object 3", "synack_times_s", "1 s (initial RTO)"),
            "GET": ("the GET (client)", "apps[0] object 4", "request_retx_after_s", "the tail loss probe: min(2·SRTT + 200 ms, RTO) = 0.3 s"),
        }
        res[mode] = {}
        for k, (what, label, m, expect) in rows.items():
            r, s = _get(c, label, m, "real"), _get(c, label, m, "sim")
            r1 = r[0] if isinstance(r, list) and r else r
            s1 = s[0] if isinstance(s, list) and s else s
            res[mode][k] = {"real": r, "sim": s}
            lines.append(f"| {k} | {what} | {_f(r1)} s | {_f(s1)} s | {expect} |")
        res[mode]["clean_transfer_s"] = {"real": _get(c, "apps[0] object 1", "transfer_time_s", "real"), "sim": _get(c, "apps[0] object 1", "transfer_time_s", "sim")}
    return "\n".join(lines), res


def table2(out: Path, quick: bool) -> tuple[str, dict]:
    n = 3 if quick else 10
    scen = {"name": "table2-linux", "topology": LINK, "tcp": {"profile": "linux"},
            "flows": [{"bytes": "1KB", "count": n, "start_spacing": "20ms", "drops": [{"kind": "syn", "transmissions": [1, 2, 3]}]}]}
    res, lines = {}, ["| settings | side | connections | initial SYN RTO (mean, min–max) | 2nd / 1st interval | 3rd / 2nd interval |", "|---|---|---|---|---|---|"]
    for mode in ("untuned",):
        c = _both(scen, out / f"table2-{mode}")
        t = c.table[c.table.metric == "syn_times_s"]
        for side in ("real", "sim"):
            iv = []
            for times in t[side]:
                if times and len(times) >= 3:
                    iv.append([times[0], times[1] - times[0], times[2] - times[1]])
            if not iv:
                continue
            first = [x[0] for x in iv]
            b1 = [x[1] / x[0] for x in iv]
            b2 = [x[2] / x[1] for x in iv]
            res.setdefault(mode, {})[side] = {"n": len(iv), "rto_mean": st.mean(first), "rto_min": min(first), "rto_max": max(first),
                                              "backoff1": st.mean(b1), "backoff2": st.mean(b2)}
            lines.append(f"| {mode} | {side} | {len(iv)} | {st.mean(first):.3f} s ({min(first):.3f}–{max(first):.3f}) | {st.mean(b1):.2f} | {st.mean(b2):.2f} |")
    return "\n".join(lines), res


def allman(out: Path, quick: bool) -> tuple[str, dict]:
    iws = [1, 4, 32] if quick else [1, 2, 3, 4, 8, 16, 32]
    res, lines = {}, ["| initcwnd | real transfer (s) | simulated (s) | sim − real | real gain over IW 1 (s) | simulated gain (s) |", "|---|---|---|---|---|---|"]
    for iw in iws:
        scen = {"name": f"allman-iw{iw}", "topology": {"kind": "single_link", "rate": "28.8kbps", "delay": "50ms"},
                "tcp": {"profile": "linux", "mss": 512, "initial_window": iw}, "flows": [{"bytes": "16KB"}]}
        c = _both(scen, out / f"allman-iw{iw}")
        lab = "flows[0]#1 transfer 1"
        res[iw] = {"real": _get(c, lab, "transfer_time_s", "real"), "sim": _get(c, lab, "transfer_time_s", "sim"),
                   "iw_real": _get(c, lab, "iw_segs", "real"), "iw_sim": _get(c, lab, "iw_segs", "sim"),
                   "rexmt_real": _get(c, lab, "rexmt_segs", "real"), "rexmt_sim": _get(c, lab, "rexmt_segs", "sim")}
    for iw in iws:
        r = res[iw]
        lines.append(f"| {iw} (seen: {r['iw_real']:.0f} / {r['iw_sim']:.0f}) | {r['real']:.3f} | {r['sim']:.3f} | {r['sim'] - r['real']:+.3f} | "
                     f"{res[iws[0]]['real'] - r['real']:+.3f} | {res[iws[0]]['sim'] - r['sim']:+.3f} |")
    return "\n".join(lines), res


def loss(out: Path, quick: bool) -> tuple[str, dict]:
    reps = 2 if quick else 5
    scen = {"name": "loss1", "topology": {"kind": "single_link", "rate": "10Mbps", "delay": "20ms", "loss": 0.01},
            "tcp": {"profile": "linux"}, "flows": [{"bytes": "2MB"}]}
    lab = "flows[0]#1 transfer 1"
    res = {}
    # The untuned kernel against the `linux` profile with its CUBIC and with BBR (both sides
    # alike), and the host's own congestion control (`--stock`, the real side only).
    modes = {"cubic": (False, None), "bbr": (False, "bbr"), "stock": (True, None)}
    for mode, (stock, cc) in modes.items():
        rows = []
        for i in range(reps):
            sc = scen if cc is None else {**scen, "tcp": {**scen["tcp"], "cc": cc}}
            c = _both(sc, out / f"loss-{mode}-{i}", stock=stock, seed=i + 1)
            rows.append({side: {m: _get(c, lab, m, side) for m in ("goodput_bps", "rexmt_segs", "retx_timeout", "retx_fast", "retx_other", "transfer_time_s")}
                         for side in ("real", "sim")})
        res[mode] = rows
    lines = ["| settings | side | runs | goodput (Mb/s, mean, min–max) | retransmitted segments (mean) | after a timeout / fast / other |", "|---|---|---|---|---|---|"]
    # The stock congestion control is the host's default: name it.
    rec = json.loads((out / "loss-stock-0" / "testbed.json").read_text())
    res["stock_congctl"] = rec.get("default_congctl")
    for mode, rows in res.items():
        if mode == "stock_congctl":
            continue
        label = f"stock ({res['stock_congctl']})" if mode == "stock" and res["stock_congctl"] else mode
        for side in ("real", "sim") if mode != "stock" else ("real",):
            g = [r[side]["goodput_bps"] / 1e6 for r in rows]
            m = lambda k: st.mean(r[side][k] for r in rows)  # noqa: E731
            lines.append(f"| {label} | {side} | {len(rows)} | {st.mean(g):.2f} ({min(g):.2f}–{max(g):.2f}) | {m('rexmt_segs'):.1f} | "
                         f"{m('retx_timeout'):.1f} / {m('retx_fast'):.1f} / {m('retx_other'):.1f} |")
    return "\n".join(lines), res


#: The deterministic-drop cases (issue of the Linux profile's recovery): rates × RTTs × drops.
DROP_RATES = ("5Mbps", "20Mbps", "50Mbps")
DROP_RTTS_MS = (20, 60, 150)


def drop_sets(n: int = DROP_SEGMENTS, seed: int = 1) -> dict:
    """The dropped data segments of each case: 1, 2, 5, the last, the last two, and three of the
    first 50 drawn with a fixed seed (the same three in every run of the experiment)."""
    import random

    rnd = sorted(random.Random(seed).sample(range(3, 51), 3))
    return {"seg1": [1], "seg2": [2], "seg5": [5], "last": [n], "last2": [n - 1, n], "random3": rnd}


def drops(out: Path, quick: bool, profile: str = "linux") -> tuple[str, dict]:
    """Each case: a transfer of `DROP_SEGMENTS` full segments over one link (drop-tail queue large
    enough that nothing overflows), the chosen data segments dropped once by sequence number, the
    kernel untuned (its controller the profile's) beside the simulated `profile`; the data
    sender's first 500 segments compared (testbed/segmatch.py)."""
    from .. import api
    from . import lab, pathexcess, segmatch

    rates = DROP_RATES[:1] if quick else DROP_RATES
    rtts = DROP_RTTS_MS[:1] if quick else DROP_RTTS_MS
    cfg = api.profiles()[profile]
    from .. import units

    payload = int(units.size_bytes(cfg["mss"])) - (12 if cfg.get("timestamps") else 0)
    cc = cfg.get("cc", "reno")
    res, lines = {}, ["| rate | RTT | dropped | result | path excess fwd / rev | with the measured path |", "|---|---|---|---|---|---|"]
    ok = total = ok_cal = 0
    for rate in rates:
        for rtt in rtts:
            for name, segs in drop_sets().items():
                scen = {"name": f"drops-{rate}-{rtt}-{name}",
                        "topology": {"kind": "single_link", "rate": rate, "delay": f"{rtt / 2:g}ms", "queue": 2000},
                        "tcp": {"profile": profile},
                        "flows": [{"bytes": DROP_SEGMENTS * payload, "drops": [{"kind": "data", "segment": k} for k in segs]}]}
                d = out / "drops" / f"{rate}-{rtt}ms-{name}"
                rec = run(scen, d, timeout=120)
                compare(d, figure="tsg.png")
                host = "sender"
                port = rec["connections"][0]["sport"]
                m = segmatch.match(rec["captures"][host], d / f"sim-{host}.pcap", port, n=DROP_SEGMENTS)
                total += 1
                ok += m.ok
                # The calibrated comparison: the path as measured (the box's excess over its own
                # model, each direction's median), the case simulated again with the one-way
                # delay lengthened by their mean. The raw count above stays the headline.
                ts = bool(cfg.get("timestamps"))
                ex = pathexcess.median_excess_ms(rec["captures"]["sender"], rec["captures"]["receiver"], units.rate_bps(rate),
                                                 rtt / 2000, ts=ts)
                mc = None
                if ex:
                    cal = dict(scen, topology=dict(scen["topology"], delay=f"{rtt / 2 + ex['one_way_ms']:.4f}ms"))
                    cd = d / "calibrated"
                    cd.mkdir(exist_ok=True)
                    simulate(cal, cd, [host], sets=rec.get("sets", ()))
                    mc = segmatch.match(rec["captures"][host], cd / f"sim-{host}.pcap", port, n=DROP_SEGMENTS)
                    ok_cal += mc.ok
                res[f"{rate}-{rtt}-{name}"] = {"box_timing": lab.box_timing(rec.get("box")),
                                               "segments": segs, "ok": m.ok, "same": m.same, "compared": m.compared, "timed": m.timed,
                                               "first_diff": m.first_diff, "worst_dt_ms": m.worst_dt_ms, "text": m.describe(),
                                               "psh_same": m.psh_same, "psh_first_diff": m.psh_first_diff, "path_excess": ex,
                                               "calibrated": None if mc is None else {"ok": mc.ok, "same": mc.same, "timed": mc.timed,
                                                                                      "text": mc.describe()}}
                exs = f"{ex['forward_ms']:+.3f} / {ex['reverse_ms']:+.3f} ms" if ex else "-"
                lines.append(f"| {rate} | {rtt} ms | {', '.join(map(str, segs))} | {m.describe()} | {exs} | {mc.describe() if mc else '-'} |")
    same = sum(v["same"] for v in res.values())
    psh = sum(v["psh_same"] for v in res.values())
    timed = sum(v["timed"] for v in res.values())
    timed_cal = sum(v["calibrated"]["timed"] for v in res.values() if v["calibrated"])
    res["summary"] = {"identical": ok, "cases": total, "profile": profile, "same_segments": same, "timed_segments": timed, "psh_same": psh,
                      "identical_with_measured_path": ok_cal, "timed_segments_with_measured_path": timed_cal}
    lines.append(f"\nSegments: {same} identical, {timed} of them within the time tolerance; PSH on both sides or neither on {psh} of them. "
                 f"With the measured path: {ok_cal} of {total} cases identical, {timed_cal} segments within the tolerance.")
    lines.insert(0, f"{ok} of {total} cases identical (the data sender's first {DROP_SEGMENTS} segments: seq, length, SYN/FIN; "
                    f"send times within max(1 ms, 2 %)), profile `{profile}` against the untuned kernel ({cc}).\n")
    return "\n".join(lines), res


EXPERIMENTS = {"boxacc": boxacc, "seddigh": seddigh, "table2": table2, "allman": allman, "loss": loss, "drops": drops, "cwnd": cwnd,
               "ecn": ecn, "bbr": bbr}


def drops_at_kernel_clocks(out: Path, hz: int = 250) -> tuple[str, dict]:
    """A calibration of a `drops` run's cases (`out/drops/*`, captures kept), shown apart from
    its headline: each case simulated again with the kernel's clock phases, which are free to
    the simulation's start, read from the run's own captures: its jiffies (`jiffy_offset`; the
    tick from the receivers' timer-driven delayed ACKs, pooled over the cases: `tsphase.jiffy_tick`)
    and its timestamps clock (`ts_offset`; `tsphase.phase` of each sender capture). Writes each
    case's simulation to `<case>/clocks/`."""
    from . import segmatch, tsphase

    cases = [d for d in sorted((Path(out) / "drops").iterdir()) if (d / "testbed.json").exists()]
    tick = tsphase.jiffy_tick([d / "real-receiver.pcap" for d in cases], hz)
    if tick is None:
        raise TestbedError("no timer-driven ACK in the receivers' captures: the jiffies' phase cannot be read")
    res, ok, timed = {}, 0, 0
    for d in cases:
        rec = json.loads((d / "testbed.json").read_text())
        syn = tsphase.syn_time(d / "real-sender.pcap")
        ph = tsphase.phase(d / "real-sender.pcap")
        sets = list(rec.get("sets", ())) + [f"tcp.jiffy_offset={tsphase.jiffy_offset_for(tick['tick_s'], hz, syn)}"]
        if ph:
            sets.append(f"tcp.ts_offset={tsphase.offset_for(ph['since_tick_ms'], 0.0)}")
        cd = d / "clocks"
        cd.mkdir(exist_ok=True)
        simulate(rec["scenario"], cd, ["sender"], sets=sets)
        m = segmatch.match(d / "real-sender.pcap", cd / "sim-sender.pcap", rec["connections"][0]["sport"], n=DROP_SEGMENTS)
        ok += m.ok
        timed += m.timed
        res[d.name] = {"ok": m.ok, "same": m.same, "timed": m.timed, "sets": sets, "text": m.describe()}
    text = (f"At the kernel's clock phases (jiffy tick {tick['tick_s'] * 1e3:.3f} ms past the wall clock's {1e3 / hz:g} ms, from "
            f"{tick['in_cluster']} timer-driven ACKs): {ok} of {len(cases)} cases within the tolerance, {timed} segments.")
    return text, {"tick": tick, "cases": res, "ok": ok, "timed": timed}


def run_all(out: Path, only: Optional[list] = None, quick: bool = False, repeat: int = 1) -> str:
    """Run the experiments `only` names (all by default) into `out` (experiments.md, .json and
    one directory per experiment). With `repeat` = K > 1, all of them K times, into out/run1 ...
    out/runK, and then, for each experiment the floor measures (`testbed/floor.py`), the kernel's
    runs against each other beside the simulator against each run (out/floor.md, floor.json)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    names = only or list(EXPERIMENTS)
    bad = [n for n in names if n not in EXPERIMENTS]
    if bad:
        raise ValueError(f"unknown experiment {', '.join(bad)} (experiments: {', '.join(EXPERIMENTS)})")
    if repeat < 1:
        raise ValueError(f"repeat must be at least 1, got {repeat}")
    if repeat > 1:
        from . import floor

        runs = [out / f"run{k}" for k in range(1, repeat + 1)]
        texts = [f"# run {k}\n\n{run_all(r, names, quick)}" for k, r in enumerate(runs, 1)]
        fl, fdata = [], {}
        for n in names:
            if n in floor.EXPERIMENTS:
                # One experiment's floor failing (a run's case without its files) leaves the
                # others' and says why.
                try:
                    fdata[n] = floor.measure(n, runs)
                    fl.append(f"## {n}: the kernel against itself\n\n{floor.report(fdata[n])}\n")
                except (TestbedError, ValueError, OSError) as e:
                    fdata[n] = {"error": str(e)}
                    fl.append(f"## {n}: the kernel against itself\n\nnot measured: {e}\n")
        (out / "floor.json").write_text(json.dumps(fdata, indent=1, default=str))
        (out / "floor.md").write_text("\n".join(fl) + "\n")
        return "\n".join(texts + fl)
    texts, data = [], {}
    jpath = out / "experiments.json"
    if jpath.exists():
        data = json.loads(jpath.read_text())
    for n in names:
        text, res = EXPERIMENTS[n](out, quick)
        texts.append(f"## {n}\n\n{text}\n")
        data[n] = res
        jpath.write_text(json.dumps(data, indent=1, default=str))
    md = "\n".join(texts)
    (out / "experiments.md").write_text(md + "\n")
    return md
