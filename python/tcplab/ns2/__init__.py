"""ns-2 beside tcplab (docs/ns2.md): the same scenario as an ns-2.35 Tcl script (`export`), run in
`ns` and read back into tcplab's per-packet columns (`run`), and both simulators side by side,
packet by packet (`compare`)."""

from __future__ import annotations

from .pair import Comparison, compare
from .script import Script, export
from .runner import INSTALL_HINT, Ns2Error, Ns2NotFound, Ns2Run, run

__all__ = ["export", "run", "compare", "Script", "Ns2Run", "Comparison", "Ns2Error", "Ns2NotFound", "INSTALL_HINT"]
