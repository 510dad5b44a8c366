"""A fleet's profiles on Dask: collections with one partition per file (or per part of a
dataset's table), and the fleet-wide ``top``, ``merge`` and ``diff`` as tree reductions of
small partial results (:mod:`.partials`).

A *source* is a sequence of profile files (paths or fsspec URLs, any format the library
reads) or a :class:`Selection` of a dataset (:func:`select`). Each file is read on a worker
(``read(..., aggregate=True)``: per-stack counts) and reduced there to counts per function
or per stack, so what travels and what the reduction holds grows with the distinct
functions or stacks, never with the samples or the files. A dataset is read by parts of its
tables' Parquet files (:func:`parts`: whole row groups, each read once, whatever profiles it
holds), not profile by profile: one profile's rows are in a row group of every batch's file
as added, so reading the profiles one by one reads each row group once per profile in it.
A part's rows (of the selected profiles' committed writes) make a partial
:class:`~.partials.StackCounts` (the counts of a ``samples`` part, or the dictionary entries
of a ``stacks``, ``frames`` or ``strings`` part); added up, they are the selection's counts,
as if its profiles had been read one by one and combined. The work runs on whatever Dask
scheduler is current: a ``dask.distributed.Client`` once one is made, else Dask's default
(``scheduler=`` chooses one, as for ``dask.compute``).

The analysis is the library's own: a file's partial result is
:func:`tachyon_format.analysis.function_table` of it, the fleet's merged profile is an
ordinary :class:`~tachyon_format.Profile`, and :func:`diff` is
:func:`tachyon_format.analysis.diff` of two merged profiles.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import dask
import dask.bag as db
import pyarrow as pa
import pyarrow.dataset as pads

import tachyon_format
from tachyon_format.analysis import Table
from tachyon_format.analysis import diff as diff_profiles
from tachyon_format.analysis.keys import By
from tachyon_format.model import Profile

from . import delta, storage
from .partials import FunctionCounts, StackCounts

SPLIT_EVERY = 8
"""Partial results combined per step of the reduction tree."""


@dataclass(frozen=True)
class Selection:
    """The profiles of the dataset at ``location`` whose partition values or labels equal
    ``where``'s."""

    location: str
    where: Mapping[str, str] = field(default_factory=dict)


def select(location: str | os.PathLike, **where: str) -> Selection:
    """The profiles of a dataset, e.g. ``select("fleet/", service="api", deploy="v42")``."""
    return Selection(os.fspath(location), dict(where))


Source = Sequence[str | os.PathLike] | Selection


@dataclass(frozen=True)
class Unit:
    """One partition's work: a file to read, or one profile of a dataset."""

    location: str
    format: str | None = None
    profile_id: str | None = None
    write_id: str | None = None

    def profile(self) -> Profile:
        """The profile as per-stack counts."""
        if self.profile_id is not None:
            from .dataset import load_counts

            return load_counts(self.location, self.profile_id,
                               self.write_id or "").to_profile()
        return tachyon_format.read(storage.read_source(self.location), format=self.format,
                                   aggregate=True)

    def stack_counts(self) -> StackCounts:
        if self.profile_id is not None:
            from .dataset import load_counts

            return load_counts(self.location, self.profile_id, self.write_id or "")
        return StackCounts.of_profile(self.profile())


def units(source: Source, format: str | None = None) -> list[Unit]:
    """The partitions of *source*: one per file, or one per selected profile."""
    if isinstance(source, Selection):
        from .dataset import profiles

        table = profiles(source.location, source.where).select(["profile_id", "write_id"])
        return [Unit(source.location, profile_id=row["profile_id"],
                     write_id=row["write_id"]) for row in table.to_pylist()]
    if isinstance(source, str | os.PathLike):
        raise TypeError("a source is a list of files or a dataset selection, not one path")
    return [Unit(os.fspath(path), format) for path in storage.expand(source)]


def profiles_bag(source: Source, *, format: str | None = None) -> db.Bag:
    """A bag with one partition per file (or selected dataset profile, read from the row
    groups that may hold it) holding its profile as per-stack counts (an ordinary
    :class:`~tachyon_format.Profile`), read lazily on the worker."""
    return _units_bag(source, format).map(Unit.profile)


def counts_bag(source: Source, *, format: str | None = None) -> db.Bag:
    """A bag of :class:`~.partials.StackCounts` (global stack ids, and the dictionary entries
    they need) whose sum (:meth:`~.partials.StackCounts.combine`) is *source*'s: one partition
    per file holding its counts, or for a dataset one per part of its tables
    (:func:`parts`) holding that part's share of the selected profiles' counts or
    dictionaries."""
    if isinstance(source, Selection):
        work = parts(source)
        return db.from_sequence(work, npartitions=len(work)).map(TablePart.stack_counts)
    return _units_bag(source, format).map(Unit.stack_counts)


def _units_bag(source: Source, format: str | None) -> db.Bag:
    """The partitions of *source* as a bag of :class:`Unit` s, one per partition."""
    work = units(source, format)
    if not work:
        raise ValueError("no profiles to read")
    return db.from_sequence(work, npartitions=len(work))


@dataclass(frozen=True)
class TablePart:
    """One partition of a dataset read whole: a part of one of its tables' files, and the
    writes (``write_id``) of the selected profiles, whose rows it keeps (a write no
    ``profiles`` row names, one that lost to another writer of the same file, is left out);
    ``profile_ids`` those profiles, when the selection is by labels or partition values
    (pushed into the read: row groups whose statistics rule them out are not read)."""

    part: delta.Part
    write_ids: pa.Array
    profile_ids: pa.Array | None = None

    def rows(self, schema: pa.Schema) -> pa.Table:
        """The part's rows of the selected writes, with *schema*'s columns."""
        where = pads.field("write_id").isin(self.write_ids)
        if self.profile_ids is not None:
            where = pads.field("profile_id").isin(self.profile_ids) & where
        return delta.read_part(self.part, schema, where)

    def stack_counts(self) -> StackCounts:
        """The part's share of the selection's counts: its counts (a part of ``samples``) or
        its dictionary entries (of ``stacks``, ``frames``, ``strings``), the rest empty."""
        from .layout import TABLES
        from .tables import stack_counts

        tables = {name: schema.empty_table() for name, schema in TABLES.items()
                  if name != "profiles"}
        name = self.part.table
        schema = TABLES[name]
        if name == "samples":  # (its profile ids are not needed: not read)
            schema = schema.remove(schema.get_field_index("profile_id"))
        tables[name] = self.rows(schema)
        return stack_counts(**tables)


MAX_LISTED = 1000
"""Selected profiles up to which their ids choose the files to read (by the files'
statistics); a larger selection reads every file, keeping its profiles' rows."""


def parts(selection: Selection, tables: Sequence[str] | None = None) -> list[TablePart]:
    """The partitions of a dataset read whole: the parts of its ``samples``, ``stacks``,
    ``frames`` and ``strings`` files (or of *tables*' only; :func:`.delta.parts`), each
    keeping the rows of the selected profiles (the selection by labels or partition values
    made first, in the small ``profiles`` table); with such a selection, only the files
    whose statistics may hold one of them. ValueError if no profile is selected."""
    from .dataset import open_existing, profiles
    from .layout import PARTS, stored

    manifest = open_existing(selection.location)
    chosen = profiles(selection.location, selection.where)
    if not len(chosen):
        raise ValueError("no profiles to read")
    write_ids = chosen.column("write_id").combine_chunks()
    profile_ids = listed = None
    if selection.where:
        profile_ids = chosen.column("profile_id").combine_chunks()
        if len(chosen) <= MAX_LISTED:  # (a predicate of a bounded length)
            listed = profile_ids.to_pylist()
    return [TablePart(part, write_ids, profile_ids)
            for table in (PARTS if tables is None else tables)
            for part in delta.parts(selection.location, table,
                                    stored(table, manifest.partition_by), listed)]


def samples_frame(source: Source, *, format: str | None = None):
    """A ``dask.dataframe`` of rows of the dataset's ``samples`` table (per (stack, thread,
    status) counts, with global stack ids), one partition per file, or per part of the
    dataset's ``samples`` files (:func:`parts`)."""
    import dask.dataframe as dd
    import pandas as pd

    from .layout import SAMPLES
    from .tables import sample_rows

    def rows(unit: Unit | TablePart) -> pd.DataFrame:
        if isinstance(unit, TablePart):
            return unit.rows(SAMPLES).to_pandas(types_mapper=pd.ArrowDtype)
        from .file_rows import content_id

        counts = unit.stack_counts()
        return sample_rows(content_id(storage.read_source(unit.location)),
                           counts.counts).to_pandas(types_mapper=pd.ArrowDtype)

    meta = SAMPLES.empty_table().to_pandas(types_mapper=pd.ArrowDtype)
    if isinstance(source, Selection):
        work: Sequence[Unit | TablePart] = parts(source, ["samples"])
    else:
        work = units(source, format)
    return dd.from_map(rows, work, meta=meta)


def top(source: Source, n: int = 20, by: By = "function", *, sort: str = "self",
        format: str | None = None, split_every: int = SPLIT_EVERY, scheduler: Any = None,
        **options) -> Table:
    """The fleet's top *n* keys of *by* (self or cumulative weight): per file
    :func:`~tachyon_format.analysis.function_table` (*options* passed on), added up in a
    tree. Equal to ``analysis.top`` of all the files merged."""
    table = function_table(source, by, format=format, split_every=split_every,
                           scheduler=scheduler, **options)
    return table.sort((sort, "cumulative" if sort == "self" else "self")).head(n)


def function_table(source: Source, by: By = "function", *, format: str | None = None,
                   split_every: int = SPLIT_EVERY, scheduler: Any = None, **options) -> Table:
    """The fleet's whole function table (see :func:`top`). Of a dataset: the function table
    of its selection merged (:func:`merge`), which is the sum of its profiles' (each of the
    table's weights is a sum over samples)."""
    if isinstance(source, Selection):
        merged = _merged(source, split_every, scheduler)
        return FunctionCounts.of_profile(merged.to_profile(), by, **options).table()

    def partial(unit: Unit) -> FunctionCounts:  # (read and reduced in one task)
        return FunctionCounts.of_profile(unit.profile(), by, **options)

    reduced = _units_bag(source, format).map(partial).reduction(
        FunctionCounts.combine, FunctionCounts.combine, split_every=split_every)
    (counts,) = dask.compute(reduced, scheduler=scheduler)
    return counts.table()


def merge(source: Source, *, format: str | None = None, split_every: int = SPLIT_EVERY,
          scheduler: Any = None) -> Profile:
    """The fleet as one profile: per file its :class:`~.partials.StackCounts`, added up in
    a tree, then :meth:`~.partials.StackCounts.to_profile` (one sample row per distinct
    (stack, thread, status), its count as the value; any writer without a timeline writes
    it: pprof, collapsed stacks, flame graphs ...)."""
    return _merged(source, split_every, scheduler, format).to_profile()


def _merged(source: Source, split_every: int, scheduler: Any,
            format: str | None = None) -> StackCounts:
    """The sum of :func:`counts_bag`'s partitions, computed."""
    reduced = counts_bag(source, format=format).reduction(
        StackCounts.combine, StackCounts.combine, split_every=split_every)
    (counts,) = dask.compute(reduced, scheduler=scheduler)
    return counts


def diff(before: Source, after: Source, by: By = "function", *, stacks: bool = False,
         format: str | None = None, split_every: int = SPLIT_EVERY, scheduler: Any = None,
         **options) -> Table:
    """Two parts of the fleet compared (e.g. before and after a deploy): the two merged
    profiles (:func:`merge`, computed together) given to
    :func:`tachyon_format.analysis.diff` (``stacks=True``: ``diff_stacks``); *options* go
    there."""
    from tachyon_format.analysis import diff_stacks

    sides = [counts_bag(s, format=format).reduction(
        StackCounts.combine, StackCounts.combine, split_every=split_every)
        for s in (before, after)]
    base, other = dask.compute(*sides, scheduler=scheduler)
    compare = diff_stacks if stacks else diff_profiles
    return compare(base.to_profile(), other.to_profile(), by, **options)
