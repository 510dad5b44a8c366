"""One pprof benchmark measurement per process (run by ``tools/bench/pprof_bench.py``);
prints ``BENCH-RESULT <json>`` like ``worker.py``, whose peak-memory helpers it uses.

``cpython-collector TACHYON OUT``  (CPython 3.15) ``BinaryReader.replay()`` into the Python
                                   collector of ``pprof_collector.py``, gzip'd pprof to OUT
``ours-from-tachyon TACHYON OUT [--timestamps] [--full-read]``
                                   ``write(read(TACHYON, aggregate=True), OUT)`` as pprof
                                   (every sample read with ``--timestamps`` or ``--full-read``)
``ours-read PPROF [--tracemalloc]``  ``read(PPROF)`` into columns
``ours-read-tachyon TACHYON [--aggregate]``  ``read(TACHYON, aggregate=...)``
``ours-reencode PPROF OUT``          ``write(read(PPROF), OUT)``: what ``go tool pprof -proto``
                                     does
Time and memory are taken after the imports.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from worker import PeakRss, _import_ours, emit  # noqa: E402


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("command", choices=["cpython-collector", "ours-from-tachyon", "ours-read",
                                        "ours-reencode", "ours-read-tachyon"])
    ap.add_argument("source")
    ap.add_argument("out", nargs="?")
    ap.add_argument("--timestamps", action="store_true")
    ap.add_argument("--tracemalloc", action="store_true")
    ap.add_argument("--aggregate", action="store_true")
    ap.add_argument("--full-read", action="store_true",
                    help="ours-from-tachyon through read() of every sample (the path before "
                         "read(aggregate=True); for an earlier checkout)")
    args = ap.parse_args(argv)
    try:
        emit(run(args))
    except Exception as exc:  # noqa: BLE001 - reported, not raised
        emit({"status": "error", "error": f"{type(exc).__name__}: {exc}",
              "traceback": traceback.format_exc()[-2000:]})


def run(args) -> dict:
    tf = _import_ours()
    if args.command == "cpython-collector":
        import _remote_debugging
        from pprof_collector import convert

        import tachyon_format.schema.protobuf_plain  # noqa: F401 - imported before the clock starts
        peak = PeakRss().start()
        t0 = time.perf_counter()
        samples = convert(_remote_debugging.BinaryReader, args.source, args.out)
        wall = time.perf_counter() - t0
        return {"status": "ok", "wall_s": wall, "samples": samples, **peak.stop(),
                "out_bytes": os.path.getsize(args.out)}
    from tachyon_format.formats.pprof import reader, writer  # noqa: F401 - warm imports
    from tachyon_format.formats.tachyon import reader as _  # noqa: F401 - as CPython's are

    if args.tracemalloc:
        import tracemalloc

        tracemalloc.start()
    peak = PeakRss().start()
    t0 = time.perf_counter()
    out: dict = {}
    if args.command == "ours-from-tachyon":
        # counted as read unless each sample is written with its time
        if args.timestamps or args.full_read:
            profile = tf.read(args.source)
        else:
            profile = tf.read(args.source, aggregate=True)
        tf.write(profile, args.out, format="pprof", timestamps=args.timestamps)
        out["samples"] = len(profile.samples)
    elif args.command == "ours-read-tachyon":
        profile = tf.read(args.source, aggregate=args.aggregate)
        out["samples"] = len(profile.samples)
    elif args.command == "ours-read":
        profile = tf.read(args.source, format="pprof")
        out["samples"] = len(profile.samples)
        out["result_nbytes"] = profile.nbytes + profile.extras["pprof"].nbytes
    else:
        profile = tf.read(args.source, format="pprof")
        tf.write(profile, args.out, format="pprof")
        out["samples"] = len(profile.samples)
    wall = time.perf_counter() - t0
    out.update({"status": "ok", "wall_s": wall, **peak.stop()})
    if args.tracemalloc:
        import tracemalloc

        out["tracemalloc_peak"] = tracemalloc.get_traced_memory()[1]
    if args.out:
        out["out_bytes"] = os.path.getsize(args.out)
    return out


if __name__ == "__main__":
    main()
