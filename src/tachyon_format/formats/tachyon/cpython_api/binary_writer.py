"""``_remote_debugging.BinaryWriter``: CPython's writer API over the streaming
:class:`~tachyon_format.formats.tachyon.writer.Writer`, with its states
(docs/format/writer.md#states), limits and counters."""

from __future__ import annotations

import enum
import os
from typing import Any

from tachyon_format.schema.leb128 import U32_MAX

from ..writer import Writer
from .conversions import (
    FrameNumbers,
    as_long,
    as_unsigned_long_long,
    clinic_int,
    clinic_u64,
)


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
        interval = clinic_u64(sample_interval_us)
        start = clinic_u64(start_time_us)
        compression = clinic_int(compression)
        mode = clinic_int(mode)
        capture_features = clinic_int(capture_features)
        self._state = _State.BROKEN  # until the file is open
        try:
            self._writer = Writer(filename, interval, start, compression=compression,
                                  mode=mode, capture_features=capture_features)
        except OSError as exc:
            exc.filename = filename  # CPython reports the argument as given (e.g. a Path)
            raise
        self._state = _State.OPEN
        self._total_samples = 0
        self._frame_numbers = FrameNumbers(self._writer.frames.intern)

    # -- samples ----------------------------------------------------------------------------

    def write_sample(self, stack_frames: list, timestamp_us: int) -> None:
        """Write one sampler iteration: every thread of every interpreter, same timestamp."""
        timestamp_us = clinic_u64(timestamp_us)  # converted before the call: never breaks
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
            interpreter_id = as_unsigned_long_long(interpreter.interpreter_id)
            if interpreter_id > U32_MAX:
                raise _FormatLimit(OverflowError(
                    f"interpreter_id {interpreter_id} exceeds maximum value {U32_MAX}"))
            for thread in interpreter.threads:
                thread_id = as_unsigned_long_long(thread.thread_id)
                status = as_long(thread.status) & 0xFF
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
        stats = self._writer.encoder.stats
        records = (stats.repeat_records, stats.full_records, stats.suffix_records,
                   stats.pop_push_records)
        written, saved = stats.total_frames_written, stats.frames_saved
        return {
            "repeat_records": stats.repeat_records,
            "repeat_samples": stats.repeat_samples,
            "full_records": stats.full_records,
            "suffix_records": stats.suffix_records,
            "pop_push_records": stats.pop_push_records,
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


