"""The JSONL writer against CPython's own ``replay --jsonl``: the same bytes, given the same
run id (CPython draws a fresh ``uuid4`` per run), on the golden files and on files CPython's
BinaryWriter wrote from random workloads."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tachyon_format
from tachyon_format.formats.jsonl.writer import dumps
from tachyon_format.model.aggregate import aggregate_samples
from tests.helpers.cpython_replay import replay_cli, replay_many
from tests.helpers.cpython_workloads import ORACLE_SETTINGS, workloads, write_with_cpython
from tests.helpers.paths import DATA_DIR
from tests.helpers.reference import requires_reference

GOLDEN = sorted(DATA_DIR.glob("*.bin"))


def run_id_of(data: bytes) -> str:
    return json.loads(data.split(b"\n", 1)[0])["run_id"]


@pytest.mark.reference
@requires_reference
@pytest.mark.parametrize("path", GOLDEN, ids=lambda p: p.stem)
def test_golden_files_as_cpython_writes_them(path, tmp_path):
    expected = replay_cli("jsonl", path, tmp_path / "cpython.jsonl").read_bytes()
    profile = tachyon_format.read(path)
    assert dumps(profile, run_id=run_id_of(expected)) == expected
    ours = tmp_path / "ours.jsonl"  # the public verb, format from the extension
    tachyon_format.write(profile, ours, run_id=run_id_of(expected))
    assert ours.read_bytes() == expected


@pytest.mark.reference
@pytest.mark.slow
@requires_reference
@settings(max_examples=4, **ORACLE_SETTINGS)
@given(st.lists(workloads(), min_size=4, max_size=6))
def test_workload_files_as_cpython_writes_them(tmp_path_factory, jobs):
    tmp = tmp_path_factory.mktemp("jsonl")
    files = [tmp / f"w{i}.bin" for i in range(len(jobs))]
    write_with_cpython(list(zip(files, jobs, strict=True)))
    for path, expected, job in zip(files, replay_many("jsonl", files, tmp), jobs, strict=True):
        data = expected.read_bytes()
        assert dumps(tachyon_format.read(path), run_id=run_id_of(data)) == data, job["writer"]


@pytest.mark.parametrize("path", GOLDEN, ids=lambda p: p.stem)
def test_an_aggregated_profile_gives_the_same_counts(path):
    """Rows standing for several samples give the same frames and counts; only the ids,
    which follow first appearance, may be numbered otherwise."""
    profile = tachyon_format.read(path)
    by_time = by_frame(dumps(profile, run_id="0"))
    by_rows = by_frame(dumps(aggregate_samples(profile), run_id="0"))
    assert by_rows == by_time


def by_frame(data: bytes) -> dict:
    """{frame as (file, func, location...): (self, cumulative)} and samples_total."""
    records = [json.loads(line) for line in data.splitlines()]
    strings = {s["str_id"]: s["value"] for r in records if r["type"] == "string_table"
               for s in r["strings"]}
    frames = {f["frame_id"]: (strings[f["path_str_id"]], strings[f["func_str_id"]],
                              *sorted((k, v) for k, v in f.items() if k not in (
                                  "frame_id", "path_str_id", "func_str_id")))
              for r in records if r["type"] == "frame_table" for f in r["frames"]}
    counts = {frames[e["frame_id"]]: (e["self"], e["cumulative"])
              for r in records if r["type"] == "agg" for e in r["entries"]}
    return {"frames": counts, "total": records[-1]["samples_total"]}


def test_meta_options_and_defaults():
    profile = tachyon_format.read(DATA_DIR / "threads_cpu_opcodes_raw.bin")
    meta = json.loads(dumps(profile).split(b"\n", 1)[0])
    assert meta["mode"] == "cpu" and len(meta["run_id"]) == 32
    assert meta["sample_interval_usec"] == tachyon_format.info(profile)["sample_interval_us"]
    assert meta["run_id"] != json.loads(dumps(profile).split(b"\n", 1)[0])["run_id"]
    meta = json.loads(dumps(profile, run_id="x", mode=None, sample_interval_usec=7)
                      .split(b"\n", 1)[0])
    assert meta == {"type": "meta", "v": 0, "run_id": "x", "sample_interval_usec": 7}
    assert json.loads(dumps(profile, mode=9).split(b"\n", 1)[0])["mode"] == "9"


def test_chunks_of_256_entries():
    """CPython cuts each table into records of 256 entries."""
    from tachyon_format import Frames, Profile, Samples, Stacks, Strings, Threads

    n = 600
    strings = Strings.from_texts([f"f{i}" for i in range(n)] + ["a.py"])
    frames = Frames(np.full(n, n, np.uint32), np.arange(n, dtype=np.uint32),
                    np.arange(n, dtype=np.int32), np.full(n, -1, np.int32),
                    np.full(n, -1, np.int32), np.full(n, -1, np.int32), np.full(n, -1, np.int16))
    stacks, ids = Stacks.from_lists([[i] for i in range(n)])
    profile = Profile(strings, frames, stacks, Threads.empty(),
                      Samples(stack=ids, thread=np.full(n, -1, np.int32)))
    kinds = [json.loads(line)["type"] for line in dumps(profile).splitlines()]
    assert kinds == ["meta", *["string_table"] * 3, *["frame_table"] * 3, *["agg"] * 3, "end"]
