"""docs/formats/callgrind.md: its example runs (on a Tachyon golden file) and prints what it
shows, the formats it names are registered, and its links resolve."""

from __future__ import annotations

import contextlib
import io
import re
import shutil
from pathlib import Path

import tachyon_format
from tests.helpers.paths import DATA_DIR, REPO

PAGE = REPO / "docs" / "formats" / "callgrind.md"
TEXT = PAGE.read_text(encoding="utf-8")
BLOCKS = re.findall(r"```python\n(.*?)```", TEXT, flags=re.S)


def test_example_runs_and_prints_what_it_shows(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    shutil.copyfile(DATA_DIR / "threads_wall_zstd.bin", tmp_path / "python.bin")
    assert BLOCKS
    for block in BLOCKS:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(block, PAGE.name, "exec"), {})
        for line in block.splitlines():
            if "print(" in line and "#" in line:
                for word in line.split("#", 1)[1].split():
                    assert word in out.getvalue(), line
    assert tachyon_format.FORMATS["callgrind"].can_write


def test_options_table_matches_the_writer():
    import inspect

    from tachyon_format.formats.callgrind import writer

    accepted = set(inspect.signature(writer.dumps).parameters) - {"profile"}
    for name in accepted:
        assert f"`{name}`" in TEXT, name


def test_links_resolve_and_no_local_paths():
    for target in re.findall(r"\]\(([^)\s]+)\)", TEXT):
        if not re.match(r"[a-z]+:", target):
            assert (PAGE.parent / target.partition("#")[0]).resolve().is_file(), target
    assert str(REPO) not in TEXT and str(Path.home()) + "/" not in TEXT
