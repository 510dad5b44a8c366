"""A fleet's profiles on Dask: collections with one partition per file (or per profile of
the dataset, or per row group), and the fleet-wide ``top``, ``merge`` and ``diff`` as tree
reductions of small per-file partial results (:mod:`.partials`).

A *source* is a sequence of profile files (paths or fsspec URLs, any format the library
reads) or a :class:`Selection` of a dataset (:func:`select`). Each file is read on a worker
(``read(..., aggregate=True)``: per-stack counts) and reduced there to counts per function
or per stack, so what travels and what the reduction holds grows with the distinct
functions or stacks, never with the samples or the files. The work runs on whatever Dask
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

import tachyon_format
from tachyon_format.analysis import Table
from tachyon_format.analysis import diff as diff_profiles
from tachyon_format.analysis.keys import By
from tachyon_format.model import Profile

from . import storage
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
    """A bag with one partition per file (or selected dataset profile) holding its profile
    as per-stack counts (an ordinary :class:`~tachyon_format.Profile`), read lazily on the
    worker."""
    return _units_bag(source, format).map(Unit.profile)


def counts_bag(source: Source, *, format: str | None = None) -> db.Bag:
    """A bag with one partition per file (or selected dataset profile) holding its
    :class:`~.partials.StackCounts` (global stack ids, and the dictionary entries they
    need)."""
    return _units_bag(source, format).map(Unit.stack_counts)


def _units_bag(source: Source, format: str | None) -> db.Bag:
    """The partitions of *source* as a bag of :class:`Unit` s, one per partition."""
    work = units(source, format)
    if not work:
        raise ValueError("no profiles to read")
    return db.from_sequence(work, npartitions=len(work))


def samples_frame(source: Source, *, format: str | None = None):
    """A ``dask.dataframe`` of rows of the dataset's ``samples`` table (per (stack, thread,
    status) counts, with global stack ids), one partition per file or per selected profile
    of the dataset."""
    import dask.dataframe as dd
    import pandas as pd

    from .layout import SAMPLES
    from .tables import sample_rows

    def rows(unit: Unit) -> pd.DataFrame:
        if unit.profile_id is not None:
            from .dataset import read_write

            return read_write(unit.location, "samples", unit.profile_id,
                              unit.write_id or "").to_pandas(types_mapper=pd.ArrowDtype)
        from .file_rows import content_id

        counts = unit.stack_counts()
        return sample_rows(content_id(storage.read_source(unit.location)),
                           counts.counts).to_pandas(types_mapper=pd.ArrowDtype)

    meta = SAMPLES.empty_table().to_pandas(types_mapper=pd.ArrowDtype)
    return dd.from_map(rows, units(source, format), meta=meta)


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
    """The fleet's whole function table (see :func:`top`)."""

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
    reduced = counts_bag(source, format=format).reduction(
        StackCounts.combine, StackCounts.combine, split_every=split_every)
    (counts,) = dask.compute(reduced, scheduler=scheduler)
    return counts.to_profile()


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
