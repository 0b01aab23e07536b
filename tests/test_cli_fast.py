"""The fast path of `tcplab run` (python/tcplab/cli/run.py): the console script parses a plain
`tcplab run FILE [options]` itself, without importing click, and must then behave exactly as the
click command; anything it is not sure of goes to click."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from click.testing import CliRunner

from tcplab.cli import main
from tcplab.cli.run import parse_fast


def _click(args: list) -> tuple[int, str, str]:
    r = CliRunner().invoke(main, args)
    return r.exit_code, r.stdout, r.stderr


def _fast(args: list) -> subprocess.CompletedProcess:
    """`python -m tcplab.cli ARGS` (the console script's `entry`), in a fresh interpreter."""
    return subprocess.run([sys.executable, "-m", "tcplab.cli", *map(str, args)], capture_output=True, text=True, timeout=60)


def _no_wall(text: str) -> str:
    # The wall time of the run is the one figure that differs between two runs.
    return re.sub(r"wall [0-9.]+ ms", "wall - ms", text)


@pytest.mark.parametrize("extra", [[], ["--seed", "7"], ["--set", "tcp.variant=reno", "--set", "duration=2s"], ["--max-events", "100000", "--max-wall", "10s"]])
def test_fast_path_prints_what_click_prints(small_file, extra):
    args = ["run", str(small_file), *extra]
    assert parse_fast(args[1:]) is not None  # these take the fast path
    code, out, err = _click(args)
    p = _fast(args)
    assert (p.returncode, _no_wall(p.stdout), p.stderr) == (code, _no_wall(out), err)
    assert p.returncode == 0 and out.startswith("scenario small  seed ")


def test_fast_path_json_equals_click_json(small_file):
    args = ["run", str(small_file), "--json", "--seed", "3"]
    code, out, _ = _click(args)
    p = _fast(args)
    a, b = json.loads(p.stdout), json.loads(out)
    a["meta"].pop("wall_time_s", None), b["meta"].pop("wall_time_s", None)
    assert code == p.returncode == 0
    assert a == b and a["meta"]["seed"] == 3


@pytest.mark.parametrize("body, where", [(None, "missing"), ('name = "x"\n[topology]\nkind = "nope"\n', "bad"), ("not = [toml", "syntax")])
def test_fast_path_errors_equal_click_errors(tmp_path, body, where):
    f = tmp_path / f"{where}.toml"
    if body is not None:
        f.write_text(body, encoding="utf-8")
    code, out, err = _click(["run", str(f)])
    p = _fast(["run", f])
    assert code == p.returncode == 2
    assert p.stderr == err and p.stderr.startswith("error: ") and len(p.stderr.splitlines()) == 1
    assert p.stdout == out == ""


@pytest.mark.parametrize("args", [
    ["--help"], ["f.toml", "--help"], [], ["f.toml", "g.toml"], ["f.toml", "--seed=3"], ["f.toml", "--seed", "-1"],
    ["f.toml", "--seed", "1_0"], ["f.toml", "--seed", " 1"], ["f.toml", "--seed", str(2**64)], ["f.toml", "--seed", "1", "--seed", "2"],
    ["f.toml", "--max-events", "0"], ["f.toml", "--json", "--json"], ["f.toml", "--set"], ["f.toml", "--set", "--json"],
    ["f.toml", "--unknown"], ["-", "--json"], ["f.toml", "--"],
])
def test_fast_path_declines_what_click_must_judge(args):
    assert parse_fast(args) is None


def test_fast_path_declines_directories(tmp_path):
    assert parse_fast([str(tmp_path)]) is None
    assert parse_fast(["f.toml", "--pcap", str(tmp_path)]) is None
    assert parse_fast(["f.toml", "--pcap", str(tmp_path / "x.pcap")])["pcap"] == str(tmp_path / "x.pcap")


def test_fast_path_parses_every_option():
    kw = parse_fast(["f.toml", "--set", "a=1", "--seed", "007", "--json", "--set", "b=2", "--pcap", "o.pcap", "--max-wall", "3s", "--max-events", "9"])
    assert kw == {"scenario": "f.toml", "seed": 7, "sets": ["a=1", "b=2"], "as_json": True, "pcap": "o.pcap", "max_wall": "3s", "max_events": 9}


def test_declined_calls_reach_click(small_file):
    p = _fast(["run", small_file, "--seed=4"])  # click's form, not the fast path's
    assert p.returncode == 0 and p.stdout.startswith("scenario small  seed 4")
    p = _fast(["run", "--help"])
    assert p.returncode == 0 and "Run SCENARIO (a TOML file) once" in p.stdout
    p = _fast(["run", small_file, "--seed", "-1"])
    assert p.returncode == 2 and "--seed" in p.stderr


def test_fast_run_imports_no_click(small_file):
    code = "import sys\nfrom tcplab.cli import entry\nentry(['run', sys.argv[1]])\nprint('CLICK', 'click' in sys.modules)"
    p = subprocess.run([sys.executable, "-c", code, str(small_file)], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stdout.rstrip().endswith("CLICK False")


def test_console_ends_the_process_after_the_fast_path_with_everything_written(small_file, tmp_path):
    # `python -m tcplab.cli` is the console script: after the fast path it leaves with os._exit,
    # so its output must already be complete: the tables, and the capture the core wrote.
    cap = tmp_path / "c.pcap"
    p = _fast(["run", small_file, "--pcap", cap])
    assert p.returncode == 0 and p.stderr == ""
    # With a capture too: a run with instruments moves every packet by events (more events).
    code, out, _ = _click(["run", str(small_file), "--pcap", str(tmp_path / "c2.pcap")])
    assert _no_wall(p.stdout) == _no_wall(out) and p.stdout.endswith("\n")
    from tcplab.trace import report

    rep = report(cap, strict=True)  # strict: a capture cut short is an error
    assert len(rep["connections"]) == 1 and not rep["reader"].get("stopped") and rep["reader"]["packets"] > 0
