"""The sample region one record at a time: the reference decoder (tier d, plain Python).

The records and what they mean are in docs/format/records.md; the checks CPython's reader
makes while replaying them, in its order and with its messages, in
docs/format/reader.md#checks-during-replay (numbered as there in the comments below).

* :func:`scan_record` reads one record and makes every check CPython makes on it. It is
  also the fallback of the vectorised decoder (:mod:`.decoder`) for whatever that one
  does not handle itself: new threads and interpreters, status bytes >= 0x80, malformed or
  truncated input; and ``validate``'s record checks (:mod:`.check_walk`), which it reports
  instead of raising where the record's bytes still parse.
* :func:`stack_after` is the table of docs/format/records.md#record-types: a thread's
  stack after a record, from its stack before.
* :func:`decode_region` decodes a whole region with a plain loop over the records, into
  the same arrays as the vectorised decoder, so that tests compare the two array for
  array: each thread has a clock and a stack (frame indices, innermost first), and each
  sample's stack is named by a node of a prefix tree, a dict ``(parent, frame) -> node``
  whose new nodes are numbered as they are met (records in order, each stack walked
  outermost first: so each record's new frames, outermost first).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from typing import Literal, NamedTuple, NoReturn

import numpy as np
import numpy.typing as npt

from tachyon_format.schema.leb128 import (
    U32_MAX,
    U64_MAX,
    OverlongLEB128,
    TruncatedLEB128,
    scan_uleb128,
)

from . import replay_checks as checks
from .columns import SampleBatch
from .layout import (
    COUNTS,
    ENCODING_AT,
    INTERPRETER_ID_AT,
    INTERPRETER_ID_SIZE,
    MAX_STACK_DEPTH,
    MIN_REPEAT_ENTRY_SIZE,
    PREFIX_SIZE,
    THREAD_ID_AT,
    THREAD_ID_SIZE,
)
from .records import FULL, POP_PUSH, REPEAT, SUFFIX, ReadStats, RegionFacts
from .replay_checks import ReplayCheck
from .threads import ThreadCountError, ThreadTable

MAX_DEPTH = MAX_STACK_DEPTH

Report = Callable[..., None]
"""``validate``'s sink of problems: ``report(message, field=, expected=, found=)`` (each
where known)."""

__all__ = ["DecodedRegion", "Incomplete", "Record", "Report", "decode_region", "scan_record",
           "stack_after"]


class Incomplete(Exception):
    """The record runs past the end of the data, and more data may follow."""


class Record(NamedTuple):
    """One record, as read by :func:`scan_record`."""

    offset: int  # region offset of its first byte
    end: int  # position after it, in the data read
    encoding: int
    thread_id: int
    interpreter_id: int
    row: int  # the thread's row in the thread table
    deltas: list[int]  # per sample: delta_us
    statuses: list[int]  # per sample: status byte
    arg: int  # SUFFIX: shared; POP_PUSH: pop; else 0
    frames: list[int]  # listed frame indices, innermost first
    depth: int  # the thread's stack depth after the record


def scan_record(
    data: bytes | memoryview,
    pos: int,
    end: int,
    *,
    final: bool,
    facts: RegionFacts,
    threads: ThreadTable,
    depth_of: Callable[[int], int | None],
    base: int = 0,
    index: int = 0,
    report: Report | None = None,
) -> Record:
    """Scan: the record at ``data[pos:end]``, with CPython's checks in CPython's order.

    *threads* gives the row of the record's thread, adding it if new (*data* must index
    as ints: bytes, or a memoryview of them); *depth_of(row)* is that thread's current
    stack depth. Errors are :class:`FormatError` at region offset ``base + pos``, record
    number *index*. If the record runs past *end* and *final* is false, raises
    :class:`Incomplete` (having maybe added the thread).

    With *report* (``validate``), the checks that leave the record's bytes whole (a thread
    beyond the header's count, a shared count beyond the depth, a final depth beyond
    :data:`MAX_DEPTH` of counts within it, a frame or string index beyond its table) go to
    *report* instead, and the record is read on: the thread added, the shared frames clamped
    to the stack (the record's ``arg``), the stack deeper than CPython allows. The syntax
    checks still raise (the walk then looks for where records resume), and so do counts
    beyond :data:`MAX_DEPTH`, which CPython fails on before it reads a frame. *depth_of* may
    then return None, for a stack unknown (records skipped): the checks of the depth wait."""
    offset = base + pos

    def fail(check: ReplayCheck, a: object = 0, b: object = 0) -> NoReturn:
        raise check.error(a, b, offset=offset, record=index)

    def varint(check: ReplayCheck, *, u32: bool = True) -> int:
        nonlocal p
        value, p = _uleb128(data, p, end, final, u32)
        if value is None:
            fail(check)
        return value

    def sample(malformed: ReplayCheck, missing: ReplayCheck) -> None:
        """One (delta_us, status) pair."""
        nonlocal p
        deltas.append(varint(malformed, u32=False))
        if p >= end:
            if not final:
                raise Incomplete
            fail(missing)
        statuses.append(data[p])
        p += 1

    # 1. the prefix: thread_id u64, interpreter_id u32, encoding u8
    if end - pos < PREFIX_SIZE:
        if not final:
            raise Incomplete
        fail(checks.TRUNCATED_DATA, end - pos)
    at = pos + THREAD_ID_AT
    thread_id = int.from_bytes(data[at:at + THREAD_ID_SIZE], facts.endian)
    at = pos + INTERPRETER_ID_AT
    interpreter_id = int.from_bytes(data[at:at + INTERPRETER_ID_SIZE], facts.endian)
    encoding = data[pos + ENCODING_AT]
    try:  # 2. one thread more than the header declares (before the encoding is looked at)
        row = threads.row(interpreter_id, thread_id)
    except ThreadCountError as exc:
        _failed(report, checks.THREAD_COUNT, offset, index, exc.declared, exc.found)
        row = threads.add(interpreter_id, thread_id)
    if encoding > POP_PUSH:  # 3.
        fail(checks.UNKNOWN_ENCODING, encoding)
    p = pos + PREFIX_SIZE
    deltas: list[int] = []
    statuses: list[int] = []
    frames: list[int] = []
    depth = depth_of(row)
    arg = 0

    if encoding == REPEAT:  # count, then count (delta_us, status) pairs; the stack stays
        count = varint(checks.RLE_COUNT_VARINT)  # 4. (a u32: check 6 cannot fail)
        # 5. an entry takes at least 2 bytes: checked at once when the region's size is known
        left = (end - p if facts.region_size is None or final
                else facts.region_size - base - p)
        if (final or facts.region_size is not None) and count > left // MIN_REPEAT_ENTRY_SIZE:
            fail(checks.RLE_COUNT, count, left // MIN_REPEAT_ENTRY_SIZE)
        if not final and MIN_REPEAT_ENTRY_SIZE * count > end - p:  # (not all here yet)
            raise Incomplete
        for _ in range(count):  # 7. and 8.
            # (a delta of 1 or 2 bytes and its status, the usual, read here: a third of the
            # time of sample(); any other, and every error, by sample())
            if p + 2 < end:
                b = data[p]
                if b < 0x80:
                    deltas.append(b)
                    statuses.append(data[p + 1])
                    p += 2
                    continue
                c = data[p + 1]
                if c < 0x80:
                    deltas.append(b & 0x7F | c << 7)
                    statuses.append(data[p + 2])
                    p += 3
                    continue
            sample(checks.RLE_VARINT, checks.RLE_END)
        return Record(offset, p, encoding, thread_id, interpreter_id, row, deltas, statuses,
                      arg, frames, depth)

    sample(checks.SAMPLE_VARINT, checks.SAMPLE_END)  # 9. and 10.
    # its counts (FULL depth; SUFFIX shared, new; POP_PUSH pop, push): the last one counts
    # the listed frames
    *args, count = [varint(checks.VARINT) for _ in COUNTS[encoding]]  # 11.
    if encoding == FULL:  # the whole stack
        if count > MAX_DEPTH:  # 12.
            fail(checks.STACK_DEPTH, count, MAX_DEPTH)
        kept = 0
    else:  # SUFFIX: `shared` outermost frames kept; POP_PUSH: `pop` innermost ones dropped
        (arg,) = args
        # (a stack unknown to validate: taken as empty, its checks made only where the
        # counts alone fail)
        known = depth is not None
        if encoding == SUFFIX:
            if known and arg > depth:  # 13.
                _failed(report, checks.SHARED_COUNT, offset, index, arg, depth, count=count)
                arg = depth  # (validate reads on with the whole stack shared)
            kept = arg
        else:
            kept = max(depth - arg, 0) if known else 0  # a pop deeper than the stack: clamped
        if kept + count > MAX_DEPTH and (known or count > MAX_DEPTH):  # 14.
            _failed(report, checks.FINAL_DEPTH, offset, index, kept + count, MAX_DEPTH,
                    count=count)
    for _ in range(count):
        frames.append(varint(checks.VARINT))  # 11.
    # 15. and 16., when the stack is materialised for collect(): the kept frames passed
    # these checks when they were pushed, so only the new ones can fail
    for frame in frames:
        if frame >= facts.frame_count:
            _failed(report, checks.FRAME_INDEX, offset, index, frame,
                    expected=f"below {facts.frame_count}", found=str(frame))
        elif facts.frame_string_ok is not None and not facts.frame_string_ok[frame]:
            _failed(report, checks.STRING_INDEX, offset, index, frame)
    return Record(offset, p, encoding, thread_id, interpreter_id, row, deltas, statuses, arg,
                  frames, kept + count)


def _failed(report: Report | None, check: ReplayCheck, offset: int, index: int,
            a: object = 0, b: object = 0, *, count: int = 0, **found: str) -> None:
    """*check* of :func:`scan_record` failed on the record at region offset *offset*, number
    *index* (*a* and *b*: the numbers of its message): raises its :class:`FormatError`, or,
    with *report*, reports it (its field, and with *found*: what was expected and found) and
    returns, unless the record's last count, *count*, is beyond :data:`MAX_DEPTH` (CPython
    fails on it before it reads a frame, so its frames' syntax is unknown)."""
    if report is None or count > MAX_DEPTH:
        raise check.error(a, b, offset=offset, record=index)
    message, path = check.text(a, b), check.path(a)
    if path is None:
        report(message, **found)
    else:
        report(message, field=path, **found)


def stack_after(old: list[int], rec: Record) -> list[int]:
    """A thread's stack after *rec*, given its stack *old* before it (both frame indices,
    innermost first): docs/format/records.md#record-types."""
    if rec.encoding == REPEAT:
        return old
    if rec.encoding == FULL:
        return rec.frames
    if rec.encoding == SUFFIX and rec.frames:  # new frames over the `shared` outermost ones
        return rec.frames + old[len(old) - rec.arg:]
    if rec.encoding == SUFFIX:  # none new: CPython keeps the `shared` *innermost* ones
        return old[:rec.arg]
    return rec.frames + old[rec.arg:]  # POP_PUSH: `pop` innermost ones dropped (clamped)


def _uleb128(data, p: int, end: int, final: bool, u32: bool) -> tuple[int | None, int]:
    """Scan: one ULEB128 as CPython reads it (:func:`scan_uleb128`): ``(value, position
    after)``; value None if malformed (more than 10 bytes, past the end of final data, or
    above 0xFFFFFFFF for a *u32* field); :class:`Incomplete` past the end of data that is
    not final."""
    try:
        value, p = scan_uleb128(data, p, end)
    except TruncatedLEB128:
        if not final:
            raise Incomplete from None
        return None, end
    except OverlongLEB128:
        return None, p
    if u32 and value > U32_MAX:
        return None, p
    return value, p


# ---------------------------------------------------------------------- the whole region
class DecodedRegion(NamedTuple):
    """What the region decodes to: :class:`SampleDecoder <.decoder.SampleDecoder>`'s
    results, under the same names."""

    batch: SampleBatch  # samples in replay() order and the record table
    threads: tuple[npt.NDArray[np.uint32], npt.NDArray[np.uint64]]  # (interpreter, thread)
    stack_frame: npt.NDArray[np.int32]  # per prefix-tree node: its frame index
    stack_parent: npt.NDArray[np.int32]  # per node: the next node outward, -1 for none
    stats: dict[str, int]  # CPython's get_stats()


def decode_region(
    region: bytes | memoryview,
    *,
    order: Literal["<", ">"],
    start_time_us: int,
    thread_count: int,
    frame_count: int,
    frame_string_ok: npt.ArrayLike | None = None,
) -> DecodedRegion:
    """Scan: the whole (decompressed) sample region, record by record, as CPython's
    ``replay()`` reads it; raises :class:`FormatError` where it would fail."""
    facts = RegionFacts.of(order=order, start_time_us=start_time_us,
                           thread_count=thread_count, frame_count=frame_count,
                           frame_string_ok=frame_string_ok)
    data = bytes(region)
    threads = ThreadTable(facts.thread_count, facts.start_time_us)
    clock: defaultdict[int, int] = defaultdict(lambda: facts.start_time_us)  # by thread row
    stack: defaultdict[int, list[int]] = defaultdict(list)  # by row: frames, innermost first
    node: defaultdict[int, int] = defaultdict(lambda: -1)  # by row: its stack's node
    node_of: dict[tuple[int, int], int] = {}  # (parent node or -1, frame) -> node
    node_frame: list[int] = []
    node_parent: list[int] = []
    samples: dict[str, list[int]] = {"timestamp_us": [], "thread": [], "status": [],
                                     "stack": []}
    records: dict[str, list[int]] = {"offset": [], "encoding": [], "first_sample": []}
    stats = ReadStats()

    def node_of_stack(frames: list[int]) -> int:
        """The node of a stack (frames innermost first; -1 if empty), adding the nodes it
        lacks, outermost first."""
        at = -1
        for frame in reversed(frames):
            if (at, frame) not in node_of:
                node_of[(at, frame)] = len(node_frame)
                node_frame.append(frame)
                node_parent.append(at)
            at = node_of[(at, frame)]
        return at

    pos = 0
    while pos < len(data):
        rec = scan_record(data, pos, len(data), final=True, facts=facts, threads=threads,
                          depth_of=lambda row: len(stack[row]), index=len(records["offset"]))
        if rec.encoding != REPEAT:
            stack[rec.row] = stack_after(stack[rec.row], rec)
            node[rec.row] = node_of_stack(stack[rec.row])
        records["offset"].append(rec.offset)
        records["encoding"].append(rec.encoding)
        records["first_sample"].append(len(samples["stack"]))
        for delta, status in zip(rec.deltas, rec.statuses, strict=True):
            clock[rec.row] = (clock[rec.row] + delta) & U64_MAX
            samples["timestamp_us"].append(clock[rec.row])
            samples["thread"].append(rec.row)
            samples["status"].append(status)
            samples["stack"].append(node[rec.row])
        stats.add([int(rec.encoding == e) for e in range(4)], len(rec.deltas))
        pos = rec.end

    batch = SampleBatch(
        timestamp_us=np.array(samples["timestamp_us"], np.uint64),
        thread=np.array(samples["thread"], np.int32),
        status=np.array(samples["status"], np.uint8),
        stack=np.array(samples["stack"], np.int32),
        record_offset=np.array(records["offset"], np.int64),
        record_encoding=np.array(records["encoding"], np.uint8),
        record_first_sample=np.array(records["first_sample"], np.int64),
    )
    return DecodedRegion(batch, threads.ids(), np.array(node_frame, np.int32),
                         np.array(node_parent, np.int32), stats.as_stats())
