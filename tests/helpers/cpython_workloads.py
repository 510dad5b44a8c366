"""CPython 3.15's own BinaryWriter and BinaryReader driven on random workloads: the oracle of
the writer, reader and compat tests.

A workload is a JSON-able dict: ``writer`` (BinaryWriter keyword arguments), ``interval_us``,
``start_time_us``, ``stats`` (``set_stats`` arguments or None) and ``samples`` in the form of
``tests/helpers/reference.py``::

    [[timestamp_us, [[interpreter_id, [[thread_id, status, [frame, ...]], ...]], ...]], ...]
    frame = [filename, location, funcname, opcode]    # innermost first

CPython's writer and reader run once per batch of workloads, in one subprocess, to keep the
suite fast.
"""

from __future__ import annotations

import json
import os

from hypothesis import HealthCheck, Phase
from hypothesis import strategies as st

from .reference import run_reference

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


ORACLE_SETTINGS = {
    "deadline": None,
    "suppress_health_check": list(HealthCheck),
    # each example runs CPython in a subprocess: shrinking would take minutes, so a failure
    # is reported as generated (the test prints the workload's writer arguments)
    "phases": (Phase.explicit, Phase.reuse, Phase.generate),
}
