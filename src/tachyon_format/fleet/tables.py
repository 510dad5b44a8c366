"""Between the partial results and the dataset: a :class:`~.partials.StackCounts` as the
dataset's ``samples``, ``stacks``, ``frames`` and ``strings`` rows, and back; rows as stored
(:func:`stamped`)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from .ids import ROOT
from .layout import FRAMES, SAMPLES, STACKS, STRINGS, stored
from .partials import COUNT_KEYS, FRAME_COLUMNS, StackCounts


def sample_rows(profile_id: str, columns: dict[str, np.ndarray],
                timestamp_us: np.ndarray | None = None) -> pa.Table:
    """``samples`` rows of one profile from count columns (:data:`~.partials.COUNT_KEYS` +
    ``count``; -1 is unknown and becomes null) and, for rows of one sample each, their
    timestamps."""
    n = columns["count"].size
    interpreter = columns["interpreter_id"]
    no_thread = interpreter < 0
    status = columns["status"]
    return pa.table({
        "profile_id": pa.array(np.full(n, profile_id, object), pa.string()),
        "stack_id": pa.array(columns["stack_id"], pa.int64()),
        "interpreter_id": pa.array(interpreter, pa.int64(), mask=no_thread),
        "thread_id": pa.array(columns["thread_id"], pa.uint64(), mask=no_thread),
        "status": pa.array(status, pa.int16(), mask=status < 0),
        "timestamp_us": (pa.array(timestamp_us, pa.uint64()) if timestamp_us is not None
                         else pa.nulls(n, pa.uint64())),
        "count": pa.array(columns["count"], pa.int64()),
    }, schema=SAMPLES)


def dictionary_tables(counts: StackCounts) -> dict[str, pa.Table]:
    """The ``stacks``, ``frames`` and ``strings`` rows of *counts*' dictionaries."""
    nodes = counts.nodes
    frames = counts.frames
    texts = [raw.decode("utf-8", "replace") for raw in counts.raws]
    raw = [None if text.encode("utf-8") == r else r for text, r in zip(texts, counts.raws,
                                                                       strict=True)]
    return {
        "stacks": pa.table({
            "stack_id": nodes["stack_id"],
            "parent_id": pa.array(nodes["parent_id"], pa.int64(),
                                  mask=nodes["parent_id"] == ROOT),
            "frame_id": nodes["frame_id"], "depth": nodes["depth"].astype(np.int32)},
            schema=STACKS),
        "frames": pa.table({
            **{name: frames[name].astype(FRAMES.field(name).type.to_pandas_dtype())
               for name in ("frame_id", *FRAME_COLUMNS[:-1])},
            "address": pa.array(frames["address"].view(np.uint64), pa.uint64(),
                                mask=frames["address"] == 0)}, schema=FRAMES),
        "strings": pa.table({"string_id": counts.string_id, "text": texts, "raw": raw},
                            schema=STRINGS),
    }


def stack_counts(samples: pa.Table, stacks: pa.Table, frames: pa.Table,
                 strings: pa.Table) -> StackCounts:
    """The :class:`StackCounts` of the tables of one profile (or of several: the rows are
    grouped, and the dictionaries united by id)."""
    columns = {}
    for name in COUNT_KEYS:
        column = samples.column(name)
        fill = 0 if name == "thread_id" else -1
        columns[name] = column.fill_null(fill).to_numpy()
    columns["status"] = columns["status"].astype(np.int16)
    columns["count"] = samples.column("count").to_numpy()
    nodes = {"stack_id": stacks.column("stack_id").to_numpy(),
             "parent_id": stacks.column("parent_id").fill_null(ROOT).to_numpy(),
             "frame_id": stacks.column("frame_id").to_numpy(),
             "depth": stacks.column("depth").to_numpy().astype(np.int64)}
    frame_columns = {name: frames.column(name).to_numpy().astype(np.int64)
                     for name in ("frame_id", *FRAME_COLUMNS[:-1])}
    frame_columns["address"] = frames.column("address").fill_null(0).to_numpy().view(np.int64)
    raws = tuple(r if r is not None else t.encode("utf-8") for t, r in zip(
        strings.column("text").to_pylist(), strings.column("raw").to_pylist(), strict=True))
    part = StackCounts(columns, nodes, frame_columns, strings.column("string_id").to_numpy(),
                       raws)
    return StackCounts.combine([part])


def stamped(table: str, rows: pa.Table, profile_id: str, write_id: str,
             date: str | None = None) -> pa.Table:
    """*rows* with the columns stored in *table*: the profile and write ids (and the date
    partition of ``samples``)."""
    n = len(rows)
    columns = {"profile_id": pa.array(np.full(n, profile_id, object), pa.string()),
               "write_id": pa.array(np.full(n, write_id, object), pa.string()),
               "date": pa.array(np.full(n, date, object), pa.string())}
    schema = stored(table)
    return pa.table([columns[f.name] if f.name in columns else rows.column(f.name)
                     for f in schema], schema=schema)
