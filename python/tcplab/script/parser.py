"""A parser for packetdrill's script language (Cardwell et al., "packetdrill: Scriptable Network
Stack Testing, from Sockets to Packets", USENIX ATC 2013; google/packetdrill's README).

A script is a list of events, each with a time: `<` (inbound) and `>` (outbound) TCP packet lines,
socket-call lines with their expected return value, `%{ ... }%` blocks of Python assertions over
`tcpi_*` names, and `` `shell` `` lines. Times are absolute (`0.1`), relative to the previous event
(`+0.1`), a range (`0.1~0.2`), any (`*`), or for a blocking call start and end (`0.1...0.2`).

Every error is a `ScriptError` naming the line and column. The parser accepts the language; what a
runner cannot do is decided there (`not supported: <construct>`), not here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

FLAG_CHARS = {"F": 0x01, "S": 0x02, "R": 0x04, "P": 0x08, ".": 0x10, "U": 0x20, "E": 0x40, "W": 0x80}


class ScriptError(ValueError):
    """A script that cannot be read: the message starts with `FILE:LINE:COL:`."""

    def __init__(self, message: str, line: int, col: int, path: str = "<script>"):
        self.line, self.col, self.path, self.reason = line, col, path, message
        super().__init__(f"{path}:{line}:{col}: {message}")


@dataclass(frozen=True)
class Time:
    """When an event happens. `kind`: "abs", "rel" or "any"; `start` (seconds, relative to the
    previous event for "rel"); `end`: the upper end of a range, or the end of a blocking call
    (`blocking`), in the same reference as `start`."""

    kind: str
    start: float = 0.0
    end: float | None = None
    blocking: bool = False


@dataclass(frozen=True)
class Option:
    """A TCP option as written: `name` (mss, sackOK, nop, eol, wscale, sack, TS, or another word)
    and its values (sack: pairs of edges; TS: (val, ecr))."""

    name: str
    values: tuple = ()


@dataclass(frozen=True)
class Packet:
    direction: str  # "<" inbound (from the script to the stack), ">" outbound
    flags: str  # as written, e.g. "S.", "P.", "."
    seq: int | None  # start of seq:end(len); None when elided ("...")
    end: int | None
    length: int | None
    ack: int | None = None
    win: int | None = None
    options: tuple | None = None  # None: none written; ("...",): any options
    extras: tuple = ()  # constructs the runner may refuse: ECN marks, udp, ...

    @property
    def flag_bits(self) -> int:
        bits = 0
        for c in self.flags:
            bits |= FLAG_CHARS.get(c, 0)
        return bits


@dataclass(frozen=True)
class Call:
    name: str
    args: tuple  # raw argument texts, top-level comma split ("..." kept as is)
    ret: int | None  # None when written as "= ..."
    errno: str | None = None


@dataclass(frozen=True)
class Shell:
    commands: tuple  # one command per line of the backtick block


@dataclass(frozen=True)
class Code:
    text: str


@dataclass(frozen=True)
class Event:
    line: int
    col: int
    time: Time
    kind: str  # "packet", "call", "shell", "code"
    body: object
    text: str  # the event's source text, for reports


@dataclass
class Script:
    path: str
    events: list = field(default_factory=list)
    options: dict = field(default_factory=dict)  # "--name=value" lines (packetdrill command-line flags)


_NUM = re.compile(r"[+-]?(?:0[xX][0-9a-fA-F]+|(?:\d+(?:\.(?!\.)\d*)?|\.\d+)(?:[eE][+-]?\d+)?)")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class _Scan:
    def __init__(self, text: str, path: str):
        self.s, self.i, self.path = text, 0, path
        self._starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def pos(self, i: int | None = None) -> tuple[int, int]:
        i = self.i if i is None else i
        lo, hi = 0, len(self._starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self._starts[mid] <= i:
                lo = mid
            else:
                hi = mid - 1
        return lo + 1, i - self._starts[lo] + 1

    def err(self, msg: str, i: int | None = None) -> ScriptError:
        line, col = self.pos(i)
        return ScriptError(msg, line, col, self.path)

    def peek(self, n: int = 1) -> str:
        return self.s[self.i : self.i + n]

    def eof(self) -> bool:
        return self.i >= len(self.s)

    def skip_inline(self) -> None:
        """Spaces, tabs and comments, not newlines (a /* */ comment may span lines)."""
        while not self.eof():
            c = self.s[self.i]
            if c in " \t\r":
                self.i += 1
            elif self.s.startswith("//", self.i):
                j = self.s.find("\n", self.i)
                self.i = len(self.s) if j < 0 else j
            elif self.s.startswith("/*", self.i):
                j = self.s.find("*/", self.i + 2)
                if j < 0:
                    raise self.err("unterminated /* comment")
                self.i = j + 2
            elif c == "\\" and self.s.startswith("\\\n", self.i):
                self.i += 2
            else:
                return

    def skip_blank(self) -> None:
        while True:
            self.skip_inline()
            if self.peek() == "\n":
                self.i += 1
            else:
                return

    def at_eol(self) -> bool:
        self.skip_inline()
        return self.eof() or self.peek() == "\n"

    def expect(self, tok: str, what: str | None = None) -> None:
        self.skip_inline()
        if not self.s.startswith(tok, self.i):
            got = self.s[self.i : self.i + 12].split("\n")[0] or "end of line"
            raise self.err(f"expected {what or repr(tok)}, got {got!r}")
        self.i += len(tok)

    def accept(self, tok: str) -> bool:
        self.skip_inline()
        if self.s.startswith(tok, self.i):
            self.i += len(tok)
            return True
        return False

    def number(self, what: str = "a number") -> float | int:
        self.skip_inline()
        m = _NUM.match(self.s, self.i)
        if not m or not m.group(0).lstrip("+-"):
            raise self.err(f"expected {what}")
        self.i = m.end()
        t = m.group(0)
        if "x" in t.lower():
            return int(t, 16)
        if any(c in t for c in ".eE"):
            return float(t)
        return int(t)

    def integer(self, what: str) -> int:
        at = self.i
        v = self.number(what)
        if not isinstance(v, int):
            raise self.err(f"expected {what} (an integer), got {v}", at)
        return v

    def ident(self, what: str = "a name") -> str:
        self.skip_inline()
        m = _IDENT.match(self.s, self.i)
        if not m:
            raise self.err(f"expected {what}")
        self.i = m.end()
        return m.group(0)


def parse(text: str, path: str = "<script>") -> Script:
    """The events of a script, in order. Raises `ScriptError` (line and column) on bad input."""
    if not isinstance(text, str):
        raise ScriptError("a script is text", 1, 1, path)
    sc = _Scan(text, path)
    script = Script(path)
    while True:
        sc.skip_blank()
        if sc.eof():
            break
        start = sc.i
        line, col = sc.pos()
        if sc.s.startswith("--", sc.i):
            m = re.compile(r"--([A-Za-z0-9_]+)(?:=(\S*))?").match(sc.s, sc.i)
            if not m:
                raise sc.err("expected --option=value")
            script.options[m.group(1)] = m.group(2) if m.group(2) is not None else ""
            sc.i = m.end()
            if not sc.at_eol():
                raise sc.err("expected the end of the line after the option")
            continue
        # A `shell` line or a %{ }% block may go without a time: it runs right after the
        # previous event (packetdrill's scripts open with `../common/defaults.sh`).
        t = Time("rel") if sc.peek() == "`" or sc.peek(2) == "%{" else _time(sc)
        sc.skip_inline()
        c = sc.peek()
        if c in ("<", ">"):
            kind, body = "packet", _packet(sc)
        elif c == "`":
            kind, body = "shell", _shell(sc)
        elif sc.peek(2) == "%{":
            kind, body = "code", _code(sc)
        elif _IDENT.match(sc.s, sc.i):
            kind, body = "call", _call(sc)
        else:
            raise sc.err(f"expected a packet (< or >), a call, `shell` or %{{ code }}%, got {sc.peek(10).split(chr(10))[0]!r}")
        if not sc.at_eol():
            raise sc.err(f"unexpected {sc.s[sc.i:sc.i + 12].split(chr(10))[0]!r} after the event")
        if t.blocking and kind != "call":
            raise ScriptError("a blocking time (start...end) is only for a call", line, col, path)
        script.events.append(Event(line, col, t, kind, body, sc.s[start : sc.i].strip()))
    return script


def _time(sc: _Scan) -> Time:
    sc.skip_inline()
    if sc.accept("*"):
        return Time("any")
    rel = sc.peek() == "+"
    if rel:
        sc.i += 1
    at = sc.i
    start = sc.number("a time (0.1, +0.1, 0.1~0.2 or *)")
    if start < 0:
        raise sc.err("a time cannot be negative", at)
    end, blocking = None, False
    if sc.accept("~"):
        if sc.peek() == "+":
            if not rel:
                raise sc.err("a range starts and ends alike: both absolute or both +relative")
            sc.i += 1
        elif rel:
            raise sc.err("a relative range is written +a~+b")
        end = sc.number("the end of the time range")
    elif sc.s.startswith("...", sc.i):
        sc.i += 3
        if sc.peek() == "+":
            if not rel:
                raise sc.err("a blocking time starts and ends alike: both absolute or both +relative")
            sc.i += 1
        # "+0...0.010": a relative start's end counts from the same point, "+" or not.
        end, blocking = sc.number("the end of the blocking call"), True
    if end is not None and end < start:
        raise sc.err("the end of a time range comes before its start")
    return Time("rel" if rel else "abs", float(start), None if end is None else float(end), blocking)


def _packet(sc: _Scan) -> Packet:
    direction = sc.s[sc.i]
    sc.i += 1
    sc.skip_inline()
    extras = []
    if sc.s.startswith("udp", sc.i) or sc.s.startswith("icmp", sc.i):
        word = sc.ident()
        extras.append(word)
        while not sc.at_eol():
            sc.i += 1
        return Packet(direction, "", None, None, None, extras=tuple(extras))
    if sc.peek() == "[":
        j = sc.s.find("]", sc.i)
        if j < 0 or "\n" in sc.s[sc.i : j]:
            raise sc.err("unterminated [...]")
        extras.append("ip " + sc.s[sc.i + 1 : j].strip())
        sc.i = j + 1
        sc.skip_inline()
    at = sc.i
    m = re.compile(r"[FSRP.UEW-]+").match(sc.s, sc.i)
    if not m:
        raise sc.err("expected TCP flags (S, ., P, F, R)")
    flags = m.group(0).replace("-", "")
    sc.i = m.end()
    if len(set(flags)) != len(flags):
        raise sc.err(f"a flag is written twice in {m.group(0)!r}", at)
    seq = end = length = None
    sc.skip_inline()
    if sc.accept("..."):
        pass
    else:
        at = sc.i
        seq = sc.integer("seq:end(len)")
        sc.expect(":", "':' in seq:end(len)")
        end = sc.integer("the end of seq:end(len)")
        sc.expect("(", "'(' in seq:end(len)")
        length = sc.integer("the length in seq:end(len)")
        sc.expect(")", "')' in seq:end(len)")
        if min(seq, end, length) < 0 or max(seq, end) >= 2**32:
            raise sc.err("sequence numbers are 0 to 2^32-1 and the length at least 0", at)
        if (end - seq) % 2**32 != length:
            raise sc.err(f"seq:end(len) does not add up: {seq}:{end} is {(end - seq) % 2**32} bytes, not {length}", at)
    ack = win = None
    options = None
    while not sc.at_eol():
        if sc.peek() == "<":
            if options is not None:
                raise sc.err("options are written once")
            options = _options(sc)
            continue
        if sc.peek() == "[":
            j = sc.s.find("]", sc.i)
            if j < 0 or "\n" in sc.s[sc.i : j]:
                raise sc.err("unterminated [...]")
            extras.append("ip " + sc.s[sc.i + 1 : j].strip())
            sc.i = j + 1
            continue
        at = sc.i
        word = sc.ident("ack N, win N, <options> or the end of the line")
        if word == "ack":
            if ack is not None:
                raise sc.err("ack is written twice", at)
            ack = sc.integer("the ack number")
            if not 0 <= ack < 2**32:
                raise sc.err("the ack number is 0 to 2^32-1", at)
        elif word == "win":
            if win is not None:
                raise sc.err("win is written twice", at)
            win = sc.integer("the window")
            if not 0 <= win < 2**16:
                raise sc.err("the window field is 0 to 65535", at)
        elif word == "urg":
            sc.integer("the urgent pointer")
            extras.append("urg")
        else:
            raise sc.err(f"unknown packet field {word!r} (expected ack, win or <options>)", at)
    return Packet(direction, flags, seq, end, length, ack, win, options, tuple(extras))


def _options(sc: _Scan) -> tuple:
    sc.expect("<")
    if sc.accept("..."):
        sc.expect(">", "'>' after <...")
        return ("...",)
    opts = []
    while True:
        sc.skip_inline()
        at = sc.i
        name = sc.ident("an option (mss, sackOK, nop, wscale, sack, TS, eol)")
        if name == "mss":
            v = sc.integer("the MSS value")
            if not 0 <= v < 2**16:
                raise sc.err("mss is 0 to 65535", at)
            opts.append(Option("mss", (v,)))
        elif name == "wscale":
            v = sc.integer("the window scale")
            if not 0 <= v < 256:
                raise sc.err("wscale is 0 to 255", at)
            opts.append(Option("wscale", (v,)))
        elif name == "sack":
            blocks = []
            while True:
                sc.skip_inline()
                if not re.match(r"\d", sc.peek()):
                    break
                a = sc.integer("a SACK block's left edge")
                sc.expect(":", "':' in a SACK block")
                b = sc.integer("a SACK block's right edge")
                if not (0 <= a < 2**32 and 0 <= b < 2**32):
                    raise sc.err("SACK edges are 0 to 2^32-1", at)
                blocks.append((a, b))
            if not blocks:
                raise sc.err("sack needs at least one block a:b", at)
            opts.append(Option("sack", tuple(blocks)))
        elif name == "TS":
            sc.expect("val", "'val' after TS")
            val = sc.integer("the TS value")
            sc.expect("ecr", "'ecr' after TS val N")
            ecr = sc.integer("the TS echo reply")
            if not (0 <= val < 2**32 and 0 <= ecr < 2**32):
                raise sc.err("TS val and ecr are 0 to 2^32-1", at)
            opts.append(Option("TS", (val, ecr)))
        elif name in ("nop", "eol", "sackOK"):
            opts.append(Option(name))
        else:
            # FO (Fast Open), md5, exp-..., mptcp: kept, with their text, for the runner to refuse.
            j = sc.i
            while j < len(sc.s) and sc.s[j] not in ",>\n":
                j += 1
            opts.append(Option(name, (sc.s[sc.i : j].strip(),)))
            sc.i = j
        if sc.accept(">"):
            return tuple(opts)
        sc.expect(",", "',' or '>' in the options")


def _shell(sc: _Scan) -> Shell:
    j = sc.s.find("`", sc.i + 1)
    if j < 0:
        raise sc.err("unterminated `shell` command")
    body = sc.s[sc.i + 1 : j]
    sc.i = j + 1
    cmds = tuple(c.strip() for c in body.replace("\\\n", " ").split("\n") if c.strip())
    return Shell(cmds)


def _code(sc: _Scan) -> Code:
    j = sc.s.find("}%", sc.i + 2)
    if j < 0:
        raise sc.err("unterminated %{ code }% block")
    body = sc.s[sc.i + 2 : j]
    sc.i = j + 2
    return Code(body)


def _call(sc: _Scan) -> Call:
    name = sc.ident("a call name")
    sc.expect("(", f"'(' after {name}")
    args, depth, cur, in_str = [], 0, [], False
    while True:
        if sc.eof():
            raise sc.err(f"unterminated argument list of {name}(")
        c = sc.s[sc.i]
        if in_str:
            cur.append(c)
            if c == "\\" and sc.i + 1 < len(sc.s):
                cur.append(sc.s[sc.i + 1])
                sc.i += 1
            elif c == '"':
                in_str = False
        elif c == '"':
            in_str = True
            cur.append(c)
        elif c in "([{":
            depth += 1
            cur.append(c)
        elif c in ")]}":
            if depth == 0:
                if c != ")":
                    raise sc.err(f"unbalanced {c!r} in the arguments of {name}")
                sc.i += 1
                break
            depth -= 1
            cur.append(c)
        elif c == "," and depth == 0:
            args.append("".join(cur).strip())
            cur = []
        else:
            cur.append(c)
        sc.i += 1
    last = "".join(cur).strip()
    if last or args:
        if not last:
            raise sc.err(f"an empty argument in {name}(...)")
        args.append(last)
    if any(a == "" for a in args):
        raise sc.err(f"an empty argument in {name}(...)")
    sc.expect("=", f"'= RESULT' after {name}(...)")
    ret: int | None
    errno = None
    if sc.accept("..."):
        ret = None
    else:
        ret = sc.integer("the return value")
        sc.skip_inline()
        m = _IDENT.match(sc.s, sc.i)
        if m:
            errno = m.group(0)
            sc.i = m.end()
            sc.skip_inline()
        if sc.peek() == "(":
            # "(Operation now in progress)", "(flags O_RDWR)": a comment on the result.
            j = sc.s.find(")", sc.i)
            if j < 0 or "\n" in sc.s[sc.i : j]:
                raise sc.err("unterminated (text) after the result")
            sc.i = j + 1
    return Call(name, tuple(args), ret, errno)
