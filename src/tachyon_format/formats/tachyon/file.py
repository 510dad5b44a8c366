"""Open a Tachyon file: header, layout, statistics, footer and tables, checked as CPython does;
and every problem of those parts, for ``validate``.

Tier (a)/(b): the fixed layouts are parsed with their ``struct`` twins generated from the
declarations in ``schema.tachyon`` (``schema.tachyon_plain``), so that opening a file loads no
construct; the sample region is only located (and decompressed on demand), never decoded here.

The checks (declared in :mod:`.checks`) run in CPython 3.15.2's order
(docs/format/reader.md#checks-at-open) so that a file CPython rejects fails here with the same
message, as a :class:`FormatError` that names the offset and field. One walk (:func:`walk`)
makes them for all three readers: :func:`open_file` stops at the first problem, :func:`check_file`
(``validate``) reports each and carries on, salvage keeps the parts that pass. Files of the older
layouts L1/L2 (3.15 pre-releases, same format_version) are recognised by the sniffing rule of
docs/format/layout-history.md#sniffing and read as well.
"""

from __future__ import annotations

import contextlib
import mmap
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from tachyon_format.errors import FormatError
from tachyon_format.model import Frames, Strings
from tachyon_format.problems import Problem
from tachyon_format.schema import tachyon_plain as plain
from tachyon_format.schema import tachyon_values as spec
from tachyon_format.schema.plain import ByteOrder

from ..sources import Source, load
from . import zstd
from .checks import (
    FOOTER_CHECKS,
    FRAME_COUNT,
    HEADER_CHECKS,
    LEGACY,
    MAGIC,
    OFFSET_CHECKS,
    STRING_COUNT,
    TOO_SMALL,
    Facts,
    Mode,
    is_legacy,
    run,
)
from .get_info import info_of
from .settings import MAX_DECOMPRESSED_SIZE
from .stats import KEYS as STATS_KEYS
from .stats import Stats, parse_stats
from .tables import (
    Layout,
    frame_strings_ok,
    read_frames,
    read_frames_until_problem,
    read_strings,
    read_strings_until_problem,
)

KEEP_REGION = 16 << 20
"""A zstd region up to this size, decompressed once to learn its size, is kept for decoding;
a larger one is decompressed again as it is decoded (memory stays bounded)."""
KEEP_READ_REGION = 64 << 20
"""The same for a reader that decodes the whole region (``keep_region``): kept up to this
size, so that it is decompressed once; beyond it, memory stays bounded (a hostile file's
region of a gigabyte, of which one record is decoded before an error, is never held)."""

@dataclass
class TachyonFile:
    """A Tachyon file's metadata and tables, with access to its sample region."""

    data: Any  # bytes-like: an mmap, bytes or memoryview of the whole file
    order: ByteOrder
    layout: Layout
    header: Any  # the fields of plain.HEADER (or plain.LEGACY_HEADER), by name
    footer: Any  # the fields of plain.FOOTER
    stats: Stats | None
    strings: Strings | None = None
    frames: Frames | None = None
    name: str = ""
    mapping: mmap.mmap | None = field(default=None, repr=False)
    """The memory map of the file when it was opened by path (closed by :meth:`close`)."""
    max_region_size: int = MAX_DECOMPRESSED_SIZE
    """The most a zstd sample region may decompress to (CPython's reader: 2**30 bytes)."""
    _region: list[bytes] | None = field(default=None, repr=False)  # decompressed, kept
    _region_size: int | None = field(default=None, repr=False)

    # -- header-level facts -----------------------------------------------------------
    @property
    def file_size(self) -> int:
        return len(self.data)

    @property
    def sample_count(self) -> int:
        return self.header.sample_count

    @property
    def thread_count(self) -> int:
        return self.header.thread_count

    @property
    def start_time_us(self) -> int:
        return self.header.start_time_us

    @property
    def compressed(self) -> bool:
        return self.header.compression == spec.Compression.ZSTD

    @property
    def region_span(self) -> tuple[int, int]:
        """File offsets of the sample region: ``[64, string_table_offset)``."""
        return spec.HEADER_SIZE, self.header.string_table_offset

    @property
    def mode(self) -> int | None:
        config = getattr(self.header, "profiling_config", None)
        if config is None or config.mode_plus_one == 0:
            return None
        return config.mode_plus_one - 1

    @property
    def capture_features(self) -> int | None:
        config = getattr(self.header, "profiling_config", None)
        if config is None or not config.features_known:
            return None
        return config.capture_features

    @property
    def facts(self) -> Facts:
        """What the declared checks (:mod:`.checks`) look at."""
        return Facts(self.file_size, order=self.order, header=self.header, footer=self.footer,
                     legacy=self.layout != "L3")

    def info(self) -> dict[str, Any]:
        """Exactly the keys and values of CPython's ``BinaryReader.get_info()``."""
        return info_of(self.header, self.footer,
                       self.stats.info() if self.stats else dict.fromkeys(STATS_KEYS))

    # -- the sample region ----------------------------------------------------------------
    def iter_region(self, chunk_size: int = 4 << 20) -> Iterator[memoryview | bytes]:
        """The logical (decompressed) sample region in chunks of at most ``chunk_size``,
        streamed from the file unless :meth:`load_region` already decompressed it."""
        start, end = self.region_span
        if self.compressed and self._region is None:
            yield from zstd.iter_decompress(memoryview(self.data)[start:end],
                                            chunk_size=chunk_size, file_offset=start,
                                            limit=self.max_region_size)
            return
        pieces = [memoryview(self.data)[start:end]] if self._region is None else self._region
        for piece in pieces:
            view = memoryview(piece)
            for offset in range(0, len(view), chunk_size):
                yield view[offset : offset + chunk_size]

    def region(self) -> memoryview | bytes:
        """The whole logical sample region (decompressed when needed)."""
        if self._region is not None:
            return self._region[0] if len(self._region) == 1 else b"".join(self._region)
        start, end = self.region_span
        if self.compressed:
            return zstd.decompress(memoryview(self.data)[start:end], limit=self.max_region_size,
                                   file_offset=start)
        return memoryview(self.data)[start:end]

    def region_size(self, keep: int = KEEP_REGION) -> int:
        """Bytes in the logical sample region. For zstd this decompresses the region once
        (keeping it if at most *keep* bytes), so that every zstd error and the size cap
        come before any record is decoded, as in CPython's reader, and record counts can be
        checked against the bytes really left (docs/format/limits.md)."""
        if self._region_size is None:
            start, end = self.region_span
            if not self.compressed:
                self._region_size = end - start
            elif self._region is not None:
                self._region_size = sum(len(piece) for piece in self._region)
            else:
                self._region_size, kept = zstd.decompressed_size(
                    memoryview(self.data)[start:end], limit=self.max_region_size,
                    file_offset=start, keep=keep)
                self._region = kept
        return self._region_size

    def load_region(self) -> None:
        """Decompress the whole sample region now and keep it (CPython's reader does this at
        open, so that a corrupt frame fails before the tables are read: check 14), in
        pieces (never copied to be joined)."""
        if self.compressed and self._region is None:
            start, end = self.region_span
            self._region = list(zstd.iter_decompress(
                memoryview(self.data)[start:end], chunk_size=KEEP_REGION, file_offset=start,
                limit=self.max_region_size))

    def load_tables(self) -> None:
        """Parse the string and frame tables, each count checked right before its table
        (CPython's order: checks 15 to 20)."""
        run((STRING_COUNT,), self.facts, "read")
        self.strings = read_strings(self.data, self.header.string_table_offset,
                                    self.footer.string_count)
        run((FRAME_COUNT,), self.facts, "read")
        self.frames, layout = read_frames(self.data, self.header.frame_table_offset,
                                          self.footer.frame_count, legacy=self.layout != "L3")
        self.layout = layout

    def check_table_counts(self) -> None:
        """Only the count checks of :meth:`load_tables` (both computed from the file size)."""
        run((STRING_COUNT, FRAME_COUNT), self.facts, "read")

    def close(self) -> None:
        if self.mapping is not None:
            # arrays may still view the mapping; the GC unmaps it then
            with contextlib.suppress(BufferError):
                self.mapping.close()

    def __enter__(self) -> TachyonFile:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


# -- opening ---------------------------------------------------------------------------------


def open_file(
    source: Source, *, tables: bool = True, legacy_layouts: bool = True,
    max_region_size: int = MAX_DECOMPRESSED_SIZE, keep_region: bool = False,
) -> TachyonFile:
    """Check and parse everything but the sample region's records
    (docs/format/reader.md#checks-at-open, checks 1-20).

    A zstd region is decompressed once (:meth:`TachyonFile.region_size`), in CPython's order
    (check 14, before the tables), up to *max_region_size* bytes (docs/format/limits.md).
    ``tables=False`` skips that and leaves the string and frame tables (and their count
    checks) for :meth:`TachyonFile.load_tables` or :meth:`TachyonFile.check_table_counts`:
    O(1) in the file size. ``legacy_layouts=False`` refuses the pre-release layouts L1/L2,
    as CPython does. ``keep_region``: keep the decompressed region up to
    :data:`KEEP_READ_REGION` (for a reader that decodes all of it: decompressed once, not
    once for its size and again for its records).
    """
    data, name, mapping = _load(source)
    try:
        plan = walk(data, "read", legacy_layouts=legacy_layouts)
        meta = TachyonFile(data=data, order=plan.order, layout="L2" if plan.legacy else "L3",
                           header=plan.header, footer=plan.footer, stats=plan.stats, name=name,
                           mapping=mapping, max_region_size=max_region_size)
        # (a legacy layout's L1 vs L2 is settled by the frame table)
        if tables:
            # zstd: CPython decompresses (check 14) before the tables
            meta.region_size(KEEP_READ_REGION if keep_region else KEEP_REGION)
            meta.load_tables()
        return meta
    except BaseException:
        if mapping is not None:
            # the error's traceback may still view the mapping: the GC unmaps it then
            with contextlib.suppress(BufferError):
                mapping.close()
        raise


def _load(source: Source) -> tuple[Any, str, mmap.mmap | None]:
    """The file's bytes (a path memory-mapped: a big file is never held), its name, and the
    map to close."""
    data, name, mapping = load(source, mapped=True)
    return (data if mapping is not None else memoryview(data).cast("B")), name, mapping


def info(source: Source) -> dict[str, Any]:
    """``BinaryReader.get_info()`` of a Tachyon file, read from its header, statistics block
    and footer only (the sample region and the tables are not parsed)."""
    with open_file(source, tables=False) as meta:
        meta.check_table_counts()  # CPython's get_info() needs an open that passed them
        return meta.info()


# -- the walk: the parts in CPython's order, and the checks between them ----------------------

KILLED = ("the header is the all-zero placeholder: the profiler was killed before it finished "
          "writing (the sample records on disk are intact, the header, tables and footer were "
          "never written); read(..., strict=False) recovers the samples")
"""What ``validate`` adds to the magic's message for a file whose writer never ran
``finalize()``."""


@dataclass
class Plan:
    """What the file's parts say, as far as they passed their checks: the problems found
    (every one, in mode ``validate``), and what the later steps (the tables, the records,
    salvage) can rely on."""

    facts: Facts
    problems: list[Problem] = field(default_factory=list)
    stats: Stats | None = None  # None: none in the file, or left out as bad
    killed: bool = False  # the all-zero placeholder header
    legacy: bool = False  # a pre-release layout (L1/L2), read by read() but not by CPython
    region: tuple[int, int] | None = None  # file span of the sample region, when known
    strings: Any = None  # what validate's table scan kept (model.Strings, model.Frames)
    frames: Any = None
    frame_offsets: list[int] = field(default_factory=list)

    @property
    def order(self) -> ByteOrder:
        return self.facts.order or "<"

    @property
    def header(self) -> Any:
        """The fields of plain.HEADER (plain.LEGACY_HEADER for a pre-release layout)."""
        return self.facts.header

    @property
    def footer(self) -> Any:
        return self.facts.footer

    @property
    def compressed(self) -> bool:
        return self.header is not None and self.header.compression == spec.Compression.ZSTD


def walk(data, mode: Mode, *, legacy_layouts: bool = True) -> Plan:
    """The header, footer and statistics block of the file *data* (its bytes) parsed and
    checked in CPython's order, up to the table offsets (checks 2 to 13), in mode *mode*; the
    counts and the tables come later (:data:`.checks.STRING_COUNT`,
    :data:`.checks.FRAME_COUNT`). ``legacy_layouts=False``: a pre-release layout is not
    sniffed, so it fails as in CPython's reader."""
    size = len(data)
    plan = Plan(Facts(size, bytes(data[: spec.HEADER_SIZE])))
    for check in (TOO_SMALL, MAGIC):  # nothing else can be read without them
        problems = run((check,), plan.facts, mode)
        if problems:
            plan.killed = check is MAGIC and plan.facts.head == bytes(spec.HEADER_SIZE)
            if plan.killed:
                problems = [replace(problems[0], message=f"{problems[0].message}: {KILLED}")]
            plan.problems += problems
            return plan
    head = plan.facts.head
    order = spec.byte_order(head)
    assert order is not None  # (MAGIC passed)
    facts = plan.facts
    facts.order, facts.header = order, plain.HEADER.parse(head, order)
    plan.problems += run(HEADER_CHECKS, facts, mode)
    facts.footer = plain.FOOTER.parse(data, order, size - spec.FOOTER_SIZE)
    if legacy_layouts and is_legacy(data, facts.header, order):
        plan.legacy = True
        facts.header, facts.legacy = plain.LEGACY_HEADER.parse(head, order), True
        if mode != "read":  # read() reads it; anything else wrong shows there
            plan.problems += run((LEGACY,), facts, mode)
            return plan
    else:
        try:
            plan.stats = parse_stats(data, order)
        except FormatError as exc:
            if mode == "read":
                raise
            plan.problems.append(Problem.from_error(exc))
    plan.problems += run(OFFSET_CHECKS, facts, mode)
    if spec.HEADER_SIZE <= facts.header.string_table_offset <= size:
        plan.region = (spec.HEADER_SIZE, facts.header.string_table_offset)
    return plan


# -- every problem, for validate --------------------------------------------------------------

LISTED = 10
"""Entries of one kind listed one by one before the rest are summed up in one problem."""


def check_file(data) -> tuple[list[Problem], Plan]:
    """Every problem of everything but the sample records of the file *data* (its bytes), each
    reported and the checking carried on (docs/validation.md lists them all), and what the
    record checks (:mod:`.region.check_walk`) can rely on.

    The checks at open run as :func:`open_file` runs them (:func:`.checks.walk`), but a bad
    statistics block is set aside, a bad mode or version does not stop the table checks, and
    the tables are scanned entry by entry (:mod:`.tables`). Checks that CPython does
    not make (the footer's file size, tables that do not meet, bytes that belong to no part)
    report the file as ``inconsistent`` or add a ``note``; ``unreadable`` is kept for exactly
    what CPython's reader rejects."""
    plan = walk(data, "validate")
    problems = plan.problems
    if plan.header is None or plan.legacy:
        return problems, plan
    header = plan.header
    if spec.HEADER_SIZE <= header.string_table_offset <= header.frame_table_offset <= len(data):
        problems += _table_problems(data, plan)
    problems += run(FOOTER_CHECKS, plan.facts, "validate")
    return problems, plan


def _stats_start(data, plan: Plan) -> int:
    """Where the statistics block starts (the footer, when there is none)."""
    footer_at = len(data) - spec.FOOTER_SIZE
    if plan.stats is None:
        return footer_at
    trailer_at = footer_at - plain.STATS_TRAILER.size
    return footer_at - plain.STATS_TRAILER.parse(data, plan.order, trailer_at).size


def _table_problems(data, plan: Plan) -> list[Problem]:
    """Checks 15 to 20 on every entry that parses, and where the tables end."""
    facts = plan.facts
    footer_at = len(data) - spec.FOOTER_SIZE
    stats_start = _stats_start(data, plan)
    strings_at, frames_at = facts.header.string_table_offset, facts.header.frame_table_offset
    string_count, frame_count = facts.footer.string_count, facts.footer.frame_count
    problems = run((STRING_COUNT,), facts, "validate")
    plan.strings, scanned = read_strings_until_problem(data, strings_at,
                                                       min(string_count, facts.string_cap))
    if scanned.problem is not None:
        problems.append(scanned.problem)
    else:
        bad = [i for i, ok in enumerate(plan.strings.is_valid_utf8()) if not ok]
        problems += _each(bad, lambda i: Problem(
            "note", "a string that is not valid UTF-8 (read with the invalid bytes replaced, "
            "as CPython does)", offset=scanned.offsets[i], field=f"string_table -> [{i}]"),
            "strings are not valid UTF-8")
        if scanned.end != frames_at:
            problems.append(Problem(
                "inconsistent", "the string table does not end where the frame table starts",
                offset=scanned.end, field="string_table", expected=str(frames_at),
                found=str(scanned.end)))
    problems += run((FRAME_COUNT,), facts, "validate")
    plan.frames, frames_scanned = read_frames_until_problem(data, frames_at,
                                                            min(frame_count, facts.frame_cap))
    plan.frame_offsets = frames_scanned.offsets
    if frames_scanned.problem is not None:
        problems.append(frames_scanned.problem)
    elif frames_scanned.end != stats_start:
        part = "statistics block" if stats_start < footer_at else "footer"
        runs_into = frames_scanned.end > stats_start
        problems.append(Problem(
            "inconsistent", f"the frame table runs into the {part} (CPython's reader parses "
            "it to the end of the file)" if runs_into else
            f"{stats_start - frames_scanned.end} bytes between the frame table and the {part} "
            "belong to no part of the file", offset=frames_scanned.end, field="frame_table",
            expected=f"it to end at {stats_start}", found=str(frames_scanned.end)))
    frames = plan.frames
    if scanned.problem is None:
        bad = (~frame_strings_ok(frames, string_count)).nonzero()[0].tolist()
        problems += _each(bad, lambda i: Problem(
            "inconsistent", "a frame names a string beyond the string table (a sample that "
            "uses it makes the file unreadable)", offset=frames_scanned.offsets[i],
            field=f"frame_table -> [{i}]", expected=f"string indices below {string_count}",
            found=f"filename {frames.filename[i]}, funcname {frames.funcname[i]}"),
            "frames name strings beyond the string table")
    return problems


def _each(indices: list[int], problem, summary: str) -> list[Problem]:
    """``problem(i)`` for the first :data:`LISTED` of *indices*, then one that counts the rest
    (with the severity of the others)."""
    found = [problem(i) for i in indices[:LISTED]]
    if len(indices) > LISTED:
        found.append(Problem(found[0].severity, f"{len(indices) - LISTED} more {summary} "
                             f"(entries {indices[LISTED]} to {indices[-1]}), not listed"))
    return found
