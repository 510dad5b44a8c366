"""Hostile input for every reader besides Tachyon's: real golden files mutated (bit flips,
truncation, overwritten words and counts, inserted huge varints, numbers and nesting,
deleted and repeated runs, corrupted gzip), and inputs built to hurt (decompression bombs,
deep stacks, deep JSON, marshal back-references, long regex-hostile lines). Every verb must
answer with a result or ``FormatError`` within a time bound and under an address-space cap,
and ``validate`` must never raise. Each crash these found is a regression test below."""

from __future__ import annotations

import contextlib
import gzip
import io
import marshal
import os
import resource
import time
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tachyon_format
from tachyon_format import FormatError
from tachyon_format.formats.sources import MAX_STACK_DEPTH
from tests.helpers.paths import DATA_DIR, SHARED_FIXTURES

SECONDS = 10.0
"""The most one verb may take on one input (generous: CI machines are slow and shared)."""
EXTRA_ADDRESS_SPACE = 1 << 30
"""The most one input may add to the process's address space."""
EXAMPLES = max(settings.default.max_examples // 4, 10)
"""Mutations per format: 25 with the default profiles, 250 with ``thorough``."""


# -- the golden files --------------------------------------------------------------------------


def _converted(stem: str, name: str) -> bytes:
    """The Tachyon golden file *stem* written by the library as the file *name* (the
    writers produce what CPython's replay and the other tools write, and read it back)."""
    out = io.BytesIO()
    to = tachyon_format.formats.format_for_extension(name).name
    profile = tachyon_format.read(DATA_DIR / f"{stem}.bin", aggregate=to != "speedscope")
    tachyon_format.write(profile, out, format=to)
    data = out.getvalue()
    return gzip.decompress(data) if name.endswith(".gz") and to == "pprof" else data


def _shared(pattern: str, limit: int = 3) -> list[bytes]:
    if not SHARED_FIXTURES.is_dir():
        return []
    files = sorted(SHARED_FIXTURES.glob(pattern), key=lambda p: p.stat().st_size)
    return [p.read_bytes() for p in files[:limit]]


def goldens(name: str) -> list[bytes]:
    """Small real files of the format *name*: ``tests/data``, the shared third-party
    fixtures when present, and Tachyon golden files converted by the writers."""
    if name == "pstats":
        return [(DATA_DIR / f"{s}.pstats").read_bytes()
                for s in ("deep_recursion_wall", "synthetic_edges_raw")]
    if name == "collapsed":
        return [(DATA_DIR / f"{s}.collapsed.txt").read_bytes()
                for s in ("cpu_bound_nogc_native_raw", "exceptions_mode_zstd")] \
            + _shared("collapsed/**/simple*.txt")
    if name == "gperftools":
        return [p.read_bytes() for p in sorted((DATA_DIR / "gperftools").glob("*.prof"))] \
            + _shared("gperftools_cpu/**/*.cpu", 2)
    if name == "pprof":  # the raw message: mutations then reach the protobuf decoding
        return [_converted("exceptions_gc_gil_native", "p.pb"),
                _converted("deep_recursion_wall", "p.pb")] \
            + [gzip.decompress(d) for d in _shared("pprof_proto/**/*.pb.gz", 2)]
    if name == "speedscope":
        return [_converted("exceptions_gc_gil_native", "p.speedscope.json")] \
            + _shared("speedscope/**/0.*/*.json", 2)
    if name == "jsonl":
        return [_converted("exceptions_gc_gil_native", "p.jsonl"),
                _converted("deep_recursion_wall", "p.jsonl")]
    raise ValueError(name)


FORMATS = ("pprof", "gperftools", "collapsed", "speedscope", "jsonl", "pstats")
_GOLDENS: dict[str, list[bytes]] = {}


def golden(name: str) -> list[bytes]:
    if name not in _GOLDENS:
        _GOLDENS[name] = goldens(name)
    return _GOLDENS[name]


# -- the bounds --------------------------------------------------------------------------------


@contextlib.contextmanager
def address_space_cap(extra: int = EXTRA_ADDRESS_SPACE) -> Iterator[None]:
    """Lower the soft RLIMIT_AS to the current address space plus *extra*, so that an
    allocation beyond it is a MemoryError (a failure), not a swapping machine."""
    try:
        with open("/proc/self/statm") as f:
            current = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:  # not Linux: no cap
        yield
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    cap = current + extra
    if hard != resource.RLIM_INFINITY:
        cap = min(cap, hard)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def survives(data: bytes, name: str) -> list[FormatError]:
    """Run ``read``, ``info`` and ``validate`` (format *name* forced, so that the bytes reach
    its reader) and check the contract; the FormatErrors raised."""
    errors = []
    with address_space_cap():
        for verb in (tachyon_format.read, tachyon_format.info):
            started = time.monotonic()
            try:
                verb(data, format=name)
            except FormatError as exc:
                errors.append(exc)
                assert isinstance(exc.message, str) and exc.message
            took = time.monotonic() - started
            assert took < SECONDS, f"{verb.__name__} took {took:.1f} s"
        started = time.monotonic()
        problems = tachyon_format.validate(data, format=name)
        assert time.monotonic() - started < SECONDS
    assert isinstance(problems, list)
    assert not any("internal error" in str(p) for p in problems), problems
    return errors


# -- mutations of the golden files ---------------------------------------------------------------

SPECIAL_BYTES = (0x00, 0x01, 0x7F, 0x80, 0xFF)
INSERTS = (
    b"\xff" * 9 + b"\x01",        # a 64-bit varint at its limit
    b"\xff" * 12,                 # a varint that never ends
    b"\x80" * 10 + b"\x00",       # a non-minimal varint
    b"99999999999999999999999999",  # a number above 2**64 in text
    b"9" * 5000,                  # above Python's 4300-digit int conversion limit
    b"[" * 3000,                  # JSON nested deeper than the recursion limit
    b"-1", b"1e999", b"NaN", b"\x00" * 8, b"\xff" * 8, b"\n", b";", b"\r\n",
)


@st.composite
def mutated(draw, data: bytes) -> bytes:
    """*data* with one to three mutations."""
    out = bytearray(data)
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, max(len(out) - 1, 0)))
        kind = draw(st.sampled_from(["flip", "truncate", "byte", "word", "insert", "delete",
                                     "repeat"]))
        if kind == "flip" and out:
            out[at] ^= 1 << draw(st.integers(0, 7))
        elif kind == "truncate":
            del out[at:]
        elif kind == "byte" and out:
            out[at] = draw(st.sampled_from(SPECIAL_BYTES))
        elif kind == "word":  # a count or offset word patched (gperftools, marshal lengths)
            size = draw(st.sampled_from([4, 8]))
            value = draw(st.sampled_from([0, 1, 2**31 - 1, 2**31, 2**32 - 1, 2**63, 2**64 - 1]))
            order = draw(st.sampled_from(["little", "big"]))
            out[at:at + size] = (value & ((1 << 8 * size) - 1)).to_bytes(size, order)
        elif kind == "insert":
            out[at:at] = draw(st.sampled_from(INSERTS))
        elif kind == "delete":
            del out[at:at + draw(st.integers(1, 64))]
        elif kind == "repeat":
            piece = bytes(out[at:at + draw(st.integers(1, 64))])
            out[at:at] = piece * draw(st.integers(1, 50))
    return bytes(out)


@st.composite
def mutated_golden(draw, name: str) -> bytes:
    return draw(mutated(draw(st.sampled_from(golden(name)))))


def test_the_goldens_read_cleanly():
    for name in FORMATS:
        assert golden(name), name
        for data in golden(name):
            assert survives(data, name) == [] or name == "pstats", name  # (pstats: no stacks)


@pytest.mark.parametrize("name", FORMATS)
def test_mutated_goldens_give_a_result_or_format_error(name):
    @settings(max_examples=EXAMPLES, suppress_health_check=[HealthCheck.too_slow,
                                                            HealthCheck.data_too_large])
    @given(mutated_golden(name))
    def check(data):
        survives(data, name)

    check()


@settings(max_examples=EXAMPLES, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_corrupted_gzip_around_a_pprof_message(data):
    message = golden("pprof")[0]
    packed = gzip.compress(message, 1)
    corrupt = data.draw(mutated(packed))
    survives(corrupt, "pprof")
    survives(gzip.compress(data.draw(mutated(message)), 1), "pprof")


# -- inputs built to hurt: each a crash or hang found while fuzzing, now a FormatError -----------


def varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def field(number: int, payload: bytes) -> bytes:
    """A length-delimited protobuf field."""
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def pprof_with_stack(location_ids: bytes) -> bytes:
    """A Profile with one sample whose packed location list is *location_ids*."""
    sample_type = field(1, b"\x08\x01\x10\x02")
    sample = field(2, field(1, location_ids) + field(2, b"\x01"))
    location = field(4, b"\x08\x01")
    strings = field(6, b"") + field(6, b"cpu") + field(6, b"ns")
    return sample_type + sample + location + strings


def error_of(data: bytes, name: str) -> FormatError:
    errors = survives(data, name)
    assert errors, "expected a FormatError"
    return errors[0]


def test_a_gzip_bomb_stops_at_max_size():
    bomb = gzip.compress(b"\x00" * (8 << 20), 9)  # 8 KB that unpack to 8 MiB
    with pytest.raises(FormatError, match=r"more than 1048576 bytes \(max_size\)") as info:
        tachyon_format.read(bomb, format="pprof", max_size=1 << 20)
    assert info.value.path == "gzip"


def test_a_gzip_trailer_that_lies_about_the_size_costs_nothing():
    packed = bytearray(gzip.compress(pprof_with_stack(b"\x01"), 1))
    packed[-4:] = b"\xff\xff\xff\xff"  # ISIZE: 4 GiB
    assert "gzip" in str(error_of(bytes(packed), "pprof"))


def test_a_stack_deeper_than_the_limit_is_refused_quickly_in_every_format():
    deep = MAX_STACK_DEPTH + 1
    cases = {
        "pprof": gzip.compress(pprof_with_stack(b"\x01" * deep), 9),
        "collapsed": b";".join([b"f%d" % i for i in range(deep)]) + b" 1\n",
        "speedscope": (b'{"$schema": "https://www.speedscope.app/file-format-schema.json", '
                       b'"shared": {"frames": [{"name": "f"}]}, "profiles": [{"type": '
                       b'"sampled", "name": "t", "unit": "none", "startValue": 0, '
                       b'"endValue": 1, "samples": [[' + b",".join([b"0"] * deep)
                       + b']], "weights": [1]}]}'),
    }
    for name, data in cases.items():
        error = error_of(data, name)
        assert f"a stack of {deep} frames" in error.message, name
        assert "MAX_STACK_DEPTH" in error.message and error.path, name
    assert error_of(cases["pprof"], "pprof").path == "Profile -> sample -> 0 -> location_id"
    assert error_of(cases["collapsed"], "collapsed").path == "line 1"


def test_a_stack_at_the_limit_still_reads():
    profile = tachyon_format.read(b";".join([b"f"] * MAX_STACK_DEPTH) + b" 3\n",
                                  format="collapsed")
    assert profile.stack_frames(profile.samples.stack[0]).size == MAX_STACK_DEPTH


def test_huge_and_never_ending_varints_in_pprof():
    assert "varint" in error_of(pprof_with_stack(b"\xff" * 12), "pprof").message.lower()
    error_of(pprof_with_stack(b"\xff" * 9 + b"\x01"), "pprof")  # location 2**63 + ...: none


def test_an_out_of_range_location_id_names_the_sample():
    error = error_of(pprof_with_stack(b"\x07"), "pprof")
    assert error.path.startswith("Profile -> sample -> 0 -> location_id")


def test_a_pstats_tuple_that_holds_itself_is_refused_before_marshal_sees_it():
    # a tuple flagged for back-references whose item refers to it: marshal.loads hands out
    # the half-built tuple, and hashing it as a dict key crashed the process
    data = b"{" + b"\xa9\x01r\x00\x00\x00\x00" + b"N0"
    error = error_of(data, "pstats")
    assert error.message.startswith("back-reference 0 to an object that is not complete")
    assert error.offset == 3 and error.path == "reference"


def test_pstats_back_references_as_marshal_writes_them_still_load():
    key = ("app.py", 3, "main")
    stats = {key: (1, 1, 0.5, 0.5, {key: 1}), ("app.py", 9, "g"): (2, 2, 1.0, 1.0, {key: 2})}
    data = marshal.dumps(stats)
    assert b"r" in data  # the writer did share the repeated key
    assert tachyon_format.validate(data, format="pstats") == []
    assert tachyon_format.info(data, format="pstats")["num_caller_edges"] == 2


def test_a_pstats_key_with_an_integer_too_long_to_print():
    data = marshal.dumps({("a", 10**5000, "f"): (1, 1, 0.1, 0.1, ())})
    error = error_of(data, "pstats")
    assert "integer too long to print" in error.path


def test_jsonl_sniffing_survives_nesting_deeper_than_the_recursion_limit():
    data = b'{"type":"meta","run_id":"x","v":' + b"[" * 3000 + b"\n"
    assert tachyon_format.sniff(data) is None
    assert "not JSON" in error_of(data, "jsonl").message


@pytest.mark.parametrize("line", [
    b"1" * 60_000,                      # a map line's range with no separator: every split
    b"0x1 " + b"f (" * 20_000,          # a Java symbol line with many " (" and no end
    b"0x1 " + b"f (" * 20_000 + b")",
])
def test_gperftools_text_lines_parse_in_linear_time(line):
    started = time.monotonic()
    survives(golden("gperftools")[0] + line + b"\n", "gperftools")
    assert time.monotonic() - started < SECONDS


def test_deep_json_in_speedscope_and_jsonl():
    deep = b"[" * 100_000 + b"]" * 100_000
    speedscope = (b'{"$schema": "https://www.speedscope.app/file-format-schema.json", "x": '
                  + deep + b"}")
    assert "nested too deeply" in error_of(speedscope, "speedscope").message
    assert "not JSON" in error_of(b'{"type":"meta","x":' + deep + b"}\n", "jsonl").message


def test_numbers_beyond_any_column():
    assert "count above 2**63 - 1" in error_of(b"a;b " + b"9" * 5000 + b"\n", "collapsed").message
    error_of(b'{"type":"meta","v":1,"run_id":"r","x":' + b"9" * 5000 + b"}\n", "jsonl")


@pytest.mark.parametrize("wrapper, count", [("gzip", 100_000), ("zstd", 20_000)])
def test_thousands_of_empty_members_take_time_by_their_number(wrapper, count):
    # each member used to copy the rest of the file when it ended: quadratic, about 30 s
    # for these 2 MB of empty gzip members; now one pass over the file
    from tachyon_format.formats.pprof.compression import compress

    data = compress(b"", wrapper) * count + compress(pprof_with_stack(b"\x01"), wrapper)
    started = time.monotonic()
    profile = tachyon_format.read(data, format="pprof")
    assert time.monotonic() - started < SECONDS
    assert profile.samples.stack.size == 1


def test_a_string_table_of_millions_is_not_decoded_to_find_the_label_keys():
    # 2 MiB of empty strings from a 2 KB gzip file: the label keys were looked for by
    # decoding every entry (seconds, and a Python str each); now by their bytes
    message = field(1, b"\x08\x01\x10\x02") + b"\x32\x00" * (1 << 20) + field(6, b"thread_id")
    started = time.monotonic()
    profile = tachyon_format.read(gzip.compress(message, 9), format="pprof")
    assert time.monotonic() - started < SECONDS
    assert len(profile.strings) == (1 << 20) + 1


@pytest.mark.parametrize("what", ["lines", "labels"])
def test_one_message_of_many_fields_is_not_read_a_round_per_field(what):
    # a location with 200,000 lines, or a sample with 200,000 labels (400 KB, from a
    # 1 KB gzip file): the kernels read every message's k-th field in round k, tens of
    # microseconds a round; the few long messages left now go field by field in Python
    many = (b"\x22\x00" if what == "lines" else b"\x1a\x00") * 200_000
    sample_type = field(1, b"\x08\x01\x10\x02")
    strings = field(6, b"") + field(6, b"cpu") + field(6, b"ns")
    if what == "lines":
        message = sample_type + field(4, b"\x08\x01" + many) + strings
    else:
        message = sample_type + field(2, field(2, b"\x01") + many) + strings
    started = time.monotonic()
    if what == "lines":  # (more lines than a stack has frames: refused once it has seen so many)
        with pytest.raises(FormatError, match="MAX_STACK_DEPTH") as info:
            tachyon_format.read(gzip.compress(message, 9), format="pprof")
        assert info.value.path == "Profile -> location -> 0"
    else:
        profile = tachyon_format.read(gzip.compress(message, 9), format="pprof")
        assert profile.samples.stack.size == 1
    assert time.monotonic() - started < SECONDS
