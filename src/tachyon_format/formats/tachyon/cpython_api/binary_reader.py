"""``_remote_debugging.BinaryReader``: CPython's reader API over the public
:func:`~tachyon_format.formats.tachyon.reader.iter_batches` (docs/format/reader.md)."""

from __future__ import annotations

import os
import sys
from typing import Any

import numpy as np

from tachyon_format.errors import FormatError
from tachyon_format.model import Profile
from tachyon_format.schema import tachyon_values as spec

from ..facts import EXTRAS_KEY
from ..file import TachyonFile, open_file
from ..reader import iter_batches
from ..settings import REPLAY_BATCH_MAX
from .structs import FrameInfo, InterpreterInfo, ThreadInfo


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
                   region=error.region, region_start=error.region_start,
                   compressed=error.compressed)


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
