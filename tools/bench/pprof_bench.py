"""pprof rows of ``tools/bench.py``: Tachyon -> pprof, and reading pprof into columns.

For each Tachyon input, in fresh processes, measurements taken in turn:

- Tachyon -> pprof: CPython 3.15's ``BinaryReader.replay()`` into the Python collector of
  ``pprof_collector.py`` (protobuf classes, gzip), against ours
  (``write(read(f, aggregate=True), "x.pb.gz")``), and with ``--pprof-baseline DIR`` the same
  conversion by an earlier checkout in DIR (before / after, in turn);
- the aggregated read against CPython's replay into a no-op collector and our full read;
- reading the pprof file ours wrote (aggregated, and with ``timestamps=True``: a sample each)
  into columns, and re-encoding it (read + write), against ``go tool pprof -proto`` re-encoding
  the same file (Go run with private HOME/GOCACHE, no symbolization).

The reference interpreter gets protobuf in a private directory (``--target``, pip of the
development Python, wheels for CPython 3.15).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
WORKER = HERE / "pprof_worker.py"
SRC = HERE.parents[1] / "src"
DEPS = Path("~/.cache/tachyon-format/py315-deps").expanduser()
PROTOBUF_DEPS = Path("~/.cache/tachyon-format/py315-pprof").expanduser()


def reference_env() -> dict[str, str]:
    """PYTHONPATH for the reference interpreter: protobuf, numpy/construct, our source."""
    if not (PROTOBUF_DEPS / "google" / "protobuf").is_dir():
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--target",
                        str(PROTOBUF_DEPS), "--python-version", "3.15", "--implementation",
                        "cp", "--only-binary=:all:", "protobuf"], check=True)
    path = os.pathsep.join(str(p) for p in (PROTOBUF_DEPS, DEPS, SRC))
    return dict(os.environ, PYTHONPATH=path)


def go_reencode(source: Path, out: Path, home: Path) -> dict:
    """``go tool pprof -proto SOURCE > OUT``: wall time and the child's peak RSS."""
    if shutil.which("go") is None:
        return {"status": "n/a", "error": "go is not installed"}
    env = dict(os.environ, HOME=str(home), GOCACHE=str(home / "cache"),
               GOPATH=str(home / "go"), PPROF_TMPDIR=str(home / "tmp"))
    t0 = time.perf_counter()
    with open(out, "wb") as f:
        proc = subprocess.Popen(["go", "tool", "pprof", "-symbolize=none", "-proto",
                                 str(source)], stdout=f, stderr=subprocess.PIPE, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status):
        return {"status": "error", "error": proc.stderr.read().decode()[-300:]}
    return {"status": "ok", "wall_s": wall, "rss_peak": usage.ru_maxrss * 1024,
            "out_bytes": out.stat().st_size}


def measure(bench, ref: str, dev: str, data_dir: Path, names: list[str], args) -> dict:
    """Every pprof measurement for the Tachyon inputs *names* (``bench`` is tools/bench.py's
    module, for its runners)."""
    env = reference_env()
    home = Path(tempfile.mkdtemp(prefix="gohome-"))
    try:
        with tempfile.TemporaryDirectory(dir=data_dir, prefix="pprof-") as tmp:
            return {name: _measure_one(bench, ref, env, dev, data_dir / f"{name}.bin",
                                       Path(tmp), home, args) for name in names}
    finally:
        shutil.rmtree(home, ignore_errors=True)


def _measure_one(bench, ref, env, dev, source: Path, tmp: Path, home: Path, args) -> dict:
    out = {k: tmp / f"{source.stem}.{k}.pb.gz" for k in ("cpython", "ours", "ts", "reenc",
                                                          "go", "baseline")}
    bench.log(f"pprof: measuring {source.stem}")
    measurements = [
        ("CPython replay -> pprof collector", lambda: _run(
            ref, env, ["cpython-collector", str(source), str(out["cpython"])])),
        ("ours Tachyon -> pprof", lambda: _ours(
            dev, ["ours-from-tachyon", str(source), str(out["ours"])]))]
    baseline = getattr(args, "pprof_baseline", None)
    if baseline is not None:
        # (this worker, the earlier checkout's package: the same clock and imports)
        measurements.append(("baseline Tachyon -> pprof", lambda: _run(
            dev, dict(os.environ, PYTHONPATH=str(baseline.resolve() / "src")),
            ["ours-from-tachyon", str(source), str(out["baseline"]), "--full-read"])))
    runs = _in_turn(bench, args.repeat, measurements)
    row = {"cpython_collector": runs[0], "ours_from_tachyon": runs[1]}
    if baseline is not None:
        row["baseline_from_tachyon"] = runs[2]
    replay, full, counted = _in_turn(bench, args.repeat, [
        ("CPython replay no-op", lambda: bench.run_worker(ref, ["cpython-replay",
                                                                str(source)])),
        ("ours read()", lambda: _ours(dev, ["ours-read-tachyon", str(source)])),
        ("ours read(aggregate=True)", lambda: _ours(
            dev, ["ours-read-tachyon", str(source), "--aggregate"]))])
    row["aggregate_read"] = {"cpython_replay": replay, "ours_read": full,
                             "ours_aggregate": counted}
    if getattr(args, "pprof_convert_only", False):
        return row
    _ours(dev, ["ours-from-tachyon", str(source), str(out["ts"]), "--timestamps"])
    for kind in ("ours", "ts"):
        if out[kind].exists():
            row[kind] = _measure_reading(bench, dev, out[kind], out, home, args)
    return row


def _in_turn(bench, n: int, measurements: list) -> list[list[dict]]:
    """Like ``bench._alternate``, for any number of measurements: each of them once per
    round, *n* rounds."""
    runs: list[list[dict]] = [[] for _ in measurements]
    for i in range(n):
        for (what, fn), out in zip(measurements, runs, strict=True):
            if out and out[-1].get("status") != "ok":
                continue
            out.append(fn())
            bench._log_run(what, i, n, out[-1])
    return runs


def _measure_reading(bench, dev, pprof: Path, out: dict, home: Path, args) -> dict:
    read, go = bench._alternate(
        args.repeat,
        (f"ours read {pprof.name}", lambda: _ours(dev, ["ours-read", str(pprof)])),
        (f"go tool pprof -proto {pprof.name}", lambda: go_reencode(pprof, out["go"], home)))
    reencode = bench._repeat(args.repeat, f"ours re-encode {pprof.name}", lambda: _ours(
        dev, ["ours-reencode", str(pprof), str(out["reenc"])]))
    traced = bench._repeat(1, f"ours read {pprof.name} under tracemalloc", lambda: _ours(
        dev, ["ours-read", str(pprof), "--tracemalloc"]))
    return {"file_bytes": pprof.stat().st_size, "read": read, "go": go, "reencode": reencode,
            "traced": traced}


def _ours(dev: str, args: list[str]) -> dict:
    return _run(dev, None, args)


def _run(python: str, env: dict | None, args: list[str]) -> dict:
    import json

    proc = subprocess.run([python, str(WORKER), *args], capture_output=True, text=True,
                          env=env)
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith("BENCH-RESULT "):
            return json.loads(line[len("BENCH-RESULT "):])
    tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
    return {"status": "error", "error": f"exit {proc.returncode}: " + " | ".join(tail)}


HEADERS_CONVERT = ("input", "thread-samples", "CPython replay + collector s",
                   "CPython peak RSS Δ MB", "ours s", "ours peak RSS Δ MB", "× CPython",
                   "× CPython, median of pairs", "baseline s", "baseline × CPython",
                   "pprof MB (CPython / ours)")
HEADERS_AGGREGATE = ("input", "thread-samples", "distinct rows", "CPython replay no-op s",
                     "ours read() s", "ours read(aggregate=True) s", "× replay (read)",
                     "× replay (aggregate)", "ours peak RSS Δ MB (read / aggregate)")
HEADERS_READ = ("input", "pprof", "pprof MB", "pprof samples", "ours read s",
                "ours peak RSS Δ MB", "ours tracemalloc peak MB", "ours re-encode s",
                "go -proto s", "go peak RSS MB", "go / ours re-encode")


def render(bench, metas: dict, results: dict) -> list[str]:
    """The pprof sections of the report."""
    fmt, best, worst, ratio = bench.fmt_num, bench.best, bench.worst, bench.ratio
    mb = bench.fmt_mb
    convert_rows, read_rows, aggregate_rows = [], [], []
    for name, r in results.items():
        cpy, ours = best(r["cpython_collector"]), best(r["ours_from_tachyon"])
        base = best(r.get("baseline_from_tachyon", []))
        sizes = " / ".join(mb(worst(r[k], "out_bytes"), 2) for k in ("cpython_collector",
                                                                      "ours_from_tachyon"))
        convert_rows.append([name, bench.fmt_count(metas[name]["sample_count"]),
                             fmt(cpy, 2), mb(worst(r["cpython_collector"], "rss_delta")),
                             fmt(ours, 2), mb(worst(r["ours_from_tachyon"], "rss_delta")),
                             fmt(ratio(cpy, ours), 1),
                             fmt(bench.paired_median_ratio(r["cpython_collector"],
                                                           r["ours_from_tachyon"]), 1),
                             fmt(base, 2), fmt(ratio(cpy, base), 1), sizes])
        if "aggregate_read" in r:
            a = r["aggregate_read"]
            replay, full, counted = (best(a[k]) for k in ("cpython_replay", "ours_read",
                                                          "ours_aggregate"))
            rows = next((x.get("samples") for x in a["ours_aggregate"] if x.get("samples")),
                        None)
            aggregate_rows.append([
                name, bench.fmt_count(metas[name]["sample_count"]), bench.fmt_count(rows),
                fmt(replay, 3), fmt(full, 3), fmt(counted, 3), fmt(ratio(replay, full), 2),
                fmt(ratio(replay, counted), 2),
                f"{mb(worst(a['ours_read'], 'rss_delta'))} / "
                f"{mb(worst(a['ours_aggregate'], 'rss_delta'))}"])
        for kind, label in (("ours", "aggregated"), ("ts", "timestamps")):
            if kind not in r:
                continue
            k = r[kind]
            read, go, reenc = best(k["read"]), best(k["go"]), best(k["reencode"])
            samples = next((x.get("samples") for x in k["read"] if x.get("samples")), None)
            read_rows.append([name, label, mb(k["file_bytes"], 2), bench.fmt_count(samples),
                              fmt(read, 2), mb(worst(k["read"], "rss_delta")),
                              mb(worst(k["traced"], "tracemalloc_peak")), fmt(reenc, 2),
                              fmt(go, 2), mb(worst(k["go"], "rss_peak")),
                              fmt(ratio(go, reenc), 1)])
    return ["", "## Tachyon -> pprof (gzip'd, one sample per stack/thread/status)", "",
            bench.format_table(HEADERS_CONVERT, convert_rows), "",
            "## Aggregated read (`read(aggregate=True)`) against CPython's replay", "",
            bench.format_table(HEADERS_AGGREGATE, aggregate_rows), "",
            "## Reading pprof into columns, and re-encoding it (vs `go tool pprof -proto`)", "",
            bench.format_table(HEADERS_READ, read_rows)]
