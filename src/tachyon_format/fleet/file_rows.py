"""One file's rows for the dataset (:mod:`.dataset` commits them): its samples counted
per (stack, thread, status) batch by batch as they are decoded (or, with timestamps, one row
per sample, streamed to the table), its ``profiles`` row, and its content id."""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Iterator, Mapping
from dataclasses import replace
from typing import Any

import numpy as np
import pyarrow as pa

import tachyon_format
from tachyon_format.analysis.merge import pid_of
from tachyon_format.errors import FormatError
from tachyon_format.model import SAMPLES_COUNT, Profile, Samples
from tachyon_format.model.aggregate import group_count

from . import delta, layout
from .ids import frame_ids, stack_ids, string_ids
from .partials import StackCounts
from .tables import sample_rows, stamped

COMPACT_ROWS = 1 << 22
"""Counted rows gathered from batches before they are grouped again (bounds the memory of a
file with many batches)."""


def count_samples(location, source, format: str | None, timestamps: bool,
                   samples_per_batch: int, profile_id: str, write_id: str,
                   ) -> tuple[Profile, StackCounts, int, pa.Table | None]:
    """Count the file's samples batch by batch: the last batch, the counts, the number of
    ``samples`` rows and the rows (with *timestamps*, one row per sample, appended to the
    table already, streamed batch by batch as they are decoded, and decoded again if the
    commit must be made again; then no rows are returned)."""
    pending: list[dict[str, np.ndarray]] = []
    seen: list[Profile] = []
    num_rows = 0

    def timeline() -> Iterator[pa.RecordBatch]:
        nonlocal num_rows
        pending.clear()
        seen.clear()
        num_rows = 0
        ids_for: tuple[int, np.ndarray] | None = None
        for batch in _batches(source, format, timestamps, samples_per_batch):
            seen[:] = [batch]
            pending.append(_count_columns(batch))
            if sum(c["count"].size for c in pending) > COMPACT_ROWS:
                pending[:] = [_regroup(pending)]
            if timestamps:
                ids_for = _ids(batch, ids_for)
                rows = _timeline_rows(profile_id, batch, ids_for[1])
                num_rows += len(rows)
                yield from stamped("samples", rows, profile_id, write_id,
                                    _start_day(batch)).to_batches()

    if timestamps:
        failed: list[BaseException] = []
        try:
            delta.append(location, "samples", lambda: pa.RecordBatchReader.from_batches(
                layout.stored("samples"), _kept(timeline(), failed)))
        except Exception:
            if failed:  # (the file's own error, not delta-rs' report of it)
                raise failed[0] from None
            raise
    else:
        for _ in timeline():
            pass
    if not seen:  # (a file without samples gives no batch: its tables alone)
        seen.append(tachyon_format.read(source, format=format, aggregate=True))
        pending.append(_count_columns(seen[0]))
    counts = _stack_counts(seen[0], _regroup(pending))
    if timestamps:
        return seen[0], counts, num_rows, None
    rows = stamped("samples", sample_rows(profile_id, counts.counts), profile_id, write_id,
                   _start_day(seen[0]))
    return seen[0], counts, len(rows), rows


def _kept(batches: Iterator[pa.RecordBatch],
          failed: list[BaseException]) -> Iterator[pa.RecordBatch]:
    """*batches*, keeping the exception that ends them in *failed* (delta-rs reports it as
    its own error)."""
    try:
        yield from batches
    except BaseException as exc:
        failed.append(exc)
        raise


def with_keys(row: pa.Table, write_id: str, manifest: layout.Manifest,
               keys: Mapping[str, str]) -> pa.Table:
    """The ``profiles`` row as stored: with its write id and partition values."""
    out = row.append_column(layout.WRITE_ID, pa.array([write_id], pa.string()))
    for key in manifest.partition_by:
        out = out.append_column(key, pa.array([keys.get(key, layout.UNKNOWN)], pa.string()))
    return out


def _start_day(profile: Profile) -> str:
    return layout.day_of(profile.meta.time_ns)


def content_id(source: str | os.PathLike | bytes) -> str:
    """The profile id: 16 hex digits of BLAKE2b-64 over the file's bytes (read in blocks)."""
    digest = hashlib.blake2b(digest_size=8)
    if isinstance(source, bytes | bytearray | memoryview):
        digest.update(source)
    else:
        with open(source, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


def _batches(source, format: str | None, timestamps: bool,
             samples_per_batch: int) -> Iterator[Profile]:
    """The profile in batches: a Tachyon file decoded a batch at a time, others read whole
    (as per-stack counts unless the timestamps are kept)."""
    name = format or tachyon_format.sniff(source)
    if name == "tachyon":
        yield from tachyon_format.iter_batches(source, format="tachyon",
                                               samples_per_batch=samples_per_batch)
    else:
        yield tachyon_format.read(source, format=format, aggregate=not timestamps)


def _count_columns(batch: Profile) -> dict[str, np.ndarray]:
    """One batch counted per (stack row, thread row, status)."""
    samples = batch.samples
    weight = np.asarray(batch.sample_counts(), np.int64)
    status = (samples.status.astype(np.int16) if samples.status is not None
              else np.full(len(samples), -1, np.int16))
    grouped, count = group_count({"stack": samples.stack.astype(np.int64),
                                  "thread": samples.thread.astype(np.int64),
                                  "status": status}, weight)
    return {**grouped, "count": count}


def _regroup(parts: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    joined = {k: np.concatenate([p[k] for p in parts]) for k in ("stack", "thread", "status")}
    grouped, count = group_count(joined, np.concatenate([p["count"] for p in parts]))
    return {**grouped, "count": count}


def _stack_counts(last: Profile, counted: dict[str, np.ndarray]) -> StackCounts:
    """The counts of the whole file: the last batch's tables (which hold every stack and
    thread seen) with the counted rows as its samples."""
    status = counted["status"]
    samples = Samples(stack=counted["stack"].astype(np.int32),
                      thread=counted["thread"].astype(np.int32),
                      status=None if (status < 0).any() else status.astype(np.uint8),
                      values=counted["count"][:, None])
    return StackCounts.of_profile(replace(last, samples=samples,
                                          meta=replace(last.meta, sample_types=(
                                              SAMPLES_COUNT,), default_sample_type=None)))


def _ids(batch: Profile, done: tuple[int, np.ndarray] | None) -> tuple[int, np.ndarray]:
    """The stack ids of *batch*'s tree, computed again only when the tree has grown."""
    if done is not None and done[0] == len(batch.stacks):
        return done
    frames = frame_ids(batch, string_ids(batch.strings.raws()))
    return len(batch.stacks), stack_ids(batch.stacks, frames)


def _timeline_rows(profile_id: str, batch: Profile, ids: np.ndarray) -> pa.Table:
    """One ``samples`` row per sample of *batch*, with its timestamp where it has one."""
    samples = batch.samples
    keep = samples.stack >= 0
    thread = samples.thread.astype(np.int64)[keep]
    known = (thread >= 0) & (thread < len(batch.threads))
    safe = np.where(known, thread, 0)
    threads = batch.threads
    columns = {
        "stack_id": ids[samples.stack[keep].astype(np.int64)],
        "interpreter_id": (np.where(known, threads.interpreter_id[safe].astype(np.int64), -1)
                           if len(threads) else np.full(thread.size, -1, np.int64)),
        "thread_id": (np.where(known, threads.thread_id[safe], 0).astype(np.uint64)
                      if len(threads) else np.zeros(thread.size, np.uint64)),
        "status": (samples.status[keep].astype(np.int16) if samples.status is not None
                   else np.full(thread.size, -1, np.int16)),
        "count": np.asarray(batch.sample_counts(), np.int64)[keep],
    }
    stamps = samples.timestamp_us[keep] if samples.timestamp_us is not None else None
    return sample_rows(profile_id, columns, stamps)


def partition_labels(labels: Mapping[str, str], profile: Profile) -> dict[str, str]:
    """*labels*, with ``date`` (UTC) from the profile's start when not given (never the day
    it is added: a re-run on another day must find the same partition)."""
    return {"date": _start_day(profile), **labels}


def profile_row(profile_id: str, name: str, source, format: str | None,
                 labels: Mapping[str, str], profile: Profile, counts: StackCounts,
                 num_rows: int) -> pa.Table:
    meta = profile.meta
    try:
        facts: Any = tachyon_format.info(profile)
    except ValueError:
        facts = None
    pid = labels.get("pid")
    row = {
        "profile_id": profile_id, "source": name,
        "format": format or tachyon_format.sniff(source) or _format_from_extras(profile),
        "host": labels.get("host"),
        "pid": int(pid) if pid is not None else pid_of(name),
        "labels": list(dict(labels).items()),
        "num_samples": counts.num_samples, "num_rows": num_rows,
        "period_type": (f"{meta.period_type.type}/{meta.period_type.unit}"
                        if meta.period_type is not None else None),
        "period": meta.period, "time_ns": meta.time_ns, "duration_ns": meta.duration_ns,
        "added_ns": time.time_ns(),
        "info": json.dumps(facts, default=str, sort_keys=True) if facts is not None else None,
    }
    for field in ("period", "time_ns", "duration_ns"):  # int64 columns: refused, never cut
        if row[field] is not None and not -(1 << 63) <= row[field] < 1 << 63:
            raise FormatError(f"the dataset's {field} is an int64, and this profile's "
                              f"{row[field]} does not fit", path=f"profiles -> {field}")
    return pa.Table.from_pylist([row], schema=layout.PROFILES)


def _format_from_extras(profile: Profile) -> str | None:
    return next(iter(profile.extras), None)
