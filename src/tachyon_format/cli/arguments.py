"""The arguments that several commands take, each declared once, so that the same flag has
the same meaning and help everywhere."""

from __future__ import annotations

import argparse
import sys

from . import streams

ANY_PROFILE = "a profile of any format the library reads ('-': standard input)"


def add_profile(parser: argparse.ArgumentParser, help: str = ANY_PROFILE) -> None:
    """The profile to read, ``FILE`` (as ``args.file``)."""
    parser.add_argument("file", metavar="FILE", help=help)


def add_sample_type(parser: argparse.ArgumentParser, use: str = "count") -> None:
    """``--sample-type``: the profile's value that the command takes, to *use* ("count",
    "draw", "compare")."""
    parser.add_argument("--sample-type", help=f"the value to {use} (default: samples)")


def add_profiler_frames(parser: argparse.ArgumentParser) -> None:
    """``--profiler-frames``: keep the frames of the profiler itself."""
    parser.add_argument("--profiler-frames", action="store_true",
                        help="keep the profiler's own frames (left out, as CPython does)")


def add_page(parser: argparse.ArgumentParser, output_help: str,
             title_help: str = "the page's title", *, metavar: str | None = None) -> None:
    """What a command that draws pages takes: where to write them (``-o``), their title,
    ``--browser``."""
    parser.add_argument("-o", "--output", metavar=metavar, required=True, help=output_help)
    parser.add_argument("--title", help=title_help)
    streams.add_browser_option(parser)


def page_written(args: argparse.Namespace) -> None:
    """Say which page was drawn from which file (not when the page went to standard
    output), and open it with ``--browser``."""
    if args.output != "-":
        print(f"{args.file} -> {args.output}", file=sys.stderr)
    streams.open_in_browser(args, args.output)
