"""``tachyon-format diff BASE OTHER``: per function, the change of each profile's share of
its total (normalised by totals and sampling periods)."""

from __future__ import annotations

import argparse
import sys

from . import arguments, filters, progress
from .rows import BY, print_json


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
    arguments.add_sample_type(parser, "compare")
    parser.add_argument("--force", action="store_true",
                        help="compare profiles of different sampling modes")
    parser.add_argument("--json", action="store_true", help="one JSON object per row")
    parser.add_argument("--markdown", action="store_true",
                        help="the table in Markdown (for CI logs and pull-request comments)")
    parser.add_argument("--fail-above", metavar="PCT", type=_percent,
                        help="a regression gate: exit 1 when a row's share of its total grows "
                        "by more than PCT percentage points (e.g. 5%%), and say which")
    filters.add_arguments(parser)
    progress.add_option(parser)
    parser.set_defaults(run=run)


def _percent(text: str) -> float:
    try:
        value = float(text.strip().removesuffix("%"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a percentage: {text!r}") from None
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"not a percentage: {text!r}")
    return value


def run(args: argparse.Namespace) -> int:
    from tachyon_format.analysis import diff
    from tachyon_format.analysis.diff import check_comparable

    base, other = (filters.read(path, args) for path in (args.file, args.other))
    check_comparable(base, other, sample_type=args.sample_type, force=args.force,
                     remedy="--force compares them anyway")
    table = diff(base, other, args.by, sample_type=args.sample_type, force=args.force)
    change = f"delta_{args.sort}_fraction"
    regressed = (table.take(table[change] * 100 > args.fail_above)
                 if args.fail_above is not None else None)
    order = abs(table[change]).argsort(kind="stable")[::-1][:args.limit]
    table = table.take(order)
    keys = [n for n in table.names if not n.startswith(("base_", "other_", "delta_"))]
    if args.json:
        print_json(table)
    elif args.markdown:
        print(_markdown(args, table, keys, regressed))
    else:
        print(f"{'base%':>7} {'other%':>7} {'change':>8}  " + "  ".join(keys)
              + f"   ({args.sort})")
        for row in table.rows():
            values = dict(zip(table.names, row, strict=True))
            print(f"{100 * values[f'base_{args.sort}_fraction']:>6.2f}% "
                  f"{100 * values[f'other_{args.sort}_fraction']:>6.2f}% "
                  f"{100 * values[change]:>+7.2f}%  " + "  ".join(str(values[k])
                                                               for k in keys))
    if regressed is None:
        return 0
    if len(regressed):
        worst = regressed.take(regressed[change].argsort(kind="stable")[::-1])
        values = dict(zip(worst.names, worst.rows()[0], strict=True))
        print(f"tachyon-format: {len(regressed)} rows grew by more than {args.fail_above:g} "
              f"points of {args.sort} share, the most "
              f"{' '.join(str(values[k]) for k in keys)} "
              f"({100 * values[change]:+.2f} points)", file=sys.stderr)
        return 1
    print(f"tachyon-format: no row grew by more than {args.fail_above:g} points of "
          f"{args.sort} share", file=sys.stderr)
    return 0


def _markdown(args: argparse.Namespace, table, keys: list[str], regressed) -> str:
    """The rows as a Markdown table, under a line naming the files (and the gate's verdict)."""
    lines = [f"**{args.other}** against **{args.file}** ({args.sort} share of each total)", ""]
    if regressed is not None:
        verdict = (f":x: {len(regressed)} rows grew by more than {args.fail_above:g} points"
                   if len(regressed) else
                   f":white_check_mark: no row grew by more than {args.fail_above:g} points")
        lines[0:0] = [verdict, ""]
    lines.append("| base | other | change | " + " | ".join(keys) + " |")
    lines.append("|---:|---:|---:|" + "---|" * len(keys))
    for row in table.rows():
        values = dict(zip(table.names, row, strict=True))
        cells = [str(values[k]).replace("|", "\\|") for k in keys]
        lines.append(f"| {100 * values[f'base_{args.sort}_fraction']:.2f}% "
                     f"| {100 * values[f'other_{args.sort}_fraction']:.2f}% "
                     f"| {100 * values[f'delta_{args.sort}_fraction']:+.2f} "
                     f"| {' | '.join(cells)} |")
    return "\n".join(lines)
