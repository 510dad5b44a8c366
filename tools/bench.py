"""Benchmark tachyon_format against CPython 3.15's own Tachyon reader and writer.

    python tools/bench.py [--quick] [--inputs NAMES] [--data-dir bench-data]
                          [--output bench-results/results.md]

Generates (and caches) synthetic and real Tachyon profiles with the reference CPython 3.15,
then measures, each in a fresh subprocess: CPython's ``BinaryReader.replay`` into a no-op
collector, ``profiling.sampling replay --collapsed``, our ``read()`` (time, peak RSS,
tracemalloc peak, result size), our ``iter_batches()`` and both writers. See
``docs/benchmark.md`` for what exactly is timed. The reference interpreter comes from
``$TACHYON_REFERENCE_PYTHON``, else from ``tools/install-reference-cpython.sh``.
"""

from __future__ import annotations

import argparse
import fnmatch
import hashlib
import json
import os
import platform
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

TOOLS = Path(__file__).resolve().parent
BENCH = TOOLS / "bench"
WORKER = BENCH / "worker.py"
SYNTH = BENCH / "synth.py"
MARKER = "BENCH-RESULT "

HEADER = struct.Struct("4sIBBBBQQQIQQII")  # byte order prefixed at use
HEADER_SIZE = 64
MAGIC_LE, MAGIC_BE = b"HCAT", b"TACH"

# name -> (kind, thread-samples, seed); deterministic
SYNTHETIC = {
    "mixed-1m": ("mixed", 1_000_000, 1),
    "mixed-5m": ("mixed", 5_000_000, 5),
    "norepeat-5m": ("norepeat", 5_000_000, 7),
    "mixed-20m": ("mixed", 20_000_000, 20),
}
# name -> (workload script under tools/bench/, seconds, rate, extra profiler flags), all
# threads. The 20-second recordings are the default; the 4-second ones (a few hundred
# thousand samples, read in tens of milliseconds, where fixed costs weigh most) are run on
# request and by --quick. real-server is the long many-thread program users have (over two
# minutes, 24 threads); real-recursion the deep stacks (up to some 230 frames);
# real-native-opcodes the <native> frames and opcodes; real-stdlib-raw an uncompressed file.
REAL = {
    "real-threads": ("workload_threads.py", 20, "20khz", ()),
    "real-deep": ("workload_deep.py", 20, "20khz", ()),
    "real-server": ("workload_server.py", 130, "2khz", ()),
    "real-recursion": ("workload_recursion.py", 30, "10khz", ()),
    "real-native-opcodes": ("workload_threads.py", 30, "10khz", ("--native", "--opcodes")),
    "real-stdlib-raw": ("workload_stdlib.py", 30, "10khz", ("--compression", "none")),
    "real-threads-4s": ("workload_threads.py", 4, "20khz", ()),
    "real-deep-4s": ("workload_deep.py", 4, "20khz", ()),
}
SHORT_REAL = ("real-threads-4s", "real-deep-4s")
ALL_INPUTS = (*SYNTHETIC, *REAL)
DEFAULT_INPUTS = tuple(name for name in ALL_INPUTS if name not in SHORT_REAL)
BATCH_ONLY = ("mixed-20m",)  # used only by the iter_batches measurement
QUICK_INPUTS = ("mixed-1m", *SHORT_REAL)
WRITER_INPUTS = ("mixed-1m", "mixed-5m", "norepeat-5m")
PPROF_INPUTS = ("mixed-1m", "mixed-5m", "real-threads", "real-deep", "real-threads-4s",
                "real-deep-4s")  # tools/bench/pprof_bench.py
CONVERT_INPUTS = ("mixed-1m", "mixed-5m", "norepeat-5m", "real-threads", "real-deep",
                  "real-server", "real-recursion", "real-native-opcodes", "real-stdlib-raw",
                  "real-threads-4s", "real-deep-4s")  # tools/bench/convert_bench.py

_T0 = time.perf_counter()


def log(message: str) -> None:
    print(f"[bench {time.perf_counter() - _T0:7.1f}s] {message}", file=sys.stderr, flush=True)


# -- file facts (pure helpers, tested) ---------------------------------------------------------


def parse_header(data: bytes) -> dict:
    """The 64-byte Tachyon header as a dict; byte order from the magic."""
    if len(data) < HEADER_SIZE:
        raise ValueError(f"need {HEADER_SIZE} header bytes, got {len(data)}")
    order = {MAGIC_LE: "<", MAGIC_BE: ">"}.get(bytes(data[:4]))
    if order is None:
        raise ValueError(f"not a Tachyon file (magic {bytes(data[:4])!r})")
    fields = struct.unpack_from(order + HEADER.format, data)
    names = ("magic", "version", "py_major", "py_minor", "py_micro", "reserved",
             "start_time_us", "sample_interval_us", "sample_count", "thread_count",
             "string_table_offset", "frame_table_offset", "compression", "profiling_config")
    header = dict(zip(names, fields, strict=True))
    header["byte_order"] = order
    return header


def _zstd_module():
    try:
        from compression import zstd  # Python 3.14+
    except ImportError:
        from backports import zstd
    return zstd


def _zstd_decompressobj():
    return _zstd_module().ZstdDecompressor()


def region_size(path: str | os.PathLike, chunk_size: int = 1 << 20) -> int:
    """Decompressed size of the sample region ``[64, string_table_offset)``, streamed.

    zstd regions carry no content size, so the region is decompressed chunk by
    chunk with a streaming decompressor and only the output lengths are kept.
    """
    with open(path, "rb") as f:
        header = parse_header(f.read(HEADER_SIZE))
        remaining = header["string_table_offset"] - HEADER_SIZE
        if header["compression"] != 1:
            return remaining
        decompressor = _zstd_decompressobj()
        total = 0
        while remaining > 0:
            chunk = f.read(min(chunk_size, remaining))
            if not chunk:
                raise ValueError("file ends inside the sample region")
            remaining -= len(chunk)
            # compression.zstd stops at the end of one frame; the writer emits exactly one
            total += len(decompressor.decompress(chunk))
        return total


# -- formatting (pure helpers, tested) ---------------------------------------------------------


def fmt_num(value: float | None, digits: int = 2) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def fmt_mb(nbytes: float | None, digits: int = 1) -> str:
    return "n/a" if nbytes is None else f"{nbytes / 1e6:.{digits}f}"


def fmt_count(n: int | None) -> str:
    """1234 -> '1.2k', 5000000 -> '5.00M'."""
    if n is None:
        return "n/a"
    if n >= 1_000_000:
        return f"{n / 1e6:.2f}M"
    if n >= 10_000:
        return f"{n / 1e3:.0f}k"
    if n >= 1_000:
        return f"{n / 1e3:.1f}k"
    return str(n)


def ratio(theirs: float | None, ours: float | None) -> float | None:
    """CPython time / our time (> 1 means we are faster); None when either is missing."""
    if theirs is None or ours is None or ours <= 0:
        return None
    return theirs / ours


def best(runs: Iterable[dict], key: str = "wall_s") -> float | None:
    """Smallest ``key`` among successful runs (best of N)."""
    values = [r[key] for r in runs if r.get("status") == "ok" and r.get(key) is not None]
    return min(values) if values else None


def paired_median_ratio(theirs: Sequence[dict], ours: Sequence[dict]) -> float | None:
    """Median of their time / ours over runs taken in turn (see _alternate): less
    sensitive than best / best to a slow spell that hit one side only."""
    pairs = [a["wall_s"] / b["wall_s"] for a, b in zip(theirs, ours, strict=False)
             if a.get("status") == b.get("status") == "ok" and b.get("wall_s")]
    return statistics.median(pairs) if pairs else None


def worst(runs: Iterable[dict], key: str) -> float | None:
    """Largest ``key`` among successful runs (peak memory is reported conservatively)."""
    values = [r[key] for r in runs if r.get("status") == "ok" and r.get(key) is not None]
    return max(values) if values else None


def per_sample_above(peak: float | None, region: int | None, samples: int | None) -> float | None:
    """Bytes per thread-sample above the decompressed region size."""
    if peak is None or region is None or not samples:
        return None
    return (peak - region) / samples


def status_of(runs: Sequence[dict]) -> str | None:
    """'n/a' or 'error' when no run succeeded, else None."""
    if any(r.get("status") == "ok" for r in runs):
        return None
    return "error" if any(r.get("status") == "error" for r in runs) else "n/a"


def format_table(headers: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """A GitHub Markdown table; the first column left-aligned, the others right-aligned."""
    rows = [[str(cell) for cell in row] for row in rows]
    for row in rows:
        if len(row) != len(headers):
            raise ValueError(f"row has {len(row)} cells, expected {len(headers)}")
    widths = [max([len(h), *(len(r[i]) for r in rows)]) for i, h in enumerate(headers)]
    lines = ["| " + " | ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)) + " |"]
    lines.append("|" + "|".join(
        ":" + "-" * (w + 1) if i == 0 else "-" * (w + 1) + ":" for i, w in enumerate(widths)
    ) + "|")
    for row in rows:
        cells = [c.ljust(w) if i == 0 else c.rjust(w)
                 for i, (c, w) in enumerate(zip(row, widths, strict=True))]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def format_records(stats: dict | None) -> str:
    """CPython reader stats as 'REPEAT / FULL / SUFFIX / POP_PUSH' record counts."""
    if not stats:
        return "n/a"
    keys = ("repeat_records", "full_records", "suffix_records", "pop_push_records")
    return " / ".join(fmt_count(stats.get(k)) for k in keys)


def select_inputs(patterns: str | None, quick: bool) -> list[str]:
    """Input names from a comma-separated list of names or globs (``real-*``)."""
    if not patterns:
        return list(QUICK_INPUTS if quick else DEFAULT_INPUTS)
    chosen = []
    for pattern in (p.strip() for p in patterns.split(",") if p.strip()):
        matches = fnmatch.filter(ALL_INPUTS, pattern)
        if not matches:
            raise SystemExit(f"unknown input {pattern!r}; known: {', '.join(ALL_INPUTS)}")
        chosen += [m for m in matches if m not in chosen]
    return chosen


# -- subprocesses ------------------------------------------------------------------------------


def reference_python(explicit: str | None) -> str:
    """The CPython 3.15 interpreter: --reference-python, $TACHYON_REFERENCE_PYTHON or the
    install script's answer (it is idempotent and prints the path last)."""
    path = explicit or os.environ.get("TACHYON_REFERENCE_PYTHON")
    if not path:
        script = TOOLS / "install-reference-cpython.sh"
        out = subprocess.run(["bash", str(script)], check=True, capture_output=True, text=True)
        path = out.stdout.strip().splitlines()[-1]
    return path


def run_worker(python: str, args: Sequence[str], timeout: float | None = None) -> dict:
    """Run tools/bench/worker.py in a fresh interpreter and return its result dict."""
    cmd = [python, str(WORKER), *args]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"status": "error", "error": f"timeout after {timeout} s"}
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith(MARKER):
            return json.loads(line[len(MARKER):])
    tail = (proc.stderr or proc.stdout).strip().splitlines()[-5:]
    return {"status": "error", "error": f"exit {proc.returncode}: " + " | ".join(tail)}


def memory_total_bytes() -> int | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def time_command(cmd: Sequence[str], max_bytes: int | None = None) -> dict:
    """Wall time of a whole command (interpreter start-up included).

    ``max_bytes`` caps its address space (RLIMIT_AS), so that a command that would exhaust
    the machine fails with MemoryError instead of waking the OOM killer (which may pick
    another process)."""

    def limit() -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (max_bytes, max_bytes))

    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True,
                          preexec_fn=limit if max_bytes else None)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        tail = proc.stderr.strip().splitlines()[-3:]
        return {"status": "error", "error": f"exit {proc.returncode}: " + " | ".join(tail)}
    return {"status": "ok", "wall_s": wall}


def _repeat(n: int, what: str, fn) -> list[dict]:
    """Run ``fn`` up to n times; stop early if it is n/a or failing."""
    runs = []
    for i in range(n):
        result = fn()
        runs.append(result)
        _log_run(what, i, n, result)
        if result.get("status") != "ok":
            break
    return runs


def _log_run(what: str, i: int, n: int, result: dict) -> None:
    shown = fmt_num(result.get("wall_s"), 3) if result.get("status") == "ok" else (
        f"{result.get('status')}: {result.get('error', '')}"[:200])
    log(f"  {what} [{i + 1}/{n}]: {shown}")


# -- inputs ------------------------------------------------------------------------------------


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def recipe(name: str) -> dict:
    """What determines an input; a cached file is reused only if its recipe matches."""
    if name in SYNTHETIC:
        kind, samples, seed = SYNTHETIC[name]
        return {"kind": kind, "samples": samples, "seed": seed, "generator": _sha(SYNTH)}
    script, seconds, rate, flags = REAL[name]
    recipe = {"workload": script, "seconds": seconds, "rate": rate,
              "source": _sha(BENCH / script)}
    if flags:
        recipe["flags"] = list(flags)
    return recipe


def _meta_path(data_dir: Path, name: str) -> Path:
    return data_dir / f"{name}.meta.json"


def cached(data_dir: Path, name: str) -> dict | None:
    meta_path = _meta_path(data_dir, name)
    if not (data_dir / f"{name}.bin").exists() or not meta_path.exists():
        return None
    meta = json.loads(meta_path.read_text())
    return meta if meta.get("recipe") == recipe(name) else None


def describe(data_dir: Path, name: str) -> dict:
    """File facts for the table, stored next to the input."""
    path = data_dir / f"{name}.bin"
    with open(path, "rb") as f:
        header = parse_header(f.read(HEADER_SIZE))
    meta = {"recipe": recipe(name), "file_bytes": path.stat().st_size,
            "region_bytes": region_size(path), "sample_count": header["sample_count"],
            "thread_count": header["thread_count"], "compression": header["compression"]}
    _meta_path(data_dir, name).write_text(json.dumps(meta, indent=1) + "\n")
    return meta


def _record_real(ref: str, data_dir: Path, name: str, attempts: int = 3) -> None:
    script, seconds, rate, flags = REAL[name]
    out = (data_dir / f"{name}.bin").resolve()
    for attempt in range(1, attempts + 1):
        log(f"recording {name}: {script} for {seconds} s at {rate} {' '.join(flags)}"
            f" (attempt {attempt})")
        cmd = [ref, "-m", "profiling.sampling", "run", "-a", "-r", rate, *flags, "--binary",
               "-o", str(out), str(BENCH / script), str(seconds)]
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=data_dir)
        check = [ref, "-c", "import sys, _remote_debugging as r; "
                 "print(r.BinaryReader(sys.argv[1]).get_info()['sample_count'])", str(out)]
        ok = proc.returncode == 0 and subprocess.run(check, capture_output=True).returncode == 0
        if ok:
            return
        # the 3.15.2 profiler can die mid-run (torn remote string reads; see the design notes)
        log(f"  {name} failed: {' | '.join(proc.stderr.strip().splitlines()[-2:])}")
    raise SystemExit(f"could not record {name} in {attempts} attempts")


def prepare_inputs(ref: str, data_dir: Path, names: Sequence[str], force: bool) -> dict:
    data_dir.mkdir(parents=True, exist_ok=True)
    ignore = data_dir / ".gitignore"
    if not ignore.exists():
        ignore.write_text("# generated benchmark inputs; never committed\n*\n")
    metas = {n: None if force else cached(data_dir, n) for n in names}
    for name in names:
        if metas[name] is None and name in REAL:  # serially: the profiler needs the CPUs
            _record_real(ref, data_dir, name)
    todo = [n for n in names if metas[n] is None and n in SYNTHETIC]
    running: list[tuple[str, subprocess.Popen]] = []
    jobs = max(1, min(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                      else (os.cpu_count() or 1), 4))
    while todo or running:
        while todo and len(running) < jobs:
            name = todo.pop(0)
            kind, samples, seed = SYNTHETIC[name]
            log(f"generating {name}: {kind}, {samples:,} thread-samples, seed {seed}")
            out = data_dir / f"{name}.bin"
            cmd = [ref, str(SYNTH), "--kind", kind, "--samples", str(samples),
                   "--seed", str(seed), "--out", str(out)]
            running.append((name, subprocess.Popen(cmd)))
        for name, proc in list(running):
            if proc.poll() is not None:
                running.remove((name, proc))
                if proc.returncode != 0:
                    raise SystemExit(f"generating {name} failed (exit {proc.returncode})")
        time.sleep(0.2)
    for name in names:
        if metas[name] is None:
            metas[name] = describe(data_dir, name)
            log(f"{name}: {metas[name]['sample_count']:,} thread-samples, "
                f"{fmt_mb(metas[name]['file_bytes'])} MB file, "
                f"{fmt_mb(metas[name]['region_bytes'])} MB region")
    return metas


def warm(path: Path) -> None:
    """Read the file once so every measurement starts from the page cache."""
    with open(path, "rb") as f:
        while f.read(1 << 24):
            pass


# -- measurements ------------------------------------------------------------------------------


def _alternate(n: int, first: tuple[str, Callable[[], dict]],
               second: tuple[str, Callable[[], dict]]) -> tuple[list[dict], list[dict]]:
    """:func:`_repeat` of two measurements taken in turn, so that a slow spell of a shared
    machine weighs on both alike."""
    runs: tuple[list[dict], list[dict]] = ([], [])
    for i in range(n):
        for (what, fn), out in zip((first, second), runs, strict=True):
            if out and out[-1].get("status") != "ok":
                continue
            out.append(fn())
            _log_run(what, i, n, out[-1])
    return runs


def measure_reads(ref: str, dev: str, path: Path, args) -> dict:
    p = str(path)
    replay, read = _alternate(
        args.repeat, ("CPython replay no-op", lambda: run_worker(ref, ["cpython-replay", p])),
        ("ours read()", lambda: run_worker(dev, ["ours-read", p])))
    out = {"cpython_replay": replay}
    if args.skip_collapsed:
        out["cpython_collapsed"] = [{"status": "skipped"}]
    else:
        cmd = [ref, "-m", "profiling.sampling", "replay", "--collapsed", "-o", os.devnull, p]
        out["cpython_collapsed"] = _repeat(
            args.collapsed_repeat, "CPython replay --collapsed",
            lambda: time_command(cmd, max_bytes=args.collapsed_max_bytes))
    out["ours_read"] = read
    if status_of(out["ours_read"]) is None:
        out["ours_tracemalloc"] = _repeat(1, "ours read() under tracemalloc",
                                          lambda: run_worker(dev, ["ours-read", p,
                                                                   "--tracemalloc"]))
    else:
        out["ours_tracemalloc"] = out["ours_read"][:1]
    return out


def measure_batches(dev: str, path: Path, sizes: Sequence[int], args) -> dict:
    out = {}
    for size in sizes:
        out[str(size)] = _repeat(
            args.repeat, f"ours iter_batches({size:,})",
            lambda size=size: run_worker(dev, ["ours-batches", str(path), "--batch", str(size)]))
    return out


def measure_writers(ref: str, dev: str, data_dir: Path, name: str, args) -> dict:
    kind, samples, seed = SYNTHETIC[name]
    gen = ["--kind", kind, "--samples", str(samples), "--seed", str(seed)]
    source = data_dir / f"{name}.bin"
    with tempfile.TemporaryDirectory(dir=data_dir, prefix="write-") as tmp:
        outs = {k: str(Path(tmp) / f"{k}.bin") for k in ("cpython", "stream", "columns")}
        return {
            "cpython_write": _repeat(args.repeat, "CPython BinaryWriter", lambda: run_worker(
                ref, ["cpython-write", *gen, "--out", outs["cpython"], "--compare",
                      str(source)])),
            "ours_write_stream": _repeat(args.repeat, "ours Writer", lambda: run_worker(
                dev, ["ours-write-stream", *gen, "--out", outs["stream"], "--compare",
                      str(source)])),
            "ours_write_columns": _repeat(args.repeat, "ours write(columns)", lambda: run_worker(
                dev, ["ours-write-columns", str(source), "--out", outs["columns"], "--compare",
                      str(source)])),
        }


def _same_process_python(args) -> str | None:
    """The interpreter for the same-process rows: CPython 3.15 with tachyon_format."""
    path = args.same_process_python or str(TOOLS.parent / ".venv-3.15" / "bin" / "python")
    return path if Path(path).exists() else None


def measure_same_process(python: str, data_dir: Path, names: Sequence[str], args) -> dict:
    """tools/bench/same_process.py over the inputs, in one CPython 3.15 process."""
    log(f"measuring in one CPython 3.15 process ({python}): {', '.join(names)}")
    cmd = [python, str(BENCH / "same_process.py"), "--repeat", str(args.repeat),
           *[str(data_dir / f"{name}.bin") for name in names]]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith(MARKER):
            return json.loads(line[len(MARKER):])
    log(f"  same-process rows failed: {' | '.join(proc.stderr.strip().splitlines()[-3:])}")
    return {}


SAME_HEADERS = ("input", "file MB", "thread-samples", "CPython replay no-op s",
                "ours read s (× CPython)", "ours aggregate s (× CPython)",
                "numpy decoder: read s (×)", "numpy decoder: aggregate s (×)")


def same_rows(metas: dict, same: dict) -> list[list[str]]:
    def cell(r: dict, key: str) -> str:
        if key not in r["best"]:
            return "—"
        return f"{r['best'][key]:.3f} ({r['ratio'][key]:.2f}x)"

    rows = []
    for file_name, r in same["files"].items():
        name = file_name.removesuffix(".bin")
        walk = "compiled" if "read/compiled" in r["best"] else "active"
        rows.append([name, fmt_mb(r["file_bytes"]), fmt_count(metas[name]["sample_count"]),
                     f"{r['best']['cpython']:.3f}", cell(r, f"read/{walk}"),
                     cell(r, f"aggregate/{walk}"), cell(r, "read/numpy"),
                     cell(r, "aggregate/numpy")])
    return rows


# -- machine facts -----------------------------------------------------------------------------


def _first_line(cmd: Sequence[str]) -> str | None:
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    text = out.stdout.strip()
    return text.splitlines()[0] if out.returncode == 0 and text else None


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine_facts(ref: str) -> dict:
    facts = {"cpu": cpu_model(), "logical_cpus": os.cpu_count()}
    if hasattr(os, "sched_getaffinity"):
        facts["usable_cpus"] = len(os.sched_getaffinity(0))
    total = memory_total_bytes()
    if total:
        facts["memory_gb"] = round(total / 2**30, 1)
    facts["os"] = platform.platform()
    facts["dev_python"] = platform.python_version()
    try:
        import numpy

        facts["numpy"] = numpy.__version__
    except ImportError:
        facts["numpy"] = None
    facts["dev_libzstd"] = ".".join(map(str, _zstd_module().zstd_version_info))
    try:
        sys.path.insert(0, str(TOOLS.parent / "src"))
        import tachyon_format

        facts["tachyon_format"] = tachyon_format.__version__
    except ImportError:
        facts["tachyon_format"] = None
    facts["git"] = _first_line(["git", "-C", str(TOOLS.parent), "describe", "--always",
                                "--dirty"])
    facts["reference_python"] = _first_line([ref, "-c", "import sys; print(sys.version)"])
    facts["reference_libzstd"] = _first_line([
        ref, "-c", "import compression.zstd as z; print(z.zstd_version)"])
    return facts


# -- report ------------------------------------------------------------------------------------


def _or_status(value: str, runs: Sequence[dict] | None) -> str:
    if runs is None:
        return "—"
    if runs and runs[0].get("status") == "skipped":
        return "skipped"
    return status_of(runs) or value


def read_rows(metas: dict, results: dict) -> list[list[str]]:
    rows = []
    for name, r in results.items():
        meta = metas[name]
        samples, region = meta["sample_count"], meta["region_bytes"]
        cpy = best(r["cpython_replay"])
        col = best(r["cpython_collapsed"])
        ours = best(r["ours_read"])
        stats = next((x.get("stats") for x in r["cpython_replay"] if x.get("stats")), None)
        rss = worst(r["ours_read"], "rss_delta")
        tm = worst(r["ours_tracemalloc"], "tracemalloc_peak")
        per_rss = per_sample_above(rss, region, samples)
        per_tm = per_sample_above(tm, region, samples)
        result_bytes = worst(r["ours_read"], "result_nbytes")

        def ours_status(value: str, runs: list = r["ours_read"]) -> str:
            return _or_status(value, runs)

        rows.append([
            name, fmt_mb(meta["file_bytes"]), fmt_mb(region), fmt_count(samples),
            format_records(stats),
            _or_status(fmt_num(cpy, 3), r["cpython_replay"]),
            _or_status(fmt_num(col, 2), r["cpython_collapsed"]),
            ours_status(fmt_num(ours, 3)),
            ours_status(fmt_num(samples / ours / 1e6 if ours else None, 2)),
            ours_status(fmt_num(ratio(cpy, ours), 2)),
            ours_status(fmt_num(paired_median_ratio(r["cpython_replay"], r["ours_read"]), 2)),
            _or_status(ours_status(fmt_num(ratio(col, ours), 1)), r["cpython_collapsed"]),
            _or_status(fmt_mb(worst(r["cpython_replay"], "rss_delta")), r["cpython_replay"]),
            ours_status(fmt_mb(rss)),
            _or_status(fmt_mb(tm), r["ours_tracemalloc"]),
            ours_status(f"{fmt_num(per_rss, 0)} / {fmt_num(per_tm, 0)}"),
            ours_status(fmt_mb(result_bytes)),
        ])
    return rows


READ_HEADERS = (
    "input", "file MB", "region MB", "thread-samples", "records R / F / S / P",
    "CPython replay no-op s", "CPython collapsed s", "ours read s", "ours M samples/s",
    "× replay", "× replay, median of pairs", "× collapsed", "CPython peak RSS Δ MB",
    "ours peak RSS Δ MB",
    "ours tracemalloc peak MB", "ours B/sample above region (RSS / tm)", "ours result MB",
)
BATCH_HEADERS = ("input", "samples_per_batch", "batches", "ours s", "M samples/s",
                 "peak RSS Δ MB", "B/sample (RSS)")
WRITE_HEADERS = ("input", "thread-samples", "CPython BinaryWriter s", "ours Writer s",
                 "ours write(columns) s", "× Writer", "× write(columns)",
                 "out MB (CPython / Writer / columns)",
                 "byte-identical to input (CPython / Writer / columns)")


def batch_rows(metas: dict, name: str, results: dict) -> list[list[str]]:
    rows = []
    samples = metas[name]["sample_count"]
    for size, runs in results.items():
        t = best(runs)
        rss = worst(runs, "rss_delta")
        batches = next((x.get("batches") for x in runs if x.get("status") == "ok"), None)
        rows.append([name, f"{int(size):,}", _or_status(str(batches), runs),
                     _or_status(fmt_num(t, 3), runs),
                     _or_status(fmt_num(samples / t / 1e6 if t else None, 2), runs),
                     _or_status(fmt_mb(rss), runs),
                     _or_status(fmt_num(rss / samples if rss is not None else None, 1), runs)])
    return rows


def _identical(runs: list[dict]) -> str:
    same = next((x["identical_to_input"] for x in runs if "identical_to_input" in x), None)
    return "n/a" if same is None else ("yes" if same else "NO")


def write_rows(metas: dict, results: dict) -> list[list[str]]:
    rows = []
    for name, r in results.items():
        cpy = best(r["cpython_write"])
        stream, cols = best(r["ours_write_stream"]), best(r["ours_write_columns"])
        sizes = " / ".join(
            _or_status(fmt_mb(worst(r[k], "out_bytes"), 2), r[k])
            for k in ("cpython_write", "ours_write_stream", "ours_write_columns"))
        rows.append([name, fmt_count(metas[name]["sample_count"]),
                     _or_status(fmt_num(cpy, 3), r["cpython_write"]),
                     _or_status(fmt_num(stream, 3), r["ours_write_stream"]),
                     _or_status(fmt_num(cols, 3), r["ours_write_columns"]),
                     _or_status(fmt_num(ratio(cpy, stream), 2), r["ours_write_stream"]),
                     _or_status(fmt_num(ratio(cpy, cols), 2), r["ours_write_columns"]),
                     sizes, " / ".join(_identical(r[k]) for k in
                                       ("cpython_write", "ours_write_stream",
                                        "ours_write_columns"))])
    return rows


def _errors(results: dict) -> list[str]:
    notes = []

    def scan(prefix: str, value) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                scan(f"{prefix}/{k}" if prefix else k, v)
        elif isinstance(value, list) and value and isinstance(value[0], dict):
            for run in value[:1]:
                if run.get("status") in ("error", "n/a"):
                    notes.append(f"- `{prefix}`: {run['status']}: {run.get('error', '')}")

    scan("", results)
    return notes


def render(facts: dict, metas: dict, reads: dict, batches: dict, writes: dict,
           args, pprof: dict | None = None, convert: dict | None = None,
           same: dict | None = None) -> str:
    lines = ["# tachyon-format benchmark results", ""]
    lines += [f"Command: `python tools/bench.py {' '.join(args.argv)}`".replace("  ", " "),
              f"Timings: best of {args.repeat} fresh processes "
              f"(collapsed: best of {args.collapsed_repeat}); peak memory: largest of the runs.",
              "See docs/benchmark.md for what each number means.", "", "## Machine", ""]
    lines += [f"- {k}: {v}" for k, v in facts.items()]
    if reads:
        lines += ["", "## Reading (each input fully decoded)", "",
                  format_table(READ_HEADERS, read_rows(metas, reads))]
    if same:
        lines += ["", "## Same process (CPython 3.15): our reader against CPython's, in one "
                  f"process ({same['python']}; best of {args.repeat}, taken in turn)", "",
                  format_table(SAME_HEADERS, same_rows(metas, same))]
    if batches:
        name, results = batches["input"], batches["runs"]
        lines += ["", "## Batched reading (`iter_batches`, count samples per thread)", "",
                  format_table(BATCH_HEADERS, batch_rows(metas, name, results))]
    if writes:
        lines += ["", "## Writing (same samples, zstd)", "",
                  format_table(WRITE_HEADERS, write_rows(metas, writes))]
    if pprof:
        lines += _pprof_module().render(sys.modules[__name__], metas, pprof)
    if convert:
        lines += _bench_module("convert_bench").render(sys.modules[__name__], metas, convert)
    notes = _errors({"read": reads, "batches": batches.get("runs", {}), "write": writes,
                     "pprof": pprof or {}, "convert": convert or {}})
    if notes:
        lines += ["", "## Not measured / failed", "", *notes]
    return "\n".join(lines) + "\n"


# -- main --------------------------------------------------------------------------------------


def _bench_module(name: str = "pprof_bench"):
    """A module of rows under tools/bench/ (pprof_bench, convert_bench), loaded by path."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _pprof_module():
    return _bench_module("pprof_bench")


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true",
                    help="smoke test: mixed-1m and real-* only, each measurement once")
    ap.add_argument("--inputs", help=f"comma-separated names or globs of: {', '.join(ALL_INPUTS)}")
    ap.add_argument("--data-dir", default="bench-data", type=Path)
    ap.add_argument("--output", default="bench-results/results.md", type=Path)
    ap.add_argument("--repeat", type=int, help="timings are best of N fresh processes (3)")
    ap.add_argument("--collapsed-repeat", type=int, default=1,
                    help="runs of the slow `replay --collapsed` (1)")
    ap.add_argument("--skip-collapsed", action="store_true")
    ap.add_argument("--collapsed-max-gb", type=float,
                    help="address-space cap for `replay --collapsed` (half the RAM)")
    ap.add_argument("--skip-reads", action="store_true",
                    help="skip the fresh-process reading rows (e.g. to time conversions only)")
    ap.add_argument("--skip-batches", action="store_true")
    ap.add_argument("--skip-writer", action="store_true")
    ap.add_argument("--skip-pprof", action="store_true")
    ap.add_argument("--skip-same-process", action="store_true",
                    help="skip the same-process rows (ours and CPython's reader in one CPython"
                    " 3.15 process)")
    ap.add_argument("--same-process-python", help="a CPython 3.15 with tachyon_format "
                    "installed (default: .venv-3.15/bin/python, as tools/dev.sh test makes)")
    ap.add_argument("--skip-convert", action="store_true",
                    help="skip the conversion rows (collapsed, pstats vs CPython's replay)")
    ap.add_argument("--pprof-convert-only", action="store_true",
                    help="pprof: time the conversions only, not reading pprof back")
    ap.add_argument("--pprof-baseline", type=Path,
                    help="a checkout of an earlier commit: its Tachyon -> pprof timed in turn "
                         "with ours and CPython's (before / after)")
    ap.add_argument("--batch-input", help="input for iter_batches (mixed-20m; quick: mixed-1m)")
    ap.add_argument("--batch-sizes", default="100000,1000000")
    ap.add_argument("--reference-python", help="CPython 3.15 (else $TACHYON_REFERENCE_PYTHON)")
    ap.add_argument("--regenerate", action="store_true", help="ignore cached inputs")
    ap.add_argument("--generate-only", action="store_true")
    ap.add_argument("--fleet", metavar="N", type=int,
                    help="only the fleet rows (tools/bench/fleet_bench.py): N profiles of "
                    "--fleet-samples samples as a dataset, the fleet-wide top on 1 and 2 workers")
    ap.add_argument("--fleet-samples", type=int, default=100_000)
    args = ap.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)
    if args.repeat is None:
        args.repeat = 1 if args.quick else 3
    if args.quick:
        args.collapsed_repeat = 1
    total = memory_total_bytes()
    gb = args.collapsed_max_gb
    args.collapsed_max_bytes = int(gb * 2**30) if gb else (total // 2 if total else None)
    if args.batch_input is None:
        args.batch_input = "mixed-1m" if args.quick else "mixed-20m"
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.fleet is not None:  # (needs no reference interpreter)
        return _bench_module("fleet_bench").main([
            "--profiles", str(args.fleet), "--samples", str(args.fleet_samples),
            "--data-dir", str(args.data_dir / "fleet")])
    ref = reference_python(args.reference_python)
    dev = sys.executable
    names = select_inputs(args.inputs, args.quick)
    read_names = [n for n in names if n not in BATCH_ONLY]
    batch_sizes = [int(s) for s in args.batch_sizes.split(",") if s.strip()]
    batch_name = None if args.skip_batches else args.batch_input
    if batch_name is not None and args.inputs and batch_name not in names:
        batch_name = None  # an explicit --inputs list without the batch input skips it
    write_names = [] if args.skip_writer else [n for n in read_names if n in WRITER_INPUTS]
    needed = list(dict.fromkeys([*read_names, *([batch_name] if batch_name else [])]))
    log(f"reference CPython: {ref}; inputs: {', '.join(needed)}")
    metas = prepare_inputs(ref, args.data_dir, needed, args.regenerate)
    if args.generate_only:
        return 0

    facts = machine_facts(ref)
    reads: dict = {}
    for name in [] if args.skip_reads else read_names:
        path = args.data_dir / f"{name}.bin"
        warm(path)
        log(f"measuring reads of {name} ({metas[name]['sample_count']:,} thread-samples)")
        reads[name] = measure_reads(ref, dev, path, args)
    same: dict = {}
    same_python = _same_process_python(args)
    if read_names and not args.skip_same_process and same_python:
        same = measure_same_process(same_python, args.data_dir, read_names, args)
    batches: dict = {}
    if batch_name:
        path = args.data_dir / f"{batch_name}.bin"
        warm(path)
        log(f"measuring iter_batches over {batch_name}")
        batches = {"input": batch_name,
                   "runs": measure_batches(dev, path, batch_sizes, args)}
    writes: dict = {}
    for name in write_names:
        log(f"measuring writers on {name}")
        writes[name] = measure_writers(ref, dev, args.data_dir, name, args)

    pprof: dict = {}
    pprof_names = [] if args.skip_pprof else [n for n in read_names if n in PPROF_INPUTS]
    if pprof_names:
        pprof = _pprof_module().measure(sys.modules[__name__], ref, dev, args.data_dir,
                                        pprof_names, args)
    convert: dict = {}
    convert_names = [] if args.skip_convert else [n for n in read_names
                                                  if n in CONVERT_INPUTS]
    if convert_names:
        convert = _bench_module("convert_bench").measure(
            sys.modules[__name__], ref, dev, args.data_dir, convert_names, args)
    report = render(facts, metas, reads, batches, writes, args, pprof, convert, same)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(report)
    raw = {"facts": facts, "inputs": metas, "reads": reads, "same_process": same,
           "batches": batches,
           "writes": writes, "pprof": pprof, "convert": convert, "repeat": args.repeat}
    args.output.with_suffix(".json").write_text(json.dumps(raw, indent=1) + "\n")
    print(report)
    log(f"wrote {args.output} and {args.output.with_suffix('.json')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
