"""docs/formats/collapsed.md: its examples run and say what they claim, its options table is
the writer's signature."""

from __future__ import annotations

import contextlib
import inspect
import io
import re
import shutil

from tachyon_format.formats.collapsed import writer
from tests.helpers.paths import DATA_DIR, REPO

PAGE = REPO / "docs" / "formats" / "collapsed.md"
TEXT = PAGE.read_text(encoding="utf-8")
BLOCKS = re.findall(r"```python\n(.*?)```", TEXT, flags=re.S)


def test_examples_run_and_say_what_they_claim(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    shutil.copyfile(DATA_DIR / "threads_wall_zstd.bin", tmp_path / "python.bin")
    assert len(BLOCKS) == 2
    namespace: dict = {}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        for block in BLOCKS:
            exec(compile(block, PAGE.name, "exec"), namespace)
    first, second = out.getvalue().splitlines()
    assert re.fullmatch(r"tid:\d+", first) and second == "function"
    assert (tmp_path / "python.collapsed").read_bytes() == (
        DATA_DIR / "threads_wall_zstd.collapsed.txt").read_bytes()
    assert namespace["back"].extras["collapsed"].style == "cpython"
    assert " (" in (tmp_path / "flame.folded").read_text().splitlines()[0]


def test_options_table_is_the_writer_signature():
    table = TEXT.split("### Options", 1)[1].split("\n## ", 1)[0]
    documented = set(re.findall(r"^\| `(\w+)`", table, flags=re.M))
    assert documented == set(inspect.signature(writer.dumps).parameters) - {"profile"}
