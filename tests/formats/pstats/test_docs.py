"""docs/formats/pstats.md: its examples run and print what they claim, its tables name the
writer's options and the report's sort keys, and it holds no local paths."""

from __future__ import annotations

import contextlib
import inspect
import io
import re
import shutil

import tachyon_format
from tachyon_format.formats.pstats import writer
from tachyon_format.formats.pstats.report import SORT_KEYS
from tests.helpers.docs_pages import links_resolve
from tests.helpers.paths import DATA_DIR, REPO

PAGE = REPO / "docs" / "formats" / "pstats.md"
TEXT = PAGE.read_text(encoding="utf-8")
BLOCKS = re.findall(r"```python\n(.*?)```", TEXT, flags=re.S)


def test_examples_run_and_print_what_they_claim(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    shutil.copyfile(DATA_DIR / "threads_wall_zstd.bin", tmp_path / "profile.bin")
    assert len(BLOCKS) == 3
    namespace: dict = {}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        for block in BLOCKS:
            exec(compile(block, PAGE.name, "exec"), namespace)
    assert namespace["stats"][("__sampled__",)] is True
    assert str(SORT_KEYS) in out.getvalue() and "Profile Stats:" in out.getvalue()
    assert tachyon_format.sniff(tmp_path / "old.pstats") == "pstats"


def test_the_options_table_is_the_writers():
    table = TEXT.split("### Options", 1)[1].split("\n## ", 1)[0]
    documented = set(re.findall(r"^\| `(\w+)`", table, flags=re.M))
    assert documented == set(inspect.signature(writer.build).parameters) - {"profile"}


def test_links_resolve_and_no_local_paths():
    links_resolve(PAGE)
