"""``tachyon-format diff BASE OTHER``: per function, the change of each profile's share of
its total (normalised by totals and sampling periods)."""

from __future__ import annotations

import argparse
import json

from . import filters, progress
from .top import BY, _plain


def add_parser(commands) -> None:
    parser = commands.add_parser(
        "diff", help="compare two profiles per function, as shares of their totals")
    parser.add_argument("file", metavar="BASE", help="the profile to compare against ('-': "
                        "standard input)")
    parser.add_argument("other", metavar="OTHER", help="the profile compared with BASE")
    parser.add_argument("-n", "--limit", type=int, default=20, help="rows (default 20)")
    parser.add_argument("--by", choices=BY, default="function")
    parser.add_argument("--sort", choices=("self", "cumulative"), default="self",
                        help="order by the change of this share (largest first)")
    parser.add_argument("--sample-type", help="the value to compare (default: samples)")
    parser.add_argument("--force", action="store_true",
                        help="compare profiles of different sampling modes")
    parser.add_argument("--json", action="store_true", help="one JSON object per row")
    filters.add_arguments(parser)
    progress.add_option(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from tachyon_format.analysis import diff

    base, other = (filters.read(path, args) for path in (args.file, args.other))
    table = diff(base, other, args.by, sample_type=args.sample_type, force=args.force)
    change = f"delta_{args.sort}_fraction"
    order = abs(table[change]).argsort(kind="stable")[::-1][:args.limit]
    table = table.take(order)
    if args.json:
        for row in table.rows():
            print(json.dumps(dict(zip(table.names, _plain(row), strict=True))))
        return 0
    keys = [n for n in table.names if not n.startswith(("base_", "other_", "delta_"))]
    print(f"{'base%':>7} {'other%':>7} {'change':>8}  " + "  ".join(keys)
          + f"   ({args.sort})")
    for row in table.rows():
        values = dict(zip(table.names, row, strict=True))
        print(f"{100 * values[f'base_{args.sort}_fraction']:>6.2f}% "
              f"{100 * values[f'other_{args.sort}_fraction']:>6.2f}% "
              f"{100 * values[change]:>+7.2f}%  " + "  ".join(str(values[k]) for k in keys))
    return 0
