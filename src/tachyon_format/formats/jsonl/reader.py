"""Read CPython 3.15's JSONL export into a :class:`~tachyon_format.model.Profile`.

The file holds a frame table and, per frame, how many samples it ended (``self``) and how
many held it (``cumulative``); it has no stacks, threads or timestamps. The profile is
therefore flat: one single-frame stack per frame row, and one sample row per frame with
``self`` samples, weighted by them (``values``), so that self-time views (pprof's ``top``,
collapsed stacks of depth one) are right. ``cumulative`` counts are kept in
``extras["jsonl"]`` (:class:`~.facts.JsonlFacts`), with the run id and the meta record, so
writing the profile as JSONL again gives the same bytes.
"""

from __future__ import annotations

import numpy as np

from tachyon_format.errors import FormatError
from tachyon_format.model import (
    Frames,
    Meta,
    Profile,
    Samples,
    Stacks,
    Strings,
    Threads,
    ValueType,
)
from tachyon_format.problems import Problem

from ..sources import Source, problems_reading
from ..sources import read_bytes as load
from .facts import EXTRAS_KEY, JsonlFacts
from .records import Parsed, parse_records


def read(source: Source) -> Profile:
    """The profile in *source* (a path, bytes or a binary file object)."""
    return parse(load(source))


def info(source: Source) -> dict:
    """The meta record's fields and the ``end`` record's ``samples_total``."""
    return read(source).extras[EXTRAS_KEY].info


def validate(source: Source) -> list[Problem]:
    """Problems that stop :func:`read`, ``[]`` if there are none; never raises on bad input."""
    return problems_reading(read, source)


def parse(data: bytes) -> Profile:
    """The profile in the bytes *data*."""
    parsed = parse_records(data)
    _check_dense(parsed)
    n = len(parsed.frames)
    frames = [parsed.frames[i] for i in range(n)]
    self_counts = np.array([parsed.counts.get(i, (0, 0))[0] for i in range(n)], np.int64)
    cumulative = np.array([parsed.counts.get(i, (0, 0))[1] for i in range(n)], np.int64)
    total = int(self_counts.sum())
    if parsed.samples_total != total or parsed.agg_totals - {total}:
        raise FormatError(f"samples_total {parsed.samples_total} (agg: "
                          f"{sorted(parsed.agg_totals)}) is not the sum of the self counts, "
                          f"{total}", offset=len(data), path="end -> samples_total")
    strings = Strings.from_raw(parsed.strings[i].encode("utf-8", "surrogatepass")
                               for i in range(len(parsed.strings)))
    rows = np.flatnonzero(self_counts > 0).astype(np.int32)
    meta_record = parsed.meta
    mode = meta_record.get("mode")
    return Profile(
        strings=strings,
        frames=_frames(frames),
        stacks=Stacks(np.arange(n, dtype=np.int32), np.full(n, -1, np.int32)),
        threads=Threads.empty(),
        samples=Samples(stack=rows, thread=np.full(rows.size, -1, np.int32),
                        values=self_counts[rows, None]),
        meta=Meta(period_type=ValueType(mode or "wall", "nanoseconds"),
                  period=int(meta_record.get("sample_interval_usec", 0)) * 1000),
        extras={EXTRAS_KEY: JsonlFacts(run_id=meta_record["run_id"], meta=meta_record,
                                       samples_total=total, cumulative=cumulative)},
    )


def _check_dense(parsed: Parsed) -> None:
    for name, table in (("str_id", parsed.strings), ("frame_id", parsed.frames)):
        if table and max(table) != len(table) - 1:
            missing = min(set(range(len(table))) - set(table))
            raise FormatError(f"{name} {missing} is missing (ids run to {max(table)})",
                              path=f"{name}")


def _frames(frames: list[dict[str, int]]) -> Frames:
    """Frame columns; a frame with ``line`` 0 and nothing else has no location (-1), as
    CPython writes a frame whose location is None."""
    n = len(frames)
    columns = {key: np.full(n, -1, np.int32) for key in ("lineno", "end_lineno", "column",
                                                          "end_column")}
    for i, frame in enumerate(frames):
        if frame["line"] == 0 and len(frame) == 3:
            continue
        columns["lineno"][i] = frame["line"]
        for key, column in (("end_line", "end_lineno"), ("col", "column"),
                            ("end_col", "end_column")):
            if key in frame:
                columns[column][i] = frame[key]
    return Frames(filename=np.array([f["path"] for f in frames], np.uint32),
                  funcname=np.array([f["func"] for f in frames], np.uint32),
                  opcode=np.full(n, -1, np.int16), **columns)
