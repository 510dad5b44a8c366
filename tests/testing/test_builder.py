"""ProfileBuilder: its Tachyon files are read by CPython 3.15's own reader as exactly the
samples the builder was given, and its other outputs are the library's converters' own."""

from __future__ import annotations

import gzip
import io
import re

import pytest

import tachyon_format
from tachyon_format.testing import Frame, ProfileBuilder
from tests.helpers.reference import requires_reference

from .cpython_reads import builder_rows, cpython_decodes, our_decode, sample_rows


def example() -> ProfileBuilder:
    builder = ProfileBuilder(mode="cpu", interval_us=250, start_time_us=10_000)
    builder.sample(thread=7, t=10_000, stack=["app.py:3 main", "app.py:9 work @BINARY_OP"],
                   status="has_gil|on_cpu|main_thread", repeat=4)
    builder.sample(thread=8, interpreter=1, stack=["app.py:3 main", "<GC>"], status="unknown")
    builder.sample(thread=7, stack=[Frame("my lib.py", "f", 4, 6, 2, 30, "LOAD_ATTR"),
                                    "lib.py g"])
    builder.sample(thread=8, interpreter=1, stack=[], status=0)
    return builder


def variants() -> dict[str, ProfileBuilder]:
    raw = example()
    raw.compression = "none"
    wall = ProfileBuilder(mode=None, interval_us=1)
    wall.sample(thread=2**64 - 1, t=2**40, stack=["a.py:1 f"] * 300, status=0xFF, repeat=3)
    return {"zstd": example(), "raw": raw, "deep-unknown-mode": wall}


@requires_reference
def test_cpython_reads_back_what_the_builder_was_given(tmp_path):
    builders = variants()
    paths = [builder.write(tmp_path / f"{name}.bin") for name, builder in builders.items()]
    for path, builder, decode in zip(paths, builders.values(), cpython_decodes(paths),
                                     strict=True):
        assert isinstance(decode, str), decode
        assert sample_rows(decode) == builder_rows(builder)
        assert our_decode(path) == decode


def test_samples_times_statuses_and_stacks_as_given():
    builder = example()
    times = [s.timestamp_us for s in builder.samples]
    assert times == [10_000, 10_250, 10_500, 10_750, 11_000, 11_250, 11_500]
    first = builder.samples[0]
    assert first.status == (tachyon_format.ThreadStatus.HAS_GIL | tachyon_format.ThreadStatus
                            .ON_CPU | tachyon_format.ThreadStatus.MAIN_THREAD)
    # innermost first, as the writer takes them; the opcode by its 3.15 number
    assert first.frames[0][:3] == ("app.py", "work", 9)
    assert tachyon_format.opcode_name(first.frames[0][6]) == "BINARY_OP"
    assert builder.samples[4].frames[0] == ("~", "<GC>", -1, -1, -1, -1, None)
    assert builder.samples[5].frames == (("lib.py", "g", -1, -1, -1, -1, None),
                                         ("my lib.py", "f", 4, 6, 2, 30,
                                          builder.samples[5].frames[1][6]))


def test_profile_and_header_facts():
    profile = example().profile()
    info = tachyon_format.info(profile)
    assert (info["mode"], info["sample_interval_us"], info["start_time_us"]) == (1, 250, 10_000)
    assert info["sample_count"] == len(profile.samples) == 7
    assert info["compression_type"] == 1
    assert sorted(zip(profile.threads.interpreter_id.tolist(),
                      profile.threads.thread_id.tolist(), strict=True)) == [(0, 7), (1, 8)]


@pytest.mark.parametrize("fmt", ["pprof", "collapsed", "speedscope", "gperftools", "pstats",
                                 "jsonl", "gecko", "chrome-trace", "callgrind"])
def test_other_formats_are_the_converters_output(fmt, tmp_path):
    builder = example()
    (tmp_path / "p.bin").write_bytes(builder.to_bytes())
    expected = tmp_path / "expected"
    tachyon_format.convert(tmp_path / "p.bin", expected, to=fmt)
    assert without_run_id(builder.to_bytes(fmt)) == without_run_id(expected.read_bytes())


def without_run_id(data: bytes) -> bytes:
    """JSONL tags every record with a random run id (as CPython's collector does)."""
    return re.sub(rb'"run_id":"[0-9a-f]{32}"', b'"run_id":""', data)


def test_write_to_a_path_picks_the_format_from_the_name(tmp_path):
    builder = example()
    assert builder.write(tmp_path / "out.pb.gz") == tmp_path / "out.pb.gz"
    assert tachyon_format.sniff(tmp_path / "out.pb.gz") == "pprof"
    assert builder.write(tmp_path / "sub" / "out.bin") == tmp_path / "sub" / "out.bin"
    assert (tmp_path / "sub" / "out.bin").read_bytes() == builder.to_bytes()
    builder.write(tmp_path / "out.collapsed.gz")
    assert gzip.decompress((tmp_path / "out.collapsed.gz").read_bytes()) == \
        builder.to_bytes("collapsed")
    builder.write(tmp_path / "named.bin", format="speedscope")
    assert tachyon_format.sniff(tmp_path / "named.bin") == "speedscope"
    stream = io.BytesIO()
    assert builder.write(stream, format="collapsed") is None
    assert stream.getvalue() == builder.to_bytes("collapsed")


def test_write_without_a_destination_uses_the_builders_path(tmp_path):
    builder = ProfileBuilder(path=tmp_path / "fixture.bin").sample(stack=["a.py:1 f"])
    assert builder.write() == tmp_path / "fixture.bin"
    with pytest.raises(ValueError, match="no destination"):
        ProfileBuilder().write()


@pytest.mark.parametrize(("call", "message"), [
    (lambda b: b.sample(stack="app.py:1 main"), "list of frames"),
    (lambda b: b.sample(stack=["app.py:1 main"], status="gil"), "unknown thread status 'gil'"),
    (lambda b: b.sample(stack=["app.py:1 main"], repeat=0), "repeat must be at least 1"),
    (lambda b: b.sample(stack=["a.py:1 f @NOT_AN_OPCODE"]), "unknown CPython 3.15 opcode"),
    (lambda b: ProfileBuilder(mode="sometimes"), "unknown mode 'sometimes'"),
])
def test_mistakes_say_what_is_wrong(call, message):
    with pytest.raises((ValueError, TypeError), match=message):
        call(ProfileBuilder())
