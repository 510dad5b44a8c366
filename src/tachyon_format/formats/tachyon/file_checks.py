"""Every check on a Tachyon file outside its sample records, each problem reported and the
checking carried on: for ``validate`` (docs/validation.md lists them all).

:mod:`.file` opens a file as CPython's reader does, failing at the first problem. Here each of
those checks (docs/format/reader.md#checks-at-open) reports its problem and the next one runs
on what is left: a bad statistics block is set aside, a bad mode or version does not stop the
table checks, and the tables are scanned entry by entry (:mod:`.lenient_tables`). Checks that
CPython does not make (the footer's file size, tables that do not meet, bytes that belong to no
part) report the file as ``inconsistent`` or add a ``note``; ``unreadable`` is kept for exactly
what CPython's reader rejects. :func:`check_file` returns the problems and a :class:`Plan`: what
the record checks (:mod:`.region_checks`) can rely on.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tachyon_format.errors import FormatError
from tachyon_format.model import Frames, Strings
from tachyon_format.problems import Problem
from tachyon_format.schema import tachyon_plain as plain
from tachyon_format.schema import tachyon_values as spec
from tachyon_format.schema.plain import ByteOrder

from .lenient_tables import scan_frames, scan_strings
from .stats import Stats, parse_stats

KILLED = ("the header is the all-zero placeholder: the profiler was killed before it finished "
          "writing (the sample records on disk are intact, the header, tables and footer were "
          "never written); read(..., strict=False) recovers the samples")
"""What ``validate`` says of a file whose writer never ran ``finalize()``."""
LISTED = 10
"""Entries of one kind listed one by one before the rest are summed up in one problem."""


@dataclass
class Plan:
    """What the file's parts say, as far as they could be read."""

    order: ByteOrder = "<"
    header: Any = None  # the fields of plain.HEADER
    footer: Any = None  # the fields of plain.FOOTER
    stats: Stats | None = None
    killed: bool = False  # the all-zero placeholder header
    legacy: bool = False  # a pre-release layout (L1/L2), read by read() but not by CPython
    region: tuple[int, int] | None = None  # file span of the sample region, when known
    strings: Strings | None = None
    frames: Frames | None = None
    frame_offsets: list[int] = field(default_factory=list)

    @property
    def compressed(self) -> bool:
        return self.header is not None and self.header.compression == spec.Compression.ZSTD


def check_file(data) -> tuple[list[Problem], Plan]:
    """The problems of everything but the sample records of the file *data* (its bytes), and
    what the record checks can rely on."""
    problems: list[Problem] = []
    plan = Plan()
    size = len(data)
    if size < spec.HEADER_SIZE:
        problems.append(Problem("unreadable", "File too small for header", offset=0,
                                field="header", expected=f"at least {spec.HEADER_SIZE} bytes",
                                found=f"{size}"))
        return problems, plan
    head = bytes(data[: spec.HEADER_SIZE])
    order = spec.byte_order(head)
    if order is None:
        native = int.from_bytes(head[:4], "little")
        message = f"Invalid magic number: 0x{native:08x}"
        plan.killed = head == bytes(spec.HEADER_SIZE)
        problems.append(Problem("unreadable", f"{message}: {KILLED}" if plan.killed else message,
                                offset=0, field="header -> magic"))
        return problems, plan
    plan.order = order
    plan.header = header = plain.HEADER.parse(head, order)
    problems += _header_problems(header, head, order)
    plan.footer = footer = plain.FOOTER.parse(data, order, size - spec.FOOTER_SIZE)
    if _is_legacy(data, header, order):
        plan.legacy = True
        problems.append(Problem(
            "unreadable", "a pre-release layout (L1/L2, CPython 3.15 alphas and betas: u32 "
            "sample count, fields from offset 32 on 4 bytes earlier): CPython 3.15.2's reader "
            "rejects it; this library's read() reads it",
            offset=plain.HEADER.offset("sample_count"),
            field="header -> sample_count"))
        return problems, plan
    stats_start = size - spec.FOOTER_SIZE
    try:
        plan.stats = parse_stats(data, order)
        if plan.stats is not None:
            stats_start -= _stats_size(data, order)
    except FormatError as exc:
        problems.append(Problem.from_error(exc))
    problems += _offset_problems(header, size)
    strings_at, frames_at = header.string_table_offset, header.frame_table_offset
    if spec.HEADER_SIZE <= strings_at <= size:
        plan.region = (spec.HEADER_SIZE, strings_at)
    if spec.HEADER_SIZE <= strings_at <= frames_at <= size:
        problems += _table_problems(data, plan, stats_start)
    if footer.file_size != size:
        problems.append(Problem(
            "inconsistent", "the footer's file size is not the file's size (CPython's reader "
            "does not check it; a file cut short or with bytes appended?)",
            offset=size - spec.FOOTER_SIZE + 8, field="footer -> file_size",
            expected=str(size), found=str(footer.file_size)))
    if any(footer.checksum):
        problems.append(Problem("note", "the footer's checksum bytes are not zero (CPython "
                                "writes zeros and never reads them)",
                                offset=size - spec.FOOTER_SIZE + 16, field="footer -> checksum"))
    return problems, plan


def _header_problems(header, head: bytes, order: ByteOrder) -> list[Problem]:
    problems = []
    at = plain.HEADER.offset
    config_at = at("profiling_config")
    version = header.format_version
    if version != spec.FORMAT_VERSION:
        message = (f"Binary file was created with Python {header.py_major}.{header.py_minor}."
                   f"{header.py_micro} (format version {version}), but this reader supports "
                   f"format version {spec.FORMAT_VERSION}" if version > spec.FORMAT_VERSION else
                   f"Unsupported format version {version} (this reader supports version "
                   f"{spec.FORMAT_VERSION})")
        problems.append(Problem("unreadable", message, offset=at("format_version"),
                                field="header -> format_version",
                                expected=str(spec.FORMAT_VERSION), found=str(version)))
    config = header.profiling_config
    if config.mode_plus_one > 5:
        problems.append(Problem("unreadable",
                                f"Invalid profiling mode in header: {config.mode_plus_one}",
                                offset=config_at,
                                field="header -> profiling_config -> mode_plus_one",
                                expected="0 to 5", found=str(config.mode_plus_one)))
    word = int.from_bytes(head[config_at : config_at + 4], "little" if order == "<" else "big")
    if config.reserved:
        problems.append(Problem("note", "bits 9 to 31 of the profiling config word are set "
                                "(CPython writes 0 and ignores them)", offset=config_at,
                                field="header -> profiling_config", found=f"0x{word:08x}"))
    if config.capture_features and not config.features_known:
        problems.append(Problem("note", "capture-feature bits are set without the "
                                "features-known bit: readers take the features as unknown",
                                offset=config_at, field="header -> profiling_config",
                                found=f"0x{word:08x}"))
    if header.reserved:
        problems.append(Problem("note", "the reserved header byte is not zero (ignored)",
                                offset=at("reserved"), field="header -> reserved",
                                found=str(header.reserved)))
    if header.compression not in (0, 1):
        problems.append(Problem("note", "an unknown compression value: CPython's reader takes "
                                "every value but 1 (zstd) as uncompressed",
                                offset=at("compression"),
                                field="header -> compression", expected="0 or 1",
                                found=str(header.compression)))
    return problems


def _is_legacy(data, header, order: ByteOrder) -> bool:
    """Spec §10 sniffing (as :func:`.file.open_file` does): the L3 offsets are implausible and
    the L1/L2 ones are plausible."""
    size = len(data)

    def plausible(strings: int, frames: int) -> bool:
        return spec.HEADER_SIZE <= strings <= frames <= size - spec.FOOTER_SIZE

    if plausible(header.string_table_offset, header.frame_table_offset):
        return False
    legacy = plain.LEGACY_HEADER.parse(data, order)
    return (plausible(legacy.string_table_offset, legacy.frame_table_offset)
            and legacy.reserved_tail == bytes(8))


def _stats_size(data, order: ByteOrder) -> int:
    trailer_at = len(data) - spec.FOOTER_SIZE - plain.STATS_TRAILER.size
    return plain.STATS_TRAILER.parse(data, order, trailer_at).size


def _offset_problems(header, size: int) -> list[Problem]:
    """CPython's checks 9 to 13, every one that fails (CPython stops at the first)."""
    strings, frames = header.string_table_offset, header.frame_table_offset
    found = []
    string_field, frame_field = "header -> string_table_offset", "header -> frame_table_offset"
    if strings > size:
        found.append((f"Invalid string table offset: {strings} exceeds file size {size}", 40,
                      string_field))
    if frames > size:
        found.append((f"Invalid frame table offset: {frames} exceeds file size {size}", 48,
                      frame_field))
    if strings < spec.HEADER_SIZE:
        found.append((f"Invalid string table offset: {strings} is before data section", 40,
                      string_field))
    if frames < spec.HEADER_SIZE:
        found.append((f"Invalid frame table offset: {frames} is before data section", 48,
                      frame_field))
    if strings > frames:
        found.append((f"Invalid table offsets: string table ({strings}) is after frame table "
                      f"({frames})", 40, string_field))
    return [Problem("unreadable", message, offset=offset, field=where)
            for message, offset, where in found]


def _table_problems(data, plan: Plan, stats_start: int) -> list[Problem]:
    """Checks 15 to 20 on every entry that parses, and where the tables end."""
    assert plan.header is not None and plan.footer is not None
    problems = []
    size = len(data)
    footer_at = size - spec.FOOTER_SIZE
    strings_at, frames_at = plan.header.string_table_offset, plan.header.frame_table_offset
    string_count, frame_count = plan.footer.string_count, plan.footer.frame_count
    string_cap = (size - strings_at) // spec.MIN_STRING_SIZE
    if string_count > string_cap:
        problems.append(Problem("unreadable", f"Invalid string count {string_count} exceeds "
                                f"maximum possible {string_cap}", offset=footer_at,
                                field="footer -> string_count", expected=f"at most {string_cap}",
                                found=str(string_count)))
    plan.strings, scanned = scan_strings(data, strings_at, min(string_count, string_cap))
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
    frame_cap = (size - frames_at) // spec.MIN_FRAME_SIZE
    if frame_count > frame_cap:
        problems.append(Problem("unreadable", f"Invalid frame count {frame_count} exceeds "
                                f"maximum possible {frame_cap}", offset=footer_at + 4,
                                field="footer -> frame_count", expected=f"at most {frame_cap}",
                                found=str(frame_count)))
    plan.frames, frames_scanned = scan_frames(data, frames_at, min(frame_count, frame_cap))
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
        bad = [i for i in range(len(frames)) if frames.filename[i] >= string_count
               or frames.funcname[i] >= string_count]
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
