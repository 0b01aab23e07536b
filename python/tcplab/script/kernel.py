"""The real Linux kernel as the stack of scripted tests (`tcplab script --kernel`).

The runner makes two network namespaces per script, S (the kernel under test, address
10.204.1.2) and C (the script's side), joined by a veth pair with offloads off (no
TSO/GSO/GRO, so a TSO super-segment is seen as its MSS-sized pieces). The script's packets are
raw frames from an alias address (10.204.1.50) that no kernel owns, through TBIT's raw transport
(`tbit.real.RawTransport`): a static neighbour entry in S points the alias at C's veth, where the
raw socket reads the kernel's frames with their receive timestamps and C's kernel drops them
silently. Socket calls run for real on sockets made in S (setns on this thread; a blocking call
runs on a helper thread); `%{ }%` reads getsockopt(TCP_INFO). Everything is deleted after the
script, on an exception, and by `tcplab testbed cleanup` if the process was killed.

Needs Linux and root.
"""

from __future__ import annotations

import atexit
import errno as _errno
import fcntl
import random
import select
import socket
import struct
import sys
import threading
import time

from .. import netns
from ..tbit.real import NS_PREFIX, Lab, RawTransport, in_netns, missing  # noqa: F401 - missing is re-exported
from .knobs import Unsupported, expand
from .runner import Fail, Out, Stack

NET = "10.204.1"
PORT = 8080  # packetdrill's default local port
TCP_INFO, TCP_CONGESTION = 11, 13

#: struct tcp_info (include/uapi/linux/tcp.h), field by field as far as the runner reads it.
_TCPI = [
    ("B", "state"), ("B", "ca_state"), ("B", "retransmits"), ("B", "probes"), ("B", "backoff"), ("B", "options"), ("B", "wscale"), ("B", "app_limited"),
    ("I", "rto"), ("I", "ato"), ("I", "snd_mss"), ("I", "rcv_mss"), ("I", "unacked"), ("I", "sacked"), ("I", "lost"), ("I", "retrans"), ("I", "fackets"),
    ("I", "last_data_sent"), ("I", "last_ack_sent"), ("I", "last_data_recv"), ("I", "last_ack_recv"),
    ("I", "pmtu"), ("I", "rcv_ssthresh"), ("I", "rtt"), ("I", "rttvar"), ("I", "snd_ssthresh"), ("I", "snd_cwnd"), ("I", "advmss"), ("I", "reordering"),
    ("I", "rcv_rtt"), ("I", "rcv_space"), ("I", "total_retrans"),
    ("Q", "pacing_rate"), ("Q", "max_pacing_rate"), ("Q", "bytes_acked"), ("Q", "bytes_received"),
    ("I", "segs_out"), ("I", "segs_in"), ("I", "notsent_bytes"), ("I", "min_rtt"), ("I", "data_segs_in"), ("I", "data_segs_out"),
    ("Q", "delivery_rate"), ("Q", "busy_time"), ("Q", "rwnd_limited"), ("Q", "sndbuf_limited"),
    ("I", "delivered"), ("I", "delivered_ce"), ("Q", "bytes_sent"), ("Q", "bytes_retrans"), ("I", "dsack_dups"), ("I", "reord_seen"),
    ("I", "rcv_ooopack"), ("I", "snd_wnd"), ("I", "rcv_wnd"),
]


def parse_tcp_info(raw: bytes) -> dict:
    """The tcpi_* fields present in `raw` (older kernels return a shorter struct)."""
    out, off = {}, 0
    for code, name in _TCPI:
        fmt = "=" + code
        if code == "Q" and off % 8:
            off += 8 - off % 8  # natural alignment of the u64 fields
        n = struct.calcsize(fmt)
        if off + n > len(raw):
            break
        out["tcpi_" + name] = struct.unpack_from(fmt, raw, off)[0]
        off += n
    if "tcpi_wscale" in out:
        w = out.pop("tcpi_wscale")
        out["tcpi_snd_wscale"], out["tcpi_rcv_wscale"] = w & 0xF, w >> 4
    out.pop("tcpi_app_limited", None)
    return out


class _Lab:
    """S and C namespaces over one veth pair (see the module docstring), made and removed by the
    labs' one helper (`netns.Namespaces`)."""

    def __init__(self):
        Lab._made += 1
        import os

        tag = f"{NS_PREFIX}{os.getpid()}n{Lab._made}"
        self.C, self.S = f"{tag}c", f"{tag}s"
        self.ns = netns.Namespaces()

    def sh(self, *args, ns=None, check=True, timeout=15):
        return self.ns.sh(*args, ns=ns, check=check, timeout=timeout)

    def build(self) -> str:
        # Removed after the script (KernelStack.stop), at interpreter exit, or by `tcplab testbed
        # cleanup` once the process is gone (the names are those of TBIT's labs).
        atexit.register(self.close)
        C, S = self.C, self.S
        self.ns.add(C, S)
        self.ns.veth(C, "c0", S, "s0")
        # The script may inject segments larger than an Ethernet MTU (packetdrill's tun takes
        # them, as GRO would build them): the veths take 64 KB frames, while the route keeps
        # the kernel's own path MTU at 1500 bytes (MSS 1460, as on packetdrill's tun).
        for ns, dev in ((C, "c0"), (S, "s0")):
            self.sh("ip", "-n", ns, "link", "set", dev, "mtu", "65535")
        self.ns.addr(S, "s0", f"{NET}.2/24")
        # The untuned kernel's congestion control, CUBIC (the default of every build, and
        # packetdrill's), whatever the host made its own default: a new namespace takes the
        # root namespace's (a host set to bbr would run the scripts with bbr). A script's
        # `tcp_congestion_control` replaces it.
        self.route(congctl="cubic")
        c_mac, s_mac = self.ns.mac(C, "c0"), self.ns.mac(S, "s0")
        self.sh("ip", "-n", S, "neigh", "replace", f"{NET}.50", "lladdr", c_mac, "dev", "s0", "nud", "permanent")
        self.sysctl({"tcp_no_metrics_save": "1"})
        return s_mac

    def route(self, congctl: str | None = None) -> None:
        cmd = ["ip", "-n", self.S, "route", "replace", f"{NET}.0/24", "dev", "s0", "mtu", "lock", "1500", "advmss", "1460"]
        if congctl:
            self.congctl = congctl
        if getattr(self, "congctl", None):
            cmd += ["congctl", self.congctl]
        self.sh(*cmd)

    def sysctl(self, kv: dict) -> None:
        args = []
        for k, v in kv.items():
            if k == "qdisc":
                if v == "delete":
                    self.sh("tc", "qdisc", "del", "dev", "s0", "root", ns=self.S, check=False)  # none to delete is fine
                else:
                    self.sh("tc", "qdisc", "replace", "dev", "s0", "root", *v.split(), ns=self.S)
                continue
            if k == "tcp_congestion_control":
                # A namespace may only make a congestion control of tcp_allowed_congestion_control its
                # default (reno or bbr on the project's machines): the route
                # sets any available one for the connections it carries.
                self.route(congctl=v)
                continue
            args.append(f"net.ipv4.{k}={v}")
        if args:
            r = self.sh("sysctl", "-qw", *args, ns=self.S, check=False)
            if r.returncode != 0:
                raise Unsupported(f"sysctl on this kernel: {r.stderr.strip()}")

    def close(self) -> None:
        self.ns.close()
        atexit.unregister(self.close)


class KernelStack(Stack):
    name = "kernel"

    def __init__(self):
        self.notes: list = []
        self.lab = None
        self.tr = None
        self.socks: dict = {}
        self.next_fd = 3
        self.conn_fd = None
        self._pending: list = []
        self._ops: list = []
        self._finished: list = []
        self._lock = threading.Lock()

    def start(self, script) -> None:
        self.lab = _Lab()
        try:
            s_mac = self.lab.build()
            self.tr = RawTransport("c0", f"{NET}.50", f"{NET}.2", PORT, s_mac, netns=self.lab.C)
        except BaseException:
            self.lab.close()
            raise
        self.tr.open()
        self.tr.sport = random.randint(40000, 60000)
        self._realtime(True)
        self.tr.t0 = time.time()

    def _realtime(self, on: bool) -> None:
        """Run the script's clock at a real-time priority (SCHED_FIFO 10, as the testbed's delay
        box runs), so that a loaded machine does not push injected packets past the tolerance;
        the runner sleeps in select() between events, never spins."""
        import os

        try:
            if on:
                # A blocking call's thread must get the interpreter soon after the kernel wakes
                # it, not after the default 5 ms switch interval.
                self._switch = sys.getswitchinterval()
                sys.setswitchinterval(0.0002)
                self._sched = os.sched_getscheduler(0), os.sched_getparam(0)
                os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(10))
            else:
                if getattr(self, "_switch", None) is not None:
                    sys.setswitchinterval(self._switch)
                    self._switch = None
                if getattr(self, "_sched", None) is not None:
                    os.sched_setscheduler(0, self._sched[0], self._sched[1])
                    self._sched = None
        except (OSError, AttributeError) as e:
            note = f"no real-time priority for the runner ({e}): timing may suffer on a loaded machine"
            if on and note not in self.notes:
                self.notes.append(note)

    def shell(self, pairs) -> None:
        t = time.time()
        for k, v in expand(pairs):
            self.lab.sysctl({k: v})
        # The script's clock stands still while a set-up command runs (it takes milliseconds
        # here, none in packetdrill's process).
        self.tr.t0 += time.time() - t

    def now(self) -> float:
        return self.tr.now()

    def pump(self, until: float, first: bool = False) -> list:
        out = []
        while True:
            if first and out:
                # Return with what has come as soon as something came (and what came with it).
                seg = self.tr.recv(0.0002)
                if seg is None:
                    break
                out.append(self._out(seg))
                continue
            if self._ops:
                self._progress()
            left = until - self.tr.now()
            seg = self.tr.recv(min(max(left, 0.0005), 0.0005) if self._ops else max(left, 0.0005))
            if seg is None:
                if left <= 0:
                    break
                continue
            out.append(self._out(seg))
        return out

    def _out(self, seg) -> Out:
        return Out(seg.t, seg.flags, seg.seq, seg.ack, seg.length, seg.wnd, tuple(seg.options))

    def inject(self, pkt, ev) -> None:
        if pkt.seq is None:
            raise Unsupported(f"an inbound packet with elided seq:end(len) (line {ev.line})")
        # The script's options in its order and layout, written by the core's codec.
        opts = []
        for o in pkt.options or ():
            if o == "...":
                raise Unsupported(f"<...> options on an inbound packet (line {ev.line})")
            if o.name in ("mss", "wscale"):
                opts.append((o.name, o.values[0]))
            elif o.name in ("sackOK", "nop", "eol"):
                opts.append((o.name,))
            elif o.name == "sack":
                base = self.tr.server_isn or 0
                opts.append(("sack", tuple(((base + a) & 0xFFFFFFFF, (base + b) & 0xFFFFFFFF) for a, b in o.values)))
            elif o.name == "TS":
                # TSval as written; TSecr already mapped onto the kernel's clock by the runner
                # (packetdrill's map_inbound_packet, tsopt.py). More than 40 option bytes is the
                # codec's ValueError, a Fail below.
                opts.append(("TS", o.values[0] % (1 << 32), o.values[1] % (1 << 32)))
        tr = self.tr
        seq = (tr.isn + pkt.seq) & 0xFFFFFFFF
        ack = ((tr.server_isn or 0) + (pkt.ack or 0)) & 0xFFFFFFFF if pkt.ack is not None else 0
        win = pkt.win if pkt.win is not None else 65535
        try:
            frame = tr._frame(pkt.flag_bits, seq, ack, win, bytes(pkt.length), tr.dst, tr.sport, tr.port, options=opts)
        except ValueError as e:
            raise Fail(ev, str(e)) from None
        tr.sock.send(frame)

    def compare_options(self, exp, got) -> str | None:
        if exp == ("...",):
            return None
        want = list(exp or ())
        if len(want) != len(got):
            return f"{len(got)} options instead of {len(want)}"
        for w, g in zip(want, got):
            if w.name != g[0]:
                return f"{g[0]} instead of {w.name}"
            if w.name in ("mss", "wscale") and w.values[0] != g[1]:
                return f"{w.name} {g[1]} instead of {w.values[0]}"
            if w.name == "sack" and tuple(w.values) != tuple(g[1]):
                return f"sack {g[1]} instead of {w.values}"
        return None

    # -- socket calls, for real ------------------------------------------------------------
    def call(self, ev, t_end):
        c = ev.body
        a = c.args
        if c.name == "socket":
            dom = socket.AF_INET6 if "AF_INET6" in a[0] else socket.AF_INET
            if dom == socket.AF_INET6:
                raise Unsupported("IPv6 sockets")
            nonblock = "SOCK_NONBLOCK" in a[1] if len(a) > 1 else False
            s = in_netns(self.lab.S, lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM))
            if nonblock:
                s.setblocking(False)
            # The script names the descriptor it expects; the runner's table maps it.
            fd = c.ret if c.ret is not None and c.ret >= 0 and c.ret not in self.socks else self.next_fd
            self.next_fd = max(self.next_fd, fd) + 1
            self.socks[fd] = s
            return fd, None
        fd = _int(a[0]) if a else None
        s = self.socks.get(fd)
        if s is None:
            return -1, "EBADF"
        fn = self._op(ev, c.name, a, s, fd)
        box: dict = {}
        if c.name in _BLOCKING and s.gettimeout() != 0.0:
            return self._start(ev, c.name, a, s, fd)
        if self._instant(c.name, s):
            # A call that cannot block runs here and now: a helper thread costs milliseconds on
            # a loaded machine, which the script's timing would see.
            try:
                return fn()
            except BlockingIOError as e:
                return -1, _errno.errorcode.get(e.errno, "EAGAIN")
            except OSError as e:
                return -1, _errno.errorcode.get(e.errno, str(e.errno))

        def work():
            try:
                box["r"] = fn()
            except BlockingIOError as e:
                box["r"] = (-1, _errno.errorcode.get(e.errno, "EAGAIN"))
            except OSError as e:
                box["r"] = (-1, _errno.errorcode.get(e.errno, str(e.errno)))
            except Fail as e:
                box["r"], box["fail"] = (0, None), e
            box["t"] = time.time()

        th = threading.Thread(target=work, daemon=True)
        th.start()
        # A moment for a call that returns at once; the script goes on while one blocks (its
        # return is checked when it comes), as packetdrill runs blocking calls on a thread.
        th.join(0.001)
        if "fail" in box:
            raise box["fail"]
        if "r" in box:
            return box["r"]
        self._pending.append((ev, th, box))
        return None

    # Blocking calls run without threads: the socket is made non-blocking underneath, the call
    # is tried again each time the runner's loop wakes (every 0.5 ms at most while one is
    # outstanding), and its return is stamped when it completes. A thread would be woken
    # milliseconds late on a loaded machine (the interpreter lock), which the script's timing
    # of the call's return would see.
    def _start(self, ev, name, a, s, fd):
        n = _int(a[2]) if len(a) > 2 else None
        if name in ("write", "send", "read", "recv") and n is None:
            raise Unsupported(f"{name} of an unknown length (line {ev.line})")
        s.setblocking(False)
        op = {"ev": ev, "kind": name, "s": s, "fd": fd, "n": n, "sent": 0}
        if name == "connect":
            kport = random.randint(30000, 39999)
            s.bind((f"{NET}.2", kport))
            self.tr.port, self.tr.sport = kport, PORT
            self.conn_fd = fd
            err = s.connect_ex((f"{NET}.50", PORT))
            if err not in (0, _errno.EINPROGRESS):
                s.setblocking(True)
                return -1, _errno.errorcode.get(err, str(err))
        r = self._try(op) if name != "connect" else None
        if r is not None:
            s.setblocking(True)
            return r
        self._ops.append(op)
        return None

    def _try(self, op):
        """One non-blocking attempt at an outstanding call: its (ret, errno), or None."""
        s, kind = op["s"], op["kind"]
        try:
            if kind == "connect":
                if not select.select([], [s], [], 0)[1]:
                    return None
                err = s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
                return (0, None) if err == 0 else (-1, _errno.errorcode.get(err, str(err)))
            if kind == "accept":
                conn, _ = s.accept()
                conn.setblocking(True)
                want = op["ev"].body.ret
                k = want if want is not None and want >= 0 and want not in self.socks else self.next_fd
                self.next_fd = max(self.next_fd, k) + 1
                self.socks[k] = conn
                self.conn_fd = k
                return k, None
            if kind in ("read", "recv"):
                return len(s.recv(op["n"])), None
            while op["sent"] < op["n"]:  # write, send: a blocking write returns when all is queued
                op["sent"] += s.send(bytes(min(op["n"] - op["sent"], 1 << 20)))
            return op["sent"], None
        except BlockingIOError:
            return None
        except OSError as e:
            if kind in ("write", "send") and op["sent"]:
                return op["sent"], None
            return -1, _errno.errorcode.get(e.errno, str(e.errno))

    def _progress(self) -> None:
        keep = []
        for op in self._ops:
            r = self._try(op)
            if r is None:
                keep.append(op)
                continue
            try:
                op["s"].setblocking(True)
            except OSError:
                pass
            self._finished.append((op["ev"], r[0], r[1], self.tr.now()))
        self._ops = keep

    @staticmethod
    def _instant(name: str, s) -> bool:
        if name in ("bind", "listen", "close", "shutdown", "fcntl", "setsockopt", "getsockopt"):
            return True
        if s.gettimeout() == 0.0:  # a non-blocking call returns at once, EINPROGRESS or EAGAIN included
            return True
        if name in ("accept", "read", "recv"):
            return bool(select.select([s], [], [], 0)[0])
        return False

    def _op(self, ev, name, a, s, fd):
        def arg(i):
            if i >= len(a):
                raise Unsupported(f"{name} with {len(a)} arguments (line {ev.line})")
            return a[i]

        if name == "bind":
            def f():
                s.bind((f"{NET}.2", PORT))
                return 0, None
            return f
        if name == "listen":
            return lambda: (s.listen(int(arg(1), 0)), (0, None))[1]
        if name == "accept":
            want = ev.body.ret

            def f():
                conn, _ = s.accept()
                with self._lock:
                    n = want if want is not None and want >= 0 and want not in self.socks else self.next_fd
                    self.next_fd = max(self.next_fd, n) + 1
                    self.socks[n] = conn
                    self.conn_fd = n
                return n, None
            return f
        if name == "connect":
            def f():
                kport = random.randint(30000, 39999)
                s.bind((f"{NET}.2", kport))
                self.tr.port, self.tr.sport = kport, PORT
                self.conn_fd = fd
                s.connect((f"{NET}.50", PORT))
                return 0, None
            return f
        if name in ("write", "send"):
            n = _int(arg(2))
            if n is None:
                raise Unsupported(f"{name} of an unknown length (line {ev.line})")
            return lambda: (s.send(bytes(n)), None)
        if name in ("read", "recv"):
            n = _int(arg(2))
            if n is None:
                raise Unsupported(f"{name} of an unknown length (line {ev.line})")
            return lambda: (len(s.recv(n)), None)
        if name == "close":
            def f():
                s.close()
                self.socks.pop(fd, None)
                return 0, None
            return f
        if name == "shutdown":
            how = {"SHUT_RD": socket.SHUT_RD, "SHUT_WR": socket.SHUT_WR, "SHUT_RDWR": socket.SHUT_RDWR}.get(arg(1))
            if how is None:
                raise Unsupported(f"shutdown {arg(1)}")
            return lambda: (s.shutdown(how), (0, None))[1]
        if name == "fcntl":
            cmd = arg(1)
            if cmd == "F_SETFL":
                nb = "O_NONBLOCK" in arg(2)
                return lambda: (s.setblocking(not nb), (0, None))[1]
            if cmd == "F_GETFL":
                return lambda: (fcntl.fcntl(s.fileno(), fcntl.F_GETFL) & ~0o100000, None)  # without O_LARGEFILE
            raise Unsupported(f"fcntl {cmd}")
        if name in ("setsockopt", "getsockopt"):
            level, opt = _const(arg(1)), _const(arg(2))
            if level is None or opt is None:
                raise Unsupported(f"{name} {arg(1)} {arg(2)}")
            val = arg(3)
            if name == "setsockopt":
                if val.startswith("["):
                    v = _int(val.strip("[] "))
                    if v is None:
                        raise Unsupported(f"setsockopt value {val}")
                    return lambda: (s.setsockopt(level, opt, v), (0, None))[1]
                if val.startswith('"'):
                    b = val.strip('"').encode()
                    return lambda: (s.setsockopt(level, opt, b), (0, None))[1]
                raise Unsupported(f"setsockopt value {val}")
            if opt == TCP_CONGESTION:
                want = val.strip('"')

                def f():
                    got = s.getsockopt(level, opt, 16).rstrip(b"\0").decode()
                    if want not in ("...",) and got != want:
                        raise Fail(ev, f"getsockopt gave {got!r}", want, got)
                    return 0, None
                return f
            if val.startswith("[") and val != "[...]":
                want_i = _int(val.strip("[] "))
                if want_i is None:
                    raise Unsupported(f"getsockopt value {val}")

                def f():
                    got = s.getsockopt(level, opt)
                    if got != want_i:
                        raise Fail(ev, f"getsockopt gave {got}", str(want_i), str(got))
                    return 0, None
                return f
            raise Unsupported(f"getsockopt value {val}")
        raise Unsupported(f"call {name}")

    def completed(self) -> list:
        if self._ops:
            self._progress()
        done, keep = self._finished, []
        self._finished = []
        for ev, th, box in self._pending:
            if "fail" in box:
                raise box["fail"]
            if "r" in box:
                ret, err = box["r"]
                done.append((ev, ret, err, box["t"] - self.tr.t0))
            else:
                keep.append((ev, th, box))
        self._pending = keep
        return done

    def pending(self) -> list:
        return [p[0] for p in self._pending] + [op["ev"] for op in self._ops]

    def info(self) -> dict:
        s = self.socks.get(self.conn_fd)
        if s is None:
            return {}
        try:
            raw = s.getsockopt(socket.IPPROTO_TCP, TCP_INFO, 256)
        except OSError:
            return {}
        return parse_tcp_info(raw)

    def stop(self) -> None:
        self._realtime(False)
        for s in list(self.socks.values()):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            try:
                s.close()
            except OSError:
                pass
        self.socks = {}
        for _, th, _ in self._pending:
            th.join(1.0)
        if self.tr is not None:
            self.tr.shutdown()
            self.tr = None
        if self.lab is not None:
            self.lab.close()
            self.lab = None


#: Calls that may block on a blocking socket (run by `_start`, without a thread). A blocking
#: write stays a real blocking call on a thread: the kernel wakes it only when a third of the
#: send buffer is free (sk_stream_wspace), which polling for any space would not reproduce.
_BLOCKING = {"connect", "accept", "read", "recv"}

_CONSTS = {
    "SOL_SOCKET": socket.SOL_SOCKET, "IPPROTO_TCP": socket.IPPROTO_TCP, "SOL_TCP": socket.IPPROTO_TCP, "IPPROTO_IP": socket.IPPROTO_IP,
    "SO_REUSEADDR": socket.SO_REUSEADDR, "SO_REUSEPORT": getattr(socket, "SO_REUSEPORT", 15), "SO_SNDBUF": socket.SO_SNDBUF, "SO_RCVBUF": socket.SO_RCVBUF,
    "SO_KEEPALIVE": socket.SO_KEEPALIVE, "SO_ERROR": socket.SO_ERROR, "SO_LINGER": socket.SO_LINGER, "SO_RCVLOWAT": socket.SO_RCVLOWAT, "SO_SNDLOWAT": socket.SO_SNDLOWAT,
    "TCP_NODELAY": socket.TCP_NODELAY, "TCP_MAXSEG": socket.TCP_MAXSEG, "TCP_CORK": 3, "TCP_KEEPIDLE": 4, "TCP_KEEPINTVL": 5, "TCP_KEEPCNT": 6,
    "TCP_SYNCNT": 7, "TCP_LINGER2": 8, "TCP_DEFER_ACCEPT": 9, "TCP_WINDOW_CLAMP": 10, "TCP_INFO": TCP_INFO, "TCP_QUICKACK": 12,
    "TCP_CONGESTION": TCP_CONGESTION, "TCP_THIN_LINEAR_TIMEOUTS": 16, "TCP_USER_TIMEOUT": 18, "TCP_NOTSENT_LOWAT": 25,
}


def _const(name: str):
    return _CONSTS.get(name.strip())


def _int(s: str):
    try:
        return int(s, 0)
    except (TypeError, ValueError):
        return None
