"""The conversion rows of the benchmark (tools/bench/convert_bench.py): both commands run on
a small real file and write the same output; the table renders. Never times anything."""

from __future__ import annotations

import argparse
import importlib.util
import shutil
import sys

import pytest

from tests.helpers.paths import DATA_DIR, REPO
from tests.helpers.reference import reference_python

BENCH = REPO / "tools" / "bench"


def _load(name: str, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


convert_bench = _load("tachyon_convert_bench", BENCH / "convert_bench.py")
bench = _load("tachyon_bench_for_convert", REPO / "tools" / "bench.py")


@pytest.mark.reference
@pytest.mark.slow
def test_cpython_and_ours_write_the_same_conversions(tmp_path):
    ref = reference_python()
    if ref is None:
        pytest.skip("needs the reference CPython 3.15 (tools/install-reference-cpython.sh)")
    shutil.copy(DATA_DIR / "threads_gil_blocking.bin", tmp_path / "small.bin")
    args = argparse.Namespace(repeat=1, collapsed_max_bytes=None)
    results = convert_bench.measure(bench, ref, sys.executable, tmp_path, ["small"], args)
    assert set(results) == {"small|collapsed", "small|pstats"}
    for value in results.values():
        assert [r["status"] for r in value["cpython"] + value["ours"]] == ["ok", "ok"], value
        assert value["same"] is True
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
