"""The declared profile.proto against the upstream file, and the runtime descriptors."""

from __future__ import annotations

import re

import pytest

from tachyon_format.schema import leb128
from tachyon_format.schema import pprof as spec
from tachyon_format.schema import pprof_wire as wire
from tests.helpers.pprof import UPSTREAM_PROTO


def upstream_fields() -> dict[str, list[tuple[int, str, str, bool]]]:
    """Messages of the upstream .proto: (number, name, type, repeated) per field."""
    text = re.sub(r"//[^\n]*", "", UPSTREAM_PROTO.read_text(encoding="utf-8"))
    out = {}
    for name, body in re.findall(r"message\s+(\w+)\s*\{(.*?)\n\}", text, flags=re.S):
        out[name] = [(int(number), field, type_, bool(label))
                     for label, type_, field, number in re.findall(
                         r"(repeated\s+)?(\w+)\s+(\w+)\s*=\s*(\d+)\s*;", body)]
    return out


@pytest.mark.skipif(not UPSTREAM_PROTO.is_file(),
                    reason=f"upstream profile.proto absent ({UPSTREAM_PROTO})")
def test_declarations_match_upstream_proto():
    upstream = upstream_fields()
    declared = {m.name: [(f.number, f.name, f.type, f.repeated) for f in m.fields]
                for m in spec.MESSAGES}
    assert declared == upstream
    assert "package perftools.profiles;" in UPSTREAM_PROTO.read_text(encoding="utf-8")


def test_upstream_commit_is_pinned_in_the_docstring():
    assert spec.UPSTREAM_COMMIT in spec.__doc__
    assert re.fullmatch(r"[0-9a-f]{40}", spec.UPSTREAM_COMMIT)


def test_every_message_and_field_has_a_doc():
    for message in spec.MESSAGES:
        assert len(message.doc) > 10, message.name
        for f in message.fields:
            assert len(f.doc) > 5, f"{message.name}.{f.name}"


def test_runtime_classes_round_trip():
    classes = spec.message_classes()
    Profile = classes["Profile"]
    p = Profile(string_table=["", "cpu", "nanoseconds"], period=10, comment=[1, 2])
    p.sample_type.add(type=1, unit=2)
    s = p.sample.add(location_id=[1, 2], value=[3])
    s.label.add(key=1, num=-5, num_unit=2)
    p.location.add(id=1, address=0x400000, is_folded=True).line.add(function_id=1, line=3,
                                                                    column=4)
    data = p.SerializeToString()
    assert Profile.FromString(data) == p
    assert Profile.DESCRIPTOR.full_name == "perftools.profiles.Profile"
    # proto3 packs repeated scalars: location_id is one LEN field
    fields = wire.MESSAGE.parse(s.SerializeToString())
    assert [(f.number, f.wire_type) for f in fields] == [(1, 2), (2, 2), (3, 2)]


def test_field_construct_reads_what_protobuf_writes():
    Profile = spec.message_classes()["Profile"]
    p = Profile(time_nanos=-1, duration_nanos=7, string_table=["", "x"])
    fields = wire.MESSAGE.parse(p.SerializeToString())
    by_number = {f.number: f.value for f in fields}
    assert by_number[9] == 2**64 - 1  # int64 -1: ten bytes, two's complement
    assert by_number[10] == 7
    assert wire.MESSAGE.build(fields) == p.SerializeToString()


def test_wire_types_of_declared_fields():
    assert spec.wire_type_of(spec.PROFILE.field("sample")) == leb128.LEN
    assert spec.wire_type_of(spec.PROFILE.field("period")) == leb128.VARINT
    assert spec.wire_type_of(spec.SAMPLE.field("location_id")) == leb128.LEN  # packed


def test_every_key_is_what_protobuf_writes():
    """key_of, from which the reader and writer take every key, against the first byte
    protobuf serializes for each field set alone (all keys of profile.proto are one byte)."""
    classes = spec.message_classes()
    values = {"int64": 1, "uint64": 1, "bool": True, "string": "x"}
    for message in spec.MESSAGES:
        for f in message.fields:
            instance = classes[message.name]()
            if f.type in values and f.repeated:
                getattr(instance, f.name).append(values[f.type])
            elif f.type in values:
                setattr(instance, f.name, values[f.type])
            elif f.repeated:
                getattr(instance, f.name).add()
            else:
                getattr(instance, f.name).SetInParent()
            assert instance.SerializeToString()[0] == spec.key_of(message, f.name), f.name


def test_generated_page_has_every_field():
    from tests.helpers.paths import REPO

    text = (REPO / "docs" / "format" / "pprof.md").read_text(encoding="utf-8")
    for message in spec.MESSAGES:
        section = text.split(f"\n## {message.name}\n", 1)[1].split("\n## ", 1)[0]
        rows = [line for line in section.splitlines() if line.startswith("| ")][1:]
        assert [row.split(" | ")[1] for row in rows] == [f"`{f.name}`" for f in
                                                         message.fields]
        assert [int(row.split(" | ")[0].strip("| ")) for row in rows] == [
            f.number for f in message.fields]
