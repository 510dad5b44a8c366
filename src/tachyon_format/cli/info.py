"""``tachyon-format info FILE...``: header-level facts, as a table or as JSON."""

from __future__ import annotations

import argparse
import json

import tachyon_format

from . import hints, progress, streams


def add_parser(commands) -> None:
    parser = commands.add_parser(
        "info", help="header-level facts (for Tachyon: CPython's BinaryReader.get_info())")
    parser.add_argument("file", nargs="+", help="a profile of any format the library reads "
                        "('-': standard input)")
    parser.add_argument("--json", action="store_true",
                        help="print the facts as JSON (with several files: one object per "
                        "line, its file under \"file\")")
    parser.add_argument("--threads", action="store_true",
                        help="list the threads (the ids --thread takes): samples, time, and "
                        "the share of each status (GIL held, waited for, on CPU ...)")
    progress.add_option(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.threads:
        if len(args.file) != 1:
            raise ValueError("--threads lists the threads of one file")
        return _threads(args, args.file[0])
    if len(args.file) == 1:  # (errors reach main, which names the file)
        facts = tachyon_format.info(streams.source(args.file[0]))
        print(json.dumps(facts, sort_keys=True) if args.json else format_info(facts))
        return 0
    failed = False
    with progress.bar(args, "info", unit=" files") as files_done:
        for number, path in enumerate(args.file):
            files_done(number, len(args.file))
            try:
                facts = tachyon_format.info(streams.source(path))
            except (ValueError, OSError) as exc:  # FormatError is a ValueError
                files_done.print(f"tachyon-format: {path}: {hints.with_hint(path, str(exc))}",
                                 error=True)
                failed = True
                continue
            if args.json:
                files_done.print(json.dumps({"file": path, **facts}, sort_keys=True))
            else:
                files_done.print(("\n" if number else "") + f"{path}:\n{format_info(facts)}")
    return 1 if failed else 0


def _threads(args: argparse.Namespace, path: str) -> int:
    from tachyon_format.analysis import thread_table
    from tachyon_format.analysis.diff import seconds_per_value

    profile = progress.read_profile(args, path, aggregate=True)
    table = thread_table(profile)
    if args.json:
        for row in table.rows():
            print(json.dumps({name: (None if value != value else value)  # (NaN: no status)
                              for name, value in zip(table.names, row, strict=True)}))
        return 0
    seconds = seconds_per_value(profile)
    fractions = [name for name in table.names if name.endswith("_fraction")]
    print(f"{'interp':>6} {'thread id':>20} {'samples':>9}"
          + (f" {'seconds':>9}" if seconds else "") + " "
          + " ".join(f"{name.removesuffix('_fraction'):>13}" for name in fractions))
    for row in table.rows():
        values = dict(zip(table.names, row, strict=True))
        shares = " ".join("            -" if values[name] != values[name]
                          else f"{100 * values[name]:>12.1f}%" for name in fractions)
        print(f"{values['interpreter_id']:>6} {values['thread_id']:>20} "
              f"{values['samples']:>9}" + (f" {values['samples'] * seconds:>9.3f}"
                                            if seconds else "")
              + f" {shares}" + ("  (main)" if values["main"] else ""))
    print(f"{len(table)} threads, {table.total} samples")
    return 0


def format_info(facts: dict) -> str:
    """A two-column, human-readable table of ``get_info()``."""
    # (the spec's values from the construct-free module: `info` starts without construct)
    from tachyon_format.schema.tachyon_values import CaptureFeature, ProfilingMode

    rows = []
    for key, value in facts.items():
        if key == "python_version":
            value = ".".join(map(str, value))
        elif key == "mode" and value is not None:
            names = {int(mode): mode.name.lower() for mode in ProfilingMode}
            value = f"{names.get(value, 'unknown')} ({value})"
        elif key == "capture_features" and value is not None:
            names = [feature.name.lower() for feature in CaptureFeature if value & feature]
            value = f"{', '.join(names) or 'none'} ({value})"
        elif key == "compression_type":
            value = {0: "none (0)", 1: "zstd (1)"}.get(value, f"raw ({value})")
        elif value is None:
            value = "-"
        rows.append((key, str(value)))
    width = max(len(key) for key, _ in rows)
    return "\n".join(f"{key:<{width}}  {value}" for key, value in rows)
