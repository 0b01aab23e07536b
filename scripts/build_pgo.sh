#!/usr/bin/env bash
# Install tcplab built with profile-guided optimisation (PGO): the extension is built once with
# instrumentation, runs a training set (the benchmark dumbbell at 1, 16 and 64 flows and every
# scenario of experiments/examples, 20 simulated seconds each), and is built again with what
# that run measured. Runs are bit-identical to the ordinary build's (PGO moves code, it changes
# no arithmetic); `tcplab.run()` of the benchmark dumbbell is 8-17 % faster (bench/README.md,
# "Seventh pass: the profile-guided build"). The ordinary install (README.md) stays the default:
# this one takes two builds and the llvm-profdata of the LLVM that rustc uses.
#
#   scripts/build_pgo.sh                 # into the python3 on PATH (as `pip install .` does)
#   PYTHON=/path/to/python scripts/build_pgo.sh
#
# llvm-profdata is looked for as llvm-profdata-<major> (Debian's llvm-<major>), in the toolchain
# (rustup's llvm-tools component) and as llvm-profdata; as root with apt-get, llvm-<major> is
# installed when none of them matches rustc's LLVM.
set -euo pipefail
cd "$(dirname "$0")/.."
py="${PYTHON:-python3}"

major="$(rustc -vV | sed -n 's/^LLVM version: \([0-9]*\).*/\1/p')"
if [ -z "$major" ]; then
    echo "build_pgo: rustc -vV names no LLVM version" >&2
    exit 1
fi
find_profdata() {
    local host cand
    host="$(rustc -vV | sed -n 's/^host: //p')"
    for cand in "llvm-profdata-$major" "$(rustc --print sysroot)/lib/rustlib/$host/bin/llvm-profdata" llvm-profdata; do
        if command -v "$cand" > /dev/null 2>&1 && "$cand" --version 2>/dev/null | grep -q "LLVM version $major\."; then
            command -v "$cand"
            return 0
        fi
    done
    return 1
}
if ! profdata="$(find_profdata)"; then
    if [ "$(id -u)" = 0 ] && command -v apt-get > /dev/null; then
        echo "build_pgo: installing llvm-$major (apt-get) for llvm-profdata" >&2
        (apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "llvm-$major") > /dev/null \
            || { echo "build_pgo: could not install llvm-$major" >&2; exit 1; }
    fi
    profdata="$(find_profdata)" || {
        echo "build_pgo: no llvm-profdata of LLVM $major (rustc's): apt-get install llvm-$major, or rustup component add llvm-tools" >&2
        exit 1
    }
fi

work="$(mktemp -d -t tcplab-pgo.XXXXXX)"
trap 'rm -rf "$work"' EXIT
echo "build_pgo: 1/3 instrumented build ($profdata)" >&2
export CARGO_TARGET_DIR="$work/target"
# Where tcplab is not installed yet, pip installs its dependencies with it; else tcplab alone.
deps=(--no-deps --force-reinstall)
"$py" -c "import tcplab" 2> /dev/null || deps=()
RUSTFLAGS="-Cprofile-generate=$work/raw" "$py" -m pip install -q "${deps[@]}" .
echo "build_pgo: 2/3 training runs" >&2
# From another directory, so that the installed build is the one imported (scripts/pgo_train.py:
# each run's result is kept as a digest, and the optimised build must give the same ones).
(cd "$work" && "$py" "$OLDPWD/scripts/pgo_train.py" "$OLDPWD" "$work/digests.json" train)
"$profdata" merge -o "$work/merged.profdata" "$work/raw"
echo "build_pgo: 3/3 optimised build" >&2
RUSTFLAGS="-Cprofile-use=$work/merged.profdata -Cllvm-args=-pgo-warn-missing-function=false" \
    "$py" -m pip install -q --no-deps --force-reinstall .
(cd "$work" && "$py" "$OLDPWD/scripts/pgo_train.py" "$OLDPWD" "$work/digests.json" check)
echo "build_pgo: installed tcplab with profile-guided optimisation into $("$py" -c 'import sys; print(sys.prefix)')" >&2
