"""Valgrind's ``callgrind_annotate`` as an oracle: what it reads in a callgrind file.

``totals(path, inclusive=...)`` runs it (``--auto=no``, every function: ``--threshold=100``)
and returns the program totals and, per ``file:function`` it prints, its costs. Tests skip,
with the reason, where the tool is missing (Debian package ``valgrind``)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

_COST = r"(?:[\d,]+ \(\s*[\d.]+%\)|[\d,]+|\.)"  # "1,234 (5.6%)"; "0" when the total is 0


def tool() -> str:
    """The path of ``callgrind_annotate``; skips the test where it is missing."""
    found = shutil.which("callgrind_annotate")
    if found is None:
        pytest.skip("callgrind_annotate not found (Debian package valgrind; tools/dev.sh test "
                    "installs it)")
    return found


def run(path: Path, *options: str) -> str:
    """callgrind_annotate's output for *path* (run from its folder, so that no file name is
    shortened); a warning on stderr (a line it could not read) fails the test."""
    done = subprocess.run([tool(), "--threshold=100", "--auto=no", *options, path.name],
                          cwd=path.parent, capture_output=True, text=True, timeout=120,
                          check=True)
    assert "WARNING" not in done.stderr, done.stderr
    return done.stdout


def totals(path: Path, *, num_events: int, inclusive: bool
           ) -> tuple[tuple[int, ...], dict[str, tuple[int, ...]]]:
    """The PROGRAM TOTALS and the costs per ``file:function`` callgrind_annotate prints."""
    text = run(path, f"--inclusive={'yes' if inclusive else 'no'}")
    row = re.compile(rf"^\s*((?:{_COST}\s+){{{num_events}}})(\S.*)$")
    program: tuple[int, ...] | None = None
    functions: dict[str, tuple[int, ...]] = {}
    for line in text.splitlines():
        found = row.match(line)
        if not found:
            continue
        columns = re.sub(r"\(\s*[\d.]+%\)", " ", found[1]).split()
        costs = tuple(0 if c == "." else int(c.replace(",", "")) for c in columns)
        assert len(costs) == num_events, line
        name = found[2].rstrip()
        if name.startswith("PROGRAM TOTALS"):  # "(calculated)" when the summary is 0
            program = costs
        else:
            assert name not in functions, f"{name} printed twice"
            functions[name] = costs
    assert program is not None, text
    return program, functions
