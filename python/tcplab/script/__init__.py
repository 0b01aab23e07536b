"""Scripted TCP tests in packetdrill's language (`tcplab script FILE.pkt`), run against the
simulator (`SimStack`: any profile or preset, in virtual time) and against the real Linux kernel
(`KernelStack`: a network namespace the runner makes and removes). docs/script.md.

`parser` reads the language (errors with line and column), `runner` plays a script with
packetdrill's matching rules and timing tolerance, `knobs` maps the whitelisted sysctls.
"""

from __future__ import annotations

from .parser import ScriptError, parse
from .runner import Result, run, run_file, scripts_in, summary, summary_text

__all__ = ["ScriptError", "parse", "Result", "run", "run_file", "scripts_in", "summary", "summary_text"]
