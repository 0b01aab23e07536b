"""The script runner: plays a parsed script against a stack (`SimStack` or `KernelStack`) with
packetdrill's semantics (google/packetdrill run.c, run_packet.c, and the paper):

- events run in order at their times; a relative time counts from the previous event, and after an
  outbound packet from the time it actually came (packetdrill adjusts relative times so);
- an outbound (`>`) line must be the next packet the stack sends, within the timing tolerance of
  max(tolerance_usecs, 12.5 % of the time since the previous event) (default 4 ms), with its
  flags, seq:end(len), ack, and options; the window only when written; `<...>` means any options;
- a packet the stack sends is compared with the next `>` line whenever it came: one that no line
  expects fails that line (as packetdrill sniffs only for its outbound events, packets after the
  script's last `>` line are not checked);
- a socket call's return value (and errno) must be what the script says; a blocking call returns
  later (`start...end` times that return);
- `%{ }%` blocks run as Python over the socket's `tcpi_*` values;
- TCP timestamps as packetdrill maps them (`tsopt.py`): an inbound TSecr names an earlier outbound
  TSval, an outbound TSval is compared only with `--tcp_ts_tick_usecs`; the TSecr the stack
  echoes is compared too.

Offloads are off on both stacks: an outbound line that expects a TSO super-segment is matched
against its MSS-sized pieces, sent back to back, and the result says so.
"""

from __future__ import annotations

import math
import textwrap
import time as _time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from .knobs import Unsupported, commands
from .parser import FLAG_CHARS, Event, Option, Packet, Script, ScriptError, parse
from .tsopt import TsMap

PSH = FLAG_CHARS["P"]
FIN = FLAG_CHARS["F"]

#: packetdrill's default timing tolerance (`--tolerance_usecs`) and its relative part.
TOLERANCE_S = 0.004
TOLERANCE_FRACTION = 0.125
#: A script may take at most this long on the kernel's clock (and in virtual time on the sim).
MAX_SCRIPT_S = 120.0


class Fail(Exception):
    def __init__(self, ev: Event, reason: str, expected: str = "", got: str = ""):
        super().__init__(reason)
        self.ev, self.reason, self.expected, self.got = ev, reason, expected, got


@dataclass
class Out:
    """A packet the stack sent: time (s since the script started), flags, relative seq and ack,
    payload length, window field, and options as (name, values...) tuples in wire order."""

    t: float
    flags: int
    seq: int
    ack: int
    length: int
    win: int
    options: tuple = ()

    def text(self) -> str:
        fl = "".join(c for c in "SFRPUEW" if self.flags & FLAG_CHARS[c]) + ("." if self.flags & FLAG_CHARS["."] else "")
        opts = ""
        if self.options:
            parts = []
            for o in self.options:
                if o[0] == "sack":
                    parts.append("sack " + " ".join(f"{a}:{b}" for a, b in o[1]))
                elif o[0] == "TS":
                    parts.append(f"TS val {o[1]} ecr {o[2]}")
                else:
                    parts.append(" ".join(str(x) for x in o))
            opts = " <" + ",".join(parts) + ">"
        ack = f" ack {self.ack}" if self.flags & FLAG_CHARS["."] else ""
        return f"{self.t:.6f} > {fl} {self.seq}:{self.seq + self.length}({self.length}){ack} win {self.win}{opts}"


@dataclass
class Result:
    path: str
    stack: str
    status: str  # "pass", "fail", "unsupported", "error"
    line: int | None = None
    col: int | None = None
    event: str = ""
    reason: str = ""
    expected: str = ""
    got: str = ""
    notes: list = field(default_factory=list)
    elapsed_s: float = 0.0

    def to_dict(self) -> dict:
        return asdict(self)

    def text(self) -> str:
        head = f"{self.status.upper():11s} {self.path} [{self.stack}]"
        if self.status == "pass":
            return head
        where = f"line {self.line}" + (f":{self.col}" if self.col else "") if self.line else ""
        lines = [head + (f" at {where}" if where else "") + f": {self.reason}"]
        if self.event:
            lines.append(f"    script:   {self.event}")
        if self.expected:
            lines.append(f"    expected: {self.expected}")
        if self.got:
            lines.append(f"    got:      {self.got}")
        return "\n".join(lines)


class Stack:
    """What the runner needs from a stack under test (the two implementations: sim.py, kernel.py)."""

    name = "abstract"
    #: Whether PSH is modelled (the simulator sends no PSH: the flag is then not compared).
    has_psh = True

    def start(self, script: Script) -> None: ...
    def shell(self, pairs: list) -> None: ...
    def now(self) -> float: ...
    def pump(self, until: float, first: bool = False) -> list:
        """What the stack sent up to `until` (with `first`: return once something came)."""
    def inject(self, pkt: Packet, ev: Event) -> None: ...
    def call(self, ev: Event, t_end: float | None):  # -> (ret, errno) or None when it blocks
        ...
    def completed(self) -> list:  # [(ev, ret, errno, t)] of blocking calls that returned
        return []
    def pending(self) -> list:
        return []
    def info(self) -> dict: ...
    def compare_options(self, exp: tuple | None, got: tuple) -> str | None: ...
    def stop(self) -> None: ...
    notes: list


def _fmt_flags(bits: int) -> str:
    return "".join(c for c in "SFRPUEW." if bits & FLAG_CHARS[c])


def _expected_text(p: Packet) -> str:
    return " ".join(x for x in [p.flags, f"{p.seq}:{p.end}({p.length})" if p.seq is not None else "...", f"ack {p.ack}" if p.ack is not None else "", f"win {p.win}" if p.win is not None else ""] if x)


def run(script: Script, stack: Stack, tolerance_s: float | None = None, check_ts_ecr: bool = True) -> Result:
    """Play `script` against `stack`; the result names the first line that diverged.
    `check_ts_ecr=False`: outbound TSecr values are not compared (packetdrill's own rule)."""
    t_start = _time.monotonic()
    res = Result(script.path, stack.name, "pass")
    tol_abs = tolerance_s
    if tol_abs is None:
        v = script.options.get("tolerance_usecs")
        try:
            tol_abs = int(v) / 1e6 if v is not None else TOLERANCE_S
        except ValueError:
            tol_abs = TOLERANCE_S
    try:
        _check_supported(script, stack)
        tick = script.options.get("tcp_ts_tick_usecs", "0")
        if not tick.isdigit() or int(tick) > 1_000_000:
            raise ScriptError(f"--tcp_ts_tick_usecs={tick}: expected 0 to 1000000 microseconds", 1, 1)
        stack.start(script)
        _play(script, stack, tol_abs, TsMap(int(tick), check_ts_ecr))
    except Unsupported as e:
        res.status, res.reason = "unsupported", f"not supported: {e}"
    except Fail as f:
        res.status, res.reason = "fail", f.reason
        res.line, res.col, res.event = f.ev.line, f.ev.col, f.ev.text
        res.expected, res.got = f.expected, f.got
    except ScriptError as e:
        res.status, res.reason, res.line, res.col = "error", e.reason, e.line, e.col
    except Exception as e:  # noqa: BLE001 - a stack that cannot do what a line asks: reported with the line
        ev = _CURRENT.get("ev")
        res.status, res.reason = "error", f"runner: {type(e).__name__}: {e}"
        if ev is not None:
            res.line, res.col, res.event = ev.line, ev.col, ev.text
    finally:
        try:
            stack.stop()
        except Exception as e:  # noqa: BLE001 - a failed clean-up is reported, not raised over the result
            res.notes.append(f"clean-up: {e}")
    res.notes = list(getattr(stack, "notes", [])) + res.notes
    res.elapsed_s = round(_time.monotonic() - t_start, 3)
    return res


#: The socket calls the runners make (others: epoll, poll, ioctl, sendmsg, splice, ... are
#: "not supported").
CALLS = {"socket", "bind", "listen", "accept", "connect", "write", "send", "read", "recv", "close", "shutdown", "setsockopt", "getsockopt", "fcntl"}


def _check_supported(script: Script, stack: Stack) -> None:
    """Constructs refused before anything runs, so that a script is not half-run."""
    for ev in script.events:
        if ev.kind == "call":
            c = ev.body
            if c.name not in CALLS:
                raise Unsupported(f"call {c.name} (line {ev.line})")
            if any(a == "NULL" or a.startswith("{") for a in c.args):
                raise Unsupported(f"{c.name} with a NULL pointer or a struct argument (line {ev.line})")
            if c.name in ("send", "recv") and len(c.args) > 3 and c.args[3] not in ("0", "..."):
                raise Unsupported(f"{c.name} flags {c.args[3]} (line {ev.line})")
        if ev.kind == "packet":
            p = ev.body
            if p.extras:
                raise Unsupported(f"{p.extras[0]} (line {ev.line})")
            for o in p.options or ():
                if o != "..." and o.name not in ("mss", "sackOK", "nop", "eol", "wscale", "sack", "TS"):
                    raise Unsupported(f"TCP option {o.name} (line {ev.line})")
            if set(p.flags) & set("UEW"):
                raise Unsupported(f"flags {p.flags} (ECN/URG, line {ev.line})")
        elif ev.kind == "shell":
            commands(ev.body.commands)
    for k in script.options:
        if k not in ("tolerance_usecs", "ip_version", "tcp_ts_tick_usecs"):  # --mss: packetdrill cooks GRO packets
            raise Unsupported(f"--{k}")
    if script.options.get("ip_version", "ipv4") not in ("ipv4", "ipv4-mapped-ipv6"):
        raise Unsupported(f"--ip_version={script.options['ip_version']}")


def _window(ev: Event, prev: float) -> tuple[float, float]:
    t = ev.time
    if t.kind == "any":
        return prev, math.inf
    base = prev if t.kind == "rel" else 0.0
    lo = base + t.start
    hi = base + (t.end if t.end is not None and not t.blocking else t.start)
    return lo, hi


#: The event being played (for a report when the stack raises something unexpected).
_CURRENT: dict = {}


def _play(script: Script, stack: Stack, tol_abs: float, ts: TsMap) -> None:
    _CURRENT["ev"] = None
    queue: list[Out] = []
    prev = 0.0
    pieces_note = 0

    def take(deadline: float) -> Out | None:
        if not queue:
            queue.extend(stack.pump(deadline, first=True))
        return queue.pop(0) if queue else None

    def settle(now_t: float) -> None:
        for ev, ret, errno, t in stack.completed():
            _check_return(ev, ret, errno)
            if ev.time.blocking:
                # start...end: the call must return at its end time.
                base = ev_time.get(id(ev), 0.0) if ev.time.kind == "rel" else 0.0
                start, end = base + ev.time.start, base + ev.time.end
                tol = max(tol_abs, TOLERANCE_FRACTION * max(0.0, end - start))
                if abs(t - end) > tol:
                    raise Fail(ev, f"the call returned at {t:.6f}, expected at {end:.6f} (tolerance {tol * 1e3:.1f} ms)")

    ev_time: dict = {}
    for ev in script.events:
        _CURRENT["ev"] = ev
        lo, hi = _window(ev, prev)
        if lo > MAX_SCRIPT_S:
            raise Fail(ev, f"the script runs past {MAX_SCRIPT_S:.0f} s (a bound of the runner)")
        if ev.kind == "packet" and ev.body.direction == ">":
            p: Packet = ev.body
            tol = max(tol_abs, TOLERANCE_FRACTION * max(0.0, hi - prev))
            deadline = (hi if math.isfinite(hi) else prev + MAX_SCRIPT_S) + tol
            got = take(deadline)
            settle(deadline)
            if got is None:
                raise Fail(ev, f"no packet by {deadline:.6f}", _expected_text(p), "nothing")
            # What came first, then when: a packet no line expects is named as such.
            n = _match(ev, p, got, stack, take, tol)
            _match_ts(ev, p, got, ts, lo if math.isfinite(lo) else got.t, tol_abs)
            if got.t < lo - tol or got.t > hi + tol:
                when = f"{lo:.6f}" if lo == hi else f"{lo:.6f}~{hi:.6f}"
                raise Fail(ev, f"timing: the packet came at {got.t:.6f}, expected at {when} (tolerance {tol * 1e3:.1f} ms)", _expected_text(p), got.text())
            if n > 1:
                pieces_note += 1
            prev = got.t
            continue
        # What the stack sends meanwhile stays queued for the next `>` line (packetdrill sniffs
        # outbound packets only for its outbound events: a packet no line expects fails the
        # next `>` line, and packets after the last one are not checked).
        until = lo if math.isfinite(lo) else prev
        queue.extend(stack.pump(until))
        settle(until)
        # A stack on a real clock acts a little after the script's time: later relative times
        # count from when the action really happened (as after an outbound packet).
        acted = max(until, stack.now())
        ev_time[id(ev)] = prev
        if ev.kind == "packet":
            stack.inject(_inbound_ts(ev, ev.body, ts), ev)
            settle(until)
        elif ev.kind == "call":
            r = stack.call(ev, None)
            if r is not None:
                _check_return(ev, *r)
        elif ev.kind == "shell":
            stack.shell(commands(ev.body.commands))
        elif ev.kind == "code":
            _assert(ev, stack.info())
        # A `%{ }%` block or a set-up command changes nothing on the wire: the script's time
        # stays the reference after it.
        prev = acted if ev.kind in ("packet", "call") else until
    # The end: blocking calls still outstanding get the tolerance to return.
    last = prev + tol_abs
    queue.extend(stack.pump(last))
    settle(last)
    for ev in stack.pending():
        raise Fail(ev, "the call never returned")
    if pieces_note:
        stack.notes.append(f"offloads off: {pieces_note} outbound line(s) expecting a TSO super-segment matched against MSS-sized pieces")


def _check_return(ev: Event, ret, errno) -> None:
    c = ev.body
    if c.ret is None:
        return
    if ret != c.ret or (c.errno is not None and errno != c.errno):
        exp = f"{c.ret}" + (f" {c.errno}" if c.errno else "")
        got = f"{ret}" + (f" {errno}" if errno else "")
        raise Fail(ev, f"{c.name} returned {got}", exp, got)


def _match(ev: Event, p: Packet, got: Out, stack: Stack, take, tol: float) -> int:
    """Compare one outbound line with what came; a super-segment takes several pieces."""
    exp_bits = p.flag_bits
    mask = 0xFF if stack.has_psh else 0xFF & ~PSH
    pieces = [got]
    if p.seq is not None and got.seq == p.seq and 0 < got.length < p.length:
        # TSO super-segment expected, MSS-sized pieces sent (offloads off): gather them.
        end = got.seq + got.length
        while end < p.seq + p.length:
            nxt = take(got.t + tol)
            if nxt is None or nxt.seq != end or nxt.length == 0:
                have = f"{len(pieces)} piece(s) covering {p.seq}:{end}"
                raise Fail(ev, "a super-segment's pieces stopped short", _expected_text(p), (nxt.text() if nxt else "nothing") + f" after {have}")
            pieces.append(nxt)
            end = nxt.seq + nxt.length
    last = pieces[-1]
    if len(pieces) > 1:
        # Without offloads the kernel marks PSH on its own MSS-sized skbs (tcp_mark_push at
        # forced_push points) where a TSO skb would carry it only at its end: PSH is not compared
        # across the pieces of a super-segment.
        mask &= ~PSH
    for i, o in enumerate(pieces):
        final = i == len(pieces) - 1
        want = exp_bits if final else exp_bits & ~(PSH | FIN)
        have = o.flags if final else o.flags & ~PSH
        if (want & mask) != (have & mask):
            raise Fail(ev, f"flags {_fmt_flags(o.flags)} instead of {p.flags}", _expected_text(p), o.text())
        if p.ack is not None and o.ack != p.ack:
            raise Fail(ev, f"ack {o.ack} instead of {p.ack}", _expected_text(p), o.text())
        if p.win is not None and o.win != p.win:
            raise Fail(ev, f"win {o.win} instead of {p.win}", _expected_text(p), o.text())
        err = stack.compare_options(p.options, o.options)
        if err:
            raise Fail(ev, f"options: {err}", _expected_text(p) + _opts_text(p.options), o.text())
    if p.seq is not None:
        seq, length = got.seq, last.seq + last.length - got.seq
        if (seq, length) != (p.seq, p.length):
            raise Fail(ev, f"seq {seq}:{seq + length}({length}) instead of {p.seq}:{p.end}({p.length})", _expected_text(p), got.text())
    return len(pieces)


def _ts_of(options) -> tuple | None:
    for o in options or ():
        if o == "...":
            return None
        if isinstance(o, Option):
            if o.name == "TS":
                return o.values
        elif o[0] == "TS":
            return (o[1], o[2])
    return None


def _match_ts(ev: Event, p: Packet, got: Out, ts: TsMap, t_event: float, tol_abs: float) -> None:
    """The TS option of an outbound packet (packetdrill's rules, `tsopt.py`); that it is there at
    all is the options' comparison."""
    want, have = _ts_of(p.options), _ts_of(got.options)
    if want is None or have is None:
        return
    err = ts.outbound(want, have, t_event, tol_abs)
    if err:
        raise Fail(ev, f"options: {err}", _expected_text(p) + _opts_text(p.options), got.text())


def _inbound_ts(ev: Event, p: Packet, ts: TsMap) -> Packet:
    """The script's packet with its TSecr mapped onto the stack's clock (packetdrill's
    `map_inbound_packet`); the TSval goes as written."""
    have = _ts_of(p.options)
    if have is None:
        return p
    live = ts.inbound_ecr(have[1], "." in p.flags)
    if live is None:
        raise Fail(ev, f"the script's TS ecr {have[1]} names no TS val the stack sent (packetdrill: unable to infer live TS ecr)")
    opts = tuple(Option("TS", (have[0], live)) if isinstance(o, Option) and o.name == "TS" else o for o in p.options)
    return replace(p, options=opts)


def _opts_text(opts) -> str:
    if opts is None:
        return ""
    if opts == ("...",):
        return " <...>"
    return " <" + ",".join(" ".join([o.name] + [f"{a}:{b}" if isinstance(a, tuple) else str(a) for a in o.values]) for o in opts) + ">"


#: What `%{ }%` code may use besides the tcpi_* values.
_SAFE_BUILTINS = {"abs": abs, "min": min, "max": max, "len": len, "int": int, "float": float, "round": round, "True": True, "False": False, "None": None, "print": lambda *a, **k: None, "range": range, "AssertionError": AssertionError}


def _assert(ev: Event, info: dict) -> None:
    names = dict(info)
    # Linux's enum tcp_ca_state names, which scripts compare tcpi_ca_state with.
    names.update({"TCP_CA_Open": 0, "TCP_CA_Disorder": 1, "TCP_CA_CWR": 2, "TCP_CA_Recovery": 3, "TCP_CA_Loss": 4})
    try:
        code = compile(_dedent(ev.body.text), f"{ev.line}", "exec")
    except SyntaxError as e:
        raise ScriptError(f"%{{ }}% code: {e.msg}", ev.line + (e.lineno or 1) - 1, e.offset or 1) from None
    try:
        exec(code, {"__builtins__": _SAFE_BUILTINS}, names)  # noqa: S102 - the script's own assertions, as packetdrill runs them
    except AssertionError as e:
        raise Fail(ev, "assertion failed" + (f": {e}" if str(e) else ""), ev.body.text.strip(), _tcpi_text(info, ev.body.text)) from None
    except NameError as e:
        name = str(e).split("'")[1] if "'" in str(e) else str(e)
        raise Unsupported(f"{name} in %{{ }}% (line {ev.line})") from None
    except Exception as e:  # noqa: BLE001 - the script's code failing is the script's failure
        raise Fail(ev, f"%{{ }}% code raised {type(e).__name__}: {e}") from None


def _dedent(text: str) -> str:
    """The block's Python: its first line (on the `%{` line) stripped, the rest dedented."""
    text = text.replace("\\\n", " ")  # backslash continuations: one logical line
    first, _, rest = text.partition("\n")
    return (first.strip() + "\n" + textwrap.dedent(rest)).strip("\n") + "\n"


def _tcpi_text(info: dict, code: str) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(info.items()) if k in code)


# ------------------------------------------------------------------------------------------

#: Failures that only say something came at the wrong time (or not within its window): on a
#: loaded machine the kernel's softirq work and the runner's own wake-ups jitter by milliseconds.
TIMING_FAILURES = ("timing:", "no packet by", "the call returned at")


def run_file(path, stack_factory, tolerance_s: float | None = None, retries: int = 0, check_ts_ecr: bool = True) -> Result:
    """Parse and run one script; a parse error is a result (status "error") naming line and column.
    `retries`: run a script that failed on timing alone up to this many more times (the result
    says so in its notes). `check_ts_ecr=False`: packetdrill's rule, outbound TSecr not compared."""
    path = Path(path)
    try:
        script = parse(path.read_text(errors="replace"), str(path))
    except ScriptError as e:
        return Result(str(path), "-", "error", e.line, e.col, reason=e.reason)
    r = run(script, stack_factory(), tolerance_s, check_ts_ecr)
    for k in range(retries):
        if not (r.status == "fail" and r.reason.startswith(TIMING_FAILURES)):
            break
        first = f"line {r.line}: {r.reason}"
        r = run(script, stack_factory(), tolerance_s, check_ts_ecr)
        r.notes.append(f"run {k + 2}: the previous run failed on timing ({first})")
    return r


def scripts_in(root) -> list:
    root = Path(root)
    return sorted(root.rglob("*.pkt")) if root.is_dir() else [root]


def summary(results: list, root) -> list:
    """Per directory (relative to `root`): scripts, supported, passed, failed, errors."""
    root = Path(root)
    rows: dict = {}
    for r in results:
        p = Path(r.path)
        try:
            d = str(p.parent.relative_to(root)) if root.is_dir() else str(p.parent)
            if d == ".":
                d = root.resolve().name
        except ValueError:
            d = str(p.parent)
        row = rows.setdefault(d, {"directory": d, "scripts": 0, "supported": 0, "pass": 0, "fail": 0, "error": 0, "unsupported": 0})
        row["scripts"] += 1
        row[r.status] += 1
        if r.status in ("pass", "fail"):
            row["supported"] += 1
    out = [rows[k] for k in sorted(rows)]
    if len(out) > 1:
        tot = {"directory": "TOTAL"} | {k: sum(r[k] for r in out) for k in ("scripts", "supported", "pass", "fail", "error", "unsupported")}
        out.append(tot)
    return out


def summary_text(rows: list) -> str:
    head = f"{'directory':24s} {'scripts':>7s} {'supported':>9s} {'pass':>5s} {'fail':>5s} {'error':>5s} {'unsupp.':>7s}"
    lines = [head, "-" * len(head)]
    for r in rows:
        lines.append(f"{r['directory']:24s} {r['scripts']:7d} {r['supported']:9d} {r['pass']:5d} {r['fail']:5d} {r['error']:5d} {r['unsupported']:7d}")
    return "\n".join(lines)
