"""A drop-in for the binary-format part of CPython 3.15's ``_remote_debugging``.

``BinaryWriter`` writes the same bytes as CPython 3.15.2's, with the same argument conversions,
exceptions, messages and OPEN / LIMIT_REACHED / BROKEN / closed states
(docs/format/writer.md#states). ``BinaryReader`` replays files through collectors as CPython's does
(docs/format/reader.md). The struct-sequence types ``FrameInfo``, ``LocationInfo``, ``ThreadInfo``
and ``InterpreterInfo`` have CPython's field names and order; the writer also accepts any objects
with those attributes, and a location may be a plain 4-tuple.

This module knows the CPython-facing API only; the format lives in :mod:`.codec`.
"""

from __future__ import annotations

import enum
import operator
import os
import sys
from typing import Any, ClassVar

import numpy as np

from tachyon_format.errors import FormatError
from tachyon_format.model import Profile
from tachyon_format.schema import tachyon as spec
from tachyon_format.schema.primitives import U32_MAX, U64_MAX
from tachyon_format.schema.tachyon import ThreadStatus

from .encoder import FrameKey
from .facts import EXTRAS_KEY
from .file import TachyonFile, open_file
from .reader import iter_batches
from .settings import REPLAY_BATCH_MAX
from .writer import Writer

THREAD_STATUS_HAS_GIL = int(ThreadStatus.HAS_GIL)
THREAD_STATUS_ON_CPU = int(ThreadStatus.ON_CPU)
THREAD_STATUS_UNKNOWN = int(ThreadStatus.UNKNOWN)
THREAD_STATUS_GIL_REQUESTED = int(ThreadStatus.GIL_REQUESTED)
THREAD_STATUS_HAS_EXCEPTION = int(ThreadStatus.HAS_EXCEPTION)
THREAD_STATUS_MAIN_THREAD = int(ThreadStatus.MAIN_THREAD)

_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1
_INT_MIN, _INT_MAX = -(2**31), 2**31 - 1


def zstd_available() -> bool:
    """zstd always works here: the stdlib ``compression.zstd`` or ``backports.zstd``."""
    return True


# -- struct sequences ---------------------------------------------------------------------


class _StructSequence(tuple):
    """A tuple with named fields, built like a C struct sequence: ``Cls((a, b, ...))``."""

    _fields: ClassVar[tuple[str, ...]] = ()
    n_fields: ClassVar[int]
    n_sequence_fields: ClassVar[int]
    n_unnamed_fields: ClassVar[int] = 0

    def __new__(cls, sequence=(), dict=None):  # noqa: A002 - CPython's parameter name
        values = tuple(sequence)
        if len(values) != len(cls._fields):
            raise TypeError(
                f"_remote_debugging.{cls.__name__}() takes a {len(cls._fields)}-sequence "
                f"({len(values)}-sequence given)"
            )
        return super().__new__(cls, values)

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        cls.n_fields = cls.n_sequence_fields = len(cls._fields)
        cls.__match_args__ = cls._fields
        for index, name in enumerate(cls._fields):
            setattr(cls, name, property(operator.itemgetter(index)))

    def __repr__(self) -> str:
        pairs = zip(self._fields, self, strict=True)
        fields = ", ".join(f"{name}={value!r}" for name, value in pairs)
        return f"_remote_debugging.{type(self).__name__}({fields})"

    def __reduce__(self):
        return (type(self), (tuple(self),))

    def _replace(self, **changes):
        return type(self)(tuple(changes.pop(name, value) for name, value in
                                zip(self._fields, self, strict=True)))


class LocationInfo(_StructSequence):
    """Source location information: (lineno, end_lineno, col_offset, end_col_offset)"""

    _fields = ("lineno", "end_lineno", "col_offset", "end_col_offset")


class FrameInfo(_StructSequence):
    """Information about a frame"""

    _fields = ("filename", "location", "funcname", "opcode")


class ThreadInfo(_StructSequence):
    """Information about a thread"""

    _fields = ("thread_id", "status", "frame_info")


class InterpreterInfo(_StructSequence):
    """Information about an interpreter"""

    _fields = ("interpreter_id", "threads")


# -- C argument conversions, with CPython's exceptions ------------------------------------


def _index(value: Any) -> int:
    """``__index__`` as C's integer converters call it."""
    if type(value) is int:
        return value
    if isinstance(value, float) or not hasattr(type(value), "__index__"):
        raise TypeError(f"'{type(value).__name__}' object cannot be interpreted as an integer")
    return value.__index__()


def _clinic_u64(value: Any) -> int:
    """Argument Clinic's ``unsigned long long`` converter (write_sample's timestamp)."""
    value = _index(value)
    if value < 0:
        raise ValueError("Cannot convert negative int")
    if value > U64_MAX:
        raise OverflowError("Python int too large for C unsigned long long")
    return value


def _clinic_int(value: Any) -> int:
    value = _index(value)
    if not _INT_MIN <= value <= _INT_MAX:
        raise OverflowError("Python int too large to convert to C int")
    return value


def _as_unsigned_long_long(value: Any) -> int:
    """``PyLong_AsUnsignedLongLong``: ints only (no ``__index__``)."""
    if not isinstance(value, int):
        raise TypeError("an integer is required")
    if value < 0:
        raise OverflowError("can't convert negative int to unsigned")
    if value > U64_MAX:
        raise OverflowError("int too big to convert")
    return int(value)


def _as_long(value: Any) -> int:
    """``PyLong_AsLong`` (the status)."""
    value = _index(value)
    if not _LONG_MIN <= value <= _LONG_MAX:
        raise OverflowError("Python int too large to convert to C long")
    return value


def _frame_key(frame: Any) -> FrameKey:
    """A FrameInfo-like object as the writer's frame key (conversions happen on interning)."""
    location = frame.location
    if location is None:
        return (frame.filename, frame.funcname, None, None, None, None, frame.opcode)
    lineno, end_lineno, column, end_column = location[0], location[1], location[2], location[3]
    return (frame.filename, frame.funcname, lineno, end_lineno, column, end_column, frame.opcode)


class _FrameNumbers:
    """Frame-table numbers of FrameInfo objects, remembered per object and per stack.

    A profiler hands the same FrameInfo objects to many samples; converting and hashing
    every field of every frame again costs far more than CPython's C writer spends. Only
    deeply immutable objects are remembered (a tuple of str/int/None, its location a tuple
    of int/None), and each remembered object is kept alive, so its ``id`` cannot be reused:
    the same ids mean the same frame keys and the file is unchanged. Bounded: the memory is
    dropped when it grows past ``limit`` entries.
    """

    def __init__(self, intern, limit: int = 1 << 16) -> None:
        self._intern = intern
        self._frames: dict[int, tuple[Any, int]] = {}
        self._stacks: dict[tuple[int, ...], tuple[list, tuple[int, ...]]] = {}
        self._limit = limit

    def stack(self, frames) -> tuple[int, ...]:
        frames = frames[: spec.MAX_STACK_DEPTH]  # outer frames are never interned
        ids = tuple(map(id, frames))
        hit = self._stacks.get(ids)
        if hit is not None:
            return hit[1]
        known = self._frames
        numbers = []
        all_immutable = True
        for frame in frames:
            remembered = known.get(id(frame))
            if remembered is not None and remembered[0] is frame:
                numbers.append(remembered[1])
                continue
            number = self._intern(_frame_key(frame))
            if _deeply_immutable(frame):
                self._remember(known, id(frame), (frame, number))
            else:
                all_immutable = False
            numbers.append(number)
        result = tuple(numbers)
        if all_immutable:
            self._remember(self._stacks, ids, (list(frames), result))
        return result

    def _remember(self, memory: dict, key, value) -> None:
        if len(memory) >= self._limit:
            memory.clear()
        memory[key] = value


_ATOMS = (str, int, type(None))


def _deeply_immutable(frame: Any) -> bool:
    """A 4-tuple (filename, location, funcname, opcode) of atoms, location a tuple of atoms."""
    if not isinstance(frame, tuple) or len(frame) != 4:
        return False
    filename, location, funcname, opcode = frame
    return (
        type(filename) in _ATOMS
        and type(funcname) in _ATOMS
        and type(opcode) in _ATOMS
        and (location is None
             or (isinstance(location, tuple) and all(type(x) in _ATOMS for x in location)))
    )


# -- BinaryWriter ---------------------------------------------------------------------------


class _State(enum.Enum):
    OPEN = "open"
    LIMIT_REACHED = "limit reached"
    BROKEN = "broken"
    FINALIZED = "finalized"
    CLOSED = "closed"


class BinaryWriter:
    """``_remote_debugging.BinaryWriter``: CPython's Tachyon writer, in Python.

    ``BinaryWriter(filename, sample_interval_us, start_time_us, *, compression=0, mode=-1,
    capture_features=-1)``.
    """

    def __init__(
        self,
        filename: str | bytes | os.PathLike,
        sample_interval_us: int,
        start_time_us: int,
        *,
        compression: int = 0,
        mode: int = -1,
        capture_features: int = -1,
    ) -> None:
        os.fspath(filename)  # TypeError: expected str, bytes or os.PathLike object, not ...
        interval = _clinic_u64(sample_interval_us)
        start = _clinic_u64(start_time_us)
        compression = _clinic_int(compression)
        mode = _clinic_int(mode)
        capture_features = _clinic_int(capture_features)
        self._state = _State.BROKEN  # until the file is open
        try:
            self._writer = Writer(filename, interval, start, compression=compression,
                                  mode=mode, capture_features=capture_features)
        except OSError as exc:
            exc.filename = filename  # CPython reports the argument as given (e.g. a Path)
            raise
        self._state = _State.OPEN
        self._total_samples = 0
        self._frame_numbers = _FrameNumbers(self._writer.frames.intern)

    # -- samples ----------------------------------------------------------------------------

    def write_sample(self, stack_frames: list, timestamp_us: int) -> None:
        """Write one sampler iteration: every thread of every interpreter, same timestamp."""
        timestamp_us = _clinic_u64(timestamp_us)  # converted before the call: never breaks
        self._check_writable()
        try:
            if not isinstance(stack_frames, list):
                raise TypeError("stack_frames must be a list")
            self._write_interpreters(stack_frames, timestamp_us)
        except _FormatLimit as limit:
            self._state = _State.LIMIT_REACHED
            raise limit.error from None
        except BaseException:
            self._state = _State.BROKEN
            raise

    def _write_interpreters(self, stack_frames: list, timestamp_us: int) -> None:
        writer = self._writer
        encoder = writer.encoder
        for interpreter in stack_frames:
            interpreter_id = _as_unsigned_long_long(interpreter.interpreter_id)
            if interpreter_id > U32_MAX:
                raise _FormatLimit(OverflowError(
                    f"interpreter_id {interpreter_id} exceeds maximum value {U32_MAX}"))
            for thread in interpreter.threads:
                thread_id = _as_unsigned_long_long(thread.thread_id)
                status = _as_long(thread.status) & 0xFF
                stack = self._frame_numbers.stack(thread.frame_info)
                state = encoder.thread(thread_id, interpreter_id)
                encoder.encode(state, stack, timestamp_us, status)

    def set_stats(self, duration_sec: float, sample_rate: float, error_rate: float | None = None,
                  missed_samples: float | None = None) -> None:
        """Persist run statistics in the TACHSTAT block (the last call wins)."""
        if self._state in (_State.FINALIZED, _State.CLOSED):
            raise ValueError("Writer is closed")
        values = [_as_double(duration_sec), _as_double(sample_rate),
                  None if error_rate is None else _as_double(error_rate),
                  None if missed_samples is None else _as_double(missed_samples)]
        self._writer.set_stats(*values)

    # -- ending -----------------------------------------------------------------------------

    def finalize(self) -> None:
        """Flush everything and write the tables, stats, footer and header."""
        if self._state in (_State.FINALIZED, _State.CLOSED):
            raise ValueError("Writer is already closed")
        if self._state is _State.BROKEN:
            raise ValueError("Writer is broken")
        self._total_samples = self._writer.num_samples
        try:
            self._writer.finalize()
        except BaseException:
            self._state = _State.BROKEN
            raise
        self._state = _State.FINALIZED

    def close(self) -> None:
        """Close the file without finalizing (a no-op after finalize())."""
        if self._state is _State.FINALIZED:
            return
        if self._state is not _State.CLOSED:
            self._writer.close()
        self._state = _State.CLOSED
        self._total_samples = 0

    def __enter__(self) -> BinaryWriter:
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        if self._state in (_State.OPEN, _State.LIMIT_REACHED):
            self.finalize()
        elif self._state is _State.BROKEN:
            self.close()
        return False

    # -- introspection ----------------------------------------------------------------------

    @property
    def total_samples(self) -> int:
        """Thread-samples written, buffered REPEAT entries included; 0 after close()."""
        if self._state in (_State.FINALIZED, _State.CLOSED):
            return self._total_samples
        return self._writer.num_samples

    @property
    def limit_reached(self) -> bool:
        """True once a format limit (an interpreter_id above u32) stopped a write_sample()."""
        return self._state is _State.LIMIT_REACHED

    def get_stats(self) -> dict[str, int | float]:
        """Encoding counters (records count when emitted, samples when added)."""
        if self._state in (_State.FINALIZED, _State.CLOSED):
            raise ValueError("Writer is closed")
        counters = self._writer.encoder.counters
        records = (counters.repeat_records, counters.full_records, counters.suffix_records,
                   counters.pop_push_records)
        written, saved = counters.total_frames_written, counters.frames_saved
        return {
            "repeat_records": counters.repeat_records,
            "repeat_samples": counters.repeat_samples,
            "full_records": counters.full_records,
            "suffix_records": counters.suffix_records,
            "pop_push_records": counters.pop_push_records,
            "total_records": sum(records),
            "total_samples": self._writer.num_samples,
            "total_frames_written": written,
            "frames_saved": saved,
            "bytes_written": self._writer.region.num_bytes,
            "frame_compression_pct": saved / (written + saved) * 100 if written + saved else 0.0,
        }

    def _check_writable(self) -> None:
        if self._state in (_State.FINALIZED, _State.CLOSED):
            raise ValueError("Writer is closed")
        if self._state is _State.BROKEN:
            raise ValueError("Writer is broken")


class _FormatLimit(Exception):
    """Carries the OverflowError of a format limit, which leaves the writer usable."""

    def __init__(self, error: OverflowError) -> None:
        super().__init__(str(error))
        self.error = error


def _as_double(value: Any) -> float:
    """``PyFloat_AsDouble``: floats, and anything with ``__float__`` or ``__index__``."""
    if isinstance(value, float):
        return value
    if hasattr(type(value), "__float__"):
        return float(value)
    if hasattr(type(value), "__index__"):
        return float(value.__index__())
    raise TypeError(f"must be real number, not {type(value).__name__}")


# -- BinaryReader ---------------------------------------------------------------------------


class ReaderError(FormatError):
    """A file CPython's reader rejects: ``str()`` is CPython's exact message; the offset and
    field path stay available as attributes."""

    def __str__(self) -> str:
        return self.message

    @classmethod
    def of(cls, error: FormatError) -> ReaderError | MemoryError:
        message = error.message
        if message.startswith("Decompressed data exceeds maximum size"):
            return MemoryError(message)
        if message.startswith("Binary file was created with Python"):  # quotes the reader's
            running = "{}.{}.{}".format(*sys.version_info[:3])  # own interpreter, as CPython's
            message = f"{message.split(', but ')[0]}, but this is Python {running} " + (
                f"(format version {spec.FORMAT_VERSION})")
        return cls(message, offset=error.offset, path=error.path, record=error.record,
                   region=error.region)


_PROGRESS_INTERVAL = 1000
_REPLAY_BATCH = 1 << 20
"""Samples decoded at a time: replay's memory is bounded by this, not by the file."""
_STATS_KEYS = ("repeat_records", "repeat_samples", "full_records", "suffix_records",
               "pop_push_records", "total_records", "total_samples", "stack_reconstructions")


class BinaryReader:
    """``_remote_debugging.BinaryReader``: replays a Tachyon file through a collector.

    The file is checked at open as CPython does (docs/format/reader.md#checks-at-open); ``replay``
    hands each record to ``collector.collect(stack_frames, timestamps)`` one thread at a time,
    REPEAT entries in runs of equal status of at most 8192 timestamps
    (docs/format/reader.md#collector-calls).
    """

    def __init__(self, filename: str | bytes | os.PathLike) -> None:
        os.fspath(filename)  # TypeError: expected str, bytes or os.PathLike object, not ...
        try:
            with open(filename, "rb") as file:
                data = file.read()
        except OSError as exc:
            exc.filename = filename  # CPython reports the argument as given (e.g. a Path)
            raise
        try:
            # CPython reads only its own layout, and decompresses the whole region at open
            # (check 14) before it parses the tables, so errors show in that order
            self._file: TachyonFile | None = open_file(data, tables=False, legacy_layouts=False)
            self._file.load_region()
            self._file.load_tables()
        except FormatError as exc:
            raise ReaderError.of(exc) from None
        self._stats = dict.fromkeys(_STATS_KEYS, 0)
        self._frame_infos: dict[int, FrameInfo] = {}

    # -- metadata ---------------------------------------------------------------------------

    def get_info(self) -> dict[str, Any]:
        """Header, footer and statistics, with the keys of CPython's ``get_info()``."""
        return self._open_file().info()

    def get_stats(self) -> dict[str, int]:
        """Record counters of the replays so far (never reset between replays)."""
        self._open_file()
        return dict(self._stats)

    @property
    def sample_count(self) -> int:
        return self._open_file().sample_count

    @property
    def sample_interval_us(self) -> int:
        return self._open_file().header.sample_interval_us

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def __enter__(self) -> BinaryReader:
        return self

    def __exit__(self, *exc_info) -> bool:
        self.close()
        return False

    def _open_file(self) -> TachyonFile:
        if self._file is None:
            raise ValueError("Reader is closed")
        return self._file

    # -- replay -----------------------------------------------------------------------------

    def replay(self, collector: Any, progress_callback: Any = None) -> int:
        """Deliver every sample to ``collector.collect``; returns the number delivered.

        Raises CPython's ValueError messages for malformed data, after delivering the samples
        of the records before the bad one (as CPython does)."""
        meta = self._open_file()
        if not hasattr(collector, "collect"):
            raise TypeError("Collector must have a collect() method")
        collect = collector.collect
        total = meta.sample_count
        if progress_callback is not None:
            progress_callback(0, total)
        replayed = 0
        try:
            for batch in iter_batches(meta, samples_per_batch=_REPLAY_BATCH):
                self._count(batch)
                replayed = self._deliver(batch, collect, progress_callback, replayed, total)
        except FormatError as exc:
            raise ReaderError.of(exc) from None
        if progress_callback is not None:
            progress_callback(replayed, total)
        return replayed

    def _deliver(self, batch: Profile, collect, progress, replayed: int, total: int) -> int:
        interpreter_ids = batch.threads.interpreter_id.tolist()
        thread_ids = batch.threads.thread_id.tolist()
        stack_of = batch.stacks.tuples()
        samples = batch.samples
        stamps = samples.timestamp_us
        statuses = samples.status
        records = batch.extras[EXTRAS_KEY].records
        first = records.first_sample.tolist() + [len(samples)]
        thread = samples.thread.tolist()
        stack = samples.stack.tolist()
        for index, encoding in enumerate(records.encoding.tolist()):
            start, stop = first[index], first[index + 1]
            count = stop - start
            if count:
                row = thread[start]
                frames = [self._frame_info(batch, f) for f in stack_of[stack[start]]]
                for lo, hi in _status_runs(statuses, start, stop, encoding):
                    collect([InterpreterInfo((interpreter_ids[row], [ThreadInfo((
                        thread_ids[row], int(statuses[lo]), list(frames)))]))],
                            stamps[lo:hi].tolist())
            replayed += count
            if progress is not None:
                if encoding == spec.Encoding.REPEAT and replayed % _PROGRESS_INTERVAL < count:
                    progress(replayed, total)
                if replayed % _PROGRESS_INTERVAL == 0:
                    progress(replayed, total)
        return replayed

    def _frame_info(self, batch: Profile, index: int) -> FrameInfo:
        info = self._frame_infos.get(index)
        if info is None:
            f, strings = batch.frames, batch.strings
            lineno = int(f.lineno[index])
            location = None if lineno == -1 else (
                lineno, int(f.end_lineno[index]), int(f.column[index]), int(f.end_column[index]))
            opcode = int(f.opcode[index])
            info = self._frame_infos[index] = FrameInfo((
                strings[f.filename[index]], location, strings[f.funcname[index]],
                None if opcode < 0 else opcode))
        return info

    def _count(self, batch: Profile) -> None:
        """Add a batch's records to the ``get_stats()`` counters."""
        records = batch.extras[EXTRAS_KEY].records
        encoding = records.encoding
        held = np.diff(np.append(records.first_sample, len(batch.samples)))
        repeat = encoding == spec.Encoding.REPEAT
        counts = np.bincount(encoding, minlength=len(spec.Encoding)).tolist()
        stats = self._stats
        stats["repeat_records"] += counts[spec.Encoding.REPEAT]
        stats["repeat_samples"] += int(held[repeat].sum())
        stats["full_records"] += counts[spec.Encoding.FULL]
        stats["suffix_records"] += counts[spec.Encoding.SUFFIX]
        stats["pop_push_records"] += counts[spec.Encoding.POP_PUSH]
        stats["total_records"] += int(encoding.size)
        stats["total_samples"] += int(held.sum())
        stats["stack_reconstructions"] += int(encoding.size) - counts[spec.Encoding.REPEAT]


def _status_runs(statuses: np.ndarray, start: int, stop: int, encoding: int):
    """The collect() batches of one record: a REPEAT's runs of equal status, each cut into
    pieces of at most 8192 timestamps; any other record is one sample."""
    if encoding != spec.Encoding.REPEAT:
        yield start, stop
        return
    run = statuses[start:stop]
    cuts = (np.flatnonzero(run[1:] != run[:-1]) + 1 + start).tolist()
    for lo, hi in zip([start, *cuts], [*cuts, stop], strict=True):
        for piece in range(lo, hi, REPLAY_BATCH_MAX):
            yield piece, min(piece + REPLAY_BATCH_MAX, hi)


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
