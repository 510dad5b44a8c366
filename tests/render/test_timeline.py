"""The timeline page: downsampling against a per-sample model, and the page loaded in a real
browser (headless Chromium)."""

from __future__ import annotations

import html
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tachyon_format
from tachyon_format import ThreadStatus
from tachyon_format.model.aggregate import aggregate_samples
from tachyon_format.render.timeline import CATEGORIES, status_categories, timeline, timeline_data
from tests.helpers.chromium import dump_dom, requires_chromium, root_attribute
from tests.helpers.made_up_profiles import profiles
from tests.helpers.paths import DATA_DIR

GIL = DATA_DIR / "threads_gil_blocking.bin"


def test_a_profile_without_timestamps_is_refused(tmp_path):
    aggregated = aggregate_samples(tachyon_format.read(GIL))
    with pytest.raises(ValueError, match="timestamps"):
        timeline(aggregated, tmp_path / "t.html")


def test_status_categories_follow_the_bits():
    cat = status_categories()
    names = [name for name, _ in CATEGORIES]
    assert names[cat[ThreadStatus.HAS_GIL | ThreadStatus.ON_CPU]] == "GIL held, on CPU"
    assert names[cat[ThreadStatus.HAS_GIL]] == "GIL held, off CPU"
    assert names[cat[ThreadStatus.ON_CPU]] == "on CPU without the GIL"
    assert names[cat[ThreadStatus.GIL_REQUESTED | ThreadStatus.ON_CPU]] == "waiting for the GIL"
    assert names[cat[ThreadStatus.HAS_EXCEPTION | ThreadStatus.HAS_GIL]] == "has an exception"
    assert names[cat[ThreadStatus.MAIN_THREAD]] == names[cat[0]] == "idle (no GIL, off CPU)"


@settings(max_examples=60, deadline=None)
@given(profiles(), st.integers(1, 50))
def test_each_kept_bucket_is_the_mode_of_its_samples(profile, max_buckets):
    data = timeline_data(profile, max_buckets=max_buckets)
    samples = profile.samples
    n = len(samples)
    assert data["buckets"] <= max_buckets
    if not n:
        assert data["lanes"] == []
        return
    stamps = samples.timestamp_us.astype(np.int64)
    bucket = (stamps - stamps.min()) // data["bucket_us"]
    categories = status_categories()[samples.status]
    by_lane: dict[int, dict] = {}
    for t, b, c, s in zip(samples.thread.tolist(), bucket.tolist(), categories.tolist(),
                          samples.stack.tolist(), strict=True):
        cell = by_lane.setdefault(t, {}).setdefault(b, (Counter(), Counter()))
        cell[0][c] += 1
        cell[1][s] += 1
    assert len(data["lanes"]) == len(by_lane)
    offsets, frames = data["stack_offsets"], data["stack_frames"]
    stack_of = profile.stacks.tuples()
    for lane, thread in zip(data["lanes"], sorted(by_lane), strict=True):
        cells = by_lane[thread]
        assert lane["bucket"] == sorted(cells)
        for b, c, s in zip(lane["bucket"], lane["category"], lane["stack"], strict=True):
            counts, stacks = cells[b]
            assert c == min(k for k, v in counts.items() if v == max(counts.values()))
            best = min(k for k, v in stacks.items() if v == max(stacks.values()))
            names = [data["texts"][data["frame_name"][f]]
                     for f in frames[offsets[s]:offsets[s + 1]]]
            assert names == [profile.strings[profile.frames.funcname[f]] for f in stack_of[best]]


def test_a_long_run_stays_small(tmp_path):
    profile = tachyon_format.read(DATA_DIR / "synthetic_long_repeat_zstd.bin")
    data = timeline_data(profile, max_buckets=100)
    assert data["buckets"] <= 100
    assert sum(len(lane["bucket"]) for lane in data["lanes"]) <= 100 * len(data["lanes"])
    assert data["samples"] == len(profile.samples)


@requires_chromium
@pytest.mark.parametrize("name", ["threads_gil_blocking", "exceptions_gc_gil_native"])
def test_the_page_renders_in_chromium_with_a_stack(name, tmp_path):
    profile = tachyon_format.read(DATA_DIR / f"{name}.bin")
    out = tmp_path / "timeline.html"
    timeline(profile, out, title=name)
    dom = dump_dom(out)
    assert root_attribute(dom, "data-errors") == ""
    data = timeline_data(profile)
    assert int(root_attribute(dom, "data-rendered")) == len(data["lanes"])
    for lane in data["lanes"]:
        assert f">{lane['label']}</div>" in dom
    # the stack panel shows the busiest lane's first kept stack, innermost frame first
    lane = max(data["lanes"], key=lambda lane: len(lane["bucket"]))
    s = lane["stack"][0]
    names = [data["texts"][data["frame_name"][f]]
             for f in data["stack_frames"][data["stack_offsets"][s]:data["stack_offsets"][s + 1]]]
    shown = dom.split('<ol id="stack">', 1)[1].split("</ol>", 1)[0]
    assert [html.unescape(item.split("<span", 1)[0]) for item in shown.split("<li>")[1:]] == names
    assert names
