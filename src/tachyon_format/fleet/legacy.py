"""Datasets of layout version 1 (one Parquet file per profile and table, written in place),
read only to be copied into the current layout by :func:`migrate`
(``tachyon-format dataset migrate OLD NEW``).

Version 1 wrote each profile's ``samples``, ``stacks``, ``frames`` and ``strings`` files, then
its ``profiles`` file, to ``OLD/<table>/<key>=<value>/.../<profile_id>.parquet``. A profile
is copied only when all five of its files read whole; the others (a writer killed
half-way) are reported and left out.
"""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.parquet as pq

from . import delta, layout, storage
from .tables import stack_counts, stamped

V1_SCHEMAS = {table: pa.schema([f for f in schema if not (
    table in ("stacks", "frames", "strings") and f.name == "profile_id")])
    for table, schema in layout.TABLES.items()}
"""Version 1's tables: as now, without the dictionaries' ``profile_id``."""


@dataclass(frozen=True)
class Migrated:
    """What :func:`migrate` copied (``profiles``), and the profiles it could not read."""

    profiles: int
    skipped: tuple[str, ...]


def migrate(old: str | os.PathLike, new: str | os.PathLike) -> Migrated:
    """Copy the version 1 dataset at *old* into a dataset of the current layout at *new*
    (created, with the same partition keys; profiles already in it are skipped, so a
    migration that was stopped can be run again)."""
    from .dataset import create_tables, open_manifest, profiles

    fs, root = storage.filesystem(old)
    with fs.open(storage.join(root, layout.MANIFEST), "rb") as f:
        manifest = layout.Manifest.from_json(f.read().decode("utf-8", "replace"),
                                             versions=(1,))
    target = open_manifest(new, manifest.partition_by)
    create_tables(new, target)
    present = set(profiles(new).column("profile_id").to_pylist())
    copied, skipped = 0, []
    for path in sorted(fs.glob(storage.join(root, "profiles", "**", "*.parquet"))):
        partition = path[len(storage.join(root, "profiles")) + 1:].rsplit("/", 1)[0]
        profile_id = path.rsplit("/", 1)[1].removesuffix(".parquet")
        if profile_id in present:
            continue
        try:
            tables = {table: _read(fs, storage.join(root, table, partition,
                                                    f"{profile_id}.parquet"), table)
                      for table in layout.TABLES}
            stack_counts(**{t: tables[t] for t in layout.PARTS})  # (a check: they fit)
        except (OSError, ValueError, pa.ArrowException) as exc:
            skipped.append(f"{profile_id}: {exc}")
            continue
        write_id = uuid.uuid4().hex
        row = tables["profiles"].to_pylist()[0]
        day = layout.day_of(row["time_ns"])
        for table in layout.PARTS:
            rows = stamped(table, tables[table], profile_id, write_id, day)
            delta.append(new, table, lambda rows=rows: rows)
        keys = dict(part.split("=", 1) for part in partition.split("/") if "=" in part)
        stored = {**row, "write_id": write_id,
                  **{k: keys.get(k, layout.UNKNOWN) for k in target.partition_by}}
        if delta.insert_new(new, "profiles", pa.Table.from_pylist(
                [stored], schema=layout.stored("profiles", target.partition_by)),
                "profile_id"):
            copied += 1
    return Migrated(copied, tuple(skipped))


def _read(fs, path: str, table: str) -> pa.Table:
    with fs.open(path, "rb") as f:
        return pq.read_table(f, schema=V1_SCHEMAS[table])
