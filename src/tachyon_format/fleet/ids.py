"""Stable global ids: the same string, frame or stack gets the same 64-bit id in every file,
so that tables written independently concatenate and group without a shared dictionary.

* a **string** id: the first 8 bytes of BLAKE2b (``digest_size=8``) of its bytes, as a
  little-endian signed 64-bit integer;
* a **frame** id: :func:`mix` folded over its fields, starting from :data:`FRAME_SEED`:
  ``filename`` and ``funcname`` string ids, then ``lineno``, ``end_lineno``, ``column``,
  ``end_column``, ``opcode`` and ``address`` (0 when the format has none), each as the 64-bit
  two's complement of its value;
* a **stack** id (a node of the prefix tree: a frame called from a stack): ``mix(parent id,
  frame id)``, the parent id of an outermost frame being :data:`ROOT`; so a stack's id is a
  hash of its whole frame chain, parent-linked, and a shared outer part has one id.

``mix(h, v) = splitmix64(h * 0x100000001B3 + v)`` (mod 2**64; splitmix64 adds
0x9E3779B97F4A7C15 and applies its finaliser) is one-to-one in each argument, so two stacks
that differ in one frame or one parent never share an id; different chains collide with a
chance of about ``n**2 / 2**65`` among ``n`` distinct ones (one in 37 million at a million
stacks). An id is never 0 (0, the ``parent_id`` of no parent, is mapped to 1). Collisions are
checked, not assumed away: :func:`check_unique` within a file, and wherever tables of many
files are grouped by id (``fleet.partials``), so a collision fails loudly.

Vectorised: Python touches each distinct string once (BLAKE2b); frames are one numpy pass
per field and stacks one per level of the tree.
"""

from __future__ import annotations

import hashlib

import numpy as np
import numpy.typing as npt

from tachyon_format.kernels.tree import Levels
from tachyon_format.model import Profile, Stacks

FRAME_SEED = 0x7461636879666D65  # b"tachyfme": any fixed value; part of the layout
ROOT = 0
"""The parent id of an outermost frame (and the ``parent_id`` column's "none")."""
PRIME = 0x100000001B3
GOLDEN = 0x9E3779B97F4A7C15
FRAME_FIELDS = ("lineno", "end_lineno", "column", "end_column", "opcode")


class IdCollision(ValueError):
    """Two different strings, frames or stacks got the same 64-bit id."""


def splitmix64(x: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
    """Vectorised splitmix64 (a new array): ``x + GOLDEN`` through its finaliser."""
    z = x + np.uint64(GOLDEN)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def mix(h: npt.ArrayLike, v: npt.ArrayLike) -> npt.NDArray[np.uint64]:
    """Vectorised ``splitmix64(h * PRIME + v)`` mod 2**64, on the bits of *h* and *v*."""
    h64 = np.asarray(h).astype(np.int64).view(np.uint64)
    v64 = np.asarray(v).astype(np.int64).view(np.uint64)
    with np.errstate(over="ignore"):
        return splitmix64(h64 * np.uint64(PRIME) + v64)


def _as_id(h: npt.NDArray[np.uint64]) -> npt.NDArray[np.int64]:
    out = h.view(np.int64).copy()
    out[out == 0] = 1
    return out


def string_id(raw: bytes) -> int:
    """The id of one string (its bytes)."""
    value = int.from_bytes(hashlib.blake2b(raw, digest_size=8).digest(), "little", signed=True)
    return value or 1


def string_ids(raws: list[bytes]) -> npt.NDArray[np.int64]:
    """The id of every string."""
    return np.fromiter((string_id(raw) for raw in raws), np.int64, len(raws))


def frame_ids(profile: Profile, strings: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """The id of every frame row of *profile*, given the ids of its *strings* (a string index
    past the table counts as the empty string)."""
    frames = profile.frames
    n = len(frames.lineno)
    past = np.append(strings, string_id(b""))
    h = np.full(n, FRAME_SEED, np.uint64)
    for name in ("filename", "funcname"):
        index = np.minimum(getattr(frames, name).astype(np.int64), strings.size)
        h = mix(h, past[index])
    for name in FRAME_FIELDS:
        h = mix(h, getattr(frames, name).astype(np.int64))
    address = (frames.address.view(np.int64) if frames.address is not None
               else np.zeros(n, np.int64))
    return _as_id(mix(h, address))


def stack_ids(stacks: Stacks, frames: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """The id of every node of *stacks*, given the ids of the frame rows; one numpy pass per
    level, so nodes may come in any order."""
    levels = Levels(stacks.parent)
    out = np.zeros(len(stacks), np.int64)
    frame = frames[stacks.frame.astype(np.int64)] if len(stacks) else np.zeros(0, np.int64)
    for level, up in zip(levels.levels, levels.parents, strict=True):
        parent_id = np.where(up >= 0, out[np.maximum(up, 0)], ROOT)
        out[level] = _as_id(mix(parent_id, frame[level]))
    return out


def check_unique(ids: npt.NDArray[np.int64], content: np.ndarray, what: str) -> None:
    """Raise :class:`IdCollision` if two rows of *content* (a 2-d array, one row per id, or a
    1-d array of objects) differ while their *ids* are equal."""
    if not ids.size:
        return
    distinct_ids = np.unique(ids).size
    if content.ndim == 1:
        distinct_rows = len({(i, c) for i, c in zip(ids.tolist(), content.tolist(),
                                                    strict=True)})
    else:
        distinct_rows = np.unique(np.column_stack([ids, content]), axis=0).shape[0]
    if distinct_rows != distinct_ids:
        raise IdCollision(f"two different {what} have the same 64-bit id "
                          f"({distinct_rows} distinct {what}, {distinct_ids} ids)")
