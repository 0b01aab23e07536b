"""Two-way web and FTP clients in the ns-2 export: `kind = "http10"` (a primary object, then its
embedded objects), `"reqresp"` and `"ftp"` with `mode = "twoway"` (tcplab's `app/web.rs` and
`app/reqresp.rs`), each object on a FullTcp connection of its own (`tcp/tcp-full.cc`), as RFC 2415
ran its web and FTP clients on ns-2's `tcp-full`.

One exchange is one FullTcp pair: the client's agent opens with `advance-bytes` of the request
(`FullTcpAgent::advance_bytes()` in CLOSED: the SYN, then the request once established); the
server's agent `listen`s, and an `Application` whose Tcl `recv` counts the bytes
`FullTcpAgent::recv()` hands up (`recvBytes()`, `Application::recv()`, `apps/app.cc`) answers
once the whole request is in: `advance-bytes` of the response with `close_on_empty_`, so the FIN
rides on the response's last segment, as the `ns2-full` profile's server closes. The client reads
to the FIN and closes in turn (`halfclose_` false: `usrclosed()` from CLOSE_WAIT once all is
acknowledged), as tcplab's client closes on the server's FIN. The exchange is over when both
agents have called `done` (`FullTcpAgent::finish()`: the client's on the ACK of its FIN in
LAST_ACK, the server's on the client's FIN; ns-2 has no TIME_WAIT, and tcplab's `Closed` is the
send half done, FIN acknowledged), and its pair is used again by the session's next exchange
(`reset`, `listen`), since ns-2 makes agents slowly.

An `http10` page starts with its primary object; when the primary's response is all delivered its
`embedded` objects open at once, one connection each; the page is complete when the last object's
response is delivered, and the next page starts `think` after that (tcplab's closed loop,
`page_spacing = "end_to_start"`). `reqresp` and `ftp` run one exchange at a time, the next `think`
after the last is over (an FTP file is a 24-byte command answered by the file, `spec.rs`).
Sizes are drawn in Tcl from ns-2's stream as tcplab draws them: a constant, `uniform`,
`exponential`, or a CDF (`empirical`, and the shipped `named` tables, read from the core with
`named_table`), looked up as ns-2's `EmpiricalRandomVariable::value()` does (the first point with
F ≥ u, linear from the previous one with `interpolate`) and rounded to whole bytes, at least one.

An `http11` page (tcplab's `Http11`, `app/web.rs`; RFC 2415 §2's http1.1 model) is one persistent
FullTcp connection: the client's agent opens with the primary object's request; each response,
once all delivered, is followed at once by the next object's request on the same connection (no
pipelining, no FIN between objects); the server answers each request once all of it is in. With
`transfer = "page"` a page is one request, the primary's, answered by one response of all its
objects' bytes (every object's two sizes drawn, as tcplab draws them). When the page's last
response is delivered the page is complete and the client `close`s (`FullTcpAgent::usrclosed()`:
FIN_WAIT_1); the server, in CLOSE_WAIT, closes in turn once all is acknowledged (`halfclose_`
false), as tcplab's server closes on the client's FIN, and the pair is free when both agents are
done (the client's from FIN_WAIT_2 on the server's FIN, the server's on the ACK of its FIN in
LAST_ACK). With `keep_alive` the connection is kept for the session's next pages, idle for the
think time; ns-2's `slow_start_restart_` (`FullTcpAgent::idle_restart()`: idle longer than the
RTO) is the profile's `restart_after_idle`, as tcplab's RFC 5681 §4.1 restart; it is closed after
the session's last page.

Each exchange (`http11`: each connection) is one ns-2 flow id, base + e (e: in the order they
open), which the trace reader writes as tcplab's connection base + e. The script logs (`rr_note`)
"open i k t", "got i k t" (response delivered), "over i k t", "page i p t" and "pdone i p t" for
`tcplab.ns2.runner.run_log` (an `http11` object has "open" and "got", its connection's end no
"over"). Refused by key path: pages of `objects` (ns-2's WebTraf is one-way here),
`page_spacing = "start_to_start"` with a primary, one-way and two-way sessions in one script.
"""

from __future__ import annotations

import json
from typing import Callable, List

from .. import api
from .webapps import _draw

#: The keys of a two-way client entry the export reads.
KEYS = {"kind", "name", "mode", "client", "server", "start", "start_spacing", "request", "response", "count", "think", "tcp",
        "server_tcp", "instances", "embedded", "pages", "file", "direction", "keep_alive", "transfer"}
#: The kinds exported two-way.
KINDS = ("http10", "http11", "reqresp", "ftp")

PROCS = r"""# Two-way exchanges on FullTcp (tcplab.ns2.fullweb): one agent pair per exchange, the server
# answering once the whole request has arrived, the FIN on the response's last segment.
Class FxRecv -superclass Application
FxRecv instproc recv {nbytes} {
    $self instvar got want then
    incr got $nbytes
    if {$want > 0 && $got >= $want} {
        set want 0
        eval $then
    }
}
# A pair of session i from node c to node s: (client agent, server agent, their receivers), made
# once and used again when free; reset before use (FullTcpAgent::reset(): CLOSED, the RTO from
# rtxcur_init_), the server listening.
proc fx_pair {i c s} {
    global ns n fx_free
    set key "$i,$c,$s"
    if {[info exists fx_free($key)] && [llength $fx_free($key)] > 0} {
        set p [lindex $fx_free($key) end]
        set fx_free($key) [lrange $fx_free($key) 0 end-1]
    } else {
        set a [fx_agent_$i client]
        set b [fx_agent_$i server]
        $ns attach-agent $n($c) $a
        $ns attach-agent $n($s) $b
        $ns connect $a $b
        set ra [new FxRecv]
        $ra attach-agent $a
        $ra start
        set rb [new FxRecv]
        $rb attach-agent $b
        $rb start
        set p [list $a $b $ra $rb]
    }
    foreach x [lrange $p 0 1] { $x reset }
    [lindex $p 1] listen
    return $p
}
# An empirical draw (EmpiricalRandomVariable::value(), tools/ranvar.cc) from u in [0, 1).
proc fx_emp {u xs fs interp} {
    set m [llength $fs]
    for {set j 0} {$j < $m - 1} {incr j} { if {[lindex $fs $j] >= $u} break }
    set x1 [lindex $xs $j]
    set f1 [lindex $fs $j]
    if {$interp && $j > 0 && $u < $f1} {
        set x0 [lindex $xs [expr {$j - 1}]]
        set f0 [lindex $fs [expr {$j - 1}]]
        return [expr {$x0 + ($u - $f0) * ($x1 - $x0) / ($f1 - $f0)}]
    }
    return $x1
}
# A drawn size or count as tcplab rounds it (half up), at least `least`.
proc fx_whole {x least} {
    set v [expr {int(floor($x + 0.5))}]
    return [expr {$v < $least ? $least : $v}]
}
# Open exchange k of session i to server srv: `got` runs when the response is all delivered,
# `over` when both agents are done.
proc fx_exchange {i srv got over} {
    global ns nextfid rr_client rr_started fx_left fx_rcv
    incr rr_started($i)
    set k $rr_started($i)
    set req [fx_whole [fx_request_$i] 1]
    set resp [fx_whole [fx_response_$i] 1]
    rr_note "open $i $k [$ns now] $resp"
    set p [fx_pair $i $rr_client($i) $srv]
    foreach {a b ra rb} $p break
    set fx_rcv($i,$k) $ra
    set f $nextfid
    incr nextfid
    $a set fid_ $f
    $b set fid_ $f
    $rb set got 0
    $rb set want $req
    $rb set then [list fx_answer $b $resp]
    $ra set got 0
    $ra set want $resp
    $ra set then [list fx_got $i $k $got]
    set fx_left($i,$k) 2
    foreach x [list $a $b] { $x proc done {} [list fx_end $x $i $k $srv $p $over] }
    $a advance-bytes $req
}
proc fx_answer {b resp} {
    $b advance-bytes $resp
    $b set close_on_empty_ true
}
proc fx_got {i k got} {
    global ns
    rr_note "got $i $k [$ns now]"
    if {$got ne ""} { eval $got }
}
proc fx_end {x i k srv p over} {
    global ns fx_left fx_free rr_client fx_rcv
    $x proc done {} {}
    incr fx_left($i,$k) -1
    if {$fx_left($i,$k) > 0} { return }
    unset fx_left($i,$k)
    unset fx_rcv($i,$k)
    rr_note "over $i $k [$ns now]"
    lappend fx_free($i,$rr_client($i),$srv) $p
    if {$over ne ""} { eval $over }
}
# At the end of the run: the response bytes each exchange still under way has delivered.
proc fx_finish {} {
    global fx_rcv
    foreach key [lsort [array names fx_rcv]] {
        rr_note "part [string map {, " "} $key] [$fx_rcv($key) set got]"
    }
}
# reqresp and ftp: one exchange at a time, the next `think` after the last is over.
proc fx_open {i} {
    fx_exchange $i [rr_pick $i] "" [list fx_next $i]
}
proc fx_next {i} {
    global ns rr_started rr_count apps_left
    if {$rr_count($i) >= 0 && $rr_started($i) >= $rr_count($i)} {
        incr apps_left -1
        return
    }
    $ns at [expr {[$ns now] + [rr_think_$i]}] "fx_open $i"
}
# http10: a primary object, then its embedded objects at once; the next page `think` after the
# page is complete.
proc fw_page {i} {
    global ns fw_page fw_wait fw_primary fw_start
    incr fw_page($i)
    set pg $fw_page($i)
    set fw_start($i,$pg) [$ns now]
    set fw_wait($i,$pg) 1
    set fw_primary($i,$pg) 1
    rr_note "page $i $pg [$ns now]"
    set srv [rr_pick $i]
    fx_exchange $i $srv [list fw_got $i $pg $srv] ""
}
proc fw_got {i pg srv} {
    global ns fw_wait fw_primary rr_count fw_page apps_left
    incr fw_wait($i,$pg) -1
    if {$fw_primary($i,$pg)} {
        set fw_primary($i,$pg) 0
        set m [fx_whole [fx_embedded_$i] 0]
        for {set j 0} {$j < $m} {incr j} {
            incr fw_wait($i,$pg)
            fx_exchange $i $srv [list fw_got $i $pg $srv] ""
        }
    }
    if {$fw_wait($i,$pg) > 0} { return }
    rr_note "pdone $i $pg [$ns now]"
    if {$rr_count($i) >= 0 && $fw_page($i) >= $rr_count($i)} {
        incr apps_left -1
        return
    }
    $ns at [expr {[$ns now] + [rr_think_$i]}] "fw_page $i"
}
# http11 (tcplab's Http11, app/web.rs): a page's objects in turn on one persistent connection,
# each request written once the previous response is all delivered; fh_conn(i) is the session's
# open connection (agent pair, server), kept from page to page with fh_keep(i).
proc fh_page {i} {
    global ns fw_page fh_conn fh_left rr_client nextfid
    incr fw_page($i)
    rr_note "page $i $fw_page($i) [$ns now]"
    # As tcplab's client: the page's server and its object count are drawn first.
    set srv [rr_pick $i]
    set fh_left($i) [expr {1 + [fx_whole [fx_embedded_$i] 0]}]
    if {![info exists fh_conn($i)]} {
        set p [fx_pair $i $rr_client($i) $srv]
        set f $nextfid
        incr nextfid
        foreach x [lrange $p 0 1] { $x set fid_ $f }
        set fh_conn($i) [list $p $srv]
    }
    fh_request $i
}
# The next object's request (with transfer "page": the page's one request, answered by all its
# objects' bytes). The server's receiver answers once the whole request is in; the client's
# calls fh_got once the whole response is.
proc fh_request {i} {
    global ns rr_started fh_conn fh_left fh_page fx_rcv
    foreach {a b ra rb} [lindex $fh_conn($i) 0] break
    incr rr_started($i)
    set k $rr_started($i)
    set req [fx_whole [fx_request_$i] 1]
    set resp [fx_whole [fx_response_$i] 1]
    incr fh_left($i) -1
    if {$fh_page($i)} {
        # RFC 2415 §2: "transfer size is now made up of four web files"; the embedded objects'
        # requests are drawn (the draws stay aligned with "objects") but not sent.
        while {$fh_left($i) > 0} {
            fx_request_$i
            incr resp [fx_whole [fx_response_$i] 1]
            incr fh_left($i) -1
        }
    }
    rr_note "open $i $k [$ns now] $resp"
    set fx_rcv($i,$k) $ra
    $rb set got 0
    $rb set want $req
    $rb set then [list $b advance-bytes $resp]
    $ra set got 0
    $ra set want $resp
    $ra set then [list fh_got $i $k]
    $a advance-bytes $req
}
proc fh_got {i k} {
    global ns fx_rcv fh_left fh_keep rr_count fw_page apps_left
    rr_note "got $i $k [$ns now]"
    unset fx_rcv($i,$k)
    if {$fh_left($i) > 0} {
        fh_request $i
        return
    }
    rr_note "pdone $i $fw_page($i) [$ns now]"
    set last [expr {$rr_count($i) >= 0 && $fw_page($i) >= $rr_count($i)}]
    if {$last || !$fh_keep($i)} { fh_close $i }
    if {$last} {
        incr apps_left -1
        return
    }
    $ns at [expr {[$ns now] + [rr_think_$i]}] "fh_page $i"
}
# The client ends the connection (FullTcpAgent::usrclosed(): FIN_WAIT_1); the server closes in
# turn from CLOSE_WAIT (halfclose_ false); the pair is free once both agents are done.
proc fh_close {i} {
    global fh_conn fh_left2
    foreach {p srv} $fh_conn($i) break
    unset fh_conn($i)
    foreach {a b ra rb} $p break
    set fh_left2($a) 2
    foreach x [list $a $b] { $x proc done {} [list fh_end $x $a $i $srv $p] }
    $a close
}
proc fh_end {x a i srv p} {
    global fh_left2 fx_free rr_client
    $x proc done {} {}
    incr fh_left2($a) -1
    if {$fh_left2($a) > 0} { return }
    unset fh_left2($a)
    lappend fx_free($i,$rr_client($i),$srv) $p
}
"""


def _rv(proc: str, n: int, v, path: str, kind: str, refuse, nbytes) -> List[str]:
    """`proc <proc>_<n>`: one draw of a size (`kind` "size") or count ("count") from ns-2's
    stream, as tcplab draws it (rounded by the caller, `fx_whole`)."""
    value = (lambda x, p: float(nbytes(x, p))) if kind == "size" else (lambda x, p: float(x))
    if isinstance(v, dict) and set(v) == {"named"}:
        try:
            v = json.loads(api._core.named_table(v["named"], kind))
        except ValueError as e:
            raise refuse(path, f"{v['named']!r}: {e} (the export draws a CDF in Tcl)") from None
    if isinstance(v, dict) and set(v) == {"empirical"}:
        t = v["empirical"]
        if not isinstance(t, dict) or "cdf" not in t:
            raise refuse(path + ".empirical", "a CDF read from a file is not exported (write its points, `cdf`)")
        xs = [value(x, path) for x, _ in t["cdf"]]
        fs = [float(f) for _, f in t["cdf"]]
        rv = f"{proc}_u({n})"
        return [f"set {rv} [new RandomVariable/Uniform]",
                f"proc {proc}_{n} {{}} {{ global {proc}_u; return [fx_emp [${rv} value] {{{' '.join(repr(x) for x in xs)}}} "
                f"{{{' '.join(repr(f) for f in fs)}}} {int(bool(t.get('interpolate', True)))}] }}"]
    return _draw(proc, n, v, path, refuse, value, "sizes" if kind == "size" else "counts")


def lines(n: int, a: dict, ra: dict, base: str, idx: dict, *, refuse, seconds, nbytes, check_tcp: Callable, agent_lines: Callable,
          full_agents: dict) -> List[str]:
    """The Tcl of two-way session `n` (the plan's app `ra`, of the entry `a` at `base`)."""
    kind = a["kind"]
    if not (ra["tcp"]["client"]["fin"] and ra["tcp"]["server"]["fin"]):
        if kind == "http11":
            # tcplab's http11 client without FINs closes its server at once (app/web.rs); ns-2's
            # FullTcp always closes with a FIN.
            raise refuse(base + ".tcp.fin", "http11 is exported on ns-2's FullTcp, whose connections close with FINs (fin = true: "
                                            "the `ns2-full` profile)")
        raise refuse(base + ".mode", f"{a.get('mode', 'twoway')!r}: two-way exchanges are exported on ns-2's FullTcp (fin = true: "
                                     "the `ns2-full` profile); mode = \"oneway\" is ns-2's one-way web object")
    for k in a:
        if k not in KEYS:
            raise refuse(f"{base}.{k}", f"`{k}` is not exported for two-way clients")
    if kind not in KINDS:
        raise refuse(base + ".kind", f"{kind!r}: two-way clients exported are {', '.join(KINDS)}")
    if kind == "http10" and ra.get("objects") is not None:
        raise refuse(base + ".objects", "pages of `objects` (ns-2's WebTraf) are exported one-way only (mode = \"oneway\")")
    if kind == "http10" and ra.get("page_spacing") != "end_to_start":
        raise refuse(base + ".page_spacing", f"{ra.get('page_spacing')!r}: two-way pages are exported closed loop (\"end_to_start\")")
    own = a.get("tcp") or {}
    ends = {}
    for end in ("client", "server"):
        k = ra["tcp"][end]
        where = base + (".server_tcp" if end == "server" and a.get("server_tcp") else ".tcp")
        check_tcp(k, own if end == "client" else dict(own, **(a.get("server_tcp") or {})), where)
        ends[end] = k
    if ends["client"]["variant"] != ends["server"]["variant"]:
        raise refuse(base + ".server_tcp.variant", "one FullTcp agent class for both ends")
    for s in [ra["client"]] + list(ra["servers"]):
        if s not in idx:
            raise refuse(base + ".server", f"{s!r} is not a node")
    count = ra.get("count")
    count = -1 if count in (None, "unlimited") else int(count)
    out = [f"# two-way session {n}: {base} {ra['name']} ({kind}) {ra['client']} -> {', '.join(ra['servers'])} (FullTcp)",
           f"set rr_client({n}) {idx[ra['client']]}", f"set rr_servers({n}) {{{' '.join(str(idx[s]) for s in ra['servers'])}}}",
           f"set rr_su({n}) [new RandomVariable/Uniform]", f"set rr_started({n}) 0", f"set rr_count({n}) {count}"]
    body = [f"proc fx_agent_{n} {{side}} {{"]
    for side in ("client", "server"):
        k = ends[side]
        mss = nbytes(k["mss"], base + ".tcp.mss")
        body += [f"    if {{$side == \"{side}\"}} {{", f"        set a [new {full_agents[k['variant']]}]"]
        body += ["        " + s.replace("$tcp({})", "$a") for s in agent_lines(k["variant"], k, mss, base + ".tcp", own)]
        body += ["        return $a", "    }"]
    body.append("}")
    out += body
    # The two messages, in the plan's terms (an FTP download: the command, then the file).
    req_key = "file" if kind == "ftp" and a.get("direction") == "upload" else "request"
    resp_key = "file" if kind == "ftp" and a.get("direction", "download") == "download" else "response"
    out += _rv("fx_request", n, ra["request"], f"{base}.{req_key}", "size", refuse, nbytes)
    out += _rv("fx_response", n, ra["response"], f"{base}.{resp_key}", "size", refuse, nbytes)
    out += _draw("rr_think", n, ra["think"], base + ".think", refuse, seconds, "think times")
    if kind in ("http10", "http11"):
        out += _rv("fx_embedded", n, ra["embedded"], base + ".embedded", "count", refuse, nbytes)
        out.append(f"set fw_page({n}) 0")
    if kind == "http10":
        out.append(f"$ns at {ra['start_ns'] / 1e9!r} \"fw_page {n}\"")
    elif kind == "http11":
        out += [f"set fh_keep({n}) {int(bool(ra.get('keep_alive')))}", f"set fh_page({n}) {int(ra.get('transfer') == 'page')}",
                f"$ns at {ra['start_ns'] / 1e9!r} \"fh_page {n}\""]
    else:
        out.append(f"$ns at {ra['start_ns'] / 1e9!r} \"fx_open {n}\"")
    return out
