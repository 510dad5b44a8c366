"""The ``tachyon-format`` command line: one module per subcommand, each calling only the
public verbs of :mod:`tachyon_format`."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from tachyon_format.errors import FormatError

from . import convert, dump, info, validate

SUBCOMMANDS = (info, dump, validate, convert)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except FormatError as exc:
        print(f"tachyon-format: {args.file}: {exc}", file=sys.stderr)
        return 1
    except ValueError as exc:  # a request the input cannot satisfy (e.g. no timestamps)
        print(f"tachyon-format: {args.file}: {exc}", file=sys.stderr)
        return 1
    except BrokenPipeError:  # e.g. `tachyon-format dump big.bin | head`: not an error
        # Python would report the failed flush of stdout at exit; point it at devnull
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as exc:
        print(f"tachyon-format: {exc}", file=sys.stderr)
        return 1


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tachyon-format",
        description="Inspect, validate and convert profiles: CPython 3.15 Tachyon "
        "sampling-profiler files and the formats profilers share.",
    )
    commands = parser.add_subparsers(required=True, metavar="COMMAND")
    for command in SUBCOMMANDS:
        command.add_parser(commands)
    return parser


if __name__ == "__main__":
    sys.exit(main())
