"""Reading pprof: every shared fixture, checked against the protobuf classes' decode."""

from __future__ import annotations

import numpy as np
import pytest

import tachyon_format
from tachyon_format.formats.pprof.facts import PprofFacts
from tests.helpers.pprof import fixture_params, message_of


def frames_of_sample(profile, i, tuples):
    frames = profile.frames
    names = profile.strings
    return [(names[frames.funcname[f]], names[frames.filename[f]], int(frames.lineno[f]))
            for f in tuples[int(profile.samples.stack[i])]]


@pytest.mark.parametrize("path", fixture_params())
def test_every_sample_as_protobuf_decodes_it(path):
    data = path.read_bytes()
    msg = message_of(data)
    profile = tachyon_format.read(path)
    s = list(msg.string_table)
    functions = {f.id: f for f in msg.function}
    locations = {loc.id: loc for loc in msg.location}
    assert len(profile.samples) == len(msg.sample)
    tuples = profile.stacks.tuples()
    for i, sample in enumerate(msg.sample):
        expected = []
        for lid in sample.location_id:
            lines = locations[lid].line or [None]
            for line in lines:  # innermost line first
                fn = functions.get(line.function_id) if line is not None else None
                expected.append((s[fn.name] if fn else "", s[fn.filename] if fn else "",
                                 (line.line or -1) if line is not None else -1))
        assert frames_of_sample(profile, i, tuples) == expected, i
        assert profile.samples.values[i].tolist() == list(sample.value)
    assert [(v.type, v.unit) for v in profile.meta.sample_types] == [
        (s[t.type], s[t.unit]) for t in msg.sample_type]
    assert profile.meta.period == msg.period
    assert profile.meta.time_ns == (msg.time_nanos or None)
    assert profile.meta.duration_ns == (msg.duration_nanos or None)
    assert len(profile.mappings) == len(msg.mapping)
    assert profile.mappings.start.tolist() == [m.memory_start for m in msg.mapping]
    facts = profile.extras["pprof"]
    assert isinstance(facts, PprofFacts)
    assert facts["location_id"].tolist() == [loc.id for loc in msg.location]
    assert facts["function_id"].tolist() == [f.id for f in msg.function]


@pytest.mark.parametrize("path", fixture_params())
def test_labels_kept_or_mapped(path):
    msg = message_of(path.read_bytes())
    profile = tachyon_format.read(path)
    facts = profile.extras["pprof"]
    s = list(msg.string_table)
    kept = {}
    for i, key, string, num in zip(facts["label_sample"].tolist(), facts["label_key"].tolist(),
                                   facts["label_str"].tolist(), facts["label_num"].tolist(),
                                   strict=True):
        kept.setdefault(i, []).append((s[key], s[string], num))
    for i, sample in enumerate(msg.sample):
        expected = sorted((s[lb.key], s[lb.str], lb.num) for lb in sample.label)
        assert sorted(kept.get(i, [])) == expected  # no fixture has our thread labels


def test_parca_labels_stay_labels():
    params = [p for p in fixture_params() if p.values[0] is not None
              and p.values[0].name == "profile-with-labels.pb.gz"]
    if not params:
        pytest.skip("parca fixture absent")
    profile = tachyon_format.read(params[0].values[0])
    facts = profile.extras["pprof"]
    keys = {profile.strings[k] for k in facts["label_key"].tolist()}
    assert keys == {"thread_id", "thread_name"}
    assert facts.mapped_labels == {} and len(profile.threads) == 0
    assert (profile.samples.thread == -1).all()


@pytest.mark.parametrize("path", fixture_params())
def test_info_without_samples(path):
    facts = tachyon_format.info(path)
    msg = message_of(path.read_bytes())
    assert facts["num_samples"] == len(msg.sample)
    assert facts["num_locations"] == len(msg.location)
    assert facts["period"] == msg.period
    assert facts["compression"] == "gzip"
    profile = tachyon_format.read(path)
    assert tachyon_format.info(profile)["num_samples"] == len(msg.sample)


@pytest.mark.parametrize("path", fixture_params())
def test_sniffed_from_content(path):
    assert tachyon_format.sniff(path) == "pprof"
    assert tachyon_format.sniff(path.read_bytes()) == "pprof"
    raw = message_of(path.read_bytes()).SerializeToString()
    assert tachyon_format.sniff(raw) == "pprof"


def test_large_profile_is_columns(tmp_path):
    params = [p for p in fixture_params() if p.values[0] is not None
              and p.values[0].name == "large.cpu"]
    if not params:
        pytest.skip("large.cpu fixture absent")
    profile = tachyon_format.read(params[0].values[0])
    assert len(profile.samples) == 20430
    assert profile.samples.values.dtype == np.int64
    assert profile.samples.stack.dtype == np.int32
    assert len(profile.strings) == 23066
