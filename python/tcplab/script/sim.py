"""The simulated stack of scripted tests: one connection of a profile or preset
(`tcplab._core.ScriptSim`, crates/tcplab-core/src/scripted.rs) in virtual time, behind a socket
model that maps the script's calls onto the connection's listen/connect/write/read/close.

What the model or the runner lacks is named, never faked: Fast Open makes a script "not
supported"; TCP timestamps (RFC 7323, the `timestamps` knob, `tcp_timestamps`) are played with
their values (the runner maps them as packetdrill does, `tsopt.py`); window scaling is not modelled (a `wscale` option in an expected packet is not
compared, and the script's scaled windows are passed unscaled); PSH is not compared (the
`linux` profile marks it where the kernel does for a bulk write, tcp/tso.rs, not at each of a
script's writes); sysctls without a counterpart are listed in the result's notes (knobs.SIM_MAP).
Socket-level behaviour (shutdown, TCP_MAXSEG, TCP_USER_TIMEOUT, getsockopt) follows Linux's
inet_shutdown/tcp_shutdown and do_tcp_{set,get}sockopt; the send buffer is not modelled, so
getsockopt(SO_SNDBUF) is "not supported".
"""

from __future__ import annotations

import json

from .knobs import Unsupported, expand, sim_overrides
from .runner import Fail, Out, Stack

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
        #: setsockopt(TCP_MAXSEG)'s value (Linux tp->rx_opt.user_mss), applied to the connection
        #: the stack makes; `_probe` (a stack with no connection) answers for sockets without one.
        self.user_mss = None
        self.user_timeout = None
        self._probe = None

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
        if cfg.get("hz") and "jiffy_offset" not in spec:
            # A kernel's jiffy ticks fall at no fixed phase to the script's time 0 (packetdrill
            # starts it when the script does): the model puts them half a jiffy off, the mean.
            spec["jiffy_offset"] = f"{500_000 // cfg['hz']}us"
            sim = _core.ScriptSim(json.dumps(spec))
            cfg = json.loads(sim.config())
        for n in sim_overrides(self.sysctls, cfg)[1]:
            if n not in self.notes:
                self.notes.append(n)
        if probe:
            # The MSS the stack advertises in its SYN: the profile's, whatever the peer allows.
            self.own_mss = int(str(cfg.get("mss", 1460)).rstrip("B"))
            self._probe = sim
        else:
            sim.set_route_advmss(self.own_mss)
            if self.user_mss is not None:
                sim.set_user_mss(self.user_mss)
            if self.user_timeout is not None:
                sim.set_user_timeout(self.user_timeout)
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
                opts.append(("mss", self.sim.advertised_mss()))
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
        if name == "getsockopt":
            return self._getsockopt(ev, fd, a)
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
            err = self.sim.take_error()
            if err:
                return -1, err  # tcp_sendmsg_locked() → sk_stream_error(): sk_err, once
            if self.fds[fd].get("closed_wr"):
                return -1, "EPIPE"  # RFC 9293 §3.10.2: SEND after CLOSE is an error
            if not self.sim.write(n):
                return -1, "EPIPE"  # the connection is gone: sk_stream_wait_connect() → EPIPE
            return n, None
        if name in ("read", "recv"):
            n = _int(a[2]) if len(a) > 2 else None
            if n is None or self.sim is None:
                raise Unsupported(f"{name} without a length (line {ev.line})")
            if self.sim.readable() > 0:
                return self.sim.read(n), None
            if self.sim.peer_closed() or sock.get("closed_rd"):
                # Linux tcp_recvmsg(): with the queue empty, RCV_SHUTDOWN (the peer's FIN, or
                # shutdown(SHUT_RD)) ends the read with 0 instead of blocking.
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
            return self._shutdown(sock, fd, a[1] if len(a) > 1 else "")
        raise Unsupported(f"call {name}")

    def _shutdown(self, sock, fd, how: str):
        """shutdown(2) as Linux's inet_shutdown() and tcp_shutdown() (net/ipv4/af_inet.c,
        net/ipv4/tcp.c): SHUT_RD only marks RCV_SHUTDOWN, so a read of an empty queue returns 0
        while arriving data is still ACKed and queued (tcp_rcv_established does not look at it);
        SHUT_WR sends the FIN after the queued data (tcp_shutdown → tcp_close_state →
        tcp_send_fin) and a later write fails with EPIPE (sk_stream_error); SHUT_RDWR is both."""
        if how not in ("SHUT_RD", "SHUT_WR", "SHUT_RDWR"):
            raise Unsupported(f"shutdown {how}")
        if sock.get("listen"):
            raise Unsupported("shutdown of a listening socket")
        if fd != self.conn_fd or self.sim is None:
            return -1, "ENOTCONN"  # inet_shutdown(): not connected
        if how in ("SHUT_RD", "SHUT_RDWR"):
            sock["closed_rd"] = True
            self.sim.shutdown_read()
        if how in ("SHUT_WR", "SHUT_RDWR") and not sock.get("closed_wr"):
            self.sim.shutdown_write()
            sock["closed_wr"] = True
        return 0, None

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
        if opt == "TCP_MAXSEG":
            v = _int(val.strip("[] "))
            if v is None:
                raise Unsupported(f"setsockopt TCP_MAXSEG value {val}")
            err = self._probe.set_user_mss(v)  # the range check: EINVAL, as do_tcp_setsockopt()
            if err:
                return -1, err
            self.user_mss = v
            if self.sim is not None:
                self.sim.set_user_mss(v)
            return 0, None
        if opt == "TCP_USER_TIMEOUT":
            v = _int(val.strip("[] "))
            if v is None:
                raise Unsupported(f"setsockopt TCP_USER_TIMEOUT value {val}")
            err = (self.sim or self._probe).set_user_timeout(v)
            if err:
                return -1, err
            self.user_timeout = v  # kept for the connection made later (_make)
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

    def _getsockopt(self, ev, fd, a):
        """getsockopt(2) of what the model keeps; the script's value (`[N]`) is compared."""
        opt = a[2] if len(a) > 2 else ""
        val = a[3] if len(a) > 3 else ""
        want = _int(val.strip("[] ")) if val.startswith("[") and val != "[...]" else None
        if want is None:
            raise Unsupported(f"getsockopt {opt} value {val}")
        if opt == "TCP_MAXSEG":
            # do_tcp_getsockopt(): the connection's mss_cache; a socket without a connection
            # (CLOSE or LISTEN) reads user_mss when set, else TCP_MSS_DEFAULT.
            got = (self.sim if fd == self.conn_fd and self.sim is not None else self._probe).maxseg()
        elif opt == "SO_ERROR":
            # sock_error(): sk->sk_err, which only a reset, a refused connect or a timeout
            # sets; the model reports none of those as an errno yet.
            if self.sim is not None and self.info().get("tcpi_state") == 7 and fd == self.conn_fd:
                raise Unsupported("getsockopt SO_ERROR of a connection that ended (socket errors are not modelled)")
            got = 0
        else:
            raise Unsupported(f"getsockopt {opt}" + (" (the send buffer is not modelled)" if opt == "SO_SNDBUF" else ""))
        if got != want:
            raise Fail(ev, f"getsockopt gave {got}", str(want), str(got))
        return 0, None

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
