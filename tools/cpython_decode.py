"""Print CPython's own decode of a Tachyon file: the oracle the project's tests compare against.

Run it under the reference interpreter (CPython 3.15 with ``_remote_debugging``; stdlib only)::

    python3.15 tools/cpython_decode.py FILE.bin              # canonical decode (JSON lines)
    python3.15 tools/cpython_decode.py --info FILE.bin       # only the get_info() line
    python3.15 tools/cpython_decode.py --stats FILE.bin      # reader get_stats() after replay
    python3.15 tools/cpython_decode.py --batches FILE.bin    # one line per collect() call

The canonical decode is line 1 ``json.dumps(get_info(), sort_keys=True)``, then one line per
sample in ``replay()`` order: ``[interpreter_id, thread_id, timestamp_us, status, frames]`` with
frames innermost first as ``[filename, funcname, lineno, end_lineno, column, end_column,
opcode]`` (position fields null when the location is None). A REPEAT batch, which delivers
several timestamps for one stack, gives one line per timestamp.
"""

from __future__ import annotations

import argparse
import json
import sys

from _remote_debugging import BinaryReader

COMPACT = (",", ":")


def frame_row(frame) -> list:
    """One frame as ``[filename, funcname, lineno, end_lineno, column, end_column, opcode]``."""
    location = frame.location
    position = [None] * 4 if location is None else list(location)
    return [frame.filename, frame.funcname, *position, frame.opcode]


class CanonicalCollector:
    """Writes one canonical line per (thread, timestamp) that replay() delivers."""

    def __init__(self, out) -> None:
        self.out = out

    def collect(self, stack_frames, timestamps_us) -> None:
        for interpreter in stack_frames:
            for thread in interpreter.threads:
                frames = [frame_row(frame) for frame in thread.frame_info]
                for timestamp_us in timestamps_us:
                    row = [interpreter.interpreter_id, thread.thread_id, timestamp_us,
                           thread.status, frames]
                    self.out.write(json.dumps(row, separators=COMPACT) + "\n")


class BatchCollector:
    """Writes the shape of each collect() call: ``[interpreter_id, thread_id, status, n]``."""

    def __init__(self, out) -> None:
        self.out = out

    def collect(self, stack_frames, timestamps_us) -> None:
        for interpreter in stack_frames:
            for thread in interpreter.threads:
                row = [interpreter.interpreter_id, thread.thread_id, thread.status,
                       len(timestamps_us)]
                self.out.write(json.dumps(row, separators=COMPACT) + "\n")


class NullCollector:
    """Discards samples; used when only the reader's counters are wanted."""

    def collect(self, stack_frames, timestamps_us) -> None:
        pass


def info_line(reader: BinaryReader) -> str:
    return json.dumps(reader.get_info(), sort_keys=True) + "\n"


def decode(path: str, view: str, out) -> None:
    reader = BinaryReader(path)
    try:
        if view in ("decode", "info"):
            out.write(info_line(reader))
        if view == "decode":
            reader.replay(CanonicalCollector(out))
        elif view == "batches":
            reader.replay(BatchCollector(out))
        elif view == "stats":
            reader.replay(NullCollector())
            out.write(json.dumps(reader.get_stats(), sort_keys=True) + "\n")
    finally:
        reader.close()


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("path", help="a Tachyon .bin file")
    views = parser.add_mutually_exclusive_group()
    for view in ("info", "stats", "batches"):
        views.add_argument(f"--{view}", dest="view", action="store_const", const=view)
    parser.set_defaults(view="decode")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    # Strings come back with errors="replace"; keep stdout UTF-8 whatever the locale says.
    with open(sys.stdout.fileno(), "w", encoding="utf-8", newline="\n", closefd=False) as out:
        decode(args.path, args.view, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
