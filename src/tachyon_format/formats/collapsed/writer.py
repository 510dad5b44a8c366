"""A profile as collapsed stacks: by default, byte for byte what CPython 3.15's
``python -m profiling.sampling replay --collapsed`` writes for the same samples.

CPython's ``CollapsedStackCollector`` (``profiling/sampling/stack_collector.py``):

1. skips samples with no frames, and takes the profiler's own frames (files ending
   ``_sync_coordinator.py``) out of every stack, skipping stacks left empty;
2. counts each (stack of ``(file, line, function)``, thread id) -- the thread id alone, so one
   id in two interpreters is one thread;
3. writes per counted key ``tid:<id>;<outermost>;...;<innermost> <count>``, frames as
   :func:`.frames.frame_text` renders them, sorted by count (most first), then by the line's
   text (code point order), in UTF-8.

Two keys can make the same text (files with one basename in different directories, strings
whose invalid UTF-8 shows the same): CPython writes both lines, and so does this (the other
dialects count frames by their text).

Tier (c): one :func:`~tachyon_format.model.aggregate.group_count` over the samples, then work
per node of the stack tree (:mod:`.assemble`: each frame's text encoded once, the lines
ordered by one walk of the tree, their bytes joined from per-node blocks a chunk at a time),
so a profile whose rows stand for :meth:`~tachyon_format.Profile.weights` samples (an
aggregated one) gives the same output. :func:`collapsed_lines` is the same, line by line.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import pairwise

import numpy as np

from tachyon_format.model import Profile, Stacks
from tachyon_format.model.aggregate import group_count

from ..sources import Destination, output_stream
from .assemble import Lines
from .frames import RenderedFrames, Style, render_frames


def write(profile: Profile, destination: Destination, **options) -> None:
    """Write *profile* to the path or binary file *destination*, a few thousand lines at a
    time; *options* as for :func:`dumps`."""
    with output_stream(destination) as out:
        for chunk in chunks(profile, **options):
            out.write(chunk)


def dumps(profile: Profile, *, style: Style = "cpython", lines: bool = True,
          thread_prefix: bool = True, filter_internal: bool = True,
          sample_type: str | None = None) -> bytes:
    """The collapsed text of *profile*, UTF-8 encoded.

    ``style``: ``"cpython"`` (``file.py:function:line``), ``"py-spy"``
    (``function (path:line)``) or ``"function"`` (names only); ``lines``: write line numbers;
    ``thread_prefix``: start each line with ``tid:<thread id>`` (samples without a thread
    have none); ``filter_internal``: leave out the profiler's own frames, as CPython does;
    ``sample_type``: the value summed (default: the sample count, :meth:`Profile.sample_counts`,
    as collapsed stacks count samples)."""
    return b"".join(chunks(profile, style=style, lines=lines, thread_prefix=thread_prefix,
                           filter_internal=filter_internal, sample_type=sample_type))


def chunks(profile: Profile, *, style: Style = "cpython", lines: bool = True,
           thread_prefix: bool = True, filter_internal: bool = True,
           sample_type: str | None = None) -> Iterator[bytes]:
    """What :func:`dumps` returns (same options), a few thousand lines at a time."""
    table = _line_table(profile, render_frames(profile, style, lines), thread_prefix,
                        filter_internal, sample_type)
    if table is not None:
        yield from table.chunks(table.order())


def _line_table(profile: Profile, rendered: RenderedFrames, thread_prefix: bool,
                filter_internal: bool, sample_type: str | None) -> Lines | None:
    """The lines over a tree of rendered frames (None: no line). The profile's own tree
    when it already is one (no frame to filter out, no two siblings of one key); else a new
    tree of the rendered stacks, as :func:`collapsed_lines` builds it."""
    samples = profile.samples
    weights = None if samples.values is None else profile.sample_weights(sample_type)
    thread_ids, thread_key = _thread_keys(profile, thread_prefix)
    keys, counts = group_count({"thread": thread_key, "stack": samples.stack}, weights)
    tree = profile.stacks
    node_key = rendered.key[tree.frame]
    pairs = np.sort((tree.parent.astype(np.int64) + 1) * (len(rendered.texts) + 1) + node_key)
    if (filter_internal and rendered.internal[tree.frame].any()) or (
            pairs.size and (pairs[1:] == pairs[:-1]).any()):
        stack_ids, where = np.unique(keys["stack"], return_inverse=True)
        offsets, frame_rows = tree.to_csr(stack_ids)
        keep = ~rendered.internal[frame_rows] if filter_internal else np.ones(
            frame_rows.size, bool)
        kept_before = np.zeros(keep.size + 1, np.int64)
        np.cumsum(keep, out=kept_before[1:])
        tree, new_ids = Stacks.from_csr(kept_before[offsets], rendered.key[frame_rows[keep]])
        node_key = tree.frame
        stack_key = new_ids[where.reshape(-1)]
        has_frames = stack_key >= 0
        keys, counts = group_count({"thread": keys["thread"][has_frames],
                                    "stack": stack_key[has_frames]}, counts[has_frames])
    else:
        has_frames = keys["stack"] >= 0
        keys = {name: column[has_frames] for name, column in keys.items()}
        counts = counts[has_frames]
    if not counts.size:
        return None
    thread = np.where(keys["thread"] >= 0, keys["thread"], len(thread_ids))
    return Lines(tree.parent.astype(np.int64), node_key.astype(np.int64), rendered.texts,
                 [f"tid:{t};" for t in thread_ids] + [""], thread.astype(np.int64),
                 keys["stack"].astype(np.int64), counts)


def collapsed_lines(profile: Profile, *, style: Style = "cpython", lines: bool = True,
                    thread_prefix: bool = True, filter_internal: bool = True,
                    sample_type: str | None = None) -> list[tuple[str, int]]:
    """The lines :func:`dumps` writes, as ``(stack text, count)`` in their order: one line
    at a time, in Python (a plain model of what :func:`chunks` computes per tree node)."""
    samples = profile.samples
    rendered = render_frames(profile, style, lines)
    weights = None if samples.values is None else profile.sample_weights(sample_type)
    # 1. samples per (thread id, stack): thread rows with one id become one thread
    thread_ids, thread_key = _thread_keys(profile, thread_prefix)
    keys, counts = group_count({"thread": thread_key, "stack": samples.stack}, weights)
    # 2. per distinct stack: its frames as rendered keys, the profiler's frames out
    stack_ids, where = np.unique(keys["stack"], return_inverse=True)
    offsets, frame_rows = profile.stacks.to_csr(stack_ids)
    keep = np.ones(frame_rows.size, bool)
    if filter_internal:
        keep = ~rendered.internal[frame_rows]
    kept_before = np.zeros(keep.size + 1, np.int64)
    np.cumsum(keep, out=kept_before[1:])
    tree, new_ids = Stacks.from_csr(kept_before[offsets], rendered.key[frame_rows[keep]])
    stack_key = new_ids[where.reshape(-1)]
    has_frames = stack_key >= 0
    # 3. counts per distinct (thread id, rendered stack)
    keys, counts = group_count({"thread": keys["thread"][has_frames],
                                "stack": stack_key[has_frames]}, counts[has_frames])
    # 4. each distinct stack's text once, from its frames listed outermost first
    distinct, which = np.unique(keys["stack"], return_inverse=True)
    offsets, frame_keys = tree.to_csr(distinct)
    lengths = np.diff(offsets)
    # (flat position p of stack [a, b) takes its frame from a + b - 1 - p)
    outermost_first = (np.repeat(offsets[:-1] + offsets[1:] - 1, lengths)
                       - np.arange(frame_keys.size))
    parts = np.array(rendered.texts, dtype=object)[frame_keys[outermost_first]].tolist()
    bounds = offsets.tolist()
    stack_texts = [";".join(parts[a:b]) for a, b in pairwise(bounds)]
    out = []
    for thread, stack, count in zip(keys["thread"].tolist(), which.reshape(-1).tolist(),
                                    counts.tolist(), strict=True):
        text = stack_texts[stack]
        out.append((f"tid:{thread_ids[thread]};{text}" if thread >= 0 else text, count))
    out.sort(key=_order)
    return out


def _order(line: tuple[str, int]) -> tuple[int, str]:
    return -line[1], line[0]


def _thread_keys(profile: Profile, thread_prefix: bool) -> tuple[list[int], np.ndarray]:
    """The distinct thread ids, and per sample the index of its id (-1: no thread)."""
    rows = profile.samples.thread
    if not thread_prefix or not len(profile.threads):
        return [], np.full(rows.size, -1, np.int64)
    ids, of_row = np.unique(profile.threads.thread_id, return_inverse=True)
    key = np.full(rows.size, -1, np.int64)
    known = rows >= 0
    key[known] = of_row.reshape(-1)[rows[known]]
    return ids.tolist(), key
