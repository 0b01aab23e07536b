"""From a scenario to a plan for the real Linux stack: hosts, link directions, paths, per-host
sysctls and routes, transfers, drop rules. Whatever Linux cannot honour is refused here, before
anything is created, with the key path (a `tcplab.ScenarioError`), never silently ignored.

The subset (docs/testbed.md): `single_link` and `dumbbell` topologies (DropTail queues, `loss`,
`reverse_loss`), `[[flows]]` of finite bulk transfers, `[[apps]]` of kind `reqresp` and `http10`
(two-way, constant sizes and times), drop filters of SYN, SYN-ACK, FIN, data segment k, ACK k,
the request and response segment k, and the TCP knobs listed in `KNOB_MAP`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from .. import api, units
from . import untuned

#: Every TCP knob of the simulator, and what the testbed does with it on Linux.
#: "mapped": set on Linux (how: docs/testbed.md); the kernel's own mechanisms stay untuned and a
#: profile value that models something else is a divergence (`untuned.divergences`), said loudly;
#: any knob not listed must hold the `linux` profile's value, which models what Linux does.
KNOB_MAP = {
    "variant": "mapped: sack → tcp_sack 1 (SACK recovery); newreno without sack → tcp_sack 0",
    "sack": "mapped: net.ipv4.tcp_sack",
    "mss": "mapped: route advmss on both ends (at most 1460 on the 1500-byte veths)",
    "initial_window": "mapped: route initcwnd (whole segments)",
    "restart_after_idle": "mapped: net.ipv4.tcp_slow_start_after_idle",
    "rwnd": "mapped: route window on the receiver",
    "dupthresh": "mapped: net.ipv4.tcp_reordering",
    "delayed_ack": "mapped: off → route quickack 1 on the receiver; on → Linux's delayed ACKs (40 ms)",
    "rto_min": "mapped: net.ipv4.tcp_rto_min_us",
    "rto_max": "mapped: net.ipv4.tcp_rto_max_ms (1 s to 120 s)",
    "syn_retries": "mapped: net.ipv4.tcp_syn_retries (1 to 127) and tcp_synack_retries",
    "data_retries": "mapped: net.ipv4.tcp_retries2",
    "clock_granularity": "must equal rto_min (Linux's RTO is srtt + max(mdev, rto_min))",
    "cc": "mapped: route congctl on both ends (reno, cubic, bbr; --congctl overrides, loudly)",
    "slow_start": "the kernel's own: CUBIC runs its classic HyStart (tcp_cubic's `hystart` module parameter is host-wide and left alone), reno and bbr their own slow start; \"auto\" (and \"hystart\" with cubic, \"standard\" with reno) match, \"standard\" with cubic and \"hystart++\" (Linux has none) are refused",
    "cwnd_validation": "the kernel always runs tcp_cwnd_restart (\"linux\"); \"rfc5681\" is a divergence",
    "reduction": "the kernel always reduces the window by PRR (tcp_cwnd_reduction, \"prr\"); \"halve\" is a divergence",
    "rto_model": "the kernel runs its own estimator (\"linux\"); \"rfc6298\" is a divergence, \"ns2\" refused",
    "hz": "the kernel's CONFIG_HZ (recorded as kernel_hz in testbed.json); another value is refused, 0 is a divergence",
    "jiffy_offset": "the phase of the simulated ticks; the kernel's have none fixed to the run's start (any value)",
    "ts_offset": "the phase of the simulated timestamps clock; the kernel's has none fixed to the run's start (any value; `testbed.tsphase` reads the real sender's from its capture)",
    "delack_model": "the kernel runs its own receiver (\"linux\": quick-ACK, adaptive ATO); \"rfc\" is a divergence",
    "comp_sack_nr": "untuned: net.ipv4.tcp_comp_sack_nr 44 (another value a divergence); rfc6675-iw10: 0",
    "loss": "untuned: RACK (net.ipv4.tcp_recovery 1; dupthresh a divergence); rfc6675-iw10: tcp_recovery 0",
    "tlp": "untuned: TLP (net.ipv4.tcp_early_retrans 3; false a divergence); rfc6675-iw10: tcp_early_retrans 0",
    "ecn": "mapped: net.ipv4.tcp_ecn (on 1; accept and off the kernel's 2); a queue's mark_threshold is the delay box's",
    "timestamps": "untuned: net.ipv4.tcp_timestamps 1 (false a divergence); rfc6675-iw10: the profile's 0",
    "fin_with_data": "the kernel always puts the FIN on queued data (tcp_send_fin) and gates a bare FIN by cwnd; false is a divergence",
    "ssthresh_from_cwnd": "the kernel's reno halves cwnd (tcp_reno_ssthresh); false is a divergence when cc is reno",
    "tso_defer": "the kernel always builds TCP skbs for GSO and may defer them (tcp_tso_should_defer); false is a divergence",
    "rcv_buffer": "the kernel always runs its own receive buffer (tcp_rmem, tcp_moderate_rcvbuf 1: \"linux\"); \"fixed\" is a divergence",
    "syn_options": "the kernel writes MSS, SACK-permitted and window scale on its SYN and SYN-ACK (tcp_syn_options: 12 option bytes, 20 with timestamps: the `linux` profile's 12; without SACK 8); another value is a divergence",
    "handshake_ack_alone": "the kernel acknowledges the SYN-ACK with a pure ACK before the application's first write (tcp_rcv_synsent_state_process → tcp_send_ack: true); false is a divergence",
    "frto": "untuned: net.ipv4.tcp_frto 2 (false a divergence); rfc6675-iw10: tcp_frto 0",
    "syn_linear_timeouts": "untuned: net.ipv4.tcp_syn_linear_timeouts 4 (another value a divergence); rfc6675-iw10: 0",
    "dsack": "untuned: net.ipv4.tcp_dsack 1 (false a divergence); rfc6675-iw10: tcp_dsack 0",
    "undo": "the kernel always undoes a reduction proved spurious (tcp_try_undo_*); false is a divergence untuned (rfc6675-iw10's kernel has neither D-SACK nor timestamps to prove one)",
}
#: Knobs that only matter with delayed ACKs on.
DELACK_KNOBS = ("delack_timeout", "delack_tick", "delack_segments", "delack_fill_immediate")

HOST_NET = "10.77.0."
SINK_PORT = 5001          # the simulator's receiver port
APP_PORT = 80
FLOW_PORT_BASE = 10000    # the simulator's sender ports (trace/capture.rs)
APP_PORT_BASE = 40000
MAX_PAIRS = 4
MAX_COUNTED = 200         # the largest ACK number a drop rule counts to (data segments: by sequence number, anywhere)


def refuse(path: str, why: str) -> Exception:
    return api._scenario_error(path, f"the testbed cannot run this on Linux: {why}")


#: The keys of a flow, an application and their drop rules that the testbed honours; any other
#: key a validated scenario carries (it leaves out unset and default ones) is refused by its key
#: path instead of being ignored.
FLOW_KEYS = {"name", "from", "to", "count", "start", "start_spacing", "bytes", "repeat", "think", "tcp", "drops"}
FLOW_DROP_KEYS = {"kind", "segment", "number", "transmissions", "transfer"}
APP_KEYS = {"kind", "name", "client", "server", "mode", "start", "request", "response", "count", "pages", "embedded", "think",
            "tcp", "drops", "instances", "objects"}  # fmt: skip
APP_DROP_KEYS = {"kind", "object", "segment", "transmissions"}
#: Why a key is refused, where there is more to say than "not modelled on Linux".
WHY_NOT = {
    "delays": "delayed (reordered) segments are simulator-only; the delay box forwards in order",
    "server_tcp": "one set of TCP knobs per host pair: the server's end cannot differ from the client's (use tcp)",
    "page_spacing": "`think` runs from the end of a page only",
    "keep_alive": "http11 is simulator-only",
    "transfer": "http11 is simulator-only",
}


def _only(entry: dict, allowed: set, base: str) -> None:
    for k in entry:
        if k not in allowed:
            raise refuse(f"{base}.{k}", WHY_NOT.get(k, f"`{k}` has no counterpart in the testbed (docs/testbed.md lists what it runs)"))


def _quantity(read, v: Any, path: str, what: str):
    """A constant quantity of the resolved plan, read by the core's parser (`tcplab.units`); a
    random variable is refused by its key path."""
    if isinstance(v, (bool, dict, list)):
        raise refuse(path, f"expected a constant {what}, got {v!r} (random variables are simulator-only)")
    try:
        return read(v, path)
    except ValueError as e:
        raise refuse(path, str(e)) from None


def dur(v, path) -> float:
    return _quantity(units.seconds, v, path, "duration")


def size(v, path) -> int:
    return _quantity(units.size_bytes, v, path, "size")


@dataclass
class LinkDir:
    name: str
    rate_bps: float
    delay_s: float
    limit_pkts: Optional[int]
    limit_bytes: Optional[int]
    mark_pkts: Optional[int] = None    # the delay box's step CE marking (`mark_threshold`)
    mark_bytes: Optional[int] = None


@dataclass
class Conn:
    """One connection the real run makes and the capture should show."""
    label: str            # "flows[0] transfer 1", "apps[1] object 3"
    client: str           # the active opener's host
    server: str
    sport: int
    dport: int
    sender: str           # the data sender's host (where it is captured)


@dataclass
class Plan:
    hosts: list                      # host names, in order; host k has 10.77.0.(k+1)
    links: list                      # LinkDir
    paths: dict                      # (src host, dst host) -> [link index, ...]
    sysctls: dict                    # host -> {sysctl: value}
    routes: dict                     # (host, peer host) -> {route option: value}
    jobs: dict                       # host -> [client job dict]
    servers: dict                    # host -> set of ports
    conns: list                      # Conn, in the order they are started
    drops: list                      # (host receiving, nft rule text, sets) — see nft.py
    loss: list                       # (from hosts, to hosts, probability, path)
    capture_hosts: list              # the end hosts, each captured on its veth
    horizon_s: float                 # the latest scheduled start
    stock: bool = False
    shaper: str = "box"            # "box": the delay box's own transmitters; "tbf": tc tbf on its output ports
    notes: list = field(default_factory=list)
    #: Where the simulated profile models something else than the kernel does (`untuned.divergences`).
    divergences: list = field(default_factory=list)
    #: Data segments the delay box drops by sequence number (crates/tcplab-py/src/delaybox.rs):
    #: dict(frm=sending host, ports, port_field "sport"/"dport", offsets=[byte offset of the
    #: segment's first byte in the data], path).
    seq_drops: list = field(default_factory=list)

    def payload(self, host: str, mss: int) -> int:
        """The data bytes of a full segment `host` sends with `mss`: 12 fewer when the kernel
        sends timestamps (untuned, `tcp_timestamps=1`; Linux's mss_cache, tcp_sync_mss)."""
        return mss - 12 if int(self.sysctls.get(host, {}).get("net.ipv4.tcp_timestamps", 1)) else mss

    def ip(self, host: str) -> str:
        return HOST_NET + str(self.hosts.index(host) + 1)

    def mac(self, host: str) -> str:
        return "02:74:62:00:00:%02x" % (self.hosts.index(host) + 1)


def _queue(q: dict, path: str) -> tuple:
    """A resolved queue: (packets, bytes) limits, None where unlimited, and the step marking
    threshold (packets, bytes), None where it does not mark."""
    if q.get("kind", "droptail") != "droptail":
        raise refuse(path + "." + q["kind"], f"{q['kind'].upper()} is simulator-only (the delay box queues drop-tail)")
    p, b = q.get("packets"), q.get("bytes")
    m = q.get("mark_threshold")
    mp = int(m) if isinstance(m, int) and not isinstance(m, bool) else None
    mb = size(m, path + ".mark_threshold") if m is not None and mp is None else None
    return (int(p) if p is not None else None), (size(b, path + ".bytes") if b is not None else None), mp, mb


def _topology(t: dict, plan: dict):
    """Hosts, link directions, paths and random loss from the resolved plan's nodes and links
    (rates, delays and queues in the core's units); the scenario's `topology` only names the kind
    and the keys a refusal points at."""
    kind = t.get("kind")
    if kind not in ("single_link", "dumbbell"):
        raise refuse("topology.kind", f"{kind!r}: the testbed runs single_link and dumbbell topologies")
    if t.get("groups"):
        raise refuse("topology.groups", "host groups are simulator-only")
    if plan.get("loss_pattern", "random") != "random":
        raise refuse("topology.loss_pattern", "only random loss (nftables numgen) is available")
    if kind == "dumbbell" and int(t["pairs"]) > MAX_PAIRS:
        raise refuse("topology.pairs", f"at most {MAX_PAIRS} pairs (a namespace and a delay-box port each)")
    routers = {"left", "right"} if kind == "dumbbell" else set()
    links, adj = [], {}
    shared = "topology.queue" if kind == "single_link" else None
    for l in plan["links"]:
        a, b, name = l["a"], l["b"], l["name"]
        qpath = shared or ("topology.queue" if name == "bottleneck" else "topology.access_queue")
        for (x, y, q) in ((a, b, l["queue"]), (b, a, l["reverse_queue"])):
            lp, lb, mp, mb = _queue(q, qpath)
            links.append(LinkDir(f"{name}:{x}->{y}", float(l["rate_bps"]), l["delay_ns"] / 1e9, lp, lb, mp, mb))
            adj.setdefault(x, []).append((y, len(links) - 1))
    # End hosts in the order of the links that attach them: the left (sending) side first.
    hosts = [n for n in plan["nodes"] if n not in routers]
    if routers:
        side = {n: ("left" if any(y == "left" for y, _ in adj[n]) else "right") for n in hosts}
        hosts = [h for h in hosts if side[h] == "left"] + [h for h in hosts if side[h] == "right"]
    paths = {}
    for src in hosts:
        # Breadth-first over the link directions: through routers only, the fewest hops.
        seen, frontier = {src: []}, [src]
        while frontier:
            nxt = []
            for n in frontier:
                if n != src and n not in routers:
                    continue
                for y, li in adj.get(n, []):
                    if y not in seen:
                        seen[y] = seen[n] + [li]
                        nxt.append(y)
            frontier = nxt
        for dst in hosts:
            if dst != src and dst in seen:
                paths[(src, dst)] = seen[dst]
    loss = []
    for l in plan["links"]:
        for (x, y, p, key) in ((l["a"], l["b"], l["loss"], "topology.loss"), (l["b"], l["a"], l["reverse_loss"], "topology.reverse_loss")):
            if p > 0:
                li = next(i for i, d in enumerate(links) if d.name == f"{l['name']}:{x}->{y}")
                frm = [h for h in hosts if any(li in paths.get((h, d), []) for d in hosts)]
                to = [h for h in hosts if any(li in paths.get((s_, h), []) for s_ in hosts)]
                loss.append((frm, to, float(p), key))
    return hosts, links, paths, loss


def _iw_segments(iw, mss: int, path: str) -> int:
    """Whole segments of the initial window, as the core's sender computes them."""
    try:
        return units.initial_window_segments(iw, mss, path)
    except ValueError as e:
        raise refuse(path, str(e)) from None


def tcp_settings(resolved: dict, own: dict, base: str, linux: dict, stock: bool, congctl: Optional[str] = None,
                 profile: Optional[str] = None) -> dict:
    """The Linux settings for one flow's resolved knobs: {"sysctl": {...}, "sender_route": {...},
    "receiver_route": {...}, "mss", "iw", "timestamps" (whether the kernel sends them),
    "divergences"}. `own` is the flow's own `tcp` table, `base` its path ("flows[0].tcp"), for the
    key path of a refusal. The kernel's mechanisms are the untuned kernel's (`untuned.UNTUNED`),
    or the tuned ones of `untuned.TUNED` when the scenario names (`profile`) the profile that
    models them."""
    def path(k):
        return f"{base}.{k}" if k in own else f"tcp.{k}"

    k = resolved
    delayed = bool(k["delayed_ack"])
    for name, v in k.items():
        if name in KNOB_MAP or name in ("profile", "preset"):
            continue
        if not delayed and name in DELACK_KNOBS:
            continue
        if v != linux[name]:
            raise refuse(path(name), f"{name} = {v!r}: Linux has no setting for it; the testbed runs Linux's behaviour, "
                                     f"which the `linux` profile's value {linux[name]!r} models")
    sysctl, snd, rcv = {}, {}, {}
    if k["variant"] == "sack":
        if not k["sack"]:
            raise refuse(path("sack"), "variant sack needs sack = true")
        sysctl["net.ipv4.tcp_sack"] = 1
    elif k["variant"] == "newreno":
        if k["sack"]:
            raise refuse(path("variant"), "newreno with sack = true: Linux recovers with SACK whenever it is agreed; use variant = \"sack\"")
        sysctl["net.ipv4.tcp_sack"] = 0
    else:
        raise refuse(path("variant"), f"{k['variant']!r}: Linux's loss recovery is SACK-based (variant \"sack\") or, without SACK, NewReno")
    mss = size(k["mss"], path("mss"))
    if not 88 <= mss <= 1460:
        raise refuse(path("mss"), f"{mss} B: Linux takes an MSS from 88 to 1460 B on the testbed's 1500-byte links")
    snd["advmss"] = rcv["advmss"] = mss
    iw = _iw_segments(k["initial_window"], mss, path("initial_window"))
    snd["initcwnd"] = iw
    sysctl["net.ipv4.tcp_slow_start_after_idle"] = int(bool(k["restart_after_idle"]))
    if k["rwnd"] != "unlimited":
        rcv["window"] = size(k["rwnd"], path("rwnd"))
    if not 1 <= int(k["dupthresh"]) <= 300:
        raise refuse(path("dupthresh"), "Linux's tcp_reordering takes 1 to 300")
    sysctl["net.ipv4.tcp_reordering"] = int(k["dupthresh"])
    if not delayed:
        rcv["quickack"] = 1
    rto_min = dur(k["rto_min"], path("rto_min"))
    if abs(dur(k["clock_granularity"], path("clock_granularity")) - rto_min) > 1e-9:
        raise refuse(path("clock_granularity"), f"Linux's G is its minimum RTO: clock_granularity must equal rto_min ({k['rto_min']})")
    if not 0.001 <= rto_min <= 120:
        raise refuse(path("rto_min"), "Linux's tcp_rto_min_us takes 1 ms to 120 s")
    sysctl["net.ipv4.tcp_rto_min_us"] = int(round(rto_min * 1e6))
    rto_max = dur(k["rto_max"], path("rto_max"))
    if not 1 <= rto_max <= 120:
        raise refuse(path("rto_max"), "Linux's tcp_rto_max_ms takes 1 s to 120 s")
    sysctl["net.ipv4.tcp_rto_max_ms"] = int(round(rto_max * 1e3))
    if not 1 <= int(k["syn_retries"]) <= 127:
        raise refuse(path("syn_retries"), "Linux's tcp_syn_retries takes 1 to 127")
    sysctl["net.ipv4.tcp_syn_retries"] = int(k["syn_retries"])
    sysctl["net.ipv4.tcp_synack_retries"] = min(255, int(k["syn_retries"]))
    sysctl["net.ipv4.tcp_retries2"] = min(255, int(k["data_retries"]))
    hz = linux_timers_and_receiver(k, path)
    # The kernel's own mechanisms: untuned, or tuned to the profile that models a tuned kernel.
    if untuned.tuned(profile, stock):
        sysctl.update(untuned.TUNED)
        # RFC 7323 timestamps, RACK-TLP and SACK compression as that profile says.
        sysctl["net.ipv4.tcp_timestamps"] = int(bool(k.get("timestamps", False)))
        if k.get("loss", "dupthresh") == "rack":
            sysctl["net.ipv4.tcp_recovery"] = 1
        if k.get("tlp", False):
            sysctl["net.ipv4.tcp_early_retrans"] = 3
        sysctl["net.ipv4.tcp_comp_sack_nr"] = int(k.get("comp_sack_nr", 0))
    else:
        sysctl.update(untuned.UNTUNED)
    timestamps = bool(sysctl["net.ipv4.tcp_timestamps"])
    # The flow's controller (`cc`); --congctl overrides it; with --stock, the host's default.
    want = k.get("cc", "reno")
    if want == "dctcp" and not congctl:
        raise refuse(path("cc"), "dctcp: the testbed's kernel has no DCTCP module (only reno, cubic and bbr are built)")
    # `ecn` off or accept is the kernel's tcp_ecn = 2 (it answers, never asks): with both ends
    # alike no connection negotiates ECN, as in the simulator.
    if k.get("ecn", "off") == "on":
        sysctl["net.ipv4.tcp_ecn"] = 1
    ss = k.get("slow_start", "auto")
    if ss == "hystart++":
        raise refuse(path("slow_start"), "hystart++: Linux has no HyStart++ (RFC 9406); its CUBIC runs the classic HyStart (slow_start \"auto\")")
    if ss == "standard" and want == "cubic":
        raise refuse(path("slow_start"), "standard with cubic: the kernel's CUBIC runs HyStart unless the host-wide tcp_cubic module parameter hystart is 0, which the testbed leaves alone")
    cc = untuned.kernel_cc(k, stock, congctl)
    if cc:
        snd["congctl"] = rcv["congctl"] = cc
    divs = untuned.divergences(k, base, stock, congctl, hz, profile)
    return {"sysctl": sysctl, "sender_route": snd, "receiver_route": rcv, "mss": mss, "iw": iw, "timestamps": timestamps, "divergences": divs}


def linux_timers_and_receiver(k: dict, path) -> Optional[int]:
    """The knobs of Linux's own timers and receiver: the models are refused only where they cannot
    describe this kernel (ns-2's timer; another HZ). Returns the kernel's HZ (None if unknown)."""
    from .lab import kernel_hz

    if k.get("rto_model", "rfc6298") not in ("rfc6298", "linux"):
        raise refuse(path("rto_model"), f"{k['rto_model']!r}: Linux's timer is modelled by \"linux\" (or the `linux` profile's \"rfc6298\")")
    hz = int(k.get("hz", 0))
    real = kernel_hz()
    if hz and real is not None and hz != real:
        raise refuse(path("hz"), f"hz = {hz}: this kernel runs CONFIG_HZ={real}")
    if k.get("delack_model", "rfc") not in ("rfc", "linux"):
        raise refuse(path("delack_model"), f"{k['delack_model']!r}: expected \"rfc\" or \"linux\"")
    return real


#: What the testbed sets in every host namespace besides the kernel's mechanisms
#: (`untuned.UNTUNED`, or `untuned.TUNED` for the profile that models a tuned kernel). The
#: simulator has no destination cache: no connection inherits a previous one's RTT or ssthresh
#: (and `ip tcp_metrics flush all` runs before each run, lab.py).
BASE_SYSCTLS = {
    "net.ipv4.tcp_no_metrics_save": 1,
    "net.ipv4.tcp_window_scaling": 1,
    "net.ipv4.tcp_ecn": untuned.ECN_DEFAULT,
    "net.ipv6.conf.all.disable_ipv6": 1,
    "net.ipv6.conf.default.disable_ipv6": 1,
}


def build(scenario, sets=(), stock: bool = False, shaper: str = "box", congctl: Optional[str] = None) -> tuple[Plan, dict]:
    """Check `scenario` (as `tcplab.validate` does, then against the subset) and plan the real
    run. Returns the plan and the validated scenario. The kernel runs untuned (`untuned.py`) with
    each flow's `cc` as its congestion control; `stock` leaves the host's default congestion
    control and never tunes the kernel; `congctl` names the congestion control of every route,
    for experiments beyond what the simulator models. What the simulated side models otherwise
    is in `plan.divergences` (and printed when the run starts)."""
    d = api.validate(scenario, sets=sets)
    resolved = api.resolve(scenario, sets=sets)
    for k in ("warmup", "duration"):
        if d.get(k) is not None:
            raise refuse(k, "the testbed runs finite transfers to their end")
    if d.get("capture"):
        raise refuse("capture", "the testbed captures at each data sender itself")
    linux = api.profiles()["linux"]
    hosts, links, paths, loss = _topology(d["topology"], resolved)
    single = d["topology"]["kind"] == "single_link"
    plan = Plan(hosts=hosts, links=links, paths=paths, sysctls={h: dict(BASE_SYSCTLS) for h in hosts}, routes={},
                jobs={h: [] for h in hosts}, servers={h: set() for h in hosts}, conns=[], drops=[], loss=loss,
                capture_hosts=[], horizon_s=0.0, stock=stock, shaper=shaper)
    if shaper not in ("box", "tbf"):
        raise ValueError(f"shaper must be 'box' or 'tbf', got {shaper!r}")
    if shaper == "tbf" and not single:
        raise refuse("topology.kind", "with tbf the rate is set per output port, which can model a single link only (use the box's own transmitters)")
    if shaper == "tbf" and any(l.mark_pkts is not None or l.mark_bytes is not None for l in plan.links):
        raise refuse("topology.queue.mark_threshold", "with tbf the queue is tbf's, which marks nothing; the delay box's own transmitters mark (shaper \"box\")")
    set_by: dict = {}

    def apply(settings: dict, sender: str, receiver: str, where: str):
        for h in (sender, receiver):
            for key, v in settings["sysctl"].items():
                old = plan.sysctls[h].get(key)
                if (h, key) in set_by and old != v:
                    raise refuse(where, f"{key} = {v} on host {h}, where {set_by[(h, key)]} needs {old}: Linux sets it per host")
                plan.sysctls[h][key] = v
                set_by[(h, key)] = where
        for (a, b, opts) in ((sender, receiver, settings["sender_route"]), (receiver, sender, settings["receiver_route"])):
            cur = plan.routes.setdefault((a, b), {})
            for key, v in opts.items():
                if key in cur and cur[key] != v:
                    raise refuse(where, f"route {key} {v} from {a} to {b}, where another transfer needs {cur[key]}")
                cur[key] = v

    def node(n, path):
        if n not in hosts:
            raise refuse(path, f"{n!r} is not an end host here (hosts: {', '.join(hosts)}; routers are the delay box)")
        return n

    def capture(*hs):
        for h in hs:
            if h not in plan.capture_hosts:
                plan.capture_hosts.append(h)

    # The resolved flows are the scenario's, each `count` times, in order: the core's numbering,
    # which gives the simulator's sender ports (trace/capture.rs).
    rflows = resolved["flows"]
    nflows = len(rflows)
    conn_order = []
    fi = 0
    for i, f in enumerate(d.get("flows", [])):
        base = f"flows[{i}]"
        _only(f, FLOW_KEYS, base)
        for j, dr in enumerate(f.get("drops") or []):
            _only(dr, FLOW_DROP_KEYS, f"{base}.drops[{j}]")
        if f.get("bytes") == "unlimited":
            raise refuse(base + ".bytes", "the testbed runs finite transfers")
        if f.get("repeat") == "unlimited":
            raise refuse(base + ".repeat", "the testbed runs finite transfers")
        for c in range(int(f.get("count", 1))):
            rf = rflows[fi]
            st = _settings(d, f, rf["tcp"]["sender"], base, linux, stock, congctl)
            src, dst = node(rf["from"], base + ".from"), node(rf["to"], base + ".to")
            apply(st, src, dst, base + ".tcp")
            plan.divergences += st["divergences"]
            repeat = int(rf["repeat"])
            ports = [FLOW_PORT_BASE + (fi + (t * nflows)) % 55536 for t in range(repeat)]
            t0 = rf["start_ns"] / 1e9
            plan.jobs[src].append({"kind": "bulk", "dst": plan.ip(dst), "dport": SINK_PORT, "sports": ports, "bytes": int(rf["bytes"]),
                                   "start": t0, "think": rf["think_ns"] / 1e9, "label": f"{base}#{c + 1}"})
            plan.servers[dst].add(SINK_PORT)
            for t, p in enumerate(ports):
                conn_order.append((t0, Conn(f"{base}#{c + 1} transfer {t + 1}", src, dst, p, SINK_PORT, src)))
            plan.horizon_s = max(plan.horizon_s, t0)
            capture(src, dst)
            n0 = len(plan.drops)
            for j, dr in enumerate(rf["drops"]):
                _flow_drop(plan, dr, f"{base}.drops[{j}]", src, dst, ports, st["mss"])
            _data_match_with_timestamps(plan, n0, st)
            fi += 1
    rapps = iter(resolved["apps"])
    for i, a in enumerate(d.get("apps", [])):
        base = f"apps[{i}]"
        kind = a.get("kind")
        if kind not in ("reqresp", "http10"):
            raise refuse(base + ".kind", f"{kind!r}: the testbed runs reqresp and http10 clients (and bulk [[flows]])")
        _only(a, APP_KEYS, base)
        for j, dr in enumerate(a.get("drops") or []):
            _only(dr, APP_DROP_KEYS, f"{base}.drops[{j}]")
        if a.get("mode", "twoway") != "twoway":
            raise refuse(base + ".mode", "one-way exchanges have no real counterpart")
        if int(a.get("instances", 1)) != 1:
            raise refuse(base + ".instances", "one instance per entry")
        if a.get("objects") is not None:
            raise refuse(base + ".objects", "pages of `objects` (ns-2's PagePool) are simulator-only; use embedded")
        if isinstance(a.get("server"), list):
            raise refuse(base + ".server", "one server per application")
        ra = next(rapps)
        cli, srv = node(ra["client"], base + ".client"), node(ra["server"], base + ".server")
        st = _settings(d, a, ra["tcp"]["client"], base, linux, stock, congctl)
        apply(st, srv, cli, base + ".tcp")
        plan.divergences += st["divergences"]
        req = size(ra["request"], base + ".request")
        resp = size(ra["response"], base + ".response")
        start, think = ra["start_ns"] / 1e9, dur(ra["think"], base + ".think")
        n = ra["count"]
        if n is None or n == "unlimited":
            raise refuse(base + (".count" if kind == "reqresp" else ".pages"), f"the testbed runs a finite number of {'exchanges' if kind == 'reqresp' else 'pages'}")
        if kind == "reqresp":
            pages, per = int(n), 1
        else:
            emb = ra["embedded"]
            if isinstance(emb, (dict, list, str)):
                raise refuse(base + ".embedded", "a constant number of embedded objects")
            pages, per = int(n), 1 + int(emb)
        if pages * per > 131:
            raise refuse(base + (".count" if kind == "reqresp" else ".pages"), "at most 131 objects per application (the simulator's port range of one application)")
        # The simulator's client ports (trace/capture.rs): 40000 + application · 131 + object.
        ports = [APP_PORT_BASE + i * 131 + o for o in range(1, pages * per + 1)]
        plan.jobs[cli].append({"kind": kind, "dst": plan.ip(srv), "dport": APP_PORT, "sports": ports, "request": req, "response": resp,
                               "start": start, "think": think, "pages": pages, "per_page": per, "label": base})
        plan.servers[srv].add(APP_PORT)
        for o, p in enumerate(ports):
            conn_order.append((start, Conn(f"{base} object {o + 1}", cli, srv, p, APP_PORT, srv)))
        plan.horizon_s = max(plan.horizon_s, start)
        capture(srv, cli)
        n0 = len(plan.drops)
        for j, dr in enumerate(ra["drops"]):
            _app_drop(plan, dr, f"{base}.drops[{j}]", cli, srv, ports, per, req, st["mss"])
        _data_match_with_timestamps(plan, n0, st)
    plan.conns = [c for _, c in sorted(conn_order, key=lambda x: x[0])]
    return plan, d


def _data_match_with_timestamps(plan: Plan, n0: int, st: dict) -> None:
    """Drops from `n0` on that count data packets: with timestamps on the kernel a pure ACK is 52
    bytes of IP, not 40, so data is longer than 52."""
    if st["timestamps"]:
        for d in plan.drops[n0:]:
            if d["match"] == "data":
                d["match"] = "data_ts"


def _settings(d: dict, entry: dict, rtcp: dict, base: str, linux: dict, stock: bool, congctl) -> dict:
    """`tcp_settings` of a flow or application; a refusal of a flow that does not run the `linux`
    profile says so."""
    profile = (entry.get("tcp") or {}).get("profile") or (d.get("tcp") or {}).get("profile") or "rfc"
    try:
        return tcp_settings(rtcp, entry.get("tcp") or {}, base + ".tcp", linux, stock, congctl, profile)
    except api._core.ScenarioError as e:
        if profile in ("linux", "linux6", untuned.TUNED_PROFILE):
            raise
        raise api._scenario_error(e.path, f"{e.reason} (profile {profile!r}: write profile = \"linux\" in [tcp], the stack the testbed compares against)") from None


def _transmissions(dr, path) -> list:
    t = dr.get("transmissions", [1])
    if any(int(x) > 20 for x in t):
        raise refuse(path + ".transmissions", "at most the 20th transmission is counted")
    return sorted({int(x) for x in t})


def _flow_drop(plan: Plan, dr: dict, path: str, src: str, dst: str, ports: list, mss: int) -> None:
    kind = dr["kind"]
    if dr.get("transfer") is not None:
        ports = [ports[int(dr["transfer"]) - 1]]
    if kind == "syn":
        plan.drops.append(dict(to=dst, frm=src, match="syn", ports=ports, port_field="sport", nth=_transmissions(dr, path), path=path))
    elif kind == "synack":
        plan.drops.append(dict(to=src, frm=dst, match="synack", ports=ports, port_field="dport", nth=_transmissions(dr, path), path=path))
    elif kind == "fin":
        plan.drops.append(dict(to=dst, frm=src, match="fin", ports=ports, port_field="sport", nth=_transmissions(dr, path), path=path))
    elif kind == "data":
        k = int(dr["segment"])
        if _transmissions(dr, path) != [1]:
            raise refuse(path + ".transmissions", "the delay box drops the first transmission of a segment (by its sequence number), not a retransmission")
        plan.seq_drops.append(dict(frm=src, ports=ports, port_field="sport", offsets=[(k - 1) * plan.payload(src, mss)], path=path))
    elif kind == "ack":
        k = int(dr["number"])
        if k > MAX_COUNTED:
            raise refuse(path + ".number", f"nftables counts up to ACK {MAX_COUNTED}")
        plan.drops.append(dict(to=src, frm=dst, match="ack", ports=ports, port_field="dport", nth=[k], path=path))
    else:
        raise refuse(path + ".kind", f"{kind!r}")


def _app_drop(plan: Plan, dr: dict, path: str, cli: str, srv: str, ports: list, per: int, req: int, mss: int) -> None:
    kind = dr["kind"]
    if dr.get("object") is not None:
        o = int(dr["object"])
        if o > len(ports):
            raise refuse(path + ".object", f"the application fetches {len(ports)} objects")
        ports = [ports[o - 1]]
    if kind == "syn":
        plan.drops.append(dict(to=srv, frm=cli, match="syn", ports=ports, port_field="sport", nth=_transmissions(dr, path), path=path))
    elif kind == "synack":
        plan.drops.append(dict(to=cli, frm=srv, match="synack", ports=ports, port_field="dport", nth=_transmissions(dr, path), path=path))
    elif kind == "request":
        if req > mss:
            raise refuse(path, f"the request ({req} B) takes more than one segment; nftables counts data packets")
        plan.drops.append(dict(to=srv, frm=cli, match="data", ports=ports, port_field="sport", nth=_transmissions(dr, path), path=path))
    elif kind == "response":
        k = int(dr.get("segment", 1))
        if _transmissions(dr, path) != [1]:
            raise refuse(path + ".transmissions", "the delay box drops the first transmission of a segment (by its sequence number), not a retransmission")
        plan.seq_drops.append(dict(frm=srv, ports=ports, port_field="dport", offsets=[(k - 1) * plan.payload(srv, mss)], path=path))
    else:
        raise refuse(path + ".kind", f"{kind!r}")
