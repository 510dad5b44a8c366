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


def add_option(parser: argparse.ArgumentParser, *, salvage: bool = True) -> None:
    parser.add_argument("-q", "--quiet", action="store_true",
                        help="no progress bar (there is none unless standard error is a "
                        "terminal)")
    if salvage:
        parser.add_argument("--salvage", action="store_true",
                            help="read what can be read of a broken or cut-short file "
                            "(Tachyon), and say on standard error what was lost")


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
    options: dict[str, Any] = {}
    if getattr(args, "salvage", False):
        options["strict"] = False
    if not wanted(args) or not isinstance(source, str | os.PathLike) or source == "-":
        yield options
        return
    import tachyon_format

    try:
        tachyon = (format or tachyon_format.sniff(source)) == "tachyon"
    except (OSError, TypeError):  # the read itself reports the path's problem
        tachyon = False
    if not tachyon:
        yield options
        return
    with bar(args, os.path.basename(os.fspath(source)), unit=" samples") as made:
        yield {**options, "progress": made}
    _report_salvage(args, source, options)


def _report_salvage(args: argparse.Namespace, source: Any, options: dict) -> None:
    """After a read with --salvage: nothing (what was lost is in the profile's extras, which
    the command reports itself through :func:`salvaged`)."""


@contextlib.contextmanager
def phase(args: argparse.Namespace, description: str) -> Iterator[None]:
    """A step with no count to show (writing an output, drawing a page): after
    :data:`DELAY_S`, a line saying what runs and for how long, refreshed by a helper thread
    until the step ends (then cleared), so that a long command never looks stuck."""
    if not wanted(args):
        yield
        return
    import threading

    done = threading.Event()
    drawn = threading.Event()  # (with no delay, the line is up before the step starts)

    def show() -> None:
        if done.wait(DELAY_S):
            drawn.set()
            return
        try:
            from tqdm import tqdm
        except ImportError:
            drawn.set()
            return
        with tqdm(total=None, desc=description, bar_format="{desc}: {elapsed}",
                  leave=False, file=sys.stderr) as line:
            drawn.set()
            while not done.wait(0.25):
                line.refresh()

    helper = threading.Thread(target=show, name="tachyon-format progress", daemon=True)
    helper.start()
    if DELAY_S <= 0:
        drawn.wait()
    try:
        yield
    finally:
        done.set()
        helper.join()


def read_profile(args: argparse.Namespace, path: str, *, aggregate: bool = False,
                 format: str | None = None):
    """``tachyon_format.read`` of *path* ('-': standard input) for a command: with its bar,
    its ``--salvage``, and what a salvage lost said on standard error."""
    import tachyon_format

    source = sys.stdin.buffer if path == "-" else path
    with reading(args, path, format) as options:
        profile = tachyon_format.read(source, aggregate=aggregate, format=format, **options)
    salvaged(path, profile)
    return profile


def salvaged(source: Any, profile) -> None:
    """Say on standard error what a salvaged read lost (nothing for a whole file)."""
    problems = profile.extras.get("salvage") if profile is not None else None
    if not problems:
        return
    name = "-" if not isinstance(source, str | os.PathLike) else os.fspath(source)
    for problem in problems:
        print(f"tachyon-format: {name}: salvage: {problem}", file=sys.stderr)
