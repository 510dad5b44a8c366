"""``get_info()`` of a Tachyon file with the standard library only: ``struct`` over the header,
the footer and the statistics block, so that ``tachyon-format info`` starts as fast as
CPython's own reader (numpy and construct take most of a second to import on a busy machine).

The declarations in ``schema.tachyon`` stay the spec: the layouts read here are their
``struct`` twins generated from them (``schema.tachyon_plain``), and the tests parse every
field both ways on the golden files and on hypothesis-made headers. This module answers only
for a well-formed file of the current layout (L3), judged by the same declared checks as the
full reader's (:mod:`.checks`); anything else (a check that fails, a legacy layout, a legacy
statistics block, a stream) goes to :func:`.file.info`, which raises CPython's message, so
that the answer and every error are the same either way.
"""

from __future__ import annotations

import math
from typing import Any

from tachyon_format.schema import tachyon_plain as plain
from tachyon_format.schema import tachyon_values as spec

from ..sources import Source, read_ends
from .checks import FRAME_COUNT, HEADER_CHECKS, STRING_COUNT, Facts, l3_offsets_plausible, passes
from .get_info import info_of

HEADER_SIZE, FOOTER_SIZE = spec.HEADER_SIZE, spec.FOOTER_SIZE
STATS_SIZE = spec.STATS_SIZE
MODE_NAMES = tuple(mode.name.lower() for mode in spec.ProfilingMode)
"""``ProfilingMode`` names by value, lower case."""
FEATURE_NAMES = tuple((int(f), f.name.lower()) for f in spec.CaptureFeature)
"""``CaptureFeature`` bits and names, lower case."""
STATS_KEYS = ("duration_sec", "sample_rate", "error_rate", "missed_samples")


class NotPlain(Exception):
    """This file needs the full reader (an error to report, or a layout handled there)."""


def sniff(head: bytes) -> bool:
    """Is *head* the start of a Tachyon file (either byte order)?"""
    return spec.byte_order(head) is not None


def info(source: Source) -> dict[str, Any]:
    """``BinaryReader.get_info()`` of a Tachyon file: here when the file is plain, else from
    the full reader (same dict, same errors)."""
    try:
        return plain_info(source)
    except NotPlain:
        from .file import info as full_info

        return full_info(source)


def plain_info(source: Source) -> dict[str, Any]:
    """The facts of a well-formed L3 file by path or bytes; :class:`NotPlain` otherwise."""
    head, tail, size = _ends(source)
    order = spec.byte_order(head)
    if order is None:
        raise NotPlain
    header = plain.HEADER.parse(head, order)
    footer = plain.FOOTER.parse(tail, order, len(tail) - FOOTER_SIZE)
    facts = Facts(size, head, order, header, footer)
    # an error, or an older layout (docs/format/layout-history.md#sniffing): the full reader
    # (the offsets in order between header and footer pass checks 9 to 13)
    if not (l3_offsets_plausible(header, size)
            and passes((*HEADER_CHECKS, STRING_COUNT, FRAME_COUNT), facts)):
        raise NotPlain
    return info_of(header, footer, _stats(tail, order, size))


def _ends(source: Source) -> tuple[bytes, bytes, int]:
    """The header, the last ``STATS_SIZE + FOOTER_SIZE`` bytes (fewer in a small file) and
    the file size."""
    span = STATS_SIZE + FOOTER_SIZE
    ends = read_ends(source, HEADER_SIZE, span)
    if ends is None:
        raise NotPlain  # a stream: the full reader reads it once
    head, tail, size = ends
    if size < HEADER_SIZE + FOOTER_SIZE:
        raise NotPlain
    if len(head) != HEADER_SIZE or len(tail) != min(span, size):
        raise NotPlain  # the file changed under us
    return head, tail, size


def _stats(tail: bytes, order: str, size: int) -> dict[str, float | None]:
    """The statistics block's values (docs/format/reader.md#statistics-block), all None when
    the file has none or one of another version."""
    trailer_size = plain.STATS_TRAILER.size
    trailer_at = len(tail) - FOOTER_SIZE - trailer_size
    if size < FOOTER_SIZE + trailer_size or tail[trailer_at:][:8] != spec.STATS_MAGIC:
        return dict.fromkeys(STATS_KEYS)
    trailer = plain.STATS_TRAILER.parse(tail, order, trailer_at)
    if trailer.size != STATS_SIZE or trailer.size > size - FOOTER_SIZE:
        raise NotPlain  # out of range (an error) or a legacy block
    if trailer.version != 1:
        return dict.fromkeys(STATS_KEYS)
    if len(tail) < STATS_SIZE + FOOTER_SIZE:
        raise NotPlain
    block = plain.STATS.parse(tail, order)
    duration, rate, errors, missed = (block.duration_sec, block.sample_rate, block.error_rate,
                                      block.missed_samples)
    values = {"duration_sec": duration, "sample_rate": rate,
              "error_rate": errors if block.present.error_rate else None,
              "missed_samples": missed if block.present.missed_samples else None}
    if not (math.isfinite(duration) and duration >= 0 and math.isfinite(rate) and rate >= 0
            and (values["error_rate"] is None or math.isfinite(errors) and errors >= 0)
            and (values["missed_samples"] is None or math.isfinite(missed))):
        raise NotPlain  # the full reader says which value breaks the rules
    return values
