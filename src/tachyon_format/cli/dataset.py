"""``tachyon-format dataset add DIR FILE...``, ``dataset info DIR``, ``dataset compact DIR`` and
``dataset migrate OLD NEW``: many profiles as one dataset of Delta Lake tables (docs/fleet.md);
DIR may be an object-store URL. Needs the ``fleet`` extra."""

from __future__ import annotations

import argparse
import json
import sys


def add_parser(commands) -> None:
    parser = commands.add_parser(
        "dataset", help="many profiles as one Delta Lake dataset (add, info, compact, migrate)",
        description="A fleet's profiles as one dataset of Delta Lake tables (docs/fleet.md), "
        "for Dask, DuckDB or any Delta Lake or Arrow reader; safe against killed and "
        "concurrent writers. Needs pyarrow and deltalake (the fleet extra). "
        "`dataset add DIR FILE... [--label KEY=VALUE]... [--partition-by KEYS] [--timestamps] "
        "[--format FORMAT]`: add the files, committed in batches (DIR may be an object-store "
        "URL). `dataset info DIR [--json]`: profiles and samples per partition and format. "
        "`dataset compact DIR [--retention-hours H]`: fewer, larger files and a checkpointed "
        "log. "
        "`dataset migrate OLD NEW`: copy a dataset of layout version 1 into this layout. "
        "`dataset ACTION --help` says more.")
    actions = parser.add_subparsers(required=True, metavar="ACTION",
                                    help="add (append profiles), info (what it holds), "
                                    "compact (fewer files) or migrate (from layout version 1)")
    add = actions.add_parser(
        "add", help="append profiles to a dataset, reading one file at a time",
        description="Add each FILE (any format the library reads; paths or fsspec URLs) "
        "to the dataset in DIR, created if new, up to 64 files in one commit per table. A "
        "file already in it (same bytes) is skipped, one that cannot be read is reported and "
        "left out; a run that was killed can be run again, and several may run at once.")
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
    compact = actions.add_parser(
        "compact", help="rewrite a dataset's small files into few, checkpoint its logs",
        description="Compact each table of the dataset in DIR: its files (each add makes "
        "one per table) rewritten into few, sorted by profile id, in one commit that keeps "
        "every row; the "
        "rows of writes that lost to another write of the same profile deleted; the files "
        "no version of the last --retention-hours needs deleted; a checkpoint of the log "
        "written. Readers and writers may run meanwhile; the answers are the same after.")
    compact.add_argument("dataset", metavar="DIR", help="the dataset (a directory or URL)")
    compact.add_argument("--retention-hours", type=int, default=168, metavar="H",
                         help="keep the files that versions of the last H hours need (a "
                         "reader that opened the dataset before may still read them)")
    compact.set_defaults(run=run_compact)
    migrate = actions.add_parser(
        "migrate", help="copy a dataset of layout version 1 into this layout",
        description="Copy the dataset in OLD (layout version 1: one Parquet file per profile "
        "and table) into a dataset of this layout in NEW, with the same partition keys, "
        "labels and rows. OLD is left as it is; profiles already in NEW are skipped, so a "
        "migration that was stopped can be run again. A profile whose files do not all read "
        "(a writer killed half-way) is reported and left out.")
    migrate.add_argument("old", metavar="OLD", help="the dataset of layout version 1")
    migrate.add_argument("new", metavar="NEW", help="where the migrated dataset goes")
    migrate.set_defaults(run=run_migrate)


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
        import deltalake  # noqa: F401 (needed only once a table is opened: say so now)

        from tachyon_format.fleet import dataset
    except ModuleNotFoundError as exc:
        raise ValueError(f"datasets need the fleet extra (missing: {exc.name}): "
                         "pip install 'tachyon-format[fleet]'") from None
    return dataset


def run_add(args: argparse.Namespace) -> int:
    """A bad file is reported with its path, and the others are added."""
    dataset = _fleet()
    args.file = args.dataset
    keys = args.partition_by.split(",") if args.partition_by else None
    labels = labels_of(args.label)
    failed = []

    def report(name: str, exc: Exception) -> None:
        failed.append(name)
        print(f"tachyon-format: {name}: {exc} (not added)", file=sys.stderr)

    added = dataset.add(args.dataset, args.files, labels=labels, timestamps=args.timestamps,
                        partition_by=keys, format=args.format, on_error=report)
    new = [a for a in added if not a.skipped]
    print(f"{len(new)} profiles added to {args.dataset} ({sum(a.num_samples for a in new)} "
          f"samples; {len(added) - len(new)} already there"
          f"{f'; {len(failed)} not added' if failed else ''})", file=sys.stderr)
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


def run_compact(args: argparse.Namespace) -> int:
    dataset = _fleet()
    args.file = args.dataset
    done = dataset.compact(args.dataset, retention_hours=args.retention_hours)
    for table, facts in done.tables.items():
        print(f"{table}: {facts['files_removed']} files rewritten into {facts['files_added']}, "
              f"{facts['files_deleted']} deleted")
    print(f"rows of {done.stale_writes} stale writes deleted")
    return 0


def run_migrate(args: argparse.Namespace) -> int:
    _fleet()
    from tachyon_format.fleet.legacy import migrate

    args.file = args.old
    done = migrate(args.old, args.new)
    for problem in done.skipped:
        print(f"tachyon-format: {args.old}: {problem} (not migrated)", file=sys.stderr)
    print(f"{done.profiles} profiles migrated to {args.new}"
          f"{f'; {len(done.skipped)} not readable' if done.skipped else ''}", file=sys.stderr)
    return 1 if done.skipped else 0
