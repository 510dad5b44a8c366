"""``tachyon-format convert IN OUT``: any profile format the library reads to any it writes."""

from __future__ import annotations

import argparse
import sys
import typing

import tachyon_format

from . import progress, streams


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
                        "'-O help' lists every format's options")
    progress.add_option(parser)
    parser.set_defaults(run=run)


def _option(text: str) -> tuple[str, str]:
    if text == "help":
        return "help", ""
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, not {text!r}")
    return key.replace("-", "_"), value


def writer_options(format_name: str, given: list[tuple[str, str]]) -> dict[str, object]:
    """The ``-O`` options as the writer of *format_name* takes them: each name checked, each
    value converted as its default (true/false, a number) or its choices say."""
    known = tachyon_format.FORMATS[format_name].write_options()
    options: dict[str, object] = {}
    for key, text in given:
        if key not in known:
            raise ValueError(f"the {format_name} writer has no option {key!r} (its options: "
                             f"{', '.join(known) or 'none'}; -O help lists them)")
        options[key] = _value(format_name, known[key], text)
    return options


def _value(format_name: str, parameter, text: str) -> object:
    choices = typing.get_args(parameter.annotation) if typing.get_origin(
        parameter.annotation) is typing.Literal else ()
    default = parameter.default
    where = f"-O {parameter.name} of the {format_name} writer"
    if choices:
        if text not in choices:
            raise ValueError(f"{where}: {text!r} is not one of {', '.join(map(str, choices))}")
        return text
    if isinstance(default, bool):
        if text.lower() not in ("true", "false"):
            raise ValueError(f"{where} is true or false, not {text!r}")
        return text.lower() == "true"
    for kind in (int, float):
        if isinstance(default, kind) or (default is None and _parses(text, kind)):
            try:
                return kind(text)
            except ValueError:
                raise ValueError(f"{where} is a number, not {text!r}") from None
    return text


def _parses(text: str, kind) -> bool:
    try:
        kind(text)
    except ValueError:
        return False
    return True


def options_help() -> str:
    """Every format's writer options, for ``-O help``."""
    lines = []
    for f in tachyon_format.FORMATS.values():
        known = f.write_options()
        if known:
            shown = ", ".join(f"{name}={'' if p.default is p.empty else p.default!r}"
                              for name, p in known.items())
            lines.append(f"{f.name}: {shown}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    if any(key == "help" for key, _ in args.options):
        print(options_help())
        return 0
    if args.output == "-" and args.to is None:
        raise ValueError("writing to standard output needs --to FORMAT")
    streams.check_output(args.output, [args.file])
    to = args.to or tachyon_format.output_format(args.output)
    options = writer_options(to, args.options)
    # read as convert() reads: per-stack counts where the output needs no timeline
    profile = progress.read_profile(args, args.file, format=args.from_,
                                    aggregate=not tachyon_format.FORMATS[to].timeline)
    with progress.phase(args, f"writing {args.output}"):
        written = tachyon_format.write(profile, args.output, format=to, **options)
    if args.output != "-":
        print(f"{args.file} -> {args.output} ({written})", file=sys.stderr)
    return 0
