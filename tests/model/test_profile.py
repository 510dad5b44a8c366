"""Profile: weights, joined sample columns, the pandas and Arrow views."""

from __future__ import annotations

import numpy as np
import pytest

import tachyon_format
from tachyon_format import Frames, Meta, Profile, Samples, Stacks, Strings, Threads, ValueType
from tests.helpers.paths import DATA_DIR


def _profile(values=None, meta=None, threads=None, thread=(-1, -1)) -> Profile:
    stacks, ids = Stacks.from_lists([[0], [1, 0]])
    n = 2
    frames = Frames(np.array([0, 0], np.uint32), np.array([1, 2], np.uint32),
                    *(np.full(n, -1, np.int32) for _ in range(4)), np.full(n, -1, np.int16))
    return Profile(Strings.from_texts(["a.py", "f", "g"]), frames, stacks,
                   threads or Threads.empty(),
                   Samples(stack=ids, thread=np.array(thread, np.int32), values=values),
                   meta=meta or Meta())


def test_weights_default_to_one_per_sample():
    profile = _profile()
    assert profile.weights().tolist() == [1, 1]
    with pytest.raises(KeyError):
        profile.weights("cpu")


def test_weights_pick_the_sample_type():
    meta = Meta(sample_types=(ValueType("samples", "count"), ValueType("cpu", "nanoseconds")),
                default_sample_type="cpu")
    profile = _profile(np.array([[1, 10], [2, 20]], np.int64), meta)
    assert profile.weights().tolist() == [10, 20]
    assert profile.weights("samples").tolist() == [1, 2]
    assert Meta(sample_types=meta.sample_types).sample_type_index() == 1  # pprof: the last
    with pytest.raises(KeyError, match="has: samples, cpu"):
        profile.weights("wall")


def test_sample_weights_count_samples_unless_a_type_is_chosen():
    meta = Meta(sample_types=(ValueType("samples", "count"), ValueType("cpu", "nanoseconds")),
                default_sample_type="cpu")
    profile = _profile(np.array([[1, 10], [2, 20]], np.int64), meta)
    assert profile.sample_weights().tolist() == [1, 2]  # (not the default type's values)
    assert profile.sample_weights("cpu").tolist() == [10, 20]
    assert _profile().sample_weights().tolist() == [1, 1]
    assert profile.sample_weights().dtype == np.int64


def test_sample_columns_without_threads_or_times():
    columns = _profile(np.array([[3], [4]], np.int64)).sample_columns()
    assert set(columns) == {"stack", "samples_count"}


def test_sample_columns_mark_samples_without_a_thread():
    threads = Threads(np.array([0], np.uint32), np.array([7], np.uint64))
    columns = _profile(threads=threads, thread=(0, -1)).sample_columns()
    assert columns["thread_id"].tolist() == [7, 7]
    assert columns["thread_known"].tolist() == [True, False]


def test_frames_df_with_invalid_utf8_strings():
    """Different bytes that show as the same text share one category (pandas refuses
    duplicate categories)."""
    pd = pytest.importorskip("pandas")
    profile = tachyon_format.read(DATA_DIR / "invalid_utf8_strings.bin")
    frames = profile.frames_df()
    assert isinstance(frames["funcname"].dtype, pd.CategoricalDtype)
    shown = [profile.strings[i] for i in profile.frames.funcname.tolist()]
    assert frames["funcname"].astype(object).tolist() == shown


def test_samples_df_and_frames_df():
    pd = pytest.importorskip("pandas")
    profile = tachyon_format.read(DATA_DIR / "threads_cpu_opcodes_raw.bin")
    samples = profile.samples_df()
    assert len(samples) == len(profile.samples)
    assert samples["thread_id"].dtype == np.uint64
    frames = profile.frames_df()
    assert isinstance(frames["funcname"].dtype, pd.CategoricalDtype)
    assert frames["funcname"].iloc[0] == profile.strings[profile.frames.funcname[0]]


def test_to_arrow():
    pa = pytest.importorskip("pyarrow")
    profile = tachyon_format.read(DATA_DIR / "threads_wall_zstd.bin")
    table = profile.to_arrow()
    assert isinstance(table, pa.Table)
    assert table.num_rows == len(profile.samples)


@pytest.mark.parametrize(("period_type", "period", "ns"), [
    (ValueType("cpu", "nanoseconds"), 1_000_000, 1_000_000),
    (ValueType("wall", "microseconds"), 250, 250_000),
    (ValueType("cpu", "milliseconds"), 10, 10_000_000),
    (ValueType("wall", "seconds"), 2, 2_000_000_000),
    (ValueType("space", "bytes"), 524_288, None),  # (a heap profile's period is no time)
    (ValueType("cpu", "nanoseconds"), 0, None),
    (None, 1000, None),
])
def test_period_ns_is_the_period_in_a_unit_of_time(period_type, period, ns):
    assert Meta(period_type=period_type, period=period).period_ns() == ns


def test_a_real_profile_s_period_is_its_sampling_interval():
    profile = tachyon_format.read(DATA_DIR / "threads_wall_zstd.bin")
    info = tachyon_format.info(DATA_DIR / "threads_wall_zstd.bin")
    assert profile.meta.period_ns() == info["sample_interval_us"] * 1000
