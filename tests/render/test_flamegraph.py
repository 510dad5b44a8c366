"""Flame graph pages loaded in a real browser (headless Chromium), the static SVG parsed, and
the difference page's baseline matched path by path."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

import pytest

import tachyon_format
from tachyon_format.render.calltree import call_tree
from tachyon_format.render.flamegraph import (
    baseline_totals,
    flamegraph,
    flamegraph_diff,
    flamegraph_svg,
)
from tachyon_format.testing import ProfileBuilder
from tests.helpers.chromium import dump_dom, requires_chromium, root_attribute, texts_of
from tests.helpers.paths import DATA_DIR

WALL = DATA_DIR / "threads_wall_zstd.bin"
DEEP = DATA_DIR / "deep_recursion_wall.bin"


def _widest_names(path, count=5) -> set[str]:
    """Function names of the collapsed file CPython's replay wrote for *path*, the most
    sampled first: what a reader of the picture looks for."""
    weight: dict[str, int] = {}
    collapsed = path.with_suffix(".collapsed.txt").read_text(encoding="utf-8")
    for line in collapsed.splitlines():
        stack, _, n = line.rpartition(" ")
        for frame in set(stack.split(";")[1:]):  # (the first is the thread)
            name = frame.split(":")[-2] if frame.count(":") >= 2 else frame
            weight[name] = weight.get(name, 0) + int(n)
    return set(sorted(weight, key=weight.get, reverse=True)[:count])


@requires_chromium
@pytest.mark.parametrize("source", [WALL, DEEP], ids=lambda p: p.stem)
def test_the_page_renders_in_chromium_with_the_frames(source, tmp_path):
    out = tmp_path / "flame.html"
    flamegraph(tachyon_format.read(source), out, title=f"{source.stem} </script>")
    dom = dump_dom(out)
    assert root_attribute(dom, "data-errors") == ""
    assert int(root_attribute(dom, "data-rendered")) > 1
    shown = set(texts_of(dom, "n"))
    assert _widest_names(source) <= shown
    assert f"{source.stem} &lt;/script&gt;" in dom  # the title went in as text


@requires_chromium
@pytest.mark.parametrize("icicle", [False, True])
def test_a_deep_graph_opens_on_its_root(tmp_path, icicle):
    """A flame graph grows upwards from its root at the bottom: a stack taller than the
    window must open scrolled down to the root (an icicle has it at the top)."""
    builder = ProfileBuilder()
    stack = [f"deep.py:{level} level_{level}" for level in range(250)]
    for t in range(20):
        builder.sample(thread=1, t=1000 * t, stack=stack[t % 3:])
    out = tmp_path / "deep.html"
    flamegraph(builder.profile(), out, icicle=icicle)
    dom = dump_dom(out)
    assert root_attribute(dom, "data-errors") == ""
    scrolled = int(root_attribute(dom, "data-scrolled") or 0)
    assert (scrolled == 0) if icicle else (scrolled > 1000), scrolled


@requires_chromium
def test_search_and_zoom_from_the_address(tmp_path):
    profile = tachyon_format.read(WALL)
    tree = call_tree(profile)
    out = tmp_path / "flame.html"
    flamegraph(profile, out)
    worker = [i for i in range(len(tree)) if tree.name(i) == "recursive_worker"]
    dom = dump_dom(out, f"#search=recursive_worker&zoom={worker[0]}")
    assert root_attribute(dom, "data-errors") == ""
    highlighted = re.findall(r'<div class="n[^"]* m"[^>]*>([^<]*)</div>', dom)
    assert highlighted == ["recursive_worker"]
    matched = re.search(r'<span id="matched">([^<]*)</span>', dom).group(1)
    assert f"{int(tree.total[worker[0]]):,} samples" in matched
    # zoomed: only the node, its ancestors and its descendants are drawn
    drawn = set(texts_of(dom, "n"))
    assert "fib" in drawn and "hash_worker" not in drawn


@requires_chromium
def test_the_difference_page_renders(tmp_path):
    out = tmp_path / "diff.html"
    baseline = tachyon_format.read(DATA_DIR / "threads_cpu_opcodes_raw.bin")
    flamegraph_diff(tachyon_format.read(WALL), baseline, out)
    dom = dump_dom(out)
    assert root_attribute(dom, "data-errors") == ""
    assert "recursive_worker" in texts_of(dom, "n")


def test_a_profile_against_itself_has_its_own_totals_as_baseline():
    tree = call_tree(tachyon_format.read(DEEP))
    assert (baseline_totals(tree, tree) == tree.total).all()


def test_baseline_totals_match_paths_not_node_numbers():
    now = call_tree(tachyon_format.read(WALL))
    before = call_tree(tachyon_format.read(DATA_DIR / "threads_cpu_opcodes_raw.bin"))
    base = baseline_totals(now, before)
    theirs = before.paths()
    for node, path in enumerate(now.paths(), start=1):
        assert base[node] == theirs.get(path, (0, 0))[0], path


def test_the_page_data_is_flat_arrays_and_escaped(tmp_path):
    hostile = "</script><script>alert(1)</script>"
    profile = ProfileBuilder().sample(stack=["app.py:9 main", f"app.py:3 {hostile}"]).profile()
    out = tmp_path / "flame.html"
    flamegraph(profile, out)
    page = out.read_text(encoding="utf-8")
    assert "</script><script>alert(1)" not in page  # the name cannot end the data block
    data = json.loads(re.search(r'id="profile-data">(.*?)</script>', page, re.S).group(1))
    assert data["texts"][data["fname"][data["func"][2]]] == hostile
    assert all(isinstance(data[key], list) for key in ("parent", "func", "self"))


def test_svg_boxes_are_the_tree(tmp_path):
    profile = tachyon_format.read(WALL)
    tree = call_tree(profile)
    out = tmp_path / "flame.svg"
    flamegraph_svg(profile, out, width=1220, min_width=0)
    svg = ET.parse(out).getroot()
    ns = {"s": "http://www.w3.org/2000/svg"}
    groups = svg.findall("s:g", ns)
    assert len(groups) == len(tree)
    widths = {g.find("s:title", ns).text.split(" ")[0]: float(g.find("s:rect", ns).get("width"))
              for g in groups}
    assert widths["all"] == pytest.approx(1200, abs=0.01)
    worker = next(i for i in range(len(tree)) if tree.name(i) == "recursive_worker")
    assert widths["recursive_worker"] == pytest.approx(
        1200 * tree.total[worker] / tree.total[0], abs=0.01)
