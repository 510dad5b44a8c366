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
    progress.add_option(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
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


def format_info(facts: dict) -> str:
    """A two-column, human-readable table of ``get_info()``."""
    # (names without the schema's enums, whose module loads construct)
    from tachyon_format.formats.tachyon.header_info import FEATURE_NAMES, MODE_NAMES

    rows = []
    for key, value in facts.items():
        if key == "python_version":
            value = ".".join(map(str, value))
        elif key == "mode" and value is not None:
            value = f"{MODE_NAMES[value]} ({value})"
        elif key == "capture_features" and value is not None:
            names = [name for bit, name in FEATURE_NAMES if value & bit]
            value = f"{', '.join(names) or 'none'} ({value})"
        elif key == "compression_type":
            value = {0: "none (0)", 1: "zstd (1)"}.get(value, f"raw ({value})")
        elif value is None:
            value = "-"
        rows.append((key, str(value)))
    width = max(len(key) for key, _ in rows)
    return "\n".join(f"{key:<{width}}  {value}" for key, value in rows)
