"""Made-up fleet profiles for the fleet benchmark and tests: deterministic per seed, written
with the project's own writers (``tachyon_format.write``).

Each profile is one process of a made-up service: a shared pool of frames (so that
different processes share functions and stacks, as a fleet's do), a few hundred distinct
stacks 5-30 frames deep drawn from that pool with a per-profile skew, four threads, and
samples with statuses and increasing timestamps.
"""

from __future__ import annotations

import numpy as np

import tachyon_format as tf
from tachyon_format import Frames, Profile, Samples, Stacks, Strings, Threads

NUM_FUNCTIONS = 200
NUM_FILES = 20
STATUSES = np.array([0x23, 0x22, 0x2A, 0x20, 0x00, 0x02], np.uint8)


def make_profile(seed: int, num_samples: int, num_stacks: int = 300) -> Profile:
    """A Tachyon-like profile: the same seed gives the same profile."""
    rng = np.random.default_rng(seed)
    texts = [f"mod{i}.py" for i in range(NUM_FILES)] + [f"func_{i}" for i in
                                                          range(NUM_FUNCTIONS)]
    frame_count = NUM_FUNCTIONS
    frames = Frames(
        filename=(np.arange(frame_count) % NUM_FILES).astype(np.uint32),
        funcname=(NUM_FILES + np.arange(frame_count)).astype(np.uint32),
        lineno=(10 + np.arange(frame_count) % 50).astype(np.int32),
        end_lineno=(10 + np.arange(frame_count) % 50).astype(np.int32),
        column=np.full(frame_count, 4, np.int32), end_column=np.full(frame_count, 20, np.int32),
        opcode=np.full(frame_count, -1, np.int16))
    # stacks: a common outer part (main -> serve), then a random walk through the pool
    depths = rng.integers(5, 30, num_stacks)
    outer = np.array([0, 1], np.int64)
    popular = rng.zipf(1.6, size=int(depths.sum())) % frame_count
    flat, offsets = [], [0]
    at = 0
    for depth in depths.tolist():
        chain = np.concatenate([outer, popular[at:at + depth]])[::-1]  # innermost first
        at += depth
        flat.append(chain)
        offsets.append(offsets[-1] + chain.size)
    stacks, ids = Stacks.from_csr(np.array(offsets), np.concatenate(flat))
    weights = rng.zipf(1.3, num_stacks).astype(np.float64)
    pick = rng.choice(num_stacks, num_samples, p=weights / weights.sum())
    samples = Samples(
        stack=ids[pick].astype(np.int32),
        thread=rng.integers(0, 4, num_samples).astype(np.int32),
        timestamp_us=(10**9 + np.arange(num_samples, dtype=np.uint64) * 250),
        status=STATUSES[rng.integers(0, STATUSES.size, num_samples)])
    threads = Threads(np.zeros(4, np.uint32), np.arange(1000 + seed * 4, 1004 + seed * 4,
                                                        dtype=np.uint64))
    return Profile(Strings.from_texts(texts), frames, stacks, threads, samples)


def write_profile(seed: int, num_samples: int, path: str, format: str = "tachyon") -> None:
    """The profile of *seed* written to *path* as *format*."""
    tf.write(make_profile(seed, num_samples), path, format=format)
