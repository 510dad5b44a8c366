"""One benchmark measurement per process, so that peak memory is clean.

Run by ``tools/bench.py``; prints one line ``BENCH-RESULT <json>`` on stdout. Each command
imports what it needs, takes the baseline peak RSS after those imports, then does the work:

``cpython-replay FILE``            (CPython 3.15) ``BinaryReader(FILE).replay(no-op collector)``
``ours-read FILE [--tracemalloc]`` (dev Python) ``tachyon_format.read(FILE)`` + materialise
``ours-batches FILE --batch N``    (dev Python) ``tachyon_format.iter_batches`` + count per thread
``cpython-write``/``ours-write-stream`` ``--kind --samples --seed --out`` feed the same ticks
``ours-write-columns FILE --out``  (dev Python) ``tachyon_format.write(read(FILE), out)``

Our API may not exist yet: a missing name gives ``{"status": "n/a"}``; an exception gives
``{"status": "error", "error": ...}``. Must stay importable on Python 3.11 and 3.15.
"""

from __future__ import annotations

import argparse
import functools
import gc
import json
import os
import resource
import sys
import time
import traceback
from collections.abc import Mapping
from pathlib import Path

HERE = Path(__file__).resolve().parent
MARKER = "BENCH-RESULT "


def _proc_status_bytes(key: str) -> int | None:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def reset_peak_rss() -> tuple[int, str]:
    """Start a clean peak-RSS window; returns ``(baseline bytes, method)``.

    ``ru_maxrss`` survives ``execve`` on Linux (a child starts with its parent's high-water
    mark), so on Linux the peak is ``VmHWM`` of this process, reset to the current RSS by
    writing 5 to ``/proc/self/clear_refs``; the baseline is then the RSS after the imports.
    Elsewhere: ``ru_maxrss`` after the imports."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        rss = _proc_status_bytes("VmRSS")
        if rss is not None:
            return rss, "VmHWM after clear_refs reset"
    except OSError:
        pass
    hwm = _proc_status_bytes("VmHWM")
    if hwm is not None:
        return hwm, "VmHWM"
    return _ru_maxrss(), "ru_maxrss"


def peak_rss_bytes() -> int:
    """Peak RSS of this process (see :func:`reset_peak_rss`)."""
    hwm = _proc_status_bytes("VmHWM")
    return hwm if hwm is not None else _ru_maxrss()


class PeakRss:
    """Peak RSS growth over a stretch of code, two ways (see :func:`reset_peak_rss`)."""

    def start(self) -> PeakRss:
        gc.collect()
        self.ru_base = _ru_maxrss()
        self.base, self.method = reset_peak_rss()
        return self

    def stop(self) -> dict:
        return {"rss_baseline": self.base, "rss_method": self.method,
                "rss_delta": peak_rss_bytes() - self.base,
                "ru_maxrss_delta": _ru_maxrss() - self.ru_base}


def _ru_maxrss() -> int:
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss if sys.platform == "darwin" else rss * 1024  # KiB on Linux


def emit(result: dict) -> None:
    print(MARKER + json.dumps(result), flush=True)


def _import_ours():
    try:
        import tachyon_format
    except ImportError:
        sys.path.insert(0, str(HERE.parents[1] / "src"))
        import tachyon_format
    return tachyon_format


def _is_array(obj) -> bool:
    return hasattr(obj, "dtype") and hasattr(obj, "nbytes") and hasattr(obj, "shape")


def _buffer_nbytes(root) -> int:
    """Bytes owned by an array's root: its own data, or the buffer it views (bytes, mmap)."""
    base = getattr(root, "base", None)
    if base is None or _is_array(base):
        return int(root.nbytes)
    try:
        return memoryview(base).nbytes
    except TypeError:
        return int(root.nbytes)


def array_nbytes(obj, max_depth: int = 6) -> tuple[int, int]:
    """``(bytes, arrays)`` held by numpy arrays reachable from ``obj``.

    Walks mappings, lists/tuples, ``__dict__``, ``__slots__`` and public properties (reading a
    property materialises lazy columns, which is intended: the benchmark wants full columns).
    Views are counted once, by the buffer at the root of their ``.base`` chain.
    """
    seen: set[int] = set()
    roots: dict[int, tuple[object, int]] = {}

    def visit(value, depth: int) -> None:
        if depth > max_depth or id(value) in seen:
            return
        seen.add(id(value))
        if _is_array(value):
            root = value
            while _is_array(getattr(root, "base", None)):
                root = root.base
            roots[id(root)] = (root, _buffer_nbytes(root))
            if getattr(value, "dtype", None) is not None and value.dtype == object:
                for item in value.ravel()[:10_000]:
                    visit(item, depth + 1)
            return
        if value is None or isinstance(value, (str, bytes, bytearray, int, float, complex, type)):
            return
        if isinstance(value, Mapping):
            for item in list(value.values()):
                visit(item, depth + 1)
            return
        if isinstance(value, (list, tuple, set, frozenset)):
            if len(value) <= 100_000:
                for item in value:
                    visit(item, depth + 1)
            return
        if callable(value) or type(value).__module__ in ("builtins", "types"):
            return
        names = set(getattr(value, "__dict__", {}))  # private caches count too
        for klass in type(value).__mro__:
            slots = klass.__dict__.get("__slots__", ())
            names.update((slots,) if isinstance(slots, str) else slots)
            names.update(n for n, v in vars(klass).items()
                         if isinstance(v, (property, functools.cached_property))
                         and not n.startswith("_"))
        for name in sorted(names):
            if name.startswith("__"):
                continue
            try:
                item = getattr(value, name)
            except Exception:
                continue
            if callable(item) and not _is_array(item) and not isinstance(item, Mapping):
                continue
            visit(item, depth + 1)

    visit(obj, 0)
    return sum(n for _, n in roots.values()), len(roots)


# -- commands ----------------------------------------------------------------------------------


def cmd_cpython_replay(args) -> dict:
    import _remote_debugging as rd

    class NullCollector:
        def collect(self, stack_frames, timestamps_us):
            pass

        def export(self, filename):
            pass

    mem = PeakRss().start()
    t0 = time.perf_counter()
    reader = rd.BinaryReader(args.file)
    t_open = time.perf_counter() - t0
    replayed = reader.replay(NullCollector())
    wall = time.perf_counter() - t0
    memory = mem.stop()
    stats = reader.get_stats()
    info = reader.get_info()
    reader.close()
    return {"status": "ok", "wall_s": wall, "open_s": t_open, "samples": replayed,
            **memory, "stats": stats,
            "thread_count": info.get("thread_count"), "frame_count": info.get("frame_count"),
            "string_count": info.get("string_count")}


def cmd_ours_read(args) -> dict:
    import numpy  # noqa: F401  (imported before the baseline: its import is not the reader's)

    tf = _import_ours()
    read = _api(tf, "read")
    if args.tracemalloc:
        import tracemalloc

        tracemalloc.start()
    mem = PeakRss().start()
    t0 = time.perf_counter()
    try:
        profile = read(args.file)
        t_read = time.perf_counter() - t0
        nbytes, narrays = array_nbytes(profile)
    except NotImplementedError as exc:
        return {"status": "n/a", "error": f"NotImplementedError: {exc}"}
    wall = time.perf_counter() - t0
    memory = mem.stop()
    reported = getattr(profile, "nbytes", None)
    result = {"status": "ok", "read_s": t_read, "wall_s": wall, **memory,
              "result_nbytes_reported": reported if isinstance(reported, int) else None,
              "result_nbytes": nbytes, "result_arrays": narrays,
              "type": f"{type(profile).__module__}.{type(profile).__qualname__}"}
    if args.tracemalloc:
        result["tracemalloc_peak"] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return result


def _lookup(container, name: str):
    try:
        return container[name]
    except Exception:
        return getattr(container, name, None)


def _column(batch, names=("thread_id", "thread")):
    """The first of ``names`` found as ``batch[name]``, ``batch.name`` or on ``batch.samples``."""
    for name in names:
        for container in (batch, getattr(batch, "samples", None)):
            value = None if container is None else _lookup(container, name)
            if _is_array(value) or isinstance(value, (list, tuple)):
                return value
    return None


class Missing(Exception):
    """Our API (or the module behind it) does not exist yet: reported as n/a."""


def _api(tf, name: str):
    """``tachyon_format.<name>``; raises :class:`Missing` while it is absent or unfinished.

    The Tachyon format's modules are imported here, before any clock starts: the verbs load
    a format's reader and writer on first use, and CPython's timings do not count
    ``import _remote_debugging`` either."""
    formats = getattr(tf, "FORMATS", None)
    if formats is not None:
        for verb in ("read", "write"):
            formats["tachyon"].verb(verb)
    try:
        value = getattr(tf, name, None)
    except ImportError as exc:
        raise Missing(f"tachyon_format.{name}: {type(exc).__name__}: {exc}") from exc
    if value is None:
        raise Missing(f"tachyon_format.{name} is missing")
    return value


def cmd_ours_batches(args) -> dict:
    import numpy as np

    tf = _import_ours()
    iter_batches = _api(tf, "iter_batches")
    mem = PeakRss().start()
    t0 = time.perf_counter()
    per_thread: dict[int, int] = {}
    samples = batches = 0
    try:
        for batch in iter_batches(args.file, samples_per_batch=args.batch):
            batches += 1
            tids = _column(batch, "thread_id")
            if tids is None:
                samples += len(getattr(batch, "samples", batch))
                continue
            values, counts = np.unique(np.asarray(tids), return_counts=True)
            for tid, count in zip(values.tolist(), counts.tolist(), strict=True):
                per_thread[tid] = per_thread.get(tid, 0) + count
            samples += int(counts.sum())
    except NotImplementedError as exc:
        return {"status": "n/a", "error": f"NotImplementedError: {exc}"}
    wall = time.perf_counter() - t0
    memory = mem.stop()
    return {"status": "ok", "wall_s": wall, **memory,
            "samples": samples, "batches": batches, "threads": len(per_thread)}


def _ticks(args, types=None) -> list:
    sys.path.insert(0, str(HERE))
    import synth

    return list(synth.ticks(args.kind, args.samples, args.seed, types=types))


def _write_result(args, wall: float, memory: dict) -> dict:
    """A writer measurement, with byte identity against ``--compare`` when given."""
    result = {"status": "ok", "wall_s": wall, **memory, "out_bytes": os.path.getsize(args.out)}
    if args.compare:
        same = Path(args.out).read_bytes() == Path(args.compare).read_bytes()
        result["identical_to_input"] = same
    return result


def _timed_write_loop(binary_writer, ticks: list, args) -> dict:
    """Time a BinaryWriter-style writer over pre-built ticks (object construction excluded)."""
    sys.path.insert(0, str(HERE))
    import synth

    mem = PeakRss().start()
    t0 = time.perf_counter()
    writer = binary_writer(args.out, synth.INTERVAL_US, synth.START_TIME_US, compression=1)
    write = writer.write_sample
    for ts, stack_frames in ticks:
        write(stack_frames, ts)
    writer.finalize()
    wall = time.perf_counter() - t0
    memory = mem.stop()
    return _write_result(args, wall, memory)


def cmd_cpython_write(args) -> dict:
    import _remote_debugging as rd

    return _timed_write_loop(rd.BinaryWriter, _ticks(args), args)


def cmd_ours_write_stream(args) -> dict:
    """Our streaming writer through the drop-in ``compat.BinaryWriter``: the very calls the
    CPython measurement makes, with our struct-sequence types built beforehand."""
    tf = _import_ours()
    from tachyon_format import compat

    types = (compat.FrameInfo, compat.LocationInfo, compat.ThreadInfo, compat.InterpreterInfo)
    result = _timed_write_loop(compat.BinaryWriter, _ticks(args, types), args)
    result["api"] = f"tachyon_format {tf.__version__} compat.BinaryWriter"
    return result


def cmd_ours_write_columns(args) -> dict:
    tf = _import_ours()
    _api(tf, "write")
    _api(tf, "read")
    try:
        profile = tf.read(args.file)  # not timed
        mem = PeakRss().start()
        t0 = time.perf_counter()
        tf.write(profile, args.out)
    except NotImplementedError as exc:
        return {"status": "n/a", "error": f"NotImplementedError: {exc}"}
    wall = time.perf_counter() - t0
    memory = mem.stop()
    return _write_result(args, wall, memory)


COMMANDS = {
    "cpython-replay": cmd_cpython_replay,
    "ours-read": cmd_ours_read,
    "ours-batches": cmd_ours_batches,
    "cpython-write": cmd_cpython_write,
    "ours-write-stream": cmd_ours_write_stream,
    "ours-write-columns": cmd_ours_write_columns,
}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="one benchmark measurement (used by bench.py)")
    ap.add_argument("command", choices=sorted(COMMANDS))
    ap.add_argument("file", nargs="?")
    ap.add_argument("--tracemalloc", action="store_true")
    ap.add_argument("--batch", type=int, default=100_000)
    ap.add_argument("--kind")
    ap.add_argument("--samples", type=int)
    ap.add_argument("--seed", type=int)
    ap.add_argument("--out")
    ap.add_argument("--compare", help="file the output should be byte-identical to")
    args = ap.parse_args(argv)
    try:
        result = COMMANDS[args.command](args)
    except (Missing, NotImplementedError) as exc:
        result = {"status": "n/a", "error": str(exc) or type(exc).__name__}
    except Exception as exc:
        result = {"status": "error", "error": f"{type(exc).__name__}: {exc}",
                  "traceback": traceback.format_exc(limit=8)}
    emit(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
