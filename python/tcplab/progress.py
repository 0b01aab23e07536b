"""Progress of a sweep: a live bar on a terminal (done/total, runs/s, ETA, failures), plain lines
every few seconds otherwise (CI logs), or nothing."""

from __future__ import annotations

import sys
import time
from typing import Optional, TextIO


def _duration(s: float) -> str:
    if s != s or s == float("inf"):
        return "?"
    s = int(round(s))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {s % 3600 // 60:02d} min"


class Progress:
    """`total` runs, `already` of them finished before this session (they count as done but not in
    the rate). `enabled`: True or None = a bar on a terminal, lines every `interval` seconds
    otherwise; None and not a terminal still prints lines; False prints nothing."""

    def __init__(self, total: int, already: int = 0, name: str = "", enabled: Optional[bool] = None, interval: float = 5.0, stream: Optional[TextIO] = None) -> None:
        self.total, self.already, self.name = total, already, name
        self.ok = self.failed = 0
        self.interval = interval
        self.stream = stream or sys.stderr
        self.t0 = time.monotonic()
        self._last = self.t0
        self._printed = already
        self._bar = None
        if enabled is False:
            self.mode = "off"
        elif _isatty(self.stream):
            self.mode = "bar"
            self._start_bar()
        else:
            self.mode = "lines"

    @property
    def done(self) -> int:
        return self.already + self.ok + self.failed

    @property
    def rate(self) -> float:
        dt = time.monotonic() - self.t0
        return (self.ok + self.failed) / dt if dt > 0 else 0.0

    @property
    def eta_s(self) -> float:
        r = self.rate
        return (self.total - self.done) / r if r > 0 else float("nan")

    def _start_bar(self) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress as RichProgress, TextColumn, TimeRemainingColumn

        self._bar = RichProgress(
            TextColumn(f"sweep {self.name}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[rate]:.1f} runs/s"),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            TextColumn("{task.fields[failed]} failed"),
            console=Console(file=self.stream),
        )
        self._bar.start()
        self._task = self._bar.add_task("runs", total=self.total, completed=self.already, rate=0.0, failed=0)

    def line(self) -> str:
        pct = 100.0 * self.done / self.total if self.total else 100.0
        before = f" ({self.already} already stored)" if self.already else ""
        return (
            f"sweep {self.name}: {self.done}/{self.total} runs done ({pct:.1f} %){before}, "
            f"{self.failed} failed, {self.rate:.1f} runs/s, ETA {_duration(self.eta_s)}"
        )

    def advance(self, ok: int = 0, failed: int = 0) -> None:
        self.ok += ok
        self.failed += failed
        if self._bar is not None:
            self._bar.update(self._task, completed=self.done, rate=self.rate, failed=self.failed)
        self.refresh()

    def refresh(self) -> None:
        if self.mode != "lines":
            return
        now = time.monotonic()
        if now - self._last >= self.interval and self.done != self._printed:
            self._last, self._printed = now, self.done
            print(self.line(), file=self.stream, flush=True)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.update(self._task, completed=self.done, rate=self.rate, failed=self.failed)
            self._bar.stop()
            self._bar = None
        elif self.mode == "lines" and self.done != self._printed:
            print(self.line(), file=self.stream, flush=True)
        self.mode = "off"


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
