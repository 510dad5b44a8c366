"""``-`` for standard input or output, for the commands that take file names."""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator


def source(name: str):
    """What to read *name* from: standard input's bytes for ``-``, else the path."""
    return sys.stdin.buffer if name == "-" else name


@contextlib.contextmanager
def output_path(name: str, suffix: str = "") -> Iterator[str]:
    """A path to write *name* to: *name* itself, or for ``-`` a private temporary file that
    is copied to standard output afterwards (the page and picture writers take a path)."""
    if name != "-":
        yield name
        return
    with tempfile.TemporaryDirectory(prefix="tachyon-format-") as scratch:
        path = os.path.join(scratch, "out" + suffix)
        yield path
        with open(path, "rb") as staged:
            sys.stdout.flush()
            shutil.copyfileobj(staged, sys.stdout.buffer)
            sys.stdout.buffer.flush()
