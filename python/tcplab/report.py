"""Reproduction reports: the paper's numbers beside ours, each with its tolerance and verdict,
written as Markdown and as one self-contained HTML file (figures embedded).

A report is a list of blocks built by a reproduction (`Report.heading`, `.text`, `.table`,
`.figure`, `.checks`); `Report.write(out_dir)` renders both files. A `Check` compares one published
number with ours; its verdict is computed here from the tolerance, never written by hand.

Every check has a kind (`KINDS`): a **paper** check sets a published number or claim beside ours
with a tolerance that can fail; a **derived** check compares with our own derivation from the
paper's model; a **calibration** check shows a value the reproduction was tuned to; a **sanity**
check is an identity or a property of the simulator. Only paper checks count in a report's
headline; the others are shown in their own section. `Check.can_fail()` probes a check's rule over
the values its quantity can plausibly take, so a paper check whose band covers them all is caught.

A check may also carry ns-2's value of the same quantity (`Check.ns2`, from the same scenario run
in ns-2.35): the report then reads paper / ns-2 / tcplab, and each missed check with an ns-2 value
says which side the miss is on (`Check.side`): tcplab differs from ns-2 (a fidelity bug), or ns-2
differs from the paper too (a detail the paper does not give). The headline counts paper
comparisons only, with or without ns-2.
"""

from __future__ import annotations

import base64
import html
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, List, Optional, Sequence, Tuple

import pandas as pd


#: The kinds of check, in the order a report shows them, with what each means.
KINDS = {
    "paper": "a published number or claim beside ours, with a tolerance that can fail",
    "derived": "our own derivation from the paper's model, not a number the paper publishes",
    "calibration": "a value the reproduction was tuned to reach: it shows the tuning, it does not test the model",
    "sanity": "an identity, a repeat of a comparison made elsewhere, or a property of the simulator",
}


@dataclass
class Check:
    """One comparison. `tol` is relative (0.10 = ±10 %) unless `rule` is given: a predicate on
    ours (and the paper's value) with `tol_text` saying what it demands.

    `kind` is one of `KINDS`; `why` justifies the tolerance in one line (the paper's spread, its
    stated precision, the seeds' spread). `plausible` is the range (low, high) our value could
    take in these runs whether or not the model is right (default: half to twice the paper's
    value, or ±1 around 0), over which `can_fail()` probes the rule."""

    what: str
    paper: object
    ours: object
    tol: Optional[float] = None
    rule: Optional[Callable[[object, object], bool]] = None
    tol_text: str = ""
    note: str = ""
    kind: str = "paper"
    why: str = ""
    plausible: Optional[Tuple[float, float]] = None
    #: ns-2's value of the quantity (the same scenario run in ns-2.35), or a reason it has none
    #: (a text: "ns-2 not installed", "ns-2: not expressible (...)"); None: not run.
    ns2: object = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {tuple(KINDS)}, not {self.kind!r}")

    def verdict_for(self, ours) -> Optional[bool]:
        """The verdict this check would give if our value were `ours`."""
        import dataclasses

        return dataclasses.replace(self, ours=ours).ok

    def plausible_range(self) -> Optional[Tuple[float, float]]:
        if self.plausible is not None:
            return tuple(map(float, self.plausible))
        for v in (self.paper, self.ours):
            try:
                c = number(v)
            except (TypeError, ValueError):
                continue
            if math.isnan(c):
                continue
            return (c - 1.0, c + 1.0) if c == 0 else (min(c / 2, c * 2), max(c / 2, c * 2))
        return None

    def can_fail(self, n: int = 201) -> Optional[bool]:
        """Whether some plausible value of ours (`plausible_range`, probed at n points) fails the
        rule; None when the check is not judged or its value is not a number."""
        if self.ok is None:
            return None
        r = self.plausible_range()
        if r is None:
            return None
        lo, hi = r
        for i in range(n):
            if self.verdict_for(lo + (hi - lo) * i / (n - 1)) is False:
                return True
        return False

    @property
    def ns2_value(self) -> object:
        """ns-2's value when it has one to compare (a number, or a value such as a name that a
        rule compares), else None (not run, or a reason it was not)."""
        v = self.ns2
        if v is None or isinstance(v, bool):
            return None
        if isinstance(v, (int, float)):
            return None if math.isnan(float(v)) else v
        if isinstance(v, str) and v.startswith("ns-2"):
            return None  # a reason, not a value
        return v

    @property
    def side(self) -> str:
        """For a missed check with an ns-2 value, which side the miss is on: "tcplab differs from
        ns-2" when tcplab is beyond the check's tolerance relative to ns-2's value (with a rule:
        ns-2's value meets the rule and tcplab's does not), else "ns-2 also differs from the
        paper". Empty for a check that is not missed or has no ns-2 value."""
        n = self.ns2_value
        if self.ok is not False or n is None:
            return ""
        ns2_ok = self.verdict_for(n)
        if self.rule is not None:
            return "tcplab differs from ns-2" if ns2_ok else "ns-2 also differs from the paper"
        try:
            t, nv = float(self.ours), float(n)
        except (TypeError, ValueError):
            return "tcplab differs from ns-2"
        if math.isnan(t) or abs(t - nv) > self.tol * abs(nv):
            return "tcplab differs from ns-2"
        if ns2_ok is False:
            return "ns-2 also differs from the paper"
        # tcplab within the tolerance of ns-2, ns-2 within the paper's: the two sit on either
        # side of the band's edge; neither simulator is the cause on its own.
        return "ns-2 also differs from the paper (marginally: ns-2 is within, tcplab within tolerance of ns-2)"

    @property
    def diff(self) -> str:
        try:
            p, o = float(self.paper), float(self.ours)
        except (TypeError, ValueError):
            return ""
        if p == 0 or math.isnan(p) or math.isnan(o):
            return ""
        return f"{(o - p) / abs(p) * 100:+.1f} %"

    @property
    def ok(self) -> Optional[bool]:
        if self.rule is not None:
            try:
                return bool(self.rule(self.ours, self.paper))
            except (TypeError, ValueError):
                return False
        if self.tol is None:
            return None
        try:
            p, o = float(self.paper), float(self.ours)
        except (TypeError, ValueError):
            return False
        if math.isnan(o):
            return False
        return abs(o - p) <= self.tol * abs(p)

    @property
    def tolerance(self) -> str:
        """The rule the verdict applies, in words: `|tcplab − paper| ≤ 10 % of paper`."""
        if self.tol_text:
            return self.tol_text
        return f"|tcplab − paper| ≤ {self.tol * 100:.0f} % of paper" if self.tol is not None else "(shown, not judged)"

    @property
    def verdict(self) -> str:
        return {True: "within", False: "MISSED", None: "—"}[self.ok]


def _fmt(x) -> str:
    if isinstance(x, float):
        if math.isnan(x):
            return "n/a"
        if x != 0 and (abs(x) >= 1e5 or abs(x) < 1e-3):
            return f"{x:.3g}"
        return f"{x:.4g}" if abs(x) < 100 else f"{x:.1f}"
    return str(x)


def words(values, unit: str = "") -> str:
    """Values in prose, not a Python repr: `[10, 20, 50]` -> `10, 20 and 50`, with a unit after
    each number (`3 ms, 10 ms and 30 ms`); in numeric order when they are numbers or quantities."""
    vals = list(dict.fromkeys(values))
    try:
        vals.sort(key=number)
    except (TypeError, ValueError):
        pass
    shown = [f"{_fmt(v) if isinstance(v, float) else v}{(' ' + unit) if unit else ''}" for v in vals]
    return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1] if shown else "none"


def pairs(d: dict) -> str:
    """A table of settings in prose: `{'min_th': 5, 'gentle': False}` -> `min_th 5, gentle off`."""
    def v(x):
        return ("on" if x else "off") if isinstance(x, bool) else _fmt(x)

    return ", ".join(f"{k} {v(x)}" for k, x in d.items())


def number(v) -> float:
    """The numeric value of a number or of a quantity written with a unit (`"30ms"`, `"1.5Mbps"`):
    its leading number, for ordering legends and lists."""
    if isinstance(v, bool):
        return float(v)
    if isinstance(v, (int, float)):
        return float(v)
    import re

    m = re.match(r"\s*([-+]?\d*\.?\d+(?:[eE][-+]?\d+)?)", str(v))
    if not m:
        raise ValueError(f"not a number: {v!r}")
    return float(m.group(1))


#: The headers of the checks table in a report (the CSV keeps short machine names).
CHECK_HEADERS = {
    "quantity": "quantity",
    "paper": "paper's value",
    "ns2": "ns-2's value",
    "tcplab": "tcplab's value",
    "difference": "difference, (tcplab − paper) / paper",
    "tolerance": "within if",
    "why": "why this tolerance",
    "verdict": "verdict",
    "note": "note",
}

#: The section title of each kind of check that is not a paper comparison.
KIND_SECTIONS = {
    "derived": "Checks against our own derivations (not counted in the headline)",
    "calibration": "Calibration targets (not counted in the headline)",
    "sanity": "Sanity checks: identities, repeats and simulator properties (not counted in the headline)",
}


@dataclass
class Report:
    title: str
    blocks: List[tuple] = field(default_factory=list)
    checks: List[Check] = field(default_factory=list)
    #: What produced the report, shown at its top: (label, text) pairs (`provenance()`).
    provenance: List[tuple] = field(default_factory=list)
    #: The scale the report was run at, and the checks its grid weakens against the full one:
    #: (what, reason) for each check whose comparison needs points or seeds this scale does not
    #: run (`mark_scale_limits`).
    scale: str = ""
    study: str = ""
    scale_limited: List[tuple] = field(default_factory=list)

    def mark_scale_limits(self, limits: Sequence[Tuple[str, str]]) -> None:
        """`limits`: (regular expression over a check's `what`, reason) pairs: how this scale's
        grid differs from the full one for those checks. Each matching check gets the reason in
        its note ("<scale> grid: reason"), and the report says which of its misses come from
        the grid."""
        import re

        for c in self.checks:
            for pattern, reason in limits:
                if re.search(pattern, c.what):
                    text = f"{self.scale} grid: {reason}"
                    c.note = f"{c.note}; {text}" if c.note else text
                    self.scale_limited.append((c.what, reason))
                    break

    def _scale_paragraph(self) -> str:
        """Which misses the scale's grid may explain, for the report's top."""
        if not self.scale or self.scale == "full":
            return ""
        limited = {w for w, _ in self.scale_limited}
        missed = [c for c in self.checks if c.ok is False]
        from_grid = [c for c in missed if c.what in limited]
        if not missed:
            return f"Scale {self.scale}: no misses; the full scale runs the paper's grids and seeds."
        own = len(missed) - len(from_grid)
        if not from_grid:
            return (f"Scale {self.scale}: none of the {len(missed)} misses is of a check this scale's grid weakens "
                    "(each would miss at the full scale too, as far as the grids go).")
        return (f"Scale {self.scale}: {len(from_grid)} of the {len(missed)} misses are of checks whose comparison needs points or seeds "
                f"the {self.scale} grid does not run ('{self.scale} grid:' in their notes; `--full` runs them): "
                + "; ".join(c.what for c in from_grid) + "."
                + (f" The other {own} would be misses at the full scale too, as far as the grids go." if own else ""))

    def heading(self, text: str, level: int = 2) -> None:
        self.blocks.append(("h", level, text))

    def text(self, text: str) -> None:
        self.blocks.append(("p", text))

    def table(self, df: pd.DataFrame, caption: str = "", csv: Optional[Path] = None) -> None:
        self.blocks.append(("table", df, caption, csv))

    def figure(self, png: Path, caption: str, svg: Optional[Path] = None) -> None:
        self.blocks.append(("fig", Path(png), caption, svg))

    def compare(self, checks: Sequence[Check], caption: str = "") -> None:
        """Add checks: the paper checks in place (under `caption`), the others gathered into
        their kind's section at the end of the report."""
        checks = list(checks)
        self.checks.extend(checks)
        paper = [c for c in checks if c.kind == "paper"]
        if paper:
            self.blocks.append(("checks", paper, caption))
        for c in checks:
            if c.kind != "paper":
                c.note = c.note or (caption and f"from: {caption}")

    # --------------------------------------------------------------------------------------

    def summary(self) -> dict:
        """The headline: paper checks only. `by_kind` gives every kind's own count."""
        def count(kind):
            judged = [c for c in self.checks if c.kind == kind and c.ok is not None]
            return judged, sum(1 for c in judged if c.ok)

        judged, within = count("paper")
        by_kind = {}
        for k in KINDS:
            j, w = count(k)
            by_kind[k] = {"checks": len(j), "within": w, "shown": sum(1 for c in self.checks if c.kind == k)}
        limited = {w for w, _ in self.scale_limited}
        return {"checks": len(judged), "within": within, "missed": [c.what for c in judged if not c.ok], "by_kind": by_kind,
                "missed_from_scale": [c.what for c in self.checks if c.ok is False and c.what in limited],
                "missed_sides": {c.what: c.side for c in judged if not c.ok and c.side}}

    def _kind_blocks(self) -> list:
        """The sections of the non-paper checks, appended after the report's own blocks."""
        out = []
        for k, title in KIND_SECTIONS.items():
            cs = [c for c in self.checks if c.kind == k]
            if cs:
                out += [("h", 2, title), ("p", f"{k.capitalize()}: {KINDS[k]}."), ("checks", cs, "")]
        return out

    def _headline(self) -> str:
        s = self.summary()
        rest = ", ".join(f"{v['shown']} {k}" for k, v in s["by_kind"].items() if k != "paper" and v["shown"])
        return (f"{s['within']} of {s['checks']} paper comparisons within tolerance."
                + (f" Not counted (own sections below): {rest} checks." if rest else ""))

    @property
    def has_ns2(self) -> bool:
        """Whether any check of the report carries an ns-2 value or reason (then every checks
        table shows the ns-2 column)."""
        return any(c.ns2 is not None for c in self.checks)

    @staticmethod
    def _note(c: Check) -> str:
        side = c.side
        return f"{side}; {c.note}" if side and c.note else side or c.note

    @staticmethod
    def _checks_frame(checks: Sequence[Check], ns2: bool = False) -> pd.DataFrame:
        cols = ["kind", "quantity", "paper"] + (["ns2"] if ns2 else []) + ["tcplab", "difference", "tolerance", "why", "verdict", "note"]
        return pd.DataFrame(
            [{"kind": c.kind, "quantity": c.what, "paper": _fmt(c.paper), "ns2": "—" if c.ns2 is None else _fmt(c.ns2), "tcplab": _fmt(c.ours),
              "difference": c.diff, "tolerance": c.tolerance, "why": c.why, "verdict": c.verdict, "note": Report._note(c)} for c in checks],
            columns=cols,
        )

    def _ns2_paragraph(self) -> str:
        """Which side each miss with an ns-2 value is on, for the report's top."""
        if not self.has_ns2:
            return ""
        missed = [c for c in self.checks if c.kind == "paper" and c.ok is False]
        sided = [c for c in missed if c.side]
        ours = [c.what for c in sided if c.side.startswith("tcplab")]
        theirs = [c.what for c in sided if not c.side.startswith("tcplab")]
        with_ns2 = sum(1 for c in self.checks if c.kind == "paper" and c.ns2_value is not None)
        def n(k, one, many):
            return f"{k} {one if k == 1 else many}"

        if not missed:
            return (f"ns-2: {n(with_ns2, 'paper comparison has', 'paper comparisons have')} ns-2's value beside tcplab's "
                    "(the same scenarios run in ns-2.35); no miss to attribute.")
        text = (f"ns-2: {n(with_ns2, 'paper comparison has', 'paper comparisons have')} ns-2's value beside tcplab's (the same scenarios run in ns-2.35). "
                f"Of the {n(len(missed), 'miss', 'misses')}, {len(sided)} {'has' if len(sided) == 1 else 'have'} an ns-2 value: {len(ours)} where tcplab differs from ns-2"
                + (f" ({'; '.join(ours)})" if ours else "") + f", {len(theirs)} where ns-2 also differs from the paper"
                + (f" ({'; '.join(theirs)})" if theirs else "") + ".")
        return text

    def _shown_frame(self, checks: Sequence[Check]) -> pd.DataFrame:
        df = Report._checks_frame(checks, self.has_ns2).drop(columns=["kind"])
        if not df["why"].astype(bool).any():
            df = df.drop(columns=["why"])
        return df.rename(columns=CHECK_HEADERS)

    def markdown(self, out: Path) -> str:
        lines = [f"# {self.title}", ""]
        if self.provenance:
            lines += ["  \n".join(f"**{k}:** {v}" for k, v in self.provenance), ""]
        s = self.summary()
        lines += [f"**{self._headline()}**" + (f" Missed: {'; '.join(s['missed'])}." if s["missed"] else ""), ""]
        if self._scale_paragraph():
            lines += [self._scale_paragraph(), ""]
        if self._ns2_paragraph():
            lines += [self._ns2_paragraph(), ""]
        for b in self.blocks + self._kind_blocks():
            if b[0] == "h":
                lines += ["#" * b[1] + " " + b[2], ""]
            elif b[0] == "p":
                lines += [b[1], ""]
            elif b[0] == "table":
                _, df, cap, csv = b
                if cap:
                    lines += [f"*{cap}*" + (f" ([CSV]({Path(csv).relative_to(out)}))" if csv else ""), ""]
                lines += [_md_table(df), ""]
            elif b[0] == "fig":
                _, png, cap, svg = b
                lines += [f"![{cap}]({png.relative_to(out)})", "", f"*{cap}*" + (f" ([SVG]({Path(svg).relative_to(out)}))" if svg else ""), ""]
            elif b[0] == "checks":
                _, checks, cap = b
                if cap:
                    lines += [f"*{cap}*", ""]
                lines += [_md_table(self._shown_frame(checks)), ""]
        return "\n".join(lines)

    def html(self) -> str:
        parts = [
            "<!DOCTYPE html><html><head><meta charset='utf-8'>",
            f"<title>{html.escape(self.title)}</title>",
            "<style>body{font-family:sans-serif;max-width:1100px;margin:2em auto;line-height:1.4}"
            "table{border-collapse:collapse;margin:0.5em 0 1.5em}td,th{border:1px solid #bbb;padding:3px 8px;font-size:90%}"
            "th{background:#eee}td.MISSED{background:#fdd}td.within{background:#dfd}img{max-width:100%}"
            "caption{caption-side:top;text-align:left;font-style:italic}</style></head><body>",
            f"<h1>{html.escape(self.title)}</h1>",
        ]
        if self.provenance:
            parts.append("<p>" + "<br>".join(f"<b>{html.escape(k)}:</b> {html.escape(str(v))}" for k, v in self.provenance) + "</p>")
        s = self.summary()
        missed = f" Missed: {html.escape('; '.join(s['missed']))}." if s["missed"] else ""
        parts.append(f"<p><b>{html.escape(self._headline())}</b>{missed}</p>")
        if self._scale_paragraph():
            parts.append(f"<p>{html.escape(self._scale_paragraph())}</p>")
        if self._ns2_paragraph():
            parts.append(f"<p>{html.escape(self._ns2_paragraph())}</p>")
        for b in self.blocks + self._kind_blocks():
            if b[0] == "h":
                parts.append(f"<h{b[1]}>{html.escape(b[2])}</h{b[1]}>")
            elif b[0] == "p":
                parts.append(f"<p>{html.escape(b[1])}</p>")
            elif b[0] == "table":
                parts.append(_html_table(b[1], b[2]))
            elif b[0] == "fig":
                data = base64.b64encode(b[1].read_bytes()).decode()
                parts.append(f"<figure><img src='data:image/png;base64,{data}' alt='{html.escape(b[2])}'><figcaption>{html.escape(b[2])}</figcaption></figure>")
            elif b[0] == "checks":
                parts.append(_html_table(self._shown_frame(b[1]), b[2], verdict_col=CHECK_HEADERS["verdict"]))
        parts.append("</body></html>")
        return "\n".join(parts)

    def write(self, out: Path, stem: str = "report") -> dict:
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        md = out / f"{stem}.md"
        md.write_text(self.markdown(out))
        page = out / f"{stem}.html"
        page.write_text(self.html())
        checks = out / "checks.csv"
        self._checks_frame(self.checks, self.has_ns2).to_csv(checks, index=False)
        return {"markdown": md, "html": page, "checks": checks}


def cannot_fail(checks: Sequence[Check]) -> List[Check]:
    """The paper checks whose rule no plausible value of ours fails (`Check.can_fail`), or whose
    tolerance has no one-line justification: each should get a tolerance that can fail, or
    another kind."""
    return [c for c in checks if c.kind == "paper" and c.ok is not None and (c.can_fail() is False or not c.why)]


def provenance(command: Sequence[str], seeds: str = "") -> List[tuple]:
    """What a report records at its top: the tcplab version and the commit it was built from,
    the command, the date, and the seeds."""
    import datetime as _dt

    from . import _core

    commit = getattr(_core, "__commit__", "") or "unknown"
    out = [
        ("tcplab", f"{_core.__version__} (commit {commit})"),
        ("command", " ".join(command)),
        ("written", _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")),
    ]
    if seeds:
        out.append(("seeds", seeds))
    return out


def _md_table(df: pd.DataFrame) -> str:
    cols = [str(c) for c in df.columns]
    rows = [[_fmt(v) for v in r] for r in df.itertuples(index=False)]
    out = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    out += ["| " + " | ".join(s.replace("|", "\\|") for s in r) + " |" for r in rows]
    return "\n".join(out)


def _html_table(df: pd.DataFrame, caption: str = "", verdict_col: Optional[str] = None) -> str:
    h = ["<table>"]
    if caption:
        h.append(f"<caption>{html.escape(caption)}</caption>")
    h.append("<tr>" + "".join(f"<th>{html.escape(str(c))}</th>" for c in df.columns) + "</tr>")
    for r in df.itertuples(index=False):
        cells = []
        for c, v in zip(df.columns, r):
            cls = f" class='{html.escape(str(v))}'" if c == verdict_col else ""
            cells.append(f"<td{cls}>{html.escape(_fmt(v))}</td>")
        h.append("<tr>" + "".join(cells) + "</tr>")
    h.append("</table>")
    return "\n".join(h)


def study_report(study: str, title: str, out, scale: str, scales: Sequence[str], command: Optional[Sequence[str]], seeds: Callable[[], str],
                 sources: str, choices: Sequence[str], silent: str = "the paper") -> Report:
    """The opening every reproduction's report shares: the scale checked, the output folders made,
    the title, the provenance (the command, else the Python call), where the published numbers
    come from, and the choices made where the study is silent. `seeds()` describes the seeds of
    the scale (called once the scale is known to be valid)."""
    if scale not in scales:
        raise ValueError(f"scale must be one of {tuple(scales)}, not {scale!r}")
    out = Path(out)
    (out / "tables").mkdir(parents=True, exist_ok=True)
    report = Report(f"{title} — tcplab reproduction ({scale})")
    report.scale = scale
    report.study = study
    if command is None:
        command = [f"tcplab.experiments.{study}.reproduce({str(out)!r}, scale={scale!r})"]
    report.provenance = provenance(command, seeds())
    report.text(f"Every number below is computed from the runs of this reproduction; the published numbers are {sources}. "
                "A verdict is 'within' when our value meets the stated tolerance or rule.")
    report.text(f"Choices where {silent} is silent, and ours:")
    for c in choices:
        report.text("• " + c)
    return report

