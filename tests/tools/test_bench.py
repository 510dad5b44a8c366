"""The benchmark's pure helpers (tools/bench.py, tools/bench/worker.py); never runs it."""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from tests.helpers.paths import REPO
from tests.helpers.tools import TOOLS, load_tool

bench = load_tool("tachyon_bench", TOOLS / "bench.py")
worker = load_tool("tachyon_bench_worker", TOOLS / "bench" / "worker.py")


def _tachyon_files() -> list[Path]:
    """Small real CPython 3.15 files: the golden files, else the shared fixtures beside the
    repository (relative to it, never an absolute path)."""
    files = sorted((REPO / "tests" / "data").glob("*.bin"))
    files += sorted((REPO.parent / "shared" / "fixtures" / "tachyon" / "cpython-3.15.2")
                    .glob("*.bin"))
    return files


def test_format_table_aligns_columns():
    table = bench.format_table(("input", "s"), [("a", "1.5"), ("longer", "n/a")])
    assert table.splitlines() == [
        "| input  | s   |",
        "|:-------|----:|",
        "| a      | 1.5 |",
        "| longer | n/a |",
    ]
    with pytest.raises(ValueError):
        bench.format_table(("a", "b"), [("only one",)])


def test_number_helpers():
    assert bench.fmt_num(None) == "n/a"
    assert bench.fmt_num(1.23456, 3) == "1.235"
    assert bench.fmt_mb(2_500_000) == "2.5"
    assert [bench.fmt_count(n) for n in (999, 1234, 56_789, 5_000_000)] == [
        "999", "1.2k", "57k", "5.00M"]
    assert bench.ratio(3.0, 1.5) == 2.0
    assert bench.ratio(None, 1.0) is None and bench.ratio(1.0, None) is None
    runs = [{"status": "ok", "wall_s": 2.0, "rss_delta": 5},
            {"status": "ok", "wall_s": 1.0, "rss_delta": 9},
            {"status": "error", "wall_s": 0.1}]
    assert bench.best(runs) == 1.0
    assert bench.worst(runs, "rss_delta") == 9
    assert bench.status_of(runs) is None
    assert bench.status_of([{"status": "n/a"}]) == "n/a"
    assert bench.per_sample_above(1100, 100, 10) == 100.0
    assert bench.per_sample_above(None, 100, 10) is None
    assert bench.format_records({"repeat_records": 57059, "full_records": 12,
                                 "suffix_records": 1500, "pop_push_records": 0}) == (
        "57k / 12 / 1.5k / 0")


def test_select_inputs():
    assert bench.select_inputs(None, quick=True) == list(bench.QUICK_INPUTS)
    default = bench.select_inputs(None, quick=False)
    assert "mixed-20m" in default and not set(bench.SHORT_REAL) & set(default)
    assert bench.select_inputs("real-*,mixed-1m", quick=False) == [*bench.REAL, "mixed-1m"]
    with pytest.raises(SystemExit):
        bench.select_inputs("nope", quick=False)


def _header(**fields) -> bytes:
    values = {"magic": b"HCAT", "version": 1, "py_major": 3, "py_minor": 15, "py_micro": 2,
              "reserved": 0, "start_time_us": 0, "sample_interval_us": 100,
              "sample_count": 0, "thread_count": 0, "string_table_offset": 64,
              "frame_table_offset": 64, "compression": 0, "profiling_config": 0}
    values.update(fields)
    return struct.pack("<4sIBBBBQQQIQQII", *values.values())


def test_parse_header_and_uncompressed_region(tmp_path):
    data = _header(sample_count=7, string_table_offset=64 + 10, frame_table_offset=80)
    header = bench.parse_header(data)
    assert header["sample_count"] == 7 and header["byte_order"] == "<"
    path = tmp_path / "raw.bin"
    path.write_bytes(data + bytes(10))
    assert bench.region_size(path) == 10
    with pytest.raises(ValueError):
        bench.parse_header(b"XXXX" + data[4:])


@pytest.mark.parametrize("path", _tachyon_files() or [None], ids=lambda p: getattr(p, "name", ""))
def test_region_size_of_real_files(path):
    if path is None:
        pytest.skip("no small CPython 3.15 Tachyon files (tests/data or shared fixtures)")
    data = path.read_bytes()
    _, _, _, _, _, _, _, _, count, _, ofs_strings, _, compression, _ = struct.unpack_from(
        "<4sIBBBBQQQIQQII", data)
    region = data[64:ofs_strings]
    if compression == 1:
        try:
            from compression import zstd
        except ImportError:  # Python < 3.14
            from backports import zstd
        region = zstd.decompress(region)
    assert bench.region_size(path, chunk_size=1000) == len(region)
    assert bench.parse_header(data)["sample_count"] == count


def test_array_nbytes_counts_views_once():
    @dataclass
    class Columns:
        a: np.ndarray
        b: np.ndarray

    base = np.zeros(100, np.int64)
    result = {"cols": Columns(base[:10], base[50:]), "other": [np.ones(3, np.uint8)],
              "meta": {"name": "x", "n": 3}}
    assert worker.array_nbytes(result) == (800 + 3, 2)
    assert worker.array_nbytes(np.frombuffer(b"abcd", np.uint8)) == (4, 1)


def test_render_with_missing_measurements():
    args = bench.parse_args(["--quick"])
    metas = {"mixed-1m": {"file_bytes": 1_500_000, "region_bytes": 4_000_000,
                          "sample_count": 1_000_000}}
    ok = {"status": "ok", "wall_s": 1.5, "rss_delta": 8_000_000,
          "stats": {"repeat_records": 1, "full_records": 2, "suffix_records": 3,
                    "pop_push_records": 4}}
    reads = {"mixed-1m": {"cpython_replay": [ok], "cpython_collapsed": [{"status": "skipped"}],
                          "ours_read": [{"status": "n/a", "error": "missing"}],
                          "ours_tracemalloc": [{"status": "n/a", "error": "missing"}]}}
    text = bench.render({"cpu": "test"}, metas, reads, {}, {}, args)
    row = next(line for line in text.splitlines() if line.startswith("| mixed-1m"))
    assert "1.500" in row and "skipped" in row and "n/a" in row
    assert "`read/mixed-1m/ours_read`: n/a: missing" in text


def test_alternate_takes_runs_in_turn_and_stops_a_failing_side(monkeypatch):
    monkeypatch.setattr(bench, "log", lambda message: None)
    order = []

    def run(name, fail_at=None):
        def fn():
            order.append(name)
            ok = fail_at is None or order.count(name) < fail_at
            return {"status": "ok", "wall_s": 1.0} if ok else {"status": "error"}
        return fn

    a, b = bench._alternate(3, ("a", run("a")), ("b", run("b", fail_at=2)))
    assert order == ["a", "b", "a", "b", "a"]
    assert len(a) == 3 and [r["status"] for r in b] == ["ok", "error"]


def test_paired_median_ratio_pairs_runs_in_order():
    theirs = [{"status": "ok", "wall_s": s} for s in (2.0, 9.0, 3.0)]
    ours = [{"status": "ok", "wall_s": s} for s in (1.0, 3.0, 3.0)]
    assert bench.paired_median_ratio(theirs, ours) == 2.0  # median of 2, 3, 1
    assert bench.paired_median_ratio(theirs, [{"status": "error"}]) is None
