"""fleet/partials.py: a profile's per-stack counts (global ids) become a profile again with
the same analysis; partial results combine, in any order, to what the library's merge of
the profiles gives."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tachyon_format.analysis import diff_stacks, function_table, merge
from tachyon_format.fleet.partials import FunctionCounts, StackCounts
from tests.helpers.made_up_profiles import profiles


def rows(table) -> list:
    return sorted(table.rows())


def same_stacks(a, b) -> bool:
    """Every stack (as its frames' text) has the same weight in *a* and *b*."""
    compared = diff_stacks(a, b, by=("filename", "funcname", "lineno", "column"),
                           filter_internal=False, force=True)
    return bool((compared["base"] == compared["other"]).all()) and \
        compared.info["base_total"] == compared.info["other_total"]


@settings(max_examples=40)
@given(profiles())
def test_counts_become_the_same_profile_again(profile):
    back = StackCounts.of_profile(profile).to_profile()
    for by in ("function", "line"):
        assert rows(function_table(back, by)) == rows(function_table(profile, by))
    assert same_stacks(profile, back)
    assert StackCounts.of_profile(profile).num_samples == int(
        profile.sample_counts()[profile.samples.stack >= 0].sum())


@settings(max_examples=25)
@given(st.lists(profiles(), min_size=1, max_size=4), st.randoms(use_true_random=False))
def test_combined_counts_are_the_merge(many, random):
    parts = [StackCounts.of_profile(p) for p in many]
    random.shuffle(parts)
    if len(parts) > 2:  # (as a tree reduction pairs them)
        parts = [StackCounts.combine(parts[:2]), *parts[2:]]
    combined = StackCounts.combine(parts).to_profile()
    reference = merge(many, force=True)
    assert rows(function_table(combined, "line")) == rows(function_table(reference, "line"))
    assert same_stacks(reference, combined)


@settings(max_examples=25)
@given(st.lists(profiles(), min_size=1, max_size=4))
def test_function_counts_add_up_to_the_merged_table(many):
    combined = FunctionCounts.combine([FunctionCounts.of_profile(p, "line") for p in many])
    reference = function_table(merge(many, force=True), "line")
    assert rows(combined.table()) == rows(reference)
    assert combined.table().total == reference.total


def test_the_table_breaks_ties_by_key():
    counts = FunctionCounts("function", {("b",): (3, 5), ("a",): (3, 5), ("c",): (4, 4)}, 10)
    assert counts.table().rows() == [("c", 4, 4), ("a", 3, 5), ("b", 3, 5)]


def test_nothing_combines_to_an_empty_profile():
    profile = StackCounts.combine([]).to_profile()
    assert len(profile.samples) == 0 and len(profile.stacks) == 0
    assert np.asarray(profile.sample_counts()).sum() == 0
