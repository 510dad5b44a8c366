"""zstd for the Tachyon sample region: streamed both ways, size-capped on the way in.

The writer emits ONE frame without a content size (spec §2.5), so decompression must stream;
CPython's reader also accepts several concatenated frames and refuses more than 2**30 output
bytes. The backend is the stdlib ``compression.zstd`` (3.14+) or its backport
``backports.zstd`` (same API, bundling libzstd) below 3.14.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..errors import FormatError
from ..schema.tachyon import HEADER_SIZE, MAX_DECOMPRESSED_SIZE, WRITE_BUFFER_SIZE, ZSTD_LEVEL

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
    limit is enforced before the excess is produced.
    """
    view = memoryview(data)
    if not view.nbytes:
        raise _error("Corrupted zstd frame header", file_offset)
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
                raise _error(f"zstd decompression error: {exc}", file_offset + position) from exc
            pending = b""
            produced += len(chunk)
            if produced > limit:
                raise _error("Decompressed data exceeds maximum size", file_offset + position)
            if chunk:
                yield chunk
            if decompressor.eof:
                position = view.nbytes - len(decompressor.unused_data)
                break
            if decompressor.needs_input:
                raise _error("Incomplete zstd frame: data may be truncated", file_offset + position)


def decompress(data: bytes | memoryview, *, limit: int = MAX_DECOMPRESSED_SIZE) -> bytes:
    return b"".join(iter_decompress(data, limit=limit))


def _error(message: str, offset: int) -> FormatError:
    return FormatError(message, offset=offset, path="sample_region (zstd)")
