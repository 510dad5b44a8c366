"""A drop-in for the binary-format part of CPython 3.15's ``_remote_debugging``.

``BinaryWriter`` writes the same bytes as CPython 3.15.2's, with the same argument conversions,
exceptions, messages and OPEN / LIMIT_REACHED / BROKEN / closed states
(docs/format/writer.md#states). ``BinaryReader`` replays files through collectors as CPython's
does (docs/format/reader.md). The struct-sequence types ``FrameInfo``, ``LocationInfo``,
``ThreadInfo`` and ``InterpreterInfo`` have CPython's field names and order; the writer also
accepts any objects with those attributes, and a location may be a plain 4-tuple.

This package knows the CPython-facing API only: the format lives in the reader and writer it is
built on. Its public name is ``tachyon_format.compat``.
"""

from tachyon_format.model.thread_status import ThreadStatus

from .binary_reader import BinaryReader, ReaderError
from .binary_writer import BinaryWriter
from .structs import FrameInfo, InterpreterInfo, LocationInfo, ThreadInfo

THREAD_STATUS_HAS_GIL = int(ThreadStatus.HAS_GIL)
THREAD_STATUS_ON_CPU = int(ThreadStatus.ON_CPU)
THREAD_STATUS_UNKNOWN = int(ThreadStatus.UNKNOWN)
THREAD_STATUS_GIL_REQUESTED = int(ThreadStatus.GIL_REQUESTED)
THREAD_STATUS_HAS_EXCEPTION = int(ThreadStatus.HAS_EXCEPTION)
THREAD_STATUS_MAIN_THREAD = int(ThreadStatus.MAIN_THREAD)


def zstd_available() -> bool:
    """zstd always works here: the stdlib ``compression.zstd`` or ``backports.zstd``."""
    return True


__all__ = [
    "THREAD_STATUS_GIL_REQUESTED",
    "THREAD_STATUS_HAS_EXCEPTION",
    "THREAD_STATUS_HAS_GIL",
    "THREAD_STATUS_MAIN_THREAD",
    "THREAD_STATUS_ON_CPU",
    "THREAD_STATUS_UNKNOWN",
    "BinaryReader",
    "BinaryWriter",
    "FrameInfo",
    "InterpreterInfo",
    "LocationInfo",
    "ReaderError",
    "ThreadInfo",
    "zstd_available",
]
