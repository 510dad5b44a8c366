"""The pprof benchmark's baseline collector and report (tools/bench/pprof_*.py); never runs
the benchmark itself."""

from __future__ import annotations

import pytest

import tachyon_format
from tachyon_format import compat
from tachyon_format.formats.pprof.writer import dumps
from tests.helpers.paths import DATA_DIR, REPO
from tests.helpers.pprof import canonical
from tests.helpers.tools import load_tool

BENCH = REPO / "tools" / "bench"



collector = load_tool("pprof_collector", BENCH / "pprof_collector.py")
pprof_bench = load_tool("tachyon_pprof_bench", BENCH / "pprof_bench.py")
bench = load_tool("tachyon_bench_for_pprof", REPO / "tools" / "bench.py")


@pytest.mark.parametrize("name", ["threads_gil_blocking", "deep_recursion_wall",
                                  "synthetic_edges_raw", "exceptions_mode_zstd"])
def test_the_baseline_collector_writes_what_we_write(name, tmp_path):
    """The CPython-path baseline does the same work as ours: the same samples, values,
    labels and locations (in its own order)."""
    out = tmp_path / "c.pb.gz"
    count = collector.convert(compat.BinaryReader, str(DATA_DIR / f"{name}.bin"), str(out))
    profile = tachyon_format.read(DATA_DIR / f"{name}.bin")
    assert count == len(profile.samples)
    theirs, ours = canonical(out.read_bytes()), canonical(dumps(profile))
    assert sorted(map(repr, theirs[1])) == sorted(map(repr, ours[1]))
    assert theirs[0][0] == ours[0][0]  # sample types


def test_status_names_agree_with_ours():
    from tachyon_format.formats.pprof.labels import status_name

    assert [collector.status_name(s) for s in range(256)] == [status_name(s)
                                                              for s in range(256)]


def test_go_reencode_without_go(monkeypatch, tmp_path):
    monkeypatch.setattr(pprof_bench.shutil, "which", lambda name: None)
    assert pprof_bench.go_reencode(tmp_path / "a", tmp_path / "b", tmp_path)["status"] == "n/a"


def test_render_makes_both_tables():
    run = {"status": "ok", "wall_s": 2.0, "rss_delta": 10e6, "out_bytes": 1e6,
           "samples": 5, "rss_peak": 20e6, "tracemalloc_peak": 5e6}
    fast = dict(run, wall_s=0.5)
    reading = {"file_bytes": 1e6, "read": [fast], "go": [run], "reencode": [fast],
               "traced": [fast]}
    results = {"mixed-1m": {"cpython_collector": [run], "ours_from_tachyon": [fast],
                            "ours": reading, "ts": reading}}
    lines = pprof_bench.render(bench, {"mixed-1m": {"sample_count": 10**6}}, results)
    text = "\n".join(lines)
    assert "| mixed-1m |          1.00M |" in text
    assert text.count("| mixed-1m |") == 3
    assert "4.0" in text  # 2.0 / 0.5
