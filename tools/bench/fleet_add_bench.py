"""What one ``dataset add`` costs as the dataset grows: the cost of adding a file should not
depend on how many profiles are already there.

    python tools/bench/fleet_add_bench.py [--sizes 0,100,500,1000] [--samples 200]
                                          [--repeat 3] [--one-by-one]
                                          [--data-dir bench-data/fleet-add]

Generates small Tachyon profiles (:mod:`fleet_profiles`, 30 stacks each), builds one dataset
up to each of ``--sizes`` profiles (one ``fleet.dataset.add`` call per step, timed: the
batched add; ``--one-by-one``: one call per file, as a job that adds each file when it is
written does), and at each size adds one more file ``--repeat`` times to a copy of it: as
``tachyon-format dataset add`` in a fresh process (wall time: what a cron job or a CI step
pays) and through ``dataset.add`` in this process (the add alone). Best and median of the
repeats; then ``dataset compact`` of the largest dataset (wall time, files before and after,
size on disk) and the same one-file adds to it once compacted.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SRC = HERE.parents[1] / "src"
sys.path[:0] = [str(HERE), str(SRC)]
LABELS = {"service": "bench", "date": "2026-01-01"}


def log(message: str) -> None:
    print(f"[fleet-add-bench] {message}", file=sys.stderr, flush=True)


def generate(folder: Path, count: int, samples: int) -> list[str]:
    from fleet_profiles import make_profile

    import tachyon_format as tf

    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for seed in range(count):
        path = folder / f"svc_{20000 + seed}.bin"
        if not path.exists():
            tf.write(make_profile(seed, samples, num_stacks=30), str(path) + ".part",
                     format="tachyon")
            os.replace(str(path) + ".part", path)
        paths.append(str(path))
    return paths


def add_in_a_process(location: Path, path: str) -> float:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get(
        "PYTHONPATH", "")])}
    labels = [arg for key, value in LABELS.items() for arg in ("--label", f"{key}={value}")]
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "tachyon_format", "dataset", "add", str(location),
                    path, *labels], env=env, check=True, stderr=subprocess.DEVNULL)
    return time.perf_counter() - started


def add_here(location: Path, path: str) -> float:
    from tachyon_format.fleet import dataset

    started = time.perf_counter()
    (added,) = dataset.add(location, [path], labels=LABELS)
    assert not added.skipped
    return time.perf_counter() - started


def one_more(data_dir: Path, location: Path, size: int, extra: list[str]) -> str:
    """Best and median time of adding each of *extra* to a copy of the dataset."""
    timings: dict[str, list[float]] = {"process": [], "here": []}
    for k, path in enumerate(extra):
        for how, run in (("process", add_in_a_process), ("here", add_here)):
            # (a new path each time: this process keeps the tables it opened, by path)
            scratch = data_dir / f"scratch-{size}-{k}-{how}-{time.monotonic_ns()}"
            if size:
                shutil.copytree(location, scratch)
            timings[how].append(run(scratch, path))
            shutil.rmtree(scratch)
    return " | ".join(f"{min(t) * 1e3:.0f} (median {statistics.median(t) * 1e3:.0f})"
                      for t in timings.values())


def files_in(location: Path) -> int:
    return sum(1 for p in location.rglob("*.parquet") if "_delta_log" not in p.parts)


def disk_mb(location: Path) -> float:
    return sum(p.stat().st_size for p in location.rglob("*") if p.is_file()) / 2**20


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="0,100,500,1000")
    ap.add_argument("--samples", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--one-by-one", action="store_true",
                    help="build the dataset with one add per file (a file per table each)")
    ap.add_argument("--data-dir", type=Path, default=Path("bench-data/fleet-add"))
    args = ap.parse_args(argv)
    from tachyon_format.fleet import dataset

    sizes = sorted(int(s) for s in args.sizes.split(","))
    paths = generate(args.data_dir / f"profiles-{args.samples}", sizes[-1] + args.repeat,
                     args.samples)
    extra = paths[sizes[-1]:]
    location = args.data_dir / "dataset"
    shutil.rmtree(location, ignore_errors=True)
    lines = ["| profiles there | batched add (ms/file) | one file, fresh process (ms) | "
             "one file, in process (ms) |", "|---:|---:|---:|---:|"]
    done = 0
    for size in sizes:
        started = time.perf_counter()
        if size > done:
            if args.one_by_one:
                for path in paths[done:size]:
                    dataset.add(location, [path], labels=LABELS)
            else:
                dataset.add(location, paths[done:size], labels=LABELS)
        batched = (time.perf_counter() - started) / (size - done) if size > done else None
        done = size
        lines.append(f"| {size} | {f'{batched * 1e3:.0f}' if batched else '-'} | "
                     f"{one_more(args.data_dir, location, size, extra)} |")
        log(lines[-1])
    compact = getattr(dataset, "compact", None)
    if compact is not None and done:
        before = (files_in(location), disk_mb(location))
        answer = dataset.summary(location)
        started = time.perf_counter()
        compact(location, retention_hours=0)
        seconds = time.perf_counter() - started
        assert dataset.summary(location) == answer
        lines.append(f"| {done}, compacted | - | "
                     f"{one_more(args.data_dir, location, done, extra)} |")
        lines += ["", f"compact of {done} profiles: {seconds:.1f} s; data files {before[0]} -> "
                  f"{files_in(location)}, {before[1]:.1f} -> {disk_mb(location):.1f} MiB on disk"]
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
