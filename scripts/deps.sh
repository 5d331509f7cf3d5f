#!/bin/sh
# scripts/deps.sh: makes sure the tools tilec builds and tests with are installed.
# Installs the Debian 12 packages by name when run as root; otherwise prints the exact
# apt-get line and fails. The CUDA toolkit (ptxas) is expected at /usr/local/cuda or on PATH.
set -eu

need=""
have_cmd() { command -v "$1" >/dev/null 2>&1; }
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }

have_cmd re2c || need="$need re2c"
have_cmd lemon || need="$need lemon"
have_pkg check || need="$need check"
have_pkg libxxhash-dev || need="$need libxxhash-dev"
have_cmd pkg-config || need="$need pkg-config"
[ -x /usr/lib/llvm-19/bin/FileCheck ] || need="$need llvm-19-tools"
[ -f /usr/lib/llvm-19/build/utils/lit/lit.py ] || need="$need llvm-19-tools"
have_cmd python3 || need="$need python3"
# the Python package's tests (tests/python) use Debian's NumPy with Debian's python3
have_pkg python3-numpy || need="$need python3-numpy"
have_cmd clang || need="$need clang"
have_pkg libclang-rt-14-dev || need="$need libclang-rt-14-dev"
# the AMD back end: libLLVM-19 and its headers, ld.lld-19 for code objects (the HIP runtime,
# libamdhip64.so, is opened at run time where an AMD GPU is: building needs none of it)
have_pkg llvm-19-dev || need="$need llvm-19-dev"
have_cmd ld.lld-19 || need="$need lld-19"

need=$(echo "$need" | tr ' ' '\n' | sort -u | tr '\n' ' ' | sed 's/^ *//; s/ *$//')
if [ -n "$need" ]; then
    if [ "$(id -u)" = 0 ]; then
        echo "deps: installing Debian packages: $need"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq
        # shellcheck disable=SC2086
        apt-get install -y -qq --no-install-recommends $need >/dev/null
    else
        echo "deps: missing packages; run as root:" >&2
        echo "  apt-get update && apt-get install -y $need" >&2
        exit 1
    fi
fi

if ! have_cmd ptxas && [ ! -x /usr/local/cuda/bin/ptxas ]; then
    echo "deps: warning: ptxas not found (CUDA toolkit 13 at /usr/local/cuda); PTX assembly tests will fail" >&2
fi
exit 0
