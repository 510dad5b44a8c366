"""The pstats writer and report against CPython 3.15's real ``replay --pstats``: on the
golden files (every sort key, limits, with and without the summary) and on random workloads
written by CPython's own ``BinaryWriter``. Nothing is masked in the report: the lines of the
CLI that name the input path (the "Replaying ..." header, the progress bar and "Replayed N
samples") are not part of the report and are cut off whole."""

from __future__ import annotations

import marshal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tachyon_format
from tachyon_format.formats.pstats.report import SORT_KEYS, report
from tachyon_format.formats.pstats.writer import build
from tests.helpers.cpython_replay import replay_outputs, report_of
from tests.helpers.cpython_workloads import ORACLE_SETTINGS, workloads, write_with_cpython
from tests.helpers.paths import DATA_DIR
from tests.helpers.reference import requires_reference

pytestmark = [pytest.mark.reference, pytest.mark.slow, requires_reference]

GOLDEN_BINS = sorted(DATA_DIR.glob("*.bin"))
LIMITS = (None, 3, 0, 1000)  # None: the CLI's default, 15


def test_reports_on_the_goldens_equal_cpythons():
    cases = [(path, sort, limit, summary) for path in GOLDEN_BINS for sort in SORT_KEYS
             for limit in LIMITS for summary in (True, False)
             if summary or (sort == "nsamples" and limit is None)]
    runs = [["--sort", sort, *([] if limit is None else ["--limit", str(limit)]),
             *([] if summary else ["--no-summary"]), path]
            for path, sort, limit, summary in cases]
    printed = replay_outputs(runs)
    profiles = {path: tachyon_format.read(path) for path in GOLDEN_BINS}
    for (path, sort, limit, summary), text in zip(cases, printed, strict=True):
        ours = report(profiles[path], sort=sort, limit=15 if limit is None else limit,
                      summary=summary)
        assert ours == report_of(text), (path.name, sort, limit, summary)


@settings(max_examples=4, **ORACLE_SETTINGS)
@given(st.lists(workloads(), min_size=4, max_size=8))
def test_random_workloads_equal_cpythons_replay(tmp_path_factory, jobs):
    tmp = tmp_path_factory.mktemp("pstats")
    binaries = [tmp / f"w{i}.bin" for i in range(len(jobs))]
    write_with_cpython(list(zip(binaries, jobs, strict=True)))
    outs = [b.with_suffix(".pstats") for b in binaries]
    printed = replay_outputs([*(["--pstats", "-o", o, b] for b, o in zip(binaries, outs,
                                                                          strict=True)),
                              *(["--sort", "cumtime", "--limit", "5", b] for b in binaries)])
    for binary, out, text, job in zip(binaries, outs, printed[len(binaries):], jobs,
                                      strict=True):
        profile = tachyon_format.read(binary)
        assert build(profile) == marshal.loads(out.read_bytes()), job["writer"]
        assert report(profile, sort="cumtime", limit=5) == report_of(text), job["writer"]
