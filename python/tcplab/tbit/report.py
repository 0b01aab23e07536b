"""Readable tables of TBIT's results: one stack's tests, and Table I's shape over many stacks."""

from __future__ import annotations

from .probe import TESTS


def _table(heads: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(heads)]
    out = ["  ".join(h.ljust(w) for h, w in zip(heads, widths)).rstrip()]
    out += ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    return "\n".join(out)


def one(rows: list[dict], target: str) -> str:
    """A stack's tests: verdict, how many runs agreed, and (simulated) what it configures."""
    sim = any("configured" in r for r in rows)
    heads = ["test", "verdict", "runs agreeing"] + (["configured", "match"] if sim else [])
    body = []
    for r in rows:
        line = [r["title"], r["verdict"], f"{r['agree']}/{r['runs']}"]
        if sim:
            line += [r["configured"], "yes" if r["match"] else "NO"]
        body.append(line)
    out = f"TBIT: {target}\n" + _table(heads, body)
    bad = sum(r.get("malformed", 0) for r in rows)
    if bad:
        out += f"\n{bad} malformed frame(s) dropped (truncated or inconsistent IPv4/TCP headers)"
    return out


SHORT = {"sack_advertised": "SACK adv", "icw": "ICW", "rto_data": "data RTOs", "sack_used": "SACK used", "lt": "LT", "abc": "ABC",
         "abc_l": "L", "er": "ER", "cc": "CC", "rto_syn": "SYN RTOs",
         "tlp": "TLP", "rack": "loss det.", "cc_beta": "β", "ecn": "ECN", "pacing": "pacing", "hystart": "HyStart"}  # fmt: skip


def _short(v: str) -> str:
    if v.startswith("n/a"):
        return "n/a"
    if v.startswith("without conclusion"):
        return "no concl."
    if v.startswith("eliminated"):
        return "eliminated"
    return v


def matrix(results: dict[str, list[dict]]) -> str:
    """Table I's shape: a row per stack, a column per test; `inferred / configured` where they
    differ (for simulated stacks)."""
    tests = [t for t in TESTS if any(r["test"] == t for rows in results.values() for r in rows)]
    body = []
    for name, rows in results.items():
        by = {r["test"]: r for r in rows}
        line = [name]
        for t in tests:
            r = by.get(t)
            if r is None:
                line.append("")
                continue
            v = _short(r["verdict"])
            if "configured" in r and not r["match"]:
                v += f" (configured {_short(r['configured'])})"
            line.append(v)
        body.append(line)
    return _table(["stack"] + [SHORT[t] for t in tests], body)


def linux_table(rows: list[dict]) -> str:
    """The real-kernel table: configuration, test, inferred, what the configuration should give."""
    body = []
    for r in rows:
        m = {True: "yes", False: "NO", None: ""}[r.get("match")]
        body.append([r["config"], r["title"], r["verdict"], f"{r['agree']}/{r['runs']}", r.get("configured", ""), m])
    return _table(["kernel configuration", "test", "inferred", "runs agreeing", "should be", "match"], body)
