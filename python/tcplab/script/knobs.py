"""The `shell` lines a script may run: a whitelist of sysctls (and packetdrill's own set-up
helpers), each mapped onto the kernel (set in the runner's namespace) and onto the simulator
(a profile knob, or a named difference the report lists). Anything else is "not supported".

packetdrill's `defaults.sh` is not run: its values (google/packetdrill
gtests/net/common/defaults.sh) are applied as sysctls.
"""

from __future__ import annotations

import re
import shlex

#: The tuned defaults packetdrill's scripts start from (`defaults.sh`): the values, not the file.
PACKETDRILL_DEFAULTS = {
    "tcp_rmem": "4096 540000 15728640",
    "tcp_wmem": "4096 262144 4194304",
    "tcp_timestamps": "1",
    "tcp_syn_retries": "5",
    "tcp_synack_retries": "5",
    "tcp_frto": "2",
    "tcp_sack": "1",
    "tcp_dsack": "1",
    "tcp_reordering": "3",
    "tcp_congestion_control": "cubic",
    "tcp_slow_start_after_idle": "0",
    "tcp_early_retrans": "4",
    "tcp_recovery": "1",
    "tcp_tso_win_divisor": "3",
    "tcp_ecn": "0",
    "tcp_pacing_ss_ratio": "200",
    "tcp_pacing_ca_ratio": "120",
    "tcp_syncookies": "1",
    "tcp_fastopen": "0",
}

#: sysctls under net.ipv4 a script may set. The value says what the simulator does with it:
#: a function of the value giving {knob: value} overrides, or a string naming why it has no
#: counterpart in the model (then the report lists it, and the script still runs).
def _bool(knob):
    return lambda v: {knob: v.strip() not in ("0", "")}


SIM_MAP = {
    "tcp_sack": _bool("sack"),
    "tcp_slow_start_after_idle": _bool("restart_after_idle"),
    "tcp_syn_retries": lambda v: {"syn_retries": int(v)},
    "tcp_syn_linear_timeouts": lambda v: {"syn_linear_timeouts": int(v)},
    "tcp_reordering": lambda v: {"dupthresh": int(v)},
    "tcp_timestamps": _bool("timestamps"),
    # The controller (`cc`): Reno and CUBIC are modelled; another name is noted and the stack's
    # own controller runs.
    "tcp_congestion_control": lambda v: {"cc": v.strip()} if v.strip() in ("reno", "cubic") else {},
    "tcp_early_retrans": "tail-loss probes are off in this profile (the knob `tlp = true`, on in `linux`)",
    "tcp_recovery": "RACK is off in this profile: RFC 6675 loss detection (the knob `loss = \"rack\"`, on in `linux`)",
    # F-RTO (`frto`, Linux's recovery): 0 off, 1 and 2 on (Linux has one code path, RFC 5682's
    # SACK-enhanced version with SACK).
    "tcp_frto": _bool("frto"),
    # D-SACK generation (`dsack`, the receiver's); the sender reads D-SACKs either way.
    "tcp_dsack": _bool("dsack"),
    "tcp_fack": "no effect (removed from Linux)",
    "tcp_tso_win_divisor": "TSO deferral (`tso_defer`) uses the default divisor 3",
    "tcp_min_tso_segs": "no TSO in the model",
    "tcp_pacing_ss_ratio": "the pacing rate uses the default ratio (200 % in slow start)",
    "tcp_pacing_ca_ratio": "the pacing rate uses the default ratio (120 % after)",
    "tcp_rmem": "buffer sizes are not modelled",
    "tcp_wmem": "buffer sizes are not modelled",
    # RFC 3168 ECN (`ecn`): 0 never, 1 ask and accept, 2 accept only (tcp_ecn's values).
    "tcp_ecn": lambda v: {"ecn": {"0": "off", "1": "on"}.get(v.strip(), "accept")},
    "tcp_ecn_option": "AccECN options are not modelled",
    "tcp_syncookies": "no SYN cookies in the model",
    "tcp_synack_retries": "SYN-ACK retries follow the profile",
    "tcp_no_metrics_save": "no metrics cache in the model",
    "tcp_fastopen": "no Fast Open in the model (used only with FO options or MSG_FASTOPEN)",
    "tcp_notsent_lowat": "not modelled",
    "tcp_autocorking": "not modelled",
    "tcp_limit_output_bytes": "not modelled",
    "tcp_mtu_probing": "not modelled",
    "tcp_rto_min_us": "not modelled",
}

#: sysctls whose SIM_MAP note names something a profile may model after all: the note is left
#: out when the resolved configuration (`ScriptSim.config()`) does what the value asks.
SIM_MODELLED = {
    "tcp_tso_win_divisor": lambda v, cfg: v.strip() == "3" and cfg.get("tso_defer") is True,
    "tcp_pacing_ss_ratio": lambda v, cfg: v.strip() == "200",
    "tcp_pacing_ca_ratio": lambda v, cfg: v.strip() == "120",
    "tcp_recovery": lambda v, cfg: v.strip() != "0" and cfg.get("loss") == "rack",
    "tcp_early_retrans": lambda v, cfg: v.strip() not in ("0", "1", "2") and cfg.get("tlp") is True,
}

#: Values of the whitelisted sysctls that change behaviour the model lacks: a script that sets
#: one of these is "not supported" on the simulator.
SIM_REFUSE: dict = {}


class Unsupported(Exception):
    """A construct the runner cannot do: reported as "not supported: <construct>"."""


def commands(shell_cmds) -> list:
    """The sysctls a `shell` block sets, as (name, value) pairs under net.ipv4, in order;
    ("defaults", None) for packetdrill's defaults.sh; raises Unsupported for anything else."""
    out = []
    for cmd in shell_cmds:
        for part in cmd.split(";"):
            part = part.strip()
            if not part:
                continue
            try:
                words = shlex.split(part, comments=True)
            except ValueError as e:
                raise Unsupported(f"shell {part!r} ({e})") from None
            if not words:
                continue
            head = words[0]
            if head.endswith("common/defaults.sh"):
                out.append(("defaults", None))
                continue
            if re.fullmatch(r"/tmp/sysctl_restore_.*\.sh", head):
                continue  # the namespace is discarded after the script: nothing to restore
            if head == "sysctl" or head.endswith("common/set_sysctls.py"):
                for w in words[1:]:
                    if w.startswith("-") or w.startswith(">") or w in ("2>&1", "/dev/null"):
                        continue
                    if "=" not in w:
                        raise Unsupported(f"shell {part!r}")
                    k, v = w.split("=", 1)
                    k = k.replace("/proc/sys/", "").replace("/", ".")
                    if not k.startswith("net.ipv4."):
                        raise Unsupported(f"sysctl {k}")
                    name = k[len("net.ipv4.") :]
                    if name not in SIM_MAP:
                        raise Unsupported(f"sysctl {k}")
                    out.append((name, v))
                continue
            if head == "tc" and words[1:2] == ["qdisc"] and "root" in words and words[-1:] != ["fq"]:
                # packetdrill's tun device: pfifo (no pacing), or `pfifo limit 0`, which blocks
                # every local send (a congested qdisc). Mapped onto the kernel's veth.
                tail = words[words.index("root") + 1 :]
                tail = [w for w in tail if w not in ("2>/dev/null", ">/dev/null")]
                if tail == ["pfifo"] or (len(tail) == 3 and tail[:2] == ["pfifo", "limit"] and tail[2].isdigit()):
                    out.append(("qdisc", " ".join(tail)))
                    continue
                if words[2] in ("del", "delete") and tail == []:
                    out.append(("qdisc", "delete"))  # back to the device's default
                    continue
            if head == "ip" and words[1:3] == ["tcp_metrics", "flush"]:
                continue  # each script runs in a fresh namespace: no cached metrics
            raise Unsupported(f"shell {part!r}")
    return out


def expand(pairs) -> list:
    """`commands` with defaults.sh expanded into its sysctls."""
    out = []
    for k, v in pairs:
        if k == "defaults":
            out.extend(PACKETDRILL_DEFAULTS.items())
        else:
            out.append((k, v))
    return out


def sim_overrides(pairs, cfg: dict | None = None) -> tuple[dict, list]:
    """Knob overrides for the simulated stack and the notes on what has no counterpart (with
    `cfg`, the resolved configuration: not on what it models, SIM_MODELLED)."""
    knobs, notes = {}, []
    for k, v in expand(pairs):
        if k == "qdisc":
            if v not in ("pfifo", "delete"):
                raise Unsupported(f"tc qdisc {v} on the simulator (no local queue in the model)")
            continue
        if v.strip() in SIM_REFUSE.get(k, ()):
            raise Unsupported(f"sysctl net.ipv4.{k}={v} on the simulator")
        m = SIM_MAP[k]
        if k == "tcp_congestion_control" and not m(v):
            note = f"net.ipv4.{k}={v}: only reno and cubic are modelled; the stack's own controller runs"
            if note not in notes:
                notes.append(note)
        elif callable(m):
            knobs.update(m(v))
        elif cfg is not None and k in SIM_MODELLED and SIM_MODELLED[k](v, cfg):
            continue
        else:
            note = f"net.ipv4.{k}={v}: {m}"
            if note not in notes:
                notes.append(note)
    return knobs, notes
