"""docs/formats/jsonl.md: its examples run and say what they claim; its tables name what the
code does; links resolve."""

from __future__ import annotations

import inspect
import re
import shutil

from tachyon_format.formats.jsonl import writer
from tests.helpers.docs_pages import links_resolve
from tests.helpers.paths import DATA_DIR, REPO

PAGE = REPO / "docs" / "formats" / "jsonl.md"
TEXT = PAGE.read_text(encoding="utf-8")
BLOCKS = re.findall(r"```python\n(.*?)```", TEXT, flags=re.S)


def test_examples_run_and_say_what_they_claim(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    shutil.copyfile(DATA_DIR / "threads_wall_zstd.bin", tmp_path / "profile.bin")
    namespace: dict = {}
    for block in BLOCKS:
        exec(compile(block, PAGE.name, "exec"), namespace)
    assert (tmp_path / "again.jsonl").read_bytes() == (tmp_path / "profile.jsonl").read_bytes()
    assert b'"run_id":"0123abcd"' in (tmp_path / "same-run.jsonl").read_bytes()
    assert namespace["leaf_counts"].sum() == namespace["facts"].samples_total


def test_options_table_matches_the_writer():
    table = TEXT.split("| option |", 1)[1].split("\n\n", 1)[0]
    documented = set(re.findall(r"^\| `(\w+)`", table, flags=re.M))
    assert documented == set(inspect.signature(writer.dumps).parameters) - {"profile"}


def test_links_resolve_and_no_local_paths():
    links_resolve(PAGE)
