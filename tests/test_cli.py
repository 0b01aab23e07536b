"""The `tcplab` command line, run as a separate process (`python -m tcplab.cli`)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
import sysconfig

import pytest

import tcplab
from conftest import EXAMPLES, LOSSY_TOML, SMALL_TOML


def one_error_line(p: subprocess.CompletedProcess) -> str:
    """The process failed with exactly one line on stderr, `error: ...`; return it."""
    assert p.returncode != 0
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1, p.stderr
    assert lines[0].startswith("error: "), p.stderr
    assert "Traceback" not in p.stderr
    return lines[0]


def test_run_prints_tables_with_the_flow_name(cli, small_file):
    p = cli("run", small_file)
    assert p.returncode == 0, p.stderr
    out = p.stdout
    assert out.startswith("scenario small  seed 1")
    for section in ("connections", "links", "transfers"):
        assert f"\n{section}\n" in out
    flow_line = next(line for line in out.splitlines() if line.startswith("f "))
    assert "newreno" in flow_line and "16384" in flow_line
    assert "link:sender->receiver" in out and "link:receiver->sender" in out


def test_run_json_is_the_whole_result(cli, small_file):
    p = cli("run", small_file, "--json", "--seed", "5", "--set", "tcp.variant=reno")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert set(d) >= {"connections", "links", "transfers", "meta", "scenario"}
    assert d["meta"]["seed"] == 5
    assert d["connections"][0]["name"] == "f"
    assert d["connections"][0]["variant"] == "reno"
    assert d["connections"][0]["bytes_delivered"] == 16384
    assert len(d["links"]) == 2 and len(d["transfers"]) == 1
    assert d["scenario"]["tcp"] == {"variant": "reno"}
    # the same numbers as the Python API gives
    api = tcplab.run(small_file, seed=5, sets=["tcp.variant=reno"]).to_dict()
    assert d["connections"] == api["connections"] and d["links"] == api["links"]


def test_run_seed_changes_a_lossy_run(cli, tmp_path):
    f = tmp_path / "lossy.toml"
    f.write_text(LOSSY_TOML, encoding="utf-8")
    p = cli("run", f, "--json", "--seed", "2")
    assert p.returncode == 0, p.stderr
    two = json.loads(p.stdout)
    assert two["meta"]["seed"] == 2
    assert two["connections"] == tcplab.run(f, seed=2).to_dict()["connections"]
    assert two["connections"] != tcplab.run(f, seed=1).to_dict()["connections"]


@pytest.mark.parametrize(
    "sets, path",
    [
        (["topology.dely=1ms"], "topology.dely"),
        (["topology.delay=35"], "topology.delay"),
        (["flows.0.to=moon"], "flows[0].to"),
        (["flows.0.tcp.mss=0"], "flows[0].tcp.mss"),
        (["tcp.profile=win95"], "tcp.profile"),
        (["flows.3.bytes=1"], "flows.3"),
    ],
)
def test_bad_scenario_is_one_error_line_naming_the_key(cli, small_file, sets, path):
    args = [a for s in sets for a in ("--set", s)]
    p = cli("run", small_file, *args)
    assert p.returncode == 2 and p.stdout == ""
    line = one_error_line(p)
    assert line.startswith(f"error: {small_file}: {path}: ")


def test_validate_refuses_a_bad_scenario_like_run(cli, small_file):
    line = one_error_line(cli("validate", small_file, "--set", "topology.dely=1ms"))
    assert line.startswith(f"error: {small_file}: topology.dely: unknown field `dely`")


def test_toml_syntax_error_is_one_line(cli, tmp_path):
    f = tmp_path / "broken.toml"
    f.write_text('name = \n[topology]\nkind = "single_link"\n', encoding="utf-8")
    line = one_error_line(cli("run", f))
    assert "invalid TOML" in line and "line 1" in line


@pytest.mark.parametrize("cmd", ["run", "validate"])
def test_missing_file(cli, tmp_path, cmd):
    missing = tmp_path / "nope.toml"
    p = cli(cmd, missing)
    assert p.returncode == 2 and p.stdout == ""
    line = one_error_line(p)
    assert line == f"error: scenario file not found: {missing}"


def test_unreadable_file_is_a_clear_error(cli, tmp_path):
    f = tmp_path / "binary.toml"
    f.write_bytes(b"\xff\xfe\x00garbage")
    line = one_error_line(cli("run", f))
    assert str(f) in line and "UTF-8" in line


def test_file_name_with_equals_sign(cli, tmp_path):
    f = tmp_path / "loss=0.toml"
    f.write_text(SMALL_TOML, encoding="utf-8")
    p = cli("run", f, "--json")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["connections"][0]["bytes_delivered"] == 16384


def test_profiles_lists_the_profiles(cli):
    p = cli("profiles")
    assert p.returncode == 0, p.stderr
    header = p.stdout.splitlines()[0].split()
    assert header[0] == "knob"
    assert {"rfc", "ns2", "bsd", "rfc2988", "linux22"} <= set(header[1:])
    table, _, rest = p.stdout.partition("\n\n")
    rows = {line.split()[0]: line.split()[1:] for line in table.splitlines()[1:]}
    # `linux6` is `linux` under the version's name: said under the table.
    assert "linux6 is linux under another name" in rest
    assert rows["cc"][header.index("linux") - 1] == rows["cc"][header.index("linux6") - 1] == "cubic"
    assert rows["rto_initial"][header.index("rfc") - 1] == "1s"
    assert rows["rto_initial"][header.index("bsd") - 1] == "6s"
    assert set(rows) == set(tcplab.profiles()["rfc"])  # every knob


def test_profiles_json(cli):
    p = cli("profiles", "--json")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout) == tcplab.profiles()


def test_validate_prints_the_scenario_with_defaults(cli, small_file):
    p = cli("validate", small_file, "--set", "flows.0.think=\"1s\"")
    assert p.returncode == 0, p.stderr
    s = json.loads(p.stdout)
    assert s["seed"] == 1
    assert s["flows"][0]["repeat"] == 1 and s["flows"][0]["count"] == 1
    assert s["flows"][0]["think"] == "1s"
    assert s["flows"][0]["bytes"] == "16384B"
    assert s == tcplab.validate(small_file, sets=['flows.0.think="1s"'], tcp=True)


def test_demo_example_runs(cli):
    p = cli("run", EXAMPLES / "demo.toml")
    assert p.returncode == 0, p.stderr
    assert "bulk" in p.stdout and "(time limit reached)" not in p.stdout


def test_console_script_entry_point(small_file):
    # pip puts the `tcplab` script next to this interpreter's other scripts
    exe = shutil.which("tcplab") or shutil.which("tcplab", path=sysconfig.get_path("scripts"))
    assert exe, "the tcplab console script is not installed"
    p = subprocess.run([exe, "run", str(small_file)], capture_output=True, text=True, timeout=30)
    assert p.returncode == 0, p.stderr
    assert "\nf " in p.stdout


def test_an_override_of_an_asked_preset_is_shown_by_validate_run_and_json(cli):
    """A preset asked for by --set over a file that writes a knob the preset sets: the file's knob
    wins (knobs apply over presets), and every output says so."""
    demo = str(EXAMPLES / "demo.toml")  # writes variant = "newreno"
    line = 'note: tcp.variant = "newreno" overrides preset "sack", which sets variant = "sack" (flows[0])'
    v = cli("validate", demo, "--set", 'tcp.preset="sack"')
    assert v.returncode == 0 and line in v.stderr.splitlines(), v.stderr
    r = cli("run", demo, "--set", 'tcp.preset="sack"')
    assert r.returncode == 0 and r.stdout.splitlines()[1] == line, r.stdout
    j = json.loads(cli("run", demo, "--json", "--set", 'tcp.preset="sack"').stdout)
    assert j["notes"] == [line[len("note: "):]] and j["tcp"][0]["variant"] == "newreno"
    # Nothing overridden, nothing said.
    assert "notes" not in json.loads(cli("run", demo, "--json").stdout)
    assert "note:" not in cli("validate", demo).stderr


def test_example_lists_and_writes_a_shipped_scenario(tmp_path):
    import tcplab

    shipped = Path(tcplab.__file__).parent / "examples"  # inside the package: in the wheel
    names = sorted(p.stem for p in shipped.glob("*.toml"))
    assert "demo" in names and "http10" in names
    listing = subprocess.run([sys.executable, "-m", "tcplab.cli", "example"], capture_output=True, text=True, cwd=tmp_path)
    assert listing.returncode == 0 and [ln.split()[0] for ln in listing.stdout.splitlines()[: len(names)]] == names
    p = subprocess.run([sys.executable, "-m", "tcplab.cli", "example", "http10"], capture_output=True, text=True, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "http10.toml").read_text(encoding="utf-8") == (shipped / "http10.toml").read_text(encoding="utf-8")
    again = subprocess.run([sys.executable, "-m", "tcplab.cli", "example", "http10"], capture_output=True, text=True, cwd=tmp_path)
    assert again.returncode == 2 and "http10.toml exists" in again.stderr
    typo = subprocess.run([sys.executable, "-m", "tcplab.cli", "example", "dumbel"], capture_output=True, text=True, cwd=tmp_path)
    assert typo.returncode == 2 and "did you mean 'dumbbell'?" in typo.stderr


def test_the_installed_package_ships_every_example_and_study_scenario():
    """The wheel carries the same scenario files as the source tree (CI installs the package, not
    an editable copy, so this reads what a user's `pip install` gets)."""
    import tcplab

    installed = Path(tcplab.__file__).parent
    source = Path(__file__).resolve().parents[1] / "python" / "tcplab"
    for sub in ("examples", "experiments"):
        want = sorted(str(p.relative_to(source)) for p in (source / sub).rglob("*.toml"))
        got = sorted(str(p.relative_to(installed)) for p in (installed / sub).rglob("*.toml"))
        assert want, sub
        assert got == want, f"{sub}: missing from the package: {sorted(set(want) - set(got))}"


def test_trace_and_tbit_print_a_legend_under_their_tables(tmp_path):
    cap = tmp_path / "demo.pcap"
    assert subprocess.run([sys.executable, "-m", "tcplab.cli", "run", str(EXAMPLES / "demo.toml"), "--pcap", str(cap)],
                          capture_output=True, text=True).returncode == 0
    tr = subprocess.run([sys.executable, "-m", "tcplab.cli", "trace", str(cap)], capture_output=True, text=True)
    assert tr.returncode == 0, tr.stderr
    table, legend = tr.stdout.split("\n  data: ", 1)
    assert "rexmt" in table and "loss ev: retransmission bursts" in legend and "SYN rx: SYN retransmissions" in legend
    tb = subprocess.run([sys.executable, "-m", "tcplab.cli", "tbit", "--sim", "newreno", "--tests", "icw", "--runs", "1"],
                        capture_output=True, text=True)
    assert tb.returncode == 0, tb.stderr
    assert tb.stdout.splitlines()[-3].startswith("  verdict: what the probes inferred, when at least 80 %")
