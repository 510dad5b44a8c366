"""The values of the Tachyon format that need no construct: its constants, the enumerations
of its fields, and the byte order from the magic. :mod:`.tachyon` declares the layouts over
them (and re-exports them, as ``spec.X``); the readers that must start fast (``info``, the
walk of the sample region) take them from here without loading construct.
"""

from __future__ import annotations

import enum

from .plain import ByteOrder

MAGIC = 0x54414348
"""``TACH`` as a u32 in the writer's byte order."""
FORMAT_VERSION = 1
HEADER_SIZE = 64
FOOTER_SIZE = 32
RECORD_PREFIX_SIZE = 13
MAX_STACK_DEPTH = 256
"""The writer keeps the 256 innermost frames; the reader rejects deeper stacks."""
OPCODE_NONE = 255
MAX_REAL_OPCODE = 254
LOCATION_NOT_AVAILABLE = -1
MIN_STRING_SIZE = 1
MIN_FRAME_SIZE = 7
MIN_LEGACY_FRAME_SIZE = 3
MIN_REPEAT_ENTRY_SIZE = 2
STATS_MAGIC = b"TACHSTAT"
STATS_SIZE = 56
LEGACY_STATS_SIZE = 32


class Encoding(enum.IntEnum):
    """Record type: how a record's stack relates to the thread's previous one."""

    REPEAT = 0
    FULL = 1
    SUFFIX = 2
    POP_PUSH = 3


class Compression(enum.IntEnum):
    """Header ``compression`` values; the reader treats only ``ZSTD`` as compressed."""

    NONE = 0
    ZSTD = 1


class ProfilingMode(enum.IntEnum):
    """``profiling.sampling.constants.PROFILING_MODE_*``; stored as mode + 1 (0 = unknown)."""

    WALL = 0
    CPU = 1
    GIL = 2
    ALL = 3
    EXCEPTION = 4


class CaptureFeature(enum.IntFlag):
    """``profiling.sampling.binary_collector.CAPTURE_FEATURES`` (the capture-config bits)."""

    ALL_THREADS = 1 << 0
    NATIVE = 1 << 1
    GC = 1 << 2
    OPCODES = 1 << 3
    BLOCKING = 1 << 4


def byte_order(head: bytes) -> ByteOrder | None:
    """Byte order of a Tachyon file from its first 4 bytes, or None if the magic is wrong."""
    return _MAGIC_BYTES.get(bytes(head[:4]))


_MAGIC_BYTES: dict[bytes, ByteOrder] = {MAGIC.to_bytes(4, "little"): "<",
                                        MAGIC.to_bytes(4, "big"): ">"}
