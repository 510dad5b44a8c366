"""The ``tachyon-format`` command line: one module per subcommand, each calling only the
public verbs of :mod:`tachyon_format`."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

import tachyon_format

from . import (
    callers,
    convert,
    dataset,
    diff,
    dump,
    flamegraph,
    heatmap,
    hints,
    info,
    merge,
    spec,
    timeline,
    top,
    validate,
)
from . import slice as slice_

SUBCOMMANDS = (info, dump, validate, convert, top, callers, slice_, merge, diff, flamegraph,
               heatmap, timeline, spec, dataset)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except ValueError as exc:  # malformed input (FormatError), or a request it cannot satisfy
        file = _file_of(args)
        if file is None:
            print(f"tachyon-format: {exc}", file=sys.stderr)
            return 1
        print(f"tachyon-format: {file}: {hints.with_hint(file, str(exc))}", file=sys.stderr)
        return 1
    except MemoryError:
        file = _file_of(args)
        print(f"tachyon-format: {file or 'the input'}: out of memory (for a very large file, "
              "read it in batches: the API's iter_batches, or the reading limits of "
              "docs/format/limits.md)", file=sys.stderr)
        return 1
    except BrokenPipeError:  # e.g. `tachyon-format dump big.bin | head`: not an error
        # Python would report the failed flush of stdout at exit; point it at devnull
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as exc:
        print(f"tachyon-format: {exc}", file=sys.stderr)
        return 1


def _file_of(args: argparse.Namespace) -> str | None:
    """The input a command's error is about (None for several: commands taking several
    files name the one at fault themselves)."""
    file = getattr(args, "file", None)
    if isinstance(file, list):
        return file[0] if len(file) == 1 else None
    return file


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tachyon-format",
        description="Inspect, validate and convert profiles: CPython 3.15 Tachyon "
        "sampling-profiler files and the formats profilers share.",
    )
    parser.add_argument("--version", action=_Version, nargs=0,
                        help="show the version and which decoder reads Tachyon sample regions")
    commands = parser.add_subparsers(required=True, metavar="COMMAND")
    for command in SUBCOMMANDS:
        command.add_parser(commands)
    return parser


class _Version(argparse.Action):
    """``--version``: the package's version and its decoder of the sample region (found only
    when asked: it loads numpy)."""

    def __call__(self, parser, namespace, values, option_string=None):
        info = tachyon_format.decoder_info()
        if info["problem"]:
            decoder = f"decoder: {info['problem']}"
        elif info["active"] == "compiled":
            decoder = "the compiled record walk"
        else:
            built = "compiled walk built, not in use" if info["compiled"] else (
                "no compiled walk in this installation")
            decoder = f"the numpy decoder ({built})"
        print(f"{parser.prog} {tachyon_format.__version__}: Tachyon sample regions read by "
              f"{decoder}")
        parser.exit()


if __name__ == "__main__":
    sys.exit(main())
