"""The TCP timestamps option (RFC 7323 §3) in a script, played as packetdrill plays it
(google/packetdrill run_packet.c: `set_outbound_ts_val_mapping`, `map_inbound_packet`,
`verify_outbound_tcp_option`; config.c for the defaults):

- an outbound packet's TSval maps the script's value onto the stack's (the first mapping is the
  baseline: later values are compared in script space, `first_script + (actual − first_actual)`);
- an inbound packet's TSval is sent as written; its TSecr, on a segment with ACK, is the stack's
  TSval that the script's TSecr names (an exact earlier outbound value; otherwise packetdrill
  refuses the line: "unable to infer live TS ecr");
- an outbound TSval is compared only with `--tcp_ts_tick_usecs=N` (packetdrill's default 0 turns
  the check off): |actual − script| ticks × N µs within max(tolerance_usecs, 12.5 % of the time
  since the script started).

Beyond packetdrill, which never compares an outbound TSecr, the runner checks it: the stack must
echo what RFC 7323 §4.3 says, and a TSecr is a value the script itself sent (not a clock), so the
check is exact on both stacks. `check_ecr=False` turns it off.
"""

from __future__ import annotations

MOD = 1 << 32


class TsMap:
    def __init__(self, tick_usecs: int = 0, check_ecr: bool = True):
        self.tick_usecs = tick_usecs
        self.check_ecr = check_ecr
        self.val_map: dict[int, int] = {}
        self.first: tuple[int, int] | None = None  # (script TSval, actual TSval)

    def outbound(self, script_ts: tuple, actual_ts: tuple, since_start_s: float, tol_abs_s: float) -> str | None:
        """Check an outbound option (script (val, ecr) against the stack's); record the mapping.
        Returns what differs, or None."""
        s_val, s_ecr = script_ts
        a_val, a_ecr = actual_ts
        self.val_map[s_val] = a_val
        if self.first is None:
            self.first = (s_val, a_val)
        if self.check_ecr and s_ecr != a_ecr:
            return f"TS ecr {a_ecr} instead of {s_ecr}"
        if self.tick_usecs:
            in_script = (self.first[0] + (a_val - self.first[1])) % MOD
            diff = abs(_signed(in_script - s_val))
            tol_us = max(tol_abs_s * 1e6, 0.125 * since_start_s * 1e6)
            if diff * self.tick_usecs > tol_us:
                return f"TS val {in_script} (in the script's clock) instead of {s_val}, tolerance {tol_us / 1e3:.1f} ms"
        return None

    def inbound_ecr(self, script_ecr: int, has_ack: bool) -> int | None:
        """The stack's TSval that the script's TSecr names; None when none matches."""
        if not has_ack:
            return script_ecr
        return self.val_map.get(script_ecr)


def _signed(x: int) -> int:
    x %= MOD
    return x - MOD if x >= 1 << 31 else x
