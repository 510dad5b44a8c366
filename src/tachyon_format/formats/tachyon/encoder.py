"""The exact Tachyon encoder: interning, record choice and the sample-region byte stream.

Tier (d): one sequential state machine, because record choice depends on every thread's previous
stack and pending REPEAT buffer. It reproduces CPython 3.15.2's ``_remote_debugging.BinaryWriter``
byte for byte (docs/format/records.md#record-choice, docs/format/frames.md):

1. strings and frames are interned in first-use order (filename, funcname, then the frame),
   the frame deduplicated on its converted values before delta/sentinel normalisation;
2. each thread-sample becomes a REPEAT entry (same stack as the thread's previous one) or a
   FULL / SUFFIX / POP_PUSH record, the thread's pending REPEAT always emitted first;
3. records stream through a 512 KiB buffer into the file, raw or as one zstd frame.

Fixed layouts come from :mod:`tachyon_format.schema.tachyon`; the varint bodies are written
here by hand (they are hot) and tested against the schema's ``REPEAT``/``FULL``/... structs.
"""

from __future__ import annotations

import contextlib
import operator
from collections.abc import Sequence
from typing import BinaryIO

from tachyon_format.schema import tachyon as spec
from tachyon_format.schema.leb128 import encode_zigzag
from tachyon_format.schema.primitives import U32_MAX, U64_MAX, ByteOrder, encode_uleb128

from .settings import REPEAT_BUFFER_SIZE, REPEAT_ENTRY_MAX_SIZE, WRITE_BUFFER_SIZE
from .zstd import StreamCompressor

FrameKey = tuple
"""``(filename, funcname, lineno, end_lineno, column, end_column, opcode)``: what one frame
of a sample is, before interning. Position items and the opcode follow CPython's conversion
rules (:func:`position_int32`, :func:`opcode_byte`), so ``None`` means "not available"."""

_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1
_SMALL_ULEB = [encode_uleb128(value) for value in range(1 << 14)]
"""Every 1- and 2-byte varint, precomputed: nearly all deltas, counts and indices."""


def uleb128(value: int) -> bytes:
    return _SMALL_ULEB[value] if value < 16384 else encode_uleb128(value)


def zigzag_uleb128(value: int) -> bytes:
    """svarint of an int32 (docs/format/primitives.md#zigzagleb128int32)."""
    return uleb128(encode_zigzag(value, 32))


def position_int32(item: object) -> int:
    """``(int32_t)PyLong_AsLong(item)``, with CPython's writer turning any failure into -1.

    ``None``, non-integers and values outside the C long range give -1; others wrap to int32.
    """
    if type(item) is not int:
        try:
            item = operator.index(item)
        except TypeError:
            return spec.LOCATION_NOT_AVAILABLE
    if not _LONG_MIN <= item <= _LONG_MAX:
        return spec.LOCATION_NOT_AVAILABLE
    return ((item + 2**31) & U32_MAX) - 2**31


def opcode_byte(opcode: object) -> int:
    """The stored opcode: an int in 0..254 as is, anything else (None, 255, -1, ...) 255."""
    if isinstance(opcode, int) and 0 <= opcode <= spec.MAX_REAL_OPCODE:
        return int(opcode)
    return spec.OPCODE_NONE


def utf8(text: object) -> bytes:
    """``PyUnicode_AsUTF8AndSize``: strict UTF-8 of a ``str`` (lone surrogates raise)."""
    if not isinstance(text, str):
        raise TypeError("bad argument type for built-in operation")
    return text.encode("utf-8")


class StringTable:
    """Interned strings in first-use order and their encoded table
    (docs/format/frames.md#string-interning)."""

    def __init__(self) -> None:
        self.index: dict[str, int] = {}
        self.encoded = bytearray()
        self.count = 0

    def __len__(self) -> int:
        return self.count

    def append_raw(self, data: bytes) -> None:
        """Add an entry's bytes as they are, even a duplicate or invalid UTF-8 (copying a
        table read from a file). Text that later interns to the same valid UTF-8 finds it."""
        # (bytes that are not UTF-8 are no str's encoding: nothing can intern to them)
        with contextlib.suppress(UnicodeDecodeError):
            self.index.setdefault(data.decode("utf-8"), self.count)
        self.encoded += uleb128(len(data))
        self.encoded += data
        self.count += 1

    def intern(self, text: str) -> int:
        if type(text) is str:
            found = self.index.get(text)
            if found is not None:
                return found
        data = utf8(text)
        text = str(text)  # a str subclass interns as the plain string it equals
        found = self.index.get(text)
        if found is not None:
            return found
        if self.count >= U32_MAX:
            raise OverflowError("too many strings for binary format")
        if len(data) > U32_MAX:
            raise OverflowError(
                f"string length {len(data)} exceeds binary format maximum {U32_MAX}"
            )
        number = self.index[text] = self.count
        self.count += 1
        self.encoded += uleb128(len(data))
        self.encoded += data
        return number


class FrameTable:
    """Interned frames in first-use order and their encoded table
    (docs/format/frames.md#frame-deduplication)."""

    def __init__(self, strings: StringTable) -> None:
        self.strings = strings
        self.index: dict[tuple[int, ...], int] = {}
        self.encoded = bytearray()
        self.index_bytes: list[bytes] = []
        """``uleb128(i)`` for every frame index ``i``: stacks are written from these."""
        self._plain: dict[tuple, int] = {}
        """Keys made only of str/int/None map straight to their index, skipping conversion.
        Other types are not cached: ``1.0 == 1`` would collide while converting differently."""

    def __len__(self) -> int:
        return len(self.index_bytes)

    def append_entry(self, filename_idx: int, funcname_idx: int, lineno: int, end_lineno: int,
                     column: int, end_column: int, opcode: int) -> None:
        """Add an entry from read-back values (the inverse of CPython's reader), even a
        duplicate: ``end = -1 if start == -1 else start + delta``, opcode -1 = none."""
        end_lineno_delta = 0 if lineno == -1 else _wrap_int32(end_lineno - lineno)
        end_column_delta = 0 if column == -1 else _wrap_int32(end_column - column)
        opcode = spec.OPCODE_NONE if opcode < 0 else opcode
        self._write(filename_idx, funcname_idx, lineno, end_lineno_delta, column,
                    end_column_delta, opcode)
        converted = (filename_idx, funcname_idx, lineno, end_lineno, column, end_column, opcode)
        self.index.setdefault(converted, len(self.index_bytes))
        self.index_bytes.append(uleb128(len(self.index_bytes)))

    def intern(self, key: Sequence) -> int:
        """Index of one frame key, interning its strings and itself on first use."""
        found = self._plain.get(key) if type(key) is tuple else None
        if found is not None:
            return found
        filename, funcname, lineno, end_lineno, column, end_column, opcode = key
        filename_idx = self.strings.intern(filename)
        funcname_idx = self.strings.intern(funcname)
        converted = (
            filename_idx,
            funcname_idx,
            position_int32(lineno),
            position_int32(end_lineno),
            position_int32(column),
            position_int32(end_column),
            opcode_byte(opcode),
        )
        number = self.index.get(converted)
        if number is None:
            number = self._append(converted)
        if type(key) is tuple and all(type(item) in _PLAIN for item in key):
            self._plain[key] = number
        return number

    def _append(self, converted: tuple[int, ...]) -> int:
        if len(self.index_bytes) >= U32_MAX:
            raise OverflowError("too many frames for binary format")
        filename_idx, funcname_idx, lineno, end_lineno, column, end_column, opcode = converted
        missing = spec.LOCATION_NOT_AVAILABLE
        end_lineno_delta = end_lineno - lineno if missing not in (lineno, end_lineno) else 0
        end_column_delta = end_column - column if missing not in (column, end_column) else 0
        self._write(filename_idx, funcname_idx, lineno, _wrap_int32(end_lineno_delta), column,
                    _wrap_int32(end_column_delta), opcode)
        number = len(self.index_bytes)
        self.index[converted] = number
        self.index_bytes.append(uleb128(number))
        return number

    def _write(self, filename_idx: int, funcname_idx: int, lineno: int, end_lineno_delta: int,
               column: int, end_column_delta: int, opcode: int) -> None:
        self.encoded += b"".join(
            (
                uleb128(filename_idx),
                uleb128(funcname_idx),
                zigzag_uleb128(lineno),
                zigzag_uleb128(end_lineno_delta),
                zigzag_uleb128(column),
                zigzag_uleb128(end_column_delta),
                bytes((opcode,)),
            )
        )


_PLAIN = (str, int, type(None))


def _wrap_int32(value: int) -> int:
    """C ``int`` subtraction as CPython's compiler leaves it: two's complement wrap."""
    return ((value + 2**31) & U32_MAX) - 2**31


class RegionStream:
    """The sample region on its way to the file: 512 KiB chunks, raw or one zstd frame.

    CPython fills a 524288-byte buffer and hands it on only when exactly full
    (docs/format/writer.md#buffering-and-finalize), so zstd sees the same chunk boundaries and
    compresses to the same bytes.
    """

    def __init__(self, file: BinaryIO, zstd: bool) -> None:
        self.file = file
        self.compressor = StreamCompressor() if zstd else None
        self.buffer = bytearray()
        self.num_bytes = 0
        """Uncompressed bytes written so far (``get_stats()['bytes_written']``)."""

    def write(self, data: bytes | bytearray) -> None:
        self.buffer += data
        self.num_bytes += len(data)
        if len(self.buffer) >= WRITE_BUFFER_SIZE:
            full = len(self.buffer) - len(self.buffer) % WRITE_BUFFER_SIZE
            view = memoryview(self.buffer)
            for start in range(0, full, WRITE_BUFFER_SIZE):
                self._emit(view[start : start + WRITE_BUFFER_SIZE])
            view.release()
            del self.buffer[:full]

    def close(self) -> None:
        """Flush the partial buffer and end the zstd frame (finalize steps 2-3)."""
        if self.buffer:
            self._emit(self.buffer)
            self.buffer = bytearray()
        if self.compressor is not None:
            self.file.write(self.compressor.finish())

    def _emit(self, chunk: bytes | bytearray | memoryview) -> None:
        if self.compressor is None:
            self.file.write(chunk)
        else:
            self.file.write(self.compressor.compress(chunk))


class ThreadState:
    """One ``(thread_id, interpreter_id)``: its clock, stack and pending REPEAT entries."""

    __slots__ = ("prefixes", "prev_ts", "stack", "pending", "num_pending")

    def __init__(self, prefixes: tuple[bytes, ...], start_time_us: int) -> None:
        self.prefixes = prefixes
        """The 13-byte record prefix for each encoding, built once from the schema."""
        self.prev_ts = start_time_us
        self.stack: tuple[int, ...] = ()
        self.pending = bytearray()
        self.num_pending = 0


class WriteStats:
    """The counters of CPython's ``BinaryWriter.get_stats()`` (docs/format/writer.md#get_stats);
    records count when emitted. The reader's are
    :class:`~tachyon_format.formats.tachyon.region.records.ReadStats`."""

    __slots__ = (
        "repeat_records",
        "repeat_samples",
        "full_records",
        "suffix_records",
        "pop_push_records",
        "total_frames_written",
        "frames_saved",
    )

    def __init__(self) -> None:
        for name in self.__slots__:
            setattr(self, name, 0)


class SampleEncoder:
    """CPython's record choice (docs/format/records.md#record-choice) over interned stacks, writing
    to a RegionStream.

    Stacks are tuples of frame indices, innermost first, already cut to 256 frames.
    """

    def __init__(self, region: RegionStream, order: ByteOrder, start_time_us: int) -> None:
        self.region = region
        self.order = order
        self.start_time_us = start_time_us
        self.threads: dict[tuple[int, int], ThreadState] = {}
        """Insertion order is first appearance: the order finalize() flushes REPEATs in."""
        self.num_samples = 0
        self.stats = WriteStats()
        self.frame_index_bytes: list[bytes] = []

    def thread(self, thread_id: int, interpreter_id: int) -> ThreadState:
        key = (thread_id, interpreter_id)
        state = self.threads.get(key)
        if state is None:
            if len(self.threads) >= U32_MAX:
                raise OverflowError("too many threads for binary format")
            prefix = spec.record_prefix(self.order)
            prefixes = tuple(
                prefix.build(
                    {"thread_id": thread_id, "interpreter_id": interpreter_id, "encoding": enc}
                )
                for enc in spec.Encoding
            )
            state = self.threads[key] = ThreadState(prefixes, self.start_time_us)
        return state

    def encode(self, state: ThreadState, stack: tuple[int, ...], timestamp_us: int, status: int):
        """One thread-sample. ``status`` is already a u8, ``timestamp_us`` a u64."""
        delta = (timestamp_us - state.prev_ts) & U64_MAX
        if stack == state.stack:
            if len(state.pending) + REPEAT_ENTRY_MAX_SIZE > REPEAT_BUFFER_SIZE:
                self.flush_repeat(state)
            state.pending += uleb128(delta)
            state.pending.append(status)
            state.num_pending += 1
        else:
            self.flush_repeat(state)
            self._change(state, stack, delta, status)
            state.stack = stack
        state.prev_ts = timestamp_us
        self.num_samples += 1

    def _change(self, state: ThreadState, stack: tuple[int, ...], delta: int, status: int):
        prev = state.stack
        shared = 0
        limit = min(len(prev), len(stack))
        while shared < limit and prev[-1 - shared] == stack[-1 - shared]:
            shared += 1
        pop, push = len(prev) - shared, len(stack) - shared
        stats = self.stats
        index_bytes = self.frame_index_bytes
        head = uleb128(delta) + bytes((status,))
        if shared == 0 or (pop and shared < len(stack) // 2):
            body = [state.prefixes[spec.Encoding.FULL], head, uleb128(len(stack))]
            body.extend(index_bytes[i] for i in stack)
            stats.full_records += 1
            stats.total_frames_written += len(stack)
        else:
            encoding = spec.Encoding.SUFFIX if pop == 0 else spec.Encoding.POP_PUSH
            first = shared if pop == 0 else pop
            body = [state.prefixes[encoding], head, uleb128(first), uleb128(push)]
            body.extend(index_bytes[i] for i in stack[:push])
            if pop == 0:
                stats.suffix_records += 1
            else:
                stats.pop_push_records += 1
            stats.total_frames_written += push
            stats.frames_saved += shared
        self.region.write(b"".join(body))

    def flush_repeat(self, state: ThreadState) -> None:
        """Emit the thread's pending REPEAT record, if any."""
        if not state.num_pending:
            return
        self.region.write(
            state.prefixes[spec.Encoding.REPEAT] + uleb128(state.num_pending) + state.pending
        )
        stats = self.stats
        stats.repeat_records += 1
        stats.repeat_samples += state.num_pending
        stats.frames_saved += state.num_pending * len(state.stack)
        state.pending = bytearray()
        state.num_pending = 0

    def flush_all(self) -> None:
        """finalize() step 1: every thread's REPEAT, in order of first appearance."""
        for state in self.threads.values():
            self.flush_repeat(state)
