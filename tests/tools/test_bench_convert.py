"""The conversion rows of the benchmark (tools/bench/convert_bench.py): both commands run on
a small real file and write the same output; the table renders. Never times anything."""

from __future__ import annotations

import argparse
import shutil
import sys

import pytest

from tests.helpers.paths import DATA_DIR, REPO
from tests.helpers.reference import reference_python
from tests.helpers.tools import load_tool

BENCH = REPO / "tools" / "bench"



convert_bench = load_tool("tachyon_convert_bench", BENCH / "convert_bench.py")
bench = load_tool("tachyon_bench_for_convert", REPO / "tools" / "bench.py")


@pytest.mark.reference
@pytest.mark.slow
def test_cpython_and_ours_write_the_same_conversions(tmp_path):
    ref = reference_python()
    if ref is None:
        pytest.skip("needs the reference CPython 3.15 (tools/install-reference-cpython.sh)")
    shutil.copy(DATA_DIR / "threads_gil_blocking.bin", tmp_path / "small.bin")
    args = argparse.Namespace(repeat=1, collapsed_max_bytes=None)
    results = convert_bench.measure(bench, ref, sys.executable, tmp_path, ["small"], args)
    assert set(results) == {"small|collapsed", "small|pstats", "small|pprof"}
    for key, value in results.items():
        assert [r["status"] for r in value["cpython"] + value["ours"]] == ["ok", "ok"], value
        # pprof has no CPython writer: timed against its collapsed replay, nothing to compare
        assert value["same"] is (None if key == "small|pprof" else True), (key, value)
    lines = convert_bench.render(bench, {"small": {"sample_count": 10, "file_bytes": 1000}},
                                 results)
    assert any("| small" in line and "yes" in line for line in lines[-1].splitlines())


def test_render_says_when_a_run_failed():
    ok = {"status": "ok", "wall_s": 1.0, "rss_peak": 50e6}
    failed = {"status": "error", "error": "exit 1: MemoryError"}
    table = convert_bench.render(bench, {"big": {"sample_count": 5_000_000, "file_bytes": 9e6}},
                                 {"big|collapsed": {"cpython": [failed], "ours": [ok],
                                                    "same": None}})[-1]
    assert "out of memory" in table and "n/a" in table and "| big" in table
