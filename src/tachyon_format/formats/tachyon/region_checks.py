"""Every record of a sample region checked, carrying on past what it can: for ``validate`` on a
file whose records CPython's reader rejects.

CPython's checks during replay (docs/format/reader.md#checks-during-replay) are of two kinds.
Some say a record means something impossible (one thread more than the header declares, a
stack deeper than 256, a frame index beyond the table, a SUFFIX sharing more frames than the
stack holds) while its bytes still parse: the walk reports each and goes on with the next
record (the stack clamped as it stands). The others break the syntax (an unknown record type, a
malformed varint, a record cut short). Records have no length, so the walk then looks for where
records resume: the next offset holding the prefix of a thread already seen, whose record
parses and is followed by another such prefix or by the region's end. The bytes skipped are
reported; the stacks are unknown from there until each thread's next FULL record, so the depth
checks wait for it. The messages are CPython's; every problem is ``unreadable`` (CPython rejects
each), but the bytes skipped (a ``note``: no check of CPython's). A plain loop, one record at a
time: it runs only on files already known to be broken, the fast decoder having stopped.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from tachyon_format.problems import Problem
from tachyon_format.schema import tachyon_values as spec
from tachyon_format.schema.leb128 import U32_MAX, LEB128Error, scan_uleb128

from .checks import header_field
from .region.layout import ENCODING_AT, PREFIX_SIZE, THREAD_ID_AT

PREFIX = PREFIX_SIZE
MAX_DEPTH = spec.MAX_STACK_DEPTH
REPEAT, FULL, SUFFIX, POP_PUSH = range(4)
INVALID_VARINT = "Invalid or incomplete varint in binary data"
MAX_PROBLEMS = 100
"""Problems listed at most; the walk stops after them, saying so."""
RESYNC_WINDOW = 1 << 22
"""Bytes searched for where records resume after a broken one."""
SAMPLE_COUNT = header_field("sample_count")
THREAD_COUNT_PATH = header_field("thread_count")[1]


class Broken(Exception):
    """The record's syntax is broken (the message is CPython's)."""


class TooDeep(Broken):
    """A stack change lists more frames than a stack may hold: CPython fails on its counts,
    before it reads the frames (its message depends on the thread's stack: see
    :func:`too_deep`)."""

    def __init__(self, encoding: int, arg: int, count: int) -> None:
        super().__init__(f"Stack depth {count} exceeds capacity {MAX_DEPTH}")
        self.encoding, self.arg, self.count = encoding, arg, count


def too_deep(exc: TooDeep, stack: list[int] | None) -> str:
    """CPython's message for a record of :class:`TooDeep` over *stack* (None: unknown, the
    stack then taken as empty), in CPython's order (checks 12 to 14)."""
    if exc.encoding == FULL:
        return str(exc)
    depth = len(stack) if stack is not None else 0
    if exc.encoding == SUFFIX:
        if stack is not None and exc.arg > depth:
            return f"Shared count {exc.arg} exceeds current stack depth {depth}"
        kept = exc.arg
    else:
        kept = max(depth - exc.arg, 0)
    return f"Final stack depth {kept + exc.count} exceeds capacity {MAX_DEPTH}"


@dataclass
class Parsed:
    """One record's syntax: where it ends, its type, its samples, and for a stack change its
    argument (SUFFIX shared, POP_PUSH pop) and new frames (FULL: the whole stack)."""

    end: int
    encoding: int
    samples: int
    arg: int = 0
    frames: list[int] = field(default_factory=list)


def parse_record(data, pos: int, n: int) -> Parsed:
    """The syntax of the record at ``data[pos:n]`` (a prefix of 13 bytes is there), with
    CPython's messages; raises :class:`Broken`."""

    def varint(p: int, message: str, u32: bool = True) -> tuple[int, int]:
        try:
            value, after = scan_uleb128(data, p, n)
        except LEB128Error:
            raise Broken(message) from None
        if u32 and value > U32_MAX:
            raise Broken(message)
        return value, after

    def status(p: int, message: str) -> int:
        if p >= n:
            raise Broken(message)
        return p + 1

    encoding = data[pos + ENCODING_AT]
    if encoding > POP_PUSH:
        raise Broken(f"Unknown stack encoding: {encoding}")
    p = pos + PREFIX
    if encoding == REPEAT:
        count, p = varint(p, "Malformed varint for RLE count")
        if count > (n - p) // 2:
            raise Broken(f"Invalid RLE count {count} exceeds maximum possible {(n - p) // 2}")
        for _ in range(count):
            _, p = varint(p, "Malformed varint in RLE sample data", u32=False)
            p = status(p, "Unexpected end of sample data in RLE")
        return Parsed(p, encoding, count)
    _, p = varint(p, "Malformed varint in sample data", u32=False)
    p = status(p, "Unexpected end of sample data")
    arg = 0
    if encoding != FULL:
        arg, p = varint(p, INVALID_VARINT)
    count, p = varint(p, INVALID_VARINT)
    if count > MAX_DEPTH:  # (CPython fails on the counts before it reads any frame)
        raise TooDeep(encoding, arg, count)
    frames = []
    for _ in range(min(count, n - p)):  # (a varint takes a byte at least)
        frame, p = varint(p, INVALID_VARINT)
        frames.append(frame)
    if len(frames) < count:
        raise Broken(INVALID_VARINT)
    return Parsed(p, encoding, 1, arg, frames)


@dataclass
class CheckedRegion:
    """What the walk found: the problems, the samples and records read, whether every byte of
    the region was read as records, and the threads seen."""

    problems: list[Problem] = field(default_factory=list)
    samples: int = 0
    records: int = 0
    complete: bool = True
    threads: int = 0


def walk_region(region, *, thread_count: int, frame_count: int, frame_string_ok=None,
                sample_count: int | None = None, start: int = 0,
                threads: Iterable[bytes] = (), records: int = 0) -> CheckedRegion:
    """Check every record of the (decompressed) *region*; *sample_count*: the header's, checked
    against the samples when every byte was read as records. (The byte order does not matter:
    threads are told apart by their prefix bytes, and nothing else is fixed-width.)

    *start*: the region offset of the first record to check, the records before it being known
    good, with *threads* (the prefix bytes 0..11 of each thread they hold) and *records* (how
    many they are); the stacks then count as unknown until each thread's next FULL record."""
    data = memoryview(region)
    n = len(data)
    walk = CheckedRegion(records=records)
    # by prefix bytes 0..11: the thread's stack, innermost first; None while unknown
    stacks: dict[bytes, list[int] | None] = dict.fromkeys(threads)
    reported: set[tuple[str, int]] = set()  # (kind, frame): a bad frame reported once
    pos = start
    resumed = False  # records were skipped: their numbers are unknown from there on

    def report(message: str, at: int, **extra) -> None:
        walk.problems.append(Problem("unreadable", message, offset=at, region=True,
                                     record=None if resumed else walk.records, **extra))

    while pos < n:
        if len(walk.problems) >= MAX_PROBLEMS:
            walk.problems.append(Problem("unreadable", f"more than {MAX_PROBLEMS} problems in "
                                         "the sample records: the rest were not checked",
                                         offset=pos, region=True))
            walk.complete = False
            break
        if n - pos < PREFIX:
            report(f"Truncated sample data: {n - pos} trailing bytes", pos)
            walk.complete = False
            break
        key = bytes(data[pos + THREAD_ID_AT:pos + ENCODING_AT])  # (thread and interpreter)
        if key not in stacks:
            if len(stacks) == thread_count:
                report("Invalid thread count: sample data contains more unique threads than "
                       f"declared in header (declared {thread_count}, found at least "
                       f"{len(stacks) + 1})", pos, field=THREAD_COUNT_PATH)
            stacks[key] = []
        try:
            record = parse_record(data, pos, n)
        except Broken as exc:
            report(too_deep(exc, stacks[key]) if isinstance(exc, TooDeep) else str(exc), pos)
            walk.complete = False
            resume = _resume(data, pos, n, set(stacks))
            if resume is None:
                break
            walk.problems.append(Problem(
                "note", f"{resume - pos} bytes skipped after the broken record: records of "
                "known threads resume here (stacks are unknown until each thread's next FULL "
                "record)", offset=resume, region=True))
            stacks = dict.fromkeys(stacks)
            pos = resume
            resumed = True
            continue
        old = stacks[key]
        if record.encoding == REPEAT:
            new_stack = old
        else:
            if record.encoding == FULL and len(record.frames) > MAX_DEPTH:
                report(f"Stack depth {len(record.frames)} exceeds capacity {MAX_DEPTH}", pos)
            new_stack = _stack_after(record, old)
            if (record.encoding == SUFFIX and old is not None and record.arg > len(old)):
                report(f"Shared count {record.arg} exceeds current stack depth {len(old)}", pos)
            if (record.encoding != FULL and new_stack is not None
                    and len(new_stack) > MAX_DEPTH):
                report(f"Final stack depth {len(new_stack)} exceeds capacity {MAX_DEPTH}", pos)
        for frame in record.frames:
            if frame >= frame_count and ("index", frame) not in reported:
                reported.add(("index", frame))
                report(f"Invalid frame index: {frame}", pos, field="frame_table",
                       expected=f"below {frame_count}", found=str(frame))
            elif (frame < frame_count and frame_string_ok is not None
                  and frame < len(frame_string_ok) and not frame_string_ok[frame]
                  and ("strings", frame) not in reported):
                reported.add(("strings", frame))
                report("Invalid string index in frame", pos, field=f"frame_table -> [{frame}]")
        stacks[key] = new_stack
        walk.samples += record.samples
        walk.records += 1
        pos = record.end
    walk.threads = len(stacks)
    if walk.complete and sample_count is not None and walk.samples != sample_count:
        offset, path = SAMPLE_COUNT
        walk.problems.append(Problem(
            "unreadable", f"Sample count mismatch: header declares {sample_count} samples but "
            f"replay decoded {walk.samples}", offset=offset, field=path,
            expected=str(sample_count), found=str(walk.samples)))
    return walk


def _stack_after(record: Parsed, old: list[int] | None) -> list[int] | None:
    """The thread's stack after a stack change (docs/format/records.md#record-types), None
    while unknown; an impossible SUFFIX clamped to the stack as it stands."""
    if record.encoding == FULL:
        return record.frames
    if old is None:
        return None
    if record.encoding == SUFFIX:
        shared = min(record.arg, len(old))
        return record.frames + old[len(old) - shared:] if record.frames else old[:shared]
    return record.frames + old[record.arg:]


def _resume(data, broken: int, n: int, keys: set[bytes]) -> int | None:
    """The first offset after *broken* (within :data:`RESYNC_WINDOW`) where a record of a known
    thread parses and is followed by another such record or by the end of the region."""
    raw = bytes(data[broken + 1:min(n, broken + 1 + RESYNC_WINDOW)])
    start = 0
    while True:
        found = [at for at in (raw.find(key, start) for key in keys) if at >= 0]
        if not found:
            return None
        at = min(found)
        candidate = broken + 1 + at
        if _record_ends_well(data, candidate, n, keys):
            return candidate
        start = at + 1


def _record_ends_well(data, pos: int, n: int, keys: set[bytes]) -> bool:
    if n - pos < PREFIX:
        return False
    try:
        end = parse_record(data, pos, n).end
    except Broken:
        return False
    return end == n or (n - end >= PREFIX and bytes(data[end:end + 12]) in keys
                        and data[end + 12] <= POP_PUSH)
