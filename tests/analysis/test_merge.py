"""Merged profiles against their inputs: every sample keeps its frames (as text and bytes),
thread and time; counts add up (hypothesis over made-up profiles, golden files, pprof and
gperftools profiles); incompatible inputs are refused unless told how."""

from __future__ import annotations

import shutil
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tachyon_format
from tachyon_format.analysis import function_table
from tachyon_format.analysis.merge import MergeError, merge, merge_files, pid_of
from tests.helpers.made_up_profiles import profiles
from tests.helpers.paths import DATA_DIR, SHARED_FIXTURES

FIELDS = ("filename", "funcname", "lineno", "end_lineno", "column", "end_column", "opcode")


def sample_view(profile):
    """Per sample: its frames as raw bytes and numbers, its thread ids, time and status."""
    frames, strings = profile.frames, profile.strings
    tuples = profile.stacks.tuples()

    def frame(r):
        return tuple(strings.raw(int(frames.filename[r])) if f == "filename" else
                     strings.raw(int(frames.funcname[r])) if f == "funcname" else
                     int(getattr(frames, f)[r]) for f in FIELDS)

    out = []
    for i, stack in enumerate(profile.samples.stack.tolist()):
        row = int(profile.samples.thread[i])
        out.append((tuple(frame(r) for r in tuples[stack]),
                    int(profile.threads.thread_id[row]) if row >= 0 else None,
                    None if profile.samples.timestamp_us is None else
                    int(profile.samples.timestamp_us[i]),
                    None if profile.samples.status is None else int(profile.samples.status[i])))
    return out


def counts(table):
    """``{(file, function, line): (self, cumulative)}``."""
    keys = zip(table["filename"].tolist(), table["funcname"].tolist(),
               table["lineno"].tolist(), strict=True)
    return {k: (s, c) for k, s, c in zip(keys, table["self"].tolist(),
                                         table["cumulative"].tolist(), strict=True)}


def added(*tables):
    out: dict = {}
    for table in tables:
        for key, (s, c) in table.items():
            old = out.get(key, (0, 0))
            out[key] = (old[0] + s, old[1] + c)
    return out


@settings(max_examples=40)
@given(st.lists(profiles(), min_size=1, max_size=4))
def test_merge_keeps_every_sample_and_adds_counts(inputs):
    merged = merge(inputs, pids=list(range(100, 100 + len(inputs))))
    assert sample_view(merged) == [s for p in inputs for s in sample_view(p)]
    assert counts(function_table(merged, "line")) == added(
        *(counts(function_table(p, "line")) for p in inputs))
    facts = merged.extras["merge"]
    assert facts.thread_pid().tolist() == [100 + i for i, p in enumerate(inputs)
                                           for _ in range(len(p.threads))]
    assert len(merged.frames) <= sum(len(p.frames) for p in inputs)


def test_subprocess_files_keep_their_pids(tmp_path):
    names = ["threads_wall_zstd.bin", "deep_recursion_wall.bin", "invalid_utf8_strings.bin"]
    paths = []
    for pid, name in zip((4242, 4243, 4244), names, strict=True):
        paths.append(tmp_path / f"profile_{pid}.bin")
        shutil.copy(DATA_DIR / name, paths[-1])
    inputs = [tachyon_format.read(p) for p in paths]
    # (force: the third was sampled on CPU)
    merged = merge_files(dict(zip(paths, inputs, strict=True)), force=True)
    assert sample_view(merged) == [s for p in inputs for s in sample_view(p)]
    pid = merged.extras["merge"].thread_pid()
    rows = merged.samples.thread
    assert [int(np.sum(pid[rows] == p)) for p in (4242, 4243, 4244)] == [
        len(p.samples) for p in inputs]
    out = tmp_path / "merged.bin"
    tachyon_format.write(merged, out)
    # (the same samples; a Tachyon file may hand them back in another order across threads)
    assert Counter(sample_view(tachyon_format.read(out))) == Counter(sample_view(merged))


def test_pid_of_names():
    assert pid_of("out/profile_1234.bin") == 1234
    assert pid_of("run_77.pb.gz") == 77
    assert pid_of("profile.bin") is None


def test_different_modes_are_refused_unless_forced():
    wall = tachyon_format.read(DATA_DIR / "threads_wall_zstd.bin")
    gil = tachyon_format.read(DATA_DIR / "threads_gil_blocking.bin")
    with pytest.raises(MergeError, match="sampled as 'gil'"):
        merge([wall, gil])
    forced = merge([wall, gil], force=True)
    assert len(forced.samples) == len(wall.samples) + len(gil.samples)
    assert forced.meta.period_type == wall.meta.period_type


PPROF = SHARED_FIXTURES / "pprof_proto/google-pprof/internal/report/testdata/sample.cpu"
GPERF = SHARED_FIXTURES / "gperftools_cpu/google-pprof/profile/testdata/cppbench.cpu"


@pytest.mark.parametrize("path", [PPROF, GPERF], ids=lambda p: p.name)
def test_native_profiles_merge_by_one_sample_type(path):
    if not path.exists():
        pytest.skip(f"third-party fixture {path.name} absent (../shared/fixtures)")
    native = tachyon_format.read(path)
    python = tachyon_format.read(DATA_DIR / "threads_wall_zstd.bin")
    with pytest.raises(MergeError, match="sample types"):
        merge([native, python], force=True)
    merged = merge([native, python], sample_type="samples", force=True)
    assert [v.type for v in merged.meta.sample_types] == ["samples"]
    assert counts(function_table(merged, "line")) == added(
        counts(function_table(native, "line", sample_type="samples")),
        counts(function_table(python, "line")))
    # the same profile twice: every count doubles, the tables do not grow
    twice = merge([native, native])
    assert len(twice.frames) <= len(native.frames)
    once = counts(function_table(native, "line"))
    assert counts(function_table(twice, "line")) == added(once, once)
