"""speedscope read and write: speedscope's own files, round trips, the docs page, bad input."""

from __future__ import annotations

import contextlib
import json
import re
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tachyon_format
from tachyon_format.formats.speedscope.writer import build
from tachyon_format.model.aggregate import aggregate_samples
from tests.helpers.paths import DATA_DIR, REPO, SHARED_FIXTURES
from tests.helpers.speedscope import evented_durations

GOLDEN = sorted(DATA_DIR.glob("*.bin"))
FIXTURES = SHARED_FIXTURES / "speedscope" / "jlfwong-speedscope" / "sample" / "profiles" / \
    "speedscope"


def _fixture(relative: str):
    path = FIXTURES / relative
    if not path.is_file():
        pytest.skip(f"no speedscope fixture at {path}")
    return path


def stack_totals(profile, weights=None) -> Counter:
    """(thread ids, stack as frame names/files/lines, outermost last) -> summed weight (a
    frame without a name is written as "?")."""
    texts, frames = profile.strings.texts(), profile.frames
    tuples = profile.stacks.tuples()
    weights = profile.weights() if weights is None else weights
    out: Counter = Counter()
    for thread, stack, w in zip(profile.samples.thread.tolist(),
                                profile.samples.stack.tolist(), np.asarray(weights).tolist(),
                                strict=True):
        key = tuple((texts[frames.funcname[r]] or "?", texts[frames.filename[r]],
                     int(frames.lineno[r])) for r in tuples[stack])
        tid = (int(profile.threads.interpreter_id[thread]),
               int(profile.threads.thread_id[thread])) if thread >= 0 else None
        out[tid, key] += w
    return +out


def test_evented_and_sampled_simple_files_are_the_same_profile():
    """speedscope's test files hold one profile in both kinds: read, they agree per stack."""
    evented = tachyon_format.read(_fixture("0.0.1/simple.speedscope.json"))
    compact = tachyon_format.read(_fixture("0.0.1/simple-no-pretty-print.speedscope.json"))
    sampled = tachyon_format.read(_fixture("0.1.2/simple-sampled.speedscope.json"))
    assert stack_totals(evented) == stack_totals(sampled) == stack_totals(compact)
    two = tachyon_format.read(_fixture("0.6.0/two-sampled.speedscope.json"))
    assert len(two.threads) == 2
    assert sum(stack_totals(two).values()) == 2 * sum(stack_totals(sampled).values())
    assert tachyon_format.info(_fixture("0.6.0/two-sampled.speedscope.json"))["name"] == \
        "Two Samples"


@pytest.mark.parametrize("name", ["invalid/incomplete-trace.json",
                                  "invalid/out-of-order-events.json"])
def test_files_speedscope_rejects_are_format_errors(name):
    path = _fixture(name)
    with pytest.raises(tachyon_format.FormatError):
        tachyon_format.read(path)
    assert tachyon_format.validate(path)


@pytest.mark.parametrize("source", GOLDEN, ids=lambda p: p.stem)
def test_sampled_round_trip_keeps_totals_per_thread_and_stack(source):
    profile = tachyon_format.read(source)
    back = tachyon_format.read(build(profile))
    assert tachyon_format.sniff(build(profile)) == "speedscope"
    assert stack_totals(back) == stack_totals(profile)
    again = build(back)
    assert stack_totals(tachyon_format.read(again)) == stack_totals(profile)


@pytest.mark.parametrize("source", GOLDEN, ids=lambda p: p.stem)
def test_aggregated_profile_writes_the_aggregated_output(source):
    profile = tachyon_format.read(source)
    assert build(aggregate_samples(profile)) == build(profile, aggregate=True)


@pytest.mark.parametrize("source", GOLDEN, ids=lambda p: p.stem)
def test_evented_round_trip_gives_each_stack_its_time(source):
    """Evented, read back: per (thread, stack) the time the writer's documented rule gives,
    summed one sample at a time."""
    profile = tachyon_format.read(source)
    data = build(profile, kind="evented", interval_us=1000)
    back = tachyon_format.read(data)
    durations = evented_durations(profile, 1000)
    expected = stack_totals(profile, durations)
    expected = +Counter({k: v for k, v in expected.items() if k[1]})  # empty stacks: no time
    assert stack_totals(back) == expected
    if len(back.samples):
        assert back.samples.timestamp_us is not None


def test_evented_needs_timestamps():
    profile = aggregate_samples(tachyon_format.read(DATA_DIR / "threads_wall_zstd.bin"))
    with pytest.raises(ValueError, match="timestamps"):
        build(profile, kind="evented")


def test_profiles_with_only_addresses_are_written(tmp_path):
    source = SHARED_FIXTURES / "gperftools_cpu" / "google-pprof" / "profile" / "testdata" / \
        "gobench.cpu"
    if not source.is_file():
        pytest.skip(f"no shared fixture {source}")
    profile = tachyon_format.read(source)
    path = tmp_path / "gobench.speedscope.json"
    tachyon_format.write(profile, path, sample_type="samples")
    back = tachyon_format.read(path)
    assert back.weights().sum() == profile.weights("samples").sum()
    names = {f["name"] for f in json.loads(path.read_text())["shared"]["frames"]}
    assert all(name.startswith("0x") for name in names)


def test_docs_page_blocks_run(tmp_path, monkeypatch):
    page = (REPO / "docs" / "formats" / "speedscope.md").read_text()
    monkeypatch.chdir(tmp_path)
    (tmp_path / "profile.bin").write_bytes((DATA_DIR / "threads_wall_zstd.bin").read_bytes())
    for block in re.findall(r"```python\n(.*?)```", page, flags=re.S):
        exec(compile(block, "speedscope.md", "exec"), {})
    (tmp_path / "profile.speedscope.json").write_bytes(b"")
    assert tachyon_format.validate(tmp_path / "profile.speedscope.json", format="speedscope")


# --- bad input ----------------------------------------------------------------------------------

SIMPLE = build(tachyon_format.read(DATA_DIR / "synthetic_edges_raw.bin"), kind="evented")


@pytest.mark.parametrize("cut", range(0, len(SIMPLE), max(1, len(SIMPLE) // 60)))
def test_truncated_files_raise_format_error(cut):
    with pytest.raises(tachyon_format.FormatError):
        tachyon_format.read(SIMPLE[:cut], format="speedscope")


@pytest.mark.parametrize("patch, where", [
    (("\"frame\":0", "\"frame\":99999"), "frame"),
    (("\"frame\":0", "\"frame\":\"0\""), "frame"),
    (("\"type\":\"O\"", "\"type\":\"X\""), "type"),
    (("\"type\": \"evented\"", "\"type\": \"other\""), "type"),
    (("\"unit\": \"microseconds\"", "\"unit\": \"hours\""), "unit"),
    (("\"name\":", "\"nom\":"), "name"),
])
def test_wrong_fields_are_named(patch, where):
    assert patch[0] in SIMPLE.decode()
    bad = SIMPLE.decode().replace(*patch, 1).encode()
    with pytest.raises(tachyon_format.FormatError) as info:
        tachyon_format.read(bad, format="speedscope")
    assert where in str(info.value)


def _sampled(samples, weights, frames=2, unit="none"):
    return json.dumps({"$schema": "https://www.speedscope.app/file-format-schema.json",
                       "shared": {"frames": [{"name": f"f{i}"} for i in range(frames)]},
                       "profiles": [{"type": "sampled", "name": "p", "unit": unit,
                                     "startValue": 0, "endValue": 1, "samples": samples,
                                     "weights": weights}]}).encode()


def test_lone_surrogates_in_names_are_kept_and_written():
    data = json.dumps({"$schema": "https://www.speedscope.app/file-format-schema.json",
                       "shared": {"frames": [{"name": "a\ud800b"}, {"name": "x\udcffy"}]},
                       "profiles": [{"type": "sampled", "name": "p", "unit": "none",
                                     "startValue": 0, "endValue": 2, "samples": [[0], [1]],
                                     "weights": [1, 1]}]}).encode()
    profile = tachyon_format.read(data)
    assert not profile.strings.is_valid_utf8()[1:].any()
    back = tachyon_format.read(build(profile))
    assert sorted(back.strings.texts()[1:]) == ["a\ufffd\ufffd\ufffdb", "x\ufffd\ufffd\ufffdy"]


def test_sampled_checks():
    for samples, weights in [([[0, 2]], [1]), ([[0, 1.5]], [1]), ([[0], [1]], [1]),
                             ([0], [1]), ([[0]], ["1"]), ([[0]], [0.5]), ([[0]], [2**70])]:
        with pytest.raises(tachyon_format.FormatError):
            tachyon_format.read(_sampled(samples, weights))
    profile = tachyon_format.read(_sampled([[0, 1], [1]], [0.5, 1.25], unit="milliseconds"))
    assert profile.meta.sample_types[0].unit == "nanoseconds"
    assert profile.weights().tolist() == [500_000, 1_250_000]


@settings(max_examples=60)
@given(st.binary(max_size=200) | st.sampled_from([SIMPLE]).flatmap(
    lambda s: st.tuples(st.integers(0, len(s) - 1), st.binary(min_size=1, max_size=3)).map(
        lambda p: s[:p[0]] + p[1] + s[p[0] + len(p[1]):])))
def test_any_bytes_read_or_raise_format_error(data):
    with contextlib.suppress(tachyon_format.FormatError):
        tachyon_format.read(data, format="speedscope")


def test_sniff_and_file_level_facts():
    path = _fixture("0.6.0/two-sampled.speedscope.json")
    assert tachyon_format.sniff(path) == "speedscope"
    assert tachyon_format.sniff(b'{"shared": {"frames": []}, "profiles": []}') == "speedscope"
    assert tachyon_format.sniff(b'{"traceEvents": []}') != "speedscope"  # a Chrome trace
    again = json.loads(build(tachyon_format.read(path)))
    original = json.loads(path.read_text())
    for key in ("name", "activeProfileIndex", "$schema"):
        assert again[key] == original[key]
    assert [p["name"] for p in again["profiles"]] == [p["name"] for p in original["profiles"]]
    assert [p["unit"] for p in again["profiles"]] == [p["unit"] for p in original["profiles"]]


def _evented(events, frames=2, unit="none"):
    return json.dumps({"$schema": "https://www.speedscope.app/file-format-schema.json",
                       "shared": {"frames": [{"name": f"f{i}"} for i in range(frames)]},
                       "profiles": [{"type": "evented", "name": "p", "unit": unit,
                                     "startValue": 0, "endValue": 1,
                                     "events": events}]}).encode()


def test_evented_checks():
    def ev(kind, frame, at):
        return {"type": kind, "frame": frame, "at": at}

    for events in ([ev("O", 0, 0), ev("C", 0, 2**70)], [ev("O", 0, 0), ev("C", 0, "1")],
                   [ev("O", 0, 1), ev("C", 0, 0)], [ev("O", 0, 0), ev("C", 1, 1)],
                   [ev("O", 0, 0)], [ev("C", 0, 0)], [ev("O", 2, 0), ev("C", 2, 1)],
                   [ev("O", 0, 0), ev("C", 0, True)], [[0]], {"0": 1}):
        with pytest.raises(tachyon_format.FormatError):
            tachyon_format.read(_evented(events))
    extreme = [ev("O", 0, -(2**62)), ev("O", 1, 0), ev("C", 1, 2**62), ev("C", 0, 2**62)]
    profile = tachyon_format.read(_evented(extreme))
    assert profile.weights().tolist() == [2**62, 2**62]
    assert profile.samples.timestamp_us is None  # unit none: no clock
    timed = tachyon_format.read(_evented([ev("O", 0, 0.5), ev("C", 0, 1.75)],
                                         unit="milliseconds"))
    assert timed.meta.sample_types[0].unit == "nanoseconds"
    assert timed.weights().tolist() == [1_250_000]
    assert timed.samples.timestamp_us.tolist() == [500]


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner,
                                                                max_size=4),
    max_leaves=12)
SLOTS = [("shared", "frames"), ("shared", "frames", 0), ("shared", "frames", 0, "line"),
         ("profiles", 0), ("profiles", 0, "samples"), ("profiles", 0, "samples", 0),
         ("profiles", 0, "weights"), ("profiles", 0, "weights", 0), ("profiles", 1, "events"),
         ("profiles", 1, "events", 0), ("profiles", 1, "events", 0, "at"),
         ("profiles", 1, "unit"), ("profiles", 0, "startValue"), ("name",)]


@settings(max_examples=150)
@given(st.sampled_from(SLOTS), JSON_VALUES)
def test_any_json_in_any_slot_reads_or_raises_format_error(slot, value):
    doc = {"$schema": "https://www.speedscope.app/file-format-schema.json",
           "shared": {"frames": [{"name": "a", "line": 1}, {"name": "b"}]},
           "profiles": [{"type": "sampled", "name": "p", "unit": "none", "startValue": 0,
                         "endValue": 1, "samples": [[0, 1], [0]], "weights": [1, 2]},
                        {"type": "evented", "name": "q", "unit": "seconds", "startValue": 0,
                         "endValue": 1, "events": [{"type": "O", "frame": 0, "at": 0},
                                                   {"type": "C", "frame": 0, "at": 1}]}]}
    target = doc
    for key in slot[:-1]:
        target = target[key]
    target[slot[-1]] = value
    try:
        profile = tachyon_format.read(json.dumps(doc).encode(), format="speedscope")
    except tachyon_format.FormatError:
        return
    if (profile.samples.values < 0).any():
        with pytest.raises(ValueError, match="negative"):
            build(profile)
        return
    back = tachyon_format.read(build(profile))  # what was read can be written, and read back
    assert stack_totals(back, _own_weights(back)) == stack_totals(profile,
                                                                   _own_weights(profile))


def _own_weights(profile):
    """Each sample's weight in its own speedscope profile's unit (the column it was read
    into: zeros elsewhere, so the row sum)."""
    return profile.samples.values.sum(axis=1)


def test_profiles_in_different_units_keep_their_weights_and_units():
    doc = {"$schema": "https://www.speedscope.app/file-format-schema.json",
           "shared": {"frames": [{"name": "a"}, {"name": "b"}]},
           "profiles": [{"type": "sampled", "name": "p", "unit": "none", "startValue": 0,
                         "endValue": 3, "samples": [[0, 1], [0]], "weights": [1, 2]},
                        {"type": "sampled", "name": "m", "unit": "bytes", "startValue": 0,
                         "endValue": 9, "samples": [[1]], "weights": [9]},
                        {"type": "evented", "name": "q", "unit": "seconds", "startValue": 0,
                         "endValue": 1, "events": [{"type": "O", "frame": 0, "at": 0},
                                                   {"type": "C", "frame": 0, "at": 1}]}]}
    profile = tachyon_format.read(json.dumps(doc).encode())
    assert [t.type for t in profile.meta.sample_types] == ["samples", "space", "time"]
    written = json.loads(build(profile))
    assert [p["unit"] for p in written["profiles"]] == ["none", "bytes", "seconds"]
    assert [p["weights"] for p in written["profiles"]] == [[1, 2], [9], [1]]
    back = tachyon_format.read(build(profile))
    assert stack_totals(back, _own_weights(back)) == stack_totals(profile,
                                                                   _own_weights(profile))
