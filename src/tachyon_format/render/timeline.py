"""The timeline page: one lane per thread over time, coloured by thread status, with the
stack under the cursor.

Downsampling keeps the page small whatever the length of the run: time is cut into at most
``max_buckets`` equal buckets (default 2,000, about one per pixel of a wide screen; never
narrower than the sampling interval), and per thread and bucket the page keeps the status
category most of its samples had and the stack most of its samples had (ties: the lower
category, the lower stack id), with one :func:`group_count` sort each — never a Python object
per sample. A bucket without a sample of the thread is a gap. A run shorter than
``max_buckets`` sampling intervals keeps every sample. Stacks go into the page once each, as
rows of a frame list.
"""

from __future__ import annotations

import html
import os
from string import Template

import numpy as np

from tachyon_format.model import Profile, ThreadStatus
from tachyon_format.model.aggregate import group_count

from .page import asset, page, write_text

CATEGORIES = (
    ("idle (no GIL, off CPU)", "#d0d0d0"),
    ("GIL held, on CPU", "#2ca02c"),
    ("GIL held, off CPU", "#9bd88a"),
    ("on CPU without the GIL", "#1f77b4"),
    ("waiting for the GIL", "#ff7f0e"),
    ("has an exception", "#d62728"),
    ("status unknown", "#9467bd"),
    ("no status recorded", "#7f7f7f"),
)
"""The colours of the lanes, by category; see :func:`status_categories`."""
NO_STATUS = 7


def status_categories() -> np.ndarray:
    """The category of each status byte, first match wins: an exception, waiting for the
    GIL, the GIL held on CPU, held off CPU, on CPU without it, unknown, else idle."""
    status = np.arange(256)
    out = np.zeros(256, np.uint8)
    rules = [  # lowest precedence first: later rules overwrite
        (status & ThreadStatus.UNKNOWN, 6),
        (status & ThreadStatus.ON_CPU, 3),
        (status & ThreadStatus.HAS_GIL, 2),
        ((status & ThreadStatus.HAS_GIL) & ((status & ThreadStatus.ON_CPU) >> 1), 1),
        (status & ThreadStatus.GIL_REQUESTED, 4),
        (status & ThreadStatus.HAS_EXCEPTION, 5),
    ]
    for hit, category in rules:
        out[hit != 0] = category
    return out


def timeline(profile: Profile, path: str | os.PathLike, *, title: str | None = None,
             max_buckets: int = 2000) -> None:
    """Write the timeline of *profile* to *path* as one HTML page (no network needed).
    Needs timestamps: :class:`ValueError` for a profile without them (an aggregated one)."""
    data = timeline_data(profile, max_buckets=max_buckets)
    title = title or "Timeline"
    body = Template(asset("timeline.html")).substitute(title=html.escape(title))
    write_text(path, page(title=title, kind="timeline", css=["common.css", "timeline.css"],
                          body=body, data=data, scripts=["common.js", "timeline.js"]))


def timeline_data(profile: Profile, *, max_buckets: int = 2000) -> dict:
    """What the page reads: per thread the kept buckets (index, category, stack row), the
    stacks as frame rows, the frames as rows of a string list."""
    samples = profile.samples
    if samples.timestamp_us is None:
        raise ValueError("a timeline needs sample timestamps; this profile has none "
                         "(an aggregated profile, or a format without a clock)")
    if max_buckets < 1:
        raise ValueError("max_buckets must be at least 1")
    n = len(samples)
    stamps = samples.timestamp_us.astype(np.uint64)
    start = int(stamps.min()) if n else 0
    relative = (stamps - np.uint64(start)).astype(np.int64)  # (mod 2**64, as the clock)
    span = int(relative.max()) + 1 if n else 1
    bucket_us = max(1, -(-span // max_buckets), _interval_us(profile))
    bucket = relative // bucket_us
    category = (status_categories()[samples.status] if samples.status is not None
                else np.full(n, NO_STATUS, np.uint8))
    weights = profile.sample_counts()
    thread, kept_category = _mode(samples.thread, bucket, category, weights)
    _, kept_stack = _mode(samples.thread, bucket, samples.stack, weights)
    stacks, stack_row = np.unique(kept_stack["value"], return_inverse=True)
    offsets, frame_ids = profile.stacks.to_csr(stacks)
    frames, frame_row = np.unique(frame_ids, return_inverse=True)
    texts, text_row = _texts(profile, frames)
    main = np.zeros(len(profile.threads) + 1, np.int64)
    if samples.status is not None:
        is_main = (samples.status & ThreadStatus.MAIN_THREAD) != 0
        main = np.bincount(samples.thread[is_main] + 1, minlength=main.size)
    lanes = []
    for lane_thread in np.unique(thread).tolist():
        mine = thread == lane_thread
        lanes.append({
            "label": _thread_label(profile, lane_thread, bool(main[lane_thread + 1])),
            "bucket": kept_category["bucket"][mine].tolist(),
            "category": kept_category["value"][mine].tolist(),
            "stack": stack_row.reshape(-1)[mine].tolist(),
        })
    f = profile.frames
    return {
        "start_us": start,
        "bucket_us": bucket_us,
        "buckets": int(bucket.max()) + 1 if n else 0,
        "samples": int(weights.sum()),
        "categories": [{"name": name, "colour": colour} for name, colour in CATEGORIES],
        "lanes": lanes,
        "stack_offsets": offsets.tolist(),
        "stack_frames": frame_row.reshape(-1).tolist(),
        "texts": texts,
        "frame_name": text_row[0].tolist(),
        "frame_file": text_row[1].tolist(),
        "frame_line": f.lineno[frames].tolist() if frames.size else [],
    }


def _interval_us(profile: Profile) -> int:
    """The sampling interval when the profile records one (a bucket is never narrower)."""
    period_type = profile.meta.period_type
    if period_type is not None and period_type.unit == "nanoseconds":
        return max(0, int(profile.meta.period) // 1000)
    return 0


def _mode(thread, bucket, value, weights):
    """Per (thread, bucket): the value with the most weight (ties: the lowest)."""
    keys, counts = group_count({"thread": thread, "bucket": bucket, "value": value}, weights)
    order = np.lexsort((keys["value"], -counts, keys["bucket"], keys["thread"]))
    t, b = keys["thread"][order], keys["bucket"][order]
    first = np.ones(order.size, bool)
    first[1:] = (t[1:] != t[:-1]) | (b[1:] != b[:-1])
    chosen = order[first]
    return keys["thread"][chosen], {"bucket": keys["bucket"][chosen],
                                    "value": keys["value"][chosen]}


def _texts(profile: Profile, frames: np.ndarray) -> tuple[list[str], np.ndarray]:
    """The names and files of *frames* as rows of one list of their distinct texts."""
    f = profile.frames
    rows = np.concatenate([f.funcname[frames], f.filename[frames]]).astype(np.int64)
    used, inverse = np.unique(rows, return_inverse=True)
    texts = [profile.strings[int(row)] for row in used.tolist()]
    return texts, inverse.reshape(2, -1)


def _thread_label(profile: Profile, row: int, main: bool) -> str:
    if row < 0 or row >= len(profile.threads):
        return "no thread"
    label = f"thread {int(profile.threads.thread_id[row])}"
    if int(profile.threads.interpreter_id[row]):
        label = f"interpreter {int(profile.threads.interpreter_id[row])}, {label}"
    return label + " (main)" if main else label
