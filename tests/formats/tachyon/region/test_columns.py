"""GrowingColumns against a list-of-rows model."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from tachyon_format.formats.tachyon.region import columns
from tachyon_format.formats.tachyon.region.columns import (
    RECORD_COLUMNS,
    SAMPLE_COLUMNS,
    GrowingColumns,
)

STEPS = st.lists(st.one_of(st.tuples(st.just("append"), st.integers(0, 40)),
                           st.tuples(st.just("take"), st.integers(0, 40))), max_size=12)


@given(st.integers(0, 50), STEPS)
def test_appends_and_takes_keep_rows_in_order(capacity, steps):
    cols = GrowingColumns(RECORD_COLUMNS, capacity)
    model: list[tuple[int, int, int]] = []
    taken: list[tuple[int, int, int]] = []
    counter = 0
    for op, n in steps:
        if op == "append":
            rows = [(counter + i, (counter + i) % 4, 2 * (counter + i)) for i in range(n)]
            counter += n
            views = cols.append(n)
            views["offset"][...] = [r[0] for r in rows]
            views["encoding"][...] = [r[1] for r in rows]
            views["first_sample"][...] = [r[2] for r in rows]
            model += rows
        else:
            out = cols.take(n)
            got = list(zip(out["offset"].tolist(), out["encoding"].tolist(),
                           out["first_sample"].tolist(), strict=True))
            assert got == model[:n]
            taken += got
            model = model[n:]
        assert cols.size == len(model)
        assert cols.view("offset").tolist() == [r[0] for r in model]
    final = cols.finish()
    assert final["offset"].tolist() == [r[0] for r in model]
    assert {name: a.dtype for name, a in final.items()} == {
        name: np.dtype(t) for name, t in RECORD_COLUMNS.items()}


def _fill(cols: GrowingColumns, columns: dict[str, np.ndarray]) -> None:
    views = cols.append(len(next(iter(columns.values()))))
    for name, column in columns.items():
        views[name][...] = column


def test_append_grows_past_the_reservation_and_finish_trims():
    cols = GrowingColumns.samples(capacity=2)
    for start in (0, 3, 10):
        _fill(cols, {"timestamp_us": np.arange(start, start + 5, dtype=np.uint64),
                     "thread": np.zeros(5, np.int32), "status": np.ones(5, np.uint8),
                     "stack": np.full(5, -1, np.int32)})
    out = cols.finish()
    assert out["timestamp_us"].tolist() == [*range(5), *range(3, 8), *range(10, 15)]
    assert all(a.size == 15 for a in out.values())
    assert set(out) == set(SAMPLE_COLUMNS)


def test_shift_moves_a_column_by_an_amount():
    cols = GrowingColumns.records()
    _fill(cols, {"offset": np.array([5, 9]), "encoding": np.array([0, 1], np.uint8),
                 "first_sample": np.array([10, 12])})
    cols.shift("first_sample", 10)
    assert cols.view("first_sample").tolist() == [0, 2]


def test_columns_resized_in_place_keep_their_rows_and_a_callers_view(monkeypatch):
    """Columns grow and are trimmed in place (``realloc``) when nothing else refers to
    them; a view held elsewhere (or the walk's memoryview) makes it a copy, so the view
    stays valid. From LARGE rows on, they grow by a quarter."""
    monkeypatch.setattr(columns, "LARGE", 64)
    cols = GrowingColumns({"x": np.int64}, 16)
    cols.append(16)["x"][...] = np.arange(16)
    cols.reserve(1)
    assert cols.capacity == 32
    held = cols.view("x")
    walk_view = memoryview(cols.arrays()["x"])
    cols.reserve(40)  # (copied: two references)
    assert cols.capacity == 64
    cols.append(40)["x"][...] = np.arange(16, 56)
    del walk_view
    cols.reserve(20)  # (in place)
    assert cols.capacity == 80  # (64 and a quarter)
    cols.append(20)["x"][...] = np.arange(56, 76)
    assert held.tolist() == list(range(16))
    out = cols.finish()["x"]
    assert out.tolist() == list(range(76)) and len(out) == 76
