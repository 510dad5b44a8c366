"""The dataset's tables as Delta Lake tables (``deltalake``, delta-rs): their creation, the
appends of a profile's rows, the merge that commits its ``profiles`` row, the clean-up of
rows no ``profiles`` row names, compaction, lookups by id and reads that fail with
FormatError.

Delta Lake commits by creating the next numbered file of a table's log, which exactly one
writer can do (a conditional put on object stores, an exclusive create on a local disk), so
concurrent writers never lose each other's commits. Appends do not conflict (delta-rs
rebases them on what was committed meanwhile); a merge, a delete or a creation may, and is
retried from the start, a few times, after a random pause.
"""

from __future__ import annotations

import os
import random
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as pads
import pyarrow.fs as pafs

from tachyon_format.errors import FormatError

from .storage import is_url

RETRIES = 200
"""Attempts of a commit that conflicts with other writers' (each after a pause of up to
:data:`PAUSE_S` seconds)."""
PAUSE_S = 0.05
ROW_GROUP_ROWS = 1 << 14
"""Rows per Parquet row group written (about ten small profiles' counts): a reader of one
profile reads the row groups whose statistics may hold it, in files of many profiles (a
batch of adds, a compacted table)."""
_opened = threading.local()
"""Per thread, the tables opened, by URI: brought up to date before each use (reading the
commits made since) rather than opened again (reading the log from its last checkpoint)."""


def table_uri(location: str | os.PathLike, table: str) -> str:
    """Where the Delta table *table* of the dataset at *location* is (a URL delta-rs
    reaches: a local path made absolute, or ``s3://``, ``gs://``, ``az://`` ...)."""
    text = os.fspath(location)
    return f"{text.rstrip('/')}/{table}" if is_url(text) else os.path.join(
        os.path.abspath(text), table)


def _table(uri: str):
    """The Delta table at *uri*, at its latest version."""
    from deltalake import DeltaTable

    tables = _opened.__dict__.setdefault("tables", {})
    table = tables.get(uri)
    if table is None:
        table = tables[uri] = DeltaTable(uri)
    else:
        table.update_incremental()
    return table


def create(location: str | os.PathLike, table: str, schema: pa.Schema,
           partition_by: list[str] | None = None) -> None:
    """Create the empty table *table*, unless it is there (another writer may be creating
    it at the same moment: either commit is the table)."""
    from deltalake import DeltaTable
    from deltalake.exceptions import TableNotFoundError

    uri = table_uri(location, table)
    try:  # (every add asks: the table opened, as the add's writes will use it, not created)
        _table(uri)
        return
    except TableNotFoundError:
        pass
    _retried(lambda: DeltaTable.create(uri, schema, mode="ignore", partition_by=partition_by))


def append(location: str | os.PathLike, table: str,
           rows: Callable[[], pa.Table | pa.RecordBatchReader]) -> None:
    """Append the rows *rows()* gives (a table, or a stream of batches written as they
    come) to *table* in one commit. An append conflicts with a concurrent delete of rows
    it could see (delta-rs checks at the serializable level): *rows()* is then called
    again, for a new attempt."""
    from deltalake import CommitProperties, WriterProperties, write_deltalake

    uri = table_uri(location, table)
    _retried(lambda: write_deltalake(
        _table(uri), _as_stored(rows()), mode="append",
        writer_properties=WriterProperties(max_row_group_size=ROW_GROUP_ROWS),
        commit_properties=CommitProperties(max_commit_retries=RETRIES)))


def _as_stored(rows: pa.Table | pa.RecordBatchReader) -> pa.Table | pa.RecordBatchReader:
    """*rows* with each uint64 column (a thread id, an address, a timestamp) as the int64 of
    the same bits: Delta Lake has no unsigned type, its ``long`` stands for them, and
    delta-rs refuses a value of 2**63 or more (a thread id of a Tachyon file, a kernel
    address of a native frame) rather than wrap it. :func:`read` turns them back."""
    unsigned = [i for i, field in enumerate(rows.schema) if field.type == pa.uint64()]
    if not unsigned:
        return rows
    schema = rows.schema
    for i in unsigned:
        schema = schema.set(i, schema.field(i).with_type(pa.int64()))

    def signed(batch: pa.RecordBatch) -> pa.RecordBatch:
        columns = [pc.cast(column, pa.int64(), safe=False) if i in unsigned else column
                   for i, column in enumerate(batch.columns)]
        return pa.RecordBatch.from_arrays(columns, schema=schema)

    if isinstance(rows, pa.Table):
        return pa.Table.from_batches([signed(b) for b in rows.to_batches()], schema=schema)
    return pa.RecordBatchReader.from_batches(schema, (signed(b) for b in rows))


def insert_new(location: str | os.PathLike, table: str, rows: pa.Table, key: str) -> int:
    """Insert each row of *rows* into *table* unless a row with its *key* (a string of hex
    digits) is there, all in one commit (a merge); how many were inserted."""
    uri = table_uri(location, table)
    # (the keys' values in the predicate too: the merge then reads only the files whose
    # statistics may hold one of them, not every file of the table)
    predicate = f"t.{key} = s.{key} AND t.{key} IN ({_listed(rows.column(key).to_pylist())})"

    def merge() -> Mapping[str, Any]:
        return (_table(uri).merge(rows, predicate, source_alias="s", target_alias="t")
                .when_not_matched_insert_all().execute())

    return _retried(merge)["num_target_rows_inserted"]


def lookup(location: str | os.PathLike, table: str, schema: pa.Schema, key: str,
           values: Sequence[str]) -> pa.Table:
    """The rows of *table* whose *key* is one of *values* (strings of hex digits), with
    *schema*'s columns: only those columns of only the files whose statistics may hold one
    of the values are read, so the cost follows *values*, not the table's size."""
    if not values:
        return pa.Table.from_pylist([], schema=schema)
    return read(location, table, schema, pads.field(key).isin(list(values)),
                files=f"{key} IN ({_listed(values)})")


def _listed(values: Sequence[str]) -> str:
    """*values* as a SQL list; ValueError for one that is not hex digits (they come from
    this package, but they go into a predicate)."""
    for value in values:
        if not re.fullmatch(r"[0-9a-f]{1,64}", value):
            raise ValueError(f"{value!r} is not an id (hex digits)")
    return ", ".join(f"'{value}'" for value in values)


def delete(location: str | os.PathLike, table: str, predicate: str) -> None:
    """Delete the rows of *table* that match *predicate* (SQL), in one commit (none when no
    row matches)."""
    uri = table_uri(location, table)
    _retried(lambda: _table(uri).delete(predicate))


def compact(location: str | os.PathLike, table: str, retention_hours: int) -> dict[str, int]:
    """Compact *table*: its files rewritten into few, sorted by ``profile_id`` (Delta's
    optimize, one commit that removes them and adds the new ones: readers see the same rows
    in every version),
    the files that no version of the last *retention_hours* needs deleted (vacuum: a reader
    still on an older version reads files that are gone), and a checkpoint of its log
    written, so that opening the table reads one Parquet file and few commits."""
    from deltalake import CommitProperties, WriterProperties

    uri = table_uri(location, table)
    # sorted by profile id (a Z-order on one column), in row groups of ROW_GROUP_ROWS: a
    # reader of one profile then reads the few row groups whose statistics may hold it, not
    # the whole of a file of every profile
    done = _retried(lambda: _table(uri).optimize.z_order(
        ["profile_id"], writer_properties=WriterProperties(max_row_group_size=ROW_GROUP_ROWS),
        commit_properties=CommitProperties(max_commit_retries=RETRIES)))
    found = _table(uri)
    # (Delta refuses a retention under its default of a week unless told: the caller chose)
    vacuumed = found.vacuum(retention_hours=retention_hours, dry_run=False,
                            enforce_retention_duration=False)
    found = _table(uri)
    found.create_checkpoint()
    found.cleanup_metadata()  # (log entries past the table's log retention, 30 days)
    return {"files_removed": done["numFilesRemoved"], "files_added": done["numFilesAdded"],
            "files_deleted": len(vacuumed)}


def _retried(commit):
    """*commit()*, again after a random pause while it conflicts with another writer's."""
    from deltalake.exceptions import CommitFailedError

    for attempt in range(RETRIES):
        try:
            return commit()
        except CommitFailedError:
            if attempt == RETRIES - 1:
                raise
            time.sleep(random.uniform(0, PAUSE_S))
    raise AssertionError("unreachable")


def scan(location: str | os.PathLike, table: str, schema: pa.Schema,
         files: str | None = None) -> pads.Dataset:
    """The current version of *table* as an Arrow dataset (read lazily, e.g. by DuckDB or
    Polars), of only the files whose statistics may match the SQL predicate *files*; an
    empty one if the table was not created yet. FormatError if its log is damaged."""
    from deltalake.exceptions import TableNotFoundError

    uri = table_uri(location, table)
    try:
        try:
            found = _table(uri)
        except TableNotFoundError:
            return pads.dataset(pa.Table.from_pylist([], schema=schema))
        # pyarrow's own filesystem, not delta-rs' default (a Python handler around its
        # object store): that one left reader threads running into interpreter shutdown,
        # which aborted one process in about ten ("terminate called without an active
        # exception"; delta-io/delta-rs#2184, pola-rs/polars#24169)
        native, root = pafs.FileSystem.from_uri(uri)
        return found.to_pyarrow_dataset(filesystem=pafs.SubTreeFileSystem(root, native),
                                        file_pruning_predicate=files)
    except Exception as exc:  # (delta-rs raises several kinds, some of them plain Exception)
        raise _damaged(table, exc) from None


def read(location: str | os.PathLike, table: str, schema: pa.Schema,
         where: pads.Expression | None = None, files: str | None = None) -> pa.Table:
    """The rows of *table* that match *where* (of *schema*'s columns, ``profile_id`` and
    ``write_id``; in the files *files* selects, see :func:`scan`), with *schema*'s columns;
    FormatError if the table's log or one of its files is damaged."""
    return _read(scan(location, table, schema, files), table, schema, where)


PART_ROWS = 1 << 18
"""Rows of a :class:`Part` (whole row groups, so about 16 of :data:`ROW_GROUP_ROWS`): a
compacted table's one large file still makes several units of work."""


@dataclass(frozen=True)
class Part:
    """Whole row groups of one Parquet file of a table's current version: a unit of work of
    a reader of the whole table, read on any machine (it pickles: the file's path, its
    filesystem, the row groups)."""

    table: str
    fragment: pads.ParquetFileFragment
    schema: pa.Schema
    """The table's columns as its scan gives them (what each file's are read as)."""

    def to_table(self, columns: list[str], filter: pads.Expression | None = None) -> pa.Table:
        return self.fragment.to_table(schema=self.schema, columns=columns, filter=filter)


def parts(location: str | os.PathLike, table: str, schema: pa.Schema,
          profile_ids: Sequence[str] | None = None, rows: int | None = None) -> list[Part]:
    """The current version of *table* as parts of about *rows* rows each (default
    :data:`PART_ROWS`), in the order of its files (with *profile_ids*, only the files whose
    statistics may hold one of them); none if the table was not created yet. FormatError if
    its log or a file's footer is damaged."""
    rows = rows or PART_ROWS
    files = None if profile_ids is None else f"profile_id IN ({_listed(profile_ids)})"
    found = scan(location, table, schema, files)
    if not isinstance(found, pads.FileSystemDataset):  # (no table yet: an empty one)
        return []
    out = []
    try:
        for fragment in found.get_fragments():
            groups: list[int] = []
            held = 0
            for group in fragment.row_groups:  # (reads the file's footer)
                if groups and held + group.num_rows > rows:
                    out.append(Part(table, fragment.subset(row_group_ids=groups), found.schema))
                    groups, held = [], 0
                groups.append(group.id)
                held += group.num_rows
            if groups:
                out.append(Part(table, fragment.subset(row_group_ids=groups), found.schema))
    except Exception as exc:  # (pyarrow: ArrowInvalid, OSError for a file lost or cut)
        raise _damaged(table, exc) from None
    return out


def read_part(part: Part, schema: pa.Schema, where: pads.Expression | None = None) -> pa.Table:
    """The rows of *part* that match *where*, as :func:`read` gives a table's."""
    return _read(part, part.table, schema, where)


def _read(found: pads.Dataset | Part, table: str, schema: pa.Schema,
          where: pads.Expression | None) -> pa.Table:
    """The rows of *found* (a scan of *table*, or a part of one) that match *where*, with
    *schema*'s columns."""
    # delta-rs writes the files it rewrites (a merge's, a delete's) with string_view columns,
    # which a filter pushed into the scan fails to compare with the table's string
    # statistics: there the rows are filtered once read (in profiles, always: its files are
    # a merge's; one row per profile)
    ids = [n for n in ("profile_id", "write_id") if n not in schema.names]
    try:
        try:
            if table == "profiles" and where is not None:
                raise pa.ArrowNotImplementedError("(a merge's files)")
            # (pushed into the scan: row groups whose statistics rule it out are not read)
            rows = found.to_table(columns=schema.names, filter=where)
        except pa.ArrowNotImplementedError:
            rows = found.to_table(columns=[*schema.names, *ids])
            rows = rows if where is None else rows.filter(where)
        rows = rows.select(schema.names)
        for i, field in enumerate(schema):  # (stored as int64 of the same bits: _as_stored)
            if field.type == pa.uint64() and rows.schema.field(i).type == pa.int64():
                rows = rows.set_column(i, field, pc.cast(rows.column(i), pa.uint64(),
                                                         safe=False))
        return rows.cast(schema)
    except Exception as exc:  # (pyarrow: ArrowInvalid, OSError, KeyError for a lost column)
        raise _damaged(table, exc) from None


def _damaged(table: str, exc: BaseException) -> FormatError:
    return FormatError(f"not a readable {table} table of this layout: "
                       f"{type(exc).__name__}: {exc}", path=table)
