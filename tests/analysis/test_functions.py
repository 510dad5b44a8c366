"""Self and cumulative counts against CPython's own pstats output (the golden ``.pstats``
files are ``replay --pstats -o``'s), the project's exact pstats counts, plain-Python models
(hypothesis), and on pprof and gperftools profiles."""

from __future__ import annotations

import marshal
import re
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tachyon_format
from tachyon_format.analysis import callees, callers, function_table, top
from tachyon_format.analysis.keys import fields_of
from tachyon_format.formats.pstats.stats import function_stats
from tachyon_format.model.aggregate import aggregate_samples
from tests.analysis.models import neighbours, self_and_cumulative
from tests.helpers.made_up_profiles import profiles
from tests.helpers.paths import DATA_DIR, SHARED_FIXTURES

GOLDEN_BINS = sorted(DATA_DIR.glob("*.bin"))
KEY_FIELDS = ("filename", "funcname", "lineno")


def as_dicts(table, fields, group=()):
    names = [*group, *fields]
    keys = list(zip(*(table[n].tolist() for n in names), strict=True))
    return (dict(zip(keys, table["self"].tolist(), strict=True)),
            dict(zip(keys, table["cumulative"].tolist(), strict=True)))


@pytest.mark.parametrize("path", GOLDEN_BINS, ids=lambda p: p.stem)
def test_per_line_equals_cpythons_pstats(path):
    """by="line" is the pstats key: self and cumulative equal CPython's direct and
    cumulative counts (``replay --pstats -o``), and ``top`` per function sums them."""
    profile = tachyon_format.read(path)
    stats = marshal.loads(path.with_suffix(".pstats").read_bytes())
    cpython = {(file, name, line): value for (file, line, name), value in (
        (k, v) for k, v in stats.items() if len(k) == 3)}  # (and a key ("__sampled__",))
    self_, cumulative = as_dicts(function_table(profile, "line"), KEY_FIELDS)
    assert self_ == {k: v[0] for k, v in cpython.items()}
    assert cumulative == {k: v[1] for k, v in cpython.items()}
    # per (file, function): the per-line direct counts summed; the total is every sample's
    per_function = Counter()
    for (file, name, _), value in cpython.items():
        per_function[(file, name)] += value[0]
    table = top(profile, n=10**6, by="file_function")
    assert dict(zip(zip(table["filename"].tolist(), table["funcname"].tolist(), strict=True),
                    table["self"].tolist(), strict=True)) == per_function
    assert table.total == sum(v[0] for v in cpython.values())


@pytest.mark.parametrize("path", GOLDEN_BINS, ids=lambda p: p.stem)
def test_per_line_equals_the_pstats_writer_and_aggregation_changes_nothing(path):
    profile = tachyon_format.read(path)
    stats = function_stats(profile)
    functions = [(file, name, line) for file, line, name in stats.functions]
    expected = ({f: int(d) for f, d in zip(functions, stats.direct, strict=True)},
                {f: int(c) for f, c in zip(functions, stats.cumulative, strict=True)})
    assert as_dicts(function_table(profile, "line"), KEY_FIELDS) == expected
    aggregated = aggregate_samples(profile)
    for by in ("function", "opcode", ("lineno", "column")):
        fields = fields_of(by)
        assert as_dicts(function_table(aggregated, by), fields) == as_dicts(
            function_table(profile, by), fields)


@settings(max_examples=60)
@given(profiles(), st.sampled_from(["function", "file_function", "line", "opcode",
                                    ("filename", "column")]),
       st.booleans(), st.booleans())
def test_counts_equal_the_plain_python_model(profile, by, filter_internal, per_thread):
    fields = fields_of(by)
    table = function_table(profile, by, filter_internal=filter_internal,
                           per="thread" if per_thread else ())
    if per_thread:  # (the model keys by thread row; the table shows the thread's ids)
        row_of = {int(t): i for i, t in enumerate(profile.threads.thread_id.tolist())}
        table.columns["thread"] = np.array([row_of[t] for t in table["thread_id"].tolist()],
                                           np.int64)
    got = as_dicts(table, fields, ("thread",) if per_thread else ())
    expected = self_and_cumulative(profile, fields, filter_internal=filter_internal,
                                   per_thread=per_thread)
    assert got == (dict(+expected[0]) | {k: 0 for k in expected[1] if k not in expected[0]},
                   dict(expected[1]))
    assert table.total == sum(expected[0].values())
    assert list(table["self"]) == sorted(table["self"], reverse=True)


@settings(max_examples=60)
@given(profiles(), st.sampled_from(["a.py", "b.py", "f", ".*", "<.*>"]),
       st.sampled_from(["callers", "callees"]))
def test_callers_and_callees_equal_the_model(profile, pattern, direction):
    run = callers if direction == "callers" else callees
    table = run(profile, pattern, by="file_function")
    got = dict(zip(zip(table["filename"].tolist(), table["funcname"].tolist(), strict=True),
                   table["count"].tolist(), strict=True))
    assert got == dict(neighbours(profile, re.compile(pattern), ("filename", "funcname"),
                                  direction))


@settings(max_examples=30)
@given(profiles())
def test_per_status_views_add_up_to_the_whole(profile):
    whole = as_dicts(function_table(profile, "line"), KEY_FIELDS)
    per_status = function_table(profile, "line", per="status")
    summed = Counter(), Counter()
    for row in zip(*(per_status[n].tolist() for n in (*KEY_FIELDS, "self", "cumulative")),
                   strict=True):
        summed[0][row[:3]] += row[3]
        summed[1][row[:3]] += row[4]
    assert (dict(summed[0]), dict(summed[1])) == whole


NATIVE = [SHARED_FIXTURES / p for p in (
    "pprof_proto/google-pprof/internal/report/testdata/sample.cpu",
    "pprof_proto/parca/pkg/query/testdata/profile-with-labels.pb.gz",
    "gperftools_cpu/google-pprof/profile/testdata/cppbench.cpu",
    "gperftools_cpu/google-pprof/profile/testdata/gobench.cpu",
)] + sorted((DATA_DIR / "gperftools").glob("*.prof"))


@pytest.mark.parametrize("path", NATIVE, ids=lambda p: p.name)
def test_pprof_and_gperftools_profiles_equal_the_model(path):
    if not path.exists():
        pytest.skip(f"third-party fixture {path.name} absent (../shared/fixtures)")
    profile = tachyon_format.read(path)
    for sample_type in (None, *(v.type for v in profile.meta.sample_types)):
        fields = fields_of("file_function")
        table = function_table(profile, "file_function", sample_type=sample_type)
        self_, cumulative = self_and_cumulative(profile, fields, sample_type)
        got = as_dicts(table, fields)
        assert {k: v for k, v in got[0].items() if v} == {k: v for k, v in self_.items() if v}
        assert {k: v for k, v in got[1].items() if v} == {
            k: v for k, v in cumulative.items() if v}


def test_unknown_grouping_and_view_are_refused():
    profile = tachyon_format.read(GOLDEN_BINS[0])
    with pytest.raises(ValueError, match="unknown grouping"):
        function_table(profile, "module")
    with pytest.raises(ValueError, match="unknown view"):
        function_table(profile, per="process")
