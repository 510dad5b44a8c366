"""The function-merged call tree: CPython 3.15's own flame graph collector as the oracle, and
a scalar model (one path per sample) on made-up profiles."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings

import tachyon_format
from tachyon_format.model.aggregate import aggregate_samples
from tachyon_format.render.calltree import PROFILER_FILE_SUFFIXES, call_tree
from tests.helpers.cpython_flamegraph import cpython_trees, function_paths
from tests.helpers.made_up_profiles import profiles
from tests.helpers.paths import CPYTHON_FIXTURES, DATA_DIR
from tests.helpers.reference import requires_reference

GOLDEN = sorted(DATA_DIR.glob("*.bin"))


def _compare_with_cpython(files: list[Path]) -> None:
    for path, theirs in zip(files, cpython_trees(files), strict=True):
        tree = call_tree(tachyon_format.read(path))
        # CPython keys a node by its line too: its nodes of one function path are summed
        assert tree.paths() == {path: tuple(sums) for path, sums in function_paths(theirs).items()}
        # CPython does not count samples left without frames; the root keeps them as its self
        assert int(tree.total[0] - tree.self_weight[0]) == theirs["value"], path.name


@pytest.mark.reference
@requires_reference
def test_the_tree_is_cpythons_flame_graph_tree_on_the_golden_files():
    _compare_with_cpython(GOLDEN)


@pytest.mark.reference
@pytest.mark.slow
@requires_reference
def test_the_tree_is_cpythons_flame_graph_tree_on_cpythons_own_profiles():
    files = sorted(CPYTHON_FIXTURES.glob("*.bin"))
    if not files:
        pytest.skip(f"no shared CPython fixtures under {CPYTHON_FIXTURES}")
    _compare_with_cpython(files)


def _model(profile) -> dict:
    """One path of (file, function) per sample, the profiler's frames dropped, counted."""
    strings, frames = profile.strings, profile.frames
    stack_of = profile.stacks.tuples()
    totals: Counter = Counter()
    selves: Counter = Counter()
    for stack, weight in zip(profile.samples.stack.tolist(), profile.sample_counts().tolist(),
                             strict=True):
        path = tuple((strings[frames.filename[f]], strings[frames.funcname[f]])
                     for f in reversed(stack_of[stack]))
        path = tuple(p for p in path if not p[0].endswith(PROFILER_FILE_SUFFIXES))
        for depth in range(1, len(path) + 1):
            totals[path[:depth]] += weight
        if path:
            selves[path] += weight
    return {path: (totals[path], selves[path]) for path in totals}


@settings(max_examples=60, deadline=None)
@given(profiles())
def test_the_tree_is_the_per_sample_model(profile):
    tree = call_tree(profile)
    assert tree.paths() == _model(profile)
    assert int(tree.total[0]) == int(profile.sample_counts().sum())
    # an aggregated profile (rows standing for many samples) gives the same tree
    assert call_tree(aggregate_samples(profile)).paths() == tree.paths()


@settings(max_examples=60, deadline=None)
@given(profiles())
def test_layout_nests_children_inside_their_parent(profile):
    tree = call_tree(profile)
    x = tree.offsets()
    parent = tree.parent[1:].astype(np.int64)
    assert (tree.parent[1:] < np.arange(1, len(tree))).all()  # parents first
    assert (x[1:] >= x[parent]).all()
    assert (x[1:] + tree.total[1:] <= x[parent] + tree.total[parent]).all()
    # siblings do not overlap: their spans add up to at most the parent's
    spans = np.bincount(parent, tree.total[1:], minlength=len(tree))
    assert (spans <= tree.total).all()
