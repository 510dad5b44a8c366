"""``validate``'s walk over the sample region: every record checked by :func:`.scan.scan_record`
(CPython's checks during replay, in its order and with its messages), carrying on past what it
can; for a file whose records CPython's reader rejects.

The checks of docs/format/reader.md#checks-during-replay are of two kinds. Some say a record
means something impossible (one thread more than the header declares, a SUFFIX sharing more
frames than the stack holds, a stack deeper than 256, a frame or string index beyond its
table) while its bytes still parse: ``scan_record`` reports each (a bad frame, once) and the
walk goes on with the next record (the stack clamped as it stands). The others break the syntax
(an unknown record type, a malformed varint, a record cut short, counts beyond 256). Records have
no length, so the walk then looks for where records resume: the next offset holding the prefix
of a thread already seen, whose record parses and is followed by another such prefix or by the
region's end. The bytes skipped are reported; the stacks are unknown from there until each
thread's next FULL record, so the depth checks wait for it. Every problem is ``unreadable``
(CPython rejects each), but the bytes skipped (a ``note``: no check of CPython's). A plain loop,
one record at a time: it runs only on files already known to be broken, the fast decoder having
stopped.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import numpy.typing as npt

from tachyon_format.errors import FormatError
from tachyon_format.problems import Problem

from ..checks import header_field
from .layout import (
    ENCODING_AT,
    FULL,
    INTERPRETER_ID_SIZE,
    MAX_ENCODING,
    PREFIX_SIZE,
    REPEAT,
    THREAD_ID_AT,
    THREAD_ID_SIZE,
)
from .records import RegionFacts
from .scan import scan_record
from .threads import ThreadTable

MAX_PROBLEMS = 100
"""Problems listed at most; the walk stops after them, saying so."""
RESYNC_WINDOW = 1 << 22
"""Bytes searched for where records resume after a broken one."""
SAMPLE_COUNT = header_field("sample_count")

__all__ = ["MAX_PROBLEMS", "RESYNC_WINDOW", "CheckedRegion", "walk_region"]


@dataclass
class CheckedRegion:
    """What the walk found: the problems, the samples and records read, whether every byte of
    the region was read as records, and the threads seen."""

    problems: list[Problem] = field(default_factory=list)
    samples: int = 0
    records: int = 0
    complete: bool = True
    threads: int = 0


def walk_region(region: bytes, *, order: Literal["<", ">"], thread_count: int,
                frame_count: int, frame_string_ok: npt.ArrayLike | None = None,
                sample_count: int | None = None, start: int = 0,
                threads: Iterable[tuple[int, int]] = (), records: int = 0) -> CheckedRegion:
    """Check every record of the (decompressed) *region*; *sample_count*: the header's, checked
    against the samples when every byte was read as records; *frame_string_ok*: per frame of
    the table, do its strings exist (frames beyond it are not checked).

    *start*: the region offset of the first record to check, the records before it being known
    good, with *threads* (the ``(interpreter_id, thread_id)`` of each thread they hold, in order
    of first appearance) and *records* (how many they are); the stacks then count as unknown
    until each thread's next FULL record."""
    data = bytes(region)
    n = len(data)
    facts = RegionFacts.of(order=order, start_time_us=0, thread_count=thread_count,
                           frame_count=frame_count, frame_string_ok=frame_string_ok)
    ok = facts.frame_string_ok
    if ok is not None and ok.size < facts.frame_count:  # (a table cut short)
        facts = facts._replace(frame_string_ok=_StringsKnown(ok))
    table = ThreadTable(facts.thread_count, 0)
    for interpreter_id, thread_id in threads:
        table.add(interpreter_id, thread_id)
    depth: dict[int, int | None] = dict.fromkeys(range(len(table)))  # by row; None: unknown
    walk = CheckedRegion(records=records)
    said: set[tuple[str, str | None]] = set()  # (field, value found) of problems said
    pos = start
    resumed = False  # records were skipped: their numbers are unknown from there on

    def report(message: str, field: str | None = None, **where: str) -> None:
        """A problem of the record at *pos*; one about a field (the header's thread count, a
        frame's strings, an index beyond the frame table) is said once for each value found."""
        if field is not None:
            if (field, where.get("found")) in said:
                return
            said.add((field, where.get("found")))
        walk.problems.append(Problem("unreadable", message, offset=pos, region=True,
                                     record=None if resumed else walk.records, field=field,
                                     **where))

    def depth_of(row: int) -> int | None:
        return depth.get(row, 0)  # (a thread new since the records resumed: an empty stack)

    while pos < n:
        if len(walk.problems) >= MAX_PROBLEMS:
            walk.problems.append(Problem("unreadable", f"more than {MAX_PROBLEMS} problems in "
                                         "the sample records: the rest were not checked",
                                         offset=pos, region=True))
            walk.complete = False
            break
        try:
            record = scan_record(data, pos, n, final=True, facts=facts, threads=table,
                                 depth_of=depth_of, index=walk.records, report=report)
        except FormatError as exc:
            report(exc.message)
            walk.complete = False
            resume = _resume(data, pos, facts, table)
            if resume is None:
                break
            walk.problems.append(Problem(
                "note", f"{resume - pos} bytes skipped after the broken record: records of "
                "known threads resume here (stacks are unknown until each thread's next FULL "
                "record)", offset=resume, region=True))
            depth = dict.fromkeys(range(len(table)))
            pos = resume
            resumed = True
            continue
        if record.encoding == FULL or (record.encoding != REPEAT
                                       and depth_of(record.row) is not None):
            depth[record.row] = record.depth
        walk.samples += len(record.deltas)
        walk.records += 1
        pos = record.end
    walk.threads = len(table)
    if walk.complete and sample_count is not None and walk.samples != sample_count:
        offset, path = SAMPLE_COUNT
        walk.problems.append(Problem(
            "unreadable", f"Sample count mismatch: header declares {sample_count} samples but "
            f"replay decoded {walk.samples}", offset=offset, field=path,
            expected=str(sample_count), found=str(walk.samples)))
    return walk


class _StringsKnown:
    """Per frame, do its strings exist, for a frame table cut short: yes for the frames it
    lacks (not known to be missing; a table declared with billions of frames costs nothing)."""

    __slots__ = ("ok",)

    def __init__(self, ok: npt.NDArray[np.bool_]) -> None:
        self.ok = ok

    def __getitem__(self, frame: int) -> bool:
        return frame >= self.ok.size or bool(self.ok[frame])


def _resume(data: bytes, broken: int, facts: RegionFacts, table: ThreadTable) -> int | None:
    """The first offset after *broken* (within :data:`RESYNC_WINDOW`) where a record of a known
    thread parses and is followed by another such record or by the end of the region."""
    interpreter_ids, thread_ids = table.ids()
    # a record's prefix starts with its thread id, then its interpreter id (layout.py)
    keys = {int(t).to_bytes(THREAD_ID_SIZE, facts.endian)
            + int(i).to_bytes(INTERPRETER_ID_SIZE, facts.endian)
            for i, t in zip(interpreter_ids, thread_ids, strict=True)}
    raw = data[broken + 1:broken + 1 + RESYNC_WINDOW]
    start = 0
    while True:
        found = [at for at in (raw.find(key, start) for key in keys) if at >= 0]
        if not found:
            return None
        at = min(found)
        candidate = broken + 1 + at - THREAD_ID_AT
        if _record_ends_well(data, candidate, keys, facts, table):
            return candidate
        start = at + 1


def _record_ends_well(data: bytes, pos: int, keys: set[bytes], facts: RegionFacts,
                      table: ThreadTable) -> bool:
    """Does a record of a known thread parse at *pos* (its stack taken as unknown, its frames
    not looked at), followed by the prefix of another or by the region's end?"""
    n = len(data)
    try:
        end = scan_record(data, pos, n, final=True, facts=facts, threads=table,
                          depth_of=_unknown, report=_ignore).end
    except FormatError:
        return False
    return end == n or (n - end >= PREFIX_SIZE
                        and data[end + THREAD_ID_AT:end + ENCODING_AT] in keys
                        and data[end + ENCODING_AT] <= MAX_ENCODING)


def _unknown(row: int) -> None:
    return None


def _ignore(message: str, **where: str) -> None:
    pass
