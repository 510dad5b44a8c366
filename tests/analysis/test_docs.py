"""docs/analysis.md: every code block runs on golden files, and what it shows printed is
what prints."""

from __future__ import annotations

import contextlib
import io
import re
import shutil

import pytest

from tests.helpers.paths import DATA_DIR, REPO

PAGE = REPO / "docs" / "analysis.md"
BLOCKS = re.findall(r"```python\n(.*?)```", PAGE.read_text(encoding="utf-8"), flags=re.S)
FILES = {"profile.bin": "threads_wall_zstd.bin", "run_101.bin": "threads_wall_zstd.bin",
         "run_102.bin": "deep_recursion_wall.bin"}


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_code_blocks_run_and_print_what_they_show(index, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for name, source in FILES.items():
        shutil.copy(DATA_DIR / source, tmp_path / name)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(BLOCKS[index], f"{PAGE.name} block {index}", "exec"), {})
    printed = out.getvalue().splitlines()
    shown = []
    lines = BLOCKS[index].splitlines()
    for number, line in enumerate(lines):
        if line.startswith("print(") and "#" in line:
            shown.append(line.split("#", 1)[1].strip())
        elif line.startswith("print(") and number + 1 < len(lines) and lines[
                number + 1].startswith("# "):
            shown.append(lines[number + 1][2:].strip())
        elif line.startswith("print("):
            shown.append(None)
    assert len(printed) == len(shown)
    for got, want in zip(printed, shown, strict=True):
        if want is not None:
            assert got == want


def test_there_are_examples():
    assert len(BLOCKS) >= 5
