"""``tachyon-format dataset add DIR FILE...`` and ``dataset info DIR``: many profiles as one
Parquet dataset (docs/fleet.md); DIR may be an fsspec URL. Needs the ``fleet`` extra."""

from __future__ import annotations

import argparse
import json
import sys


def add_parser(commands) -> None:
    parser = commands.add_parser(
        "dataset", help="many profiles as one Parquet dataset (add, info)",
        description="A fleet's profiles as one Parquet dataset (docs/fleet.md), for Dask, "
        "DuckDB or any Parquet reader. Needs pyarrow (the fleet extra). "
        "`dataset add DIR FILE... [--label KEY=VALUE]... [--partition-by KEYS] [--timestamps] "
        "[--format FORMAT]`: append the files, one at a time (DIR may be an fsspec URL). "
        "`dataset info DIR [--json]`: profiles and samples per partition and format. "
        "`dataset ACTION --help` says more.")
    actions = parser.add_subparsers(required=True, metavar="ACTION",
                                    help="add (append profiles) or info (what it holds)")
    add = actions.add_parser(
        "add", help="append profiles to a dataset, one file at a time",
        description="Append each FILE (any format the library reads; paths or fsspec URLs) "
        "to the dataset in DIR, created if new. A file already in it (same bytes) is skipped.")
    add.add_argument("dataset", metavar="DIR", help="the dataset (a directory or URL)")
    add.add_argument("files", metavar="FILE", nargs="+", help="the profiles to add")
    add.add_argument("--label", metavar="KEY=VALUE", action="append", default=[],
                     help="a label of every FILE (e.g. service=api, deploy=v42, host=web-3); "
                     "the partition keys choose the directory")
    add.add_argument("--partition-by", metavar="KEYS",
                     help="comma-separated partition keys of a new dataset (default: "
                     "date,service)")
    add.add_argument("--timestamps", action="store_true",
                     help="one row per sample with its time, not per (stack, thread, status)")
    add.add_argument("--format", help="the input format (default: sniffed)")
    add.set_defaults(run=run_add)
    info = actions.add_parser("info", help="what a dataset holds",
                              description="Profiles and samples per partition and format.")
    info.add_argument("dataset", metavar="DIR", help="the dataset (a directory or URL)")
    info.add_argument("--json", action="store_true", help="as one JSON object")
    info.set_defaults(run=run_info)


def labels_of(pairs: list[str]) -> dict[str, str]:
    """``KEY=VALUE`` strings as a dict (ValueError for one without ``=``)."""
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise ValueError(f"a label is KEY=VALUE, not {pair!r}")
        out[key] = value
    return out


def _fleet():
    """The fleet's dataset module; a clear error where its extra is not installed."""
    try:
        from tachyon_format.fleet import dataset
    except ModuleNotFoundError as exc:
        raise ValueError(f"datasets need the fleet extra (missing: {exc.name}): "
                         "pip install 'tachyon-format[fleet]'") from None
    return dataset


def run_add(args: argparse.Namespace) -> int:
    """Each file on its own: a bad one is reported with its path, and the others are added."""
    import tachyon_format

    dataset = _fleet()
    args.file = args.dataset
    keys = args.partition_by.split(",") if args.partition_by else None
    labels = labels_of(args.label)
    added, failed = [], 0
    for path in args.files:
        try:
            added += dataset.add(args.dataset, [path], labels=labels,
                                 timestamps=args.timestamps, partition_by=keys,
                                 format=args.format)
        except (tachyon_format.FormatError, ValueError, OSError) as exc:
            failed += 1
            print(f"tachyon-format: {path}: {exc} (not added)", file=sys.stderr)
    new = [a for a in added if not a.skipped]
    print(f"{len(new)} profiles added to {args.dataset} ({sum(a.num_samples for a in new)} "
          f"samples; {len(added) - len(new)} already there"
          f"{f'; {failed} not added' if failed else ''})", file=sys.stderr)
    return 1 if failed else 0


def run_info(args: argparse.Namespace) -> int:
    dataset = _fleet()
    args.file = args.dataset
    facts = dataset.summary(args.dataset)
    if args.json:
        print(json.dumps(facts, indent=2))
        return 0
    print(f"layout version {facts['version']}, partitioned by "
          f"{', '.join(facts['partition_by']) or '-'}")
    print(f"{facts['profiles']} profiles, {facts['samples']} samples in {facts['rows']} rows")
    for name, part in sorted(facts["partitions"].items()):
        print(f"  {name}: {part['profiles']} profiles, {part['samples']} samples")
    print("formats: " + ", ".join(f"{k} {v}" for k, v in sorted(facts["formats"].items())))
    return 0
