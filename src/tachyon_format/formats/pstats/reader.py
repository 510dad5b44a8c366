"""What can be read back from a pstats file: not a profile (a pstats file keeps per-function
totals and caller edges, no stacks and no samples), but its structure and a summary."""

from __future__ import annotations

from typing import Any

from tachyon_format.errors import FormatError
from tachyon_format.model import Profile
from tachyon_format.problems import Problem

from ..sources import Source, problems_reading
from .file import SAMPLED_MARKER, load


def read(source: Source, **options: Any) -> Profile:
    """Always raises :class:`FormatError`: a pstats file holds no stacks to make a profile
    of (a malformed file says what is wrong with it instead)."""
    load(source)
    raise FormatError("a pstats file holds per-function totals and caller edges, no stacks "
                      "or samples: it cannot be read as a profile (tachyon_format.info gives "
                      "its summary)", path="object")


def validate(source: Source, **options: Any) -> list[Problem]:
    """The problems that make *source* unusable by ``pstats.Stats``, ``[]`` if none; never
    raises on malformed input."""
    return problems_reading(load, source)


def info(source: Source) -> dict[str, Any]:
    """``sampled`` (CPython 3.15's sampling-profiler marker present), ``num_functions``,
    ``num_caller_edges``, and the sums of the first two counts (``total_cc``: samples, or
    primitive calls for cProfile; ``total_nc``) and of ``tt`` (``total_tt``, seconds)."""
    stats = load(source)
    entries = [value for key, value in stats.items() if key != SAMPLED_MARKER]
    return {
        "sampled": SAMPLED_MARKER in stats,
        "num_functions": len(entries),
        "num_caller_edges": sum(len(value[4]) for value in entries),
        "total_cc": sum(value[0] for value in entries),
        "total_nc": sum(value[1] for value in entries),
        "total_tt": sum(value[2] for value in entries),
    }
