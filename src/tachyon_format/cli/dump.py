"""``tachyon-format dump FILE``: every sample as JSON lines, in CPython's own decode form."""

from __future__ import annotations

import argparse
import sys

import tachyon_format

from . import progress


def add_parser(commands) -> None:
    parser = commands.add_parser(
        "dump", help="every sample in the canonical JSON-lines form (CPython's own decode)")
    parser.add_argument("file", help="a profile (Tachyon; '-': standard input)")
    parser.add_argument("-o", "--output", help="write here instead of standard output ('-': "
                        "standard output)")
    progress.add_option(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from tachyon_format.render.canonical import write_canonical  # (numpy: only when run)

    profile = progress.read_profile(args, args.file)
    facts = tachyon_format.info(profile)
    if args.output and args.output != "-":
        with open(args.output, "w", encoding="utf-8", newline="\n") as out:
            write_canonical(profile, facts, out)
    else:
        write_canonical(profile, facts, sys.stdout)
    return 0
