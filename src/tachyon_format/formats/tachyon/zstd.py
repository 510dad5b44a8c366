"""zstd for the Tachyon sample region: streamed both ways, size-capped on the way in.

The writer emits ONE frame without a content size (docs/format/records.md#zstd-framing), so
decompression must stream; CPython's reader also accepts several concatenated frames and refuses
more than 2**30 output bytes. The backend is the stdlib ``compression.zstd`` (3.14+) or its backport
``backports.zstd`` (same API, bundling libzstd) below 3.14.
"""

from __future__ import annotations

from collections.abc import Iterator

from tachyon_format.errors import FormatError
from tachyon_format.schema.tachyon_values import HEADER_SIZE

from .settings import MAX_DECOMPRESSED_SIZE, WRITE_BUFFER_SIZE, ZSTD_LEVEL

try:
    from compression import zstd as _zstd
except ImportError:  # Python < 3.14
    from backports import zstd as _zstd

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
LIBZSTD_VERSION = ".".join(map(str, _zstd.zstd_version_info))
"""Byte-identical output with CPython needs the same libzstd as CPython's build."""


class StreamCompressor:
    """One zstd frame fed chunk by chunk, as CPython's writer does (level 5, no checksum,
    no content size): feed with :meth:`compress`, close with :meth:`finish`."""

    def __init__(self, level: int = ZSTD_LEVEL) -> None:
        self._compressor = _zstd.ZstdCompressor(level=level)

    def compress(self, data: bytes | memoryview) -> bytes:
        return self._compressor.compress(data, mode=_zstd.ZstdCompressor.CONTINUE)

    def finish(self) -> bytes:
        return self._compressor.flush(mode=_zstd.ZstdCompressor.FLUSH_FRAME)


def compress_region(region: bytes | memoryview, level: int = ZSTD_LEVEL) -> bytes:
    """The whole region as CPython writes it: 512 KiB CONTINUE chunks, then the frame end."""
    compressor = StreamCompressor(level)
    view = memoryview(region)
    parts = [
        compressor.compress(view[start : start + WRITE_BUFFER_SIZE])
        for start in range(0, len(view), WRITE_BUFFER_SIZE)
    ]
    parts.append(compressor.finish())
    return b"".join(parts)


def iter_decompress(
    data: bytes | memoryview,
    *,
    chunk_size: int = 4 << 20,
    limit: int = MAX_DECOMPRESSED_SIZE,
    file_offset: int = HEADER_SIZE,
) -> Iterator[bytes]:
    """Decompressed chunks of at most ``chunk_size`` bytes, frame after frame.

    Raises :class:`FormatError` (with the file offset of the compressed region) for an empty
    or corrupt region, trailing garbage, a truncated frame, or output beyond ``limit``; the
    limit is enforced before the excess is produced. Like CPython's reader, it refuses any
    output when the first frame declares a content size of 0 (an empty frame, or a
    skippable one): CPython sizes its output buffer from that declaration and doubles it
    when full, so from 0 it never grows (docs/format/limits.md#zstd-regions).
    """
    view = memoryview(data)
    if not _frame_header_complete(view):  # what CPython's ZSTD_getFrameContentSize rejects
        raise _error("Corrupted zstd frame header", file_offset)
    no_output = first_content_size(view) == 0
    produced = 0
    position = 0
    while position < view.nbytes:
        decompressor = _zstd.ZstdDecompressor()
        pending = view[position:]
        while True:
            room = limit - produced + 1  # one byte more than allowed reveals an overflow
            try:
                chunk = decompressor.decompress(pending, max_length=min(chunk_size, room))
            except _zstd.ZstdError as exc:
                # CPython quotes ZSTD_getErrorName() alone; the bindings add a preamble
                reason = str(exc).removeprefix("Unable to decompress Zstandard data: ")
                raise _error(f"zstd decompression error: {reason}", file_offset + position) from exc
            pending = b""
            produced += len(chunk)
            if chunk and no_output:
                raise _error(NO_PROGRESS, file_offset)
            if produced > limit:
                raise _error("Decompressed data exceeds maximum size", file_offset + position)
            if chunk:
                yield chunk
            if decompressor.eof:
                position = view.nbytes - len(decompressor.unused_data)
                break
            if decompressor.needs_input:
                raise _error("Incomplete zstd frame: data may be truncated", file_offset + position)


NO_PROGRESS = ("zstd decompression error: Operation made no progress over multiple calls, due"
               " to output buffer being full")
"""CPython's message (libzstd's) when the first frame declares 0 bytes but output follows."""

_SKIPPABLE_MAGIC_MIN, _SKIPPABLE_MAGIC_MAX = 0x184D2A50, 0x184D2A5F
_WINDOW_LOG_MAX = 31


def _frame_header_complete(view: memoryview) -> bool:
    """Is there a whole, valid zstd frame header (RFC 8878 §3.1.1.1) at the start?"""
    if view.nbytes < 4:
        return False
    magic = int.from_bytes(view[:4], "little")
    if _SKIPPABLE_MAGIC_MIN <= magic <= _SKIPPABLE_MAGIC_MAX:
        return view.nbytes >= 8
    if bytes(view[:4]) != ZSTD_MAGIC or view.nbytes < 5:
        return False
    descriptor = view[4]
    if descriptor & 0x08:  # reserved bit
        return False
    single_segment = (descriptor >> 5) & 1
    content_size_bytes = (1 if single_segment else 0, 2, 4, 8)[descriptor >> 6]
    dictionary_id_bytes = (0, 1, 2, 4)[descriptor & 3]
    size = 5 + (0 if single_segment else 1) + dictionary_id_bytes + content_size_bytes
    if view.nbytes < size:
        return False
    # libzstd refuses a window larger than 2**31 (ZSTD_WINDOWLOG_MAX on 64-bit) in the header
    return single_segment or 10 + (view[5] >> 3) <= _WINDOW_LOG_MAX


def first_content_size(view: memoryview) -> int | None:
    """``ZSTD_getFrameContentSize`` of the first frame (whose header must be complete): 0 for
    a skippable frame, None when the frame does not say."""
    magic = int.from_bytes(view[:4], "little")
    if _SKIPPABLE_MAGIC_MIN <= magic <= _SKIPPABLE_MAGIC_MAX:
        return 0
    descriptor = view[4]
    single_segment = (descriptor >> 5) & 1
    size_bytes = (1 if single_segment else 0, 2, 4, 8)[descriptor >> 6]
    if not size_bytes:
        return None
    at = 5 + (0 if single_segment else 1) + (0, 1, 2, 4)[descriptor & 3]
    size = int.from_bytes(view[at:at + size_bytes], "little")
    return size + 256 if size_bytes == 2 else size  # (RFC 8878: the 2-byte field is offset)


def decompressed_size(data: bytes | memoryview, *, limit: int = MAX_DECOMPRESSED_SIZE,
                      file_offset: int = HEADER_SIZE, keep: int = 0
                      ) -> tuple[int, list[bytes] | None]:
    """The size of the decompressed region, found by decompressing it (the writer records it
    nowhere), with every check of :func:`iter_decompress`; and the region itself, in pieces,
    when it is at most *keep* bytes (else None: it was not kept)."""
    size, kept = 0, []
    for chunk in iter_decompress(data, chunk_size=16 << 20, limit=limit,
                                 file_offset=file_offset):
        size += len(chunk)
        if size <= keep:
            kept.append(chunk)
        else:  # (let go at once, not at the end)
            kept.clear()
    return size, (kept if size <= keep else None)


def decompress(data: bytes | memoryview, *, limit: int = MAX_DECOMPRESSED_SIZE,
               file_offset: int = HEADER_SIZE) -> bytes:
    """The whole decompressed data, with the checks of :func:`iter_decompress` (one piece per
    frame, so that the usual single frame is not copied again to be joined)."""
    return b"".join(iter_decompress(data, chunk_size=limit + 1, limit=limit,
                                    file_offset=file_offset))


def _error(message: str, offset: int) -> FormatError:
    return FormatError(message, offset=offset, path="sample_region (zstd)")
