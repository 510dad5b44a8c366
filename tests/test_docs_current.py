"""docs/format/ is what tools/specgen.py renders from the schema now, and says what the spec says.

If this fails after a schema change, run ``python tools/specgen.py`` and commit the pages.
"""

from __future__ import annotations

import importlib.util
import inspect
import sys
from pathlib import Path

import construct as cs
import pytest

from tachyon_format.schema import primitives
from tachyon_format.schema import tachyon as T
from tests.helpers.paths import REPO

DOCS = REPO / "docs" / "format"


def _load_specgen():
    spec = importlib.util.spec_from_file_location("specgen", REPO / "tools" / "specgen.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("specgen", module)
    spec.loader.exec_module(module)
    return module


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
    assert sorted(specgen.render()) == sorted(p.name for p in DOCS.glob("*.md"))


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


def test_every_declaration_has_a_table():
    headings = {
        line[3:] for text in specgen.render().values() for line in text.splitlines()
        if line.startswith("## ")
    }
    declared = []
    for name, value in vars(T).items():
        if name.startswith("_") or name.endswith("_COMPILED") or name in vars(primitives):
            continue
        factory = inspect.isfunction(getattr(value, "__wrapped__", None)) and (
            value.__module__ == T.__name__)
        if isinstance(value, cs.Construct) or factory:
            declared.append(name)
    assert len(declared) >= 17
    assert [name for name in declared if name not in headings] == []


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
