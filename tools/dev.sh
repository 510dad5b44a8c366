#!/usr/bin/env bash
# Set up the project from scratch and run it.
#
#   bash tools/dev.sh example   # install, then read a bundled CPython 3.15 profile
#   bash tools/dev.sh test      # install (with the reference CPython 3.15), run the test suite
#
# Idempotent: the virtual environments (.venv, .venv-3.15) and the reference interpreter are
# reused when present. Needs Python >= 3.11 as `python3`. Both commands build the compiled
# record walk (Cython, from PyPI, and a C compiler with the interpreter's headers: as root,
# Debian's build-essential and python3-dev are installed when missing; without them the
# package installs with its numpy decoder only). The test command also installs, as root,
# the reference CPython 3.15 with its headers (from Debian's packages, into a private
# directory) and the peer tools the tests use as oracles (see README.md).
set -euo pipefail
cd "$(dirname "$0")/.."

example=tests/data/threads_wall_zstd.bin

# A C compiler and the headers of the interpreter $1, for the compiled record walk
build_tools() {
    local include
    include=$("$1" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
    if command -v cc >/dev/null && [ -f "$include/Python.h" ]; then
        return 0
    fi
    if [ "$(id -u)" -ne 0 ]; then
        echo "warning: no C compiler or no Python headers, and not root: tachyon-format" \
            "will use its numpy decoder" >&2
        return 0
    fi
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
        --no-install-recommends build-essential python3-dev; } >&2 \
        || echo "warning: could not install a C compiler and Python headers" >&2
}

dev_env() {
    if [ ! -x .venv/bin/python ]; then
        python3 -m venv .venv
    fi
    build_tools .venv/bin/python
    .venv/bin/python -m pip install -q --disable-pip-version-check -e ".[dev]"
}

# Which decoder reads the sample region in the interpreter $1 (the compiled walk, where built)
decoder_of() {
    "$1" -c 'import tachyon_format as t; i = t.decoder_info(); print(i["active"])'
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
    # Debian's pyconfig.h includes a multiarch header found from the private usr/include
    CFLAGS="-I$(dirname "$(dirname "$python")")/include ${CFLAGS:-}" \
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
    # every pass runs, and the summary at the end says which failed
    failed=()
    run_pass() {
        local name=$1
        shift
        echo "== $name" >&2
        if "$@"; then
            echo "== $name: passed" >&2
        else
            echo "== $name: FAILED" >&2
            failed+=("$name")
        fi
    }
    run_pass "Python $(.venv/bin/python -c 'import sys; print(sys.version.split()[0])'), the $(decoder_of .venv/bin/python) decoder" \
        .venv/bin/python -m pytest -q -p no:cacheprovider --slow
    # the numpy decoder, where the compiled walk is built: the readers' tests once more
    # (the decoders' own tests compare every decoder in every pass)
    if [ "$(decoder_of .venv/bin/python)" = compiled ]; then
        run_pass "the numpy decoder forced (TACHYON_FORMAT_DECODER=numpy)" \
            env TACHYON_FORMAT_DECODER=numpy .venv/bin/python -m pytest -q -p no:cacheprovider \
            tests/formats/tachyon tests/test_api.py
    fi
    # CPython 3.15: everything but the tests marked slow (full-size hostile files, killed
    # and concurrent fleet writers, long reference runs), which the first pass ran and which
    # test nothing that depends on the interpreter (every one of them runs on 3.11)
    if [ -n "$reference" ]; then
        reference_env "$reference"
        run_pass "CPython $("$reference" -c 'import sys; print(sys.version.split()[0])'), the $(decoder_of .venv-3.15/bin/python) decoder" \
            .venv-3.15/bin/python -m pytest -q -p no:cacheprovider
    fi
    if [ ${#failed[@]} -gt 0 ]; then
        printf '== failed: %s\n' "${failed[@]}" >&2
        exit 1
    fi
    echo "== all passes passed" >&2
    ;;
*)
    sed -n '2,10p' "$0"
    exit 2
    ;;
esac
