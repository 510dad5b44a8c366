"""The format-neutral profile: numpy columns, one stack prefix tree, strings kept as bytes."""

from .profile import (
    SAMPLES_COUNT,
    Frames,
    Mappings,
    Meta,
    Profile,
    Samples,
    Threads,
    ValueType,
)
from .stacks import Stacks, StackTuples
from .strings import Strings
from .thread_status import ThreadStatus

__all__ = [
    "SAMPLES_COUNT",
    "Frames",
    "Mappings",
    "Meta",
    "Profile",
    "Samples",
    "StackTuples",
    "Stacks",
    "Strings",
    "ThreadStatus",
    "Threads",
    "ValueType",
]
