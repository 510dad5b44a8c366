"""The heat map (``render/heatmap.py``, ``tachyon-format heatmap``): each line's samples over
its source, checked against the library's line table, and the pages loaded in headless
Chromium; a source that is not on this machine gets a note and the sampled lines."""

from __future__ import annotations

import html
import re

import pytest

import tachyon_format
from tachyon_format.analysis import function_table
from tachyon_format.cli import main
from tachyon_format.render.heatmap import heatmap as heatmap_of_lines
from tachyon_format.testing import ProfileBuilder
from tests.helpers.chromium import dump_dom, requires_chromium, root_attribute
from tests.helpers.paths import DATA_DIR

SOURCE = """def leaf():
    return sum(range(100))


def middle():
    return leaf() + leaf()


def main():
    for _ in range(3):
        middle()
"""


def heatmap(profile, directory):
    return heatmap_of_lines(function_table(profile, "line"), directory)


def profile_of(path) -> tachyon_format.Profile:
    builder = ProfileBuilder()
    stacks = [[f"{path}:11 main", f"{path}:6 middle", f"{path}:2 leaf"]] * 6 + [
        [f"{path}:11 main", f"{path}:6 middle"]] * 3 + [[f"{path}:11 main"]]  # (outermost first)
    for t, stack in enumerate(stacks):
        builder.sample(thread=1, t=1000 * (t + 1), stack=stack)
    return builder.profile()


def rows(page: str) -> dict[int, tuple[str, str, str]]:
    """line -> (self, cumulative, source text) of a file page."""
    found = re.findall(r'<tr id="L(\d+)"[^>]*><td class="num">\d+</td><td class="num">([^<]*)'
                       r'</td><td class="num">([^<]*)</td><td class="num">[^<]*</td>'
                       r'<td class="src">([^<]*)</td></tr>', page)
    return {int(n): (own, cumulative, text) for n, own, cumulative, text in found}


def test_lines_over_their_source(tmp_path):
    source = tmp_path / "app.py"
    source.write_text(SOURCE)
    pages = heatmap(profile_of(source), tmp_path / "heat")
    assert [p.name for p in pages] == ["index.html", "file_0000.html"]
    page = pages[1].read_text()
    lines = rows(page)
    assert len(lines) == SOURCE.count("\n")  # every line of the source
    assert lines[2] == ("6", "6", "    return sum(range(100))")
    assert lines[6][1] == "9" and lines[11][:2] == ("1", "10")
    assert lines[1] == ("", "", "def leaf():")
    assert "not on this machine" not in page
    index = pages[0].read_text()
    assert 'href="file_0000.html"' in index and str(source) in index


def test_counts_are_the_line_table(tmp_path):
    profile = tachyon_format.read(DATA_DIR / "deep_recursion_wall.bin")
    pages = heatmap(profile, tmp_path / "heat")
    table = function_table(profile, "line")
    seen = {}
    for page in pages[1:]:
        text = page.read_text()
        name = html.unescape(re.search(r"<h1>([^<]*)</h1>", text).group(1))
        for lineno, (own, _, _) in rows(text).items():
            seen[(name, lineno)] = int(own or 0)
    for filename, lineno, own in zip(table["filename"].tolist(), table["lineno"].tolist(),
                                     table["self"].tolist(), strict=True):
        if lineno > 0:
            assert seen[(filename, lineno)] >= own  # (a line of two functions: summed)
    assert sum(seen.values()) == sum(o for o, n in zip(table["self"].tolist(),
                                                       table["lineno"].tolist(), strict=True)
                                     if n > 0)


def test_a_source_not_here_gets_a_note(tmp_path):
    pages = heatmap(tachyon_format.read(DATA_DIR / "threads_wall_zstd.bin"), tmp_path / "h")
    page = next(p for p in pages[1:] if "/app/" in p.read_text()).read_text()
    assert "not on this machine" in page
    assert all(own or cumulative for own, cumulative, _ in rows(page).values())


def test_a_profile_without_lines_is_refused(tmp_path):
    builder = ProfileBuilder().sample(thread=1, t=1, stack=["<GC>"])
    with pytest.raises(ValueError, match="line numbers"):
        heatmap(builder.profile(), tmp_path / "h")


def test_the_command(tmp_path, capsys):
    source = tmp_path / "app.py"
    source.write_text(SOURCE)
    recording = tmp_path / "p.bin"
    tachyon_format.write(profile_of(source), recording)
    assert main(["heatmap", str(recording), "-o", str(tmp_path / "out")]) == 0
    assert "(1 source files)" in capsys.readouterr().err
    assert (tmp_path / "out" / "index.html").exists()
    assert main(["heatmap", str(recording), "-o", "-"]) == 1


@requires_chromium
def test_the_pages_load_in_chromium(tmp_path):
    source = tmp_path / "app.py"
    source.write_text(SOURCE)
    pages = heatmap(profile_of(source), tmp_path / "heat")
    for path in pages:
        dom = dump_dom(path)
        assert root_attribute(dom, "data-errors") == ""
    dom = dump_dom(pages[1])
    assert 'id="L2"' in dom and "return sum(range(100))" in dom
    hot = re.search(r'<tr id="L2" style="background:\s*rgba\(255,\s*96,\s*0,\s*([\d.]+)\)', dom)
    cool = re.search(r'<tr id="L11" style="background:\s*rgba\(255,\s*96,\s*0,\s*([\d.]+)\)',
                     dom)
    assert hot and cool and float(hot.group(1)) < float(cool.group(1))  # (11 has all 10)
