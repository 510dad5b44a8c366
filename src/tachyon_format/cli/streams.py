"""``-`` for standard input or output, for the commands that take file names."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator


def check_output(output: str, inputs: list[str], *, overwrite: bool = True) -> None:
    """Refuse to write *output* over one of the *inputs* (always) or over any existing file
    unless *overwrite* (ValueError)."""
    if output == "-":
        return
    for name in inputs:
        if name != "-" and _same_file(output, name):
            raise ValueError(f"refusing to write {output} over one of the inputs")
    if not overwrite and os.path.exists(output):
        raise ValueError(f"{output} exists: name the output with -o OUT, or add --overwrite "
                         "to write over it")


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.abspath(a) == os.path.abspath(b)


def add_browser_option(parser) -> None:
    parser.add_argument("--browser", action="store_true",
                        help="open the page in a web browser once it is written")


def open_in_browser(args, path: str | os.PathLike) -> None:
    """Open a written page in the user's web browser (with ``--browser``)."""
    if not getattr(args, "browser", False) or os.fspath(path) == "-":
        return
    import pathlib
    import webbrowser

    if not webbrowser.open(pathlib.Path(path).resolve().as_uri()):
        print(f"tachyon-format: no web browser to open {path} in", file=sys.stderr)


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
    import shutil
    import tempfile

    with tempfile.TemporaryDirectory(prefix="tachyon-format-") as scratch:
        path = os.path.join(scratch, "out" + suffix)
        yield path
        with open(path, "rb") as staged:
            sys.stdout.flush()
            shutil.copyfileobj(staged, sys.stdout.buffer)
            sys.stdout.buffer.flush()
