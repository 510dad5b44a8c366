"""Hypothesis: any valid profile.proto message, written by the protobuf classes, reads into
the model and writes back semantically equal (ids, string order and label order may change)."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tachyon_format
from tachyon_format.formats.pprof.writer import dumps
from tests.helpers.pprof import canonical, message_classes

Profile = message_classes()["Profile"]
i64 = st.integers(-(2**63), 2**63 - 1)
u64 = st.integers(1, 2**64 - 1)


@st.composite
def profiles(draw):
    strings = [""] + draw(st.lists(st.text(max_size=6), min_size=1, max_size=8))
    s = st.integers(0, len(strings) - 1)
    p = Profile(string_table=strings)
    num_types = draw(st.integers(1, 3))
    for _ in range(num_types):
        p.sample_type.add(type=draw(s), unit=draw(s))
    mapping_ids = draw(st.lists(u64, max_size=3, unique=True))
    for mid in mapping_ids:
        start = draw(st.integers(0, 2**40))
        p.mapping.add(id=mid, memory_start=start, memory_limit=start + draw(st.integers(0, 99)),
                      file_offset=draw(st.integers(0, 2**20)), filename=draw(s),
                      build_id=draw(s), has_functions=draw(st.booleans()),
                      has_inline_frames=draw(st.booleans()))
    function_ids = draw(st.lists(u64, max_size=4, unique=True))
    for fid in function_ids:
        p.function.add(id=fid, name=draw(s), system_name=draw(s), filename=draw(s),
                       start_line=draw(i64))
    location_ids = draw(st.lists(u64, min_size=1, max_size=5, unique=True))
    for lid in location_ids:
        loc = p.location.add(id=lid, address=draw(st.integers(0, 2**64 - 1)),
                             is_folded=draw(st.booleans()),
                             mapping_id=draw(st.sampled_from([0, *mapping_ids])))
        for _ in range(draw(st.integers(0, 3))):
            loc.line.add(function_id=draw(st.sampled_from([0, *function_ids])),
                         line=draw(i64), column=draw(st.integers(0, 500)))
    for _ in range(draw(st.integers(0, 6))):
        sample = p.sample.add(
            location_id=draw(st.lists(st.sampled_from(location_ids), max_size=5)),
            value=draw(st.lists(i64, min_size=num_types, max_size=num_types)))
        for _ in range(draw(st.integers(0, 3))):
            if draw(st.booleans()):
                sample.label.add(key=draw(s), str=draw(s))
            else:
                sample.label.add(key=draw(s), num=draw(i64), num_unit=draw(s))
    p.time_nanos, p.duration_nanos, p.period = draw(i64), draw(i64), draw(i64)
    if draw(st.booleans()):
        p.period_type.type, p.period_type.unit = draw(s), draw(s)
    p.comment.extend(draw(st.lists(s, max_size=2)))
    p.doc_url, p.drop_frames, p.keep_frames = draw(s), draw(s), draw(s)
    return p


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(profiles())
def test_any_valid_message_round_trips(message):
    data = message.SerializeToString()
    profile = tachyon_format.read(data, format="pprof")
    assert len(profile.samples) == len(message.sample)
    assert canonical(dumps(profile)) == canonical(data)
