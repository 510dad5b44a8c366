"""``tachyon-format top``, ``slice``, ``merge`` and ``diff``: against the library's analysis
(itself checked against CPython's pstats), on Tachyon and on other formats."""

from __future__ import annotations

import json

import pytest

import tachyon_format
from tachyon_format import analysis
from tachyon_format.cli import main
from tests.helpers.paths import DATA_DIR

WALL = DATA_DIR / "threads_wall_zstd.bin"
GIL = DATA_DIR / "threads_gil_blocking.bin"


def json_rows(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines()]


@pytest.mark.parametrize("by", ["function", "line"])
def test_top_is_the_library_top(by, capsys):
    assert main(["top", str(WALL), "-n", "7", "--by", by, "--json"]) == 0
    expected = analysis.top(tachyon_format.read(WALL), 7, by)
    assert [tuple(r.values()) for r in json_rows(capsys.readouterr().out)] == expected.rows()


def test_top_text_and_filters(capsys, tmp_path):
    assert main(["top", str(WALL), "-n", "3"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[1].split()[-1] == "Condition.wait" and "total: 1361" in out
    profile = tachyon_format.read(WALL)
    window = analysis.slicing.time_window(profile, 0, 50_000)
    held = analysis.slicing.status(window, all_of=int(tachyon_format.ThreadStatus.HAS_GIL))
    assert main(["top", str(WALL), "--json", "--to-ms", "50", "--status", "has_gil"]) == 0
    rows = json_rows(capsys.readouterr().out)
    assert [tuple(r.values()) for r in rows] == analysis.top(held, 20).rows()
    pprof = tmp_path / "p.pb.gz"  # another format: the same table
    tachyon_format.convert(WALL, pprof)
    assert main(["top", str(pprof), "--json"]) == 0
    assert [tuple(r.values()) for r in json_rows(capsys.readouterr().out)] == \
        analysis.top(profile, 20).rows()


def test_unknown_status_is_a_usage_error(capsys):
    with pytest.raises(SystemExit):
        main(["top", str(WALL), "--status", "sleeping"])
    assert "unknown status 'sleeping'" in capsys.readouterr().err


def test_slice_writes_what_the_library_slices(tmp_path):
    out = tmp_path / "focus.bin"
    assert main(["slice", str(WALL), str(out), "--focus", "fib"]) == 0
    expected = analysis.slicing.focus(tachyon_format.read(WALL), "fib")
    back = tachyon_format.read(out)
    assert len(back.samples) == len(expected.samples) > 0
    assert analysis.top(back, 50).rows() == analysis.top(expected, 50).rows()
    text = tmp_path / "focus.collapsed"
    assert main(["slice", str(WALL), str(text), "--ignore", "fib"]) == 0
    assert b"fib" not in text.read_bytes()


def test_merge_counts_both_and_refuses_different_modes(tmp_path, capsys):
    out = tmp_path / "both.pb.gz"
    assert main(["merge", str(out), str(WALL), str(WALL)]) == 0
    merged = tachyon_format.read(out)
    assert int(merged.sample_counts().sum()) == 2 * len(tachyon_format.read(WALL).samples)
    capsys.readouterr()
    assert main(["merge", str(tmp_path / "x.pb.gz"), str(WALL), str(GIL)]) == 1
    assert "force" in capsys.readouterr().err
    assert main(["merge", "--force", str(tmp_path / "x.pb.gz"), str(WALL), str(GIL)]) == 0


def test_diff_against_itself_changes_nothing_and_modes_need_force(capsys):
    assert main(["diff", str(WALL), str(WALL), "--json"]) == 0
    rows = json_rows(capsys.readouterr().out)
    assert rows and all(r["delta_self_fraction"] == 0 for r in rows)
    assert main(["diff", str(WALL), str(GIL)]) == 1
    assert "force" in capsys.readouterr().err
    assert main(["diff", str(WALL), str(GIL), "--force", "-n", "2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3 and lines[0].split()[:3] == ["base%", "other%", "change"]
