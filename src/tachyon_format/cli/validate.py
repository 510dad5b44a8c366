"""``tachyon-format validate FILE...``: check every file, whatever happens to one of them.

Exit status: 0 when every file is valid, 1 when one is malformed, 2 when one cannot be read at
all (a directory, a missing file, no permission), which outranks 1."""

from __future__ import annotations

import argparse
import json

import tachyon_format

from . import progress

VALID, INVALID, UNREADABLE = 0, 1, 2


def add_parser(commands) -> None:
    parser = commands.add_parser(
        "validate", help="decode every file; exit 1 if one is malformed, 2 if one is unreadable")
    parser.add_argument("file", nargs="+", help="a profile of any format")
    parser.add_argument("--format", choices=list(tachyon_format.FORMATS),
                        help="the files' format (default: sniffed from each file)")
    parser.add_argument("--json", action="store_true",
                        help="one JSON object per file: file, status, problems")
    progress.add_option(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    worst = VALID
    with progress.bar(args, "validate", unit=" files") as files_done:
        for number, path in enumerate(args.file):
            status, problems = check(path, args.format)
            worst = max(worst, status)
            if args.json:
                names = {VALID: "valid", INVALID: "invalid", UNREADABLE: "unreadable"}
                files_done.print(json.dumps({"file": path, "status": names[status],
                                             "problems": problems}))
            elif problems:
                for problem in problems:
                    files_done.print(f"{path}: {problem}")
            else:
                files_done.print(f"{path}: ok")
            files_done(number + 1, len(args.file))
    return worst


def check(path: str, format: str | None) -> tuple[int, list[str]]:
    """The file's status and its problems (``validate`` never raises)."""
    try:
        with open(path, "rb"):
            pass
    except OSError as exc:
        return UNREADABLE, [f"cannot read: {exc.strerror or exc}"]
    problems = tachyon_format.validate(path, format=format)
    return (INVALID if problems else VALID), problems
