"""The in-memory profile: equal-length numpy columns, no per-sample Python objects.

The model knows no file format. Readers of every format fill it, writers and renderers consume
it; what only one format has (CPython's ``get_info()`` dict, a Tachyon file's record table,
pprof's comments) travels in :attr:`Profile.extras` under the format's name. pandas and pyarrow
are reached only through :meth:`Profile.samples_df`, :meth:`Profile.frames_df` and
:meth:`Profile.to_arrow` (optional extras).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np
import numpy.typing as npt

from .stacks import Stacks
from .strings import Strings


class _Columns:
    """Equal-length numpy columns as dataclass fields; a field left ``None`` is absent."""

    def columns(self) -> dict[str, np.ndarray]:
        out = {}
        for f in fields(self):  # type: ignore[arg-type]
            value = getattr(self, f.name)
            if value is not None:
                out[f.name] = value
        return out

    def __len__(self) -> int:
        return len(next(iter(self.columns().values())))

    @property
    def nbytes(self) -> int:
        """Bytes held by the columns."""
        return sum(column.nbytes for column in self.columns().values())


@dataclass(frozen=True)
class Frames(_Columns):
    """The frame table: one row per (function, location) a stack can hold.

    ``filename`` and ``funcname`` are rows of :attr:`Profile.strings`. Positions are -1 when
    unknown, as in CPython's reader: ``end_lineno`` / ``end_column`` are -1 when ``lineno`` /
    ``column`` are, and ``lineno == -1`` means "no location" (synthetic frames such as
    ``<native>`` or ``<GC>``). ``opcode`` is a CPython 3.15 opcode number
    (:func:`tachyon_format.opcode_name`), -1 if not captured. Formats of native code give a
    frame an ``address`` and the row of its ``mapping`` (:class:`Mappings`); others leave
    both ``None``. Rows need not be unique (docs/format/frames.md#frame-deduplication)."""

    filename: npt.NDArray[np.uint32]
    funcname: npt.NDArray[np.uint32]
    lineno: npt.NDArray[np.int32]
    end_lineno: npt.NDArray[np.int32]
    column: npt.NDArray[np.int32]
    end_column: npt.NDArray[np.int32]
    opcode: npt.NDArray[np.int16]
    address: npt.NDArray[np.uint64] | None = None
    mapping: npt.NDArray[np.int32] | None = None  # -1 = none


@dataclass(frozen=True)
class Threads(_Columns):
    """One row per (interpreter_id, thread_id) pair, in order of first appearance."""

    interpreter_id: npt.NDArray[np.uint32]
    thread_id: npt.NDArray[np.uint64]

    @classmethod
    def empty(cls) -> Threads:
        """A table of no threads."""
        return cls(np.zeros(0, np.uint32), np.zeros(0, np.uint64))


@dataclass(frozen=True)
class Mappings(_Columns):
    """Memory mappings of native code (pprof's ``Mapping``, gperftools' map text): addresses
    ``start <= a < limit`` come from ``filename`` at file ``offset``. Strings are rows of
    :attr:`Profile.strings`."""

    start: npt.NDArray[np.uint64]
    limit: npt.NDArray[np.uint64]
    offset: npt.NDArray[np.uint64]
    filename: npt.NDArray[np.uint32]
    build_id: npt.NDArray[np.uint32]

    @classmethod
    def empty(cls) -> Mappings:
        """A table of no mappings (what formats without native code have)."""
        return cls(np.zeros(0, np.uint64), np.zeros(0, np.uint64), np.zeros(0, np.uint64),
                   np.zeros(0, np.uint32), np.zeros(0, np.uint32))


@dataclass(frozen=True)
class Samples(_Columns):
    """One row per sample, in the order the file gives them.

    ``stack`` is a stack id (a node of :attr:`Profile.stacks`, -1 for the empty stack) and
    ``thread`` a row of :attr:`Profile.threads` (-1 when the format has no threads). Formats
    with a clock give ``timestamp_us`` (the profile's own clock: for Tachyon CPython's
    ``time.monotonic()`` in microseconds, mod 2**64) and thread ``status`` bits
    (:class:`tachyon_format.ThreadStatus`). ``values`` holds one column per
    :attr:`Meta.sample_types` (pprof values, gperftools counts); ``None`` means every sample
    counts once (Tachyon): see :meth:`Profile.weights`."""

    stack: npt.NDArray[np.int32]
    thread: npt.NDArray[np.int32]
    timestamp_us: npt.NDArray[np.uint64] | None = None
    status: npt.NDArray[np.uint8] | None = None
    values: npt.NDArray[np.int64] | None = None  # shape (samples, len(sample_types))


@dataclass(frozen=True)
class ValueType:
    """What a sample value measures: pprof's ``ValueType`` (e.g. ``samples``/``count``,
    ``cpu``/``nanoseconds``)."""

    type: str
    unit: str


SAMPLES_COUNT = ValueType("samples", "count")
NS_PER_UNIT = {"nanoseconds": 1, "microseconds": 1_000, "milliseconds": 1_000_000,
               "seconds": 1_000_000_000}
"""Nanoseconds in one of each unit of time a value may be in (pprof's unit names)."""


@dataclass
class Meta:
    """Profile-level facts that every format has some of (pprof's names).

    ``sample_types`` name the columns of :attr:`Samples.values` (one ``samples``/``count``
    when every sample counts once); ``default_sample_type`` is the ``type`` of the one viewers
    show first. One sample stands for ``period`` units of ``period_type`` (Tachyon: the
    sampling interval in nanoseconds). ``time_ns`` is the wall-clock start (ns since the Unix
    epoch) when the format records one, ``duration_ns`` the length of the run."""

    sample_types: tuple[ValueType, ...] = (SAMPLES_COUNT,)
    default_sample_type: str | None = None
    period_type: ValueType | None = None
    period: int = 0
    time_ns: int | None = None
    duration_ns: int | None = None

    def sample_type_index(self, sample_type: str | None = None) -> int:
        """Column of :attr:`Samples.values` for *sample_type* (default: the default one,
        else the last, as pprof picks)."""
        name = sample_type or self.default_sample_type
        if name is None:
            return len(self.sample_types) - 1
        for index, value_type in enumerate(self.sample_types):
            if value_type.type == name:
                return index
        names = ", ".join(v.type for v in self.sample_types)
        raise UnknownSampleType(f"no sample type {name!r} (this profile has: {names})")

    def period_ns(self) -> int | None:
        """The sampling period in nanoseconds; None when there is none in a unit of time."""
        unit = self.period_type.unit if self.period_type is not None else None
        if self.period <= 0 or unit not in NS_PER_UNIT:
            return None
        return self.period * NS_PER_UNIT[unit]


class UnknownSampleType(KeyError, ValueError):
    """A sample type the profile does not have (a KeyError of :class:`Meta`, and a ValueError:
    a request that cannot be satisfied)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


@dataclass
class Profile:
    """A whole profile (or, from ``iter_batches``, one batch of samples with the tables so
    far). The parts are described on their classes; ``extras`` maps a format's name to what
    only that format records (for a Tachyon file: ``extras["tachyon"]``, with CPython's
    ``get_info()`` dict and the file's record table)."""

    strings: Strings
    frames: Frames
    stacks: Stacks
    threads: Threads
    samples: Samples
    meta: Meta = field(default_factory=Meta)
    mappings: Mappings = field(default_factory=Mappings.empty)
    extras: dict[str, Any] = field(default_factory=dict)

    def stack_frames(self, stack: int) -> npt.NDArray[np.int32]:
        """Frame rows of one stack id, innermost first."""
        return self.stacks.frames_of(stack)

    def weights(self, sample_type: str | None = None) -> npt.NDArray[np.int64]:
        """Per sample: its value of *sample_type* (see :meth:`Meta.sample_type_index`), or 1
        for every sample when the profile has no values (a read-only view, no memory)."""
        values = self.samples.values
        if values is None:
            index = self.meta.sample_type_index(sample_type)
            if index != 0 or len(self.meta.sample_types) != 1:
                raise KeyError("this profile has no sample values")
            return np.broadcast_to(np.int64(1), (len(self.samples),))
        return values[:, self.meta.sample_type_index(sample_type)]

    def sample_counts(self) -> npt.NDArray[np.int64]:
        """Per row: how many samples it stands for — the values of a ``samples`` sample type
        where the profile has one (pprof and gperftools carry a count beside a time), else
        :meth:`weights`. What outputs that count samples (collapsed stacks, pstats, CPython's
        JSONL) write."""
        if self.samples.values is not None and any(
                v.type == "samples" for v in self.meta.sample_types):
            return self.weights("samples")
        return self.weights()

    def sample_weights(self, sample_type: str | None = None) -> npt.NDArray[np.int64]:
        """Per row: what it counts for in a count of samples, its value of *sample_type*;
        by default how many samples it stands for (:meth:`sample_counts`). What the
        analyses, the call tree and the outputs that count (collapsed stacks, pstats) add
        up."""
        if sample_type is None:
            return np.asarray(self.sample_counts(), dtype=np.int64)
        return np.asarray(self.weights(sample_type), dtype=np.int64)

    @property
    def nbytes(self) -> int:
        """Bytes held by the columns and the string table."""
        parts = [self.frames, self.threads, self.stacks, self.samples, self.mappings,
                 self.strings]
        return sum(part.nbytes for part in parts)

    def sample_columns(self) -> dict[str, np.ndarray]:
        """Per-sample columns with the thread ids joined in (what the table exports hold)."""
        samples = self.samples
        out: dict[str, np.ndarray] = {}
        if samples.timestamp_us is not None:
            out["timestamp_us"] = samples.timestamp_us
        if len(self.threads):
            row = samples.thread
            known = row >= 0
            safe = np.where(known, row, 0)
            out["interpreter_id"] = self.threads.interpreter_id[safe]
            out["thread_id"] = self.threads.thread_id[safe]
            if not known.all():  # (a format may leave some samples without a thread)
                out["thread_known"] = known
        if samples.status is not None:
            out["status"] = samples.status
        out["stack"] = samples.stack
        if samples.values is not None:
            for index, value_type in enumerate(self.meta.sample_types):
                out[f"{value_type.type}_{value_type.unit}"] = samples.values[:, index]
        return out

    # -- optional extras --------------------------------------------------------------------
    def samples_df(self):
        """Samples as a pandas DataFrame (needs pandas)."""
        import pandas as pd

        return pd.DataFrame(self.sample_columns(), copy=False)

    def frames_df(self):
        """Frames as a pandas DataFrame; filename and funcname are categoricals of the text.

        Categories are the distinct texts: two entries whose bytes differ but show as the same
        text (invalid UTF-8 replaced, or a duplicated entry) share one category."""
        import pandas as pd

        texts = np.array(self.strings.texts(), dtype=object)
        categories, code_of_entry = np.unique(texts, return_inverse=True)
        data: dict[str, Any] = {}
        for name, column in self.frames.columns().items():
            if name in ("filename", "funcname"):
                inside = column < len(texts)
                codes = np.full(column.size, -1, np.int64)
                codes[inside] = code_of_entry[column[inside].astype(np.int64)]
                data[name] = pd.Categorical.from_codes(codes, pd.Index(categories))
            else:
                data[name] = column
        return pd.DataFrame(data)

    def to_arrow(self):
        """Samples as a ``pyarrow.Table`` (needs pyarrow)."""
        import pyarrow as pa

        return pa.table(self.sample_columns())
