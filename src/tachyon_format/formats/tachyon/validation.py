"""Check a whole Tachyon file and report every problem found: for CI jobs, test suites and
ingestion pipelines (docs/validation.md lists every check).

Three steps, each carrying on past what it can:

1. :func:`.file.check_file`: the header, statistics block, table offsets, tables (entry by
   entry) and footer;
2. when nothing there stops CPython's reader, the fast decoder (``iter_batches``, in memory
   bounded by the batch size) reads every record as ``read`` does; if it gets through, the file
   is readable, and only the checks of what the parts say of each other remain (the thread
   count, the statistics block's duration against the timestamps);
3. otherwise :func:`.region.check_walk.walk_region` walks the records one by one and reports
   each problem it can, past where the record syntax breaks (where records resume).

The problems about records are told where the region lies in the file as they leave
(:meth:`Problem.in_file <tachyon_format.Problem.in_file>`).

A file whose header is the all-zero placeholder (the profiler was killed before it finished)
is said to be so, with what ``read(..., strict=False)`` recovers from it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tachyon_format.errors import FormatError
from tachyon_format.problems import Problem
from tachyon_format.schema import tachyon_values as spec

from ..sources import Source, loaded
from . import zstd
from .checks import header_field
from .file import Plan, TachyonFile, check_file, open_file
from .reader import iter_batches
from .region.check_walk import walk_region
from .salvage import killed_summary
from .settings import MAX_DECOMPRESSED_SIZE
from .tables import frame_strings_ok

Batches = Callable[[Any], Iterator[Any]]
"""``iter_batches`` with the caller's batch size and limits bound."""


class _Batches:
    """``iter_batches`` over the file opened once: the passes over the records (the first
    problem, then maybe the clocks) share one decoding of the tables (a frame table of
    millions of entries took as long as the records)."""

    def __init__(self, samples_per_batch: int, max_region_size: int) -> None:
        self.samples_per_batch = samples_per_batch
        self.max_region_size = max_region_size
        self.opened: TachyonFile | None = None

    def __call__(self, data) -> Iterator[Any]:
        if self.opened is None:  # (raises, here and at the next pass alike, if it cannot)
            self.opened = open_file(data, max_region_size=self.max_region_size)
        return iter_batches(self.opened, samples_per_batch=self.samples_per_batch,
                            max_region_size=self.max_region_size)


SAMPLE_COUNT = header_field("sample_count")
THREAD_COUNT = header_field("thread_count")
WALK_ALL_LIMIT = 8 << 20
"""A region larger than this (decompressed bytes) is walked record by record only from the fast
decoder's first problem on (the walk is plain Python: some seconds per 10 MB)."""


def validate(source: Source, *, samples_per_batch: int = 1 << 20,
             max_region_size: int = MAX_DECOMPRESSED_SIZE) -> list[Problem]:
    """Every problem found in the Tachyon file *source*, ``[]`` if there is none; each with a
    severity (``unreadable``: CPython's reader rejects the file). Never raises for bad input,
    nor for a path that is missing, a directory or unreadable (a problem says so).
    *samples_per_batch* bounds the memory of the decoding pass; *max_region_size* as for
    ``read`` (docs/format/limits.md)."""
    try:
        with _opened(source) as data:
            return _problems(data, _Batches(samples_per_batch, max_region_size),
                             max_region_size)
    except OSError as exc:
        return [Problem.from_os_error(exc)]
    except TypeError:
        raise  # not a path, bytes or binary file: the caller's mistake, not the file's
    except Exception as exc:  # a bug here must not break the never-raises contract
        return [Problem("unreadable", f"internal error while validating: "
                        f"{type(exc).__name__}: {exc}")]


@contextlib.contextmanager
def _opened(source: Source) -> Iterator[Any]:
    """The file's bytes: a memory map for a path (none for an empty file), else the bytes."""
    with loaded(source, mapped=True) as file:
        yield memoryview(file.data).cast("B")


def _problems(data, batches: Batches, max_region_size: int) -> list[Problem]:
    problems, plan = check_file(data)
    # (the region starts after the header in every layout, the placeholder header's too)
    return [problem.in_file(spec.HEADER_SIZE, plan.compressed)
            for problem in _found(data, batches, max_region_size, problems, plan)]


def _found(data, batches: Batches, max_region_size: int, problems: list[Problem],
           plan: Plan) -> list[Problem]:
    if plan.killed:
        return problems + killed_summary(data)
    if plan.legacy:  # read() reads it: anything else wrong shows there
        return problems + _first_problem(data, batches, plan)[0]
    if plan.header is None or plan.region is None:
        return problems
    first = None
    timeline = Timeline()
    if not any(p.fatal for p in problems):
        found, timeline = _first_problem(data, batches, plan)
        if not found:
            return problems + _consistency(plan, timeline, data, batches)
        first = found[0]
        if first.field == SAMPLE_COUNT[1]:  # every record read well: no walk needed
            return problems + [Problem(
                "unreadable", first.message, offset=first.offset, field=first.field,
                expected=str(plan.header.sample_count), found=str(timeline.samples)),
                *_consistency(plan, timeline, data, batches)]
        if not first.region and not (first.field or "").startswith("sample_region"):
            return problems + found  # a check at open that check_file does not repeat
    region, region_problem = _region(data, plan, max_region_size)
    if region_problem is not None:
        problems.append(region_problem)
        if len(region) > WALK_ALL_LIMIT:
            return problems + [Problem(
                "note", f"the {len(region)} bytes of records that did decompress were not "
                "checked one by one (more than the walk's limit); read(..., strict=False) "
                "recovers their samples", offset=spec.HEADER_SIZE, field="sample_region")]
        if len(region) >= max_region_size:  # a bomb, or a region beyond the caller's cap
            return problems + [Problem(
                "note", f"the {len(region)} bytes of records before the size cap were not "
                "checked one by one", offset=spec.HEADER_SIZE, field="sample_region")]
    assert plan.header is not None and plan.footer is not None
    start = 0
    if (first is not None and first.region and first.offset and first.record is not None
            and len(region) > WALK_ALL_LIMIT):
        # a large region: the fast decoder vouches for the records before its first problem
        start = first.offset
        problems.append(Problem("note", f"the records before region offset {start} were "
                                "checked by the fast decoder; the walk starts there, so the "
                                "sample count is not compared", offset=start, region=True))
    walk = walk_region(
        region, order=plan.order, thread_count=plan.header.thread_count,
        frame_count=plan.footer.frame_count,
        frame_string_ok=None if plan.frames is None else frame_strings_ok(
            plan.frames, plan.footer.string_count),
        sample_count=None if region_problem is not None or start else plan.header.sample_count,
        start=start, threads=timeline.thread_ids if start else (),
        records=first.record if start and first is not None and first.record else 0)
    walked = walk.problems
    if start and first is not None and (first.message, first.offset) not in {
            (p.message, p.offset) for p in walked}:
        walked.insert(0, first)  # (a stack check the walk cannot repeat without the stacks)
    said = {(p.message, p.offset) for p in problems}
    problems += [p for p in walked if (p.message, p.offset) not in said]
    if (walk.complete and not start and region_problem is None
            and walk.threads < plan.header.thread_count):
        problems.append(_thread_count_problem(plan, walk.threads))
    return problems


@dataclass
class Timeline:
    """What the decoded samples say of time and threads (for the consistency checks)."""

    samples: int = 0
    threads: int = 0
    first_us: int | None = None
    last_us: int | None = None
    thread_ids: list[tuple[int, int]] = field(default_factory=list)  # (interpreter, thread)


def _first_problem(data, batches: Batches,
                   plan: Plan) -> tuple[list[Problem], Timeline]:
    """The first problem CPython's reader would meet (as ``read`` finds it, fast), or none;
    and the timeline of the samples decoded."""
    timeline = Timeline()
    threads = None
    try:
        for batch in batches(data):
            ts = batch.samples.timestamp_us
            timeline.samples += len(ts)
            threads = batch.threads
            if len(ts):
                first, final = int(ts.min()), int(ts.max())
                timeline.first_us = min(first, timeline.first_us or first)
                timeline.last_us = max(final, timeline.last_us or final)
    except FormatError as exc:
        return [Problem.from_error(exc)], _with_threads(timeline, threads)
    return [], _with_threads(timeline, threads)


def _with_threads(timeline: Timeline, threads) -> Timeline:
    """*timeline* with the threads of the last batch (every thread seen so far)."""
    if threads is not None:
        timeline.threads = len(threads)
        timeline.thread_ids = list(zip(threads.interpreter_id.tolist(),
                                       threads.thread_id.tolist(), strict=True))
    return timeline


def _clock_goes_back(data, batches: Batches) -> bool:
    """Does some thread's clock go backwards? (A second pass, only for a file whose span of
    timestamps already looks wrong.)"""
    clocks = _Clocks()
    # (every record reads well, but the sample count, checked after the last batch, may be
    # wrong: that problem is already said)
    with contextlib.suppress(FormatError):
        for batch in batches(data):
            clocks.add(batch.samples.timestamp_us, batch.samples.thread, len(batch.threads))
    return clocks.backwards


class _Clocks:
    """Per thread row, its last timestamp so far; and whether a thread's clock went back."""

    def __init__(self) -> None:
        self.last = np.zeros(0, np.uint64)
        self.seen = np.zeros(0, bool)
        self.backwards = False

    def add(self, ts: np.ndarray, rows: np.ndarray, threads: int) -> None:
        grow = threads - len(self.last)
        self.last = np.concatenate([self.last, np.zeros(grow, np.uint64)])
        self.seen = np.concatenate([self.seen, np.zeros(grow, bool)])
        order = np.argsort(rows, kind="stable")
        r, t = rows[order], ts[order]
        starts = np.r_[True, r[1:] != r[:-1]]  # each thread's first sample of the batch
        previous = np.where(starts, self.last[r], np.r_[t[:1], t[:-1]])
        has_previous = ~starts | self.seen[r]
        self.backwards |= bool((has_previous & (t < previous)).any())
        ends = np.r_[starts[1:], True]
        self.last[r[ends]] = t[ends]
        self.seen[r] = True


def _consistency(plan: Plan, timeline: Timeline, data,
                 batches: Batches) -> list[Problem]:
    """Checks of a readable file's parts against each other (CPython makes none of them)."""
    assert plan.header is not None
    problems = []
    if timeline.threads < plan.header.thread_count:
        problems.append(_thread_count_problem(plan, timeline.threads))
    stats = plan.stats
    if stats is not None and timeline.first_us is not None and timeline.last_us is not None:
        span_s = (timeline.last_us - timeline.first_us) / 1e6
        slack_s = 0.05 * stats.duration_sec + 2 * plan.header.sample_interval_us / 1e6
        if span_s > stats.duration_sec + slack_s:
            backwards = _clock_goes_back(data, batches)
            problems.append(Problem(
                "note" if backwards else "inconsistent",
                "the samples' timestamps span more time than the statistics block's duration"
                + (" (a thread's clock goes backwards, so the span means little)"
                   if backwards else ""),
                field="stats -> duration_sec",
                expected=f"at most {stats.duration_sec:.6g} s",
                found=f"{span_s:.6g} s from the first to the last sample"))
    return problems


def _thread_count_problem(plan: Plan, found: int) -> Problem:
    assert plan.header is not None
    offset, path = THREAD_COUNT
    return Problem("inconsistent", "the header declares more threads than the sample records "
                   "hold (CPython's reader only rejects fewer)", offset=offset,
                   field=path, expected=str(found),
                   found=str(plan.header.thread_count))


def _region(data, plan: Plan, max_region_size: int) -> tuple[bytes, Problem | None]:
    """The (decompressed) sample region, or as much of it as decompresses, and the problem
    that stopped its decompression."""
    assert plan.region is not None
    start, end = plan.region
    raw = memoryview(data)[start:end]
    if not plan.compressed:
        return bytes(raw), None
    chunks = []
    try:
        for chunk in zstd.iter_decompress(raw, file_offset=spec.HEADER_SIZE,
                                          limit=max_region_size):
            chunks.append(bytes(chunk))
    except FormatError as exc:
        return b"".join(chunks), Problem.from_error(exc)
    return b"".join(chunks), None
