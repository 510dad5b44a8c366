"""``tachyon-format merge -o OUT FILE...``: several profiles as one (e.g. the per-process files
``<base>_<pid>.bin`` that ``profiling.sampling run --subprocesses`` writes). The older form
``merge OUT FILE...`` still works, but never over an existing file unless ``--overwrite``
(``merge run_1.bin run_2.bin`` must not replace run_1.bin), and never over an input."""

from __future__ import annotations

import argparse
import sys

import tachyon_format

from . import progress, streams


def add_parser(commands) -> None:
    parser = commands.add_parser(
        "merge", help="merge profiles into one (refuses different modes or rates unless "
        "--force)")
    parser.add_argument("-o", "--output", metavar="OUT",
                        help="the merged profile ('-': standard output, with --to); without "
                        "-o the first FILE names it, and must not exist yet")
    parser.add_argument("file", metavar="FILE", nargs="+", help="the profiles to merge")
    parser.add_argument("--overwrite", action="store_true",
                        help="write over an existing OUT (never over an input)")
    parser.add_argument("--to", metavar="FORMAT", choices=list(tachyon_format.FORMATS),
                        help="the output format (default: from OUT's name)")
    parser.add_argument("--sample-type", help="merge only this value of profiles whose "
                        "sample types differ")
    parser.add_argument("--force", action="store_true",
                        help="merge profiles of different sampling modes or periods")
    progress.add_option(parser)
    parser.set_defaults(run=run)


REMEDIES = {"sample_type": "--sample-type TYPE merges by one of them",
            "force": "--force merges anyway"}


def run(args: argparse.Namespace) -> int:
    from tachyon_format.analysis.merge import check_compatible, merge, pid_of

    if args.output is None:  # the older form: merge OUT FILE...
        if len(args.file) < 2:
            raise ValueError("merge needs -o OUT and the files to merge")
        streams.check_output(args.file[0], args.file[1:], overwrite=args.overwrite)
        args.output, args.file = args.file[0], args.file[1:]
    else:
        streams.check_output(args.output, args.file)
    if args.output == "-" and args.to is None:
        raise ValueError("writing to standard output needs --to FORMAT")
    if args.to is None:
        tachyon_format.output_format(args.output)  # (refused before any reading)
    profiles = []
    for path in args.file:  # (a file may come twice)
        profiles.append(progress.read_profile(args, path))
    problems = check_compatible(profiles, sample_type=args.sample_type, force=args.force,
                                names=args.file, remedies=REMEDIES)
    if problems:
        raise ValueError("; ".join(problems))
    merged = merge(profiles, names=args.file, pids=[pid_of(path) for path in args.file],
                   sample_type=args.sample_type, force=args.force)
    with progress.phase(args, f"writing {args.output}"):
        written = tachyon_format.write(merged, args.output, format=args.to)
    if args.output == "-":
        return 0
    print(f"{len(profiles)} profiles -> {args.output} ({written}, "
          f"{len(merged.samples)} rows)", file=sys.stderr)
    return 0
