"""Progress bars on standard error for the long commands, with tqdm.

A bar appears only when standard error is a terminal, ``--quiet`` is not given, the work has
gone on for :data:`DELAY_S` (so that quick commands print nothing more), and tqdm is installed
(the ``progress`` extra; without it, no bar). tqdm is imported only then: it costs about 50 ms
in a fresh process, which a command that shows no bar should not pay. The bar is cleared when
the work ends, so what a command prints is the same with or without it.

Why tqdm: it has no dependencies (rich, the other candidate, brings pygments and
markdown-it-py for features a bar does not need), it is small, long maintained and widely
used, and its ``update(n)`` matches a callback of (done, total); its import costs about what
``rich.progress``'s does.

What is counted: samples decoded of the header's sample count for one Tachyon file (the
reader's ``progress`` hook); files done for commands over several files.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
from collections.abc import Iterator
from typing import Any

DELAY_S = 0.5
"""Seconds of work before a bar is drawn."""


def add_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-q", "--quiet", action="store_true",
                        help="no progress bar (there is none unless standard error is a "
                        "terminal)")


def wanted(args: argparse.Namespace) -> bool:
    """Whether this command may draw a bar: stderr is a terminal and ``--quiet`` is off."""
    if getattr(args, "quiet", False):
        return False
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):  # replaced or closed stderr
        return False


class Bar:
    """A bar drawn on the first update after :data:`DELAY_S`; call it as
    ``bar(done, total)``. ``print`` writes a line of output without tearing the bar."""

    def __init__(self, enabled: bool, description: str, unit: str) -> None:
        self.enabled = enabled
        self.description = description
        self.unit = unit
        self.started = time.monotonic()
        self.shown: Any = None  # the tqdm bar, once drawn

    def __call__(self, done: int, total: int | None = None) -> None:
        if not self.enabled:
            return
        if self.shown is None:
            if time.monotonic() - self.started < DELAY_S:
                return
            try:
                from tqdm import tqdm
            except ImportError:  # the optional extra is not installed: no bar
                self.enabled = False
                return
            self.shown = tqdm(total=total, desc=self.description, unit=self.unit,
                              unit_scale=True, leave=False, file=sys.stderr,
                              dynamic_ncols=True)
        if total is not None and total != self.shown.total:
            self.shown.total = total
        self.shown.update(done - self.shown.n)

    def print(self, line: str, *, error: bool = False) -> None:
        """*line* on standard output (or error), the bar redrawn below it."""
        out = sys.stderr if error else sys.stdout
        if self.shown is None:
            print(line, file=out)
        else:
            self.shown.write(line, file=out)

    def close(self) -> None:
        if self.shown is not None:
            self.shown.close()
            self.shown = None


@contextlib.contextmanager
def bar(args: argparse.Namespace, description: str, unit: str = "") -> Iterator[Bar]:
    """A :class:`Bar` for this command (drawing nothing unless :func:`wanted`), cleared at
    the end."""
    made = Bar(wanted(args), description, unit)
    try:
        yield made
    finally:
        made.close()


@contextlib.contextmanager
def reading(args: argparse.Namespace, source: Any, format: str | None = None
            ) -> Iterator[dict[str, Any]]:
    """Options for ``tachyon_format.read`` (or ``convert``'s ``read_options``) that drive a
    bar of samples decoded while *source* is read: ``{"progress": bar}`` for a Tachyon file
    given by path when a bar may be drawn, else ``{}`` (other readers have no such hook)."""
    if not wanted(args) or not isinstance(source, str | os.PathLike) or source == "-":
        yield {}
        return
    import tachyon_format

    try:
        tachyon = (format or tachyon_format.sniff(source)) == "tachyon"
    except (OSError, TypeError):  # the read itself reports the path's problem
        tachyon = False
    if not tachyon:
        yield {}
        return
    with bar(args, os.path.basename(os.fspath(source)), unit=" samples") as made:
        yield {"progress": made}
