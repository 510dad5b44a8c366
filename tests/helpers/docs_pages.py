"""Checks every page under docs/formats/ gets: its Python examples run (on a Tachyon golden
file) and print what they show beside them, its writer's options are all documented, and
its links resolve without naming paths of the machine that made it."""

from __future__ import annotations

import contextlib
import inspect
import io
import re
import shutil
from collections.abc import Callable
from pathlib import Path

from .paths import DATA_DIR, REPO

FORMAT_PAGES = REPO / "docs" / "formats"


def python_blocks(text: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def run_examples(page: Path, directory: Path, *, profile_name: str = "python.bin") -> None:
    """Run *page*'s Python blocks in *directory* (the current one), with a Tachyon golden
    file there as *profile_name*; a ``print(...)  # words`` line must print those words."""
    shutil.copyfile(DATA_DIR / "threads_wall_zstd.bin", directory / profile_name)
    blocks = python_blocks(page.read_text(encoding="utf-8"))
    assert blocks, f"{page.name} has no Python example"
    for block in blocks:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(block, page.name, "exec"), {})
        for line in block.splitlines():
            if "print(" in line and "#" in line:
                for word in line.split("#", 1)[1].split():
                    assert word in out.getvalue(), line


def run_in_order(page: Path, directory: Path) -> str:
    """Run *page*'s Python blocks in order in one namespace, in *directory* (the current
    one) with a Tachyon golden file there as ``profile.bin``; what they printed."""
    shutil.copyfile(DATA_DIR / "threads_wall_zstd.bin", directory / "profile.bin")
    namespace: dict = {}
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        for index, block in enumerate(python_blocks(page.read_text(encoding="utf-8"))):
            exec(compile(block, f"{page.name} block {index}", "exec"), namespace)
    return printed.getvalue()


def options_documented(page: Path, function: Callable, *, besides: set[str]) -> None:
    """Every keyword of *function* but *besides* is named on *page* as code."""
    text = page.read_text(encoding="utf-8")
    for name in set(inspect.signature(function).parameters) - besides:
        assert f"`{name}`" in text, name


def links_resolve(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if not re.match(r"[a-z]+:", target):
            assert (page.parent / target.partition("#")[0]).resolve().is_file(), target
    assert str(REPO) not in text and str(Path.home()) + "/" not in text
