"""Writing pprof: round trips through the model, the options, and Tachyon's facts."""

from __future__ import annotations

import gzip
from collections import Counter

import numpy as np
import pytest

import tachyon_format
from tachyon_format.formats.pprof.compression import decompress
from tachyon_format.formats.pprof.labels import parse_status, status_name
from tachyon_format.formats.pprof.writer import dumps
from tachyon_format.testing import assert_profiles_equal
from tests.helpers.paths import DATA_DIR
from tests.helpers.pprof import canonical, fixture_params, message_of

TACHYON_FILES = sorted(DATA_DIR.glob("*.bin"))


@pytest.mark.parametrize("path", fixture_params())
def test_pprof_model_pprof_is_semantically_equal(path):
    original = path.read_bytes()
    written = dumps(tachyon_format.read(path))
    assert canonical(written) == canonical(original)
    again = dumps(tachyon_format.read(written))
    assert canonical(again) == canonical(original)


@pytest.mark.parametrize("compression", ["gzip", "zstd", "none"])
def test_compression_options(tmp_path, compression):
    profile = tachyon_format.read(DATA_DIR / "threads_wall_zstd.bin")
    path = tmp_path / "out.pprof"
    tachyon_format.write(profile, path, format="pprof", compression=compression)
    data = path.read_bytes()
    assert data.startswith({"gzip": b"\x1f\x8b", "zstd": b"\x28\xb5\x2f\xfd"}.get(
        compression, b""))
    assert decompress(data)[1] == compression
    assert tachyon_format.sniff(path) == "pprof"
    assert canonical(decompress(data)[0]) == canonical(dumps(profile))


def test_unknown_compression_is_refused(tmp_path):
    profile = tachyon_format.read(DATA_DIR / "threads_wall_zstd.bin")
    with pytest.raises(ValueError, match="compression must be one of"):
        tachyon_format.write(profile, tmp_path / "x.pb.gz", compression="brotli")


def test_extension_picks_pprof(tmp_path):
    profile = tachyon_format.read(DATA_DIR / "threads_wall_zstd.bin")
    for name in ("a.pb.gz", "b.pprof", "c.pb"):
        tachyon_format.write(profile, tmp_path / name)
        assert tachyon_format.sniff(tmp_path / name) == "pprof", name


def _tachyon_view(profile, weights, with_time):
    """(stack as texts, (interpreter, thread), status[, timestamp]) -> total weight."""
    tuples = profile.stacks.tuples()
    s, f = profile.strings, profile.frames

    def frame(i):  # lineno 0 and -1 both read back as unknown (pprof's 0)
        return (s[f.funcname[i]], s[f.filename[i]], max(int(f.lineno[i]), 0) or -1,
                int(f.column[i]))

    out: Counter = Counter()
    th = profile.threads
    for i in range(len(profile.samples)):
        t = int(profile.samples.thread[i])
        key = (tuple(frame(x) for x in tuples[int(profile.samples.stack[i])]),
               (int(th.interpreter_id[t]), int(th.thread_id[t])),
               int(profile.samples.status[i]))
        if with_time:
            key += (int(profile.samples.timestamp_us[i]),)
        out[key] += int(weights[i])
    return out


@pytest.mark.parametrize("timestamps", [False, True], ids=["aggregated", "timestamps"])
@pytest.mark.parametrize("path", TACHYON_FILES, ids=lambda p: p.stem)
def test_tachyon_pprof_tachyon_keeps_every_sample(path, timestamps):
    profile = tachyon_format.read(path)
    back = tachyon_format.read(dumps(profile, timestamps=timestamps))
    assert _tachyon_view(back, back.weights("samples"), timestamps) == _tachyon_view(
        profile, profile.weights(), timestamps)
    if timestamps and len(profile.samples):  # every sample, in order
        assert_profiles_equal(profile, back, check_order=True)
        for column in ("thread_id", "interpreter_id"):  # same threads, in order of appearance
            assert np.array_equal(getattr(back.threads, column),
                                  getattr(profile.threads, column))
        assert back.samples.thread.tolist() == profile.samples.thread.tolist()
    if len(profile.samples):
        assert back.extras["pprof"].mapped_labels.keys() >= {"thread_id", "status"}
    assert back.meta.period == profile.meta.period
    assert back.meta.period_type == profile.meta.period_type


def test_tachyon_values_are_count_and_time():
    profile = tachyon_format.read(DATA_DIR / "threads_gil_blocking.bin")
    msg = message_of(dumps(profile))
    s = list(msg.string_table)
    assert [(s[t.type], s[t.unit]) for t in msg.sample_type] == [
        ("samples", "count"), (profile.meta.period_type.type, "nanoseconds")]
    assert sum(x.value[0] for x in msg.sample) == len(profile.samples)
    assert all(x.value[1] == x.value[0] * profile.meta.period for x in msg.sample)
    assert s[0] == ""
    assert all(f.system_name == 0 for f in msg.function)
    no_time = message_of(dumps(profile, time_values=False))
    assert len(no_time.sample_type) == 1


def test_columns_doc_url_default_type_comments_written_and_read():
    profile = tachyon_format.read(DATA_DIR / "threads_cpu_opcodes_raw.bin")
    data = dumps(profile, doc_url="https://example.org/tachyon.html",
                 default_sample_type="samples", comments=["made by a test", "second"],
                 drop_frames="^threading\\.", keep_frames="^keep$")
    msg = message_of(data)
    s = list(msg.string_table)
    assert s[msg.doc_url] == "https://example.org/tachyon.html"
    assert s[msg.default_sample_type] == "samples"
    assert [s[c] for c in msg.comment] == ["made by a test", "second"]
    assert (s[msg.drop_frames], s[msg.keep_frames]) == ("^threading\\.", "^keep$")
    columns = [ln.column for loc in msg.location for ln in loc.line]
    assert any(columns)
    # CPython columns are 0-based, pprof's 1-based (0 = unknown)
    expected = sorted(int(c) + 1 if c >= 0 else 0 for c in profile.frames.column)
    assert sorted(columns) == expected
    back = tachyon_format.read(data)
    assert back.frames.column.tolist() == profile.frames.column.tolist()
    assert back.meta.default_sample_type == "samples"
    info = tachyon_format.info(data)
    assert info["doc_url"] == "https://example.org/tachyon.html"
    assert info["comments"] == ["made by a test", "second"]
    assert info["default_sample_type"] == "samples"
    # and written again from the pprof-read profile: kept
    assert canonical(dumps(back)) == canonical(data)


def test_gzip_is_what_pprof_writes():
    data = dumps(tachyon_format.read(DATA_DIR / "threads_wall_zstd.bin"))
    assert gzip.decompress(data)  # plain gzip, one member


@pytest.mark.parametrize("status", range(256))
def test_status_names_read_back(status):
    name = status_name(status)
    assert parse_status(name) == status
    assert name.strip() and "," not in name


def test_status_names_reject_noise():
    assert parse_status("has_gil|has_gil") is None
    assert parse_status("on_cpu|has_gil") is None  # not the canonical order
    assert parse_status("running") is None


def _datadog_like(thread_labels):
    from tests.helpers.pprof import message_classes

    p = message_classes()["Profile"](string_table=[
        "", "samples", "count", "f", "a.py", "thread id", "7", "8", "end_timestamp_ns",
        "nanoseconds", "0x10"])
    p.sample_type.add(type=1, unit=2)
    p.function.add(id=1, name=3, filename=4)
    p.location.add(id=1).line.add(function_id=1, line=3)
    for i, thread in enumerate(thread_labels):
        sample = p.sample.add(location_id=[1], value=[1])
        if thread is not None:
            sample.label.add(key=5, str=thread)
        sample.label.add(key=8, num=1_000_000 * (i + 1), num_unit=9)
    return p.SerializeToString()


def test_datadog_thread_labels_become_threads_and_come_back():
    data = _datadog_like([6, 7, 6])
    profile = tachyon_format.read(data)
    assert profile.extras["pprof"].mapped_labels == {"thread_id": "thread id",
                                                     "timestamp": "end_timestamp_ns"}
    assert profile.threads.thread_id.tolist() == [7, 8]
    assert profile.samples.thread.tolist() == [0, 1, 0]
    assert profile.samples.timestamp_us.tolist() == [1000, 2000, 3000]
    assert canonical(dumps(profile)) == canonical(data)  # no interpreter id label added


@pytest.mark.parametrize("threads", [[6, None, 6], [6, 10, 6]], ids=["missing", "not-decimal"])
def test_thread_labels_that_cannot_be_columns_stay_labels(threads):
    data = _datadog_like(threads)
    profile = tachyon_format.read(data)
    assert "thread_id" not in profile.extras["pprof"].mapped_labels
    assert (profile.samples.thread == -1).all()
    assert canonical(dumps(profile)) == canonical(data)


def test_frames_without_names_are_locations_without_lines():
    """A profile of addresses only (as gperftools gives before symbolization): pprof's
    unsymbolized Locations, with the address and the mapping."""
    from tests.helpers.pprof import message_classes

    p = message_classes()["Profile"](string_table=["", "samples", "count", "/bin/app"])
    p.sample_type.add(type=1, unit=2)
    p.mapping.add(id=1, memory_start=0x1000, memory_limit=0x9000, filename=3)
    p.location.add(id=1, mapping_id=1, address=0x1234)
    p.location.add(id=2, mapping_id=1, address=0x2345)
    p.sample.add(location_id=[1, 2], value=[4])
    profile = tachyon_format.read(p.SerializeToString())
    del profile.extras["pprof"]  # as another format would give it: frames, no pprof facts
    msg = message_of(dumps(profile))
    assert [(loc.address, len(loc.line), loc.mapping_id) for loc in msg.location] == [
        (0x1234, 0, 1), (0x2345, 0, 1)]
    assert len(msg.function) == 0
    assert list(msg.sample[0].location_id) == [1, 2]
