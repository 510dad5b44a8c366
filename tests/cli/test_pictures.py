"""``tachyon-format flamegraph`` and ``timeline``: pages (and SVG) from files of any format,
with the expected frames in them; errors in one line."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

import tachyon_format
from tachyon_format.cli import main
from tests.helpers.paths import DATA_DIR

SOURCE = DATA_DIR / "threads_wall_zstd.bin"


def page_tree(path) -> list[tuple]:
    """The flame graph page's nodes as (parent, function, file, line, self), names as text."""
    text = path.read_text(encoding="utf-8")
    block = re.search(r'<script type="application/json"[^>]*>(.*?)</script>', text, re.S)
    data = json.loads(block.group(1).replace("<\\/", "</"))
    texts = data["texts"]

    def function(f: int) -> tuple:
        return texts[data["fname"][f]], texts[data["ffile"][f]], data["fline"][f]

    return [(parent, function(func) if func >= 0 else None, own)
            for parent, func, own in zip(data["parent"], data["func"], data["self"],
                                         strict=True)]


def test_flamegraph_page_of_a_tachyon_and_of_a_pprof_file(tmp_path, capsys):
    out = tmp_path / "flame.html"
    assert main(["flamegraph", str(SOURCE), "-o", str(out), "--title", "threads"]) == 0
    pprof = tmp_path / "p.pb.gz"
    tachyon_format.convert(SOURCE, pprof)
    out2 = tmp_path / "flame2.html"
    assert main(["flamegraph", str(pprof), "-o", str(out2), "--title", "threads"]) == 0
    assert "Queue.get" in out.read_text(encoding="utf-8")
    assert page_tree(out) == page_tree(out2)  # the same tree from either file
    assert f"{SOURCE} -> {out}" in capsys.readouterr().err


def test_flamegraph_svg_and_diff(tmp_path):
    svg = tmp_path / "flame.svg"
    assert main(["flamegraph", str(SOURCE), "-o", str(svg), "--svg"]) == 0
    assert ET.parse(svg).getroot().tag.endswith("svg")
    diff = tmp_path / "diff.html"
    base = DATA_DIR / "threads_gil_blocking.bin"  # (gil against wall: refused unless forced)
    assert main(["flamegraph", str(SOURCE), "--diff", str(base), "-o", str(diff)]) == 1
    assert not diff.exists()
    assert main(["flamegraph", str(SOURCE), "--diff", str(base), "-o", str(diff),
                 "--force"]) == 0
    assert diff.stat().st_size > 0


def test_timeline_page_and_a_profile_without_times(tmp_path, capsys):
    out = tmp_path / "timeline.html"
    assert main(["timeline", str(SOURCE), "-o", str(out)]) == 0
    assert "Queue.get" in out.read_text(encoding="utf-8")
    capsys.readouterr()
    counts = tmp_path / "p.collapsed"
    tachyon_format.convert(SOURCE, counts)
    assert main(["timeline", str(counts), "-o", str(tmp_path / "no.html")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(counts) in err and "time" in err
