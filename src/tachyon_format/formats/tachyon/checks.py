"""CPython's checks of a Tachyon file's header, table offsets and footer counts, each
declared once, and the runner that makes them in each of the three modes of ``read``,
``validate`` and salvage.

A :class:`Check` is declared beside the field it is about: the layout and the field's name (so
that the field path and the offset come from the generated layouts of ``schema.tachyon_plain``,
never typed by hand), the condition, CPython's message (docs/format/reader.md#checks-at-open),
the severity and, for ``validate``, what was expected and found. The checks that CPython does
not make (the reserved bits, the footer's file size) are declared here too, as ``note`` or
``inconsistent``: ``read`` never looks at them.

:func:`.file.walk` parses the parts in CPython's order and :func:`run` makes the checks
between them, in one of three modes: ``read`` raises the :class:`FormatError` of the first
check that fails (as CPython's reader does), ``validate`` collects every problem and goes on
as far as the parts allow, ``salvage`` keeps what passes. Standard library only:
``tachyon-format info`` makes these checks (:func:`passes`) without numpy or construct.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Literal

from tachyon_format.errors import FormatError
from tachyon_format.problems import Problem, Severity
from tachyon_format.schema import tachyon_plain as plain
from tachyon_format.schema import tachyon_values as spec
from tachyon_format.schema.plain import ByteOrder, Layout

Mode = Literal["read", "validate", "salvage"]


class Facts:
    """What the checks look at: the file size, its first 64 bytes and the parts parsed so far
    (the walk fills them in; ``legacy``: a pre-release layout, whose frame entries may be 3
    bytes)."""

    # (plain classes here, not dataclasses or NamedTuples: info imports this module, and
    # building those classes would cost it more than running its checks)
    __slots__ = ("size", "head", "order", "header", "footer", "legacy")

    def __init__(self, size: int, head: bytes = b"", order: ByteOrder | None = None,
                 header: Any = None, footer: Any = None, legacy: bool = False) -> None:
        self.size, self.head, self.order = size, head, order
        self.header, self.footer, self.legacy = header, footer, legacy

    @property
    def config_hex(self) -> str:
        """The raw profiling-config word, for the notes about its bits."""
        at = plain.HEADER.offset("profiling_config")
        word = int.from_bytes(self.head[at : at + 4], "little" if self.order == "<" else "big")
        return f"0x{word:08x}"

    @property
    def string_cap(self) -> int:
        return (self.size - self.header.string_table_offset) // spec.MIN_STRING_SIZE

    @property
    def frame_cap(self) -> int:
        # an L1 entry (3 varints) can be as small as 3 bytes; L1 and L2 are told apart later
        smallest = spec.MIN_LEGACY_FRAME_SIZE if self.legacy else spec.MIN_FRAME_SIZE
        return (self.size - self.header.frame_table_offset) // smallest


class Check:
    """One check of one field: *field* is a field of *layout* (``"word.bits"`` for a bit
    field of a word, ``""`` for the layout as a whole); *fails*, *message* and, for
    ``validate``, *expected* and *found* are functions of the :class:`Facts`."""

    __slots__ = ("layout", "field", "severity", "fails", "message", "expected", "found")

    def __init__(self, layout: Layout, field: str, severity: Severity,
                 fails: Callable[[Facts], bool], message: Callable[[Facts], str],
                 expected: Callable[[Facts], str] | None = None,
                 found: Callable[[Facts], str] | None = None) -> None:
        self.layout, self.field, self.severity = layout, field, severity
        self.fails, self.message = fails, message
        self.expected, self.found = expected, found

    @property
    def path(self) -> str:
        """The field path, as construct names it (``header -> profiling_config -> ...``)."""
        return " -> ".join([self.layout.name, *filter(None, self.field.split("."))])

    def offset(self, facts: Facts) -> int:
        # the footer is the file's last bytes; every other layout checked here starts it
        start = facts.size - self.layout.size if self.layout is FOOTER else 0
        return start + (self.layout.offset(self.field.split(".")[0]) if self.field else 0)

    def problem(self, facts: Facts) -> Problem:
        return Problem(self.severity, self.message(facts), offset=self.offset(facts),
                       field=self.path,
                       expected=None if self.expected is None else self.expected(facts),
                       found=None if self.found is None else self.found(facts))

    def error(self, facts: Facts) -> FormatError:
        return FormatError(self.message(facts), offset=self.offset(facts), path=self.path)


HEADER, FOOTER = plain.HEADER, plain.FOOTER  # the layouts the checks are about


def header_field(name: str) -> tuple[int, str]:
    """The file offset and the field path of the header's field *name*, from the generated
    layout, for the messages about it made elsewhere (the sample count after replay)."""
    return HEADER.offset(name), f"{HEADER.name} -> {name}"

# -- the checks, in CPython's order (docs/format/reader.md#checks-at-open) -------------------

TOO_SMALL = Check(  # check 2
    HEADER, "", "unreadable", lambda f: f.size < spec.HEADER_SIZE,
    lambda f: "File too small for header",
    expected=lambda f: f"at least {spec.HEADER_SIZE} bytes", found=lambda f: str(f.size))
MAGIC = Check(  # check 3: the value as read in native (little-endian) order
    HEADER, "magic", "unreadable", lambda f: spec.byte_order(f.head) is None,
    lambda f: f"Invalid magic number: 0x{int.from_bytes(f.head[:4], 'little'):08x}")
HEADER_CHECKS = (
    Check(  # check 4
        HEADER, "format_version", "unreadable",
        lambda f: f.header.format_version > spec.FORMAT_VERSION,
        lambda f: (f"Binary file was created with Python {f.header.py_major}."
                   f"{f.header.py_minor}.{f.header.py_micro} (format version "
                   f"{f.header.format_version}), but this reader supports format version "
                   f"{spec.FORMAT_VERSION}"),
        expected=lambda f: str(spec.FORMAT_VERSION),
        found=lambda f: str(f.header.format_version)),
    Check(  # check 5
        HEADER, "format_version", "unreadable",
        lambda f: f.header.format_version < spec.FORMAT_VERSION,
        lambda f: (f"Unsupported format version {f.header.format_version} (this reader "
                   f"supports version {spec.FORMAT_VERSION})"),
        expected=lambda f: str(spec.FORMAT_VERSION),
        found=lambda f: str(f.header.format_version)),
    Check(  # check 6: the raw 3-bit value, not the mode
        HEADER, "profiling_config.mode_plus_one", "unreadable",
        lambda f: f.header.profiling_config.mode_plus_one > len(spec.ProfilingMode),
        lambda f: f"Invalid profiling mode in header: {f.header.profiling_config.mode_plus_one}",
        expected=lambda f: f"0 to {len(spec.ProfilingMode)}",
        found=lambda f: str(f.header.profiling_config.mode_plus_one)),
    Check(
        HEADER, "profiling_config", "note", lambda f: f.header.profiling_config.reserved != 0,
        lambda f: ("bits 9 to 31 of the profiling config word are set (CPython writes 0 and "
                   "ignores them)"),
        found=lambda f: f.config_hex),
    Check(
        HEADER, "profiling_config", "note",
        lambda f: (f.header.profiling_config.capture_features != 0
                   and not f.header.profiling_config.features_known),
        lambda f: ("capture-feature bits are set without the features-known bit: readers take "
                   "the features as unknown"),
        found=lambda f: f.config_hex),
    Check(
        HEADER, "reserved", "note", lambda f: f.header.reserved != 0,
        lambda f: "the reserved header byte is not zero (ignored)",
        found=lambda f: str(f.header.reserved)),
    Check(
        HEADER, "compression", "note",
        lambda f: f.header.compression not in tuple(spec.Compression),
        lambda f: ("an unknown compression value: CPython's reader takes every value but 1 "
                   "(zstd) as uncompressed"),
        expected=lambda f: "0 or 1", found=lambda f: str(f.header.compression)),
)
"""Checks 4 to 6, then what CPython ignores."""

OFFSET_CHECKS = (
    Check(  # check 9
        HEADER, "string_table_offset", "unreadable",
        lambda f: f.header.string_table_offset > f.size,
        lambda f: (f"Invalid string table offset: {f.header.string_table_offset} exceeds file "
                   f"size {f.size}")),
    Check(  # check 10
        HEADER, "frame_table_offset", "unreadable",
        lambda f: f.header.frame_table_offset > f.size,
        lambda f: (f"Invalid frame table offset: {f.header.frame_table_offset} exceeds file "
                   f"size {f.size}")),
    Check(  # check 11
        HEADER, "string_table_offset", "unreadable",
        lambda f: f.header.string_table_offset < spec.HEADER_SIZE,
        lambda f: (f"Invalid string table offset: {f.header.string_table_offset} is before "
                   "data section")),
    Check(  # check 12
        HEADER, "frame_table_offset", "unreadable",
        lambda f: f.header.frame_table_offset < spec.HEADER_SIZE,
        lambda f: (f"Invalid frame table offset: {f.header.frame_table_offset} is before data "
                   "section")),
    Check(  # check 13
        HEADER, "string_table_offset", "unreadable",
        lambda f: f.header.string_table_offset > f.header.frame_table_offset,
        lambda f: (f"Invalid table offsets: string table ({f.header.string_table_offset}) is "
                   f"after frame table ({f.header.frame_table_offset})")),
)
"""Checks 9 to 13 (check 7 reads the footer, check 8 is the statistics block's: .stats)."""

STRING_COUNT = Check(  # check 15: the cap is computed from the whole file size
    FOOTER, "string_count", "unreadable", lambda f: f.footer.string_count > f.string_cap,
    lambda f: (f"Invalid string count {f.footer.string_count} exceeds maximum possible "
               f"{f.string_cap}"),
    expected=lambda f: f"at most {f.string_cap}", found=lambda f: str(f.footer.string_count))
FRAME_COUNT = Check(  # check 18, made right before the frame table as CPython does
    FOOTER, "frame_count", "unreadable", lambda f: f.footer.frame_count > f.frame_cap,
    lambda f: (f"Invalid frame count {f.footer.frame_count} exceeds maximum possible "
               f"{f.frame_cap}"),
    expected=lambda f: f"at most {f.frame_cap}", found=lambda f: str(f.footer.frame_count))

FOOTER_CHECKS = (
    Check(
        FOOTER, "file_size", "inconsistent", lambda f: f.footer.file_size != f.size,
        lambda f: ("the footer's file size is not the file's size (CPython's reader does not "
                   "check it; a file cut short or with bytes appended?)"),
        expected=lambda f: str(f.size), found=lambda f: str(f.footer.file_size)),
    Check(
        FOOTER, "checksum", "note", lambda f: any(f.footer.checksum),
        lambda f: "the footer's checksum bytes are not zero (CPython writes zeros and never "
                  "reads them)"),
)
"""What CPython never checks in the footer (``validate`` runs these after the tables)."""

LEGACY = Check(
    HEADER, "sample_count", "unreadable", lambda f: f.legacy,
    lambda f: ("a pre-release layout (L1/L2, CPython 3.15 alphas and betas: u32 sample count, "
               "fields from offset 32 on 4 bytes earlier): CPython 3.15.2's reader rejects it; "
               "this library's read() reads it"))
"""``validate``'s word on a file that ``read`` reads in a pre-release layout (where the two
layouts first differ)."""


def run(checks: Iterable[Check], facts: Facts, mode: Mode) -> list[Problem]:
    """Every problem of *checks* on *facts*; in mode ``read`` only the ``unreadable`` checks
    run, and the first that fails raises its :class:`FormatError`."""
    if mode == "read":
        for check in checks:
            if check.severity == "unreadable" and check.fails(facts):
                raise check.error(facts)
        return []
    return [check.problem(facts) for check in checks if check.fails(facts)]


def passes(checks: Iterable[Check], facts: Facts) -> bool:
    """Do all the ``unreadable`` checks of *checks* pass on *facts*?"""
    return not any(check.severity == "unreadable" and check.fails(facts) for check in checks)


# -- sniffing ---------------------------------------------------------------------------------


def l3_offsets_plausible(header, size: int) -> bool:
    """Sniffing rule 1 (docs/format/layout-history.md#sniffing): the 3.15.2 layout's table
    offsets lie in order between the header and the footer."""
    return (spec.HEADER_SIZE <= header.string_table_offset <= header.frame_table_offset
            <= size - spec.FOOTER_SIZE)


def is_legacy(data, header, order: ByteOrder) -> bool:
    """Is the file *data* of a pre-release layout (L1/L2)? Sniffing rules 1 and 2
    (docs/format/layout-history.md#sniffing): the 3.15.2 offsets are implausible, and the
    L1/L2 offsets (at 36/44) are plausible with zero bytes 56..63."""
    size = len(data)
    if l3_offsets_plausible(header, size):
        return False
    legacy = plain.LEGACY_HEADER.parse(data, order)
    return l3_offsets_plausible(legacy, size) and legacy.reserved_tail == bytes(8)
