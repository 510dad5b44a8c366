"""The text report ``python3.15 -m profiling.sampling replay --pstats`` prints (without
``-o``): CPython 3.15's ``PstatsCollector.print_stats``, as printed to a file or pipe (no
colours).

It works on the per-function statistics (one Python object per function, never per sample):
the stats dict with directory names stripped as ``pstats.Stats.strip_dirs`` does (functions
whose file names then coincide are merged, in first-meeting order, with the same float
additions), sorted by one of the CLI's ``--sort`` keys (a stable sort, so ties keep the
first-meeting order), cut to ``--limit`` rows, with the legend and the summary of
"interesting functions" after it.
"""

from __future__ import annotations

import os
from typing import Any

from tachyon_format.model import Profile

from .stats import function_stats, interval_us_of
from .writer import MICROSECONDS_PER_SECOND, StatsEntry, stats_dict

SORT_KEYS = ("nsamples", "tottime", "cumtime", "sample-pct", "cumul-pct", "nsamples-cumul",
             "name")
"""The CLI's ``--sort`` choices (default ``nsamples``)."""

PROFILING_MODE_WALL, PROFILING_MODE_CPU = 0, 1

_LEGEND = """
Legend:
  nsamples: Direct/Cumulative samples (direct executing / on call stack)
  sample%: Percentage of total samples this function was directly executing
  tottime: Estimated total time spent directly in this function
  cumul%: Percentage of total samples when this function was on the call stack
  cumtime: Estimated cumulative time (including time in called functions)
  filename:lineno(function): Function location and name
"""

Row = tuple[tuple[str, Any, str], int, int, float, float]


def report(profile: Profile, *, sort: str = "nsamples", limit: int | None = 15,
           summary: bool = True, mode: int | None = None, interval_us: int | float | None = None,
           sample_type: str | None = None) -> str:
    """The report for *profile*: *sort* one of :data:`SORT_KEYS`, *limit* rows (None: all),
    *summary* the "interesting functions" part (``--no-summary`` is ``summary=False``).
    *mode* (CPython's ``PROFILING_MODE_*``; default: the Tachyon file's, else wall) only
    changes what an empty profile says; *interval_us* and *sample_type* as for the writer's
    :func:`~.writer.build`."""
    if sort not in SORT_KEYS:
        raise ValueError(f"unknown sort {sort!r} (known: {', '.join(SORT_KEYS)})")
    if mode is None:
        info = getattr(profile.extras.get("tachyon"), "info", None) or {}
        mode = info.get("mode") if info.get("mode") is not None else PROFILING_MODE_WALL
    stats = stats_dict(function_stats(profile, sample_type),
                       interval_us_of(profile) if interval_us is None else interval_us)
    stripped = strip_dirs(stats)
    if not stripped:
        text = "No samples were collected.\n"
        if mode == PROFILING_MODE_CPU:
            text += "This can happen in CPU mode when all threads are idle.\n"
        return text
    rows: list[Row] = [(func, cc, nc, tt, ct) for func, (cc, nc, tt, ct, _) in stripped.items()]
    total = sum(row[1] for row in rows)
    rows = _sorted(rows, sort, total)
    if limit is not None:
        rows = rows[:limit]
    lines = _table(rows, total)
    text = "\n".join(lines) + "\n" + _LEGEND
    if summary and rows:
        text += _summary(rows, total)
    return text


def strip_dirs(stats: dict[Any, StatsEntry]) -> dict[Any, StatsEntry]:
    """``pstats.Stats.strip_dirs``: file names without directories; entries that then share
    a key are added together (counts, times and callers), in order."""
    out: dict[Any, StatsEntry] = {}
    for (filename, line, name), (cc, nc, tt, ct, callers) in stats.items():
        key = (os.path.basename(filename), line, name)
        new_callers = {(os.path.basename(f), ln, n): c for (f, ln, n), c in callers.items()}
        if key in out:
            t_cc, t_nc, t_tt, t_ct, t_callers = out[key]
            merged = dict(t_callers)
            for func, count in new_callers.items():
                merged[func] = merged[func] + count if func in merged else count
            out[key] = (cc + t_cc, nc + t_nc, tt + t_tt, ct + t_ct, merged)
        else:
            out[key] = (cc, nc, tt, ct, new_callers)
    return out


def _sorted(rows: list[Row], sort: str, total: int) -> list[Row]:
    if sort == "name":
        return sorted(rows, key=lambda row: str(row[0]))
    if sort in ("sample-pct", "cumul-pct"):
        column = 1 if sort == "sample-pct" else 2
        return sorted(rows, key=lambda row: _percent(row[column], total), reverse=True)
    column = {"nsamples": 1, "tottime": 3, "cumtime": 4, "nsamples-cumul": 2}[sort]
    return sorted(rows, key=lambda row: row[column], reverse=True)


def best_unit(max_value: float) -> tuple[str, float]:
    """The unit (s, ms, μs) CPython shows times in, and its scale from seconds."""
    if max_value >= 1.0:
        return "s", 1.0
    if max_value >= 0.001:
        return "ms", 1000.0
    return "μs", float(MICROSECONDS_PER_SECOND)


def _table(rows: list[Row], total: int) -> list[str]:
    total_unit, total_scale = best_unit(max((row[3] for row in rows), default=0))
    cum_unit, cum_scale = best_unit(max((row[4] for row in rows), default=0))
    tot_width = max(12, len(f"tottime ({total_unit})"))
    cum_width = max(12, len(f"cumtime ({cum_unit})"))
    lines = ["Profile Stats:",
             f"{'nsamples':>15}  {'sample%':>8}  {f'tottime ({total_unit})':>{tot_width}}  "
             f"{'cumul%':>8}  {f'cumtime ({cum_unit})':>{cum_width}}  filename:lineno(function)"]
    for func, direct, cumulative, total_time, cumulative_time in rows:
        lines.append(f"{f'{direct}/{cumulative}':>15}  {_percent(direct, total):8.1f}  "
                     f"{total_time * total_scale:{tot_width}.3f}  "
                     f"{_percent(cumulative, total):8.1f}  "
                     f"{cumulative_time * cum_scale:{cum_width}.3f}  {_name(func)}")
    return lines


def _summary(rows: list[Row], total: int) -> str:
    """``PstatsCollector._print_summary``: the shown rows merged per file and function name
    (lines ignored), then three top-3 lists."""
    merged: dict[str, list] = {}
    for func, direct, cumulative, total_time, cumulative_time in rows:
        sums = merged.setdefault(f"{func[0]}:{func[2]}", [0, 0, 0, 0])
        sums[0] += direct
        sums[1] += cumulative
        sums[2] += total_time
        sums[3] += cumulative_time
    functions: list[Row] = []
    for qualified, (direct, cumulative, total_time, cumulative_time) in merged.items():
        filename, name = qualified.rsplit(":", 1) if ":" in qualified else ("", qualified)
        functions.append(((filename, "", name), direct, cumulative, total_time,
                          cumulative_time))

    def hot_spot(row: Row) -> str | None:
        func, direct, cumulative = row[:3]
        if direct > 0 and cumulative > 0:
            return (f"{direct / cumulative:.3f} direct/cumulative ratio, "
                    f"{_percent(direct, total):.1f}% direct samples: {_name(func)}")
        return None

    def frequency(row: Row) -> str | None:
        func, direct, cumulative = row[:3]
        if cumulative > direct:
            return (f"{cumulative - direct:d} indirect calls, "
                    f"{_percent(cumulative, total):.1f}% total stack presence: {_name(func)}")
        return None

    def magnification(row: Row) -> str | None:
        func, direct, cumulative = row[:3]
        if direct > 0 and cumulative > direct:
            return (f"{cumulative / direct:.1f}x call magnification, "
                    f"{cumulative - direct:d} indirect calls from {direct:d} direct: "
                    f"{_name(func)}")
        return None

    parts = ["\nSummary of Interesting Functions:\n"]
    for title, key, line_of in (
        ("Functions with Highest Direct/Cumulative Ratio (Hot Spots)",
         lambda row: (row[1] / row[2]) if row[2] > 0 else 0, hot_spot),
        ("Functions with Highest Call Frequency (Indirect Calls)",
         lambda row: row[2] - row[1], frequency),
        ("Functions with Highest Call Magnification (Cumulative/Direct)",
         lambda row: (row[2] / row[1]) if row[1] > 0 else 0, magnification),
    ):
        parts.append(f"\n{title}:\n")
        for row in sorted(functions, key=key, reverse=True)[:3]:
            line = line_of(row)
            if line:
                parts.append(f"  {line}\n")
    return "".join(parts)


def _percent(count: float, total: float) -> float:
    """*count* as a percentage of *total* (0 of nothing), as CPython's collector shows it."""
    return (count / total * 100) if total > 0 else 0


def _name(func: tuple[str, Any, str]) -> str:
    """A function as pstats prints it: ``filename:lineno(function)``."""
    return f"{func[0]}:{func[1]}({func[2]})"
