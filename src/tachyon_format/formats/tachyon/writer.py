"""Streaming Tachyon writer: CPython 3.15.2's ``BinaryWriter`` bytes, from Python values.

Pipeline (docs/format/writer.md#buffering-and-finalize):

1. ``Writer(...)`` opens the file and writes a 64-byte zero placeholder header;
2. :meth:`Writer.add` / :meth:`Writer.add_batch` intern each stack and feed
   :class:`~tachyon_format.formats.tachyon.encoder.SampleEncoder`, whose records stream to the file
   through 512 KiB buffers (raw, or one zstd frame);
3. :meth:`Writer.finalize` (also on ``with`` exit) flushes pending REPEATs in thread
   first-appearance order, ends the zstd frame, writes the string and frame tables, the
   TACHSTAT block (if :meth:`Writer.set_stats` was called) and the footer, then the header.

Memory is bounded by the string/frame tables and per-thread state (at most 16 KiB of pending
REPEAT entries per thread), never by the number of samples.
"""

from __future__ import annotations

import operator
import os
import sys
from collections.abc import Mapping, Sequence
from typing import Literal

import numpy as np
import numpy.typing as npt

from tachyon_format.model import Profile, Stacks
from tachyon_format.schema import tachyon as spec
from tachyon_format.schema.primitives import U32_MAX, U64_MAX, ByteOrder

from .encoder import FrameKey, FrameTable, RegionStream, SampleEncoder, StringTable
from .facts import EXTRAS_KEY, TachyonFacts
from .stats import Stats

NATIVE_ORDER: ByteOrder = "<" if sys.byteorder == "little" else ">"
WRITER_PYTHON_VERSION = (3, 15, 2)
"""What CPython 3.15.2 writes in header bytes 8..10 (informational only)."""

Compression = Literal["zstd", "none"] | int


def compression_word(compression: Compression) -> int:
    """The header's ``compression`` u32: "zstd" is 1, "none" 0, an int is stored as a C int."""
    if compression == "zstd":
        return spec.Compression.ZSTD
    if compression == "none":
        return spec.Compression.NONE
    if isinstance(compression, int) and not isinstance(compression, bool):
        if not -(2**31) <= compression < 2**31:
            raise OverflowError("compression does not fit a C int")
        return compression & U32_MAX
    raise ValueError(f"Unknown compression type: {compression!r}")


def check_mode(mode: int | None) -> int:
    """The writer's mode int (-1 = unknown), validated as CPython does."""
    value = -1 if mode is None else int(mode)
    if not -1 <= value <= max(spec.ProfilingMode):
        raise ValueError("invalid profiling mode")
    return value


def check_capture_features(capture_features: int | None) -> int:
    value = -1 if capture_features is None else int(capture_features)
    if not -1 <= value <= 31:
        raise ValueError("invalid capture features")
    return value


FRAME_COLUMNS = ("filename", "funcname", "lineno", "end_lineno", "column", "end_column", "opcode")


def frame_keys(frames: Sequence[FrameKey] | Mapping[str, Sequence]) -> list[FrameKey]:
    """Frame keys from a sequence of 7-tuples or a mapping of :data:`FRAME_COLUMNS`.

    In columns, -1 (and, for the opcode, 255) mean "not available", as in the file.
    """
    if isinstance(frames, Mapping):
        columns = [np.asarray(frames[name]).tolist() for name in FRAME_COLUMNS]
        return list(zip(*columns, strict=True))
    return list(frames)


class Writer:
    """Write a Tachyon file exactly as CPython 3.15.2's ``BinaryWriter`` would.

    >>> with Writer("run.bin", 1000, 0) as w:                       # doctest: +SKIP
    ...     w.add(1, 0, 1000, 0, [("m.py", "main", 3, 3, 0, 9, None)])
    """

    def __init__(
        self,
        path: str | bytes | os.PathLike,
        sample_interval_us: int,
        start_time_us: int,
        *,
        compression: Compression = "zstd",
        mode: int | None = None,
        capture_features: int | None = None,
        python_version: tuple[int, int, int] = WRITER_PYTHON_VERSION,
    ) -> None:
        self.sample_interval_us = _check_range("sample_interval_us", sample_interval_us, U64_MAX)
        self.start_time_us = _check_range("start_time_us", start_time_us, U64_MAX)
        self.compression = compression_word(compression)
        self.mode = check_mode(mode)
        self.capture_features = check_capture_features(capture_features)
        self.python_version = python_version
        self.order = NATIVE_ORDER
        self.stats: Stats | None = None
        self.strings = StringTable()
        self.frames = FrameTable(self.strings)
        self._file = open(path, "w+b")  # noqa: SIM115 - closed by finalize()/close()
        try:
            self._file.write(bytes(spec.HEADER_SIZE))
        except BaseException:
            self._file.close()
            raise
        self.region = RegionStream(self._file, zstd=self.compression == spec.Compression.ZSTD)
        self.encoder = SampleEncoder(self.region, self.order, self.start_time_us)
        self.encoder.frame_index_bytes = self.frames.index_bytes
        self.closed = False

    # -- adding samples ------------------------------------------------------------------

    @property
    def num_samples(self) -> int:
        """Thread-samples added so far, buffered REPEAT entries included."""
        return self.encoder.num_samples

    def intern_stack(self, frames: Sequence[FrameKey]) -> tuple[int, ...]:
        """Frame indices of a stack (innermost first), keeping its 256 innermost frames."""
        intern = self.frames.intern
        return tuple([intern(key) for key in frames[: spec.MAX_STACK_DEPTH]])

    def add(
        self,
        thread_id: int,
        interpreter_id: int,
        timestamp_us: int,
        status: int,
        frames: Sequence[FrameKey],
    ) -> None:
        """One thread-sample: ``frames`` are frame keys, innermost first. ``status`` is
        truncated to its low 8 bits, as CPython does."""
        self._check_open()
        thread_id = _check_range("thread_id", thread_id, U64_MAX)
        interpreter_id = _check_range("interpreter_id", interpreter_id, U32_MAX)
        timestamp_us = _check_range("timestamp_us", timestamp_us, U64_MAX)
        state = self.encoder.thread(thread_id, interpreter_id)
        stack = self.intern_stack(frames)
        self.encoder.encode(state, stack, timestamp_us, operator.index(status) & 0xFF)

    def add_batch(
        self,
        thread_id: npt.ArrayLike,
        interpreter_id: npt.ArrayLike,
        timestamp_us: npt.ArrayLike,
        status: npt.ArrayLike,
        stack: npt.ArrayLike,
        *,
        stacks: Stacks,
        frames: Sequence[FrameKey] | Mapping[str, Sequence],
    ) -> None:
        """Many thread-samples, in call order, as equal-length columns.

        ``stack[i]`` is a stack id of ``stacks`` (-1 = the empty stack; lists of frames become
        a :class:`~tachyon_format.Stacks` with ``Stacks.from_csr``); the stacks' frame rows
        index ``frames``. Frames and stacks are interned on first use, so the file is the one that
        adding the samples one by one would give.
        """
        self._check_open()
        columns = [np.asarray(c) for c in (thread_id, interpreter_id, timestamp_us, status, stack)]
        if len({c.shape for c in columns}) != 1 or columns[0].ndim != 1:
            raise ValueError("add_batch columns must be 1-d and of equal length")
        tids, iids, stamps, statuses, stack_ids = columns
        if tids.size == 0:
            return
        for name, values, top in (("thread_id", tids, U64_MAX),
                                  ("interpreter_id", iids, U32_MAX),
                                  ("timestamp_us", stamps, U64_MAX)):
            if values.dtype.kind not in "iu" or (
                values.dtype.kind == "i" and values.min() < 0
            ) or int(values.max()) > top:
                raise ValueError(f"{name} must be integers in 0..{top}")
        keys = frame_keys(frames)
        frames_of = stacks.tuples(limit=spec.MAX_STACK_DEPTH)
        interned_frames: dict[int, int] = {}
        interned_stacks: dict[int, tuple[int, ...]] = {-1: ()}
        intern = self.frames.intern

        def intern_input_stack(stack_id: int) -> tuple[int, ...]:
            out = []
            for frame_id in frames_of[stack_id]:
                number = interned_frames.get(frame_id)
                if number is None:
                    number = interned_frames[frame_id] = intern(keys[frame_id])
                out.append(number)
            interned = interned_stacks[stack_id] = tuple(out)
            return interned

        encoder = self.encoder
        thread_of = encoder.thread
        encode = encoder.encode
        states: dict[tuple[int, int], object] = {}
        for tid, iid, ts, st, sid in zip(
            tids.tolist(), iids.tolist(), stamps.tolist(),
            (statuses.astype(np.int64) & 0xFF).tolist(), stack_ids.tolist(), strict=True,
        ):
            state = states.get((tid, iid))
            if state is None:
                state = states[(tid, iid)] = thread_of(tid, iid)
            interned = interned_stacks.get(sid)
            if interned is None:
                interned = intern_input_stack(sid)
            encode(state, interned, ts, st)

    def set_stats(
        self,
        duration_sec: float,
        sample_rate: float,
        error_rate: float | None = None,
        missed_samples: float | None = None,
    ) -> None:
        """Record the TACHSTAT block; the last call wins."""
        self._check_open()
        stats = Stats(float(duration_sec), float(sample_rate),
                      None if error_rate is None else float(error_rate),
                      None if missed_samples is None else float(missed_samples))
        problem = stats.problem()
        if problem is not None:
            raise ValueError(problem)
        self.stats = stats

    # -- finishing -----------------------------------------------------------------------

    def finalize(self) -> None:
        """Write everything after the sample region, then the header, and close the file."""
        self._check_open()
        self.closed = True
        try:
            self.encoder.flush_all()
            self.region.close()
            file = self._file
            string_table_offset = file.tell()
            file.write(self.strings.encoded)
            frame_table_offset = file.tell()
            file.write(self.frames.encoded)
            if self.stats is not None:
                file.write(self.stats.build(self.order))
            file_size = file.tell() + spec.FOOTER_SIZE
            file.write(self._footer(file_size))
            file.seek(0)
            file.write(self._header(string_table_offset, frame_table_offset))
            file.flush()
        finally:
            self._file.close()

    def close(self) -> None:
        """Close without finalizing (the file keeps its zero header and is unreadable)."""
        self.closed = True
        self._file.close()

    def __enter__(self) -> Writer:
        return self

    def __exit__(self, *exc_info) -> None:
        if not self.closed:
            self.finalize()

    def _check_open(self) -> None:
        if self.closed:
            raise ValueError("Writer is closed")

    def _header(self, string_table_offset: int, frame_table_offset: int) -> bytes:
        major, minor, micro = self.python_version
        features_known = self.capture_features >= 0
        return spec.header(self.order).build(
            {
                "format_version": spec.FORMAT_VERSION,
                "py_major": major,
                "py_minor": minor,
                "py_micro": micro,
                "reserved": 0,
                "start_time_us": self.start_time_us,
                "sample_interval_us": self.sample_interval_us,
                "sample_count": self.encoder.num_samples,
                "thread_count": len(self.encoder.threads),
                "string_table_offset": string_table_offset,
                "frame_table_offset": frame_table_offset,
                "compression": self.compression,
                "profiling_config": {
                    "reserved": 0,
                    "capture_features": self.capture_features if features_known else 0,
                    "features_known": features_known,
                    "mode_plus_one": (self.mode + 1) & 7,
                },
            }
        )

    def _footer(self, file_size: int) -> bytes:
        return spec.footer(self.order).build(
            {
                "string_count": self.strings.count,
                "frame_count": len(self.frames),
                "file_size": file_size,
                "checksum": bytes(16),
            }
        )


def _check_range(name: str, value: int, top: int) -> int:
    """``value`` as a plain int, if it is one in ``0..top``."""
    if type(value) is int and 0 <= value <= top:
        return value
    try:
        value = operator.index(value)
    except TypeError:
        raise ValueError(f"{name} must be an int, not {value!r}") from None
    if not 0 <= value <= top:
        raise ValueError(f"{name} must be an int in 0..{top}, not {value!r}")
    return value


# -- from columns ------------------------------------------------------------------------------


def write(
    profile: Profile,
    path: str | bytes | os.PathLike,
    *,
    compression: Compression | None = None,
) -> None:
    """Write a :class:`~tachyon_format.Profile` as a Tachyon file.

    A profile read from a file CPython wrote comes back byte for byte: the string table (as
    bytes) and the frame table are written as the profile holds them, duplicates included,
    the samples are fed in file order through CPython's record choice, and a thread's pending
    REPEAT is flushed where the profile's record table shows a REPEAT record ending (the file
    order differs from CPython's call order only by those deferrals). Without a record table,
    REPEATs are flushed as CPython's writer would. ``compression`` defaults to the profile's
    own (zstd for a profile that did not come from a Tachyon file).

    A Tachyon sample has a time, a thread and a status and counts once: a profile without
    timestamps, or whose samples carry other values, is refused here
    (``ValueError``)."""
    samples = profile.samples
    if samples.timestamp_us is None or samples.status is None:
        raise ValueError("a Tachyon file needs every sample's timestamp and thread status; "
                         "this profile has none")
    if samples.values is not None or (samples.thread < 0).any():
        raise ValueError("a Tachyon file holds one thread-sample per row, counted once; "
                         "this profile has sample values or samples without a thread")
    facts = profile.extras.get(EXTRAS_KEY)
    info = facts.info if isinstance(facts, TachyonFacts) else _info_from_meta(profile)
    writer = Writer(
        path,
        info["sample_interval_us"],
        info["start_time_us"],
        compression=info.get("compression_type", 0) if compression is None else compression,
        mode=info.get("mode"),
        capture_features=info.get("capture_features"),
        python_version=tuple(info.get("python_version", WRITER_PYTHON_VERSION)),
    )
    with writer:
        _preload_tables(writer, profile)
        records = facts.records if isinstance(facts, TachyonFacts) else None
        _encode_samples(writer.encoder, profile, records)
        if info.get("duration_sec") is not None and info.get("sample_rate") is not None:
            writer.set_stats(info["duration_sec"], info["sample_rate"], info.get("error_rate"),
                             info.get("missed_samples"))


def _info_from_meta(profile: Profile) -> dict:
    """Header values for a profile that did not come from a Tachyon file: the interval from
    the period, the clock start at the first sample, zstd, no statistics."""
    meta = profile.meta
    stamps = profile.samples.timestamp_us
    unit = 1000 if meta.period_type is not None and meta.period_type.unit == "nanoseconds" else 1
    return {
        "sample_interval_us": max(int(meta.period) // unit, 0),
        "start_time_us": int(stamps.min()) if stamps is not None and stamps.size else 0,
        "compression_type": spec.Compression.ZSTD,
    }


def _preload_tables(writer: Writer, profile: Profile) -> None:
    """The profile's string and frame tables, entry for entry (the inverse of reading)."""
    for data in profile.strings.raws():
        writer.strings.append_raw(data)
    frames = profile.frames
    columns = [np.asarray(c).astype(np.int64).tolist() for c in (
        frames.filename, frames.funcname, frames.lineno, frames.end_lineno, frames.column,
        frames.end_column, frames.opcode)]
    for row in zip(*columns, strict=True):
        writer.frames.append_entry(*row)


def _encode_samples(encoder: SampleEncoder, profile: Profile, records) -> None:
    samples = profile.samples
    thread_keys = list(zip(np.asarray(profile.threads.thread_id).tolist(),
                           np.asarray(profile.threads.interpreter_id).tolist(), strict=True))
    stack_of = profile.stacks.tuples(limit=spec.MAX_STACK_DEPTH)
    # a thread's state is made at its first sample, as CPython's writer makes it (the
    # header's thread_count counts the threads written, not the profile's whole table)
    states: list = [None] * len(thread_keys)
    stamps = np.asarray(samples.timestamp_us).tolist()
    threads = np.asarray(samples.thread).tolist()
    statuses = np.asarray(samples.status).tolist()
    stack_ids = np.asarray(samples.stack).tolist()
    # samples after which a REPEAT record ended in the source file
    repeat_ends: set[int] = set()
    if records is not None and len(records):
        first = np.asarray(records.first_sample, dtype=np.int64)
        ends = np.append(first[1:], len(stamps))
        is_repeat = np.asarray(records.encoding) == spec.Encoding.REPEAT
        repeat_ends = set((ends[is_repeat & (ends > first)] - 1).tolist())
    encode, flush = encoder.encode, encoder.flush_repeat
    for index, (ts, row, status, node) in enumerate(
        zip(stamps, threads, statuses, stack_ids, strict=True)
    ):
        state = states[row]
        if state is None:
            state = states[row] = encoder.thread(*thread_keys[row])
        encode(state, stack_of[node], ts, status)
        if index in repeat_ends:
            flush(state)
