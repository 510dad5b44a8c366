"""The sample filters that ``top``, ``slice`` and ``diff`` share: a time window, threads,
status bits and pprof-style focus / ignore patterns (``tachyon_format.analysis.slicing``)."""

from __future__ import annotations

import argparse

STATUS_NAMES = ("has_gil", "on_cpu", "unknown", "gil_requested", "has_exception",
                "main_thread")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("which samples")
    group.add_argument("--from-ms", type=float, help="start of a time window (ms after the "
                       "first sample)")
    group.add_argument("--to-ms", type=float, help="end of the time window (ms, exclusive)")
    group.add_argument("--thread", type=_thread_id, action="append", metavar="TID",
                       help="only this thread id (repeatable; `info --threads` lists them)")
    group.add_argument("--interpreter", type=_interpreter_id, action="append", metavar="ID",
                       help="only this interpreter id (repeatable)")
    group.add_argument("--status", type=_statuses, default=0, metavar="BITS",
                       help=f"only samples with all these status bits, comma-separated: "
                       f"{', '.join(STATUS_NAMES)}")
    group.add_argument("--not-status", type=_statuses, default=0, metavar="BITS",
                       help="only samples with none of these status bits")
    group.add_argument("--focus", metavar="REGEX", type=regex,
                       help="only samples whose stack has a function matching REGEX")
    group.add_argument("--ignore", metavar="REGEX", type=regex,
                       help="drop samples whose stack has a function matching REGEX")


def regex(text: str) -> str:
    """A regular expression (Python's ``re``), checked here so that a bad one is a usage
    error, not a traceback."""
    import re

    try:
        re.compile(text)
    except re.error as exc:
        raise argparse.ArgumentTypeError(f"not a regular expression: {text!r} ({exc})"
                                         ) from None
    return text


def _id_of(width: int, what: str, plural: str):
    def parse(text: str) -> int:
        try:
            value = int(text, 0)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not {what}: {text!r}") from None
        if not 0 <= value < 1 << width:
            raise argparse.ArgumentTypeError(
                f"not {what}: {text} ({plural} are 0 to {(1 << width) - 1})")
        return value
    return parse


_thread_id = _id_of(64, "a thread id", "thread ids")
_interpreter_id = _id_of(32, "an interpreter id", "interpreter ids")


def _statuses(text: str) -> int:
    from tachyon_format import ThreadStatus

    bits = 0
    for name in filter(None, (part.strip().lower() for part in text.split(","))):
        if name not in STATUS_NAMES:
            raise argparse.ArgumentTypeError(
                f"unknown status {name!r} (known: {', '.join(STATUS_NAMES)})")
        bits |= ThreadStatus[name.upper()]
    return bits


def say_empty(args: argparse.Namespace, profile) -> None:
    """Tell (on standard error) why a command has nothing to show: no sample passed the
    filters, or the profile holds none."""
    import sys

    chosen = [flag for flag, value in (("--from-ms/--to-ms", needs_times(args)),
                                        ("--thread", args.thread),
                                        ("--interpreter", args.interpreter),
                                        ("--status", args.status),
                                        ("--not-status", args.not_status),
                                        ("--focus", args.focus), ("--ignore", args.ignore))
              if value]
    why = (f"no sample passes {', '.join(chosen)}" if chosen
           else "the profile holds no samples")
    print(f"tachyon-format: {args.file}: nothing to show: {why}", file=sys.stderr)


def needs_times(args: argparse.Namespace) -> bool:
    return args.from_ms is not None or args.to_ms is not None


def read(path: str, args: argparse.Namespace):
    """The profile in *path*, filtered; per-stack counts unless a time window needs every
    sample's time."""
    from . import progress

    return apply(progress.read_profile(args, path, aggregate=not needs_times(args)), args)


def apply(profile, args: argparse.Namespace):
    from tachyon_format.analysis import slicing

    if needs_times(args):
        profile = slicing.time_window(
            profile, None if args.from_ms is None else args.from_ms * 1000,
            None if args.to_ms is None else args.to_ms * 1000)
    if args.thread or args.interpreter:
        profile = slicing.threads(profile, args.thread, interpreter_ids=args.interpreter)
    if args.status or args.not_status:
        profile = slicing.status(profile, all_of=args.status, none_of=args.not_status)
    if args.focus:
        profile = slicing.focus(profile, args.focus)
    if args.ignore:
        profile = slicing.ignore(profile, args.ignore)
    return profile
