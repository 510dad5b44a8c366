"""``tachyon-format flamegraph FILE -o out.html``: an interactive flame graph (or SVG), of
one profile or of its difference from a baseline."""

from __future__ import annotations

import argparse
import sys

from . import progress, streams


def add_parser(commands) -> None:
    parser = commands.add_parser(
        "flamegraph", help="an interactive flame graph page (or --svg) of any profile",
        description="Write a self-contained flame graph of FILE (any format the library "
        "reads): click to zoom, search, tooltips with self and total samples.")
    parser.add_argument("file", metavar="FILE", help="a profile of any format the library reads "
                        "('-': standard input)")
    parser.add_argument("-o", "--output", required=True,
                        help="the .html (or .svg) to write ('-': standard output)")
    parser.add_argument("--svg", action="store_true", help="a static SVG instead of a page")
    parser.add_argument("--diff", metavar="BASELINE",
                        help="colour by the change from BASELINE (shares of each total)")
    parser.add_argument("--force", action="store_true",
                        help="with --diff: compare profiles of different sampling modes")
    parser.add_argument("--icicle", action="store_true", help="the root at the top")
    parser.add_argument("--title", help="the page's title")
    parser.add_argument("--sample-type", help="the value to draw (default: samples)")
    parser.add_argument("--profiler-frames", action="store_true",
                        help="keep the profiler's own frames (left out, as CPython does)")
    streams.add_browser_option(parser)
    progress.add_option(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from tachyon_format.render import flamegraph as pictures  # (numpy: only when run)

    profile = progress.read_profile(args, args.file, aggregate=True)
    options = {"title": args.title, "sample_type": args.sample_type,
               "profiler_frames": args.profiler_frames}
    if args.diff:
        from tachyon_format.analysis.diff import check_comparable

        if args.svg:
            raise ValueError("--svg draws one profile; a diff is a page")
        baseline = progress.read_profile(args, args.diff, aggregate=True)
        check_comparable(baseline, profile, sample_type=args.sample_type, force=args.force,
                         remedy="--force compares them anyway")
    streams.check_output(args.output, [args.file] + ([args.diff] if args.diff else []))
    with (streams.output_path(args.output, ".svg" if args.svg else ".html") as output,
          progress.phase(args, f"drawing {args.output}")):
        if args.diff:
            pictures.flamegraph_diff(profile, baseline, output, icicle=args.icicle, **options)
        elif args.svg:
            pictures.flamegraph_svg(profile, output, **options)
        else:
            pictures.flamegraph(profile, output, icicle=args.icicle, **options)
    if args.output != "-":
        print(f"{args.file} -> {args.output}", file=sys.stderr)
    streams.open_in_browser(args, args.output)
    return 0
