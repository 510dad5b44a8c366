"""Diffs against plain-Python per-sample counts (hypothesis), a profile against itself and
against itself twice over (merge), and refusals of profiles that measure different things."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings

import tachyon_format
from tachyon_format.analysis.diff import DiffError, diff, diff_stacks
from tachyon_format.analysis.merge import merge
from tests.analysis.models import frame_key, self_and_cumulative, visible
from tests.helpers.made_up_profiles import profiles
from tests.helpers.paths import DATA_DIR, SHARED_FIXTURES

FIELDS = ("filename", "funcname")


def stack_counts(profile):
    out = Counter()
    for stack, w in zip(profile.samples.stack.tolist(), profile.sample_counts().tolist(),
                        strict=True):
        rows = visible(profile, stack) if stack >= 0 else []
        if rows and w:
            out[";".join(":".join(map(str, frame_key(profile, r, FIELDS)))
                         for r in reversed(rows))] += w
    return out


@settings(max_examples=50)
@given(profiles(), profiles())
def test_diff_equals_per_sample_counts(base, other):
    table = diff(base, other, "file_function")
    keys = list(zip(table["filename"].tolist(), table["funcname"].tolist(), strict=True))
    assert len(set(keys)) == len(keys)
    for side, profile in (("base", base), ("other", other)):
        self_, cumulative = self_and_cumulative(profile, FIELDS)
        assert {k: v for k, v in zip(keys, table[f"{side}_cumulative"].tolist(), strict=True)
                if v} == dict(cumulative)
        assert {k: v for k, v in zip(keys, table[f"{side}_self"].tolist(), strict=True)
                if v} == {k: v for k, v in self_.items() if v}
        total = sum(self_.values())
        if total:
            assert np.allclose(table[f"{side}_self_fraction"], table[f"{side}_self"] / total)
    assert np.allclose(table["delta_self_fraction"],
                       table["other_self_fraction"] - table["base_self_fraction"])
    stacks = diff_stacks(base, other, "file_function")
    for side, profile in (("base", base), ("other", other)):
        assert {k: v for k, v in zip(stacks["stack"].tolist(), stacks[side].tolist(),
                                     strict=True) if v} == dict(stack_counts(profile))


@pytest.mark.parametrize("name", ["threads_wall_zstd", "deep_recursion_wall",
                                  "exceptions_gc_gil_native"])
def test_a_profile_twice_over_changes_time_not_shares(name):
    profile = tachyon_format.read(DATA_DIR / f"{name}.bin")
    twice = merge([profile, profile])
    for table, value in ((diff(profile, twice, "line"), "self"),
                         (diff_stacks(profile, twice), "")):
        suffix = f"_{value}" if value else ""
        assert np.allclose(table[f"delta{suffix}_fraction"], 0)
        assert np.array_equal(table[f"other{suffix}"], 2 * table[f"base{suffix}"])
        period_ms = profile.meta.period / 1e6
        assert np.allclose(table[f"delta{suffix}_ms"], table[f"base{suffix}"] * period_ms)
    same = diff(profile, profile)
    assert not same["delta_self_fraction"].any() and not same["delta_cumulative_ms"].any()


def test_different_modes_are_refused_unless_forced():
    wall = tachyon_format.read(DATA_DIR / "threads_wall_zstd.bin")
    gil = tachyon_format.read(DATA_DIR / "threads_gil_blocking.bin")
    with pytest.raises(DiffError, match="'wall' and 'gil'"):
        diff(wall, gil)
    with pytest.raises(DiffError):
        diff_stacks(wall, gil)
    table = diff(wall, gil, force=True)
    assert table["base_self"].sum() == table.info["base_total"] == len(wall.samples)


def test_different_sample_types_are_refused():
    path = SHARED_FIXTURES / "pprof_proto/google-pprof/internal/report/testdata/sample.cpu"
    if not path.exists():
        pytest.skip(f"third-party fixture {path.name} absent (../shared/fixtures)")
    native = tachyon_format.read(path)
    kinds = [v.type for v in native.meta.sample_types]
    python = tachyon_format.read(DATA_DIR / "threads_wall_zstd.bin")
    with pytest.raises(DiffError, match="measures no"):
        diff(native, python, sample_type=kinds[-1], force=True)
    by_count = diff(native, python, force=True)  # (both count samples by default)
    assert by_count.info["other_total"] == len(python.samples)
    assert np.allclose(diff(native, native, sample_type=kinds[-1])["delta_self_fraction"], 0)
