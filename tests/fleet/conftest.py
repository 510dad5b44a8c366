"""Fleet fixtures: a few hundred small generated profiles of several formats (written with
the project's writers; tools/bench/fleet_profiles.py), a dataset of them, and a real
``dask.distributed.LocalCluster`` of two worker processes per test module."""

from __future__ import annotations

from pathlib import Path

import pytest

import tachyon_format
from tests.helpers.tools import TOOLS, load_tool

FORMATS = (("tachyon", ".bin"), ("pprof", ".pb.gz"), ("collapsed", ".collapsed"),
           ("speedscope", ".speedscope.json"), ("jsonl", ".jsonl"))
"""The formats the fleet's files are written in, in turn (every one that reads back)."""
PER_DEPLOY = 100


def generator():
    return load_tool("fleet_profiles", TOOLS / "bench" / "fleet_profiles.py")


def write_fleet(folder: Path, count: int, seed: int, num_samples: int = 200) -> list[str]:
    """*count* generated profiles in *folder*, the formats taken in turn."""
    made = generator()
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(count):
        name, ext = FORMATS[i % len(FORMATS)]
        path = folder / f"worker_{seed + i}{ext}"
        tachyon_format.write(made.make_profile(seed + i, num_samples, num_stacks=30), path,
                             format=name)
        paths.append(str(path))
    return paths


def write_fleet_to_memory(count: int) -> list[str]:
    """*count* (at most 3) generated profiles in fsspec's memory filesystem; their URLs."""
    import fsspec

    made = generator()
    urls = []
    for i, fmt in enumerate(("tachyon", "pprof", "collapsed")[:count]):
        url = f"memory://fleet-test/in/p{i}.{fmt}"
        with fsspec.open(url, "wb") as f:
            tachyon_format.write(made.make_profile(100 + i, 150, num_stacks=20), f, format=fmt)
        urls.append(url)
    return urls


@pytest.fixture(scope="session")
def fleet_files(tmp_path_factory) -> dict[str, list[str]]:
    """Two deploys' profiles: ``{"v1": [...], "v2": [...]}`` (v2 differs in its seeds, so
    its functions' shares differ)."""
    root = tmp_path_factory.mktemp("fleet") / "profiles"
    return {"v1": write_fleet(root / "v1", PER_DEPLOY, 0),
            "v2": write_fleet(root / "v2", PER_DEPLOY, 5000)}


@pytest.fixture(scope="session")
def fleet_dataset(tmp_path_factory, fleet_files) -> Path:
    """The dataset of :func:`fleet_files`, partitioned by date, service and deploy."""
    pytest.importorskip("pyarrow", reason="the fleet dataset needs pyarrow (the fleet extra)")
    from tachyon_format.fleet import dataset

    location = tmp_path_factory.mktemp("dataset") / "fleet"
    for deploy, paths in fleet_files.items():
        dataset.add(location, paths, labels={"service": "api", "deploy": deploy,
                                             "date": "2026-01-01"},
                    partition_by=("date", "service", "deploy"))
    return location


@pytest.fixture(scope="module")
def dask_client():
    """A real cluster: two worker processes of one thread each, closed after the module."""
    pytest.importorskip("dask", reason="needs dask (the fleet extra)")
    distributed = pytest.importorskip("distributed",
                                      reason="needs dask.distributed (the fleet extra)")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        assert len(client.scheduler_info()["workers"]) == 2
        yield client
