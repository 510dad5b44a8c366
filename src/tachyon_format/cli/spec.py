"""``tachyon-format spec [FORMAT]``: the format reference, generated from the schema."""

from __future__ import annotations

import argparse
import sys

FORMATS = ("tachyon", "gperftools", "pprof")
"""The formats with a reference generated from a schema module (``specdoc.FORMAT_FILES``;
repeated here so that ``--help`` does not load construct)."""


def add_parser(commands) -> None:
    parser = commands.add_parser(
        "spec", help="the format reference (field tables generated from the schema), as "
        "Markdown")
    parser.add_argument("format", nargs="?", default="tachyon", choices=FORMATS,
                        help="which format's reference")
    parser.add_argument("--list", action="store_true",
                        help="list the formats and the pages each reference joins, and stop")
    parser.add_argument("-o", "--output", help="write here instead of standard output "
                        "('-' is standard output)")
    parser.set_defaults(run=run, file="spec")


def run(args: argparse.Namespace) -> int:
    from tachyon_format import specdoc  # (construct: only when run)

    if args.list:
        for name, files in specdoc.FORMAT_FILES.items():
            print(f"{name}: {', '.join(files)}")
        return 0
    text = specdoc.reference(args.format)
    if args.output and args.output != "-":
        with open(args.output, "w", encoding="utf-8", newline="\n") as out:
            out.write(text)
    else:
        sys.stdout.write(text)
    return 0
