"""The Gecko writer against CPython's own ``replay --gecko``: equal as parsed JSON on the
golden files and on files CPython's BinaryWriter wrote from random workloads.

Two fields come from the replaying process, not from the profile, so the comparison passes
CPython's values in as options: ``meta.startTime`` (CPython's ``time.monotonic()`` when its
collector is made) and each thread's ``pid`` (``os.getpid()`` of the replaying process).
The machine fields (``abi``, ``oscpu``, ``platform``, the CPU counts) are compared as they
are: both sides describe the machine the test runs on.
"""

from __future__ import annotations

import io
import json
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tachyon_format
from tachyon_format.formats.gecko.writer import build, write
from tachyon_format.model.aggregate import aggregate_samples
from tests.helpers.cpython_replay import replay_cli, replay_many
from tests.helpers.cpython_workloads import ORACLE_SETTINGS, workloads, write_with_cpython
from tests.helpers.paths import DATA_DIR
from tests.helpers.reference import requires_reference

GOLDEN = sorted(DATA_DIR.glob("*.bin"))


def as_cpython_ran(profile, expected: dict) -> dict:
    """Our profile, with the replaying process's start time and pid taken from CPython's."""
    pid = expected["threads"][0]["pid"] if expected["threads"] else None
    return json.loads(json.dumps(build(profile, pid=pid,
                                       start_time_ms=expected["meta"]["startTime"])))


@pytest.mark.reference
@requires_reference
@pytest.mark.parametrize("path", GOLDEN, ids=lambda p: p.stem)
def test_golden_files_as_cpython_writes_them(path, tmp_path):
    raw = replay_cli("gecko", path, tmp_path / "cpython.json").read_bytes()
    expected = json.loads(raw)
    profile = tachyon_format.read(path)
    assert as_cpython_ran(profile, expected) == expected
    out = io.BytesIO()  # and byte for byte: same key order, same separators
    write(profile, out, pid=expected["threads"][0]["pid"] if expected["threads"] else None,
          start_time_ms=expected["meta"]["startTime"])
    assert out.getvalue() == raw


@pytest.mark.reference
@pytest.mark.slow
@requires_reference
@settings(max_examples=4, **ORACLE_SETTINGS)
@given(st.lists(workloads(), min_size=4, max_size=6))
def test_workload_files_as_cpython_writes_them(tmp_path_factory, jobs):
    tmp = tmp_path_factory.mktemp("gecko")
    files = [tmp / f"w{i}.bin" for i in range(len(jobs))]
    write_with_cpython(list(zip(files, jobs, strict=True)))
    for path, out, job in zip(files, replay_many("gecko", files, tmp), jobs, strict=True):
        expected = json.loads(out.read_bytes())
        assert as_cpython_ran(tachyon_format.read(path), expected) == expected, job["writer"]


def test_defaults_for_what_cpython_takes_from_the_replaying_process():
    profile = tachyon_format.read(DATA_DIR / "threads_wall_zstd.bin")
    gecko = build(profile)
    start_us = tachyon_format.info(profile)["start_time_us"]
    assert gecko["meta"]["startTime"] == start_us / 1000  # the recording's own start
    assert {t["pid"] for t in gecko["threads"]} == {str(os.getpid())}
    given = build(profile, pid=42, start_time_ms=1.5, machine="m", system="S", cpu_count=3)
    meta = given["meta"]
    assert (meta["startTime"], meta["abi"], meta["oscpu"], meta["platform"],
            meta["physicalCPUs"], meta["logicalCPUs"]) == (1.5, "m", "m", "S", 3, 3)
    assert {t["pid"] for t in given["threads"]} == {"42"}


def test_profiles_without_a_timeline_are_refused(tmp_path):
    profile = tachyon_format.read(DATA_DIR / "threads_wall_zstd.bin")
    with pytest.raises(ValueError, match="timeline"):
        build(aggregate_samples(profile))
    from tachyon_format.formats.jsonl.writer import dumps

    with pytest.raises(ValueError, match="timestamp per sample"):
        tachyon_format.write(tachyon_format.read(dumps(profile)), tmp_path / "x.json",
                             format="gecko")


def test_written_file_sniffs_as_gecko_and_is_not_read(tmp_path):
    path = tmp_path / "profile.gecko.json"
    tachyon_format.write(tachyon_format.read(DATA_DIR / "synthetic_edges_raw.bin"), path)
    assert tachyon_format.sniff(path) == "gecko"
    with pytest.raises(ValueError, match="cannot read gecko"):
        tachyon_format.read(path)
    assert tachyon_format.sniff(b'{"a": 1}') is None
