"""The pstats writer against the files CPython 3.15's ``replay --pstats -o`` wrote (the
goldens in tests/data), against a scalar port of its collector, and through ``pstats``."""

from __future__ import annotations

import io
import marshal
import pstats
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tachyon_format
from tachyon_format.formats.pstats.writer import SAMPLED_MARKER, build
from tachyon_format.model import Frames, Meta, Profile, Samples, Stacks, Strings, Threads, ValueType
from tachyon_format.model.aggregate import aggregate_samples
from tests.helpers.made_up_profiles import renumbered
from tests.helpers.paths import DATA_DIR

GOLDENS = sorted(DATA_DIR.glob("*.pstats"))
HAS_SAMPLED_STATS = sys.version_info >= (3, 15)


def golden(path) -> dict:
    return marshal.loads(path.read_bytes())


def test_there_are_goldens():
    assert len(GOLDENS) >= 12


@pytest.mark.parametrize("path", GOLDENS, ids=lambda p: p.stem)
def test_the_dict_equals_cpythons(path, tmp_path):
    profile = tachyon_format.read(path.with_suffix(".bin"))
    out = tmp_path / "out.pstats"
    tachyon_format.write(profile, out)  # the format from the extension
    ours = marshal.loads(out.read_bytes())
    assert ours == golden(path)
    assert list(ours) == list(golden(path))  # CPython's first-meeting order too
    for key, value in ours.items():  # (== would let 1 == 1.0 and True == 1 pass)
        assert [type(x) for x in value] == [type(x) for x in golden(path)[key]] \
            if key != SAMPLED_MARKER else value is True


@pytest.mark.parametrize("path", GOLDENS, ids=lambda p: p.stem)
def test_an_aggregated_profile_gives_the_same_dict(path):
    profile = tachyon_format.read(path.with_suffix(".bin"))
    assert build(aggregate_samples(profile)) == golden(path)
    assert build(aggregate_samples(profile, keep_status=False)) == golden(path)


@pytest.mark.parametrize("path", GOLDENS, ids=lambda p: p.stem)
def test_without_the_marker_pstats_of_any_python_loads_it(path, tmp_path):
    out = tmp_path / "out.pstats"
    tachyon_format.write(tachyon_format.read(path.with_suffix(".bin")), out,
                         sampled_marker=False)
    expected = {k: v for k, v in golden(path).items() if k != SAMPLED_MARKER}
    assert marshal.loads(out.read_bytes()) == expected
    if not expected:
        return  # (pstats.Stats refuses a file with no functions)
    stats = pstats.Stats(str(out), stream=io.StringIO())
    assert stats.stats == expected
    assert stats.total_calls == sum(v[1] for v in expected.values())
    stats.sort_stats("cumulative").print_stats(5)


@pytest.mark.skipif(not HAS_SAMPLED_STATS, reason="pstats.SampledStats is new in Python 3.15")
@pytest.mark.parametrize("path", [p for p in GOLDENS if len(golden(p)) > 1],
                         ids=lambda p: p.stem)
def test_with_the_marker_pstats_315_loads_it_as_sampled(path, tmp_path):
    out = tmp_path / "out.pstats"
    tachyon_format.write(tachyon_format.read(path.with_suffix(".bin")), out)
    stream = io.StringIO()
    stats = pstats.Stats(str(out), stream=stream)
    assert type(stats).__name__ == "SampledStats"
    # ("nsamples" is not a sort key here: a SampledStats loaded from a file keeps Stats' keys)
    stats.sort_stats("cumulative").print_stats(3)
    assert "nsamples" in stream.getvalue()


@pytest.mark.skipif(HAS_SAMPLED_STATS, reason="checks pstats before 3.15")
def test_with_the_marker_older_pstats_cannot_load_it(tmp_path):
    # why sampled_marker=False exists: CPython's own file fails the same way
    with pytest.raises(TypeError):
        pstats.Stats(str(GOLDENS[-1]), stream=io.StringIO())


# -- a scalar port of CPython's PstatsCollector as the oracle on random profiles ------------

def collector_model(stacks_of_samples, weights, interval_us):
    """``PstatsCollector._process_frames`` + ``create_stats``, one sample at a time."""
    result, callers = {}, {}
    for frames, weight in zip(stacks_of_samples, weights, strict=True):
        frames = [f for f in frames if not f[0].endswith("_sync_coordinator.py")]
        if not frames or weight == 0:
            continue
        seen = set()
        for f in frames:
            entry = result.setdefault(f, [0, 0])
            if f not in seen:
                seen.add(f)
                entry[1] += weight
        result[frames[0]][0] += weight
        for callee, caller in zip(frames, frames[1:], strict=False):
            edges = callers.setdefault(callee, {})
            edges[caller] = edges.get(caller, 0) + weight
    sec = interval_us / 1_000_000
    return {f: (d, c, d * sec, c * sec, callers.get(f, {})) for f, (d, c) in result.items()}


names = st.sampled_from(["a.py", "/x/b.py", "c/_sync_coordinator.py", "", "é.py"])
frame_rows = st.tuples(names, st.sampled_from([-1, 0, 1, 7]), st.sampled_from(["f", "g", ""]))


@st.composite
def random_profiles(draw):
    frames = draw(st.lists(frame_rows, min_size=1, max_size=6))
    stacks = draw(st.lists(st.lists(st.integers(0, len(frames) - 1), max_size=7),
                           min_size=1, max_size=6))
    picks = draw(st.lists(st.integers(0, len(stacks) - 1), max_size=40))
    weights = draw(st.lists(st.integers(0, 3), min_size=len(picks), max_size=len(picks)))
    texts = sorted({t for f in frames for t in (f[0], f[2])})
    strings = Strings.from_texts(texts)
    n = len(frames)
    column = np.array
    table = Frames(filename=column([texts.index(f[0]) for f in frames], np.uint32),
                   funcname=column([texts.index(f[2]) for f in frames], np.uint32),
                   lineno=column([f[1] for f in frames], np.int32),
                   end_lineno=column([f[1] for f in frames], np.int32),
                   column=np.full(n, -1, np.int32), end_column=np.full(n, -1, np.int32),
                   opcode=np.full(n, -1, np.int16))
    tree, ids = Stacks.from_lists(stacks)
    samples = Samples(stack=ids[np.array(picks, np.int64)].astype(np.int32),
                      thread=np.zeros(len(picks), np.int32),
                      values=np.array(weights, np.int64).reshape(-1, 1))
    profile = Profile(strings, table, tree, Threads.empty(), samples,
                      meta=Meta(sample_types=(ValueType("samples", "count"),),
                                period_type=ValueType("cpu", "nanoseconds"), period=2_000_000))
    expected = [[(frames[i][0], 0 if frames[i][1] == -1 else frames[i][1],
                  frames[i][2]) for i in stacks[p]] for p in picks]
    return profile, expected, weights


@settings(max_examples=60, deadline=None)
@given(random_profiles())
def test_random_profiles_match_the_collector_model(case):
    profile, stacks_of_samples, weights = case
    expected = collector_model(stacks_of_samples, weights, 2000)
    expected_with_marker = {**expected, SAMPLED_MARKER: True}
    assert build(profile) == expected_with_marker
    assert list(build(profile, sampled_marker=False)) == list(expected)
    assert build(aggregate_samples(profile)) == expected_with_marker


def test_profiles_of_native_code_get_names(tmp_path):
    profile = tachyon_format.read(DATA_DIR / "gperftools" / "libprofiler_mixed.prof")
    out = tmp_path / "native.pstats"
    tachyon_format.write(profile, out, sampled_marker=False)
    stats = marshal.loads(out.read_bytes())
    assert stats and all(filename and funcname for filename, _, funcname in stats)
    counts = profile.weights("samples")
    assert sum(v[0] for v in stats.values()) == int(counts[profile.samples.stack >= 0].sum())
    # a period of 10 ms: 10_000 us per sample
    assert all(v[2] == v[0] * (10_000 / 1_000_000) for v in stats.values())
    pstats.Stats(str(out), stream=io.StringIO()).print_stats()


def test_a_pprof_profile_is_writable(tmp_path):
    profile = tachyon_format.read(DATA_DIR / "threads_wall_zstd.bin")
    tachyon_format.write(profile, tmp_path / "p.pb.gz")
    again = tachyon_format.read(tmp_path / "p.pb.gz")
    stats = build(again, interval_us=2000)
    assert stats == golden(DATA_DIR / "threads_wall_zstd.pstats")


@settings(max_examples=40, deadline=None)
@given(random_profiles(), st.randoms(use_true_random=False))
def test_the_numbering_of_the_stack_tree_does_not_matter(case, random):
    """Counts come from passes over the tree; a tree whose parents come after their
    children (as a reader may number it) gives the same dict, in the same order."""
    profile = case[0]
    permutation = list(range(len(profile.stacks)))
    random.shuffle(permutation)
    expected = build(profile)
    got = build(renumbered(profile, permutation))
    assert got == expected and list(got) == list(expected)
