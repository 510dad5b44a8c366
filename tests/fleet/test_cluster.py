"""fleet/cluster.py on a real ``dask.distributed.LocalCluster`` of two worker processes: the
fleet-wide top, merge and diff over a few hundred generated profiles of five formats equal
what the library computes on one machine (every file read, ``analysis.merge``d)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pyarrow", reason="the fleet needs pyarrow (the fleet extra)")
pytest.importorskip("dask.bag", reason="the fleet needs dask (the fleet extra)")
pytest.importorskip("distributed", reason="the fleet needs dask.distributed (the fleet extra)")

import tachyon_format  # noqa: E402
from tachyon_format import FORMATS  # noqa: E402
from tachyon_format.analysis import diff, diff_stacks, function_table, merge  # noqa: E402
from tachyon_format.fleet import cluster  # noqa: E402


def one_machine(paths):
    """The library alone: every file read, merged (counted by samples, whatever the mode)."""
    return merge([tachyon_format.read(p) for p in paths], sample_type="samples", force=True)


def by_key(table, fields=("funcname",)) -> dict:
    return {tuple(row[f] for f in fields): (row["self"], row["cumulative"])
            for row in (dict(zip(table.names, r, strict=True)) for r in table.rows())}


@pytest.fixture(scope="module")
def everything(fleet_files):
    return fleet_files["v1"] + fleet_files["v2"]


@pytest.fixture(scope="module")
def reference(everything):
    return one_machine(everything)


def test_the_fleet_top_equals_the_library(dask_client, everything, reference):
    assert len(everything) >= 200 and len({p.rsplit(".", 1)[-1] for p in everything}) >= 4
    expected = function_table(reference)
    found = cluster.top(everything, 10**6)  # (every row)
    assert by_key(found) == by_key(expected) and found.total == expected.total
    ordered = sorted(expected.rows(), key=lambda r: (-r[1], -r[2], r[0]))
    assert found.head(10).rows() == ordered[:10]


def test_the_fleet_merge_is_the_library_merge(dask_client, everything, reference, tmp_path):
    merged = cluster.merge(everything)
    stacks = diff_stacks(reference, merged, by="line", force=True)
    assert (stacks["base"] == stacks["other"]).all()
    assert stacks.info["base_total"] == stacks.info["other_total"] == int(
        reference.sample_counts().sum())
    # an ordinary profile: every writer without a timeline writes it, and it reads back
    for name, fmt in FORMATS.items():
        if fmt.verb("write") is None or fmt.timeline or name in ("gperftools",):
            continue
        out = tmp_path / fmt.file_name()
        tachyon_format.write(merged, out, format=name)
        assert out.stat().st_size > 0
    back = tachyon_format.read(tmp_path / FORMATS["pprof"].file_name())
    assert by_key(function_table(back)) == by_key(function_table(reference))


def test_the_dataset_gives_the_same_answers(dask_client, fleet_dataset, everything, reference):
    source = cluster.select(fleet_dataset)
    assert len(cluster.units(source)) == len(everything)
    fields = ("filename", "funcname", "lineno")
    found = cluster.function_table(source, "line", split_every=3)
    assert by_key(found, fields) == by_key(function_table(reference, "line"), fields)
    frame = cluster.samples_frame(source)
    assert int(frame["count"].sum().compute()) == int(reference.sample_counts().sum())


@pytest.mark.slow
def test_a_diff_of_two_deploys(dask_client, fleet_dataset, fleet_files):
    found = cluster.diff(cluster.select(fleet_dataset, deploy="v1"),
                         cluster.select(fleet_dataset, deploy="v2"))
    expected = diff(one_machine(fleet_files["v1"]), one_machine(fleet_files["v2"]),
                    force=True)
    assert found.info["base_total"] == expected.info["base_total"]
    assert found.info["other_total"] == expected.info["other_total"]
    columns = ("base_self", "other_self", "base_cumulative", "other_cumulative")

    def changes(table):
        return {name: tuple(int(table[c][i]) for c in columns)
                for i, name in enumerate(table["funcname"].tolist())}

    assert changes(found) == changes(expected)
    assert np.abs(found["delta_self_fraction"]).max() > 0  # the deploys differ


def test_files_behind_urls_on_the_local_scheduler():
    fsspec = pytest.importorskip("fsspec")
    from tests.fleet.conftest import write_fleet_to_memory

    urls = write_fleet_to_memory(3)
    try:
        expected = function_table(merge([tachyon_format.read(fsspec.open(u).open().read())
                                         for u in urls], sample_type="samples", force=True))
        found = cluster.function_table(urls, scheduler="sync")
        assert by_key(found) == by_key(expected)
        assert len(cluster.samples_frame(urls).compute(scheduler="sync")) > 0
    finally:
        fsspec.filesystem("memory").rm("/fleet-test", recursive=True)


def test_a_source_is_a_list_or_a_selection():
    with pytest.raises(TypeError, match="list of files"):
        cluster.units("one.bin")
    with pytest.raises(ValueError, match="no profiles"):
        cluster.merge([])
