"""``tachyon-format timeline FILE -o out.html``: per-thread lanes over time, coloured by
thread status, with the stack under the cursor."""

from __future__ import annotations

import argparse

from . import arguments, progress, streams


def add_parser(commands) -> None:
    parser = commands.add_parser(
        "timeline", help="a page of per-thread lanes over time, coloured by thread status",
        description="Write a self-contained timeline of FILE (a format with sample times: "
        "Tachyon, or pprof written with timestamps).")
    arguments.add_profile(parser)
    arguments.add_page(parser, "the .html to write ('-': standard output)")
    parser.add_argument("--max-buckets", type=int, default=2000,
                        help="time slots per lane (the page's size grows with it)")
    progress.add_option(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from tachyon_format.render.timeline import timeline  # (numpy: only when run)

    profile = progress.read_profile(args, args.file)
    streams.check_output(args.output, [args.file])
    with (streams.output_path(args.output, ".html") as output,
          progress.phase(args, f"drawing {args.output}")):
        timeline(profile, output, title=args.title, max_buckets=args.max_buckets)
    arguments.page_written(args)
    return 0
