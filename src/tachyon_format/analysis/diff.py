"""Two profiles compared per function (or line, opcode ...) and per stack.

Counts are normalised two ways, so that profiles of different lengths and sampling rates
compare: as a fraction of each profile's total (``*_fraction``), and as time, the count
times the profile's period (``*_ms``; NaN when the period is unknown). The rows are sorted by
the change of the ``self`` fraction (largest first, by absolute value).

Profiles sampled in different modes (``meta.period_type``: wall, cpu, gil ...) measure
different things: :func:`diff` refuses them (:class:`DiffError`) unless ``force=True``; two
different sample types (e.g. ``cpu/nanoseconds`` against ``alloc/bytes``) are always refused.
"""

from __future__ import annotations

import numpy as np

from tachyon_format.model import NS_PER_UNIT, Profile

from .functions import function_table, grouped_stacks
from .keys import By, fields_of
from .table import Table


class DiffError(ValueError):
    """The two profiles do not measure the same thing."""


def check_comparable(base: Profile, other: Profile, *, sample_type: str | None = None,
                     force: bool = False,
                     remedy: str = "force=True compares them anyway") -> None:
    """Raise :class:`DiffError` if *base* and *other* may not be compared as asked (*remedy*:
    what to do about different sampling modes, in the caller's words)."""
    kinds = [p.meta.period_type.type if p.meta.period_type is not None else None
             for p in (base, other)]
    if not force and kinds[0] != kinds[1]:
        raise DiffError(f"the profiles were sampled as {kinds[0]!r} and {kinds[1]!r} "
                        f"({remedy})")
    measured = [_measured(p, sample_type) for p in (base, other)]
    if measured[0] != measured[1]:
        raise DiffError(f"the profiles measure {measured[0]} and {measured[1]}")


def _measured(profile: Profile, sample_type: str | None) -> tuple[str, str]:
    """The (type, unit) a count of *profile* is in: *sample_type*'s, by default the
    ``samples`` count where the profile has one (what :meth:`Profile.sample_counts` gives)."""
    meta = profile.meta
    if sample_type is None and any(v.type == "samples" for v in meta.sample_types):
        sample_type = "samples"
    try:
        value_type = meta.sample_types[meta.sample_type_index(sample_type)]
    except KeyError as exc:
        raise DiffError(f"a profile measures no {sample_type!r}: {exc.args[0]}") from None
    return (value_type.type, value_type.unit)


def seconds_per_value(profile: Profile, sample_type: str | None = None) -> float | None:
    """Seconds one unit of the chosen value stands for: the unit itself for a time value
    (``wall``/``nanoseconds``), the sampling period for a count of samples taken at a known
    interval; None when the value is no time."""
    meta = profile.meta
    value_type = meta.sample_types[meta.sample_type_index(sample_type)]
    if value_type.unit in NS_PER_UNIT:
        return NS_PER_UNIT[value_type.unit] / 1e9
    ms = period_ms(profile)
    return None if ms != ms else ms / 1000  # (NaN: the period is unknown)


def period_ms(profile: Profile) -> float:
    """Milliseconds one sample stands for (NaN when unknown)."""
    ns = profile.meta.period_ns()
    return float("nan") if ns is None else ns / 1e6


def diff(base: Profile, other: Profile, by: By = "function", *,
         sample_type: str | None = None, force: bool = False,
         filter_internal: bool = True) -> Table:
    """Per key of *by*: ``self`` and ``cumulative`` of both profiles, their fractions of each
    total, their time, and the changes (``delta_*``: other minus base)."""
    check_comparable(base, other, sample_type=sample_type, force=force)
    fields = fields_of(by)
    tables = [function_table(p, by, sample_type=sample_type, filter_internal=filter_internal)
              for p in (base, other)]
    keys: dict[tuple, int] = {}
    for table in tables:
        for key in zip(*(table[f].tolist() for f in fields), strict=True):
            keys.setdefault(key, len(keys))
    columns: dict[str, np.ndarray] = {
        f: np.array([k[i] for k in keys], dtype=tables[0][f].dtype)
        for i, f in enumerate(fields)}
    values = {}
    for side, table in zip(("base", "other"), tables, strict=True):
        rows = np.fromiter((keys[k] for k in zip(*(table[f].tolist() for f in fields),
                                                  strict=True)), np.int64, len(table))
        for name in ("self", "cumulative"):
            column = np.zeros(len(keys), np.int64)
            column[rows] = table[name]
            values[f"{side}_{name}"] = column
    columns.update(values)
    _normalise(columns, [t.total for t in tables], [period_ms(base), period_ms(other)],
               ("self", "cumulative"))
    out = Table(columns, tables[1].total, {"by": by, "base_total": tables[0].total,
                                           "other_total": tables[1].total})
    return _by_change(out, "delta_self_fraction")


def diff_stacks(base: Profile, other: Profile, by: By = "function", *,
                sample_type: str | None = None, force: bool = False,
                filter_internal: bool = True) -> Table:
    """Per call stack (its keys of *by*, outermost first, joined by ``;`` as collapsed
    stacks write them): the weight in each profile, normalised as :func:`diff`."""
    check_comparable(base, other, sample_type=sample_type, force=force)
    weights = []
    totals = []
    for profile in (base, other):
        found = _stack_weights(profile, by, sample_type, filter_internal)
        weights.append(found)
        totals.append(sum(found.values()))
    names = list(dict.fromkeys([*weights[0], *weights[1]]))
    columns: dict[str, np.ndarray] = {"stack": np.array(names, dtype=object)}
    for side, found in zip(("base", "other"), weights, strict=True):
        columns[side] = np.fromiter((found.get(n, 0) for n in names), np.int64, len(names))
    _normalise(columns, totals, [period_ms(base), period_ms(other)], ("",))
    out = Table(columns, totals[1], {"by": by, "base_total": totals[0],
                                      "other_total": totals[1]})
    return _by_change(out, "delta_fraction")


def _stack_weights(profile: Profile, by: By, sample_type: str | None,
                   filter_internal: bool) -> dict[str, int]:
    """``{stack text: weight}``: Python once per distinct stack, never per sample."""
    gs = grouped_stacks(profile, by, sample_type=sample_type, filter_internal=filter_internal)
    fields = fields_of(by)
    key_text = [":".join(str(v) for v in row) for row in zip(
        *(gs.keys.columns[f].tolist() for f in fields), strict=True)]
    weight = np.bincount(gs.segment, gs.weight, minlength=gs.num_segments).astype(np.int64)
    starts = np.searchsorted(gs.key_segment, np.arange(gs.num_segments + 1))
    keys = gs.key.tolist()
    out: dict[str, int] = {}
    for segment, (a, b) in enumerate(zip(starts[:-1].tolist(), starts[1:].tolist(),
                                         strict=True)):
        if a == b:
            continue  # (a stack of the profiler's frames only)
        text = ";".join(key_text[k] for k in reversed(keys[a:b]))
        out[text] = out.get(text, 0) + int(weight[segment])
    return out


def _normalise(columns: dict[str, np.ndarray], totals: list[int], periods: list[float],
               names: tuple[str, ...]) -> None:
    for name in names:
        suffix = f"_{name}" if name else ""
        fractions = []
        for side, total, period in zip(("base", "other"), totals, periods, strict=True):
            count = columns[f"{side}{suffix}"].astype(np.float64)
            fraction = count / total if total else np.zeros_like(count)
            columns[f"{side}{suffix}_fraction"] = fraction
            columns[f"{side}{suffix}_ms"] = count * period
            fractions.append(fraction)
        columns[f"delta{suffix}_fraction"] = fractions[1] - fractions[0]
        columns[f"delta{suffix}_ms"] = (columns[f"other{suffix}_ms"]
                                        - columns[f"base{suffix}_ms"])


def _by_change(table: Table, column: str) -> Table:
    order = np.argsort(-np.abs(table[column]), kind="stable")
    return table.take(order)
