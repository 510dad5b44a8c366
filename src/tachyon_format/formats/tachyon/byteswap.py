"""Rewrite a Tachyon file in the other byte order.

CPython only writes its native order but reads both (docs/format/reader.md#cross-endian-files):
every fixed-width field (header, footer, statistics, the 12 id bytes of each record prefix) is
swapped, varints and single bytes stay. Each part is parsed with one byte order's declaration and
built with the other's, so the schema is the only place that knows the layout. A zstd region is
decompressed, rewritten and recompressed as CPython would compress it.
"""

from __future__ import annotations

import io

import construct as cs

from tachyon_format.errors import FormatError
from tachyon_format.schema import tachyon as spec
from tachyon_format.schema.primitives import ByteOrder

from . import zstd
from .file import open_file


def other(order: ByteOrder) -> ByteOrder:
    return ">" if order == "<" else "<"


def swap_byte_order(data: bytes) -> bytes:
    """The same profile with every fixed-width field in the other byte order."""
    meta = open_file(data, tables=False)
    order, target = meta.order, other(meta.order)
    if meta.layout != "L3":
        raise FormatError("byte-order conversion supports the 3.15.2 layout only", offset=0)
    header = spec.header(order).parse(data[: spec.HEADER_SIZE])
    start, end = meta.region_span
    region = swap_records(bytes(meta.region()), order)
    if meta.compressed:
        region = zstd.compress_region(region)
    shift = len(region) - (end - start)
    header.string_table_offset += shift
    header.frame_table_offset += shift
    tables_end = len(data) - spec.FOOTER_SIZE
    stats = _swap_stats(data, order, target)
    tables = data[end : tables_end - len(stats)]
    footer = spec.footer(order).parse(data[tables_end:])
    footer.file_size += shift
    return b"".join(
        [
            spec.header(target).build(header),
            region,
            tables,
            stats,
            spec.footer(target).build(footer),
        ]
    )


def swap_records(region: bytes, order: ByteOrder) -> bytes:
    """Every record of a logical sample region, rebuilt in the other byte order."""
    source, target = spec.record(order), spec.record(other(order))
    stream = io.BytesIO(region)
    out = bytearray()
    while stream.tell() < len(region):
        at = stream.tell()
        try:
            out += target.build(source.parse_stream(stream))
        except cs.ConstructError as exc:
            raise FormatError(f"cannot parse record: {exc}", offset=at, region=True) from None
    return bytes(out)


def _swap_stats(data: bytes, order: ByteOrder, target: ByteOrder) -> bytes:
    """The TACHSTAT block in the target order ('' when the file has none)."""
    trailer_at = len(data) - spec.FOOTER_SIZE - 16
    if data[trailer_at : trailer_at + 8] != spec.STATS_MAGIC:
        return b""
    size = spec.stats_trailer(order).parse(data[trailer_at : trailer_at + 16]).size
    block = data[trailer_at + 16 - size : trailer_at + 16]
    layout = {spec.STATS_SIZE: spec.stats, spec.LEGACY_STATS_SIZE: spec.legacy_stats}.get(size)
    if layout is None:
        raise FormatError(f"cannot convert a {size}-byte statistics block", offset=trailer_at)
    return layout(target).build(layout(order).parse(block))
