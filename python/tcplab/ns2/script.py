"""From a scenario to an ns-2 (ns-2.35) Tcl script: nodes and duplex links, DropTail and RED
queues, random loss (`ErrorModel`), drops of chosen packets (`ErrorModel/List` behind an
`ErrorModule Fid`, as ns-2's own validation suites drop packets), ns-2's one-way agents
(`Agent/TCP`, `/Reno`, `/Newreno`, `/Sack1`, `/Fack`, `/SackRH` with `Agent/TCPSink`,
`/Sack1`, `/DelAck`) and FTP, UDP sources (CBR, Pareto and exponential ON/OFF, a per-packet
size mix in Tcl) and one-way web clients (`webapps.py`). The scenario is read as the core
validated it (every default written out), each flow's TCP settings as the core resolved them
(`tcplab.validate(tcp=True)`), and host groups, templated endpoints and the UDP sources' ON rates
from the core's resolved plan (`tcplab.resolve`);
whatever ns-2 cannot express is refused here with its key path, never silently dropped
(docs/ns2.md lists the subset).

A drop of a chosen packet ("data segment k, transmission n") has no counterpart in ns-2, whose
error models count packets, not sequence numbers: the script drops the packet at the position
that packet has in tcplab's own run of the scenario, among the packets of its flow offered to its
first link (`ErrorModel/List` counts from 0). Both simulators therefore drop the same packet as
long as they agree up to it; where they do not, the first divergence comes before the drop, and
`compare` shows it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

from .. import api
from .. import units

#: ns-2 agents for tcplab's variants (`tcl/lib/ns-default.tcl`, `tcp/tcp*.cc`).
AGENTS = {
    "tahoe": "Agent/TCP",
    "reno": "Agent/TCP/Reno",
    "newreno": "Agent/TCP/Newreno",
    "sack1": "Agent/TCP/Sack1",
    "fack": "Agent/TCP/Fack",
    "sack-rh": "Agent/TCP/SackRH",
}
SACK_VARIANTS = ("sack1", "fack", "sack-rh")
#: ns-2's two-way agents (`tcp/tcp-full.cc`), for connections with a FIN (the `ns2-full` profile).
FULL_AGENTS = {
    "tahoe": "Agent/TCP/FullTcp/Tahoe",
    "reno": "Agent/TCP/FullTcp",
    "newreno": "Agent/TCP/FullTcp/Newreno",
    "sack1": "Agent/TCP/FullTcp/Sack",
}

#: The TCP knobs and what the export does with them. "ns-2: X" is the agent variable set from the
#: knob; "fixed: v" means ns-2's agents behave as the knob's value v and other values are refused.
KNOB_MAP = {
    "variant": "ns-2: the agent class (tahoe Agent/TCP, reno /Reno, newreno /Newreno, sack1 /Sack1, fack /Fack, sack-rh /SackRH)",
    "sack": "ns-2: the sink class (TCPSink/Sack1 with a SACK variant)",
    "sack_blocks": "ns-2: the sink's maxSackBlocks_",
    "sack_option_header": "fixed: false with SACK for the one-way agents (Sacker::append_ack() adds 8 bytes a block), true for FullTcp/Sack",
    "sack_option_padding": "fixed: false for FullTcp/Sack (SackFullTcpAgent::hdrsize(): sack_option_size_ 2 + 8 bytes a block)",
    "mss": "ns-2: packetSize_ (payload bytes; the 40-byte header is added on the wire)",
    "initial_window": "ns-2: windowInit_ (whole segments)",
    "restart_after_idle": "ns-2: slow_start_restart_",
    "initial_ssthresh": "ns-2: ssthresh_ (whole segments; unlimited leaves ns-2's 0, no limit)",
    "rwnd": "ns-2: window_ (whole segments; unlimited: 100000)",
    "dupthresh": "ns-2: numdupacks_",
    "dupthresh_frac": "ns-2: numdupacksFrac_ (0 is ns-2's -1, off)",
    "recover_guard": "ns-2: bugFix_ of Agent/TCP and /Reno",
    "newreno_recover_guard": "ns-2: bugFix_ of /Newreno",
    "recover_guard_after_timeout_only": "fixed: false for the one-way agents, true for FullTcp (FullTcpAgent::dupack_action() fast-retransmits again while last_cwnd_action_ is DUPACK)",
    "sack1_grow_on_recovery_exit": "fixed: false for the one-way agents (Sack1TcpAgent::recv(): newack() only on the ACK that ends recovery), true for FullTcp (FullTcpAgent::recv(): opencwnd() after SackFullTcpAgent::ack_action())",
    "newreno_less_careful": "ns-2: lessCareful_",
    "newreno_ack_heuristic": "ns-2: bugFix_ack_",
    "exit_recovery_fix": "ns-2: exit_recovery_fix_ (/Newreno)",
    "partial_window_deflation": "ns-2: partial_window_deflation_ (/Newreno)",
    "slow_but_steady": "ns-2: newreno_changes1_ = not slow_but_steady (/Newreno)",
    "limited_transmit": "ns-2: singledup_ (with limited_transmit_send_one, ns-2's send_one())",
    "limited_transmit_send_one": "ns-2: singledup_ (see limited_transmit)",
    "max_burst": "ns-2: maxburst_",
    "aggressive_maxburst": "ns-2: aggressive_maxburst_",
    "handshake": "ns-2: syn_ (a 40-byte packet 0 the sink acknowledges)",
    "delayed_ack": "ns-2: the sink class (TCPSink/DelAck, TCPSink/Sack1/DelAck)",
    "delack_timeout": "ns-2: the DelAck sink's interval_",
    "delack_fill_immediate": "ns-2: the sink's RFC2581_immediate_ack_",
    "delack_dup_immediate": "fixed: false with delayed ACKs (DelAckSink::recv() delays the ACK of a copy of its highest in-order packet)",
    "rto_initial": "ns-2: rtxcur_init_",
    "rto_min": "ns-2: minrto_",
    "rto_max": "ns-2: maxrto_",
    "timer_tick": "ns-2: tcpTick_",
    "clock_granularity": "fixed: = timer_tick (ns-2's RTO is counted in ticks of tcpTick_)",
    "rto_model": "fixed: ns2 (rtt_update(), rtt_timeout() of tcp/tcp.cc)",
    "rto_backoff": "fixed: 2.0 (rtt_backoff() doubles)",
    "karn": "fixed: true",
    "fin": "fixed: false (one-way agents send no FIN)",
    "nagle": "fixed: false",
    "delack_bytes": "fixed: false (the DelAck sink counts packets)",
    "delack_segments": "fixed: 2 (the DelAck sink acknowledges every second packet)",
    "delack_tick": "fixed: 0s (the DelAck sink's timer runs from the packet)",
    "abc": "fixed: 0 (opencwnd() counts ACKs)",
    "early_retransmit": "fixed: false",
    "ssthresh_whole_segments": "fixed: true (slowdown(): ssthresh_ = ⌊windowd()/2⌋, whole packets whatever precisionReduce_)",
    "timeout_halves_window": "fixed: true (timeout())",
    "syn_timeout_ssthresh": "fixed: true (timeout() with the SYN outstanding)",
    "grow_on_recovery_exit": "fixed: true (recv_newack_helper())",
    "syn_timeout_rto_3s": "fixed: false",
    "iw_one_after": "fixed: 1 (bugfix_ss_)",
    "handshake_ack_alone": "fixed: true for FullTcp (FullTcpAgent::recv() in SYN_SENT, TF_ACKNOW), false for the one-way agents (no ACK of the sink's SYN-ACK)",
    "syn_ack_opens_cwnd": "fixed: true (FackTcpAgent::recv(), SackRHTcpAgent::recv(): the SYN's ACK opens cwnd_ without the reset to windowInit_)",
    "newreno_recovery_burst": "fixed: 2 (NewRenoTcpAgent::recv()'s send_much(0, 0, 2), newreno_changes_ 0; FullTcp/Newreno's recov_maxburst_ 2)",
    "newreno_burst_after_partial": "fixed: false for the one-way agents, true for FullTcp (NewRenoFullTcpAgent::pack_action() sets maxburst_ = recov_maxburst_ at a partial ACK)",
    "newreno_inflate_after_quiet_exit": "ns-2's one-way NewReno behaves as true (NewRenoTcpAgent::recv(): last_cwnd_action_ stays DUPACK after an exit with dupwnd_ 0, and duplicates past numdupacks_ inflate dupwnd_); false, every profile's value, is the difference class 'NewReno window inflated after recovery' (docs/ns2.md); FullTcp: false only",
    "halve_cwnd_unfloored": "fixed: true for the one-way agents (slowdown(CLOSE_CWND_HALF) with precisionReduce_ false: cwnd_ = ⌊window()/2⌋, only ssthresh_ floored at 2), false for FullTcp (FullTcpAgent::dupack_action(): cwnd_ = ssthresh_ + dupacks_)",
    "precision_reduce": "ns-2: precisionReduce_ (slowdown() sets cwnd_ to windowd()/2 unrounded; false: ⌊window()/2⌋, with halve_cwnd_unfloored); FullTcp: false only (its dupack_action() sets cwnd_ = ssthresh_ + dupacks_)",
    "grow_when_not_cwnd_limited": "ns-2's agents always grow (recv_newack_helper() calls opencwnd() on every new ACK); false, RFC 7661's rule, is exported as it is and differs where the window is not what limits the sender (docs/ns2.md)",
    "use_headers": "ns-2: useHeaders_ (false: TcpAgent::output() sizes a data packet packetSize_ bytes, without headersize(); written only when false); FullTcp: true only (FullTcpAgent counts its header whatever useHeaders_)",
    "delack_synack": "ns-2: the DelAck sink's SYN_immediate_ack_ = not delack_synack with syn_ (false also without syn_, where packet 0 is data and tcplab delays its ACK); FullTcp: false only",
    "ns2_rfc2988": "ns-2: rfc2988_ (false: rtt_timeout() floors t_rtxcur_ * t_backoff_ at minrto_ after the backoff, rtt_backoff() stops at 64; written only when false)",
    "syn_options": "ns-2's SYN carries no options: its packet 0 is 40 bytes (a difference, docs/ns2.md)",
    "handshake_rtt_sample": "ns-2 times the SYN like any packet",
    "synack_on_dup_syn": "no SYN-ACK in one-way agents (ignored)",
    "syn_retries": "ns-2 retries without limit (the difference shows only after this many timeouts)",
    "data_retries": "ns-2 retries without limit (the difference shows only after this many timeouts)",
    "cc": "fixed: reno (the exported agents' opencwnd() and slowdown())",
    "slow_start": "fixed: standard slow start (\"auto\" or \"standard\" with reno; ns-2's agents have no HyStart)",
    "cwnd_validation": "fixed: rfc5681 (slow_start_restart_ restarts from the initial window)",
    "loss": "fixed: dupthresh (the agents count duplicate ACKs; ns-2 has no RACK)",
    "tlp": "fixed: false (ns-2 has no tail loss probe)",
    "ecn": "fixed: off (the exported agents run with ecn_ 0 and queues without setbit_)",
    "reduction": "fixed: halve (ns-2's SACK agents set their window at once; no PRR)",
    "dsack": "fixed: false (ns-2's sinks send no D-SACK blocks)",
    "undo": "fixed: false (ns-2's agents never undo a reduction)",
    "frto": "fixed: false (ns-2's agents have no F-RTO)",
    "syn_linear_timeouts": "fixed: 0 (ns-2 doubles the SYN's timeout from the first)",
}
FIXED = {
    "rto_model": "ns2", "rto_backoff": 2.0, "karn": True, "fin": False, "nagle": False, "delack_bytes": False,
    "abc": 0, "early_retransmit": False, "ssthresh_whole_segments": True, "timeout_halves_window": True,
    "syn_timeout_ssthresh": True, "grow_on_recovery_exit": True, "syn_timeout_rto_3s": False, "iw_one_after": 1,
    "syn_ack_opens_cwnd": True,
    "cc": "reno", "cwnd_validation": "rfc5681", "loss": "dupthresh", "tlp": False, "ecn": "off", "reduction": "halve",
    "dsack": False, "undo": False, "frto": False, "syn_linear_timeouts": 0,
}
#: Knobs fixed to one value for the one-way agents and another for FullTcp: (one-way, FullTcp).
BY_AGENT_KIND = {
    "handshake_ack_alone": (False, True), "halve_cwnd_unfloored": (True, False), "newreno_recovery_burst": (2, 2),
    "newreno_burst_after_partial": (False, True),
    "recover_guard_after_timeout_only": (False, True), "sack1_grow_on_recovery_exit": (False, True),
}
DELACK_FIXED = {"delack_segments": 2, "delack_tick": "0s", "delack_dup_immediate": False}

#: A queue without a limit: ns-2's queue-limit cannot be infinite.
UNLIMITED_QUEUE = 1_000_000
#: Without `duration`, a run with FullTcp connections ends this long after the last start.
FULL_HORIZON_S = 600.0
#: An unlimited receive window: ns-2's window_ must be a number of packets.
UNLIMITED_WINDOW = 100_000
FLOW_KEYS = {"name", "from", "to", "count", "start", "start_spacing", "bytes", "repeat", "think", "tcp", "drops", "delays"}
DROP_KEYS = {"kind", "segment", "number", "transmissions", "transfer"}


def refuse(path: str, why: str) -> Exception:
    return api._scenario_error(path, f"ns-2 cannot express this: {why}")


def _q(read, v: Any, path: str, what: str, number_scale: Optional[float]) -> float:
    """A validated quantity (the core writes units out) in the table's base unit, read by the
    core's own parser (`tcplab.units`); a plain number is taken as `number_scale` base units
    where the scenario allows one."""
    if isinstance(v, (int, float)) and not isinstance(v, bool) and number_scale is not None:
        return float(v) * number_scale
    try:
        return float(read(v, path))
    except ValueError:
        raise refuse(path, f"expected a constant {what}, got {v!r} (random variables are not exported)") from None


def seconds(v, path) -> float:
    return _q(units.seconds, v, path, "duration", 1.0)


def nbytes(v, path) -> int:
    return int(round(_q(units.size_bytes, v, path, "size", 1.0)))


def bps(v, path) -> float:
    return _q(units.rate_bps, v, path, "rate", None)


def _g(x: float) -> str:
    """A number as Tcl reads it back exactly (repr round-trips a double)."""
    return repr(float(x)) if not float(x).is_integer() else str(int(x))


@dataclass
class Link:
    name: str
    a: str
    b: str
    rate_bps: float
    delay_s: float
    queue: dict
    reverse_queue: dict
    loss: float
    reverse_loss: float
    path: str


@dataclass
class Conn:
    """One TCP connection of the script: tcplab's connection `conn` is ns-2's flow id `conn`."""
    conn: int
    flow: str
    src: str
    dst: str
    agent: str
    sink: str
    mss: int
    syn: bool
    packets: Optional[int]       # None: unlimited (FTP start)
    start_s: float
    path: str
    full: bool = False           # two-way FullTcp: byte sequence numbers, ACK numbers and flags in the trace


@dataclass
class Script:
    """An exported scenario: the Tcl text (its first argument names the trace file) and what the
    trace reader needs to map ns-2's packets back to tcplab's columns."""
    tcl: str
    nodes: list                  # node names, ns-2 node id = index
    links: list                  # Link
    conns: list                  # Conn, by tcplab connection index
    horizon_s: float
    notes: list = field(default_factory=list)
    #: Connections the script opens as it runs (request/response exchanges): {"base": first flow
    #: id, "mss": their packet size}; their flow ids follow in the order they open.
    dynamic: Optional[dict] = None


def _queue(q: Any, path: str) -> dict:
    if q is None:
        return {"kind": "droptail", "packets": None}
    if not isinstance(q, dict):
        raise refuse(path, f"expected a queue table, got {q!r}")
    if q.get("bytes") is not None:
        raise refuse(path + ".bytes", "byte limits are not exported (ns-2's queue-limit counts packets)")
    kind = q.get("kind", "droptail")
    if kind not in ("droptail", "red"):
        raise refuse(path + ".kind", f"{kind!r}: ns-2 queues exported are DropTail and RED")
    if q.get("mark_threshold") is not None:
        raise refuse(path + ".mark_threshold", "step CE marking is not exported (the agents run without ECN)")
    out = {"kind": kind, "packets": q.get("packets")}
    if kind == "red":
        red = q.get("red") or {}
        if red.get("byte_mode") or red.get("queue_in_bytes"):
            raise refuse(path + ".red", "RED in byte mode is not exported")
        if red.get("ecn"):
            raise refuse(path + ".red.ecn", "RED's CE marking (setbit_) is not exported (the agents run without ECN)")
        out["red"] = red
    return out


def _plan_links(t: dict, plan: dict) -> tuple:
    """Nodes and links of a topology with host groups, from the core's resolved plan (`tcplab.resolve`):
    the groups expanded as the core expands them (each member a node with its own access link,
    its delay drawn per node and seed), so the two simulators never disagree on the network.
    Link order is the plan's: the topology's own links first, then each member's access link."""
    names = {}
    if t.get("kind") == "custom":
        names = {(lk.get("name") or f"link{i}"): f"topology.links[{i}]" for i, lk in enumerate(t["links"])}
    own = {"single_link": "topology", "dumbbell": "topology"}.get(t.get("kind"))
    nodes, links, members = list(plan["nodes"]), [], _group_members(t, plan)
    for i, lk in enumerate(plan["links"]):
        # An unnamed link of a custom topology is "link<i>" (the topology's links come first).
        name = lk["name"] or f"link{i}"
        p = names.get(name) or ("topology.groups" if lk["a"] in members or lk["b"] in members else own or "topology")
        rq = lk.get("reverse_queue") or lk["queue"]
        links.append(Link(name, lk["a"], lk["b"], float(lk["rate_bps"]), lk["delay_ns"] / 1e9, _queue(lk["queue"], p + ".queue"),
                          _queue(rq, p + ".reverse_queue"), float(lk.get("loss", 0)), float(lk.get("reverse_loss", 0)), p))
    return nodes, links


def _group_members(t: dict, plan: dict) -> set:
    """The nodes the host groups added (those of the plan the topology does not name)."""
    kind = t.get("kind")
    if kind == "custom":
        base = set(t["nodes"])
    elif kind == "single_link":
        base = {"sender", "receiver"}
    else:
        n = int(t.get("pairs", 0))
        base = {f"s{i}" for i in range(1, n + 1)} | {f"r{i}" for i in range(1, n + 1)} | {"left", "right"}
    return set(plan["nodes"]) - base


def _links(t: dict, plan: Optional[dict] = None) -> tuple:
    kind = t.get("kind")
    if t.get("loss_pattern", "random") != "random":
        raise refuse("topology.loss_pattern", "only random loss (ErrorModel with a uniform variable) is exported")
    if t.get("groups"):
        if kind not in ("single_link", "dumbbell", "custom"):
            raise refuse("topology.kind", f"{kind!r}: exported topologies are single_link, dumbbell and custom")
        return _plan_links(t, plan)
    links = []
    if kind == "single_link":
        nodes = ["sender", "receiver"]
        q = _queue(t.get("queue"), "topology.queue")
        links.append(Link("link", "sender", "receiver", bps(t["rate"], "topology.rate"), seconds(t["delay"], "topology.delay"),
                          q, q, float(t.get("loss", 0)), float(t.get("reverse_loss", 0)), "topology"))
    elif kind == "custom":
        nodes = list(t["nodes"])
        for i, lk in enumerate(t["links"]):
            p = f"topology.links[{i}]"
            q = _queue(lk.get("queue"), p + ".queue")
            rq = _queue(lk["reverse_queue"], p + ".reverse_queue") if lk.get("reverse_queue") is not None else q
            links.append(Link(lk.get("name") or f"link{i}", lk["a"], lk["b"], bps(lk["rate"], p + ".rate"), seconds(lk["delay"], p + ".delay"),
                              q, rq, float(lk.get("loss", 0)), float(lk.get("reverse_loss", 0)), p))
    elif kind == "dumbbell":
        n = int(t["pairs"])
        ad = t["access_delay"]
        ads = [seconds(x, f"topology.access_delay[{i}]") for i, x in enumerate(ad)] if isinstance(ad, list) else [seconds(ad, "topology.access_delay")] * n
        ar = bps(t["access_rate"], "topology.access_rate")
        aq = _queue(t.get("access_queue"), "topology.access_queue")
        nodes = [f"s{i}" for i in range(1, n + 1)] + ["left", "right"] + [f"r{i}" for i in range(1, n + 1)]
        q = _queue(t.get("queue"), "topology.queue")
        links.append(Link("bottleneck", "left", "right", bps(t["bottleneck_rate"], "topology.bottleneck_rate"),
                          seconds(t["bottleneck_delay"], "topology.bottleneck_delay"), q, q, float(t.get("loss", 0)),
                          float(t.get("reverse_loss", 0)), "topology"))
        for i in range(n):
            links.append(Link(f"access_s{i + 1}", f"s{i + 1}", "left", ar, ads[i], aq, aq, 0.0, 0.0, "topology"))
            links.append(Link(f"access_r{i + 1}", "right", f"r{i + 1}", ar, ads[i], aq, aq, 0.0, 0.0, "topology"))
    else:
        raise refuse("topology.kind", f"{kind!r}: exported topologies are single_link, dumbbell and custom")
    return nodes, links


def route(nodes: list, links: list, src: str, dst: str) -> list:
    """The (from, to) hops of the path with the fewest hops, ties to the link declared first (the
    core's rule; ns-2's static routing agrees on the topologies exported)."""
    adj = {n: [] for n in nodes}
    for lk in links:
        adj[lk.a].append(lk.b)
        adj[lk.b].append(lk.a)
    prev = {src: None}
    todo = [src]
    while todo:
        nxt = []
        for v in todo:
            for w in adj[v]:
                if w not in prev:
                    prev[w] = v
                    nxt.append(w)
        todo = nxt
    if dst not in prev:
        return []
    path, v = [], dst
    while prev[v] is not None:
        path.insert(0, (prev[v], v))
        v = prev[v]
    return path


#: What differs for the two-way FullTcp agents (`fin = true`, the `ns2-full` profile): these knobs
#: map onto FullTcp's own variables instead of being fixed.
FULL_FREE = ("fin", "nagle", "delack_bytes")


def _check_full(k: dict, path) -> None:
    if not k["handshake"]:
        raise refuse(path("handshake"), "ns-2's FullTcp always opens with a SYN (handshake = true with fin = true)")
    if k["variant"] not in FULL_AGENTS:
        raise refuse(path("variant"), f"{k['variant']!r}: ns-2's FullTcp agents are {', '.join(FULL_AGENTS)}")
    if k["delayed_ack"]:
        if not k["delack_bytes"] or seconds(k["delack_timeout"], path("delack_timeout")) != 0:
            raise refuse(path("delayed_ack"), "FullTcp delays ACKs by bytes (delack_bytes) on its periodic timer (delack_timeout = 0s, delack_tick = interval_)")
    if k["sack"] != (k["variant"] == "sack1"):
        raise refuse(path("sack"), "FullTcp/Sack is the SACK agent: sack = true with variant sack1 only")


def _check_tcp(k: dict, own: dict, base: str) -> None:
    def path(name):
        return f"{base}.{name}" if name in own else f"tcp.{name}"

    full = bool(k["fin"])
    for name, v in FIXED.items():
        if full and name in FULL_FREE:
            continue
        if k.get(name, v) != v:
            raise refuse(path(name), f"{name} = {k[name]!r}: ns-2's agents behave as {name} = {v!r} ({KNOB_MAP[name]})")
    if k.get("slow_start", "auto") not in ("auto", "standard"):
        raise refuse(path("slow_start"), f"slow_start = {k['slow_start']!r}: {KNOB_MAP['slow_start']}")
    if full:
        _check_full(k, path)
    if k["delayed_ack"] and not full:
        for name, v in DELACK_FIXED.items():
            if k[name] != v:
                raise refuse(path(name), f"{name} = {k[name]!r}: {KNOB_MAP[name]}")
    if not full and k["variant"] not in AGENTS:
        raise refuse(path("variant"), f"{k['variant']!r}: the exported agents are {', '.join(AGENTS)} (ns-2's one-way agents)")
    if not full and k["sack"] and k["variant"] not in SACK_VARIANTS:
        raise refuse(path("sack"), f"SACK with variant {k['variant']!r}: ns-2's SACK agents are Sack1, Fack and SackRH")
    if not full and k["sack"] and k.get("sack_option_header", False):
        raise refuse(path("sack_option_header"), f"sack_option_header = true: {KNOB_MAP['sack_option_header']}")
    if full and k.get("newreno_inflate_after_quiet_exit", False):
        raise refuse(path("newreno_inflate_after_quiet_exit"), "newreno_inflate_after_quiet_exit = true: FullTcp/Newreno has no such rule "
                     "(it is NewRenoTcpAgent::recv()'s, the one-way agent's)")
    if full and k["variant"] == "newreno" and k.get("partial_window_deflation", False):
        raise refuse(path("partial_window_deflation"), "partial_window_deflation = true: FullTcp/Newreno's pack_action() sets cwnd_ to "
                     "ssthresh_ on a partial ACK (partial_window_deflation = false)")
    for name, (one_way, two_way) in BY_AGENT_KIND.items():
        want = two_way if full else one_way
        if k.get(name, want) != want:
            raise refuse(path(name), f"{name} = {k[name]!r}: {KNOB_MAP[name]}")
    if full and k["sack"] and (not k.get("sack_option_header", True) or k.get("sack_option_padding", True)):
        name = "sack_option_header" if not k.get("sack_option_header", True) else "sack_option_padding"
        raise refuse(path(name), f"{name} = {k.get(name, True)!r}: ns-2's FullTcp/Sack counts 2 + 8 bytes a block ({KNOB_MAP['sack_option_padding']})")
    if full and k.get("delack_synack", False):
        raise refuse(path("delack_synack"), f"delack_synack = true: {KNOB_MAP['delack_synack']}")
    if full and not k.get("use_headers", True):
        raise refuse(path("use_headers"), f"use_headers = false: {KNOB_MAP['use_headers']}")
    if full and k.get("precision_reduce", False):
        raise refuse(path("precision_reduce"), f"precision_reduce = true: {KNOB_MAP['precision_reduce']}")
    if k["limited_transmit"] != k["limited_transmit_send_one"]:
        raise refuse(path("limited_transmit"), "ns-2's Limited Transmit is send_one() (singledup_): limited_transmit and limited_transmit_send_one together")
    if abs(seconds(k["clock_granularity"], path("clock_granularity")) - seconds(k["timer_tick"], path("timer_tick"))) > 1e-12:
        raise refuse(path("clock_granularity"), f"{KNOB_MAP['clock_granularity']}")


def _agent_lines(v: str, k: dict, mss: int, base: str, own: dict) -> list:
    def path(name):
        return f"{base}.{name}" if name in own else f"tcp.{name}"

    iw = k["initial_window"]
    if isinstance(iw, bool) or not isinstance(iw, int):
        raise refuse(path("initial_window"), f"{iw!r}: ns-2's windowInit_ is a number of segments (write an integer)")
    # ns-2's window_ is a number of packets; "unlimited" is one no run reaches.
    rwnd = UNLIMITED_WINDOW * mss if k["rwnd"] == "unlimited" else nbytes(k["rwnd"], path("rwnd"))
    if rwnd % mss:
        raise refuse(path("rwnd"), f"{rwnd} B is not a whole number of {mss}-byte segments (ns-2's window_ counts packets)")
    sets = {
        "packetSize_": mss, "window_": rwnd // mss, "windowInit_": iw, "syn_": int(bool(k["handshake"])),
        "numdupacks_": int(k["dupthresh"]), "numdupacksFrac_": int(k["dupthresh_frac"]) or -1,
        "maxburst_": int(k["max_burst"]), "aggressive_maxburst_": int(bool(k["aggressive_maxburst"])),
        "singledup_": int(bool(k["limited_transmit"])), "slow_start_restart_": int(bool(k["restart_after_idle"])),
        "rtxcur_init_": _g(seconds(k["rto_initial"], path("rto_initial"))), "minrto_": _g(seconds(k["rto_min"], path("rto_min"))),
        "maxrto_": _g(seconds(k["rto_max"], path("rto_max"))), "tcpTick_": _g(seconds(k["timer_tick"], path("timer_tick"))),
        "lessCareful_": int(bool(k["newreno_less_careful"])), "bugFix_ack_": int(bool(k["newreno_ack_heuristic"])),
        # ssthresh_whole_segments: slowdown() truncates ssthresh_ to whole packets either way;
        # cwnd_ becomes the whole-packet ⌊window()/2⌋ with precisionReduce_ false (ns-2 before
        # 2006), or windowd()/2 unrounded with ns-2.35's default true (precision_reduce),
        # tcp/tcp.cc.
        "precisionReduce_": int(bool(k.get("precision_reduce", False))),
    }
    if not k["handshake"]:
        # Without a handshake tcplab's sender grows cwnd on the first ACK as on any: ns-2's
        # delay_growth_ false (true, its default, resets cwnd_ to windowInit_ on the ACK of
        # packet 0: TcpAgent::recv(), `last_ack_ == 0 && delay_growth_`, tcp/tcp.cc).
        sets["delay_growth_"] = "false"
    if not k.get("use_headers", True):
        sets["useHeaders_"] = "false"          # TcpAgent::output(): no headersize() on data packets
    if not k.get("ns2_rfc2988", True):
        sets["rfc2988_"] = "false"             # rtt_timeout(), rtt_backoff(): the rule before RFC 2988
    sets["bugFix_"] = int(bool(k["newreno_recover_guard"] if v == "newreno" else k["recover_guard"]))
    if k["initial_ssthresh"] != "unlimited":
        ss = nbytes(k["initial_ssthresh"], path("initial_ssthresh"))
        sets["ssthresh_"] = max(1, ss // mss)
    if k["fin"]:
        # FullTcp (tcp/tcp-full.cc): segsize_ is its MSS, tcprexmtthresh_ its dupthresh, ACKs
        # every segsperack_ segments' bytes or on the interval_ timer, Nagle unless nodelay_.
        del sets["packetSize_"], sets["syn_"], sets["numdupacks_"], sets["numdupacksFrac_"], sets["singledup_"]
        sets.update({"segsize_": mss, "tcprexmtthresh_": int(k["dupthresh"]), "iss_": 0, "data_on_syn_": 0,
                     "nodelay_": int(not k["nagle"]),
                     "segsperack_": int(k["delack_segments"]) if k["delayed_ack"] else 1,
                     "interval_": _g(seconds(k["delack_tick"], path("delack_tick"))) if k["delayed_ack"] else 0})
    if v == "newreno":
        sets["exit_recovery_fix_"] = int(bool(k["exit_recovery_fix"]))
        sets["partial_window_deflation_"] = int(bool(k["partial_window_deflation"]))
        sets["newreno_changes1_"] = int(not k["slow_but_steady"])
    return [f"$tcp({{}}) set {name} {val}" for name, val in sets.items()]


def _sink_class(k: dict) -> str:
    sink = "Agent/TCPSink/Sack1" if k["sack"] else "Agent/TCPSink"
    return sink + "/DelAck" if k["delayed_ack"] else sink


def _sink_lines(k: dict, var: str, new: bool = False) -> list:
    """The sink of a one-way agent (`tcp/tcp-sink.cc`), as `var` (`set` first when `new`)."""
    out = [f"set {var.lstrip('$')} [new {_sink_class(k)}]"]
    if k["sack"]:
        out.append(f"{var} set maxSackBlocks_ {int(k['sack_blocks'])}")
    out.append(f"{var} set RFC2581_immediate_ack_ {int(bool(k['delack_fill_immediate']))}")
    if k["delayed_ack"]:
        out.append(f"{var} set interval_ {_g(seconds(k['delack_timeout'], 'tcp.delack_timeout'))}")
        if not k["handshake"] or k.get("delack_synack", False):
            # Without syn_, packet 0 is data: tcplab's receiver delays its ACK as any in-order
            # segment's; with it, packet 0 is the SYN, delayed with `delack_synack`. ns-2.35's
            # DelAck sink acknowledges packet 0 at once unless SYN_immediate_ack_ is false
            # (DelAckSink::recv(), tcp/tcp-sink.cc; true since 2010, the suites before it set it
            # false).
            out.append(f"{var} set SYN_immediate_ack_ false")
    return out


def _oneway_agent(k: dict) -> str:
    return AGENTS[k["variant"]]


UDP_KINDS = ("cbr", "onoff")
#: Request/response, web and FTP clients: one-way exchanges (tcplab.ns2.webapps: reqresp, http10
#: pages of WebTraf) and two-way ones on FullTcp (tcplab.ns2.fullweb: reqresp, http10, http11, ftp).
WEB_KINDS = ("reqresp", "http10", "http11", "ftp")
#: ns-2 flow ids of UDP sources: UDP_FID_BASE + the application's index (TCP connections use 0...).
UDP_FID_BASE = 100_000
UDP_KEYS = {"kind", "name", "from", "to", "start", "stop", "rate", "mean_rate", "aggregate_rate", "packet", "on", "off", "interval",
            "jitter", "count", "instances", "embedded", "think", "tcp"}


def _udp_lines_at(d: dict, plan: dict, idx: dict, where: list) -> list:
    """The UDP sources: `Agent/UDP` to an `Agent/Null`, driven by `Application/Traffic/CBR`
    (`cbr`), `/Pareto` (`onoff` with Pareto ON and OFF of one shape) or `/Exponential` (`onoff`
    with exponential ON and OFF), or, for an ON/OFF source whose packet size is a mix drawn per
    packet, by a Tcl procedure doing what `POO_Traffic::next_interval()` does (`tools/pareto.cc`)
    with the size drawn per packet, as tcplab's source does (`app/traffic.rs`). Each entry's
    `instances` are the plan's sources, in order, with their endpoints and the ON rate the core
    derived (from `mean_rate` or `aggregate_rate`). ns-2 draws from its own random streams:
    compare such runs as statistics."""
    out = []
    rapps = iter(plan["apps"])
    n = 0
    for i, a in zip(where, d["apps"]):
        base = f"apps[{i}]"
        for k in a:
            if k not in UDP_KEYS:
                raise refuse(f"{base}.{k}", f"`{k}` is not exported for UDP sources")
        if a.get("packet") is None:
            raise refuse(base + ".packet", "write the packet size: the export takes only what the validated scenario writes out")
        if a["kind"] == "onoff" and (a.get("on") is None or a.get("off") is None):
            raise refuse(base + (".on" if a.get("on") is None else ".off"), "write the ON and OFF distributions: the export takes only what the validated scenario writes out")
        for _ in range(int(a.get("instances", 1))):
            out += _udp_source(n, a, next(rapps), base, idx)
            n += 1
    return out


def _app_lines(d: dict, plan: dict, idx: dict) -> tuple:
    """The applications in the plan's order: (UDP sources' lines, request/response sessions' lines,
    whether those sessions are two-way)."""
    from . import fullweb, webapps

    udp_d = {"apps": [a for a in d["apps"] if a["kind"] in UDP_KINDS]}
    udp_plan = {"apps": [ra for ra in plan["apps"] if ra["kind"] in UDP_KINDS]}
    udp = _udp_lines_at(udp_d, udp_plan, idx, [i for i, a in enumerate(d["apps"]) if a["kind"] in UDP_KINDS]) if udp_d["apps"] else []
    rr, n = [], 0
    rapps = iter(ra for ra in plan["apps"] if ra["kind"] in WEB_KINDS)
    two_way = None
    for i, a in enumerate(d["apps"]):
        if a["kind"] not in WEB_KINDS:
            continue
        base = f"apps[{i}]"
        full = a.get("mode", "twoway") != "oneway"
        if two_way is not None and full != two_way:
            # The trace reader numbers a one-way exchange's two flow ids as one connection, a
            # two-way exchange's one: one way or the other per script.
            raise refuse(base + ".mode", "one-way and two-way clients in one scenario are not exported together")
        two_way = full
        for _ in range(int(a.get("instances", 1))):
            if full:
                rr += fullweb.lines(n, a, next(rapps), base, idx, refuse=refuse, seconds=seconds, nbytes=nbytes, check_tcp=_check_tcp,
                                    agent_lines=_agent_lines, full_agents=FULL_AGENTS)
            else:
                if a["kind"] == "ftp":
                    raise refuse(base + ".mode", "an FTP client is exported two-way (FullTcp); ns-2's one-way clients are reqresp and http10")
                rr += webapps.reqresp_lines(n, a, next(rapps), base, idx, refuse=refuse, seconds=seconds, nbytes=nbytes,
                                            check_tcp=_check_tcp, agent_class=_oneway_agent, agent_lines=_agent_lines, sink_lines=_sink_lines)
            n += 1
    return udp, rr, bool(two_way)


def _packet_mix(v, path: str) -> Optional[list]:
    """A packet size as [(probability, bytes), ...]; None for a constant."""
    if isinstance(v, dict) and set(v) == {"mix"}:
        return [(float(e["p"]), nbytes(e["value"], path)) for e in v["mix"]]
    if isinstance(v, dict):
        raise refuse(path, f"{v!r}: a UDP packet size is a constant or a mix (ns-2's sources draw no other size)")
    return None


def _udp_source(n: int, a: dict, ra: dict, base: str, idx: dict) -> list:
    src, dst = ra["client"], ra["server"]
    for key, node in ((".from", src), (".to", dst)):
        if node not in idx:
            raise refuse(base + key, f"{node!r} is not a node")
    tr = ra["traffic"]
    rate = float(tr["rate_bps"])
    mix = _packet_mix(tr["packet"], base + ".packet")
    size = max(s for _, s in mix) if mix else nbytes(tr["packet"], base + ".packet")
    start = ra["start_ns"] / 1e9
    stop = tr["stop_ns"] / 1e9 if tr.get("stop_ns") is not None else None
    count = ra.get("count")
    count = None if count in (None, "unlimited") else int(count)
    fid = UDP_FID_BASE + n
    if rate <= 0:
        # A source of rate 0 sends nothing in tcplab (no packet at any time); ns-2's generators
        # would divide by it.
        return [f"# UDP source {n}: {base} {ra['name']} ({a['kind']}) {src} -> {dst}: rate 0, sends nothing"]
    out = [f"# UDP source {n}: {base} {ra['name']} ({a['kind']}) {src} -> {dst}",
           f"set udp({n}) [new Agent/UDP]", f"$udp({n}) set fid_ {fid}", f"$udp({n}) set packetSize_ {size}",
           f"set null({n}) [new Agent/Null]", f"$ns attach-agent $n({idx[src]}) $udp({n})", f"$ns attach-agent $n({idx[dst]}) $null({n})",
           f"$ns connect $udp({n}) $null({n})"]
    if a["kind"] == "cbr":
        if mix:
            raise refuse(base + ".packet", "a CBR source of one packet size (CBR_Traffic's packetSize_)")
        if tr["pattern"].get("interval_ns") is not None:
            raise refuse(base + ".interval", "CBR_Traffic's interval comes from rate_ and packetSize_ here (write rate)")
        # CBR_Traffic (tools/cbr_traffic.cc): rate_ and packetSize_, random_ for the jitter.
        out += [f"set app({n}) [new Application/Traffic/CBR]", f"$app({n}) set packetSize_ {size}", f"$app({n}) set rate_ {_g(rate)}",
                f"$app({n}) set random_ {int(bool(tr['pattern'].get('jitter')))}"]
    else:
        on, off = tr["pattern"]["on"], tr["pattern"]["off"]
        if isinstance(on, dict) and isinstance(off, dict) and "pareto" in on and "pareto" in off:
            pon, poff = on["pareto"], off["pareto"]
            if "mean" not in pon or "mean" not in poff or pon.get("shape") != poff.get("shape"):
                raise refuse(base + ".off", "Application/Traffic/Pareto takes one shape_ and the two means")
            kind, shape = "Pareto", float(pon["shape"])
            on_s, off_s = seconds(pon["mean"], base + ".on"), seconds(poff["mean"], base + ".off")
        elif isinstance(on, dict) and isinstance(off, dict) and "exponential" in on and "exponential" in off:
            kind, shape = "Exponential", None
            on_s, off_s = seconds(on["exponential"], base + ".on"), seconds(off["exponential"], base + ".off")
        else:
            raise refuse(base + ".on", "ns-2's ON/OFF sources are Pareto (both ON and OFF) or exponential (both)")
        if mix:
            return out + _mixed_onoff(n, kind, shape, on_s, off_s, rate, mix, start, stop, count)
        out += [f"set app({n}) [new Application/Traffic/{kind}]"]
        if shape is not None:
            out.append(f"$app({n}) set shape_ {_g(shape)}")
        out += [f"$app({n}) set burst_time_ {_g(on_s)}", f"$app({n}) set idle_time_ {_g(off_s)}",
                f"$app({n}) set packetSize_ {size}", f"$app({n}) set rate_ {_g(rate)}"]
    if count is not None:
        out.append(f"$app({n}) set maxpkts_ {count}")
    out += [f"$app({n}) attach-agent $udp({n})", f"$ns at {_g(start)} \"$app({n}) start\""]
    if stop is not None:
        out.append(f"$ns at {_g(stop)} \"$app({n}) stop\"")
    return out


#: The Tcl procedures of an ON/OFF source whose packet size is drawn per packet (written once).
MIXED_ONOFF_PROCS = r"""# An ON/OFF source with a packet size drawn per packet: POO_Traffic / EXPOO_Traffic's
# next_interval() (tools/pareto.cc, tools/expoo.cc) with the size drawn per packet, as tcplab's
# source does (each packet followed by its own interval at the ON rate; a burst's length in
# packets is the ON draw over the mean interval, rounded, at least one; one OFF draw before it).
proc mix_next {i prev} {
    global ns mix_rate mix_rem mix_on mix_off mix_u mix_cum mix_size mix_next_size mix_stop mix_left
    if {$mix_left($i) == 0} { return }
    set u [$mix_u($i) value]
    set size [lindex $mix_size($i) end]
    foreach c $mix_cum($i) s $mix_size($i) { if {$u < $c} { set size $s; break } }
    set t [expr {($prev > 0 ? $prev : $size) * 8.0 / $mix_rate($i)}]
    if {$mix_rem($i) == 0} {
        set mix_rem($i) [expr {int([$mix_on($i) value] + 0.5)}]
        if {$mix_rem($i) == 0} { set mix_rem($i) 1 }
        set t [expr {$t + [$mix_off($i) value]}]
    }
    incr mix_rem($i) -1
    set at [expr {[$ns now] + $t}]
    if {$mix_stop($i) >= 0 && $at > $mix_stop($i)} { return }
    set mix_next_size($i) $size
    $ns at $at "mix_send $i"
}
proc mix_send {i} {
    global udp mix_next_size mix_left
    $udp($i) send $mix_next_size($i)
    if {$mix_left($i) > 0} { incr mix_left($i) -1 }
    mix_next $i $mix_next_size($i)
}
"""


def _mixed_onoff(n: int, kind: str, shape, on_s: float, off_s: float, rate: float, mix: list, start: float, stop, count) -> list:
    mean = sum(p * s for p, s in mix) / sum(p for p, _ in mix)
    # The burst length in packets has the mean ON time over the mean interval (POO_Traffic::init()).
    mean_iv = mean * 8.0 / rate
    tot, cum = sum(p for p, _ in mix), []
    acc = 0.0
    for p, _ in mix:
        acc += p / tot
        cum.append(acc)
    out = []
    for name, avg in (("on", on_s / mean_iv), ("off", off_s)):
        out += [f"set mix_{name}({n}) [new RandomVariable/{kind}]", f"$mix_{name}({n}) set avg_ {_g(avg)}"]
        if shape is not None:
            out.append(f"$mix_{name}({n}) set shape_ {_g(shape)}")
    out += [f"set mix_u({n}) [new RandomVariable/Uniform]", f"set mix_cum({n}) {{{' '.join(_g(c) for c in cum)}}}",
            f"set mix_size({n}) {{{' '.join(str(s) for _, s in mix)}}}", f"set mix_rate({n}) {_g(rate)}", f"set mix_rem({n}) 0",
            f"set mix_stop({n}) {_g(stop) if stop is not None else -1}", f"set mix_left({n}) {count if count is not None else -1}",
            f"$ns at {_g(start)} \"mix_next {n} 0\""]
    return out


def _drop_positions(scenario, sets, seed) -> dict:
    """Where tcplab's run dropped chosen packets: {(conn, dir): [position among that
    connection's packets in that direction as they leave their host, from 0]}."""
    r = api.run(scenario, sets=sets, seed=seed, series=["segments", "drops"])
    seg, drops = r.series.segments, r.series.drops
    out: dict = {}
    if drops is None or len(drops) == 0:
        return out
    dr = drops[drops["reason"] == "filter"]
    tx = seg[seg["event"] == "tx"]
    for (c, d), grp in tx.groupby(["conn", "dir"], observed=True):
        keys = list(zip(grp["time_s"].round(12), grp["seq"], grp["tx"], grp["syn"], grp["ack"].fillna(-1)))
        mine = dr[(dr["conn"] == c) & (dr["dir"] == d)]
        for t, seq, txn, syn in zip(mine["time_s"].round(12), mine["seq"], mine["tx"], mine["syn"]):
            pos = next((i for i, kk in enumerate(keys) if kk[0] == t and kk[1] == seq and kk[2] == txn and kk[3] == syn), None)
            if pos is not None:
                out.setdefault((int(c), str(d)), []).append(pos)
    return {k: sorted(v) for k, v in out.items()}


def _delay_positions(scenario, sets, seed, d: dict, resolved: dict) -> dict:
    """Where tcplab's run held chosen packets back (`flows[i].delays`): {(conn, dir): (by in s,
    [position among that connection's packets in that direction as they leave their host, from
    0])}. ns-2's delay model holds every listed packet for one `delay_`: the delays of a flow's
    direction must share one `by`. The packets are found by what the delay names (data segment k
    and its transmissions, the k-th pure ACK, the SYN), in tcplab's sending order."""
    out: dict = {}
    flows = d.get("flows", [])
    if any(int(f.get("count", 1)) != 1 and f.get("delays") for f in flows):
        i = next(i for i, f in enumerate(flows) if int(f.get("count", 1)) != 1 and f.get("delays"))
        raise refuse(f"flows[{i}].delays", "delays of a flow with count > 1 are not exported")
    r = api.run(scenario, sets=sets, seed=seed, series=["segments"])
    seg = r.series.segments
    tx = seg[seg["event"] == "tx"]
    conn = 0
    for i, f in enumerate(flows):
        c, conn = conn, conn + int(f.get("count", 1))
        if not f.get("delays"):
            continue
        if resolved["flows"][i]["tcp"]["fin"]:
            raise refuse(f"flows[{i}].delays", "delays are exported for ns-2's one-way agents only")
        mss = nbytes(resolved["flows"][i]["tcp"]["mss"], "tcp.mss")
        for j, dl in enumerate(f["delays"]):
            p = f"flows[{i}].delays[{j}]"
            if dl["kind"] not in ("data", "ack", "syn"):
                raise refuse(p + ".kind", f"{dl['kind']!r}: one-way agents have no SYN-ACK or FIN")
            if dl.get("transfer") is not None:
                raise refuse(p + ".transfer", "one transfer per connection")
            dirn = "b2a" if dl["kind"] == "ack" else "a2b"
            mine = tx[(tx["conn"] == c) & (tx["dir"] == dirn)].reset_index(drop=True)
            if dl["kind"] == "data":
                hit = mine.index[(mine["len"] > 0) & (mine["seq"] == (int(dl["segment"]) - 1) * mss + 1)
                                 & mine["tx"].isin([int(x) for x in dl.get("transmissions") or [1]])]
            elif dl["kind"] == "syn":
                hit = mine.index[mine["syn"] & mine["tx"].isin([int(x) for x in dl.get("transmissions") or [1]])]
            else:
                pure = mine.index[(mine["len"] == 0) & ~mine["syn"]]
                k = int(dl["number"])
                hit = pure[k - 1:k]
            by = seconds(dl["by"], p + ".by")
            prev = out.get((c, dirn))
            if prev is not None and abs(prev[0] - by) > 1e-12:
                raise refuse(p + ".by", f"{dl['by']!r}: ns-2's delay model holds every packet of a flow's direction for one delay_ "
                                        f"({_g(prev[0])} s here)")
            out[(c, dirn)] = (by, sorted((prev[1] if prev else []) + [int(x) for x in hit]))
    return out


def ns2_seed(seed) -> int:
    """The seed of ns-2's default stream for tcplab's `seed`: a positive number below 2^31 − 1
    (ns-2 takes 0 for a seed of its own choosing, which would not repeat)."""
    return 1 + (int(seed or 1) - 1) % 2147483646


def _random(d: dict, plan: dict) -> bool:
    """Whether ns-2 draws random numbers for this scenario (random loss, ON/OFF or jittered sources)."""
    if any(float(lk.get("loss", 0)) > 0 or float(lk.get("reverse_loss", 0)) > 0 for lk in plan["links"]):
        return True
    # Two-way clients draw their sizes and think times from ns-2's stream (tcplab.ns2.fullweb):
    # a seed of their own per run, so that replicates differ. (The one-way clients keep ns-2's
    # default seed, as their recorded ns-2 columns were run.)
    two_way = any(a.get("kind") in WEB_KINDS and a.get("mode", "twoway") != "oneway" for a in d.get("apps") or [])
    return two_way or any(a.get("kind") == "onoff" or a.get("jitter") for a in d.get("apps") or [])


def export(scenario, sets=(), seed: Optional[int] = None, trace: bool = True, monitor: Sequence[str] = ()) -> Script:
    """The ns-2 script of `scenario` (a path, TOML text or dict), or a ScenarioError naming the
    key ns-2 cannot express. `seed` is that of tcplab's run that places chosen drops and reads the
    UDP sources' rates (default: the scenario's). Without `trace` the script writes no trace (for
    timing ns-2)."""
    sets = api._sets(sets)
    d = api.validate(scenario, sets=sets)
    resolved = api.validate(scenario, sets=sets, tcp=True)
    # The core's plan for this seed: host groups, templated endpoints and the UDP sources' ON
    # rates as the core resolves them (a front end translates the plan, never guesses).
    plan = api.resolve(scenario, sets=sets, seed=seed)
    if d.get("capture"):
        raise refuse("capture", "ns-2 writes its own trace (tcplab ns2 run)")
    for i, a in enumerate(d.get("apps") or []):
        if a.get("kind") not in UDP_KINDS + WEB_KINDS:
            raise refuse(f"apps[{i}].kind", f"{a.get('kind')!r}: not exported yet (bulk [[flows]], the UDP sources cbr and onoff, "
                                            "reqresp, http10, http11 and ftp clients (two-way on FullTcp, or one-way) are)")
    for k in d:
        # `warmup` only narrows tcplab's instruments; the packets are the same (the comparison
        # covers the whole run).
        if k not in ("name", "description", "seed", "duration", "warmup", "topology", "tcp", "flows", "apps", "series"):
            raise refuse(k, f"`{k}` has no ns-2 counterpart here (docs/ns2.md lists what is exported)")
    nodes, links = _links(d["topology"], plan)
    lines = [
        "# ns-2.35 script written by `tcplab ns2 export` (docs/ns2.md). Argument: the trace file.",
        f"# scenario: {d.get('name') or '(unnamed)'}",
        "set ns [new Simulator]",
        "Trace set show_tcphdr_ 1 ;# ACK numbers and flags of FullTcp's packets",
    ]
    if _random(d, plan):
        # ns-2's own streams, seeded from the run's seed: one seed, one run (RNG::set_seed()).
        lines.append(f"global defaultRNG; $defaultRNG seed {ns2_seed(plan.get('seed'))}")
    if trace:
        lines += [
            "set tracefile [expr {[llength $argv] > 0 ? [lindex $argv 0] : \"out.tr\"}]",
            "set tf [open $tracefile w]",
            "$ns trace-all $tf",
        ]
    # A second argument names a log (tcplab.ns2.runner.run_log): each request/response exchange's
    # opening and end, and the packet counts of the monitored links, written by the script itself.
    lines += ["if {[llength $argv] > 1} { set rr_log [open [lindex $argv 1] w] }",
              "proc rr_note {s} { global rr_log; if {[info exists rr_log]} { puts $rr_log $s } }"]
    for i, n in enumerate(nodes):
        lines.append(f"set n({i}) [$ns node] ;# {n}")
    idx = {n: i for i, n in enumerate(nodes)}

    def qlines(a: str, b: str, q: dict) -> list:
        lim = int(q["packets"]) if q["packets"] is not None else UNLIMITED_QUEUE
        # tcplab's limit counts the packets waiting (not the one being sent). ns-2's DropTail
        # drops an arrival when length + 1 >= qlim_ (DropTail::enque(), queue/drop-tail.cc): it
        # holds qlim_ − 1 waiting, so the same queue is queue-limit N + 1. Queue/RED drops when
        # the length before the arrival reaches qlim_ (REDQueue::enque(), queue/red.cc): N.
        if q["kind"] == "droptail":
            lim += 1
        out = [f"$ns queue-limit $n({idx[a]}) $n({idx[b]}) {lim}"]
        if q["kind"] == "red":
            red = q["red"]
            qo = f"[[$ns link $n({idx[a]}) $n({idx[b]})] queue]"
            # Queue/RED's parameters (queue/red.cc): thresholds in packets, linterm_ = 1/max_p.
            for name, val in (("thresh_", red["min_th"]), ("maxthresh_", red["max_th"]), ("q_weight_", red["w_q"]),
                              ("linterm_", 1.0 / float(red["max_p"])), ("wait_", int(bool(red["wait"]))),
                              ("gentle_", int(bool(red["gentle"]))), ("mean_pktsize_", nbytes(red["mean_pktsize"], "red.mean_pktsize")),
                              ("bytes_", 0), ("queue_in_bytes_", 0), ("setbit_", 0)):
                out.append(f"{qo} set {name} {_g(val) if isinstance(val, float) else val}")
        return out

    for lk in links:
        qt = "RED" if lk.queue["kind"] == "red" else "DropTail"
        if lk.reverse_queue["kind"] != lk.queue["kind"]:
            raise refuse(lk.path + ".reverse_queue", "both directions of an exported link have the same queue discipline")
        lines.append(f"$ns duplex-link $n({idx[lk.a]}) $n({idx[lk.b]}) {_g(lk.rate_bps)} {_g(lk.delay_s)} {qt} ;# {lk.name}")
        lines += qlines(lk.a, lk.b, lk.queue) + qlines(lk.b, lk.a, lk.reverse_queue)

    # Flows: one agent pair per connection, ns-2 flow id = tcplab connection index.
    conns: list = []
    horizon = 0.0
    for i, f in enumerate(d.get("flows", [])):
        base = f"flows[{i}]"
        for k in f:
            if k not in FLOW_KEYS:
                raise refuse(f"{base}.{k}", f"`{k}` is not exported (per-flow series, ...)")
        for j, dr in enumerate(f.get("drops") or []):
            for k in dr:
                if k not in DROP_KEYS:
                    raise refuse(f"{base}.drops[{j}].{k}", f"`{k}` is not exported")
            if dr["kind"] not in ("data", "ack", "syn") and not resolved["flows"][i]["tcp"]["fin"]:
                raise refuse(f"{base}.drops[{j}].kind", f"{dr['kind']!r}: one-way agents have no SYN-ACK or FIN")
        if f.get("repeat", 1) != 1:
            raise refuse(base + ".repeat", "one transfer per connection (ns-2's one-way agents do not reconnect)")
        own = f.get("tcp") or {}
        k = resolved["flows"][i]["tcp"]
        try:
            _check_tcp(k, own, base + ".tcp")
        except api._core.ScenarioError as e:
            profile = own.get("profile") or (d.get("tcp") or {}).get("profile") or "rfc"
            if profile in ("ns2", "ns2-full"):
                raise
            raise api._scenario_error(e.path, f"{e.reason} (profile {profile!r}: ns-2's agents are the `ns2` profile's, "
                                              "or `ns2-full`'s for FullTcp; write one of them in [tcp])") from None
        mss = nbytes(k["mss"], f"{base}.tcp.mss" if "mss" in own else "tcp.mss")
        if k["variant"] in SACK_VARIANTS and not k["sack"]:
            raise refuse((f"{base}.tcp" if "sack" in own else "tcp") + ".sack", f"variant {k['variant']!r} without SACK: ns-2's SACK agents need a SACK sink")
        if f["bytes"] == "unlimited":
            pkts = None
            if d.get("duration") is None:
                raise refuse(base + ".bytes", "an unlimited flow needs `duration`")
        else:
            nb = nbytes(f["bytes"], base + ".bytes")
            full = bool(k["fin"])
            if nb % mss and not full:
                raise refuse(base + ".bytes", f"{nb} B is not a whole number of {mss}-byte segments: ns-2's one-way agents send whole packets of packetSize_")
            pkts = nb if full else nb // mss      # FullTcp sends bytes
        full = bool(k["fin"])
        start, spacing = seconds(f.get("start", "0s"), base + ".start"), seconds(f.get("start_spacing", "0s"), base + ".start_spacing")
        for c in range(int(f.get("count", 1))):
            # The plan's connections are the scenario's flows, each `count` times, in order.
            rf = plan["flows"][len(conns)]
            src, dst = rf["from"], rf["to"]
            if src not in idx or dst not in idx:
                raise refuse(base + (".from" if src not in idx else ".to"), f"{src if src not in idx else dst!r} is not a node")
            v = k["variant"]
            sink = "Agent/TCPSink/Sack1" if k["sack"] else "Agent/TCPSink"
            if k["delayed_ack"]:
                sink += "/DelAck"
            n = len(conns)
            t0 = start + c * spacing
            agent = FULL_AGENTS[v] if full else AGENTS[v]
            if full:
                sink = agent
            conns.append(Conn(n, f.get("name") or f"flow{i}", src, dst, agent, sink, mss, bool(k["handshake"]), pkts, t0, base, full))
            horizon = max(horizon, t0)
            lines.append(f"# connection {n}: {base} #{c + 1} ({f.get('name') or ''}) {src} -> {dst}")
            lines.append(f"set tcp({n}) [new {agent}]")
            lines += [s.format(n) for s in _agent_lines(v, k, mss, base + ".tcp", own)]
            lines.append(f"$tcp({n}) set fid_ {n}")
            if full:
                # Both ends are FullTcp agents with the same knobs; the passive one listens.
                lines.append(f"set sink({n}) [new {agent}]")
                lines += [s.replace("$tcp({})", "$sink({})").format(n) for s in _agent_lines(v, k, mss, base + ".tcp", own)]
                lines += [f"$sink({n}) set fid_ {n}", f"$ns attach-agent $n({idx[src]}) $tcp({n})",
                          f"$ns attach-agent $n({idx[dst]}) $sink({n})", f"$ns connect $tcp({n}) $sink({n})", f"$sink({n}) listen"]
                # advance-bytes opens the connection (reset() clears close_on_empty_), then the FIN
                # goes once the data has all been sent (tcp/tcp-full.cc, send_much()).
                if pkts is None:
                    # An unlimited transfer: FTP's start sends without end (FullTcp's infinite_send_).
                    lines += [f"set ftp({n}) [$tcp({n}) attach-app FTP]", f"$ns at {_g(t0)} \"$ftp({n}) start\""]
                else:
                    lines.append(f"$ns at {_g(t0)} \"$tcp({n}) advance-bytes {pkts}; $tcp({n}) set close_on_empty_ true\"")
                continue
            lines += _sink_lines(k, f"$sink({n})")
            lines.append(f"$ns attach-agent $n({idx[src]}) $tcp({n})")
            lines.append(f"$ns attach-agent $n({idx[dst]}) $sink({n})")
            lines.append(f"$ns connect $tcp({n}) $sink({n})")
            lines.append(f"set ftp({n}) [$tcp({n}) attach-app FTP]")
            lines.append(f"$ns at {_g(t0)} \"$ftp({n}) {'start' if pkts is None else f'produce {pkts}'}\"")

    rr_sessions, two_way = 0, False
    if d.get("apps"):
        udp, rr, two_way = _app_lines(d, plan, idx)
        if any(line.startswith("set mix_") for line in udp):
            lines.append(MIXED_ONOFF_PROCS.rstrip())
        lines += udp
        if rr:
            from .fullweb import PROCS as FULL_PROCS
            from .webapps import PROCS

            rr_sessions = sum(1 for line in rr if line.startswith("set rr_count("))
            paged = {line.split("(")[1].split(")")[0] for line in rr if line.startswith("set wt_pages(")}
            if paged and d.get("duration") is None:
                raise refuse("duration", "a run with web pages (WebTraf) ends at its `duration` (the script does not follow pages to their end)")
            # Sessions of a finite number of exchanges end the run when all are over (pages run to `duration`).
            finite = sum(1 for line in rr if line.startswith("set rr_count(") and not line.endswith(" -1")
                         and line.split("(")[1].split(")")[0] not in paged)
            lines += [f"set nextfid {len(conns)} ;# flow ids of the exchanges' connections, in the order they open",
                      f"set apps_left {finite}", PROCS.rstrip()] + ([FULL_PROCS.rstrip()] if two_way else []) + rr

    # Chosen drops, at the head of each flow's first link (before the queue, as tcplab drops them),
    # and random loss: one ErrorModule per link direction that needs one.
    positions = _drop_positions(scenario, sets, seed) if any((f.get("drops") for f in d.get("flows", []))) else {}
    modules: dict = {}

    def module(a: str, b: str) -> str:
        key = (a, b)
        if key not in modules:
            name = f"em_{idx[a]}_{idx[b]}"
            modules[key] = name
            lines.append(f"set {name} [new ErrorModule Fid]")
            lines.append(f"[$ns link $n({idx[a]}) $n({idx[b]})] errormodule ${name}")
        return modules[key]

    for (c, dirn), pos in sorted(positions.items()):
        cn = conns[c]
        a, b = (cn.src, cn.dst) if dirn == "a2b" else (cn.dst, cn.src)
        hops = route(nodes, links, a, b)
        em = module(*hops[0])
        lines.append(f"set el_{c}_{dirn} [new ErrorModel/List]")
        lines.append(f"$el_{c}_{dirn} droplist {{{' '.join(str(p) for p in pos)}}}")
        lines.append(f"${em} insert $el_{c}_{dirn}")
        lines.append(f"${em} bind $el_{c}_{dirn} {c}")
    # Chosen delays (packet reordering): ns-2's ErrorModel with delay_pkt_ (ErrorModel::recv(),
    # queue/errmodel.cc) holds the packets at the listed positions for delay_ and then passes
    # them on. Its ErrorModule sits behind the link's enqueue trace (a pure tracer), so that
    # ns-2's trace shows the held packet when it was sent, as tcplab's `segments` does; it still
    # holds the packet before the queue, where the suites' error module holds it.
    held = _delay_positions(scenario, sets, seed, d, resolved) if any((f.get("delays") for f in d.get("flows", []))) else {}
    for (c, dirn), (by, pos) in sorted(held.items()):
        cn = conns[c]
        a, b = (cn.src, cn.dst) if dirn == "a2b" else (cn.dst, cn.src)
        hops = route(nodes, links, a, b)
        if (c, dirn) in positions:
            raise refuse(f"{cn.path}.delays", "delays and drops of the same packets' direction are not exported together "
                                              "(one ns-2 error model per flow and link)")
        name = f"ed_{c}_{dirn}"
        lk = f"[$ns link $n({idx[hops[0][0]]}) $n({idx[hops[0][1]]})]"
        lines += [f"set {name} [new ErrorModule Fid]",
                  f"set dl_{c}_{dirn} [new ErrorModel/List]",
                  f"$dl_{c}_{dirn} set delay_pkt_ true", f"$dl_{c}_{dirn} set drop_ false", f"$dl_{c}_{dirn} set delay_ {_g(by)}",
                  f"$dl_{c}_{dirn} droplist {{{' '.join(str(p) for p in pos)}}}",
                  f"${name} insert $dl_{c}_{dirn}", f"${name} bind $dl_{c}_{dirn} {c}", f"${name} default pass",
                  f"${name} target [[{lk} set enqT_] target]", f"${name} drop-target [{lk} set drophead_]",
                  f"[{lk} set enqT_] target ${name}"]
    for lk in links:
        for a, b, p, key in ((lk.a, lk.b, lk.loss, "loss"), (lk.b, lk.a, lk.reverse_loss, "reverse_loss")):
            if p <= 0:
                continue
            if (a, b) in modules:
                raise refuse(f"{lk.path}.{key}", "random loss on a link where chosen packets are dropped is not exported")
            # The error model alone at the head of the link direction (SimpleLink errormodule):
            # every packet offered is dropped with probability p, before the queue.
            lm = f"lm_{idx[a]}_{idx[b]}"
            lines += [f"set {lm} [new ErrorModel]", f"${lm} unit pkt", f"${lm} set rate_ {_g(p)}",
                      f"${lm} ranvar [new RandomVariable/Uniform]", f"${lm} drop-target [new Agent/Null]",
                      f"[$ns link $n({idx[a]}) $n({idx[b]})] errormodule ${lm}"]
    for key, em in modules.items():
        lines.append(f"${em} default pass")

    mon_names = []
    for name in monitor:
        lk = next((x for x in links if x.name == name), None)
        if lk is None:
            raise ValueError(f"no link named {name!r} to monitor (links: {', '.join(x.name for x in links)})")
        for a, b in ((lk.a, lk.b), (lk.b, lk.a)):
            lines.append(f"set qm({len(mon_names)}) [$ns monitor-queue $n({idx[a]}) $n({idx[b]}) \"\"]")
            mon_names.append(f"{name}:{a}->{b}")
    end = d.get("duration")
    end_s = seconds(end, "duration") if end is not None else None
    lines += [
        "proc finish {} {",
        "    global ns tf rr_log qm",
        # Two-way exchanges under way: the response bytes delivered so far (tcplab.ns2.fullweb).
        *(["    fx_finish"] if two_way else []),
        *(["    $ns flush-trace", "    close $tf"] if trace else []),
        # A queue monitor's counts (QueueMonitor, queue/queue-monitor.cc): packets arriving at the
        # link's queue (the dropped ones among them), dropped there, and (written for two-way
        # clients, so that the other studies' scripts, their ns-2 caches' keys, stay as they were)
        # the bytes that left it.
        *[f"    rr_note \"link {name} [$qm({j}) set parrivals_] [$qm({j}) set pdrops_]" + (f" [$qm({j}) set bdepartures_]" if two_way else "") + "\""
          for j, name in enumerate(mon_names)],
        "    if {[info exists rr_log]} { close $rr_log }",
        "    exit 0",
        "}",
        "proc done {} {",
        "    global tcp apps_left",
        *(["    if {$apps_left > 0} { return 0 }"] if rr_sessions else []),
        # The last packet's number: packet 0 is the SYN with syn_, so the data ends one later.
        *[f"    if {{[$tcp({c.conn}) set ack_] < {c.packets - 1 + int(c.syn)}}} {{ return 0 }}" for c in conns if c.packets is not None and not c.full],
        "    return 1",
        "}",
    ]
    if end_s is not None:
        lines.append(f"$ns at {_g(end_s)} \"finish\"")
    elif any(c.full for c in conns):
        # FullTcp keeps no counter the script can poll: the run ends well after the last start,
        # with nothing on the wire once the connections have closed.
        lines.append(f"$ns at {_g(horizon + FULL_HORIZON_S)} \"finish\"")
    else:
        # Without a duration the run ends when every transfer is acknowledged, as tcplab's does:
        # a poll every millisecond of simulated time (it adds no packet and changes no agent).
        lines += [
            "proc poll {} { global ns; if {[done]} { finish } else { $ns at [expr [$ns now] + 0.001] poll } }",
            f"$ns at {_g(horizon)} poll",
        ]
    lines.append("$ns run")
    notes = []
    if any(c.syn for c in conns) and any(resolved["flows"][i]["tcp"]["syn_options"] for i in range(len(d.get("flows", [])))):
        notes.append("ns-2's packet 0 (syn_) is 40 bytes; tcplab's SYN carries syn_options bytes more")
    if any(not c.syn for c in conns) and any(not f["tcp"]["handshake"] and f["tcp"].get("use_headers", True) for f in resolved["flows"]):
        notes.append("without syn_ ns-2 sends packet 0 without its 40-byte header (TcpAgent::output())")
    if rr_sessions:
        ks = [a["tcp"]["client"] for a in plan["apps"] if a["kind"] in WEB_KINDS]
        # Two-way: one flow id per exchange, FullTcp's byte sequence numbers (`full`).
        script_dyn = {"base": len(conns), "mss": nbytes(ks[0]["mss"], "tcp.mss"), "full": two_way,
                      "sessions": [a["name"] for a in plan["apps"] if a["kind"] in WEB_KINDS]}
    else:
        script_dyn = None
    return Script("\n".join(lines) + "\n", nodes, links, conns, horizon, notes, dynamic=script_dyn)
