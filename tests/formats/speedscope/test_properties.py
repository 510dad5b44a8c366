"""Properties over generated profiles: sampled and evented round trips, and speedscope's
own importer on a batch of them."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tachyon_format
from tachyon_format.formats.speedscope.writer import build
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
from tests.helpers.speedscope import (
    evented_durations,
    frame_totals,
    model_totals,
    speedscope_import,
)

from .test_roundtrip import _fixture, stack_totals


@st.composite
def profiles(draw, timestamps=True):
    """Small profiles: up to 6 frames (names may repeat), stacks up to 6 deep (recursion,
    empty stacks), up to 3 threads, timestamps that repeat and jump, or counts as values."""
    num_frames = draw(st.integers(1, 6))
    names = draw(st.lists(st.sampled_from(["a", "b", "c", "d", "ünï"]), min_size=num_frames,
                          max_size=num_frames))
    lines = draw(st.lists(st.integers(-1, 3), min_size=num_frames, max_size=num_frames))
    num_threads = draw(st.integers(1, 3))
    rows = draw(st.lists(st.tuples(st.lists(st.integers(0, num_frames - 1), max_size=6),
                                   st.integers(0, num_threads - 1), st.integers(0, 3000),
                                   st.integers(1, 5)),
                         max_size=40))
    return make_profile(names, lines, num_threads, rows, timestamps)


def make_profile(names, lines, num_threads, rows, timestamps) -> Profile:
    """The profile of frames *names*/*lines* and sample *rows* (stack outermost last,
    thread, time step, count)."""
    num_frames = len(names)
    strings = Strings.from_texts(["", "f.py", *names])
    lineno = np.array(lines, np.int32)
    frames = Frames(filename=np.ones(num_frames, np.uint32),
                    funcname=np.arange(2, 2 + num_frames, dtype=np.uint32), lineno=lineno,
                    end_lineno=lineno.copy(), column=np.full(num_frames, -1, np.int32),
                    end_column=np.full(num_frames, -1, np.int32),
                    opcode=np.full(num_frames, -1, np.int16))
    stacks, ids = Stacks.from_lists([r[0] for r in rows])
    thread = np.array([r[1] for r in rows], np.int32)
    if timestamps:
        samples = Samples(stack=ids, thread=thread,
                          timestamp_us=np.cumsum([r[2] for r in rows]).astype(np.uint64))
        meta = Meta(period_type=ValueType("wall", "nanoseconds"), period=1_000_000)
    else:
        samples = Samples(stack=ids, thread=thread,
                          values=np.array([[r[3]] for r in rows], np.int64).reshape(-1, 1))
        meta = Meta()
    threads = Threads(np.zeros(num_threads, np.uint32),
                      np.arange(10, 10 + num_threads, dtype=np.uint64))
    return Profile(strings=strings, frames=frames, stacks=stacks, threads=threads,
                   samples=samples, meta=meta)


@settings(max_examples=50)
@given(profiles(timestamps=False) | profiles())
def test_sampled_round_trip(profile):
    assert stack_totals(tachyon_format.read(build(profile))) == stack_totals(profile)


@settings(max_examples=50)
@given(profiles())
def test_evented_round_trip(profile):
    back = tachyon_format.read(build(profile, kind="evented", interval_us=1000))
    expected = stack_totals(profile, evented_durations(profile, 1000))
    assert stack_totals(back) == +Counter({k: v for k, v in expected.items() if k[1]})


def random_profile(rng, timestamps: bool) -> Profile:
    num_frames = int(rng.integers(1, 7))
    names = [str(rng.choice(["a", "b", "c", "d", "ünï"])) for _ in range(num_frames)]
    lines = rng.integers(-1, 4, num_frames).tolist()
    num_threads = int(rng.integers(1, 4))
    rows = [(rng.integers(0, num_frames, int(rng.integers(0, 7))).tolist(),
             int(rng.integers(0, num_threads)), int(rng.choice([0, 1, 999, 1000, 1500, 2500])),
             int(rng.integers(1, 6))) for _ in range(int(rng.integers(1, 41)))]
    return make_profile(names, lines, num_threads, rows, timestamps)


def test_speedscope_shows_generated_profiles(tmp_path):
    """A seeded batch of generated profiles, both kinds, through speedscope (one Node run)."""
    rng = np.random.default_rng(15)
    batch = [random_profile(rng, timestamps=bool(i % 2)) for i in range(30)]
    paths = []
    for i, profile in enumerate(batch):
        for kind in ("sampled", "evented") if i % 2 else ("sampled",):
            path = tmp_path / f"p{i}.{kind}.speedscope.json"
            path.write_bytes(build(profile, kind=kind, interval_us=1000))
            paths.append((path, profile, kind))
    shown = speedscope_import(*(p for p, _, _ in paths))
    for (path, profile, kind), result in zip(paths, shown, strict=True):
        assert "error" not in result, (path.name, result["error"])
        names = {row: f"Thread {int(t)}" for row, t in enumerate(profile.threads.thread_id)}
        weights = evented_durations(profile, 1000) if kind == "evented" else None
        expected = model_totals(profile, names, weights)
        drop = {name: {k: v for k, v in table.items() if v != (0, 0)}
                for name, table in frame_totals(result).items()}
        assert {n: t for n, t in drop.items() if t} == \
            {n: {k: v for k, v in t.items() if v != (0, 0)} for n, t in expected.items()
             if any(v != (0, 0) for v in t.values())}, path.name


def test_read_from_speedscope_keeps_the_sample_order():
    """A sampled speedscope file, read and written: the same samples in the same order (runs
    of one stack merged, as speedscope's time-order view merges them)."""
    profile = tachyon_format.read(_fixture("0.6.0/two-sampled.speedscope.json"))
    back = tachyon_format.read(build(profile))

    def runs(p):
        out = []
        for thread, stack, w in zip(p.samples.thread.tolist(), p.samples.stack.tolist(),
                                    p.weights().tolist(), strict=True):
            key = (p.extras["speedscope"].profiles[thread].name,
                   tuple(p.strings[p.frames.funcname[f]] for f in p.stack_frames(stack)))
            if out and out[-1][0] == key:
                out[-1][1] += w
            else:
                out.append([key, w])
        return out

    assert runs(back) == runs(profile)
    assert len(runs(profile)) < len(profile.samples)  # the file has a run to merge


def test_negative_weights_are_refused():
    profile = random_profile(np.random.default_rng(1), timestamps=False)
    negative = Samples(stack=profile.samples.stack, thread=profile.samples.thread,
                       values=-profile.samples.values)
    from dataclasses import replace

    with pytest.raises(ValueError, match="negative"):
        build(replace(profile, samples=negative))
