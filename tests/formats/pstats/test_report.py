"""The report's own properties (its comparison with CPython's printed output, on every sort
key, is in test_reference.py)."""

from __future__ import annotations

import marshal
import os

import pytest

import tachyon_format
from tachyon_format.formats.pstats.report import SORT_KEYS, report
from tachyon_format.formats.pstats.writer import SAMPLED_MARKER
from tachyon_format.model.aggregate import aggregate_samples
from tests.helpers.paths import DATA_DIR

WALL = DATA_DIR / "threads_wall_zstd.bin"


def rows_of(text: str) -> list[str]:
    return text.split("\n\nLegend:")[0].splitlines()[2:]


def test_every_function_of_the_file_is_a_row_with_its_counts():
    text = report(tachyon_format.read(WALL), sort="name", limit=None, summary=False)
    stats = marshal.loads(WALL.with_suffix(".pstats").read_bytes())
    expected = {f"{os.path.basename(f)}:{line}({name})": f"{cc}/{nc}"
                for (f, line, name), (cc, nc, *_) in
                ((k, v) for k, v in stats.items() if k != SAMPLED_MARKER)}
    shown = {row.split("  ")[-1]: row.split()[0] for row in rows_of(text)}
    assert shown == expected


@pytest.mark.parametrize("sort", SORT_KEYS)
def test_limits_cut_the_sorted_rows(sort):
    profile = tachyon_format.read(WALL)
    def shown(limit):  # (the time unit follows the largest time shown)
        rows = rows_of(report(profile, sort=sort, limit=limit, summary=False))
        return [(row.split()[0], row.split("  ")[-1]) for row in rows]

    every = shown(None)
    assert len(every) == 50
    assert shown(4) == every[:4]
    assert shown(1000) == every


def test_an_aggregated_profile_gives_the_same_rows():
    profile = tachyon_format.read(WALL)
    for sort in ("name", "nsamples"):
        ours = report(aggregate_samples(profile), sort=sort, limit=None, summary=False)
        direct = report(profile, sort=sort, limit=None, summary=False)
        # by name the order is total; by count, ties follow first meeting, which the
        # aggregated rows (sorted by thread and stack) do not keep
        assert (ours == direct) if sort == "name" else sorted(ours.split("\n")) == sorted(
            direct.split("\n"))


def test_an_empty_profile_says_so_as_cpython_does():
    empty = tachyon_format.read(DATA_DIR / "synthetic_empty_zstd.bin")
    assert report(empty) == "No samples were collected.\n"
    assert report(empty, mode=1) == ("No samples were collected.\n"
                                     "This can happen in CPU mode when all threads are idle.\n")


def test_an_unknown_sort_key_is_refused():
    with pytest.raises(ValueError, match="unknown sort"):
        report(tachyon_format.read(WALL), sort="calls")
