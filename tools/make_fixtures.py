"""Regenerate the golden Tachyon files in ``tests/data/`` with the reference CPython 3.15.

    python tools/make_fixtures.py [--chroot-dir DIR] [--refresh-chroot]
    python tools/make_fixtures.py --derived     # only the files derived from committed ones

Runs with any Python >= 3.11, as root (it uses apt-get, chroot and a bind mount of /proc).

1. Builds (once, then reuses) a minimal Debian sid root holding CPython 3.15 from the same .deb
   files as ``tools/install-reference-cpython.sh``. Profiles record absolute paths, and inside
   the chroot those are neutral (``/app/...``, ``/usr/lib/python3.15/...``) instead of naming
   the machine that generated them.
2. Profiles each workload in ``tools/workloads/`` with ``python3.15 -m profiling.sampling run
   ... --binary`` inside the chroot (see ``PROFILED``).
3. Writes the synthetic edge-case files directly with ``_remote_debugging.BinaryWriter``, by
   running this same script inside the chroot with ``--write-synthetic`` (see ``SYNTHETIC``).
4. For every ``NAME.bin`` stores CPython's canonical decode (``tools/cpython_decode.py``,
   gzipped with mtime 0 so the bytes depend only on the content), and the ``replay
   --collapsed`` and ``--pstats`` outputs; then rewrites ``tests/data/README.md``.

Everything that runs under 3.15 (the ``--write-synthetic`` mode) uses the stdlib only.
"""

from __future__ import annotations

import argparse
import datetime
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DATA_DIR = REPO / "tests" / "data"
WORKLOADS_DIR = REPO / "tools" / "workloads"
COMPANION_SUFFIXES = (".bin", ".ref.jsonl.gz", ".collapsed.txt", ".pstats")

# Debian sid packages that make up the chroot: the interpreter, its stdlib and the shared
# libraries it and its extension modules link against (libzstd for _remote_debugging).
PACKAGES = (
    "python3.15", "python3.15-minimal", "libpython3.15", "libpython3.15-minimal",
    "libpython3.15-stdlib", "libc6", "libzstd1", "libssl3t64", "libexpat1", "libffi8",
    "zlib1g", "libgcc-s1", "liblzma5", "libbz2-1.0", "libsqlite3-0", "libncursesw6",
    "libtinfo6", "libreadline8t64", "libuuid1", "libmpdec4", "libstdc++6",
)
SID_SOURCE = ("deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] "
              "http://deb.debian.org/debian sid main")
CHROOT_ENV = {"PATH": "/usr/bin", "LC_ALL": "C"}  # no locale in the chroot: LC_ALL=C is needed
CHROOT_PYTHON = "/usr/bin/python3.15"
CHROOT_APP = "/app"


@dataclass(frozen=True)
class Profiled:
    """A golden file made by profiling one workload with the real sampling profiler."""

    name: str
    workload: str
    options: tuple[str, ...]
    covers: str


PROFILED = (
    Profiled("threads_wall_zstd", "threads.py", ("-a", "-r", "500hz"),
             "wall mode, `-a` with 4 threads, default (zstd) compression"),
    Profiled("threads_cpu_opcodes_raw", "threads.py",
             ("-a", "-r", "1khz", "--mode", "cpu", "--opcodes", "--compression", "none"),
             "cpu mode, opcodes, uncompressed, 4 threads"),
    Profiled("threads_gil_blocking", "threads.py",
             ("-a", "-r", "500hz", "--mode", "gil", "--blocking", "--no-gc"),
             "gil mode, `--blocking` and `--no-gc` feature bits, 4 threads"),
    Profiled("deep_recursion_wall", "deep.py", ("-r", "500hz",),
             "stacks deeper than 256 frames (the writer keeps the innermost 256)"),
    Profiled("exceptions_gc_gil_native", "exceptions_gc.py",
             ("-r", "1khz", "--mode", "gil", "--native"),
             "gil mode, `<native>` and `<GC>` frames"),
    Profiled("exceptions_mode_zstd", "exceptions_gc.py",
             ("-r", "1khz", "--mode", "exception", "--compression", "zstd"),
             "exception mode, explicit `--compression zstd`"),
    Profiled("cpu_bound_nogc_native_raw", "cpu_bound.py",
             ("-r", "1khz", "--mode", "cpu", "--no-gc", "--native", "--compression", "none"),
             "cpu mode (an idle pause is not sampled), `--no-gc`, `--native`, uncompressed"),
)


# ---------------------------------------------------------------------------------------------
# Synthetic files. A sample list uses the JSON-able description of ``tests/helpers/reference.py``:
# [[timestamp_us, [[interpreter_id, [[thread_id, status, [[filename, location, funcname,
# opcode], ...]], ...]], ...]], ...] with frames innermost first and location a 4-list or None.

APP_FILE = "/app/synthetic.py"
LIB_FILE = "/usr/lib/python3.15/threading.py"
START_US = 1_000_000
U64_MAX = 2**64 - 1


def app_frame(funcname, line, opcode=None, filename=APP_FILE):
    return [filename, [line, line, 4, 4 + len(funcname) + 2], funcname, opcode]


BASE = [app_frame("work", 20), app_frame("main", 40), [LIB_FILE, [1010, 1012, 8, 20], "run", 0]]
ODD_LOCATIONS = (
    None,                          # synthetic frame: reads back as None
    [5, -1, 3, 9],                 # end_lineno unknown: reads back as (5, 5, 3, 9)
    [5, 6, -1, 9],                 # column unknown: reads back as (5, 6, -1, -1)
    [5, 6, 3, -1],                 # end_column unknown: reads back as (5, 6, 3, 3)
    [0, 0, -1, -1],                # the profiler's DEFAULT_LOCATION
    [10, 10, 50, 40],              # negative end-column delta
    [2**31 - 1, 2**31 - 1, 0, 1],  # largest int32 line
    [1_000_000, 1_000_250, 7, 3],  # big line, big end-line delta, negative column delta
)
ODD_OPCODES = (0, 254, 255, None)  # 255 cannot be stored: it reads back as None
ODD_FRAMES = [[APP_FILE, location, f"odd_{i}", ODD_OPCODES[i % 4]]
              for i, location in enumerate(ODD_LOCATIONS)]
UNICODE_FRAMES = [["/app/ünïcode façade.py", [3, 3, 0, 5], "naïve_λ", 1],
                  [APP_FILE, None, "", None]]


def recursion(depth, line):
    return [app_frame("recurse", line) for _ in range(depth)] + BASE


def thread(thread_id, status, frames):
    return [thread_id, status, frames]


def edge_case_samples():
    """Several interpreters, shared thread ids, empty and 256+ stacks, odd values everywhere."""
    deep_256, deep_300 = recursion(253, 7), recursion(297, 8)
    return [
        # The file's very first thread-sample has an empty stack (written as REPEAT).
        [START_US + 100, [
            [0, [thread(U64_MAX, 0x20, []), thread(1, 0x21, BASE)]],
            [1, [thread(1, 0x01, BASE[1:])]],
            [7, [thread(U64_MAX - 1, 0xFF, deep_256)]],
        ]],
        [START_US + 200, [
            [0, [thread(U64_MAX, 0x20, []), thread(1, 0x23, BASE)]],
            [1, [thread(1, 0x01, [app_frame("pushed", 30), *BASE[1:]])]],
            [7, [thread(U64_MAX - 1, 0xFF, deep_300)]],  # truncated to its innermost 256
        ]],
        [START_US + 300, [
            [0, [thread(U64_MAX, 0x22, BASE[2:]), thread(1, 0x21, ODD_FRAMES + BASE)]],
            [1, [thread(1, 0x00, [])]],  # non-empty to empty: FULL with depth 0
            [7, [thread(U64_MAX - 1, 0x10, deep_300)]],
        ]],
        # The clock goes backwards; status 256 is stored as its low byte, 0.
        [START_US - 5_000, [[0, [thread(1, 256, ODD_FRAMES + BASE),
                                 thread(U64_MAX, 0x2C, [app_frame("popped", 50), *BASE[1:]])]]]],
        # The same thread twice in one call: the second copy has delta 0.
        [START_US + 400, [[0, [thread(5, 0x02, UNICODE_FRAMES + BASE),
                               thread(5, 0x02, UNICODE_FRAMES + BASE)]]]],
        # Statuses changing inside one REPEAT run: replay delivers batches of equal status.
        *[[START_US + 500 + i, [[0, [thread(1, status, ODD_FRAMES + BASE)]]]]
          for i, status in enumerate((0, 0, 1, 1, 0, 0xFF, 0xFF))],
        # A delta that needs a 6-byte varint.
        [START_US + 2**40, [[0, [thread(1, 0x21, BASE), thread(5, 0x20, BASE)]]]],
    ]


def long_repeat_samples():
    """One stack sampled 8,200 times: longer than the writer's 8,187-entry REPEAT limit."""
    stack = [app_frame("spin", 11), app_frame("main", 40)]
    one_byte = [[START_US + i, [[0, [thread(42, 0x23, stack)]]]] for i in range(1, 8201)]
    two_byte = [[START_US + 8200 + 200 * i, [[0, [thread(42, 0x21 + i % 2 * 2, stack)]]]]
                for i in range(1, 41)]
    return one_byte + two_byte


@dataclass(frozen=True)
class Synthetic:
    """A golden file written directly with ``_remote_debugging.BinaryWriter``."""

    name: str
    samples: str  # name of the sample-list function above
    writer: dict
    stats: tuple | None
    covers: str


SYNTHETIC = (
    Synthetic("synthetic_edges_raw", "edge_case_samples",
              {"compression": 0, "mode": 1, "capture_features": 31},
              (0.25, 1000.0, 1.5, -2.5),
              "interpreters 0/1/7, tid 1 in two interpreters, tids near 2**64, empty stacks "
              "(also the first sample), 256 and 300 frames, odd locations, opcodes 0/254/255/None, "
              "statuses 0x20/0xff/256, clock going backwards, duplicate thread in one call, "
              "uncompressed, mode cpu, all features, stats with error rate and (negative) missed"),
    Synthetic("synthetic_edges_zstd", "edge_case_samples",
              {"compression": 1, "mode": 4, "capture_features": 0},
              (0.25, 1000.0, None, None),
              "the same samples zstd-compressed, mode exception, features known but none, "
              "stats without the optional values"),
    Synthetic("synthetic_long_repeat_zstd", "long_repeat_samples", {"compression": 1},
              (8.2, 1000.0, 0.0, None),
              "8,240 samples of one stack: REPEAT records split by the writer at 8,187 entries, "
              "1- and 2-byte deltas, status changes inside a run; mode and features unknown; "
              "stats with error rate only"),
    Synthetic("synthetic_empty_zstd", "", {"compression": 1}, None,
              "zero samples (the 9-byte empty zstd frame), no stats"),
)
SYNTHETIC_INTERVAL_US = 1000


# ---------------------------------------------------------------------------------------------
# Derived files: a CPython-written file with some bytes patched in place (same length, so every
# offset stays valid), for what CPython's writer cannot be asked to write directly.


@dataclass(frozen=True)
class Derived:
    """A golden file made from another one by ``patch(data) -> data``."""

    name: str
    source: str
    patch: str
    covers: str


def string_table(data: bytes) -> list[tuple[int, int]]:
    """(start, end) of each string-table entry's bytes (little-endian file; stdlib only, so
    that fixtures do not depend on the code they test)."""
    import struct

    offset = struct.unpack_from("<Q", data, 40)[0]
    count = struct.unpack_from("<I", data, len(data) - 32)[0]
    spans, p = [], offset
    for _ in range(count):
        length = shift = 0
        while True:
            byte = data[p]
            p += 1
            length |= (byte & 0x7F) << shift
            shift += 7
            if byte < 0x80:
                break
        spans.append((p, p + length))
        p += length
    return spans


def invalid_utf8_strings(data: bytes) -> bytes:
    """Entries that are not UTF-8, as real profiles hold when the profiler read a string
    while it changed: the first two entries of one length (>= 3) become ``ff`` + tail and
    ``fe`` + tail (different bytes that CPython's reader shows as the same text), and the
    next entry ends in a truncated two-byte sequence (``c3``)."""
    out = bytearray(data)
    spans = string_table(data)
    by_length: dict[int, list[tuple[int, int]]] = {}
    for start, end in spans:
        if end - start >= 3:
            by_length.setdefault(end - start, []).append((start, end))
    (a, a_end), (b, b_end) = next(pair for pair in by_length.values() if len(pair) >= 2)[:2]
    tail = bytes(out[a + 1 : a_end])
    out[a : a_end] = b"\xff" + tail
    out[b : b_end] = b"\xfe" + tail
    c, c_end = next((s, e) for s, e in spans if e - s >= 3 and s not in (a, b))
    out[c_end - 1] = 0xC3
    return bytes(out)


DERIVED = (
    Derived("invalid_utf8_strings", "synthetic_edges_raw", "invalid_utf8_strings",
            "`synthetic_edges_raw` with three string-table entries patched to invalid UTF-8: "
            "two whose different bytes show as the same text, one ending in a truncated "
            "sequence (what real profiles hold when the profiler read a changing string)"),
)


def derive(source_dir: Path, out_dir: Path) -> dict[str, str]:
    """Write every DERIVED file into *out_dir* from its source in *source_dir*."""
    commands = {}
    for spec in DERIVED:
        data = (source_dir / f"{spec.source}.bin").read_bytes()
        (out_dir / f"{spec.name}.bin").write_bytes(globals()[spec.patch](data))
        commands[spec.name] = f"`{spec.source}.bin` through `{spec.patch}()`"
    return commands


def to_struct_sequences(interpreters):
    """The description of one write_sample call as ``_remote_debugging`` struct sequences."""
    from _remote_debugging import FrameInfo, InterpreterInfo, LocationInfo, ThreadInfo

    def frame_info(filename, location, funcname, opcode):
        location = None if location is None else LocationInfo(tuple(location))
        return FrameInfo((filename, location, funcname, opcode))

    return [InterpreterInfo((interpreter_id, [
        ThreadInfo((thread_id, status, [frame_info(*frame) for frame in frames]))
        for thread_id, status, frames in threads
    ])) for interpreter_id, threads in interpreters]


def write_synthetic(out_dir: Path) -> None:
    """Under CPython 3.15: write every SYNTHETIC file into *out_dir*."""
    from _remote_debugging import BinaryWriter

    for spec in SYNTHETIC:
        samples = globals()[spec.samples]() if spec.samples else []
        path = str(out_dir / f"{spec.name}.bin")
        writer = BinaryWriter(path, SYNTHETIC_INTERVAL_US, START_US, **spec.writer)
        for timestamp_us, interpreters in samples:
            writer.write_sample(to_struct_sequences(interpreters), timestamp_us)
        if spec.stats is not None:
            writer.set_stats(*spec.stats)
        writer.finalize()


# ---------------------------------------------------------------------------------------------
# The chroot


def default_chroot_dir() -> Path:
    cache = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(cache) / "tachyon-format" / "fixture-chroot"


def run(cmd, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, check=True, **kwargs)


def download_debs(into: Path) -> list[Path]:
    """apt-get download PACKAGES from sid with a private apt state, leaving the system alone."""
    into.chmod(0o755)  # apt drops to the _apt user for downloads when it can read the target
    for sub in ("lists/partial", "cache/archives/partial"):
        (into / sub).mkdir(parents=True)
    (into / "status").touch()
    (into / "sources.list").write_text(SID_SOURCE + "\n")
    apt = ["-o", f"Dir::Etc::sourcelist={into}/sources.list",
           "-o", "Dir::Etc::sourceparts=/nonexistent", "-o", f"Dir::State::Lists={into}/lists",
           "-o", f"Dir::Cache={into}/cache", "-o", f"Dir::State::status={into}/status"]
    run(["apt-get", *apt, "update", "-qq"])
    run(["apt-get", *apt, "download", *PACKAGES], cwd=into)
    return sorted(into.glob("*.deb"))


def deb_version(deb: Path) -> tuple[str, str]:
    field = run(["dpkg-deb", "-f", str(deb), "Package", "Version"], capture_output=True, text=True)
    values = dict(line.split(": ", 1) for line in field.stdout.splitlines())
    return values["Package"], values["Version"]


def build_chroot(root: Path) -> None:
    """Unpack the .deb files into *root*; the standard loader paths are right inside it."""
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    with tempfile.TemporaryDirectory() as work:
        debs = download_debs(Path(work))
        for deb in debs:
            run(["dpkg-deb", "-x", str(deb), str(root)])
        versions = dict(deb_version(deb) for deb in debs)
    for link, target in (("lib64", "usr/lib64"), ("lib", "usr/lib"), ("bin", "usr/bin")):
        if not (root / link).exists():
            (root / link).symlink_to(target)
    for empty in ("proc", "tmp", "app"):
        (root / empty).mkdir(exist_ok=True)
    (root / "packages.json").write_text(json.dumps(versions, indent=1, sort_keys=True))


def chroot_ready(root: Path) -> bool:
    return (root / "packages.json").exists() and (root / CHROOT_PYTHON.lstrip("/")).exists()


class Chroot:
    """The sid root with /proc bind-mounted (the profiler reads the target's memory maps)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.app = root / CHROOT_APP.lstrip("/")

    def __enter__(self) -> Chroot:
        proc = self.root / "proc"
        if not os.path.ismount(proc):
            run(["mount", "--bind", "/proc", str(proc)])
        return self

    def __exit__(self, *exc_info) -> None:
        run(["umount", str(self.root / "proc")])

    def python(self, *args: str, capture: bool = False) -> subprocess.CompletedProcess:
        # Resolved on the host: the child's PATH is the chroot's, which lacks /usr/sbin.
        cmd = [shutil.which("chroot") or "/usr/sbin/chroot", str(self.root), CHROOT_PYTHON, *args]
        return run(cmd, env=CHROOT_ENV, capture_output=capture, text=capture)

    def host_path(self, chroot_path: str) -> Path:
        return self.root / chroot_path.lstrip("/")


# ---------------------------------------------------------------------------------------------
# Generating the files


def profile_workload(chroot: Chroot, spec: Profiled, out: str) -> str:
    """Profile one workload; returns the command as recorded in the README."""
    shutil.copy(WORKLOADS_DIR / spec.workload, chroot.app / spec.workload)
    args = ["-m", "profiling.sampling", "run", *spec.options, "--binary",
            "-o", f"{out}/{spec.name}.bin", f"{CHROOT_APP}/{spec.workload}"]
    chroot.python(*args)
    shown = ["python3.15", *args[:-3], "-o", f"{spec.name}.bin", f"{CHROOT_APP}/{spec.workload}"]
    return "`" + " ".join(shown) + "`"


def companions(chroot: Chroot, name: str, out: str) -> None:
    """The canonical decode (gzipped reproducibly) and the replay outputs of NAME.bin."""
    binary = f"{out}/{name}.bin"
    decoded = chroot.python(f"{CHROOT_APP}/cpython_decode.py", binary, capture=True).stdout
    with open(chroot.host_path(f"{out}/{name}.ref.jsonl.gz"), "wb") as raw, \
            gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as packed:
        packed.write(decoded.encode("utf-8"))
    for flag, suffix in (("--collapsed", ".collapsed.txt"), ("--pstats", ".pstats")):
        chroot.python("-m", "profiling.sampling", "replay", flag,
                      "-o", f"{out}/{name}{suffix}", binary)


def interpreter_versions(chroot: Chroot) -> dict:
    code = ("import sys, json, compression.zstd as z, _remote_debugging as r;"
            "print(json.dumps({'python': sys.version, 'zstd': z.zstd_version,"
            " 'zstd_available': r.zstd_available()}))")
    return json.loads(chroot.python("-c", code, capture=True).stdout)


def generate(chroot: Chroot) -> dict[str, str]:
    """Write every golden file into the chroot's /app/out; returns the command behind each."""
    out = f"{CHROOT_APP}/out"
    out_dir = chroot.host_path(out)
    shutil.rmtree(out_dir, ignore_errors=True)
    out_dir.mkdir(parents=True)
    shutil.copy(REPO / "tools" / "cpython_decode.py", chroot.app / "cpython_decode.py")
    shutil.copy(Path(__file__), chroot.app / "make_fixtures.py")
    commands = {}
    for spec in PROFILED:
        print(f"profiling {spec.name}", file=sys.stderr)
        commands[spec.name] = profile_workload(chroot, spec, out)
    chroot.python(f"{CHROOT_APP}/make_fixtures.py", "--write-synthetic", out)
    for spec in SYNTHETIC:
        commands[spec.name] = synthetic_command(spec)
    commands.update(derive(out_dir, out_dir))
    for name in commands:
        companions(chroot, name, out)
    return commands


def synthetic_command(spec: Synthetic) -> str:
    source = f"`{spec.samples}()`" if spec.samples else "no samples"
    stats = "" if spec.stats is None else f", then `set_stats{spec.stats}`"
    kwargs = ", ".join(f"{k}={v}" for k, v in spec.writer.items())
    return (f"`BinaryWriter(NAME.bin, {SYNTHETIC_INTERVAL_US}, {START_US}, {kwargs})` "
            f"fed {source}{stats}")


def install(out_dir: Path, names: list[str]) -> None:
    """Copy the new files into tests/data, removing golden files no longer generated."""
    DATA_DIR.mkdir(parents=True, exist_ok=True)
    wanted = {f"{name}{suffix}" for name in names for suffix in COMPANION_SUFFIXES}
    for old in DATA_DIR.iterdir():
        if old.name.endswith(COMPANION_SUFFIXES) and old.name not in wanted:
            print(f"removing stale {old.name}", file=sys.stderr)
            old.unlink()
    for name in sorted(wanted):
        shutil.copy(out_dir / name, DATA_DIR / name)


# ---------------------------------------------------------------------------------------------
# The README


def size_row(name: str) -> str:
    sizes = [(DATA_DIR / f"{name}{suffix}").stat().st_size for suffix in COMPANION_SUFFIXES]
    return " / ".join(f"{size:,}" for size in sizes)


def readme(commands: dict[str, str], versions: dict, packages: dict) -> str:
    covers = {spec.name: spec.covers for spec in (*PROFILED, *SYNTHETIC, *DERIVED)}
    total = sum(path.stat().st_size for path in DATA_DIR.iterdir()
                if path.name.endswith(COMPANION_SUFFIXES))
    lines = [
        "# Golden Tachyon files",
        "",
        "Real profiles and edge-case files written by CPython's own Tachyon writer, each with",
        "CPython's own decode of it. Regenerate them all (as root; needs network access to",
        "deb.debian.org) with:",
        "",
        "    python tools/make_fixtures.py",
        "",
        "Profiled runs are nondeterministic, so regenerating changes their bytes; the",
        "synthetic files (and every companion of an unchanged `.bin`) come out identical.",
        "",
        "## Provenance",
        "",
        f"* Generated on {datetime.date.today().isoformat()} by `tools/make_fixtures.py`.",
        f"* Interpreter: CPython `{versions['python']}`",
        f"  (Debian sid package python3.15 {packages.get('python3.15', '?')}), run in a chroot",
        "  of Debian sid packages so that recorded paths are neutral: workloads at `/app/`,",
        "  stdlib at `/usr/lib/python3.15/`.",
        f"* libzstd {versions['zstd']} (package libzstd1 {packages.get('libzstd1', '?')}).",
        "",
        "## Companions of every `NAME.bin`",
        "",
        "| file | content |",
        "|---|---|",
        "| `NAME.ref.jsonl.gz` | `python3.15 tools/cpython_decode.py NAME.bin`, gzipped with "
        "mtime 0: line 1 is `BinaryReader(NAME.bin).get_info()` as JSON with sorted keys; every "
        "further line is one sample in `replay()` order, `[interpreter_id, thread_id, "
        "timestamp_us, status, [[filename, funcname, lineno, end_lineno, column, end_column, "
        "opcode], ...]]`, frames innermost first, null for a missing location or opcode |",
        "| `NAME.collapsed.txt` | `python3.15 -m profiling.sampling replay --collapsed "
        "-o NAME.collapsed.txt NAME.bin` |",
        "| `NAME.pstats` | `python3.15 -m profiling.sampling replay --pstats -o NAME.pstats "
        "NAME.bin` |",
        "",
        "## Files",
        "",
        "Sizes in bytes: `.bin` / `.ref.jsonl.gz` / `.collapsed.txt` / `.pstats`.",
        "",
        "| NAME | made by | covers | sizes |",
        "|---|---|---|---|",
    ]
    for name, made_by in commands.items():
        lines.append(f"| `{name}` | {made_by} | {covers[name]} | {size_row(name)} |")
    lines += [
        "",
        f"Total: {total:,} bytes. Workloads: `tools/workloads/`; synthetic sample lists: the "
        "functions named above in `tools/make_fixtures.py`.",
        "",
    ]
    return "\n".join(lines)


def make_derived() -> None:
    """Only the DERIVED files, from the committed sources, with companions made by the
    reference interpreter directly (no chroot: a derived file records no path of this
    machine); their README rows are replaced in place."""
    reference = os.environ.get("TACHYON_REFERENCE_PYTHON") or subprocess.run(
        ["bash", str(REPO / "tools" / "install-reference-cpython.sh")], check=True,
        capture_output=True, text=True).stdout.strip().splitlines()[-1]
    commands = derive(DATA_DIR, DATA_DIR)
    for name in commands:
        binary = DATA_DIR / f"{name}.bin"
        decoded = run([reference, str(REPO / "tools" / "cpython_decode.py"), str(binary)],
                      capture_output=True, text=True).stdout
        with open(DATA_DIR / f"{name}.ref.jsonl.gz", "wb") as raw, \
                gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as packed:
            packed.write(decoded.encode("utf-8"))
        for flag, suffix in (("--collapsed", ".collapsed.txt"), ("--pstats", ".pstats")):
            run([reference, "-m", "profiling.sampling", "replay", flag,
                 "-o", str(DATA_DIR / f"{name}{suffix}"), str(binary)])
    covers = {spec.name: spec.covers for spec in DERIVED}
    lines = (DATA_DIR / "README.md").read_text().split("\n")
    for name, made_by in commands.items():
        row = f"| `{name}` | {made_by} | {covers[name]} | {size_row(name)} |"
        at = next((i for i, line in enumerate(lines) if line.startswith(f"| `{name}` |")), None)
        if at is None:
            at = max(i for i, line in enumerate(lines) if line.startswith("| `")) + 1
            lines.insert(at, row)
        else:
            lines[at] = row
    total = sum(path.stat().st_size for path in DATA_DIR.iterdir()
                if path.name.endswith(COMPANION_SUFFIXES))
    lines = [re.sub(r"^Total: [\d,]+ bytes", f"Total: {total:,} bytes", line) for line in lines]
    (DATA_DIR / "README.md").write_text("\n".join(lines))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chroot-dir", type=Path,
                        help="where the sid root is built and cached "
                             "(default: ~/.cache/tachyon-format/fixture-chroot)")
    parser.add_argument("--refresh-chroot", action="store_true",
                        help="download the packages again even if the chroot exists")
    parser.add_argument("--derived", action="store_true",
                        help="only remake the files derived from committed ones (no chroot)")
    parser.add_argument("--write-synthetic", metavar="DIR", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.derived:
        make_derived()
        return 0
    if args.write_synthetic:
        write_synthetic(args.write_synthetic)  # we are the 3.15 inside the chroot
        return 0
    root = args.chroot_dir or default_chroot_dir()
    if args.refresh_chroot or not chroot_ready(root):
        build_chroot(root)
    packages = json.loads((root / "packages.json").read_text())
    with Chroot(root) as chroot:
        versions = interpreter_versions(chroot)
        commands = generate(chroot)
        install(chroot.host_path(f"{CHROOT_APP}/out"), list(commands))
    (DATA_DIR / "README.md").write_text(readme(commands, versions, packages))
    return 0


if __name__ == "__main__":
    sys.exit(main())
