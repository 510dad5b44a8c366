"""fleet/ids.py: the global ids follow their documented definition (a scalar model written
from docs/fleet.md), do not depend on how a reader numbers its tables, and tell different
stacks apart; a collision is reported, never merged."""

from __future__ import annotations

import hashlib
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tachyon_format.fleet.ids import (
    IdCollision,
    check_unique,
    frame_ids,
    stack_ids,
    string_ids,
)
from tachyon_format.fleet.partials import StackCounts
from tests.helpers.made_up_profiles import profiles, renumbered

MASK = 2**64 - 1


def model_mix(h: int, v: int) -> int:
    """docs/fleet.md's mix, on Python ints."""
    z = (h * 0x100000001B3 + v + 0x9E3779B97F4A7C15) & MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def signed(u: int) -> int:
    value = u - 2**64 if u >= 2**63 else u
    return value or 1


def model_string_id(raw: bytes) -> int:
    return signed(int.from_bytes(hashlib.blake2b(raw, digest_size=8).digest(), "little"))


def model_stack_ids(profile) -> dict[int, int]:
    """Per node: the documented id, by walking the chain from the outermost frame."""
    raws = profile.strings.raws()
    frames = profile.frames
    out = {}
    for node in range(len(profile.stacks)):
        chain = list(profile.stacks.frames_of(node))[::-1]  # outermost first
        h = 0
        for row in chain:
            f = 0x7461636879666D65
            for value in (model_string_id(raws[frames.filename[row]]),
                          model_string_id(raws[frames.funcname[row]]),
                          *(int(getattr(frames, n)[row]) for n in
                            ("lineno", "end_lineno", "column", "end_column", "opcode")), 0):
                f = model_mix(f, value & MASK)
            h = signed(model_mix(h & MASK, signed(f) & MASK))
        out[node] = h
    return out


def ids_of(profile) -> np.ndarray:
    return stack_ids(profile.stacks, frame_ids(profile, string_ids(profile.strings.raws())))


@settings(max_examples=40)
@given(profiles())
def test_stack_ids_follow_the_documented_definition(profile):
    assert dict(enumerate(ids_of(profile).tolist())) == model_stack_ids(profile)


@settings(max_examples=40)
@given(profiles(), st.randoms(use_true_random=False))
def test_stack_ids_do_not_depend_on_the_tree_numbering(profile, random):
    order = list(range(len(profile.stacks)))
    random.shuffle(order)
    other = renumbered(profile, order)
    mine, theirs = ids_of(profile), ids_of(other)
    used = profile.samples.stack >= 0
    assert (mine[profile.samples.stack[used]] == theirs[other.samples.stack[used]]).all()


@settings(max_examples=40)
@given(profiles())
def test_different_frame_chains_get_different_ids(profile):
    texts = profile.strings.texts()
    frames = profile.frames
    chains = {}
    for node, stack_id in enumerate(ids_of(profile).tolist()):
        chain = tuple((texts[frames.filename[r]], texts[frames.funcname[r]],
                       int(frames.lineno[r]), int(frames.column[r]))
                      for r in profile.stack_frames(node))
        chains.setdefault(stack_id, set()).add(chain)
    assert all(len(found) == 1 for found in chains.values())
    assert len(set(chains)) == len({c for found in chains.values() for c in found})


@settings(max_examples=20)
@given(profiles())
def test_the_frame_table_order_does_not_matter(profile):
    n = len(profile.frames.lineno)
    flip = np.arange(n)[::-1]
    frames = type(profile.frames)(**{k: v[flip] for k, v in profile.frames.columns().items()})
    where = np.empty(n, np.int64)
    where[flip] = np.arange(n)
    stacks = replace(profile.stacks, frame=where[profile.stacks.frame].astype(np.int32))
    other = replace(profile, frames=frames, stacks=stacks)
    assert (ids_of(profile) == ids_of(other)).all()


def test_a_collision_is_reported():
    ids = np.array([5, 5, 7], np.int64)
    check_unique(ids, np.array([[1, 2], [1, 2], [3, 4]]), "frames")  # same content: fine
    with pytest.raises(IdCollision, match="two different frames"):
        check_unique(ids, np.array([[1, 2], [1, 3], [3, 4]]), "frames")
    with pytest.raises(IdCollision, match="strings"):
        check_unique(ids, np.array([b"a", b"b", b"c"], dtype=object), "strings")


def test_combining_refuses_one_id_for_two_stacks():
    part = StackCounts.empty()
    one = replace(part, nodes={"stack_id": np.array([9]), "parent_id": np.array([0]),
                               "frame_id": np.array([1]), "depth": np.array([1])})
    two = replace(one, nodes={**one.nodes, "frame_id": np.array([2])})
    StackCounts.combine([one, one])
    with pytest.raises(IdCollision, match="stacks"):
        StackCounts.combine([one, two])
