"""``tachyon-format heatmap FILE -o DIR``: a line-level heat map of FILE (any format with line
numbers), as CPython 3.15's ``replay --heatmap`` writes: an index of the source files and a
page per file with each line's samples over its source."""

from __future__ import annotations

import argparse
import sys

from . import arguments, progress, streams


def add_parser(commands) -> None:
    parser = commands.add_parser(
        "heatmap", help="a directory of pages: every source line with its samples",
        description="Write a line-level heat map of FILE into DIR: index.html lists the "
        "source files by samples, and a page per file shows its source (read from the path the "
        "profile recorded, where it exists here) with each line's self and cumulative samples.")
    arguments.add_profile(parser, "a profile of any format with line numbers ('-': standard "
                          "input)")
    arguments.add_page(parser, "the directory to write the pages into (created if needed)",
                       "the index page's title", metavar="DIR")
    arguments.add_sample_type(parser)
    arguments.add_profiler_frames(parser)
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
