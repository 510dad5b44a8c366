"""Read a Tachyon file into a :class:`~tachyon_format.model.Profile`.

Pipeline:
1. ``file.open_file`` checks the header, statistics, footer and tables
   (docs/format/reader.md#checks-at-open);
2. the sample region is streamed in chunks (decompressed with a size cap when zstd);
3. a decoder of the region (:mod:`.region.engines`: the compiled record walk where it was
   built, else the numpy decoder) decodes each chunk, growing one shared stack prefix tree,
   and appends the samples and records to ``region.columns.GrowingColumns``: for ``read``
   arrays sized from the header's sample count (bounded by what the region can hold and by
   ``max_samples``), for ``iter_batches`` a pending batch that is handed out when full;
4. an error about a record leaves with where the region lies in the file
   (:meth:`FormatError.in_file <tachyon_format.FormatError.in_file>`), as the decoders know
   only region offsets.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from tachyon_format.errors import FormatError, LimitError
from tachyon_format.model import Frames, Meta, Profile, Samples, Stacks, Threads, ValueType
from tachyon_format.schema import tachyon_values as spec

from ..sources import Source
from .checks import header_field
from .facts import EXTRAS_KEY, Records, TachyonFacts
from .file import TachyonFile, open_file
from .region import engines
from .region.columns import GrowingColumns
from .settings import MAX_DECOMPRESSED_SIZE
from .tables import frame_strings_ok

DEFAULT_CHUNK_SIZE = 8 << 20
MAX_SAMPLES = 1 << 27
"""``read``'s default limit on sample rows (and record rows): some 2.3 GB of columns."""


def read(
    source: Source | TachyonFile,
    *,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    threads: bool | None = None,
    aggregate: bool = False,
    max_samples: int = MAX_SAMPLES,
    max_region_size: int = MAX_DECOMPRESSED_SIZE,
    progress: Callable[[int, int], object] | None = None,
    engine: str | None = None,
) -> Profile:
    """The whole profile as columns, exactly as CPython's ``BinaryReader.replay`` delivers it.

    *aggregate*: one sample row per distinct (thread, stack, status) instead, in order of
    first appearance, with its number of samples as ``values`` (sample type
    ``samples``/``count``) and no timestamps; the tables, ``meta`` and ``extras`` are those
    of the full read, but for the record table (``extras["tachyon"].records`` is None: a
    record row points at samples that counts do not keep). The samples are counted as they
    are decoded (:mod:`.region.counting`): memory grows with the distinct rows, not the
    samples nor the records.

    *threads*: whether a helper thread finds the next stretch of records while the current
    one is decoded (the result is the same either way); by default, when this process may
    run on more than one CPU.

    Raises :class:`~tachyon_format.FormatError` for anything CPython's reader rejects,
    including a sample count that differs from the header's. *source* may be a file opened
    with :func:`~.file.open_file` (it is then left open).

    Limits (docs/format/limits.md), checked before the memory is taken: *max_samples* sample
    rows and record rows (no limit with *aggregate*: it keeps neither), else a
    :class:`~tachyon_format.errors.LimitError` that says how to raise it, or to go through
    the file with :func:`iter_batches`; *max_region_size* bytes of decompressed zstd
    region (CPython's 1 GiB by default).

    *progress*: called after each chunk as ``progress(samples_decoded, header_sample_count)``
    (for a progress bar; the header's count is what the file claims).

    *engine*: the region's decoder, ``compiled`` or ``numpy`` (:func:`decoder_info
    <tachyon_format.decoder_info>`; by default the compiled walk where it was built)."""
    with (_opened(source, max_region_size, keep_region=True) as tachyon_file,
          _placed(tachyon_file)):
        decoder = _decoder(tachyon_file, threads, aggregate, engine)
        if not aggregate:
            _check_declared_samples(tachyon_file, max_samples)
        samples = (decoder.sample_counts() if aggregate else GrowingColumns.samples(
            _sample_capacity(tachyon_file, max_samples), limit=max_samples,
            on_limit=lambda: _rows_error("samples", max_samples)))
        records = GrowingColumns.records(limit=max_samples,
                                         on_limit=lambda: _rows_error("records", max_samples))
        dropped = 0  # record rows let go: see below
        for chunk, final in _with_last(tachyon_file.iter_region(chunk_size)):
            decoder.decode_into(chunk, final=final, samples=samples, records=records)
            if aggregate:
                # (a record row points at its first sample, which counts do not keep: the
                # rows go as they come, so that memory grows with the distinct rows only)
                records.size = 0
            else:
                _check_rows(decoder.total_samples, dropped + records.size, max_samples)
                if decoder.total_samples > tachyon_file.sample_count:
                    # the read can only fail now (with the count mismatch, a later record's
                    # error, or the limit): the rows are let go, not grown up to max_samples
                    dropped += records.size
                    records.size = 0
                    samples.size = 0
            if progress is not None:
                progress(decoder.total_samples, tachyon_file.sample_count)
        _check_sample_count(tachyon_file, decoder.total_samples)
        return _profile(tachyon_file, decoder, Samples(**samples.finish()),
                        None if aggregate else Records(**records.finish()))


def iter_batches(
    source: Source | TachyonFile,
    *,
    samples_per_batch: int = 1_000_000,
    threads: bool | None = None,
    max_region_size: int = MAX_DECOMPRESSED_SIZE,
    progress: Callable[[int, int], object] | None = None,
    engine: str | None = None,
) -> Iterator[Profile]:
    """The profile as successive batches of at most ``samples_per_batch`` samples.

    Every batch is a :class:`Profile` whose ``samples`` (and ``records``, with
    ``first_sample`` relative to the batch) cover the next stretch of the file, and whose
    ``threads`` and ``stacks`` are the tables seen so far: stack and thread ids stay valid
    in later batches, so results can be aggregated batch by batch. Memory is bounded by
    the batch size and the tables, not by the file. The sample-count check happens after
    the last batch. When the data is malformed, the samples decoded before the bad record
    come as a last batch, then the :class:`~tachyon_format.FormatError` is raised (as
    CPython's ``replay()`` delivers them before it fails). *source*, *threads* and
    *max_region_size*, *progress* and *engine* as for :func:`read`. A batch also ends at
    ``samples_per_batch`` records (a region may hold records without samples)."""
    if samples_per_batch < 1:
        raise ValueError("samples_per_batch must be positive")
    with _opened(source, max_region_size) as tachyon_file, _placed(tachyon_file):
        decoder = _decoder(tachyon_file, threads, False, engine)
        # a sample takes at least 2 region bytes, so a chunk never yields more than this
        chunk_size = max(64 << 10, 2 * samples_per_batch)
        pending = GrowingColumns.samples(samples_per_batch)
        pending_records = GrowingColumns.records()
        for chunk, final in _with_last(tachyon_file.iter_region(chunk_size)):
            try:
                decoder.decode_into(chunk, final=final, samples=pending,
                                    records=pending_records)
            except FormatError:
                if pending.size or pending_records.size:
                    yield _profile(tachyon_file, decoder, *_take_all(pending, pending_records))
                raise
            if progress is not None:
                progress(decoder.total_samples, tachyon_file.sample_count)
            while pending.size >= samples_per_batch:
                samples, records = _take(pending, pending_records, samples_per_batch)
                yield _profile(tachyon_file, decoder, samples, records)
            if pending_records.size >= samples_per_batch:
                yield _profile(tachyon_file, decoder, *_take_all(pending, pending_records))
        if pending.size or pending_records.size:  # (a REPEAT record may hold no sample)
            yield _profile(tachyon_file, decoder, *_take_all(pending, pending_records))
        _check_sample_count(tachyon_file, decoder.total_samples)


# -- helpers ---------------------------------------------------------------------------------


@contextlib.contextmanager
def _opened(source: Source | TachyonFile, max_region_size: int,
            keep_region: bool = False) -> Iterator[TachyonFile]:
    """An open file for *source*: opened (and closed) here, or the caller's own."""
    if isinstance(source, TachyonFile):
        yield source
        return
    with open_file(source, max_region_size=max_region_size,
                   keep_region=keep_region) as tachyon_file:
        yield tachyon_file


@contextlib.contextmanager
def _placed(tachyon_file: TachyonFile) -> Iterator[None]:
    """Errors about the sample region leave told where it lies in the file."""
    try:
        yield
    except FormatError as exc:
        exc.in_file(tachyon_file.region_span[0], tachyon_file.compressed)
        raise


def _decoder(tachyon_file: TachyonFile, threads: bool | None, aggregate: bool, engine: str | None):
    assert tachyon_file.frames is not None
    return engines.new_decoder(
        engine=engine,
        aggregate=aggregate,
        order=tachyon_file.order,
        start_time_us=tachyon_file.start_time_us,
        thread_count=tachyon_file.thread_count,
        frame_count=len(tachyon_file.frames),
        frame_string_ok=frame_strings_ok(tachyon_file.frames, len(tachyon_file.strings or ())),
        threads=threads,
        region_size=tachyon_file.region_size(),
    )


def _with_last(chunks) -> Iterator[tuple[Any, bool]]:
    """Pair every chunk with whether it is the last one; an empty region is one empty chunk,
    so the decoder always sees a final call."""
    previous = None
    for chunk in chunks:
        if previous is not None:
            yield previous, False
        previous = chunk
    yield (b"" if previous is None else previous), True


def _sample_capacity(tachyon_file: TachyonFile, max_samples: int) -> int:
    """Rows to reserve: the header's count if the region could hold that many (every
    sample takes at least 2 bytes) and it is within the limit; a header that claims more
    than the region holds is wrong, and the columns grow as samples come instead."""
    region_bound = tachyon_file.region_size() // spec.MIN_REPEAT_ENTRY_SIZE
    if tachyon_file.sample_count > region_bound:
        return min(region_bound, 1 << 16)
    return int(min(tachyon_file.sample_count, max_samples))


def _check_declared_samples(tachyon_file: TachyonFile, max_samples: int) -> None:
    """A header count above the limit that the region could hold: refused before decoding
    (a smaller region cannot hold them: the count check will tell)."""
    declared = tachyon_file.sample_count
    if max_samples < declared <= tachyon_file.region_size() // spec.MIN_REPEAT_ENTRY_SIZE:
        offset, path = SAMPLE_COUNT
        raise _limit_error(f"The header declares {declared} samples", max_samples,
                           offset=offset, path=path)


def _check_rows(samples: int, records: int, max_samples: int) -> None:
    if samples > max_samples:
        raise _rows_error("samples", max_samples)
    if records > max_samples:
        raise _rows_error("records", max_samples)


def _rows_error(what: str, max_samples: int) -> LimitError:
    return _limit_error(f"The region holds more than {max_samples} {what}", max_samples,
                        region=True)


def _limit_error(what: str, max_samples: int, **where) -> LimitError:
    return LimitError(
        f"{what}, more than read() takes at once (max_samples={max_samples}, some"
        f" {max_samples * ROW_BYTES >> 20} MiB of columns): pass a larger max_samples to read"
        " them all, or go through them in bounded memory with iter_batches()",
        limit="max_samples", value=max_samples, **where)


SAMPLE_COUNT = header_field("sample_count")
ROW_BYTES = 17
"""Bytes of columns per sample row: timestamp 8, thread 4, stack 4, status 1."""


def _check_sample_count(tachyon_file: TachyonFile, decoded: int) -> None:
    if decoded != tachyon_file.sample_count:
        offset, path = SAMPLE_COUNT
        raise FormatError(
            f"Sample count mismatch: header declares {tachyon_file.sample_count} samples but replay"
            f" decoded {decoded}",
            offset=offset,
            path=path,
        )


def _profile(tachyon_file: TachyonFile, decoder, samples: Samples, records: Records | None):
    interpreter_id, thread_id = decoder.threads
    assert tachyon_file.frames is not None and tachyon_file.strings is not None
    frames: Frames = tachyon_file.frames
    info = tachyon_file.info()
    return Profile(
        strings=tachyon_file.strings,
        frames=frames,
        stacks=Stacks(frame=decoder.stack_frame, parent=decoder.stack_parent),
        threads=Threads(interpreter_id=interpreter_id, thread_id=thread_id),
        samples=samples,
        meta=meta_of(info),
        extras={EXTRAS_KEY: TachyonFacts(info=info, records=records)},
    )


_MODE_NAMES = {mode.value: mode.name.lower() for mode in spec.ProfilingMode}


def meta_of(info: dict) -> Meta:
    """The format-neutral facts of a Tachyon file: one sample stands for one sampling
    interval of the profiler's mode (``wall``, ``cpu``, ...; ``wall`` when unknown), in
    nanoseconds; the duration from the statistics block. The start is on CPython's monotonic
    clock, not a wall-clock time, so ``time_ns`` stays unknown."""
    duration = info.get("duration_sec")
    return Meta(
        period_type=ValueType(_MODE_NAMES.get(info.get("mode"), "wall"), "nanoseconds"),
        period=int(info["sample_interval_us"]) * 1000,
        duration_ns=None if duration is None else _nanoseconds(duration),
    )


def _nanoseconds(seconds: float) -> int:
    """*seconds* (finite, as the statistics block's rules require) in whole nanoseconds,
    exactly even where ``seconds * 1e9`` overflows a float (above about 1.8e299 s)."""
    ns = seconds * 1e9
    if ns != float("inf"):
        return round(ns)
    from fractions import Fraction

    return round(Fraction(seconds) * 10**9)


def _take(
    pending: GrowingColumns, pending_records: GrowingColumns, n: int
) -> tuple[Samples, Records]:
    """Split off the first ``n`` pending samples and the records that start among them."""
    samples = pending.take(n)
    taken = len(samples["stack"])
    first = pending_records.view("first_sample")
    n_records = int(np.searchsorted(first, taken, side="left"))
    records = pending_records.take(n_records)
    pending_records.shift("first_sample", taken)
    return Samples(**samples), Records(**records)


def _take_all(pending: GrowingColumns, pending_records: GrowingColumns) -> tuple[Samples, Records]:
    """Every pending sample and record, those after the last sample included."""
    return Samples(**pending.take(pending.size)), Records(**pending_records.take(
        pending_records.size))


def read_aggregated(source: Source | TachyonFile, **options) -> Profile:
    """:func:`read` with ``aggregate=True`` (the registry's ``read_aggregated`` verb)."""
    return read(source, aggregate=True, **options)
