"""``tachyon-format validate FILE...``: decode every file; exit 1 if any is malformed."""

from __future__ import annotations

import argparse

import tachyon_format


def add_parser(commands) -> None:
    parser = commands.add_parser(
        "validate", help="decode every sample; exit 1 if any file is malformed")
    parser.add_argument("file", nargs="+")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    failed = 0
    for path in args.file:
        problems = tachyon_format.validate(path)
        if problems:
            failed += 1
            for problem in problems:
                print(f"{path}: {problem}")
        else:
            print(f"{path}: ok")
    return 1 if failed else 0
