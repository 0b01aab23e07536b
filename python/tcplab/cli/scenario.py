"""`tcplab run`, `validate`, `example`, `profiles` and `variants`: one scenario, its defaults, and the
named TCP configurations."""

from __future__ import annotations

import json
from pathlib import Path

import click

from .. import _core
from ..api import profiles as _profiles
from ..api import variants as _variants
from ..api import validate as _validate
from ..api import notes as _notes
from .common import _fail, _load_error
from .run import run_command


@click.command("run")
@click.argument("scenario", type=click.Path(dir_okay=False))
@click.option("--seed", type=click.IntRange(min=0, max=2**64 - 1), default=None, help="Run seed (default: the scenario's, else 1).")
@click.option("--set", "sets", multiple=True, metavar="KEY=VALUE", help="Override a scenario key, e.g. --set tcp.variant=reno.")
@click.option("--json", "as_json", is_flag=True, help="Print the whole result as JSON.")
@click.option("--pcap", type=click.Path(dir_okay=False), default=None, help="Also write a capture taken at the first flow's sending node.")
@click.option("--max-wall", default=None, metavar="DURATION", help="Stop the run after this much wall time (10s, 2min) and exit with an error.")
@click.option("--max-events", type=click.IntRange(min=1, max=2**64 - 1), default=None, help="Stop the run after this many events and exit with an error.")
def run_cmd(scenario: str, seed, sets, as_json: bool, pcap, max_wall, max_events) -> None:
    """Run SCENARIO (a TOML file) once and print its instruments."""
    run_command(scenario, seed, sets, as_json, pcap, max_wall, max_events)


@click.command("validate")
@click.argument("scenario", type=click.Path(dir_okay=False))
@click.option("--set", "sets", multiple=True, metavar="KEY=VALUE")
def validate_cmd(scenario: str, sets) -> None:
    """Check SCENARIO and print it with every default written out (JSON), each flow's TCP
    settings in full (the profile's and preset's knobs resolved): the output runs the same."""
    try:
        s = _validate(Path(scenario), sets=list(sets), tcp=True)
    except (OSError, UnicodeDecodeError) as e:
        _load_error(scenario, e)
    except _core.ScenarioError as e:
        _fail(f"{scenario}: {e}")
    except _core.CoreError as e:
        _fail(str(e))
    for n in _notes(Path(scenario), sets=list(sets)):
        click.echo(f"note: {n}", err=True)
    click.echo(json.dumps(s, indent=2))


def _examples() -> dict:
    """The shipped example scenarios (the package's `examples` directory, in the wheel):
    name -> (path, the first line of its opening comment)."""
    d = Path(__file__).resolve().parent.parent / "examples"
    out = {}
    for p in sorted(d.glob("*.toml")):
        first = next((ln.lstrip("# ").strip() for ln in p.read_text(encoding="utf-8").splitlines() if ln.startswith("#")), "")
        out[p.stem] = (p, first)
    return out


@click.command("example")
@click.argument("name", required=False)
@click.option("-o", "--out", type=click.Path(dir_okay=False), default=None, help="File to write (default NAME.toml here).")
@click.option("--force", is_flag=True, help="Overwrite the file if it exists.")
def example_cmd(name, out, force: bool) -> None:
    """Write the shipped example scenario NAME to start from (NAME.toml in this directory); without
    NAME, list them."""
    ex = _examples()
    if name is None:
        w = max(len(n) for n in ex)
        for n, (_, first) in ex.items():
            click.echo(f"{n.ljust(w)}  {first}")
        click.echo("\nwrite one with `tcplab example NAME`, then `tcplab run NAME.toml`")
        return
    name = name[:-5] if name.endswith(".toml") else name
    if name not in ex:
        import difflib

        near = difflib.get_close_matches(name, list(ex), n=1)
        _fail(f"no example {name!r}" + (f" (did you mean {near[0]!r}?)" if near else "") + f"; examples: {', '.join(ex)}")
    dest = Path(out) if out else Path(f"{name}.toml")
    if dest.exists() and not force:
        _fail(f"{dest} exists; --force overwrites it, -o names another file")
    try:
        dest.write_text(ex[name][0].read_text(encoding="utf-8"), encoding="utf-8")
    except OSError as e:
        _fail(f"{dest}: {getattr(e, 'strerror', None) or e}")
    click.echo(f"{dest}: {ex[name][1]}")
    click.echo(f"run it with `tcplab run {dest}`; `tcplab validate {dest}` shows every default written out")


@click.command("profiles")
@click.option("--json", "as_json", is_flag=True)
def profiles_cmd(as_json: bool) -> None:
    """List the named TCP profiles and their settings."""
    p = _profiles()
    if as_json:
        click.echo(json.dumps(p, indent=2))
        return
    knobs = list(next(iter(p.values())).keys())
    names = list(p.keys())
    w = max(len(k) for k in knobs)
    click.echo("knob".ljust(w) + "  " + "  ".join(n.rjust(10) for n in names))
    for k in knobs:
        click.echo(k.ljust(w) + "  " + "  ".join(str(p[n][k]).rjust(10) for n in names))
    # A profile that is another under a second name (`linux6`, the version `linux` models).
    aliases = [(n, next((m for m in names[:i] if p[m] == p[n]), None)) for i, n in enumerate(names)]
    aliases = [(n, m) for n, m in aliases if m]
    if aliases:
        click.echo("")
    for n, m in aliases:
        click.echo(f"{n} is {m} under another name (the same configuration)")


@click.command("variants")
@click.option("--profile", default="rfc", show_default=True, help="Profile the presets are applied over (for --json's full configs).")
@click.option("--json", "as_json", is_flag=True, help="Every preset's settings and full configuration as JSON.")
def variants_cmd(profile: str, as_json: bool) -> None:
    """List the presets (`preset = "..."` in [tcp]): the variants of the studies and their settings.

    A preset sets the mechanism knobs below over the profile; every other knob (timers, MSS,
    delayed ACKs, ...) stays the profile's, so each preset runs with or without delayed ACKs
    (`delayed_ack = true|false`).
    """
    try:
        v = _variants(profile)
    except ValueError as e:
        _fail(str(e))
    if as_json:
        click.echo(json.dumps(v, indent=2))
        return
    cols = ["variant", "sack", "sack_blocks", "initial_window", "limited_transmit", "abc", "early_retransmit"]
    heads = ["preset", "study", "variant", "sack", "blocks", "iw", "lt", "abc", "er", "summary"]
    rows = []
    for name, p in v.items():
        s = p["settings"]
        rows.append([name, p["study"]] + [_fmt_knob(s[c]) for c in cols] + [p["summary"]])
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(heads)]
    click.echo("  ".join(h.ljust(w) for h, w in zip(heads, widths)).rstrip())
    for r in rows:
        click.echo("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())


def _fmt_knob(v) -> str:
    if isinstance(v, bool):
        return "on" if v else "off"
    if isinstance(v, dict):
        return ",".join(f"{k}={x}" for k, x in v.items())
    return str(v)
