"""``get_info()`` of a Tachyon file with the standard library only: ``struct`` over the header,
the footer and the statistics block, so that ``tachyon-format info`` starts as fast as
CPython's own reader (numpy and construct take most of a second to import on a busy machine).

The declarations in ``schema.tachyon`` stay the spec: the ``struct`` formats here are their
twins, and the tests check that the two agree (the formats derived from the declarations, and
every field parsed both ways on the golden files and on hypothesis-made headers). This module
answers only for a well-formed file of the current layout (L3); anything else (a check that
fails, a legacy layout, a legacy statistics block, a stream) goes to :func:`file.info`, which
parses through the declarations and raises CPython's message, so that the answer and every
error are the same either way.
"""

from __future__ import annotations

import math
import os
import struct
from typing import Any

HEADER_SIZE, FOOTER_SIZE = 64, 32
MAGICS = {b"HCAT": "<", b"TACH": ">"}
"""The magic 0x54414348 as stored by a little- and a big-endian writer."""
FORMAT_VERSION = 1
HEADER_FORMAT = "LLBBBBQQQLQQLL"
"""``schema.tachyon.header(order)`` field by field (``profiling_config`` as its u32)."""
HEADER_FIELDS = ("magic", "format_version", "py_major", "py_minor", "py_micro", "reserved",
                 "start_time_us", "sample_interval_us", "sample_count", "thread_count",
                 "string_table_offset", "frame_table_offset", "compression",
                 "profiling_config")
FOOTER_FORMAT = "LLQ16s"
"""``schema.tachyon.footer(order)``: string_count, frame_count, file_size, checksum."""
STATS_FORMAT = "ddddLL8sLL"
"""``schema.tachyon.stats(order)``: the four values, ``present``, ``reserved``, then the
trailer (magic, version, size)."""
STATS_MAGIC, STATS_SIZE = b"TACHSTAT", 56
MIN_STRING_SIZE, MIN_FRAME_SIZE = 1, 7

MODE_NAMES = ("wall", "cpu", "gil", "all", "exception")
"""``ProfilingMode`` names by value, lower case."""
FEATURE_NAMES = ((1, "all_threads"), (2, "native"), (4, "gc"), (8, "opcodes"),
                 (16, "blocking"))
"""``CaptureFeature`` bits and names, lower case."""
STATS_KEYS = ("duration_sec", "sample_rate", "error_rate", "missed_samples")


class NotPlain(Exception):
    """This file needs the full reader (an error to report, or a layout handled there)."""


def sniff(head: bytes) -> bool:
    """Is *head* the start of a Tachyon file (either byte order)?"""
    return bytes(head[:4]) in MAGICS


def info(source) -> dict[str, Any]:
    """``BinaryReader.get_info()`` of a Tachyon file: here when the file is plain, else from
    the full reader (same dict, same errors)."""
    try:
        return plain_info(source)
    except NotPlain:
        from .file import info as full_info

        return full_info(source)


def plain_info(source) -> dict[str, Any]:
    """The facts of a well-formed L3 file by path or bytes; :class:`NotPlain` otherwise."""
    head, tail, size = _ends(source)
    order = MAGICS.get(head[:4])
    if order is None:
        raise NotPlain
    h = dict(zip(HEADER_FIELDS, struct.unpack(order + HEADER_FORMAT, head), strict=True))
    config = h["profiling_config"]
    mode_plus_one, features_known, features = config & 7, config >> 3 & 1, config >> 4 & 31
    strings, frames = h["string_table_offset"], h["frame_table_offset"]
    if (h["format_version"] != FORMAT_VERSION or mode_plus_one > 5
            or not HEADER_SIZE <= strings <= frames <= size - FOOTER_SIZE):
        raise NotPlain  # an error, or an older layout (docs/format/layout-history.md#sniffing)
    string_count, frame_count, _, _ = struct.unpack(order + FOOTER_FORMAT, tail[-FOOTER_SIZE:])
    if (string_count > (size - strings) // MIN_STRING_SIZE
            or frame_count > (size - frames) // MIN_FRAME_SIZE):
        raise NotPlain
    compression = h["compression"]
    return {
        "version": h["format_version"],
        "python_version": (h["py_major"], h["py_minor"], h["py_micro"]),
        "start_time_us": h["start_time_us"],
        "sample_interval_us": h["sample_interval_us"],
        "sample_count": h["sample_count"],
        "thread_count": h["thread_count"],
        "string_count": string_count,
        "frame_count": frame_count,
        "compression_type": compression - (1 << 32) if compression >= 1 << 31 else compression,
        **_stats(tail, order, size),
        "mode": mode_plus_one - 1 if mode_plus_one else None,
        "capture_features": features if features_known else None,
    }


def _ends(source) -> tuple[bytes, bytes, int]:
    """The header, the last ``STATS_SIZE + FOOTER_SIZE`` bytes (fewer in a small file) and
    the file size."""
    span = STATS_SIZE + FOOTER_SIZE
    if isinstance(source, bytes | bytearray | memoryview):
        data = memoryview(source).cast("B")
        size = len(data)
        if size < HEADER_SIZE + FOOTER_SIZE:
            raise NotPlain
        return bytes(data[:HEADER_SIZE]), bytes(data[max(0, size - span):]), size
    if not isinstance(source, str | os.PathLike):
        raise NotPlain  # a stream: the full reader reads it once
    with open(source, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size < HEADER_SIZE + FOOTER_SIZE:
            raise NotPlain
        head = f.read(HEADER_SIZE)
        f.seek(max(0, size - span))
        tail = f.read()
    if len(head) != HEADER_SIZE or len(tail) != min(span, size):
        raise NotPlain  # the file changed under us
    return head, tail, size


def _stats(tail: bytes, order: str, size: int) -> dict[str, float | None]:
    """The statistics block's values (docs/format/reader.md#statistics-block), all None when
    the file has none or one of another version."""
    trailer = tail[-FOOTER_SIZE - 16 : -FOOTER_SIZE] if size >= FOOTER_SIZE + 16 else b""
    if trailer[:8] != STATS_MAGIC:
        return dict.fromkeys(STATS_KEYS)
    version, block_size = struct.unpack(order + "LL", trailer[8:])
    if block_size != STATS_SIZE or block_size > size - FOOTER_SIZE:
        raise NotPlain  # out of range (an error) or a legacy block
    if version != 1:
        return dict.fromkeys(STATS_KEYS)
    if len(tail) < STATS_SIZE + FOOTER_SIZE:
        raise NotPlain
    duration, rate, errors, missed, present, *_ = struct.unpack(
        order + STATS_FORMAT, tail[: STATS_SIZE])
    values = {"duration_sec": duration, "sample_rate": rate,
              "error_rate": errors if present & 1 else None,
              "missed_samples": missed if present & 2 else None}
    if not (math.isfinite(duration) and duration >= 0 and math.isfinite(rate) and rate >= 0
            and (values["error_rate"] is None or math.isfinite(errors) and errors >= 0)
            and (values["missed_samples"] is None or math.isfinite(missed))):
        raise NotPlain  # the full reader says which value breaks the rules
    return values
