#!/usr/bin/env bash
# Install the reference CPython 3.15 (the Tachyon writer/reader oracle) from Debian sid's
# binary packages into a private prefix, without touching the system's packages; with its
# C headers (libpython3.15-dev, same source), so that the compiled record walk builds for it
# (build with CFLAGS=-I<prefix>/root/usr/include: Debian's pyconfig.h includes a multiarch
# header from there).
#
#   tools/install-reference-cpython.sh [PREFIX]
#
# PREFIX defaults to $TACHYON_REFERENCE_PREFIX, else ~/.cache/tachyon-format/cpython-3.15.
# Idempotent: an existing working install is left alone. Prints the interpreter's path last.
# Needs root for apt-get (patchelf comes from the host's own distribution).
set -euo pipefail

prefix=${1:-${TACHYON_REFERENCE_PREFIX:-$HOME/.cache/tachyon-format/cpython-3.15}}
python="$prefix/root/usr/bin/python3.15"
check() {
    "$python" -c 'import _remote_debugging as r, sys; assert r.zstd_available(); print(sys.version.split()[0])' >/dev/null 2>&1 \
        && [ -f "$prefix/root/usr/include/python3.15/Python.h" ]
}

if check; then
    echo "$python"
    exit 0
fi

packages=(python3.15 python3.15-minimal libpython3.15 libpython3.15-minimal libpython3.15-stdlib
          libpython3.15-testsuite libc6 libzstd1 libssl3t64 libexpat1 libffi8 zlib1g libgcc-s1
          liblzma5 libbz2-1.0 libsqlite3-0 libncursesw6 libtinfo6 libreadline8t64 libuuid1
          libmpdec4 libstdc++6 libpython3.15-dev python3.15-dev)

if ! command -v patchelf >/dev/null; then
    apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq patchelf >&2
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/lists/partial" "$work/cache/archives/partial" "$work/debs"
: > "$work/status"
echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian sid main" \
    > "$work/sources.list"
apt=(-o "Dir::Etc::sourcelist=$work/sources.list" -o Dir::Etc::sourceparts=/nonexistent
     -o "Dir::State::Lists=$work/lists" -o "Dir::Cache=$work/cache" -o "Dir::State::status=$work/status")
apt-get "${apt[@]}" update -qq >&2
(cd "$work/debs" && apt-get "${apt[@]}" download "${packages[@]}" >&2)

rm -rf "$prefix/root"
mkdir -p "$prefix/root"
for deb in "$work"/debs/*.deb; do
    dpkg-deb -x "$deb" "$prefix/root"
done
lib="$prefix/root/usr/lib/$(uname -m)-linux-gnu"
loader=$(ls "$lib"/ld-linux*.so.* | head -n 1)
patchelf --set-interpreter "$loader" --force-rpath --set-rpath "$lib" "$python"

check || { echo "reference CPython installed but _remote_debugging/zstd is unusable" >&2; exit 1; }
echo "$python"
