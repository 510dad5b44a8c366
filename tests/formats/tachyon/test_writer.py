"""The streaming writer against CPython 3.15.2's BinaryWriter: byte-identical files.

Random workloads (threads, interpreters, empty and > 256-deep stacks, odd locations and
opcodes, statuses outside u8, clocks going backwards, REPEAT runs past the 16 KiB split, zstd
and none, stats, mode and feature bits) are written by CPython and by ``Writer`` (sample by
sample, and in batches with CSR or prefix-tree stacks); the files must be equal. CPython's
writer runs once per batch of workloads, in one subprocess, to keep the suite fast.

A workload is a JSON-able dict: ``writer`` (BinaryWriter keyword arguments), ``interval_us``,
``start_time_us``, ``stats`` (``set_stats`` arguments or None) and ``samples`` in the form of
``tests/helpers/reference.py``::

    [[timestamp_us, [[interpreter_id, [[thread_id, status, [frame, ...]], ...]], ...]], ...]
    frame = [filename, location, funcname, opcode]    # innermost first
"""

from __future__ import annotations

import json
import os
import sys

import construct as cs
import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tachyon_format import Stacks
from tachyon_format.formats.tachyon import settings as cpython_settings
from tachyon_format.formats.tachyon.writer import Writer
from tachyon_format.formats.tachyon.zstd import compress_region
from tachyon_format.schema import tachyon as spec
from tests.helpers.reference import requires_reference, run_reference

U64 = 2**64 - 1
U32 = 2**32 - 1

texts = st.text(st.characters(exclude_categories=("Cs",)), max_size=6)
position_items = st.one_of(
    st.none(),
    st.integers(-3, 300),
    st.sampled_from([-1, 0, 2**31 - 1, 2**31, -(2**31) - 1, 2**32 + 5, 2**63 - 1, 2**63, -(2**70)]),
)
locations = st.one_of(st.none(), st.lists(position_items, min_size=4, max_size=4))
opcodes = st.one_of(st.none(), st.integers(0, 260), st.sampled_from([-1, 2**80, 254, 255]))
frames = st.tuples(st.sampled_from(["a.py", "b.py", "é.py", ""]) | texts, locations,
                   st.sampled_from(["f", "g", "<native>"]) | texts, opcodes).map(list)
statuses = st.one_of(st.integers(0, 63), st.sampled_from([256, 257, -1, 2**40 + 3, 255]))
thread_ids = st.one_of(st.integers(0, 3), st.sampled_from([U64, 2**63, 12345678901]))
interpreter_ids = st.one_of(st.integers(0, 2), st.just(U32))


@st.composite
def stack_pools(draw) -> list[list]:
    """Stacks made to exercise every record type: shared tails, pure pops, deep cuts."""
    pool = draw(st.lists(frames, min_size=1, max_size=6))
    stacks: list[list] = [[]]
    for _ in range(draw(st.integers(1, 6))):
        base = draw(st.sampled_from(stacks))
        kind = draw(st.sampled_from(["push", "pop", "swap", "fresh", "deep"]))
        if kind == "push":
            stacks.append(draw(st.lists(st.sampled_from(pool), min_size=1, max_size=3)) + base)
        elif kind == "pop":
            stacks.append(base[draw(st.integers(0, len(base))):])
        elif kind == "swap":
            cut = draw(st.integers(0, len(base)))
            stacks.append(draw(st.lists(st.sampled_from(pool), max_size=3)) + base[cut:])
        elif kind == "fresh":
            stacks.append(draw(st.lists(st.sampled_from(pool), max_size=5)))
        else:  # deeper than the 256-frame cut, with distinct outer frames past the cut
            depth = draw(st.integers(250, 300))
            stacks.append([[f"deep{i % 7}.py", [i, i, 0, 1], "d", None] for i in range(depth)])
    return stacks


@st.composite
def workloads(draw, *, max_calls: int = 30) -> dict:
    stacks = draw(stack_pools())
    threads = draw(st.lists(st.tuples(interpreter_ids, thread_ids), min_size=1, max_size=4))
    start = draw(st.one_of(st.integers(0, 10**6), st.just(U64 - 5)))
    timestamp = start
    samples = []
    for _ in range(draw(st.integers(0, max_calls))):
        step = draw(st.one_of(st.integers(0, 200), st.integers(0, 2**20),
                              st.sampled_from([-1000, U64])))
        timestamp = (timestamp + step) & U64
        call = []
        for _ in range(draw(st.integers(0, 3))):
            iid = draw(st.sampled_from(threads))[0]
            members = draw(st.lists(st.sampled_from(threads), max_size=3))
            call.append([iid, [[tid, draw(statuses), draw(st.sampled_from(stacks))]
                               for _, tid in members]])
        repeat = draw(st.sampled_from([1, 1, 1, 2, 50]))
        for _ in range(repeat):
            samples.append([timestamp, call])
            timestamp = (timestamp + 1) & U64
    if draw(st.integers(0, 24)) == 0:  # one long run of one stack: REPEAT splits at 8187
        tid = draw(thread_ids)
        stack = draw(st.sampled_from(stacks))
        width = draw(st.sampled_from([1, 200]))
        samples += [[(timestamp + width * k) & U64, [[0, [[tid, int(k % 3 == 0), stack]]]]]
                    for k in range(1, 9000)]
    writer = {
        "compression": draw(st.sampled_from([0, 1, 1, 2, -1])),
        "mode": draw(st.integers(-1, 4)),
        "capture_features": draw(st.integers(-1, 31)),
    }
    stats = draw(st.one_of(st.none(), st.tuples(
        st.floats(0, 1e6), st.floats(0, 1e6),
        st.none() | st.floats(0, 100), st.none() | st.floats(-100, 100)).map(list)))
    return {"writer": writer, "interval_us": draw(st.integers(0, U64)), "start_time_us": start,
            "stats": stats, "samples": samples}


def frame_key(frame: list) -> tuple:
    """A workload frame as the Writer's frame key."""
    filename, location, funcname, opcode = frame
    return (filename, funcname, *(location or (None,) * 4), opcode)


# Runs under the reference interpreter: a JSON list of (path, workload) on stdin.
_BATCH_WRITER = """
import json, sys
from _remote_debugging import BinaryWriter, FrameInfo, InterpreterInfo, LocationInfo, ThreadInfo

def frame(filename, location, funcname, opcode):
    location = None if location is None else LocationInfo(tuple(location))
    return FrameInfo((filename, location, funcname, opcode))

for path, job in json.load(sys.stdin):
    writer = BinaryWriter(path, job["interval_us"], job["start_time_us"], **job["writer"])
    frames = {}
    for timestamp_us, interpreters in job["samples"]:
        call = [InterpreterInfo((iid, [ThreadInfo((tid, status, [frame(*f) for f in stack]))
                                       for tid, status, stack in threads]))
                for iid, threads in interpreters]
        writer.write_sample(call, timestamp_us)
    if job["stats"] is not None:
        writer.set_stats(*job["stats"])
    writer.finalize()
print(json.dumps(list(sys.version_info[:3])))
"""


def write_with_cpython(jobs: list[tuple[str | os.PathLike, dict]]) -> tuple[int, int, int]:
    """Write every workload with CPython's BinaryWriter; returns the writer's Python version."""
    payload = json.dumps([[os.fspath(path), job] for path, job in jobs])
    out = run_reference(_BATCH_WRITER, input=payload).stdout
    return tuple(json.loads(out))


# Runs under the reference interpreter: a JSON list of paths on stdin; prints, per file, the
# replayed rows [interpreter_id, thread_id, timestamp_us, status, frames] in replay order.
_BATCH_REPLAY = """
import json, sys
from _remote_debugging import BinaryReader

class Rows:
    def __init__(self):
        self.rows = []
    def collect(self, stack_frames, timestamps_us):
        for interp in stack_frames:
            for thread in interp.threads:
                frames = [[f.filename, f.funcname, *(f.location or [None] * 4), f.opcode]
                          for f in thread.frame_info]
                for ts in timestamps_us:
                    self.rows.append([interp.interpreter_id, thread.thread_id, ts,
                                      thread.status, frames])

out = []
for path in json.load(sys.stdin):
    with BinaryReader(path) as reader:
        rows = Rows()
        reader.replay(rows)
        out.append(rows.rows)
print(json.dumps(out))
"""


def replay_with_cpython(paths: list[str | os.PathLike]) -> list[list]:
    out = run_reference(_BATCH_REPLAY, input=json.dumps([os.fspath(p) for p in paths])).stdout
    return json.loads(out)


def python_version_of_reference() -> tuple[int, int, int]:
    return tuple(json.loads(run_reference("import sys, json; "
                                          "print(json.dumps(sys.version_info[:3]))").stdout))


# -- our side: the same workload through Writer.add and Writer.add_batch ---------------------


def writer_for(path, job: dict, version) -> Writer:
    return Writer(path, job["interval_us"], job["start_time_us"], python_version=version,
                  **job["writer"])


def write_with_add(path, job: dict, version) -> None:
    with writer_for(path, job, version) as writer:
        for timestamp_us, interpreters in job["samples"]:
            for interpreter_id, threads in interpreters:
                for thread_id, status, stack in threads:
                    writer.add(thread_id, interpreter_id, timestamp_us, status,
                               [frame_key(f) for f in stack])
        if job["stats"] is not None:
            writer.set_stats(*job["stats"])


def batch_columns(job: dict) -> dict:
    """The workload as add_batch columns, a frame-key table and CSR stacks."""
    frame_index: dict[str, int] = {}
    stack_index: dict[str, int] = {}
    frames, offsets, frame_ids = [], [0], []
    columns: dict[str, list] = {name: [] for name in
                                ("thread_id", "interpreter_id", "timestamp_us", "status", "stack")}
    for timestamp_us, interpreters in job["samples"]:
        for interpreter_id, threads in interpreters:
            for thread_id, status, stack in threads:
                text = json.dumps(stack)
                if text not in stack_index:
                    stack_index[text] = len(stack_index)
                    for frame in stack:
                        key = json.dumps(frame)
                        if key not in frame_index:
                            frame_index[key] = len(frames)
                            frames.append(frame_key(frame))
                        frame_ids.append(frame_index[key])
                    offsets.append(len(frame_ids))
                for name, value in zip(columns, (thread_id, interpreter_id, timestamp_us,
                                                 status, stack_index[text]), strict=True):
                    columns[name].append(value)
    arrays = {
        "thread_id": np.array(columns["thread_id"], dtype=np.uint64),
        "interpreter_id": np.array(columns["interpreter_id"], dtype=np.uint32),
        "timestamp_us": np.array(columns["timestamp_us"], dtype=np.uint64),
        "status": np.array([s & 0xFF for s in columns["status"]], dtype=np.uint8),
        "stack": np.array(columns["stack"], dtype=np.int64),
    }
    return {"columns": arrays, "frames": frames, "offsets": offsets, "frame_ids": frame_ids}


def csr_to_prefix_tree(offsets: list[int], frame_ids: list[int]) -> tuple[list, list, list]:
    """The same stacks as a prefix tree: (frame, parent, node of each stack)."""
    nodes: dict[tuple[int, int], int] = {}
    frame, parent, stack_nodes = [], [], []
    for start, end in zip(offsets, offsets[1:], strict=False):
        node = -1
        for frame_id in reversed(frame_ids[start:end]):  # outermost first
            child = nodes.get((node, frame_id))
            if child is None:
                child = nodes[(node, frame_id)] = len(frame)
                frame.append(frame_id)
                parent.append(node)
            node = child
        stack_nodes.append(node)
    return frame, parent, stack_nodes


def write_with_batches(path, job: dict, version, *, tree: bool, batches: int = 3) -> None:
    table = batch_columns(job)
    columns = table["columns"]
    if tree:  # a tree built here, independently of the package's CSR conversion
        frame, parent, stack_nodes = csr_to_prefix_tree(table["offsets"], table["frame_ids"])
        stacks = Stacks(np.array(frame, np.int32), np.array(parent, np.int32))
    else:
        stacks, stack_nodes = Stacks.from_csr(table["offsets"], table["frame_ids"])
        stack_nodes = stack_nodes.tolist()
    node_of = np.array(stack_nodes + [-1], dtype=np.int64)  # [-1] keeps it 1-d when empty
    columns = {**columns, "stack": node_of[columns["stack"]]}
    n = len(columns["stack"])
    with writer_for(path, job, version) as writer:
        for part in np.array_split(np.arange(n), batches):
            writer.add_batch(*(columns[name][part] for name in
                               ("thread_id", "interpreter_id", "timestamp_us", "status", "stack")),
                             stacks=stacks, frames=table["frames"])
        if job["stats"] is not None:
            writer.set_stats(*job["stats"])


WAYS = {
    "add": write_with_add,
    "add_batch_csr": lambda path, job, version: write_with_batches(path, job, version, tree=False),
    "add_batch_tree": lambda path, job, version: write_with_batches(path, job, version, tree=True),
}


# -- expected replay, from the workload and the spec's conversion rules (not from the codec) --


def _c_long_to_int32(item) -> int:
    if not isinstance(item, int) or not -(2**63) <= item < 2**63:
        return -1
    return (item + 2**31) % 2**32 - 2**31


def expected_frame_row(frame: list) -> list:
    filename, location, funcname, opcode = frame
    lineno, end_lineno, column, end_column = map(_c_long_to_int32, location or [None] * 4)
    opcode = opcode if isinstance(opcode, int) and 0 <= opcode <= 254 else None
    if lineno == -1:
        return [filename, funcname, None, None, None, None, opcode]
    end_lineno = lineno if end_lineno == -1 else end_lineno
    end_column = -1 if column == -1 else (column if end_column == -1 else end_column)
    return [filename, funcname, lineno, end_lineno, column, end_column, opcode]


def expected_by_thread(job: dict) -> dict:
    out: dict[tuple[int, int], list] = {}
    for timestamp_us, interpreters in job["samples"]:
        for interpreter_id, threads in interpreters:
            for thread_id, status, stack in threads:
                row = [timestamp_us, status & 0xFF, [expected_frame_row(f) for f in stack[:256]]]
                out.setdefault((interpreter_id, thread_id), []).append(row)
    return out


def replayed_by_thread(rows: list) -> dict:
    out: dict[tuple[int, int], list] = {}
    for interpreter_id, thread_id, timestamp_us, status, frames in rows:
        out.setdefault((interpreter_id, thread_id), []).append([timestamp_us, status, frames])
    return out


# -- differential tests against the live CPython ---------------------------------------------

ORACLE_SETTINGS = {
    "deadline": None,
    "suppress_health_check": list(HealthCheck),
    # each example runs CPython in a subprocess: shrinking would take minutes, so a failure
    # is reported as generated (the test prints the workload's writer arguments)
    "phases": (Phase.explicit, Phase.reuse, Phase.generate),
}
DIFFERENTIAL = settings(max_examples=5, **ORACLE_SETTINGS)


@requires_reference
@DIFFERENTIAL
@given(st.lists(workloads(), min_size=4, max_size=8))
def test_files_equal_cpython_byte_for_byte(tmp_path_factory, jobs):
    tmp = tmp_path_factory.mktemp("diff")
    reference_files = [tmp / f"cpython{i}.bin" for i in range(len(jobs))]
    version = write_with_cpython(list(zip(reference_files, jobs, strict=True)))
    for i, (expected, job) in enumerate(zip(reference_files, jobs, strict=True)):
        for way, write in WAYS.items():
            ours = tmp / f"{way}{i}.bin"
            write(ours, job, version)
            assert ours.read_bytes() == expected.read_bytes(), (way, job["writer"])


@requires_reference
@DIFFERENTIAL
@given(st.lists(workloads(), min_size=4, max_size=8))
def test_cpython_replays_our_files_exactly(tmp_path_factory, jobs):
    tmp = tmp_path_factory.mktemp("replay")
    paths = [tmp / f"ours{i}.bin" for i in range(len(jobs))]
    for path, job in zip(paths, jobs, strict=True):
        write_with_add(path, job, (3, 15, 2))
    for rows, job in zip(replay_with_cpython(paths), jobs, strict=True):
        assert replayed_by_thread(rows) == {
            key: value for key, value in expected_by_thread(job).items()
        }


@requires_reference
def test_long_repeats_split_like_cpython(tmp_path):
    """REPEAT groups split at 8187 (1-byte deltas) and 5458 (2-byte deltas) samples."""
    frame = ["a.py", [1, 1, 0, 4], "f", None]
    jobs = []
    for width in (1, 200, 2**21):
        samples = [[width * k, [[0, [[7, k & 0x23, [frame]]]]]] for k in range(1, 20000)]
        for compression in (0, 1):
            jobs.append({"writer": {"compression": compression}, "interval_us": 1,
                         "start_time_us": 0, "stats": None, "samples": samples})
    files = [tmp_path / f"cpython{i}.bin" for i in range(len(jobs))]
    version = write_with_cpython(list(zip(files, jobs, strict=True)))
    for i, (expected, job) in enumerate(zip(files, jobs, strict=True)):
        ours = tmp_path / f"ours{i}.bin"
        write_with_add(ours, job, version)
        assert ours.read_bytes() == expected.read_bytes()


@requires_reference
def test_negative_zero_stats_keep_their_sign(tmp_path):
    """A present -0.0 is stored with its sign bit, as CPython stores it (found by the
    differential test above: ``x or 0.0`` had turned it into +0.0)."""
    frame = ["a.py", [1, 1, 0, 4], "f", None]
    jobs = [{"writer": {"compression": 0}, "interval_us": 1, "start_time_us": 0,
             "stats": stats, "samples": [[1, [[0, [[7, 0, [frame]]]]]]]}
            for stats in ([0.0, 1.0, -0.0, -0.0], [-0.0, -0.0, None, -0.0])]
    files = [tmp_path / f"cpython{i}.bin" for i in range(len(jobs))]
    version = write_with_cpython(list(zip(files, jobs, strict=True)))
    for i, (expected, job) in enumerate(zip(files, jobs, strict=True)):
        ours = tmp_path / f"ours{i}.bin"
        write_with_add(ours, job, version)
        assert ours.read_bytes() == expected.read_bytes()


# -- tests without CPython --------------------------------------------------------------------

# docs/format/example.md: example.bin, 275 bytes, written by CPython 3.15.2's BinaryWriter
EXAMPLE_BIN = bytes.fromhex(
    "4843415401000000030f0200404b4c0000000000e8030000000000000500000000000000010000008c000000"
    "00000000a600000000000000000000009a00000001000000000000000000000001e807210100010000000000"
    "0000000000000002e80721e8072301000000000000000000000002e807210101010100000000000000000000"
    "0003e80721010102046d2e7079046d61696e04776f726b017e083c6e61746976653e00010600080cff00020e"
    "02000a5a030401000100ff7b14ae47e17a743f0000000000408f400000000000000000000000000000000001"
    "0000000000000054414348535441540100000038000000050000000300000013010000000000000000000000"
    "0000000000000000000000"
)


@pytest.mark.skipif(sys.byteorder != "little", reason="the example is little-endian")
def test_spec_example_file_byte_for_byte(tmp_path):
    main = ("m.py", "main", 3, 3, 4, 10, None)
    work = ("m.py", "work", 7, 8, 0, 5, 90)
    native = ("~", "<native>", None, None, None, None, None)
    path = tmp_path / "example.bin"
    with Writer(path, 1000, 5_000_000, compression="none", mode=1, capture_features=9) as w:
        stacks = [[main], [main], [main], [work, main], [native, main]]
        for k, stack in enumerate(stacks, start=1):
            w.add(1, 0, 5_000_000 + 1000 * k, 0x23 if k == 3 else 0x21, stack)
        w.set_stats(0.005, 1000.0, 0.0, None)
    assert path.read_bytes() == EXAMPLE_BIN


def _raw_region(path) -> bytes:
    data = path.read_bytes()
    order = spec.byte_order(data)
    header = spec.header(order).parse(data)
    return data[spec.HEADER_SIZE : header.string_table_offset], order, header


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(workloads(max_calls=15))
def test_record_bodies_parse_with_the_schema(tmp_path_factory, job):
    """The hand-written record bodies are what the schema's construct declarations read."""
    job = {**job, "writer": {**job["writer"], "compression": 0}}
    path = tmp_path_factory.mktemp("schema") / "ours.bin"
    write_with_add(path, job, (3, 15, 2))
    region, order, header = _raw_region(path)
    records = cs.GreedyRange(spec.record(order)).parse(region)
    assert spec.record(order)[len(records)].build(records) == region
    counted = sum(r.body.count if r.prefix.encoding == "REPEAT" else 1 for r in records)
    assert counted == header.sample_count == sum(
        len(threads) for _, interpreters in job["samples"] for _, threads in interpreters)


def test_zstd_region_is_the_streamed_raw_region(tmp_path):
    """More than 512 KiB of records: the zstd region is the raw one fed in 512 KiB chunks."""
    frames = [("f.py", f"fn{i}", i, i, 0, 1, i % 300) for i in range(40)]
    paths = {}
    for compression in ("none", "zstd"):
        rng = np.random.default_rng(0)
        paths[compression] = tmp_path / f"{compression}.bin"
        with Writer(paths[compression], 100, 0, compression=compression) as w:
            for k in range(60_000):
                depth = int(rng.integers(0, 40))
                w.add(k % 3, 0, 10 * k, k & 0xFF, frames[depth:])
    raw, _, _ = _raw_region(paths["none"])
    assert len(raw) > 2 * cpython_settings.WRITE_BUFFER_SIZE
    zstd_data = paths["zstd"].read_bytes()
    header = spec.header(spec.byte_order(zstd_data)).parse(zstd_data)
    assert zstd_data[spec.HEADER_SIZE : header.string_table_offset] == compress_region(raw)
    tables = paths["none"].read_bytes()[spec.HEADER_SIZE + len(raw) : -spec.FOOTER_SIZE]
    assert zstd_data[header.string_table_offset : -spec.FOOTER_SIZE] == tables
    assert header.compression == 1 and header.sample_count == 60_000


def test_empty_profile(tmp_path):
    for compression, region in (("none", b""), ("zstd", bytes.fromhex("28b52ffd2000010000"))):
        path = tmp_path / f"{compression}.bin"
        with Writer(path, 1, 2, compression=compression):
            pass
        data = path.read_bytes()
        assert data[spec.HEADER_SIZE : -spec.FOOTER_SIZE] == region
        footer = spec.footer(spec.byte_order(data)).parse(data[-spec.FOOTER_SIZE:])
        assert (footer.string_count, footer.frame_count, footer.file_size) == (0, 0, len(data))


def test_only_the_innermost_256_frames_are_interned(tmp_path):
    stack = [(f"f{i}.py", "g", i, i, 0, 0, None) for i in range(300)]
    path = tmp_path / "deep.bin"
    with Writer(path, 1, 0, compression="none") as w:
        w.add(1, 0, 1, 0, stack)
        assert len(w.frames) == 256 and len(w.strings) == 257
        assert w.intern_stack(stack) == tuple(range(256))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"mode": 5}, "invalid profiling mode"),
        ({"mode": -2}, "invalid profiling mode"),
        ({"capture_features": 32}, "invalid capture features"),
        ({"compression": "lz4"}, "Unknown compression type"),
    ],
)
def test_writer_argument_validation(tmp_path, kwargs, message):
    with pytest.raises(ValueError, match=message):
        Writer(tmp_path / "x.bin", 1, 0, **kwargs)


@pytest.mark.parametrize(
    ("stats", "message"),
    [
        ((float("nan"), 1), "duration must be a finite non-negative value"),
        ((1, -1), "sample rate must be a finite non-negative value"),
        ((1, 1, -0.5), "error rate must be a finite non-negative value"),
        ((1, 1, None, float("inf")), "missed samples must be a finite value"),
    ],
)
def test_set_stats_validation(tmp_path, stats, message):
    with Writer(tmp_path / "x.bin", 1, 0) as w, pytest.raises(ValueError, match=message):
        w.set_stats(*stats)


def test_closed_writer_refuses_everything(tmp_path):
    w = Writer(tmp_path / "x.bin", 1, 0)
    w.finalize()
    for call in (lambda: w.add(1, 0, 1, 0, []), lambda: w.set_stats(1, 1), w.finalize):
        with pytest.raises(ValueError, match="Writer is closed"):
            call()


def test_add_batch_equals_add(tmp_path):
    """Batches, CSR or prefix tree, give the file that single adds give (no CPython needed)."""
    rng = np.random.default_rng(1)
    frames = [("m.py", f"f{i}", i, i + 1, 2, 9, i) for i in range(10)]
    stacks = [[], *[[frames[j] for j in rng.integers(0, 10, rng.integers(1, 6))]
                    for _ in range(12)]]
    samples = [[int(t) * 7, [[int(rng.integers(0, 2)),
                              [[int(rng.integers(0, 3)), int(rng.integers(-3, 300)),
                                [[f[0], list(f[2:6]), f[1], f[6]] for f in
                                 stacks[int(rng.integers(0, len(stacks)))]]]]]]]
               for t in range(2000)]
    job = {"writer": {"compression": 1}, "interval_us": 1, "start_time_us": 0, "stats": None,
           "samples": samples}
    files = {}
    for way, write in WAYS.items():
        files[way] = tmp_path / f"{way}.bin"
        write(files[way], job, (3, 15, 2))
    contents = {way: path.read_bytes() for way, path in files.items()}
    assert len(set(contents.values())) == 1


def test_memory_stays_bounded(tmp_path):
    """The region streams out: the writer's own buffers stay under 512 KiB + one record."""
    frame = ("a.py", "f", 1, 1, 0, 1, None)
    with Writer(tmp_path / "big.bin", 1, 0, compression="none") as w:
        for k in range(200_000):
            w.add(k % 4, 0, k, 0, [frame] * (1 + k % 7))
            assert len(w.region.buffer) < cpython_settings.WRITE_BUFFER_SIZE
        limit = cpython_settings.REPEAT_BUFFER_SIZE
        assert all(len(t.pending) <= limit for t in w.encoder.threads.values())
    assert (tmp_path / "big.bin").stat().st_size > 2 * cpython_settings.WRITE_BUFFER_SIZE


def test_frame_table_matches_schema(tmp_path):
    """Converted positions, sentinels and deltas, read back through the schema's FRAME."""
    keys = [("a", "f", 2**31, 2**32 + 5, None, 7, 255), ("a", "f", 5, -1, 3, 9, -1),
            ("a", "f", 5, 6, -1, 9, 300), ("a", "f", 0, 0, -1, -1, 0), ("b", "g", 50, 40, 7, 3, 90)]
    path = tmp_path / "frames.bin"
    with Writer(path, 1, 0, compression="none") as w:
        w.add(1, 0, 1, 0, keys)
    data = path.read_bytes()
    order = spec.byte_order(data)
    header = spec.header(order).parse(data)
    footer = spec.footer(order).parse(data[-spec.FOOTER_SIZE:])
    entries = spec.FRAME[footer.frame_count].parse(data[header.frame_table_offset:])
    got = [(e.lineno, e.end_lineno_delta, e.column, e.end_column_delta, e.opcode)
           for e in entries]
    assert got == [(-(2**31), 5 + 2**31 - 2**32, -1, 0, None), (5, 0, 3, 6, None),
                   (5, 1, -1, 0, None), (0, 0, -1, 0, 0), (50, -10, 7, -4, 90)]
    strings = spec.STRING[footer.string_count].parse(data[header.string_table_offset:])
    assert [s.text for s in strings] == [b"a", b"f", b"b", b"g"]


# -- read -> write reproduces the file ---------------------------------------------------------


def _round_trip(source, target) -> bytes:
    from tachyon_format.formats.tachyon.reader import read
    from tachyon_format.formats.tachyon.writer import write

    write(read(source), target)
    return target.read_bytes()


def test_golden_files_round_trip_byte_for_byte(golden_bins, tmp_path):
    """Real CPython profiles: read then write gives the same bytes (tables, REPEAT order)."""
    assert golden_bins
    for path in golden_bins:
        assert _round_trip(path, tmp_path / path.name) == path.read_bytes(), path.name


@requires_reference
@settings(max_examples=3, **ORACLE_SETTINGS)
@given(st.lists(workloads(), min_size=4, max_size=8))
def test_cpython_files_round_trip_byte_for_byte(tmp_path_factory, jobs):
    tmp = tmp_path_factory.mktemp("roundtrip")
    files = [tmp / f"cpython{i}.bin" for i in range(len(jobs))]
    write_with_cpython(list(zip(files, jobs, strict=True)))
    for path in files:
        assert _round_trip(path, tmp / f"again_{path.name}") == path.read_bytes(), path.name
