"""Helpers every command of the command line shares: the one-line error exit and the plain text
tables. Nothing here imports click, so that the fast path of `tcplab run` (cli/run.py) can use them."""

from __future__ import annotations

import sys


def _fail(msg: str) -> None:
    """Print one line `error: ...` on stderr and exit 2 (messages from the TOML parser span lines)."""
    one_line = "; ".join(part.strip() for part in str(msg).splitlines() if part.strip())
    print(f"error: {one_line}", file=sys.stderr, flush=True)
    sys.exit(2)


def _load_error(scenario: str, e: Exception) -> None:
    """A scenario file that cannot be read (missing, a directory, unreadable, not UTF-8)."""
    if isinstance(e, UnicodeDecodeError):
        _fail(f"{scenario}: not a UTF-8 text file ({e.reason} at byte {e.start})")
    if getattr(e, "filename", None) is None:
        _fail(str(e))  # tcplab's own message names the file
    _fail(f"{scenario}: {getattr(e, 'strerror', None) or e}")


def _fmt(v) -> str:
    if v is None or (isinstance(v, float) and v != v):
        return "-"
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def _table(title: str, rows: list[dict], cols: list[tuple[str, str, float]]) -> str:
    """A plain aligned text table; cols are (key, header, scale)."""
    head = [h for _, h, _ in cols]
    body = []
    for r in rows:
        line = []
        for k, _, scale in cols:
            v = r.get(k)
            if isinstance(v, (int, float)) and v is not None and scale != 1:
                v = v * scale
            line.append(_fmt(v))
        body.append(line)
    widths = [max(len(h), *(len(b[i]) for b in body)) if body else len(h) for i, h in enumerate(head)]
    out = [title]
    out.append("  ".join(h.rjust(w) if i else h.ljust(w) for i, (h, w) in enumerate(zip(head, widths))))
    for b in body:
        out.append("  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(b, widths))))
    return "\n".join(out)


#: What the abbreviated columns of `tcplab run` count (docs/tcp.md, "Instruments").
