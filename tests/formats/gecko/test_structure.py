"""The Gecko output checked as the Firefox Profiler reads its processed format (no importer
of the profiler runs here: it is not published as a package), and decoded back: every
thread's samples give the stacks of the profile's samples.

Structure (the profiler's ``src/types/profile.ts``): every column of a table has ``length``
entries; indexes point inside their tables; a stack's prefix is null or an earlier stack;
string indexes are inside ``shared.stringArray``; categories inside ``meta.categories``.
"""

from __future__ import annotations

import dataclasses
import json
import posixpath

import numpy as np
import pytest
from hypothesis import given, settings

import tachyon_format
from tachyon_format import Profile
from tachyon_format.formats.gecko.writer import build
from tests.helpers.made_up_profiles import profiles
from tests.helpers.paths import DATA_DIR

GOLDEN = sorted(DATA_DIR.glob("*.bin"))
TABLES = ("samples", "stackTable", "frameTable", "funcTable", "resourceTable",
          "nativeSymbols", "markers")


def check_structure(gecko: dict) -> None:
    strings = gecko["shared"]["stringArray"]
    categories = len(gecko["meta"]["categories"])
    assert strings[0] == "(root)" and len(set(strings)) == len(strings)
    for thread in gecko["threads"]:
        for name in TABLES:
            table = thread[name]
            for key, column in table.items():
                if isinstance(column, list):
                    assert len(column) == table["length"], (name, key)
        stacks, frames, funcs = thread["stackTable"], thread["frameTable"], thread["funcTable"]
        for i, (frame, prefix) in enumerate(zip(stacks["frame"], stacks["prefix"],
                                                strict=True)):
            assert 0 <= frame < frames["length"]
            assert prefix is None or 0 <= prefix < i
        assert all(0 <= f < funcs["length"] for f in frames["func"])
        assert all(0 <= c < categories for c in stacks["category"] + frames["category"])
        assert all(0 <= r < thread["resourceTable"]["length"] for r in funcs["resource"])
        named = funcs["name"] + thread["resourceTable"]["name"] + thread["markers"]["name"]
        named += [f for f in funcs["fileName"] if f is not None]
        assert all(0 <= s < len(strings) for s in named)
        assert all(0 <= s < stacks["length"] for s in thread["samples"]["stack"])
        markers = thread["markers"]
        assert all(0 <= c < categories for c in markers["category"])
        for start, end, data in zip(markers["startTime"], markers["endTime"], markers["data"],
                                    strict=True):
            assert data["duration"] == end - start and data["tid"] == thread["tid"]


def decoded_samples(gecko: dict) -> list[tuple[int, float, tuple]]:
    """(tid, time, stack as (function, file basename) outermost first) for every sample."""
    strings = gecko["shared"]["stringArray"]
    out = []
    for thread in gecko["threads"]:
        stacks, frames, funcs = thread["stackTable"], thread["frameTable"], thread["funcTable"]
        resources = thread["resourceTable"]
        for stack, time in zip(thread["samples"]["stack"], thread["samples"]["time"],
                               strict=True):
            frames_of = []
            while stack is not None:
                func = frames["func"][stacks["frame"][stack]]
                frames_of.append((strings[funcs["name"][func]],
                                  strings[resources["name"][funcs["resource"][func]]]))
                stack = stacks["prefix"][stack]
            out.append((thread["tid"], time, tuple(reversed(frames_of))))
    return sorted(out)


def expected_samples(profile: Profile) -> list[tuple[int, float, tuple]]:
    """The same, straight from the profile (internal frames dropped, empty stacks skipped)."""
    s, f = profile.strings, profile.frames
    stamps = profile.samples.timestamp_us.tolist()
    tids = profile.threads.thread_id.tolist()
    tuples = profile.stacks.tuples()
    out = []
    for row, stack in enumerate(profile.samples.stack.tolist()):
        frames = tuple((s[f.funcname[i]], posixpath.basename(s[f.filename[i]]))
                       for i in reversed(tuples[stack])
                       if not s[f.filename[i]].endswith("_sync_coordinator.py"))
        if frames:
            out.append((tids[profile.samples.thread[row]], (stamps[row] - stamps[0]) / 1000,
                        frames))
    return sorted(out)


@pytest.mark.parametrize("path", GOLDEN, ids=lambda p: p.stem)
def test_golden_files(path):
    profile = tachyon_format.read(path)
    gecko = json.loads(json.dumps(build(profile)))
    check_structure(gecko)
    assert decoded_samples(gecko) == expected_samples(profile)


@settings(max_examples=60)
@given(profiles())
def test_made_up_profiles(profile):
    gecko = json.loads(json.dumps(build(profile)))
    check_structure(gecko)
    assert decoded_samples(gecko) == expected_samples(profile)
    statuses = profile.samples.status
    for thread in gecko["threads"]:  # a marker per change of GIL state, and one still open
        mine = profile.threads.thread_id[profile.samples.thread] == thread["tid"]
        gil = (statuses[mine] & 1).astype(bool)
        changes = int(np.count_nonzero(gil[1:] != gil[:-1]))
        names = [gecko["shared"]["stringArray"][i] for i in thread["markers"]["name"]]
        assert names.count("Has GIL") + names.count("No GIL") == changes + 1


@settings(max_examples=30)
@given(profiles())
def test_without_status_bits_only_gc_markers(profile):
    """A profile without statuses gets no GIL/CPU/exception markers: nothing is invented."""
    samples = dataclasses.replace(profile.samples, status=None)
    gecko = json.loads(json.dumps(build(dataclasses.replace(profile, samples=samples))))
    check_structure(gecko)
    strings = gecko["shared"]["stringArray"]
    for thread in gecko["threads"]:
        assert {strings[i] for i in thread["markers"]["name"]} <= {"GC Collecting"}
        assert not thread["isMainThread"]
