#!/usr/bin/env bash
# Install tcplab built with profile-guided optimisation (PGO): the extension is built once with
# instrumentation, runs a training set (scripts/pgo_train.py: the benchmark dumbbell at 1, 16 and
# 64 flows and every scenario of experiments/examples, 20 simulated seconds each), and is built
# again with what that run measured. PGO lays code out and picks branches; it changes no
# arithmetic, and the script checks it: the optimised build must give every training run's
# result, digest for digest, as the instrumented build gave it, or nothing is installed.
# `tcplab.run()` of the benchmark dumbbell is 8-17 % faster (bench/README.md, "Seventh pass: the
# profile-guided build"). The ordinary install (README.md) stays the default: this one takes two
# builds and the llvm-profdata of the LLVM that rustc uses.
#
#   scripts/build_pgo.sh                 # into the python3 on PATH (as `pip install .` does)
#   PYTHON=path/to/venv/bin/python scripts/build_pgo.sh
#
# Both builds are made as wheels and tried from a scratch directory; the environment gets the
# optimised wheel only once it has passed the check (and tcplab's dependencies first, where it
# has no tcplab yet). llvm-profdata is looked for as llvm-profdata-<major> (Debian's
# llvm-<major>), in the toolchain (rustup's llvm-tools component) and as llvm-profdata; when none
# matches rustc's LLVM, llvm-<major> is installed as root with apt-get, or llvm-tools with rustup.
set -euo pipefail
py="${PYTHON:-python3}"
# An interpreter given by a relative path is kept as the same file from any directory (not
# resolved: a venv's python is a symlink whose own path says which environment it is).
case "$py" in
    /*) ;;
    */*) py="$(cd "$(dirname "$py")" && pwd)/$(basename "$py")" ;;
esac
cd "$(dirname "$0")/.."
root="$PWD"

die() {
    echo "build_pgo: $*" >&2
    exit 1
}
command -v rustc > /dev/null || die "rustc is not on PATH (a Rust toolchain: https://rustup.rs)"
"$py" -m pip --version > /dev/null 2>&1 || die "$py cannot run pip (set PYTHON to an interpreter with pip)"
major="$(rustc -vV | sed -n 's/^LLVM version: \([0-9]*\).*/\1/p')"
[ -n "$major" ] || die "rustc -vV names no LLVM version"
host="$(rustc -vV | sed -n 's/^host: //p')"

find_profdata() {
    local cand path v
    for cand in "llvm-profdata-$major" "$(rustc --print sysroot)/lib/rustlib/$host/bin/llvm-profdata" llvm-profdata; do
        path="$(command -v "$cand" 2> /dev/null)" || continue
        v="$("$path" --version 2> /dev/null)" || continue
        if [[ "$v" == *"LLVM version $major."* ]]; then
            echo "$path"
            return 0
        fi
    done
    return 1
}
if ! profdata="$(find_profdata)"; then
    if [ "$(id -u)" = 0 ] && command -v apt-get > /dev/null; then
        echo "build_pgo: installing llvm-$major (apt-get) for llvm-profdata" >&2
        (apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "llvm-$major") > /dev/null 2>&1 \
            || echo "build_pgo: apt-get could not install llvm-$major" >&2
    fi
    if ! profdata="$(find_profdata)" && command -v rustup > /dev/null; then
        echo "build_pgo: adding the llvm-tools component (rustup) for llvm-profdata" >&2
        rustup component add llvm-tools > /dev/null 2>&1 || echo "build_pgo: rustup could not add llvm-tools" >&2
    fi
    profdata="$(find_profdata)" \
        || die "no llvm-profdata of LLVM $major (rustc's): apt-get install llvm-$major, or rustup component add llvm-tools"
fi

work="$(mktemp -d -t tcplab-pgo.XXXXXX)"
trap 'rm -rf "$work"' EXIT
export CARGO_TARGET_DIR="$work/target"
# Only the extension's crates are instrumented and optimised: build scripts and proc-macros are
# built for the host apart when a target is named.
export MATURIN_PEP517_ARGS="--target $host"

# Build a wheel with RUSTFLAGS $2 into $work/$1 and unpack it into $work/$1-site.
build() {
    RUSTFLAGS="$2" "$py" -m pip wheel -q --no-deps -w "$work/$1" . || die "the $1 build failed"
    "$py" -m pip install -q --no-deps --target "$work/$1-site" "$work/$1"/*.whl || die "the $1 wheel did not unpack"
}
# Run the training set (train) or its check with the build in $work/$1-site, from the scratch
# directory (no source tree on the path), after making sure that build is the one imported.
train() {
    local got
    got="$(cd "$work" && PYTHONPATH="$work/$1-site" "$py" -c 'import tcplab; print(tcplab.__file__)')" \
        || die "the $1 build does not import (are tcplab's dependencies installed for $py?)"
    [[ "$got" == "$work/$1-site/"* ]] || die "the $1 build is not the one imported ($got)"
    (cd "$work" && PYTHONPATH="$work/$1-site" "$py" "$root/scripts/pgo_train.py" "$root" "$work/digests.json" "$2")
}

if ! "$py" -c "import tcplab" 2> /dev/null; then
    # A first install: tcplab's dependencies come from the ordinary wheel's requirements, then
    # the ordinary tcplab itself is taken out again (the optimised one goes in at the end).
    echo "build_pgo: 0/3 tcplab's dependencies" >&2
    "$py" -m pip wheel -q --no-deps -w "$work/plain" . || die "the ordinary build failed"
    "$py" -m pip install -q "$work/plain"/*.whl || die "tcplab's dependencies could not be installed"
    "$py" -m pip uninstall -q -y tcplab
fi
echo "build_pgo: 1/3 instrumented build ($profdata)" >&2
build gen "-Cprofile-generate=$work/raw"
echo "build_pgo: 2/3 training runs" >&2
train gen train
compgen -G "$work/raw/*.profraw" > /dev/null || die "the training runs wrote no profile (in $work/raw)"
"$profdata" merge -o "$work/merged.profdata" "$work/raw" || die "llvm-profdata could not merge the profiles"
echo "build_pgo: 3/3 optimised build, checked against the instrumented one" >&2
build use "-Cprofile-use=$work/merged.profdata -Cllvm-args=-pgo-warn-missing-function=false"
train use check
"$py" -m pip install -q --no-deps --force-reinstall "$work/use"/*.whl || die "the optimised wheel could not be installed"
echo "build_pgo: installed tcplab with profile-guided optimisation into $("$py" -c 'import sys; print(sys.prefix)')" >&2
