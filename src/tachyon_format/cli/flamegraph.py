"""``tachyon-format flamegraph FILE -o out.html``: an interactive flame graph (or SVG), of
one profile or of its difference from a baseline."""

from __future__ import annotations

import argparse

from . import arguments, progress, streams


def add_parser(commands) -> None:
    parser = commands.add_parser(
        "flamegraph", help="an interactive flame graph page (or --svg) of any profile",
        description="Write a self-contained flame graph of FILE (any format the library "
        "reads): click to zoom, search, tooltips with self and total samples.")
    arguments.add_profile(parser)
    arguments.add_page(parser, "the .html (or .svg) to write ('-': standard output)")
    parser.add_argument("--svg", action="store_true", help="a static SVG instead of a page")
    parser.add_argument("--diff", metavar="BASELINE",
                        help="colour by the change from BASELINE (shares of each total)")
    parser.add_argument("--force", action="store_true",
                        help="with --diff: compare profiles of different sampling modes")
    parser.add_argument("--icicle", action="store_true", help="the root at the top")
    arguments.add_sample_type(parser, "draw")
    arguments.add_profiler_frames(parser)
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
    arguments.page_written(args)
    return 0
