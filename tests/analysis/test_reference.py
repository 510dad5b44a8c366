"""``function_table(by="line")`` against CPython 3.15 itself: random workloads written by
CPython's ``BinaryWriter``, converted by the real ``replay --pstats -o`` (through
``tests/helpers/cpython_replay.py``), compared with what this package counts."""

from __future__ import annotations

import marshal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tachyon_format
from tachyon_format.analysis import function_table
from tests.helpers.cpython_replay import replay_outputs
from tests.helpers.cpython_workloads import ORACLE_SETTINGS, workloads, write_with_cpython
from tests.helpers.reference import requires_reference

pytestmark = [pytest.mark.reference, pytest.mark.slow, requires_reference]


@settings(max_examples=4, **ORACLE_SETTINGS)
@given(st.lists(workloads(), min_size=4, max_size=8))
def test_counts_per_line_equal_cpythons_replay(tmp_path_factory, jobs):
    tmp = tmp_path_factory.mktemp("analysis")
    binaries = [tmp / f"w{i}.bin" for i in range(len(jobs))]
    write_with_cpython(list(zip(binaries, jobs, strict=True)))
    outs = [b.with_suffix(".pstats") for b in binaries]
    replay_outputs([["--pstats", "-o", o, b] for b, o in zip(binaries, outs, strict=True)])
    for binary, out, job in zip(binaries, outs, jobs, strict=True):
        cpython = {(file, name, line): value[:2] for key, value in
                   marshal.loads(out.read_bytes()).items() if len(key) == 3
                   for file, line, name in [key]}
        table = function_table(tachyon_format.read(binary), "line")
        ours = {(f, n, ln): (s, c) for f, n, ln, s, c in table.rows()}
        assert ours == cpython, job["writer"]
        assert table.total == sum(direct for direct, _ in cpython.values())
