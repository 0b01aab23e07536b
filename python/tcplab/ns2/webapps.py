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

#: The keys of a one-way web client of WebTraf pages the export reads.
PAGE_KEYS = {"kind", "name", "mode", "client", "server", "start", "start_spacing", "request", "response", "objects", "objects_rounding",
             "interobject", "think", "page_spacing", "pages", "tcp", "instances", "embedded"}
#: The keys of a one-way request/response entry the export reads.
REQRESP_KEYS = {"kind", "name", "mode", "client", "server", "start", "start_spacing", "request", "response", "count", "think",
                "tcp", "instances"}

PROCS = r"""# One-way request/response exchanges (tcplab.ns2.webapps): the request on an agent of its own,
# the response on another once the request is acknowledged (the agent's done); `then` runs once
# the response is acknowledged. A reqresp session's next exchange follows think later; a page's
# objects start interobject apart, pages think apart from start to start.
proc rr_pick {i} {
    global rr_servers rr_su
    set k [llength $rr_servers($i)]
    return [lindex $rr_servers($i) [expr {$k > 1 ? int([$rr_su($i) value] * $k) : 0}]]
}
# An agent and its sink from src to dst for session i's `side` (client: the request's), attached
# and connected; one whose exchange is over is used again, as WebTraf recycles its agents
# (webtraf.tcl), since ns-2 makes an Agent/TCP slowly (milliseconds each). Either way the pair is
# reset before use: TcpAgent::reset() is what sets the RTO from rtxcur_init_ (rtt_init(),
# tcp/tcp.cc), which `$ns run` does for the agents made before it, not for those made later (an
# agent made during the run keeps the class default of 3 s).
proc rr_pair {i side src dst} {
    global ns n rr_free
    set key "$i,$side,$src,$dst"
    if {[info exists rr_free($key)] && [llength $rr_free($key)] > 0} {
        set p [lindex $rr_free($key) end]
        set rr_free($key) [lrange $rr_free($key) 0 end-1]
    } else {
        set a [rr_sender_$i $side]
        set s [rr_sink_$i $side]
        $ns attach-agent $n($src) $a
        $ns attach-agent $n($dst) $s
        $ns connect $a $s
        set p [list $a $s]
    }
    [lindex $p 0] reset
    [lindex $p 1] reset
    return $p
}
proc rr_free {i side src dst p} {
    global rr_free
    lappend rr_free($i,$side,$src,$dst) $p
}
proc rr_exchange {i srv then} {
    global ns nextfid rr_client rr_req rr_started
    incr rr_started($i)
    set k $rr_started($i)
    rr_note "open $i $k [$ns now]"
    set p [rr_pair $i client $rr_client($i) $srv]
    set a [lindex $p 0]
    set f $nextfid
    incr nextfid 2
    $a set fid_ $f
    $a proc done {} [list rr_reply $i $srv [expr {$f + 1}] $k $then $p]
    $a advance $rr_req($i)
}
proc rr_reply {i srv f k then req} {
    global rr_client rr_resp
    rr_free $i client $rr_client($i) $srv $req
    set p [rr_pair $i server $srv $rr_client($i)]
    set a [lindex $p 0]
    $a set fid_ $f
    $a proc done {} [list rr_done $i $k $then $srv $p]
    $a advance $rr_resp($i)
}
proc rr_done {i k then srv p} {
    global ns rr_client
    rr_note "over $i $k [$ns now]"
    rr_free $i server $srv $rr_client($i) $p
    if {$then ne ""} { eval $then }
}
proc rr_open {i} {
    rr_exchange $i [rr_pick $i] [list rr_over $i]
}
proc rr_over {i} {
    global ns rr_started rr_count apps_left
    if {$rr_count($i) >= 0 && $rr_started($i) >= $rr_count($i)} {
        incr apps_left -1
        return
    }
    $ns at [expr {[$ns now] + [rr_think_$i]}] "rr_open $i"
}
proc wt_page {i} {
    global ns wt_pages rr_count wt_objs wt_round
    incr wt_pages($i)
    if {$rr_count($i) < 0 || $wt_pages($i) < $rr_count($i)} {
        $ns at [expr {[$ns now] + [rr_think_$i]}] "wt_page $i"
    }
    set srv [rr_pick $i]
    set x [$wt_objs($i) value]
    set m [expr {$wt_round($i) eq "up" ? int(ceil($x)) : int($x + 0.5)}]
    if {$m < 1} { set m 1 }
    wt_obj $i $srv $m
}
proc wt_obj {i srv left} {
    global ns
    rr_exchange $i $srv ""
    incr left -1
    if {$left > 0} { $ns at [expr {[$ns now] + [wt_gap_$i]}] "wt_obj $i $srv $left" }
}
"""


def _draw(proc: str, n: int, v, path: str, refuse, value, what: str) -> List[str]:
    """`proc <proc>_<n>`: a value drawn from ns-2's stream as tcplab draws from its own: a
    constant, `uniform` (`RandomVariable/Uniform`) or `exponential` (`/Exponential`); `value`
    reads one number (seconds, or a count)."""
    rv = f"{proc}_rv({n})"
    get = f"proc {proc}_{n} {{}} {{ global {proc}_rv; return [${rv} value] }}"
    if isinstance(v, dict) and set(v) == {"uniform"}:
        lo, hi = (value(x, path) for x in v["uniform"])
        return [f"set {rv} [new RandomVariable/Uniform]", f"${rv} set min_ {lo!r}", f"${rv} set max_ {hi!r}", get]
    if isinstance(v, dict) and set(v) == {"exponential"}:
        return [f"set {rv} [new RandomVariable/Exponential]", f"${rv} set avg_ {value(v['exponential'], path)!r}", get]
    if isinstance(v, dict):
        raise refuse(path, f"{v!r}: {what} exported are constant, uniform or exponential")
    return [f"set {rv} [new RandomVariable/Constant]", f"${rv} set val_ {value(v, path)!r}", get]


def _count(v, path) -> float:
    return float(v)


def reqresp_lines(n: int, a: dict, ra: dict, base: str, idx: dict, *, refuse, seconds, nbytes, check_tcp: Callable,
                  agent_class: Callable, agent_lines: Callable, sink_lines: Callable) -> List[str]:
    """The Tcl of one session `n` (the plan's app `ra`, of the entry `a` at `base`): a `reqresp`
    client, or an `http10` client of ns-2's WebTraf pages (`objects`)."""
    pages = a["kind"] == "http10"
    for k in a:
        if k not in (PAGE_KEYS if pages else REQRESP_KEYS):
            raise refuse(f"{base}.{k}", f"`{k}` is not exported for {'web' if pages else 'request/response'} clients")
    if a.get("mode", "twoway") != "oneway":
        raise refuse(base + ".mode", f"{a.get('mode', 'twoway')!r}: two-way exchanges (FullTcp with a Tcl client) are not exported yet; "
                                     "mode = \"oneway\" (ns-2's one-way web object) is")
    if pages and ra.get("objects") is None:
        raise refuse(base + ".embedded", "HTTP/1.0 pages of a primary and embedded objects are not exported; "
                                         "ns-2's WebTraf pages (`objects`, `interobject`) are")
    if pages and ra.get("page_spacing") != "start_to_start":
        raise refuse(base + ".page_spacing", f"{ra.get('page_spacing')!r}: pages spaced start to start (WebTraf's interPageOption_ 0) are exported")
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
    out += _draw("rr_think", n, ra["think"], base + ".think", refuse, seconds, "think times")
    if pages:
        out += _draw("wt_objs", n, ra["objects"], base + ".objects", refuse, _count, "object counts")
        out += [f"set wt_objs({n}) $wt_objs_rv({n})", f"set wt_round({n}) {'up' if ra.get('objects_rounding') == 'up' else 'nearest'}",
                f"set wt_pages({n}) 0"]
        out += _draw("wt_gap", n, ra["interobject"], base + ".interobject", refuse, seconds, "times between objects")
        out.append(f"$ns at {ra['start_ns'] / 1e9!r} \"wt_page {n}\"")
    else:
        out.append(f"$ns at {ra['start_ns'] / 1e9!r} \"rr_open {n}\"")
    return out
