#!/usr/bin/env bash
# Set up the project from scratch and run it.
#
#   bash tools/dev.sh example   # install, then read a bundled CPython 3.15 profile
#   bash tools/dev.sh test      # install (with the reference CPython 3.15), run the test suite
#
# Idempotent: the virtual environments (.venv, .venv-3.15) and the reference interpreter are
# reused when present. Needs Python >= 3.11 as `python3`; the test command needs root for
# apt-get (it installs the reference CPython 3.15 from Debian's packages).
set -euo pipefail
cd "$(dirname "$0")/.."

example=tests/data/threads_wall_zstd.bin

dev_env() {
    if [ ! -x .venv/bin/python ]; then
        python3 -m venv .venv
    fi
    .venv/bin/python -m pip install -q --disable-pip-version-check -e ".[dev]"
}

# The suite under CPython 3.15 itself: the people producing these files run 3.15.
reference_env() {
    local python=$1
    if [ ! -x .venv-3.15/bin/python ]; then
        "$python" -m venv --without-pip .venv-3.15
    fi
    if ! .venv-3.15/bin/python -m pip --version >/dev/null 2>&1; then
        # Debian's CPython has no ensurepip: bootstrap pip from its wheel (a wheel is a zip,
        # and pip runs from inside it)
        local wheels wheel
        wheels=$(mktemp -d)
        .venv/bin/python -m pip download --disable-pip-version-check --no-deps \
            --only-binary=:all: -d "$wheels" pip >/dev/null
        wheel=$(find "$wheels" -name 'pip-*.whl' | head -n 1)
        [ -n "$wheel" ] || { echo "could not download pip's wheel" >&2; exit 1; }
        .venv-3.15/bin/python "$wheel/pip" install -q --disable-pip-version-check "$wheel"
        rm -rf "$wheels"
    fi
    .venv-3.15/bin/python -m pip install -q --disable-pip-version-check -e ".[test]"
}

# The real tools that read or make the other formats, as test oracles: Go's pprof (reads
# pprof and gperftools files), gperftools' libprofiler (makes real CPU profiles), a C
# compiler for its fixture program and Valgrind's callgrind_annotate (reads callgrind
# files), Chromium (loads the rendered pages headless); speedscope and pprof-format from
# npm (installed under ~/.cache/tachyon-format/npm, not into the repository). Tests that
# need one skip, with the reason, without it.
npm_tools() {
    local prefix=${TACHYON_NPM_PREFIX:-$HOME/.cache/tachyon-format/npm}
    command -v npm >/dev/null || { echo "warning: no npm; the speedscope tests will skip" >&2; return 0; }
    mkdir -p "$prefix"
    npm install --prefix "$prefix" --no-audit --no-fund --silent \
        speedscope@1.25.0 pprof-format@2.3.2 >&2 \
        || echo "warning: could not install npm speedscope/pprof-format; their tests will skip" >&2
}

peer_tools() {
    local missing=()
    command -v go >/dev/null || missing+=(golang-go)
    /sbin/ldconfig -p | grep -q 'libprofiler\.so ' || missing+=(google-perftools libgoogle-perftools-dev)
    command -v gcc >/dev/null || missing+=(gcc)
    command -v callgrind_annotate >/dev/null || missing+=(valgrind)
    command -v npm >/dev/null || missing+=(nodejs npm)
    command -v chromium >/dev/null || missing+=(chromium)
    if [ ${#missing[@]} -gt 0 ]; then
        if [ "$(id -u)" -ne 0 ]; then
            echo "warning: not root, cannot install ${missing[*]}; tests that need them will skip" >&2
        else
            { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
                --no-install-recommends "${missing[@]}"; } >&2 \
                || echo "warning: could not install ${missing[*]}; tests that need them will skip" >&2
        fi
    fi
    npm_tools
}

case "${1:-}" in
example)
    dev_env
    .venv/bin/tachyon-format info "$example"
    echo
    echo "first samples of $example (tachyon-format dump):"
    .venv/bin/tachyon-format dump "$example" | sed -n '2,4p' | cut -c1-160
    ;;
test)
    dev_env
    peer_tools
    # a CPython 3.15 given in TACHYON_REFERENCE_PYTHON (a path, or a command such as
    # python3.15) is used as it is; only without one is the reference installed
    given=""
    if [ -n "${TACHYON_REFERENCE_PYTHON:-}" ]; then
        given=$(command -v "$TACHYON_REFERENCE_PYTHON" || true)
        [ -n "$given" ] || echo "warning: TACHYON_REFERENCE_PYTHON=$TACHYON_REFERENCE_PYTHON" \
            "is not an interpreter here; installing the reference instead" >&2
    fi
    if [ -n "$given" ]; then
        reference=$given
        export TACHYON_REFERENCE_PYTHON=$reference
    elif reference=$(bash tools/install-reference-cpython.sh); then
        export TACHYON_REFERENCE_PYTHON=$reference
    else
        echo "warning: no reference CPython 3.15; tests that need it will be skipped" >&2
        reference=""
    fi
    .venv/bin/python -m pytest -q -p no:cacheprovider --slow
    if [ -n "$reference" ]; then
        reference_env "$reference"
        .venv-3.15/bin/python -m pytest -q -p no:cacheprovider --slow
    fi
    ;;
*)
    sed -n '2,10p' "$0"
    exit 2
    ;;
esac
