"""docs/formats/chrome-trace.md: its example runs (on a Tachyon golden file) and prints what it
shows, every writer option is documented, and its links resolve."""

from __future__ import annotations

import tachyon_format
from tachyon_format.formats.chrome_trace import writer
from tests.helpers.docs_pages import (
    FORMAT_PAGES,
    links_resolve,
    options_documented,
    run_examples,
)

PAGE = FORMAT_PAGES / "chrome-trace.md"


def test_example_runs_and_prints_what_it_shows(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    run_examples(PAGE, tmp_path)
    assert tachyon_format.FORMATS["chrome-trace"].can_write


def test_options_table_matches_the_writer():
    options_documented(PAGE, writer.dumps, besides={"profile"})


def test_links_resolve_and_no_local_paths():
    links_resolve(PAGE)
