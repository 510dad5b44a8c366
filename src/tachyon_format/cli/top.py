"""``tachyon-format top FILE``: the functions (or lines, files, opcodes) with the most
samples, self or cumulative, of any profile."""

from __future__ import annotations

import argparse

from . import arguments, filters, progress
from .rows import BY, print_json, shown


def add_parser(commands) -> None:
    parser = commands.add_parser(
        "top", help="the functions with the most samples (self or cumulative)",
        description="The top functions of FILE (any format the library reads). The "
        "profiler's own frames are left out, as CPython's --pstats leaves them out.")
    arguments.add_profile(parser)
    parser.add_argument("-n", "--limit", type=int, default=20, help="rows (default 20)")
    parser.add_argument("--by", choices=BY, default="function",
                        help="what a row is (default: function)")
    parser.add_argument("--sort", choices=("self", "cumulative"), default="self")
    arguments.add_sample_type(parser)
    arguments.add_profiler_frames(parser)
    parser.add_argument("--json", action="store_true", help="one JSON object per row")
    filters.add_arguments(parser)
    progress.add_option(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from tachyon_format.analysis import top
    from tachyon_format.analysis.diff import seconds_per_value

    if args.limit < 1:
        raise ValueError(f"-n {args.limit} shows no rows: give -n 1 or more")
    profile = filters.read(args.file, args)
    table = top(profile, args.limit, args.by, sort=args.sort, sample_type=args.sample_type,
                filter_internal=not args.profiler_frames)
    if not len(table):
        filters.say_empty(args, profile)
        return 0
    if args.json:
        print_json(table)
        return 0
    print(render(table, seconds_per_value(profile, args.sample_type)))
    return 0


def render(table, seconds: float | None = None) -> str:
    """The table as text: counts (and the time they stand for: *seconds* per unit, as
    CPython's replay shows it), their share of the total, then the key columns (opcodes by
    their 3.15 names)."""
    total = max(table.total, 1)
    keys = [name for name in table.names if name not in ("self", "cumulative")]
    timed = seconds is not None
    head = (f"{'self':>9} {'self s':>9} {'self%':>6} {'cumul':>9} {'cumul s':>9} {'cumul%':>6}"
            if timed else f"{'self':>9} {'self%':>6} {'cumul':>9} {'cumul%':>6}")
    lines = [head + "  " + "  ".join(keys)]
    for row in table.rows():
        values = dict(zip(table.names, row, strict=True))
        own, cumulative = int(values["self"]), int(values["cumulative"])
        cells = [f"{own:>9}", *([f"{own * seconds:>9.3f}"] if timed else []),
                 f"{100 * own / total:>5.1f}%", f"{cumulative:>9}",
                 *([f"{cumulative * seconds:>9.3f}"] if timed else []),
                 f"{100 * cumulative / total:>5.1f}%"]
        lines.append(" ".join(cells) + "  " + "  ".join(shown(k, values[k]) for k in keys))
    shown_total = f"{table.total}" + (f" ({table.total * seconds:.3f} s)" if timed else "")
    lines.append(f"total: {shown_total}; {len(table)} rows shown")
    return "\n".join(lines)
