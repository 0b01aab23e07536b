#!/usr/bin/env bash
# Set-up check of README's two commands and of CI (.ci/run), so that a newcomer's machine is set up
# as CI's is.
#   scripts/setup.sh           # the main job: Python >= 3.9 with pip, a Rust toolchain >= 1.85
#   scripts/setup.sh --tools   # the tests too: Rust >= 1.88, and the programs of the trace,
#                              # real-kernel and ns-2 tests (tcpdump, nft, tshark, tcptrace, ethtool,
#                              # curl, ns from the ns2 package), installed with apt-get when run as
#                              # root, else named
# Exits 1 when Python or Rust is missing or too old (nothing can be built); a missing test program
# is a warning only: the tests that need it skip and say why.
set -euo pipefail
cd "$(dirname "$0")/.."
tools=0
case "${1:-}" in
    --tools) tools=1 ;;
    "") ;;
    *) echo "usage: scripts/setup.sh [--tools]" >&2; exit 2 ;;
esac

fail=0
if ! python3 -c 'import sys; sys.exit(sys.version_info < (3, 9))' 2> /dev/null; then
    echo "setup: Python 3.9 or later is needed as python3 (found: $(python3 --version 2>&1 || echo none))" >&2
    fail=1
elif ! python3 -m pip --version > /dev/null 2>&1; then
    echo "setup: pip is missing for python3 (Debian/Ubuntu: apt-get install python3-pip, or python3 -m ensurepip)" >&2
    fail=1
fi
rust_min="1.85"
[ "$tools" = 1 ] && rust_min="1.88"  # the tests' dev-dependencies
if ! command -v cargo > /dev/null || ! command -v rustc > /dev/null; then
    echo "setup: a Rust toolchain ($rust_min or later) is needed: https://rustup.rs" >&2
    fail=1
else
    have="$(rustc --version | awk '{print $2}')"
    if [ "$(printf '%s\n%s\n' "$rust_min" "$have" | sort -V | head -n1)" != "$rust_min" ]; then
        echo "setup: Rust $rust_min or later is needed, found $have (rustup update)" >&2
        fail=1
    fi
fi
[ "$fail" = 0 ] || exit 1

if [ "$tools" = 1 ]; then
    # Programs of the trace tests (tests/test_trace.py, tests/test_kernel_trace.py), the
    # real-stack tests (tests/test_testbed.py, tests/test_tbit_linux.py) and the ns-2 tests
    # (tests/test_ns2.py: ns-2.35's `ns`): command:package.
    need=""
    for tool in tcpdump:tcpdump nft:nftables tshark:tshark tcptrace:tcptrace ethtool:ethtool curl:curl ns:ns2; do
        command -v "${tool%%:*}" > /dev/null || need="$need ${tool#*:}"
    done
    if [ -n "$need" ]; then
        if [ "$(id -u)" = 0 ] && command -v apt-get > /dev/null; then
            echo "setup: installing$need (apt-get)" >&2
            (apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q $need) > /dev/null \
                || echo "setup: warning: could not install$need; the tests that need them skip" >&2
        else
            echo "setup: warning:$need not installed (as root with apt-get this script installs them:" \
                "sudo apt-get install$need); the tests that need them skip" >&2
        fi
    fi
fi
