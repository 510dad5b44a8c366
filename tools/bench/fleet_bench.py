"""Fleet rows of the benchmark: many profiles as one dataset, aggregated on Dask.

    python tools/bench/fleet_bench.py [--profiles 1000] [--samples 100000]
                                      [--data-dir bench-data/fleet] [--workers 1,2]

(also ``python tools/bench.py --fleet``). Generates (and caches) ``--profiles`` Tachyon files
of ``--samples`` samples each with the project's writer (:mod:`fleet_profiles`), then
measures:

1. building the dataset: ``tachyon-format dataset add`` of every file, in a fresh process
   (wall time, the process's peak RSS);
2. the fleet-wide top functions on a ``dask.distributed.LocalCluster`` of 1, then 2 worker
   processes (one thread each), from the files and from the dataset: wall time of
   ``fleet.cluster.top`` (the cluster already started), and each worker's peak RSS
   (``ru_maxrss``) against its RSS when idle;
3. what one file costs alone: peak RSS of a fresh process that reads one file as per-stack
   counts and computes its function table, the unit of work of one partition.

The results are checked against each other (every top table equal), so a fast wrong answer
shows. A worker's peak should stay near "one file alone", whatever the number of files.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SRC = HERE.parents[1] / "src"
sys.path[:0] = [str(HERE), str(SRC)]


def log(message: str) -> None:
    print(f"[fleet-bench] {message}", file=sys.stderr, flush=True)


def generate(data_dir: Path, count: int, samples: int) -> list[str]:
    from fleet_profiles import write_profile

    folder = data_dir / f"profiles-{samples}"
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    started = time.perf_counter()
    for seed in range(count):
        path = folder / f"svc_{10000 + seed}.bin"
        if not path.exists():
            write_profile(seed, samples, str(path) + ".part")
            os.replace(str(path) + ".part", path)
        paths.append(str(path))
    log(f"{count} profiles of {samples} samples ready ({time.perf_counter() - started:.1f} s)")
    return paths


def child(cmd: list[str]) -> dict:
    """Wall time and peak RSS of a fresh process."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get(
        "PYTHONPATH", "")])}
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status):
        raise SystemExit(f"failed: {' '.join(cmd[:6])} ...")
    return {"wall_s": time.perf_counter() - started, "rss_mb": usage.ru_maxrss / 1024}


def build_dataset(dataset: Path, paths: list[str]) -> dict:
    import shutil

    shutil.rmtree(dataset, ignore_errors=True)
    return child([sys.executable, "-m", "tachyon_format", "dataset", "add", str(dataset),
                  *paths, "--label", "service=bench", "--label", "date=2026-01-01"])


def one_file(path: str) -> dict:
    code = ("import sys, tachyon_format as tf; from tachyon_format.analysis import "
            "function_table; function_table(tf.read(sys.argv[1], aggregate=True))")
    return child([sys.executable, "-c", code, path])


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def current_rss_mb() -> float:
    import psutil

    return psutil.Process().memory_info().rss / 2**20


def on_cluster(workers: int, paths: list[str], dataset: Path) -> dict:
    from distributed import Client, LocalCluster

    from tachyon_format.fleet import cluster

    out: dict = {"workers": workers}
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                      dashboard_address=None, memory_limit=None) as lc, Client(lc) as client:
        client.run(lambda: __import__("tachyon_format.fleet.cluster"))
        out["idle_rss_mb"] = max(client.run(current_rss_mb).values())
        for name, source in (("files", paths), ("dataset", cluster.select(dataset))):
            started = time.perf_counter()
            table = cluster.top(source, 20)
            out[f"{name}_s"] = time.perf_counter() - started
            out[f"{name}_table"] = table.rows()
            out[f"{name}_peak_rss_mb"] = max(client.run(peak_rss_mb).values())
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--profiles", type=int, default=1000)
    ap.add_argument("--samples", type=int, default=100_000)
    ap.add_argument("--data-dir", type=Path, default=Path("bench-data/fleet"))
    ap.add_argument("--workers", default="1,2")
    args = ap.parse_args(argv)
    paths = generate(args.data_dir, args.profiles, args.samples)
    dataset = args.data_dir / f"dataset-{args.profiles}x{args.samples}"
    log("building the dataset")
    built = build_dataset(dataset, paths)
    log(f"dataset: {built['wall_s']:.1f} s, peak RSS {built['rss_mb']:.0f} MB")
    alone = one_file(paths[0])
    runs = []
    for workers in (int(w) for w in args.workers.split(",")):
        log(f"top on {workers} worker(s)")
        runs.append(on_cluster(workers, paths, dataset))
        log(str({k: v for k, v in runs[-1].items() if not k.endswith("table")}))
    tables = [run[k] for run in runs for k in ("files_table", "dataset_table")]
    same = all(t == tables[0] for t in tables)
    size = sum(os.path.getsize(p) for p in paths) / 2**20
    total = args.profiles * args.samples
    lines = [f"{args.profiles} Tachyon profiles x {args.samples:,} samples ({total:,} samples, "
             f"{size:.0f} MB of files); every top table equal: {same}", "",
             "| step | workers | wall (s) | samples/s | peak RSS per process (MB) |",
             "|---|---|---|---|---|",
             f"| dataset add (one process) | - | {built['wall_s']:.1f} | "
             f"{total / built['wall_s']:,.0f} | {built['rss_mb']:.0f} |"]
    for run in runs:
        for name in ("files", "dataset"):
            lines.append(f"| top from the {name} | {run['workers']} | {run[name + '_s']:.1f} | "
                         f"{total / run[name + '_s']:,.0f} | {run[name + '_peak_rss_mb']:.0f} "
                         f"(idle {run['idle_rss_mb']:.0f}) |")
    lines.append(f"| one file alone: read + function table | - | {alone['wall_s']:.2f} | - | "
                 f"{alone['rss_mb']:.0f} |")
    print("\n".join(lines))
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
