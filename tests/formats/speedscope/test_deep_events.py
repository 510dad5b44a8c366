"""Evented profiles whose stacks grow deep (issue 21): the events are replayed into a prefix
tree, so memory grows with the events, not with the square of the depth (14,000 frames deep
once took 2.3 GB before a MemoryError)."""

from __future__ import annotations

import json
import tracemalloc

import numpy as np
import pytest

import tachyon_format
from tachyon_format import FormatError
from tachyon_format.formats.sources import MAX_STACK_DEPTH

MIB = 1 << 20
SCHEMA = "https://www.speedscope.app/file-format-schema.json"


def deep_file(depth: int, frames: int = 50) -> bytes:
    """One evented profile opening *depth* frames (frame ``i % frames`` at time ``i``), then
    closing them all, one time unit apart."""
    events = [{"type": "O", "frame": i % frames, "at": i} for i in range(depth)]
    events += [{"type": "C", "frame": (depth - 1 - i) % frames, "at": depth + i}
               for i in range(depth)]
    return json.dumps({"$schema": SCHEMA,
                       "shared": {"frames": [{"name": f"f{i}"} for i in range(frames)]},
                       "profiles": [{"type": "evented", "name": "t", "unit": "none",
                                     "startValue": 0, "endValue": 2 * depth,
                                     "events": events}]}, separators=(",", ":")).encode()


def read_traced(data: bytes):
    """The profile, and the peak of the memory traced while reading it."""
    tracemalloc.start()
    try:
        profile = tachyon_format.read(data, format="speedscope")
        return profile, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def check_deep(profile, depth: int, frames: int = 50) -> None:
    """Interval ``k`` holds the ``k + 1`` outermost frames while they open, then as many as
    remain open while they close; each one time unit long."""
    n = 2 * depth - 1
    assert len(profile.samples) == n and profile.weights().tolist() == [1] * n
    depths = profile.stacks.depth()[profile.samples.stack]
    expected = np.minimum(np.arange(1, n + 1), np.arange(n, 0, -1))
    np.testing.assert_array_equal(depths, expected)
    assert len(profile.stacks) == depth  # one node per open, shared by the closing half
    deepest = profile.stack_frames(int(profile.samples.stack[depth - 1]))
    np.testing.assert_array_equal(deepest, np.arange(depth)[::-1] % frames)


def test_a_deep_evented_profile_reads_in_memory_linear_in_its_events():
    depth = 4000  # listing every interval's stack: 16 M frames (some 200 MB of temporaries)
    data = deep_file(depth)
    profile, peak = read_traced(data)
    check_deep(profile, depth)
    assert peak < 16 * MIB, peak


@pytest.mark.slow
def test_the_issues_file_of_depth_14000():
    data = deep_file(14_000)
    assert 900_000 < len(data) < 1_000_000  # (the issue's file: 941 KB)
    profile, peak = read_traced(data)
    check_deep(profile, 14_000)
    assert peak < 48 * MIB, peak


def test_an_evented_stack_deeper_than_the_limit_is_refused_at_its_open():
    data = deep_file(MAX_STACK_DEPTH + 1, frames=1)
    with pytest.raises(FormatError) as raised:
        tachyon_format.read(data, format="speedscope")
    assert raised.value.message == (f"opens a stack of {MAX_STACK_DEPTH + 1} frames, deeper than"
                                    f" the limit of {MAX_STACK_DEPTH} (MAX_STACK_DEPTH)")
    assert raised.value.path == f"profiles[0].events[{MAX_STACK_DEPTH}]"
    at_limit = tachyon_format.read(deep_file(MAX_STACK_DEPTH, frames=1), format="speedscope")
    check_deep(at_limit, MAX_STACK_DEPTH, frames=1)


def test_sampled_and_evented_profiles_share_one_tree():
    """A stack seen by a sampled profile and by an evented one has one id."""
    ev = [{"type": "O", "frame": 0, "at": 0}, {"type": "O", "frame": 1, "at": 1},
          {"type": "C", "frame": 1, "at": 3}, {"type": "O", "frame": 2, "at": 3},
          {"type": "C", "frame": 2, "at": 4}, {"type": "C", "frame": 0, "at": 4}]
    doc = {"$schema": SCHEMA, "shared": {"frames": [{"name": n} for n in "abc"]},
           "profiles": [
               {"type": "evented", "name": "e", "unit": "none", "startValue": 0,
                "endValue": 4, "events": ev},
               {"type": "sampled", "name": "s", "unit": "none", "startValue": 0,
                "endValue": 3, "samples": [[0, 1], [0], [0, 2], [1]], "weights": [5, 6, 7, 8]},
               {"type": "evented", "name": "e2", "unit": "none", "startValue": 0,
                "endValue": 2, "events": ev[:2] + [{"type": "C", "frame": 1, "at": 2},
                                                   {"type": "C", "frame": 0, "at": 2}]}]}
    profile = tachyon_format.read(json.dumps(doc).encode())
    stacks = [tuple(profile.stack_frames(int(s)).tolist()) for s in profile.samples.stack]
    assert stacks == [(0,), (1, 0), (2, 0), (1, 0), (0,), (2, 0), (1,), (0,), (1, 0)]
    assert profile.samples.thread.tolist() == [0, 0, 0, 1, 1, 1, 1, 2, 2]
    assert profile.weights().tolist() == [1, 2, 1, 5, 6, 7, 8, 1, 1]
    ids = dict(zip(stacks, profile.samples.stack.tolist(), strict=True))
    assert len(ids) == 4 and len(profile.stacks) == 4  # each stack once, under one id
    for stack, node in zip(stacks, profile.samples.stack.tolist(), strict=True):
        assert ids[stack] == node
