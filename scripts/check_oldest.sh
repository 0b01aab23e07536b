#!/usr/bin/env bash
# Install tcplab with the oldest dependency versions pyproject.toml allows (requirements/oldest.txt)
# into a fresh venv, without the system's packages, and run the tests that use each dependency.
#   scripts/check_oldest.sh              # with python3
#   PYTHON=python3.9 scripts/check_oldest.sh
# Run by .ci/run. First it checks that every floor in pyproject.toml is pinned in oldest.txt, so
# the floors stay the versions this script tests.
set -euo pipefail
cd "$(dirname "$0")/.."
py="${PYTHON:-python3}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# The floor check reads files only, so it runs with python3 (tomllib, Python >= 3.11).
python3 - <<'PY'
import re, sys, tomllib
project = tomllib.loads(open("pyproject.toml", encoding="utf-8").read())["project"]
reqs = project["dependencies"] + [r for rs in project["optional-dependencies"].values() for r in rs]
pins = {}
for line in open("requirements/oldest.txt", encoding="utf-8"):
    line = line.split("#", 1)[0].strip()
    if line:
        name, version = re.match(r"([A-Za-z0-9_.-]+)==([^;\s]+)", line).groups()
        pins[name.lower()] = version
bad = []
for r in reqs:
    m = re.match(r"([A-Za-z0-9_.-]+)(\[[^\]]*\])?>=([^,;\s]+)", r)
    if not m:
        bad.append(f"{r}: no floor (>=) in pyproject.toml")
    elif pins.get(m.group(1).lower()) != m.group(3):
        bad.append(f"{r}: requirements/oldest.txt has {m.group(1)}=={pins.get(m.group(1).lower())}")
if bad:
    sys.exit("the floors of pyproject.toml and requirements/oldest.txt differ:\n  " + "\n  ".join(bad))
PY

"$py" -m venv "$work/venv"
venv="$work/venv/bin/python"
"$venv" -m pip install -q --disable-pip-version-check --only-binary :all: -r requirements/oldest.txt
"$py" -m pip wheel -q --disable-pip-version-check --no-deps -w "$work/wheel" .
# With the oldest versions as constraints: pip fails here if they do not satisfy tcplab's ranges.
"$venv" -m pip install -q --disable-pip-version-check -c requirements/oldest.txt "$work"/wheel/tcplab-*.whl
"$venv" -m pip check
echo "oldest versions: $("$venv" -c 'import sys, numpy, pandas, pyarrow, duckdb, dask, matplotlib; print(f"Python {sys.version.split()[0]}, numpy {numpy.__version__}, pandas {pandas.__version__}, pyarrow {pyarrow.__version__}, duckdb {duckdb.__version__}, dask {dask.__version__}, matplotlib {matplotlib.__version__}")')"
# The tests that use each dependency: runs and results (pandas, numpy), sweeps on every executor
# (dask, distributed, pyarrow, duckdb), the store, limits (psutil), the command line (click, rich),
# models and fits (numpy).
"$venv" -m pytest -q -p no:cacheprovider tests/test_api.py tests/test_sweep.py tests/test_store.py tests/test_limits.py \
    tests/test_cli.py tests/test_models.py tests/test_analysis.py
