"""Request/response clients in the ns-2 export: `kind = "reqresp"` with `mode = "oneway"`, ns-2's
one-way web object (Seddigh et al.'s HTTP model 2; tcplab's `app/reqresp.rs`).

Each exchange is two one-way connections made when needed, as ns-2's `PagePool/WebTraf` makes
them (`tcl/webcache/webtraf.tcl`): the request on an `Agent/TCP` agent client → server of its
own; when its last packet is acknowledged (the agent's `done`, called from `TcpAgent::finish()`,
`tcp/tcp.cc`) the response starts on a new agent server → client; when the response's last packet
is acknowledged at the server the exchange is over, and the next starts `think` later, from one
of `server` drawn uniformly (`floor(uniform(0, n))`, ns-2's `pickdst`). Each exchange takes two flow
ids, base + 2e for its request and base + 2e + 1 for its response (e: the exchanges in the order
they open, from the number of bulk connections on); the trace reader writes both as connection
base + e, as tcplab's `segments` series writes an exchange (both messages `a2b`, each numbered
from byte 1), as long as both simulators open the exchanges in the same order.

What ns-2's one-way agents cannot carry is refused by key path: two-way exchanges (`mode`), sizes
that vary or are not whole packets, a think time of another distribution, a handshake.
"""

from __future__ import annotations

from typing import Callable, List

#: The keys of a one-way request/response entry the export reads.
REQRESP_KEYS = {"kind", "name", "mode", "client", "server", "start", "start_spacing", "request", "response", "count", "think",
                "tcp", "instances"}

PROCS = r"""# One-way request/response exchanges (tcplab.ns2.webapps): the request on an agent of its own,
# the response on another once the request is acknowledged (the agent's done), the next exchange
# think later once the response is acknowledged.
proc rr_open {i} {
    global ns n nextfid rr_client rr_servers rr_su rr_req rr_started
    incr rr_started($i)
    rr_note "open $i $rr_started($i) [$ns now]"
    set k [llength $rr_servers($i)]
    set srv [lindex $rr_servers($i) [expr {$k > 1 ? int([$rr_su($i) value] * $k) : 0}]]
    set a [rr_sender_$i client]
    set s [rr_sink_$i client]
    $ns attach-agent $n($rr_client($i)) $a
    $ns attach-agent $n($srv) $s
    $ns connect $a $s
    set f $nextfid
    incr nextfid 2
    $a set fid_ $f
    $a proc done {} "rr_reply $i $srv [expr {$f + 1}]"
    $a advance $rr_req($i)
}
proc rr_reply {i srv f} {
    global ns n rr_client rr_resp
    set a [rr_sender_$i server]
    set s [rr_sink_$i server]
    $ns attach-agent $n($srv) $a
    $ns attach-agent $n($rr_client($i)) $s
    $ns connect $a $s
    $a set fid_ $f
    $a proc done {} "rr_over $i"
    $a advance $rr_resp($i)
}
proc rr_over {i} {
    global ns rr_started rr_count apps_left
    rr_note "over $i $rr_started($i) [$ns now]"
    if {$rr_count($i) >= 0 && $rr_started($i) >= $rr_count($i)} {
        incr apps_left -1
        return
    }
    $ns at [expr {[$ns now] + [rr_think_$i]}] "rr_open $i"
}
"""


def _think(n: int, v, path: str, refuse, seconds) -> List[str]:
    """`proc rr_think_<n>`: the think time, drawn from ns-2's stream as tcplab draws from its own."""
    if isinstance(v, dict) and set(v) == {"uniform"}:
        lo, hi = (seconds(x, path) for x in v["uniform"])
        return [f"set rr_tu({n}) [new RandomVariable/Uniform]", f"$rr_tu({n}) set min_ {lo!r}", f"$rr_tu({n}) set max_ {hi!r}",
                f"proc rr_think_{n} {{}} {{ global rr_tu; return [$rr_tu({n}) value] }}"]
    if isinstance(v, dict) and set(v) == {"exponential"}:
        return [f"set rr_tu({n}) [new RandomVariable/Exponential]", f"$rr_tu({n}) set avg_ {seconds(v['exponential'], path)!r}",
                f"proc rr_think_{n} {{}} {{ global rr_tu; return [$rr_tu({n}) value] }}"]
    if isinstance(v, dict):
        raise refuse(path, f"{v!r}: think times exported are constant, uniform or exponential")
    return [f"proc rr_think_{n} {{}} {{ return {seconds(v, path)!r} }}"]


def reqresp_lines(n: int, a: dict, ra: dict, base: str, idx: dict, *, refuse, seconds, nbytes, check_tcp: Callable,
                  agent_class: Callable, agent_lines: Callable, sink_lines: Callable) -> List[str]:
    """The Tcl of one session `n` (the plan's app `ra`, of the entry `a` at `base`)."""
    for k in a:
        if k not in REQRESP_KEYS:
            raise refuse(f"{base}.{k}", f"`{k}` is not exported for request/response clients")
    if a.get("mode", "twoway") != "oneway":
        raise refuse(base + ".mode", f"{a.get('mode', 'twoway')!r}: two-way exchanges (FullTcp with a Tcl client) are not exported yet; "
                                     "mode = \"oneway\" (ns-2's one-way web object) is")
    own = a.get("tcp") or {}
    ends = {}
    for end in ("client", "server"):
        k = ra["tcp"][end]
        check_tcp(k, own, base + ".tcp")
        if k["handshake"]:
            raise refuse(f"{base}.tcp.handshake", "one-way exchanges open without a SYN (as tcplab's, app/reqresp.rs)")
        ends[end] = k
    mss = nbytes(ends["client"]["mss"], base + ".tcp.mss")
    if nbytes(ends["server"]["mss"], base + ".tcp.mss") != mss:
        raise refuse(base + ".tcp.mss", "one MSS for both ends")
    pkts = {}
    for key in ("request", "response"):
        v = ra[key]
        if isinstance(v, dict):
            raise refuse(f"{base}.{key}", f"{v!r}: a constant size (ns-2's one-way agents send a set number of packets)")
        b = nbytes(v, f"{base}.{key}")
        if b % mss:
            raise refuse(f"{base}.{key}", f"{b} B is not a whole number of {mss}-byte packets: ns-2's one-way agents send whole packets")
        pkts[key] = b // mss
    for s in [ra["client"]] + list(ra["servers"]):
        if s not in idx:
            raise refuse(base + ".server", f"{s!r} is not a node")
    count = ra.get("count")
    count = -1 if count in (None, "unlimited") else int(count)
    out = [f"# request/response session {n}: {base} {ra['name']} {ra['client']} -> {', '.join(ra['servers'])} (one-way)",
           f"set rr_client({n}) {idx[ra['client']]}", f"set rr_servers({n}) {{{' '.join(str(idx[s]) for s in ra['servers'])}}}",
           f"set rr_su({n}) [new RandomVariable/Uniform]", f"set rr_req({n}) {pkts['request']}", f"set rr_resp({n}) {pkts['response']}",
           f"set rr_started({n}) 0", f"set rr_count({n}) {count}"]
    # The agents of each end: the client's knobs on the request's sender and the response's sink,
    # the server's on the response's sender and the request's sink (tcplab's `tcp` and `server_tcp`).
    for role in ("sender", "sink"):
        body = [f"proc rr_{role}_{n} {{side}} {{"]
        for side, k in (("client", ends["client" if role == "sender" else "server"]), ("server", ends["server" if role == "sender" else "client"])):
            body.append(f"    if {{$side == \"{side}\"}} {{")
            if role == "sender":
                body.append(f"        set a [new {agent_class(k)}]")
                body += ["        " + s.replace("$tcp({})", "$a") for s in agent_lines(k["variant"], k, mss, base + ".tcp", own)]
            else:
                body += ["        " + s for s in sink_lines(k, "$a", new=True)]
            body += ["        return $a", "    }"]
        body.append("}")
        out += body
    out += _think(n, ra["think"], base + ".think", refuse, seconds)
    out.append(f"$ns at {ra['start_ns'] / 1e9!r} \"rr_open {n}\"")
    return out
