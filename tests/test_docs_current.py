"""docs/format/ is what tools/specgen.py renders from the schema now, and says what the spec says.

If this fails after a schema change, run ``python tools/specgen.py`` and commit the pages. The
hand-written pages beside them (``specgen.PROSE_PAGES``) are checked for their listing in the
index, and every relative link in docs/format/ must reach an existing file and heading.
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import construct as cs
import pytest

from tachyon_format.schema import gperftools as G
from tachyon_format.schema import primitives
from tachyon_format.schema import tachyon as T
from tests.helpers.paths import REPO
from tests.helpers.tools import TOOLS, load_tool

DOCS = REPO / "docs" / "format"


def _load_specgen():
    return load_tool("specgen", TOOLS / "specgen.py")


specgen = _load_specgen()


def committed(name: str) -> str:
    return (DOCS / name).read_text(encoding="utf-8")


def table_rows(text: str, heading: str) -> list[list[str]]:
    """Cells of the first table under ``## heading`` (header and separator rows dropped)."""
    lines = text.splitlines()
    start = lines.index(f"## {heading}")
    rows = []
    for line in lines[start + 1 :]:
        if line.startswith("## "):
            break
        if line.startswith("|"):
            rows.append([cell.strip() for cell in line.strip("|").split(" | ")])
        elif rows:
            break
    return rows[2:]


def column(text: str, heading: str, index: int) -> list[str]:
    return [row[index] for row in table_rows(text, heading)]


# --- the pages are current ----------------------------------------------------------------------


def test_pages_are_current():
    diffs = specgen.stale(DOCS)
    assert not diffs, "docs/format is stale; run python tools/specgen.py\n" + "\n".join(diffs)


def test_every_generated_page_is_committed():
    pages = sorted(p.name for p in DOCS.glob("*.md"))
    generated = [name for name in pages if committed(name).startswith(specgen.GENERATED)]
    assert sorted(specgen.render()) == generated


def test_check_mode_detects_changes(tmp_path):
    out: list[str] = []
    assert specgen.main(["--out", str(tmp_path)], out=out.append) == 0
    assert specgen.main(["--check", "--out", str(tmp_path)], out=out.append) == 0
    page = tmp_path / "header.md"
    page.write_text(page.read_text(encoding="utf-8").replace("| 28 |", "| 29 |"), encoding="utf-8")
    out.clear()
    assert specgen.main(["--check", "--out", str(tmp_path)], out=out.append) == 1
    assert "-| 29 |" in "".join(out) and "+| 28 |" in "".join(out)
    (tmp_path / "tables.md").unlink()
    assert len(specgen.stale(tmp_path)) == 2


def test_pages_say_they_are_generated_and_name_no_local_path():
    for name, text in specgen.render().items():
        assert text.startswith(specgen.GENERATED + "\n"), name
        assert str(REPO) not in text and str(Path.home()) not in text, name


def declarations(module) -> list[str]:
    """Module-level constructs and cached factories of *module* (not imported ones)."""
    declared = []
    for name, value in vars(module).items():
        if name.startswith("_") or name.endswith("_COMPILED") or name in vars(primitives):
            continue
        factory = inspect.isfunction(getattr(value, "__wrapped__", None)) and (
            value.__module__ == module.__name__)
        if isinstance(value, cs.Construct) or factory:
            declared.append(name)
    return declared


def test_every_declaration_has_a_table():
    headings = {
        line[3:] for text in specgen.render().values() for line in text.splitlines()
        if line.startswith("## ")
    }
    declared = declarations(T)
    assert len(declared) >= 17
    assert [name for name in declared if name not in headings] == []


def test_every_gperftools_declaration_has_a_table_on_its_page():
    text = specgen.render()["gperftools.md"]
    headings = {line[3:] for line in text.splitlines() if line.startswith("## ")}
    declared = declarations(G)
    assert sorted(declared) == ["header", "profile", "record", "trailer"]
    assert set(declared) <= headings
    patterns = [name for name, value in vars(G).items() if isinstance(value, re.Pattern)]
    assert len(patterns) == 7
    assert [name for name in patterns if f"| `{name}` |" not in text] == []


# --- the hand-written pages and the links between pages -----------------------------------------


def local_paths() -> list[str]:
    """Prefixes that would name this machine: the checkout, the directory holding it, home."""
    paths = [str(REPO), str(Path.home()) + "/"]
    if REPO.parent != Path(REPO.anchor):
        paths.append(str(REPO.parent) + "/")
    return paths


def outside_code_blocks(text: str) -> list[str]:
    lines, fenced = [], False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif not fenced:
            lines.append(line)
    return lines


def github_anchor(heading: str) -> str:
    """GitHub's anchor for a heading: lowercase, punctuation but ``-`` and ``_`` dropped,
    spaces to ``-``; a link keeps its text and a code span its content."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).replace("`", "")
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


def headings(text: str) -> list[str]:
    return [match.group(1) for line in outside_code_blocks(text)
            if (match := re.match(r"#{1,6} +(.+?) *#* *$", line))]


def anchors(text: str) -> list[str]:
    """Every heading's anchor, in order; a repeated one gets ``-1``, ``-2``... as on GitHub."""
    seen: dict[str, int] = {}
    out = []
    for heading in headings(text):
        base = github_anchor(heading)
        count = seen.get(base, 0)
        out.append(base if count == 0 else f"{base}-{count}")
        seen[base] = count + 1
    return out


def links(text: str) -> list[str]:
    """Targets of the Markdown links outside code blocks and code spans."""
    targets = []
    for line in outside_code_blocks(text):
        line = re.sub(r"`[^`]*`", "", line)
        targets += re.findall(r"\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)", line)
    return targets


def test_github_anchor():
    assert github_anchor("Checks at open") == "checks-at-open"
    assert github_anchor("`get_info()`") == "get_info"
    assert github_anchor("REPEAT_ENTRY") == "repeat_entry"
    assert github_anchor("zstd framing (spec, §2.5)") == "zstd-framing-spec-25"
    assert anchors("# A\n## B\n```\n# not a heading\n```\n## B\n") == ["a", "b", "b-1"]


def test_prose_pages_are_listed_and_hand_written():
    hand_written = {p.name for p in DOCS.glob("*.md")} - set(specgen.render())
    assert hand_written == {page.file for page in specgen.PROSE_PAGES}
    index = committed("index.md")
    for page in specgen.PROSE_PAGES:
        text = committed(page.file)
        assert text.startswith(f"# {page.title}\n"), page.file
        assert specgen.GENERATED not in text, page.file
        assert not [p for p in local_paths() if p in text], page.file
        assert f"]({page.file})" in index, page.file


def test_headings_of_hand_written_pages_are_unique():
    """Code cites ``page.md#anchor``: a repeated heading would give an unstable ``-1`` anchor."""
    for page in specgen.PROSE_PAGES:
        found = [github_anchor(heading) for heading in headings(committed(page.file))]
        assert len(found) == len(set(found)), page.file


def test_relative_links_resolve():
    """Every relative link in docs/format/ names an existing file and, with #anchor, a heading."""
    broken = []
    for page in sorted(DOCS.glob("*.md")):
        for target in links(page.read_text(encoding="utf-8")):
            if re.match(r"[a-zA-Z][a-zA-Z0-9+.-]*:", target):  # https:, mailto: ...
                continue
            file, _, fragment = target.partition("#")
            dest = (page.parent / file).resolve() if file else page
            if not dest.is_relative_to(REPO) or not dest.exists():
                broken.append(f"{page.name}: {target} (no such file)")
            elif (fragment and dest.suffix == ".md"
                  and fragment not in anchors(dest.read_text(encoding="utf-8"))):
                broken.append(f"{page.name}: {target} (no such heading)")
    assert broken == []


def test_code_citations_resolve():
    """Code cites the format docs as ``docs/format/<page>.md#<anchor>``: each such citation
    in the package, the tools and the tests names an existing page and heading."""
    cited = re.compile(r"docs/format/([\w-]+\.md)(?:#([\w-]+))?")
    broken = []
    for root in ("src", "tools", "tests"):
        for path in sorted((REPO / root).rglob("*.py")):
            for page, fragment in cited.findall(path.read_text(encoding="utf-8")):
                dest = DOCS / page
                if not dest.is_file() or (
                        fragment and fragment not in anchors(dest.read_text(encoding="utf-8"))):
                    broken.append(f"{path.relative_to(REPO)}: docs/format/{page}#{fragment}")
    assert not broken


def test_example_page_shows_the_example_file():
    from tests.formats.tachyon.test_writer import EXAMPLE_BIN

    dump = committed("example.md").split("## Hex dump", 1)[1].split("```")[1]
    rows = [line.split(None, 1) for line in dump.strip().splitlines()]
    assert [int(offset, 16) for offset, _ in rows] == list(range(0, len(EXAMPLE_BIN), 16))
    assert bytes.fromhex(" ".join(hexes for _, hexes in rows)) == EXAMPLE_BIN


# --- the generated tables reproduce the spec's tables -------------------------------------------


def test_header_offsets_match_the_spec():
    text = committed("header.md")
    assert column(text, "header", 0) == [
        "0", "4", "8", "9", "10", "11", "12", "20", "28", "36", "40", "48", "56", "60"]
    assert column(text, "header", 1) == [f"`{n}`" for n in (
        "magic", "format_version", "py_major", "py_minor", "py_micro", "reserved",
        "start_time_us", "sample_interval_us", "sample_count", "thread_count",
        "string_table_offset", "frame_table_offset", "compression", "profiling_config")]
    types = column(text, "header", 2)
    assert types[0] == "const 0x54414348, u32 (native order)"
    assert types[1] == "u32 (native order)" and types[8] == "u64 (native order)"
    assert types[2:6] == ["u8"] * 4


def test_profiling_config_bits_match_the_spec():
    text = committed("header.md")
    rows = {row[1]: row[0] for row in table_rows(text, "profiling_config")}
    assert rows == {"`mode_plus_one`": "0..2", "`features_known`": "3",
                    "`capture_features`": "4..8", "`reserved`": "9..31"}


def test_footer_offsets_match_the_spec():
    text = committed("stats-and-footer.md")
    assert column(text, "footer", 0) == ["0", "4", "8", "16"]
    assert column(text, "footer", 2) == [
        "u32 (native order)", "u32 (native order)", "u64 (native order)", "bytes[16]"]


def test_stats_offsets_match_the_spec():
    text = committed("stats-and-footer.md")
    assert column(text, "stats", 0) == ["0", "8", "16", "24", "32", "36", "40"]
    assert column(text, "stats_trailer", 0) == ["0", "8", "12"]
    assert column(text, "stats_trailer", 2)[0] == 'const "TACHSTAT", bytes[8]'


def test_record_prefix_and_bodies_match_the_spec():
    text = committed("sample-region.md")
    assert column(text, "record_prefix", 0) == ["0", "8", "12"]
    assert column(text, "record", 0) == ["0", "13"]
    assert column(text, "FULL", 2) == [
        "uleb128 (u64)", "u8", "uleb128 (u32)", "uleb128 (u32) × depth"]
    assert column(text, "REPEAT", 2) == [
        "uleb128 (u32)", "[REPEAT_ENTRY](#repeat_entry) × count"]


def test_frame_table_matches_the_spec():
    text = committed("tables.md")
    assert column(text, "FRAME", 0) == ["0"] + ["-"] * 6
    assert column(text, "FRAME", 2) == (
        ["uleb128 (u32)"] * 2 + ["zigzag-leb128 (i32)"] * 4 + ["u8 (255 = None)"])


def test_legacy_header_offsets_match_the_spec():
    text = committed("legacy-layouts.md")
    assert column(text, "legacy_header", 0) == [
        "0", "4", "8", "9", "10", "11", "12", "20", "28", "32", "36", "44", "52", "56"]


@pytest.mark.parametrize(("heading", "names"), [
    ("Encoding", ["REPEAT", "FULL", "SUFFIX", "POP_PUSH"]),
    ("ThreadStatus", ["HAS_GIL", "ON_CPU", "UNKNOWN", "GIL_REQUESTED", "HAS_EXCEPTION",
                      "MAIN_THREAD"]),
])
def test_enum_tables(heading, names):
    text = committed("sample-region.md")
    assert column(text, heading, 0) == [f"`{n}`" for n in names]
    assert column(text, heading, 1) == [
        str(i) if heading == "Encoding" else str(1 << i) for i in range(len(names))]


def test_gperftools_tables_match_the_spec():
    """The spec (gperftools docs/cpuprofile-fileformat.adoc) counts in slots (words): header
    slots 0..4, a record's count, num_pcs and pcs from slot 2, a three-slot trailer."""
    text = committed("gperftools.md")
    assert column(text, "header", 0) == ["0", "1", "2", "3", "4"]
    assert column(text, "header", 1) == [f"`{n}`" for n in (
        "header_count", "num_header_slots", "version", "period_us", "padding")]
    assert column(text, "header", 2)[1] == "const 0x00000003, word (native order)"
    assert column(text, "record", 0) == ["0", "1", "2"]
    assert column(text, "record", 2)[2] == "word (native order) × num_pcs"
    assert column(text, "trailer", 2) == [
        f"const 0x0000000{v}, word (native order)" for v in (0, 1, 0)]
    assert column(text, "profile", 0) == ["0", "5", "-"]
    assert "Size: 5 words (20 or 40 bytes)." in text
    assert "[gperftools CPU profile](gperftools.md)" in committed("index.md")


def test_cli_reference_is_current():
    clidoc = load_tool("clidoc", TOOLS / "clidoc.py")
    assert clidoc.main(["--check"]) == 0, "docs/cli.md is stale: run python tools/clidoc.py"


def test_api_reference_is_current():
    apidoc = load_tool("apidoc", TOOLS / "apidoc.py")
    assert apidoc.main(["--check"]) == 0, "docs/api.md is stale: run python tools/apidoc.py"


def test_api_reference_covers_every_public_name():
    """Every name of ``tachyon_format.__all__`` and ``analysis.__all__`` has a heading, and
    every one of them has a docstring to show."""
    import tachyon_format
    from tachyon_format import analysis

    text = (REPO / "docs" / "api.md").read_text(encoding="utf-8")
    headings = [line for line in text.splitlines() if line.startswith("### ")]
    for module in (tachyon_format, analysis):
        for name in module.__all__:
            assert any(f"`{name}" in h or f"`{module.__name__}.{name}`" in h
                       for h in headings), name
    lines = text.splitlines()
    blank = [line for line, after in zip(lines[:-2], lines[2:], strict=True)
             if line.startswith("#### ") and (after == "" or after.startswith("#"))]
    assert blank == [], "members without a docstring"


@pytest.mark.parametrize("name", ["api.md", "cli.md", "quickstart.md", "benchmark.md"])
def test_links_of_the_reference_pages_resolve(name):
    """The generated references and the pages that point at them: every relative link names
    an existing file and, with #anchor, one of its headings."""
    page = REPO / "docs" / name
    broken = []
    for target in links(page.read_text(encoding="utf-8")):
        if re.match(r"[a-zA-Z][a-zA-Z0-9+.-]*:", target):
            continue
        file, _, fragment = target.partition("#")
        dest = (page.parent / file).resolve() if file else page
        missing_heading = (dest.exists() and fragment and dest.suffix == ".md"
                           and fragment not in anchors(dest.read_text(encoding="utf-8")))
        if not dest.exists() or missing_heading:
            broken.append(target)
    assert broken == []
