"""``tachyon-format convert IN OUT``: any profile format the library reads to any it writes."""

from __future__ import annotations

import argparse
import sys

import tachyon_format

from . import progress


def add_parser(commands) -> None:
    parser = commands.add_parser(
        "convert", help="convert a profile to another format",
        description="Convert a profile. Formats are sniffed from the content of IN (then its "
        "name), and taken from the name of OUT; '-' is standard input or output. Inputs "
        "gzip'd as a whole are unpacked; an OUT ending in .gz is written gzip'd.",
        epilog="formats: " + "; ".join(
            f"{f.name} ({', '.join(f.extensions)})" for f in tachyon_format.FORMATS.values()))
    parser.add_argument("file", metavar="IN", help="the profile to read ('-': standard input)")
    parser.add_argument("output", metavar="OUT", help="where to write ('-': standard output)")
    parser.add_argument("--from", dest="from_", metavar="FORMAT",
                        choices=list(tachyon_format.FORMATS), help="the format of IN")
    parser.add_argument("--to", metavar="FORMAT", choices=list(tachyon_format.FORMATS),
                        help="the format to write (needed when OUT is '-')")
    parser.add_argument("-O", "--option", dest="options", metavar="KEY=VALUE",
                        action="append", default=[], type=_option,
                        help="an option of the output format's writer (repeatable); "
                        "values true/false and integers are converted, the rest are text")
    progress.add_option(parser)
    parser.set_defaults(run=run)


def _option(text: str) -> tuple[str, object]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, not {text!r}")
    lowered = value.lower()
    if lowered in ("true", "false"):
        return key.replace("-", "_"), lowered == "true"
    try:
        return key.replace("-", "_"), int(value)
    except ValueError:
        return key.replace("-", "_"), value


def run(args: argparse.Namespace) -> int:
    source = sys.stdin.buffer if args.file == "-" else args.file
    with progress.reading(args, args.file, args.from_) as read_options:
        written = tachyon_format.convert(source, args.output, to=args.to, from_=args.from_,
                                         read_options=read_options, **dict(args.options))
    if args.output != "-":
        print(f"{args.file} -> {args.output} ({written})", file=sys.stderr)
    return 0
