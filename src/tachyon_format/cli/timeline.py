"""``tachyon-format timeline FILE -o out.html``: per-thread lanes over time, coloured by
thread status, with the stack under the cursor."""

from __future__ import annotations

import argparse
import sys

from . import progress, streams


def add_parser(commands) -> None:
    parser = commands.add_parser(
        "timeline", help="a page of per-thread lanes over time, coloured by thread status",
        description="Write a self-contained timeline of FILE (a format with sample times: "
        "Tachyon, or pprof written with timestamps).")
    parser.add_argument("file", metavar="FILE", help="a profile of any format the library reads "
                        "('-': standard input)")
    parser.add_argument("-o", "--output", required=True,
                        help="the .html to write ('-': standard output)")
    parser.add_argument("--title", help="the page's title")
    parser.add_argument("--max-buckets", type=int, default=2000,
                        help="time slots per lane (the page's size grows with it)")
    streams.add_browser_option(parser)
    progress.add_option(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from tachyon_format.render.timeline import timeline  # (numpy: only when run)

    profile = progress.read_profile(args, args.file)
    streams.check_output(args.output, [args.file])
    with (streams.output_path(args.output, ".html") as output,
          progress.phase(args, f"drawing {args.output}")):
        timeline(profile, output, title=args.title, max_buckets=args.max_buckets)
    if args.output != "-":
        print(f"{args.file} -> {args.output}", file=sys.stderr)
    streams.open_in_browser(args, args.output)
    return 0
