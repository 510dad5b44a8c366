"""fleet/cluster.py reads a dataset by parts of its tables' files, not profile by profile:
on a dataset of several batches, compacted or not, with a stale write and with row groups
cut into parts, every selection's merge and function table equal the sum of its profiles
read back one by one (the committed write of each), exactly."""

from __future__ import annotations

import shutil
import uuid

import numpy as np
import pytest

pa = pytest.importorskip("pyarrow", reason="the fleet dataset needs pyarrow")
pads = pytest.importorskip("pyarrow.dataset", reason="the fleet dataset needs pyarrow")
pytest.importorskip("deltalake", reason="the fleet dataset needs deltalake")
pytest.importorskip("dask.bag", reason="the fleet needs dask (the fleet extra)")

from tachyon_format.fleet import cluster, dataset, delta, layout  # noqa: E402
from tachyon_format.fleet.partials import FunctionCounts, StackCounts  # noqa: E402
from tests.fleet.conftest import write_fleet  # noqa: E402

SELECTIONS = {"all": ({}, 22), "deploy": ({"deploy": "v1"}, 11),
              "partition": ({"service": "api", "deploy": "v2"}, 11),
              "label": ({"host": "h1"}, 12)}
"""Selections (by nothing, a partition key, a partition, a label) and their profiles."""


@pytest.fixture(scope="module")
def batched(tmp_path_factory):
    """A dataset added in batches of 4 files, in row groups of 64 rows, two deploys and two
    hosts, with the rows of a stale write of one profile; and a compacted copy of it."""
    root = tmp_path_factory.mktemp("parts")
    location = root / "as-added"
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(dataset, "BATCH_FILES", 4)
        mp.setattr(delta, "ROW_GROUP_ROWS", 64)
        for deploy, seed in (("v1", 300), ("v2", 700)):
            for host, files in (("h1", range(0, 6)), ("h2", range(6, 11))):
                paths = write_fleet(root / deploy, 11, seed)
                dataset.add(location, [paths[i] for i in files],
                            labels={"service": "api", "deploy": deploy, "host": host},
                            partition_by=("service", "deploy"))
        row = dataset.profiles(location).to_pylist()[0]
        for table in layout.PARTS:  # (the committed write's rows again, under another id)
            rows = delta.read(location, table, layout.stored(table),
                              pads.field("write_id") == row["write_id"],
                              files=f"profile_id = '{row['profile_id']}'")
            rows = rows.set_column(rows.schema.get_field_index("write_id"), layout.WRITE_ID,
                                   pa.array([uuid.uuid4().hex] * len(rows), pa.string()))
            delta.append(location, table, lambda rows=rows: rows)
        compacted = root / "compacted"
        shutil.copytree(location, compacted)
        dataset.compact(compacted, retention_hours=0)
    return {"as added": location, "compacted": compacted}


def one_by_one(location, where) -> list[StackCounts]:
    """The selected profiles' counts, each read back alone (its committed write)."""
    return [dataset.load_counts(location, row["profile_id"], row["write_id"])
            for row in dataset.profiles(location, where).to_pylist()]


def same_counts(a: StackCounts, b: StackCounts) -> bool:
    tables = [(a.counts, b.counts), (a.nodes, b.nodes), (a.frames, b.frames)]
    return (all(x.keys() == y.keys() and all(np.array_equal(x[k], y[k]) for k in x)
                for x, y in tables)
            and np.array_equal(a.string_id, b.string_id) and a.raws == b.raws)


@pytest.mark.parametrize("selection", SELECTIONS)
@pytest.mark.parametrize("version", ["as added", "compacted"])
def test_a_selection_read_by_parts_equals_its_profiles_one_by_one(batched, version, selection,
                                                                   monkeypatch):
    location = batched[version]
    where, count = SELECTIONS[selection]
    monkeypatch.setattr(delta, "PART_ROWS", 100)  # (a file's row groups in several parts)
    source = cluster.select(location, **where)
    profiles = one_by_one(location, where)
    assert len(profiles) == count
    expected = StackCounts.combine(profiles)
    found = StackCounts.combine(cluster.counts_bag(source).compute(scheduler="sync"))
    assert same_counts(found, expected)
    assert found.num_samples == sum(p.num_samples for p in profiles)
    for by in ("function", "line"):
        table = FunctionCounts.combine([FunctionCounts.of_profile(p.to_profile(), by)
                                        for p in profiles]).table()
        got = cluster.function_table(source, by, scheduler="sync", split_every=3)
        assert got.rows() == table.rows() and got.total == table.total
    frame = cluster.samples_frame(source).compute(scheduler="sync")
    assert int(frame["count"].sum()) == expected.num_samples
    assert set(frame["profile_id"]) == {p for p in dataset.profiles(location, where).column(
        "profile_id").to_pylist()}


def test_the_partitions_are_the_tables_files_not_the_profiles(batched):
    for location in batched.values():
        source = cluster.select(location)
        files = {table: len(delta._table(delta.table_uri(location, table)).file_uris())
                 for table in layout.PARTS}
        found = cluster.parts(source)
        assert {t: sum(p.part.table == t for p in found) for t in layout.PARTS} == files
        assert len(cluster.counts_bag(source).to_delayed()) == len(found)
    # a selection of a few profiles reads only the files whose statistics may hold them
    few = cluster.parts(cluster.select(batched["as added"], deploy="v1", host="h2"))
    assert len(few) < len(cluster.parts(cluster.select(batched["as added"])))


def test_an_empty_selection_is_an_error(batched):
    with pytest.raises(ValueError, match="no profiles"):
        cluster.merge(cluster.select(batched["as added"], deploy="v3"), scheduler="sync")
