"""Craft files in the pre-release layouts L1/L2 (docs/format/layout-history.md#layouts) from a
3.15.2 file, for tests.

L2 keeps the 7-field frame table; L1 also rewrites it with 3 fields. Neither layout had a
statistics block or a profiling_config word, so both are dropped.
"""

from __future__ import annotations

import construct as cs

from tachyon_format.formats.tachyon.file import open_file
from tachyon_format.schema import tachyon as spec


def downgrade(data: bytes, layout: str) -> bytes:
    """The same profile in layout ``"L2"`` or ``"L1"``."""
    meta = open_file(data)
    order = meta.order
    header = meta.header
    start, end = meta.region_span
    strings = data[end : header.frame_table_offset]
    if layout == "L2":
        frames = data[header.frame_table_offset : _frames_end(data, meta)]
    else:
        entries = cs.Array(len(meta.frames), spec.FRAME).parse(data[header.frame_table_offset :])
        frames = cs.Array(len(entries), spec.LEGACY_FRAME).build(
            [
                {"filename_idx": e.filename_idx, "funcname_idx": e.funcname_idx,
                 "lineno": e.lineno}
                for e in entries
            ]
        )
    legacy = spec.legacy_header(order).build(
        {
            **{k: getattr(header, k) for k in ("format_version", "py_major", "py_minor", "py_micro",
                                      "reserved", "start_time_us", "sample_interval_us",
                                      "sample_count", "thread_count", "compression")},
            "string_table_offset": header.string_table_offset,
            "frame_table_offset": header.frame_table_offset,
            "reserved_tail": bytes(8),
        }
    )
    footer = meta.footer._asdict()
    body = legacy + data[start:end] + strings + frames
    footer["file_size"] = len(body) + spec.FOOTER_SIZE
    return body + spec.footer(order).build(footer)


def _frames_end(data: bytes, meta) -> int:
    trailer_at = len(data) - spec.FOOTER_SIZE - 16
    if data[trailer_at : trailer_at + 8] == spec.STATS_MAGIC:
        size = spec.stats_trailer(meta.order).parse(data[trailer_at : trailer_at + 16]).size
        return len(data) - spec.FOOTER_SIZE - size
    return len(data) - spec.FOOTER_SIZE
