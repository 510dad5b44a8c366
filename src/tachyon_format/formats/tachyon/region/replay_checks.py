"""CPython's checks of the sample records during replay, each declared once: its number in
docs/format/reader.md#checks-during-replay, its message and the field it is about.

Every decoder of the region makes these checks: the record walk (:mod:`.walk`, which
records a check's code, its position in :data:`CHECKS`, and up to two numbers without the
GIL), the one-record reader (:mod:`.scan`, also validate's walk), the vectorised stages
(:mod:`.commit`, :mod:`.decoder`) and the thread table (:mod:`.threads`). Each makes its
error from the declaration here, so that ``read``, ``validate`` and salvage say the same
message and name the same field for the same problem. (Check 6 of that page, a count beyond
``Py_ssize_t``, cannot fail for a count that is a u32: no decoder makes it.)
"""

from __future__ import annotations

from typing import NamedTuple

from tachyon_format.errors import FormatError

from ..checks import header_field

__all__ = ["CHECKS", "ReplayCheck"]


class ReplayCheck(NamedTuple):
    """One check: *message* and *field* are templates of the numbers the decoder found
    (``{0}``, ``{1}``), the field None where the check is about the record's own bytes."""

    number: int  # in docs/format/reader.md#checks-during-replay
    message: str  # CPython's, exactly
    field: str | None = None

    def text(self, a: object = 0, b: object = 0) -> str:
        return self.message.format(a, b)

    def path(self, a: object = 0) -> str | None:
        return None if self.field is None else self.field.format(a)

    def error(self, a: object = 0, b: object = 0, *, offset: int,
              record: int | None) -> FormatError:
        """The error of this check on the record at region offset *offset*, number *record*."""
        return FormatError(self.text(a, b), offset=offset, record=record, region=True,
                           path=self.path(a))


TRUNCATED_DATA = ReplayCheck(1, "Truncated sample data: {0} trailing bytes")
THREAD_COUNT = ReplayCheck(
    2, "Invalid thread count: sample data contains more unique threads than declared in header"
    " (declared {0}, found at least {1})", header_field("thread_count")[1])
UNKNOWN_ENCODING = ReplayCheck(3, "Unknown stack encoding: {0}")
RLE_COUNT_VARINT = ReplayCheck(4, "Malformed varint for RLE count")
RLE_COUNT = ReplayCheck(5, "Invalid RLE count {0} exceeds maximum possible {1}")
RLE_VARINT = ReplayCheck(7, "Malformed varint in RLE sample data")
RLE_END = ReplayCheck(8, "Unexpected end of sample data in RLE")
SAMPLE_VARINT = ReplayCheck(9, "Malformed varint in sample data")
SAMPLE_END = ReplayCheck(10, "Unexpected end of sample data")
VARINT = ReplayCheck(11, "Invalid or incomplete varint in binary data")
STACK_DEPTH = ReplayCheck(12, "Stack depth {0} exceeds capacity {1}")
SHARED_COUNT = ReplayCheck(13, "Shared count {0} exceeds current stack depth {1}")
FINAL_DEPTH = ReplayCheck(14, "Final stack depth {0} exceeds capacity {1}")
FRAME_INDEX = ReplayCheck(15, "Invalid frame index: {0}", "frame_table")
STRING_INDEX = ReplayCheck(16, "Invalid string index in frame", "frame_table -> [{0}]")
"""(The field names the frame whose strings lie beyond the string table.)"""

CHECKS: tuple[ReplayCheck, ...] = (
    TRUNCATED_DATA, THREAD_COUNT, UNKNOWN_ENCODING, RLE_COUNT_VARINT, RLE_COUNT, RLE_VARINT,
    RLE_END, SAMPLE_VARINT, SAMPLE_END, VARINT, STACK_DEPTH, SHARED_COUNT, FINAL_DEPTH,
    FRAME_INDEX, STRING_INDEX,
)
"""In CPython's order; a check's code in the record walk is its position here."""
