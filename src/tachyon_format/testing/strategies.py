"""Hypothesis strategies: made-up profiles, and damaged copies of any bytes.

``profiles()`` draws a :class:`~tachyon_format.testing.ProfileBuilder` filled with samples
(``.to_bytes()`` is then a Tachyon file CPython 3.15 reads, ``.to_bytes("pprof")`` the same
profile as pprof, ``.profile()`` the model); ``corrupted(data)`` draws copies of *data* with
a few bits flipped, cut short, or with runs of bytes overwritten. Needs hypothesis (the
``test`` extra); the rest of ``tachyon_format.testing`` does not.
"""

from __future__ import annotations

from hypothesis import strategies as st

from .builder import MODES, ProfileBuilder
from .notation import NO_FILE, Frame

FILES = ("app.py", "lib/util.py", "/usr/lib/python3.15/json/decoder.py", "<frozen os>",
         "é/ünïcode.py", "/usr/lib/python3.15/profiling/sampling/_sync_coordinator.py")
"""File names frames get: relative and absolute, frozen, non-ASCII, and one of the
profiler's own (which CPython's collectors leave out)."""
FUNCTIONS = ("main", "work", "Parser.parse", "<module>", "<lambda>", "fn_é")
SYNTHETIC = ("<GC>", "<native>")
"""CPython's frames without a location, in file ``~``."""


def _ints(value: int | tuple[int, int], low: int) -> st.SearchStrategy[int]:
    """An int strategy from a maximum or a ``(min, max)`` pair."""
    if isinstance(value, tuple):
        return st.integers(*value)
    return st.integers(low, value)


@st.composite
def frames(draw, *, opcodes: bool = True, positions: bool = True) -> Frame:
    """One frame: a Python frame with a line (and, with *positions*, columns), one without a
    location, or a synthetic ``<GC>`` / ``<native>``; an opcode with *opcodes*."""
    opcode = draw(st.none() | st.integers(0, 254)) if opcodes else None
    kind = draw(st.sampled_from(("line", "line", "line", "no location", "synthetic")))
    if kind == "synthetic":
        return Frame(NO_FILE, draw(st.sampled_from(SYNTHETIC)))
    file, function = draw(st.sampled_from(FILES)), draw(st.sampled_from(FUNCTIONS))
    if kind == "no location":
        return Frame(file, function, opcode=opcode)
    line = draw(st.integers(0, 5000))
    if not positions:
        return Frame(file, function, line, opcode=opcode)
    end_line = line + draw(st.integers(0, 3))
    column = draw(st.integers(-1, 120))
    end_column = -1 if column < 0 else column + draw(st.integers(0, 40))
    return Frame(file, function, line, end_line, column, end_column, opcode)


@st.composite
def profiles(draw, *, threads: int | tuple[int, int] = 3, interpreters: int = 1,
             samples: int | tuple[int, int] = 30, depth: int | tuple[int, int] = 8,
             repeats: int = 4, statuses: st.SearchStrategy[int] | None = None,
             locations: int = 10, opcodes: bool = True,
             compression: str | None = None, mode: str | None | bool = True,
             monotonic: bool = False) -> ProfileBuilder:
    """A :class:`ProfileBuilder` holding up to *samples* calls of ``sample()``.

    *threads* and *interpreters*: how many distinct (up to, or a ``(min, max)``); *depth*:
    frames per stack (a stack may be empty); *repeats*: the most times one call repeats its
    sample an interval apart (REPEAT records); *statuses*: a strategy of status bytes
    (default: any combination of the six ``ThreadStatus`` bits); *locations*: how many
    distinct frames the stacks share; *opcodes*: whether frames carry opcodes;
    *compression*: ``"zstd"``, ``"none"``, or drawn when ``None``; *mode*: a mode name, or
    drawn (``True``), or unknown (``None``). Times go forward from a drawn start, sometimes
    several samples at one time, as a profiler taking all threads at once records them; now
    and then the clock steps back (a file stores that as a delta that wraps around 2**64),
    unless *monotonic*."""
    pool = draw(st.lists(frames(opcodes=opcodes), min_size=1, max_size=max(1, locations)))
    stack = st.lists(st.sampled_from(pool), min_size=_min(depth), max_size=_max(depth))
    stacks = draw(st.lists(stack, min_size=1, max_size=6))
    thread_ids = draw(st.lists(st.integers(1, 2**64 - 1), min_size=max(1, _min(threads)),
                               max_size=max(1, _max(threads)), unique=True))
    interpreter_ids = draw(st.lists(st.integers(0, 2**32 - 1), min_size=1,
                                    max_size=max(1, interpreters), unique=True))
    chosen_mode = draw(st.sampled_from((*MODES, None))) if mode is True else mode
    builder = ProfileBuilder(
        mode=chosen_mode, interval_us=draw(st.integers(1, 10_000)),
        start_time_us=draw(st.integers(0, 2**40)),
        compression=compression or draw(st.sampled_from(("zstd", "none"))))
    status = statuses if statuses is not None else st.integers(0, 63)
    time = builder.start_time_us
    for _ in range(draw(_ints(samples, 0))):
        steps = (0, builder.interval_us, draw(st.integers(1, 10**6)))
        if not monotonic:
            steps += (-draw(st.integers(1, 10**6)),)
        time = max(0, time + draw(st.sampled_from(steps)))
        count = draw(st.integers(1, max(1, repeats)))
        builder.sample(thread=draw(st.sampled_from(thread_ids)),
                       interpreter=draw(st.sampled_from(interpreter_ids)),
                       t=time, stack=draw(st.sampled_from(stacks)), status=draw(status),
                       repeat=count)
        time += (count - 1) * builder.interval_us
    return builder


def _min(value: int | tuple[int, int]) -> int:
    return value[0] if isinstance(value, tuple) else 0


def _max(value: int | tuple[int, int]) -> int:
    return value[1] if isinstance(value, tuple) else value


PATCH_VALUES = (b"\x00", b"\xff", b"\x7f", b"\x80", b"\xff" * 8, b"\x00" * 8,
                b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", b"\x80" * 11)
"""Runs that hurt readers: zero and all-ones words, the largest varint, an unterminated one."""


@st.composite
def corrupted(draw, data: bytes, *, max_edits: int = 3) -> bytes:
    """A copy of *data* with 1 to *max_edits* damages: a bit flipped, the end cut off, a run
    of bytes overwritten (random bytes or one of :data:`PATCH_VALUES`), bytes inserted or
    deleted. Every example differs from *data* (unless *data* is empty)."""
    out = bytearray(data)
    for _ in range(draw(st.integers(1, max(1, max_edits)))):
        kind = draw(st.sampled_from(("flip", "truncate", "patch", "insert", "delete")))
        if not out:
            kind = "insert"
        at = draw(st.integers(0, max(0, len(out) - 1)))
        if kind == "flip":
            out[at] ^= 1 << draw(st.integers(0, 7))
        elif kind == "truncate":
            del out[at:]
        elif kind == "patch":
            run = draw(st.sampled_from(PATCH_VALUES) | st.binary(min_size=1, max_size=8))
            out[at:at + len(run)] = run
        elif kind == "insert":
            out[at:at] = draw(st.binary(min_size=1, max_size=16))
        else:
            del out[at:at + draw(st.integers(1, 16))]
    if bytes(out) == bytes(data) and data:
        out[-1] ^= 0x01  # (a patch can write what was there; keep the promise above)
    return bytes(out)
