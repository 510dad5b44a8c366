"""Bad pprof input: FormatError from read() (message, field path, offset), never a
protobuf, zlib or numpy exception; validate() lists the problem and never raises."""

from __future__ import annotations

import contextlib
import gzip
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tachyon_format
from tachyon_format import FormatError
from tachyon_format.formats.pprof.compression import compress
from tachyon_format.formats.pprof.reader import read
from tests.helpers.pprof import fixture_files, message_classes

Profile = message_classes()["Profile"]


def small_profile(**changes) -> Profile:
    p = Profile(string_table=["", "samples", "count", "main", "app.py"])
    p.sample_type.add(type=1, unit=2)
    p.function.add(id=1, name=3, filename=4)
    p.location.add(id=1).line.add(function_id=1, line=7)
    p.sample.add(location_id=[1], value=[5])
    for name, value in changes.items():
        value(p) if callable(value) else setattr(p, name, value)
    return p


def error_of(data: bytes) -> FormatError:
    with pytest.raises(FormatError) as info:
        read(data)
    problems = tachyon_format.validate(data, format="pprof")
    assert problems and str(problems[0]) == str(info.value)
    return info.value


def test_a_small_profile_reads():
    profile = read(small_profile().SerializeToString())
    assert profile.weights("samples").tolist() == [5]


@pytest.mark.parametrize(("change", "path"), [
    (lambda p: p.sample.add(location_id=[9], value=[1]), "Profile -> sample -> 1 -> "
                                                          "location_id -> 0"),
    (lambda p: p.sample.add(location_id=[1], value=[1, 2]), "Profile -> sample -> 1 -> value"),
    (lambda p: p.location.add(id=1), "Profile -> location -> 1 -> id"),
    (lambda p: p.function.add(id=0), "Profile -> function -> 1 -> id"),
    (lambda p: p.mapping.add(id=1, memory_start=10, memory_limit=5),
     "Profile -> mapping -> 0 -> memory_limit"),
    (lambda p: p.function.add(id=2, name=99), "Profile -> function -> 1 -> name"),
    (lambda p: p.location.add(id=2).line.add(function_id=7), "function_id"),
    (lambda p: p.sample[0].label.add(key=55, str=1), "label"),
    (lambda p: p.__setattr__("doc_url", 77), "Profile -> string index"),
])
def test_checkvalid_failures_name_the_field(change, path):
    p = small_profile()
    change(p)
    exc = error_of(p.SerializeToString())
    assert path in (exc.path or "")


def test_string_table_must_start_empty():
    p = small_profile()
    p.string_table[0] = "x"
    assert error_of(p.SerializeToString()).path == "Profile -> string_table -> 0"


def test_samples_without_types():
    p = small_profile()
    del p.sample_type[:]
    p.sample[0].ClearField("value")
    assert "sample_type" in error_of(p.SerializeToString()).path


@pytest.mark.parametrize("data", [
    b"", gzip.compress(b""), b"\x1f\x8b\x08\x00garbage", gzip.compress(b"\x00\x01\x02"),
    b"\x28\xb5\x2f\xfd\x00\x00", gzip.compress(small_profile().SerializeToString())[:-9],
    b"\x12\xff\xff\xff\xff\x0f", b"\x0a\x05\x08", b"\x3b\x00",
])
def test_bad_wrappers_and_messages(data):
    error_of(data)


def test_decompression_bomb_is_capped():
    bomb = gzip.compress(b"\x00" * (8 << 20))
    with pytest.raises(FormatError, match="more than 1048576 bytes"):
        read(bomb, max_size=1 << 20)
    zbomb = compress(b"\x00" * (8 << 20), "zstd")
    with pytest.raises(FormatError, match="more than 1048576 bytes"):
        read(zbomb, max_size=1 << 20)
    with pytest.raises(FormatError, match="size limit"):
        read(b"\x00" * 2048, max_size=1024)


def test_truncated_at_every_byte_of_a_real_file():
    files = [p for p in fixture_files() if p.stat().st_size < 2000]
    if not files:
        pytest.skip("shared pprof fixtures absent")
    raw = gzip.decompress(files[0].read_bytes())
    failures = 0
    for end in range(len(raw)):
        try:
            read(raw[:end])
        except FormatError:
            failures += 1
    assert failures >= len(raw) // 2  # most cuts land inside a field


def test_random_damage_raises_only_format_errors():
    files = [p for p in fixture_files() if p.stat().st_size < 40_000]
    if not files:
        pytest.skip("shared pprof fixtures absent")
    rng = random.Random(7)
    for _ in range(300):
        data = bytearray(gzip.decompress(rng.choice(files).read_bytes()))
        for _ in range(rng.randrange(1, 4)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        with contextlib.suppress(FormatError):
            read(bytes(data))


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200))
def test_arbitrary_bytes(data):
    with contextlib.suppress(FormatError):
        read(data)
    assert isinstance(tachyon_format.validate(data, format="pprof"), list)
