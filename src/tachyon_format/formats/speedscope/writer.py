"""Write a :class:`~tachyon_format.model.Profile` as a speedscope JSON file.

One speedscope profile per thread (``Thread <id>``, with ``(interpreter <n>)`` when not 0;
rows without a thread in one more profile), the frames shared. Two kinds:

* ``sampled`` (the default): per thread, ``samples`` (stacks of frame indices, outermost
  first) and ``weights`` (the chosen sample type's values; the unit follows it: counts are
  ``none``, times keep their unit; speedscope refuses negative weights, and so does this
  writer). With timestamps (or read from speedscope), samples keep their order, runs of one
  stack merged as speedscope's "Time Order" view shows them; without (an aggregated
  profile, pprof's), one sample per distinct stack. Each distinct stack is rendered once.
* ``evented``: per thread, open/close events in microseconds since the first sample of the
  whole profile (so threads line up): each sample's stack is open from its timestamp until
  the thread's next sample when that comes within :data:`GAP_FACTOR` intervals, else for
  one interval (``interval_us``). Needs timestamps.

A frame is named by its function, else its address (``0x...``); ``file`` is its file name,
else its mapping's; ``line`` and ``col`` (counted from 1) when known. Frame rows that show the
same are written once.
"""

from __future__ import annotations

import contextlib
import json
from typing import Literal

import numpy as np
import numpy.typing as npt

from tachyon_format.model import Profile
from tachyon_format.model.aggregate import group_count

from ..sources import whole_file_writer
from . import SCHEMA_URL
from .events import encode_events
from .facts import EXTRAS_KEY, SpeedscopeFacts
from .file import UNITS

EXPORTER = "tachyon-format"
NO_THREAD = "samples without a thread"
EMPTY = "no samples"
GAP_FACTOR = 2
"""Evented: a sample lasts until the thread's next one when that comes within this many
intervals (a sampler's jitter), else for one interval (the thread was not sampled)."""


def build(
    profile: Profile,
    *,
    kind: Literal["sampled", "evented"] = "sampled",
    sample_type: str | None = None,
    aggregate: bool | None = None,
    interval_us: int | None = None,
    name: str | None = None,
) -> bytes:
    """The file's bytes (UTF-8 JSON).

    *kind*: ``"sampled"`` or ``"evented"`` (see the module). *sample_type*: which values are
    the weights of a sampled profile (default: the profile's default, else its last).
    *aggregate* (sampled): one sample per distinct stack of a thread instead of the
    samples in order; by default only when the profile has no timestamps and was not read
    from a speedscope file. *interval_us*
    (evented): how long a sample stays open when the thread's next sample is further than
    :data:`GAP_FACTOR` intervals away; by default the profile's period when
    it is a time, else the most common gap between a thread's samples. *name*: the file's
    ``name`` (default: the one it was read with, else none)."""
    facts = profile.extras.get(EXTRAS_KEY)
    facts = facts if isinstance(facts, SpeedscopeFacts) else None
    frame_index, frames_json = _frames(profile)
    names = _thread_names(profile, facts)
    if kind == "sampled":
        profiles = _sampled(profile, frame_index, names, sample_type, aggregate, facts)
    elif kind == "evented":
        profiles = _evented(profile, frame_index, names, interval_us)
    else:
        raise ValueError(f"kind must be 'sampled' or 'evented', not {kind!r}")
    if not profiles:  # speedscope needs a profile to show, even an empty one
        body = '"samples":[],"weights":[]' if kind == "sampled" else '"events":[]'
        unit = _unit(profile, sample_type) if kind == "sampled" else "microseconds"
        profiles = [_profile_json(kind, EMPTY, unit, 0, body)]
    head = {"$schema": SCHEMA_URL, "exporter": EXPORTER}
    name = name if name is not None else (facts.name if facts is not None else None)
    if name is not None:
        head["name"] = name
    active = facts.active_profile_index if facts is not None else None
    head["activeProfileIndex"] = active if active is not None and 0 <= active < len(profiles) \
        else 0
    text = (json.dumps(head, ensure_ascii=False)[:-1] + ',"shared":{"frames":[' + frames_json
            + ']},"profiles":[' + ",".join(profiles) + "]}\n")
    return text.encode("utf-8", "surrogatepass")


# --- frames -------------------------------------------------------------------------------------


def _frames(profile: Profile) -> tuple[npt.NDArray[np.int64], str]:
    """Per frame row, its index in ``shared.frames`` (rows that show the same share one),
    and the JSON of those frames."""
    frames, texts = profile.frames, profile.strings.texts()
    n = len(frames.funcname)
    funcname, filename = frames.funcname.tolist(), frames.filename.tolist()
    lines, cols = frames.lineno.tolist(), frames.column.tolist()
    address = frames.address.tolist() if frames.address is not None else None
    mapping = frames.mapping.tolist() if frames.mapping is not None else None
    mapping_file = profile.mappings.filename.tolist()
    index = np.empty(n, np.int64)
    seen: dict[tuple, int] = {}
    rendered: list[str] = []
    for row in range(n):
        name = _text(texts, funcname[row])
        file = _text(texts, filename[row])
        if not name:
            name = f"0x{address[row]:x}" if address is not None and address[row] else "?"
        if not file and mapping is not None and 0 <= mapping[row] < len(mapping_file):
            file = _text(texts, mapping_file[mapping[row]])
        key = (name, file, lines[row], cols[row])
        found = seen.get(key)
        if found is None:
            found = seen[key] = len(rendered)
            entry: dict = {"name": name}
            if file:
                entry["file"] = file
            if lines[row] >= 0:
                entry["line"] = lines[row]
            if cols[row] >= 0:
                entry["col"] = cols[row] + 1
            rendered.append(json.dumps(entry, ensure_ascii=False))
        index[row] = found
    return index, ",".join(rendered)


def _text(texts: list[str], row: int) -> str:
    return texts[row] if 0 <= row < len(texts) else ""


def _thread_names(profile: Profile, facts: SpeedscopeFacts | None) -> list[str]:
    """Per thread row, its profile's name: the one it was read with when the profile came
    from a speedscope file with these threads, else ``Thread <id>``."""
    threads = profile.threads
    if facts is not None and len(facts.profiles) == len(threads):
        return [p.name for p in facts.profiles]
    return [f"Thread {t}" + (f" (interpreter {i})" if i else "")
            for i, t in zip(threads.interpreter_id.tolist(), threads.thread_id.tolist(),
                            strict=True)]


def _profile_json(kind: str, name: str, unit: str, end, body: str) -> str:
    head = json.dumps({"type": kind, "name": name, "unit": unit, "startValue": 0,
                       "endValue": end}, ensure_ascii=False)
    return head[:-1] + "," + body + "}"


# --- sampled ------------------------------------------------------------------------------------


def _unit(profile: Profile, sample_type: str | None) -> str:
    unit = profile.meta.sample_types[profile.meta.sample_type_index(sample_type)].unit
    return unit if unit in UNITS else "none"


TYPE_OF_UNIT = {"none": "samples", "bytes": "space"}
"""The sample type a speedscope profile's weights were read into (times: ``time``)."""


def _weights(profile: Profile, sample_type: str | None, facts: SpeedscopeFacts | None):
    """Per sample its weight, and per thread row the unit: the chosen sample type's; but
    for a profile read from a speedscope file whose profiles had different units (one
    ``values`` column each, zeros elsewhere), by default each thread's own column."""
    meta, values = profile.meta, profile.samples.values
    index = meta.sample_type_index(sample_type)
    default_unit = _unit(profile, sample_type)
    units = {}
    if sample_type is not None or facts is None or values is None or \
            len(meta.sample_types) < 2 or len(facts.profiles) != len(profile.threads):
        return profile.weights(sample_type), units, default_unit
    column = np.full(len(facts.profiles), index, np.int64)
    for k, p in enumerate(facts.profiles):
        with contextlib.suppress(KeyError):
            column[k] = meta.sample_type_index(TYPE_OF_UNIT.get(p.unit, "time"))
            units[k] = _unit(profile, TYPE_OF_UNIT.get(p.unit, "time"))
    thread = profile.samples.thread
    chosen = np.where(thread >= 0, column[np.maximum(thread, 0)], index)
    return values[np.arange(thread.size), chosen], units, default_unit


def _sampled(profile, frame_index, names, sample_type, aggregate, facts) -> list[str]:
    samples = profile.samples
    weights, units, default_unit = _weights(profile, sample_type, facts)
    if aggregate is None:  # order matters with a clock, and in a file read from speedscope
        aggregate = samples.timestamp_us is None and facts is None
    if weights.size and int(np.min(weights)) < 0:
        raise ValueError("negative weights (a difference profile?): speedscope refuses them")
    thread, stack = samples.thread, samples.stack
    if aggregate:
        keys, weights = group_count({"thread": thread, "stack": stack}, weights)
        thread, stack = keys["thread"], keys["stack"]
    else:  # by thread, in order; runs of one stack merged (speedscope merges them too)
        order = np.argsort(thread, kind="stable")
        thread, stack, weights = thread[order], stack[order], np.asarray(weights)[order]
        head = np.ones(thread.size, bool)
        head[1:] = (thread[1:] != thread[:-1]) | (stack[1:] != stack[:-1])
        starts = np.flatnonzero(head)
        weights = np.add.reduceat(weights.astype(np.int64), starts) if starts.size \
            else weights.astype(np.int64)
        thread, stack = thread[starts], stack[starts]
    distinct, inverse = np.unique(stack, return_inverse=True)
    rendered = np.array(_render_stacks(profile, distinct, frame_index), dtype=object)
    out = []
    for row in np.unique(thread).tolist():
        mine = np.flatnonzero(thread == row)
        w = weights[mine]
        body = ('"samples":[' + ",".join(rendered[inverse.reshape(-1)[mine]].tolist())
                + '],"weights":[' + ",".join(map(str, w.tolist())) + "]")
        name = names[row] if row >= 0 else NO_THREAD
        out.append(_profile_json("sampled", name, units.get(row, default_unit), int(w.sum()),
                                 body))
    return out


def _render_stacks(profile: Profile, stacks: np.ndarray, frame_index) -> list[str]:
    """JSON of each stack: its frames' shared indices, outermost first."""
    offsets, frames = profile.stacks.to_csr(stacks)
    flat = frame_index[frames].tolist()
    bounds = offsets.tolist()
    return ["[" + ",".join(map(str, reversed(flat[a:b]))) + "]"
            for a, b in zip(bounds[:-1], bounds[1:], strict=True)]


# --- evented ------------------------------------------------------------------------------------


def _evented(profile, frame_index, names, interval_us) -> list[str]:
    samples = profile.samples
    if samples.timestamp_us is None:
        raise ValueError("an evented profile needs timestamps, and this profile has none "
                         "(kind='sampled' writes it)")
    ts = samples.timestamp_us.astype(np.int64)
    if not ts.size:
        return []
    order = np.lexsort((ts, samples.thread))
    thread, stack, ts = samples.thread[order], samples.stack[order].astype(np.int64), ts[order]
    ts = ts - ts.min()
    same = thread[1:] == thread[:-1]
    gaps = np.diff(ts)[same]
    interval = _interval_us(profile, interval_us, gaps)
    ends = ts + interval
    following = np.flatnonzero(same)
    gap = ts[following + 1] - ts[following]
    ends[following] = np.where(gap <= GAP_FACTOR * interval, ts[following + 1],
                               ends[following])
    end_value = int(ends.max())
    out = []
    for row in np.unique(thread).tolist():
        mine = np.flatnonzero(thread == row)
        is_open, frame, at = encode_events(profile.stacks, stack[mine], ts[mine], ends[mine])
        kinds = np.where(is_open, "O", "C").tolist()
        body = '"events":[' + ",".join(
            f'{{"type":"{k}","frame":{f},"at":{a}}}'
            for k, f, a in zip(kinds, frame_index[frame].tolist(), at.tolist(), strict=True)
        ) + "]"
        name = names[row] if row >= 0 else NO_THREAD
        out.append(_profile_json("evented", name, "microseconds", end_value, body))
    return out


def _interval_us(profile: Profile, interval_us: int | None, gaps: np.ndarray) -> int:
    if interval_us is not None:
        if int(interval_us) <= 0:
            raise ValueError("interval_us must be above 0")
        return int(interval_us)
    period_ns = profile.meta.period_ns()
    if period_ns is not None:
        return max(1, round(period_ns / 1000))
    gaps = gaps[gaps > 0]
    if gaps.size:
        values, counts = np.unique(gaps, return_counts=True)
        return int(values[np.argmax(counts)])
    return 1


write = whole_file_writer(build)
