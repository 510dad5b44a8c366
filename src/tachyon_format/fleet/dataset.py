"""A fleet's profiles as one dataset of Delta Lake tables (layout: :mod:`.layout`,
docs/fleet.md).

:func:`add` adds profiles one file at a time, in memory bounded by one file: a Tachyon
file is decoded in batches (``tachyon_format.iter_batches``) and counted per (stack, thread,
status) as it goes; other formats are read whole (``read(..., aggregate=True)`` unless the
timestamps are kept). Each file is one write: its rows appended under a new ``write_id``,
then its ``profiles`` row merged in, keyed by the file's content id, so that a writer killed
at any moment, a re-run, and writers running at once leave each file counted once.
:func:`profiles` lists what a dataset holds, :func:`load_counts` reads one profile's rows
back as a :class:`~.partials.StackCounts` (the unit of work of the fleet-wide aggregations in
:mod:`.cluster`), :func:`summary` says what is in it, :func:`arrow` gives a table to
DuckDB or any Arrow reader.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.dataset as pads

import tachyon_format
from tachyon_format.analysis.merge import pid_of
from tachyon_format.errors import FormatError
from tachyon_format.model import SAMPLES_COUNT, Profile, Samples
from tachyon_format.model.aggregate import group_count

from . import delta, layout, storage
from .ids import frame_ids, stack_ids, string_ids
from .partials import StackCounts
from .tables import dictionary_tables, sample_rows, stack_counts, stamped

COMPACT_ROWS = 1 << 22
"""Counted rows gathered from batches before they are grouped again (bounds the memory of a
file with many batches)."""


@dataclass(frozen=True)
class Added:
    """One file :func:`add` handled: its ``profile_id``, partition, sample count, and
    whether it was already in the dataset (then nothing was written)."""

    source: str
    profile_id: str
    partition: str
    num_samples: int
    skipped: bool = False


def open_manifest(location: str | os.PathLike,
                  partition_by: Sequence[str] | None = None) -> layout.Manifest:
    """The manifest of the dataset at *location*, written first if there is none (with
    *partition_by*, default ``date, service``); ValueError if *partition_by* is given and
    differs from the existing dataset's."""
    fs, root = storage.filesystem(location)
    path = storage.join(root, layout.MANIFEST)
    if fs.exists(path):
        with fs.open(path, "rb") as f:
            manifest = layout.Manifest.from_json(f.read().decode("utf-8"))
        if partition_by is not None and tuple(partition_by) != manifest.partition_by:
            raise ValueError(f"the dataset is partitioned by {', '.join(manifest.partition_by)}"
                             f", not {', '.join(partition_by)}")
        return manifest
    manifest = layout.Manifest(tuple(layout.check_key(k) for k in (
        partition_by if partition_by is not None else layout.DEFAULT_PARTITION_BY)))
    fs.makedirs(root, exist_ok=True)
    # written whole under another name, then renamed: a reader (or a writer starting at the
    # same moment) sees no manifest or all of one, never a part
    partial = f"{path}.{uuid.uuid4().hex}.partial"
    with fs.open(partial, "wb") as f:
        f.write(manifest.to_json().encode("utf-8"))
    fs.mv(partial, path)
    return open_manifest(location, partition_by)  # (the one that won, if two were written)


def create_tables(location: str | os.PathLike, manifest: layout.Manifest) -> None:
    """The dataset's Delta tables, created empty where missing (before any write, so that
    writes only ever append to, or merge into, a table)."""
    for table in ("profiles", *layout.PARTS):
        delta.create(location, table, layout.stored(table, manifest.partition_by),
                     ["date"] if table == "samples" else None)


def add(location: str | os.PathLike, files: Iterable[str | os.PathLike], *,
        labels: Mapping[str, str] | None = None, timestamps: bool = False,
        partition_by: Sequence[str] | None = None, format: str | None = None,
        samples_per_batch: int = 1_000_000) -> list[Added]:
    """Add every file of *files* (paths or URLs, any format the library reads) to the
    dataset at *location* (created if new), one at a time. *labels* (e.g. ``service``,
    ``deploy``, ``host``) go with every file and choose its partition (``date`` defaults to
    the UTC day of the profile's start, else :data:`~.layout.UNKNOWN`). ``timestamps=True``
    writes one row per sample with its time where the format has one, instead of one row
    per (stack, thread, status). A file already in the dataset (same bytes) is skipped; of
    writers adding one file at the same moment, one adds it and the others skip it."""
    manifest = open_manifest(location, partition_by)
    create_tables(location, manifest)
    present = set(profiles(location).column("profile_id").to_pylist())
    added = []
    for file in storage.expand(files):
        try:
            outcome = add_file(location, file, manifest=manifest, labels=labels or {},
                               timestamps=timestamps, format=format, present=present,
                               samples_per_batch=samples_per_batch)
        except FormatError as exc:  # (which of the files; a note keeps the message as is)
            exc.add_note(f"while adding {storage.display_name(file)}")
            raise
        present.add(outcome.profile_id)
        added.append(outcome)
    return added


def add_file(location: str | os.PathLike, file: str | os.PathLike, *,
             manifest: layout.Manifest, labels: Mapping[str, str], timestamps: bool = False,
             format: str | None = None, present: set[str] | frozenset = frozenset(),
             samples_per_batch: int = 1_000_000) -> Added:
    """Add one file (see :func:`add`): its rows appended under a new write id, then its
    ``profiles`` row merged in (the commit); another writer's row for the same file first
    makes this a skip, and the rows this one appended are deleted again."""
    source = storage.read_source(file)
    name = storage.display_name(file)
    profile_id = content_id(source)
    if profile_id in present:
        return Added(name, profile_id, "", 0, skipped=True)
    write_id = uuid.uuid4().hex
    committed = False
    try:
        last, counts, num_rows = _append_samples(location, source, format, timestamps,
                                                 samples_per_batch, profile_id, write_id)
        for table, rows in dictionary_tables(counts).items():
            delta.append(location, table, lambda t=table, r=rows: stamped(t, r, profile_id,
                                                                         write_id))
        keys = _partition_labels(labels, last)
        partition = layout.partition_dir(manifest, keys)
        row = _profile_row(profile_id, name, source, format, labels, last, counts, num_rows)
        committed = delta.insert_new(location, "profiles", _with_keys(
            row, write_id, manifest, keys), "profile_id")
    finally:
        _forget(location, profile_id, write_id, committed)
    if not committed:
        return Added(name, profile_id, "", 0, skipped=True)
    return Added(name, profile_id, partition, counts.num_samples)


def _forget(location, profile_id: str, write_id: str, committed: bool) -> None:
    """Delete the rows no ``profiles`` row will name: this write's if it did not commit,
    else those of earlier writes of the file that did not (killed half-way). Only tidying:
    readers leave such rows out; a failure here (another writer's commits kept conflicting)
    leaves them for the next write of the file."""
    which = (f"profile_id = '{profile_id}' AND write_id != '{write_id}'" if committed
             else f"write_id = '{write_id}'")
    for table in layout.PARTS:
        try:
            delta.delete(location, table, which)
        except Exception:  # noqa: BLE001 (see above: what is left is not read)
            return


def _append_samples(location, source, format: str | None, timestamps: bool,
                    samples_per_batch: int, profile_id: str,
                    write_id: str) -> tuple[Profile, StackCounts, int]:
    """Count the file's samples batch by batch and append its ``samples`` rows (with
    *timestamps*, one per sample, streamed to the table batch by batch as they are decoded,
    and decoded again if the commit must be made again); the last batch, the counts and the
    number of rows."""
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
    if not timestamps:
        num_rows = counts.counts["count"].size
        rows = stamped("samples", sample_rows(profile_id, counts.counts), profile_id, write_id,
                       _start_day(seen[0]))
        delta.append(location, "samples", lambda: rows)
    return seen[0], counts, num_rows


def _kept(batches: Iterator[pa.RecordBatch],
          failed: list[BaseException]) -> Iterator[pa.RecordBatch]:
    """*batches*, keeping the exception that ends them in *failed* (delta-rs reports it as
    its own error)."""
    try:
        yield from batches
    except BaseException as exc:
        failed.append(exc)
        raise


def _with_keys(row: pa.Table, write_id: str, manifest: layout.Manifest,
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


def _partition_labels(labels: Mapping[str, str], profile: Profile) -> dict[str, str]:
    """*labels*, with ``date`` (UTC) from the profile's start when not given (never the day
    it is added: a re-run on another day must find the same partition)."""
    return {"date": _start_day(profile), **labels}


def _profile_row(profile_id: str, name: str, source, format: str | None,
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


# -- reading ------------------------------------------------------------------------------------


def profiles(location: str | os.PathLike, where: Mapping[str, str] | None = None) -> pa.Table:
    """The ``profiles`` table (with its ``write_id``, a column per partition key and the
    ``partition`` they make), only the rows whose partition values or labels equal
    *where*'s. FormatError if the table is damaged."""
    manifest = open_existing(location)
    table = delta.read(location, "profiles", layout.stored("profiles", manifest.partition_by))
    table = table.sort_by([("profile_id", "ascending")])
    parts = [layout.partition_dir(manifest, dict(zip(manifest.partition_by, values,
                                                     strict=True)))
             for values in zip(*(table.column(k).to_pylist() for k in manifest.partition_by),
                               strict=True)] if manifest.partition_by else [""] * len(table)
    table = table.append_column("partition", pa.array(parts, pa.string()))
    if where:
        keep = [_matches(row, where, manifest.partition_by) for row in table.select(
            ["labels", *manifest.partition_by]).to_pylist()]
        table = table.filter(pa.array(keep, pa.bool_()))
    return table


def _matches(row: dict, where: Mapping[str, str], keys: Sequence[str]) -> bool:
    labels = dict(row["labels"] or [])
    for key, value in where.items():
        have = row[key] if key in keys else labels.get(key)
        if have != value:
            return False
    return True


def open_existing(location: str | os.PathLike) -> layout.Manifest:
    """The manifest of an existing dataset; ValueError if *location* holds none,
    FormatError if it is damaged or of another version."""
    fs, root = storage.filesystem(location)
    path = storage.join(root, layout.MANIFEST)
    if not fs.exists(path):
        raise ValueError(f"{location}: not a profile dataset (no {layout.MANIFEST})")
    with fs.open(path, "rb") as f:
        return layout.Manifest.from_json(f.read().decode("utf-8", "replace"))


def load_counts(location: str | os.PathLike, profile_id: str, write_id: str) -> StackCounts:
    """The counts and dictionaries of one profile of the dataset: the rows of its write
    *write_id* (the one its ``profiles`` row names)."""
    tables = {table: read_write(location, table, profile_id, write_id)
              for table in layout.PARTS}
    return stack_counts(**tables)


def read_write(location: str | os.PathLike, table: str, profile_id: str,
               write_id: str) -> pa.Table:
    """The rows of *table* that the write *write_id* of the profile *profile_id* appended
    (read from the files whose statistics say they may hold the profile, not all)."""
    for value in (profile_id, write_id):  # (they go into a predicate)
        if not re.fullmatch(r"[0-9a-f]{1,64}", value):
            raise ValueError(f"{value!r} is not a profile or write id (hex digits)")
    which = (pads.field("profile_id") == profile_id) & (pads.field("write_id") == write_id)
    return delta.read(location, table, layout.TABLES[table], which,
                      files=f"profile_id = '{profile_id}'")


def arrow(location: str | os.PathLike, table: str) -> pads.Dataset:
    """The current version of *table* (``profiles``, ``samples``, ``stacks``, ``frames`` or
    ``strings``) as an Arrow dataset, read lazily (DuckDB, Polars, pyarrow). Its rows
    include those of writes no ``profiles`` row names: keep the rows whose
    ``(profile_id, write_id)`` is in ``profiles``."""
    manifest = open_existing(location)
    return delta.scan(location, table, layout.stored(table, manifest.partition_by))


def summary(location: str | os.PathLike) -> dict[str, Any]:
    """What the dataset holds: layout version, partition keys, profiles and samples, per
    partition and per format."""
    manifest = open_existing(location)
    table = profiles(location)
    rows = table.select(["partition", "format", "num_samples", "num_rows"]).to_pylist()
    per_partition: dict[str, dict[str, int]] = {}
    per_format: dict[str, int] = {}
    for row in rows:
        part = per_partition.setdefault(row["partition"], {"profiles": 0, "samples": 0})
        part["profiles"] += 1
        part["samples"] += row["num_samples"]
        per_format[row["format"] or "?"] = per_format.get(row["format"] or "?", 0) + 1
    return {"version": manifest.version, "partition_by": list(manifest.partition_by),
            "profiles": len(rows), "samples": sum(r["num_samples"] for r in rows),
            "rows": sum(r["num_rows"] for r in rows), "partitions": per_partition,
            "formats": per_format}
