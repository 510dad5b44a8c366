"""The samples as CPython's stack collectors see them in ``replay``: profiler-internal frames
taken out of every stack, and samples left without frames not counted."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from tachyon_format.model import Profile, Stacks
from tachyon_format.model.internal import internal_frames


def visible_stacks(profile: Profile) -> tuple[Stacks, npt.NDArray[np.int32]]:
    """The stack tree and each sample's stack id in it, with internal frames dropped (a
    stack left empty is -1), as CPython's ``filter_internal_frames``. Vectorised over the
    distinct stacks."""
    drop = internal_frames(profile)
    if not drop.any():
        return profile.stacks, profile.samples.stack
    return profile.stacks.without_frames(drop, profile.samples.stack)
