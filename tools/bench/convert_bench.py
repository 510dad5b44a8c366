"""Conversion rows of ``tools/bench.py``: what a user runs, as fresh processes.

For each Tachyon input and each output that CPython 3.15's ``profiling.sampling replay`` also
writes (collapsed stacks, pstats), measured in turn (interleaved, best of ``--repeat``):

- CPython: ``python3.15 -m profiling.sampling replay --collapsed|--pstats -o OUT IN``;
- ours: ``python -m tachyon_format convert IN OUT`` (interpreter start, imports, reading into
  per-stack counts, writing).

Both with a bytecode cache (``PYTHONPYCACHEPREFIX``), the child's peak RSS from ``wait4``,
and the two outputs compared (bytes for collapsed, the marshal'd dict for pstats) so that a
fast wrong answer shows.
"""

from __future__ import annotations

import marshal
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"
OUTPUTS = {"collapsed": ("--collapsed", ".collapsed"), "pstats": ("--pstats", ".pstats"),
           "pprof": ("--collapsed", ".pb.gz")}
"""Our output: (the CPython replay it is timed against, our file's suffix). CPython writes no
pprof: ours is timed against its collapsed output, the conversion users run."""


def run(cmd: list[str], env: dict[str, str], max_bytes: int | None) -> dict:
    """Wall time and peak RSS of *cmd*; its address space capped at *max_bytes*."""

    def limit() -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (max_bytes, max_bytes))

    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env,
                            preexec_fn=limit if max_bytes else None)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    error = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    if os.waitstatus_to_exitcode(status):
        tail = " | ".join(error.strip().splitlines()[-3:])
        return {"status": "error", "error": f"exit {os.waitstatus_to_exitcode(status)}: {tail}"}
    return {"status": "ok", "wall_s": wall, "rss_peak": usage.ru_maxrss * 1024}


def same_output(kind: str, theirs: Path, ours: Path) -> bool | None:
    if kind not in ("collapsed", "pstats") or not (theirs.exists() and ours.exists()):
        return None
    if kind == "pstats":
        return marshal.loads(theirs.read_bytes()) == marshal.loads(ours.read_bytes())
    return theirs.read_bytes() == ours.read_bytes()


def measure(bench, ref: str, dev: str, data_dir: Path, names: list[str], args) -> dict:
    """Every conversion measurement for the Tachyon inputs *names* (``bench`` is
    tools/bench.py's module, for its logging and interleaving)."""
    cache = Path(tempfile.mkdtemp(prefix="pycache-"))
    env = dict(os.environ, PYTHONPYCACHEPREFIX=str(cache))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    ours_env = dict(env, PYTHONPATH=str(SRC))
    results: dict = {}
    with tempfile.TemporaryDirectory(dir=data_dir, prefix="convert-") as tmp:
        for name in names:
            source = data_dir / f"{name}.bin"
            for kind, (flag, suffix) in OUTPUTS.items():
                theirs = Path(tmp) / f"{name}.cpython.{kind}"
                ours = Path(tmp) / f"{name}.ours{suffix}"
                bench.log(f"convert: {name} -> {kind}")
                cpython_runs, our_runs = bench._alternate(
                    args.repeat,
                    (f"CPython replay {flag}", lambda flag=flag, theirs=theirs, source=source:
                     run([ref, "-m", "profiling.sampling", "replay", flag, "-o", str(theirs),
                          str(source)], env, args.collapsed_max_bytes)),
                    (f"ours convert -> {kind}", lambda ours=ours, source=source:
                     run([dev, "-m", "tachyon_format", "convert", str(source), str(ours)],
                         ours_env, args.collapsed_max_bytes)))
                results[(name, kind)] = {"cpython": cpython_runs, "ours": our_runs,
                                         "same": same_output(kind, theirs, ours)}
    return {f"{name}|{kind}": value for (name, kind), value in results.items()}


HEADERS = ("input", "thread-samples", "file MB", "output", "CPython replay s",
           "CPython peak RSS MB", "ours convert s", "ours peak RSS MB", "× CPython",
           "same output")


def render(bench, metas: dict, results: dict) -> list[str]:
    fmt, best, worst, ratio, mb = bench.fmt_num, bench.best, bench.worst, bench.ratio, \
        bench.fmt_mb
    rows = []
    for key, r in results.items():
        name, kind = key.split("|")
        theirs, ours = best(r["cpython"]), best(r["ours"])
        same = {True: "yes", False: "NO", None: "n/a"}[r["same"]]
        rows.append([name, bench.fmt_count(metas[name]["sample_count"]),
                     mb(metas[name].get("file_bytes"), 1), kind,
                     _or_error(fmt(theirs, 2), r["cpython"]),
                     mb(worst(r["cpython"], "rss_peak")),
                     _or_error(fmt(ours, 2), r["ours"]), mb(worst(r["ours"], "rss_peak")),
                     fmt(ratio(theirs, ours), 1), same])
    return ["", "## Conversions as a user runs them (fresh processes: CPython's "
            "`profiling.sampling replay` against `python -m tachyon_format convert`)", "",
            bench.format_table(HEADERS, rows)]


def _or_error(value: str, runs: list[dict]) -> str:
    failed = next((r for r in runs if r.get("status") != "ok"), None)
    if failed is None:
        return value
    error = failed.get("error", "")
    return "out of memory" if "MemoryError" in error else failed.get("status", "error")


if __name__ == "__main__":
    sys.exit("run tools/bench.py (this module holds its conversion rows)")
