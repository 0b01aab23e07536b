"""The simulated stack of scripted tests: one connection of a profile or preset
(`tcplab._core.ScriptSim`, crates/tcplab-core/src/scripted.rs) in virtual time, behind a socket
model that maps the script's calls onto the connection's listen/connect/write/read/close.

What the model or the runner lacks is named, never faked: Fast Open makes a script "not
supported"; TCP timestamps (RFC 7323, the `timestamps` knob, `tcp_timestamps`) are played with
their values (the runner maps them as packetdrill does, `tsopt.py`); window scaling is not modelled (a `wscale` option in an expected packet is not
compared, and the script's scaled windows are passed unscaled); PSH is not modelled (not
compared); sysctls without a counterpart are listed in the result's notes (knobs.SIM_MAP).
"""

from __future__ import annotations

import json

from .knobs import Unsupported, expand, sim_overrides
from .runner import Out, Stack

#: setsockopt options the model takes (with their effect) at the SOL_SOCKET and IPPROTO_TCP levels.
_SOCKOPTS_NOOP = {"SO_REUSEADDR", "SO_REUSEPORT", "SO_SNDBUF", "SO_KEEPALIVE"}


class SimStack(Stack):
    has_psh = False

    def __init__(self, tcp: dict | None = None):
        self.tcp = dict(tcp or {"profile": "linux"})
        self.name = "sim:" + ",".join(f"{v}" for v in self.tcp.values())
        self.notes: list = []
        self.sysctls: list = []
        self.knobs: dict = {}
        self.sim = None
        self.fds: dict = {}
        self.next_fd = 3
        self.conn_fd = None
        self.peer_wscale = 0
        self._pending: list = []
        self._done: list = []
        self.own_mss = None
        self._now = 0.0

    # -- set-up --------------------------------------------------------------------------
    def start(self, script) -> None:
        self.synack_mss = None
        for ev in script.events:
            if ev.kind == "packet" and ev.body.direction == "<" and set("S.") <= set(ev.body.flags) and self.synack_mss is None:
                self.synack_mss = next((o.values[0] for o in ev.body.options or () if o != "..." and o.name == "mss"), None)
        # A bad stack description fails here, naming the key.
        self._make(probe=True)

    def _make(self, probe: bool = False):
        from .. import _core

        knobs, _ = sim_overrides(self.sysctls)
        spec = {**self.tcp, **knobs, **self.knobs}
        sim = _core.ScriptSim(json.dumps(spec))
        cfg = json.loads(sim.config())
        for n in sim_overrides(self.sysctls, cfg)[1]:
            if n not in self.notes:
                self.notes.append(n)
        if probe:
            # The MSS the stack advertises in its SYN: the profile's, whatever the peer allows.
            self.own_mss = int(str(cfg.get("mss", 1460)).rstrip("B"))
        if not probe:
            sim.advance(self._now)  # the connection is made at the script's time, not at 0
            self.sim = sim
        return sim

    def shell(self, pairs) -> None:
        if self.sim is not None:
            for k, v in expand(pairs):
                raise Unsupported(f"sysctl net.ipv4.{k} after the connection opened (the simulated profile is fixed then)")
        self.sysctls.extend(pairs)
        sim_overrides(self.sysctls)  # refuse what the model cannot take, now

    # -- time and packets --------------------------------------------------------------------
    def now(self) -> float:
        return self.sim.now() if self.sim is not None else self._now

    def pump(self, until: float, first: bool = False) -> list:
        if self.sim is None:
            self._now = max(self._now, until)
            return []
        out = []
        for t, flags, seq, ack, length, wnd, sp, sack, ts in self.sim.advance(max(0.0, until)):
            opts = []
            if flags & 0x02:
                opts.append(("mss", self.own_mss))
                if sp:
                    opts.append(("sackOK",))
            if ts is not None:
                opts.append(("TS", ts[0], ts[1]))
            if sack:
                opts.append(("sack", tuple(sack)))
            out.append(Out(t, flags, seq, ack, length, wnd, tuple(opts)))
        return out

    def inject(self, pkt, ev) -> None:
        if self.sim is None:
            raise Unsupported(f"a packet before listen() or connect() (line {ev.line}): the simulated stack answers nothing")
        mss = sack_ok = ts = None
        blocks = []
        for o in pkt.options or ():
            if o == "...":
                raise Unsupported(f"<...> options on an inbound packet (line {ev.line})")
            if o.name == "mss":
                mss = o.values[0]
            elif o.name == "sackOK":
                sack_ok = True
            elif o.name == "sack":
                blocks = list(o.values)
            elif o.name == "TS":
                ts = tuple(int(x) % (1 << 32) for x in o.values)  # TSecr already mapped by the runner
            elif o.name == "wscale" and "S" in pkt.flags:
                self.peer_wscale = min(o.values[0], 14)
        if pkt.seq is None:
            raise Unsupported(f"an inbound packet with elided seq:end(len) (line {ev.line})")
        win = pkt.win if pkt.win is not None else 65535
        if "S" not in pkt.flags:
            win <<= self.peer_wscale  # RFC 7323 §2.3: the scaled window, as the model reads bytes
        self.sim.inject(pkt.flag_bits, pkt.seq, pkt.ack or 0, min(win, 2**32 - 1), pkt.length, blocks, bool(sack_ok), mss, ts)
        self._check_pending()

    def compare_options(self, exp, got) -> str | None:
        if exp == ("...",):
            return None
        want = {o.name: o.values for o in exp or ()}
        have = {o[0]: o[1:] for o in got}
        if "wscale" in want:
            note = "window scaling is not modelled: expected wscale options are not compared"
            if note not in self.notes:
                self.notes.append(note)
        for name in ("mss", "sackOK", "TS"):
            if (name in want) != (name in have):
                return f"{name} {'missing' if name in want else 'not expected'}"
            if name == "mss" and want.get("mss") != have.get("mss"):
                return f"mss {have['mss'][0]} instead of {want['mss'][0]}"
        ws, hs = want.get("sack"), have.get("sack", (None,))[0]
        if (ws is None) != (hs is None) or (ws is not None and tuple(ws) != tuple(hs)):
            return f"sack blocks {hs} instead of {ws}"
        return None

    # -- socket calls --------------------------------------------------------------------------
    def call(self, ev, t_end):
        c = ev.body
        name, a = c.name, c.args
        fd = _int(a[0]) if a else None
        if name == "socket":
            # The script names the descriptor it expects; the runner's table maps it.
            n = c.ret if c.ret is not None and c.ret >= 0 and c.ret not in self.fds else self.next_fd
            self.next_fd = max(self.next_fd, n) + 1
            self.fds[n] = {"nonblock": "SOCK_NONBLOCK" in "".join(a)}
            return n, None
        if fd not in self.fds:
            if name in ("close", "read", "write", "accept", "listen", "bind", "connect", "setsockopt", "getsockopt", "fcntl", "shutdown", "send", "recv"):
                return -1, "EBADF"
            raise Unsupported(f"call {name}")
        sock = self.fds[fd]
        if name == "bind":
            return 0, None
        if name == "listen":
            if self.sim is None:
                self._make()
            self.sim.listen()
            sock["listen"] = True
            return 0, None
        if name == "setsockopt":
            return self._setsockopt(ev, a)
        if name == "fcntl":
            cmd = a[1] if len(a) > 1 else ""
            if cmd == "F_SETFL":
                sock["nonblock"] = "O_NONBLOCK" in a[2]
                return 0, None
            if cmd == "F_GETFL":
                return 0x2 | (0x800 if sock["nonblock"] else 0), None
            raise Unsupported(f"fcntl {cmd}")
        if name == "accept":
            if self.sim is not None and self.sim.established() and not sock.get("accepted"):
                return self._accepted(sock, c.ret), None
            if sock["nonblock"]:
                return -1, "EAGAIN"
            self._pending.append((ev, "accept", sock))
            return None
        if name == "connect":
            if self.sim is None:
                if self.synack_mss is not None:
                    # The model fixes its MSS when it connects; the script's SYN-ACK (read ahead)
                    # says what the peer allows (RFC 9293 §3.7.1), as a kernel learns it then.
                    self.knobs["mss"] = min(self.own_mss or self.synack_mss, self.synack_mss)
                self._make()
            self.sim.connect()
            self.conn_fd = fd
            if sock["nonblock"]:
                return -1, "EINPROGRESS"
            self._pending.append((ev, "connect", sock))
            return None
        if name in ("write", "send"):
            n = _int(a[2]) if len(a) > 2 else None
            if n is None or self.sim is None or fd != self.conn_fd:
                raise Unsupported(f"{name} without a connected socket or a length (line {ev.line})")
            if self.fds[fd].get("closed_wr"):
                return -1, "EPIPE"  # RFC 9293 §3.10.2: SEND after CLOSE is an error
            self.sim.write(n)
            return n, None
        if name in ("read", "recv"):
            n = _int(a[2]) if len(a) > 2 else None
            if n is None or self.sim is None:
                raise Unsupported(f"{name} without a length (line {ev.line})")
            if self.sim.readable() > 0:
                return self.sim.read(n), None
            if self.sim.peer_closed():
                return 0, None
            if sock["nonblock"]:
                return -1, "EAGAIN"
            self._pending.append((ev, "read", (sock, n)))
            return None
        if name == "close":
            if fd == self.conn_fd and self.sim is not None:
                self.sim.close()
            del self.fds[fd]
            return 0, None
        if name == "shutdown":
            if len(a) > 1 and a[1] == "SHUT_WR" and fd == self.conn_fd:
                self.sim.close()
                sock["closed_wr"] = True
                return 0, None
            raise Unsupported(f"shutdown {a[1] if len(a) > 1 else ''}")
        raise Unsupported(f"call {name}")

    def _accepted(self, sock, want=None) -> int:
        sock["accepted"] = True
        n = want if want is not None and want >= 0 and want not in self.fds else self.next_fd
        self.next_fd = max(self.next_fd, n) + 1
        self.fds[n] = {"nonblock": False}
        self.conn_fd = n
        return n

    def _setsockopt(self, ev, a):
        opt = a[2] if len(a) > 2 else ""
        val = a[3] if len(a) > 3 else ""
        if opt in _SOCKOPTS_NOOP:
            return 0, None
        if opt == "TCP_NODELAY":
            on = val.strip("[] ") not in ("0", "")
            if self.sim is not None:
                raise Unsupported("TCP_NODELAY after the connection opened")
            self.knobs["nagle"] = not on
            return 0, None
        if opt == "TCP_CONGESTION":
            # The socket's controller, as the tcp_congestion_control sysctl maps (knobs.py).
            cc = val.strip('"')
            if cc in ("reno", "cubic"):
                if self.sim is not None:
                    raise Unsupported("TCP_CONGESTION after the connection opened")
                self.knobs["cc"] = cc
            else:
                note = f"TCP_CONGESTION {cc}: the simulator runs only reno and cubic from a script; the profile's cc stays"
                if note not in self.notes:
                    self.notes.append(note)
            return 0, None
        raise Unsupported(f"setsockopt {opt}")

    def _check_pending(self) -> None:
        keep = []
        for ev, kind, x in self._pending:
            if kind == "accept" and self.sim.established():
                self._done.append((ev, self._accepted(x, ev.body.ret), None, self.sim.now()))
            elif kind == "connect" and self.sim.established():
                self._done.append((ev, 0, None, self.sim.now()))
            elif kind == "read" and (self.sim.readable() > 0 or self.sim.peer_closed()):
                self._done.append((ev, self.sim.read(x[1]), None, self.sim.now()))
            else:
                keep.append((ev, kind, x))
        self._pending = keep

    def completed(self) -> list:
        if self.sim is not None:
            self._check_pending()
        done, self._done = self._done, []
        return done

    def pending(self) -> list:
        return [p[0] for p in self._pending]

    def info(self) -> dict:
        return json.loads(self.sim.info()) if self.sim is not None else {}

    def stop(self) -> None:
        self.sim = None


def _int(s: str):
    try:
        return int(s, 0)
    except (TypeError, ValueError):
        return None
