"""Writing aggregated profiles (``read(..., aggregate=True)``) and the writer's stack and
label kernels against plain models."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tachyon_format
from tachyon_format.formats.pprof import writer
from tachyon_format.formats.pprof.stack_bytes import StackBytes
from tachyon_format.formats.pprof.writer import dumps
from tachyon_format.kernels.protowire import Part, encode_messages, encode_packed
from tachyon_format.model import Stacks
from tachyon_format.model.aggregate import aggregate_samples
from tests.helpers.models import canonical as uleb128
from tests.helpers.paths import DATA_DIR
from tests.helpers.pprof import canonical, message_classes, message_of

TACHYON_FILES = sorted(DATA_DIR.glob("*.bin"))


@pytest.mark.parametrize("path", TACHYON_FILES, ids=[p.name for p in TACHYON_FILES])
@pytest.mark.parametrize("options", [{}, {"time_values": False}])
def test_aggregated_read_writes_the_same_bytes(path, options):
    """Counted while read, rows in order of first appearance: the very bytes that writing
    every sample gives."""
    full = dumps(tachyon_format.read(path), compression="none", **options)
    assert dumps(tachyon_format.read(path, aggregate=True), compression="none",
                 **options) == full


# (protobuf's Python classes refuse the strings that are not UTF-8)
UTF8_FILES = [p for p in TACHYON_FILES if "invalid_utf8" not in p.name]


@pytest.mark.parametrize("path", UTF8_FILES, ids=[p.name for p in UTF8_FILES])
def test_any_row_order_and_timestamps_option_give_the_same_samples(path):
    """The model's aggregate (rows sorted by key), and ``timestamps=True`` on an aggregated
    profile (a sample per row, with its count): the same samples, decoded by the protobuf
    classes, in another order."""
    full = canonical(dumps(tachyon_format.read(path)))
    for profile, options in ((aggregate_samples(tachyon_format.read(path)), {}),
                             (tachyon_format.read(path, aggregate=True), {"timestamps": True})):
        got = canonical(dumps(profile, **options))
        assert got[0] == full[0] and got[2:] == full[2:]
        assert Counter(got[1]) == Counter(full[1])


@st.composite
def trees(draw):
    """A prefix tree, a location id per frame (up to 10-byte varints) and head flags, and
    stack ids to pack (the empty stack among them)."""
    num_frames = draw(st.integers(1, 6))
    lists = draw(st.lists(st.lists(st.integers(0, num_frames - 1), max_size=7), min_size=1,
                          max_size=8))
    tree, ids = Stacks.from_lists(lists)
    location = np.array(draw(st.lists(st.one_of(st.integers(1, 300), st.integers(1, 2**64 - 1)),
                                      min_size=num_frames, max_size=num_frames)), np.uint64)
    heads = np.array(draw(st.lists(st.booleans(), min_size=num_frames, max_size=num_frames)))
    if draw(st.booleans()):
        heads[:] = True
    picks = draw(st.lists(st.sampled_from([-1, *ids.tolist()]), max_size=10))
    return tree, location, heads, np.array(picks, np.int64)


def expected_bytes(tree: Stacks, location, heads, stack: int) -> bytes:
    return b"".join(uleb128(int(location[f])) for f in tree.frames_of(stack) if heads[f])


@settings(max_examples=80, deadline=None)
@given(trees())
def test_stack_bytes_are_the_packed_location_ids(case):
    tree, location, heads, picks = case
    packed = StackBytes(tree, location, heads)
    out, starts, lengths = packed.of(picks)
    got = [out[a:a + n].tobytes() for a, n in zip(starts.tolist(), lengths.tolist(),
                                                     strict=True)]
    assert got == [expected_bytes(tree, location, heads, s) for s in picks.tolist()]


@settings(max_examples=80, deadline=None)
@given(trees(), st.lists(st.integers(1, 3), min_size=1, max_size=10))
def test_stacks_written_in_place_equal_the_copied_ones(case, values):
    """``location_id`` written in place by Part.fill (bytes past each stack overwritten by
    the values field after it) and copied from packed payloads: the same messages."""
    tree, location, heads, picks = case
    picks = np.resize(picks, len(values)) if picks.size else np.full(len(values), -1)
    packed = StackBytes(tree, location, heads)
    if packed.spill > 3:
        return  # (the writer copies such stacks)
    n = picks.size
    # (as the writer's: a packed field, 3 bytes at least, to take the spill)
    value_part = Part.of(0x12, *encode_packed(np.array(values, np.uint64), np.arange(n + 1)))
    in_place = Part(0x0A, lengths=packed.lengths(picks), spill=packed.spill,
                    fill=lambda out, at, here: packed.write_at(out, at, picks[here]))
    payload, starts, lengths = packed.of(picks)
    copied = Part(0x0A, payload=payload, starts=starts, lengths=lengths)
    a, offsets_a = encode_messages(n, [in_place, value_part], field_key=0x12)
    b, offsets_b = encode_messages(n, [copied, value_part], field_key=0x12)
    assert a.tobytes() == b.tobytes()
    np.testing.assert_array_equal(offsets_a, offsets_b)


@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 300), st.integers(0, 2**40)),
                min_size=1, max_size=30))
def test_label_combinations_group_like_unique_rows(rows):
    columns = [np.array(c, np.int64) for c in zip(*rows, strict=True)]
    combos, inverse = writer._combinations(columns)
    np.testing.assert_array_equal(combos[inverse], np.stack(columns, axis=1))
    assert len({tuple(r) for r in combos.tolist()}) == len(combos) == len(set(rows))


def test_aggregated_pprof_drops_the_labels_of_merged_samples():
    """Samples with the same stack and other labels, read with aggregate=True: merged into
    one row, whose count is their sum; their labels, which the model has no column for and
    which differed, are not written onto the merged rows."""
    message = message_classes()["Profile"](string_table=["", "samples", "count", "k", "a",
                                                         "b", "f"])
    message.sample_type.add(type=1, unit=2)
    message.function.add(id=1, name=6)
    message.location.add(id=1).line.add(function_id=1, line=3)
    message.location.add(id=2).line.add(function_id=1, line=4)
    for location, value, label in ((1, 2, 4), (1, 5, 5), (2, 7, None)):
        sample = message.sample.add(location_id=[location], value=[value])
        if label is not None:
            sample.label.add(key=3, str=label)
    data = message.SerializeToString()
    every = tachyon_format.read(data)
    counted = tachyon_format.read(data, aggregate=True)
    assert sorted(counted.samples.values[:, 0].tolist()) == [7, 7]
    written = message_of(dumps(counted))
    assert sorted(s.value[0] for s in written.sample) == [7, 7]
    assert all(not s.label for s in written.sample)
    assert canonical(dumps(every)) == canonical(data)  # (all rows: the labels are kept)
