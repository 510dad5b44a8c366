"""Deterministic synthetic Tachyon sample streams for the benchmark.

Run under the reference CPython 3.15 to write a profile with its C ``BinaryWriter``::

    python3.15 tools/bench/synth.py --kind mixed --samples 1000000 --seed 1 --out FILE

The same module also builds the per-tick sample list for the writer benchmark, under either
CPython 3.15 (with the ``_remote_debugging`` struct sequences) or the dev Python (with
look-alike named tuples), so both writers are fed identical samples.

Determinism: only ``random.Random(seed).random()`` is used (its output for an int seed is
stable across Python versions), never ``randrange``/``choice``.

Model (``mixed``): 4-16 threads, each with an outer "bootstrap" part and an inner part of a
stack 20-60 frames deep drawn from a pool of a few hundred frames. Per tick a thread changes its
stack with a small per-thread probability (busy threads more often, idle ones rarely); a change is
a push (SUFFIX), a pop/push of the innermost frames (POP_PUSH) or now and then a switch to another
task (FULL). Statuses come from a small set incl. the 0x20 main-thread bit; a status change alone
keeps the REPEAT run going. ``norepeat``: every thread changes its stack on every tick.
"""

from __future__ import annotations

import argparse
import collections
import sys
import time

START_TIME_US = 1_000_000_000
INTERVAL_US = 50  # 20 kHz, as the real runs
NUM_FILES = 40
NUM_FRAMES = 400
MIN_DEPTH, MAX_DEPTH = 20, 60

# Status bytes seen in real profiles: ON_CPU|MAIN, HAS_GIL|ON_CPU|MAIN, GIL_REQUESTED|MAIN ...
MAIN_STATUSES = (0x23, 0x22, 0x2A, 0x20, 0x2C)
OTHER_STATUSES = (0x00, 0x02, 0x03, 0x08, 0x05, 0x0A)

PyFrameInfo = collections.namedtuple("FrameInfo", "filename location funcname opcode")
PyThreadInfo = collections.namedtuple("ThreadInfo", "thread_id status frame_info")
PyInterpreterInfo = collections.namedtuple("InterpreterInfo", "interpreter_id threads")
PyLocationInfo = collections.namedtuple(
    "LocationInfo", "lineno end_lineno col_offset end_col_offset"
)


def struct_types():
    """``(FrameInfo, LocationInfo, ThreadInfo, InterpreterInfo)`` constructors taking one tuple."""
    try:
        import _remote_debugging as rd
    except ImportError:
        return (
            lambda t: PyFrameInfo(*t),
            lambda t: PyLocationInfo(*t),
            lambda t: PyThreadInfo(*t),
            lambda t: PyInterpreterInfo(*t),
        )
    return rd.FrameInfo, rd.LocationInfo, rd.ThreadInfo, rd.InterpreterInfo


class _Rng:
    """Version-stable helpers over ``random.Random.random``."""

    def __init__(self, seed: int) -> None:
        import random

        self._random = random.Random(seed).random

    def below(self, n: int) -> int:
        return int(self._random() * n)

    def between(self, lo: int, hi: int) -> int:  # inclusive
        return lo + int(self._random() * (hi - lo + 1))

    def chance(self, p: float) -> bool:
        return self._random() < p


def frame_pool(rng: _Rng, frame_info, location_info) -> list:
    """A few hundred distinct frames over a few dozen files, made once and reused."""
    files = [f"/srv/app/pkg{i % 7}/module_{i}.py" for i in range(NUM_FILES - 8)]
    files += [f"/usr/lib/python3.15/{name}.py" for name in (
        "threading", "json/decoder", "re/__init__", "asyncio/events", "selectors",
        "concurrent/futures/thread", "socket", "logging/__init__")]
    pool = []
    for i in range(NUM_FRAMES):
        lineno = rng.between(1, 2000)
        if rng.chance(0.05):
            location = None
        else:
            col = rng.between(0, 40)
            location = location_info((lineno, lineno + rng.below(3), col, col + rng.between(1, 60)))
        opcode = rng.between(1, 254) if rng.chance(0.3) else None
        funcname = "<module>" if i % 97 == 0 else f"func_{i}"
        pool.append(frame_info((files[rng.below(len(files))], location, funcname, opcode)))
    return pool


class _Thread:
    __slots__ = ("tid", "main", "p_change", "outer", "inner", "status", "frames")

    def __init__(self, rng: _Rng, index: int) -> None:
        self.tid = 139_800_000_000_000 + rng.below(1 << 32) * 4096 + index
        self.main = index == 0
        busy = index == 0 or rng.chance(0.5)
        self.p_change = 0.06 + 0.08 * rng._random() if busy else 0.003
        self.outer = [rng.below(NUM_FRAMES) for _ in range(rng.between(12, 40))]
        self.inner = [rng.below(NUM_FRAMES) for _ in range(rng.between(4, 12))]
        statuses = MAIN_STATUSES if self.main else OTHER_STATUSES
        self.status = statuses[rng.below(2 if busy else len(statuses))]
        self.frames = None


def _change(rng: _Rng, th: _Thread, force: bool) -> None:
    """Mutate the inner (innermost-first) part; sometimes switch task (new outer part)."""
    depth = len(th.outer) + len(th.inner)
    r = rng._random()
    if r < 0.04:  # task switch: most of the stack differs -> FULL
        th.outer = [rng.below(NUM_FRAMES) for _ in range(rng.between(12, 40))]
        th.inner = [rng.below(NUM_FRAMES) for _ in range(rng.between(4, 12))]
    elif r < 0.45 and depth < MAX_DEPTH:  # call deeper -> SUFFIX
        push = min(rng.between(1, 4), MAX_DEPTH - depth)
        th.inner[:0] = [rng.below(NUM_FRAMES) for _ in range(push)]
    else:  # return and call something else -> POP_PUSH
        pop = min(rng.between(1, 4), len(th.inner))
        push = rng.between(1 if force else 0, 4)
        push = max(min(push, MAX_DEPTH - depth + pop), MIN_DEPTH - depth + pop, 0)
        old_top = th.inner[0] if th.inner else -1
        th.inner[:pop] = [rng.below(NUM_FRAMES) for _ in range(push)]
        if force and th.inner and th.inner[0] == old_top:
            th.inner[0] = (old_top + 1) % NUM_FRAMES
    th.frames = None


def ticks(kind: str, num_samples: int, seed: int, types=None):
    """Yield ``(timestamp_us, stack_frames)`` per tick; ``num_samples`` thread-samples in all."""
    if kind not in ("mixed", "norepeat"):
        raise ValueError(f"unknown kind {kind!r}")
    frame_info, location_info, thread_info, interpreter_info = types or struct_types()
    rng = _Rng(seed)
    pool = frame_pool(rng, frame_info, location_info)
    threads = [_Thread(rng, i) for i in range(rng.between(4, 16))]
    statuses = (MAIN_STATUSES, OTHER_STATUSES)
    always = kind == "norepeat"
    ts = START_TIME_US
    left = num_samples
    while left > 0:
        ts += INTERVAL_US + rng.below(24) + (rng.below(400) if rng.chance(0.01) else 0)
        infos = []
        for th in threads[:left]:
            if always or rng.chance(th.p_change):
                _change(rng, th, always)
            if rng.chance(0.01):
                choices = statuses[0 if th.main else 1]
                th.status = choices[rng.below(len(choices))]
            if th.frames is None:
                th.frames = [pool[i] for i in th.inner] + [pool[i] for i in th.outer]
            infos.append(thread_info((th.tid, th.status, th.frames)))
        left -= len(infos)
        yield ts, [interpreter_info((0, infos))]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kind", choices=("mixed", "norepeat"), required=True)
    ap.add_argument("--samples", type=int, required=True, help="thread-samples to write")
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args(argv)

    import _remote_debugging as rd

    writer = rd.BinaryWriter(args.out, INTERVAL_US, START_TIME_US, compression=1)
    t0 = time.perf_counter()
    step = max(args.samples // 10, 1)
    next_report = step
    write = writer.write_sample
    for ts, frames in ticks(args.kind, args.samples, args.seed):
        write(frames, ts)
        if writer.total_samples >= next_report:
            done = writer.total_samples
            rate = done / (time.perf_counter() - t0)
            print(f"  {args.out}: {done:,}/{args.samples:,} samples ({rate / 1e6:.2f} M/s)",
                  file=sys.stderr, flush=True)
            next_report += step
    writer.finalize()
    print(f"  {args.out}: done in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
