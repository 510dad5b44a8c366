"""A fleet's profiles as one dataset of Delta Lake tables (layout: :mod:`.layout`,
docs/fleet.md).

:func:`add` adds profiles reading one file at a time (its rows: :mod:`.file_rows`): a
Tachyon file is decoded in batches (``tachyon_format.iter_batches``) and counted per (stack,
thread, status) as it goes; other formats are read whole (``read(..., aggregate=True)``
unless the timestamps are kept). Each file is one write, its rows under a new
``write_id``; the writes of a batch of files are committed together: their rows appended,
one commit per table, then their ``profiles`` rows merged in, keyed by the files' content
ids, so that a writer killed at any moment, a re-run, and writers running at once leave
each file counted once. Which files are there already is looked up by id, in the files of
``profiles`` whose statistics may hold them, so an add costs the same whatever the
dataset's size. :func:`compact` rewrites the many small files of many adds into few.
:func:`profiles` lists what a dataset holds, :func:`load_counts` reads one profile's rows
back as a :class:`~.partials.StackCounts` (the unit of work of :func:`.cluster.profiles_bag`;
the fleet-wide aggregations read the tables' files by parts), :func:`summary` says what is
in it, :func:`arrow` gives a table to DuckDB or any Arrow reader.
"""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import pyarrow as pa
import pyarrow.dataset as pads

from tachyon_format.errors import FormatError

from . import delta, file_rows, layout, storage
from .partials import StackCounts
from .tables import dictionary_tables, stack_counts, stamped

BATCH_FILES = 64
"""Files whose rows :func:`add` commits together, one commit per table: each commit makes
a Parquet file in each table and an entry in its log, which every later reader opens or
replays."""
BATCH_ROWS = 1 << 20
"""Rows after which the files read so far are committed, however few: bounds the memory
that a batch holds."""
BATCH_BYTES = 1 << 26
"""Bytes of files read from URLs (local files are read where they are) after which a batch
is full."""
_READ_ERRORS = (FormatError, ValueError, OSError)
"""What a file that cannot be read raises (reported with its name, the others added)."""


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
        samples_per_batch: int = 1_000_000,
        on_error: Callable[[str, Exception], None] | None = None) -> list[Added]:
    """Add every file of *files* (paths or URLs, any format the library reads) to the
    dataset at *location* (created if new), reading one at a time. *labels* (e.g.
    ``service``, ``deploy``, ``host``) go with every file and choose its partition (``date``
    defaults to the UTC day of the profile's start, else :data:`~.layout.UNKNOWN`).
    ``timestamps=True`` writes one row per sample with its time where the format has one,
    instead of one row per (stack, thread, status). A file already in the dataset (same
    bytes) is skipped; of writers adding one file at the same moment, one adds it and the
    others skip it. Files are committed in batches (:data:`BATCH_FILES`, :data:`BATCH_ROWS`),
    one commit per table for a batch. A file that cannot be read (FormatError, ValueError,
    OSError) is passed, named as given, with its error to *on_error* and left out; without
    *on_error* the error is raised, once the files before it are committed."""
    manifest = open_manifest(location, partition_by)
    create_tables(location, manifest)
    options = {"manifest": manifest, "labels": labels or {}, "timestamps": timestamps,
               "format": format, "samples_per_batch": samples_per_batch}
    added: list[Added] = []
    for batch in _batches_of(storage.expand(files)):
        added += _add_batch(location, batch, on_error, **options)
    return added


_IDS = pa.schema([layout.PROFILES.field("profile_id"), layout.WRITE_ID])


@dataclass(frozen=True)
class _Input:
    """One file of a batch: where it is, what to read it from, its content id (or the
    error that reading it for the id raised)."""

    name: str
    source: str | os.PathLike | bytes
    profile_id: str = ""
    error: Exception | None = None
    given: str = ""  # the file as the caller named it (for its errors)


@dataclass(frozen=True)
class _Write:
    """One file's rows, as stored, waiting for its batch's commit."""

    added: Added
    write_id: str
    parts: Mapping[str, pa.Table]
    row: pa.Table


def _batches_of(files: Iterable[str | os.PathLike]) -> Iterator[list[_Input]]:
    """*files* in batches, each file with its content id (so that a batch asks the dataset
    once which of its files are there)."""
    batch: list[_Input] = []
    held = 0
    for file in files:
        name, given = storage.display_name(file), os.fspath(file)
        try:
            source = storage.read_source(file)
            batch.append(_Input(name, source, file_rows.content_id(source), given=given))
        except _READ_ERRORS as exc:
            batch.append(_Input(name, file, error=exc, given=given))
        held += len(batch[-1].source) if isinstance(batch[-1].source, bytes) else 0
        if len(batch) == BATCH_FILES or held >= BATCH_BYTES:
            yield batch
            batch, held = [], 0
    if batch:
        yield batch


def _add_batch(location: str | os.PathLike, batch: list[_Input],
               on_error: Callable[[str, Exception], None] | None, **options) -> list[Added]:
    """Add the files of *batch* not in the dataset (asked by their ids, a read of the few
    files of ``profiles`` whose statistics may hold them): their rows committed together,
    sooner when they reach :data:`BATCH_ROWS` or a file fails."""
    present = set(delta.lookup(location, "profiles", _IDS, "profile_id", sorted(
        {item.profile_id for item in batch if item.error is None})).column(
            "profile_id").to_pylist())
    outcomes: list[Added | _Write] = []
    pending: list[_Write] = []

    def commit() -> None:
        done = {id(w): a for w, a in zip(pending, _commit(location, pending), strict=True)}
        outcomes[:] = [done.get(id(o), o) for o in outcomes]
        pending.clear()

    for item in batch:
        if item.error is None and item.profile_id in present:
            outcomes.append(Added(item.name, item.profile_id, "", 0, skipped=True))
            continue
        try:
            if item.error is not None:
                raise item.error
            write = _read_file(location, item, **options)
        except _READ_ERRORS as exc:
            if on_error is None:
                commit()
                if isinstance(exc, FormatError):  # (a note keeps the message as it is)
                    exc.add_note(f"while adding {item.given}")
                raise
            on_error(item.given, exc)
            continue
        present.add(item.profile_id)  # (the same bytes twice in one batch: added once)
        outcomes.append(write)
        pending.append(write)
        if sum(len(t) for w in pending for t in w.parts.values()) >= BATCH_ROWS:
            commit()
    commit()
    return [o for o in outcomes if isinstance(o, Added)]


def _read_file(location: str | os.PathLike, item: _Input, *, manifest: layout.Manifest,
               labels: Mapping[str, str], timestamps: bool, format: str | None,
               samples_per_batch: int) -> _Write:
    """One file's rows under a new write id (with *timestamps*, its ``samples`` rows are
    appended already, and deleted again if the file fails)."""
    write_id = uuid.uuid4().hex
    try:
        last, counts, num_rows, samples = file_rows.count_samples(
            location, item.source, format, timestamps, samples_per_batch, item.profile_id,
            write_id)
        parts = {table: stamped(table, rows, item.profile_id, write_id)
                 for table, rows in dictionary_tables(counts).items()}
        if samples is not None:
            parts["samples"] = samples
        keys = file_rows.partition_labels(labels, last)
        partition = layout.partition_dir(manifest, keys)
        row = file_rows.profile_row(item.profile_id, item.name, item.source, format, labels,
                                    last, counts, num_rows)
    except BaseException:
        if timestamps:
            _discard(location, [write_id])
        raise
    return _Write(Added(item.name, item.profile_id, partition, counts.num_samples), write_id,
                  parts, file_rows.with_keys(row, write_id, manifest, keys))


def _commit(location: str | os.PathLike, writes: list[_Write]) -> list[Added]:
    """Commit *writes*: their rows appended, one commit per table, then their ``profiles``
    rows merged in, keyed by the profile id, in one commit (the commit of them all); what
    became of each (a file another writer committed first is a skip, and its rows here are
    deleted again)."""
    if not writes:
        return []
    try:
        by_id = sorted(writes, key=lambda w: w.added.profile_id)  # (row groups: one id range)
        for table in layout.PARTS:
            rows = [w.parts[table] for w in by_id if table in w.parts]
            if rows:
                joined = pa.concat_tables(rows)
                delta.append(location, table, lambda joined=joined: joined)
        inserted = delta.insert_new(location, "profiles",
                                    pa.concat_tables([w.row for w in writes]), "profile_id")
    except BaseException:
        _discard_uncommitted(location, writes)
        raise
    if inserted == len(writes):
        return [w.added for w in writes]
    lost = _discard_uncommitted(location, writes)
    return [replace(w.added, partition="", num_samples=0, skipped=True)
            if w.write_id in lost else w.added for w in writes]


def _discard_uncommitted(location: str | os.PathLike, writes: list[_Write]) -> set[str]:
    """Delete the rows of those of *writes* that no ``profiles`` row names (another writer
    committed the file first, or the commit failed); their write ids."""
    try:
        stored = delta.lookup(location, "profiles", _IDS, "profile_id",
                              [w.added.profile_id for w in writes])
    except Exception:  # noqa: BLE001 (not knowing which committed, delete none)
        return set()
    kept = set(stored.column("write_id").to_pylist())
    lost = {w.write_id for w in writes if w.write_id not in kept}
    _discard(location, sorted(lost))
    return lost


def _discard(location: str | os.PathLike, write_ids: list[str]) -> None:
    """Delete the rows of the writes *write_ids*, which no ``profiles`` row names. Only
    tidying: readers leave such rows out; a failure here (another writer's commits kept
    conflicting) leaves them for :func:`compact`."""
    if not write_ids:
        return
    which = f"write_id IN ({', '.join(repr(w) for w in write_ids)})"
    for table in layout.PARTS:
        try:
            delta.delete(location, table, which)
        except Exception:  # noqa: BLE001 (see above: what is left is not read)
            return


# -- compaction ---------------------------------------------------------------------------------


RETENTION_HOURS = 168
"""How long :func:`compact` keeps the files an older version of a table needs (Delta Lake's
default, a week): a reader that opened the table before a compaction reads such files."""


@dataclass(frozen=True)
class Compacted:
    """What :func:`compact` did: per table, the files its optimize removed and added and the
    files its vacuum deleted; the rows of writes that lost to another write of the same
    profile (killed ones, concurrent ones), deleted."""

    tables: Mapping[str, Mapping[str, int]]
    stale_writes: int


def compact(location: str | os.PathLike, *,
            retention_hours: int = RETENTION_HOURS) -> Compacted:
    """Compact the dataset at *location*: the rows of writes that a ``profiles`` row does not
    name although the profile is committed (a writer killed before a re-run committed it,
    or one that lost to a concurrent writer) deleted, then each table rewritten into few
    files sorted by ``profile_id`` (one commit, the same rows: :func:`.delta.compact`), the
    files that no version of the last *retention_hours* needs deleted, and a checkpoint of
    each table's log written. Readers and writers may run meanwhile (a reader that opened a
    table more than *retention_hours* before may find files gone). The answers are the same
    before and after."""
    open_existing(location)
    stale = _stale_writes(location)
    for start in range(0, len(stale), 500):  # (a predicate of a bounded length)
        _discard(location, stale[start:start + 500])
    tables = {table: delta.compact(location, table, retention_hours)
              for table in ("profiles", *layout.PARTS)}
    return Compacted(tables, len(stale))


def _stale_writes(location: str | os.PathLike) -> list[str]:
    """The write ids in the parts of profiles whose ``profiles`` row names another write.
    (Not the writes of a profile with no ``profiles`` row: one may be committing now.)"""
    def pairs(table: str) -> Iterator[tuple[str, str]]:
        rows = delta.read(location, table, _IDS).group_by(_IDS.names).aggregate([])
        return zip(*(rows.column(name).to_pylist() for name in _IDS.names), strict=True)

    committed = dict(pairs("profiles"))
    stale: set[str] = set()
    for table in layout.PARTS:
        for profile_id, write_id in pairs(table):
            if committed.get(profile_id, write_id) != write_id:
                stale.add(write_id)
    return sorted(stale)


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
    ``(profile_id, write_id)`` is in ``profiles``. Filter ``profiles`` once read
    (``to_table().filter(...)``), not in the scan: its files, written by delta-rs' merge, hold
    string_view columns, which a filter pyarrow pushes into the scan of a file of several
    rows fails to compare with a string."""
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
