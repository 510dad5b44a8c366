"""``tachyon-format merge OUT FILE...``: several profiles as one (e.g. the per-process files
``<base>_<pid>.bin`` that ``profiling.sampling run --subprocesses`` writes)."""

from __future__ import annotations

import argparse
import sys

import tachyon_format

from . import progress, streams


def add_parser(commands) -> None:
    parser = commands.add_parser(
        "merge", help="merge profiles into one (refuses different modes or rates unless "
        "--force)")
    parser.add_argument("output", metavar="OUT",
                        help="the merged profile ('-': standard output, with --to)")
    parser.add_argument("file", metavar="FILE", nargs="+", help="the profiles to merge")
    parser.add_argument("--to", metavar="FORMAT", choices=list(tachyon_format.FORMATS),
                        help="the output format (default: from OUT's name)")
    parser.add_argument("--sample-type", help="merge only this value of profiles whose "
                        "sample types differ")
    parser.add_argument("--force", action="store_true",
                        help="merge profiles of different sampling modes or periods")
    progress.add_option(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from tachyon_format.analysis.merge import merge, pid_of

    profiles = []
    for path in args.file:  # (a file may come twice)
        with progress.reading(args, path) as options:
            profiles.append(tachyon_format.read(streams.source(path), **options))
    merged = merge(profiles, names=args.file, pids=[pid_of(path) for path in args.file],
                   sample_type=args.sample_type, force=args.force)
    written = tachyon_format.write(merged, args.output, format=args.to)
    if args.output == "-":
        return 0
    print(f"{len(profiles)} profiles -> {args.output} ({written}, "
          f"{len(merged.samples)} rows)", file=sys.stderr)
    return 0
