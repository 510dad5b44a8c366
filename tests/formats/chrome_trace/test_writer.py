"""Chrome trace events: the trace says what the samples say.

* structure, per track: timestamps sorted, complete events nested (each inside the one it
  starts in), metadata naming every track;
* at every sample's start, the slices open on its track are its stack's functions, outermost
  first (read from the trace, checked against the profile);
* the slices equal those of a per-sample scalar model (an independent rewrite of the
  numpy computation); on regular timelines every function's total time is samples x interval;
* the status counters give every sample's status bits; an aggregated profile is refused.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tachyon_format
from tachyon_format.formats.chrome_trace import sniff
from tachyon_format.formats.chrome_trace.writer import COUNTED_STATUS, dumps
from tachyon_format.model import Frames, Meta, Profile, Samples, Stacks, Strings, Threads, ValueType
from tachyon_format.model.aggregate import aggregate_samples
from tests.helpers.paths import DATA_DIR

GOLDEN = sorted(p.name for p in DATA_DIR.glob("*.bin"))


def parsed(data: bytes) -> tuple[dict, dict, dict]:
    """The events of a trace per (pid, tid): complete events, counter events; and names."""
    trace = json.loads(data)
    slices, counters, names = defaultdict(list), defaultdict(list), {}
    for event in trace["traceEvents"]:
        key = (event["pid"], event.get("tid", 0))
        if event["ph"] == "X":
            slices[key].append(event)
        elif event["ph"] == "C":
            counters[event["pid"], event["name"]].append(event)
        elif event["ph"] == "M" and event["name"] == "thread_name":
            names[key] = event["args"]["name"]
        else:
            assert event["ph"] == "M", event
    return slices, counters, names


def check_structure(slices: dict) -> None:
    """Per track: starts sorted, every event inside the enclosing one (a stack of ends)."""
    for events in slices.values():
        starts = [e["ts"] for e in events]
        assert starts == sorted(starts)
        open_ends: list[int] = []
        for e in events:
            assert isinstance(e["ts"], int) and e["dur"] > 0
            while open_ends and open_ends[-1] <= e["ts"]:
                open_ends.pop()
            assert not open_ends or e["ts"] + e["dur"] <= open_ends[-1], e
            open_ends.append(e["ts"] + e["dur"])


def sample_rows(profile: Profile):
    """Per sample, in file order: track key, start (relative us), stack names root first."""
    samples, frames, strings = profile.samples, profile.frames, profile.strings
    tuples = profile.stacks.tuples()
    base = int(samples.timestamp_us.min()) if len(samples.stack) else 0
    for i, (stack, row) in enumerate(zip(samples.stack.tolist(), samples.thread.tolist(),
                                         strict=True)):
        if row < 0:
            key = (1, 0)
        else:
            key = (int(profile.threads.interpreter_id[row]) + 1,
                   int(profile.threads.thread_id[row]))
        names = [(strings[int(frames.funcname[f])] or "???", strings[int(frames.filename[f])])
                 for f in reversed(tuples[stack])]
        yield i, key, int(samples.timestamp_us[i]) - base, names


def model_slices(profile: Profile, interval: int, max_gap: int) -> Counter:
    """The scalar model: per track, walk the samples in time order, keeping the open frames
    while the next sample (no farther than max_gap) shares them from the outermost one."""
    per_track = defaultdict(list)
    for _, key, start, names in sample_rows(profile):
        per_track[key].append((start, names))
    out: Counter = Counter()
    for key, rows in per_track.items():
        rows.sort(key=lambda r: r[0])
        open_: list[tuple[tuple[str, str], int]] = []
        for j, (start, names) in enumerate(rows):
            nxt = rows[j + 1] if j + 1 < len(rows) else None
            joined = nxt is not None and nxt[0] - start <= max_gap
            end = nxt[0] if joined else start + interval
            if nxt is not None and not joined:
                end = min(end, nxt[0])
            for depth, name in enumerate(names):
                if depth >= len(open_):
                    open_.append((name, start))
            keep = 0
            if joined:
                while (keep < len(names) and keep < len(nxt[1])
                       and names[keep] == nxt[1][keep]):
                    keep += 1
            for name, opened in open_[keep:]:
                out[key, name[0], name[1], opened, end - opened] += 1
            del open_[keep:]
    return out


def written_slices(slices: dict) -> Counter:
    return Counter((key, e["name"], e["args"]["file"], e["ts"], e["dur"])
                   for key, events in slices.items() for e in events)


def check_profile(profile: Profile, **options) -> dict:
    data = dumps(profile, **options)
    assert sniff(data[:4096])
    trace = json.loads(data)
    slices, counters, names = parsed(data)
    check_structure(slices)
    assert set(slices) <= set(names)
    interval, max_gap = trace["otherData"]["interval_us"], trace["otherData"]["max_gap_us"]
    assert written_slices(slices) == model_slices(profile, interval, max_gap)
    for i, key, start, stack in sample_rows(profile):  # what is open at each sample's start
        open_ = [e for e in slices.get(key, []) if e["ts"] <= start < e["ts"] + e["dur"]]
        assert [(e["name"], e["args"]["file"]) for e in open_] == stack
        status = profile.samples.status
        if status is not None:
            label = names[key] + " status"
            before = [c for c in counters[key[0], label] if c["ts"] <= start]
            shown = before[-1]["args"]
            for name, bit in COUNTED_STATUS:
                assert shown[name] == int(bool(int(status[i]) & int(bit)))
    return trace


@pytest.mark.parametrize("name", GOLDEN)
def test_golden_files(name):
    check_profile(tachyon_format.read(DATA_DIR / name))


@pytest.mark.parametrize("interval", [1, 1_000_000])
def test_a_tight_gap_makes_holes(interval):
    profile = tachyon_format.read(DATA_DIR / "threads_gil_blocking.bin")
    check_profile(profile, max_gap_us=1, interval_us=interval)


def test_aggregated_profile_is_refused(tmp_path):
    profile = aggregate_samples(tachyon_format.read(DATA_DIR / "threads_wall_zstd.bin"))
    with pytest.raises(ValueError, match="no timestamps"):
        tachyon_format.write(profile, tmp_path / "x.trace.json")


def regular(stacks: list[tuple[int, list[int]]], ticks: list[int], interval: int,
            status: list[int]) -> Profile:
    """Samples (thread, stack of functions root first) at ``tick * interval``."""
    texts = [""] + [f"f{i}" for i in range(6)] + ["m.py"]
    tree, ids = Stacks.from_lists([s for _, s in stacks] + [[0]], innermost_first=False)
    ids = np.asarray(ids)[:-1]
    stack = np.array([ids[j] if s else -1 for j, (_, s) in enumerate(stacks)], np.int32)
    n = 6
    lines = np.arange(n, dtype=np.int32) + 1
    unknown = np.full(n, -1, np.int32)
    frames = Frames(np.full(n, 7, np.uint32), np.arange(1, n + 1, dtype=np.uint32), lines,
                    lines, unknown, unknown, np.full(n, -1, np.int16))
    threads = Threads(np.zeros(2, np.uint32), np.array([11, 12], np.uint64))
    samples = Samples(stack, np.array([t for t, _ in stacks], np.int32),
                      timestamp_us=np.array(ticks, np.uint64) * np.uint64(interval) + 5000,
                      status=np.array(status, np.uint8))
    return Profile(Strings.from_texts(texts), frames, tree, threads, samples,
                   Meta(period_type=ValueType("wall", "nanoseconds"), period=interval * 1000))


@settings(max_examples=60)
@given(st.data())
def test_drawn_timelines(data):
    n = data.draw(st.integers(1, 30))
    stacks = data.draw(st.lists(st.tuples(st.integers(0, 1),
                                          st.lists(st.integers(0, 5), max_size=5)),
                                min_size=n, max_size=n))
    steps = data.draw(st.lists(st.sampled_from([1, 1, 1, 2, 3]), min_size=n, max_size=n))
    ticks = np.cumsum(steps).tolist()
    status = data.draw(st.lists(st.integers(0, 63), min_size=n, max_size=n))
    profile = regular(stacks, ticks, 1000, status)
    trace = check_profile(profile, max_gap_us=1000)
    # every sample lasts one interval: a function's time, counted once per stack, is its
    # samples x interval
    want = Counter()
    for _, s in stacks:
        for f in set(s):
            want[f"f{f}"] += 1000
    slices, _, _ = parsed(json.dumps(trace).encode())
    got = Counter()
    for events in slices.values():
        open_ends: list[tuple[int, str]] = []
        for e in events:
            while open_ends and open_ends[-1][0] <= e["ts"]:
                open_ends.pop()
            if all(name != e["name"] for _, name in open_ends):  # outermost of its name
                got[e["name"]] += e["dur"]
            open_ends.append((e["ts"] + e["dur"], e["name"]))
    assert got == want


def test_sniff_and_public_verb(tmp_path):
    profile = tachyon_format.read(DATA_DIR / "threads_wall_zstd.bin")
    tachyon_format.write(profile, tmp_path / "run.trace.json")
    assert tachyon_format.sniff(tmp_path / "run.trace.json") == "chrome-trace"
    assert (tmp_path / "run.trace.json").read_bytes() == dumps(profile)
    assert sniff(b' {"traceEvents": [')
    assert sniff(b'{"displayTimeUnit": "ns", "traceEvents": [{"ph": "X"')
    assert not sniff(b'[{"ph": "X"}]') and not sniff(b'{"shared": {}}')
    with pytest.raises(ValueError, match="cannot read"):
        tachyon_format.read(tmp_path / "run.trace.json")
