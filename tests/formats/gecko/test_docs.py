"""docs/formats/gecko.md: its example runs, its option table names the writer's options, its
links resolve."""

from __future__ import annotations

import inspect
import re
import shutil

from tachyon_format.formats.gecko import writer
from tests.helpers.docs_pages import links_resolve
from tests.helpers.paths import DATA_DIR, REPO

PAGE = REPO / "docs" / "formats" / "gecko.md"
TEXT = PAGE.read_text(encoding="utf-8")
BLOCKS = re.findall(r"```python\n(.*?)```", TEXT, flags=re.S)


def test_example_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    shutil.copyfile(DATA_DIR / "threads_wall_zstd.bin", tmp_path / "profile.bin")
    for block in BLOCKS:
        exec(compile(block, PAGE.name, "exec"), {})
    assert (tmp_path / "profile.json").read_bytes() == (
        tmp_path / "profile.gecko.json").read_bytes()


def test_every_option_is_in_the_table():
    table = TEXT.split("## What CPython takes from the machine", 1)[1].split("\n## ", 1)[0]
    options = set(inspect.signature(writer.build).parameters) - {"profile"}
    assert options == set(re.findall(r"\(`(\w+)`\)", table))


def test_links_resolve_and_no_local_paths():
    links_resolve(PAGE)
