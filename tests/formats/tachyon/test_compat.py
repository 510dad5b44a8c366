"""``tachyon_format.compat`` against the live ``_remote_debugging`` of CPython 3.15.2.

The same scenario code runs twice, once with ``m = _remote_debugging`` under the reference
interpreter and once with ``m = tachyon_format.compat`` here, and the logs (results,
exception types and messages, files written, collect() calls, progress callbacks) must match.
Each test runs CPython once, for all its cases.
"""

from __future__ import annotations

import json
import os
import random
import re
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tachyon_format import compat
from tests.helpers.cpython_workloads import ORACLE_SETTINGS, workloads, write_with_cpython
from tests.helpers.paths import DATA_DIR
from tests.helpers.reference import requires_reference, run_reference

# -- scenarios: plain Python run with either module bound to ``m`` ---------------------------

SCENARIO_TOOLS = r'''
import json, os, pathlib, struct

def builtin_type(exc):
    """The nearest builtin class of an exception (subclasses such as FormatError compare as
    the ValueError CPython raises)."""
    return next(c.__name__ for c in type(exc).__mro__ if c.__module__ == "builtins")

def outcome(fn, *args, **kwargs):
    try:
        return ["ok", fn(*args, **kwargs)]
    except BaseException as exc:
        return [builtin_type(exc), str(exc)]

def frame(filename, location, funcname, opcode):
    location = None if location is None else m.LocationInfo(tuple(location))
    return m.FrameInfo((filename, location, funcname, opcode))

def call(interpreters):
    return [m.InterpreterInfo((iid, [m.ThreadInfo((tid, status, [frame(*f) for f in frames]))
                                     for tid, status, frames in threads]))
            for iid, threads in interpreters]

def frame_row(f):
    return [f.filename, f.funcname, None if f.location is None else list(f.location), f.opcode]

class Calls:
    def __init__(self):
        self.calls = []
    def collect(self, stack_frames, timestamps_us):
        self.calls.append([[[i.interpreter_id, [[t.thread_id, t.status,
                             [frame_row(f) for f in t.frame_info]] for t in i.threads]]
                            for i in stack_frames], list(timestamps_us)])

def replay_log(path):
    """Everything a reader shows of one file: info, calls, progress, stats or the error."""
    log = {}
    try:
        with m.BinaryReader(path) as reader:
            log["info"] = reader.get_info()
            calls, progress = Calls(), []
            log["replayed"] = outcome(reader.replay, calls,
                                      lambda done, total: progress.append([done, total]))
            log["progress"] = progress
            if log["replayed"][0] == "ok":
                log["calls"] = calls.calls
            log["stats"] = reader.get_stats()
            log["count"] = [reader.sample_count, reader.sample_interval_us]
    except BaseException as exc:
        log["error"] = [builtin_type(exc), str(exc)]
    return json.loads(json.dumps(log, default=list))
'''


def run_both(scenario: str, payload) -> tuple[object, object]:
    """Run ``scenario`` (which defines ``run(payload) -> JSON-able``) with CPython's module
    and with ours; returns (cpython_result, our_result)."""
    program = f"import _remote_debugging as m\n{SCENARIO_TOOLS}\n{scenario}\n" + (
        "import sys\nprint(json.dumps(run(json.load(sys.stdin)), default=list))\n")
    theirs = json.loads(run_reference(program, input=json.dumps(payload)).stdout)
    namespace = {"m": compat}
    exec(compile(SCENARIO_TOOLS + scenario, "<scenario>", "exec"), namespace)  # noqa: S102
    ours = json.loads(json.dumps(namespace["run"](payload), default=list))
    return theirs, ours


# -- BinaryWriter ----------------------------------------------------------------------------

WRITE_JOBS = r'''
def run(jobs):
    out = []
    for path, job in jobs:
        writer = m.BinaryWriter(path, job["interval_us"], job["start_time_us"], **job["writer"])
        for timestamp_us, interpreters in job["samples"]:
            writer.write_sample(call(interpreters), timestamp_us)
        if job["stats"] is not None:
            writer.set_stats(*job["stats"])
        stats = writer.get_stats()
        writer.finalize()
        with open(path, "rb") as f:
            out.append([stats, writer.total_samples, f.read().hex()])
    return out
'''


@requires_reference
@settings(max_examples=4, **ORACLE_SETTINGS)
@given(st.lists(workloads(max_calls=20), min_size=3, max_size=6))
def test_binary_writer_is_byte_identical(tmp_path_factory, jobs):
    tmp = tmp_path_factory.mktemp("compat")
    payload = [[os.fspath(tmp / f"w{i}.bin"), job] for i, job in enumerate(jobs)]
    theirs, ours = run_both(WRITE_JOBS, payload)
    assert ours == theirs


STATE_MACHINE = r'''
def run(directory):
    log = []
    path = os.path.join(directory, "s.bin")
    good = call([[0, [[1, 0, [["a.py", [1, 1, 0, 2], "f", None]]]]]])
    bad_iid = call([[2**32, [[1, 0, []]]]])

    class BadStatus:
        def __index__(self):
            raise OverflowError("status conversion failed")

    # constructor conversions and validation
    for args, kwargs in [((123, 1, 0), {}), ((path, -1, 0), {}), ((path, 1, 2**64), {}),
                         ((path, 1, 0), {"mode": 5}), ((path, 1, 0), {"mode": None}),
                         ((path, 1, 0), {"capture_features": 32}),
                         ((path, 1, 0), {"compression": 2**40}),
                         ((pathlib.Path(directory) / "no" / "x.bin", 1, 0), {})]:
        log.append(outcome(lambda: m.BinaryWriter(*args, **kwargs) and None))
    # format limit, then more samples, then finalize through the context manager
    w = m.BinaryWriter(path, 1000, 0)
    log.append(outcome(w.write_sample, good, 1))
    log.append(outcome(w.write_sample, good + bad_iid, 2))
    log.append([w.limit_reached, w.total_samples])
    log.append(outcome(w.write_sample, good, 3))
    log.append(outcome(w.write_sample, [], -1))
    log.append(outcome(w.write_sample, [], 2**64))
    log.append(outcome(w.set_stats, 1, -1))
    log.append(outcome(w.set_stats, 1.5, 2, None, -3.0))
    with w:
        pass
    log.append([w.limit_reached, w.total_samples, outcome(w.get_stats),
                outcome(w.write_sample, good, 4), outcome(w.set_stats, 1, 1),
                outcome(w.finalize), outcome(w.close), w.total_samples])
    with open(path, "rb") as f:
        log.append(f.read().hex())
    # broken writers
    for sample in ([[-1, [[1, 0, []]]]], [[0, [[-1, 0, []]]]], [[0, [[2**64, 0, []]]]],
                   [[0, [[1, 2**70, []]]]], [[0, [[1, "x", []]]]],
                   [[0, [[1, 0, [[1, None, "f", None]]]]]],
                   [[0, [[1, 0, [["\ud800", None, "f", None]]]]]]):
        w = m.BinaryWriter(path, 1000, 0)
        log.append(outcome(w.write_sample, call(sample), 1))
        log.append([outcome(w.write_sample, good, 2), outcome(w.finalize), w.limit_reached,
                    outcome(w.get_stats), outcome(w.set_stats, 1, 1), w.total_samples])
        log.append([outcome(w.__exit__, None, None, None), w.total_samples])
    w = m.BinaryWriter(path, 1000, 0)
    log.append(outcome(w.write_sample, call([[0, [[1, BadStatus(), []]]]]), 1))
    log.append(outcome(w.write_sample, (), 1))
    w = m.BinaryWriter(path, 1000, 0)
    log.append(outcome(w.write_sample, (), 1))
    log.append(outcome(w.write_sample, [], 1))
    # close discards; total_samples is 0 afterwards
    w = m.BinaryWriter(path, 1000, 0)
    for k in range(5):
        w.write_sample(good, k)
    log.append([w.total_samples, outcome(w.close), w.total_samples, outcome(w.finalize)])
    # an I/O error in finalize breaks the writer
    if os.path.exists("/dev/full"):
        w = m.BinaryWriter("/dev/full", 1000, 0)
        w.write_sample(good, 1)
        log.append([outcome(w.finalize)[0], w.limit_reached, outcome(w.finalize),
                    outcome(w.write_sample, [], 2)])
        w.close()
    return log
'''


@requires_reference
def test_writer_states_and_errors_match_cpython(tmp_path):
    theirs, ours = run_both(STATE_MACHINE, os.fspath(tmp_path))
    assert len(ours) == len(theirs)
    for index, (mine, cpython) in enumerate(zip(ours, theirs, strict=True)):
        assert mine == cpython, index


# -- BinaryReader ----------------------------------------------------------------------------

REPLAY_FILES = r'''
def run(paths):
    return [replay_log(path) for path in paths]
'''


def _crafted_files(directory, version_files: list) -> list:
    """Hand-made records CPython's writer never emits: long REPEATs, status runs, clamped
    pops, zero-count REPEATs, a REPEAT on a fresh thread."""
    out = []
    frames_bin = b"\x00\x01\x02\x00\x00\x00\xff"  # frame 0: a.py / f line 1
    strings_bin = b"\x04a.py\x01f"
    prefix = struct.Struct("<QIB")
    for name, records, count in [
        ("long_repeat", [prefix.pack(1, 0, 1) + b"\x01\x00\x01\x00",
                         prefix.pack(1, 0, 0) + _uleb(20000) + b"\x01\x05" * 20000], 20001),
        ("status_runs", [prefix.pack(1, 0, 0) + _uleb(8) + bytes([1, 0, 1, 0, 1, 1, 1, 1,
                                                                  1, 0, 1, 0, 1, 0, 1, 0])], 8),
        ("clamped_pop", [prefix.pack(1, 0, 1) + b"\x01\x00\x02\x00\x00",
                         prefix.pack(1, 0, 3) + b"\x01\x00\x09\x01\x00",
                         prefix.pack(1, 0, 0) + b"\x00"], 2),
        ("suffix_shared_less", [prefix.pack(1, 0, 1) + b"\x01\x00\x03\x00\x00\x00",
                                prefix.pack(1, 0, 2) + b"\x01\x00\x01\x01\x00"], 2),
    ]:
        region = b"".join(records)
        string_offset = 64 + len(region)
        frame_offset = string_offset + len(strings_bin)
        size = frame_offset + len(frames_bin) + 32
        header = struct.pack("<IIBBBBQQQIQQII", 0x54414348, 1, 3, 15, 2, 0, 0, 1, count, 1,
                             string_offset, frame_offset, 0, 0)
        footer = struct.pack("<IIQ16x", 2, 1, size)
        path = directory / f"{name}.bin"
        path.write_bytes(header + region + strings_bin + frames_bin + footer)
        out.append(path)
    return out


def _uleb(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    return bytes(out + bytes([value]))


def _mutants(path, directory, rng: random.Random) -> list:
    """Corruptions of one valid file: truncations, patched header fields, flipped bytes."""
    data = path.read_bytes()
    variants = []
    for cut in sorted({0, 10, 63, 64, 65, len(data) // 2, len(data) - 33, len(data) - 1}):
        variants.append(data[:max(cut, 0)])
    for offset, fmt, value in [(28, "<Q", 2), (28, "<Q", 0), (36, "<I", 0), (40, "<Q", 2**40),
                               (48, "<Q", 63), (40, "<Q", 63), (56, "<I", 7), (60, "<I", 6),
                               (4, "<I", 2), (4, "<I", 0), (0, "<I", 0x58585858),
                               (len(data) - 32, "<I", 0xFFFFFFFF),
                               (len(data) - 28, "<I", 0xFFFFFFFF)]:
        patched = bytearray(data)
        struct.pack_into(fmt, patched, offset, value)
        variants.append(bytes(patched))
    for _ in range(6):
        flipped = bytearray(data)
        # Not the first 14 region bytes: a corrupt zstd frame header gets CPython's "Corrupted
        # zstd frame header" from ZSTD_getFrameContentSize, which codec/zstd.py does not yet
        # reproduce (it reports the decompressor's error instead). Known gap.
        flipped[rng.randrange(64 + 14, len(data))] ^= 1 << rng.randrange(8)
        variants.append(bytes(flipped))
    paths = []
    for index, variant in enumerate(variants):
        target = directory / f"{path.stem}_m{index}.bin"
        target.write_bytes(variant)
        paths.append(target)
    return paths


@requires_reference
@settings(max_examples=3, **ORACLE_SETTINGS)
@given(st.lists(workloads(max_calls=25), min_size=3, max_size=5), st.randoms())
def test_reader_replays_like_cpython(tmp_path_factory, jobs, rng):
    """Valid files (ours, so CPython's), crafted ones and corrupt ones: same info, the same
    collect() calls and progress callbacks, the same counters, or the same error."""
    tmp = tmp_path_factory.mktemp("reader")
    files = [tmp / f"w{i}.bin" for i in range(len(jobs))]
    write_with_cpython(list(zip(files, jobs, strict=True)))
    paths = files + _crafted_files(tmp, files)
    for path in files[:2]:
        paths += _mutants(path, tmp, rng)
    theirs, ours = run_both(REPLAY_FILES, [os.fspath(p) for p in paths])
    for path, mine, cpython in zip(paths, ours, theirs, strict=True):
        if mine != cpython and "calls" not in cpython and "calls" in mine:
            pytest.fail(f"{path.name}: CPython failed, we did not: {cpython}")
        assert _comparable(mine) == _comparable(cpython), path.name


def _comparable(log: dict) -> dict:
    """Drop what legitimately differs on a failed replay: CPython delivers records up to the
    bad one, we deliver whole decoding windows; progress and counters follow suit. A version
    error quotes the running interpreter, which differs between the two runs."""
    if "error" in log:
        log = {**log, "error": [log["error"][0],
                                re.sub(r"this is Python [0-9.]+", "this is Python X",
                                       log["error"][1])]}
    if log.get("replayed", ["ok"])[0] != "ok":
        return {k: v for k, v in log.items() if k not in ("progress", "stats")}
    return log


READER_API = r'''
def run(paths):
    valid, missing = paths
    log = [outcome(m.BinaryReader, 123), outcome(m.BinaryReader, pathlib.Path(missing))]
    reader = m.BinaryReader(valid)
    log.append(outcome(reader.replay, object()))
    calls = Calls()
    log.append([outcome(reader.replay, calls), reader.get_stats()])
    def stop(done, total):
        raise KeyError("stop")
    log.append(outcome(reader.replay, Calls(), stop))
    reader.close()
    log += [outcome(reader.get_info), outcome(reader.get_stats), outcome(reader.replay, calls)]
    reader.close()
    for name in ("THREAD_STATUS_HAS_GIL", "THREAD_STATUS_ON_CPU", "THREAD_STATUS_UNKNOWN",
                 "THREAD_STATUS_GIL_REQUESTED", "THREAD_STATUS_HAS_EXCEPTION",
                 "THREAD_STATUS_MAIN_THREAD"):
        log.append(getattr(m, name))
    log.append(m.zstd_available())
    for cls in (m.FrameInfo, m.LocationInfo, m.ThreadInfo, m.InterpreterInfo):
        log.append([cls.__name__, cls.n_fields, cls.__match_args__])
    f = m.FrameInfo(("a.py", m.LocationInfo((1, 2, 3, 4)), "f", None))
    log += [repr(f), f.location == (1, 2, 3, 4), outcome(m.FrameInfo, (1, 2))]
    return log
'''


@requires_reference
def test_reader_api_matches_cpython(tmp_path):
    valid = tmp_path / "v.bin"
    w = compat.BinaryWriter(valid, 1000, 0, compression=1)
    frame = compat.FrameInfo(("a.py", (1, 1, 0, 3), "f", 5))
    for k in range(2500):
        w.write_sample([compat.InterpreterInfo((0, [compat.ThreadInfo((1, k & 1, [frame]))]))], k)
    w.finalize()
    theirs, ours = run_both(READER_API, [os.fspath(valid), os.fspath(tmp_path / "no.bin")])
    assert ours == theirs


def test_struct_sequences_are_tuples():
    location = compat.LocationInfo((1, 2, 3, 4))
    frame = compat.FrameInfo(("a.py", location, "f", None))
    assert frame == ("a.py", (1, 2, 3, 4), "f", None)
    assert (frame.filename, frame.location.col_offset, frame.opcode) == ("a.py", 3, None)
    assert compat.InterpreterInfo((0, [])).threads == []
    with pytest.raises(TypeError, match="takes a 3-sequence"):
        compat.ThreadInfo((1, 2))


def test_reader_errors_are_value_errors_with_cpython_text(tmp_path):
    path = tmp_path / "bad.bin"
    path.write_bytes(b"XXXX" + bytes(100))
    with pytest.raises(ValueError) as caught:
        compat.BinaryReader(path)
    assert str(caught.value) == "Invalid magic number: 0x58585858"
    assert caught.value.offset == 0


def test_reused_frame_objects_are_remembered_only_when_immutable(tmp_path):
    """The per-object memory of compat.BinaryWriter never changes the file: a mutable
    location changed between samples is read again, and the result equals writing the
    frame keys explicitly."""
    from tachyon_format import Writer, compat

    location = [10, 10, 0, 5]
    mutable = compat.FrameInfo(("m.py", location, "f", None))
    fixed = compat.FrameInfo(("m.py", compat.LocationInfo((3, 3, 0, 9)), "main", 7))
    stack = [mutable, fixed]
    ours = tmp_path / "compat.bin"
    writer = compat.BinaryWriter(str(ours), 1000, 0, compression=0)
    expected = tmp_path / "explicit.bin"
    with Writer(expected, 1000, 0, compression="none") as explicit:
        for step in range(4):
            location[0] = location[1] = 10 + step % 2
            stack_frames = [compat.InterpreterInfo((0, [compat.ThreadInfo((1, 0, stack))]))]
            writer.write_sample(stack_frames, 1000 * (step + 1))
            explicit.add(1, 0, 1000 * (step + 1), 0, [
                ("m.py", "f", location[0], location[1], 0, 5, None),
                ("m.py", "main", 3, 3, 0, 9, 7),
            ])
    writer.finalize()
    assert ours.read_bytes() == expected.read_bytes()


@requires_reference
def test_zstd_header_corruptions_fail_like_cpython(tmp_path):
    """Every byte of the zstd frame header set to telling values: the same outcome and
    message as CPython's reader (its check of the frame header comes first)."""
    from tachyon_format import compat

    base = (DATA_DIR / "threads_wall_zstd.bin").read_bytes()
    assert struct.unpack_from("<I", base, 56)[0] == 1
    paths = []
    for offset in range(64, 78):
        for value in (0x00, 0xFF, 0x08, 0x20, 0x40, 0x80):
            data = bytearray(base)
            data[offset] = value
            path = tmp_path / f"z{offset}_{value}.bin"
            path.write_bytes(bytes(data))
            paths.append(path)
    code = (
        "import sys, _remote_debugging as r\n"
        "class C:\n    def collect(self, *a): pass\n"
        "for p in sys.argv[1:]:\n"
        "    try:\n"
        "        with r.BinaryReader(p) as rd: rd.replay(C())\n"
        "        print('ok')\n"
        "    except Exception as e: print(type(e).__name__ + ': ' + str(e))\n"
    )
    theirs = run_reference(code, *map(str, paths)).stdout.splitlines()

    class Collector:
        def collect(self, *args):
            pass

    for path, expected in zip(paths, theirs, strict=True):
        try:
            with compat.BinaryReader(str(path)) as reader:
                reader.replay(Collector())
            ours = "ok"
        except ValueError as exc:
            ours = f"ValueError: {exc}"
        assert ours == expected, path.name
