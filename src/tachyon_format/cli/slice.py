"""``tachyon-format slice FILE OUT``: the samples of FILE that pass the filters, written in
any format (a time window keeps every sample's time; Tachyon output needs one)."""

from __future__ import annotations

import argparse
import sys

import tachyon_format

from . import arguments, filters, progress, streams


def add_parser(commands) -> None:
    parser = commands.add_parser(
        "slice", help="keep the samples in a time window, of some threads or statuses, or "
        "matching a function; write them in any format")
    arguments.add_profile(parser)
    parser.add_argument("output", metavar="OUT", help="where to write ('-': standard output)")
    parser.add_argument("--to", metavar="FORMAT", choices=list(tachyon_format.FORMATS),
                        help="the output format (default: from OUT's name)")
    filters.add_arguments(parser)
    progress.add_option(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.output == "-" and args.to is None:
        raise ValueError("writing to standard output needs --to FORMAT")
    streams.check_output(args.output, [args.file])
    if args.to is None:
        tachyon_format.output_format(args.output)  # (refused before any reading)
    timeline = tachyon_format.FORMATS[args.to].timeline if args.to else True
    profile = progress.read_profile(args, args.file,
                                    aggregate=not (timeline or filters.needs_times(args)))
    sliced = filters.apply(profile, args)
    if not len(sliced.samples):
        filters.say_empty(args, profile)
    with progress.phase(args, f"writing {args.output}"):
        written = tachyon_format.write(sliced, args.output, format=args.to)
    if args.output != "-":
        print(f"{args.file} -> {args.output} ({written}, {len(sliced.samples)} of "
              f"{len(profile.samples)} rows)", file=sys.stderr)
    return 0
