"""The ``tachyon-format`` command line: ``info`` and ``dump`` of Tachyon profiles."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence

from tachyon_format.errors import FormatError
from tachyon_format.formats.tachyon.file import info
from tachyon_format.schema.tachyon import CaptureFeature, ProfilingMode


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except FormatError as exc:
        print(f"tachyon-format: {args.file}: {exc}", file=sys.stderr)
        return 1
    except BrokenPipeError:  # e.g. `tachyon-format dump big.bin | head`: not an error
        # Python would report the failed flush of stdout at exit; point it at devnull
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as exc:
        print(f"tachyon-format: {exc}", file=sys.stderr)
        return 1


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tachyon-format",
        description="Inspect CPython 3.15 Tachyon sampling-profiler files.",
    )
    commands = parser.add_subparsers(required=True, metavar="COMMAND")

    info_cmd = commands.add_parser(
        "info", help="header-level facts (CPython's BinaryReader.get_info())"
    )
    info_cmd.add_argument("file")
    info_cmd.add_argument("--json", action="store_true", help="print the get_info() dict as JSON")
    info_cmd.set_defaults(run=_run_info)

    dump_cmd = commands.add_parser(
        "dump", help="every sample in the canonical JSON-lines form (CPython's own decode)"
    )
    dump_cmd.add_argument("file")
    dump_cmd.add_argument("-o", "--output", help="write here instead of standard output")
    dump_cmd.set_defaults(run=_run_dump)

    validate_cmd = commands.add_parser(
        "validate", help="decode every sample; exit 1 if any file is malformed"
    )
    validate_cmd.add_argument("file", nargs="+")
    validate_cmd.set_defaults(run=_run_validate)
    return parser


def _run_info(args) -> int:
    facts = info(args.file)
    if args.json:
        print(json.dumps(facts, sort_keys=True))
    else:
        print(format_info(facts))
    return 0


def _run_dump(args) -> int:
    from tachyon_format.formats.tachyon.reader import read
    from tachyon_format.render.canonical import write_canonical

    profile = read(args.file)
    if args.output:
        with open(args.output, "w", encoding="utf-8", newline="\n") as out:
            write_canonical(profile, out)
    else:
        write_canonical(profile, sys.stdout)
    return 0


def _run_validate(args) -> int:
    from tachyon_format.formats.tachyon.validate import validate

    failed = 0
    for path in args.file:
        problems = validate(path)
        if problems:
            failed += 1
            for problem in problems:
                print(f"{path}: {problem}")
        else:
            print(f"{path}: ok")
    return 1 if failed else 0


def format_info(facts: dict) -> str:
    """A two-column, human-readable table of ``get_info()``."""
    rows = []
    for key, value in facts.items():
        if key == "python_version":
            value = ".".join(map(str, value))
        elif key == "mode" and value is not None:
            value = f"{ProfilingMode(value).name.lower()} ({value})"
        elif key == "capture_features" and value is not None:
            names = [f.name.lower() for f in CaptureFeature if value & f]
            value = f"{', '.join(names) or 'none'} ({value})"
        elif key == "compression_type":
            value = {0: "none (0)", 1: "zstd (1)"}.get(value, f"raw ({value})")
        elif value is None:
            value = "-"
        rows.append((key, str(value)))
    width = max(len(key) for key, _ in rows)
    return "\n".join(f"{key:<{width}}  {value}" for key, value in rows)


if __name__ == "__main__":
    sys.exit(main())
