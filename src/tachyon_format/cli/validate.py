"""``tachyon-format validate FILE...``: check every file, whatever happens to one of them, and
print every problem found with its severity (docs/validation.md).

Exit status: 0 when every file is valid (notes alone leave a file valid), 1 when one is
malformed (a problem that makes it ``unreadable`` or ``inconsistent``), 2 when one cannot be
read at all (a directory, a missing file, no permission), which outranks 1."""

from __future__ import annotations

import argparse
import json
import os
import sys

import tachyon_format
from tachyon_format.formats import format_for_extension
from tachyon_format.problems import Problem

from . import progress

VALID, INVALID, UNREADABLE = 0, 1, 2
STATUS_NAMES = {VALID: "valid", INVALID: "invalid", UNREADABLE: "unreadable"}


def add_parser(commands) -> None:
    parser = commands.add_parser(
        "validate", help="check every file and print each problem with its severity; exit 1 "
        "if one is malformed, 2 if one cannot be read")
    parser.add_argument("file", nargs="+", help="a profile of any format, or with -r a "
                        "directory")
    parser.add_argument("-r", "--recursive", action="store_true",
                        help="check every file under each directory given (files whose name "
                        "no format claims are left out)")
    parser.add_argument("--format", choices=list(tachyon_format.FORMATS),
                        help="the files' format (default: sniffed from each file)")
    parser.add_argument("--json", action="store_true",
                        help="one JSON object per file: file, status, problems (each with "
                        "severity, message, offset, field, record, region, expected, found)")
    progress.add_option(parser)
    parser.set_defaults(run=run)


def expand(paths: list[str], recursive: bool) -> list[str]:
    """The files to check: each path, and with *recursive* every file under each directory
    whose name a format claims (in name order)."""
    if not recursive:
        return paths
    out = []
    for path in paths:
        if not os.path.isdir(path):
            out.append(path)
            continue
        for root, dirs, files in os.walk(path):
            dirs.sort()
            out += [os.path.join(root, name) for name in sorted(files)
                    if format_for_extension(name) is not None]
    return out


def run(args: argparse.Namespace) -> int:
    worst = VALID
    files = expand(args.file, args.recursive)
    if not files:
        print("tachyon-format: no profile files found under "
              f"{', '.join(args.file)}", file=sys.stderr)
        return VALID
    with progress.bar(args, "validate", unit=" files") as files_done:
        for number, path in enumerate(files):
            status, problems = check(path, args.format)
            worst = max(worst, status)
            files_done(number + 1, len(files))
            if args.json:
                files_done.print(json.dumps({
                    "file": path, "status": STATUS_NAMES[status],
                    "problems": [problem.to_dict() for problem in problems]}))
                continue
            if status == VALID:
                files_done.print(f"{path}: ok")
            for problem in problems:
                text = str(problem)
                if problem.severity == "unreadable":  # (str() names the milder severities only)
                    text = f"unreadable: {text}"
                files_done.print(f"{path}: {text}")
    return worst


def check(path: str, format: str | None) -> tuple[int, list[Problem]]:
    """The file's status and its problems (``validate`` never raises)."""
    try:
        with open(path, "rb"):
            pass
    except OSError as exc:
        return UNREADABLE, [Problem.from_os_error(exc)]
    problems = tachyon_format.validate(path, format=format)
    bad = any(problem.severity != "note" for problem in problems)
    return (INVALID if bad else VALID), problems
