"""read() / iter_batches() / dump against CPython's own decode."""

from __future__ import annotations

import gzip
import io
import json
import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tachyon_format
from tachyon_format.formats.tachyon.byteswap import swap_byte_order
from tachyon_format.formats.tachyon.region import decoder as sample_codec
from tachyon_format.render.canonical import write_canonical
from tests.helpers.paths import CPYTHON_FIXTURES, DATA_DIR
from tests.helpers.reference import reference_decode, reference_write, requires_reference

DATA = DATA_DIR
SHARED = CPYTHON_FIXTURES
GOLDEN = sorted(DATA.glob("*.bin")) + (sorted(SHARED.glob("*.bin")) if SHARED.is_dir() else [])
IDS = [f"{p.parent.name}/{p.name}" for p in GOLDEN]


def reference_text(path: Path) -> str:
    with gzip.open(path.with_name(path.name.replace(".bin", ".ref.jsonl.gz")), "rt") as f:
        return f.read()


def canonical(source) -> str:
    out = io.StringIO()
    write_canonical(tachyon_format.read(source), out)
    return out.getvalue()


@pytest.mark.parametrize("path", GOLDEN, ids=IDS)
def test_read_equals_cpython_decode(path):
    assert canonical(path) == reference_text(path)


@pytest.mark.parametrize("path", GOLDEN, ids=IDS)
def test_read_big_endian_copy_equals_cpython_decode(path):
    assert canonical(swap_byte_order(path.read_bytes())) == reference_text(path)


@pytest.mark.parametrize("path", GOLDEN, ids=IDS)
def test_read_in_small_chunks_equals_one_shot(path):
    whole = tachyon_format.read(path)
    chunked = tachyon_format.read(path, chunk_size=97)
    for name, column in whole.samples.columns().items():
        if name != "stack":
            np.testing.assert_array_equal(column, chunked.samples.columns()[name], err_msg=name)
    assert stack_tuples(chunked) == stack_tuples(whole)
    assert len(chunked.stacks) == len(whole.stacks)  # one node per distinct (parent, frame)
    np.testing.assert_array_equal(whole.records.offset, chunked.records.offset)


@pytest.mark.parametrize("path", GOLDEN, ids=IDS)
def test_read_with_and_without_helper_thread_are_identical(path, monkeypatch):
    """Small windows, so that discovery runs ahead in the helper thread many times."""
    monkeypatch.setattr(sample_codec, "WINDOW", 1024)
    alone = tachyon_format.read(path, threads=False)
    helped = tachyon_format.read(path, threads=True)
    for name, column in alone.samples.columns().items():
        np.testing.assert_array_equal(column, helped.samples.columns()[name], err_msg=name)
    np.testing.assert_array_equal(alone.stacks.frame, helped.stacks.frame)
    np.testing.assert_array_equal(alone.stacks.parent, helped.stacks.parent)
    np.testing.assert_array_equal(alone.records.offset, helped.records.offset)


def stack_tuples(profile) -> list[tuple[int, ...]]:
    return [tuple(profile.stack_frames(s)) for s in profile.samples.stack]


@pytest.mark.parametrize("path", GOLDEN, ids=IDS)
def test_stack_tree_is_deduplicated(path):
    stacks = tachyon_format.read(path, chunk_size=113).stacks
    pairs = set(zip(stacks.parent.tolist(), stacks.frame.tolist(), strict=True))
    assert len(pairs) == len(stacks)
    assert ((stacks.parent >= -1) & (stacks.parent < len(stacks))).all()


@pytest.mark.parametrize("batch", [1, 7, 1000])
@pytest.mark.parametrize("path", GOLDEN[:6], ids=IDS[:6])
def test_iter_batches_concatenate_to_read(path, batch):
    whole = tachyon_format.read(path)
    batches = list(tachyon_format.iter_batches(path, samples_per_batch=batch))
    assert all(len(b.samples) <= batch for b in batches)
    assert sum(len(b.samples) for b in batches) == len(whole.samples)
    last = batches[-1] if batches else None
    for name, column in whole.samples.columns().items():
        parts = [b.samples.columns()[name] for b in batches] or [column[:0]]
        joined = np.concatenate(parts)
        if name == "stack":  # ids are stable, but the tree may be numbered differently
            assert [tuple(last.stack_frames(s)) for s in joined] == [
                tuple(whole.stack_frames(s)) for s in column
            ]
        else:
            np.testing.assert_array_equal(joined, column, err_msg=name)
    starts = np.concatenate(
        [b.records.first_sample + sum(len(p.samples) for p in batches[:i])
         for i, b in enumerate(batches)] or [np.zeros(0, np.int64)]
    )
    assert starts.tolist() == whole.records.first_sample.tolist()[: len(starts)]


def test_iter_batches_rejects_nonpositive_size():
    with pytest.raises(ValueError):
        next(tachyon_format.iter_batches(GOLDEN[0], samples_per_batch=0))


def test_profile_columns_are_consistent():
    profile = tachyon_format.read(DATA / "threads_wall_zstd.bin")
    n = profile.info["sample_count"]
    assert len(profile.samples) == n
    assert profile.samples.timestamp_us.dtype == np.uint64
    assert profile.samples.stack.max() < len(profile.stacks)
    assert profile.samples.thread.max() < len(profile.threads) <= profile.info["thread_count"]
    depth = profile.stacks.depth()
    for stack in np.unique(profile.samples.stack[profile.samples.stack >= 0])[:50]:
        assert depth[stack] == len(profile.stack_frames(stack))
    assert profile.nbytes > 0


def test_samples_df_and_frames_df():
    pd = pytest.importorskip("pandas")
    profile = tachyon_format.read(DATA / "threads_cpu_opcodes_raw.bin")
    samples = profile.samples_df()
    assert len(samples) == len(profile.samples)
    assert samples["thread_id"].dtype == np.uint64
    frames = profile.frames_df()
    assert isinstance(frames["funcname"].dtype, pd.CategoricalDtype)
    assert frames["funcname"].iloc[0] == profile.strings[profile.frames.funcname[0]]


def test_to_arrow():
    pa = pytest.importorskip("pyarrow")
    profile = tachyon_format.read(DATA / "threads_wall_zstd.bin")
    table = profile.to_arrow()
    assert table.num_rows == len(profile.samples)
    assert table.schema.field("timestamp_us").type == pa.uint64()


# -- CPython-written files from hypothesis workloads ---------------------------------------

_names = st.sampled_from(["a.py", "b.py", "<native>", "~", "ünï.py", ""])
_location = st.one_of(
    st.none(),
    st.tuples(
        st.integers(-1, 2**31 - 1), st.integers(-1, 2**31 - 1), st.integers(-1, 500),
        st.integers(-1, 500),
    ).map(list),
)
_frame = st.tuples(_names, _location, _names, st.one_of(st.none(), st.integers(0, 300))).map(list)
_pool = st.lists(_frame, min_size=1, max_size=6)


@st.composite
def workloads(draw):
    pool = draw(_pool)
    stacks = [[]] + [
        draw(st.lists(st.sampled_from(pool), min_size=1, max_size=8)) for _ in range(3)
    ]
    deep = draw(st.booleans())
    if deep:
        stacks.append([pool[0]] * 300)
    threads = draw(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 2**64 - 1)),
                            min_size=1, max_size=4, unique=True))
    calls = []
    timestamp = draw(st.integers(0, 2**40))
    for _ in range(draw(st.integers(0, 30))):
        timestamp = max(0, timestamp + draw(st.integers(-5000, 5000)))
        by_interp: dict[int, list] = {}
        for iid, tid in threads:
            if draw(st.booleans()):
                repeat = draw(st.integers(1, 3))
                for _ in range(repeat):
                    by_interp.setdefault(iid, []).append(
                        [tid, draw(st.integers(0, 255)), draw(st.sampled_from(stacks))]
                    )
        calls.append([timestamp, [[iid, t] for iid, t in by_interp.items()]])
    return calls, draw(st.sampled_from([0, 1])), draw(st.integers(0, 2**40))


@requires_reference
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workloads())
def test_read_equals_cpython_on_cpython_written_files(tmp_path_factory, workload):
    calls, compression, start = workload
    path = tmp_path_factory.mktemp("hyp") / "w.bin"
    reference_write(calls, path, start_time_us=start, compression=compression)
    assert canonical(path) == reference_decode(path)


def test_cli_dump_matches_reference(tmp_path):
    from tachyon_format.cli import main

    path = DATA / "exceptions_mode_zstd.bin"
    out = tmp_path / "dump.jsonl"
    assert main(["dump", str(path), "-o", str(out)]) == 0
    assert out.read_text() == reference_text(path)


def test_cli_info_json(capsys):
    from tachyon_format.cli import main

    path = DATA / "threads_gil_blocking.bin"
    assert main(["info", "--json", str(path)]) == 0
    assert json.loads(capsys.readouterr().out) == json.loads(reference_text(path).split("\n")[0])
    assert main(["info", str(path)]) == 0
    assert "gil (2)" in capsys.readouterr().out


def test_cli_reports_format_errors(tmp_path, capsys):
    from tachyon_format.cli import main

    bad = tmp_path / "bad.bin"
    bad.write_bytes(b"XXXX" + bytes(100))
    assert main(["info", str(bad)]) == 1
    assert "Invalid magic number" in capsys.readouterr().err


def test_validate_reports_problems_without_raising(tmp_path, capsys):
    from tachyon_format.cli import main

    good = DATA / "threads_wall_zstd.bin"
    assert tachyon_format.validate(good) == []
    data = bytearray(good.read_bytes())
    data[28] ^= 1  # the header's sample count no longer matches the records
    bad = tmp_path / "bad.bin"
    bad.write_bytes(bytes(data))
    problems = tachyon_format.validate(bad)
    assert len(problems) == 1 and "Sample count mismatch" in problems[0]
    assert main(["validate", str(good), str(bad)]) == 1
    out = capsys.readouterr().out
    assert f"{good}: ok" in out and "Sample count mismatch" in out


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_read_in_a_forked_child_after_the_parent_used_the_helper_thread():
    """A forked child inherits the helper executor but not its thread: it must start its
    own instead of waiting forever on work nobody runs."""
    import time

    path = GOLDEN[0]
    expected = canonical(path)
    tachyon_format.read(path, threads=True)
    pid = os.fork()
    if pid == 0:  # the child: exit code 0 only if it read the same profile
        try:
            out = io.StringIO()
            write_canonical(tachyon_format.read(path, threads=True), out)
            os._exit(0 if out.getvalue() == expected else 1)
        except BaseException:
            os._exit(2)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            assert os.waitstatus_to_exitcode(status) == 0
            return
        time.sleep(0.05)
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    pytest.fail("the child's read() hung")
