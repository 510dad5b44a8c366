"""``tachyon-format callers FILE FUNCTION`` and ``callees FILE FUNCTION``: who calls the
functions matching a pattern, and what they call, in how many samples."""

from __future__ import annotations

import argparse

from . import arguments, filters, progress
from .rows import BY, print_json, shown


def add_parser(commands) -> None:
    for direction, what in (("callers", "who calls FUNCTION"),
                            ("callees", "what FUNCTION calls")):
        parser = commands.add_parser(
            direction, help=f"{what}, in how many samples (each stack counts once)",
            description=f"{what.capitalize()}: per function (or line, file, opcode), the "
            "samples whose stack has that call. FUNCTION is a regular expression matched "
            "against the whole function name.")
        arguments.add_profile(parser)
        parser.add_argument("function", metavar="FUNCTION", type=filters.regex,
                            help="a regular expression of the whole function name")
        parser.add_argument("--in-file", metavar="REGEX", type=filters.regex,
                            help="only functions whose file name matches REGEX")
        parser.add_argument("-n", "--limit", type=int, default=20, help="rows (default 20)")
        parser.add_argument("--by", choices=BY, default="function")
        arguments.add_sample_type(parser)
        parser.add_argument("--json", action="store_true", help="one JSON object per row")
        filters.add_arguments(parser)
        progress.add_option(parser)
        parser.set_defaults(run=run, direction=direction)


def run(args: argparse.Namespace) -> int:
    from tachyon_format.analysis import neighbours

    if args.limit < 1:
        raise ValueError(f"-n {args.limit} shows no rows: give -n 1 or more")
    profile = filters.read(args.file, args)
    table = neighbours(profile, args.function, direction=args.direction, by=args.by,
                       filename=args.in_file, sample_type=args.sample_type)
    weight = "cumulative" if "cumulative" in table.names else table.names[-1]
    table = table.sort(weight).head(args.limit)
    if not len(table):
        print(f"{args.direction}: no function named like {args.function!r} is called in the "
              "samples" if args.direction == "callees" else
              f"{args.direction}: nothing calls a function named like {args.function!r}")
        return 0
    if args.json:
        print_json(table)
        return 0
    total = max(table.total, 1)
    counts = [name for name in table.names if table[name].dtype.kind in "iu"
              and name not in ("lineno", "opcode", "column")]
    keys = [name for name in table.names if name not in counts]
    print("  ".join(f"{name:>9}" for name in counts) + f" {'share':>6}  " + "  ".join(keys))
    for row in table.rows():
        values = dict(zip(table.names, row, strict=True))
        print("  ".join(f"{int(values[name]):>9}" for name in counts)
              + f" {100 * values[weight] / total:>5.1f}%  "
              + "  ".join(shown(k, values[k]) for k in keys))
    print(f"of {table.total} samples with a matching function")
    return 0
