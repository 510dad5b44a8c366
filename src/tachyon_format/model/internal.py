"""The profiler's own frames, which CPython 3.15's collectors leave out of every output.

``profiling.sampling`` samples itself while it starts the target (the frames of
``_sync_coordinator.py``); its collectors drop frames whose file ends with one of
``profiling.sampling.constants._INTERNAL_FRAME_SUFFIXES`` before counting a stack. Every
writer that reproduces a CPython output (collapsed stacks, pstats, JSONL, Gecko) and the
analysis functions decide with :func:`internal_frames`, so that they agree;
:func:`visible_stacks` gives the samples as CPython's stack collectors see them in ``replay``.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from .profile import Profile
from .stacks import Stacks

INTERNAL_FRAME_SUFFIXES = ("_sync_coordinator.py",)
"""CPython's ``_INTERNAL_FRAME_SUFFIXES``: files of the profiler itself."""


def internal_strings(texts: list[str]) -> npt.NDArray[np.bool_]:
    """Per string: whether a frame of that file is one of the profiler's own."""
    return np.fromiter((t.endswith(INTERNAL_FRAME_SUFFIXES) for t in texts), bool, len(texts))


def internal_frames(profile: Profile) -> npt.NDArray[np.bool_]:
    """Per frame row of *profile*: whether it is one of the profiler's own frames (its file
    ends with an :data:`INTERNAL_FRAME_SUFFIXES` entry). Python touches each string once."""
    texts = profile.strings.texts()
    internal = np.append(internal_strings(texts), False)  # (last: an index past the table)
    filename = np.minimum(profile.frames.filename.astype(np.int64), len(texts))
    return internal[filename]


def visible_stacks(profile: Profile) -> tuple[Stacks, npt.NDArray[np.int32]]:
    """The stack tree and each sample's stack id in it, with internal frames dropped (a
    stack left empty is -1), as CPython's ``filter_internal_frames``. Vectorised over the
    distinct stacks."""
    drop = internal_frames(profile)
    if not drop.any():
        return profile.stacks, profile.samples.stack
    return profile.stacks.without_frames(drop, profile.samples.stack)
