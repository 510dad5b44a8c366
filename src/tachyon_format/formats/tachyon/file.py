"""Open a Tachyon file: header, layout, statistics, footer and tables, checked as CPython does.

Tier (a)/(b): the fixed layouts are parsed with their ``struct`` twins generated from the
declarations in ``schema.tachyon`` (``schema.tachyon_plain``), so that opening a file loads no
construct; the sample region is only located (and decompressed on demand), never decoded here.

The checks run in CPython 3.15.2's order (docs/format/reader.md#checks-at-open) so that a file
CPython rejects fails here with the same message, as a :class:`FormatError` that names the offset
and field. Files of the older layouts L1/L2 (3.15 pre-releases, same format_version) are recognised
by the sniffing rule of docs/format/layout-history.md#sniffing and read as well.
"""

from __future__ import annotations

import contextlib
import mmap
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, BinaryIO

from tachyon_format.errors import FormatError
from tachyon_format.model import Frames, Strings
from tachyon_format.schema import tachyon_plain as plain
from tachyon_format.schema import tachyon_values as spec
from tachyon_format.schema.plain import ByteOrder

from . import zstd
from .get_info import info_of
from .settings import MAX_DECOMPRESSED_SIZE
from .stats import KEYS as STATS_KEYS
from .stats import Stats, parse_stats
from .tables import Layout, read_frames, read_strings

Source = str | os.PathLike | bytes | bytearray | memoryview | BinaryIO

_header_at = plain.HEADER.offset  # where a header field lies, for the errors that name it

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
        _check_string_count(self)
        self.strings = read_strings(self.data, self.header.string_table_offset,
                                    self.footer.string_count)
        _check_frame_count(self)
        self.frames, layout = read_frames(self.data, self.header.frame_table_offset,
                                          self.footer.frame_count, legacy=self.layout != "L3")
        self.layout = layout

    def check_table_counts(self) -> None:
        """Only the count checks of :meth:`load_tables` (both computed from the file size)."""
        _check_string_count(self)
        _check_frame_count(self)

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
        meta = _parse_metadata(data, legacy_layouts=legacy_layouts)
        meta.name, meta.mapping = name, mapping
        meta.max_region_size = max_region_size
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
    if isinstance(source, bytes | bytearray | memoryview):
        return memoryview(source).cast("B"), "<bytes>", None
    if hasattr(source, "read"):
        return memoryview(source.read()), getattr(source, "name", "<stream>"), None
    path = os.fspath(source)
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size < spec.HEADER_SIZE:
            raise FormatError("File too small for header", offset=0, path="header")
        mapping = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    return mapping, os.fsdecode(path), mapping


def _parse_metadata(data, *, legacy_layouts: bool) -> TachyonFile:
    size = len(data)
    if size < spec.HEADER_SIZE:
        raise FormatError("File too small for header", offset=0, path="header")
    head = bytes(data[: spec.HEADER_SIZE])
    order = spec.byte_order(head)
    if order is None:
        native = int.from_bytes(head[:4], "little")
        raise FormatError(f"Invalid magic number: 0x{native:08x}", offset=0, path="header -> magic")
    header = plain.HEADER.parse(head, order)
    _check_version(header)
    config = header.profiling_config
    if config.mode_plus_one > 5:
        raise FormatError(
            f"Invalid profiling mode in header: {config.mode_plus_one}",
            offset=_header_at("profiling_config"),
            path="header -> profiling_config -> mode_plus_one",
        )
    footer = plain.FOOTER.parse(data, order, size - spec.FOOTER_SIZE)
    layout: Layout = "L3"
    if (
        legacy_layouts
        and not _l3_offsets_plausible(header, size)
        and _legacy_offsets_plausible(data, order, size)
    ):
        header = plain.LEGACY_HEADER.parse(head, order)
        layout = "L2"  # L1 vs L2 is settled by the frame table
        stats = None
    else:
        stats = parse_stats(data, order)
    _check_offsets(header, size)
    meta = TachyonFile(data=data, order=order, layout=layout, header=header, footer=footer,
                       stats=stats)
    return meta


def _check_version(header) -> None:
    version = header.format_version
    if version > spec.FORMAT_VERSION:
        raise FormatError(
            f"Binary file was created with Python {header.py_major}.{header.py_minor}."
            f"{header.py_micro} (format version {version}), but this reader supports format"
            f" version {spec.FORMAT_VERSION}",
            offset=_header_at("format_version"),
            path="header -> format_version",
        )
    if version < spec.FORMAT_VERSION:
        raise FormatError(
            f"Unsupported format version {version} (this reader supports version"
            f" {spec.FORMAT_VERSION})",
            offset=_header_at("format_version"),
            path="header -> format_version",
        )


def _l3_offsets_plausible(header, size: int) -> bool:
    """Spec §10 sniffing, rule 1."""
    return (
        spec.HEADER_SIZE
        <= header.string_table_offset
        <= header.frame_table_offset
        <= size - spec.FOOTER_SIZE
    )


def _legacy_offsets_plausible(data, order: ByteOrder, size: int) -> bool:
    """Spec §10 sniffing, rule 2: L1/L2 offsets at 36/44 and zero bytes 56..63."""
    legacy = plain.LEGACY_HEADER.parse(data, order)
    return (
        spec.HEADER_SIZE
        <= legacy.string_table_offset
        <= legacy.frame_table_offset
        <= size - spec.FOOTER_SIZE
        and legacy.reserved_tail == bytes(8)
    )


def _check_offsets(header, size: int) -> None:
    strings, frames = header.string_table_offset, header.frame_table_offset
    if strings > size:
        raise FormatError(
            f"Invalid string table offset: {strings} exceeds file size {size}",
            offset=_header_at("string_table_offset"), path="header -> string_table_offset",
        )
    if frames > size:
        raise FormatError(
            f"Invalid frame table offset: {frames} exceeds file size {size}",
            offset=_header_at("frame_table_offset"), path="header -> frame_table_offset",
        )
    if strings < spec.HEADER_SIZE:
        raise FormatError(
            f"Invalid string table offset: {strings} is before data section",
            offset=_header_at("string_table_offset"), path="header -> string_table_offset",
        )
    if frames < spec.HEADER_SIZE:
        raise FormatError(
            f"Invalid frame table offset: {frames} is before data section",
            offset=_header_at("frame_table_offset"), path="header -> frame_table_offset",
        )
    if strings > frames:
        raise FormatError(
            f"Invalid table offsets: string table ({strings}) is after frame table ({frames})",
            offset=_header_at("string_table_offset"), path="header -> string_table_offset",
        )


def _check_string_count(meta: TachyonFile) -> None:
    """Spec §6.1 check 15; like check 18 it is computed from the whole file size."""
    size = meta.file_size
    footer_at = size - spec.FOOTER_SIZE
    string_cap = (size - meta.header.string_table_offset) // spec.MIN_STRING_SIZE
    if meta.footer.string_count > string_cap:
        raise FormatError(
            f"Invalid string count {meta.footer.string_count} exceeds maximum possible"
            f" {string_cap}",
            offset=footer_at, path="footer -> string_count",
        )


def _check_frame_count(meta: TachyonFile) -> None:
    """Spec §6.1 check 18."""
    size = meta.file_size
    footer_at = size - spec.FOOTER_SIZE
    # an L1 entry (3 varints) can be as small as 3 bytes; L1 and L2 are told apart later
    min_frame = spec.MIN_FRAME_SIZE if meta.layout == "L3" else spec.MIN_LEGACY_FRAME_SIZE
    frame_cap = (size - meta.header.frame_table_offset) // min_frame
    if meta.footer.frame_count > frame_cap:
        raise FormatError(
            f"Invalid frame count {meta.footer.frame_count} exceeds maximum possible {frame_cap}",
            offset=footer_at + plain.FOOTER.offset("frame_count"), path="footer -> frame_count",
        )


def info(source: Source) -> dict[str, Any]:
    """``BinaryReader.get_info()`` of a Tachyon file, read from its header, statistics block
    and footer only (the sample region and the tables are not parsed)."""
    with open_file(source, tables=False) as meta:
        meta.check_table_counts()  # CPython's get_info() needs an open that passed them
        return meta.info()
