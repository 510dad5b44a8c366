"""docs/validation.md: its Python blocks run in order on a bundled profile (and print what the
page says they print), its links resolve, and its table names every check's message."""

from __future__ import annotations

import re

import tachyon_format
from tests.helpers.docs_pages import links_resolve, run_in_order
from tests.helpers.paths import REPO

PAGE = REPO / "docs" / "validation.md"
TEXT = PAGE.read_text(encoding="utf-8")


def test_python_blocks_run_in_order(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = run_in_order(PAGE, tmp_path)
    assert "inconsistent the footer's file size is not the file's size" in out
    assert "unreadable Invalid profiling mode in header: 7 60" in out
    assert "Unknown stack encoding: 9 (file offset 99, region offset 35, record 1)" in out
    assert "the file ends inside the sample region" in out
    assert "the profiler was killed before it finished writing" in out
    assert re.search(r"^<frame \d+>$", out, re.M)


def test_links_resolve():
    links_resolve(PAGE)


def test_the_table_names_the_messages_validate_gives():
    """Each distinct message start of the validation tests' cases is in the table."""
    from tests.formats.tachyon.test_validation import CASES

    for name, data, *_ in CASES:
        for problem in tachyon_format.validate(data, format="tachyon"):
            words = re.split(r"[:(\d]", problem.message)[0].strip()
            assert words in TEXT, (name, words)
