"""The in-memory profile: equal-length numpy columns, no per-sample Python objects.

The model knows no file format. Readers fill it, writers and renderers consume it; pandas
and pyarrow are reached only through :meth:`Profile.samples_df`, :meth:`Profile.frames_df`
and :meth:`Profile.to_arrow` (optional extras).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, fields
from typing import Any

import numpy as np


class _Columns:
    """Equal-length numpy columns as dataclass fields."""

    def columns(self) -> dict[str, np.ndarray]:
        return {f.name: getattr(self, f.name) for f in fields(self)}  # type: ignore[arg-type]

    def __len__(self) -> int:
        return len(getattr(self, fields(self)[0].name))  # type: ignore[arg-type]

    @property
    def nbytes(self) -> int:
        return sum(column.nbytes for column in self.columns().values())


@dataclass(frozen=True)
class Frames(_Columns):
    """The frame table. String columns index :attr:`Profile.strings`; -1 means absent.

    Positions follow CPython's reader: ``end_lineno`` / ``end_column`` are -1 when ``lineno`` /
    ``column`` are; ``lineno == -1`` means "no location" (synthetic frames such as ``<native>`` or
    ``<GC>``). Entries need not be unique (docs/format/frames.md#frame-deduplication)."""

    filename: np.ndarray  # uint32
    funcname: np.ndarray  # uint32
    lineno: np.ndarray  # int32
    end_lineno: np.ndarray  # int32
    column: np.ndarray  # int32
    end_column: np.ndarray  # int32
    opcode: np.ndarray  # int16, -1 = none


@dataclass(frozen=True)
class Threads(_Columns):
    """One row per (interpreter_id, thread_id) pair, in order of first appearance."""

    interpreter_id: np.ndarray  # uint32
    thread_id: np.ndarray  # uint64


@dataclass(frozen=True)
class Stacks(_Columns):
    """Call stacks as a prefix tree (Firefox-profiler style).

    Node ``i`` is frame ``frame[i]`` called from node ``parent[i]`` (-1: outermost frame). A
    stack id is the node of its innermost frame, so one id names a whole call stack and
    shared outer parts are stored once."""

    frame: np.ndarray  # int32 row in Frames
    parent: np.ndarray  # int32 node, -1 = root

    def frames_of(self, stack: int) -> np.ndarray:
        """Frame rows of one stack, innermost first (empty for stack -1)."""
        out = []
        frame, parent = self.frame, self.parent
        while stack >= 0:
            out.append(frame[stack])
            stack = parent[stack]
        return np.asarray(out, dtype=np.int32)

    def depth(self) -> np.ndarray:
        """Number of frames of every stack id (parents always precede their children)."""
        depth = np.zeros(len(self.parent), np.int32)
        # nodes are created outermost first, so one forward pass in level order suffices
        for level_nodes in _levels(self.parent):
            has_parent = self.parent[level_nodes] >= 0
            depth[level_nodes] = 1
            depth[level_nodes[has_parent]] += depth[self.parent[level_nodes[has_parent]]]
        return depth


def _levels(parent: np.ndarray) -> Iterator[np.ndarray]:
    """Node ids grouped by tree level, roots first."""
    level = np.flatnonzero(parent < 0)
    children_order = np.argsort(parent, kind="stable")
    sorted_parents = parent[children_order]
    while level.size:
        yield level
        lo = np.searchsorted(sorted_parents, level, side="left")
        hi = np.searchsorted(sorted_parents, level, side="right")
        counts = hi - lo
        if not counts.sum():
            return
        starts = np.repeat(lo, counts)
        offsets = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
        level = children_order[starts + offsets]


@dataclass(frozen=True)
class Samples(_Columns):
    """One row per thread-sample, in file order (the order CPython's replay() delivers)."""

    timestamp_us: np.ndarray  # uint64, absolute per-thread clock
    thread: np.ndarray  # int32 row in Threads
    status: np.ndarray  # uint8 ThreadStatus bits
    stack: np.ndarray  # int32 stack id, -1 = empty stack


@dataclass(frozen=True)
class Records(_Columns):
    """The file's record structure: record ``i`` holds samples
    ``first_sample[i]:first_sample[i + 1]`` (a REPEAT record may hold none)."""

    offset: np.ndarray  # int64 offset of the record in the (decompressed) sample region
    encoding: np.ndarray  # uint8 Encoding
    first_sample: np.ndarray  # int64


@dataclass
class Profile:
    """A whole profile (or, from ``iter_batches``, one batch of samples with the tables so far).

    ``info`` has the keys of CPython's ``BinaryReader.get_info()``; ``strings`` is the string
    table; ``frames``, ``threads``, ``stacks`` and ``samples`` are columns described on their
    classes; ``records`` is the record table of the file the samples came from, if any (it
    lets a writer reproduce the file byte for byte)."""

    info: dict[str, Any]
    strings: Sequence[str]
    frames: Frames
    threads: Threads
    stacks: Stacks
    samples: Samples
    records: Records | None = None

    def stack_frames(self, stack: int) -> np.ndarray:
        """Frame rows of one stack id, innermost first."""
        return self.stacks.frames_of(stack)

    @property
    def nbytes(self) -> int:
        """Bytes held by the numpy columns (strings not counted)."""
        parts = [self.frames, self.threads, self.stacks, self.samples, self.records]
        return sum(part.nbytes for part in parts if part is not None)

    def sample_columns(self) -> dict[str, np.ndarray]:
        """Per-sample columns with the thread ids joined in (what the table exports hold)."""
        thread = self.samples.thread
        return {
            "timestamp_us": self.samples.timestamp_us,
            "interpreter_id": self.threads.interpreter_id[thread],
            "thread_id": self.threads.thread_id[thread],
            "status": self.samples.status,
            "stack": self.samples.stack,
        }

    # -- optional extras --------------------------------------------------------------------
    def samples_df(self):
        """Samples as a pandas DataFrame (needs pandas)."""
        import pandas as pd

        return pd.DataFrame(self.sample_columns(), copy=False)

    def frames_df(self):
        """Frames as a pandas DataFrame; filename and funcname are categoricals."""
        import pandas as pd

        categories = pd.Index(np.asarray(self.strings, dtype=object))
        data: dict[str, Any] = {}
        for name, column in self.frames.columns().items():
            if name in ("filename", "funcname"):
                codes = np.where(column < len(categories), column.astype(np.int64), -1)
                data[name] = pd.Categorical.from_codes(codes, categories)
            else:
                data[name] = column
        return pd.DataFrame(data)

    def to_arrow(self):
        """Samples as a ``pyarrow.Table`` (needs pyarrow)."""
        import pyarrow as pa

        return pa.table(self.sample_columns())
