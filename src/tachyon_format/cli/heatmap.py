"""``tachyon-format heatmap FILE -o DIR``: a line-level heat map of FILE (any format with line
numbers), as CPython 3.15's ``replay --heatmap`` writes: an index of the source files and a
page per file with each line's samples over its source."""

from __future__ import annotations

import argparse
import sys

from . import progress, streams


def add_parser(commands) -> None:
    parser = commands.add_parser(
        "heatmap", help="a directory of pages: every source line with its samples",
        description="Write a line-level heat map of FILE into DIR: index.html lists the "
        "source files by samples, and a page per file shows its source (read from the path the "
        "profile recorded, where it exists here) with each line's self and cumulative samples.")
    parser.add_argument("file", metavar="FILE", help="a profile of any format with line numbers "
                        "('-': standard input)")
    parser.add_argument("-o", "--output", metavar="DIR", required=True,
                        help="the directory to write the pages into (created if needed)")
    parser.add_argument("--title", help="the index page's title")
    parser.add_argument("--sample-type", help="the value to count (default: samples)")
    parser.add_argument("--profiler-frames", action="store_true",
                        help="keep the profiler's own frames (left out, as CPython does)")
    streams.add_browser_option(parser)
    progress.add_option(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from tachyon_format.analysis import function_table
    from tachyon_format.render.heatmap import heatmap  # (numpy: only when run)

    if args.output == "-":
        raise ValueError("a heat map is a directory of pages: give -o DIR")
    profile = progress.read_profile(args, args.file, aggregate=True)
    with progress.phase(args, f"writing {args.output}"):
        lines = function_table(profile, "line", sample_type=args.sample_type,
                               filter_internal=not args.profiler_frames)
        pages = heatmap(lines, args.output, title=args.title)
    print(f"{args.file} -> {pages[0]} ({len(pages) - 1} source files)", file=sys.stderr)
    streams.open_in_browser(args, pages[0])
    return 0
