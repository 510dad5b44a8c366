"""Reading JSONL: what the file holds (frames, per-frame self and cumulative counts, the
meta record) equals what CPython's own decode of the Tachyon file implies, and a file read
and written again is the same bytes."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings

import tachyon_format
from tachyon_format.formats.jsonl.facts import JsonlFacts
from tachyon_format.formats.jsonl.writer import dumps
from tests.helpers.cpython_replay import replay_cli
from tests.helpers.golden import reference_text
from tests.helpers.made_up_profiles import profiles
from tests.helpers.paths import DATA_DIR
from tests.helpers.reference import requires_reference

GOLDEN = sorted(DATA_DIR.glob("*.bin"))
INTERNAL = "_sync_coordinator.py"


def expected_counts(path) -> tuple[dict, int, dict]:
    """From CPython's canonical decode (``NAME.ref.jsonl.gz``), one sample at a time: per
    frame as JSONL keys it, the samples it ends and the samples holding it; the total; the
    info line."""
    lines = reference_text(path).splitlines()
    info = json.loads(lines[0])
    self_counts: Counter = Counter()
    cumulative: Counter = Counter()
    total = 0
    for line in lines[1:]:
        *_, frames = json.loads(line)
        keys = [frame_key(f) for f in frames if not f[0].endswith(INTERNAL)]
        if not keys:
            continue
        total += 1
        self_counts[keys[0]] += 1
        cumulative.update(set(keys))
    return {k: (self_counts[k], cumulative[k]) for k in cumulative}, total, info


def frame_key(frame: list) -> tuple:
    filename, funcname, lineno, end_lineno, column, end_column, _opcode = frame
    if lineno is None:
        return (filename, funcname, 0, None, None, None)
    return (filename, funcname, lineno, end_lineno if end_lineno > 0 else None,
            column if column >= 0 else None, end_column if end_column >= 0 else None)


def read_counts(profile) -> dict:
    f, s = profile.frames, profile.strings
    self_counts = np.zeros(len(f), np.int64)
    np.add.at(self_counts, profile.stacks.frame[profile.samples.stack], profile.weights())
    cumulative = profile.extras["jsonl"].cumulative
    out = {}
    for row in range(len(f)):
        line = int(f.lineno[row])
        optional = [int(v) for v in (f.end_lineno[row], f.column[row], f.end_column[row])]
        key = (s[f.filename[row]], s[f.funcname[row]], max(line, 0),
               *[None if v == -1 else v for v in optional])
        out[key] = (int(self_counts[row]), int(cumulative[row]))
    return out


def check(path, data: bytes) -> None:
    profile = tachyon_format.read(data)
    expected, total, info = expected_counts(path)
    assert read_counts(profile) == expected
    assert int(np.sum(profile.weights())) == total
    facts = profile.extras["jsonl"]
    assert isinstance(facts, JsonlFacts) and facts.samples_total == total
    assert facts.meta["sample_interval_usec"] == info["sample_interval_us"]
    assert profile.meta.period == info["sample_interval_us"] * 1000
    assert len(profile.threads) == 0 and profile.samples.timestamp_us is None
    assert dumps(profile) == data  # read and written again: the same bytes


@pytest.mark.reference
@requires_reference
@pytest.mark.parametrize("path", GOLDEN, ids=lambda p: p.stem)
def test_cpython_output_reads_as_its_samples_imply(path, tmp_path):
    check(path, replay_cli("jsonl", path, tmp_path / "cpython.jsonl").read_bytes())


@pytest.mark.parametrize("path", GOLDEN, ids=lambda p: p.stem)
def test_our_output_reads_as_the_samples_imply(path):
    check(path, dumps(tachyon_format.read(path)))


def test_verbs(tmp_path):
    profile = tachyon_format.read(DATA_DIR / "exceptions_mode_zstd.bin")
    path = tmp_path / "p.jsonl"
    tachyon_format.write(profile, path)
    data = path.read_bytes()
    assert tachyon_format.sniff(data) == "jsonl"
    assert tachyon_format.validate(path) == []
    info = tachyon_format.info(path)
    assert info["mode"] == "exception" and info["samples_total"] > 0
    assert tachyon_format.info(tachyon_format.read(path)) == info
    # a JSONL file read becomes another format: its flat self-time profile
    tachyon_format.write(tachyon_format.read(path), tmp_path / "p.pb.gz")
    assert tachyon_format.read(tmp_path / "p.pb.gz").sample_counts().sum() == info["samples_total"]


def test_unknown_records_and_fields_are_ignored():
    data = dumps(tachyon_format.read(DATA_DIR / "synthetic_edges_raw.bin"), run_id="r")
    lines = data.splitlines(keepends=True)
    extra = json.dumps({"type": "future", "v": 0, "run_id": "r", "x": [1]}).encode() + b"\n"
    meta = json.loads(lines[0])
    meta["new_field"] = {"a": 1}
    changed = json.dumps(meta, separators=(",", ":")).encode() + b"\n"
    profile = tachyon_format.read(b"".join([changed, *lines[1:-1], extra, lines[-1]]))
    plain = tachyon_format.read(data)
    assert read_counts(profile) == read_counts(plain)


def test_a_location_free_frame_reads_as_no_location():
    """CPython writes a frame without location as line 0 and nothing else."""
    profile = tachyon_format.read(dumps(tachyon_format.read(
        DATA_DIR / "exceptions_gc_gil_native.bin")))
    f = profile.frames
    names = [profile.strings[i] for i in f.funcname]
    native = names.index("<native>")
    assert f.lineno[native] == -1 and f.column[native] == -1


def scalar_counts(profile) -> dict:
    """The collector modelled one sample at a time, from the profile's stacks."""
    s, f = profile.strings, profile.frames
    tuples = profile.stacks.tuples()
    self_counts: Counter = Counter()
    cumulative: Counter = Counter()
    for stack in profile.samples.stack.tolist():
        keys = []
        for i in tuples[stack]:
            if s[f.filename[i]].endswith(INTERNAL):
                continue
            located = f.lineno[i] != -1
            position = [int(v) if located else None for v in (
                f.lineno[i], f.end_lineno[i], f.column[i], f.end_column[i])]
            keys.append(frame_key([s[f.filename[i]], s[f.funcname[i]], *position, None]))
        if keys:
            self_counts[keys[0]] += 1
            cumulative.update(set(keys))
    return {k: (self_counts[k], cumulative[k]) for k in cumulative}


@settings(max_examples=60)
@given(profiles())
def test_made_up_profiles_write_read_and_write_again(profile):
    data = dumps(profile)
    back = tachyon_format.read(data)
    assert read_counts(back) == scalar_counts(profile)
    assert dumps(back) == data
