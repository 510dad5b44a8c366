"""Same-process rows: our reader against CPython 3.15's, in one CPython 3.15 process.

    python3.15 tools/bench/same_process.py FILE... [--repeat 5] [--json OUT]

Run with an interpreter that has both ``_remote_debugging`` (CPython 3.15) and
``tachyon_format`` (``.venv-3.15``, as ``tools/dev.sh test`` sets it up). For each file, taken
in turn so that a slow spell of a shared machine weighs on all alike:

* CPython: ``_remote_debugging.BinaryReader(path)`` (which reads the tables and decompresses the
  whole region) and ``.replay(collector)`` into a collector whose ``collect()`` does nothing;
* ours ``read(path)`` and ``read(path, aggregate=True)`` (or, with ``--batches N``,
  ``iter_batches`` through it, counting each batch's samples per thread), with the record walk
  of this process
  (``tachyon_format.decoder_info()``), and with the numpy decoder (``TACHYON_FORMAT_DECODER``
  cannot change inside a process, so ``--paths`` names which to time: ``active`` or ``both``).

Best of ``--repeat`` per measurement, and the ratios CPython / ours from the same run. The
module imports, the file's page-cache warm-up and one untimed run of each come first. Prints
one ``BENCH-RESULT <json>`` line (for ``tools/bench.py``) after a readable table.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import time
from pathlib import Path

MARKER = "BENCH-RESULT "


class NullCollector:
    def collect(self, stack_frames, timestamps_us=None):
        pass


def cpython_replay(path: str) -> tuple[float, int]:
    import _remote_debugging

    t0 = time.perf_counter()
    reader = _remote_debugging.BinaryReader(path)
    n = reader.replay(NullCollector())
    wall = time.perf_counter() - t0
    reader.close()
    return wall, n


def ours(path: str, *, aggregate: bool, engine: str | None) -> tuple[float, int]:
    import tachyon_format
    from tachyon_format.formats.tachyon import reader

    t0 = time.perf_counter()
    profile = reader.read(path, aggregate=aggregate, engine=engine)
    wall = time.perf_counter() - t0
    n = int(profile.samples.values.sum()) if aggregate else len(profile.samples)
    del profile, tachyon_format
    return wall, n


def batches(path: str, *, size: int, engine: str | None) -> tuple[float, int]:
    """``iter_batches`` through the file, each batch's samples counted per thread (what a
    bounded-memory pass over a huge recording does with them)."""
    import numpy as np

    import tachyon_format

    t0 = time.perf_counter()
    n = 0
    for batch in tachyon_format.iter_batches(path, samples_per_batch=size, engine=engine):
        np.bincount(batch.samples.thread)
        n += len(batch.samples)
    return time.perf_counter() - t0, n


def measure(path: str, repeat: int, engines: list[str | None],
            batch_size: int | None = None) -> dict:
    runs: dict[str, list[float]] = {}
    counts: dict[str, int] = {}
    jobs = {"cpython": lambda: cpython_replay(path)}
    for engine in engines:
        name = engine or "active"
        if batch_size:
            jobs[f"batches/{name}"] = lambda e=engine: batches(path, size=batch_size, engine=e)
            continue
        jobs[f"read/{name}"] = lambda e=engine: ours(path, aggregate=False, engine=e)
        jobs[f"aggregate/{name}"] = lambda e=engine: ours(path, aggregate=True, engine=e)
    for job in jobs.values():  # untimed: page cache, lazy imports, allocator warm-up
        job()
    for _ in range(repeat):
        for name, job in jobs.items():
            gc.collect()
            wall, n = job()
            runs.setdefault(name, []).append(wall)
            counts[name] = n
    best = {name: min(times) for name, times in runs.items()}
    return {"file_bytes": os.path.getsize(path), "samples": counts, "runs": runs, "best": best,
            "ratio": {name: best["cpython"] / t for name, t in best.items() if name != "cpython"}}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+", type=Path)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--paths", choices=("active", "both"), default="both",
                    help="time the active record walk only, or the compiled and numpy ones")
    ap.add_argument("--json", type=Path, help="also write the results here")
    ap.add_argument("--batches", type=int, metavar="N",
                    help="time iter_batches(samples_per_batch=N) instead of read()")
    args = ap.parse_args(argv)
    import tachyon_format

    info = tachyon_format.decoder_info()
    engines: list[str | None] = [None]
    if args.paths == "both" and info["compiled"]:
        engines = ["compiled", "numpy"]
    results = {"python": sys.version.split()[0], "decoder": info, "files": {}}
    for path in args.files:
        r = measure(str(path), args.repeat, engines, args.batches)
        results["files"][path.name] = r
        cells = "  ".join(f"{k} {v:.3f}s ({r['ratio'].get(k, 1):.2f}x)"
                          for k, v in r["best"].items())
        print(f"{path.name}: {r['file_bytes'] / 1e6:.1f} MB, {r['samples']['cpython']:,} "
              f"samples: {cells}", file=sys.stderr, flush=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1) + "\n")
    print(MARKER + json.dumps(results), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
