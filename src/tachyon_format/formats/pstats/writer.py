"""Write a :class:`~tachyon_format.model.Profile` as a pstats file: the marshal'd dict that
``python3.15 -m profiling.sampling replay --pstats -o OUT`` writes.

The dict maps each function ``(filename, lineno, funcname)`` to ``(direct, cumulative,
tottime, cumtime, callers)``: sample counts where cProfile has call counts, times in seconds
as CPython computes them (``count * (interval_us / 1_000_000)``, the same float operations),
and ``callers`` mapping each caller function to the samples in which it called this one. The
key ``("__sampled__",)`` with the value ``True`` marks the file as sampled (CPython 3.15's
``pstats`` then loads it as ``SampledStats``); ``pstats`` before 3.15 cannot load a file with
it, so ``sampled_marker=False`` leaves it out.
"""

from __future__ import annotations

import marshal
from typing import Any

from tachyon_format.model import Profile

from ..sources import whole_file_writer
from .stats import Function, FunctionStats, function_stats, interval_us_of

SAMPLED_MARKER = ("__sampled__",)
MICROSECONDS_PER_SECOND = 1_000_000

StatsEntry = tuple[int, int, float, float, dict[Function, int]]


def build(profile: Profile, *, interval_us: int | float | None = None,
          sample_type: str | None = None, sampled_marker: bool = True) -> dict[Any, Any]:
    """The dict a pstats file holds for *profile*.

    *interval_us*: the sampling interval (default: the profile's, see
    :func:`~.stats.interval_us_of`); *sample_type*: which values count samples (see
    :meth:`Profile.sample_weights`); *sampled_marker*: add CPython 3.15's
    ``("__sampled__",)`` key (leave it out for ``pstats`` of Python 3.14 and older)."""
    stats = stats_dict(function_stats(profile, sample_type),
                       interval_us_of(profile) if interval_us is None else interval_us)
    out: dict[Any, Any] = dict(stats)
    if sampled_marker:
        out[SAMPLED_MARKER] = True
    return out


def stats_dict(stats: FunctionStats, interval_us: int | float) -> dict[Function, StatsEntry]:
    """``PstatsCollector.create_stats``: per function, in first-meeting order."""
    interval_sec = interval_us / MICROSECONDS_PER_SECOND
    functions = stats.functions
    callers: list[dict[Function, int]] = [{} for _ in functions]
    for callee, caller, count in zip(stats.edge_callee.tolist(), stats.edge_caller.tolist(),
                                     stats.edge_count.tolist(), strict=True):
        callers[callee][functions[caller]] = count
    return {
        function: (direct, cumulative, direct * interval_sec, cumulative * interval_sec,
                   callers[row])
        for row, (function, direct, cumulative) in enumerate(zip(
            functions, stats.direct.tolist(), stats.cumulative.tolist(), strict=True))
    }


write = whole_file_writer(build, marshal.dumps)
